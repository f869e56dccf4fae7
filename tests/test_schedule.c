/* test_schedule.c: schedule_fetch (schedule.h), the policy that says which sources a scrape
 * fetches, over simulated scrape sequences: no clock, no network. The shipped table's slurmctld
 * sources (read from the table as a scrape reads them) with the default intervals (src/options.c's
 * --slurmctld.min-interval and --slurmctld.jobs.min-interval, by source.h's cost class: cheap 5 s,
 * job walks 75 s), scraped every 10 to 60 s,
 * each fetch taking 0.1 s (an answer's age counts from the end of its fetch, as payload.h's `at`):
 * nothing is ever served at or past its interval, every walk is refreshed within its interval, a
 * scrape after the first walks at most once, and every 30 s two scrapes in three do (what makes the
 * default lighter on slurmctld than the old exporter's commands: docs/operations.md's table). A
 * 60 s interval scraped every 60 s may walk twice a scrape; 120 s walks once.
 * Cost-scheduled sources (slurmrestd's /jobs): schedule_cost_interval's share rule, floor
 * and back-off (its growth, cap and reset on a usable fetch), schedule_cost_timeout, and two hours
 * of scrapes at 20,000 and 5,000 jobs simulated (no clock: the simulation's time); the other
 * slurmrestd documents' class (--slurmrestd.max-share): cheap and expensive fetches, 0, the floor. */
#include "testutil.h"

#include <math.h>

#include "mapping.h"
#include "options.h"
#include "schedule.h"
#include "source.h"

/* What the simulations run on, read from the code once (setup). */
static struct {
	struct sched_source src[SRC_COUNT]; /* the shipped table's slurmctld sources, as scrape.c needs them */
	int n;
	int walks;                          /* how many of them walk the jobs */
	double cheap_s, jobs_s;             /* the default intervals */
} shipped;

static int setup(void **state)
{
	(void)state;
	char *argv[] = { "slurm-exporter-shim", NULL };
	struct options o;
	struct buf problems;
	if (options_parse(&o, 1, argv, stderr) < 0)
		return -1;
	shipped.cheap_s = o.min_interval;
	shipped.jobs_s = o.jobs_min_interval;
	buf_init(&problems, 0);
	struct mapping *m = mapping_load("mappings/prometheus-slurm-exporter.json", &problems);
	buf_free(&problems);
	if (!m)
		return -1;
	/* what a scrape of the table fetches with slurmctld alone (scrape.c), the vouchers too */
	unsigned usable = source_of_upstream(UPSTREAM_SLURMCTLD);
	unsigned need = source_with_vouchers(mapping_sources(m, 0, usable)) & usable;
	mapping_free(m);
	for (int id = 0; id < SRC_COUNT; id++)
		if (need & (1u << id)) {
			shipped.src[shipped.n++] = (struct sched_source){ .walks = sources[id].walks_jobs };
			shipped.walks += sources[id].walks_jobs;
		}
	return 0;
}

struct sim {
	int scrapes;
	int max_walks;       /* the most walks in one scrape after the first */
	int walks;           /* in total */
	double max_age;      /* the oldest answer served */
};

/* n scrapes gap seconds apart (jitter: added to every odd gap; seed, unless NULL: each gap drawn
 * at random within 10% of gap, from that seed), the walks' interval walk_s. */
