/* test_compare.c: --compare-legacy, the migration check.
 * The compare module on hand-made pages (no network): equal, differs (exact and approximate),
 * only on one side, label sets with escapes, ignored Go client families, the bound on printed
 * series, the JSON form, the served form from the render's result record. Then the mode end to end: the old exporter's captured page served by
 * tests/fake_slurmctld --legacy, the shim on the same captured state (--replay-dir), for every state:
 * no exact family differs, and the exit is 0 exactly when no family disappears (the last line's
 * counts); 25.11 state 03 exits 1 with its 2 disappearing families counted and named; a page with one
 * exact family's value changed: exit 1 naming it; an unreachable URL, a 404, an unparsable page, an
 * empty 200 and a page without a sample: exit 2. With several schemas: which one the old exporter's
 * page speaks (compare_pick_schema), on vpenso's captured page and on rivosinc's and SckyzO's
 * (tests/fixtures/peers-25.11/P1-busy-mix, against small stand-in schemas named as theirs), two
 * schemas alike refused, --compare-legacy.schema naming one. A histogram's or summary's parts are its
 * one family, on hand-made pages and on SckyzO's captured page against its shipped schema. */
#include "testutil.h"

#include <jansson.h>

#include "compare.h"
#include "expo.h"
#include "mapping.h"
#include "render.h"

#define MAPPING "mappings/prometheus-slurm-exporter.json"
#define FID(fam, fid) "slurm_exporter_shim_row_fidelity{family=\"" fam "\",fidelity=\"" fid "\",upstream=\"slurmctld\"} 1\n"

static struct mapping *load(void)
{
	struct mapping *m = mapping_load(MAPPING, NULL);
	assert_non_null(m);
	return m;
}

/* What a render would have recorded for the shim page: the rows its FID() lines name, served with
 * their own form (slurmctld) and the fidelity the line gives; the others left out. */
static void served_rows(const struct mapping *m, const struct expo *shim, struct render_result *res)
{
	const struct expo_family *f = expo_find(shim, "slurm_exporter_shim_row_fidelity", 32);
	memset(res, 0, sizeof(*res));
	res->status = 200;
	res->nrows = m->nrows;
	res->rows = xcalloc(m->nrows + 1, sizeof(*res->rows));
	for (size_t i = 0; i < m->nrows; i++)
		res->rows[i] = (struct render_row){ .status = ROW_INPUT_DOWN, .form = m->rows[i].nforms - 1,
						    .fidelity = row_native(&m->rows[i])->fidelity };
	for (size_t k = 0; f && k < f->n; k++) {
		const struct expo_sample *e = &f->samples[k];
		char fam[200], fid[32];
		int a = labels_find(e->labels, e->nlabels, "family", 6), b = labels_find(e->labels, e->nlabels, "fidelity", 8);
		assert_true(a >= 0 && b >= 0);
		snprintf(fam, sizeof(fam), "%.*s", (int)e->labels[a].vlen, e->labels[a].value);
		snprintf(fid, sizeof(fid), "%.*s", (int)e->labels[b].vlen, e->labels[b].value);
		int i = mapping_row_index(m, fam);
		assert_true(i >= 0);
		res->rows[i].status = ROW_OK;
		res->rows[i].fidelity = !strcmp(fid, "exact") ? FID_EXACT : FID_APPROXIMATE;
	}
}

/* Compare two pages under mapping m (the shipped one when NULL): the exit status, the report in
 * *report (free it). res: the shim's result record (NULL: from the page's FID() lines). */
static int run_with(const struct mapping *m, const char *legacy, const char *shim, const struct render_result *res,
		    enum compare_format fmt, char **report)
{
	struct mapping *own = m ? NULL : load();
	struct expo le, se;
	struct render_result mine;
	struct buf out;
	m = m ? m : own;
	expo_init(&le);
	expo_init(&se);
	buf_init(&out, 0);
	assert_int_equal(expo_parse(&le, legacy, strlen(legacy), EXPO_STRICT), 0);
	assert_int_equal(expo_parse(&se, shim, strlen(shim), EXPO_STRICT), 0);
	if (!res)
		served_rows(m, &se, &mine);
	int rc = compare_families(m, 0, &le, &se, res ? res : &mine, fmt, &out);
	*report = buf_steal(&out, NULL);
	if (!res)
		render_result_free(&mine);
	expo_free(&le);
	expo_free(&se);
	mapping_free(own);
	return rc;
}

static int run(const char *legacy, const char *shim, enum compare_format fmt, char **report)
{
	return run_with(NULL, legacy, shim, NULL, fmt, report);
}

/* The report's line about family fam (a copy to free), or NULL. */
static char *line_of(const char *report, const char *fam)
{
	char key[200];
	snprintf(key, sizeof(key), " %s (legacy", fam);
	const char *p = strstr(report, key);
	if (!p)
		return NULL;
	while (p > report && p[-1] != '\n')
		p--;
	return strndup(p, strcspn(p, "\n"));
}

static void assert_line(const char *report, const char *fam, const char *want)
{
	char *l = line_of(report, fam);
	if (!l || strncmp(l, want, strlen(want)))
		fail_msg("%s: want '%s...', got '%s'\n%s", fam, want, l ? l : "(no line)", report);
	free(l);
}

static void test_equal(void **state)
{
	(void)state;
	char *r;
	assert_int_equal(run("slurm_cpus_alloc 3\n", "slurm_cpus_alloc 3\n" FID("slurm_cpus_alloc", "exact"), COMPARE_TABLE, &r), 0);
	assert_line(r, "slurm_cpus_alloc", "equal                  exact        slurmctld");
	/* a row the shim left out, absent from the old exporter too: agreement */
	assert_line(r, "slurm_cpus_total", "absent                 exact");
	assert_non_null(strstr(r, "every exact family agrees"));
	free(r);
}

