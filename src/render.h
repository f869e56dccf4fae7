/* render.h: one scrape's answer from one set of finished payloads, and its result record. The one
 * function that every caller of the row driver goes through (the daemon and --once through scrape.c,
 * --compare-legacy, the golden, absent and mapping tests, the fuzzers, the benchmark):
 *   payloads -> source_usable (source.h's verdict across sources) -> catalog_compare (slurmctld's
 *   answers against the table's native catalog, catalog.h) -> the record's per-source outcome as
 *   families the rows may read (mapping.h's MAPPING_RECORD_FAMILIES) -> mapping_run (the rows, each written
 *   as it is evaluated, under the output cap) -> the result record -> the self metrics, written from
 *   the record by render_record.c's one table of them.
 * When payloads were given but none is usable, the body is the 503 text instead (why, per source)
 * and no row is evaluated.
 *
 * The result record is the one record of a scrape: per source what was fetched, from where, how old,
 * how big, why not usable, and its counters since start as the caller gave them; per row what it gave.
 * The self metrics, the status page (through the answer that holds it, answer.h), the log and
 * --compare-legacy all read it; nothing keeps a copy of it.
 *
 * No locks, no network, no clock but the caller's (render_in.clock), no state between calls: the
 * caller (scrape.c) logs from the result record and keeps what lasts from one scrape to the next
 * (fetch counts, reload state, the last answer's size).
 * Ownership: render_run fills *res, which then owns its rows and node view (render_result_free; a
 * result that was never filled may be freed if it was zeroed); res->m is the table it was rendered
 * with, borrowed: the record's rows are read with it while the caller keeps that table. */
#ifndef SHIM_RENDER_H
#define SHIM_RENDER_H

#include "buf.h"
#include "catalog.h"
#include "compress.h"
#include "controllers.h"
#include "mapping.h"
#include "nodeview.h"
#include "payload.h"

/* A source's counters since start, from whoever keeps them (the payload cache, the passthrough);
 * the record keeps them per source as the caller gave them. */
struct render_counts {
	unsigned long fetches;
	unsigned long slow;       /* fetches longer than --log.slow-fetch */
	unsigned long failed;     /* fetches whose answer was not usable */
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
	double slow_fetch;        /* seconds: a fetch that took longer is marked slow; 0: never */
	size_t size_hint;         /* the body is reserved at about this (the last answer's length) */
	int reload_ok;            /* the last mapping (re)load succeeded */
	double reload_time;       /* unix time of that attempt */
	double (*clock)(void);    /* monotonic seconds, for the payloads' ages and the scrape duration;
				     NULL: every time in the self metrics is 0 */
	double started;           /* clock() when the scrape began */
	int time_rows;            /* measure the rows' evaluation and writing apart (the benchmark) */
	int node_view;            /* build the record's node view (nodeview.h: the status page's) */
	double load_margin;       /* with node_view: --status.load-margin, percent (loadview.h) */
	/* slurmctld's controllers as last seen (controllers_view), and the switches between them since
	   start; ctl NULL: none (a replay): no controller metrics */
	const struct controller_view *ctl;
	size_t nctl;
	unsigned long ctl_switches;
	struct compress_stats *gz; /* the answers' compression counters (compress.h); NULL: no compression */
	/* every schema the process serves (mapping.h's chain, m one of them), for the self metric
	   slurm_exporter_shim_schema_rows; NULL: not written (--once prints what it always printed) */
	const struct mapping *schemas;
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
	int slow;                 /* the fetch took longer than render_in.slow_fetch */
	int controller;           /* from where: slurmctld's controller index (res->ctl[]), -1: none */
	size_t fed[FID_COUNT];    /* served rows whose form read it, by that form's fidelity this scrape */
	struct render_counts n;   /* its counters since start (all zero when not given) */
	char reason[400];         /* why it is not up (raw upstream bytes possible); "" when up */
};

/* What an upstream's token did in this answer's payloads (payload.h's source_token_state). */
struct render_token {
	int state;                /* TOKEN_NOT_CONFIGURED, TOKEN_UNREADABLE, TOKEN_SENT; -1: refused */
	int source;               /* refused: by this source (-1: none) */
	long http_status;         /* that source's HTTP status */
};

struct render_result {
	int status;               /* 200, or 503: payloads given and none usable (no row evaluated) */
	const struct mapping *m;  /* the table rendered (borrowed: see Ownership) */
	const struct mapping *schemas; /* render_in's: the chain m belongs to (borrowed as m is), or NULL */
	size_t nrows;             /* the table's rows, 0 on 503 */
	struct render_row *rows;  /* per row of the table; NULL on 503 */
	struct render_source src[SRC_COUNT];
	struct render_token token[UPSTREAM_COUNT];
	size_t repaired;          /* label values served repaired, over the served rows */
	struct catalog_diff catalog; /* slurmctld's answers against the table's native catalog (catalog.h) */
	struct nodeview *nodes;   /* with render_in.node_view and a 200: the nodes, partitions and queue of
				     the payloads read (nodeview.h); NULL otherwise */
	double slow_fetch;        /* render_in's */
	int reload_ok;            /* render_in's: the table's (re)load as of this render */
	double reload_time;
	int has_clock;            /* render_in.clock was given: the times below and the ages are real */
	double at;                /* clock() when the self metrics were written (the payloads' ages) */
	double duration;          /* seconds from render_in.started to then */
	int has_ctl;              /* render_in.ctl was given */
	size_t nctl;              /* slurmctld's controllers as last seen */
	struct controller_view ctl[CONTROLLERS_MAX];
	unsigned long ctl_switches;
	int has_gz;               /* render_in.gz was given: its counters as of this render */
	unsigned long gz_answers;
	unsigned long long gz_cpu_ns, gz_bytes[2]; /* by enum content_coding */
	double eval_s, write_s;   /* with time_rows: the rows' evaluation and writing, summed */
};

/* Render the answer over in->p into out, and what it was made of into *res. Returns res->status. */
int render_run(const struct render_in *in, struct buf *out, struct render_result *res);
void render_result_free(struct render_result *res);

/* ---- render_record.c: reading the record ---- */

/* The slurm_exporter_shim_* families of res (render_record.c's table of them), written by the
 * writer (writer.h) as every other family is. */
void render_write_self(struct buf *b, const struct render_result *res);
/* The age of source id's answer at res->at (0 without a clock or without an answer). */
double render_source_age(const struct render_result *res, enum source_id id);
/* Why row r was left out ("input_down", "input_missing", "error", "no_input", "output_full"), or
 * NULL: served, disabled or unavailable. */
const char *render_left_out(const struct render_row *r);
/* Whether served row o is served approximate this scrape because the counters its form reads may
 * have wrapped (its wraps_at, mapping.h), and if so why, into out (the log says it once per row,
 * without the bound's value: with_value 0; the status page with it). */
int render_row_has_wrap(const struct render_row *o);
void render_wrap_why(const struct row *r, const struct render_row *o, int with_value, char *out, size_t outsz);

#endif