static struct sim simulate(double gap, double jitter, double walk_s, int n, unsigned *seed)
{
	struct sched_source src[SRC_COUNT];
	double at[SRC_COUNT]; /* when each answer's fetch finished; < 0: none */
	struct sim r = { 0 };
	const int NSRC = shipped.n;
	for (int i = 0; i < NSRC; i++) {
		src[i] = shipped.src[i];
		src[i].interval = src[i].walks ? walk_s : shipped.cheap_s;
		at[i] = -1;
	}
	double t = 0, last = -1;
	for (int k = 0; k < n; k++) {
		for (int i = 0; i < NSRC; i++) {
			src[i].wanted = 1;
			src[i].age = at[i] < 0 ? -1 : t - at[i];
		}
		unsigned fetch = schedule_fetch(src, NSRC, last < 0 ? 0 : t - last);
		int walks = 0;
		for (int i = 0; i < NSRC; i++) {
			if (fetch & (1u << i)) {
				at[i] = t + 0.1;
				walks += src[i].walks;
			} else {
				/* served: an answer exists and is younger than its interval */
				assert_true(src[i].age >= 0);
				assert_true(src[i].age < src[i].interval);
				if (src[i].age > r.max_age)
					r.max_age = src[i].age;
			}
		}
		if (k == 0)
			assert_int_equal(walks, shipped.walks); /* the first scrape fetches everything */
		else if (walks > r.max_walks)
			r.max_walks = walks;
		r.walks += walks;
		last = t;
		if (seed) {
			*seed = *seed * 1103515245u + 12345u;
			t += gap * (0.9 + 0.2 * (double)((*seed >> 16) & 0x7fff) / 32767.0);
		} else {
			t += gap + (k % 2 ? jitter : 0);
		}
	}
	r.scrapes = n;
	return r;
}

/* The defaults at 10 to 60 s: one walk at most per scrape, nothing served past the interval, both
 * walks refreshed (fewer walks in total than two per interval would need at most), and at 30 s
 * two walks in three scrapes (docs/operations.md's table, for the shipped table's two walks). */
static void test_default_intervals(void **state)
{
	(void)state;
	static const double gaps[] = { 10, 15, 20, 30, 45, 60 };
	assert_int_equal(shipped.walks, 2); /* partitions and jobs-users-accts: /metrics/jobs is derived */
	assert_true(shipped.n > shipped.walks);
	for (size_t g = 0; g < sizeof(gaps) / sizeof(gaps[0]); g++) {
		struct sim r = simulate(gaps[g], 0, shipped.jobs_s, 200, NULL);
		if (r.max_walks > 1)
			fail_msg("every %g s: %d walks in one scrape", gaps[g], r.max_walks);
		assert_true(r.max_age < shipped.jobs_s);
		/* each walk refreshed: at most its interval plus one scrape between two fetches of it */
		assert_true(r.walks >= (int)(shipped.walks * 199 * gaps[g] / (shipped.jobs_s + gaps[g])));
		if (gaps[g] == 30 && r.walks > 2 + 199 * 2 / 3)
			fail_msg("every 30 s: %d walks in %d scrapes, more than two in three", r.walks, r.scrapes);
		printf("every %g s: %d walks in %d scrapes (%.2f a scrape), oldest answer served %.1f s\n", gaps[g],
		       r.walks, r.scrapes, (double)r.walks / r.scrapes, r.max_age);
	}
}

/* At 60 s the 60 s interval cannot be kept with one walk a scrape: both are fetched every scrape
 * (as before the policy), nothing stale; a 120 s interval takes turns. */
static void test_sixty_seconds(void **state)
{
	(void)state;
	struct sim r = simulate(60, 0, 60, 50, NULL);
	assert_true(r.max_walks <= 2);
	assert_true(r.max_age < 60);
	printf("every 60 s, interval 60 s: %d walks in %d scrapes, at most %d in one\n", r.walks, r.scrapes, r.max_walks);
	r = simulate(60, 0, 120, 50, NULL);
	assert_int_equal(r.max_walks, 1);
	assert_true(r.max_age < 120);
}

/* Jitter (scrapes 0.5 s late every other time) and a fetch time: still one walk at most. */
static void test_jitter(void **state)
{
	(void)state;
	for (double j = -0.5; j <= 0.5; j += 0.25) {
		struct sim r = simulate(30, j, shipped.jobs_s, 200, NULL);
		if (r.max_walks > 1)
			fail_msg("30 s, jitter %g: %d walks", j, r.max_walks);
		r = simulate(15, j, shipped.jobs_s, 200, NULL);
		if (r.max_walks > 1)
			fail_msg("15 s, jitter %g: %d walks", j, r.max_walks);
	}
}

/* Gaps drawn at random within 10% of 15 and 30 s (a fixed seed: the same sequence every run). */
static void test_random_gaps(void **state)
{
	(void)state;
	static const double gaps[] = { 15, 30 };
	for (size_t g = 0; g < 2; g++) {
		unsigned seed = 12345;
		struct sim r = simulate(gaps[g], 0, shipped.jobs_s, 1000, &seed);
		if (r.max_walks > 1)
			fail_msg("every %g s +-10%%: %d walks in one scrape", gaps[g], r.max_walks);
	}
}