static void test_exact_differs(void **state)
{
	(void)state;
	char *r;
	assert_int_equal(run("slurm_cpus_alloc 3\n", "slurm_cpus_alloc 4\n" FID("slurm_cpus_alloc", "exact"), COMPARE_TABLE, &r), 1);
	assert_line(r, "slurm_cpus_alloc", "differs                exact");
	assert_non_null(strstr(r, "    {} legacy 3 shim 4\n"));
	free(r);
}

/* An approximate form may differ: reported, with its note, without failing. */
static void test_approximate_differs(void **state)
{
	(void)state;
	char *r;
	assert_int_equal(run("slurm_cpus_idle 3\n", "slurm_cpus_idle 5\n" FID("slurm_cpus_idle", "approximate"), COMPARE_TABLE, &r), 0);
	assert_line(r, "slurm_cpus_idle", "differs (approximate)  approximate");
	assert_non_null(strstr(r, "    note: Native idle CPUs"));
	assert_non_null(strstr(r, ": 0 exact families differ, 1 approximate one differs, 0 disappear "));
	free(r);
}

/* Label sets exactly: a series on one side only is a difference; escapes decoded and printed back. */
static void test_label_sets(void **state)
{
	(void)state;
	char *r;
	const char *legacy = "slurm_account_jobs_running{account=\"a\\\"b\"} 1\nslurm_account_jobs_running{account=\"c\"} 2\n";
	const char *shim = "slurm_account_jobs_running{account=\"c\"} 2\nslurm_account_jobs_running{account=\"d\"} 7\n"
		FID("slurm_account_jobs_running", "exact");
	assert_int_equal(run(legacy, shim, COMPARE_TABLE, &r), 1);
	assert_line(r, "slurm_account_jobs_running", "differs                exact        slurmctld  slurm_account_jobs_running (legacy 2 series, shim 2)");
	assert_non_null(strstr(r, "    {account=\"a\\\"b\"} legacy 1 shim -\n"));
	assert_non_null(strstr(r, "    {account=\"d\"} legacy - shim 7\n"));
	assert_null(strstr(r, "account=\"c\"}"));
	free(r);
}

/* The exact family the shim did not serve while the old exporter did: a failure. */
static void test_only_legacy(void **state)
{
	(void)state;
	char *r;
	assert_int_equal(run("slurm_cpus_total 8\n", "", COMPARE_TABLE, &r), 1);
	assert_line(r, "slurm_cpus_total", "only-legacy            exact");
	assert_non_null(strstr(r, ": 0 exact families differ, 0 approximate ones differ, 1 disappears "));
	free(r);
	assert_int_equal(run("", "slurm_cpus_total 8\n" FID("slurm_cpus_total", "exact"), COMPARE_TABLE, &r), 1);
	assert_line(r, "slurm_cpus_total", "only-shim              exact");
	free(r);
}

/* go_*, process_*, promhttp_* are the Go client's; a family no row serves disappears: a failure. */
static void test_other_families(void **state)
{
	(void)state;
	char *r;
	const char *legacy = "go_goroutines 9\nprocess_open_fds 4\npromhttp_metric_handler_requests_total{code=\"200\"} 1\n"
			     "slurm_site_special 1\n";
	assert_int_equal(run(legacy, "", COMPARE_TABLE, &r), 1);
	assert_null(strstr(r, "go_goroutines"));
	assert_null(strstr(r, "process_open_fds"));
	assert_null(strstr(r, "promhttp_"));
	assert_line(r, "slurm_site_special", "only-legacy            none         -");
	assert_non_null(strstr(r, "no row of the mapping serves this family"));
	assert_non_null(strstr(r, ", 1 disappears (the old exporter serves it, the shim does not)\n"));
	free(r);
	/* an approximate family the shim leaves out disappears too (a panel goes blank): not a pass */
	assert_int_equal(run("slurm_cpus_idle 3\n", "", COMPARE_TABLE, &r), 1);
	assert_line(r, "slurm_cpus_idle", "only-legacy            approximate");
	free(r);
}

/* The form a row was served with comes from the render's result record: a row served with its
 * second preferred form (slurmrestd, approximate) is reported with that form's fidelity, upstream
 * and note, whatever the page says (it used to be guessed from slurm_exporter_shim_row_fidelity:
 * the first slurmrestd form's note, here none); one served with its own expression, with the row's. */
static void test_served_form_from_result(void **state)
{
	(void)state;
	const char *path = tu_tmp("compare-forms.json");
	tu_write(path, "{\"metrics\": [{\"name\": \"jobs\", \"help\": \"h\", \"type\": \"gauge\", \"fidelity\": \"approximate\","
		       " \"note\": \"the native note\", \"expr\": \"slurm_jobs\", \"prefer\": ["
		       "{\"expr\": \"sum(slurmrestd_share_level)\", \"fidelity\": \"exact\"},"
		       "{\"expr\": \"sum(slurmrestd_share_fairshare) * 4\", \"fidelity\": \"approximate\", \"note\": \"the second form\"}]}]}");
	struct mapping *m = mapping_load(path, NULL);
	assert_non_null(m);
	struct render_row row = { .status = ROW_OK, .form = 1, .fidelity = FID_APPROXIMATE };
	struct render_result res = { .status = 200, .nrows = 1, .rows = &row };
	char *r;
	assert_int_equal(run_with(m, "jobs 1\n", "jobs 2\n", &res, COMPARE_TABLE, &r), 0);
	assert_line(r, "jobs", "differs (approximate)  approximate  slurmrestd");
	assert_non_null(strstr(r, "    note: the second form\n"));
	free(r);
	row.form = 2; /* the native form, last */
	assert_int_equal(run_with(m, "jobs 1\n", "jobs 2\n", &res, COMPARE_TABLE, &r), 0);
	assert_line(r, "jobs", "differs (approximate)  approximate  slurmctld");
	assert_non_null(strstr(r, "    note: the native note\n"));
	free(r);
	/* left out (a 503 has no rows): not served, whatever the page holds; the family disappears */
	res.rows = NULL;
	res.nrows = 0;
	assert_int_equal(run_with(m, "jobs 1\n", "jobs 2\n", &res, COMPARE_TABLE, &r), 1);
	assert_line(r, "jobs", "only-legacy");
	assert_non_null(strstr(r, ", 1 disappears ("));
	free(r);
	mapping_free(m);
}

