/* test_wrap.c: the shipped table on clusters past slurmctld's 16-bit counters (no silent
 * wrap: docs/mapping.md's "wraps_at"): a partition of 131,072 CPUs, an account running 70,000 CPUs, 70,000 nodes. slurmctld
 * 25.11.7 and 26.05.3 declare 73 of their families UINT16 (src/plugins/metrics/openmetrics/
 * openmetrics.c) and print them with "%hu", their sums kept in uint16_t fields
 * (src/slurmctld/statistics.h): a value of 70,000 is served as 4,464. Through the daemon's path
 * (replayed answers with the table's filter, render_run, the body read back strictly) each state
 * must give:
 *   - never exact from a family that wrapped: a row served from slurmctld whose form read one is
 *     approximate, with reason="counter_wrap" in slurm_exporter_shim_row_fidelity (or its value is
 *     the true one: it came from a source that does not wrap);
 *   - the true value where a source that does not wrap has it (per-node series: slurm_cpus_*, a
 *     partition holding every node, the status page's node count);
 *   - slurmrestd's form, exact and true, when slurmrestd's answers are given;
 *   - logged once per family over several scrapes, and listed on the status page.
 *
 * How the payloads are made: by gen_state() below, at test time, into a temporary directory (the
 * 70,000-node state is about 30 MB, too big to commit). Deterministic, no randomness: each state is
 * a list of nodes (CPUs, allocated CPUs, partitions, the account running them), from which every
 * family of a captured slurmctld answer (tests/fixtures/slurm-25.11/02-busy-mix: the same names,
 * HELP and TYPE lines, family order and label style) is computed as slurmctld computes it
 * (statistics.c: per-partition sums over the partition's nodes, per-account sums over running
 * jobs) and printed as slurmctld prints it: the UINT16 families modulo 65,536 (per-node CPU counts
 * are 16-bit in slurmctld's node record itself, so they never exceed it), the others as they are;
 * /metrics/scheduler is the capture's, verbatim. slurmrestd's /nodes and /jobs answers are written
 * from the same lists, with the fields src/slurmrestd.c reads. WRAP_KEEP=1 keeps the directories
 * (their paths are printed) to look at. */
#include "testutil.h"

#include <math.h>

#include "expo.h"
#include "mapping.h"
#include "nodeview.h"
#include "payload.h"
#include "render.h"
#include "scrape.h"
#include "source.h"
#include "status.h"

#define TEMPLATE "tests/fixtures/slurm-25.11/02-busy-mix"
#define U16 65536.0

/* ---- slurmctld's UINT16 families (openmetrics.c, 25.11.7 and 26.05.3: the same 73) ---- */

static int has_prefix(const char *s, const char *p)
{
	return !strncmp(s, p, strlen(p));
}

/* Per-node UINT16 families: never above 65,535, a node's CPUs being 16-bit in slurmctld. */
static int is_u16_per_node(const char *name)
{
	return !strcmp(name, "slurm_node_cpus") || !strcmp(name, "slurm_node_cpus_alloc") ||
	       !strcmp(name, "slurm_node_cpus_effective") || !strcmp(name, "slurm_node_cpus_idle");
}

/* The sums and counts slurmctld keeps in 16 bits, which wrap. */
static int is_u16_sum(const char *name)
{
	static const char *const exact[] = {
		"slurm_jobs_cpus_alloc", "slurm_jobs_nodes_alloc", "slurm_partition_jobs_cpus_alloc",
		"slurm_partition_jobs_max_job_nodes", "slurm_partition_jobs_max_job_nodes_nohold",
		"slurm_partition_jobs_min_job_nodes", "slurm_partition_jobs_min_job_nodes_nohold", "slurm_partition_nodes",
		"slurm_user_jobs_cpus_alloc", "slurm_user_jobs_nodes_alloc", "slurm_account_jobs_cpus_alloc",
		"slurm_account_jobs_nodes_alloc", "slurm_nodes",
	};
	for (size_t i = 0; i < sizeof(exact) / sizeof(exact[0]); i++)
		if (!strcmp(name, exact[i]))
			return 1;
	if (has_prefix(name, "slurm_nodes_"))
		return 1;
	return has_prefix(name, "slurm_partition_nodes_") && !has_prefix(name, "slurm_partition_nodes_mem_");
}

/* ---- a synthetic state ---- */

struct gnode {
	int cpus, alloc;          /* alloc: 0 idle, cpus allocated, else mixed */
	unsigned parts;           /* bit per partition */
	int acct;                 /* the account running its allocated CPUs */
};

