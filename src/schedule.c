/* schedule.c: see schedule.h. */
#include "schedule.h"

#include <math.h>

/* The next scrape is forecast this much later than the last gap: a scrape a little late (jitter,
 * a slow render) must not find two walks due at once. */
#define SCHED_MARGIN 1.25

static int source_is_due(const struct sched_source *s)
{
	return s->wanted && (s->age < 0 || s->age >= s->interval);
}

/* The walk of upstream u to fetch early (index), or -1: none when a walk of u is due or in flight,
 * or fewer than two would be due by the next scrape (one alone is fetched when due: fewer walks). */
static int early_walk(const struct sched_source *src, int n, int u, double gap)
{
	int best = -1, coming = 0;
	for (int i = 0; i < n; i++) {
		const struct sched_source *s = &src[i];
		if (!s->walks || s->upstream != u)
			continue;
		if (s->busy || source_is_due(s))
			return -1;
		if (!s->wanted || s->age + gap * SCHED_MARGIN < s->interval)
			continue;
		coming++;
		if (best < 0 || s->interval - s->age < src[best].interval - src[best].age)
			best = i;
	}
	return coming >= 2 ? best : -1;
}

unsigned schedule_fetch(const struct sched_source *src, int n, double gap)
{
	unsigned fetch = 0;
	for (int i = 0; i < n; i++)
		if (source_is_due(&src[i]))
			fetch |= 1u << i;
	if (gap <= 0)
		return fetch;
	unsigned seen = 0; /* upstreams already considered (an upstream is a small index) */
	for (int i = 0; i < n; i++) {
		unsigned ubit = 1u << src[i].upstream;
		if (!src[i].walks || (seen & ubit))
			continue;
		seen |= ubit;
		int e = early_walk(src, n, src[i].upstream, gap);
		if (e >= 0)
			fetch |= 1u << e;
	}
	return fetch;
}

/* The interval the share rule gives after a fetch of d seconds (counted from its end). */
static double share_interval(const struct sched_cost_config *cfg, double d)
{
	if (cfg->max_share <= 0 || d <= 0)
		return 0;
	return d / fmin(cfg->max_share, 1.0) - d;
}

/* 2^k, for a back-off of k failures (k is bounded: the caller caps the result anyway). */
static double twice(unsigned k)
{
	return ldexp(1.0, k > 60 ? 60 : (int)k);
}

double schedule_cost_interval(const struct sched_cost_config *cfg, const struct sched_cost *st)
{
	if (!st->failures || cfg->floor <= 0)
		return fmax(cfg->floor, share_interval(cfg, st->failures ? st->last_seconds : st->ok_seconds));
	double backoff = fmin(cfg->max_backoff, cfg->floor * twice(st->failures));
	return fmax(fmax(cfg->floor, backoff), share_interval(cfg, st->last_seconds));
}

double schedule_cost_timeout(const struct sched_cost_config *cfg, const struct sched_cost *st)
{
	if (st->ok_seconds <= 0) /* what the answer needs is not known yet */
		return fmax(cfg->timeout, cfg->max_timeout);
	double t = fmax(cfg->timeout, cfg->timeout_factor * st->ok_seconds);
	if (st->failures && cfg->floor > 0)
		t *= twice(st->failures);
	return fmax(cfg->timeout, fmin(t, cfg->max_timeout));
}

void schedule_cost_record(struct sched_cost *st, double seconds, int ok)
{
	st->last_seconds = seconds;
	if (ok) {
		st->ok_seconds = seconds;
		st->failures = 0;
	} else if (st->failures < 1000000) {
		st->failures++;
	}
}
