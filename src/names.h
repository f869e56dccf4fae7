/* names.h: what the parsers and the tables share about names and hashes: the character classes
 * of metric and label names (expo.c, openmetrics.c, expr_parse.c), FNV-1a (labels.c, expo.c,
 * openmetrics.c, expr_memo.c), and the slots of the open-addressing tables that hold a 32-bit hash
 * beside an element's index (expo.c, expr_eval.c). */
#ifndef SHIM_NAMES_H
#define SHIM_NAMES_H

#include <stddef.h>
#include <stdint.h>

/* ---- character classes ([a-zA-Z_:][a-zA-Z0-9_:]* and [a-zA-Z_][a-zA-Z0-9_]*) ---- */

enum { NAME_START = 1, NAME_CHAR = 2, LABEL_START = 4, LABEL_CHAR = 8 };
extern const unsigned char names_class[256];

static inline int is_name_start(char c)
{
	return names_class[(unsigned char)c] & NAME_START;
}

static inline int is_name_char(char c)
{
	return names_class[(unsigned char)c] & NAME_CHAR;
}

static inline int is_label_start(char c)
{
	return names_class[(unsigned char)c] & LABEL_START;
}

static inline int is_label_char(char c)
{
	return names_class[(unsigned char)c] & LABEL_CHAR;
}

/* Whether s is a whole metric name: [a-zA-Z_:][a-zA-Z0-9_:]*. */
static inline int names_is_metric_name(const char *s)
{
	if (!is_name_start(*s))
		return 0;
	while (*++s)
		if (!is_name_char(*s))
			return 0;
	return 1;
}

/* Whether s is a whole label name: [a-zA-Z_][a-zA-Z0-9_]*. */
static inline int names_is_label_name(const char *s)
{
	if (!is_label_start(*s))
		return 0;
	while (*++s)
		if (!is_label_char(*s))
			return 0;
	return 1;
}

/* ---- FNV-1a (64 bits) ---- */

#define FNV_OFFSET 0xcbf29ce484222325ULL
#define FNV_PRIME 1099511628211ULL

static inline uint64_t fnv1a_byte(uint64_t h, unsigned char c)
{
	return (h ^ c) * FNV_PRIME;
}

static inline uint64_t fnv1a(const char *s, size_t n)
{
	uint64_t h = FNV_OFFSET;
	for (size_t i = 0; i < n; i++)
		h = fnv1a_byte(h, (unsigned char)s[i]);
	return h;
}

#endif
