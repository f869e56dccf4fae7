/* scrape.h: one scrape, from request to answer: the payload cache (cache.h: the fetches, their
 * intervals and deadlines, the table's generations) gives one set of finished payloads, the render
 * (render.h) makes the body and its result record from them, and the scraper shares the answer,
 * logs what the rows did (once per family and reason) and keeps the last answer rendered, whose
 * record the status page reads.
 *
 * Concurrent scrapes share one in-flight fetch per source, and a finished answer (good or bad) is
 * reused for its source's min_interval seconds; nothing older is ever served. A scrape only waits,
 * until its own deadline, so one client's short deadline neither shortens nor fails the fetch the
 * others get. The mapping can be swapped at any time (SIGHUP): a scrape keeps the table it started
 * with and only uses payloads parsed for that table.
 * The rendered answer is shared too: scrapes that get the same payloads under the same table get
 * one immutable, reference-counted body (its self metrics are those of the scrape that rendered it).
 * Ownership: scraper_new returns a new scraper (scraper_free frees it, after the fetches still
 * running end) that owns its cache, mapping and last answer; it copies cfg but borrows the
 * strings it points to; slurmctld's base_url is split into its controllers once by the cache
 * (unless cfg gives them, or replays): no rendered answer mixes two controllers. scraper_new and
 * scraper_set_mapping take ownership of the mapping; scraper_answer returns a new reference;
 * scraper_status takes references that scraper_status_put drops. */
#ifndef SHIM_SCRAPE_H
#define SHIM_SCRAPE_H

#include <stdatomic.h>

#include "answer.h"
#include "buf.h"
#include "cache.h"
#include "fetch.h"
#include "mapping.h"
#include "render.h"
#include "schedule.h"

struct scraper_config {
	struct upstream_config upstream[UPSTREAM_COUNT];
	const char *replay_dir;   /* read files instead of HTTP */
	double min_interval[SRC_COUNT]; /* seconds a source's answer is reused */
	unsigned flags;           /* the rows enabled: enum row_flag bits (mapping.h) */
	unsigned sources_off;     /* sources never fetched whatever the rows read (bit 1 << id); an
				     upstream without base_url is never fetched either */
	size_t max_output;        /* bytes */
	unsigned keep_all;        /* sources whose payloads keep every family, not only the ones the
				     table reads (bit 1 << id): the native passthrough's, decided at start */
	double slow_fetch;        /* seconds: a fetch that takes longer is counted and logged (on the
				     way from fast to slow and back); 0: never */
	size_t max_held;          /* bytes of earlier answers that only connections still hold (clients
				     that do not read); beyond it the connections holding the oldest
				     are closed before a new answer is rendered (answer.h); 0: no bound */
	int compression;          /* answers may be sent gzip-compressed (the daemon): the compression
				     self metrics are written (compress.h) */
	unsigned cost_sources;    /* sources whose interval, back-off and timeout follow what their
				     fetches take (bit 1 << id: slurmrestd's /jobs; cache.h), with cost */
	struct sched_cost_config cost;
	int wait_rest;            /* wait for slurmrestd until the scrape's deadline (cache.h): one-shot modes */
	double load_margin;       /* --status.load-margin, percent (loadview.h) */
	int log_load;             /* log the nodes of unknown load once per change (the daemon) */
	int self_schemas;         /* write slurm_exporter_shim_schema_rows, every schema's row counts (the daemon) */
};

struct scraper;

struct scraper *scraper_new(const struct scraper_config *cfg, struct mapping *m);
/* A scraper of schema `schema` of first's table chain (mapping.h's mapping_load_set: 0 is the first):
 * its own answers, snapshot and log, over first's cache (its fetches, payloads and reloads), which
 * it borrows: free it before first. */
struct scraper *scraper_new_schema(struct scraper *first, size_t schema);
void scraper_free(struct scraper *s); /* NULL: nothing */
void scraper_set_mapping(struct scraper *s, struct mapping *m);   /* NULL: a reload failed */

/* Run one scrape: the exposition (or, on 503, the reasons) as a new reference. timeout_s bounds how
 * long this scrape waits for payloads (never the shared fetch); a source still in flight then is
 * left out of this answer with the reason "scrape deadline passed". A scrape that needs a new
 * answer while earlier ones that only connections hold take more than cfg.max_held bytes first has
 * the connections holding the oldest of them closed (answer_held_evict); it is never refused for
 * them. */
struct answer *scraper_answer(struct scraper *s, double timeout_s);
/* The scraper's compression counters (its self metrics), which server.c updates. */
struct compress_stats *scraper_compress_stats(struct scraper *s);
/* scraper_answer, with the body appended to out; returns the HTTP status (200 or 503). */
int scraper_run(struct scraper *s, double timeout_s, struct buf *out);

/* The native passthrough's answer for slurmctld source id (< SRC_NATIVE_COUNT), a new reference:
 * 200 with every family of that endpoint's answer re-escaped (native.h), or 503 with the reason it
 * is not usable. It shares the fetches, payloads and intervals of scraper_answer when id is in
 * cfg.keep_all (every fetch of it keeps every family from the first: the memory of its payload is
 * then bounded by its upstream's max_body instead of by the table); for another source the call
 * fetches an unfiltered payload of its own when the one cached is filtered. No request changes
 * how later ones fetch. */
struct answer *scraper_native(struct scraper *s, enum source_id id, double timeout_s);

/* The status page's view of the last render (status.h): the last rendered answer's result record
 * (render.h), read through a reference to that answer and to the table it was rendered with, which
 * the caller holds until scraper_status_put; nothing of it is copied, and the page never fetches. */
struct scraper_status {
	const struct render_result *res; /* the last render's record; NULL: no scrape has rendered yet */
	double age;              /* seconds since it was rendered */
	double now;              /* the monotonic clock when taken: a source's answer is now - res->src[id].at old */
	unsigned configured;     /* sources whose upstream is used and that are not switched off (bit 1 << id) */
	int reload_ok;           /* the scraper's, as of now (a reload since the last render shows at once), */
	double reload_time;      /* not the render's: unix time of the last mapping (re)load attempt */
	const struct mapping *schemas; /* the tables as of now (every schema's: mapping.h's chain) */
	/* internal: the references held */
	struct answer *answer;
	struct cache_table table, live;
};
/* Take the status page's view of the last render; scraper_status_put drops its references. */
void scraper_status(struct scraper *s, struct scraper_status *out);
void scraper_status_put(struct scraper *s, struct scraper_status *st);

#endif
