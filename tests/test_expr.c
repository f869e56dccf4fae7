/* test_expr.c: the PromQL subset: compile errors with positions, and evaluation semantics. */
#include "testutil.h"

#include "expo.h"
#include "expr.h"
#include "expr_ops.h"
#include "names.h"
#include "writer.h"

static const char *input =
	"slurm_node_cpus{node=\"n1\"} 4\nslurm_node_cpus{node=\"n2\"} 8\nslurm_node_cpus{node=\"n3\"} 16\n"
	"slurm_node_cpus_alloc{node=\"n1\"} 0\nslurm_node_cpus_alloc{node=\"n2\"} 8\nslurm_node_cpus_alloc{node=\"n3\"} 15\n"
	"slurm_node_cpus_idle{node=\"n1\"} 4\nslurm_node_cpus_idle{node=\"n2\"} 0\nslurm_node_cpus_idle{node=\"n3\"} 1\n"
	"slurm_nodes 3\nslurm_nodes_alloc 1\nslurm_nodes_draining 2\n"
	"u{username=\"alice\",part=\"a\"} 1\nu{username=\"bob\",part=\"a\"} 2\nu{username=\"bob\",part=\"b\"} 4\nu 7\n"
	"# TYPE empty gauge\n"; /* a family without samples */

/* Evaluate src over `input`; render as "{labels} value" lines sorted, for comparison. */
static char *eval_str(const char *src)
{
	struct expo e;
	struct arena a;
	struct vec v;
	char err[160];
	size_t pos;
	expo_init(&e);
	assert_int_equal(expo_parse(&e, input, strlen(input), 0), 0);
	struct expr *x = expr_compile(src, &pos, err, sizeof(err));
	if (!x)
		fail_msg("compile \"%s\": %s at %zu", src, err, pos);
	const struct expo *ex[1] = { &e };
	struct expr_source s = { ex, 1, NULL, 0, NULL };
	arena_init(&a);
	assert_int_equal(expr_eval(x, &s, &a, &v, err, sizeof(err), NULL), 0);
	struct buf b;
	buf_init(&b, 0);
	/* sort for a stable comparison */
	for (size_t i = 1; i < v.n; i++)
		for (size_t j = i; j > 0 && labels_cmp(v.e[j - 1].labels, v.e[j - 1].nlabels, v.e[j].labels, v.e[j].nlabels) > 0; j--) {
			struct velem t = v.e[j];
			v.e[j] = v.e[j - 1];
			v.e[j - 1] = t;
		}
	for (size_t i = 0; i < v.n; i++)
		write_sample(&b, "", v.e[i].labels, v.e[i].nlabels, v.e[i].v);
	expr_free(x);
	arena_reset(&a);
	expo_free(&e);
	return buf_steal(&b, NULL);
}

#define EXPECT(src, want)                                  \
	do {                                               \
		char *got_ = eval_str(src);                \
		if (strcmp(got_, want) != 0)               \
			fail_msg("%s\n got: %s\nwant: %s", src, got_, want); \
		free(got_);                                \
	} while (0)

static void test_selectors(void **state)
{
	(void)state;
	EXPECT("slurm_nodes", " 3\n");
	EXPECT("slurm_node_cpus{node=\"n2\"}", "{node=\"n2\"} 8\n");
	EXPECT("slurm_node_cpus{node!=\"n2\"}", "{node=\"n1\"} 4\n{node=\"n3\"} 16\n");
	EXPECT("slurm_node_cpus{node=~\"n[12]\"}", "{node=\"n1\"} 4\n{node=\"n2\"} 8\n");
	EXPECT("slurm_node_cpus{node!~\"n.\"}", "");
	EXPECT("u{username=\"\"}", " 7\n"); /* empty matches an absent label, like PromQL */
	EXPECT("absent_metric", "");
}

static void test_aggregations(void **state)
{
	(void)state;
	EXPECT("sum(slurm_node_cpus)", " 28\n");
	EXPECT("max(slurm_node_cpus)", " 16\n");
	EXPECT("min(slurm_node_cpus)", " 4\n");
	EXPECT("count(slurm_node_cpus)", " 3\n");
	EXPECT("avg(slurm_node_cpus_idle)", " 1.6666666666666667\n");
	EXPECT("sum by (username) (u)", " 7\n{username=\"alice\"} 1\n{username=\"bob\"} 6\n");
	EXPECT("sum(u) by (username)", " 7\n{username=\"alice\"} 1\n{username=\"bob\"} 6\n");
	EXPECT("sum without (username) (u)", " 7\n{part=\"a\"} 3\n{part=\"b\"} 4\n");
	EXPECT("sum(absent_metric)", "");
}

