/* bench.c: the shim's benchmark driver (`make bench`; see tests/bench/README.md and docs/performance.md).
 *
 * For every payload directory (metrics_<endpoint>.txt, as --replay-dir reads them):
 *   pipeline   parse (payload_feed x5, in libcurl's 16 KiB pieces) + render_run (map: mapping_run,
 *              write: write_family, then the self metrics) from bytes already in memory, then free
 *              everything, as one scrape does; many iterations on one core;
 *   scrape     scraper_run() with --replay-dir semantics (adds reading the five files, the self
 *              metrics and the scraper's bookkeeping);
 *   rss        a fresh child process (this binary, --rss) that runs three scraper_run()s and
 *              reports its VmHWM: the peak resident memory of one scrape of that payload;
 *   promtool   `promtool check metrics` (Prometheus' own Go parser, which also lints) on the five
 *              files concatenated, on stdin from a file, many repetitions: the reference.
 * Then the growth pass: every size again in a fresh process (--cpu), nine rounds, so that the sizes
 * are compared without heap history and under the same load.
 * For every --e2e directory: fake_slurmctld serves it, the shim serves :PORT from the fake with
 * --slurmctld.min-interval 0, and each round times a GET of the shim's /metrics (one kept-alive
 * connection, as Prometheus does) against a direct GET of the fake's five endpoints, both
 * sequentially and in parallel (one connection each: slurmctld closes after every answer).
 *
 * It prints figures and never fails because something is slow; it exits 1 only when it cannot
 * measure at all (a missing file, a child that does not start). */
#include "buf.h"
#include "source.h"
#include "expo.h"
#include "mapping.h"
#include "payload.h"
#include "render.h"
#include "scrape.h"
#include "xmalloc.h"
#include "benchutil.h"

#include <arpa/inet.h>
#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_DIRS 16

/* ---- samples and their statistics ---- */

struct series {
	double *v;
	size_t n, cap;
};

static void add(struct series *s, double v)
{
	s->v = xgrow(s->v, &s->cap, s->n + 1, sizeof(double));
	s->v[s->n++] = v;
}

struct stats {
	double med, p10, p90, min, max;
	size_t n;
};

static double quantile(const double *sorted, size_t n, double q)
{
	double pos = q * (double)(n - 1);
	size_t i = (size_t)pos;
	if (i + 1 >= n)
		return sorted[n - 1];
	return sorted[i] + (pos - (double)i) * (sorted[i + 1] - sorted[i]);
}

static struct stats stats_of(const struct series *s)
{
	struct stats r = { 0 };
	if (!s->n)
		return r;
	double *t = xmalloc(s->n * sizeof(double));
	memcpy(t, s->v, s->n * sizeof(double));
	qsort(t, s->n, sizeof(double), dcmp);
	r.n = s->n;
	r.med = quantile(t, s->n, 0.5);
	r.p10 = quantile(t, s->n, 0.1);
	r.p90 = quantile(t, s->n, 0.9);
	r.min = t[0];
	r.max = t[s->n - 1];
	free(t);
	return r;
}

static void print_ms(const char *what, const struct series *s)
{
	struct stats st = stats_of(s);
	printf("  %-34s median %9.3f ms  p10 %9.3f  p90 %9.3f  min %9.3f  max %9.3f  (n=%zu)\n", what, st.med * 1e3,
	       st.p10 * 1e3, st.p90 * 1e3, st.min * 1e3, st.max * 1e3, st.n);
}

/* ---- files ---- */

static char *read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	struct buf b;
	char chunk[65536];
	size_t n;
	buf_init(&b, 0);
	while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0)
		buf_append(&b, chunk, n);
	fclose(f);
	return buf_steal(&b, len);
}

struct payload_set {
	const char *dir;
	char *body[SRC_COUNT];
	size_t len[SRC_COUNT];
	size_t bytes, samples, lines;
};

static void load_set(struct payload_set *ps, const char *dir)
{
	memset(ps, 0, sizeof(*ps));
	ps->dir = dir;
	for (int ep = 0; ep < SRC_NATIVE_COUNT; ep++) {
		char path[4096];
		snprintf(path, sizeof(path), "%s/%s", dir, sources[ep].file);
		ps->body[ep] = read_file(path, &ps->len[ep]);
		if (!ps->body[ep])
			die("cannot read %s", path);
		ps->bytes += ps->len[ep];
		struct expo e;
		expo_init(&e);
		if (expo_parse(&e, ps->body[ep], ps->len[ep], 0))
			die("%s does not parse cleanly", path);
		ps->samples += e.nsamples;
		ps->lines += e.nlines;
		expo_free(&e);
	}
}

static void free_set(struct payload_set *ps)
{
	for (int ep = 0; ep < SRC_NATIVE_COUNT; ep++)
		free(ps->body[ep]);
}

static long vm_kb(pid_t pid, const char *key)
{
	char path[64], line[256];
	long v = -1;
	size_t kl = strlen(key);
	if (pid)
		snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	else
		snprintf(path, sizeof(path), "/proc/self/status");
	FILE *f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (strncmp(line, key, kl) == 0 && line[kl] == ':')
			v = strtol(line + kl + 1, NULL, 10);
	fclose(f);
	return v;
}

