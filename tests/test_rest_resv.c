/* test_rest_resv.c: the slurmrestd reader's reservations: /reservations' families against what
 * `scontrol show reservation` printed at the same instant (tests/fixtures/peers-25.11/P3..P7), a
 * reservation's state told against the answer's last_update, its flags in scontrol's order and words,
 * its node_list expanded only when kept; /nodes' slurmrestd_node_reservation (scontrol show node's
 * ReservationName and State='s first word), declared by an answer where no node is in a reservation.
 * The answers that are refused are in test_restjson.c (test_shapeless, test_listed_twice). */
#include "rest_fixture.h"

#include <glob.h>
#include <math.h>
#include <time.h>
#include <unistd.h>

#include "mapping.h"
#include "payload.h"
#include "render.h"

#define NV(x) "{\"set\": true, \"infinite\": false, \"number\": " #x "}"

static size_t parse_keep(struct expo *e, enum rest_doc doc, const char *text, size_t len, expo_keep_fn keep)
{
	return tu_rest_parse(e, doc, text, len, keep, NULL);
}

/* Label name of s as a string ("" when it has none). */
static const char *label_value(const struct expo_sample *s, const char *name, char *buf, size_t cap)
{
	int k = labels_find(s->labels, s->nlabels, name, strlen(name));
	snprintf(buf, cap, "%.*s", k < 0 ? 0 : (int)s->labels[k].vlen, k < 0 ? "" : s->labels[k].value);
	return buf;
}

/* scontrol's value of key in one record ("(null)" read as ""), into out */
static const char *scontrol_value(const char *rec, size_t n, const char *key, char *out, size_t cap)
{
	size_t kl = strlen(key);
	out[0] = '\0';
	for (size_t i = 0; i + kl < n; i++)
		if ((i == 0 || rec[i - 1] == ' ' || rec[i - 1] == '\n') && !strncmp(rec + i, key, kl) && rec[i + kl] == '=') {
			size_t j = i + kl + 1, k = 0;
			while (j < n && rec[j] != ' ' && rec[j] != '\n' && k + 1 < cap)
				out[k++] = rec[j++];
			out[k] = '\0';
			break;
		}
	if (!strcmp(out, "(null)"))
		out[0] = '\0';
	return out;
}

static double scontrol_time(const char *s)
{
	struct tm tm = { 0 };
	assert_non_null(strptime(s, "%Y-%m-%dT%H:%M:%S", &tm)); /* the captures' hosts ran in UTC */
	return (double)timegm(&tm);
}

/* One reservation record of scontrol's text against the families. */
static void check_record(const struct expo *e, const char *rec, size_t n, const char *state)
{
	char name[128], v[512], got[512];
	scontrol_value(rec, n, "ReservationName", name, sizeof(name));
	const struct expo_sample *info = tu_sample_with(e, "slurmrestd_reservation_info", "reservation", name);
	if (!info)
		fail_msg("%s: reservation %s: no slurmrestd_reservation_info", state, name);
	static const char *const pairs[][2] = {
		{ "State", "state" }, { "Flags", "flags" }, { "Users", "users" }, { "Accounts", "accounts" },
		{ "Nodes", "nodes" }, { "PartitionName", "partition" },
	};
	for (size_t i = 0; i < sizeof(pairs) / sizeof(pairs[0]); i++) {
		scontrol_value(rec, n, pairs[i][0], v, sizeof(v));
		label_value(info, pairs[i][1], got, sizeof(got));
		if (strcmp(v, got))
			fail_msg("%s: reservation %s: %s=%s, label %s=\"%s\"", state, name, pairs[i][0], v, pairs[i][1], got);
	}
	static const char *const nums[][2] = {
		{ "NodeCnt", "slurmrestd_reservation_node_count" }, { "CoreCnt", "slurmrestd_reservation_core_count" },
		{ "StartTime", "slurmrestd_reservation_start_time" }, { "EndTime", "slurmrestd_reservation_end_time" },
	};
	for (size_t i = 0; i < sizeof(nums) / sizeof(nums[0]); i++) {
		scontrol_value(rec, n, nums[i][0], v, sizeof(v));
		const struct expo_sample *s = tu_sample_with(e, nums[i][1], "reservation", name);
		assert_non_null(s);
		double want = strchr(v, 'T') ? scontrol_time(v) : strtod(v, NULL);
		if (s->value != want)
			fail_msg("%s: reservation %s: %s=%s, %s %.17g", state, name, nums[i][0], v, nums[i][1], s->value);
	}
}

