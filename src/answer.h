/* answer.h: one answer to a request (a rendered scrape, a native passthrough page, a refusal),
 * immutable once handed out and shared by every connection sending it through an atomic reference
 * count. It holds its own bytes only: never the payloads it was rendered from.
 *
 * Answers that are no longer the scraper's current ones ("retired") but that connections still
 * hold (clients that do not read) are counted, each once, body, result record and gzip form, in a
 * ledger (struct answer_held). Each connection sending an answer registers as a holder of it (struct
 * answer_holder, server.c's): when the ledger is over its budget, the scraper has the holders of the
 * oldest retired answers closed (answer_held_evict) before it renders a new answer, so that what
 * clients that do not read hold stays bounded without refusing anyone else (docs/reliability.md).
 * Ownership: answer_new returns a new answer with one reference, taking body (malloc'd, len bytes,
 * NUL-terminated) and result (malloc'd, or NULL); answer_ref adds one; answer_unref drops one and
 * frees the answer with the last. Once answer_count_held has been called, the answer's bytes count
 * in the ledger until it is freed. The ledger is reference counted too (every counted answer
 * holds it), so it outlives its scraper if it must. A holder holds a reference to its answer from
 * answer_hold to answer_unhold (the caller's, which it drops after answer_unhold). */
#ifndef SHIM_ANSWER_H
#define SHIM_ANSWER_H

#include <stdatomic.h>
#include <stddef.h>

#include "compress.h"
#include "source.h"

struct render_result;
struct answer_held;
struct answer_holder;

struct answer {
	atomic_int refs;
	int status;                    /* 200, or 503 */
	char *body;                    /* len bytes, NUL-terminated */
	size_t len;
	struct render_result *result;  /* what it was rendered from and what each row gave (render.h);
					  NULL for the native passthrough's and a refusal */
	struct compressed gz;          /* its gzip form, made on the first request for it (answer_gzip) */
	/* internal: which inputs it was rendered from, to share it (scrape.c), and its accounting */
	unsigned reloads;              /* the scraper's reload count it was rendered under */
	unsigned long long in[SRC_COUNT]; /* the cache's serials of its payloads (0: none) */
	/* the rest under answer.c's lock */
	struct answer_held *held;      /* set by answer_count_held */
	size_t held_bytes;             /* what it counts there */
	int gz_counted;                /* its gzip form is in held_bytes */
	struct answer *older, *newer;  /* the ledger's retired answers, oldest first */
	struct answer_holder *holders; /* the connections sending it */
};

/* One connection sending an answer (server.c's, which owns the struct). evict closes the connection
 * without waiting (it is called under answer.c's lock: it must neither block nor call answer_*);
 * the connection's end then calls answer_unhold as it does for any other end. */
struct answer_holder {
	struct answer *a;
	void (*evict)(struct answer_holder *h);
	void *cls;                     /* the owner's */
	int evicted;                   /* evict was called */
	struct answer_holder *prev, *next; /* internal */
};

struct answer *answer_new(int status, char *body, size_t len, struct render_result *result);
struct answer *answer_ref(struct answer *a);
void answer_unref(struct answer *a); /* NULL: nothing */
/* compressed_get (compress.h) of a's body into its gzip form: a gzip form made after a was retired
 * is added to its ledger's count then. */
int answer_gzip(struct answer *a, struct compress_stats *st, const void **body, size_t *blen);
/* From now until it is freed, a's bytes count in h: the scraper calls it when a is no longer its
 * current answer (or never was: an answer of one request's own), so that h counts what only
 * connections hold. Once per answer; NULL a: nothing. */
void answer_count_held(struct answer *a, struct answer_held *h);

/* Register h (its evict and cls set) as a holder of a, until answer_unhold(h). */
void answer_hold(struct answer *a, struct answer_holder *h);
void answer_unhold(struct answer_holder *h);

struct answer_held *answer_held_new(void);
void answer_held_put(struct answer_held *h); /* drop the creator's reference */
/* Bytes of retired answers still held by connections. */
size_t answer_held_bytes(const struct answer_held *h);
/* The bytes a counts in its ledger (0: not counted). */
size_t answer_counted(const struct answer *a);
/* When h's bytes are over budget: closes the connections holding h's retired answers, every holder
 * of the oldest answer first, then the next, until what the others hold is within budget; the
 * newest retired answer's holders are never closed (they got it just before it was replaced), nor
 * keep's, which does not count against the budget (the status page's answer: it stays anyway; NULL:
 * none). Returns the connections closed (0: within budget, or nobody to close), with *goal the
 * bytes the ledger holds once they are gone (budget plus at most the newest retired answer, plus
 * keep's). */
unsigned answer_held_evict(struct answer_held *h, size_t budget, const struct answer *keep, size_t *goal);
/* Wait until h's bytes are at most goal, or timeout_s passed: 0, or -1 on the timeout. */
int answer_held_wait(struct answer_held *h, size_t goal, double timeout_s);

#endif
