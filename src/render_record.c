/* render_record.c: reading the result record (render.h): why a row was left out or served
 * approximate, a source's age, and the self metrics. Each self metric is described once, in the
 * table self[] below (name, type, help, labels, which points it has samples at, when it is written
 * at all, and where each value comes from in the record), and written by writer.c's write_family as
 * every legacy family is. Nothing here calls back into render.c: the record is read, never made. */
#include "render.h"
#include "http_encoding.h"
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

double render_source_age(const struct render_result *res, enum source_id id)
{
	const struct render_source *s = &res->src[id];
	return res->has_clock && s->given && s->at ? res->at - s->at : 0;
}

/* ---- the self metrics ---- */

/* What a family's index runs over, and which indexes are samples (each_point). */
enum self_each {
	EACH_ONE,         /* one sample, no label */
	EACH_BUILD,       /* one sample: this build's version */
	EACH_SOURCE,      /* each source the table needed (a payload was given) */
	EACH_NATIVE,      /* each slurmctld source given (the native passthrough's) */
	EACH_NOT_WAITED,  /* each source given that this answer did not wait for (cache.h) */
	EACH_COSTED,      /* each cost-scheduled source given (render_counts.costed) */
	EACH_TOKEN,       /* each upstream with a token file */
	EACH_NODE_SOURCE, /* slurmrestd and slurmctld-guess, when a node source was given */
	EACH_ROW_STATUS,  /* each enum row_status */
	EACH_LEFT_OUT,    /* each row left out (render_left_out) */
	EACH_SERVED,      /* each row served */
	EACH_MISSING,     /* each family the catalog comparison listed as missing */
	EACH_UNKNOWN,     /* ... as unknown */
	EACH_KIND,        /* each enum catalog_kind */
	EACH_RELEASE,     /* the closest validated release, when one was compared */
	EACH_CONTROLLER,  /* each slurmctld controller as last seen */
	EACH_CODING,      /* each enum content_coding */
	EACH_SCHEMA_FID,  /* each schema served, by each enum fidelity (schema * FID_COUNT + fidelity) */
};

/* When a family is written at all. */
enum self_when {
	WHEN_ALWAYS,      /* its HELP and TYPE even without a sample */
	WHEN_SAMPLE,      /* only with a sample */
	WHEN_CATALOG,     /* the table records a native catalog (validated_on) */
	WHEN_CTL,         /* the record has controllers (not a replay) */
	WHEN_GZ,          /* the record has compression counters (the daemon) */
	WHEN_SCHEMAS,     /* the record has the schemas served (the daemon) */
};

#define SELF_LABELS_MAX 4

struct self_family {
	const char *name, *type, *help;
	const char *labels[SELF_LABELS_MAX]; /* names, in the order written; a point may leave one out */
	enum self_each each;
	enum self_when when;
	double (*value)(const struct render_result *r, size_t i); /* at point i */
};

