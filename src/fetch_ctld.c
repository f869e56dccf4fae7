/* fetch_ctld.c: slurmctld's sources of one fetch, from one of its controllers (see fetch.h and
 * controllers.h). A single --slurmctld.url is a list of one: there is no other slurmctld path.
 *
 * Each controller tried is one attempt: every source of the fetch from it, in parallel. An
 * attempt is judged when all its transfers have ended: it is the primary when some of its answers
 * are usable (source_usable: the empty jobs-users-accts answer only with a usable nodes answer);
 * then every source comes from it (one it failed is a failed source: no mixing). Otherwise it is a
 * standby (a 303 or 503), unusable (HTTP answers, none usable) or down (no HTTP answer), and the
 * next controller is tried: a 303's configured target first, or, with a single URL, the origin it
 * points at, learnt as a controller of its own. An attempt that has sent nothing by its share of
 * the caller's time (the hint) has the next controller asked alongside; the first primary wins.
 * All attempts end within the upstream's timeout. */
#include "controllers.h"
#include "fetch_int.h"
#include "log.h"
#include "monotime.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The least share of --slurmctld.timeout a controller is tried with after another failed. */
#define CTLD_MIN_TRY 0.25
/* The least time a controller gets to send something before the next is asked alongside. */
#define CTLD_HEDGE_MIN_S 0.1

/* One controller asked: all the fetch's sources from it. */
struct attempt {
	size_t ctl;              /* its index in the controllers */
	struct xfer x[SRC_COUNT];
	int pending;             /* transfers not ended */
	int responded;           /* a status line came on one of them */
	int judged;
	double t0, hedge_at;
};

struct ctld_fetch {
	struct run *r;
	struct cred *c;
	struct controllers *ctl;
	unsigned mask, gen;
	expo_keep_fn keep;
	void *ctx;
	size_t order[CONTROLLERS_MAX], n, next; /* the controllers to try, and the next to start */
	struct attempt at[CONTROLLERS_MAX];
	size_t nat;
	double t0, total, end, budget_end;
	int primary;             /* the attempt every source comes from; -1: none yet */
	int fallback;            /* the first unusable attempt; -1: none */
	char summary[400];       /* what each judged controller did */
};

/* Start the next controller in order. */
static void start_attempt(struct ctld_fetch *f)
{
	double now = mono_now();
	struct attempt *a = &f->at[f->nat++];
	size_t i = f->order[f->next++];
	const char *base = controllers_url(f->ctl, i);
	long left_ms = (long)((f->end - now) * 1000);
	a->ctl = i;
	a->t0 = now;
	double share = (f->budget_end - now) / (double)(f->n - f->next + 1);
	a->hedge_at = now + (share > CTLD_HEDGE_MIN_S ? share : CTLD_HEDGE_MIN_S);
	if (controllers_is_learnt(f->ctl, i) && (f->c->token || f->c->cfg->user))
		log_warn("slurmctld: redirected to another origin, %s: reading it without the token and user, which go only "
			 "to --slurmctld.url", controllers_shown(f->ctl, i));
	for (int id = 0; id < SRC_COUNT; id++) {
		if (!(f->mask & (1u << id)))
			continue;
		struct xfer *x = &a->x[id];
		x->c = f->c;
		x->hdrs = controllers_is_learnt(f->ctl, i) ? f->c->anon_hdrs : f->c->hdrs;
		x->pending = &a->pending;
		x->responded = &a->responded;
		fetch_start(f->r, x, (enum source_id)id, base, left_ms > 1 ? left_ms : 1, f->gen, f->keep, f->ctx);
	}
}

/* After a 303 to location: the controller of that origin is tried next (moved up in the order, or
 * learnt with a single URL); returns how it went, for the why ("" when it is). */
