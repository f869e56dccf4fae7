/* test_golden.c: the shipped mapping against what the real old exporter printed for the same
 * cluster instant, for every captured state (Slurm 25.11.7 and 26.05.3), row by row as each row's
 * fidelity promises, on the answer the daemon serves (render_run's body, read back strictly):
 *   exact        the same series (label sets and values) as legacy_exporter_metrics.txt;
 *   approximate  the same label names; the largest difference is printed (docs/metrics.md);
 *   unavailable  no series.
 * Also: every metric name dashboard #4323 queries is printed, and the GPU families follow the old
 * exporter's formulas on the real GPU counts (26.05 with slurmdbd) or are absent with a reason. */
#include "testutil.h"

#include <math.h>

#include "expo.h"
#include "mapping.h"
#include "payload.h"
#include "render.h"
#include "source.h"
#include "scrape.h"

static const char *const states[] = {
	"slurm-25.11/01-idle", "slurm-25.11/02-busy-mix", "slurm-25.11/03-drain-down-cancel", "slurm-25.11/04-resumed-busy",
	"slurm-26.05/01-idle", "slurm-26.05/01-idle-slurmdbd", "slurm-26.05/02-busy-gpu",
	"slurm-26.05/02-busy-gpu-no-slurmdbd", "slurm-26.05/03-gpu-noacct-drain",
};
#define NSTATES (sizeof(states) / sizeof(states[0]))

/* The 43 names of dashboard #4323 (both revisions), legacy-exporter.md section 3.4. */
static const char *const dashboard[] = {
	"slurm_nodes_alloc", "slurm_nodes_comp", "slurm_nodes_mix", "slurm_nodes_idle", "slurm_nodes_down",
	"slurm_nodes_drain", "slurm_nodes_maint", "slurm_nodes_resv", "slurm_nodes_err", "slurm_nodes_fail",
	"slurm_queue_completing", "slurm_queue_running", "slurm_queue_pending", "slurm_queue_completed",
	"slurm_queue_timeout", "slurm_queue_failed", "slurm_queue_node_fail", "slurm_queue_suspended",
	"slurm_queue_cancelled", "slurm_queue_preempted", "slurm_partition_jobs_pending", "slurm_account_jobs_running",
	"slurm_account_jobs_pending", "slurm_user_jobs_running", "slurm_user_jobs_pending", "slurm_account_cpus_running",
	"slurm_user_cpus_running", "slurm_cpus_total", "slurm_cpus_alloc", "slurm_cpus_idle",
	"slurm_partition_cpus_allocated", "slurm_partition_cpus_idle", "slurm_scheduler_threads",
	"slurm_scheduler_queue_size", "slurm_scheduler_dbd_queue_size", "slurm_scheduler_last_cycle",
	"slurm_scheduler_mean_cycle", "slurm_scheduler_backfill_last_cycle", "slurm_scheduler_backfill_mean_cycle",
	"slurm_scheduler_backfill_depth_mean", "slurm_scheduler_backfilled_heterogeneous_total",
	"slurm_scheduler_backfilled_jobs_since_start_total", "slurm_scheduler_backfilled_jobs_since_cycle_total",
};

struct state_run {
	struct payload *p[SRC_COUNT];
	struct expo legacy;
	char *legacy_text;
	struct render_result res;   /* what each row gave */
	char *body;                 /* the answer the daemon serves */
	struct expo served;         /* the body, read back as Prometheus reads it */
};

/* A captured state through the daemon's path: each answer replayed and parsed as it is read,
 * keeping what the table reads, then rendered (render_run: the rows, the writer, the output cap and
 * the self metrics) and the body read back strictly. rest 1: slurmrestd's answers too
 * (rest_*.json, /jobs included: --slurmrestd.url and --slurmrestd.jobs); 2: slurmrestd configured
 * but its files absent (every slurmrestd source down); 3: --slurmrestd.url alone (/jobs switched
 * off, never fetched); 4: /jobs down (its file absent), the rest of slurmrestd's answers there;
 * 0: slurmctld's alone. legacy: the old exporter's output to compare with
 * (legacy_exporter_metrics.txt when NULL). */
