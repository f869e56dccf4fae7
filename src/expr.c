/* expr.c: lexer, recursive-descent parser and evaluator for the PromQL subset in expr.h. */
#include "expr.h"
#include "buf.h"
#include "expo.h"

#include <ctype.h>
#include <stddef.h>
#include <math.h>
#include <regex.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- tree ---- */

enum kind { K_NUM, K_SEL, K_AGG, K_BIN, K_NEG, K_FUNC };
enum binop { B_ADD, B_SUB, B_MUL, B_DIV, B_MOD, B_EQ, B_NE, B_GT, B_LT, B_GE, B_LE, B_AND, B_OR, B_UNLESS };
enum agg { A_SUM, A_MIN, A_MAX, A_AVG, A_COUNT };
enum func { F_VECTOR, F_SCALAR, F_ABS, F_CEIL, F_FLOOR, F_ROUND, F_CLAMP_MIN, F_CLAMP_MAX, F_LABEL_REPLACE };
enum mop { M_EQ, M_NE, M_RE, M_NRE };

static const char *const binop_names[] = { "+", "-", "*", "/", "%", "==", "!=", ">", "<", ">=", "<=",
					   "and", "or", "unless" };
static const char *const agg_names[] = { "sum", "min", "max", "avg", "count" };
static const struct {
	const char *name;
	int nargs;          /* arguments */
	int arg0_scalar;    /* first argument is a number (vector()) */
	int returns_scalar;
} funcs[] = {
	[F_VECTOR] = { "vector", 1, 1, 0 },   [F_SCALAR] = { "scalar", 1, 0, 1 },
	[F_ABS] = { "abs", 1, 0, 0 },         [F_CEIL] = { "ceil", 1, 0, 0 },
	[F_FLOOR] = { "floor", 1, 0, 0 },     [F_ROUND] = { "round", 1, 0, 0 },
	[F_CLAMP_MIN] = { "clamp_min", 2, 0, 0 }, [F_CLAMP_MAX] = { "clamp_max", 2, 0, 0 },
	[F_LABEL_REPLACE] = { "label_replace", 5, 0, 0 },
};

struct matcher {
	char *label, *value;
	enum mop op;
	regex_t re;
};

/* label_replace's arguments, apart from the node: few nodes have them. */
struct lrep {
	char *s[4];                 /* dst, replacement, src, regex */
	regex_t re;
	int compiled;
	int is_const;               /* matches every series and sets a constant: no regexec needed */
};

/* What every walk over the tree reads comes first (one cache line): a mapping may hold millions of
 * nodes, and walking them is bound by memory. */
struct expr {
	struct expr *a, *b;         /* operands / arguments */
	enum kind kind;
	int scalar;                 /* static type: number */
	unsigned depth;             /* of the subtree: 1 for a leaf (at most EXPR_MAX_DEPTH) */
	enum binop op;              /* K_BIN */
	size_t memo;                /* 1-based slot of a repeated subexpression, 0 if none */
	char *metric;               /* K_SEL */
	size_t memo_class;          /* expr_memo_assign: the class of nodes that print alike */
	uint64_t memo_hash;         /* and the hash of its fields */
	size_t pos;
	int is_bool;                /* K_BIN */
	union {                     /* by kind: read a member only for its kind */
		double num;                             /* K_NUM */
		struct {                                /* K_SEL */
			struct matcher *m;
			size_t nm;
		};
		struct {                                /* K_AGG */
			char **grouping;
			size_t ngrouping;
			enum agg agg;
			int without, has_grouping;
		};
		struct {                                /* K_FUNC */
			enum func fn;
			struct lrep *lr;                /* label_replace's */
		};
	};
};

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
			if (x->m[i].op == M_RE || x->m[i].op == M_NRE)
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

static int ident_start(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == ':';
}