/* A table with one unavailable histogram row "cmd_seconds" (its own file). */
static struct mapping *histogram_table(void)
{
	const char *path = tu_tmp("compare-histogram.json");
	tu_write(path, "{\"metrics\": [{\"name\": \"cmd_seconds\", \"help\": \"h\", \"type\": \"histogram\","
		       " \"fidelity\": \"unavailable\", \"note\": \"the peer's own runs\"}]}");
	struct mapping *m = mapping_load(path, NULL);
	assert_non_null(m);
	return m;
}

#define HISTOGRAM_PAGE                                                                              \
	"# HELP cmd_seconds Duration.\n# TYPE cmd_seconds histogram\n"                                \
	"cmd_seconds_bucket{command=\"sinfo\",le=\"0.1\"} 1\ncmd_seconds_bucket{command=\"sinfo\",le=\"+Inf\"} 2\n" \
	"cmd_seconds_sum{command=\"sinfo\"} 0.25\ncmd_seconds_count{command=\"sinfo\"} 2\n"

/* A histogram on the old exporter's page is its unavailable row's one family: the series of its
 * _bucket, _sum and _count counted there, each difference naming its part; not a difference, and
 * its parts are no families of their own. */
static void test_histogram_is_its_row(void **state)
{
	(void)state;
	struct mapping *m = histogram_table();
	struct render_row row = { .status = ROW_UNAVAILABLE, .fidelity = FID_UNAVAILABLE };
	struct render_result res = { .status = 200, .nrows = 1, .rows = &row };
	char *r;
	assert_int_equal(run_with(m, HISTOGRAM_PAGE, "", &res, COMPARE_TABLE, &r), 1);
	assert_line(r, "cmd_seconds", "only-legacy            unavailable  -          cmd_seconds (legacy 4 series, shim 0)");
	assert_non_null(strstr(r, "    _sum{command=\"sinfo\"} legacy 0.25 shim -\n"));
	assert_non_null(strstr(r, "    _bucket{command=\"sinfo\",le=\"0.1\"} legacy 1 shim -\n"));
	assert_null(strstr(r, "cmd_seconds_bucket"));
	assert_non_null(strstr(r, "1 families compared: 0 exact families differ, 0 approximate ones differ, 1 disappears "));
	free(r);
	mapping_free(m);
}

/* A histogram no row names is one family too, by its own name, not three. */
static void test_histogram_without_row(void **state)
{
	(void)state;
	char *r;
	assert_int_equal(run(HISTOGRAM_PAGE, "", COMPARE_TABLE, &r), 1);
	assert_line(r, "cmd_seconds", "only-legacy            none         -          cmd_seconds (legacy 4 series, shim 0)");
	assert_null(strstr(r, "cmd_seconds_sum ("));
	assert_null(strstr(r, "cmd_seconds_count ("));
	assert_non_null(strstr(r, ", 1 disappears ("));
	free(r);
}

/* A summary's quantiles, _sum and _count are one family; a family named like a part but of no
 * histogram or summary (no # TYPE line making it one) is its own. */
static void test_summary_and_lookalike(void **state)
{
	(void)state;
	char *r;
	const char *page = "# TYPE rpc_seconds summary\nrpc_seconds{quantile=\"0.5\"} 0.1\nrpc_seconds_sum 3\n"
			   "rpc_seconds_count 9\nslurm_jobs_count 4\n";
	assert_int_equal(run(page, "", COMPARE_TABLE, &r), 1);
	assert_line(r, "rpc_seconds", "only-legacy            none         -          rpc_seconds (legacy 3 series, shim 0)");
	assert_line(r, "slurm_jobs_count", "only-legacy            none         -          slurm_jobs_count (legacy 1 series");
	assert_null(strstr(r, "rpc_seconds_sum ("));
	free(r);
}

/* The JSON form names a histogram's part in each of its differences. */
static void test_histogram_json_part(void **state)
{
	(void)state;
	struct mapping *m = histogram_table();
	char *r;
	assert_int_equal(run_with(m, HISTOGRAM_PAGE, "", NULL, COMPARE_JSON, &r), 1);
	json_error_t err;
	json_t *doc = json_loads(r, 0, &err);
	if (!doc)
		fail_msg("not JSON: %s\n%s", err.text, r);
	json_t *fam = json_array_get(json_object_get(doc, "families"), 0);
	assert_string_equal(json_string_value(json_object_get(fam, "family")), "cmd_seconds");
	assert_string_equal(json_string_value(json_object_get(fam, "fidelity")), "unavailable");
	assert_int_equal(json_integer_value(json_object_get(fam, "legacy_series")), 4);
	json_t *d = json_array_get(json_object_get(fam, "differences"), 0);
	assert_string_equal(json_string_value(json_object_get(d, "part")), "_count");
	assert_int_equal(json_array_size(json_object_get(doc, "families")), 1);
	json_decref(doc);
	free(r);
	mapping_free(m);
}

