/* cache.h: the payload cache, the one module with threads, locks and shared references of its
 * own. Per source it keeps the last finished payload (its slot), reused for the source's
 * min_interval seconds, nothing older ever handed out (but a cost-scheduled source's usable payload,
 * handed out while its refresh runs: cache_config.cost_sources); the fetch in flight that concurrent scrapes
 * wait on, run by a detached worker thread of its own with its upstream's timeout, on behalf of
 * every scrape that waits for it (one fetch per upstream, so a slow slurmrestd never holds back
 * slurmctld's payloads); each scrape's deadline, which bounds only its own wait, never the
 * shared fetch; the mapping generations (a payload is parsed for one table, fixed when it is
 * created, and only handed out under that table); which sources a scrape fetches (schedule.h);
 * and no cached payload of another slurmctld controller than the current one (controllers.h), so
 * that one set of payloads reads one controller.
 *
 * Payloads come from a fetcher (cache_fetch_fn): by default fetch.c over the configured upstreams,
 * or the files of replay_dir; tests give a fake one (tests/test_cache.c), without HTTP.
 *
 * Ownership: cache_new copies cfg (it borrows the strings it points to), splits slurmctld's
 * base_url into its controllers once (unless cfg gives them, or replays), which it owns with
 * slurmrestd's API version (upstream_rt, fetch.h), and takes
 * ownership of the mapping, as cache_set_mapping does; cache_free waits for the fetches still
 * running. cache_table_get returns a reference to the current table (cache_table_put); cache_get
 * returns new payload references (cache_got_release). */
#ifndef SHIM_CACHE_H
#define SHIM_CACHE_H

#include "mapping.h"
#include "payload.h"
#include "schedule.h"

/* One fetch a worker asks the fetcher for. */
struct cache_fetch {
	unsigned mask;            /* the sources to fetch (bit 1 << id), all of one upstream */
	unsigned gen;             /* the table generation the payloads are parsed for (payload_new) */
	expo_keep_fn keep;        /* the families to store (NULL: every family), with keep_ctx */
	void *keep_ctx;
	double hint;              /* when the scrape that asked wants its answer (monotonic; fetch.h's
				     fetch_sources asks a second controller when the first is slow) */
	double timeout;           /* seconds each source may take; 0: its upstream's timeout (a
				     cost-scheduled source's is its own: schedule.h) */
};

/* A fetcher puts a new finished payload into got[id] for every id in f->mask. It runs on a fetch
 * worker, outside the cache's lock, and may take as long as its upstream's timeout. */
typedef void (*cache_fetch_fn)(void *ctx, const struct cache_fetch *f, struct payload *got[SRC_COUNT]);

struct cache_config {
	struct upstream_config upstream[UPSTREAM_COUNT];
	const char *replay_dir;   /* the default fetcher reads files instead of HTTP */
	double min_interval[SRC_COUNT]; /* seconds a source's payload is handed out */
	double slow_fetch;        /* seconds: a longer fetch is counted and logged (on the way from fast
				     to slow and back); 0: never */
	expo_keep_fn keep;        /* the families a payload keeps (with the table as its context); NULL:
				     the table's (mapping_has_input). The scraper adds the status page's. */
	unsigned keep_all;        /* sources whose payloads keep every family from the first fetch on
				     (bit 1 << id: the native passthrough's), not only the table's; fixed
				     for the life of the cache */
	cache_fetch_fn fetch;     /* NULL: fetch.c over upstream, or replay_dir */
	void *fetch_ctx;
	unsigned cost_sources;    /* cost-scheduled sources (bit 1 << id; schedule.h's sched_cost): their
				     interval, back-off and timeout follow what their fetches take
				     (min_interval[id] is ignored: cost.floor is theirs), each fetched on
				     a worker of its own; while it runs, scrapes get the last usable
				     payload instead of waiting (CACHE_REFRESH_WAIT_S); 0 in a replay */
	struct sched_cost_config cost; /* their policy */
	int wait_rest;            /* a scrape waits for slurmrestd until its deadline, not CACHE_REST_WAIT_S
				     after slurmctld's answers: one-shot modes, with no next scrape to serve
				     a late answer */
	double (*clock)(void);    /* monotonic seconds; NULL: the system's (tests give a fake one) */
};

