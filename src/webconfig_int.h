/* webconfig_int.h: what the parts of the web config loader share; private to webconfig*.c. They
 * read the file with the YAML layer (yamlfile.h), which probe.c uses too.
 *
 *   webconfig.c        webconfig_load/free, the top level and http_server_config, the getters
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
#include <yaml.h>

#include "webconfig.h"
#include "yamlfile.h"

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
	struct yf_ctx y;         /* the YAML layer's: the path, the error, the document */
	struct webconfig *wc;
	struct tls_cfg tls;
};

/* tls_server_config: key is the section's key node. Fills c->tls, then c->wc's TLS fields. */
int wc_parse_tls(struct wc_ctx *c, const yaml_node_t *key, const yaml_node_t *n);
void wc_tls_cfg_clear(struct tls_cfg *t);

/* basic_auth_users into c->wc->users; wc_users_free wipes and frees them. */
int wc_parse_users(struct wc_ctx *c, const yaml_node_t *n);
void wc_users_free(struct webconfig *wc);

#endif
