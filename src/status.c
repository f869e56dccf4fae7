/* status.c: see status.h. */
#include "status.h"
#include "buf.h"
#include "status_html.h"
#include "probe.h"
#include "native.h"
#include "loadview.h"
#include "nodeview.h"
#include "catalog.h"
#include "render.h"
#include "scrape.h"

#include <math.h>

#include <stdio.h>
#include <string.h>
#include <time.h>

static const char page_head[] =
	"<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
	"<title>slurm-exporter-shim status</title>\n<style>\n"
	"body{font-family:sans-serif;margin:1.5em;color:#222;max-width:75em}\n"
	"h1{font-size:1.4em}h2{font-size:1.1em;margin-top:1.5em}\n"
	"table{border-collapse:collapse;margin:.4em 0}\n"
	"th,td{border:1px solid #ccc;padding:.25em .6em;text-align:left;vertical-align:top}\n"
	"th{background:#f2f2f2}td.n{text-align:right;font-variant-numeric:tabular-nums}\n"
	".up{color:#070;font-weight:bold}.down{color:#b00;font-weight:bold}.off{color:#777}.wrap{color:#a50}\n"
	".slow{color:#a60;font-weight:bold}\n"
	".banner{border:2px solid #a60;background:#fff6e0;padding:.5em .8em}\n"
	"code,.err,.fam{font-family:monospace,monospace;font-size:.95em}.err{word-break:break-all}\n"
	"</style></head><body>\n";

static void esc(struct buf *out, const char *s)
{
	status_html_escape(out, s, strlen(s));
}

static void put_time(struct buf *out, double unix_time)
{
	char t[64];
	time_t tt = (time_t)unix_time;
	struct tm tm;
	gmtime_r(&tt, &tm);
	strftime(t, sizeof(t), "%Y-%m-%d %H:%M:%S UTC", &tm);
	buf_puts(out, t);
}

/* How old source id's answer is now (-1: none). */
static double source_age(const struct scraper_status *st, int id)
{
	double at = st->res->src[id].at;
	return at > 0 ? st->now - at : -1;
}

/* One row of the sources table. */
static void source_row(struct buf *out, int id, const struct scraper_status *st)
{
	const struct source *src = &sources[id];
	const struct render_source *o = &st->res->src[id];
	double age = source_age(st, id);
	buf_puts(out, "<tr><td>");
	esc(out, src->name);
	buf_puts(out, "</td><td>");
	esc(out, upstreams[src->upstream].name);
	buf_puts(out, "</td>");
	if (!((st->configured >> id) & 1)) {
		buf_puts(out, "<td class=\"off\">switched off</td><td colspan=\"6\"></td></tr>\n");
		return;
	}
	if (!o->given) {
		buf_puts(out, "<td class=\"off\">not read by the mapping</td><td colspan=\"6\"></td></tr>\n");
		return;
	}
	buf_printf(out, "<td class=\"%s\">%s</td>", o->up ? "up" : "down", o->up ? "up" : "down");
	if (age >= 0)
		buf_printf(out, "<td class=\"n\">%.1f s</td>", age);
	else
		buf_puts(out, "<td class=\"n\">-</td>");
	buf_printf(out, "<td class=\"n\">%ld</td><td class=\"n%s\">%.3f s%s</td><td class=\"n\">%zu</td><td class=\"n\">%zu</td>",
		   o->http_status, o->slow ? " slow" : "", o->seconds, o->slow ? " (slow)" : "", o->len, o->parse_errors);
	buf_puts(out, "<td class=\"err\">");
	esc(out, o->reason);
	buf_puts(out, "</td></tr>\n");
}

/* A cost-scheduled source (slurmrestd's documents): what its fetches cost, the interval and age that
 * gives, and its back-off (/jobs) or failures (docs/operations.md, "What /jobs costs slurmrestd"). */
static void cost_line(struct buf *out, int id, const struct scraper_status *st)
{
	const struct render_counts *o = &st->res->src[id].n;
	double age = source_age(st, id);
	buf_printf(out, "<p class=\"%s\">", o->failures ? "slow" : "up");
	esc(out, sources[id].name);
	if (o->cost > 0)
		buf_printf(out, ": the last usable fetch took %.1f s, so it is fetched again %.0f s after the last one ended",
			   o->cost, o->interval);
	else
		buf_printf(out, ": no usable fetch yet; the next one %.0f s after the last one ended", o->interval);
	if (age >= 0)
		buf_printf(out, "; the answer served is %.0f s old", age);
	buf_printf(out, "; the next fetch may take %.0f s.", o->timeout);
	if (o->failures) /* only the job-walking class backs off (--slurmrestd.jobs.max-backoff) */
		buf_printf(out, " %s after %u failed fetch%s in a row: the rows that read it are served from their "
			   "native forms until a fetch is usable.", sources[id].walks_jobs ? "<b>Backing off</b>" : "<b>Failing</b>",
			   o->failures, o->failures == 1 ? "" : "es");
	buf_puts(out, "</p>\n");
}

