/* webconfig_tls.c: tls_server_config (see webconfig_int.h): the toolkit's checks, the PEM files
 * (resolved against the config's directory, bounded, the key wiped before it is freed) and the
 * GnuTLS priority string for min/max_version, cipher_suites, curve_preferences and prefer_server_cipher_suites. */
#include "file_read.h"
#include "webconfig_int.h"

#include <gnutls/gnutls.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xmalloc.h"

/* --- tables ------------------------------------------------------------------------------------ */

static const char *const tls_versions[] = { "TLS10", "TLS11", "TLS12", "TLS13" };
static const char *const gnutls_versions[] = { "+VERS-TLS1.0", "+VERS-TLS1.1", "+VERS-TLS1.2",
					       "+VERS-TLS1.3" };
#define N_VERSIONS (sizeof tls_versions / sizeof tls_versions[0])
#define DEFAULT_MIN_VERSION 2 /* TLS12 */
#define DEFAULT_MAX_VERSION 3 /* TLS13 */

/* exporter-toolkit's curve names and the matching GnuTLS groups. */
static const char *const curve_names[] = { "CurveP256", "CurveP384", "CurveP521", "X25519" };
static const char *const gnutls_groups[] = { "+GROUP-SECP256R1", "+GROUP-SECP384R1",
					     "+GROUP-SECP521R1", "+GROUP-X25519" };
#define N_CURVES (sizeof curve_names / sizeof curve_names[0])
_Static_assert(N_CURVES == WC_N_CURVES, "struct tls_cfg holds every curve");

/* Go's tls.CipherSuites() names, which are the ones exporter-toolkit accepts. */
static const char *const cipher_names[] = {
	"TLS_RSA_WITH_AES_128_CBC_SHA",
	"TLS_RSA_WITH_AES_256_CBC_SHA",
	"TLS_RSA_WITH_AES_128_GCM_SHA256",
	"TLS_RSA_WITH_AES_256_GCM_SHA384",
	"TLS_AES_128_GCM_SHA256",
	"TLS_AES_256_GCM_SHA384",
	"TLS_CHACHA20_POLY1305_SHA256",
	"TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA",
	"TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA",
	"TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA",
	"TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA",
	"TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256",
	"TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384",
	"TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256",
	"TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384",
	"TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256",
	"TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256",
};
#define N_CIPHERS (sizeof cipher_names / sizeof cipher_names[0])
_Static_assert(N_CIPHERS == WC_N_CIPHERS, "struct tls_cfg holds every cipher suite");

/* Each of cipher_names (same order) in GnuTLS' priority terms: key exchange (NULL: a TLS 1.3
 * suite, which has none of its own), cipher and MAC. GnuTLS enables every suite whose three parts
 * are all enabled, so a list is applied only when the suites its parts make are the ones listed
 * (ciphers_closed). test_webconfig.c checks each row against gnutls_cipher_suite_get_name. */
static const struct { const char *kx, *cipher, *mac; } cipher_parts[] = {
	{ "RSA", "AES-128-CBC", "SHA1" },
	{ "RSA", "AES-256-CBC", "SHA1" },
	{ "RSA", "AES-128-GCM", "AEAD" },
	{ "RSA", "AES-256-GCM", "AEAD" },
	{ NULL, "AES-128-GCM", "AEAD" },
	{ NULL, "AES-256-GCM", "AEAD" },
	{ NULL, "CHACHA20-POLY1305", "AEAD" },
	{ "ECDHE-ECDSA", "AES-128-CBC", "SHA1" },
	{ "ECDHE-ECDSA", "AES-256-CBC", "SHA1" },
	{ "ECDHE-RSA", "AES-128-CBC", "SHA1" },
	{ "ECDHE-RSA", "AES-256-CBC", "SHA1" },
	{ "ECDHE-ECDSA", "AES-128-GCM", "AEAD" },
	{ "ECDHE-ECDSA", "AES-256-GCM", "AEAD" },
	{ "ECDHE-RSA", "AES-128-GCM", "AEAD" },
	{ "ECDHE-RSA", "AES-256-GCM", "AEAD" },
	{ "ECDHE-RSA", "CHACHA20-POLY1305", "AEAD" },
	{ "ECDHE-ECDSA", "CHACHA20-POLY1305", "AEAD" },
};
_Static_assert(sizeof cipher_parts / sizeof cipher_parts[0] == N_CIPHERS, "a GnuTLS row for every Go name");

