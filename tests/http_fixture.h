/* http_fixture.h: the fixture of the HTTP tests (tests/test_http_*.c; header-only, each test one
 * binary): a fake slurmctld (tests/fake_slurmctld) and the shim started on free loopback ports, their
 * children killed by the teardown (kill_children), requests with libcurl, and the helpers more than one
 * of those files uses. A test file's own helpers stay in it. */
#ifndef SHIM_HTTP_FIXTURE_H
#define SHIM_HTTP_FIXTURE_H

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
	char log[192];
};

static inline unsigned free_port(void)
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

static inline pid_t spawn(char *const argv[], const char *logfile)
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

static inline void reap(pid_t pid)
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
static inline void stop(struct proc *p)
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

static inline size_t on_body(char *ptr, size_t size, size_t n, void *ud)
{
	buf_append(&((struct resp *)ud)->body, ptr, size * n);
	return size * n;
}

/* hdr: one extra request header, or NULL */
static inline void http_hdr(const char *method, unsigned port, const char *path, const char *hdr, struct resp *r, long timeout_ms)
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

static inline void http(const char *method, unsigned port, const char *path, struct resp *r, long timeout_ms)
{
	http_hdr(method, port, path, NULL, r, timeout_ms);
}

/* Wait until the child answers on its port: 1; 0 if it exited first (port taken by another
 * process between free_port() and its bind: the caller retries on another port). */
static inline int wait_ready(pid_t pid, unsigned port)
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
static inline void fake_start(struct proc *f, const char *dir, ...)
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
		snprintf(f->log, sizeof(f->log), "%s/fake-%u.log", tu_tmpdir(), f->port);
		f->pid = spawn(argv, f->log);
		if (wait_ready(f->pid, f->port))
			return;
	}
	fail_msg("fake_slurmctld does not start (see %s)", f->log);
}

/* Start the shim with argv, whose --web.listen-address value is listen (64 bytes, written here): on a
 * free port, another one if that was taken meanwhile. */
static inline void shim_launch(struct proc *s, char *argv[], char listen[64])
{
	for (int attempt = 0; attempt < 5; attempt++) {
		s->port = free_port();
		snprintf(listen, 64, "127.0.0.1:%u", s->port);
		snprintf(s->log, sizeof(s->log), "%s/shim-%u.log", tu_tmpdir(), s->port);
		s->pid = spawn(argv, s->log);
		if (wait_ready(s->pid, s->port))
			return;
	}
	fail_msg("the shim does not start (see %s)", s->log);
}

static inline void shim_start(struct proc *s, unsigned upstream, ...)
{
	char listen[64], url[64];
	char *argv[40] = { (char *)tu_shim_bin(), "--web.listen-address", listen, "--slurmctld.url", url,
			   "--mapping.file", MAPPING, "--log.level", "debug" };
	int n = 9;
	va_list ap;
	va_start(ap, upstream);
	for (char *a; (a = va_arg(ap, char *)) && n < 38;) {
		/* a repeated --mapping.file adds a schema (the first is served at /metrics): a test's own
		 * mapping replaces MAPPING instead */
		if (!strcmp(a, "--mapping.file") && !strcmp(argv[5], "--mapping.file")) {
			memmove(&argv[5], &argv[7], (size_t)(n - 7) * sizeof(argv[0]));
			n -= 2;
		}
		argv[n++] = a;
	}
	va_end(ap);
	argv[n] = NULL;
	snprintf(url, sizeof(url), "http://127.0.0.1:%u", upstream);
	shim_launch(s, argv, listen);
}

/* The legacy families of an exposition: every line before the first self metric. */
static inline char *legacy_part(const char *text)
{
	/* (an index, not strstr's pointer: GCC 12 took that for a dangling pointer once tu_tmp was in) */
	static const char self[] = "# HELP slurm_exporter_shim_";
	size_t n = 0;
	while (text[n] && strncmp(text + n, self, sizeof(self) - 1) != 0)
		n++;
	return xstrndup(text, n);
}

static inline char *once_output(const char *dir, const char *extra)
{
	char *out = NULL;
	char *argv[] = { (char *)tu_shim_bin(), "--once", "--replay-dir", (char *)dir, "--mapping.file", MAPPING,
			 (char *)extra, NULL };
	assert_int_equal(tu_run(argv, NULL, &out, NULL, NULL), 0);
	return out;
}

/* One fault on every endpoint: the shim answers 503 with the reason, quickly, and stays up. */
static inline void expect_503(const char *fault, const char *reason, const char *extra_shim_flag)
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

static inline long stat_count(unsigned fake_port, const char *ep)
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

static inline double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* How many times needle occurs in text. */
static inline int count_of(const char *text, const char *needle)
{
	int n = 0;
	for (const char *p = text; p && (p = strstr(p, needle)); p += strlen(needle))
		n++;
	return n;
}

/* SIGHUP to p, then wait (up to 30 s: 10 s was once not enough in a run of the suite at load 12,
 * while test_reload's log path was still shared by every run) until its log holds one more line with needle ("mapping
 * reload": the daemon's reload, done or refused; "target NAME: mapping reload": a probe target's,
 * logged after it), and 100 ms more: a fixed sleep alone was too short for the TSan build on a busy
 * machine (test_gzip_native_probe_off read the answer rendered before the reload). */