/* The rules one by one: due when missing or at its interval, nothing early without a gap, an early
 * walk only when two would come due by the next scrape (the gap and a quarter), never beside a walk
 * due or in flight of the same upstream, the one closest to due, and per upstream. */
static void test_rules(void **state)
{
	(void)state;
	struct sched_source s[4] = {
		{ .wanted = 1, .walks = 1, .upstream = 0, .age = 30, .interval = 60 },
		{ .wanted = 1, .walks = 1, .upstream = 0, .age = 35, .interval = 60 },
		{ .wanted = 1, .walks = 0, .upstream = 0, .age = -1, .interval = 5 },
		{ .wanted = 0, .walks = 1, .upstream = 1, .age = 50, .interval = 60 }, /* not read yet */
	};
	assert_int_equal(schedule_fetch(s, 4, 0), 1u << 2);           /* no gap known: due only */
	assert_int_equal(schedule_fetch(s, 4, 10), 1u << 2);          /* nothing would come due */
	assert_int_equal(schedule_fetch(s, 4, 30), 1u << 2 | 1u << 1); /* both would: the older now */
	s[3].wanted = 1; /* another upstream's walk, due: fetched, and no bar to upstream 0's early one */
	s[3].age = 60;
	assert_int_equal(schedule_fetch(s, 4, 30), 1u << 2 | 1u << 1 | 1u << 3);
	s[3].wanted = 0;
	s[0].busy = 1;
	s[0].wanted = 0;
	assert_int_equal(schedule_fetch(s, 4, 30), 1u << 2);          /* a walk in flight: none early */
	s[0] = (struct sched_source){ .wanted = 1, .walks = 1, .upstream = 0, .age = 60, .interval = 60 };
	assert_int_equal(schedule_fetch(s, 4, 30), 1u << 2 | 1u << 0); /* one due: no other early */
	s[0].wanted = 0; /* not read by the rows: never fetched, and not counted as coming due: the
			  * other, coming due alone, waits until it is due */
	assert_int_equal(schedule_fetch(s, 4, 30), 1u << 2);
	s[0] = (struct sched_source){ .wanted = 1, .walks = 1, .upstream = 0, .age = 43, .interval = 60 };
	s[1].age = 42;
	/* 42 + 15 < 60, but a scrape a quarter late comes at 60.75: the margin; the one closer to due */
	assert_int_equal(schedule_fetch(s, 4, 15), 1u << 2 | 1u << 0);
	assert_int_equal(schedule_fetch(s, 4, 12), 1u << 2);          /* 42 + 15 < 60 */
}


/* ---- cost-scheduled sources (slurmrestd's /jobs): schedule_cost_* ---- */

/* The daemon's defaults for /jobs, read from the code (options.c): floor 30 s, 1%, back-off at
 * most 600 s, timeout 10 s to 300 s, twice the last usable fetch. */
static struct sched_cost_config jobs_defaults(void)
{
	char *argv[] = { "slurm-exporter-shim", NULL };
	struct options o;
	assert_int_equal(options_parse(&o, 1, argv, stderr), 0);
	return (struct sched_cost_config){ .floor = o.rest_jobs_min_interval, .max_share = (double)o.rest_jobs_max_share / 100.0,
					   .max_backoff = o.rest_jobs_max_backoff, .timeout = o.rest_timeout,
					   .timeout_factor = SCHED_COST_TIMEOUT_FACTOR, .max_timeout = o.rest_jobs_max_timeout };
}

#define NEAR(a, b) assert_true(fabs((a) - (b)) < 1e-9)

/* The share rule: a fetch of d seconds is next started d / share after it started (d / share - d
 * after it ended), never sooner than the floor; share 0 is the floor alone. */
