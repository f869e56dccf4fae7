/* expr_parse.c: the lexer and recursive-descent parser of the PromQL subset in expr.h. */
#include "expr_int.h"
#include "names.h"

#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The tables of expr_ops.h. */
#define BINOP_INFO(e, text, prec, word, cls, ev) [e] = { text, prec, word, cls },
const struct binop_info expr_binops[N_BINOPS] = { EXPR_BINOPS(BINOP_INFO) };
#define AGG_NAME(e, name) [e] = name,
const char *const expr_agg_names[N_AGGS] = { EXPR_AGGS(AGG_NAME) };
#define FUNC_INFO(e, name, nargs, arg0_scalar, returns_scalar, kind, ev) \
	[e] = { name, nargs, arg0_scalar, returns_scalar, kind },
const struct func_info expr_funcs[N_FUNCS] = { EXPR_FUNCS(FUNC_INFO) };
#define MOP_INFO(e, text, regex, negated) [e] = { text, regex, negated },
const struct mop_info expr_mops[N_MOPS] = { EXPR_MATCHERS(MOP_INFO) };

/* ---- the tree's pool ---- */

/* Every node, string, array and regex of a tree comes from its pool, so compiling makes no malloc
 * per node or token and expr_free is one walk over a few chunks, not over the tree. The first
 * chunk is allocated with the tree, sized from the source (pool_estimate), so most trees are one
 * malloc; further chunks double up to POOL_MAX. */
#define POOL_MAX (256 * 1024)

/* Under AddressSanitizer every pool allocation is its own heap block, as the arena's (xmalloc.h). */
#define POOL_EXACT SHIM_ASAN

/* Pool objects (nodes, strings, arrays, regex_t) are aligned to 8 bytes, not malloc's 16: a
 * short name takes 8. */
#define POOL_ALIGN 8
#define POOL_ROUND(n) (((n) + POOL_ALIGN - 1) & ~(size_t)(POOL_ALIGN - 1))

struct pool_chunk {
	struct pool_chunk *next;
	size_t cap, used;
	uint64_t data[];
};

/* The block expr_compile returns the root of (expr_free finds it from the root). */
struct expr_tree {
	struct pool_chunk *chunks;
	struct expr_re *res;        /* every regex of the tree, to regfree */
	struct expr root;           /* a copy of the parsed root: nothing points at a root */
};

_Static_assert(sizeof(struct expr) == 64, "a node is one cache line");
_Static_assert(_Alignof(struct expr) <= POOL_ALIGN && _Alignof(regex_t) <= POOL_ALIGN &&
		       _Alignof(struct expr_re) <= POOL_ALIGN && _Alignof(struct matcher) <= POOL_ALIGN &&
		       _Alignof(struct lrep) <= POOL_ALIGN && sizeof(struct expr_tree) % POOL_ALIGN == 0,
	       "pool objects fit its alignment");

static void *pool_alloc(struct expr_tree *t, size_t n)
{
	struct pool_chunk *c = t->chunks;
	n = POOL_EXACT ? n : POOL_ROUND(n);
	if (POOL_EXACT || c->cap - c->used < n) {
		size_t cap = POOL_EXACT ? 0 : c->cap * 2;
		if (cap > POOL_MAX)
			cap = POOL_MAX;
		if (cap < n)
			cap = n;
		struct pool_chunk *nc = xmalloc(sizeof(*nc) + cap);
		nc->next = c;
		nc->cap = cap;
		nc->used = 0;
		t->chunks = c = nc;
	}
	void *r = (char *)c->data + c->used;
	c->used += n;
	return r;
}

static char *pool_strndup(struct expr_tree *t, const char *s, size_t n)
{
	char *d = pool_alloc(t, n + 1);
	memcpy(d, s, n);
	d[n] = '\0';
	return d;
}

/* Room for element n of an array growing in the pool: doubles at powers of two (the old copies stay
 * in the pool, less than the final array). */
