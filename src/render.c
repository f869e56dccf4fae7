/* render.c: see render.h. */
#include "render.h"
#include "log.h"
#include "writer.h"
#include "xmalloc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
			for (int id = 0; id < SRC_COUNT; id++)
				if ((row->forms[r->form].sources >> id) & 1)
					w->res->src[id].fed[r->fidelity]++;
		}
	}
	if (w->in->time_rows) {
		double t1 = clock_of(w->in);
		w->res->eval_s += t0 - w->last;
		w->res->write_s += t1 - t0;
		w->last = t1;
	}
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

/* What source id's payload was (nothing when none was given), and its counters. */
static void source_facts(const struct render_in *in, struct render_source *o, enum source_id id, int up)
{
	const struct payload *q = in->p[id];
	o->controller = -1;
	if (!q)
		return;
	if (in->counts)
		o->n = in->counts[id];
	o->given = 1;
	o->controller = q->controller;
	o->up = up;
	o->seconds = q->seconds;
	o->at = q->at;
	o->len = q->len;
	o->http_status = q->http_status;
	o->parse_errors = q->parse_errors;
	o->fault = q->facts.fault;
	o->slow = in->slow_fetch > 0 && q->seconds > in->slow_fetch;
	if (!up)
		source_down_reason(in->p, id, o->reason, sizeof(o->reason));
}

/* What the record says besides the sources and rows: the tokens, the caller's facts (reload,
 * controllers, compression counters). */
static void record_facts(const struct render_in *in, struct render_result *res)
{
	res->m = in->m;
	res->schemas = in->schemas;
	res->slow_fetch = in->slow_fetch;
	res->reload_ok = in->reload_ok;
	res->reload_time = in->reload_time;
	for (int u = 0; u < UPSTREAM_COUNT; u++) {
		struct render_token *t = &res->token[u];
		t->source = -1;
		t->state = source_token_state(in->p, ~0u, (enum upstream_id)u, &t->source);
		t->http_status = t->source >= 0 ? in->p[t->source]->http_status : 0;
	}
	if (in->ctl) {
		res->has_ctl = 1;
		res->nctl = in->nctl < CONTROLLERS_MAX ? in->nctl : CONTROLLERS_MAX;
		memcpy(res->ctl, in->ctl, res->nctl * sizeof(*res->ctl));
		res->ctl_switches = in->ctl_switches;
	}
	if (in->gz) {
		res->has_gz = 1;
		res->gz_answers = atomic_load(&in->gz->answers);
		res->gz_cpu_ns = atomic_load(&in->gz->cpu_ns);
		for (int c = 0; c < 2; c++)
			res->gz_bytes[c] = atomic_load(&in->gz->bytes[c]);
	}
}

/* The node view of the usable payloads ex (nodeview.h), with in->node_view on a 200. */
static void record_nodes(const struct render_in *in, struct render_result *res, const struct expo *const ex[SRC_COUNT])
{
	if (!in->node_view)
		return;
	res->nodes = xcalloc(1, sizeof(*res->nodes));
	nodeview_build(res->nodes, ex);
	loadview_build(&res->nodes->load, ex, in->load_margin);
}

/* The scrape's record as families the rows may read (mapping.h's MAPPING_RECORD_FAMILIES), into e:
 * per source given, whether rows could read its answer, its fetch's seconds, its answer's age now
 * (0 without a clock) and its failed fetches since start (render_in.counts). Only when the table
 * reads them (mapping.reads_record); the record is read here, never changed. */
static void record_families(const struct render_in *in, const struct render_result *res, struct expo *e)
{
	double now = clock_of(in);
	expo_init(e);
	for (int id = 0; id < SRC_COUNT && in->m->reads_record; id++) {
		const struct render_source *s = &res->src[id];
		const double v[REC_COUNT] = {
			[REC_UP] = s->up,
			[REC_DURATION] = s->seconds,
			[REC_AGE] = in->clock && s->at ? now - s->at : 0,
			[REC_ERRORS] = (double)s->n.failed,
		};
		for (int f = 0; f < REC_COUNT && s->given; f++) {
			const char *name = mapping_record_name((enum mapping_record_family)f);
			struct label l = label_str("source", sources[id].name);
			expo_add(e, name, strlen(name), &l, 1, v[f]);
		}
	}
	expo_add_end(e);
}

/* The record's times, just before the self metrics are written from it. */
static void record_times(const struct render_in *in, struct render_result *res)
{
	res->has_clock = in->clock != NULL;
	res->at = clock_of(in);
	res->duration = in->clock ? res->at - in->started : 0;
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
		source_facts(in, &res->src[id], (enum source_id)id, up[id]);
	}
	record_facts(in, res);
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
	struct expo record;
	record_families(in, res, &record);
	mapping_run(m, in->flags, ex, up, &record, write_row, &w);
	expo_free(&record);
	record_nodes(in, res, ex);
	out->max = 0; /* self metrics are small and always fit: no cap for them */
	record_times(in, res);
	render_write_self(out, res);
	out->max = max;
	return res->status = 200;
}

void render_result_free(struct render_result *res)
{
	if (!res)
		return;
	free(res->rows);
	free(res->nodes);
	res->rows = NULL;
	res->nodes = NULL;
	res->nrows = 0;
}
