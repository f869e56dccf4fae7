/* test_catalog.c: "say what changed upstream": the shipped table's native catalog
 * ("validated_on", written by tests/gen-catalog.py from the captures; tests/test_catalog.sh checks
 * it is what they give) and the comparison every scrape makes with it (src/catalog.c), through the
 * daemon's path (answers replayed with the table's filter, render_run, the body read back
 * strictly; the scraper for the log and the status page):
 *   - no false alarm: on every capture of tests/fixtures (25.11.7, 26.05.3, the 25.11 slurmrestd
 *     states and the config variants whose answers name nothing) no family is missing or unknown,
 *     and the closest release is the capture's own;
 *   - a family renamed in a copy of a capture (slurm_node_cpus_alloc -> slurm_node_cpus_allocated)
 *     is named both missing (the table reads it) and unknown, in the self metrics, in the status
 *     snapshot and page, and in one log line over two scrapes; gone again, one line says so;
 *   - a 26.05 family dropped (slurm_node_gpus) is missing although 25.11 never had it: the closest
 *     release is 26.05;
 *   - an endpoint not read, down, or naming no family says nothing;
 *   - 300 unknown families: 50 listed, 300 counted;
 *   - the loader's checks of "validated_on". */
#include "testutil.h"

#include "catalog.h"
#include "expo.h"
#include "payload.h"
#include "render.h"
#include "scrape.h"
#include "status.h"

struct run {
	struct payload *p[SRC_COUNT];
	struct render_result res;
	char *body;
};

/* dir's slurmctld answers (NULL entries of skip: every source), rendered with the shipped table. */
static void run_dir(const struct mapping *m, const char *dir, const int *skip, struct run *r)
{
	struct buf out;
	memset(r->p, 0, sizeof(r->p));
	for (int ep = 0; ep < SRC_NATIVE_COUNT; ep++)
		if (!skip || !skip[ep])
			r->p[ep] = payload_replay(dir, (enum source_id)ep, 1 << 28, 0, mapping_has_input, (void *)m);
	const struct render_in in = { .m = m, .p = (const struct payload *const *)r->p };
	buf_init(&out, 0);
	int status = render_run(&in, &out, &r->res);
	size_t len;
	r->body = buf_steal(&out, &len);
	if (status == 200) {
		struct expo served;
		expo_init(&served);
		assert_int_equal(expo_parse(&served, r->body, len, EXPO_STRICT), 0);
		expo_free(&served);
	}
}

static void free_run(struct run *r)
{
	for (int ep = 0; ep < SRC_COUNT; ep++)
		payload_unref(r->p[ep]);
	render_result_free(&r->res);
	free(r->body);
}

static size_t count_lines(const char *body, const char *prefix)
{
	size_t n = 0;
	for (const char *l = body; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL)
		n += !strncmp(l, prefix, strlen(prefix));
	return n;
}