static void write_sources(struct buf *out, const struct scraper_status *st)
{
	buf_puts(out, "<h2>Sources</h2>\n<table>\n<tr><th>Endpoint</th><th>Upstream</th><th>State</th><th>Age</th>"
		      "<th>HTTP status</th><th>Fetch</th><th>Bytes</th><th>Parse errors</th><th>Last error</th></tr>\n");
	for (int id = 0; id < SRC_COUNT; id++) {
		if (!((st->configured >> id) & 1) && upstreams[sources[id].upstream].optional)
			continue; /* slurmrestd without --slurmrestd.url: nothing to say */
		source_row(out, id, st);
	}
	buf_puts(out, "</table>\n");
	for (int id = 0; id < SRC_COUNT; id++)
		if (st->res->src[id].given && st->res->src[id].n.costed)
			cost_line(out, id, st);
	for (int id = 0; id < SRC_COUNT; id++) {
		const struct render_source *o = &st->res->src[id];
		if (!o->given || !o->slow)
			continue;
		buf_puts(out, "<p class=\"slow\">Slow: ");
		esc(out, sources[id].name);
		buf_printf(out, " took %.3f s (over --log.slow-fetch %g s; %lu slow fetches since start). Every fetch of it "
			   "is a load on ", o->seconds, st->res->slow_fetch, o->n.slow);
		esc(out, upstreams[sources[id].upstream].name);
		buf_puts(out, ": see how often it is fetched in docs/operations.md, \"Seeing the load\".</p>\n");
	}
}

/* Each upstream with a token file: whether its token was accepted (docs/operations.md, "Tokens"). */
static void write_tokens(struct buf *out, const struct scraper_status *st)
{
	for (int u = 0; u < UPSTREAM_COUNT; u++) {
		const struct render_token *t = &st->res->token[u];
		int state = t->state;
		if (state == TOKEN_NOT_CONFIGURED)
			continue;
		buf_printf(out, "<p class=\"%s\">Token of <code>%s.auth.token-file</code>: ", state == TOKEN_SENT ? "up" : "down",
			   upstreams[u].flag);
		if (state == TOKEN_SENT) {
			buf_puts(out, "accepted.</p>\n");
			continue;
		}
		if (state == TOKEN_UNREADABLE) {
			buf_puts(out, "the file could not be read, so no token was sent (see the sources' errors).</p>\n");
			continue;
		}
		esc(out, upstreams[u].name);
		buf_printf(out, " refused it (HTTP %ld from ", t->http_status);
		esc(out, sources[t->source].name);
		buf_puts(out, "): it has expired or is not accepted; renew it (<code>scontrol token</code>).</p>\n");
	}
}

/* Several slurmctld controllers: each one's role as last seen (docs/operations.md, High availability). */
static void write_controllers(struct buf *out, const struct scraper_status *st)
{
	if (st->res->nctl < 2)
		return;
	buf_puts(out, "<h2>Controllers</h2>\n<table>\n<tr><th>URL</th><th>Role</th><th>Why passed over</th></tr>\n");
	for (size_t i = 0; i < st->res->nctl; i++) {
		const struct controller_view *v = &st->res->ctl[i];
		buf_puts(out, "<tr><td><code>");
		esc(out, v->url);
		buf_printf(out, "</code>%s</td><td class=\"%s\">%s</td><td class=\"err\">", v->current ? " (read now)" : "",
			   v->role == ROLE_PRIMARY ? "up" : v->role == ROLE_DOWN ? "down" : "off",
			   controller_role_name(v->role));
		esc(out, v->why);
		buf_puts(out, "</td></tr>\n");
	}
	buf_puts(out, "</table>\n");
}

/* bad: a count above 0 is a problem, shown in red */
static void count_row(struct buf *out, const char *what, size_t n, int bad)
{
	buf_puts(out, "<tr><td>");
	esc(out, what);
	buf_printf(out, "</td><td class=\"n%s\">%zu</td></tr>\n", bad && n ? " down" : "", n);
}

/* The families a list shows: those left out (render_left_out), or those served approximate because
 * their counters may have wrapped (render_row_has_wrap). */