/* At most COMPARE_MAX_DIFFS series printed per family; the rest counted. */
static void test_bounded(void **state)
{
	(void)state;
	struct buf legacy, shim;
	buf_init(&legacy, 0);
	buf_init(&shim, 0);
	for (int i = 0; i < 12; i++) {
		buf_printf(&legacy, "slurm_user_jobs_suspended{user=\"u%02d\"} %d\n", i, i);
		buf_printf(&shim, "slurm_user_jobs_suspended{user=\"u%02d\"} %d\n", i, i + 1);
	}
	buf_puts(&shim, FID("slurm_user_jobs_suspended", "exact"));
	char *r, *l = buf_steal(&legacy, NULL), *s = buf_steal(&shim, NULL); /* NUL-terminated */
	assert_int_equal(run(l, s, COMPARE_TABLE, &r), 1);
	assert_non_null(strstr(r, "    {user=\"u04\"} legacy 4 shim 5\n"));
	assert_null(strstr(r, "{user=\"u05\"}"));
	assert_non_null(strstr(r, "    ... 7 more differing series\n"));
	free(r);
	free(l);
	free(s);
}

static void test_json(void **state)
{
	(void)state;
	char *r;
	assert_int_equal(run("slurm_cpus_alloc 3\nslurm_cpus_idle NaN\n",
			     "slurm_cpus_alloc 4\n" FID("slurm_cpus_alloc", "exact") FID("slurm_cpus_idle", "approximate")
			     "slurm_cpus_idle 1\n", COMPARE_JSON, &r), 1);
	json_error_t err;
	json_t *doc = json_loads(r, 0, &err);
	if (!doc)
		fail_msg("not JSON: %s\n%s", err.text, r);
	assert_true(json_is_false(json_object_get(doc, "exact_agree")));
	assert_true(json_is_false(json_object_get(doc, "passed")));
	assert_int_equal(json_integer_value(json_object_get(doc, "exact_differing")), 1);
	assert_int_equal(json_integer_value(json_object_get(doc, "approximate_differing")), 1);
	assert_int_equal(json_integer_value(json_object_get(doc, "disappearing")), 0);
	json_t *fams = json_object_get(doc, "families"), *alloc = NULL, *idle = NULL;
	for (size_t i = 0; i < json_array_size(fams); i++) {
		const char *name = json_string_value(json_object_get(json_array_get(fams, i), "family"));
		if (!strcmp(name, "slurm_cpus_alloc"))
			alloc = json_array_get(fams, i);
		if (!strcmp(name, "slurm_cpus_idle"))
			idle = json_array_get(fams, i);
	}
	assert_non_null(alloc);
	assert_non_null(idle);
	assert_string_equal(json_string_value(json_object_get(alloc, "result")), "differs");
	json_t *d = json_array_get(json_object_get(alloc, "differences"), 0);
	assert_true(json_number_value(json_object_get(d, "legacy")) == 3);
	assert_true(json_number_value(json_object_get(d, "shim")) == 4);
	assert_string_equal(json_string_value(json_object_get(idle, "fidelity")), "approximate");
	d = json_array_get(json_object_get(idle, "differences"), 0);
	assert_string_equal(json_string_value(json_object_get(d, "legacy")), "NaN");
	json_decref(doc);
	free(r);
}

/* ------------------------------------------------------------------ the mode, end to end */

struct fake {
	pid_t pid;
	unsigned port;
	char portfile[192];
};

/* The running fake, so that a failed assertion (which skips the test's fake_stop) still gets it
 * stopped by the teardown: a fake left running would hold the test's output pipe open. */
static pid_t running_fake;

static int stop_fake(void **state)
{
	(void)state;
	if (running_fake > 0) {
		kill(running_fake, SIGTERM);
		waitpid(running_fake, NULL, 0);
	}
	running_fake = 0;
	return 0;
}

/* fake_slurmctld serving legacy at /metrics on a free port. */
static void fake_start(struct fake *f, const char *dir, const char *legacy)
{
	const char *bin = getenv("FAKE_SLURMCTLD") ? getenv("FAKE_SLURMCTLD") : "build/tests/fake_slurmctld";
	snprintf(f->portfile, sizeof(f->portfile), "%s", tu_tmp("cmp.port"));
	unlink(f->portfile);
	char *argv[] = { (char *)bin, "--port", "0", "--port-file", f->portfile, "--dir", (char *)dir,
			 "--legacy", (char *)legacy, NULL };
	f->pid = fork();
	if (f->pid == 0) {
		execv(argv[0], argv);
		_exit(127);
	}
	running_fake = f->pid;
	for (int i = 0; i < 400; i++) { /* up to 10 s for a loaded machine */
		char *s = tu_slurp(f->portfile, NULL);
		if (s && (f->port = (unsigned)atoi(s)) > 0) {
			free(s);
			return;
		}
		free(s);
		tu_sleep_ms(25);
	}
	fail_msg("fake_slurmctld does not start");
}

static void fake_stop(struct fake *f)
{
	kill(f->pid, SIGTERM);
	waitpid(f->pid, NULL, 0);
	running_fake = 0;
	unlink(f->portfile);
}

