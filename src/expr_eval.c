/* expr_eval.c: evaluation of a compiled expression over the input families of one scrape. */
#include "expr_int.h"
#include "buf.h"
#include "expo.h"
#include "hmap.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- evaluation ---- */

/* Evaluation recurses through eval, eval_node and the operator's function once per level of the
 * tree: the work on the operands' results (and a selector's) is done in functions that are not inlined (and so not
 * on the stack while the operands are evaluated), which keeps a level to a few hundred bytes of
 * stack (test_expr's deepest trees run on a 256 KiB thread, as libmicrohttpd's are). */
#define NOINLINE __attribute__((noinline))

struct expr_memo;

/* The tables of an index (struct index below): the elements by hash (hmap.h, in an arena's
 * slots), and a bitmap with bit (hash * K) >> shift set for every element. */
struct hashtab {
	struct hmap map;
	uint64_t *bits;
	size_t bmask;
};

/* A vector the evaluator only reads: a payload's samples, a shared result, an operand. */
struct cvec {
	const struct velem *e;
	size_t n;
};

struct value {
	int scalar;
	double s;
	struct cvec v;
	struct expr_memo *memo;  /* the shared result this is, if any */
};

struct expr_memo {
	int done;
	struct value v;
	struct hashtab ix;       /* its index, built at the first use (ix.map.slot NULL before) */
};

struct evalctx {
	const struct expr_source *src;
	struct arena *a;
	char *err;
	size_t errlen;
	int failed;
	const char *missing;
};

/* Whether the regex matches the value (a slice: regexec wants a C string). */
static int re_has_match(const regex_t *re, const char *v, size_t vl)
{
	char tmp[512];
	int ok;
	if (vl < sizeof(tmp)) {
		memcpy(tmp, v, vl);
		tmp[vl] = '\0';
		return regexec(re, tmp, 0, NULL, 0) == 0;
	}
	char *big = xstrndup(v, vl);
	ok = regexec(re, big, 0, NULL, 0) == 0;
	free(big);
	return ok;
}

static int matcher_has_match(const struct matcher *m, const struct label *ls, uint32_t n)
{
	int i = labels_find_str(ls, n, m->label);
	const char *v = i >= 0 ? ls[i].value : "";
	size_t vl = i >= 0 ? ls[i].vlen : 0;
	const struct mop_info *op = &expr_mops[m->op];
	int ok = op->regex ? re_has_match(m->re, v, vl) : slice_is_equal(v, vl, m->value, strlen(m->value));
	return op->negated ? !ok : ok;
}

static const struct expo_family *find_family(const struct expr_source *src, const char *name)
{
	size_t n = strlen(name);
	for (size_t i = 0; i < src->nexpos; i++) {
		if (!src->expos[i])
			continue;
		const struct expo_family *f = expo_find(src->expos[i], name, n);
		if (f)
			return f;
	}
	return NULL;
}

/* A new vector of room for cap elements (at least one) in the row's arena: out points at it, empty;
 * the caller fills it through the pointer returned. */
static struct velem *vec_new(struct evalctx *c, struct cvec *out, size_t cap)
{
	struct velem *e = arena_alloc(c->a, (cap ? cap : 1) * sizeof(*e));
	out->e = e;
	out->n = 0;
	return e;
}

