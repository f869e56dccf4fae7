/* test_http.c: the shim as a daemon, over HTTP, against tests/fake_slurmctld (which answers with
 * slurmctld's exact framing). Each test starts its own fake and shim on free loopback ports:
 *   - the HTTP output equals --once --replay-dir on the same capture (families and values);
 *   - routes, methods, content type;
 *   - faults: 401 (PrivateData), 403, 500, 303 from a standby, empty 200, garbage, a body cut
 *     mid-line, no answer, connection refused, a body over the cap, unescaped quotes, duplicate
 *     series, NaN; partial failure leaves only the affected families out;
 *   - N concurrent scrapes cause one fetch per endpoint; the JWT is sent and never shown, and only to
 *     --slurmctld.url's origin (a redirect elsewhere is followed without it);
 *   - SIGHUP reloads the mapping, an invalid one is refused and reported;
 *   - the source table, its one verdict (source_verdict) and the facts payloads record;
 *   - each source's interval by its cost class (job walks once per --slurmctld.jobs.min-interval),
 *     and slow fetches counted and logged once per transition;
 *   - the status page at /: status_html_escape, the page built from the last scrape's snapshot (no fetch
 *     of its own), a failing endpoint's reason, hostile upstream and configured strings;
 *   - /probe?target=NAME (--probe.targets-file): each target its state's output and its own
 *     scraper, unknown targets 400 with nothing fetched, basic auth;
 *   - the native passthrough /native/metrics/<endpoint>: re-escaped (strict reader, sample for
 *     sample), invalid UTF-8 repaired and counted, 404 elsewhere, 503 when down, one fetch shared
 *     with /metrics, families no row reads served, basic auth. */
#include "testutil.h"

#include "controllers.h"
#include "fetch.h"
#include "status_html.h"
#include "monotime.h"
#include "native.h"
#include "render.h"
#include "slurmrestd_api.h"
#include "scrape.h"
#include "status.h"
#include "utf8.h"

#include <arpa/inet.h>
#include <curl/curl.h>
#include <math.h>
#include <netinet/in.h>
#include <pthread.h>
#include <sys/socket.h>

#define STATE "tests/fixtures/slurm-25.11/03-drain-down-cancel"
#define MAPPING "mappings/prometheus-slurm-exporter.json"

struct proc {
	pid_t pid;
	unsigned port;
	char log[64];
};

static unsigned free_port(void)
{
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t l = sizeof(a);
	assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	getsockname(fd, (struct sockaddr *)&a, &l);
	close(fd);
	return ntohs(a.sin_port);
}

/* Every child is registered, so a failed assertion (which skips the test's own stop()) still
 * gets them killed by the teardown. */
static pid_t children[16];

static pid_t spawn(char *const argv[], const char *logfile)
{
	pid_t pid = fork();
	if (pid == 0) {
		FILE *f = freopen(logfile, "w", stderr);
		FILE *g = freopen("/dev/null", "w", stdout);
		(void)f;
		(void)g;
		execv(argv[0], argv);
		_exit(127);
	}
	for (int i = 0; i < 16; i++)
		if (!children[i]) {
			children[i] = pid;
			break;
		}
	return pid;
}

static void reap(pid_t pid)
{
	kill(pid, SIGTERM);
	waitpid(pid, NULL, 0);
	for (int i = 0; i < 16; i++)
		if (children[i] == pid)
			children[i] = 0;
}

static int kill_children(void **state)
{
	(void)state;
	for (int i = 0; i < 16; i++)
		if (children[i])
			reap(children[i]);
	return 0;
}

/* Stop a child; a sanitizer build's report in its log fails the test. */
static void stop(struct proc *p)
{
	if (p->pid <= 0)
		return;
	reap(p->pid);
	p->pid = 0;
	char *log = tu_slurp(p->log, NULL);
	if (log && (strstr(log, "ERROR: AddressSanitizer") || strstr(log, "ERROR: LeakSanitizer") ||
		    strstr(log, "WARNING: ThreadSanitizer") || strstr(log, "runtime error:")))
		fail_msg("sanitizer report in %s:\n%s", p->log, log);
	free(log);
}

struct resp {
	long status;
	struct buf body;
	char ctype[128];
};

static size_t on_body(char *ptr, size_t size, size_t n, void *ud)
{
	buf_append(&((struct resp *)ud)->body, ptr, size * n);
	return size * n;
}

/* hdr: one extra request header, or NULL */
static void http_hdr(const char *method, unsigned port, const char *path, const char *hdr, struct resp *r, long timeout_ms)
{
	char url[256];
	CURL *h = curl_easy_init();
	struct curl_slist *hl = hdr ? curl_slist_append(NULL, hdr) : NULL;
	snprintf(url, sizeof(url), "http://127.0.0.1:%u%s", port, path);
	buf_init(&r->body, 0);
	r->status = 0;
	r->ctype[0] = '\0';
	curl_easy_setopt(h, CURLOPT_URL, url);
	curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, method);
	if (!strcmp(method, "HEAD"))
		curl_easy_setopt(h, CURLOPT_NOBODY, 1L);
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, r);
	curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, timeout_ms);
	curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(h, CURLOPT_HTTPHEADER, hl);
	if (curl_easy_perform(h) == CURLE_OK) {
		char *ct = NULL;
		curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &r->status);
		curl_easy_getinfo(h, CURLINFO_CONTENT_TYPE, &ct);
		if (ct)
			snprintf(r->ctype, sizeof(r->ctype), "%s", ct);
	}
	buf_putc(&r->body, '\0');
	curl_easy_cleanup(h);
	curl_slist_free_all(hl);
}

static void http(const char *method, unsigned port, const char *path, struct resp *r, long timeout_ms)
{
	http_hdr(method, port, path, NULL, r, timeout_ms);
}

/* Wait until the child answers on its port: 1; 0 if it exited first (port taken by another
 * process between free_port() and its bind: the caller retries on another port). */
static int wait_ready(pid_t pid, unsigned port)
{
	for (int i = 0; i < 400; i++) {
		struct resp r;
		int st;
		http("GET", port, "/", &r, 500);
		buf_free(&r.body);
		if (r.status)
			return 1;
		if (pid > 0 && waitpid(pid, &st, WNOHANG) == pid) {
			for (int k = 0; k < 16; k++)
				if (children[k] == pid)
					children[k] = 0;
			return 0;
		}
		tu_sleep_ms(25);
	}
	fail_msg("nothing answers on port %u", port);
	return 0;
}

/* Start the fake on a capture with extra arguments (NULL-terminated). */
static void fake_start(struct proc *f, const char *dir, ...)
{
	char port[16];
	const char *bin = getenv("FAKE_SLURMCTLD") ? getenv("FAKE_SLURMCTLD") : "build/tests/fake_slurmctld";
	char *argv[32] = { (char *)bin, "--port", port, "--dir", (char *)dir };
	int n = 5;
	va_list ap;
	va_start(ap, dir);
	for (char *a; (a = va_arg(ap, char *)) && n < 30;)
		argv[n++] = a;
	va_end(ap);
	argv[n] = NULL;
	for (int attempt = 0; attempt < 5; attempt++) {
		f->port = free_port();
		snprintf(port, sizeof(port), "%u", f->port);
		snprintf(f->log, sizeof(f->log), "/tmp/shimtest-fake-%u.log", f->port);
		f->pid = spawn(argv, f->log);
		if (wait_ready(f->pid, f->port))
			return;
	}
	fail_msg("fake_slurmctld does not start (see %s)", f->log);
}

static void shim_start(struct proc *s, unsigned upstream, ...)
{
	char listen[64], url[64];
	char *argv[40] = { (char *)tu_shim_bin(), "--web.listen-address", listen, "--slurmctld.url", url,
			   "--mapping.file", MAPPING, "--log.level", "debug" };
	int n = 9;
	va_list ap;
	va_start(ap, upstream);
	for (char *a; (a = va_arg(ap, char *)) && n < 38;)
		argv[n++] = a;
	va_end(ap);
	argv[n] = NULL;
	snprintf(url, sizeof(url), "http://127.0.0.1:%u", upstream);
	for (int attempt = 0; attempt < 5; attempt++) {
		s->port = free_port();
		snprintf(listen, sizeof(listen), "127.0.0.1:%u", s->port);
		snprintf(s->log, sizeof(s->log), "/tmp/shimtest-shim-%u.log", s->port);
		s->pid = spawn(argv, s->log);
		if (wait_ready(s->pid, s->port))
			return;
	}
	fail_msg("the shim does not start (see %s)", s->log);
}

/* shim_start with a whole --slurmctld.url (a path under the fake: its /_hostile-redirect/ and
 * /_header-bytes/N/ routes) and at most 2 extra flags (NULL: none). */
static void shim_start_url(struct proc *s, const char *url, const char *extra1, const char *extra2)
{
	char listen[64];
	char *argv[] = { (char *)tu_shim_bin(), "--web.listen-address", listen, "--slurmctld.url", (char *)url,
			 "--mapping.file", MAPPING, "--log.level", "debug", (char *)extra1, (char *)extra2, NULL };
	for (int attempt = 0; attempt < 5; attempt++) {
		s->port = free_port();
		snprintf(listen, sizeof(listen), "127.0.0.1:%u", s->port);
		snprintf(s->log, sizeof(s->log), "/tmp/shimtest-shim-%u.log", s->port);
		s->pid = spawn(argv, s->log);
		if (wait_ready(s->pid, s->port))
			return;
	}
	fail_msg("the shim does not start (see %s)", s->log);
}

/* The legacy families of an exposition: every line before the first self metric. */
static char *legacy_part(const char *text)
{
	const char *end = strstr(text, "# HELP slurm_exporter_shim_");
	return xstrndup(text, end ? (size_t)(end - text) : strlen(text));
}

