/* test_record_rows: rows that read the scrape's own record (mapping.h's MAPPING_RECORD_FAMILIES,
 * docs/mapping.md "The scrape's record"): per source fetched for the scrape, whether its answer was usable,
 * how long its fetch took and how old it is, as the render that evaluates the rows recorded them. A
 * source that failed gives 0 in this very scrape (never absent, never the last scrape's 1); a row
 * reading the record is never left out because a source is down; the loader refuses a name of the
 * record's namespace that is no family of it; --mapping.to-rules exports no such row. */
#include "testutil.h"
#include "payload.h"
#include "render.h"
#include "rules.h"

/* Success per collector as a legacy exporter prints it: 1 when every source it needs answered. */
static const char TABLE[] =
	"{\"metrics\": [\n"
	" {\"name\": \"legacy_collector_success\", \"help\": \"h\", \"type\": \"gauge\", \"fidelity\": \"exact\",\n"
	"  \"expr\": \"min by (collector) (label_replace(shim_source_up{source=~\\\"nodes|partitions\\\"}, "
	"\\\"collector\\\", \\\"nodes\\\", \\\"\\\", \\\"\\\")) or min by (collector) "
	"(label_replace(shim_source_up{source=\\\"jobs\\\"}, \\\"collector\\\", \\\"queue\\\", \\\"\\\", \\\"\\\"))\"},\n"
	" {\"name\": \"legacy_collector_duration_seconds\", \"help\": \"h\", \"type\": \"gauge\", \"fidelity\": "
	"\"approximate\", \"note\": \"n\",\n"
	"  \"expr\": \"max by (collector) (label_replace(shim_source_duration_seconds{source=~\\\"nodes|partitions\\\"}, "
	"\\\"collector\\\", \\\"nodes\\\", \\\"\\\", \\\"\\\"))\"},\n"
	" {\"name\": \"legacy_cache_age_seconds\", \"help\": \"h\", \"type\": \"gauge\", \"fidelity\": \"approximate\", "
	"\"note\": \"n\",\n"
	"  \"expr\": \"shim_source_age_seconds{source=\\\"nodes\\\"}\"},\n"
	" {\"name\": \"legacy_scrape_errors\", \"help\": \"h\", \"type\": \"counter\", \"fidelity\": \"approximate\", "
	"\"note\": \"n\",\n"
	"  \"expr\": \"sum(shim_source_errors_total{source=~\\\"nodes|partitions\\\"})\"},\n"
	" {\"name\": \"legacy_licenses_success\", \"help\": \"h\", \"type\": \"gauge\", \"fidelity\": \"exact\",\n"
	"  \"expr\": \"min(shim_source_up{source=\\\"slurmrestd-licenses\\\"})\"},\n"
	" {\"name\": \"legacy_nodes\", \"help\": \"h\", \"type\": \"gauge\", \"fidelity\": \"exact\", \"expr\": \"slurm_nodes\"},\n"
	" {\"name\": \"legacy_queue\", \"help\": \"h\", \"type\": \"gauge\", \"fidelity\": \"exact\", \"expr\": \"slurm_jobs_pending\"}\n"
	"]}\n";

static struct mapping *load_table(const char *json, struct buf *problems)
{
	const char *path = tu_tmp("record-rows.json");
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(json, f);
	fclose(f);
	return mapping_load(path, problems);
}

static double now_s;
static double fake_clock(void) { return now_s; }

/* The answer of source id: body, fetched in `seconds`, finished at `at`; NULL body: refused. */
static struct payload *answer(const struct mapping *m, enum source_id id, const char *body, double seconds, double at)
{
	struct payload *p = payload_new(id, 0, mapping_has_input, (void *)m);
	if (body)
		assert_int_equal(payload_feed(p, body, strlen(body), 0), PAYLOAD_FEED_MORE);
	else
		payload_fault(p, FAULT_TRANSPORT, "Connection refused");
	p->seconds = seconds;
	p->at = at;
	payload_finish(p);
	return p;
}

/* Render m over the three answers (partitions refused when partitions_down); the body into out. */
static int render(const struct mapping *m, int partitions_down, struct buf *out, struct render_result *res)
{
	struct payload *p[SRC_COUNT] = { 0 };
	p[SRC_NODES] = answer(m, SRC_NODES, "slurm_nodes 4\n", 0.25, 90);
	p[SRC_PARTITIONS] = answer(m, SRC_PARTITIONS, partitions_down ? NULL : "slurm_partitions 2\n", 0.5, 95);
	p[SRC_JOBS] = answer(m, SRC_JOBS, "slurm_jobs_pending 3\n", 0.125, 99);
	now_s = 100;
	struct render_counts n[SRC_COUNT] = { [SRC_NODES] = { .fetches = 9, .failed = 2 },
					      [SRC_PARTITIONS] = { .fetches = 9, .failed = 3 + partitions_down } };
	const struct render_in in = { .m = m, .p = (const struct payload *const *)p, .counts = n, .clock = fake_clock,
				      .started = 99.5 };
	buf_init(out, 0);
	int status = render_run(&in, out, res);
	for (int id = 0; id < SRC_COUNT; id++)
		payload_unref(p[id]);
	return status;
}

static const char *row_text(const struct render_result *res, const struct buf *b, const char *name, size_t *len)
{
	int i = mapping_row_index(res->m, name);
	assert_true(i >= 0);
	*len = res->rows[i].len;
	return b->data + res->rows[i].off;
}

