/* test_http_schedule.c: what is fetched when: N concurrent scrapes cause one fetch per endpoint,
 * only the endpoints the table reads are fetched; the source table (metric-name routing), its one
 * verdict (source_verdict, framing included) and the facts payloads record; each source's interval by
 * its cost class (job walks once per --slurmctld.jobs.min-interval, the two walks taking turns), an
 * empty jobs-users-accts answer vouched by /metrics/nodes, slow fetches counted and logged once per
 * transition. */
#include "http_fixture.h"

struct scrape_arg {
	unsigned port;
	long status;
};

static void *scrape_thread(void *p)
{
	struct scrape_arg *a = p;
	struct resp r;
	http("GET", a->port, "/metrics", &r, 15000);
	a->status = r.status;
	buf_free(&r.body);
	return NULL;
}

/* 16 scrapes at once, against a slow slurmctld: one fetch per endpoint. */
static void test_one_fetch_per_window(void **state)
{
	(void)state;
	struct proc f, s;
	pthread_t t[16];
	struct scrape_arg a[16];
	fake_start(&f, STATE, "--delay-ms", "300", NULL);
	shim_start(&s, f.port, "--slurmctld.min-interval", "30", NULL);
	for (int i = 0; i < 16; i++) {
		a[i].port = s.port;
		pthread_create(&t[i], NULL, scrape_thread, &a[i]);
	}
	for (int i = 0; i < 16; i++) {
		pthread_join(t[i], NULL);
		assert_int_equal(a[i].status, 200);
	}
	/* /metrics/jobs is not read by the shipped table (its job rows are derived): never fetched */
	static const char *const eps[] = { "jobs", "nodes", "partitions", "scheduler", "jobs-users-accts" };
	for (int i = 0; i < 5; i++)
		assert_int_equal(stat_count(f.port, eps[i]), i > 0);
	stop(&s);
	stop(&f);
}

/* Only the endpoints the loaded rows read are fetched: partitions takes slurmctld's node write lock. */
static void test_only_needed_endpoints(void **state)
{
	(void)state;
	struct proc f, s;
	struct resp r;
	tu_write(tu_tmp("sched.json"),
		 "{\"metrics\": [{\"name\": \"slurm_scheduler_threads\", \"help\": \"h\", \"type\": \"gauge\","
		 " \"expr\": \"slurm_server_thread_cnt + 1\", \"fidelity\": \"exact\"},"
		 " {\"name\": \"gpu_only\", \"help\": \"h\", \"type\": \"gauge\", \"expr\": \"sum(slurm_partition_gpus)\","
		 " \"fidelity\": \"exact\", \"enabled_by\": \"gpus-acct\"}]}\n");
	fake_start(&f, STATE, NULL);
	shim_start(&s, f.port, "--mapping.file", tu_tmp("sched.json"), NULL);
	http("GET", s.port, "/metrics", &r, 10000);
	assert_int_equal(r.status, 200);
	assert_non_null(strstr(r.body.data, "\nslurm_scheduler_threads 1\n"));
	buf_free(&r.body);
	assert_int_equal(stat_count(f.port, "scheduler"), 1);
	assert_int_equal(stat_count(f.port, "partitions"), 0); /* the disabled GPU row does not count */
	assert_int_equal(stat_count(f.port, "nodes"), 0);
	assert_int_equal(stat_count(f.port, "jobs"), 0);
	assert_int_equal(stat_count(f.port, "jobs-users-accts"), 0);
	stop(&s);
	stop(&f);
}

