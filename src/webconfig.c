/* webconfig.c: exporter-toolkit web config (--web.config.file) parser, see webconfig.h.
 *
 * The file is read into memory (bounded), checked for nesting depth with libyaml's event API (its
 * scanner is quadratic in flow depth), loaded with the document API and then walked:
 * every mapping is first checked for non-scalar and duplicate keys, then each key is dispatched to
 * its handler; anything unknown is an error, as with the toolkit's yaml.UnmarshalStrict. Scalars are
 * decoded like go-yaml v2 does for the toolkit's Go types: a plain empty, "~" or "null" scalar is
 * null (the field keeps its default), any other scalar is accepted as a string, booleans are the
 * YAML 1.1 plain words (true/false/yes/no/on/off...). Secrets (key PEM, password hashes, the
 * config text) are wiped before they are freed. */
#include "webconfig.h"
#include "xmalloc.h"

#include <crypt.h>
#include <errno.h>
#include <pthread.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>
#include <yaml.h>

#define WC_MAX_FILE ((size_t)1024 * 1024)
#define BCRYPT_LEN 60

/* Tail (salt + digest) of a real bcrypt hash: an unknown user's check runs bcrypt on it, with the
 * prefix and cost of a configured user's hash (see hash_for). */
#define DUMMY_TAIL "B4XKbEPco2Nrn6xg7QJy5Oee73Rb8onnLBqauVot3lyIp5LC3GuO6"
_Static_assert(7 + sizeof DUMMY_TAIL == BCRYPT_LEN + 1, "dummy hash length");

struct wc_user {
	char *name;
	char *hash;
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

/* client_auth_type values Go knows; only NoClientCert is supported here. */
static const char *const client_auth_types[] = {
	"RequestClientCert", "RequireAnyClientCert", "RequireClientCert",
	"VerifyClientCertIfGiven", "RequireAndVerifyClientCert",
};
#define N_CLIENT_AUTH (sizeof client_auth_types / sizeof client_auth_types[0])

/* http_server_config.headers: the toolkit's allowed headers; values NULL = free-form. */
static const struct {
	const char *name;
	const char *values[3];
} allowed_headers[] = {
	{ "Strict-Transport-Security", { NULL } },
	{ "X-Content-Type-Options", { "nosniff", NULL } },
	{ "X-Frame-Options", { "deny", "sameorigin", NULL } },
	{ "X-XSS-Protection", { NULL } },
	{ "Content-Security-Policy", { NULL } },
};
#define N_HEADERS (sizeof allowed_headers / sizeof allowed_headers[0])

/* --- parse context and errors ------------------------------------------------------------------ */

struct tls_cfg {
	yaml_mark_t mark; /* the tls_server_config key */
	char *cert_file, *key_file, *cert, *key;
	yaml_mark_t cert_file_mark, key_file_mark, cert_mark, key_mark, max_mark;
	int auth_set;
	int min_v, max_v; /* index into tls_versions, -1 = not set */
	size_t curves[N_CURVES];
	size_t ncurves;
	int prefer_server;
};

struct ctx {
	const char *path;
	char *err;
	size_t errlen;
	yaml_document_t *doc;
	struct webconfig *wc;
	struct tls_cfg tls;
};

/* Make the message one printable line (paths and escapes could carry control bytes). */
static void one_line(char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || (unsigned char)*s == 0x7f)
			*s = '?';
}

static void vset_err(struct ctx *c, const yaml_mark_t *m, const char *fmt, va_list ap)
	__attribute__((format(printf, 3, 0)));
static void vset_err(struct ctx *c, const yaml_mark_t *m, const char *fmt, va_list ap)
{
	int n;

	if (!c->err || c->errlen == 0)
		return;
	if (m)
		n = snprintf(c->err, c->errlen, "%s:%zu:%zu: ", c->path, m->line + 1, m->column + 1);
	else
		n = snprintf(c->err, c->errlen, "%s: ", c->path);
	if (n >= 0 && (size_t)n < c->errlen)
		vsnprintf(c->err + n, c->errlen - (size_t)n, fmt, ap);
	one_line(c->err);
}

