/* payload.c: see payload.h. */
#include "payload.h"
#include "log.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static pthread_mutex_t ref_lock = PTHREAD_MUTEX_INITIALIZER;

double mono_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

struct payload *payload_new(enum endpoint ep, unsigned gen, expo_keep_fn keep, void *ctx)
{
	struct payload *p = xcalloc(1, sizeof(*p));
	p->refs = 1;
	p->ep = ep;
	p->gen = gen;
	expo_init(&p->expo);
	p->expo.keep = keep;
	p->expo.keep_ctx = ctx;
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

void payload_restart(struct payload *p, long http_status)
{
	expo_keep_fn keep = p->expo.keep;
	void *ctx = p->expo.keep_ctx;
	expo_free(&p->expo);
	expo_init(&p->expo);
	p->expo.keep = keep;
	p->expo.keep_ctx = ctx;
	p->len = 0;
	p->http_status = http_status;
}

int payload_feed(struct payload *p, const char *data, size_t n, size_t max_body)
{
	if (max_body && n > max_body - (p->len < max_body ? p->len : max_body))
		return -1; /* max_body 0: no limit */
	p->len += n;
	if (p->http_status == 0 || p->http_status == 200)
		expo_feed(&p->expo, data, n, 0);
	return 0;
}

/* Why the answer is unusable, or NULL. */
static const char *classify(struct payload *p, const char *transport_err)
{
	const struct endpoint_info *ep = &endpoints[p->ep];
	if (transport_err) {
		snprintf(p->reason, sizeof(p->reason), "%s: %s", ep->path, transport_err);
		return p->reason;
	}
	if (p->http_status && p->http_status != 200) {
		const char *hint = status_hint(p->http_status);
		if (hint)
			snprintf(p->reason, sizeof(p->reason), "%s: %s", ep->path, hint);
		else
			snprintf(p->reason, sizeof(p->reason), "%s: HTTP status %ld", ep->path, p->http_status);
		return p->reason;
	}
	if (p->len == 0 && !ep->empty_ok) {
		snprintf(p->reason, sizeof(p->reason),
			 "%s: empty answer (is MetricsType=metrics/openmetrics set in slurm.conf?)", ep->path);
		return p->reason;
	}
	p->parse_errors = expo_feed_end(&p->expo, 0);
	if (p->parse_errors) {
		const struct expo_error *e = &p->expo.errors[0];
		snprintf(p->reason, sizeof(p->reason), "%s: %zu malformed line(s), first at line %zu: %s", ep->path,
			 p->parse_errors, e->line, e->reason);
		return p->reason;
	}
	if (p->len && !p->expo.nnamed) {
		/* not slurmctld's empty "nothing to report" answer, and not a single family either
		 * (a proxy's page, a stray comment): nothing can be computed from it */
		snprintf(p->reason, sizeof(p->reason), "%s: the answer (%zu bytes) names no metric family", ep->path, p->len);
		return p->reason;
	}
	return NULL;
}

void payload_finish(struct payload *p, const char *transport_err)
{
	p->ok = classify(p, transport_err) == NULL;
	if (!p->ok) { /* nothing of a failed answer is used: let its families go now */
		expo_free(&p->expo);
		expo_init(&p->expo);
	}
	p->expo.keep = NULL; /* the filter's owner may go away; the payload stays */
	p->expo.keep_ctx = NULL;
}

/* Open a replay file for reading, or NULL with the reason in why. O_NONBLOCK, so that a FIFO (or a
 * device) does not block the open, and --once, forever; anything but a regular file is refused. */
static FILE *replay_open(const char *path, char *why, size_t whylen)
{
	struct stat st;
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	FILE *f;
	if (fd < 0) {
		snprintf(why, whylen, "cannot read %.200s: %s", path, strerror(errno));
		return NULL;
	}
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		snprintf(why, whylen, "cannot read %.200s: not a regular file", path);
		close(fd);
		return NULL;
	}
	f = fdopen(fd, "rb");
	if (!f) {
		snprintf(why, whylen, "cannot read %.200s: %s", path, strerror(errno));
		close(fd);
	}
	return f;
}

struct payload *payload_replay(const char *dir, enum endpoint ep, size_t max_body, unsigned gen, expo_keep_fn keep,
			       void *ctx)
{
	struct payload *p = payload_new(ep, gen, keep, ctx);
	char path[4096];
	FILE *f;
	char chunk[65536], why[300];
	size_t n;
	double t0 = mono_now();
	int too_big = 0;

	snprintf(path, sizeof(path), "%s/%s", dir, endpoints[ep].file);
	f = replay_open(path, why, sizeof(why));
	if (!f) {
		payload_finish(p, why);
		return p;
	}
	while (!too_big && (n = fread(chunk, 1, sizeof(chunk), f)) > 0)
		too_big = payload_feed(p, chunk, n, max_body) < 0;
	int bad = ferror(f);
	fclose(f);
	p->seconds = mono_now() - t0;
	p->at = mono_now();
	payload_finish(p, too_big ? "file larger than --slurmctld.max-body" : bad ? "file unreadable" : NULL);
	return p;
}
