/* test_cache.c: the payload cache (src/cache.c) with a fake fetcher, without HTTP: concurrent
 * scrapes share one fetch per source; a payload is handed out within its min-interval and fetched
 * again after it; a new table's scrapes never get the old table's payloads (a failed reload keeps
 * them); a scrape's deadline bounds its own wait, never the fetch, whose result then serves the next
 * scrape; one upstream's hung fetch does not hold back the other's, and a hung slurmrestd is waited
 * for a bounded time once slurmctld's payloads are in (longer for a slurmrestd that is slow but
 * answers); a payload of another
 * controller than the current one is fetched again; the table's filter reaches the fetcher, and a
 * payload that keeps every family is fetched for the sources that need one, from the first fetch
 * for the sources configured so (keep_all); the deadline rule; a cost-scheduled /jobs on a fake clock
 * (its back-off after a timeout, its own worker and timeout, its interval from its cost, its old
 * answer served while it is refreshed). */
#include "testutil.h"

#include <math.h>
#include <pthread.h>

#include "cache.h"
#include "controllers.h"
#include "monotime.h"
#include "mapping.h"
#include "payload.h"

/* The fake fetcher: each source answers body[id] (a failed fetch when NULL) after delay seconds;
 * the sources in hang wait until released. It counts its calls and remembers the last filter. */
struct fake {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	const char *body[SRC_COUNT];
	double delay, rest_delay;  /* seconds each fetch takes (slurmrestd's: rest_delay) */
	unsigned hang;
	int released;
	int controller;           /* what the payloads record (controllers.h's index), -1: none */
	unsigned calls[SRC_COUNT];
	int unfiltered[SRC_COUNT]; /* the last fetch of the source had no keep filter */
	/* with the fake clock (fake_clock): each source's fetch takes need[id] seconds of it, or
	   fails after its timeout when that is shorter (slurmrestd's /jobs at 20,000 jobs) */
	int clocked;
	double need[SRC_COUNT];
	double timeout[SRC_COUNT]; /* the timeout of the source's last fetch */
	unsigned mask[SRC_COUNT];  /* the mask of the call that last fetched it */
};

/* A fake monotonic clock for the cost-scheduled tests: moved by the test and by the fetcher. */
static pthread_mutex_t clock_mu = PTHREAD_MUTEX_INITIALIZER;
static double fake_now = 1000;

static double fake_clock(void)
{
	pthread_mutex_lock(&clock_mu);
	double t = fake_now;
	pthread_mutex_unlock(&clock_mu);
	return t;
}

static void fake_advance(double s)
{
	pthread_mutex_lock(&clock_mu);
	fake_now += s;
	pthread_mutex_unlock(&clock_mu);
}

/* The fake clock's fetch of source id: need[id] seconds, or a timeout after f->timeout. */
static struct payload *clocked_fetch(struct fake *k, const struct cache_fetch *f, int id)
{
	struct payload *p = payload_new((enum source_id)id, f->gen, f->keep, f->keep_ctx);
	double took = f->timeout > 0 && k->need[id] > f->timeout ? f->timeout : k->need[id];
	payload_restart(p, took < k->need[id] ? 0 : 200);
	if (took < k->need[id])
		payload_fault(p, FAULT_TRANSPORT, "Operation timed out after 10000 milliseconds with 0 bytes received");
	else
		assert_int_equal(payload_feed(p, k->body[id], strlen(k->body[id]), 0), 0);
	payload_finish(p);
	fake_advance(took);
	p->seconds = took;
	p->at = fake_clock();
	return p;
}

static void fake_fetch(void *ctx, const struct cache_fetch *f, struct payload *got[SRC_COUNT])
{
	struct fake *k = ctx;
	double t0 = mono_now();
	pthread_mutex_lock(&k->mu);
	for (int id = 0; id < SRC_COUNT; id++)
		if (f->mask & (1u << id)) {
			k->calls[id]++;
			k->unfiltered[id] = f->keep == NULL;
			k->timeout[id] = f->timeout;
			k->mask[id] = f->mask;
		}
	while ((f->mask & k->hang) && !k->released)
		pthread_cond_wait(&k->cv, &k->mu);
	int controller = k->controller;
	pthread_mutex_unlock(&k->mu);
	double delay = f->mask & source_of_upstream(UPSTREAM_SLURMRESTD) ? k->rest_delay : k->delay;
	if (delay > 0)
		tu_sleep_ms((long)(delay * 1000));
	for (int id = 0; id < SRC_COUNT; id++) {
		if (!(f->mask & (1u << id)))
			continue;
		if (k->clocked) {
			got[id] = clocked_fetch(k, f, id);
			continue;
		}
		struct payload *p = payload_new((enum source_id)id, f->gen, f->keep, f->keep_ctx);
		payload_restart(p, k->body[id] ? 200 : 0);
		if (k->body[id])
			assert_int_equal(payload_feed(p, k->body[id], strlen(k->body[id]), 0), PAYLOAD_FEED_MORE);
		else
			payload_fault(p, FAULT_TRANSPORT, "Connection refused");
		payload_finish(p);
		p->controller = controller;
		p->seconds = mono_now() - t0;
		p->at = mono_now();
		got[id] = p;
	}
}

