/* mapping_sort.c: see mapping_sort.h. */
#include "mapping_sort.h"

#include <stdlib.h>
#include <string.h>

static int elem_cmp(const void *a, const void *b)
{
	const struct velem *x = a, *y = b;
	return labels_cmp(x->labels, x->nlabels, y->labels, y->nlabels);
}


/* Sort keys: 16 bytes of the first label's value, big-endian and zero-padded, when every element's
 * first label has the same name; the bytes after the prefix all the values share (node names
 * "cluster-node-00017"...). Their order is labels_cmp's wherever they differ, and a tie falls back
 * to labels_cmp. So most comparisons are one or two integer compares. */
struct skey {
	uint64_t k[2];
	size_t i;
};

static int skey_cmp(const struct skey *x, const struct skey *y, const struct vec *v)
{
	if (x->k[0] != y->k[0])
		return x->k[0] < y->k[0] ? -1 : 1;
	if (x->k[1] != y->k[1])
		return x->k[1] < y->k[1] ? -1 : 1;
	return elem_cmp(&v->e[x->i], &v->e[y->i]);
}

static inline uint64_t be64(const unsigned char *b)
{
	return (uint64_t)b[0] << 56 | (uint64_t)b[1] << 48 | (uint64_t)b[2] << 40 | (uint64_t)b[3] << 32 |
	       (uint64_t)b[4] << 24 | (uint64_t)b[5] << 16 | (uint64_t)b[6] << 8 | b[7];
}

static void make_keys(const struct vec *v, struct skey *keys)
{
	const struct label *first = v->e[0].nlabels ? &v->e[0].labels[0] : NULL;
	int usable = first != NULL;
	size_t common = first ? first->vlen : 0;
	for (size_t i = 1; i < v->n && usable; i++) {
		/* an element without labels may have no label array at all (labels NULL) */
		const struct label *l = v->e[i].nlabels ? &v->e[i].labels[0] : NULL;
		usable = l && slice_is_equal(l->name, l->nlen, first->name, first->nlen);
		if (usable) {
			size_t c = 0, max = l->vlen < common ? l->vlen : common;
			while (c < max && l->value[c] == first->value[c])
				c++;
			common = c;
		}
	}
	for (size_t i = 0; i < v->n; i++) {
		unsigned char b[16] = { 0 };
		if (usable) {
			const struct label *l = &v->e[i].labels[0];
			size_t len = l->vlen - common; /* every value is at least `common` long */
			memcpy(b, l->value + common, len < 16 ? len : 16);
		}
		keys[i].k[0] = be64(b);
		keys[i].k[1] = be64(b + 8);
		keys[i].i = i;
	}
}

/* Where each ascending run of keys starts; runs[nruns] = n. *dup is set if neighbours are equal. */
static size_t find_runs(const struct skey *k, size_t n, const struct vec *v, size_t *runs, int *dup)
{
	size_t nruns = 0;
	runs[nruns++] = 0;
	for (size_t i = 1; i < n; i++) {
		int c = skey_cmp(&k[i - 1], &k[i], v);
		if (c > 0)
			runs[nruns++] = i;
		*dup |= c == 0;
	}
	runs[nruns] = n;
	return nruns;
}

/* Keys in no order (per user, per account): an LSD radix sort of the 16 key bytes, least
 * significant first, skipping a byte that is the same in every key. No comparisons, so no branch
 * the processor has to guess; stable, so equal keys stay together for sort_ties(). Returns the
 * buffer (k or tmp) that holds the result. */
static struct skey *radix_sort(struct skey *k, struct skey *tmp, size_t n)
{
	size_t count[256];
	for (int byte = 15; byte >= 0; byte--) {
		int w = byte / 8, shift = (7 - byte % 8) * 8;
		memset(count, 0, sizeof(count));
		for (size_t i = 0; i < n; i++)
			count[(k[i].k[w] >> shift) & 255]++;
		if (count[(k[0].k[w] >> shift) & 255] == n)
			continue;
		size_t pos = 0;
		for (int d = 0; d < 256; d++) {
			size_t c = count[d];
			count[d] = pos;
			pos += c;
		}
		for (size_t i = 0; i < n; i++)
			tmp[count[(k[i].k[w] >> shift) & 255]++] = k[i];
		struct skey *t = k;
		k = tmp;
		tmp = t;
	}
	return k;
}

