/* slurmrestd.c: see slurmrestd.h. A yajl callback parser walks the document with a stack of open
 * containers (the key each map is at); a record (one node, job or share row, or diag's statistics
 * object) is read into a small scratch, its scalars named by their path inside it ("cpus",
 * "free_mem" for free_mem.number, "state[]" for an item of the state array), and turned into samples
 * when it closes. */
#include "slurmrestd.h"
#include "reststate.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yajl/yajl_parse.h>

#define KEY_MAX 48            /* longer keys match no field */
#define PATH_LEVELS 4         /* a record's field and three levels inside it */
#define PATH_MAX_LEN (PATH_LEVELS * (KEY_MAX + 2)) /* "key." or "[]" per level, then '\0' */
#define REC_MAX (256u * 1024) /* scratch bytes of one record */
#define MAX_PARTS 64          /* partitions of one node we keep */
#define QUIET_MAX (REST_MAX_STRING + 64u * 1024) /* bytes fed with no token done: a huge string */

struct level {
	char key[KEY_MAX];
	unsigned char klen;   /* KEY_MAX: too long */
	unsigned char array;
};

struct str { uint32_t off, len; int set; };

struct node_rec {
	struct node_state state;
	struct str name, gres, gres_used;
	double cpus, alloc_cpus, real_memory, alloc_memory, free_mem;
	struct str parts[MAX_PARTS];
	int nparts;
};

struct job_rec {
	struct job_state state;
	struct str reason, desc, user, account, partition, tasks;
	double cpus, uid;
};

struct share_rec {
	struct str name, parent, partition, type;
	double factor, level;
};

enum { AGG_STATE, AGG_REASON, AGG_USER, AGG_ACCOUNT, AGG_PARTITION, AGG_N };

struct agg {                  /* one distinct label set of an aggregate family */
	struct label l[AGG_N];
	uint32_t nl, hash;
	double v[4];              /* the values of the document's agg_fams */
};

struct rest {
	enum rest_doc doc;
	struct expo *e;
	yajl_handle h;
	struct level lv[REST_MAX_DEPTH];
	int depth;                /* open containers */
	int rd;                   /* depth inside a record map (constant per document) */
	int in_rec, rec_bad;
	int want;                 /* the record's current key is one its document reads */
	int nosv_set, nosv_inf;   /* of the {set, infinite, number} object being read */
	int failed;               /* the document stopped: syntax, depth, size */
	int fired;                /* a token completed during this chunk */
	size_t quiet;             /* bytes fed since the last completed token */
	size_t nbad;
	char *scratch;            /* the record's strings */
	size_t slen;
	union { struct node_rec node; struct job_rec job; struct share_rec share; } r;
	struct agg *aggs;         /* jobs, partitions: open addressing, acap a power of two */
	size_t nagg, acap;
	struct arena arena;       /* the label values of aggs */
};

/* ---- strings of the record ---- */

static int keep_str(struct rest *st, struct str *s, const unsigned char *p, size_t n)
{
	if (n > REC_MAX - st->slen) {
		st->rec_bad = 1;
		return -1;
	}
	memcpy(st->scratch + st->slen, p, n);
	s->off = (uint32_t)st->slen;
	s->len = (uint32_t)n;
	s->set = 1;
	st->slen += n;
	return 0;
}

static const char *sp(const struct rest *st, const struct str *s)
{
	return st->scratch + s->off;
}

static struct label lab(const char *name, const char *v, size_t n)
{
	struct label l = { name, v, (uint32_t)strlen(name), (uint32_t)n };
	return l;
}

/* One sample; labels with an empty value are left out, as Prometheus does. */
static void add(struct rest *st, const char *fam, const struct label *l, uint32_t n, double v)
{
	struct label set[AGG_N];
	uint32_t k = 0;
	for (uint32_t i = 0; i < n && k < AGG_N; i++)
		if (l[i].vlen)
			set[k++] = l[i];
	expo_add(st->e, fam, strlen(fam), set, k, v);
}

/* The entry of label set l (n labels, sorted by name) in the document's aggregate, made on first
 * sight with copies of the values. */
