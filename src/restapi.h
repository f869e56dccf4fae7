/* restapi.h: the slurmrestd API version ("v0.0.44") put for "{version}" in the slurmrestd sources'
 * paths (source.h): the fixed --slurmrestd.api-version, or else the newest version that both this
 * shim's converter (slurmrestd.h) and the server know, learnt once from the server's /openapi/v3
 * document (fetch.c fetches it) and remembered for the life of the process; until a discovery
 * succeeds, every fetch of slurmrestd tries again.
 * Thread-safe: concurrent fetches may read and learn at the same time (one mutex inside). */
#ifndef SHIM_RESTAPI_H
#define SHIM_RESTAPI_H

#include <stddef.h>

#define RESTAPI_VERSION_MAX 16   /* "v0.0.44" and its NUL, with room */

struct restapi;

/* fixed: a version restapi_is_known() accepts, or NULL to discover it. */
struct restapi *restapi_new(const char *fixed);
void restapi_free(struct restapi *ra); /* NULL: nothing */
/* Whether the converter reads version v ("v0.0.41" to "v0.0.44"). */
int restapi_is_known(const char *v);
/* The versions the converter reads, for messages: "v0.0.41 to v0.0.44". */
const char *restapi_known_text(void);
/* The version to use into out (RESTAPI_VERSION_MAX bytes): 0, or -1 when none is known yet. */
int restapi_version(struct restapi *ra, char *out);
/* Learn the version from an /openapi/v3 document (len bytes): the newest known version among its
 * "paths" ("/slurm/v0.0.44/nodes/"...). 0, or -1 with why (not JSON, no known version). */
int restapi_learn(struct restapi *ra, const char *doc, size_t len, char *why, size_t whylen);

#endif