struct gstate {
	const char *name;
	size_t n;
	struct gnode *node;
	const char *part[3];
	size_t nparts;
	const char *acct[2], *user[2]; /* account i's jobs are user i's */
	size_t job_nodes;         /* nodes per running job (consecutive allocated nodes of one account) */
	char dir[128];            /* where gen_state wrote it (not in tu_tmpdir: WRAP_KEEP keeps it) */
	char wrapped[64][64];     /* the UINT16 families that held a value of 65,536 or more */
	size_t nwrapped;
};

/* What the state holds per entity, as slurmctld sums it (unwrapped). */
struct totals {
	double nodes, a, m, i, cpus, alloc, jobs, jobcpus, jobnodes;
};

static void add_node(struct totals *t, const struct gnode *g)
{
	t->nodes++;
	t->a += g->alloc == g->cpus;
	t->i += g->alloc == 0;
	t->m += g->alloc > 0 && g->alloc < g->cpus;
	t->cpus += g->cpus;
	t->alloc += g->alloc;
}

/* The running jobs: runs of job_nodes consecutive allocated nodes of one account. */
struct gjob {
	size_t first, nnodes;
	double cpus;
};

static size_t jobs_of(const struct gstate *s, struct gjob **out)
{
	struct gjob *j = xcalloc(s->n + 1, sizeof(*j));
	size_t n = 0;
	for (size_t i = 0; i < s->n; i++) {
		if (!s->node[i].alloc)
			continue;
		if (n && j[n - 1].nnodes < s->job_nodes && j[n - 1].first + j[n - 1].nnodes == i &&
		    s->node[j[n - 1].first].acct == s->node[i].acct) {
			j[n - 1].nnodes++;
			j[n - 1].cpus += s->node[i].alloc;
			continue;
		}
		j[n++] = (struct gjob){ i, 1, s->node[i].alloc };
	}
	*out = j;
	return n;
}

static int first_part(unsigned parts)
{
	int p = 0;
	while (!(parts & (1u << p)))
		p++;
	return p;
}

/* Print value v of family name as slurmctld does: a UINT16 family modulo 65,536 (noted). */
static void put_value(struct gstate *s, struct buf *b, const char *name, double v)
{
	if (is_u16_sum(name) || is_u16_per_node(name)) {
		if (v >= U16) {
			size_t k = 0;
			while (k < s->nwrapped && strcmp(s->wrapped[k], name))
				k++;
			if (k == s->nwrapped && s->nwrapped < 64)
				snprintf(s->wrapped[s->nwrapped++], sizeof(s->wrapped[0]), "%s", name);
		}
		buf_printf(b, "%llu\n", (unsigned long long)v % 65536);
	} else {
		buf_printf(b, "%.0f\n", v);
	}
}

/* A family's value for one node, partition or account from its sums: the field after prefix. */
static double field_of(const char *f, const struct totals *t, const struct gnode *g)
{
	if (g) { /* slurm_node_<f> */
		double mem = g->cpus * 2000.0;
		return !strcmp(f, "cpus") || !strcmp(f, "cpus_effective") ? g->cpus : !strcmp(f, "cpus_alloc") ? g->alloc
		       : !strcmp(f, "cpus_idle") ? g->cpus - g->alloc : !strcmp(f, "memory_alloc_bytes") ? g->alloc * 1000.0
		       : !strcmp(f, "memory_free_bytes") ? mem - g->alloc * 1000.0
		       : !strcmp(f, "memory_bytes") || !strcmp(f, "memory_effective_bytes") ? mem : 0;
	}
	static const struct {
		const char *f;
		size_t off;
	} by[] = {
		{ "", offsetof(struct totals, nodes) }, { "alloc", offsetof(struct totals, a) },
		{ "mixed", offsetof(struct totals, m) }, { "idle", offsetof(struct totals, i) },
		{ "cpus_alloc", offsetof(struct totals, alloc) }, { "cpus_efctv", offsetof(struct totals, cpus) },
		{ "jobs", offsetof(struct totals, jobs) }, { "jobs_running", offsetof(struct totals, jobs) },
		{ "jobs_started", offsetof(struct totals, jobs) }, { "jobs_cpus_alloc", offsetof(struct totals, jobcpus) },
		{ "jobs_nodes_alloc", offsetof(struct totals, jobnodes) },
	};
	if (!strcmp(f, "cpus_idle"))
		return t->cpus - t->alloc;
	for (size_t k = 0; k < sizeof(by) / sizeof(by[0]); k++)
		if (!strcmp(f, by[k].f))
			return *(const double *)(const void *)((const char *)t + by[k].off);
	return 0;
}