static void fake_init(struct fake *k)
{
	memset(k, 0, sizeof(*k));
	pthread_mutex_init(&k->mu, NULL);
	pthread_cond_init(&k->cv, NULL);
	k->controller = -1;
	for (int id = 0; id < SRC_COUNT; id++)
		k->body[id] = sources[id].upstream == UPSTREAM_SLURMRESTD ? "{\"nodes\": []}" : "slurm_node_cpus{node=\"a\"} 4\nslurm_other 1\n";
}

static void fake_release(struct fake *k)
{
	pthread_mutex_lock(&k->mu);
	k->released = 1;
	pthread_cond_broadcast(&k->cv);
	pthread_mutex_unlock(&k->mu);
}

static unsigned calls(struct fake *k, enum source_id id)
{
	pthread_mutex_lock(&k->mu);
	unsigned n = k->calls[id];
	pthread_mutex_unlock(&k->mu);
	return n;
}

/* A table reading slurm_node_cpus (nodes), n gives another row name so that two tables differ. */
static struct mapping *table(int n)
{
	const char *path = tu_tmp("cache-mapping.json");
	char json[400];
	snprintf(json, sizeof(json), "{\"metrics\": [{\"name\": \"row%d\", \"help\": \"h\", \"type\": \"gauge\", "
		 "\"fidelity\": \"exact\", \"expr\": \"sum(slurm_node_cpus)\"}]}", n);
	tu_write(path, json);
	struct mapping *m = mapping_load(path, NULL);
	assert_non_null(m);
	return m;
}

static struct cache *cache_with(struct fake *k, double interval)
{
	struct cache_config cfg = { .fetch = fake_fetch, .fetch_ctx = k };
	cfg.upstream[UPSTREAM_SLURMCTLD] = (struct upstream_config){ .base_url = "http://ctl.invalid", .timeout = 5 };
	cfg.upstream[UPSTREAM_SLURMRESTD] = (struct upstream_config){ .base_url = "http://rest.invalid", .timeout = 5 };
	for (int id = 0; id < SRC_COUNT; id++)
		cfg.min_interval[id] = interval;
	return cache_new(&cfg, table(0));
}

/* One get of need, waiting at most wait seconds; the table is taken and let go around it. */
static void get(struct cache *c, unsigned need, unsigned all, double wait, struct cache_got *g)
{
	struct cache_table t;
	cache_table_get(c, &t);
	cache_get(c, &t, need, all, mono_now() + wait, 1, g);
	cache_table_put(c, &t);
}

#define NODES (1u << SRC_NODES)
#define SCHED (1u << SRC_SCHEDULER)
#define RNODES (1u << SRC_REST_NODES)

struct getter {
	pthread_t t;
	struct cache *c;
	struct cache_got g;
};

static void *getter_run(void *arg)
{
	struct getter *x = arg;
	get(x->c, NODES | SCHED, 0, 5, &x->g);
	return NULL;
}

/* 8 scrapes at once during a 0.2 s fetch: one fetch of each source, one payload for all. */
static void test_concurrent_share_one_fetch(void **state)
{
	(void)state;
	struct fake k;
	fake_init(&k);
	k.delay = 0.2;
	struct cache *c = cache_with(&k, 10);
	struct getter x[8];
	for (int i = 0; i < 8; i++) {
		x[i].c = c;
		assert_int_equal(pthread_create(&x[i].t, NULL, getter_run, &x[i]), 0);
	}
	for (int i = 0; i < 8; i++)
		pthread_join(x[i].t, NULL);
	assert_int_equal(calls(&k, SRC_NODES), 1);
	assert_int_equal(calls(&k, SRC_SCHEDULER), 1);
	assert_int_equal(calls(&k, SRC_PARTITIONS), 0); /* only what was asked for */
	const struct payload *first = x[0].g.p[SRC_NODES];
	for (int i = 0; i < 8; i++) {
		assert_int_equal(x[i].g.own, 0);
		assert_true(x[i].g.p[SRC_NODES] == first && first->ok);
		assert_null(x[i].g.p[SRC_JOBS]);
		assert_int_equal(x[i].g.n[SRC_NODES].fetches, 1);
		cache_got_release(&x[i].g);
	}
	cache_free(c);
}

