/* fuzz_probe.c: libFuzzer target for the --probe.targets-file loader (src/probe.c, over the web
 * config's YAML layer): the input is written to targets.yml in a private temporary directory (under
 * $TMPDIR, removed at exit) and loaded with probe_targets_load. The property, checked with abort()
 * (crashes, leaks and UB are the sanitizers'):
 *  - a table is returned exactly when no problem was listed;
 *  - every problem is one line of printable ASCII (the file's bytes escaped) that starts with the
 *    file name and ":LINE:COLUMN: " (both >= 1), except the three that have no position: no document
 *    ("PATH: no targets (...)"), out of memory, and the count past PROBE_MAX_ERRORS ("PATH: N more
 *    problems", the last line); at most PROBE_MAX_ERRORS + 1 lines;
 *  - a loaded table holds at least one target; every name matches [A-Za-z0-9_.-]{1,64} and appears
 *    once; every target has a slurmctld_url of at most 4095 bytes; every user name can go into a
 *    header as is (no control byte, at most CRED_USER_MAX bytes).
 * Ownership: the directory lives for the whole run; each table and problem list is freed before
 * returning. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "buf.h"
#include "cred.h"
#include "probe.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char dir[4096], path[4200];
static int ready;

static void cleanup(void)
{
	unlink(path);
	rmdir(dir);
}

static void setup(void)
{
	const char *tmp = getenv("TMPDIR");
	snprintf(dir, sizeof(dir), "%s/fuzz-probe-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		abort();
	}
	snprintf(path, sizeof(path), "%s/targets.yml", dir);
	atexit(cleanup);
	ready = 1;
}

/* A decimal number >= 1 at *p, then c: moves *p past c. */
static int number_then(const char **p, const char *end, char c)
{
	const char *s = *p;
	while (*p < end && **p >= '0' && **p <= '9')
		(*p)++;
	if (*p == s || *p >= end || **p != c || *s == '0')
		return 0;
	(*p)++;
	return 1;
}

/* One problem line [p, end) without its newline; last: it is the last line. */
static int line_ok(const char *p, const char *end, int last)
{
	static const char no_doc[] = " no targets (expected \"targets:\" with NAME: {slurmctld_url: URL} under it)";
	size_t plen = strlen(path);
	for (const char *q = p; q < end; q++)
		if ((unsigned char)*q < 0x20 || (unsigned char)*q > 0x7e)
			return 0;
	if ((size_t)(end - p) < plen + 1 || memcmp(p, path, plen) || p[plen] != ':')
		return 0;
	p += plen + 1;
	const char *q = p;
	if (number_then(&q, end, ':') && number_then(&q, end, ':') && q < end && *q == ' ')
		return 1;
	if (((size_t)(end - p) == strlen(no_doc) && !memcmp(p, no_doc, (size_t)(end - p))) ||
	    ((size_t)(end - p) == strlen(" out of memory") && !memcmp(p, " out of memory", (size_t)(end - p))))
		return 1;
	q = p + 1;
	return last && *p == ' ' && number_then(&q, end, ' ') && (size_t)(end - q) == strlen("more problems") &&
	       !memcmp(q, "more problems", (size_t)(end - q));
}

static void check_problems(const struct buf *b)
{
	size_t lines = 0;
	if (!b->len)
		return; /* no buffer */
	for (const char *p = b->data, *end = b->data + b->len; p < end;) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		if (!nl || !line_ok(p, nl, nl + 1 == end))
			abort();
		lines++;
		p = nl + 1;
	}
	if (lines > PROBE_MAX_ERRORS + 1)
		abort();
}

static int name_ok(const char *s)
{
	size_t n = strlen(s);
	return n >= 1 && n <= PROBE_NAME_MAX &&
	       strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-") == n;
}

static void check_table(const struct probe_targets *t)
{
	if (!t->n)
		abort();
	for (size_t i = 0; i < t->n; i++) {
		const struct probe_target *x = &t->t[i];
		if (!name_ok(x->name) || !x->slurmctld_url || !x->slurmctld_url[0] || strlen(x->slurmctld_url) > 4095)
			abort();
		if ((x->user && !cred_value_is_ok(x->user, strlen(x->user), CRED_USER_MAX)) ||
		    (x->rest_user && !cred_value_is_ok(x->rest_user, strlen(x->rest_user), CRED_USER_MAX)))
			abort();
		for (size_t j = 0; j < i; j++)
			if (!strcmp(t->t[i].name, t->t[j].name))
				abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct buf problems;
	FILE *f;

	if (!ready)
		setup();
	f = fopen(path, "wb");
	if (!f || fwrite(data, 1, size, f) != size)
		abort();
	fclose(f);
	buf_init(&problems, 0);
	struct probe_targets *t = probe_targets_load(path, &problems);
	if (!t != !!problems.len)
		abort();
	check_problems(&problems);
	if (t)
		check_table(t);
	probe_targets_free(t);
	buf_free(&problems);
	return 0;
}
