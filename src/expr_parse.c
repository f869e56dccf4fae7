/* expr_parse.c: the lexer and recursive-descent parser of the PromQL subset in expr.h. */
#include "expr_int.h"
#include "buf.h"
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

void expr_free(struct expr *x)
{
	if (!x)
		return;
	expr_free(x->a);
	expr_free(x->b);
	free(x->metric);
	if (x->kind == K_SEL) {
		for (size_t i = 0; i < x->nm; i++) {
			free(x->m[i].label);
			free(x->m[i].value);
			if (expr_mops[x->m[i].op].regex)
				regfree(&x->m[i].re);
		}
		free(x->m);
	}
	if (x->kind == K_AGG) {
		for (size_t i = 0; i < x->ngrouping; i++)
			free(x->grouping[i]);
		free(x->grouping);
	}
	if (x->kind == K_FUNC && x->lr) {
		for (int i = 0; i < 4; i++)
			free(x->lr->s[i]);
		if (x->lr->compiled)
			regfree(&x->lr->re);
		free(x->lr);
	}
	free(x);
}


/* ---- lexer ---- */

enum tok { T_EOF, T_NUM, T_IDENT, T_STR, T_LP, T_RP, T_LB, T_RB, T_COMMA, T_OP, T_ERR };

struct parser {
	const char *src;
	size_t len, pos;          /* cursor */
	enum tok t;               /* current token */
	size_t tpos, tlen;        /* its span */
	double num;
	char *str;                /* decoded string literal (owned) */
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

static void next(struct parser *p)
{
	const char *s = p->src;
	free(p->str);
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
		struct buf b;
		buf_init(&b, 0);
		p->pos++;
		while (p->pos < p->len && s[p->pos] != c) {
			char ch = s[p->pos++];
			if (ch == '\\' && p->pos < p->len) {
				ch = s[p->pos++];
				if (ch == 'n')
					ch = '\n';
				else if (ch == 't')
					ch = '\t';
				else if (ch != '\\' && ch != '"' && ch != '\'') {
					/* keep unknown escapes (regex classes like \d) verbatim */
					buf_putc(&b, '\\');
				}
			}
			buf_putc(&b, ch);
		}
		if (p->pos >= p->len) {
			buf_free(&b);
			fail(p, p->tpos, "unterminated string");
			p->t = T_ERR;
			return;
		}
		p->pos++;
		p->str = buf_steal(&b, NULL);
		p->t = T_STR;
	} else {
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
		} else {
			for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
				size_t n = strlen(ops[i]);
				if (p->pos + n <= p->len && memcmp(s + p->pos, ops[i], n) == 0) {
					memcpy(p->op, ops[i], n + 1);
					p->pos += n;
					p->t = T_OP;
					break;
				}
			}
			if (p->t == T_ERR)
				fail(p, p->tpos, "unexpected character '%c'", c);
		}
	}
	p->tlen = p->pos - p->tpos;
}

static int is_ident(const struct parser *p, const char *w)
{
	return p->t == T_IDENT && p->tlen == strlen(w) && memcmp(p->src + p->tpos, w, p->tlen) == 0;
}

static int is_op(const struct parser *p, const char *o)
{
	return p->t == T_OP && strcmp(p->op, o) == 0;
}

