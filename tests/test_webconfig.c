/* test_webconfig.c: exporter-toolkit web config parser (src/webconfig.c).
 * Runs from the repository root; fixtures are under tests/webconfig/ (see its README.md). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gnutls/gnutls.h>
#include <string.h>

#include "testutil.h"
#include "webconfig.h"

#define DIR "tests/webconfig/"

/* Only cmocka's prerequisites (and pthread.h, stdio.h and what makes FIFOs and files) are included,
 * so the few string helpers are local. */
static size_t len_of(const char *s)
{
	size_t n = 0;
	while (s[n])
		n++;
	return n;
}

static int starts_with(const char *s, const char *prefix)
{
	while (*prefix)
		if (*s++ != *prefix++)
			return 0;
	return 1;
}

static int contains(const char *hay, const char *needle)
{
	for (; *hay; hay++)
		if (starts_with(hay, needle))
			return 1;
	return *needle == '\0';
}

/* webconfig_auth_is_valid on C strings */
static int check(const struct webconfig *wc, const char *user, const char *password)
{
	return webconfig_auth_is_valid(wc, user, user ? len_of(user) : 0, password, password ? len_of(password) : 0,
					  NULL);
}

static int has_newline(const char *s)
{
	for (; *s; s++)
		if (*s == '\n' || *s == '\r')
			return 1;
	return 0;
}

static struct webconfig *load_ok(const char *path)
{
	struct webconfig *wc = (struct webconfig *)(uintptr_t)1;
	char err[512] = "unset";
	int rc = webconfig_load(path, &wc, err, sizeof err);

	if (rc != 0)
		print_error("unexpected error: %s\n", err);
	assert_int_equal(rc, 0);
	assert_non_null(wc);
	assert_string_equal(err, "");
	return wc;
}

static void assert_no_tls(const struct webconfig *wc)
{
	assert_null(webconfig_tls_cert_pem(wc));
	assert_null(webconfig_tls_key_pem(wc));
	assert_null(webconfig_tls_min_version(wc));
	assert_null(webconfig_tls_max_version(wc));
	assert_null(webconfig_tls_priorities(wc));
}

static void assert_pems(const struct webconfig *wc)
{
	const char *cert = webconfig_tls_cert_pem(wc), *key = webconfig_tls_key_pem(wc);

	assert_non_null(cert);
	assert_non_null(key);
	assert_true(starts_with(cert, "-----BEGIN CERTIFICATE-----\n"));
	assert_true(contains(cert, "-----END CERTIFICATE-----\n"));
	assert_true(starts_with(key, "-----BEGIN PRIVATE KEY-----\n"));
	assert_true(contains(key, "-----END PRIVATE KEY-----\n"));
}

/* --- configs that load ------------------------------------------------------------------------- */

static void test_full(void **state)
{
	struct webconfig *wc = load_ok(DIR "full.yml");
	const char *k, *v;

	(void)state;
	assert_pems(wc);
	assert_string_equal(webconfig_tls_min_version(wc), "TLS12");
	assert_string_equal(webconfig_tls_max_version(wc), "TLS13");
	/* cipher_suites applied (their key exchange, ciphers and MAC, in order); curve order kept;
	 * prefer_server_cipher_suites: false drops %SERVER_PRECEDENCE */
	assert_string_equal(webconfig_tls_priorities(wc),
			    "NORMAL:-VERS-ALL:+VERS-TLS1.3:+VERS-TLS1.2:-KX-ALL:+ECDHE-ECDSA:-CIPHER-ALL:+AES-128-GCM:"
			    "+CHACHA20-POLY1305:-MAC-ALL:+AEAD:-GROUP-ALL:+GROUP-X25519:+GROUP-SECP256R1");

	/* headers in file order; the blank Content-Security-Policy is left unset */
	assert_int_equal(webconfig_header_count(wc), 3);
	webconfig_header(wc, 0, &k, &v);
	assert_string_equal(k, "X-Frame-Options");
	assert_string_equal(v, "deny");
	webconfig_header(wc, 1, &k, &v);
	assert_string_equal(k, "X-Content-Type-Options");
	assert_string_equal(v, "nosniff");
	webconfig_header(wc, 2, &k, &v);
	assert_string_equal(k, "Strict-Transport-Security");
	assert_string_equal(v, "max-age=31536000");
	webconfig_header(wc, 3, &k, &v);
	assert_null(k);
	assert_null(v);

	assert_int_equal(webconfig_has_users(wc), 1);
	webconfig_free(wc);
}