static void test_arithmetic(void **state)
{
	(void)state;
	EXPECT("slurm_node_cpus - slurm_node_cpus_alloc - slurm_node_cpus_idle", "{node=\"n1\"} 0\n{node=\"n2\"} 0\n{node=\"n3\"} 0\n");
	EXPECT("slurm_node_cpus_alloc / slurm_node_cpus", "{node=\"n1\"} 0\n{node=\"n2\"} 1\n{node=\"n3\"} 0.9375\n");
	EXPECT("slurm_nodes_alloc - slurm_nodes_draining", " -1\n");
	EXPECT("2 * slurm_nodes + 1", " 7\n");
	EXPECT("-slurm_nodes * 2", " -6\n");
	EXPECT("slurm_nodes % 2", " 1\n");
	EXPECT("1 + 2 * 3", " 7\n");
	EXPECT("(1 + 2) * 3", " 9\n");
	EXPECT("10 - 4 - 3", " 3\n"); /* left associative */
	/* vectors match on identical label sets only: n1..n3 vs unlabelled gives nothing */
	EXPECT("slurm_node_cpus + slurm_nodes", "");
}

static void test_comparisons_and_sets(void **state)
{
	(void)state;
	EXPECT("slurm_node_cpus_idle > 0", "{node=\"n1\"} 4\n{node=\"n3\"} 1\n");
	EXPECT("slurm_node_cpus_idle == bool 0", "{node=\"n1\"} 0\n{node=\"n2\"} 1\n{node=\"n3\"} 0\n");
	EXPECT("slurm_node_cpus > slurm_node_cpus_alloc", "{node=\"n1\"} 4\n{node=\"n3\"} 16\n");
	EXPECT("slurm_node_cpus and slurm_node_cpus_idle == 0", "{node=\"n2\"} 8\n");
	EXPECT("slurm_node_cpus unless slurm_node_cpus_idle == 0", "{node=\"n1\"} 4\n{node=\"n3\"} 16\n");
	EXPECT("(slurm_nodes and slurm_nodes_alloc > 5) or slurm_nodes_draining", " 2\n");
	EXPECT("(slurm_nodes and slurm_nodes_alloc > 0) or slurm_nodes_draining", " 3\n");
	EXPECT("1 < bool 2", " 1\n");
	/* against a family without samples (found by fuzz_expr: an empty vector has no array) */
	EXPECT("slurm_node_cpus and empty", "");
	EXPECT("slurm_node_cpus unless empty", "{node=\"n1\"} 4\n{node=\"n2\"} 8\n{node=\"n3\"} 16\n");
	EXPECT("slurm_node_cpus - empty", "");
	EXPECT("empty or slurm_nodes", " 3\n");
}

static void test_functions(void **state)
{
	(void)state;
	EXPECT("clamp_min(slurm_nodes_alloc - slurm_nodes_draining, 0)", " 0\n");
	EXPECT("clamp_max(slurm_node_cpus, 5)", "{node=\"n1\"} 4\n{node=\"n2\"} 5\n{node=\"n3\"} 5\n");
	EXPECT("floor(slurm_nodes / 2)", " 1\n");
	EXPECT("ceil(slurm_nodes / 2)", " 2\n");
	EXPECT("abs(slurm_nodes_alloc - slurm_nodes_draining)", " 1\n");
	EXPECT("round(vector(2.5))", " 3\n");
	/* PromQL's to_nearest: a multiple of it, divided by its inverse as Prometheus does */
	EXPECT("round(vector(0.28169014084507044), 0.000001)", " 0.28169\n");
	EXPECT("round(vector(0.16666666666666666), 0.000001)", " 0.166667\n");
	EXPECT("round(vector(17), 5)", " 15\n");
	EXPECT("round(vector(2.5), 1)", " 3\n");
	EXPECT("vector(4)", " 4\n");
	EXPECT("scalar(slurm_nodes) * 2", " 6\n");
	EXPECT("scalar(slurm_node_cpus)", " NaN\n");
	EXPECT("label_replace(slurm_nodes, \"status\", \"idle\", \"\", \"\")", "{status=\"idle\"} 3\n");
	EXPECT("label_replace(u{part=\"b\"}, \"user\", \"$1-x\", \"username\", \"(.*)\")",
	       "{part=\"b\",user=\"bob-x\",username=\"bob\"} 4\n");
	EXPECT("label_replace(u{part=\"b\"}, \"user\", \"x\", \"username\", \"nomatch\")", "{part=\"b\",username=\"bob\"} 4\n");
	EXPECT("label_replace(u{part=\"b\"}, \"part\", \"\", \"\", \"\")", "{username=\"bob\"} 4\n");
	/* Go regexp.Expand rules: $$, ${1}, $1x is the (empty) group named 1x, $0 the whole match */
	EXPECT("label_replace(u{part=\"b\"}, \"x\", \"$$1-${1}x-$1x-$0\", \"username\", \"b(o)b\")",
	       "{part=\"b\",username=\"bob\",x=\"$1-ox--bob\"} 4\n");
	EXPECT("label_replace(u{part=\"b\"}, \"x\", \"$9\", \"username\", \"(b)(o)(b)()()()()()(.*)\")",
	       "{part=\"b\",username=\"bob\"} 4\n"); /* group 9 matched "": label removed */
	/* RE2 classes are translated for POSIX */
	EXPECT("slurm_node_cpus{node=~\"n\\\\d\"}", "{node=\"n1\"} 4\n{node=\"n2\"} 8\n{node=\"n3\"} 16\n");
	EXPECT("slurm_node_cpus{node=~\"(n(1|2)+){1,3}\"}", "{node=\"n1\"} 4\n{node=\"n2\"} 8\n");
	/* clamp_* follow Go's math.Max/Min: NaN bound gives NaN, infinity wins */
	EXPECT("clamp_min(slurm_nodes, NaN)", " NaN\n");
	EXPECT("clamp_max(slurm_nodes, -Inf)", " -Inf\n");
	EXPECT("clamp_min(slurm_nodes, 5)", " 5\n");
}

