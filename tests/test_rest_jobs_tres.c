/* test_rest_jobs_tres.c: the /jobs reader's slurmrestd_jobs_tres (each job's TRES as squeue -O
 * tres-alloc prints them) and slurmrestd_jobs_memory_printed (each job's memory as squeue's %m
 * prints it, by unit), on small documents whose every value is known, and the peer rows that read
 * them rendered on those documents against what each peer computes from the squeue text of the
 * same jobs: rivosinc's memory rows (MemToFloat: M 1e6, G 1e9, T 1e12) for jobs of 1000 MB,
 * 2048 MB and 1048576 MB, which squeue prints "1000M", "2G" and "1T", and SckyzO's GPU rows (the
 * count of the first gres/gpu item of a running job's tres-alloc). The bad strings are in
 * test_restjson.c (test_tres_bad). */
#include "rest_fixture.h"

#include <math.h>

#include "expo.h"
#include "labels.h"
#include "mapping.h"
#include "payload.h"
#include "render.h"
#include "slurmrestd.h"
#include "source.h"

#define NV(x) "{\"set\": true, \"infinite\": false, \"number\": " #x "}"
#define UNSET "{\"set\": false, \"infinite\": false, \"number\": 0}"

/* A job of /jobs: id, state, user, account, memory_per_node (MB), array_task_string, the TRES strings */
#define JOB(id, st, user, acct, mb, tasks, alloc, req) \
	"{\"job_id\": " #id ", \"job_state\": [\"" st "\"], \"user_name\": \"" user "\", \"account\": \"" acct \
	"\", \"partition\": \"batch\", \"cpus\": " NV(1) ", \"memory_per_node\": " NV(mb) ", \"memory_per_cpu\": " UNSET \
	", \"array_task_string\": \"" tasks "\", \"tres_alloc_str\": \"" alloc "\", \"tres_req_str\": \"" req "\"}"

static const char jobs_doc[] = "{\"jobs\": ["
	JOB(1, "RUNNING", "u1", "a", 1000, "", "cpu=1,mem=1000M,node=1,billing=1", "cpu=1,mem=1000M,node=1,billing=1") ", "
	JOB(2, "RUNNING", "u2", "a", 2048, "", "cpu=4,mem=2G,node=1,billing=4,gres/gpu=2,gres/gpu:a100=2",
	    "cpu=4,mem=2G,node=1,billing=4,gres/gpu=2") ", "
	JOB(3, "RUNNING", "u3", "b", 1048576, "", "cpu=8,mem=1T,node=2,billing=8,gres/gpu=3", "cpu=8,mem=1T,node=2") ", "
	/* pending: squeue prints tres_req_str; an array record of 3 tasks, 2560 MB ("2.50G") each */
	JOB(4, "PENDING", "u1", "b", 2560, "1-3", "", "cpu=1,mem=2560M,node=1,billing=1,gres/gpu=1") ", "
	JOB(5, "SUSPENDED", "u2", "a", 0, "", "cpu=1,node=1,billing=1,gres/gpu=1", "") "]}";

static double value_where(const struct expo *e, const char *fam, const char *const *pairs, size_t npairs, size_t *n)
{
	const struct expo_family *f = expo_find(e, fam, strlen(fam));
	double s = 0;
	*n = 0;
	for (size_t i = 0; f && i < f->n; i++) {
		const struct expo_sample *x = &f->samples[i];
		size_t k = 0;
		for (; k < npairs; k++) {
			int j = labels_find(x->labels, x->nlabels, pairs[2 * k], strlen(pairs[2 * k]));
			const char *want = pairs[2 * k + 1];
			if (!*want ? j >= 0 : j < 0 || !slice_is_equal(x->labels[j].value, x->labels[j].vlen, want, strlen(want)))
				break;
		}
		if (k == npairs) {
			s += x->value;
			(*n)++;
		}
	}
	return s;
}

static void check_memory_text(double mb, double num, const char *unit)
{
	double got;
	char u[2];
	rest_squeue_memory(mb, &got, u);
	if (got != num || strcmp(u, unit))
		fail_msg("%.0f MB: %.17g '%s', want %.17g '%s'", mb, got, u, num, unit);
}