/* Within its min-interval a payload is handed out again (the same serial); after it, fetched anew
 * (a new serial: answers are shared by serial, never by a payload's address, which a new one may
 * reuse). */
static void test_reuse_within_interval(void **state)
{
	(void)state;
	struct fake k;
	struct cache_got a, b, d;
	fake_init(&k);
	struct cache *c = cache_with(&k, 0.3);
	get(c, NODES, 0, 5, &a);
	get(c, NODES, 0, 5, &b);
	assert_true(a.p[SRC_NODES] == b.p[SRC_NODES]);
	assert_true(a.serial[SRC_NODES] != 0 && a.serial[SRC_NODES] == b.serial[SRC_NODES]);
	assert_int_equal(calls(&k, SRC_NODES), 1);
	tu_sleep_ms(350);
	get(c, NODES, 0, 5, &d);
	assert_true(d.p[SRC_NODES] != a.p[SRC_NODES]);
	assert_true(d.serial[SRC_NODES] > a.serial[SRC_NODES]); /* a new fetch, whatever its address */
	assert_int_equal(calls(&k, SRC_NODES), 2);
	assert_int_equal(d.n[SRC_NODES].fetches, 2);
	assert_int_equal(d.n[SRC_NODES].failed, 0);
	cache_got_release(&a);
	cache_got_release(&b);
	cache_got_release(&d);
	cache_free(c);
}

/* A fetch whose answer is not usable is counted as failed (the rows' shim_source_errors_total); a
 * usable one after it is not. */
static void test_failed_fetches_counted(void **state)
{
	(void)state;
	struct fake k;
	struct cache_got a, b;
	fake_init(&k);
	const char *body = k.body[SRC_NODES];
	k.body[SRC_NODES] = NULL;
	struct cache *c = cache_with(&k, 0);
	get(c, NODES, 0, 5, &a);
	assert_false(a.p[SRC_NODES]->ok);
	assert_int_equal(a.n[SRC_NODES].fetches, 1);
	assert_int_equal(a.n[SRC_NODES].failed, 1);
	k.body[SRC_NODES] = body;
	get(c, NODES, 0, 5, &b);
	assert_true(b.p[SRC_NODES]->ok);
	assert_int_equal(b.n[SRC_NODES].fetches, 2);
	assert_int_equal(b.n[SRC_NODES].failed, 1);
	cache_got_release(&a);
	cache_got_release(&b);
	cache_free(c);
}

/* A new table gets payloads parsed for it (the old ones may lack its families); a failed reload
 * keeps the table and its payloads, and says so. */
static void test_table_generations(void **state)
{
	(void)state;
	struct fake k;
	struct cache_got a, b, d;
	struct cache_table t;
	fake_init(&k);
	struct cache *c = cache_with(&k, 10);
	get(c, NODES, 0, 5, &a);
	cache_set_mapping(c, NULL);
	cache_table_get(c, &t);
	assert_int_equal(t.reload_ok, 0);
	assert_int_equal(t.reloads, 1);
	assert_int_equal(t.gen, 0);
	assert_string_equal(t.m->rows[0].name, "row0");
	cache_table_put(c, &t);
	get(c, NODES, 0, 5, &b);
	assert_true(b.p[SRC_NODES] == a.p[SRC_NODES]);
	cache_set_mapping(c, table(1));
	cache_table_get(c, &t);
	assert_true(t.reload_ok && t.reloads == 2 && t.gen == 1);
	assert_string_equal(t.m->rows[0].name, "row1");
	cache_get(c, &t, NODES, 0, mono_now() + 5, 1, &d);
	cache_table_put(c, &t);
	assert_true(d.p[SRC_NODES] != a.p[SRC_NODES]);
	assert_int_equal(d.p[SRC_NODES]->gen, 1);
	assert_int_equal(calls(&k, SRC_NODES), 2);
	cache_got_release(&a);
	cache_got_release(&b);
	cache_got_release(&d);
	cache_free(c);
}

