/* openmetrics_syntax.h: the lexical layer of the OpenMetrics validator (openmetrics.h), shared by
 * openmetrics.c (line grammar, family and metadata rules) and openmetrics_syntax.c (numbers kept as
 * their text, a set of byte strings, label sets, the name character classes). Private to these two
 * files; nothing else includes it.
 *
 * Every export is prefixed om_ (openmetrics.c's own names are static). A struct om_num and a
 * struct om_label borrow the exposition's bytes (and, for a decoded label value, the labelset's
 * vals); a keyset and a labelset own their memory (om_keyset_free, om_labelset_free). */
#ifndef SHIM_OPENMETRICS_SYNTAX_H
#define SHIM_OPENMETRICS_SYNTAX_H

#include <stddef.h>
#include <stdint.h>

#include "buf.h"
#include "hmap.h"

enum om_num_kind { OM_FINITE, OM_PINF, OM_NINF, OM_NAN };

struct om_num {
	enum om_num_kind kind;
	double v;
	const char *s; /* the token; a realnumber when kind == OM_FINITE */
	size_t n;
};

struct om_key {
	size_t off, len;  /* in store */
};

struct om_keyset {
	struct buf store; /* the keys' bytes */
	struct om_key *key; /* in the order added */
	size_t cap, n;
	struct hmap idx;  /* key's index by hash (hmap.h) */
};

struct om_label {
	const char *name;
	size_t nlen;
	const char *raw; /* the value as written, between the quotes */
	size_t rawlen;
	size_t voff, vlen; /* the decoded value, in labelset.vals */
	size_t cp;         /* its length in code points */
};

struct om_labelset {
	struct om_label *l;
	size_t n, cap;
	struct buf vals;
};

extern const struct om_num om_num_zero, om_num_one;

int om_is_realnumber(const char *s, size_t n);
int om_ascii_ieq(const char *s, size_t n, const char *lower);
int om_dec_is_integer(const char *s, size_t n);
int om_num_cmp(const struct om_num *a, const struct om_num *b);
int om_num_is_negative(const struct om_num *x);
void om_keyset_init(struct om_keyset *k);
void om_keyset_free(struct om_keyset *k);
void om_keyset_clear(struct om_keyset *k);
int om_keyset_has(const struct om_keyset *k, const char *s, size_t n);
int om_keyset_add(struct om_keyset *k, const char *s, size_t n);
void om_labelset_init(struct om_labelset *ls);
void om_labelset_free(struct om_labelset *ls);
const char *om_label_value(const struct om_labelset *ls, const struct om_label *l);
const struct om_label *om_label_find(const struct om_labelset *ls, const char *name, size_t nlen);
const char *om_parse_labels(struct om_labelset *ls, const char *p, const char *end, const char **err);
void om_key_labels(struct buf *k, const struct om_labelset *ls, const char *skip, size_t skiplen);

#endif