static void *pool_grow(struct expr_tree *t, void *old, size_t n, size_t size)
{
	if (n && (n < 4 || (n & (n - 1))))
		return old;
	void *a = pool_alloc(t, (n ? 2 * n : 4) * size);
	if (n)
		memcpy(a, old, n * size);
	return a;
}

/* Compile a regex into the tree (expr_free regfree()s it). Returns it, or NULL with *why set. */
static regex_t *pool_regex(struct expr_tree *t, const char *src, int cflags, const char **why)
{
	struct expr_re *r = pool_alloc(t, sizeof(*r));
	if (compile_re(&r->re, src, cflags, why) < 0)
		return NULL;
	r->next = t->res;
	t->res = r;
	return &r->re;
}

static void tree_free(struct expr_tree *t)
{
	for (struct expr_re *r = t->res; r; r = r->next)
		regfree(&r->re);
	for (struct pool_chunk *c = t->chunks, *next; c; c = next) {
		next = c->next;
		if (c != (struct pool_chunk *)(t + 1)) /* the first is part of t's block */
			free(c);
	}
	free(t);
}

/* About what the pool of src will hold: at most a node for each word or operator character, and
 * each name and string (8-byte rounded). An estimate: a short first chunk only means a second. */
static size_t pool_estimate(const char *src, size_t len)
{
	size_t words = 0, ops = 0;
	for (size_t i = 0; i < len; i++) {
		if (is_name_char(src[i]))
			words += !i || !is_name_char(src[i - 1]);
		else
			ops += strchr("+-*/%=<>", src[i]) != NULL;
	}
	return (words + ops) * sizeof(struct expr) + len + words * POOL_ALIGN + 2 * POOL_ALIGN;
}

/* A tree with its first chunk in the same block. */
static struct expr_tree *tree_new(const char *src, size_t len)
{
	size_t cap = pool_estimate(src, len);
	cap = POOL_ROUND(cap);
	struct expr_tree *t = xmalloc(sizeof(*t) + sizeof(struct pool_chunk) + cap);
	struct pool_chunk *c = (struct pool_chunk *)(t + 1);
	c->next = NULL;
	c->cap = cap;
	c->used = 0;
	t->chunks = c;
	t->res = NULL;
	return t;
}

static struct expr_tree *tree_of(const struct expr *x)
{
	return (struct expr_tree *)(void *)((char *)x - offsetof(struct expr_tree, root));
}

size_t expr_footprint(const struct expr *x, size_t *blocks)
{
	const struct expr_tree *t = tree_of(x);
	size_t bytes = sizeof(*t), n = 1;
	for (const struct pool_chunk *c = t->chunks; c; c = c->next) {
		bytes += sizeof(*c) + c->cap;
		n += c != (const struct pool_chunk *)(t + 1);
	}
	if (blocks)
		*blocks = n;
	return bytes;
}

void expr_free(struct expr *x)
{
	if (x)
		tree_free(tree_of(x));
}

/* ---- lexer ---- */

enum tok { T_EOF, T_NUM, T_IDENT, T_STR, T_LP, T_RP, T_LB, T_RB, T_COMMA, T_OP, T_ERR };

struct parser {
	const char *src;
	size_t len, pos;          /* cursor */
	enum tok t;               /* current token */
	size_t tpos, tlen;        /* its span */
	double num;
	char *str;                /* decoded string literal (in the pool) */
	struct expr_tree *tree;   /* where the nodes go */
	char op[4];
	size_t errpos;
	char *err;
	size_t errlen;
	int failed;
	const char *missing;
	int nest;                 /* parse_expr calls under way (at most EXPR_MAX_NESTING) */
};

