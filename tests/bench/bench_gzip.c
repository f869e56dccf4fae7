/* bench_gzip.c: the compressed answers' figures (docs/performance.md, "Compressed answers"):
 *
 *   bench_gzip [--mapping FILE] [--seconds S] [--shim BIN --fake BIN] DIR...
 *
 * For every payload directory (metrics_<endpoint>.txt, as --replay-dir reads them):
 *   answer   the shim's answer, rendered by scraper_run() with --replay-dir semantics: its bytes and
 *            the CPU of one render (this thread's CPU clock, median);
 *   shim     compress_gzip() at COMPRESS_LEVEL, what the daemon does once per answer: bytes, CPU;
 *   methods  the candidates on the same answer, each a whole gzip member of the whole buffer:
 *            libdeflate's libdeflate_gzip_compress at levels 1 to 6 and 9 (a compressor allocated
 *            per answer, as compress.c does) and zlib's deflate (windowBits 31: gzip) at levels 1,
 *            6 (its default) and 9; each checked by zlib's inflate to give the answer back;
 *   serve    with --shim and --fake: fake_slurmctld serves DIR, the shim serves it with a long
 *            --slurmctld.min-interval, and the shim's process CPU (all its threads) is read around
 *            scrapes of one cached answer: identity, the first gzip scrape (the compression) and the
 *            gzip scrapes after it; and the bytes on the wire for each.
 * Then a Markdown summary. It prints figures and never fails because something is slow; it exits 1
 * only when it cannot measure (a payload that does not render, a child that does not start).
 * Ownership: main owns everything it allocates. */
#include "buf.h"
#include "compress.h"
#include "mapping.h"
#include "scrape.h"
#include "xmalloc.h"
#include "benchutil.h"

#include <arpa/inet.h>
#include <curl/curl.h>
#include <fcntl.h>
#include <libdeflate.h>
#include <math.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#define MAX_DIRS 8

/* The median and the minimum of n samples (sorted in place). */
struct mm {
	double med, min;
	size_t n;
};
static struct mm mm_of(double *v, size_t n)
{
	qsort(v, n, sizeof(double), dcmp);
	return (struct mm){ n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2, v[0], n };
}

#define MAX_RUNS 2000
/* Run body at least min_n times and for seconds, at most MAX_RUNS, each sample in v[*n]. */
#define TIMED(seconds, min_n, v, n, ...)                                                                     \
	do {                                                                                                  \
		double t0_ = mono_now();                                                                           \
		for (*(n) = 0; *(n) < MAX_RUNS && (*(n) < (min_n) || mono_now() - t0_ < (seconds)); (*(n))++) {  \
			double c0_ = cpu_now();                                                               \
			__VA_ARGS__;                                                                          \
			(v)[*(n)] = cpu_now() - c0_;                                                          \
		}                                                                                             \
	} while (0)

/* ---- the methods ---- */

enum lib { LIB_SHIM, LIB_DEFLATE, LIB_ZLIB };
struct method {
	enum lib lib;
	int level;
	const char *name;
};
static const struct method methods[] = {
	{ LIB_DEFLATE, 1, "libdeflate 1" }, { LIB_DEFLATE, 2, "libdeflate 2" }, { LIB_DEFLATE, 3, "libdeflate 3" },
	{ LIB_DEFLATE, 4, "libdeflate 4" }, { LIB_DEFLATE, 5, "libdeflate 5" }, { LIB_DEFLATE, 6, "libdeflate 6" },
	{ LIB_DEFLATE, 9, "libdeflate 9" }, { LIB_ZLIB, 1, "zlib 1" },           { LIB_ZLIB, 6, "zlib 6" },
	{ LIB_ZLIB, 9, "zlib 9" },
};
#define NMETHODS (sizeof(methods) / sizeof(methods[0]))

