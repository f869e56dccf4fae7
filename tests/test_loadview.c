/* test_loadview.c: the nodes whose load disagrees with Slurm (src/loadview.c, the status page's table)
 * and slurmrestd's load families (src/slurmrestd_rec.c) on the captured REST states of Slurm 25.11
 * and 26.05, and on copies made here from them with jansson (nothing big committed): on every state
 * the table lists exactly the nodes the rule picks, computed here from the JSON (load = cpu_load / 100
 * above alloc_cpus by more than max(1, 10% of cpus), a node not responding, down or powered down left
 * out), with their figures, and slurmrestd_node_cpu_load is cpu_load / 100 for every node that
 * reports; on a copy where every load equals its allocation none is listed; on a copy where one busy
 * node's load is raised above its allocation and one idle node gets a load, exactly those two are
 * listed, the larger excess first, with their figures on the page; bad data (no cpu_load, NO_VAL,
 * negative, over 1000 times the CPUs, a NOT_RESPONDING or DOWN node with a high load) is named with
 * why, never listed and never a load of 0; hostile node names are escaped; an answer older than a
 * minute makes the loads a guess; --status.load-margin moves the threshold. */
#include "testutil.h"

#include <jansson.h>
#include <math.h>

#include "buf.h"
#include "expo.h"
#include "loadview.h"
#include "slurmrestd.h"
#include "slurmrestd_hostlist.h"

static const char *const states[] = { TU_REST_STATES };

/* The /nodes document of a state, parsed by jansson (the fixture has no HTTP head). */
static json_t *load_json(const char *state)
{
	char path[256];
	snprintf(path, sizeof(path), "tests/fixtures/%s/rest_nodes.json", state);
	json_error_t err;
	json_t *j = json_load_file(path, 0, &err);
	assert_non_null(j);
	return j;
}

/* doc through slurmrestd's reader into e. */
static void parse_doc(struct expo *e, json_t *doc)
{
	char *text = json_dumps(doc, JSON_COMPACT);
	expo_init(e);
	void *st = rest_begin_nodes(e);
	rest_feed(st, e, text, strlen(text));
	assert_int_equal(rest_end(st, e), 0);
	free(text);
}

static void build(struct loadview *v, const struct expo *e, double margin)
{
	const struct expo *ex[SRC_COUNT] = { 0 };
	ex[SRC_REST_NODES] = e;
	loadview_build(v, ex, margin);
}

/* The section into b, NUL-terminated for strstr (a struct buf's data is not). */
static void page(struct buf *b, const struct loadview *v, double age)
{
	loadview_page(b, v, age);
	buf_append(b, "", 1);
}

static double num(json_t *n, const char *key)
{
	json_t *v = json_object_get(n, key);
	if (json_is_object(v))
		v = json_object_get(v, "number");
	return json_is_number(v) ? json_number_value(v) : NAN;
}

static int has_state(json_t *n, const char *word)
{
	size_t i;
	json_t *s;
	json_array_foreach(json_object_get(n, "state"), i, s)
		if (!strcmp(json_string_value(s), word))
			return 1;
	return 0;
}

/* Does node n report a load (the reader's rule, restated)? */
static int reports(json_t *n)
{
	double l = num(n, "cpu_load");
	return !has_state(n, "NOT_RESPONDING") && !has_state(n, "DOWN") && !has_state(n, "POWERED_DOWN") && !isnan(l) &&
	       l >= 0 && l < 4294967294.0 && l / 100 <= 1000 * fmax(1, num(n, "cpus"));
}

/* The sample of family name for node, or NULL. */
static const struct expo_sample *sample_of(const struct expo *e, const char *name, const char *node)
{
	const struct expo_family *f = expo_find(e, name, strlen(name));
	for (size_t k = 0; f && k < f->n; k++)
		for (uint32_t i = 0; i < f->samples[k].nlabels; i++) {
			const struct label *l = &f->samples[k].labels[i];
			if (l->nlen == 4 && !memcmp(l->name, "node", 4) && l->vlen == strlen(node) &&
			    !memcmp(l->value, node, l->vlen))
				return &f->samples[k];
		}
	return NULL;
}

