/* endpoint.h: the five slurmctld metrics endpoints and which one serves a metric name. */
#ifndef SHIM_ENDPOINT_H
#define SHIM_ENDPOINT_H

enum endpoint { EP_JOBS, EP_NODES, EP_PARTITIONS, EP_SCHEDULER, EP_UA, EP_COUNT };

struct endpoint_info {
	const char *name;     /* label value in self metrics, e.g. "jobs-users-accts" */
	const char *path;     /* "/metrics/jobs-users-accts" */
	const char *file;     /* replay file name, "metrics_jobs-users-accts.txt" */
	int empty_ok;         /* an empty 200 is normal (no jobs in memory) */
};

extern const struct endpoint_info endpoints[EP_COUNT];

/* By slurmctld's naming, which does not change between releases: slurm_partition* -> partitions,
 * slurm_node_* and slurm_nodes* -> nodes, slurm_user_* and slurm_account_* -> jobs-users-accts,
 * slurm_jobs* -> jobs, everything else -> scheduler. */
enum endpoint endpoint_for_metric(const char *name);

#endif