static const struct {
	const char *dir, *release;
	int compared;
} captures[] = {
	{ "tests/fixtures/slurm-25.11/01-idle", "25.11", 1 },
	{ "tests/fixtures/slurm-25.11/02-busy-mix", "25.11", 1 },
	{ "tests/fixtures/slurm-25.11/03-drain-down-cancel", "25.11", 1 },
	{ "tests/fixtures/slurm-25.11/04-resumed-busy", "25.11", 1 },
	{ "tests/fixtures/slurm-25.11/config-variants/no-metricstype", "", 0 },
	{ "tests/fixtures/slurm-25.11/config-variants/privatedata-jobs", "", 0 },
	{ "tests/fixtures/slurm-25.11/config-variants/disable-http", "", 0 },
	{ "tests/fixtures/slurm-25.11-rest/R1-idle-drained", "25.11", 1 },
	{ "tests/fixtures/slurm-25.11-rest/R2-busy-mix-draining", "25.11", 1 },
	{ "tests/fixtures/slurm-25.11-rest/R4-downdrain-fail-maint-reserved", "25.11", 1 },
	{ "tests/fixtures/slurm-25.11-rest/R6-completing-epilog", "25.11", 1 },
	{ "tests/fixtures/slurm-25.11-rest/R7-planned-idle-gpu-resumed", "25.11", 1 },
	{ "tests/fixtures/slurm-25.11-rest/R9-idle-all-finished-future-resv", "25.11", 1 },
	{ "tests/fixtures/slurm-26.05/01-idle", "26.05", 1 },
	{ "tests/fixtures/slurm-26.05/01-idle-slurmdbd", "26.05", 1 },
	{ "tests/fixtures/slurm-26.05/02-busy-gpu", "26.05", 1 },
	{ "tests/fixtures/slurm-26.05/02-busy-gpu-no-slurmdbd", "26.05", 1 },
	{ "tests/fixtures/slurm-26.05/03-gpu-noacct-drain", "26.05", 1 },
	{ "tests/fixtures/slurm-26.05-rest/R1-idle-drained", "26.05", 1 },
	{ "tests/fixtures/slurm-26.05-rest/R2-busy-mix-draining", "26.05", 1 },
	{ "tests/fixtures/slurm-26.05-rest/R4-downdrain-fail-maint-reserved", "26.05", 1 },
	{ "tests/fixtures/slurm-26.05-rest/R6-completing-epilog", "26.05", 1 },
	{ "tests/fixtures/slurm-26.05-rest/R9-idle-all-finished-future-resv", "26.05", 1 },
	{ "tests/fixtures/slurm-26.05-rest/R10-planned-idle-gpu", "26.05", 1 },
};

/* No false alarm on any capture: nothing missing, nothing unknown, the capture's own release. */
static void test_captures_no_false_alarm(void **state)
{
	(void)state;
	struct mapping *m = tu_load_shipped();
	assert_int_equal(m->nreleases, 2);
	for (size_t i = 0; i < sizeof(captures) / sizeof(captures[0]); i++) {
		struct run r;
		run_dir(m, captures[i].dir, NULL, &r);
		const struct catalog_diff *d = &r.res.catalog;
		if (d->n[CATALOG_MISSING] || d->n[CATALOG_UNKNOWN] || d->compared != captures[i].compared ||
		    strcmp(d->release, captures[i].release)) {
			char line[1400];
			catalog_describe(d, line, sizeof(line));
			fail_msg("%s: compared %d, release '%s': %s", captures[i].dir, d->compared, d->release, line);
		}
		if (r.res.status == 200) {
			assert_int_equal(count_lines(r.body, "slurm_exporter_shim_native_family_"), 0);
			assert_non_null(strstr(r.body, "slurm_exporter_shim_native_catalog_differences{kind=\"missing\"} 0\n"));
			assert_non_null(strstr(r.body, "slurm_exporter_shim_native_catalog_differences{kind=\"unknown\"} 0\n"));
			char want[120];
			snprintf(want, sizeof(want), "slurm_exporter_shim_native_catalog_release{release=\"%s\"} 1\n",
				 captures[i].release);
			if (captures[i].compared)
				assert_non_null(strstr(r.body, want));
		}
		free_run(&r);
	}
	mapping_free(m);
}

/* A copy of capture src in a new temporary directory (its path in dir), with from replaced by to
 * in the file of endpoint ep (to "" with drop: the lines naming from left out). */
static void copy_capture(const char *src, char *dir, int ep, const char *from, const char *to, int drop)
{
	assert_non_null(mkdtemp(dir));
	for (int id = 0; id < SRC_NATIVE_COUNT; id++) {
		char path[600];
		size_t len;
		snprintf(path, sizeof(path), "%s/%s", src, sources[id].file);
		char *text = tu_slurp(path, &len);
		assert_non_null(text);
		struct buf b;
		buf_init(&b, 0);
		for (char *l = text; *l;) {
			char *e = strchr(l, '\n');
			size_t n = e ? (size_t)(e - l + 1) : strlen(l);
			char *hit = id == ep ? strstr(l, from) : NULL;
			size_t fl = strlen(from);
			if (hit && hit < l + n && !(hit[fl] == '_' || (hit[fl] >= 'a' && hit[fl] <= 'z'))) {
				if (!drop) {
					buf_append(&b, l, (size_t)(hit - l));
					buf_puts(&b, to);
					buf_append(&b, hit + fl, n - (size_t)(hit - l) - fl);
				}
			} else {
				buf_append(&b, l, n);
			}
			l += n;
		}
		snprintf(path, sizeof(path), "%s/%s", dir, sources[id].file);
		buf_putc(&b, '\0');
		tu_write(path, b.data);
		buf_free(&b);
		free(text);
	}
}