static const struct loadview_node *listed(const struct loadview *v, const char *node)
{
	for (size_t i = 0; i < v->nover && i < LOADVIEW_MAX; i++)
		if (!strcmp(v->over[i].node, node))
			return &v->over[i];
	return NULL;
}

/* Check the view and the families of doc against the rule computed from the JSON; returns how many
 * nodes are listed. */
static size_t check_doc(json_t *doc, double margin_pct)
{
	struct expo e;
	struct loadview v;
	parse_doc(&e, doc);
	build(&v, &e, margin_pct);
	assert_true(v.read);
	size_t want = 0, i;
	json_t *n;
	json_array_foreach(json_object_get(doc, "nodes"), i, n) {
		const char *name = json_string_value(json_object_get(n, "name"));
		const struct expo_sample *s = sample_of(&e, "slurmrestd_node_cpu_load", name);
		const struct loadview_node *o = listed(&v, name);
		if (!reports(n)) {
			assert_null(s);  /* never a load of 0 */
			assert_null(o);
			assert_non_null(sample_of(&e, "slurmrestd_node_cpu_load_unknown", name));
			continue;
		}
		double load = num(n, "cpu_load") / 100, alloc = num(n, "alloc_cpus"), cpus = num(n, "cpus");
		assert_non_null(s);
		assert_true(s->value == load);
		assert_null(sample_of(&e, "slurmrestd_node_cpu_load_unknown", name));
		if (load - alloc > fmax(1, margin_pct / 100 * cpus)) {
			want++;
			if (!o)
				fail_msg("%s: load %.2f on %.0f allocated of %.0f CPUs is not listed", name, load, alloc, cpus);
			assert_true(o->load == load);
			assert_true(o->alloc == alloc);
			assert_true(o->cpus == cpus);
			assert_true(o->free_mem == num(n, "free_mem"));
		} else if (o) {
			fail_msg("%s: load %.2f on %.0f allocated of %.0f CPUs is listed", name, load, alloc, cpus);
		}
	}
	assert_int_equal(v.nover, want);
	for (size_t k = 1; k < v.nover; k++)
		assert_true(v.over[k - 1].excess >= v.over[k].excess);
	expo_free(&e);
	return want;
}

static void test_captured_states(void **unused)
{
	(void)unused;
	size_t listed_somewhere = 0;
	for (size_t s = 0; s < sizeof(states) / sizeof(states[0]); s++) {
		json_t *doc = load_json(states[s]);
		listed_somewhere += check_doc(doc, LOADVIEW_MARGIN_PCT);
		json_decref(doc);
	}
	/* the test cluster runs every slurmd on one host: idle nodes carry the host's load */
	assert_true(listed_somewhere > 0);
}

/* Every node's load set to its allocation: nothing listed. */
static void flatten(json_t *doc)
{
	size_t i;
	json_t *n;
	json_array_foreach(json_object_get(doc, "nodes"), i, n)
		json_object_set_new(n, "cpu_load", json_integer((json_int_t)(num(n, "alloc_cpus") * 100)));
}

static void test_no_disagreement(void **unused)
{
	(void)unused;
	for (size_t s = 0; s < sizeof(states) / sizeof(states[0]); s++) {
		json_t *doc = load_json(states[s]);
		flatten(doc);
		assert_int_equal(check_doc(doc, LOADVIEW_MARGIN_PCT), 0);
		struct expo e;
		struct loadview v;
		parse_doc(&e, doc);
		build(&v, &e, LOADVIEW_MARGIN_PCT);
		struct buf b;
		buf_init(&b, 0);
		page(&b, &v, 5);
		assert_non_null(strstr(b.data, "Nodes loaded beyond their allocation: 0"));
		assert_non_null(strstr(b.data, "None: no node"));
		assert_null(strstr(b.data, "<table id=\"load\">"));
		buf_free(&b);
		expo_free(&e);
		json_decref(doc);
	}
}