static NOINLINE void eval_selector(struct evalctx *c, const struct expr *x, struct cvec *out)
{
	const struct expo_family *f = find_family(c->src, x->metric);
	out->n = 0;
	out->e = NULL;
	if ((!f || !f->n) && !c->missing)
		c->missing = x->metric;
	if (!f || !f->n)
		return;
	if (f->duplicate) {
		snprintf(c->err, c->errlen, "input family %s has duplicate series", x->metric);
		c->failed = 1;
		return;
	}
	if (!x->nm) {
		/* the whole family: share the payload's samples (same layout, read-only from here) */
		_Static_assert(sizeof(struct velem) == sizeof(struct expo_sample) &&
				       offsetof(struct velem, v) == offsetof(struct expo_sample, value) &&
				       offsetof(struct velem, hash) == offsetof(struct expo_sample, hash),
			       "velem and expo_sample share a layout");
		out->e = (const struct velem *)f->samples;
		out->n = f->n;
		return;
	}
	struct velem *o = vec_new(c, out, f->n);
	for (size_t i = 0; i < f->n; i++) {
		const struct expo_sample *s = &f->samples[i];
		int ok = 1;
		for (size_t k = 0; k < x->nm && ok; k++)
			ok = matcher_has_match(&x->m[k], s->labels, s->nlabels);
		if (!ok)
			continue;
		struct velem *e = &o[out->n++];
		e->labels = s->labels;
		e->nlabels = s->nlabels;
		e->v = s->value;
		e->hash = s->hash;
	}
}

/* Open-addressing index over a vector's label sets, built in the arena. Lookups usually come in
 * the indexed vector's own order (two vectors derived from families of one endpoint, whose
 * samples share label arrays, see expo.c): `next` is checked by pointer before hashing. Most of
 * the others are misses (`x and y` with a small y, `or` of disjoint branches): a bitmap of 8 bits
 * per element, small enough for the L1 cache, turns away about 9 in 10 of them before the table. */
struct index {
	struct hashtab t;
	size_t next;
	const struct cvec *v;
};

static inline size_t bit_of(uint32_t hash, size_t bmask)
{
	return (size_t)(((uint64_t)hash * 0x9E3779B97F4A7C15ULL) >> 32) & bmask;
}

/* The index of a shared result is built once per scrape, in the shared results' arena. */
static void index_build(struct evalctx *c, struct index *ix, const struct value *val)
{
	const struct cvec *v = &val->v;
	struct expr_memo *m = val->memo;
	ix->next = 0;
	ix->v = v;
	if (m && m->ix.map.slot) {
		ix->t = m->ix;
		return;
	}
	struct hashtab *t = &ix->t;
	size_t cap = hmap_slots_for(v->n);
	struct arena *a = m && c->src->memo_arena ? c->src->memo_arena : c->a;
	hmap_init_in(&t->map, arena_alloc(a, cap * sizeof(uint64_t)), v->n);
	size_t nbits = cap * 4; /* about 8 bits per element */
	t->bits = arena_alloc(a, nbits / 8);
	memset(t->bits, 0, nbits / 8);
	t->bmask = nbits - 1;
	for (size_t i = 0; i < v->n; i++) {
		size_t b = bit_of(v->e[i].hash, t->bmask);
		hmap_put(&t->map, v->e[i].hash, i);
		t->bits[b / 64] |= 1ULL << (b % 64);
	}
	if (m)
		m->ix = *t;
}

static const struct velem *index_get(struct index *ix, const struct velem *k)
{
	const struct velem *e = ix->next < ix->v->n ? &ix->v->e[ix->next] : NULL; /* e may be NULL when n is 0 */
	if (e && e->labels == k->labels && e->nlabels == k->nlabels) {
		ix->next++;
		return e;
	}
	const struct hashtab *t = &ix->t;
	size_t b = bit_of(k->hash, t->bmask);
	if (!(t->bits[b / 64] >> (b % 64) & 1))
		return NULL;
	/* the slot's copy of the hash settles most other misses without reading the element */
	struct hmap_iter it = hmap_iter(&t->map, k->hash);
	for (size_t i; (i = hmap_next(&it)) != HMAP_NONE;) {
		e = &ix->v->e[i];
		if (labels_is_equal(e->labels, e->nlabels, k->labels, k->nlabels)) {
			ix->next = i + 1;
			return e;
		}
	}
	return NULL;
}

/* The evaluators named in expr_ops.h's EXPR_BINOPS: the result, and *keep (a comparison's
 * verdict; 1 for arithmetic). */
