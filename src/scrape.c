/* scrape.c: see scrape.h. */
#include "scrape.h"
#include "cache.h"
#include "controllers.h"
#include "log.h"
#include "monotime.h"
#include "native.h"
#include "render.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LOGGED_MAX 256   /* family|reason pairs logged once (log_family_once); later ones log every time */

/* How long a scrape that had connections closed to make room waits for them to let their answers go
 * (they do within milliseconds: libmicrohttpd's thread sees its socket shut down at once). */
#define EVICT_WAIT_S 0.5
#define EVICT_WARN_EVERY_S 60.0 /* at most one warning a minute about the connections closed */

struct scraper {
	struct scraper_config cfg;
	struct cache *cache;      /* the payloads: fetches, intervals, deadlines, the table (cache.h) */
	pthread_mutex_t mu;       /* the answers, the last one and the counters below */
	pthread_mutex_t render_mu;  /* one render at a time, so scrapes of the same inputs share one */
	struct answer *answer;    /* the last shareable answer, reused while its inputs are current */
	size_t last_output;       /* bytes of the last scrape's output (to size the next one) */
	unsigned long repaired[SRC_NATIVE_COUNT]; /* values the native passthrough served repaired */
	char logged[LOGGED_MAX][160]; /* log_family_once's, under render_mu */
	size_t nlogged;
	uint64_t catalog_logged;  /* catalog_diff_hash of the last catalog comparison logged, under render_mu */
	int catalog_seen, catalog_differed; /* one was compared; it found families missing or unknown */
	struct answer *last;      /* the last rendered answer, which the status page reads, under mu */
	struct cache_table last_t; /* the table it was rendered with (its rows are read with it) */
	/* The native passthrough's last answer per endpoint (scraper_native), shared by the requests
	 * that get the same payload. */
	struct answer *native[SRC_NATIVE_COUNT];
	struct answer_held *held; /* the bytes of answers only connections hold (cfg.max_held) */
	unsigned long evicted;    /* connections closed for cfg.max_held since the last warning */
	double evict_warned;      /* when that warning was logged (monotonic; 0: never) */
	struct compress_stats gz; /* its answers' gzip forms and bytes sent (server.c counts) */
	size_t schema;            /* which schema of the table's chain it serves (mapping_schema) */
	int shares_cache;         /* the cache is another scraper's (scraper_new_schema) */
	uint64_t load_logged;     /* loadview_unknown_hash of the nodes of unknown load last logged, under render_mu */
};

/* The families a payload keeps: every schema's of the table (mapping_set_has_input), and the status
 * page's node view (nodeview.h). */
static int table_or_view_has_input(const char *name, size_t len, void *m)
{
	return mapping_set_has_input(name, len, m) || nodeview_has_input(name, len);
}

struct scraper *scraper_new(const struct scraper_config *cfg, struct mapping *m)
{
	struct scraper *s = xcalloc(1, sizeof(*s));
	struct cache_config cc = { .replay_dir = cfg->replay_dir, .slow_fetch = cfg->slow_fetch, .keep_all = cfg->keep_all,
				   .keep = table_or_view_has_input };
	s->cfg = *cfg;
	memcpy(cc.upstream, cfg->upstream, sizeof(cc.upstream));
	memcpy(cc.min_interval, cfg->min_interval, sizeof(cc.min_interval));
	cc.cost_sources = cfg->cost_sources;
	cc.cost = cfg->cost;
	cc.wait_rest = cfg->wait_rest;
	s->cache = cache_new(&cc, m);
	s->held = answer_held_new();
	pthread_mutex_init(&s->mu, NULL);
	pthread_mutex_init(&s->render_mu, NULL);
	return s;
}

struct scraper *scraper_new_schema(struct scraper *first, size_t schema)
{
	struct scraper *s = xcalloc(1, sizeof(*s));
	s->cfg = first->cfg;
	s->cfg.keep_all = 0; /* the passthrough is the first's */
	s->cache = first->cache;
	s->shares_cache = 1;
	s->schema = schema;
	s->held = answer_held_new();
	pthread_mutex_init(&s->mu, NULL);
	pthread_mutex_init(&s->render_mu, NULL);
	return s;
}

void scraper_free(struct scraper *s)
{
	if (!s)
		return;
	if (s->last) {
		cache_table_put(s->cache, &s->last_t);
		answer_unref(s->last);
	}
	if (!s->shares_cache)
		cache_free(s->cache); /* after the fetches still running, which borrow it */
	for (int id = 0; id < SRC_NATIVE_COUNT; id++)
		answer_unref(s->native[id]);
	answer_unref(s->answer);
	answer_held_put(s->held);
	pthread_mutex_destroy(&s->render_mu);
	pthread_mutex_destroy(&s->mu);
	free(s);
}