/* Where the values come from. */
static double v_one(const struct render_result *r, size_t i) { (void)r, (void)i; return 1; }
static double v_up(const struct render_result *r, size_t i) { return r->src[i].up; }
static double v_seconds(const struct render_result *r, size_t i) { return r->src[i].seconds; }
static double v_len(const struct render_result *r, size_t i) { return (double)r->src[i].len; }
static double v_http(const struct render_result *r, size_t i) { return (double)r->src[i].http_status; }
static double v_parse(const struct render_result *r, size_t i) { return (double)r->src[i].parse_errors; }
static double v_age(const struct render_result *r, size_t i) { return render_source_age(r, (enum source_id)i); }
/* A served row's age: the oldest answer its form read (a reused /jobs, one within its --*.min-interval). */
static double v_row_age(const struct render_result *r, size_t i)
{
	double age = 0;
	unsigned read = r->m->rows[i].forms[r->rows[i].form].sources;
	for (int id = 0; id < SRC_COUNT; id++)
		if ((read & (1u << id)) && render_source_age(r, (enum source_id)id) > age)
			age = render_source_age(r, (enum source_id)id);
	return age;
}
static double v_fetches(const struct render_result *r, size_t i) { return (double)r->src[i].n.fetches; }
static double v_slow(const struct render_result *r, size_t i) { return (double)r->src[i].n.slow; }
static double v_repaired(const struct render_result *r, size_t i) { return (double)r->src[i].n.repaired; }
static double v_cost(const struct render_result *r, size_t i) { return r->src[i].n.cost; }
static double v_interval(const struct render_result *r, size_t i) { return r->src[i].n.interval; }
static double v_timeout(const struct render_result *r, size_t i) { return r->src[i].n.timeout; }
static double v_failures(const struct render_result *r, size_t i) { return (double)r->src[i].n.failures; }
static double v_token_ok(const struct render_result *r, size_t i) { return r->token[i].state == TOKEN_SENT; }
static double v_node_source(const struct render_result *r, size_t i)
{
	return i == 0 ? r->src[SRC_REST_NODES].up : !r->src[SRC_REST_NODES].up;
}
static double v_row_status(const struct render_result *r, size_t i)
{
	size_t n = 0;
	for (size_t k = 0; k < r->nrows; k++)
		n += r->rows[k].status == (enum row_status)i;
	return (double)n;
}
static double v_kind(const struct render_result *r, size_t i) { return (double)r->catalog.n[i]; }
static double v_utf8(const struct render_result *r, size_t i) { (void)i; return (double)r->repaired; }
static double v_reload_ok(const struct render_result *r, size_t i) { (void)i; return r->reload_ok; }
static double v_reload_time(const struct render_result *r, size_t i) { (void)i; return r->reload_time; }
static double v_duration(const struct render_result *r, size_t i) { (void)i; return r->duration; }
static double v_switches(const struct render_result *r, size_t i) { (void)i; return (double)r->ctl_switches; }
static double v_gz_answers(const struct render_result *r, size_t i) { (void)i; return (double)r->gz_answers; }
static double v_gz_cpu(const struct render_result *r, size_t i) { (void)i; return (double)r->gz_cpu_ns / 1e9; }
static double v_gz_bytes(const struct render_result *r, size_t i) { return (double)r->gz_bytes[i]; }
static double v_schema_rows(const struct render_result *r, size_t i)
{
	size_t n[FID_COUNT];
	mapping_fidelity_counts(mapping_schema(r->schemas, i / FID_COUNT), n);
	return (double)n[i % FID_COUNT];
}

#define UPGRADING "docs/operations.md, \"Upgrading Slurm\""

