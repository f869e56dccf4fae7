/* mapping_set.c: see mapping.h (the schemas of one process). */
#include "mapping.h"
#include "buf.h"
#include "xmalloc.h"

#include <regex.h>
#include <stdlib.h>

#include <stdio.h>
#include <string.h>

int mapping_stem(const char *path, char out[MAPPING_STEM_MAX])
{
	const char *base = strrchr(path, '/');
	base = base ? base + 1 : path;
	size_t n = strlen(base);
	if (n > 5 && !strcmp(base + n - 5, ".json"))
		n -= 5;
	out[0] = '\0';
	if (!n || n >= MAPPING_STEM_MAX || base[0] == '.')
		return -1;
	for (size_t i = 0; i < n; i++) {
		char c = base[i];
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '_' ||
		      c == '-'))
			return -1;
	}
	memcpy(out, base, n);
	out[n] = '\0';
	return 0;
}

struct mapping *mapping_load_set(const char *const *paths, size_t n, struct buf *problems)
{
	struct mapping *head = NULL, **tail = &head;
	int bad = 0;
	if (!n || n > MAPPING_SET_MAX) {
		if (problems)
			buf_printf(problems, "%zu mapping files: from 1 to %d can be served\n", n, MAPPING_SET_MAX);
		return NULL;
	}
	for (size_t i = 0; i < n; i++) {
		char stem[MAPPING_STEM_MAX];
		if (mapping_stem(paths[i], stem) < 0 && n > 1) {
			if (problems)
				buf_printf(problems, "%s: its name without \".json\" is served as /schemas/<name>/metrics and may "
					   "hold only A-Z, a-z, 0-9, '.', '_' and '-' (not first), at most %d bytes\n",
					   paths[i], MAPPING_STEM_MAX - 1);
			bad = 1;
		}
		for (size_t j = 0; j < i && stem[0]; j++) {
			char other[MAPPING_STEM_MAX];
			if (mapping_stem(paths[j], other) == 0 && !strcmp(stem, other)) {
				if (problems)
					buf_printf(problems, "%s: the same name \"%s\" as %s: both would be served at "
						   "/schemas/%s/metrics\n", paths[i], stem, paths[j], stem);
				bad = 1;
			}
		}
		struct mapping *m = mapping_load(paths[i], problems);
		if (!m) {
			bad = 1;
			continue;
		}
		memcpy(m->stem, stem, sizeof(stem));
		*tail = m;
		tail = &m->next;
	}
	if (bad) {
		mapping_free(head);
		return NULL;
	}
	return head;
}

const struct mapping *mapping_schema(const struct mapping *m, size_t i)
{
	while (m && i--)
		m = m->next;
	return m;
}

size_t mapping_schema_count(const struct mapping *m)
{
	size_t n = 0;
	for (; m; m = m->next)
		n++;
	return n;
}

int mapping_schema_index(const struct mapping *m, const char *stem, size_t len)
{
	for (int i = 0; m; m = m->next, i++)
		if (m->stem[0] && strlen(m->stem) == len && !memcmp(m->stem, stem, len))
			return i;
	return -1;
}

int mapping_set_has_input(const char *name, size_t len, void *ctx)
{
	for (struct mapping *m = ctx; m; m = m->next)
		if (mapping_has_input(name, len, m))
			return 1;
	return 0;
}

long mapping_exclude(struct mapping *m, const char *re, char *err, size_t errlen)
{
	size_t len = strlen(re);
	char *anchored = xmalloc(len + 5);
	snprintf(anchored, len + 5, "^(%s)$", re);
	regex_t rx;
	int rc = regcomp(&rx, anchored, REG_EXTENDED | REG_NOSUB);
	free(anchored);
	if (rc != 0) {
		regerror(rc, &rx, err, errlen);
		return -1;
	}
	long n = 0;
	for (; m; m = m->next)
		for (size_t i = 0; i < m->nrows; i++)
			if (regexec(&rx, m->rows[i].name, 0, NULL, 0) == 0) {
				m->rows[i].excluded = 1;
				n++;
			}
	regfree(&rx);
	return n;
}
