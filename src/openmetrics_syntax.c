/* openmetrics_syntax.c: see openmetrics_syntax.h. Numbers are compared exactly on their text, not
 * float64-rounded; the keyset is an open-addressing hash set over one byte store. */
#include "openmetrics_syntax.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "names.h"
#include "xmalloc.h"

/* ---- numbers ---------------------------------------------------------------------------------- */

static int is_digit(char c)
{
	return c >= '0' && c <= '9';
}

/* realnumber = [SIGN] 1*DIGIT ["." *DIGIT] ["e" [SIGN] 1*DIGIT] / [SIGN] *DIGIT "." 1*DIGIT [...] */
int om_is_realnumber(const char *s, size_t n)
{
	size_t i = 0, digits = 0, exp = 0;
	if (i < n && (s[i] == '+' || s[i] == '-'))
		i++;
	for (; i < n && is_digit(s[i]); i++)
		digits++;
	if (i < n && s[i] == '.')
		for (i++; i < n && is_digit(s[i]); i++)
			digits++;
	if (!digits)
		return 0;
	if (i < n && (s[i] == 'e' || s[i] == 'E')) {
		i++;
		if (i < n && (s[i] == '+' || s[i] == '-'))
			i++;
		for (; i < n && is_digit(s[i]); i++)
			exp++;
		if (!exp)
			return 0;
	}
	return i == n;
}

int om_ascii_ieq(const char *s, size_t n, const char *lower)
{
	size_t k = strlen(lower);
	if (n != k)
		return 0;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		if (c >= 'A' && c <= 'Z')
			c = (char)(c - 'A' + 'a');
		if (c != lower[i])
			return 0;
	}
	return 1;
}

/* A decimal real number as 0.d1d2d3... x 10^exp, digits read from the token skipping '.'. */
struct dec {
	int neg, zero;
	int64_t exp;
	const char *m, *mend; /* from the first non-zero digit to the end of the mantissa */
};

static void dec_parse(const char *s, size_t n, struct dec *d)
{
	const char *p = s, *end = s + n, *mend, *dot = NULL, *first = NULL;
	int64_t e = 0, eneg = 0;
	d->neg = 0;
	if (p < end && (*p == '+' || *p == '-'))
		d->neg = *p++ == '-';
	for (mend = p; mend < end && *mend != 'e' && *mend != 'E'; mend++) {
		if (*mend == '.')
			dot = mend;
		else if (!first && *mend != '0')
			first = mend;
	}
	if (mend < end) {
		const char *q = mend + 1;
		if (*q == '+' || *q == '-')
			eneg = *q++ == '-';
		for (; q < end; q++)
			if (e < INT64_C(1000000000000000))
				e = e * 10 + (*q - '0');
		if (eneg)
			e = -e;
	}
	if (!dot)
		dot = mend;
	d->zero = first == NULL;
	d->m = first;
	d->mend = mend;
	d->exp = 0;
	if (!first)
		return;
	if (first < dot)
		d->exp = (int64_t)(dot - first) + e;
	else
		d->exp = -(int64_t)(first - dot - 1) + e;
}

static int dec_next_digit(const char **p, const char *end)
{
	while (*p < end && **p == '.')
		(*p)++;
	if (*p >= end)
		return -1;
	return *(*p)++ - '0';
}

/* Exact comparison of two realnumber tokens: -1, 0, 1. */
static int dec_cmp(const char *a, size_t an, const char *b, size_t bn)
{
	struct dec x, y;
	dec_parse(a, an, &x);
	dec_parse(b, bn, &y);
	if (x.zero && y.zero)
		return 0;
	int sx = x.zero ? 0 : x.neg ? -1 : 1, sy = y.zero ? 0 : y.neg ? -1 : 1;
	if (sx != sy)
		return sx < sy ? -1 : 1;
	int mag; /* compare magnitudes, then apply the sign */
	if (x.exp != y.exp) {
		mag = x.exp < y.exp ? -1 : 1;
	} else {
		const char *p = x.m, *q = y.m;
		mag = 0;
		for (;;) {
			int dx = dec_next_digit(&p, x.mend), dy = dec_next_digit(&q, y.mend);
			if (dx < 0 && dy < 0)
				break;
			if (dx < 0)
				dx = 0;
			if (dy < 0)
				dy = 0;
			if (dx != dy) {
				mag = dx < dy ? -1 : 1;
				break;
			}
		}
	}
	return sx < 0 ? -mag : mag;
}

