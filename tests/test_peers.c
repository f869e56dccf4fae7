/* test_peers.c: the peer exporters' schemas against what each peer printed for the same cluster
 * instant (tests/fixtures/peers-25.11/<state>/: slurmctld's endpoints, slurmrestd's answers and the
 * peer's output, taken together; every directory there holding the peer's output is a state, so a
 * state added later is checked too), row by row as each row's fidelity promises, on the answer the
 * daemon serves (render_run's body, read back strictly):
 *   every family the peer prints is a row but the Go client's own (go_*, process_*, promhttp_*; a
 *   histogram's or summary's _bucket, _sum and _count are its one family); a row the peer printed
 *   nothing of on a state serves nothing there either (unless unavailable);
 *   exact        the same series (label sets and values) as the peer's; a form whose note says "the last
 *                bit of a sum may differ" (a sum the peer adds in Go's map order, which changes from
 *                scrape to scrape) may differ from the peer's value by a relative 1e-12, no more;
 *   approximate  its largest difference over every state (the largest absolute difference of one
 *                series' value from the peer's, a series on one side only counting as its whole value)
 *                is the figure its note states ("Largest difference on the peers-25.11 states: N"), on
 *                each state at most that; but where the figure depends on when each side read it:
 *                a timing (its note says "Timings are not compared:", the peer's and the shim's durations
 *                and ages on a capture being neither the cluster's): every series served is one the peer
 *                printed (when it printed the family), every series it printed is served with every
 *                answer there, and every value is finite and at least 0;
 *                a figure read at another instant (its note says "Read at another instant:": sdiag's
 *                counters and thread counts, which every reader's RPCs move between the two reads): every
 *                series served has the label names of one the peer printed and back, and every value is
 *                finite and at least 0; the difference is measured and printed, not held to the note;
 *   unavailable  no series.
 * Every row, exact or approximate, is measured on every state: equal to the peer's series for series
 * or not, and its worst absolute and relative difference. At the end of each schema a SUMMARY line
 * gives, with slurmrestd's answers: the families the peer printed on any state, those equal series for
 * series on every state, the approximate ones (each with its worst difference) and the unavailable
 * ones, and the share equal against the bar of 90% (printed, not held: a timing or a figure
 * read at another instant is never equal, and rivosinc prints eight such families of 52); the same
 * without slurmrestd is printed too.
 * The peer against itself (tests/fixtures/peers-25.11/_repeat/<run>/: the peer's outputs of capture.sh
 * run three times in a row on one unchanged cluster; check_repeats): the families the peer prints the
 * same in every run, and a SELF line per schema, "equal where the peer agrees with itself: N of M": of
 * the M families it reproduces, the N equal series for series on every state. The families it does not
 * reproduce must be exactly the rows whose note says why ("Timings are not compared:", "Read at another
 * instant:", or "Moves between scrapes:" for an exact figure slurmctld moves on its own clock); a row
 * that moves without saying so, or says so and does not move, fails.
 * An empty label value is no label (Prometheus reads feature="" as no label "feature").
 * Times are printed in UTC, the zone the states were captured in (sinfo prints its caller's). */
#include "testutil.h"

#include <dirent.h>
#include <math.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "expo.h"
#include "mapping.h"
#include "payload.h"
#include "render.h"
#include "source.h"

struct peer {
	const char *mapping, *output;
};

static const struct peer rivosinc = { "mappings/rivosinc-slurm-exporter.json", "rivosinc_exporter_metrics.txt" };
static const struct peer sckyzo = { "mappings/sckyzo-slurm-exporter.json", "sckyzo_exporter_metrics.txt" };

/* the Go client's own families, which describe the exporter's process: no row of any schema */
static const char *const client_families[] = { "go_", "process_", "promhttp_", NULL };

#define STATES_DIR "tests/fixtures/peers-25.11"
#define MIN_STATES 9 /* P1..P9, committed */
#define MAX_STATES 64