static void test_basic_auth(void **state)
{
	struct webconfig *wc = load_ok(DIR "full.yml");

	(void)state;
	/* right passwords: $2y$ (htpasswd, cost 4 and 5), $2b$ and $2a$ */
	assert_int_equal(check(wc, "alice", "correct horse"), 1);
	assert_int_equal(check(wc, "bob", "hunter2"), 1);
	assert_int_equal(check(wc, "carol", "secret"), 1);
	assert_int_equal(check(wc, "dave", "secret"), 1);
	/* wrong passwords */
	assert_int_equal(check(wc, "alice", "correct horse "), 0);
	assert_int_equal(check(wc, "alice", "Correct horse"), 0);
	assert_int_equal(check(wc, "alice", ""), 0);
	assert_int_equal(check(wc, "alice", "hunter2"), 0);
	assert_int_equal(check(wc, "bob", "correct horse"), 0);
	/* unknown users, including one whose password is a configured user's */
	assert_int_equal(check(wc, "mallory", "hunter2"), 0);
	assert_int_equal(check(wc, "", "secret"), 0);
	assert_int_equal(check(wc, "Alice", "correct horse"), 0);
	assert_int_equal(check(wc, "alice2", "correct horse"), 0);
	/* the remembered right password (no bcrypt on the next scrape) admits only itself */
	assert_int_equal(check(wc, "alice", "correct horse"), 1);
	assert_int_equal(check(wc, "alice", "correct hors"), 0);
	assert_int_equal(check(wc, "bob", "correct horse"), 0);
	/* bad arguments */
	assert_int_equal(check(wc, NULL, "secret"), 0);
	assert_int_equal(check(wc, "carol", NULL), 0);
	assert_int_equal(check(NULL, "carol", "secret"), 0);
	/* the same object keeps working after failures */
	assert_int_equal(check(wc, "carol", "secret"), 1);
	webconfig_free(wc);
}

static void test_long_password(void **state)
{
	struct webconfig *wc = load_ok(DIR "auth_only.yml");
	char pw[1000];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof pw - 1; i++)
		pw[i] = 'x';
	pw[sizeof pw - 1] = '\0';
	assert_int_equal(check(wc, "alice", pw), 0);
	assert_int_equal(check(wc, "nobody", pw), 0);
	webconfig_free(wc);
}

static void test_tls_only(void **state)
{
	struct webconfig *wc = load_ok(DIR "tls_only.yml");

	(void)state;
	assert_pems(wc);
	assert_null(webconfig_tls_min_version(wc));
	assert_null(webconfig_tls_max_version(wc));
	/* toolkit defaults: TLS 1.2 .. 1.3, server cipher preference */
	assert_string_equal(webconfig_tls_priorities(wc),
			    "NORMAL:-VERS-ALL:+VERS-TLS1.3:+VERS-TLS1.2:%SERVER_PRECEDENCE");
	assert_int_equal(webconfig_has_users(wc), 0);
	assert_int_equal(check(wc, "alice", "correct horse"), 0);
	assert_int_equal(webconfig_header_count(wc), 0);
	webconfig_free(wc);
}

static void test_auth_only(void **state)
{
	struct webconfig *wc = load_ok(DIR "auth_only.yml");

	(void)state;
	assert_no_tls(wc);
	assert_int_equal(webconfig_has_users(wc), 1);
	assert_int_equal(check(wc, "alice", "correct horse"), 1);
	assert_int_equal(check(wc, "alice", "wrong"), 0);
	assert_int_equal(check(wc, "bob", "hunter2"), 0);
	assert_int_equal(webconfig_header_count(wc), 0);
	webconfig_free(wc);
}

/* Files that configure nothing: plain HTTP, no auth, no headers. */
static void test_nothing_configured(void **state)
{
	static const char *const files[] = {
		DIR "empty.yml", DIR "comments_only.yml", DIR "null_sections.yml",
		DIR "tls_settings_no_cert.yml",
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof files / sizeof files[0]; i++) {
		struct webconfig *wc = load_ok(files[i]);
		assert_no_tls(wc);
		assert_int_equal(webconfig_has_users(wc), 0);
		assert_int_equal(check(wc, "alice", "correct horse"), 0);
		assert_int_equal(webconfig_header_count(wc), 0);
		webconfig_free(wc);
	}
}

static void test_inline_pem(void **state)
{
	struct webconfig *file = load_ok(DIR "tls_only.yml");
	struct webconfig *inl = load_ok(DIR "inline.yml");

	(void)state;
	assert_pems(inl);
	/* the literal block scalars give exactly the file contents */
	assert_string_equal(webconfig_tls_cert_pem(inl), webconfig_tls_cert_pem(file));
	assert_string_equal(webconfig_tls_key_pem(inl), webconfig_tls_key_pem(file));
	webconfig_free(inl);
	webconfig_free(file);
}

static void test_relative_paths(void **state)
{
	struct webconfig *file = load_ok(DIR "tls_only.yml");
	/* sub/relative.yml says ../cert.pem: resolved against tests/webconfig/sub/, not the cwd */
	struct webconfig *rel = load_ok(DIR "sub/relative.yml");

	(void)state;
	assert_string_equal(webconfig_tls_cert_pem(rel), webconfig_tls_cert_pem(file));
	assert_string_equal(webconfig_tls_key_pem(rel), webconfig_tls_key_pem(file));
	assert_string_equal(webconfig_tls_min_version(rel), "TLS13");
	assert_string_equal(webconfig_tls_priorities(rel), "NORMAL:-VERS-ALL:+VERS-TLS1.3:%SERVER_PRECEDENCE");
	webconfig_free(rel);
	webconfig_free(file);
}

