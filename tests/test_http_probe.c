/* test_http_probe.c: /probe?target=NAME (--probe.targets-file): each target its state's output and its
 * own scraper, unknown, hostile, repeated or differently cased targets 400 with nothing fetched, basic
 * auth before the name is looked at. The targets file itself: test_probe.c. */
#include "http_fixture.h"

static void expect_400(unsigned port, const char *path, const char *body)
{
	struct resp r;
	http("GET", port, path, &r, 5000);
	assert_int_equal(r.status, 400);
	assert_string_equal(r.ctype, "text/plain; charset=utf-8");
	if (strcmp(r.body.data, body))
		fail_msg("%s: got \"%s\", want \"%s\"", path, r.body.data, body);
	buf_free(&r.body);
}

/* A missing or unknown target gets 400 with the name escaped, and nothing is fetched: a URL in the
 * query string is a name like any other; a %00 is not decoded (test_nul_in_path), so it cuts no name
 * short. */
static void test_probe_unknown_target(void **state)
{
	(void)state;
	struct probe_env e;
	struct resp r;
	char path[256], body[256];
	probe_start(&e, NULL, NULL);
	expect_400(e.s.port, "/probe", "missing parameter \"target\"\n");
	expect_400(e.s.port, "/probe?module=idle", "missing parameter \"target\"\n");
	expect_400(e.s.port, "/probe?target=", "unknown target \"\"\n");
	expect_400(e.s.port, "/probe?target=nope", "unknown target \"nope\"\n");
	expect_400(e.s.port, "/probe?target=idle%00x", "unknown target \"idle%00x\"\n");
	expect_400(e.s.port, "/probe?target=idle%00", "unknown target \"idle%00\"\n");
	expect_400(e.s.port, "/probe?target=IDLE", "unknown target \"IDLE\"\n");
	expect_400(e.s.port, "/probe?target=%1b%5b31m%22%5c%ff", "unknown target \"\\x1b[31m\\x22\\x5c\\xff\"\n");
	snprintf(path, sizeof(path), "/probe?target=http://127.0.0.1:%u", e.c.port);
	snprintf(body, sizeof(body), "unknown target \"http://127.0.0.1:%u\"\n", e.c.port);
	expect_400(e.s.port, path, body);
	snprintf(path, sizeof(path), "/probe?target=http%%3A%%2F%%2F127.0.0.1%%3A%u%%2Fmetrics", e.c.port);
	snprintf(body, sizeof(body), "unknown target \"http://127.0.0.1:%u/metrics\"\n", e.c.port);
	expect_400(e.s.port, path, body);
	assert_int_equal(fake_requests(e.a.port), 0);
	assert_int_equal(fake_requests(e.b.port), 0);
	assert_int_equal(fake_requests(e.c.port), 0);
	/* a known target fetches its own fake only, never the one named in the query */
	snprintf(path, sizeof(path), "/probe?target=busy&url=http://127.0.0.1:%u&slurmctld_url=http://127.0.0.1:%u",
		 e.c.port, e.c.port);
	http("GET", e.s.port, path, &r, 10000);
	assert_int_equal(r.status, 200);
	buf_free(&r.body);
	assert_int_equal(fake_requests(e.a.port), 0);
	assert_int_equal(fake_requests(e.b.port), 4);
	assert_int_equal(fake_requests(e.c.port), 0);
	probe_stop(&e);
	/* without --probe.targets-file there is no /probe */
	fake_start(&e.a, IDLE, NULL);
	shim_start(&e.s, e.a.port, NULL);
	http("GET", e.s.port, "/probe?target=idle", &r, 5000);
	assert_int_equal(r.status, 404);
	buf_free(&r.body);
	stop(&e.s);
	stop(&e.a);
}

/* The parameter is `target`, exactly, as the blackbox exporter reads it (Go's url.Values, case
 * sensitive): TARGET or Target is some other parameter. libmicrohttpd's lookup matched any case. */