/* One gzip member of in into out (room for cap bytes); its length, or 0. */
static size_t gzip_with(const struct method *m, const void *in, size_t len, unsigned char *out, size_t cap)
{
	if (m->lib == LIB_DEFLATE) {
		struct libdeflate_compressor *c = libdeflate_alloc_compressor(m->level);
		size_t n = c ? libdeflate_gzip_compress(c, in, len, out, cap) : 0;
		libdeflate_free_compressor(c);
		return n;
	}
	z_stream z;
	memset(&z, 0, sizeof(z));
	if (deflateInit2(&z, m->level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
		return 0;
	z.next_in = (unsigned char *)in;
	z.avail_in = (uInt)len;
	z.next_out = out;
	z.avail_out = (uInt)cap;
	int rc = deflate(&z, Z_FINISH);
	size_t n = rc == Z_STREAM_END ? z.total_out : 0;
	deflateEnd(&z);
	return n;
}

/* zlib's inflate of a gzip member is exactly want (len bytes). */
static int gunzips_to(const unsigned char *gz, size_t glen, const char *want, size_t len)
{
	z_stream z;
	memset(&z, 0, sizeof(z));
	char *out = xmalloc(len + 1);
	if (inflateInit2(&z, 15 + 16) != Z_OK)
		die("inflateInit2");
	z.next_in = (unsigned char *)gz;
	z.avail_in = (uInt)glen;
	z.next_out = (unsigned char *)out;
	z.avail_out = (uInt)len + 1;
	int rc = inflate(&z, Z_FINISH);
	int same = rc == Z_STREAM_END && z.total_out == len && memcmp(out, want, len) == 0;
	inflateEnd(&z);
	free(out);
	return same;
}

/* ---- one answer ---- */

struct size_result {
	const char *dir;
	size_t plain;
	struct mm render;
	size_t shim_bytes;
	struct mm shim;
	size_t bytes[NMETHODS];
	struct mm cpu[NMETHODS];
	/* serving (0 when not measured) */
	int served;
	double id_cpu, gz_first_cpu, gz_cpu; /* per scrape, s */
	size_t id_wire, gz_wire;
};

/* The answer of dir (a new buffer) and the CPU of rendering it. */
static char *render_answer(const char *dir, const char *mapping, double seconds, size_t *len, struct mm *cpu)
{
	struct scraper_config cfg = { 0 };
	static double v[MAX_RUNS];
	size_t n;
	struct buf out;
	cfg.replay_dir = dir;
	cfg.flags = 0;
	cfg.upstream[UPSTREAM_SLURMCTLD].max_body = 268435456;
	struct scraper *sc = scraper_new(&cfg, load_mapping_or_die(mapping));
	buf_init(&out, 0);
	if (scraper_run(sc, 60, &out) != 200)
		die("%s does not render (no 200)", dir);
	TIMED(seconds, 5, v, &n, {
		struct buf o;
		buf_init(&o, 0);
		scraper_run(sc, 60, &o);
		buf_free(&o);
	});
	*cpu = mm_of(v, n);
	scraper_free(sc);
	return buf_steal(&out, len);
}

static void measure_methods(struct size_result *r, const char *plain, double seconds)
{
	static double v[MAX_RUNS];
	size_t n, cap = r->plain + r->plain / 2 + 1024;
	unsigned char *out = xmalloc(cap);
	unsigned char *gz = NULL;
	size_t glen = 0;
	TIMED(seconds, 5, v, &n, {
		free(gz);
		gz = NULL;
		if (compress_gzip(plain, r->plain, COMPRESS_LEVEL, &gz, &glen) < 0)
			die("%s: compress_gzip failed", r->dir);
	});
	r->shim = mm_of(v, n);
	r->shim_bytes = glen;
	if (!gunzips_to(gz, glen, plain, r->plain))
		die("%s: compress_gzip's form does not inflate to the answer", r->dir);
	free(gz);
	printf("  shim (level %d) %9zu bytes (%5.2f%%)  CPU median %7.2f ms  min %7.2f  (n=%zu)\n", COMPRESS_LEVEL,
	       r->shim_bytes, 100.0 * (double)r->shim_bytes / (double)r->plain, r->shim.med * 1e3, r->shim.min * 1e3,
	       r->shim.n);
	for (size_t k = 0; k < NMETHODS; k++) {
		size_t got = 0;
		TIMED(seconds / 2, 3, v, &n, got = gzip_with(&methods[k], plain, r->plain, out, cap));
		if (!got || !gunzips_to(out, got, plain, r->plain))
			die("%s: %s gives no valid gzip member", r->dir, methods[k].name);
		r->bytes[k] = got;
		r->cpu[k] = mm_of(v, n);
		printf("  %-14s %9zu bytes (%5.2f%%)  CPU median %7.2f ms  min %7.2f  (n=%zu)\n", methods[k].name, got,
		       100.0 * (double)got / (double)r->plain, r->cpu[k].med * 1e3, r->cpu[k].min * 1e3, r->cpu[k].n);
	}
	free(out);
}

/* ---- serving: the shim's process CPU per scrape of one cached answer ---- */

static size_t count_bytes(char *ptr, size_t size, size_t nmemb, void *ud)
{
	(void)ptr;
	*(size_t *)ud += size * nmemb;
	return size * nmemb;
}

/* GET url (with Accept-Encoding: gzip when gzip): the status, *bytes the body's bytes on the wire. */
static long get(const char *url, int gzip, size_t *bytes)
{
	CURL *h = curl_easy_init();
	struct curl_slist *hl = gzip ? curl_slist_append(NULL, "Accept-Encoding: gzip") : NULL;
	long code = 0;
	*bytes = 0;
	curl_easy_setopt(h, CURLOPT_URL, url);
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, count_bytes);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, bytes);
	curl_easy_setopt(h, CURLOPT_HTTPHEADER, hl);
	curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(h, CURLOPT_TIMEOUT, 60L);
	if (curl_easy_perform(h) == CURLE_OK)
		curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &code);
	curl_easy_cleanup(h);
	curl_slist_free_all(hl);
	return code;
}