enum family_kind { FAM_LEFT_OUT, FAM_WRAPPED };

/* Whether row i of res is in the list of kind k, and if so why, into why. */
static int family_is_listed(const struct render_result *res, size_t i, enum family_kind k, char *why, size_t whysz)
{
	const struct render_row *o = &res->rows[i];
	if (k == FAM_WRAPPED) {
		if (!render_row_has_wrap(o))
			return 0;
		render_wrap_why(&res->m->rows[i], o, 1, why, whysz);
		return 1;
	}
	const char *left = render_left_out(o);
	if (!left)
		return 0;
	snprintf(why, whysz, "%s%s%s", left, o->err[0] && !o->output_full ? ": " : "", o->output_full ? "" : o->err);
	return 1;
}

/* A list of families of kind k with why (n of them, the first max listed), the rest counted and
 * pointed to the self metric that names them all. */
static void family_list(struct buf *out, const struct render_result *res, enum family_kind k, size_t n, size_t max,
			const char *metric)
{
	size_t listed = 0;
	buf_puts(out, "<table>\n<tr><th>Family</th><th>Reason</th></tr>\n");
	for (size_t i = 0; i < res->nrows && listed < max; i++) {
		char why[200];
		if (!family_is_listed(res, i, k, why, sizeof(why)))
			continue;
		listed++;
		buf_puts(out, "<tr><td class=\"fam\">");
		esc(out, res->m->rows[i].name);
		buf_puts(out, "</td><td class=\"err\">");
		esc(out, why);
		buf_puts(out, "</td></tr>\n");
	}
	buf_puts(out, "</table>\n");
	if (n > max) {
		buf_printf(out, "<p>and %zu more (see ", n - max);
		esc(out, metric);
		buf_puts(out, ").</p>\n");
	}
}

/* The rows of res by outcome, output_full apart, and the served ones by fidelity and upstream. */
struct row_counts {
	size_t rows[ROW_STATUS_COUNT], output_full, nleft, nwrapped;
	size_t fidelity[FID_COUNT][UPSTREAM_COUNT];
};

static void count_rows(const struct render_result *res, struct row_counts *c)
{
	memset(c, 0, sizeof(*c));
	for (size_t i = 0; i < res->nrows; i++) {
		const struct render_row *o = &res->rows[i];
		c->rows[o->status]++;
		c->output_full += (size_t)o->output_full;
		if (o->status == ROW_OK && !o->output_full)
			c->fidelity[o->fidelity][row_upstream(&res->m->rows[i], o->form)]++;
		c->nwrapped += (size_t)render_row_has_wrap(o);
		c->nleft += render_left_out(o) != NULL;
	}
}

/* A heading, with ": schema STEM" when the page shows several schemas (stem not NULL). */
static void heading(struct buf *out, const char *title, const char *stem)
{
	buf_puts(out, "<h2");
	if (stem && !strcmp(title, "Rows")) {
		buf_puts(out, " id=\"rows-");
		esc(out, stem);
		buf_puts(out, "\"");
	}
	buf_puts(out, ">");
	buf_puts(out, title);
	if (stem) {
		buf_puts(out, ": schema <code>");
		esc(out, stem);
		buf_puts(out, "</code>");
	}
	buf_puts(out, "</h2>\n");
}

/* Rows by outcome and, the served ones, by fidelity and upstream; then the families served
 * approximate because their counters may have wrapped, and the families left out (at most max of
 * each listed). res: a schema's last answer's record; stem: that schema's name when the page shows
 * several (NULL: one). */