static inline double op_add(double a, double b, int *keep) { *keep = 1; return a + b; }
static inline double op_sub(double a, double b, int *keep) { *keep = 1; return a - b; }
static inline double op_mul(double a, double b, int *keep) { *keep = 1; return a * b; }
static inline double op_div(double a, double b, int *keep) { *keep = 1; return a / b; }
static inline double op_mod(double a, double b, int *keep) { *keep = 1; return fmod(a, b); }
static inline double op_eq(double a, double b, int *keep) { *keep = a == b; return a; }
static inline double op_ne(double a, double b, int *keep) { *keep = a != b; return a; }
static inline double op_gt(double a, double b, int *keep) { *keep = a > b; return a; }
static inline double op_lt(double a, double b, int *keep) { *keep = a < b; return a; }
static inline double op_ge(double a, double b, int *keep) { *keep = a >= b; return a; }
static inline double op_le(double a, double b, int *keep) { *keep = a <= b; return a; }
static inline double op_none(double a, double b, int *keep) { (void)b; *keep = 1; return a; }

/* A switch, not a table of pointers: the evaluators inline into the per-sample loop. */
static double arith(enum binop op, double a, double b, int *keep)
{
	switch (op) {
#define BINOP_CASE(e, text, prec, word, cls, ev) case e: return ev(a, b, keep);
	EXPR_BINOPS(BINOP_CASE)
#undef BINOP_CASE
	}
	*keep = 1;
	return a;
}

static void eval(struct evalctx *c, const struct expr *x, struct value *out);

static void eval_vec(struct evalctx *c, const struct expr *x, struct cvec *out)
{
	struct value v;
	eval(c, x, &v);
	*out = v.v;
}

static NOINLINE void combine_binary(struct evalctx *c, const struct expr *x, const struct value *l,
				    const struct value *r, struct value *out)
{
	int cmp = expr_binops[x->op].cls == OPC_CMP, keep;
	if (l->scalar && r->scalar) {
		out->scalar = 1;
		out->s = arith(x->op, l->s, r->s, &keep);
		if (cmp)
			out->s = keep;
		return;
	}
	out->scalar = 0;
	if (expr_binops[x->op].cls == OPC_SET) {
		struct index ix;
		size_t cap = l->v.n + (x->op == B_OR ? r->v.n : 0);
		struct velem *o = vec_new(c, &out->v, cap);
		index_build(c, &ix, x->op == B_OR ? l : r);
		for (size_t i = 0; i < l->v.n; i++) {
			int found = x->op == B_OR || index_get(&ix, &l->v.e[i]) != NULL;
			if (x->op == B_UNLESS ? !found : found)
				o[out->v.n++] = l->v.e[i];
		}
		if (x->op == B_OR)
			for (size_t i = 0; i < r->v.n; i++)
				if (!index_get(&ix, &r->v.e[i]))
					o[out->v.n++] = r->v.e[i];
		return;
	}
	const struct cvec *vv = l->scalar ? &r->v : &l->v;
	struct index ix;
	if (!l->scalar && !r->scalar)
		index_build(c, &ix, r);
	struct velem *ov = vec_new(c, &out->v, vv->n);
	for (size_t i = 0; i < vv->n; i++) {
		double a, b;
		const struct velem *e = &vv->e[i];
		if (l->scalar) {
			a = l->s;
			b = e->v;
		} else if (r->scalar) {
			a = e->v;
			b = r->s;
		} else {
			const struct velem *m = index_get(&ix, e);
			if (!m)
				continue;
			a = e->v;
			b = m->v;
		}
		double res = arith(x->op, a, b, &keep);
		if (cmp) {
			if (x->is_bool)
				res = keep;
			else if (!keep)
				continue;
			else
				res = e->v; /* a filter keeps the vector side's value */
		}
		struct velem *o = &ov[out->v.n++];
		*o = *e;
		o->v = res;
	}
}