static void run_state_with(const struct mapping *m, const char *state, unsigned flags, int rest, const char *legacy,
			   struct state_run *r)
{
	char dir[512], path[600];
	struct buf out;
	size_t len;
	snprintf(dir, sizeof(dir), "tests/fixtures/%s", state);
	memset(r->p, 0, sizeof(r->p));
	unsigned read = mapping_sources(m, flags | ROW_FLAG_REST_JOBS, ~0u);
	for (int ep = 0; ep < (rest ? SRC_COUNT : SRC_NATIVE_COUNT); ep++) {
		int absent = (rest == 2 && ep >= SRC_NATIVE_COUNT) || (rest == 4 && ep == SRC_REST_JOBS);
		if (!(read & (1u << ep)) || (rest == 3 && ep == SRC_REST_JOBS))
			continue; /* no row reads it (slurmrestd's /licenses for this table), or switched off */
		r->p[ep] = payload_replay(absent ? "/nonexistent" : dir, (enum source_id)ep, 1 << 28, 0, mapping_has_input, (void *)m);
		if (r->p[ep]->ok == absent)
			fail_msg("%s: %s: %s", state, sources[ep].name, absent ? "usable" : r->p[ep]->reason);
	}
	snprintf(path, sizeof(path), "%s/%s", dir, legacy ? legacy : "legacy_exporter_metrics.txt");
	r->legacy_text = tu_slurp(path, &len);
	assert_non_null(r->legacy_text);
	expo_init(&r->legacy);
	/* the old exporter escaped label values properly: strict grammar */
	assert_int_equal(expo_parse(&r->legacy, r->legacy_text, len, EXPO_STRICT), 0);
	const struct render_in in = { .m = m, .flags = flags, .p = (const struct payload *const *)r->p };
	buf_init(&out, 0);
	assert_int_equal(render_run(&in, &out, &r->res), 200);
	assert_int_equal(r->res.nrows, m->nrows);
	r->body = buf_steal(&out, &len);
	expo_init(&r->served);
	assert_int_equal(expo_parse(&r->served, r->body, len, EXPO_STRICT), 0);
}

static void run_state(const struct mapping *m, const char *state, unsigned flags, struct state_run *r)
{
	run_state_with(m, state, flags, 0, NULL, r);
}

static void free_state(struct state_run *r)
{
	for (int ep = 0; ep < SRC_COUNT; ep++)
		payload_unref(r->p[ep]);
	expo_free(&r->legacy);
	free(r->legacy_text);
	expo_free(&r->served);
	free(r->body);
	render_result_free(&r->res);
}

/* Row i's family in the served body (NULL when it has none), checked against the result record:
 * a served row's bytes are its family, with as many series as the row computed. */
static const struct expo_family *served_family(const struct mapping *m, const struct state_run *r, size_t i)
{
	const struct row *row = &m->rows[i];
	const struct render_row *o = &r->res.rows[i];
	const struct expo_family *f = expo_find(&r->served, row->name, strlen(row->name));
	char head[200];
	snprintf(head, sizeof(head), "# HELP %s ", row->name);
	if (o->status != ROW_OK || o->output_full) {
		assert_null(f);
		assert_int_equal(o->len, 0);
		return NULL;
	}
	assert_non_null(f);
	assert_int_equal(f->n, o->nseries);
	assert_true(o->len > strlen(head) && !strncmp(r->body + o->off, head, strlen(head)));
	return f;
}

static const struct expo_sample *find_series(const struct expo_family *f, const struct label *l, size_t n)
{
	for (size_t i = 0; f && i < f->n; i++)
		if (labels_is_equal(f->samples[i].labels, f->samples[i].nlabels, l, n))
			return &f->samples[i];
	return NULL;
}

