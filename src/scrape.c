/* scrape.c: see scrape.h. */
#include "scrape.h"
#include "controllers.h"
#include "faillog.h"
#include "log.h"
#include "monotime.h"
#include "schedule.h"
#include "native.h"
#include "writer.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* A source's fetches since start, for the self metrics. */
struct fetch_counts {
	unsigned long fetches;
	unsigned long slow;       /* longer than cfg.slow_fetch */
	unsigned long repaired;   /* label values and HELP texts the native passthrough served repaired */
};

struct mapref {
	struct mapping *m;
	int refs;
};

#define LOGGED_MAX 256   /* family|reason pairs logged once (log_family_once); later ones log every time */

struct scraper {
	const struct scraper_config cfg; /* as given: never changed (runtime state is in up) */
	pthread_mutex_t mu;
	pthread_cond_t cv;
	pthread_mutex_t render_mu;  /* one render at a time, so scrapes of the same inputs share one */
	struct {
		const struct payload *p;
		struct fetch_job *job;  /* the fetch in flight, or NULL */
		int logged_ok;          /* last state logged: -1 none, 0 failed, 1 ok */
		int logged_slow;        /* last speed logged: 0 fast (or none), 1 slow */
		struct fetch_counts n;
	} slot[SRC_COUNT];
	struct mapref *map;
	unsigned gen;             /* bumped when the mapping changes */
	unsigned reloads;         /* bumped by every reload attempt (a failed one changes self metrics) */
	unsigned workers;         /* fetch threads running; scraper_free waits for them */
	struct answer *answer;    /* the last shareable answer, reused while its inputs are current */
	size_t last_output;       /* bytes of the last scrape's output (to size the next one) */
	int reload_ok;
	double reload_time;       /* unix time of the last reload attempt */
	char logged[LOGGED_MAX][160]; /* log_family_once's, under render_mu */
	size_t nlogged;
	struct scrape_status status; /* the status page's snapshot of the last render, under mu */
	struct upstream_rt *up;   /* the upstreams at run time (fetch.h; NULL: replay): slurmctld's
				     controllers; cfg.upstream stays as configured */
	double last_scrape, gap;  /* monotonic start of the last scrape, and the time between the last
				     two (0: unknown): schedule.h's forecast of the next one, under mu */
	/* The native passthrough (scrape_native), under mu: once it has been asked for, every fetch of
	 * slurmctld keeps every family (the mapping reads them from the same payloads); its last
	 * answer per endpoint is shared by the requests that get the same payload. */
	int native_all;
	struct answer *native[SRC_NATIVE_COUNT];
	struct compress_stats gz;  /* its answers' gzip forms and bytes sent (server.c counts) */
};

/* A caller whose deadline is not below the fetch's own timeout waits this much longer, so that it
 * reports the fetch's own failure (e.g. curl's "Operation timed out") rather than its deadline. */
#define FETCH_REPORT_GRACE_S 1.0

struct scraper *scraper_new(const struct scraper_config *cfg, struct mapping *m)
{
	struct scraper *s = xcalloc(1, sizeof(*s));
	memcpy((void *)&s->cfg, cfg, sizeof(*cfg)); /* the const member's one write, into fresh memory */
	/* the controllers are split once, and which one answers is remembered across fetches */
	if (!cfg->replay_dir)
		s->up = upstream_rt_new(s->cfg.upstream);
	pthread_mutex_init(&s->mu, NULL);
	pthread_mutex_init(&s->render_mu, NULL);
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&s->cv, &ca);
	pthread_condattr_destroy(&ca);
	for (int id = 0; id < SRC_COUNT; id++)
		s->slot[id].logged_ok = -1;
	s->map = xcalloc(1, sizeof(*s->map));
	s->map->m = m;
	s->map->refs = 1;
	s->reload_ok = 1;
	s->reload_time = (double)time(NULL);
	return s;
}

static void mapref_put(struct mapref *r)
{
	if (--r->refs == 0) {
		mapping_free(r->m);
		free(r);
	}
}

static struct answer *answer_ref(struct answer *a)
{
	atomic_fetch_add(&a->refs, 1);
	return a;
}

void answer_unref(struct answer *a)
{
	if (!a || atomic_fetch_sub(&a->refs, 1) != 1)
		return;
	for (int id = 0; id < SRC_COUNT; id++)
		payload_unref(a->in[id]);
	compressed_free(&a->gz);
	free(a->body);
	free(a);
}

