/* test_http_limits.c: hostile clients and the memory the shim holds for them: a 0.001 s scrape
 * timeout neither fails nor shortens the shared fetch, a scrape after SIGHUP during the old table's
 * fetch serves the new table, slow readers share one body, readers arriving apart hold bodies only (not
 * the payloads); --web.max-held-bytes past its budget: tests/test_slow_readers.c. */
#include "http_fixture.h"

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
	const char *path = tu_tmp("reload-fetch.json");
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
	unlink(path);
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_short_deadline_does_not_poison, kill_children),
		cmocka_unit_test_teardown(test_reload_during_fetch, kill_children),
		cmocka_unit_test_teardown(test_slow_readers_share_one_body, kill_children),
		cmocka_unit_test_teardown(test_slow_readers_apart_hold_bodies_only, kill_children),
	};
	return http_fixture_run("http_limits", tests, sizeof(tests) / sizeof(tests[0]));
}