/* The captures with scontrol's text beside slurmrestd's answers: peers-25.11 (Slurm 25.11.7, data_parser
 * v0.0.44) names them context_scontrol_show_*, slurm-25.11-rest and slurm-26.05-rest (v0.0.45)
 * context_scontrol_{res,nodes}. *text: scontrol's text of `what` (reservations or nodes), or NULL. */
static char *capture(const char *dir, const char *what, const char *json_name, char **text, size_t *len)
{
	char path[600];
	int peers = strstr(dir, "peers-25.11") != NULL;
	snprintf(path, sizeof(path), "%s/context_scontrol_%s.txt", dir,
		 peers ? (strcmp(what, "nodes") ? "show_reservations" : "show_nodes") : (strcmp(what, "nodes") ? "res" : "nodes"));
	*text = tu_slurp(path, NULL);
	snprintf(path, sizeof(path), "%s/%s", dir, json_name);
	return tu_slurp(path, len);
}

/* each record of scontrol's text (records end with a blank line) starting with `first` */
static size_t each_record(const char *text, const char *first, void (*fn)(const char *rec, size_t n, void *ctx), void *ctx)
{
	size_t records = 0;
	for (const char *p = text ? text : ""; *p;) {
		const char *end = strstr(p, "\n\n");
		size_t n = end ? (size_t)(end - p) : strlen(p);
		if (!strncmp(p, first, strlen(first))) {
			fn(p, n, ctx);
			records++;
		}
		p += n;
		while (*p == '\n')
			p++;
	}
	return records;
}

struct check_ctx { const struct expo *e; const char *state; };

static void check_resv(const char *rec, size_t n, void *ctx)
{
	const struct check_ctx *c = ctx;
	check_record(c->e, rec, n, c->state);
}

static const char *const capture_globs[] = { "tests/fixtures/peers-25.11/P*", "tests/fixtures/slurm-2*-rest/R*" };

/* Every reservation scontrol printed, field for field, and no other, on every capture */
static void test_reservations_equal_scontrol(void **state)
{
	(void)state;
	size_t checked = 0, states = 0;
	for (size_t g = 0; g < sizeof(capture_globs) / sizeof(capture_globs[0]); g++) {
		glob_t gl;
		assert_int_equal(glob(capture_globs[g], 0, NULL, &gl), 0);
		for (size_t i = 0; i < gl.gl_pathc; i++) {
			size_t len;
			char *text, *json = capture(gl.gl_pathv[i], "reservations", "rest_reservations.json", &text, &len);
			if (!json || !text) { /* a capture without reservations' answer or scontrol's text */
				free(json);
				free(text);
				continue;
			}
			struct expo e;
			assert_int_equal(parse_keep(&e, REST_RESERVATIONS, json, len, NULL), 0);
			struct check_ctx c = { &e, gl.gl_pathv[i] };
			size_t records = each_record(text, "ReservationName=", check_resv, &c);
			const struct expo_family *f = expo_find(&e, "slurmrestd_reservation_info", 27);
			assert_int_equal(f ? f->n : 0, records);
			checked += records;
			states++;
			expo_free(&e);
			free(json);
			free(text);
		}
		globfree(&gl);
	}
	/* P3 one, P4 and P5 two, P6 and P7 one, P8 and P9 none; 25.11's R4 two, R9 one; 26.05's R4, R9,
	 * R10 one */
	assert_int_equal(checked, 13);
	assert_int_equal(states, 21);
}

static void check_node(const char *rec, size_t n, void *ctx)
{
	const struct check_ctx *c = ctx;
	char name[128], resv[128], st[256], got[256];
	scontrol_value(rec, n, "NodeName", name, sizeof(name));
	scontrol_value(rec, n, "ReservationName", resv, sizeof(resv));
	scontrol_value(rec, n, "State", st, sizeof(st));
	st[strcspn(st, "+")] = '\0'; /* the base state: State='s first word */
	const struct expo_sample *s = tu_sample_with(c->e, "slurmrestd_node_reservation", "node", name);
	if (!resv[0]) {
		if (s)
			fail_msg("%s: node %s: no ReservationName, a slurmrestd_node_reservation series", c->state, name);
		return;
	}
	if (!s)
		fail_msg("%s: node %s: ReservationName=%s, no slurmrestd_node_reservation", c->state, name, resv);
	if (strcmp(label_value(s, "reservation", got, sizeof(got)), resv))
		fail_msg("%s: node %s: ReservationName=%s, reservation=\"%s\"", c->state, name, resv, got);
	if (strcmp(label_value(s, "base_state", got, sizeof(got)), st))
		fail_msg("%s: node %s: State=%s..., base_state=\"%s\"", c->state, name, st, got);
}

