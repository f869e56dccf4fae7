/* slurmrestd_rec.c: see slurmrestd_int.h. The records of slurmrestd's documents into samples: a node's state,
 * CPUs, memory, GPUs and partitions; a share row's FairShare; a job into the aggregates by label set;
 * every number of diag's statistics. What is listed twice is refused, not summed or dropped. Calls go
 * one way: the walk (slurmrestd.c) calls this file, this file calls slurmrestd_nodepart.c, and all of
 * them slurmrestd_doc.c (the document's first problem, what was listed), which calls none of them. */
#include "slurmrestd_int.h"
#include "clitime.h"
#include "slurmrestd_hostlist.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- strings of the record ---- */

static const char *sp(const struct rest *st, const struct str *s)
{
	return st->scratch + s->off;
}

int rest_add_part(struct rest *st, const unsigned char *p, size_t n)
{
	struct node_rec *r = &st->r.node;
	if (r->nparts >= REST_MAX_PARTS)
		return rest_fail(st, 1, "a node in more than %d partitions", REST_MAX_PARTS);
	st->parts = xgrow(st->parts, &st->partcap, r->nparts + 1, sizeof(*st->parts));
	return rest_keep_str(st, &st->parts[r->nparts++], p, n);
}

void rest_record_reset(struct rest *st)
{
	st->slen = 0;
	st->ntres = 0;
	memset(&st->r, 0, sizeof(st->r));
	struct node_rec *nr = &st->r.node;
	struct job_rec *jr = &st->r.job;
	struct share_rec *sr = &st->r.share;
	if (st->doc == REST_NODES)
		nr->cpus = nr->alloc_cpus = nr->real_memory = nr->alloc_memory = nr->free_mem = nr->reason_at =
			nr->cpu_load = nr->weight = NAN;
	else if (st->doc == REST_JOBS)
		jr->cpus = jr->uid = jr->id = jr->mem_node = jr->mem_cpu = NAN;
	else if (st->doc == REST_SHARES)
		sr->factor = sr->level = sr->shares = sr->shares_norm = sr->usage = sr->usage_norm = NAN;
	else if (st->doc == REST_ASSOCIATIONS)
		st->r.assoc.grp_jobs = st->r.assoc.grp_submit = NAN;
	else if (st->doc == REST_RESERVATIONS)
		st->r.resv.start = st->r.resv.end = st->r.resv.node_count = st->r.resv.core_count = st->r.resv.purge = NAN;
	else if (st->doc == REST_LICENSES)
		st->r.lic.total = st->r.lic.used = st->r.lic.free = st->r.lic.reserved = st->r.lic.last_consumed =
			st->r.lic.last_deficit = NAN;
}

/* One sample; labels with an empty value are left out, as Prometheus does. */
static void add(struct rest *st, const char *fam, const struct label *l, uint32_t n, double v)
{
	struct label set[AGG_LABELS_MAX];
	uint32_t k = 0;
	for (uint32_t i = 0; i < n && k < AGG_LABELS_MAX; i++)
		if (l[i].vlen)
			set[k++] = l[i];
	expo_add(st->e, fam, strlen(fam), set, k, v);
}

/* ---- what was listed: node names, share rows, job ids, diag paths ---- */

/* The entry of label set l (n labels, sorted by name) in the document's aggregate, made on first
 * sight with copies of the values. */
static struct agg *agg_slot(struct rest *st, const struct label *l, uint32_t n)
{
	uint32_t h = labels_hash(l, n);
	struct hmap_iter it = hmap_iter(&st->aidx, h);
	for (size_t i; (i = hmap_next(&it)) != HMAP_NONE;)
		if (labels_is_equal(st->aggs[i].l, st->aggs[i].nl, l, n))
			return &st->aggs[i];
	st->aggs = xgrow(st->aggs, &st->acap, st->nagg + 1, sizeof(*st->aggs));
	struct agg *a = &st->aggs[st->nagg];
	memset(a, 0, sizeof(*a));
	for (uint32_t k = 0; k < n; k++) {
		a->l[k] = l[k];
		a->l[k].value = l[k].vlen ? arena_strndup(&st->arena, l[k].value, l[k].vlen) : "";
	}
	a->nl = n;
	a->hash = h;
	hmap_put(&st->aidx, h, st->nagg++);
	return a;
}

