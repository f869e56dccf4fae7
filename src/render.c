/* render.c: see render.h. */
#include "render.h"
#include "log.h"
#include "nodeview.h"
#include "writer.h"
#include "xmalloc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *render_left_out(const struct render_row *r)
{
	return r->output_full ? "output_full" : row_status_is_left_out(r->status) ? row_status_name(r->status) : NULL;
}

int render_row_has_wrap(const struct render_row *o)
{
	return o->status == ROW_OK && !o->output_full && o->wrap != WRAP_NONE;
}

void render_wrap_why(const struct row *r, const struct render_row *o, int with_value, char *out, size_t outsz)
{
	const struct row_wrap *w = r->forms[o->form].wrap;
	if (o->wrap == WRAP_UNCHECKED)
		snprintf(out, outsz, "approximate: the counters it reads wrap at %.15g and its bound %s could not be read",
			 w->limit, w->bound_src);
	else if (with_value)
		snprintf(out, outsz, "approximate: %s is %.15g, at or over %.15g, where the counters it reads wrap",
			 w->bound_src, o->bound, w->limit);
	else
		snprintf(out, outsz, "approximate: %s reached %.15g, where the counters it reads wrap", w->bound_src, w->limit);
}

static double clock_of(const struct render_in *in)
{
	return in->clock ? in->clock() : 0;
}

/* The rows as they are evaluated (mapping_run): each written to out, what it gave kept (without
 * its series, which go with the row) in the result. */
struct rows_out {
	const struct render_in *in;
	struct buf *out;
	struct render_result *res;
	double last;                /* with time_rows: when the previous row was written */
};

static void write_row(void *ctx, size_t i, const struct row_result *r)
{
	struct rows_out *w = ctx;
	const struct row *row = &w->in->m->rows[i];
	struct render_row *o = &w->res->rows[i];
	double t0 = w->in->time_rows ? clock_of(w->in) : 0;
	o->status = r->status;
	o->form = r->form;
	o->fidelity = r->fidelity;
	o->wrap = r->wrap;
	o->bound = r->bound;
	o->nseries = r->v.n;
	o->repaired = r->repaired;
	snprintf(o->err, sizeof(o->err), "%s", r->err);
	if (r->status == ROW_OK) {
		/* a family with no series (no jobs) keeps its HELP/TYPE, so every legacy name the
		 * table serves is visible whatever the cluster state */
		size_t mark = buf_mark(w->out);
		if (write_family(w->out, row->name, row->help, row->type, &r->v) < 0) {
			o->output_full = 1;
		} else {
			o->off = mark;
			o->len = w->out->len - mark;
			w->res->repaired += r->repaired;
		}
	}
	if (w->in->time_rows) {
		double t1 = clock_of(w->in);
		w->res->eval_s += t0 - w->last;
		w->res->write_s += t1 - t0;
		w->last = t1;
	}
}

static void self_sample(struct buf *b, const char *name, const char *lname, const char *lvalue, double v)
{
	struct label l = { lname, lvalue, lname ? (uint32_t)strlen(lname) : 0, lvalue ? (uint32_t)strlen(lvalue) : 0 };
	write_sample(b, name, &l, lname ? 1 : 0, v);
}

/* Which form and fidelity each served row was evaluated with this scrape: its own expression
 * (slurmctld) or a preferred form (slurmrestd while it is up); a reason label when the form was
 * served approximate because its counters may have wrapped (its wraps_at). */
static void write_row_fidelity(struct buf *b, const struct mapping *m, const struct render_result *res)
{
	write_header(b, "slurm_exporter_shim_row_fidelity",
		     "Legacy families this scrape served, by the fidelity and upstream of the form they were computed with.", "gauge");
	for (size_t i = 0; i < res->nrows; i++) {
		const struct render_row *o = &res->rows[i];
		if (o->status != ROW_OK || o->output_full)
			continue;
		const struct row *r = &m->rows[i];
		const char *up = upstreams[row_upstream(r, o->form)].name;
		const char *f = fidelity_name(o->fidelity), *why = row_wrap_name(o->wrap);
		struct label l[4] = { { "family", r->name, 6, (uint32_t)strlen(r->name) },
				      { "fidelity", f, 8, (uint32_t)strlen(f) },
				      { "reason", why, 6, (uint32_t)strlen(why) },
				      { "upstream", up, 8, (uint32_t)strlen(up) } };
		if (!*why)
			l[2] = l[3];
		write_sample(b, "slurm_exporter_shim_row_fidelity", l, *why ? 4 : 3, 1);
	}
}