/* The same series but for the value of the "status" label (per-node rows infer it). */
static const struct expo_sample *find_series_but_status(const struct expo_family *f, const struct label *l, size_t n)
{
	for (size_t i = 0; f && i < f->n; i++) {
		const struct expo_sample *e = &f->samples[i];
		int ok = e->nlabels == n;
		for (size_t k = 0; ok && k < n; k++)
			ok = slice_is_equal(e->labels[k].name, e->labels[k].nlen, l[k].name, l[k].nlen) &&
			     (slice_is_equal(l[k].name, l[k].nlen, "status", 6) ||
			      slice_is_equal(e->labels[k].value, e->labels[k].vlen, l[k].value, l[k].vlen));
		if (ok)
			return e;
	}
	return NULL;
}

static int same_names(const struct label *a, size_t na, const struct label *b, size_t nb)
{
	if (na != nb)
		return 0;
	for (size_t i = 0; i < na; i++)
		if (!slice_is_equal(a[i].name, a[i].nlen, b[i].name, b[i].nlen))
			return 0;
	return 1;
}

/* What the comparisons measured, per row, for one column of docs/metrics.md (native only, or with
 * slurmrestd). */
struct measure {
	double *maxdiff;            /* the largest difference of the row's approximate form */
	size_t *status_diff;        /* series that differ only by their status label */
	int *approx;                /* the row was served approximate somewhere */
	int *exact_ok;              /* served exact, and equal, on every state so far */
	size_t exact_checked;
};

static void measure_init(struct measure *ms, size_t n)
{
	ms->maxdiff = xcalloc(n, sizeof(double));
	ms->status_diff = xcalloc(n, sizeof(size_t));
	ms->approx = xcalloc(n, sizeof(int));
	ms->exact_ok = xcalloc(n, sizeof(int));
	for (size_t i = 0; i < n; i++)
		ms->exact_ok[i] = 1;
	ms->exact_checked = 0;
}

static void measure_free(struct measure *ms)
{
	free(ms->maxdiff);
	free(ms->status_diff);
	free(ms->approx);
	free(ms->exact_ok);
}

/* An approximate row's served family sf against the old exporter's lf: the same label names; the
 * largest difference (a series missing on one side counts as its whole value). */
static void measure_approx(const struct expo_family *sf, const struct expo_family *lf, const char *state, const char *name,
			   double *maxdiff, size_t *status_diff)
{
	size_t ln = lf ? lf->n : 0, sn = sf ? sf->n : 0;
	for (size_t k = 0; k < sn && ln; k++)
		if (!same_names(sf->samples[k].labels, sf->samples[k].nlabels, lf->samples[0].labels, lf->samples[0].nlabels))
			fail_msg("%s: row %s: label names differ from the old exporter's", state, name);
	for (size_t k = 0; k < ln; k++) {
		const struct expo_sample *ls = &lf->samples[k];
		const struct expo_sample *e = find_series(sf, ls->labels, ls->nlabels);
		if (!e && (e = find_series_but_status(sf, ls->labels, ls->nlabels)))
			(*status_diff)++;
		double d = e ? fabs(e->value - ls->value) : fabs(ls->value);
		if (d > *maxdiff)
			*maxdiff = d;
	}
	for (size_t k = 0; k < sn; k++) {
		const struct expo_sample *e = &sf->samples[k];
		int found = 0;
		for (size_t q = 0; q < ln && !found; q++)
			found = find_series_but_status(&(struct expo_family){ .samples = (struct expo_sample *)e, .n = 1 },
						       lf->samples[q].labels, lf->samples[q].nlabels) != NULL;
		if (!found && fabs(e->value) > *maxdiff)
			*maxdiff = fabs(e->value);
	}
}

/* An exact row: the same series as the old exporter's, label set for label set, value for value. */
static void check_exact(const struct expo_family *sf, const struct expo_family *lf, const char *state, const char *name)
{
	size_t ln = lf ? lf->n : 0, sn = sf ? sf->n : 0;
	if (sn != ln)
		fail_msg("%s: exact row %s has %zu series, the old exporter %zu", state, name, sn, ln);
	for (size_t k = 0; k < ln; k++) {
		const struct expo_sample *ls = &lf->samples[k];
		const struct expo_sample *e = find_series(sf, ls->labels, ls->nlabels);
		if (!e)
			fail_msg("%s: exact row %s lacks legacy series #%zu", state, name, k);
		if (e->value != ls->value)
			fail_msg("%s: exact row %s: %g, the old exporter %g", state, name, e->value, ls->value);
	}
}