void rest_add_aggregates(struct rest *st)
{
	for (int f = 0; f < 5 && docs[st->doc].agg_fams[f]; f++)
		for (size_t i = 0; i < st->nagg; i++)
			if (!st->aggs[i].fam)
				add(st, docs[st->doc].agg_fams[f], st->aggs[i].l, st->aggs[i].nl, st->aggs[i].v[f]);
	for (size_t i = 0; i < st->nagg; i++)
		if (st->aggs[i].fam)
			add(st, st->aggs[i].fam, st->aggs[i].l, st->aggs[i].nl, st->aggs[i].v[0]);
}

/* ---- nodes ---- */

/* GPUs in a GRES string: "gpu:2", "gpu:a100:2(S:0-1),gpu:v100:1", "gpu:1(IDX:0,3)". */
static double gres_gpus(const char *s, size_t n)
{
	double sum = 0;
	size_t i = 0;
	while (i < n) {
		size_t j = i, paren = 0, item_end = n;
		for (; j < n; j++) {      /* the item ends at a ',' outside parentheses */
			if (s[j] == '(' && item_end == n)
				item_end = j;
			paren += s[j] == '(';
			paren -= paren && s[j] == ')';
			if (s[j] == ',' && !paren)
				break;
		}
		if (item_end > j)
			item_end = j;
		if (item_end - i > 4 && memcmp(s + i, "gpu:", 4) == 0) {
			size_t k = item_end;
			while (k > i && s[k - 1] != ':')
				k--;
			double v = 0;
			int digits = 0;
			for (size_t d = k; d < item_end && s[d] >= '0' && s[d] <= '9'; d++, digits++)
				v = v * 10 + (s[d] - '0');
			if (digits && k + (size_t)digits == item_end)
				sum += v;
		}
		i = j + 1;
	}
	return sum;
}

/* A load average over this many times the node's CPUs is no reading (docs/mapping.md) */
#define LOAD_ABSURD_PER_CPU 1000

/* Why node r's cpu_load is no reading of its load now, or NULL: it is one. */
static const char *load_problem(const struct node_rec *r)
{
	const char *silent = node_state_silent(&r->state);
	if (silent)
		return silent;
	if (isnan(r->cpu_load))
		return "no cpu_load in slurmrestd's answer";
	if (r->cpu_load >= LOAD_NO_VAL)
		return "cpu_load not reported (Slurm's NO_VAL)";
	if (r->cpu_load < 0)
		return "negative cpu_load";
	if (isinf(r->cpu_load) || r->cpu_load / 100 > LOAD_ABSURD_PER_CPU * (r->cpus > 1 ? r->cpus : 1))
		return "cpu_load over 1000 times its CPUs";
	return NULL;
}

/* The node's load (cpu_load / 100, as sinfo's CPU_LOAD prints it), or, when it is no reading, why. */
static void node_load(struct rest *st, const struct node_rec *r, const struct label l[2])
{
	const char *why = load_problem(r);
	double reported = rest_load_reported(r);
	if (!isnan(reported)) /* sinfo's %O, the last load slurmd reported even when it is stale */
		add(st, "slurmrestd_node_cpu_load_reported", l, 2, reported);
	if (!why) {
		add(st, "slurmrestd_node_cpu_load", l, 2, r->cpu_load / 100);
		return;
	}
	struct label w[3] = { l[0], l[1], label_str("why", why) };
	add(st, "slurmrestd_node_cpu_load_unknown", w, 3, 1);
}