/* The source table routes metric names as slurmctld names them, and every row is complete. */
static void test_source_table(void **state)
{
	(void)state;
	assert_int_equal(source_for_metric("slurm_partition_jobs_pending"), SRC_PARTITIONS);
	assert_int_equal(source_for_metric("slurm_partitions"), SRC_PARTITIONS);
	assert_int_equal(source_for_metric("slurm_node_cpus"), SRC_NODES);
	assert_int_equal(source_for_metric("slurm_nodes_idle"), SRC_NODES);
	assert_int_equal(source_for_metric("slurm_user_jobs_pending"), SRC_UA);
	assert_int_equal(source_for_metric("slurm_account_jobs_running"), SRC_UA);
	assert_int_equal(source_for_metric("slurm_jobs_running"), SRC_JOBS);
	assert_int_equal(source_for_metric("slurm_job"), SRC_SCHEDULER);
	assert_int_equal(source_for_metric("slurm_sched_cycle_last"), SRC_SCHEDULER);
	assert_int_equal(source_for_metric("anything"), SRC_SCHEDULER);
	assert_int_equal(source_for_metric("slurmrestd_node_state"), SRC_REST_NODES);
	assert_int_equal(source_for_metric("slurmrestd_partition_cpus_idle"), SRC_REST_NODES);
	assert_int_equal(source_for_metric("slurmrestd_share_fairshare"), SRC_REST_SHARES);
	assert_int_equal(source_for_metric("slurmrestd_jobs_cpus"), SRC_REST_JOBS);
	assert_int_equal(source_for_metric("slurmrestd_diag_server_thread_count"), SRC_REST_DIAG);
	assert_int_equal(source_for_metric("slurmrestd_license_free"), SRC_REST_LICENSES);
	assert_int_equal(source_for_metric("slurmrestd_partition_node_cpus"), SRC_REST_NODES);
	assert_int_equal(source_for_metric("slurmrestd_job_states"), SRC_REST_JOB_STATES);
	assert_int_equal(source_for_metric("slurmrestd_reservation_info"), SRC_REST_RESERVATIONS);
	assert_int_equal(source_for_metric("slurmrestd_node_reservation"), SRC_REST_NODES);
	assert_int_equal(source_for_metric("slurmrestd_association_grp_cpus"), SRC_REST_ASSOCIATIONS);
	assert_int_equal(source_for_metric("slurmrestd_association_info"), SRC_REST_ASSOCIATIONS);
	/* the table's conventions: each fails on a row with a typo or a field left out */
	int catch_all = -1;
	for (int id = 0; id < SRC_COUNT; id++) {
		const struct source *src = &sources[id];
		int native = id < SRC_NATIVE_COUNT;
		char want[128];
		/* slurmctld's sources first, all read by one parser (the OpenMetrics text) */
		assert_int_equal(src->upstream, native ? UPSTREAM_SLURMCTLD : UPSTREAM_SLURMRESTD);
		assert_non_null(src->parser);
		assert_int_equal(src->parser == sources[SRC_JOBS].parser, native);
		assert_true(source_of_upstream(src->upstream) & (1u << id));
		/* its name, path and replay file name the same endpoint ("/slurm/{version}/jobs/state":
		 * slurmrestd-jobs-state, rest_jobs_state.json) */
		const char *top = native ? "/metrics/" : strncmp(src->path, "/slurmdb/", 9) ? "/slurm/{version}/" :
			"/slurmdb/{version}/"; /* slurmdbd's, through slurmrestd */
		assert_true(!strncmp(src->path, top, strlen(top)));
		char leaf[64], dash[64], under[64];
		snprintf(leaf, sizeof(leaf), "%s", src->path + strlen(top));
		for (size_t k = 0; k <= strlen(leaf); k++) {
			dash[k] = leaf[k] == '/' ? '-' : leaf[k];
			under[k] = leaf[k] == '/' ? '_' : leaf[k];
		}
		snprintf(want, sizeof(want), native ? "%s" : "slurmrestd-%s", dash);
		assert_string_equal(src->name, want);
		snprintf(want, sizeof(want), native ? "metrics_%s.txt" : "rest_%s.json", under);
		assert_string_equal(src->file, want);
		/* and a capture holds that file (the associations: the states captured with them) */
		snprintf(want, sizeof(want), "tests/fixtures/peers-25.11/%s/%s",
			 id == SRC_REST_ASSOCIATIONS ? "P8-account-limits" : "P1-busy-mix", src->file);
		if (access(want, R_OK))
			fail_msg("source %s: no replay file %s", src->name, want);
		for (int j = 0; j < id; j++)
			assert_string_not_equal(src->name, sources[j].name);
		/* the names it serves route to it */
		for (const char *const *pre = src->prefixes; pre && *pre; pre++) {
			snprintf(want, sizeof(want), "%sx", *pre);
			assert_int_equal(source_for_metric(want), id);
		}
		/* an empty answer's voucher is another source of its upstream, which needs no voucher */
		if (src->empty_ok && src->empty_vouched_by >= 0) {
			const struct source *v = &sources[src->empty_vouched_by];
			assert_true(src->empty_vouched_by < SRC_COUNT && src->empty_vouched_by != id);
			assert_int_equal(v->upstream, src->upstream);
			assert_false(v->empty_ok);
		}
		if (src->catch_all) {
			assert_int_equal(catch_all, -1); /* one catch-all */
			catch_all = id;
		}
	}
	assert_int_equal(source_for_metric("anything"), catch_all);
}

