/* test_rest_assoc.c: the slurmrestd reader's associations (/slurmdb/{version}/associations): every row
 * `sacctmgr show assoc format=User,Account,GrpCPU,GrpMem,GrpJobs,GrpSubmit --parsable2` printed at the
 * same instant (tests/fixtures/peers-25.11/P8, P9 and tests/fixtures/slurmdb-25.11-assoc) equals the
 * families, column for column, an empty column being no series; a limit of 0 is a series; the
 * answers that are not what they should be are refused with their reason (cut, wrong types, huge or
 * fractional counts, missing fields, an association or a TRES twice, slurmrestd's errors[]). */
#include "rest_fixture.h"

#include <math.h>

static size_t parse_keep(struct expo *e, const char *text, size_t len, expo_keep_fn keep, void *ctx)
{
	return tu_rest_parse(e, REST_ASSOCIATIONS, text, len, keep, ctx);
}

static size_t parse(struct expo *e, const char *text)
{
	return parse_keep(e, text, strlen(text), NULL, NULL);
}

/* The series of fam whose labels account and user are these (user "": none), or NULL */
static const struct expo_sample *assoc_sample(const struct expo *e, const char *fam, const char *account,
					      const char *user)
{
	const struct expo_family *f = expo_find(e, fam, strlen(fam));
	for (size_t i = 0; f && i < f->n; i++) {
		const struct expo_sample *s = &f->samples[i];
		int a = labels_find(s->labels, s->nlabels, "account", 7), u = labels_find(s->labels, s->nlabels, "user", 4);
		int t = labels_find(s->labels, s->nlabels, "tres", 4);
		if (a >= 0 && slice_is_equal(s->labels[a].value, s->labels[a].vlen, account, strlen(account)) &&
		    (u < 0 ? !*user : slice_is_equal(s->labels[u].value, s->labels[u].vlen, user, strlen(user))) && t < 0)
			return s;
	}
	return NULL;
}

/* One column of sacctmgr's row against its family: empty is no series, else the value */
static void check_column(const struct expo *e, const char *where, const char *fam, const char *account, const char *user,
			 const char *col)
{
	const struct expo_sample *s = assoc_sample(e, fam, account, user);
	if (!*col && s)
		fail_msg("%s: %s/%s: sacctmgr prints nothing, %s %g", where, account, user, fam, s->value);
	if (*col && !s)
		fail_msg("%s: %s/%s: sacctmgr prints %s, no %s", where, account, user, col, fam);
	if (*col && s->value != strtod(col, NULL))
		fail_msg("%s: %s/%s: sacctmgr prints %s, %s %.17g", where, account, user, col, fam, s->value);
}

/* sacctmgr's rows (User|Account|GrpCPU|GrpMem|GrpJobs|GrpSubmit) against the answer's families;
 * returns the rows */
static size_t check_sacctmgr(const char *where, const char *json, size_t len, const char *text)
{
	static const char *const fams[4] = { "slurmrestd_association_grp_cpus", "slurmrestd_association_grp_memory",
					     "slurmrestd_association_grp_jobs", "slurmrestd_association_grp_submit_jobs" };
	struct expo e;
	assert_int_equal(parse_keep(&e, json, len, NULL, NULL), 0);
	size_t rows = 0;
	for (const char *p = text; *p;) {
		const char *nl = strchr(p, '\n');
		size_t n = nl ? (size_t)(nl - p) : strlen(p);
		char line[512], *col[6];
		assert_true(n < sizeof(line));
		memcpy(line, p, n);
		line[n] = '\0';
		char *q = line;
		for (int i = 0; i < 6; i++) {
			col[i] = q;
			q += strcspn(q, "|");
			if (*q)
				*q++ = '\0';
		}
		if (!assoc_sample(&e, "slurmrestd_association_info", col[1], col[0]))
			fail_msg("%s: sacctmgr's row %s/%s is no association", where, col[1], col[0]);
		for (int i = 0; i < 4; i++)
			check_column(&e, where, fams[i], col[1], col[0], col[2 + i]);
		rows++;
		p += n + (nl != NULL);
	}
	assert_int_equal(tu_family_size(&e, "slurmrestd_association_info"), rows);
	expo_free(&e);
	return rows;
}

