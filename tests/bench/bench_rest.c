/* bench_rest.c: figures of the slurmrestd JSON converter (docs/performance.md, "slurmrestd JSON"):
 * reads an answer (tests/bench/gen_rest.py writes large ones) from a file in 16 KiB pieces, as libcurl
 * hands a transfer over, feeds every piece to rest_feed() and reports MB/s of the parse (file reads
 * excluded) and the process's peak RSS (VmHWM), which must not grow with the answer.
 *   make bench (builds build/bench/bench_rest, generates tests/bench/out/rest/jobs-100000.json and
 *   nodes-10000.json, runs it on both), or by hand: build/bench/bench_rest jobs|nodes|shares|diag FILE
 * It prints figures and never fails on speed. Ownership: main owns everything it allocates. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "slurmrestd.h"
#include "benchutil.h"

static long hwm_kb(void)
{
	char line[256];
	long kb = -1;
	FILE *f = fopen("/proc/self/status", "r");
	while (f && fgets(line, sizeof(line), f))
		if (strncmp(line, "VmHWM:", 6) == 0)
			kb = atol(line + 6);
	if (f)
		fclose(f);
	return kb;
}

int main(int argc, char **argv)
{
	static const char *const names[] = { "nodes", "shares", "jobs", "diag" };
	int doc = -1;
	for (int i = 0; argc == 3 && i < 4; i++)
		if (strcmp(argv[1], names[i]) == 0)
			doc = i;
	int fd = doc < 0 ? -1 : open(argv[2], O_RDONLY);
	if (fd < 0) {
		fprintf(stderr, "usage: %s jobs|nodes|shares|diag FILE\n", argv[0]);
		return 1;
	}
	static char piece[16384];
	struct expo e;
	expo_init(&e);
	void *st = rest_begin(&e, (enum rest_doc)doc);
	double parse = 0;
	size_t total = 0;
	ssize_t n;
	while ((n = read(fd, piece, sizeof(piece))) > 0) {
		double t0 = mono_now();
		rest_feed(st, &e, piece, (size_t)n);
		parse += mono_now() - t0;
		total += (size_t)n;
	}
	close(fd);
	double t0 = mono_now();
	size_t bad = rest_end(st, &e);
	parse += mono_now() - t0;
	printf("%s: %.1f MB in %.2f s: %.0f MB/s; %zu families, %zu samples, %zu malformed; peak RSS %.1f MB\n",
	       names[doc], (double)total / 1e6, parse, (double)total / 1e6 / parse, e.nfams, e.nsamples, bad,
	       (double)hwm_kb() / 1024);
	expo_free(&e);
	return 0;
}