/* The node's reason, as sinfo -N -o '%N|%E|%H|%u|%T' prints it for every node (slurmrestd_node_reason: no
 * reason label for "none", the time as sinfo prints it), and for a node with a reason scontrol's
 * Reason=... [user@time] (slurmrestd_node_reason_info, the time as a number: the status page's "who, since
 * when"). why: the reason, reason_time and user labels, for the node x partition view; when: where
 * reason_time's text is kept (CLITIME_LEN bytes). */
static void node_reason(struct rest *st, const struct node_rec *r, const struct label l[2], struct label why[3],
			char *when)
{
	size_t tlen = clitime_format(r->reason_at, when, CLITIME_LEN);
	why[0] = label_of("reason", sp(st, &r->reason), r->reason.len);
	why[1] = label_of("reason_time", when, tlen);
	why[2] = label_of("user", sp(st, &r->reason_user), r->reason_user.len);
	struct label w[5] = { l[0], why[0], why[1], l[1], why[2] };
	add(st, "slurmrestd_node_reason", w, 5, 1);
	if (!r->reason.len)
		return;
	struct label info[3] = { l[0], why[0], why[2] };
	add(st, "slurmrestd_node_reason_info", info, 3, isnan(r->reason_at) || isinf(r->reason_at) ? 0 : r->reason_at);
}

static int node_end(struct rest *st)
{
	struct node_rec *r = &st->r.node;
	char esc[48];
	if (!r->name.len)
		return rest_fail(st, 1, "a node without a name");
	rest_esc(esc, sizeof(esc), sp(st, &r->name), r->name.len);
	if (isnan(r->cpus))
		return rest_fail(st, 1, "node '%s' without cpus", esc);
	if (rest_seen_before(st, sp(st, &r->name), r->name.len)) /* a node must be named to be told apart */
		return rest_fail(st, 1, "node '%s' listed twice", esc);
	st->nodes++;
	char state[32];
	size_t slen = node_state_sinfo(&r->state, state, sizeof(state));
	double alloc = isnan(r->alloc_cpus) ? 0 : r->alloc_cpus, rest = r->cpus - alloc;
	int other = node_state_is_cpus_other(&r->state);
	struct label l[2] = { label_of("node", sp(st, &r->name), r->name.len), label_of("state", state, slen) };
	add(st, "slurmrestd_node_state", l, 2, 1);
	add(st, "slurmrestd_node_cpus", l, 2, r->cpus);
	add(st, "slurmrestd_node_cpus_alloc", l, 2, alloc);
	add(st, "slurmrestd_node_cpus_idle", l, 2, other ? 0 : rest);
	add(st, "slurmrestd_node_cpus_other", l, 2, other ? rest : 0);
	if (!isnan(r->real_memory))
		add(st, "slurmrestd_node_memory", l, 2, r->real_memory);
	if (!isnan(r->alloc_memory))
		add(st, "slurmrestd_node_memory_alloc", l, 2, r->alloc_memory);
	if (!isnan(r->free_mem))
		add(st, "slurmrestd_node_memory_free", l, 2, r->free_mem);
	node_load(st, r, l);
	if (!isnan(r->weight))
		add(st, "slurmrestd_node_weight", l, 2, r->weight);
	const double gpus[2] = { r->gres.set ? gres_gpus(sp(st, &r->gres), r->gres.len) : 0,
				 r->gres_used.set ? gres_gpus(sp(st, &r->gres_used), r->gres_used.len) : 0 };
	add(st, "slurmrestd_node_gpus", l, 2, gpus[0]);
	add(st, "slurmrestd_node_gpus_used", l, 2, gpus[1]);
	struct label why[3];
	char when[CLITIME_LEN];
	node_reason(st, r, l, why, when);
	if (r->resv.len) { /* scontrol show node's ReservationName=, beside its State='s first word */
		const char *base = node_state_base_name(&r->state);
		struct label w[4] = { l[0], label_of("reservation", sp(st, &r->resv), r->resv.len), l[1],
				      label_str("base_state", base) };
		add(st, "slurmrestd_node_reservation", w, 4, 1);
	}
	char *feat = xmalloc(r->features.len + 1); /* sinfo's %b: sorted */
	rest_list_sorted(sp(st, &r->features), r->features.len, feat);
	for (size_t i = 0; i < r->nparts; i++) {
		const struct str *part = &st->parts[i];
		if (!part->len)
			continue;
		struct label p[2] = { label_of("node", sp(st, &r->name), r->name.len),
				      label_of("partition", sp(st, part), part->len) };
		/* sinfo -o %R,%C: a partition's CPUs are its nodes' (rows cannot join on node) */
		struct agg *a = agg_slot(st, &p[1], 1);
		if (a->node == st->nodes) {
			char pesc[48];
			free(feat);
			return rest_fail(st, 1, "node '%s' lists partition '%s' twice", esc,
					 rest_esc(pesc, sizeof(pesc), sp(st, part), part->len));
		}
		a->node = st->nodes;
		add(st, "slurmrestd_node_partition", p, 2, 1);
		const struct label np[3] = { p[0], p[1], l[1] };
		rest_node_part_series(st->e, r, np, alloc, other ? 0 : rest, load_problem(r) ? NAN : r->cpu_load / 100,
				      gpus);
		rest_node_features_series(st->e, np, feat, r->features.len);
		rest_node_reason_series(st->e, np, why);
		a->v[0] += r->cpus;
		a->v[1] += alloc;
		a->v[2] += other ? 0 : rest;
		a->v[3] += other ? rest : 0;
	}
	free(feat);
	return 1;
}

