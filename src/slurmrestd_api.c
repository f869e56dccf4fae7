/* slurmrestd_api.c: see slurmrestd_api.h. */
#include "slurmrestd_api.h"
#include "jsonfeed.h"
#include "xmalloc.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The data_parser versions slurmrestd.c reads, oldest first: v0.0.41-v0.0.44 (Slurm 25.11), v0.0.45
 * (26.05) and v0.0.46 (the development branch). The fields read are the same in all six; what
 * v0.0.45/v0.0.46 changed is beside the reader (docs/mapping.md, "slurmrestd's documents"). */
static const char *const known[] = { "v0.0.41", "v0.0.42", "v0.0.43", "v0.0.44", "v0.0.45", "v0.0.46" };
#define NKNOWN (sizeof(known) / sizeof(known[0]))
#define PATH_KEY_MAX 256 /* longer keys of "paths" are cut (jsonfeed.h): no version path is that long */

struct slurmrestd_api {
	pthread_mutex_t mu;
	pthread_mutex_t discovery;         /* held while /openapi/v3 is read */
	char version[SLURMRESTD_API_VERSION_MAX]; /* "": not known yet */
	int fixed;
	int failures;                      /* discoveries failed in a row */
	double next_try;                   /* monotonic: not before */
	char why[300];                     /* the last failure */
	long refused;                      /* its HTTP status when it refused the token sent, or 0 */
};

struct slurmrestd_api *slurmrestd_api_new(const char *fixed)
{
	struct slurmrestd_api *ra = xcalloc(1, sizeof(*ra));
	pthread_mutex_init(&ra->mu, NULL);
	pthread_mutex_init(&ra->discovery, NULL);
	if (fixed)
		snprintf(ra->version, sizeof(ra->version), "%s", fixed);
	ra->fixed = fixed != NULL;
	return ra;
}

void slurmrestd_api_free(struct slurmrestd_api *ra)
{
	if (!ra)
		return;
	pthread_mutex_destroy(&ra->discovery);
	pthread_mutex_destroy(&ra->mu);
	free(ra);
}

void slurmrestd_api_discovery_begin(struct slurmrestd_api *ra)
{
	pthread_mutex_lock(&ra->discovery);
}

void slurmrestd_api_discovery_end(struct slurmrestd_api *ra)
{
	pthread_mutex_unlock(&ra->discovery);
}

/* The index of v in known[], or -1. */
static int known_index(const char *v, size_t n)
{
	for (size_t i = 0; i < NKNOWN; i++)
		if (strlen(known[i]) == n && !memcmp(known[i], v, n))
			return (int)i;
	return -1;
}

int slurmrestd_api_is_known(const char *v)
{
	return known_index(v, strlen(v)) >= 0;
}

const char *slurmrestd_api_known_text(void)
{
	return "v0.0.41 to v0.0.46";
}

int slurmrestd_api_version(struct slurmrestd_api *ra, char *out)
{
	pthread_mutex_lock(&ra->mu);
	memcpy(out, ra->version, SLURMRESTD_API_VERSION_MAX);
	pthread_mutex_unlock(&ra->mu);
	return out[0] ? 0 : -1;
}

int slurmrestd_api_due(struct slurmrestd_api *ra, double now, char *why, size_t whylen, long *refused_status)
{
	pthread_mutex_lock(&ra->mu);
	int due = !ra->failures || now >= ra->next_try;
	*refused_status = due ? 0 : ra->refused;
	if (!due)
		snprintf(why, whylen, "%s (asked again in %.0f s)", ra->why, ra->next_try - now + 0.5);
	pthread_mutex_unlock(&ra->mu);
	return due;
}

void slurmrestd_api_failed(struct slurmrestd_api *ra, double now, const char *why, long refused_status)
{
	pthread_mutex_lock(&ra->mu);
	double wait = SLURMRESTD_API_BACKOFF_MIN;
	for (int i = 0; i < ra->failures && wait < SLURMRESTD_API_BACKOFF_MAX; i++)
		wait *= 2;
	ra->failures++;
	ra->next_try = now + (wait < SLURMRESTD_API_BACKOFF_MAX ? wait : SLURMRESTD_API_BACKOFF_MAX);
	snprintf(ra->why, sizeof(ra->why), "%s", why);
	ra->refused = refused_status;
	pthread_mutex_unlock(&ra->mu);
}

int slurmrestd_api_forget(struct slurmrestd_api *ra, const char *v)
{
	pthread_mutex_lock(&ra->mu);
	int forget = !ra->fixed && !strcmp(ra->version, v);
	if (forget)
		ra->version[0] = '\0';
	pthread_mutex_unlock(&ra->mu);
	return forget;
}

/* ---- the /openapi/v3 document, streaming ---- */

struct slurmrestd_api_doc {
	struct jsonfeed jf;
	int depth;
	int key_paths;   /* the top-level key being read is "paths" */
	int in_paths;    /* depth 2 is the "paths" object */
	int done;        /* it closed: every key of it was seen */
	int best;        /* index into known[], -1: none */
};