/* The first form of r that reads slurmctld alone: the one served without slurmrestd (a preferred
 * form over slurmctld's families, as the partition CPU rows' form for a partition holding every
 * node, else the native form). */
static size_t first_slurmctld_form(const struct row *r)
{
	size_t k = 0;
	while (k + 1 < r->nforms && row_upstream(r, k) != UPSTREAM_SLURMCTLD)
		k++;
	return k;
}

/* One captured state: every row as the form it was served with promises. rest (run_state_with's):
 * with slurmrestd's answers (1) every row with a preferred form must have been served with its
 * first, else with its first form that reads slurmctld alone. */
static void check_state(const struct mapping *m, const char *state, unsigned flags, int rest, const char *legacy,
			struct measure *ms)
{
	struct state_run r;
	run_state_with(m, state, flags, rest, legacy, &r);
	for (size_t i = 0; i < m->nrows; i++) {
		const struct row *row = &m->rows[i];
		const struct render_row *res = &r.res.rows[i];
		const struct expo_family *lf = expo_find(&r.legacy, row->name, strlen(row->name));
		const struct expo_family *sf = served_family(m, &r, i);
		if (!row_is_enabled(row, flags)) {
			assert_int_equal(res->status, ROW_DISABLED);
			continue;
		}
		if (res->form != (rest == 1 ? 0 : first_slurmctld_form(row)))
			fail_msg("%s: row %s served with form %zu of %zu", state, row->name, res->form, row->nforms);
		if (res->fidelity == FID_UNAVAILABLE) {
			assert_int_equal(res->status, ROW_UNAVAILABLE);
			assert_null(sf);
			ms->exact_ok[i] = 0;
			continue;
		}
		if (res->status != ROW_OK)
			fail_msg("%s: row %s: status %d (%s)", state, row->name, res->status, res->err);
		if (res->fidelity == FID_EXACT) {
			check_exact(sf, lf, state, row->name);
			ms->exact_checked++;
			continue;
		}
		ms->exact_ok[i] = 0;
		ms->approx[i] = 1;
		measure_approx(sf, lf, state, row->name, &ms->maxdiff[i], &ms->status_diff[i]);
	}
	free_state(&r);
}

static void print_measure(const struct mapping *m, const struct measure *ms, const char *column)
{
	for (size_t i = 0; i < m->nrows; i++)
		if (ms->approx[i])
			printf("  %-50s %-10s %g%s\n", m->rows[i].name, column, ms->maxdiff[i],
			       ms->status_diff[i] ? " (and a different status label on some series)" : "");
}

/* The largest difference docs/metrics.md states for row `name` in column col (0: native only, 1:
 * with slurmrestd; "as native" there reads the native one): the bound its approximate form is held
 * to; -1 where it states no number. */
static double stated_bound(const char *doc, const char *name, int col)
{
	char key[160];
	double bound[2] = { -1, -1 };
	snprintf(key, sizeof(key), "\n| `%s` | ", name);
	const char *p = strstr(doc, key);
	if (!p)
		fail_msg("docs/metrics.md has no row %s", name);
	const char *eol = strchr(p + 1, '\n');
	/* | name | native | with slurmrestd | source | form | difference | difference | note | */
	for (int sep = 0; sep < 6 && (p = strstr(p + 1, " | ")) && p < eol; sep++)
		if (sep >= 4) {
			char *end;
			double v = strtod(p + 3, &end);
			if (end != p + 3)
				bound[sep - 4] = v;
		}
	return col && bound[1] < 0 ? bound[0] : bound[col];
}

/* Every approximate form within the largest difference docs/metrics.md states for it (the figures
 * are printed with 6 significant digits: the bound is relative). */
