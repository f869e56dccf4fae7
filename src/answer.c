/* answer.c: see answer.h. */
#include "answer.h"
#include "render.h"
#include "xmalloc.h"

#include <pthread.h>
#include <stdlib.h>
#include <time.h>

struct answer_held {
	atomic_size_t bytes;
	atomic_int refs;          /* the creator's, plus one per retired answer alive */
	struct answer *oldest, *newest; /* its retired answers alive, under mu */
};

/* One lock for every answer's holders, every ledger's list and the counts of gzip forms: taken for
 * a few pointer moves per request (and by an eviction, for the shutdown calls). cv: a ledger's
 * bytes went down. */
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;

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

/* The body and the result record: what an answer holds before any gzip form. */
static size_t plain_bytes(const struct answer *a)
{
	const struct render_result *r = a->result;
	return a->len + (r ? sizeof(*r) + r->nrows * sizeof(*r->rows) + (r->nodes ? sizeof(*r->nodes) : 0) : 0);
}

void answer_unref(struct answer *a)
{
	if (!a || atomic_fetch_sub(&a->refs, 1) != 1)
		return;
	struct answer_held *h = a->held; /* set before the last reference could be dropped */
	if (h) {
		pthread_mutex_lock(&mu);
		*(a->older ? &a->older->newer : &h->oldest) = a->newer;
		*(a->newer ? &a->newer->older : &h->newest) = a->older;
		atomic_fetch_sub(&h->bytes, a->held_bytes);
		pthread_cond_broadcast(&cv);
		pthread_mutex_unlock(&mu);
		answer_held_put(h);
	}
	compressed_free(&a->gz);
	render_result_free(a->result);
	free(a->result);
	free(a->body);
	free(a);
}

/* Count a's gzip form of gzb bytes in its ledger, once, if it is retired. */
static void count_gzip(struct answer *a, size_t gzb)
{
	pthread_mutex_lock(&mu);
	if (a->held && !a->gz_counted && gzb) {
		a->gz_counted = 1;
		a->held_bytes += gzb;
		atomic_fetch_add(&a->held->bytes, gzb);
	}
	pthread_mutex_unlock(&mu);
}

int answer_gzip(struct answer *a, struct compress_stats *st, const void **body, size_t *blen)
{
	if (compressed_get(&a->gz, a->body, a->len, st, body, blen) < 0)
		return -1;
	count_gzip(a, *blen);
	return 0;
}

void answer_count_held(struct answer *a, struct answer_held *h)
{
	if (!a)
		return;
	pthread_mutex_lock(&mu);
	if (a->held) {
		pthread_mutex_unlock(&mu);
		return;
	}
	/* the caller holds a reference: the last one, wherever it is dropped, takes the bytes off */
	a->held_bytes = plain_bytes(a);
	atomic_fetch_add(&h->refs, 1);
	atomic_fetch_add(&h->bytes, a->held_bytes);
	a->held = h;
	a->older = h->newest;
	*(h->newest ? &h->newest->newer : &h->oldest) = a;
	h->newest = a;
	pthread_mutex_unlock(&mu);
	/* its gzip form, if made: outside mu, as making one holds the form's lock for milliseconds
	 * (answer_gzip counts one made from now on) */
	count_gzip(a, compressed_bytes(&a->gz));
}

void answer_hold(struct answer *a, struct answer_holder *h)
{
	h->a = a;
	h->evicted = 0;
	h->prev = NULL;
	pthread_mutex_lock(&mu);
	h->next = a->holders;
	if (a->holders)
		a->holders->prev = h;
	a->holders = h;
	pthread_mutex_unlock(&mu);
}

void answer_unhold(struct answer_holder *h)
{
	pthread_mutex_lock(&mu);
	*(h->prev ? &h->prev->next : &h->a->holders) = h->next;
	if (h->next)
		h->next->prev = h->prev;
	pthread_mutex_unlock(&mu);
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

size_t answer_counted(const struct answer *a)
{
	pthread_mutex_lock(&mu);
	size_t n = a->held ? a->held_bytes : 0;
	pthread_mutex_unlock(&mu);
	return n;
}

unsigned answer_held_evict(struct answer_held *h, size_t budget, const struct answer *keep, size_t *goal)
{
	unsigned closed = 0;
	pthread_mutex_lock(&mu);
	size_t left = atomic_load(&h->bytes), kept = keep && keep->held == h ? keep->held_bytes : 0;
	left -= kept < left ? kept : left; /* it stays whoever holds it */
	for (struct answer *a = h->oldest; a && a != h->newest && left > budget; a = a->newer) {
		if (a == keep)
			continue;
		for (struct answer_holder *k = a->holders; k; k = k->next)
			if (!k->evicted) {
				k->evicted = 1;
				k->evict(k);
				closed++;
			}
		left -= a->held_bytes; /* once its holders are gone (a request about to send it may hold it on) */
	}
	*goal = (left > budget ? left : budget) + kept;
	pthread_mutex_unlock(&mu);
	return closed;
}

int answer_held_wait(struct answer_held *h, size_t goal, double timeout_s)
{
	struct timespec until;
	int rc = 0;
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += (time_t)timeout_s;
	until.tv_nsec += (long)((timeout_s - (double)(time_t)timeout_s) * 1e9);
	if (until.tv_nsec >= 1000000000L) {
		until.tv_sec++;
		until.tv_nsec -= 1000000000L;
	}
	pthread_mutex_lock(&mu);
	while (rc == 0 && atomic_load(&h->bytes) > goal)
		rc = pthread_cond_timedwait(&cv, &mu, &until);
	int over = atomic_load(&h->bytes) > goal;
	pthread_mutex_unlock(&mu);
	return over ? -1 : 0;
}
