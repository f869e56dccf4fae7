/* answer.c: see answer.h. */
#include "answer.h"
#include "render.h"
#include "xmalloc.h"

#include <stdlib.h>

struct answer_held {
	atomic_size_t bytes;
	atomic_int refs;          /* the creator's, plus one per retired answer alive */
};

struct answer *answer_new(int status, char *body, size_t len, struct render_result *result)
{
	struct answer *a = xcalloc(1, sizeof(*a));
	atomic_init(&a->refs, 1);
	a->status = status;
	a->body = body;
	a->len = len;
	a->result = result;
	compressed_init(&a->gz);
	return a;
}

struct answer *answer_ref(struct answer *a)
{
	atomic_fetch_add(&a->refs, 1);
	return a;
}

size_t answer_bytes(const struct answer *a)
{
	const struct render_result *r = a->result;
	return a->len + (r ? sizeof(*r) + r->nrows * sizeof(*r->rows) + (r->nodes ? sizeof(*r->nodes) : 0) : 0) +
	       compressed_bytes(&((struct answer *)a)->gz); /* its lock only: the answer stays immutable */
}

void answer_unref(struct answer *a)
{
	if (!a || atomic_fetch_sub(&a->refs, 1) != 1)
		return;
	if (a->held) {
		atomic_fetch_sub(&a->held->bytes, a->held_bytes);
		answer_held_put(a->held);
	}
	compressed_free(&a->gz);
	render_result_free(a->result);
	free(a->result);
	free(a->body);
	free(a);
}

void answer_count_held(struct answer *a, struct answer_held *h)
{
	if (!a || a->held)
		return;
	/* the caller holds a reference: the last one, wherever it is dropped, takes the bytes off */
	a->held_bytes = answer_bytes(a);
	atomic_fetch_add(&h->refs, 1);
	atomic_fetch_add(&h->bytes, a->held_bytes);
	a->held = h;
}

struct answer_held *answer_held_new(void)
{
	struct answer_held *h = xcalloc(1, sizeof(*h));
	atomic_init(&h->bytes, 0);
	atomic_init(&h->refs, 1);
	return h;
}

void answer_held_put(struct answer_held *h)
{
	if (h && atomic_fetch_sub(&h->refs, 1) == 1)
		free(h);
}

size_t answer_held_bytes(const struct answer_held *h)
{
	return atomic_load(&((struct answer_held *)h)->bytes);
}