/* slurmrestd_node_reservation equals scontrol show node's ReservationName and the first word of its
 * State=, node for node, on every capture */
static void test_node_reservation_equal_scontrol(void **state)
{
	(void)state;
	size_t in_resv = 0, nodes = 0;
	for (size_t g = 0; g < sizeof(capture_globs) / sizeof(capture_globs[0]); g++) {
		glob_t gl;
		assert_int_equal(glob(capture_globs[g], 0, NULL, &gl), 0);
		for (size_t i = 0; i < gl.gl_pathc; i++) {
			size_t len;
			char *text, *json = capture(gl.gl_pathv[i], "nodes", "rest_nodes.json", &text, &len);
			if (!json || !text) {
				free(json);
				free(text);
				continue;
			}
			struct expo e;
			assert_int_equal(parse_keep(&e, REST_NODES, json, len, NULL), 0);
			struct check_ctx c = { &e, gl.gl_pathv[i] };
			nodes += each_record(text, "NodeName=", check_node, &c);
			const struct expo_family *f = expo_find(&e, "slurmrestd_node_reservation", 27);
			in_resv += f ? f->n : 0;
			expo_free(&e);
			free(json);
			free(text);
		}
		globfree(&gl);
	}
	/* 21 captures of 5 nodes; in an active reservation: n1 of P3, P4, P5, n1 and n2 of 25.11's R4, n2 of
	 * 26.05's R4 */
	assert_int_equal(nodes, 105);
	assert_int_equal(in_resv, 6);
}

/* scontrol: ACTIVE when start_time <= now <= end_time; now is the answer's last_update, a number or a
 * {set, infinite, number} object, before or after the records */