/* The file of rivosinc's sacctmgr command in a peers-25.11 state (_cli/rivosinc/argv.tsv names it) */
static char *sacctmgr_of_state(const char *dir)
{
	char path[600], *argv = NULL, *out = NULL;
	snprintf(path, sizeof(path), "%s/_cli/rivosinc/argv.tsv", dir);
	argv = tu_slurp(path, NULL);
	assert_non_null(argv);
	const char *line = strstr(argv, "[\"sacctmgr\", \"show\", \"assoc\"");
	assert_non_null(line);
	const char *file = strchr(line, '\t');
	assert_non_null(file);
	file++;
	snprintf(path, sizeof(path), "%s/_cli/rivosinc/%.*s", dir, (int)strcspn(file, "\t\n"), file);
	out = tu_slurp(path, NULL);
	assert_non_null(out);
	free(argv);
	return out;
}

/* Every row sacctmgr printed equals the answer's association, on the three captures */
static void test_associations_equal_sacctmgr(void **state)
{
	(void)state;
	static const char *const dirs[] = { "tests/fixtures/peers-25.11/P8-account-limits",
					    "tests/fixtures/peers-25.11/P9-limits-changed-node-down",
					    "tests/fixtures/slurmdb-25.11-assoc" };
	size_t rows = 0;
	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		char path[600];
		size_t len;
		snprintf(path, sizeof(path), "%s/rest_associations.json", dirs[i]);
		char *json = tu_slurp(path, &len), *text;
		assert_non_null(json);
		if (strstr(dirs[i], "peers-25.11")) {
			text = sacctmgr_of_state(dirs[i]);
		} else {
			snprintf(path, sizeof(path), "%s/sacctmgr.txt", dirs[i]);
			text = tu_slurp(path, NULL);
			assert_non_null(text);
		}
		rows += check_sacctmgr(dirs[i], json, len, text);
		free(json);
		free(text);
	}
	assert_int_equal(rows, 15 + 15 + 14);
}

/* The sample's families, value for value: a limit of 0 a series, an unset one none, GrpTRES whole */
static void test_sample_families(void **state)
{
	(void)state;
	size_t len;
	char *json = tu_slurp("tests/fixtures/slurmdb-25.11-assoc/rest_associations.json", &len);
	struct expo e;
	assert_int_equal(parse_keep(&e, json, len, NULL, NULL), 0);
	assert_int_equal(tu_family_size(&e, "slurmrestd_association_info"), 14);
	const struct expo_sample *s = assoc_sample(&e, "slurmrestd_association_grp_cpus", "frozen", "");
	assert_non_null(s);
	assert_true(s->value == 0);
	assert_null(assoc_sample(&e, "slurmrestd_association_grp_memory", "geology", "")); /* cleared */
	assert_null(assoc_sample(&e, "slurmrestd_association_grp_jobs", "chemistry", ""));
	assert_true(assoc_sample(&e, "slurmrestd_association_grp_memory", "biology", "")->value == 20480);
	assert_true(assoc_sample(&e, "slurmrestd_association_grp_cpus", "physics", "alice")->value == 2);
	/* astro's parent, and the cluster on every series */
	const struct expo_family *info = expo_find(&e, "slurmrestd_association_info", 27);
	int astro = 0;
	for (size_t i = 0; i < info->n; i++) {
		const struct expo_sample *x = &info->samples[i];
		int a = labels_find(x->labels, x->nlabels, "account", 7), p = labels_find(x->labels, x->nlabels, "parent", 6);
		int u = labels_find(x->labels, x->nlabels, "user", 4), c = labels_find(x->labels, x->nlabels, "cluster", 7);
		assert_true(c >= 0 && slice_is_equal(x->labels[c].value, x->labels[c].vlen, "peers", 5));
		if (u < 0 && slice_is_equal(x->labels[a].value, x->labels[a].vlen, "astro", 5)) {
			assert_true(p >= 0 && slice_is_equal(x->labels[p].value, x->labels[p].vlen, "physics", 7));
			astro++;
		}
	}
	assert_int_equal(astro, 1);
	/* every TRES of GrpTRES: biology's gres/gpu beside its mem */
	const struct expo_family *tres = expo_find(&e, "slurmrestd_association_grp_tres", 31);
	int gpu = 0;
	for (size_t i = 0; tres && i < tres->n; i++) {
		const struct expo_sample *x = &tres->samples[i];
		int t = labels_find(x->labels, x->nlabels, "tres", 4);
		if (slice_is_equal(x->labels[t].value, x->labels[t].vlen, "gres/gpu", 8)) {
			assert_true(x->value == 2);
			gpu++;
		}
	}
	assert_int_equal(gpu, 1);
	assert_int_equal(tu_family_size(&e, "slurmrestd_association_grp_tres"), 10);
	expo_free(&e);
	free(json);
}