static void test_null_getters(void **state)
{
	const char *k = "x", *v = "y";

	(void)state;
	assert_no_tls(NULL);
	assert_int_equal(webconfig_has_users(NULL), 0);
	assert_int_equal(webconfig_header_count(NULL), 0);
	webconfig_header(NULL, 0, &k, &v);
	assert_null(k);
	assert_null(v);
	webconfig_free(NULL);
}

/* --- errors ------------------------------------------------------------------------------------ */

struct err_case {
	const char *file;    /* under tests/webconfig/ */
	const char *pos;     /* ":LINE:COL: " */
	const char *reason;  /* must appear in the message */
	const char *reason2; /* and this too, if set */
};

static void check_error(const char *path, const char *prefix, const char *reason, const char *reason2)
{
	struct webconfig *wc = (struct webconfig *)(uintptr_t)1;
	char err[512];
	int rc;

	err[0] = 'X';
	err[1] = '\0';
	rc = webconfig_load(path, &wc, err, sizeof err);
	if (rc == 0 || !starts_with(err, prefix) || !contains(err, reason) ||
	    (reason2 && !contains(err, reason2)))
		print_error("file %s: got rc=%d message \"%s\"\nwanted prefix \"%s\", reason \"%s\"%s%s\n", path,
			    rc, err, prefix, reason, reason2 ? " and " : "", reason2 ? reason2 : "");
	assert_int_equal(rc, -1);
	assert_null(wc);
	assert_true(starts_with(err, prefix));
	assert_true(contains(err, reason));
	if (reason2)
		assert_true(contains(err, reason2));
	assert_false(has_newline(err));
	assert_true(len_of(err) < sizeof err);
}

static void test_error_case(void **state)
{
	const struct err_case *ec = *state;
	char path[256], prefix[300];
	size_t n = 0, i;

	for (i = 0; DIR[i]; i++)
		path[n++] = DIR[i];
	for (i = 0; ec->file[i]; i++)
		path[n++] = ec->file[i];
	path[n] = '\0';
	for (i = 0; i < n; i++)
		prefix[i] = path[i];
	for (i = 0; ec->pos[i]; i++)
		prefix[n + i] = ec->pos[i];
	prefix[n + i] = '\0';
	check_error(path, prefix, ec->reason, ec->reason2);
}

#define EC(name, file, pos, reason, reason2)                                                       \
	static const struct err_case name = { file, pos, reason, reason2 }

/* unknown keys (strict unmarshalling) */
EC(ec_unknown_key, "bad_unknown_key.yml", ":4:1: ", "unknown key \"web_listen_address\"", NULL);
EC(ec_unknown_nested, "bad_unknown_nested.yml", ":4:3: ", "unknown key \"certfile\" in tls_server_config", NULL);
EC(ec_http_unknown, "bad_http_unknown.yml", ":3:3: ", "unknown key \"http3\" in http_server_config", NULL);
EC(ec_rate_limit, "bad_rate_limit.yml", ":1:1: ", "rate_limit is not supported by slurm-exporter-shim", NULL);
/* bcrypt hashes */
EC(ec_hash, "bad_hash.yml", ":3:12: ", "user \"mallory\"", "must start with $2a$, $2b$ or $2y$");
EC(ec_hash_length, "bad_hash_length.yml", ":2:10: ", "user \"alice\"", "wrong length");
EC(ec_hash_cost, "bad_hash_cost.yml", ":3:10: ", "user \"alice\"", "cost must be between 04 and 31");
EC(ec_hash_empty, "bad_hash_empty.yml", ":2:9: ", "user \"alice\"", "password hash is empty");
/* TLS settings */
EC(ec_missing_key_file, "bad_missing_key_file.yml", ":2:1: ", "missing one of key or key_file", NULL);
EC(ec_missing_cert_file, "bad_missing_cert_file.yml", ":1:1: ", "missing one of cert or cert_file", NULL);
EC(ec_only_auth_type, "bad_only_auth_type.yml", ":1:1: ", "missing one of cert or cert_file", NULL);
EC(ec_both_cert, "bad_both_cert.yml", ":4:9: ", "cannot specify both cert_file and cert", NULL);
EC(ec_client_auth, "bad_client_auth.yml", ":4:21: ",
   "client_auth_type \"RequireAndVerifyClientCert\" is not supported by slurm-exporter-shim", NULL);
EC(ec_client_auth_invalid, "bad_client_auth_invalid.yml", ":4:21: ", "invalid client_auth_type \"Sometimes\"",
   "only NoClientCert");
EC(ec_client_ca, "bad_client_ca.yml", ":4:3: ", "client_ca_file", "not supported by slurm-exporter-shim");
EC(ec_min_version, "bad_min_version.yml", ":4:16: ", "unknown TLS version \"TLS14\"", NULL);
EC(ec_version_order, "bad_version_order.yml", ":5:16: ", "max_version TLS12 is lower than min_version TLS13", NULL);
EC(ec_cipher, "bad_cipher.yml", ":6:7: ", "cipher_suites: unknown name \"TLS_RSA_WITH_RC4_128_SHA\"", NULL);
/* a list GnuTLS would widen (it enables key exchanges and ciphers separately), and one with no suite
 * of the versions enabled: refused, never applied as something else */
