/* test_rest_nodepart.c: the slurmrestd reader's node x partition families
 * (slurmrestd_partition_node_*), slurmrestd_node_weight, slurmrestd_jobs_memory and _records, the licenses and /diag's lists, on small
 * documents whose every value is known (the real captures are checked through the schemas in
 * test_peers.c and test_golden.c). */
#include "rest_fixture.h"

#include <math.h>

/* The sum of fam's samples with label name=value (value NULL: every sample); *n counts them. */
static double sum_of(const struct expo *e, const char *fam, const char *name, const char *value, size_t *n)
{
	const struct expo_family *f = expo_find(e, fam, strlen(fam));
	double s = 0;
	*n = 0;
	for (size_t i = 0; f && i < f->n; i++) {
		const struct expo_sample *x = &f->samples[i];
		int k = value ? labels_find(x->labels, x->nlabels, name, strlen(name)) : 0;
		if (value && (k < 0 || !slice_is_equal(x->labels[k].value, x->labels[k].vlen, value, strlen(value))))
			continue;
		s += x->value;
		(*n)++;
	}
	return s;
}

#define NV(x) "{\"set\": true, \"infinite\": false, \"number\": " #x "}"
#define UNSET "{\"set\": false, \"infinite\": false, \"number\": 0}"

/* a: mixed, in batch and gpu; b: drained (its free CPUs "other"), in batch, without free memory,
 * weight or a load reading. */
static const char nodes_doc[] =
	"{\"nodes\": ["
	"{\"name\": \"a\", \"state\": [\"MIXED\"], \"cpus\": 8, \"alloc_cpus\": 2, \"real_memory\": 1000,"
	" \"alloc_memory\": 700, \"gres\": \"gpu:a100:4\", \"gres_used\": \"gpu:a100:3(IDX:0-2)\","
	" \"active_features\": [\"zen\", \"gpu\", \"amd\"], \"reason\": \"x\", \"features\": [\"ignored\"],"
	" \"free_mem\": " NV(600) ", \"cpu_load\": 150, \"weight\": 5, \"partitions\": [\"batch\", \"gpu\"]},"
	"{\"name\": \"b\", \"state\": [\"IDLE\", \"DRAIN\"], \"cpus\": 4, \"alloc_cpus\": 0, \"real_memory\": 500,"
	" \"free_mem\": " UNSET ", \"cpu_load\": 4294967294, \"partitions\": [\"batch\"]}"
	"], \"errors\": []}";