static void test_reservation_state(void **state)
{
	(void)state;
	static const struct { const char *clock; int before; const char *want; } cases[] = {
		{ "99", 0, "INACTIVE" }, { "100", 0, "ACTIVE" }, { NV(150), 1, "ACTIVE" }, { "200", 1, "ACTIVE" },
		{ NV(201), 0, "INACTIVE" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char doc[512], got[32];
		const char *resv = "\"reservations\": [{\"name\": \"r\", \"start_time\": " NV(100) ", \"end_time\": 200}]";
		snprintf(doc, sizeof(doc), cases[i].before ? "{\"last_update\": %s, %s}" : "{%2$s, \"last_update\": %1$s}",
			 cases[i].clock, resv);
		struct expo e;
		tu_rest_parse_ok(&e, REST_RESERVATIONS, doc);
		const struct expo_sample *s = tu_sample_with(&e, "slurmrestd_reservation_info", "reservation", "r");
		assert_non_null(s);
		if (strcmp(label_value(s, "state", got, sizeof(got)), cases[i].want))
			fail_msg("last_update %s: state %s, want %s", cases[i].clock, got, cases[i].want);
		expo_free(&e);
	}
}

/* flags as scontrol's reservation_flags_string() writes them: its order whatever the answer's, the
 * data_parser's names it never prints left out, PURGE_COMP=<[days-]HH:MM:SS>, an unknown name last */
static void test_reservation_flags(void **state)
{
	(void)state;
	static const struct { const char *flags, *purge, *want; } cases[] = {
		{ "\"SPEC_NODES\", \"IGNORE_JOBS\", \"MAINT\"", "0", "MAINT,IGNORE_JOBS,SPEC_NODES" },
		{ "\"NEW_ONE\", \"PURGE_COMP\", \"TRES_PER_NODE\", \"NO_IGNORE_JOBS\", \"DAILY\"", NV(300),
		  "DAILY,PURGE_COMP=00:05:00,NEW_ONE" },
		{ "\"PURGE_COMP\"", NV(90061), "PURGE_COMP=1-01:01:01" },
		{ "\"PURGE_COMP\"", "{\"set\": false, \"number\": 0}", "PURGE_COMP" },
		{ "\"REOCCURRING\", \"SKIP\"", "0", "" },
		{ "", "0", "" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char doc[512], got[128];
		snprintf(doc, sizeof(doc),
			 "{\"reservations\": [{\"name\": \"r\", \"flags\": [%s], \"purge_completed\": {\"time\": %s}}],"
			 " \"last_update\": 5}",
			 cases[i].flags, cases[i].purge);
		struct expo e;
		tu_rest_parse_ok(&e, REST_RESERVATIONS, doc);
		const struct expo_sample *s = tu_sample_with(&e, "slurmrestd_reservation_info", "reservation", "r");
		assert_non_null(s);
		if (strcmp(label_value(s, "flags", got, sizeof(got)), cases[i].want))
			fail_msg("flags [%s]: \"%s\", want \"%s\"", cases[i].flags, got, cases[i].want);
		expo_free(&e);
	}
}

static int keep_no_resv_node(const char *name, size_t len, void *ctx)
{
	(void)ctx;
	return !slice_is_equal(name, len, "slurmrestd_reservation_node", 27);
}

/* slurmrestd_reservation_node{node,reservation}: the node_list expanded, only when kept (a list it
 * cannot expand is then no problem); Slurm's NO_VAL node_count is scontrol's NodeCnt=0 */
static void test_reservation_nodes(void **state)
{
	(void)state;
	static const char doc[] = "{\"reservations\": [{\"name\": \"r\", \"node_list\": \"n[1-3],gpu01\", \"node_count\": 4},"
				  " {\"name\": \"s\", \"node_list\": \"\", \"node_count\": 4294967294}], \"last_update\": 5}";
	struct expo e;
	tu_rest_parse_ok(&e, REST_RESERVATIONS, doc);
	const struct expo_family *f = expo_find(&e, "slurmrestd_reservation_node", 27);
	assert_non_null(f);
	assert_int_equal(f->n, 4);
	assert_non_null(tu_sample_with(&e, "slurmrestd_reservation_node", "node", "n2"));
	assert_non_null(tu_sample_with(&e, "slurmrestd_reservation_node", "node", "gpu01"));
	assert_true(tu_sample_with(&e, "slurmrestd_reservation_node_count", "reservation", "s")->value == 0);
	expo_free(&e);
	static const char big[] = "{\"reservations\": [{\"name\": \"r\", \"node_list\": \"n[1-70000]\"}], \"last_update\": 5}";
	assert_int_equal(parse_keep(&e, REST_RESERVATIONS, big, sizeof(big) - 1, keep_no_resv_node), 0);
	assert_null(expo_find(&e, "slurmrestd_reservation_node", 27));
	assert_non_null(tu_sample_with(&e, "slurmrestd_reservation_info", "reservation", "r"));
	expo_free(&e);
	assert_int_equal(parse_keep(&e, REST_RESERVATIONS, big, sizeof(big) - 1, NULL), 1);
	expo_free(&e);
	/* the lists together: 16 of 65,536 hosts are the most (1,048,576), a 17th is refused before any
	 * is expanded */
	char doc17[2048];
	size_t at = (size_t)snprintf(doc17, sizeof(doc17), "{\"last_update\": 5, \"reservations\": [");
	for (int i = 0; i < 17; i++)
		at += (size_t)snprintf(doc17 + at, sizeof(doc17) - at, "%s{\"name\": \"r%d\", \"node_list\": \"n[1-65536]\"}",
				       i ? ", " : "", i);
	snprintf(doc17 + at, sizeof(doc17) - at, "]}");
	assert_int_equal(parse_keep(&e, REST_RESERVATIONS, doc17, strlen(doc17), NULL), 1);
	assert_string_equal(e.errors[0].reason,
			    "the reservations' node_lists hold more than 1048576 hosts together (at reservation 'r16')");
	expo_free(&e);
}

/* /nodes: a node whose reservation is set, with its base state as scontrol's State= begins; no node in
 * a reservation: the family declared with no series, so that a row may read it as none */
static void test_node_reservation(void **state)
{
	(void)state;
	static const char doc[] =
		"{\"nodes\": [{\"name\": \"a\", \"cpus\": 4, \"state\": [\"IDLE\", \"DRAIN\", \"RESERVED\"], \"reservation\": \"m\"},"
		" {\"name\": \"b\", \"cpus\": 4, \"state\": [\"MIXED\", \"PLANNED\"], \"reservation\": \"m\"},"
		" {\"name\": \"c\", \"cpus\": 4, \"state\": [\"ALLOCATED\"], \"reservation\": \"\"}], \"errors\": []}";
	struct expo e;
	char v[32];
	tu_rest_parse_ok(&e, REST_NODES, doc);
	const struct expo_family *f = expo_find(&e, "slurmrestd_node_reservation", 27);
	assert_non_null(f);
	assert_int_equal(f->n, 2);
	const struct expo_sample *a = tu_sample_with(&e, "slurmrestd_node_reservation", "node", "a");
	assert_string_equal(label_value(a, "base_state", v, sizeof(v)), "IDLE");
	assert_string_equal(label_value(a, "reservation", v, sizeof(v)), "m");
	assert_string_equal(label_value(a, "state", v, sizeof(v)), "drained");
	const struct expo_sample *b = tu_sample_with(&e, "slurmrestd_node_reservation", "node", "b");
	assert_string_equal(label_value(b, "base_state", v, sizeof(v)), "MIXED");
	assert_null(tu_sample_with(&e, "slurmrestd_node_reservation", "node", "c"));
	expo_free(&e);
	tu_rest_parse_ok(&e, REST_NODES, "{\"nodes\": [{\"name\": \"c\", \"cpus\": 4, \"state\": [\"IDLE\"]}]}");
	f = expo_find(&e, "slurmrestd_node_reservation", 27);
	assert_non_null(f);
	assert_int_equal(f->n, 0);
	assert_true(f->declared);
	expo_free(&e);
}

/* SckyzO's table on P4 with /reservations' answer cut, shapeless, errors set or without its clock: the
 * reservation rows read from it are left out (their native form is unavailable), never served empty, and
 * the source's reason says why; the node buckets, from /nodes, are still served. (A host list the table
 * does not read is no problem: test_reservation_nodes.) */
static void test_bad_answer_leaves_rows_out(void **state)
{
	(void)state;
	const char *dir = "tests/fixtures/peers-25.11/P4-licenses-gpu-full";
	size_t len;
	char path[256];
	snprintf(path, sizeof(path), "%s/rest_reservations.json", dir);
	char *good = tu_slurp(path, &len);
	assert_non_null(good);
	char cut[600];
	snprintf(cut, sizeof(cut), "%.500s", good);
	const char *const bad[] = {
		cut, "{\"reservations\": {}, \"last_update\": 5}",
		"{\"reservations\": [], \"last_update\": 5, \"errors\": [{\"error\": \"Unable to query reservations\"}]}",
		"{\"reservations\": [{\"name\": \"r\", \"start_time\": 1, \"end_time\": 9}]}",
	};
	struct buf msg;
	buf_init(&msg, 0);
	struct mapping *m = mapping_load("mappings/sckyzo-slurm-exporter.json", &msg);
	assert_non_null(m);
	buf_free(&msg);
	for (size_t b = 0; b < sizeof(bad) / sizeof(bad[0]); b++) {
		struct payload *p[SRC_COUNT] = { 0 };
		for (int ep = 0; ep < SRC_COUNT; ep++) {
			if (ep != SRC_REST_RESERVATIONS) {
				p[ep] = payload_replay(dir, (enum source_id)ep, 1 << 28, 0, mapping_has_input, (void *)m);
				continue;
			}
			p[ep] = payload_new((enum source_id)ep, 0, mapping_has_input, (void *)m);
			payload_feed(p[ep], bad[b], strlen(bad[b]), 1 << 28);
			payload_finish(p[ep]);
			assert_false(p[ep]->ok);
			assert_true(strlen(p[ep]->reason) > 0);
		}
		const struct render_in in = { .m = m, .flags = ROW_FLAG_REST_JOBS, .p = (const struct payload *const *)p };
		struct render_result res;
		struct buf out;
		buf_init(&out, 0);
		assert_int_equal(render_run(&in, &out, &res), 200);
		buf_putc(&out, '\0'); /* the body as a string, for strstr */
		size_t left_out = 0, buckets = 0;
		for (size_t i = 0; i < m->nrows; i++) {
			const char *name = m->rows[i].name;
			if (!strncmp(name, "slurm_reservation_nodes_", 24)) {
				assert_int_equal(res.rows[i].status, ROW_OK);
				buckets++;
			} else if (!strncmp(name, "slurm_reservation_", 18)) {
				assert_int_equal(res.rows[i].status, ROW_UNAVAILABLE);
				assert_null(strstr(out.data, name));
				left_out++;
			}
		}
		assert_int_equal(left_out, 5);
		assert_int_equal(buckets, 8);
		assert_non_null(strstr(out.data, "slurm_reservation_nodes_idle{reservation=\"maint_n1\"} 1"));
		render_result_free(&res);
		buf_free(&out);
		for (int ep = 0; ep < SRC_COUNT; ep++)
			payload_unref(p[ep]);
	}
	mapping_free(m);
	free(good);
}

/* A family the answer declares with no series (no node in a reservation) reads as none in a row that
 * lists it in absent_ok, and the row is served with no series; without absent_ok it is missing, as a
 * family the answer does not have: the row is left out (input_missing), never served empty. */
static void test_declared_family_in_rows(void **state)
{
	(void)state;
	char path[256];
	snprintf(path, sizeof(path), "%s/rest_resv_XXXXXX", tu_tmpdir());
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	static const char table[] =
		"{\"metrics\": ["
		"{\"name\": \"ok\", \"help\": \"h\", \"type\": \"gauge\", \"fidelity\": \"exact\", "
		"\"expr\": \"count by (reservation) (slurmrestd_node_reservation)\", \"absent_ok\": [\"slurmrestd_node_reservation\"]},"
		"{\"name\": \"not_ok\", \"help\": \"h\", \"type\": \"gauge\", \"fidelity\": \"exact\", "
		"\"expr\": \"count by (reservation) (slurmrestd_node_reservation)\"}]}";
	assert_int_equal(write(fd, table, sizeof(table) - 1), (ssize_t)(sizeof(table) - 1));
	close(fd);
	struct buf msg;
	buf_init(&msg, 0);
	struct mapping *m = mapping_load(path, &msg);
	unlink(path);
	if (!m)
		fail_msg("%.*s", (int)msg.len, msg.data);
	buf_free(&msg);
	static const char *const nodes[] = {
		"{\"nodes\": [{\"name\": \"a\", \"cpus\": 4, \"state\": [\"IDLE\"], \"reservation\": \"\"}]}",
		"{\"nodes\": [{\"name\": \"a\", \"cpus\": 4, \"state\": [\"IDLE\"], \"reservation\": \"m\"}]}",
	};
	for (size_t k = 0; k < 2; k++) {
		struct payload *p[SRC_COUNT] = { 0 };
		p[SRC_REST_NODES] = payload_new(SRC_REST_NODES, 0, mapping_has_input, (void *)m);
		payload_feed(p[SRC_REST_NODES], nodes[k], strlen(nodes[k]), 1 << 20);
		payload_finish(p[SRC_REST_NODES]);
		assert_true(p[SRC_REST_NODES]->ok);
		const struct render_in in = { .m = m, .p = (const struct payload *const *)p };
		struct render_result res;
		struct buf out;
		buf_init(&out, 0);
		assert_int_equal(render_run(&in, &out, &res), 200);
		buf_putc(&out, '\0'); /* the body as a string, for strstr */
		assert_int_equal(res.rows[0].status, ROW_OK);
		assert_int_equal(res.rows[1].status, k ? ROW_OK : ROW_INPUT_MISSING);
		assert_int_equal(strstr(out.data, "ok{reservation=\"m\"} 1") != NULL, k);
		render_result_free(&res);
		buf_free(&out);
		payload_unref(p[SRC_REST_NODES]);
	}
	mapping_free(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_reservations_equal_scontrol),
		cmocka_unit_test(test_node_reservation_equal_scontrol),
		cmocka_unit_test(test_reservation_state),
		cmocka_unit_test(test_reservation_flags),
		cmocka_unit_test(test_reservation_nodes),
		cmocka_unit_test(test_node_reservation),
		cmocka_unit_test(test_bad_answer_leaves_rows_out),
		cmocka_unit_test(test_declared_family_in_rows),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