static char *tok_dup(const struct parser *p)
{
	return xstrndup(p->src + p->tpos, p->tlen);
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

static struct expr *node(enum kind k, size_t pos)
{
	struct expr *x = xcalloc(1, sizeof(*x));
	x->kind = k;
	x->pos = pos;
	x->depth = 1;
	return x;
}

/* Set x's depth from its operands'. Every walk over a tree (evaluation, printing, the memo pass,
 * expr_free) recurses once per level, so a tree deeper than EXPR_MAX_DEPTH is refused here, where
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
		x->grouping = xrealloc(x->grouping, (x->ngrouping + 1) * sizeof(char *));
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
	struct expr *x = node(K_SEL, p->tpos);
	x->metric = tok_dup(p);
	next(p);
	if (p->t != T_LB)
		return x;
	next(p);
	while (p->t != T_RB) {
		if (p->t != T_IDENT) {
			fail(p, p->tpos, "expected a label name in selector");
			goto err;
		}
		x->m = xrealloc(x->m, (x->nm + 1) * sizeof(*x->m));
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
			m->op = M_EQ; /* nothing to regfree */
			fail(p, p->tpos, "expected =, !=, =~ or !~ after label name");
			goto err;
		}
		next(p);
		if (p->t != T_STR) {
			fail(p, p->tpos, "expected a quoted string");
			goto err;
		}
		m->value = p->str;
		p->str = NULL;
		if (expr_mops[m->op].regex) {
			const char *why;
			if (compile_re(&m->re, m->value, REG_EXTENDED | REG_NOSUB, &why) < 0) {
				m->op = M_EQ; /* nothing to regfree */
				fail(p, p->tpos, "%s", why);
				goto err;
			}
		}
		next(p);
		if (p->t == T_COMMA)
			next(p);
		else if (p->t != T_RB) {
			fail(p, p->tpos, "expected ',' or '}' in selector");
			goto err;
		}
	}
	next(p);
	return x;
err:
	expr_free(x);
	return NULL;
}

/* The four string arguments of label_replace(v, "dst", "replacement", "src", "regex"). */
static int parse_label_replace_args(struct parser *p, struct expr *x)
{
	static const char *const what[] = { "destination label", "replacement", "source label", "regex" };
	size_t re_at = p->tpos;
	x->lr = xcalloc(1, sizeof(*x->lr));
	for (int i = 0; i < 4; i++) {
		if (expect(p, T_COMMA, "',' between arguments") < 0)
			return -1;
		if (p->t != T_STR) {
			fail(p, p->tpos, "label_replace(): the %s must be a quoted string", what[i]);
			return -1;
		}
		x->lr->s[i] = p->str;
		p->str = NULL;
		size_t at = p->tpos;
		re_at = at;
		next(p);
		if ((i == 0 || (i == 2 && *x->lr->s[2])) && !(is_label_start(*x->lr->s[i]) && !strchr(x->lr->s[i], ':'))) {
			fail(p, at, "label_replace(): \"%s\" is not a valid label name", x->lr->s[i]);
			return -1;
		}
	}
	const char *why;
	if (compile_re(&x->lr->re, x->lr->s[3], REG_EXTENDED, &why) < 0) {
		fail(p, re_at, "label_replace(): %s", why);
		return -1;
	}
	x->lr->compiled = 1;
	/* label_replace(v, "status", "idle", "", "") and the like: the source is always "", the
	 * regex matches "" and the replacement has no $ reference, so the result is a constant */
	x->lr->is_const = !*x->lr->s[2] && !strchr(x->lr->s[1], '$') && regexec(&x->lr->re, "", 0, NULL, 0) == 0;
	return 0;
}

/* An aggregation; the current token is its name. Grouping before or after the argument. */
static struct expr *parse_agg(struct parser *p, int ag, size_t pos)
{
	struct expr *x = node(K_AGG, pos);
	x->agg = (enum agg)ag;
	next(p);
	if (is_ident(p, "by") || is_ident(p, "without")) {
		x->without = is_ident(p, "without");
		next(p);
		if (parse_label_list(p, x) < 0)
			goto err;
	}
	if (expect(p, T_LP, "'(' after aggregation") < 0)
		goto err;
	x->a = parse_expr(p, 0);
	if (!x->a || set_depth(p, x) < 0)
		goto err;
	if (x->a->scalar) {
		fail(p, x->a->pos, "%s() needs a vector, got a number", expr_agg_names[ag]);
		goto err;
	}
	if (expect(p, T_RP, "')' to close aggregation") < 0)
		goto err;
	if (!x->has_grouping && (is_ident(p, "by") || is_ident(p, "without"))) {
		x->without = is_ident(p, "without");
		next(p);
		if (parse_label_list(p, x) < 0)
			goto err;
	}
	return x;
err:
	expr_free(x);
	return NULL;
}

