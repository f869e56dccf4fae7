/* test_probe.c: --probe.targets-file (src/probe.c): the parser (a good file with every key; each
 * class of problem with its exact FILE:LINE:COLUMN; every problem of a file reported together, at
 * most PROBE_MAX_ERRORS and a count of the rest; hostile bytes escaped; YAML-level errors) and the
 * set of target scrapers (names looked up with their length; a target's bad mapping refuses the
 * set). The HTTP side (/probe?target=) is in test_http_probe.c. Fixtures: tests/fixtures/probe/. */
#include "testutil.h"

#include <sys/resource.h>

#include "probe.h"
#include "scrape.h"

#define DIR "tests/fixtures/probe/"

/* ASan reserves terabytes of address space: no RLIMIT_AS under it */
#if defined(__SANITIZE_ADDRESS__)
#define TU_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TU_ASAN 1
#endif
#endif

/* Load path; return the problems text (new), and the table through *out (NULL: not wanted). */
static char *load(const char *path, struct probe_targets **out)
{
	struct buf problems;
	buf_init(&problems, 0);
	struct probe_targets *t = probe_targets_load(path, &problems);
	if (out)
		*out = t;
	else
		probe_targets_free(t);
	buf_putc(&problems, '\0');
	return buf_steal(&problems, NULL);
}

static void expect_problems(const char *file, const char *want)
{
	struct probe_targets *t;
	char *got = load(file, &t);
	assert_null(t);
	if (strcmp(got, want))
		fail_msg("%s:\n got:\n%s\n want:\n%s", file, got, want);
	free(got);
}

static void test_good(void **state)
{
	(void)state;
	struct probe_targets *t;
	char *problems = load(DIR "good.yml", &t);
	assert_string_equal(problems, "");
	free(problems);
	assert_non_null(t);
	assert_int_equal(t->n, 3);
	const struct probe_target *a = &t->t[0], *b = &t->t[1], *c = &t->t[2];
	assert_string_equal(a->name, "clusterA");
	assert_string_equal(a->slurmctld_url, "http://ctl-a:6817");
	assert_string_equal(a->token_file, "/etc/slurm-exporter-shim/a.jwt");
	assert_string_equal(a->user, "slurm");
	assert_string_equal(a->mapping, "/etc/slurm-exporter-shim/a.json");
	assert_string_equal(a->rest_url, "unix:/run/slurmrestd.sock");
	assert_string_equal(a->rest_token_file, "/etc/slurm-exporter-shim/a-rest.jwt");
	assert_string_equal(a->rest_user, "slurmrest");
	assert_string_equal(b->name, "cluster-B.2_x");
	/* a sequence is joined with commas: the form --slurmctld.url takes several controllers in */
	assert_string_equal(b->slurmctld_url, "http://ctl-b1:6817,HTTPS://ctl-b2:6817");
	assert_null(b->token_file);
	assert_null(b->mapping);
	assert_null(b->rest_url);
	assert_string_equal(c->slurmctld_url, "http://c1:6817,http://c2:6817"); /* passed on as given */
	assert_null(c->token_file); /* "" and ~: not configured */
	assert_null(c->user);
	probe_targets_free(t);
}

static void test_unknown_key(void **state)
{
	(void)state;
	expect_problems(DIR "unknown-key.yml",
			DIR "unknown-key.yml:4:5: unknown key \"tokenfile\" in target \"a\" (expected slurmctld_url, token_file, user, mapping, slurmrestd_url, slurmrestd_token_file or slurmrestd_user)\n"
			DIR "unknown-key.yml:5:1: unknown key \"extra\" (expected targets)\n");
}

static void test_duplicates(void **state)
{
	(void)state;
	expect_problems(DIR "duplicate.yml",
			DIR "duplicate.yml:7:5: duplicate key \"user\" in target \"b\"\n"
			DIR "duplicate.yml:8:3: duplicate target \"a\" (first at line 2, column 3)\n"
			DIR "duplicate.yml:10:3: duplicate target \"b\" (first at line 4, column 3)\n"
			DIR "duplicate.yml:11:1: duplicate key \"targets\"\n");
}

