/* status.h: the status page at / (what an admin opens when a panel is empty), built only from the
 * result record of the scraper's last rendered answer (scraper_status, render.h): it never fetches. Per source: up or not,
 * the answer's age, last error, HTTP status, fetch duration and bytes; the mapping file and its
 * last reload; slurmctld's answers against the table's native catalog (catalog.h: the families the
 * table reads that slurmctld no longer serves, those it serves that no validated release lists);
 * rows by outcome and by fidelity; the families served approximate because the 16-bit
 * counters they read may have wrapped (their wraps_at, mapping.h); the families left out with their
 * reason (with several schemas, every schema's from its own last answer, the nodes and sources from
 * the newest of them); links to the metrics and the native passthrough's paths, and to each
 * --probe.targets-file target's /probe?target= (their state is in their own self metrics). Plain
 * HTML with one inline stylesheet, no JavaScript; every upstream or configured string is escaped
 * (status_html.h). */
#ifndef SHIM_STATUS_H
#define SHIM_STATUS_H

#include <stddef.h>

struct buf;
struct probe_set;
struct scraper_status;

/* The page's size bound in bytes, whatever the cluster's size: every list on it stops at its
 * bound (nodeview.h, STATUS_FAMILIES_MAX) with a count of the rest; tests/test_nodeview.c
 * checks it at 50,000 nodes with every string at its longest and escaped. */
#define STATUS_PAGE_MAX (512u * 1024)
#define STATUS_FAMILIES_MAX 96 /* families listed as left out, and as served approximate */
/* the same, for the schemas after the first together: each lists STATUS_FAMILIES_OTHERS / (schemas - 1)
   of each kind (40 beside one other schema, 5 beside seven), so that the page keeps its bound */
#define STATUS_FAMILIES_OTHERS 40

struct status_page_info {
	const char *version;       /* SHIM_VERSION */
	const char *metrics_path;  /* the telemetry path, "/metrics" */
	const char *mapping_file;  /* the mapping file given, or NULL */
	double now;                /* unix time the page is built at */
	const struct probe_set *probes; /* --probe.targets-file's targets, linked; NULL: none */
	int native_passthrough;    /* link /native/metrics/<endpoint> (native.h) */
	/* The schemas served (server.h's server_config): their names, and which listener serves which
	   (listen_schema NULL: every listener the first; nlisten 0: systemd's sockets). The rows of
	   each are counted from scraper_status.schemas, the tables as of now. */
	const char *const *schema_stem;
	size_t nschemas;
	const char *const *listen;
	size_t nlisten;
	const size_t *listen_schema;
	/* Each schema's last scrape (nschemas of them; [0] unused: the first's is status_page's st),
	   NULL: st alone. Given, the page's cluster view is the newest scrape's, whichever schema it
	   was of, and every schema's rows are shown from its own. */
	const struct scraper_status *const *schema_st;
};

void status_page(struct buf *out, const struct status_page_info *info, const struct scraper_status *st);

#endif
