/* testutil.h: helpers shared by the cmocka tests (header-only; each test is one binary).
 * Tests run from the repository root. */
#ifndef SHIM_TESTUTIL_H
#define SHIM_TESTUTIL_H

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <ftw.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#include "buf.h"
#include "mapping.h"
#include "xmalloc.h"

/* The slurmrestd captures under tests/fixtures/, each with the old exporter's CLI outputs and what it
 * printed: Slurm 25.11.7 at data_parser v0.0.44, then 26.05.3 at v0.0.45 (an initializer list). */
#define TU_REST_STATES \
	"slurm-25.11-rest/R1-idle-drained", "slurm-25.11-rest/R2-busy-mix-draining", \
	"slurm-25.11-rest/R4-downdrain-fail-maint-reserved", "slurm-25.11-rest/R6-completing-epilog", \
	"slurm-25.11-rest/R7-planned-idle-gpu-resumed", "slurm-25.11-rest/R9-idle-all-finished-future-resv", \
	"slurm-26.05-rest/R1-idle-drained", "slurm-26.05-rest/R2-busy-mix-draining", \
	"slurm-26.05-rest/R4-downdrain-fail-maint-reserved", "slurm-26.05-rest/R6-completing-epilog", \
	"slurm-26.05-rest/R9-idle-all-finished-future-resv", "slurm-26.05-rest/R10-planned-idle-gpu"

static inline char *tu_slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	struct buf b;
	char chunk[65536];
	size_t n;
	if (!f)
		return NULL;
	buf_init(&b, 0);
	while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0)
		buf_append(&b, chunk, n);
	fclose(f);
	return buf_steal(&b, len);
}

/* The mapping table at path, loaded; the test fails with the loader's problems when it does not load. */
static inline struct mapping *tu_load(const char *path)
{
	struct buf b;
	buf_init(&b, 0);
	struct mapping *m = mapping_load(path, &b);
	if (!m)
		fail_msg("%s: %.*s", path, (int)b.len, b.data);
	buf_free(&b);
	return m;
}

/* The shipped mapping table (mappings/prometheus-slurm-exporter.json), loaded. */
static inline struct mapping *tu_load_shipped(void)
{
	return tu_load("mappings/prometheus-slurm-exporter.json");
}

