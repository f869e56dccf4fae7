/* source.c: see source.h. */
#include "source.h"
#include "expo.h"
#include "slurmrestd.h"

#include <stdio.h>
#include <string.h>

/* What an HTTP status from slurmctld means, for the operator. */
static const char *slurmctld_status_hint(long code)
{
	switch (code) {
	case 401:
		return "401 Unauthorized: Slurm 25.11 answers 401 to everyone when PrivateData is set in slurm.conf; "
		       "Slurm 26.05 wants a JWT (--slurmctld.auth.token-file) when PrivateData or MetricsAuthUsers is set";
	case 403:
		return "403 Forbidden: the token's user is not allowed (26.05: add it to MetricsAuthUsers, or use root/SlurmUser)";
	case 303:
		return "303 See Other: a standby controller redirected twice; point --slurmctld.url at the primary";
	case 404:
		return "404 Not Found: this slurmctld has no metrics endpoints (Slurm older than 25.11?)";
	case 503:
		return "503 Service Unavailable: standby controller without a primary address";
	default:
		return NULL;
	}
}

/* What an HTTP status from slurmrestd means, for the operator, when no token went with the request
 * (a refused token: token_text). */
static const char *slurmrestd_status_hint(long code)
{
	switch (code) {
	case 401:
		return "401 Unauthorized and no token sent: set --slurmrestd.auth.token-file (and --slurmrestd.auth.user)";
	case 403:
		return "403 Forbidden and no token sent: set --slurmrestd.auth.token-file (and --slurmrestd.auth.user)";
	case 511:
		return "511 Network Authentication Required and no token sent: set --slurmrestd.auth.token-file";
	case 404: /* a discovered version is looked up again on the next fetch (fetch.c) */
		return "404 Not Found: does this slurmrestd serve --slurmrestd.api-version (slurmrestd -d list)? "
		       "A discovered version is looked up again";
	default:
		return NULL;
	}
}

const struct upstream upstreams[UPSTREAM_COUNT] = {
	/* slurmctld's http_con_send_response() writes Content-Length whenever there is a body (and
	 * none for its empty "no jobs" answer): tests/fixtures/slurm-25.11/http-behaviour, the
	 * captures' *.headers.txt. slurmrestd sends one too in every capture, but is not held to it: a
	 * JSON document cut short does not parse anyway, and a proxy in front of slurmrestd (TLS) may
	 * answer close-delimited */
	[UPSTREAM_SLURMCTLD] = { .name = "slurmctld", .flag = "--slurmctld", .accept = "Accept: text/plain",
				 .status_hint = slurmctld_status_hint,
				 .empty_hint = "is MetricsType=metrics/openmetrics set in slurm.conf?", .length_required = 1 },
	[UPSTREAM_SLURMRESTD] = { .name = "slurmrestd", .flag = "--slurmrestd", .accept = "Accept: application/json",
				  .status_hint = slurmrestd_status_hint,
				  .empty_hint = "slurmrestd answers every document with JSON", .media_type = "application/json",
				  .optional = 1 },
};

/* slurmctld's OpenMetrics text: the expo is the whole parser state. */
static void *om_begin(struct expo *e)
{
	(void)e;
	return NULL;
}

static void om_feed(void *st, struct expo *e, const char *data, size_t n)
{
	(void)st;
	expo_feed(e, data, n, 0);
}

static size_t om_end(void *st, struct expo *e)
{
	(void)st;
	return expo_feed_end(e, 0);
}

static void om_discard(void *st)
{
	(void)st;
}

static const struct source_parser openmetrics_parser = {
	.begin = om_begin, .feed = om_feed, .end = om_end, .discard = om_discard, .at = "line"
};

/* slurmrestd's JSON documents: the streaming converter of slurmrestd.h, one begin per document; its
 * first problem stops it, and the transfer. */
#define REST_PARSER(b) { .begin = b, .feed = rest_feed, .end = rest_end, .discard = rest_discard, \
			 .stopped = rest_is_stopped, .at = "byte" }