static void test_wrong_types(void **state)
{
	(void)state;
	expect_problems(DIR "wrong-type.yml",
			DIR "wrong-type.yml:3:20: slurmctld_url must be a URL or a sequence of URLs, not a mapping\n"
			DIR "wrong-type.yml:4:17: token_file must be a string, not a sequence\n"
			DIR "wrong-type.yml:5:11: user must be a string, not a mapping\n"
			DIR "wrong-type.yml:6:6: target \"b\" must be a mapping, not a scalar\n"
			DIR "wrong-type.yml:10:7: mapping must be a string, not a sequence\n");
}

static void test_bad_urls(void **state)
{
	(void)state;
	expect_problems(DIR "bad-url.yml",
			DIR "bad-url.yml:3:20: slurmctld_url \"ctl-a:6817\" is not an http:// or https:// URL\n"
			DIR "bad-url.yml:5:20: slurmctld_url \"unix:/x\" is not an http:// or https:// URL\n"
			DIR "bad-url.yml:7:37: slurmctld_url \"ftp://c2\" is not an http:// or https:// URL\n"
			DIR "bad-url.yml:10:21: slurmrestd_url \"rest-d:6820\" is not an http:// or https:// URL or unix:/path/to/socket\n"
			DIR "bad-url.yml:12:20: slurmctld_url \"http://\" is not an http:// or https:// URL\n"
			DIR "bad-url.yml:14:20: slurmctld_url is an empty sequence\n"
			DIR "bad-url.yml:16:20: slurmctld_url \"http://g 1:6817\" is not an http:// or https:// URL\n");
}

static void test_missing_url(void **state)
{
	(void)state;
	expect_problems(DIR "missing-url.yml",
			DIR "missing-url.yml:2:3: target \"a\" has no slurmctld_url\n"
			DIR "missing-url.yml:4:3: target \"b\" has no slurmctld_url\n"
			DIR "missing-url.yml:6:19: slurmctld_url must be a URL, not null\n");
}

/* 64 bytes is the longest name; the 65-byte one is cut in the message. */
static void test_bad_names(void **state)
{
	(void)state;
	expect_problems(DIR "bad-name.yml",
			DIR "bad-name.yml:2:3: target name \"a/b\" is not [A-Za-z0-9_.-]+ of at most 64 bytes\n"
			DIR "bad-name.yml:4:3: target name \"\" is not [A-Za-z0-9_.-]+ of at most 64 bytes\n"
			DIR "bad-name.yml:6:3: target name \"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa...\" is not [A-Za-z0-9_.-]+ of at most 64 bytes\n"
			DIR "bad-name.yml:10:3: a target name must be a string, not a sequence\n");
}

/* Problems of every class in one file: all reported, in file order. */
static void test_several_together(void **state)
{
	(void)state;
	expect_problems(DIR "many.yml",
			DIR "many.yml:4:5: unknown key \"color\" in target \"a\" (expected slurmctld_url, token_file, user, mapping, slurmrestd_url, slurmrestd_token_file or slurmrestd_user)\n"
			DIR "many.yml:5:3: target \"b\" has no slurmctld_url\n"
			DIR "many.yml:7:3: duplicate target \"a\" (first at line 2, column 3)\n"
			DIR "many.yml:10:20: slurmctld_url \"gopher://c\" is not an http:// or https:// URL\n"
			DIR "many.yml:11:14: mapping must be a string, not a sequence\n");
}

/* More than PROBE_MAX_ERRORS problems: that many lines, then how many more. */
static void test_error_cap(void **state)
{
	(void)state;
	struct buf b;
	buf_init(&b, 0);
	buf_puts(&b, "targets:\n");
	for (int i = 0; i < 70; i++)
		buf_printf(&b, "  t%d: {user: x}\n", i);
	buf_putc(&b, '\0');
	tu_write(tu_tmp("probe-cap.yml"), b.data);
	buf_free(&b);
	char *got = load(tu_tmp("probe-cap.yml"), NULL);
	size_t lines = 0;
	for (const char *p = got; *p; p++)
		lines += *p == '\n';
	assert_int_equal(lines, PROBE_MAX_ERRORS + 1);
	assert_non_null(strstr(tu_untmp(got), "TMP/probe-cap.yml:51:3: target \"t49\" has no slurmctld_url\n"
				    "TMP/probe-cap.yml: 20 more problems\n"));
	free(got);
}

