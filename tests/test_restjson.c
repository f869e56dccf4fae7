/* test_restjson.c: slurmrestd JSON -> families (src/slurmrestd.c, src/slurmrestd_state.c) and the family
 * builder expo_add (src/expo.c), on the real captures of tests/fixtures/slurm-25.11-rest/ (six
 * cluster states, data_parser v0.0.44) and slurm-26.05-rest/ (Slurm 26.05.3, v0.0.45), each with the CLI outputs the old exporter parsed, taken at the same instant):
 * every node's state string, CPUs and memory equal sinfo's; FairShare equals sshare's; job counts
 * and CPUs by state, reason, user, account and partition equal squeue's; any answer fed in pieces
 * of 1..16384 bytes gives exactly the families of the whole answer; truncated, garbage, deeply
 * nested, huge-string and wrong-typed JSON is counted malformed without a crash. */
#include "testutil.h"

#include <malloc.h>
#include <math.h>

#include "expo.h"
#include "labels.h"
#include "slurmrestd_state.h"
#include "slurmrestd.h"

#define REST_DIR "tests/fixtures/"

static const char *const states[] = { TU_REST_STATES };
#define NSTATES (sizeof(states) / sizeof(states[0]))

static char *slurp_state(const char *state, const char *file, size_t *len)
{
	char path[512];
	snprintf(path, sizeof(path), REST_DIR "%s/%s", state, file);
	char *s = tu_slurp(path, len);
	assert_non_null(s);
	return s;
}

/* Parse text into e in pieces of `chunk` bytes (0: whole), each from a buffer that is overwritten
 * after the call; returns the malformed count. */
static size_t parse(struct expo *e, enum rest_doc doc, const char *text, size_t len, size_t chunk)
{
	void *st = rest_begin(e, doc);
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

static void parse_file(struct expo *e, enum rest_doc doc, const char *state, const char *file)
{
	size_t len;
	char *text = slurp_state(state, file, &len);
	expo_init(e);
	assert_int_equal(parse(e, doc, text, len, 0), 0);
	free(text);
}

static int label_is(const struct expo_sample *s, const char *name, const char *value)
{
	int k = labels_find(s->labels, s->nlabels, name, strlen(name));
	if (!value)
		return k < 0;
	return k >= 0 && slice_is_equal(s->labels[k].value, s->labels[k].vlen, value, strlen(value));
}

/* Sum of the samples of fam whose labels match every (name, value) pair; a NULL value means the
 * label is absent. *n counts the samples summed. */
static double sum_where(const struct expo *e, const char *fam, size_t *n, const char *const *pairs,
			size_t npairs)
{
	const struct expo_family *f = expo_find(e, fam, strlen(fam));
	double sum = 0;
	*n = 0;
	for (size_t i = 0; f && i < f->n; i++) {
		size_t k = 0;
		while (k < npairs && label_is(&f->samples[i], pairs[2 * k], pairs[2 * k + 1]))
			k++;
		if (k == npairs) {
			sum += f->samples[i].value;
			(*n)++;
		}
	}
	return sum;
}

static double node_value(const struct expo *e, const char *fam, const char *node, const char *state)
{
	const char *pairs[] = { "node", node, "state", state };
	size_t n;
	double v = sum_where(e, fam, &n, pairs, 2);
	if (n != 1)
		fail_msg("%s{node=%s,state=%s}: %zu samples", fam, node, state, n);
	return v;
}

/* exporter_node_sinfo.txt: `sinfo -h -N -O NodeList,AllocMem,Memory,CPUsState,StateLong`, one line
 * per (node, partition). */
static void test_nodes_equal_sinfo(void **state)
{
	(void)state;
	for (size_t s = 0; s < NSTATES; s++) {
		struct expo e;
		size_t len, lines = 0;
		parse_file(&e, REST_NODES, states[s], "rest_nodes.json");
		char *text = slurp_state(states[s], "exporter_node_sinfo.txt", &len);
		char *save = NULL;
		for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
			char node[64], st[64];
			double amem, mem, a, i, o, t;
			assert_int_equal(sscanf(line, "%63s %lf %lf %lf/%lf/%lf/%lf %63s", node, &amem, &mem,
						&a, &i, &o, &t, st), 8);
			assert_true(node_value(&e, "slurmrestd_node_state", node, st) == 1);
			assert_true(node_value(&e, "slurmrestd_node_cpus_alloc", node, st) == a);
			assert_true(node_value(&e, "slurmrestd_node_cpus_idle", node, st) == i);
			assert_true(node_value(&e, "slurmrestd_node_cpus_other", node, st) == o);
			assert_true(node_value(&e, "slurmrestd_node_cpus", node, st) == t);
			assert_true(node_value(&e, "slurmrestd_node_memory", node, st) == mem);
			assert_true(node_value(&e, "slurmrestd_node_memory_alloc", node, st) == amem);
			lines++;
		}
		assert_true(lines >= 5);
		const struct expo_family *f = expo_find(&e, "slurmrestd_node_state", 21);
		assert_non_null(f);
		assert_int_equal(f->n, 5);
		assert_false(f->duplicate);
		free(text);
		expo_free(&e);
	}
}

/* exporter_partitions_sinfo.txt: `sinfo -h -o%R,%C`, a/i/o/t per partition (the hidden one too:
 * the old exporter ran as root); exporter_nodes_sinfo.txt: `sinfo -h -o %D,%T`, nodes by state. */
static void test_partitions_equal_sinfo(void **state)
{
	(void)state;
	static const char *const fams[] = { "slurmrestd_partition_cpus_alloc", "slurmrestd_partition_cpus_idle",
					    "slurmrestd_partition_cpus_other", "slurmrestd_partition_cpus" };
	for (size_t s = 0; s < NSTATES; s++) {
		struct expo e;
		size_t len, n, lines = 0;
		parse_file(&e, REST_NODES, states[s], "rest_nodes.json");
		char *text = slurp_state(states[s], "exporter_partitions_sinfo.txt", &len);
		char *save = NULL;
		for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
			char part[64];
			double v[4];
			assert_int_equal(sscanf(line, "%63[^,],%lf/%lf/%lf/%lf", part, &v[0], &v[1], &v[2], &v[3]), 5);
			const char *pairs[] = { "partition", part };
			for (int k = 0; k < 4; k++)
				if (sum_where(&e, fams[k], &n, pairs, 1) != v[k] || n != 1)
					fail_msg("%s: %s{partition=%s} != %g", states[s], fams[k], part, v[k]);
			lines++;
		}
		assert_int_equal(lines, 4);
		assert_int_equal(expo_find(&e, fams[0], strlen(fams[0]))->n, 4);
		free(text);
		text = slurp_state(states[s], "exporter_nodes_sinfo.txt", &len);
		lines = 0;
		for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
			char st[64];
			double count;
			assert_int_equal(sscanf(line, " %lf,%63s", &count, st), 2);
			const char *pairs[] = { "state", st };
			assert_true(sum_where(&e, "slurmrestd_node_state", &n, pairs, 1) == count);
			lines += (size_t)count;
		}
		assert_int_equal(lines, 5);
		free(text);
		expo_free(&e);
	}
}

/* Partitions and GPUs of the cluster definition (README): n3 and n4 have gpu:2. */
static void test_node_partitions_and_gpus(void **state)
{
	(void)state;
	struct expo e;
	size_t n;
	parse_file(&e, REST_NODES, "slurm-25.11-rest/R2-busy-mix-draining", "rest_nodes.json");
	const char *hidden[] = { "partition", "hidden" };
	assert_true(sum_where(&e, "slurmrestd_node_partition", &n, hidden, 1) == 1);
	const char *batch[] = { "partition", "batch" };
	assert_true(sum_where(&e, "slurmrestd_node_partition", &n, batch, 1) == 5);
	assert_true(sum_where(&e, "slurmrestd_node_gpus", &n, NULL, 0) == 4);
	/* gres_used: n3 gpu:1 (job 10), n4 gpu:2 (job 11) */
	assert_true(sum_where(&e, "slurmrestd_node_gpus_used", &n, NULL, 0) == 3);
	expo_free(&e);
}