static void drop_capture(const char *dir)
{
	char cmd[600];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
}

/* Whether d lists kind k's family name on source ep. */
static int diff_has(const struct catalog_diff *d, enum catalog_kind k, int ep, const char *name)
{
	for (size_t i = 0; i < d->n[k] && i < CATALOG_LISTED_MAX; i++)
		if (d->fam[k][i].src == (enum source_id)ep && !strcmp(d->fam[k][i].name, name))
			return 1;
	return 0;
}

/* A copy of capture src edited as copy_capture says, with the shipped table loaded (edited_end frees). */
struct edited {
	struct mapping *m;
	char dir[256];
};

static void edited_start(struct edited *e, const char *src, int ep, const char *from, const char *to, int drop)
{
	e->m = tu_load_shipped();
	snprintf(e->dir, sizeof(e->dir), "%s/catalog-XXXXXX", tu_tmpdir());
	copy_capture(src, e->dir, ep, from, to, drop);
}

static void edited_end(struct edited *e, struct run *r)
{
	free_run(r);
	drop_capture(e->dir);
	mapping_free(e->m);
}

/* A renamed family: missing and unknown, in the self metrics and the result record. */
static void test_renamed_family(void **state)
{
	(void)state;
	struct edited e;
	edited_start(&e, "tests/fixtures/slurm-25.11/02-busy-mix", SRC_NODES, "slurm_node_cpus_alloc",
		     "slurm_node_cpus_allocated", 0);
	struct run r;
	run_dir(e.m, e.dir, NULL, &r);
	const struct catalog_diff *d = &r.res.catalog;
	assert_int_equal(d->n[CATALOG_MISSING], 1);
	assert_int_equal(d->n[CATALOG_UNKNOWN], 1);
	assert_true(diff_has(d, CATALOG_MISSING, SRC_NODES, "slurm_node_cpus_alloc"));
	assert_true(diff_has(d, CATALOG_UNKNOWN, SRC_NODES, "slurm_node_cpus_allocated"));
	assert_string_equal(d->release, "25.11");
	assert_non_null(strstr(r.body, "slurm_exporter_shim_native_family_missing{endpoint=\"nodes\",family=\"slurm_node_cpus_alloc\"} 1\n"));
	assert_non_null(strstr(r.body, "slurm_exporter_shim_native_family_unknown{endpoint=\"nodes\",family=\"slurm_node_cpus_allocated\"} 1\n"));
	assert_non_null(strstr(r.body, "slurm_exporter_shim_native_catalog_differences{kind=\"missing\"} 1\n"));
	assert_non_null(strstr(r.body, "slurm_exporter_shim_native_catalog_differences{kind=\"unknown\"} 1\n"));
	edited_end(&e, &r);
}

/* A family of 26.05 dropped: missing, though 25.11 never served it (the closest release is 26.05). */
static void test_dropped_2605_family(void **state)
{
	(void)state;
	struct edited e;
	edited_start(&e, "tests/fixtures/slurm-26.05/02-busy-gpu", SRC_NODES, "slurm_node_gpus", "", 1);
	struct run r;
	run_dir(e.m, e.dir, NULL, &r);
	const struct catalog_diff *d = &r.res.catalog;
	assert_string_equal(d->release, "26.05");
	assert_int_equal(d->n[CATALOG_MISSING], 1);
	assert_true(diff_has(d, CATALOG_MISSING, SRC_NODES, "slurm_node_gpus"));
	assert_int_equal(d->n[CATALOG_UNKNOWN], 0);
	edited_end(&e, &r);
}

