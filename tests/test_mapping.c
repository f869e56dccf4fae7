/* test_mapping.c: the mapping loader's checks (file:line:column and row, all problems at once) and
 * the row pipeline as the daemon renders it (render_run: rename, fill, drop_zero, default, input down,
 * duplicate output). */
#include "testutil.h"

#include "expo.h"
#include "mapping.h"
#include "payload.h"
#include "rules.h"
#include "render.h"
#include "mapping_sort.h"

static char *problems_of(const char *json)
{
	const char *path = tu_tmp("mapping.json");
	struct buf b;
	tu_write(path, json);
	buf_init(&b, 0);
	struct mapping *m = mapping_load(path, &b);
	if (m) {
		mapping_free(m);
		buf_free(&b);
		return NULL;
	}
	buf_putc(&b, '\0');
	char *s = xstrdup(b.data);
	buf_free(&b);
	return tu_untmp(s); /* the file is TMP/mapping.json in them */
}

static void has(const char *problems, const char *want)
{
	if (!problems || !strstr(problems, want))
		fail_msg("wanted \"%s\" in:\n%s", want, problems ? problems : "(no problems)");
}

static void test_valid_and_shipped(void **state)
{
	(void)state;
	struct buf b;
	buf_init(&b, 0);
	struct mapping *m = mapping_load("mappings/prometheus-slurm-exporter.json", &b);
	if (!m)
		fail_msg("%.*s", (int)b.len, b.data);
	assert_int_equal(m->nrows, 62);
	/* the depth limit is generous: the deepest shipped row (docs/mapping.md) is far below it */
	unsigned deepest_row = 0;
	for (size_t i = 0; i < m->nrows; i++)
		for (size_t k = 0; k < m->rows[i].nforms; k++)
			if (m->rows[i].forms[k].expr && expr_depth(m->rows[i].forms[k].expr) > deepest_row)
				deepest_row = expr_depth(m->rows[i].forms[k].expr);
	assert_int_equal(deepest_row, 12);
	/* rows are found by name (the duplicate check, --mapping.to-rules) */
	for (size_t i = 0; i < m->nrows; i++)
		assert_int_equal(mapping_row_index(m, m->rows[i].name), (int)i);
	assert_int_equal(mapping_row_index(m, "slurm_node_cpus"), -1);
	assert_int_equal(mapping_row_index(m, ""), -1);
	/* the partitions endpoint (node write lock) is needed only because rows read it */
	assert_true(m->sources & (1u << SRC_PARTITIONS));
	mapping_free(m);
	buf_free(&b);

	char *p = problems_of("{\"metrics\": [{\"name\": \"a\", \"help\": \"h\", \"type\": \"gauge\", \"expr\": \"x\", \"fidelity\": \"exact\"}]}");
	assert_null(p);
}

static void test_syntax_error_position(void **state)
{
	(void)state;
	char *p = problems_of("{\n  \"metrics\": [\n    {\"name\": \"a\",}\n  ]\n}\n");
	has(p, "TMP/mapping.json:3:");
	has(p, "invalid JSON");
	free(p);
}

static void test_all_problems_reported(void **state)
{
	(void)state;
	const char *j =
		"{\n"
		"  \"metrics\": [\n"
		"    {\"name\": \"ok_row\", \"help\": \"h\", \"type\": \"gauge\", \"expr\": \"x\", \"fidelity\": \"exact\"},\n"
		"    {\"name\": \"bad_expr\", \"help\": \"h\", \"type\": \"gauge\",\n"
		"     \"expr\": \"sum(x) +\", \"fidelity\": \"exact\"},\n"
		"    {\"name\": \"bad type\", \"help\": 3, \"type\": \"stateset\", \"expr\": \"x\", \"fidelity\": \"maybe\", \"colour\": 1},\n"
		"    {\"name\": \"approx\", \"help\": \"h\", \"type\": \"gauge\", \"expr\": \"x\", \"fidelity\": \"approximate\"},\n"
		"    {\"name\": \"ok_row\", \"help\": \"h\", \"type\": \"gauge\", \"expr\": \"x\", \"fidelity\": \"exact\"},\n"
		"    {\"name\": \"ren\", \"help\": \"h\", \"type\": \"gauge\", \"expr\": \"x\", \"fidelity\": \"exact\", \"rename_labels\": {\"username\": \"1user\"}},\n"
		"    {\"name\": \"slurm_exporter_shim_up\", \"help\": \"h\", \"type\": \"gauge\", \"expr\": \"x\", \"fidelity\": \"exact\"},\n"
		"    {\"name\": \"un\", \"help\": \"h\", \"type\": \"gauge\", \"expr\": \"x\", \"fidelity\": \"unavailable\", \"note\": \"n\"},\n"
		"    {\"name\": \"flag\", \"help\": \"h\", \"type\": \"gauge\", \"expr\": \"x\", \"fidelity\": \"exact\", \"enabled_by\": \"gpu\", \"default\": \"0\"},\n"
		"    {\"name\": \"ab\", \"help\": \"h\", \"type\": \"gauge\", \"expr\": \"x + y\", \"fidelity\": \"exact\", \"absent_ok\": [\"y\", \"z\", 1]},\n"
		"    {\"name\": \"ab2\", \"help\": \"h\", \"type\": \"gauge\", \"expr\": \"x\", \"fidelity\": \"exact\", \"absent_ok\": \"x\"}\n"
		"  ],\n"
		"  \"extra\": true\n"
		"}\n";
	char *p = problems_of(j);
	/* expr error: column of the '+' token's end inside the string: line 5 */
	has(p, "TMP/mapping.json:5:23: row 'bad_expr': expr: unexpected end of expression");
	has(p, ":6:14: row 'bad type': \"name\" must be a valid metric name");
	has(p, "row 'bad type': \"help\" must be a string");
	has(p, "row 'bad type': \"type\" must be");
	has(p, "row 'bad type': \"fidelity\" must be");
	has(p, "row 'bad type': unknown field \"colour\"");
	has(p, ":7:5: row 'approx': a row that is not exact needs a \"note\"");
	has(p, ":8:14: row 'ok_row': duplicate row name");
	has(p, "row 'ren': \"rename_labels\": \"username\": \"1user\" is not a valid label name");
	has(p, "row 'slurm_exporter_shim_up': names starting with slurm_exporter_shim_ are reserved");
	has(p, "row 'un': an unavailable row has no \"expr\"");
	has(p, "row 'flag': \"enabled_by\" must be one of");
	has(p, "row 'flag': \"default\" must be a number");
	has(p, ":13:101: row 'ab': \"absent_ok\": the expression does not read \"z\"");
	has(p, ":13:101: row 'ab': \"absent_ok\"[2] must be a string");
	has(p, ":14:98: row 'ab2': \"absent_ok\" must be an array of native family names");
	has(p, ":16:12: unknown top-level field \"extra\"");
	free(p);
}

