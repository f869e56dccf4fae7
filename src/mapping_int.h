/* mapping_int.h: what mapping_load.c and mapping_catalog.c share (private to mapping_*.c). */
#ifndef SHIM_MAPPING_INT_H
#define SHIM_MAPPING_INT_H

#include <jansson.h>

#include "mapping.h"

/* A problem of "validated_on": a message for the loader to report at the key (path first). */
typedef void (*mapping_catalog_problem_fn)(void *ctx, const char *msg);

/* Read "validated_on" (v, any JSON value) into m->releases, reporting every problem; returns the
 * number of problems (0: m->releases filled, possibly with no release). */
size_t mapping_catalog_load(struct mapping *m, json_t *v, mapping_catalog_problem_fn problem, void *ctx);
/* The rows' native families (m->inputs) that no release lists, each reported; call after the rows
 * are read, when m has releases. Returns the number of problems. */
size_t mapping_catalog_check_inputs(const struct mapping *m, mapping_catalog_problem_fn problem, void *ctx);
void mapping_catalog_free(struct mapping *m);

#endif
