/* probe.h: several clusters from one shim, the multi-target pattern of Prometheus' blackbox and SNMP
 * exporters. --probe.targets-file FILE names the clusters:
 *
 *   targets:
 *     clusterA:
 *       slurmctld_url: http://ctl-a:6817        # required (a sequence of URLs is joined with commas)
 *       token_file: /etc/slurm-exporter-shim/a.jwt
 *       user: slurm
 *       mapping: /etc/slurm-exporter-shim/a.json  # default: --mapping.file
 *       slurmrestd_url: http://rest-a:6820
 *       slurmrestd_token_file: ...
 *       slurmrestd_user: ...
 *
 * and GET /probe?target=NAME scrapes that cluster with a scraper of its own (own coalescing, cache,
 * intervals and self metrics; the global timeouts, intervals and flags). Only names from the file
 * are ever fetched: a URL never comes from the query string.
 *
 * The file is parsed with the web config's YAML layer (webconfig_int.h), strictly: unknown or
 * duplicate keys, duplicate or invalid target names, wrong types, bad URLs and a missing
 * slurmctld_url are refused, every problem reported (up to PROBE_MAX_ERRORS), one line each,
 * "FILE:LINE:COLUMN: reason", with the file's bytes escaped.
 *
 * Ownership: probe_targets_load returns a new table (probe_targets_free). probe_set_new takes
 * ownership of the table and returns a new set (probe_set_free) that owns one scraper (with its mapping
 * and its upstreams' runtime state) per target; it copies the base config and borrows its strings.
 * probe_set_find and probe_set_name return borrowed pointers, valid for the set's life. */
#ifndef SHIM_PROBE_H
#define SHIM_PROBE_H

#include <stddef.h>

struct buf;
struct scraper;
struct scraper_config;

#define PROBE_NAME_MAX 64     /* bytes of a target name, [A-Za-z0-9_.-]+ */
#define PROBE_MAX_ERRORS 50   /* problems listed; one more line counts the rest */

struct probe_target {
	char *name;
	char *slurmctld_url;          /* as given; a YAML sequence joined with commas */
	char *token_file, *user;      /* NULL: none */
	char *mapping;                /* NULL: the global --mapping.file */
	char *rest_url, *rest_token_file, *rest_user; /* slurmrestd; rest_url NULL: not used */
};

struct probe_targets {
	struct probe_target *t;
	size_t n;
};

/* Parse path: a new table, or NULL with every problem appended to problems (one line each). */
struct probe_targets *probe_targets_load(const char *path, struct buf *problems);
void probe_targets_free(struct probe_targets *t); /* NULL: nothing */

struct probe_set;

/* One scraper per target: base (the global flags, --slurmrestd.api-version included: without it
 * each target's scraper learns its own) with the target's upstreams and no replay directory; each
 * target's mapping (else default_mapping) loaded now. NULL (logged) when a mapping does not load;
 * targets is freed either way. */
struct probe_set *probe_set_new(struct probe_targets *targets, const struct scraper_config *base,
				const char *default_mapping);
void probe_set_free(struct probe_set *ps); /* NULL: nothing */
/* The scraper of the target named by [name, name+len) (any bytes), or NULL. */
struct scraper *probe_set_find(const struct probe_set *ps, const char *name, size_t len);
/* SIGHUP: reload every target's mapping; a target whose file fails keeps its table (logged). */
void probe_set_reload(struct probe_set *ps);
size_t probe_set_count(const struct probe_set *ps);  /* NULL: 0 */
const char *probe_set_name(const struct probe_set *ps, size_t i);

#endif