static void loadavg(char *out, size_t n)
{
	FILE *f = fopen("/proc/loadavg", "r");
	out[0] = '\0';
	if (f) {
		if (fgets(out, (int)n, f))
			out[strcspn(out, "\n")] = '\0';
		fclose(f);
	}
}

/* ---- in-process: parse + map + write from memory ---- */

struct pipe_times {
	struct series total, cpu, parse, eval, write;
	size_t out_bytes;
};

/* One endpoint's answer as the daemon parses it (payload_feed): the body in the pieces libcurl
 * hands over (at most CURL_MAX_WRITE_SIZE), every line checked, only the mapping's inputs kept. */
static struct payload *parse_answer(const struct payload_set *ps, enum source_id ep, const struct mapping *m)
{
	struct payload *p = payload_new(ep, 0, mapping_has_input, (void *)m);
	for (size_t off = 0; off < ps->len[ep]; off += CURL_MAX_WRITE_SIZE)
		payload_feed(p, ps->body[ep] + off,
			     ps->len[ep] - off < CURL_MAX_WRITE_SIZE ? ps->len[ep] - off : CURL_MAX_WRITE_SIZE, 0);
	payload_finish(p);
	if (!p->ok)
		die("%s: %s", ps->dir, p->reason);
	return p;
}

/* One scrape's work as scraper_run does it: parse, then render_run (the rows through mapping_run,
 * each written as it comes, then the self metrics). The total is this thread's CPU time; the
 * map / write split sums wall-clock intervals per row (render_in.time_rows: CLOCK_MONOTONIC is a
 * vDSO call, cheap enough to take 124 times). */
static void pipeline_once(const struct payload_set *ps, const struct mapping *m, struct pipe_times *t)
{
	struct payload *p[SRC_COUNT] = { 0 }; /* slurmctld's answers; no slurmrestd */
	struct render_result res;
	struct buf out;

	double c0 = cpu_now(), t0 = mono_now();
	for (int ep = 0; ep < SRC_NATIVE_COUNT; ep++) {
		p[ep] = parse_answer(ps, (enum source_id)ep, m);
	}
	double t1 = cpu_now();
	/* as scraper_run does: the body reserved at about the last size */
	const struct render_in in = { .m = m, .flags = 0, .p = (const struct payload *const *)p, .size_hint = t->out_bytes,
				      .clock = mono_now, .started = t0, .time_rows = 1 };
	buf_init(&out, 0);
	render_run(&in, &out, &res);
	t->out_bytes = out.len;
	buf_free(&out);
	render_result_free(&res);
	for (int ep = 0; ep < SRC_NATIVE_COUNT; ep++)
		payload_unref(p[ep]);
	double t4 = mono_now();
	add(&t->cpu, cpu_now() - c0);
	add(&t->total, t4 - t0);
	add(&t->parse, t1 - c0);
	add(&t->eval, res.eval_s);
	add(&t->write, res.write_s);
}

static void pipe_times_free(struct pipe_times *t)
{
	free(t->total.v);
	free(t->cpu.v);
	free(t->parse.v);
	free(t->eval.v);
	free(t->write.v);
	*t = (struct pipe_times){ 0 };
}

/* Run the statement(s) until `seconds` have passed, at least min_n and at most max_n times. */
#define RUN_FOR(seconds, min_n, max_n, ...)                                                                  \
	do {                                                                                                  \
		double run_t0_ = mono_now();                                                                       \
		for (size_t run_i_ = 0; run_i_ < (max_n) && (run_i_ < (min_n) || mono_now() - run_t0_ < (seconds)); run_i_++) { \
			__VA_ARGS__;                                                                          \
		}                                                                                             \
	} while (0)

static void scrape_series(const char *dir, struct mapping *m, double seconds, struct series *s, struct series *cpu,
			  size_t *out_bytes)
{
	struct scraper_config cfg = { 0 };
	cfg.replay_dir = dir;
	cfg.flags = 0;
	cfg.upstream[UPSTREAM_SLURMCTLD].max_body = 268435456;
	struct scraper *sc = scraper_new(&cfg, m);
	struct buf out;
	buf_init(&out, 0);
	scraper_run(sc, 60, &out); /* warm-up */
	buf_free(&out);
	RUN_FOR(seconds, 7, 5000, {
		buf_init(&out, 0);
		double c0 = cpu_now(), t0 = mono_now();
		int code = scraper_run(sc, 60, &out);
		add(s, mono_now() - t0);
		add(cpu, cpu_now() - c0);
		if (code != 200)
			die("scraper_run of %s did not answer 200", dir);
		*out_bytes = out.len;
		buf_free(&out);
	});
	scraper_free(sc); /* frees the mapping */
}

/* The child of --rss: three scrapes, then the peak. */
static int rss_child(const char *dir, const char *mapping)
{
	struct mapping *m = load_mapping_or_die(mapping);
	long base = vm_kb(0, "VmHWM");
	struct scraper_config cfg = { 0 };
	cfg.replay_dir = dir;
	cfg.flags = 0;
	cfg.upstream[UPSTREAM_SLURMCTLD].max_body = 268435456;
	struct scraper *sc = scraper_new(&cfg, m);
	for (int i = 0; i < 3; i++) {
		struct buf out;
		buf_init(&out, 0);
		scraper_run(sc, 60, &out);
		buf_free(&out);
	}
	scraper_free(sc);
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	printf("%ld %ld %ld\n", base, vm_kb(0, "VmHWM"), ru.ru_maxrss);
	return 0;
}