/* Bytes of the file in messages are escaped: no control byte, no byte over 0x7e, quotes escaped. */
static void test_hostile_bytes(void **state)
{
	(void)state;
	tu_write(tu_tmp("probe-hostile.yml"),
		 "targets:\n"
		 "  \"\\e[31mred\\n\\\"x\\xff\":\n"
		 "    slurmctld_url: http://a:6817\n"
		 "  ok:\n"
		 "    slurmctld_url: \"http://\\e]0;pwned\\a\"\n"
		 "    \"\\0key\": 1\n"
		 "    user: \"a\\0b\"\n");
	char *got = load(tu_tmp("probe-hostile.yml"), NULL);
	assert_string_equal(tu_untmp(got),
			    "TMP/probe-hostile.yml:2:3: target name \"\\x1b[31mred\\x0a\\\"x\\xc3\\xbf\" is not [A-Za-z0-9_.-]+ of at most 64 bytes\n"
			    "TMP/probe-hostile.yml:5:20: slurmctld_url \"http://\\x1b]0;pwned\\x07\" is not an http:// or https:// URL\n"
			    "TMP/probe-hostile.yml:6:5: unknown key \"\\x00key\" in target \"ok\" (expected slurmctld_url, token_file, user, mapping, slurmrestd_url, slurmrestd_token_file or slurmrestd_user)\n"
			    "TMP/probe-hostile.yml:7:11: user contains a NUL character\n");
	for (const unsigned char *p = (const unsigned char *)got; *p; p++)
		assert_true(*p == '\n' || (*p >= 0x20 && *p < 0x7f));
	free(got);
}

