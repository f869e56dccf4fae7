/* monotime.h: the monotonic clock, in seconds, for durations, ages and deadlines (never a wall
 * time: a clock step must not age an answer or end a scrape). */
#ifndef SHIM_MONOTIME_H
#define SHIM_MONOTIME_H

#include <time.h>

static inline double mono_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

#endif