/* context_scontrol_nodes.txt: `Reason=R3 fail busy n4 [root@2026-12-01T10:42:32]` (the controller's
 * local time is UTC): slurmrestd_node_reason_info carries the reason, who set it and when; a node
 * without a reason has no sample. */
static void test_node_reasons_equal_scontrol(void **state)
{
	(void)state;
	struct expo e;
	size_t n;
	parse_file(&e, REST_NODES, "slurm-25.11-rest/R4-downdrain-fail-maint-reserved", "rest_nodes.json");
	const char *n4[] = { "node", "n4", "reason", "R3 fail busy n4", "user", "root" };
	assert_true(sum_where(&e, "slurmrestd_node_reason_info", &n, n4, 3) == 1796121752.0); /* 10:42:32 */
	assert_int_equal(n, 1);
	const char *n5[] = { "node", "n5", "reason", "R4 down+drain n5", "user", "root" };
	assert_true(sum_where(&e, "slurmrestd_node_reason_info", &n, n5, 3) == 1796121854.0); /* 10:44:14 */
	assert_int_equal(n, 1);
	sum_where(&e, "slurmrestd_node_reason_info", &n, NULL, 0);
	assert_int_equal(n, 2); /* n1, n2, n3: reason "" */
	expo_free(&e);
}

/* context_sshare_all.txt: `sshare -a -l`; user rows carry a User column and a FairShare. */
static void test_fairshare_equals_sshare(void **state)
{
	(void)state;
	for (size_t s = 0; s < NSTATES; s++) {
		struct expo e;
		size_t len, users = 0, n;
		parse_file(&e, REST_SHARES, states[s], "rest_shares.json");
		char *text = slurp_state(states[s], "context_sshare_all.txt", &len);
		char *save = NULL;
		for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
			char acct[64], user[64];
			double raw, norm, rawu, normu, eff, fs;
			if (sscanf(line, "%63s %63s %lf %lf %lf %lf %lf %lf", acct, user, &raw, &norm, &rawu,
				   &normu, &eff, &fs) != 8)
				continue; /* headers and account rows (no User, no FairShare) */
			const char *pairs[] = { "account", acct, "user", user };
			double v = sum_where(&e, "slurmrestd_share_fairshare", &n, pairs, 2);
			assert_int_equal(n, 1);
			if (fabs(v - fs) > 5e-7)
				fail_msg("%s: %s/%s fairshare %f, sshare %f", states[s], acct, user, v, fs);
			users++;
		}
		assert_int_equal(users, 7); /* root/root and the six (account, user) pairs */
		/* account rows: Fair Tree leaves their factor at 0 (sshare prints nothing) */
		const char *acct[] = { "account", "physics", "user", NULL };
		assert_true(sum_where(&e, "slurmrestd_share_fairshare", &n, acct, 2) == 0);
		assert_int_equal(n, 1);
		/* root's user row: LevelFS inf */
		const char *root[] = { "account", "root", "user", "root" };
		assert_true(isinf(sum_where(&e, "slurmrestd_share_level", &n, root, 2)));
		free(text);
		expo_free(&e);
	}
}

/* Count and CPU sum of the squeue lines with `sep`-separated fields whose field `kf` equals
 * key and field `sf` equals st (kf < 0: any); fields from field `rest` on are joined (a reason with
 * commas). */
struct tally { char key[160], state[32]; double jobs, cpus; };

static size_t tally_file(const char *state, const char *file, char sep, int kf, int sf, int cf,
			 int rest, struct tally *t, size_t cap)
{
	size_t len, nt = 0;
	char *text = slurp_state(state, file, &len);
	char *save = NULL;
	for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		while (*line == ' ')
			line++;
		char *f[8] = { 0 };
		int nf = 0;
		f[nf++] = line;
		for (char *p = line; *p && nf < 8; p++)
			if (*p == sep && (rest < 0 || nf <= rest)) {
				*p = '\0';
				f[nf++] = p + 1;
			}
		const char *key = kf >= 0 ? f[kf] : "", *st = sf >= 0 ? f[sf] : "";
		assert_non_null(key);
		assert_non_null(st);
		size_t i = 0;
		while (i < nt && (strcmp(t[i].key, key) || strcmp(t[i].state, st)))
			i++;
		if (i == nt) {
			assert_true(nt < cap);
			snprintf(t[nt].key, sizeof(t[nt].key), "%s", key);
			snprintf(t[nt].state, sizeof(t[nt].state), "%s", st);
			t[nt].jobs = t[nt].cpus = 0;
			nt++;
		}
		t[i].jobs++;
		t[i].cpus += cf >= 0 && f[cf] ? atof(f[cf]) : 0;
	}
	free(text);
	return nt;
}

/* squeue's default filter (no --states): what the old exporter's users/accounts collectors saw. */
static const char *const default_states[] = { "PENDING", "RUNNING", "SUSPENDED", "COMPLETING",
					      "CONFIGURING", "STAGE_OUT" };

static void check_by(const struct expo *e, const char *state, const char *file, const char *label,
		     int with_cpus)
{
	struct tally t[64];
	size_t nt = tally_file(state, file, '|', 1, 2, 3, -1, t, 64), n;
	double lines = 0;
	for (size_t i = 0; i < nt; i++) {
		const char *pairs[] = { label, t[i].key, "state", t[i].state };
		double jobs = sum_where(e, "slurmrestd_jobs", &n, pairs, 2);
		if (jobs != t[i].jobs)
			fail_msg("%s %s: %s=%s state=%s: %g jobs, squeue %g", state, file, label, t[i].key,
				 t[i].state, jobs, t[i].jobs);
		if (with_cpus)
			assert_true(sum_where(e, "slurmrestd_jobs_cpus", &n, pairs, 2) == t[i].cpus);
		lines += t[i].jobs;
	}
	double ours = 0;
	for (size_t k = 0; k < sizeof(default_states) / sizeof(default_states[0]); k++) {
		const char *pairs[] = { "state", default_states[k] };
		ours += sum_where(e, "slurmrestd_jobs", &n, pairs, 1);
	}
	assert_true(ours == lines);
}

static void test_jobs_equal_squeue(void **state)
{
	(void)state;
	for (size_t s = 0; s < NSTATES; s++) {
		struct expo e;
		struct tally t[64];
		size_t n;
		parse_file(&e, REST_JOBS, states[s], "rest_jobs.json");
		/* `squeue -a -r -h -o %A,%T,%r --states=all`: by state and reason */
		size_t nt = tally_file(states[s], "exporter_queue_squeue.txt", ',', 2, 1, -1, 2, t, 64);
		double lines = 0;
		for (size_t i = 0; i < nt; i++) {
			const char *pairs[] = { "state", t[i].state, "reason", t[i].key };
			double jobs = sum_where(&e, "slurmrestd_jobs", &n, pairs, 2);
			if (jobs != t[i].jobs)
				fail_msg("%s: state=%s reason=%s: %g jobs, squeue %g", states[s], t[i].state,
					 t[i].key, jobs, t[i].jobs);
			lines += t[i].jobs;
		}
		assert_true(sum_where(&e, "slurmrestd_jobs", &n, NULL, 0) == lines);
		/* `squeue -a -r -h -o %A|%u|%T|%C` and `%A|%a|%T|%C`: by user, by account, with CPUs */
		check_by(&e, states[s], "exporter_users_squeue.txt", "user", 1);
		check_by(&e, states[s], "exporter_accounts_squeue.txt", "account", 1);
		/* `squeue -a -r -h -o %P --states=PENDING`: by partition, "batch,gpu" as one */
		nt = tally_file(states[s], "exporter_partitions_squeue.txt", '\n', 0, -1, -1, -1, t, 64);
		for (size_t i = 0; i < nt; i++) {
			const char *pairs[] = { "partition", t[i].key, "state", "PENDING" };
			assert_true(sum_where(&e, "slurmrestd_jobs", &n, pairs, 2) == t[i].jobs);
		}
		assert_false(expo_find(&e, "slurmrestd_jobs", 15)->duplicate);
		expo_free(&e);
	}
}

