/* test_peers.c: the peer exporters' schemas against what each peer printed for the same cluster
 * instant (tests/fixtures/peers-25.11/<state>/: slurmctld's endpoints, slurmrestd's answers and the
 * peer's output, taken together), row by row as each row's fidelity promises, on the answer the
 * daemon serves (render_run's body, read back strictly):
 *   every family the peer prints (less its own health families) is a row; a row the peer printed
 *   nothing of on a state serves nothing there either (unless unavailable);
 *   exact        the same series (label sets and values) as the peer's; a form whose note says "the last
 *                bit of a sum may differ" (a sum the peer adds in Go's map order, which changes from
 *                scrape to scrape) may differ from the peer's value by a relative 1e-12, no more;
 *   approximate  the same label names, within the difference its note states; a timing (its note says
 *                "Timings are not compared:", the peer's and the shim's durations and ages on a capture
 *                being neither the cluster's): no value bound, but every series served is one the peer
 *                printed (when it printed the family), every series it printed is served with every answer
 *                there, and every value is finite and at least 0;
 *   unavailable  no series.
 * An empty label value is no label (Prometheus reads feature="" as no label "feature").
 * Times are printed in UTC, the zone the states were captured in (sinfo prints its caller's). */
#include "testutil.h"

#include <math.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "expo.h"
#include "mapping.h"
#include "payload.h"
#include "render.h"
#include "source.h"

struct peer {
	const char *mapping, *output;
	const char *const *health;  /* the peer's own health families, which are not rows */
};

/* the Go client's own families; the peers' health families are rows (they read the scrape's record) */
static const char *const rivosinc_health[] = { "go_", "process_", "promhttp_", NULL };

static const struct peer rivosinc = { "mappings/rivosinc-slurm-exporter.json", "rivosinc_exporter_metrics.txt",
				      rivosinc_health };

/* and SckyzO's histogram of its own command runs (a row is no histogram; the shim runs no command) */
static const char *const sckyzo_health[] = { "go_", "process_", "promhttp_", "slurm_exporter_command_duration_seconds",
					     NULL };

static const struct peer sckyzo = { "mappings/sckyzo-slurm-exporter.json", "sckyzo_exporter_metrics.txt", sckyzo_health };

static const char *const peer_states[] = {
	"peers-25.11/P1-busy-mix",		  "peers-25.11/P2-node-trouble",	  "peers-25.11/P3-reservation-suspended",
	"peers-25.11/P4-licenses-gpu-full",	  "peers-25.11/P5-array-dependency-holds", "peers-25.11/P6-recovered-failing",
	"peers-25.11/P7-quiet-all-cancelled",	  "peers-25.11/P8-account-limits",
	"peers-25.11/P9-limits-changed-node-down",
};

/* Every failing row of every state is reported (printed and counted), and the peer's test fails at
 * its end when any did, so one run shows the whole picture. */
static size_t failures;
#define row_fail(...) (printf("FAIL: " __VA_ARGS__), printf("\n"), failures++)

static int is_health(const struct peer *p, const char *name, size_t n)
{
	for (const char *const *h = p->health; *h; h++)
		if (n >= strlen(*h) && !strncmp(name, *h, strlen(*h)))
			return 1;
	return 0;
}

/* The series of f equal to labels l (n of them), empty values on either side being no label. */
static int same_labels(const struct expo_sample *s, const struct label *l, size_t n)
{
	size_t a = 0, b = 0;
	for (size_t i = 0; i < s->nlabels; i++)
		a += s->labels[i].vlen != 0;
	for (size_t i = 0; i < n; i++)
		b += l[i].vlen != 0;
	if (a != b)
		return 0;
	for (size_t i = 0; i < n; i++) {
		if (!l[i].vlen)
			continue;
		int found = 0;
		for (size_t k = 0; k < s->nlabels && !found; k++)
			found = slice_is_equal(s->labels[k].name, s->labels[k].nlen, l[i].name, l[i].nlen) &&
				slice_is_equal(s->labels[k].value, s->labels[k].vlen, l[i].value, l[i].vlen);
		if (!found)
			return 0;
	}
	return 1;
}

static const struct expo_sample *find_series(const struct expo_family *f, const struct label *l, size_t n)
{
	for (size_t i = 0; f && i < f->n; i++)
		if (same_labels(&f->samples[i], l, n))
			return &f->samples[i];
	return NULL;
}

struct counts { size_t exact, approximate, unavailable; };

