/* scrape.h: one scrape, from request to text. Data flows one way:
 *   needed endpoints (mapping) -> payloads (shared fetch or replay) -> mapping_eval -> writer.
 *
 * Concurrent scrapes share one in-flight fetch per endpoint, and a finished answer (good or bad) is
 * reused for min_interval seconds; nothing older is ever served. The mapping can be swapped at any
 * time (SIGHUP): a scrape keeps the table it started with.
 * Ownership: the scraper owns its payloads and mapping; scrape_set_mapping takes ownership. */
#ifndef SHIM_SCRAPE_H
#define SHIM_SCRAPE_H

#include <pthread.h>

#include "buf.h"
#include "fetch.h"
#include "mapping.h"

struct scraper_config {
	struct fetch_config fetch;
	const char *replay_dir;   /* read files instead of HTTP */
	double min_interval;      /* seconds an answer is reused */
	const char *flags;        /* enabled row flags, e.g. "gpus-acct" */
	size_t max_output;        /* bytes */
};

struct mapref;

struct scraper {
	struct scraper_config cfg;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct {
		struct payload *p;
		int inflight;
		int logged_ok;          /* last state logged: -1 none, 0 failed, 1 ok */
		unsigned long fetches;
	} slot[EP_COUNT];
	struct mapref *map;
	unsigned gen;             /* bumped when the mapping changes */
	size_t last_output;       /* bytes of the last scrape's output (to size the next one) */
	int reload_ok;
	double reload_time;       /* unix time of the last reload attempt */
};

void scraper_init(struct scraper *s, const struct scraper_config *cfg, struct mapping *m);
void scraper_destroy(struct scraper *s);
void scrape_set_mapping(struct scraper *s, struct mapping *m);   /* NULL: a reload failed */

/* Run one scrape. Writes the exposition (or, on 503, the reasons) into out and returns the HTTP
 * status: 200, or 503 when every endpoint the mapping needs failed. timeout_s bounds the fetch. */
int scrape_run(struct scraper *s, double timeout_s, struct buf *out);

#endif