static void test_shape_errors(void **state)
{
	(void)state;
	char *p = problems_of("[1, 2]");
	has(p, ":1:1: the top level must be an object");
	free(p);
	p = problems_of("{\"metrics\": {}}");
	has(p, ":1:13: \"metrics\" must be an array");
	free(p);
	p = problems_of("{\"metrics\": [42]}");
	has(p, ":1:14: metrics[0] must be an object");
	free(p);
	p = problems_of("");
	has(p, "invalid JSON");
	free(p);
	struct buf b;
	buf_init(&b, 0);
	assert_null(mapping_load("/nonexistent/mapping.json", &b));
	buf_putc(&b, '\0');
	has(b.data, "/nonexistent/mapping.json:1:1: cannot read mapping file");
	buf_free(&b);
}

/* What a row gave: its status, and its series as the body has them (its family's sample lines). */
struct row_out {
	enum row_status status;
	size_t form;
	enum fidelity fidelity;
	size_t repaired;
	char err[160];
	char *text;
};

/* One scrape of a table, through the daemon's path: each endpoint's answer parsed as it arrives
 * (in small pieces, keeping only what the table reads), then rendered (render_run). */
struct run {
	const struct mapping *m;
	struct payload *p[SRC_COUNT];
	struct row_out *rows;
	size_t nrows;
	int out_of_order;         /* a row's family not after the previous one's in the body */
};

#define PIECE 7 /* bytes fed at a time: lines are split across pieces */

/* The answer of endpoint ep when slurmctld sends body; from replay_dir instead when body is NULL. */
static struct payload *answer(const struct mapping *m, enum source_id ep, const char *body, const char *replay_dir)
{
	if (!body)
		return payload_replay(replay_dir, ep, 0, 0, mapping_has_input, (void *)m);
	struct payload *p = payload_new(ep, 0, mapping_has_input, (void *)m);
	for (size_t off = 0, len = strlen(body); off < len; off += PIECE)
		assert_int_equal(payload_feed(p, body + off, len - off < PIECE ? len - off : PIECE, 0), PAYLOAD_FEED_MORE);
	payload_finish(p);
	return p;
}

/* An answer of endpoint ep that failed. */
static struct payload *down_answer(enum source_id ep)
{
	struct payload *p = payload_new(ep, 0, NULL, NULL);
	payload_fault(p, FAULT_TRANSPORT, "Connection refused");
	payload_finish(p);
	return p;
}

/* A family's lines in the served body but its HELP and TYPE: its samples. */
static char *samples_of(const char *text, size_t n)
{
	struct buf b;
	buf_init(&b, 0);
	for (const char *p = text, *end = text + n; p < end;) {
		const char *e = memchr(p, '\n', (size_t)(end - p));
		e = e ? e + 1 : end;
		if (*p != '#')
			buf_append(&b, p, (size_t)(e - p));
		p = e;
	}
	buf_putc(&b, '\0');
	return buf_steal(&b, NULL);
}

/* Render m over r->p, as the daemon does, into r->rows. */
static void run_payloads(struct run *r, const struct mapping *m, unsigned flags)
{
	const struct render_in in = { .m = m, .flags = flags, .p = (const struct payload *const *)r->p };
	struct render_result res;
	struct buf body;
	size_t end = 0;
	buf_init(&body, 0);
	int status = render_run(&in, &body, &res);
	r->m = m;
	r->nrows = m->nrows;
	r->rows = xcalloc(m->nrows + 1, sizeof(*r->rows));
	r->out_of_order = status != 200 || res.nrows != m->nrows; /* checked by the caller: this may run on a thread */
	for (size_t i = 0; i < res.nrows; i++) {
		const struct render_row *o = &res.rows[i];
		struct row_out *w = &r->rows[i];
		w->status = o->status;
		w->form = o->form;
		w->fidelity = o->fidelity;
		w->repaired = o->repaired;
		snprintf(w->err, sizeof(w->err), "%s", o->err);
		w->text = samples_of(body.data + o->off, o->len);
		if (o->len) {
			r->out_of_order |= o->off < end;
			end = o->off + o->len;
		}
	}
	render_result_free(&res);
	buf_free(&body);
}

/* Run m over the answers (every endpoint answers payload, or its file in replay_dir) with every
 * answer there (up_all), or none given (every row's input down). */
static void run_table(struct run *r, const struct mapping *m, const char *payload, const char *replay_dir, int up_all,
		      unsigned flags)
{
	memset(r->p, 0, sizeof(r->p));
	for (int ep = 0; ep < SRC_NATIVE_COUNT && up_all; ep++) /* slurmctld's answers; no slurmrestd */
		r->p[ep] = answer(m, (enum source_id)ep, payload, replay_dir);
	run_payloads(r, m, flags);
}

static void run_free(struct run *r)
{
	for (size_t i = 0; i < r->nrows; i++)
		free(r->rows[i].text);
	free(r->rows);
	for (int ep = 0; ep < SRC_COUNT; ep++)
		payload_unref(r->p[ep]);
}

static struct mapping *load_json(const char *json)
{
	const char *path = tu_tmp("mapping.json");
	struct buf b;
	tu_write(path, json);
	buf_init(&b, 0);
	struct mapping *m = mapping_load(path, &b);
	if (!m)
		fail_msg("%.*s", (int)b.len, b.data);
	buf_free(&b);
	return m;
}

/* The row pipeline, over a small payload: each row's status, then its series. */
static char *run_rows(const char *json, const char *payload, int up_all, unsigned flags)
{
	struct mapping *m = load_json(json);
	struct run r;
	struct buf out;
	run_table(&r, m, payload, NULL, up_all, flags);
	assert_false(r.out_of_order); /* every row, disabled or not, emitted once, in order */
	buf_init(&out, 0);
	for (size_t i = 0; i < m->nrows; i++)
		buf_printf(&out, "%s:%s\n%s", m->rows[i].name, row_status_name(r.rows[i].status), r.rows[i].text);
	run_free(&r);
	mapping_free(m);
	return buf_steal(&out, NULL);
}

/* The rows of json over an empty jobs-users-accts answer, vouched for by /metrics/nodes; the other
 * endpoints down. Each row's status, then its series. */