/* One endpoint's answer: every family of the template's answer, in its order, with its HELP and
 * TYPE lines, and the samples of this state. */
static void gen_endpoint(struct gstate *s, enum source_id id, struct buf *b, const struct gjob *jobs, size_t njobs)
{
	char path[256];
	snprintf(path, sizeof(path), TEMPLATE "/%s", sources[id].file);
	char *t = tu_slurp(path, NULL);
	assert_non_null(t);
	struct totals all = { 0 }, part[3] = { { 0 } }, acct[2] = { { 0 } };
	for (size_t i = 0; i < s->n; i++) {
		add_node(&all, &s->node[i]);
		for (size_t p = 0; p < s->nparts; p++)
			if (s->node[i].parts & (1u << p))
				add_node(&part[p], &s->node[i]);
	}
	for (size_t k = 0; k < njobs; k++) {
		struct totals *w[] = { &all, &part[first_part(s->node[jobs[k].first].parts)], &acct[s->node[jobs[k].first].acct] };
		for (size_t q = 0; q < 3; q++) {
			w[q]->jobs++;
			w[q]->jobcpus += jobs[k].cpus;
			w[q]->jobnodes += (double)jobs[k].nnodes;
		}
	}
	for (char *line = t, *next; *line; line = next) {
		next = strchr(line, '\n');
		next = next ? next + 1 : line + strlen(line);
		char name[128];
		if (strncmp(line, "# HELP ", 7) || sscanf(line + 7, "%127s", name) != 1)
			continue;
		buf_append(b, line, (size_t)(next - line));
		buf_append(b, next, strcspn(next, "\n") + 1); /* its TYPE line */
		if (id == SRC_NODES && has_prefix(name, "slurm_node_")) {
			for (size_t i = 0; i < s->n; i++) {
				buf_printf(b, "%s{node=\"n%05zu\"} ", name, i + 1);
				put_value(s, b, name, field_of(name + 11, NULL, &s->node[i]));
			}
		} else if (id == SRC_NODES || id == SRC_JOBS) { /* slurm_nodes[_<state>], slurm_jobs[_<x>] */
			const char *f = id == SRC_JOBS ? name + 6 : name[11] ? name + 12 : "";
			buf_printf(b, "%s ", name);
			put_value(s, b, name, field_of(f, &all, NULL));
		} else if (id == SRC_PARTITIONS && !strcmp(name, "slurm_partitions")) {
			buf_printf(b, "%s %zu\n", name, s->nparts);
		} else if (id == SRC_PARTITIONS) {
			for (size_t p = 0; p < s->nparts; p++) {
				buf_printf(b, "%s{partition=\"%s\"} ", name, s->part[p]);
				put_value(s, b, name, !strcmp(name, "slurm_partition_cpus") ? part[p].cpus
						      : !strcmp(name, "slurm_partition_nodes") ? part[p].nodes
						      : field_of(name + (has_prefix(name, "slurm_partition_nodes_") ? 22 : 16),
								 &part[p], NULL));
			}
		} else if (id == SRC_UA) {
			int user = has_prefix(name, "slurm_user_");
			for (size_t a = 0; a < 2 && s->acct[a]; a++) {
				buf_printf(b, "%s{%s=\"%s\"} ", name, user ? "username" : "account", user ? s->user[a] : s->acct[a]);
				put_value(s, b, name, field_of(name + (user ? 11 : 14), &acct[a], NULL));
			}
		} else { /* the scheduler's samples, as captured */
			for (char *l = next + strcspn(next, "\n") + 1; *l && *l != '#'; l += strcspn(l, "\n") + 1)
				buf_append(b, l, strcspn(l, "\n") + 1);
		}
	}
	free(t);
}

static const char *const node_state[] = { "IDLE", "MIXED", "ALLOCATED" };