/* ---- shares ---- */

static int share_end(struct rest *st)
{
	struct share_rec *r = &st->r.share;
	if (!r->name.len)
		return rest_fail(st, 1, "a share row without a name");
	/* a user row sits under its account (parent); an account row is its own account */
	int user = r->type.set && r->type.len == 4 && memcmp(sp(st, &r->type), "USER", 4) == 0;
	struct label l[3];
	uint32_t n = 0;
	if (user) {
		l[n++] = label_of("account", sp(st, &r->parent), r->parent.set ? r->parent.len : 0);
		l[n++] = label_of("user", sp(st, &r->name), r->name.len);
	} else {
		l[n++] = label_of("account", sp(st, &r->name), r->name.len);
	}
	if (r->partition.set && r->partition.len)
		l[n++] = label_of("partition", sp(st, &r->partition), r->partition.len);
	/* the row's series: its label values, each behind its name's first letter */
	size_t whole = 1, k = 0;
	for (uint32_t i = 0; i < n; i++)
		whole += 2 + l[i].vlen;
	char *key = xmalloc(whole);
	for (uint32_t i = 0; i < n; i++)
		if (l[i].vlen) {
			key[k++] = l[i].name[0];
			memcpy(key + k, l[i].value, l[i].vlen);
			k += l[i].vlen;
			key[k++] = '\0';
		}
	int twice = rest_seen_before(st, key, k);
	free(key);
	if (twice) {
		char a[48], u[48];
		return rest_fail(st, 1, "share row of account '%s' user '%s' listed twice",
				 rest_esc(a, sizeof(a), l[0].value, l[0].vlen),
				 user ? rest_esc(u, sizeof(u), l[1].value, l[1].vlen) : "");
	}
	if (!isnan(r->factor))
		add(st, "slurmrestd_share_fairshare", l, n, r->factor);
	const struct { const char *fam; double v; } v[] = {
		{ "slurmrestd_share_level", r->level }, { "slurmrestd_share_shares", r->shares },
		{ "slurmrestd_share_shares_normalized", r->shares_norm }, { "slurmrestd_share_usage", r->usage },
		{ "slurmrestd_share_usage_normalized", r->usage_norm },
	};
	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++)
		if (!isnan(v[i].v))
			add(st, v[i].fam, l, n, v[i].v);
	return 1;
}

