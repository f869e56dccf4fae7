/* controllers.c: see controllers.h. */
#include "controllers.h"
#include "cred.h"
#include "log.h"
#include "writer.h"
#include "xmalloc.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

struct controllers {
	pthread_mutex_t mu;
	size_t n;
	char *url[CONTROLLERS_MAX];
	char *shown[CONTROLLERS_MAX];   /* url for labels, pages and logs: its userinfo hidden (cred.h) */
	enum controller_role role[CONTROLLERS_MAX];
	char why[CONTROLLERS_MAX][200]; /* why it was last passed over (raw) */
	int current;                    /* answered last; -1: none yet */
	unsigned long down_seq[CONTROLLERS_MAX]; /* when each was last seen down (a count of such
						    sightings): the down ones are tried oldest first */
	unsigned long downs;
	unsigned long switches;
	char error[300];                /* the list is not usable: why */
};

static int url_ok(const char *u)
{
	return !strncasecmp(u, "http://", 7) || !strncasecmp(u, "https://", 8) || !strncmp(u, "unix:/", 6);
}

/* Add element [s, e) (spaces trimmed) or record why it cannot be. */
static void add(struct controllers *c, const char *s, const char *e, size_t nth)
{
	char safe[160], shown[CRED_SHOWN_MAX];
	while (s < e && *s == ' ')
		s++;
	while (e > s && e[-1] == ' ')
		e--;
	char *u = xstrndup(s, (size_t)(e - s));
	cred_url_shown(shown, sizeof(shown), u);
	if (c->error[0]) {
		free(u);
		return;
	}
	if (c->n == CONTROLLERS_MAX)
		snprintf(c->error, sizeof(c->error), "--slurmctld.url: more than %d controllers", CONTROLLERS_MAX);
	else if (!url_ok(u))
		snprintf(c->error, sizeof(c->error),
			 "--slurmctld.url: element %zu \"%s\" is not an http:// or https:// URL or unix:/path", nth,
			 log_escape(safe, sizeof(safe), shown, strlen(shown)));
	else if (strncmp(u, "unix:", 5) && controllers_metrics_path(u, strlen(u)) >= 0)
		snprintf(c->error, sizeof(c->error),
			 "--slurmctld.url: element %zu \"%s\" is slurmctld's metrics path, not its base URL: drop the "
			 "/metrics (the shim asks for /metrics/<endpoint> itself)", nth,
			 log_escape(safe, sizeof(safe), shown, strlen(shown)));
	if (c->error[0]) {
		free(u);
		return;
	}
	c->shown[c->n] = xstrdup(shown);
	c->url[c->n++] = u;
}

struct controllers *controllers_new(const char *list)
{
	struct controllers *c = xcalloc(1, sizeof(*c));
	pthread_mutex_init(&c->mu, NULL);
	c->current = -1;
	const char *s = list ? list : "";
	for (size_t nth = 1;; nth++) {
		const char *e = strchr(s, ',');
		add(c, s, e ? e : s + strlen(s), nth);
		if (!e)
			break;
		s = e + 1;
	}
	return c;
}

void controllers_free(struct controllers *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->n; i++) {
		free(c->url[i]);
		free(c->shown[i]);
	}
	pthread_mutex_destroy(&c->mu);
	free(c);
}

/* Segment [s, e) is "metrics". */
static int is_metrics(const char *s, const char *e)
{
	return e - s == 7 && !memcmp(s, "metrics", 7);
}

long controllers_metrics_path(const char *url, size_t n)
{
	const char *end = url + n, *p = NULL;
	for (const char *q = url; q + 3 <= end && !p; q++)
		if (!memcmp(q, "://", 3))
			p = q + 3;
	if (!p)
		return -1;
	while (p < end && *p != '/' && *p != '?' && *p != '#')
		p++; /* the authority */
	const char *pe = p;
	while (pe < end && *pe != '?' && *pe != '#')
		pe++;
	while (pe > p && pe[-1] == '/')
		pe--;
	/* the last two segments: [s1, pe) and [s2, s1 - 1) */
	const char *s1 = pe;
	while (s1 > p && s1[-1] != '/')
		s1--;
	if (s1 > p && is_metrics(s1, pe))
		return (long)(s1 - 1 - url);
	const char *s2 = s1 > p ? s1 - 1 : p;
	while (s2 > p && s2[-1] != '/')
		s2--;
	if (s2 > p && s1 > p && is_metrics(s2, s1 - 1))
		return (long)(s2 - 1 - url);
	return -1;
}

const char *controllers_error(const struct controllers *c)
{
	return c->error[0] ? c->error : NULL; /* set once, by controllers_new */
}

size_t controllers_count(const struct controllers *c)
{
	return c->n; /* fixed by controllers_new */
}