static void test_probe_target_exact_case(void **state)
{
	(void)state;
	struct probe_env e;
	struct resp r;
	probe_start(&e, NULL, NULL);
	expect_400(e.s.port, "/probe?TARGET=idle", "missing parameter \"target\"\n");
	expect_400(e.s.port, "/probe?Target=busy", "missing parameter \"target\"\n");
	http("GET", e.s.port, "/probe?TARGET=nope&target=busy", &r, 10000); /* the other case is not a second target */
	assert_int_equal(r.status, 200);
	buf_free(&r.body);
	assert_int_equal(fake_requests(e.a.port), 0);
	assert_int_equal(fake_requests(e.b.port), 4);
	probe_stop(&e);
}

/* A repeated target is refused (400, nothing fetched): the blackbox exporter would take the first,
 * a proxy or cache in front may take the last, and the answer would be another cluster's than the
 * one the URL seems to name. Prometheus sends one (__param_target is one label). */
static void test_probe_repeated_target(void **state)
{
	(void)state;
	struct probe_env e;
	probe_start(&e, NULL, NULL);
	expect_400(e.s.port, "/probe?target=idle&target=busy", "parameter \"target\" given 2 times: give it once\n");
	expect_400(e.s.port, "/probe?target=busy&module=x&target=busy&target", "parameter \"target\" given 3 times: give it once\n");
	assert_int_equal(fake_requests(e.a.port), 0);
	assert_int_equal(fake_requests(e.b.port), 0);
	probe_stop(&e);
}

/* Each target's answer is its state's --once output (self metrics aside), with /metrics' headers;
 * /metrics still serves --slurmctld.url. */
static void test_probe_targets(void **state)
{
	(void)state;
	struct probe_env e;
	struct resp r;
	probe_start(&e, NULL, NULL);
	static const struct {
		const char *path, *dir;
	} cases[] = { { "/probe?target=idle", IDLE }, { "/probe?module=slurm&target=busy&debug=1", BUSY }, { "/metrics", IDLE } };
	for (size_t i = 0; i < 3; i++) {
		http("GET", e.s.port, cases[i].path, &r, 10000);
		assert_int_equal(r.status, 200);
		assert_string_equal(r.ctype, "text/plain; version=0.0.4; charset=utf-8");
		char *once = once_output(cases[i].dir, NULL);
		char *a = legacy_part(r.body.data), *b = legacy_part(once);
		if (strcmp(a, b) != 0)
			fail_msg("%s: differs from --once --replay-dir %s", cases[i].path, cases[i].dir);
		assert_true(strlen(a) > 3000);
		free(a);
		free(b);
		free(once);
		buf_free(&r.body);
	}
	char *idle = once_output(IDLE, NULL), *busy = once_output(BUSY, NULL);
	assert_string_not_equal(idle, busy); /* the two states tell the targets apart */
	free(idle);
	free(busy);
	http("HEAD", e.s.port, "/probe?target=busy", &r, 5000);
	assert_int_equal(r.status, 200);
	assert_int_equal(r.body.len, 1);
	buf_free(&r.body);
	http("GET", e.s.port, "/", &r, 5000); /* the status page links every target */
	assert_non_null(strstr(r.body.data, "<a href=\"/probe?target=idle\"><code>idle</code></a>, "
					    "<a href=\"/probe?target=busy\"><code>busy</code></a>, "
					    "<a href=\"/probe?target=down\"><code>down</code></a></p>"));
	buf_free(&r.body);
	assert_int_equal(fake_requests(e.c.port), 0);
	probe_stop(&e);
}

/* Each target has its own coalescing, cache and self metrics: a down target's failures are not in
 * another's answer; the same controller scraped through /metrics and a target is fetched once by
 * each; SIGHUP reloads a target's own mapping. */