/* Every slurm_exporter_shim_* family of /metrics, in the order written. */
static const struct self_family self[] = {
	{ .name = "slurm_exporter_shim_up", .type = "gauge", .each = EACH_SOURCE, .value = v_up, .labels = { "endpoint" },
	  .help = "Whether the endpoint's last answer was usable (1) or not (0)." },
	{ .name = "slurm_exporter_shim_fetch_duration_seconds", .type = "gauge", .each = EACH_SOURCE, .value = v_seconds,
	  .labels = { "endpoint" }, .help = "How long the endpoint's last fetch took." },
	{ .name = "slurm_exporter_shim_response_bytes", .type = "gauge", .each = EACH_SOURCE, .value = v_len,
	  .labels = { "endpoint" }, .help = "Size of the endpoint's last answer body." },
	{ .name = "slurm_exporter_shim_http_status", .type = "gauge", .each = EACH_SOURCE, .value = v_http,
	  .labels = { "endpoint" }, .help = "HTTP status of the endpoint's last answer (0: no HTTP answer)." },
	{ .name = "slurm_exporter_shim_parse_errors", .type = "gauge", .each = EACH_SOURCE, .value = v_parse,
	  .labels = { "endpoint" }, .help = "Malformed lines in the endpoint's last answer." },
	{ .name = "slurm_exporter_shim_payload_age_seconds", .type = "gauge", .each = EACH_SOURCE, .value = v_age,
	  .labels = { "endpoint" },
	  .help = "Age of the endpoint's answer when this exposition was rendered (reused within its --*.min-interval)." },
	{ .name = "slurm_exporter_shim_upstream_fetches_total", .type = "counter", .each = EACH_SOURCE, .value = v_fetches,
	  .labels = { "endpoint" }, .help = "Fetches of the endpoint since start." },
	{ .name = "slurm_exporter_shim_slow_fetches_total", .type = "counter", .each = EACH_SOURCE, .value = v_slow,
	  .labels = { "endpoint" }, .help = "Fetches of the endpoint since start that took longer than --log.slow-fetch." },
	{ .name = "slurm_exporter_shim_native_repaired_total", .type = "counter", .each = EACH_NATIVE, .value = v_repaired,
	  .labels = { "endpoint" },
	  .help = "Label values and HELP texts with invalid UTF-8 that /native/metrics/<endpoint> answers since start "
		  "served repaired (U+FFFD)." },
	{ .name = "slurm_exporter_shim_upstream_token_ok", .type = "gauge", .each = EACH_TOKEN, .when = WHEN_SAMPLE,
	  .value = v_token_ok, .labels = { "upstream" },
	  .help = "Whether the upstream accepted the token of its --*.auth.token-file in this scrape's answers (1), or "
		  "refused it or the file could not be read (0)." },
	{ .name = NODEVIEW_SOURCE_METRIC, .type = "gauge", .each = EACH_NODE_SOURCE, .when = WHEN_SAMPLE,
	  .value = v_node_source, .labels = { "source" }, .help = NODEVIEW_SOURCE_HELP },
	{ .name = "slurm_exporter_shim_not_waited_for", .type = "gauge", .each = EACH_NOT_WAITED, .when = WHEN_SAMPLE,
	  .value = v_one, .labels = { "endpoint" },
	  .help = "Endpoints this scrape answered without: slurmctld's answers were in and this fetch was still in flight "
		  "past the bound (docs/operations.md); their rows fell back to their native forms." },
	{ .name = "slurm_exporter_shim_fetch_cost_seconds", .type = "gauge", .each = EACH_COSTED, .when = WHEN_SAMPLE,
	  .value = v_cost, .labels = { "endpoint" },
	  .help = "How long the endpoint's last usable fetch took (0: none yet); its interval follows it." },
	{ .name = "slurm_exporter_shim_fetch_interval_seconds", .type = "gauge", .each = EACH_COSTED, .when = WHEN_SAMPLE,
	  .value = v_interval, .labels = { "endpoint" },
	  .help = "Seconds from the end of the endpoint's last fetch to the next: its cost over the share it may take "
		  "(--slurmrestd.jobs.max-share, --slurmrestd.max-share), at least its min-interval, longer while backing off." },
	{ .name = "slurm_exporter_shim_fetch_timeout_seconds", .type = "gauge", .each = EACH_COSTED, .when = WHEN_SAMPLE,
	  .value = v_timeout, .labels = { "endpoint" },
	  .help = "Seconds the endpoint's next fetch may take: twice its cost, doubled per failure in a row, within "
		  "--slurmrestd.timeout and --slurmrestd.jobs.max-timeout (that one until a fetch was usable)." },
	{ .name = "slurm_exporter_shim_fetch_failures", .type = "gauge", .each = EACH_COSTED, .when = WHEN_SAMPLE,
	  .value = v_failures, .labels = { "endpoint" },
	  .help = "The endpoint's failed fetches in a row: above 0 /jobs is backing off, and the rows that read it are "
		  "served from their native forms." },
	{ .name = "slurm_exporter_shim_mapping_rows", .type = "gauge", .each = EACH_ROW_STATUS, .value = v_row_status,
	  .labels = { "status" }, .help = "Rows of the loaded mapping by what they gave this scrape." },
	{ .name = "slurm_exporter_shim_family_left_out", .type = "gauge", .each = EACH_LEFT_OUT, .value = v_one,
	  .labels = { "family", "reason" },
	  .help = "Legacy families this scrape could not serve, by reason (input_down, input_missing, error, no_input, "
		  "output_full)." },
	{ .name = "slurm_exporter_shim_row_fidelity", .type = "gauge", .each = EACH_SERVED, .value = v_one,
	  .labels = { "family", "fidelity", "reason", "upstream" },
	  .help = "Legacy families this scrape served, by the fidelity and upstream of the form they were computed with." },
	{ .name = "slurm_exporter_shim_row_age_seconds", .type = "gauge", .each = EACH_SERVED, .value = v_row_age,
	  .labels = { "family" },
	  .help = "Age of the oldest answer the served family was computed from this scrape (its form's endpoints: "
		  "slurm_exporter_shim_payload_age_seconds)." },
	{ .name = "slurm_exporter_shim_native_family_missing", .type = "gauge", .each = EACH_MISSING, .when = WHEN_CATALOG,
	  .value = v_one, .labels = { "endpoint", "family" },
	  .help = "Families the table reads that slurmctld's answer on the endpoint no longer names, though the validated "
		  "Slurm release closest to this scrape's answers serves them there (the first 50; " UPGRADING ")." },
	{ .name = "slurm_exporter_shim_native_family_unknown", .type = "gauge", .each = EACH_UNKNOWN, .when = WHEN_CATALOG,
	  .value = v_one, .labels = { "endpoint", "family" },
	  .help = "Families slurmctld's answer on the endpoint names that no validated Slurm release of the table lists "
		  "there (the first 50; " UPGRADING ")." },
	{ .name = "slurm_exporter_shim_native_catalog_differences", .type = "gauge", .each = EACH_KIND, .when = WHEN_CATALOG,
	  .value = v_kind, .labels = { "kind" },
	  .help = "Families this scrape found missing or unknown (all of them: the lists stop at 50)." },
	{ .name = "slurm_exporter_shim_native_catalog_release", .type = "gauge", .each = EACH_RELEASE, .when = WHEN_CATALOG,
	  .value = v_one, .labels = { "release" },
	  .help = "The validated Slurm release of the table whose catalog slurmctld's answers of this scrape are "
		  "closest to." },
	{ .name = "slurm_exporter_shim_invalid_utf8_repaired", .type = "gauge", .each = EACH_ONE, .value = v_utf8,
	  .help = "Label values from slurmctld with invalid UTF-8 that this scrape served repaired (U+FFFD)." },
	{ .name = "slurm_exporter_shim_mapping_reload_success", .type = "gauge", .each = EACH_ONE, .value = v_reload_ok,
	  .help = "Whether the last mapping (re)load succeeded." },
	{ .name = "slurm_exporter_shim_mapping_reload_timestamp_seconds", .type = "gauge", .each = EACH_ONE,
	  .value = v_reload_time, .help = "Unix time of the last mapping (re)load attempt." },
	{ .name = "slurm_exporter_shim_build_info", .type = "gauge", .each = EACH_BUILD, .value = v_one,
	  .labels = { "version" }, .help = "Build information." },
	{ .name = "slurm_exporter_shim_scrape_duration_seconds", .type = "gauge", .each = EACH_ONE, .value = v_duration,
	  .help = "How long the scrape that rendered this exposition took (scrapes of the same inputs share it)." },
	{ .name = "slurm_exporter_shim_controller_info", .type = "gauge", .each = EACH_CONTROLLER, .when = WHEN_CTL,
	  .value = v_one, .labels = { "url", "role" },
	  .help = "Each slurmctld controller (--slurmctld.url, and one a single URL's 303 pointed at) as last seen: "
		  "primary (answered usably), standby (303 or 503), unusable (answered, nothing usable), down (no HTTP "
		  "answer), unknown (not tried yet, or not since another answered as primary)." },
	{ .name = "slurm_exporter_shim_controller_switches_total", .type = "counter", .each = EACH_ONE, .when = WHEN_CTL,
	  .value = v_switches, .help = "Times the controller answering the shim changed since start (failover or failback)." },
	{ .name = "slurm_exporter_shim_compressed_answers_total", .type = "counter", .each = EACH_ONE, .when = WHEN_GZ,
	  .value = v_gz_answers,
	  .help = "Answers gzip-compressed since start: each answer once, for the first request that accepts gzip; every "
		  "other request sending it shares that form." },
	{ .name = "slurm_exporter_shim_compression_cpu_seconds_total", .type = "counter", .each = EACH_ONE, .when = WHEN_GZ,
	  .value = v_gz_cpu, .help = "CPU time spent gzip-compressing answers since start." },
	{ .name = "slurm_exporter_shim_response_body_bytes_total", .type = "counter", .each = EACH_CODING, .when = WHEN_GZ,
	  .value = v_gz_bytes, .labels = { "encoding" },
	  .help = "Body bytes of answers sent to GET requests since start, by content coding." },
	{ .name = "slurm_exporter_shim_schema_rows", .type = "gauge", .each = EACH_SCHEMA_FID, .when = WHEN_SCHEMAS,
	  .value = v_schema_rows, .labels = { "schema", "fidelity" },
	  .help = "Rows of each schema this process serves (--mapping.file, named by its file name without .json), by "
		  "the best fidelity any of a row's forms promises (with every upstream it reads)." },
};

