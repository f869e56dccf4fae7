/* xmalloc.h: allocation wrappers that never return NULL (they abort on exhaustion),
 * and a bump arena for per-scrape data.
 *
 * Ownership: x* functions return memory the caller frees with free() (not a *_free). An arena owns
 * everything allocated from it; arena_reset() frees all of it at once. */
#ifndef SHIM_XMALLOC_H
#define SHIM_XMALLOC_H

#include <stddef.h>

/* Keep freed memory in the process between scrapes (once per process, before threads start):
 * every scrape allocates and frees the same large blocks, and giving them back to the kernel only
 * to fault them in again cost a good part of a scrape (docs/performance.md). Also caps malloc
 * arenas per thread. */
void xmalloc_tune(void);
void *xmalloc(size_t n);
void *xcalloc(size_t n, size_t size);
void *xrealloc(void *p, size_t n);
/* Grow an array: returns p resized to hold at least `need` elements of `size`, updating *cap. */
void *xgrow(void *p, size_t *cap, size_t need, size_t size);
char *xstrdup(const char *s);
char *xstrndup(const char *s, size_t n);
/* Wipe n bytes of p, then free it (p may be NULL): secrets do not linger in freed memory; the same
 * for a NUL-terminated string (may be NULL). */
void free_secret(void *p, size_t n);
void free_secret_str(char *s);

struct arena_chunk;
struct arena {
	struct arena_chunk *head;
	size_t used_total;
	size_t peak;              /* the most used_total has been since arena_init */
};

void arena_init(struct arena *a);
void *arena_alloc(struct arena *a, size_t n);     /* 16-byte aligned, uninitialised */
char *arena_strndup(struct arena *a, const char *s, size_t n);
void arena_reset(struct arena *a);                /* frees every chunk */
/* Forget every allocation but keep one chunk as large as the most the arena ever held, so rounds of
 * similar work (one row after another) reuse the same bytes, still in the cache. */
void arena_rewind(struct arena *a);

/* 1 when built with AddressSanitizer (make asan, make fuzz): the arena (xmalloc.c) and an expression
 * tree's pool (expr_parse.c) then give every allocation its own heap block, so that a read or write
 * past one is caught instead of landing in its neighbour. */
#if defined(__SANITIZE_ADDRESS__)
#define SHIM_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SHIM_ASAN 1
#endif
#endif
#ifndef SHIM_ASAN
#define SHIM_ASAN 0
#endif

#endif