static void check_bounds(const struct mapping *m, const struct measure *ms, int col)
{
	char *doc = tu_slurp("docs/metrics.md", NULL);
	assert_non_null(doc);
	for (size_t i = 0; i < m->nrows; i++) {
		if (!ms->approx[i])
			continue;
		double b = stated_bound(doc, m->rows[i].name, col);
		if (b < 0 || ms->maxdiff[i] > b * (1 + 1e-5) + 1e-12)
			fail_msg("%s: largest difference %g %s, docs/metrics.md states %g (run docs/gen-metrics-doc.py)",
				 m->rows[i].name, ms->maxdiff[i], col ? "with slurmrestd" : "native only", b);
	}
	free(doc);
}

static const char *const rest_states[] = { TU_REST_STATES };
#define NREST (sizeof(rest_states) / sizeof(rest_states[0]))

/* Every row on every capture, native only: the 9 slurmctld captures and the 12 REST states (25.11.7
 * at data_parser v0.0.44, 26.05.3 at v0.0.45) with slurmrestd's answers absent (the fallback). Then
 * the 12 REST states with slurmrestd's answers
 * (and --gpus-acct against legacy_exporter_metrics_gpus.txt): the rows' preferred forms. The
 * largest differences are printed per column for docs/metrics.md (docs/gen-metrics-doc.py),
 * and each must be within the figure docs/metrics.md states: the approximation's bound. */
static void test_rows_against_legacy(void **state)
{
	(void)state;
	struct mapping *m = tu_load_shipped();
	struct measure native, rest;
	measure_init(&native, m->nrows);
	measure_init(&rest, m->nrows);
	for (size_t s = 0; s < NSTATES; s++)
		check_state(m, states[s], 0, 0, NULL, &native);
	assert_true(native.exact_checked >= 25 * NSTATES);
	for (size_t s = 0; s < NREST; s++) /* slurmrestd configured, its answers missing: the fallback */
		check_state(m, rest_states[s], 0, 2, NULL, &native);
	for (size_t s = 0; s < NREST; s++)
		check_state(m, rest_states[s], ROW_FLAG_GPUS_ACCT, 1, "legacy_exporter_metrics_gpus.txt", &rest);
	size_t exact_rest = 0;
	for (size_t i = 0; i < m->nrows; i++)
		exact_rest += (size_t)rest.exact_ok[i];
	printf("largest difference from the old exporter, approximate forms (native: %zu captured states and the %zu "
	       "REST states without slurmrestd; slurmrestd: the %zu REST states):\n", NSTATES, NREST, NREST);
	print_measure(m, &native, "native");
	print_measure(m, &rest, "slurmrestd");
	printf("with slurmrestd, %zu of %zu families exact on every REST state\n", exact_rest, m->nrows);
	assert_true(exact_rest >= 58); /* what slurmrestd was added for: 58 of 62 families exact */
	check_bounds(m, &native, 0);
	check_bounds(m, &rest, 1);
	measure_free(&native);
	measure_free(&rest);
	mapping_free(m);
}

/* One scrape of a captured state through the full path, as --once runs it; returns the text. */
static char *scrape_state(const char *state)
{
	char dir[512];
	snprintf(dir, sizeof(dir), "tests/fixtures/%s", state);
	struct scraper_config cfg = { .replay_dir = dir, .flags = 0, .upstream[UPSTREAM_SLURMCTLD] = { .max_body = 1 << 28 } };
	struct scraper *sc = scraper_new(&cfg, tu_load_shipped());
	struct buf out;
	buf_init(&out, 0);
	assert_int_equal(scraper_run(sc, 5, &out), 200);
	scraper_free(sc);
	return buf_steal(&out, NULL);
}

/* The full scrape path, as --once runs it: every dashboard name is printed, in every state. */
static void test_dashboard_names_served(void **state)
{
	(void)state;
	for (size_t s = 0; s < NSTATES; s++) {
		char *out = scrape_state(states[s]);
		for (size_t i = 0; i < sizeof(dashboard) / sizeof(dashboard[0]); i++) {
			char want[200];
			snprintf(want, sizeof(want), "\n# TYPE %s gauge\n", dashboard[i]);
			if (!strstr(out, want))
				fail_msg("%s: %s not served", states[s], dashboard[i]);
		}
		/* no native family leaks out under its own name */
		assert_null(strstr(out, "\nslurm_nodes_mixed"));
		assert_null(strstr(out, "username="));
		free(out);
	}
}