/* Run `self flag a b [c]` (c may be NULL) and read the first line it prints into line. */
static int run_child_line(const char *self, const char *flag, const char *a, const char *b, const char *c, char *line,
			  size_t len)
{
	int fds[2];
	if (pipe(fds) < 0)
		return -1;
	pid_t pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		dup2(fds[1], 1);
		close(fds[0]);
		close(fds[1]);
		execl(self, self, flag, a, b, c, (char *)NULL);
		_exit(127);
	}
	close(fds[1]);
	line[0] = '\0';
	FILE *f = fdopen(fds[0], "r");
	if (!fgets(line, (int)len, f))
		line[0] = '\0';
	fclose(f);
	int st;
	waitpid(pid, &st, 0);
	return 0;
}

static int measure_rss(const char *self, const char *dir, const char *mapping, long *base, long *hwm, long *maxrss)
{
	char line[256];
	if (run_child_line(self, "--rss", dir, mapping, NULL, line, sizeof(line)) < 0)
		return -1;
	return sscanf(line, "%ld %ld %ld", base, hwm, maxrss) == 3 ? 0 : -1;
}

/* Run `self flag a b c` and read one number from its first output line. */
static int run_child_number(const char *self, const char *flag, const char *a, const char *b, const char *c, double *out)
{
	char line[256];
	if (run_child_line(self, flag, a, b, c, line, sizeof(line)) < 0)
		return -1;
	return sscanf(line, "%lf", out) == 1 ? 0 : -1;
}

/* ---- promtool ---- */

struct prom_result {
	struct series wall, cpu;
	int status;          /* exit status of the last run */
};

static int run_promtool_once(const char *promtool, const char *input, double *wall, double *cpu)
{
	double t0 = mono_now();
	pid_t pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		int in = open(input, O_RDONLY);
		int nul = open("/dev/null", O_WRONLY);
		if (in < 0 || nul < 0)
			_exit(126);
		dup2(in, 0);
		dup2(nul, 1);
		dup2(nul, 2);
		execlp(promtool, promtool, "check", "metrics", (char *)NULL);
		_exit(127);
	}
	int st;
	struct rusage ru;
	if (wait4(pid, &st, 0, &ru) < 0)
		return -1;
	*wall = mono_now() - t0;
	*cpu = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 + (double)ru.ru_stime.tv_sec +
	       (double)ru.ru_stime.tv_usec / 1e6;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

static void promtool_series(const char *promtool, const char *input, double seconds, struct prom_result *r)
{
	double w, c;
	r->status = run_promtool_once(promtool, input, &w, &c); /* warm-up (page cache) */
	RUN_FOR(seconds, 5, 1000, {
		r->status = run_promtool_once(promtool, input, &w, &c);
		add(&r->wall, w);
		add(&r->cpu, c);
	});
}

static int write_concat(const struct payload_set *ps, const char *path)
{
	FILE *f = fopen(path, "wb");
	if (!f)
		return -1;
	for (int ep = 0; ep < SRC_NATIVE_COUNT; ep++)
		fwrite(ps->body[ep], 1, ps->len[ep], f);
	return fclose(f);
}

/* ---- end to end ---- */

struct membuf {
	char *p;
	size_t n, cap;
};

static size_t on_body(char *ptr, size_t size, size_t nmemb, void *ud)
{
	struct membuf *b = ud;
	size_t n = size * nmemb;
	b->p = xgrow(b->p, &b->cap, b->n + n, 1);
	memcpy(b->p + b->n, ptr, n);
	b->n += n;
	return n;
}

static CURL *easy(const char *url, struct membuf *b)
{
	CURL *h = curl_easy_init();
	curl_easy_setopt(h, CURLOPT_URL, url);
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, b);
	curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(h, CURLOPT_TIMEOUT, 60L);
	return h;
}

static long get(CURL *h, struct membuf *b)
{
	long code = 0;
	b->n = 0;
	if (curl_easy_perform(h) != CURLE_OK)
		return -1;
	curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &code);
	return code;
}

struct e2e_result {
	const char *dir;
	size_t bytes;
	struct series shim, seq, par, added, added_seq;
	size_t shim_bytes;
	long shim_hwm_kb;
	int ok;
};

