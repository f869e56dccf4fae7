/* test_http_status.c: the status page at /: status_html_escape, the page built from the last answer's
 * result record (no fetch of its own) before and after a scrape, a failing endpoint's reason and the
 * families it leaves out, hostile upstream and configured strings escaped (the page from a hand-made
 * record whose every string is hostile: test_nodeview.c's test_status_page_render). */
#include "http_fixture.h"

/* status_html_escape: the five characters, invalid UTF-8 repaired as the writer does, controls replaced. */
static void test_html_escape(void **state)
{
	(void)state;
	static const struct {
		const char *in;
		size_t n;
		const char *want;
	} cases[] = {
		{ "plain n1", 8, "plain n1" },
		{ "<script>alert(1)</script>&\"x'", 29, "&lt;script&gt;alert(1)&lt;/script&gt;&amp;&quot;x&#39;" },
		{ "a\xff" "b", 3, "a\xEF\xBF\xBD" "b" },
		{ "\xE2\x82", 2, "\xEF\xBF\xBD" },                 /* cut short: one U+FFFD */
		{ "\xC0\xAF", 2, "\xEF\xBF\xBD\xEF\xBF\xBD" },     /* overlong: two */
		{ "caf\xC3\xA9 \xE2\x82\xAC", 9, "caf\xC3\xA9 \xE2\x82\xAC" }, /* valid UTF-8 kept */
		{ "a\0b\x1b\x7f\tc\n", 8, "a\xEF\xBF\xBD" "b\xEF\xBF\xBD\xEF\xBF\xBD\tc\n" },
		{ "", 0, "" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct buf b;
		buf_init(&b, 0);
		status_html_escape(&b, cases[i].in, cases[i].n);
		buf_putc(&b, '\0');
		assert_string_equal(b.data, cases[i].want);
		buf_free(&b);
	}
}

/* A page is safe: no tag from data, valid UTF-8. */
static void assert_page_safe(const char *page, size_t len)
{
	assert_true(utf8_is_valid(page, len));
	assert_int_equal(strlen(page), len); /* no NUL */
	const char *p = page;
	size_t scripts = 0;
	while ((p = strstr(p, "<script")) != NULL) {
		scripts++;
		p++;
	}
	assert_int_equal(scripts, 0);
}

/* The page's line for an endpoint: from "<tr><td>NAME</td>" to the end of its row. */
static char *status_line(const char *page, const char *endpoint)
{
	char key[96];
	snprintf(key, sizeof(key), "<tr><td>%s</td>", endpoint);
	const char *p = strstr(page, key);
	if (!p)
		return NULL;
	const char *e = strstr(p, "</tr>");
	return xstrndup(p, e ? (size_t)(e - p) : strlen(p));
}

/* / over HTTP: before any scrape it says so and fetches nothing; after one, the sources with their
 * up state, HTTP status and bytes, and the rows by outcome; behind basic auth like /metrics. */
static void test_status_page(void **state)
{
	(void)state;
	struct proc f, s;
	struct resp r;
	fake_start(&f, STATE, NULL);
	shim_start(&s, f.port, NULL);
	http("GET", s.port, "/", &r, 5000);
	assert_int_equal(r.status, 200);
	assert_string_equal(r.ctype, "text/html; charset=utf-8");
	assert_non_null(strstr(r.body.data, "No scrape has happened yet"));
	assert_non_null(strstr(r.body.data, "<a href=\"/metrics\">"));
	buf_free(&r.body);
	assert_int_equal(stat_count(f.port, "nodes"), 0); /* the page fetched nothing */
	http("GET", s.port, "/metrics", &r, 10000);
	assert_int_equal(r.status, 200);
	buf_free(&r.body);
	http("GET", s.port, "/", &r, 5000);
	assert_int_equal(r.status, 200);
	assert_int_equal(stat_count(f.port, "nodes"), 1); /* still the scrape's one fetch */
	static const char *const eps[] = { "nodes", "partitions", "scheduler", "jobs-users-accts" };
	for (size_t i = 0; i < 4; i++) {
		char *line = status_line(r.body.data, eps[i]);
		assert_non_null(line);
		assert_non_null(strstr(line, "<td class=\"up\">up</td>"));
		assert_non_null(strstr(line, "<td class=\"n\">200</td>"));
		free(line);
	}
	char *line = status_line(r.body.data, "nodes");
	char bytes[64];
	struct stat sb;
	assert_int_equal(stat(STATE "/metrics_nodes.txt", &sb), 0);
	snprintf(bytes, sizeof(bytes), "<td class=\"n\">%lld</td>", (long long)sb.st_size);
	assert_non_null(strstr(line, bytes));
	free(line);
	assert_non_null(strstr(r.body.data, "<td>served</td><td class=\"n\">"));
	assert_non_null(strstr(r.body.data, "<td>disabled (flag not set)</td><td class=\"n\">4</td>"));
	assert_non_null(strstr(r.body.data, "<code>" MAPPING "</code>"));
	assert_non_null(strstr(r.body.data, "<span class=\"up\">succeeded</span>"));
	assert_null(strstr(r.body.data, "slurmrestd-nodes"));
	assert_page_safe(r.body.data, strlen(r.body.data));
	buf_free(&r.body);
	stop(&s);
	shim_start(&s, f.port, "--web.config.file", "tests/webconfig/auth_only.yml", NULL);
	http("GET", s.port, "/", &r, 5000);
	assert_int_equal(r.status, 401);
	buf_free(&r.body);
	stop(&s);
	stop(&f);
}

/* After a scrape with a failing endpoint, the page names it down with its reason and status, and
 * lists the families left out because of it. */
static void test_status_page_fault(void **state)
{
	(void)state;
	struct proc f, s;
	struct resp r;
	fake_start(&f, STATE, "--fault", "500", "--fault-endpoint", "jobs-users-accts", NULL);
	shim_start(&s, f.port, NULL);
	http("GET", s.port, "/metrics", &r, 10000);
	assert_int_equal(r.status, 200);
	buf_free(&r.body);
	http("GET", s.port, "/", &r, 5000);
	char *line = status_line(r.body.data, "jobs-users-accts");
	assert_non_null(line);
	assert_non_null(strstr(line, "<td class=\"down\">down</td>"));
	assert_non_null(strstr(line, "<td class=\"n\">500</td>"));
	assert_non_null(strstr(line, "/metrics/jobs-users-accts: HTTP status 500"));
	free(line);
	line = status_line(r.body.data, "nodes");
	assert_non_null(strstr(line, "<td class=\"up\">up</td>"));
	free(line);
	assert_non_null(strstr(r.body.data, "<tr><td class=\"fam\">slurm_queue_pending</td><td class=\"err\">input_down: endpoint jobs-users-accts is down</td></tr>"));
	assert_non_null(strstr(r.body.data, "<td>left out: input down</td><td class=\"n down\">"));
	buf_free(&r.body);
	stop(&s);
	stop(&f);

	/* every endpoint refusing: 503, and the page says no row was evaluated */
	fake_start(&f, STATE, "--fault", "500", NULL);
	shim_start(&s, f.port, NULL);
	http("GET", s.port, "/metrics", &r, 10000);
	assert_int_equal(r.status, 503);
	buf_free(&r.body);
	http("GET", s.port, "/", &r, 5000);
	assert_non_null(strstr(r.body.data, "HTTP 503"));
	assert_non_null(strstr(r.body.data, "no row was evaluated"));
	buf_free(&r.body);
	stop(&s);
	stop(&f);
}

/* Hostile strings end to end: a capture copy whose node name is markup and quotes (or invalid
 * UTF-8), a mapping file whose path is markup: the page has no unescaped tag and is valid UTF-8. */
static void test_status_page_hostile(void **state)
{
	(void)state;
	static const char *const names[] = { "<script>alert(1)</script>\\&\"x", "n\xff" "1" }; /* for sed */
	const char *dir = tu_tmp("status-<script>alert(1)<");
	char path[256], cmd[1024], shown[300];
	mkdir(dir, 0700);
	snprintf(path, sizeof(path), "%s/script>&\"x\xff.json", dir);
	char *m = tu_slurp(MAPPING, NULL);
	tu_write(path, m);
	free(m);
	for (size_t i = 0; i < 2; i++) {
		struct proc f, s;
		struct resp r;
		const char *cap = tu_tmp("status-capture");
		snprintf(cmd, sizeof(cmd), "rm -rf %s && cp -r " STATE " %s && sed -i 's|node=\"n1\"|node=\"%s\"|' %s/metrics_nodes.txt",
			 cap, cap, names[i], cap);
		assert_int_equal(system(cmd), 0);
		fake_start(&f, cap, NULL);
		shim_start(&s, f.port, "--mapping.file", path, NULL);
		http("GET", s.port, "/metrics", &r, 10000);
		assert_int_equal(r.status, 200);
		assert_non_null(strstr(r.body.data, i ? "node=\"n\xEF\xBF\xBD" "1\"" : "node=\"<script>alert(1)</script>&\\\"x\""));
		buf_free(&r.body);
		http("GET", s.port, "/", &r, 5000);
		assert_int_equal(r.status, 200);
		assert_page_safe(r.body.data, strlen(r.body.data));
		/* the configured path reached the page, escaped and repaired */
		snprintf(shown, sizeof(shown), "%s/status-&lt;script&gt;alert(1)&lt;/script&gt;&amp;&quot;x\xEF\xBF\xBD.json",
			 tu_tmpdir());
		assert_non_null(strstr(r.body.data, shown));
		buf_free(&r.body);
		stop(&s);
		stop(&f);
	}
}

/* Two schemas: the page shows both, each with its own rows from its own last scrape. Only the
 * second scraped: the cluster view is its scrape's (no "No scrape has happened yet"), and the
 * first's rows say it was not scraped; then both scraped: both sections have their rows. */
static void test_status_page_schemas(void **state)
{
	(void)state;
	struct proc f, s;
	struct resp r;
	static const char *const both[] = { "<h2 id=\"rows-prometheus-slurm-exporter\">Rows: schema <code>prometheus-slurm-exporter</code></h2>",
					    "<h2 id=\"rows-slurm-node-load\">Rows: schema <code>slurm-node-load</code></h2>" };
	fake_start(&f, STATE, NULL);
	shim_start(&s, f.port, "--mapping.file", MAPPING, "--mapping.file", "mappings/slurm-node-load.json", NULL);
	http("GET", s.port, "/schemas/slurm-node-load/metrics", &r, 10000);
	assert_int_equal(r.status, 200);
	buf_free(&r.body);
	http("GET", s.port, "/", &r, 5000);
	assert_int_equal(r.status, 200);
	const char *p = r.body.data;
	assert_null(strstr(p, "No scrape has happened yet"));
	assert_non_null(strstr(p, ", of schema <code>slurm-node-load</code>, answered"));
	assert_non_null(strstr(p, "<h2>Nodes</h2>"));
	const char *a = strstr(p, both[0]), *b = strstr(p, both[1]);
	assert_non_null(a);
	assert_non_null(b);
	assert_true(a < b);
	assert_non_null(strstr(a, "Not scraped yet"));
	assert_true(strstr(a, "Not scraped yet") < b);  /* the first's section says so */
	assert_null(strstr(b, "Not scraped yet"));       /* the second's has its rows */
	assert_non_null(strstr(b, "<td>served</td><td class=\"n\">"));
	/* the Schemas table: the first never scraped, the second just now */
	const char *t = strstr(p, "<tr><td><code>prometheus-slurm-exporter</code>");
	assert_non_null(t);
	assert_non_null(strstr(t, "<td>never</td>"));
	assert_true(strstr(t, "<td>never</td>") < strstr(p, "<tr><td><code>slurm-node-load</code>"));
	assert_page_safe(p, strlen(p));
	buf_free(&r.body);

	http("GET", s.port, "/metrics", &r, 10000);
	assert_int_equal(r.status, 200);
	buf_free(&r.body);
	http("GET", s.port, "/", &r, 5000);
	p = r.body.data;
	a = strstr(p, both[0]);
	b = strstr(p, both[1]);
	assert_non_null(a);
	assert_non_null(b);
	assert_null(strstr(p, "Not scraped yet"));
	const char *served = strstr(a, "<td>served</td><td class=\"n\">");
	assert_non_null(served);
	assert_true(served < b); /* the first's rows in its own section */
	assert_non_null(strstr(b, "<td>served</td><td class=\"n\">"));
	assert_non_null(strstr(p, "<td>disabled (flag not set)</td><td class=\"n\">4</td>")); /* the legacy table's */
	assert_null(strstr(p, "<td>never</td>"));
	assert_page_safe(p, strlen(p));
	buf_free(&r.body);
	stop(&s);
	stop(&f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_html_escape),
		cmocka_unit_test_teardown(test_status_page, kill_children),
		cmocka_unit_test_teardown(test_status_page_fault, kill_children),
		cmocka_unit_test_teardown(test_status_page_hostile, kill_children),
		cmocka_unit_test_teardown(test_status_page_schemas, kill_children),
	};
	return http_fixture_run("http_status", tests, sizeof(tests) / sizeof(tests[0]));
}
