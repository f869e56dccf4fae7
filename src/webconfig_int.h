/* webconfig_int.h: what the parts of the web config loader share; private to webconfig*.c
 * (and to probe.c, which reads the --probe.targets-file with the same YAML layer).
 *
 *   webconfig.c        webconfig_load/free, the top level and http_server_config, the getters
 *   webconfig_yaml.c   YAML with positions: errors "PATH:LINE:COL: reason", scalar decoding as
 *                      go-yaml v2 does, strict mappings (no duplicate or non-scalar keys),
 *                      libyaml's errors, and the bounds checked before a document is composed
 *                      (nesting depth, anchors, aliases, the size aliases expand it to)
 *   webconfig_tls.c    tls_server_config: the toolkit's checks, PEM loading, the GnuTLS priority string
 *   webconfig_auth.c   basic_auth_users: bcrypt hashes, the password check and its cache, the
 *                      Authorization header decoder
 *
 * Ownership: struct wc_ctx lives on webconfig_load's stack for one load; its wc is the object being
 * built (owned by the load until it is handed to the caller) and its tls the section's raw values
 * (freed by wc_tls_cfg_clear). Every "char *" field of these structs is owned by its struct.
 * Node pointers borrow the yaml document, valid for the load. */
#ifndef SHIM_WEBCONFIG_INT_H
#define SHIM_WEBCONFIG_INT_H

#include <pthread.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "file_read.h"
#include "webconfig.h"

#define WC_MAX_FILE ((size_t)1024 * 1024)
#define WC_N_CURVES 4 /* exporter-toolkit's curve_preferences names (webconfig_tls.c) */
#define WC_N_CIPHERS 17 /* exporter-toolkit's cipher_suites names (Go's tls.CipherSuites(), webconfig_tls.c) */

struct wc_user {
	char *name;
	char *hash;
	pthread_mutex_t lock;    /* guards verified: the one field that changes after the load */
	char *verified;          /* last password that matched hash, or NULL (see check_basic_auth) */
};
struct wc_header {
	const char *key; /* static, from allowed_headers */
	char *value;
};

struct webconfig {
	char *cert_pem;          /* NULL when TLS is off */
	char *key_pem;
	const char *min_version; /* static strings, NULL when not configured */
	const char *max_version;
	char *priorities;
	struct wc_user *users;
	size_t nusers;
	struct wc_header *headers;
	size_t nheaders;
};

struct tls_cfg {
	yaml_mark_t mark; /* the tls_server_config key */
	char *cert_file, *key_file, *cert, *key;
	yaml_mark_t cert_file_mark, key_file_mark, cert_mark, key_mark, max_mark;
	int auth_set;
	int min_v, max_v; /* index into tls_versions, -1 = not set */
	size_t curves[WC_N_CURVES];
	size_t ncurves;
	size_t ciphers[WC_N_CIPHERS]; /* cipher_suites, in order, each once */
	size_t nciphers;
	int ciphers_set;              /* cipher_suites given (an empty list: Go's defaults, as not given) */
	yaml_mark_t ciphers_mark;
	int prefer_server;
};

struct wc_ctx {
	const char *path;
	char *err;
	size_t errlen;
	yaml_document_t *doc;
	struct webconfig *wc;
	struct tls_cfg tls;
};

/* Wipe n bytes of p, then free it (p may be NULL): secrets do not linger in freed memory. */
static inline void wc_free_secret(void *p, size_t n)
{
	if (p) {
		explicit_bzero(p, n);
		free(p);
	}
}

/* The same for a NUL-terminated string (may be NULL). */
static inline void wc_free_secret_str(char *s)
{
	if (s)
		wc_free_secret(s, strlen(s));
}

/* Record an error at mark m (or with no position); always return -1 so callers can
 * `return wc_fail_at(...)`. The message is one printable line. */
int wc_fail_at(struct wc_ctx *c, yaml_mark_t m, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
int wc_fail_nopos(struct wc_ctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Printable, truncated copy of [s, s+n) for quoting in messages (see webconfig_yaml.c). Returns buf. */
#define ESC_SIZE 300
const char *wc_esc(char buf[ESC_SIZE], const char *s, size_t n);
/* "a mapping", "a sequence", "a scalar" or "an empty node", for messages. */
const char *wc_type_name(const yaml_node_t *n);

static inline const char *sval(const yaml_node_t *n)
{
	return (const char *)n->data.scalar.value;
}

static inline size_t slen(const yaml_node_t *n)
{
	return n->data.scalar.length;
}

static inline int scalar_eq(const yaml_node_t *n, const char *s)
{
	size_t l = strlen(s);
	return n->type == YAML_SCALAR_NODE && slen(n) == l && memcmp(sval(n), s, l) == 0;
}

static inline int is_null(const yaml_node_t *n)
{
	if (n->type != YAML_SCALAR_NODE || n->data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
		return 0;
	return slen(n) == 0 || scalar_eq(n, "~") || scalar_eq(n, "null") || scalar_eq(n, "Null") ||
	       scalar_eq(n, "NULL");
}

static inline yaml_node_t *node_at(struct wc_ctx *c, int id)
{
	return yaml_document_get_node(c->doc, id);
}


/* A new string with the scalar's bytes (which hold no NUL: checked by the caller). */
char *wc_dup_scalar(const yaml_node_t *n);
/* Decode a string field into *out (new, or NULL when null / empty with empty_is_unset). 0 or -1. */
int wc_get_string(struct wc_ctx *c, const yaml_node_t *n, const char *what, int empty_is_unset, char **out);
/* Decode a YAML 1.1 boolean. 0 or -1. */
int wc_get_bool(struct wc_ctx *c, const yaml_node_t *n, const char *what, int *out);
/* Index of scalar n in names[0..count), or -1. */
int wc_lookup(const yaml_node_t *n, const char *const *names, size_t count);
/* Every key of mapping n is a scalar without NUL bytes and appears once: 0, else -1. */
int wc_check_mapping(struct wc_ctx *c, const yaml_node_t *n, const char *what);
/* n is a mapping with sane keys: 0; null (absent): 1; else -1. */
int wc_expect_mapping(struct wc_ctx *c, const yaml_node_t *n, const char *what);
#define WC_FOR_PAIRS(c, n, k, v)                                                                      \
	for (yaml_node_pair_t *p_ = (n)->data.mapping.pairs.start;                                 \
	     p_ < (n)->data.mapping.pairs.top && ((k) = node_at((c), p_->key)) != NULL &&          \
	     ((v) = node_at((c), p_->value)) != NULL;                                              \
	     p_++)


/* Report the parser's error with its position. */
void wc_yaml_fail(struct wc_ctx *c, const yaml_parser_t *p, const char *buf, size_t len);
/* -1 (error set at the event that passes the bound) when buf nests deeper, holds more anchors or
 * aliases, or expands (its aliases) to more than any web config or targets file needs; see
 * webconfig_yaml.c. 0 otherwise (syntax errors are left for yaml_parser_load to report). */
int wc_check_bounds(struct wc_ctx *c, const char *buf, size_t len);

/* tls_server_config: key is the section's key node. Fills c->tls, then c->wc's TLS fields. */
int wc_parse_tls(struct wc_ctx *c, const yaml_node_t *key, const yaml_node_t *n);
void wc_tls_cfg_clear(struct tls_cfg *t);

/* basic_auth_users into c->wc->users; wc_users_free wipes and frees them. */
int wc_parse_users(struct wc_ctx *c, const yaml_node_t *n);
void wc_users_free(struct webconfig *wc);

#endif