/* The cancelled pending array 28_[1-6] is one record that squeue -r prints as six lines. */
static void test_array_tasks(void **state)
{
	(void)state;
	assert_int_equal(rest_array_tasks("1-6", 3), 6);
	assert_int_equal(rest_array_tasks("8", 1), 1);
	assert_int_equal(rest_array_tasks("1,3,5-9:2%4", 11), 5);
	assert_int_equal(rest_array_tasks("", 0), 0);
	assert_int_equal(rest_array_tasks("x", 1), 0);
	assert_int_equal(rest_array_tasks("5-1", 3), 0);
	assert_int_equal(rest_array_tasks("1-3,", 4), 3);
	struct expo e;
	size_t n;
	parse_file(&e, REST_JOBS, "slurm-25.11-rest/R2-busy-mix-draining", "rest_jobs.json");
	const char *pairs[] = { "state", "CANCELLED", "user", "dave" };
	assert_true(sum_where(&e, "slurmrestd_jobs", &n, pairs, 2) == 6);
	assert_true(sum_where(&e, "slurmrestd_jobs_cpus", &n, pairs, 2) == 96);
	expo_free(&e);
}

static void check_node_state(const char *const *names, size_t n, const char *want)
{
	struct node_state s = { 0 };
	char buf[32];
	for (size_t i = 0; i < n; i++)
		assert_int_equal(node_state_add(&s, names[i], strlen(names[i])), 0);
	node_state_sinfo(&s, buf, sizeof(buf));
	if (strcmp(buf, want))
		fail_msg("%s: got %s, want %s", names[0], buf, want);
}

#define NODE(want, ...) do { \
		const char *const names_[] = { __VA_ARGS__ }; \
		check_node_state(names_, sizeof(names_) / sizeof(names_[0]), want); \
	} while (0)

/* States the captures do not show, from Slurm's node_state_string(). */
static void test_node_state_rule(void **state)
{
	(void)state;
	NODE("idle*", "IDLE", "NOT_RESPONDING");
	NODE("idle~", "IDLE", "POWERED_DOWN");
	NODE("idle#", "IDLE", "POWERING_UP");
	NODE("idle%", "IDLE", "POWERING_DOWN");
	NODE("idle!", "IDLE", "POWER_DOWN");
	NODE("down*", "DOWN", "NOT_RESPONDING");
	NODE("down~", "DOWN", "POWERED_DOWN", "NOT_RESPONDING");
	NODE("allocated+", "ALLOCATED", "COMPLETING");
	NODE("allocated*", "ALLOCATED", "NOT_RESPONDING", "COMPLETING");
	NODE("draining", "MIXED", "DRAIN");
	NODE("draining*", "MIXED", "DRAIN", "NOT_RESPONDING");
	NODE("drained$", "DOWN", "DRAIN", "MAINTENANCE");
	NODE("drained~", "IDLE", "DRAIN", "POWERED_DOWN");
	NODE("reboot^", "IDLE", "DRAIN", "REBOOT_ISSUED", "REBOOT_REQUESTED"); /* reboot before drain */
	NODE("draining^", "ALLOCATED", "DRAIN", "REBOOT_ISSUED", "REBOOT_REQUESTED");
	NODE("failing*", "ALLOCATED", "FAIL", "NOT_RESPONDING");
	NODE("fail", "IDLE", "FAIL", "POWERED_DOWN");
	NODE("maint*", "IDLE", "MAINTENANCE", "NOT_RESPONDING");
	NODE("mixed$", "MIXED", "MAINTENANCE");
	NODE("reboot", "IDLE", "REBOOT_REQUESTED");
	NODE("reboot^", "DOWN", "REBOOT_ISSUED");
	NODE("mixed@", "MIXED", "REBOOT_REQUESTED");
	NODE("blocked", "IDLE", "BLOCKED");
	NODE("reserved", "IDLE", "RESERVED", "PLANNED");
	NODE("future", "FUTURE");
	NODE("future*", "FUTURE", "NOT_RESPONDING");
	NODE("cloud", "CLOUD");
	NODE("idle", "IDLE", "CLOUD");
	NODE("unknown*", "UNKNOWN", "NOT_RESPONDING");
	NODE("inval", "IDLE", "INVALID_REG");
	NODE("resume", "ERROR", "RESUME");
	NODE("?", "ERROR");
	/* v0.0.45's names of two flags: listed besides both, or (a shortened answer) alone */
	NODE("idle!", "IDLE", "POWER_DOWN", "POWER_DRAIN", "POWER_DOWN_ASAP");
	NODE("idle!", "IDLE", "POWER_DOWN_ASAP");
	NODE("idle~", "IDLE", "POWER_DOWN", "POWERED_DOWN", "POWER_DOWN_FORCE");
	NODE("idle~", "IDLE", "POWER_DOWN_FORCE");
	NODE("drained~", "IDLE", "DRAIN", "POWER_DOWN_FORCE");
	struct node_state s = { 0 };
	assert_int_equal(node_state_add(&s, "NEW_FLAG", 8), -1);
	assert_int_equal(node_state_add(&s, "INVALID", 7), 0);
}

static const char *job_state(const char *a, const char *b)
{
	struct job_state s = { 0, NULL };
	if (a)
		job_state_add(&s, a, strlen(a));
	if (b)
		job_state_add(&s, b, strlen(b));
	return job_state_squeue(&s);
}

static void test_job_state_rule(void **state)
{
	(void)state;
	assert_string_equal(job_state("RUNNING", NULL), "RUNNING");
	assert_string_equal(job_state("COMPLETED", "COMPLETING"), "COMPLETING");
	assert_string_equal(job_state("STAGE_OUT", "CONFIGURING"), "STAGE_OUT");
	assert_string_equal(job_state("PENDING", "LAUNCH_FAILED"), "PENDING");
	assert_string_equal(job_state("OUT_OF_MEMORY", NULL), "OUT_OF_MEMORY");
	assert_string_equal(job_state(NULL, NULL), "?");
}

/* A user that no longer resolves: squeue prints the uid, and so does the user label. */
static void test_unresolved_user(void **state)
{
	(void)state;
	static const char doc[] =
		"{\"jobs\":[{\"job_state\":[\"PENDING\"],\"user_name\":\"\",\"user_id\":1005,"
		"\"account\":\"a\",\"partition\":\"p\",\"state_reason\":\"Priority\","
		"\"cpus\":{\"set\":true,\"infinite\":false,\"number\":3}},"
		"{\"job_state\":\"RUNNING\",\"user_name\":\"bob\",\"cpus\":2}]}";
	struct expo e;
	size_t n;
	expo_init(&e);
	assert_int_equal(parse(&e, REST_JOBS, doc, sizeof(doc) - 1, 0), 0);
	const char *uid[] = { "user", "1005", "state", "PENDING", "reason", "Priority" };
	assert_true(sum_where(&e, "slurmrestd_jobs", &n, uid, 3) == 1);
	assert_true(sum_where(&e, "slurmrestd_jobs_cpus", &n, uid, 3) == 3);
	/* v0.0.41's plain string state and plain number */
	const char *bob[] = { "user", "bob", "state", "RUNNING" };
	assert_true(sum_where(&e, "slurmrestd_jobs_cpus", &n, bob, 2) == 2);
	expo_free(&e);
}

