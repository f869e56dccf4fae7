/* expr_memo.c: the pass that finds shared subexpressions among the compiled trees. */
#include "expr_int.h"
#include "hmap.h"
#include "names.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- shared subexpressions ---- */

/* Subexpressions are shared when they print the same PromQL text. Printing each one and sorting
 * the texts was quadratic in a chain's length; instead each node gets a class, bottom-up: two nodes
 * are in one class when their own fields are equal (as printed: every NaN alike, -0 apart from 0)
 * and their operands are in the same classes. print_rec writes every field it compares and nothing
 * else, and its output compiles back to the same tree, so that is printing the same text. Classes
 * are found in one map (hmap.h) of representatives: each node is hashed once from its fields and its
 * operands' classes, and compared (shallowly) only with representatives of the same hash. The
 * table and the per-class arrays grow with the classes, not the nodes: a large table usually
 * repeats itself (tests/bench/gen_mapping.py's dense.json: docs/performance.md). */
struct memo_class {
	uint32_t count;             /* how many nodes of an eligible kind (saturating at 2) */
	uint32_t slot;              /* its memo slot, 0 if none yet */
	struct expr *rep;           /* one node of the class */
};

struct memo_pass {
	struct hmap idx;            /* the classes by their nodes' memo_hash (hmap.h) */
	size_t nclass;
	struct memo_class *cls;     /* per class */
	size_t cls_cap;
	size_t slots;
	size_t work;
};

static uint64_t mix(uint64_t h, uint64_t v)
{
	h ^= v + 0x9E3779B97F4A7C15ULL + (h << 6) + (h >> 2);
	return h * 0xFF51AFD7ED558CCDULL;
}

static uint64_t mix_str(struct memo_pass *mp, uint64_t h, const char *s)
{
	size_t n = strlen(s);
	mp->work += n;
	return mix(h, fnv1a(s, n) ^ n);
}

static int str_is_same(struct memo_pass *mp, const char *a, const char *b)
{
	size_t n = 0;
	while (a[n] && a[n] == b[n])
		n++;
	mp->work += n + 1;
	return a[n] == b[n];
}

/* The number as printed: every NaN prints "NaN", and %.17g tells every other double apart. */
static uint64_t num_bits(double d)
{
	uint64_t u;
	if (isnan(d))
		d = NAN;
	memcpy(&u, &d, sizeof(u));
	return u;
}

/* x's own fields, and its operands' classes. */
static uint64_t node_hash(struct memo_pass *mp, const struct expr *x)
{
	uint64_t h = mix((uint64_t)x->kind + 1, x->a ? x->a->memo_class + 1 : 0);
	h = mix(h, x->b ? x->b->memo_class + 1 : 0);
	switch ((enum kind)x->kind) {
	case K_NUM:
		return mix(h, num_bits(x->num));
	case K_SEL:
		h = mix_str(mp, h, x->metric);
		for (size_t i = 0; i < x->nm; i++)
			h = mix_str(mp, mix_str(mp, mix(h, x->m[i].op), x->m[i].label), x->m[i].value);
		return h;
	case K_AGG:
		h = mix(h, (uint64_t)x->agg << 2 | (uint64_t)x->has_grouping << 1 | (uint64_t)x->without);
		for (size_t i = 0; i < x->ngrouping; i++)
			h = mix_str(mp, h, x->grouping[i]);
		return mix(h, x->ngrouping);
	case K_BIN:
		return mix(h, (uint64_t)x->op << 1 | (uint64_t)x->is_bool);
	case K_NEG:
		return h;
	case K_FUNC:
		h = mix(h, x->fn);
		for (int i = 0; x->fn == F_LABEL_REPLACE && i < 4; i++)
			h = mix_str(mp, h, x->lr->s[i]);
		return h;
	}
	return h;
}

static int operand_is_same(const struct expr *a, const struct expr *b)
{
	return a ? b && a->memo_class == b->memo_class : !b;
}

