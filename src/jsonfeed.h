/* jsonfeed.h: JSON bytes into a yajl callback parser with bounded memory and byte offsets.
 *
 * yajl holds the token that spans the end of a chunk, whole, across chunks: a 1 GB string in a field
 * nobody reads (a job's --comment, any user can set it) would be buffered whole. So the token in
 * progress at a chunk's end is lexed here (from where yajl reported the last token: the rest of the
 * chunk goes to yajl unread): a string that goes on past JSONFEED_CUT(limit) raw bytes is cut there,
 * at a character boundary outside an escape; yajl gets its first bytes and the closing quote, never
 * the rest; a number or word that goes on past JSONFEED_MAX_TOKEN bytes stops the parse. yajl holds
 * at most one chunk and that much of a string.
 * In a string or key callback, jsonfeed_is_long() says whether the string was longer than `limit`
 * decoded bytes: cut (whose decoded length is past `limit`, as no escape decodes to less than a
 * sixth of its bytes) or whole in one chunk and longer; so the verdict is the same whatever the
 * chunks were. A number callback should refuse a number longer than JSONFEED_MAX_TOKEN itself
 * (yajl_number gives its length), for the same reason.
 * Offsets are of the raw bytes, the cut ones counted: jsonfeed_offset() in a callback is the offset
 * just after the token being reported.
 *
 * Interface: jsonfeed_init, jsonfeed_feed per chunk (in order; a chunk may go away after the call),
 * jsonfeed_end once, jsonfeed_free. The callbacks get ctx, as with yajl_alloc. A callback that returns
 * 0 stops the parse: it says why first (jsonfeed_fail); a parse that stopped takes no more bytes.
 * Ownership: the struct is the caller's, and must not move between init and free (yajl holds a
 * pointer to it); jsonfeed_free releases the yajl handle; cb must outlive the parse. */
#ifndef SHIM_JSONFEED_H
#define SHIM_JSONFEED_H

#include <stddef.h>
#include <yajl/yajl_parse.h>

#define JSONFEED_MAX_TOKEN 1024   /* bytes of a number, true, false or null */
#define JSONFEED_CUT(limit) (6 * (limit) + 6)
#define JSONFEED_WHY_MAX 160

struct jsonfeed {
	yajl_handle h;
	const yajl_callbacks *cb;
	void *ctx;
	size_t limit, cut;        /* the longest string of interest (decoded); raw bytes a string is cut at */
	size_t off;               /* raw bytes fed so far */
	size_t base;              /* raw offset of the bytes yajl is parsing now */
	size_t last;              /* raw offset just after the last token yajl reported */
	size_t run;               /* raw bytes of the string or word being lexed */
	int lex;                  /* the lexer's state (jsonfeed.c) */
	int hex;                  /* \u digits still to come */
	int cut_pending;          /* a string was cut: its callback has not come yet */
	int stopped;              /* a syntax error, a bound, or a callback stopped the parse */
	size_t why_at;            /* where it stopped */
	char why[JSONFEED_WHY_MAX];
};

void jsonfeed_init(struct jsonfeed *j, const yajl_callbacks *cb, void *ctx, size_t limit);
/* 0, or -1 once the parse has stopped (why, why_at). */
int jsonfeed_feed(struct jsonfeed *j, const char *data, size_t n);
/* The text is complete: 0, or -1 (a truncated document, or stopped before). */
int jsonfeed_end(struct jsonfeed *j);
void jsonfeed_free(struct jsonfeed *j);
/* In a callback: the raw offset just after the current token. */
size_t jsonfeed_offset(const struct jsonfeed *j);
/* In a string or key callback, with its decoded length n: whether it was longer than `limit` (then
 * its bytes are only a part of it). */
static inline int jsonfeed_is_long(const struct jsonfeed *j, size_t n)
{
	return j->cut_pending || n > j->limit;
}
/* In a callback, before it returns 0: why the parse stops (the first reason is kept). */
void jsonfeed_fail(struct jsonfeed *j, const char *why);

#endif