/* The states: each directory of STATES_DIR holding the peer's output, by name ("peers-25.11/P1-..."). */
static size_t peer_states(const struct peer *p, char states[MAX_STATES][128])
{
	struct dirent **ents;
	int n = scandir(STATES_DIR, &ents, NULL, alphasort);
	size_t k = 0;
	assert_true(n > 0);
	for (int i = 0; i < n; i++) {
		char path[600];
		struct stat st;
		snprintf(path, sizeof(path), STATES_DIR "/%s/%s", ents[i]->d_name, p->output);
		if (ents[i]->d_name[0] != '.' && stat(path, &st) == 0 && S_ISREG(st.st_mode)) {
			assert_true(k < MAX_STATES);
			snprintf(states[k++], 128, "peers-25.11/%.100s", ents[i]->d_name);
		}
		free(ents[i]);
	}
	free(ents);
	assert_true(k >= MIN_STATES);
	return k;
}

/* Every failing row of every state is reported (printed and counted), and the peer's test fails at
 * its end when any did, so one run shows the whole picture. */
static size_t failures;
#define row_fail(...) (printf("FAIL: " __VA_ARGS__), printf("\n"), failures++)

static int is_client_family(const char *name, size_t n)
{
	for (const char *const *h = client_families; *h; h++)
		if (n >= strlen(*h) && !strncmp(name, *h, strlen(*h)))
			return 1;
	return 0;
}

/* A histogram's samples are NAME_bucket, NAME_sum and NAME_count, a summary's NAME, NAME_sum and
 * NAME_count: the parts of the one family NAME its # TYPE line declares. */
static const char *const part_suffixes[] = { "_bucket", "_sum", "_count" };

static int is_whole(const struct expo_family *f)
{
	return f && (f->type == EXPO_HISTOGRAM || f->type == EXPO_SUMMARY);
}

/* The series of e's family f, a histogram's or summary's parts included. */
static size_t family_series(const struct expo *e, const struct expo_family *f)
{
	size_t n = f ? f->n : 0;
	for (size_t i = 0; is_whole(f) && i < 3; i++) {
		char name[512];
		snprintf(name, sizeof(name), "%.*s%s", (int)f->nlen, f->name, part_suffixes[i]);
		const struct expo_family *p = expo_find(e, name, strlen(name));
		n += p ? p->n : 0;
	}
	return n;
}