void scraper_set_mapping(struct scraper *s, struct mapping *m)
{
	cache_set_mapping(s->cache, m); /* the reload count changes: a rendered answer is not reused */
}

/* slurmctld's controllers, as the cache fetches them (NULL: a replay). */
static struct controllers *controllers_of(const struct scraper *s)
{
	return cache_controllers(s->cache);
}

/* Log why a family is left out (or what was done to it, left_out 0), once per family and reason
 * for the life of the scraper (a persistent problem would otherwise log on every scrape). Called
 * after a render only, under s->render_mu. */
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

/* What the rows of a render did that the log says (once per family and reason). */
static void log_rows(struct scraper *s, const struct mapping *m, const struct render_result *res)
{
	for (size_t i = 0; i < res->nrows; i++) {
		const struct render_row *o = &res->rows[i];
		if (o->status == ROW_OK && !o->output_full && o->repaired)
			log_family_once(s, m->rows[i].name, "label values with invalid UTF-8 from slurmctld repaired (U+FFFD)", 0);
		if (render_row_has_wrap(o)) {
			char why[160];
			render_wrap_why(&m->rows[i], o, 0, why, sizeof(why));
			log_family_once(s, m->rows[i].name, why, 0);
		}
		else if (o->status == ROW_ERROR || o->status == ROW_NO_INPUT || o->status == ROW_INPUT_MISSING)
			log_family_once(s, m->rows[i].name, o->err, 1); /* names the missing input family */
	}
}

/* What the comparison with the table's native catalog found (catalog.h), logged when it changes:
 * a warning naming the families when there are some, a line when they are gone or slurmctld's
 * answers match another validated release; nothing on the first scrape that matches. Called after
 * a render only, under s->render_mu. */
static void log_catalog(struct scraper *s, const struct catalog_diff *d)
{
	uint64_t h = catalog_diff_hash(d);
	if (!d->compared || (s->catalog_seen && h == s->catalog_logged))
		return;
	int first = !s->catalog_seen, had = s->catalog_differed;
	s->catalog_logged = h;
	s->catalog_seen = 1;
	s->catalog_differed = catalog_diff_has_any(d);
	if (s->catalog_differed) {
		char line[1400];
		catalog_describe(d, line, sizeof(line));
		log_warn("native catalog: %s (the closest validated release: Slurm %s; see docs/operations.md, "
			 "\"Upgrading Slurm\")", line, d->release);
	} else if (!first) {
		log_info("native catalog: slurmctld's answers name the families of the table's validated catalog of Slurm %s%s",
			 d->release, had ? " again" : "");
	}
}

/* What a scrape knows besides its payloads: the table and the values of its self metrics. */
struct scrape_ctx {
	const struct mapping *m, *chain; /* the schema rendered, and the chain it belongs to */
	struct render_counts counts[SRC_COUNT];
	double started, reload_time;
	int reload_ok;
	size_t last_output;
};

/* The status page's view (scrape.h): the last render's answer and the table it was rendered with,
 * each a new reference, and the scraper's reload state as of now. */
void scraper_status(struct scraper *s, struct scraper_status *out)
{
	memset(out, 0, sizeof(*out));
	pthread_mutex_lock(&s->mu);
	if (s->last) {
		out->answer = answer_ref(s->last);
		cache_table_dup(s->cache, &s->last_t, &out->table);
	}
	pthread_mutex_unlock(&s->mu);
	cache_table_get(s->cache, &out->live); /* live: a reload since the last render shows at once */
	out->reload_ok = out->live.reload_ok;
	out->reload_time = out->live.reload_time;
	out->schemas = out->live.m;
	out->configured = source_configured(s->cfg.upstream) & ~s->cfg.sources_off;
	out->now = mono_now();
	if (!out->answer)
		return;
	out->res = out->answer->result;
	out->age = out->now - out->res->at;
}

void scraper_status_put(struct scraper *s, struct scraper_status *st)
{
	if (st->answer)
		cache_table_put(s->cache, &st->table);
	if (st->live.ref)
		cache_table_put(s->cache, &st->live);
	st->schemas = NULL;
	answer_unref(st->answer);
	st->answer = NULL;
	st->res = NULL;
}

/* The answer just rendered (with the table t it was rendered with) becomes the one the status page
 * reads; the previous one is let go. */