/* The YAML layer's problems, with their positions; an unreadable or empty file. */
static void test_yaml_level(void **state)
{
	(void)state;
	static const struct {
		const char *text, *want;
	} cases[] = {
		{ "targets:\n  a: [\n", ":3:1: YAML syntax error: did not find expected node content (while parsing a flow node started at line 3, column 1)\n" },
		{ "", ": no targets (expected \"targets:\" with NAME: {slurmctld_url: URL} under it)\n" },
		{ "- a\n", ":1:1: the targets file must be a mapping, not a sequence\n" },
		{ "targets: []\n", ":1:10: targets must be a mapping of target names, not a sequence\n" },
		{ "targets: {}\n", ":1:10: targets is empty\n" },
		{ "other: 1\n", ":1:1: unknown key \"other\" (expected targets)\n:1:1: no \"targets\" key\n" },
		{ "targets: {a: {slurmctld_url: http://a}}\n---\nx: 1\n", ":3:1: multiple YAML documents are not supported\n" },
		{ "targets: [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]\n", ":1:41: YAML nesting is deeper than 32 levels\n" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *path = tu_tmp("probe-yaml.yml");
		char want[600];
		tu_write(path, cases[i].text);
		char *got = load(path, NULL);
		/* every line starts with the path */
		snprintf(want, sizeof(want), "%s%s", path, cases[i].want);
		char *nl = strchr(want, '\n');
		if (nl && nl[1]) {
			char rest[300];
			snprintf(rest, sizeof(rest), "%s", nl + 1);
			snprintf(nl + 1, sizeof(want) - (size_t)(nl + 1 - want), "%s%s", path, rest);
		}
		if (strcmp(got, want))
			fail_msg("case %zu:\n got: %s\n want: %s", i, got, want);
		free(got);
	}
	char *got = load("/nonexistent/shimtest-targets.yml", NULL);
	assert_string_equal(got, "/nonexistent/shimtest-targets.yml: cannot read the targets file: No such file or directory\n");
	free(got);
}

/* Hardening A: the targets file is read with src/file_read.c. A FIFO used to block the start for
 * ever (alarm() makes a regression fail, not hang); a directory was "empty"; over 1 MiB is refused. */
static void test_not_regular(void **state)
{
	(void)state;
	char dir[256], path[300], want[400];
	snprintf(dir, sizeof(dir), "%s/probe-XXXXXX", tu_tmpdir());
	assert_non_null(mkdtemp(dir));
	alarm(20);
	snprintf(path, sizeof(path), "%s/fifo.yml", dir);
	assert_int_equal(mkfifo(path, 0600), 0);
	char *got = load(path, NULL);
	snprintf(want, sizeof(want), "%s: cannot read the targets file: is a FIFO, not a regular file\n", path);
	assert_string_equal(got, want);
	free(got);
	unlink(path);
	got = load(dir, NULL);
	snprintf(want, sizeof(want), "%s: cannot read the targets file: is a directory\n", dir);
	assert_string_equal(got, want);
	free(got);
	snprintf(path, sizeof(path), "%s/big.yml", dir);
	tu_write(path, "targets: {a: {slurmctld_url: http://a:6817}}\n");
	assert_int_equal(truncate(path, (1 << 20) + 1), 0);
	got = load(path, NULL);
	snprintf(want, sizeof(want), "%s: cannot read the targets file: is over 1048576 bytes\n", path);
	assert_string_equal(got, want);
	free(got);
	alarm(0);
	unlink(path);
	rmdir(dir);
}

/* A billion-laughs targets file: 150,000 aliases of a 250 KB slurmctld_url in 850 KB. probe.c joined the sequence
 * whole (37 GB; an out-of-memory abort). Loaded in a child with its address space capped (not under
 * ASan, which reserves terabytes), under alarm(): refused at the alias that passes the YAML layer's
 * bound, in well under a second, with little memory. */
static void test_alias_bomb(void **state)
{
	(void)state;
	const char *path = tu_tmp("probe-bomb.yml");
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs("targets:\n  a:\n    slurmctld_url: &u \"http://h/", f);
	for (int i = 0; i < 250000; i++)
		fputc('y', f);
	fputs("\"\n  b:\n    slurmctld_url: [*u", f);
	for (int i = 1; i < 150000; i++)
		fputs(", *u", f);
	fputs("]\n", f);
	fclose(f);
	int fd[2];
	assert_int_equal(pipe(fd), 0);
	struct timespec a, b;
	clock_gettime(CLOCK_MONOTONIC, &a);
	pid_t pid = fork();
	if (pid == 0) {
		close(fd[0]);
#ifndef TU_ASAN
		struct rlimit rl = { 2ul << 30, 2ul << 30 }; /* the fixed load needs a few MB (valgrind: some 100) */
		setrlimit(RLIMIT_AS, &rl);
#endif
		alarm(60);
		char *got = load(path, NULL);
		ssize_t n = write(fd[1], got, strlen(got));
		_exit(n == (ssize_t)strlen(got) ? 0 : 1);
	}
	close(fd[1]);
	char got[1000] = "";
	size_t len = 0;
	ssize_t n;
	while (len < sizeof(got) - 1 && (n = read(fd[0], got + len, sizeof(got) - 1 - len)) > 0)
		len += (size_t)n;
	got[len] = '\0';
	close(fd[0]);
	int st;
	struct rusage ru;
	assert_int_equal(wait4(pid, &st, 0, &ru), pid);
	clock_gettime(CLOCK_MONOTONIC, &b);
	double secs = (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) / 1e9;
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
		fail_msg("the load did not finish (status %d): killed or out of memory", st);
	assert_string_equal(tu_untmp(got), "TMP/probe-bomb.yml:5:81: YAML aliases expand the document to more than 4194304 bytes\n");
	assert_true(secs < 10);             /* about 10 ms; 10 s under valgrind */
	assert_true(ru.ru_maxrss < 256 * 1024); /* KiB: the 850 KB file and libyaml's events */
	unlink(path);
}

/* slurmctld_url's join is bounded as --slurmctld.url is: 8 controllers, 4095 bytes (a sequence of
 * aliases or one comma list); within the bounds the YAML layer passes, probe.c's walk stops there. */
static void test_url_bounds(void **state)
{
	(void)state;
	static const struct {
		const char *text, *want;
	} cases[] = {
		{ "targets:\n  a: {slurmctld_url: &u http://a:6817}\n  b: {slurmctld_url: [*u, *u, *u, *u, *u, *u, *u, *u, *u, *u]}\n",
		  ":3:22: slurmctld_url: more than 8 controllers\n" },
		{ "targets:\n  b: {slurmctld_url: \"http://1,http://2,http://3,http://4,http://5,http://6,http://7,http://8,http://9\"}\n",
		  ":2:22: slurmctld_url: more than 8 controllers\n" },
	};
	const char *path = tu_tmp("probe-urls.yml");
	char want[600];
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		tu_write(path, cases[i].text);
		char *got = load(path, NULL);
		snprintf(want, sizeof(want), "%s%s", path, cases[i].want);
		if (strcmp(got, want))
			fail_msg("case %zu:\n got: %s\n want: %s", i, got, want);
		free(got);
	}
	/* eight controllers and 4095 bytes: accepted; one byte more is not */
	for (int extra = 0; extra < 2; extra++) {
		struct buf b;
		buf_init(&b, 0);
		buf_puts(&b, "targets:\n  a:\n    slurmctld_url:\n      - http://");
		for (int i = 0; i < 4095 - 7 * 9 - 7 + extra; i++) /* the first URL, then 7 of ",http://N" */
			buf_putc(&b, 'h');
		for (int i = 2; i <= 8; i++)
			buf_printf(&b, "\n      - http://%d", i);
		buf_puts(&b, "\n");
		buf_putc(&b, '\0');
		tu_write(path, b.data);
		buf_free(&b);
		struct probe_targets *t;
		char *got = load(path, &t);
		if (extra) {
			snprintf(want, sizeof(want), "%s:4:7: slurmctld_url: the controller list is longer than 4095 bytes\n", path);
			assert_string_equal(got, want);
			assert_null(t);
		} else {
			assert_string_equal(got, "");
			assert_non_null(t);
			assert_int_equal(strlen(t->t[0].slurmctld_url), 4095);
			probe_targets_free(t);
		}
		free(got);
	}
}

