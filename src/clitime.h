/* clitime.h: a time as Slurm's commands print it (sinfo's %H, scontrol's times, squeue's %S...):
 * Slurm's slurm_make_time_str() with its default format, "%FT%T" in the local time zone
 * (2026-12-04T05:47:01), so that a label made from a time reads as the command printed it for a
 * caller in the same time zone (the shim's TZ, as the command's was its caller's). */
#ifndef SHIM_CLITIME_H
#define SHIM_CLITIME_H

#include <stddef.h>

/* The largest time formatted: 9999-12-31T23:59:59 UTC (the last four-digit year). */
#define CLITIME_MAX 253402300799.0

/* Writes the text for unix time t into out (n bytes, at least CLITIME_LEN) and returns its length:
 * as Slurm prints it, "Unknown" for 0 and INFINITE (4294967295) and "None" for NO_VAL (4294967294);
 * a time that is no whole number of seconds from 1 to CLITIME_MAX (NaN: not given, infinite,
 * negative, fractional, later) is no time Slurm sends and reads "Unknown" too. Thread-safe: the
 * time zone is read once, on the first call (tzset); a test that changes TZ calls tzset() itself. */
#define CLITIME_LEN 32
size_t clitime_format(double t, char *out, size_t n);

#endif