/* --compare-legacy http://127.0.0.1:port/metrics on a replayed state, extra flags (NULL-terminated). */
static int compare(unsigned port, const char *state_dir, char **out, ...)
{
	char url[64];
	snprintf(url, sizeof(url), "http://127.0.0.1:%u/metrics", port);
	char *argv[24] = { (char *)tu_shim_bin(), "--compare-legacy", url, "--replay-dir", (char *)state_dir,
			   "--mapping.file", MAPPING, "--log.level", "error" };
	int n = 9;
	va_list ap;
	va_start(ap, out);
	for (char *a; (a = va_arg(ap, char *)) && n < 23;)
		argv[n++] = a;
	va_end(ap);
	argv[n] = NULL;
	char *err = NULL;
	int rc = tu_run(argv, NULL, out, NULL, &err);
	free(err);
	return rc;
}

static const char *const states[] = {
	"slurm-25.11/01-idle", "slurm-25.11/02-busy-mix", "slurm-25.11/03-drain-down-cancel", "slurm-25.11/04-resumed-busy",
	"slurm-26.05/01-idle", "slurm-26.05/01-idle-slurmdbd", "slurm-26.05/02-busy-gpu",
	"slurm-26.05/02-busy-gpu-no-slurmdbd", "slurm-26.05/03-gpu-noacct-drain",
	"slurm-25.11-rest/R1-idle-drained", "slurm-25.11-rest/R2-busy-mix-draining",
	"slurm-25.11-rest/R4-downdrain-fail-maint-reserved", "slurm-25.11-rest/R6-completing-epilog",
	"slurm-25.11-rest/R7-planned-idle-gpu-resumed", "slurm-25.11-rest/R9-idle-all-finished-future-resv",
};

/* Every captured state agrees on every exact family (as test_golden checks row by row), and exits 0
 * exactly when no family disappears: on slurmctld alone the old exporter's slurm_queue_pending_dependency
 * (and more) has no native source, so it exits 1; with slurmrestd nothing disappears. The REST states
 * twice: slurmctld alone, and with slurmrestd's answers (its preferred forms, with --gpus-acct against
 * the old exporter's -gpus-acct page). */
static void test_states_agree(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(states) / sizeof(states[0]); i++) {
		int rest = strstr(states[i], "-rest/") != NULL;
		for (int with_rest = 0; with_rest <= rest; with_rest++) {
			char dir[256], legacy[300];
			snprintf(dir, sizeof(dir), "tests/fixtures/%s", states[i]);
			snprintf(legacy, sizeof(legacy), "%s/legacy_exporter_metrics%s.txt", dir, with_rest ? "_gpus" : "");
			struct fake f;
			fake_start(&f, dir, legacy);
			char *out = NULL;
			int rc = with_rest ? compare(f.port, dir, &out, "--slurmrestd.url", "http://127.0.0.1:1",
						     "--slurmrestd.jobs", "--gpus-acct", NULL) :
					     compare(f.port, dir, &out, NULL);
			fake_stop(&f);
			int gone = out && !strstr(out, ", 0 disappear (");
			if (!out || !strstr(out, "families compared: 0 exact families differ, ") || rc != (gone ? 1 : 0) ||
			    (with_rest && gone) || (!gone && !strstr(out, "every exact family agrees and none disappears")))
				fail_msg("%s%s: exit %d\n%s", states[i], with_rest ? " with slurmrestd" : "", rc, out ? out : "");
			if (with_rest && !strstr(out, " slurmrestd "))
				fail_msg("%s: no family served from slurmrestd\n%s", states[i], out);
			free(out);
		}
	}
}

/* One exact family's value changed in the old exporter's page: exit 1, that family named. */
static void test_altered_page(void **state)
{
	(void)state;
	const char *dir = "tests/fixtures/slurm-25.11/02-busy-mix";
	char path[300], altered[256];
	snprintf(altered, sizeof(altered), "%s/cmp-legacy-XXXXXX", tu_tmpdir());
	snprintf(path, sizeof(path), "%s/legacy_exporter_metrics.txt", dir);
	char *text = tu_slurp(path, NULL), *p = strstr(text, "\nslurm_cpus_total ");
	assert_non_null(p);
	p += strlen("\nslurm_cpus_total ");
	struct buf b;
	buf_init(&b, 0);
	buf_append(&b, text, (size_t)(p - text));
	buf_printf(&b, "%s", "99999");
	buf_puts(&b, p + strcspn(p, "\n"));
	int fd = mkstemp(altered);
	assert_true(fd >= 0 && write(fd, b.data, b.len) == (ssize_t)b.len);
	close(fd);
	struct fake f;
	fake_start(&f, dir, altered);
	char *out = NULL;
	assert_int_equal(compare(f.port, dir, &out, NULL), 1);
	assert_line(out, "slurm_cpus_total", "differs                exact");
	assert_non_null(strstr(out, "    {} legacy 99999 shim "));
	assert_non_null(strstr(out, ": 1 exact family differs, "));
	free(out);
	/* the JSON form says the same */
	assert_int_equal(compare(f.port, dir, &out, "--compare-legacy.format", "json", NULL), 1);
	assert_non_null(strstr(out, "\"exact_differing\": 1"));
	free(out);
	fake_stop(&f);
	unlink(altered);
	buf_free(&b);
	free(text);
}

/* 25.11 state 03 (a node drained, one down, jobs cancelled), slurmctld alone: nothing exact differs,
 * but two families the old exporter served disappear (slurm_partition_cpus_other: sinfo's "other" CPUs
 * of DOWN/DRAINED nodes, which the native metrics leave out at 0; slurm_queue_pending_dependency: no
 * native per-reason count): exit 1, both counted on the last line and in the JSON, each reported. */
