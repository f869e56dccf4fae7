/* scrape.c: see scrape.h. */
#include "scrape.h"
#include "log.h"
#include "writer.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct mapref {
	struct mapping *m;
	int refs;
};

void scraper_init(struct scraper *s, const struct scraper_config *cfg, struct mapping *m)
{
	memset(s, 0, sizeof(*s));
	s->cfg = *cfg;
	pthread_mutex_init(&s->mu, NULL);
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&s->cv, &ca);
	pthread_condattr_destroy(&ca);
	for (int ep = 0; ep < EP_COUNT; ep++)
		s->slot[ep].logged_ok = -1;
	s->map = xcalloc(1, sizeof(*s->map));
	s->map->m = m;
	s->map->refs = 1;
	s->reload_ok = 1;
	s->reload_time = (double)time(NULL);
}

static void mapref_put(struct mapref *r)
{
	if (--r->refs == 0) {
		mapping_free(r->m);
		free(r);
	}
}

void scraper_destroy(struct scraper *s)
{
	for (int ep = 0; ep < EP_COUNT; ep++)
		payload_unref(s->slot[ep].p);
	mapref_put(s->map);
	pthread_cond_destroy(&s->cv);
	pthread_mutex_destroy(&s->mu);
}

void scrape_set_mapping(struct scraper *s, struct mapping *m)
{
	pthread_mutex_lock(&s->mu);
	s->reload_time = (double)time(NULL);
	s->reload_ok = m != NULL;
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

static void log_transition(struct scraper *s, const struct payload *p)
{
	int *last = &s->slot[p->ep].logged_ok;
	int first = *last < 0;
	if (*last == p->ok)
		return;
	*last = p->ok;
	if (p->ok && first)
		log_debug("endpoint %s is up", endpoints[p->ep].path);
	else if (p->ok)
		log_info("endpoint %s is up again", endpoints[p->ep].path);
	else {
		char safe[600];
		log_warn("endpoint %s failed: %s", endpoints[p->ep].path, log_escape(safe, sizeof(safe), p->reason, strlen(p->reason)));
	}
}

/* Get a payload for every endpoint in `need`: reuse a fresh one, wait for one in flight, or fetch.
 * New payloads are parsed for mapping m (only the families it reads are stored). */
static void get_payloads(struct scraper *s, const struct mapping *m, unsigned gen, unsigned need, double timeout_s,
			 struct payload *mine[EP_COUNT], unsigned long fetches[EP_COUNT])
{
	unsigned fetch = 0, wait = 0;
	double now = mono_now(), deadline = now + timeout_s;
	struct payload *got[EP_COUNT] = { 0 };

	pthread_mutex_lock(&s->mu);
	for (int ep = 0; ep < EP_COUNT; ep++) {
		mine[ep] = NULL;
		if (!(need & (1u << ep)))
			continue;
		if (s->slot[ep].inflight)
			wait |= 1u << ep;
		else if (s->slot[ep].p && s->slot[ep].p->gen == gen && now - s->slot[ep].p->at < s->cfg.min_interval)
			mine[ep] = payload_ref(s->slot[ep].p);
		else {
			/* the old answer is not served again: let it go now, not after the new one is in */
			payload_unref(s->slot[ep].p);
			s->slot[ep].p = NULL;
			s->slot[ep].inflight = 1;
			fetch |= 1u << ep;
		}
	}
	pthread_mutex_unlock(&s->mu);

	if (fetch) {
		/* parsed as they arrive, keeping only the families m reads */
		if (s->cfg.replay_dir) {
			for (int ep = 0; ep < EP_COUNT; ep++)
				if (fetch & (1u << ep))
					got[ep] = payload_replay(s->cfg.replay_dir, (enum endpoint)ep, s->cfg.fetch.max_body,
								 mapping_reads, (void *)m);
		} else {
			fetch_endpoints(&s->cfg.fetch, fetch, timeout_s, mapping_reads, (void *)m, got);
		}
		for (int ep = 0; ep < EP_COUNT; ep++)
			if (got[ep])
				got[ep]->gen = gen;
	}

	pthread_mutex_lock(&s->mu);
	for (int ep = 0; ep < EP_COUNT; ep++) {
		if (!(fetch & (1u << ep)))
			continue;
		payload_unref(s->slot[ep].p);
		s->slot[ep].p = got[ep];
		s->slot[ep].inflight = 0;
		s->slot[ep].fetches++;
		mine[ep] = payload_ref(got[ep]);
		log_transition(s, got[ep]);
	}
	if (fetch)
		pthread_cond_broadcast(&s->cv);
	while (wait) {
		for (int ep = 0; ep < EP_COUNT; ep++)
			if ((wait & (1u << ep)) && !s->slot[ep].inflight && s->slot[ep].p) {
				mine[ep] = payload_ref(s->slot[ep].p);
				wait &= ~(1u << ep);
			}
		if (!wait)
			break;
		struct timespec ts;
		ts.tv_sec = (time_t)deadline;
		ts.tv_nsec = (long)((deadline - floor(deadline)) * 1e9);
		if (pthread_cond_timedwait(&s->cv, &s->mu, &ts) == ETIMEDOUT) {
			for (int ep = 0; ep < EP_COUNT; ep++)
				if (wait & (1u << ep)) {
					mine[ep] = payload_new((enum endpoint)ep, NULL, NULL);
					payload_finish(mine[ep], "scrape deadline passed while waiting for the fetch in flight");
				}
			break;
		}
	}
	for (int ep = 0; ep < EP_COUNT; ep++)
		fetches[ep] = s->slot[ep].fetches;
	pthread_mutex_unlock(&s->mu);
}

/* Log why a family is left out (or what was done to it, left_out 0), once per family and reason
 * for the life of the process (a persistent problem would otherwise log on every scrape). */
static void log_family_once(const char *family, const char *why, int left_out)
{
	static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
	static char seen[256][160];
	static size_t nseen;
	char key[160];
	snprintf(key, sizeof(key), "%s|%s", family, why);
	pthread_mutex_lock(&mu);
	for (size_t i = 0; i < nseen; i++)
		if (!strcmp(seen[i], key)) {
			pthread_mutex_unlock(&mu);
			return;
		}
	if (nseen < 256)
		snprintf(seen[nseen++], sizeof(seen[0]), "%s", key);
	pthread_mutex_unlock(&mu);
	log_info("family %s %s: %s", family, left_out ? "left out" : "served", why);
}

static void log_left_out_once(const char *family, const char *why)
{
	log_family_once(family, why, 1);
}

static void self_sample(struct buf *b, const char *name, const char *lname, const char *lvalue, double v)
{
	struct label l = { lname, lvalue, lname ? (uint32_t)strlen(lname) : 0, lvalue ? (uint32_t)strlen(lvalue) : 0 };
	write_sample(b, name, &l, lname ? 1 : 0, v);
}

static const char *const status_reason[] = {
	[ROW_INPUT_DOWN] = "input_down", [ROW_ERROR] = "error", [ROW_NO_INPUT] = "no_input",
	[ROW_INPUT_MISSING] = "input_missing",
};

static void write_self(const unsigned long fetches[EP_COUNT], struct buf *b, struct payload *p[EP_COUNT], const int up[EP_COUNT], unsigned need,
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
		{ "slurm_exporter_shim_payload_age_seconds", "Age of the answer this scrape used (reused within --slurmctld.min-interval).", "gauge" },
		{ "slurm_exporter_shim_upstream_fetches_total", "Fetches of the endpoint since start.", "counter" },
	};
	for (size_t f = 0; f < sizeof(fam) / sizeof(fam[0]); f++) {
		write_header(b, fam[f].name, fam[f].help, fam[f].type);
		for (int ep = 0; ep < EP_COUNT; ep++) {
			if (!(need & (1u << ep)) || !p[ep])
				continue;
			double v = 0;
			switch (f) {
			case 0: v = up[ep]; break;
			case 1: v = p[ep]->seconds; break;
			case 2: v = (double)p[ep]->len; break;
			case 3: v = (double)p[ep]->http_status; break;
			case 4: v = (double)p[ep]->parse_errors; break;
			case 5: v = p[ep]->at ? now - p[ep]->at : 0; break;
			case 6: v = (double)fetches[ep]; break;
			}
			self_sample(b, fam[f].name, "endpoint", endpoints[ep].name, v);
		}
	}
	size_t counts[7] = { 0 };
	for (size_t i = 0; i < m->nrows; i++)
		counts[res[i].status]++;
	write_header(b, "slurm_exporter_shim_mapping_rows", "Rows of the loaded mapping by what they gave this scrape.", "gauge");
	static const char *const st[] = { "served", "disabled", "unavailable", "input_down", "no_input", "error",
					  "input_missing" };
	for (int i = 0; i < 7; i++)
		self_sample(b, "slurm_exporter_shim_mapping_rows", "status", st[i], (double)counts[i]);
	write_header(b, "slurm_exporter_shim_family_left_out",
		    "Legacy families this scrape could not serve, by reason (input_down, input_missing, error, no_input, output_full).", "gauge");
	for (size_t i = 0; i < m->nrows; i++) {
		const char *why = overflowed[i] ? overflowed[i] :
				  res[i].status >= ROW_INPUT_DOWN ? status_reason[res[i].status] : NULL;
		if (!why)
			continue;
		struct label l[2] = { { "family", m->rows[i].name, 6, (uint32_t)strlen(m->rows[i].name) },
				      { "reason", why, 6, (uint32_t)strlen(why) } };
		write_sample(b, "slurm_exporter_shim_family_left_out", l, 2, 1);
	}
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
	write_header(b, "slurm_exporter_shim_scrape_duration_seconds", "How long this scrape took.", "gauge");
	self_sample(b, "slurm_exporter_shim_scrape_duration_seconds", NULL, NULL, mono_now() - started);
}