/* An exact form's value equals the peer's; where its note says so, a sum added in another order may
 * differ in its last bits: by a relative SUM_ORDER_REL at most (two doubles a few units in the last
 * place apart are about 1e-16 apart; a load's hundredth is 1e-4 of 100). */
#define SUM_ORDER_KEY "the last bit of a sum may differ"
#define SUM_ORDER_REL 1e-12
static int value_agrees(double served, double peer, const char *note)
{
	if (served == peer || (isnan(served) && isnan(peer)))
		return 1;
	return note && strstr(note, SUM_ORDER_KEY) && isfinite(served) && isfinite(peer) &&
	       fabs(served - peer) <= SUM_ORDER_REL * fmax(fabs(served), fabs(peer));
}

/* The largest difference an approximate form's note states over every state of peer_states
 * ("Largest difference on the peers-25.11 states: 31."), -1 when it states none. */
#define BOUND_KEY "Largest difference on the peers-25.11 states: "
static double stated_bound(const char *note)
{
	const char *p = note ? strstr(note, BOUND_KEY) : NULL;
	char *end;
	double v = p ? strtod(p + strlen(BOUND_KEY), &end) : -1;
	return p && end != p + strlen(BOUND_KEY) ? v : -1;
}

/* A timing's note (see the top): its values are not compared with the peer's. */
#define TIMING_KEY "Timings are not compared:"
static int is_timing(const char *note)
{
	return note && strstr(note, TIMING_KEY) != NULL;
}

/* A timing row: the series served are the peer's (all of them with every answer there: all), each
 * value finite and at least 0; each problem reported. */
static void check_timing(const struct row *row, const struct expo_family *sf, const struct expo_family *pf,
			 const char *state, int all)
{
	size_t pn = pf ? pf->n : 0, sn = sf ? sf->n : 0;
	for (size_t k = 0; k < sn; k++) {
		const struct expo_sample *s = &sf->samples[k];
		if (!isfinite(s->value) || s->value < 0)
			row_fail("%s: timing row %s: value %g", state, row->name, s->value);
		if (pf && !find_series(pf, s->labels, s->nlabels))
			row_fail("%s: timing row %s: series #%zu is none the peer printed", state, row->name, k);
	}
	for (size_t k = 0; all && k < pn; k++)
		if (!find_series(sf, pf->samples[k].labels, pf->samples[k].nlabels))
			row_fail("%s: timing row %s lacks the peer's series #%zu", state, row->name, k);
}

/* the largest difference measured per row and form over the states so far, -1 when not served */
#define MAX_ROWS 512
#define MAX_FORMS 8
static double worst_seen[MAX_ROWS][MAX_FORMS];

static void check_row(const struct row *row, size_t ri, const struct render_row *res, const struct expo_family *sf,
		      const struct expo_family *pf, const char *state, size_t want_form, int rest, struct counts *c)
{
	size_t pn = pf ? pf->n : 0, sn = sf ? sf->n : 0;
	/* with every answer there, the row is served as its first form says; without slurmrestd's, as its
	 * native form says */
	if (res->fidelity != row->forms[want_form].fidelity) {
		row_fail("%s: row %s served %d, its form %zu says %d (status %d: %s)", state, row->name, res->fidelity,
			 want_form, row->forms[want_form].fidelity, res->status, res->err);
		return;
	}
	if (res->fidelity == FID_UNAVAILABLE) {
		assert_int_equal(res->status, ROW_UNAVAILABLE);
		assert_null(sf);
		c->unavailable++;
		return;
	}
	if (res->status != ROW_OK) {
		row_fail("%s: row %s: status %d (%s)", state, row->name, res->status, res->err);
		return;
	}
	if (res->form != want_form) {
		row_fail("%s: row %s served with form %zu, not %zu", state, row->name, res->form, want_form);
		return;
	}
	if (res->fidelity != FID_EXACT && is_timing(row->forms[res->form].note)) {
		check_timing(row, sf, pf, state, rest);
		printf("  %s: approximate, a timing (%zu series, the peer %zu)\n", row->name, sn, pn);
		c->approximate++;
		return;
	}
	if (res->fidelity != FID_EXACT) { /* measured against the bound its note states */
		double worst = 0;
		for (size_t k = 0; k < pn; k++) {
			const struct expo_sample *e = find_series(sf, pf->samples[k].labels, pf->samples[k].nlabels);
			double d = fabs((e ? e->value : 0) - pf->samples[k].value);
			worst = d > worst ? d : worst;
		}
		for (size_t k = 0; k < sn; k++) /* a series the peer lacks counts as its whole value */
			if (!find_series(pf, sf->samples[k].labels, sf->samples[k].nlabels) && fabs(sf->samples[k].value) > worst)
				worst = fabs(sf->samples[k].value);
		double bound = stated_bound(row->forms[res->form].note);
		if (ri < MAX_ROWS && res->form < MAX_FORMS && worst > worst_seen[ri][res->form])
			worst_seen[ri][res->form] = worst;
		printf("  %s: approximate, largest difference %g (stated %g)\n", row->name, worst, bound);
		if (bound < 0 || worst > bound)
			row_fail("%s: row %s: largest difference %g, its note states %g", state, row->name, worst, bound);
		c->approximate++;
		return;
	}
	c->exact++;
	if (sn != pn)
		row_fail("%s: exact row %s has %zu series, the peer %zu", state, row->name, sn, pn);
	for (size_t k = 0; k < pn; k++) {
		const struct expo_sample *ps = &pf->samples[k];
		const struct expo_sample *e = find_series(sf, ps->labels, ps->nlabels);
		if (!e) {
			row_fail("%s: exact row %s lacks the peer's series #%zu", state, row->name, k);
			return;
		}
		if (!value_agrees(e->value, ps->value, row->forms[res->form].note)) {
			row_fail("%s: exact row %s: %.17g, the peer %.17g", state, row->name, e->value, ps->value);
			return;
		}
		if (e->value != ps->value && !(isnan(e->value) && isnan(ps->value)))
			printf("  %s: %.17g, the peer %.17g: a sum in another order\n", row->name, e->value, ps->value);
	}
}