void scraper_free(struct scraper *s)
{
	if (!s)
		return;
	/* a fetch worker borrows the scraper: let the ones still running finish (each is bounded by
	 * the fetch timeout) */
	pthread_mutex_lock(&s->mu);
	while (s->workers)
		pthread_cond_wait(&s->cv, &s->mu);
	pthread_mutex_unlock(&s->mu);
	for (int id = 0; id < SRC_COUNT; id++)
		payload_unref(s->slot[id].p);
	for (int id = 0; id < SRC_NATIVE_COUNT; id++)
		answer_unref(s->native[id]);
	answer_unref(s->answer);
	mapref_put(s->map);
	upstream_rt_free(s->up);
	pthread_cond_destroy(&s->cv);
	pthread_mutex_destroy(&s->render_mu);
	pthread_mutex_destroy(&s->mu);
	free(s);
}

void scrape_set_mapping(struct scraper *s, struct mapping *m)
{
	pthread_mutex_lock(&s->mu);
	s->reload_time = (double)time(NULL);
	s->reload_ok = m != NULL;
	s->reloads++; /* the self metrics change: a rendered answer is not reused */
	if (m) {
		struct mapref *r = xcalloc(1, sizeof(*r));
		r->m = m;
		r->refs = 1;
		mapref_put(s->map);
		s->map = r;
		s->gen++; /* answers parsed for the old table are not reused: it may read other families */
	}
	pthread_mutex_unlock(&s->mu);
}

/* Log what changed in the sources of one fetch: one that is up (again), or the failures, one line
 * per upstream failure (faillog.h). A state already logged is not logged again. s->mu held. */