int scrape_run(struct scraper *s, double timeout_s, struct buf *out)
{
	double started = mono_now();
	struct payload *p[EP_COUNT];
	const struct expo *ex[EP_COUNT];
	int up[EP_COUNT];
	struct arena a;
	int status = 200, any_ok = 0, ua_untrusted = 0;

	pthread_mutex_lock(&s->mu);
	struct mapref *mr = s->map;
	unsigned gen = s->gen;
	size_t last_output = s->last_output;
	mr->refs++;
	int reload_ok = s->reload_ok;
	double reload_time = s->reload_time;
	pthread_mutex_unlock(&s->mu);
	const struct mapping *m = mr->m;

	unsigned need = mapping_endpoints(m, s->cfg.flags);
	unsigned long fetches[EP_COUNT];
	get_payloads(s, mr->m, gen, need, timeout_s, p, fetches);
	/* An empty jobs-users-accts answer means "no jobs in memory" only if slurmctld serves metrics
	 * at all: when /metrics/jobs failed too (MetricsType unset answers every endpoint with an empty
	 * 200), the empty answer proves nothing and its families are left out. */
	if (p[EP_UA] && p[EP_UA]->ok && p[EP_UA]->len == 0 && p[EP_JOBS] && !p[EP_JOBS]->ok)
		ua_untrusted = 1;
	for (int ep = 0; ep < EP_COUNT; ep++) {
		up[ep] = p[ep] && p[ep]->ok && !(ep == EP_UA && ua_untrusted);
		ex[ep] = up[ep] ? &p[ep]->expo : NULL;
		any_ok |= up[ep];
	}
	if (need && !any_ok) {
		/* every needed endpoint failed: like the old exporter dying, Prometheus' up goes to 0 */
		status = 503;
		buf_puts(out, "slurm-exporter-shim: no slurmctld metrics endpoint answered usably:\n");
		for (int ep = 0; ep < EP_COUNT; ep++)
			if (p[ep]) {
				char safe[600];
				const char *why = p[ep]->ok ? "empty answer, and /metrics/jobs failed: cannot tell \"no jobs\" from \"no metrics\"" : p[ep]->reason;
				if (p[ep]->ok)
					buf_printf(out, "%s: ", endpoints[ep].path);
				buf_printf(out, "%s\n", log_escape(safe, sizeof(safe), why, strlen(why)));
			}
		goto out;
	}

	/* rows are evaluated and written one at a time, each row's series in an arena reset after it is
	 * written, so memory holds one row's series at a time (plus shared subexpressions) */
	struct arena row_a;
	struct mapping_scrape ms;
	arena_init(&a);
	arena_init(&row_a);
	out->max = s->cfg.max_output ? out->len + s->cfg.max_output : 0;
	struct row_result *res = xcalloc(m->nrows + 1, sizeof(*res));
	const char **overflowed = xcalloc(m->nrows + 1, sizeof(*overflowed));
	mapping_scrape_begin(m, ex, up, &a, &ms);
	buf_reserve(out, last_output + last_output / 8); /* about last scrape's size, in one go */
	for (size_t i = 0; i < m->nrows; i++) {
		const struct row *r = &m->rows[i];
		mapping_eval_row(m, i, s->cfg.flags, &ms, &row_a, &res[i]);
		if (res[i].status == ROW_OK) {
			/* a family with no series (no jobs) keeps its HELP/TYPE, so every legacy name
			 * the table serves is visible whatever the cluster state */
			if (write_family(out, r->name, r->help, r->type, &res[i].v) < 0)
				overflowed[i] = "output_full";
			else if (res[i].repaired)
				log_family_once(r->name, "label values with invalid UTF-8 from slurmctld repaired (U+FFFD)", 0);
		} else if (res[i].status == ROW_ERROR || res[i].status == ROW_NO_INPUT || res[i].status == ROW_INPUT_MISSING) {
			log_left_out_once(r->name, res[i].err); /* names the missing input family */
		}
		res[i].v.e = NULL; /* gone with the row's arena */
		res[i].v.n = 0;
		arena_rewind(&row_a); /* the next row reuses the same (cached) bytes */
	}
	arena_reset(&row_a);
	/* self metrics are small and always fit: no cap for them */
	out->max = 0;
	write_self(fetches, out, p, up, need, m, res, overflowed, started, reload_ok, reload_time);
	pthread_mutex_lock(&s->mu);
	s->last_output = out->len;
	pthread_mutex_unlock(&s->mu);
	free(overflowed);
	free(res);
	arena_reset(&a);
out:
	for (int ep = 0; ep < EP_COUNT; ep++)
		payload_unref(p[ep]);
	pthread_mutex_lock(&s->mu);
	mapref_put(mr);
	pthread_mutex_unlock(&s->mu);
	return status;
}
