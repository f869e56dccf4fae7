/* fuzz_expo.c: libFuzzer target for the exposition parsers: expo_parse in tolerant and strict mode
 * (src/expo.c), expo_feed in pieces, and the OpenMetrics validator om_validate (src/openmetrics.c),
 * on the same input. Checks the documented contracts: every malformed line is counted, every sample
 * is in its family, expo_find finds every family, a body fed in pieces parses exactly as the whole
 * body does, and om_validate reports a line >= 1 and a reason exactly when it fails.
 * Ownership: each parse owns its struct expo and frees it before returning. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "expo.h"
#include "fuzz_pieces.h"
#include "openmetrics.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int same_labels(const struct expo_sample *a, const struct expo_sample *b)
{
	if (a->nlabels != b->nlabels || a->hash != b->hash || memcmp(&a->value, &b->value, sizeof(a->value)))
		return 0;
	for (uint32_t j = 0; j < a->nlabels; j++) {
		const struct label *x = &a->labels[j], *y = &b->labels[j];
		if (x->nlen != y->nlen || x->vlen != y->vlen || memcmp(x->name, y->name, x->nlen) ||
		    (x->vlen && memcmp(x->value, y->value, x->vlen)))
			return 0;
	}
	return 1;
}

/* Did two parses find the same families, samples, lines and errors? */
static int same(const struct expo *a, const struct expo *b)
{
	if (a->nfams != b->nfams || a->nsamples != b->nsamples || a->nlines != b->nlines || a->nerrors != b->nerrors)
		return 0;
	for (size_t i = 0; i < a->nerrors && i < EXPO_MAX_ERRORS; i++)
		if (a->errors[i].line != b->errors[i].line || strcmp(a->errors[i].reason, b->errors[i].reason))
			return 0;
	for (size_t i = 0; i < a->nfams; i++) {
		const struct expo_family *f = &a->fams[i], *g = &b->fams[i];
		if (f->nlen != g->nlen || memcmp(f->name, g->name, f->nlen) || f->n != g->n || f->type != g->type ||
		    f->duplicate != g->duplicate)
			return 0;
		for (size_t k = 0; k < f->n; k++)
			if (!same_labels(&f->samples[k], &g->samples[k]))
				return 0;
	}
	return 1;
}

static void expo_piece(void *e, const char *piece, size_t n)
{
	expo_feed(e, piece, n, 0);
}

/* The body in pieces of `chunk` bytes (fuzz_pieces.h). */
static void feed(struct expo *e, const char *text, size_t size, size_t chunk)
{
	fuzz_pieces(text, size, chunk, expo_piece, e);
	if (expo_feed_end(e, 0) != e->nerrors)
		abort();
}

static void parse(const char *text, size_t size, int flags)
{
	struct expo e;
	expo_init(&e);
	size_t errors = expo_parse(&e, text, size, flags);
	if (!(flags & EXPO_STRICT) && size <= EXPO_MAX_LINE) {
		struct expo fed;
		expo_init(&fed);
		feed(&fed, text, size, 1 + (size ? (unsigned char)text[0] % 7 : 0));
		if (!same(&e, &fed))
			abort();
		expo_free(&fed);
	}
	size_t n = 0;
	if (errors != e.nerrors)
		abort();
	for (size_t i = 0; i < e.nfams; i++) {
		const struct expo_family *f = &e.fams[i];
		if (expo_find(&e, f->name, f->nlen) != f)
			abort();
		n += f->n;
		for (size_t k = 0; k < f->n; k++)
			for (uint32_t j = 0; j < f->samples[k].nlabels; j++)
				if (!f->samples[k].labels[j].nlen)
					abort();
	}
	if (n != e.nsamples)
		abort();
	expo_free(&e);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *text = (const char *)data;
	char reason[160];
	size_t line = 0;

	parse(text, size, 0);
	parse(text, size, EXPO_STRICT);
	reason[0] = 'x';
	int rc = om_validate(text, size, &line, reason, sizeof(reason));
	if (rc == 0 ? line != 0 : rc != -1 || line == 0 || reason[0] == '\0' || !memchr(reason, '\0', sizeof(reason)))
		abort();
	return 0;
}