static void fail(struct parser *p, size_t pos, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void fail(struct parser *p, size_t pos, const char *fmt, ...)
{
	va_list ap;
	if (p->failed)
		return;
	p->failed = 1;
	p->errpos = pos;
	va_start(ap, fmt);
	vsnprintf(p->err, p->errlen, fmt, ap);
	va_end(ap);
}

/* A number at the cursor. */
static void lex_number(struct parser *p)
{
	const char *s = p->src;
	char tmp[64];
	size_t n = 0;
	while (p->pos < p->len && n < sizeof(tmp) - 1 &&
	       ((s[p->pos] >= '0' && s[p->pos] <= '9') || s[p->pos] == '.' || s[p->pos] == 'e' || s[p->pos] == 'E' ||
		((s[p->pos] == '+' || s[p->pos] == '-') && n > 0 && (tmp[n - 1] == 'e' || tmp[n - 1] == 'E'))))
		tmp[n++] = s[p->pos++];
	tmp[n] = '\0';
	char *end;
	p->num = strtod(tmp, &end);
	if (*end) {
		fail(p, p->tpos, "invalid number '%s'", tmp);
		p->t = T_ERR;
		return;
	}
	p->t = T_NUM;
}

/* A string literal at the cursor (quote q), decoded into the tree's pool: its end is found first,
 * so the copy is as long as the literal. */
static void lex_string(struct parser *p, char q)
{
	const char *s = p->src;
	size_t start = ++p->pos, end = start;
	while (end < p->len && s[end] != q)
		end += (s[end] == '\\' && end + 1 < p->len) ? 2 : 1;
	if (end >= p->len) {
		p->pos = p->len;
		fail(p, p->tpos, "unterminated string");
		p->t = T_ERR;
		return;
	}
	char *d = pool_alloc(p->tree, end - start + 1), *o = d;
	while (p->pos < end) {
		char ch = s[p->pos++];
		if (ch == '\\' && p->pos < end) {
			ch = s[p->pos++];
			if (ch == 'n')
				ch = '\n';
			else if (ch == 't')
				ch = '\t';
			else if (ch != '\\' && ch != '"' && ch != '\'')
				*o++ = '\\'; /* keep unknown escapes (regex classes like \d) verbatim */
		}
		*o++ = ch;
	}
	*o = '\0';
	p->pos = end + 1;
	p->str = d;
	p->t = T_STR;
}

/* Punctuation or an operator at the cursor. */
static void lex_punct(struct parser *p, char c)
{
	static const char *const ops[] = { "==", "!=", ">=", "<=", "=~", "!~", "+", "-", "*", "/", "%",
					   ">", "<", "=" };
	p->t = T_ERR;
	switch (c) {
	case '(': p->t = T_LP; break;
	case ')': p->t = T_RP; break;
	case '{': p->t = T_LB; break;
	case '}': p->t = T_RB; break;
	case ',': p->t = T_COMMA; break;
	}
	if (p->t != T_ERR) {
		p->pos++;
		return;
	}
	for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
		size_t n = ops[i][1] ? 2 : 1;
		if (p->pos + n <= p->len && memcmp(p->src + p->pos, ops[i], n) == 0) {
			memcpy(p->op, ops[i], n + 1);
			p->pos += n;
			p->t = T_OP;
			return;
		}
	}
	fail(p, p->tpos, "unexpected character '%c'", c);
}

static void next(struct parser *p)
{
	const char *s = p->src;
	p->str = NULL;
	while (p->pos < p->len && (s[p->pos] == ' ' || s[p->pos] == '\t' || s[p->pos] == '\n' || s[p->pos] == '\r'))
		p->pos++;
	p->tpos = p->pos;
	if (p->pos >= p->len) {
		p->t = T_EOF;
		p->tlen = 0;
		return;
	}
	char c = s[p->pos];
	if ((c >= '0' && c <= '9') || (c == '.' && p->pos + 1 < p->len && s[p->pos + 1] >= '0' && s[p->pos + 1] <= '9')) {
		lex_number(p);
	} else if (is_name_start(c)) {
		while (p->pos < p->len && is_name_char(s[p->pos]))
			p->pos++;
		p->t = T_IDENT;
		size_t n = p->pos - p->tpos;
		if ((n == 3 && strncasecmp(s + p->tpos, "nan", 3) == 0) ||
		    (n == 3 && strncasecmp(s + p->tpos, "inf", 3) == 0)) {
			p->t = T_NUM;
			p->num = tolower((unsigned char)c) == 'n' ? NAN : INFINITY;
		}
	} else if (c == '"' || c == '\'') {
		lex_string(p, c);
	} else {
		lex_punct(p, c);
	}
	p->tlen = p->pos - p->tpos;
}