static void keep_last(struct scraper *s, struct answer *a, const struct cache_table *t)
{
	struct cache_table mine, old_t;
	cache_table_dup(s->cache, t, &mine);
	answer_ref(a);
	pthread_mutex_lock(&s->mu);
	struct answer *old = s->last;
	old_t = s->last_t;
	s->last = a;
	s->last_t = mine;
	pthread_mutex_unlock(&s->mu);
	if (old) {
		cache_table_put(s->cache, &old_t);
		answer_unref(old);
	}
}

/* The nodes of unknown load (loadview.h), logged once per change (the daemon only). Under render_mu. */
static void log_load(struct scraper *s, const struct nodeview *v)
{
	if (s->shares_cache)
		return; /* the first schema's scraper logs them */
	uint64_t unknown = v ? loadview_unknown_hash(&v->load) : 0;
	if (unknown != s->load_logged && unknown && s->cfg.log_load)
		loadview_log_unknown(&v->load);
	s->load_logged = unknown;
}

/* Render the table over the payloads into a new answer (render.h), then log from its record. */
static struct answer *render(struct scraper *s, const struct scrape_ctx *c, const struct payload *const p[SRC_COUNT])
{
	struct render_result *res = xcalloc(1, sizeof(*res));
	struct buf out;
	struct controllers *ctl = controllers_of(s);
	struct controller_view *view = ctl ? xcalloc(CONTROLLERS_MAX, sizeof(*view)) : NULL;
	buf_init(&out, 0);
	const struct render_in in = {
		.m = c->m, .flags = s->cfg.flags, .p = p, .counts = c->counts, .max_output = s->cfg.max_output,
		.slow_fetch = s->cfg.replay_dir ? 0 : s->cfg.slow_fetch, .size_hint = c->last_output,
		.reload_ok = c->reload_ok, .reload_time = c->reload_time, .clock = mono_now, .started = c->started,
		.node_view = 1, /* the status page shows the newest answer's, whichever schema's */
		.load_margin = s->cfg.load_margin, .ctl = view, .nctl = ctl ? controllers_view(ctl, view) : 0,
		.ctl_switches = ctl ? controllers_switches(ctl) : 0, .gz = s->cfg.compression ? &s->gz : NULL,
		.schemas = s->cfg.self_schemas ? c->chain : NULL,
	};
	int status = render_run(&in, &out, res);
	size_t len;
	char *body = buf_steal(&out, &len);
	free(view);
	log_rows(s, c->m, res);
	log_catalog(s, &res->catalog);
	log_load(s, res->nodes);
	if (status == 200) {
		pthread_mutex_lock(&s->mu);
		s->last_output = len;
		pthread_mutex_unlock(&s->mu);
	}
	return answer_new(status, body, len, res);
}

/* From now on a's bytes count as held (answer.h), under s->mu: held_by_connections reads whether
 * the last answer counts. */
static void count_held(struct scraper *s, struct answer *a)
{
	pthread_mutex_lock(&s->mu);
	answer_count_held(a, s->held);
	pthread_mutex_unlock(&s->mu);
}

/* An answer that a connection may hold while it is no longer the scraper's (or never was) counts
 * as held; it is let go here (responses still sending it keep their reference). */
static void let_go(struct scraper *s, struct answer *a)
{
	count_held(s, a);
	answer_unref(a);
}

/* The bytes of answers only connections hold: the ledger's, less the last answer's while the
 * status page's reference (s->last) is the only one left (it is no connection's). */
static size_t held_by_connections(struct scraper *s)
{
	size_t held = answer_held_bytes(s->held);
	pthread_mutex_lock(&s->mu);
	struct answer *a = s->last;
	size_t page = a && atomic_load(&a->refs) == 1 ? answer_counted(a) : 0;
	held -= held < page ? held : page;
	pthread_mutex_unlock(&s->mu);
	return held;
}

/* Before a new answer is rendered: when the answers that only connections hold (clients that do not
 * read) are over cfg.max_held, the connections holding the oldest of them are closed (answer.h:
 * never those of the answer just replaced), and the render waits a little for them to let go. A
 * scrape is never refused for them. A warning says so at most once a minute, with the connections
 * closed since the last one (debug lines in between). */
