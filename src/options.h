/* options.h: the command line, as one table (options.c) that drives the parser, --help and the
 * range checks; the man page's OPTIONS are checked against --help by tests/test_manpage.sh.
 *
 * Process-wide state. The process has exactly three pieces of mutable state that outlive a call and
 * are not owned by an object: the struct options that main() fills with options_parse() before any
 * thread starts and only reads afterwards, and log_min_level and log_json (log.h), set from it once,
 * also before any thread starts. Everything else lives in objects with an owner (scraper, server, webconfig,
 * mapping) or on a stack.
 *
 * Ownership: the strings of a parsed struct options borrow argv or string literals, or url_list and
 * listen_addr: a parsed struct options is not copied (listens[] may point into it). */
#ifndef SHIM_OPTIONS_H
#define SHIM_OPTIONS_H

#include <stdio.h>

#include "options_fork.h"

/* Most --web.listen-address flags (one listener each). */
#define OPTIONS_LISTEN_MAX 8
/* Most --mapping.file (and --check-mapping) flags: mapping.h's MAPPING_SET_MAX. */
#define OPTIONS_FILES_MAX 8

struct options {
	const char *listen, *path, *web_config, *url, *token_file, *user, *mapping, *to_rules;
	const char *replay_dir, *check_mapping;
	const char *listens[OPTIONS_LISTEN_MAX]; /* every --web.listen-address (listen is the first) */
	size_t nlisten;
	const char *listen_schema[OPTIONS_LISTEN_MAX]; /* ADDR=NAME: NAME, the schema it serves; NULL: the first */
	char listen_addr[OPTIONS_LISTEN_MAX][128]; /* ADDR=NAME: ADDR (listens[i] points here) */
	const char *mappings[OPTIONS_FILES_MAX]; /* every --mapping.file (mapping is the first) */
	size_t nmapping;
	int mappings_given;              /* --mapping.file was given (mappings[] is not the default) */
	const char *checks[OPTIONS_FILES_MAX];   /* every --check-mapping (check_mapping is the first) */
	size_t ncheck;
	const char *once_schema;         /* --once.schema NAME: the schema --once prints; NULL: the first */
	const char *exclude;             /* --mapping.exclude REGEX: the families served by no schema; NULL: none */
	const char *compare_schema;      /* --compare-legacy.schema NAME: the schema compared; NULL: recognised */
	long long load_margin;           /* --status.load-margin: percent of a node's CPUs */
	int systemd_socket;              /* --web.systemd-socket: systemd's sockets, not listens[] */
	int log_format;                  /* 0 logfmt, 1 json (log.h's log_json) */
	const char *fork_given[FORK_GIVEN_MAX]; /* the SckyzO fork's flags given (options_fork.h), one per name */
	size_t nfork_given, nfork_more;
	int log_level;                   /* enum log_level */
	double timeout, min_interval;    /* seconds */
	double jobs_min_interval;        /* seconds: slurmctld's job-walking endpoints (source.h's walks_jobs) */
	double slow_fetch;               /* seconds: a longer fetch is logged and counted; 0: never */
	long long conn_timeout;          /* whole seconds */
	long long max_conn;
	long long max_held;              /* bytes: --web.max-held-bytes */
	long long max_body;              /* bytes */
	int gpus, once, check_expo, strict, version, help;
	int native;                      /* --web.native-passthrough */
	int compression;                 /* --web.compression */
	/* slurmrestd (optional second upstream; rest_url NULL: not used) */
	const char *rest_url, *rest_token_file, *rest_user, *rest_api_version;
	double rest_timeout, rest_min_interval, rest_jobs_min_interval; /* seconds */
	long long rest_max_body;         /* bytes */
	int rest_jobs;                   /* fetch /jobs (rows enabled_by "slurmrestd-jobs") */
	long long rest_max_share;        /* percent: the other slurmrestd documents' (schedule.h) */
	long long rest_jobs_max_share;   /* percent: /jobs' cost-scheduled interval (schedule.h) */
	double rest_jobs_max_backoff, rest_jobs_max_timeout; /* seconds: its back-off and timeout bounds */
	const char *compare_legacy;      /* the old exporter's URL: compare, print, exit */
	int compare_format;              /* enum compare_format */
	const char *targets_file;        /* --probe.targets-file: the clusters /probe?target= scrapes */
	char url_list[4096];             /* --slurmctld.url given more than once: the joined comma list */
};

/* Set every option to its default, then apply argv (Go-flag style: -name or --name, the value after
 * "=" or as the next argument; booleans take a value only after "="). Every value is checked here,
 * once: type, bounds, choices. Returns 0, or -1 after one line "slurm-exporter-shim: ..." to err,
 * for a number out of range in the form: flag --x: value "y" is not a valid ... (expected N to M). */
int options_parse(struct options *o, int argc, char **argv, FILE *err);
/* The --help text, every flag with its metavar, help, range and default. */
void options_usage(FILE *f);

#endif