static int same_expo(const struct expo *a, const struct expo *b)
{
	if (a->nfams != b->nfams || a->nsamples != b->nsamples)
		return 0;
	for (size_t i = 0; i < a->nfams; i++) {
		const struct expo_family *f = &a->fams[i], *g = &b->fams[i];
		if (!slice_is_equal(f->name, f->nlen, g->name, g->nlen) || f->n != g->n || f->duplicate != g->duplicate)
			return 0;
		for (size_t k = 0; k < f->n; k++) {
			const struct expo_sample *x = &f->samples[k], *y = &g->samples[k];
			if (x->hash != y->hash || memcmp(&x->value, &y->value, sizeof(x->value)) ||
			    labels_cmp(x->labels, x->nlabels, y->labels, y->nlabels))
				return 0;
		}
	}
	return 1;
}

static void test_pieces_equal_whole(void **state)
{
	(void)state;
	static const struct { enum rest_doc doc; const char *file; } files[] = {
		{ REST_NODES, "rest_nodes.json" }, { REST_SHARES, "rest_shares.json" },
		{ REST_JOBS, "rest_jobs.json" }, { REST_DIAG, "rest_diag.json" },
	};
	static const size_t chunks[] = { 1, 2, 3, 7, 64, 1000, 4096, 16384 };
	for (size_t s = 0; s < NSTATES; s++)
		for (size_t f = 0; f < sizeof(files) / sizeof(files[0]); f++) {
			size_t len;
			char *text = slurp_state(states[s], files[f].file, &len);
			struct expo whole;
			expo_init(&whole);
			assert_int_equal(parse(&whole, files[f].doc, text, len, 0), 0);
			assert_true(whole.nsamples > 0);
			for (size_t c = 0; c < sizeof(chunks) / sizeof(chunks[0]); c++) {
				struct expo e;
				expo_init(&e);
				assert_int_equal(parse(&e, files[f].doc, text, len, chunks[c]), 0);
				if (!same_expo(&whole, &e))
					fail_msg("%s/%s in pieces of %zu differs", states[s], files[f].file, chunks[c]);
				expo_free(&e);
			}
			expo_free(&whole);
			free(text);
		}
}

static size_t bad_of(enum rest_doc doc, const char *text, size_t len, size_t chunk)
{
	struct expo e;
	expo_init(&e);
	size_t bad = parse(&e, doc, text, len, chunk);
	expo_free(&e);
	return bad;
}

static void test_malformed(void **state)
{
	(void)state;
	size_t len;
	char *text = slurp_state("slurm-25.11-rest/R2-busy-mix-draining", "rest_nodes.json", &len);
	/* truncated anywhere: counted, and the nodes complete before the cut are kept */
	for (size_t cut = 0; cut < len; cut += len / 37 + 1)
		assert_true(bad_of(REST_NODES, text, cut, 0) >= 1);
	struct expo e;
	expo_init(&e);
	assert_int_equal(parse(&e, REST_NODES, text, len / 2, 0), 1);
	assert_non_null(expo_find(&e, "slurmrestd_node_state", 21));
	expo_free(&e);
	free(text);
	static const char *const bad[] = {
		"garbage", "{\"nodes\":[}", "{\"nodes\":[{\"name\":\"n1\",\"cpus\":4}]}}", "\xff\xfe",
		"{\"nodes\":[{\"name\":\"\xc3\x28\",\"cpus\":4}]}", "{} {}",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		for (int d = 0; d < 4; d++)
			assert_true(bad_of((enum rest_doc)d, bad[i], strlen(bad[i]), 0) >= 1);
	/* wrong types: a record missing what it needs is a problem; others are ignored */
	static const char wrong[] = "{\"nodes\":[{\"name\":5,\"cpus\":\"x\",\"state\":\"IDLE\"}]}";
	expo_init(&e);
	assert_int_equal(parse(&e, REST_NODES, wrong, sizeof(wrong) - 1, 0), 1);
	assert_string_equal(e.errors[0].reason, "a node without a name");
	expo_free(&e);
	static const char ignored[] =
		"{\"nodes\":[{\"name\":\"n2\",\"cpus\":8,\"partitions\":{\"a\":1},\"state\":[1,{\"x\":[]}],"
		"\"free_mem\":{\"number\":\"y\"}}],\"jobs\":7}";
	expo_init(&e);
	assert_int_equal(parse(&e, REST_NODES, ignored, sizeof(ignored) - 1, 0), 0);
	assert_int_equal(expo_find(&e, "slurmrestd_node_state", 21)->n, 1);
	assert_null(expo_find(&e, "slurmrestd_node_memory_free", 27));
	expo_free(&e);
	assert_int_equal(bad_of(REST_JOBS, "{\"jobs\":[{}, 3, \"x\"]}", 21, 0), 1);
	/* a node or share row with an empty name cannot be told apart from another one; the records
	 * before the problem are kept (the document is refused all the same, see source.c) */
	static const char unnamed[] = "{\"nodes\":[{\"name\":\"n1\",\"cpus\":4,\"partitions\":[\"\",\"p\"]},"
				      "{\"name\":\"\",\"cpus\":4,\"partitions\":[\"\"]}]}";
	expo_init(&e);
	assert_int_equal(parse(&e, REST_NODES, unnamed, sizeof(unnamed) - 1, 0), 1);
	assert_int_equal(expo_find(&e, "slurmrestd_node_state", 21)->n, 1);
	assert_int_equal(expo_find(&e, "slurmrestd_partition_cpus", 25)->n, 1);
	expo_free(&e);
	static const char noname[] = "{\"shares\":{\"shares\":[{\"name\":\"\"}]}}";
	assert_int_equal(bad_of(REST_SHARES, noname, sizeof(noname) - 1, 0), 1);
	assert_int_equal(bad_of(REST_SHARES, "{\"shares\":{\"shares\":[{\"type\":[\"USER\"]}]}}", 41, 0), 1);
	assert_int_equal(bad_of(REST_DIAG, "{\"statistics\":[1,2]}", 20, 0), 1);
	/* slurmrestd's own errors (the captures have an empty array) */
	static const char errs[] = "{\"nodes\":[],\"errors\":[{\"error\":\"x\",\"error_number\":1},"
				   "{\"error\":\"y\"}],\"warnings\":[{\"x\":1}],\"meta\":{\"errors\":[{}]}}";
	for (int d = 0; d < 4; d++)
		assert_int_equal(bad_of((enum rest_doc)d, errs, sizeof(errs) - 1, 0), 2);
}

static void test_bounds(void **state)
{
	(void)state;
	/* nesting past REST_MAX_DEPTH */
	size_t depth = REST_MAX_DEPTH * 4;
	char *deep = xmalloc(depth * 2 + 1);
	memset(deep, '[', depth);
	memset(deep + depth, ']', depth);
	for (int d = 0; d < 4; d++) {
		assert_int_equal(bad_of((enum rest_doc)d, deep, depth * 2, 0), 1);
		assert_int_equal(bad_of((enum rest_doc)d, deep, depth * 2, 7), 1);
	}
	free(deep);
	/* a string past REST_MAX_STRING, whole and in pieces: refused, and in pieces refused before
	 * yajl has buffered much more of it than the limit */
	size_t n = 8u << 20;
	char *huge = xmalloc(n);
	memcpy(huge, "{\"nodes\":[{\"name\":\"", 19);
	memset(huge + 19, 'a', n - 19);
	assert_int_equal(bad_of(REST_NODES, huge, n, 0), 1);
	assert_int_equal(bad_of(REST_NODES, huge, n, 16384), 1);
	/* yajl holds an unfinished token whole: the parse must stop feeding it long before its end
	 * (heap use measured with glibc's counters; ASan and valgrind replace them with zeros) */
	struct expo e;
	expo_init(&e);
	struct mallinfo2 before = mallinfo2();
	void *st = rest_begin(&e, REST_NODES);
	for (size_t off = 0; off < n; off += 16384)
		rest_feed(st, &e, huge + off, 16384);
	struct mallinfo2 after = mallinfo2();
	if (after.uordblks > before.uordblks && after.uordblks - before.uordblks > (2u << 20))
		fail_msg("%zu bytes held for one string", after.uordblks - before.uordblks);
	assert_int_equal(rest_end(st, &e), 1);
	expo_free(&e);
	memcpy(huge + n - 5, "\"}]}", 4);
	assert_int_equal(bad_of(REST_NODES, huge, n - 1, 16384), 1);
	/* a key too */
	memcpy(huge, "{\"", 2);
	assert_int_equal(bad_of(REST_NODES, huge, n, 0), 1);
	free(huge);
}

/* Paths of the longest keys read (47 bytes) at the deepest level read (a record's field and three
 * levels inside it): no overflow (ASan), and the diag family names them. */
static void test_long_paths(void **state)
{
	(void)state;
	char k[48], doc[512];
	memset(k, 'k', 47);
	k[47] = '\0';
	snprintf(doc, sizeof(doc), "{\"statistics\":{\"%s\":{\"%s\":{\"%s\":{\"%s\":1}}}}}", k, k, k, k);
	struct expo e;
	expo_init(&e);
	assert_int_equal(parse(&e, REST_DIAG, doc, strlen(doc), 0), 0);
	assert_int_equal(e.nfams, 1);
	assert_int_equal(e.fams[0].nlen, strlen("slurmrestd_diag_") + 4 * 47 + 3);
	expo_free(&e);
	snprintf(doc, sizeof(doc), "{\"shares\":{\"shares\":[{\"name\":\"a\",\"fairshare\":{\"%s\":{\"%s\":"
		 "{\"%s\":1}}}}]}}", k, k, k);
	expo_init(&e);
	assert_int_equal(parse(&e, REST_SHARES, doc, strlen(doc), 0), 0);
	expo_free(&e);
}

/* The first problem of a document: its count, reason and byte offset, from a parse in pieces of 7
 * bytes (the same as the whole: the offsets are of the raw text). */
static size_t problem_of(enum rest_doc doc, const char *text, char *why, size_t *at)
{
	struct expo e, w;
	expo_init(&e);
	expo_init(&w);
	size_t bad = parse(&e, doc, text, strlen(text), 7), whole = parse(&w, doc, text, strlen(text), 0);
	assert_int_equal(bad, whole);
	assert_int_equal(e.nerrors, bad ? 1 : 0);
	snprintf(why, 200, "%s", bad ? e.errors[0].reason : "");
	*at = bad ? e.errors[0].line : 0;
	assert_string_equal(why, bad ? w.errors[0].reason : "");
	assert_int_equal(*at, bad ? w.errors[0].line : 0);
	expo_free(&e);
	expo_free(&w);
	return bad;
}

#define PROBLEM(doc, text, count, want_at, want) do { \
		char why_[200]; \
		size_t at_; \
		size_t n_ = problem_of(doc, text, why_, &at_); \
		if (n_ != (count) || strcmp(why_, want) || at_ != (size_t)(want_at)) \
			fail_msg("%s: %zu problem(s) at byte %zu: \"%s\"; want %d at %d: \"%s\"", text, n_, at_, \
				 why_, (int)(count), (int)(want_at), want); \
	} while (0)

