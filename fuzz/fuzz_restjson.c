/* fuzz_restjson.c: libFuzzer target for the slurmrestd JSON converter (src/slurmrestd.c). The first
 * byte picks the document (nodes, shares, jobs, diag) and the piece size; the rest is the answer.
 * Checks the documented contracts: no crash, no leak; the answer fed in pieces gives exactly the
 * families and malformed count of the whole answer; every sample is in its family and found.
 * Ownership: each parse owns its struct expo and frees it before returning. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_pieces.h"
#include "slurmrestd.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct rest_run {
	void *st;
	struct expo *e;
};

static void rest_piece(void *ctx, const char *piece, size_t n)
{
	struct rest_run *r = ctx;
	rest_feed(r->st, r->e, piece, n);
}

/* The answer in pieces of `chunk` bytes (fuzz_pieces.h: the converter must not keep pointers into
 * a piece). */
static size_t parse(struct expo *e, enum rest_doc doc, const char *text, size_t size, size_t chunk)
{
	struct rest_run r = { rest_begin(e, doc), e };
	fuzz_pieces(text, size, chunk, rest_piece, &r);
	return rest_end(r.st, e);
}

static int same(const struct expo *a, const struct expo *b)
{
	if (a->nfams != b->nfams || a->nsamples != b->nsamples)
		return 0;
	for (size_t i = 0; i < a->nfams; i++) {
		const struct expo_family *f = &a->fams[i], *g = &b->fams[i];
		if (!slice_eq(f->name, f->nlen, g->name, g->nlen) || f->n != g->n || f->duplicate != g->duplicate)
			return 0;
		if (expo_find(a, f->name, f->nlen) != f)
			return 0;
		for (size_t k = 0; k < f->n; k++) {
			const struct expo_sample *x = &f->samples[k], *y = &g->samples[k];
			if (x->hash != y->hash || memcmp(&x->value, &y->value, sizeof(x->value)) ||
			    labels_cmp(x->labels, x->nlabels, y->labels, y->nlabels))
				return 0;
		}
	}
	return 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	enum rest_doc doc = (enum rest_doc)(data[0] % 4);
	size_t chunk = 1 + (data[0] >> 2) % 61;
	const char *text = (const char *)data + 1;
	size--;
	struct expo whole, fed;
	expo_init(&whole);
	expo_init(&fed);
	size_t bad = parse(&whole, doc, text, size, size ? size : 1);
	/* pieces equal whole while no run of bytes without a token could pass the in-pieces limit */
	size_t bad_fed = parse(&fed, doc, text, size, chunk);
	if (size < REST_MAX_STRING && (bad != bad_fed || !same(&whole, &fed)))
		abort();
	size_t n = 0;
	for (size_t i = 0; i < whole.nfams; i++)
		n += whole.fams[i].n;
	if (n != whole.nsamples)
		abort();
	expo_free(&whole);
	expo_free(&fed);
	return 0;
}