static const struct source_parser rest_nodes_parser = REST_PARSER(rest_begin_nodes);
static const struct source_parser rest_shares_parser = REST_PARSER(rest_begin_shares);
static const struct source_parser rest_jobs_parser = REST_PARSER(rest_begin_jobs);
static const struct source_parser rest_diag_parser = REST_PARSER(rest_begin_diag);
static const struct source_parser rest_licenses_parser = REST_PARSER(rest_begin_licenses);
static const struct source_parser rest_job_states_parser = REST_PARSER(rest_begin_job_states);
static const struct source_parser rest_reservations_parser = REST_PARSER(rest_begin_reservations);
static const struct source_parser rest_associations_parser = REST_PARSER(rest_begin_associations);

static const char *const partitions_names[] = { "slurm_partition", NULL };
static const char *const nodes_names[] = { "slurm_node_", "slurm_nodes", NULL };
static const char *const ua_names[] = { "slurm_user_", "slurm_account_", NULL };
static const char *const jobs_names[] = { "slurm_jobs", NULL };
static const char *const rest_nodes_names[] = { "slurmrestd_node_", "slurmrestd_partition_", NULL };
static const char *const rest_shares_names[] = { "slurmrestd_share_", NULL };
static const char *const rest_jobs_names[] = { "slurmrestd_jobs", NULL };
static const char *const rest_diag_names[] = { "slurmrestd_diag_", NULL };
static const char *const rest_licenses_names[] = { "slurmrestd_license_", NULL };
static const char *const rest_job_states_names[] = { "slurmrestd_job_state", NULL };
static const char *const rest_reservations_names[] = { "slurmrestd_reservation_", NULL };
static const char *const rest_associations_names[] = { "slurmrestd_association_", NULL };

const struct source sources[SRC_COUNT] = {
	[SRC_JOBS] = { .name = "jobs", .path = "/metrics/jobs", .file = "metrics_jobs.txt", .upstream = UPSTREAM_SLURMCTLD,
		       .parser = &openmetrics_parser, .prefixes = jobs_names, .walks_jobs = 1 },
	[SRC_NODES] = { .name = "nodes", .path = "/metrics/nodes", .file = "metrics_nodes.txt", .upstream = UPSTREAM_SLURMCTLD,
			.parser = &openmetrics_parser, .prefixes = nodes_names },
	[SRC_PARTITIONS] = { .name = "partitions", .path = "/metrics/partitions", .file = "metrics_partitions.txt",
			     .upstream = UPSTREAM_SLURMCTLD, .parser = &openmetrics_parser, .prefixes = partitions_names,
			     .walks_jobs = 1 /* and the node write lock */ },
	[SRC_SCHEDULER] = { .name = "scheduler", .path = "/metrics/scheduler", .file = "metrics_scheduler.txt",
			    .upstream = UPSTREAM_SLURMCTLD, .parser = &openmetrics_parser, .catch_all = 1 },
	/* An empty jobs-users-accts answer means "no jobs in memory" only if slurmctld serves metrics
	 * at all: when /metrics/nodes failed too (MetricsType unset answers every endpoint with an
	 * empty 200), the empty answer proves nothing. The voucher is nodes, not jobs: the shipped
	 * table no longer fetches /metrics/jobs (its job-state rows sum this answer's accounts), and
	 * the scrape fetches a needed source's voucher with it (scrape.c). */
	[SRC_UA] = { .name = "jobs-users-accts", .path = "/metrics/jobs-users-accts", .file = "metrics_jobs-users-accts.txt",
		     .upstream = UPSTREAM_SLURMCTLD, .parser = &openmetrics_parser, .empty_ok = 1,
		     .empty_vouched_by = SRC_NODES, .prefixes = ua_names, .walks_jobs = 1 },
	/* slurmrestd: an empty body is never an answer (even no jobs is a JSON document), but a good
	 * document may hold no record (no jobs, no shares) and so name no family */
	[SRC_REST_NODES] = { .name = "slurmrestd-nodes", .path = "/slurm/{version}/nodes", .file = "rest_nodes.json",
			     .upstream = UPSTREAM_SLURMRESTD, .parser = &rest_nodes_parser, .prefixes = rest_nodes_names,
			     .names_optional = 1 },
	[SRC_REST_SHARES] = { .name = "slurmrestd-shares", .path = "/slurm/{version}/shares", .file = "rest_shares.json",
			      .upstream = UPSTREAM_SLURMRESTD, .parser = &rest_shares_parser, .prefixes = rest_shares_names,
			      .names_optional = 1 },
	[SRC_REST_JOBS] = { .name = "slurmrestd-jobs", .path = "/slurm/{version}/jobs", .file = "rest_jobs.json",
			    .upstream = UPSTREAM_SLURMRESTD, .parser = &rest_jobs_parser, .prefixes = rest_jobs_names,
			    .names_optional = 1, .walks_jobs = 1 /* the full job RPC */ },
	[SRC_REST_DIAG] = { .name = "slurmrestd-diag", .path = "/slurm/{version}/diag", .file = "rest_diag.json",
			    .upstream = UPSTREAM_SLURMRESTD, .parser = &rest_diag_parser, .prefixes = rest_diag_names,
			    .names_optional = 1 },
	/* fetched, like every source, only while a loaded table's row reads its families */
	[SRC_REST_LICENSES] = { .name = "slurmrestd-licenses", .path = "/slurm/{version}/licenses",
				.file = "rest_licenses.json", .upstream = UPSTREAM_SLURMRESTD, .parser = &rest_licenses_parser,
				.prefixes = rest_licenses_names, .names_optional = 1 },
	/* each job's id and state alone, under one job read lock: about 1/97 of /jobs' bytes, so it is
	 * fetched every --slurmrestd.min-interval, not cost-scheduled (docs/performance.md) */
	[SRC_REST_JOB_STATES] = { .name = "slurmrestd-jobs-state", .path = "/slurm/{version}/jobs/state",
				  .file = "rest_jobs_state.json", .upstream = UPSTREAM_SLURMRESTD,
				  .parser = &rest_job_states_parser, .prefixes = rest_job_states_names,
				  .names_optional = 1 },
	/* scontrol show reservation; fetched only while a loaded table's row reads its families */
	[SRC_REST_RESERVATIONS] = { .name = "slurmrestd-reservations", .path = "/slurm/{version}/reservations",
				    .file = "rest_reservations.json", .upstream = UPSTREAM_SLURMRESTD,
				    .parser = &rest_reservations_parser, .prefixes = rest_reservations_names,
				    .names_optional = 1 },
	/* sacctmgr show assoc: slurmdbd's association table (slurmrestd asks slurmdbd, not slurmctld);
	 * fetched only while a loaded table's row reads its families */
	[SRC_REST_ASSOCIATIONS] = { .name = "slurmrestd-associations", .path = "/slurmdb/{version}/associations",
				    .file = "rest_associations.json", .upstream = UPSTREAM_SLURMRESTD,
				    .parser = &rest_associations_parser, .prefixes = rest_associations_names,
				    .names_optional = 1 },
};