static int tie_cmp(const void *a, const void *b, void *v)
{
	return elem_cmp(&((const struct vec *)v)->e[((const struct skey *)a)->i],
			&((const struct vec *)v)->e[((const struct skey *)b)->i]);
}

/* Order each run of equal keys by label set. Returns 1 if two elements have the same label set
 * (equal neighbours once a run is sorted). */
static int sort_ties(struct skey *k, size_t n, const struct vec *v)
{
	for (size_t lo = 0, hi; lo < n; lo = hi) {
		const uint64_t k0 = k[lo].k[0], k1 = k[lo].k[1];
		for (hi = lo + 1; hi < n && k[hi].k[0] == k0 && k[hi].k[1] == k1; hi++)
			;
		if (hi - lo < 2)
			continue;
		qsort_r(k + lo, hi - lo, sizeof(*k), tie_cmp, (void *)v);
		for (size_t i = lo + 1; i < hi; i++)
			if (tie_cmp(&k[i - 1], &k[i], (void *)v) == 0)
				return 1;
	}
	return 0;
}

/* Sort by label set. Results are usually a few runs already in order (one per branch of an `or`,
 * each in the payload's order), so this is a natural merge sort (of keys, see above): find the
 * runs, merge neighbours until one is left, O(n log runs); results in no order (per user) are
 * radix sorted instead. The scratch space comes from the arena. Returns -1 if two elements have the
 * same label set: equal elements are neighbours within a run, meet at the heads of two runs being
 * merged, or share a key and meet in sort_ties(), so every such pair is compared. */
int mapping_sort(struct vec *v, struct arena *a)
{
	size_t n = v->n, nruns = 0;
	int dup = 0;
	if (n < 2)
		return 0;
	struct skey *src = arena_alloc(a, n * sizeof(*src));
	make_keys(v, src);
	size_t *runs = arena_alloc(a, (n + 1) * sizeof(*runs));
	nruns = find_runs(src, n, v, runs, &dup);
	if (nruns == 1 || dup)
		return dup ? -1 : 0; /* in order already (or refused): nothing moves */
	struct skey *dst = arena_alloc(a, n * sizeof(*dst));
	if (nruns > n / 8 && n >= 512) { /* no order to speak of, and enough keys to pay for 256 buckets */
		src = radix_sort(src, dst, n);
		if (sort_ties(src, n, v))
			return -1;
		nruns = 1;
	}
	while (nruns > 1) {
		size_t out = 0;
		for (size_t r = 0; r < nruns; r += 2) {
			size_t lo = runs[r];
			if (r + 1 == nruns) { /* the odd run out is carried over as it is */
				memcpy(dst + lo, src + lo, (n - lo) * sizeof(*dst));
				runs[out++] = lo;
				break;
			}
			size_t mid = runs[r + 1], hi = runs[r + 2]; /* runs[nruns] == n */
			size_t i = lo, j = mid, k = lo;
			while (i < mid && j < hi) {
				int c = skey_cmp(&src[j], &src[i], v);
				dup |= c == 0;
				dst[k++] = c < 0 ? src[j++] : src[i++];
			}
			memcpy(dst + k, src + i, (mid - i) * sizeof(*dst));
			k += mid - i;
			memcpy(dst + k, src + j, (hi - j) * sizeof(*dst));
			runs[out++] = lo;
		}
		runs[out] = n;
		nruns = out;
		struct skey *t = src;
		src = dst;
		dst = t;
	}
	struct velem *sorted = arena_alloc(a, n * sizeof(*sorted));
	for (size_t i = 0; i < n; i++)
		sorted[i] = v->e[src[i].i];
	v->e = sorted;
	return dup ? -1 : 0;
}
