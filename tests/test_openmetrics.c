/* test_openmetrics.c: the OpenMetrics 1.0 validator (om_validate) on hand-written cases, mostly the
 * rules the OpenMetrics test suite (tests/test_conformance.sh) does not exercise. */
#include "testutil.h"

#include "openmetrics.h"

/* Validate len bytes of text; want_line 0 means "valid". The reason must contain `want` if given. */
static void check_n(const char *text, size_t len, size_t want_line, const char *want)
{
	char reason[200];
	size_t line = 12345;
	int rc = om_validate(text, len, &line, reason, sizeof(reason));
	if (want_line == 0) {
		if (rc != 0)
			fail_msg("unexpected error at line %zu: %s\n--- input:\n%.*s", line, reason, (int)len, text);
		assert_int_equal(line, 0);
		return;
	}
	if (rc != -1)
		fail_msg("accepted, want an error at line %zu\n--- input:\n%.*s", want_line, (int)len, text);
	if (line != want_line)
		fail_msg("error at line %zu (%s), want line %zu\n--- input:\n%.*s", line, reason, want_line, (int)len,
			 text);
	if (want && !strstr(reason, want))
		fail_msg("reason \"%s\" lacks \"%s\"", reason, want);
}

static void check(const char *text, size_t want_line, const char *want)
{
	check_n(text, strlen(text), want_line, want);
}

static void test_valid(void **state)
{
	(void)state;
	/* the specification's example */
	check("# TYPE acme_http_router_request_seconds summary\n"
	      "# UNIT acme_http_router_request_seconds seconds\n"
	      "# HELP acme_http_router_request_seconds Latency though all of ACME's HTTP request router.\n"
	      "acme_http_router_request_seconds_sum{path=\"/api/v1\",method=\"GET\"} 9036.32\n"
	      "acme_http_router_request_seconds_count{path=\"/api/v1\",method=\"GET\"} 807283.0\n"
	      "acme_http_router_request_seconds_created{path=\"/api/v1\",method=\"GET\"} 1605281325.0\n"
	      "acme_http_router_request_seconds_sum{path=\"/api/v2\",method=\"POST\"} 479.3\n"
	      "acme_http_router_request_seconds_count{path=\"/api/v2\",method=\"POST\"} 34.0\n"
	      "acme_http_router_request_seconds_created{path=\"/api/v2\",method=\"POST\"} 1605281325.0\n"
	      "# TYPE go_goroutines gauge\n"
	      "# HELP go_goroutines Number of goroutines that currently exist.\n"
	      "go_goroutines 69\n"
	      "# TYPE process_cpu_seconds counter\n"
	      "# UNIT process_cpu_seconds seconds\n"
	      "# HELP process_cpu_seconds Total user and system CPU time spent in seconds.\n"
	      "process_cpu_seconds_total 4.20072246e+06\n"
	      "# EOF\n",
	      0, NULL);
	check("# EOF", 0, NULL);
	check("a +inf\nb -Infinity\nc nan\nd .5\ne 1.\nf +1E+5\ng 1e-400\nh -0\n# EOF\n", 0, NULL);
	check("# TYPE s stateset\ns{s=\"a\",x=\"1\"} 1\ns{s=\"b\",x=\"1\"} 0\ns{s=\"a\",x=\"2\"} 0.0\n# EOF\n", 0, NULL);
	check("# TYPE i info\ni_info{v=\"1.0\"} 1\n# EOF\n", 0, NULL);
	check("# TYPE g gaugehistogram\ng_bucket{le=\"-Inf\"} 0\ng_bucket{le=\"-1\"} 1\ng_bucket{le=\"+Inf\"} 2\n"
	      "g_gcount 2\ng_gsum -3\n# EOF\n",
	      0, NULL);
	/* two MetricPoints of one histogram, told apart by their timestamps */
	check("# TYPE h histogram\n"
	      "h_bucket{le=\"1\"} 0 1\nh_bucket{le=\"+Inf\"} 1 1\nh_count 1 1\nh_sum 0.5 1\n"
	      "h_bucket{le=\"1\"} 1 2\nh_bucket{le=\"+Inf\"} 2 2\nh_count 2 2\nh_sum 1 2\n# EOF\n",
	      0, NULL);
	/* a gauge "a" and an unknown "a_total" do not clash */
	check("# TYPE a gauge\na 1\na_total 2\n# EOF\n", 0, NULL);
	/* NUL bytes are valid in label values and HELP text */
	static const char nul[] = "# HELP a x\0y\na{l=\"\0\"} 1\n# EOF\n";
	check_n(nul, sizeof(nul) - 1, 0, NULL);
}

