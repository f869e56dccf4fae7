/* writer.c: see writer.h. */
#include "writer.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

void write_value(struct buf *b, double v)
{
	char tmp[40];
	int n;
	if (isnan(v)) {
		buf_puts(b, "NaN");
		return;
	}
	if (isinf(v)) {
		buf_puts(b, v > 0 ? "+Inf" : "-Inf");
		return;
	}
	if (v == floor(v) && fabs(v) < 9007199254740992.0) {
		/* integers, by far the common case: exact and fast */
		long long i = (long long)v;
		unsigned long long u = i < 0 ? 0ULL - (unsigned long long)i : (unsigned long long)i;
		char *p = tmp + sizeof(tmp);
		do {
			*--p = (char)('0' + u % 10);
			u /= 10;
		} while (u);
		if (i < 0 || (i == 0 && signbit(v)))
			*--p = '-';
		buf_append(b, p, (size_t)(tmp + sizeof(tmp) - p));
		return;
	}
	/* shortest representation that reads back exactly */
	for (int prec = 15; prec <= 17; prec++) {
		n = snprintf(tmp, sizeof(tmp), "%.*g", prec, v);
		double back;
		if (sscanf(tmp, "%lf", &back) == 1 && back == v)
			break;
	}
	(void)n;
	buf_puts(b, tmp);
}

static void escape(struct buf *b, const char *s, size_t n, int quote)
{
	size_t start = 0;
	for (size_t i = 0; i < n; i++) {
		const char *rep = NULL;
		if (s[i] == '\\')
			rep = "\\\\";
		else if (s[i] == '\n')
			rep = "\\n";
		else if (quote && s[i] == '"')
			rep = "\\\"";
		if (rep) {
			buf_append(b, s + start, i - start);
			buf_puts(b, rep);
			start = i + 1;
		}
	}
	buf_append(b, s + start, n - start);
}

void write_header(struct buf *b, const char *name, const char *help, const char *type)
{
	buf_printf(b, "# HELP %s ", name);
	escape(b, help, strlen(help), 0);
	buf_printf(b, "\n# TYPE %s %s\n", name, type);
}

void write_sample(struct buf *b, const char *name, const struct label *ls, size_t n, double v)
{
	buf_puts(b, name);
	int open = 0;
	for (size_t i = 0; i < n; i++) {
		if (!ls[i].vlen)
			continue; /* an empty value is the same as no label */
		buf_putc(b, open ? ',' : '{');
		open = 1;
		buf_append(b, ls[i].name, ls[i].nlen);
		buf_puts(b, "=\"");
		escape(b, ls[i].value, ls[i].vlen, 1);
		buf_putc(b, '"');
	}
	if (open)
		buf_putc(b, '}');
	buf_putc(b, ' ');
	write_value(b, v);
	buf_putc(b, '\n');
}

int write_family(struct buf *b, const char *name, const char *help, const char *type, const struct vec *v)
{
	size_t mark = buf_mark(b);
	write_header(b, name, help, type);
	for (size_t i = 0; i < v->n; i++)
		write_sample(b, name, v->e[i].labels, v->e[i].nlabels, v->e[i].v);
	if (b->overflow) {
		buf_rollback(b, mark);
		return -1;
	}
	return 0;
}