/* How old the answers each served row was computed from are: the oldest of its form's sources, so
 * a row fed from a reused answer (a cost-scheduled /jobs, one within its --*.min-interval) says so
 * whatever the other rows' sources are. */
static void write_row_age(const struct render_in *in, struct buf *b, const struct mapping *m, const struct render_result *res)
{
	double now = in->clock ? clock_of(in) : 0;
	write_header(b, "slurm_exporter_shim_row_age_seconds",
		     "Age of the oldest answer the served family was computed from this scrape (its form's endpoints: "
		     "slurm_exporter_shim_payload_age_seconds).", "gauge");
	for (size_t i = 0; i < res->nrows; i++) {
		const struct render_row *o = &res->rows[i];
		if (o->status != ROW_OK || o->output_full)
			continue;
		double age = 0;
		for (int id = 0; id < SRC_COUNT; id++) {
			const struct render_source *s = &res->src[id];
			if ((m->rows[i].forms[o->form].sources & (1u << id)) && in->clock && s->at && now - s->at > age)
				age = now - s->at;
		}
		self_sample(b, "slurm_exporter_shim_row_age_seconds", "family", m->rows[i].name, age);
	}
}

/* Per source: up, fetch duration, bytes, status, parse errors, age, and the counters since start. */
static void write_sources(const struct render_in *in, const struct render_result *res, struct buf *b, double now)
{
	static const struct {
		const char *name, *help, *type;
	} fam[] = {
		{ "slurm_exporter_shim_up", "Whether the endpoint's last answer was usable (1) or not (0).", "gauge" },
		{ "slurm_exporter_shim_fetch_duration_seconds", "How long the endpoint's last fetch took.", "gauge" },
		{ "slurm_exporter_shim_response_bytes", "Size of the endpoint's last answer body.", "gauge" },
		{ "slurm_exporter_shim_http_status", "HTTP status of the endpoint's last answer (0: no HTTP answer).", "gauge" },
		{ "slurm_exporter_shim_parse_errors", "Malformed lines in the endpoint's last answer.", "gauge" },
		{ "slurm_exporter_shim_payload_age_seconds", "Age of the endpoint's answer when this exposition was rendered (reused within its --*.min-interval).", "gauge" },
		{ "slurm_exporter_shim_upstream_fetches_total", "Fetches of the endpoint since start.", "counter" },
		{ "slurm_exporter_shim_slow_fetches_total", "Fetches of the endpoint since start that took longer than --log.slow-fetch.", "counter" },
		{ "slurm_exporter_shim_native_repaired_total", "Label values and HELP texts with invalid UTF-8 that /native/metrics/<endpoint> answers since start served repaired (U+FFFD).", "counter" },
	};
	static const struct render_counts none;
	for (size_t f = 0; f < sizeof(fam) / sizeof(fam[0]); f++) {
		write_header(b, fam[f].name, fam[f].help, fam[f].type);
		for (int id = 0; id < SRC_COUNT; id++) {
			const struct render_source *s = &res->src[id];
			const struct render_counts *n = in->counts ? &in->counts[id] : &none;
			if (!s->given || (f == 8 && id >= SRC_NATIVE_COUNT))
				continue;
			double v = 0;
			switch (f) {
			case 0: v = s->up; break;
			case 1: v = s->seconds; break;
			case 2: v = (double)s->len; break;
			case 3: v = (double)s->http_status; break;
			case 4: v = (double)s->parse_errors; break;
			case 5: v = in->clock && s->at ? now - s->at : 0; break;
			case 6: v = (double)n->fetches; break;
			case 7: v = (double)n->slow; break;
			case 8: v = (double)n->repaired; break;
			}
			self_sample(b, fam[f].name, "endpoint", sources[id].name, v);
		}
	}
}

/* The sources this answer did not wait for (slurmctld's answers were in: cache.h), a family
 * written only when there is one. */
static void write_not_waited(const struct render_result *res, struct buf *b)
{
	int any = 0;
	for (int id = 0; id < SRC_COUNT; id++) {
		if (!res->src[id].given || res->src[id].fault != FAULT_NOT_WAITED)
			continue;
		if (!any++)
			write_header(b, "slurm_exporter_shim_not_waited_for",
				     "Endpoints this scrape answered without: slurmctld's answers were in and this fetch was still "
				     "in flight past the bound (docs/operations.md); their rows fell back to their native forms.",
				     "gauge");
		self_sample(b, "slurm_exporter_shim_not_waited_for", "endpoint", sources[id].name, 1);
	}
}