EC(ec_cipher_cross, "bad_cipher_cross.yml", ":6:3: ",
   "cipher_suites: GnuTLS enables every listed key exchange with every listed cipher, so this list would also enable "
   "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384", NULL);
EC(ec_cipher_none, "bad_cipher_none.yml", ":6:3: ", "cipher_suites: no listed suite can be used from TLS13 to TLS13", NULL);
EC(ec_curve, "bad_curve.yml", ":4:34: ", "curve_preferences: unknown name \"CurveP999\"", NULL);
/* cert and key files */
EC(ec_cert_missing, "bad_cert_missing.yml", ":2:14: ",
   "cert_file \"tests/webconfig/does-not-exist.pem\": No such file or directory", NULL);
EC(ec_cert_dir, "bad_cert_dir.yml", ":3:14: ", "cert_file \"tests/webconfig/.\": is a directory", NULL);
EC(ec_cert_notpem, "bad_cert_notpem.yml", ":2:14: ", "cert_file \"tests/webconfig/notpem.txt\" is not PEM", NULL);
/* devices: regular files only (src/file_read.c); an over-large regular file: test_config_not_regular */
EC(ec_cert_devnull, "bad_cert_devnull.yml", ":2:14: ", "cert_file \"/dev/null\": is a character device, not a regular file", NULL);
EC(ec_cert_toolarge, "bad_cert_toolarge.yml", ":3:13: ", "key_file \"/dev/zero\": is a character device, not a regular file", NULL);
EC(ec_key_swapped, "bad_key_swapped.yml", ":2:14: ",
   "cert_file \"tests/webconfig/key.pem\" does not contain a PEM certificate", NULL);
EC(ec_key_is_cert, "bad_key_is_cert.yml", ":3:13: ",
   "key_file \"tests/webconfig/cert.pem\" does not contain a PEM private key", NULL);
EC(ec_inline_key, "bad_inline_key.yml", ":3:8: ", "key is not PEM", NULL);
/* duplicate keys */
EC(ec_duplicate, "bad_duplicate.yml", ":4:1: ", "duplicate key \"basic_auth_users\"", NULL);
EC(ec_duplicate_user, "bad_duplicate_user.yml", ":4:3: ", "duplicate key \"alice\" in basic_auth_users", NULL);
/* wrong YAML types */
EC(ec_type_seq, "bad_type_seq.yml", ":3:5: ", "cert_file must be a string, not a sequence", NULL);
EC(ec_type_users, "bad_type_users.yml", ":2:3: ", "basic_auth_users must be a mapping, not a sequence", NULL);
EC(ec_type_hash, "bad_type_hash.yml", ":2:10: ", "user \"alice\"", "must be a string, not a mapping");
EC(ec_type_bool, "bad_type_bool.yml", ":2:10: ", "http2 must be a boolean", NULL);
EC(ec_type_root, "bad_type_root.yml", ":1:1: ", "must be a mapping, not a sequence", NULL);
EC(ec_key_seq, "bad_key_seq.yml", ":1:3: ", "keys in the web config must be strings, not a sequence", NULL);
EC(ec_nul, "bad_nul.yml", ":2:3: ", "contains a NUL character", NULL);
/* headers */
EC(ec_header, "bad_header.yml", ":4:5: ", "HTTP header \"Server\" can not be configured", NULL);
EC(ec_header_value, "bad_header_value.yml", ":3:29: ",
   "invalid value \"sniff\" for HTTP header X-Content-Type-Options", NULL);
EC(ec_header_ctl, "bad_header_ctl.yml", ":3:30: ", "contains a control character", NULL);
/* YAML syntax */
EC(ec_syntax, "bad_syntax.yml", ":4:2: ", "YAML syntax error: did not find expected key", NULL);
EC(ec_syntax_flow, "bad_syntax_flow.yml", ":2:1: ", "YAML syntax error", NULL);
EC(ec_utf8, "bad_utf8.yml", ":2:5: ", "invalid YAML input", "UTF-8");
EC(ec_alias, "bad_alias.yml", ":1:19: ", "YAML syntax error: found undefined alias", NULL);
EC(ec_multi_doc, "bad_multi_doc.yml", ":3:1: ", "multiple YAML documents are not supported", NULL);
EC(ec_deep, "bad_deep.yml", ":1:50: ", "YAML nesting is deeper than 32 levels", NULL);
/* aliases: bounded before the document is composed (src/webconfig_yaml.c) */
EC(ec_alias_bomb, "bad_alias_bomb.yml", ":8:8: ", "YAML aliases expand the document to more than 4194304 bytes", NULL);
EC(ec_alias_cycle, "bad_alias_cycle.yml", ":2:10: ", "YAML alias *users is inside the node it names", NULL);

/* Named after the case, so a failure says which fixture broke. */
#define ERR_TEST(ec) { #ec, test_error_case, NULL, NULL, (void *)&(ec) }

static void test_config_unreadable(void **state)
{
	(void)state;
	check_error(DIR "does-not-exist.yml", DIR "does-not-exist.yml: ",
		    "cannot read web config: No such file or directory", NULL);
	check_error(DIR "sub", DIR "sub: ", "cannot read web config: is a directory", NULL);
	check_error("/dev/zero", "/dev/zero: ", "cannot read web config: is a character device, not a regular file", NULL);
}

