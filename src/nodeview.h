/* nodeview.h: what the status page says about the cluster's nodes (status.h), from the families of
 * one render's payloads: a pure, bounded function, so the page costs the same at 5 and 50,000 nodes.
 *
 * With slurmrestd's /nodes up (slurmrestd_node_state, _node_reason_info, _node_partition:
 * docs/mapping.md) the states are sinfo's, per node: counts per state word, the sinfo -s sums
 * (A/I/O/T: sinfo.c's _update_sinfo: allocated, mixed or completing is A, else drain or down is O,
 * else I), and the first NODEVIEW_BAD_MAX nodes that are not OK with their state, reason, who set it
 * and since when. Without it the per-node states of the legacy families are guessed from CPU counts
 * (source NV_SRC_GUESS): the view holds only slurmctld's node counters (slurm_nodes_<state> of
 * /metrics/nodes, flags counted beside the base state; 16-bit in slurmctld, they wrap at 65,536) and
 * the number of nodes, counted from the per-node slurm_node_cpus (slurm_nodes itself wraps). Either
 * way, per partition the totals of /metrics/partitions and the queue totals of
 * /metrics/jobs-users-accts (summed over accounts). */
#ifndef SHIM_NODEVIEW_H
#define SHIM_NODEVIEW_H

#include <stddef.h>

#include "loadview.h"
#include "source.h"

struct expo;

#define NODEVIEW_STATES_MAX 32   /* state words (or native counters) listed; more are summed */
#define NODEVIEW_BAD_MAX 50      /* not-OK nodes listed; nbad counts them all */
#define NODEVIEW_PARTS_MAX 64    /* partitions listed; parts_more counts the others */

enum nodeview_source {
	NV_SRC_NONE,       /* no node source was usable */
	NV_SRC_SLURMRESTD, /* per node, from slurmrestd's /nodes */
	NV_SRC_GUESS,      /* slurmctld only: the legacy per-node status labels are guessed */
};

/* The queue totals, summed over /metrics/jobs-users-accts' slurm_account_jobs_<state>. */
#define NODEVIEW_QUEUE(X) X(pending) X(running) X(suspended) X(completing) X(configuring)
enum {
#define NV_Q_ENUM(s) NV_Q_##s,
	NODEVIEW_QUEUE(NV_Q_ENUM)
#undef NV_Q_ENUM
	NV_Q_COUNT
};
extern const char *const nodeview_queue_names[NV_Q_COUNT];

struct nodeview_node {
	char node[64], state[32], reason[200], user[48]; /* raw bytes, cut at a UTF-8 boundary */
	double since;            /* reason_changed_at (unix time), 0: not known */
};

struct nodeview_part {
	char name[64];
	double nodes, cpus, cpus_alloc, cpus_idle, jobs_pending, jobs_running; /* NAN: not known */
	double a, i, o;          /* sinfo -s per partition (slurmrestd only; NAN otherwise) */
	int cpus_may_wrap;       /* cpus (32-bit) at NODEVIEW_WRAP or more: cpus_alloc and cpus_idle,
				    slurmctld's 16-bit sums, may have wrapped */
};

/* slurmctld's 16-bit counters wrap at this value (openmetrics.c); a total co-served at it or above
 * says the counters it bounds may have. */
#define NODEVIEW_WRAP 65536.0

struct nodeview {
	enum nodeview_source source;
	double nodes;            /* NAN: not known */
	int counts_may_wrap;     /* nodes at NODEVIEW_WRAP or more: slurmctld's node counters (native
				    source) and every partition's node count may have wrapped */
	double a, i, o;          /* sinfo -s over every node, each once (slurmrestd only) */
	size_t nstates;
	struct { char name[32]; double n; } state[NODEVIEW_STATES_MAX];
	double states_more;      /* nodes (or counter sum) in states past the list */
	size_t nbad;             /* not-OK nodes, all of them; the first NODEVIEW_BAD_MAX are in bad[] */
	struct nodeview_node bad[NODEVIEW_BAD_MAX];
	size_t nparts, parts_more; /* parts_more: partitions of /metrics/partitions past the list */
	struct nodeview_part part[NODEVIEW_PARTS_MAX];
	int has_queue;
	double queue[NV_Q_COUNT];
	struct loadview load;    /* the nodes whose load disagrees with Slurm (loadview.h): built by the
				    scraper beside nodeview_build, with its --status.load-margin */
};

/* Where the per-node states came from, as a self metric (scrape.c writes it): 1 for the source of
 * this scrape, 0 for the other; the HELP text names the fix. */
#define NODEVIEW_SOURCE_METRIC "slurm_exporter_shim_node_state_source"
#define NODEVIEW_FIX "slurmrestd: --slurmrestd.url (the package's /usr/share/slurm-exporter-shim/enable-slurmrestd sets it up)"
#define NODEVIEW_SOURCE_HELP "Where the per-node states (the legacy status labels) came from this scrape: " \
	"slurmrestd (sinfo's states), or slurmctld-guess (guessed from CPU counts: down, drained, failed and maint " \
	"nodes read idle, allocated or mixed). The fix for a guess: " NODEVIEW_FIX "."

struct mapping;
/* Does the table serve per-node states that are guessed without slurmrestd (an enabled row whose
 * preferred form reads slurmrestd's /nodes and whose native form writes a "status" label)? */
int nodeview_table_has_guess(const struct mapping *m, unsigned flags);

/* The families nodeview_build reads (the scraper keeps them in its payloads beside the table's). */
int nodeview_has_input(const char *name, size_t len);
/* ex: each source's families, NULL when it is not usable this render. */
void nodeview_build(struct nodeview *v, const struct expo *const ex[SRC_COUNT]);
/* Is a sinfo state word one of a node that needs no admin (idle, allocated, mixed, completing,
 * reserved, blocked, without a suffix)? */
int nodeview_state_is_ok(const char *state);
const char *nodeview_source_name(enum nodeview_source s); /* "slurmrestd", "slurmctld-guess", "none" */

#endif