static void agg_fold(enum agg op, struct velem *g, double *count, double v)
{
	*count += 1;
	switch (op) {
	case A_SUM:
	case A_AVG: g->v += v; break;
	case A_COUNT: g->v += 1; break;
	case A_MIN: if (v < g->v || isnan(g->v)) g->v = v; break;
	case A_MAX: if (v > g->v || isnan(g->v)) g->v = v; break;
	}
}

static void agg_start(enum agg op, struct velem *g, double *count, double v)
{
	*count = 0;
	g->v = op == A_MIN || op == A_MAX ? v : 0;
}

static void eval_binary(struct evalctx *c, const struct expr *x, struct value *out)
{
	struct value l, r;
	eval(c, x->a, &l);
	eval(c, x->b, &r);
	combine_binary(c, x, &l, &r, out);
}

/* Groups are found through a map (hmap.h) that starts small and doubles (a plain sum has one
 * group). */
static NOINLINE void aggregate(struct evalctx *c, const struct expr *x, const struct cvec *in, struct cvec *out)
{
	struct velem *acc = vec_new(c, out, in->n);
	if (!in->n)
		return;
	double *count = arena_alloc(c->a, in->n * sizeof(double));
	size_t nacc = 0;
	if (!x->has_grouping || (!x->without && !x->ngrouping)) {
		/* one group without labels */
		acc[0] = (struct velem){ .hash = labels_hash(NULL, 0) };
		agg_start(x->agg, &acc[0], &count[0], in->e[0].v);
		for (size_t i = 0; i < in->n; i++)
			agg_fold(x->agg, &acc[0], &count[0], in->e[i].v);
		nacc = 1;
		goto out;
	}
	size_t *glen = arena_alloc(c->a, (x->ngrouping ? x->ngrouping : 1) * sizeof(*glen));
	for (size_t g = 0; g < x->ngrouping; g++)
		glen[g] = strlen(x->grouping[g]);
	struct hmap groups = { 0 };
	for (size_t i = 0; i < in->n; i++) {
		const struct velem *e = &in->e[i];
		struct label tmp[64];
		uint32_t n = 0;
		for (uint32_t k = 0; k < e->nlabels && n < 64; k++) {
			int listed = 0;
			for (size_t g = 0; g < x->ngrouping && !listed; g++)
				listed = slice_is_equal(e->labels[k].name, e->labels[k].nlen, x->grouping[g], glen[g]);
			if (x->without ? !listed : listed)
				tmp[n++] = e->labels[k];
		}
		uint32_t hash = labels_hash(tmp, n);
		struct velem *g = NULL;
		struct hmap_iter it = hmap_iter(&groups, hash);
		for (size_t j; (j = hmap_next(&it)) != HMAP_NONE;)
			if (labels_is_equal(acc[j].labels, acc[j].nlabels, tmp, n)) {
				g = &acc[j];
				break;
			}
		if (!g) {
			g = &acc[nacc];
			*g = (struct velem){ .labels = NULL, .nlabels = n, .hash = hash };
			if (n) {
				g->labels = arena_alloc(c->a, n * sizeof(struct label));
				memcpy(g->labels, tmp, n * sizeof(struct label));
			}
			agg_start(x->agg, g, &count[nacc], e->v);
			hmap_put(&groups, hash, nacc++);
		}
		agg_fold(x->agg, g, &count[g - acc], e->v);
	}
	hmap_free(&groups);
out:
	if (x->agg == A_AVG)
		for (size_t i = 0; i < nacc; i++)
			acc[i].v /= count[i];
	out->n = nacc;
}

static void eval_agg(struct evalctx *c, const struct expr *x, struct cvec *out)
{
	struct cvec in;
	eval_vec(c, x->a, &in);
	aggregate(c, x, &in, out);
}

/* The evaluators named in expr_ops.h's EXPR_FUNCS for FN_MAP functions: v is a sample's value,
 * arg the second argument (a number) if any. */
