/* rest_fixture.h: what the tests of the slurmrestd reader (src/slurmrestd*.c) share (header-only,
 * like testutil.h): a document parsed into families, and a family's series read back. */
#ifndef SHIM_REST_FIXTURE_H
#define SHIM_REST_FIXTURE_H

#include "testutil.h"

#include "expo.h"
#include "labels.h"
#include "slurmrestd.h"

/* text (len bytes, whole) parsed as doc into e (made here), keeping the families keep keeps (NULL:
 * every family); the number of problems (0: the answer is usable). */
static inline size_t tu_rest_parse(struct expo *e, enum rest_doc doc, const char *text, size_t len, expo_keep_fn keep,
				   void *ctx)
{
	expo_init_keep(e, keep, ctx);
	void *st = rest_begin(e, doc);
	rest_feed(st, e, text, len);
	size_t bad = rest_end(st, e);
	expo_drop_keep(e);
	return bad;
}

/* text (a C string) parsed as doc into e, every family kept; the test fails unless it is usable. */
static inline void tu_rest_parse_ok(struct expo *e, enum rest_doc doc, const char *text)
{
	assert_int_equal(tu_rest_parse(e, doc, text, strlen(text), NULL, NULL), 0);
}

/* How many series fam has (0: no such family). */
static inline size_t tu_family_size(const struct expo *e, const char *fam)
{
	const struct expo_family *f = expo_find(e, fam, strlen(fam));
	return f ? f->n : 0;
}

/* The first series of fam whose label name is value; NULL: none. */
static inline const struct expo_sample *tu_sample_with(const struct expo *e, const char *fam, const char *name,
						       const char *value)
{
	const struct expo_family *f = expo_find(e, fam, strlen(fam));
	for (size_t i = 0; f && i < f->n; i++) {
		const struct expo_sample *s = &f->samples[i];
		int k = labels_find(s->labels, s->nlabels, name, strlen(name));
		if (k >= 0 && slice_is_equal(s->labels[k].value, s->labels[k].vlen, value, strlen(value)))
			return s;
	}
	return NULL;
}

#endif