/* A scrape's deadline ends its wait, not the fetch: the scrape gets a payload of its own saying
 * so, and the fetch, once done, serves the next scrape without a second fetch. */
static void test_deadline_leaves_fetch_running(void **state)
{
	(void)state;
	struct fake k;
	struct cache_got a, b;
	fake_init(&k);
	k.hang = NODES;
	struct cache *c = cache_with(&k, 10);
	double t0 = mono_now();
	get(c, NODES, 0, 0.2, &a);
	double took = mono_now() - t0;
	assert_true(took >= 0.19 && took < 2);
	assert_int_equal(a.own, NODES);
	assert_int_equal(a.serial[SRC_NODES], 0);
	assert_false(a.p[SRC_NODES]->ok);
	assert_string_equal(a.p[SRC_NODES]->reason, "/metrics/nodes: scrape deadline passed while waiting for the fetch in flight");
	fake_release(&k);
	get(c, NODES, 0, 5, &b);
	assert_int_equal(b.own, 0);
	assert_true(b.p[SRC_NODES]->ok);
	assert_int_equal(calls(&k, SRC_NODES), 1);
	cache_got_release(&a);
	cache_got_release(&b);
	cache_free(c);
}

/* A hung slurmrestd fetch does not hold back slurmctld's payloads: each upstream has its own. */
static void test_one_fetch_per_upstream(void **state)
{
	(void)state;
	struct fake k;
	struct cache_got a;
	fake_init(&k);
	k.hang = RNODES;
	struct cache *c = cache_with(&k, 10);
	get(c, NODES | RNODES, 0, 0.3, &a);
	assert_true(a.p[SRC_NODES]->ok);
	assert_int_equal(a.own, RNODES);
	cache_got_release(&a);
	fake_release(&k);
	cache_free(c); /* waits for the released worker */
}

/* A hung slurmrestd is waited for CACHE_REST_WAIT_S once slurmctld's payloads are in, not until the
 * scrape's deadline: its payload says it was not waited for, and its fetch goes on. */
static void test_rest_not_waited_for(void **state)
{
	(void)state;
	struct fake k;
	struct cache_got a;
	fake_init(&k);
	k.hang = RNODES;
	struct cache *c = cache_with(&k, 10);
	double t0 = mono_now();
	get(c, NODES | RNODES, 0, 20, &a);
	double took = mono_now() - t0;
	print_message("figures: answered without the hung slurmrestd after %.2f s\n", took);
	assert_true(took >= CACHE_REST_WAIT_S - 0.05 && took < CACHE_REST_WAIT_S + 2);
	assert_true(a.p[SRC_NODES]->ok);
	assert_int_equal(a.own, RNODES);
	assert_int_equal(a.p[SRC_REST_NODES]->facts.fault, FAULT_NOT_WAITED);
	assert_non_null(strstr(a.p[SRC_REST_NODES]->reason, ": not waited for: slurmctld's answers were in and this fetch "
							    "was still in flight 2.0 s later"));
	cache_got_release(&a);
	fake_release(&k);
	cache_free(c);
}

/* The wait for slurmrestd follows its own pace: twice its last usable fetch when that is longer
 * than CACHE_REST_WAIT_S, so a slow but healthy slurmrestd is waited for. */
static void test_rest_wait_follows_its_pace(void **state)
{
	(void)state;
	struct fake k;
	struct cache_got a, b;
	fake_init(&k);
	k.rest_delay = 1.5; /* within the first bound */
	struct cache *c = cache_with(&k, 0.1);
	get(c, NODES | RNODES, 0, 20, &a);
	assert_int_equal(a.own, 0);
	assert_true(a.p[SRC_REST_NODES]->seconds >= 1.45);
	k.rest_delay = CACHE_REST_WAIT_S + 0.5; /* over the first bound, under twice the last fetch */
	tu_sleep_ms(150);
	get(c, NODES | RNODES, 0, 20, &b);
	assert_int_equal(b.own, 0);
	assert_true(b.p[SRC_REST_NODES] != a.p[SRC_REST_NODES]);
	cache_got_release(&a);
	cache_got_release(&b);
	cache_free(c);
}