static void test_structure(void **state)
{
	(void)state;
	check("", 1, "missing # EOF");
	check("a 1\n", 2, "missing # EOF");
	check("a 1\n# EOF\n\n", 3, "after # EOF");
	check("a 1\n# EOF\na 2\n", 3, "after # EOF");
	check("a 1", 1, "# EOF");
	check("a 1\r\n# EOF\n", 1, "carriage return");
	check("# HELP a x\r\n# EOF\n", 1, "carriage return");
	check("\xEF\xBB\xBF# EOF\n", 1, "byte order mark");
	check("a 1\na{l=\"\xC0\xAF\"} 1\n# EOF\n", 2, "UTF-8");   /* overlong */
	check("a 1\na{l=\"\xED\xA0\x80\"} 1\n# EOF\n", 2, "UTF-8"); /* surrogate */
	check("a 1\na{l=\"\xF4\x90\x80\x80\"} 1\n# EOF\n", 2, "UTF-8"); /* above U+10FFFF */
	check("a{l=\"\xE2\x82\"} 1\n# EOF\n", 1, "UTF-8");        /* truncated */
	check("a{l=\"\xE2\x82\xAC\xF0\x9F\x98\x80\"} 1\n# EOF\n", 0, NULL);
	check("# some comment\n# EOF\n", 1, "# HELP, # TYPE, # UNIT or # EOF");
	check("a 1\n\n# EOF\n", 2, "blank line");
}

static void test_syntax(void **state)
{
	(void)state;
	check("a{l=\"\\z\\\\\\\"\\n\"} 1\n# EOF\n", 0, NULL);
	check("a{l=\"x\\\"} 1\n# EOF\n", 1, "unterminated");
	check("# HELP a ends with \\\n# EOF\n", 1, "lone backslash");
	check("# HELP a raw \" quote\n# EOF\n", 0, NULL);
	check("a{_x=\"1\",b2=\"2\"} 1\n# EOF\n", 0, NULL);
	check("a{b=\"1\",a=\"2\",b=\"3\"} 1\n# EOF\n", 1, "duplicate label");
	check("a:b:c 1\n# EOF\n", 0, NULL);
	check("a{a:b=\"1\"} 1\n# EOF\n", 1, "expected '='");
	check("a 1e400\n# EOF\n", 1, "invalid value");
	check("a 1 1e400\n# EOF\n", 1, "invalid timestamp");
	check("a NaNx\n# EOF\n", 1, "invalid value");
	check("a -nan\n# EOF\n", 1, "invalid value");
	check("a 1 +Inf\n# EOF\n", 1, "invalid timestamp");
	check("a 1 1 1\n# EOF\n", 1, "after the timestamp");
}

