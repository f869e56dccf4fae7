/* test_http_server.c: the shim as a daemon over HTTP, against tests/fake_slurmctld (which answers with
 * slurmctld's exact framing), its core: the HTTP output equals --once --replay-dir on every capture
 * (families and values); routes, methods, content type, a %00 in the path; the fault matrix (401
 * PrivateData, 403, 500, 303 from a standby, empty 200, garbage, a body cut mid-line, no answer,
 * connection refused, a body over the cap, unescaped quotes, duplicate series, NaN; partial failure
 * leaves only the affected families out), a header line over libcurl's limit, a hostile reason escaped
 * once; the JWT sent and never shown, and only to --slurmctld.url's origin (a redirect elsewhere is
 * followed without it); SIGHUP reloads the mapping, an invalid one is refused and reported. */
#include "http_fixture.h"

/* shim_start with a whole --slurmctld.url (a path under the fake: its /_hostile-redirect/ and
 * /_header-bytes/N/ routes) and at most 2 extra flags (NULL: none). */
static void shim_start_url(struct proc *s, const char *url, const char *extra1, const char *extra2)
{
	char listen[64];
	char *argv[] = { (char *)tu_shim_bin(), "--web.listen-address", listen, "--slurmctld.url", (char *)url,
			 "--mapping.file", MAPPING, "--log.level", "debug", (char *)extra1, (char *)extra2, NULL };
	shim_launch(s, argv, listen);
}

/* Over HTTP, from a fake slurmctld, the same families and values as --once on the same capture:
 * every captured state of both Slurm versions, with the GPU families on. */
static void test_http_equals_once(void **state)
{
	(void)state;
	static const char *const states[] = {
		"tests/fixtures/slurm-25.11/01-idle", "tests/fixtures/slurm-25.11/02-busy-mix", STATE,
		"tests/fixtures/slurm-25.11/04-resumed-busy", "tests/fixtures/slurm-26.05/01-idle",
		"tests/fixtures/slurm-26.05/01-idle-slurmdbd", "tests/fixtures/slurm-26.05/02-busy-gpu",
		"tests/fixtures/slurm-26.05/02-busy-gpu-no-slurmdbd", "tests/fixtures/slurm-26.05/03-gpu-noacct-drain",
	};
	for (size_t i = 0; i < sizeof(states) / sizeof(states[0]); i++) {
		struct proc f, s;
		struct resp r;
		fake_start(&f, states[i], NULL);
		shim_start(&s, f.port, "--gpus-acct", NULL);
		http("GET", s.port, "/metrics", &r, 10000);
		assert_int_equal(r.status, 200);
		assert_string_equal(r.ctype, "text/plain; version=0.0.4; charset=utf-8");
		char *once = once_output(states[i], "--gpus-acct");
		char *a = legacy_part(r.body.data), *b = legacy_part(once);
		if (strcmp(a, b) != 0)
			fail_msg("%s: HTTP and --once differ", states[i]);
		assert_true(strlen(a) > 3000);
		assert_non_null(strstr(r.body.data, "slurm_exporter_shim_up{endpoint=\"partitions\"} 1\n"));
		if (strstr(states[i], "25.11"))
			assert_non_null(strstr(r.body.data,
					       "slurm_exporter_shim_family_left_out{family=\"slurm_gpus_alloc\",reason=\"input_missing\"} 1\n"));
		free(a);
		free(b);
		free(once);
		buf_free(&r.body);
		stop(&s);
		stop(&f);
	}
}