/* No strlen of the prefix: a name that differs early (most do) costs a compare or two. */
static int starts_with(const char *s, const char *prefix)
{
	while (*prefix)
		if (*s++ != *prefix++)
			return 0;
	return 1;
}

enum source_id source_for_metric(const char *name)
{
	int fallback = SRC_SCHEDULER;
	for (int id = 0; id < SRC_COUNT; id++) {
		if (sources[id].catch_all)
			fallback = id;
		for (const char *const *pre = sources[id].prefixes; pre && *pre; pre++)
			if (starts_with(name, *pre))
				return (enum source_id)id;
	}
	return (enum source_id)fallback;
}

unsigned source_of_upstream(enum upstream_id u)
{
	unsigned mask = 0;
	for (int id = 0; id < SRC_COUNT; id++)
		if (sources[id].upstream == u)
			mask |= 1u << id;
	return mask;
}

unsigned source_configured(const struct upstream_config cfg[UPSTREAM_COUNT])
{
	unsigned mask = 0;
	for (int id = 0; id < SRC_COUNT; id++)
		if (!upstreams[sources[id].upstream].optional || cfg[sources[id].upstream].base_url)
			mask |= 1u << id;
	return mask;
}

unsigned source_with_vouchers(unsigned mask)
{
	unsigned out = mask;
	for (int id = 0; id < SRC_COUNT; id++)
		if ((mask & (1u << id)) && sources[id].empty_ok && sources[id].empty_vouched_by >= 0)
			out |= 1u << sources[id].empty_vouched_by;
	return out;
}