/* A job with an empty user_name and a user_id that is no uid (-1e300) wrote its uid
 * into char uid[24] and passed snprintf's untruncated length: ASan aborted, a release build served
 * about 300 bytes of stack in a user label. No uid: the job is a problem; the largest uid is one. */
static void test_uid_not_a_uid(void **state)
{
	(void)state;
	PROBLEM(REST_JOBS, "{\"jobs\":[{\"job_id\":7,\"job_state\":[\"PENDING\"],\"user_name\":\"\",\"user_id\":-1e300}]}", 1,
		77, "job 7: user_id -1e+300 is not a uid");
	PROBLEM(REST_JOBS, "{\"jobs\":[{\"job_state\":\"RUNNING\",\"user_id\":1.5}]}", 1, 46, "job nan: user_id 1.5 is not a uid");
	PROBLEM(REST_JOBS, "{\"jobs\":[{\"job_state\":\"RUNNING\",\"user_id\":4294967295}]}", 1, 53,
		"job nan: user_id 4.29497e+09 is not a uid");
	static const char big[] = "{\"jobs\":[{\"job_state\":\"RUNNING\",\"user_id\":4294967294}]}";
	struct expo e;
	size_t n;
	expo_init(&e);
	assert_int_equal(parse(&e, REST_JOBS, big, sizeof(big) - 1, 0), 0);
	const char *pairs[] = { "user", "4294967294" };
	assert_true(sum_where(&e, "slurmrestd_jobs", &n, pairs, 1) == 1);
	expo_free(&e);
}

/* A document that is not what it should be is unusable (not "no jobs", not "no shares"),
 * with its reason and the byte offset after the token where it was seen. */
