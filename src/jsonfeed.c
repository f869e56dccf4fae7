/* jsonfeed.c: see jsonfeed.h. The lexer only needs to know where strings and words are: outside a
 * string a '"' opens one; inside, a backslash escapes the next byte ("\u" the four after it too). It
 * runs over a chunk's tail (after yajl's last token, where no token is in progress) and over the
 * next chunk's head until the token in progress ends: every other byte goes to yajl unread. */
#include "jsonfeed.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { L_OUT, L_WORD, L_STR, L_ESC, L_HEX, L_DROP, L_DROP_ESC, L_DROP_HEX }; /* the dropping ones last */

#define NO_SEG ((size_t)-1)

/* What a byte is to the lexer: B_SEP outside strings (blanks, punctuation), B_QUOTE, and B_STOP
 * ends a run of plain bytes inside a string (a quote, a backslash); the rest make words. */
#define B_STOP 1
#define B_SEP 2
#define B_QUOTE 4
static const unsigned char cls[256] = {
	[' '] = B_SEP, ['\t'] = B_SEP, ['\n'] = B_SEP, ['\r'] = B_SEP, [','] = B_SEP, [':'] = B_SEP,
	['['] = B_SEP, [']'] = B_SEP, ['{'] = B_SEP, ['}'] = B_SEP, ['"'] = B_QUOTE | B_STOP, ['\\'] = B_STOP,
};

/* yajl's callbacks, each noting where its token ended, then the caller's. */
#define NOTE(ctx) struct jsonfeed *j = (ctx); j->last = j->base + yajl_get_bytes_consumed(j->h)

static int w_null(void *ctx)
{
	NOTE(ctx);
	return !j->cb->yajl_null || j->cb->yajl_null(j->ctx);
}

static int w_boolean(void *ctx, int b)
{
	NOTE(ctx);
	return !j->cb->yajl_boolean || j->cb->yajl_boolean(j->ctx, b);
}

static int w_integer(void *ctx, long long v)
{
	NOTE(ctx);
	return !j->cb->yajl_integer || j->cb->yajl_integer(j->ctx, v);
}

static int w_double(void *ctx, double v)
{
	NOTE(ctx);
	return !j->cb->yajl_double || j->cb->yajl_double(j->ctx, v);
}

static int w_number(void *ctx, const char *s, size_t n)
{
	NOTE(ctx);
	return j->cb->yajl_number(j->ctx, s, n);
}

static int w_string(void *ctx, const unsigned char *s, size_t n)
{
	NOTE(ctx);
	int rc = !j->cb->yajl_string || j->cb->yajl_string(j->ctx, s, n);
	j->cut_pending = 0;
	return rc;
}

static int w_start_map(void *ctx)
{
	NOTE(ctx);
	return !j->cb->yajl_start_map || j->cb->yajl_start_map(j->ctx);
}

static int w_map_key(void *ctx, const unsigned char *s, size_t n)
{
	NOTE(ctx);
	int rc = !j->cb->yajl_map_key || j->cb->yajl_map_key(j->ctx, s, n);
	j->cut_pending = 0;
	return rc;
}

static int w_end_map(void *ctx)
{
	NOTE(ctx);
	return !j->cb->yajl_end_map || j->cb->yajl_end_map(j->ctx);
}

static int w_start_array(void *ctx)
{
	NOTE(ctx);
	return !j->cb->yajl_start_array || j->cb->yajl_start_array(j->ctx);
}

static int w_end_array(void *ctx)
{
	NOTE(ctx);
	return !j->cb->yajl_end_array || j->cb->yajl_end_array(j->ctx);
}

/* yajl keeps a pointer to its callbacks: two constant tables, numbers as text or converted */
static const yajl_callbacks wrap_number = { w_null, w_boolean, NULL, NULL, w_number, w_string, w_start_map,
					    w_map_key, w_end_map, w_start_array, w_end_array };
static const yajl_callbacks wrap_convert = { w_null, w_boolean, w_integer, w_double, NULL, w_string, w_start_map,
					     w_map_key, w_end_map, w_start_array, w_end_array };

void jsonfeed_init(struct jsonfeed *j, const yajl_callbacks *cb, void *ctx, size_t limit)
{
	memset(j, 0, sizeof(*j));
	j->cb = cb;
	j->ctx = ctx;
	j->limit = limit;
	j->cut = JSONFEED_CUT(limit);
	j->h = yajl_alloc(cb->yajl_number ? &wrap_number : &wrap_convert, NULL, j);
	if (!j->h)
		abort();
}