static char *run_empty_ua(const char *json)
{
	struct mapping *m = load_json(json);
	struct run r;
	struct buf out;
	memset(r.p, 0, sizeof(r.p));
	for (int ep = 0; ep < SRC_NATIVE_COUNT; ep++)
		r.p[ep] = ep == SRC_UA ? answer(m, SRC_UA, "", NULL)
			  : ep == SRC_NODES ? answer(m, SRC_NODES, "slurm_nodes 4\n", NULL) : down_answer((enum source_id)ep);
	run_payloads(&r, m, 0);
	assert_false(r.out_of_order);
	buf_init(&out, 0);
	for (size_t i = 0; i < m->nrows; i++)
		buf_printf(&out, "%s:%s\n%s", m->rows[i].name, row_status_name(r.rows[i].status), r.rows[i].text);
	run_free(&r);
	mapping_free(m);
	return buf_steal(&out, NULL);
}

#define ROW(name, extra) "{\"name\": \"" name "\", \"help\": \"h\", \"type\": \"gauge\", \"fidelity\": \"exact\", " extra "}"

static void test_row_pipeline(void **state)
{
	(void)state;
	const char *j = "{\"metrics\": ["
		ROW("slurm_user_jobs_pending", "\"expr\": \"slurm_user_jobs_pending\", \"rename_labels\": {\"username\": \"user\"}, \"fill_labels\": {\"user\": \"(unknown)\"}, \"drop_zero\": true") ","
		ROW("slurm_account_jobs_running", "\"expr\": \"slurm_account_jobs_running\", \"fill_labels\": {\"account\": \"(null)\"}") ","
		ROW("with_default", "\"expr\": \"absent_family\", \"default\": 0") ","
		ROW("absent_ok_default", "\"expr\": \"absent_family + slurm_jobs\", \"default\": 7, \"absent_ok\": [\"absent_family\"]") ","
		ROW("absent_ok_empty", "\"expr\": \"absent_family\", \"absent_ok\": [\"absent_family\"]") ","
		ROW("gpu_only", "\"expr\": \"slurm_jobs\", \"enabled_by\": \"gpus-acct\"") ","
		ROW("clash", "\"expr\": \"slurm_user_jobs_pending\", \"rename_labels\": {\"username\": \"x\"}") ","
		ROW("dup", "\"expr\": \"label_replace(slurm_account_jobs_running, \\\"account\\\", \\\"same\\\", \\\"\\\", \\\"\\\")\"") ","
		ROW("no_input", "\"expr\": \"sum(slurm_node_gpus)\"")
		"]}";
	const char *payload = "slurm_user_jobs_pending{username=\"bob\"} 2\nslurm_user_jobs_pending{username=\"alice\"} 0\n"
			      "slurm_user_jobs_pending 3\nslurm_user_jobs_pending{x=\"1\",username=\"eve\"} 1\n"
			      "slurm_account_jobs_running{account=\"physics\"} 0\nslurm_account_jobs_running 1\n"
			      "slurm_jobs 5\n";
	char *got = run_rows(j, payload, 1, 0);
	const char *want =
		"slurm_user_jobs_pending:served\n"
		"slurm_user_jobs_pending{user=\"(unknown)\"} 3\n"
		"slurm_user_jobs_pending{user=\"bob\"} 2\n"
		"slurm_user_jobs_pending{user=\"eve\",x=\"1\"} 1\n"
		"slurm_account_jobs_running:served\n"
		"slurm_account_jobs_running{account=\"(null)\"} 1\n"
		"slurm_account_jobs_running{account=\"physics\"} 0\n"
		"with_default:input_missing\n" /* a default never hides a missing family */
		/* absent_ok: absent only from an answer that names no family, not from this one */
		"absent_ok_default:input_missing\n"
		"absent_ok_empty:input_missing\n"
		"gpu_only:disabled\n"
		"clash:error\n"
		"dup:error\n"
		"no_input:input_missing\n";
	if (strcmp(got, want))
		fail_msg("got:\n%s\nwant:\n%s", got, want);
	free(got);

	/* an empty answer (jobs-users-accts, no job in memory), vouched for by a usable /metrics/nodes
	 * (the other endpoints are down): its absent_ok families read as no series, then default and
	 * "or vector(0)" decide */
	const char *empty = "{\"metrics\": ["
		ROW("ua_default", "\"expr\": \"slurm_account_x\", \"default\": 7, \"absent_ok\": [\"slurm_account_x\"]") ","
		ROW("ua_zero", "\"expr\": \"sum(slurm_user_x) or vector(0)\", \"absent_ok\": [\"slurm_user_x\"]") ","
		ROW("ua_none", "\"expr\": \"slurm_user_x\", \"absent_ok\": [\"slurm_user_x\"]") ","
		ROW("ua_not_ok", "\"expr\": \"slurm_user_x\", \"default\": 7")
		"]}";
	got = run_empty_ua(empty);
	want = "ua_default:served\nua_default 7\nua_zero:served\nua_zero 0\nua_none:served\nua_not_ok:input_missing\n";
	if (strcmp(got, want))
		fail_msg("got:\n%s\nwant:\n%s", got, want);
	free(got);

	/* endpoints down: every family is left out, defaults are not applied */
	got = run_rows(j, payload, 0, ROW_FLAG_GPUS_ACCT);
	want = "slurm_user_jobs_pending:input_down\nslurm_account_jobs_running:input_down\nwith_default:input_down\n"
	       "absent_ok_default:input_down\nabsent_ok_empty:input_down\ngpu_only:input_down\nclash:input_down\ndup:input_down\nno_input:input_down\n";
	if (strcmp(got, want))
		fail_msg("got:\n%s\nwant:\n%s", got, want);
	free(got);
}

/* A user name for check_sorted: plain (u007), behind a prefix every name shares, or in two groups
 * whose names share more than the 16-byte sort key beyond their common prefix (only labels_cmp
 * tells them apart). */
static void user_name(char *out, size_t len, int style, unsigned n)
{
	if (style == 0)
		snprintf(out, len, "u%03u", n);
	else if (style == 1)
		snprintf(out, len, "a-very-long-prefix-u%03u", n);
	else
		snprintf(out, len, "%c-a-very-long-middle-part-u%03u", 'x' + (int)(n % 2), n);
}