static void test_cost_share(void **state)
{
	(void)state;
	struct sched_cost_config cfg = jobs_defaults();
	assert_true(cfg.floor == 30 && cfg.max_share == 0.01 && cfg.timeout == 10);
	struct sched_cost st = { 0 };
	NEAR(schedule_cost_interval(&cfg, &st), 30);          /* no fetch yet: the floor */
	schedule_cost_record(&st, 2.7, 1);                    /* 5,000 jobs, measured live */
	NEAR(schedule_cost_interval(&cfg, &st), 2.7 / 0.01 - 2.7);
	NEAR(schedule_cost_interval(&cfg, &st) + st.ok_seconds, 270);
	schedule_cost_record(&st, 0.2, 1);                    /* cheap: the floor */
	NEAR(schedule_cost_interval(&cfg, &st), 30);
	schedule_cost_record(&st, 13, 1);                     /* 20,000 jobs */
	NEAR(schedule_cost_interval(&cfg, &st), 1287);
	cfg.max_share = 0.05;
	NEAR(schedule_cost_interval(&cfg, &st), 247);
	cfg.max_share = 0;
	NEAR(schedule_cost_interval(&cfg, &st), 30);
	cfg.max_share = 1;                                    /* 100%: back to back, but the floor */
	NEAR(schedule_cost_interval(&cfg, &st), 30);
	cfg.floor = 0;
	NEAR(schedule_cost_interval(&cfg, &st), 0);
}

/* Back-off: floor x 2^failures, at most max_backoff, never shorter than the share rule over what the
 * failed fetch took; a usable fetch ends it; a floor of 0 has none. */
static void test_cost_backoff(void **state)
{
	(void)state;
	struct sched_cost_config cfg = jobs_defaults();
	struct sched_cost st = { 0 };
	static const double want[] = { 60, 120, 240, 480, 600, 600, 600 };
	schedule_cost_record(&st, 2.7, 1);
	for (size_t k = 0; k < sizeof(want) / sizeof(want[0]); k++) {
		schedule_cost_record(&st, 0.01, 0);           /* refused at once */
		assert_int_equal(st.failures, k + 1);
		NEAR(schedule_cost_interval(&cfg, &st), want[k]);
	}
	assert_true(st.ok_seconds == 2.7);                    /* the cost of the last usable one stays */
	st.failures = 4000000000u;                            /* no overflow, however long it fails */
	NEAR(schedule_cost_interval(&cfg, &st), 600);
	struct sched_cost t = { 0 };
	schedule_cost_record(&t, 10, 0);                      /* timed out: cost slurmrestd 10 s */
	NEAR(schedule_cost_interval(&cfg, &t), 990);          /* the share rule over 10 s beats 60 s */
	schedule_cost_record(&t, 14, 1);                      /* usable: the back-off ends */
	assert_int_equal(t.failures, 0);
	NEAR(schedule_cost_interval(&cfg, &t), 14 / 0.01 - 14);
	cfg.max_backoff = 10;                                 /* a cap below the floor: the floor */
	schedule_cost_record(&t, 0.01, 0);
	NEAR(schedule_cost_interval(&cfg, &t), 30);
	cfg.floor = 0;                                        /* no floor: no back-off, the share rule */
	NEAR(schedule_cost_interval(&cfg, &t), 0.01 / 0.01 - 0.01);
}

/* The timeout: max_timeout until a fetch was usable (and while none has been), then at least
 * --slurmrestd.timeout, twice the last usable fetch, doubled per failure in a row while backing off,
 * at most max_timeout (never below the timeout). */
static void test_cost_timeout(void **state)
{
	(void)state;
	struct sched_cost_config cfg = jobs_defaults();
	struct sched_cost st = { 0 };
	NEAR(schedule_cost_timeout(&cfg, &st), 300);          /* not known yet: all it may take */
	schedule_cost_record(&st, 300, 0);
	NEAR(schedule_cost_timeout(&cfg, &st), 300);
	schedule_cost_record(&st, 2.7, 1);
	NEAR(schedule_cost_timeout(&cfg, &st), 10);
	schedule_cost_record(&st, 13, 1);
	NEAR(schedule_cost_timeout(&cfg, &st), 26);
	schedule_cost_record(&st, 26, 0);                     /* it grew past that: timed out */
	NEAR(schedule_cost_timeout(&cfg, &st), 52);
	schedule_cost_record(&st, 52, 0);
	NEAR(schedule_cost_timeout(&cfg, &st), 104);
	schedule_cost_record(&st, 104, 0);
	NEAR(schedule_cost_timeout(&cfg, &st), 208);
	schedule_cost_record(&st, 208, 0);
	NEAR(schedule_cost_timeout(&cfg, &st), 300);          /* the cap */
	schedule_cost_record(&st, 150, 1);
	NEAR(schedule_cost_timeout(&cfg, &st), 300);
	cfg.max_timeout = 5;                                  /* a cap below the timeout: the timeout */
	NEAR(schedule_cost_timeout(&cfg, &(struct sched_cost){ 0 }), 10);
	NEAR(schedule_cost_timeout(&cfg, &(struct sched_cost){ .ok_seconds = 4 }), 10);
	cfg = jobs_defaults();
	cfg.floor = 0;                                        /* no back-off: no growth */
	NEAR(schedule_cost_timeout(&cfg, &(struct sched_cost){ .ok_seconds = 2, .failures = 3 }), 10);
}

