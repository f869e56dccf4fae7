/* test_http_gzip.c: compressed answers (Accept-Encoding: gzip) on the 10,000-node payload of
 * tests/bench/gen_payload.py, decompressed by zlib: the headers, the identity bytes for refusals and
 * malformed headers, one compression for concurrent scrapes of one answer, its CPU cost, the
 * passthrough and /probe compressed the same way, --web.compression=false. */
#include "http_fixture.h"

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

/* The 10,000-node payload of tests/bench/gen_payload.py, generated once a run (in the test's own
 * directory). */
static const char *big10000(void)
{
	const char *dir = tu_tmp("big10000");
	if (!tu_is_dir(dir)) {
		char *argv[] = { "/usr/bin/env", "python3", "tests/bench/gen_payload.py", "--nodes", "10000", "--out", (char *)dir, NULL };
		assert_int_equal(tu_run(argv, NULL, NULL, NULL, NULL), 0);
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
	reload_and_wait(&s, "mapping reload");
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
			reload_and_wait(&s, "mapping reload"); /* a new answer, not compressed yet */
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
	reload_and_wait(&e.s, "target busy: mapping reload");
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
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_gzip_answer, kill_children),
		cmocka_unit_test_teardown(test_gzip_compressed_once, kill_children),
		cmocka_unit_test_teardown(test_gzip_cost, kill_children),
		cmocka_unit_test_teardown(test_gzip_native_probe_off, kill_children),
	};
	return http_fixture_run("http_gzip", tests, sizeof(tests) / sizeof(tests[0]));
}