/* slurmrestd's /nodes and /jobs answers of the same state (the fields src/slurmrestd.c reads). */
static void gen_rest(const struct gstate *s, struct buf *nodes, struct buf *jobsb, const struct gjob *jobs, size_t njobs)
{
	buf_puts(nodes, "{\"nodes\": [");
	for (size_t i = 0; i < s->n; i++) {
		const struct gnode *g = &s->node[i];
		int st = g->alloc == 0 ? 0 : g->alloc < g->cpus ? 1 : 2;
		buf_printf(nodes, "%s{\"name\": \"n%05zu\", \"state\": [\"%s\"], \"cpus\": %d, \"alloc_cpus\": %d, "
				  "\"real_memory\": %d, \"alloc_memory\": %d, \"partitions\": [",
			   i ? ",\n" : "", i + 1, node_state[st], g->cpus, g->alloc, g->cpus * 2000, g->alloc * 1000);
		for (size_t p = 0, k = 0; p < s->nparts; p++)
			if (g->parts & (1u << p))
				buf_printf(nodes, "%s\"%s\"", k++ ? ", " : "", s->part[p]);
		buf_puts(nodes, "]}");
	}
	buf_puts(nodes, "], \"errors\": [], \"warnings\": []}\n");
	buf_puts(jobsb, "{\"jobs\": [");
	for (size_t k = 0; k < njobs; k++) {
		const struct gnode *g = &s->node[jobs[k].first];
		buf_printf(jobsb, "%s{\"job_id\": %zu, \"job_state\": [\"RUNNING\"], \"state_reason\": \"None\", \"user_name\": "
				  "\"%s\", \"user_id\": %d, \"account\": \"%s\", \"partition\": \"%s\", \"cpus\": {\"set\": true, "
				  "\"infinite\": false, \"number\": %.0f}}",
			   k ? ",\n" : "", k + 1000, s->user[g->acct], 2000 + g->acct, s->acct[g->acct],
			   s->part[first_part(g->parts)], jobs[k].cpus);
	}
	buf_puts(jobsb, "], \"errors\": [], \"warnings\": []}\n");
}

static void write_file(const char *dir, const char *file, const struct buf *b)
{
	char path[256];
	snprintf(path, sizeof(path), "%s/%s", dir, file);
	FILE *f = fopen(path, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(b->data, 1, b->len, f), b->len);
	fclose(f);
}

/* Write state s's answers into a new temporary directory (s->dir). */
static void gen_state(struct gstate *s)
{
	snprintf(s->dir, sizeof(s->dir), "%s/shimtest-wrap-XXXXXX", tu_tmpbase());
	assert_non_null(mkdtemp(s->dir));
	struct gjob *jobs;
	size_t njobs = jobs_of(s, &jobs);
	for (int id = 0; id < SRC_NATIVE_COUNT; id++) {
		struct buf b;
		buf_init(&b, 0);
		gen_endpoint(s, (enum source_id)id, &b, jobs, njobs);
		write_file(s->dir, sources[id].file, &b);
		buf_free(&b);
	}
	struct buf n, j;
	buf_init(&n, 0);
	buf_init(&j, 0);
	gen_rest(s, &n, &j, jobs, njobs);
	write_file(s->dir, sources[SRC_REST_NODES].file, &n);
	write_file(s->dir, sources[SRC_REST_JOBS].file, &j);
	buf_free(&n);
	buf_free(&j);
	free(jobs);
}

/* Remove state s's directory (kept, to look at, with WRAP_KEEP=1 in the environment). */
static void drop_state(struct gstate *s)
{
	char cmd[160];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", s->dir);
	if (getenv("WRAP_KEEP"))
		print_message("kept %s: %s\n", s->name, s->dir);
	else
		assert_int_equal(system(cmd), 0);
	free(s->node);
}

/* Nodes [from, to) with these CPUs, allocated CPUs, partitions and account. */
static void nodes(struct gstate *s, size_t from, size_t to, int cpus, int alloc, unsigned parts, int acct)
{
	for (size_t i = from; i < to; i++)
		s->node[i] = (struct gnode){ cpus, alloc, parts, acct };
}

/* A: partition "big" of 1,024 nodes of 128 CPUs (131,072 CPUs; 102,400 allocated: 700 nodes full,
 * 200 half), "small" of 16 more (1,024 of 2,048 allocated), "all" holding every node (133,120); the
 * jobs one per node, big's by account physics (user alice, 102,400 CPUs), small's by chem (bob). */
static void state_big_partition(struct gstate *s)
{
	*s = (struct gstate){ .name = "a partition of 131,072 CPUs", .n = 1040, .part = { "big", "small", "all" },
			      .nparts = 3, .acct = { "physics", "chem" }, .user = { "alice", "bob" }, .job_nodes = 1 };
	s->node = xcalloc(s->n, sizeof(*s->node));
	nodes(s, 0, 700, 128, 128, 1 | 4, 0);
	nodes(s, 700, 900, 128, 64, 1 | 4, 0);
	nodes(s, 900, 1024, 128, 0, 1 | 4, 0);
	nodes(s, 1024, 1032, 128, 128, 2 | 4, 1);
	nodes(s, 1032, 1040, 128, 0, 2 | 4, 1);
}

