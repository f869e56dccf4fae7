/* source.c: see source.h. */
#include "source.h"
#include "expo.h"
#include "payload.h"
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

/* What an HTTP status from slurmrestd means, for the operator. */
static const char *slurmrestd_status_hint(long code)
{
	switch (code) {
	case 401:
	case 403:
		return "token expired or not accepted: renew --slurmrestd.auth.token-file (scontrol token ...)";
	case 404:
		return "404 Not Found: does this slurmrestd serve --slurmrestd.api-version (slurmrestd -d list)?";
	default:
		return NULL;
	}
}

const struct upstream upstreams[UPSTREAM_COUNT] = {
	[UPSTREAM_SLURMCTLD] = { "slurmctld", "--slurmctld", "Accept: text/plain", slurmctld_status_hint,
				 "is MetricsType=metrics/openmetrics set in slurm.conf?", 0 },
	[UPSTREAM_SLURMRESTD] = { "slurmrestd", "--slurmrestd", "Accept: application/json", slurmrestd_status_hint,
				  "slurmrestd answers every document with JSON", 1 },
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

static const struct source_parser openmetrics_parser = { om_begin, om_feed, om_end, om_discard };

/* slurmrestd's JSON documents: the streaming converter of slurmrestd.h, one begin per document. */
static const struct source_parser rest_nodes_parser = { rest_begin_nodes, rest_feed, rest_end, rest_discard };
static const struct source_parser rest_shares_parser = { rest_begin_shares, rest_feed, rest_end, rest_discard };
static const struct source_parser rest_jobs_parser = { rest_begin_jobs, rest_feed, rest_end, rest_discard };
static const struct source_parser rest_diag_parser = { rest_begin_diag, rest_feed, rest_end, rest_discard };

static const char *const partitions_names[] = { "slurm_partition", NULL };
static const char *const nodes_names[] = { "slurm_node_", "slurm_nodes", NULL };
static const char *const ua_names[] = { "slurm_user_", "slurm_account_", NULL };
static const char *const jobs_names[] = { "slurm_jobs", NULL };
static const char *const rest_nodes_names[] = { "slurmrestd_node_", "slurmrestd_partition_", NULL };
static const char *const rest_shares_names[] = { "slurmrestd_share_", NULL };
static const char *const rest_jobs_names[] = { "slurmrestd_jobs", NULL };
static const char *const rest_diag_names[] = { "slurmrestd_diag_", NULL };

const struct source sources[SRC_COUNT] = {
	[SRC_JOBS] = { "jobs", "/metrics/jobs", "metrics_jobs.txt", UPSTREAM_SLURMCTLD, &openmetrics_parser, 0, -1,
		       jobs_names, 0, 0, 1 },
	[SRC_NODES] = { "nodes", "/metrics/nodes", "metrics_nodes.txt", UPSTREAM_SLURMCTLD, &openmetrics_parser, 0, -1,
			nodes_names, 0, 0, 0 },
	[SRC_PARTITIONS] = { "partitions", "/metrics/partitions", "metrics_partitions.txt", UPSTREAM_SLURMCTLD,
			     &openmetrics_parser, 0, -1, partitions_names, 0, 0, 1 }, /* and the node write lock */
	[SRC_SCHEDULER] = { "scheduler", "/metrics/scheduler", "metrics_scheduler.txt", UPSTREAM_SLURMCTLD,
			    &openmetrics_parser, 0, -1, NULL, 1, 0, 0 },
	/* An empty jobs-users-accts answer means "no jobs in memory" only if slurmctld serves metrics
	 * at all: when /metrics/nodes failed too (MetricsType unset answers every endpoint with an
	 * empty 200), the empty answer proves nothing. The voucher is nodes, not jobs: the shipped
	 * table no longer fetches /metrics/jobs (its job-state rows sum this answer's accounts), and
	 * the scrape fetches a needed source's voucher with it (scrape.c). */
	[SRC_UA] = { "jobs-users-accts", "/metrics/jobs-users-accts", "metrics_jobs-users-accts.txt",
		     UPSTREAM_SLURMCTLD, &openmetrics_parser, 1, SRC_NODES, ua_names, 0, 0, 1 },
	/* slurmrestd: an empty body is never an answer (even no jobs is a JSON document), but a good
	 * document may hold no record (no jobs, no shares) and so name no family */
	[SRC_REST_NODES] = { "slurmrestd-nodes", "/slurm/{version}/nodes", "rest_nodes.json", UPSTREAM_SLURMRESTD,
			     &rest_nodes_parser, 0, -1, rest_nodes_names, 0, 1, 0 },
	[SRC_REST_SHARES] = { "slurmrestd-shares", "/slurm/{version}/shares", "rest_shares.json", UPSTREAM_SLURMRESTD,
			      &rest_shares_parser, 0, -1, rest_shares_names, 0, 1, 0 },
	[SRC_REST_JOBS] = { "slurmrestd-jobs", "/slurm/{version}/jobs", "rest_jobs.json", UPSTREAM_SLURMRESTD,
			    &rest_jobs_parser, 0, -1, rest_jobs_names, 0, 1, 1 }, /* the full job RPC */
	[SRC_REST_DIAG] = { "slurmrestd-diag", "/slurm/{version}/diag", "rest_diag.json", UPSTREAM_SLURMRESTD,
			    &rest_diag_parser, 0, -1, rest_diag_names, 0, 1, 0 },
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
		if ((mask & (1u << id)) && sources[id].empty_vouched_by >= 0)
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
	case FAULT_NO_TOKEN:
		if (f->http_status != 401)
			return NULL;
		snprintf(buf, len, "401 Unauthorized and no usable token: %s", f->detail);
		return buf;
	case FAULT_DEADLINE:
		return "scrape deadline passed while waiting for the fetch in flight";
	}
	return NULL;
}