/* How far a family's index runs in r. */
static size_t each_count(enum self_each each, const struct render_result *r)
{
	switch (each) {
	case EACH_ONE: case EACH_BUILD: return 1;
	case EACH_SOURCE: case EACH_NATIVE: case EACH_NOT_WAITED: case EACH_COSTED: return SRC_COUNT;
	case EACH_TOKEN: return UPSTREAM_COUNT;
	case EACH_NODE_SOURCE: case EACH_CODING: return 2;
	case EACH_ROW_STATUS: return ROW_STATUS_COUNT;
	case EACH_LEFT_OUT: case EACH_SERVED: return r->nrows;
	case EACH_MISSING: case EACH_UNKNOWN: {
		size_t n = r->catalog.n[each == EACH_MISSING ? CATALOG_MISSING : CATALOG_UNKNOWN];
		return n < CATALOG_LISTED_MAX ? n : CATALOG_LISTED_MAX;
	}
	case EACH_KIND: return CATALOG_KIND_COUNT;
	case EACH_RELEASE: return r->catalog.compared ? 1 : 0;
	case EACH_CONTROLLER: return r->nctl;
	case EACH_SCHEMA_FID: return mapping_schema_count(r->schemas) * FID_COUNT;
	}
	return 0;
}

/* A served row's labels: family, fidelity, the reason it may have wrapped (left out when none),
 * upstream. */