static void compile_error(const char *src, size_t want_pos, const char *want_msg)
{
	char err[160];
	size_t pos = 999;
	struct expr *x = expr_compile(src, &pos, err, sizeof(err));
	if (x)
		fail_msg("\"%s\" compiled", src);
	if (pos != want_pos || !strstr(err, want_msg))
		fail_msg("\"%s\": got %zu \"%s\", want %zu \"%s\"", src, pos, err, want_pos, want_msg);
}

static void test_compile_errors(void **state)
{
	(void)state;
	compile_error("", 0, "unexpected end");
	compile_error("sum(", 4, "unexpected end");
	compile_error("sum(1)", 4, "needs a vector");
	compile_error("a +", 3, "unexpected end");
	compile_error("a b", 2, "unexpected 'b'");
	compile_error("a{x=1}", 4, "quoted string");
	compile_error("a{x=\"1}", 4, "unterminated string");
	compile_error("1 > 2", 2, "needs 'bool'");
	compile_error("a and 1", 2, "vectors on both sides");
	compile_error("a + on(x) b", 4, "not supported");
	compile_error("clamp_min(a)", 11, "','");
	compile_error("clamp_min(a, b)", 13, "must be a number");
	compile_error("vector(a)", 7, "must be a number");
	compile_error("a{x=~\"(\"}", 5, "invalid regular expression");
	compile_error("a{x=~\"(?i)n1\"}", 5, "(?...) groups");
	compile_error("a{x=~\"n.*?\"}", 5, "lazy quantifiers");
	compile_error("a{x=~\"[\\\\d]\"}", 5, "backslash inside");
	/* stacked repetition makes glibc's regcomp exponential: refused like RE2 does */
	compile_error("a{x=~\"a++\"}", 5, "two repetition operators in a row");
	compile_error("a{x=~\"((a+)+)+\"}", 5, "nested too deep");
	compile_error("a{x=~\"(a{1,100}){1,100}\"}", 5, "multiply to more than 1000");
	compile_error("a{x=~\"a{1001}\"}", 5, "above 1000");
	compile_error("a{x=~\"a{x\"}", 5, "must be escaped");
	compile_error("label_replace(a, \"d\", \"r\", \"l\", \"a**\")", 32, "two repetition operators");
	compile_error("sum by (a:b) (x)", 8, "label name");
	compile_error("a # b", 2, "unexpected character");
	compile_error("label_replace(a, \"1x\", \"\", \"\", \"\")", 17, "not a valid label name");
	/* a valid first character is not enough: "st#tus" was served as a label name (fuzz_mapping) */
	compile_error("label_replace(a, \"st#tus\", \"\", \"\", \"\")", 17, "not a valid label name");
	compile_error("label_replace(a, \"d\", \"\", \"s-x\", \"\")", 26, "not a valid label name");
}