/* ---- jobs: aggregated by label set while streaming ---- */

unsigned long rest_array_tasks(const char *s, size_t n)
{
	unsigned long total = 0;
	size_t i = 0;
	while (i < n && s[i] != '%') {
		unsigned long a = 0, b, step = 1;
		size_t d = i;
		while (i < n && s[i] >= '0' && s[i] <= '9' && a < 1000000000UL)
			a = a * 10 + (unsigned long)(s[i++] - '0');
		if (i == d)
			return 0;
		b = a;
		if (i < n && s[i] == '-') {
			size_t e = ++i;
			for (b = 0; i < n && s[i] >= '0' && s[i] <= '9' && b < 1000000000UL; i++)
				b = b * 10 + (unsigned long)(s[i] - '0');
			if (i == e || b < a)
				return 0;
			if (i < n && s[i] == ':') {
				size_t f = ++i;
				for (step = 0; i < n && s[i] >= '0' && s[i] <= '9' && step < 1000000000UL; i++)
					step = step * 10 + (unsigned long)(s[i] - '0');
				if (i == f || step == 0)
					return 0;
			}
		}
		total += (b - a) / step + 1;
		if (i < n && s[i] == ',')
			i++;
		else if (i < n && s[i] != '%')
			return 0;
	}
	return total;
}

/* A uid as squeue prints one that no longer resolves, into buf (at least 11 bytes); its length,
 * or 0 when v is no uid (uid_t: 0 to 4294967294). */
static size_t uid_text(double v, char *buf, size_t cap)
{
	if (!(v >= 0 && v <= 4294967294.0) || v != floor(v))
		return 0;
	int n = snprintf(buf, cap, "%.0f", v);
	return n > 0 && (size_t)n < cap ? (size_t)n : 0;
}

/* A running job's user on one node of its host list: slurmrestd_node_job_user{node,user} counts them. */
struct node_user_ctx {
	struct rest *st;
	struct label user;
};

static void count_node_user(void *ctx, const char *host, size_t n)
{
	struct node_user_ctx *c = ctx;
	struct label l[2] = { label_of("node", host, n), c->user }; /* sorted: node, user */
	struct agg *a = agg_slot(c->st, l, 2);
	a->fam = "slurmrestd_node_job_user";
	a->v[0] += 1;
}

/* The users of the jobs running on each node (the status page's load table, loadview.h). A host list
 * it does not read only leaves that job out of them (the legacy rows read /jobs too: never refused for
 * a field only the page reads). */
static void job_nodes(struct rest *st, const struct job_rec *r, const struct label *user)
{
	if (!r->state.base || strcmp(r->state.base, "RUNNING") || !r->nodes.set || !r->nodes.len || !user->vlen)
		return;
	struct node_user_ctx c = { st, *user };
	rest_hostlist_each(sp(st, &r->nodes), r->nodes.len, count_node_user, &c);
}

/* A job's count of each TRES into slurmrestd_jobs_tres and its memory as squeue prints it into
 * slurmrestd_jobs_memory_printed: under the job's five labels (l, sorted by name) and one more. */
struct job_more_ctx {
	struct rest *st;
	const struct label *l;
	double tasks;
	const char *fam, *label;
};

static void count_more(void *ctx, const char *value, size_t n, double v)
{
	struct job_more_ctx *c = ctx;
	struct label l[AGG_LABELS_MAX];
	memcpy(l, c->l, AGG_N * sizeof(*l));
	l[AGG_N] = label_of(c->label, value, n);
	labels_sort(l, AGG_LABELS_MAX);
	struct agg *a = agg_slot(c->st, l, AGG_LABELS_MAX);
	a->fam = c->fam;
	a->v[0] += c->tasks * v;
}

