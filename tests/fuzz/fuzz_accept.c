/* fuzz_accept.c: libFuzzer target for the Accept-Encoding negotiation (src/http_encoding.c). The
 * input is one or more field lines separated by '\n', added one after the other as a request's
 * Accept-Encoding lines. The property, checked with abort() (crashes, leaks and UB are the
 * sanitizers'):
 *  - the lines choose what the same lines joined by commas into one line choose (RFC 9110 5.3),
 *    when the joined line is within ACCEPT_ENCODING_MAX;
 *  - a space after every comma, and upper case, change nothing (OWS; codings and "q" are
 *    case-insensitive), within the bound;
 *  - gzip is chosen only when the input names gzip (any case) or "*";
 *  - the lines are read within their bytes (ASan: each line is copied to a heap block of its own
 *    length, no NUL after it);
 *  - http_qvalue_parse of the input's first bytes (up to 6) is, by another reading (strtod), the
 *    weight in thousandths of "0" / "1" with up to three decimals not above 1, or -1. */
#include <ctype.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "http_encoding.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The lines of in (n bytes, '\n'-separated), each added from a block of its own. */
static enum content_coding choose_lines(const char *in, size_t n)
{
	struct accept_encoding ae;
	size_t i = 0;
	accept_encoding_init(&ae);
	for (;;) {
		const char *nl = memchr(in + i, '\n', n - i);
		size_t len = nl ? (size_t)(nl - (in + i)) : n - i;
		char *line = malloc(len ? len : 1);
		if (!line)
			abort();
		memcpy(line, in + i, len);
		accept_encoding_add(&ae, line, len);
		free(line);
		if (!nl)
			break;
		i += len + 1;
	}
	return accept_encoding_choose(&ae);
}

/* in with every '\n' made ',' (joined), a space after every comma (spaced) or upper case. */
enum edit { JOIN, SPACE, UPPER };
static char *edited(const char *in, size_t n, enum edit e, size_t *outlen)
{
	char *out = malloc(2 * n + 1);
	size_t o = 0;
	if (!out)
		abort();
	for (size_t i = 0; i < n; i++) {
		char c = in[i];
		if (e == JOIN && c == '\n')
			c = ',';
		if (e == UPPER)
			c = (char)toupper((unsigned char)c);
		out[o++] = c;
		if (e == SPACE && c == ',')
			out[o++] = ' ';
	}
	*outlen = o;
	return out;
}

static int names_gzip(const char *in, size_t n)
{
	if (memchr(in, '*', n))
		return 1;
	for (size_t i = 0; i + 4 <= n; i++)
		if (!strncasecmp(in + i, "gzip", 4))
			return 1;
	return 0;
}

static void check_qvalue(const char *in, size_t n)
{
	char s[8];
	size_t len = n < 6 ? n : 6;
	memcpy(s, in, len);
	s[len] = '\0';
	int valid = len >= 1 && len <= 5 && (s[0] == '0' || s[0] == '1') && (len == 1 || s[1] == '.');
	for (size_t i = 2; valid && i < len; i++)
		valid = s[i] >= '0' && s[i] <= '9';
	double d = valid ? strtod(s, NULL) : 0;
	int want = valid && d <= 1.0 ? (int)lround(d * 1000) : -1;
	if (http_qvalue_parse(in, len) != want)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *in = (const char *)data;
	size_t lines = 1, n;
	for (size_t i = 0; i < size; i++)
		lines += data[i] == '\n';
	enum content_coding got = choose_lines(in, size);
	if (got != choose_lines(in, size)) /* no state survives a call */
		abort();
	if (got == CODING_GZIP && !names_gzip(in, size))
		abort();
	char *j = edited(in, size, JOIN, &n);
	if (n <= ACCEPT_ENCODING_MAX && http_encoding_negotiate(j, n) != got)
		abort();
	free(j);
	static const enum edit more[] = { SPACE, UPPER };
	for (size_t k = 0; k < 2; k++) {
		char *e = edited(in, size, more[k], &n);
		/* each line must stay within the bound too: compare only when the whole does */
		if (n + lines <= ACCEPT_ENCODING_MAX && size + lines <= ACCEPT_ENCODING_MAX && choose_lines(e, n) != got)
			abort();
		free(e);
	}
	check_qvalue(in, size);
	return 0;
}