static char *once_output(const char *dir, const char *extra)
{
	char *out = NULL;
	char *argv[] = { (char *)tu_shim_bin(), "--once", "--replay-dir", (char *)dir, "--mapping.file", MAPPING,
			 (char *)extra, NULL };
	assert_int_equal(tu_run(argv, NULL, &out, NULL, NULL), 0);
	return out;
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

/* One fault on every endpoint: the shim answers 503 with the reason, quickly, and stays up. */
static void expect_503(const char *fault, const char *reason, const char *extra_shim_flag)
{
	struct proc f, s;
	struct resp r;
	fake_start(&f, STATE, "--fault", fault, NULL);
	shim_start(&s, f.port, "--slurmctld.timeout", "2", extra_shim_flag, NULL);
	time_t t0 = time(NULL);
	http("GET", s.port, "/metrics", &r, 15000);
	if (r.status != 503 || !strstr(r.body.data, reason))
		fail_msg("fault %s: status %ld, body:\n%s", fault, r.status, r.body.data);
	assert_true(time(NULL) - t0 <= 4);
	assert_null(strstr(r.body.data, "# TYPE slurm_")); /* never a half or wrong series */
	buf_free(&r.body);
	http("GET", s.port, "/", &r, 5000); /* still alive */
	assert_int_equal(r.status, 200);
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

static long stat_count(unsigned fake_port, const char *ep)
{
	struct resp r;
	char want[64];
	http("GET", fake_port, "/_stats", &r, 5000);
	snprintf(want, sizeof(want), "%s ", ep);
	const char *p = r.body.data;
	long n = -1;
	while (p && *p) {
		if (!strncmp(p, want, strlen(want)))
			n = strtol(p + strlen(want), NULL, 10);
		p = strchr(p, '\n');
		if (p)
			p++;
	}
	buf_free(&r.body);
	return n;
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
	tu_write("/tmp/shimtest-sched.json",
		 "{\"metrics\": [{\"name\": \"slurm_scheduler_threads\", \"help\": \"h\", \"type\": \"gauge\","
		 " \"expr\": \"slurm_server_thread_cnt + 1\", \"fidelity\": \"exact\"},"
		 " {\"name\": \"gpu_only\", \"help\": \"h\", \"type\": \"gauge\", \"expr\": \"sum(slurm_partition_gpus)\","
		 " \"fidelity\": \"exact\", \"enabled_by\": \"gpus-acct\"}]}\n");
	fake_start(&f, STATE, NULL);
	shim_start(&s, f.port, "--mapping.file", "/tmp/shimtest-sched.json", NULL);
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

/* Slurm 26.05 JWT: sent as X-SLURM-USER-TOKEN, never logged or served. */
static void test_token(void **state)
{
	(void)state;
	struct proc f, s;
	struct resp r;
	const char *tok = "eyJhbGciOiJIUzI1NiJ9.c2VjcmV0LXRva2Vu.sig-SECRET-42";
	tu_write("/tmp/shimtest-token", "SLURM_JWT=eyJhbGciOiJIUzI1NiJ9.c2VjcmV0LXRva2Vu.sig-SECRET-42\n");
	fake_start(&f, STATE, "--token", tok, NULL);
	shim_start(&s, f.port, NULL);
	http("GET", s.port, "/metrics", &r, 10000);
	assert_int_equal(r.status, 503);
	assert_non_null(strstr(r.body.data, "401 Unauthorized"));
	buf_free(&r.body);
	stop(&s);
	shim_start(&s, f.port, "--slurmctld.auth.token-file", "/tmp/shimtest-token", "--slurmctld.auth.user", "shim", NULL);
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
	const char *path = "/tmp/shimtest-reload.json";
	char *orig = tu_slurp(MAPPING, NULL);
	tu_write(path, orig);
	fake_start(&f, STATE, NULL);
	char listen[64], url[64];
	s.port = free_port();
	snprintf(listen, sizeof(listen), "127.0.0.1:%u", s.port);
	snprintf(url, sizeof(url), "http://127.0.0.1:%u", f.port);
	snprintf(s.log, sizeof(s.log), "/tmp/shimtest-reload.log");
	char *argv[] = { (char *)tu_shim_bin(), "--web.listen-address", listen, "--slurmctld.url", url, "--mapping.file",
			 (char *)path, "--slurmctld.min-interval", "0", NULL };
	s.pid = spawn(argv, s.log);
	if (!wait_ready(s.pid, s.port))
		fail_msg("the shim does not start (see %s)", s.log);
	tu_write(path, "{\"metrics\": [{\"name\": \"only_row\", \"help\": \"h\", \"type\": \"gauge\", \"expr\": \"slurm_nodes\", \"fidelity\": \"exact\"}]}\n");
	kill(s.pid, SIGHUP);
	tu_sleep_ms(300);
	http("GET", s.port, "/metrics", &r, 10000);
	assert_non_null(strstr(r.body.data, "\nonly_row 4\n"));
	assert_null(strstr(r.body.data, "slurm_cpus_total"));
	assert_non_null(strstr(r.body.data, "slurm_exporter_shim_mapping_reload_success 1\n"));
	buf_free(&r.body);
	tu_write(path, "{\"metrics\": [{\"name\": \"broken\", \"help\": \"h\", \"type\": \"gauge\", \"expr\": \"sum(\", \"fidelity\": \"exact\"}]}\n");
	kill(s.pid, SIGHUP);
	tu_sleep_ms(300);
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
	kill(s.pid, SIGHUP);
	tu_sleep_ms(300);
	assert_int_equal(waitpid(s.pid, NULL, WNOHANG), 0);
	http("GET", s.port, "/metrics", &r, 10000);
	assert_non_null(strstr(r.body.data, "\nonly_row 4\n"));
	assert_non_null(strstr(r.body.data, "slurm_exporter_shim_mapping_reload_success 0\n"));
	buf_free(&r.body);
	stop(&s);
	char *log = tu_slurp(s.log, NULL);
	assert_non_null(strstr(log, "/tmp/shimtest-reload.json:1:"));
	assert_non_null(strstr(log, "row 'broken'"));
	assert_non_null(strstr(log, "row 'deep': expr: expression nested deeper than 258 levels"));
	free(log);
	free(orig);
	stop(&f);
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* A scrape on a thread of its own, with one optional request header. */
struct bg_scrape {
	unsigned port;
	const char *hdr;
	struct resp r;
	double seconds;
	pthread_t t;
};

static void *bg_scrape_run(void *p)
{
	struct bg_scrape *b = p;
	double t0 = now_s();
	http_hdr("GET", b->port, "/metrics", b->hdr, &b->r, 30000);
	b->seconds = now_s() - t0;
	return NULL;
}

/* A client with an absurd deadline (X-Prometheus-Scrape-Timeout-Seconds: 0.001)
 * neither shortens nor fails the fetch the others share, and its failure is not cached for them. It
 * waits the documented floor (0.25 s), answers without the endpoints still in flight ("scrape
 * deadline passed"), and the fetch goes on: a scrape arriving meanwhile gets the full answer from
 * that same fetch (one fetch per endpoint). */
static void test_short_deadline_does_not_poison(void **state)
{
	(void)state;
	struct proc f, s;
	struct resp r;
	struct bg_scrape a = { .hdr = "X-Prometheus-Scrape-Timeout-Seconds: 0.001" };
	fake_start(&f, STATE, "--delay-ms", "2000", NULL);
	shim_start(&s, f.port, "--slurmctld.min-interval", "30", NULL);
	a.port = s.port;
	bg_scrape_run(&a);
	if (a.r.status != 503 || !strstr(a.r.body.data, "scrape deadline passed"))
		fail_msg("the impatient scrape: status %ld after %.3f s, body:\n%s", a.r.status, a.seconds, a.r.body.data);
	assert_true(a.seconds >= 0.2); /* the floor: 0.001 s is raised to 0.25 s */
	buf_free(&a.r.body);
	http("GET", s.port, "/metrics", &r, 15000); /* during the fetch the first one started */
	if (r.status != 200 || !strstr(r.body.data, "\nslurm_cpus_total 44\n"))
		fail_msg("the next scrape got the impatient one's failure: status %ld, body:\n%s", r.status, r.body.data);
	assert_null(strstr(r.body.data, "scrape deadline passed"));
	buf_free(&r.body);
	/* /metrics/jobs is not read by the shipped table (its job rows are derived): never fetched */
	static const char *const eps[] = { "jobs", "nodes", "partitions", "scheduler", "jobs-users-accts" };
	for (int i = 0; i < 5; i++)
		assert_int_equal(stat_count(f.port, eps[i]), i > 0);
	stop(&s);
	stop(&f);
}

/* A scrape that starts after SIGHUP, while a fetch made for the old table is in
 * flight, is served the new table over payloads parsed for the new table: a row reading a family
 * the old table did not read is served, not left out. */
static void test_reload_during_fetch(void **state)
{
	(void)state;
	struct proc f, s;
	struct resp r;
	const char *path = "/tmp/shimtest-reload-fetch.json";
	tu_write(path, "{\"metrics\": [{\"name\": \"only_row\", \"help\": \"h\", \"type\": \"gauge\", \"expr\": \"slurm_nodes\","
		       " \"fidelity\": \"exact\"}]}\n");
	fake_start(&f, STATE, "--delay-ms", "1500", NULL);
	shim_start(&s, f.port, "--mapping.file", path, "--slurmctld.min-interval", "30", NULL);
	struct bg_scrape a = { .port = s.port };
	pthread_create(&a.t, NULL, bg_scrape_run, &a);
	for (int i = 0; stat_count(f.port, "nodes") < 1; i++) { /* the old table's fetch is in flight */
		if (i == 1000)
			fail_msg("the first scrape never fetched /metrics/nodes");
		tu_sleep_ms(10);
	}
	tu_write(path, "{\"metrics\": [{\"name\": \"only_row\", \"help\": \"h\", \"type\": \"gauge\", \"expr\": \"slurm_nodes\","
		       " \"fidelity\": \"exact\"}, {\"name\": \"new_row\", \"help\": \"h\", \"type\": \"gauge\","
		       " \"expr\": \"sum(slurm_node_cpus)\", \"fidelity\": \"exact\"}]}\n");
	kill(s.pid, SIGHUP);
	for (int i = 0; i < 500; i++) {
		char *log = tu_slurp(s.log, NULL);
		int done = log && strstr(log, "mapping reloaded");
		free(log);
		if (done)
			break;
		tu_sleep_ms(10);
	}
	http("GET", s.port, "/metrics", &r, 15000);
	assert_int_equal(r.status, 200);
	if (!strstr(r.body.data, "\nnew_row 44\n") || !strstr(r.body.data, "\nonly_row 4\n"))
		fail_msg("the new table was not served whole:\n%s", r.body.data);
	buf_free(&r.body);
	pthread_join(a.t, NULL);
	assert_int_equal(a.r.status, 200);
	assert_non_null(strstr(a.r.body.data, "\nonly_row 4\n")); /* the first scrape keeps its table */
	assert_null(strstr(a.r.body.data, "new_row"));
	buf_free(&a.r.body);
	assert_int_equal(stat_count(f.port, "nodes"), 2); /* one fetch per table, never two at once */
	assert_int_equal(stat_count(f.port, "jobs"), 0);
	stop(&s);
	stop(&f);
}

static long vmrss_kb(pid_t pid)
{
	char path[64], *st, *p;
	long kb = -1;
	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	st = tu_slurp(path, NULL);
	if (st && (p = strstr(st, "VmRSS:")))
		kb = strtol(p + 6, NULL, 10);
	free(st);
	return kb;
}

/* A client that sends a request and does not read the answer; it waits only for the status line,
 * which proves the answer is queued. */
static int slow_reader(unsigned port)
{
	int fd = socket(AF_INET, SOCK_STREAM, 0), small = 4096;
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port), .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	struct timeval tv = { 60, 0 };
	static const char req[] = "GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";
	setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &small, sizeof(small));
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	assert_int_equal(connect(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(send(fd, req, sizeof(req) - 1, MSG_NOSIGNAL), (ssize_t)(sizeof(req) - 1));
	return fd;
}

/* A payload of tests/bench/gen_payload.py with this many nodes, made once: /tmp/shimtest-bigN. 4,000
 * nodes give a 1.6 MB answer; 10,000 a 4.2 MB one, more than the 4 MB a socket's send buffer takes,
 * so that a client that does not read keeps the shim's answer. */
static const char *big_payload(int nodes)
{
	static char dir[64];
	char n[16];
	snprintf(dir, sizeof(dir), "/tmp/shimtest-big%d", nodes);
	snprintf(n, sizeof(n), "%d", nodes);
	if (!tu_is_dir(dir)) {
		char *argv[] = { "/usr/bin/env", "python3", "tests/bench/gen_payload.py", "--nodes", n, "--out", dir, NULL };
		assert_int_equal(tu_run(argv, NULL, NULL, NULL, NULL), 0);
	}
	return dir;
}

/* Whether the shim under test was built with symbol sym in it: "__tsan_init" (ThreadSanitizer
 * gives every thread about 1 MB of its own) or "__asan_init" (AddressSanitizer keeps freed memory
 * in its quarantine): memory figures that depend on it are reported, not asserted there. */
static int shim_has(const char *sym)
{
	size_t binlen = 0;
	char *bin = tu_slurp(tu_shim_bin(), &binlen);
	int has = bin && memmem(bin, binlen, sym, strlen(sym));
	free(bin);
	return has;
}

/* N clients that do not read one large answer hold one body between them, not N. Memory, not
 * time: the shim's VmRSS grows by less than 5 answers for 20 such clients (docs/reliability.md has
 * the figures, and what each client's own copy cost).
 * Under TSan the figure is printed only. */
static void test_slow_readers_share_one_body(void **state)
{
	(void)state;
	struct proc f, s;
	struct resp r;
	int fds[20];
	fake_start(&f, big_payload(4000), NULL);
	shim_start(&s, f.port, "--slurmctld.min-interval", "60", NULL);
	http("GET", s.port, "/metrics", &r, 30000); /* warm up: every allocation of a render made once */
	assert_int_equal(r.status, 200);
	long answer_kb = (long)r.body.len / 1024;
	assert_true(answer_kb > 1024);
	buf_free(&r.body);
	long rss0 = vmrss_kb(s.pid);
	for (int i = 0; i < 20; i++)
		fds[i] = slow_reader(s.port);
	for (int i = 0; i < 20; i++) {
		char head[13] = "";
		assert_int_equal(recv(fds[i], head, 12, MSG_WAITALL), 12);
		assert_string_equal(head, "HTTP/1.1 200");
	}
	long rss1 = vmrss_kb(s.pid);
	print_message("figures: answer %ld kB, shim VmRSS %ld kB before, %ld kB with 20 clients not reading (+%ld kB)\n",
		      answer_kb, rss0, rss1, rss1 - rss0);
	assert_true(rss0 > 0 && rss1 > 0);
	if (!shim_has("__tsan_init"))
		assert_true(rss1 - rss0 < 5 * answer_kb);
	for (int i = 0; i < 20; i++)
		close(fds[i]);
	stop(&s);
	stop(&f);
}

/* n slow readers, one min-interval (0.4 s) apart: each gets an answer of its own (the payloads
 * were fetched again in between). Their status codes go to st; returns the shim's VmRSS growth
 * in kB, answer_kb the answer's size. The passthrough is asked once first, so that slurmctld's
 * payloads keep every family (they did from then on before it was decided at start-up; they do
 * from the start now): payloads several times an answer's size. */
static long readers_apart(const struct proc *s, int n, int fds[], int st[], long *answer_kb)
{
	struct resp r;
	http("GET", s->port, "/native/metrics/nodes", &r, 30000);
	assert_int_equal(r.status, 200);
	buf_free(&r.body);
	http("GET", s->port, "/metrics", &r, 30000); /* warm up: every allocation of a render made once */
	assert_int_equal(r.status, 200);
	*answer_kb = (long)r.body.len / 1024;
	buf_free(&r.body);
	tu_sleep_ms(500);
	http("GET", s->port, "/metrics", &r, 30000);
	buf_free(&r.body);
	long rss0 = vmrss_kb(s->pid);
	for (int i = 0; i < n; i++) {
		tu_sleep_ms(500); /* past the interval: the next reader gets new payloads, a new answer */
		fds[i] = slow_reader(s->port);
		char head[13] = "";
		assert_int_equal(recv(fds[i], head, 12, MSG_WAITALL), 12);
		st[i] = atoi(head + 9);
	}
	long rss1 = vmrss_kb(s->pid);
	assert_true(rss0 > 0 && rss1 > 0);
	return rss1 - rss0;
}

/* Slow readers arriving one min-interval apart keep only the answers' bodies, not the payloads
 * they were rendered from (every family of every endpoint with the passthrough on). Memory, not
 * time: the shim's VmRSS grows by less than 12 answers and 32 MB (measured +64 MB with 12 answers
 * of 4.1 MB; +130 MB when each answer held its payloads). */
static void test_slow_readers_apart_hold_bodies_only(void **state)
{
	(void)state;
	struct proc f, s;
	int fds[12], st[12];
	long answer_kb;
	fake_start(&f, big_payload(10000), NULL);
	shim_start(&s, f.port, "--slurmctld.min-interval", "0.4", "--slurmctld.jobs.min-interval", "0.4", NULL);
	long grew = readers_apart(&s, 12, fds, st, &answer_kb);
	print_message("figures: answer %ld kB, shim VmRSS +%ld kB with 12 readers one interval apart\n", answer_kb, grew);
	for (int i = 0; i < 12; i++)
		assert_int_equal(st[i], 200);
	if (!shim_has("__tsan_init") && !shim_has("__asan_init"))
		assert_true(grew < 12 * answer_kb + 32768);
	for (int i = 0; i < 12; i++)
		close(fds[i]);
	stop(&s);
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
	tu_write("/tmp/shimtest-token-redir", "tok-SECRET-9\n");
	fake_start(&other, STATE, NULL);
	snprintf(port, sizeof(port), "%u", other.port);
	fake_start(&home, STATE, "--fault", "redirect", "--redirect-port", port, NULL);
	shim_start(&s, home.port, "--slurmctld.auth.token-file", "/tmp/shimtest-token-redir", "--slurmctld.auth.user",
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
	tu_write("/tmp/shimtest-token-redir", "tok-SECRET-9\n");
	fake_start(&f, STATE, "--fault", "redirect-self", "--token", "tok-SECRET-9", NULL);
	shim_start(&s, f.port, "--slurmctld.auth.token-file", "/tmp/shimtest-token-redir", NULL);
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
		/* its name, path and replay file name the same endpoint */
		const char *leaf = strrchr(src->path, '/') + 1;
		snprintf(want, sizeof(want), native ? "/metrics/%s" : "/slurm/{version}/%s", leaf);
		assert_string_equal(src->path, want);
		snprintf(want, sizeof(want), native ? "%s" : "slurmrestd-%s", leaf);
		assert_string_equal(src->name, want);
		snprintf(want, sizeof(want), native ? "metrics_%s.txt" : "rest_%s.json", leaf);
		assert_string_equal(src->file, want);
		/* and a capture holds that file */
		snprintf(want, sizeof(want), "tests/fixtures/slurm-25.11-rest/R1-idle-drained/%s", src->file);
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

/* ---- slurmrestd as a second upstream ---- */

#define REST_STATE "tests/fixtures/slurm-25.11-rest/R2-busy-mix-draining"
#define REST_MAPPING "/tmp/shimtest-rest.json"
#define REST_SOCK "/tmp/shimtest-rest.sock"

/* A native row, a row on slurmrestd's /nodes and one on /jobs behind --slurmrestd.jobs; a row
 * preferring /nodes over its native form, and one served only by its preferred form on /jobs. */
static void write_rest_mapping(void)
{
	tu_write(REST_MAPPING,
		 "{\"metrics\": [{\"name\": \"slurm_scheduler_threads\", \"help\": \"h\", \"type\": \"gauge\","
		 " \"expr\": \"slurm_server_thread_cnt + 1\", \"fidelity\": \"exact\"},"
		 " {\"name\": \"rest_cpus\", \"help\": \"h\", \"type\": \"gauge\", \"expr\": \"sum(slurmrestd_node_cpus)\","
		 " \"fidelity\": \"exact\"},"
		 " {\"name\": \"rest_jobs\", \"help\": \"h\", \"type\": \"gauge\", \"expr\": \"sum(slurmrestd_jobs)\","
		 " \"fidelity\": \"exact\", \"enabled_by\": \"slurmrestd-jobs\"},"
		 " {\"name\": \"fallback_row\", \"help\": \"h\", \"type\": \"gauge\", \"expr\": \"slurm_server_thread_cnt\","
		 " \"fidelity\": \"approximate\", \"note\": \"n\", \"prefer\": [{\"expr\": \"sum(slurmrestd_node_cpus)\", \"fidelity\": \"exact\"}]},"
		 " {\"name\": \"rest_only\", \"help\": \"h\", \"type\": \"gauge\", \"fidelity\": \"unavailable\", \"note\": \"n\","
		 " \"prefer\": [{\"expr\": \"sum(slurmrestd_jobs)\", \"fidelity\": \"exact\"}]}]}\n");
}

#define FIDELITY(fam, fid, up) "slurm_exporter_shim_row_fidelity{family=\"" fam "\",fidelity=\"" fid "\",upstream=\"" up "\"} 1\n"

/* A shim on native fake port ctl and slurmrestd URL rest (NULL: none), slurmrestd answers never
 * reused (/jobs' cost rule off: --slurmrestd.jobs.max-share 0; its floor 0: no back-off), with up to
 * 6 more arguments (NULL ends them). */
static void rest_shim_start(struct proc *s, unsigned ctl, const char *rest, const char *a1, const char *a2,
			    const char *a3, const char *a4, const char *a5, const char *a6)
{
	write_rest_mapping();
	if (rest)
		shim_start(s, ctl, "--mapping.file", REST_MAPPING, "--slurmrestd.url", rest, "--slurmrestd.timeout", "2",
			   "--slurmrestd.min-interval", "0", "--slurmrestd.jobs.min-interval", "0", "--slurmrestd.jobs.max-share",
			   "0", a1, a2, a3, a4, a5, a6, NULL);
	else
		shim_start(s, ctl, "--mapping.file", REST_MAPPING, a1, a2, a3, a4, a5, a6, NULL);
}

static void rest_url(char *url, size_t len, unsigned port)
{
	snprintf(url, len, "http://127.0.0.1:%u", port);
}

/* One scrape with a 5 s deadline: 200 with the native row; the body as a new string. */
static char *scrape_ok(unsigned port)
{
	struct resp r;
	size_t n;
	http_hdr("GET", port, "/metrics", "X-Prometheus-Scrape-Timeout-Seconds: 5", &r, 8000);
	if (r.status != 200 || !strstr(r.body.data, "\nslurm_scheduler_threads "))
		fail_msg("status %ld, body:\n%s", r.status, r.body.data ? r.body.data : "");
	return buf_steal(&r.body, &n);
}

static int has(const char *text, const char *needle)
{
	return text && strstr(text, needle) != NULL;
}

/* How many times needle occurs in text. */
static int count_of(const char *text, const char *needle)
{
	int n = 0;
	for (const char *p = text; p && (p = strstr(p, needle)); p += strlen(needle))
		n++;
	return n;
}

#define REST_UP(ep, v) "slurm_exporter_shim_up{endpoint=\"slurmrestd-" ep "\"} " v "\n"

/* slurmrestd answers with fault: the scrape answers in time with the native families, the
 * slurmrestd source is down with the reason (self metric and log), nothing crashes. */
static void expect_rest_down(const char *fault, const char *reason, const char *extra)
{
	struct proc f, rf, s;
	char url[64];
	fake_start(&f, STATE, NULL);
	fake_start(&rf, REST_STATE, "--fault", fault, NULL);
	rest_url(url, sizeof(url), rf.port);
	rest_shim_start(&s, f.port, url, "--slurmrestd.api-version", "v0.0.44", extra, NULL, NULL, NULL);
	char *body = scrape_ok(s.port);
	if (!has(body, REST_UP("nodes", "0")) || has(body, "\nrest_cpus "))
		fail_msg("fault %s: slurmrestd-nodes not down:\n%s", fault, body);
	if (!has(body, "\nfallback_row ") || !has(body, FIDELITY("fallback_row", "approximate", "slurmctld")))
		fail_msg("fault %s: fallback_row not served by its native form:\n%s", fault, body);
	free(body);
	struct resp r;
	http("GET", s.port, "/", &r, 5000); /* still alive */
	assert_int_equal(r.status, 200);
	buf_free(&r.body);
	stop(&s);
	char *log = tu_slurp(s.log, NULL);
	if (!has(log, "endpoint /slurm/{version}/nodes failed: ") || !has(log, reason))
		fail_msg("fault %s: no \"%s\" in the log:\n%s", fault, reason, log ? log : "");
	free(log);
	stop(&rf);
	stop(&f);
}

static void test_rest_faults(void **state)
{
	(void)state;
	expect_rest_down("401", "401 Unauthorized and no token sent: set --slurmrestd.auth.token-file", NULL);
	expect_rest_down("403", "403 Forbidden and no token sent", NULL);
	expect_rest_down("500", "HTTP status 500", NULL);
	expect_rest_down("503", "HTTP status 503", NULL);
	expect_rest_down("hang", "imeout", NULL);
	expect_rest_down("drip", "imeout", NULL);
	expect_rest_down("garbage", "failed: slurmrestd http://127.0.0.1:", NULL); /* the URL fetched */
	expect_rest_down("cut", "failed: slurmrestd http://127.0.0.1:", NULL); /* the URL fetched */
	expect_rest_down("close", "failed: slurmrestd http://127.0.0.1:", NULL); /* the URL fetched */
	expect_rest_down("badquote", "malformed", NULL);
	expect_rest_down("empty", "empty answer", NULL);
	expect_rest_down("huge", "--slurmrestd.max-body", "--slurmrestd.max-body=100000");
	expect_rest_down("huge-nolength", "--slurmrestd.max-body", "--slurmrestd.max-body=100000");
}

/* An answer is usable only if its framing says it is whole: a response cut inside
 * its headers (slurmctld closing after the status line) was the empty "no jobs" answer, vouched
 * for by nodes: queue 0. Now: unusable with the reason, its families left out; a slurmctld 200
 * with a body and no Content-Length, or a body shorter than it, likewise. slurmrestd is not held to
 * the length (a JSON document cut short does not parse): its close-delimited answer is used. */
static void test_framing_faults(void **state)
{
	(void)state;
	struct proc f, rf, s;
	struct resp r;
	fake_start(&f, STATE, "--fault", "cuthead", "--fault-endpoint", "jobs-users-accts", NULL);
	shim_start(&s, f.port, NULL);
	http("GET", s.port, "/metrics", &r, 10000);
	assert_int_equal(r.status, 200);
	assert_non_null(strstr(r.body.data, "slurm_exporter_shim_up{endpoint=\"jobs-users-accts\"} 0\n"));
	assert_non_null(strstr(r.body.data, "slurm_exporter_shim_up{endpoint=\"nodes\"} 1\n"));
	if (strstr(r.body.data, "\nslurm_queue_running "))
		fail_msg("a response cut in its headers served as no jobs:\n%s", r.body.data);
	assert_non_null(strstr(r.body.data,
			       "slurm_exporter_shim_family_left_out{family=\"slurm_queue_running\",reason=\"input_down\"} 1\n"));
	assert_non_null(strstr(r.body.data, "\nslurm_cpus_total 44\n"));
	buf_free(&r.body);
	stop(&s);
	stop(&f);
	char *log = tu_slurp(s.log, NULL), want[300];
	snprintf(want, sizeof(want), "endpoint /metrics/jobs-users-accts failed: slurmctld http://127.0.0.1:%u: the answer "
		 "ended inside its headers (HTTP 200, then the connection closed): not an answer", f.port);
	assert_non_null(strstr(log, want));
	free(log);
	expect_503("cuthead", "/metrics/nodes: the answer ended inside its headers", NULL);
	expect_503("nolength", "/metrics/nodes: 200 with a body but no Content-Length (slurmctld always sends one)", NULL);
	expect_503("cut", "/metrics/nodes: transfer closed with", NULL);

	fake_start(&f, STATE, NULL);
	char url[64];
	for (int k = 0; k < 2; k++) {
		fake_start(&rf, REST_STATE, "--fault", k ? "cuthead" : "nolength", "--fault-endpoint", "rest_nodes", NULL);
		rest_url(url, sizeof(url), rf.port);
		rest_shim_start(&s, f.port, url, "--slurmrestd.api-version", "v0.0.44", NULL, NULL, NULL, NULL);
		char *body = scrape_ok(s.port);
		if (!has(body, k ? REST_UP("nodes", "0") : REST_UP("nodes", "1")))
			fail_msg("slurmrestd %s: slurmrestd-nodes %s:\n%s", k ? "cut in its headers" : "without Content-Length",
				 k ? "up" : "down", body);
		free(body);
		stop(&s);
		stop(&rf);
	}
	stop(&f);
}

/* Nobody listens on --slurmrestd.url: the same. */
static void test_rest_refused(void **state)
{
	(void)state;
	struct proc f, s;
	char url[64];
	fake_start(&f, STATE, NULL);
	rest_url(url, sizeof(url), free_port());
	rest_shim_start(&s, f.port, url, "--slurmrestd.api-version", "v0.0.44", NULL, NULL, NULL, NULL);
	char *body = scrape_ok(s.port);
	assert_true(has(body, REST_UP("nodes", "0")));
	free(body);
	stop(&s);
	char *log = tu_slurp(s.log, NULL);
	assert_true(has(log, "endpoint /slurm/{version}/nodes failed: "));
	assert_true(has(log, "onnect"));
	free(log);
	stop(&f);
}

/* A slurmrestd socket that cannot be reached is named in the reason: curl's own text names the
 * URL's placeholder host, "localhost port 80". Both paths: the API version discovery and a fetch
 * with a fixed --slurmrestd.api-version. */
static void test_rest_unix_socket_error(void **state)
{
	(void)state;
	static const char sock[] = "/tmp/shimtest-no-such.sock";
	struct proc f, s;
	fake_start(&f, STATE, NULL);
	unlink(sock);
	for (int fixed = 0; fixed <= 1; fixed++) {
		rest_shim_start(&s, f.port, "unix:/tmp/shimtest-no-such.sock", fixed ? "--slurmrestd.api-version" : NULL,
				fixed ? "v0.0.44" : NULL, NULL, NULL, NULL, NULL);
		char *body = scrape_ok(s.port);
		assert_true(has(body, REST_UP("nodes", "0")));
		free(body);
		stop(&s);
		char *log = tu_slurp(s.log, NULL);
		/* the log line names the URL fetched, then the reason */
		if (!has(log, fixed ? "/nodes failed: slurmrestd unix:/tmp/shimtest-no-such.sock: cannot connect to unix socket "
				      "/tmp/shimtest-no-such.sock: No such file or directory" :
				      "/nodes failed: slurmrestd unix:/tmp/shimtest-no-such.sock: API version discovery: /openapi/v3: "
				      "cannot connect to unix socket /tmp/shimtest-no-such.sock: No such file or directory") ||
		    has(log, "port 80"))
			fail_msg("%s:\n%s", fixed ? "fixed version" : "discovery", log);
		free(log);
	}
	stop(&f);
}

/* Only what loaded, enabled rows read is fetched: without --slurmrestd.url nothing of slurmrestd
 * (not even in self metrics); with it /nodes but not /jobs; with --slurmrestd.jobs /jobs too. The
 * version is discovered once from /openapi/v3 (the newest the shim reads, not v0.0.47). */
static void test_rest_sources_and_discovery(void **state)
{
	(void)state;
	struct proc f, s;
	char url[64];
	fake_start(&f, REST_STATE, NULL);
	rest_shim_start(&s, f.port, NULL, NULL, NULL, NULL, NULL, NULL, NULL);
	char *body = scrape_ok(s.port);
	assert_false(has(body, "slurmrestd"));
	assert_false(has(body, "\nrest_cpus "));
	assert_true(has(body, FIDELITY("fallback_row", "approximate", "slurmctld")));
	free(body);
	stop(&s);
	assert_int_equal(stat_count(f.port, "rest_nodes"), 0);
	assert_int_equal(stat_count(f.port, "openapi"), 0);

	rest_url(url, sizeof(url), f.port);
	rest_shim_start(&s, f.port, url, NULL, NULL, NULL, NULL, NULL, NULL);
	for (int i = 0; i < 2; i++) {
		body = scrape_ok(s.port);
		assert_true(has(body, REST_UP("nodes", "1")));
		assert_true(has(body, "\nrest_cpus 52\n"));
		assert_true(has(body, "\nfallback_row 52\n"));
		assert_true(has(body, FIDELITY("fallback_row", "exact", "slurmrestd")));
		assert_false(has(body, "slurmrestd-jobs")); /* rest_only's form does not make /jobs fetched */
		assert_false(has(body, "\nrest_only "));
		free(body);
	}
	assert_int_equal(stat_count(f.port, "openapi"), 1);
	assert_int_equal(stat_count(f.port, "rest_nodes"), 2);
	assert_int_equal(stat_count(f.port, "rest_jobs"), 0);
	assert_int_equal(stat_count(f.port, "rest_shares"), 0);
	stop(&s);
	char *log = tu_slurp(s.log, NULL);
	assert_true(has(log, "slurmrestd: API version v0.0.44"));
	free(log);

	rest_shim_start(&s, f.port, url, "--slurmrestd.jobs", NULL, NULL, NULL, NULL, NULL);
	body = scrape_ok(s.port);
	assert_true(has(body, REST_UP("jobs", "1")));
	assert_true(has(body, "\nrest_jobs "));
	assert_true(has(body, FIDELITY("rest_only", "exact", "slurmrestd")));
	free(body);
	assert_int_equal(stat_count(f.port, "rest_jobs"), 1);
	stop(&s);
	stop(&f);
}

#define REST_V46_DIR "tests/fixtures/slurmrestd-v0.0.46" /* made by tests/rest-v0046-docs.py from REST_STATE */

/* The shipped table's answer on REST_STATE's native files with a slurmrestd serving rest_dir's
 * documents under version and listing v0.0.<oldest> to it in /openapi/v3, every slurmrestd source
 * on: its rows' lines, their fidelity and the sources' up (the other self metrics vary with time).
 * The version asked for is checked; *log is the shim's log. */
static char *rest_rows_answer(const char *rest_dir, const char *version, const char *oldest, char **log)
{
	struct proc f, rf, s;
	struct resp r;
	char url[64], path[64];
	fake_start(&f, REST_STATE, NULL);
	fake_start(&rf, rest_dir, "--openapi-oldest", oldest, NULL);
	snprintf(path, sizeof(path), "/_rest-version/%s", version);
	http("GET", rf.port, path, &r, 5000);
	buf_free(&r.body);
	rest_url(url, sizeof(url), rf.port);
	shim_start(&s, f.port, "--slurmrestd.url", url, "--slurmrestd.jobs", "--gpus-acct", NULL);
	char *body = scrape_ok(s.port);
	assert_int_equal(stat_count(rf.port, "openapi"), 1);
	http("GET", rf.port, "/_last_request", &r, 5000);
	snprintf(path, sizeof(path), "GET /slurm/%s/", version);
	if (!has(r.body.data, path))
		fail_msg("slurmrestd's last request is not under %s:\n%s", version, r.body.data);
	buf_free(&r.body);
	stop(&s);
	stop(&rf);
	stop(&f);
	*log = tu_slurp(s.log, NULL);
	struct buf keep;
	buf_init(&keep, 0);
	for (const char *line = body; *line;) {
		const char *end = strchr(line, '\n');
		size_t n = end ? (size_t)(end - line) + 1 : strlen(line);
		if (strncmp(line, "slurm_exporter_shim_", 20) || !strncmp(line, "slurm_exporter_shim_row_fidelity{", 33) ||
		    !strncmp(line, "slurm_exporter_shim_up{", 23))
			buf_append(&keep, line, n);
		line += n;
	}
	free(body);
	return buf_steal(&keep, NULL);
}

/* A slurmrestd offering only v0.0.45 and v0.0.46 (and v0.0.47, which the shim does not read):
 * discovery picks v0.0.46, and every row with a slurmrestd form is served by it, each line as
 * from the v0.0.44 answers the v0.0.46 documents were derived from (tests/rest-v0046-docs.py
 * applies what data_parser v0.0.45 and v0.0.46 changed; no field the shim reads). */
static void test_rest_newer_versions(void **state)
{
	(void)state;
	char *log44, *log46;
	char *want = rest_rows_answer(REST_STATE, "v0.0.44", "v0.0.42", &log44);
	char *got = rest_rows_answer(REST_V46_DIR, "v0.0.46", "v0.0.45", &log46);
	assert_true(has(log44, "slurmrestd: API version v0.0.44"));
	if (!has(log46, "slurmrestd: API version v0.0.46"))
		fail_msg("v0.0.46 not discovered:\n%s", log46);
	for (const char *const *ep = (const char *const[]){ "nodes", "shares", "jobs", "diag", NULL }; *ep; ep++) {
		char up[96];
		snprintf(up, sizeof(up), "slurm_exporter_shim_up{endpoint=\"slurmrestd-%s\"} 1\n", *ep);
		if (!has(got, up))
			fail_msg("%s missing:\n%s", up, got);
	}
	struct mapping *m = tu_load_shipped();
	size_t nrest = 0;
	for (size_t i = 0; i < m->nrows; i++) {
		if (row_upstream(&m->rows[i], 0) != UPSTREAM_SLURMRESTD)
			continue;
		char line[200];
		snprintf(line, sizeof(line), "slurm_exporter_shim_row_fidelity{family=\"%s\",", m->rows[i].name);
		const char *p = strstr(got, line);
		if (!p || strncmp(strchr(p, '}') - strlen("upstream=\"slurmrestd\""), "upstream=\"slurmrestd\"", 21))
			fail_msg("row %s not served by slurmrestd:\n%s", m->rows[i].name, got);
		nrest++;
	}
	assert_true(nrest >= 40);
	mapping_free(m);
	if (strcmp(got, want))
		fail_msg("v0.0.46 answer differs from v0.0.44's:\n--- v0.0.44\n%s\n--- v0.0.46\n%s", want, got);
	free(want);
	free(got);
	free(log44);
	free(log46);
}

/* A /jobs that cannot finish is not asked again at full cost every interval: slurmrestd
 * hangs on /jobs only; with a floor of 1 s, timeouts of 1 s (--slurmrestd.jobs.max-timeout 1), a 50%
 * share and back-off at most 8 s, the first fetch times out after 1 s, the next is asked 2 s later,
 * the third 4 s after that: two /jobs requests in the first 7 s of scrapes every 0.3 s, where a
 * fixed 1 s interval asks four. The log says it backs off once; the self
 * metrics and the status page say so, and /jobs' rows fall back (slurm_exporter_shim_up 0) while
 * /nodes is served; when slurmrestd answers again, the next fetch is usable and the back-off ends. */
static void test_rest_jobs_backoff(void **state)
{
	(void)state;
	struct proc f, s;
	struct resp r;
	char url[64];
	fake_start(&f, REST_STATE, "--fault", "hang", "--fault-endpoint", "rest_jobs", NULL);
	rest_url(url, sizeof(url), f.port);
	write_rest_mapping();
	shim_start(&s, f.port, "--mapping.file", REST_MAPPING, "--slurmrestd.url", url, "--slurmrestd.jobs",
		   "--slurmrestd.timeout", "1", "--slurmrestd.min-interval", "0", "--slurmrestd.jobs.min-interval", "1",
		   "--slurmrestd.jobs.max-share", "50", "--slurmrestd.jobs.max-backoff", "8",
		   "--slurmrestd.jobs.max-timeout", "1", NULL);
	double t0 = now_s();
	int scrapes = 0;
	char *body = NULL;
	while (now_s() - t0 < 7) {
		free(body);
		body = scrape_ok(s.port);
		assert_true(has(body, "\nrest_cpus 52\n"));         /* /nodes is served all along */
		assert_false(has(body, "\nrest_jobs "));             /* /jobs' row falls back: left out */
		scrapes++;
		tu_sleep_ms(300);
	}
	long asked = stat_count(f.port, "rest_jobs");
	print_message("figures: %d scrapes in 7 s, /jobs asked %ld times\n", scrapes, asked);
	assert_int_equal(asked, 2);
	assert_true(has(body, REST_UP("jobs", "0")));
	assert_true(has(body, "slurm_exporter_shim_fetch_failures{endpoint=\"slurmrestd-jobs\"} 2\n"));
	assert_true(has(body, "slurm_exporter_shim_fetch_interval_seconds{endpoint=\"slurmrestd-jobs\"} 4\n"));
	assert_true(has(body, "slurm_exporter_shim_fetch_timeout_seconds{endpoint=\"slurmrestd-jobs\"} 1\n"));
	assert_true(has(body, "slurm_exporter_shim_fetch_cost_seconds{endpoint=\"slurmrestd-jobs\"} 0\n"));
	assert_false(has(body, "fetch_failures{endpoint=\"slurmrestd-nodes\"}")); /* only /jobs is cost-scheduled */
	free(body);
	http("GET", s.port, "/", &r, 5000);
	assert_true(has(r.body.data, "<b>Backing off</b> after 2 failed fetches in a row"));
	buf_free(&r.body);
	char *log = tu_slurp(s.log, NULL);
	assert_int_equal(count_of(log, "backing off"), 1);
	assert_true(has(log, "endpoint /slurm/{version}/jobs failed after 1.0 s: backing off (the next fetch in 2 s with a "
			     "timeout of 1 s"));
	free(log);
	/* slurmrestd answers again: the third fetch (about 8 s after the start) is usable */
	http("GET", f.port, "/_fault/none", &r, 5000);
	buf_free(&r.body);
	int up = 0;
	while (!up && now_s() - t0 < 25) {
		body = scrape_ok(s.port);
		up = has(body, REST_UP("jobs", "1"));
		if (up) {
			assert_true(has(body, "\nrest_jobs "));
			assert_true(has(body, "slurm_exporter_shim_fetch_failures{endpoint=\"slurmrestd-jobs\"} 0\n"));
		}
		free(body);
		tu_sleep_ms(300);
	}
	assert_true(up);
	assert_int_equal(stat_count(f.port, "rest_jobs"), 3);
	stop(&s);
	log = tu_slurp(s.log, NULL);
	assert_true(has(log, "endpoint /slurm/{version}/jobs is usable again after 2 failed fetches"));
	free(log);
	stop(&f);
}

/* A failed discovery is asked again after its back-off (SLURMRESTD_API_BACKOFF_MIN after the first failure),
 * not at every scrape (/openapi/v3 is tens of MB); a fixed --slurmrestd.api-version is
 * used as is. */
static void test_rest_discovery_retry_and_fixed(void **state)
{
	(void)state;
	struct proc f, s;
	char url[64];
	fake_start(&f, REST_STATE, "--fault", "500", "--fault-endpoint", "openapi", NULL);
	rest_url(url, sizeof(url), f.port);
	rest_shim_start(&s, f.port, url, NULL, NULL, NULL, NULL, NULL, NULL);
	for (int i = 0; i < 3; i++) {
		if (i == 2)
			tu_sleep_ms((long)(SLURMRESTD_API_BACKOFF_MIN * 1000) + 300);
		char *body = scrape_ok(s.port);
		assert_true(has(body, REST_UP("nodes", "0")));
		free(body);
		assert_int_equal(stat_count(f.port, "openapi"), i < 2 ? 1 : 2);
		if (i == 1) { /* the status page says when it is asked again */
			struct resp r;
			http("GET", s.port, "/", &r, 5000);
			assert_true(has(r.body.data, "HTTP status 500 (asked again in 1 s)"));
			buf_free(&r.body);
		}
	}
	assert_int_equal(stat_count(f.port, "rest_nodes"), 0);
	stop(&s);
	char *log = tu_slurp(s.log, NULL);
	assert_true(has(log, "API version discovery: /openapi/v3: HTTP status 500"));
	free(log);

	rest_shim_start(&s, f.port, url, "--slurmrestd.api-version", "v0.0.43", NULL, NULL, NULL, NULL);
	char *body = scrape_ok(s.port);
	assert_true(has(body, REST_UP("nodes", "0"))); /* the fake serves only v0.0.44 */
	free(body);
	assert_int_equal(stat_count(f.port, "openapi"), 2);
	stop(&s);
	log = tu_slurp(s.log, NULL);
	assert_true(has(log, "does this slurmrestd serve --slurmrestd.api-version"));
	free(log);
	stop(&f);
}

/* The token file is re-read on every fetch: rotating it needs no restart. */
static void test_rest_token_reread(void **state)
{
	(void)state;
	struct proc f, rf, s;
	char url[64];
	struct resp r;
	fake_start(&f, STATE, NULL);
	fake_start(&rf, REST_STATE, "--token", "rest-SECRET-1", "--user", "shim", NULL);
	rest_url(url, sizeof(url), rf.port);
	tu_write("/tmp/shimtest-rest-token", "rest-SECRET-1\n");
	rest_shim_start(&s, f.port, url, "--slurmrestd.auth.token-file", "/tmp/shimtest-rest-token",
			"--slurmrestd.auth.user", "shim", "--slurmrestd.api-version", "v0.0.44");
	char *body = scrape_ok(s.port);
	assert_true(has(body, REST_UP("nodes", "1")));
	free(body);
	http("GET", rf.port, "/_last_request", &r, 5000);
	assert_true(has(r.body.data, "X-SLURM-USER-TOKEN: rest-SECRET-1"));
	assert_true(has(r.body.data, "X-SLURM-USER-NAME: shim"));
	assert_true(has(r.body.data, "Accept: application/json"));
	buf_free(&r.body);
	http("GET", f.port, "/_last_request", &r, 5000); /* slurmctld never gets slurmrestd's token */
	assert_false(has(r.body.data, "SECRET"));
	buf_free(&r.body);
	tu_write("/tmp/shimtest-rest-token", "rest-SECRET-expired\n");
	body = scrape_ok(s.port);
	assert_true(has(body, REST_UP("nodes", "0")));
	free(body);
	tu_write("/tmp/shimtest-rest-token", "rest-SECRET-1\n");
	body = scrape_ok(s.port);
	assert_true(has(body, REST_UP("nodes", "1")));
	assert_false(has(body, "SECRET"));
	free(body);
	stop(&s);
	char *log = tu_slurp(s.log, NULL);
	assert_true(has(log, "token expired or not accepted"));
	assert_false(has(log, "SECRET"));
	free(log);
	stop(&rf);
	stop(&f);
}

/* A redirect to another origin is followed without slurmrestd's token and user. */
static void test_rest_redirect_keeps_credentials_home(void **state)
{
	(void)state;
	struct proc f, other, home, s;
	char url[64], port[16];
	struct resp r;
	fake_start(&f, STATE, NULL);
	fake_start(&other, REST_STATE, NULL);
	snprintf(port, sizeof(port), "%u", other.port);
	fake_start(&home, REST_STATE, "--fault", "redirect", "--redirect-port", port, NULL);
	rest_url(url, sizeof(url), home.port);
	tu_write("/tmp/shimtest-rest-token", "rest-SECRET-1\n");
	rest_shim_start(&s, f.port, url, "--slurmrestd.auth.token-file", "/tmp/shimtest-rest-token",
			"--slurmrestd.auth.user", "shim", "--slurmrestd.api-version", "v0.0.44");
	char *body = scrape_ok(s.port);
	assert_true(has(body, REST_UP("nodes", "1")));
	free(body);
	http("GET", other.port, "/_last_request", &r, 5000);
	assert_true(has(r.body.data, "GET /slurm/v0.0.44/nodes"));
	assert_false(has(r.body.data, "X-SLURM-USER"));
	assert_false(has(r.body.data, "SECRET"));
	buf_free(&r.body);
	stop(&s);
	stop(&home);
	stop(&other);
	stop(&f);
}

/* slurmrestd on a unix socket (unix:/path), the version discovered over it too. */
static void test_rest_unix_socket(void **state)
{
	(void)state;
	struct proc f, rf = { 0 }, s;
	const char *bin = getenv("FAKE_SLURMCTLD") ? getenv("FAKE_SLURMCTLD") : "build/tests/fake_slurmctld";
	char *argv[] = { (char *)bin, "--port", "0", "--dir", REST_STATE, "--unix", REST_SOCK, NULL };
	fake_start(&f, STATE, NULL);
	unlink(REST_SOCK);
	snprintf(rf.log, sizeof(rf.log), "/tmp/shimtest-fake-unix.log");
	rf.pid = spawn(argv, rf.log);
	for (int i = 0; i < 400 && access(REST_SOCK, F_OK) != 0; i++)
		tu_sleep_ms(25);
	rest_shim_start(&s, f.port, "unix:" REST_SOCK, NULL, NULL, NULL, NULL, NULL, NULL);
	char *body = scrape_ok(s.port);
	assert_true(has(body, REST_UP("nodes", "1")));
	assert_true(has(body, "\nrest_cpus 52\n"));
	free(body);
	stop(&s);
	stop(&rf);
	stop(&f);
	unlink(REST_SOCK);
}

/* A hung slurmrestd neither holds back slurmctld's answers (each upstream has its own fetch,
 * published when it ends) nor delays /metrics to its deadline: once slurmctld's answers are in,
 * slurmrestd's are waited for 2 s (src/cache.h's CACHE_REST_WAIT_S; twice its last usable fetch
 * if longer), then the scrape is served with the native forms; the self metrics and the status
 * page say slurmrestd was not waited for. (It used to wait until the deadline, 8.5 s here.) */
static void test_rest_hung_not_waited_for(void **state)
{
	(void)state;
	struct proc f, rf, s;
	char url[64];
	struct resp r;
	fake_start(&f, STATE, NULL);
	fake_start(&rf, REST_STATE, "--fault", "hang", NULL);
	rest_url(url, sizeof(url), rf.port);
	write_rest_mapping();
	shim_start(&s, f.port, "--mapping.file", REST_MAPPING, "--slurmrestd.url", url, "--slurmrestd.timeout", "30",
		   "--slurmrestd.api-version", "v0.0.44", NULL);
	double t0 = mono_now();
	http_hdr("GET", s.port, "/metrics", "X-Prometheus-Scrape-Timeout-Seconds: 9", &r, 15000);
	double took = mono_now() - t0;
	print_message("figures: /metrics answered in %.2f s with slurmrestd hung\n", took);
	if (r.status != 200 || !has(r.body.data, "\nslurm_scheduler_threads ") || !has(r.body.data, REST_UP("nodes", "0")) ||
	    !has(r.body.data, FIDELITY("fallback_row", "approximate", "slurmctld")) ||
	    !has(r.body.data, "\nslurm_exporter_shim_not_waited_for{endpoint=\"slurmrestd-nodes\"} 1\n"))
		fail_msg("status %ld, body:\n%s", r.status, r.body.data ? r.body.data : "");
	assert_true(took < 4.5);
	buf_free(&r.body);
	http("GET", s.port, "/", &r, 5000);
	assert_int_equal(r.status, 200);
	if (!has(r.body.data, "not waited for: slurmctld&#39;s answers were in") &&
	    !has(r.body.data, "not waited for: slurmctld's answers were in"))
		fail_msg("the status page does not say slurmrestd was not waited for:\n%s", r.body.data);
	buf_free(&r.body);
	stop(&rf); /* ends the hanging fetch, which the shim waits for on exit */
	stop(&s);
	stop(&f);
}

/* Discovery's choice from an /openapi/v3 document. */
static void test_restapi_learn(void **state)
{
	(void)state;
	char v[SLURMRESTD_API_VERSION_MAX], why[300];
	struct slurmrestd_api *ra = slurmrestd_api_new(NULL);
	assert_int_equal(slurmrestd_api_version(ra, v), -1);
	const char *bad[] = { "", "not json", "[]", "{\"paths\": []}", "{\"paths\": {\"/slurm/v0.0.40/nodes/\": {}}}",
			      "{\"paths\": {\"/slurmdb/v0.0.44/jobs/\": {}, \"/slurm/v0.0.440/x\": {}}}" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		why[0] = '\0';
		assert_int_equal(slurmrestd_api_learn(ra, bad[i], strlen(bad[i]), why, sizeof(why)), -1);
		assert_true(has(why, "/openapi/v3: "));
		assert_int_equal(slurmrestd_api_version(ra, v), -1);
	}
	const char *doc = "{\"paths\": {\"/slurm/v0.0.47/nodes/\": {}, \"/slurm/v0.0.43/nodes/\": {},"
			  " \"/slurm/v0.0.44/diag/\": {}, \"/slurm/v0.0.42/jobs/\": {}}}";
	assert_int_equal(slurmrestd_api_learn(ra, doc, strlen(doc), why, sizeof(why)), 0);
	assert_int_equal(slurmrestd_api_version(ra, v), 0);
	assert_string_equal(v, "v0.0.44");
	doc = "{\"paths\": {\"/slurm/v0.0.46/nodes/\": {}, \"/slurm/v0.0.47/nodes/\": {}, \"/slurm/v0.0.45/jobs/\": {}}}";
	assert_int_equal(slurmrestd_api_learn(ra, doc, strlen(doc), why, sizeof(why)), 0);
	assert_int_equal(slurmrestd_api_version(ra, v), 0);
	assert_string_equal(v, "v0.0.46");
	slurmrestd_api_free(ra);
	ra = slurmrestd_api_new("v0.0.42");
	assert_int_equal(slurmrestd_api_version(ra, v), 0);
	assert_string_equal(v, "v0.0.42");
	slurmrestd_api_free(ra);
	assert_true(slurmrestd_api_is_known("v0.0.41") && slurmrestd_api_is_known("v0.0.44"));
	assert_true(slurmrestd_api_is_known("v0.0.45") && slurmrestd_api_is_known("v0.0.46"));
	assert_false(slurmrestd_api_is_known("v0.0.47") || slurmrestd_api_is_known("v0.0.40") || slurmrestd_api_is_known("v0.0.4") || slurmrestd_api_is_known(""));
}

/* A self metric's value for one endpoint in an exposition; -1 when absent. */
static double self_value(const char *text, const char *name, const char *endpoint)
{
	char want[160];
	snprintf(want, sizeof(want), "\n%s{endpoint=\"%s\"} ", name, endpoint);
	const char *p = text ? strstr(text, want) : NULL;
	return p ? strtod(p + strlen(want), NULL) : -1;
}

/* Whether --help's line for flag ends with text. */
static int help_line_has(const char *help, const char *flag, const char *text)
{
	const char *line = strstr(help, flag);
	const char *eol = line ? strchr(line, '\n') : NULL;
	size_t n = strlen(text);
	return eol && (size_t)(eol - line) >= n && !strncmp(eol - n, text, n);
}

/* ---- slurmrestd's answers that are not what they should be ---- */

#define REST_SHAPE_DIR "/tmp/shimtest-rest-shape"
#define REST_MAPPING2 "/tmp/shimtest-rest2.json"

/* REST_STATE's documents in REST_SHAPE_DIR, file (NULL: none) replaced by text. */
static void rest_dir_with(const char *file, const char *text)
{
	static const char *const docs[] = { "rest_nodes.json", "rest_shares.json", "rest_jobs.json", "rest_diag.json" };
	char path[256];
	mkdir(REST_SHAPE_DIR, 0755);
	for (size_t i = 0; i < sizeof(docs) / sizeof(docs[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", REST_STATE, docs[i]);
		char *orig = tu_slurp(path, NULL);
		assert_non_null(orig);
		snprintf(path, sizeof(path), "%s/%s", REST_SHAPE_DIR, docs[i]);
		tu_write(path, file && !strcmp(file, docs[i]) ? text : orig);
		free(orig);
	}
}

/* Rows on slurmrestd's /nodes and /shares, each falling back to a native form. */
static void write_rest_mapping2(void)
{
	tu_write(REST_MAPPING2,
		 "{\"metrics\": [{\"name\": \"slurm_scheduler_threads\", \"help\": \"h\", \"type\": \"gauge\","
		 " \"expr\": \"slurm_server_thread_cnt + 1\", \"fidelity\": \"exact\"},"
		 " {\"name\": \"nodes_row\", \"help\": \"h\", \"type\": \"gauge\", \"expr\": \"slurm_server_thread_cnt\","
		 " \"fidelity\": \"approximate\", \"note\": \"n\", \"prefer\": [{\"expr\": \"sum(slurmrestd_node_cpus)\", \"fidelity\": \"exact\"}]},"
		 " {\"name\": \"shares_row\", \"help\": \"h\", \"type\": \"gauge\", \"expr\": \"slurm_server_thread_cnt\","
		 " \"fidelity\": \"approximate\", \"note\": \"n\", \"prefer\": [{\"expr\": \"count(slurmrestd_share_fairshare)\","
		 " \"fidelity\": \"exact\"}]}]}\n");
}

static void rest2_shim_start(struct proc *s, unsigned ctl, unsigned rest, const char *a1, const char *a2,
			     const char *a3, const char *a4)
{
	char url[64];
	rest_url(url, sizeof(url), rest);
	write_rest_mapping2();
	shim_start(s, ctl, "--mapping.file", REST_MAPPING2, "--slurmrestd.url", url, "--slurmrestd.timeout", "5",
		   "--slurmrestd.min-interval", "0", a1, a2, a3, a4, NULL);
}

/* The verdict names the token whenever one was sent and refused; without one, says so. */
static void test_source_verdict_token(void **state)
{
	(void)state;
	static const struct { enum source_id src; long code; enum source_token_use tok; const char *why; } cases[] = {
		{ SRC_REST_NODES, 511, TOKEN_SENT, "/slurm/{version}/nodes: HTTP 511 with the token of --slurmrestd.auth.token-file: "
						   "token expired or not accepted: renew it (scontrol token)" },
		{ SRC_REST_JOBS, 401, TOKEN_SENT, "/slurm/{version}/jobs: HTTP 401 with the token of --slurmrestd.auth.token-file: "
						  "token expired or not accepted: renew it (scontrol token)" },
		{ SRC_REST_SHARES, 500, TOKEN_SENT, "/slurm/{version}/shares: HTTP 500 with the token of --slurmrestd.auth.token-file: "
						    "token expired or not accepted? (so slurmrestd 25.11 answers /shares to an "
						    "expired or forged one): renew it (scontrol token)" },
		{ SRC_REST_NODES, 500, TOKEN_SENT, "/slurm/{version}/nodes: HTTP status 500" },
		{ SRC_REST_SHARES, 500, TOKEN_NOT_CONFIGURED, "/slurm/{version}/shares: HTTP status 500" },
		{ SRC_REST_NODES, 511, TOKEN_NOT_CONFIGURED, "/slurm/{version}/nodes: 511 Network Authentication Required and no "
							     "token sent: set --slurmrestd.auth.token-file" },
		{ SRC_REST_NODES, 401, TOKEN_WITHHELD, "/slurm/{version}/nodes: 401 Unauthorized and no token sent: set "
						       "--slurmrestd.auth.token-file (and --slurmrestd.auth.user)" },
		{ SRC_JOBS, 401, TOKEN_SENT, "/metrics/jobs: HTTP 401 with the token of --slurmctld.auth.token-file: token expired "
					     "or not accepted: renew it (scontrol token)" },
		{ SRC_JOBS, 403, TOKEN_SENT, "/metrics/jobs: HTTP 403 with the token of --slurmctld.auth.token-file: the token's "
					     "user is not allowed (26.05: add it to MetricsAuthUsers, or use root/SlurmUser), "
					     "or the token is not accepted" },
		{ SRC_JOBS, 511, TOKEN_SENT, "/metrics/jobs: HTTP status 511" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char why[240];
		struct source_facts f = { .http_status = cases[i].code, .token = cases[i].tok };
		assert_int_equal(source_verdict(&sources[cases[i].src], &f, why, sizeof(why)), VERDICT_STATUS);
		assert_string_equal(why, cases[i].why);
		assert_int_equal(source_is_token_refused(&sources[cases[i].src], &f), strstr(why, "with the token") != NULL);
	}
	char why[240];
	struct source_facts f = { .http_status = 200, .len = 10, .fault = FAULT_CONTENT_TYPE };
	snprintf(f.detail, sizeof(f.detail), "text/html");
	assert_int_equal(source_verdict(&sources[SRC_REST_DIAG], &f, why, sizeof(why)), VERDICT_FAULT);
	assert_string_equal(why, "/slurm/{version}/diag: the answer is text/html, not application/json (a proxy's page?)");
}

/* A shapeless answer is not "no nodes" or "no shares": its source is down with the reason
 * and its byte offset (log, status page), and the rows fall back to their native forms. */
static void test_rest_shapeless_falls_back(void **state)
{
	(void)state;
	static const struct { const char *file, *text, *why; } cases[] = {
		{ "rest_nodes.json", "{}", "first at byte 2: no 'nodes' array" },
		{ "rest_nodes.json", "{\"nodes\": null}", "first at byte 14: 'nodes' is null, not an array" },
		{ "rest_nodes.json", "{\"nodes\": {}}", "first at byte 11: 'nodes' is an object, not an array" },
		{ "rest_nodes.json", "{\"nodes\": [3]}", "first at byte 12: item 0 of 'nodes' is a number, not an object" },
		{ "rest_nodes.json", "{\"nodes\": [], \"errors\": [\"boom\"]}", "slurmrestd reported 1 error(s): boom" },
		{ "rest_shares.json", "{}", "first at byte 2: no 'shares.shares' array" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct proc f, rf, s;
		struct resp r;
		int nodes = !strcmp(cases[i].file, "rest_nodes.json");
		const char *row = nodes ? "nodes_row" : "shares_row";
		char up[96], fid[160];
		rest_dir_with(cases[i].file, cases[i].text);
		fake_start(&f, STATE, NULL);
		fake_start(&rf, REST_SHAPE_DIR, NULL);
		rest2_shim_start(&s, f.port, rf.port, "--slurmrestd.api-version", "v0.0.44", NULL, NULL);
		char *body = scrape_ok(s.port);
		snprintf(up, sizeof(up), "slurm_exporter_shim_up{endpoint=\"slurmrestd-%s\"} 0\n", nodes ? "nodes" : "shares");
		snprintf(fid, sizeof(fid), "slurm_exporter_shim_row_fidelity{family=\"%s\",fidelity=\"approximate\","
			 "upstream=\"slurmctld\"} 1\n", row);
		if (!has(body, up) || !has(body, fid))
			fail_msg("%s %s: not down, or %s not served by its native form:\n%s", cases[i].file, cases[i].text, row, body);
		free(body);
		http("GET", s.port, "/", &r, 5000);
		char *page = xstrdup(r.body.data ? r.body.data : "");
		buf_free(&r.body);
		stop(&s);
		char *log = tu_slurp(s.log, NULL);
		char want[200], *q = want;
		for (const char *c = cases[i].why; *c && q < want + sizeof(want) - 8; c++) /* As the page escapes it */
			if (*c == '\'')
				q += snprintf(q, 6, "&#39;");
			else
				*q++ = *c;
		*q = '\0';
		if (!has(log, "unusable JSON, ") || !has(log, cases[i].why) || !has(page, want))
			fail_msg("%s %s: no \"%s\" in the log or the page:\n%s", cases[i].file, cases[i].text, cases[i].why, log);
		free(log);
		free(page);
		stop(&rf);
		stop(&f);
	}
}

/* An answer known unusable is not downloaded further: a 500 with a 300 MB body, a 200 of
 * another Content-Type; the parser's first problem stops the feed too (payload_feed says so). */
static void test_rest_stops_unusable_transfer(void **state)
{
	(void)state;
	static const struct { const char *a1, *a2, *a3, *why; } cases[] = {
		{ "--fault", "huge-error", NULL, "HTTP status 500" },
		{ "--fault", "huge", "--content-type=text/html; charset=utf-8",
		  "the answer is text/html; charset=utf-8, not application/json" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct proc f, rf, s;
		fake_start(&f, STATE, NULL);
		fake_start(&rf, REST_STATE, cases[i].a1, cases[i].a2, cases[i].a3, NULL);
		rest2_shim_start(&s, f.port, rf.port, "--slurmrestd.api-version", "v0.0.44", NULL, NULL);
		char *body = scrape_ok(s.port);
		double bytes = self_value(body, "slurm_exporter_shim_response_bytes", "slurmrestd-nodes");
		if (!has(body, REST_UP("nodes", "0")) || bytes < 0 || bytes > 1e6)
			fail_msg("%s %s: slurmrestd-nodes up, or %g bytes read:\n%s", cases[i].a2, cases[i].a3 ? cases[i].a3 : "",
				 bytes, body);
		free(body);
		stop(&s);
		char *log = tu_slurp(s.log, NULL);
		if (!has(log, cases[i].why))
			fail_msg("no \"%s\" in the log:\n%s", cases[i].why, log);
		free(log);
		stop(&rf);
		stop(&f);
	}
	struct payload *p = payload_new(SRC_REST_NODES, 0, NULL, NULL);
	payload_restart(p, 200);
	assert_int_equal(payload_feed(p, "{\"nodes\": [", 11, 0), PAYLOAD_FEED_MORE);
	assert_int_equal(payload_feed(p, "7", 1, 0), PAYLOAD_FEED_MORE); /* A number ends at the next byte */
	assert_int_equal(payload_feed(p, "]", 1, 0), PAYLOAD_FEED_ENOUGH);
	payload_finish(p);
	assert_false(p->ok);
	assert_string_equal(p->reason, "/slurm/{version}/nodes: unusable JSON, 1 malformed item(s), first at byte 12: "
					"item 0 of 'nodes' is a number, not an object");
	payload_unref(p);
}

/* Slurmrestd 25.11.7 with rest_auth/jwt answers 511 (/nodes, /jobs, /diag) and 500
 * (/shares) to an expired or forged token, 401 only when none is sent. A refused token is named in
 * the log, on the status page and by slurm_exporter_shim_upstream_token_ok; the token never is. */
static void test_rest_token_refused(void **state)
{
	(void)state;
	struct proc f, rf, s;
	struct resp r;
	const char *tok = "/tmp/shimtest-rest-token2";
	fake_start(&f, STATE, NULL);
	fake_start(&rf, REST_STATE, "--token", "rest-GOOD-1", "--rest-jwt", NULL);
	tu_write(tok, "rest-SECRET-expired\n");
	rest2_shim_start(&s, f.port, rf.port, "--slurmrestd.api-version", "v0.0.44", "--slurmrestd.auth.token-file", tok);
	char *body = scrape_ok(s.port);
	if (!has(body, REST_UP("nodes", "0")) || !has(body, REST_UP("shares", "0")) ||
	    !has(body, "\nslurm_exporter_shim_upstream_token_ok{upstream=\"slurmrestd\"} 0\n") ||
	    self_value(body, "slurm_exporter_shim_http_status", "slurmrestd-nodes") != 511 ||
	    self_value(body, "slurm_exporter_shim_http_status", "slurmrestd-shares") != 500)
		fail_msg("the refused token is not told:\n%s", body);
	assert_false(has(body, "SECRET"));
	free(body);
	http("GET", s.port, "/", &r, 5000);
	if (!has(r.body.data, "auth.token-file</code>: slurmrestd refused it (HTTP 511 from slurmrestd-nodes)") ||
	    has(r.body.data, "SECRET"))
		fail_msg("no token line on the status page:\n%s", r.body.data);
	buf_free(&r.body);
	tu_write(tok, "rest-GOOD-1\n");
	body = scrape_ok(s.port);
	assert_true(has(body, REST_UP("nodes", "1")) && has(body, REST_UP("shares", "1")));
	assert_true(has(body, "\nslurm_exporter_shim_upstream_token_ok{upstream=\"slurmrestd\"} 1\n"));
	free(body);
	http("GET", s.port, "/", &r, 5000);
	assert_true(has(r.body.data, "auth.token-file</code>: accepted."));
	buf_free(&r.body);
	stop(&s);
	char *log = tu_slurp(s.log, NULL);
	/* one line per failure (faillog.c): "endpoint PATH failed: slurmrestd URL: REASON" */
	assert_true(has(log, "endpoint /slurm/{version}/nodes failed: slurmrestd http://127.0.0.1:"));
	assert_true(has(log, ": HTTP 511 with the token of --slurmrestd.auth.token-file: token expired or not accepted: renew it"));
	assert_true(has(log, "endpoint /slurm/{version}/shares failed: slurmrestd http://127.0.0.1:"));
	assert_true(has(log, ": HTTP 500 with the token of --slurmrestd.auth.token-file: token expired or not accepted?"));
	assert_false(has(log, "SECRET") || has(log, "GOOD"));
	free(log);
	/* The version discovered with the expired token: /openapi/v3's 511 is each source's */
	tu_write(tok, "rest-SECRET-expired\n");
	rest2_shim_start(&s, f.port, rf.port, "--slurmrestd.auth.token-file", tok, NULL, NULL);
	for (int i = 0; i < 2; i++) { /* The second within the discovery's back-off: not asked, told the same */
		body = scrape_ok(s.port);
		if (!has(body, REST_UP("nodes", "0")) ||
		    !has(body, "\nslurm_exporter_shim_upstream_token_ok{upstream=\"slurmrestd\"} 0\n"))
			fail_msg("discovery's refused token not told:\n%s", body);
		free(body);
	}
	assert_int_equal(stat_count(rf.port, "openapi"), 1);
	stop(&s);
	log = tu_slurp(s.log, NULL);
	assert_true(has(log, "API version discovery: /openapi/v3: HTTP 511 with the token of --slurmrestd.auth.token-file: "
			     "token expired or not accepted"));
	free(log);
	/* No token configured: slurmrestd's 401 says so, and there is no token metric */
	rest2_shim_start(&s, f.port, rf.port, "--slurmrestd.api-version", "v0.0.44", NULL, NULL);
	body = scrape_ok(s.port);
	assert_true(has(body, REST_UP("nodes", "0")));
	assert_false(has(body, "token_ok"));
	free(body);
	stop(&s);
	log = tu_slurp(s.log, NULL);
	assert_true(has(log, "401 Unauthorized and no token sent: set --slurmrestd.auth.token-file"));
	assert_false(has(log, "renew"));
	free(log);
	stop(&rf);
	stop(&f);
}

/* A discovered API version that slurmrestd no longer serves (404) is looked up again. */
static void test_rest_version_rediscovered(void **state)
{
	(void)state;
	struct proc f, s;
	struct resp r;
	fake_start(&f, REST_STATE, NULL);
	rest2_shim_start(&s, f.port, f.port, NULL, NULL, NULL, NULL);
	char *body = scrape_ok(s.port);
	assert_true(has(body, REST_UP("nodes", "1")));
	free(body);
	http("GET", f.port, "/_rest-version/v0.0.43", &r, 5000); /* An upgrade: v0.0.44 is gone */
	buf_free(&r.body);
	body = scrape_ok(s.port);
	assert_true(has(body, REST_UP("nodes", "0")));
	free(body);
	assert_int_equal(stat_count(f.port, "openapi"), 1);
	body = scrape_ok(s.port);
	assert_true(has(body, REST_UP("nodes", "1")));
	free(body);
	assert_int_equal(stat_count(f.port, "openapi"), 2);
	http("GET", f.port, "/_last_request", &r, 5000);
	assert_true(has(r.body.data, "GET /slurm/v0.0.43/"));
	buf_free(&r.body);
	stop(&s);
	char *log = tu_slurp(s.log, NULL);
	assert_true(has(log, "answered 404 with API version v0.0.44: looking the version up again"));
	assert_true(has(log, "slurmrestd: API version v0.0.43"));
	free(log);
	stop(&f);
}

static long vmhwm_kb(pid_t pid)
{
	char path[64], *st, *p;
	long kb = -1;
	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	st = tu_slurp(path, NULL);
	if (st && (p = strstr(st, "VmHWM:")))
		kb = strtol(p + 6, NULL, 10);
	free(st);
	return kb;
}

/* A 30 MB /openapi/v3 (a Slurm with every plugin has 63 MB) cost the shim ten times its
 * size (loaded whole by jansson); read streaming, the shim's peak memory does not follow it. */
static void test_rest_openapi_streamed(void **state)
{
	(void)state;
	struct proc f, s;
	fake_start(&f, REST_STATE, "--openapi-pad", "400000", NULL);
	rest2_shim_start(&s, f.port, f.port, "--slurmrestd.timeout", "30", NULL, NULL);
	struct resp r;
	/* a slow build (TSan) reads the document for longer than the scrape waits for slurmrestd once
	 * slurmctld has answered (2 s): the fetch goes on, and a later scrape gets its answer */
	for (int i = 0;; i++) {
		http_hdr("GET", s.port, "/metrics", "X-Prometheus-Scrape-Timeout-Seconds: 30", &r, 40000);
		if (i == 60 || (r.status == 200 && has(r.body.data, REST_UP("nodes", "1"))))
			break;
		buf_free(&r.body);
		tu_sleep_ms(500);
	}
	long hwm = vmhwm_kb(s.pid);
	print_message("figures: /openapi/v3 of about 30 MB, shim VmHWM %ld kB\n", hwm);
	if (r.status != 200 || !has(r.body.data, REST_UP("nodes", "1")) || hwm > 40 * 1024)
		fail_msg("status %ld, VmHWM %ld kB:\n%s", r.status, hwm, r.body.data ? r.body.data : "");
	buf_free(&r.body);
	assert_int_equal(stat_count(f.port, "openapi"), 1);
	stop(&s);
	stop(&f);
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

/* status_html_escape: the five characters, invalid UTF-8 repaired as the writer does, controls replaced. */
static void test_html_escape(void **state)
{
	(void)state;
	static const struct {
		const char *in;
		size_t n;
		const char *want;
	} cases[] = {
		{ "plain n1", 8, "plain n1" },
		{ "<script>alert(1)</script>&\"x'", 29, "&lt;script&gt;alert(1)&lt;/script&gt;&amp;&quot;x&#39;" },
		{ "a\xff" "b", 3, "a\xEF\xBF\xBD" "b" },
		{ "\xE2\x82", 2, "\xEF\xBF\xBD" },                 /* cut short: one U+FFFD */
		{ "\xC0\xAF", 2, "\xEF\xBF\xBD\xEF\xBF\xBD" },     /* overlong: two */
		{ "caf\xC3\xA9 \xE2\x82\xAC", 9, "caf\xC3\xA9 \xE2\x82\xAC" }, /* valid UTF-8 kept */
		{ "a\0b\x1b\x7f\tc\n", 8, "a\xEF\xBF\xBD" "b\xEF\xBF\xBD\xEF\xBF\xBD\tc\n" },
		{ "", 0, "" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct buf b;
		buf_init(&b, 0);
		status_html_escape(&b, cases[i].in, cases[i].n);
		buf_putc(&b, '\0');
		assert_string_equal(b.data, cases[i].want);
		buf_free(&b);
	}
}

/* A page is safe: no tag from data, valid UTF-8. */
static void assert_page_safe(const char *page, size_t len)
{
	assert_true(utf8_is_valid(page, len));
	assert_int_equal(strlen(page), len); /* no NUL */
	const char *p = page;
	size_t scripts = 0;
	while ((p = strstr(p, "<script")) != NULL) {
		scripts++;
		p++;
	}
	assert_int_equal(scripts, 0);
}

/* status_page on a snapshot whose every string is hostile: all escaped, the page valid UTF-8. */
static void test_status_page_render(void **state)
{
	(void)state;
	static const char hostile[] = "<script>alert(1)</script>&\"x\xff";
	struct scraper_status *st = xcalloc(1, sizeof(*st));
	struct status_page_info info = { "0.test", "/metrics\"><script>", hostile, 1800000000, NULL, 1 };
	struct buf b;
	buf_init(&b, 0);
	status_page(&b, &info, st); /* no scrape yet */
	buf_putc(&b, '\0');
	assert_non_null(strstr(b.data, "No scrape has happened yet"));
	assert_non_null(strstr(b.data, "<a href=\"/metrics&quot;&gt;&lt;script&gt;\">"));
	assert_page_safe(b.data, b.len - 1);
	buf_free(&b);

	st->rendered = 1;
	st->http_status = 200;
	st->reload_ok = 1;
	st->rows[ROW_OK] = 7;
	st->rows[ROW_INPUT_DOWN] = 2;
	st->fidelity[FID_EXACT][UPSTREAM_SLURMCTLD] = 5;
	st->fidelity[FID_APPROXIMATE][UPSTREAM_SLURMCTLD] = 2;
	st->nleft = SCRAPER_STATUS_LEFT_MAX + 3;
	for (size_t i = 0; i < SCRAPER_STATUS_LEFT_MAX; i++) {
		snprintf(st->left[i].family, sizeof(st->left[i].family), "%s", hostile);
		snprintf(st->left[i].why, sizeof(st->left[i].why), "%s", hostile);
	}
	for (int id = 0; id < SRC_COUNT; id++) {
		st->src[id].configured = id < SRC_NATIVE_COUNT;
		st->src[id].fetched = st->src[id].up = id < SRC_NATIVE_COUNT;
		st->src[id].http_status = 200;
	}
	st->src[SRC_NODES].up = 0;
	st->src[SRC_NODES].http_status = 500;
	snprintf(st->src[SRC_NODES].reason, sizeof(st->src[SRC_NODES].reason), "%s", hostile);
	buf_init(&b, 0);
	status_page(&b, &info, st);
	buf_putc(&b, '\0');
	assert_page_safe(b.data, b.len - 1);
	assert_non_null(strstr(b.data, "&lt;script&gt;alert(1)&lt;/script&gt;&amp;&quot;x\xEF\xBF\xBD"));
	assert_non_null(strstr(b.data, "<td>served</td><td class=\"n\">7</td>"));
	assert_non_null(strstr(b.data, "<td>left out: input down</td><td class=\"n down\">2</td>"));
	assert_non_null(strstr(b.data, "<tr><td>exact</td><td class=\"n\">5</td><td class=\"n\">0</td></tr>"));
	assert_non_null(strstr(b.data, "and 3 more"));
	assert_non_null(strstr(b.data, "<td class=\"down\">down</td>"));
	assert_null(strstr(b.data, "slurmrestd-nodes")); /* slurmrestd not configured: not listed */
	buf_free(&b);
	free(st);
}

/* The page's line for an endpoint: from "<tr><td>NAME</td>" to the end of its row. */
static char *status_line(const char *page, const char *endpoint)
{
	char key[96];
	snprintf(key, sizeof(key), "<tr><td>%s</td>", endpoint);
	const char *p = strstr(page, key);
	if (!p)
		return NULL;
	const char *e = strstr(p, "</tr>");
	return xstrndup(p, e ? (size_t)(e - p) : strlen(p));
}

/* / over HTTP: before any scrape it says so and fetches nothing; after one, the sources with their
 * up state, HTTP status and bytes, and the rows by outcome; behind basic auth like /metrics. */
static void test_status_page(void **state)
{
	(void)state;
	struct proc f, s;
	struct resp r;
	fake_start(&f, STATE, NULL);
	shim_start(&s, f.port, NULL);
	http("GET", s.port, "/", &r, 5000);
	assert_int_equal(r.status, 200);
	assert_string_equal(r.ctype, "text/html; charset=utf-8");
	assert_non_null(strstr(r.body.data, "No scrape has happened yet"));
	assert_non_null(strstr(r.body.data, "<a href=\"/metrics\">"));
	buf_free(&r.body);
	assert_int_equal(stat_count(f.port, "nodes"), 0); /* the page fetched nothing */
	http("GET", s.port, "/metrics", &r, 10000);
	assert_int_equal(r.status, 200);
	buf_free(&r.body);
	http("GET", s.port, "/", &r, 5000);
	assert_int_equal(r.status, 200);
	assert_int_equal(stat_count(f.port, "nodes"), 1); /* still the scrape's one fetch */
	static const char *const eps[] = { "nodes", "partitions", "scheduler", "jobs-users-accts" };
	for (size_t i = 0; i < 4; i++) {
		char *line = status_line(r.body.data, eps[i]);
		assert_non_null(line);
		assert_non_null(strstr(line, "<td class=\"up\">up</td>"));
		assert_non_null(strstr(line, "<td class=\"n\">200</td>"));
		free(line);
	}
	char *line = status_line(r.body.data, "nodes");
	char bytes[64];
	struct stat sb;
	assert_int_equal(stat(STATE "/metrics_nodes.txt", &sb), 0);
	snprintf(bytes, sizeof(bytes), "<td class=\"n\">%lld</td>", (long long)sb.st_size);
	assert_non_null(strstr(line, bytes));
	free(line);
	assert_non_null(strstr(r.body.data, "<td>served</td><td class=\"n\">"));
	assert_non_null(strstr(r.body.data, "<td>disabled (flag not set)</td><td class=\"n\">4</td>"));
	assert_non_null(strstr(r.body.data, "<code>" MAPPING "</code>"));
	assert_non_null(strstr(r.body.data, "<span class=\"up\">succeeded</span>"));
	assert_null(strstr(r.body.data, "slurmrestd-nodes"));
	assert_page_safe(r.body.data, strlen(r.body.data));
	buf_free(&r.body);
	stop(&s);
	shim_start(&s, f.port, "--web.config.file", "tests/webconfig/auth_only.yml", NULL);
	http("GET", s.port, "/", &r, 5000);
	assert_int_equal(r.status, 401);
	buf_free(&r.body);
	stop(&s);
	stop(&f);
}

/* After a scrape with a failing endpoint, the page names it down with its reason and status, and
 * lists the families left out because of it. */
static void test_status_page_fault(void **state)
{
	(void)state;
	struct proc f, s;
	struct resp r;
	fake_start(&f, STATE, "--fault", "500", "--fault-endpoint", "jobs-users-accts", NULL);
	shim_start(&s, f.port, NULL);
	http("GET", s.port, "/metrics", &r, 10000);
	assert_int_equal(r.status, 200);
	buf_free(&r.body);
	http("GET", s.port, "/", &r, 5000);
	char *line = status_line(r.body.data, "jobs-users-accts");
	assert_non_null(line);
	assert_non_null(strstr(line, "<td class=\"down\">down</td>"));
	assert_non_null(strstr(line, "<td class=\"n\">500</td>"));
	assert_non_null(strstr(line, "/metrics/jobs-users-accts: HTTP status 500"));
	free(line);
	line = status_line(r.body.data, "nodes");
	assert_non_null(strstr(line, "<td class=\"up\">up</td>"));
	free(line);
	assert_non_null(strstr(r.body.data, "<tr><td class=\"fam\">slurm_queue_pending</td><td class=\"err\">input_down: endpoint jobs-users-accts is down</td></tr>"));
	assert_non_null(strstr(r.body.data, "<td>left out: input down</td><td class=\"n down\">"));
	buf_free(&r.body);
	stop(&s);
	stop(&f);

	/* every endpoint refusing: 503, and the page says no row was evaluated */
	fake_start(&f, STATE, "--fault", "500", NULL);
	shim_start(&s, f.port, NULL);
	http("GET", s.port, "/metrics", &r, 10000);
	assert_int_equal(r.status, 503);
	buf_free(&r.body);
	http("GET", s.port, "/", &r, 5000);
	assert_non_null(strstr(r.body.data, "HTTP 503"));
	assert_non_null(strstr(r.body.data, "no row was evaluated"));
	buf_free(&r.body);
	stop(&s);
	stop(&f);
}

/* Hostile strings end to end: a capture copy whose node name is markup and quotes (or invalid
 * UTF-8), a mapping file whose path is markup: the page has no unescaped tag and is valid UTF-8. */
static void test_status_page_hostile(void **state)
{
	(void)state;
	static const char *const names[] = { "<script>alert(1)</script>\\&\"x", "n\xff" "1" }; /* for sed */
	const char *dir = "/tmp/shimtest-status-<script>alert(1)<";
	char path[256], cmd[1024];
	mkdir(dir, 0700);
	snprintf(path, sizeof(path), "%s/script>&\"x\xff.json", dir);
	char *m = tu_slurp(MAPPING, NULL);
	tu_write(path, m);
	free(m);
	for (size_t i = 0; i < 2; i++) {
		struct proc f, s;
		struct resp r;
		const char *cap = "/tmp/shimtest-status-capture";
		snprintf(cmd, sizeof(cmd), "rm -rf %s && cp -r " STATE " %s && sed -i 's|node=\"n1\"|node=\"%s\"|' %s/metrics_nodes.txt",
			 cap, cap, names[i], cap);
		assert_int_equal(system(cmd), 0);
		fake_start(&f, cap, NULL);
		shim_start(&s, f.port, "--mapping.file", path, NULL);
		http("GET", s.port, "/metrics", &r, 10000);
		assert_int_equal(r.status, 200);
		assert_non_null(strstr(r.body.data, i ? "node=\"n\xEF\xBF\xBD" "1\"" : "node=\"<script>alert(1)</script>&\\\"x\""));
		buf_free(&r.body);
		http("GET", s.port, "/", &r, 5000);
		assert_int_equal(r.status, 200);
		assert_page_safe(r.body.data, strlen(r.body.data));
		/* the configured path reached the page, escaped and repaired */
		assert_non_null(strstr(r.body.data, "/tmp/shimtest-status-&lt;script&gt;alert(1)&lt;/script&gt;&amp;&quot;x\xEF\xBF\xBD.json"));
		buf_free(&r.body);
		stop(&s);
		stop(&f);
	}
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

/* --- /probe?target=NAME: several clusters, one scraper each ------------------------------------ */

#define IDLE "tests/fixtures/slurm-25.11/01-idle"
#define BUSY "tests/fixtures/slurm-25.11/02-busy-mix"

/* Fakes A (01-idle) and B (02-busy-mix) as targets "idle" and "busy", "down" on a closed port, and
 * fake C, which is in no file (what a client could try to make the shim fetch). The shim's own
 * --slurmctld.url is A; extra: more shim flags (up to 2, NULL-terminated). */
struct probe_env {
	struct proc a, b, c, s;
	char file[64];
};

static void probe_start(struct probe_env *e, const char *extra1, const char *extra2)
{
	char text[512];
	fake_start(&e->a, IDLE, NULL);
	fake_start(&e->b, BUSY, NULL);
	fake_start(&e->c, IDLE, NULL);
	snprintf(e->file, sizeof(e->file), "/tmp/shimtest-targets-%u.yml", e->a.port);
	snprintf(text, sizeof(text),
		 "targets:\n  idle:\n    slurmctld_url: http://127.0.0.1:%u\n    mapping: /tmp/shimtest-probe-idle.json\n"
		 "  busy: {slurmctld_url: [\"http://127.0.0.1:%u\"]}\n  down: {slurmctld_url: http://127.0.0.1:%u}\n",
		 e->a.port, e->b.port, free_port());
	tu_write(e->file, text);
	char *orig = tu_slurp(MAPPING, NULL);
	tu_write("/tmp/shimtest-probe-idle.json", orig);
	free(orig);
	shim_start(&e->s, e->a.port, "--probe.targets-file", e->file, "--slurmctld.min-interval", "30",
		   "--slurmctld.jobs.min-interval", "30", extra1, extra2, NULL);
}

static void probe_stop(struct probe_env *e)
{
	stop(&e->s);
	stop(&e->c);
	stop(&e->b);
	stop(&e->a);
}

/* Requests the fake on port got, all endpoints together. */
static long fake_requests(unsigned port)
{
	static const char *const eps[] = { "jobs", "nodes", "partitions", "scheduler", "jobs-users-accts" };
	long n = 0;
	for (int i = 0; i < 5; i++)
		n += stat_count(port, eps[i]);
	return n;
}

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
	tu_write("/tmp/shimtest-probe-idle.json", "{\"metrics\": [{\"name\": \"probe_only_row\", \"help\": \"h\", "
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

/* ---- Several controllers (--slurmctld.url repeated or a comma list). The fakes play
 * slurmctld's primary and standby (/_role/standby: a 25.11.7 standby's 303 to --redirect-port). */

/* Start the fake on a given port (a controller restarted where it was). */
static void fake_start_at(struct proc *f, unsigned port, const char *dir, const char *redirect_port)
{
	char p[16];
	const char *bin = getenv("FAKE_SLURMCTLD") ? getenv("FAKE_SLURMCTLD") : "build/tests/fake_slurmctld";
	char *argv[] = { (char *)bin, "--port", p, "--dir", (char *)dir, "--redirect-port", (char *)redirect_port, NULL };
	snprintf(p, sizeof(p), "%u", port);
	f->port = port;
	for (int attempt = 0; attempt < 20; attempt++) {
		snprintf(f->log, sizeof(f->log), "/tmp/shimtest-fake-%u.log", port);
		f->pid = spawn(argv, f->log);
		if (wait_ready(f->pid, port))
			return;
		tu_sleep_ms(100);
	}
	fail_msg("fake_slurmctld does not restart on port %u (see %s)", port, f->log);
}

static void set_role(const struct proc *f, const char *role)
{
	struct resp r;
	char path[32];
	snprintf(path, sizeof(path), "/_role/%s", role);
	http("GET", f->port, path, &r, 5000);
	assert_int_equal(r.status, 200);
	buf_free(&r.body);
}

/* The exposition has the line (whole). */
static int has_line(const char *body, const char *line)
{
	size_t n = strlen(line);
	for (const char *p = strstr(body, line); p; p = strstr(p + 1, line))
		if ((p == body || p[-1] == '\n') && (p[n] == '\n' || !p[n]))
			return 1;
	return 0;
}

static int has_role(const char *body, unsigned port, const char *role)
{
	char line[160];
	snprintf(line, sizeof(line), "slurm_exporter_shim_controller_info{url=\"http://127.0.0.1:%u\",role=\"%s\"} 1", port,
		 role);
	return has_line(body, line);
}

/* Primary A and standby B (listed first): the standby's 303 to A (configured) is followed, the
 * answers are A's; A killed, B promoted: the next scrape fails over within itself, no restart;
 * A back as primary, B standby again: failback. Each change counted and logged once. */
static void test_ha_failover_failback(void **state)
{
	(void)state;
	struct proc a, b, s;
	struct resp r;
	char aport[16], burl[64];
	fake_start(&a, STATE, NULL);
	snprintf(aport, sizeof(aport), "%u", a.port);
	fake_start(&b, STATE, "--redirect-port", aport, NULL);
	set_role(&b, "standby");
	snprintf(burl, sizeof(burl), "http://127.0.0.1:%u", b.port);
	shim_start(&s, a.port, "--slurmctld.url", burl, "--slurmctld.min-interval", "0", "--slurmctld.jobs.min-interval",
		   "0", NULL);
	/* the shim's list is A,B: A answers, B is never asked */
	http("GET", s.port, "/metrics", &r, 10000);
	assert_int_equal(r.status, 200);
	assert_non_null(strstr(r.body.data, "\nslurm_cpus_total 44\n"));
	assert_true(has_role(r.body.data, a.port, "primary"));
	assert_true(has_role(r.body.data, b.port, "unknown"));
	assert_true(has_line(r.body.data, "slurm_exporter_shim_controller_switches_total 0"));
	assert_int_equal(stat_count(b.port, "nodes"), 0);
	buf_free(&r.body);

	/* failover: A dies, B becomes primary */
	stop(&a);
	set_role(&b, "primary");
	http("GET", s.port, "/metrics", &r, 10000);
	assert_int_equal(r.status, 200);
	assert_non_null(strstr(r.body.data, "\nslurm_cpus_total 44\n"));
	assert_true(has_line(r.body.data, "slurm_exporter_shim_up{endpoint=\"nodes\"} 1"));
	assert_true(has_role(r.body.data, a.port, "down"));
	assert_true(has_role(r.body.data, b.port, "primary"));
	assert_true(has_line(r.body.data, "slurm_exporter_shim_controller_switches_total 1"));
	buf_free(&r.body);
	assert_int_equal(stat_count(b.port, "nodes"), 1);

	/* failback: A back as primary, B standby (its 303 points at A); B, current, is tried first */
	fake_start_at(&a, a.port, STATE, aport);
	set_role(&b, "standby");
	http("GET", s.port, "/metrics", &r, 10000);
	assert_int_equal(r.status, 200);
	assert_true(has_role(r.body.data, a.port, "primary"));
	assert_true(has_role(r.body.data, b.port, "standby"));
	assert_true(has_line(r.body.data, "slurm_exporter_shim_controller_switches_total 2"));
	buf_free(&r.body);
	assert_int_equal(stat_count(a.port, "nodes"), 1);
	assert_int_equal(stat_count(b.port, "nodes"), 2); /* one answer, one 303 */
	stop(&s);
	char *log = tu_slurp(s.log, NULL);
	char want[160];
	snprintf(want, sizeof(want), "switched from controller http://127.0.0.1:%u to http://127.0.0.1:%u", a.port, b.port);
	assert_non_null(strstr(log, want));
	assert_non_null(strstr(log, "was down (Couldn't connect to server)"));
	snprintf(want, sizeof(want), "switched from controller http://127.0.0.1:%u to http://127.0.0.1:%u", b.port, a.port);
	assert_non_null(strstr(log, want));
	free(log);
	stop(&b);
	stop(&a);
}

/* A standby's 303 to an origin that is not configured (C) is not followed: C never gets a
 * request, nor the token; the next configured controller (A) answers. */
static void test_ha_redirect_not_configured(void **state)
{
	(void)state;
	struct proc a, b, c, s;
	struct resp r;
	char cport[16], aurl[64];
	tu_write("/tmp/shimtest-token-ha", "tok-SECRET-14\n");
	fake_start(&c, STATE, NULL);
	fake_start(&a, STATE, NULL);
	snprintf(cport, sizeof(cport), "%u", c.port);
	fake_start(&b, STATE, "--redirect-port", cport, NULL);
	set_role(&b, "standby");
	snprintf(aurl, sizeof(aurl), "http://127.0.0.1:%u", a.port);
	shim_start(&s, b.port, "--slurmctld.url", aurl, "--slurmctld.auth.token-file", "/tmp/shimtest-token-ha", NULL);
	http("GET", s.port, "/metrics", &r, 10000);
	assert_int_equal(r.status, 200);
	assert_true(has_role(r.body.data, b.port, "standby"));
	assert_true(has_role(r.body.data, a.port, "primary"));
	buf_free(&r.body);
	assert_int_equal(stat_count(b.port, "nodes"), 1);
	assert_int_equal(stat_count(a.port, "nodes"), 1);
	assert_int_equal(stat_count(c.port, "nodes"), 0);
	assert_int_equal(stat_count(c.port, "jobs"), 0);
	http("GET", c.port, "/_last_request", &r, 5000);
	assert_null(strstr(r.body.data, "SECRET"));
	buf_free(&r.body);
	http("GET", a.port, "/_last_request", &r, 5000); /* the configured ones get it */
	assert_non_null(strstr(r.body.data, "X-SLURM-USER-TOKEN: tok-SECRET-14"));
	buf_free(&r.body);
	char want[300];
	http("GET", s.port, "/", &r, 5000); /* the status page's controller table */
	assert_non_null(strstr(r.body.data, "<h2>Controllers</h2>"));
	snprintf(want, sizeof(want), "<tr><td><code>http://127.0.0.1:%u</code></td><td class=\"off\">standby</td>"
		 "<td class=\"err\">standby (HTTP 303 to http://127.0.0.1:%u), not configured: not followed</td>", b.port,
		 c.port);
	assert_non_null(strstr(r.body.data, want));
	snprintf(want, sizeof(want), "<tr><td><code>http://127.0.0.1:%u</code> (read now)</td><td class=\"up\">primary</td>",
		 a.port);
	assert_non_null(strstr(r.body.data, want));
	buf_free(&r.body);
	stop(&s);
	stop(&b);
	stop(&a);
	stop(&c);
}

/* A standby's 303 to a configured controller is followed to it next: list B (standby, 303 to A),
 * D (another standby), A: A answers second, D is never asked. */
static void test_ha_redirect_to_configured(void **state)
{
	(void)state;
	struct proc a, b, d, s;
	struct resp r;
	char aport[16], aurl[64], durl[64];
	fake_start(&a, STATE, NULL);
	snprintf(aport, sizeof(aport), "%u", a.port);
	fake_start(&b, STATE, "--redirect-port", aport, NULL);
	fake_start(&d, STATE, "--redirect-port", aport, NULL);
	set_role(&b, "standby");
	set_role(&d, "standby");
	snprintf(aurl, sizeof(aurl), "http://127.0.0.1:%u", a.port);
	snprintf(durl, sizeof(durl), "http://127.0.0.1:%u", d.port);
	shim_start(&s, b.port, "--slurmctld.url", durl, "--slurmctld.url", aurl, NULL);
	http("GET", s.port, "/metrics", &r, 10000);
	assert_int_equal(r.status, 200);
	assert_true(has_role(r.body.data, b.port, "standby"));
	assert_true(has_role(r.body.data, d.port, "unknown"));
	assert_true(has_role(r.body.data, a.port, "primary"));
	assert_true(has_line(r.body.data, "slurm_exporter_shim_controller_switches_total 0"));
	buf_free(&r.body);
	assert_int_equal(stat_count(d.port, "nodes"), 0);
	assert_int_equal(stat_count(a.port, "nodes"), 1);
	stop(&s);
	stop(&d);
	stop(&b);
	stop(&a);
}

/* A primary that accepts connections and never answers no longer takes the whole timeout of the
 * fetch: having sent nothing by its share of the scrape's time (half of it, with two controllers),
 * it has the next controller asked alongside, and the scrape fails over within itself (before:
 * 503 "down (Timeout was reached)", and only the next scrape failed over). */
static void test_ha_hung_controller(void **state)
{
	(void)state;
	struct proc a, b, s;
	struct resp r;
	char burl[64], want[200];
	fake_start(&a, STATE, "--fault", "hang", NULL);
	fake_start(&b, STATE, NULL);
	snprintf(burl, sizeof(burl), "http://127.0.0.1:%u", b.port);
	shim_start(&s, a.port, "--slurmctld.url", burl, "--slurmctld.timeout", "1", "--slurmctld.min-interval", "0",
		   "--slurmctld.jobs.min-interval", "0", NULL);
	double t0 = now_s();
	http("GET", s.port, "/metrics", &r, 10000);
	double took = now_s() - t0;
	assert_int_equal(r.status, 200);
	assert_non_null(strstr(r.body.data, "\nslurm_cpus_total 44\n"));
	assert_true(has_role(r.body.data, a.port, "down"));
	assert_true(has_role(r.body.data, b.port, "primary"));
	buf_free(&r.body);
	if (took >= 1.0) /* half of it, and B's answer */
		fail_msg("the scrape took %.2f s: the hung controller used the whole timeout", took);
	http("GET", s.port, "/", &r, 5000);
	snprintf(want, sizeof(want), "down (no answer within 0.");
	assert_non_null(strstr(r.body.data, want));
	buf_free(&r.body);
	http("GET", s.port, "/metrics", &r, 10000); /* B, current, first: A is not asked */
	assert_int_equal(r.status, 200);
	buf_free(&r.body);
	assert_int_equal(stat_count(b.port, "nodes"), 2);
	assert_int_equal(stat_count(a.port, "nodes"), 1);
	stop(&s);
	stop(&b);
	stop(&a);
}

/* No controller answers: 503, the body says what each one did. */
static void test_ha_all_down(void **state)
{
	(void)state;
	struct proc b, s;
	struct resp r;
	char aurl[64], want[200];
	unsigned dead = free_port(); /* nothing listens there */
	fake_start(&b, STATE, "--redirect-port", "1", NULL);
	set_role(&b, "standby");
	snprintf(aurl, sizeof(aurl), "http://127.0.0.1:%u", dead);
	shim_start(&s, b.port, "--slurmctld.url", aurl, NULL);
	http("GET", s.port, "/metrics", &r, 10000);
	assert_int_equal(r.status, 503);
	snprintf(want, sizeof(want), "/metrics/nodes: no slurmctld controller answered as primary: http://127.0.0.1:%u: "
		 "standby (HTTP 303 to http://127.0.0.1:1), not configured: not followed; ", b.port);
	assert_non_null(strstr(r.body.data, want));
	snprintf(want, sizeof(want), "http://127.0.0.1:%u: down (Couldn't connect to server)", dead);
	assert_non_null(strstr(r.body.data, want));
	buf_free(&r.body);
	stop(&s);
	stop(&b);
}

/* No mixing: a job walk cached from A (jobs interval 60 s) is not served once B answers the
 * cheap endpoints; it is fetched again from B for the same scrape. */
static void test_ha_no_mixing(void **state)
{
	(void)state;
	struct proc a, b, s;
	struct resp r;
	char burl[64];
	fake_start(&a, STATE, NULL);
	fake_start(&b, STATE, NULL);
	snprintf(burl, sizeof(burl), "http://127.0.0.1:%u", b.port);
	shim_start(&s, a.port, "--slurmctld.url", burl, "--slurmctld.min-interval", "0", "--slurmctld.jobs.min-interval",
		   "60", NULL);
	http("GET", s.port, "/metrics", &r, 10000);
	assert_int_equal(r.status, 200);
	buf_free(&r.body);
	assert_int_equal(stat_count(a.port, "jobs-users-accts"), 1);
	stop(&a);
	http("GET", s.port, "/metrics", &r, 10000);
	assert_int_equal(r.status, 200);
	assert_true(has_role(r.body.data, b.port, "primary"));
	assert_true(has_line(r.body.data, "slurm_exporter_shim_up{endpoint=\"jobs-users-accts\"} 1"));
	buf_free(&r.body);
	assert_int_equal(stat_count(b.port, "nodes"), 1);
	assert_int_equal(stat_count(b.port, "jobs-users-accts"), 1);       /* not A's cached walk */
	assert_int_equal(stat_count(b.port, "partitions"), 1);
	http("GET", s.port, "/metrics", &r, 10000);            /* B's walk is reused within the interval */
	buf_free(&r.body);
	assert_int_equal(stat_count(b.port, "jobs-users-accts"), 1);
	stop(&s);
	stop(&b);
}

/* A controller is the primary only when some of its answers are usable: a first
 * controller answering 500, 404, 401, or a 200 of which nothing is usable (empty, cut in its
 * headers) is passed over (role unusable, with its first reason) and the healthy second one is
 * asked and read, and first from then on. Before: the first was taken as the primary, 503. */
static void test_ha_unusable_first(void **state)
{
	(void)state;
	static const char *const faults[] = { "500", "404", "401", "empty", "cuthead" };
	static const char *const why[] = { "HTTP status 500", "404 Not Found", "401 Unauthorized", "empty answer",
					   "ended inside its headers" };
	for (size_t i = 0; i < sizeof(faults) / sizeof(faults[0]); i++) {
		struct proc a, b, s;
		struct resp r;
		char burl[64], want[300];
		fake_start(&a, STATE, "--fault", faults[i], NULL);
		fake_start(&b, STATE, NULL);
		snprintf(burl, sizeof(burl), "http://127.0.0.1:%u", b.port);
		shim_start(&s, a.port, "--slurmctld.url", burl, "--slurmctld.min-interval", "0",
			   "--slurmctld.jobs.min-interval", "0", NULL);
		http("GET", s.port, "/metrics", &r, 10000);
		if (r.status != 200 || !strstr(r.body.data, "\nslurm_cpus_total 44\n") || !has_role(r.body.data, b.port, "primary") ||
		    !has_role(r.body.data, a.port, "unusable"))
			fail_msg("first controller answering %s: status %ld, body:\n%s", faults[i], r.status, r.body.data);
		buf_free(&r.body);
		http("GET", s.port, "/", &r, 5000);
		snprintf(want, sizeof(want), "<tr><td><code>http://127.0.0.1:%u</code></td><td class=\"off\">unusable</td>"
			 "<td class=\"err\">unusable (/metrics/", a.port);
		if (!strstr(r.body.data, want) || !strstr(r.body.data, why[i]))
			fail_msg("%s: the status page does not say why:\n%s", faults[i], r.body.data);
		buf_free(&r.body);
		http("GET", s.port, "/metrics", &r, 10000); /* B, the primary, first: A not asked again */
		assert_int_equal(r.status, 200);
		buf_free(&r.body);
		assert_int_equal(stat_count(a.port, "nodes"), 1);
		assert_int_equal(stat_count(b.port, "nodes"), 2);
		stop(&s);
		stop(&b);
		stop(&a);
	}
}

/* A single --slurmctld.url gives the one-controller guarantee of a list: one endpoint
 * answering 303 elsewhere while the others answer is not followed (that endpoint fails, the other
 * host gets nothing); a standby's 303s on every endpoint are followed to the origin they point at,
 * learnt as a controller of its own (no token), and a job walk cached from the URL is not served
 * with that host's answers, nor the host's after the URL is the primary again. Before: each
 * endpoint followed its own 303, and answers of both hosts were served as one. Once the URL is
 * the primary again, the host (not asked) is role "unknown", not a second "primary" (before: live,
 * one URL at the standby, a takeover left controller_info with two primaries). */
static void test_ha_single_url_no_mixing(void **state)
{
	(void)state;
	struct proc p, u, s;
	struct resp r;
	char pport[16], want[200];
	tu_write("/tmp/shimtest-token-single", "tok-SECRET-19\n");
	fake_start(&p, STATE, NULL);
	snprintf(pport, sizeof(pport), "%u", p.port);
	fake_start(&u, STATE, "--fault", "redirect", "--fault-endpoint", "partitions", "--redirect-port", pport, NULL);
	shim_start(&s, u.port, NULL);
	http("GET", s.port, "/metrics", &r, 10000);
	assert_int_equal(r.status, 200);
	assert_non_null(strstr(r.body.data, "\nslurm_cpus_total 44\n"));
	assert_non_null(strstr(r.body.data, "slurm_exporter_shim_up{endpoint=\"partitions\"} 0\n"));
	buf_free(&r.body);
	assert_int_equal(stat_count(p.port, "partitions"), 0);
	assert_int_equal(fake_requests(p.port), 0);
	stop(&s);
	char *log = tu_slurp(s.log, NULL);
	snprintf(want, sizeof(want), "/metrics/partitions failed: slurmctld http://127.0.0.1:%u: redirected to "
		 "http://127.0.0.1:%u/metrics/partitions: not followed", u.port, p.port);
	assert_non_null(strstr(log, want));
	free(log);
	stop(&u);

	fake_start(&u, STATE, "--redirect-port", pport, NULL);
	shim_start(&s, u.port, "--slurmctld.min-interval", "0", "--slurmctld.jobs.min-interval", "60",
		   "--slurmctld.auth.token-file", "/tmp/shimtest-token-single", NULL);
	http("GET", s.port, "/metrics", &r, 10000);
	assert_int_equal(r.status, 200);
	buf_free(&r.body);
	assert_int_equal(stat_count(u.port, "jobs-users-accts"), 1);
	set_role(&u, "standby"); /* every endpoint: 303 to P */
	http("GET", s.port, "/metrics", &r, 10000);
	assert_int_equal(r.status, 200);
	assert_int_equal(stat_count(p.port, "jobs-users-accts"), 1); /* not U's cached walk */
	assert_int_equal(stat_count(p.port, "partitions"), 1);
	assert_true(has_role(r.body.data, u.port, "standby"));
	assert_true(has_role(r.body.data, p.port, "primary"));
	assert_true(has_line(r.body.data, "slurm_exporter_shim_up{endpoint=\"jobs-users-accts\"} 1"));
	buf_free(&r.body);
	http("GET", p.port, "/_last_request", &r, 5000);
	assert_null(strstr(r.body.data, "SECRET"));
	buf_free(&r.body);
	http("GET", s.port, "/metrics", &r, 10000); /* P's walk reused; P reached through U's 303 only */
	assert_int_equal(r.status, 200);
	buf_free(&r.body);
	assert_int_equal(stat_count(p.port, "jobs-users-accts"), 1);
	assert_int_equal(stat_count(u.port, "nodes"), 3);
	set_role(&u, "primary"); /* back: U's answers only, P's walks fetched again from U */
	http("GET", s.port, "/metrics", &r, 10000);
	assert_int_equal(r.status, 200);
	assert_true(has_role(r.body.data, u.port, "primary"));
	/* P, not asked (reached only through U's 303), is no longer shown as a second primary */
	assert_false(has_role(r.body.data, p.port, "primary"));
	assert_true(has_role(r.body.data, p.port, "unknown"));
	assert_true(has_line(r.body.data, "slurm_exporter_shim_controller_switches_total 2"));
	buf_free(&r.body);
	assert_int_equal(stat_count(u.port, "jobs-users-accts"), 3); /* 1, its 303 when P's was fetched, 1 */
	assert_int_equal(stat_count(p.port, "nodes"), 2);
	stop(&s);
	stop(&u);
	stop(&p);
}

/* A failback keeps the scrape inside its deadline: B, read after a failover, hangs
 * as it returns to standby while A is the primary again. B, tried first, has sent nothing by its
 * share of the scrape's time (X-Prometheus-Scrape-Timeout-Seconds 4: 3.5 s), so A is asked
 * alongside and answers: 200 within the deadline, although --slurmctld.timeout is 10 s. Before: B
 * used the whole timeout, and the scrape answered 503 at its deadline (live: a 10.0 s scrape). */
static void test_ha_failback_hang_deadline(void **state)
{
	(void)state;
	struct proc a, b, s;
	struct resp r;
	char aport[16], burl[64];
	fake_start(&a, STATE, NULL);
	snprintf(aport, sizeof(aport), "%u", a.port);
	fake_start(&b, STATE, "--redirect-port", aport, NULL);
	set_role(&b, "standby");
	snprintf(burl, sizeof(burl), "http://127.0.0.1:%u", b.port);
	shim_start(&s, a.port, "--slurmctld.url", burl, "--slurmctld.min-interval", "0", "--slurmctld.jobs.min-interval",
		   "0", NULL);
	stop(&a); /* failover */
	set_role(&b, "primary");
	http("GET", s.port, "/metrics", &r, 10000);
	assert_int_equal(r.status, 200);
	assert_true(has_role(r.body.data, b.port, "primary"));
	buf_free(&r.body);
	fake_start_at(&a, a.port, STATE, aport); /* failback: A primary, B hangs on its way to standby */
	http("GET", b.port, "/_fault/hang", &r, 5000);
	assert_int_equal(r.status, 200);
	buf_free(&r.body);
	double t0 = now_s();
	http_hdr("GET", s.port, "/metrics", "X-Prometheus-Scrape-Timeout-Seconds: 4", &r, 10000);
	double took = now_s() - t0;
	if (r.status != 200 || took > 3.6 || !has_role(r.body.data, a.port, "primary") || !has_role(r.body.data, b.port, "down"))
		fail_msg("failback with a hung controller: status %ld after %.2f s, body:\n%s", r.status, took, r.body.data);
	assert_true(has_line(r.body.data, "slurm_exporter_shim_controller_switches_total 1"));
	buf_free(&r.body);
	http("GET", b.port, "/_fault/none", &r, 5000);
	buf_free(&r.body);
	stop(&s);
	stop(&b);
	stop(&a);
}

/* The list is split once, every element checked; the error names the bad one. */
static void test_ha_url_list(void **state)
{
	(void)state;
	char *err = NULL;
	char *argv[] = { (char *)tu_shim_bin(), "--slurmctld.url", "http://a:6817,ftp://b:6817", "--once", NULL };
	assert_int_not_equal(tu_run(argv, NULL, NULL, NULL, &err), 0);
	assert_non_null(strstr(err, "flag --slurmctld.url: value \"ftp://b:6817\" is not an http:// or https:// URL"));
	free(err);
	char big[2100];
	memset(big, 'a', sizeof(big) - 1);
	memcpy(big, "http://", 7);
	big[sizeof(big) - 1] = '\0';
	char *twice[] = { (char *)tu_shim_bin(), "--slurmctld.url", big, "--slurmctld.url", big, "--once", NULL };
	assert_int_not_equal(tu_run(twice, NULL, NULL, NULL, &err), 0);
	assert_non_null(strstr(err, "flag --slurmctld.url: the controller list is longer than 4095 bytes"));
	free(err);
	struct controllers *c = controllers_new("http://a:6817,https://b:6817,HTTP://c");
	assert_null(controllers_error(c));
	assert_int_equal(controllers_count(c), 3);
	assert_string_equal(controllers_url(c, 1), "https://b:6817");
	assert_int_equal(controllers_learn(c, "http://d:6817"), -1); /* a list never learns */
	size_t order[CONTROLLERS_MAX];
	assert_int_equal(controllers_order(c, order), 3);
	assert_int_equal(order[0], 0);
	controllers_seen(c, 2, ROLE_PRIMARY, NULL);
	controllers_answered(c, 2);
	controllers_order(c, order);
	assert_int_equal(order[0], 2); /* the last one that answered first */
	assert_int_equal(order[1], 0);
	assert_int_equal(order[2], 1);
	controllers_seen(c, 2, ROLE_DOWN, "down (Timeout was reached)");
	controllers_seen(c, 0, ROLE_DOWN, "down (Couldn't connect to server)");
	controllers_order(c, order);
	assert_int_equal(order[0], 1); /* the ones seen down last, the one seen down longest ago first */
	assert_int_equal(order[1], 2);
	assert_int_equal(order[2], 0);
	/* all down: they take turns (a hung one, tried and seen down on every fetch, goes behind the
	 * others; in config order it would be tried first every time and the others never) */
	controllers_seen(c, 1, ROLE_DOWN, "down (Couldn't connect to server)");
	controllers_order(c, order);
	assert_int_equal(order[0], 2);
	controllers_seen(c, 2, ROLE_DOWN, "down (Timeout was reached)");
	controllers_order(c, order);
	assert_int_equal(order[0], 0);
	assert_int_equal(order[1], 1);
	assert_int_equal(order[2], 2);
	controllers_free(c);
	c = controllers_new("http://a:6817,,http://c");
	assert_non_null(controllers_error(c));
	assert_non_null(strstr(controllers_error(c), "element 2 \"\""));
	controllers_free(c);
}

/* One URL check for --slurmctld.url (each element), --slurmrestd.url, --compare-legacy, the targets
 * file and controllers_new (upstream_url_is_valid); more than CONTROLLERS_MAX controllers are refused at
 * start, by the flag and by the targets file (before: accepted, then every fetch failed). */
static void test_ha_url_checks(void **state)
{
	(void)state;
	static const struct { const char *url; int ok, unix_ok; } cases[] = {
		{ "http://a:6817", 1, 1 }, { "HTTPS://a", 1, 1 }, { "http://", 0, 0 }, { "https://", 0, 0 },
		{ "unix:/run/s.sock", 0, 1 }, { "unix:", 0, 0 }, { "ftp://a", 0, 0 }, { "http://a b", 0, 0 },
		{ " http://a", 0, 0 }, { "http://a\x7f", 0, 0 }, { "http://\xc3\xa9", 0, 0 }, { "a:6817", 0, 0 },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *u = cases[i].url;
		if (upstream_url_is_valid(u, strlen(u), 0) != cases[i].ok || upstream_url_is_valid(u, strlen(u), 1) != cases[i].unix_ok)
			fail_msg("upstream_url_is_valid(\"%s\")", u);
	}
	struct controllers *c = controllers_new("http://a, http://b");
	assert_non_null(strstr(controllers_error(c), "element 2 \" http://b\" is not an http:// or https:// URL"));
	controllers_free(c);
	c = controllers_new("unix:/run/slurmctld.sock");
	assert_non_null(controllers_error(c));
	controllers_free(c);

	char *err = NULL, nine[400] = "";
	for (int i = 0; i < CONTROLLERS_MAX + 1; i++)
		snprintf(nine + strlen(nine), sizeof(nine) - strlen(nine), "%shttp://c%d:6817", i ? "," : "", i);
	char *argv[] = { (char *)tu_shim_bin(), "--slurmctld.url", nine, "--once", NULL };
	assert_int_equal(tu_run(argv, NULL, NULL, NULL, &err), 2);
	assert_non_null(strstr(err, "flag --slurmctld.url: more than 8 controllers"));
	free(err);
	/* 8 given as 4 and 4 (the flag twice) are accepted, and a ninth given again is not */
	const char *four = "http://c0,http://c1,http://c2,http://c3", *more = "http://c4,http://c5,http://c6,http://c7";
	char *ok[] = { (char *)tu_shim_bin(), "--slurmctld.url", (char *)four, "--slurmctld.url", (char *)more,
		       "--check-mapping", MAPPING, NULL };
	assert_int_equal(tu_run(ok, NULL, NULL, NULL, &err), 0);
	free(err);
	char *again[] = { (char *)tu_shim_bin(), "--slurmctld.url", (char *)four, "--slurmctld.url", (char *)more,
			  "--slurmctld.url", "http://c8", "--check-mapping", MAPPING, NULL };
	assert_int_equal(tu_run(again, NULL, NULL, NULL, &err), 2);
	assert_non_null(strstr(err, "flag --slurmctld.url: more than 8 controllers"));
	free(err);
	char *space[] = { (char *)tu_shim_bin(), "--slurmrestd.url", "http://a b", "--check-mapping", MAPPING, NULL };
	assert_int_equal(tu_run(space, NULL, NULL, NULL, &err), 2);
	assert_non_null(strstr(err, "flag --slurmrestd.url: value \"http://a b\""));
	free(err);
	char *bare[] = { (char *)tu_shim_bin(), "--compare-legacy", "http://", "--check-mapping", MAPPING, NULL };
	assert_int_equal(tu_run(bare, NULL, NULL, NULL, &err), 2);
	free(err);
	tu_write("/tmp/shimtest-nine.yml", "targets:\n  big:\n    slurmctld_url: [http://c0, http://c1, http://c2, http://c3, "
					   "http://c4, http://c5, http://c6, http://c7, http://c8]\n");
	char *probe[] = { (char *)tu_shim_bin(), "--probe.targets-file", "/tmp/shimtest-nine.yml", "--mapping.file", MAPPING,
			  "--once", NULL };
	assert_int_equal(tu_run(probe, NULL, NULL, NULL, &err), 2);
	assert_non_null(strstr(err, "slurmctld_url: more than 8 controllers"));
	free(err);
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
	const char *path = "/tmp/shimtest-ua-only.json";
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

/* ---- The native passthrough, /native/metrics/<endpoint> ------------------------------------------ */

/* Every family and sample of want (slurmctld's text, read tolerantly) is in got (the passthrough's,
 * read strictly), with the same type, HELP, label values and value, in the same order. */
static void assert_same_families(const struct expo *want, const struct expo *got)
{
	assert_int_equal(got->nfams, want->nfams);
	for (size_t k = 0; k < want->nfams; k++) {
		const struct expo_family *w = &want->fams[k], *g = &got->fams[k];
		assert_true(w->nlen == g->nlen && !memcmp(w->name, g->name, w->nlen));
		assert_int_equal(g->type, w->type);
		assert_int_equal(g->n, w->n);
		assert_true(w->hlen == g->hlen && (!w->hlen || !memcmp(w->help, g->help, w->hlen)));
		for (size_t i = 0; i < w->n; i++) {
			const struct expo_sample *a = &w->samples[i], *b = &g->samples[i];
			assert_true(labels_is_equal(a->labels, a->nlabels, b->labels, b->nlabels));
			assert_true(a->value == b->value || (isnan(a->value) && isnan(b->value)));
		}
	}
}

static int keep_a(const char *name, size_t len, void *ctx)
{
	(void)ctx;
	return len == 1 && name[0] == 'a';
}

/* The pure part, no network: slurmctld's unescaped text -> families -> text a strict (Prometheus)
 * reader takes, sample for sample; paths map to the five endpoints only. */
static void test_native_render(void **state)
{
	(void)state;
	static const char raw[] = "# HELP a_jobs Jobs with a \\ and \xfe in the help\n# TYPE a_jobs gauge\n"
				  "a_jobs{account=\"odd\"acct\\\\x y\",user=\"bad\xff\xc0name\"} 3\n"
				  "a_jobs{account=\"plain\",user=\"\"} NaN\n# TYPE b_total counter\nb_total 1.5e+300\n"
				  "c_untyped{x=\"ends in \\\"} 2\n";
	struct expo in, out;
	struct buf b;
	expo_init(&in);
	assert_int_equal(expo_parse(&in, raw, sizeof(raw) - 1, 0), 0);
	buf_init(&b, 0);
	assert_int_equal(native_render(&in, &b), 2); /* the HELP and one label value repaired */
	buf_putc(&b, '\0');
	assert_true(utf8_is_valid(b.data, b.len - 1));
	assert_string_equal(b.data,
			    "# HELP a_jobs Jobs with a \\\\ and \xEF\xBF\xBD in the help\n# TYPE a_jobs gauge\n"
			    "a_jobs{account=\"odd\\\"acct\\\\\\\\x y\",user=\"bad\xEF\xBF\xBD\xEF\xBF\xBDname\"} 3\n"
			    "a_jobs{account=\"plain\"} NaN\n# TYPE b_total counter\nb_total 1.5e+300\n"
			    "c_untyped{x=\"ends in \\\\\"} 2\n");
	expo_init(&out);
	assert_int_equal(expo_parse(&out, b.data, b.len - 1, EXPO_STRICT), 0);
	const struct expo_family *f = expo_find(&out, "a_jobs", 6);
	assert_non_null(f);
	assert_int_equal(f->samples[0].labels[0].vlen, 13); /* odd"acct\\x y: the quote and both backslashes */
	assert_memory_equal(f->samples[0].labels[0].value, "odd\"acct\\\\x y", 13);
	f = expo_find(&out, "c_untyped", 9);
	assert_memory_equal(f->samples[0].labels[0].value, "ends in \\", 9);
	expo_free(&out);
	expo_free(&in);
	buf_free(&b);

	/* HELP is kept as the TYPE is: for the families kept, copied out of the pieces of a transfer;
	 * a family the filter refuses stores nothing, its HELP neither */
	static const char fed[] = "# HELP b unread help\n# TYPE b gauge\nb 1\n# HELP a the help of a\n# TYPE a gauge\na 2\n";
	char piece[4];
	expo_init_keep(&in, keep_a, NULL);
	for (size_t i = 0; i < sizeof(fed) - 1; i += sizeof(piece)) {
		size_t n = sizeof(fed) - 1 - i < sizeof(piece) ? sizeof(fed) - 1 - i : sizeof(piece);
		memcpy(piece, fed + i, n);
		expo_feed(&in, piece, n, 0);
		memset(piece, 'x', sizeof(piece)); /* the piece goes away */
	}
	assert_int_equal(expo_feed_end(&in, 0), 0);
	assert_int_equal(in.nfams, 1);
	assert_null(expo_find(&in, "b", 1));
	f = expo_find(&in, "a", 1);
	assert_non_null(f);
	assert_int_equal(f->hlen, 13);
	assert_memory_equal(f->help, "the help of a", 13);
	assert_int_equal(f->n, 1);
	expo_free(&in);

	assert_int_equal(native_source("/native/metrics/jobs-users-accts"), SRC_UA);
	assert_int_equal(native_source("/native/metrics/jobs"), SRC_JOBS);
	assert_int_equal(native_source("/native/metrics/scheduler"), SRC_SCHEDULER);
	static const char *const bad[] = { "/native/metrics/", "/native/metrics/jobs/", "/native/metrics/Jobs",
					   "/native/metrics/slurmrestd-nodes", "/native/metrics/jobs?x", "/metrics/jobs",
					   "/native/metrics/../metrics" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(native_source(bad[i]), -1);
}

/* The passthrough serves no control byte raw either: C0 controls but newline, and DEL, in a label
 * value or a HELP text become U+FFFD as the writer makes them, and each value is counted repaired. */
static void test_native_control_bytes(void **state)
{
	(void)state;
	static const char raw[] = "# HELP a_jobs jobs\x1b]0;title\x07 of\taccount\n# TYPE a_jobs gauge\n"
				  "a_jobs{account=\"x\x1b[2Jy\",user=\"u\rv\x7f\"} 3\na_jobs{account=\"plain\",user=\"tab\\tok\"} 1\n";
	struct expo in;
	struct buf b;
	expo_init(&in);
	assert_int_equal(expo_parse(&in, raw, sizeof(raw) - 1, 0), 0);
	buf_init(&b, 0);
	assert_int_equal(native_render(&in, &b), 3); /* the HELP and two label values */
	buf_putc(&b, '\0');
	assert_true(utf8_is_clean(b.data, b.len - 1));
	assert_string_equal(b.data, "# HELP a_jobs jobs\xEF\xBF\xBD]0;title\xEF\xBF\xBD of\xEF\xBF\xBD" "account\n# TYPE a_jobs gauge\n"
				    "a_jobs{account=\"x\xEF\xBF\xBD[2Jy\",user=\"u\xEF\xBF\xBDv\xEF\xBF\xBD\"} 3\n"
				    "a_jobs{account=\"plain\",user=\"tab\\\\tok\"} 1\n");
	expo_free(&in);
	buf_free(&b);
}

/* State 25.11/03: an account named odd"acct\\x y, which makes Prometheus refuse slurmctld's own
 * /metrics/jobs-users-accts. Through the passthrough every endpoint reads strictly, sample for
 * sample as slurmctld sent it; an unknown path is 404; a down slurmctld is a 503 with the reason. */
static void test_native_passthrough(void **state)
{
	(void)state;
	static const char *const eps[] = { "jobs", "nodes", "partitions", "scheduler", "jobs-users-accts" };
	struct proc f, s;
	struct resp r;
	fake_start(&f, STATE, NULL);
	shim_start(&s, f.port, NULL);
	for (int i = 0; i < 5; i++) {
		char path[96], file[128];
		snprintf(path, sizeof(path), "/native/metrics/%s", eps[i]);
		snprintf(file, sizeof(file), STATE "/metrics_%s.txt", eps[i]);
		http("GET", s.port, path, &r, 10000);
		assert_int_equal(r.status, 200);
		assert_string_equal(r.ctype, "text/plain; version=0.0.4; charset=utf-8");
		size_t len;
		char *raw = tu_slurp(file, &len);
		struct expo want, got;
		expo_init(&want);
		expo_init(&got);
		assert_int_equal(expo_parse(&want, raw, len, 0), 0);
		assert_int_equal(expo_parse(&got, r.body.data, r.body.len - 1, EXPO_STRICT), 0);
		assert_true(want.nsamples > 0);
		assert_same_families(&want, &got);
		if (i == 4) {
			assert_non_null(strstr(r.body.data, "slurm_account_jobs_running{account=\"odd\\\"acct\\\\\\\\x y\"} "));
			const struct expo_family *fam = expo_find(&got, "slurm_account_jobs_running", 26);
			int found = 0;
			for (size_t k = 0; fam && k < fam->n; k++)
				found += fam->samples[k].nlabels == 1 && fam->samples[k].labels[0].vlen == 13 &&
					 !memcmp(fam->samples[k].labels[0].value, "odd\"acct\\\\x y", 13);
			assert_int_equal(found, 1);
		}
		expo_free(&want);
		expo_free(&got);
		free(raw);
		buf_free(&r.body);
	}
	static const char *const not_found[] = { "/native/metrics/nope", "/native/metrics/", "/native/metrics/jobs/",
						 "/native/metrics", "/native/metrics/slurmrestd-nodes" };
	for (size_t i = 0; i < sizeof(not_found) / sizeof(not_found[0]); i++) {
		http("GET", s.port, not_found[i], &r, 5000);
		assert_int_equal(r.status, 404);
		buf_free(&r.body);
	}
	/* the status page links the five */
	http("GET", s.port, "/", &r, 5000);
	for (int i = 0; i < 5; i++) {
		char link[96];
		snprintf(link, sizeof(link), "<a href=\"/native/metrics/%s\">", eps[i]);
		assert_non_null(strstr(r.body.data, link));
	}
	buf_free(&r.body);
	/* never mixed into /metrics: slurmctld's own names stay out of it */
	http("GET", s.port, "/metrics", &r, 10000);
	assert_int_equal(r.status, 200);
	assert_null(strstr(r.body.data, "\nslurm_account_jobs_bootfail{"));
	assert_null(strstr(r.body.data, "\nslurm_node_cpus{"));
	buf_free(&r.body);
	stop(&s);
	/* switched off: no route */
	shim_start(&s, f.port, "--web.native-passthrough=false", NULL);
	http("GET", s.port, "/native/metrics/jobs", &r, 5000);
	assert_int_equal(r.status, 404);
	buf_free(&r.body);
	http("GET", s.port, "/", &r, 5000);
	assert_null(strstr(r.body.data, "/native/"));
	buf_free(&r.body);
	stop(&s);
	stop(&f);
	/* slurmctld down: 503 with the reason, as /metrics' */
	shim_start(&s, free_port(), NULL);
	http("GET", s.port, "/native/metrics/jobs-users-accts", &r, 10000);
	assert_int_equal(r.status, 503);
	assert_non_null(strstr(r.body.data, "/metrics/jobs-users-accts: "));
	assert_non_null(strstr(r.body.data, "onnect"));
	assert_null(strstr(r.body.data, "# TYPE"));
	buf_free(&r.body);
	stop(&s);
}

/* Hostile bytes: invalid UTF-8 in a label value and a HELP text is repaired to U+FFFD and counted
 * (slurm_exporter_shim_native_repaired_total), a quote and a backslash are escaped, and the family
 * (which no row reads) is served all the same. */
static void test_native_hostile(void **state)
{
	(void)state;
	struct proc f, s;
	struct resp r;
	const char *cap = "/tmp/shimtest-native-capture";
	char cmd[512];
	snprintf(cmd, sizeof(cmd), "rm -rf %s && cp -r " STATE " %s", cap, cap);
	assert_int_equal(system(cmd), 0);
	char *ua = tu_slurp(STATE "/metrics_jobs-users-accts.txt", NULL);
	struct buf b;
	buf_init(&b, 0);
	buf_puts(&b, ua);
	buf_puts(&b, "# HELP slurm_account_hostile A \\ and \xfe\n# TYPE slurm_account_hostile gauge\n"
		     "slurm_account_hostile{account=\"bad\xff\xc0name\",user=\"q\"u\\o\"} 7\n");
	buf_putc(&b, '\0');
	tu_write("/tmp/shimtest-native-capture/metrics_jobs-users-accts.txt", b.data);
	buf_free(&b);
	free(ua);
	fake_start(&f, cap, NULL);
	shim_start(&s, f.port, NULL);
	http("GET", s.port, "/native/metrics/jobs-users-accts", &r, 10000);
	assert_int_equal(r.status, 200);
	assert_true(utf8_is_valid(r.body.data, r.body.len - 1));
	assert_non_null(strstr(r.body.data, "# HELP slurm_account_hostile A \\\\ and \xEF\xBF\xBD\n"));
	assert_non_null(strstr(r.body.data, "\nslurm_account_hostile{account=\"bad\xEF\xBF\xBD\xEF\xBF\xBDname\",user=\"q\\\"u\\\\o\"} 7\n"));
	struct expo got;
	expo_init(&got);
	assert_int_equal(expo_parse(&got, r.body.data, r.body.len - 1, EXPO_STRICT), 0);
	expo_free(&got);
	buf_free(&r.body);
	http("GET", s.port, "/metrics", &r, 10000);
	assert_int_equal(r.status, 200);
	assert_true(self_value(r.body.data, "slurm_exporter_shim_native_repaired_total", "jobs-users-accts") == 2);
	assert_true(self_value(r.body.data, "slurm_exporter_shim_native_repaired_total", "nodes") == 0);
	assert_true(self_value(r.body.data, "slurm_exporter_shim_native_repaired_total", "slurmrestd-nodes") == -1);
	buf_free(&r.body);
	stop(&s);
	stop(&f);
}

struct native_arg {
	unsigned port;
	const char *path;
	long status;
};

static void *native_thread(void *p)
{
	struct native_arg *a = p;
	struct resp r;
	http("GET", a->port, a->path, &r, 15000);
	a->status = r.status;
	buf_free(&r.body);
	return NULL;
}

/* The passthrough shares the scrape's fetches. The table here reads one family of one endpoint, so
 * the first passthrough request after a /metrics scrape fetches again (the scrape's answer was
 * filtered: the unread families, served by the passthrough, were never stored); from then on, 16
 * requests at once, half /metrics and half the passthrough, against a slow slurmctld: one fetch. */
static void test_native_shares_fetch(void **state)
{
	(void)state;
	struct proc f, s;
	struct resp r;
	pthread_t t[16];
	struct native_arg a[16];
	tu_write("/tmp/shimtest-native.json",
		 "{\"metrics\": [{\"name\": \"slurm_account_running\", \"help\": \"h\", \"type\": \"gauge\","
		 " \"expr\": \"sum(slurm_account_jobs_running)\", \"fidelity\": \"exact\"}]}\n");
	fake_start(&f, STATE, "--delay-ms", "300", NULL);
	shim_start(&s, f.port, "--mapping.file", "/tmp/shimtest-native.json", "--slurmctld.jobs.min-interval", "60", NULL);
	http("GET", s.port, "/metrics", &r, 10000);
	assert_int_equal(r.status, 200);
	assert_non_null(strstr(r.body.data, "\nslurm_account_running "));
	buf_free(&r.body);
	assert_int_equal(stat_count(f.port, "jobs-users-accts"), 1);
	/* the passthrough is on from the start: the table's fetch kept every family, and the first
	 * request of the passthrough shares it (it used to switch to unfiltered fetches then, and
	 * fetch again) */
	http("GET", s.port, "/native/metrics/jobs-users-accts", &r, 10000);
	assert_int_equal(r.status, 200);
	/* families no row reads */
	assert_non_null(strstr(r.body.data, "\nslurm_user_jobs_running{username=\"alice\"} "));
	assert_non_null(strstr(r.body.data, "# HELP slurm_account_jobs_bootfail "));
	buf_free(&r.body);
	assert_int_equal(stat_count(f.port, "jobs-users-accts"), 1);
	http("GET", s.port, "/metrics", &r, 10000); /* the unfiltered answer serves the table too */
	assert_int_equal(r.status, 200);
	assert_non_null(strstr(r.body.data, "\nslurm_account_running "));
	buf_free(&r.body);
	assert_int_equal(stat_count(f.port, "jobs-users-accts"), 1);
	stop(&s);
	/* a fresh shim; the passthrough asked once (nodes), then both at once */
	shim_start(&s, f.port, "--mapping.file", "/tmp/shimtest-native.json", NULL);
	http("GET", s.port, "/native/metrics/nodes", &r, 10000);
	assert_int_equal(r.status, 200);
	buf_free(&r.body);
	for (int i = 0; i < 16; i++) {
		a[i] = (struct native_arg){ s.port, i % 2 ? "/metrics" : "/native/metrics/jobs-users-accts", 0 };
		pthread_create(&t[i], NULL, native_thread, &a[i]);
	}
	for (int i = 0; i < 16; i++) {
		pthread_join(t[i], NULL);
		assert_int_equal(a[i].status, 200);
	}
	assert_int_equal(stat_count(f.port, "jobs-users-accts"), 2);
	stop(&s);
	stop(&f);
}

/* Basic auth from --web.config.file applies to the passthrough as to /metrics. */
static void test_native_basic_auth(void **state)
{
	(void)state;
	struct proc f, s;
	struct resp r;
	fake_start(&f, STATE, NULL);
	shim_start(&s, f.port, "--web.config.file", "tests/webconfig/auth_only.yml", NULL);
	http("GET", s.port, "/native/metrics/jobs-users-accts", &r, 10000);
	assert_int_equal(r.status, 401);
	assert_null(strstr(r.body.data, "slurm_"));
	buf_free(&r.body);
	http_hdr("GET", s.port, "/native/metrics/jobs-users-accts", "Authorization: Basic YWxpY2U6d3Jvbmc=", &r, 10000);
	assert_int_equal(r.status, 401);
	buf_free(&r.body);
	http_hdr("GET", s.port, "/native/metrics/jobs-users-accts", "Authorization: Basic YWxpY2U6Y29ycmVjdCBob3JzZQ==", &r,
		 10000);
	assert_int_equal(r.status, 200);
	assert_non_null(strstr(r.body.data, "# TYPE slurm_account_jobs_running gauge\n"));
	buf_free(&r.body);
	assert_int_equal(stat_count(f.port, "jobs-users-accts"), 1); /* the refused requests fetched nothing */
	stop(&s);
	stop(&f);
}


/* fuzz_native found it: a HELP or TYPE line whose name starts with a digit was read (the name loop
 * took name characters, not a name), so the passthrough wrote "# HELP 1x ..." back, a line on which
 * Prometheus fails the whole scrape. Both readers now refuse the line, counted as malformed. */
static void test_native_digit_name(void **state)
{
	(void)state;
	static const char raw[] = "# HELP 1x text\n# TYPE 9x gauge\n# HELP x_ok fine\nx_ok 1\n";
	struct expo in, strict;
	struct buf b;
	expo_init(&in);
	expo_init(&strict);
	assert_int_equal(expo_parse(&in, raw, sizeof(raw) - 1, 0), 2);
	assert_int_equal(expo_parse(&strict, raw, sizeof(raw) - 1, EXPO_STRICT), 2);
	assert_int_equal(in.nerrors, 2);
	assert_string_equal(in.errors[0].reason, "invalid metric name in HELP");
	assert_string_equal(in.errors[1].reason, "invalid metric name in TYPE");
	buf_init(&b, 0);
	native_render(&in, &b);
	buf_putc(&b, '\0');
	assert_string_equal(b.data, "# HELP x_ok fine\nx_ok 1\n");
	expo_free(&in);
	expo_free(&strict);
	buf_free(&b);
}

/* --- compressed answers (Accept-Encoding, src/http_encoding.c and src/compress.c) -------------- */

/* A response with its header block. */
struct gz_resp {
	long status;
	struct buf body, head;
};

/* a header line, or a piece of the body */
static size_t on_bytes(char *ptr, size_t size, size_t n, void *ud)
{
	buf_append(ud, ptr, size * n);
	return size * n;
}

/* method on path with the request header lines hdr1 and hdr2 (NULL: none), nothing decoded: curl
 * sends no Accept-Encoding of its own. */
static void http_gz(const char *method, unsigned port, const char *path, const char *hdr1, const char *hdr2,
		    struct gz_resp *r)
{
	char url[256];
	CURL *h = curl_easy_init();
	struct curl_slist *hl = NULL;
	if (hdr1)
		hl = curl_slist_append(hl, hdr1);
	if (hdr2)
		hl = curl_slist_append(hl, hdr2);
	snprintf(url, sizeof(url), "http://127.0.0.1:%u%s", port, path);
	buf_init(&r->body, 0);
	buf_init(&r->head, 0);
	r->status = 0;
	curl_easy_setopt(h, CURLOPT_URL, url);
	curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, method);
	if (!strcmp(method, "HEAD"))
		curl_easy_setopt(h, CURLOPT_NOBODY, 1L);
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_bytes);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, &r->body);
	curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, on_bytes);
	curl_easy_setopt(h, CURLOPT_HEADERDATA, &r->head);
	curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, 30000L);
	curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(h, CURLOPT_HTTPHEADER, hl);
	if (curl_easy_perform(h) == CURLE_OK)
		curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &r->status);
	buf_putc(&r->body, '\0');
	buf_putc(&r->head, '\0');
	curl_easy_cleanup(h);
	curl_slist_free_all(hl);
}

static void gz_free(struct gz_resp *r)
{
	buf_free(&r->body);
	buf_free(&r->head);
}

/* The value of response header name (case-insensitive), or NULL; it appears at most once. */
static char *resp_header(const struct gz_resp *r, const char *name)
{
	char *found = NULL;
	size_t n = strlen(name);
	for (const char *l = r->head.data; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
		if (strncasecmp(l, name, n) || l[n] != ':')
			continue;
		assert_null(found);
		const char *v = l + n + 1 + strspn(l + n + 1, " ");
		found = xstrndup(v, strcspn(v, "\r\n"));
	}
	return found;
}

/* Whether header name is absent, or has exactly value. */
static void expect_header(const struct gz_resp *r, const char *name, const char *value)
{
	char *v = resp_header(r, name);
	if (value ? !v || strcmp(v, value) : v != NULL)
		fail_msg("%s: \"%s\", want %s%s%s; headers:\n%s", name, v ? v : "(none)", value ? "\"" : "",
			 value ? value : "none", value ? "\"" : "", r->head.data);
	free(v);
}

static long content_length(const struct gz_resp *r)
{
	char *v = resp_header(r, "Content-Length");
	long n = v ? strtol(v, NULL, 10) : -1;
	free(v);
	return n;
}

/* The 10,000-node payload of tests/bench/gen_payload.py, generated once. */
static const char *big10000(void)
{
	const char *dir = "/tmp/shimtest-big10000";
	if (!tu_is_dir(dir)) {
		char tmp[64];
		snprintf(tmp, sizeof(tmp), "%s.%d", dir, (int)getpid());
		char *argv[] = { "/usr/bin/env", "python3", "tests/bench/gen_payload.py", "--nodes", "10000", "--out", tmp, NULL };
		assert_int_equal(tu_run(argv, NULL, NULL, NULL, NULL), 0);
		if (rename(tmp, dir) != 0) /* another test run made it meanwhile */
			assert_true(tu_is_dir(dir));
	}
	return dir;
}

/* The shim's log lines saying an answer was compressed. */
static int compressions_logged(const struct proc *s)
{
	char *log = tu_slurp(s->log, NULL);
	int n = log ? count_of(log, "answer compressed: ") : -1;
	free(log);
	return n;
}

/* The body of a gzip answer decompressed by zlib, which must be exactly want (len bytes). */
static void expect_gunzips_to(const struct gz_resp *r, const char *want, size_t len)
{
	size_t back = 0;
	char *out = tu_gunzip(r->body.data, r->body.len - 1, &back); /* less our terminator */
	assert_non_null(out);
	assert_int_equal(back, len);
	assert_memory_equal(out, want, len);
	free(out);
}

/* The acceptance at 10,000 nodes: curl -H 'Accept-Encoding: gzip' gets Content-Encoding: gzip,
 * Vary: Accept-Encoding and a body that zlib decompresses to exactly the identity answer, at most
 * 12% of it; HEAD the same headers and that Content-Length; gzip;q=0 and the other refusals the
 * identity answer, with Vary too; one compression for all of it. */
static void test_gzip_answer(void **state)
{
	(void)state;
	struct proc f, s;
	struct gz_resp id, gz, r;
	fake_start(&f, big10000(), NULL);
	shim_start(&s, f.port, "--slurmctld.min-interval", "300", "--slurmctld.jobs.min-interval", "300", NULL);
	http_gz("GET", s.port, "/metrics", NULL, NULL, &id);
	assert_int_equal(id.status, 200);
	size_t plain = id.body.len - 1;
	assert_true(plain > 4000000);
	expect_header(&id, "Vary", "Accept-Encoding");
	expect_header(&id, "Content-Encoding", NULL);
	assert_int_equal(content_length(&id), (long)plain);

	http_gz("GET", s.port, "/metrics", "Accept-Encoding: gzip", NULL, &gz);
	assert_int_equal(gz.status, 200);
	expect_header(&gz, "Content-Encoding", "gzip");
	expect_header(&gz, "Vary", "Accept-Encoding");
	expect_header(&gz, "Content-Type", "text/plain; version=0.0.4; charset=utf-8");
	size_t glen = gz.body.len - 1;
	assert_int_equal(content_length(&gz), (long)glen);
	print_message("figures: identity %zu bytes, gzip %zu bytes (%.1f%%)\n", plain, glen, 100.0 * (double)glen / (double)plain);
	assert_true(glen * 100 <= plain * 12);
	expect_gunzips_to(&gz, id.body.data, plain);
	assert_int_equal(compressions_logged(&s), 1);

	/* HEAD: the same headers as GET, the Content-Length of the coding chosen, no body */
	http_gz("HEAD", s.port, "/metrics", "Accept-Encoding: gzip", NULL, &r);
	assert_int_equal(r.status, 200);
	expect_header(&r, "Content-Encoding", "gzip");
	expect_header(&r, "Vary", "Accept-Encoding");
	assert_int_equal(content_length(&r), (long)glen);
	assert_int_equal(r.body.len, 1);
	gz_free(&r);
	http_gz("HEAD", s.port, "/metrics", "Accept-Encoding: gzip;q=0", NULL, &r);
	expect_header(&r, "Content-Encoding", NULL);
	expect_header(&r, "Vary", "Accept-Encoding");
	assert_int_equal(content_length(&r), (long)plain);
	gz_free(&r);

	/* what else chooses gzip, and what refuses it or is disregarded: the identity answer, bytes equal */
	static const struct {
		const char *h1, *h2;
		int gzip;
	} cases[] = {
		{ "Accept-Encoding: gzip;q=0", NULL, 0 }, { "Accept-Encoding: identity;q=0", NULL, 0 },
		{ "Accept-Encoding: *;q=0", NULL, 0 }, { "Accept-Encoding: gzip;q=0.5, identity", NULL, 0 },
		{ "Accept-Encoding: br, zstd", NULL, 0 }, { "Accept-Encoding: gzip;q=2", NULL, 0 },
		{ "Accept-Encoding: gzip;level=9", NULL, 0 },
		{ "Accept-Encoding;", NULL, 0 }, /* curl's way to send the field empty: no coding wanted */
		{ "Accept-Encoding: gzip", "Accept-Encoding: gzip;q=0", 0 },
		{ "Accept-Encoding: X-GZIP", NULL, 1 }, { "Accept-Encoding: *", NULL, 1 },
		{ "Accept-Encoding: deflate, gzip, br, zstd", NULL, 1 }, { "accept-encoding: GZip;Q=0.9", NULL, 1 },
		{ "Accept-Encoding: br", "Accept-Encoding: gzip", 1 },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		http_gz("GET", s.port, "/metrics", cases[i].h1, cases[i].h2, &r);
		assert_int_equal(r.status, 200);
		expect_header(&r, "Vary", "Accept-Encoding");
		expect_header(&r, "Content-Encoding", cases[i].gzip ? "gzip" : NULL);
		if (cases[i].gzip) {
			assert_int_equal(r.body.len, gz.body.len);
			assert_memory_equal(r.body.data, gz.body.data, glen); /* the one shared form */
		} else if (r.body.len != id.body.len || memcmp(r.body.data, id.body.data, plain)) {
			fail_msg("%s%s%s: not the identity answer", cases[i].h1, cases[i].h2 ? " + " : "",
				 cases[i].h2 ? cases[i].h2 : "");
		}
		gz_free(&r);
	}
	assert_int_equal(compressions_logged(&s), 1);
	/* the other paths are not negotiable: no Vary */
	http_gz("GET", s.port, "/", "Accept-Encoding: gzip", NULL, &r);
	assert_int_equal(r.status, 200);
	expect_header(&r, "Vary", NULL);
	expect_header(&r, "Content-Encoding", NULL);
	gz_free(&r);
	http_gz("GET", s.port, "/nothing", "Accept-Encoding: gzip", NULL, &r);
	assert_int_equal(r.status, 404);
	expect_header(&r, "Vary", NULL);
	gz_free(&r);
	gz_free(&gz);
	gz_free(&id);
	stop(&s);
	stop(&f);
}

struct gz_arg {
	unsigned port;
	struct gz_resp r;
};

static void *gz_thread(void *p)
{
	struct gz_arg *a = p;
	http_gz("GET", a->port, "/metrics", "Accept-Encoding: gzip", NULL, &a->r);
	return NULL;
}

/* 20 concurrent gzip scrapes of one answer (a slow slurmctld: they all wait on one fetch) cost one
 * compression, and all get the same bytes; the self metrics of the next answer count it. */
static void test_gzip_compressed_once(void **state)
{
	(void)state;
	struct proc f, s;
	struct gz_resp r;
	struct gz_arg a[20];
	pthread_t t[20];
	fake_start(&f, big10000(), "--delay-ms", "400", NULL);
	shim_start(&s, f.port, "--slurmctld.min-interval", "300", "--slurmctld.jobs.min-interval", "300", NULL);
	for (int i = 0; i < 20; i++) {
		a[i].port = s.port;
		assert_int_equal(pthread_create(&t[i], NULL, gz_thread, &a[i]), 0);
	}
	for (int i = 0; i < 20; i++)
		assert_int_equal(pthread_join(t[i], NULL), 0);
	for (int i = 0; i < 20; i++) {
		assert_int_equal(a[i].r.status, 200);
		expect_header(&a[i].r, "Content-Encoding", "gzip");
		assert_int_equal(a[i].r.body.len, a[0].r.body.len);
		assert_memory_equal(a[i].r.body.data, a[0].r.body.data, a[0].r.body.len);
	}
	assert_int_equal(compressions_logged(&s), 1);
	assert_int_equal(stat_count(f.port, "nodes"), 1); /* one answer, not 20 */
	size_t glen = a[0].r.body.len - 1;
	for (int i = 0; i < 20; i++)
		gz_free(&a[i].r);
	/* a new render (SIGHUP) writes the counters as they are: 1 answer compressed, 20 bodies sent */
	kill(s.pid, SIGHUP);
	tu_sleep_ms(300);
	http_gz("GET", s.port, "/metrics", NULL, NULL, &r);
	assert_int_equal(r.status, 200);
	assert_non_null(strstr(r.body.data, "\nslurm_exporter_shim_compressed_answers_total 1\n"));
	char want[160];
	snprintf(want, sizeof(want), "\nslurm_exporter_shim_response_body_bytes_total{encoding=\"gzip\"} %zu\n", 20 * glen);
	assert_non_null(strstr(r.body.data, want));
	assert_non_null(strstr(r.body.data, "\nslurm_exporter_shim_response_body_bytes_total{encoding=\"identity\"} 0\n"));
	const char *cpu = strstr(r.body.data, "\nslurm_exporter_shim_compression_cpu_seconds_total ");
	assert_non_null(cpu);
	assert_true(strtod(cpu + 52, NULL) > 0);
	gz_free(&r);
	stop(&s);
	stop(&f);
}

/* CPU time of process pid so far, in seconds (every thread's, the ones that ended too). */
static double proc_cpu_s(pid_t pid)
{
	clockid_t cid;
	struct timespec ts;
	assert_int_equal(clock_getcpuclockid(pid, &cid), 0);
	assert_int_equal(clock_gettime(cid, &ts), 0);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The shim's CPU for n scrapes of /metrics with header hdr (NULL: none). */
static double scrapes_cpu(const struct proc *s, const char *hdr, int n)
{
	double c0 = proc_cpu_s(s->pid);
	for (int i = 0; i < n; i++) {
		struct gz_resp r;
		http_gz("GET", s->port, "/metrics", hdr, NULL, &r);
		assert_int_equal(r.status, 200);
		gz_free(&r);
	}
	return proc_cpu_s(s->pid) - c0;
}

/* The acceptance's cost, at 10,000 nodes: 20 gzip scrapes of one cached answer cost the shim no
 * more CPU than 1.5 times 20 identity scrapes of it (measured: about a fifth; a compressed body is a
 * twelfth of the bytes to send), and the answer is compressed once, by the first gzip scrape before
 * them, whatever the number after it. That one compression is printed: on loopback, where sending
 * 4.2 MB costs about a millisecond, it weighs as much as 20 identity sends. Three rounds, each on a
 * fresh answer (SIGHUP); the least of each kind is compared (other load only adds). */
static void test_gzip_cost(void **state)
{
	(void)state;
	struct proc f, s;
	double best_id = 1e9, best_gz = 1e9, best_first = 1e9;
	fake_start(&f, big10000(), NULL);
	shim_start(&s, f.port, "--slurmctld.min-interval", "300", "--slurmctld.jobs.min-interval", "300", NULL);
	for (int round = 0; round < 3; round++) {
		if (round) {
			kill(s.pid, SIGHUP); /* a new answer, not compressed yet */
			tu_sleep_ms(300);
		}
		scrapes_cpu(&s, NULL, 1); /* renders it */
		double first = scrapes_cpu(&s, "Accept-Encoding: gzip", 1); /* compresses it */
		double id = scrapes_cpu(&s, NULL, 20), gz = scrapes_cpu(&s, "Accept-Encoding: gzip", 20);
		print_message("figures: round %d: shim CPU for 20 scrapes of one answer: identity %.1f ms, gzip %.1f ms; "
			      "the first gzip scrape (the compression) %.1f ms\n",
			      round, id * 1e3, gz * 1e3, first * 1e3);
		best_id = fmin(best_id, id);
		best_gz = fmin(best_gz, gz);
		best_first = fmin(best_first, first);
	}
	print_message("figures: least: identity %.1f ms, gzip %.1f ms (%.2fx), the compressing scrape %.1f ms\n",
		      best_id * 1e3, best_gz * 1e3, best_gz / best_id, best_first * 1e3);
	assert_int_equal(compressions_logged(&s), 3); /* 21 gzip scrapes of each answer: one compression */
	assert_true(best_gz <= 1.5 * best_id);
	stop(&s);
	stop(&f);
}

/* /native/metrics/<endpoint> and /probe are negotiated as /metrics; a 503 goes plain, with Vary;
 * --web.compression=false: never gzip, no Vary, no compression self metrics. */
static void test_gzip_native_probe_off(void **state)
{
	(void)state;
	struct probe_env e;
	struct gz_resp id, gz;
	probe_start(&e, NULL, NULL);
	static const char *const paths[] = { "/native/metrics/nodes", "/native/metrics/partitions",
					     "/probe?target=busy", "/metrics" };
	for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
		http_gz("GET", e.s.port, paths[i], NULL, NULL, &id);
		http_gz("GET", e.s.port, paths[i], "Accept-Encoding: gzip", NULL, &gz);
		assert_int_equal(id.status, 200);
		assert_int_equal(gz.status, 200);
		expect_header(&id, "Vary", "Accept-Encoding");
		expect_header(&gz, "Vary", "Accept-Encoding");
		expect_header(&id, "Content-Encoding", NULL);
		expect_header(&gz, "Content-Encoding", "gzip");
		assert_true(gz.body.len < id.body.len / 3);
		expect_gunzips_to(&gz, id.body.data, id.body.len - 1);
		gz_free(&id);
		gz_free(&gz);
	}
	/* an empty answer (no job in memory) has no smaller form: plain */
	http_gz("GET", e.s.port, "/native/metrics/jobs-users-accts", "Accept-Encoding: gzip", NULL, &gz);
	assert_int_equal(gz.status, 200);
	expect_header(&gz, "Vary", "Accept-Encoding");
	expect_header(&gz, "Content-Encoding", NULL);
	assert_int_equal(content_length(&gz), 0);
	gz_free(&gz);
	/* a target that is down: 503, the reasons plain */
	http_gz("GET", e.s.port, "/probe?target=down", "Accept-Encoding: gzip", NULL, &gz);
	assert_int_equal(gz.status, 503);
	expect_header(&gz, "Vary", "Accept-Encoding");
	expect_header(&gz, "Content-Encoding", NULL);
	assert_non_null(strstr(gz.body.data, "slurm-exporter-shim: no slurmctld metrics endpoint answered usably"));
	gz_free(&gz);
	/* the unknown target's 400 is not a negotiable answer */
	http_gz("GET", e.s.port, "/probe?target=nope", "Accept-Encoding: gzip", NULL, &gz);
	assert_int_equal(gz.status, 400);
	expect_header(&gz, "Vary", NULL);
	gz_free(&gz);
	/* the probe's scraper counts its own answers */
	kill(e.s.pid, SIGHUP);
	tu_sleep_ms(300);
	http_gz("GET", e.s.port, "/probe?target=busy", NULL, NULL, &id);
	assert_non_null(strstr(id.body.data, "\nslurm_exporter_shim_compressed_answers_total 1\n"));
	gz_free(&id);
	probe_stop(&e);

	probe_start(&e, "--web.compression=false", NULL);
	for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
		http_gz("GET", e.s.port, paths[i], "Accept-Encoding: gzip", NULL, &gz);
		assert_int_equal(gz.status, 200);
		expect_header(&gz, "Vary", NULL);
		expect_header(&gz, "Content-Encoding", NULL);
		assert_null(strstr(gz.body.data, "slurm_exporter_shim_compressed_answers_total"));
		assert_null(strstr(gz.body.data, "slurm_exporter_shim_response_body_bytes_total"));
		gz_free(&gz);
	}
	probe_stop(&e);
}

int main(void)
{
	curl_global_init(CURL_GLOBAL_DEFAULT);
	signal(SIGPIPE, SIG_IGN);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_http_equals_once, kill_children),
		cmocka_unit_test_teardown(test_routes, kill_children),
		cmocka_unit_test_teardown(test_total_failures, kill_children),
		cmocka_unit_test_teardown(test_connection_refused, kill_children),
		cmocka_unit_test_teardown(test_partial_failure, kill_children),
		cmocka_unit_test_teardown(test_payload_quirks, kill_children),
		cmocka_unit_test_teardown(test_redirect, kill_children),
		cmocka_unit_test_teardown(test_one_fetch_per_window, kill_children),
		cmocka_unit_test_teardown(test_only_needed_endpoints, kill_children),
		cmocka_unit_test_teardown(test_token, kill_children),
		cmocka_unit_test_teardown(test_reload, kill_children),
		cmocka_unit_test_teardown(test_short_deadline_does_not_poison, kill_children),
		cmocka_unit_test_teardown(test_reload_during_fetch, kill_children),
		cmocka_unit_test_teardown(test_slow_readers_share_one_body, kill_children),
		cmocka_unit_test_teardown(test_slow_readers_apart_hold_bodies_only, kill_children),
		cmocka_unit_test(test_redirect_origin),
		cmocka_unit_test(test_source_table),
		cmocka_unit_test(test_source_verdict),
		cmocka_unit_test(test_source_verdict_framing),
		cmocka_unit_test(test_payload_facts),
		cmocka_unit_test_teardown(test_redirect_keeps_credentials_home, kill_children),
		cmocka_unit_test_teardown(test_redirect_same_origin, kill_children),
		cmocka_unit_test(test_restapi_learn),
		cmocka_unit_test_teardown(test_rest_sources_and_discovery, kill_children),
		cmocka_unit_test_teardown(test_rest_discovery_retry_and_fixed, kill_children),
		cmocka_unit_test_teardown(test_rest_newer_versions, kill_children),
		cmocka_unit_test_teardown(test_rest_token_reread, kill_children),
		cmocka_unit_test_teardown(test_rest_redirect_keeps_credentials_home, kill_children),
		cmocka_unit_test_teardown(test_rest_unix_socket, kill_children),
		cmocka_unit_test_teardown(test_rest_refused, kill_children),
		cmocka_unit_test_teardown(test_rest_unix_socket_error, kill_children),
		cmocka_unit_test_teardown(test_rest_faults, kill_children),
		cmocka_unit_test_teardown(test_framing_faults, kill_children),
		cmocka_unit_test_teardown(test_rest_hung_not_waited_for, kill_children),
		cmocka_unit_test(test_source_verdict_token),
		cmocka_unit_test_teardown(test_rest_shapeless_falls_back, kill_children),
		cmocka_unit_test_teardown(test_rest_stops_unusable_transfer, kill_children),
		cmocka_unit_test_teardown(test_rest_token_refused, kill_children),
		cmocka_unit_test_teardown(test_rest_version_rediscovered, kill_children),
		cmocka_unit_test_teardown(test_rest_openapi_streamed, kill_children),
		cmocka_unit_test_teardown(test_rest_jobs_backoff, kill_children),
		cmocka_unit_test_teardown(test_job_walks_per_interval, kill_children),
		cmocka_unit_test_teardown(test_slow_fetch_logged_once, kill_children),
		cmocka_unit_test(test_html_escape),
		cmocka_unit_test(test_status_page_render),
		cmocka_unit_test_teardown(test_status_page, kill_children),
		cmocka_unit_test_teardown(test_status_page_fault, kill_children),
		cmocka_unit_test_teardown(test_status_page_hostile, kill_children),
		cmocka_unit_test_teardown(test_reason_escaped_once, kill_children),
		cmocka_unit_test_teardown(test_header_too_large, kill_children),
		cmocka_unit_test_teardown(test_probe_unknown_target, kill_children),
		cmocka_unit_test_teardown(test_probe_target_exact_case, kill_children),
		cmocka_unit_test_teardown(test_probe_repeated_target, kill_children),
		cmocka_unit_test_teardown(test_nul_in_path, kill_children),
		cmocka_unit_test_teardown(test_probe_targets, kill_children),
		cmocka_unit_test_teardown(test_probe_own_scraper, kill_children),
		cmocka_unit_test_teardown(test_probe_basic_auth, kill_children),
		cmocka_unit_test_teardown(test_ha_failover_failback, kill_children),
		cmocka_unit_test_teardown(test_ha_redirect_not_configured, kill_children),
		cmocka_unit_test_teardown(test_ha_redirect_to_configured, kill_children),
		cmocka_unit_test_teardown(test_ha_hung_controller, kill_children),
		cmocka_unit_test_teardown(test_ha_all_down, kill_children),
		cmocka_unit_test_teardown(test_ha_no_mixing, kill_children),
		cmocka_unit_test_teardown(test_ha_unusable_first, kill_children),
		cmocka_unit_test_teardown(test_ha_single_url_no_mixing, kill_children),
		cmocka_unit_test_teardown(test_ha_failback_hang_deadline, kill_children),
		cmocka_unit_test(test_ha_url_list),
		cmocka_unit_test(test_ha_url_checks),
		/* at most one job walk per scrape; an empty jobs-users-accts answer vouched */
		cmocka_unit_test_teardown(test_job_walks_take_turns, kill_children),
		cmocka_unit_test_teardown(test_empty_ua_vouched_by_nodes, kill_children),
		cmocka_unit_test(test_native_render),
		cmocka_unit_test(test_native_control_bytes),
		cmocka_unit_test_teardown(test_native_passthrough, kill_children),
		cmocka_unit_test_teardown(test_native_hostile, kill_children),
		cmocka_unit_test_teardown(test_native_shares_fetch, kill_children),
		cmocka_unit_test_teardown(test_native_basic_auth, kill_children),
		cmocka_unit_test(test_native_digit_name),
		/* compressed answers */
		cmocka_unit_test_teardown(test_gzip_answer, kill_children),
		cmocka_unit_test_teardown(test_gzip_compressed_once, kill_children),
		cmocka_unit_test_teardown(test_gzip_cost, kill_children),
		cmocka_unit_test_teardown(test_gzip_native_probe_off, kill_children),
	};
	if (getenv("TEST_FILTER")) /* e.g. TEST_FILTER='test_gzip_*': only those */
		cmocka_set_test_filter(getenv("TEST_FILTER"));
	int rc = cmocka_run_group_tests_name("http", tests, NULL, NULL);
	curl_global_cleanup();
	return rc;
}
