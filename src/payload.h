/* payload.h: one source's answer, fetched (fetch.c) or replayed from a file, parsed as its bytes
 * arrive by the source's parser (the body itself is never held: only the families the mapping
 * reads are kept, see expo_feed) and judged by source_verdict() when it is complete. Whoever gets
 * the bytes only records facts (payload_fault, the status, the bytes); payload_finish() asks
 * source_verdict() for the verdict. A payload is immutable after payload_finish() (shared
 * payloads are handed out as const) and shared by concurrent scrapes through an atomic reference
 * count; its source and mapping generation are fixed at creation.
 * Ownership: payload_replay, like payload_new, returns a new reference. */
#ifndef SHIM_PAYLOAD_H
#define SHIM_PAYLOAD_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "expo.h"
#include "hmap.h"
#include "source.h"

/* The distinct family names a slurmctld answer named, kept or not (the catalog check, catalog.h):
 * the first PAYLOAD_NAMES_MAX in the order first named, each cut at PAYLOAD_NAME_MAX bytes; more
 * counts the others. */
#define PAYLOAD_NAMES_MAX 1024
#define PAYLOAD_NAME_MAX 200
struct payload_names {
	char **v;
	size_t n, cap;
	size_t more;
	struct hmap idx;         /* v's index by name (hmap.h) */
};

struct payload {
	atomic_int refs;
	const enum source_id src;
	const unsigned gen;      /* the mapping generation it was parsed for (see payload_new) */
	int controller;          /* slurmctld: the index of the controller it came from in its
				    upstream's list (controllers.h); -1: none (replay, other upstream, no
				    controller answered) */
	const int all;           /* parsed without a keep filter: it holds every family the answer
				    named (the native passthrough serves only such payloads) */
	int ok;                  /* usable: rows may read it */
	long http_status;        /* 0: no HTTP answer (connection failed, replay) */
	size_t len;              /* body bytes received */
	struct expo expo;        /* the families kept, when ok; expo.nnamed counts the families the
				    answer named, kept or not: 0 when it named none (mapping.c's
				    absent_ok holds only then) */
	size_t parse_errors;
	double seconds;          /* fetch duration */
	double at;               /* monotonic time the fetch finished */
	struct source_facts facts; /* what payload_finish judged (http_status and len copied in) */
	struct payload_names named; /* slurmctld's: every family the answer named (a restart forgets them) */
	void *parse_state;       /* the source parser's, until payload_finish */
	expo_keep_fn keep;       /* the caller's filter (NULL: all), which payload_keep asks, until payload_finish */
	void *keep_ctx;
	char reason[240];        /* why it is not ok: one line for logs and the 503 body */
};

/* A payload that will store the families keep() wants (NULL: all); ctx must outlive the parse. gen
 * names the mapping (table) keep() filters for: a payload is only used by scrapes of that table. */
struct payload *payload_new(enum source_id src, unsigned gen, expo_keep_fn keep, void *ctx);
const struct payload *payload_ref(const struct payload *p);
void payload_unref(const struct payload *p);
/* A new HTTP response begins (a redirect was followed): forget what the previous one sent. */
void payload_restart(struct payload *p, long http_status);
/* What payload_feed says of the bytes to come. */
enum payload_feed {
	PAYLOAD_FEED_MORE,    /* taken: send the rest */
	PAYLOAD_FEED_TOO_BIG, /* not taken: the body would pass max_body (recorded: FAULT_TOO_BIG) */
	PAYLOAD_FEED_ENOUGH,  /* taken, and the parser knows the answer unusable already
				 (source_parser.stopped): the rest need not come */
};
/* Body bytes as they arrive, after http_status is set (0 for a file). They are counted, and parsed
 * when the status is 200 or 0. */
enum payload_feed payload_feed(struct payload *p, const char *data, size_t n, size_t max_body);
/* Record what went wrong (detail: text for the fault, or NULL); only the first fault is kept. */
void payload_fault(struct payload *p, enum source_fault fault, const char *detail);
/* The answer is complete, or its transfer ended with a fault recorded: finish the parse and judge
 * it (source_verdict). A payload that is not ok keeps no families. */
void payload_finish(struct payload *p);
/* Whether slurmctld's answer p named family [name, name + len) (kept or not; its named list). */
int payload_has_named(const struct payload *p, const char *name, size_t len);
/* Read DIR/<source file> into a finished payload. A missing file is a failed source. */
struct payload *payload_replay(const char *dir, enum source_id src, size_t max_body, unsigned gen, expo_keep_fn keep,
			       void *ctx);
/* The rule across one scrape's answers (p[id] NULL: not fetched): up[id] is whether rows may read
 * source id (its answer usable, and an empty answer vouched for, see empty_vouched_by). Returns
 * whether any is up. */
int source_usable(const struct payload *const p[SRC_COUNT], int up[SRC_COUNT]);
/* What upstream u's token did in one scrape's answers (p[id] NULL: not fetched), for the self metric
 * and the status page: TOKEN_NOT_CONFIGURED (or no answer over HTTP), TOKEN_UNREADABLE, TOKEN_SENT
 * (accepted by every answer that got it), or -1: refused by source *which. */
int source_token_state(const struct payload *const p[SRC_COUNT], unsigned need, enum upstream_id u, int *which);
/* Why source id is not up (for the 503 body), into why; returns why. */
const char *source_down_reason(const struct payload *const p[SRC_COUNT], enum source_id id, char *why, size_t whylen);

#endif