/* 1 if e's family named name (n bytes) is a part of one of its histograms or summaries. */
static int is_part(const struct expo *e, const char *name, size_t n)
{
	for (size_t i = 0; i < 3; i++) {
		size_t k = strlen(part_suffixes[i]);
		if (n > k && !memcmp(name + n - k, part_suffixes[i], k) && is_whole(expo_find(e, name, n - k)))
			return 1;
	}
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

/* A figure read at another instant's note (see the top): its values are measured, not held. */
#define INSTANT_KEY "Read at another instant:"
static int is_instant(const char *note)
{
	return note && strstr(note, INSTANT_KEY) != NULL;
}

/* 1 if series s has the label names (those with a value) of some series of f. */
static int names_in(const struct expo_sample *s, const struct expo_family *f)
{
	for (size_t i = 0; f && i < f->n; i++) {
		const struct expo_sample *o = &f->samples[i];
		size_t a = 0, b = 0, found = 0;
		for (size_t k = 0; k < s->nlabels; k++)
			a += s->labels[k].vlen != 0;
		for (size_t k = 0; k < o->nlabels; k++)
			b += o->labels[k].vlen != 0;
		for (size_t k = 0; k < s->nlabels && a == b; k++)
			for (size_t j = 0; s->labels[k].vlen && j < o->nlabels; j++)
				found += o->labels[j].vlen &&
					 slice_is_equal(s->labels[k].name, s->labels[k].nlen, o->labels[j].name, o->labels[j].nlen);
		if (a == b && found == a)
			return 1;
	}
	return 0;
}

/* A figure read at another instant: every series served has the label names of one the peer printed
 * and back (when both have series), each value served finite and at least 0; with every answer there
 * (all), a family the peer printed is served. */
static void check_instant(const struct row *row, const struct expo_family *sf, const struct expo_family *pf,
			  const char *state, int all)
{
	size_t pn = pf ? pf->n : 0, sn = sf ? sf->n : 0;
	if (all && pn && !sn)
		row_fail("%s: row %s (read at another instant) serves nothing, the peer printed %zu series", state,
			 row->name, pn);
	for (size_t k = 0; k < sn; k++) {
		if (!isfinite(sf->samples[k].value) || sf->samples[k].value < 0)
			row_fail("%s: row %s (read at another instant): value %g", state, row->name, sf->samples[k].value);
		if (pn && !names_in(&sf->samples[k], pf))
			row_fail("%s: row %s (read at another instant): series #%zu has label names the peer's have not",
				 state, row->name, k);
	}
	for (size_t k = 0; sn && k < pn; k++)
		if (!names_in(&pf->samples[k], sf))
			row_fail("%s: row %s (read at another instant): the peer's series #%zu has label names none served has",
				 state, row->name, k);
}

/* How a family served compares with the peer's on one state. */
struct measure {
	int equal;           /* the same series, each value agreeing (value_agrees) */
	int same_sets;       /* the same label sets, whatever the values */
	double abs, rel;     /* the largest absolute and relative difference of one series' value; a series
				on one side only counts as its whole value (relative 1) */
};

static void widen(struct measure *m, double served, double peer)
{
	double d = fabs(served - peer), big = fmax(fabs(served), fabs(peer));
	if (isnan(served) != isnan(peer))
		d = INFINITY;
	m->abs = fmax(m->abs, d);
	m->rel = fmax(m->rel, d == 0 || isnan(d) ? 0 : isinf(d) || big == 0 ? 1 : d / big);
}

static struct measure measure(const struct expo_family *sf, const struct expo_family *pf, const char *note)
{
	struct measure m = { 1, 1, 0, 0 };
	size_t pn = pf ? pf->n : 0, sn = sf ? sf->n : 0;
	for (size_t k = 0; k < pn; k++) {
		const struct expo_sample *ps = &pf->samples[k], *e = find_series(sf, ps->labels, ps->nlabels);
		if (!e) {
			m.equal = m.same_sets = 0;
			widen(&m, 0, ps->value);
			m.rel = fmax(m.rel, 1);
			continue;
		}
		if (!value_agrees(e->value, ps->value, note))
			m.equal = 0;
		if (!(isnan(e->value) && isnan(ps->value)))
			widen(&m, e->value, ps->value);
	}
	for (size_t k = 0; k < sn; k++) /* a series the peer lacks */
		if (!find_series(pf, sf->samples[k].labels, sf->samples[k].nlabels)) {
			m.equal = m.same_sets = 0;
			widen(&m, sf->samples[k].value, 0);
			m.rel = fmax(m.rel, 1);
		}
	return m;
}

/* Per schema, over its states: per row and form the largest difference measured (-1: not served with
 * it), and per row, with and without slurmrestd's answers, how it compared with the peer's output. */
#define MAX_ROWS 512
#define MAX_FORMS 8
static double worst_seen[MAX_ROWS][MAX_FORMS];
struct row_stats {
	int printed;           /* the peer printed a series of it on a state */
	int differs;           /* its series differed from the peer's on a state */
	int sets_differ;       /* its label sets did */
	double abs, rel;       /* the worst over the states */
	enum fidelity fid;     /* the form's it was served with (the last state's) */
	const char *how;       /* "", "a timing", "read at another instant" */
};
static struct row_stats stats[2][MAX_ROWS]; /* [rest] */

static void note_stats(size_t ri, int rest, const struct measure *m, size_t peer_series, enum fidelity fid,
		       const char *how)
{
	if (ri >= MAX_ROWS)
		return;
	struct row_stats *st = &stats[rest][ri];
	st->printed |= peer_series > 0;
	st->differs |= !m->equal;
	st->sets_differ |= !m->same_sets;
	st->abs = fmax(st->abs, m->abs);
	st->rel = fmax(st->rel, m->rel);
	st->fid = fid;
	st->how = how;
}

/* An exact row: the peer's series, each value agreeing; each problem reported. */
static void check_exact(const struct row *row, const struct render_row *res, const struct expo_family *sf,
			const struct expo_family *pf, const char *state)
{
	size_t pn = pf ? pf->n : 0, sn = sf ? sf->n : 0;
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

/* rest: with slurmrestd's answers; all: every answer the table reads is there (a state captured
 * without one, /associations in P1-P7, has not) */
static void check_row(const struct row *row, size_t ri, const struct render_row *res, const struct expo_family *sf,
		      const struct expo_family *pf, const char *state, size_t want_form, int rest, int all,
		      size_t peer_series)
{
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
		struct measure none = { peer_series == 0, peer_series == 0, 0, 0 };
		note_stats(ri, rest, &none, peer_series, FID_UNAVAILABLE, "");
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
	const char *note = row->forms[res->form].note;
	struct measure m = measure(sf, pf, note);
	int approx = res->fidelity != FID_EXACT;
	const char *how = approx && is_timing(note) ? "a timing" : approx && is_instant(note) ? "read at another instant" : "";
	note_stats(ri, rest, &m, peer_series, res->fidelity, how);
	if (!approx) {
		check_exact(row, res, sf, pf, state);
		return;
	}
	double bound = stated_bound(note);
	printf("  %s: approximate%s%s, %s; largest difference %g (relative %.3g), stated %g\n", row->name, *how ? ", " : "",
	       how, m.equal ? "equal" : "differs", m.abs, m.rel, bound);
	if (is_timing(note)) {
		check_timing(row, sf, pf, state, all);
	} else if (is_instant(note)) {
		check_instant(row, sf, pf, state, all);
	} else { /* measured against the bound its note states */
		if (ri < MAX_ROWS && res->form < MAX_FORMS && m.abs > worst_seen[ri][res->form])
			worst_seen[ri][res->form] = m.abs;
		if (bound < 0 || m.abs > bound)
			row_fail("%s: row %s: largest difference %g, its note states %g", state, row->name, m.abs, bound);
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
	assert_true(m->nrows <= MAX_ROWS);
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
	/* every family the peer printed is a row (the Go client's aside; a histogram's parts are its one
	 * family) */
	size_t peer_families = 0;
	for (size_t i = 0; i < pe.nfams; i++) {
		const struct expo_family *f = &pe.fams[i];
		if (is_client_family(f->name, f->nlen) || is_part(&pe, f->name, f->nlen) || !family_series(&pe, f))
			continue;
		peer_families++;
		size_t r = 0;
		while (r < m->nrows && !slice_is_equal(m->rows[r].name, strlen(m->rows[r].name), f->name, f->nlen))
			r++;
		if (r == m->nrows)
			row_fail("%s: the peer's family %.*s is no row of %s", state, (int)f->nlen, f->name, peer->mapping);
	}
	size_t c[FID_COUNT] = { 0 };
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
			  rest, rest && !missing, family_series(&pe, pf));
		c[res.rows[i].fidelity]++;
	}
	printf("%s %s, %s%s: the peer printed %zu families; %zu rows: %zu exact, %zu approximate, %zu unavailable\n",
	       state, peer->mapping, rest ? "with slurmrestd" : "slurmctld alone",
	       missing ? " (no /associations answer in this state)" : "", peer_families, m->nrows, c[FID_EXACT],
	       c[FID_APPROXIMATE], c[FID_UNAVAILABLE]);
	expo_free(&served);
	free(body);
	render_result_free(&res);
	expo_free(&pe);
	free(peer_text);
	for (int ep = 0; ep < SRC_COUNT; ep++)
		payload_unref(p[ep]);
	mapping_free(m);
}

/* The peer against itself: its outputs of several scrapes of one unchanged cluster
 * (REPEAT_DIR/<run>/, capture.sh run again and again on one state, nothing changed between the runs;
 * each run a fresh peer scraped once, as in a state). A family the peer prints the same in every run
 * (each value agreeing as value_agrees says, with the note of the row's first form) is one it
 * reproduces; one it does not cannot be equal between two readers either, unless they read at the same
 * instant. The rows the peer does not reproduce must be exactly those whose first form's note says why:
 * "Timings are not compared:", "Read at another instant:" or "Moves between scrapes:" (an exact row
 * whose figure slurmctld changes on its own clock: equal to the peer's read at the same instant, not to
 * a read at another); a note saying so of a family the peer reproduces fails too. */
#define REPEAT_DIR STATES_DIR "/_repeat"
#define MIN_REPEATS 3
#define MAX_REPEATS 8
#define MOVES_KEY "Moves between scrapes:"

struct repeat_stats {
	int printed; /* the peer printed a series of it in a run */
	int same;    /* printed, and the same in every run */
};
static struct repeat_stats repeats[MAX_ROWS];
static size_t nrepeats;

static const char *moving_key(const char *note)
{
	if (!note)
		return NULL;
	return strstr(note, TIMING_KEY) ? TIMING_KEY : strstr(note, INSTANT_KEY) ? INSTANT_KEY
	       : strstr(note, MOVES_KEY)                                     ? MOVES_KEY
									       : NULL;
}

/* Family name (with a histogram's or summary's parts) equal in runs a and b, values as note says. */
static int runs_agree(const struct expo *a, const struct expo *b, const char *name, const char *note)
{
	const struct expo_family *fa = expo_find(a, name, strlen(name)), *fb = expo_find(b, name, strlen(name));
	if (!measure(fb, fa, note).equal)
		return 0;
	for (size_t i = 0; (is_whole(fa) || is_whole(fb)) && i < 3; i++) {
		char part[512];
		snprintf(part, sizeof(part), "%s%s", name, part_suffixes[i]);
		if (!measure(expo_find(b, part, strlen(part)), expo_find(a, part, strlen(part)), note).equal)
			return 0;
	}
	return 1;
}

/* The series of family name whose value is not the same in every run: labels and each run's value. */
static void print_moves(const struct expo *e, size_t n, const char *name)
{
	const struct expo_family *f0 = expo_find(&e[0], name, strlen(name));
	for (size_t k = 0, shown = 0; f0 && k < f0->n && shown < 4; k++) {
		const struct expo_sample *s = &f0->samples[k];
		struct buf line;
		int moved = 0;
		buf_init(&line, 0);
		buf_printf(&line, "    %s", name);
		for (size_t l = 0; l < s->nlabels; l++)
			buf_printf(&line, "%s%.*s=\"%.*s\"", l ? "," : "{", (int)s->labels[l].nlen, s->labels[l].name,
				   (int)s->labels[l].vlen, s->labels[l].value);
		buf_printf(&line, "%s:", s->nlabels ? "}" : "");
		for (size_t r = 0; r < n; r++) {
			const struct expo_sample *o = find_series(expo_find(&e[r], name, strlen(name)), s->labels, s->nlabels);
			moved |= !o || o->value != s->value;
			if (o)
				buf_printf(&line, " %.17g", o->value);
			else
				buf_puts(&line, " (none)");
		}
		if (moved)
			printf("%.*s\n", (int)line.len, line.data), shown++;
		buf_free(&line);
	}
}

/* One row against the peer's runs: printed, reproduced, and whether its note says what the runs show. */
static void repeat_row(const struct row *row, size_t ri, const struct expo *e, size_t n)
{
	const char *note = row->forms[0].note, *says = moving_key(note);
	int printed = 0, same = 1, bit = 0;
	for (size_t r = 0; r < n; r++)
		printed |= family_series(&e[r], expo_find(&e[r], row->name, strlen(row->name))) > 0;
	for (size_t r = 1; r < n; r++) {
		same &= runs_agree(&e[0], &e[r], row->name, note);
		bit |= !runs_agree(&e[0], &e[r], row->name, NULL);
	}
	repeats[ri] = (struct repeat_stats){ printed, printed && same };
	if (!printed)
		return;
	if (same && says)
		row_fail("repeated scrapes: row %s: its note says \"%s\", but the peer printed the same series in each of its "
			 "%zu scrapes of one unchanged cluster", row->name, says, n);
	else if (!same && !says)
		row_fail("repeated scrapes: row %s (%s): the peer itself printed other series in its %zu scrapes of one unchanged "
			 "cluster, and its note says neither \"" TIMING_KEY "\", \"" INSTANT_KEY "\" nor \"" MOVES_KEY "\"",
			 row->name, fidelity_name(row->forms[0].fidelity), n);
	if (!same)
		printf("  repeated scrapes: %s moves (%s), run by run:\n", row->name, says ? says : "its note does not say so");
	else if (bit)
		printf("  repeated scrapes: %s the same but for the last bit of a sum (its note says so)\n", row->name);
	if (!same)
		print_moves(e, n, row->name);
}

/* The runs of REPEAT_DIR holding the peer's output, each checked: every family the peer printed is a row,
 * and each row's moves are the ones its note states (repeat_row). */
static void check_repeats(const struct peer *peer, const struct mapping *m)
{
	struct dirent **ents;
	int n = scandir(REPEAT_DIR, &ents, NULL, alphasort);
	char *text[MAX_REPEATS];
	struct expo e[MAX_REPEATS];
	size_t k = 0;
	assert_true(n > 0);
	for (int i = 0; i < n; i++) {
		char path[600];
		struct stat st;
		size_t len;
		snprintf(path, sizeof(path), REPEAT_DIR "/%s/%s", ents[i]->d_name, peer->output);
		if (ents[i]->d_name[0] != '.' && stat(path, &st) == 0 && S_ISREG(st.st_mode)) {
			assert_true(k < MAX_REPEATS);
			text[k] = tu_slurp(path, &len);
			assert_non_null(text[k]);
			expo_init(&e[k]);
			assert_int_equal(expo_parse(&e[k], text[k], len, EXPO_STRICT), 0);
			for (size_t f = 0; f < e[k].nfams; f++) {
				const struct expo_family *fam = &e[k].fams[f];
				char name[512];
				snprintf(name, sizeof(name), "%.*s", (int)fam->nlen, fam->name);
				if (!is_client_family(fam->name, fam->nlen) && !is_part(&e[k], fam->name, fam->nlen) &&
				    family_series(&e[k], fam) && mapping_row_index(m, name) < 0)
					row_fail("repeated scrapes, %s: the peer's family %.*s is no row", ents[i]->d_name, (int)fam->nlen,
						 fam->name);
			}
			k++;
		}
		free(ents[i]);
	}
	free(ents);
	assert_true(k >= MIN_REPEATS);
	nrepeats = k;
	for (size_t r = 0; r < m->nrows && r < MAX_ROWS; r++)
		repeat_row(&m->rows[r], r, e, k);
	for (size_t i = 0; i < k; i++) {
		expo_free(&e[i]);
		free(text[i]);
	}
}

/* The figures of one schema over its states, with slurmrestd's answers (rest 1) or without: the
 * families the peer printed (on any state), those equal series for series on every state, the
 * approximate ones with their worst difference (and whether their label sets at least were the
 * peer's on every state), the unavailable ones; and how that stands against the bar (90%
 * equal), which is printed, not held: a timing or a figure read at another instant is never equal. */
static void summary(const struct mapping *m, int rest, size_t nstates)
{
	const char *stem = strrchr(m->path, '/') ? strrchr(m->path, '/') + 1 : m->path;
	size_t n = 0, eq = 0, eq_approx = 0, approx = 0, sets = 0, unavail = 0, silent = 0;
	for (size_t r = 0; r < m->nrows; r++) {
		const struct row_stats *st = &stats[rest][r];
		if (!st->printed) {
			silent++;
			continue;
		}
		n++;
		if (st->fid == FID_UNAVAILABLE)
			unavail++;
		else if (!st->differs)
			eq++, eq_approx += st->fid == FID_APPROXIMATE;
		else
			approx++, sets += !st->sets_differ;
	}
	printf("SUMMARY %s, %s, %zu states: the peer printed %zu families: %zu equal series for series on every state "
	       "(%zu of them approximate rows that answered the same), %zu approximate (%zu of them with the peer's label "
	       "sets on every state), %zu unavailable: %.1f%% equal (%s 90%%); %zu rows the peer printed nothing of\n", stem,
	       rest ? "with slurmrestd" : "slurmctld alone", nstates, n, eq, eq_approx, approx, sets, unavail,
	       n ? 100.0 * (double)eq / (double)n : 0, eq * 10 >= n * 9 ? "at least" : "under", silent);
	/* the second figure: of the families the peer reproduces across its own scrapes of one unchanged
	 * cluster (check_repeats), those equal series for series on every state */
	size_t printed = 0, same = 0, same_eq = 0;
	for (size_t r = 0; r < m->nrows && r < MAX_ROWS; r++) {
		const struct row_stats *st = &stats[rest][r];
		printed += repeats[r].printed;
		same += repeats[r].same;
		same_eq += repeats[r].same && st->printed && st->fid != FID_UNAVAILABLE && !st->differs;
	}
	printf("SELF %s, %s: the peer printed %zu families in its %zu scrapes of one unchanged cluster, %zu the same in "
	       "every scrape; equal where the peer agrees with itself: %zu of %zu (%.1f%%)\n", stem,
	       rest ? "with slurmrestd" : "slurmctld alone", printed, nrepeats, same, same_eq, same,
	       same ? 100.0 * (double)same_eq / (double)same : 0);
	for (size_t r = 0; r < m->nrows && r < MAX_ROWS; r++) {
		const struct row_stats *st = &stats[rest][r];
		if (rest && repeats[r].same && !(st->printed && st->fid != FID_UNAVAILABLE && !st->differs))
			printf("  not equal though the peer agrees with itself: %s (%s)\n", m->rows[r].name,
			       !st->printed ? "printed on no state" : st->fid == FID_UNAVAILABLE ? "unavailable" : "approximate");
	}
	for (size_t r = 0; r < m->nrows; r++) {
		const struct row_stats *st = &stats[rest][r];
		if (st->printed && st->fid != FID_UNAVAILABLE && st->differs)
			printf("  approximate %s: worst difference %g (relative %.3g)%s%s%s\n", m->rows[r].name, st->abs, st->rel,
			       st->sets_differ ? "" : ", the peer's label sets", *st->how ? ", " : "", st->how);
		else if (st->printed && st->fid == FID_UNAVAILABLE)
			printf("  unavailable %s\n", m->rows[r].name);
	}
}

static void check_peer(const struct peer *peer)
{
	char states[MAX_STATES][128];
	size_t nstates = peer_states(peer, states);
	failures = 0;
	memset(stats, 0, sizeof(stats));
	memset(repeats, 0, sizeof(repeats));
	for (size_t r = 0; r < MAX_ROWS; r++)
		for (size_t f = 0; f < MAX_FORMS; f++)
			worst_seen[r][f] = -1;
	for (size_t s = 0; s < nstates; s++)
		for (int rest = 1; rest >= 0; rest--)
			check_peer_state(peer, states[s], rest);
	/* an approximate form's note states the largest difference over all states, not a guess above it */
	struct buf msg;
	buf_init(&msg, 0);
	struct mapping *m = mapping_load(peer->mapping, &msg);
	assert_non_null(m);
	buf_free(&msg);
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
	check_repeats(peer, m);
	summary(m, 0, nstates);
	summary(m, 1, nstates);
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