/* x and y print the same, given that their operands are classed. */
static int node_is_same(struct memo_pass *mp, const struct expr *x, const struct expr *y)
{
	if (x->kind != y->kind || !operand_is_same(x->a, y->a) || !operand_is_same(x->b, y->b))
		return 0;
	switch ((enum kind)x->kind) {
	case K_NUM:
		return num_bits(x->num) == num_bits(y->num);
	case K_SEL:
		if (x->nm != y->nm || !str_is_same(mp, x->metric, y->metric))
			return 0;
		for (size_t i = 0; i < x->nm; i++)
			if (x->m[i].op != y->m[i].op || !str_is_same(mp, x->m[i].label, y->m[i].label) ||
			    !str_is_same(mp, x->m[i].value, y->m[i].value))
				return 0;
		return 1;
	case K_AGG:
		if (x->agg != y->agg || x->has_grouping != y->has_grouping || x->without != y->without ||
		    x->ngrouping != y->ngrouping)
			return 0;
		for (size_t i = 0; i < x->ngrouping; i++)
			if (!str_is_same(mp, x->grouping[i], y->grouping[i]))
				return 0;
		return 1;
	case K_BIN:
		return x->op == y->op && x->is_bool == y->is_bool;
	case K_NEG:
		return 1;
	case K_FUNC:
		if (x->fn != y->fn)
			return 0;
		for (int i = 0; x->fn == F_LABEL_REPLACE && i < 4; i++)
			if (!str_is_same(mp, x->lr->s[i], y->lr->s[i]))
				return 0;
		return 1;
	}
	return 0;
}

static int memo_is_eligible(const struct expr *x)
{
	return x->kind == K_BIN || x->kind == K_AGG || x->kind == K_FUNC || x->kind == K_NEG;
}

static size_t count_nodes(const struct expr *x)
{
	return x ? 1 + count_nodes(x->a) + count_nodes(x->b) : 0;
}

/* A new class, represented by x. */
static void new_class(struct memo_pass *mp, struct expr *x)
{
	x->memo_class = (uint32_t)mp->nclass;
	mp->cls = xgrow(mp->cls, &mp->cls_cap, mp->nclass + 1, sizeof(*mp->cls));
	mp->cls[mp->nclass] = (struct memo_class){ 0, 0, x };
	hmap_put(&mp->idx, x->memo_hash, mp->nclass++);
}

/* Post-order: class the operands, then x. */
static void classify(struct memo_pass *mp, struct expr *x)
{
	if (!x)
		return;
	classify(mp, x->a);
	classify(mp, x->b);
	uint64_t h = node_hash(mp, x);
	x->memo_hash = (uint32_t)(h ^ h >> 29);
	struct hmap_iter it = hmap_iter(&mp->idx, x->memo_hash);
	size_t k;
	mp->work++;
	while ((k = hmap_next(&it)) != HMAP_NONE) {
		mp->work++;
		if (node_is_same(mp, mp->cls[k].rep, x))
			break;
	}
	if (k == HMAP_NONE)
		new_class(mp, x);
	else
		x->memo_class = (uint32_t)k;
	struct memo_class *c = &mp->cls[x->memo_class];
	if (memo_is_eligible(x))
		c->count += c->count < 2; /* only "more than once" matters */
}

/* Pre-order, as the slots were numbered before: a class seen twice or more gets the next slot. */
static void number(struct memo_pass *mp, struct expr *x)
{
	if (!x)
		return;
	mp->work++;
	x->memo = 0;
	struct memo_class *c = &mp->cls[x->memo_class];
	if (memo_is_eligible(x) && c->count > 1) {
		if (!c->slot)
			c->slot = (uint32_t)++mp->slots;
		x->memo = c->slot;
	}
	number(mp, x->a);
	number(mp, x->b);
}

size_t expr_memo_assign_work(struct expr *const *roots, size_t n, size_t *work)
{
	struct memo_pass mp = { 0 };
	size_t nodes = 0;
	for (size_t i = 0; i < n; i++)
		nodes += count_nodes(roots[i]);
	mp.work = nodes;
	for (size_t i = 0; i < n; i++)
		classify(&mp, roots[i]);
	for (size_t i = 0; i < n; i++)
		number(&mp, roots[i]);
	hmap_free(&mp.idx);
	free(mp.cls);
	if (work)
		*work = mp.work;
	return mp.slots;
}