static void test_routes(void **state)
{
	(void)state;
	struct proc f, s;
	struct resp r;
	fake_start(&f, STATE, NULL);
	shim_start(&s, f.port, NULL);
	http("GET", s.port, "/", &r, 5000);
	assert_int_equal(r.status, 200);
	assert_non_null(strstr(r.body.data, "href=\"/metrics\""));
	buf_free(&r.body);
	http("GET", s.port, "/nope", &r, 5000);
	assert_int_equal(r.status, 404);
	buf_free(&r.body);
	http("POST", s.port, "/metrics", &r, 5000);
	assert_int_equal(r.status, 405);
	buf_free(&r.body);
	http("DELETE", s.port, "/metrics", &r, 5000);
	assert_int_equal(r.status, 405);
	buf_free(&r.body);
	http("HEAD", s.port, "/metrics", &r, 5000);
	assert_int_equal(r.status, 200);
	assert_int_equal(r.body.len, 1); /* just our terminator: no body */
	buf_free(&r.body);
	stop(&s);
	stop(&f);
}

static void test_total_failures(void **state)
{
	(void)state;
	expect_503("401", "PrivateData", NULL);
	expect_503("403", "403 Forbidden", NULL);
	expect_503("500", "HTTP status 500", NULL);
	expect_503("empty", "MetricsType=metrics/openmetrics", NULL);
	expect_503("garbage", "/metrics/partitions:", NULL);
	expect_503("cut", "/metrics/nodes:", NULL);
	expect_503("cutline", "malformed line", NULL);
	expect_503("hang", "imeout", NULL);
	expect_503("drip", "imeout", NULL); /* one byte every 200 ms: the deadline still holds */
	expect_503("close", "/metrics/scheduler:", NULL);
	expect_503("huge", "--slurmctld.max-body", "--slurmctld.max-body=100000");
	expect_503("huge-nolength", "--slurmctld.max-body", "--slurmctld.max-body=100000");
}

static void test_connection_refused(void **state)
{
	(void)state;
	struct proc s;
	struct resp r;
	shim_start(&s, free_port(), NULL);
	http("GET", s.port, "/metrics", &r, 10000);
	assert_int_equal(r.status, 503);
	assert_non_null(strstr(r.body.data, "/metrics/nodes: "));
	assert_non_null(strstr(r.body.data, "onnect"));
	assert_null(strstr(r.body.data, "/metrics/jobs: ")); /* not read by the table: not fetched */
	buf_free(&r.body);
	stop(&s);
}

/* Only the partitions endpoint fails: its families are left out, the rest is served. */
static void test_partial_failure(void **state)
{
	(void)state;
	struct proc f, s;
	struct resp r;
	fake_start(&f, STATE, "--fault", "500", "--fault-endpoint", "partitions", NULL);
	shim_start(&s, f.port, NULL);
	http("GET", s.port, "/metrics", &r, 10000);
	assert_int_equal(r.status, 200);
	assert_null(strstr(r.body.data, "# TYPE slurm_partition_jobs_pending "));
	/* node buckets read partition bounds: left out too, never half computed */
	assert_null(strstr(r.body.data, "# TYPE slurm_nodes_alloc "));
	assert_non_null(strstr(r.body.data, "\nslurm_cpus_total 44\n"));
	assert_non_null(strstr(r.body.data, "\nslurm_queue_running 10\n"));
	assert_non_null(strstr(r.body.data, "slurm_exporter_shim_up{endpoint=\"partitions\"} 0\n"));
	assert_non_null(strstr(r.body.data, "slurm_exporter_shim_http_status{endpoint=\"partitions\"} 500\n"));
	assert_non_null(strstr(r.body.data,
			       "slurm_exporter_shim_family_left_out{family=\"slurm_partition_jobs_pending\",reason=\"input_down\"} 1\n"));
	buf_free(&r.body);
	stop(&s);
	stop(&f);
}