static void assert_has(const struct render_result *res, const struct buf *b, const char *row, const char *line)
{
	size_t len;
	const char *t = row_text(res, b, row, &len);
	if (!memmem(t, len, line, strlen(line)))
		fail_msg("%s lacks \"%s\":\n%.*s", row, line, (int)len, t);
}

static void test_every_source_up(void **state)
{
	(void)state;
	struct mapping *m = load_table(TABLE, NULL);
	assert_non_null(m);
	assert_true(m->reads_record);
	/* the record's families read no source: the table fetches what its other rows read */
	assert_int_equal(mapping_sources(m, 0, 0), (1u << SRC_NODES) | (1u << SRC_JOBS));
	assert_int_equal(m->rows[0].forms[0].sources, 0);
	struct buf b;
	struct render_result res;
	assert_int_equal(render(m, 0, &b, &res), 200);
	assert_has(&res, &b, "legacy_collector_success", "legacy_collector_success{collector=\"nodes\"} 1\n");
	assert_has(&res, &b, "legacy_collector_success", "legacy_collector_success{collector=\"queue\"} 1\n");
	assert_has(&res, &b, "legacy_collector_duration_seconds",
		   "legacy_collector_duration_seconds{collector=\"nodes\"} 0.5\n");
	assert_has(&res, &b, "legacy_cache_age_seconds", "legacy_cache_age_seconds{source=\"nodes\"} 10\n");
	assert_has(&res, &b, "legacy_scrape_errors", "legacy_scrape_errors 5\n");
	/* a source the table does not need (slurmrestd not configured) has no series: the row of it
	 * alone is served empty, not left out */
	size_t len;
	const char *t = row_text(&res, &b, "legacy_licenses_success", &len);
	assert_int_equal(res.rows[mapping_row_index(m, "legacy_licenses_success")].status, ROW_OK);
	assert_true(len > 0 && !memmem(t, len, "\nlegacy_licenses_success ", 26));
	render_result_free(&res);
	buf_free(&b);
	mapping_free(m);
}

/* partitions refused: the nodes collector's success is 0 in this scrape, served, beside queue's 1;
 * the row reading partitions' own family is left out as before */
static void test_source_down_is_zero(void **state)
{
	(void)state;
	struct mapping *m = load_table(TABLE, NULL);
	assert_non_null(m);
	struct buf b;
	struct render_result res;
	assert_int_equal(render(m, 1, &b, &res), 200);
	int i = mapping_row_index(m, "legacy_collector_success");
	assert_int_equal(res.rows[i].status, ROW_OK);
	assert_has(&res, &b, "legacy_collector_success", "legacy_collector_success{collector=\"nodes\"} 0\n");
	assert_has(&res, &b, "legacy_collector_success", "legacy_collector_success{collector=\"queue\"} 1\n");
	assert_int_equal(res.rows[mapping_row_index(m, "legacy_nodes")].status, ROW_OK);
	render_result_free(&res);
	buf_free(&b);
	/* and the next scrape, with partitions back, says 1 again: nothing is kept between scrapes */
	assert_int_equal(render(m, 0, &b, &res), 200);
	assert_has(&res, &b, "legacy_collector_success", "legacy_collector_success{collector=\"nodes\"} 1\n");
	render_result_free(&res);
	buf_free(&b);
	mapping_free(m);
}

static void test_loader_refuses_unknown_record_family(void **state)
{
	(void)state;
	struct buf problems;
	buf_init(&problems, 0);
	struct mapping *m = load_table("{\"metrics\": [{\"name\": \"x\", \"help\": \"h\", \"type\": \"gauge\", "
				       "\"expr\": \"shim_source_errors\"}]}\n", &problems);
	assert_null(m);
	buf_putc(&problems, '\0');
	assert_non_null(strstr(problems.data, "shim_source_errors is no family of the scrape's record"));
	buf_free(&problems);
	/* a wraps_at bound reads native counters: the record is refused there, even a family of it */
	buf_init(&problems, 0);
	m = load_table("{\"metrics\": [{\"name\": \"x\", \"help\": \"h\", \"type\": \"gauge\", \"fidelity\": "
		       "\"exact\", \"expr\": \"slurm_nodes\", \"wraps_at\": {\"bound\": \"shim_source_up\", "
		       "\"limit\": 65536}}]}\n", &problems);
	assert_null(m);
	buf_putc(&problems, '\0');
	assert_non_null(strstr(problems.data, "reads shim_source_up: a bound reads the native counters"));
	buf_free(&problems);
}

static void test_rules_skip_record_rows(void **state)
{
	(void)state;
	struct mapping *m = load_table(TABLE, NULL);
	assert_non_null(m);
	char dir[256];
	snprintf(dir, sizeof(dir), "%s/record-rulesXXXXXX", tu_tmpdir());
	assert_non_null(mkdtemp(dir));
	char err[256];
	assert_int_equal(rules_export(m, "http://ctl:6817", ":9341", 0, dir, err, sizeof(err)), 0);
	char path[300];
	snprintf(path, sizeof(path), "%s/rules.yml", dir);
	size_t len;
	char *text = tu_slurp(path, &len);
	assert_non_null(text);
	assert_null(strstr(text, "record: legacy_collector_success"));
	assert_non_null(strstr(text, "# legacy_collector_success: not exported"));
	assert_non_null(strstr(text, "record: legacy_nodes"));
	free(text);
	mapping_free(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_source_up),
		cmocka_unit_test(test_source_down_is_zero),
		cmocka_unit_test(test_loader_refuses_unknown_record_family),
		cmocka_unit_test(test_rules_skip_record_rows),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
