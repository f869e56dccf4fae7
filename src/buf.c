/* buf.c: see buf.h. */
#include "buf.h"
#include "xmalloc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void buf_init(struct buf *b, size_t max)
{
	b->data = NULL;
	b->len = b->cap = 0;
	b->max = max;
	b->overflow = 0;
}

void buf_free(struct buf *b)
{
	free(b->data);
	buf_init(b, b->max);
}

char *buf_steal(struct buf *b, size_t *len)
{
	char *p;
	if (buf_putc(b, '\0') < 0) {
		/* room for the terminator is always granted */
		b->data = xgrow(b->data, &b->cap, b->len + 1, 1);
		b->data[b->len++] = '\0';
	}
	p = b->data;
	if (len)
		*len = b->len - 1;
	b->data = NULL;
	b->len = b->cap = 0;
	b->overflow = 0;
	return p;
}

static int reserve(struct buf *b, size_t n)
{
	if (b->overflow)
		return -1;
	if (b->max && (n > b->max || b->len > b->max - n)) {
		b->overflow = 1;
		return -1;
	}
	if (b->len + n > b->cap)
		b->data = xgrow(b->data, &b->cap, b->len + n, 1);
	return 0;
}

void buf_reserve(struct buf *b, size_t n)
{
	if (b->max && n > b->max - (b->len < b->max ? b->len : b->max))
		n = b->max > b->len ? b->max - b->len : 0;
	if (b->len + n + 1 > b->cap) {
		b->cap = b->len + n + 1;
		b->data = xrealloc(b->data, b->cap);
	}
}

int buf_append(struct buf *b, const void *p, size_t n)
{
	if (reserve(b, n) < 0)
		return -1;
	if (n)
		memcpy(b->data + b->len, p, n);
	b->len += n;
	return 0;
}

int buf_puts(struct buf *b, const char *s)
{
	return buf_append(b, s, strlen(s));
}

int buf_putc(struct buf *b, char c)
{
	if (reserve(b, 1) < 0)
		return -1;
	b->data[b->len++] = c;
	return 0;
}

int buf_vprintf(struct buf *b, const char *fmt, va_list ap)
{
	va_list ap2;
	int n;
	va_copy(ap2, ap);
	n = vsnprintf(NULL, 0, fmt, ap2);
	va_end(ap2);
	if (n < 0 || reserve(b, (size_t)n + 1) < 0)
		return -1;
	vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
	b->len += (size_t)n;
	return 0;
}

int buf_printf(struct buf *b, const char *fmt, ...)
{
	va_list ap;
	int r;
	va_start(ap, fmt);
	r = buf_vprintf(b, fmt, ap);
	va_end(ap);
	return r;
}
