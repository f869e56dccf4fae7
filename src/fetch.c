/* fetch.c: see fetch.h. Which transfers one fetch makes: slurmctld's through its controllers
 * (fetch_ctld.c), any other upstream from its one server; the transfers themselves are
 * fetch_xfer.c's. */
#include "fetch.h"
#include "controllers.h"
#include "fetch_int.h"
#include "slurmrestd_api.h"

#include <stdlib.h>
#include <string.h>

void fetch_global_init(void)
{
	curl_global_init(CURL_GLOBAL_DEFAULT);
}

/* An upstream with one server (slurmrestd): mask from its base_url in parallel, a redirect
 * followed once (to another origin without the credentials). */
static void fetch_one_server(struct run *r, const struct upstream_rt *rt, enum upstream_id u,
			     unsigned mask, unsigned gen, expo_keep_fn keep, void *ctx, struct payload *out[SRC_COUNT])
{
	struct xfer x[SRC_COUNT];
	struct cred *c = fetch_cred(r, rt, u);
	memset(x, 0, sizeof(x));
	for (int id = 0; id < SRC_COUNT; id++)
		if (mask & (1u << id)) {
			x[id].c = c;
			x[id].hdrs = c->hdrs;
			x[id].follow_any = 1;
			fetch_start(r, &x[id], (enum source_id)id, rt->cfg[u].base_url, c->timeout_ms, gen, keep, ctx);
		}
	while (fetch_step(r, 200))
		;
	for (int id = 0; id < SRC_COUNT; id++)
		if (mask & (1u << id)) {
			fetch_end(r, &x[id]);
			out[id] = x[id].p;
		}
}

struct upstream_rt *upstream_rt_new(const struct upstream_config cfg[UPSTREAM_COUNT])
{
	struct upstream_rt *u = xcalloc(1, sizeof(*u));
	u->cfg = cfg;
	if (cfg[UPSTREAM_SLURMCTLD].base_url)
		u->ctl = controllers_new(cfg[UPSTREAM_SLURMCTLD].base_url);
	u->ra = slurmrestd_api_new(cfg[UPSTREAM_SLURMRESTD].api_version);
	return u;
}

void upstream_rt_free(struct upstream_rt *u)
{
	if (!u)
		return;
	controllers_free(u->ctl);
	slurmrestd_api_free(u->ra);
	free(u);
}

struct controllers *upstream_rt_controllers(const struct upstream_rt *u)
{
	return u ? u->ctl : NULL;
}

void fetch_sources(struct upstream_rt *u, unsigned mask, unsigned gen, expo_keep_fn keep, void *ctx, double hint,
		   double timeout, struct payload *out[SRC_COUNT])
{
	struct run r = { .m = curl_multi_init(), .timeout = timeout };
	for (int id = 0; id < SRC_COUNT; id++)
		out[id] = NULL;
	/* the scraper fetches one upstream at a time: one after the other is no delay */
	for (int up = 0; up < UPSTREAM_COUNT; up++) {
		unsigned m = mask & source_of_upstream((enum upstream_id)up);
		if (m && up == UPSTREAM_SLURMCTLD)
			fetch_ctld(&r, u, m, gen, keep, ctx, hint, out);
		else if (m)
			fetch_one_server(&r, u, (enum upstream_id)up, m, gen, keep, ctx, out);
	}
	fetch_run_end(&r);
}
