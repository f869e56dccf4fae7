/* slurmrestd_nodepart.c: the node x partition view of slurmrestd's /nodes, a job's memory as
 * squeue prints it (the figure, and its text), a job's TRES string item by item, and /licenses. A node listed in several partitions is counted in each (sinfo prints one line
 * per node and partition), so that rows can sum node values by partition and node state
 * (`sum by (partition, state) (slurmrestd_partition_node_cpus_alloc)`) without a join. */
#include <inttypes.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xmalloc.h"

#include "slurmrestd_int.h"

static void put(struct expo *e, const char *fam, const struct label l[3], double v)
{
	struct label c[3] = { l[0], l[1], l[2] };
	if (!isnan(v))
		expo_add(e, fam, strlen(fam), c, 3, v);
}

/* l: node, partition, state (sorted by name); alloc and idle as sinfo's %C splits the node's CPUs
 * (the rest of its CPUs "other"); load as slurmrestd_node_cpu_load, NaN when it is no reading (no
 * sample, as there); gpus: the node's GPUs and those in use, as slurmrestd_node_gpus{,_used} */
void rest_node_part_series(struct expo *e, const struct node_rec *r, const struct label l[3], double alloc, double idle,
			   double load, const double gpus[2])
{
	put(e, "slurmrestd_partition_node_state", l, 1);
	put(e, "slurmrestd_partition_node_cpus", l, r->cpus);
	put(e, "slurmrestd_partition_node_cpus_alloc", l, alloc);
	put(e, "slurmrestd_partition_node_cpus_idle", l, idle);
	put(e, "slurmrestd_partition_node_cpus_other", l, r->cpus - alloc - idle);
	put(e, "slurmrestd_partition_node_memory", l, r->real_memory);
	put(e, "slurmrestd_partition_node_memory_alloc", l, r->alloc_memory);
	put(e, "slurmrestd_partition_node_memory_free", l, r->free_mem);
	put(e, "slurmrestd_partition_node_weight", l, r->weight);
	put(e, "slurmrestd_partition_node_cpu_load", l, load);
	put(e, "slurmrestd_partition_node_cpu_load_reported", l, rest_load_reported(r));
	put(e, "slurmrestd_partition_node_gpus", l, gpus[0]);
	put(e, "slurmrestd_partition_node_gpus_used", l, gpus[1]);
}

/* 1 per node and partition, labelled also active_features (the node's, sorted, joined by ','; no
 * label when it has none): sinfo's %b beside %R and %T */
void rest_node_features_series(struct expo *e, const struct label l[3], const char *features, size_t n)
{
	static const char fam[] = "slurmrestd_partition_node_active_features";
	struct label c[4] = { { "active_features", features, 15, (uint32_t)n }, l[0], l[1], l[2] };
	expo_add(e, fam, sizeof(fam) - 1, c, 4, 1);
}

double rest_load_reported(const struct node_rec *r)
{
	/* sinfo: "%.2f" of cpu_load / 100.0, "N/A" for NO_VAL; slurmrestd's cpu_load is a uint32_t */
	return r->cpu_load >= 0 && r->cpu_load < LOAD_NO_VAL ? r->cpu_load / 100 : NAN;
}

/* sinfo -N prints a node's reason once per partition it lists (none, when it lists none) */
void rest_node_reason_series(struct expo *e, const struct label l[3], const struct label why[3])
{
	static const char fam[] = "slurmrestd_partition_node_reason";
	struct label c[6] = { l[0], l[1], why[0], why[1], l[2], why[2] };
	struct label set[6];
	uint32_t k = 0;
	for (size_t i = 0; i < 6; i++)
		if (c[i].vlen)
			set[k++] = c[i];
	expo_add(e, fam, sizeof(fam) - 1, set, k, 1);
}

struct piece { const char *p; size_t n; };

static int piece_cmp(const void *a, const void *b)
{
	const struct piece *x = a, *y = b;
	int c = memcmp(x->p, y->p, x->n < y->n ? x->n : y->n);
	return c ? c : (x->n > y->n) - (x->n < y->n);
}

void rest_list_sorted(const char *s, size_t n, char *out)
{
	size_t k = 1, at = 0;
	for (size_t i = 0; i < n; i++)
		k += s[i] == ',';
	struct piece *v = xmalloc(k * sizeof(*v));
	k = 0;
	for (size_t i = 0, start = 0; i <= n; i++)
		if (i == n || s[i] == ',') {
			v[k++] = (struct piece){ s + start, i - start };
			start = i + 1;
		}
	qsort(v, k, sizeof(*v), piece_cmp);
	for (size_t i = 0; i < k; i++) {
		if (i)
			out[at++] = ',';
		memcpy(out + at, v[i].p, v[i].n);
		at += v[i].n;
	}
	free(v);
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

void rest_squeue_memory(double mb, double *num, char unit[2])
{
	static const char units[] = "\0KMGTP?"; /* Slurm's UNIT_NONE .. UNIT_UNKNOWN */
	char text[10];                           /* squeue's min_mem[10] */
	double v = (double)(float)mb;            /* squeue converts (float)pn_min_memory */
	int type = 2;                            /* UNIT_MEGA */
	unit[0] = unit[1] = '\0';
	*num = 0;
	if (!(v >= 1 && v < 18446744073709551616.0))
		return;                          /* "0" (the callers give 0 to 2^63 MB) */
	while (v >= 1024 && (uint64_t)v % 512 == 0) { /* exact, or a half (2.50G) */
		v /= 1024;
		type++;
	}
	if (type > 6)
		type = 6;
	uint64_t i = (uint64_t)v;
	if ((double)i == v)
		snprintf(text, sizeof(text), "%" PRIu64 "%c", i, units[type]);
	else
		snprintf(text, sizeof(text), "%.2f%c", v, units[type]);
	char *end;
	*num = strtod(text, &end);
	unit[0] = *end;
}

const char *rest_tres_each(const char *s, size_t n, void (*each)(void *ctx, const char *name, size_t nlen, double v),
			   void *ctx, const char **bad, size_t *badlen)
{
	for (size_t i = 0; i < n;) {
		size_t b = i, eq = n, e = i;
		for (; e < n && s[e] != ','; e++)
			if (s[e] == '=' && eq == n)
				eq = e;
		*bad = s + b;
		*badlen = e - b;
		i = e + 1;
		if (eq == n || eq == b || eq + 1 == e)
			return RTRES_MALFORMED;
		size_t k = eq + 1;
		uint64_t v = 0;               /* at most 2^53 before each digit: no overflow */
		for (; k < e && s[k] >= '0' && s[k] <= '9'; k++)
			if ((v = v * 10 + (uint64_t)(s[k] - '0')) > (UINT64_C(1) << 53))
				return RTRES_HUGE;
		if (k == eq + 1)
			return RTRES_MALFORMED;
		if (k == e) {
			each(ctx, s + b, eq - b, (double)v);
			continue;
		}
		if (s[k] == '.') {             /* a fraction: "1.50G" */
			size_t f = ++k;
			while (k < e && s[k] >= '0' && s[k] <= '9')
				k++;
			if (k == f)
				return RTRES_MALFORMED;
		}
		if (k < e && strchr("KMGTPE?", s[k]) && s[k])
			k++;                   /* a unit: skipped, not counted */
		if (k != e)
			return RTRES_MALFORMED;
	}
	return NULL;
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
