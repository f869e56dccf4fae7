/* yamlfile.h: a YAML file read strictly, with positions: the layer under the web config
 * (webconfig*.c) and the --probe.targets-file (probe.c). Errors "PATH:LINE:COL: reason" (one
 * printable line), scalars decoded as go-yaml v2 does for the exporter-toolkit's Go types (a plain
 * empty, "~" or "null" scalar is null, any other scalar a string, booleans the YAML 1.1 plain
 * words), strict mappings (no duplicate or non-scalar keys), libyaml's errors, and the bounds a
 * document is checked against before it is composed (nesting, anchors, aliases and what they
 * expand to). Node pointers borrow the yaml document. */
#ifndef SHIM_YAMLFILE_H
#define SHIM_YAMLFILE_H

#include <stddef.h>
#include <string.h>
#include <yaml.h>

#define YF_MAX_FILE ((size_t)1024 * 1024)
#define YF_MAX_DEPTH 32

/* One file being read: its path (for messages), where the error goes, and the parsed document. */
struct yf_ctx {
	const char *path;
	char *err;               /* the message of the last error; NULL: none kept */
	size_t errlen;
	yaml_document_t *doc;
};

/* Record an error at mark m (or with no position); always return -1 so callers can
 * `return yf_fail_at(...)`. The message is one printable line. */
int yf_fail_at(struct yf_ctx *c, yaml_mark_t m, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
int yf_fail_nopos(struct yf_ctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Printable, truncated copy of [s, s+n) for quoting in messages. Returns buf. */
#define YF_ESC_SIZE 300
const char *yf_esc(char buf[YF_ESC_SIZE], const char *s, size_t n);
/* "a mapping", "a sequence", "a scalar" or "an empty node", for messages. */
const char *yf_type_name(const yaml_node_t *n);

/* A scalar's bytes and length, whether it is s, whether it is null; the node of id in the document. */
static inline const char *yf_sval(const yaml_node_t *n)
{
	return (const char *)n->data.scalar.value;
}

static inline size_t yf_slen(const yaml_node_t *n)
{
	return n->data.scalar.length;
}

static inline int yf_scalar_is_equal(const yaml_node_t *n, const char *s)
{
	size_t l = strlen(s);
	return n->type == YAML_SCALAR_NODE && yf_slen(n) == l && memcmp(yf_sval(n), s, l) == 0;
}

static inline int yf_is_null(const yaml_node_t *n)
{
	if (n->type != YAML_SCALAR_NODE || n->data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
		return 0;
	return yf_slen(n) == 0 || yf_scalar_is_equal(n, "~") || yf_scalar_is_equal(n, "null") || yf_scalar_is_equal(n, "Null") ||
	       yf_scalar_is_equal(n, "NULL");
}

static inline yaml_node_t *yf_node(struct yf_ctx *c, int id)
{
	return yaml_document_get_node(c->doc, id);
}

/* A new string with the scalar's bytes (which hold no NUL: checked by the caller). */
char *yf_dup_scalar(const yaml_node_t *n);
/* Decode a string field into *out (new, or NULL when null / empty with empty_is_unset). 0 or -1. */
int yf_get_string(struct yf_ctx *c, const yaml_node_t *n, const char *what, int empty_is_unset, char **out);
/* Decode a YAML 1.1 boolean. 0 or -1. */
int yf_get_bool(struct yf_ctx *c, const yaml_node_t *n, const char *what, int *out);
/* Index of scalar n in names[0..count), or -1. */
int yf_lookup(const yaml_node_t *n, const char *const *names, size_t count);
/* Every key of mapping n is a scalar without NUL bytes and appears once: 0, else -1. */
int yf_check_mapping(struct yf_ctx *c, const yaml_node_t *n, const char *what);
/* n is a mapping with sane keys (*present set) or null (absent: *present 0): 0; else -1. */
int yf_get_mapping(struct yf_ctx *c, const yaml_node_t *n, const char *what, int *present);
#define YF_FOR_PAIRS(c, n, k, v)                                                                      \
	for (yaml_node_pair_t *p_ = (n)->data.mapping.pairs.start;                                 \
	     p_ < (n)->data.mapping.pairs.top && ((k) = yf_node((c), p_->key)) != NULL &&          \
	     ((v) = yf_node((c), p_->value)) != NULL;                                              \
	     p_++)

/* Report the parser's error with its position. */
void yf_parser_fail(struct yf_ctx *c, const yaml_parser_t *p, const char *buf, size_t len);
/* -1 (error set at the event that passes the bound) when buf nests deeper than YF_MAX_DEPTH, holds
 * more anchors or aliases, or expands (its aliases) to more than any web config or targets file
 * needs; see yamlfile.c. 0 otherwise (syntax errors are left for yaml_parser_load to report).
 * The file itself is read with file_read (file_read.h): regular files only, bounded, never blocking. */
int yf_check_bounds(struct yf_ctx *c, const char *buf, size_t len);

#endif
