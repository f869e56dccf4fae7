/* fuzz_restjson.c: libFuzzer target for the slurmrestd JSON converter (src/slurmrestd.c) and the
 * bounded feeder under it (src/jsonfeed.c). The first byte picks the document (its value % REST_DOCS:
 * nodes, shares, jobs, diag, licenses, jobs/state, reservations, associations) and the piece size; the rest is the
 * answer.
 * Checks the documented contracts: no crash, no leak; the answer fed in pieces gives exactly the
 * families, problem count and first reason of the whole answer, and one recorded error exactly when
 * it has problems; every sample is in its family and found. Then jsonfeed alone with a small string
 * limit (8 bytes: strings of the input are cut): the pieces give the events of the whole (a string
 * past the limit reported "long" either way, its bytes not compared) and the same outcome.
 * Long strings: with a selector byte of 240 or more each
 * '~' of the answer, at most LONG_MAX_RUNS of them, becomes a run of 'x' past REST_MAX_STRING
 * (selector 240..247: 70,001 bytes, long but whole in pieces; 248..255: past JSONFEED_CUT, so cut
 * in pieces and its dropped part checked by jsonfeed), fed in pieces of LONG_CHUNK bytes: the
 * converter itself then sees the strings it skips in a field nothing reads and refuses in a read
 * one (the seeds' strings, 26 KB at most, never reach REST_MAX_STRING). Whatever the size, the
 * pieces and the whole agree on whether the answer is usable, and a usable one gives the same
 * families.
 * Ownership: each parse owns its struct expo (or buffer) and frees it before returning. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "fuzz_pieces.h"
#include "jsonfeed.h"
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
		if (!slice_is_equal(f->name, f->nlen, g->name, g->nlen) || f->n != g->n || f->duplicate != g->duplicate)
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

/* ---- jsonfeed alone: its events as text ---- */

#define FEED_LIMIT 8

struct feed_run {
	struct jsonfeed jf;
	struct buf out;
};

static int ev(void *ctx, const char *tag, const void *s, size_t n)
{
	struct feed_run *r = ctx;
	buf_printf(&r->out, "%s%zu:", tag, n);
	buf_append(&r->out, s, n);
	return 1;
}

static int ev_null(void *ctx)
{
	return ev(ctx, "n", NULL, 0);
}

static int ev_bool(void *ctx, int b)
{
	return ev(ctx, b ? "t" : "f", NULL, 0);
}

static int ev_number(void *ctx, const char *s, size_t n)
{
	if (n > JSONFEED_MAX_TOKEN) /* as the converter refuses it (jsonfeed.h) */
		return 0;
	return ev(ctx, "#", s, n);
}

static int ev_text(void *ctx, const char *tag, const unsigned char *s, size_t n)
{
	struct feed_run *r = ctx;
	return jsonfeed_is_long(&r->jf, n) ? ev(ctx, tag, "*", 1) : ev(ctx, tag, s, n);
}

static int ev_string(void *ctx, const unsigned char *s, size_t n)
{
	return ev_text(ctx, "s", s, n);
}

static int ev_key(void *ctx, const unsigned char *s, size_t n)
{
	return ev_text(ctx, "k", s, n);
}

static int ev_open_map(void *ctx)
{
	return ev(ctx, "{", NULL, 0);
}

static int ev_close_map(void *ctx)
{
	return ev(ctx, "}", NULL, 0);
}

static int ev_open_array(void *ctx)
{
	return ev(ctx, "[", NULL, 0);
}

static int ev_close_array(void *ctx)
{
	return ev(ctx, "]", NULL, 0);
}

static const yajl_callbacks feed_callbacks = {
	ev_null, ev_bool, NULL, NULL, ev_number, ev_string, ev_open_map, ev_key, ev_close_map, ev_open_array,
	ev_close_array,
};

static void feed_piece(void *ctx, const char *piece, size_t n)
{
	struct feed_run *r = ctx;
	jsonfeed_feed(&r->jf, piece, n);
}

/* The events of text fed in pieces of chunk bytes, and the outcome as the last event. */
static char *feed_events(const char *text, size_t size, size_t chunk, size_t *len)
{
	struct feed_run *r = malloc(sizeof(*r)); /* jsonfeed must not move: yajl holds a pointer to it */
	if (!r)
		abort();
	buf_init(&r->out, 0);
	jsonfeed_init(&r->jf, &feed_callbacks, r, FEED_LIMIT);
	fuzz_pieces(text, size, chunk, feed_piece, r);
	buf_printf(&r->out, "=%d", jsonfeed_end(&r->jf));
	jsonfeed_free(&r->jf);
	char *s = buf_steal(&r->out, len);
	free(r);
	return s;
}

#define LONG_RUN (REST_MAX_STRING + 4465) /* 70,001 bytes: a 70 KB --comment, as any user can submit */
#define CUT_RUN (JSONFEED_CUT(REST_MAX_STRING) + 1)
#define LONG_MAX_RUNS 2
#define LONG_CHUNK 4093

/* text with each '~' (the first LONG_MAX_RUNS) made run bytes of 'x'; *size updated */
static char *with_long_runs(const char *text, size_t *size, size_t run)
{
	size_t runs = 0;
	for (size_t i = 0; i < *size; i++)
		runs += text[i] == '~' && runs < LONG_MAX_RUNS;
	char *out = malloc(*size + runs * run + 1);
	if (!out)
		abort();
	size_t n = 0;
	runs = 0;
	for (size_t i = 0; i < *size; i++) {
		if (text[i] == '~' && runs < LONG_MAX_RUNS) {
			memset(out + n, 'x', run);
			n += run;
			runs++;
		} else {
			out[n++] = text[i];
		}
	}
	*size = n;
	return out;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	enum rest_doc doc = (enum rest_doc)(data[0] % REST_DOCS);
	size_t chunk = 1 + (data[0] / REST_DOCS) % 40;
	size--;
	char *long_text = data[0] < 240 ? NULL : with_long_runs((const char *)data + 1, &size, data[0] < 248 ? LONG_RUN : CUT_RUN);
	if (long_text) /* pieces of a few KiB: as fast as the rest, and a long string still spans many */
		chunk = LONG_CHUNK;
	const char *text = long_text ? long_text : (const char *)data + 1;
	struct expo whole, fed;
	expo_init(&whole);
	expo_init(&fed);
	size_t bad = parse(&whole, doc, text, size, size ? size : 1);
	/* pieces equal whole while no string could be cut (a cut's reason and offset are its own) */
	size_t bad_fed = parse(&fed, doc, text, size, chunk);
	if (size < REST_MAX_STRING && (bad != bad_fed || !same(&whole, &fed)))
		abort();
	if (whole.nerrors != (bad ? 1u : 0u) || fed.nerrors != (bad_fed ? 1u : 0u))
		abort();
	/* any size: usable whole exactly when usable in pieces, and then the same families */
	if (!bad != !bad_fed || (!bad && !same(&whole, &fed)))
		abort();
	if (size < REST_MAX_STRING && bad && strcmp(whole.errors[0].reason, fed.errors[0].reason) &&
	    !strstr(whole.errors[0].reason, "longer than"))
		abort();
	size_t n = 0;
	for (size_t i = 0; i < whole.nfams; i++)
		n += whole.fams[i].n;
	if (n != whole.nsamples)
		abort();
	expo_free(&whole);
	expo_free(&fed);
	size_t la, lb;
	char *a = feed_events(text, size, size ? size : 1, &la), *b = feed_events(text, size, chunk, &lb);
	if (la != lb || memcmp(a, b, la))
		abort();
	free(a);
	free(b);
	free(long_text);
	return 0;
}