/* squeue's %m (convert_num_unit, CONVERT_NUM_UNIT_EXACT, into a 10-byte buffer), as Slurm 25.11
 * prints each: the largest binary unit that keeps the figure exact or a half, "%.2f" past that,
 * the text cut at 9 characters. */
static void test_squeue_memory_text(void **state)
{
	(void)state;
	check_memory_text(0, 0, "");
	check_memory_text(500, 500, "M");
	check_memory_text(1000, 1000, "M");
	check_memory_text(1023, 1023, "M");
	check_memory_text(1024, 1, "G");
	check_memory_text(1536, 1.5, "G");  /* "1.50G": a half is exact enough */
	check_memory_text(2048, 2, "G");
	check_memory_text(2560, 2.5, "G");
	check_memory_text(1048576, 1, "T");
	check_memory_text(1049088, 1, "T"); /* 1024.5 G -> "1.00T": squeue rounds */
	check_memory_text(1073741824, 1, "P");
	check_memory_text(123456789, 123456792, ""); /* (float) 123456792, "123456792M" cut to 9 */
	check_memory_text(99999, 99999, "M");
}

static void parse_doc(struct expo *e, const char *text, expo_keep_fn keep, void *ctx)
{
	assert_int_equal(tu_rest_parse(e, REST_JOBS, text, strlen(text), keep, ctx), 0);
}

static void test_families(void **state)
{
	(void)state;
	struct expo e;
	size_t n;
	parse_doc(&e, jobs_doc, NULL, NULL);
	const char *gpu_a[] = { "tres", "gres/gpu", "account", "a", "state", "RUNNING" };
	assert_true(value_where(&e, "slurmrestd_jobs_tres", gpu_a, 3, &n) == 2 && n == 1);
	const char *gpu_b[] = { "tres", "gres/gpu", "account", "b", "state", "RUNNING" };
	assert_true(value_where(&e, "slurmrestd_jobs_tres", gpu_b, 3, &n) == 3 && n == 1);
	const char *typed[] = { "tres", "gres/gpu:a100" };
	assert_true(value_where(&e, "slurmrestd_jobs_tres", typed, 1, &n) == 2 && n == 1);
	const char *pend[] = { "tres", "gres/gpu", "state", "PENDING", "user", "u1" }; /* 3 tasks x 1 */
	assert_true(value_where(&e, "slurmrestd_jobs_tres", pend, 3, &n) == 3 && n == 1);
	const char *susp[] = { "tres", "gres/gpu", "state", "SUSPENDED" };
	assert_true(value_where(&e, "slurmrestd_jobs_tres", susp, 2, &n) == 1 && n == 1);
	const char *nodes[] = { "tres", "node" };
	assert_true(value_where(&e, "slurmrestd_jobs_tres", nodes, 1, &n) == 1 + 1 + 2 + 3 + 1);
	const char *mem[] = { "tres", "mem" }; /* counted in a unit: not in the family */
	assert_true(value_where(&e, "slurmrestd_jobs_tres", mem, 1, &n) == 0 && n == 0);

	const char *m[] = { "unit", "M" }, *g[] = { "unit", "G" }, *t[] = { "unit", "T" }, *none[] = { "unit", "" };
	assert_true(value_where(&e, "slurmrestd_jobs_memory_printed", m, 1, &n) == 1000 && n == 1);
	assert_true(value_where(&e, "slurmrestd_jobs_memory_printed", g, 1, &n) == 2 + 3 * 2.5 && n == 2);
	assert_true(value_where(&e, "slurmrestd_jobs_memory_printed", t, 1, &n) == 1 && n == 1);
	assert_true(value_where(&e, "slurmrestd_jobs_memory_printed", none, 1, &n) == 0 && n == 1); /* job 5's "0" */
	expo_free(&e);
	/* a figure no uint64_t holds (or negative) leaves the job out of this family only */
	static const char odd[] = "{\"jobs\": [" JOB(1, "RUNNING", "u1", "a", 1e30, "", "", "") ", "
		JOB(2, "RUNNING", "u2", "a", -5, "", "", "") ", " JOB(3, "RUNNING", "u3", "a", 9.3e18, "", "", "") "]}";
	parse_doc(&e, odd, NULL, NULL);
	assert_null(expo_find(&e, "slurmrestd_jobs_memory_printed", 30));
	assert_null(expo_find(&e, "slurmrestd_jobs_tres", 20));
	const char *a[] = { "account", "a" };
	assert_true(value_where(&e, "slurmrestd_jobs", a, 1, &n) == 3 && n == 3);
	expo_free(&e);
}