/* The odd account (state 03): its true name, escaped as the text format requires. */
static void test_odd_account(void **state)
{
	(void)state;
	char *out = scrape_state("slurm-25.11/03-drain-down-cancel");
	assert_non_null(strstr(out, "\nslurm_account_jobs_pending{account=\"odd\\\"acct\\\\\\\\x y\"} 1\n"));
	free(out);
}

static double family_value(const struct mapping *m, const struct state_run *r, const char *name, int *present)
{
	for (size_t i = 0; i < m->nrows; i++)
		if (!strcmp(m->rows[i].name, name)) {
			const struct expo_family *f = served_family(m, r, i);
			*present = f && f->n == 1;
			return *present ? f->samples[0].value : 0;
		}
	fail_msg("no row %s", name);
	return 0;
}

/* GPU families: the old exporter's formulas on the real counts (README of the 26.05 captures). */
static void test_gpu_families(void **state)
{
	(void)state;
	static const struct {
		const char *state;
		int present;
		double total, alloc;
	} cases[] = {
		{ "slurm-26.05/01-idle-slurmdbd", 1, 4, 0 },
		{ "slurm-26.05/02-busy-gpu", 1, 4, 3 },
		{ "slurm-26.05/03-gpu-noacct-drain", 1, 4, 4 },
		{ "slurm-26.05/01-idle", 0, 0, 0 },                  /* no gres/gpu TRES: every node says 0 GPUs */
		{ "slurm-26.05/02-busy-gpu-no-slurmdbd", 0, 0, 0 },  /* ... while 3 are allocated */
		{ "slurm-25.11/02-busy-mix", 0, 0, 0 },              /* 25.11: no GPU metrics at all */
	};
	struct mapping *m = tu_load_shipped();
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		struct state_run r;
		int p1, p2, p3, p4;
		run_state(m, cases[c].state, ROW_FLAG_GPUS_ACCT, &r);
		double total = family_value(m, &r, "slurm_gpus_total", &p1);
		double alloc = family_value(m, &r, "slurm_gpus_alloc", &p2);
		double idle = family_value(m, &r, "slurm_gpus_idle", &p3);
		double util = family_value(m, &r, "slurm_gpus_utilization", &p4);
		if (cases[c].present) {
			assert_true(p1 && p2 && p3 && p4);
			assert_true(total == cases[c].total);
			assert_true(alloc == cases[c].alloc);
			assert_true(idle == cases[c].total - cases[c].alloc);
			assert_true(fabs(util - cases[c].alloc / cases[c].total) < 1e-12);
		} else {
			assert_false(p1 || p2 || p3 || p4);
			for (size_t i = 0; i < m->nrows; i++)
				if (m->rows[i].enabled_by && strncmp(m->rows[i].name, "slurm_gpus_", 11) == 0) {
					/* left out with a reason (25.11: the native family is absent; 26.05
					 * without the TRES: the guard refuses alloc > total), never a zero */
					assert_int_equal(r.res.rows[i].status, strncmp(cases[c].state, "slurm-25.11", 11) ? ROW_NO_INPUT : ROW_INPUT_MISSING);
					assert_null(served_family(m, &r, i));
				}
		}
		free_state(&r);
	}
	mapping_free(m);
}

/* A capture's native answer of one endpoint, parsed whole (tolerant grammar, as the daemon's). */
static void parse_file(const char *state, const char *file, struct expo *e, char **text)
{
	char path[600];
	size_t len;
	snprintf(path, sizeof(path), "tests/fixtures/%s/%s", state, file);
	*text = tu_slurp(path, &len);
	assert_non_null(*text);
	expo_init(e);
	assert_int_equal(expo_parse(e, *text, len, 0), 0);
}