static void test_disappearing(void **state)
{
	(void)state;
	const char *dir = "tests/fixtures/slurm-25.11/03-drain-down-cancel";
	char legacy[300];
	snprintf(legacy, sizeof(legacy), "%s/legacy_exporter_metrics.txt", dir);
	struct fake f;
	fake_start(&f, dir, legacy);
	char *out = NULL;
	assert_int_equal(compare(f.port, dir, &out, NULL), 1);
	const char *last = out + strlen(out) - 1;
	while (last > out && last[-1] != '\n')
		last--;
	if (strcmp(last, "62 families compared: 0 exact families differ, 9 approximate ones differ, 2 disappear (the old "
			 "exporter serves them, the shim does not)\n"))
		fail_msg("last line: %s", last);
	assert_line(out, "slurm_partition_cpus_other", "only-legacy            approximate");
	assert_line(out, "slurm_queue_pending_dependency", "only-legacy            unavailable");
	free(out);
	assert_int_equal(compare(f.port, dir, &out, "--compare-legacy.format", "json", NULL), 1);
	assert_non_null(strstr(out, "\"disappearing\": 2"));
	assert_non_null(strstr(out, "\"exact_agree\": true"));
	assert_non_null(strstr(out, "\"passed\": false"));
	free(out);
	fake_stop(&f);
}

/* The old exporter cannot be read: exit 2, whether it is down, answers 404 or sends no exposition. */
static void test_unreadable(void **state)
{
	(void)state;
	const char *dir = "tests/fixtures/slurm-25.11/01-idle";
	struct fake f;
	fake_start(&f, dir, "/nonexistent/legacy.txt"); /* /metrics: 404 */
	char *out = NULL;
	assert_int_equal(compare(f.port, dir, &out, NULL), 2);
	free(out);
	fake_stop(&f);
	fake_start(&f, dir, "tests/fixtures/slurm-25.11-rest/R1-idle-drained/rest_diag.json"); /* not an exposition */
	assert_int_equal(compare(f.port, dir, &out, NULL), 2);
	free(out);
	fake_stop(&f);
	assert_int_equal(compare(f.port, dir, &out, NULL), 2); /* nothing listens there any more */
	free(out);
}

/* An empty 200 and a page of comments only are no exporter's page: exit 2 (the URL is wrong), not
 * 1 (every family "differs"). */
static void test_empty_page(void **state)
{
	(void)state;
	const char *dir = "tests/fixtures/slurm-25.11/01-idle";
	static const char *const pages[] = { "", "# HELP is no family without a TYPE or a sample\n\n" };
	for (size_t i = 0; i < sizeof(pages) / sizeof(pages[0]); i++) {
		char path[256];
		snprintf(path, sizeof(path), "%s/cmp-empty-XXXXXX", tu_tmpdir());
		int fd = mkstemp(path);
		size_t n = strlen(pages[i]);
		assert_true(fd >= 0 && write(fd, pages[i], n) == (ssize_t)n);
		close(fd);
		struct fake f;
		fake_start(&f, dir, path);
		char *out = NULL;
		int rc = compare(f.port, dir, &out, NULL);
		fake_stop(&f);
		unlink(path);
		if (rc != 2)
			fail_msg("page %zu: exit %d, want 2\n%s", i, rc, out ? out : "");
		free(out);
	}
}


/* ------------------------------------------------------------------ which schema the old exporter speaks */

#define PEERS "tests/fixtures/peers-25.11/P1-busy-mix/"
#define RIVOSINC tu_tmp("cmp-schemas/rivosinc-slurm-exporter.json")
#define SCKYZO tu_tmp("cmp-schemas/sckyzo-slurm-exporter.json")
#define TWIN tu_tmp("cmp-schemas/rivosinc-twin.json")

/* Small stand-ins for the peers' schemas, named as theirs: two rows each, of names only that peer
 * prints (unavailable: the comparison needs no expression), the SckyzO one with every vpenso row name
 * too (its fork adds families to vpenso's: it must not be taken for vpenso's page). */
static void write_schemas(void)
{
#define ROW "{\"name\": \"%s\", \"help\": \"h\", \"type\": \"gauge\", \"fidelity\": \"unavailable\", \"note\": \"test\"}"
	char r1[200], r2[200];
	mkdir(tu_tmp("cmp-schemas"), 0700);
	snprintf(r1, sizeof(r1), ROW, "slurm_lic_total");
	snprintf(r2, sizeof(r2), ROW, "slurm_partition_weight");
	struct buf b;
	buf_init(&b, 0);
	buf_printf(&b, "{\"metrics\": [%s, %s]}", r1, r2);
	tu_write(RIVOSINC, b.data);
	tu_write(TWIN, b.data);
	buf_free(&b);
	struct mapping *v = load();
	buf_init(&b, 0);
	buf_puts(&b, "{\"metrics\": [");
	for (size_t i = 0; i < v->nrows; i++) {
		snprintf(r1, sizeof(r1), ROW, v->rows[i].name);
		buf_printf(&b, "%s, ", r1);
	}
	snprintf(r1, sizeof(r1), ROW, "slurm_account_fairshare_norm_shares");
	snprintf(r2, sizeof(r2), ROW, "slurm_info");
	buf_printf(&b, "%s, %s]}", r1, r2);
	tu_write(SCKYZO, b.data);
	buf_free(&b);
	mapping_free(v);
#undef ROW
}

/* compare_pick_schema on a page file: the index picked (-1: none), the reason into why. */
static int pick(const char *const *files, size_t n, const char *page, char *why, size_t whysz)
{
	struct buf problems;
	buf_init(&problems, 0);
	struct mapping *chain = mapping_load_set(files, n, &problems);
	if (!chain)
		fail_msg("%s", problems.data);
	size_t len;
	char *text = tu_slurp(page, &len);
	assert_non_null(text);
	struct expo e;
	expo_init(&e);
	assert_int_equal(expo_parse(&e, text, len, EXPO_STRICT), 0);
	int k = compare_pick_schema(chain, &e, why, whysz);
	expo_free(&e);
	free(text);
	mapping_free(chain);
	buf_free(&problems);
	return k;
}