static const char *redirect_target(struct ctld_fetch *f, const struct attempt *a, const char *location)
{
	const char *base = controllers_url(f->ctl, a->ctl);
	char origin[300];
	if (fetch_redirect_check(base, location) == FETCH_REDIRECT_REFUSE)
		return ", refused: not followed";
	size_t total = controllers_total(f->ctl);
	int j = -1;
	for (size_t k = 0; k < total && j < 0; k++)
		if (fetch_redirect_check(controllers_url(f->ctl, k), location) == FETCH_REDIRECT_SAME_ORIGIN)
			j = (int)k;
	if (j < 0 && !controllers_is_learnt(f->ctl, a->ctl) && !fetch_origin_base(location, origin, sizeof(origin)))
		j = controllers_learn(f->ctl, origin);
	if (j < 0)
		return ", not configured: not followed";
	for (size_t k = 0; k < f->next; k++)
		if (f->order[k] == (size_t)j)
			return ""; /* tried already in this fetch (or it is this one) */
	size_t k = f->next;
	while (k < f->n && f->order[k] != (size_t)j)
		k++;
	if (k == f->n && f->n < CONTROLLERS_MAX)
		f->order[f->n++] = (size_t)j; /* learnt: not in the order yet */
	else if (k == f->n)
		return ", not followed";
	memmove(&f->order[f->next + 1], &f->order[f->next], (k - f->next) * sizeof(f->order[0]));
	f->order[f->next] = (size_t)j;
	return "";
}

/* What attempt a's answers say about its controller, not the primary: its role, why into why. */
static enum controller_role classify(struct ctld_fetch *f, struct attempt *a, char *why, size_t len)
{
	char standby[200] = "", unusable[200] = "", down[200] = "";
	const char *loc = NULL;
	for (int id = 0; id < SRC_COUNT; id++) {
		const struct xfer *x = &a->x[id];
		if (!(f->mask & (1u << id)))
			continue;
		long code = x->p->http_status;
		if ((code >= 300 && code < 400) || code == 503) {
			char *l = NULL;
			if (x->h)
				curl_easy_getinfo(x->h, CURLINFO_REDIRECT_URL, &l);
			const char *host = l && code != 503 ? strstr(l, "://") : NULL;
			int olen = host ? (int)strcspn(host + 3, "/?#") + (int)(host + 3 - l) : 0; /* its origin: short */
			if (!standby[0])
				snprintf(standby, sizeof(standby), "standby (HTTP %ld%s%.*s)", code, host ? " to " : "",
					 olen < 150 ? olen : 150, host ? l : "");
			if (host && !loc)
				loc = l;
		} else if (code > 0 && !unusable[0]) {
			snprintf(unusable, sizeof(unusable), "unusable (%.180s)", x->p->reason);
		} else if (code <= 0 && !down[0]) {
			snprintf(down, sizeof(down), "down (%.180s)", x->h ? curl_easy_strerror(x->rc) : x->p->reason);
		}
	}
	if (standby[0]) {
		snprintf(why, len, "%s%s", standby, loc ? redirect_target(f, a, loc) : "");
		return ROLE_STANDBY;
	}
	snprintf(why, len, "%s", unusable[0] ? unusable : down[0] ? down : "no answer");
	return unusable[0] ? ROLE_UNUSABLE : ROLE_DOWN;
}

/* Attempt a has ended: the primary, or passed over (seen, summed up, and the next one started
 * while enough of the timeout is left). */
static void judge(struct ctld_fetch *f, struct attempt *a)
{
	const struct payload *p[SRC_COUNT] = { 0 };
	int up[SRC_COUNT];
	char why[300];
	a->judged = 1;
	for (int id = 0; id < SRC_COUNT; id++)
		p[id] = f->mask & (1u << id) ? a->x[id].p : NULL;
	if (source_usable(p, up)) {
		f->primary = (int)(a - f->at);
		return;
	}
	enum controller_role role = classify(f, a, why, sizeof(why));
	controllers_seen(f->ctl, a->ctl, role, why);
	size_t used = strlen(f->summary);
	snprintf(f->summary + used, sizeof(f->summary) - used, "%s%s: %s", used ? "; " : "", controllers_shown(f->ctl, a->ctl),
		 why);
	if (role == ROLE_UNUSABLE && f->fallback < 0)
		f->fallback = (int)(a - f->at);
	/* what is left after a hung controller is a sliver: one tried with it would fail and be seen
	 * down for no fault of its own. Not tried, it is first on the next fetch */
	if (f->next < f->n && f->end - mono_now() >= f->total * CTLD_MIN_TRY)
		start_attempt(f);
}

