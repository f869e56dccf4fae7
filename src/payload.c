/* payload.c: see payload.h. */
#include "payload.h"
#include "file_read.h"
#include "log.h"
#include "monotime.h"
#include "xmalloc.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>
#include <unistd.h>

static size_t names_find(const struct payload_names *nm, const char *name, size_t len, uint32_t h)
{
	struct hmap_iter it = hmap_iter(&nm->idx, h);
	for (size_t i; (i = hmap_next(&it)) != HMAP_NONE;)
		if (!strncmp(nm->v[i], name, len) && !nm->v[i][len])
			return i;
	return SIZE_MAX;
}

/* Note a family name the answer named, once (the first PAYLOAD_NAMES_MAX; the others counted). */
static void names_add(struct payload_names *nm, const char *name, size_t len)
{
	if (len > PAYLOAD_NAME_MAX)
		len = PAYLOAD_NAME_MAX;
	uint32_t h = hmap_hash(name, len);
	if (nm->n && !strncmp(nm->v[nm->n - 1], name, len) && !nm->v[nm->n - 1][len])
		return; /* the TYPE line's name again, at its samples */
	if (names_find(nm, name, len, h) != SIZE_MAX)
		return;
	if (nm->n == PAYLOAD_NAMES_MAX) {
		nm->more++;
		return;
	}
	nm->v = xgrow(nm->v, &nm->cap, nm->n + 1, sizeof(*nm->v));
	nm->v[nm->n] = xstrndup(name, len);
	hmap_put(&nm->idx, h, nm->n++);
}

static void names_clear(struct payload_names *nm)
{
	for (size_t i = 0; i < nm->n; i++)
		free(nm->v[i]);
	free(nm->v);
	hmap_free(&nm->idx);
	memset(nm, 0, sizeof(*nm));
}

int payload_has_named(const struct payload *p, const char *name, size_t len)
{
	return len <= PAYLOAD_NAME_MAX && names_find(&p->named, name, len, hmap_hash(name, len)) != SIZE_MAX;
}

/* slurmctld's answers: every family name the parser sees passes here, so that an exporter's page
 * given as slurmctld's is told (facts.exporter: the first such name) and the names are noted for
 * the catalog check, then the caller's filter. */
static int payload_keep(const char *name, size_t len, void *ctx)
{
	struct payload *p = ctx;
	names_add(&p->named, name, len);
	if (!p->facts.exporter[0] && source_is_exporter_family(name, len))
		snprintf(p->facts.exporter, sizeof(p->facts.exporter), "%.*s", (int)(len < 63 ? len : 63), name);
	return p->keep ? p->keep(name, len, p->keep_ctx) : 1;
}

struct payload *payload_new(enum source_id src, unsigned gen, expo_keep_fn keep, void *ctx)
{
	/* src and gen are const members: set once, here, by initialization */
	const struct payload init = { .src = src, .gen = gen, .controller = -1, .all = keep == NULL };
	struct payload *p = xmalloc(sizeof(*p));
	memcpy(p, &init, sizeof(*p));
	atomic_init(&p->refs, 1);
	p->keep = keep;
	p->keep_ctx = ctx;
	if (sources[src].upstream == UPSTREAM_SLURMCTLD)
		expo_init_keep(&p->expo, payload_keep, p);
	else
		expo_init_keep(&p->expo, keep, ctx);
	p->parse_state = sources[src].parser->begin(&p->expo);
	return p;
}

const struct payload *payload_ref(const struct payload *p)
{
	/* the count is the one mutable part of a shared payload */
	atomic_fetch_add(&((struct payload *)p)->refs, 1);
	return p;
}

void payload_unref(const struct payload *p)
{
	struct payload *q = (struct payload *)p; /* the last reference: nobody shares it any more */
	if (!q || atomic_fetch_sub(&q->refs, 1) != 1)
		return;
	if (q->parse_state)
		sources[q->src].parser->discard(q->parse_state);
	expo_free(&q->expo);
	names_clear(&q->named);
	free(q);
}

void payload_restart(struct payload *p, long http_status)
{
	const struct source_parser *sp = sources[p->src].parser;
	if (p->parse_state)
		sp->discard(p->parse_state);
	expo_reset(&p->expo);
	names_clear(&p->named);
	p->parse_state = sp->begin(&p->expo);
	p->len = 0;
	p->http_status = http_status;
}

enum payload_feed payload_feed(struct payload *p, const char *data, size_t n, size_t max_body)
{
	if (max_body && n > max_body - (p->len < max_body ? p->len : max_body)) { /* max_body 0: no limit */
		p->facts.limit = max_body;
		payload_fault(p, FAULT_TOO_BIG, NULL);
		return PAYLOAD_FEED_TOO_BIG;
	}
	p->len += n;
	if (p->http_status != 0 && p->http_status != 200)
		return PAYLOAD_FEED_MORE;
	const struct source_parser *sp = sources[p->src].parser;
	sp->feed(p->parse_state, &p->expo, data, n);
	return sp->stopped && sp->stopped(p->parse_state) ? PAYLOAD_FEED_ENOUGH : PAYLOAD_FEED_MORE;
}

