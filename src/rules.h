/* rules.h: export the mapping as Prometheus recording rules (DIR/rules.yml) plus the scrape
 * config for slurmctld's five native endpoints (DIR/scrape.yml), for sites that scrape slurmctld
 * directly. Native families whose names clash with a legacy name are renamed at scrape time
 * (metric_relabel_configs: NAME -> native_NAME) and the rules read the renamed ones, so the legacy
 * names hold only the rules' results. See docs/recording-rules.md. */
#ifndef SHIM_RULES_H
#define SHIM_RULES_H

#include <stddef.h>

struct mapping;

#define RULES_NATIVE_PREFIX "native_"

/* Write both files. Returns 0, or -1 with err set. */
int rules_export(const struct mapping *m, const char *url, const char *flags, const char *dir, char *err, size_t errlen);

#endif