/* The most levels of kind `kind` (tu_deep_expr) that compile: the depth limit stops every kind. */
static size_t deepest(int kind)
{
	for (size_t n = 1; n <= 1000; n++) {
		char *src = tu_deep_expr(kind, n, "slurm_node_cpus"), err[160];
		size_t pos;
		struct expr *x = expr_compile(src, &pos, err, sizeof(err));
		expr_free(x);
		free(src);
		if (!x) {
			if (!strstr(err, "deeper than"))
				fail_msg("kind %d, %zu levels: %s", kind, n, err);
			return n - 1;
		}
	}
	fail_msg("kind %d: 1000 levels compile: no depth limit", kind);
	return 0;
}

/* Unbounded nesting once overflowed the stack of the recursive parser (and of every walk over
 * the tree: a chain a + a + ... is built by a loop but is as deep as it is long). */
static void test_depth_limit(void **state)
{
	(void)state;
	for (int k = 0; k < TU_DEEP_KINDS; k++) {
		size_t n = deepest(k);
		/* generous: the shipped table's deepest row is 12 deep */
		if (n < 100)
			fail_msg("kind %d: only %zu levels compile", k, n);
		/* the deepest accepted tree prints as PromQL that compiles again, as deep */
		char *src = tu_deep_expr(k, n, "slurm_node_cpus"), err[160];
		size_t pos;
		struct expr *x = expr_compile(src, &pos, err, sizeof(err));
		assert_non_null(x);
		assert_true(expr_depth(x) <= EXPR_MAX_DEPTH);
		struct buf b;
		buf_init(&b, 0);
		expr_print(x, &b, NULL);
		buf_putc(&b, '\0');
		struct expr *again = expr_compile(b.data, &pos, err, sizeof(err));
		if (!again)
			fail_msg("kind %d: printed form does not compile: %s", k, err);
		assert_int_equal(expr_depth(again), expr_depth(x));
		expr_free(again);
		expr_free(x);
		buf_free(&b);
		free(src);
	}
	/* the reproductions of that crash: refused with a position, not a crash */
	static const int kinds[] = { 0, 1, 2, 3, 8 };
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		char *src = tu_deep_expr(kinds[i], 100000, "slurm_node_cpus"), err[160];
		size_t pos = 0;
		struct expr *x = expr_compile(src, &pos, err, sizeof(err));
		if (x || !strstr(err, "deeper than") || pos >= strlen(src))
			fail_msg("kind %d, 100000 levels: %s at %zu", kinds[i], x ? "compiled" : err, pos);
		free(src);
	}
	/* 258 levels of parsing at most: the 258th '(' opens one too many (at the token after it) */
	char *parens = tu_deep_expr(0, 300, "x");
	compile_error(parens, 258, "nested deeper than 258 levels");
	free(parens);
	/* a chain is refused at the operator that makes it 129 deep */
	char *chain = tu_deep_expr(3, 20000, "a");
	compile_error(chain, 2 + 4 * 127, "deeper than 128 levels"); /* the 128th + */
	free(chain);
}

struct deep_job {
	char *src[TU_DEEP_KINDS];
	const struct expo *ex;
	char msg[200];
};

static void count_metric(const char *name, void *ctx)
{
	(void)name;
	(*(size_t *)ctx)++;
}

/* On the small thread: compile each deepest expression twice, walk, share (every node of the two
 * copies is a repeated subexpression), evaluate with and without the memo, print, free. */
static void *deep_walks(void *arg)
{
	struct deep_job *j = arg;
	for (int k = 0; k < TU_DEEP_KINDS; k++) {
		char err[160];
		size_t pos, nmetrics = 0;
		struct expr *x = expr_compile(j->src[k], &pos, err, sizeof(err));
		struct expr *y = expr_compile(j->src[k], &pos, err, sizeof(err));
		if (!x || !y) {
			snprintf(j->msg, sizeof(j->msg), "kind %d: %s", k, err);
			return j->msg;
		}
		expr_foreach_metric(x, count_metric, &nmetrics);
		struct expr *roots[2] = { x, y };
		size_t nmemo = expr_memo_assign_work(roots, 2, NULL);
		struct arena a;
		arena_init(&a);
		struct expr_source plain = { &j->ex, 1, NULL, 0, NULL };
		struct expr_source shared = { &j->ex, 1, expr_memo_alloc(&a, nmemo), nmemo, NULL };
		struct vec v1, v2, v3;
		int rc = expr_eval(x, &plain, &a, &v1, err, sizeof(err), NULL) | expr_eval(x, &shared, &a, &v2, err, sizeof(err), NULL) |
			 expr_eval(y, &shared, &a, &v3, err, sizeof(err), NULL);
		struct buf b;
		buf_init(&b, 0);
		expr_print(x, &b, NULL);
		if (rc || !nmetrics || (expr_depth(x) > 1 && !nmemo) || v1.n != v2.n || v2.n != v3.n || !b.len)
			snprintf(j->msg, sizeof(j->msg), "kind %d: rc %d, %zu metrics, %zu memo, %zu/%zu/%zu series", k, rc,
				 nmetrics, nmemo, v1.n, v2.n, v3.n);
		buf_free(&b);
		arena_reset(&a);
		expr_free(x);
		expr_free(y);
		if (j->msg[0])
			return j->msg;
	}
	return NULL;
}

