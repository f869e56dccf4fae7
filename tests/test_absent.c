/* test_absent.c: a native family missing from an answer that was otherwise fine never turns into
 * a wrong value. For every captured state (Slurm 25.11 and 26.05), with and without --gpus-acct,
 * each native family in turn is dropped (its HELP, TYPE and sample lines) from a copy of its
 * endpoint's answer, and the shipped table is rendered as the daemon renders it (render_run).
 * Every legacy family must then be byte-identical to the unmodified run, or left out with reason
 * input_missing naming the dropped family: "absent_ok" excuses an absent family only when its
 * answer names no family at all, so it is no exemption here. The same for slurmrestd's families on
 * the six slurmrestd states, each kept out of its answer in turn: a row whose preferred form reads
 * it falls back to its next form (or the native one) instead. Also: the captures without jobs (an
 * empty jobs-users-accts answer) serve the absent_ok rows as the old exporter did, and an answer
 * that names no family at all is not usable. */
#include "testutil.h"

#include "expo.h"
#include "mapping.h"
#include "payload.h"
#include "render.h"
#include "source.h"

static const char *const states[] = {
	"slurm-25.11/01-idle", "slurm-25.11/02-busy-mix", "slurm-25.11/03-drain-down-cancel", "slurm-25.11/04-resumed-busy",
	"slurm-26.05/01-idle", "slurm-26.05/01-idle-slurmdbd", "slurm-26.05/02-busy-gpu",
	"slurm-26.05/02-busy-gpu-no-slurmdbd", "slurm-26.05/03-gpu-noacct-drain",
};

/* The answer slurmctld sends as body, parsed as the daemon does: as it arrives, in the pieces
 * libcurl hands over (16 KiB at most), keeping the families the table reads (all: m NULL). */
static struct payload *answer(const struct mapping *m, enum source_id ep, const char *body, size_t len)
{
	enum { PIECE = 16384 };
	struct payload *p = payload_new(ep, 0, m ? mapping_has_input : NULL, (void *)m);
	for (size_t off = 0; off < len; off += PIECE)
		assert_int_equal(payload_feed(p, body + off, len - off < PIECE ? len - off : PIECE, 0), PAYLOAD_FEED_MORE);
	payload_finish(p);
	return p;
}

/* Each row's output text as the daemon serves it ("left out: why" when it is not served), its
 * status and, when form is not NULL, the form it was evaluated with: one render (render_run) over
 * the payloads. */
static char **run_forms(const struct mapping *m, unsigned flags, struct payload *const p[SRC_COUNT], enum row_status *st,
			size_t *form)
{
	const struct render_in in = { .m = m, .flags = flags, .p = (const struct payload *const *)p };
	struct render_result res;
	struct buf body;
	char **out = xcalloc(m->nrows, sizeof(*out));
	buf_init(&body, 0);
	assert_int_equal(render_run(&in, &body, &res), 200);
	for (size_t i = 0; i < m->nrows; i++) {
		const struct render_row *o = &res.rows[i];
		struct buf b;
		buf_init(&b, 0);
		st[i] = o->status;
		if (form)
			form[i] = o->form;
		if (o->status == ROW_OK)
			buf_append(&b, body.data + o->off, o->len);
		else
			buf_printf(&b, "left out: %s", o->err);
		out[i] = buf_steal(&b, NULL);
	}
	render_result_free(&res);
	buf_free(&body);
	return out;
}

static char **run(const struct mapping *m, unsigned flags, struct payload *const p[SRC_COUNT], enum row_status *st)
{
	return run_forms(m, flags, p, st, NULL);
}

static void free_run(char **out, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(out[i]);
	free(out);
}