/* A temporary directory for the files a test makes; tmp_path names one in it. */
static char tmp_dir[256];

static void make_tmp_dir(void)
{
	snprintf(tmp_dir, sizeof tmp_dir, "%s/wc-XXXXXX", tu_tmpdir());
	assert_non_null(mkdtemp(tmp_dir));
}

static const char *tmp_path(char *out, size_t n, const char *name)
{
	snprintf(out, n, "%s/%s", tmp_dir, name);
	return out;
}

static void write_text(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

/* Hardening A: the web config and its PEM files are read with src/file_read.c: a FIFO used to block
 * webconfig_load (and the daemon's start) for ever; alarm() makes that a failure, not a hang. A
 * regular file over 1 MiB is refused, one of exactly 1 MiB is read. */
/* GnuTLS' name of the suite whose parts the priority string p enables ("...:-KX-ALL:+ECDHE-RSA:-CIPHER-ALL:
 * +AES-128-GCM:-MAC-ALL:+AEAD..."): one of each, or NULL. */
static const char *suite_of(const char *p)
{
	char kx[32], cipher[32], mac[32];
	const char *k = strstr(p, ":-KX-ALL:+"), *c = strstr(p, ":-CIPHER-ALL:+"), *m = strstr(p, ":-MAC-ALL:+");
	if (!k || !c || !m || sscanf(k, ":-KX-ALL:+%31[^:]", kx) != 1 || sscanf(c, ":-CIPHER-ALL:+%31[^:]", cipher) != 1 ||
	    sscanf(m, ":-MAC-ALL:+%31[^:]", mac) != 1)
		return NULL;
	return gnutls_cipher_suite_get_name(gnutls_kx_get_id(kx), gnutls_cipher_get_id(cipher), gnutls_mac_get_id(mac));
}

/* Every TLS 1.2 name of Go's (the toolkit's) on its own, with TLS 1.2 only: its priority string
 * enables exactly the GnuTLS suite of that name (GnuTLS spells them without "TLS_" and "WITH_", SHA1 for
 * SHA, and without the PRF of a ChaCha20 suite), so the shim's table of parts is GnuTLS' own. */
static void test_cipher_suites_each(void **state)
{
	static const char *const go[] = {
		"TLS_RSA_WITH_AES_128_CBC_SHA", "TLS_RSA_WITH_AES_256_CBC_SHA", "TLS_RSA_WITH_AES_128_GCM_SHA256",
		"TLS_RSA_WITH_AES_256_GCM_SHA384", "TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA", "TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA",
		"TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA", "TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA",
		"TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256", "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384",
		"TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256", "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384",
		"TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256", "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256",
	};
	char cwd[256], cfg[300], text[900], want[80];
	(void)state;
	make_tmp_dir();
	assert_non_null(getcwd(cwd, sizeof cwd));
	for (size_t i = 0; i < sizeof go / sizeof go[0]; i++) {
		snprintf(text, sizeof text,
			 "tls_server_config:\n  cert_file: %s/tests/webconfig/cert.pem\n  key_file: %s/tests/webconfig/key.pem\n"
			 "  max_version: TLS12\n  cipher_suites: [%s]\n", cwd, cwd, go[i]);
		write_text(tmp_path(cfg, sizeof cfg, "cipher.yml"), text);
		struct webconfig *wc = load_ok(cfg);
		const char *got = suite_of(webconfig_tls_priorities(wc));
		/* Go's name in GnuTLS' spelling (gnutls_cipher_suite_get_name's: no "TLS_" either) */
		const char *with = strstr(go[i], "WITH_");
		snprintf(want, sizeof want, "%.*s%s", (int)(with - go[i] - 4), go[i] + 4, with + 5);
		size_t n = strlen(want);
		if (n > 4 && !strcmp(want + n - 4, "_SHA"))
			snprintf(want + n, sizeof want - n, "1");
		char *poly = strstr(want, "POLY1305_SHA256");
		if (poly)
			poly[8] = '\0';
		if (!got || strcmp(got, want))
			fail_msg("%s: the priority string %s enables %s, not %s", go[i], webconfig_tls_priorities(wc),
				 got ? got : "no single suite", want);
		webconfig_free(wc);
	}
}

static void test_config_not_regular(void **state)
{
	char fifo[300], big[300], cfg[300], prefix[320], text[900];
	struct webconfig *wc = NULL;
	char err[512];

	(void)state;
	make_tmp_dir();
	alarm(20);
	assert_int_equal(mkfifo(tmp_path(fifo, sizeof fifo, "fifo.yml"), 0600), 0);
	snprintf(prefix, sizeof prefix, "%s: ", fifo);
	check_error(fifo, prefix, "cannot read web config: is a FIFO, not a regular file", NULL);
	/* the certificate and the key */
	snprintf(text, sizeof text, "tls_server_config:\n  cert_file: %s\n  key_file: %s/tests/webconfig/key.pem\n", fifo,
		 getcwd(big, sizeof big));
	write_text(tmp_path(cfg, sizeof cfg, "fifo-cert.yml"), text);
	snprintf(prefix, sizeof prefix, "%s:2:14: ", cfg);
	check_error(cfg, prefix, "cert_file \"", "\": is a FIFO, not a regular file");
	snprintf(text, sizeof text, "tls_server_config:\n  cert_file: %s/tests/webconfig/cert.pem\n  key_file: %s\n",
		 getcwd(big, sizeof big), fifo);
	write_text(cfg, text);
	snprintf(prefix, sizeof prefix, "%s:3:13: ", cfg);
	check_error(cfg, prefix, "key_file \"", "\": is a FIFO, not a regular file");
	/* 1 MiB of comments loads (an empty config); one byte more does not */
	FILE *f = fopen(tmp_path(big, sizeof big, "big.yml"), "w");
	assert_non_null(f);
	for (size_t i = 0; i < ((size_t)1 << 20) - 1; i++)
		fputc(i % 64 == 63 ? '\n' : '#', f);
	fputc('\n', f);
	fclose(f);
	assert_int_equal(webconfig_load(big, &wc, err, sizeof err), 0);
	webconfig_free(wc);
	f = fopen(big, "a");
	fputc('#', f);
	fclose(f);
	snprintf(prefix, sizeof prefix, "%s: ", big);
	check_error(big, prefix, "cannot read web config: is over 1048576 bytes", NULL);
	alarm(0);
	unlink(fifo);
	unlink(big);
	unlink(cfg);
	rmdir(tmp_dir);
}

/* The YAML layer's bounds on anchors and aliases (src/webconfig_yaml.c), each at the event that
 * passes it; just under each bound the document is composed (and refused for what it is: the web
 * config has no such keys). Each file is under the 1 MiB cap. */
enum bound_kind { ANCHORS, ALIASES, EXPANSION };

static void write_bound_case(const char *path, enum bound_kind k, int n)
{
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(k == ANCHORS ? "x: [" : k == ALIASES ? "x: &a 1\ny: [" : "x: &a \"", f);
	for (int i = 0; i < n; i++)
		if (k == ANCHORS)
			fprintf(f, "&a%d 1, ", i);
		else if (k == ALIASES)
			fputs("*a, ", f);
		else
			fputs("yyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyy", f);
	/* EXPANSION: a scalar of n * 100 bytes, then 12 aliases to it: 400 KB passes the bound at the 10th */
	fputs(k == EXPANSION ? "\"\ny: [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a, *a, *a]\n" : "]\n", f);
	fclose(f);
}

static void test_alias_bounds(void **state)
{
	static const struct {
		enum bound_kind kind;
		int n;
		const char *pos, *reason;
	} cases[] = {
		{ ANCHORS, 1025, ":1:9135: ", "more than 1024 YAML anchors" },
		{ ANCHORS, 1024, ":1:1: ", "unknown key \"x\"" },
		{ ALIASES, 16385, ":2:65541: ", "more than 16384 YAML aliases" },
		{ ALIASES, 16384, ":1:1: ", "unknown key \"x\"" },
		{ EXPANSION, 4000, ":2:41: ", "YAML aliases expand the document to more than 4194304 bytes" },
		{ EXPANSION, 1000, ":1:1: ", "unknown key \"x\"" },
	};
	char path[300], prefix[400];

	(void)state;
	make_tmp_dir();
	tmp_path(path, sizeof path, "alias.yml");
	for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
		write_bound_case(path, cases[c].kind, cases[c].n);
		snprintf(prefix, sizeof prefix, "%s%s", path, cases[c].pos);
		alarm(20);
		check_error(path, prefix, cases[c].reason, NULL);
		alarm(0);
	}
	unlink(path);
	rmdir(tmp_dir);
}

