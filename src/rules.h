/* rules.h: export the mapping as Prometheus recording rules (DIR/rules.yml) plus the scrape
 * configs of slurmctld's five native endpoints: DIR/scrape.yml scrapes them through the shim's
 * native passthrough (/native/metrics/<endpoint>, re-escaped), DIR/scrape-direct.yml from
 * slurmctld itself. Both use the same job names, which the rules read. Native families whose
 * names clash with a legacy name are renamed at scrape time (metric_relabel_configs: NAME ->
 * native_NAME) and the rules read the renamed ones, so the legacy names hold only the rules'
 * results. See docs/recording-rules.md. */
#ifndef SHIM_RULES_H
#define SHIM_RULES_H

#include <stddef.h>

struct mapping;

#define RULES_NATIVE_PREFIX "native_"

/* Write the three files: url is slurmctld's base URL (scrape-direct.yml), listen the shim's
 * --web.listen-address (scrape.yml; an address that listens everywhere becomes localhost). Returns
 * 0, or -1 with err set. */
int rules_export(const struct mapping *m, const char *url, const char *listen, unsigned flags, const char *dir,
		 char *err, size_t errlen);

#endif