/* The body without the lines of family `name` (samples, HELP and TYPE). */
static char *drop_family(const char *body, size_t len, const char *name, size_t *outlen)
{
	struct buf b;
	size_t nl = strlen(name);
	buf_init(&b, 0);
	for (const char *p = body, *end = body + len; p < end;) {
		const char *e = memchr(p, '\n', (size_t)(end - p));
		e = e ? e + 1 : end;
		const char *n = p;
		if (!strncmp(n, "# HELP ", 7) || !strncmp(n, "# TYPE ", 7))
			n += 7;
		int mine = (size_t)(e - n) > nl && !strncmp(n, name, nl) && strchr(" {\t", n[nl]);
		if (!mine)
			buf_append(&b, p, (size_t)(e - p));
		p = e;
	}
	return buf_steal(&b, outlen);
}

/* Drop every family of endpoint ep in turn; returns the number of rows that served something
 * other than the unmodified run's output without saying why. */
static size_t drop_each(const struct mapping *m, const char *state, unsigned flags, char *bodies[SRC_COUNT],
			size_t lens[SRC_COUNT], struct payload *p[SRC_COUNT], char **base, const enum row_status *bst,
			enum source_id ep, size_t *ndropped)
{
	size_t bad = 0;
	enum row_status *st = xcalloc(m->nrows, sizeof(*st));
	for (const char *l = bodies[ep], *end = bodies[ep] + lens[ep]; l < end;) {
		const char *e = memchr(l, '\n', (size_t)(end - l));
		e = e ? e + 1 : end;
		if (strncmp(l, "# TYPE ", 7)) {
			l = e;
			continue;
		}
		char fam[256];
		size_t n = strcspn(l + 7, " \t\n");
		snprintf(fam, sizeof(fam), "%.*s", (int)n, l + 7);
		l = e;
		size_t len;
		char *body = drop_family(bodies[ep], lens[ep], fam, &len);
		struct payload *q[SRC_COUNT];
		memcpy(q, p, sizeof(q));
		q[ep] = answer(m, ep, body, len);
		char **out = run(m, flags, q, st);
		(*ndropped)++;
		for (size_t i = 0; i < m->nrows; i++) {
			const struct row *r = &m->rows[i];
			if (!strcmp(out[i], base[i]))
				continue;
			if (bst[i] != ROW_OK && st[i] != ROW_OK)
				continue; /* left out either way */
			if (bst[i] == ROW_OK && st[i] == ROW_INPUT_MISSING && strstr(out[i], fam))
				continue;
			print_message("%s%s: without %s, %s gives\n%s\ninstead of\n%s\n", state, flags ? " --gpus-acct" : "",
				      fam, r->name, out[i], base[i]);
			bad++;
		}
		free_run(out, m->nrows);
		payload_unref(q[ep]);
		free(body);
	}
	free(st);
	return bad;
}

/* The captured answers of the first n sources of a state, read and parsed as the daemon does. */
static void read_answers(const struct mapping *m, const char *state, int n, char *bodies[SRC_COUNT], size_t lens[SRC_COUNT],
			 struct payload *p[SRC_COUNT])
{
	unsigned read = mapping_sources(m, ROW_FLAG_GPUS_ACCT | ROW_FLAG_REST_JOBS, ~0u);
	for (int ep = 0; ep < n; ep++) {
		char path[600];
		if (ep >= SRC_NATIVE_COUNT && !(read & (1u << ep)))
			continue; /* a slurmrestd document the table does not read (/licenses): never fetched */
		snprintf(path, sizeof(path), "tests/fixtures/%s/%s", state, sources[ep].file);
		bodies[ep] = tu_slurp(path, &lens[ep]);
		assert_non_null(bodies[ep]);
		p[ep] = answer(m, (enum source_id)ep, bodies[ep], lens[ep]);
		assert_true(p[ep]->ok);
	}
}