static inline double fn_none(double v, double arg) { (void)arg; return v; }
static inline double fn_abs(double v, double arg) { (void)arg; return fabs(v); }
static inline double fn_ceil(double v, double arg) { (void)arg; return ceil(v); }
static inline double fn_floor(double v, double arg) { (void)arg; return floor(v); }
/* PromQL's round(v, to_nearest): to the nearest multiple of to_nearest (1 when not given), ties up;
 * divided by the inverse, as Prometheus does, so that round(0.2816901, 0.000001) is 0.28169 */
static inline double fn_round(double v, double arg)
{
	if (arg == 0)
		return floor(v + 0.5);
	double inv = 1.0 / arg;
	return floor(v * inv + 0.5) / inv;
}

/* Go's math.Max/math.Min, which PromQL uses: an infinity wins over NaN, NaN over numbers */
static inline double fn_clamp_min(double v, double arg)
{
	if (isinf(v) && v > 0) return v;
	if (isinf(arg) && arg > 0) return arg;
	if (isnan(v) || isnan(arg)) return NAN;
	return v < arg ? arg : v;
}

static inline double fn_clamp_max(double v, double arg)
{
	if (isinf(v) && v < 0) return v;
	if (isinf(arg) && arg < 0) return arg;
	if (isnan(v) || isnan(arg)) return NAN;
	return v > arg ? arg : v;
}

static double fn1(enum func f, double v, double arg)
{
	switch (f) {
#define FUNC_CASE(e, name, nargs, arg0_scalar, returns_scalar, kind, ev) case e: return ev(v, arg);
	EXPR_FUNCS(FUNC_CASE)
#undef FUNC_CASE
	}
	return v;
}

/* PromQL label_replace: when the regex matches the whole source value, set dst to the replacement
 * with $1..$9 / ${1} expanded (an empty result removes dst); otherwise leave the series as it is. */
static void eval_label_replace(struct evalctx *c, const struct expr *x, const struct cvec *in, struct cvec *out)
{
	const char *dst = x->lr->s[0], *src = x->lr->s[2];
	struct velem *o = vec_new(c, out, in->n);
	out->n = in->n;
	for (size_t i = 0; i < in->n; i++) {
		const struct velem *e = &in->e[i];
		o[i] = *e;
		const char *val;
		size_t vlen;
		if (x->lr->is_const) {
			val = x->lr->s[1];
			vlen = strlen(val);
			goto set;
		}
		int si = *src ? labels_find_str(e->labels, e->nlabels, src) : -1;
		char *sv = arena_strndup(c->a, si >= 0 ? e->labels[si].value : "", si >= 0 ? e->labels[si].vlen : 0);
		size_t ngroups = x->lr->re->re_nsub + 1;
		regmatch_t *m = arena_alloc(c->a, ngroups * sizeof(*m));
		if (regexec(x->lr->re, sv, ngroups, m, 0) != 0)
			continue;
		struct buf b;
		buf_init(&b, 0);
		expand_template(&b, x->lr->s[1], sv, m, ngroups);
		char *tmp = buf_steal(&b, &vlen);
		val = arena_strndup(c->a, tmp, vlen);
		free(tmp);
set:;
		struct label *ls = arena_alloc(c->a, (e->nlabels + 1) * sizeof(*ls));
		uint32_t n = 0;
		for (uint32_t k = 0; k < e->nlabels; k++)
			if (!label_has_name(&e->labels[k], dst))
				ls[n++] = e->labels[k];
		if (vlen)
			ls[n++] = label_of(dst, val, vlen);
		labels_sort(ls, n);
		o[i].labels = ls;
		o[i].nlabels = n;
		o[i].hash = labels_hash(ls, n);
	}
}