/* Series come out sorted by label set whatever order (and however many sorted runs) they came in. */
static void check_sorted(int style, unsigned count)
{
	struct buf p, j;
	char name[64], a[64], b[64];
	buf_init(&p, 0);
	for (unsigned i = 0; i < count; i++) { /* a permutation of 0..count-1 with many runs */
		user_name(name, sizeof(name), style, (i * 263 + 17) % count);
		buf_printf(&p, "slurm_user_jobs_pending{username=\"%s\"} %u\n", name, i + 1);
	}
	buf_putc(&p, '\0');
	char *got = run_rows("{\"metrics\": [" ROW("slurm_user_jobs_pending", "\"expr\": \"slurm_user_jobs_pending\"") "]}",
			     p.data, 1, 0);
	const char *prev = NULL;
	unsigned lines = 0;
	for (char *line = strtok(got, "\n"); line; line = strtok(NULL, "\n")) {
		if (strncmp(line, "slurm_user_jobs_pending{", 24))
			continue;
		if (prev && strcmp(prev, line) >= 0)
			fail_msg("not sorted: %s before %s", prev, line);
		prev = line;
		lines++;
	}
	assert_int_equal(lines, count);
	free(got);

	/* two equal label sets far apart, in different runs, are still found: u123 becomes u007 */
	user_name(a, sizeof(a), style, 7);
	user_name(b, sizeof(b), style, 123);
	buf_init(&j, 0);
	buf_printf(&j, "{\"metrics\": [" ROW("slurm_user_jobs_pending", "\"expr\": \"label_replace(slurm_user_jobs_pending, "
		   "\\\"username\\\", \\\"%s\\\", \\\"username\\\", \\\"%s\\\")\"") "]}", a, b);
	buf_putc(&j, '\0');
	got = run_rows(j.data, p.data, 1, 0);
	assert_string_equal(got, "slurm_user_jobs_pending:error\n");
	free(got);
	buf_free(&j);
	buf_free(&p);
}

/* "prefer": a row is evaluated with its first preferred form whose sources are all up and whose
 * families are all there, else with its own expression; a natively unavailable row is served only while its form's source is up; a form
 * counts for fetching only when its sources can be fetched. */
static void test_prefer_fallback(void **state)
{
	(void)state;
	static const char shares[] = "{\"shares\":{\"shares\":[{\"name\":\"acct\",\"type\":[\"ASSOCIATION\"],"
				     "\"fairshare\":{\"factor\":{\"set\":true,\"infinite\":false,\"number\":0.25}}}]}}";
	struct mapping *m = load_json("{\"metrics\": ["
		"{\"name\": \"fair\", \"help\": \"h\", \"type\": \"gauge\", \"fidelity\": \"unavailable\", \"note\": \"n\","
		" \"prefer\": [{\"expr\": \"sum(slurmrestd_share_fairshare)\", \"fidelity\": \"exact\"}]},"
		"{\"name\": \"jobs\", \"help\": \"h\", \"type\": \"gauge\", \"fidelity\": \"approximate\", \"note\": \"n\", \"expr\": \"slurm_jobs\","
		" \"prefer\": [{\"expr\": \"sum(slurmrestd_node_absent_family)\", \"fidelity\": \"exact\"},"
		" {\"expr\": \"sum(slurmrestd_share_level)\", \"fidelity\": \"exact\"},"
		" {\"expr\": \"sum(slurmrestd_share_fairshare) * 4\", \"fidelity\": \"approximate\", \"note\": \"m\"}]}]}");
	assert_int_equal(mapping_sources(m, 0, 0), 1u << SRC_JOBS);
	assert_int_equal(mapping_sources(m, 0, 1u << SRC_JOBS | 1u << SRC_REST_SHARES), 1u << SRC_JOBS | 1u << SRC_REST_SHARES);
	assert_int_equal(mapping_sources(m, 0, ~0u), 1u << SRC_JOBS | 1u << SRC_REST_SHARES | 1u << SRC_REST_NODES);
	/* only the forms a row may be served with: up to the first whose sources are expected up, the
	 * native form when none is */
	const unsigned J = 1u << SRC_JOBS, S = 1u << SRC_REST_SHARES, N = 1u << SRC_REST_NODES;
	assert_int_equal(mapping_sources_expecting(m, 0, ~0u, 0), mapping_sources(m, 0, ~0u));
	assert_int_equal(mapping_sources_expecting(m, 0, ~0u, S | N), S | N); /* "jobs": its first form */
	assert_int_equal(mapping_sources_expecting(m, 0, ~0u, S), S | N);     /* its second */
	assert_int_equal(mapping_sources_expecting(m, 0, J | S, J), J | S);   /* none expected: native */
	assert_int_equal(mapping_sources_expecting(m, 0, J | S, J | S), S);
	assert_true(mapping_has_input("slurmrestd_share_fairshare", 26, m));
	for (int rest = 0; rest < 2; rest++) {
		struct run r;
		memset(r.p, 0, sizeof(r.p));
		r.p[SRC_JOBS] = answer(m, SRC_JOBS, "slurm_jobs 3\n", NULL);
		/* slurmrestd down: both rows fall back */
		r.p[SRC_REST_SHARES] = rest ? answer(m, SRC_REST_SHARES, shares, NULL) : down_answer(SRC_REST_SHARES);
		/* what the rows that fall back fetch: "jobs"'s native form and its usable forms */
		const struct expo *ex[SRC_COUNT];
		int up[SRC_COUNT];
		source_usable((const struct payload *const *)r.p, up);
		for (int id = 0; id < SRC_COUNT; id++)
			ex[id] = up[id] ? &r.p[id]->expo : NULL;
		assert_int_equal(mapping_fallback_sources(m, 0, J | S, ex, up), rest ? 0 : J | S);
		assert_int_equal(mapping_fallback_sources(m, 0, ~0u, ex, up), rest ? 0 : J | S | N);
		run_payloads(&r, m, 0);
		assert_false(r.out_of_order);
		assert_int_equal(r.rows[0].status, rest ? ROW_OK : ROW_UNAVAILABLE);
		assert_string_equal(r.rows[0].text, rest ? "fair 0.25\n" : "");
		assert_int_equal(m->rows[0].nforms, 2);
		assert_int_equal(r.rows[0].form, rest ? 0 : 1); /* the native form, unavailable */
		assert_int_equal(r.rows[0].fidelity, rest ? FID_EXACT : FID_UNAVAILABLE);
		/* slurmrestd-nodes is never up here: the first form is skipped; the second's family is
		 * absent from slurmrestd's usable answer (no level in it): skipped too; the third used */
		assert_int_equal(r.rows[1].status, ROW_OK);
		assert_string_equal(r.rows[1].text, rest ? "jobs 1\n" : "jobs 3\n");
		assert_int_equal(m->rows[1].nforms, 4);
		assert_int_equal(r.rows[1].form, rest ? 2 : 3);
		assert_int_equal(r.rows[1].fidelity, FID_APPROXIMATE);
		run_free(&r);
	}
	mapping_free(m);

	char *p = problems_of("{\"metrics\": [\n"
		ROW("a", "\"expr\": \"x\", \"prefer\": {}") ",\n"
		ROW("b", "\"expr\": \"x\", \"prefer\": [1, {\"expr\": \"y +\", \"fidelity\": \"exact\"}]") ",\n"
		ROW("c", "\"expr\": \"x\", \"prefer\": [{\"expr\": \"y\", \"fidelity\": \"approximate\", \"colour\": 1}]") ",\n"
		ROW("d", "\"expr\": \"x\", \"prefer\": [{\"expr\": \"y\", \"fidelity\": \"unavailable\", \"absent_ok\": [\"z\"]}]") ",\n"
		ROW("e", "\"expr\": \"x\", \"prefer\": [{\"fidelity\": \"exact\", \"note\": 1}]") "\n]}");
	has(p, ":2:89: row 'a': \"prefer\" must be an array of forms");
	has(p, ":3:89: row 'b': \"prefer\"[0] must be an object");
	has(p, ":3:89: row 'b': prefer[1]: expr: unexpected end of expression");
	has(p, ":4:89: row 'c': prefer[0]: unknown field \"colour\" (expected one of: expr, fidelity, note, absent_ok, wraps_at)");
	has(p, "row 'c': prefer[0]: a form that is not exact needs a \"note\" saying why");
	has(p, "row 'd': prefer[0]: \"fidelity\" must be \"exact\" or \"approximate\"");
	has(p, "row 'd': prefer[0]: \"absent_ok\": the expression does not read \"z\"");
	has(p, "row 'e': prefer[0]: \"note\" must be a string");
	has(p, "row 'e': prefer[0]: \"expr\" must be a string");
	free(p);
}