/* client_auth_type values Go knows; only NoClientCert is supported here. */
static const char *const client_auth_types[] = {
	"RequestClientCert", "RequireAnyClientCert", "RequireClientCert",
	"VerifyClientCertIfGiven", "RequireAndVerifyClientCert",
};
#define N_CLIENT_AUTH (sizeof client_auth_types / sizeof client_auth_types[0])

/* --- certificate and key ------------------------------------------------------------------------ */

/* p relative to the directory of the config file (as exporter-toolkit's config_util.JoinDir). */
static char *resolve_path(const char *cfgpath, const char *p)
{
	const char *slash = strrchr(cfgpath, '/');
	size_t dl, pl = strlen(p);
	char *s;

	if (p[0] == '/' || !slash)
		return xstrdup(p);
	dl = (size_t)(slash - cfgpath) + 1; /* keep the slash */
	s = xmalloc(dl + pl + 1);
	memcpy(s, cfgpath, dl);
	memcpy(s + dl, p, pl + 1);
	return s;
}

/* Validate PEM text for "cert" (want_key 0) or "key" (want_key 1). Returns a reason or NULL. */
static const char *pem_problem(const char *pem, size_t len, int want_key)
{
	if (strlen(pem) != len)
		return "contains a NUL byte";
	if (!strstr(pem, "-----BEGIN "))
		return "is not PEM (no \"-----BEGIN \" line)";
	if (!want_key)
		return strstr(pem, "-----BEGIN CERTIFICATE-----")
			       ? NULL
			       : "does not contain a PEM certificate (no \"-----BEGIN CERTIFICATE-----\" line)";
	if (strstr(pem, "-----BEGIN ENCRYPTED PRIVATE KEY-----") || strstr(pem, "Proc-Type: 4,ENCRYPTED"))
		return "is an encrypted private key, which is not supported";
	if (!strstr(pem, "PRIVATE KEY-----"))
		return "does not contain a PEM private key (no \"-----BEGIN ... PRIVATE KEY-----\" line)";
	return NULL;
}

/* Fill *pem from file (resolved against the config directory) or inline text. */
static int load_pem(struct wc_ctx *c, const char *file, yaml_mark_t file_mark, const char *inl,
		    yaml_mark_t inl_mark, int want_key, char **pem)
{
	const char *what = want_key ? "key_file" : "cert_file";
	char *path = NULL, *buf = NULL;
	char eb[YF_ESC_SIZE], sb[128];
	const char *why;
	size_t len = 0;
	int rc = -1;

	if (!file) {
		why = pem_problem(inl, strlen(inl), want_key);
		if (why) {
			yf_fail_at(&c->y, inl_mark, "%s %s", want_key ? "key" : "cert", why);
			goto out;
		}
		len = strlen(inl);
		buf = xstrdup(inl);
	} else {
		struct file_text t;
		path = resolve_path(c->y.path, file);
		if (file_read(path, YF_MAX_FILE, FILE_SECRET, &t, sb, sizeof sb) < 0) {
			yf_fail_at(&c->y, file_mark, "%s \"%s\": %s", what, yf_esc(eb, path, strlen(path)), sb);
			goto out;
		}
		buf = t.data; /* ours now: wiped by free_secret */
		len = t.len;
		why = pem_problem(buf, len, want_key);
		if (why) {
			yf_fail_at(&c->y, file_mark, "%s \"%s\" %s", what, yf_esc(eb, path, strlen(path)), why);
			goto out;
		}
	}
	*pem = buf;
	buf = NULL;
	rc = 0;
out:
	free_secret(buf, len);
	free(path);
	return rc;
}

/* --- tls_server_config ------------------------------------------------------------------------- */

void wc_tls_cfg_clear(struct tls_cfg *t)
{
	free(t->cert_file);
	free(t->key_file);
	free(t->cert);
	free_secret_str(t->key);
	memset(t, 0, sizeof *t);
}

