/* cache.c: see cache.h. */
#include "cache.h"
#include "controllers.h"
#include "faillog.h"
#include "fetch.h"
#include "log.h"
#include "monotime.h"
#include "schedule.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

/* A table and the scrapes and fetches that hold it. */
struct cache_mapref {
	struct mapping *m;
	int refs;
};

struct cache {
	struct cache_config cfg;
	pthread_mutex_t mu;       /* everything below */
	pthread_cond_t cv;        /* a fetch was published, or a worker ended */
	struct {
		const struct payload *p;
		unsigned long long serial; /* p's (cache_got.serial) */
		double ok_seconds;      /* how long its last usable fetch took (0: none yet) */
		struct fetch_job *job;  /* the fetch in flight, or NULL */
		int logged_ok;          /* last state logged: -1 none, 0 failed, 1 ok */
		int logged_slow;        /* last speed logged: 0 fast (or none), 1 slow */
		int last_ok;            /* its last finished fetch was usable (cache_last_usable) */
		struct cache_counts n;
		struct sched_cost cost; /* a cost-scheduled source's fetches (cfg.cost_sources) */
	} slot[SRC_COUNT];
	struct cache_mapref *map;
	unsigned gen;             /* bumped when the mapping changes */
	unsigned reloads;         /* bumped by every reload attempt */
	int reload_ok;
	double reload_time;       /* unix time of the last reload attempt */
	unsigned workers;         /* fetch threads running; cache_free waits for them */
	unsigned long long serials; /* payloads published so far */
	struct upstream_rt *up;   /* the upstreams at run time (fetch.h; NULL: replay): slurmctld's
				     controllers; cfg.upstream stays as configured */
	double last_scrape, gap;  /* monotonic start of the last scrape, and the time between the last
				     two (0: unknown): schedule.h's forecast of the next one */
};

/* The cache's monotonic clock (cfg.clock: a test's fake one). */
static double now_of(const struct cache *c)
{
	return c->cfg.clock ? c->cfg.clock() : mono_now();
}

/* Whether source id is cost-scheduled (schedule.h's sched_cost). */
static int cache_is_costed(const struct cache *c, int id)
{
	return (c->cfg.cost_sources >> id) & 1u;
}

/* Source id's cost policy: its cost class's (source.h's walks_jobs). */
static const struct sched_cost_config *cost_cfg(const struct cache *c, int id)
{
	return sources[id].walks_jobs ? &c->cfg.cost : &c->cfg.cost_light;
}

/* How long source id's answer is served: its flag, or what its fetches cost. c->mu held. */
static double interval_of(const struct cache *c, int id)
{
	return cache_is_costed(c, id) ? schedule_cost_interval(cost_cfg(c, id), &c->slot[id].cost) : c->cfg.min_interval[id];
}

/* A caller whose deadline is not below the fetch's own timeout waits this much longer, so that it
 * reports the fetch's own failure (e.g. curl's "Operation timed out") rather than its deadline. */
#define FETCH_REPORT_GRACE_S 1.0

/* The fetcher of the configured upstreams (fetch.c), or of replay_dir's files. */
static void fetch_configured(void *ctx, const struct cache_fetch *f, struct payload *got[SRC_COUNT])
{
	const struct cache *c = ctx;
	if (!c->cfg.replay_dir) {
		fetch_sources(c->up, f->mask, f->gen, f->keep, f->keep_ctx, f->hint, f->timeout, got);
		return;
	}
	for (int id = 0; id < SRC_COUNT; id++)
		if (f->mask & (1u << id))
			got[id] = payload_replay(c->cfg.replay_dir, (enum source_id)id,
						 c->cfg.upstream[sources[id].upstream].max_body, f->gen, f->keep, f->keep_ctx);
}

static struct cache_mapref *mapref_new(struct mapping *m)
{
	struct cache_mapref *r = xcalloc(1, sizeof(*r));
	r->m = m;
	r->refs = 1;
	return r;
}

static void mapref_put(struct cache_mapref *r)
{
	if (--r->refs == 0) {
		mapping_free(r->m);
		free(r);
	}
}