/* One render of m over these answers (NULL: not given; "-": down): the body, and each row's record. */
static char *render_wraps(const struct mapping *m, const char *parts, const char *nodes, struct render_result *res)
{
	struct payload *p[SRC_COUNT] = { 0 };
	p[SRC_PARTITIONS] = answer(m, SRC_PARTITIONS, parts, NULL);
	if (nodes)
		p[SRC_NODES] = strcmp(nodes, "-") ? answer(m, SRC_NODES, nodes, NULL) : down_answer(SRC_NODES);
	const struct render_in in = { .m = m, .p = (const struct payload *const *)p };
	struct buf body;
	buf_init(&body, 0);
	assert_int_equal(render_run(&in, &body, res), 200);
	for (int ep = 0; ep < SRC_COUNT; ep++)
		payload_unref(p[ep]);
	buf_putc(&body, '\0');
	return buf_steal(&body, NULL);
}

/* "wraps_at" (slurmctld's 16-bit counters): a form whose counters wrap is served approximate, with the reason in
 * slurm_exporter_shim_row_fidelity, on a scrape where its bound reaches the limit, or cannot be read
 * (its source down, its family absent): never left out for it, and exact below the limit. The
 * bound's families are fetched and kept though no expression reads them; a preferred form has its
 * own. The loader's errors, positioned. */
static void test_wraps_at(void **state)
{
	(void)state;
	struct mapping *m = load_json("{\"metrics\": ["
		ROW("guarded", "\"expr\": \"slurm_partition_nodes_cpus_alloc\", "
			       "\"wraps_at\": {\"bound\": \"slurm_partition_cpus\", \"limit\": 65536}") ","
		"{\"name\": \"buckets\", \"help\": \"h\", \"type\": \"gauge\", \"fidelity\": \"approximate\", \"note\": \"n\","
		" \"expr\": \"slurm_partition_nodes_alloc\", \"wraps_at\": {\"bound\": \"count(slurm_node_cpus)\", \"limit\": 3}},"
		ROW("preferred", "\"expr\": \"slurm_partition_nodes_cpus_idle\", \"prefer\": [{\"expr\": "
				 "\"slurm_partition_nodes_cpus_idle * 1\", \"fidelity\": \"exact\", \"wraps_at\": "
				 "{\"bound\": \"max(slurm_partition_cpus)\", \"limit\": 70000}}]")
		"]}");
	/* the bound's source and families count though no expression reads them */
	assert_int_equal(mapping_sources(m, 0, 0), 1u << SRC_PARTITIONS | 1u << SRC_NODES);
	assert_true(mapping_has_input("slurm_node_cpus", 15, m));
	static const char big[] = "slurm_partition_cpus{partition=\"a\"} 131072\nslurm_partition_cpus{partition=\"b\"} 64\n"
				  "slurm_partition_nodes_cpus_alloc{partition=\"a\"} 36864\nslurm_partition_nodes_alloc{partition=\"a\"} 2\n"
				  "slurm_partition_nodes_cpus_idle{partition=\"a\"} 4\n";
	static const char small[] = "slurm_partition_cpus{partition=\"a\"} 65535\nslurm_partition_nodes_cpus_alloc{partition=\"a\"} 9\n"
				    "slurm_partition_nodes_alloc{partition=\"a\"} 2\nslurm_partition_nodes_cpus_idle{partition=\"a\"} 4\n";
	static const char two[] = "slurm_node_cpus{node=\"n1\"} 4\nslurm_node_cpus{node=\"n2\"} 4\n";
	static const char three[] = "slurm_node_cpus{node=\"n1\"} 4\nslurm_node_cpus{node=\"n2\"} 4\nslurm_node_cpus{node=\"n3\"} 4\n";
	static const struct {
		const char *parts, *nodes;
		enum row_wrap_state wrap[3];
		double bound0;
	} cases[] = {
		{ big, two, { WRAP_REACHED, WRAP_NONE, WRAP_REACHED }, 131072 },   /* the largest of the bound's values */
		{ small, three, { WRAP_NONE, WRAP_REACHED, WRAP_NONE }, 0 },      /* 65535: below the limit */
		{ small, "-", { WRAP_NONE, WRAP_UNCHECKED, WRAP_NONE }, 0 },      /* the bound's source down */
		{ small, "slurm_nodes 3\n", { WRAP_NONE, WRAP_UNCHECKED, WRAP_NONE }, 0 }, /* its family absent */
	};
	static const char *const names[] = { "guarded", "buckets", "preferred" };
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		struct render_result res;
		char *body = render_wraps(m, cases[c].parts, cases[c].nodes, &res);
		for (size_t i = 0; i < 3; i++) {
			const struct render_row *o = &res.rows[i];
			char line[200];
			assert_int_equal(o->status, ROW_OK); /* never left out for its bound */
			assert_int_equal(o->form, 0);
			if (o->wrap != cases[c].wrap[i])
				fail_msg("case %zu: %s: wrap %d, want %d", c, names[i], o->wrap, cases[c].wrap[i]);
			assert_int_equal(o->fidelity, i == 1 || o->wrap != WRAP_NONE ? FID_APPROXIMATE : FID_EXACT);
			assert_int_equal(render_row_has_wrap(o), o->wrap != WRAP_NONE);
			snprintf(line, sizeof(line), "slurm_exporter_shim_row_fidelity{family=\"%s\",fidelity=\"%s\",%s%s%supstream=\"slurmctld\"} 1\n",
				 names[i], fidelity_name(o->fidelity), o->wrap ? "reason=\"" : "", row_wrap_name(o->wrap),
				 o->wrap ? "\"," : "");
			if (!strstr(body, line))
				fail_msg("case %zu: no %s in\n%s", c, line, body);
		}
		if (cases[c].bound0 > 0)
			assert_true(res.rows[0].bound == cases[c].bound0);
		char why[200];
		render_wrap_why(&m->rows[0], &res.rows[0], 1, why, sizeof(why));
		if (c == 0)
			assert_string_equal(why, "approximate: slurm_partition_cpus is 131072, at or over 65536, where the counters it reads wrap");
		render_wrap_why(&m->rows[1], &res.rows[1], 1, why, sizeof(why));
		if (c == 2)
			assert_string_equal(why, "approximate: the counters it reads wrap at 3 and its bound count(slurm_node_cpus) could not be read");
		assert_non_null(strstr(body, "\nguarded{partition=\"a\"} "));
		free(body);
		render_result_free(&res);
	}
	mapping_free(m);

	char *p = problems_of("{\"metrics\": [\n"
		ROW("a", "\"expr\": \"x\", \"wraps_at\": 5") ",\n"
		ROW("b", "\"expr\": \"x\", \"wraps_at\": {\"bound\": \"y\", \"limit\": 0, \"at\": 1}") ",\n"
		ROW("c", "\"expr\": \"x\", \"wraps_at\": {\"bound\": 1, \"limit\": 2}") ",\n"
		ROW("d", "\"expr\": \"x\", \"wraps_at\": {\"bound\": \"sum(y\", \"limit\": 2}") ",\n"
		"{\"name\": \"e\", \"help\": \"h\", \"type\": \"gauge\", \"fidelity\": \"unavailable\", \"note\": \"n\","
		" \"wraps_at\": {\"bound\": \"y\", \"limit\": 2}},\n"
		ROW("f", "\"expr\": \"x\", \"prefer\": [{\"expr\": \"y\", \"fidelity\": \"exact\", \"wraps_at\": {\"limit\": 2}}]")
		"\n]}");
	has(p, ":2:91: row 'a': \"wraps_at\" must be an object {\"bound\": expression, \"limit\": number}");
	has(p, ":3:91: row 'b': \"wraps_at\": unknown key \"at\" (expected bound, limit)");
	has(p, ":3:91: row 'b': \"wraps_at\": \"limit\" must be a number above 0 (and at most 2^53)");
	has(p, ":4:91: row 'c': \"wraps_at\": \"bound\" must be a string (an expression)");
	has(p, ":5:91: row 'd': \"wraps_at\": \"bound\": expected ')' to close aggregation (at byte 5)");
	has(p, ":6:97: row 'e': an unavailable row has no \"wraps_at\"");
	has(p, ":7:89: row 'f': prefer[0]: \"wraps_at\": \"bound\" must be a string (an expression)");
	free(p);
}