/* B: 700 nodes of 100 CPUs, every one allocated to account astro (user carol): 70,000 running CPUs,
 * one job per node; partitions p1 and p2 of 350 nodes (35,000 CPUs each, below the wrap). */
static void state_big_account(struct gstate *s)
{
	*s = (struct gstate){ .name = "an account running 70,000 CPUs", .n = 700, .part = { "p1", "p2" }, .nparts = 2,
			      .acct = { "astro" }, .user = { "carol" }, .job_nodes = 1 };
	s->node = xcalloc(s->n, sizeof(*s->node));
	nodes(s, 0, 350, 100, 100, 1, 0);
	nodes(s, 350, 700, 100, 100, 2, 0);
}

/* C: 70,000 nodes of 4 CPUs in one partition "all": 66,000 allocated (jobs of 16 nodes, account
 * bio, user dave: 264,000 CPUs), 4,000 idle. */
static void state_many_nodes(struct gstate *s)
{
	*s = (struct gstate){ .name = "70,000 nodes", .n = 70000, .part = { "all" }, .nparts = 1, .acct = { "bio" },
			      .user = { "dave" }, .job_nodes = 16 };
	s->node = xcalloc(s->n, sizeof(*s->node));
	nodes(s, 0, 66000, 4, 4, 1, 0);
	nodes(s, 66000, 70000, 4, 0, 1, 0);
}

/* ---- the render, and what the answer says ---- */

struct run {
	struct payload *p[SRC_COUNT];
	struct render_result res;
	char *body;
	struct expo served;
};

/* State s through the daemon's path; rest: slurmrestd's /nodes and /jobs answers too. */
static void render_state(const struct mapping *m, const struct gstate *s, int rest, struct run *r)
{
	struct buf out;
	size_t len;
	memset(r->p, 0, sizeof(r->p));
	for (int id = 0; id < SRC_COUNT; id++) {
		if (id >= SRC_NATIVE_COUNT && !(rest && (id == SRC_REST_NODES || id == SRC_REST_JOBS)))
			continue;
		r->p[id] = payload_replay(s->dir, (enum source_id)id, 1u << 30, 0, mapping_has_input, (void *)m);
		if (!r->p[id]->ok)
			fail_msg("%s: %s: %s", s->name, sources[id].name, r->p[id]->reason);
	}
	const struct render_in in = { .m = m, .flags = ROW_FLAG_REST_JOBS, .p = (const struct payload *const *)r->p };
	buf_init(&out, 0);
	assert_int_equal(render_run(&in, &out, &r->res), 200);
	r->body = buf_steal(&out, &len);
	expo_init(&r->served);
	assert_int_equal(expo_parse(&r->served, r->body, len, EXPO_STRICT), 0);
}

static void free_run(struct run *r)
{
	for (int id = 0; id < SRC_COUNT; id++)
		payload_unref(r->p[id]);
	render_result_free(&r->res);
	expo_free(&r->served);
	free(r->body);
}

/* What a row must give: its series (label "" for none) with the value, the fidelity and reason
 * its slurm_exporter_shim_row_fidelity sample names, and the upstream. */
struct want {
	const char *family, *label, *lvalue;
	double value;
	const char *fidelity, *reason, *upstream;
};

static void check_want(const struct mapping *m, const struct gstate *s, const struct run *r, const struct want *w)
{
	const struct expo_family *f = expo_find(&r->served, w->family, strlen(w->family));
	const struct expo_sample *hit = NULL;
	if (!f)
		fail_msg("%s: %s not served", s->name, w->family);
	for (size_t k = 0; k < f->n && !hit; k++) {
		const struct expo_sample *x = &f->samples[k];
		if (!*w->label ? !x->nlabels
			       : x->nlabels == 1 && x->labels[0].vlen == strlen(w->lvalue) &&
					 !memcmp(x->labels[0].value, w->lvalue, x->labels[0].vlen))
			hit = x;
	}
	if (!hit)
		fail_msg("%s: %s{%s=\"%s\"} not served", s->name, w->family, w->label, w->lvalue);
	if (hit->value != w->value)
		fail_msg("%s: %s{%s=\"%s\"} is %.0f, want %.0f", s->name, w->family, w->label, w->lvalue, hit->value, w->value);
	char line[300];
	snprintf(line, sizeof(line), "\nslurm_exporter_shim_row_fidelity{family=\"%s\",fidelity=\"%s\",%s%s%supstream=\"%s\"} 1\n",
		 w->family, w->fidelity, *w->reason ? "reason=\"" : "", w->reason, *w->reason ? "\"," : "", w->upstream);
	if (!strstr(r->body, line))
		fail_msg("%s: no%s", s->name, line);
	int i = mapping_row_index(m, w->family);
	assert_true(i >= 0);
	assert_int_equal(r->res.rows[i].fidelity, strcmp(w->fidelity, "exact") ? FID_APPROXIMATE : FID_EXACT);
}

