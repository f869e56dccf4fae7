/* restapi.c: see restapi.h. */
#include "restapi.h"
#include "xmalloc.h"

#include <jansson.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The data_parser versions slurmrestd.c reads, oldest first. */
static const char *const known[] = { "v0.0.41", "v0.0.42", "v0.0.43", "v0.0.44" };
#define NKNOWN (sizeof(known) / sizeof(known[0]))

struct restapi {
	pthread_mutex_t mu;
	char version[RESTAPI_VERSION_MAX]; /* "": not known yet */
};

struct restapi *restapi_new(const char *fixed)
{
	struct restapi *ra = xcalloc(1, sizeof(*ra));
	pthread_mutex_init(&ra->mu, NULL);
	if (fixed)
		snprintf(ra->version, sizeof(ra->version), "%s", fixed);
	return ra;
}

void restapi_free(struct restapi *ra)
{
	if (!ra)
		return;
	pthread_mutex_destroy(&ra->mu);
	free(ra);
}

/* The index of v in known[], or -1. */
static int known_index(const char *v, size_t n)
{
	for (size_t i = 0; i < NKNOWN; i++)
		if (strlen(known[i]) == n && !memcmp(known[i], v, n))
			return (int)i;
	return -1;
}

int restapi_is_known(const char *v)
{
	return known_index(v, strlen(v)) >= 0;
}

const char *restapi_known_text(void)
{
	return "v0.0.41 to v0.0.44";
}

int restapi_version(struct restapi *ra, char *out)
{
	pthread_mutex_lock(&ra->mu);
	memcpy(out, ra->version, RESTAPI_VERSION_MAX);
	pthread_mutex_unlock(&ra->mu);
	return out[0] ? 0 : -1;
}

/* The known version a path names ("/slurm/v0.0.44/..." -> its index), or -1. */
static int path_version(const char *path)
{
	static const char pre[] = "/slurm/";
	if (strncmp(path, pre, sizeof(pre) - 1))
		return -1;
	const char *v = path + sizeof(pre) - 1;
	return known_index(v, strcspn(v, "/"));
}

int restapi_learn(struct restapi *ra, const char *doc, size_t len, char *why, size_t whylen)
{
	json_error_t err;
	json_t *root = json_loadb(doc, len, 0, &err);
	json_t *paths = json_object_get(root, "paths");
	const char *key;
	json_t *val;
	int best = -1, rc = -1;

	if (!json_is_object(paths)) {
		snprintf(why, whylen, "/openapi/v3: %s", root ? "no \"paths\" object" : "not a JSON document");
		goto out;
	}
	json_object_foreach(paths, key, val) {
		int v = path_version(key);
		if (v > best)
			best = v;
	}
	if (best < 0) {
		snprintf(why, whylen, "/openapi/v3: no /slurm/ version this shim reads (%s); set --slurmrestd.api-version",
			 restapi_known_text());
		goto out;
	}
	pthread_mutex_lock(&ra->mu);
	snprintf(ra->version, sizeof(ra->version), "%s", known[best]);
	pthread_mutex_unlock(&ra->mu);
	rc = 0;
out:
	json_decref(root);
	return rc;
}