/* Nothing that compiles can overflow a 256 KiB stack (libmicrohttpd's threads) in any walk. */
static void test_deepest_on_small_stack(void **state)
{
	(void)state;
	struct deep_job j = { .msg = "" };
	struct expo e;
	expo_init(&e);
	assert_int_equal(expo_parse(&e, input, strlen(input), 0), 0);
	j.ex = &e;
	for (int k = 0; k < TU_DEEP_KINDS; k++)
		j.src[k] = tu_deep_expr(k, deepest(k), "slurm_node_cpus");
	const char *msg = tu_run_on_stack(256 * 1024, deep_walks, &j);
	if (msg)
		fail_msg("%s", msg);
	for (int k = 0; k < TU_DEEP_KINDS; k++)
		free(j.src[k]);
	expo_free(&e);
}

/* Balanced: `(t + t) + (t + t)`, 2^d copies of t. */
static void balanced(struct buf *b, unsigned d, const char *t)
{
	if (!d) {
		buf_puts(b, t);
		return;
	}
	buf_putc(b, '(');
	balanced(b, d - 1, t);
	buf_puts(b, " + ");
	balanced(b, d - 1, t);
	buf_putc(b, ')');
}

/* One of the adversarial shapes (deep, long, wide), of size n (doubling n doubles the text): the
 * rows' sources. */
static size_t memo_shape(int kind, size_t n, char ***rows)
{
	size_t nrows = kind == 3 ? n : 1;
	*rows = xcalloc(nrows, sizeof(**rows));
	for (size_t r = 0; r < nrows; r++) {
		struct buf b;
		buf_init(&b, 0);
		switch (kind) {
		case 0: /* a chain of one repeated term (a long one was 12 s and 606 MB at 8,000 terms) */
			for (size_t i = 0; i < n; i++)
				buf_printf(&b, "%ssum(slurm_node_cpus)", i ? " + " : "");
			break;
		case 1: /* a chain of distinct terms */
			for (size_t i = 0; i < n; i++)
				buf_printf(&b, "%sabs(m%zu)", i ? " - " : "", i);
			break;
		case 2: /* wide but shallow, every half equal to the other */
			for (size_t leaves = 1, d = 0; leaves <= n; leaves *= 2, d++)
				if (leaves * 2 > n)
					balanced(&b, (unsigned)d, "sum(x{l=\"v\"})");
			break;
		case 3: /* many rows, each a chain of 100 terms, some shared with the next row */
			for (size_t i = 0; i < 100; i++)
				buf_printf(&b, "%smax(m%zu)", i ? " + " : "", (r + i) % (n + 50));
			break;
		case 4: /* long label matchers */
			for (size_t i = 0; i < 40; i++) {
				buf_printf(&b, "%ssum(x{l=\"", i ? " + " : "");
				for (size_t k = 0; k < n; k++)
					buf_putc(&b, (char)('a' + (k * 7 + i / 2) % 26));
				buf_puts(&b, "\"})");
			}
			break;
		case 5: /* many matchers in one selector, twice */
			for (int t = 0; t < 2; t++) {
				buf_puts(&b, t ? " + count(x{" : "count(x{");
				for (size_t i = 0; i < n; i++)
					buf_printf(&b, "%sl%zu=\"v\"", i ? ", " : "", i);
				buf_puts(&b, "})");
			}
			break;
		}
		(*rows)[r] = buf_steal(&b, NULL);
	}
	return nrows;
}

static size_t memo_work(int kind, size_t n)
{
	char **src, err[160];
	size_t nrows = memo_shape(kind, n, &src), pos, work = 0;
	struct expr **roots = xcalloc(nrows, sizeof(*roots));
	for (size_t r = 0; r < nrows; r++) {
		roots[r] = expr_compile(src[r], &pos, err, sizeof(err));
		if (!roots[r])
			fail_msg("shape %d, %zu: %s at %zu", kind, n, err, pos);
	}
	size_t slots = expr_memo_assign_work(roots, nrows, &work);
	assert_true(kind == 1 || slots > 0);
	for (size_t r = 0; r < nrows; r++) {
		expr_free(roots[r]);
		free(src[r]);
	}
	free(roots);
	free(src);
	return work;
}

