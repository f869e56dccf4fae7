/* scrape.h: one scrape, from request to text. Data flows one way:
 *   needed endpoints (mapping) -> payloads (shared fetch or replay) -> mapping_eval -> writer.
 *
 * Concurrent scrapes share one in-flight fetch per endpoint, and a finished answer (good or bad) is
 * reused for min_interval seconds; nothing older is ever served. A fetch runs on a detached worker
 * thread of its own with the configured fetch timeout, on behalf of every scrape that waits for it:
 * a scrape only waits, until its own deadline, so one client's short deadline neither shortens nor
 * fails the fetch the others get. The mapping can be swapped at any time (SIGHUP): a scrape keeps
 * the table it started with and only uses payloads parsed for that table (its generation).
 * The rendered answer is shared too: scrapes that get the same payloads under the same table get
 * one immutable, reference-counted body (its self metrics are those of the scrape that rendered it).
 * Ownership: the scraper owns its payloads, mapping and last answer; scrape_set_mapping takes
 * ownership of the mapping; scrape_answer returns a new reference. */
#ifndef SHIM_SCRAPE_H
#define SHIM_SCRAPE_H

#include <pthread.h>
#include <stdatomic.h>

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
struct fetch_job;

/* One rendered answer, immutable once scrape_answer returns it. */
struct answer {
	atomic_int refs;
	int status;                    /* 200, or 503 when every endpoint the mapping needs failed */
	char *body;                    /* len bytes, NUL-terminated */
	size_t len;
	unsigned reloads;              /* the scraper's reload count it was rendered under */
	struct payload *in[EP_COUNT];  /* the payloads it was rendered from (references) */
};

struct scraper {
	struct scraper_config cfg;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	pthread_mutex_t render_mu;  /* one render at a time, so scrapes of the same inputs share one */
	struct {
		struct payload *p;
		struct fetch_job *job;  /* the fetch in flight, or NULL */
		int logged_ok;          /* last state logged: -1 none, 0 failed, 1 ok */
		unsigned long fetches;
	} slot[EP_COUNT];
	struct mapref *map;
	unsigned gen;             /* bumped when the mapping changes */
	unsigned reloads;         /* bumped by every reload attempt (a failed one changes self metrics) */
	unsigned workers;         /* fetch threads running; scraper_destroy waits for them */
	struct answer *answer;    /* the last shareable answer, reused while its inputs are current */
	size_t last_output;       /* bytes of the last scrape's output (to size the next one) */
	int reload_ok;
	double reload_time;       /* unix time of the last reload attempt */
};

void scraper_init(struct scraper *s, const struct scraper_config *cfg, struct mapping *m);
void scraper_destroy(struct scraper *s);
void scrape_set_mapping(struct scraper *s, struct mapping *m);   /* NULL: a reload failed */

/* Run one scrape: the exposition (or, on 503, the reasons) as a new reference. timeout_s bounds how
 * long this scrape waits for payloads (never the shared fetch); an endpoint still in flight then is
 * left out of this answer with the reason "scrape deadline passed". */
struct answer *scrape_answer(struct scraper *s, double timeout_s);
struct answer *answer_ref(struct answer *a);
void answer_unref(struct answer *a); /* NULL: nothing */
/* scrape_answer, with the body appended to out; returns the HTTP status (200 or 503). */
int scrape_run(struct scraper *s, double timeout_s, struct buf *out);

#endif