/* A sequence of names from table; the indexes are recorded (deduplicated) into order if given. */
static int parse_name_list(struct wc_ctx *c, const yaml_node_t *n, const char *what,
			   const char *const *names, size_t count, size_t *order, size_t *norder)
{
	char eb[YF_ESC_SIZE];
	yaml_node_item_t *it;
	size_t j;
	int idx;

	if (yf_is_null(n))
		return 0;
	if (n->type != YAML_SEQUENCE_NODE)
		return yf_fail_at(&c->y, n->start_mark, "%s must be a sequence, not %s", what, yf_type_name(n));
	for (it = n->data.sequence.items.start; it < n->data.sequence.items.top; it++) {
		const yaml_node_t *item = yf_node(&c->y, *it);
		if (item->type != YAML_SCALAR_NODE)
			return yf_fail_at(&c->y, item->start_mark, "%s entries must be strings, not %s", what,
				       yf_type_name(item));
		idx = yf_lookup(item, names, count);
		if (idx < 0)
			return yf_fail_at(&c->y, item->start_mark, "%s: unknown name \"%s\"", what,
				       yf_esc(eb, yf_sval(item), yf_slen(item)));
		if (!order)
			continue;
		for (j = 0; j < *norder && order[j] != (size_t)idx; j++)
			;
		if (j == *norder)
			order[(*norder)++] = (size_t)idx;
	}
	return 0;
}

static int parse_version(struct wc_ctx *c, const yaml_node_t *n, const char *what, int *out)
{
	char eb[YF_ESC_SIZE];
	int idx;

	if (n->type != YAML_SCALAR_NODE)
		return yf_fail_at(&c->y, n->start_mark, "%s must be a string, not %s", what, yf_type_name(n));
	if (yf_is_null(n))
		return 0;
	idx = yf_lookup(n, tls_versions, N_VERSIONS);
	if (idx < 0)
		return yf_fail_at(&c->y, n->start_mark, "%s: unknown TLS version \"%s\" (expected TLS10, TLS11, TLS12 or TLS13)",
			       what, yf_esc(eb, yf_sval(n), yf_slen(n)));
	*out = idx;
	return 0;
}

/* --- cipher_suites ------------------------------------------------------------------------------ */

#define TLS13 3 /* tls_versions[] index */

/* Is the listed suite i taken into GnuTLS' lists? A TLS 1.3 name only while TLS 1.3 is on (Go's
 * TLS 1.3 suites are not configurable at all; GnuTLS has one cipher list for both versions). */
static int suite_is_counted(size_t i, int max_v)
{
	return cipher_parts[i].kx || max_v >= TLS13;
}

/* Whether a listed (and counted) suite has part `part` in column col (0 kx, 1 cipher, 2 mac). */
static int part_listed(const struct tls_cfg *t, int max_v, int col, const char *part)
{
	for (size_t k = 0; k < t->nciphers; k++) {
		size_t i = t->ciphers[k];
		const char *p = col == 0 ? cipher_parts[i].kx : col == 1 ? cipher_parts[i].cipher : cipher_parts[i].mac;
		if (suite_is_counted(i, max_v) && p && !strcmp(p, part))
			return 1;
	}
	return 0;
}

/* GnuTLS enables every TLS 1.2 suite whose key exchange, cipher and MAC are each enabled: the name
 * of one that the listed suites' parts make but that is not listed (into buf), or NULL when the
 * list is closed (its parts make exactly its own suites). */