/* The fault's text after "<path>: ", or NULL when the fault does not decide (a missing token with
 * an answer other than 401). */
static const char *fault_text(const struct source *src, const struct source_facts *f, char *buf, size_t len)
{
	const char *flag = upstreams[src->upstream].flag;
	switch (f->fault) {
	case FAULT_NONE:
		return NULL;
	case FAULT_TRANSPORT:
		return f->detail;
	case FAULT_TOO_BIG:
		if (f->from_file)
			snprintf(buf, len, "file larger than %s.max-body", flag);
		else
			snprintf(buf, len, "body larger than %zu bytes (%s.max-body)", f->limit, flag);
		return buf;
	case FAULT_REDIRECT_LOOP:
		snprintf(buf, len, "redirected more than once (HTTP %ld); point %s.url at the primary controller",
			 f->http_status, flag);
		return buf;
	case FAULT_REDIRECT_REFUSED:
		snprintf(buf, len, "redirect to %s refused (not http(s), https to http, or from a unix socket)", f->detail);
		return buf;
	case FAULT_REDIRECT_UNFOLLOWED:
		snprintf(buf, len, "redirected to %s: not followed, every endpoint of one answer is read from one controller",
			 f->detail);
		return buf;
	case FAULT_NO_TOKEN:
		if (f->http_status != 401)
			return NULL;
		snprintf(buf, len, "401 Unauthorized and no usable token: %s", f->detail);
		return buf;
	case FAULT_DEADLINE:
		return "scrape deadline passed while waiting for the fetch in flight";
	case FAULT_CONTENT_TYPE:
		snprintf(buf, len, "the answer is %s, not %s (a proxy's page?)", f->detail,
			 upstreams[src->upstream].media_type);
		return buf;
	case FAULT_NOT_WAITED:
		snprintf(buf, len, "not waited for: %s", f->detail);
		return buf;
	}
	return NULL;
}

/* Why an HTTP answer's framing makes it no answer (into buf), or NULL: headers that never ended
 * (any status), then, for a 200, a body shorter than its Content-Length, or a body without a
 * length from an upstream that always sends one. */
static const char *framing_text(const struct source *src, const struct source_facts *f, char *buf, size_t len)
{
	if (f->headers_cut) {
		snprintf(buf, len, "the answer ended inside its headers (HTTP %ld, then the connection closed): not an answer",
			 f->http_status);
		return buf;
	}
	if (f->http_status != 200)
		return NULL;
	if (f->content_length > 0 && f->len < (size_t)f->content_length) {
		snprintf(buf, len, "body cut short: %zu of %lld bytes (Content-Length)", f->len, f->content_length);
		return buf;
	}
	if (f->unframed && f->len && upstreams[src->upstream].length_required) {
		snprintf(buf, len, "200 with a body but no Content-Length (%s always sends one): cannot tell it from an answer cut short",
			 upstreams[src->upstream].name);
		return buf;
	}
	return NULL;
}

int source_is_token_refused(const struct source *src, const struct source_facts *f)
{
	long code = f->http_status;
	if (f->token != TOKEN_SENT)
		return 0;
	if (code == 401 || code == 403)
		return 1;
	return src->upstream == UPSTREAM_SLURMRESTD && (code == 511 || (code == 500 && src == &sources[SRC_REST_SHARES]));
}

/* A refused token, for the operator (the token itself is never written anywhere). */
static const char *token_text(const struct source *src, const struct source_facts *f, char *buf, size_t len)
{
	const char *flag = upstreams[src->upstream].flag;
	if (f->http_status == 500)
		snprintf(buf, len, "HTTP 500 with the token of %s.auth.token-file: token expired or not accepted? (so slurmrestd "
			 "25.11 answers /shares to an expired or forged one): renew it (scontrol token)", flag);
	else if (f->http_status == 403)
		snprintf(buf, len, "HTTP 403 with the token of %s.auth.token-file: the token's user is not allowed (%s), or the "
			 "token is not accepted", flag, src->upstream == UPSTREAM_SLURMCTLD ?
			 "26.05: add it to MetricsAuthUsers, or use root/SlurmUser" : "--slurmrestd.auth.user?");
	else
		snprintf(buf, len, "HTTP %ld with the token of %s.auth.token-file: token expired or not accepted: renew it "
			 "(scontrol token)", f->http_status, flag);
	return buf;
}