void jsonfeed_free(struct jsonfeed *j)
{
	if (j->h)
		yajl_free(j->h);
	j->h = NULL;
}

size_t jsonfeed_offset(const struct jsonfeed *j)
{
	return j->base + yajl_get_bytes_consumed(j->h);
}

static void stop_at(struct jsonfeed *j, size_t at, const char *why)
{
	if (j->stopped)
		return;
	j->stopped = 1;
	j->why_at = at;
	snprintf(j->why, sizeof(j->why), "%s", why);
}

void jsonfeed_fail(struct jsonfeed *j, const char *why)
{
	stop_at(j, jsonfeed_offset(j), why);
}

/* yajl's message without its "parse error: " and newline: "trailing garbage". */
static void yajl_why(struct jsonfeed *j, size_t at)
{
	unsigned char *msg = yajl_get_error(j->h, 0, NULL, 0);
	char why[JSONFEED_WHY_MAX];
	const char *m = msg ? (const char *)msg : "syntax error";
	const char *colon = strstr(m, "error: ");
	if (colon)
		m = colon + 7;
	snprintf(why, sizeof(why), "not JSON: %.*s", (int)strcspn(m, "\n"), m);
	if (msg)
		yajl_free_error(j->h, msg);
	stop_at(j, at, why);
}

/* Bytes [p, p + n) at raw offset at into yajl. */
static int parse(struct jsonfeed *j, const char *p, size_t n, size_t at)
{
	if (!n)
		return 0;
	j->base = at;
	yajl_status s = yajl_parse(j->h, (const unsigned char *)p, n);
	if (s == yajl_status_ok)
		return 0;
	if (s == yajl_status_client_canceled)
		stop_at(j, jsonfeed_offset(j), "stopped"); /* the callback said why first */
	else
		yajl_why(j, at + yajl_get_bytes_consumed(j->h));
	return -1;
}

#define CLS(i) cls[(unsigned char)data[i]]

/* The string in progress is cut before data[i] (its first j->cut bytes kept): yajl gets the bytes
 * before it now and the closing quote later. -1 when the parse stops. */
static int cut_before(struct jsonfeed *j, const char *data, size_t i, size_t *seg)
{
	if (*seg != NO_SEG && parse(j, data + *seg, i - *seg, j->off + *seg) < 0)
		return -1;
	j->cut_pending = 1;
	*seg = NO_SEG;
	if ((unsigned char)data[i] < 0x20) {
		stop_at(j, j->off + i, "not JSON: control character in a string");
		return -1;
	}
	return 0;
}

#define LEX_STOP ((size_t)-1)

/* The dropped part of a cut string from data[i], checked as yajl checks a string (no control
 * character; UTF-8 lead bytes followed by as many continuation bytes as they say; hex > 0: that
 * many continuations still to come), up to its closing quote (yajl gets it: *seg), a backslash
 * (L_DROP_ESC) or n. The index reached, or LEX_STOP. */
static size_t drop(struct jsonfeed *j, const char *data, size_t i, size_t n, size_t *seg, int *st, int *hex)
{
	for (; i < n; i++) {
		unsigned char c = (unsigned char)data[i];
		if (*hex) {
			if ((c & 0xc0) != 0x80)
				break;
			--*hex;
		} else if (c == '"') {
			*seg = i; /* the string ends */
			*st = L_OUT;
			return i + 1;
		} else if (c == '\\') {
			*st = L_DROP_ESC;
			return i + 1;
		} else if (c >= 0x80) {
			*hex = (c >> 5) == 0x6 ? 1 : (c >> 4) == 0xe ? 2 : (c >> 3) == 0x1e ? 3 : -1;
			if (*hex < 0)
				break;
		} else if (c < 0x20) {
			stop_at(j, j->off + i, "not JSON: control character in a string");
			return LEX_STOP;
		}
	}
	if (i == n)
		return n;
	stop_at(j, j->off + i, "not JSON: invalid UTF-8 in a string");
	return LEX_STOP;
}

/* Lex data[i..n) on from the state in j. head: the token in progress at the chunk's start, until it
 * ends (the index after it is returned, state L_OUT), a long string cut (yajl's bytes are given
 * through *seg) and a long word refused; else the chunk's tail, whose bytes yajl has: to n, only the
 * state kept. LEX_STOP when the parse stops. */