static void test_shapeless(void **state)
{
	(void)state;
	PROBLEM(REST_JOBS, "{}", 1, 2, "no 'jobs' array");
	PROBLEM(REST_JOBS, "{\"jobs\": null}", 1, 13, "'jobs' is null, not an array");
	PROBLEM(REST_JOBS, "{\"jobs\": {}}", 1, 10, "'jobs' is an object, not an array");
	PROBLEM(REST_JOBS, "{\"jobs\": [{\"job_state\": \"RUNNING\"}, 3]}", 1, 37, "item 1 of 'jobs' is a number, not an object");
	PROBLEM(REST_JOBS, "{\"jobs\": [\"x\"]}", 1, 13, "item 0 of 'jobs' is a string, not an object");
	PROBLEM(REST_JOBS, "{\"jobs\": [[]]}", 1, 11, "item 0 of 'jobs' is an array, not an object");
	PROBLEM(REST_JOBS, "{\"jobs\": [], \"jobs\": []}", 1, 22, "'jobs' given twice");
	PROBLEM(REST_JOBS, "[]", 1, 1, "the document is an array, not an object");
	PROBLEM(REST_JOBS, "3", 1, 1, "the document is a number, not an object");
	PROBLEM(REST_JOBS, "", 1, 0, "not JSON: premature EOF");
	PROBLEM(REST_JOBS, "  \n", 1, 3, "not JSON: premature EOF");
	PROBLEM(REST_JOBS, "{\"errors\": [\"boom\"]}", 1, 19, "slurmrestd reported 1 error(s): boom");
	PROBLEM(REST_JOBS, "{\"jobs\": [], \"errors\": [{\"error\": \"Invalid auth\", \"description\": \"say \\\"no\\\"\\n\","
		"\"error_number\": 1}, 7]}", 2, 102,
		"slurmrestd reported 2 error(s): Invalid auth: say \"no\"?; a number");
	PROBLEM(REST_JOBS, "{\"jobs\": [], \"errors\": {}}", 1, 24, "'errors' is an object, not an array");
	PROBLEM(REST_JOBS, "{\"jobs\": [], \"errors\": [], \"errors\": []}", 1, 38, "'errors' given twice");
	PROBLEM(REST_JOBS, "{\"jobs\": [}", 1, 11, "not JSON: unallowed token at this point in JSON text");
	PROBLEM(REST_JOBS, "{\"jobs\": []", 1, 11, "not JSON: premature EOF");
	PROBLEM(REST_NODES, "{\"nodes\": {}}", 1, 11, "'nodes' is an object, not an array");
	PROBLEM(REST_SHARES, "{}", 1, 2, "no 'shares.shares' array");
	PROBLEM(REST_SHARES, "{\"shares\": {}}", 1, 14, "no 'shares.shares' array");
	PROBLEM(REST_SHARES, "{\"shares\": []}", 1, 12, "'shares' is an array, not an object");
	PROBLEM(REST_SHARES, "{\"shares\": {\"shares\": null}}", 1, 26, "'shares.shares' is null, not an array");
	PROBLEM(REST_SHARES, "{\"shares\": {\"shares\": [], \"shares\": []}}", 1, 37, "'shares.shares' given twice");
	PROBLEM(REST_DIAG, "{\"statistics\": []}", 1, 16, "'statistics' is an array, not an object");
	PROBLEM(REST_DIAG, "{\"meta\": {}}", 1, 12, "no 'statistics' object");
	/* /reservations: its clock (last_update, a number or a {set, infinite, number} object, before or
	 * after the records) is needed to tell a reservation's state */
	PROBLEM(REST_RESERVATIONS, "{\"reservations\": [], \"errors\": []}", 1, 34,
		"no 'last_update': the reservations' state cannot be told");
	PROBLEM(REST_RESERVATIONS, "{\"reservations\": [], \"last_update\": {\"set\": false, \"number\": 0}}", 1, 64,
		"no 'last_update': the reservations' state cannot be told");
	PROBLEM(REST_RESERVATIONS, "{\"last_update\": 5}", 1, 18, "no 'reservations' array");
	PROBLEM(REST_RESERVATIONS, "{\"reservations\": {}, \"last_update\": 5}", 1, 18,
		"'reservations' is an object, not an array");
	PROBLEM(REST_RESERVATIONS, "{\"reservations\": [3], \"last_update\": 5}", 1, 19,
		"item 0 of 'reservations' is a number, not an object");
	PROBLEM(REST_RESERVATIONS, "{\"reservations\": [], \"last_update\": 5, \"errors\": [\"boom\"]}", 1, 57,
		"slurmrestd reported 1 error(s): boom");
	PROBLEM(REST_RESERVATIONS, "{\"reservations\": [{\"users\": \"a\"}], \"last_update\": 5}", 1, 32,
		"a reservation without a name");
	PROBLEM(REST_RESERVATIONS, "{\"reservations\": [{\"name\": \"r\", \"start_time\": 1, \"end_time\": 9}], \"last_update\":"
		" {\"number\": 5, \"set\": true}}", 0, 0, "");
	PROBLEM(REST_RESERVATIONS, "{\"last_update\": 5, \"reservations\": []}", 0, 0, "");
	/* what is still a good document: no records, other keys of any shape, an empty errors array */
	PROBLEM(REST_JOBS, "{\"jobs\": [], \"meta\": [1, {\"jobs\": 3}], \"errors\": [], \"warnings\": [\"w\"]}", 0, 0, "");
	PROBLEM(REST_SHARES, "{\"shares\": {\"shares\": [], \"x\": 1}}", 0, 0, "");
	PROBLEM(REST_DIAG, "{\"statistics\": {}}", 0, 0, "");
}

static size_t family_n(const struct expo *e, const char *name)
{
	const struct expo_family *f = expo_find(e, name, strlen(name));
	return f ? f->n : 0;
}

/* Nothing listed twice is summed or dropped silently: a duplicate record, key or
 * container makes the document unusable (and so its rows fall back to their native forms). */
static void test_listed_twice(void **state)
{
	(void)state;
	PROBLEM(REST_NODES, "{\"nodes\": [{\"name\": \"n1\", \"cpus\": 1}, {\"name\": \"n1\", \"cpus\": 2}]}", 1, 63,
		"node 'n1' listed twice");
	PROBLEM(REST_NODES, "{\"nodes\": [{\"name\": \"n1\", \"cpus\": 1}], \"nodes\": [{\"name\": \"n2\", \"cpus\": 2}]}", 1, 49,
		"'nodes' given twice");
	PROBLEM(REST_NODES, "{\"nodes\": [{\"name\": \"n1\", \"cpus\": 1, \"name\": \"n2\"}]}", 1, 43,
		"'name' given twice in a record of 'nodes'");
	PROBLEM(REST_NODES, "{\"nodes\": [{\"name\": \"n1\", \"cpus\": 1, \"partitions\": [\"a\", \"b\", \"a\"]}]}", 1, 67,
		"node 'n1' lists partition 'a' twice");
	PROBLEM(REST_NODES, "{\"nodes\": [{\"name\": \"n1\", \"cpus\": {\"number\": 1, \"number\": 2}}]}", 1, 59,
		"'cpus.number' given twice");
	PROBLEM(REST_DIAG, "{\"statistics\": {\"jobs_submitted\": 1, \"jobs_submitted\": 2}}", 1, 56,
		"'statistics.jobs_submitted' given twice");
	PROBLEM(REST_DIAG, "{\"statistics\": {\"a\": {\"b\": 1}, \"a\": {\"b\": 1}}}", 1, 43, "'statistics.a.b' given twice");
	PROBLEM(REST_JOBS, "{\"jobs\": [{\"job_id\": 5, \"job_state\": \"RUNNING\"}, {\"job_id\": 5, \"job_state\": \"PENDING\"}]}",
		1, 86, "job 5 listed twice");
	PROBLEM(REST_SHARES, "{\"shares\": {\"shares\": [{\"name\": \"u\", \"parent\": \"a\", \"type\": [\"USER\"]}, "
		"{\"type\": [\"USER\"], \"parent\": \"a\", \"name\": \"u\"}]}}", 1, 117,
		"share row of account 'a' user 'u' listed twice");
	PROBLEM(REST_RESERVATIONS, "{\"reservations\": [{\"name\": \"r\"}, {\"name\": \"r\"}], \"last_update\": 5}", 1, 46,
		"reservation 'r' listed twice");
	PROBLEM(REST_RESERVATIONS, "{\"reservations\": [{\"name\": \"r\", \"name\": \"s\"}], \"last_update\": 5}", 1, 38,
		"'name' given twice in a record of 'reservations'");
	PROBLEM(REST_RESERVATIONS, "{\"reservations\": [], \"last_update\": 5, \"last_update\": 6}", 1, 55,
		"'last_update' given twice");
	PROBLEM(REST_RESERVATIONS, "{\"reservations\": [], \"last_update\": {\"number\": 5, \"number\": 6}}", 1, 61,
		"'last_update' given twice");
	/* a reservation's node_list is expanded (when a table reads its nodes: here every family is kept)
	 * within slurmrestd_hostlist.h's bound, or the answer is refused, naming it */
	PROBLEM(REST_RESERVATIONS, "{\"reservations\": [{\"name\": \"r\", \"node_list\": \"n[1-70000]\"}], \"last_update\": 5}", 1,
		58, "reservation 'r': node_list 'n[1-70000]' not expanded (over 65536 hosts, or no host list)");
	PROBLEM(REST_RESERVATIONS, "{\"reservations\": [{\"name\": \"r\", \"node_list\": \"n[1-3\"}], \"last_update\": 5}", 1, 53,
		"reservation 'r': node_list 'n[1-3' not expanded (over 65536 hosts, or no host list)");
	/* the same names in other places are not twice: a user row and its account's row, two nodes'
	 * partitions, a key of two records */
	PROBLEM(REST_SHARES, "{\"shares\": {\"shares\": [{\"name\": \"a\"}, {\"name\": \"a\", \"parent\": \"a\", \"type\": [\"USER\"]},"
		" {\"name\": \"a\", \"partition\": \"p\"}]}}", 0, 0, "");
	PROBLEM(REST_NODES, "{\"nodes\": [{\"name\": \"n1\", \"cpus\": 1, \"partitions\": [\"a\"]}, {\"name\": \"n2\", \"cpus\": 1,"
		" \"partitions\": [\"a\"]}]}", 0, 0, "");
}