struct cache *cache_new(const struct cache_config *cfg, struct mapping *m)
{
	struct cache *c = xcalloc(1, sizeof(*c));
	c->cfg = *cfg;
	if (!c->cfg.fetch) {
		c->cfg.fetch = fetch_configured;
		c->cfg.fetch_ctx = c;
	}
	/* the controllers are split once, and which one answers is remembered across fetches; the
	 * runtime object borrows c->cfg.upstream, which is never changed */
	if (!cfg->replay_dir)
		c->up = upstream_rt_new(c->cfg.upstream);
	else
		c->cfg.cost_sources = 0; /* a replay is no fetch: it costs nothing */
	pthread_mutex_init(&c->mu, NULL);
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&c->cv, &ca);
	pthread_condattr_destroy(&ca);
	for (int id = 0; id < SRC_COUNT; id++)
		c->slot[id].logged_ok = -1;
	c->map = mapref_new(m);
	c->reload_ok = 1;
	c->reload_time = (double)time(NULL);
	return c;
}

void cache_free(struct cache *c)
{
	if (!c)
		return;
	/* a fetch worker borrows the cache: let the ones still running finish (each is bounded by
	 * the fetch timeout) */
	pthread_mutex_lock(&c->mu);
	while (c->workers)
		pthread_cond_wait(&c->cv, &c->mu);
	pthread_mutex_unlock(&c->mu);
	for (int id = 0; id < SRC_COUNT; id++)
		payload_unref(c->slot[id].p);
	mapref_put(c->map);
	upstream_rt_free(c->up);
	pthread_cond_destroy(&c->cv);
	pthread_mutex_destroy(&c->mu);
	free(c);
}

void cache_set_mapping(struct cache *c, struct mapping *m)
{
	pthread_mutex_lock(&c->mu);
	c->reload_time = (double)time(NULL);
	c->reload_ok = m != NULL;
	c->reloads++;
	if (m) {
		mapref_put(c->map);
		c->map = mapref_new(m);
		c->gen++; /* payloads parsed for the old table are not reused: it may read other families */
	}
	pthread_mutex_unlock(&c->mu);
}

struct controllers *cache_controllers(const struct cache *c)
{
	return c->up ? upstream_rt_controllers(c->up) : NULL;
}

void cache_table_get(struct cache *c, struct cache_table *t)
{
	pthread_mutex_lock(&c->mu);
	c->map->refs++;
	*t = (struct cache_table){ .m = c->map->m, .gen = c->gen, .reloads = c->reloads, .reload_ok = c->reload_ok,
				   .reload_time = c->reload_time, .ref = c->map };
	pthread_mutex_unlock(&c->mu);
}

void cache_table_dup(struct cache *c, const struct cache_table *t, struct cache_table *out)
{
	pthread_mutex_lock(&c->mu);
	t->ref->refs++;
	*out = *t;
	pthread_mutex_unlock(&c->mu);
}

void cache_table_put(struct cache *c, struct cache_table *t)
{
	pthread_mutex_lock(&c->mu);
	mapref_put(t->ref);
	pthread_mutex_unlock(&c->mu);
	t->ref = NULL;
	t->m = NULL;
}

/* Log what changed in the sources of one fetch: one that is up (again), or the failures, one line
 * per upstream failure (faillog.h). A state already logged is not logged again. c->mu held. */
static void log_transitions(struct cache *c, struct payload *const got[SRC_COUNT], unsigned mask)
{
	unsigned failed = 0;
	for (int id = 0; id < SRC_COUNT; id++) {
		int *last = &c->slot[id].logged_ok, first = *last < 0;
		if (!(mask & (1u << id)) || *last == got[id]->ok)
			continue;
		*last = got[id]->ok;
		if (!got[id]->ok)
			failed |= 1u << id;
		else if (first)
			log_debug("endpoint %s is up", sources[id].path);
		else
			log_info("endpoint %s is up again", sources[id].path);
	}
	faillog_report(failed, got, c->cfg.upstream, cache_controllers(c), c->cfg.replay_dir);
}

/* A fetch slower than cfg.slow_fetch is counted; the log says when a source's fetches become slow
 * and when they are fast again, not on every scrape. A replay is not a fetch. c->mu held. */
static void note_speed(struct cache *c, const struct payload *p)
{
	int slow = c->cfg.slow_fetch > 0 && !c->cfg.replay_dir && p->seconds > c->cfg.slow_fetch;
	int *last = &c->slot[p->src].logged_slow;
	c->slot[p->src].n.slow += (unsigned long)slow;
	if (*last == slow)
		return;
	*last = slow;
	if (slow)
		log_warn("endpoint %s is slow: one fetch took %.3f s (over --log.slow-fetch %g s), a load on %s "
			 "(how often each endpoint is fetched, and what it costs: docs/operations.md)",
			 sources[p->src].path, p->seconds, c->cfg.slow_fetch, upstreams[sources[p->src].upstream].name);
	else
		log_info("endpoint %s is fast again: %.3f s", sources[p->src].path, p->seconds);
}