/* The cost-scheduled sources (cache.h's cache_cost: slurmrestd's /jobs in the daemon), families
 * written only when there is one: what its last usable fetch took, the interval and timeout that
 * gives (schedule.h), and the failures in a row it is backing off for. */
static void write_costed(const struct render_in *in, const struct render_result *res, struct buf *b)
{
	static const struct {
		const char *name, *help;
	} fam[] = {
		{ "slurm_exporter_shim_fetch_cost_seconds",
		  "How long the endpoint's last usable fetch took (0: none yet); its interval follows it." },
		{ "slurm_exporter_shim_fetch_interval_seconds",
		  "Seconds from the end of the endpoint's last fetch to the next: its cost over the share it may take "
		  "(--slurmrestd.jobs.max-share), at least its min-interval, longer while backing off." },
		{ "slurm_exporter_shim_fetch_timeout_seconds",
		  "Seconds the endpoint's next fetch may take: twice its cost, doubled per failure in a row, within "
		  "--slurmrestd.timeout and --slurmrestd.jobs.max-timeout (that one until a fetch was usable)." },
		{ "slurm_exporter_shim_fetch_failures",
		  "The endpoint's failed fetches in a row: above 0 it is backing off, and the rows that read it are "
		  "served from their native forms." },
	};
	for (size_t f = 0; f < sizeof(fam) / sizeof(fam[0]); f++) {
		int header = 0;
		for (int id = 0; id < SRC_COUNT; id++) {
			const struct render_counts *n = in->counts ? &in->counts[id] : NULL;
			if (!res->src[id].given || !n || !n->costed)
				continue;
			if (!header++)
				write_header(b, fam[f].name, fam[f].help, "gauge");
			double v = f == 0 ? n->cost : f == 1 ? n->interval : f == 2 ? n->timeout : (double)n->failures;
			self_sample(b, fam[f].name, "endpoint", sources[id].name, v);
		}
	}
}

/* Per upstream with a token file: whether its answers of this scrape accepted the token
 * (payload.h's source_token_state; docs/operations.md, "Tokens"). */
static void write_token_ok(struct buf *b, const struct payload *const p[SRC_COUNT])
{
	static const char name[] = "slurm_exporter_shim_upstream_token_ok";
	int header = 0, which;
	for (int u = 0; u < UPSTREAM_COUNT; u++) {
		int st = source_token_state(p, ~0u, (enum upstream_id)u, &which);
		if (st == TOKEN_NOT_CONFIGURED)
			continue;
		if (!header++)
			write_header(b, name, "Whether the upstream accepted the token of its --*.auth.token-file in this scrape's "
					      "answers (1), or refused it or the file could not be read (0).", "gauge");
		self_sample(b, name, "upstream", upstreams[u].name, st == TOKEN_SENT);
	}
}

/* The slurm_exporter_shim_* families, from the result record. */
static void write_self(const struct render_in *in, const struct render_result *res, struct buf *b)
{
	const struct mapping *m = in->m;
	write_sources(in, res, b, clock_of(in));
	write_token_ok(b, in->p);
	if (res->src[SRC_NODES].given || res->src[SRC_REST_NODES].given) { /* which source the node states came from */
		int rest = res->src[SRC_REST_NODES].up;
		write_header(b, NODEVIEW_SOURCE_METRIC, NODEVIEW_SOURCE_HELP, "gauge");
		self_sample(b, NODEVIEW_SOURCE_METRIC, "source", "slurmrestd", rest);
		self_sample(b, NODEVIEW_SOURCE_METRIC, "source", "slurmctld-guess", !rest);
	}
	write_not_waited(res, b);
	write_costed(in, res, b);
	size_t counts[ROW_STATUS_COUNT] = { 0 };
	for (size_t i = 0; i < res->nrows; i++)
		counts[res->rows[i].status]++;
	write_header(b, "slurm_exporter_shim_mapping_rows", "Rows of the loaded mapping by what they gave this scrape.", "gauge");
	for (int i = 0; i < ROW_STATUS_COUNT; i++)
		self_sample(b, "slurm_exporter_shim_mapping_rows", "status", row_status_name((enum row_status)i), (double)counts[i]);
	write_header(b, "slurm_exporter_shim_family_left_out",
		    "Legacy families this scrape could not serve, by reason (input_down, input_missing, error, no_input, output_full).", "gauge");
	for (size_t i = 0; i < res->nrows; i++) {
		const char *why = render_left_out(&res->rows[i]);
		if (!why)
			continue;
		struct label l[2] = { { "family", m->rows[i].name, 6, (uint32_t)strlen(m->rows[i].name) },
				      { "reason", why, 6, (uint32_t)strlen(why) } };
		write_sample(b, "slurm_exporter_shim_family_left_out", l, 2, 1);
	}
	write_row_fidelity(b, m, res);
	write_row_age(in, b, m, res);
	catalog_write_metrics(b, m, &res->catalog);
	write_header(b, "slurm_exporter_shim_invalid_utf8_repaired",
		     "Label values from slurmctld with invalid UTF-8 that this scrape served repaired (U+FFFD).", "gauge");
	self_sample(b, "slurm_exporter_shim_invalid_utf8_repaired", NULL, NULL, (double)res->repaired);
	write_header(b, "slurm_exporter_shim_mapping_reload_success", "Whether the last mapping (re)load succeeded.", "gauge");
	self_sample(b, "slurm_exporter_shim_mapping_reload_success", NULL, NULL, in->reload_ok);
	write_header(b, "slurm_exporter_shim_mapping_reload_timestamp_seconds", "Unix time of the last mapping (re)load attempt.", "gauge");
	self_sample(b, "slurm_exporter_shim_mapping_reload_timestamp_seconds", NULL, NULL, in->reload_time);
	write_header(b, "slurm_exporter_shim_build_info", "Build information.", "gauge");
	self_sample(b, "slurm_exporter_shim_build_info", "version", SHIM_VERSION, 1);
	write_header(b, "slurm_exporter_shim_scrape_duration_seconds", "How long the scrape that rendered this exposition took (scrapes of the same inputs share it).", "gauge");
	self_sample(b, "slurm_exporter_shim_scrape_duration_seconds", NULL, NULL, in->clock ? clock_of(in) - in->started : 0);
}