static int wants(struct rest *st, signed char *want, const char *fam)
{
	if (!*want)
		*want = expo_wants(st->e, fam, strlen(fam)) ? 1 : -1;
	return *want > 0;
}

/* What squeue -O tres-alloc prints: tres_alloc_str, else (a job not started) tres_req_str; an item
 * it does not read makes the document unusable, as an array_task_string does. */
static int job_more(struct rest *st, const struct job_rec *r, const struct label *sorted, double tasks)
{
	struct job_more_ctx c = { st, sorted, tasks, "slurmrestd_jobs_tres", "tres" };
	const struct str *t = r->tres_alloc.len ? &r->tres_alloc : &r->tres_req;
	if (t->len && wants(st, &st->want_tres, c.fam)) {
		const char *item, *why;
		size_t n;
		if ((why = rest_tres_each(sp(st, t), t->len, count_more, &c, &item, &n))) {
			char esc[48];
			return rest_fail(st, 1, "job %.0f: %s item '%s': %s", r->id,
					 t == &r->tres_alloc ? "tres_alloc_str" : "tres_req_str",
					 rest_esc(esc, sizeof(esc), item, n), why);
		}
	}
	double mb = rest_job_memory(r), num;
	c.fam = "slurmrestd_jobs_memory_printed";
	c.label = "unit";
	if (mb >= 0 && mb < 9223372036854775808.0 && wants(st, &st->want_mem, c.fam)) {
		char unit[2];
		rest_squeue_memory(mb, &num, unit);
		count_more(&c, unit, strlen(unit), num);
	}
	return 1;
}

static int job_end(struct rest *st)
{
	struct job_rec *r = &st->r.job;
	if (!r->state.base && !r->state.flag)
		return rest_fail(st, 1, "a job without a state");
	if (!isnan(r->id) && rest_seen_before(st, &r->id, sizeof(r->id)))
		return rest_fail(st, 1, "job %.0f listed twice", r->id);
	char uid[24];
	struct label l[AGG_N];
	const char *state = job_state_squeue(&r->state);
	l[AGG_STATE] = label_str("state", state);
	/* squeue's %r: the description when slurmctld wrote one, else the reason's name */
	const struct str *why = r->desc.set && r->desc.len ? &r->desc : &r->reason;
	l[AGG_REASON] = label_of("reason", sp(st, why), why->set ? why->len : 0);
	if (r->user.set && r->user.len) {
		l[AGG_USER] = label_of("user", sp(st, &r->user), r->user.len);
	} else { /* squeue prints the uid of a user that no longer resolves */
		size_t n = isnan(r->uid) ? 0 : uid_text(r->uid, uid, sizeof(uid));
		if (!n && !isnan(r->uid))
			return rest_fail(st, 1, "job %.0f: user_id %g is not a uid", r->id, r->uid);
		l[AGG_USER] = label_of("user", uid, n);
	}
	l[AGG_ACCOUNT] = label_of("account", sp(st, &r->account), r->account.set ? r->account.len : 0);
	l[AGG_PARTITION] = label_of("partition", sp(st, &r->partition), r->partition.set ? r->partition.len : 0);
	/* squeue -r prints one line per task of a pending array record */
	double tasks = 1;
	if (r->tasks.set && r->tasks.len) {
		tasks = (double)rest_array_tasks(sp(st, &r->tasks), r->tasks.len);
		if (tasks == 0) {
			char esc[48];
			return rest_fail(st, 1, "job %.0f: array_task_string '%s' not understood", r->id,
					 rest_esc(esc, sizeof(esc), sp(st, &r->tasks), r->tasks.len));
		}
	}
	/* the label names of labels_hash are sorted: account, partition, reason, state, user */
	struct label sorted[AGG_N];
	memcpy(sorted, l, sizeof(l));
	labels_sort(sorted, AGG_N);
	struct agg *a = agg_slot(st, sorted, AGG_N);
	a->v[0] += tasks;
	a->v[1] += tasks * (isnan(r->cpus) ? 0 : r->cpus);
	a->v[2] += tasks * rest_job_memory(r);
	a->v[3] += 1; /* records, as squeue without -r prints them: a pending array once */
	a->v[4] += isnan(r->cpus) ? 0 : r->cpus;
	job_nodes(st, r, &l[AGG_USER]);
	return job_more(st, r, sorted, tasks);
}

