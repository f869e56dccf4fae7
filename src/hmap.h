/* hmap.h: the program's one hash table: an index from a 32-bit hash to the position of an entry in
 * the caller's own array (open addressing, linear probing, at most half full: it grows by itself).
 *
 * Ownership: the caller owns the entries (keys and values) and their array; the map owns only its
 * slots, freed by hmap_free; or, made by hmap_init_in, not even them: the slots are the caller's
 * memory (an arena's), the map never grows nor frees them, and hmap_free is not called. The map never reads an entry: the caller hashes its key (hmap_hash, or
 * a hash of its own such as labels_hash) and compares the candidates hmap_iter/hmap_next give it.
 * Iteration in insertion order is the caller's array's order: the map has no order of its own, so
 * an output never depends on the table's size or its collisions.
 *
 *	struct hmap_iter it = hmap_iter(&m, h);
 *	for (size_t i; (i = hmap_next(&it)) != HMAP_NONE;)
 *		if (key_is_equal(&v[i], key))
 *			return &v[i];
 *	hmap_put(&m, h, n);   v[n++] = the new entry
 */
#ifndef SHIM_HMAP_H
#define SHIM_HMAP_H

#include <stddef.h>
#include <stdint.h>

#define HMAP_NONE SIZE_MAX

struct hmap {
	uint64_t *slot; /* hash << 32 | index + 1; 0: empty. NULL until the first hmap_put */
	size_t mask;    /* slots - 1 (a power of two) */
	size_t n;       /* entries put */
	size_t alloc;   /* slots allocated (hmap_reset may use only some of them) */
	int fixed;      /* hmap_init_in: the caller's slots, never grown nor freed */
};

/* The candidates of one hash: the entries put with it, in probe order. */
struct hmap_iter {
	const struct hmap *m;
	size_t j;
	uint32_t hash;
};

/* FNV-1a of n bytes, folded to 32 bits (every bit of the 64 in them). */
uint32_t hmap_hash(const void *key, size_t n);

/* The slots a map of n entries uses: the caller of hmap_init_in provides that many. */
size_t hmap_slots_for(size_t n);
/* A map for at most n entries in the caller's slots (hmap_slots_for(n) of them, any contents). */
void hmap_init_in(struct hmap *m, uint64_t *slot, size_t n);

/* Entry i (the caller's index, at most 2^32 - 2) has hash `hash`; the same index may not be put
 * twice. Grows (rehashing only the slots) when more than half full. */
void hmap_put(struct hmap *m, uint32_t hash, size_t i);
/* Forget every entry, keeping the slots' memory. */
void hmap_clear(struct hmap *m);
/* Forget every entry and make room for n entries without growing; the slots' memory is kept when
 * it is big enough, and only as much of it as n needs is used (and cleared). */
void hmap_reset(struct hmap *m, size_t n);
/* Free the slots; the map is empty and usable again. */
void hmap_free(struct hmap *m);

static inline struct hmap_iter hmap_iter(const struct hmap *m, uint32_t hash)
{
	return (struct hmap_iter){ m, hash & m->mask, hash };
}

/* The next entry put with the iterator's hash, or HMAP_NONE. */
static inline size_t hmap_next(struct hmap_iter *it)
{
	const struct hmap *m = it->m;
	if (!m->slot)
		return HMAP_NONE;
	for (;;) {
		uint64_t s = m->slot[it->j];
		if (!s)
			return HMAP_NONE;
		it->j = (it->j + 1) & m->mask;
		if ((uint32_t)(s >> 32) == it->hash)
			return (size_t)(uint32_t)s - 1;
	}
}

#endif