#define DOC(items) "{\"associations\": [" items "], \"meta\": {}, \"errors\": [], \"warnings\": []}"
#define NV(x) "{\"set\": true, \"infinite\": false, \"number\": " #x "}"
#define UNSET "{\"set\": false, \"infinite\": true, \"number\": 0}"
#define ASSOC_OF(acct, user, max) "{\"account\": \"" acct "\", \"cluster\": \"c\", \"user\": \"" user "\", " \
				  "\"partition\": \"\", \"parent_account\": \"root\", \"max\": " max "}"
#define MAX(jobs, submit, tres) "{\"jobs\": {\"per\": {\"count\": " jobs ", \"submitted\": " submit "}}, " \
				"\"tres\": {\"total\": [" tres "], \"group\": {\"active\": [{\"type\": \"cpu\", \"count\": \"x\"}]}}}"
#define TRES(type, name, count) "{\"type\": \"" type "\", \"name\": \"" name "\", \"id\": 1, \"count\": " #count "}"

/* One association read: its grp_jobs value (NaN: none) and the number of its grp_tres series */
static void one(const char *doc, double *jobs, size_t *ntres)
{
	struct expo e;
	assert_int_equal(parse(&e, doc), 0);
	const struct expo_sample *s = assoc_sample(&e, "slurmrestd_association_grp_jobs", "a", "");
	*jobs = s ? s->value : NAN;
	*ntres = tu_family_size(&e, "slurmrestd_association_grp_tres");
	expo_free(&e);
}

/* The forms slurmrestd writes: {set, infinite, number} in any key order, complex mode's "Infinity"
 * and null, a TRES count of -1 or -2 (INFINITE64, NO_VAL64) as unset, members in any order; a
 * deeper list nothing reads (GrpTRESRunMins, with a string count here) is not read */
static void test_forms_read(void **state)
{
	(void)state;
	double jobs;
	size_t ntres;
	one(DOC(ASSOC_OF("a", "", MAX(NV(7), UNSET, TRES("cpu", "", 4)))), &jobs, &ntres);
	assert_true(jobs == 7 && ntres == 1);
	one(DOC(ASSOC_OF("a", "", MAX("{\"number\": 0, \"set\": true}", "null", "{\"count\": 3, \"type\": \"mem\"}"))), &jobs,
	    &ntres);
	assert_true(jobs == 0 && ntres == 1);
	one(DOC(ASSOC_OF("a", "", MAX("\"Infinity\"", "4294967293", TRES("cpu", "", -1) "," TRES("mem", "", -2)))), &jobs,
	    &ntres);
	assert_true(isnan(jobs) && ntres == 0);
	one(DOC(ASSOC_OF("a", "", MAX(UNSET, UNSET, ""))), &jobs, &ntres);
	assert_true(isnan(jobs) && ntres == 0);
	one(DOC(ASSOC_OF("a", "", MAX("{\"set\": false, \"infinite\": false, \"number\": 5}", UNSET, ""))), &jobs, &ntres);
	assert_true(isnan(jobs)); /* NO_VAL */
	/* GrpTRES counts up to 2^53, license and gres TRES named type/name */
	struct expo e;
	assert_int_equal(parse(&e, DOC(ASSOC_OF("a", "u", MAX(UNSET, UNSET,
				    TRES("cpu", "", 9007199254740992) "," TRES("license", "matlab", 3))))), 0);
	assert_true(assoc_sample(&e, "slurmrestd_association_grp_cpus", "a", "u")->value == 9007199254740992.0);
	const struct expo_family *t = expo_find(&e, "slurmrestd_association_grp_tres", 31);
	assert_non_null(t);
	assert_int_equal(t->n, 2);
	int k = labels_find(t->samples[1].labels, t->samples[1].nlabels, "tres", 4);
	assert_true(slice_is_equal(t->samples[1].labels[k].value, t->samples[1].labels[k].vlen, "license/matlab", 14));
	expo_free(&e);
}

