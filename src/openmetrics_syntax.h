/* openmetrics_syntax.h: the lexical layer of the OpenMetrics validator (openmetrics.h), shared by
 * openmetrics.c (line grammar, family and metadata rules) and openmetrics_syntax.c (numbers kept as
 * their text, a set of byte strings, label sets, the name character classes). Private to these two
 * files; nothing else includes it.
 *
 * Ownership: a struct num and a struct olabel borrow the exposition's bytes (and, for a decoded label
 * value, the labelset's vals); a keyset and a labelset own their memory, released by keyset_free and
 * labelset_free. */
#ifndef SHIM_OPENMETRICS_SYNTAX_H
#define SHIM_OPENMETRICS_SYNTAX_H

#include <stddef.h>
#include <stdint.h>

#include "buf.h"

enum num_kind { N_FINITE, N_PINF, N_NINF, N_NAN };

struct num {
	enum num_kind kind;
	double v;
	const char *s; /* the token; a realnumber when kind == N_FINITE */
	size_t n;
};

struct kslot {
	uint64_t h;
	size_t off, len;
	int used;
};

struct keyset {
	struct buf store; /* the keys' bytes */
	struct kslot *slot;
	size_t cap, n;
};

struct olabel {
	const char *name;
	size_t nlen;
	const char *raw; /* the value as written, between the quotes */
	size_t rawlen;
	size_t voff, vlen; /* the decoded value, in labelset.vals */
	size_t cp;         /* its length in code points */
};

struct labelset {
	struct olabel *l;
	size_t n, cap;
	struct buf vals;
};

extern const struct num num_zero, num_one;

int is_realnumber(const char *s, size_t n);
int ascii_ieq(const char *s, size_t n, const char *lower);
int dec_is_integer(const char *s, size_t n);
int num_cmp(const struct num *a, const struct num *b);
int num_negative(const struct num *x);
void keyset_init(struct keyset *k);
void keyset_free(struct keyset *k);
void keyset_clear(struct keyset *k);
int keyset_has(const struct keyset *k, const char *s, size_t n);
int keyset_add(struct keyset *k, const char *s, size_t n);
void labelset_init(struct labelset *ls);
void labelset_free(struct labelset *ls);
const char *label_value(const struct labelset *ls, const struct olabel *l);
const struct olabel *label_find(const struct labelset *ls, const char *name, size_t nlen);
const char *parse_labels(struct labelset *ls, const char *p, const char *end, const char **err);
void key_labels(struct buf *k, const struct labelset *ls, const char *skip, size_t skiplen);

#endif