static int wrapped(const struct gstate *s, const char *name)
{
	for (size_t k = 0; k < s->nwrapped; k++)
		if (!strcmp(s->wrapped[k], name))
			return 1;
	return 0;
}

/* No row is served as exact by a form that read a family that wrapped, unless the expectations
 * check its values (the true ones, from a source that does not wrap). slurm_nodes_err reads
 * slurm_nodes only to serve 0 (slurm_nodes * 0): the wrap cannot change it. */
static void check_never_exact_from_wrapped(const struct mapping *m, const struct gstate *s, const struct run *r,
					   const struct want *w, size_t nw)
{
	for (size_t i = 0; i < m->nrows; i++) {
		const struct render_row *o = &r->res.rows[i];
		const struct row_form *f = &m->rows[i].forms[o->form];
		if (o->status != ROW_OK || o->fidelity != FID_EXACT || !strcmp(m->rows[i].name, "slurm_nodes_err"))
			continue;
		for (size_t k = 0; k < f->ninputs; k++) {
			if (!wrapped(s, f->inputs[k].name))
				continue;
			size_t j = 0;
			while (j < nw && (strcmp(w[j].family, m->rows[i].name) || strcmp(w[j].fidelity, "exact")))
				j++;
			if (j == nw)
				fail_msg("%s: %s served exact from %s, which wrapped", s->name, m->rows[i].name, f->inputs[k].name);
		}
	}
}

/* One state: what the answer must say without slurmrestd and with it, and the status page's node
 * count. */
struct wcase {
	void (*make)(struct gstate *);
	const struct want *native;
	size_t nnative;
	const struct want *rest;
	size_t nrest;
	double page_nodes;
};

static void check_render(const struct mapping *m, const struct gstate *s, int rest, const struct want *w, size_t nw,
			 double page_nodes)
{
	struct run r;
	render_state(m, s, rest, &r);
	for (size_t k = 0; k < nw; k++)
		check_want(m, s, &r, &w[k]);
	check_never_exact_from_wrapped(m, s, &r, w, nw);
	if (!rest) { /* the status page's node count: counted from the per-node series */
		const struct expo *ex[SRC_COUNT] = { [SRC_NODES] = &r.p[SRC_NODES]->expo };
		struct nodeview *v = xcalloc(1, sizeof(*v));
		nodeview_build(v, ex);
		assert_true(v->nodes == page_nodes);
		free(v);
	}
	free_run(&r);
}

/* The state of case *state, generated, then rendered without slurmrestd and with it. */
static void test_state(void **state)
{
	const struct wcase *c = *state;
	struct mapping *m = tu_load_shipped();
	struct gstate s;
	c->make(&s);
	gen_state(&s);
	assert_true(s.nwrapped > 0); /* the state is past the wrap */
	check_render(m, &s, 0, c->native, c->nnative, c->page_nodes);
	check_render(m, &s, 1, c->rest, c->nrest, c->page_nodes);
	drop_state(&s);
	mapping_free(m);
}

#define N(w) (w), (sizeof(w) / sizeof((w)[0]))

/* A partition of 131,072 CPUs: its allocated CPUs wrap (102,400 is served as 36,864 by slurmctld). */
static const struct want partition_native[] = {
	{ "slurm_partition_cpus_allocated", "partition", "big", 102400 - 65536, "approximate", "counter_wrap", "slurmctld" },
	/* "all" holds every node: summed from the per-node series, the true value */
	{ "slurm_partition_cpus_allocated", "partition", "all", 103424, "approximate", "counter_wrap", "slurmctld" },
	{ "slurm_partition_cpus_allocated", "partition", "small", 1024, "approximate", "counter_wrap", "slurmctld" },
	{ "slurm_partition_cpus_idle", "partition", "all", 29696, "approximate", "counter_wrap", "slurmctld" },
	{ "slurm_partition_cpus_total", "partition", "big", 131072, "exact", "", "slurmctld" },
	{ "slurm_account_cpus_running", "account", "physics", 102400 - 65536, "approximate", "counter_wrap", "slurmctld" },
	{ "slurm_user_cpus_running", "user", "alice", 102400 - 65536, "approximate", "counter_wrap", "slurmctld" },
	{ "slurm_account_cpus_running", "account", "chem", 1024, "approximate", "counter_wrap", "slurmctld" },
	{ "slurm_cpus_alloc", "", "", 103424, "exact", "", "slurmctld" },
	{ "slurm_cpus_total", "", "", 133120, "exact", "", "slurmctld" },
	/* 1,040 nodes: the node counters do not wrap */
	{ "slurm_nodes_alloc", "", "", 708, "approximate", "", "slurmctld" },
};
static const struct want partition_rest[] = {
	{ "slurm_partition_cpus_allocated", "partition", "big", 102400, "exact", "", "slurmrestd" },
	{ "slurm_partition_cpus_allocated", "partition", "all", 103424, "exact", "", "slurmrestd" },
	{ "slurm_partition_cpus_idle", "partition", "big", 28672, "exact", "", "slurmrestd" },
	{ "slurm_account_cpus_running", "account", "physics", 102400, "exact", "", "slurmrestd" },
	{ "slurm_user_cpus_running", "user", "alice", 102400, "exact", "", "slurmrestd" },
	{ "slurm_nodes_alloc", "", "", 708, "exact", "", "slurmrestd" },
};

