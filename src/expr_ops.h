/* expr_ops.h: the one list of the expression language's operators, aggregations, functions and
 * matchers (private to src/expr*.c). Each list is an X-macro: the parser, the printer, the memo
 * pass and the evaluator expand it into their enums, name tables and switches, so adding an operator
 * or a function is one line here plus its evaluator (an inline function of expr_eval.c named in
 * the line). No state; nothing owned. */
#ifndef SHIM_EXPR_OPS_H
#define SHIM_EXPR_OPS_H

/* Binary operators: X(enum, text, precedence, is a word, class, evaluator).
 * Precedence: higher binds tighter; all are left-associative. The class decides typing and how the
 * evaluator combines operands: OPC_ARITH and OPC_CMP apply evaluator(a, b, &keep) to numbers (a
 * comparison keeps a series when keep is set, or yields keep with `bool`); OPC_SET matches label
 * sets (and, or, unless) and has no evaluator. */
#define EXPR_BINOPS(X)                                         \
	X(B_ADD, "+", 4, 0, OPC_ARITH, op_add)                 \
	X(B_SUB, "-", 4, 0, OPC_ARITH, op_sub)                 \
	X(B_MUL, "*", 5, 0, OPC_ARITH, op_mul)                 \
	X(B_DIV, "/", 5, 0, OPC_ARITH, op_div)                 \
	X(B_MOD, "%", 5, 0, OPC_ARITH, op_mod)                 \
	X(B_EQ, "==", 3, 0, OPC_CMP, op_eq)                    \
	X(B_NE, "!=", 3, 0, OPC_CMP, op_ne)                    \
	X(B_GT, ">", 3, 0, OPC_CMP, op_gt)                     \
	X(B_LT, "<", 3, 0, OPC_CMP, op_lt)                     \
	X(B_GE, ">=", 3, 0, OPC_CMP, op_ge)                    \
	X(B_LE, "<=", 3, 0, OPC_CMP, op_le)                    \
	X(B_AND, "and", 2, 1, OPC_SET, op_none)                \
	X(B_OR, "or", 1, 1, OPC_SET, op_none)                  \
	X(B_UNLESS, "unless", 2, 1, OPC_SET, op_none)

/* Precedence of unary minus and plus: tighter than every binary operator. */
#define EXPR_PREC_UNARY 5

/* Aggregations: X(enum, name). Their folds are agg_start/agg_fold in expr_eval.c. */
#define EXPR_AGGS(X) X(A_SUM, "sum") X(A_MIN, "min") X(A_MAX, "max") X(A_AVG, "avg") X(A_COUNT, "count")

/* Functions: X(enum, name, arguments, first argument is a number, returns a number, evaluator).
 * FN_MAP functions apply evaluator(v, arg) to each sample's value (arg: the second argument, a
 * number, or 0); FN_VECTOR, FN_SCALAR and FN_LABEL_REPLACE have evaluators of their own in
 * apply_func, and label_replace's four string arguments are parsed by parse_label_replace_args. */
#define EXPR_FUNCS(X)                                                      \
	X(F_VECTOR, "vector", 1, 1, 0, FN_VECTOR, fn_none)                  \
	X(F_SCALAR, "scalar", 1, 0, 1, FN_SCALAR, fn_none)                  \
	X(F_ABS, "abs", 1, 0, 0, FN_MAP, fn_abs)                            \
	X(F_CEIL, "ceil", 1, 0, 0, FN_MAP, fn_ceil)                         \
	X(F_FLOOR, "floor", 1, 0, 0, FN_MAP, fn_floor)                      \
	X(F_ROUND, "round", 1, 0, 0, FN_MAP, fn_round)                      \
	X(F_CLAMP_MIN, "clamp_min", 2, 0, 0, FN_MAP, fn_clamp_min)          \
	X(F_CLAMP_MAX, "clamp_max", 2, 0, 0, FN_MAP, fn_clamp_max)          \
	X(F_LABEL_REPLACE, "label_replace", 5, 0, 0, FN_LABEL_REPLACE, fn_none)

/* Label matchers of a selector: X(enum, text, is a regex, negated). */
#define EXPR_MATCHERS(X) X(M_EQ, "=", 0, 0) X(M_NE, "!=", 0, 1) X(M_RE, "=~", 1, 0) X(M_NRE, "!~", 1, 1)

#define EXPR_ENUM_FIRST(e, ...) e,
#define EXPR_PLUS_ONE(...) +1
enum binop { EXPR_BINOPS(EXPR_ENUM_FIRST) };
enum agg { EXPR_AGGS(EXPR_ENUM_FIRST) };
enum func { EXPR_FUNCS(EXPR_ENUM_FIRST) };
enum mop { EXPR_MATCHERS(EXPR_ENUM_FIRST) };
#define N_BINOPS (0 EXPR_BINOPS(EXPR_PLUS_ONE))
#define N_AGGS (0 EXPR_AGGS(EXPR_PLUS_ONE))
#define N_FUNCS (0 EXPR_FUNCS(EXPR_PLUS_ONE))
#define N_MOPS (0 EXPR_MATCHERS(EXPR_PLUS_ONE))

enum opclass { OPC_ARITH, OPC_CMP, OPC_SET };
enum fnkind { FN_MAP, FN_VECTOR, FN_SCALAR, FN_LABEL_REPLACE };

struct binop_info {
	const char *text;
	int prec, word;
	enum opclass cls;
};
struct func_info {
	const char *name;
	int nargs;          /* arguments */
	int arg0_scalar;    /* first argument is a number (vector()) */
	int returns_scalar;
	enum fnkind kind;
};
struct mop_info {
	const char *text;
	int regex, negated;
};

/* The tables, indexed by the enums (expr_parse.c). */
/* Every keyword (aggregation, function, word operator, reserved word) is 2 to EXPR_KW_MAX bytes
 * long, so the parser takes a name of another length for a selector without comparing it with each
 * (tests/test_expr.c checks the tables against the bound). */
#define EXPR_KW_MAX 16

extern const struct binop_info expr_binops[N_BINOPS];
extern const char *const expr_agg_names[N_AGGS];
extern const struct func_info expr_funcs[N_FUNCS];
extern const struct mop_info expr_mops[N_MOPS];

#endif
