/* fuzz_native.c: libFuzzer target for the native passthrough (src/native.c, src/writer.c): the input
 * is a slurmctld answer, read with the tolerant reader as payload.c reads it (expo_feed in pieces,
 * no keep filter; the first byte picks one of 7 piece sizes), then written back by native_render. The
 * property, checked with abort():
 *  - the output is valid UTF-8 without a control byte but newline, every line ends with a newline,
 *    and every metric name in it is
 *    [a-zA-Z_:][a-zA-Z0-9_:]*, as Prometheus requires (checked here too: the strict reader took a
 *    HELP or TYPE name that starts with a digit until fuzz_native found it, test_native_digit_name);
 *  - the strict reader (expo_parse with EXPO_STRICT: escapes decoded, a raw quote ends a value)
 *    reads it without an error;
 *  - round trip: it finds the families of the input that were written (those with a HELP, a type
 *    other than untyped, or a sample), in the same order, with the same names; the type (info,
 *    stateset and the other OpenMetrics-only types read back as untyped); the HELP text, cleaned
 *    (utf8_clean: invalid UTF-8 and control bytes but newline become U+FFFD, so a CR is never
 *    written, where the strict reader would take CR LF for a line end) and with its \\ and \n
 *    escapes decoded; and the same samples in the same order: the same value (NaN as NaN, the sign
 *    of zero kept) and the same labels but those with an empty value (written as no label), every
 *    value cleaned;
 *  - native_render returns the number of HELP texts and label values that were not clean (invalid
 *    UTF-8 or a control byte: utf8_is_clean).
 * Ownership: each call owns its expos and buffer and frees them before returning. */
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "expo.h"
#include "fuzz_pieces.h"
#include "names.h"
#include "native.h"
#include "utf8.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void expo_piece(void *e, const char *piece, size_t n)
{
	expo_feed(e, piece, n, 0);
}

/* The input as its bytes arrive, in pieces of `chunk` bytes (fuzz_pieces.h). */
static void feed(struct expo *e, const char *text, size_t size, size_t chunk)
{
	fuzz_pieces(text, size, chunk, expo_piece, e);
	expo_feed_end(e, 0);
}

/* s[0..n) cleaned, as the writer writes it, into a new buffer of 3n bytes; *len its length. */
static char *repaired(const char *s, size_t n, size_t *len)
{
	char *d = malloc(3 * n + 1);
	if (!d)
		abort();
	*len = utf8_clean(d, s, n);
	return d;
}

/* Does the HELP text h (as the strict reader keeps it: escaped) decode to want? */
static int help_is(const char *h, size_t hlen, const char *want, size_t wlen)
{
	size_t j = 0;
	for (size_t i = 0; i < hlen; i++, j++) {
		char c = h[i];
		if (c == '\\' && i + 1 < hlen && (h[i + 1] == '\\' || h[i + 1] == 'n'))
			c = h[++i] == 'n' ? '\n' : '\\';
		if (j >= wlen || want[j] != c)
			return 0;
	}
	return j == wlen;
}

static int same_value(double a, double b)
{
	return isnan(a) ? isnan(b) : a == b && signbit(a) == signbit(b);
}

/* Sample a of the input and b read back: the same value and non-empty labels, values repaired. */
static int same_sample(const struct expo_sample *a, const struct expo_sample *b)
{
	uint32_t j = 0;
	if (!same_value(a->value, b->value))
		return 0;
	for (uint32_t i = 0; i < a->nlabels; i++) {
		const struct label *x = &a->labels[i];
		if (!x->vlen)
			continue;
		if (j >= b->nlabels)
			return 0;
		const struct label *y = &b->labels[j++];
		size_t len;
		char *v = repaired(x->value, x->vlen, &len);
		int eq = slice_is_equal(x->name, x->nlen, y->name, y->nlen) && slice_is_equal(v, len, y->value, y->vlen);
		free(v);
		if (!eq)
			return 0;
	}
	return j == b->nlabels;
}

static int written(const struct expo_family *f)
{
	return f->help || f->n || (f->type != EXPO_UNTYPED);
}

/* The families of in that were written, against those the strict reader found in out. */
static void check_round_trip(const struct expo *in, const struct expo *out)
{
	size_t k = 0;
	for (size_t i = 0; i < in->nfams; i++) {
		const struct expo_family *f = &in->fams[i];
		if (!written(f))
			continue;
		if (k >= out->nfams)
			abort();
		const struct expo_family *g = &out->fams[k++];
		enum expo_type want = f->type == EXPO_OTHER ? EXPO_UNTYPED : f->type;
		if (!slice_is_equal(f->name, f->nlen, g->name, g->nlen) || g->type != want || g->n != f->n ||
		    !f->help != !g->help)
			abort();
		if (f->help) {
			size_t len;
			char *h = repaired(f->help, f->hlen, &len);
			int eq = help_is(g->help, g->hlen, h, len);
			free(h);
			if (!eq)
				abort();
		}
		for (size_t s = 0; s < f->n; s++)
			if (!same_sample(&f->samples[s], &g->samples[s]))
				abort();
	}
	if (k != out->nfams)
		abort();
}

/* Every line of the output names a metric with a valid name: "# HELP name ", "# TYPE name " or a
 * sample "name{" / "name ". */
static void check_names(const char *p, const char *end)
{
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		if (!nl)
			abort(); /* every line ends with a newline */
		if (nl - p > 7 && (!memcmp(p, "# HELP ", 7) || !memcmp(p, "# TYPE ", 7)))
			p += 7;
		if (!is_name_start(*p))
			abort();
		while (is_name_char(*p))
			p++;
		if (*p != ' ' && *p != '{')
			abort();
		p = nl + 1;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const size_t chunks[] = { 1, 2, 3, 7, 64, 4096, 1u << 20 };
	const char *text = (const char *)data;
	struct expo in, out;
	struct buf b;
	size_t bad = 0;

	expo_init(&in);
	expo_init(&out);
	buf_init(&b, 0);
	feed(&in, text, size, chunks[size ? data[0] % (sizeof(chunks) / sizeof(chunks[0])) : 0]);
	size_t rep = native_render(&in, &b);
	for (size_t i = 0; i < in.nfams; i++) {
		const struct expo_family *f = &in.fams[i];
		bad += f->help && !utf8_is_clean(f->help, f->hlen);
		for (size_t s = 0; s < f->n; s++)
			for (uint32_t j = 0; j < f->samples[s].nlabels; j++)
				bad += !utf8_is_clean(f->samples[s].labels[j].value, f->samples[s].labels[j].vlen);
	}
	const char *text_out = b.len ? b.data : ""; /* nothing written: no buffer */
	if (rep != bad || !utf8_is_valid(text_out, b.len))
		abort();
	for (size_t i = 0; i < b.len; i++)
		if (utf8_is_control((unsigned char)text_out[i]))
			abort(); /* no raw control byte: newline only, as the line end */
	check_names(text_out, text_out + b.len);
	if (expo_parse(&out, text_out, b.len, EXPO_STRICT) != 0)
		abort();
	check_round_trip(&in, &out);
	expo_free(&in);
	expo_free(&out);
	buf_free(&b);
	return 0;
}