/* A job's TRES string (tres_alloc_str, else tres_req_str: what squeue -O tres-alloc prints), read
 * for slurmrestd_jobs_tres: an item that is not name=count, or a count past 2^53 (no double holds
 * it exactly), makes the document unusable naming the job, the field and the item; an item counted
 * in a unit ("mem=2G", "bb/x=1.50T") is skipped, not an error. A table that reads no TRES family
 * does not read the strings at all (test_rest_jobs_tres.c). */
static void test_tres_bad(void **state)
{
	(void)state;
#define TJOB(tres) "{\"jobs\":[{\"job_id\":7,\"job_state\":[\"RUNNING\"],\"tres_alloc_str\":\"" tres "\"}]}"
#define TBAD(tres, why) PROBLEM(REST_JOBS, TJOB(tres), 1, sizeof(TJOB(tres)) - 3, "job 7: tres_alloc_str item " why)
	TBAD("cpu=2,gres/gpu", "'gres/gpu': not name=count");
	TBAD("cpu=2,,node=1", "'': not name=count");
	TBAD("=2", "'=2': not name=count");
	TBAD("gres/gpu=x", "'gres/gpu=x': not name=count");
	TBAD("gres/gpu=2x", "'gres/gpu=2x': not name=count");
	TBAD("gres/gpu=-1", "'gres/gpu=-1': not name=count");
	TBAD("mem=1.G", "'mem=1.G': not name=count");
	TBAD("gres/gpu=9007199254740993", "'gres/gpu=9007199254740993': a count over 2^53");
	TBAD("gres/gpu=99999999999999999999999999999999999999",
	     "'gres/gpu=99999999999999999999999999999999999999': a count over 2^53");
	PROBLEM(REST_JOBS, "{\"jobs\":[{\"job_id\":8,\"job_state\":[\"PENDING\"],\"tres_alloc_str\":\"\","
		"\"tres_req_str\":\"cpu=1,gres/gpu:\"}]}", 1, 98, "job 8: tres_req_str item 'gres/gpu:': not name=count");
	/* good: units and fractions skipped, 2^53 itself, a trailing ',', nothing at all */
	PROBLEM(REST_JOBS, TJOB("cpu=2,mem=2G,bb/x=1.50T,fs/disk=3K,gres/gpu=9007199254740992,"), 0, 0, "");
	PROBLEM(REST_JOBS, TJOB(""), 0, 0, "");
#undef TBAD
#undef TJOB
}

/* A node in more than 64 partitions lost the rest (served as exact, no problem). */
static void test_many_partitions(void **state)
{
	(void)state;
	for (int parts = 100; parts <= REST_MAX_PARTS + 1; parts += REST_MAX_PARTS + 1 - 100) {
		struct buf b;
		buf_init(&b, 0);
		buf_printf(&b, "{\"nodes\": [{\"name\": \"n1\", \"cpus\": 2, \"partitions\": [");
		for (int i = 0; i < parts; i++)
			buf_printf(&b, "%s\"p%d\"", i ? ", " : "", i);
		buf_printf(&b, "]}]}");
		struct expo e;
		expo_init(&e);
		size_t bad = parse(&e, REST_NODES, b.data, b.len, 0);
		if (parts <= REST_MAX_PARTS) {
			assert_int_equal(bad, 0);
			assert_int_equal(family_n(&e, "slurmrestd_node_partition"), parts);
			assert_int_equal(family_n(&e, "slurmrestd_partition_cpus"), parts);
		} else {
			assert_int_equal(bad, 1);
			assert_string_equal(e.errors[0].reason, "a node in more than 4096 partitions");
		}
		expo_free(&e);
		buf_free(&b);
	}
}

static double value_of(const struct expo *e, const char *fam)
{
	const struct expo_family *f = expo_find(e, fam, strlen(fam));
	assert_non_null(f);
	assert_int_equal(f->n, 1);
	return f->samples[0].value;
}

/* Data_parser's {set, infinite, number} objects, whatever the order of their keys (a
 * proxy or jq -S sorts them): set false means not set, even when "number" came first. */
static void test_novals_any_order(void **state)
{
	(void)state;
	for (int o = 0; o < 3; o++) {
		char unset[96], inf[96], five[96], doc[512];
		const char *a[3][3] = { { "false", "false", "0" }, { "true", "true", "0" }, { "true", "false", "5" } };
		char *out[3] = { unset, inf, five };
		for (int k = 0; k < 3; k++) { /* the same members, in three orders */
			const char *set = a[k][0], *infinite = a[k][1], *num = a[k][2];
			if (o == 0)
				snprintf(out[k], 96, "{\"set\": %s, \"infinite\": %s, \"number\": %s}", set, infinite, num);
			else if (o == 1) /* sorted */
				snprintf(out[k], 96, "{\"infinite\": %s, \"number\": %s, \"set\": %s}", infinite, num, set);
			else
				snprintf(out[k], 96, "{\"number\": %s, \"set\": %s, \"infinite\": %s}", num, set, infinite);
		}
		snprintf(doc, sizeof(doc), "{\"nodes\": [{\"name\": \"n1\", \"cpus\": %s, \"free_mem\": %s, \"real_memory\": %s,"
			 " \"alloc_memory\": 3}]}", five, unset, inf);
		struct expo e;
		expo_init(&e);
		assert_int_equal(parse(&e, REST_NODES, doc, strlen(doc), 0), 0);
		assert_true(value_of(&e, "slurmrestd_node_cpus") == 5);
		assert_null(expo_find(&e, "slurmrestd_node_memory_free", 27));
		assert_true(isinf(value_of(&e, "slurmrestd_node_memory")));
		assert_true(value_of(&e, "slurmrestd_node_memory_alloc") == 3);
		expo_free(&e);
		snprintf(doc, sizeof(doc), "{\"statistics\": {\"a\": %s, \"b\": %s, \"c\": %s}}", unset, inf, five);
		expo_init(&e);
		assert_int_equal(parse(&e, REST_DIAG, doc, strlen(doc), 0), 0);
		assert_true(isnan(value_of(&e, "slurmrestd_diag_a")));
		assert_true(isinf(value_of(&e, "slurmrestd_diag_b")));
		assert_true(value_of(&e, "slurmrestd_diag_c") == 5);
		expo_free(&e);
	}
}

/* A job whose field nothing reads (its --comment) holds a string of `len` bytes. */
static char *job_with_comment(size_t len, size_t *n)
{
	static const char head[] = "{\"jobs\": [{\"comment\": \"", tail[] =
		"\", \"job_state\": [\"PENDING\"], \"user_name\": \"u\", \"cpus\": 2}, {\"job_state\": \"RUNNING\"}]}";
	*n = sizeof(head) - 1 + len + sizeof(tail) - 1;
	char *doc = xmalloc(*n + 1);
	memcpy(doc, head, sizeof(head) - 1);
	for (size_t i = 0; i < len; i++) /* escapes and UTF-8 all along: a cut keeps neither broken */
		doc[sizeof(head) - 1 + i] = "ab\\n\xc3\xa9z"[i % 7];
	if (len && (doc[sizeof(head) - 2 + len] == '\\' || doc[sizeof(head) - 2 + len] == '\xc3'))
		doc[sizeof(head) - 2 + len] = 'x'; /* the text ends whole */
	memcpy(doc + sizeof(head) - 1 + len, tail, sizeof(tail));
	return doc;
}

