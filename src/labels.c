/* labels.c: see labels.h. */
#include "labels.h"
#include "names.h"

#include <string.h>

uint32_t labels_hash(const struct label *l, size_t n)
{
	uint64_t h = FNV_OFFSET;
	for (size_t i = 0; i < n; i++) {
		for (uint32_t j = 0; j < l[i].nlen; j++)
			h = fnv1a_byte(h, (unsigned char)l[i].name[j]);
		h = fnv1a_byte(h, 0xfe);
		for (uint32_t j = 0; j < l[i].vlen; j++)
			h = fnv1a_byte(h, (unsigned char)l[i].value[j]);
		h = fnv1a_byte(h, 0xff);
	}
	/* FNV's low bits depend only on the bytes' low bits (bit 0 is their parity), and tables
	 * index by the low bits: mix the high bits down (splitmix64's finalizer) */
	h ^= h >> 30;
	h *= 0xbf58476d1ce4e5b9ULL;
	h ^= h >> 27;
	h *= 0x94d049bb133111ebULL;
	return (uint32_t)(h ^ (h >> 31));
}

int labels_is_equal(const struct label *a, size_t na, const struct label *b, size_t nb)
{
	if (na != nb)
		return 0;
	if (a == b)
		return 1; /* one shared array (see expo.c) */
	for (size_t i = 0; i < na; i++)
		if (!slice_is_equal(a[i].name, a[i].nlen, b[i].name, b[i].nlen) ||
		    !slice_is_equal(a[i].value, a[i].vlen, b[i].value, b[i].vlen))
			return 0;
	return 1;
}

static int slice_cmp(const char *a, size_t na, const char *b, size_t nb)
{
	if (a == b && na == nb)
		return 0;
	size_t n = na < nb ? na : nb;
	int c = n ? memcmp(a, b, n) : 0;
	if (c)
		return c;
	return na < nb ? -1 : na > nb;
}

static int label_name_cmp(const struct label *a, const struct label *b)
{
	return slice_cmp(a->name, a->nlen, b->name, b->nlen);
}

int labels_cmp(const struct label *a, size_t na, const struct label *b, size_t nb)
{
	size_t n = na < nb ? na : nb;
	for (size_t i = 0; i < n; i++) {
		int c = slice_cmp(a[i].name, a[i].nlen, b[i].name, b[i].nlen);
		if (!c)
			c = slice_cmp(a[i].value, a[i].vlen, b[i].value, b[i].vlen);
		if (c)
			return c;
	}
	return na < nb ? -1 : na > nb;
}

void labels_sort(struct label *l, size_t n)
{
	for (size_t i = 1; i < n; i++) {
		struct label x = l[i];
		size_t j = i;
		while (j > 0 && label_name_cmp(&l[j - 1], &x) > 0) {
			l[j] = l[j - 1];
			j--;
		}
		l[j] = x;
	}
}

int labels_find(const struct label *l, size_t n, const char *name, size_t nlen)
{
	for (size_t i = 0; i < n; i++)
		if (slice_is_equal(l[i].name, l[i].nlen, name, nlen))
			return (int)i;
	return -1;
}