static const char *ciphers_extra(const struct tls_cfg *t, int max_v, char *buf, size_t len)
{
	static const char *const kxs[] = { "RSA", "ECDHE-RSA", "ECDHE-ECDSA" };
	static const char *const ciphers[] = { "AES-128-CBC", "AES-256-CBC", "AES-128-GCM", "AES-256-GCM", "CHACHA20-POLY1305" };
	static const char *const macs[] = { "SHA1", "AEAD" };
	for (size_t a = 0; a < 3; a++)
		for (size_t b = 0; b < 5; b++)
			for (size_t m = 0; m < 2; m++) {
				if (!part_listed(t, max_v, 0, kxs[a]) || !part_listed(t, max_v, 1, ciphers[b]) ||
				    !part_listed(t, max_v, 2, macs[m]))
					continue;
				const char *gn = gnutls_cipher_suite_get_name(gnutls_kx_get_id(kxs[a]), gnutls_cipher_get_id(ciphers[b]),
									     gnutls_mac_get_id(macs[m]));
				if (!gn)
					continue; /* no such suite */
				size_t i = 0, listed = 0;
				for (; i < N_CIPHERS; i++)
					if (cipher_parts[i].kx && !strcmp(cipher_parts[i].kx, kxs[a]) &&
					    !strcmp(cipher_parts[i].cipher, ciphers[b]) && !strcmp(cipher_parts[i].mac, macs[m]))
						break;
				for (size_t k = 0; i < N_CIPHERS && k < t->nciphers; k++)
					listed |= t->ciphers[k] == i;
				if (listed)
					continue;
				snprintf(buf, len, "%s", i < N_CIPHERS ? cipher_names[i] : gn);
				return buf;
			}
	return NULL;
}

/* cipher_suites as GnuTLS priorities (":-KX-ALL:+ECDHE-RSA:-CIPHER-ALL:+AES-128-GCM:-MAC-ALL:+AEAD"),
 * appended at buf + *o, or -1 after the error (at the key): a list GnuTLS cannot apply as it is (it
 * would enable a suite not listed), or one that leaves the enabled versions without a suite. */
static int cipher_priorities(struct wc_ctx *c, int min_v, int max_v, char *buf, size_t len, size_t *o)
{
	struct tls_cfg *t = &c->tls;
	char extra[64];
	int tls12 = 0, tls13 = 0;
	if (!t->ciphers_set || !t->nciphers)
		return 0; /* Go's defaults: GnuTLS' NORMAL */
	for (size_t k = 0; k < t->nciphers; k++) {
		tls12 |= cipher_parts[t->ciphers[k]].kx != NULL;
		tls13 |= cipher_parts[t->ciphers[k]].kx == NULL || strcmp(cipher_parts[t->ciphers[k]].mac, "AEAD") == 0;
	}
	if (min_v < TLS13 && ciphers_extra(t, max_v, extra, sizeof extra))
		return yf_fail_at(&c->y, t->ciphers_mark,
			       "tls_server_config.cipher_suites: GnuTLS enables every listed key exchange with every listed cipher, "
			       "so this list would also enable %s: add it, or drop a suite that brings its key exchange or its cipher",
			       extra);
	if ((max_v < TLS13 || !tls13) && (min_v >= TLS13 || !tls12))
		return yf_fail_at(&c->y, t->ciphers_mark,
			       "tls_server_config.cipher_suites: no listed suite can be used from %s to %s (min_version, max_version)",
			       tls_versions[min_v], tls_versions[max_v]);
	static const char *const sections[] = { ":-KX-ALL", ":-CIPHER-ALL", ":-MAC-ALL" };
	for (int col = 0; col < 3; col++) {
		*o += (size_t)snprintf(buf + *o, len - *o, "%s", sections[col]);
		for (size_t k = 0; k < t->nciphers; k++) {
			size_t i = t->ciphers[k];
			const char *p = col == 0 ? cipher_parts[i].kx : col == 1 ? cipher_parts[i].cipher : cipher_parts[i].mac;
			int first = 1;
			for (size_t e = 0; e < k && first; e++) { /* each part once, in the list's order */
				size_t j = t->ciphers[e];
				const char *q = col == 0 ? cipher_parts[j].kx : col == 1 ? cipher_parts[j].cipher : cipher_parts[j].mac;
				first = !(suite_is_counted(j, max_v) && q && p && !strcmp(p, q));
			}
			if (p && first && suite_is_counted(i, max_v))
				*o += (size_t)snprintf(buf + *o, len - *o, ":+%s", p);
		}
	}
	return 0;
}

