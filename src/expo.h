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
 * Ownership: an expo borrows the body it parsed (names and raw values point into it), so the body
 * must outlive it. Everything else is owned by the expo; expo_free() releases it. */
#ifndef SHIM_EXPO_H
#define SHIM_EXPO_H

#include <stddef.h>
#include <stdint.h>

#include "labels.h"
#include "xmalloc.h"

enum expo_type { EXPO_UNTYPED, EXPO_GAUGE, EXPO_COUNTER, EXPO_SUMMARY, EXPO_HISTOGRAM, EXPO_OTHER };

enum { EXPO_STRICT = 1 };

struct expo_sample {
	struct label *labels;
	uint32_t nlabels;
	double value;
	uint64_t hash;          /* labels_hash(labels) */
};

struct expo_family {
	const char *name;
	uint32_t nlen;
	enum expo_type type;
	int duplicate;
	struct expo_sample *samples;
	size_t n, cap;
};

#define EXPO_MAX_ERRORS 8

struct expo_error {
	size_t line;
	char reason[96];
};

/* Which families to store: called once per run of lines of one family; lines of other families are
 * still checked (a malformed line is still an error) but not kept. */
typedef int (*expo_keep_fn)(const char *name, size_t len, void *ctx);

struct expo {
	struct arena arena;
	expo_keep_fn keep;        /* NULL: keep every family */
	void *keep_ctx;
	const char *skip_name;    /* the family of the previous line, when it was not kept */
	size_t skip_len;
	struct expo_family *fams;
	size_t nfams, capfams;
	uint32_t *htab;          /* open addressing: family index + 1, 0 = empty */
	struct expo_family *last; /* family of the previous sample line */
	size_t hcap;
	size_t nsamples, nlines, nerrors;
	struct expo_error errors[EXPO_MAX_ERRORS];
};

void expo_init(struct expo *e);
void expo_free(struct expo *e);
/* Parse body into e (families accumulate across calls). Returns the number of malformed lines. */
size_t expo_parse(struct expo *e, const char *body, size_t len, int flags);
const struct expo_family *expo_find(const struct expo *e, const char *name, size_t nlen);

#endif
