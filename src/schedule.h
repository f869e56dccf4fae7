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

/* Cost-scheduled: a source whose every fetch is expensive for its upstream (slurmrestd's /jobs:
 * seconds of slurmrestd's CPU per fetch at thousands of jobs) has its interval and its timeout
 * follow what its fetches take, instead of fixed flags.
 *
 * Share: the next fetch starts no sooner than when the last one took at most max_share of the
 * time from its start to then: the interval counted from its end (the answer's age) is
 * d / max_share - d for a fetch of d seconds, and never below the floor. A fetch of 2.7 s at 5%
 * is fetched again 51.3 s after it ended, every 54 s.
 * Back-off: after k failed fetches in a row (k >= 1), the wait is floor x 2^k, at most
 * max_backoff, and never shorter than the share rule gives for what the failed fetch took (a
 * timed-out fetch cost its upstream its whole timeout). A usable fetch ends the back-off. A floor
 * of 0 means no back-off.
 * Timeout: before any usable fetch, max_timeout: what the answer needs is not known, and a shorter
 * timeout saves its upstream nothing (slurmrestd, measured live at 20,000 jobs, builds the whole
 * answer after the client has gone: 13 s of CPU for a fetch given up after 10 s). Then at least
 * timeout, and timeout_factor times the last usable fetch's duration (what the answer needs);
 * backing off, twice that for every failure in a row; never more than max_timeout (when that is
 * below timeout: timeout). */
/* The timeout_factor the daemon gives slurmrestd's /jobs: twice what the answer took last time. */
#define SCHED_COST_TIMEOUT_FACTOR 2.0

struct sched_cost_config {
	double floor;            /* seconds: the least interval (--slurmrestd.jobs.min-interval) */
	double max_share;        /* 0 to 1: the share of the time fetches may take; 0: the floor alone */
	double max_backoff;      /* seconds: the longest wait after failures */
	double timeout;          /* seconds: the least timeout (--slurmrestd.timeout) */
	double timeout_factor;   /* the timeout is at least this times the last usable fetch's duration */
	double max_timeout;      /* seconds: the longest timeout */
};

/* What the fetches of a cost-scheduled source took so far. */
struct sched_cost {
	double ok_seconds;       /* the last usable fetch's duration; 0: none yet */
	double last_seconds;     /* the last fetch's duration, usable or not */
	unsigned failures;       /* failed fetches since the last usable one: > 0 is backing off */
};

/* Seconds from the end of the last fetch until the next is due (sched_source.interval). */
double schedule_cost_interval(const struct sched_cost_config *cfg, const struct sched_cost *st);
/* Seconds the next fetch may take. */
double schedule_cost_timeout(const struct sched_cost_config *cfg, const struct sched_cost *st);
/* The state after one more fetch of seconds, usable (ok) or not. */
void schedule_cost_record(struct sched_cost *st, double seconds, int ok);

#endif