/* ---- /jobs/state: each job's id and state, counted by squeue's state ---- */

/* slurmrestd lists every task of a pending array on its own ("16_8": the data_parser expands the
 * record's bitmap), as squeue -r prints them: one entry is one job. */
static int job_state_end(struct rest *st)
{
	struct job_rec *r = &st->r.job;
	char esc[48];
	if (!r->sid.len)
		return rest_fail(st, 1, "a job without a job_id");
	rest_esc(esc, sizeof(esc), sp(st, &r->sid), r->sid.len);
	if (!r->state.base && !r->state.flag)
		return rest_fail(st, 1, "job %s without a state", esc);
	if (rest_seen_before(st, sp(st, &r->sid), r->sid.len))
		return rest_fail(st, 1, "job %s listed twice", esc);
	const char *state = job_state_squeue(&r->state);
	struct label l = label_of("state", state, strlen(state));
	agg_slot(st, &l, 1)->v[0] += 1;
	return 1;
}

/* ---- diag: every number of "statistics" (and of its objects), named by its path ---- */

int rest_diag_num(struct rest *st, const char *path, double v)
{
	char name[sizeof("slurmrestd_diag_") + PATH_MAX_LEN];
	int len = snprintf(name, sizeof(name), "slurmrestd_diag_%s", path);
	if (len < 0 || (size_t)len >= sizeof(name))
		return 1;
	size_t n = (size_t)len;
	for (size_t i = sizeof("slurmrestd_diag_") - 1; i < n; i++) {
		char c = name[i];
		if (c == '.')
			name[i] = '_';
		else if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_'))
			return 1; /* lists ("[]") and odd keys are not families */
	}
	if (rest_seen_before(st, path, strlen(path)))
		return rest_fail(st, 1, "'statistics.%s' given twice", path);
	expo_add(st->e, name, n, NULL, 0, v);
	return 1;
}

/* ---- the documents ---- */

#define NODE(p, k, f) { p, k, offsetof(struct node_rec, f) }
#define JOB(p, k, f) { p, k, offsetof(struct job_rec, f) }
#define SHARE(p, k, f) { p, k, offsetof(struct share_rec, f) }

static const struct slot node_slots[] = {
	NODE("name", S_STR, name), NODE("state[]", S_NODE_STATE, state), NODE("cpus", S_NUM, cpus),
	NODE("alloc_cpus", S_NUM, alloc_cpus), NODE("real_memory", S_NUM, real_memory),
	NODE("alloc_memory", S_NUM, alloc_memory), NODE("free_mem", S_NUM, free_mem), NODE("cpu_load", S_NUM, cpu_load),
	NODE("gres", S_STR, gres), NODE("gres_used", S_STR, gres_used),
	NODE("partitions[]", S_PART, nparts), NODE("reason", S_STR, reason),
	NODE("reason_set_by_user", S_STR, reason_user), NODE("reason_changed_at", S_NUM, reason_at),
	NODE("weight", S_NUM, weight), NODE("active_features[]", S_LIST, features), NODE("reservation", S_STR, resv),
	{ NULL, S_NUM, 0 },
};