/* The daemon's defaults for every other slurmrestd document (/jobs/state, /nodes, ...), as main.c
 * builds them from the options: floor --slurmrestd.min-interval 5 s, --slurmrestd.max-share 5%, no
 * back-off (max_backoff is the floor), the upstream's timeout alone. */
static struct sched_cost_config light_defaults(void)
{
	char *argv[] = { "slurm-exporter-shim", NULL };
	struct options o;
	assert_int_equal(options_parse(&o, 1, argv, stderr), 0);
	return (struct sched_cost_config){ .floor = o.rest_min_interval, .max_share = (double)o.rest_max_share / 100.0,
					   .max_backoff = o.rest_min_interval, .timeout = o.rest_timeout,
					   .max_timeout = o.rest_timeout };
}

/* /jobs/state by its fetch's wall time measured live (docs/performance.md): at 5,000 jobs (0.1 to
 * 0.75 s) fetched again within one 30 s scrape interval, so fresh at every scrape; at 20,000 jobs
 * (1.5 to 5 s) every one or two to three scrapes; 0 is the floor alone; a failure does not back off
 * and the timeout stays --slurmrestd.timeout. */
static void test_cost_light(void **state)
{
	(void)state;
	struct sched_cost_config cfg = light_defaults();
	assert_true(cfg.floor == 5 && cfg.max_share == 0.05 && cfg.timeout == 10);
	struct sched_cost st = { 0 };
	NEAR(schedule_cost_interval(&cfg, &st), 5);           /* no fetch yet: the floor */
	NEAR(schedule_cost_timeout(&cfg, &st), 10);
	schedule_cost_record(&st, 0.1, 1);                    /* cheap: the floor */
	NEAR(schedule_cost_interval(&cfg, &st), 5);
	schedule_cost_record(&st, 0.75, 1);
	NEAR(schedule_cost_interval(&cfg, &st), 14.25);
	assert_true(schedule_cost_interval(&cfg, &st) + 0.75 < 30); /* due again at the next scrape */
	schedule_cost_record(&st, 1.5, 1);
	NEAR(schedule_cost_interval(&cfg, &st), 28.5);
	schedule_cost_record(&st, 3, 1);                      /* expensive: the share rule */
	NEAR(schedule_cost_interval(&cfg, &st), 57);
	NEAR(schedule_cost_timeout(&cfg, &st), 10);
	schedule_cost_record(&st, 5, 1);
	NEAR(schedule_cost_interval(&cfg, &st), 95);
	schedule_cost_record(&st, 0.01, 0);                   /* refused: no back-off, the floor */
	NEAR(schedule_cost_interval(&cfg, &st), 5);
	schedule_cost_record(&st, 0.01, 0);
	NEAR(schedule_cost_interval(&cfg, &st), 5);
	NEAR(schedule_cost_timeout(&cfg, &st), 10);
	schedule_cost_record(&st, 10, 0);                     /* timed out: the share rule over its cost */
	NEAR(schedule_cost_interval(&cfg, &st), 190);
	schedule_cost_record(&st, 3, 1);
	cfg.max_share = 0;                                    /* off: the floor alone */
	NEAR(schedule_cost_interval(&cfg, &st), 5);
	cfg.floor = cfg.max_backoff = 0;
	NEAR(schedule_cost_interval(&cfg, &st), 0);
	cfg = light_defaults();
	cfg.floor = cfg.max_backoff = 60;                     /* a floor above the share rule */
	NEAR(schedule_cost_interval(&cfg, &st), 60);
}

