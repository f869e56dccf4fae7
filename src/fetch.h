/* fetch.h: libcurl client for slurmctld's metrics endpoints.
 * Fetches the requested endpoints in parallel (one curl multi, one connection each: slurmctld
 * closes after every answer), follows a 303 from a standby controller once, caps the body size and
 * the time, and hands back finished payloads. */
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
/* Read the token file (first line, trimmed). Returns a new string or NULL with *err set. */
char *fetch_read_token(const char *path, char *err, size_t errlen);

#endif