static const struct slot job_slots[] = {
	JOB("job_state[]", S_JOB_STATE, state), JOB("job_state", S_JOB_STATE, state), /* v0.0.41: a string */
	JOB("state_reason", S_STR, reason), JOB("state_description", S_STR, desc),
	JOB("user_name", S_STR, user), JOB("user_id", S_NUM, uid), JOB("account", S_STR, account),
	JOB("partition", S_STR, partition), JOB("cpus", S_NUM, cpus),
	JOB("array_task_string", S_STR, tasks), JOB("job_id", S_NUM, id), JOB("nodes", S_STR, nodes),
	JOB("memory_per_node", S_NUM, mem_node), JOB("memory_per_cpu", S_NUM, mem_cpu),
	JOB("tres_alloc_str", S_STR, tres_alloc), JOB("tres_req_str", S_STR, tres_req), { NULL, S_NUM, 0 },
};

static const struct slot job_state_slots[] = {
	JOB("job_id", S_STR, sid), JOB("state[]", S_JOB_STATE_KNOWN, state),
	JOB("state", S_JOB_STATE_KNOWN, state), /* a string, as v0.0.41's job_state */
	{ NULL, S_NUM, 0 },
};

static const struct slot share_slots[] = {
	SHARE("name", S_STR, name), SHARE("parent", S_STR, parent), SHARE("partition", S_STR, partition),
	SHARE("type[]", S_STR, type), SHARE("fairshare.factor", S_NUM, factor),
	SHARE("fairshare.level", S_NUM, level), SHARE("shares", S_NUM, shares),
	SHARE("shares_normalized", S_NUM, shares_norm), SHARE("usage", S_NUM, usage),
	SHARE("usage_normalized", S_NUM, usage_norm), { NULL, S_NUM, 0 },
};

const struct doc_info docs[REST_DOCS] = {
	[REST_NODES] = { .prefix = { "nodes" }, .nprefix = 1, .array = 1, .what = "nodes", .slots = node_slots,
			 .end = node_end, .declared = { "slurmrestd_node_reservation" },
			 .agg_fams = { "slurmrestd_partition_cpus", "slurmrestd_partition_cpus_alloc",
				       "slurmrestd_partition_cpus_idle", "slurmrestd_partition_cpus_other" } },
	[REST_SHARES] = { .prefix = { "shares", "shares" }, .nprefix = 2, .array = 1, .what = "shares.shares",
			  .slots = share_slots, .end = share_end },
	[REST_JOBS] = { .prefix = { "jobs" }, .nprefix = 1, .array = 1, .what = "jobs", .slots = job_slots,
			.end = job_end, .agg_fams = { "slurmrestd_jobs", "slurmrestd_jobs_cpus", "slurmrestd_jobs_memory",
					     "slurmrestd_jobs_records", "slurmrestd_jobs_records_cpus" } },
	[REST_DIAG] = { .prefix = { "statistics" }, .nprefix = 1, .what = "statistics",
			.meta_fam = "slurmrestd_diag_slurm_info" },
	[REST_LICENSES] = { .prefix = { "licenses" }, .nprefix = 1, .array = 1, .what = "licenses",
			    .slots = rest_lic_slots, .end = rest_lic_end },
	[REST_JOB_STATES] = { .prefix = { "jobs" }, .nprefix = 1, .array = 1, .what = "jobs", .slots = job_state_slots,
			      .end = job_state_end, .agg_fams = { "slurmrestd_job_states" } },
	[REST_RESERVATIONS] = { .prefix = { "reservations" }, .nprefix = 1, .array = 1, .what = "reservations",
				.slots = rest_resv_slots, .end = rest_resv_end, .clock = 1, .finish = rest_resv_finish },
	[REST_ASSOCIATIONS] = { .prefix = { "associations" }, .nprefix = 1, .array = 1, .what = "associations",
				.slots = rest_assoc_slots, .end = rest_assoc_end, .levels = 5, .hook = rest_assoc_value,
				.item_end = rest_assoc_item_end,
				.declared = { "slurmrestd_association_info", "slurmrestd_association_grp_cpus",
					      "slurmrestd_association_grp_memory", "slurmrestd_association_grp_tres",
					      "slurmrestd_association_grp_jobs", "slurmrestd_association_grp_submit_jobs" } },
};