/* An endpoint not read this scrape, or down, says nothing; one naming no family neither. */
static void test_unread_endpoint_says_nothing(void **state)
{
	(void)state;
	struct edited e;
	edited_start(&e, "tests/fixtures/slurm-25.11/02-busy-mix", SRC_NODES, "slurm_node_cpus_alloc",
		     "slurm_node_cpus_allocated", 0);
	struct run r;
	int skip[SRC_NATIVE_COUNT] = { [SRC_NODES] = 1 };
	run_dir(e.m, e.dir, skip, &r); /* nodes not read */
	assert_int_equal(r.res.catalog.compared, 1);
	assert_false(catalog_diff_has_any(&r.res.catalog));
	free_run(&r);
	char path[600];
	snprintf(path, sizeof(path), "%s/metrics_nodes.txt", e.dir);
	tu_write(path, "not an answer {\n"); /* nodes down */
	run_dir(e.m, e.dir, NULL, &r);
	assert_false(r.res.src[SRC_NODES].up);
	assert_false(catalog_diff_has_any(&r.res.catalog));
	free_run(&r);
	int only_ua[SRC_NATIVE_COUNT] = { 1, 1, 1, 1, 0 };
	run_dir(e.m, "tests/fixtures/slurm-25.11/01-idle", only_ua, &r); /* jobs-users-accts empty: nothing compared */
	assert_int_equal(r.res.catalog.compared, 0);
	assert_null(strstr(r.body, "slurm_exporter_shim_native_catalog_release{"));
	edited_end(&e, &r);
}

/* 300 unknown families: the first 50 listed, all counted (the page at its bound: test_nodeview). */
static void test_bounded(void **state)
{
	(void)state;
	struct edited e;
	edited_start(&e, "tests/fixtures/slurm-25.11/02-busy-mix", -1, "", "", 0);
	char path[600];
	snprintf(path, sizeof(path), "%s/metrics_scheduler.txt", e.dir);
	size_t len;
	char *text = tu_slurp(path, &len);
	struct buf b;
	buf_init(&b, 0);
	buf_append(&b, text, len);
	for (int i = 0; i < 300; i++)
		buf_printf(&b, "# TYPE slurm_new_family_%03d gauge\nslurm_new_family_%03d %d\n", i, i, i);
	buf_putc(&b, '\0');
	tu_write(path, b.data);
	buf_free(&b);
	free(text);
	struct run r;
	run_dir(e.m, e.dir, NULL, &r);
	assert_int_equal(r.res.catalog.n[CATALOG_UNKNOWN], 300);
	assert_int_equal(r.res.catalog.n[CATALOG_MISSING], 0);
	assert_int_equal(count_lines(r.body, "slurm_exporter_shim_native_family_unknown{"), CATALOG_LISTED_MAX);
	assert_non_null(strstr(r.body, "slurm_exporter_shim_native_catalog_differences{kind=\"unknown\"} 300\n"));
	assert_true(diff_has(&r.res.catalog, CATALOG_UNKNOWN, SRC_SCHEDULER, "slurm_new_family_049"));
	assert_false(diff_has(&r.res.catalog, CATALOG_UNKNOWN, SRC_SCHEDULER, "slurm_new_family_050"));
	edited_end(&e, &r);
}

/* Through the scraper as the daemon runs it: two scrapes log the change once, the status page names
 * both families; the capture restored, one line says so and the page says all is well. */