/* Hostile but well-framed payloads. */
static void test_payload_quirks(void **state)
{
	(void)state;
	struct proc f, s;
	struct resp r;
	/* an unescaped quote in a node name (slurm_node_cpus{node="we"ird"} 3): the line is read, not
	 * refused, so the total counts its 3 CPUs (44 + 3) */
	fake_start(&f, STATE, "--fault", "badquote", "--fault-endpoint", "nodes", NULL);
	shim_start(&s, f.port, NULL);
	http("GET", s.port, "/metrics", &r, 10000);
	assert_int_equal(r.status, 200);
	assert_non_null(strstr(r.body.data, "slurm_exporter_shim_up{endpoint=\"nodes\"} 1\n"));
	assert_non_null(strstr(r.body.data, "\nslurm_cpus_total 47\n"));
	buf_free(&r.body);
	stop(&s);
	stop(&f);
	/* a duplicate series: the family is ambiguous, rows reading it are left out */
	fake_start(&f, STATE, "--fault", "duplicate", "--fault-endpoint", "nodes", NULL);
	shim_start(&s, f.port, NULL);
	http("GET", s.port, "/metrics", &r, 10000);
	assert_int_equal(r.status, 200);
	assert_non_null(strstr(r.body.data, "{family=\"slurm_cpus_total\",reason=\"error\"} 1\n"));
	assert_null(strstr(r.body.data, "# TYPE slurm_cpus_total "));
	assert_non_null(strstr(r.body.data, "\nslurm_cpus_alloc 39\n")); /* other node families are fine */
	assert_non_null(strstr(r.body.data, "\nslurm_queue_running 10\n"));
	buf_free(&r.body);
	stop(&s);
	stop(&f);
	/* NaN values are values: carried through, not turned into numbers */
	fake_start(&f, STATE, "--fault", "nan", "--fault-endpoint", "jobs-users-accts", NULL);
	shim_start(&s, f.port, NULL);
	http("GET", s.port, "/metrics", &r, 10000);
	assert_int_equal(r.status, 200);
	assert_non_null(strstr(r.body.data, "slurm_exporter_shim_up{endpoint=\"jobs-users-accts\"} 1\n"));
	buf_free(&r.body);
	stop(&s);
	stop(&f);
}

/* A standby controller answers 303 to the primary: followed once. */
static void test_redirect(void **state)
{
	(void)state;
	struct proc primary, standby, s;
	struct resp r;
	char port[16];
	fake_start(&primary, STATE, NULL);
	snprintf(port, sizeof(port), "%u", primary.port);
	fake_start(&standby, STATE, "--fault", "redirect", "--redirect-port", port, NULL);
	shim_start(&s, standby.port, NULL);
	http("GET", s.port, "/metrics", &r, 10000);
	assert_int_equal(r.status, 200);
	assert_non_null(strstr(r.body.data, "\nslurm_cpus_total 44\n"));
	buf_free(&r.body);
	stop(&s);
	stop(&standby);
	stop(&primary);
}

/* Slurm 26.05 JWT: sent as X-SLURM-USER-TOKEN, never logged or served. */
static void test_token(void **state)
{
	(void)state;
	struct proc f, s;
	struct resp r;
	const char *tok = "eyJhbGciOiJIUzI1NiJ9.c2VjcmV0LXRva2Vu.sig-SECRET-42";
	tu_write(tu_tmp("token"), "SLURM_JWT=eyJhbGciOiJIUzI1NiJ9.c2VjcmV0LXRva2Vu.sig-SECRET-42\n");
	fake_start(&f, STATE, "--token", tok, NULL);
	shim_start(&s, f.port, NULL);
	http("GET", s.port, "/metrics", &r, 10000);
	assert_int_equal(r.status, 503);
	assert_non_null(strstr(r.body.data, "401 Unauthorized"));
	buf_free(&r.body);
	stop(&s);
	shim_start(&s, f.port, "--slurmctld.auth.token-file", tu_tmp("token"), "--slurmctld.auth.user", "shim", NULL);
	http("GET", s.port, "/metrics", &r, 10000);
	assert_int_equal(r.status, 200);
	assert_null(strstr(r.body.data, "SECRET"));
	buf_free(&r.body);
	http("GET", f.port, "/_last_request", &r, 5000);
	assert_non_null(strstr(r.body.data, "X-SLURM-USER-TOKEN: eyJhbGciOiJIUzI1NiJ9.c2VjcmV0LXRva2Vu.sig-SECRET-42"));
	assert_non_null(strstr(r.body.data, "X-SLURM-USER-NAME: shim"));
	buf_free(&r.body);
	stop(&s);
	char *log = tu_slurp(s.log, NULL);
	assert_non_null(log);
	assert_null(strstr(log, "SECRET"));
	free(log);
	stop(&f);
}

