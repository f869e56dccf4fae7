/* native.h: the native passthrough, GET /native/metrics/<endpoint> (server.c): slurmctld's own
 * families of one of its five endpoints, as the Prometheus text format 0.0.4 that a Prometheus
 * scraping slurmctld directly cannot always read. slurmctld writes label values verbatim (no
 * escaping, no UTF-8 check; expo.h reads them so); here they are written back escaped (\\ \" \n),
 * HELP texts too (\\ \n), and invalid UTF-8 is repaired to U+FFFD (writer.h), so that a quote or
 * a backslash in an account name round-trips instead of failing the whole scrape.
 * The families are those of a payload parsed without a keep filter (scrape.h, scraper_native),
 * written in the order slurmctld sent them, each sample's labels sorted by name; timestamps,
 * which slurmctld does not send, are not kept. Pure functions. */
#ifndef SHIM_NATIVE_H
#define SHIM_NATIVE_H

#include <stddef.h>

#include "buf.h"
#include "expo.h"

#define NATIVE_PATH_PREFIX "/native/metrics/"

/* The slurmctld source (enum source_id) served at url, "/native/metrics/<source name>" exactly;
 * -1 for any other path. */
int native_source(const char *url);
/* Every family of e, re-escaped, appended to out. Returns the label values and HELP texts that
 * were not clean, invalid UTF-8 or a control byte (utf8_is_clean; written repaired). */
size_t native_render(const struct expo *e, struct buf *out);

#endif