/* One verdict: every fault, status and body case gives its reason, and a missing token matters
 * only for a 401. */
static void test_source_verdict(void **state)
{
	(void)state;
	char why[240];
	struct source_facts f = { .http_status = 200, .len = 10, .nnamed = 1 };
	const struct source *jobs = &sources[SRC_JOBS], *ua = &sources[SRC_UA];
	assert_int_equal(source_verdict(jobs, &f, why, sizeof(why)), VERDICT_OK);
	f.fault = FAULT_NO_TOKEN;
	snprintf(f.detail, sizeof(f.detail), "token file t is empty");
	assert_int_equal(source_verdict(jobs, &f, why, sizeof(why)), VERDICT_OK);
	f.http_status = 401;
	assert_int_equal(source_verdict(jobs, &f, why, sizeof(why)), VERDICT_FAULT);
	assert_string_equal(why, "/metrics/jobs: 401 Unauthorized and no usable token: token file t is empty");
	f.fault = FAULT_NONE;
	assert_int_equal(source_verdict(jobs, &f, why, sizeof(why)), VERDICT_STATUS);
	assert_non_null(strstr(why, "/metrics/jobs: 401 Unauthorized: Slurm 25.11"));
	f.http_status = 500;
	assert_int_equal(source_verdict(jobs, &f, why, sizeof(why)), VERDICT_STATUS);
	assert_string_equal(why, "/metrics/jobs: HTTP status 500");
	f.fault = FAULT_TOO_BIG;
	f.limit = 100;
	assert_int_equal(source_verdict(jobs, &f, why, sizeof(why)), VERDICT_FAULT);
	assert_string_equal(why, "/metrics/jobs: body larger than 100 bytes (--slurmctld.max-body)");
	f.from_file = 1;
	source_verdict(jobs, &f, why, sizeof(why));
	assert_string_equal(why, "/metrics/jobs: file larger than --slurmctld.max-body");
	f.fault = FAULT_DEADLINE;
	source_verdict(jobs, &f, why, sizeof(why));
	assert_string_equal(why, "/metrics/jobs: scrape deadline passed while waiting for the fetch in flight");
	f = (struct source_facts){ .http_status = 200 };
	assert_int_equal(source_verdict(jobs, &f, why, sizeof(why)), VERDICT_EMPTY);
	assert_int_equal(source_verdict(ua, &f, why, sizeof(why)), VERDICT_OK);
	f.len = 5;
	assert_int_equal(source_verdict(ua, &f, why, sizeof(why)), VERDICT_NO_FAMILY);
	assert_string_equal(why, "/metrics/jobs-users-accts: the answer (5 bytes) names no metric family");
	f.malformed = 2;
	f.first_line = 3;
	f.first_reason = "missing value";
	assert_int_equal(source_verdict(ua, &f, why, sizeof(why)), VERDICT_MALFORMED);
	assert_string_equal(why, "/metrics/jobs-users-accts: 2 malformed line(s), first at line 3: missing value");
}

/* The framing facts: headers that never ended make any answer unusable (the empty "no jobs"
 * jobs-users-accts answer included); a slurmctld 200 body needs a length and all of it; an empty
 * 200 without a length is slurmctld's own "no jobs" answer; slurmrestd needs no length. */
