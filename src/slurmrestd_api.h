/* slurmrestd_api.h: the slurmrestd API version ("v0.0.44") put for "{version}" in the slurmrestd sources'
 * paths (source.h): the fixed --slurmrestd.api-version, or else the newest version that both this
 * shim's converter (slurmrestd.h) and the server know, learnt from the server's /openapi/v3 document
 * (fetch.c fetches it). A discovered version is kept until slurmrestd answers 404 to a path with it
 * (slurmrestd_api_forget: the next fetch asks /openapi/v3 again). A failed discovery is not tried again
 * before a back-off (SLURMRESTD_API_BACKOFF_MIN seconds, doubled at each failure in a row up to
 * SLURMRESTD_API_BACKOFF_MAX): /openapi/v3 is tens of MB on a Slurm with every plugin.
 * The document is read streaming (slurmrestd_api_doc_*): only the keys of its "paths" object are looked
 * at, each bounded, and the reading stops when that object closes; memory does not follow its size.
 * Thread-safe: concurrent fetches may read and learn at the same time (one mutex inside).
 * Ownership (beyond the rule): slurmrestd_api_doc_learn frees the reader it is given. */
#ifndef SHIM_SLURMRESTD_API_H
#define SHIM_SLURMRESTD_API_H

#include <stddef.h>

#define SLURMRESTD_API_VERSION_MAX 16   /* "v0.0.44" and its NUL, with room */
#define SLURMRESTD_API_BACKOFF_MIN 1.0  /* seconds */
#define SLURMRESTD_API_BACKOFF_MAX 300.0

struct slurmrestd_api;
struct slurmrestd_api_doc;

/* fixed: a version slurmrestd_api_is_known() accepts, or NULL to discover it. */
struct slurmrestd_api *slurmrestd_api_new(const char *fixed);
void slurmrestd_api_free(struct slurmrestd_api *ra); /* NULL: nothing */
/* Whether the converter reads version v ("v0.0.41" to "v0.0.46"). */
int slurmrestd_api_is_known(const char *v);
/* The versions the converter reads, for messages: "v0.0.41 to v0.0.46". */
const char *slurmrestd_api_known_text(void);
/* One discovery at a time (fetches of one upstream run on several workers): begin waits until no
 * other is under way; end lets the next one go. */
void slurmrestd_api_discovery_begin(struct slurmrestd_api *ra);
void slurmrestd_api_discovery_end(struct slurmrestd_api *ra);
/* The version to use into out (SLURMRESTD_API_VERSION_MAX bytes): 0, or -1 when none is known yet. */
int slurmrestd_api_version(struct slurmrestd_api *ra, char *out);

/* Discovery may be tried at monotonic time now: 1; or 0 within the back-off after a failure, with
 * the failure and the seconds to the next try in why, and the failure's refused_status. */
int slurmrestd_api_due(struct slurmrestd_api *ra, double now, char *why, size_t whylen, long *refused_status);
/* A discovery failed at time now, for why; refused_status: the HTTP status that refused the token
 * sent, or 0 (both kept for slurmrestd_api_due). */
void slurmrestd_api_failed(struct slurmrestd_api *ra, double now, const char *why, long refused_status);
/* slurmrestd answered 404 to a path with version v: a discovered v is forgotten (asked again next
 * time, no back-off); a fixed one is kept. Returns 1 when it was forgotten. */
int slurmrestd_api_forget(struct slurmrestd_api *ra, const char *v);

/* An /openapi/v3 answer read as it arrives: feed returns 1 once its outcome is known (the "paths"
 * object closed, or the text cannot be used): the rest need not come; else 0. */
struct slurmrestd_api_doc *slurmrestd_api_doc_new(void);
int slurmrestd_api_doc_feed(struct slurmrestd_api_doc *d, const char *data, size_t n);
/* Learn the version from the document read (its newest known version among its "paths":
 * "/slurm/v0.0.44/nodes/"...) and free d. 0, or -1 with why (not JSON, no known version). */
int slurmrestd_api_doc_learn(struct slurmrestd_api *ra, struct slurmrestd_api_doc *d, char *why, size_t whylen);
void slurmrestd_api_doc_free(struct slurmrestd_api_doc *d); /* instead of learning from it; NULL: nothing */
/* The same from a whole document of len bytes. */
int slurmrestd_api_learn(struct slurmrestd_api *ra, const char *doc, size_t len, char *why, size_t whylen);

#endif