/* The sum of every sample of a family (the unlabelled one included); 0 when absent, as the rows'
 * "or vector(0)" makes it. */
static double family_sum(const struct expo *e, const char *name, size_t *nseries)
{
	const struct expo_family *f = expo_find(e, name, strlen(name));
	double sum = 0;
	*nseries = f ? f->n : 0;
	for (size_t i = 0; f && i < f->n; i++)
		sum += f->samples[i].value;
	return sum;
}

/* /metrics/jobs is derived, not fetched. slurmctld counts every job record of
 * /metrics/jobs once in one user entry and once in one account entry of /metrics/jobs-users-accts
 * (a NULL user or account is one unlabelled entry), with the same per-state predicates
 * (statistics.c: _fill_jobs_statistics and _aggregate_job_to_jobs). So on every capture, each
 * family slurm_jobs_<x> equals the sum of slurm_account_jobs_<x> and of slurm_user_jobs_<x>,
 * except the two that are counted differently: slurm_jobs (array tasks expanded there, +1 per
 * record per account) and, on 26.05, slurm_jobs_nodes_alloc (distinct nodes there, a sum per
 * account). And each slurm_queue_* row, now summing the accounts, serves exactly what its old form
 * read from /metrics/jobs. */
static void test_jobs_derived_from_accounts(void **state)
{
	(void)state;
	static const struct {
		const char *row, *fam, *minus; /* row = clamp_min(fam - minus, 0) on /metrics/jobs */
	} queue[] = {
		{ "slurm_queue_pending", "slurm_jobs_pending", NULL },
		{ "slurm_queue_running", "slurm_jobs_running", "slurm_jobs_configuring" },
		{ "slurm_queue_suspended", "slurm_jobs_suspended", NULL },
		{ "slurm_queue_cancelled", "slurm_jobs_cancelled", NULL },
		{ "slurm_queue_completing", "slurm_jobs_completing", NULL },
		{ "slurm_queue_completed", "slurm_jobs_completed", NULL },
		{ "slurm_queue_configuring", "slurm_jobs_configuring", NULL },
		{ "slurm_queue_failed", "slurm_jobs_failed", NULL },
		{ "slurm_queue_timeout", "slurm_jobs_timeout", NULL },
		{ "slurm_queue_preempted", "slurm_jobs_preempted", NULL },
		{ "slurm_queue_node_fail", "slurm_jobs_node_failed", NULL },
	};
	struct mapping *m = tu_load_shipped();
	size_t checked = 0, with_jobs = 0;
	for (size_t s = 0; s < NSTATES + NREST; s++) {
		const char *st = s < NSTATES ? states[s] : rest_states[s - NSTATES];
		struct expo jobs, ua;
		char *jt, *ut;
		parse_file(st, "metrics_jobs.txt", &jobs, &jt);
		parse_file(st, "metrics_jobs-users-accts.txt", &ua, &ut);
		assert_true(jobs.nfams >= 29);
		with_jobs += ua.nfams > 0;
		for (size_t i = 0; i < jobs.nfams; i++) {
			const struct expo_family *f = &jobs.fams[i];
			assert_true(f->n == 1 && f->samples[0].nlabels == 0);
			char fam[128];
			snprintf(fam, sizeof(fam), "%.*s", (int)f->nlen, f->name);
			if (!strcmp(fam, "slurm_jobs") || !strcmp(fam, "slurm_jobs_nodes_alloc"))
				continue;
			for (int side = 0; side < 2; side++) {
				char name[160];
				size_t n;
				snprintf(name, sizeof(name), "slurm_%s%s", side ? "user_" : "account_", fam + 6);
				double sum = family_sum(&ua, name, &n);
				if (sum != f->samples[0].value)
					fail_msg("%s: %s = %g, sum(%s) = %g over %zu series", st, fam, f->samples[0].value,
						 name, sum, n);
				checked++;
			}
		}
		struct state_run r;
		run_state_with(m, st, 0, s < NSTATES ? 0 : 2, NULL, &r);
		for (size_t q = 0; q < sizeof(queue) / sizeof(queue[0]); q++) {
			size_t n;
			int present;
			double want = family_sum(&jobs, queue[q].fam, &n);
			if (queue[q].minus)
				want = fmax(want - family_sum(&jobs, queue[q].minus, &n), 0);
			double got = family_value(m, &r, queue[q].row, &present);
			if (!present || got != want)
				fail_msg("%s: %s = %g (served: %d), /metrics/jobs says %g", st, queue[q].row, got, present, want);
		}
		free_state(&r);
		expo_free(&jobs);
		expo_free(&ua);
		free(jt);
		free(ut);
	}
	/* every capture: 9 native and 12 REST states, 17 of them with jobs in memory */
	assert_true(with_jobs >= 17);
	assert_true(checked >= 2 * 27 * (NSTATES + NREST));
	/* the shipped table reads nothing of /metrics/jobs, with or without --gpus-acct and slurmrestd */
	for (int g = 0; g < 4; g++)
		assert_int_equal(mapping_sources(m, g & 1 ? ROW_FLAG_GPUS_ACCT | ROW_FLAG_REST_JOBS : 0, g & 2 ? ~0u : 0) & (1u << SRC_JOBS), 0);
	mapping_free(m);
}