/* A source's fetches since start. */
struct cache_counts {
	unsigned long fetches;
	unsigned long slow;       /* longer than slow_fetch */
	unsigned long failed;     /* whose answer was not usable (payload.ok 0) */
};

struct cache *cache_new(const struct cache_config *cfg, struct mapping *m);
void cache_free(struct cache *c); /* NULL: nothing */
/* A new table (every payload parsed for the old one is fetched again for it), or NULL: a reload
 * that failed (the table is kept; only the reload count, time and outcome change). */
void cache_set_mapping(struct cache *c, struct mapping *m);
/* slurmctld's controllers as the cache fetches them (fetch.h's upstream_rt), or NULL: a replay. */
struct controllers *cache_controllers(const struct cache *c);

/* One scrape's table: a reference, so that a reload may swap it while the scrape runs. */
struct cache_table {
	const struct mapping *m;
	unsigned gen;             /* the payloads' generation */
	unsigned reloads;         /* reload attempts so far (a failed one changes the self metrics) */
	int reload_ok;            /* the last one succeeded */
	double reload_time;       /* unix time of the last one */
	struct cache_mapref *ref; /* internal */
};
void cache_table_get(struct cache *c, struct cache_table *t);
void cache_table_put(struct cache *c, struct cache_table *t);
/* Another reference to the table t holds, into *out (cache_table_put it too). */
void cache_table_dup(struct cache *c, const struct cache_table *t, struct cache_table *out);

/* A cost-scheduled source as of one scrape (cache_config.cost_sources). */
struct cache_cost {
	int on;                   /* the source is cost-scheduled; every field below is 0 otherwise */
	struct sched_cost st;     /* what its fetches took: the cost, the failures in a row */
	double interval;          /* seconds from the end of its last fetch to the next (schedule.h) */
	double timeout;           /* seconds the next fetch may take */
};

/* What one scrape got. */
struct cache_got {
	const struct payload *p[SRC_COUNT]; /* a reference for every source asked for, NULL for others */
	unsigned long long serial[SRC_COUNT]; /* which fetch each came from: the same serial, the same
					       payload (never reused, unlike an address); 0: own */
	struct cache_counts n[SRC_COUNT];
	struct cache_cost cost[SRC_COUNT];
	unsigned own;             /* the sources whose payload is this scrape's own: the deadline
				     passed while its fetch was in flight, or it was not waited for
				     (CACHE_REST_WAIT_S); the fetch goes on for the others */
};

/* The deadline (monotonic) of a scrape that starts at `now` and may take timeout_s: its own
 * timeout; one whose timeout is not below the fetch's own waits for the fetch to report its own
 * failure. A replay has no timeout of its own. */
double cache_deadline(const struct cache *c, double now, double timeout_s);
/* How long a scrape waits for slurmrestd once every slurmctld source it needs is in (whatever
 * slurmrestd's own timeout): this, or twice the document's last usable fetch if that is longer,
 * never past the scrape's deadline. A document still in flight then gets a payload of the scrape's
 * own saying it was not waited for (FAULT_NOT_WAITED: its rows fall back to their native forms); its
 * fetch goes on for the next scrapes. Not in a replay, nor with cache_config.wait_rest. */
#define CACHE_REST_WAIT_S 2.0
/* A cost-scheduled source whose last usable fetch took longer than this is not waited for while it
 * is refreshed: the last usable payload is handed out meanwhile (a quicker one is waited for, as
 * any slurmrestd document is). */
#define CACHE_REFRESH_WAIT_S 1.0

/* A payload parsed for table t for every source in need (keeping every family for the sources in
 * all; a source in all but not in keep_all is then fetched for this call, and its slot holds the
 * unfiltered payload until the next fetch: nothing else changes): the slot's while it is fresh,
 * the fetch in flight for t, or a new fetch (schedule.h), waited for until deadline. scrape: the call is a scrape (its start feeds the schedule's forecast of
 * the time between scrapes); the native passthrough's are not. */
void cache_get(struct cache *c, const struct cache_table *t, unsigned need, unsigned all, double deadline, int scrape,
	       struct cache_got *g);
void cache_got_release(struct cache_got *g);
/* The sources whose last finished fetch was usable (bit 1 << id; 0 before any): what a scrape
 * expects to be up again (scrape.c fetches a row's native form only when its preferred form's
 * sources are not all among them, or turn out down). */
unsigned cache_last_usable(struct cache *c);

#endif