/* Hardening B: a target's user goes into a request header as is: a CR, LF or other control byte
 * (header injection) or more than 255 bytes is refused at its position. */
static void test_user_header(void **state)
{
	(void)state;
	struct buf b;
	buf_init(&b, 0);
	buf_puts(&b, "targets:\n  a: {slurmctld_url: http://a, user: \"slurm\\r\\nX-Injected: 1\"}\n"
		     "  b: {slurmctld_url: http://b, slurmrestd_user: \"s\\tx\"}\n"
		     "  c: {slurmctld_url: http://c, user: ");
	for (int i = 0; i < 256; i++)
		buf_putc(&b, 'u');
	buf_puts(&b, "}\n  d: {slurmctld_url: http://d, user: \"ok-user\", slurmrestd_user: \"\\x7f\"}\n");
	buf_putc(&b, '\0');
	tu_write(tu_tmp("probe-user.yml"), b.data);
	buf_free(&b);
	char *got = load(tu_tmp("probe-user.yml"), NULL);
	assert_string_equal(tu_untmp(got),
			    "TMP/probe-user.yml:2:38: user holds a control character (byte 6)\n"
			    "TMP/probe-user.yml:3:49: slurmrestd_user holds a control character (byte 2)\n"
			    "TMP/probe-user.yml:4:38: user is longer than 255 bytes\n"
			    "TMP/probe-user.yml:5:66: slurmrestd_user holds a control character (byte 1)\n");
	free(got);
}

