/* webconfig.h: exporter-toolkit web config (TLS + basic auth), loaded with libyaml.
 * Ownership: webconfig_load returns a new object (webconfig_free).
 *
 * The file format is the one of prometheus/exporter-toolkit's --web.config.file
 * (docs/web-configuration.md), parsed strictly as the toolkit does (yaml.UnmarshalStrict): unknown
 * keys, duplicate keys and values of the wrong YAML type are errors. slurm-exporter-shim supports only
 * client_auth_type NoClientCert; anything that would need client certificates (another
 * client_auth_type, client_ca, client_ca_file, client_allowed_sans) and rate_limit are rejected.
 * http_server_config.headers accepts the toolkit's five headers only (Strict-Transport-Security,
 * X-Content-Type-Options: nosniff, X-Frame-Options: deny|sameorigin, X-XSS-Protection,
 * Content-Security-Policy); a blank value leaves the header unset.
 *
 * All getters accept NULL (and then return NULL / 0). A loaded object does not change except for one
 * thing: each user's remembered password (the last one that verified), which
 * webconfig_auth_is_valid reads and replaces under that user's own mutex. So every getter and
 * webconfig_auth_is_valid may be called from several threads at once; webconfig_free must not
 * race with any of them. The implementation is split in webconfig*.c (see webconfig_int.h). */
#ifndef SHIM_WEBCONFIG_H
#define SHIM_WEBCONFIG_H

#include <stddef.h>

struct webconfig;

/* Parse PATH. On success returns 0 and sets *out. On failure returns -1, *out = NULL, and writes a
 * one-line message "PATH:LINE:COL: reason" into err (errlen bytes, always NUL-terminated; err may
 * be NULL or errlen 0 to discard it). When the failure has no position in the file (the config
 * itself cannot be read or is too large) the message is "PATH: reason".
 * Reads the TLS cert and key files named in the config (paths relative to the config file's directory
 * are resolved against it, as exporter-toolkit does) and keeps their PEM contents in memory.
 * Limits: config, cert and key files are at most 1 MiB each. */
int webconfig_load(const char *path, struct webconfig **out, char *err, size_t errlen);
void webconfig_free(struct webconfig *wc);

/* TLS: NULL when no tls_server_config. Borrowed pointers, valid until webconfig_free.
 * NUL-terminated PEM text, suitable for MHD_OPTION_HTTPS_MEM_CERT / MHD_OPTION_HTTPS_MEM_KEY. */
const char *webconfig_tls_cert_pem(const struct webconfig *wc);
const char *webconfig_tls_key_pem(const struct webconfig *wc);
/* "TLS10".."TLS13" as written in the config, or NULL when not set (toolkit defaults: TLS12, TLS13). */
const char *webconfig_tls_min_version(const struct webconfig *wc);
const char *webconfig_tls_max_version(const struct webconfig *wc);
/* GnuTLS priority string for MHD_OPTION_HTTPS_PRIORITIES that applies min/max_version (with the
 * toolkit's defaults), cipher_suites, curve_preferences and prefer_server_cipher_suites, e.g.
 * "NORMAL:-VERS-ALL:+VERS-TLS1.3:+VERS-TLS1.2:-KX-ALL:+ECDHE-RSA:-CIPHER-ALL:+AES-128-GCM:-MAC-ALL:+AEAD:
 * %SERVER_PRECEDENCE", checked by GnuTLS when loaded. NULL when TLS is off. cipher_suites become the
 * suites' key exchanges, ciphers and MACs; GnuTLS enables every combination of them, so a list
 * that would enable a suite it does not name is refused at load (webconfig_tls.c). */
const char *webconfig_tls_priorities(const struct webconfig *wc);

/* Basic auth: 1 when users are configured. */
int webconfig_has_users(const struct webconfig *wc);
/* 1 if user/password (ulen and plen bytes: either may hold a NUL, which never matches) match a
 * basic_auth_users entry (bcrypt hash checked with crypt_rn from libcrypt, compared in constant time),
 * 0 otherwise. A wrong password costs one bcrypt run whether the user exists or not, at the same cost:
 * an unknown name runs it on a dummy hash with the cost of a configured user picked from the name.
 * *cost (may be NULL) receives the bcrypt cost this call paid, 0 when the password was the one that
 * verified last time for this user (remembered, as exporter-toolkit does). Thread-safe. */
int webconfig_auth_is_valid(const struct webconfig *wc, const char *user, size_t ulen, const char *password,
			       size_t plen, unsigned *cost);

/* Credentials of an Authorization header value. */
struct basic_cred {
	char *buf;               /* owned: the decoded bytes, wiped by webconfig_basic_free */
	size_t buflen;
	const char *user, *pass; /* into buf; pass is NUL-terminated after plen bytes */
	size_t ulen, plen;
};
/* Decode "Basic <base64>" (RFC 7617: scheme case-insensitive, then spaces; strict padded base64),
 * split at the first colon. Returns 0 and fills *out (free with webconfig_basic_free), or -1 with
 * *out empty. libmicrohttpd's own decoder returns C strings, which hide a NUL in the password. */
int webconfig_parse_basic(const char *value, size_t len, struct basic_cred *out);
void webconfig_basic_free(struct basic_cred *c);

/* Optional response headers from http_server_config.headers: count and borrowed key/value.
 * Out-of-range i sets both to NULL. */
size_t webconfig_header_count(const struct webconfig *wc);
void webconfig_header(const struct webconfig *wc, size_t i, const char **key, const char **value);

#endif