/* One busy node raised above its allocation, one idle node given a load: exactly those listed. */
static void test_raised_and_idle(void **unused)
{
	(void)unused;
	size_t tried = 0;
	for (size_t s = 0; s < sizeof(states) / sizeof(states[0]); s++) {
		json_t *doc = load_json(states[s]), *n, *busy = NULL, *idle = NULL;
		size_t i;
		flatten(doc);
		json_array_foreach(json_object_get(doc, "nodes"), i, n) {
			if (!reports(n))
				continue;
			if (!busy && num(n, "alloc_cpus") > 0)
				busy = n;
			else if (!idle && num(n, "alloc_cpus") == 0)
				idle = n;
		}
		/* a state without a busy (or an idle) node gets the other change alone */
		double bload = busy ? num(busy, "alloc_cpus") + num(busy, "cpus") / 2 + 3 : 0; /* excess cpus/2 + 3 */
		double iload = idle ? fmax(1, num(idle, "cpus") / 10) + 0.5 : 0;               /* just over its margin */
		if (busy)
			json_object_set_new(busy, "cpu_load", json_integer((json_int_t)llround(bload * 100)));
		if (idle)
			json_object_set_new(idle, "cpu_load", json_integer((json_int_t)llround(iload * 100)));
		tried += busy && idle;
		assert_int_equal(check_doc(doc, LOADVIEW_MARGIN_PCT), (busy != NULL) + (idle != NULL));
		if (!busy || !idle) {
			json_decref(doc);
			continue;
		}
		struct expo e;
		struct loadview v;
		parse_doc(&e, doc);
		build(&v, &e, LOADVIEW_MARGIN_PCT);
		const char *bname = json_string_value(json_object_get(busy, "name"));
		const char *iname = json_string_value(json_object_get(idle, "name"));
		assert_string_equal(v.over[0].node, bname); /* the larger excess first */
		assert_string_equal(v.over[1].node, iname);
		struct buf b;
		char cell[160];
		buf_init(&b, 0);
		page(&b, &v, 5);
		assert_non_null(strstr(b.data, "Nodes loaded beyond their allocation: 2"));
		snprintf(cell, sizeof(cell), "<td class=\"num down\">%.2f</td><td class=\"num\">%.0f</td><td class=\"num\">%.0f</td>",
			 bload, num(busy, "alloc_cpus"), num(busy, "cpus"));
		assert_non_null(strstr(b.data, cell));
		snprintf(cell, sizeof(cell), "%.0f MiB", num(busy, "free_mem"));
		assert_non_null(strstr(b.data, cell));
		assert_non_null(strstr(b.data, "load with no allocation"));
		assert_non_null(strstr(b.data, "load beyond its allocation"));
		assert_null(strstr(b.data, "(guess)"));
		buf_free(&b);
		buf_init(&b, 0);
		page(&b, &v, 75); /* an answer older than a minute */
		assert_non_null(strstr(b.data, "(guess)"));
		assert_non_null(strstr(b.data, "Guess: these loads are from slurmrestd's answer of 75 s ago"));
		buf_free(&b);
		/* a margin of 100% of the CPUs: the idle node's small load is not listed any more */
		build(&v, &e, 100);
		assert_int_equal(v.nover, num(busy, "cpus") / 2 + 3 > num(busy, "cpus") ? 1 : 0);
		expo_free(&e);
		json_decref(doc);
	}
	assert_true(tried >= 6); /* the states with both a busy and an idle node */
}