/* The set: names looked up with their length ("a\0b" is not "a"); a bad mapping refuses it. */
static void test_set(void **state)
{
	(void)state;
	struct probe_targets *t;
	struct scraper_config base = { .max_output = 1u << 20 };
	tu_write(tu_tmp("probe-set.yml"), "targets:\n  a: {slurmctld_url: http://127.0.0.1:1}\n"
						"  b: {slurmctld_url: http://127.0.0.1:1, mapping: /nonexistent/m.json}\n");
	free(load(tu_tmp("probe-set.yml"), &t));
	assert_non_null(t);
	assert_null(probe_set_new(t, &base, "mappings/prometheus-slurm-exporter.json")); /* b's mapping */
	tu_write(tu_tmp("probe-set.yml"), "targets:\n  a: {slurmctld_url: http://127.0.0.1:1}\n"
						"  bb: {slurmctld_url: http://127.0.0.1:1}\n");
	free(load(tu_tmp("probe-set.yml"), &t));
	struct probe_set *ps = probe_set_new(t, &base, "mappings/prometheus-slurm-exporter.json");
	assert_non_null(ps);
	assert_int_equal(probe_set_count(ps), 2);
	assert_string_equal(probe_set_name(ps, 1), "bb");
	struct scraper *a = probe_set_find(ps, "a", 1), *bb = probe_set_find(ps, "bb", 2);
	assert_non_null(a);
	assert_non_null(bb);
	assert_ptr_not_equal(a, bb);
	assert_null(probe_set_find(ps, "a\0b", 3));
	assert_null(probe_set_find(ps, "b", 1));
	assert_null(probe_set_find(ps, "", 0));
	assert_null(probe_set_find(ps, NULL, 0));
	assert_null(probe_set_find(NULL, "a", 1));
	probe_set_reload(ps);
	assert_ptr_equal(probe_set_find(ps, "a", 1), a); /* reloaded in place */
	probe_set_free(ps);
}

/* The daemon: a bad targets file is a usage error (exit 2) in every mode, all its problems on
 * stderr, before anything is fetched; a good one is checked and unused by --once; a target whose
 * mapping does not load stops a serving shim (exit 1). */
static void test_startup(void **state)
{
	(void)state;
	char *err = NULL, *out = NULL;
	char *bad[] = { (char *)tu_shim_bin(), "--probe.targets-file", DIR "many.yml", "--once", "--replay-dir",
			"tests/fixtures/slurm-25.11/01-idle", "--mapping.file", "mappings/prometheus-slurm-exporter.json",
			NULL };
	assert_int_equal(tu_run(bad, NULL, &out, NULL, &err), 2);
	assert_string_equal(out, "");
	assert_non_null(strstr(err, "many.yml:4:5: unknown key"));
	assert_non_null(strstr(err, "many.yml:11:14: mapping must be a string"));
	free(err);
	free(out);
	bad[2] = DIR "good.yml";
	assert_int_equal(tu_run(bad, NULL, &out, NULL, &err), 0);
	assert_non_null(strstr(out, "\nslurm_cpus_total "));
	free(err);
	free(out);
	tu_write(tu_tmp("probe-start.yml"), "targets: {a: {slurmctld_url: http://127.0.0.1:1, mapping: /nonexistent/m.json}}\n");
	char *serve[] = { (char *)tu_shim_bin(), "--probe.targets-file", (char *)tu_tmp("probe-start.yml"),
			  "--web.listen-address", "127.0.0.1:0", "--mapping.file", "mappings/prometheus-slurm-exporter.json",
			  NULL };
	assert_int_equal(tu_run(serve, NULL, NULL, NULL, &err), 1);
	assert_non_null(strstr(err, "target a: mapping: /nonexistent/m.json"));
	free(err);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_good),
		cmocka_unit_test(test_unknown_key),
		cmocka_unit_test(test_duplicates),
		cmocka_unit_test(test_wrong_types),
		cmocka_unit_test(test_bad_urls),
		cmocka_unit_test(test_missing_url),
		cmocka_unit_test(test_bad_names),
		cmocka_unit_test(test_several_together),
		cmocka_unit_test(test_error_cap),
		cmocka_unit_test(test_hostile_bytes),
		cmocka_unit_test(test_yaml_level),
		cmocka_unit_test(test_not_regular),
		cmocka_unit_test(test_alias_bomb),
		cmocka_unit_test(test_url_bounds),
		cmocka_unit_test(test_user_header),
		cmocka_unit_test(test_set),
		cmocka_unit_test(test_startup),
	};
	return cmocka_run_group_tests_name("probe", tests, NULL, NULL);
}