static void test_numbers_exact(void **state)
{
	(void)state;
	/* equal as float64, but the second timestamp is earlier */
	check("a 1 1604676851.123456789\na 2 1604676851.123456788\n# EOF\n", 2, "backwards");
	check("a 1 1604676851.123456788\na 2 1604676851.123456789\n# EOF\n", 0, NULL);
	/* the same number written differently */
	check("a 1 1.50\na 2 15e-1\na 3 0.015E2\n# EOF\n", 0, NULL);
	check("a 1 -0\na 2 0.0\n# EOF\n", 0, NULL);
	check("a 1 -1\na 2 -2\n# EOF\n", 2, "backwards");
	/* counts are integers, exactly */
	check("# TYPE s summary\ns_count 2.0\ns_sum 1\n# EOF\n", 0, NULL);
	check("# TYPE s summary\ns_count 1.5\n# EOF\n", 2, "integer");
	check("# TYPE s summary\ns_count 1.0000000000000000001\n# EOF\n", 2, "integer");
	check("# TYPE s summary\ns_count 15e-1\n# EOF\n", 2, "integer");
	check("# TYPE s summary\ns_count 1500e-3\n# EOF\n", 2, "integer");
	check("# TYPE s summary\ns_count 1000e-3\n# EOF\n", 0, NULL);
	/* buckets ordered exactly */
	check("# TYPE h histogram\nh_bucket{le=\"0.1\"} 0\nh_bucket{le=\"0.10000000000000000001\"} 0\n"
	      "h_bucket{le=\"+Inf\"} 0\n# EOF\n",
	      0, NULL);
	check("# TYPE h histogram\nh_bucket{le=\"0.1\"} 0\nh_bucket{le=\"0.100\"} 0\nh_bucket{le=\"+Inf\"} 0\n# EOF\n",
	      3, "increasing order");
	check("# TYPE s summary\ns{quantile=\"1.0000000000000000001\"} 1\n# EOF\n", 2, "from 0 to 1");
	check("# TYPE s summary\ns{quantile=\"1e0\"} 1\ns{quantile=\"0\"} NaN\n# EOF\n", 0, NULL);
}

static void test_families(void **state)
{
	(void)state;
	/* counter a's sample a_total would clash with the gauge a_total */
	check("# TYPE a_total gauge\na_total 1\n# TYPE a counter\na_total 2\n# EOF\n", 3, "clashes");
	check("# TYPE a counter\na_total 1\n# TYPE a_total gauge\n# EOF\n", 3, "clashes");
	check("# TYPE a info\na_info 1\n# TYPE a_info gauge\n# EOF\n", 3, "clashes");
	/* a family must not come back */
	check("a 1\nb 1\na 2\n# EOF\n", 3, "repeats");
	check("# TYPE a counter\na_total 1\nb 1\na_created 2\n# EOF\n", 4, "repeats");
	/* nor one of its metrics */
	check("a{x=\"1\"} 1\na{x=\"2\"} 1\na{x=\"1\"} 2\n# EOF\n", 3, "contiguous");
	check("# TYPE c counter\nc_total{x=\"1\"} 1\nc_created{x=\"1\"} 1\nc_total{x=\"2\"} 1\nc_created{x=\"1\"} 2\n# EOF\n",
	      5, "contiguous");
	/* the same series twice needs timestamps */
	check("a 1\na 2\n# EOF\n", 2, "twice");
	check("a{x=\"1\"} 1 5\na{x=\"1\"} 2 5\n# EOF\n", 0, NULL);
	/* label order does not make a new series */
	check("a{x=\"1\",y=\"2\"} 1\na{y=\"2\",x=\"1\"} 2\n# EOF\n", 2, "twice");
	/* the family name is not a sample of a counter */
	check("# TYPE a counter\na 1\n# EOF\n", 2, "not one of its sample names");
	/* metadata */
	check("# TYPE a counter\n# UNIT a seconds\n# EOF\n", 2, "suffix");
	check("# UNIT a_seconds seconds\n# TYPE a_seconds stateset\n# EOF\n", 2, "UNIT");
	check("# UNIT a \n# TYPE a info\n# EOF\n", 0, NULL);
}