static void write_rows(struct buf *out, const struct render_result *res, const char *stem, size_t max)
{
	struct row_counts c;
	heading(out, "Rows", stem);
	if (!res) {
		buf_puts(out, "<p class=\"off\">Not scraped yet: its rows are counted once its metrics path is.</p>\n");
		return;
	}
	if (res->status != 200) {
		buf_printf(out, "<p class=\"down\">No source the mapping needs answered usably: no row was evaluated "
			   "(%s answers 503).</p>\n", stem ? "its metrics path" : "/metrics");
		return;
	}
	count_rows(res, &c);
	buf_puts(out, "<table>\n<tr><th>Outcome</th><th>Rows</th></tr>\n");
	count_row(out, "served", c.rows[ROW_OK] - c.output_full, 0);
	count_row(out, "left out: input down", c.rows[ROW_INPUT_DOWN], 1);
	count_row(out, "left out: input missing", c.rows[ROW_INPUT_MISSING], 1);
	count_row(out, "left out: no input", c.rows[ROW_NO_INPUT], 1);
	count_row(out, "left out: error", c.rows[ROW_ERROR], 1);
	count_row(out, "left out: output full", c.output_full, 1);
	count_row(out, "disabled (flag not set)", c.rows[ROW_DISABLED], 0);
	count_row(out, "unavailable (no source)", c.rows[ROW_UNAVAILABLE], 0);
	buf_puts(out, "</table>\n<table>\n<tr><th>Served rows by fidelity</th><th>native (slurmctld)</th>"
		      "<th>slurmrestd form</th></tr>\n");
	for (int f = FID_EXACT; f <= FID_APPROXIMATE; f++)
		buf_printf(out, "<tr><td>%s</td><td class=\"n\">%zu</td><td class=\"n\">%zu</td></tr>\n", fidelity_name((enum fidelity)f),
			   c.fidelity[f][UPSTREAM_SLURMCTLD], c.fidelity[f][UPSTREAM_SLURMRESTD]);
	buf_puts(out, "</table>\n");
	if (c.nwrapped) {
		heading(out, "Served approximate: counters that may have wrapped", stem);
		buf_puts(out, "<p>The native counters these "
			      "rows read wrap (slurmctld keeps them in 16 bits, modulo 65,536): at this cluster's size "
			      "their values can be wrong by a multiple of that. A row's slurmrestd form, where it has "
			      "one, is exact and used while slurmrestd answers (<code>--slurmrestd.url</code>).</p>\n");
		family_list(out, res, FAM_WRAPPED, c.nwrapped, max, "slurm_exporter_shim_row_fidelity{reason!=\"\"}");
	}
	heading(out, "Families left out", stem);
	if (!c.nleft)
		buf_puts(out, "<p>None.</p>\n");
	else
		family_list(out, res, FAM_LEFT_OUT, c.nleft, max, "slurm_exporter_shim_family_left_out");
}

/* slurmctld's answers against the table's native catalog (catalog.h): the families the table reads
 * that slurmctld no longer serves, and those it serves that no validated release lists. */
static void write_catalog(struct buf *out, const struct scraper_status *st)
{
	static const char *const what[] = { "no longer served (the table reads it)", "in no validated catalog" };
	const struct catalog_diff *d = &st->res->catalog;
	buf_puts(out, "<h2>Native catalog</h2>\n");
	if (!st->res->m->nreleases) {
		buf_puts(out, "<p>The mapping table records no validated catalog (<code>validated_on</code>): nothing "
			      "compared.</p>\n");
		return;
	}
	if (!d->compared) {
		buf_puts(out, "<p>No slurmctld answer naming a family was read by the last scrape: nothing compared.</p>\n");
		return;
	}
	if (!catalog_diff_has_any(d)) {
		buf_puts(out, "<p class=\"up\">slurmctld's answers name the families of the validated catalog of Slurm ");
		esc(out, d->release);
		buf_puts(out, ": none the table reads is missing, none is unknown.</p>\n");
		return;
	}
	buf_printf(out, "<p class=\"down\">slurmctld changed: %zu families the table reads are no longer served, %zu "
			"served are in no validated catalog (the closest: Slurm ", d->n[CATALOG_MISSING], d->n[CATALOG_UNKNOWN]);
	esc(out, d->release);
	buf_puts(out, "). See docs/operations.md, \"Upgrading Slurm\".</p>\n<table id=\"catalog\">\n<tr><th>Endpoint</th>"
		      "<th>Family</th><th>What</th></tr>\n");
	for (int k = 0; k < CATALOG_KIND_COUNT; k++)
		for (size_t i = 0; i < d->n[k] && i < CATALOG_LISTED_MAX; i++) {
			buf_printf(out, "<tr><td>%s</td><td class=\"fam\">", sources[d->fam[k][i].src].name);
			esc(out, d->fam[k][i].name);
			buf_printf(out, "</td><td class=\"err\">%s</td></tr>\n", what[k]);
		}
	buf_puts(out, "</table>\n");
	for (int k = 0; k < CATALOG_KIND_COUNT; k++)
		if (d->n[k] > CATALOG_LISTED_MAX)
			buf_printf(out, "<p>and %zu more %s (see slurm_exporter_shim_native_catalog_differences).</p>\n",
				   d->n[k] - CATALOG_LISTED_MAX, catalog_kind_name((enum catalog_kind)k));
}

/* ---- the nodes, partitions and queue (nodeview.h) ---- */

static void put_num(struct buf *out, double v)
{
	if (isnan(v))
		buf_puts(out, "-");
	else
		buf_printf(out, "%.15g", v);
}