static void make_room(struct scraper *s)
{
	size_t held = held_by_connections(s), goal = 0;
	unsigned closed = 0;
	if (!s->cfg.max_held || held <= s->cfg.max_held)
		return;
	pthread_mutex_lock(&s->mu);
	struct answer *page = s->last ? answer_ref(s->last) : NULL; /* the status page's: no connection's */
	pthread_mutex_unlock(&s->mu);
	closed = answer_held_evict(s->held, s->cfg.max_held, page, &goal);
	answer_unref(page);
	if (!closed)
		return;
	double now = mono_now();
	pthread_mutex_lock(&s->mu);
	unsigned long since = s->evicted += closed;
	int warn = s->evict_warned == 0 || now - s->evict_warned >= EVICT_WARN_EVERY_S;
	if (warn) {
		s->evict_warned = now;
		s->evicted = 0;
	}
	pthread_mutex_unlock(&s->mu);
	if (warn)
		log_warn("answers that clients have not read yet hold %zu bytes, over --web.max-held-bytes %zu: closed the %u "
			 "connections holding the oldest of them (%lu since the last such warning)", held, s->cfg.max_held,
			 closed, since);
	else
		log_debug("answers not read yet hold %zu bytes, over --web.max-held-bytes %zu: closed %u more connections", held,
			  s->cfg.max_held, closed);
	if (answer_held_wait(s->held, goal, EVICT_WAIT_S) < 0)
		log_debug("answers held by clients: %zu bytes %.1f s after closing their connections (goal %zu)",
			  answer_held_bytes(s->held), EVICT_WAIT_S, goal);
}

/* The last answer, when it was rendered from exactly these payloads (their serials) under the same
 * reload count (a payload is only current within min-interval, so neither is the answer);
 * otherwise it is let go now, as a new one is about to be rendered. */
static struct answer *shared_answer(struct scraper *s, unsigned reloads, const unsigned long long serial[SRC_COUNT])
{
	struct answer *a, *old = NULL;
	pthread_mutex_lock(&s->mu);
	a = s->answer;
	if (a && a->reloads == reloads && memcmp(a->in, serial, sizeof(a->in)) == 0) {
		answer_ref(a);
	} else {
		old = s->answer;
		s->answer = a = NULL;
	}
	pthread_mutex_unlock(&s->mu);
	let_go(s, old);
	return a;
}

/* The counters a render writes: the cache's fetches, the passthrough's repairs. */
static void counts_of(struct scraper *s, const struct cache_got *g, struct render_counts counts[SRC_COUNT])
{
	pthread_mutex_lock(&s->mu);
	for (int id = 0; id < SRC_COUNT; id++) {
		const struct cache_cost *k = &g->cost[id];
		counts[id] = (struct render_counts){ .fetches = g->n[id].fetches, .slow = g->n[id].slow,
						     .failed = g->n[id].failed,
						     .repaired = id < SRC_NATIVE_COUNT ? s->repaired[id] : 0, .costed = k->on,
						     .cost = k->st.ok_seconds, .interval = k->interval, .timeout = k->timeout,
						     .failures = k->st.failures };
	}
	pthread_mutex_unlock(&s->mu);
}

/* The payloads a scrape's rows read: each row's preferred forms' and, only where it may be used, its
 * native form's (mapping_sources_expecting: a preferred form whose sources' last fetches were all
 * usable is expected to serve the row again, and slurmctld is not asked for a fallback nobody
 * reads); then, when these answers do not serve a row's preferred form after all (a source down, a
 * family missing), its native form's sources, fetched at once, so that the row falls back in this
 * same scrape. */
static void get_payloads(struct scraper *s, const struct cache_table *t, const struct mapping *m, unsigned usable,
			 double deadline, struct cache_got *g)
{
	unsigned expect = cache_last_usable(s->cache);
	unsigned need = source_with_vouchers(mapping_sources_expecting(m, s->cfg.flags, usable, expect)) & usable;
	cache_get(s->cache, t, need, 0, deadline, 1, g);
	const struct expo *ex[SRC_COUNT];
	int up[SRC_COUNT];
	source_usable(g->p, up);
	for (int id = 0; id < SRC_COUNT; id++)
		ex[id] = up[id] ? &g->p[id]->expo : NULL;
	unsigned more = source_with_vouchers(mapping_fallback_sources(m, s->cfg.flags, usable, ex, up)) & usable & ~need;
	if (!more)
		return;
	struct cache_got g2;
	cache_get(s->cache, t, more, 0, deadline, 0, &g2);
	for (int id = 0; id < SRC_COUNT; id++) {
		g->n[id] = g2.n[id]; /* the counters as of now */
		g->cost[id] = g2.cost[id];
		if (!(more & (1u << id)))
			continue;
		g->p[id] = g2.p[id]; /* the reference moves */
		g->serial[id] = g2.serial[id];
	}
	g->own |= g2.own;
}