/* Record an error at mark m; always returns -1 so callers can `return fail_at(...)`. */
static int fail_at(struct ctx *c, yaml_mark_t m, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int fail_at(struct ctx *c, yaml_mark_t m, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vset_err(c, &m, fmt, ap);
	va_end(ap);
	return -1;
}

static int fail_nopos(struct ctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail_nopos(struct ctx *c, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vset_err(c, NULL, fmt, ap);
	va_end(ap);
	return -1;
}

/* Printable, truncated copy of [s, s+n) for quoting in messages: `"`, `\` and non-ASCII or control
 * bytes are escaped, input beyond 64 bytes becomes "...". Returns buf. */
#define ESC_SIZE 300
static const char *esc(char buf[ESC_SIZE], const char *s, size_t n)
{
	size_t o = 0, i;

	for (i = 0; i < n && i < 64; i++) {
		unsigned char ch = (unsigned char)s[i];
		if (ch == '"' || ch == '\\') {
			buf[o++] = '\\';
			buf[o++] = (char)ch;
		} else if (ch < 0x20 || ch >= 0x7f) {
			o += (size_t)snprintf(buf + o, ESC_SIZE - o, "\\x%02x", ch);
		} else {
			buf[o++] = (char)ch;
		}
	}
	if (i < n) {
		memcpy(buf + o, "...", 3);
		o += 3;
	}
	buf[o] = '\0';
	return buf;
}

static const char *type_name(const yaml_node_t *n)
{
	switch (n->type) {
	case YAML_MAPPING_NODE: return "a mapping";
	case YAML_SEQUENCE_NODE: return "a sequence";
	case YAML_SCALAR_NODE: return "a scalar";
	default: return "an empty node";
	}
}

/* --- node helpers ------------------------------------------------------------------------------ */

static const char *sval(const yaml_node_t *n)
{
	return (const char *)n->data.scalar.value;
}

static size_t slen(const yaml_node_t *n)
{
	return n->data.scalar.length;
}

static int scalar_eq(const yaml_node_t *n, const char *s)
{
	size_t l = strlen(s);
	return n->type == YAML_SCALAR_NODE && slen(n) == l && memcmp(sval(n), s, l) == 0;
}

static int is_null(const yaml_node_t *n)
{
	if (n->type != YAML_SCALAR_NODE || n->data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
		return 0;
	return slen(n) == 0 || scalar_eq(n, "~") || scalar_eq(n, "null") || scalar_eq(n, "Null") ||
	       scalar_eq(n, "NULL");
}

static yaml_node_t *node_at(struct ctx *c, int id)
{
	return yaml_document_get_node(c->doc, id);
}

static char *dup_scalar(const yaml_node_t *n)
{
	return xstrndup(sval(n), slen(n)); /* keys and hashes hold no NUL (checked before) */
}

/* Decode a string field. Null leaves *out NULL; so does an empty string when empty_is_unset (Go's
 * zero value means "not configured"). */
static int get_string(struct ctx *c, const yaml_node_t *n, const char *what, int empty_is_unset,
		      char **out)
{
	*out = NULL;
	if (n->type != YAML_SCALAR_NODE)
		return fail_at(c, n->start_mark, "%s must be a string, not %s", what, type_name(n));
	if (is_null(n) || (empty_is_unset && slen(n) == 0))
		return 0;
	if (memchr(sval(n), '\0', slen(n)))
		return fail_at(c, n->start_mark, "%s contains a NUL character", what);
	*out = dup_scalar(n);
	return 0;
}

/* YAML 1.1 booleans, as go-yaml v2 resolves plain scalars for a bool field. */
static int get_bool(struct ctx *c, const yaml_node_t *n, const char *what, int *out)
{
	static const char *const yes[] = { "y", "Y", "yes", "Yes", "YES", "on", "On", "ON",
					   "true", "True", "TRUE" };
	static const char *const no[] = { "n", "N", "no", "No", "NO", "off", "Off", "OFF",
					  "false", "False", "FALSE" };
	char eb[ESC_SIZE];
	size_t i;

	if (n->type != YAML_SCALAR_NODE)
		return fail_at(c, n->start_mark, "%s must be a boolean, not %s", what, type_name(n));
	if (is_null(n))
		return 0;
	if (n->data.scalar.style == YAML_PLAIN_SCALAR_STYLE) {
		for (i = 0; i < sizeof yes / sizeof yes[0]; i++) {
			if (scalar_eq(n, yes[i])) {
				*out = 1;
				return 0;
			}
			if (scalar_eq(n, no[i])) {
				*out = 0;
				return 0;
			}
		}
	}
	return fail_at(c, n->start_mark, "%s must be a boolean (true or false), not \"%s\"", what,
		       esc(eb, sval(n), slen(n)));
}

/* Index of scalar n in names[0..count), or -1. */
static int lookup(const yaml_node_t *n, const char *const *names, size_t count)
{
	size_t i;

	for (i = 0; i < count; i++)
		if (scalar_eq(n, names[i]))
			return (int)i;
	return -1;
}

static int cmp_key(const void *a, const void *b)
{
	const yaml_node_t *x = *(const yaml_node_t *const *)a;
	const yaml_node_t *y = *(const yaml_node_t *const *)b;
	size_t l = slen(x) < slen(y) ? slen(x) : slen(y);
	int r = memcmp(sval(x), sval(y), l);

	if (r)
		return r;
	if (slen(x) != slen(y))
		return slen(x) < slen(y) ? -1 : 1;
	return x->start_mark.index < y->start_mark.index ? -1 : x->start_mark.index > y->start_mark.index;
}

/* Every key of mapping n must be a scalar without NUL bytes and appear once; a duplicate is
 * reported at its first repetition in the file. what names the mapping for messages. */
static int check_mapping(struct ctx *c, const yaml_node_t *n, const char *what)
{
	const yaml_node_t **keys = NULL;
	const yaml_node_t *dup = NULL;
	size_t count = (size_t)(n->data.mapping.pairs.top - n->data.mapping.pairs.start), i;
	char eb[ESC_SIZE];
	int rc = -1;

	for (i = 0; i < count; i++) {
		const yaml_node_t *k = node_at(c, n->data.mapping.pairs.start[i].key);
		if (k->type != YAML_SCALAR_NODE) {
			fail_at(c, k->start_mark, "keys in %s must be strings, not %s", what, type_name(k));
			goto out;
		}
		if (memchr(sval(k), '\0', slen(k))) {
			fail_at(c, k->start_mark, "key in %s contains a NUL character", what);
			goto out;
		}
	}
	if (count < 2) {
		rc = 0;
		goto out;
	}
	keys = xmalloc(count * sizeof *keys);
	for (i = 0; i < count; i++)
		keys[i] = node_at(c, n->data.mapping.pairs.start[i].key);
	qsort(keys, count, sizeof *keys, cmp_key);
	for (i = 1; i < count; i++) {
		/* keys[i] is the second occurrence of a run when keys[i-1] starts that run. */
		if (slen(keys[i]) != slen(keys[i - 1]) ||
		    memcmp(sval(keys[i]), sval(keys[i - 1]), slen(keys[i])) != 0)
			continue;
		if (i >= 2 && slen(keys[i - 2]) == slen(keys[i]) &&
		    memcmp(sval(keys[i - 2]), sval(keys[i]), slen(keys[i])) == 0)
			continue;
		if (!dup || keys[i]->start_mark.index < dup->start_mark.index)
			dup = keys[i];
	}
	if (dup) {
		fail_at(c, dup->start_mark, "duplicate key \"%s\" in %s", esc(eb, sval(dup), slen(dup)),
			what);
		goto out;
	}
	rc = 0;
out:
	free(keys);
	return rc;
}

/* Check that n is a mapping (null = absent: returns 1) and its keys are sane. 0 = mapping. */
static int expect_mapping(struct ctx *c, const yaml_node_t *n, const char *what)
{
	if (is_null(n))
		return 1;
	if (n->type != YAML_MAPPING_NODE)
		return fail_at(c, n->start_mark, "%s must be a mapping, not %s", what, type_name(n));
	return check_mapping(c, n, what);
}

#define FOR_PAIRS(c, n, k, v)                                                                      \
	for (yaml_node_pair_t *p_ = (n)->data.mapping.pairs.start;                                 \
	     p_ < (n)->data.mapping.pairs.top && ((k) = node_at((c), p_->key)) != NULL &&          \
	     ((v) = node_at((c), p_->value)) != NULL;                                              \
	     p_++)

/* --- files ------------------------------------------------------------------------------------- */

/* Read at most WC_MAX_FILE bytes of path into a NUL-terminated buffer. Returns 0 or an errno value
 * (EFBIG: larger than the limit). Growing copies and wipes, so secrets do not linger in freed
 * memory. */
static int read_bounded(const char *path, char **out, size_t *outlen)
{
	char *buf = NULL, *nbuf;
	size_t len = 0, cap = 0;
	struct stat st;
	ssize_t r;
	int fd, e = 0;

	*out = NULL;
	*outlen = 0;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return errno;
	if (fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
		e = EISDIR;
		goto out;
	}
	for (;;) {
		if (cap - len < 2) {
			size_t ncap = cap ? cap * 2 : 8192;
			if (ncap > WC_MAX_FILE + 2)
				ncap = WC_MAX_FILE + 2;
			nbuf = xmalloc(ncap);
			if (buf) {
				memcpy(nbuf, buf, len);
				explicit_bzero(buf, cap);
				free(buf);
			}
			buf = nbuf;
			cap = ncap;
		}
		r = read(fd, buf + len, cap - len - 1);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			e = errno;
			goto out;
		}
		if (r == 0)
			break;
		len += (size_t)r;
		if (len > WC_MAX_FILE) {
			e = EFBIG;
			goto out;
		}
	}
	buf[len] = '\0'; /* buf was allocated before the first read */
	*out = buf;
	*outlen = len;
	buf = NULL;
out:
	if (buf) {
		explicit_bzero(buf, cap);
		free(buf);
	}
	close(fd);
	return e;
}

static const char *errstr(int e, char *buf, size_t n)
{
	if (e == EFBIG)
		return "file is larger than 1 MiB";
	return strerror_r(e, buf, n);
}

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
static int load_pem(struct ctx *c, const char *file, yaml_mark_t file_mark, const char *inl,
		    yaml_mark_t inl_mark, int want_key, char **pem)
{
	const char *what = want_key ? "key_file" : "cert_file";
	char *path = NULL, *buf = NULL;
	char eb[ESC_SIZE], sb[128];
	const char *why;
	size_t len = 0;
	int rc = -1, e;

	if (!file) {
		why = pem_problem(inl, strlen(inl), want_key);
		if (why) {
			fail_at(c, inl_mark, "%s %s", want_key ? "key" : "cert", why);
			goto out;
		}
		len = strlen(inl);
		buf = xstrdup(inl);
	} else {
		path = resolve_path(c->path, file);
		e = read_bounded(path, &buf, &len);
		if (e) {
			fail_at(c, file_mark, "%s \"%s\": %s", what, esc(eb, path, strlen(path)),
				errstr(e, sb, sizeof sb));
			goto out;
		}
		why = pem_problem(buf, len, want_key);
		if (why) {
			fail_at(c, file_mark, "%s \"%s\" %s", what, esc(eb, path, strlen(path)), why);
			goto out;
		}
	}
	*pem = buf;
	buf = NULL;
	rc = 0;
out:
	if (buf) {
		explicit_bzero(buf, len);
		free(buf);
	}
	free(path);
	return rc;
}

/* --- tls_server_config ------------------------------------------------------------------------- */

static void tls_cfg_clear(struct tls_cfg *t)
{
	free(t->cert_file);
	free(t->key_file);
	free(t->cert);
	if (t->key) {
		explicit_bzero(t->key, strlen(t->key));
		free(t->key);
	}
	memset(t, 0, sizeof *t);
}

/* A sequence of names from table; the indexes are recorded (deduplicated) into order if given. */
static int parse_name_list(struct ctx *c, const yaml_node_t *n, const char *what,
			   const char *const *names, size_t count, size_t *order, size_t *norder)
{
	char eb[ESC_SIZE];
	yaml_node_item_t *it;
	size_t j;
	int idx;

	if (is_null(n))
		return 0;
	if (n->type != YAML_SEQUENCE_NODE)
		return fail_at(c, n->start_mark, "%s must be a sequence, not %s", what, type_name(n));
	for (it = n->data.sequence.items.start; it < n->data.sequence.items.top; it++) {
		const yaml_node_t *item = node_at(c, *it);
		if (item->type != YAML_SCALAR_NODE)
			return fail_at(c, item->start_mark, "%s entries must be strings, not %s", what,
				       type_name(item));
		idx = lookup(item, names, count);
		if (idx < 0)
			return fail_at(c, item->start_mark, "%s: unknown name \"%s\"", what,
				       esc(eb, sval(item), slen(item)));
		if (!order)
			continue;
		for (j = 0; j < *norder && order[j] != (size_t)idx; j++)
			;
		if (j == *norder)
			order[(*norder)++] = (size_t)idx;
	}
	return 0;
}

static int parse_version(struct ctx *c, const yaml_node_t *n, const char *what, int *out)
{
	char eb[ESC_SIZE];
	int idx;

	if (n->type != YAML_SCALAR_NODE)
		return fail_at(c, n->start_mark, "%s must be a string, not %s", what, type_name(n));
	if (is_null(n))
		return 0;
	idx = lookup(n, tls_versions, N_VERSIONS);
	if (idx < 0)
		return fail_at(c, n->start_mark, "%s: unknown TLS version \"%s\" (expected TLS10, TLS11, TLS12 or TLS13)",
			       what, esc(eb, sval(n), slen(n)));
	*out = idx;
	return 0;
}

static int build_priorities(struct ctx *c, int min_v, int max_v)
{
	struct tls_cfg *t = &c->tls;
	char buf[512];
	size_t o;
	int v;
	size_t i;

	o = (size_t)snprintf(buf, sizeof buf, "NORMAL:-VERS-ALL");
	for (v = max_v; v >= min_v; v--)
		o += (size_t)snprintf(buf + o, sizeof buf - o, ":%s", gnutls_versions[v]);
	if (t->ncurves) {
		o += (size_t)snprintf(buf + o, sizeof buf - o, ":-GROUP-ALL");
		for (i = 0; i < t->ncurves; i++)
			o += (size_t)snprintf(buf + o, sizeof buf - o, ":%s", gnutls_groups[t->curves[i]]);
	}
	if (t->prefer_server)
		snprintf(buf + o, sizeof buf - o, ":%%SERVER_PRECEDENCE");
	c->wc->priorities = xstrdup(buf);
	return 0;
}

static const char *version_name(int v)
{
	return v >= 0 && (size_t)v < N_VERSIONS ? tls_versions[v] : "?";
}

/* After the mapping is read: decide whether TLS is on, apply the toolkit's checks, load PEMs. */
static int finish_tls(struct ctx *c)
{
	struct tls_cfg *t = &c->tls;
	int min_v, max_v;

	if (!(t->cert_file || t->key_file || t->cert || t->key || t->auth_set))
		return 0; /* as exporter-toolkit: no TLS settings means plain HTTP */
	if (t->cert_file && t->cert)
		return fail_at(c, t->cert_mark, "tls_server_config: cannot specify both cert_file and cert");
	if (t->key_file && t->key)
		return fail_at(c, t->key_mark, "tls_server_config: cannot specify both key_file and key");
	if (!t->cert_file && !t->cert)
		return fail_at(c, t->mark, "tls_server_config: missing one of cert or cert_file");
	if (!t->key_file && !t->key)
		return fail_at(c, t->mark, "tls_server_config: missing one of key or key_file");
	min_v = t->min_v >= 0 ? t->min_v : DEFAULT_MIN_VERSION;
	max_v = t->max_v >= 0 ? t->max_v : DEFAULT_MAX_VERSION;
	if (min_v > max_v)
		return fail_at(c, t->max_v >= 0 ? t->max_mark : t->mark,
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

static int unsupported_client_auth(struct ctx *c, const yaml_node_t *k)
{
	return fail_at(c, k->start_mark,
		       "tls_server_config: %s needs client certificate authentication, which is not supported by slurm-exporter-shim",
		       sval(k));
}

/* key: the tls_server_config key node (errors about the whole section point at it). */
static int parse_tls(struct ctx *c, const yaml_node_t *key, const yaml_node_t *n)
{
	struct tls_cfg *t = &c->tls;
	const yaml_node_t *k, *v;
	char eb[ESC_SIZE];
	char *s = NULL;
	int r;

	r = expect_mapping(c, n, "tls_server_config");
	if (r != 0)
		return r < 0 ? -1 : 0;
	t->mark = key->start_mark;
	FOR_PAIRS(c, n, k, v) {
		if (scalar_eq(k, "cert_file")) {
			if (get_string(c, v, "tls_server_config.cert_file", 1, &t->cert_file) < 0)
				return -1;
			t->cert_file_mark = v->start_mark;
		} else if (scalar_eq(k, "key_file")) {
			if (get_string(c, v, "tls_server_config.key_file", 1, &t->key_file) < 0)
				return -1;
			t->key_file_mark = v->start_mark;
		} else if (scalar_eq(k, "cert")) {
			if (get_string(c, v, "tls_server_config.cert", 1, &t->cert) < 0)
				return -1;
			t->cert_mark = v->start_mark;
		} else if (scalar_eq(k, "key")) {
			if (get_string(c, v, "tls_server_config.key", 1, &t->key) < 0)
				return -1;
			t->key_mark = v->start_mark;
		} else if (scalar_eq(k, "client_auth_type")) {
			if (get_string(c, v, "tls_server_config.client_auth_type", 1, &s) < 0)
				return -1;
			if (s) {
				int known = strcmp(s, "NoClientCert") == 0;
				free(s);
				s = NULL;
				t->auth_set = 1;
				if (!known && lookup(v, client_auth_types, N_CLIENT_AUTH) >= 0)
					return fail_at(c, v->start_mark,
						       "tls_server_config: client_auth_type \"%s\" is not supported by slurm-exporter-shim (only NoClientCert is)",
						       esc(eb, sval(v), slen(v)));
				if (!known)
					return fail_at(c, v->start_mark,
						       "tls_server_config: invalid client_auth_type \"%s\" (only NoClientCert is supported by slurm-exporter-shim)",
						       esc(eb, sval(v), slen(v)));
			}
		} else if (scalar_eq(k, "client_ca_file") || scalar_eq(k, "client_ca")) {
			if (get_string(c, v, sval(k), 1, &s) < 0)
				return -1;
			if (s) {
				free(s);
				s = NULL;
				return unsupported_client_auth(c, k);
			}
		} else if (scalar_eq(k, "client_allowed_sans")) {
			if (!is_null(v))
				return unsupported_client_auth(c, k);
		} else if (scalar_eq(k, "min_version")) {
			if (parse_version(c, v, "tls_server_config.min_version", &t->min_v) < 0)
				return -1;
		} else if (scalar_eq(k, "max_version")) {
			if (parse_version(c, v, "tls_server_config.max_version", &t->max_v) < 0)
				return -1;
			t->max_mark = v->start_mark;
		} else if (scalar_eq(k, "cipher_suites")) {
			if (parse_name_list(c, v, "tls_server_config.cipher_suites", cipher_names, N_CIPHERS,
					    NULL, NULL) < 0)
				return -1;
		} else if (scalar_eq(k, "curve_preferences")) {
			if (parse_name_list(c, v, "tls_server_config.curve_preferences", curve_names,
					    N_CURVES, t->curves, &t->ncurves) < 0)
				return -1;
		} else if (scalar_eq(k, "prefer_server_cipher_suites")) {
			if (get_bool(c, v, "tls_server_config.prefer_server_cipher_suites",
				     &t->prefer_server) < 0)
				return -1;
		} else {
			return fail_at(c, k->start_mark, "unknown key \"%s\" in tls_server_config",
				       esc(eb, sval(k), slen(k)));
		}
	}
	return finish_tls(c);
}

/* --- http_server_config ------------------------------------------------------------------------ */

static int parse_headers(struct ctx *c, const yaml_node_t *n)
{
	struct webconfig *wc = c->wc;
	const yaml_node_t *k, *v;
	char eb[ESC_SIZE], eb2[ESC_SIZE];
	size_t count, i, h;
	char *val = NULL;
	int r;

	r = expect_mapping(c, n, "http_server_config.headers");
	if (r != 0)
		return r < 0 ? -1 : 0;
	count = (size_t)(n->data.mapping.pairs.top - n->data.mapping.pairs.start);
	if (count == 0)
		return 0;
	wc->headers = xcalloc(count, sizeof *wc->headers);
	FOR_PAIRS(c, n, k, v) {
		for (h = 0; h < N_HEADERS && !scalar_eq(k, allowed_headers[h].name); h++)
			;
		if (h == N_HEADERS)
			return fail_at(c, k->start_mark,
				       "HTTP header \"%s\" can not be configured (allowed: Strict-Transport-Security, X-Content-Type-Options, X-Frame-Options, X-XSS-Protection, Content-Security-Policy)",
				       esc(eb, sval(k), slen(k)));
		if (get_string(c, v, allowed_headers[h].name, 0, &val) < 0)
			return -1;
		if (allowed_headers[h].values[0]) {
			for (i = 0; allowed_headers[h].values[i] && !scalar_eq(v, allowed_headers[h].values[i]); i++)
				;
			if (!allowed_headers[h].values[i] || !val) {
				free(val);
				return fail_at(c, v->start_mark, "invalid value \"%s\" for HTTP header %s (expected %s%s%s)",
					       val ? esc(eb2, sval(v), slen(v)) : "", allowed_headers[h].name,
					       allowed_headers[h].values[0],
					       allowed_headers[h].values[1] ? " or " : "",
					       allowed_headers[h].values[1] ? allowed_headers[h].values[1] : "");
			}
		}
		if (!val || !val[0]) { /* blank: header unset */
			free(val);
			val = NULL;
			continue;
		}
		for (i = 0; val[i]; i++) {
			if ((unsigned char)val[i] < 0x20 && val[i] != '\t') {
				free(val);
				return fail_at(c, v->start_mark, "value of HTTP header %s contains a control character",
					       allowed_headers[h].name);
			}
		}
		wc->headers[wc->nheaders].key = allowed_headers[h].name;
		wc->headers[wc->nheaders].value = val;
		wc->nheaders++;
		val = NULL;
	}
	return 0;
}

static int parse_http(struct ctx *c, const yaml_node_t *n)
{
	const yaml_node_t *k, *v;
	char eb[ESC_SIZE];
	int r, http2 = 1;

	r = expect_mapping(c, n, "http_server_config");
	if (r != 0)
		return r < 0 ? -1 : 0;
	FOR_PAIRS(c, n, k, v) {
		if (scalar_eq(k, "http2")) {
			if (get_bool(c, v, "http_server_config.http2", &http2) < 0)
				return -1;
		} else if (scalar_eq(k, "headers")) {
			if (parse_headers(c, v) < 0)
				return -1;
		} else {
			return fail_at(c, k->start_mark, "unknown key \"%s\" in http_server_config",
				       esc(eb, sval(k), slen(k)));
		}
	}
	return 0;
}

/* --- basic_auth_users -------------------------------------------------------------------------- */

/* Reason why h is not an acceptable bcrypt hash, or NULL; *cost set when valid. */
static const char *bcrypt_problem(const char *h, size_t len, unsigned *cost)
{
	static const char alphabet[] = "./ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
	size_t i;

	if (len < 4 || h[0] != '$' || h[1] != '2' || (h[2] != 'a' && h[2] != 'b' && h[2] != 'y') ||
	    h[3] != '$')
		return "password hash is not a bcrypt hash (it must start with $2a$, $2b$ or $2y$)";
	if (len != BCRYPT_LEN)
		return "bcrypt hash has the wrong length (a bcrypt hash is 60 characters)";
	if (h[4] < '0' || h[4] > '9' || h[5] < '0' || h[5] > '9' || h[6] != '$')
		return "malformed bcrypt hash (expected a two-digit cost after the prefix)";
	*cost = (unsigned)(h[4] - '0') * 10 + (unsigned)(h[5] - '0');
	if (*cost < 4 || *cost > 31)
		return "malformed bcrypt hash (cost must be between 04 and 31)";
	for (i = 7; i < len; i++)
		if (!memchr(alphabet, h[i], sizeof alphabet - 1))
			return "malformed bcrypt hash (invalid character in salt or digest)";
	return NULL;
}

static int parse_users(struct ctx *c, const yaml_node_t *n)
{
	struct webconfig *wc = c->wc;
	const yaml_node_t *k, *v;
	char eb[ESC_SIZE];
	unsigned cost;
	const char *why;
	size_t count;
	int r;

	r = expect_mapping(c, n, "basic_auth_users");
	if (r != 0)
		return r < 0 ? -1 : 0;
	count = (size_t)(n->data.mapping.pairs.top - n->data.mapping.pairs.start);
	if (count == 0)
		return 0;
	wc->users = xcalloc(count, sizeof *wc->users);
	FOR_PAIRS(c, n, k, v) {
		if (v->type != YAML_SCALAR_NODE)
			return fail_at(c, v->start_mark, "basic_auth_users: user \"%s\": password hash must be a string, not %s",
				       esc(eb, sval(k), slen(k)), type_name(v));
		why = is_null(v) ? "password hash is empty" : bcrypt_problem(sval(v), slen(v), &cost);
		if (why)
			return fail_at(c, v->start_mark, "basic_auth_users: user \"%s\": %s",
				       esc(eb, sval(k), slen(k)), why);
		wc->users[wc->nusers].name = dup_scalar(k);
		wc->users[wc->nusers].hash = dup_scalar(v);
		wc->nusers++;
	}
	return 0;
}

/* --- top level --------------------------------------------------------------------------------- */

static int parse_root(struct ctx *c, const yaml_node_t *root)
{
	const yaml_node_t *k, *v;
	char eb[ESC_SIZE];

	if (!root || is_null(root))
		return 0; /* empty file, comments only, or an explicit empty document */
	if (root->type != YAML_MAPPING_NODE)
		return fail_at(c, root->start_mark, "the web config must be a mapping, not %s",
			       type_name(root));
	if (check_mapping(c, root, "the web config") < 0)
		return -1;
	FOR_PAIRS(c, root, k, v) {
		if (scalar_eq(k, "tls_server_config")) {
			if (parse_tls(c, k, v) < 0)
				return -1;
		} else if (scalar_eq(k, "http_server_config")) {
			if (parse_http(c, v) < 0)
				return -1;
		} else if (scalar_eq(k, "basic_auth_users")) {
			if (parse_users(c, v) < 0)
				return -1;
		} else if (scalar_eq(k, "rate_limit")) {
			if (!is_null(v))
				return fail_at(c, k->start_mark, "rate_limit is not supported by slurm-exporter-shim");
		} else {
			return fail_at(c, k->start_mark,
				       "unknown key \"%s\" (expected tls_server_config, http_server_config or basic_auth_users)",
				       esc(eb, sval(k), slen(k)));
		}
	}
	return 0;
}

static void yaml_fail(struct ctx *c, const yaml_parser_t *p, const char *buf, size_t len)
{
	yaml_mark_t m = p->problem_mark;
	const char *problem = p->problem ? p->problem : "unknown error";
	size_t i;

	switch (p->error) {
	case YAML_MEMORY_ERROR:
		fail_nopos(c, "out of memory while parsing YAML");
		return;
	case YAML_READER_ERROR:
		/* Reader errors carry a byte offset only: derive line and (byte) column from it. */
		memset(&m, 0, sizeof m);
		for (i = 0; i < p->problem_offset && i < len; i++) {
			if (buf[i] == '\n') {
				m.line++;
				m.column = 0;
			} else {
				m.column++;
			}
		}
		fail_at(c, m, "invalid YAML input: %s", problem);
		return;
	default:
		if (p->context)
			fail_at(c, m, "YAML syntax error: %s (%s started at line %zu, column %zu)", problem,
				p->context, p->context_mark.line + 1, p->context_mark.column + 1);
		else
			fail_at(c, m, "YAML syntax error: %s", problem);
		return;
	}
}

/* libyaml's scanner is quadratic in flow nesting depth (a 1 MiB line of '[' takes an hour), so
 * before composing the document, stream its events and stop at the first node nested deeper than
 * any valid web config needs. Returns -1 (error set) when too deep or out of memory; syntax
 * errors are left for yaml_parser_load to report. */
#define WC_MAX_DEPTH 32
static int check_depth(struct ctx *c, const char *buf, size_t len)
{
	yaml_parser_t p;
	yaml_event_t ev;
	int depth = 0, rc = 0, done = 0;

	if (!yaml_parser_initialize(&p))
		return fail_nopos(c, "out of memory");
	yaml_parser_set_input_string(&p, (const unsigned char *)buf, len);
	while (!done && yaml_parser_parse(&p, &ev)) {
		if (ev.type == YAML_SEQUENCE_START_EVENT || ev.type == YAML_MAPPING_START_EVENT) {
			if (++depth > WC_MAX_DEPTH) {
				rc = fail_at(c, ev.start_mark, "YAML nesting is deeper than %d levels", WC_MAX_DEPTH);
				done = 1;
			}
		} else if (ev.type == YAML_SEQUENCE_END_EVENT || ev.type == YAML_MAPPING_END_EVENT) {
			depth--;
		} else if (ev.type == YAML_STREAM_END_EVENT) {
			done = 1;
		}
		yaml_event_delete(&ev);
	}
	if (!done && p.error == YAML_MEMORY_ERROR)
		rc = fail_nopos(c, "out of memory while parsing YAML");
	yaml_parser_delete(&p);
	return rc;
}

int webconfig_load(const char *path, struct webconfig **out, char *err, size_t errlen)
{
	struct ctx c = { .path = path ? path : "(null)", .err = err, .errlen = errlen };
	yaml_parser_t parser;
	yaml_document_t doc, doc2;
	int parser_init = 0, doc_init = 0, doc2_init = 0, rc = -1, e;
	const yaml_node_t *root, *root2;
	char *buf = NULL;
	size_t len = 0;
	char sb[128];

	c.tls.min_v = c.tls.max_v = -1;
	c.tls.prefer_server = 1;
	if (err && errlen)
		err[0] = '\0';
	if (out)
		*out = NULL;
	if (!path || !out) {
		fail_nopos(&c, "invalid argument");
		goto out;
	}
	e = read_bounded(path, &buf, &len);
	if (e) {
		fail_nopos(&c, "cannot read web config: %s", errstr(e, sb, sizeof sb));
		goto out;
	}
	if (check_depth(&c, buf, len) < 0)
		goto out;
	c.wc = xcalloc(1, sizeof *c.wc);
	if (!yaml_parser_initialize(&parser)) {
		fail_nopos(&c, "out of memory");
		goto out;
	}
	parser_init = 1;
	yaml_parser_set_input_string(&parser, (const unsigned char *)buf, len);
	if (!yaml_parser_load(&parser, &doc)) { /* libyaml frees a partial document itself */
		yaml_fail(&c, &parser, buf, len);
		goto out;
	}
	doc_init = 1;
	c.doc = &doc;
	root = yaml_document_get_root_node(&doc);
	if (root) {
		if (!yaml_parser_load(&parser, &doc2)) {
			yaml_fail(&c, &parser, buf, len);
			goto out;
		}
		doc2_init = 1;
		root2 = yaml_document_get_root_node(&doc2);
		if (root2) {
			fail_at(&c, root2->start_mark, "multiple YAML documents are not supported");
			goto out;
		}
	}
	if (parse_root(&c, root) < 0)
		goto out;
	*out = c.wc;
	c.wc = NULL;
	rc = 0;
out:
	tls_cfg_clear(&c.tls);
	if (doc2_init)
		yaml_document_delete(&doc2);
	if (doc_init)
		yaml_document_delete(&doc);
	if (parser_init)
		yaml_parser_delete(&parser);
	if (buf) {
		explicit_bzero(buf, len);
		free(buf);
	}
	webconfig_free(c.wc);
	return rc;
}

void webconfig_free(struct webconfig *wc)
{
	size_t i;

	if (!wc)
		return;
	free(wc->cert_pem);
	if (wc->key_pem) {
		explicit_bzero(wc->key_pem, strlen(wc->key_pem));
		free(wc->key_pem);
	}
	free(wc->priorities);
	for (i = 0; i < wc->nusers; i++) {
		free(wc->users[i].name);
		if (wc->users[i].hash) {
			explicit_bzero(wc->users[i].hash, strlen(wc->users[i].hash));
			free(wc->users[i].hash);
		}
		if (wc->users[i].verified) {
			explicit_bzero(wc->users[i].verified, strlen(wc->users[i].verified));
			free(wc->users[i].verified);
		}
	}
	free(wc->users);
	for (i = 0; i < wc->nheaders; i++)
		free(wc->headers[i].value);
	free(wc->headers);
	free(wc);
}

/* --- getters ----------------------------------------------------------------------------------- */

const char *webconfig_tls_cert_pem(const struct webconfig *wc)
{
	return wc ? wc->cert_pem : NULL;
}

const char *webconfig_tls_key_pem(const struct webconfig *wc)
{
	return wc ? wc->key_pem : NULL;
}

const char *webconfig_tls_min_version(const struct webconfig *wc)
{
	return wc ? wc->min_version : NULL;
}

const char *webconfig_tls_max_version(const struct webconfig *wc)
{
	return wc ? wc->max_version : NULL;
}

const char *webconfig_tls_priorities(const struct webconfig *wc)
{
	return wc ? wc->priorities : NULL;
}

int webconfig_has_users(const struct webconfig *wc)
{
	return wc && wc->nusers > 0;
}

size_t webconfig_header_count(const struct webconfig *wc)
{
	return wc ? wc->nheaders : 0;
}

void webconfig_header(const struct webconfig *wc, size_t i, const char **key, const char **value)
{
	int ok = wc && i < wc->nheaders;

	if (key)
		*key = ok ? wc->headers[i].key : NULL;
	if (value)
		*value = ok ? wc->headers[i].value : NULL;
}

/* Equal iff same length and same bytes; the byte loop does not exit early. */
static int ct_equal(const char *a, size_t la, const char *b, size_t lb)
{
	volatile unsigned char d = 0;
	size_t i;

	if (la != lb)
		return 0;
	for (i = 0; i < la; i++)
		d |= (unsigned char)(a[i] ^ b[i]);
	return d == 0;
}

/* Guards wc_user.verified. Prometheus sends the same credentials on every scrape, and a bcrypt check
 * costs tens of milliseconds by design; like exporter-toolkit, a password that verified once for a
 * user is remembered (one per user, compared in constant time) so the next scrape skips bcrypt. A
 * wrong password always pays the full bcrypt cost. */
static pthread_mutex_t verified_lock = PTHREAD_MUTEX_INITIALIZER;

/* The hash a check for this user name runs bcrypt on. A configured user's own; for an unknown name,
 * a dummy with the cost of a configured user picked from the name (FNV-1a): a wrong password then
 * costs the same whether the user exists or not, and the same name always costs the same, so neither
 * one probe nor repeated probes tell a configured name from another. (Every failure at the highest
 * cost would not do: a configured user with a lower cost would stand out by answering faster.) */
static const char *hash_for(const struct webconfig *wc, const char *user, size_t ulen, struct wc_user **u,
			    char dummy[BCRYPT_LEN + 1])
{
	uint64_t h = 0xcbf29ce484222325u;
	size_t i;

	*u = NULL;
	for (i = 0; i < wc->nusers; i++) /* no early exit */
		if (!*u && ct_equal(wc->users[i].name, strlen(wc->users[i].name), user, ulen))
			*u = &wc->users[i];
	if (*u)
		return (*u)->hash;
	for (i = 0; i < ulen; i++)
		h = (h ^ (unsigned char)user[i]) * 0x100000001b3u;
	memcpy(dummy, wc->users[h % wc->nusers].hash, 7); /* "$2b$CC$": the picked user's cost */
	memcpy(dummy + 7, DUMMY_TAIL, sizeof DUMMY_TAIL); /* includes the NUL */
	return dummy;
}

int webconfig_check_basic_auth(const struct webconfig *wc, const char *user, size_t ulen, const char *password,
			       size_t plen, unsigned *cost)
{
	struct crypt_data *cd = NULL;
	struct wc_user *u = NULL;
	char dummy[BCRYPT_LEN + 1];
	const char *hash, *res;
	int ok = 0;

	if (cost)
		*cost = 0;
	if (!wc || !user || !password || wc->nusers == 0)
		goto out;
	hash = hash_for(wc, user, ulen, &u, dummy);
	if (u) {
		pthread_mutex_lock(&verified_lock);
		ok = u->verified && ct_equal(u->verified, strlen(u->verified), password, plen);
		pthread_mutex_unlock(&verified_lock);
		if (ok)
			goto out;
	}
	if (cost)
		*cost = (unsigned)(hash[4] - '0') * 10 + (unsigned)(hash[5] - '0');
	cd = xcalloc(1, sizeof *cd);
	/* crypt reads up to a NUL: a password with one inside pays the same cost, then fails */
	res = crypt_rn(password, hash, cd, (int)sizeof *cd);
	if (!res || res[0] == '*')
		goto out;
	ok = ct_equal(res, strlen(res), hash, BCRYPT_LEN) & (u != NULL) & (memchr(password, '\0', plen) == NULL);
	if (ok) {
		char *copy = xstrndup(password, plen);
		pthread_mutex_lock(&verified_lock);
		if (u->verified) {
			explicit_bzero(u->verified, strlen(u->verified));
			free(u->verified);
		}
		u->verified = copy;
		pthread_mutex_unlock(&verified_lock);
	}
out:
	if (cd) {
		explicit_bzero(cd, sizeof *cd);
		free(cd);
	}
	return ok;
}

/* Value of one base64 character, -1 for '=' and anything outside the standard alphabet. */
static int b64_value(unsigned char ch)
{
	static const char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	const char *p = ch ? strchr(alphabet, ch) : NULL;
	return p ? (int)(p - alphabet) : -1;
}

/* Strict base64 (RFC 4648 section 4, padded, no whitespace, unused bits zero) into out, which has
 * room for len / 4 * 3 bytes. Returns the decoded length or -1. */
static long b64_decode(const char *in, size_t len, char *out)
{
	size_t i, o = 0;

	if (len == 0 || len % 4)
		return -1;
	for (i = 0; i < len; i += 4) {
		int v[4], pad = 0;
		for (int k = 0; k < 4; k++) {
			v[k] = b64_value((unsigned char)in[i + k]);
			if (v[k] < 0 && (in[i + k] != '=' || i + 4 != len || k < 2))
				return -1;
			if (v[k] < 0)
				pad++;
			else if (pad)
				return -1; /* data after '=' */
		}
		if ((pad == 2 && (v[1] & 15)) || (pad == 1 && (v[2] & 3)))
			return -1; /* bits that no byte uses */
		out[o++] = (char)(v[0] << 2 | v[1] >> 4);
		if (pad < 2)
			out[o++] = (char)((v[1] & 15) << 4 | v[2] >> 2);
		if (pad < 1)
			out[o++] = (char)((v[2] & 3) << 6 | v[3]);
	}
	return (long)o;
}

int webconfig_parse_basic(const char *value, size_t len, struct basic_cred *out)
{
	size_t i = 5;
	long n;
	char *colon;

	memset(out, 0, sizeof *out);
	if (!value || len < 6 || strncasecmp(value, "Basic", 5) || value[5] != ' ')
		return -1;
	while (i < len && value[i] == ' ')
		i++;
	out->buf = xmalloc((len - i) / 4 * 3 + 1);
	n = b64_decode(value + i, len - i, out->buf);
	colon = n < 0 ? NULL : memchr(out->buf, ':', (size_t)n);
	if (!colon) {
		webconfig_basic_free(out);
		return -1;
	}
	out->buflen = (size_t)n;
	out->user = out->buf;
	out->ulen = (size_t)(colon - out->buf);
	out->pass = colon + 1;
	out->plen = (size_t)n - out->ulen - 1;
	out->buf[n] = '\0'; /* pass is a C string too; plen says where it really ends */
	return 0;
}

void webconfig_basic_free(struct basic_cred *c)
{
	if (c->buf) {
		explicit_bzero(c->buf, c->buflen + 1);
		free(c->buf);
	}
	memset(c, 0, sizeof *c);
}
