/* expr_int.h: what the modules of the expression language share (private to src/expr*.c): the
 * compiled tree's node, the regex translation, and the tables of expr_ops.h.
 *
 * Ownership: a node owns its operands (a, b), its strings, its matchers and its label_replace
 * arguments; expr_free frees them all. compile_re fills a regex_t the caller regfree()s. */
#ifndef SHIM_EXPR_INT_H
#define SHIM_EXPR_INT_H

#include "expr.h"
#include "expr_ops.h"

#include <regex.h>

struct buf;

enum kind { K_NUM, K_SEL, K_AGG, K_BIN, K_NEG, K_FUNC };

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

/* Compile a PromQL (RE2) regex with POSIX regcomp (expr_re.c). Returns 0, or -1 with *why set. */
int compile_re(regex_t *re, const char *src, int cflags, const char **why);
/* Append label_replace's replacement t with $-references expanded from match m of sv (expr_re.c). */
void expand_template(struct buf *b, const char *t, const char *sv, const regmatch_t *m, size_t ngroups);


#endif
