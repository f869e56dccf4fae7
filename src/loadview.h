/* loadview.h: the status page's table of nodes whose load disagrees with Slurm (status.h), from the
 * families of one render's payloads: a pure, bounded function, like nodeview.h.
 *
 * From slurmrestd's /nodes (docs/mapping.md): slurmrestd_node_cpu_load (the load average slurmd
 * reported, cpu_load / 100), slurmrestd_node_cpus, _cpus_alloc, _memory_free and
 * slurmrestd_node_cpu_load_unknown (the nodes whose load is no reading: not responding, down,
 * powered down, a missing, NO_VAL, negative or absurd cpu_load, with why). A node is listed when its
 * excess, load - allocated CPUs, is over its margin: max(1, margin_pct % of its CPUs); that covers a
 * node with no allocation but a load. Listed largest excess first, the first LOADVIEW_MAX; the
 * nodes whose load is unknown are named apart, never as a load of 0. With slurmrestd's /jobs
 * (slurmrestd_node_job_user{node,user}: the users of the jobs running on each node) each listed node
 * gets its jobs' users. */
#ifndef SHIM_LOADVIEW_H
#define SHIM_LOADVIEW_H

#include <stddef.h>
#include <stdint.h>

#include "source.h"

struct buf;
struct expo;

#define LOADVIEW_MAX 20          /* nodes listed, and nodes of unknown load named; the counts are whole
				  (20 keeps the page under STATUS_PAGE_MAX beside the other lists at their bounds:
				  test_loadview.c checks this section at its worst) */
#define LOADVIEW_MARGIN_PCT 10   /* --status.load-margin's default */
#define LOADVIEW_STALE_S 60      /* a load from an answer older than this is named a guess */

struct loadview_node {
	char node[64], state[32];    /* raw bytes, cut at a UTF-8 boundary */
	char users[160];             /* its running jobs' users, comma-separated ("": none or not known) */
	double load, alloc, cpus, excess, margin;
	double free_mem;             /* MiB; NAN: not reported */
};

struct loadview_unknown {
	char node[64], state[32], why[96];
};

struct loadview {
	int read;                /* slurmrestd's /nodes was read with its load families */
	int has_users;           /* slurmrestd_node_job_user was read: users[] are known */
	int jobs_read;           /* slurmrestd's /jobs was read this render */
	double margin_pct;
	size_t nloaded;          /* nodes with a load */
	size_t nover;            /* nodes listed, all; the first LOADVIEW_MAX by excess in over[] */
	struct loadview_node over[LOADVIEW_MAX];
	size_t nunknown;         /* nodes of unknown load, all; the first LOADVIEW_MAX in unknown[] */
	struct loadview_unknown unknown[LOADVIEW_MAX];
};

/* The families loadview_build reads (kept in the payloads beside the table's). */
int loadview_has_input(const char *name, size_t len);
/* ex: each source's families, NULL when it is not usable this render; margin_pct: --status.load-margin. */
void loadview_build(struct loadview *v, const struct expo *const ex[SRC_COUNT], double margin_pct);
/* The page's section: the table, the nodes of unknown load, and what the figures are; age: seconds
 * since slurmrestd's /nodes answer finished (-1: none). Every string escaped (status_html.h). */
void loadview_page(struct buf *out, const struct loadview *v, double age);
/* A hash of the nodes of unknown load and why (0: none), so that the scraper logs them once per change. */
uint64_t loadview_unknown_hash(const struct loadview *v);
/* The nodes of unknown load, one log line (at most LOADVIEW_MAX named). */
void loadview_log_unknown(const struct loadview *v);

#endif