static void test_node_partition_series(void **state)
{
	(void)state;
	struct expo e;
	size_t n;
	tu_rest_parse_ok(&e, REST_NODES, nodes_doc);
	assert_true(sum_of(&e, "slurmrestd_partition_node_state", "partition", "batch", &n) == 2 && n == 2);
	assert_true(sum_of(&e, "slurmrestd_partition_node_state", "partition", "gpu", &n) == 1 && n == 1);
	assert_true(sum_of(&e, "slurmrestd_partition_node_state", "state", "drained", &n) == 1 && n == 1);
	assert_true(sum_of(&e, "slurmrestd_partition_node_cpus", "partition", "batch", &n) == 12 && n == 2);
	assert_true(sum_of(&e, "slurmrestd_partition_node_cpus", "partition", "gpu", &n) == 8 && n == 1);
	assert_true(sum_of(&e, "slurmrestd_partition_node_cpus_alloc", "partition", "batch", &n) == 2);
	/* b's 4 free CPUs are "other" (DRAIN), not idle, as sinfo's %C */
	assert_true(sum_of(&e, "slurmrestd_partition_node_cpus_idle", "partition", "batch", &n) == 6 && n == 2);
	assert_true(sum_of(&e, "slurmrestd_partition_node_memory", "partition", "batch", &n) == 1500 && n == 2);
	/* what b does not report has no sample, never a 0 */
	assert_true(sum_of(&e, "slurmrestd_partition_node_memory_free", "partition", "batch", &n) == 600 && n == 1);
	assert_true(sum_of(&e, "slurmrestd_partition_node_cpu_load", "partition", "batch", &n) == 1.5 && n == 1);
	assert_true(sum_of(&e, "slurmrestd_partition_node_weight", "partition", "batch", &n) == 5 && n == 1);
	assert_true(sum_of(&e, "slurmrestd_node_weight", NULL, NULL, &n) == 5 && n == 1);
	/* b's free CPUs are its "other" ones; a's none */
	assert_true(sum_of(&e, "slurmrestd_partition_node_cpus_other", "node", "b", &n) == 4 && n == 1);
	assert_true(sum_of(&e, "slurmrestd_partition_node_cpus_other", "node", "a", &n) == 0 && n == 2);
	/* a's allocated memory and GPUs in each of its partitions; b gives no alloc_memory (no sample)
	 * and has no GPUs (0, as slurmrestd_node_gpus) */
	assert_true(sum_of(&e, "slurmrestd_partition_node_memory_alloc", "partition", "gpu", &n) == 700 && n == 1);
	assert_true(sum_of(&e, "slurmrestd_partition_node_memory_alloc", "partition", "batch", &n) == 700 && n == 1);
	assert_true(sum_of(&e, "slurmrestd_partition_node_gpus", "partition", "batch", &n) == 4 && n == 2);
	assert_true(sum_of(&e, "slurmrestd_partition_node_gpus_used", "partition", "gpu", &n) == 3 && n == 1);
	assert_true(sum_of(&e, "slurmrestd_partition_node_gpus_used", "node", "b", &n) == 0 && n == 1);
	/* sinfo's %b: a's active features sorted (read around another string, its reason), in each of
	 * its partitions; b has none: no label */
	assert_true(sum_of(&e, "slurmrestd_partition_node_active_features", "active_features", "amd,gpu,zen", &n) == 2 &&
		    n == 2);
	assert_true(sum_of(&e, "slurmrestd_partition_node_active_features", "node", "b", &n) == 1 && n == 1);
	const struct expo_family *af = expo_find(&e, "slurmrestd_partition_node_active_features", 41);
	assert_non_null(af);
	assert_int_equal(af->n, 3);
	for (size_t i = 0; i < af->n; i++) {
		const struct expo_sample *x = &af->samples[i];
		int has = labels_find(x->labels, x->nlabels, "active_features", 15) >= 0;
		assert_int_equal(x->nlabels, 3 + has);
		assert_true(labels_find(x->labels, x->nlabels, "state", 5) >= 0);
	}
	/* each series is labelled node, partition, state */
	const struct expo_family *f = expo_find(&e, "slurmrestd_partition_node_cpus", strlen("slurmrestd_partition_node_cpus"));
	assert_non_null(f);
	assert_int_equal(f->n, 3);
	for (size_t i = 0; i < f->n; i++) {
		assert_int_equal(f->samples[i].nlabels, 3);
		assert_true(labels_find(f->samples[i].labels, 3, "node", 4) >= 0);
		assert_true(labels_find(f->samples[i].labels, 3, "partition", 9) >= 0);
		assert_true(labels_find(f->samples[i].labels, 3, "state", 5) >= 0);
	}
	expo_free(&e);
}

/* squeue's %m: memory_per_node, else memory_per_cpu as is, else 0; a pending array record per task. */
static const char jobs_doc[] =
	"{\"jobs\": ["
	"{\"job_id\": 1, \"job_state\": [\"RUNNING\"], \"user_name\": \"u\", \"account\": \"x\", \"partition\": \"p\","
	" \"cpus\": " NV(2) ", \"memory_per_node\": " NV(2000) ", \"memory_per_cpu\": " UNSET "},"
	"{\"job_id\": 2, \"job_state\": [\"PENDING\"], \"user_name\": \"u\", \"account\": \"y\", \"partition\": \"p\","
	" \"cpus\": " NV(1) ", \"memory_per_node\": " UNSET ", \"memory_per_cpu\": " NV(300) ","
	" \"array_task_string\": \"1-3\"},"
	"{\"job_id\": 3, \"job_state\": [\"PENDING\"], \"user_name\": \"u\", \"account\": \"z\", \"partition\": \"p\","
	" \"cpus\": " NV(1) "}"
	"], \"errors\": []}";