/* A number cell, marked when it is one of slurmctld's 16-bit sums that may have wrapped. */
static void counter_cell(struct buf *out, double v, int may_wrap)
{
	buf_puts(out, may_wrap ? "<td class=\"n wrap\">" : "<td class=\"n\">");
	put_num(out, v);
	buf_puts(out, may_wrap ? "*</td>" : "</td>");
}

static void num_cell(struct buf *out, double v)
{
	counter_cell(out, v, 0);
}

/* sinfo -s's NODES(A/I/O/T) */
static void put_aiot(struct buf *out, double a, double i, double o)
{
	if (isnan(a)) {
		buf_puts(out, "-");
		return;
	}
	buf_printf(out, "%.15g/%.15g/%.15g/%.15g", a, i, o, a + i + o);
}

/* Without slurmrestd's /nodes the legacy per-node status labels are guessed: say so, and the fix. */
static void write_banner(struct buf *out, const struct scraper_status *st, const struct nodeview *v)
{
	if (v->source != NV_SRC_GUESS)
		return;
	buf_printf(out, "<p class=\"banner\" id=\"node-states-guessed\"><b>Per-node states are guessed.</b> %s, so "
		   "the per-node <code>status</code> label of the legacy families is guessed from CPU counts: a down, "
		   "drained, draining, failed or maint node reads <code>idle</code>, <code>allocated</code> or "
		   "<code>mixed</code>, and a panel or alert that selects by <code>status</code> misses it. The node "
		   "counts below are slurmctld's own (exact). Fix: add slurmrestd, <code>--slurmrestd.url</code> "
		   "(the package's <code>/usr/share/slurm-exporter-shim/enable-slurmrestd</code> sets it up); "
		   "<code>" NODEVIEW_SOURCE_METRIC "{source=\"slurmctld-guess\"}</code> is 1 meanwhile.</p>\n",
		   (st->configured >> SRC_REST_NODES) & 1 ? "slurmrestd's /nodes was not usable this scrape"
						      : "slurmrestd is not configured");
}

static void write_not_ok(struct buf *out, const struct nodeview *v)
{
	buf_printf(out, "<h3>Nodes not OK: %zu</h3>\n", v->nbad);
	if (!v->nbad) {
		buf_puts(out, "<p>None: every node is idle, allocated, mixed, completing or reserved.</p>\n");
		return;
	}
	buf_puts(out, "<table id=\"not-ok\">\n<tr><th>Node</th><th>State</th><th>Reason</th><th>Set by</th>"
		      "<th>Since</th></tr>\n");
	for (size_t i = 0; i < v->nbad && i < NODEVIEW_BAD_MAX; i++) {
		const struct nodeview_node *b = &v->bad[i];
		buf_puts(out, "<tr><td class=\"fam\">");
		esc(out, b->node);
		buf_puts(out, "</td><td class=\"down\">");
		esc(out, b->state);
		buf_puts(out, "</td><td class=\"err\">");
		esc(out, b->reason);
		buf_puts(out, "</td><td>");
		esc(out, b->user);
		buf_puts(out, "</td><td>");
		if (b->since > 0)
			put_time(out, b->since);
		buf_puts(out, "</td></tr>\n");
	}
	buf_puts(out, "</table>\n");
	if (v->nbad > NODEVIEW_BAD_MAX)
		buf_printf(out, "<p>and %zu more (the first %d are listed; <code>sinfo -R</code> lists them all).</p>\n",
			   v->nbad - NODEVIEW_BAD_MAX, NODEVIEW_BAD_MAX);
}

/* A paragraph under a table whose slurmctld counters (16-bit) may have wrapped. */
#define WRAP_NOTE(id, what, total) "<p class=\"wrap\" id=\"" id "\">* slurmctld's " what \
	" are 16-bit and wrap at 65,536: with this many " total " they may have (read them modulo 65,536; " \
	"slurmrestd's /nodes counts them whole).</p>\n"