static void test_drop_each_family(void **state)
{
	(void)state;
	struct mapping *m = tu_load_shipped();
	size_t bad = 0, ndropped = 0;
	for (size_t s = 0; s < sizeof(states) / sizeof(states[0]); s++) {
		char *bodies[SRC_COUNT] = { 0 };
		size_t lens[SRC_COUNT] = { 0 };
		struct payload *p[SRC_COUNT] = { 0 }; /* slurmctld's captures: no slurmrestd answer */
		read_answers(m, states[s], SRC_NATIVE_COUNT, bodies, lens, p);
		for (int g = 0; g < 2; g++) {
			unsigned flags = g ? ROW_FLAG_GPUS_ACCT : 0;
			enum row_status *bst = xcalloc(m->nrows, sizeof(*bst));
			char **base = run(m, flags, p, bst);
			for (int ep = 0; ep < SRC_NATIVE_COUNT; ep++)
				bad += drop_each(m, states[s], flags, bodies, lens, p, base, bst, (enum source_id)ep, &ndropped);
			free_run(base, m->nrows);
			free(bst);
		}
		for (int ep = 0; ep < SRC_COUNT; ep++) {
			payload_unref(p[ep]);
			free(bodies[ep]);
		}
	}
	mapping_free(m);
	print_message("%zu families dropped in turn, %zu wrong answers\n", ndropped, bad);
	assert_true(ndropped > 2 * 9 * 200);
	assert_int_equal(bad, 0);
}

/* The table's families but one: slurmrestd's answer as if it lacked that family. */
struct but_one {
	const struct mapping *m;
	const char *name;
};

static int keep_but_one(const char *name, size_t len, void *ctx)
{
	const struct but_one *b = ctx;
	if (strlen(b->name) == len && !memcmp(name, b->name, len))
		return 0;
	return mapping_has_input(name, len, (void *)b->m);
}

/* Does the row's form read fam (1), and say its absence is normal (2)? */
static int form_reads(const struct row *r, size_t form, const char *fam)
{
	const struct row_form *f = &r->forms[form];
	for (size_t k = 0; k < f->ninputs; k++)
		if (!strcmp(f->inputs[k].name, fam))
			return f->inputs[k].absent_ok ? 2 : 1;
	return 0;
}

/* Each slurmrestd family the table reads kept out of its answer in turn, on one state; returns the
 * rows that changed without a reason: left out naming it, or fallen back from the form reading it. */
static size_t drop_each_rest(const struct mapping *m, const char *state, char *bodies[SRC_COUNT], size_t lens[SRC_COUNT],
			     struct payload *p[SRC_COUNT], size_t *ndropped)
{
	size_t bad = 0;
	enum row_status *bst = xcalloc(m->nrows, sizeof(*bst)), *st = xcalloc(m->nrows, sizeof(*st));
	size_t *bform = xcalloc(m->nrows, sizeof(size_t)), *form = xcalloc(m->nrows, sizeof(size_t));
	char **base = run_forms(m, ROW_FLAG_GPUS_ACCT, p, bst, bform);
	for (size_t j = 0; j < m->ninputs; j++) {
		enum source_id ep = source_for_metric(m->inputs[j]);
		if (ep < SRC_NATIVE_COUNT)
			continue;
		struct but_one keep = { m, m->inputs[j] };
		struct payload *q[SRC_COUNT];
		memcpy(q, p, sizeof(q));
		q[ep] = payload_new(ep, 0, keep_but_one, &keep);
		assert_int_equal(payload_feed(q[ep], bodies[ep], lens[ep], 0), PAYLOAD_FEED_MORE);
		payload_finish(q[ep]);
		char **out = run_forms(m, ROW_FLAG_GPUS_ACCT, q, st, form);
		(*ndropped)++;
		for (size_t i = 0; i < m->nrows; i++) {
			const struct row *r = &m->rows[i];
			if (!strcmp(out[i], base[i]) || (bst[i] != ROW_OK && st[i] != ROW_OK))
				continue;
			int preferred = bform[i] + 1 < r->nforms;
			if (preferred && form[i] != bform[i] && form_reads(r, bform[i], keep.name))
				continue; /* fell back from the form that reads it */
			print_message("%s: without %s, %s gives (form %zu)\n%s\ninstead of (form %zu)\n%s\n", state, keep.name, r->name,
				      form[i], out[i], bform[i], base[i]);
			bad++;
		}
		free_run(out, m->nrows);
		payload_unref(q[ep]);
	}
	free_run(base, m->nrows);
	free(bst);
	free(st);
	free(bform);
	free(form);
	return bad;
}

