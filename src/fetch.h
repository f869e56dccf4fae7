/* fetch.h: libcurl client for the sources' upstreams (source.h).
 * Fetches the requested sources in parallel (one curl multi, one connection each: slurmctld
 * closes after every answer), each with its upstream's timeout, body cap and credentials, and
 * records what went wrong in the payload (payload_fault) and how it was framed; finished payloads
 * are judged by source_verdict. The token and user headers of an upstream go only to its
 * configured origins: slurmrestd's base_url (a redirect elsewhere is followed without them, one
 * from https to http is refused), slurmctld's configured controllers.
 * slurmctld has one fetch path: its base_url is a list of controllers (a single URL is a list of
 * one), held at run time by the scraper's struct upstream_rt (controllers.h). All its sources of
 * one call come from one controller, tried in controllers_order() until one answers usably as
 * primary (fetch_ctld.c): a transport failure, a standby's 303 or 503, or an answer of which
 * nothing is usable (500, 404, 401, an empty or cut 200) moves on. A 303 to a configured
 * controller makes it the next tried; with a single URL, a 303's origin is learnt as a controller
 * and tried next, without the credentials; no other Location is requested. Each payload records
 * its controller.
 * Ownership: upstream_rt_new borrows cfg (it must outlive the object); fetch_sources returns new
 * payload references in out. */
#ifndef SHIM_FETCH_H
#define SHIM_FETCH_H

#include <stddef.h>

#include "payload.h"

void fetch_global_init(void);   /* once, before any thread starts */
/* Shutdown: every transfer in flight, in any thread, ends within 0.2 s as failed ("shutting down"),
 * and every later one fails at once, so that a long timeout (a /jobs fetch may be given minutes)
 * never holds the exit; for good (the process is exiting). */
void fetch_stop_all(void);
int fetch_stopping(void);       /* 1 once fetch_stop_all was called */

/* A scraper's upstreams at run time: cfg[UPSTREAM_COUNT] (borrowed: it must outlive the object,
 * and is never changed), slurmctld's base_url split into its controllers once. */
struct upstream_rt;
struct upstream_rt *upstream_rt_new(const struct upstream_config cfg[UPSTREAM_COUNT]);
void upstream_rt_free(struct upstream_rt *u); /* NULL: nothing */
/* slurmctld's controllers, or NULL (no base_url). */
struct controllers *upstream_rt_controllers(const struct upstream_rt *u);

/* out[id] receives a new reference for every source in mask (bit 1 << id), NULL for the others,
 * each parsed as it arrives and keeping the families keep() wants, for mapping generation gen (see
 * payload_new). Each upstream's timeout bounds each of its sources' transfers, a redirect and
 * every controller tried included (timeout > 0: this call's sources get that many seconds instead).
 * hint: the monotonic time by which the caller that started the
 * fetch wants its answer (0: none); a controller that has sent nothing by its share of it has the
 * next one asked alongside, so that a hung controller does not use the caller's whole time. */
void fetch_sources(struct upstream_rt *u, unsigned mask, unsigned gen, expo_keep_fn keep, void *ctx, double hint,
		   double timeout, struct payload *out[SRC_COUNT]);
enum fetch_redirect {
	FETCH_REDIRECT_SAME_ORIGIN,  /* follow with the credentials */
	FETCH_REDIRECT_OTHER_ORIGIN, /* follow without them */
	FETCH_REDIRECT_REFUSE,       /* not an absolute http(s) URL, or https to http */
};
/* What to do with a redirect from a request to base (any URL of the configured origin) to target
 * (absolute). Origins compare scheme and host case-insensitively and ports with the scheme's
 * default filled in (http 80, https 443); userinfo is ignored. */
enum fetch_redirect fetch_redirect_check(const char *base, const char *target);

#endif