static void served_labels(const struct render_result *r, size_t i, const char *lv[SELF_LABELS_MAX])
{
	const struct render_row *o = &r->rows[i];
	const char *why = row_wrap_name(o->wrap);
	lv[0] = r->m->rows[i].name;
	lv[1] = fidelity_name(o->fidelity);
	lv[2] = *why ? why : NULL;
	lv[3] = upstreams[row_upstream(&r->m->rows[i], o->form)].name;
}

/* Whether index i of each is a sample in r, with its label values in lv (NULL: that label left out). */
static int each_point(enum self_each each, const struct render_result *r, size_t i, const char *lv[SELF_LABELS_MAX])
{
	static const char *const node_sources[] = { "slurmrestd", "slurmctld-guess" };
	static const char *const codings[] = { [CODING_IDENTITY] = "identity", [CODING_GZIP] = "gzip" };
	const struct render_source *s = i < SRC_COUNT ? &r->src[i] : NULL;
	const struct catalog_family *f;
	switch (each) {
	case EACH_ONE: return 1;
	case EACH_BUILD: lv[0] = SHIM_VERSION; return 1;
	case EACH_SOURCE: case EACH_NATIVE: case EACH_NOT_WAITED: case EACH_COSTED:
		lv[0] = sources[i].name;
		return s->given && (each != EACH_NATIVE || i < SRC_NATIVE_COUNT) &&
		       (each != EACH_NOT_WAITED || s->fault == FAULT_NOT_WAITED) && (each != EACH_COSTED || s->n.costed);
	case EACH_TOKEN:
		lv[0] = upstreams[i].name;
		return r->token[i].state != TOKEN_NOT_CONFIGURED;
	case EACH_NODE_SOURCE:
		lv[0] = node_sources[i];
		return r->src[SRC_NODES].given || r->src[SRC_REST_NODES].given;
	case EACH_ROW_STATUS: lv[0] = row_status_name((enum row_status)i); return 1;
	case EACH_LEFT_OUT:
		lv[0] = r->m->rows[i].name;
		return (lv[1] = render_left_out(&r->rows[i])) != NULL;
	case EACH_SERVED:
		if (r->rows[i].status != ROW_OK || r->rows[i].output_full)
			return 0;
		served_labels(r, i, lv);
		return 1;
	case EACH_MISSING: case EACH_UNKNOWN:
		f = &r->catalog.fam[each == EACH_MISSING ? CATALOG_MISSING : CATALOG_UNKNOWN][i];
		lv[0] = sources[f->src].name;
		lv[1] = f->name;
		return 1;
	case EACH_KIND: lv[0] = catalog_kind_name((enum catalog_kind)i); return 1;
	case EACH_RELEASE: lv[0] = r->catalog.release; return 1;
	case EACH_CONTROLLER:
		lv[0] = r->ctl[i].url;
		lv[1] = controller_role_name(r->ctl[i].role);
		return 1;
	case EACH_CODING: lv[0] = codings[i]; return 1;
	case EACH_SCHEMA_FID:
		lv[0] = mapping_schema(r->schemas, i / FID_COUNT)->stem;
		lv[1] = fidelity_name((enum fidelity)(i % FID_COUNT));
		return 1;
	}
	return 0;
}