/* The current token is the identifier w (the first byte is tested first: most tokens are names;
 * strncmp stops at w's end, so no strlen of every keyword for every token). */
static int is_ident(const struct parser *p, const char *w)
{
	return p->t == T_IDENT && p->src[p->tpos] == w[0] && strncmp(p->src + p->tpos, w, p->tlen) == 0 &&
	       w[p->tlen] == '\0';
}

static int is_op(const struct parser *p, const char *o)
{
	return p->t == T_OP && strcmp(p->op, o) == 0;
}

static char *tok_dup(const struct parser *p)
{
	return pool_strndup(p->tree, p->src + p->tpos, p->tlen);
}

static int expect(struct parser *p, enum tok t, const char *what)
{
	if (p->t != t) {
		fail(p, p->tpos, "expected %s", what);
		return -1;
	}
	next(p);
	return 0;
}

static struct expr *node(struct parser *p, enum kind k, size_t pos)
{
	struct expr *x = pool_alloc(p->tree, sizeof(*x));
	memset(x, 0, sizeof(*x));
	x->kind = (uint8_t)k;
	x->pos = (uint32_t)pos;
	x->depth = 1;
	return x;
}

/* Set x's depth from its operands'. Every walk over a tree (evaluation, printing, the memo pass)
 * recurses once per level, so a tree deeper than EXPR_MAX_DEPTH is refused here, where
 * it is built: a chain `a + b + c ...` is built by a loop, not by recursion, and is as deep as it
 * is long. Returns -1 (and fails) past the limit. */
static int set_depth(struct parser *p, struct expr *x)
{
	unsigned d = x->a ? x->a->depth : 0;
	if (x->b && x->b->depth > d)
		d = x->b->depth;
	x->depth = d + 1;
	if (x->depth <= EXPR_MAX_DEPTH)
		return 0;
	fail(p, x->pos, "expression deeper than %d levels (each operator, function, aggregation or unary minus "
			"is one)", EXPR_MAX_DEPTH);
	return -1;
}

/* ---- parser ---- */

static struct expr *parse_expr(struct parser *p, int minprec);

static int parse_label_list(struct parser *p, struct expr *x)
{
	if (expect(p, T_LP, "'(' after by/without") < 0)
		return -1;
	while (p->t != T_RP) {
		if (p->t != T_IDENT || memchr(p->src + p->tpos, ':', p->tlen)) {
			fail(p, p->tpos, "expected a label name");
			return -1;
		}
		x->grouping = pool_grow(p->tree, x->grouping, x->ngrouping, sizeof(*x->grouping));
		x->grouping[x->ngrouping++] = tok_dup(p);
		next(p);
		if (p->t == T_COMMA)
			next(p);
		else if (p->t != T_RP) {
			fail(p, p->tpos, "expected ',' or ')' in label list");
			return -1;
		}
	}
	next(p);
	x->has_grouping = 1;
	return 0;
}


