/* jsonpos.c: see jsonpos.h. A minimal JSON walker: it only tracks positions, never values. */
#include "jsonpos.h"
#include "xmalloc.h"

#include <stdlib.h>
#include <string.h>

struct scan {
	const char *s;
	size_t len, i;
	int line, col;
	int depth;
};

static void adv(struct scan *c)
{
	if (c->s[c->i] == '\n') {
		c->line++;
		c->col = 1;
	} else {
		c->col++;
	}
	c->i++;
}

static void ws(struct scan *c)
{
	while (c->i < c->len && strchr(" \t\r\n", c->s[c->i]) && c->s[c->i])
		adv(c);
}

static struct jpos here(const struct scan *c)
{
	struct jpos p = { c->line, c->col, c->i };
	return p;
}

static int skip_string(struct scan *c, char **out)
{
	size_t start;
	if (c->i >= c->len || c->s[c->i] != '"')
		return -1;
	adv(c);
	start = c->i;
	while (c->i < c->len && c->s[c->i] != '"') {
		if (c->s[c->i] == '\\' && c->i + 1 < c->len)
			adv(c);
		adv(c);
	}
	if (c->i >= c->len)
		return -1;
	if (out)
		*out = xstrndup(c->s + start, c->i - start);
	adv(c);
	return 0;
}

/* After a member or an element: ',' (1: another follows) or `close` (0: the end), else -1. */
static int next_or_close(struct scan *c, char close)
{
	ws(c);
	if (c->i < c->len && c->s[c->i] == ',') {
		adv(c);
		return 1;
	}
	if (c->i < c->len && c->s[c->i] == close) {
		adv(c);
		return 0;
	}
	return -1;
}

static int skip_value(struct scan *c)
{
	ws(c);
	if (c->i >= c->len || ++c->depth > 64)
		return -1;
	char ch = c->s[c->i];
	int rc = 0;
	if (ch == '"') {
		rc = skip_string(c, NULL);
	} else if (ch == '{' || ch == '[') {
		char close = ch == '{' ? '}' : ']';
		adv(c);
		ws(c);
		if (c->i < c->len && c->s[c->i] == close) {
			adv(c);
		} else {
			for (;;) {
				if (ch == '{') {
					ws(c);
					if (skip_string(c, NULL) < 0)
						return -1;
					ws(c);
					if (c->i >= c->len || c->s[c->i] != ':')
						return -1;
					adv(c);
				}
				if (skip_value(c) < 0)
					return -1;
				int more = next_or_close(c, close);
				if (more < 0)
					return -1;
				if (!more)
					break;
			}
		}
	} else {
		while (c->i < c->len && !strchr(",]} \t\r\n", c->s[c->i]))
			adv(c);
	}
	c->depth--;
	return rc;
}

/* Walk an object's members, recording key positions; call `sub` on the value of member "metrics". */
static int members(struct scan *c, struct jsonpos_field **f, size_t *n, int (*sub)(struct scan *, void *), void *ctx)
{
	size_t cap = 0;
	ws(c);
	if (c->i >= c->len || c->s[c->i] != '{')
		return -1;
	adv(c);
	ws(c);
	if (c->i < c->len && c->s[c->i] == '}') {
		adv(c);
		return 0;
	}
	for (;;) {
		char *key = NULL;
		ws(c);
		if (skip_string(c, &key) < 0)
			return -1;
		ws(c);
		if (c->i >= c->len || c->s[c->i] != ':') {
			free(key);
			return -1;
		}
		adv(c);
		ws(c);
		*f = xgrow(*f, &cap, *n + 1, sizeof(**f));
		(*f)[*n].key = key;
		(*f)[*n].at = here(c);
		(*n)++;
		int rc = sub && strcmp(key, "metrics") == 0 ? sub(c, ctx) : skip_value(c);
		if (rc < 0)
			return -1;
		rc = next_or_close(c, '}');
		if (rc <= 0)
			return rc;
	}
}

static int rows(struct scan *c, void *ctx)
{
	struct jsonpos *p = ctx;
	size_t cap = 0;
	if (c->i >= c->len || c->s[c->i] != '[')
		return skip_value(c);
	adv(c);
	ws(c);
	if (c->i < c->len && c->s[c->i] == ']') {
		adv(c);
		return 0;
	}
	for (;;) {
		ws(c);
		p->rows = xgrow(p->rows, &cap, p->nrows + 1, sizeof(*p->rows));
		struct jsonpos_row *r = &p->rows[p->nrows++];
		memset(r, 0, sizeof(*r));
		r->at = here(c);
		if (c->i < c->len && c->s[c->i] == '{') {
			if (members(c, &r->fields, &r->nfields, NULL, NULL) < 0)
				return -1;
		} else if (skip_value(c) < 0) {
			return -1;
		}
		int more = next_or_close(c, ']');
		if (more <= 0)
			return more;
	}
}

int jsonpos_scan(const char *text, size_t len, struct jsonpos *out)
{
	struct scan c = { text, len, 0, 1, 1, 0 };
	memset(out, 0, sizeof(*out));
	return members(&c, &out->top, &out->ntop, rows, out);
}

void jsonpos_free(struct jsonpos *p)
{
	for (size_t i = 0; i < p->ntop; i++)
		free(p->top[i].key);
	free(p->top);
	for (size_t r = 0; r < p->nrows; r++) {
		for (size_t i = 0; i < p->rows[r].nfields; i++)
			free(p->rows[r].fields[i].key);
		free(p->rows[r].fields);
	}
	free(p->rows);
	memset(p, 0, sizeof(*p));
}

static const struct jpos origin = { 1, 1, 0 };

struct jpos jsonpos_field(const struct jsonpos *p, size_t row, const char *key)
{
	if (row >= p->nrows)
		return origin;
	for (size_t i = 0; key && i < p->rows[row].nfields; i++)
		if (strcmp(p->rows[row].fields[i].key, key) == 0)
			return p->rows[row].fields[i].at;
	return p->rows[row].at;
}

struct jpos jsonpos_top(const struct jsonpos *p, const char *key)
{
	for (size_t i = 0; i < p->ntop; i++)
		if (strcmp(p->top[i].key, key) == 0)
			return p->top[i].at;
	return origin;
}

struct jpos jsonpos_in_string(const char *text, size_t len, struct jpos str, size_t doff)
{
	struct jpos p = str;
	size_t i = str.off, d = 0;
	if (i >= len || text[i] != '"')
		return str;
	i++;
	p.col++;
	while (i < len && text[i] != '"' && d < doff) {
		if (text[i] == '\\' && i + 1 < len) {
			if (text[i + 1] == 'u' && i + 5 < len) {
				unsigned v = (unsigned)strtoul((char[5]){ text[i + 2], text[i + 3], text[i + 4], text[i + 5], 0 }, NULL, 16);
				d += v < 0x80 ? 1 : v < 0x800 ? 2 : 3;
				i += 6;
				p.col += 6;
			} else {
				d++;
				i += 2;
				p.col += 2;
			}
		} else {
			d++;
			i++;
			p.col++;
		}
	}
	p.off = i;
	return p;
}