static void write_nodes(struct buf *out, const struct nodeview *v)
{
	buf_puts(out, "<h2>Nodes</h2>\n");
	if (v->source == NV_SRC_NONE) {
		buf_puts(out, "<p class=\"off\">No node source was read or usable this scrape (see Sources).</p>\n");
		return;
	}
	buf_puts(out, "<p>Nodes: ");
	put_num(out, v->nodes);
	if (v->source == NV_SRC_SLURMRESTD) {
		buf_puts(out, ", allocated/idle/other/total as <code>sinfo -s</code> sums them: ");
		put_aiot(out, v->a, v->i, v->o);
		buf_puts(out, ". States from slurmrestd's /nodes, as sinfo prints them.</p>\n");
	} else {
		buf_puts(out, ". slurmctld's node counters (/metrics/nodes): a node counts in its base state and in "
			      "each flag it has (drained, not responding...), so they overlap.</p>\n");
	}
	buf_printf(out, "<table id=\"node-states\">\n<tr><th>%s</th><th>Nodes</th></tr>\n",
		   v->source == NV_SRC_SLURMRESTD ? "State" : "Counter");
	for (size_t i = 0; i < v->nstates; i++) {
		buf_printf(out, "<tr><td%s>", v->source == NV_SRC_SLURMRESTD && !nodeview_state_is_ok(v->state[i].name)
						   ? " class=\"down\"" : "");
		esc(out, v->state[i].name);
		buf_puts(out, "</td>");
		counter_cell(out, v->state[i].n, v->source == NV_SRC_GUESS && v->counts_may_wrap);
		buf_puts(out, "</tr>\n");
	}
	if (v->states_more > 0) {
		buf_puts(out, "<tr><td>other states</td>");
		num_cell(out, v->states_more);
		buf_puts(out, "</tr>\n");
	}
	buf_puts(out, "</table>\n");
	if (v->source == NV_SRC_GUESS && v->counts_may_wrap)
		buf_puts(out, WRAP_NOTE("wrap-node-counters", "node counters", "nodes"));
	if (v->source == NV_SRC_SLURMRESTD)
		write_not_ok(out, v);
}

static void write_partitions(struct buf *out, const struct nodeview *v)
{
	if (!v->nparts)
		return;
	int wraps = 0;
	buf_puts(out, "<h2>Partitions</h2>\n<table id=\"partitions\">\n<tr><th>Partition</th><th>Nodes</th>"
		      "<th>Nodes A/I/O/T</th><th>CPUs</th><th>CPUs allocated</th><th>CPUs idle</th>"
		      "<th>Jobs pending</th><th>Jobs running</th></tr>\n");
	for (size_t i = 0; i < v->nparts; i++) {
		const struct nodeview_part *p = &v->part[i];
		buf_puts(out, "<tr><td>");
		esc(out, p->name);
		buf_puts(out, "</td>");
		counter_cell(out, p->nodes, v->counts_may_wrap);
		buf_puts(out, "<td class=\"n\">");
		put_aiot(out, p->a, p->i, p->o);
		buf_puts(out, "</td>");
		num_cell(out, p->cpus);
		counter_cell(out, p->cpus_alloc, p->cpus_may_wrap);
		counter_cell(out, p->cpus_idle, p->cpus_may_wrap);
		wraps |= p->cpus_may_wrap;
		num_cell(out, p->jobs_pending);
		num_cell(out, p->jobs_running);
		buf_puts(out, "</tr>\n");
	}
	buf_puts(out, "</table>\n");
	if (v->parts_more)
		buf_printf(out, "<p>and %zu more partitions.</p>\n", v->parts_more);
	if (v->counts_may_wrap)
		buf_puts(out, WRAP_NOTE("wrap-partition-nodes", "partition node counts", "nodes"));
	if (wraps)
		buf_puts(out, WRAP_NOTE("wrap-partition-cpus", "partition CPU sums (allocated, idle)", "CPUs in a partition"));
}

static void write_queue(struct buf *out, const struct nodeview *v)
{
	if (!v->has_queue)
		return;
	buf_puts(out, "<h2>Queue</h2>\n<table id=\"queue\">\n<tr>");
	for (int q = 0; q < NV_Q_COUNT; q++)
		buf_printf(out, "<th>%s</th>", nodeview_queue_names[q]);
	buf_puts(out, "</tr>\n<tr>");
	for (int q = 0; q < NV_Q_COUNT; q++)
		num_cell(out, v->queue[q]);
	buf_puts(out, "</tr>\n</table>\n");
}

static void write_mapping(struct buf *out, const struct status_page_info *info, const struct scraper_status *st)
{
	buf_puts(out, "<h2>Mapping</h2>\n<p>File: <code>");
	esc(out, info->mapping_file ? info->mapping_file : "(none)");
	buf_printf(out, "</code><br>Last (re)load: <span class=\"%s\">%s</span> at ", st->reload_ok ? "up" : "down",
		   st->reload_ok ? "succeeded" : "failed (the previous table is still in use)");
	put_time(out, st->reload_time);
	buf_puts(out, "</p>\n");
}