static int no_tres(const char *name, size_t len, void *ctx)
{
	(void)ctx;
	return !slice_is_equal(name, len, "slurmrestd_jobs_tres", 20) &&
	       !slice_is_equal(name, len, "slurmrestd_jobs_memory_printed", 30);
}

/* A table that reads neither family (the legacy one) does not read the TRES strings: one it could
 * not read is no problem there, and the other families are as before. */
static void test_unread_unless_wanted(void **state)
{
	(void)state;
	static const char bad[] = "{\"jobs\": [" JOB(1, "RUNNING", "u1", "a", 1000, "", "cpu=1,gres/gpu", "") "]}";
	struct expo e;
	size_t n;
	parse_doc(&e, bad, no_tres, NULL);
	assert_null(expo_find(&e, "slurmrestd_jobs_tres", 20));
	assert_null(expo_find(&e, "slurmrestd_jobs_memory_printed", 30));
	const char *a[] = { "account", "a" };
	assert_true(value_where(&e, "slurmrestd_jobs", a, 1, &n) == 1);
	expo_free(&e);
	assert_int_equal(tu_rest_parse(&e, REST_JOBS, bad, strlen(bad), NULL, NULL), 1);
	expo_free(&e);
}

/* rivosinc's MemToFloat (exporter/utils.go, v1.7.0) on squeue's %m text: a float as is, else
 * number and unit M, G or T times 1e6, 1e9, 1e12; anything else an error (the job is skipped). */
static double mem_to_float(const char *text)
{
	char *end;
	double v = strtod(text, &end);
	if (!*end)
		return v;
	if (!strcmp(end, "M"))
		return v * 1e6;
	if (!strcmp(end, "G"))
		return v * 1e9;
	if (!strcmp(end, "T"))
		return v * 1e12;
	return NAN;
}

/* The daemon's answer for table path on P4's answers with /jobs replaced by doc. */
static void render_doc(const char *path, const char *doc, struct expo *served, char **body)
{
	struct buf out;
	struct mapping *m = tu_load(path);
	struct payload *p[SRC_COUNT] = { 0 };
	for (int ep = 0; ep < SRC_COUNT; ep++) {
		if (ep == SRC_REST_ASSOCIATIONS) /* P4 was captured without slurmdbd's associations: not given */
			continue;
		if (ep == SRC_REST_JOBS) {
			p[ep] = payload_new(SRC_REST_JOBS, 0, mapping_has_input, m);
			payload_feed(p[ep], doc, strlen(doc), 1 << 20);
			payload_finish(p[ep]);
		} else {
			p[ep] = payload_replay("tests/fixtures/peers-25.11/P4-licenses-gpu-full", (enum source_id)ep, 1 << 28, 0,
					       mapping_has_input, m);
		}
		if (!p[ep]->ok)
			fail_msg("%s: %s", sources[ep].name, p[ep]->reason);
	}
	const struct render_in in = { .m = m, .flags = ROW_FLAG_REST_JOBS, .p = (const struct payload *const *)p };
	struct render_result res;
	size_t len;
	buf_init(&out, 0);
	assert_int_equal(render_run(&in, &out, &res), 200);
	*body = buf_steal(&out, &len);
	expo_init(served);
	assert_int_equal(expo_parse(served, *body, len, EXPO_STRICT), 0);
	render_result_free(&res);
	for (int ep = 0; ep < SRC_COUNT; ep++)
		payload_unref(p[ep]);
	mapping_free(m);
}

static void expect(const struct expo *e, const char *fam, const char *const *pairs, size_t npairs, double want)
{
	size_t n;
	double v = value_where(e, fam, pairs, npairs, &n);
	if (n != 1 || v != want)
		fail_msg("%s{%s=%s...}: %zu series, %.17g; want one, %.17g", fam, pairs[0], pairs[1], n, v, want);
}