static struct expr *parse_selector(struct parser *p)
{
	struct expr *x = node(p, K_SEL, p->tpos);
	x->metric = tok_dup(p);
	next(p);
	if (p->t != T_LB)
		return x;
	next(p);
	while (p->t != T_RB) {
		if (p->t != T_IDENT) {
			fail(p, p->tpos, "expected a label name in selector");
			return NULL;
		}
		x->m = pool_grow(p->tree, x->m, x->nm, sizeof(*x->m));
		struct matcher *m = &x->m[x->nm];
		memset(m, 0, sizeof(*m));
		m->label = tok_dup(p);
		x->nm++;
		next(p);
		m->op = N_MOPS;
		for (int k = 0; k < N_MOPS; k++)
			if (is_op(p, expr_mops[k].text))
				m->op = (enum mop)k;
		if (m->op == N_MOPS) {
			fail(p, p->tpos, "expected =, !=, =~ or !~ after label name");
			return NULL;
		}
		next(p);
		if (p->t != T_STR) {
			fail(p, p->tpos, "expected a quoted string");
			return NULL;
		}
		m->value = p->str;
		if (expr_mops[m->op].regex) {
			const char *why;
			if (!(m->re = pool_regex(p->tree, m->value, REG_EXTENDED | REG_NOSUB, &why))) {
				fail(p, p->tpos, "%s", why);
				return NULL;
			}
		}
		next(p);
		if (p->t == T_COMMA)
			next(p);
		else if (p->t != T_RB) {
			fail(p, p->tpos, "expected ',' or '}' in selector");
			return NULL;
		}
	}
	next(p);
	return x;
}

/* The four string arguments of label_replace(v, "dst", "replacement", "src", "regex"). */
static int parse_label_replace_args(struct parser *p, struct expr *x)
{
	static const char *const what[] = { "destination label", "replacement", "source label", "regex" };
	size_t re_at = p->tpos;
	x->lr = pool_alloc(p->tree, sizeof(*x->lr));
	memset(x->lr, 0, sizeof(*x->lr));
	for (int i = 0; i < 4; i++) {
		if (expect(p, T_COMMA, "',' between arguments") < 0)
			return -1;
		if (p->t != T_STR) {
			fail(p, p->tpos, "label_replace(): the %s must be a quoted string", what[i]);
			return -1;
		}
		x->lr->s[i] = p->str;
		size_t at = p->tpos;
		re_at = at;
		next(p);
		if ((i == 0 || (i == 2 && *x->lr->s[2])) && !names_is_label_name(x->lr->s[i])) {
			fail(p, at, "label_replace(): \"%s\" is not a valid label name", x->lr->s[i]);
			return -1;
		}
	}
	const char *why;
	if (!(x->lr->re = pool_regex(p->tree, x->lr->s[3], REG_EXTENDED, &why))) {
		fail(p, re_at, "label_replace(): %s", why);
		return -1;
	}
	/* label_replace(v, "status", "idle", "", "") and the like: the source is always "", the
	 * regex matches "" and the replacement has no $ reference, so the result is a constant */
	x->lr->is_const = !*x->lr->s[2] && !strchr(x->lr->s[1], '$') && regexec(x->lr->re, "", 0, NULL, 0) == 0;
	return 0;
}

/* An aggregation; the current token is its name. Grouping before or after the argument. */
static struct expr *parse_agg(struct parser *p, int ag, size_t pos)
{
	struct expr *x = node(p, K_AGG, pos);
	x->agg = (enum agg)ag;
	next(p);
	if (is_ident(p, "by") || is_ident(p, "without")) {
		x->without = is_ident(p, "without");
		next(p);
		if (parse_label_list(p, x) < 0)
			return NULL;
	}
	if (expect(p, T_LP, "'(' after aggregation") < 0)
		return NULL;
	x->a = parse_expr(p, 0);
	if (!x->a || set_depth(p, x) < 0)
		return NULL;
	if (x->a->scalar) {
		fail(p, x->a->pos, "%s() needs a vector, got a number", expr_agg_names[ag]);
		return NULL;
	}
	if (expect(p, T_RP, "')' to close aggregation") < 0)
		return NULL;
	if (!x->has_grouping && (is_ident(p, "by") || is_ident(p, "without"))) {
		x->without = is_ident(p, "without");
		next(p);
		if (parse_label_list(p, x) < 0)
			return NULL;
	}
	return x;
}

