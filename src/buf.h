/* buf.h: a growable byte buffer with a hard size cap, for output we build in memory.
 *
 * A write that would pass the cap fails and sets `overflow`; callers take a mark before a unit of
 * output (a metric family) and roll back to it on overflow, so a reader never sees half a unit.
 * Ownership: the buffer owns `data` (buf_free); buf_steal() hands it to the caller. */
#ifndef SHIM_BUF_H
#define SHIM_BUF_H

#include <stdarg.h>
#include <stddef.h>

struct buf {
	char *data;
	size_t len, cap, max;
	int overflow;
};

void buf_init(struct buf *b, size_t max);   /* max 0 = unlimited */
void buf_free(struct buf *b);
char *buf_steal(struct buf *b, size_t *len); /* NUL-terminated; buffer is reset */
int buf_append(struct buf *b, const void *p, size_t n); /* 0 ok, -1 over cap */
/* Make room for n more bytes in one allocation (a size known in advance); never past the cap. */
void buf_reserve(struct buf *b, size_t n);
int buf_puts(struct buf *b, const char *s);
int buf_putc(struct buf *b, char c);
int buf_printf(struct buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int buf_vprintf(struct buf *b, const char *fmt, va_list ap) __attribute__((format(printf, 2, 0)));
static inline size_t buf_mark(const struct buf *b) { return b->len; }
static inline void buf_rollback(struct buf *b, size_t mark) { b->len = mark; b->overflow = 0; }

#endif