/* A cost-scheduled source's fetch is recorded (schedule.h); the log says once when its fetches
 * start backing off (what the rows do meanwhile, when the next try is) and once when one is usable
 * again. c->mu held. */
static void note_cost(struct cache *c, const struct payload *p)
{
	struct sched_cost *st = &c->slot[p->src].cost;
	const struct sched_cost_config *cfg = cost_cfg(c, p->src);
	unsigned failures = st->failures;
	const char *path = sources[p->src].path;
	schedule_cost_record(st, p->seconds, p->ok);
	double next = schedule_cost_interval(cfg, st), timeout = schedule_cost_timeout(cfg, st);
	if (!p->ok && !failures && cfg->floor > 0 && cfg->max_backoff > cfg->floor) /* it backs off */
		log_warn("endpoint %s failed after %.1f s: backing off (the next fetch in %.0f s with a timeout of %.0f s, "
			 "then twice as long after each failure in a row, at most every %g s); the rows that read it are "
			 "served from their native forms until a fetch is usable", path, p->seconds, next, timeout,
			 fmax(cfg->max_backoff, cfg->floor));
	else if (p->ok && failures && cfg->max_backoff > cfg->floor)
		log_info("endpoint %s is usable again after %u failed fetch%s (this one took %.1f s): the next fetch in "
			 "%.0f s", path, failures, failures == 1 ? "" : "es", p->seconds, next);
}

/* One fetch of some sources for one table, run by a worker thread. Every scrape waiting for it
 * holds a reference and takes its payloads from it, whatever the slots hold by then (a scrape of
 * another table may already have replaced them). Reference count and fields under c->mu. */
struct fetch_job {
	int refs;             /* the worker's, plus one per source a scrape waits for */
	int done;
	struct cache *c;
	struct cache_mapref *map; /* the table the payloads are filtered for: held until they are finished */
	unsigned gen, mask;
	int all;              /* keep every family (the native passthrough), not only the table's */
	double hint;          /* when the scrape that started it wants its answer (fetch_sources) */
	double timeout;       /* each source's, or 0: its upstream's */
	const struct payload *got[SRC_COUNT]; /* published: shared, immutable */
	unsigned long long serial[SRC_COUNT];
};

static void job_put(struct fetch_job *j)
{
	if (--j->refs)
		return;
	for (int id = 0; id < SRC_COUNT; id++)
		payload_unref(j->got[id]);
	free(j);
}

/* Fetch (or replay) with the configured timeout, whoever waits, then publish the payloads. */
static void job_run(struct fetch_job *j)
{
	struct cache *c = j->c;
	struct payload *got[SRC_COUNT] = { 0 };
	const struct cache_fetch f = { .mask = j->mask, .gen = j->gen, .keep = j->all ? NULL : c->cfg.keep ? c->cfg.keep : mapping_has_input,
				       .keep_ctx = j->map->m, .hint = j->hint, .timeout = j->timeout };

	c->cfg.fetch(c->cfg.fetch_ctx, &f, got);
	pthread_mutex_lock(&c->mu);
	for (int id = 0; id < SRC_COUNT; id++) {
		if (!(j->mask & (1u << id)))
			continue;
		j->got[id] = got[id];
		j->serial[id] = ++c->serials;
		payload_unref(c->slot[id].p);
		c->slot[id].p = payload_ref(got[id]);
		c->slot[id].serial = j->serial[id];
		if (got[id]->ok)
			c->slot[id].ok_seconds = got[id]->seconds;
		c->slot[id].last_ok = got[id]->ok;
		c->slot[id].job = NULL;
		c->slot[id].n.fetches++;
		c->slot[id].n.failed += !got[id]->ok;
		note_speed(c, got[id]);
	}
	/* a fetch ended by the shutdown is no failure of its upstream: nothing to log, no back-off */
	if (!fetch_stopping()) {
		log_transitions(c, got, j->mask);
		for (int id = 0; id < SRC_COUNT; id++)
			if ((j->mask & (1u << id)) && cache_is_costed(c, id))
				note_cost(c, got[id]); /* after the failure's own line */
	}
	j->done = 1;
	mapref_put(j->map);
	c->workers--;
	job_put(j);
	pthread_cond_broadcast(&c->cv);
	pthread_mutex_unlock(&c->mu);
}