static void test_logged_once_and_on_status_page(void **state)
{
	(void)state;
	char dir[256], logf[256];
	snprintf(dir, sizeof(dir), "%s/catalog-XXXXXX", tu_tmpdir());
	copy_capture("tests/fixtures/slurm-25.11/02-busy-mix", dir, SRC_NODES, "slurm_node_cpus_alloc",
		     "slurm_node_cpus_allocated", 0);
	snprintf(logf, sizeof(logf), "%s/cataloglog-XXXXXX", tu_tmpdir());
	int fd = mkstemp(logf), saved = dup(2);
	assert_true(fd >= 0 && saved >= 0);
	struct scraper_config cfg = { .replay_dir = dir, .upstream[UPSTREAM_SLURMCTLD] = { .max_body = 1u << 28 } };
	struct scraper *sc = scraper_new(&cfg, tu_load_shipped());
	struct buf out;
	buf_init(&out, 0);
	dup2(fd, 2);
	for (int k = 0; k < 2; k++) {
		out.len = 0;
		assert_int_equal(scraper_run(sc, 5, &out), 200);
	}
	fflush(stderr);
	dup2(saved, 2);
	char *log = tu_slurp(logf, NULL);
	assert_non_null(log);
	static const char want[] = "native catalog: 1 families the table reads that slurmctld no longer serves: "
				   "nodes/slurm_node_cpus_alloc; 1 families slurmctld serves that no validated catalog "
				   "lists: nodes/slurm_node_cpus_allocated (the closest validated release: Slurm 25.11";
	const char *first = strstr(log, want);
	if (!first || strstr(first + 1, "native catalog:"))
		fail_msg("not logged once:\n%s", log);
	free(log);
	struct scraper_status *st = xcalloc(1, sizeof(*st));
	scraper_status(sc, st); /* the last answer's record */
	assert_non_null(st->res);
	assert_true(st->res->m->nreleases > 0);
	assert_int_equal(st->res->catalog.n[CATALOG_MISSING], 1);
	assert_int_equal(st->res->catalog.n[CATALOG_UNKNOWN], 1);
	struct status_page_info info = { .version = "0", .metrics_path = "/metrics", .mapping_file = NULL, .now = 1796121752, .native_passthrough = 0 };
	struct buf page;
	buf_init(&page, 0);
	status_page(&page, &info, st);
	buf_putc(&page, '\0');
	assert_non_null(strstr(page.data, "slurmctld changed: 1 families the table reads are no longer served, 1 served "
					  "are in no validated catalog (the closest: Slurm 25.11)"));
	assert_non_null(strstr(page.data, "<tr><td>nodes</td><td class=\"fam\">slurm_node_cpus_alloc</td><td class=\"err\">"
					  "no longer served (the table reads it)</td></tr>"));
	assert_non_null(strstr(page.data, "<tr><td>nodes</td><td class=\"fam\">slurm_node_cpus_allocated</td><td "
					  "class=\"err\">in no validated catalog</td></tr>"));
	buf_free(&page);
	scraper_status_put(sc, st);
	assert_null(st->res);

	/* slurmctld back to what 25.11 serves: one line, and the page says so */
	drop_capture(dir);
	char cmd[700];
	snprintf(cmd, sizeof(cmd), "mkdir -p '%s' && cp tests/fixtures/slurm-25.11/02-busy-mix/metrics_*.txt '%s'/", dir, dir);
	assert_int_equal(system(cmd), 0);
	assert_int_equal(ftruncate(fd, 0), 0);
	lseek(fd, 0, SEEK_SET);
	dup2(fd, 2);
	for (int k = 0; k < 2; k++) {
		out.len = 0;
		assert_int_equal(scraper_run(sc, 5, &out), 200);
	}
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	close(fd);
	log = tu_slurp(logf, NULL);
	unlink(logf);
	assert_non_null(log);
	first = strstr(log, "native catalog: slurmctld's answers name the families of the table's validated catalog of Slurm 25.11 again");
	if (!first || strstr(first + 1, "native catalog:"))
		fail_msg("not logged once:\n%s", log);
	free(log);
	scraper_status(sc, st);
	buf_init(&page, 0);
	status_page(&page, &info, st);
	buf_putc(&page, '\0');
	assert_non_null(strstr(page.data, "slurmctld's answers name the families of the validated catalog of Slurm 25.11"));
	buf_free(&page);
	scraper_status_put(sc, st);
	free(st);
	buf_free(&out);
	scraper_free(sc);
	drop_capture(dir);
}

