/* endpoint.c: see endpoint.h. */
#include "endpoint.h"

#include <string.h>

const struct endpoint_info endpoints[EP_COUNT] = {
	[EP_JOBS] = { "jobs", "/metrics/jobs", "metrics_jobs.txt", 0 },
	[EP_NODES] = { "nodes", "/metrics/nodes", "metrics_nodes.txt", 0 },
	[EP_PARTITIONS] = { "partitions", "/metrics/partitions", "metrics_partitions.txt", 0 },
	[EP_SCHEDULER] = { "scheduler", "/metrics/scheduler", "metrics_scheduler.txt", 0 },
	[EP_UA] = { "jobs-users-accts", "/metrics/jobs-users-accts", "metrics_jobs-users-accts.txt", 1 },
};

static int prefix(const char *s, const char *p)
{
	return strncmp(s, p, strlen(p)) == 0;
}

enum endpoint endpoint_for_metric(const char *name)
{
	if (prefix(name, "slurm_partition"))
		return EP_PARTITIONS;
	if (prefix(name, "slurm_node_") || prefix(name, "slurm_nodes"))
		return EP_NODES;
	if (prefix(name, "slurm_user_") || prefix(name, "slurm_account_"))
		return EP_UA;
	if (prefix(name, "slurm_jobs"))
		return EP_JOBS;
	return EP_SCHEDULER;
}