/* The shared-subexpression pass once printed every subexpression's text, quadratic in a chain
 * (docs/performance.md, "Loading the mapping"). Its work doubles when its input doubles, whatever the
 * shape (counted by the pass: deterministic, unlike a time). */
static void test_memo_linear(void **state)
{
	(void)state;
	static const size_t sizes[] = { 60, 60, 512, 200, 500, 500 };
	for (int k = 0; k < 6; k++) {
		size_t w1 = memo_work(k, sizes[k]), w2 = memo_work(k, 2 * sizes[k]);
		if (w2 <= w1 || (double)w2 > 2.5 * (double)w1)
			fail_msg("shape %d: work %zu at size %zu, %zu at %zu", k, w1, sizes[k], w2, 2 * sizes[k]);
	}
}

/* Which subexpressions are shared: those that print the same text (and only those). */
static void expect_slots(const char *a, const char *b, size_t want)
{
	char err[160];
	size_t pos;
	struct expr *roots[2] = { expr_compile(a, &pos, err, sizeof(err)), expr_compile(b, &pos, err, sizeof(err)) };
	assert_non_null(roots[0]);
	assert_non_null(roots[1]);
	size_t got = expr_memo_assign_work(roots, 2, NULL);
	if (got != want)
		fail_msg("%s / %s: %zu shared, want %zu", a, b, got, want);
	expr_free(roots[0]);
	expr_free(roots[1]);
}

static void test_memo_sharing(void **state)
{
	(void)state;
	expect_slots("sum(x) + 1", "sum(x) + 2", 1);
	expect_slots("sum(x) + 0", "sum(x) + -0", 1);          /* "0" and "-0" print differently */
	expect_slots("x * NaN", "x * -NaN", 1);                /* every NaN prints "NaN" */
	expect_slots("sum by (a) (x)", "sum(x) by (a)", 1);
	expect_slots("sum by () (x)", "sum(x)", 0);
	expect_slots("sum by (a, b) (x)", "sum by (b, a) (x)", 0);
	expect_slots("sum without (a) (x)", "sum by (a) (x)", 0);
	expect_slots("a - (b - c)", "a - b - c", 0);
	expect_slots("(sum(x) + 1) * 2", "(sum(x) + 1) / 2", 2);
	expect_slots("abs(x) + abs(x)", "y", 1);
	expect_slots("sum(x{a=\"1\"})", "sum(x{a=\"1\", b=\"2\"})", 0);
	expect_slots("sum(x{a=\"1\"})", "sum(x{a!=\"1\"})", 0);
	expect_slots("sum(x{a=~\"\\\\d\"})", "sum(x{a=~\"\\d\"})", 1); /* the same regex, spelt two ways */
	expect_slots("x > 1", "x > bool 1", 0);
	expect_slots("clamp_min(x, 1)", "clamp_max(x, 1)", 0);
	expect_slots("label_replace(x, \"a\", \"b\", \"c\", \"d\")", "label_replace(x, \"a\", \"b\", \"c\", \"e\")", 0);
	expect_slots("label_replace(x, \"a\", \"b\", \"c\", \"d\")", "label_replace(x, \"a\", \"b\", \"c\", \"d\")", 1);
	expect_slots("-x", "-(x)", 1);
	expect_slots("x or y", "x and y", 0);
	expect_slots("vector(1)", "vector(1.0)", 1);
}

/* Printing back gives PromQL that compiles to the same result. */
static void test_print_roundtrip(void **state)
{
	(void)state;
	static const char *const exprs[] = {
		"10 - (4 - 3)", "(1 + 2) * 3", "sum by (username) (u) / 2", "-slurm_nodes + 1",
		"(slurm_nodes and slurm_nodes_alloc > 0) or slurm_nodes_draining",
		"label_replace(u{part=\"b\"}, \"user\", \"$1\", \"username\", \"(.*)\")",
		"slurm_node_cpus_idle == bool 0", "clamp_min(slurm_nodes_alloc - slurm_nodes_draining, 0)",
	};
	for (size_t i = 0; i < sizeof(exprs) / sizeof(exprs[0]); i++) {
		char err[160];
		size_t pos;
		struct expr *x = expr_compile(exprs[i], &pos, err, sizeof(err));
		assert_non_null(x);
		struct buf b;
		buf_init(&b, 0);
		expr_print(x, &b, NULL);
		char *printed = buf_steal(&b, NULL);
		char *a = eval_str(exprs[i]), *c = eval_str(printed);
		if (strcmp(a, c) != 0)
			fail_msg("%s printed as %s: %s vs %s", exprs[i], printed, a, c);
		free(a);
		free(c);
		free(printed);
		expr_free(x);
	}
}