/* Bad data: named with why, never listed, never a load of 0. */
static void test_bad_data(void **unused)
{
	(void)unused;
	json_t *doc = load_json("slurm-25.11-rest/R2-busy-mix-draining"), *nodes = json_object_get(doc, "nodes");
	json_object_del(json_array_get(nodes, 0), "cpu_load");
	json_object_set_new(json_array_get(nodes, 1), "cpu_load", json_integer(-500));
	json_object_set_new(json_array_get(nodes, 2), "cpu_load", json_integer(1001LL * 16 * 100 + 100));
	json_t *nr = json_array_get(nodes, 3);
	json_object_set_new(nr, "cpu_load", json_integer(9900)); /* 99: would be listed if it reported */
	json_array_append_new(json_object_get(nr, "state"), json_string("NOT_RESPONDING"));
	json_t *nv = json_array_get(nodes, 4);
	json_object_set_new(nv, "cpu_load", json_integer(4294967294LL)); /* NO_VAL */
	json_object_set_new(nv, "name", json_string("<b>&n5"));
	check_doc(doc, LOADVIEW_MARGIN_PCT);
	struct expo e;
	struct loadview v;
	parse_doc(&e, doc);
	build(&v, &e, LOADVIEW_MARGIN_PCT);
	assert_int_equal(v.nover, 0);
	assert_int_equal(v.nloaded, 0);
	assert_int_equal(v.nunknown, 5);
	assert_null(expo_find(&e, "slurmrestd_node_cpu_load", strlen("slurmrestd_node_cpu_load")));
	static const char *const why[] = { "no cpu_load", "negative cpu_load", "over 1000 times its CPUs", "not responding",
					   "NO_VAL" };
	for (size_t i = 0; i < 5; i++)
		if (!strstr(v.unknown[i].why, why[i]))
			fail_msg("node %zu: why '%s', wanted '%s'", i, v.unknown[i].why, why[i]);
	struct buf b;
	buf_init(&b, 0);
	page(&b, &v, 5);
	assert_non_null(strstr(b.data, "Nodes whose load is unknown: 5"));
	assert_non_null(strstr(b.data, "&lt;b&gt;&amp;n5"));
	assert_null(strstr(b.data, "<b>&n5"));
	assert_null(strstr(b.data, ">0.00<"));
	buf_free(&b);
	assert_int_not_equal(loadview_unknown_hash(&v), 0);
	expo_free(&e);
	json_decref(doc);
}

/* A DOWN node (R4's n5: DOWN+DRAIN+NOT_RESPONDING, cpu_load 0) is named, not a load of 0. */
static void test_down_node(void **unused)
{
	(void)unused;
	json_t *doc = load_json("slurm-25.11-rest/R4-downdrain-fail-maint-reserved");
	struct expo e;
	struct loadview v;
	parse_doc(&e, doc);
	build(&v, &e, LOADVIEW_MARGIN_PCT);
	assert_null(sample_of(&e, "slurmrestd_node_cpu_load", "n5"));
	assert_int_equal(v.nunknown, 1);
	assert_string_equal(v.unknown[0].node, "n5");
	assert_non_null(strstr(v.unknown[0].why, "not responding"));
	expo_free(&e);
	json_decref(doc);
}

/* No slurmrestd /nodes: the page says so. */
static void test_not_read(void **unused)
{
	(void)unused;
	struct loadview v;
	const struct expo *ex[SRC_COUNT] = { 0 };
	loadview_build(&v, ex, LOADVIEW_MARGIN_PCT);
	assert_false(v.read);
	struct buf b;
	buf_init(&b, 0);
	page(&b, &v, -1);
	assert_non_null(strstr(b.data, "No load: slurmrestd's /nodes was not read"));
	buf_free(&b);
}

/* Every slot full, every string at its longest and all of it escaped ('"' is 6 bytes): the section stays
 * within the room the page keeps for it (test_nodeview.c's worst page is 405 KB of STATUS_PAGE_MAX). */
#define LOADVIEW_SECTION_MAX (90u * 1024)
static void test_worst_case_size(void **unused)
{
	(void)unused;
	struct loadview *v = calloc(1, sizeof(*v));
	assert_non_null(v);
	v->read = v->has_users = 1;
	v->nover = v->nunknown = 50000;
	for (size_t i = 0; i < LOADVIEW_MAX; i++) {
		struct loadview_node *o = &v->over[i];
		memset(o->node, '"', sizeof(o->node) - 1);
		memset(o->state, '"', sizeof(o->state) - 1);
		memset(o->users, '"', sizeof(o->users) - 1);
		o->load = o->excess = 1e12;
		o->alloc = o->cpus = o->margin = o->free_mem = 1e12;
		struct loadview_unknown *u = &v->unknown[i];
		memset(u->node, '"', sizeof(u->node) - 1);
		memset(u->state, '"', sizeof(u->state) - 1);
		memset(u->why, '"', sizeof(u->why) - 1);
	}
	struct buf b;
	buf_init(&b, 0);
	page(&b, v, 1e9);
	if (b.len - 1 > LOADVIEW_SECTION_MAX)
		fail_msg("the load section takes %zu bytes at its worst", b.len);
	assert_non_null(strstr(b.data, "and 49980 more"));
	buf_free(&b);
	free(v);
}