static void test_error_buffer(void **state)
{
	struct webconfig *wc = NULL;
	char small[12];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof small; i++)
		small[i] = 'X';
	assert_int_equal(webconfig_load(DIR "bad_hash.yml", &wc, small, sizeof small), -1);
	assert_null(wc);
	assert_int_equal(len_of(small), sizeof small - 1); /* truncated, NUL-terminated */
	assert_true(starts_with(small, "tests/webco"));
	/* no message wanted */
	assert_int_equal(webconfig_load(DIR "bad_hash.yml", &wc, NULL, 0), -1);
	assert_null(wc);
	small[0] = 'X';
	assert_int_equal(webconfig_load(DIR "bad_hash.yml", &wc, small, 0), -1);
	assert_int_equal(small[0], 'X');
	/* bad arguments */
	assert_int_equal(webconfig_load(NULL, &wc, small, sizeof small), -1);
	assert_null(wc);
	assert_int_equal(webconfig_load(DIR "full.yml", NULL, small, sizeof small), -1);
}

/* The lengths count; a NUL inside the user or the password never matches. */
static void test_auth_lengths(void **state)
{
	struct webconfig *wc = load_ok(DIR "full.yml");

	(void)state;
	assert_int_equal(webconfig_auth_is_valid(wc, "alice", 5, "correct horse\0junk", 18, NULL), 0);
	assert_int_equal(webconfig_auth_is_valid(wc, "alice", 5, "correct horse\0", 14, NULL), 0);
	assert_int_equal(webconfig_auth_is_valid(wc, "alice", 5, "correct horse", 13, NULL), 1);
	/* the remembered password is compared with its length too */
	assert_int_equal(webconfig_auth_is_valid(wc, "alice", 5, "correct horse\0junk", 18, NULL), 0);
	assert_int_equal(webconfig_auth_is_valid(wc, "alice\0x", 7, "correct horse", 13, NULL), 0);
	assert_int_equal(webconfig_auth_is_valid(wc, "alicex", 5, "correct horse", 13, NULL), 1);
	webconfig_free(wc);
}