/* SIGHUP: a valid file is swapped in; an invalid one is refused, reported, and the table kept. */
static void test_reload(void **state)
{
	(void)state;
	struct proc f, s;
	struct resp r;
	const char *path = tu_tmp("reload.json");
	char *orig = tu_slurp(MAPPING, NULL);
	tu_write(path, orig);
	fake_start(&f, STATE, NULL);
	char listen[64], url[64];
	s.port = free_port();
	snprintf(listen, sizeof(listen), "127.0.0.1:%u", s.port);
	snprintf(url, sizeof(url), "http://127.0.0.1:%u", f.port);
	snprintf(s.log, sizeof(s.log), "%s", tu_tmp("reload.log"));
	char *argv[] = { (char *)tu_shim_bin(), "--web.listen-address", listen, "--slurmctld.url", url, "--mapping.file",
			 (char *)path, "--slurmctld.min-interval", "0", NULL };
	s.pid = spawn(argv, s.log);
	if (!wait_ready(s.pid, s.port))
		fail_msg("the shim does not start (see %s)", s.log);
	tu_write(path, "{\"metrics\": [{\"name\": \"only_row\", \"help\": \"h\", \"type\": \"gauge\", \"expr\": \"slurm_nodes\", \"fidelity\": \"exact\"}]}\n");
	reload_and_wait(&s, "mapping reload");
	http("GET", s.port, "/metrics", &r, 10000);
	assert_non_null(strstr(r.body.data, "\nonly_row 4\n"));
	assert_null(strstr(r.body.data, "slurm_cpus_total"));
	assert_non_null(strstr(r.body.data, "slurm_exporter_shim_mapping_reload_success 1\n"));
	buf_free(&r.body);
	tu_write(path, "{\"metrics\": [{\"name\": \"broken\", \"help\": \"h\", \"type\": \"gauge\", \"expr\": \"sum(\", \"fidelity\": \"exact\"}]}\n");
	reload_and_wait(&s, "mapping reload");
	/* the status page says so at once, before any scrape (it showed the last render's "succeeded") */
	http("GET", s.port, "/", &r, 10000);
	if (!strstr(r.body.data, "failed (the previous table is still in use)"))
		fail_msg("the status page after a failed reload:\n%s", r.body.data);
	buf_free(&r.body);
	http("GET", s.port, "/metrics", &r, 10000);
	assert_non_null(strstr(r.body.data, "\nonly_row 4\n"));
	assert_non_null(strstr(r.body.data, "slurm_exporter_shim_mapping_reload_success 0\n"));
	buf_free(&r.body);
	/* 100,000 parentheses once overflowed the parser's stack and killed the daemon */
	char *deep = tu_deep_expr(0, 100000, "slurm_nodes");
	struct buf j;
	buf_init(&j, 0);
	buf_printf(&j, "{\"metrics\": [{\"name\": \"deep\", \"help\": \"h\", \"type\": \"gauge\", \"expr\": \"%s\", "
		   "\"fidelity\": \"exact\"}]}\n", deep);
	buf_putc(&j, '\0');
	tu_write(path, j.data);
	buf_free(&j);
	free(deep);
	reload_and_wait(&s, "mapping reload");
	assert_int_equal(waitpid(s.pid, NULL, WNOHANG), 0);
	http("GET", s.port, "/metrics", &r, 10000);
	assert_non_null(strstr(r.body.data, "\nonly_row 4\n"));
	assert_non_null(strstr(r.body.data, "slurm_exporter_shim_mapping_reload_success 0\n"));
	buf_free(&r.body);
	stop(&s);
	char *log = tu_slurp(s.log, NULL), at[80];
	snprintf(at, sizeof(at), "%s:1:", path);
	assert_non_null(strstr(log, at));
	assert_non_null(strstr(log, "row 'broken'"));
	assert_non_null(strstr(log, "row 'deep': expr: expression nested deeper than 258 levels"));
	free(log);
	unlink(path);
	unlink(s.log);
	free(orig);
	stop(&f);
}