/* A payload of another controller than the current one is fetched again from the current one. */
static void test_other_controller_dropped(void **state)
{
	(void)state;
	struct fake k;
	struct cache_got a, b;
	fake_init(&k);
	struct cache_config cfg = { .fetch = fake_fetch, .fetch_ctx = &k };
	cfg.upstream[UPSTREAM_SLURMCTLD] = (struct upstream_config){ .base_url = "http://a.invalid:6817,http://b.invalid:6817",
								      .timeout = 5 };
	for (int id = 0; id < SRC_COUNT; id++)
		cfg.min_interval[id] = 60;
	struct cache *c = cache_new(&cfg, table(0));
	struct controllers *ctl = cache_controllers(c); /* the cache's runtime controllers, split from base_url */
	assert_non_null(ctl);
	assert_int_equal(controllers_count(ctl), 2);
	controllers_answered(ctl, 0);
	k.controller = 0;
	get(c, NODES, 0, 5, &a);
	assert_int_equal(a.p[SRC_NODES]->controller, 0);
	controllers_answered(ctl, 1); /* failover: B is the primary now */
	k.controller = 1;
	get(c, NODES, 0, 5, &b);
	assert_int_equal(b.p[SRC_NODES]->controller, 1);
	assert_int_equal(calls(&k, SRC_NODES), 2);
	cache_got_release(&a);
	cache_got_release(&b);
	cache_free(c);
}

/* The fetcher gets the table's filter; a source asked for with all gets a payload that kept every
 * family, and a filtered one in the slot does not count for it. */
static void test_filter_and_all(void **state)
{
	(void)state;
	struct fake k;
	struct cache_got a, b;
	fake_init(&k);
	struct cache *c = cache_with(&k, 10);
	get(c, NODES, 0, 5, &a);
	assert_false(k.unfiltered[SRC_NODES]);
	assert_false(a.p[SRC_NODES]->all);
	assert_non_null(expo_find(&a.p[SRC_NODES]->expo, "slurm_node_cpus", 15));
	assert_null(expo_find(&a.p[SRC_NODES]->expo, "slurm_other", 11)); /* no row reads it */
	get(c, NODES, NODES, 5, &b);
	assert_true(k.unfiltered[SRC_NODES]);
	assert_true(b.p[SRC_NODES]->all);
	assert_non_null(expo_find(&b.p[SRC_NODES]->expo, "slurm_other", 11));
	assert_int_equal(calls(&k, SRC_NODES), 2);
	cache_got_release(&a);
	cache_got_release(&b);
	cache_free(c);
}

/* keep_all, fixed at the start: every fetch of those sources keeps every family from the first
 * on, so a request that needs them unfiltered shares the table's fetch; the others stay filtered. */
static void test_keep_all_from_start(void **state)
{
	(void)state;
	struct fake k;
	struct cache_got a, b;
	fake_init(&k);
	struct cache_config cfg = { .fetch = fake_fetch, .fetch_ctx = &k, .keep_all = NODES };
	cfg.upstream[UPSTREAM_SLURMCTLD] = (struct upstream_config){ .base_url = "http://ctl.invalid", .timeout = 5 };
	for (int id = 0; id < SRC_COUNT; id++)
		cfg.min_interval[id] = 10;
	struct cache *c = cache_new(&cfg, table(0));
	get(c, NODES, 0, 5, &a);
	assert_true(k.unfiltered[SRC_NODES] && a.p[SRC_NODES]->all);
	get(c, NODES, NODES, 5, &b);
	assert_true(b.p[SRC_NODES] == a.p[SRC_NODES]);
	assert_int_equal(calls(&k, SRC_NODES), 1);
	cache_got_release(&a);
	cache_got_release(&b);
	get(c, 1u << SRC_UA, 0, 5, &a); /* not in keep_all: filtered */
	assert_false(k.unfiltered[SRC_UA]);
	cache_got_release(&a);
	cache_free(c);
}

/* A scrape waits its own timeout, or, when that is not below the fetch's, the fetch's and a
 * second to report its failure; a replay only its own; an upstream not used is never waited for. */
static void test_deadline_rule(void **state)
{
	(void)state;
	struct cache_config cfg = { 0 };
	cfg.upstream[UPSTREAM_SLURMCTLD] = (struct upstream_config){ .base_url = "http://ctl.invalid", .timeout = 10 };
	cfg.upstream[UPSTREAM_SLURMRESTD].timeout = 30; /* not configured */
	struct cache *c = cache_new(&cfg, table(0));
	assert_true(cache_deadline(c, 100, 3) == 103);
	assert_true(cache_deadline(c, 100, 60) == 111);
	cache_free(c);
	cfg.upstream[UPSTREAM_SLURMRESTD].base_url = "http://rest.invalid";
	c = cache_new(&cfg, table(0));
	assert_true(cache_deadline(c, 100, 60) == 131);
	cache_free(c);
	cfg.replay_dir = "/nonexistent";
	c = cache_new(&cfg, table(0));
	assert_true(cache_deadline(c, 100, 60) == 160);
	cache_free(c);
}