struct answer *scraper_answer(struct scraper *s, double timeout_s)
{
	struct scrape_ctx c = { .started = mono_now() };
	struct cache_table t;
	struct cache_got g;
	struct answer *a;

	cache_table_get(s->cache, &t);
	c.m = mapping_schema(t.m, s->schema) ? mapping_schema(t.m, s->schema) : t.m;
	c.chain = t.m;
	c.reload_ok = t.reload_ok;
	c.reload_time = t.reload_time;
	pthread_mutex_lock(&s->mu);
	c.last_output = s->last_output;
	pthread_mutex_unlock(&s->mu);
	/* a row's preferred form counts only when its sources can be fetched: a table preferring
	 * slurmrestd makes a site without --slurmrestd.url fetch nothing more */
	unsigned usable = source_configured(s->cfg.upstream) & ~s->cfg.sources_off;
	get_payloads(s, &t, c.m, usable, cache_deadline(s->cache, c.started, timeout_s), &g);
	counts_of(s, &g, c.counts);
	/* one render at a time: the scrapes that got the same payloads meanwhile share its body */
	pthread_mutex_lock(&s->render_mu);
	a = g.own ? NULL : shared_answer(s, t.reloads, g.serial);
	if (!a) {
		make_room(s);
		a = render(s, &c, g.p);
		a->reloads = t.reloads;
		memcpy(a->in, g.serial, sizeof(a->in)); /* the payloads themselves are let go below */
		keep_last(s, a, &t);
		if (g.own) { /* an answer with payloads of this scrape's own (deadline passed) is its own */
			count_held(s, a);
		} else {
			pthread_mutex_lock(&s->mu);
			struct answer *old = s->answer;
			s->answer = answer_ref(a);
			pthread_mutex_unlock(&s->mu);
			let_go(s, old);
		}
	}
	pthread_mutex_unlock(&s->render_mu);
	cache_got_release(&g);
	cache_table_put(s->cache, &t);
	return a;
}

/* The passthrough's answer from payload p of source id (render it to a buffer first: never a half
 * answer); *repaired gets the values it repaired. */
static struct answer *native_answer(const struct payload *p, enum source_id id, size_t *repaired)
{
	struct buf out;
	int status = 200;
	buf_init(&out, 0);
	*repaired = 0;
	if (p->ok) {
		*repaired = native_render(&p->expo, &out);
	} else {
		char safe[600];
		status = 503;
		buf_printf(&out, "slurm-exporter-shim: slurmctld's %s answered nothing usable:\n%s\n", sources[id].path,
			   log_escape(safe, sizeof(safe), p->reason, strlen(p->reason)));
	}
	size_t len;
	char *body = buf_steal(&out, &len);
	return answer_new(status, body, len, NULL);
}

struct answer *scraper_native(struct scraper *s, enum source_id id, double timeout_s)
{
	unsigned bit = 1u << id;
	struct answer *a = NULL, *old = NULL;
	struct cache_table t;
	struct cache_got g;
	size_t repaired = 0;

	cache_table_get(s->cache, &t);
	cache_get(s->cache, &t, bit, bit, cache_deadline(s->cache, mono_now(), timeout_s), 0, &g);
	pthread_mutex_lock(&s->mu);
	if (!g.own && s->native[id] && s->native[id]->in[id] == g.serial[id])
		a = answer_ref(s->native[id]);
	pthread_mutex_unlock(&s->mu);
	if (!a) {
		make_room(s);
		a = native_answer(g.p[id], id, &repaired); /* outside the lock: it can be megabytes */
		a->in[id] = g.serial[id];
		pthread_mutex_lock(&s->mu);
		s->repaired[id] += repaired;
		if (!g.own) { /* an answer of this request's own (deadline passed) is not shared */
			old = s->native[id];
			s->native[id] = answer_ref(a);
		}
		pthread_mutex_unlock(&s->mu);
		if (g.own)
			count_held(s, a);
		let_go(s, old);
	}
	cache_got_release(&g);
	cache_table_put(s->cache, &t);
	return a;
}

int scraper_run(struct scraper *s, double timeout_s, struct buf *out)
{
	struct answer *a = scraper_answer(s, timeout_s);
	int status = a->status;
	buf_append(out, a->body, a->len);
	answer_unref(a);
	return status;
}

struct compress_stats *scraper_compress_stats(struct scraper *s)
{
	return &s->gz;
}
