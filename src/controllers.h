/* controllers.h: slurmctld's controllers (--slurmctld.url given several times, or a comma list):
 * the list, which one answered last (the current primary) and what each was last seen as.
 *
 * Slurm runs one primary slurmctld and standby backups; a standby answers every /metrics* with
 * 303 to SlurmctldHost[0] (or 503 when it has no control address), and a dead host refuses the
 * connection. fetch.c tries the controllers in controllers_order(), records what each one did
 * (controllers_seen) and which one every source of the fetch came from (controllers_answered);
 * scrape.c serves no cached answer of another controller than controllers_current(), so one
 * rendered answer reads one controller only.
 *
 * Thread-safe: every function takes the object's own lock (never held while calling out).
 * Ownership: controllers_new returns a new object (controllers_free frees it) holding copies of
 * the URLs; controllers_url and controllers_shown return strings owned by the object, valid until
 * it is freed. Every label, page string and log line shows controllers_shown (cred.h). */
#ifndef SHIM_CONTROLLERS_H
#define SHIM_CONTROLLERS_H

#include <stddef.h>

#include "buf.h"

#define CONTROLLERS_MAX 8

enum controller_role { ROLE_UNKNOWN, ROLE_PRIMARY, ROLE_STANDBY, ROLE_DOWN };

struct controllers;

/* Split list ("http://a:6817,http://b:6817"; spaces around elements ignored) once. Every element
 * must be an http(s):// URL or unix:/path; an invalid, empty or surplus element does not stop the
 * object being made, but controllers_error() then says which, and no fetch is tried. */
struct controllers *controllers_new(const char *list);
void controllers_free(struct controllers *c); /* NULL: nothing */
/* Where url ([url, url + n), http(s)://) names slurmctld's metrics path rather than its base URL: a
 * path whose last segment is "metrics" or whose segment before the last is ("/metrics",
 * "/metrics/nodes"; a trailing '/', a query or a fragment aside). The offset of that "/metrics" (the
 * base URL is what precedes it), or -1 when there is none. The shim appends /metrics/<endpoint>
 * itself: http://ctl:6817/metrics would fetch /metrics/metrics/nodes. */
long controllers_metrics_path(const char *url, size_t n);
/* Why the list is not usable ("--slurmctld.url: element 2 "ftp://x" is not ..."), or NULL. */
const char *controllers_error(const struct controllers *c);
size_t controllers_count(const struct controllers *c);
const char *controllers_url(const struct controllers *c, size_t i);     /* to fetch: never shown */
const char *controllers_shown(const struct controllers *c, size_t i);   /* to show: userinfo hidden */
/* Indexes in the order to try them: the one that answered last while it is the primary, then the
 * others as configured, the ones last seen down at the end, the one seen down longest ago first.
 * Returns the count. */
size_t controllers_order(struct controllers *c, size_t order[CONTROLLERS_MAX]);
/* Index i was tried: role is what it was seen as (primary: it answered), why the reason when it
 * is not primary (escaped or not: it is escaped before logging). */
void controllers_seen(struct controllers *c, size_t i, enum controller_role role, const char *why);
/* The fetch's sources came from i: it becomes current. A change of the current controller (not
 * the first choice) is counted and logged once, with why the previous one was passed over. */
void controllers_answered(struct controllers *c, size_t i);
/* The current controller's index, or -1 before any answered. */
int controllers_current(struct controllers *c);
/* slurm_exporter_shim_controller_info{url,role} per controller and
 * slurm_exporter_shim_controller_switches_total, in the self-metric style. */
void controllers_write_metrics(struct controllers *c, struct buf *b);
const char *controller_role_name(enum controller_role r);
/* What the status page shows of one controller. */
struct controller_view {
	char url[200];           /* shown: userinfo hidden */
	enum controller_role role;
	int current;             /* the one answering now */
	char why[200];           /* why it was last passed over (raw upstream bytes possible) */
};
/* Copy out every controller's view; returns the count. */
size_t controllers_view(struct controllers *c, struct controller_view out[CONTROLLERS_MAX]);

#endif
