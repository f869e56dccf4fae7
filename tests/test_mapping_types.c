/* test_mapping_types.c: a row's "type". gauge, counter and untyped are served; histogram and summary
 * are accepted on an unavailable row only (a peer's family the shim documents but does not serve,
 * such as an exporter's histogram of its own command runs), and refused on any served row, a row
 * with a preferred form included, with file:line:column at the "type" key and the rule. One
 * behaviour per test. */
#include "testutil.h"

#include "mapping.h"
#include "rules.h"

/* the table's file, and how the problems name it (tu_untmp) */
#define PATH tu_tmp("mapping-types.json")
#define SHOWN "TMP/mapping-types.json"

/* The loader's problems for json (NULL when it loads), the table in *out when it loads. */
static char *load(const char *json, struct mapping **out)
{
	struct buf b;
	tu_write(PATH, json);
	buf_init(&b, 0);
	struct mapping *m = mapping_load(PATH, &b);
	*out = m;
	if (m) {
		buf_free(&b);
		return NULL;
	}
	buf_putc(&b, '\0');
	return tu_untmp(buf_steal(&b, NULL));
}

static void refused_with(const char *json, const char *want)
{
	struct mapping *m;
	char *p = load(json, &m);
	assert_null(m);
	if (!p || !strstr(p, want))
		fail_msg("wanted \"%s\" in:\n%s", want, p ? p : "(it loads)");
	free(p);
}

#define UNAVAILABLE_ROW(type) \
	"{\"metrics\": [\n" \
	"  {\"name\": \"x_seconds\", \"help\": \"h\", \"type\": \"" type "\", \"fidelity\": \"unavailable\",\n" \
	"   \"note\": \"the peer's own runs\"}\n" \
	"]}\n"

/* An unavailable histogram row loads, keeps its type and counts as unavailable. */
static void test_unavailable_histogram_loads(void **state)
{
	(void)state;
	struct mapping *m;
	char *p = load(UNAVAILABLE_ROW("histogram"), &m);
	if (!m)
		fail_msg("%s", p);
	assert_int_equal(m->nrows, 1);
	assert_string_equal(m->rows[0].type, "histogram");
	assert_int_equal(row_native(&m->rows[0])->fidelity, FID_UNAVAILABLE);
	assert_int_equal(m->sources, 0); /* it reads nothing: nothing is fetched for it */
	mapping_free(m);
}

/* An unavailable summary row loads too. */
static void test_unavailable_summary_loads(void **state)
{
	(void)state;
	struct mapping *m;
	char *p = load(UNAVAILABLE_ROW("summary"), &m);
	if (!m)
		fail_msg("%s", p);
	assert_string_equal(m->rows[0].type, "summary");
	mapping_free(m);
}

/* An exact histogram row is refused at its "type" key, with the rule. */
static void test_exact_histogram_refused(void **state)
{
	(void)state;
	refused_with("{\"metrics\": [\n"
		     "  {\"name\": \"x_seconds\", \"help\": \"h\", \"type\": \"histogram\", \"fidelity\": \"exact\", \"expr\": \"a\"}\n"
		     "]}\n",
		     SHOWN ":2:46: row 'x_seconds': a row of type \"histogram\" must be unavailable, with no \"prefer\"");
}

/* An approximate summary row is refused the same way. */
static void test_approximate_summary_refused(void **state)
{
	(void)state;
	refused_with("{\"metrics\": [\n"
		     "  {\"name\": \"x\", \"help\": \"h\", \"type\": \"summary\", \"fidelity\": \"approximate\", \"note\": \"n\",\n"
		     "   \"expr\": \"a\"}\n"
		     "]}\n",
		     SHOWN ":2:38: row 'x': a row of type \"summary\" must be unavailable");
}

/* A histogram row unavailable natively but with a preferred form is served where that form's sources
 * answer: refused. */
static void test_histogram_with_prefer_refused(void **state)
{
	(void)state;
	refused_with("{\"metrics\": [\n"
		     "  {\"name\": \"x\", \"help\": \"h\", \"type\": \"histogram\", \"fidelity\": \"unavailable\", \"note\": \"n\",\n"
		     "   \"prefer\": [{\"expr\": \"slurmrestd_nodes\", \"fidelity\": \"exact\"}]}\n"
		     "]}\n",
		     SHOWN ":2:38: row 'x': a row of type \"histogram\" must be unavailable, with no \"prefer\"");
}

/* Any other type is refused, the message naming every choice and where histogram and summary go. */
static void test_unknown_type_refused(void **state)
{
	(void)state;
	refused_with(UNAVAILABLE_ROW("gaugehistogram"),
		     SHOWN ":2:46: row 'x_seconds': \"type\" must be \"gauge\", \"counter\" or \"untyped\" (\"histogram\" "
		     "or \"summary\" on an unavailable row)");
}

/* A histogram row whose fidelity is itself wrong gets that one problem, not a second about its type. */
static void test_bad_fidelity_one_problem(void **state)
{
	(void)state;
	struct mapping *m;
	char *p = load("{\"metrics\": [\n"
		       "  {\"name\": \"x\", \"help\": \"h\", \"type\": \"histogram\", \"fidelity\": \"maybe\", \"expr\": \"a\"}\n"
		       "]}\n", &m);
	assert_null(m);
	assert_non_null(strstr(p, "\"fidelity\" must be"));
	assert_null(strstr(p, "must be unavailable"));
	free(p);
}

/* --mapping.to-rules lists an unavailable histogram row as such, with no rule. */
static void test_rules_list_the_histogram(void **state)
{
	(void)state;
	struct mapping *m;
	char *p = load(UNAVAILABLE_ROW("histogram"), &m);
	if (!m)
		fail_msg("%s", p);
	char dir[256], path[300], err[200] = "";
	snprintf(dir, sizeof(dir), "%s/types-rules-XXXXXX", tu_tmpdir());
	assert_non_null(mkdtemp(dir));
	assert_int_equal(rules_export(m, "http://127.0.0.1:1", "127.0.0.1:1", 0, dir, err, sizeof(err)), 0);
	snprintf(path, sizeof(path), "%s/rules.yml", dir);
	char *rules = tu_slurp(path, NULL);
	assert_non_null(rules);
	if (!strstr(rules, "# x_seconds: unavailable, no native source (the peer's own runs)\n") ||
	    strstr(rules, "record: x_seconds"))
		fail_msg("%s", rules);
	free(rules);
	static const char *const files[] = { "rules.yml", "scrape.yml", "scrape-direct.yml" };
	for (size_t i = 0; i < 3; i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, files[i]);
		unlink(path);
	}
	rmdir(dir);
	mapping_free(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_unavailable_histogram_loads),
		cmocka_unit_test(test_unavailable_summary_loads),
		cmocka_unit_test(test_exact_histogram_refused),
		cmocka_unit_test(test_approximate_summary_refused),
		cmocka_unit_test(test_histogram_with_prefer_refused),
		cmocka_unit_test(test_unknown_type_refused),
		cmocka_unit_test(test_bad_fidelity_one_problem),
		cmocka_unit_test(test_rules_list_the_histogram),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