/* A redirect to another origin (here another port) is followed without the token
 * and user headers; curl alone would send them to any host. */
static void test_redirect_keeps_credentials_home(void **state)
{
	(void)state;
	struct proc other, home, s;
	struct resp r;
	char port[16];
	tu_write(tu_tmp("token-redir"), "tok-SECRET-9\n");
	fake_start(&other, STATE, NULL);
	snprintf(port, sizeof(port), "%u", other.port);
	fake_start(&home, STATE, "--fault", "redirect", "--redirect-port", port, NULL);
	shim_start(&s, home.port, "--slurmctld.auth.token-file", tu_tmp("token-redir"), "--slurmctld.auth.user",
		   "shim", NULL);
	http("GET", s.port, "/metrics", &r, 10000);
	assert_int_equal(r.status, 200); /* followed: the other origin needs no token here */
	buf_free(&r.body);
	http("GET", home.port, "/_last_request", &r, 5000);
	assert_non_null(strstr(r.body.data, "X-SLURM-USER-TOKEN: tok-SECRET-9"));
	buf_free(&r.body);
	http("GET", other.port, "/_last_request", &r, 5000);
	assert_non_null(strstr(r.body.data, "GET /metrics/"));
	assert_null(strcasestr(r.body.data, "X-SLURM-USER-TOKEN"));
	assert_null(strcasestr(r.body.data, "X-SLURM-USER-NAME"));
	assert_null(strstr(r.body.data, "SECRET"));
	buf_free(&r.body);
	stop(&s);
	char *log = tu_slurp(s.log, NULL);
	assert_non_null(strstr(log, "redirected to another origin"));
	assert_null(strstr(log, "SECRET"));
	free(log);
	stop(&home);
	stop(&other);
}

/* A redirect to the same origin keeps the credentials (the fake checks the token after it). */
static void test_redirect_same_origin(void **state)
{
	(void)state;
	struct proc f, s;
	struct resp r;
	tu_write(tu_tmp("token-redir"), "tok-SECRET-9\n");
	fake_start(&f, STATE, "--fault", "redirect-self", "--token", "tok-SECRET-9", NULL);
	shim_start(&s, f.port, "--slurmctld.auth.token-file", tu_tmp("token-redir"), NULL);
	http("GET", s.port, "/metrics", &r, 10000);
	assert_int_equal(r.status, 200);
	assert_non_null(strstr(r.body.data, "\nslurm_cpus_total 44\n"));
	buf_free(&r.body);
	http("GET", f.port, "/_last_request", &r, 5000);
	assert_non_null(strstr(r.body.data, "?redirected HTTP/1.1\r\n"));
	assert_non_null(strstr(r.body.data, "X-SLURM-USER-TOKEN: tok-SECRET-9"));
	buf_free(&r.body);
	stop(&s);
	stop(&f);
}

