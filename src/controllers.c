/* controllers.c: see controllers.h. */
#include "controllers.h"
#include "cred.h"
#include "log.h"
#include "xmalloc.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

struct controllers {
	pthread_mutex_t mu;
	size_t n;                       /* configured */
	size_t total;                   /* configured and learnt: set under mu, entries never change */
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

int upstream_url_is_valid(const char *s, size_t n, int unix_ok)
{
	size_t pre = n >= 7 && !strncasecmp(s, "http://", 7)	 ? 7
		     : n >= 8 && !strncasecmp(s, "https://", 8)	 ? 8
		     : unix_ok && n >= 6 && !strncmp(s, "unix:/", 6) ? 5
								 : 0;
	if (!pre || pre == n)
		return 0;
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)s[i] <= 0x20 || (unsigned char)s[i] >= 0x7f)
			return 0;
	return 1;
}

/* Keep url as entry i (and its shown form). */
static void keep(struct controllers *c, size_t i, char *url)
{
	char shown[CRED_SHOWN_MAX];
	cred_url_shown(shown, sizeof(shown), url);
	c->shown[i] = xstrdup(shown);
	c->url[i] = url;
}

/* Add element [s, e), the nth, or record why it cannot be. */
static void add(struct controllers *c, const char *s, const char *e, size_t nth)
{
	char *u = xstrndup(s, (size_t)(e - s));
	if (c->error[0]) {
		free(u);
		return;
	}
	if (c->n == CONTROLLERS_MAX) {
		snprintf(c->error, sizeof(c->error), "--slurmctld.url: more than %d controllers", CONTROLLERS_MAX);
	} else if (!upstream_url_is_valid(s, (size_t)(e - s), 0)) {
		char shown[CRED_SHOWN_MAX];
		cred_url_shown(shown, sizeof(shown), u);
		snprintf(c->error, sizeof(c->error), /* raw: the log, the 503 body and the status page escape it */
			 "--slurmctld.url: element %zu \"%.150s\" is not an http:// or https:// URL", nth, shown);
	} else if (controllers_metrics_path(u, strlen(u)) >= 0) {
		char shown[CRED_SHOWN_MAX];
		cred_url_shown(shown, sizeof(shown), u);
		snprintf(c->error, sizeof(c->error),
			 "--slurmctld.url: element %zu \"%.150s\" is slurmctld's metrics path, not its base URL: drop the "
			 "/metrics (the shim asks for /metrics/<endpoint> itself)", nth, shown);
	} else {
		keep(c, c->n++, u);
		return;
	}
	free(u);
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
	c->total = c->n;
	return c;
}

void controllers_free(struct controllers *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->total; i++) {
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

size_t controllers_total(struct controllers *c)
{
	pthread_mutex_lock(&c->mu);
	size_t n = c->total;
	pthread_mutex_unlock(&c->mu);
	return n;
}

const char *controllers_url(const struct controllers *c, size_t i)
{
	return c->url[i]; /* set before it was counted in total, never changed */
}

const char *controllers_shown(const struct controllers *c, size_t i)
{
	return c->shown[i];
}

int controllers_is_learnt(const struct controllers *c, size_t i)
{
	return i >= c->n;
}

int controllers_learn(struct controllers *c, const char *base)
{
	int i = -1;
	if (c->n != 1)
		return -1;
	pthread_mutex_lock(&c->mu);
	for (size_t k = 0; k < c->total && i < 0; k++)
		if (!strcmp(c->url[k], base))
			i = (int)k;
	if (i < 0 && c->total < CONTROLLERS_MAX) {
		keep(c, c->total, xstrdup(base));
		i = (int)c->total++;
	}
	pthread_mutex_unlock(&c->mu);
	return i;
}

size_t controllers_order(struct controllers *c, size_t order[CONTROLLERS_MAX])
{
	size_t k = 0;
	int taken[CONTROLLERS_MAX] = { 0 };
	pthread_mutex_lock(&c->mu);
	/* the current one first while it is the primary (a learnt one is asked only through its
	 * configured one's 303); one seen down (refused, or accepting connections and never answering)
	 * last, so that the others get their turn on the next fetch */
	if (c->current >= 0 && (size_t)c->current < c->n && c->role[c->current] == ROLE_PRIMARY) {
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
	char why[300];
	int prev;
	pthread_mutex_lock(&c->mu);
	prev = c->current;
	c->current = (int)i;
	if (prev >= 0 && prev != (int)i)
		c->switches++;
	if (prev >= 0)
		snprintf(why, sizeof(why), "%s", c->why[prev]);
	/* one primary at a time: the previous one, not asked in this fetch (a learnt controller is
	 * asked only through its configured one's 303), is no longer known to be it */
	if (prev >= 0 && prev != (int)i && c->role[prev] == ROLE_PRIMARY) {
		c->role[prev] = ROLE_UNKNOWN;
		snprintf(c->why[prev], sizeof(c->why[prev]), "not asked since %.150s answered as primary", c->shown[i]);
	}
	pthread_mutex_unlock(&c->mu);
	if (prev == (int)i)
		return;
	if (prev < 0) {
		log_info("slurmctld: reading controller %s", c->shown[i]);
		return;
	}
	log_warn("slurmctld: switched from controller %s to %s: %s was %s", c->shown[prev], c->shown[i], c->shown[prev],
		 why[0] ? why : "not tried"); /* raw: escaped by the log */
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
	static const char *const names[] = { "unknown", "primary", "standby", "down", "unusable" };
	return names[r];
}

size_t controllers_view(struct controllers *c, struct controller_view out[CONTROLLERS_MAX])
{
	pthread_mutex_lock(&c->mu);
	size_t n = c->total;
	for (size_t i = 0; i < n; i++) {
		snprintf(out[i].url, sizeof(out[i].url), "%s", c->shown[i]);
		out[i].role = c->role[i];
		out[i].current = c->current == (int)i;
		snprintf(out[i].why, sizeof(out[i].why), "%s", c->why[i]);
	}
	pthread_mutex_unlock(&c->mu);
	return n;
}

unsigned long controllers_switches(struct controllers *c)
{
	pthread_mutex_lock(&c->mu);
	unsigned long n = c->switches;
	pthread_mutex_unlock(&c->mu);
	return n;
}