static void log_transitions(struct scraper *s, struct payload *const got[SRC_COUNT], unsigned mask)
{
	unsigned failed = 0;
	for (int id = 0; id < SRC_COUNT; id++) {
		int *last = &s->slot[id].logged_ok, first = *last < 0;
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
	faillog_report(failed, got, s->cfg.upstream, upstream_rt_controllers(s->up), s->cfg.replay_dir);
}

/* A fetch slower than cfg.slow_fetch is counted; the log says when a source's fetches become slow
 * and when they are fast again, not on every scrape. A replay is not a fetch. s->mu held. */
static void note_speed(struct scraper *s, const struct payload *p)
{
	int slow = s->cfg.slow_fetch > 0 && !s->cfg.replay_dir && p->seconds > s->cfg.slow_fetch;
	int *last = &s->slot[p->src].logged_slow;
	s->slot[p->src].n.slow += (unsigned long)slow;
	if (*last == slow)
		return;
	*last = slow;
	if (slow)
		log_warn("endpoint %s is slow: one fetch took %.3f s (over --log.slow-fetch %g s), a load on %s "
			 "(how often each endpoint is fetched, and what it costs: docs/operations.md)",
			 sources[p->src].path, p->seconds, s->cfg.slow_fetch, upstreams[sources[p->src].upstream].name);
	else
		log_info("endpoint %s is fast again: %.3f s", sources[p->src].path, p->seconds);
}

/* One fetch of some sources for one table, run by a worker thread. Every scrape waiting for it
 * holds a reference and takes its payloads from it, whatever the slots hold by then (a scrape of
 * another table may already have replaced them). Reference count and fields under s->mu. */
struct fetch_job {
	int refs;             /* the worker's, plus one per source a scrape waits for */
	int done;
	struct scraper *s;
	struct mapref *map;   /* the table the payloads are filtered for: held until they are finished */
	unsigned gen, mask;
	int all;              /* keep every family (the native passthrough), not only the table's */
	double hint;          /* when the scrape that started it wants its answer (fetch_sources) */
	const struct payload *got[SRC_COUNT]; /* published: shared, immutable */
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
	struct scraper *s = j->s;
	struct payload *got[SRC_COUNT] = { 0 };
	void *m = j->map->m;
	expo_keep_fn keep = j->all ? NULL : mapping_has_input;

	if (s->cfg.replay_dir) {
		for (int id = 0; id < SRC_COUNT; id++)
			if (j->mask & (1u << id))
				got[id] = payload_replay(s->cfg.replay_dir, (enum source_id)id,
							 s->cfg.upstream[sources[id].upstream].max_body, j->gen, keep, m);
	} else {
		fetch_sources(s->up, j->mask, j->gen, keep, m, j->hint, got);
	}
	pthread_mutex_lock(&s->mu);
	for (int id = 0; id < SRC_COUNT; id++) {
		if (!(j->mask & (1u << id)))
			continue;
		j->got[id] = got[id];
		payload_unref(s->slot[id].p);
		s->slot[id].p = payload_ref(got[id]);
		s->slot[id].job = NULL;
		s->slot[id].n.fetches++;
		note_speed(s, got[id]);
	}
	log_transitions(s, got, j->mask);
	j->done = 1;
	mapref_put(j->map);
	s->workers--;
	job_put(j);
	pthread_cond_broadcast(&s->cv);
	pthread_mutex_unlock(&s->mu);
}

static void *job_thread(void *arg)
{
	job_run(arg);
	return NULL;
}

/* Start fetching mask for table mr on a detached worker; s->mu is held. wait_on[id] receives a
 * reference for every source in mask. Without a thread (none can be created) the caller runs the
 * fetch itself. */
static void start_fetch(struct scraper *s, struct mapref *mr, unsigned gen, unsigned mask, double hint,
			struct fetch_job *wait_on[SRC_COUNT])
{
	struct fetch_job *j = xcalloc(1, sizeof(*j));
	pthread_attr_t attr;
	pthread_t t;
	int rc;

	j->refs = 1;
	j->s = s;
	j->map = mr;
	mr->refs++;
	j->gen = gen;
	j->mask = mask;
	j->hint = hint;
	j->all = s->native_all && (mask & ((1u << SRC_NATIVE_COUNT) - 1));
	for (int id = 0; id < SRC_COUNT; id++)
		if (mask & (1u << id)) {
			s->slot[id].job = wait_on[id] = j;
			j->refs++;
		}
	s->workers++;
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	rc = pthread_create(&t, &attr, job_thread, j);
	pthread_attr_destroy(&attr);
	if (rc != 0) {
		log_warn("cannot start a fetch thread (%s): fetching in the scrape's own thread", strerror(rc));
		pthread_mutex_unlock(&s->mu);
		job_run(j);
		pthread_mutex_lock(&s->mu);
	}
}

/* One pass over the sources still wanted (s->mu held): take the result of the fetch waited for,
 * wait for a fetch in flight for gen (or, for another table, until it ends: one fetch of a source at
 * a time); for the others schedule_fetch decides (schedule.h): a fresh payload of generation gen is
 * taken, or the source is marked for a new fetch (due, or a job walk refreshed early). The sources
 * in all need a payload that kept every family: one filtered for the table counts as none.
 * Returns the sources to fetch; clears from *want the ones taken. */
static unsigned collect(struct scraper *s, unsigned gen, unsigned all, unsigned *want,
			const struct payload *mine[SRC_COUNT], struct fetch_job *wait_on[SRC_COUNT])
{
	struct sched_source in[SRC_COUNT];
	double now = mono_now();
	for (int id = 0; id < SRC_COUNT; id++) {
		const struct payload *p = s->slot[id].p;
		unsigned bit = 1u << id;
		int fits = p && p->gen == gen && (p->all || !(all & bit)); /* else: as if there were none */
		in[id] = (struct sched_source){ .walks = sources[id].walks_jobs, .upstream = (int)sources[id].upstream,
						.age = fits ? now - p->at : -1,
						.interval = s->cfg.min_interval[id] };
		in[id].busy = s->slot[id].job != NULL;
		if (!(*want & bit))
			continue;
		if (wait_on[id]) {
			if (wait_on[id]->done) {
				mine[id] = payload_ref(wait_on[id]->got[id]);
				*want &= ~bit;
				job_put(wait_on[id]);
				wait_on[id] = NULL;
			}
		} else if (s->slot[id].job) {
			if (s->slot[id].job->gen == gen && (s->slot[id].job->all || !(all & bit))) {
				wait_on[id] = s->slot[id].job;
				wait_on[id]->refs++;
			}
		} else {
			in[id].wanted = 1;
		}
	}
	unsigned fetch = schedule_fetch(in, SRC_COUNT, s->gap);
	for (int id = 0; id < SRC_COUNT; id++) {
		if (!in[id].wanted)
			continue;
		if (fetch & (1u << id)) {
			/* the old answer is not served again: let it go now, not after the new one is in */
			payload_unref(s->slot[id].p);
			s->slot[id].p = NULL;
		} else {
			mine[id] = payload_ref(s->slot[id].p);
			*want &= ~(1u << id);
		}
	}
	return fetch;
}

/* One rendered answer reads one controller: an answer taken from another controller than the
 * current one (the primary changed since it was fetched) is put back into *want and its slot let
 * go, so that the next pass fetches it from the current one. s->mu held. Returns whether any was. */
static int drop_other_controller(struct scraper *s, unsigned *want, const struct payload *mine[SRC_COUNT])
{
	struct controllers *ctl = upstream_rt_controllers(s->up);
	int cur = ctl ? controllers_current(ctl) : -1, dropped = 0;
	for (int id = 0; id < SRC_COUNT && cur >= 0; id++) {
		const struct payload *p = mine[id];
		if (!p || p->controller < 0 || p->controller == cur)
			continue;
		if (s->slot[id].p == p) {
			payload_unref(p);
			s->slot[id].p = NULL;
		}
		payload_unref(p);
		mine[id] = NULL;
		*want |= 1u << id;
		dropped = 1;
	}
	return dropped;
}

/* Get a payload parsed for generation gen for every source in need (keeping every family for the
 * sources in all): a fresh one, the one in flight for gen, or a new fetch (see collect). Waits
 * until deadline (monotonic); a source still missing then gets a payload of this scrape's own
 * saying so. Returns the mask of those. */
static unsigned get_payloads(struct scraper *s, struct mapref *mr, unsigned gen, unsigned need, unsigned all,
			     double deadline, const struct payload *mine[SRC_COUNT], struct fetch_counts counts[SRC_COUNT])
{
	unsigned want = need & ((1u << SRC_COUNT) - 1);
	struct fetch_job *wait_on[SRC_COUNT] = { 0 };

	pthread_mutex_lock(&s->mu);
	for (int id = 0; id < SRC_COUNT; id++)
		mine[id] = NULL;
	for (;;) {
		unsigned fetch = collect(s, gen, all, &want, mine, wait_on);
		/* one fetch per upstream: a slow slurmrestd does not hold back slurmctld's answers */
		for (int u = 0; u < UPSTREAM_COUNT; u++) {
			unsigned mask = fetch & source_of_upstream((enum upstream_id)u);
			if (mask)
				start_fetch(s, mr, gen, mask, deadline, wait_on);
		}
		if (fetch || drop_other_controller(s, &want, mine))
			continue;
		if (!want || mono_now() >= deadline)
			break;
		struct timespec ts;
		ts.tv_sec = (time_t)deadline;
		ts.tv_nsec = (long)((deadline - floor(deadline)) * 1e9);
		pthread_cond_timedwait(&s->cv, &s->mu, &ts);
	}
	for (int id = 0; id < SRC_COUNT; id++) {
		counts[id] = s->slot[id].n;
		if (wait_on[id])
			job_put(wait_on[id]);
	}
	pthread_mutex_unlock(&s->mu);
	/* the fetch goes on and is published for the others; this scrape answers without it */
	for (int id = 0; id < SRC_COUNT; id++)
		if (want & (1u << id)) {
			struct payload *late = payload_new((enum source_id)id, gen, NULL, NULL);
			payload_fault(late, FAULT_DEADLINE, NULL);
			payload_finish(late);
			mine[id] = late;
		}
	return want;
}

/* Log why a family is left out (or what was done to it, left_out 0), once per family and reason
 * for the life of the scraper (a persistent problem would otherwise log on every scrape). Called
 * by render() only, under s->render_mu. */
static void log_family_once(struct scraper *s, const char *family, const char *why, int left_out)
{
	char key[160];
	snprintf(key, sizeof(key), "%s|%s", family, why);
	for (size_t i = 0; i < s->nlogged; i++)
		if (!strcmp(s->logged[i], key))
			return;
	if (s->nlogged < LOGGED_MAX)
		snprintf(s->logged[s->nlogged++], sizeof(s->logged[0]), "%s", key);
	log_info("family %s %s: %s", family, left_out ? "left out" : "served", why);
}

static void self_sample(struct buf *b, const char *name, const char *lname, const char *lvalue, double v)
{
	struct label l = { lname, lvalue, lname ? (uint32_t)strlen(lname) : 0, lvalue ? (uint32_t)strlen(lvalue) : 0 };
	write_sample(b, name, &l, lname ? 1 : 0, v);
}

/* Why row result res was left out ("output_full" when it did not fit), or NULL: served, disabled or
 * unavailable. */
static const char *left_out_reason(const struct row_result *res, const char *overflowed)
{
	return overflowed ? overflowed : row_status_is_left_out(res->status) ? row_status_name(res->status) : NULL;
}

/* Which form and fidelity each served row was evaluated with this scrape: its own expression
 * (slurmctld) or a preferred form (slurmrestd while it is up). */
static void write_row_fidelity(struct buf *b, const struct mapping *m, const struct row_result *res,
			       const char *const *overflowed)
{
	write_header(b, "slurm_exporter_shim_row_fidelity",
		     "Legacy families this scrape served, by the fidelity and upstream of the form they were computed with.", "gauge");
	for (size_t i = 0; i < m->nrows; i++) {
		if (res[i].status != ROW_OK || overflowed[i])
			continue;
		const struct row *r = &m->rows[i];
		const char *up = upstreams[row_upstream(r, res[i].form)].name;
		const char *f = fidelity_name(res[i].fidelity);
		struct label l[3] = { { "family", r->name, 6, (uint32_t)strlen(r->name) },
				      { "fidelity", f, 8, (uint32_t)strlen(f) },
				      { "upstream", up, 8, (uint32_t)strlen(up) } };
		write_sample(b, "slurm_exporter_shim_row_fidelity", l, 3, 1);
	}
}

static void write_self(const struct fetch_counts fc[SRC_COUNT], struct buf *b, const struct payload *const p[SRC_COUNT],
		       const int up[SRC_COUNT], unsigned need,
		       const struct mapping *m, const struct row_result *res, const char *const *overflowed,
		       double started, int reload_ok, double reload_time)
{
	double now = mono_now();
	static const struct {
		const char *name, *help, *type;
	} fam[] = {
		{ "slurm_exporter_shim_up", "Whether the endpoint's last answer was usable (1) or not (0).", "gauge" },
		{ "slurm_exporter_shim_fetch_duration_seconds", "How long the endpoint's last fetch took.", "gauge" },
		{ "slurm_exporter_shim_response_bytes", "Size of the endpoint's last answer body.", "gauge" },
		{ "slurm_exporter_shim_http_status", "HTTP status of the endpoint's last answer (0: no HTTP answer).", "gauge" },
		{ "slurm_exporter_shim_parse_errors", "Malformed lines in the endpoint's last answer.", "gauge" },
		{ "slurm_exporter_shim_payload_age_seconds", "Age of the endpoint's answer when this exposition was rendered (reused within its --*.min-interval).", "gauge" },
		{ "slurm_exporter_shim_upstream_fetches_total", "Fetches of the endpoint since start.", "counter" },
		{ "slurm_exporter_shim_slow_fetches_total", "Fetches of the endpoint since start that took longer than --log.slow-fetch.", "counter" },
		{ "slurm_exporter_shim_native_repaired_total", "Label values and HELP texts with invalid UTF-8 that /native/metrics/<endpoint> answers since start served repaired (U+FFFD).", "counter" },
	};
	for (size_t f = 0; f < sizeof(fam) / sizeof(fam[0]); f++) {
		write_header(b, fam[f].name, fam[f].help, fam[f].type);
		for (int id = 0; id < SRC_COUNT; id++) {
			if (!(need & (1u << id)) || !p[id] || (f == 8 && id >= SRC_NATIVE_COUNT))
				continue;
			double v = 0;
			switch (f) {
			case 0: v = up[id]; break;
			case 1: v = p[id]->seconds; break;
			case 2: v = (double)p[id]->len; break;
			case 3: v = (double)p[id]->http_status; break;
			case 4: v = (double)p[id]->parse_errors; break;
			case 5: v = p[id]->at ? now - p[id]->at : 0; break;
			case 6: v = (double)fc[id].fetches; break;
			case 7: v = (double)fc[id].slow; break;
			case 8: v = (double)fc[id].repaired; break;
			}
			self_sample(b, fam[f].name, "endpoint", sources[id].name, v);
		}
	}
	size_t counts[ROW_STATUS_COUNT] = { 0 };
	for (size_t i = 0; i < m->nrows; i++)
		counts[res[i].status]++;
	write_header(b, "slurm_exporter_shim_mapping_rows", "Rows of the loaded mapping by what they gave this scrape.", "gauge");
	for (int i = 0; i < ROW_STATUS_COUNT; i++)
		self_sample(b, "slurm_exporter_shim_mapping_rows", "status", row_status_name((enum row_status)i), (double)counts[i]);
	write_header(b, "slurm_exporter_shim_family_left_out",
		    "Legacy families this scrape could not serve, by reason (input_down, input_missing, error, no_input, output_full).", "gauge");
	for (size_t i = 0; i < m->nrows; i++) {
		const char *why = left_out_reason(&res[i], overflowed[i]);
		if (!why)
			continue;
		struct label l[2] = { { "family", m->rows[i].name, 6, (uint32_t)strlen(m->rows[i].name) },
				      { "reason", why, 6, (uint32_t)strlen(why) } };
		write_sample(b, "slurm_exporter_shim_family_left_out", l, 2, 1);
	}
	write_row_fidelity(b, m, res, overflowed);
	size_t repaired = 0;
	for (size_t i = 0; i < m->nrows; i++)
		repaired += res[i].status == ROW_OK && !overflowed[i] ? res[i].repaired : 0;
	write_header(b, "slurm_exporter_shim_invalid_utf8_repaired",
		     "Label values from slurmctld with invalid UTF-8 that this scrape served repaired (U+FFFD).", "gauge");
	self_sample(b, "slurm_exporter_shim_invalid_utf8_repaired", NULL, NULL, (double)repaired);
	write_header(b, "slurm_exporter_shim_mapping_reload_success", "Whether the last mapping (re)load succeeded.", "gauge");
	self_sample(b, "slurm_exporter_shim_mapping_reload_success", NULL, NULL, reload_ok);
	write_header(b, "slurm_exporter_shim_mapping_reload_timestamp_seconds", "Unix time of the last mapping (re)load attempt.", "gauge");
	self_sample(b, "slurm_exporter_shim_mapping_reload_timestamp_seconds", NULL, NULL, reload_time);
	write_header(b, "slurm_exporter_shim_build_info", "Build information.", "gauge");
	self_sample(b, "slurm_exporter_shim_build_info", "version", SHIM_VERSION, 1);
	write_header(b, "slurm_exporter_shim_scrape_duration_seconds", "How long the scrape that rendered this exposition took (scrapes of the same inputs share it).", "gauge");
	self_sample(b, "slurm_exporter_shim_scrape_duration_seconds", NULL, NULL, mono_now() - started);
}

/* What a scrape knows besides its payloads: the table and the values of its self metrics. */
struct scrape_ctx {
	const struct mapping *m;
	unsigned need;
	struct fetch_counts counts[SRC_COUNT];
	double started, reload_time;
	int reload_ok;
	size_t last_output;
};

/* The 503 body: why no source the mapping needs is usable. */
static void write_unusable(struct buf *out, const struct payload *const p[SRC_COUNT])
{
	buf_puts(out, "slurm-exporter-shim: no slurmctld metrics endpoint answered usably:\n");
	for (int id = 0; id < SRC_COUNT; id++)
		if (p[id]) {
			char why[400], safe[600];
			source_down_reason(p, (enum source_id)id, why, sizeof(why));
			buf_printf(out, "%s\n", log_escape(safe, sizeof(safe), why, strlen(why)));
		}
}

/* The rows as they are evaluated (mapping_run): each written to out, its status kept (without its
 * series, which go with the row) for the self metrics. */
struct rows_out {
	struct scraper *s;
	const struct mapping *m;
	struct buf *out;
	struct row_result *res;     /* per row */
	const char **overflowed;    /* per row: "output_full" when it did not fit */
};

static void write_row(void *ctx, size_t i, const struct row_result *res)
{
	struct rows_out *w = ctx;
	const struct row *r = &w->m->rows[i];
	if (res->status == ROW_OK) {
		/* a family with no series (no jobs) keeps its HELP/TYPE, so every legacy name the
		 * table serves is visible whatever the cluster state */
		if (write_family(w->out, r->name, r->help, r->type, &res->v) < 0)
			w->overflowed[i] = "output_full";
		else if (res->repaired)
			log_family_once(w->s, r->name, "label values with invalid UTF-8 from slurmctld repaired (U+FFFD)", 0);
	} else if (res->status == ROW_ERROR || res->status == ROW_NO_INPUT || res->status == ROW_INPUT_MISSING) {
		log_family_once(w->s, r->name, res->err, 1); /* names the missing input family */
	}
	w->res[i] = *res;
	w->res[i].v = (struct vec){ NULL, 0 }; /* gone with the row */
}

/* The status page's snapshot of this render (s->mu held): res and overflowed NULL when no row
 * was evaluated (503). */
static void status_rows(struct scrape_status *st, const struct mapping *m, const struct row_result *res,
			const char *const *overflowed)
{
	for (size_t i = 0; res && i < m->nrows; i++) {
		const struct row *r = &m->rows[i];
		const char *why = left_out_reason(&res[i], overflowed[i]);
		st->rows[res[i].status]++;
		if (res[i].status == ROW_OK && !overflowed[i])
			st->fidelity[res[i].fidelity][row_upstream(r, res[i].form)]++;
		st->output_full += overflowed[i] != NULL;
		if (!why || st->nleft++ >= SCRAPE_STATUS_LEFT_MAX)
			continue;
		snprintf(st->left[st->nleft - 1].family, sizeof(st->left[0].family), "%s", r->name);
		snprintf(st->left[st->nleft - 1].why, sizeof(st->left[0].why), "%s%s%s", why,
			 res[i].err[0] && !overflowed[i] ? ": " : "", overflowed[i] ? "" : res[i].err);
	}
}

static void status_record(struct scraper *s, const struct scrape_ctx *c, const struct payload *const p[SRC_COUNT],
			  const int up[SRC_COUNT], const struct row_result *res, const char *const *overflowed,
			  int http_status)
{
	unsigned configured = source_configured(s->cfg.upstream) & ~s->cfg.sources_off;
	pthread_mutex_lock(&s->mu);
	struct scrape_status *st = &s->status;
	memset(st, 0, sizeof(*st));
	st->rendered = 1;
	st->mono_at = mono_now();
	st->http_status = http_status;
	st->reload_ok = c->reload_ok;
	st->reload_time = c->reload_time;
	st->slow_fetch = s->cfg.slow_fetch;
	for (int id = 0; id < SRC_COUNT; id++) {
		struct scrape_status_source *o = &st->src[id];
		o->configured = (configured >> id) & 1;
		if (!p[id] || !(c->need & (1u << id)))
			continue;
		o->fetched = 1;
		o->up = up[id];
		o->seconds = p[id]->seconds;
		o->len = p[id]->len;
		o->http_status = p[id]->http_status;
		o->parse_errors = p[id]->parse_errors;
		o->slow = s->cfg.slow_fetch > 0 && !s->cfg.replay_dir && p[id]->seconds > s->cfg.slow_fetch;
		o->slow_total = s->slot[id].n.slow;
		st->src_at[id] = p[id]->at;
		if (!up[id])
			source_down_reason(p, (enum source_id)id, o->reason, sizeof(o->reason));
	}
	status_rows(st, c->m, res, overflowed);
	if (upstream_rt_controllers(s->up))
		st->ncontrollers = controllers_view(upstream_rt_controllers(s->up), st->controller);
	pthread_mutex_unlock(&s->mu);
}

void scrape_status(struct scraper *s, struct scrape_status *out)
{
	pthread_mutex_lock(&s->mu);
	*out = s->status;
	pthread_mutex_unlock(&s->mu);
	if (!out->rendered)
		return;
	double now = mono_now();
	out->age = now - out->mono_at;
	for (int id = 0; id < SRC_COUNT; id++)
		out->src[id].age = out->src_at[id] > 0 ? now - out->src_at[id] : -1;
}

/* Evaluate the table over the payloads into out (or the 503 reasons); returns the HTTP status. */
static int render(struct scraper *s, const struct scrape_ctx *c, const struct payload *const p[SRC_COUNT], struct buf *out)
{
	const struct mapping *m = c->m;
	const struct expo *ex[SRC_COUNT];
	int up[SRC_COUNT];
	int any_ok = source_usable(p, up); /* a source's answer, and the rules across sources */

	for (int id = 0; id < SRC_COUNT; id++)
		ex[id] = up[id] ? &p[id]->expo : NULL;
	if (c->need && !any_ok) {
		/* every needed source failed: like the old exporter dying, Prometheus' up goes to 0 */
		write_unusable(out, p);
		status_record(s, c, p, up, NULL, NULL, 503);
		return 503;
	}

	/* rows are evaluated and written one at a time (mapping_run), so memory holds one row's
	 * series at a time (plus shared subexpressions) */
	struct rows_out w = { s, m, out, xcalloc(m->nrows + 1, sizeof(*w.res)), xcalloc(m->nrows + 1, sizeof(*w.overflowed)) };
	out->max = s->cfg.max_output ? out->len + s->cfg.max_output : 0;
	buf_reserve(out, c->last_output + c->last_output / 8); /* about last scrape's size, in one go */
	mapping_run(m, s->cfg.flags, ex, up, write_row, &w);
	/* self metrics are small and always fit: no cap for them */
	out->max = 0;
	write_self(c->counts, out, p, up, c->need, m, w.res, w.overflowed, c->started, c->reload_ok, c->reload_time);
	if (upstream_rt_controllers(s->up))
		controllers_write_metrics(upstream_rt_controllers(s->up), out);
	if (s->cfg.compression)
		compress_write_self(out, &s->gz);
	status_record(s, c, p, up, w.res, w.overflowed, 200);
	pthread_mutex_lock(&s->mu);
	s->last_output = out->len;
	pthread_mutex_unlock(&s->mu);
	free(w.overflowed);
	free(w.res);
	return 200;
}

/* How long a scrape waits for its payloads: its own timeout; one whose timeout is not below the
 * fetch's own waits for the fetch to report its own failure. A replay has no timeout of its own. */
static double wait_limit(const struct scraper *s, double timeout_s)
{
	double fetch_timeout = 0;
	for (int u = 0; u < UPSTREAM_COUNT; u++)
		if (!upstreams[u].optional || s->cfg.upstream[u].base_url) /* one not used is never waited for */
			fetch_timeout = fmax(fetch_timeout, s->cfg.upstream[u].timeout);
	if (s->cfg.replay_dir || timeout_s < fetch_timeout)
		return timeout_s;
	return fetch_timeout + FETCH_REPORT_GRACE_S;
}

/* The last answer, when it was rendered from exactly these payloads under the same reload count
 * (a payload is only current within min-interval, so neither is the answer); otherwise it is let
 * go now, as a new one is about to be rendered (responses still sending it keep their reference). */
static struct answer *shared_answer(struct scraper *s, unsigned reloads, const struct payload *const p[SRC_COUNT])
{
	struct answer *a;
	pthread_mutex_lock(&s->mu);
	a = s->answer;
	if (a && a->reloads == reloads && memcmp(a->in, p, sizeof(a->in)) == 0) {
		answer_ref(a);
	} else {
		answer_unref(s->answer);
		s->answer = a = NULL;
	}
	pthread_mutex_unlock(&s->mu);
	return a;
}

struct answer *scrape_answer(struct scraper *s, double timeout_s)
{
	struct scrape_ctx c = { .started = mono_now() };
	const struct payload *p[SRC_COUNT];
	struct answer *a;
	unsigned gen, reloads, own;

	pthread_mutex_lock(&s->mu);
	struct mapref *mr = s->map;
	mr->refs++;
	gen = s->gen;
	reloads = s->reloads;
	c.m = mr->m;
	c.last_output = s->last_output;
	c.reload_ok = s->reload_ok;
	c.reload_time = s->reload_time;
	s->gap = s->last_scrape > 0 ? c.started - s->last_scrape : 0;
	s->last_scrape = c.started;
	pthread_mutex_unlock(&s->mu);

	/* a row's preferred form counts only when its sources can be fetched: a table preferring
	 * slurmrestd makes a site without --slurmrestd.url fetch nothing more */
	unsigned usable = source_configured(s->cfg.upstream) & ~s->cfg.sources_off;
	c.need = source_with_vouchers(mapping_sources(c.m, s->cfg.flags, usable)) & usable;
	own = get_payloads(s, mr, gen, c.need, 0, c.started + wait_limit(s, timeout_s), p, c.counts);
	/* one render at a time: the scrapes that got the same payloads meanwhile share its body */
	pthread_mutex_lock(&s->render_mu);
	a = own ? NULL : shared_answer(s, reloads, p);
	if (!a) {
		struct buf out;
		buf_init(&out, 0);
		a = xcalloc(1, sizeof(*a));
		atomic_init(&a->refs, 1);
		compressed_init(&a->gz);
		a->status = render(s, &c, p, &out);
		a->body = buf_steal(&out, &a->len);
		a->reloads = reloads;
		memcpy(a->in, p, sizeof(a->in)); /* the answer takes this scrape's payload references */
		memset(p, 0, sizeof(p));
		if (!own) { /* an answer with payloads of this scrape's own (deadline passed) is its own */
			pthread_mutex_lock(&s->mu);
			answer_unref(s->answer);
			s->answer = answer_ref(a);
			pthread_mutex_unlock(&s->mu);
		}
	}
	pthread_mutex_unlock(&s->render_mu);
	for (int id = 0; id < SRC_COUNT; id++)
		payload_unref(p[id]);
	pthread_mutex_lock(&s->mu);
	mapref_put(mr);
	pthread_mutex_unlock(&s->mu);
	return a;
}

/* The passthrough's answer from payload p of source id (render it to a buffer first: never a half
 * answer); *repaired gets the values it repaired. */
static struct answer *native_answer(const struct payload *p, enum source_id id, size_t *repaired)
{
	struct answer *a = xcalloc(1, sizeof(*a));
	struct buf out;
	buf_init(&out, 0);
	atomic_init(&a->refs, 1);
	compressed_init(&a->gz);
	*repaired = 0;
	if (p->ok) {
		a->status = 200;
		*repaired = native_render(&p->expo, &out);
	} else {
		char safe[600];
		a->status = 503;
		buf_printf(&out, "slurm-exporter-shim: slurmctld's %s answered nothing usable:\n%s\n", sources[id].path,
			   log_escape(safe, sizeof(safe), p->reason, strlen(p->reason)));
	}
	a->body = buf_steal(&out, &a->len);
	a->in[id] = p; /* takes the caller's reference */
	return a;
}

struct answer *scrape_native(struct scraper *s, enum source_id id, double timeout_s)
{
	const struct payload *p[SRC_COUNT];
	struct fetch_counts counts[SRC_COUNT];
	unsigned bit = 1u << id, gen, own;
	struct answer *a = NULL;
	size_t repaired = 0;

	pthread_mutex_lock(&s->mu);
	struct mapref *mr = s->map;
	mr->refs++;
	gen = s->gen;
	s->native_all = 1; /* every fetch of slurmctld from now on keeps every family */
	pthread_mutex_unlock(&s->mu);
	own = get_payloads(s, mr, gen, bit, bit, mono_now() + wait_limit(s, timeout_s), p, counts);
	pthread_mutex_lock(&s->mu);
	if (!own && s->native[id] && s->native[id]->in[id] == p[id])
		a = answer_ref(s->native[id]);
	pthread_mutex_unlock(&s->mu);
	if (!a) {
		a = native_answer(p[id], id, &repaired); /* outside the lock: it can be megabytes */
		p[id] = NULL;                            /* the answer took the reference */
	}
	pthread_mutex_lock(&s->mu);
	if (!p[id]) {
		s->slot[id].n.repaired += repaired;
		if (!own) { /* an answer of this request's own (deadline passed) is not shared */
			answer_unref(s->native[id]);
			s->native[id] = answer_ref(a);
		}
	}
	mapref_put(mr);
	pthread_mutex_unlock(&s->mu);
	payload_unref(p[id]);
	return a;
}

struct compress_stats *scrape_compress_stats(struct scraper *s)
{
	return &s->gz;
}

int scrape_run(struct scraper *s, double timeout_s, struct buf *out)
{
	struct answer *a = scrape_answer(s, timeout_s);
	int status = a->status;
	buf_append(out, a->body, a->len);
	answer_unref(a);
	return status;
}