static int self_is_written(const struct self_family *f, const struct render_result *r)
{
	switch (f->when) {
	case WHEN_CATALOG: return r->m && r->m->nreleases > 0;
	case WHEN_CTL: return r->has_ctl;
	case WHEN_GZ: return r->has_gz;
	case WHEN_SCHEMAS: return r->schemas != NULL;
	default: return 1;
	}
}

/* Family f's samples in r, as a vector, written whole (the self metrics are never capped). */
static void write_self_family(struct buf *b, const struct self_family *f, const struct render_result *r)
{
	size_t n = each_count(f->each, r);
	struct velem *e = xcalloc(n + 1, sizeof(*e));
	struct label *l = xcalloc(SELF_LABELS_MAX * n + 1, sizeof(*l));
	struct vec v = { e, 0 };
	for (size_t i = 0; i < n; i++) {
		const char *lv[SELF_LABELS_MAX] = { 0 };
		if (!each_point(f->each, r, i, lv))
			continue;
		struct velem *s = &e[v.n++];
		s->labels = &l[SELF_LABELS_MAX * i];
		for (size_t k = 0; k < SELF_LABELS_MAX && f->labels[k]; k++)
			if (lv[k])
				s->labels[s->nlabels++] = label_str(f->labels[k], lv[k]);
		s->v = f->value(r, i);
	}
	if (v.n || f->when != WHEN_SAMPLE)
		write_family(b, f->name, f->help, f->type, &v);
	free(l);
	free(e);
}

void render_write_self(struct buf *b, const struct render_result *res)
{
	for (size_t f = 0; f < sizeof(self) / sizeof(self[0]); f++)
		if (self_is_written(&self[f], res))
			write_self_family(b, &self[f], res);
}