/* The origin comparison behind both: scheme + host + port, defaults filled in, userinfo ignored. */
static void test_redirect_origin(void **state)
{
	(void)state;
	const char *b = "http://ctl1:6817";
	assert_int_equal(fetch_redirect_check(b, "http://ctl1:6817/metrics/jobs"), FETCH_REDIRECT_SAME_ORIGIN);
	assert_int_equal(fetch_redirect_check(b, "HTTP://CTL1:6817/metrics/jobs"), FETCH_REDIRECT_SAME_ORIGIN);
	assert_int_equal(fetch_redirect_check("http://ctl1/", "http://ctl1:80/x"), FETCH_REDIRECT_SAME_ORIGIN);
	assert_int_equal(fetch_redirect_check("https://ctl1:443", "https://ctl1/x"), FETCH_REDIRECT_SAME_ORIGIN);
	assert_int_equal(fetch_redirect_check("http://u:p@ctl1:6817", "http://ctl1:6817/x"), FETCH_REDIRECT_SAME_ORIGIN);
	assert_int_equal(fetch_redirect_check(b, "http://ctl1:6818/x"), FETCH_REDIRECT_OTHER_ORIGIN);
	assert_int_equal(fetch_redirect_check(b, "http://ctl1/x"), FETCH_REDIRECT_OTHER_ORIGIN);
	assert_int_equal(fetch_redirect_check(b, "http://ctl2:6817/x"), FETCH_REDIRECT_OTHER_ORIGIN);
	assert_int_equal(fetch_redirect_check(b, "http://ctl1.evil:6817/x"), FETCH_REDIRECT_OTHER_ORIGIN);
	assert_int_equal(fetch_redirect_check(b, "http://ctl1@evil:6817/x"), FETCH_REDIRECT_OTHER_ORIGIN);
	assert_int_equal(fetch_redirect_check(b, "http://ctl1:6817@evil/x"), FETCH_REDIRECT_OTHER_ORIGIN);
	assert_int_equal(fetch_redirect_check(b, "https://ctl1:6817/x"), FETCH_REDIRECT_OTHER_ORIGIN);
	assert_int_equal(fetch_redirect_check("https://ctl1:6817", "http://ctl1:6817/x"), FETCH_REDIRECT_REFUSE);
	assert_int_equal(fetch_redirect_check("https://ctl1", "http://ctl1:443/x"), FETCH_REDIRECT_REFUSE);
	assert_int_equal(fetch_redirect_check(b, "ftp://ctl1:6817/x"), FETCH_REDIRECT_REFUSE);
	assert_int_equal(fetch_redirect_check(b, "file:///etc/passwd"), FETCH_REDIRECT_REFUSE);
	assert_int_equal(fetch_redirect_check(b, "not a url"), FETCH_REDIRECT_REFUSE);
	/* slurmrestd on a unix socket: no origin to compare, every redirect refused */
	assert_int_equal(fetch_redirect_check("unix:/run/slurmrestd.sock", "http://localhost/x"), FETCH_REDIRECT_REFUSE);
}

/* A hostile upstream reason (a refused redirect whose Location holds a quote, a backslash, ESC [31m
 * and DEL) is escaped once wherever it is shown: the log line by the log (\" \\ \x1b \x7f), the 503
 * body by log_escape (\x22 \x5c \x1b \x7f). It was escaped when recorded and again when logged, so
 * a quote read \\x5cx22 in the log and \x5cx22 in the body. */
static void test_reason_escaped_once(void **state)
{
	(void)state;
	struct proc f, s;
	struct resp r;
	char url[96];
	fake_start(&f, STATE, NULL);
	snprintf(url, sizeof(url), "http://127.0.0.1:%u/_hostile-redirect", f.port);
	shim_start_url(&s, url, NULL, NULL);
	http("GET", s.port, "/metrics", &r, 10000);
	assert_int_equal(r.status, 503);
	if (!strstr(r.body.data, "/metrics/nodes: redirect to ftp://evil/\\x22\\x5c\\x1b[31mred\\x7f refused"))
		fail_msg("503 body:\n%s", r.body.data);
	buf_free(&r.body);
	stop(&s);
	stop(&f);
	char *log = tu_slurp(s.log, NULL);
	assert_non_null(log);
	char want[300]; /* the four endpoints fail alike: one line, naming the URL fetched */
	snprintf(want, sizeof(want), "level=warn msg=\"endpoints /metrics/nodes, /metrics/partitions, /metrics/scheduler and "
		 "/metrics/jobs-users-accts failed: slurmctld http://127.0.0.1:%u/_hostile-redirect: redirect to "
		 "ftp://evil/\\\"\\\\\\x1b[31mred\\x7f refused", f.port);
	if (!strstr(log, want))
		fail_msg("log:\n%s", log);
	assert_null(strstr(log, "x5c")); /* nothing escaped twice: no escaped backslash of an escape */
	assert_null(strstr(log, "\\x22"));
	assert_null(strchr(log, '\x1b'));
	free(log);
}