/* No association (?cluster=NAME of none: a warning, no error): usable, every family declared empty */
static void test_none_declared(void **state)
{
	(void)state;
	struct expo e;
	assert_int_equal(parse(&e, "{\"associations\": [], \"warnings\": [{\"description\": \"slurmdb_associations_get() "
				   "found nothing\", \"source\": \"_dump_assoc_cond\"}], \"errors\": []}"), 0);
	static const char *const fams[] = { "slurmrestd_association_info", "slurmrestd_association_grp_cpus",
					    "slurmrestd_association_grp_memory", "slurmrestd_association_grp_tres",
					    "slurmrestd_association_grp_jobs", "slurmrestd_association_grp_submit_jobs" };
	for (size_t i = 0; i < sizeof(fams) / sizeof(fams[0]); i++) {
		const struct expo_family *f = expo_find(&e, fams[i], strlen(fams[i]));
		assert_non_null(f);
		assert_true(f->declared && !f->n);
	}
	expo_free(&e);
}

/* Each refused answer, with the start of its reason */
static void refused(const char *doc, size_t len, const char *why)
{
	struct expo e;
	size_t bad = parse_keep(&e, doc, len, NULL, NULL);
	if (!bad || !e.nerrors || !strstr(e.errors[0].reason, why))
		fail_msg("refused %zu, reason '%s', not '%s': %.200s", bad, e.nerrors ? e.errors[0].reason : "", why, doc);
	expo_free(&e);
}

#define REFUSED(doc, why) refused(doc, strlen(doc), why)

static void test_refused(void **state)
{
	(void)state;
	static const char good[] = DOC(ASSOC_OF("a", "", MAX(NV(7), UNSET, TRES("cpu", "", 4))));
	refused(good, sizeof(good) - 10, "premature EOF"); /* cut */
	REFUSED("{\"associations\": {}}", "'associations' is an object, not an array");
	REFUSED("{\"meta\": {}}", "no 'associations' array");
	REFUSED("{\"associations\": [], \"errors\": [{\"error\": \"Unable to query slurmdbd\", \"description\": \"x\"}]}",
		"slurmrestd reported 1 error(s): Unable to query slurmdbd");
	REFUSED(DOC("{\"user\": \"\", \"max\": " MAX(UNSET, UNSET, "") "}"), "an association without an account");
	REFUSED(DOC("{\"account\": \"a\", \"max\": " MAX(UNSET, UNSET, "") "}"), "association account=a without a 'user'");
	REFUSED(DOC(ASSOC_OF("a", "u", MAX(UNSET, UNSET, "")) "," ASSOC_OF("a", "u", MAX(UNSET, UNSET, ""))),
		"association account=a cluster=c user=u listed twice");
	REFUSED(DOC(ASSOC_OF("a", "", MAX("\"10\"", UNSET, ""))), "'max.jobs.per.count' is the string '10'");
	REFUSED(DOC(ASSOC_OF("a", "", MAX(NV(1e300), UNSET, ""))), "'max.jobs.per.count' 1.0000000000000001e+300 is no count");
	REFUSED(DOC(ASSOC_OF("a", "", MAX(UNSET, NV(-1), ""))), "'max.jobs.per.submitted' -1 is no count");
	REFUSED(DOC(ASSOC_OF("a", "", MAX(UNSET, NV(2.5), ""))), "'max.jobs.per.submitted' 2.5 is no count");
	REFUSED(DOC(ASSOC_OF("a", "", MAX(NV(4294967294), UNSET, ""))), "is no count (0 to 4294967293)");
	REFUSED(DOC(ASSOC_OF("a", "", MAX(UNSET, UNSET, TRES("cpu", "", -3)))), "count -3 is no count");
	REFUSED(DOC(ASSOC_OF("a", "", MAX(UNSET, UNSET, TRES("cpu", "", 9007199254740994)))), "is no count (-2 to 2^53)");
	REFUSED(DOC(ASSOC_OF("a", "", MAX(UNSET, UNSET, TRES("cpu", "", 1.5)))), "count 1.5 is no count");
	REFUSED(DOC(ASSOC_OF("a", "", MAX(UNSET, UNSET, "{\"type\": \"cpu\", \"count\": \"4\"}"))),
		"'max.tres.total[].count' is a string");
	REFUSED(DOC(ASSOC_OF("a", "", MAX(UNSET, UNSET, "{\"type\": 1, \"count\": 4}"))), "'max.tres.total[].type' is a number");
	REFUSED(DOC(ASSOC_OF("a", "", MAX(UNSET, UNSET, "{\"count\": 4}"))), "without a type");
	REFUSED(DOC(ASSOC_OF("a", "", MAX(UNSET, UNSET, "{\"type\": \"cpu\"}"))), "TRES 'cpu' of an association's max.tres.total without a count");
	REFUSED(DOC(ASSOC_OF("a", "", MAX(UNSET, UNSET, "{\"type\": \"cpu\", \"count\": 1, \"count\": 2}"))),
		"'max.tres.total[].count' given twice");
	REFUSED(DOC(ASSOC_OF("a", "", MAX(UNSET, UNSET, TRES("cpu", "", 1) "," TRES("cpu", "", 2)))), "TRES 'cpu' given twice");
	REFUSED(DOC(ASSOC_OF("a", "", MAX(UNSET, UNSET, "4"))), "'max.tres.total[]' is a number, not an object");
	REFUSED(DOC(ASSOC_OF("a", "", "{\"tres\": {\"total\": \"cpu=4\"}}")), "'max.tres.total' is a string, not an array");
	REFUSED(DOC(ASSOC_OF("a", "", "{\"jobs\": {\"per\": {\"count\": " NV(1) ", \"count\": " NV(2) "}}}")),
		"'max.jobs.per.count' given twice");
	REFUSED(DOC("{\"account\": \"a\", \"account\": \"b\", \"user\": \"\"}"), "'account' given twice");
	REFUSED(DOC("[]"), "item 0 of 'associations' is an array, not an object");
}

