/* render.h: one scrape's answer from one set of finished payloads. The one function that every
 * caller of the row driver goes through (the daemon and --once through scrape.c, --compare-legacy,
 * the golden, absent and mapping tests, the fuzzers, the benchmark):
 *   payloads -> source_usable (source.h's verdict across sources) -> catalog_compare (slurmctld's
 *   answers against the table's native catalog, catalog.h) -> mapping_run (the rows, each written
 *   as it is evaluated, under the output cap) -> self metrics -> the result record.
 * When payloads were given but none is usable, the body is the 503 text instead (why, per source)
 * and no row is evaluated.
 *
 * No locks, no network, no clock but the caller's (render_in.clock), no state between calls: the
 * caller (scrape.c) logs from the result record, builds the status snapshot from it and keeps what
 * lasts from one scrape to the next (fetch counts, reload state, the last answer's size).
 * Ownership: render_run fills *res, which then owns its rows (render_result_free; a result that was
 * never filled may be freed if it was zeroed). */
#ifndef SHIM_RENDER_H
#define SHIM_RENDER_H

#include "buf.h"
#include "catalog.h"
#include "mapping.h"
#include "payload.h"

/* A source's counters since start, from whoever keeps them (the payload cache, the passthrough). */
struct render_counts {
	unsigned long fetches;
	unsigned long slow;       /* fetches longer than --log.slow-fetch */
	unsigned long repaired;   /* values the native passthrough served repaired */
	int costed;               /* cost-scheduled (cache.h's cache_cost): the four below are written */
	double cost;              /* seconds: its last usable fetch */
	double interval;          /* seconds from the end of its last fetch to the next */
	double timeout;           /* seconds the next fetch may take */
	unsigned failures;        /* failed fetches in a row (backing off) */
};

struct render_in {
	const struct mapping *m;
	unsigned flags;           /* the rows enabled: enum row_flag bits (mapping.h) */
	const struct payload *const *p; /* [SRC_COUNT]: a finished payload for every source the table
					   needs, NULL for the others */
	const struct render_counts *counts; /* [SRC_COUNT], or NULL: all zero */
	size_t max_output;        /* bytes of legacy families (self metrics never count); 0: no cap */
	size_t size_hint;         /* the body is reserved at about this (the last answer's length) */
	int reload_ok;            /* the last mapping (re)load succeeded */
	double reload_time;       /* unix time of that attempt */
	double (*clock)(void);    /* monotonic seconds, for the payloads' ages and the scrape duration;
				     NULL: every time in the self metrics is 0 */
	double started;           /* clock() when the scrape began */
	int time_rows;            /* measure the rows' evaluation and writing apart (the benchmark) */
	const char *tail;         /* self metrics of the caller's own, appended as they are (the
				     controllers'); may be NULL */
	size_t tail_len;
};

/* What one row gave. */
struct render_row {
	enum row_status status;
	size_t form;              /* the form evaluated: an index in the row's forms (the native one last) */
	enum fidelity fidelity;   /* that form's; approximate when its wraps_at says it may have wrapped */
	enum row_wrap_state wrap; /* what that form's wraps_at said this scrape (mapping.h) */
	double bound;             /* with WRAP_REACHED: its bound's largest value */
	int output_full;          /* evaluated, but its family did not fit the output cap: left out */
	size_t nseries;           /* series computed */
	size_t repaired;          /* label values served repaired (U+FFFD) */
	size_t off, len;          /* its family's bytes in the body (len 0: not written) */
	char err[160];            /* why it was left out, when it says */
};

/* What one source was, as this answer used it. */
struct render_source {
	int given;                /* a payload was given (the table needs it) */
	int up;                   /* rows could read it */
	double seconds;           /* fetch duration */
	double at;                /* when the fetch finished (the payload's clock) */
	size_t len;               /* body bytes */
	long http_status;         /* 0: no HTTP answer */
	size_t parse_errors;
	enum source_fault fault;  /* the first fault recorded */
	char reason[400];         /* why it is not up (raw upstream bytes possible); "" when up */
};

struct render_result {
	int status;               /* 200, or 503: payloads given and none usable (no row evaluated) */
	size_t nrows;             /* the table's rows, 0 on 503 */
	struct render_row *rows;  /* per row of the table; NULL on 503 */
	struct render_source src[SRC_COUNT];
	size_t repaired;          /* label values served repaired, over the served rows */
	struct catalog_diff catalog; /* slurmctld's answers against the table's native catalog (catalog.h) */
	double eval_s, write_s;   /* with time_rows: the rows' evaluation and writing, summed */
};

/* Render the answer over in->p into out, and what it was made of into *res. Returns res->status. */
int render_run(const struct render_in *in, struct buf *out, struct render_result *res);
void render_result_free(struct render_result *res);
/* Why row r was left out ("input_down", "input_missing", "error", "no_input", "output_full"), or
 * NULL: served, disabled or unavailable. */
const char *render_left_out(const struct render_row *r);
/* Whether served row o is served approximate this scrape because the counters its form reads may
 * have wrapped (its wraps_at, mapping.h), and if so why, into out (the log says it once per row,
 * without the bound's value: with_value 0; the status page with it). */
int render_row_has_wrap(const struct render_row *o);
void render_wrap_why(const struct row *r, const struct render_row *o, int with_value, char *out, size_t outsz);

#endif
