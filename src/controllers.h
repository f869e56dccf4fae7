/* controllers.h: slurmctld's controllers (--slurmctld.url given several times, or a comma list;
 * a single URL is a list of one): the list, which one answered last (the current primary) and what
 * each was last seen as; and the one check of an upstream's base URL (upstream_url_is_valid).
 *
 * Slurm runs one primary slurmctld and standby backups; a standby answers every /metrics* with
 * 303 to SlurmctldHost[0] (or 503 when it has no control address), and a dead host refuses the
 * connection. fetch.c tries the controllers in controllers_order(), all sources of one fetch from
 * one controller, records what each one did (controllers_seen) and which one the fetch's sources
 * came from (controllers_answered); scrape.c serves no cached answer of another controller than
 * controllers_current(), so one rendered answer reads one controller only.
 *
 * With a single configured URL, the origin a standby's 303 points at is learnt as a controller of
 * its own (controllers_learn, after the configured ones, never sent the credentials): the
 * answers read there carry its index, so they are never mixed with the configured one's. A learnt
 * controller is asked only when the configured one points at it in the same fetch.
 *
 * Thread-safe: every function takes the object's own lock (never held while calling out).
 * Ownership: controllers_url and controllers_shown return strings owned by the object, valid until
 * controllers_free. Every label, page string and log line shows controllers_shown (cred.h). */
#ifndef SHIM_CONTROLLERS_H
#define SHIM_CONTROLLERS_H

#include <stddef.h>

#include "buf.h"

#define CONTROLLERS_MAX 8 /* configured and learnt together */

/* unusable: it answers, but nothing of the answer can be used (an error status, an empty or cut
 * answer): not the primary, as a standby is not */
enum controller_role { ROLE_UNKNOWN, ROLE_PRIMARY, ROLE_STANDBY, ROLE_DOWN, ROLE_UNUSABLE };

struct controllers;

/* Is s[0..n) a base URL the shim reads an upstream (or the old exporter) at: http:// or https://
 * (any case) and something after it, or, with unix_ok, unix:/path (a socket); printable ASCII
 * without spaces (it goes into log lines and HTTP requests). The one check behind
 * --slurmctld.url, --slurmrestd.url, --compare-legacy, the targets file and controllers_new. */
int upstream_url_is_valid(const char *s, size_t n, int unix_ok);

/* Split list ("http://a:6817,http://b:6817") once. Every element must pass upstream_url_is_valid
 * (no unix:/: slurmctld serves HTTP on its port only), and there may be CONTROLLERS_MAX at most
 * (the flags and the targets file refuse more at start); otherwise the object is still made, but
 * controllers_error() says why, and no fetch is tried. */
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
/* The configured controllers; controllers_total: with the learnt ones (indexes count .. total-1). */
size_t controllers_count(const struct controllers *c);
size_t controllers_total(struct controllers *c);
const char *controllers_url(const struct controllers *c, size_t i);     /* to fetch: never shown */
const char *controllers_shown(const struct controllers *c, size_t i);   /* to show: userinfo hidden */
int controllers_is_learnt(const struct controllers *c, size_t i);
/* Learn base (scheme://host:port, the origin a single configured URL's 303 points at): its index,
 * the existing one when base is known, or -1 (a list of several never learns; or full). */
int controllers_learn(struct controllers *c, const char *base);
/* Indexes of the configured controllers in the order to try them: the one that answered last
 * while it is the primary, then the others as configured, the ones last seen down at the end, the
 * one seen down longest ago first. Returns the count. */
size_t controllers_order(struct controllers *c, size_t order[CONTROLLERS_MAX]);
/* Index i was tried: role is what it was seen as (primary: it answered usably), why the reason
 * when it is not primary, raw (the log and the status page escape it where they show it). */
void controllers_seen(struct controllers *c, size_t i, enum controller_role role, const char *why);
/* The fetch's sources came from i: it becomes current. A change of the current controller (not
 * the first choice) is counted and logged once, with why the previous one was passed over; the
 * previous one, when it was not asked in that fetch and so is still seen as primary, becomes
 * unknown (one primary at a time). */
void controllers_answered(struct controllers *c, size_t i);
/* The current controller's index, or -1 before any answered. */
int controllers_current(struct controllers *c);
/* Times the current controller changed since start (the self metrics' switches). */
unsigned long controllers_switches(struct controllers *c);
const char *controller_role_name(enum controller_role r);
/* What the status page shows of one controller. */
struct controller_view {
	char url[200];
	enum controller_role role;
	int current;             /* the one answering now */
	char why[200];           /* why it was last passed over (raw upstream bytes possible) */
};
/* Copy out every controller's view, the learnt ones after the configured; returns the count. */
size_t controllers_view(struct controllers *c, struct controller_view out[CONTROLLERS_MAX]);

#endif