/* rules.c's selector hook: every selector printed by the hook, the rest as expr_print does. */
static void wrap_selector(const struct expr *sel, struct buf *b, void *ctx)
{
	buf_printf(b, "%s(%s", (const char *)ctx, expr_selector_metric(sel));
	expr_print_matchers(sel, b);
	buf_putc(b, ')');
}

static void test_print_hooks(void **state)
{
	(void)state;
	static const char *const cases[][2] = {
		{ "a", "W(a)" },
		{ "sum by (u) (a{x=\"1\", y=~\"b|c\"}) - b", "sum by (u) (W(a{x=\"1\", y=~\"b|c\"})) - W(b)" },
		{ "label_replace(c{z!=\"}\"}, \"d\", \"$1\", \"e\", \"(.*)\") > bool 2",
		  "label_replace(W(c{z!=\"}\"}), \"d\", \"$1\", \"e\", \"(.*)\") > bool 2" },
		{ "-x unless clamp_max(y, 3)", "-(W(x)) unless clamp_max(W(y), 3)" },
		{ "2 * 3", "2 * 3" },
	};
	const struct expr_print_hooks hooks = { wrap_selector, "W" };
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char err[160];
		size_t pos;
		struct expr *x = expr_compile(cases[i][0], &pos, err, sizeof(err));
		assert_non_null(x);
		struct buf b;
		buf_init(&b, 0);
		expr_print(x, &b, &hooks);
		buf_putc(&b, '\0');
		assert_string_equal(b.data, cases[i][1]);
		buf_free(&b);
		expr_free(x);
	}
	struct buf b;
	buf_init(&b, 0);
	expr_print_str(&b, "a\"\\$\n", 0);
	expr_print_str(&b, "$1", 1);
	buf_putc(&b, '\0');
	assert_string_equal(b.data, "\"a\\\"\\\\$\\n\"\"$$1\"");
	buf_free(&b);
}

/* Every operator and function of expr_ops.h's lists parses, prints back as itself, and binds as
 * its precedence says. */
/* The parser skips the keyword tables for names outside 2..EXPR_KW_MAX bytes: every keyword must
 * fit, and each reserved word must still be refused as a selector. */
static void test_keyword_lengths(void **state)
{
	(void)state;
	static const char *const reserved[] = { "by", "without", "bool", "and", "or", "unless", "on", "ignoring",
						"group_left", "group_right", "offset" };
	for (int i = 0; i < N_BINOPS; i++)
		if (expr_binops[i].word)
			assert_true(strlen(expr_binops[i].text) >= 2 && strlen(expr_binops[i].text) <= EXPR_KW_MAX);
	for (int i = 0; i < N_AGGS; i++)
		assert_true(strlen(expr_agg_names[i]) >= 2 && strlen(expr_agg_names[i]) <= EXPR_KW_MAX);
	for (int i = 0; i < N_FUNCS; i++)
		assert_true(strlen(expr_funcs[i].name) >= 2 && strlen(expr_funcs[i].name) <= EXPR_KW_MAX);
	for (size_t i = 0; i < sizeof(reserved) / sizeof(reserved[0]); i++) {
		char err[160];
		size_t pos;
		struct expr *x = expr_compile(reserved[i], &pos, err, sizeof(err));
		if (x)
			fail_msg("the keyword %s compiled as a selector", reserved[i]);
	}
	/* and the long function name still calls the function */
	char err[160];
	size_t pos;
	struct expr *x = expr_compile("label_replace(a, \"d\", \"$1\", \"s\", \"(.*)\")", &pos, err, sizeof(err));
	assert_non_null(x);
	expr_free(x);
}