/* An answer whose head has a header line over libcurl's limit (CURL_MAX_HTTP_HEADER, 100 KiB) is
 * reported as such: curl's own words were "Out of memory". */
static void test_header_too_large(void **state)
{
	(void)state;
	struct proc f, s;
	struct resp r;
	char url[96];
	fake_start(&f, STATE, NULL);
	snprintf(url, sizeof(url), "http://127.0.0.1:%u/_header-bytes/200000", f.port);
	shim_start_url(&s, url, NULL, NULL);
	http("GET", s.port, "/metrics", &r, 10000);
	assert_int_equal(r.status, 503);
	if (!strstr(r.body.data, "/metrics/nodes: response header too large (a header line over 102400 bytes)") ||
	    strstr(r.body.data, "memory"))
		fail_msg("503 body:\n%s", r.body.data);
	buf_free(&r.body);
	stop(&s);
	stop(&f);
}

/* A %00 in the path is a path no route has (404): libmicrohttpd decoded it into the C string url,
 * which then ended there, so "/metrics%00junk" was served as /metrics. Every route: the telemetry
 * path, a native path, the status page and /probe. A %00 in the query is no match either. */
static void test_nul_in_path(void **state)
{
	(void)state;
	struct probe_env e;
	struct resp r;
	static const char *const paths[] = {
		"/metrics%00", "/metrics%00junk", "/native/metrics/nodes%00", "/native/metrics/nodes%00.txt",
		"/%00", "/%00/", "/probe%00?target=idle", "/metrics/%2e%2e%00",
	};
	probe_start(&e, NULL, NULL);
	for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
		http("GET", e.s.port, paths[i], &r, 10000);
		if (r.status != 404)
			fail_msg("%s: status %ld, want 404", paths[i], r.status);
		buf_free(&r.body);
	}
	http("GET", e.s.port, "/metrics?x=%00", &r, 10000); /* the path is /metrics */
	assert_int_equal(r.status, 200);
	buf_free(&r.body);
	http("GET", e.s.port, "/native/metrics/nodes", &r, 10000);
	assert_int_equal(r.status, 200);
	buf_free(&r.body);
	probe_stop(&e);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_http_equals_once, kill_children),
		cmocka_unit_test_teardown(test_routes, kill_children),
		cmocka_unit_test_teardown(test_total_failures, kill_children),
		cmocka_unit_test_teardown(test_connection_refused, kill_children),
		cmocka_unit_test_teardown(test_partial_failure, kill_children),
		cmocka_unit_test_teardown(test_payload_quirks, kill_children),
		cmocka_unit_test_teardown(test_redirect, kill_children),
		cmocka_unit_test_teardown(test_token, kill_children),
		cmocka_unit_test_teardown(test_reload, kill_children),
		cmocka_unit_test(test_redirect_origin),
		cmocka_unit_test_teardown(test_redirect_keeps_credentials_home, kill_children),
		cmocka_unit_test_teardown(test_redirect_same_origin, kill_children),
		cmocka_unit_test_teardown(test_reason_escaped_once, kill_children),
		cmocka_unit_test_teardown(test_header_too_large, kill_children),
		cmocka_unit_test_teardown(test_nul_in_path, kill_children),
	};
	return http_fixture_run("http_server", tests, sizeof(tests) / sizeof(tests[0]));
}