static void test_source_verdict_framing(void **state)
{
	(void)state;
	char why[240];
	const struct source *ua = &sources[SRC_UA], *nodes = &sources[SRC_NODES], *rest = &sources[SRC_REST_NODES];
	struct source_facts f = { .http_status = 200, .unframed = 1 };
	assert_int_equal(source_verdict(ua, &f, why, sizeof(why)), VERDICT_OK);
	f.headers_cut = 1;
	assert_int_equal(source_verdict(ua, &f, why, sizeof(why)), VERDICT_CUT);
	assert_string_equal(why, "/metrics/jobs-users-accts: the answer ended inside its headers (HTTP 200, then the "
				 "connection closed): not an answer");
	f.http_status = 503;
	assert_int_equal(source_verdict(ua, &f, why, sizeof(why)), VERDICT_CUT);
	f = (struct source_facts){ .http_status = 200, .len = 10, .nnamed = 1, .unframed = 1 };
	assert_int_equal(source_verdict(nodes, &f, why, sizeof(why)), VERDICT_CUT);
	assert_string_equal(why, "/metrics/nodes: 200 with a body but no Content-Length (slurmctld always sends one): "
				 "cannot tell it from an answer cut short");
	assert_int_equal(source_verdict(rest, &f, why, sizeof(why)), VERDICT_OK);
	f.unframed = 0;
	f.content_length = 11;
	assert_int_equal(source_verdict(rest, &f, why, sizeof(why)), VERDICT_CUT);
	assert_string_equal(why, "/slurm/{version}/nodes: body cut short: 10 of 11 bytes (Content-Length)");
	f.content_length = 10;
	assert_int_equal(source_verdict(nodes, &f, why, sizeof(why)), VERDICT_OK);
	f.http_status = 500; /* a status other than 200 is judged by its status */
	f.content_length = 11;
	assert_int_equal(source_verdict(nodes, &f, why, sizeof(why)), VERDICT_STATUS);
}

/* The verdicts of one set of payloads, as a render takes them (a table of no row). */
static int verdicts(const struct payload *const in[SRC_COUNT], struct render_result *res)
{
	static const struct mapping none;
	const struct render_in ri = { .m = &none, .flags = 0, .p = in };
	struct buf out;
	buf_init(&out, 0);
	int status = render_run(&ri, &out, res);
	render_result_free(res);
	buf_free(&out);
	return status;
}

/* Payloads record facts (the first fault wins) and payload_finish judges them; an empty
 * jobs-users-accts answer counts only while /metrics/nodes is usable (the shipped table does not
 * fetch /metrics/jobs), and a scrape needing it fetches its voucher too. */