#define RJOBS (1u << SRC_REST_JOBS)

/* A cache whose /jobs is cost-scheduled with the daemon's defaults (floor 30 s, 5%, back-off at most
 * 600 s, timeout 10 s to 60 s, twice the last usable fetch), on the fake clock, fetched by k with
 * clocked fetches: /jobs needs jobs_s. */
static struct cache *cost_cache(struct fake *k, double jobs_s)
{
	fake_init(k);
	k->clocked = 1;
	k->need[SRC_REST_JOBS] = jobs_s;
	k->need[SRC_REST_NODES] = 0.1;
	k->body[SRC_REST_JOBS] = "{\"jobs\": []}";
	struct cache_config cfg = { .fetch = fake_fetch, .fetch_ctx = k, .clock = fake_clock, .cost_sources = RJOBS,
				    .cost = { .floor = 30, .max_share = 0.05, .max_backoff = 600, .timeout = 10,
					      .timeout_factor = 2, .max_timeout = 60 } };
	cfg.upstream[UPSTREAM_SLURMCTLD] = (struct upstream_config){ .base_url = "http://ctl.invalid", .timeout = 5 };
	cfg.upstream[UPSTREAM_SLURMRESTD] = (struct upstream_config){ .base_url = "http://rest.invalid", .timeout = 10 };
	for (int id = 0; id < SRC_COUNT; id++)
		cfg.min_interval[id] = 5;
	return cache_new(&cfg, table(0));
}

/* One config per cost class: with /nodes cost-scheduled too, /jobs (a job walk) follows cost and
 * /nodes cost_light (--slurmrestd.max-share over --slurmrestd.min-interval, the upstream's timeout).
 * A 3 s /nodes at 5% is served 57 s: the scrape 30 s later does not fetch it again; one 70 s
 * later does, and is served the last usable answer while that refresh runs. */
static void test_cost_classes(void **state)
{
	(void)state;
	struct fake k;
	struct cache_got g;
	fake_init(&k);
	k.clocked = 1;
	k.need[SRC_REST_JOBS] = 14;
	k.need[SRC_REST_NODES] = 3;
	k.body[SRC_REST_JOBS] = "{\"jobs\": []}";
	struct cache_config cfg = { .fetch = fake_fetch, .fetch_ctx = &k, .clock = fake_clock, .cost_sources = RJOBS | RNODES,
				    .cost = { .floor = 30, .max_share = 0.05, .max_backoff = 600, .timeout = 10,
					      .timeout_factor = 2, .max_timeout = 60 },
				    .cost_light = { .floor = 5, .max_share = 0.05, .max_backoff = 5, .timeout = 10,
						    .max_timeout = 10 } };
	cfg.upstream[UPSTREAM_SLURMCTLD] = (struct upstream_config){ .base_url = "http://ctl.invalid", .timeout = 5 };
	cfg.upstream[UPSTREAM_SLURMRESTD] = (struct upstream_config){ .base_url = "http://rest.invalid", .timeout = 10 };
	for (int id = 0; id < SRC_COUNT; id++)
		cfg.min_interval[id] = 5;
	struct cache *c = cache_new(&cfg, table(0));
	get(c, RJOBS | RNODES, 0, 5, &g);
	assert_true(g.p[SRC_REST_JOBS]->ok && g.p[SRC_REST_NODES]->ok);
	assert_true(g.cost[SRC_REST_JOBS].on && g.cost[SRC_REST_NODES].on);
	assert_true(fabs(g.cost[SRC_REST_JOBS].interval - 266) < 1e-9);
	assert_true(fabs(g.cost[SRC_REST_NODES].interval - 57) < 1e-9);
	assert_true(g.cost[SRC_REST_JOBS].timeout == 28);
	assert_true(g.cost[SRC_REST_NODES].timeout == 10);    /* its upstream's, whatever it cost */
	assert_true(k.timeout[SRC_REST_NODES] == 0);          /* with its upstream's fetch, its timeout */
	unsigned long long served = g.serial[SRC_REST_NODES];
	cache_got_release(&g);
	fake_advance(30);
	get(c, RJOBS | RNODES, 0, 5, &g);
	assert_int_equal(calls(&k, SRC_REST_NODES), 1);       /* 30 s < 57 s: served again */
	assert_true(g.serial[SRC_REST_NODES] == served);
	cache_got_release(&g);
	fake_advance(40);                                     /* 70 s on: due (the fetches move the clock too) */
	get(c, RJOBS | RNODES, 0, 5, &g);                     /* refreshed, the last usable one served meanwhile */
	assert_true(g.p[SRC_REST_NODES]->ok && g.serial[SRC_REST_NODES] == served);
	cache_got_release(&g);
	int fresh = 0;
	for (int i = 0; i < 500 && !fresh; i++) {            /* until the refresh is in */
		get(c, RNODES, 0, 5, &g);
		fresh = g.serial[SRC_REST_NODES] != served;
		cache_got_release(&g);
		if (!fresh)
			tu_sleep_ms(10);
	}
	assert_true(fresh);
	assert_int_equal(calls(&k, SRC_REST_NODES), 2);
	assert_int_equal(calls(&k, SRC_REST_JOBS), 1);        /* 266 s: not yet */
	cache_free(c);
}