/* 1 when the realnumber token is a whole number. */
int om_dec_is_integer(const char *s, size_t n)
{
	struct dec d;
	dec_parse(s, n, &d);
	if (d.zero)
		return 1;
	int64_t sig = 0, last = 0; /* position of the last non-zero significant digit */
	const char *p = d.m;
	int digit;
	while ((digit = dec_next_digit(&p, d.mend)) >= 0) {
		sig++;
		if (digit)
			last = sig;
	}
	return last <= d.exp;
}

/* Order of two numbers that are not NaN: -Inf < finite < +Inf, finite ones compared exactly. */
int om_num_cmp(const struct om_num *a, const struct om_num *b)
{
	static const int rank[] = { [OM_NINF] = 0, [OM_FINITE] = 1, [OM_PINF] = 2, [OM_NAN] = 3 };
	if (a->kind != b->kind)
		return rank[a->kind] < rank[b->kind] ? -1 : 1;
	if (a->kind != OM_FINITE)
		return 0;
	if (a->v != b->v) /* correctly rounded conversion is monotonic */
		return a->v < b->v ? -1 : 1;
	return dec_cmp(a->s, a->n, b->s, b->n);
}

const struct om_num om_num_zero = { OM_FINITE, 0.0, "0", 1 };
const struct om_num om_num_one = { OM_FINITE, 1.0, "1", 1 };

int om_num_is_negative(const struct om_num *x)
{
	return x->kind == OM_NINF || (x->kind == OM_FINITE && om_num_cmp(x, &om_num_zero) < 0);
}

/* ---- a set of byte strings -------------------------------------------------------------------- */

void om_keyset_init(struct om_keyset *k)
{
	buf_init(&k->store, 0);
	k->key = NULL;
	k->cap = k->n = 0;
	k->idx = (struct hmap){ 0 };
}

void om_keyset_free(struct om_keyset *k)
{
	buf_free(&k->store);
	free(k->key);
	hmap_free(&k->idx);
	om_keyset_init(k);
}

/* Empty the set; a large table is dropped so that clearing stays cheap. */
void om_keyset_clear(struct om_keyset *k)
{
	k->store.len = 0;
	k->n = 0;
	if (k->idx.mask + 1 > 256)
		hmap_free(&k->idx);
	else
		hmap_clear(&k->idx);
}

static size_t keyset_find(const struct om_keyset *k, const char *s, size_t n, uint32_t h)
{
	struct hmap_iter it = hmap_iter(&k->idx, h);
	for (size_t i; (i = hmap_next(&it)) != HMAP_NONE;)
		if (k->key[i].len == n && (n == 0 || memcmp(k->store.data + k->key[i].off, s, n) == 0))
			return i;
	return HMAP_NONE;
}

int om_keyset_has(const struct om_keyset *k, const char *s, size_t n)
{
	return keyset_find(k, s, n, hmap_hash(s, n)) != HMAP_NONE;
}

/* Add a key: 1 if it was new, 0 if it was already there. */
int om_keyset_add(struct om_keyset *k, const char *s, size_t n)
{
	uint32_t h = hmap_hash(s, n);
	if (keyset_find(k, s, n, h) != HMAP_NONE)
		return 0;
	k->key = xgrow(k->key, &k->cap, k->n + 1, sizeof(*k->key));
	k->key[k->n] = (struct om_key){ k->store.len, n };
	buf_append(&k->store, s, n);
	hmap_put(&k->idx, h, k->n++);
	return 1;
}

/* ---- labels ----------------------------------------------------------------------------------- */

void om_labelset_init(struct om_labelset *ls)
{
	ls->l = NULL;
	ls->n = ls->cap = 0;
	buf_init(&ls->vals, 0);
}

void om_labelset_free(struct om_labelset *ls)
{
	free(ls->l);
	buf_free(&ls->vals);
	om_labelset_init(ls);
}

