/* test_slow_readers.c: clients that request a large answer and do not read it, against the daemon
 * (tests/fake_slurmctld serving a 10,000-node payload of tests/bench/gen_payload.py: a 4.2 MB answer,
 * more than the 4 MB a loopback socket's send buffer takes, so that such a client keeps the shim's
 * answer). Answers that only they hold count in --web.max-held-bytes; over it, the connections
 * holding the oldest are closed before a new answer is rendered, and an ordinary scraper is never
 * refused for them (docs/reliability.md, "Readers that arrive one interval apart"). */
#include "http_fixture.h"

/* GET path: the status (0: no answer), the body into body. */
static long get(unsigned port, const char *path, struct buf *body, long timeout_ms)
{
	struct resp r;
	http("GET", port, path, &r, timeout_ms);
	*body = r.body;
	return r.status;
}

/* The shim on upstream port up, both min-intervals 0.4 s (a reader 0.5 s after another gets an answer
 * of its own), with --web.max-held-bytes held. */
static void shim_held(struct proc *s, unsigned up, const char *held)
{
	shim_start(s, up, "--slurmctld.min-interval", "0.4", "--slurmctld.jobs.min-interval", "0.4",
		   "--web.max-held-bytes", (char *)held, (char *)NULL);
}

/* A client that sends GET path with a 4 KiB receive buffer and reads only the status line: its
 * status code (the socket in *fd). */