static inline void tu_write(const char *path, const char *text)
{
	FILE *f = fopen(path, "wb");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

/* --- the test's own directory -------------------------------------------------------------------
 * Every file a test writes goes in one directory of its own, made by mkdtemp on first use as
 * $TMPDIR/shimtest-XXXXXX (/tmp when TMPDIR is unset, relative or over 64 bytes, so that a Unix
 * socket's path in it stays under 108 bytes) and removed with all it holds when the test exits (by
 * the process that made it, never a forked child). With SHIM_TEST_KEEP_TMP set it is kept and named
 * on stderr (the fakes' and shims' logs are in it). Two runs at once (CI and a fresh root, the ASan
 * and the valgrind builds) never share a path. */
#define TU_TMP_NAMES 64
struct tu_tmp_state {
	char dir[128];
	pid_t owner;
	char *names[TU_TMP_NAMES];
};

static inline struct tu_tmp_state *tu_tmp_state(void)
{
	static struct tu_tmp_state st;
	return &st;
}

static inline int tu_tmp_remove(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	if (flag == FTW_DP)
		rmdir(path);
	else
		unlink(path);
	return 0;
}

static inline void tu_tmp_cleanup(void)
{
	struct tu_tmp_state *t = tu_tmp_state();
	if (!t->dir[0] || getpid() != t->owner)
		return;
	if (getenv("SHIM_TEST_KEEP_TMP"))
		fprintf(stderr, "SHIM_TEST_KEEP_TMP: kept %s\n", t->dir);
	else
		nftw(t->dir, tu_tmp_remove, 16, FTW_DEPTH | FTW_PHYS);
	for (size_t i = 0; i < TU_TMP_NAMES; i++) {
		free(t->names[i]);
		t->names[i] = NULL;
	}
}

/* Where temporary directories go: $TMPDIR, or /tmp when it is unset, relative or over 64 bytes. */
static inline const char *tu_tmpbase(void)
{
	const char *base = getenv("TMPDIR");
	return base && base[0] == '/' && strlen(base) <= 64 ? base : "/tmp";
}

/* The test's own directory (made on the first call). */
static inline const char *tu_tmpdir(void)
{
	struct tu_tmp_state *t = tu_tmp_state();
	if (!t->dir[0]) {
		snprintf(t->dir, sizeof(t->dir), "%s/shimtest-XXXXXX", tu_tmpbase());
		if (!mkdtemp(t->dir)) {
			fprintf(stderr, "mkdtemp %s: %s\n", t->dir, strerror(errno));
			exit(1);
		}
		t->owner = getpid();
		atexit(tu_tmp_cleanup);
	}
	return t->dir;
}

/* The path of name in the test's own directory: the same pointer for the same name, valid until the
 * test exits (at most TU_TMP_NAMES names). */
static inline const char *tu_tmp(const char *name)
{
	struct tu_tmp_state *t = tu_tmp_state();
	size_t dl = strlen(tu_tmpdir()), i;
	for (i = 0; i < TU_TMP_NAMES && t->names[i]; i++)
		if (strcmp(t->names[i] + dl + 1, name) == 0)
			return t->names[i];
	if (i == TU_TMP_NAMES) {
		fprintf(stderr, "tu_tmp: more than %d names\n", TU_TMP_NAMES);
		exit(1);
	}
	size_t n = dl + 1 + strlen(name) + 1;
	t->names[i] = xmalloc(n);
	snprintf(t->names[i], n, "%s/%s", t->dir, name);
	return t->names[i];
}

/* s with every occurrence of the test's own directory written "TMP" (in place), so that an expected
 * message can name a file there: "TMP/probe.yml:3:1: ...". */
static inline char *tu_untmp(char *s)
{
	const char *dir = tu_tmpdir();
	size_t dl = strlen(dir);
	char *p;
	while (s && (p = strstr(s, dir))) {
		memcpy(p, "TMP", 3);
		memmove(p + 3, p + dl, strlen(p + dl) + 1);
	}
	return s;
}

static inline int tu_is_dir(const char *p)
{
	struct stat st;
	return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

static inline void tu_sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
	nanosleep(&ts, NULL);
}

/* Run argv with stdout captured (stdin from `in` if not NULL). Returns the exit status, or -1. */
static inline int tu_run(char *const argv[], const char *in, char **out, size_t *outlen, char **err)
{
	char ofile[192], efile[192], ifile[192];
	snprintf(ofile, sizeof(ofile), "%s/out-XXXXXX", tu_tmpdir());
	snprintf(efile, sizeof(efile), "%s/err-XXXXXX", tu_tmpdir());
	snprintf(ifile, sizeof(ifile), "%s/in-XXXXXX", tu_tmpdir());
	int of = mkstemp(ofile), ef = mkstemp(efile), inf = -1;
	if (in) {
		inf = mkstemp(ifile);
		if (write(inf, in, strlen(in)) < 0)
			return -1;
		lseek(inf, 0, SEEK_SET);
	}
	pid_t pid = fork();
	if (pid == 0) {
		dup2(of, 1);
		dup2(ef, 2);
		if (inf >= 0)
			dup2(inf, 0);
		else
			close(0);
		execv(argv[0], argv);
		_exit(127);
	}
	int st = -1;
	waitpid(pid, &st, 0);
	close(of);
	close(ef);
	if (inf >= 0) {
		close(inf);
		unlink(ifile);
	}
	if (out)
		*out = tu_slurp(ofile, outlen);
	if (err)
		*err = tu_slurp(efile, NULL);
	unlink(ofile);
	unlink(efile);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* zlib's inflate of one gzip member (RFC 1952; zlib, not the shim's libdeflate): a new buffer of
 * *outlen bytes (NUL-terminated), or NULL unless in is exactly one whole valid member. */
static inline char *tu_gunzip(const void *in, size_t len, size_t *outlen)
{
	z_stream z;
	struct buf b;
	unsigned char chunk[65536];
	int rc;
	memset(&z, 0, sizeof(z));
	if (inflateInit2(&z, 16 + MAX_WBITS) != Z_OK)
		return NULL;
	buf_init(&b, 0);
	z.next_in = (unsigned char *)in;
	z.avail_in = (uInt)len;
	do {
		z.next_out = chunk;
		z.avail_out = sizeof(chunk);
		rc = inflate(&z, Z_NO_FLUSH);
		buf_append(&b, chunk, sizeof(chunk) - z.avail_out);
	} while (rc == Z_OK);
	int whole = rc == Z_STREAM_END && z.avail_in == 0;
	inflateEnd(&z);
	if (!whole) {
		buf_free(&b);
		return NULL;
	}
	return buf_steal(&b, outlen);
}

static inline const char *tu_shim_bin(void)
{
	const char *b = getenv("SHIM_BIN");
	return b ? b : "./slurm-exporter-shim";
}

/* Expressions nested n levels deep in one of TU_DEEP_KINDS ways, over the metric `leaf` (the tests
 * of EXPR_MAX_DEPTH): parentheses, unary minus, sum(), a left-associative chain a + a + ..., abs(),
 * clamp_min(), label_replace(), a right-nested a - (a - (...)), and a mix of aggregations,
 * functions, unary minus and parentheses. Returns a new string. */
#define TU_DEEP_KINDS 9
static inline char *tu_deep_expr(int kind, size_t n, const char *leaf)
{
	static const char *const open[] = { "(", "-", "sum(", "", "abs(", "clamp_min(", "label_replace(", "", "" };
	static const char *const close[] = { ")", "", ")", "", ")", ", 1)", ", \"a\", \"x\", \"\", \"\")", ")", "" };
	static const char *const mix_open[] = { "sum by (node) (", "-(", "abs(", "(", "max(" };
	struct buf b;
	buf_init(&b, 0);
	for (size_t i = 0; i < n; i++) {
		if (kind == 7)
			buf_printf(&b, "%s - (", leaf);
		else
			buf_puts(&b, kind == 8 ? mix_open[i % 5] : open[kind]);
	}
	buf_puts(&b, leaf);
	for (size_t i = 0; i < n; i++) {
		if (kind == 3)
			buf_printf(&b, " + %s", leaf);
		else
			buf_puts(&b, kind == 8 ? ")" : close[kind]);
	}
	return buf_steal(&b, NULL);
}

/* Run fn(arg) on a thread with a stack of `stack` bytes (libmicrohttpd's threads can have as little
 * as 256 KiB); returns what fn returned. */
static inline void *tu_run_on_stack(size_t stack, void *(*fn)(void *), void *arg)
{
	pthread_attr_t attr;
	pthread_t t;
	void *ret = NULL;
	assert_int_equal(pthread_attr_init(&attr), 0);
	assert_int_equal(pthread_attr_setstacksize(&attr, stack), 0);
	assert_int_equal(pthread_create(&t, &attr, fn, arg), 0);
	assert_int_equal(pthread_join(t, &ret), 0);
	pthread_attr_destroy(&attr);
	return ret;
}

#endif
