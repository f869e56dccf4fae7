/* nodeview.c: see nodeview.h. slurmrestd.c adds a node's samples in node order (its state, its
 * partitions, its reason), so the per-node families are joined by walking them side by side. */
#include "nodeview.h"
#include "expo.h"
#include "labels.h"
#include "mapping.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

const char *const nodeview_queue_names[NV_Q_COUNT] = {
#define NV_Q_NAME(s) [NV_Q_##s] = #s,
	NODEVIEW_QUEUE(NV_Q_NAME)
#undef NV_Q_NAME
};

/* The partition families of /metrics/partitions, by their field in struct nodeview_part. */
static const struct {
	const char *fam;
	size_t off;
} part_fams[] = {
	{ "slurm_partition_nodes", offsetof(struct nodeview_part, nodes) },
	{ "slurm_partition_cpus", offsetof(struct nodeview_part, cpus) },
	{ "slurm_partition_nodes_cpus_alloc", offsetof(struct nodeview_part, cpus_alloc) },
	{ "slurm_partition_nodes_cpus_idle", offsetof(struct nodeview_part, cpus_idle) },
	{ "slurm_partition_jobs_pending", offsetof(struct nodeview_part, jobs_pending) },
	{ "slurm_partition_jobs_running", offsetof(struct nodeview_part, jobs_running) },
};
#define NPART_FAMS (sizeof(part_fams) / sizeof(part_fams[0]))

static const char *const rest_fams[] = {
	"slurmrestd_node_state", "slurmrestd_node_reason_info", "slurmrestd_node_partition",
};

#define NODES_PREFIX "slurm_nodes_"  /* /metrics/nodes' counters: slurm_nodes_idle, _drained... */
#define PER_NODE "slurm_node_cpus"   /* one sample per node: the node count, which slurm_nodes (16 bits)
					 wraps at 65536 */
#define QUEUE_PREFIX "slurm_account_jobs_"

static int name_is_lit(const char *name, size_t len, const char *lit)
{
	return strlen(lit) == len && memcmp(name, lit, len) == 0;
}

static int has_prefix(const char *name, size_t len, const char *prefix)
{
	size_t n = strlen(prefix);
	return len > n && memcmp(name, prefix, n) == 0;
}

int nodeview_has_input(const char *name, size_t len)
{
	if (loadview_has_input(name, len))
		return 1;
	if (name_is_lit(name, len, "slurm_nodes") || has_prefix(name, len, NODES_PREFIX) || name_is_lit(name, len, PER_NODE))
		return 1;
	for (size_t i = 0; i < NPART_FAMS; i++)
		if (name_is_lit(name, len, part_fams[i].fam))
			return 1;
	for (size_t i = 0; i < sizeof(rest_fams) / sizeof(rest_fams[0]); i++)
		if (name_is_lit(name, len, rest_fams[i]))
			return 1;
	for (int q = 0; q < NV_Q_COUNT; q++) {
		char fam[64];
		snprintf(fam, sizeof(fam), QUEUE_PREFIX "%s", nodeview_queue_names[q]);
		if (name_is_lit(name, len, fam))
			return 1;
	}
	return 0;
}

const char *nodeview_source_name(enum nodeview_source s)
{
	return s == NV_SRC_SLURMRESTD ? "slurmrestd" : s == NV_SRC_GUESS ? "slurmctld-guess" : "none";
}

/* Copy s[0..n) into out (cap bytes, NUL-terminated), cut at a UTF-8 character boundary. */
static void copy_cut(char *out, size_t cap, const char *s, size_t n)
{
	if (n >= cap) {
		n = cap - 1;
		while (n && ((unsigned char)s[n] & 0xC0) == 0x80)
			n--; /* s[n] would start the cut-off part: never split a character */
	}
	memcpy(out, s, n);
	out[n] = '\0';
}

/* A label's value, or "" (and *n 0) when the sample has none. */
static const char *label(const struct expo_sample *s, const char *name, size_t *n)
{
	int k = labels_find(s->labels, s->nlabels, name, strlen(name));
	*n = k < 0 ? 0 : s->labels[k].vlen;
	return k < 0 ? "" : s->labels[k].value;
}

static int label_is_same(const struct expo_sample *a, const struct expo_sample *b, const char *name)
{
	size_t na, nb;
	const char *va = label(a, name, &na), *vb = label(b, name, &nb);
	return na == nb && memcmp(va, vb, na) == 0;
}