static void *job_thread(void *arg)
{
	job_run(arg);
	return NULL;
}

/* Start fetching mask for table mr (every family kept: all, or a source of keep_all) on a detached
 * worker; c->mu is held. wait_on[id] receives a
 * reference for every source in mask. Without a thread (none can be created) the caller runs the
 * fetch itself. */
static void start_fetch(struct cache *c, struct cache_mapref *mr, unsigned gen, unsigned mask, int all,
			double hint, double timeout, struct fetch_job *wait_on[SRC_COUNT])
{
	struct fetch_job *j = xcalloc(1, sizeof(*j));
	pthread_attr_t attr;
	pthread_t t;
	int rc;

	j->refs = 1;
	j->c = c;
	j->map = mr;
	mr->refs++;
	j->gen = gen;
	j->mask = mask;
	j->hint = hint;
	j->timeout = timeout;
	j->all = all || (c->cfg.keep_all & mask) != 0;
	for (int id = 0; id < SRC_COUNT; id++)
		if (mask & (1u << id)) {
			c->slot[id].job = wait_on[id] = j;
			j->refs++;
		}
	c->workers++;
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	rc = pthread_create(&t, &attr, job_thread, j);
	pthread_attr_destroy(&attr);
	if (rc != 0) {
		log_warn("cannot start a fetch thread (%s): fetching in the scrape's own thread", strerror(rc));
		pthread_mutex_unlock(&c->mu);
		job_run(j);
		pthread_mutex_lock(&c->mu);
	}
}

/* A cost-scheduled source's usable answer is served while its refresh runs, when that refresh is
 * expected to take longer than CACHE_REFRESH_WAIT_S (its last usable fetch did): a fetch of seconds
 * to minutes is not waited for (the answer's age says how old it is; the rows do not fall back for
 * it). fits: the slot's payload is of the scrape's table. c->mu held. Returns whether it was. */
static int serve_while_refreshing(struct cache *c, int id, int fits, unsigned *want, struct cache_got *g)
{
	const struct payload *p = c->slot[id].p;
	if (!cache_is_costed(c, id) || !fits || !p || !p->ok || c->slot[id].cost.ok_seconds <= CACHE_REFRESH_WAIT_S)
		return 0;
	g->p[id] = payload_ref(p);
	g->serial[id] = c->slot[id].serial;
	*want &= ~(1u << id);
	return 1;
}

/* One pass over the sources still wanted (c->mu held): take the result of the fetch waited for,
 * wait for a fetch in flight for gen (or, for another table, until it ends: one fetch of a source at
 * a time); for the others schedule_fetch decides (schedule.h): a fresh payload of generation gen is
 * taken, or the source is marked for a new fetch (due, or a job walk refreshed early). The sources
 * in all need a payload that kept every family: one filtered for the table counts as none.
 * Returns the sources to fetch; clears from *want the ones taken. */
static unsigned collect(struct cache *c, unsigned gen, unsigned all, unsigned *want, struct cache_got *g,
			struct fetch_job *wait_on[SRC_COUNT])
{
	struct sched_source in[SRC_COUNT];
	double now = now_of(c);
	for (int id = 0; id < SRC_COUNT; id++) {
		const struct payload *p = c->slot[id].p;
		unsigned bit = 1u << id;
		int fits = p && p->gen == gen && (p->all || !(all & bit)); /* else: as if there were none */
		in[id] = (struct sched_source){ .walks = sources[id].walks_jobs, .upstream = (int)sources[id].upstream,
						.age = fits ? now - p->at : -1,
						.interval = interval_of(c, id) };
		in[id].busy = c->slot[id].job != NULL;
		if (!(*want & bit))
			continue;
		if (wait_on[id]) {
			if (wait_on[id]->done) {
				g->p[id] = payload_ref(wait_on[id]->got[id]);
				g->serial[id] = wait_on[id]->serial[id];
				*want &= ~bit;
				job_put(wait_on[id]);
				wait_on[id] = NULL;
			}
		} else if (c->slot[id].job) {
			if (serve_while_refreshing(c, id, fits, want, g))
				continue;
			if (c->slot[id].job->gen == gen && (c->slot[id].job->all || !(all & bit))) {
				wait_on[id] = c->slot[id].job;
				wait_on[id]->refs++;
			}
		} else {
			in[id].wanted = 1;
		}
	}
	unsigned fetch = schedule_fetch(in, SRC_COUNT, c->gap);
	for (int id = 0; id < SRC_COUNT; id++) {
		if (!in[id].wanted)
			continue;
		if ((fetch & (1u << id)) && serve_while_refreshing(c, id, in[id].age >= 0, want, g)) {
			continue; /* fetched, and the old answer served meanwhile */
		} else if (fetch & (1u << id)) {
			/* the old answer is not served again: let it go now, not after the new one is in */
			payload_unref(c->slot[id].p);
			c->slot[id].p = NULL;
		} else {
			g->p[id] = payload_ref(c->slot[id].p);
			g->serial[id] = c->slot[id].serial;
			*want &= ~(1u << id);
		}
	}
	return fetch;
}