/* The shipped table's GPU utilization from slurmrestd on a cluster without GPUs was
 * 0/0 served as NaN, where the native form leaves the family out; now left out too (no series). */
static void test_rest_gpu_utilization_without_gpus(void **state)
{
	(void)state;
	struct buf b;
	buf_init(&b, 0);
	struct mapping *m = mapping_load("mappings/prometheus-slurm-exporter.json", &b);
	buf_free(&b);
	assert_non_null(m);
	size_t row = 0;
	while (row < m->nrows && strcmp(m->rows[row].name, "slurm_gpus_utilization"))
		row++;
	assert_true(row < m->nrows);
	static const char *const docs[] = {
		"{\"nodes\": [{\"name\": \"n1\", \"cpus\": 4, \"gres\": \"\", \"gres_used\": \"\"}]}",
		"{\"nodes\": [{\"name\": \"n1\", \"cpus\": 4, \"gres\": \"gpu:2\", \"gres_used\": \"gpu:1(IDX:0)\"}]}",
	};
	for (int gpus = 0; gpus < 2; gpus++) {
		struct run r;
		memset(r.p, 0, sizeof(r.p));
		r.p[SRC_REST_NODES] = answer(m, SRC_REST_NODES, docs[gpus], NULL);
		assert_true(r.p[SRC_REST_NODES]->ok);
		run_payloads(&r, m, ROW_FLAG_GPUS_ACCT);
		assert_false(r.out_of_order);
		assert_int_equal(r.rows[row].form, 0); /* the slurmrestd form */
		assert_int_equal(r.rows[row].status, gpus ? ROW_OK : ROW_NO_INPUT);
		assert_string_equal(r.rows[row].text, gpus ? "slurm_gpus_utilization 0.5\n" : "");
		run_free(&r);
	}
	mapping_free(m);
}

/* A label value with invalid UTF-8 (slurmctld copies names verbatim) is served repaired and
 * counted; two names that repair to the same bytes would be two identical series, so that row is
 * left out (error) while a sum over the same family is still right. */
static void test_invalid_utf8_labels(void **state)
{
	(void)state;
	const char *j = "{\"metrics\": ["
		ROW("per_node", "\"expr\": \"slurm_node_cpus\"") ","
		ROW("total", "\"expr\": \"sum(slurm_node_cpus)\"") ","
		ROW("mem", "\"expr\": \"slurm_node_memory_bytes\"")
		"]}";
	const char *payload = "slurm_node_cpus{node=\"n\xff\"} 1\nslurm_node_cpus{node=\"n\xfe\"} 2\n"
			      "slurm_node_cpus{node=\"ok\xC3\xA9\"} 3\n"
			      "slurm_node_memory_bytes{node=\"n\xff\"} 5\nslurm_node_memory_bytes{node=\"s\xED\xA0\x80\"} 6\n"
			      "slurm_node_memory_bytes{node=\"ok\xC3\xA9\"} 7\n";
	struct mapping *m = load_json(j);
	struct run r;
	run_table(&r, m, payload, NULL, 1, 0);
	assert_true(r.p[SRC_NODES]->expo.invalid_utf8 > 0); /* label sets shared with a twin are counted once */
	assert_int_equal(r.rows[0].status, ROW_ERROR);
	assert_non_null(strstr(r.rows[0].err, "two series with the same labels (once invalid UTF-8"));
	assert_int_equal(r.rows[1].status, ROW_OK);
	assert_string_equal(r.rows[1].text, "total 6\n");
	assert_int_equal(r.rows[2].status, ROW_OK);
	assert_int_equal(r.rows[2].repaired, 2);
	assert_string_equal(r.rows[2].text, "mem{node=\"n\xEF\xBF\xBD\"} 5\nmem{node=\"ok\xC3\xA9\"} 7\n"
					    "mem{node=\"s\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD\"} 6\n");
	/* the payload's own bytes are untouched: the sum and matching see the true names */
	const struct expo_family *f = expo_find(&r.p[SRC_NODES]->expo, "slurm_node_cpus", 15);
	assert_non_null(f);
	assert_memory_equal(f->samples[0].labels[0].value, "n\xff", 2);
	run_free(&r);
	mapping_free(m);
}