/* The remembered password is the one thing that changes in a loaded config, under a lock per user
 * (webconfig.h): threads checking two users at once, right and wrong passwords interleaved, always
 * get the right verdict, and afterwards each user's right password is remembered (cost 0). Workers
 * count their wrong verdicts instead of asserting (cmocka's asserts belong to the main thread). */
struct auth_job {
	const struct webconfig *wc;
	const char *user, *right;
	int wrong_verdicts;
};

static void *auth_worker(void *arg)
{
	struct auth_job *j = arg;
	for (int i = 0; i < 20; i++) {
		j->wrong_verdicts += check(j->wc, j->user, j->right) != 1;
		if (i % 5 == 0)
			j->wrong_verdicts += check(j->wc, j->user, "wrong") != 0;
	}
	return NULL;
}

static void test_auth_threads(void **state)
{
	struct webconfig *wc = load_ok(DIR "full.yml");
	struct auth_job jobs[4] = {
		{ wc, "alice", "correct horse", 0 }, { wc, "bob", "hunter2", 0 },
		{ wc, "alice", "correct horse", 0 }, { wc, "bob", "hunter2", 0 },
	};
	pthread_t t[4];
	unsigned cost = 99;

	(void)state;
	for (int i = 0; i < 4; i++)
		assert_int_equal(pthread_create(&t[i], NULL, auth_worker, &jobs[i]), 0);
	for (int i = 0; i < 4; i++) {
		assert_int_equal(pthread_join(t[i], NULL), 0);
		assert_int_equal(jobs[i].wrong_verdicts, 0);
	}
	assert_int_equal(webconfig_auth_is_valid(wc, "alice", 5, "correct horse", 13, &cost), 1);
	assert_int_equal(cost, 0);
	assert_int_equal(webconfig_auth_is_valid(wc, "bob", 3, "hunter2", 7, &cost), 1);
	assert_int_equal(cost, 0);
	assert_int_equal(check(wc, "bob", "correct horse"), 0); /* one user's memory admits no other */
	webconfig_free(wc);
}

/* A failing check costs what it would for a configured user, whether or not the
 * name exists. full.yml's users cost 4 (alice, carol, dave) and 5 (bob): unknown names must pay
 * 4 and 5 in about those proportions (deterministically: the same name, the same cost). */
static void test_auth_cost_independent_of_user(void **state)
{
	struct webconfig *wc = load_ok(DIR "full.yml");
	static const char *const known[] = { "alice", "bob", "carol", "dave" };
	static const unsigned known_cost[] = { 4, 5, 4, 4 };
	unsigned cost, again, n4 = 0, n5 = 0;
	char name[8] = "user00";

	(void)state;
	for (size_t i = 0; i < 4; i++) {
		assert_int_equal(webconfig_auth_is_valid(wc, known[i], len_of(known[i]), "wrong", 5, &cost), 0);
		assert_int_equal(cost, known_cost[i]);
	}
	for (unsigned i = 0; i < 64; i++) {
		name[4] = (char)('0' + i / 10);
		name[5] = (char)('0' + i % 10);
		assert_int_equal(webconfig_auth_is_valid(wc, name, 6, "wrong", 5, &cost), 0);
		assert_int_equal(webconfig_auth_is_valid(wc, name, 6, "other", 5, &again), 0);
		assert_int_equal(cost, again);
		assert_true(cost == 4 || cost == 5);
		if (cost == 4)
			n4++;
		else
			n5++;
	}
	/* known: 3 of 4 at cost 4; 64 unknown names: expect 48 and 16 */
	assert_in_range(n5, 8, 24);
	assert_in_range(n4, 40, 56);
	/* a right password pays its user's cost once, then is remembered */
	assert_int_equal(webconfig_auth_is_valid(wc, "bob", 3, "hunter2", 7, &cost), 1);
	assert_int_equal(cost, 5);
	assert_int_equal(webconfig_auth_is_valid(wc, "bob", 3, "hunter2", 7, &cost), 1);
	assert_int_equal(cost, 0);
	webconfig_free(wc);
}

static int parse_basic(const char *value, const char *user, const char *pass, size_t plen)
{
	struct basic_cred c;
	int ok;

	if (webconfig_parse_basic(value, len_of(value), &c) < 0) {
		assert_null(c.buf);
		return 0;
	}
	ok = c.ulen == len_of(user) && c.plen == plen && starts_with(c.user, user) &&
	     (plen == 0 || c.pass[0] == pass[0]) && c.pass[plen] == '\0';
	for (size_t i = 0; ok && i < plen; i++)
		ok = c.pass[i] == pass[i];
	webconfig_basic_free(&c);
	return ok;
}