/* rest 1: slurmctld's and slurmrestd's answers; 0: slurmctld's alone (every row its native form) */
static void check_peer_state(const struct peer *peer, const char *state, int rest)
{
	char dir[512], path[600];
	struct buf msg, out;
	size_t len;
	buf_init(&msg, 0);
	struct mapping *m = mapping_load(peer->mapping, &msg);
	if (!m)
		fail_msg("%.*s", (int)msg.len, msg.data);
	buf_free(&msg);
	snprintf(dir, sizeof(dir), "tests/fixtures/%s", state);
	struct payload *p[SRC_COUNT] = { 0 };
	unsigned missing = 0; /* sources the state was captured without */
	for (int ep = 0; ep < (rest ? SRC_COUNT : SRC_NATIVE_COUNT); ep++) {
		snprintf(path, sizeof(path), "%s/%s", dir, sources[ep].file);
		if (ep == SRC_REST_ASSOCIATIONS && access(path, F_OK)) { /* P1-P7 were captured before it was read */
			missing |= 1u << ep;
			continue;
		}
		p[ep] = payload_replay(dir, (enum source_id)ep, 1 << 28, 0, mapping_has_input, (void *)m);
		if (!p[ep]->ok)
			fail_msg("%s: %s: %s", state, sources[ep].name, p[ep]->reason);
	}
	snprintf(path, sizeof(path), "%s/%s", dir, peer->output);
	char *peer_text = tu_slurp(path, &len);
	assert_non_null(peer_text);
	struct expo pe, served;
	expo_init(&pe);
	assert_int_equal(expo_parse(&pe, peer_text, len, EXPO_STRICT), 0);
	const struct render_in in = { .m = m, .flags = ROW_FLAG_REST_JOBS, .p = (const struct payload *const *)p };
	struct render_result res;
	buf_init(&out, 0);
	assert_int_equal(render_run(&in, &out, &res), 200);
	char *body = buf_steal(&out, &len);
	expo_init(&served);
	assert_int_equal(expo_parse(&served, body, len, EXPO_STRICT), 0);
	/* every family the peer printed is a row (its health families aside) */
	size_t peer_families = 0;
	for (size_t i = 0; i < pe.nfams; i++) {
		const struct expo_family *f = &pe.fams[i];
		if (is_health(peer, f->name, f->nlen))
			continue;
		peer_families++;
		size_t r = 0;
		while (r < m->nrows && !slice_is_equal(m->rows[r].name, strlen(m->rows[r].name), f->name, f->nlen))
			r++;
		if (r == m->nrows)
			row_fail("%s: the peer's family %.*s is no row of %s", state, (int)f->nlen, f->name, peer->mapping);
	}
	struct counts c = { 0, 0, 0 };
	for (size_t i = 0; i < m->nrows; i++) {
		const char *name = m->rows[i].name;
		const struct expo_family *pf = expo_find(&pe, name, strlen(name));
		const struct expo_family *sf = expo_find(&served, name, strlen(name));
		/* a family the peer prints only when a value is > 0 (a license's reserved count): none
		 * here, and none from the row either (checked as an exact row with no series) */
		size_t want = 0; /* with slurmrestd, the first form reading no source the state lacks */
		while (want + 1 < m->rows[i].nforms && (m->rows[i].forms[want].sources & missing))
			want++;
		check_row(&m->rows[i], i, &res.rows[i], sf, pf, state, rest ? want : m->rows[i].nforms - 1,
			  rest && !missing, &c);
	}
	printf("%s %s, %s%s: the peer printed %zu families; %zu rows: %zu exact, %zu approximate, %zu unavailable\n",
	       state, peer->mapping, rest ? "with slurmrestd" : "slurmctld alone",
	       missing ? " (no /associations answer in this state)" : "", peer_families, m->nrows, c.exact, c.approximate,
	       c.unavailable);
	if (!failures)
		assert_int_equal(c.exact + c.approximate + c.unavailable, m->nrows);
	expo_free(&served);
	free(body);
	render_result_free(&res);
	expo_free(&pe);
	free(peer_text);
	for (int ep = 0; ep < SRC_COUNT; ep++)
		payload_unref(p[ep]);
	mapping_free(m);
}