static int build_priorities(struct wc_ctx *c, int min_v, int max_v)
{
	struct tls_cfg *t = &c->tls;
	char buf[512];
	size_t o;
	int v;
	size_t i;

	o = (size_t)snprintf(buf, sizeof buf, "NORMAL:-VERS-ALL");
	for (v = max_v; v >= min_v; v--)
		o += (size_t)snprintf(buf + o, sizeof buf - o, ":%s", gnutls_versions[v]);
	if (cipher_priorities(c, min_v, max_v, buf, sizeof buf, &o) < 0)
		return -1;
	if (t->ncurves) {
		o += (size_t)snprintf(buf + o, sizeof buf - o, ":-GROUP-ALL");
		for (i = 0; i < t->ncurves; i++)
			o += (size_t)snprintf(buf + o, sizeof buf - o, ":%s", gnutls_groups[t->curves[i]]);
	}
	if (t->prefer_server)
		snprintf(buf + o, sizeof buf - o, ":%%SERVER_PRECEDENCE");
	/* GnuTLS' own check now, with the config's position, not libmicrohttpd's refusal at start */
	gnutls_priority_t pc;
	const char *at = NULL;
	if (gnutls_priority_init(&pc, buf, &at) < 0)
		return yf_fail_at(&c->y, t->mark, "tls_server_config: GnuTLS refuses the priority string \"%s\" at \"%.40s\"", buf,
			       at ? at : "");
	gnutls_priority_deinit(pc);
	c->wc->priorities = xstrdup(buf);
	return 0;
}

static const char *version_name(int v)
{
	return v >= 0 && (size_t)v < N_VERSIONS ? tls_versions[v] : "?";
}

/* After the mapping is read: decide whether TLS is on, apply the toolkit's checks, load PEMs. */
static int finish_tls(struct wc_ctx *c)
{
	struct tls_cfg *t = &c->tls;
	int min_v, max_v;

	if (!(t->cert_file || t->key_file || t->cert || t->key || t->auth_set))
		return 0; /* as exporter-toolkit: no TLS settings means plain HTTP */
	if (t->cert_file && t->cert)
		return yf_fail_at(&c->y, t->cert_mark, "tls_server_config: cannot specify both cert_file and cert");
	if (t->key_file && t->key)
		return yf_fail_at(&c->y, t->key_mark, "tls_server_config: cannot specify both key_file and key");
	if (!t->cert_file && !t->cert)
		return yf_fail_at(&c->y, t->mark, "tls_server_config: missing one of cert or cert_file");
	if (!t->key_file && !t->key)
		return yf_fail_at(&c->y, t->mark, "tls_server_config: missing one of key or key_file");
	min_v = t->min_v >= 0 ? t->min_v : DEFAULT_MIN_VERSION;
	max_v = t->max_v >= 0 ? t->max_v : DEFAULT_MAX_VERSION;
	if (min_v > max_v)
		return yf_fail_at(&c->y, t->max_v >= 0 ? t->max_mark : t->mark,
			       "tls_server_config: max_version %s is lower than min_version %s",
			       version_name(max_v), version_name(min_v));
	if (load_pem(c, t->cert_file, t->cert_file_mark, t->cert, t->cert_mark, 0, &c->wc->cert_pem) < 0)
		return -1;
	if (load_pem(c, t->key_file, t->key_file_mark, t->key, t->key_mark, 1, &c->wc->key_pem) < 0)
		return -1;
	c->wc->min_version = t->min_v >= 0 ? tls_versions[t->min_v] : NULL;
	c->wc->max_version = t->max_v >= 0 ? tls_versions[t->max_v] : NULL;
	return build_priorities(c, min_v, max_v);
}

static int unsupported_client_auth(struct wc_ctx *c, const yaml_node_t *k)
{
	return yf_fail_at(&c->y, k->start_mark,
		       "tls_server_config: %s needs client certificate authentication, which is not supported by slurm-exporter-shim",
		       yf_sval(k));
}

