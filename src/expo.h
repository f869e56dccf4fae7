/* expo.h: parser for the Prometheus text exposition format as slurmctld writes it.
 *
 * Tolerant mode (the default, for slurmctld): HELP/TYPE/comments, several labels, unlabelled
 * samples inside labelled families, integers, floats, NaN, +/-Inf, optional timestamps, optional
 * "# EOF", CRLF, blank lines. Label values are taken VERBATIM, because slurmctld 25.11 does not
 * escape them (openmetrics.c writes key="%s"): a value ends at the first '"' that is followed by
 * '}' or by ',' and another `name="`. So `account="odd"acct\\x y"` yields the 13 bytes
 * odd"acct\\x y. Strict mode (EXPO_STRICT) is the Prometheus/OpenMetrics grammar: escapes
 * \\ \" \n are decoded and a raw '"' ends the value.
 *
 * A malformed line is skipped whole, counted, and the first few are kept with their line number
 * and reason; it never yields a sample. A family holding two samples with the same label set is
 * marked `duplicate` (its values are ambiguous) and must not be used.
 *
 * Two ways in: expo_parse() takes a whole body and borrows it (names and raw values point into
 * it, so the body must outlive the expo); expo_feed() takes the bytes of a transfer as they
 * arrive, parses every complete line at once, holds only the unfinished last line (at most
 * EXPO_MAX_LINE bytes) and copies what it keeps, so a chunk may go away as soon as the call
 * returns. Everything else is owned by the expo; expo_free() releases it. */
#ifndef SHIM_EXPO_H
#define SHIM_EXPO_H

#include <stddef.h>
#include <stdint.h>

#include "hmap.h"
#include "labels.h"
#include "xmalloc.h"

enum expo_type { EXPO_UNTYPED, EXPO_GAUGE, EXPO_COUNTER, EXPO_SUMMARY, EXPO_HISTOGRAM, EXPO_OTHER };

enum { EXPO_STRICT = 1 };

struct expo_sample {
	struct label *labels;
	uint32_t nlabels;
	uint32_t hash;          /* labels_hash(labels) */
	double value;
};

struct expo_family {
	const char *name;
	uint32_t nlen;
	enum expo_type type;
	const char *help;        /* the HELP text as sent (unescaped, not NUL-terminated), or NULL */
	uint32_t hlen;
	int duplicate;
	struct expo_sample *samples;
	size_t n, cap;
	size_t twin;             /* index + 1 of the family kept just before its first sample */
	int declared;            /* named by the answer with or without samples (expo_declare): with
				    none, the answer says it has none, which a row may read as such */
};

#define EXPO_MAX_ERRORS 8
#define EXPO_MAX_LINE (1u << 20)   /* expo_feed: a longer line is refused, not buffered */

struct expo_error {
	size_t line;             /* a JSON document's (slurmrestd.h): the byte offset */
	char reason[160];
};

/* Which families to store: called once per run of lines of one family and once per TYPE line; lines
 * of other families are still checked (a malformed line is still an error) but nothing of them is
 * kept, not even their name or TYPE (nnamed still counts them). */
typedef int (*expo_keep_fn)(const char *name, size_t len, void *ctx);

struct expo_parse;            /* where a parse stands: private to expo.c */

/* The families are public for readers; how the parse goes is not. */
struct expo {
	struct arena arena;
	struct expo_family *fams;
	size_t nfams, capfams;
	struct hmap fidx;        /* fams' index by name (hmap.h) */
	size_t nsamples, nlines, nerrors;
	size_t nnamed;            /* TYPE lines and sample lines of any family, kept or not */
	size_t invalid_utf8;      /* label values that are not served as they are (invalid UTF-8 or a
				     control byte: utf8_is_clean), counted where a label set
				     is stored (not for one shared with a twin): nonzero iff a kept
				     sample has one. Kept as they are (sums over them stay right);
				     mapping.c repairs what rows serve */
	struct expo_error errors[EXPO_MAX_ERRORS];
	struct expo_parse *ps;    /* the parse state, owned; NULL between parses */
};

void expo_init(struct expo *e);
/* expo_init, storing only the families keep() wants (NULL: all); ctx must outlive the parse. */
void expo_init_keep(struct expo *e, expo_keep_fn keep, void *ctx);
void expo_free(struct expo *e);
/* Forget every family and the parse so far, keeping the keep() filter (a restarted transfer). */
void expo_reset(struct expo *e);
/* The parse is over: forget the filter (its owner may go away) and the parse state. */
void expo_drop_keep(struct expo *e);
/* Bytes held for the unfinished last line (expo_feed): at most EXPO_MAX_LINE. */
size_t expo_pending(const struct expo *e);
/* Parse body into e (families accumulate across calls). Returns the number of malformed lines. */
size_t expo_parse(struct expo *e, const char *body, size_t len, int flags);
/* Parse a body that arrives in pieces: expo_feed() for every piece, in order, then expo_feed_end()
 * for the last line and the duplicate check. Returns the number of malformed lines of the body. */
void expo_feed(struct expo *e, const char *data, size_t n, int flags);
size_t expo_feed_end(struct expo *e, int flags);
const struct expo_family *expo_find(const struct expo *e, const char *name, size_t nlen);

/* Family builder, for inputs that are not exposition text (slurmrestd JSON): add one sample of
 * family `name` with the given labels. Honours e->keep (a family nobody reads is not stored; the
 * call returns 0), copies the name and every label name and value into e's arena (the caller's
 * bytes may go away after the call), sorts the labels by name and hashes them as the parser does.
 * labels is the caller's scratch: it is sorted in place. Returns 1 when stored, 0 when not kept;
 * nnamed counts both, as it counts the sample lines of the text.
 * expo_add_end() marks the families holding two samples of one label set `duplicate`, as
 * expo_feed_end() does; call it once after the last expo_add(). */
int expo_add(struct expo *e, const char *name, size_t nlen, struct label *labels, uint32_t nlabels,
	     double value);
void expo_add_end(struct expo *e);
/* The input positively has family `name`, with or without samples (a slurmrestd document whose
 * records all lack what the family counts): the family is made when e->keep wants it, and marked
 * declared. nnamed is left as it is (an answer that only declares names nothing). */
void expo_declare(struct expo *e, const char *name, size_t nlen);
/* 1 when expo_add would store a sample of family `name` (it holds the family, or its keep()
 * wants it), else 0: a builder skips the work of a family nobody reads. */
int expo_wants(const struct expo *e, const char *name, size_t nlen);
/* A problem of an input that is not exposition text, at position `at` (slurmrestd.h: a byte offset),
 * as the parser records a malformed line: the first EXPO_MAX_ERRORS are kept. */
void expo_add_error(struct expo *e, size_t at, const char *reason);

#endif
