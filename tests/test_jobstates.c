/* test_jobstates.c: slurmrestd's /jobs/state (each job's id and state alone) -> slurmrestd_job_states{state}
 * (src/slurmrestd.c, src/slurmrestd_rec.c): on every captured REST state (Slurm 25.11.7 at data_parser
 * v0.0.44, 26.05.3 at v0.0.45) the counts by squeue's state equal the old exporter's squeue outputs, in
 * pieces as whole; and every answer that is not what it should be is unusable with a named reason, never
 * an empty answer and never a count of 0: shapeless, cut anywhere, a job without a state or a job id, a
 * state name no data_parser writes, slurmrestd's errors[] set, a job listed twice. The daemon's side
 * (the fetch, the fallback, the status page, /jobs not fetched by default) is tests/test_jobstates.sh. */
#include "testutil.h"

#include <math.h>

#include "expo.h"
#include "labels.h"
#include "slurmrestd.h"

static const char *const states[] = { TU_REST_STATES };
#define NSTATES (sizeof(states) / sizeof(states[0]))

static size_t parse(struct expo *e, const char *text, size_t len, size_t chunk)
{
	void *st = rest_begin_job_states(e);
	if (!chunk)
		chunk = len ? len : 1;
	char *piece = xmalloc(chunk);
	for (size_t off = 0; off < len; off += chunk) {
		size_t n = len - off < chunk ? len - off : chunk;
		memcpy(piece, text + off, n);
		rest_feed(st, e, piece, n);
		memset(piece, '{', chunk);
	}
	free(piece);
	return rest_end(st, e);
}

/* The count of jobs in squeue state `state` (-1: no such series; -2: no family). */
static double count_of(const struct expo *e, const char *state)
{
	const struct expo_family *f = expo_find(e, "slurmrestd_job_states", 21);
	if (!f)
		return -2;
	for (size_t i = 0; i < f->n; i++) {
		const struct expo_sample *s = &f->samples[i];
		if (s->nlabels == 1 && slice_is_equal(s->labels[0].name, s->labels[0].nlen, "state", 5) &&
		    slice_is_equal(s->labels[0].value, s->labels[0].vlen, state, strlen(state)))
			return s->value;
	}
	return -1;
}

/* The old exporter's slurm_queue_<x> in the capture's legacy_exporter_metrics.txt. */
static double legacy_queue(const char *state, const char *fam)
{
	char path[512];
	size_t len;
	snprintf(path, sizeof(path), "tests/fixtures/%s/legacy_exporter_metrics.txt", state);
	char *text = tu_slurp(path, &len);
	assert_non_null(text);
	struct expo e;
	expo_init(&e);
	assert_int_equal(expo_parse(&e, text, len, EXPO_STRICT), 0);
	const struct expo_family *f = expo_find(&e, fam, strlen(fam));
	assert_non_null(f);
	assert_int_equal(f->n, 1);
	double v = f->samples[0].value;
	expo_free(&e);
	free(text);
	return v;
}

static void test_counts_equal_old_exporter(void **state)
{
	(void)state;
	static const struct { const char *fam, *state; } q[] = {
		{ "slurm_queue_pending", "PENDING" }, { "slurm_queue_running", "RUNNING" },
		{ "slurm_queue_suspended", "SUSPENDED" }, { "slurm_queue_cancelled", "CANCELLED" },
		{ "slurm_queue_completing", "COMPLETING" }, { "slurm_queue_completed", "COMPLETED" },
		{ "slurm_queue_configuring", "CONFIGURING" }, { "slurm_queue_failed", "FAILED" },
		{ "slurm_queue_timeout", "TIMEOUT" }, { "slurm_queue_preempted", "PREEMPTED" },
		{ "slurm_queue_node_fail", "NODE_FAIL" },
	};
	static const size_t chunks[] = { 0, 1, 3, 7, 64, 4096 };
	size_t nonzero = 0;
	for (size_t s = 0; s < NSTATES; s++) {
		char path[512];
		size_t len;
		snprintf(path, sizeof(path), "tests/fixtures/%s/rest_jobs_state.json", states[s]);
		char *text = tu_slurp(path, &len);
		assert_non_null(text);
		for (size_t c = 0; c < sizeof(chunks) / sizeof(chunks[0]); c++) {
			struct expo e;
			expo_init(&e);
			assert_int_equal(parse(&e, text, len, chunks[c]), 0);
			for (size_t i = 0; i < sizeof(q) / sizeof(q[0]); i++) {
				double want = legacy_queue(states[s], q[i].fam), got = count_of(&e, q[i].state);
				if (got < 0)
					got = 0; /* a state no job is in: the rows' "or vector(0)" */
				if (got != want)
					fail_msg("%s (pieces of %zu): %s %g, the old exporter %g", states[s], chunks[c], q[i].state,
						 got, want);
				nonzero += c == 0 && want > 0;
			}
			expo_free(&e);
		}
		free(text);
	}
	assert_true(nonzero >= 40); /* the captures hold every common state */
}

/* The first problem of text, whole and in pieces of 5 bytes (the same), and its count. */
static size_t problem_of(const char *text, char *why, size_t cap)
{
	struct expo e, w;
	expo_init(&e);
	expo_init(&w);
	size_t bad = parse(&e, text, strlen(text), 5), whole = parse(&w, text, strlen(text), 0);
	assert_int_equal(bad, whole);
	assert_int_equal(e.nerrors, bad ? 1 : 0);
	snprintf(why, cap, "%s", bad ? e.errors[0].reason : "");
	assert_string_equal(why, bad ? w.errors[0].reason : "");
	expo_free(&e);
	expo_free(&w);
	return bad;
}