static void e2e(const char *shim, const char *fake, const char *mapping, const char *dir, const char *outdir,
		double seconds, struct e2e_result *r)
{
	char portfile[4096], url[256], listen[64];
	snprintf(portfile, sizeof(portfile), "%s/.fake-port", outdir);
	unlink(portfile);
	char *fargv[] = { (char *)fake, "--port", "0", "--port-file", portfile, "--dir", (char *)dir, NULL };
	pid_t fpid = spawn(fargv, 1), spid = -1;
	unsigned fp = 0;
	for (int i = 0; i < 500 && !fp; i++) {
		FILE *f = fopen(portfile, "r");
		if (f) {
			if (fscanf(f, "%u", &fp) != 1)
				fp = 0;
			fclose(f);
		}
		if (!fp)
			usleep(10000);
	}
	if (!fp) {
		fprintf(stderr, "bench: fake_slurmctld did not start\n");
		stop(fpid);
		return;
	}
	snprintf(url, sizeof(url), "http://127.0.0.1:%u", fp);
	CURL *h = NULL, *dh[SRC_COUNT] = { 0 };
	CURLM *multi = curl_multi_init();
	struct membuf sb = { 0 }, db[SRC_COUNT];
	memset(db, 0, sizeof(db));
	for (int attempt = 0; attempt < 5 && !r->ok; attempt++) {
		unsigned sp = free_port();
		if (!sp)
			continue;
		snprintf(listen, sizeof(listen), "127.0.0.1:%u", sp);
		char *sargv[] = { (char *)shim, "--slurmctld.url", url, "--slurmctld.min-interval", "0",
				  "--slurmctld.jobs.min-interval", "0", "--web.listen-address", listen, "--mapping.file", (char *)mapping, "--log.level", "error",
				  NULL };
		spid = spawn(sargv, 1);
		char surl[256];
		snprintf(surl, sizeof(surl), "http://127.0.0.1:%u/metrics", sp);
		h = easy(surl, &sb);
		for (int i = 0; i < 500; i++) {
			if (get(h, &sb) == 200) {
				r->ok = 1;
				break;
			}
			int st;
			if (waitpid(spid, &st, WNOHANG) == spid)
				break; /* port taken meanwhile: try another */
			usleep(10000);
		}
		if (!r->ok) {
			stop(spid);
			spid = -1;
			curl_easy_cleanup(h);
			h = NULL;
		}
	}
	if (!r->ok) {
		fprintf(stderr, "bench: the shim did not start\n");
		stop(fpid);
		curl_multi_cleanup(multi);
		return;
	}
	for (int ep = 0; ep < SRC_NATIVE_COUNT; ep++) {
		char u[300];
		snprintf(u, sizeof(u), "%s%s", url, sources[ep].path);
		dh[ep] = easy(u, &db[ep]);
	}
	double deadline = mono_now() + seconds;
	for (int round = -3; round < 5000 && (round < 20 || mono_now() < deadline); round++) {
		/* direct, one endpoint after the other */
		double t0 = mono_now();
		int bad = 0;
		for (int ep = 0; ep < SRC_NATIVE_COUNT; ep++)
			if (get(dh[ep], &db[ep]) != 200) {
				fprintf(stderr, "bench: direct GET of %s failed\n", sources[ep].path);
				bad = 1;
			}
		double tseq = mono_now() - t0;
		if (bad) {
			r->ok = 0;
			break;
		}
		/* direct, five at once (as five Prometheus targets, or the shim's own fetch) */
		for (int ep = 0; ep < SRC_NATIVE_COUNT; ep++) {
			db[ep].n = 0;
			curl_multi_add_handle(multi, dh[ep]);
		}
		t0 = mono_now();
		int running = 1;
		while (running) {
			if (curl_multi_perform(multi, &running) != CURLM_OK)
				break;
			if (running)
				curl_multi_poll(multi, NULL, 0, 100, NULL);
		}
		double tpar = mono_now() - t0;
		for (int ep = 0; ep < SRC_NATIVE_COUNT; ep++)
			curl_multi_remove_handle(multi, dh[ep]);
		/* through the shim */
		t0 = mono_now();
		long code = get(h, &sb);
		double tshim = mono_now() - t0;
		if (code != 200) {
			fprintf(stderr, "bench: GET of the shim's /metrics answered %ld\n", code);
			r->ok = 0;
			break;
		}
		r->shim_bytes = sb.n;
		if (round < 0)
			continue;
		add(&r->seq, tseq);
		add(&r->par, tpar);
		add(&r->shim, tshim);
		add(&r->added, tshim - tpar);
		add(&r->added_seq, tshim - tseq);
	}
	if (r->ok && !memmem(sb.p, sb.n, "slurm_exporter_shim_up{endpoint=\"nodes\"} 1", 41))
		fprintf(stderr, "bench: warning: the shim's answer does not show the nodes endpoint up\n");
	r->shim_hwm_kb = vm_kb(spid, "VmHWM");
	for (int ep = 0; ep < SRC_NATIVE_COUNT; ep++) {
		curl_easy_cleanup(dh[ep]);
		free(db[ep].p);
	}
	curl_multi_cleanup(multi);
	curl_easy_cleanup(h);
	free(sb.p);
	stop(spid);
	stop(fpid);
	unlink(portfile);
}

/* ---- the run ---- */

struct size_result {
	const char *dir;
	size_t bytes, samples, out_bytes;
	struct stats pipe, pipe_cpu, parse, eval, write, scrape, scrape_cpu, prom, prom_cpu, prom_empty;
	long rss_base, rss_hwm, rss_maxrss;
	int prom_status, have_prom;
};

static const char *base_name(const char *p)
{
	const char *s = strrchr(p, '/');
	return s && s[1] ? s + 1 : p;
}

/* --rows: what each mapping row costs to evaluate and write (median of 9 renders of the row alone, less a
 * render of no row; inputs parsed once). */