static const struct expo_family *fam(const struct expo *e, const char *name)
{
	const struct expo_family *f = e ? expo_find(e, name, strlen(name)) : NULL;
	return f && !f->duplicate ? f : NULL;
}

static const char *const ok_states[] = { "idle", "allocated", "mixed", "completing", "reserved", "blocked" };

int nodeview_state_is_ok(const char *state)
{
	for (size_t i = 0; i < sizeof(ok_states) / sizeof(ok_states[0]); i++)
		if (!strcmp(state, ok_states[i]))
			return 1;
	return 0;
}

/* sinfo -s's class of a state word: 'A', 'I' or 'O' (sinfo.c's _update_sinfo: allocated, mixed
 * or completing first, then drain or down, else idle). "draining" and "failing" are busy nodes. */
static char sinfo_class(const char *w)
{
	static const char *const busy[] = { "alloc", "mix", "comp", "draining", "failing" };
	static const char *const other[] = { "drain", "down", "inval" };
	for (size_t i = 0; i < sizeof(busy) / sizeof(busy[0]); i++)
		if (!strncmp(w, busy[i], strlen(busy[i])))
			return 'A';
	for (size_t i = 0; i < sizeof(other) / sizeof(other[0]); i++)
		if (!strncmp(w, other[i], strlen(other[i])))
			return 'O';
	return 'I';
}

static void count_state(struct nodeview *v, const char *name, size_t n, double count)
{
	for (size_t i = 0; i < v->nstates; i++)
		if (strlen(v->state[i].name) == n && !memcmp(v->state[i].name, name, n)) {
			v->state[i].n += count;
			return;
		}
	if (v->nstates == NODEVIEW_STATES_MAX || n >= sizeof(v->state[0].name)) {
		v->states_more += count;
		return;
	}
	copy_cut(v->state[v->nstates].name, sizeof(v->state[0].name), name, n);
	v->state[v->nstates++].n = count;
}

/* The entry of partition name (made on first sight; NULL past NODEVIEW_PARTS_MAX, counted in
 * parts_more when `count`: for the one family that names each partition once). */
static struct nodeview_part *part(struct nodeview *v, const char *name, size_t n, int count)
{
	for (size_t i = 0; i < v->nparts; i++)
		if (strlen(v->part[i].name) == n && !memcmp(v->part[i].name, name, n))
			return &v->part[i];
	if (v->nparts == NODEVIEW_PARTS_MAX || n >= sizeof(v->part[0].name)) {
		v->parts_more += count;
		return NULL;
	}
	struct nodeview_part *p = &v->part[v->nparts++];
	copy_cut(p->name, sizeof(p->name), name, n);
	p->nodes = p->cpus = p->cpus_alloc = p->cpus_idle = p->jobs_pending = p->jobs_running = NAN;
	p->a = p->i = p->o = NAN;
	return p;
}

static void add_class(double *a, double *i, double *o, char c)
{
	double *t = c == 'A' ? a : c == 'O' ? o : i;
	if (isnan(*a))
		*a = *i = *o = 0;
	*t += 1;
}

/* One not-OK node: into bad[] while there is room, with its reason when the walk finds it. */
static void add_bad(struct nodeview *v, const struct expo_sample *s, const char *state, size_t slen,
		    const struct expo_family *why, size_t *wi)
{
	if (v->nbad++ >= NODEVIEW_BAD_MAX)
		return;
	struct nodeview_node *b = &v->bad[v->nbad - 1];
	size_t n;
	const char *node = label(s, "node", &n);
	copy_cut(b->node, sizeof(b->node), node, n);
	copy_cut(b->state, sizeof(b->state), state, slen);
	/* the reasons are in node order too, one per node that has one: skip those of OK nodes */
	for (size_t k = *wi; why && k < why->n; k++) {
		if (!label_is_same(&why->samples[k], s, "node"))
			continue;
		const char *r = label(&why->samples[k], "reason", &n);
		copy_cut(b->reason, sizeof(b->reason), r, n);
		r = label(&why->samples[k], "user", &n);
		copy_cut(b->user, sizeof(b->user), r, n);
		b->since = why->samples[k].value;
		*wi = k + 1;
		break;
	}
}

