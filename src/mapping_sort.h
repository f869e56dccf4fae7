/* mapping_sort.h: a row's result in label-set order, with duplicate label sets detected.
 * Ownership: mapping_sort replaces v->e with a sorted array in the arena (scratch space too); the
 * elements' labels are not touched. */
#ifndef SHIM_MAPPING_SORT_H
#define SHIM_MAPPING_SORT_H

#include "labels.h"
#include "xmalloc.h"

/* Sort v by label set (labels_cmp). Returns 0, or -1 (v maybe left unsorted) when two elements have
 * the same label set. */
int mapping_sort(struct vec *v, struct arena *a);

#endif