static void test_drop_each_rest_family(void **state)
{
	(void)state;
	static const char *const rest_states[] = {
		"slurm-25.11-rest/R1-idle-drained", "slurm-25.11-rest/R2-busy-mix-draining",
		"slurm-25.11-rest/R4-downdrain-fail-maint-reserved", "slurm-25.11-rest/R6-completing-epilog",
		"slurm-25.11-rest/R7-planned-idle-gpu-resumed", "slurm-25.11-rest/R9-idle-all-finished-future-resv",
	};
	struct mapping *m = tu_load_shipped();
	size_t bad = 0, ndropped = 0;
	for (size_t s = 0; s < sizeof(rest_states) / sizeof(rest_states[0]); s++) {
		char *bodies[SRC_COUNT] = { 0 };
		size_t lens[SRC_COUNT] = { 0 };
		struct payload *p[SRC_COUNT] = { 0 };
		read_answers(m, rest_states[s], SRC_COUNT, bodies, lens, p);
		bad += drop_each_rest(m, rest_states[s], bodies, lens, p, &ndropped);
		for (int ep = 0; ep < SRC_COUNT; ep++) {
			payload_unref(p[ep]);
			free(bodies[ep]);
		}
	}
	mapping_free(m);
	print_message("%zu slurmrestd families dropped in turn, %zu wrong answers\n", ndropped, bad);
	assert_true(ndropped >= 6 * 10);
	assert_int_equal(bad, 0);
}

/* The sample lines of family name in an exposition, sorted, one string. */
static char *family_lines(const char *text, const char *name)
{
	struct buf b;
	size_t n = strlen(name);
	buf_init(&b, 0);
	for (const char *l = text; *l;) {
		const char *e = strchr(l, '\n');
		e = e ? e + 1 : l + strlen(l);
		if (!strncmp(l, name, n) && (l[n] == ' ' || l[n] == '{'))
			buf_append(&b, l, (size_t)(e - l));
		l = e;
	}
	buf_putc(&b, '\0');
	return buf_steal(&b, NULL);
}

/* absent_ok means "the answer is empty": on the real captures without a job in memory (an empty
 * jobs-users-accts answer, vouched for by nodes) every row reading an absent_ok family is served,
 * with the old exporter's own lines (slurm_queue_running 0; no per-account series). A non-empty
 * answer lacking one absent_ok family leaves the rows reading it out instead (before: 0 instead of
 * 13 running jobs on 25.11/02-busy-mix). */
