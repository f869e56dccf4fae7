/* hmap.c: see hmap.h. */
#include "hmap.h"
#include "xmalloc.h"

#include <stdlib.h>
#include <string.h>

uint32_t hmap_hash(const void *key, size_t n)
{
	const unsigned char *p = key;
	uint64_t h = 0xcbf29ce484222325ULL;
	for (size_t i = 0; i < n; i++)
		h = (h ^ p[i]) * 1099511628211ULL;
	return (uint32_t)(h ^ h >> 32);
}

static void place(uint64_t *slot, size_t mask, uint64_t s)
{
	size_t j = (uint32_t)(s >> 32) & mask;
	while (slot[j])
		j = (j + 1) & mask;
	slot[j] = s;
}

static void grow(struct hmap *m)
{
	size_t cap = m->slot ? 2 * (m->mask + 1) : 16;
	uint64_t *slot = xcalloc(cap, sizeof(*slot));
	if (m->slot)
		for (size_t j = 0; j <= m->mask; j++)
			if (m->slot[j])
				place(slot, cap - 1, m->slot[j]);
	free(m->slot);
	m->slot = slot;
	m->mask = cap - 1;
	m->alloc = cap;
}

size_t hmap_slots_for(size_t n)
{
	size_t cap = 16;
	while (cap < 2 * n)
		cap *= 2;
	return cap;
}

void hmap_init_in(struct hmap *m, uint64_t *slot, size_t n)
{
	size_t cap = hmap_slots_for(n);
	memset(slot, 0, cap * sizeof(*slot));
	*m = (struct hmap){ .slot = slot, .mask = cap - 1, .alloc = cap, .fixed = 1 };
}

void hmap_put(struct hmap *m, uint32_t hash, size_t i)
{
	if (!m->slot || 2 * (m->n + 1) > m->mask + 1) {
		if (m->fixed)
			abort(); /* more than the n hmap_init_in was told: a bug of the caller */
		grow(m);
	}
	place(m->slot, m->mask, (uint64_t)hash << 32 | (uint64_t)(i + 1));
	m->n++;
}

void hmap_clear(struct hmap *m)
{
	if (m->slot)
		memset(m->slot, 0, (m->mask + 1) * sizeof(*m->slot));
	m->n = 0;
}

void hmap_reset(struct hmap *m, size_t n)
{
	size_t cap = hmap_slots_for(n);
	if (cap > m->alloc) {
		free(m->slot);
		m->slot = xmalloc(cap * sizeof(*m->slot));
		m->alloc = cap;
	}
	memset(m->slot, 0, cap * sizeof(*m->slot));
	m->mask = cap - 1;
	m->n = 0;
}

void hmap_free(struct hmap *m)
{
	free(m->slot);
	*m = (struct hmap){ 0 };
}