/* Each peer's page picks its own schema, whatever the order the files are given in; vpenso's page
 * is vpenso's though SckyzO's rows hold every one of its names; two schemas alike best, or a page
 * no schema names, pick none. */
static void test_pick_schema(void **state)
{
	(void)state;
	write_schemas();
	const char *vpenso = "tests/fixtures/slurm-25.11/02-busy-mix/legacy_exporter_metrics.txt";
	const char *three[] = { MAPPING, RIVOSINC, SCKYZO }, *rev[] = { SCKYZO, RIVOSINC, MAPPING };
	char why[512];
	assert_int_equal(pick(three, 3, vpenso, why, sizeof(why)), 0);
	assert_int_equal(pick(rev, 3, vpenso, why, sizeof(why)), 2);
	assert_int_equal(pick(three, 3, PEERS "rivosinc_exporter_metrics.txt", why, sizeof(why)), 1);
	assert_int_equal(pick(rev, 3, PEERS "rivosinc_exporter_metrics.txt", why, sizeof(why)), 1);
	assert_int_equal(pick(three, 3, PEERS "sckyzo_exporter_metrics.txt", why, sizeof(why)), 2);
	assert_int_equal(pick(rev, 3, PEERS "sckyzo_exporter_metrics.txt", why, sizeof(why)), 0);
	const char *twins[] = { MAPPING, RIVOSINC, TWIN };
	assert_int_equal(pick(twins, 3, PEERS "rivosinc_exporter_metrics.txt", why, sizeof(why)), -1);
	if (!strstr(why, "rivosinc-slurm-exporter 2 of ") || !strstr(why, "rivosinc-twin 2 of "))
		fail_msg("why: %s", why);
	/* the shipped rivosinc table beside vpenso's */
	const char *shipped[] = { MAPPING, "mappings/rivosinc-slurm-exporter.json" };
	assert_int_equal(pick(shipped, 2, vpenso, why, sizeof(why)), 0);
	assert_int_equal(pick(shipped, 2, PEERS "rivosinc_exporter_metrics.txt", why, sizeof(why)), 1);
	/* the three shipped tables: each page its own */
	const char *all[] = { MAPPING, "mappings/rivosinc-slurm-exporter.json", "mappings/sckyzo-slurm-exporter.json" };
	assert_int_equal(pick(all, 3, vpenso, why, sizeof(why)), 0);
	assert_int_equal(pick(all, 3, PEERS "rivosinc_exporter_metrics.txt", why, sizeof(why)), 1);
	assert_int_equal(pick(all, 3, PEERS "sckyzo_exporter_metrics.txt", why, sizeof(why)), 2);
	const char *riv[] = { RIVOSINC };
	assert_int_equal(pick(riv, 1, vpenso, why, sizeof(why)), -1); /* not one name shared */
	assert_string_equal(why, "rivosinc-slurm-exporter 0 of 56"); /* 54 families on the page, 2 rows */
}

/* compare() with stderr too. */
static int compare_err(unsigned port, const char *state_dir, char **out, char **err, const char *const *extra)
{
	char url[64];
	snprintf(url, sizeof(url), "http://127.0.0.1:%u/metrics", port);
	char *argv[24] = { (char *)tu_shim_bin(), "--compare-legacy", url, "--replay-dir", (char *)state_dir,
			   "--mapping.file", MAPPING, "--log.level", "info" };
	int n = 9;
	for (size_t i = 0; extra[i] && n < 23; i++)
		argv[n++] = (char *)extra[i];
	argv[n] = NULL;
	return tu_run(argv, NULL, out, NULL, err);
}

/* The mode with several schemas: the page's schema recognised (the report's first line names it, the
 * log says why), then compared row by row as with that schema alone: vpenso's page gives the report a
 * single --mapping.file gives, after that line; rivosinc's and SckyzO's pages their stand-in's rows.
 * --compare-legacy.schema overrides; an unknown name, and two schemas alike best, exit 2 saying so. */
