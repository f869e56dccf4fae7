/* benchutil.h: helpers shared by the benchmarks (bench.c, bench_gzip.c, bench_rest.c; header-only,
 * each benchmark is one binary): the thread's CPU clock (wall time is monotime.h's mono_now),
 * dying with a message, sorting samples, the mapping loaded, and the processes the end-to-end
 * figures start (a free port, spawn, stop). */
#ifndef SHIM_BENCHUTIL_H
#define SHIM_BENCHUTIL_H

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "buf.h"
#include "mapping.h"
#include "monotime.h" /* mono_now: the wall clock of every figure */

/* CPU time of this thread: what one scrape costs on one core, whatever else runs on the machine. */
static inline double cpu_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The message, after the benchmark's name, on stderr; exit 1. */
static void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn, unused));
static void die(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fprintf(stderr, "%s: ", program_invocation_short_name);
	vfprintf(stderr, fmt, ap);
	fprintf(stderr, "\n");
	va_end(ap);
	exit(1);
}

/* qsort's order of doubles, ascending. */
static inline int dcmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* The mapping at path (a new table), or die with the loader's problems. */
static inline struct mapping *load_mapping_or_die(const char *path)
{
	struct buf problems;
	buf_init(&problems, 0);
	struct mapping *m = mapping_load(path, &problems);
	if (!m)
		die("invalid mapping %s: %.*s", path, (int)problems.len, problems.data ? problems.data : "");
	buf_free(&problems);
	return m;
}

/* A TCP port free on the loopback now, or 0. */
static inline unsigned free_port(void)
{
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t sl = sizeof(sa);
	unsigned port = 0;
	if (fd >= 0 && bind(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0 && getsockname(fd, (struct sockaddr *)&sa, &sl) == 0)
		port = ntohs(sa.sin_port);
	if (fd >= 0)
		close(fd);
	return port;
}

/* argv run in a child with its stdout (and, unless keep_stderr, its stderr) to /dev/null: its pid. */
static inline pid_t spawn(char *const argv[], int keep_stderr)
{
	pid_t pid = fork();
	if (pid == 0) {
		int nul = open("/dev/null", O_WRONLY);
		dup2(nul, 1);
		if (!keep_stderr)
			dup2(nul, 2);
		execv(argv[0], argv);
		_exit(127);
	}
	return pid;
}

/* SIGTERM to pid, reaped; SIGKILL after 3 s. pid <= 0: nothing. */
static inline void stop(pid_t pid)
{
	int st;
	if (pid <= 0)
		return;
	kill(pid, SIGTERM);
	for (int i = 0; i < 300; i++) {
		if (waitpid(pid, &st, WNOHANG) == pid)
			return;
		usleep(10000);
	}
	kill(pid, SIGKILL);
	waitpid(pid, &st, 0);
}

#endif