const char *om_label_value(const struct om_labelset *ls, const struct om_label *l)
{
	return l->vlen ? ls->vals.data + l->voff : "";
}

static int olabel_cmp(const void *a, const void *b)
{
	const struct om_label *x = a, *y = b;
	size_t n = x->nlen < y->nlen ? x->nlen : y->nlen;
	int c = memcmp(x->name, y->name, n);
	if (c)
		return c;
	return x->nlen < y->nlen ? -1 : x->nlen > y->nlen;
}

const struct om_label *om_label_find(const struct om_labelset *ls, const char *name, size_t nlen)
{
	for (size_t i = 0; i < ls->n; i++)
		if (ls->l[i].nlen == nlen && memcmp(ls->l[i].name, name, nlen) == 0)
			return &ls->l[i];
	return NULL;
}

/* ---- syntax ----------------------------------------------------------------------------------- */

/* labels = "{" [label *("," label)] "}"; p is at '{'. Fills ls (sorted by name) and returns the byte
 * after '}', or NULL with *err set. */
const char *om_parse_labels(struct om_labelset *ls, const char *p, const char *end, const char **err)
{
	ls->n = 0;
	ls->vals.len = 0;
	p++;
	if (p < end && *p == '}')
		return p + 1;
	for (;;) {
		if (p >= end || !is_label_start(*p)) {
			*err = "invalid label name";
			return NULL;
		}
		ls->l = xgrow(ls->l, &ls->cap, ls->n + 1, sizeof(*ls->l));
		struct om_label *l = &ls->l[ls->n];
		l->name = p;
		while (p < end && is_label_char(*p))
			p++;
		l->nlen = (size_t)(p - l->name);
		if (p >= end || *p != '=') {
			*err = "expected '=' after label name";
			return NULL;
		}
		if (++p >= end || *p != '"') {
			*err = "expected a double quote to open the label value";
			return NULL;
		}
		l->raw = ++p;
		l->voff = ls->vals.len;
		l->cp = 0;
		for (;;) {
			if (p >= end) {
				*err = "unterminated label value";
				return NULL;
			}
			char c = *p++;
			if (c == '"')
				break;
			if (c == '\\') {
				if (p >= end) {
					*err = "unterminated label value";
					return NULL;
				}
				char e = *p++;
				if (e == 'n')
					buf_putc(&ls->vals, '\n');
				else if (e == '\\' || e == '"')
					buf_putc(&ls->vals, e);
				else { /* BS normal-char: kept as written */
					buf_putc(&ls->vals, '\\');
					buf_putc(&ls->vals, e);
					l->cp++;
				}
				l->cp++;
				continue;
			}
			buf_putc(&ls->vals, c);
			if (((unsigned char)c & 0xC0) != 0x80)
				l->cp++;
		}
		l->rawlen = (size_t)(p - 1 - l->raw);
		l->vlen = ls->vals.len - l->voff;
		ls->n++;
		if (p < end && *p == ',') {
			p++;
			continue;
		}
		if (p < end && *p == '}')
			break;
		*err = "expected ',' or '}' after label value";
		return NULL;
	}
	qsort(ls->l, ls->n, sizeof(*ls->l), olabel_cmp);
	for (size_t i = 1; i < ls->n; i++)
		if (olabel_cmp(&ls->l[i - 1], &ls->l[i]) == 0) {
			*err = "duplicate label name";
			return NULL;
		}
	return p + 1;
}

/* The canonical bytes of a label set, without the label `skip` (may be NULL). */
void om_key_labels(struct buf *k, const struct om_labelset *ls, const char *skip, size_t skiplen)
{
	for (size_t i = 0; i < ls->n; i++) {
		const struct om_label *l = &ls->l[i];
		if (skip && l->nlen == skiplen && memcmp(l->name, skip, skiplen) == 0)
			continue;
		buf_append(k, l->name, l->nlen);
		buf_putc(k, '\0'); /* names never hold NUL */
		buf_append(k, &l->vlen, sizeof(l->vlen));
		buf_append(k, om_label_value(ls, l), l->vlen);
	}
}
