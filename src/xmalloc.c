/* xmalloc.c: see xmalloc.h. */
#include "xmalloc.h"

#include <malloc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void oom(size_t n)
{
	fprintf(stderr, "slurm-exporter-shim: out of memory allocating %zu bytes\n", n);
	abort();
}

void xmalloc_tune(void)
{
	mallopt(M_MMAP_THRESHOLD, 32 * 1024 * 1024); /* big blocks from the heap, reused */
	mallopt(M_TRIM_THRESHOLD, 256 * 1024 * 1024); /* do not hand the heap back each scrape */
	mallopt(M_ARENA_MAX, 4);                       /* connection threads share arenas */
}

void *xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);
	if (!p)
		oom(n);
	return p;
}

void *xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);
	if (!p)
		oom(n * size);
	return p;
}

void *xrealloc(void *p, size_t n)
{
	void *q = realloc(p, n ? n : 1);
	if (!q)
		oom(n);
	return q;
}

void *xgrow(void *p, size_t *cap, size_t need, size_t size)
{
	size_t c = *cap;
	if (need <= c)
		return p;
	if (c < 8)
		c = 8;
	while (c < need) {
		if (c > SIZE_MAX / 2 / size)
			oom(SIZE_MAX);
		c *= 2;
	}
	*cap = c;
	return xrealloc(p, c * size);
}

char *xstrdup(const char *s)
{
	return xstrndup(s, strlen(s));
}

char *xstrndup(const char *s, size_t n)
{
	char *p = xmalloc(n + 1);
	memcpy(p, s, n);
	p[n] = '\0';
	return p;
}

void free_secret(void *p, size_t n)
{
	if (p) {
		explicit_bzero(p, n);
		free(p);
	}
}

void free_secret_str(char *s)
{
	if (s)
		free_secret(s, strlen(s));
}

struct arena_chunk {
	struct arena_chunk *next;
	size_t size, used;
	_Alignas(16) unsigned char data[];
};

#define ARENA_CHUNK (64 * 1024)

/* Under AddressSanitizer every arena allocation is its own heap block (SHIM_ASAN, xmalloc.h). */

void arena_init(struct arena *a)
{
	a->head = NULL;
	a->used_total = 0;
	a->peak = 0;
}

void *arena_alloc(struct arena *a, size_t n)
{
	struct arena_chunk *c = a->head;
#if SHIM_ASAN
	c = xmalloc(sizeof(*c) + n);
	c->size = c->used = n;
	c->next = a->head;
	a->head = c;
	a->used_total += n;
	return c->data;
#else
	n = (n + 15) & ~(size_t)15;
	if (!c || c->size - c->used < n) {
		size_t size = n > ARENA_CHUNK / 4 ? n : ARENA_CHUNK;
		c = xmalloc(sizeof(*c) + size);
		c->size = size;
		c->used = 0;
		if (size == n && a->head) {
			/* big one-off block: keep the current chunk in front */
			c->next = a->head->next;
			a->head->next = c;
		} else {
			c->next = a->head;
			a->head = c;
		}
	}
	void *p = c->data + c->used;
	c->used += n;
	a->used_total += n;
	if (a->used_total > a->peak)
		a->peak = a->used_total;
	return p;
#endif
}

char *arena_strndup(struct arena *a, const char *s, size_t n)
{
	char *p = arena_alloc(a, n + 1);
	memcpy(p, s, n);
	p[n] = '\0';
	return p;
}

void arena_reset(struct arena *a)
{
	struct arena_chunk *c = a->head;
	while (c) {
		struct arena_chunk *next = c->next;
		free(c);
		c = next;
	}
	arena_init(a);
}

void arena_rewind(struct arena *a)
{
#if SHIM_ASAN
	arena_reset(a);
#else
	size_t peak = a->peak;
	if (!a->head || a->head->next || a->head->size < peak) {
		size_t size = peak > ARENA_CHUNK ? peak : ARENA_CHUNK;
		arena_reset(a);
		a->head = xmalloc(sizeof(*a->head) + size);
		a->head->next = NULL;
		a->head->size = size;
		a->peak = peak;
	}
	a->head->used = 0;
	a->used_total = 0;
#endif
}