#define PROBLEM(text, count, want) do { \
		char why_[300]; \
		size_t n_ = problem_of(text, why_, sizeof(why_)); \
		if (n_ != (count) || strcmp(why_, want)) \
			fail_msg("%s: %zu problem(s): \"%s\"; want %d: \"%s\"", text, n_, why_, (int)(count), want); \
	} while (0)

static void test_bad_answers(void **state)
{
	(void)state;
	/* shapeless */
	PROBLEM("{}", 1, "no 'jobs' array");
	PROBLEM("[]", 1, "the document is an array, not an object");
	PROBLEM("{\"jobs\": {}}", 1, "'jobs' is an object, not an array");
	PROBLEM("{\"jobs\": null}", 1, "'jobs' is null, not an array");
	PROBLEM("{\"jobs\": [3]}", 1, "item 0 of 'jobs' is a number, not an object");
	PROBLEM("{\"jobs\": [], \"jobs\": []}", 1, "'jobs' given twice");
	PROBLEM("", 1, "not JSON: premature EOF");
	PROBLEM("<html>502 Bad Gateway</html>", 1, "not JSON: invalid char in json text.");
	/* a job without what it needs */
	PROBLEM("{\"jobs\": [{\"job_id\": \"1\", \"state\": []}]}", 1, "job 1 without a state");
	PROBLEM("{\"jobs\": [{\"job_id\": \"1\"}]}", 1, "job 1 without a state");
	PROBLEM("{\"jobs\": [{\"state\": [\"PENDING\"]}]}", 1, "a job without a job_id");
	PROBLEM("{\"jobs\": [{\"job_id\": 5, \"state\": [\"PENDING\"]}]}", 1, "a job without a job_id");
	PROBLEM("{\"jobs\": [{\"job_id\": \"\", \"state\": [\"PENDING\"]}]}", 1, "a job without a job_id");
	/* a state name no data_parser writes: where the job counts is not known */
	PROBLEM("{\"jobs\": [{\"job_id\": \"1\", \"state\": [\"PENDING\", \"HIBERNATING\"]}]}", 1,
		"a job with state 'HIBERNATING', a name no data_parser writes");
	PROBLEM("{\"jobs\": [{\"job_id\": \"1\", \"state\": \"pending\"}]}", 1,
		"a job with state 'pending', a name no data_parser writes");
	/* slurmrestd's own report, with status 200 */
	PROBLEM("{\"jobs\": [], \"errors\": [{\"error\": \"Unable to query jobs\", \"description\": \"slurmctld down\"}]}", 1,
		"slurmrestd reported 1 error(s): Unable to query jobs: slurmctld down");
	/* listed twice, a field twice */
	PROBLEM("{\"jobs\": [{\"job_id\": \"16_8\", \"state\": [\"PENDING\"]}, {\"job_id\": \"16_8\", \"state\": [\"PENDING\"]}]}",
		1, "job 16_8 listed twice");
	PROBLEM("{\"jobs\": [{\"job_id\": \"1\", \"state\": [\"RUNNING\"], \"state\": [\"RUNNING\"]}]}", 1,
		"'state' given twice in a record of 'jobs'");
	/* what stays good: no jobs; v0.0.41's state as a string; the flags squeue never prints and v0.0.45's
	 * END add nothing; squeue's flag first */
	PROBLEM("{\"jobs\": [], \"errors\": [], \"warnings\": [], \"meta\": {}}", 0, "");
	PROBLEM("{\"jobs\": [{\"job_id\": \"1\", \"state\": \"PENDING\"}]}", 0, "");
	struct expo e;
	static const char good[] = "{\"jobs\": [{\"job_id\": \"1\", \"state\": [\"RUNNING\", \"LAUNCH_FAILED\", \"POWER_UP_NODE\"]},"
				   "{\"state\": [\"CANCELLED\", \"COMPLETING\", \"END\"], \"job_id\": \"2+1\"},"
				   "{\"job_id\": \"3_1\", \"state\": [\"PENDING\", \"RECONFIG_FAIL\"]}, {\"job_id\": \"3_2\", \"state\": [\"PENDING\"]}]}";
	expo_init(&e);
	assert_int_equal(parse(&e, good, sizeof(good) - 1, 0), 0);
	assert_true(count_of(&e, "RUNNING") == 1);
	assert_true(count_of(&e, "COMPLETING") == 1);
	assert_true(count_of(&e, "CANCELLED") == -1);
	assert_true(count_of(&e, "PENDING") == 2);
	expo_free(&e);
	static const char none[] = "{\"jobs\": []}";
	expo_init(&e);
	assert_int_equal(parse(&e, none, sizeof(none) - 1, 0), 0);
	assert_true(count_of(&e, "PENDING") == -2); /* no family: the answer holds no job */
	expo_free(&e);
}

/* Cut anywhere (a transfer that ended early, a proxy's limit): never a usable answer, so never a count
 * that is short. */
static void test_cut_anywhere(void **state)
{
	(void)state;
	char path[512];
	size_t len;
	snprintf(path, sizeof(path), "tests/fixtures/%s/rest_jobs_state.json", "slurm-25.11-rest/R2-busy-mix-draining");
	char *text = tu_slurp(path, &len);
	assert_non_null(text);
	while (len && (text[len - 1] == '\n' || text[len - 1] == ' '))
		len--;
	for (size_t cut = 0; cut < len; cut++) {
		struct expo e;
		expo_init(&e);
		if (parse(&e, text, cut, 0) < 1)
			fail_msg("cut at %zu of %zu: usable", cut, len);
		expo_free(&e);
	}
	free(text);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_counts_equal_old_exporter),
		cmocka_unit_test(test_bad_answers),
		cmocka_unit_test(test_cut_anywhere),
	};
	return cmocka_run_group_tests_name("jobstates", tests, NULL, NULL);
}