static void test_schema_recognised(void **state)
{
	(void)state;
	write_schemas();
	const char *dir = "tests/fixtures/slurm-25.11/02-busy-mix";
	const char *three[] = { "--mapping.file", RIVOSINC, "--mapping.file", SCKYZO, NULL };
	struct fake f;
	char *out = NULL, *err = NULL, *alone = NULL;
	fake_start(&f, dir, "tests/fixtures/slurm-25.11/02-busy-mix/legacy_exporter_metrics.txt");
	int rc1 = compare(f.port, dir, &alone, NULL);
	int rc = compare_err(f.port, dir, &out, &err, three);
	const char *first = "schema prometheus-slurm-exporter (" MAPPING ")\n";
	if (rc != rc1 || strncmp(out, first, strlen(first)) || strcmp(out + strlen(first), alone))
		fail_msg("exit %d (alone %d)\n%s\n--- alone:\n%s", rc, rc1, out, alone);
	if (!strstr(err, "the old exporter speaks prometheus-slurm-exporter (") || !strstr(err, "sckyzo-slurm-exporter 54 of 64"))
		fail_msg("log: %s", err);
	free(out), free(err);
	/* told: the vpenso page against the rivosinc stand-in */
	const char *told[] = { "--mapping.file", RIVOSINC, "--compare-legacy.schema", "rivosinc-slurm-exporter", NULL };
	assert_int_equal(compare_err(f.port, dir, &out, &err, told), 1);
	char want[300];
	snprintf(want, sizeof(want), "schema rivosinc-slurm-exporter (%s)\n", RIVOSINC);
	assert_non_null(strstr(out, want));
	assert_line(out, "slurm_lic_total", "absent                 unavailable");
	assert_line(out, "slurm_cpus_alloc", "only-legacy            none");
	free(out), free(err);
	const char *unknown[] = { "--mapping.file", RIVOSINC, "--compare-legacy.schema", "nope", NULL };
	assert_int_equal(compare_err(f.port, dir, &out, &err, unknown), 2);
	assert_non_null(strstr(err, "--compare-legacy.schema: no --mapping.file is named \\\"nope\\\""));
	free(out), free(err);
	fake_stop(&f);
	free(alone);
	/* the peers' pages */
	fake_start(&f, dir, PEERS "rivosinc_exporter_metrics.txt");
	assert_int_equal(compare_err(f.port, dir, &out, &err, three), 1);
	assert_non_null(strstr(out, "schema rivosinc-slurm-exporter ("));
	assert_line(out, "slurm_lic_total", "only-legacy            unavailable");
	assert_line(out, "slurm_partition_weight", "only-legacy            unavailable");
	assert_line(out, "slurm_cpu_load", "only-legacy            none");
	free(out), free(err);
	const char *twins[] = { "--mapping.file", RIVOSINC, "--mapping.file", TWIN, NULL };
	assert_int_equal(compare_err(f.port, dir, &out, &err, twins), 2);
	assert_non_null(strstr(err, "cannot tell which schema the old exporter speaks"));
	assert_non_null(strstr(err, "--compare-legacy.schema"));
	assert_true(!out || !*out);
	free(out), free(err);
	fake_stop(&f);
	fake_start(&f, dir, PEERS "sckyzo_exporter_metrics.txt");
	assert_int_equal(compare_err(f.port, dir, &out, &err, three), 1);
	assert_non_null(strstr(out, "schema sckyzo-slurm-exporter ("));
	assert_line(out, "slurm_account_fairshare_norm_shares", "only-legacy            unavailable");
	free(out), free(err);
	const char *json[] = { "--mapping.file", RIVOSINC, "--mapping.file", SCKYZO, "--compare-legacy.format", "json", NULL };
	assert_int_equal(compare_err(f.port, dir, &out, &err, json), 1);
	json_error_t jerr;
	json_t *doc = json_loads(out, 0, &jerr);
	if (!doc)
		fail_msg("not JSON: %s\n%s", jerr.text, out);
	assert_string_equal(json_string_value(json_object_get(doc, "schema")), "sckyzo-slurm-exporter");
	assert_string_equal(json_string_value(json_object_get(doc, "schema_file")), SCKYZO);
	json_decref(doc);
	free(out), free(err);
	fake_stop(&f);
}

/* SckyzO's captured page against its shipped schema on the same state, with slurmrestd's answers: its
 * command histogram is the unavailable row's one family (126 series over its parts), no part is a
 * family of its own, and it is the one family that disappears; no exact family differs. */
static void test_sckyzo_histogram_end_to_end(void **state)
{
	(void)state;
	const char *dir = "tests/fixtures/peers-25.11/P1-busy-mix";
	const char *extra[] = { "--mapping.file", "mappings/sckyzo-slurm-exporter.json", "--compare-legacy.schema",
				"sckyzo-slurm-exporter", "--slurmrestd.url", "http://127.0.0.1:1", "--slurmrestd.jobs", NULL };
	struct fake f;
	char *out = NULL, *err = NULL;
	fake_start(&f, dir, PEERS "sckyzo_exporter_metrics.txt");
	int rc = compare_err(f.port, dir, &out, &err, extra);
	fake_stop(&f);
	if (rc != 1 || !out)
		fail_msg("exit %d\n%s\n%s", rc, out ? out : "", err ? err : "");
	assert_line(out, "slurm_exporter_command_duration_seconds",
		    "only-legacy            unavailable  -          slurm_exporter_command_duration_seconds (legacy 126 series, shim 0)");
	assert_null(strstr(out, "slurm_exporter_command_duration_seconds_"));
	if (!strstr(out, " families compared: 0 exact families differ, ") || !strstr(out, ", 1 disappears ("))
		fail_msg("%s", out);
	free(out), free(err);
}

int main(void)
{
	signal(SIGPIPE, SIG_IGN);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_equal),
		cmocka_unit_test(test_exact_differs),
		cmocka_unit_test(test_approximate_differs),
		cmocka_unit_test(test_label_sets),
		cmocka_unit_test(test_only_legacy),
		cmocka_unit_test(test_other_families),
		cmocka_unit_test(test_bounded),
		cmocka_unit_test(test_histogram_is_its_row),
		cmocka_unit_test(test_histogram_without_row),
		cmocka_unit_test(test_summary_and_lookalike),
		cmocka_unit_test(test_histogram_json_part),
		cmocka_unit_test(test_served_form_from_result),
		cmocka_unit_test(test_json),
		cmocka_unit_test_teardown(test_states_agree, stop_fake),
		cmocka_unit_test_teardown(test_altered_page, stop_fake),
		cmocka_unit_test_teardown(test_disappearing, stop_fake),
		cmocka_unit_test_teardown(test_unreadable, stop_fake),
		cmocka_unit_test_teardown(test_empty_page, stop_fake),
		cmocka_unit_test(test_pick_schema),
		cmocka_unit_test_teardown(test_schema_recognised, stop_fake),
		cmocka_unit_test_teardown(test_sckyzo_histogram_end_to_end, stop_fake),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