/* An account running 70,000 CPUs (served as 4,464 by slurmctld) on a cluster of 70,000 CPUs whose
 * partitions hold 35,000 each: the account and user rows are guarded, the partition rows exact. */
static const struct want account_native[] = {
	{ "slurm_account_cpus_running", "account", "astro", 70000 - 65536, "approximate", "counter_wrap", "slurmctld" },
	{ "slurm_user_cpus_running", "user", "carol", 70000 - 65536, "approximate", "counter_wrap", "slurmctld" },
	{ "slurm_account_jobs_running", "account", "astro", 700, "exact", "", "slurmctld" },
	{ "slurm_partition_cpus_allocated", "partition", "p1", 35000, "exact", "", "slurmctld" },
	{ "slurm_partition_cpus_allocated", "partition", "p2", 35000, "exact", "", "slurmctld" },
	{ "slurm_cpus_alloc", "", "", 70000, "exact", "", "slurmctld" },
};
static const struct want account_rest[] = {
	{ "slurm_account_cpus_running", "account", "astro", 70000, "exact", "", "slurmrestd" },
	{ "slurm_user_cpus_running", "user", "carol", 70000, "exact", "", "slurmrestd" },
	{ "slurm_partition_cpus_allocated", "partition", "p1", 35000, "exact", "", "slurmrestd" },
};

/* 70,000 nodes: slurm_nodes reads 4,464 and slurm_nodes_alloc 464 (66,000); the partition holding
 * every node is read from the per-node series, exact at 264,000 allocated CPUs. */
static const struct want nodes_native[] = {
	{ "slurm_nodes_alloc", "", "", 66000 - 65536, "approximate", "counter_wrap", "slurmctld" },
	{ "slurm_nodes_idle", "", "", 4000, "approximate", "counter_wrap", "slurmctld" },
	{ "slurm_nodes_err", "", "", 0, "exact", "", "slurmctld" },
	{ "slurm_partition_cpus_allocated", "partition", "all", 264000, "exact", "", "slurmctld" },
	{ "slurm_partition_cpus_idle", "partition", "all", 16000, "approximate", "", "slurmctld" },
	{ "slurm_cpus_total", "", "", 280000, "exact", "", "slurmctld" },
	{ "slurm_account_cpus_running", "account", "bio", 264000 - 4 * 65536, "approximate", "counter_wrap", "slurmctld" },
};
static const struct want nodes_rest[] = {
	{ "slurm_nodes_alloc", "", "", 66000, "exact", "", "slurmrestd" },
	{ "slurm_nodes_idle", "", "", 4000, "exact", "", "slurmrestd" },
	{ "slurm_partition_cpus_allocated", "partition", "all", 264000, "exact", "", "slurmrestd" },
	{ "slurm_account_cpus_running", "account", "bio", 264000, "exact", "", "slurmrestd" },
};

static const struct wcase partition_131072_cpus = { state_big_partition, N(partition_native), N(partition_rest), 1040 };
static const struct wcase account_70000_cpus = { state_big_account, N(account_native), N(account_rest), 700 };
static const struct wcase nodes_70000 = { state_many_nodes, N(nodes_native), N(nodes_rest), 70000 };

/* Every row whose native form reads a 16-bit sum of slurmctld carries a wraps_at (the table says
 * when the row stops being what it says), but slurm_nodes_err (0 whatever it reads). */