static void metrics_link(struct buf *out, const char *path)
{
	buf_puts(out, "<a href=\"");
	esc(out, path);
	buf_puts(out, "\">");
	esc(out, path);
	buf_puts(out, "</a>");
}

/* The listeners that serve schema k at the metrics path, comma-separated ("-": none). */
static void schema_listeners(struct buf *out, const struct status_page_info *info, size_t k)
{
	size_t n = 0;
	for (size_t i = 0; i < info->nlisten; i++) {
		if ((info->listen_schema ? info->listen_schema[i] : (size_t)0) != k)
			continue;
		buf_puts(out, n++ ? ", <code>" : "<code>");
		esc(out, info->listen[i]);
		buf_puts(out, "</code>");
	}
	if (!info->nlisten && !k)
		buf_puts(out, "systemd's sockets");
	else if (!n)
		buf_puts(out, "-");
}

/* Schema k's last scrape: st for the first, info->schema_st[k] for another (NULL: none given). */
static const struct scraper_status *schema_status(const struct status_page_info *info,
						  const struct scraper_status *st, size_t k)
{
	if (!k)
		return st;
	return info->schema_st && k < info->nschemas ? info->schema_st[k] : NULL;
}

/* The schema whose last answer is the newest: the page's cluster view (nodes, partitions, queue,
 * sources...) is its record, whichever schema Prometheus scrapes. */
static size_t freshest(const struct status_page_info *info, const struct scraper_status *st)
{
	size_t best = 0;
	for (size_t k = 1; k < info->nschemas; k++) {
		const struct scraper_status *o = schema_status(info, st, k), *b = schema_status(info, st, best);
		if (o && o->res && (!b->res || o->age < b->age))
			best = k;
	}
	return best;
}

/* The age of schema k's last answer, or "never". */
static void last_scrape_cell(struct buf *out, const struct status_page_info *info, const struct scraper_status *st,
			     size_t k)
{
	const struct scraper_status *o = schema_status(info, st, k);
	if (o && o->res)
		buf_printf(out, "<td>%.1f s ago</td>", o->age);
	else
		buf_puts(out, "<td>never</td>");
}

/* Each schema served: its name and file, the paths and listeners serving it, its last scrape, its
 * rows by the best fidelity their forms promise (mapping_fidelity_counts). */
static void write_schemas(struct buf *out, const struct status_page_info *info, const struct scraper_status *st)
{
	size_t n = mapping_schema_count(st->schemas);
	if (!n)
		return;
	buf_puts(out, "<h2>Schemas</h2>\n<table id=\"schemas\">\n<tr><th>Schema</th><th>File</th><th>Paths</th>"
		      "<th>Listeners</th><th>Last scrape</th><th>Rows</th><th>Exact</th><th>Approximate</th>"
		      "<th>Unavailable</th></tr>\n");
	for (size_t k = 0; k < n; k++) {
		const struct mapping *m = mapping_schema(st->schemas, k);
		const char *stem = k < info->nschemas ? info->schema_stem[k] : m->stem;
		size_t c[FID_COUNT];
		mapping_fidelity_counts(m, c);
		buf_puts(out, "<tr><td><code>");
		esc(out, stem[0] ? stem : "(unnamed)");
		buf_puts(out, "</code></td><td><code>");
		esc(out, m->path ? m->path : "");
		buf_puts(out, "</code></td><td>");
		if (!k)
			metrics_link(out, info->metrics_path);
		if (stem[0] && k < info->nschemas) {
			char path[MAPPING_STEM_MAX + 32];
			snprintf(path, sizeof(path), "/schemas/%s/metrics", stem);
			buf_puts(out, k ? "" : ", ");
			metrics_link(out, path);
		}
		buf_puts(out, "</td><td>");
		schema_listeners(out, info, k);
		buf_puts(out, "</td>");
		last_scrape_cell(out, info, st, k);
		buf_printf(out, "<td>%zu</td><td>%zu</td><td>%zu</td><td>%zu</td></tr>\n", m->nrows, c[FID_EXACT],
			   c[FID_APPROXIMATE], c[FID_UNAVAILABLE]);
	}
	buf_puts(out, "</table>\n<p>A row counts as exact, approximate or unavailable by the best of its forms "
		      "(a preferred form with the upstream it reads); which form each row was served with is below");
	if (n > 1 && info->schema_st)
		buf_puts(out, ", per schema, from its own last scrape. The nodes, partitions, queue and sources above "
			      "are the newest scrape's, whichever schema it was of");
	buf_puts(out, ".</p>\n");
}