static inline void reload_and_wait(const struct proc *p, const char *needle)
{
	char *log = tu_slurp(p->log, NULL);
	int before = log ? count_of(log, needle) : 0;
	free(log);
	kill(p->pid, SIGHUP);
	for (int i = 0; i < 1200; i++) {
		log = tu_slurp(p->log, NULL);
		int now = log ? count_of(log, needle) : 0;
		free(log);
		if (now > before) {
			tu_sleep_ms(100); /* the line is logged just before the table is handed over */
			return;
		}
		tu_sleep_ms(25);
	}
	fail_msg("no '%s' in %s within 30 s of SIGHUP", needle, p->log);
}

/* A payload of tests/bench/gen_payload.py with this many nodes, made once a run: big-N in the test's
 * own directory. 4,000
 * nodes give a 1.6 MB answer; 10,000 a 4.2 MB one, more than the 4 MB a socket's send buffer takes,
 * so that a client that does not read keeps the shim's answer. */
static inline const char *big_payload(int nodes)
{
	static char dir[192];
	char n[16];
	snprintf(dir, sizeof(dir), "%s/big-%d", tu_tmpdir(), nodes);
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
static inline int shim_has(const char *sym)
{
	size_t binlen = 0;
	char *bin = tu_slurp(tu_shim_bin(), &binlen);
	int has = bin && memmem(bin, binlen, sym, strlen(sym));
	free(bin);
	return has;
}

/* A process's resident memory in kB (-1: unknown). */
static inline long vmrss_kb(pid_t pid)
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

/* A self metric's value for one endpoint in an exposition; -1 when absent. */
static inline double self_value(const char *text, const char *name, const char *endpoint)
{
	char want[160];
	snprintf(want, sizeof(want), "\n%s{endpoint=\"%s\"} ", name, endpoint);
	const char *p = text ? strstr(text, want) : NULL;
	return p ? strtod(p + strlen(want), NULL) : -1;
}

/* --- /probe?target=NAME: several clusters, one scraper each ------------------------------------ */

#define IDLE "tests/fixtures/slurm-25.11/01-idle"
#define BUSY "tests/fixtures/slurm-25.11/02-busy-mix"

/* Fakes A (01-idle) and B (02-busy-mix) as targets "idle" and "busy", "down" on a closed port, and
 * fake C, which is in no file (what a client could try to make the shim fetch). The shim's own
 * --slurmctld.url is A; extra: more shim flags (up to 2, NULL-terminated). */
struct probe_env {
	struct proc a, b, c, s;
	char file[192];
};

static inline void probe_start(struct probe_env *e, const char *extra1, const char *extra2)
{
	char text[512];
	fake_start(&e->a, IDLE, NULL);
	fake_start(&e->b, BUSY, NULL);
	fake_start(&e->c, IDLE, NULL);
	snprintf(e->file, sizeof(e->file), "%s/targets-%u.yml", tu_tmpdir(), e->a.port);
	snprintf(text, sizeof(text),
		 "targets:\n  idle:\n    slurmctld_url: http://127.0.0.1:%u\n    mapping: %s\n"
		 "  busy: {slurmctld_url: [\"http://127.0.0.1:%u\"]}\n  down: {slurmctld_url: http://127.0.0.1:%u}\n",
		 e->a.port, tu_tmp("probe-idle.json"), e->b.port, free_port());
	tu_write(e->file, text);
	char *orig = tu_slurp(MAPPING, NULL);
	tu_write(tu_tmp("probe-idle.json"), orig);
	free(orig);
	shim_start(&e->s, e->a.port, "--probe.targets-file", e->file, "--slurmctld.min-interval", "30",
		   "--slurmctld.jobs.min-interval", "30", extra1, extra2, NULL);
}

static inline void probe_stop(struct probe_env *e)
{
	stop(&e->s);
	stop(&e->c);
	stop(&e->b);
	stop(&e->a);
}

/* Requests the fake on port got, all endpoints together. */
static inline long fake_requests(unsigned port)
{
	static const char *const eps[] = { "jobs", "nodes", "partitions", "scheduler", "jobs-users-accts" };
	long n = 0;
	for (int i = 0; i < 5; i++)
		n += stat_count(port, eps[i]);
	return n;
}

/* A test file's main: libcurl initialised, SIGPIPE ignored, TEST_FILTER (e.g. TEST_FILTER='test_gzip_*')
 * running only the tests it matches. */
static inline int http_fixture_run(const char *name, const struct CMUnitTest *tests, size_t n)
{
	curl_global_init(CURL_GLOBAL_DEFAULT);
	signal(SIGPIPE, SIG_IGN);
	if (getenv("TEST_FILTER"))
		cmocka_set_test_filter(getenv("TEST_FILTER"));
	int rc = _cmocka_run_group_tests(name, tests, n, NULL, NULL);
	curl_global_cleanup();
	return rc;
}

#endif