/* The known version a path names ("/slurm/v0.0.44/..." -> its index), or -1. */
static int path_version(const unsigned char *k, size_t n)
{
	static const char pre[] = "/slurm/";
	if (n < sizeof(pre) - 1 || memcmp(k, pre, sizeof(pre) - 1))
		return -1;
	const char *v = (const char *)k + sizeof(pre) - 1;
	size_t vn = 0;
	while (vn < n - (sizeof(pre) - 1) && v[vn] != '/')
		vn++;
	return known_index(v, vn);
}

/* A value begins at the current depth: "paths" must hold an object. */
static int doc_value(struct slurmrestd_api_doc *d, int is_map)
{
	if (d->depth == 1 && d->key_paths) {
		if (!is_map) {
			jsonfeed_fail(&d->jf, "\"paths\" is not an object");
			return 0;
		}
		d->in_paths = 1;
	}
	return 1;
}

static int doc_scalar(void *ctx)
{
	return doc_value(ctx, 0);
}

static int doc_bool(void *ctx, int b)
{
	(void)b;
	return doc_value(ctx, 0);
}

static int doc_number(void *ctx, const char *s, size_t n)
{
	(void)s;
	(void)n;
	return doc_value(ctx, 0);
}

static int doc_string(void *ctx, const unsigned char *s, size_t n)
{
	struct slurmrestd_api_doc *d = ctx;
	(void)s;
	(void)n;
	return doc_value(d, 0);
}

static int doc_key(void *ctx, const unsigned char *k, size_t n)
{
	struct slurmrestd_api_doc *d = ctx;
	int cut = jsonfeed_is_long(&d->jf, n);
	if (d->depth == 1)
		d->key_paths = !cut && n == 5 && !memcmp(k, "paths", 5);
	if (d->depth == 2 && d->in_paths && !cut) {
		int v = path_version(k, n);
		if (v > d->best)
			d->best = v;
	}
	return 1;
}

static int doc_open(struct slurmrestd_api_doc *d, int is_map)
{
	if (!doc_value(d, is_map))
		return 0;
	d->depth++;
	return 1;
}

static int doc_start_map(void *ctx)
{
	return doc_open(ctx, 1);
}

static int doc_start_array(void *ctx)
{
	return doc_open(ctx, 0);
}

static int doc_end(void *ctx)
{
	struct slurmrestd_api_doc *d = ctx;
	if (d->depth-- == 2 && d->in_paths) {
		d->done = 1; /* every version is known: the rest of the document is not needed */
		jsonfeed_fail(&d->jf, "done");
		return 0;
	}
	return 1;
}

static const yajl_callbacks doc_callbacks = {
	doc_scalar, doc_bool, NULL, NULL, doc_number, doc_string,
	doc_start_map, doc_key, doc_end, doc_start_array, doc_end,
};

struct slurmrestd_api_doc *slurmrestd_api_doc_new(void)
{
	struct slurmrestd_api_doc *d = xcalloc(1, sizeof(*d));
	d->best = -1;
	jsonfeed_init(&d->jf, &doc_callbacks, d, PATH_KEY_MAX);
	return d;
}

int slurmrestd_api_doc_feed(struct slurmrestd_api_doc *d, const char *data, size_t n)
{
	return jsonfeed_feed(&d->jf, data, n) < 0 ? 1 : 0;
}

int slurmrestd_api_doc_learn(struct slurmrestd_api *ra, struct slurmrestd_api_doc *d, char *why, size_t whylen)
{
	int rc = -1;
	if (!d->done && jsonfeed_end(&d->jf) < 0)
		snprintf(why, whylen, "/openapi/v3: %s (at byte %zu)", d->jf.why, d->jf.why_at);
	else if (!d->done)
		snprintf(why, whylen, "/openapi/v3: no \"paths\" object");
	else if (d->best < 0)
		snprintf(why, whylen, "/openapi/v3: no /slurm/ version this shim reads (%s); set --slurmrestd.api-version",
			 slurmrestd_api_known_text());
	else
		rc = 0;
	if (rc == 0) {
		pthread_mutex_lock(&ra->mu);
		snprintf(ra->version, sizeof(ra->version), "%s", known[d->best]);
		ra->failures = 0;
		pthread_mutex_unlock(&ra->mu);
	}
	slurmrestd_api_doc_free(d);
	return rc;
}

void slurmrestd_api_doc_free(struct slurmrestd_api_doc *d)
{
	if (!d)
		return;
	jsonfeed_free(&d->jf);
	free(d);
}

int slurmrestd_api_learn(struct slurmrestd_api *ra, const char *doc, size_t len, char *why, size_t whylen)
{
	struct slurmrestd_api_doc *d = slurmrestd_api_doc_new();
	slurmrestd_api_doc_feed(d, doc, len);
	return slurmrestd_api_doc_learn(ra, d, why, whylen);
}
