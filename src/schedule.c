/* schedule.c: see schedule.h. */
#include "schedule.h"

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