/* key: the tls_server_config key node (errors about the whole section point at it). */
int wc_parse_tls(struct wc_ctx *c, const yaml_node_t *key, const yaml_node_t *n)
{
	struct tls_cfg *t = &c->tls;
	const yaml_node_t *k, *v;
	char eb[YF_ESC_SIZE];
	char *s = NULL;
	int present;

	if (yf_get_mapping(&c->y, n, "tls_server_config", &present) < 0)
		return -1;
	if (!present)
		return 0;
	t->mark = key->start_mark;
	YF_FOR_PAIRS(&c->y, n, k, v) {
		if (yf_scalar_is_equal(k, "cert_file")) {
			if (yf_get_string(&c->y, v, "tls_server_config.cert_file", 1, &t->cert_file) < 0)
				return -1;
			t->cert_file_mark = v->start_mark;
		} else if (yf_scalar_is_equal(k, "key_file")) {
			if (yf_get_string(&c->y, v, "tls_server_config.key_file", 1, &t->key_file) < 0)
				return -1;
			t->key_file_mark = v->start_mark;
		} else if (yf_scalar_is_equal(k, "cert")) {
			if (yf_get_string(&c->y, v, "tls_server_config.cert", 1, &t->cert) < 0)
				return -1;
			t->cert_mark = v->start_mark;
		} else if (yf_scalar_is_equal(k, "key")) {
			if (yf_get_string(&c->y, v, "tls_server_config.key", 1, &t->key) < 0)
				return -1;
			t->key_mark = v->start_mark;
		} else if (yf_scalar_is_equal(k, "client_auth_type")) {
			if (yf_get_string(&c->y, v, "tls_server_config.client_auth_type", 1, &s) < 0)
				return -1;
			if (s) {
				int known = strcmp(s, "NoClientCert") == 0;
				free(s);
				s = NULL;
				t->auth_set = 1;
				if (!known && yf_lookup(v, client_auth_types, N_CLIENT_AUTH) >= 0)
					return yf_fail_at(&c->y, v->start_mark,
						       "tls_server_config: client_auth_type \"%s\" is not supported by slurm-exporter-shim (only NoClientCert is)",
						       yf_esc(eb, yf_sval(v), yf_slen(v)));
				if (!known)
					return yf_fail_at(&c->y, v->start_mark,
						       "tls_server_config: invalid client_auth_type \"%s\" (only NoClientCert is supported by slurm-exporter-shim)",
						       yf_esc(eb, yf_sval(v), yf_slen(v)));
			}
		} else if (yf_scalar_is_equal(k, "client_ca_file") || yf_scalar_is_equal(k, "client_ca")) {
			if (yf_get_string(&c->y, v, yf_sval(k), 1, &s) < 0)
				return -1;
			if (s) {
				free(s);
				s = NULL;
				return unsupported_client_auth(c, k);
			}
		} else if (yf_scalar_is_equal(k, "client_allowed_sans")) {
			if (!yf_is_null(v))
				return unsupported_client_auth(c, k);
		} else if (yf_scalar_is_equal(k, "min_version")) {
			if (parse_version(c, v, "tls_server_config.min_version", &t->min_v) < 0)
				return -1;
		} else if (yf_scalar_is_equal(k, "max_version")) {
			if (parse_version(c, v, "tls_server_config.max_version", &t->max_v) < 0)
				return -1;
			t->max_mark = v->start_mark;
		} else if (yf_scalar_is_equal(k, "cipher_suites")) {
			if (parse_name_list(c, v, "tls_server_config.cipher_suites", cipher_names, N_CIPHERS,
					    t->ciphers, &t->nciphers) < 0)
				return -1;
			t->ciphers_set = 1;
			t->ciphers_mark = k->start_mark;
		} else if (yf_scalar_is_equal(k, "curve_preferences")) {
			if (parse_name_list(c, v, "tls_server_config.curve_preferences", curve_names,
					    N_CURVES, t->curves, &t->ncurves) < 0)
				return -1;
		} else if (yf_scalar_is_equal(k, "prefer_server_cipher_suites")) {
			if (yf_get_bool(&c->y, v, "tls_server_config.prefer_server_cipher_suites",
				     &t->prefer_server) < 0)
				return -1;
		} else {
			return yf_fail_at(&c->y, k->start_mark, "unknown key \"%s\" in tls_server_config",
				       yf_esc(eb, yf_sval(k), yf_slen(k)));
		}
	}
	return finish_tls(c);
}