static int wait_up(const char *url)
{
	size_t b;
	for (int i = 0; i < 400; i++) {
		if (get(url, 0, &b) > 0)
			return 0;
		usleep(25000);
	}
	return -1;
}

static double proc_cpu(pid_t pid)
{
	clockid_t cid;
	struct timespec ts;
	if (clock_getcpuclockid(pid, &cid) || clock_gettime(cid, &ts))
		die("cannot read the CPU clock of process %d", (int)pid);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* n scrapes: the shim's CPU per scrape; *wire the bytes of the last. */
static double scrapes(pid_t shim, const char *url, int gzip, int n, size_t *wire)
{
	double c0 = proc_cpu(shim);
	for (int i = 0; i < n; i++)
		if (get(url, gzip, wire) != 200)
			die("%s did not answer 200", url);
	return (proc_cpu(shim) - c0) / n;
}

static void serve(struct size_result *r, const char *shim, const char *fake, const char *mapping, int rounds)
{
	char fport[16], url[64], listen[64];
	unsigned fp = free_port(), sp = free_port();
	snprintf(fport, sizeof(fport), "%u", fp);
	snprintf(listen, sizeof(listen), "127.0.0.1:%u", sp);
	char *fargv[] = { (char *)fake, "--port", fport, "--dir", (char *)r->dir, NULL };
	pid_t f = spawn(fargv, 0);
	snprintf(url, sizeof(url), "http://127.0.0.1:%u/metrics/nodes", fp);
	if (wait_up(url) < 0)
		die("fake_slurmctld does not start");
	snprintf(url, sizeof(url), "http://127.0.0.1:%u", fp);
	char *sargv[] = { (char *)shim, "--slurmctld.url", url, "--web.listen-address", listen, "--mapping.file",
			  (char *)mapping, "--slurmctld.min-interval", "3600", "--slurmctld.jobs.min-interval", "3600", NULL };
	pid_t s = spawn(sargv, 0);
	snprintf(url, sizeof(url), "http://127.0.0.1:%u/metrics", sp);
	if (wait_up(url) < 0)
		die("the shim does not start");
	double id = 1e9, first = 1e9, gz = 1e9;
	for (int round = 0; round < rounds; round++) {
		size_t wire;
		if (round) { /* a new answer (its gzip form not made yet) */
			kill(s, SIGHUP);
			usleep(300000);
		}
		scrapes(s, url, 0, 1, &wire); /* renders it */
		first = fmin(first, scrapes(s, url, 1, 1, &r->gz_wire));
		id = fmin(id, scrapes(s, url, 0, 20, &r->id_wire));
		gz = fmin(gz, scrapes(s, url, 1, 20, &r->gz_wire));
	}
	r->served = 1;
	r->id_cpu = id;
	r->gz_first_cpu = first;
	r->gz_cpu = gz;
	printf("  serving one cached answer (least of %d rounds, shim process CPU per scrape): identity %.3f ms "
	       "(%zu bytes), gzip %.3f ms (%zu bytes), the first gzip scrape %.2f ms (it compresses)\n",
	       rounds, id * 1e3, r->id_wire, gz * 1e3, r->gz_wire, first * 1e3);
	stop(s);
	stop(f);
}

static void usage(void)
{
	fprintf(stderr, "usage: bench_gzip [--mapping FILE] [--seconds S] [--shim BIN --fake BIN] DIR...\n");
	exit(2);
}

static const char *base_name(const char *p)
{
	const char *s = strrchr(p, '/');
	return s && s[1] ? s + 1 : p;
}

static void summary(const struct size_result *res, size_t ndirs)
{
	printf("\n## Compressed answers: summary\n\n");
	printf("| payload | answer bytes | render CPU ms | gzip bytes (%% of answer), level %d | compression CPU ms | "
	       "render + compression ms | serving a cached answer, shim CPU per scrape: identity / gzip ms | "
	       "bytes sent per scrape: identity / gzip |\n|---|---:|---:|---:|---:|---:|---|---|\n", COMPRESS_LEVEL);
	for (size_t d = 0; d < ndirs; d++) {
		const struct size_result *r = &res[d];
		printf("| %s | %zu | %.1f | %zu (%.1f%%) | %.1f | %.1f | ", base_name(r->dir), r->plain, r->render.med * 1e3,
		       r->shim_bytes, 100.0 * (double)r->shim_bytes / (double)r->plain, r->shim.med * 1e3,
		       (r->render.med + r->shim.med) * 1e3);
		if (r->served)
			printf("%.2f / %.2f (first: %.1f) | %zu / %zu |\n", r->id_cpu * 1e3, r->gz_cpu * 1e3,
			       r->gz_first_cpu * 1e3, r->id_wire, r->gz_wire);
		else
			printf("- | - |\n");
	}
	printf("\n| method |");
	for (size_t d = 0; d < ndirs; d++)
		printf(" %s bytes (%%) | CPU ms median (min) |", base_name(res[d].dir));
	printf("\n|---|");
	for (size_t d = 0; d < ndirs; d++)
		printf("---:|---:|");
	printf("\n");
	for (size_t k = 0; k < NMETHODS; k++) {
		printf("| %s |", methods[k].name);
		for (size_t d = 0; d < ndirs; d++)
			printf(" %zu (%.1f%%) | %.1f (%.1f) |", res[d].bytes[k], 100.0 * (double)res[d].bytes[k] / (double)res[d].plain,
			       res[d].cpu[k].med * 1e3, res[d].cpu[k].min * 1e3);
		printf("\n");
	}
}

int main(int argc, char **argv)
{
	const char *mapping = "mappings/prometheus-slurm-exporter.json", *shim = NULL, *fake = NULL, *dirs[MAX_DIRS];
	size_t ndirs = 0;
	double seconds = 2;
	xmalloc_tune(); /* as the daemon does */
	for (int i = 1; i < argc; i++) {
		if (argv[i][0] != '-') {
			if (ndirs == MAX_DIRS)
				usage();
			dirs[ndirs++] = argv[i];
			continue;
		}
		if (i + 1 >= argc)
			usage();
		const char *a = argv[i], *v = argv[++i];
		if (!strcmp(a, "--mapping"))
			mapping = v;
		else if (!strcmp(a, "--seconds"))
			seconds = atof(v);
		else if (!strcmp(a, "--shim"))
			shim = v;
		else if (!strcmp(a, "--fake"))
			fake = v;
		else
			usage();
	}
	if (!ndirs || (!shim) != (!fake))
		usage();
	signal(SIGPIPE, SIG_IGN);
	setvbuf(stdout, NULL, _IOLBF, 0);
	curl_global_init(CURL_GLOBAL_DEFAULT);
	printf("compressed answers: %.1f s per measurement; libdeflate %s, zlib %s\n", seconds, LIBDEFLATE_VERSION_STRING,
	       zlibVersion());
	struct size_result *res = xcalloc(ndirs, sizeof(*res));
	for (size_t d = 0; d < ndirs; d++) {
		struct size_result *r = &res[d];
		r->dir = dirs[d];
		char *plain = render_answer(dirs[d], mapping, seconds, &r->plain, &r->render);
		printf("\n== %s: answer %zu bytes, render CPU median %.2f ms\n", dirs[d], r->plain, r->render.med * 1e3);
		measure_methods(r, plain, seconds);
		free(plain);
		if (shim)
			serve(r, shim, fake, mapping, 3);
	}
	summary(res, ndirs);
	free(res);
	curl_global_cleanup();
	return 0;
}
