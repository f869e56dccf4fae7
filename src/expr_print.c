/* expr_print.c: a compiled expression printed back as PromQL. */
#include "expr_int.h"
#include "buf.h"

#include <math.h>
#include <string.h>

void expr_print_str(struct buf *b, const char *s, int replacement)
{
	buf_putc(b, '"');
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			buf_putc(b, '\\');
		if (*s == '\n')
			buf_puts(b, "\\n");
		else if (*s == '$' && replacement)
			buf_puts(b, "$$");
		else
			buf_putc(b, *s);
	}
	buf_putc(b, '"');
}

const char *expr_selector_metric(const struct expr *sel)
{
	return sel->metric;
}

void expr_print_matchers(const struct expr *sel, struct buf *b)
{
	if (!sel->nm)
		return;
	buf_putc(b, '{');
	for (size_t i = 0; i < sel->nm; i++) {
		buf_printf(b, "%s%s%s", i ? ", " : "", sel->m[i].label, expr_mops[sel->m[i].op].text);
		expr_print_str(b, sel->m[i].value, 0);
	}
	buf_putc(b, '}');
}

static int prec_of(const struct expr *x)
{
	return x->kind == K_BIN ? expr_binops[x->op].prec : 9;
}

static void print_rec(const struct expr *x, struct buf *b, const struct expr_print_hooks *h, int parent_prec);

static void print_agg(const struct expr *x, struct buf *b, const struct expr_print_hooks *h)
{
	buf_puts(b, expr_agg_names[x->agg]);
	if (x->has_grouping) {
		buf_puts(b, x->without ? " without (" : " by (");
		for (size_t i = 0; i < x->ngrouping; i++)
			buf_printf(b, "%s%s", i ? ", " : "", x->grouping[i]);
		buf_puts(b, ") ");
	}
	buf_putc(b, '(');
	print_rec(x->a, b, h, 0);
	buf_putc(b, ')');
}

static void print_func(const struct expr *x, struct buf *b, const struct expr_print_hooks *h)
{
	buf_printf(b, "%s(", expr_funcs[x->fn].name);
	print_rec(x->a, b, h, 0);
	for (int i = 0; x->fn == F_LABEL_REPLACE && i < 4; i++) {
		buf_puts(b, ", ");
		expr_print_str(b, x->lr->s[i], 0);
	}
	if (x->b) {
		buf_puts(b, ", ");
		print_rec(x->b, b, h, 0);
	}
	buf_putc(b, ')');
}

static void print_rec(const struct expr *x, struct buf *b, const struct expr_print_hooks *h, int parent_prec)
{
	switch ((enum kind)x->kind) {
	case K_NUM:
		if (isnan(x->num))
			buf_puts(b, "NaN");
		else if (isinf(x->num))
			buf_puts(b, x->num > 0 ? "Inf" : "-Inf");
		else
			buf_printf(b, "%.17g", x->num);
		return;
	case K_SEL:
		if (h && h->selector) {
			h->selector(x, b, h->ctx);
			return;
		}
		buf_puts(b, x->metric);
		expr_print_matchers(x, b);
		return;
	case K_AGG:
		print_agg(x, b, h);
		return;
	case K_NEG:
		buf_puts(b, "-(");
		print_rec(x->a, b, h, 0);
		buf_putc(b, ')');
		return;
	case K_FUNC:
		print_func(x, b, h);
		return;
	case K_BIN: {
		int p = prec_of(x);
		if (p <= parent_prec)
			buf_putc(b, '(');
		print_rec(x->a, b, h, p - 1);
		buf_printf(b, " %s%s ", expr_binops[x->op].text, x->is_bool ? " bool" : "");
		print_rec(x->b, b, h, p);
		if (p <= parent_prec)
			buf_putc(b, ')');
		return;
	}
	}
}

void expr_print(const struct expr *x, struct buf *b, const struct expr_print_hooks *hooks)
{
	print_rec(x, b, hooks, 0);
}
