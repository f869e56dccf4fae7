/* options_fork.h: the flags of SckyzO/slurm_exporter (the fork prometheus.io lists: kingpin, double
 * dash, --flag=value or --flag value, --no-flag for a boolean), accepted so that its unit's ExecStart
 * starts the shim instead of failing with "unknown flag" and restarting every 5 s.
 *
 * The fork's flags the shim has too (--web.listen-address, --web.config.file, --web.telemetry-path,
 * --log.level, --log.format) are the shim's own rows of options.c. Here are the others: one row
 * each, with what its value must be (checked as the fork checks it: a duration is a Go duration)
 * and why the shim has no use for it. --[no-]collector.gpus means what it meant in the fork, the GPU
 * families on or off (the shim's --gpus-acct); every other one is ignored, and main() logs one
 * warning per flag given (fork_flags_warn), once, at start. A --[no-]collector.NAME the fork does
 * not list (another release's collector) is taken as a collector flag too: the unit still starts. */
#ifndef SHIM_OPTIONS_FORK_H
#define SHIM_OPTIONS_FORK_H

#include <stddef.h>

enum fork_kind {
	FORK_BOOL,     /* --flag, --flag=BOOL, --no-flag: no value argument */
	FORK_DURATION, /* a Go duration ("5s", "1m30s", "0"), after "=" or as the next argument */
	FORK_STRING,   /* any value, after "=" or as the next argument */
	FORK_GPUS,     /* FORK_BOOL that sets --gpus-acct */
};

struct fork_flag {
	const char *name; /* without the dashes; "collector.*": any collector the table does not list */
	enum fork_kind kind;
	const char *why;  /* why the shim ignores it; NULL for FORK_GPUS */
};

/* Most distinct fork flags one command line is warned about (more are ignored silently). */
#define FORK_GIVEN_MAX 40

/* The fork's flag spelled [name, name + n) (no dashes, no "=value"): its row, with *negated 1 for
 * the "no-" spelling of a boolean; NULL when the fork has no such flag. */
const struct fork_flag *fork_flag_find(const char *name, size_t n, int *negated);
/* Whether v is a Go duration as time.ParseDuration reads it: "0", or decimal numbers each with a
 * unit (ns, us, µs, ms, s, m, h), an optional leading sign: "5s", "1.5h", "2h45m". */
int fork_is_duration(const char *v);
/* One log line per flag of given[] (the argv words, "--command.timeout=10s" or "--no-collector.gpus",
 * one per flag name), at start: a warning for an ignored one, an info line for --[no-]collector.gpus.
 * more: how many distinct fork flags did not fit in given[]. */
void fork_flags_warn(const char *const *given, size_t n, size_t more);

#endif
