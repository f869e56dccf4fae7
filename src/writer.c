/* writer.c: see writer.h. */
#include "writer.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "utf8.h"
#include "xmalloc.h"

/* Writers into a caller-sized scratch area, by the text format's rules (what Prometheus reads back:
 * compare.c has its own for a report people read); each returns the end of what it wrote. */

/* At most 32 bytes: integers exactly, others the shortest %.15g..%.17g that reads back exactly. */
#define VALUE_MAX 32

static char *text_value(char *p, double v)
{
	if (isnan(v)) {
		memcpy(p, "NaN", 3);
		return p + 3;
	}
	if (isinf(v)) {
		memcpy(p, v > 0 ? "+Inf" : "-Inf", 4);
		return p + 4;
	}
	if (v == floor(v) && fabs(v) < 9007199254740992.0) {
		/* integers, by far the common case: exact and fast */
		char tmp[24], *q = tmp + sizeof(tmp);
		long long i = (long long)v;
		unsigned long long u = i < 0 ? 0ULL - (unsigned long long)i : (unsigned long long)i;
		do {
			*--q = (char)('0' + u % 10);
			u /= 10;
		} while (u);
		if (i < 0 || (i == 0 && signbit(v)))
			*--q = '-';
		size_t n = (size_t)(tmp + sizeof(tmp) - q);
		memcpy(p, q, n);
		return p + n;
	}
	char tmp[40];
	int n = 0;
	for (int prec = 15; prec <= 17; prec++) {
		n = snprintf(tmp, sizeof(tmp), "%.*g", prec, v);
		double back;
		if (sscanf(tmp, "%lf", &back) == 1 && back == v)
			break;
	}
	memcpy(p, tmp, (size_t)n);
	return p + n;
}

/* Label values escape \ " and newline; HELP text (quote = 0) only \ and newline. Invalid UTF-8 is
 * repaired (each maximal invalid subpart becomes U+FFFD, see utf8.h): Prometheus refuses a whole
 * scrape for one invalid label value. Other control bytes become U+FFFD too (utf8_is_control: the
 * format has no escape for them). mapping.c cleans row results before their duplicate check, so
 * this is the last line of defence. At most 3n bytes. */
static char *text_escaped(char *p, const char *s, size_t n, int quote)
{
	for (size_t i = 0; i < n;) {
		char c = s[i];
		if ((unsigned char)c >= 0x80) {
			int ok;
			size_t len = utf8_next((const unsigned char *)s + i, n - i, &ok);
			memcpy(p, ok ? s + i : "\xEF\xBF\xBD", ok ? len : 3);
			p += ok ? len : 3;
			i += len;
			continue;
		}
		if (utf8_is_control((unsigned char)c)) {
			memcpy(p, "\xEF\xBF\xBD", 3);
			p += 3;
			i++;
			continue;
		}
		if (c == '\\' || c == '\n' || (quote && c == '"')) {
			*p++ = '\\';
			c = c == '\n' ? 'n' : c;
		}
		*p++ = c;
		i++;
	}
	return p;
}

void write_value(struct buf *b, double v)
{
	char tmp[VALUE_MAX];
	buf_append(b, tmp, (size_t)(text_value(tmp, v) - tmp));
}

static void escape(struct buf *b, const char *s, size_t n, int quote)
{
	char stack[256];
	char *tmp = 3 * n <= sizeof(stack) ? stack : xmalloc(3 * n);
	buf_append(b, tmp, (size_t)(text_escaped(tmp, s, n, quote) - tmp));
	if (tmp != stack)
		free(tmp);
}

void write_help(struct buf *b, const char *name, size_t nlen, const char *help, size_t hlen)
{
	buf_puts(b, "# HELP ");
	buf_append(b, name, nlen);
	buf_putc(b, ' ');
	escape(b, help, hlen, 0);
	buf_putc(b, '\n');
}

void write_header(struct buf *b, const char *name, const char *help, const char *type)
{
	write_help(b, name, strlen(name), help, strlen(help));
	buf_printf(b, "# TYPE %s %s\n", name, type);
}

/* One line is formatted into scratch space sized for the worst case, then appended whole. */
static void sample_line(struct buf *b, const char *name, size_t nlen, const struct label *ls, size_t n, double v)
{
	size_t need = nlen + 3 + VALUE_MAX;
	for (size_t i = 0; i < n; i++)
		need += ls[i].nlen + 3 * (size_t)ls[i].vlen + 4;
	char stack[1024];
	char *tmp = need <= sizeof(stack) ? stack : xmalloc(need), *p = tmp;
	memcpy(p, name, nlen);
	p += nlen;
	char sep = '{';
	for (size_t i = 0; i < n; i++) {
		if (!ls[i].vlen)
			continue; /* an empty value is the same as no label */
		*p++ = sep;
		sep = ',';
		memcpy(p, ls[i].name, ls[i].nlen);
		p += ls[i].nlen;
		*p++ = '=';
		*p++ = '"';
		p = text_escaped(p, ls[i].value, ls[i].vlen, 1);
		*p++ = '"';
	}
	if (sep == ',')
		*p++ = '}';
	*p++ = ' ';
	p = text_value(p, v);
	*p++ = '\n';
	buf_append(b, tmp, (size_t)(p - tmp));
	if (tmp != stack)
		free(tmp);
}

void write_sample(struct buf *b, const char *name, const struct label *ls, size_t n, double v)
{
	sample_line(b, name, strlen(name), ls, n, v);
}

void write_sample_n(struct buf *b, const char *name, size_t nlen, const struct label *ls, size_t n, double v)
{
	sample_line(b, name, nlen, ls, n, v);
}

int write_family(struct buf *b, const char *name, const char *help, const char *type, const struct vec *v)
{
	size_t mark = buf_mark(b);
	write_header(b, name, help, type);
	size_t nlen = strlen(name);
	for (size_t i = 0; i < v->n && !b->overflow; i++)
		sample_line(b, name, nlen, v->e[i].labels, v->e[i].nlabels, v->e[i].v);
	if (b->overflow) {
		buf_rollback(b, mark);
		return -1;
	}
	return 0;
}