/* A function call; the current token is its name, followed by '('. */
static struct expr *parse_func(struct parser *p, int fn, size_t pos)
{
	struct expr *x = node(p, K_FUNC, pos);
	x->fn = (enum func)fn;
	x->scalar = expr_funcs[fn].returns_scalar;
	next(p);
	next(p); /* '(' */
	struct expr **slot[2] = { &x->a, &x->b };
	int nargs = expr_funcs[fn].nargs;
	for (int i = 0; i < nargs; i++) {
		if (i > 0 && expect(p, T_COMMA, "',' between arguments") < 0)
			return NULL;
		*slot[i] = parse_expr(p, 0);
		if (!*slot[i])
			return NULL;
		if (expr_funcs[fn].kind == FN_LABEL_REPLACE && i == 0) {
			if (parse_label_replace_args(p, x) < 0)
				return NULL;
			if ((*slot[0])->scalar) {
				fail(p, (*slot[0])->pos, "argument 1 of label_replace() must be a vector");
				return NULL;
			}
			break;
		}
		int want_scalar = i == 0 ? expr_funcs[fn].arg0_scalar : 1;
		if ((*slot[i])->scalar != want_scalar) {
			fail(p, (*slot[i])->pos, "argument %d of %s() must be a %s", i + 1, expr_funcs[fn].name,
			     want_scalar ? "number" : "vector");
			return NULL;
		}
		if (fn == F_ROUND && i == 0 && p->t == T_COMMA) /* round(v, to_nearest): PromQL's optional argument */
			nargs = 2;
	}
	if (expect(p, T_RP, "')' after arguments") < 0 || set_depth(p, x) < 0)
		return NULL;
	return x;
}

/* A unary sign and its operand; the current token is the sign. */
static struct expr *parse_unary(struct parser *p, size_t pos)
{
	int neg = is_op(p, "-");
	next(p);
	struct expr *a = parse_expr(p, EXPR_PREC_UNARY);
	if (!a)
		return NULL;
	if (!neg)
		return a;
	if (a->kind == K_NUM) {
		a->num = -a->num;
		return a;
	}
	struct expr *x = node(p, K_NEG, pos);
	x->a = a;
	x->scalar = a->scalar;
	if (set_depth(p, x) < 0)
		return NULL;
	return x;
}

/* An identifier: an aggregation, a function call, or a selector. */
static struct expr *parse_named(struct parser *p, size_t pos)
{
	static const char *const reserved[] = { "by", "without", "bool", "and", "or", "unless", "on", "ignoring",
						"group_left", "group_right", "offset" };
	if (p->tlen < 2 || p->tlen > EXPR_KW_MAX)
		return parse_selector(p); /* no keyword is that long or short */
	for (int ag = 0; ag < N_AGGS; ag++)
		if (is_ident(p, expr_agg_names[ag]))
			return parse_agg(p, ag, pos);
	for (int fn = 0; fn < N_FUNCS; fn++) {
		if (!is_ident(p, expr_funcs[fn].name) || p->pos >= p->len)
			continue;
		/* a function only when followed by '(' (a metric may be called "floor") */
		size_t q = p->pos;
		while (q < p->len && (p->src[q] == ' ' || p->src[q] == '\t'))
			q++;
		if (q < p->len && p->src[q] == '(')
			return parse_func(p, fn, pos);
	}
	for (size_t i = 0; i < sizeof(reserved) / sizeof(reserved[0]); i++)
		if (is_ident(p, reserved[i])) {
			fail(p, pos, "unexpected keyword '%.*s'", (int)p->tlen, p->src + p->tpos);
			return NULL;
		}
	return parse_selector(p);
}

static struct expr *parse_primary(struct parser *p)
{
	size_t pos = p->tpos;
	if (p->t == T_NUM) {
		struct expr *x = node(p, K_NUM, pos);
		x->num = p->num;
		x->scalar = 1;
		next(p);
		return x;
	}
	if (p->t == T_LP) {
		next(p);
		struct expr *x = parse_expr(p, 0);
		if (!x)
			return NULL;
		if (expect(p, T_RP, "')'") < 0)
			return NULL;
		return x;
	}
	if (p->t == T_OP && (is_op(p, "-") || is_op(p, "+")))
		return parse_unary(p, pos);
	if (p->t != T_IDENT) {
		fail(p, pos, p->t == T_EOF ? "unexpected end of expression" : "expected a metric name, number, function or '('");
		return NULL;
	}
	return parse_named(p, pos);
}