/* Each job's %m text as squeue 25.11 prints it (1000 MB "1000M", 2048 MB "2G", 1048576 MB "1T",
 * 2560 MB "2.50G", 0 "0") read by rivosinc's rule and summed by its labels: the rows give the same. */
static void test_rivosinc_memory_rows(void **state)
{
	(void)state;
	const double j1 = mem_to_float("1000M"), j2 = mem_to_float("2G"), j3 = mem_to_float("1T"),
		     j4 = 3 * mem_to_float("2.50G"), j5 = mem_to_float("0");
	assert_true(j1 == 1e9 && j2 == 2e9 && j3 == 1e12 && j4 == 7.5e9 && j5 == 0);
	struct expo e;
	char *body;
	render_doc("mappings/rivosinc-slurm-exporter.json", jobs_doc, &e, &body);
	const char *u1r[] = { "username", "u1", "state", "RUNNING" }, *u2r[] = { "username", "u2", "state", "RUNNING" },
		   *u3r[] = { "username", "u3", "state", "RUNNING" }, *u1p[] = { "username", "u1", "state", "PENDING" };
	expect(&e, "slurm_user_mem_alloc", u1r, 2, j1);
	expect(&e, "slurm_user_mem_alloc", u2r, 2, j2);
	expect(&e, "slurm_user_mem_alloc", u3r, 2, j3);
	expect(&e, "slurm_user_mem_alloc", u1p, 2, j4);
	const char *ar[] = { "account", "a", "state", "RUNNING" }, *br[] = { "account", "b", "state", "RUNNING" },
		   *bp[] = { "account", "b", "state", "PENDING" };
	expect(&e, "slurm_account_job_state_mem_alloc", ar, 2, j1 + j2);
	expect(&e, "slurm_account_job_state_mem_alloc", br, 2, j3);
	expect(&e, "slurm_account_job_state_mem_alloc", bp, 2, j4);
	const char *feature[] = { "feature", "" };
	expect(&e, "slurm_feature_mem_alloc", feature, 1, j1 + j2 + j3 + j4 + j5);
	/* rivosinc prints a value only when > 0: the suspended job's "0" gives no series */
	const char *u2s[] = { "username", "u2", "state", "SUSPENDED" };
	size_t n;
	value_where(&e, "slurm_user_mem_alloc", u2s, 2, &n);
	assert_int_equal(n, 0);
	assert_int_equal(expo_find(&e, "slurm_user_mem_alloc", 20)->n, 4);
	expo_free(&e);
	free(body);
}

/* SckyzO: for each RUNNING job, the count after the first gres/gpu (typed or not) of squeue -O
 * tres-alloc's text, summed per account and per user; only when > 0. Job 2 lists gres/gpu=2 then
 * gres/gpu:a100=2 (2, not 4); the pending and suspended jobs' GPUs do not count. */
static void test_sckyzo_gpu_rows(void **state)
{
	(void)state;
	struct expo e;
	char *body;
	render_doc("mappings/sckyzo-slurm-exporter.json", jobs_doc, &e, &body);
	const char *a[] = { "account", "a" }, *b[] = { "account", "b" }, *u2[] = { "user", "u2" }, *u3[] = { "user", "u3" };
	expect(&e, "slurm_account_gpus_running", a, 1, 2);
	expect(&e, "slurm_account_gpus_running", b, 1, 3);
	expect(&e, "slurm_user_gpus_running", u2, 1, 2);
	expect(&e, "slurm_user_gpus_running", u3, 1, 3);
	assert_int_equal(expo_find(&e, "slurm_account_gpus_running", 26)->n, 2);
	assert_int_equal(expo_find(&e, "slurm_user_gpus_running", 23)->n, 2); /* u1 runs no GPU: no series */
	expo_free(&e);
	free(body);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_squeue_memory_text),
		cmocka_unit_test(test_families),
		cmocka_unit_test(test_unread_unless_wanted),
		cmocka_unit_test(test_rivosinc_memory_rows),
		cmocka_unit_test(test_sckyzo_gpu_rows),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
