/* answer.h: one answer to a request (a rendered scrape, a native passthrough page, a refusal),
 * immutable once handed out and shared by every connection sending it through an atomic reference
 * count. It holds its own bytes only: never the payloads it was rendered from.
 *
 * The bytes of answers that are no longer the scraper's current ones but that connections still
 * hold (clients that do not read) are counted in a ledger (struct answer_held) that the scraper
 * checks before it renders a new one (docs/reliability.md: beyond its budget, a new render is
 * refused with 503).
 * Ownership: answer_new returns a new answer with one reference, taking body (malloc'd, len bytes,
 * NUL-terminated) and result (malloc'd, or NULL); answer_ref adds one; answer_unref drops one and
 * frees the answer with the last. Once answer_count_held has been called, the answer's bytes count
 * in the ledger until it is freed. The ledger is reference counted too (every counted answer
 * holds it), so it outlives its scraper if it must. */
#ifndef SHIM_ANSWER_H
#define SHIM_ANSWER_H

#include <stdatomic.h>
#include <stddef.h>

#include "compress.h"
#include "source.h"

struct render_result;
struct answer_held;

struct answer {
	atomic_int refs;
	int status;                    /* 200, or 503 */
	char *body;                    /* len bytes, NUL-terminated */
	size_t len;
	struct render_result *result;  /* what it was rendered from and what each row gave (render.h);
					  NULL for the native passthrough's and a refusal */
	struct compressed gz;          /* its gzip form, made on the first request for it (compress.h) */
	/* internal: which inputs it was rendered from, to share it (scrape.c), and its accounting */
	unsigned reloads;              /* the scraper's reload count it was rendered under */
	unsigned long long in[SRC_COUNT]; /* the cache's serials of its payloads (0: none) */
	struct answer_held *held;      /* set by answer_count_held */
	size_t held_bytes;             /* what it counted */
};

struct answer *answer_new(int status, char *body, size_t len, struct render_result *result);
struct answer *answer_ref(struct answer *a);
void answer_unref(struct answer *a); /* NULL: nothing */
/* The bytes a holds (its body, its result record and its gzip form once made): what a connection
 * holding it keeps alive. A gzip form made after answer_count_held was called is not in the
 * ledger: the scraper's current answer is the one clients ask for (and compress) first, and it is
 * counted only when it is retired, gzip form included. */
size_t answer_bytes(const struct answer *a);
/* From now until it is freed, a's bytes count in h: the scraper calls it when a is no longer its
 * current answer (or never was: an answer of one request's own), so that h counts what only
 * connections hold. Once per answer; NULL a: nothing. */
void answer_count_held(struct answer *a, struct answer_held *h);

struct answer_held *answer_held_new(void);
void answer_held_put(struct answer_held *h); /* drop the creator's reference */
/* Bytes of retired answers still held by connections. */
size_t answer_held_bytes(const struct answer_held *h);

#endif