void payload_fault(struct payload *p, enum source_fault fault, const char *detail)
{
	if (p->facts.fault != FAULT_NONE)
		return;
	p->facts.fault = fault;
	snprintf(p->facts.detail, sizeof(p->facts.detail), "%s", detail ? detail : "");
}

void payload_finish(struct payload *p)
{
	struct source_facts *f = &p->facts;
	f->malformed = sources[p->src].parser->end(p->parse_state, &p->expo);
	p->parse_state = NULL; /* end() took it */
	f->http_status = p->http_status;
	f->len = p->len;
	f->first_line = p->expo.nerrors ? p->expo.errors[0].line : 0;
	f->first_reason = p->expo.nerrors ? p->expo.errors[0].reason : NULL;
	f->nnamed = p->expo.nnamed;
	enum source_verdict v = source_verdict(&sources[p->src], f, p->reason, sizeof(p->reason));
	p->ok = v == VERDICT_OK;
	p->parse_errors = v == VERDICT_OK || v >= VERDICT_MALFORMED ? f->malformed : 0;
	f->first_reason = NULL; /* it points into the families, which a failed payload lets go */
	if (!p->ok) { /* nothing of a failed answer is used: let its families go now */
		expo_reset(&p->expo);
		names_clear(&p->named);
	}
	expo_drop_keep(&p->expo); /* the filter's owner may go away; the payload stays */
	p->keep = NULL;
	p->keep_ctx = NULL;
}

struct payload *payload_replay(const char *dir, enum source_id src, size_t max_body, unsigned gen, expo_keep_fn keep,
			       void *ctx)
{
	struct payload *p = payload_new(src, gen, keep, ctx);
	char path[4096];
	FILE *f;
	char chunk[65536], why[80];
	size_t n;
	double t0 = mono_now();

	p->facts.from_file = 1;
	snprintf(path, sizeof(path), "%s/%s", dir, sources[src].file);
	/* file_open: a FIFO (or a device) does not block the open, and --once, for ever; anything but a
	 * regular file is refused. No size bound of its own: payload_feed's max_body is the bound. */
	int fd = file_open(path, SIZE_MAX, why, sizeof(why));
	f = fd < 0 ? NULL : fdopen(fd, "rb");
	if (!f) {
		char msg[sizeof(p->facts.detail)];
		if (fd >= 0) {
			snprintf(why, sizeof(why), "%s", strerror(errno));
			close(fd);
		}
		snprintf(msg, sizeof(msg), "cannot read %.200s: %s", path, why);
		payload_fault(p, FAULT_TRANSPORT, msg);
		payload_finish(p);
		return p;
	}
	enum payload_feed rc = PAYLOAD_FEED_MORE;
	while (rc == PAYLOAD_FEED_MORE && (n = fread(chunk, 1, sizeof(chunk), f)) > 0)
		rc = payload_feed(p, chunk, n, max_body); /* too big: recorded */
	int bad = ferror(f);
	fclose(f);
	p->seconds = mono_now() - t0;
	p->at = mono_now();
	if (bad)
		payload_fault(p, FAULT_TRANSPORT, "file unreadable");
	payload_finish(p);
	return p;
}

/* An empty answer that its voucher does not back: it proves nothing. */
static int empty_is_unvouched(const struct payload *const p[SRC_COUNT], int id)
{
	int v = sources[id].empty_vouched_by;
	return p[id]->len == 0 && sources[id].empty_ok && v >= 0 && p[v] && !p[v]->ok;
}

int source_usable(const struct payload *const p[SRC_COUNT], int up[SRC_COUNT])
{
	int any = 0;
	for (int id = 0; id < SRC_COUNT; id++) {
		up[id] = p[id] && p[id]->ok && !empty_is_unvouched(p, id);
		any |= up[id];
	}
	return any;
}

const char *source_down_reason(const struct payload *const p[SRC_COUNT], enum source_id id, char *why, size_t whylen)
{
	if (!p[id]->ok)
		snprintf(why, whylen, "%s", p[id]->reason);
	else
		snprintf(why, whylen, "%s: empty answer, and %s failed: cannot tell \"no jobs\" from \"no metrics\"",
			 sources[id].path, sources[sources[id].empty_vouched_by].path);
	return why;
}

int source_token_state(const struct payload *const p[SRC_COUNT], unsigned need, enum upstream_id u, int *which)
{
	int state = TOKEN_NOT_CONFIGURED;
	for (int id = 0; id < SRC_COUNT; id++) {
		if (!p[id] || !(need & (1u << id)) || sources[id].upstream != u)
			continue;
		if (source_is_token_refused(&sources[id], &p[id]->facts)) {
			*which = id;
			return -1;
		}
		if (p[id]->facts.token == TOKEN_UNREADABLE || (p[id]->facts.token == TOKEN_SENT && state == TOKEN_NOT_CONFIGURED))
			state = (int)p[id]->facts.token;
	}
	return state;
}