static void test_payload_facts(void **state)
{
	(void)state;
	struct payload *p = payload_new(SRC_NODES, 7, NULL, NULL);
	assert_int_equal(p->gen, 7);
	assert_int_equal(payload_feed(p, "x 1\n", 4, 0), PAYLOAD_FEED_MORE);
	assert_int_equal(payload_feed(p, "y 2\n", 4, 6), PAYLOAD_FEED_TOO_BIG);
	payload_fault(p, FAULT_TRANSPORT, "later");
	payload_finish(p);
	assert_false(p->ok);
	assert_string_equal(p->reason, "/metrics/nodes: body larger than 6 bytes (--slurmctld.max-body)");
	assert_int_equal(p->expo.nfams, 0);
	payload_unref(p);

	p = payload_new(SRC_NODES, 0, NULL, NULL);
	payload_restart(p, 200);
	assert_int_equal(payload_feed(p, "bad", 3, 0), PAYLOAD_FEED_MORE);
	payload_restart(p, 200); /* a redirect: what came before is forgotten */
	assert_int_equal(payload_feed(p, "x 1\n", 4, 0), PAYLOAD_FEED_MORE);
	payload_finish(p);
	assert_true(p->ok);
	assert_int_equal(p->len, 4);
	assert_int_equal(p->parse_errors, 0);
	assert_non_null(expo_find(&p->expo, "x", 1));

	/* the rule across sources, as a render applies it (render_run's result record) */
	const struct payload *in[SRC_COUNT] = { 0 };
	struct payload *ua = payload_new(SRC_UA, 0, NULL, NULL);
	payload_finish(ua);
	struct payload *nodes = payload_new(SRC_NODES, 0, NULL, NULL);
	payload_finish(nodes); /* empty: /metrics/nodes failed */
	in[SRC_UA] = ua;
	struct render_result res;
	assert_int_equal(verdicts(in, &res), 200);
	assert_true(res.src[SRC_UA].up); /* nothing says otherwise */
	in[SRC_NODES] = nodes;
	assert_int_equal(verdicts(in, &res), 503);
	assert_false(res.src[SRC_UA].up);
	assert_string_equal(res.src[SRC_UA].reason,
			    "/metrics/jobs-users-accts: empty answer, and /metrics/nodes failed: cannot tell \"no jobs\" from \"no metrics\"");
	in[SRC_SCHEDULER] = p;
	assert_int_equal(verdicts(in, &res), 200);
	assert_true(res.src[SRC_SCHEDULER].up && !res.src[SRC_UA].up && !res.src[SRC_NODES].up);
	in[SRC_NODES] = p; /* nodes answered: the empty answer means no jobs */
	assert_int_equal(verdicts(in, &res), 200);
	assert_true(res.src[SRC_UA].up);
	/* the voucher is fetched with what it vouches for */
	assert_int_equal(source_with_vouchers(1u << SRC_UA), 1u << SRC_UA | 1u << SRC_NODES);
	assert_int_equal(source_with_vouchers(1u << SRC_PARTITIONS), 1u << SRC_PARTITIONS);
	payload_unref(ua);
	payload_unref(nodes);
	payload_unref(p);
}

/* Whether --help's line for flag ends with text. */
static int help_line_has(const char *help, const char *flag, const char *text)
{
	const char *line = strstr(help, flag);
	const char *eol = line ? strchr(line, '\n') : NULL;
	size_t n = strlen(text);
	return eol && (size_t)(eol - line) >= n && !strncmp(eol - n, text, n);
}

/* The cost classes: with the default flags, three scrapes 6 s apart fetch the job-walking
 * endpoints at most three times in all (nine when every endpoint had one interval) and
 * /metrics/jobs never (the queue rows sum jobs-users-accts). Scaled: three scrapes 1.2 s apart with the jobs interval at its default
 * (60 s) and the cheap one at 1 s (as 6 s apart with the defaults 60 and 5): each walk once, each
 * cheap endpoint three times, and the age of the reused answers served. The defaults themselves are
 * checked in --help. */
static void test_job_walks_per_interval(void **state)
{
	(void)state;
	struct proc f, s;
	struct resp r = { 0 };
	/* the cost class, in the source table: the job walks, and nothing else */
	for (int id = 0; id < SRC_COUNT; id++)
		assert_int_equal(sources[id].walks_jobs,
				 id == SRC_JOBS || id == SRC_PARTITIONS || id == SRC_UA || id == SRC_REST_JOBS);
	fake_start(&f, STATE, NULL);
	shim_start(&s, f.port, "--slurmctld.min-interval", "1", NULL);
	for (int i = 0; i < 3; i++) {
		if (i) {
			buf_free(&r.body);
			tu_sleep_ms(1200); /* after the answer: every cheap answer is older than 1 s by then */
		}
		http("GET", s.port, "/metrics", &r, 10000);
		assert_int_equal(r.status, 200);
	}
	static const char *const walks[] = { "partitions", "jobs-users-accts" };
	assert_int_equal(stat_count(f.port, "jobs"), 0); /* derived from jobs-users-accts: never fetched */
	assert_true(stat_count(f.port, "partitions") + stat_count(f.port, "jobs-users-accts") <= 3);
	for (int i = 0; i < 2; i++) {
		assert_int_equal(stat_count(f.port, walks[i]), 1);
		/* reused, and its age visible: at least the two pauses */
		assert_true(self_value(r.body.data, "slurm_exporter_shim_payload_age_seconds", walks[i]) >= 2.4);
	}
	assert_int_equal(stat_count(f.port, "nodes"), 3);
	assert_int_equal(stat_count(f.port, "scheduler"), 3);
	double age = self_value(r.body.data, "slurm_exporter_shim_payload_age_seconds", "nodes");
	assert_true(age >= 0 && age < 1.2);
	buf_free(&r.body);
	stop(&s);
	stop(&f);

	/* the defaults, from the flag table */
	char *out = NULL;
	char *argv[] = { (char *)tu_shim_bin(), "--help", NULL };
	assert_int_equal(tu_run(argv, NULL, &out, NULL, NULL), 0);
	assert_true(help_line_has(out, "--slurmctld.jobs.min-interval SECONDS", "(0 to 86400, default 75)"));
	assert_true(help_line_has(out, "--slurmctld.min-interval SECONDS", "(0 to 86400, default 5)"));
	free(out);
}