static void test_operator_list(void **state)
{
	(void)state;
	static const char *const cases[][2] = {
		{ "a + b * c", "a + b * c" },     { "(a + b) * c", "(a + b) * c" },  { "a - b - c", "a - b - c" },
		{ "a - (b - c)", "a - (b - c)" }, { "a / b % c", "a / b % c" },      { "a == b != c", "a == b != c" },
		{ "a > b < c", "a > b < c" },     { "a >= bool b", "a >= bool b" },  { "a <= b + 1", "a <= b + 1" },
		{ "a and b or c unless d", "a and b or c unless d" },
		{ "a or b and c", "a or b and c" }, { "(a or b) and c", "(a or b) and c" },
		{ "min(a) + max(a) + avg(a) + count(a)", "min(a) + max(a) + avg(a) + count(a)" },
		{ "scalar(a) + abs(ceil(floor(round(a))))", "scalar(a) + abs(ceil(floor(round(a))))" },
		{ "vector(1) + clamp_min(a, 1) + clamp_max(a, 2)", "vector(1) + clamp_min(a, 1) + clamp_max(a, 2)" },
		{ "x{a=\"1\", b!=\"2\", c=~\"3\", d!~\"4\"}", "x{a=\"1\", b!=\"2\", c=~\"3\", d!~\"4\"}" },
		{ "-a * b", "-(a) * b" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char err[160];
		size_t pos;
		struct expr *x = expr_compile(cases[i][0], &pos, err, sizeof(err));
		if (!x)
			fail_msg("%s: %s at %zu", cases[i][0], err, pos);
		struct buf b;
		buf_init(&b, 0);
		expr_print(x, &b, NULL);
		buf_putc(&b, '\0');
		assert_string_equal(b.data, cases[i][1]);
		buf_free(&b);
		expr_free(x);
	}
}

/* Under AddressSanitizer every pool object is its own block (SHIM_ASAN, xmalloc.h): sizes are not
 * checked. */
#define POOL_EXACT SHIM_ASAN

/* A tree is one pool: a lone selector one heap block, and a dense chain (the worst shape a mapping
 * can hold, docs/performance.md) at most 72 bytes a node (it was 112, plus a malloc each). */
static void test_tree_footprint(void **state)
{
	(void)state;
	char err[160];
	size_t pos, blocks;
	struct expr *x = expr_compile("x", &pos, err, sizeof(err));
	assert_non_null(x);
	assert_true(expr_footprint(x, &blocks) <= 256 || POOL_EXACT);
	assert_true(blocks == 1 || POOL_EXACT);
	expr_free(x);
	static const char *const rows[] = { "sum(slurm_node_cpus{node=\"n12\"}) + sum(slurm_node_cpus_alloc)",
					    "label_replace(u{part=~\"b|c\"}, \"user\", \"$1\", \"username\", \"(.*)\")",
					    "sum by (a, b, c, d, e) (x) and on_x > bool 3" };
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		x = expr_compile(rows[i], &pos, err, sizeof(err));
		if (!x)
			fail_msg("%s: %s", rows[i], err);
		expr_footprint(x, &blocks);
		if (blocks != 1 && !POOL_EXACT)
			fail_msg("%s: %zu blocks", rows[i], blocks);
		expr_free(x);
	}
	struct buf b;
	buf_init(&b, 0);
	buf_puts(&b, "a");
	for (int i = 1; i < 128; i++)
		buf_puts(&b, "+a");
	buf_putc(&b, '\0');
	x = expr_compile(b.data, &pos, err, sizeof(err));
	assert_non_null(x);
	size_t bytes = expr_footprint(x, &blocks), nodes = 255;
	if ((bytes > 72 * nodes || blocks > 2) && !POOL_EXACT)
		fail_msg("a+a+...: %zu bytes, %zu blocks for %zu nodes", bytes, blocks, nodes);
	expr_free(x);
	buf_free(&b);
}

/* names.h: the classes are the exposition format's, FNV-1a is the published one. */
static void test_names(void **state)
{
	(void)state;
	for (int c = 0; c < 256; c++) {
		int letter = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_', digit = c >= '0' && c <= '9';
		assert_int_equal(!!is_label_start((char)c), letter);
		assert_int_equal(!!is_label_char((char)c), letter || digit);
		assert_int_equal(!!is_name_start((char)c), letter || c == ':');
		assert_int_equal(!!is_name_char((char)c), letter || digit || c == ':');
	}
	assert_true(fnv1a("", 0) == 0xcbf29ce484222325ULL);
	assert_true(fnv1a("a", 1) == 0xaf63dc4c8601ec8cULL);
	assert_true(fnv1a("foobar", 6) == 0x85944171f73967e8ULL);
	/* the hash slots moved to hmap.c: tests/test_hmap.c */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_selectors),
		cmocka_unit_test(test_aggregations),
		cmocka_unit_test(test_arithmetic),
		cmocka_unit_test(test_comparisons_and_sets),
		cmocka_unit_test(test_functions),
		cmocka_unit_test(test_compile_errors),
		cmocka_unit_test(test_print_roundtrip),
		cmocka_unit_test(test_print_hooks),
		cmocka_unit_test(test_operator_list),
		cmocka_unit_test(test_keyword_lengths),
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_tree_footprint),
		cmocka_unit_test(test_depth_limit),
		cmocka_unit_test(test_deepest_on_small_stack),
		cmocka_unit_test(test_memo_linear),
		cmocka_unit_test(test_memo_sharing),
	};
	return cmocka_run_group_tests_name("expr", tests, NULL, NULL);
}
