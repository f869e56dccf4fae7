/* fetch.h: libcurl client for the sources' upstreams (source.h).
 * Fetches the requested sources in parallel (one curl multi, one connection each: slurmctld
 * closes after every answer), each from its upstream's base_url with that upstream's timeout, body
 * cap and credentials; follows a 303 from a standby controller once; records what went wrong in
 * the payload (payload_fault) and hands back finished payloads (source_verdict judges them). The
 * token and user headers of an upstream go only to the origin (scheme, host, port) of its
 * base_url: a redirect to another origin is followed without them, and a redirect from https to
 * http is refused.
 * slurmctld's base_url may list several controllers, split once into upstream_config.ctl
 * (controllers.h; scraper_new does it): then all of its sources of one call come from one
 * controller, tried in controllers_order() until one answers as primary (a transport failure, 303
 * or 503 moves on; a 303 to a configured controller makes it the next tried; no other Location is
 * requested), and each payload records its controller.
 * Ownership: fetch_sources returns new payload references in out. */
#ifndef SHIM_FETCH_H
#define SHIM_FETCH_H

#include <stddef.h>

#include "payload.h"

void fetch_global_init(void);   /* once, before any thread starts */
/* out[id] receives a new reference for every source in mask (bit 1 << id), NULL for the others,
 * each parsed as it arrives and keeping the families keep() wants, for mapping generation gen (see
 * payload_new). cfg[u] configures upstream u (its timeout bounds each of its sources' transfers,
 * a redirect included). */
void fetch_sources(const struct upstream_config cfg[UPSTREAM_COUNT], unsigned mask, unsigned gen, expo_keep_fn keep,
		   void *ctx, struct payload *out[SRC_COUNT]);
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