/* The loader's checks of "validated_on", each with its message at the key. */
static void test_loader_checks(void **state)
{
	(void)state;
	static const struct {
		const char *catalog, *want;
	} cases[] = {
		{ "[]", "validated_on: must be an object of Slurm release" },
		{ "{\"25 11\": {}}", "validated_on: release \"25 11\": a release is 1 to 32" },
		{ "{\"25.11\": []}", "validated_on: \"25.11\" must be an object of endpoint" },
		{ "{\"25.11\": {\"cpus\": []}}", "validated_on: \"25.11\": unknown endpoint \"cpus\"" },
		{ "{\"25.11\": {\"nodes\": {}}}", "validated_on: \"25.11\": \"nodes\" must be an array of families" },
		{ "{\"25.11\": {\"nodes\": [1]}}", "validated_on: \"25.11\": \"nodes\"[0] must be an object" },
		{ "{\"25.11\": {\"nodes\": [{\"family\": \"slurm_node_cpus\", \"type\": \"gauge\", \"labels\": [], \"x\": 1}]}}",
		  "validated_on: \"25.11\": \"nodes\"[0]: unknown field \"x\"" },
		{ "{\"25.11\": {\"nodes\": [{\"family\": \"slurm_node_cpus\", \"type\": \"gage\", \"labels\": []}]}}",
		  "\"nodes\"[0]: \"type\" must be one of" },
		{ "{\"25.11\": {\"nodes\": [{\"family\": \"slurm_node_cpus\", \"type\": \"gauge\", \"labels\": [\"a-b\"]}]}}",
		  "\"nodes\"[0]: \"labels\"[0] must be a label name" },
		{ "{\"25.11\": {\"nodes\": [{\"family\": \"slurm_node_cpus\", \"type\": \"gauge\", \"labels\": [\"n\", \"n\"]}]}}",
		  "\"nodes\"[0]: label \"n\" listed twice" },
		{ "{\"25.11\": {\"nodes\": [{\"family\": \"1x\", \"type\": \"gauge\", \"labels\": []}]}}",
		  "\"nodes\"[0]: \"family\" must be a metric name" },
		{ "{\"25.11\": {\"jobs\": [{\"family\": \"slurm_node_cpus\", \"type\": \"gauge\", \"labels\": []}]}}",
		  "\"jobs\"[0]: slurm_node_cpus is read from /metrics/nodes, not /metrics/jobs" },
		{ "{\"25.11\": {\"nodes\": [{\"family\": \"slurm_node_cpus\", \"type\": \"gauge\", \"labels\": []}, "
		  "{\"family\": \"slurm_node_cpus\", \"type\": \"gauge\", \"labels\": []}]}}",
		  "\"25.11\": \"nodes\": slurm_node_cpus listed twice" },
		{ "{\"25.11\": {\"nodes\": [{\"family\": \"slurm_node_memory_bytes\", \"type\": \"gauge\", \"labels\": []}]}}",
		  "validated_on: the rows read slurm_node_cpus, which no release lists on /metrics/nodes" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char path[256], text[1200];
		snprintf(path, sizeof(path), "%s/catalog-map-XXXXXX", tu_tmpdir());
		int fd = mkstemp(path);
		assert_true(fd >= 0);
		close(fd);
		snprintf(text, sizeof(text), "{\n  \"validated_on\": %s,\n  \"metrics\": [{\"name\": \"a\", \"help\": \"h\", "
					     "\"type\": \"gauge\", \"expr\": \"sum(slurm_node_cpus)\", \"fidelity\": \"exact\"}]\n}\n",
			 cases[i].catalog);
		tu_write(path, text);
		struct buf pr;
		buf_init(&pr, 0);
		struct mapping *m = mapping_load(path, &pr);
		buf_putc(&pr, '\0');
		unlink(path);
		if (m || !strstr(pr.data, cases[i].want) || !strstr(pr.data, ":2:19: validated_on: "))
			fail_msg("case %zu: %s\nwant: %s", i, pr.data, cases[i].want);
		buf_free(&pr);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_captures_no_false_alarm),
		cmocka_unit_test(test_renamed_family),
		cmocka_unit_test(test_dropped_2605_family),
		cmocka_unit_test(test_unread_endpoint_says_nothing),
		cmocka_unit_test(test_bounded),
		cmocka_unit_test(test_logged_once_and_on_status_page),
		cmocka_unit_test(test_loader_checks),
	};
	return cmocka_run_group_tests_name("catalog", tests, NULL, NULL);
}