/* The 503 body: why no source the mapping needs is usable. */
static void write_unusable(struct buf *out, const struct render_result *res)
{
	buf_puts(out, "slurm-exporter-shim: no slurmctld metrics endpoint answered usably:\n");
	for (int id = 0; id < SRC_COUNT; id++)
		if (res->src[id].given) {
			char safe[600];
			const char *why = res->src[id].reason;
			buf_printf(out, "%s\n", log_escape(safe, sizeof(safe), why, strlen(why)));
		}
}

/* What source id's payload was (nothing when none was given). */
static void source_facts(struct render_source *o, const struct payload *const p[SRC_COUNT], enum source_id id, int up)
{
	const struct payload *q = p[id];
	if (!q)
		return;
	o->given = 1;
	o->up = up;
	o->seconds = q->seconds;
	o->at = q->at;
	o->len = q->len;
	o->http_status = q->http_status;
	o->parse_errors = q->parse_errors;
	o->fault = q->facts.fault;
	if (!up)
		source_down_reason(p, id, o->reason, sizeof(o->reason));
}

int render_run(const struct render_in *in, struct buf *out, struct render_result *res)
{
	const struct mapping *m = in->m;
	const struct expo *ex[SRC_COUNT];
	int up[SRC_COUNT], given = 0;
	int any_ok = source_usable(in->p, up); /* a source's answer, and the rules across sources */

	memset(res, 0, sizeof(*res));
	for (int id = 0; id < SRC_COUNT; id++) {
		ex[id] = up[id] ? &in->p[id]->expo : NULL;
		given |= in->p[id] != NULL;
		source_facts(&res->src[id], in->p, (enum source_id)id, up[id]);
	}
	catalog_compare(m, in->p, up, &res->catalog);
	if (given && !any_ok) {
		/* every needed source failed: like the old exporter dying, Prometheus' up goes to 0 */
		write_unusable(out, res);
		return res->status = 503;
	}
	/* rows are evaluated and written one at a time (mapping_run), so memory holds one row's
	 * series at a time (plus shared subexpressions) */
	size_t max = out->max;
	res->nrows = m->nrows;
	res->rows = xcalloc(m->nrows + 1, sizeof(*res->rows));
	out->max = in->max_output ? out->len + in->max_output : 0;
	buf_reserve(out, in->size_hint + in->size_hint / 8); /* about the last answer's size, in one go */
	struct rows_out w = { in, out, res, in->time_rows ? clock_of(in) : 0 };
	mapping_run(m, in->flags, ex, up, write_row, &w);
	out->max = 0; /* self metrics are small and always fit: no cap for them */
	write_self(in, res, out);
	if (in->tail_len)
		buf_append(out, in->tail, in->tail_len);
	out->max = max;
	return res->status = 200;
}

void render_result_free(struct render_result *res)
{
	if (!res)
		return;
	free(res->rows);
	res->rows = NULL;
	res->nrows = 0;
}