/* Every schema's rows, each from its own last answer (several schemas: the first's families listed
 * up to STATUS_FAMILIES_MAX, the others' sharing STATUS_FAMILIES_OTHERS: the page stays bounded). */
static void write_all_rows(struct buf *out, const struct status_page_info *info, const struct scraper_status *st)
{
	size_t n = mapping_schema_count(st->schemas);
	if (n <= 1 || !info->schema_st || info->nschemas < n) {
		write_rows(out, st->res, NULL, STATUS_FAMILIES_MAX);
		return;
	}
	for (size_t k = 0; k < n; k++) {
		const struct scraper_status *o = schema_status(info, st, k);
		const char *stem = info->schema_stem[k];
		write_rows(out, o ? o->res : NULL, stem[0] ? stem : "(unnamed)",
			   k ? STATUS_FAMILIES_OTHERS / (n - 1) : STATUS_FAMILIES_MAX);
	}
}

/* The other clusters (--probe.targets-file): a link to each one's /probe?target=. This page is about
 * --slurmctld.url's cluster only; each target's own state is in its self metrics. */
static void write_probes(struct buf *out, const struct probe_set *ps)
{
	size_t n = probe_set_count(ps);
	if (!n)
		return;
	buf_puts(out, "<p>Other clusters (<code>--probe.targets-file</code>):");
	for (size_t i = 0; i < n; i++) {
		const char *name = probe_set_name(ps, i); /* [A-Za-z0-9_.-]: URL-safe, escaped all the same */
		buf_puts(out, i ? ", " : " ");
		buf_puts(out, "<a href=\"/probe?target=");
		esc(out, name);
		buf_puts(out, "\"><code>");
		esc(out, name);
		buf_puts(out, "</code></a>");
	}
	buf_puts(out, "</p>\n");
}

/* The last scrape's time and answer; with several schemas, whose scrape it was. */
static void write_last(struct buf *out, const struct status_page_info *info, const struct scraper_status *v, size_t k)
{
	buf_printf(out, "<p>Last scrape: %.1f s ago (at ", v->age);
	put_time(out, info->now - v->age);
	buf_puts(out, ")");
	if (info->schema_st && info->nschemas > 1) {
		buf_puts(out, ", of schema <code>");
		esc(out, info->schema_stem[k]);
		buf_puts(out, "</code>");
	}
	buf_printf(out, ", answered <span class=\"%s\">HTTP %d</span>.</p>\n", v->res->status == 200 ? "up" : "down",
		   v->res->status);
}

void status_page(struct buf *out, const struct status_page_info *info, const struct scraper_status *st)
{
	buf_puts(out, page_head);
	buf_puts(out, "<h1>slurm-exporter-shim ");
	esc(out, info->version);
	buf_puts(out, "</h1>\n<p>Legacy prometheus-slurm-exporter metrics, rebuilt from slurmctld's native metrics. "
		      "Metrics: ");
	metrics_link(out, info->metrics_path);
	for (int id = 0; info->native_passthrough && id < SRC_NATIVE_COUNT; id++) {
		char path[96];
		snprintf(path, sizeof(path), NATIVE_PATH_PREFIX "%s", sources[id].name);
		buf_puts(out, id ? ", " : ". slurmctld's own metrics, re-escaped: ");
		metrics_link(out, path);
	}
	buf_puts(out, "</p>\n");
	write_probes(out, info->probes);
	size_t k = freshest(info, st);
	const struct scraper_status *v = schema_status(info, st, k);
	if (!v->res) {
		write_mapping(out, info, st);
		write_schemas(out, info, st);
		buf_puts(out, "<p>No scrape has happened yet: this page shows the state of the last scrape and never "
			      "fetches by itself. Open ");
		metrics_link(out, info->metrics_path);
		buf_puts(out, " (or wait for Prometheus), then reload this page.</p>\n</body></html>\n");
		return;
	}
	write_last(out, info, v, k);
	static const struct nodeview none; /* a 503: no node source usable (NV_SRC_NONE) */
	const struct nodeview *nv = v->res->nodes ? v->res->nodes : &none;
	write_banner(out, v, nv);
	write_nodes(out, nv);
	loadview_page(out, &nv->load, source_age(v, SRC_REST_NODES));
	write_partitions(out, nv);
	write_queue(out, nv);
	write_sources(out, v);
	write_catalog(out, v);
	write_tokens(out, v);
	write_controllers(out, v);
	write_mapping(out, info, st);
	write_schemas(out, info, st);
	write_all_rows(out, info, st);
	buf_puts(out, "</body></html>\n");
}
