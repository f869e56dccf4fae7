/* expr.h: a PromQL subset for mapping rows, compiled once at load, evaluated per scrape.
 *
 *   selectors      name, name{l="v", l!="v", l=~"re", l!~"re"}     (regexes fully anchored, POSIX ERE)
 *   aggregations   sum, min, max, avg, count  [by|without (l, ...)]  (before or after the argument)
 *   arithmetic     + - * / %  between vectors (one-to-one on identical label sets) and numbers
 *   comparisons    == != > < >= <=  filter like PromQL; with `bool` they yield 0/1
 *   set operators  and, or, unless  (on identical label sets)
 *   functions      vector(s), scalar(v), abs, ceil, floor, round, clamp_min(v, s), clamp_max(v, s),
 *                  label_replace(v, "dst", "replacement", "src", "regex")  (Go's $1 / ${1} / $$ expansion)
 *   precedence     or < and,unless < comparisons < + - < * / %  ; unary minus; parentheses
 *
 * The operators, aggregations, functions and matchers are listed once, in expr_ops.h. The modules:
 * expr_parse.c (lexer, parser), expr_eval.c (evaluation), expr_memo.c (shared subexpressions),
 * expr_re.c (regexes), expr_print.c (printing back as PromQL); expr_int.h is what they share.
 *
 * Ownership: expr_compile returns a new tree (expr_free). Evaluation results live in the arena
 * passed in and borrow label bytes from the payloads and the tree. */
#ifndef SHIM_EXPR_H
#define SHIM_EXPR_H

#include <stddef.h>
#include <stdint.h>

#include "labels.h"
#include "xmalloc.h"

struct expo;
struct expr;

/* Every walk over a compiled tree recurses once per level, on the stacks of the HTTP server's
 * threads too, so expr_compile refuses a tree deeper than EXPR_MAX_DEPTH (leaves are 1 deep; a
 * chain a + b + c of n operators is n + 1 deep) and text nested deeper than EXPR_MAX_NESTING
 * (parentheses, unary signs, arguments and right operands; twice the depth, so that expr_print's
 * form of any accepted tree compiles again). The shipped table's deepest row is 12 deep. */
#define EXPR_MAX_DEPTH 128
#define EXPR_MAX_NESTING (2 * EXPR_MAX_DEPTH + 2)

/* Compile. On error returns NULL and sets *errpos (byte offset into src) and errmsg. */
struct expr *expr_compile(const char *src, size_t *errpos, char *errmsg, size_t errlen);
void expr_free(struct expr *x);
/* The bytes a compiled tree holds (its nodes, names, strings, matchers; not regcomp's own memory),
 * and in *blocks (if not NULL) how many heap blocks: tests bound both, docs/performance.md. */
size_t expr_footprint(const struct expr *x, size_t *blocks);

/* Visit every metric name the expression reads. */
void expr_foreach_metric(const struct expr *x, void (*fn)(const char *name, void *ctx), void *ctx);
/* 1 if the expression's static type is a number, not a vector. */
int expr_is_scalar(const struct expr *x);
/* How deep the tree is (a leaf is 1; at most EXPR_MAX_DEPTH). */
unsigned expr_depth(const struct expr *x);

/* Where input families come from, and (optional) per-scrape storage for shared subexpressions:
 * memo must have nmemo entries from expr_memo_alloc, fresh for each scrape. */
struct expr_memo;
struct expr_source {
	const struct expo *const *expos;
	size_t nexpos;
	struct expr_memo *memo;
	size_t nmemo;
	struct arena *memo_arena;   /* where shared results live (outlives each row's arena); NULL: same */
};

/* Find subexpressions that occur more than once among the trees (the same PromQL text) and number
 * them, so that evaluating them again in one scrape reuses the first result. Returns how many
 * memo slots evaluation needs. Call once, after compiling every tree. *work (if not NULL) says how much work the pass did (nodes visited, hash probes,
 * bytes hashed and compared): tests check that it grows linearly with the trees. */
size_t expr_memo_assign_work(struct expr *const *roots, size_t n, size_t *work);
struct expr_memo *expr_memo_alloc(struct arena *a, size_t nmemo);

/* Evaluate into *out (allocated from `a`, or borrowed from a payload: treat it as read-only). A
 * scalar result becomes a one-element unlabelled vector. If missing is not NULL, *missing is set
 * to the first metric name whose family was absent (else NULL).
 * Returns 0, or -1 with errmsg set (an input family was ambiguous: duplicate series). */
int expr_eval(const struct expr *x, const struct expr_source *src, struct arena *a, struct vec *out,
	      char *errmsg, size_t errlen, const char **missing);

/* Printing back as PromQL: the text compiles again to the same tree. A hook may print each
 * selector itself (rules.c wraps and renames them), with the two accessors below; hooks may be NULL. */
struct buf;
struct expr_print_hooks {
	void (*selector)(const struct expr *sel, struct buf *b, void *ctx);
	void *ctx;
};
void expr_print(const struct expr *x, struct buf *b, const struct expr_print_hooks *hooks);
/* A selector's metric name (borrowed from the tree), and its {matchers} as printed (nothing if none). */
const char *expr_selector_metric(const struct expr *sel);
void expr_print_matchers(const struct expr *sel, struct buf *b);
/* A PromQL double-quoted string literal of s; replacement: also double '$' (a label_replace
 * replacement that must come out as s itself). */
void expr_print_str(struct buf *b, const char *s, int replacement);

#endif