static int slow_reader(unsigned port, const char *path, int *fd)
{
	int small = 4096;
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port), .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	struct timeval tv = { 20, 0 };
	char req[128], head[13] = "";
	int n = snprintf(req, sizeof(req), "GET %s HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", path);
	*fd = socket(AF_INET, SOCK_STREAM, 0);
	setsockopt(*fd, SOL_SOCKET, SO_RCVBUF, &small, sizeof(small));
	setsockopt(*fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	assert_int_equal(connect(*fd, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(send(*fd, req, (size_t)n, MSG_NOSIGNAL), n);
	assert_int_equal(recv(*fd, head, 12, MSG_WAITALL), 12);
	return atoi(head + 9);
}

/* Read the rest of a slow reader's answer: 1 if it came whole (its Content-Length of body after the
 * head), 0 if the connection ended first (closed by the shim). */
static int reads_whole(int fd)
{
	struct buf b;
	char chunk[65536];
	ssize_t n;
	long want = -1;
	size_t head = 0;
	int big = 1 << 22; /* 4 KiB took 50 s for 4 MB, and the shim's connection timeout is 30 s */
	setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &big, sizeof(big));
	buf_init(&b, 0);
	while ((n = recv(fd, chunk, sizeof(chunk), 0)) > 0) {
		buf_append(&b, chunk, (size_t)n);
		if (!head) {
			buf_putc(&b, '\0');
			b.len--;
			char *end = strstr(b.data, "\r\n\r\n"), *cl = strcasestr(b.data, "\r\nContent-Length:");
			if (end && cl) {
				head = (size_t)(end + 4 - b.data);
				want = strtol(cl + 17, NULL, 10);
			}
		}
		if (head && (long)(b.len - head) >= want)
			break;
	}
	int whole = head && want > 0 && (long)(b.len - head) == want;
	buf_free(&b);
	return whole;
}

/* 16 clients that do not read, one min-interval apart (each holds an answer of its own, 4.2 MB),
 * with an ordinary scrape between each two that needs a new answer too: with a budget of 12 MB (under
 * 3 answers) every ordinary scrape gets 200 with the whole exposition (they got 503 from the fourth
 * reader on before), the readers of the oldest answers lose their connections (the newest retired
 * answer's reader keeps its own and reads it whole), and the shim's memory stays within the budget
 * and a few answers. */
static void test_slow_readers_evicted_scraper_served(void **state)
{
	(void)state;
	enum { N = 16 };
	struct proc f, s;
	struct buf b;
	int fds[N], served = 0, evicted = 0, refused = 0;
	fake_start(&f, big_payload(10000), (char *)NULL);
	shim_held(&s, f.port, "12000000");
	assert_int_equal(get(s.port, "/metrics", &b, 30000), 200); /* warm up: every allocation of a render made once */
	long answer_kb = (long)b.len / 1024;
	assert_true(answer_kb > 4096);
	buf_free(&b);
	long rss0 = vmrss_kb(s.pid), peak = rss0, half = 0;
	for (int i = 0; i < N; i++) {
		tu_sleep_ms(500); /* past the interval: a new answer for this reader */
		assert_int_equal(slow_reader(s.port, "/metrics", &fds[i]), 200);
		tu_sleep_ms(500); /* and for the scraper */
		long st = get(s.port, "/metrics", &b, 30000);
		int whole = st == 200 && b.len / 1024 + 64 > (size_t)answer_kb && strstr(b.data, "\nslurm_cpus_total ");
		if (!whole)
			print_message("ordinary scrape after reader %d: %ld, %zu bytes: %.200s\n", i, st, b.len, b.data);
		assert_null(strstr(b.data, "max-held-bytes")); /* never refused for what the readers hold */
		served += whole;
		refused += st == 503;
		buf_free(&b);
		long rss = vmrss_kb(s.pid);
		peak = rss > peak ? rss : peak;
		if (i == N / 2 - 1)
			half = peak;
	}
	/* the last reader's answer is the newest replaced one: kept; the others were closed oldest first */
	assert_true(reads_whole(fds[N - 1]));
	for (int i = 0; i < N - 1; i++)
		evicted += !reads_whole(fds[i]);
	char *log = tu_slurp(s.log, NULL);
	print_message("figures: answer %ld kB, %d readers one interval apart, %d of %d ordinary scrapes 200, %d readers "
		      "closed, shim VmRSS %ld kB before, peak +%ld kB after %d readers, +%ld kB after %d\n", answer_kb, N, served,
		      N, evicted, rss0, half - rss0, N / 2, peak - rss0, N);
	/* every one; under a sanitizer (renders several times slower) one or two may miss their deadline */
	assert_true(served == N || (served >= N - 2 && (shim_has("__tsan_init") || shim_has("__asan_init"))));
	assert_true(evicted >= N - 5); /* at most 12 MB of retired answers plus the newest: 3 or 4 readers kept */
	assert_non_null(strstr(log, "over --web.max-held-bytes 12000000: closed the "));
	/* no 503 (the log's byte counts, such as "hold 12503117 bytes", are no status: the statuses are
	 * counted as read); under a sanitizer, only for the scrapes that missed their deadline */
	assert_true(refused == 0 || (refused <= N - served && (shim_has("__tsan_init") || shim_has("__asan_init"))));
	free(log);
	/* flat: the second 8 readers add less than 3 answers (each held its own before, 4.1 MB), and in
	 * all less than the budget, 12 answers and 16 MB (allocator arenas of the connection threads,
	 * the payloads refetched every interval) */
	if (!shim_has("__tsan_init") && !shim_has("__asan_init")) {
		assert_true(peak - half < 3 * answer_kb);
		assert_true(peak - rss0 < 12000 + 12 * answer_kb + 16384);
	}
	for (int i = 0; i < N; i++)
		close(fds[i]);
	stop(&s);
	stop(&f);
}

/* The same through the native passthrough: readers of /native/metrics/jobs-users-accts (8.6 MB, every
 * family of slurmctld's answer re-escaped) one interval apart, beyond a 12 MB budget: every ordinary
 * request of that page between them gets 200 with the whole page (503 before), the readers of the
 * oldest answers are closed, the newest one's reader reads it whole. */
static void test_slow_readers_native_evicted(void **state)
{
	(void)state;
	enum { N = 6 };
	static const char path[] = "/native/metrics/jobs-users-accts";
	struct proc f, s;
	struct buf b;
	int fds[N], served = 0, evicted = 0;
	fake_start(&f, big_payload(10000), (char *)NULL);
	shim_held(&s, f.port, "12000000");
	assert_int_equal(get(s.port, path, &b, 30000), 200);
	size_t page = b.len;
	assert_true(page > 8000000);
	buf_free(&b);
	for (int i = 0; i < N; i++) {
		tu_sleep_ms(500);
		assert_int_equal(slow_reader(s.port, path, &fds[i]), 200);
		tu_sleep_ms(500);
		long st = get(s.port, path, &b, 30000);
		if (st != 200 || b.len + 65536 < page)
			print_message("ordinary request after reader %d: %ld, %zu bytes: %.200s\n", i, st, b.len, b.data);
		assert_null(strstr(b.data, "max-held-bytes"));
		served += st == 200 && b.len + 65536 > page;
		buf_free(&b);
	}
	assert_true(reads_whole(fds[N - 1]));
	for (int i = 0; i < N - 1; i++)
		evicted += !reads_whole(fds[i]);
	print_message("figures: page %zu bytes, %d readers one interval apart, %d of %d ordinary requests 200, %d readers "
		      "closed\n", page, N, served, N, evicted);
	assert_true(served == N || (served >= N - 1 && (shim_has("__tsan_init") || shim_has("__asan_init"))));
	assert_true(evicted >= N - 3);
	for (int i = 0; i < N; i++)
		close(fds[i]);
	stop(&s);
	stop(&f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_slow_readers_evicted_scraper_served, kill_children),
		cmocka_unit_test_teardown(test_slow_readers_native_evicted, kill_children),
	};
	return http_fixture_run("test_slow_readers", tests, sizeof(tests) / sizeof(tests[0]));
}