enum source_verdict source_verdict(const struct source *src, const struct source_facts *f, char *why, size_t whylen)
{
	char buf[400];
	const char *fault = fault_text(src, f, buf, sizeof(buf));
	if (fault) {
		snprintf(why, whylen, "%s: %s", src->path, fault);
		return VERDICT_FAULT;
	}
	if (f->http_status && f->http_status != 200) {
		const struct upstream *up = &upstreams[src->upstream];
		const char *hint = up->status_hint ? up->status_hint(f->http_status) : NULL;
		if (hint)
			snprintf(why, whylen, "%s: %s", src->path, hint);
		else
			snprintf(why, whylen, "%s: HTTP status %ld", src->path, f->http_status);
		return VERDICT_STATUS;
	}
	if (f->len == 0 && !src->empty_ok) {
		snprintf(why, whylen, "%s: empty answer (%s)", src->path, upstreams[src->upstream].empty_hint);
		return VERDICT_EMPTY;
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

/* An empty answer that its voucher does not back: it proves nothing. */
static int unvouched(const struct payload *const p[SRC_COUNT], int id)
{
	int v = sources[id].empty_vouched_by;
	return p[id]->len == 0 && v >= 0 && p[v] && !p[v]->ok;
}

int source_usable(const struct payload *const p[SRC_COUNT], int up[SRC_COUNT])
{
	int any = 0;
	for (int id = 0; id < SRC_COUNT; id++) {
		up[id] = p[id] && p[id]->ok && !unvouched(p, id);
		any |= up[id];
	}
	return any;
}

const char *source_down_reason(const struct payload *const p[SRC_COUNT], enum source_id id, char *why, size_t whylen)
{
	if (!p[id]->ok)
		snprintf(why, whylen, "%s", p[id]->reason);
	else
		snprintf(why, whylen, "%s: empty answer, and %s failed: cannot tell \"no jobs\" from \"no metrics\"",
			 sources[id].path, sources[sources[id].empty_vouched_by].path);
	return why;
}