/* One set of payloads reads one controller: a payload taken from another controller than the
 * current one (the primary changed since it was fetched) is put back into *want and its slot let
 * go, so that the next pass fetches it from the current one. c->mu held. Returns whether any was. */
static int drop_other_controller(struct cache *c, unsigned *want, struct cache_got *g)
{
	struct controllers *ctl = cache_controllers(c);
	int cur = ctl ? controllers_current(ctl) : -1, dropped = 0;
	for (int id = 0; id < SRC_COUNT && cur >= 0; id++) {
		const struct payload *p = g->p[id];
		if (!p || p->controller < 0 || p->controller == cur)
			continue;
		if (c->slot[id].p == p) {
			payload_unref(p);
			c->slot[id].p = NULL;
		}
		payload_unref(p);
		g->p[id] = NULL;
		g->serial[id] = 0;
		*want |= 1u << id;
		dropped = 1;
	}
	return dropped;
}

double cache_deadline(const struct cache *c, double now, double timeout_s)
{
	double fetch_timeout = 0;
	for (int u = 0; u < UPSTREAM_COUNT; u++)
		if (!upstreams[u].optional || c->cfg.upstream[u].base_url) /* one not used is never waited for */
			fetch_timeout = fmax(fetch_timeout, c->cfg.upstream[u].timeout);
	if (c->cfg.replay_dir || timeout_s < fetch_timeout)
		return now + timeout_s;
	return now + fetch_timeout + FETCH_REPORT_GRACE_S;
}

/* Until deadline (monotonic), or until the condition is signalled. c->mu held. */
static void wait_until(struct cache *c, double deadline)
{
	struct timespec ts;
	ts.tv_sec = (time_t)deadline;
	ts.tv_nsec = (long)((deadline - floor(deadline)) * 1e9);
	pthread_cond_timedwait(&c->cv, &c->mu, &ts);
}

/* How long a scrape waits for the slurmrestd sources in mask once slurmctld's are in (cache.h's
 * CACHE_REST_WAIT_S). c->mu held. */
static double rest_wait(const struct cache *c, unsigned mask)
{
	double w = CACHE_REST_WAIT_S;
	for (int id = 0; id < SRC_COUNT; id++)
		if (mask & (1u << id))
			w = fmax(w, 2 * c->slot[id].ok_seconds);
	return w;
}

/* The payloads of the sources still wanted when the scrape stops waiting: its own, saying why
 * (not_waited: the slurmrestd sources were not waited for, slurmctld's being in after waited s). */
static void own_payloads(unsigned want, unsigned gen, unsigned not_waited, double waited, struct cache_got *g)
{
	for (int id = 0; id < SRC_COUNT; id++) {
		if (!(want & (1u << id)))
			continue;
		char why[200];
		struct payload *late = payload_new((enum source_id)id, gen, NULL, NULL);
		snprintf(why, sizeof(why), "slurmctld's answers were in and this fetch was still in flight %.1f s later "
			 "(it goes on for the next scrapes)", waited);
		if (not_waited & (1u << id))
			payload_fault(late, FAULT_NOT_WAITED, why);
		else
			payload_fault(late, FAULT_DEADLINE, NULL);
		payload_finish(late);
		g->p[id] = late;
	}
	g->own = want;
}