const char *controllers_url(const struct controllers *c, size_t i)
{
	return c->url[i];
}

const char *controllers_shown(const struct controllers *c, size_t i)
{
	return c->shown[i];
}

size_t controllers_order(struct controllers *c, size_t order[CONTROLLERS_MAX])
{
	size_t k = 0;
	int taken[CONTROLLERS_MAX] = { 0 };
	pthread_mutex_lock(&c->mu);
	/* the current one first while it is the primary; one seen down (refused, or accepting
	 * connections and never answering, which takes the whole timeout) last, so that the others
	 * get their turn on the next fetch */
	if (c->current >= 0 && c->role[c->current] == ROLE_PRIMARY) {
		order[k++] = (size_t)c->current;
		taken[c->current] = 1;
	}
	for (size_t i = 0; i < c->n; i++)
		if (!taken[i] && c->role[i] != ROLE_DOWN) {
			order[k++] = i;
			taken[i] = 1;
		}
	/* the down ones, the one seen down longest ago first: they take turns, so a hung controller
	 * that is tried (and seen down) on every fetch does not keep a recovered one from its turn */
	while (k < c->n) {
		size_t pick = c->n;
		for (size_t i = 0; i < c->n; i++)
			if (!taken[i] && (pick == c->n || c->down_seq[i] < c->down_seq[pick]))
				pick = i;
		order[k++] = pick;
		taken[pick] = 1;
	}
	pthread_mutex_unlock(&c->mu);
	return k;
}

void controllers_seen(struct controllers *c, size_t i, enum controller_role role, const char *why)
{
	pthread_mutex_lock(&c->mu);
	c->role[i] = role;
	if (role == ROLE_DOWN)
		c->down_seq[i] = ++c->downs;
	snprintf(c->why[i], sizeof(c->why[i]), "%s", role == ROLE_PRIMARY || !why ? "" : why);
	pthread_mutex_unlock(&c->mu);
}

void controllers_answered(struct controllers *c, size_t i)
{
	char was[200], why[300];
	int prev;
	pthread_mutex_lock(&c->mu);
	prev = c->current;
	c->current = (int)i;
	if (prev >= 0 && prev != (int)i)
		c->switches++;
	if (prev >= 0)
		snprintf(why, sizeof(why), "%s", c->why[prev]);
	pthread_mutex_unlock(&c->mu);
	if (prev == (int)i)
		return;
	if (prev < 0) {
		log_info("slurmctld: reading controller %s", c->shown[i]);
		return;
	}
	log_escape(was, sizeof(was), why, strlen(why));
	log_warn("slurmctld: switched from controller %s to %s: %s was %s", c->shown[prev], c->shown[i], c->shown[prev],
		 was[0] ? was : "not tried");
}

int controllers_current(struct controllers *c)
{
	pthread_mutex_lock(&c->mu);
	int cur = c->current;
	pthread_mutex_unlock(&c->mu);
	return cur;
}

const char *controller_role_name(enum controller_role r)
{
	static const char *const names[] = { "unknown", "primary", "standby", "down" };
	return names[r];
}

size_t controllers_view(struct controllers *c, struct controller_view out[CONTROLLERS_MAX])
{
	pthread_mutex_lock(&c->mu);
	for (size_t i = 0; i < c->n; i++) {
		snprintf(out[i].url, sizeof(out[i].url), "%s", c->shown[i]);
		out[i].role = c->role[i];
		out[i].current = c->current == (int)i;
		snprintf(out[i].why, sizeof(out[i].why), "%s", c->why[i]);
	}
	pthread_mutex_unlock(&c->mu);
	return c->n;
}

void controllers_write_metrics(struct controllers *c, struct buf *b)
{
	enum controller_role roles[CONTROLLERS_MAX];
	unsigned long switches;
	pthread_mutex_lock(&c->mu);
	memcpy(roles, c->role, sizeof(roles));
	switches = c->switches;
	pthread_mutex_unlock(&c->mu);
	write_header(b, "slurm_exporter_shim_controller_info",
		     "Each configured slurmctld controller (--slurmctld.url) as last seen: primary (answered), standby "
		     "(303 or 503), down (no HTTP answer), unknown (not tried yet).", "gauge");
	for (size_t i = 0; i < c->n; i++) {
		const char *role = controller_role_name(roles[i]);
		struct label l[2] = { { "url", c->shown[i], 3, (uint32_t)strlen(c->shown[i]) },
				      { "role", role, 4, (uint32_t)strlen(role) } };
		write_sample(b, "slurm_exporter_shim_controller_info", l, 2, 1);
	}
	write_header(b, "slurm_exporter_shim_controller_switches_total",
		     "Times the controller answering the shim changed since start (failover or failback).", "counter");
	write_sample(b, "slurm_exporter_shim_controller_switches_total", NULL, 0, (double)switches);
}
