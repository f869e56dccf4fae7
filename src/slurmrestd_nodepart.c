/* slurmrestd_nodepart.c: the node x partition view of slurmrestd's /nodes, a job's memory as
 * squeue prints it, and /licenses. A node listed in several partitions is counted in each (sinfo prints one line
 * per node and partition), so that rows can sum node values by partition and node state
 * (`sum by (partition, state) (slurmrestd_partition_node_cpus_alloc)`) without a join. */
#include <math.h>
#include <stddef.h>
#include <string.h>

#include "slurmrestd_int.h"

static void put(struct expo *e, const char *fam, const struct label l[3], double v)
{
	struct label c[3] = { l[0], l[1], l[2] };
	if (!isnan(v))
		expo_add(e, fam, strlen(fam), c, 3, v);
}

/* l: node, partition, state (sorted by name); alloc and idle as sinfo's %C splits the node's CPUs;
 * load as slurmrestd_node_cpu_load, NaN when it is no reading (no sample, as there) */
void rest_node_part_series(struct expo *e, const struct node_rec *r, const struct label l[3], double alloc, double idle,
			   double load)
{
	put(e, "slurmrestd_partition_node_state", l, 1);
	put(e, "slurmrestd_partition_node_cpus", l, r->cpus);
	put(e, "slurmrestd_partition_node_cpus_alloc", l, alloc);
	put(e, "slurmrestd_partition_node_cpus_idle", l, idle);
	put(e, "slurmrestd_partition_node_memory", l, r->real_memory);
	put(e, "slurmrestd_partition_node_memory_free", l, r->free_mem);
	put(e, "slurmrestd_partition_node_weight", l, r->weight);
	put(e, "slurmrestd_partition_node_cpu_load", l, load);
}

/* squeue's %m: the memory per node when the job asked for it, else the memory per CPU (printed as
 * is, not multiplied), else 0; in MB. */
double rest_job_memory(const struct job_rec *r)
{
	if (!isnan(r->mem_node) && !isinf(r->mem_node))
		return r->mem_node;
	if (!isnan(r->mem_cpu) && !isinf(r->mem_cpu))
		return r->mem_cpu;
	return 0;
}

/* ---- licenses: /slurm/{version}/licenses, what `scontrol show licenses` prints ---- */



const struct slot rest_lic_slots[] = {
	{ "LicenseName", S_STR, offsetof(struct lic_rec, name) },
	{ "Total", S_NUM, offsetof(struct lic_rec, total) }, { "Used", S_NUM, offsetof(struct lic_rec, used) },
	{ "Free", S_NUM, offsetof(struct lic_rec, free) }, { "Reserved", S_NUM, offsetof(struct lic_rec, reserved) },
	{ "LastConsumed", S_NUM, offsetof(struct lic_rec, last_consumed) },
	{ "LastDeficit", S_NUM, offsetof(struct lic_rec, last_deficit) },
	{ NULL, S_NUM, 0 },
};

/* One sample per license in each family, labelled license; a value slurmrestd does not give has
 * no sample. */
int rest_lic_end(struct rest *st)
{
	const struct lic_rec *r = &st->r.lic;
	if (!r->name.len)
		return rest_fail(st, 1, "a license without a name");
	const char *name = rest_sp(st, &r->name);
	if (rest_seen_before(st, name, r->name.len)) {
		char esc[48];
		return rest_fail(st, 1, "license '%s' listed twice", rest_esc(esc, sizeof(esc), name, r->name.len));
	}
	struct label l[1] = { { "license", name, 7, r->name.len } };
	const struct { const char *fam; double v; } v[] = {
		{ "slurmrestd_license_total", r->total }, { "slurmrestd_license_used", r->used },
		{ "slurmrestd_license_free", r->free }, { "slurmrestd_license_reserved", r->reserved },
		{ "slurmrestd_license_last_consumed", r->last_consumed },
		{ "slurmrestd_license_last_deficit", r->last_deficit },
	};
	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++)
		if (!isnan(v[i].v))
			expo_add(st->e, v[i].fam, strlen(v[i].fam), l, 1, v[i].v);
	return 1;
}