static void check_peer(const struct peer *peer)
{
	failures = 0;
	for (size_t r = 0; r < MAX_ROWS; r++)
		for (size_t f = 0; f < MAX_FORMS; f++)
			worst_seen[r][f] = -1;
	for (size_t s = 0; s < sizeof(peer_states) / sizeof(peer_states[0]); s++)
		for (int rest = 1; rest >= 0; rest--)
			check_peer_state(peer, peer_states[s], rest);
	/* an approximate form's note states the largest difference over all states, not a guess above it */
	struct buf msg;
	buf_init(&msg, 0);
	struct mapping *m = mapping_load(peer->mapping, &msg);
	assert_non_null(m);
	buf_free(&msg);
	assert_true(m->nrows <= MAX_ROWS);
	for (size_t r = 0; r < m->nrows; r++)
		for (size_t f = 0; f < m->rows[r].nforms && f < MAX_FORMS; f++) {
			if (worst_seen[r][f] < 0)
				continue;
			double bound = stated_bound(m->rows[r].forms[f].note);
			printf("MEASURED %s %s %zu %g\n", peer->mapping, m->rows[r].name, f, worst_seen[r][f]);
			if (bound != worst_seen[r][f])
				row_fail("row %s, form %zu: its note states %g, the largest difference over the states is %g",
					 m->rows[r].name, f, bound, worst_seen[r][f]);
		}
	mapping_free(m);
	if (failures)
		fail_msg("%s: %zu failing rows (each printed above)", peer->mapping, failures);
}

static void test_rivosinc_rows_against_peer(void **state)
{
	(void)state;
	check_peer(&rivosinc);
}

static void test_sckyzo_rows_against_peer(void **state)
{
	(void)state;
	check_peer(&sckyzo);
}

/* the tolerance is the stated one, and only where a note states it */
static void test_sum_order_tolerance(void **state)
{
	(void)state;
	const char *marked = "rivosinc adds in map order, so the last bit of a sum may differ.";
	assert_true(value_agrees(40.65, 40.65, NULL));
	assert_true(value_agrees(NAN, NAN, NULL));
	assert_false(value_agrees(40.65, 40.650000000000006, NULL));
	assert_false(value_agrees(40.65, 40.650000000000006, "an exact sum"));
	assert_true(value_agrees(40.65, 40.650000000000006, marked));
	assert_true(value_agrees(40.65, 40.64999999999999, marked));
	assert_true(value_agrees(1e6, 1e6 * (1 + 0.9e-12), marked));
	assert_false(value_agrees(1e6, 1e6 * (1 + 1.1e-12), marked));
	assert_false(value_agrees(40.65, 40.66, marked));
	assert_false(value_agrees(40.65, NAN, marked));
	assert_false(value_agrees(INFINITY, -INFINITY, marked));
}

int main(void)
{
	/* the states were captured in UTC: sinfo printed the reasons' times (%H) there */
	setenv("TZ", "UTC", 1);
	tzset();
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sum_order_tolerance),
		cmocka_unit_test(test_rivosinc_rows_against_peer),
		cmocka_unit_test(test_sckyzo_rows_against_peer),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
