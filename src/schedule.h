/* schedule.h: which sources a scrape fetches, as a pure function of their ages and intervals (no
 * clock, no lock, no network: scrape.c's collect() fills the inputs; tests/test_schedule.c runs it
 * over simulated scrape sequences).
 *
 * Due: a source the rows read whose answer is missing or at least its interval old is fetched, so
 * nothing older than its interval is ever served.
 * Early: the job-walking sources of one upstream (source.h's walks_jobs) would otherwise come due
 * together, every scrape after the first that fetched them all. In a scrape that fetches (or has in
 * flight) no walk of an upstream, when two or more of its walks would be due by the next scrape
 * (age + 1.25 x gap >= interval; gap: the time between the last two scrapes, the forecast of the
 * next, a quarter more for a late scrape), the one closest to due is fetched now. So the walks take
 * turns: with the jobs interval at least two scrape intervals, a scrape after the first walks at
 * most once per upstream, unless the scrape interval grows by more than a quarter from one scrape
 * to the next (two Prometheus servers scraping out of step): then the due rule alone holds (more
 * walks in a scrape, never a staler answer). */
#ifndef SHIM_SCHEDULE_H
#define SHIM_SCHEDULE_H

struct sched_source {
	int wanted;      /* the rows read it, and no fetch of it is in flight: the policy decides */
	int busy;        /* a fetch of it is in flight (counts as a walk under way for its upstream) */
	int walks;       /* the cost class: it walks every job record */
	int upstream;    /* sources of one upstream share a walk budget; 0 to 31 */
	double age;      /* seconds since its answer finished; < 0: no answer to serve */
	double interval; /* seconds an answer may be served */
};

/* The sources to fetch now (bit 1 << i of src[i], n <= 32); gap <= 0: unknown (no early fetch). */
unsigned schedule_fetch(const struct sched_source *src, int n, double gap);

#endif