/* The binary operator at the current token, and its precedence (0 if none). */
static int binop_at(struct parser *p, enum binop *op)
{
	if (p->t != T_OP && (p->t != T_IDENT || p->tlen < 2 || p->tlen > EXPR_KW_MAX))
		return 0;
	for (int i = 0; i < N_BINOPS; i++)
		if (expr_binops[i].word ? is_ident(p, expr_binops[i].text) : is_op(p, expr_binops[i].text)) {
			*op = (enum binop)i;
			return expr_binops[i].prec;
		}
	return 0;
}

static struct expr *parse_binary(struct parser *p, int minprec)
{
	struct expr *lhs = parse_primary(p);
	enum binop op = B_ADD;
	int prec;
	while (lhs && (prec = binop_at(p, &op)) > minprec) {
		struct expr *x = node(p, K_BIN, p->tpos);
		x->op = op;
		x->a = lhs;
		lhs = x;
		next(p);
		if (is_ident(p, "bool")) {
			if (expr_binops[op].cls != OPC_CMP) {
				fail(p, p->tpos, "'bool' only goes with a comparison");
				return NULL;
			}
			x->is_bool = 1;
			next(p);
		}
		if (is_ident(p, "on") || is_ident(p, "ignoring") || is_ident(p, "group_left") || is_ident(p, "group_right")) {
			fail(p, p->tpos, "'%.*s' is not supported: vectors match on identical label sets", (int)p->tlen,
			     p->src + p->tpos);
			return NULL;
		}
		x->b = parse_expr(p, prec);
		if (!x->b || set_depth(p, x) < 0)
			return NULL;
		int sa = x->a->scalar, sb = x->b->scalar;
		if (expr_binops[op].cls == OPC_SET && (sa || sb)) {
			fail(p, x->pos, "'%s' needs vectors on both sides", expr_binops[op].text);
			return NULL;
		}
		if (expr_binops[op].cls == OPC_CMP && sa && sb && !x->is_bool) {
			fail(p, x->pos, "comparison between two numbers needs 'bool'");
			return NULL;
		}
		x->scalar = sa && sb;
	}
	return lhs;
}

/* The parser recurses here for every parenthesis, unary sign, argument and right operand, which
 * build no node of their own ("((((x))))" is one node): bound that recursion too. */
static struct expr *parse_expr(struct parser *p, int minprec)
{
	if (p->nest >= EXPR_MAX_NESTING) {
		fail(p, p->tpos, "expression nested deeper than %d levels (parentheses, arguments, operands)",
		     EXPR_MAX_NESTING);
		return NULL;
	}
	p->nest++;
	struct expr *x = parse_binary(p, minprec);
	p->nest--;
	return x;
}

struct expr *expr_compile(const char *src, size_t *errpos, char *errmsg, size_t errlen)
{
	struct parser p = { .src = src, .len = strlen(src), .err = errmsg, .errlen = errlen };
	struct expr *x;
	p.tree = tree_new(src, p.len);
	next(&p);
	x = p.failed ? NULL : parse_expr(&p, 0);
	if (x && !p.failed && p.t != T_EOF)
		fail(&p, p.tpos, "unexpected '%.*s' after expression", (int)p.tlen, src + p.tpos);
	if (p.failed) {
		tree_free(p.tree);
		*errpos = p.errpos;
		return NULL;
	}
	p.tree->root = *x;
	return &p.tree->root;
}

int expr_is_scalar(const struct expr *x)
{
	return x->scalar;
}

unsigned expr_depth(const struct expr *x)
{
	return x->depth;
}

void expr_foreach_metric(const struct expr *x, void (*fn)(const char *name, void *ctx), void *ctx)
{
	if (!x)
		return;
	if (x->kind == K_SEL)
		fn(x->metric, ctx);
	expr_foreach_metric(x->a, fn, ctx);
	expr_foreach_metric(x->b, fn, ctx);
}