static void test_parse_basic(void **state)
{
	(void)state;
	assert_true(parse_basic("Basic YWxpY2U6Y29ycmVjdCBob3JzZQ==", "alice", "correct horse", 13));
	assert_true(parse_basic("basic YWxpY2U6Y29ycmVjdCBob3JzZQ==", "alice", "correct horse", 13));
	assert_true(parse_basic("BASIC   YWxpY2U6Y29ycmVjdCBob3JzZQ==", "alice", "correct horse", 13));
	assert_true(parse_basic("Basic YWxpY2U6YQBi", "alice", "a\0b", 3));
	assert_true(parse_basic("Basic OnB3", "", "pw", 2));
	assert_true(parse_basic("Basic YTo6Yg==", "a", ":b", 2)); /* split at the first colon */
	assert_true(parse_basic("Basic YTo=", "a", "", 0));
	assert_false(parse_basic("Basic YWxpY2U=", "alice", "", 0));               /* no colon */
	assert_false(parse_basic("Basic", "", "", 0));
	assert_false(parse_basic("Basic ", "", "", 0));
	assert_false(parse_basic("BasicYTo=", "a", "", 0));
	assert_false(parse_basic("Basicx YTo=", "a", "", 0));
	assert_false(parse_basic("Bearer YTo=", "a", "", 0));
	assert_false(parse_basic("Basic YTo", "a", "", 0));                        /* no padding */
	assert_false(parse_basic("Basic YTo=YTo=", "a", "", 0));                   /* padding inside */
	assert_false(parse_basic("Basic YT=o", "a", "", 0));
	assert_false(parse_basic("Basic YTp=", "a", "", 0));                       /* stray bits */
	assert_false(parse_basic("Basic YW x", "a", "", 0));
	assert_false(parse_basic("Basic YTo-", "a", "", 0));                       /* URL alphabet */
	assert_false(parse_basic("Basic YTo= ", "a", "", 0));
	assert_false(parse_basic("Basic ====", "", "", 0));
}

int main(void)
{
	static const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_full),
		cmocka_unit_test(test_basic_auth),
		cmocka_unit_test(test_long_password),
		cmocka_unit_test(test_tls_only),
		cmocka_unit_test(test_auth_only),
		cmocka_unit_test(test_nothing_configured),
		cmocka_unit_test(test_inline_pem),
		cmocka_unit_test(test_relative_paths),
		cmocka_unit_test(test_null_getters),
		cmocka_unit_test(test_cipher_suites_each),
		cmocka_unit_test(test_config_unreadable),
		cmocka_unit_test(test_config_not_regular),
		cmocka_unit_test(test_alias_bounds),
		cmocka_unit_test(test_error_buffer),
		cmocka_unit_test(test_auth_lengths),
		cmocka_unit_test(test_auth_cost_independent_of_user),
		cmocka_unit_test(test_auth_threads),
		cmocka_unit_test(test_parse_basic),
		ERR_TEST(ec_unknown_key),
		ERR_TEST(ec_unknown_nested),
		ERR_TEST(ec_http_unknown),
		ERR_TEST(ec_rate_limit),
		ERR_TEST(ec_hash),
		ERR_TEST(ec_hash_length),
		ERR_TEST(ec_hash_cost),
		ERR_TEST(ec_hash_empty),
		ERR_TEST(ec_missing_key_file),
		ERR_TEST(ec_missing_cert_file),
		ERR_TEST(ec_only_auth_type),
		ERR_TEST(ec_both_cert),
		ERR_TEST(ec_client_auth),
		ERR_TEST(ec_client_auth_invalid),
		ERR_TEST(ec_client_ca),
		ERR_TEST(ec_min_version),
		ERR_TEST(ec_version_order),
		ERR_TEST(ec_cipher),
		ERR_TEST(ec_cipher_cross),
		ERR_TEST(ec_cipher_none),
		ERR_TEST(ec_curve),
		ERR_TEST(ec_cert_missing),
		ERR_TEST(ec_cert_dir),
		ERR_TEST(ec_cert_notpem),
		ERR_TEST(ec_cert_devnull),
		ERR_TEST(ec_cert_toolarge),
		ERR_TEST(ec_key_swapped),
		ERR_TEST(ec_key_is_cert),
		ERR_TEST(ec_inline_key),
		ERR_TEST(ec_duplicate),
		ERR_TEST(ec_duplicate_user),
		ERR_TEST(ec_type_seq),
		ERR_TEST(ec_type_users),
		ERR_TEST(ec_type_hash),
		ERR_TEST(ec_type_bool),
		ERR_TEST(ec_type_root),
		ERR_TEST(ec_key_seq),
		ERR_TEST(ec_nul),
		ERR_TEST(ec_header),
		ERR_TEST(ec_header_value),
		ERR_TEST(ec_header_ctl),
		ERR_TEST(ec_syntax),
		ERR_TEST(ec_syntax_flow),
		ERR_TEST(ec_utf8),
		ERR_TEST(ec_alias),
		ERR_TEST(ec_multi_doc),
		ERR_TEST(ec_deep),
		ERR_TEST(ec_alias_bomb),
		ERR_TEST(ec_alias_cycle),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