/* Whether cost-scheduled source id has a timeout of its own (its class's timeout follows its cost,
 * or starts above its upstream's: /jobs), and so a fetch of its own. */
static int own_timeout(const struct cache *c, int id)
{
	const struct sched_cost_config *k = cost_cfg(c, id);
	return cache_is_costed(c, id) && (k->timeout_factor > 0 || k->max_timeout > k->timeout);
}

/* Start the fetches of the sources in fetch: one per upstream, so that a slow slurmrestd does not
 * hold back slurmctld's answers, and one for each cost-scheduled source with a timeout of its own,
 * so that its long fetch does not hold back its upstream's cheap documents. c->mu held. */
static void start_fetches(struct cache *c, const struct cache_table *t, unsigned fetch, unsigned all, double deadline,
			  struct fetch_job *wait_on[SRC_COUNT])
{
	for (int id = 0; id < SRC_COUNT; id++) {
		unsigned bit = 1u << id;
		if ((fetch & bit) && own_timeout(c, id)) {
			fetch &= ~bit;
			start_fetch(c, t->ref, t->gen, bit, (bit & all) != 0, deadline,
				    schedule_cost_timeout(cost_cfg(c, id), &c->slot[id].cost), wait_on);
		}
	}
	for (int u = 0; u < UPSTREAM_COUNT; u++) {
		unsigned mask = fetch & source_of_upstream((enum upstream_id)u);
		if (mask)
			start_fetch(c, t->ref, t->gen, mask, (mask & all) != 0, deadline, 0, wait_on);
	}
}

void cache_get(struct cache *c, const struct cache_table *t, unsigned need, unsigned all, double deadline, int scrape,
	       struct cache_got *g)
{
	unsigned want = need & ((1u << SRC_COUNT) - 1), ctl = source_of_upstream(UPSTREAM_SLURMCTLD), not_waited = 0;
	struct fetch_job *wait_on[SRC_COUNT] = { 0 };
	double ctl_in = 0, wait = 0; /* when every slurmctld source was in, and how long slurmrestd gets then */

	memset(g, 0, sizeof(*g));
	pthread_mutex_lock(&c->mu);
	if (scrape) {
		double now = now_of(c);
		c->gap = c->last_scrape > 0 ? now - c->last_scrape : 0;
		c->last_scrape = now;
	}
	for (;;) {
		unsigned fetch = collect(c, t->gen, all, &want, g, wait_on);
		start_fetches(c, t, fetch, all, deadline, wait_on);
		if (fetch || drop_other_controller(c, &want, g))
			continue;
		/* slurmctld's answers are in, slurmrestd's not: wait for them a bounded time only */
		int ctl_ready = !c->cfg.replay_dir && !c->cfg.wait_rest && (need & ctl) && !(want & ctl) && (want & ~ctl);
		if (ctl_ready && !ctl_in) {
			ctl_in = mono_now();
			wait = rest_wait(c, want & ~ctl);
		}
		ctl_in = ctl_ready ? ctl_in : 0;
		double limit = ctl_ready ? fmin(deadline, ctl_in + wait) : deadline, now = mono_now();
		if (!want || now >= limit) {
			not_waited = ctl_ready && now < deadline ? want & ~ctl : 0;
			break;
		}
		wait_until(c, limit);
	}
	for (int id = 0; id < SRC_COUNT; id++) {
		g->n[id] = c->slot[id].n;
		if (cache_is_costed(c, id))
			g->cost[id] = (struct cache_cost){ .on = 1, .st = c->slot[id].cost, .interval = interval_of(c, id),
							   .timeout = schedule_cost_timeout(cost_cfg(c, id), &c->slot[id].cost) };
		if (wait_on[id])
			job_put(wait_on[id]);
	}
	pthread_mutex_unlock(&c->mu);
	/* the fetch goes on and is published for the others; this scrape answers without it */
	own_payloads(want, t->gen, not_waited, wait, g);
}

unsigned cache_last_usable(struct cache *c)
{
	unsigned mask = 0;
	pthread_mutex_lock(&c->mu);
	for (int id = 0; id < SRC_COUNT; id++)
		mask |= c->slot[id].last_ok ? 1u << id : 0;
	pthread_mutex_unlock(&c->mu);
	return mask;
}

void cache_got_release(struct cache_got *g)
{
	for (int id = 0; id < SRC_COUNT; id++) {
		payload_unref(g->p[id]);
		g->p[id] = NULL;
	}
}
