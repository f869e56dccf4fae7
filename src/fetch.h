/* fetch.h: libcurl client for slurmctld's metrics endpoints.
 * Fetches the requested endpoints in parallel (one curl multi, one connection each: slurmctld
 * closes after every answer), follows a 303 from a standby controller once, caps the body size and
 * the time, and hands back finished payloads. The token and user headers go only to the origin
 * (scheme, host, port) of base_url: a redirect to another origin is followed without them, and a
 * redirect from https to http is refused. */
#ifndef SHIM_FETCH_H
#define SHIM_FETCH_H

#include <stddef.h>

#include "payload.h"

struct fetch_config {
	const char *base_url;     /* e.g. "http://localhost:6817" */
	double timeout;           /* seconds, per request */
	size_t max_body;          /* bytes */
	const char *token_file;   /* JWT for X-SLURM-USER-TOKEN, or NULL */
	const char *user;         /* X-SLURM-USER-NAME, or NULL */
};

void fetch_global_init(void);   /* once, before any thread starts */
/* out[ep] receives a new reference for every endpoint in mask, NULL for the others, each parsed
 * as it arrives and keeping the families keep() wants, for mapping generation gen (see
 * payload_new). timeout_s caps this call on top of cfg->timeout. */
void fetch_endpoints(const struct fetch_config *cfg, unsigned mask, double timeout_s, unsigned gen, expo_keep_fn keep,
		     void *ctx, struct payload *out[EP_COUNT]);
enum fetch_redirect {
	FETCH_REDIRECT_SAME_ORIGIN,  /* follow with the credentials */
	FETCH_REDIRECT_OTHER_ORIGIN, /* follow without them */
	FETCH_REDIRECT_REFUSE,       /* not an absolute http(s) URL, or https to http */
};
/* What to do with a redirect from a request to base (any URL of the configured origin) to target
 * (absolute). Origins compare scheme and host case-insensitively and ports with the scheme's
 * default filled in (http 80, https 443); userinfo is ignored. */
enum fetch_redirect fetch_redirect_check(const char *base, const char *target);
/* Read the token file (first line, trimmed). Returns a new string or NULL with *err set. */
char *fetch_read_token(const char *path, char *err, size_t errlen);

#endif