static void test_absent_ok_only_when_empty(void **state)
{
	(void)state;
	static const char *const idle[] = { "slurm-25.11/01-idle", "slurm-26.05/01-idle", "slurm-26.05/01-idle-slurmdbd" };
	struct mapping *m = tu_load_shipped();
	enum row_status *st = xcalloc(m->nrows, sizeof(*st));
	size_t checked = 0;
	for (size_t s = 0; s < sizeof(idle) / sizeof(idle[0]); s++) {
		char *bodies[SRC_COUNT] = { 0 }, path[600];
		size_t lens[SRC_COUNT] = { 0 };
		struct payload *p[SRC_COUNT] = { 0 };
		read_answers(m, idle[s], SRC_NATIVE_COUNT, bodies, lens, p);
		assert_int_equal(lens[SRC_UA], 0);
		snprintf(path, sizeof(path), "tests/fixtures/%s/legacy_exporter_metrics.txt", idle[s]);
		char *legacy = tu_slurp(path, NULL);
		assert_non_null(legacy);
		char **out = run(m, 0, p, st);
		for (size_t i = 0; i < m->nrows; i++) {
			const struct row *r = &m->rows[i];
			int reads = 0;
			const struct row_form *nf = row_native(r);
			for (size_t k = 0; k < nf->ninputs; k++)
				reads |= nf->inputs[k].absent_ok;
			if (!reads)
				continue;
			assert_int_equal(st[i], ROW_OK);
			char *want = family_lines(legacy, r->name), *got = family_lines(out[i], r->name);
			if (strcmp(want, got))
				fail_msg("%s: %s gives\n%s\nthe old exporter\n%s", idle[s], r->name, got, want);
			checked += *want != '\0';
			free(want);
			free(got);
		}
		free_run(out, m->nrows);
		free(legacy);
		for (int ep = 0; ep < SRC_COUNT; ep++) {
			payload_unref(p[ep]);
			free(bodies[ep]);
		}
	}
	assert_int_equal(checked, 3 * 11); /* the eleven slurm_queue_* zeros; the per-user and per-account rows: none */

	char *bodies[SRC_COUNT] = { 0 };
	size_t lens[SRC_COUNT] = { 0 }, len;
	struct payload *p[SRC_COUNT] = { 0 };
	read_answers(m, "slurm-25.11/02-busy-mix", SRC_NATIVE_COUNT, bodies, lens, p);
	size_t row = 0;
	while (row < m->nrows && strcmp(m->rows[row].name, "slurm_queue_running"))
		row++;
	assert_true(row < m->nrows);
	char **out = run(m, 0, p, st);
	assert_non_null(strstr(out[row], "\nslurm_queue_running 13\n"));
	free_run(out, m->nrows);
	char *body = drop_family(bodies[SRC_UA], lens[SRC_UA], "slurm_account_jobs_configuring", &len);
	struct payload *ua = p[SRC_UA];
	p[SRC_UA] = answer(m, SRC_UA, body, len);
	out = run(m, 0, p, st);
	assert_int_equal(st[row], ROW_INPUT_MISSING);
	assert_non_null(strstr(out[row], "slurm_account_jobs_configuring is absent from /metrics/jobs-users-accts"));
	free_run(out, m->nrows);
	payload_unref(p[SRC_UA]);
	p[SRC_UA] = ua;
	free(body);
	for (int ep = 0; ep < SRC_COUNT; ep++) {
		payload_unref(p[ep]);
		free(bodies[ep]);
	}
	free(st);
	mapping_free(m);
}

/* A body that is not empty but names no family is not an answer, on any endpoint; an empty body is
 * one only where slurmctld sends it normally (jobs-users-accts with no jobs in memory). */
static void test_answer_naming_no_family(void **state)
{
	(void)state;
	static const char *const bodies[] = { "# nothing\n", "\n", "# HELP\n", "# EOF\n" };
	for (int ep = 0; ep < SRC_NATIVE_COUNT; ep++) { /* OpenMetrics text; JSON: test_restjson */
		for (size_t i = 0; i < sizeof(bodies) / sizeof(bodies[0]); i++) {
			struct payload *p = answer(NULL, (enum source_id)ep, bodies[i], strlen(bodies[i]));
			assert_false(p->ok);
			assert_non_null(strstr(p->reason, "names no metric family"));
			payload_unref(p);
		}
		struct payload *p = answer(NULL, (enum source_id)ep, "", 0);
		assert_int_equal(p->ok, sources[ep].empty_ok);
		payload_unref(p);
		p = answer(NULL, (enum source_id)ep, "# TYPE x gauge\n", 15);
		assert_true(p->ok);
		payload_unref(p);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_answer_naming_no_family),
		cmocka_unit_test(test_absent_ok_only_when_empty),
		cmocka_unit_test(test_drop_each_family),
		cmocka_unit_test(test_drop_each_rest_family),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