/* slurmrestd's /jobs cost-scheduled (cost_cache) on the fake clock, scraped every 30 s (its ages and
 * schedule read the cache's clock, which the fake fetcher moves by what each fetch takes). At
 * 20,000 jobs /jobs needs 14 s: the first fetch, whose need is not known, gets the longest timeout
 * (60 s) and is usable; it is fetched alone (its own worker, its own timeout) while /nodes goes on
 * with its upstream's; the interval is 266 s and the next timeout 28 s. Then slurmrestd slows down
 * to 40 s: the refresh is given up after 28 s (the old answer served meanwhile), nothing is asked
 * again for 532 s (the 5% rule over the 28 s it cost) while the failed answer is served (the rows
 * fall back) and the cost state says backing off; the next fetch gets 56 s and is usable, which
 * ends the back-off. A refresh in flight is not waited for: the last usable answer is served. */
static void test_cost_scheduled_jobs(void **state)
{
	(void)state;
	struct fake k;
	struct cache *c = cost_cache(&k, 14);
	struct cache_got g;

	get(c, RJOBS | RNODES, 0, 5, &g);
	assert_true(g.p[SRC_REST_JOBS]->ok && g.p[SRC_REST_NODES]->ok);
	assert_int_equal(k.mask[SRC_REST_JOBS], RJOBS);       /* alone */
	assert_true(k.timeout[SRC_REST_JOBS] == 60);          /* not known yet: all it may take */
	assert_true(k.timeout[SRC_REST_NODES] == 0);          /* its upstream's */
	assert_true(g.cost[SRC_REST_JOBS].on && !g.cost[SRC_REST_NODES].on);
	assert_int_equal(g.cost[SRC_REST_JOBS].st.failures, 0);
	assert_true(g.cost[SRC_REST_JOBS].st.ok_seconds == 14);
	assert_true(fabs(g.cost[SRC_REST_JOBS].interval - 266) < 1e-9);
	assert_true(g.cost[SRC_REST_JOBS].timeout == 28);
	unsigned long long served = g.serial[SRC_REST_JOBS];
	double ok_at = g.p[SRC_REST_JOBS]->at;
	cache_got_release(&g);
	while (fake_clock() + 30 - ok_at < 266) {             /* served for 266 s */
		fake_advance(30);
		get(c, RJOBS | RNODES, 0, 5, &g);
		assert_true(g.serial[SRC_REST_JOBS] == served);
		cache_got_release(&g);
	}
	assert_int_equal(calls(&k, SRC_REST_JOBS), 1);
	assert_int_equal(calls(&k, SRC_REST_NODES), 9);       /* the cheap document goes on */

	pthread_mutex_lock(&k.mu);
	k.need[SRC_REST_JOBS] = 40;                           /* slurmrestd slows down */
	pthread_mutex_unlock(&k.mu);
	fake_advance(30);
	get(c, RJOBS, 0, 5, &g);                              /* due: refreshed, the old one served */
	assert_true(g.p[SRC_REST_JOBS]->ok && g.serial[SRC_REST_JOBS] == served);
	cache_got_release(&g);
	int failed = 0;
	for (int i = 0; i < 500 && !failed; i++) {           /* until the given-up refresh is in */
		get(c, RJOBS, 0, 5, &g);
		failed = !g.p[SRC_REST_JOBS]->ok;
		if (!failed) {
			cache_got_release(&g);
			tu_sleep_ms(10);
		}
	}
	assert_true(failed);
	assert_true(k.timeout[SRC_REST_JOBS] == 28);
	assert_int_equal(g.cost[SRC_REST_JOBS].st.failures, 1);
	assert_true(fabs(g.cost[SRC_REST_JOBS].interval - 532) < 1e-9);
	assert_true(g.cost[SRC_REST_JOBS].timeout == 56);
	double failed_at = g.p[SRC_REST_JOBS]->at;
	cache_got_release(&g);
	while (fake_clock() + 30 - failed_at < 532) {         /* backing off: the failed answer */
		fake_advance(30);
		get(c, RJOBS, 0, 5, &g);
		assert_false(g.p[SRC_REST_JOBS]->ok);
		assert_int_equal(g.cost[SRC_REST_JOBS].st.failures, 1);
		cache_got_release(&g);
	}
	assert_int_equal(calls(&k, SRC_REST_JOBS), 2);
	fake_advance(30);
	get(c, RJOBS, 0, 5, &g);                              /* waited for: nothing usable to serve */
	assert_int_equal(calls(&k, SRC_REST_JOBS), 3);
	assert_true(k.timeout[SRC_REST_JOBS] == 56);
	assert_true(g.p[SRC_REST_JOBS]->ok);
	assert_int_equal(g.cost[SRC_REST_JOBS].st.failures, 0); /* reset on success */
	assert_true(g.cost[SRC_REST_JOBS].st.ok_seconds == 40);
	assert_true(fabs(g.cost[SRC_REST_JOBS].interval - 760) < 1e-9);
	assert_true(g.cost[SRC_REST_JOBS].timeout == 60);     /* 80, capped */
	served = g.serial[SRC_REST_JOBS];
	cache_got_release(&g);

	k.hang = RJOBS;                                       /* a refresh in flight is not waited for */
	fake_advance(800);
	get(c, RJOBS, 0, 5, &g);
	assert_int_equal(g.own, 0);
	assert_true(g.p[SRC_REST_JOBS]->ok && g.serial[SRC_REST_JOBS] == served);
	cache_got_release(&g);
	get(c, RJOBS, 0, 5, &g);                              /* and again while it is in flight */
	assert_true(g.serial[SRC_REST_JOBS] == served);
	cache_got_release(&g);
	for (int i = 0; i < 500 && calls(&k, SRC_REST_JOBS) < 4; i++) /* the worker is on its way */
		tu_sleep_ms(10);
	assert_int_equal(calls(&k, SRC_REST_JOBS), 4);
	fake_release(&k);
	cache_free(c);
}

