/* clitime.c: a unix time as Slurm's commands print it (see clitime.h). */
#include "clitime.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#define SLURM_INFINITE 4294967295.0 /* INFINITE of a uint32_t, as a time_t: sinfo's "Unknown" */
#define SLURM_NO_VAL 4294967294.0   /* NO_VAL: sinfo's "None" */

static pthread_once_t tz_once = PTHREAD_ONCE_INIT;

static void tz_init(void)
{
	tzset();
}

static size_t put(char *out, size_t n, const char *s)
{
	size_t len = strlen(s);
	if (!n)
		return 0;
	if (len >= n)
		len = n - 1;
	memcpy(out, s, len);
	out[len] = '\0';
	return len;
}

size_t clitime_format(double t, char *out, size_t n)
{
	if (t == SLURM_NO_VAL)
		return put(out, n, "None");
	if (!(t >= 1 && t <= CLITIME_MAX) || t != floor(t) || t == SLURM_INFINITE)
		return put(out, n, "Unknown");
	pthread_once(&tz_once, tz_init);
	time_t when = (time_t)t;
	struct tm tm;
	char text[CLITIME_LEN];
	/* slurm_make_time_str: localtime_r, then strftime "%FT%T" (SLURM_TIME_FORMAT unset) */
	if (!localtime_r(&when, &tm) || !strftime(text, sizeof(text), "%FT%T", &tm))
		return put(out, n, "Unknown");
	return put(out, n, text);
}