/* A function call; the current token is its name, followed by '('. */
static struct expr *parse_func(struct parser *p, int fn, size_t pos)
{
	struct expr *x = node(K_FUNC, pos);
	x->fn = (enum func)fn;
	x->scalar = expr_funcs[fn].returns_scalar;
	next(p);
	next(p); /* '(' */
	struct expr **slot[2] = { &x->a, &x->b };
	for (int i = 0; i < expr_funcs[fn].nargs; i++) {
		if (i > 0 && expect(p, T_COMMA, "',' between arguments") < 0)
			goto err;
		*slot[i] = parse_expr(p, 0);
		if (!*slot[i])
			goto err;
		if (expr_funcs[fn].kind == FN_LABEL_REPLACE && i == 0) {
			if (parse_label_replace_args(p, x) < 0)
				goto err;
			if ((*slot[0])->scalar) {
				fail(p, (*slot[0])->pos, "argument 1 of label_replace() must be a vector");
				goto err;
			}
			break;
		}
		int want_scalar = i == 0 ? expr_funcs[fn].arg0_scalar : 1;
		if ((*slot[i])->scalar != want_scalar) {
			fail(p, (*slot[i])->pos, "argument %d of %s() must be a %s", i + 1, expr_funcs[fn].name,
			     want_scalar ? "number" : "vector");
			goto err;
		}
	}
	if (expect(p, T_RP, "')' after arguments") < 0 || set_depth(p, x) < 0)
		goto err;
	return x;
err:
	expr_free(x);
	return NULL;
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
	struct expr *x = node(K_NEG, pos);
	x->a = a;
	x->scalar = a->scalar;
	if (set_depth(p, x) < 0) {
		expr_free(x);
		return NULL;
	}
	return x;
}

/* An identifier: an aggregation, a function call, or a selector. */
static struct expr *parse_named(struct parser *p, size_t pos)
{
	static const char *const reserved[] = { "by", "without", "bool", "and", "or", "unless", "on", "ignoring",
						"group_left", "group_right", "offset" };
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
		struct expr *x = node(K_NUM, pos);
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
		if (expect(p, T_RP, "')'") < 0) {
			expr_free(x);
			return NULL;
		}
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
		struct expr *x = node(K_BIN, p->tpos);
		x->op = op;
		x->a = lhs;
		lhs = x;
		next(p);
		if (is_ident(p, "bool")) {
			if (expr_binops[op].cls != OPC_CMP) {
				fail(p, p->tpos, "'bool' only goes with a comparison");
				goto err;
			}
			x->is_bool = 1;
			next(p);
		}
		if (is_ident(p, "on") || is_ident(p, "ignoring") || is_ident(p, "group_left") || is_ident(p, "group_right")) {
			fail(p, p->tpos, "'%.*s' is not supported: vectors match on identical label sets", (int)p->tlen,
			     p->src + p->tpos);
			goto err;
		}
		x->b = parse_expr(p, prec);
		if (!x->b || set_depth(p, x) < 0)
			goto err;
		int sa = x->a->scalar, sb = x->b->scalar;
		if (expr_binops[op].cls == OPC_SET && (sa || sb)) {
			fail(p, x->pos, "'%s' needs vectors on both sides", expr_binops[op].text);
			goto err;
		}
		if (expr_binops[op].cls == OPC_CMP && sa && sb && !x->is_bool) {
			fail(p, x->pos, "comparison between two numbers needs 'bool'");
			goto err;
		}
		x->scalar = sa && sb;
	}
	return lhs;
err:
	expr_free(lhs);
	return NULL;
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
	next(&p);
	x = p.failed ? NULL : parse_expr(&p, 0);
	if (x && !p.failed && p.t != T_EOF)
		fail(&p, p.tpos, "unexpected '%.*s' after expression", (int)p.tlen, src + p.tpos);
	free(p.str);
	if (p.failed) {
		expr_free(x);
		*errpos = p.errpos;
		return NULL;
	}
	return x;
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
