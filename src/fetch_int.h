/* fetch_int.h: the transfer engine (fetch_xfer.c), used by fetch.c and fetch_ctld.c (slurmctld's
 * controllers); not for other modules. Calls go one way: fetch.c to fetch_ctld.c, both to
 * fetch_xfer.c, which calls neither. One fetch_sources call is one run: one curl multi, each
 * upstream's credentials read once, every transfer parsed as it arrives into its payload. */
#ifndef SHIM_FETCH_INT_H
#define SHIM_FETCH_INT_H

#include <curl/curl.h>

#include "fetch.h"
#include "slurmrestd_api.h"

/* The runtime state of a scraper's upstreams (fetch.h): their configuration, borrowed and never
 * changed, slurmctld's controllers (NULL when slurmctld has no base_url) and slurmrestd's API
 * version (the fixed one, or the one learnt from /openapi/v3 and its back-off). */
struct upstream_rt {
	const struct upstream_config *cfg; /* [UPSTREAM_COUNT] */
	struct controllers *ctl;
	struct slurmrestd_api *ra;
};

/* One upstream's credentials, for one fetch_sources call. */
struct cred {
	const struct upstream_config *cfg;
	const struct upstream *up;
	struct slurmrestd_api *ra;    /* the runtime upstream's API version (upstream_rt) */
	struct curl_slist *hdrs;      /* with the token and user: only for the configured origin */
	struct curl_slist *anon_hdrs; /* without them: for any other origin */
	char *token;
	char tokerr[400];
	long timeout_ms;              /* for each source, redirect included */
	long connect_ms;              /* for each connection attempt; 0: timeout_ms */
	int used;
	int api;                      /* slurmrestd's API version: 0 not looked up, 1 in version, -1 failed (api_why) */
	long api_refused;             /* the discovery's HTTP status when it refused the token sent, or 0 */
	char version[SLURMRESTD_API_VERSION_MAX];
	char api_why[300];
};

/* One source's transfer. */
struct xfer {
	struct payload *p;
	struct cred *c;          /* its upstream's */
	const char *base;        /* the base URL it asks: a controller's, or its upstream's */
	struct curl_slist *hdrs; /* the headers it was started with (the credentials, or none) */
	int follow_any;          /* a 3xx to another origin is followed (slurmrestd); else only one to
				    the same origin (a controller: every source from one) */
	int *pending;            /* slurmctld: its controller try's count of unfinished transfers */
	int *responded;          /* slurmctld: set when a status line came */
	size_t max_body;
	long timeout_ms;         /* its own, redirect included */
	CURL *h;
	char errbuf[CURL_ERROR_SIZE];
	CURLcode rc;             /* how the transfer ended */
	int too_big;
	int stopped;             /* the answer was known unusable: the transfer was stopped on purpose */
	int withheld;            /* followed to another origin: without the token */
	int body_seen;           /* a body byte arrived: the head was read whole */
	int redirected;          /* the one redirect allowed was followed */
	int headers_done;        /* the last response's header block ended (its blank line came) */
	int chunked;             /* the last response's body is chunked */
	double t0;
};

struct run {
	CURLM *m;
	struct cred c[UPSTREAM_COUNT];
	double timeout;               /* seconds for every upstream of this run; 0: each one's own */
};

/* Upstream u's credentials for this run, read on its first use. */
struct cred *fetch_cred(struct run *r, const struct upstream_rt *rt, enum upstream_id u);
/* Start source id's transfer on x (zeroed by the caller, follow_any, pending and responded set)
 * from base with x->hdrs, within timeout_ms; a payload that fails before its transfer starts is
 * finished at once (x->h stays NULL). */
void fetch_start(struct run *r, struct xfer *x, enum source_id id, const char *base, long timeout_ms, unsigned gen,
		 expo_keep_fn keep, void *ctx);
/* Move the transfers on and finish the ones that end; waits at most wait_ms for activity. Returns
 * the number still running; 0 once fetch_stop_all was called (the caller's fetch_end fails them). */
int fetch_step(struct run *r, long wait_ms);
/* Take x's transfer out of the run (a payload it did not finish is finished as failed). */
void fetch_end(struct run *r, struct xfer *x);
/* A finished payload of source id that failed with why, started at t0. */
struct payload *fetch_failed(enum source_id id, unsigned gen, expo_keep_fn keep, void *ctx, const char *why, double t0);
/* The origin of an absolute http(s) URL as a base URL ("http://host:6817"), into out; -1 when it
 * does not parse or does not fit. */
int fetch_origin_base(const char *url, char *out, size_t len);
/* The end of a run: its curl multi cleaned up, the credentials it read freed. */
void fetch_run_end(struct run *r);

/* slurmctld's sources in mask, from one of its controllers (fetch_ctld.c). */
void fetch_ctld(struct run *r, const struct upstream_rt *u, unsigned mask, unsigned gen, expo_keep_fn keep, void *ctx,
		double hint, struct payload *out[SRC_COUNT]);

#endif
