/* restapi.h: the slurmrestd API version ("v0.0.44") put for "{version}" in the slurmrestd sources'
 * paths (source.h): the fixed --slurmrestd.api-version, or else the newest version that both this
 * shim's converter (slurmrestd.h) and the server know, learnt from the server's /openapi/v3 document
 * (fetch.c fetches it). A discovered version is kept until slurmrestd answers 404 to a path with it
 * (restapi_forget: the next fetch asks /openapi/v3 again). A failed discovery is not tried again
 * before a back-off (RESTAPI_BACKOFF_MIN seconds, doubled at each failure in a row up to
 * RESTAPI_BACKOFF_MAX): /openapi/v3 is tens of MB on a Slurm with every plugin.
 * The document is read streaming (restapi_doc_*): only the keys of its "paths" object are looked
 * at, each bounded, and the reading stops when that object closes; memory does not follow its size.
 * Thread-safe: concurrent fetches may read and learn at the same time (one mutex inside).
 * Ownership (beyond the rule): restapi_doc_learn frees the reader it is given. */
#ifndef SHIM_RESTAPI_H
#define SHIM_RESTAPI_H

#include <stddef.h>

#define RESTAPI_VERSION_MAX 16   /* "v0.0.44" and its NUL, with room */
#define RESTAPI_BACKOFF_MIN 1.0  /* seconds */
#define RESTAPI_BACKOFF_MAX 300.0

struct restapi;
struct restapi_doc;

/* fixed: a version restapi_is_known() accepts, or NULL to discover it. */
struct restapi *restapi_new(const char *fixed);
void restapi_free(struct restapi *ra); /* NULL: nothing */
/* Whether the converter reads version v ("v0.0.41" to "v0.0.44"). */
int restapi_is_known(const char *v);
/* The versions the converter reads, for messages: "v0.0.41 to v0.0.44". */
const char *restapi_known_text(void);
/* The version to use into out (RESTAPI_VERSION_MAX bytes): 0, or -1 when none is known yet. */
int restapi_version(struct restapi *ra, char *out);

/* Discovery may be tried at monotonic time now: 1; or 0 within the back-off after a failure, with
 * the failure and the seconds to the next try in why, and the failure's refused_status. */
int restapi_due(struct restapi *ra, double now, char *why, size_t whylen, long *refused_status);
/* A discovery failed at time now, for why; refused_status: the HTTP status that refused the token
 * sent, or 0 (both kept for restapi_due). */
void restapi_failed(struct restapi *ra, double now, const char *why, long refused_status);
/* slurmrestd answered 404 to a path with version v: a discovered v is forgotten (asked again next
 * time, no back-off); a fixed one is kept. Returns 1 when it was forgotten. */
int restapi_forget(struct restapi *ra, const char *v);

/* An /openapi/v3 answer read as it arrives: feed returns 1 once its outcome is known (the "paths"
 * object closed, or the text cannot be used): the rest need not come; else 0. */
struct restapi_doc *restapi_doc_new(void);
int restapi_doc_feed(struct restapi_doc *d, const char *data, size_t n);
/* Learn the version from the document read (its newest known version among its "paths":
 * "/slurm/v0.0.44/nodes/"...) and free d. 0, or -1 with why (not JSON, no known version). */
int restapi_doc_learn(struct restapi *ra, struct restapi_doc *d, char *why, size_t whylen);
void restapi_doc_free(struct restapi_doc *d); /* instead of learning from it; NULL: nothing */
/* The same from a whole document of len bytes. */
int restapi_learn(struct restapi *ra, const char *doc, size_t len, char *why, size_t whylen);

#endif