static void test_types(void **state)
{
	(void)state;
	check("# TYPE h histogram\nh_count{le=\"1\"} 0\n# EOF\n", 2, "le label");
	check("# TYPE s summary\ns_sum{quantile=\"0.5\"} 0\n# EOF\n", 2, "quantile label");
	check("# TYPE h histogram\nh_bucket{le=\"NaN\"} 0\n# EOF\n", 2, "le value");
	check("# TYPE h histogram\nh_bucket{le=\"Inf\"} 0\n# EOF\n", 2, "le value");
	check("# TYPE h histogram\nh_bucket{le=\"+Inf\"} 1.5\n# EOF\n", 2, "integer");
	check("# TYPE h histogram\nh_bucket{le=\"+Inf\"} +Inf\n# EOF\n", 2, "integer");
	/* a second point without +Inf bucket: the error is at its last line */
	check("# TYPE h histogram\nh_bucket{le=\"+Inf\"} 1 1\nh_bucket{le=\"1\"} 1 2\nh_count 1 2\nh_sum 1 2\n# EOF\n", 5,
	      "+Inf bucket");
	check("# TYPE h histogram\nh_bucket{a=\"1\",le=\"+Inf\"} 1\nh_bucket{a=\"2\",le=\"1\"} 1\n# EOF\n", 3,
	      "+Inf bucket");
	check("# TYPE s stateset\ns{s=\"a\"} NaN\n# EOF\n", 2, "0 or 1");
	check("# TYPE i info\ni_info 1.0\ni_info{a=\"b\"} 1e0\n# EOF\n", 0, NULL);
	check("# TYPE c counter\nc_total +Inf\nc_created -5\n# EOF\n", 0, NULL);
	check("# TYPE c counter\nc_total -Inf\n# EOF\n", 2, "negative");
	check("# TYPE g gaugehistogram\ng_bucket{le=\"+Inf\"} 1\ng_gcount 1\ng_gsum NaN\n# EOF\n", 4, "NaN");
}

static void test_exemplars(void **state)
{
	(void)state;
	char line[600], text[700];
	/* 128 code points: "a" plus 127 characters, the first a 3-byte one */
	strcpy(line, "c_total 1 # {a=\"\xE2\x98\x83");
	for (int i = 0; i < 126; i++)
		strcat(line, "x");
	snprintf(text, sizeof(text), "# TYPE c counter\n%s\"} 1 2\n# EOF\n", line);
	check(text, 0, NULL);
	snprintf(text, sizeof(text), "# TYPE c counter\n%sx\"} 1 2\n# EOF\n", line);
	check(text, 2, "129 code points");
	/* an escape counts as the one character it stands for */
	strcpy(line, "c_total 1 # {a=\"\\\"");
	for (int i = 0; i < 126; i++)
		strcat(line, "x");
	snprintf(text, sizeof(text), "# TYPE c counter\n%s\"} 1\n# EOF\n", line);
	check(text, 0, NULL);
	check("# TYPE c counter\nc_total 1 # {} NaN\n# EOF\n", 0, NULL);
	check("# TYPE c counter\nc_total 1 # {a=\"1\",a=\"2\"} 1\n# EOF\n", 2, "duplicate label");
	check("# TYPE c counter\nc_total 1 # {} 1 1 1\n# EOF\n", 2, "after the exemplar");
	check("# TYPE s summary\ns_count 1 # {} 1\n# EOF\n", 2, "exemplars are only allowed");
}

static void test_reason_buffer(void **state)
{
	(void)state;
	char small[8];
	size_t line = 0;
	assert_int_equal(om_validate("a 1\n", 4, NULL, NULL, 0), -1);
	assert_int_equal(om_validate("# EOF\n", 6, NULL, NULL, 0), 0);
	assert_int_equal(om_validate(NULL, 0, &line, NULL, 0), -1);
	assert_int_equal(line, 1);
	memset(small, 'x', sizeof(small));
	assert_int_equal(om_validate("a 1\n", 4, &line, small, sizeof(small)), -1);
	assert_int_equal(line, 2);
	assert_int_equal(strlen(small), sizeof(small) - 1);
	small[0] = 'q';
	assert_int_equal(om_validate("a 1\n", 4, &line, small, 0), -1);
	assert_int_equal(small[0], 'q');
	/* only len bytes are read */
	assert_int_equal(om_validate("# EOF\ngarbage", 6, &line, NULL, 0), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_valid),       cmocka_unit_test(test_structure),
		cmocka_unit_test(test_syntax),      cmocka_unit_test(test_numbers_exact),
		cmocka_unit_test(test_families),    cmocka_unit_test(test_types),
		cmocka_unit_test(test_exemplars),   cmocka_unit_test(test_reason_buffer),
	};
	return cmocka_run_group_tests_name("openmetrics", tests, NULL, NULL);
}