/* sshare's RawShares, NormShares, RawUsage and NormUsage per row; a number slurmrestd says is not
 * set has no sample (root's shares). */
static const char shares_doc[] =
	"{\"shares\": {\"shares\": ["
	"{\"name\": \"root\", \"parent\": \"\", \"type\": [\"ASSOCIATION\"], \"shares\": " UNSET ","
	" \"shares_normalized\": " NV(0.5) ", \"usage\": 90, \"usage_normalized\": " NV(1) ","
	" \"fairshare\": {\"factor\": " NV(0) "}},"
	"{\"name\": \"al\", \"parent\": \"phys\", \"type\": [\"USER\"], \"shares\": " NV(3) ","
	" \"shares_normalized\": " NV(0.75) ", \"usage\": 40, \"usage_normalized\": " NV(0.25) ","
	" \"fairshare\": {\"factor\": " NV(0.8) "}}"
	"]}, \"errors\": []}";

static void test_share_figures(void **state)
{
	(void)state;
	struct expo e;
	size_t n;
	tu_rest_parse_ok(&e, REST_SHARES, shares_doc);
	assert_true(sum_of(&e, "slurmrestd_share_shares", NULL, NULL, &n) == 3 && n == 1);
	assert_true(sum_of(&e, "slurmrestd_share_shares", "user", "al", &n) == 3 && n == 1);
	assert_true(sum_of(&e, "slurmrestd_share_shares_normalized", "account", "root", &n) == 0.5 && n == 1);
	assert_true(sum_of(&e, "slurmrestd_share_shares_normalized", "account", "phys", &n) == 0.75 && n == 1);
	assert_true(sum_of(&e, "slurmrestd_share_usage", NULL, NULL, &n) == 130 && n == 2);
	assert_true(sum_of(&e, "slurmrestd_share_usage_normalized", "user", "al", &n) == 0.25 && n == 1);
	assert_true(sum_of(&e, "slurmrestd_share_fairshare", "user", "al", &n) == 0.8 && n == 1);
	expo_free(&e);
}

static void test_job_memory(void **state)
{
	(void)state;
	struct expo e;
	size_t n;
	tu_rest_parse_ok(&e, REST_JOBS, jobs_doc);
	assert_true(sum_of(&e, "slurmrestd_jobs_memory", "account", "x", &n) == 2000 && n == 1);
	assert_true(sum_of(&e, "slurmrestd_jobs_memory", "account", "y", &n) == 900 && n == 1);
	assert_true(sum_of(&e, "slurmrestd_jobs_memory", "account", "z", &n) == 0 && n == 1);
	assert_true(sum_of(&e, "slurmrestd_jobs", "account", "y", &n) == 3);
	/* records as squeue without -r prints them: the pending array once, with one task's CPUs */
	assert_true(sum_of(&e, "slurmrestd_jobs_records", "account", "y", &n) == 1 && n == 1);
	assert_true(sum_of(&e, "slurmrestd_jobs_records", NULL, NULL, &n) == 3 && n == 3);
	assert_true(sum_of(&e, "slurmrestd_jobs_records_cpus", "account", "y", &n) == 1 && n == 1);
	assert_true(sum_of(&e, "slurmrestd_jobs_records_cpus", NULL, NULL, &n) == 4 && n == 3);
	assert_true(sum_of(&e, "slurmrestd_jobs_cpus", NULL, NULL, &n) == 6 && n == 3);
	expo_free(&e);
}