static void test_table_guards_every_u16_row(void **state)
{
	(void)state;
	struct mapping *m = tu_load_shipped();
	size_t guarded = 0;
	for (size_t i = 0; i < m->nrows; i++) {
		for (size_t k = 0; k < m->rows[i].nforms; k++) {
			const struct row_form *f = &m->rows[i].forms[k];
			int reads = 0;
			for (size_t j = 0; j < f->ninputs; j++)
				reads |= is_u16_sum(f->inputs[j].name);
			if (reads && !f->wrap && strcmp(m->rows[i].name, "slurm_nodes_err"))
				fail_msg("%s: form %zu reads a 16-bit sum of slurmctld without wraps_at", m->rows[i].name, k);
			if (f->wrap) {
				assert_true(f->wrap->limit == U16);
				guarded++;
			}
		}
	}
	assert_int_equal(guarded, 9 + 3 * 2 + 2); /* node buckets; partition CPUs (two forms each); account and user */
	mapping_free(m);
}

/* Through the scraper as the daemon runs it: two scrapes of state A log each guarded family once,
 * and the status page lists them with the bound's value. */
static void test_logged_once_and_on_status_page(void **state)
{
	(void)state;
	struct gstate s;
	state_big_partition(&s);
	gen_state(&s);
	char logf[256];
	snprintf(logf, sizeof(logf), "%s/wraplog-XXXXXX", tu_tmpdir());
	int fd = mkstemp(logf), saved = dup(2);
	assert_true(fd >= 0 && saved >= 0);
	struct scraper_config cfg = { .replay_dir = s.dir, .upstream[UPSTREAM_SLURMCTLD] = { .max_body = 1u << 30 } };
	struct scraper *sc = scraper_new(&cfg, tu_load_shipped());
	struct buf out;
	buf_init(&out, 0);
	dup2(fd, 2);
	for (int k = 0; k < 2; k++) {
		out.len = 0;
		assert_int_equal(scraper_run(sc, 5, &out), 200);
	}
	dup2(saved, 2);
	close(saved);
	close(fd);
	char *log = tu_slurp(logf, NULL);
	unlink(logf);
	assert_non_null(log);
	static const char *const fams[] = { "slurm_partition_cpus_allocated", "slurm_partition_cpus_idle",
					    "slurm_partition_cpus_other", "slurm_account_cpus_running", "slurm_user_cpus_running" };
	for (size_t i = 0; i < sizeof(fams) / sizeof(fams[0]); i++) {
		char want[200];
		snprintf(want, sizeof(want), "family %s served: approximate: ", fams[i]);
		const char *first = strstr(log, want);
		if (!first || strstr(first + 1, want))
			fail_msg("%s logged %s times:\n%s", fams[i], first ? "several" : "no", log);
	}
	assert_non_null(strstr(log, "slurm_partition_cpus != scalar(sum(slurm_node_cpus)) reached 65536, where the counters it reads wrap"));
	free(log);
	struct scraper_status *st = xcalloc(1, sizeof(*st));
	scraper_status(sc, st); /* the last answer's record */
	size_t wrapped = 0;
	for (size_t i = 0; i < st->res->nrows; i++)
		wrapped += (size_t)render_row_has_wrap(&st->res->rows[i]);
	assert_int_equal(wrapped, 5);
	struct status_page_info info = { .version = "0", .metrics_path = "/metrics", .mapping_file = NULL, .now = 1796121752, .native_passthrough = 0 };
	struct buf page;
	buf_init(&page, 0);
	status_page(&page, &info, st);
	buf_putc(&page, '\0');
	assert_non_null(strstr(page.data, "Served approximate: counters that may have wrapped"));
	assert_non_null(strstr(page.data, "slurm_partition_cpus_allocated</td><td class=\"err\">approximate: "
					  "slurm_partition_cpus != scalar(sum(slurm_node_cpus)) is 131072, at or over 65536"));
	assert_non_null(strstr(page.data, "slurm_account_cpus_running</td><td class=\"err\">approximate: "
					  "sum(slurm_node_cpus) is 133120, at or over 65536"));
	buf_free(&page);
	scraper_status_put(sc, st);
	free(st);
	buf_free(&out);
	scraper_free(sc);
	drop_state(&s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		{ "test_partition_131072_cpus", test_state, NULL, NULL, (void *)&partition_131072_cpus },
		{ "test_account_70000_cpus", test_state, NULL, NULL, (void *)&account_70000_cpus },
		{ "test_70000_nodes", test_state, NULL, NULL, (void *)&nodes_70000 },
		cmocka_unit_test(test_table_guards_every_u16_row),
		cmocka_unit_test(test_logged_once_and_on_status_page),
	};
	return cmocka_run_group_tests_name("wrap", tests, NULL, NULL);
}
