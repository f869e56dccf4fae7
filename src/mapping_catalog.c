/* mapping_catalog.c: "validated_on", the native catalog the table was validated on (mapping.h,
 * docs/mapping.md): read and checked from the file, looked up by the scrape (catalog.c). */
#include "mapping_int.h"
#include "names.h"
#include "xmalloc.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const entry_types[] = { "gauge", "counter", "untyped", "summary", "histogram", NULL };

struct catalog_loader {
	mapping_catalog_problem_fn fn;
	void *ctx;
	size_t n;
};

static void cproblem(struct catalog_loader *C, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void cproblem(struct catalog_loader *C, const char *fmt, ...)
{
	char msg[400];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	C->n++;
	C->fn(C->ctx, msg);
}

static int name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int mapping_catalog_has(const struct catalog_release *r, enum source_id src, const char *name, size_t len)
{
	return (int)src >= 0 && src < SRC_NATIVE_COUNT && mapping_sorted_has(r->fams[src], r->nfams[src], name, len);
}

static int is_one_of(const char *s, const char *const *choices)
{
	for (; *choices; choices++)
		if (!strcmp(s, *choices))
			return 1;
	return 0;
}

/* The labels of one entry: an array of label names, each once. */
static void load_labels(struct catalog_loader *C, const char *at, json_t *v)
{
	size_t i, j;
	json_t *e;
	if (!json_is_array(v)) {
		cproblem(C, "%s: \"labels\" must be an array of label names", at);
		return;
	}
	json_array_foreach(v, i, e) {
		if (!json_is_string(e) || !names_is_label_name(json_string_value(e))) {
			cproblem(C, "%s: \"labels\"[%zu] must be a label name", at, i);
			continue;
		}
		for (j = 0; j < i; j++)
			if (json_equal(json_array_get(v, j), e))
				cproblem(C, "%s: label \"%s\" listed twice", at, json_string_value(e));
	}
}

/* One entry {"family", "type", "labels"} of release rel's endpoint src, its family kept in r. */
static void load_entry(struct catalog_loader *C, struct catalog_release *r, enum source_id src, size_t i, json_t *e)
{
	char at[160];
	const char *k;
	json_t *v;
	snprintf(at, sizeof(at), "\"%s\": \"%s\"[%zu]", r->name, sources[src].name, i);
	if (!json_is_object(e)) {
		cproblem(C, "%s must be an object {\"family\", \"type\", \"labels\"}", at);
		return;
	}
	json_object_foreach(e, k, v)
		if (strcmp(k, "family") && strcmp(k, "type") && strcmp(k, "labels"))
			cproblem(C, "%s: unknown field \"%s\" (expected one of: family, type, labels)", at, k);
	v = json_object_get(e, "type");
	if (!json_is_string(v) || !is_one_of(json_string_value(v), entry_types))
		cproblem(C, "%s: \"type\" must be one of: gauge, counter, untyped, summary, histogram", at);
	load_labels(C, at, json_object_get(e, "labels"));
	v = json_object_get(e, "family");
	const char *name = json_is_string(v) ? json_string_value(v) : NULL;
	if (!name || !names_is_metric_name(name)) {
		cproblem(C, "%s: \"family\" must be a metric name", at);
		return;
	}
	if (source_for_metric(name) != src) { /* the shim fetches a family from where its name says */
		cproblem(C, "%s: %s is read from %s, not %s (source_for_metric, src/source.c)", at, name,
			 sources[source_for_metric(name)].path, sources[src].path);
		return;
	}
	r->fams[src][r->nfams[src]++] = xstrdup(name);
}

/* One release: an object of endpoint name -> array of entries. */
static void load_release(struct catalog_loader *C, struct catalog_release *r, json_t *v)
{
	const char *k;
	json_t *a;
	if (!json_is_object(v)) {
		cproblem(C, "\"%s\" must be an object of endpoint -> array of families", r->name);
		return;
	}
	json_object_foreach(v, k, a) {
		int src = 0;
		while (src < SRC_NATIVE_COUNT && strcmp(sources[src].name, k))
			src++;
		if (src == SRC_NATIVE_COUNT) {
			cproblem(C, "\"%s\": unknown endpoint \"%s\" (expected one of: jobs, nodes, partitions, scheduler, "
				    "jobs-users-accts)", r->name, k);
			continue;
		}
		if (!json_is_array(a)) {
			cproblem(C, "\"%s\": \"%s\" must be an array of families", r->name, k);
			continue;
		}
		size_t i;
		json_t *e;
		r->fams[src] = xcalloc(json_array_size(a) + 1, sizeof(char *));
		json_array_foreach(a, i, e)
			load_entry(C, r, (enum source_id)src, i, e);
		qsort(r->fams[src], r->nfams[src], sizeof(char *), name_cmp);
		for (i = 1; i < r->nfams[src]; i++)
			if (!strcmp(r->fams[src][i - 1], r->fams[src][i]))
				cproblem(C, "\"%s\": \"%s\": %s listed twice", r->name, k, r->fams[src][i]);
	}
}

static int release_name_ok(const char *s)
{
	size_t n = strlen(s);
	if (n == 0 || n > MAPPING_RELEASE_MAX)
		return 0;
	for (; *s; s++)
		if (!is_label_char(*s) && *s != '.' && *s != '-')
			return 0;
	return 1;
}

size_t mapping_catalog_load(struct mapping *m, json_t *v, mapping_catalog_problem_fn problem, void *ctx)
{
	struct catalog_loader C = { problem, ctx, 0 };
	const char *k;
	json_t *rel;
	if (!json_is_object(v)) {
		cproblem(&C, "must be an object of Slurm release -> its endpoints' families");
		return C.n;
	}
	m->releases = xcalloc(json_object_size(v) + 1, sizeof(*m->releases));
	json_object_foreach(v, k, rel) {
		if (!release_name_ok(k)) {
			cproblem(&C, "release \"%.40s\": a release is 1 to %d letters, digits, '.', '-' or '_' (\"25.11\")", k,
				 MAPPING_RELEASE_MAX);
			continue;
		}
		struct catalog_release *r = &m->releases[m->nreleases++];
		r->name = xstrdup(k);
		load_release(&C, r, rel);
	}
	return C.n;
}

size_t mapping_catalog_check_inputs(const struct mapping *m, mapping_catalog_problem_fn problem, void *ctx)
{
	struct catalog_loader C = { problem, ctx, 0 };
	for (size_t i = 0; i < m->ninputs; i++) {
		const char *name = m->inputs[i];
		enum source_id src = source_for_metric(name);
		if (src >= SRC_NATIVE_COUNT)
			continue; /* slurmrestd's families are the converter's: not slurmctld's catalog */
		size_t r = 0;
		while (r < m->nreleases && !mapping_catalog_has(&m->releases[r], src, name, strlen(name)))
			r++;
		if (r == m->nreleases)
			cproblem(&C, "the rows read %s, which no release lists on %s", name, sources[src].path);
	}
	return C.n;
}

void mapping_catalog_free(struct mapping *m)
{
	for (size_t r = 0; r < m->nreleases; r++) {
		for (int s = 0; s < SRC_NATIVE_COUNT; s++) {
			for (size_t i = 0; i < m->releases[r].nfams[s]; i++)
				free(m->releases[r].fams[s][i]);
			free(m->releases[r].fams[s]);
		}
		free(m->releases[r].name);
	}
	free(m->releases);
	m->releases = NULL;
	m->nreleases = 0;
}