struct row_cost {
	const char *name;
	double med;
	size_t series;
};

static int row_cost_cmp(const void *a, const void *b)
{
	const struct row_cost *x = a, *y = b;
	return x->med < y->med ? 1 : x->med > y->med ? -1 : 0;
}

/* The median time of 9 renders of table m over p (the self metrics included). */
static double render_median(const struct mapping *m, struct payload *const p[SRC_COUNT], size_t *nseries)
{
	const struct render_in in = { .m = m, .flags = 0, .p = (const struct payload *const *)p };
	struct series s = { 0 };
	for (int k = 0; k < 9; k++) {
		struct render_result res;
		struct buf out;
		buf_init(&out, 0);
		double t0 = mono_now();
		render_run(&in, &out, &res);
		add(&s, mono_now() - t0);
		if (nseries)
			*nseries = res.nrows ? res.rows[0].nseries : 0;
		render_result_free(&res);
		buf_free(&out);
	}
	double med = stats_of(&s).med;
	free(s.v);
	return med;
}

static int rows_profile(const char *dir, const char *mapping)
{
	struct payload_set ps;
	struct payload *p[SRC_COUNT] = { 0 }; /* slurmctld's answers; no slurmrestd */
	load_set(&ps, dir);
	struct mapping *m = load_mapping_or_die(mapping);
	for (int ep = 0; ep < SRC_NATIVE_COUNT; ep++) {
		p[ep] = parse_answer(&ps, (enum source_id)ep, m);
	}
	struct row_cost *rc = xcalloc(m->nrows, sizeof(*rc));
	struct mapping none = *m; /* no row: what a render costs besides its rows (the self metrics) */
	none.nrows = 0;
	double base = render_median(&none, p, NULL), total = 0;
	for (size_t i = 0; i < m->nrows; i++) {
		struct mapping one = *m; /* the table of this row alone */
		one.rows = &m->rows[i];
		one.nrows = 1;
		rc[i].name = m->rows[i].name;
		rc[i].med = fmax(render_median(&one, p, &rc[i].series) - base, 0);
		total += rc[i].med;
	}
	qsort(rc, m->nrows, sizeof(*rc), row_cost_cmp);
	printf("mapping rows by evaluation and writing time on %s (sum of medians %.3f ms; a render without rows, "
	       "%.3f ms, taken off each)\n", dir, total * 1e3, base * 1e3);
	for (size_t i = 0; i < m->nrows && rc[i].med > 0; i++)
		printf("  %-50s %9.3f ms %5.1f%%  %zu series\n", rc[i].name, rc[i].med * 1e3, 100 * rc[i].med / total,
		       rc[i].series);
	free(rc);
	for (int ep = 0; ep < SRC_NATIVE_COUNT; ep++)
		payload_unref(p[ep]);
	mapping_free(m);
	free_set(&ps);
	return 0;
}

static void usage(void)
{
	fprintf(stderr,
		"usage: bench [--mapping FILE] [--seconds S] [--promtool PATH|''] [--out DIR]\n"
		"             [--shim BIN --fake BIN --e2e DIR]... DIR...\n"
		"       bench --rss DIR MAPPING        (one process: 3 scrapes, prints VmHWM)\n"
		"       bench --loop DIR MAPPING N     (parse+map+write N times, for perf/callgrind)\n"
		"       bench --rows DIR MAPPING       (evaluation and writing time of each mapping row)\n"
		"       bench --cpu DIR MAPPING S      (median CPU time of the pipeline over S seconds)\n");
	exit(2);
}