/* A cost-scheduled /jobs that is quick (0.5 s, under CACHE_REFRESH_WAIT_S) is waited for when it is
 * refreshed, as before: the scrape that refreshes it gets the new answer, not the old one. */
static void test_cost_quick_refresh_waited(void **state)
{
	(void)state;
	struct fake k;
	struct cache *c = cost_cache(&k, 0.5);
	struct cache_got g;
	get(c, RJOBS, 0, 5, &g);
	unsigned long long first = g.serial[SRC_REST_JOBS];
	assert_true(g.p[SRC_REST_JOBS]->ok);
	cache_got_release(&g);
	fake_advance(31);
	get(c, RJOBS, 0, 5, &g);
	assert_int_equal(calls(&k, SRC_REST_JOBS), 2);
	assert_true(g.serial[SRC_REST_JOBS] != first);
	cache_got_release(&g);
	cache_free(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_concurrent_share_one_fetch),
		cmocka_unit_test(test_reuse_within_interval),
		cmocka_unit_test(test_failed_fetches_counted),
		cmocka_unit_test(test_table_generations),
		cmocka_unit_test(test_deadline_leaves_fetch_running),
		cmocka_unit_test(test_one_fetch_per_upstream),
		cmocka_unit_test(test_rest_not_waited_for),
		cmocka_unit_test(test_rest_wait_follows_its_pace),
		cmocka_unit_test(test_other_controller_dropped),
		cmocka_unit_test(test_filter_and_all),
		cmocka_unit_test(test_keep_all_from_start),
		cmocka_unit_test(test_deadline_rule),
		cmocka_unit_test(test_cost_scheduled_jobs),
		cmocka_unit_test(test_cost_classes),
		cmocka_unit_test(test_cost_quick_refresh_waited),
	};
	return cmocka_run_group_tests_name("cache", tests, NULL, NULL);
}