static size_t lex(struct jsonfeed *j, const char *data, size_t i, size_t n, size_t *seg, int head)
{
	int st = j->lex, hex = j->hex; /* in locals: the loop writes no memory the data could alias */
	size_t run = j->run, cut = head ? j->cut : (size_t)-1, from;
	while (i < n && !(head && st == L_OUT)) {
		switch (st) {
		case L_OUT: /* blanks and punctuation, then a string or a word */
			while (i < n && (CLS(i) & B_SEP))
				i++;
			if (i < n) {
				st = (CLS(i) & B_QUOTE) ? L_STR : L_WORD;
				i += st == L_STR;
				run = 0;
				hex = 0;
			}
			break;
		case L_WORD:
			for (from = i; i < n && !(CLS(i) & (B_SEP | B_QUOTE)); i++)
				;
			run += i - from;
			if (head && run > JSONFEED_MAX_TOKEN) {
				char why[64];
				snprintf(why, sizeof(why), "a number or word longer than %d bytes", JSONFEED_MAX_TOKEN);
				stop_at(j, j->off + i, why);
				return LEX_STOP;
			}
			st = i < n ? L_OUT : L_WORD;
			break;
		case L_STR: { /* plain bytes up to the cut, then a quote, a backslash or the cut */
			size_t lim = run >= cut ? i : n - i > cut - run ? i + (cut - run) : n;
			for (from = i; i < lim && !(CLS(i) & B_STOP); i++)
				;
			run += i - from;
			if (i == n)
				break;
			unsigned char c = (unsigned char)data[i];
			if (c == '"') {
				st = L_OUT;
			} else if (c == '\\' && i < lim) {
				st = L_ESC;
				run++;
			} else if ((c & 0xc0) == 0x80) { /* the cut waits for the character's end */
				run++;
			} else {
				if (cut_before(j, data, i, seg) < 0)
					return LEX_STOP;
				st = L_DROP; /* from c on, checked as yajl checks a string, and dropped */
				break;
			}
			i++;
			break;
		}
		case L_ESC:
			hex = data[i++] == 'u' ? 4 : 0;
			run++;
			st = hex ? L_HEX : L_STR;
			break;
		case L_HEX: /* the cut never falls inside \uXXXX */
			for (; i < n && hex; i++, hex--)
				run++;
			st = hex ? L_HEX : L_STR;
			break;
		case L_DROP:
			i = drop(j, data, i, n, seg, &st, &hex);
			if (i == LEX_STOP)
				return LEX_STOP;
			break;
		case L_DROP_ESC: /* what yajl's lexer accepts after a backslash */
			if (!strchr("\"\\/bfnrtu", data[i]) || !data[i]) {
				stop_at(j, j->off + i, "not JSON: invalid escaped character in a string");
				return LEX_STOP;
			}
			hex = data[i] == 'u' ? 4 : 0;
			st = data[i++] == 'u' ? L_DROP_HEX : L_DROP;
			break;
		case L_DROP_HEX:
			if (!isxdigit((unsigned char)data[i])) {
				stop_at(j, j->off + i, "not JSON: invalid \\u escape in a string");
				return LEX_STOP;
			}
			i++;
			st = --hex ? L_DROP_HEX : L_DROP;
			break;
		}
	}
	j->lex = st;
	j->hex = hex;
	j->run = run;
	return i;
}

int jsonfeed_feed(struct jsonfeed *j, const char *data, size_t n)
{
	if (j->stopped)
		return -1;
	size_t seg = j->lex >= L_DROP ? NO_SEG : 0; /* where the bytes yajl gets next begin */
	size_t i = j->lex != L_OUT ? lex(j, data, 0, n, &seg, 1) : 0; /* the token in progress */
	if (i == LEX_STOP)
		return -1;
	size_t last = j->last;
	if (seg != NO_SEG && parse(j, data + seg, n - seg, j->off + seg) < 0)
		return -1;
	if (i < n) { /* the tail: from the end of yajl's last token (no token is in progress there) */
		size_t t = j->last > last && j->last - j->off > i ? j->last - j->off : i;
		lex(j, data, t, n, NULL, 0);
	}
	j->off += n;
	return 0;
}

int jsonfeed_end(struct jsonfeed *j)
{
	if (j->stopped)
		return -1;
	j->base = j->off;
	yajl_status s = yajl_complete_parse(j->h);
	if (s == yajl_status_client_canceled) {
		stop_at(j, j->off, "stopped");
		return -1;
	}
	if (s != yajl_status_ok) {
		yajl_why(j, j->off);
		return -1;
	}
	return 0;
}
