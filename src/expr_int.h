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


/* A compiled regex of a tree, in the tree's pool; expr_free regfree()s them all. */
struct expr_re {
	regex_t re;
	struct expr_re *next;
};

struct matcher {
	const char *label, *value;
	enum mop op;
	regex_t *re;                /* =~ and !~ */
};

/* label_replace's arguments, apart from the node: few nodes have them. */
struct lrep {
	const char *s[4];           /* dst, replacement, src, regex */
	regex_t *re;
	int is_const;               /* matches every series and sets a constant: no regexec needed */
};

/* One cache line (64 bytes): a mapping may hold millions of nodes (a 4 MiB file up to 3.2 million),
 * and both loading and walking them are bound by memory. Small fields are narrow for that; what
 * every walk reads comes first. */
struct expr {
	struct expr *a, *b;         /* operands / arguments */
	uint8_t kind;               /* enum kind */
	uint8_t scalar;             /* static type: number */
	uint8_t op;                 /* K_BIN: enum binop */
	uint8_t is_bool;            /* K_BIN */
	uint8_t agg;                /* K_AGG: enum agg */
	uint8_t fn;                 /* K_FUNC: enum func */
	uint8_t without, has_grouping;  /* K_AGG */
	uint16_t depth;             /* of the subtree: 1 for a leaf (at most EXPR_MAX_DEPTH) */
	uint32_t pos;               /* byte offset in the source (a mapping's expression is < 4 MiB) */
	uint32_t memo;              /* 1-based slot of a repeated subexpression, 0 if none */
	uint32_t memo_class;        /* expr_memo_assign_work: the class of nodes that print alike */
	uint32_t memo_hash;         /* and (the low bits of) the hash of its fields */
	union {
		uint32_t nm;        /* K_SEL: matchers */
		uint32_t ngrouping; /* K_AGG: grouping labels */
	};
	union {                     /* by kind: read a member only for its kind */
		double num;                             /* K_NUM */
		struct {                                /* K_SEL */
			const char *metric;
			struct matcher *m;
		};
		const char **grouping;                  /* K_AGG */
		struct lrep *lr;                        /* K_FUNC: label_replace's */
	};
};

/* Compile a PromQL (RE2) regex with POSIX regcomp (expr_re.c). Returns 0, or -1 with *why set. */
int compile_re(regex_t *re, const char *src, int cflags, const char **why);
/* Append label_replace's replacement t with $-references expanded from match m of sv (expr_re.c). */
void expand_template(struct buf *b, const char *t, const char *sv, const regmatch_t *m, size_t ngroups);


#endif