/* /licenses: one sample per license in each family; the answer of scontrol show lic --json's shape */
static void test_licenses(void **state)
{
	(void)state;
	struct expo e;
	size_t n;
	size_t len;
	char *text = tu_slurp("tests/fixtures/peers-25.11/P1-busy-mix/rest_licenses.json", &len);
	assert_non_null(text);
	assert_int_equal(tu_rest_parse(&e, REST_LICENSES, text, len, NULL, NULL), 0);
	free(text);
	/* context_scontrol_show_licenses.txt: LicenseName=matlab Total=10 Used=3 Free=7 Reserved=0 */
	assert_true(sum_of(&e, "slurmrestd_license_total", "license", "matlab", &n) == 10 && n == 1);
	assert_true(sum_of(&e, "slurmrestd_license_used", "license", "matlab", &n) == 3 && n == 1);
	assert_true(sum_of(&e, "slurmrestd_license_free", "license", "matlab", &n) == 7 && n == 1);
	assert_true(sum_of(&e, "slurmrestd_license_reserved", "license", "matlab", &n) == 0 && n == 1);
	expo_free(&e);
	/* no licenses: a good answer naming no family */
	tu_rest_parse_ok(&e, REST_LICENSES, "{\"licenses\": [], \"errors\": []}");
	assert_int_equal(e.nfams, 0);
	expo_free(&e);
	/* unusable: a license twice, one without a name, no licenses array */
	static const char *const bad[] = {
		"{\"licenses\": [{\"LicenseName\": \"a\", \"Total\": 1}, {\"LicenseName\": \"a\", \"Total\": 2}]}",
		"{\"licenses\": [{\"Total\": 1}]}",
		"{\"meta\": {}}",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		if (tu_rest_parse(&e, REST_LICENSES, bad[i], strlen(bad[i]), NULL, NULL) == 0)
			fail_msg("accepted: %s", bad[i]);
		expo_free(&e);
	}
}

/* /diag's lists of objects: one sample per item, labelled by its strings (P1: sdiag's RPCs by user
 * and by message type); an item listed twice or a member given twice make the answer unusable */
static void test_diag_lists(void **state)
{
	(void)state;
	struct expo e;
	size_t n, len;
	char *text = tu_slurp("tests/fixtures/peers-25.11/P1-busy-mix/rest_diag.json", &len);
	assert_non_null(text);
	assert_int_equal(tu_rest_parse(&e, REST_DIAG, text, len, NULL, NULL), 0);
	free(text);
	assert_true(sum_of(&e, "slurmrestd_diag_rpcs_by_user_count", "user", "root", &n) == 16 && n == 1);
	assert_true(sum_of(&e, "slurmrestd_diag_rpcs_by_user_total_time", "user", "caprest", &n) == 756 && n == 1);
	assert_true(sum_of(&e, "slurmrestd_diag_rpcs_by_user_user_id", "user", "caprest", &n) == 1004 && n == 1);
	/* average_time is a {set, infinite, number} object */
	assert_true(sum_of(&e, "slurmrestd_diag_rpcs_by_message_type_average_time", "message_type",
			   "MESSAGE_NODE_REGISTRATION_STATUS", &n) == 251 && n == 1);
	assert_true(sum_of(&e, "slurmrestd_diag_rpcs_by_message_type_count", NULL, NULL, &n) == 21 && n == 5);
	/* the scalars as before */
	assert_true(sum_of(&e, "slurmrestd_diag_server_thread_count", NULL, NULL, &n) == 1 && n == 1);
	expo_free(&e);
	tu_rest_parse_ok(&e, REST_DIAG, "{\"statistics\": {\"l\": [{\"k\": \"a\", \"n\": 1, \"deep\": [{\"x\": 2}]},"
				  " {\"k\": \"b\", \"n\": " NV(3) "}]}}");
	assert_true(sum_of(&e, "slurmrestd_diag_l_n", "k", "b", &n) == 3 && n == 1);
	assert_null(expo_find(&e, "slurmrestd_diag_l_deep_x", strlen("slurmrestd_diag_l_deep_x")));
	expo_free(&e);
	static const char *const bad[] = {
		"{\"statistics\": {\"l\": [{\"k\": \"a\", \"n\": 1}, {\"k\": \"a\", \"n\": 2}]}}",
		"{\"statistics\": {\"l\": [{\"k\": \"a\", \"n\": 1, \"n\": 2}]}}",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		if (tu_rest_parse(&e, REST_DIAG, bad[i], strlen(bad[i]), NULL, NULL) == 0)
			fail_msg("accepted: %s", bad[i]);
		expo_free(&e);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_node_partition_series),
		cmocka_unit_test(test_share_figures),
		cmocka_unit_test(test_job_memory),
		cmocka_unit_test(test_licenses),
		cmocka_unit_test(test_diag_lists),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