/* slurmrestd's /nodes: per node its state word, sinfo -s class, partitions and reason. */
static void build_rest(struct nodeview *v, const struct expo *e)
{
	const struct expo_family *st = fam(e, "slurmrestd_node_state");
	const struct expo_family *why = fam(e, "slurmrestd_node_reason_info");
	const struct expo_family *pf = fam(e, "slurmrestd_node_partition");
	size_t wi = 0, pi = 0;
	v->source = NV_SRC_SLURMRESTD;
	v->nodes = v->a = v->i = v->o = 0;
	for (size_t k = 0; st && k < st->n; k++) {
		const struct expo_sample *s = &st->samples[k];
		size_t slen;
		const char *state = label(s, "state", &slen);
		char word[32];
		copy_cut(word, sizeof(word), state, slen);
		char c = sinfo_class(word);
		v->nodes++;
		add_class(&v->a, &v->i, &v->o, c);
		count_state(v, state, slen, 1);
		if (!nodeview_state_is_ok(word))
			add_bad(v, s, state, slen, why, &wi);
		/* this node's partitions: the next run of partition samples naming it */
		for (; pf && pi < pf->n && label_is_same(&pf->samples[pi], s, "node"); pi++) {
			size_t n;
			const char *name = label(&pf->samples[pi], "partition", &n);
			struct nodeview_part *p = part(v, name, n, 0);
			if (p)
				add_class(&p->a, &p->i, &p->o, c);
		}
	}
}

/* slurmctld's /metrics/nodes: the counters, flags beside base states (slurm_nodes_drained...); the
 * node count from the per-node series when there are (slurm_nodes is 16-bit: 4464 at 70,000 nodes). */
static void build_native(struct nodeview *v, const struct expo *e)
{
	const struct expo_family *total = fam(e, "slurm_nodes"), *per_node = fam(e, PER_NODE);
	v->source = NV_SRC_GUESS;
	if (per_node && per_node->n)
		v->nodes = (double)per_node->n;
	else if (total && total->n == 1)
		v->nodes = total->samples[0].value;
	for (size_t i = 0; i < e->nfams; i++) {
		const struct expo_family *f = &e->fams[i];
		if (f->duplicate || f->n != 1 || f->samples[0].nlabels || !has_prefix(f->name, f->nlen, NODES_PREFIX))
			continue;
		if (f->samples[0].value > 0)
			count_state(v, f->name + strlen(NODES_PREFIX), f->nlen - strlen(NODES_PREFIX), f->samples[0].value);
	}
}

static void build_partitions(struct nodeview *v, const struct expo *e)
{
	for (size_t i = 0; i < NPART_FAMS; i++) {
		const struct expo_family *f = fam(e, part_fams[i].fam);
		for (size_t k = 0; f && k < f->n; k++) {
			size_t n;
			const char *name = label(&f->samples[k], "partition", &n);
			struct nodeview_part *p = n ? part(v, name, n, i == 0) : NULL;
			if (p)
				*(double *)(void *)((char *)p + part_fams[i].off) = f->samples[k].value;
		}
	}
}

static void build_queue(struct nodeview *v, const struct expo *e)
{
	for (int q = 0; q < NV_Q_COUNT; q++) {
		char name[64];
		snprintf(name, sizeof(name), QUEUE_PREFIX "%s", nodeview_queue_names[q]);
		const struct expo_family *f = fam(e, name);
		for (size_t k = 0; f && k < f->n; k++)
			v->queue[q] += f->samples[k].value;
		v->has_queue |= f != NULL;
	}
}

void nodeview_build(struct nodeview *v, const struct expo *const ex[SRC_COUNT])
{
	memset(v, 0, sizeof(*v));
	v->nodes = v->a = v->i = v->o = NAN;
	if (fam(ex[SRC_REST_NODES], "slurmrestd_node_state"))
		build_rest(v, ex[SRC_REST_NODES]);
	else if (ex[SRC_NODES])
		build_native(v, ex[SRC_NODES]);
	if (ex[SRC_PARTITIONS])
		build_partitions(v, ex[SRC_PARTITIONS]);
	v->counts_may_wrap = v->nodes >= NODEVIEW_WRAP;
	for (size_t k = 0; k < v->nparts; k++)
		v->part[k].cpus_may_wrap = v->part[k].cpus >= NODEVIEW_WRAP;
	if (ex[SRC_UA])
		build_queue(v, ex[SRC_UA]);
}

int nodeview_table_has_guess(const struct mapping *m, unsigned flags)
{
	for (size_t i = 0; m && i < m->nrows; i++) {
		const struct row *r = &m->rows[i];
		const struct row_form *nat = row_native(r);
		if (!row_is_enabled(r, flags) || !nat->expr_src || !strstr(nat->expr_src, "\"status\""))
			continue;
		for (size_t k = 0; k + 1 < r->nforms; k++)
			if (r->forms[k].sources & (1u << SRC_REST_NODES))
				return 1;
	}
	return 0;
}