int main(int argc, char **argv)
{
	xmalloc_tune(); /* as the daemon does */
	const char *mapping = "mappings/prometheus-slurm-exporter.json", *promtool = "promtool", *outdir = "tests/bench/out";
	const char *shim = NULL, *fake = NULL, *dirs[MAX_DIRS], *e2e_dirs[MAX_DIRS];
	size_t ndirs = 0, ne2e = 0;
	double seconds = 3;

	if (argc == 4 && strcmp(argv[1], "--rss") == 0)
		return rss_child(argv[2], argv[3]);
	if (argc == 5 && strcmp(argv[1], "--cpu") == 0) {
		/* the growth pass's child: a fresh process (no heap history), median CPU time */
		struct payload_set ps;
		struct pipe_times t = { 0 };
		load_set(&ps, argv[2]);
		struct mapping *m = load_mapping_or_die(argv[3]);
		pipeline_once(&ps, m, &t); /* warm-up */
		pipe_times_free(&t);
		RUN_FOR(atof(argv[4]), 3, 5000, pipeline_once(&ps, m, &t));
		printf("%.9f\n", stats_of(&t.cpu).med);
		return 0;
	}
	if (argc == 4 && strcmp(argv[1], "--rows") == 0)
		return rows_profile(argv[2], argv[3]);
	if (argc == 5 && strcmp(argv[1], "--loop") == 0) {
		/* for perf/callgrind: the parse+map+write pipeline, N times, nothing else */
		struct payload_set ps;
		struct pipe_times t = { 0 };
		load_set(&ps, argv[2]);
		struct mapping *m = load_mapping_or_die(argv[3]);
		for (long i = atol(argv[4]); i > 0; i--)
			pipeline_once(&ps, m, &t);
		struct stats st = stats_of(&t.total), sc = stats_of(&t.cpu), s1 = stats_of(&t.parse),
			     s2 = stats_of(&t.eval), s3 = stats_of(&t.write);
		printf("%zu runs, median %.3f ms wall, %.3f ms CPU (parse %.3f, map %.3f, write %.3f; rest is freeing)\n",
		       st.n, st.med * 1e3, sc.med * 1e3, s1.med * 1e3, s2.med * 1e3, s3.med * 1e3);
		mapping_free(m);
		free_set(&ps);
		return 0;
	}
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (a[0] != '-') {
			if (ndirs == MAX_DIRS)
				usage();
			dirs[ndirs++] = a;
			continue;
		}
		if (i + 1 >= argc)
			usage();
		const char *v = argv[++i];
		if (!strcmp(a, "--mapping"))
			mapping = v;
		else if (!strcmp(a, "--seconds"))
			seconds = atof(v);
		else if (!strcmp(a, "--promtool"))
			promtool = v;
		else if (!strcmp(a, "--out"))
			outdir = v;
		else if (!strcmp(a, "--shim"))
			shim = v;
		else if (!strcmp(a, "--fake"))
			fake = v;
		else if (!strcmp(a, "--e2e") && ne2e < MAX_DIRS)
			e2e_dirs[ne2e++] = v;
		else
			usage();
	}
	if (!ndirs && !ne2e)
		usage();
	if (ne2e && (!shim || !fake))
		usage();
	signal(SIGPIPE, SIG_IGN);
	setvbuf(stdout, NULL, _IOLBF, 0);
	mkdir(outdir, 0777);
	curl_global_init(CURL_GLOBAL_DEFAULT);

	char self[4096];
	ssize_t sl = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (sl <= 0)
		die("cannot find my own executable");
	self[sl] = '\0';

	char load0[128], load1[128], cpu[256] = "?";
	FILE *ci = fopen("/proc/cpuinfo", "r");
	if (ci) {
		char line[512];
		while (fgets(line, sizeof(line), ci))
			if (!strncmp(line, "model name", 10) && strchr(line, ':')) {
				snprintf(cpu, sizeof(cpu), "%s", strchr(line, ':') + 2);
				cpu[strcspn(cpu, "\n")] = '\0';
				break;
			}
		fclose(ci);
	}
	loadavg(load0, sizeof(load0));
	printf("slurm-exporter-shim benchmark: %s, %ld online CPUs; load average at start: %s\n", cpu,
	       sysconf(_SC_NPROCESSORS_ONLN), load0);
	printf("mapping %s; %.1f s per measurement (at least 7 shim and 5 promtool runs)\n", mapping, seconds);

	/* promtool's fixed cost: start-up on an empty input */
	struct prom_result empty = { 0 };
	int have_promtool = promtool && *promtool;
	if (have_promtool) {
		double w, c;
		if (run_promtool_once(promtool, "/dev/null", &w, &c) >= 126) {
			printf("promtool (%s) not found: reference skipped\n", promtool);
			have_promtool = 0;
		} else {
			promtool_series(promtool, "/dev/null", seconds / 3, &empty);
		}
	}

	struct size_result *res = xcalloc(ndirs ? ndirs : 1, sizeof(*res));
	for (size_t d = 0; d < ndirs; d++) {
		struct size_result *r = &res[d];
		struct payload_set ps;
		load_set(&ps, dirs[d]);
		r->dir = dirs[d];
		r->bytes = ps.bytes;
		r->samples = ps.samples;
		printf("\n== %s: %zu bytes, %zu samples, %zu lines\n", dirs[d], ps.bytes, ps.samples, ps.lines);

		struct mapping *m = load_mapping_or_die(mapping);
		struct pipe_times t = { 0 };
		pipeline_once(&ps, m, &t); /* warm-up */
		pipe_times_free(&t);
		RUN_FOR(seconds, 7, 5000, pipeline_once(&ps, m, &t));
		r->pipe = stats_of(&t.total);
		r->pipe_cpu = stats_of(&t.cpu);
		r->parse = stats_of(&t.parse);
		r->eval = stats_of(&t.eval);
		r->write = stats_of(&t.write);
		r->out_bytes = t.out_bytes;
		print_ms("parse+map+write, wall", &t.total);
		print_ms("parse+map+write, CPU", &t.cpu);
		print_ms("  parse (payload_feed x5), CPU", &t.parse);
		print_ms("  map (mapping_run), CPU", &t.eval);
		print_ms("  write (write_family), CPU", &t.write);
		printf("  -> %.1f MB/s of input (%.1f MB/s on CPU time), %.1f ns per input sample (%.1f CPU), output "
		       "%zu bytes\n",
		       (double)ps.bytes / r->pipe.med / 1e6, (double)ps.bytes / r->pipe_cpu.med / 1e6,
		       r->pipe.med * 1e9 / (double)ps.samples, r->pipe_cpu.med * 1e9 / (double)ps.samples, t.out_bytes);
		mapping_free(m);

		struct series sc = { 0 }, scc = { 0 };
		size_t sbytes = 0;
		scrape_series(dirs[d], load_mapping_or_die(mapping), seconds, &sc, &scc, &sbytes);
		r->scrape = stats_of(&sc);
		r->scrape_cpu = stats_of(&scc);
		print_ms("scraper_run (+ file reads), wall", &sc);
		print_ms("scraper_run (+ file reads), CPU", &scc);

		if (measure_rss(self, dirs[d], mapping, &r->rss_base, &r->rss_hwm, &r->rss_maxrss) == 0)
			printf("  peak RSS of one scrape in a fresh process: VmHWM %.1f MiB (%.1f MiB before the first "
			       "scrape); %.2fx the payload; target 2x payload + 16 MB = %.1f MiB\n",
			       (double)r->rss_hwm / 1024, (double)r->rss_base / 1024,
			       (double)r->rss_hwm * 1024 / (double)ps.bytes, (2.0 * (double)ps.bytes + 16e6) / 1048576);

		if (have_promtool) {
			char input[4096];
			snprintf(input, sizeof(input), "%s/promtool-input-%s.txt", outdir, base_name(dirs[d]));
			if (write_concat(&ps, input) < 0)
				die("cannot write %s", input);
			struct prom_result pr = { 0 };
			promtool_series(promtool, input, seconds, &pr);
			r->have_prom = 1;
			r->prom = stats_of(&pr.wall);
			r->prom_cpu = stats_of(&pr.cpu);
			r->prom_empty = stats_of(&empty.wall);
			r->prom_status = pr.status;
			print_ms("promtool check metrics, wall", &pr.wall);
			print_ms("promtool check metrics, user+sys", &pr.cpu);
			print_ms("promtool on empty input, wall", &empty.wall);
			if (pr.status != 0)
				printf("  note: promtool exited %d (3: lint problems; 1: a parse error, figures invalid)\n",
				       pr.status);
			printf("  -> promtool / shim: wall %.2fx (net of promtool's start-up %.2fx), CPU %.2fx\n",
			       r->prom.med / r->pipe.med, (r->prom.med - r->prom_empty.med) / r->pipe.med,
			       r->prom_cpu.med / r->pipe_cpu.med);
			unlink(input);
			free(pr.wall.v);
			free(pr.cpu.v);
		}
		pipe_times_free(&t);
		free(sc.v);
		free(scc.v);
		free_set(&ps);
	}

	/* growth: every size in a fresh process (glibc's heap remembers the largest block it has freed,
	 * so a small payload measured after a big one would fault fewer pages), round after round so
	 * that a change of machine load hits every size alike; per size the median over rounds */
	double *growth = xcalloc(ndirs ? ndirs : 1, sizeof(double));
	double *growth_min = xcalloc(ndirs ? ndirs : 1, sizeof(double));
	if (ndirs > 1) {
		enum { ROUNDS = 9 };
		struct series *per = xcalloc(ndirs, sizeof(*per));
		char secs[32];
		snprintf(secs, sizeof(secs), "%g", seconds / 6);
		for (int round = 0; round < ROUNDS; round++)
			for (size_t d = 0; d < ndirs; d++) {
				double v;
				if (run_child_number(self, "--cpu", dirs[d], mapping, secs, &v) == 0)
					add(&per[d], v);
			}
		printf("\n== growth: %d rounds of one fresh process per size, median CPU time per process\n", ROUNDS);
		for (size_t d = 0; d < ndirs; d++) {
			struct stats st = stats_of(&per[d]);
			growth[d] = st.med;
			growth_min[d] = st.min;
			printf("  %-34s median %9.3f ms  min %9.3f  max %9.3f  (%.1f MB/s)\n", base_name(dirs[d]), st.med * 1e3,
			       st.min * 1e3, st.max * 1e3, (double)res[d].bytes / st.med / 1e6);
			free(per[d].v);
		}
		free(per);
	}

	struct e2e_result *er = xcalloc(ne2e ? ne2e : 1, sizeof(*er));
	for (size_t d = 0; d < ne2e; d++) {
		struct payload_set ps;
		load_set(&ps, e2e_dirs[d]);
		er[d].dir = e2e_dirs[d];
		er[d].bytes = ps.bytes;
		free_set(&ps);
		printf("\n== end to end: %s (%zu bytes)\n", e2e_dirs[d], er[d].bytes);
		e2e(shim, fake, mapping, e2e_dirs[d], outdir, seconds * 2, &er[d]);
		if (!er[d].ok)
			continue;
		print_ms("direct, 5 endpoints sequentially", &er[d].seq);
		print_ms("direct, 5 endpoints in parallel", &er[d].par);
		print_ms("through the shim (GET /metrics)", &er[d].shim);
		print_ms("shim - direct parallel, per round", &er[d].added);
		print_ms("shim - direct sequential, per round", &er[d].added_seq);
		struct stats s = stats_of(&er[d].shim), p = stats_of(&er[d].par), q = stats_of(&er[d].seq),
			     a = stats_of(&er[d].added), aq = stats_of(&er[d].added_seq);
		printf("  -> shim / direct parallel = %.2fx, shim / direct sequential = %.2fx; added %.3f ms over "
		       "parallel, %.3f ms over sequential (medians of per-round differences); shim answer %zu bytes; "
		       "shim VmHWM %.1f MiB\n",
		       s.med / p.med, s.med / q.med, a.med * 1e3, aq.med * 1e3, er[d].shim_bytes,
		       (double)er[d].shim_hwm_kb / 1024);
	}
	loadavg(load1, sizeof(load1));

	/* ---- summary (Markdown, pasted into docs/performance.md) ---- */
	printf("\n## Summary (load average at start: %s; at end: %s)\n\n", load0, load1);
	if (ndirs) {
		printf("| payload | input MB | samples | parse+map+write wall median [p10, p90] ms | CPU median ms | "
		       "MB/s (wall / CPU) | ns/sample (CPU) | parse / map / write CPU ms | scraper_run wall / CPU ms | "
		       "peak RSS MiB (target) | promtool wall median [p10, p90] ms | promtool CPU ms | promtool / shim "
		       "(wall / CPU) |\n");
		printf("|---|---:|---:|---|---:|---|---:|---|---|---|---|---:|---|\n");
		for (size_t d = 0; d < ndirs; d++) {
			struct size_result *r = &res[d];
			printf("| %s | %.2f | %zu | %.1f [%.1f, %.1f] | %.1f | %.0f / %.0f | %.0f | %.1f / %.1f / %.1f | %.1f / "
			       "%.1f | %.1f (< %.1f) ",
			       base_name(r->dir), (double)r->bytes / 1e6, r->samples, r->pipe.med * 1e3, r->pipe.p10 * 1e3,
			       r->pipe.p90 * 1e3, r->pipe_cpu.med * 1e3, (double)r->bytes / r->pipe.med / 1e6,
			       (double)r->bytes / r->pipe_cpu.med / 1e6, r->pipe_cpu.med * 1e9 / (double)r->samples,
			       r->parse.med * 1e3, r->eval.med * 1e3, r->write.med * 1e3, r->scrape.med * 1e3,
			       r->scrape_cpu.med * 1e3, (double)r->rss_hwm / 1024,
			       (2.0 * (double)r->bytes + 16e6) / 1048576);
			if (r->have_prom)
				printf("| %.0f [%.0f, %.0f] | %.0f | %.1fx / %.1fx |\n", r->prom.med * 1e3, r->prom.p10 * 1e3,
				       r->prom.p90 * 1e3, r->prom_cpu.med * 1e3, r->prom.med / r->pipe.med,
				       r->prom_cpu.med / r->pipe_cpu.med);
			else
				printf("| - | - | - |\n");
		}
		if (ndirs > 1) {
			printf("\nGrowth of parse+map+write CPU time from one size to the next (fresh process per size; in "
			       "brackets the same from the table above):\n\n");
			for (size_t d = 1; d < ndirs; d++) {
				double bx = (double)res[d].bytes / (double)res[d - 1].bytes, tx = growth[d] / growth[d - 1],
				       tm = growth_min[d] / growth_min[d - 1];
				printf("- %s -> %s: payload x%.2f, time x%.2f (x%.2f), time per byte x%.2f; at the same rate, "
				       "10x the payload costs x%.1f; from the fastest round of each size: time x%.2f, 10x costs x%.1f\n",
				       base_name(res[d - 1].dir), base_name(res[d].dir), bx, tx,
				       res[d].pipe_cpu.med / res[d - 1].pipe_cpu.med, tx / bx, pow(10, log(tx) / log(bx)), tm,
				       pow(10, log(tm) / log(bx)));
			}
		}
	}
	if (ne2e) {
		printf("\n| e2e payload | input MB | direct sequential ms | direct parallel ms | through shim ms | shim / "
		       "parallel | shim / sequential | added ms over parallel, median per round [p10, p90] | added ms "
		       "over sequential [p10, p90] | shim VmHWM MiB |\n");
		printf("|---|---:|---:|---:|---:|---:|---:|---|---|---:|\n");
		for (size_t d = 0; d < ne2e; d++) {
			if (!er[d].ok)
				continue;
			struct stats s = stats_of(&er[d].shim), p = stats_of(&er[d].par), q = stats_of(&er[d].seq),
				     a = stats_of(&er[d].added), aq = stats_of(&er[d].added_seq);
			printf("| %s | %.3f | %.3f | %.3f | %.3f | %.2fx | %.2fx | %.3f [%.3f, %.3f] | %.3f [%.3f, %.3f] | "
			       "%.1f |\n",
			       base_name(er[d].dir), (double)er[d].bytes / 1e6, q.med * 1e3, p.med * 1e3, s.med * 1e3,
			       s.med / p.med, s.med / q.med, a.med * 1e3, a.p10 * 1e3, a.p90 * 1e3, aq.med * 1e3,
			       aq.p10 * 1e3, aq.p90 * 1e3, (double)er[d].shim_hwm_kb / 1024);
		}
	}
	for (size_t d = 0; d < ne2e; d++) {
		free(er[d].shim.v);
		free(er[d].seq.v);
		free(er[d].par.v);
		free(er[d].added.v);
		free(er[d].added_seq.v);
	}
	free(er);
	free(res);
	free(growth);
	free(growth_min);
	free(empty.wall.v);
	free(empty.cpu.v);
	curl_global_cleanup();
	return 0;
}