static int ident_char(char c)
{
	return ident_start(c) || (c >= '0' && c <= '9');
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
	} else if (ident_start(c)) {
		while (p->pos < p->len && ident_char(s[p->pos]))
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

/* Compile a PromQL (RE2) regex with POSIX regcomp, fully anchored as PromQL does. The RE2 classes
 * \d \D \s \S \w \W are translated; RE2 syntax POSIX would read differently ((?..), lazy
 * quantifiers, back-references, escapes inside [...]) is refused rather than silently misread.
 * glibc's regcomp takes time and memory exponential in stacked repetition ("a++++...",
 * "((a+)+)+...", "(a{1,100}){1,100}"), so, like RE2's own limits, these are refused too: more than
 * RE_MAX_LEN bytes, two repetition operators in a row, a bound above RE_MAX_REPEAT (also for the
 * product of nested bounds), repeated groups nested deeper than RE_MAX_NEST, more than RE_MAX_QUANT
 * repetition operators. */
#define RE_MAX_LEN 1024
#define RE_MAX_REPEAT 1000
#define RE_MAX_NEST 2
#define RE_MAX_QUANT 32
#define RE_MAX_GROUPS 64

/* At s a repetition operator? Sets *len (bytes), *copies (how many copies of the atom regcomp
 * builds for an interval; 1 for * + ?) and checks an interval's bounds. */
static int repetition_at(const char *s, size_t *len, long *copies, const char **why)
{
	*copies = 1;
	if (*s == '*' || *s == '+' || *s == '?') {
		*len = 1;
		return 1;
	}
	if (*s != '{')
		return 0;
	const char *p = s + 1;
	long lo = -1, hi = -1;
	if (*p >= '0' && *p <= '9')
		lo = strtol(p, (char **)&p, 10);
	if (*p == ',') {
		p++;
		if (*p >= '0' && *p <= '9')
			hi = strtol(p, (char **)&p, 10);
	} else {
		hi = lo;
	}
	if (*p != '}' || lo < 0) {
		*why = "a '{' that is not a repetition {n}, {n,} or {n,m} must be escaped";
		return -1;
	}
	if (lo > RE_MAX_REPEAT || hi > RE_MAX_REPEAT || (hi >= 0 && hi < lo)) {
		*why = "repetition bound above 1000 or reversed";
		return -1;
	}
	*len = (size_t)(p + 1 - s);
	*copies = hi > lo ? hi : (lo > 0 ? lo : 1);
	return 1;
}

static int compile_re(regex_t *re, const char *src, int cflags, const char **why)
{
	struct buf b;
	int in_class = 0, rc, prev_rep = 0, last_depth = 0, nquant = 0;
	int depth[RE_MAX_GROUPS + 1] = { 0 }; /* deepest repeated nesting inside each open group */
	long weight[RE_MAX_GROUPS + 1] = { 1 }; /* largest product of interval copies inside it */
	long last_weight = 1;
	int ngroup = 0;
	if (strlen(src) > RE_MAX_LEN) {
		*why = "regular expression longer than 1024 bytes";
		return -1;
	}
	buf_init(&b, 0);
	buf_puts(&b, "^(");
	for (const char *s = src; *s; s++) {
		size_t replen;
		long copies;
		int r;
		if (in_class) {
			if (*s == '\\') {
				*why = "a backslash inside [...] is not supported";
				goto bad;
			}
			if (*s == ']' && s[-1] != '[' && !(s[-1] == '^' && s[-2] == '['))
				in_class = 0;
			buf_putc(&b, *s);
			continue;
		}
		if ((r = repetition_at(s, &replen, &copies, why)) < 0)
			goto bad;
		if (r) {
			if (prev_rep) {
				*why = (s[0] == '?') ? "lazy quantifiers are not supported" : "two repetition operators in a row";
				goto bad;
			}
			if (++nquant > RE_MAX_QUANT) {
				*why = "more than 32 repetition operators";
				goto bad;
			}
			/* the repeated atom was a group of nesting last_depth, or a single atom (0) */
			if (last_depth + 1 > RE_MAX_NEST) {
				*why = "repeated groups nested too deep";
				goto bad;
			}
			if (depth[ngroup] < last_depth + 1)
				depth[ngroup] = last_depth + 1;
			if (last_weight * copies > RE_MAX_REPEAT) {
				*why = "nested repetition bounds multiply to more than 1000";
				goto bad;
			}
			if (weight[ngroup] < last_weight * copies)
				weight[ngroup] = last_weight * copies;
			buf_append(&b, s, replen);
			s += replen - 1;
			prev_rep = 1;
			continue;
		}
		prev_rep = 0;
		last_depth = 0;
		last_weight = 1;
		if (*s == '[') {
			in_class = 1;
		} else if (*s == '(' && s[1] == '?') {
			*why = "(?...) groups and flags are not supported";
			goto bad;
		} else if (*s == '(') {
			if (ngroup == RE_MAX_GROUPS) {
				*why = "more than 64 groups";
				goto bad;
			}
			depth[++ngroup] = 0;
			weight[ngroup] = 1;
		} else if (*s == ')' && ngroup > 0) {
			last_weight = weight[ngroup];
			last_depth = depth[ngroup--];
			if (depth[ngroup] < last_depth)
				depth[ngroup] = last_depth;
			if (weight[ngroup] < last_weight)
				weight[ngroup] = last_weight;
		} else if (*s == '\\' && s[1]) {
			static const char *const cls[][2] = { { "d", "[0-9]" }, { "D", "[^0-9]" }, { "s", "[[:space:]]" },
							      { "S", "[^[:space:]]" }, { "w", "[[:alnum:]_]" },
							      { "W", "[^[:alnum:]_]" } };
			const char *rep = NULL;
			for (size_t i = 0; i < sizeof(cls) / sizeof(cls[0]); i++)
				if (s[1] == cls[i][0][0])
					rep = cls[i][1];
			if (s[1] >= '1' && s[1] <= '9') {
				*why = "back-references are not supported";
				goto bad;
			}
			if (rep) {
				buf_puts(&b, rep);
				s++;
				continue;
			}
			buf_putc(&b, *s++);
		}
		buf_putc(&b, *s);
	}
	buf_puts(&b, ")$");
	buf_putc(&b, '\0');
	rc = regcomp(re, b.data, cflags);
	buf_free(&b);
	if (rc) {
		*why = "invalid regular expression";
		return -1;
	}
	return 0;
bad:
	buf_free(&b);
	return -1;
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
		if (is_op(p, "="))
			m->op = M_EQ;
		else if (is_op(p, "!="))
			m->op = M_NE;
		else if (is_op(p, "=~"))
			m->op = M_RE;
		else if (is_op(p, "!~"))
			m->op = M_NRE;
		else {
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
		if (m->op == M_RE || m->op == M_NRE) {
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
		if ((i == 0 || (i == 2 && *x->lr->s[2])) && !(ident_start(*x->lr->s[i]) && !strchr(x->lr->s[i], ':'))) {
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

static int lookup(const char *const *names, size_t n, const struct parser *p)
{
	for (size_t i = 0; i < n; i++)
		if (is_ident(p, names[i]))
			return (int)i;
	return -1;
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
		fail(p, x->a->pos, "%s() needs a vector, got a number", agg_names[ag]);
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
	x->scalar = funcs[fn].returns_scalar;
	next(p);
	next(p); /* '(' */
	struct expr **slot[2] = { &x->a, &x->b };
	for (int i = 0; i < funcs[fn].nargs; i++) {
		if (i > 0 && expect(p, T_COMMA, "',' between arguments") < 0)
			goto err;
		*slot[i] = parse_expr(p, 0);
		if (!*slot[i])
			goto err;
		if (fn == F_LABEL_REPLACE && i == 0) {
			if (parse_label_replace_args(p, x) < 0)
				goto err;
			if ((*slot[0])->scalar) {
				fail(p, (*slot[0])->pos, "argument 1 of label_replace() must be a vector");
				goto err;
			}
			break;
		}
		int want_scalar = i == 0 ? funcs[fn].arg0_scalar : 1;
		if ((*slot[i])->scalar != want_scalar) {
			fail(p, (*slot[i])->pos, "argument %d of %s() must be a %s", i + 1, funcs[fn].name,
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
	if (p->t == T_OP && (is_op(p, "-") || is_op(p, "+"))) {
		int neg = is_op(p, "-");
		next(p);
		struct expr *a = parse_expr(p, 5); /* binds tighter than every binary operator */
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
	if (p->t != T_IDENT) {
		fail(p, pos, p->t == T_EOF ? "unexpected end of expression" : "expected a metric name, number, function or '('");
		return NULL;
	}
	static const char *const fnames[] = { "vector", "scalar", "abs", "ceil", "floor", "round", "clamp_min",
					      "clamp_max", "label_replace" };
	int ag = lookup(agg_names, 5, p);
	int fn = lookup(fnames, 9, p);
	if (ag >= 0)
		return parse_agg(p, ag, pos);
	if (fn >= 0 && p->pos < p->len) {
		/* a function only when followed by '(' (a metric may be called "floor") */
		size_t q = p->pos;
		while (q < p->len && (p->src[q] == ' ' || p->src[q] == '\t'))
			q++;
		if (q < p->len && p->src[q] == '(')
			return parse_func(p, fn, pos);
	}
	static const char *const reserved[] = { "by", "without", "bool", "and", "or", "unless", "on", "ignoring",
						"group_left", "group_right", "offset" };
	if (lookup(reserved, sizeof(reserved) / sizeof(reserved[0]), p) >= 0) {
		fail(p, pos, "unexpected keyword '%.*s'", (int)p->tlen, p->src + p->tpos);
		return NULL;
	}
	return parse_selector(p);
}

/* precedence: 1 or; 2 and unless; 3 comparisons; 4 + -; 5 * / % */
static int binop_at(struct parser *p, enum binop *op)
{
	static const struct { const char *s; enum binop op; int prec; int word; } t[] = {
		{ "or", B_OR, 1, 1 }, { "and", B_AND, 2, 1 }, { "unless", B_UNLESS, 2, 1 },
		{ "==", B_EQ, 3, 0 }, { "!=", B_NE, 3, 0 }, { ">", B_GT, 3, 0 }, { "<", B_LT, 3, 0 },
		{ ">=", B_GE, 3, 0 }, { "<=", B_LE, 3, 0 }, { "+", B_ADD, 4, 0 }, { "-", B_SUB, 4, 0 },
		{ "*", B_MUL, 5, 0 }, { "/", B_DIV, 5, 0 }, { "%", B_MOD, 5, 0 },
	};
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		if (t[i].word ? is_ident(p, t[i].s) : is_op(p, t[i].s)) {
			*op = t[i].op;
			return t[i].prec;
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
			if (op < B_EQ || op > B_LE) {
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
		if (op >= B_AND && (sa || sb)) {
			fail(p, x->pos, "'%s' needs vectors on both sides", binop_names[op]);
			goto err;
		}
		if (op >= B_EQ && op <= B_LE && sa && sb && !x->is_bool) {
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

/* ---- evaluation ---- */

/* Evaluation recurses through eval, eval_node and the operator's function once per level of the
 * tree: the work on the operands' results (and a selector's) is done in functions that are not inlined (and so not
 * on the stack while the operands are evaluated), which keeps a level to a few hundred bytes of
 * stack (test_expr's deepest trees run on a 256 KiB thread, as libmicrohttpd's are). */
#define NOINLINE __attribute__((noinline))

struct expr_memo;

/* The tables of an index (struct index below): slots of hash << 32 | element index + 1 (0 empty),
 * and a bitmap with bit (hash * K) >> shift set for every element. */
struct hashtab {
	uint64_t *slot, *bits;
	size_t mask, bmask;
};

struct value {
	int scalar;
	double s;
	struct vec v;
	struct expr_memo *memo;  /* the shared result this is, if any */
};

struct expr_memo {
	int done;
	struct value v;
	struct hashtab ix;       /* its index, built at the first use (ix.slot NULL before) */
};

struct evalctx {
	const struct expr_source *src;
	struct arena *a;
	char *err;
	size_t errlen;
	int failed;
	const char *missing;
};

static int match_one(const struct matcher *m, const struct label *ls, uint32_t n)
{
	size_t ml = strlen(m->label);
	int i = labels_find(ls, n, m->label, ml);
	const char *v = i >= 0 ? ls[i].value : "";
	size_t vl = i >= 0 ? ls[i].vlen : 0;
	switch (m->op) {
	case M_EQ:
		return slice_eq(v, vl, m->value, strlen(m->value));
	case M_NE:
		return !slice_eq(v, vl, m->value, strlen(m->value));
	case M_RE:
	case M_NRE: {
		char tmp[512];
		int ok;
		if (vl < sizeof(tmp)) {
			memcpy(tmp, v, vl);
			tmp[vl] = '\0';
			ok = regexec(&m->re, tmp, 0, NULL, 0) == 0;
		} else {
			char *big = xstrndup(v, vl);
			ok = regexec(&m->re, big, 0, NULL, 0) == 0;
			free(big);
		}
		return m->op == M_RE ? ok : !ok;
	}
	}
	return 0;
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

static NOINLINE void eval_selector(struct evalctx *c, const struct expr *x, struct vec *out)
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
		out->e = (struct velem *)f->samples;
		out->n = f->n;
		return;
	}
	out->e = arena_alloc(c->a, f->n * sizeof(*out->e));
	for (size_t i = 0; i < f->n; i++) {
		const struct expo_sample *s = &f->samples[i];
		int ok = 1;
		for (size_t k = 0; k < x->nm && ok; k++)
			ok = match_one(&x->m[k], s->labels, s->nlabels);
		if (!ok)
			continue;
		struct velem *e = &out->e[out->n++];
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
	const struct vec *v;
};

static inline size_t bit_of(uint32_t hash, size_t bmask)
{
	return (size_t)(((uint64_t)hash * 0x9E3779B97F4A7C15ULL) >> 32) & bmask;
}

/* Put element i, of hash `hash`, in the first free slot from its own (linear probing). */
static void slot_put(uint64_t *slot, size_t mask, uint32_t hash, size_t i)
{
	size_t j = hash & mask;
	while (slot[j])
		j = (j + 1) & mask;
	slot[j] = (uint64_t)hash << 32 | (uint64_t)(i + 1);
}

/* The index of a shared result is built once per scrape, in the shared results' arena. */
static void index_build(struct evalctx *c, struct index *ix, const struct value *val)
{
	const struct vec *v = &val->v;
	struct expr_memo *m = val->memo;
	ix->next = 0;
	ix->v = v;
	if (m && m->ix.slot) {
		ix->t = m->ix;
		return;
	}
	struct hashtab *t = &ix->t;
	size_t cap = 8;
	while (cap < v->n * 2)
		cap *= 2;
	struct arena *a = m && c->src->memo_arena ? c->src->memo_arena : c->a;
	t->slot = arena_alloc(a, cap * sizeof(*t->slot));
	memset(t->slot, 0, cap * sizeof(*t->slot));
	t->mask = cap - 1;
	size_t nbits = cap < 16 ? 64 : cap * 4; /* about 8 bits per element */
	t->bits = arena_alloc(a, nbits / 8);
	memset(t->bits, 0, nbits / 8);
	t->bmask = nbits - 1;
	for (size_t i = 0; i < v->n; i++) {
		size_t b = bit_of(v->e[i].hash, t->bmask);
		slot_put(t->slot, t->mask, v->e[i].hash, i);
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
	for (size_t j = k->hash & t->mask;; j = (j + 1) & t->mask) {
		uint64_t s = t->slot[j];
		if (!s)
			return NULL;
		if (s >> 32 != k->hash)
			continue;
		e = &ix->v->e[(uint32_t)s - 1];
		if (labels_equal(e->labels, e->nlabels, k->labels, k->nlabels)) {
			ix->next = (uint32_t)s;
			return e;
		}
	}
}

static double arith(enum binop op, double a, double b, int *keep)
{
	*keep = 1;
	switch (op) {
	case B_ADD: return a + b;
	case B_SUB: return a - b;
	case B_MUL: return a * b;
	case B_DIV: return a / b;
	case B_MOD: return fmod(a, b);
	case B_EQ: *keep = a == b; break;
	case B_NE: *keep = a != b; break;
	case B_GT: *keep = a > b; break;
	case B_LT: *keep = a < b; break;
	case B_GE: *keep = a >= b; break;
	case B_LE: *keep = a <= b; break;
	default: break;
	}
	return a;
}

static void eval(struct evalctx *c, const struct expr *x, struct value *out);

static void eval_vec(struct evalctx *c, const struct expr *x, struct vec *out)
{
	struct value v;
	eval(c, x, &v);
	*out = v.v;
}

static NOINLINE void combine_binary(struct evalctx *c, const struct expr *x, const struct value *l,
				    const struct value *r, struct value *out)
{
	int cmp = x->op >= B_EQ && x->op <= B_LE, keep;
	if (l->scalar && r->scalar) {
		out->scalar = 1;
		out->s = arith(x->op, l->s, r->s, &keep);
		if (cmp)
			out->s = keep;
		return;
	}
	out->scalar = 0;
	if (x->op >= B_AND) {
		struct index ix;
		size_t cap = l->v.n + (x->op == B_OR ? r->v.n : 0);
		out->v.e = arena_alloc(c->a, (cap ? cap : 1) * sizeof(struct velem));
		out->v.n = 0;
		index_build(c, &ix, x->op == B_OR ? l : r);
		for (size_t i = 0; i < l->v.n; i++) {
			int found = x->op == B_OR || index_get(&ix, &l->v.e[i]) != NULL;
			if (x->op == B_UNLESS ? !found : found)
				out->v.e[out->v.n++] = l->v.e[i];
		}
		if (x->op == B_OR)
			for (size_t i = 0; i < r->v.n; i++)
				if (!index_get(&ix, &r->v.e[i]))
					out->v.e[out->v.n++] = r->v.e[i];
		return;
	}
	const struct vec *vv = l->scalar ? &r->v : &l->v;
	struct index ix;
	if (!l->scalar && !r->scalar)
		index_build(c, &ix, r);
	out->v.e = arena_alloc(c->a, (vv->n ? vv->n : 1) * sizeof(struct velem));
	out->v.n = 0;
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
		struct velem *o = &out->v.e[out->v.n++];
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

/* Groups are found through a table that starts small and doubles (a plain sum has one group), its
 * slots holding the group's hash beside its index like struct index. */
static NOINLINE void aggregate(struct evalctx *c, const struct expr *x, const struct vec *in, struct vec *out)
{
	out->n = 0;
	out->e = arena_alloc(c->a, (in->n ? in->n : 1) * sizeof(struct velem));
	if (!in->n)
		return;
	double *count = arena_alloc(c->a, in->n * sizeof(double));
	struct velem *acc = out->e;
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
	size_t cap = 16;
	uint64_t *slot = arena_alloc(c->a, cap * sizeof(*slot));
	memset(slot, 0, cap * sizeof(*slot));
	for (size_t i = 0; i < in->n; i++) {
		const struct velem *e = &in->e[i];
		struct label tmp[64];
		uint32_t n = 0;
		for (uint32_t k = 0; k < e->nlabels && n < 64; k++) {
			int listed = 0;
			for (size_t g = 0; g < x->ngrouping && !listed; g++)
				listed = slice_eq(e->labels[k].name, e->labels[k].nlen, x->grouping[g], glen[g]);
			if (x->without ? !listed : listed)
				tmp[n++] = e->labels[k];
		}
		uint32_t hash = labels_hash(tmp, n);
		size_t j = hash & (cap - 1);
		struct velem *g = NULL;
		for (; slot[j]; j = (j + 1) & (cap - 1)) {
			struct velem *cand = &acc[(uint32_t)slot[j] - 1];
			if (slot[j] >> 32 == hash && labels_equal(cand->labels, cand->nlabels, tmp, n)) {
				g = cand;
				break;
			}
		}
		if (!g) {
			g = &acc[nacc];
			*g = (struct velem){ .labels = NULL, .nlabels = n, .hash = hash };
			if (n) {
				g->labels = arena_alloc(c->a, n * sizeof(struct label));
				memcpy(g->labels, tmp, n * sizeof(struct label));
			}
			agg_start(x->agg, g, &count[nacc], e->v);
			slot[j] = (uint64_t)hash << 32 | (uint64_t)++nacc;
			if (nacc * 2 > cap) { /* grow: rehash the groups into twice the slots */
				cap *= 2;
				slot = arena_alloc(c->a, cap * sizeof(*slot));
				memset(slot, 0, cap * sizeof(*slot));
				for (size_t k = 0; k < nacc; k++)
					slot_put(slot, cap - 1, acc[k].hash, k);
			}
		}
		agg_fold(x->agg, g, &count[g - acc], e->v);
	}
out:
	if (x->agg == A_AVG)
		for (size_t i = 0; i < nacc; i++)
			acc[i].v /= count[i];
	out->n = nacc;
}

static void eval_agg(struct evalctx *c, const struct expr *x, struct vec *out)
{
	struct vec in;
	eval_vec(c, x->a, &in);
	aggregate(c, x, &in, out);
}

static double fn1(enum func f, double v, double arg)
{
	switch (f) {
	case F_ABS: return fabs(v);
	case F_CEIL: return ceil(v);
	case F_FLOOR: return floor(v);
	case F_ROUND: return floor(v + 0.5);
	/* Go's math.Max/math.Min, which PromQL uses: an infinity wins over NaN, NaN over numbers */
	case F_CLAMP_MIN:
		if (isinf(v) && v > 0) return v;
		if (isinf(arg) && arg > 0) return arg;
		if (isnan(v) || isnan(arg)) return NAN;
		return v < arg ? arg : v;
	case F_CLAMP_MAX:
		if (isinf(v) && v < 0) return v;
		if (isinf(arg) && arg < 0) return arg;
		if (isnan(v) || isnan(arg)) return NAN;
		return v > arg ? arg : v;
	default: return v;
	}
}

/* Go's regexp.Expand, which PromQL's label_replace uses: $$ is a '$'; $name or ${name} where name
 * is the longest run of [A-Za-z0-9_]; an all-digit name (no leading zero) is a group number, any
 * other name or an unmatched group expands to nothing; a malformed '$' stays literal. Group k of the
 * user's regex is group k+1 of ours (compile_re wraps it in a group). */
static void expand_template(struct buf *b, const char *t, const char *sv, const regmatch_t *m, size_t ngroups)
{
	while (*t) {
		if (*t != '$') {
			buf_putc(b, *t++);
			continue;
		}
		if (t[1] == '$') {
			buf_putc(b, '$');
			t += 2;
			continue;
		}
		const char *name = t + 1, *end;
		int braces = *name == '{';
		if (braces)
			name++;
		end = name;
		while ((*end >= 'a' && *end <= 'z') || (*end >= 'A' && *end <= 'Z') || (*end >= '0' && *end <= '9') || *end == '_')
			end++;
		if (end == name || (braces && *end != '}')) {
			buf_putc(b, *t++); /* malformed: literal '$' */
			continue;
		}
		long num = -1;
		if (!(end - name > 1 && name[0] == '0')) {
			num = 0;
			for (const char *q = name; q < end && num >= 0; q++)
				num = (*q >= '0' && *q <= '9' && num < 100000000) ? num * 10 + (*q - '0') : -1;
		}
		if (num >= 0 && (size_t)num + 1 < ngroups && m[num + 1].rm_so >= 0)
			buf_append(b, sv + m[num + 1].rm_so, (size_t)(m[num + 1].rm_eo - m[num + 1].rm_so));
		t = end + braces;
	}
}

/* PromQL label_replace: when the regex matches the whole source value, set dst to the replacement
 * with $1..$9 / ${1} expanded (an empty result removes dst); otherwise leave the series as it is. */
static void eval_label_replace(struct evalctx *c, const struct expr *x, const struct vec *in, struct vec *out)
{
	const char *dst = x->lr->s[0], *src = x->lr->s[2];
	out->e = arena_alloc(c->a, (in->n ? in->n : 1) * sizeof(struct velem));
	out->n = in->n;
	for (size_t i = 0; i < in->n; i++) {
		const struct velem *e = &in->e[i];
		out->e[i] = *e;
		const char *val;
		size_t vlen;
		if (x->lr->is_const) {
			val = x->lr->s[1];
			vlen = strlen(val);
			goto set;
		}
		int si = *src ? labels_find(e->labels, e->nlabels, src, strlen(src)) : -1;
		char *sv = arena_strndup(c->a, si >= 0 ? e->labels[si].value : "", si >= 0 ? e->labels[si].vlen : 0);
		size_t ngroups = x->lr->re.re_nsub + 1;
		regmatch_t *m = arena_alloc(c->a, ngroups * sizeof(*m));
		if (regexec(&x->lr->re, sv, ngroups, m, 0) != 0)
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
			if (!slice_eq(e->labels[k].name, e->labels[k].nlen, dst, strlen(dst)))
				ls[n++] = e->labels[k];
		if (vlen)
			ls[n++] = (struct label){ dst, val, (uint32_t)strlen(dst), (uint32_t)vlen };
		labels_sort(ls, n);
		out->e[i].labels = ls;
		out->e[i].nlabels = n;
		out->e[i].hash = labels_hash(ls, n);
	}
}

/* A function of its evaluated arguments a (and b: clamp_min/clamp_max's number). */
static NOINLINE void apply_func(struct evalctx *c, const struct expr *x, const struct value *a, const struct value *b,
				struct value *out)
{
	if (x->fn == F_VECTOR) {
		out->v.e = arena_alloc(c->a, sizeof(struct velem));
		out->v.n = 1;
		out->v.e[0] = (struct velem){ .v = a->s, .hash = labels_hash(NULL, 0) };
		return;
	}
	if (x->fn == F_LABEL_REPLACE) {
		eval_label_replace(c, x, &a->v, &out->v);
		return;
	}
	if (x->fn == F_SCALAR) {
		out->scalar = 1;
		out->s = a->v.n == 1 ? a->v.e[0].v : NAN;
		return;
	}
	out->v.e = arena_alloc(c->a, (a->v.n ? a->v.n : 1) * sizeof(struct velem));
	out->v.n = a->v.n;
	for (size_t i = 0; i < a->v.n; i++) {
		out->v.e[i] = a->v.e[i];
		out->v.e[i].v = fn1(x->fn, a->v.e[i].v, b->s);
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
	switch (x->kind) {
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
		*out = v.v;
	}
	return 0;
}

/* ---- shared subexpressions ---- */

/* Subexpressions are shared when they print the same PromQL text. Printing each one and sorting
 * the texts was quadratic in a chain's length; instead each node gets a class, bottom-up: two nodes
 * are in one class when their own fields are equal (as printed: every NaN alike, -0 apart from 0)
 * and their operands are in the same classes. print_rec writes every field it compares and nothing
 * else, and its output compiles back to the same tree, so that is printing the same text. Classes
 * are found in one hash table of representatives: each node is hashed once from its fields and its
 * operands' classes, and compared (shallowly) only with representatives of the same hash. */
struct memo_pass {
	struct expr **rep;          /* open addressing, by hash: one node of each class; NULL empty */
	size_t mask;
	size_t nclass;
	size_t *count;              /* per class: how many nodes of an eligible kind */
	size_t *slot;               /* per class: its memo slot, 0 if none yet */
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
	uint64_t f = 0xCBF29CE484222325ULL; /* FNV-1a */
	size_t n = 0;
	for (; s[n]; n++)
		f = (f ^ (unsigned char)s[n]) * 0x100000001B3ULL;
	mp->work += n;
	return mix(h, f ^ n);
}

static int same_str(struct memo_pass *mp, const char *a, const char *b)
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
	switch (x->kind) {
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

static int same_operand(const struct expr *a, const struct expr *b)
{
	return a ? b && a->memo_class == b->memo_class : !b;
}

/* x and y print the same, given that their operands are classed. */
static int same_node(struct memo_pass *mp, const struct expr *x, const struct expr *y)
{
	if (x->kind != y->kind || !same_operand(x->a, y->a) || !same_operand(x->b, y->b))
		return 0;
	switch (x->kind) {
	case K_NUM:
		return num_bits(x->num) == num_bits(y->num);
	case K_SEL:
		if (x->nm != y->nm || !same_str(mp, x->metric, y->metric))
			return 0;
		for (size_t i = 0; i < x->nm; i++)
			if (x->m[i].op != y->m[i].op || !same_str(mp, x->m[i].label, y->m[i].label) ||
			    !same_str(mp, x->m[i].value, y->m[i].value))
				return 0;
		return 1;
	case K_AGG:
		if (x->agg != y->agg || x->has_grouping != y->has_grouping || x->without != y->without ||
		    x->ngrouping != y->ngrouping)
			return 0;
		for (size_t i = 0; i < x->ngrouping; i++)
			if (!same_str(mp, x->grouping[i], y->grouping[i]))
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
			if (!same_str(mp, x->lr->s[i], y->lr->s[i]))
				return 0;
		return 1;
	}
	return 0;
}

static int memo_eligible(const struct expr *x)
{
	return x->kind == K_BIN || x->kind == K_AGG || x->kind == K_FUNC || x->kind == K_NEG;
}

static size_t count_nodes(const struct expr *x)
{
	return x ? 1 + count_nodes(x->a) + count_nodes(x->b) : 0;
}

/* Post-order: class the operands, then x (the table has room for every node). */
static void classify(struct memo_pass *mp, struct expr *x)
{
	if (!x)
		return;
	classify(mp, x->a);
	classify(mp, x->b);
	uint64_t h = node_hash(mp, x);
	x->memo_hash = h;
	size_t j = (size_t)(h ^ h >> 29) & mp->mask;
	for (;; j = (j + 1) & mp->mask) {
		struct expr *r = mp->rep[j];
		mp->work++;
		if (!r) {
			mp->rep[j] = x;
			x->memo_class = mp->nclass++;
			break;
		}
		if (r->memo_hash == h && same_node(mp, r, x)) {
			x->memo_class = r->memo_class;
			break;
		}
	}
	if (memo_eligible(x))
		mp->count[x->memo_class]++;
}

/* Pre-order, as the slots were numbered before: a class seen twice or more gets the next slot. */
static void number(struct memo_pass *mp, struct expr *x)
{
	if (!x)
		return;
	mp->work++;
	x->memo = 0;
	if (memo_eligible(x) && mp->count[x->memo_class] > 1) {
		if (!mp->slot[x->memo_class])
			mp->slot[x->memo_class] = ++mp->slots;
		x->memo = mp->slot[x->memo_class];
	}
	number(mp, x->a);
	number(mp, x->b);
}

size_t expr_memo_assign(struct expr *const *roots, size_t n)
{
	return expr_memo_assign_work(roots, n, NULL);
}

size_t expr_memo_assign_work(struct expr *const *roots, size_t n, size_t *work)
{
	struct memo_pass mp = { 0 };
	size_t nodes = 0, cap = 16;
	for (size_t i = 0; i < n; i++)
		nodes += count_nodes(roots[i]);
	while (cap < nodes * 2)
		cap *= 2;
	mp.rep = xcalloc(cap, sizeof(*mp.rep));
	mp.mask = cap - 1;
	mp.count = xcalloc(nodes + 1, sizeof(*mp.count));
	mp.slot = xcalloc(nodes + 1, sizeof(*mp.slot));
	mp.work = nodes;
	for (size_t i = 0; i < n; i++)
		classify(&mp, roots[i]);
	for (size_t i = 0; i < n; i++)
		number(&mp, roots[i]);
	free(mp.rep);
	free(mp.count);
	free(mp.slot);
	if (work)
		*work = mp.work;
	return mp.slots;
}

struct expr_memo *expr_memo_alloc(struct arena *a, size_t nmemo)
{
	struct expr_memo *m = arena_alloc(a, (nmemo ? nmemo : 1) * sizeof(*m));
	memset(m, 0, (nmemo ? nmemo : 1) * sizeof(*m));
	return m;
}

/* ---- printing back as PromQL ---- */

static void print_str(struct buf *b, const char *s)
{
	buf_putc(b, '"');
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			buf_putc(b, '\\');
		if (*s == '\n') {
			buf_puts(b, "\\n");
			continue;
		}
		buf_putc(b, *s);
	}
	buf_putc(b, '"');
}

static int prec_of(const struct expr *x)
{
	static const int p[] = { 4, 4, 5, 5, 5, 3, 3, 3, 3, 3, 3, 2, 1, 2 };
	return x->kind == K_BIN ? p[x->op] : 9;
}

static void print_rec(const struct expr *x, struct buf *b, const char *(*rename)(const char *, void *), void *ctx,
		      int parent_prec)
{
	switch (x->kind) {
	case K_NUM:
		if (isnan(x->num))
			buf_puts(b, "NaN");
		else if (isinf(x->num))
			buf_puts(b, x->num > 0 ? "Inf" : "-Inf");
		else
			buf_printf(b, "%.17g", x->num);
		return;
	case K_SEL:
		buf_puts(b, rename ? rename(x->metric, ctx) : x->metric);
		if (x->nm) {
			static const char *const mops[] = { "=", "!=", "=~", "!~" };
			buf_putc(b, '{');
			for (size_t i = 0; i < x->nm; i++) {
				buf_printf(b, "%s%s%s", i ? ", " : "", x->m[i].label, mops[x->m[i].op]);
				print_str(b, x->m[i].value);
			}
			buf_putc(b, '}');
		}
		return;
	case K_AGG:
		buf_puts(b, agg_names[x->agg]);
		if (x->has_grouping) {
			buf_puts(b, x->without ? " without (" : " by (");
			for (size_t i = 0; i < x->ngrouping; i++)
				buf_printf(b, "%s%s", i ? ", " : "", x->grouping[i]);
			buf_puts(b, ") ");
		}
		buf_putc(b, '(');
		print_rec(x->a, b, rename, ctx, 0);
		buf_putc(b, ')');
		return;
	case K_NEG:
		buf_puts(b, "-(");
		print_rec(x->a, b, rename, ctx, 0);
		buf_putc(b, ')');
		return;
	case K_FUNC:
		buf_printf(b, "%s(", funcs[x->fn].name);
		print_rec(x->a, b, rename, ctx, 0);
		for (int i = 0; x->fn == F_LABEL_REPLACE && i < 4; i++) {
			buf_puts(b, ", ");
			print_str(b, x->lr->s[i]);
		}
		if (x->b) {
			buf_puts(b, ", ");
			print_rec(x->b, b, rename, ctx, 0);
		}
		buf_putc(b, ')');
		return;
	case K_BIN: {
		int p = prec_of(x);
		if (p <= parent_prec)
			buf_putc(b, '(');
		print_rec(x->a, b, rename, ctx, p - 1);
		buf_printf(b, " %s%s ", binop_names[x->op], x->is_bool ? " bool" : "");
		print_rec(x->b, b, rename, ctx, p);
		if (p <= parent_prec)
			buf_putc(b, ')');
		return;
	}
	}
}

void expr_print(const struct expr *x, struct buf *b, const char *(*rename)(const char *name, void *ctx), void *ctx)
{
	print_rec(x, b, rename, ctx, 0);
}