static void collect(void *ctx, const char *host, size_t n)
{
	struct buf *b = ctx;
	buf_printf(b, "%.*s ", (int)n, host);
}

/* Slurm's host lists, as a job's "nodes" gives them. */
static void test_hostlist(void **unused)
{
	(void)unused;
	struct buf b;
	buf_init(&b, 0);
	assert_int_equal(rest_hostlist_each("n[1-3,05-06],gpu01", 18, collect, &b), 6);
	assert_string_equal(b.data, "n1 n2 n3 n05 n06 gpu01 ");
	buf_free(&b);
	buf_init(&b, 0);
	assert_int_equal(rest_hostlist_each("rack1-n[8-10]-ib", 16, collect, &b), 3);
	assert_string_equal(b.data, "rack1-n8-ib rack1-n9-ib rack1-n10-ib ");
	static const char *const bad[] = { "n[1-", "n[3-1]", "n[1-100000]", "a[1]b[2]", "n]1", "n[[1]]", "n[1,,2]", "n[x]" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (rest_hostlist_each(bad[i], strlen(bad[i]), collect, &b) != -1)
			fail_msg("'%s' read as a host list", bad[i]);
	assert_int_equal(b.len, strlen("rack1-n8-ib rack1-n9-ib rack1-n10-ib ")); /* nothing called for them */
	buf_free(&b);
}

/* With /jobs: the users of a listed node's running jobs (25.11 R2: n3 runs alice's job 10 and carol's 16). */
static void test_users(void **unused)
{
	(void)unused;
	json_t *doc = load_json("slurm-25.11-rest/R2-busy-mix-draining");
	flatten(doc);
	json_object_set_new(json_array_get(json_object_get(doc, "nodes"), 2), "cpu_load", json_integer(1590));
	struct expo e, j;
	parse_doc(&e, doc);
	size_t len;
	char *text = tu_slurp("tests/fixtures/slurm-25.11-rest/R2-busy-mix-draining/rest_jobs.json", &len);
	assert_non_null(text);
	expo_init(&j);
	void *st = rest_begin_jobs(&j);
	rest_feed(st, &j, text, len);
	assert_int_equal(rest_end(st, &j), 0);
	free(text);
	const struct expo *ex[SRC_COUNT] = { 0 };
	ex[SRC_REST_NODES] = &e;
	struct loadview v;
	loadview_build(&v, ex, LOADVIEW_MARGIN_PCT);
	assert_int_equal(v.nover, 1);
	assert_false(v.has_users);
	struct buf b;
	buf_init(&b, 0);
	page(&b, &v, 5);
	assert_non_null(strstr(b.data, "slurmrestd's /jobs was not read"));
	buf_free(&b);
	ex[SRC_REST_JOBS] = &j;
	loadview_build(&v, ex, LOADVIEW_MARGIN_PCT);
	assert_true(v.has_users);
	assert_string_equal(v.over[0].node, "n3");
	assert_non_null(strstr(v.over[0].users, "alice"));
	assert_non_null(strstr(v.over[0].users, "carol"));
	assert_int_equal(strlen(v.over[0].users), strlen("alice,carol"));
	expo_free(&j);
	expo_free(&e);
	json_decref(doc);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_captured_states), cmocka_unit_test(test_no_disagreement),
		cmocka_unit_test(test_raised_and_idle), cmocka_unit_test(test_bad_data),
		cmocka_unit_test(test_down_node), cmocka_unit_test(test_not_read), cmocka_unit_test(test_worst_case_size),
		cmocka_unit_test(test_hostlist), cmocka_unit_test(test_users),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
