/* test_restjson.c: slurmrestd JSON -> families (src/slurmrestd.c, src/reststate.c) and the family
 * builder expo_add (src/expo.c), on the real captures of tests/fixtures/slurm-25.11-rest/ (six
 * cluster states, each with the CLI outputs the old exporter parsed, taken at the same instant):
 * every node's state string, CPUs and memory equal sinfo's; FairShare equals sshare's; job counts
 * and CPUs by state, reason, user, account and partition equal squeue's; any answer fed in pieces
 * of 1..16384 bytes gives exactly the families of the whole answer; truncated, garbage, deeply
 * nested, huge-string and wrong-typed JSON is counted malformed without a crash. */
#include "testutil.h"

#include <malloc.h>
#include <math.h>

#include "expo.h"
#include "labels.h"
#include "reststate.h"
#include "slurmrestd.h"

#define REST_DIR "tests/fixtures/slurm-25.11-rest/"

static const char *const states[] = {
	"R1-idle-drained", "R2-busy-mix-draining", "R4-downdrain-fail-maint-reserved",
	"R6-completing-epilog", "R7-planned-idle-gpu-resumed", "R9-idle-all-finished-future-resv",
};
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
	return k >= 0 && slice_eq(s->labels[k].value, s->labels[k].vlen, value, strlen(value));
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
	parse_file(&e, REST_NODES, "R2-busy-mix-draining", "rest_nodes.json");
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
	parse_file(&e, REST_NODES, "R4-downdrain-fail-maint-reserved", "rest_nodes.json");
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
	parse_file(&e, REST_JOBS, "R2-busy-mix-draining", "rest_jobs.json");
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
		if (!slice_eq(f->name, f->nlen, g->name, g->nlen) || f->n != g->n || f->duplicate != g->duplicate)
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
	char *text = slurp_state("R2-busy-mix-draining", "rest_nodes.json", &len);
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
	/* wrong types: a record missing what it needs is counted and skipped; others are ignored */
	static const char wrong[] =
		"{\"nodes\":[{\"name\":5,\"cpus\":\"x\",\"state\":\"IDLE\"},{\"name\":\"n2\",\"cpus\":8,"
		"\"partitions\":{\"a\":1},\"state\":[1,{\"x\":[]}],\"free_mem\":{\"number\":\"y\"}}],"
		"\"jobs\":7}";
	expo_init(&e);
	assert_int_equal(parse(&e, REST_NODES, wrong, sizeof(wrong) - 1, 0), 1);
	assert_int_equal(expo_find(&e, "slurmrestd_node_state", 21)->n, 1);
	expo_free(&e);
	assert_int_equal(bad_of(REST_JOBS, "{\"jobs\":[{}, 3, \"x\"]}", 21, 0), 1);
	/* a node or share row with an empty name cannot be told apart from another one */
	static const char unnamed[] = "{\"nodes\":[{\"name\":\"\",\"cpus\":4,\"partitions\":[\"\"]},"
				      "{\"name\":\"n1\",\"cpus\":4,\"partitions\":[\"\",\"p\"]}]}";
	expo_init(&e);
	assert_int_equal(parse(&e, REST_NODES, unnamed, sizeof(unnamed) - 1, 0), 1);
	assert_int_equal(expo_find(&e, "slurmrestd_node_state", 21)->n, 1);
	assert_int_equal(expo_find(&e, "slurmrestd_partition_cpus", 25)->n, 1);
	expo_free(&e);
	static const char noname[] = "{\"shares\":{\"shares\":[{\"name\":\"\"}]}}";
	assert_int_equal(bad_of(REST_SHARES, noname, sizeof(noname) - 1, 0), 1);
	assert_int_equal(bad_of(REST_SHARES, "{\"shares\":{\"shares\":[{\"type\":[\"USER\"]}]}}", 41, 0), 1);
	assert_int_equal(bad_of(REST_DIAG, "{\"statistics\":[1,2]}", 20, 0), 0);
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

static int only_state(const char *name, size_t len, void *ctx)
{
	(void)ctx;
	return slice_eq(name, len, "slurmrestd_node_state", 21);
}

/* expo_add honours the keep filter: the families nobody reads are not stored. */
static void test_keep_filter(void **state)
{
	(void)state;
	size_t len;
	char *text = slurp_state("R2-busy-mix-draining", "rest_nodes.json", &len);
	struct expo e;
	expo_init_keep(&e, only_state, NULL);
	assert_int_equal(parse(&e, REST_NODES, text, len, 0), 0);
	assert_int_equal(e.nfams, 1);
	assert_int_equal(e.nsamples, 5);
	assert_int_equal(e.nnamed, 76); /* the samples not kept still say the answer named families
					 (15 per node, 5 nodes, one reason) */
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
		cmocka_unit_test(test_keep_filter),
		cmocka_unit_test(test_expo_add),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