static void test_output_sorted(void **state)
{
	(void)state;
	check_sorted(0, 300);  /* merged */
	check_sorted(0, 1000); /* radix sorted */
	check_sorted(1, 1000); /* a shared prefix: the keys come after it */
	check_sorted(2, 1000); /* keys equal within each group: ties decide */
}

/* mapping_sort directly: label-set order (by value, then the shorter set first), and a repeated
 * label set found however far apart the two are. */
static void test_series_sort(void **state)
{
	(void)state;
	enum { N = 600 };
	static char names[N][16];
	static struct label ls[N + 1];
	static struct velem e[N + 1];
	struct arena a;
	arena_init(&a);
	for (unsigned i = 0; i < N; i++) {
		snprintf(names[i], sizeof(names[i]), "n%05u", (i * 7919u) % N); /* a permutation: many runs */
		ls[i] = (struct label){ "node", names[i], 4, (uint32_t)strlen(names[i]) };
		e[i] = (struct velem){ &ls[i], 1, labels_hash(&ls[i], 1), (double)i };
	}
	e[N] = (struct velem){ NULL, 0, labels_hash(NULL, 0), -1 }; /* the empty set sorts first */
	struct vec v = { e, N + 1 };
	assert_int_equal(mapping_sort(&v, &a), 0);
	assert_int_equal(v.n, N + 1);
	assert_int_equal(v.e[0].nlabels, 0);
	for (size_t i = 2; i < v.n; i++)
		assert_true(labels_cmp(v.e[i - 1].labels, 1, v.e[i].labels, 1) < 0);
	/* the same names again, one of them repeated */
	ls[N] = ls[0];
	e[N] = (struct velem){ &ls[N], 1, e[0].hash, 0 };
	v = (struct vec){ e, N + 1 };
	assert_int_equal(mapping_sort(&v, &a), -1);
	arena_reset(&a);
}

/* The most levels of kind `kind` (tu_deep_expr) that compile. */
static size_t deepest(int kind)
{
	size_t n = 1;
	for (;; n++) {
		char *src = tu_deep_expr(kind, n, "slurm_node_cpus"), err[160];
		size_t pos;
		struct expr *x = expr_compile(src, &pos, err, sizeof(err));
		expr_free(x);
		free(src);
		if (!x || n == 1000)
			break;
	}
	assert_int_not_equal(n, 1000);
	return n - 1;
}

/* On the small thread: load, evaluate every row against a capture, export the rules. */
static void *deep_rows(void *arg)
{
	static char msg[4096];
	struct buf problems;
	struct run r;
	buf_init(&problems, 0);
	struct mapping *m = mapping_load(arg, &problems);
	if (!m) {
		snprintf(msg, sizeof(msg), "%.*s", (int)problems.len, problems.data);
		buf_free(&problems);
		return msg;
	}
	buf_free(&problems);
	msg[0] = '\0';
	run_table(&r, m, NULL, "tests/fixtures/slurm-25.11/04-resumed-busy", 1, 0);
	if (r.out_of_order)
		snprintf(msg, sizeof(msg), "rows emitted out of order");
	for (size_t i = 0; i < m->nrows && !msg[0]; i++)
		if (r.rows[i].status != ROW_OK)
			snprintf(msg, sizeof(msg), "row %s: status %d %s", m->rows[i].name, r.rows[i].status, r.rows[i].err);
	if (!msg[0] && rules_export(m, "http://ctl:6817", ":9341", 0, tu_tmp("deep-rules"), msg, sizeof(msg)) == 0)
		msg[0] = '\0';
	run_free(&r);
	mapping_free(m);
	return msg[0] ? msg : NULL;
}

/* A row of each deepest kind loads, evaluates and exports as rules on a 256 KiB thread
 * (libmicrohttpd's threads evaluate rows; only the depth limit keeps them from overflowing). */
static void test_deepest_rows_on_small_stack(void **state)
{
	(void)state;
	struct buf json;
	buf_init(&json, 0);
	buf_puts(&json, "{\"metrics\": [");
	for (int k = 0; k < TU_DEEP_KINDS; k++) {
		char *src = tu_deep_expr(k, deepest(k), "slurm_node_cpus");
		buf_printf(&json, "%s{\"name\": \"deep%d\", \"help\": \"h\", \"type\": \"gauge\", \"fidelity\": \"exact\", \"expr\": \"",
			   k ? ", " : "", k);
		for (const char *c = src; *c; c++)
			buf_printf(&json, *c == '"' ? "\\%c" : "%c", *c);
		buf_puts(&json, "\"}");
		free(src);
	}
	buf_puts(&json, "]}\n");
	buf_putc(&json, '\0');
	tu_write(tu_tmp("deep.json"), json.data);
	buf_free(&json);
	const char *msg = tu_run_on_stack(256 * 1024, deep_rows, (void *)tu_tmp("deep.json"));
	if (msg)
		fail_msg("%s", msg);
	char *rules = tu_slurp(tu_tmp("deep-rules/rules.yml"), NULL);
	assert_non_null(rules);
	assert_non_null(strstr(rules, "record: deep8\n"));
	free(rules);
}

/* The loader's work (struct mapping's load_work) for a table of n rows of one of the shapes. */
static size_t load_work(int shape, size_t n)
{
	const char *path = tu_tmp("linear.json");
	struct buf j, problems;
	buf_init(&j, 0);
	buf_puts(&j, "{\"metrics\": [");
	for (size_t i = 0; i < n; i++) {
		buf_printf(&j, "%s{\"name\": \"r%zu\", \"help\": \"h\", \"type\": \"gauge\", \"fidelity\": \"exact\", \"expr\": \"",
			   i ? ",\n" : "", i);
		if (shape == 0) /* the smallest rows: the most in a file */
			buf_puts(&j, "x");
		else /* wide, shallow, sharing subexpressions with other rows */
			buf_printf(&j, "(sum(a%zu) + sum(b{l=\\\"%zu\\\"})) / (count(c) + max(a%zu))", i % 97, i, i / 3);
		buf_puts(&j, "\"}");
	}
	buf_puts(&j, "]}\n");
	buf_putc(&j, '\0');
	tu_write(path, j.data);
	buf_free(&j);
	buf_init(&problems, 0);
	struct mapping *m = mapping_load(path, &problems);
	if (!m)
		fail_msg("%.*s", (int)problems.len, problems.data);
	size_t w = m->load_work;
	assert_int_equal(m->nrows, n);
	mapping_free(m);
	buf_free(&problems);
	return w;
}

