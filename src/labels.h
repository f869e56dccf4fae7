/* labels.h: label sets as arrays of (name, value) slices, sorted by name, and series (a label set
 * and a value) in vectors: what expressions compute, rows emit and the writer writes.
 * Slices borrow their bytes from whoever owns them (an upstream body, an arena, the mapping). */
#ifndef SHIM_LABELS_H
#define SHIM_LABELS_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

struct label {
	const char *name, *value;
	uint32_t nlen, vlen;
};

/* One series. */
struct velem {
	struct label *labels;
	uint32_t nlabels;
	uint32_t hash;          /* labels_hash(labels) */
	double v;
};

/* A vector of series (an instant vector). */
struct vec {
	struct velem *e;
	size_t n;
};

/* FNV-1a over the sorted set, then mixed so that every bit depends on every byte; equal sets hash equal. */
uint32_t labels_hash(const struct label *l, size_t n);
int labels_is_equal(const struct label *a, size_t na, const struct label *b, size_t nb);
/* Total order (for stable output): by name, then value, pairwise; shorter set first on a tie. */
int labels_cmp(const struct label *a, size_t na, const struct label *b, size_t nb);
void labels_sort(struct label *l, size_t n);   /* insertion sort: sets are tiny */
/* Index of label `name` in the set, or -1. */
int labels_find(const struct label *l, size_t n, const char *name, size_t nlen);

/* Labels made from C strings: the one place their lengths are counted. A label made borrows its
 * name and value (it owns nothing); name is NUL-terminated, the value is vlen bytes (label_of) or
 * NUL-terminated (label_str). */
static inline struct label label_of(const char *name, const char *value, size_t vlen)
{
	return (struct label){ name, value, (uint32_t)strlen(name), (uint32_t)vlen };
}

static inline struct label label_str(const char *name, const char *value)
{
	return label_of(name, value, strlen(value));
}

/* Equal byte strings. The parser makes equal label names of a family share one pointer, so the
 * pointer test settles most comparisons without reading the bytes. */
static inline int slice_is_equal(const char *a, size_t na, const char *b, size_t nb)
{
	return na == nb && (na == 0 || a == b || __builtin_memcmp(a, b, na) == 0);
}

/* Whether l is named name (NUL-terminated). */
static inline int label_has_name(const struct label *l, const char *name)
{
	return slice_is_equal(l->name, l->nlen, name, strlen(name));
}

/* labels_find of a NUL-terminated name. */
static inline int labels_find_str(const struct label *l, size_t n, const char *name)
{
	return labels_find(l, n, name, strlen(name));
}

#endif