/* The old exporter's eleven job-state families (squeue -r --states=all by state) from /jobs/state:
 * with --slurmrestd.url alone (/jobs never fetched), and with /jobs down while the rows that need it
 * are asked for (--slurmrestd.jobs), each is served with its first form, the one reading
 * slurmrestd_job_states alone, and equals the old exporter's on every captured state. */
static void test_queue_from_job_states(void **state)
{
	(void)state;
	struct mapping *m = tu_load_shipped();
	size_t checked = 0;
	for (size_t s = 0; s < NREST; s++)
		for (int mode = 3; mode <= 4; mode++) {
			struct state_run r;
			run_state_with(m, rest_states[s], mode == 4 ? ROW_FLAG_REST_JOBS : 0, mode, NULL, &r);
			for (size_t i = 0; i < m->nrows; i++) {
				const struct row *row = &m->rows[i];
				const struct render_row *res = &r.res.rows[i];
				if (strncmp(row->name, "slurm_queue_", 12))
					continue;
				if (!strcmp(row->name, "slurm_queue_pending_dependency")) { /* needs /jobs' reasons */
					assert_int_equal(res->status, ROW_UNAVAILABLE);
					assert_null(served_family(m, &r, i));
					continue;
				}
				assert_int_equal(row->forms[0].sources, 1u << SRC_REST_JOB_STATES);
				if (res->form != 0 || res->status != ROW_OK || res->fidelity != FID_EXACT)
					fail_msg("%s (mode %d): row %s served with form %zu, status %d", rest_states[s], mode,
						 row->name, res->form, res->status);
				check_exact(served_family(m, &r, i), expo_find(&r.legacy, row->name, strlen(row->name)),
					    rest_states[s], row->name);
				checked++;
			}
			free_state(&r);
		}
	assert_int_equal(checked, 11 * 2 * NREST);
	/* with --slurmrestd.url alone, the table fetches /jobs/state and not /jobs */
	unsigned rest = 0;
	for (int id = SRC_NATIVE_COUNT; id < SRC_COUNT; id++)
		rest |= 1u << id;
	unsigned need = mapping_sources(m, 0, (source_of_upstream(UPSTREAM_SLURMCTLD) | rest) & ~(1u << SRC_REST_JOBS));
	assert_true(need & (1u << SRC_REST_JOB_STATES));
	assert_false(need & (1u << SRC_REST_JOBS));
	mapping_free(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rows_against_legacy),
		cmocka_unit_test(test_dashboard_names_served),
		cmocka_unit_test(test_odd_account),
		cmocka_unit_test(test_gpu_families),
		cmocka_unit_test(test_jobs_derived_from_accounts),
		cmocka_unit_test(test_queue_from_job_states),
	};
	return cmocka_run_group_tests_name("golden", tests, NULL, NULL);
}