/* Loading is linear in the file (it was not while each row's name was compared with every row
 * before it: docs/performance.md). Counted, not timed. */
static void test_load_linear(void **state)
{
	(void)state;
	for (int shape = 0; shape < 2; shape++) {
		size_t w1 = load_work(shape, 4000), w2 = load_work(shape, 8000);
		if (w2 <= w1 || (double)w2 > 2.5 * (double)w1)
			fail_msg("shape %d: work %zu at 4000 rows, %zu at 8000", shape, w1, w2);
	}
}

/* A table of docs/mapping.md under `header` lists exactly the keys `field` gives, in its order, with
 * their JSON types and presence rules: "| `key` | type | required | meaning |". Returns how many. */
static size_t check_doc_table(const char *doc, const char *header, int (*field)(size_t, struct mapping_field *))
{
	const char *p = strstr(doc, header);
	if (!p)
		fail_msg("docs/mapping.md has no table \"%s\"", header);
	p = strchr(strchr(p, '\n') + 1, '\n') + 1;
	size_t i = 0;
	struct mapping_field f;
	for (; strncmp(p, "| `", 3) == 0; i++, p = strchr(p, '\n') + 1) {
		char want[200];
		if (!field(i, &f))
			fail_msg("docs/mapping.md lists more keys than the loader has: %.40s", p);
		snprintf(want, sizeof(want), "| `%s` | %s | %s | ", f.key, f.type, f.required);
		if (strncmp(p, want, strlen(want)))
			fail_msg("docs/mapping.md: key %zu is\n%.*s\nwanted\n%s", i, (int)strcspn(p, "\n"), p, want);
		assert_true(f.doc && *f.doc);
	}
	if (field(i, &f)) /* every key documented */
		fail_msg("docs/mapping.md (%s) lacks key %s", header, f.key);
	return i;
}

/* The unknown-key error of `json` lists the keys `field` gives, in order, after `prefix`. */
static void check_unknown_key(const char *json, const char *prefix, int (*field)(size_t, struct mapping_field *))
{
	struct mapping_field f;
	struct buf want;
	char *probs = problems_of(json);
	buf_init(&want, 0);
	buf_printf(&want, "%sunknown field \"colour\" (expected one of: ", prefix);
	for (size_t i = 0; field(i, &f); i++)
		buf_printf(&want, "%s%s", i ? ", " : "", f.key);
	buf_puts(&want, ")\n");
	buf_putc(&want, '\0');
	has(probs, want.data);
	buf_free(&want);
	free(probs);
}

/* docs/mapping.md's tables of row keys and of preferred-form keys list exactly the loader's
 * (mapping_field, mapping_form_field), and its unknown-key errors list the same. */
/* --mapping.exclude (mapping_exclude): the rows of every schema of a chain whose whole name matches
 * are excluded (not enabled whatever the flags), a source only they read is no longer needed, a
 * name matching only in part is kept, and an invalid regex is refused with why. */
static void test_exclude(void **state)
{
	(void)state;
	const char *paths[] = { "mappings/prometheus-slurm-exporter.json", "mappings/sckyzo-slurm-exporter.json" };
	struct buf b;
	buf_init(&b, 0);
	struct mapping *m = mapping_load_set(paths, 2, &b);
	if (!m)
		fail_msg("%.*s", (int)b.len, b.data);
	const struct mapping *sck = mapping_schema(m, 1);
	unsigned all = (1u << SRC_COUNT) - 1;
	assert_true(mapping_sources(m, 0, all) & (1u << SRC_SCHEDULER));
	int sched = mapping_row_index(sck, "slurm_scheduler_threads"), rpc = mapping_row_index(sck, "slurm_user_rpc_stats");
	int cpus = mapping_row_index(sck, "slurm_cpus_total");
	assert_true(sched >= 0 && rpc >= 0 && cpus >= 0);
	char err[200];
	/* the legacy table's scheduler rows too: the whole chain */
	long n = mapping_exclude(m, "slurm_scheduler_.*|slurm_(user_)?rpc_stats.*|slurm_scheduler", err, sizeof(err));
	assert_true(n > 20);
	assert_false(row_is_enabled(&sck->rows[sched], ~0u));
	assert_false(row_is_enabled(&sck->rows[rpc], ~0u));
	assert_true(row_is_enabled(&sck->rows[cpus], 0));
	int legacy = mapping_row_index(m, "slurm_scheduler_threads");
	assert_true(legacy >= 0);
	assert_false(row_is_enabled(&m->rows[legacy], 0));
	/* anchored: "slurm_cpus" matches no whole name */
	assert_int_equal(mapping_exclude(m, "slurm_cpus", err, sizeof(err)), 0);
	assert_true(row_is_enabled(&sck->rows[cpus], 0));
	/* the sdiag endpoint is read by no row left in the legacy table */
	assert_false(mapping_sources(m, 0, all) & (1u << SRC_SCHEDULER));
	assert_int_equal(mapping_exclude(m, "slurm_(", err, sizeof(err)), -1);
	assert_true(err[0] != '\0');
	mapping_free(m);
	buf_free(&b);
}

static void test_docs_list_the_keys(void **state)
{
	(void)state;
	char *doc = tu_slurp("docs/mapping.md", NULL);
	assert_non_null(doc);
	assert_true(check_doc_table(doc, "| field | type | required | meaning |\n|---|---|---|---|\n", mapping_field) >= 12);
	assert_int_equal(check_doc_table(doc, "| form field | type | required | meaning |\n|---|---|---|---|\n",
					 mapping_form_field), 5);
	free(doc);
	check_unknown_key("{\"metrics\": [{\"name\": \"a\", \"colour\": 1}]}", "row 'a': ", mapping_field);
	check_unknown_key("{\"metrics\": [{\"name\": \"a\", \"prefer\": [{\"colour\": 1}]}]}", "row 'a': prefer[0]: ",
			  mapping_form_field);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_valid_and_shipped),
		cmocka_unit_test(test_syntax_error_position),
		cmocka_unit_test(test_all_problems_reported),
		cmocka_unit_test(test_shape_errors),
		cmocka_unit_test(test_row_pipeline),
		cmocka_unit_test(test_prefer_fallback),
		cmocka_unit_test(test_wraps_at),
		cmocka_unit_test(test_rest_gpu_utilization_without_gpus),
		cmocka_unit_test(test_invalid_utf8_labels),
		cmocka_unit_test(test_output_sorted),
		cmocka_unit_test(test_series_sort),
		cmocka_unit_test(test_deepest_rows_on_small_stack),
		cmocka_unit_test(test_load_linear),
		cmocka_unit_test(test_docs_list_the_keys),
		cmocka_unit_test(test_exclude),
	};
	return cmocka_run_group_tests_name("mapping", tests, NULL, NULL);
}