enum source_verdict source_verdict(const struct source *src, const struct source_facts *f, char *why, size_t whylen)
{
	char buf[400];
	const char *fault = fault_text(src, f, buf, sizeof(buf));
	if (fault) {
		snprintf(why, whylen, "%s: %s", src->path, fault);
		return VERDICT_FAULT;
	}
	const char *cut = framing_text(src, f, buf, sizeof(buf));
	if (cut) {
		snprintf(why, whylen, "%s: %s", src->path, cut);
		return VERDICT_CUT;
	}
	if (f->http_status && f->http_status != 200) {
		const struct upstream *up = &upstreams[src->upstream];
		const char *hint = up->status_hint ? up->status_hint(f->http_status) : NULL;
		if (source_is_token_refused(src, f))
			snprintf(why, whylen, "%s: %s", src->path, token_text(src, f, buf, sizeof(buf)));
		else if (f->http_status == 404 && !strncmp(src->path, "/slurmdb/", 9)) /* the version is kept (fetch.c) */
			snprintf(why, whylen, "%s: 404 Not Found: does this slurmrestd load its slurmdbd plugin (slurmrestd -s "
				 "slurmctld,slurmdbd, with slurmdbd accounting in slurm.conf)?", src->path);
		else if (hint)
			snprintf(why, whylen, "%s: %s", src->path, hint);
		else
			snprintf(why, whylen, "%s: HTTP status %ld", src->path, f->http_status);
		return VERDICT_STATUS;
	}
	if (f->len == 0 && !src->empty_ok) {
		snprintf(why, whylen, "%s: empty answer (%s)", src->path, upstreams[src->upstream].empty_hint);
		return VERDICT_EMPTY;
	}
	if (f->malformed && !strcmp(src->parser->at, "byte")) { /* JSON: a document not what it should be */
		snprintf(why, whylen, "%s: unusable JSON, %zu malformed item(s), first at byte %zu: %s", src->path, f->malformed,
			 f->first_line, f->first_reason ? f->first_reason : "");
		return VERDICT_MALFORMED;
	}
	if (f->malformed) {
		snprintf(why, whylen, "%s: %zu malformed line(s), first at line %zu: %s", src->path, f->malformed,
			 f->first_line, f->first_reason ? f->first_reason : "");
		return VERDICT_MALFORMED;
	}
	if (f->exporter[0] && src->upstream == UPSTREAM_SLURMCTLD) {
		snprintf(why, whylen, "%s: an exporter's page, not slurmctld's (it has %s): --slurmctld.url must be "
			 "slurmctld's own listener, http://HOST:SlurmctldPort, not the old exporter's or the shim's", src->path,
			 f->exporter);
		return VERDICT_EXPORTER;
	}
	if (f->len && !f->nnamed && !src->names_optional) {
		/* not slurmctld's empty "nothing to report" answer, and not a single family either
		 * (a proxy's page, a stray comment): nothing can be computed from it */
		snprintf(why, whylen, "%s: the answer (%zu bytes) names no metric family", src->path, f->len);
		return VERDICT_NO_FAMILY;
	}
	return VERDICT_OK;
}

int source_is_exporter_family(const char *name, size_t n)
{
	static const char *const prefixes[] = { "go_", "process_", "promhttp_", "slurm_exporter_" };
	/* the legacy families (vpenso's, kept by the SckyzO fork) that no slurmctld release has a family
	 * of the same name for (every 25.11 and 26.05 capture is still usable: test_golden replays them) */
	static const char *const legacy[] = { "slurm_cpus_alloc", "slurm_cpus_idle", "slurm_cpus_other", "slurm_cpus_total",
					      "slurm_node_cpu_alloc", "slurm_scheduler_threads", "slurm_queue_pending",
					      "slurm_queue_running" };
	for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++)
		if (n >= strlen(prefixes[i]) && !memcmp(name, prefixes[i], strlen(prefixes[i])))
			return 1;
	for (size_t i = 0; i < sizeof(legacy) / sizeof(legacy[0]); i++)
		if (n == strlen(legacy[i]) && !memcmp(name, legacy[i], n))
			return 1;
	return 0;
}