/* One job with a 70 KB --comment (any user can submit one) made the whole /jobs answer
 * unusable; strings in fields nothing reads are skipped whatever their length, without being held. */
static void test_huge_unread_string(void **state)
{
	(void)state;
	static const size_t lens[] = { REST_MAX_STRING - 1, REST_MAX_STRING, REST_MAX_STRING + 1, 70000, 8u << 20 };
	for (size_t i = 0; i < sizeof(lens) / sizeof(lens[0]); i++)
		for (size_t chunk = 0; chunk <= 16384; chunk += 16384) {
			size_t n, m;
			char *doc = job_with_comment(lens[i], &n);
			struct expo e;
			expo_init(&e);
			struct mallinfo2 before = mallinfo2();
			void *st = rest_begin(&e, REST_JOBS);
			size_t step = chunk ? chunk : n;
			for (size_t off = 0; off < n; off += step)
				rest_feed(st, &e, doc + off, n - off < step ? n - off : step);
			struct mallinfo2 after = mallinfo2(); /* yajl may hold what one chunk holds, not more */
			if (chunk && after.uordblks > before.uordblks && after.uordblks - before.uordblks > (2u << 20))
				fail_msg("%zu bytes held for one string", after.uordblks - before.uordblks);
			size_t bad = rest_end(st, &e);
			if (bad)
				fail_msg("comment of %zu bytes: %s", lens[i], e.errors[0].reason);
			const char *pairs[] = { "user", "u", "state", "PENDING" };
			assert_true(sum_where(&e, "slurmrestd_jobs_cpus", &m, pairs, 2) == 2);
			assert_true(sum_where(&e, "slurmrestd_jobs", &m, NULL, 0) == 2);
			expo_free(&e);
			free(doc);
		}
	/* a string a record reads is refused past REST_MAX_STRING, wherever it stands */
	size_t n;
	char *doc = job_with_comment(10, &n);
	struct buf b;
	buf_init(&b, 0);
	buf_printf(&b, "{\"jobs\": [{\"user_name\": \"");
	for (size_t i = 0; i <= REST_MAX_STRING; i++)
		buf_append(&b, "u", 1);
	buf_printf(&b, "\", \"job_state\": \"RUNNING\"}]}");
	char why[200];
	size_t at;
	assert_int_equal(problem_of(REST_JOBS, b.data, why, &at), 1);
	assert_string_equal(why, "'user_name' is longer than 65536 bytes");
	assert_int_equal(at, 25 + REST_MAX_STRING + 1 + 1); /* just after its closing quote */
	buf_free(&b);
	free(doc);
}

/* A string cut in pieces is still checked as yajl checks one (src/jsonfeed.c): an invalid escape,
 * invalid UTF-8 or a control character past the cut refuses the document as it does whole. */
static void test_cut_string_checked(void **state)
{
	(void)state;
	static const char *const bad[] = { "\\x", "\\u12g4", "\xff", "\xc3(", "\x01" };
	size_t len = 3 * REST_MAX_STRING * 6; /* past JSONFEED_CUT: cut when fed in pieces */
	for (size_t b = 0; b <= sizeof(bad) / sizeof(bad[0]); b++) {
		size_t n;
		char *doc = job_with_comment(len, &n);
		if (b < sizeof(bad) / sizeof(bad[0])) /* near the end of the comment, well past the cut */
			memcpy(doc + 24 + len - 100, bad[b], strlen(bad[b]));
		for (size_t chunk = 0; chunk <= 16384; chunk += 16384) {
			struct expo e;
			expo_init(&e);
			size_t got = parse(&e, REST_JOBS, doc, n, chunk);
			if (got != (b < sizeof(bad) / sizeof(bad[0])))
				fail_msg("case %zu, pieces of %zu: %zu problem(s) %s", b, chunk, got, e.nerrors ? e.errors[0].reason : "");
			expo_free(&e);
		}
		free(doc);
	}
}

static int only_state(const char *name, size_t len, void *ctx)
{
	(void)ctx;
	return slice_is_equal(name, len, "slurmrestd_node_state", 21);
}

/* expo_add honours the keep filter: the families nobody reads are not stored. */
static void test_keep_filter(void **state)
{
	(void)state;
	size_t len;
	char *text = slurp_state("slurm-25.11-rest/R2-busy-mix-draining", "rest_nodes.json", &len);
	struct expo e;
	expo_init_keep(&e, only_state, NULL);
	assert_int_equal(parse(&e, REST_NODES, text, len, 0), 0);
	assert_int_equal(e.nfams, 1);
	assert_int_equal(e.nsamples, 5);
	assert_int_equal(e.nnamed, 231); /* the samples not kept still say the answer named families
					  (19 per node, 5 nodes; 15 per node and partition, 9 memberships; one reason) */
	expo_free(&e);
	free(text);
}

static void test_expo_add(void **state)
{
	(void)state;
	struct expo e;
	expo_init(&e);
	char name[] = "fam", v1[] = "x", v2[] = "y";
	struct label l[2] = { { "b", v1, 1, 1 }, { "a", v2, 1, 1 } };
	assert_int_equal(expo_add(&e, name, 3, l, 2, 1.5), 1);
	memset(v1, 'z', 1); /* the expo holds its own copies */
	memset(name, 'q', 3);
	const struct expo_family *f = expo_find(&e, "fam", 3);
	assert_non_null(f);
	assert_int_equal(f->n, 1);
	const struct expo_sample *s = &f->samples[0];
	assert_int_equal(s->nlabels, 2);
	assert_memory_equal(s->labels[0].name, "a", 1); /* sorted by name */
	assert_memory_equal(s->labels[1].value, "x", 1);
	assert_int_equal(s->hash, labels_hash(s->labels, 2));
	expo_add_end(&e);
	assert_false(f->duplicate);
	struct label m[2] = { { "a", "y", 1, 1 }, { "b", "x", 1, 1 } };
	expo_add(&e, "fam", 3, m, 2, 2);
	expo_add_end(&e);
	assert_true(expo_find(&e, "fam", 3)->duplicate);
	expo_free(&e);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_nodes_equal_sinfo),
		cmocka_unit_test(test_partitions_equal_sinfo),
		cmocka_unit_test(test_node_partitions_and_gpus),
		cmocka_unit_test(test_node_reasons_equal_scontrol),
		cmocka_unit_test(test_fairshare_equals_sshare),
		cmocka_unit_test(test_jobs_equal_squeue),
		cmocka_unit_test(test_array_tasks),
		cmocka_unit_test(test_node_state_rule),
		cmocka_unit_test(test_job_state_rule),
		cmocka_unit_test(test_unresolved_user),
		cmocka_unit_test(test_pieces_equal_whole),
		cmocka_unit_test(test_malformed),
		cmocka_unit_test(test_bounds),
		cmocka_unit_test(test_long_paths),
		cmocka_unit_test(test_uid_not_a_uid),
		cmocka_unit_test(test_shapeless),
		cmocka_unit_test(test_listed_twice),
		cmocka_unit_test(test_tres_bad),
		cmocka_unit_test(test_many_partitions),
		cmocka_unit_test(test_novals_any_order),
		cmocka_unit_test(test_huge_unread_string),
		cmocka_unit_test(test_cut_string_checked),
		cmocka_unit_test(test_keep_filter),
		cmocka_unit_test(test_expo_add),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