static void test_probe_own_scraper(void **state)
{
	(void)state;
	struct probe_env e;
	struct resp r;
	probe_start(&e, NULL, NULL);
	http("GET", e.s.port, "/probe?target=down", &r, 10000);
	assert_int_equal(r.status, 503);
	buf_free(&r.body);
	for (int i = 0; i < 2; i++) {
		http("GET", e.s.port, "/probe?target=idle", &r, 10000);
		assert_int_equal(r.status, 200);
		static const char *const eps[] = { "nodes", "partitions", "scheduler", "jobs-users-accts" };
		for (int k = 0; k < 4; k++) { /* every endpoint up: the down target's failures are its own */
			char want[96];
			snprintf(want, sizeof(want), "slurm_exporter_shim_up{endpoint=\"%s\"} 1\n", eps[k]);
			assert_non_null(strstr(r.body.data, want));
		}
		assert_non_null(strstr(r.body.data, "slurm_exporter_shim_http_status{endpoint=\"nodes\"} 200\n"));
		assert_non_null(strstr(r.body.data, "slurm_exporter_shim_upstream_fetches_total{endpoint=\"nodes\"} 1\n"));
		buf_free(&r.body);
	}
	http("GET", e.s.port, "/metrics", &r, 10000);
	assert_int_equal(r.status, 200);
	assert_non_null(strstr(r.body.data, "slurm_exporter_shim_upstream_fetches_total{endpoint=\"nodes\"} 1\n"));
	buf_free(&r.body);
	assert_int_equal(stat_count(e.a.port, "nodes"), 2); /* one per scraper, each reused once */
	tu_write(tu_tmp("probe-idle.json"), "{\"metrics\": [{\"name\": \"probe_only_row\", \"help\": \"h\", "
						  "\"type\": \"gauge\", \"expr\": \"slurm_nodes\", \"fidelity\": \"exact\"}]}\n");
	kill(e.s.pid, SIGHUP);
	char *log = NULL;
	for (int i = 0; i < 200 && !(log && strstr(log, "target idle: mapping reloaded: 1 rows")); i++) {
		free(log);
		tu_sleep_ms(25);
		log = tu_slurp(e.s.log, NULL);
	}
	assert_non_null(strstr(log, "target idle: mapping reloaded: 1 rows"));
	free(log);
	http("GET", e.s.port, "/probe?target=idle", &r, 10000);
	assert_non_null(strstr(r.body.data, "\nprobe_only_row "));
	assert_null(strstr(r.body.data, "slurm_cpus_total"));
	buf_free(&r.body);
	http("GET", e.s.port, "/metrics", &r, 10000); /* the global table is the global file's */
	assert_null(strstr(r.body.data, "probe_only_row"));
	assert_non_null(strstr(r.body.data, "slurm_cpus_total"));
	buf_free(&r.body);
	probe_stop(&e);
}

/* Basic auth applies to /probe, before the target is looked at (no name oracle without it). */
static void test_probe_basic_auth(void **state)
{
	(void)state;
	struct probe_env e;
	struct resp r;
	probe_start(&e, "--web.config.file", "tests/webconfig/auth_only.yml");
	http("GET", e.s.port, "/probe?target=idle", &r, 5000);
	assert_int_equal(r.status, 401);
	buf_free(&r.body);
	http("GET", e.s.port, "/probe?target=nope", &r, 5000);
	assert_int_equal(r.status, 401);
	buf_free(&r.body);
	assert_int_equal(fake_requests(e.a.port), 0);
	http_hdr("GET", e.s.port, "/probe?target=idle", "Authorization: Basic YWxpY2U6Y29ycmVjdCBob3JzZQ==", &r, 10000);
	assert_int_equal(r.status, 200);
	buf_free(&r.body);
	probe_stop(&e);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_probe_unknown_target, kill_children),
		cmocka_unit_test_teardown(test_probe_target_exact_case, kill_children),
		cmocka_unit_test_teardown(test_probe_repeated_target, kill_children),
		cmocka_unit_test_teardown(test_probe_targets, kill_children),
		cmocka_unit_test_teardown(test_probe_own_scraper, kill_children),
		cmocka_unit_test_teardown(test_probe_basic_auth, kill_children),
	};
	return http_fixture_run("http_probe", tests, sizeof(tests) / sizeof(tests[0]));
}