/* Judge the attempts that ended, and ask the next controller alongside the newest attempt when it
 * has sent nothing by its hedge time. Returns whether the fetch goes on. */
static int step(struct ctld_fetch *f)
{
	for (size_t k = 0; k < f->nat && f->primary < 0; k++)
		if (!f->at[k].judged && f->at[k].pending == 0)
			judge(f, &f->at[k]);
	if (f->primary >= 0)
		return 0;
	struct attempt *last = &f->at[f->nat - 1];
	double now = mono_now();
	if (!last->judged && !last->responded && now >= last->hedge_at && f->next < f->n &&
	    f->end - now >= f->total * CTLD_MIN_TRY)
		start_attempt(f);
	for (size_t k = 0; k < f->nat; k++)
		if (!f->at[k].judged)
			return 1;
	return 0;
}

/* The fetch is over: out gets the primary's payloads (each with its controller), else, when one
 * controller only was asked or one was unusable, that one's own (their reasons are the most
 * precise), else failed ones saying what each controller did; the rest is let go. */
static void finish(struct ctld_fetch *f, struct payload *out[SRC_COUNT])
{
	int take = f->primary >= 0 ? f->primary : f->fallback >= 0 ? f->fallback : f->nat == 1 ? 0 : -1;
	char why[500];
	snprintf(why, sizeof(why), "no slurmctld controller answered as primary: %s", f->summary);
	if (f->primary >= 0) {
		controllers_seen(f->ctl, f->at[take].ctl, ROLE_PRIMARY, NULL);
		controllers_answered(f->ctl, f->at[take].ctl);
	}
	for (size_t k = 0; k < f->nat; k++) {
		struct attempt *a = &f->at[k];
		if (!a->judged && !a->responded && f->primary >= 0) {
			char late[120];
			snprintf(late, sizeof(late), "down (no answer within %.1f s, another controller answered)", mono_now() - a->t0);
			controllers_seen(f->ctl, a->ctl, ROLE_DOWN, late);
		}
		for (int id = 0; id < SRC_COUNT; id++) {
			if (!(f->mask & (1u << id)))
				continue;
			fetch_end(f->r, &a->x[id]);
			if ((int)k != take) {
				payload_unref(a->x[id].p);
				continue;
			}
			a->x[id].p->controller = f->primary >= 0 ? (int)a->ctl : -1;
			out[id] = a->x[id].p;
		}
	}
	for (int id = 0; take < 0 && id < SRC_COUNT; id++)
		if (f->mask & (1u << id))
			out[id] = fetch_failed((enum source_id)id, f->gen, f->keep, f->ctx, why, f->t0);
}

void fetch_ctld(struct run *r, const struct upstream_rt *u, unsigned mask, unsigned gen, expo_keep_fn keep, void *ctx,
		double hint, struct payload *out[SRC_COUNT])
{
	struct controllers *ctl = u->ctl;
	const char *err = ctl ? controllers_error(ctl) : "upstream not configured";
	if (err) {
		for (int id = 0; id < SRC_COUNT; id++)
			if (mask & (1u << id))
				out[id] = fetch_failed((enum source_id)id, gen, keep, ctx, err, mono_now());
		return;
	}
	struct ctld_fetch *f = xcalloc(1, sizeof(*f));
	f->r = r;
	f->c = fetch_cred(r, u, UPSTREAM_SLURMCTLD);
	f->ctl = ctl;
	f->mask = mask;
	f->gen = gen;
	f->keep = keep;
	f->ctx = ctx;
	f->primary = f->fallback = -1;
	f->n = controllers_order(ctl, f->order);
	f->t0 = mono_now();
	f->total = u->cfg[UPSTREAM_SLURMCTLD].timeout;
	f->end = f->t0 + f->total;
	f->budget_end = hint > f->t0 && hint < f->end ? hint : f->end;
	f->c->connect_ms = (long)(f->total * 1000 / (double)f->n) + 1; /* each connection gets a share */
	start_attempt(f);
	while (step(f) && mono_now() < f->end + 1 && !fetch_stopping()) /* past it: a multi failure, let them go */
		fetch_step(r, 50);
	finish(f, out);
	free(f);
}