/* Over-long strings and too many TRES are refused without being held */
static void test_bounds(void **state)
{
	(void)state;
	struct buf b;
	buf_init(&b, 0);
	static const char head[] = "{\"associations\": [{\"user\": \"\", \"account\": \"";
	static const char tres[] = "{\"associations\": [{\"user\": \"\", \"account\": \"a\", \"max\": {\"tres\": {\"total\": [";
	buf_append(&b, head, strlen(head));
	for (size_t i = 0; i < 70000; i++)
		buf_append(&b, "x", 1);
	buf_append(&b, "\"}]}", 4);
	refused(b.data, b.len, "'account' is longer than 65536 bytes");
	b.len = 0;
	buf_append(&b, tres, strlen(tres));
	for (size_t i = 0; i < 1025; i++) {
		char item[80];
		int n = snprintf(item, sizeof(item), "%s{\"type\": \"license\", \"name\": \"l%zu\", \"count\": 1}", i ? "," : "", i);
		buf_append(&b, item, (size_t)n);
	}
	buf_append(&b, "]}}}]}", 6);
	refused(b.data, b.len, "an association with more than 1024 TRES");
	buf_free(&b);
}

/* What a table does not read is not made: grp_tres' labels are not built when only grp_cpus is kept */
static int keep_cpus(const char *name, size_t n, void *ctx)
{
	(void)ctx;
	return slice_is_equal(name, n, "slurmrestd_association_grp_cpus", 31);
}

static void test_keep(void **state)
{
	(void)state;
	size_t len;
	char *json = tu_slurp("tests/fixtures/peers-25.11/P8-account-limits/rest_associations.json", &len);
	struct expo e;
	assert_int_equal(parse_keep(&e, json, len, keep_cpus, NULL), 0);
	assert_int_equal(e.nfams, 1);
	assert_int_equal(tu_family_size(&e, "slurmrestd_association_grp_cpus"), 5);
	expo_free(&e);
	free(json);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_associations_equal_sacctmgr),
		cmocka_unit_test(test_sample_families),
		cmocka_unit_test(test_forms_read),
		cmocka_unit_test(test_none_declared),
		cmocka_unit_test(test_refused),
		cmocka_unit_test(test_bounds),
		cmocka_unit_test(test_keep),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