/* A function of its evaluated arguments a (and b: clamp_min/clamp_max's number). */
static NOINLINE void apply_func(struct evalctx *c, const struct expr *x, const struct value *a, const struct value *b,
				struct value *out)
{
	if (expr_funcs[x->fn].kind == FN_VECTOR) {
		struct velem *o = vec_new(c, &out->v, 1);
		o[out->v.n++] = (struct velem){ .v = a->s, .hash = labels_hash(NULL, 0) };
		return;
	}
	if (expr_funcs[x->fn].kind == FN_LABEL_REPLACE) {
		eval_label_replace(c, x, &a->v, &out->v);
		return;
	}
	if (expr_funcs[x->fn].kind == FN_SCALAR) {
		out->scalar = 1;
		out->s = a->v.n == 1 ? a->v.e[0].v : NAN;
		return;
	}
	struct velem *o = vec_new(c, &out->v, a->v.n);
	out->v.n = a->v.n;
	for (size_t i = 0; i < a->v.n; i++) {
		o[i] = a->v.e[i];
		o[i].v = fn1(x->fn, a->v.e[i].v, b->s);
	}
}

static void eval_node(struct evalctx *c, const struct expr *x, struct value *out);

/* Results are never modified after they are made, so a repeated subexpression's first result can
 * be handed out again. */
static void eval(struct evalctx *c, const struct expr *x, struct value *out)
{
	struct expr_memo *m = x->memo && x->memo <= c->src->nmemo && c->src->memo ? &c->src->memo[x->memo - 1] : NULL;
	if (m && m->done) {
		*out = m->v;
		return;
	}
	struct arena *row = c->a;
	if (m && c->src->memo_arena)
		c->a = c->src->memo_arena; /* a shared result must outlive the row that made it */
	eval_node(c, x, out);
	c->a = row;
	if (m && !c->failed) {
		out->memo = m;
		m->v = *out;
		m->done = 1;
	}
}

static void eval_node(struct evalctx *c, const struct expr *x, struct value *out)
{
	memset(out, 0, sizeof(*out));
	if (c->failed)
		return;
	switch ((enum kind)x->kind) {
	case K_NUM:
		out->scalar = 1;
		out->s = x->num;
		return;
	case K_SEL:
		eval_selector(c, x, &out->v);
		return;
	case K_AGG:
		eval_agg(c, x, &out->v);
		return;
	case K_BIN:
		eval_binary(c, x, out);
		return;
	case K_NEG: {
		eval(c, x->a, out);
		out->memo = NULL; /* a new value, not the operand's */
		if (out->scalar) {
			out->s = -out->s;
			return;
		}
		struct velem *e = arena_alloc(c->a, (out->v.n ? out->v.n : 1) * sizeof(*e));
		for (size_t i = 0; i < out->v.n; i++) {
			e[i] = out->v.e[i];
			e[i].v = -e[i].v;
		}
		out->v.e = e;
		return;
	}
	case K_FUNC: {
		struct value a, b = { 0 };
		eval(c, x->a, &a);
		if (x->b)
			eval(c, x->b, &b);
		apply_func(c, x, &a, &b, out);
		return;
	}
	}
}

int expr_eval(const struct expr *x, const struct expr_source *src, struct arena *a, struct vec *out,
	      char *errmsg, size_t errlen, const char **missing)
{
	struct evalctx c = { src, a, errmsg, errlen, 0, NULL };
	struct value v;
	eval(&c, x, &v);
	if (missing)
		*missing = c.missing;
	if (c.failed) {
		out->e = NULL;
		out->n = 0;
		return -1;
	}
	if (v.scalar) {
		out->e = arena_alloc(a, sizeof(struct velem));
		out->n = 1;
		out->e[0] = (struct velem){ .v = v.s, .hash = labels_hash(NULL, 0) };
	} else {
		/* the one place const is dropped: expr.h tells the caller the result is read-only
		 * (a payload's samples or a shared result) */
		out->e = (struct velem *)v.v.e;
		out->n = v.v.n;
	}
	return 0;
}

struct expr_memo *expr_memo_alloc(struct arena *a, size_t nmemo)
{
	struct expr_memo *m = arena_alloc(a, (nmemo ? nmemo : 1) * sizeof(*m));
	memset(m, 0, (nmemo ? nmemo : 1) * sizeof(*m));
	return m;
}