/* 20,000 jobs (the live measurement's), simulated for two hours with scrapes every 30 s: each /jobs fetch needs
 * 14 s (slurmrestd's CPU while it runs), a fetch whose timeout is shorter fails after its timeout
 * having cost that much. With the old policy (every 30 s, 10 s timeout) every fetch fails and
 * slurmrestd is busy a sixth of the time for nothing (10 s every other scrape); with the cost policy
 * the first fetch is usable and slurmrestd is busy about 1% of the time (the window's end cuts a
 * period short: a little more). */
static double simulate_cost(const struct sched_cost_config *cfg, double need_s, int fixed, int *ok, double *max_age)
{
	struct sched_cost st = { 0 };
	double t = 0, busy = 0, end = -1, ok_at = -1;
	*ok = 0;
	*max_age = 0;
	for (; t < 7200; t += 30) {
		double interval = fixed ? cfg->floor : schedule_cost_interval(cfg, &st);
		if (ok_at >= 0 && t - ok_at > *max_age)
			*max_age = t - ok_at;
		if (end >= 0 && t - end < interval)
			continue;
		double timeout = fixed ? cfg->timeout : schedule_cost_timeout(cfg, &st);
		double took = need_s <= timeout ? need_s : timeout;
		busy += took;
		end = t + took;
		schedule_cost_record(&st, took, need_s <= timeout);
		if (need_s <= timeout) {
			ok_at = end;
			(*ok)++;
		}
	}
	return busy / t;
}

static void test_cost_twenty_thousand(void **state)
{
	(void)state;
	struct sched_cost_config cfg = jobs_defaults();
	int ok;
	double age, share = simulate_cost(&cfg, 14, 1, &ok, &age);
	assert_int_equal(ok, 0);
	assert_true(share > 0.15); /* every other scrape: 10 s of every 60 s */
	printf("fixed 30 s, 10 s timeout: %d usable fetches, slurmrestd busy %.1f%% of the time\n", ok, share * 100);
	share = simulate_cost(&cfg, 14, 0, &ok, &age);
	assert_true(ok >= 5); /* every 1,410 s: the first scrape 1,386 s after a fetch ended */
	assert_true(share <= 0.012);
	assert_true(age <= 14 / 0.01 + 30);                  /* the oldest answer: one period and a scrape */
	printf("cost policy: %d usable fetches, slurmrestd busy %.1f%% of the time, oldest answer %.0f s\n", ok, share * 100, age);
	share = simulate_cost(&cfg, 2.7, 0, &ok, &age);       /* 5,000 jobs */
	assert_true(share <= 0.0105);
	assert_true(age <= 270 + 30);
	printf("5,000 jobs: %d usable fetches, slurmrestd busy %.1f%%, oldest answer %.0f s\n", ok, share * 100, age);
	/* 20,000 jobs on a loaded host: 77 s for the 164 MB (measured live). The default first timeout
	 * lets it be usable; the former 60 s never did, however long it tried. */
	share = simulate_cost(&cfg, 77, 0, &ok, &age);
	assert_true(ok >= 1);
	assert_true(share <= 0.012 + 77 / 7200.0);           /* one fetch more at most, cut by the window */
	printf("77 s fetches: %d usable, slurmrestd busy %.1f%%, oldest answer %.0f s\n", ok, share * 100, age);
	cfg.max_timeout = 60;
	simulate_cost(&cfg, 77, 0, &ok, &age);
	assert_int_equal(ok, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rules),
		cmocka_unit_test(test_default_intervals),
		cmocka_unit_test(test_sixty_seconds),
		cmocka_unit_test(test_jitter),
		cmocka_unit_test(test_random_gaps),
		cmocka_unit_test(test_cost_share),
		cmocka_unit_test(test_cost_backoff),
		cmocka_unit_test(test_cost_timeout),
		cmocka_unit_test(test_cost_light),
		cmocka_unit_test(test_cost_twenty_thousand),
	};
	return cmocka_run_group_tests_name("schedule", tests, setup, NULL);
}
