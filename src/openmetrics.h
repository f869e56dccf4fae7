/* openmetrics.h: a validator for the OpenMetrics 1.0 text format, used by
 * `--check-exposition --strict`. It accepts exactly what the specification's ABNF and its MUST rules
 * allow (docs/conformance.md lists the rules and where the reference test suite decides an ambiguity):
 *
 *   structure   UTF-8 only; LF line ends (no CR before LF); no blank lines; no comments other than
 *               # HELP / # TYPE / # UNIT; the last line is "# EOF", optionally followed by one LF.
 *   metadata    at most one HELP, TYPE and UNIT per family, all before its first sample; TYPE is one of
 *               counter gauge histogram gaugehistogram stateset info summary unknown; a non-empty UNIT
 *               is a "_unit" suffix of the name and is not allowed on info and stateset families.
 *   samples     metricname [labels] SP number [SP timestamp] [SP "#" SP labels SP number [SP timestamp]];
 *               label names unique; label values escaped (\\ \" \n decoded, other "\x" pairs kept as
 *               written, a raw '"' ends the value); numbers: [sign] digits [. digits] [e [sign] digits],
 *               [sign] inf/infinity, nan (any case), within float64 range; timestamps: real numbers only.
 *   families    a sample belongs to the current family if its name is the family name plus one of the
 *               type's suffixes, otherwise it starts a new family (of type unknown); a family must not
 *               reappear, and no sample name of one family may be a sample name of another.
 *   metrics     the samples of one label set (le, quantile and the stateset label aside) are
 *               contiguous; timestamps are on all of them or on none, and never go backwards; without
 *               timestamps a series must not repeat.
 *   types       counter _total/_created; stateset label named after the family, values 0/1; info
 *               _info = 1; histogram/gaugehistogram buckets with le, increasing le, cumulative values,
 *               +Inf bucket last, _count = +Inf bucket, _sum iff _count (_gsum iff _gcount), no _sum with
 *               negative buckets, negative _gsum only with negative buckets; summary quantile in [0,1];
 *               counter-like values (_total _sum _count _bucket _gcount, _gsum) never NaN, the first
 *               five never negative; counts and bucket values integers; exemplars only on counter _total
 *               and histogram/gaugehistogram _bucket samples, at most 128 code points of label names and
 *               values. */
#ifndef SHIM_OPENMETRICS_H
#define SHIM_OPENMETRICS_H

#include <stddef.h>

/* Validate one exposition. Returns 0 when it is valid OpenMetrics 1.0, -1 otherwise; then *err_line
 * is the 1-based line of the first error and reason (reasonlen bytes, always NUL-terminated when
 * reasonlen > 0) says what is wrong. err_line and reason may be NULL. text may hold NUL bytes. */
int om_validate(const char *text, size_t len, size_t *err_line, char *reason, size_t reasonlen);

#endif
