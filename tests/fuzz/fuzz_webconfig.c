/* fuzz_webconfig.c: libFuzzer target for the web config loader (src/webconfig*.c, libyaml): the input
 * is written to web.yml in a private temporary directory (under $TMPDIR) and loaded from there, so
 * relative cert_file/key_file paths resolve inside it. At start the fixtures cert.pem, key.pem and
 * notpem.txt are copied into that directory from $FUZZ_WEBCONFIG_FIXTURES (default tests/webconfig)
 * when they exist, so configurations that name them can load. The directory is removed at exit.
 * webconfig_auth_is_valid is not called: it runs bcrypt, whose cost the input chooses (up to 31).
 * Ownership: the directory lives for the whole run; each loaded config is freed before returning. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "webconfig.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char dir[4096], cfg[4200];
static int ready;

static const char *const fixtures[] = { "cert.pem", "key.pem", "notpem.txt" };

static void copy_file(const char *from, const char *to)
{
	char chunk[65536];
	size_t n;
	FILE *in = fopen(from, "rb"), *out = NULL;
	if (!in)
		return;
	out = fopen(to, "wb");
	if (out)
		while ((n = fread(chunk, 1, sizeof(chunk), in)) > 0)
			if (fwrite(chunk, 1, n, out) != n)
				break;
	if (out)
		fclose(out);
	fclose(in);
}

static void cleanup(void)
{
	char p[4300];
	for (size_t i = 0; i < sizeof(fixtures) / sizeof(fixtures[0]); i++) {
		snprintf(p, sizeof(p), "%s/%s", dir, fixtures[i]);
		unlink(p);
	}
	unlink(cfg);
	rmdir(dir);
}

static void setup(void)
{
	const char *tmp = getenv("TMPDIR"), *fix = getenv("FUZZ_WEBCONFIG_FIXTURES");
	char from[4300], to[4300];
	snprintf(dir, sizeof(dir), "%s/fuzz-webconfig-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		abort();
	}
	snprintf(cfg, sizeof(cfg), "%s/web.yml", dir);
	for (size_t i = 0; i < sizeof(fixtures) / sizeof(fixtures[0]); i++) {
		snprintf(from, sizeof(from), "%s/%s", fix && *fix ? fix : "tests/webconfig", fixtures[i]);
		snprintf(to, sizeof(to), "%s/%s", dir, fixtures[i]);
		copy_file(from, to);
	}
	atexit(cleanup);
	ready = 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct webconfig *wc = NULL;
	char err[512];
	FILE *f;

	if (!ready)
		setup();
	f = fopen(cfg, "wb");
	if (!f || fwrite(data, 1, size, f) != size)
		abort();
	fclose(f);
	err[0] = 'x';
	if (webconfig_load(cfg, &wc, err, sizeof(err)) == 0) {
		if (!wc)
			abort();
		(void)webconfig_tls_cert_pem(wc);
		(void)webconfig_tls_key_pem(wc);
		(void)webconfig_tls_min_version(wc);
		(void)webconfig_tls_max_version(wc);
		(void)webconfig_tls_priorities(wc);
		(void)webconfig_has_users(wc);
		for (size_t i = 0; i <= webconfig_header_count(wc); i++) {
			const char *k, *v;
			webconfig_header(wc, i, &k, &v);
			if ((i < webconfig_header_count(wc)) != (k != NULL && v != NULL))
				abort();
		}
	} else if (wc || !memchr(err, '\0', sizeof(err)) || !err[0]) {
		abort();
	}
	webconfig_free(wc);
	return 0;
}
