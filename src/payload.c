/* payload.c: see payload.h. */
#include "payload.h"
#include "buf.h"
#include "log.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

static pthread_mutex_t ref_lock = PTHREAD_MUTEX_INITIALIZER;

double mono_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

struct payload *payload_new(enum endpoint ep)
{
	struct payload *p = xcalloc(1, sizeof(*p));
	p->refs = 1;
	p->ep = ep;
	expo_init(&p->expo);
	return p;
}

struct payload *payload_ref(struct payload *p)
{
	pthread_mutex_lock(&ref_lock);
	p->refs++;
	pthread_mutex_unlock(&ref_lock);
	return p;
}

void payload_unref(struct payload *p)
{
	int last;
	if (!p)
		return;
	pthread_mutex_lock(&ref_lock);
	last = --p->refs == 0;
	pthread_mutex_unlock(&ref_lock);
	if (!last)
		return;
	expo_free(&p->expo);
	free(p->body);
	free(p);
}

/* What an HTTP status from slurmctld means, for the operator. */
static const char *status_hint(long code)
{
	switch (code) {
	case 401:
		return "401 Unauthorized: Slurm 25.11 answers 401 to everyone when PrivateData is set in slurm.conf; "
		       "Slurm 26.05 wants a JWT (--slurmctld.auth.token-file) when PrivateData or MetricsAuthUsers is set";
	case 403:
		return "403 Forbidden: the token's user is not allowed (26.05: add it to MetricsAuthUsers, or use root/SlurmUser)";
	case 303:
		return "303 See Other: a standby controller redirected twice; point --slurmctld.url at the primary";
	case 404:
		return "404 Not Found: this slurmctld has no metrics endpoints (Slurm older than 25.11?)";
	case 503:
		return "503 Service Unavailable: standby controller without a primary address";
	default:
		return NULL;
	}
}

void payload_finish(struct payload *p, const char *transport_err)
{
	const struct endpoint_info *ep = &endpoints[p->ep];
	p->ok = 0;
	if (transport_err) {
		snprintf(p->reason, sizeof(p->reason), "%s: %s", ep->path, transport_err);
		return;
	}
	if (p->http_status && p->http_status != 200) {
		const char *hint = status_hint(p->http_status);
		if (hint)
			snprintf(p->reason, sizeof(p->reason), "%s: %s", ep->path, hint);
		else
			snprintf(p->reason, sizeof(p->reason), "%s: HTTP status %ld", ep->path, p->http_status);
		return;
	}
	if (p->len == 0 && !ep->empty_ok) {
		snprintf(p->reason, sizeof(p->reason),
			 "%s: empty answer (is MetricsType=metrics/openmetrics set in slurm.conf?)", ep->path);
		return;
	}
	p->ok = 1;
}

void payload_parse(struct payload *p, expo_keep_fn keep, void *ctx)
{
	const struct endpoint_info *ep = &endpoints[p->ep];
	if (!p->ok)
		return;
	p->expo.keep = keep;
	p->expo.keep_ctx = ctx;
	p->parse_errors = expo_parse(&p->expo, p->body ? p->body : "", p->len, 0);
	p->expo.keep = NULL; /* the filter's owner may go away; the payload stays */
	p->expo.keep_ctx = NULL;
	if (p->parse_errors) {
		p->ok = 0;
		const struct expo_error *e = &p->expo.errors[0];
		snprintf(p->reason, sizeof(p->reason), "%s: %zu malformed line(s), first at line %zu: %s", ep->path,
			 p->parse_errors, e->line, e->reason);
	}
}

struct payload *payload_replay(const char *dir, enum endpoint ep, size_t max_body)
{
	struct payload *p = payload_new(ep);
	char path[4096];
	FILE *f;
	struct buf b;
	char chunk[65536];
	size_t n;
	double t0 = mono_now();

	snprintf(path, sizeof(path), "%s/%s", dir, endpoints[ep].file);
	f = fopen(path, "rb");
	if (!f) {
		char why[300];
		snprintf(why, sizeof(why), "cannot read %.200s: %s", path, strerror(errno));
		payload_finish(p, why);
		return p;
	}
	buf_init(&b, max_body);
	struct stat st;
	if (fstat(fileno(f), &st) == 0 && st.st_size > 0)
		buf_reserve(&b, (size_t)st.st_size); /* one allocation of the right size */
	while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0)
		if (buf_append(&b, chunk, n) < 0)
			break;
	int bad = ferror(f) || b.overflow;
	fclose(f);
	if (bad) {
		buf_free(&b);
		payload_finish(p, "file larger than --slurmctld.max-body or unreadable");
		return p;
	}
	p->body = buf_steal(&b, &p->len);
	p->seconds = mono_now() - t0;
	p->at = mono_now();
	payload_finish(p, NULL);
	return p;
}