/* A fetch longer than --log.slow-fetch (default 1 s) is counted per endpoint, and the log
 * says so once when an endpoint becomes slow and once when it is fast again, not every scrape. */
static void test_slow_fetch_logged_once(void **state)
{
	(void)state;
	struct proc f, s;
	struct resp r;
	static const char *const eps[] = { "nodes", "partitions", "scheduler", "jobs-users-accts" };
	fake_start(&f, STATE, "--delay-ms", "1300", NULL);
	shim_start(&s, f.port, "--slurmctld.min-interval", "0", "--slurmctld.jobs.min-interval", "0", NULL);
	for (int i = 0; i < 3; i++) {
		if (i == 2) { /* slurmctld fast again */
			http("GET", f.port, "/_delay-ms/0", &r, 5000);
			assert_int_equal(r.status, 200);
			buf_free(&r.body);
		}
		http("GET", s.port, "/metrics", &r, 20000);
		assert_int_equal(r.status, 200);
		for (int k = 0; k < 4; k++) {
			double want = i == 0 ? 1 : 2;
			assert_true(self_value(r.body.data, "slurm_exporter_shim_slow_fetches_total", eps[k]) == want);
			assert_true(self_value(r.body.data, "slurm_exporter_shim_upstream_fetches_total", eps[k]) == i + 1);
		}
		buf_free(&r.body);
		/* and on the status page: the last scrape's slow fetches, with the threshold and the count */
		http("GET", s.port, "/", &r, 5000);
		assert_int_equal(r.status, 200);
		if (i < 2) {
			char want[120];
			snprintf(want, sizeof(want), "Slow: jobs-users-accts took 1.");
			assert_non_null(strstr(r.body.data, want));
			snprintf(want, sizeof(want), "(over --log.slow-fetch 1 s; %d slow fetches since start)", i + 1);
			assert_int_equal(count_of(r.body.data, want), 4);
			assert_int_equal(count_of(r.body.data, " s (slow)</td>"), 4);
		} else {
			assert_null(strstr(r.body.data, "Slow: "));
			assert_null(strstr(r.body.data, "(slow)"));
		}
		buf_free(&r.body);
	}
	stop(&s);
	char *log = tu_slurp(s.log, NULL);
	assert_non_null(log);
	for (int k = 0; k < 4; k++) {
		char slow[80], fast[80];
		snprintf(slow, sizeof(slow), "endpoint /metrics/%s is slow: one fetch took 1.", eps[k]);
		snprintf(fast, sizeof(fast), "endpoint /metrics/%s is fast again", eps[k]);
		assert_int_equal(count_of(log, slow), 1);
		assert_int_equal(count_of(log, fast), 1);
	}
	free(log);
	stop(&f);
}

/* ---- At most one job walk per scrape (src/schedule.c) ---- */

/* The two job walks take turns: scaled by 10 (a 6 s jobs interval, scrapes 2 s apart; the cheap
 * interval 0), the first scrape fetches both, the second neither (4.5 s < 6 s by the next), the
 * third one of them early (4 + 2.5 >= 6 for both: the older now), so that the fourth finds only the
 * other one due: 2, 0, 1, 1 walks. Asserted: at most one walk in each scrape after the first, and
 * at least three in all (a slow machine may move the early one a scrape, never add a second).
 * Without the policy the third fetches none and the fourth both. */
