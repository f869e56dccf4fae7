/* webconfig.h: exporter-toolkit web config (TLS + basic auth), loaded with libyaml.
 * Ownership: webconfig_load returns a new object owned by the caller; free with webconfig_free.
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
 * All getters accept NULL (and then return NULL / 0). A loaded object is immutable, so every getter
 * and webconfig_check_basic_auth may be called from several threads at once. */
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
 * toolkit's defaults), curve_preferences and prefer_server_cipher_suites, e.g.
 * "NORMAL:-VERS-ALL:+VERS-TLS1.3:+VERS-TLS1.2:%SERVER_PRECEDENCE". NULL when TLS is off.
 * cipher_suites are validated against Go's names but not mapped (GnuTLS defaults apply). */
const char *webconfig_tls_priorities(const struct webconfig *wc);

/* Basic auth: 1 when users are configured. */
int webconfig_has_users(const struct webconfig *wc);
/* 1 if user/password match a basic_auth_users entry (bcrypt hash checked with crypt_r/crypt_rn from
 * libcrypt, compared in constant time), 0 otherwise (unknown user must cost about as much as a wrong
 * password: run crypt on a dummy hash). Thread-safe (use crypt_r with a per-call struct crypt_data,
 * which is large: allocate it, do not put it on the stack). */
int webconfig_check_basic_auth(const struct webconfig *wc, const char *user, const char *password);

/* Optional response headers from http_server_config.headers: count and borrowed key/value.
 * Out-of-range i sets both to NULL. */
size_t webconfig_header_count(const struct webconfig *wc);
void webconfig_header(const struct webconfig *wc, size_t i, const char **key, const char **value);

#endif