static struct agg *agg_slot(struct rest *st, const struct label *l, uint32_t n)
{
	uint32_t h = labels_hash(l, n);
	if ((st->nagg + 1) * 2 > st->acap) {
		size_t cap = st->acap ? st->acap * 2 : 64;
		struct agg *t = xcalloc(cap, sizeof(*t));
		for (size_t i = 0; i < st->acap; i++) {
			if (!st->aggs[i].nl)
				continue;
			size_t j = st->aggs[i].hash & (cap - 1);
			while (t[j].nl)
				j = (j + 1) & (cap - 1);
			t[j] = st->aggs[i];
		}
		free(st->aggs);
		st->aggs = t;
		st->acap = cap;
	}
	size_t j = h & (st->acap - 1);
	for (; st->aggs[j].nl; j = (j + 1) & (st->acap - 1))
		if (st->aggs[j].hash == h && labels_equal(st->aggs[j].l, st->aggs[j].nl, l, n))
			return &st->aggs[j];
	struct agg *a = &st->aggs[j];
	for (uint32_t k = 0; k < n; k++) {
		a->l[k] = l[k];
		a->l[k].value = l[k].vlen ? arena_strndup(&st->arena, l[k].value, l[k].vlen) : "";
	}
	a->nl = n;
	a->hash = h;
	st->nagg++;
	return a;
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

static void node_end(struct rest *st)
{
	struct node_rec *r = &st->r.node;
	if (!r->name.len || isnan(r->cpus)) { /* a node must be named to be told apart */
		st->nbad++;
		return;
	}
	char state[32];
	size_t slen = node_state_sinfo(&r->state, state, sizeof(state));
	double alloc = isnan(r->alloc_cpus) ? 0 : r->alloc_cpus, rest = r->cpus - alloc;
	int other = node_state_is_cpus_other(&r->state);
	struct label l[2] = { lab("node", sp(st, &r->name), r->name.len), lab("state", state, slen) };
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
	add(st, "slurmrestd_node_gpus", l, 2, r->gres.set ? gres_gpus(sp(st, &r->gres), r->gres.len) : 0);
	add(st, "slurmrestd_node_gpus_used", l, 2,
	    r->gres_used.set ? gres_gpus(sp(st, &r->gres_used), r->gres_used.len) : 0);
	for (int i = 0; i < r->nparts; i++) {
		if (!r->parts[i].len)
			continue;
		struct label p[2] = { lab("node", sp(st, &r->name), r->name.len),
				      lab("partition", sp(st, &r->parts[i]), r->parts[i].len) };
		add(st, "slurmrestd_node_partition", p, 2, 1);
		/* sinfo -o %R,%C: a partition's CPUs are its nodes' (rows cannot join on node) */
		struct agg *a = agg_slot(st, &p[1], 1);
		a->v[0] += r->cpus;
		a->v[1] += alloc;
		a->v[2] += other ? 0 : rest;
		a->v[3] += other ? rest : 0;
	}
}

/* ---- shares ---- */

static void share_end(struct rest *st)
{
	struct share_rec *r = &st->r.share;
	if (!r->name.len) {
		st->nbad++;
		return;
	}
	/* a user row sits under its account (parent); an account row is its own account */
	int user = r->type.set && r->type.len == 4 && memcmp(sp(st, &r->type), "USER", 4) == 0;
	struct label l[3];
	uint32_t n = 0;
	if (user) {
		l[n++] = lab("account", sp(st, &r->parent), r->parent.set ? r->parent.len : 0);
		l[n++] = lab("user", sp(st, &r->name), r->name.len);
	} else {
		l[n++] = lab("account", sp(st, &r->name), r->name.len);
	}
	if (r->partition.set && r->partition.len)
		l[n++] = lab("partition", sp(st, &r->partition), r->partition.len);
	if (!isnan(r->factor))
		add(st, "slurmrestd_share_fairshare", l, n, r->factor);
	if (!isnan(r->level))
		add(st, "slurmrestd_share_level", l, n, r->level);
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

static void job_end(struct rest *st)
{
	struct job_rec *r = &st->r.job;
	if (!r->state.base && !r->state.flag) {
		st->nbad++;
		return;
	}
	char uid[24];
	struct label l[AGG_N];
	const char *state = job_state_squeue(&r->state);
	l[AGG_STATE] = lab("state", state, strlen(state));
	/* squeue's %r: the description when slurmctld wrote one, else the reason's name */
	const struct str *why = r->desc.set && r->desc.len ? &r->desc : &r->reason;
	l[AGG_REASON] = lab("reason", sp(st, why), why->set ? why->len : 0);
	if (r->user.set && r->user.len) {
		l[AGG_USER] = lab("user", sp(st, &r->user), r->user.len);
	} else { /* squeue prints the uid of a user that no longer resolves */
		int n = isnan(r->uid) ? 0 : snprintf(uid, sizeof(uid), "%.0f", r->uid);
		l[AGG_USER] = lab("user", uid, n > 0 ? (size_t)n : 0);
	}
	l[AGG_ACCOUNT] = lab("account", sp(st, &r->account), r->account.set ? r->account.len : 0);
	l[AGG_PARTITION] = lab("partition", sp(st, &r->partition), r->partition.set ? r->partition.len : 0);
	/* the label names of labels_hash are sorted: account, partition, reason, state, user */
	struct label sorted[AGG_N];
	memcpy(sorted, l, sizeof(l));
	labels_sort(sorted, AGG_N);
	struct agg *a = agg_slot(st, sorted, AGG_N);
	/* squeue -r prints one line per task of a pending array record */
	double tasks = 1;
	if (r->tasks.set && r->tasks.len) {
		tasks = (double)rest_array_tasks(sp(st, &r->tasks), r->tasks.len);
		if (tasks == 0) {
			tasks = 1;
			st->nbad++;
		}
	}
	a->v[0] += tasks;
	a->v[1] += tasks * (isnan(r->cpus) ? 0 : r->cpus);
}

/* ---- diag: every number of "statistics" (and of its objects), named by its path ---- */

static void diag_num(struct rest *st, const char *path, double v)
{
	char name[sizeof("slurmrestd_diag_") + PATH_MAX_LEN];
	int len = snprintf(name, sizeof(name), "slurmrestd_diag_%s", path);
	if (len < 0 || (size_t)len >= sizeof(name))
		return;
	size_t n = (size_t)len;
	for (size_t i = sizeof("slurmrestd_diag_") - 1; i < n; i++) {
		char c = name[i];
		if (c == '.')
			name[i] = '_';
		else if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_'))
			return; /* lists ("[]") and odd keys are not families */
	}
	expo_add(st->e, name, n, NULL, 0, v);
}

/* ---- the walk ---- */

/* A field a record reads: its path inside the record ("state[]": an item of the array "state";
 * "fairshare.factor": a member; a {set, infinite, number} object reads as its own path), what it
 * holds and where in the record (an offset into st->r). */
enum slot_kind { S_NUM, S_STR, S_NODE_STATE, S_JOB_STATE, S_PART };

struct slot {
	const char *path;
	enum slot_kind kind;
	size_t off;
};

#define NODE(p, k, f) { p, k, offsetof(struct node_rec, f) }
#define JOB(p, k, f) { p, k, offsetof(struct job_rec, f) }
#define SHARE(p, k, f) { p, k, offsetof(struct share_rec, f) }

static const struct slot node_slots[] = {
	NODE("name", S_STR, name), NODE("state[]", S_NODE_STATE, state), NODE("cpus", S_NUM, cpus),
	NODE("alloc_cpus", S_NUM, alloc_cpus), NODE("real_memory", S_NUM, real_memory),
	NODE("alloc_memory", S_NUM, alloc_memory), NODE("free_mem", S_NUM, free_mem),
	NODE("gres", S_STR, gres), NODE("gres_used", S_STR, gres_used),
	NODE("partitions[]", S_PART, parts), { NULL, S_NUM, 0 },
};

static const struct slot job_slots[] = {
	JOB("job_state[]", S_JOB_STATE, state), JOB("job_state", S_JOB_STATE, state), /* v0.0.41: a string */
	JOB("state_reason", S_STR, reason), JOB("state_description", S_STR, desc),
	JOB("user_name", S_STR, user), JOB("user_id", S_NUM, uid), JOB("account", S_STR, account),
	JOB("partition", S_STR, partition), JOB("cpus", S_NUM, cpus),
	JOB("array_task_string", S_STR, tasks), { NULL, S_NUM, 0 },
};

static const struct slot share_slots[] = {
	SHARE("name", S_STR, name), SHARE("parent", S_STR, parent), SHARE("partition", S_STR, partition),
	SHARE("type[]", S_STR, type), SHARE("fairshare.factor", S_NUM, factor),
	SHARE("fairshare.level", S_NUM, level), { NULL, S_NUM, 0 },
};

struct doc_info {
	const char *prefix[2];    /* keys down to the records */
	int nprefix, array;       /* records are items of an array at the end of the prefix */
	const struct slot *slots; /* NULL: every number, by its path (diag) */
	void (*end)(struct rest *st);
	const char *agg_fams[4];  /* the families of the aggregate's values, in rest_end */
};

static const struct doc_info docs[] = {
	[REST_NODES] = { .prefix = { "nodes" }, .nprefix = 1, .array = 1, .slots = node_slots,
			 .end = node_end,
			 .agg_fams = { "slurmrestd_partition_cpus", "slurmrestd_partition_cpus_alloc",
				       "slurmrestd_partition_cpus_idle", "slurmrestd_partition_cpus_other" } },
	[REST_SHARES] = { .prefix = { "shares", "shares" }, .nprefix = 2, .array = 1,
			  .slots = share_slots, .end = share_end },
	[REST_JOBS] = { .prefix = { "jobs" }, .nprefix = 1, .array = 1, .slots = job_slots, .end = job_end,
			.agg_fams = { "slurmrestd_jobs", "slurmrestd_jobs_cpus" } },
	[REST_DIAG] = { .prefix = { "statistics" }, .nprefix = 1 },
};

/* Is key the first step of a slot's path? The values of other keys (most of a job) are skipped
 * without building a path. */
static int wanted(const struct doc_info *d, const unsigned char *k, size_t n)
{
	for (const struct slot *f = d->slots; f && f->path; f++) {
		if (!n || f->path[0] != k[0])
			continue;
		size_t len = strlen(f->path);
		if (len >= n && memcmp(f->path, k, n) == 0 &&
		    (len == n || f->path[n] == '.' || f->path[n] == '['))
			return 1;
	}
	return !d->slots;
}

/* A value read at path, a string s (is_str) or a number v: into its slot (a value of the wrong
 * type is ignored), or diag's family. */
static void on_value(struct rest *st, const char *path, int is_str, const unsigned char *s, size_t n,
		     double v)
{
	const struct slot *f = docs[st->doc].slots;
	if (!f) {
		if (!is_str)
			diag_num(st, path, v);
		return;
	}
	while (f->path && strcmp(f->path, path))
		f++;
	char *rec = (char *)&st->r;
	if (!f->path || (f->kind == S_NUM) == is_str)
		return;
	switch (f->kind) {
	case S_NUM:
		*(double *)(void *)(rec + f->off) = v;
		break;
	case S_STR:
		keep_str(st, (struct str *)(void *)(rec + f->off), s, n);
		break;
	case S_NODE_STATE:
		node_state_add((struct node_state *)(void *)(rec + f->off), (const char *)s, n);
		break;
	case S_JOB_STATE:
		job_state_add((struct job_state *)(void *)(rec + f->off), (const char *)s, n);
		break;
	case S_PART:
		if (st->r.node.nparts < MAX_PARTS)
			keep_str(st, &st->r.node.parts[st->r.node.nparts++], s, n);
		break;
	}
}

static int key_is(const struct level *l, const char *k)
{
	size_t n = strlen(k);
	return l->klen == n && memcmp(l->key, k, n) == 0;
}

#define KEY_IS(l, lit) ((l)->klen == sizeof(lit) - 1 && memcmp((l)->key, lit, sizeof(lit) - 1) == 0)

/* The path of the value about to be read inside the record, or NULL when it is outside one or
 * too deep to matter. "state[]" is an item of the array "state"; "free_mem.number" a key. */
static const char *path_of(struct rest *st, char *buf)
{
	if (!st->in_rec || !st->want || st->depth < st->rd || st->depth >= st->rd + PATH_LEVELS)
		return NULL;
	size_t n = 0;
	for (int i = st->rd - 1; i < st->depth; i++) {
		const struct level *l = &st->lv[i];
		if (l->array) {
			memcpy(buf + n, "[]", 2);
			n += 2;
			continue;
		}
		if (l->klen >= KEY_MAX)
			return NULL;
		if (i >= st->rd)
			buf[n++] = '.';
		memcpy(buf + n, l->key, l->klen);
		n += l->klen;
	}
	buf[n] = '\0';
	return buf;
}

static int fire(struct rest *st)
{
	st->fired = 1;
	return 1;
}

/* A number, or a member of a {set, infinite, number} object (data_parser's NO_VAL wrapper). */
static int on_number(struct rest *st, double v, int is_bool)
{
	char buf[PATH_MAX_LEN + 8];
	const char *path = path_of(st, buf);
	if (!path)
		return fire(st);
	size_t n = strlen(path);
	const struct level *top = &st->lv[st->depth - 1];
	if (st->depth > st->rd && !top->array) {
		if (is_bool && KEY_IS(top, "set")) {
			st->nosv_set = v != 0;
			return fire(st);
		}
		if (is_bool && KEY_IS(top, "infinite")) {
			st->nosv_inf = v != 0;
			return fire(st);
		}
		if (KEY_IS(top, "number")) {
			buf[n - sizeof(".number") + 1] = '\0';
			v = st->nosv_inf ? INFINITY : !st->nosv_set ? NAN : v;
		}
	}
	on_value(st, path, 0, NULL, 0, v);
	return fire(st);
}

static int cb_null(void *ctx)
{
	return fire(ctx);
}

static int cb_bool(void *ctx, int b)
{
	return on_number(ctx, b ? 1 : 0, 1);
}

static int cb_int(void *ctx, long long v)
{
	return on_number(ctx, (double)v, 0);
}

static int cb_double(void *ctx, double v)
{
	return on_number(ctx, v, 0);
}

static int cb_string(void *ctx, const unsigned char *s, size_t n)
{
	struct rest *st = ctx;
	char buf[PATH_MAX_LEN + 8];
	if (n > REST_MAX_STRING)
		return 0;
	const char *path = path_of(st, buf);
	if (path)
		on_value(st, path, 1, s, n, 0);
	return fire(st);
}

static int cb_key(void *ctx, const unsigned char *k, size_t n)
{
	struct rest *st = ctx;
	if (n > REST_MAX_STRING || !st->depth)
		return 0;
	if (st->in_rec && st->depth > st->rd && (!st->want || st->depth >= st->rd + PATH_LEVELS))
		return fire(st); /* inside a value nobody reads: its keys do not matter */
	struct level *l = &st->lv[st->depth - 1];
	l->klen = n < KEY_MAX ? (unsigned char)n : KEY_MAX;
	memcpy(l->key, k, n < KEY_MAX ? n : 0);
	if (st->in_rec && st->depth == st->rd)
		st->want = n < KEY_MAX && wanted(&docs[st->doc], k, n);
	return fire(st);
}

static void record_begin(struct rest *st)
{
	const struct doc_info *d = &docs[st->doc];
	if (st->depth != d->nprefix + d->array + 1 || (d->array && !st->lv[d->nprefix].array))
		return;
	for (int i = 0; i < d->nprefix; i++)
		if (st->lv[i].array || !key_is(&st->lv[i], d->prefix[i]))
			return;
	st->in_rec = 1;
	st->rec_bad = 0;
	st->slen = 0;
	memset(&st->r, 0, sizeof(st->r));
	struct node_rec *nr = &st->r.node;
	struct job_rec *jr = &st->r.job;
	struct share_rec *sr = &st->r.share;
	if (st->doc == REST_NODES)
		nr->cpus = nr->alloc_cpus = nr->real_memory = nr->alloc_memory = nr->free_mem = NAN;
	else if (st->doc == REST_JOBS)
		jr->cpus = jr->uid = NAN;
	else if (st->doc == REST_SHARES)
		sr->factor = sr->level = NAN;
}

static int open_container(struct rest *st, int array)
{
	if (st->depth >= REST_MAX_DEPTH)
		return 0;
	struct level *l = &st->lv[st->depth++];
	l->klen = 0;
	l->array = (unsigned char)array;
	st->nosv_set = 1;
	st->nosv_inf = 0;
	if (!array && !st->in_rec)
		record_begin(st);
	/* slurmrestd reports what went wrong in the top-level "errors" array, with 200 when it
	 * answered anyway: each error counts, so that the answer is not taken as complete */
	if (!array && st->depth == 3 && !st->lv[0].array && KEY_IS(&st->lv[0], "errors") && st->lv[1].array)
		st->nbad++;
	return fire(st);
}

static int cb_start_map(void *ctx)
{
	return open_container(ctx, 0);
}

static int cb_start_array(void *ctx)
{
	return open_container(ctx, 1);
}

static int close_container(struct rest *st)
{
	if (st->in_rec && st->depth == st->rd) {
		st->in_rec = 0;
		if (st->rec_bad)
			st->nbad++;
		else if (docs[st->doc].end)
			docs[st->doc].end(st);
	}
	st->depth--;
	return fire(st);
}

static int cb_end(void *ctx)
{
	return close_container(ctx);
}

static const yajl_callbacks callbacks = {
	cb_null, cb_bool, cb_int, cb_double, NULL, cb_string,
	cb_start_map, cb_key, cb_end, cb_start_array, cb_end,
};

/* ---- the interface ---- */

void *rest_begin(struct expo *e, enum rest_doc doc)
{
	struct rest *st = xcalloc(1, sizeof(*st));
	st->doc = doc;
	st->e = e;
	st->rd = docs[doc].nprefix + docs[doc].array + 1;
	st->scratch = xmalloc(REC_MAX);
	arena_init(&st->arena);
	st->h = yajl_alloc(&callbacks, NULL, st);
	if (!st->h)
		abort();
	return st;
}

void *rest_begin_nodes(struct expo *e)
{
	return rest_begin(e, REST_NODES);
}

void *rest_begin_shares(struct expo *e)
{
	return rest_begin(e, REST_SHARES);
}

void *rest_begin_jobs(struct expo *e)
{
	return rest_begin(e, REST_JOBS);
}

void *rest_begin_diag(struct expo *e)
{
	return rest_begin(e, REST_DIAG);
}

void rest_feed(void *p, struct expo *e, const char *data, size_t n)
{
	struct rest *st = p;
	st->e = e;
	if (st->failed || !n)
		return;
	st->fired = 0;
	if (yajl_parse(st->h, (const unsigned char *)data, n) != yajl_status_ok) {
		st->failed = 1;
		return;
	}
	/* yajl holds an unfinished token across chunks: one that goes on and on is a huge string */
	st->quiet = st->fired ? 0 : st->quiet + n;
	if (st->quiet > QUIET_MAX)
		st->failed = 1;
}

void rest_discard(void *p)
{
	struct rest *st = p;
	if (!st)
		return;
	yajl_free(st->h);
	free(st->scratch);
	free(st->aggs);
	arena_reset(&st->arena);
	free(st);
}

size_t rest_end(void *p, struct expo *e)
{
	struct rest *st = p;
	st->e = e;
	if (!st->failed && yajl_complete_parse(st->h) != yajl_status_ok)
		st->failed = 1;
	for (int f = 0; f < 4 && docs[st->doc].agg_fams[f]; f++)
		for (size_t i = 0; i < st->acap; i++)
			if (st->aggs[i].nl)
				add(st, docs[st->doc].agg_fams[f], st->aggs[i].l, st->aggs[i].nl, st->aggs[i].v[f]);
	expo_add_end(e);
	size_t bad = st->nbad + (size_t)st->failed;
	rest_discard(st);
	return bad;
}