static void test_job_walks_take_turns(void **state)
{
	(void)state;
	struct proc f, s;
	struct resp r;
	int before = 0;
	fake_start(&f, STATE, NULL);
	shim_start(&s, f.port, "--slurmctld.min-interval", "0", "--slurmctld.jobs.min-interval", "6", NULL);
	for (int i = 0; i < 4; i++) {
		if (i)
			tu_sleep_ms(2000);
		http("GET", s.port, "/metrics", &r, 10000);
		assert_int_equal(r.status, 200);
		for (int k = 0; k < 2; k++) /* nothing served at or past its interval */
			assert_true(self_value(r.body.data, "slurm_exporter_shim_payload_age_seconds",
					       k ? "partitions" : "jobs-users-accts") < 6);
		buf_free(&r.body);
		int walks = stat_count(f.port, "partitions") + stat_count(f.port, "jobs-users-accts");
		if (i == 0 ? walks != 2 : walks - before > 1)
			fail_msg("scrape %d fetched %d job walks", i + 1, walks - before);
		before = walks;
		assert_int_equal(stat_count(f.port, "nodes"), i + 1);
	}
	assert_true(before >= 3);
	assert_int_equal(stat_count(f.port, "jobs"), 0);
	stop(&s);
	stop(&f);
}

/* An empty jobs-users-accts answer (no jobs) is vouched by /metrics/nodes now that /metrics/jobs is
 * not fetched: a table that reads only jobs-users-accts fetches nodes with it, and with nodes
 * failing the empty answer proves nothing (503) instead of a 0 nobody checked. */
static void test_empty_ua_vouched_by_nodes(void **state)
{
	(void)state;
	struct proc f, s;
	struct resp r;
	const char *path = tu_tmp("ua-only.json");
	tu_write(path, "{\"metrics\": [{\"name\": \"q\", \"help\": \"h\", \"type\": \"gauge\","
		       " \"expr\": \"sum(slurm_account_jobs_pending) or vector(0)\", \"absent_ok\": [\"slurm_account_jobs_pending\"],"
		       " \"fidelity\": \"exact\"}]}\n");
	for (int fail = 0; fail < 2; fail++) {
		if (fail)
			fake_start(&f, "tests/fixtures/slurm-25.11/01-idle", "--fault", "500", "--fault-endpoint", "nodes", NULL);
		else
			fake_start(&f, "tests/fixtures/slurm-25.11/01-idle", NULL);
		shim_start(&s, f.port, "--mapping.file", path, NULL);
		http("GET", s.port, "/metrics", &r, 10000);
		assert_int_equal(stat_count(f.port, "jobs-users-accts"), 1);
		assert_int_equal(stat_count(f.port, "nodes"), 1); /* the voucher, read by no row */
		assert_int_equal(stat_count(f.port, "jobs"), 0);
		if (fail) {
			if (r.status != 503 || !strstr(r.body.data, "/metrics/jobs-users-accts: empty answer, and /metrics/nodes failed"))
				fail_msg("nodes failing: status %ld, body:\n%s", r.status, r.body.data);
		} else {
			assert_int_equal(r.status, 200);
			assert_non_null(strstr(r.body.data, "\nq 0\n"));
		}
		buf_free(&r.body);
		stop(&s);
		stop(&f);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_one_fetch_per_window, kill_children),
		cmocka_unit_test_teardown(test_only_needed_endpoints, kill_children),
		cmocka_unit_test(test_source_table),
		cmocka_unit_test(test_source_verdict),
		cmocka_unit_test(test_source_verdict_framing),
		cmocka_unit_test(test_payload_facts),
		cmocka_unit_test_teardown(test_job_walks_per_interval, kill_children),
		cmocka_unit_test_teardown(test_slow_fetch_logged_once, kill_children),
		cmocka_unit_test_teardown(test_job_walks_take_turns, kill_children),
		cmocka_unit_test_teardown(test_empty_ua_vouched_by_nodes, kill_children),
	};
	return http_fixture_run("http_schedule", tests, sizeof(tests) / sizeof(tests[0]));
}
