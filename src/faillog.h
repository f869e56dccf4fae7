/* faillog.h: the log line of an upstream failure. One refused connection used to be a line per
 * endpoint, each with curl's text twice, then the 503 body again; now the sources of one upstream
 * that failed together for the same reason are one line, naming them, where they were fetched (the
 * controller's or upstream's URL, userinfo hidden: cred.h; or the replay directory) and the reason
 * once, with fetch.c's hint when the connection was refused or timed out:
 *
 *   endpoints /metrics/nodes and /metrics/partitions failed: slurmctld http://ctl:6817: Failed to
 *   connect to ctl port 6817 after 0 ms: Couldn't connect to server; is slurmctld up, and is the
 *   URL's port its SlurmctldPort (slurm.conf)? */
#ifndef SHIM_FAILLOG_H
#define SHIM_FAILLOG_H

#include "payload.h"
#include "source.h"

struct controllers;

/* Log the sources in mask failed (got[id] finished and not ok) of one fetch: one warning per group
 * of the same upstream, controller and reason. cfg: the upstreams they were fetched from; ctl:
 * slurmctld's controllers (a payload's controller indexes them), or NULL; replay_dir: the directory
 * they were read from instead, or NULL. */
void faillog_report(unsigned failed, struct payload *const got[SRC_COUNT], const struct upstream_config cfg[UPSTREAM_COUNT],
		    struct controllers *ctl, const char *replay_dir);

#endif
