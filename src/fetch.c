/* fetch.c: see fetch.h. */
#include "fetch.h"
#include "log.h"

#include <curl/curl.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

void fetch_global_init(void)
{
	curl_global_init(CURL_GLOBAL_DEFAULT);
}

struct xfer {
	struct payload *p;
	size_t max_body;
	CURL *h;
	char errbuf[CURL_ERROR_SIZE];
	int too_big;
	int redirected;          /* the one redirect allowed was followed */
	double t0;
};

/* The body goes straight to the parser (payload_feed): it is never held whole. */
static size_t on_data(char *ptr, size_t size, size_t nmemb, void *ud)
{
	struct xfer *x = ud;
	size_t n = size * nmemb;
	long code = 0;
	curl_easy_getinfo(x->h, CURLINFO_RESPONSE_CODE, &code);
	if (code != x->p->http_status)
		payload_restart(x->p, code); /* a new response (after a redirect): the bytes before are not its */
	if (payload_feed(x->p, ptr, n, x->max_body) < 0) {
		x->too_big = 1;
		return 0; /* aborts the transfer */
	}
	return n;
}

char *fetch_read_token(const char *path, char *err, size_t errlen)
{
	char line[16384];
	FILE *f = fopen(path, "r");
	if (!f) {
		snprintf(err, errlen, "cannot read token file %s: %s", path, strerror(errno));
		return NULL;
	}
	if (!fgets(line, sizeof(line), f)) {
		fclose(f);
		snprintf(err, errlen, "token file %s is empty", path);
		return NULL;
	}
	fclose(f);
	size_t n = strcspn(line, "\r\n");
	while (n && (line[n - 1] == ' ' || line[n - 1] == '\t'))
		n--;
	size_t s = 0;
	while (s < n && (line[s] == ' ' || line[s] == '\t'))
		s++;
	/* an "SLURM_JWT=..." line, as `scontrol token` prints it, is accepted as is */
	if (n - s > 10 && memcmp(line + s, "SLURM_JWT=", 10) == 0)
		s += 10;
	if (n == s) {
		snprintf(err, errlen, "token file %s is empty", path);
		return NULL;
	}
	return xstrndup(line + s, n - s);
}

/* Scheme, host and port (the scheme's default when absent) of an absolute http(s) URL, as new
 * strings; -1 when it does not parse. The userinfo ("ctl@") is not part of the origin. */
static int origin_of(const char *url, char **scheme, char **host, char **port)
{
	CURLU *u = curl_url();
	int rc = -1;
	*scheme = *host = *port = NULL;
	if (u && curl_url_set(u, CURLUPART_URL, url, 0) == CURLUE_OK &&
	    curl_url_get(u, CURLUPART_SCHEME, scheme, 0) == CURLUE_OK &&
	    curl_url_get(u, CURLUPART_HOST, host, 0) == CURLUE_OK &&
	    curl_url_get(u, CURLUPART_PORT, port, CURLU_DEFAULT_PORT) == CURLUE_OK &&
	    (!strcasecmp(*scheme, "http") || !strcasecmp(*scheme, "https")))
		rc = 0;
	curl_url_cleanup(u);
	return rc;
}

enum fetch_redirect fetch_redirect_check(const char *base, const char *target)
{
	char *bs, *bh, *bp, *ts, *th, *tp;
	enum fetch_redirect r = FETCH_REDIRECT_REFUSE;
	int bad = origin_of(base, &bs, &bh, &bp) < 0;
	bad |= origin_of(target, &ts, &th, &tp) < 0;
	if (bad)
		goto out;
	if (!strcasecmp(bs, "https") && strcasecmp(ts, "https"))
		goto out; /* a downgrade would send the request, and slurmctld's answer, in clear */
	if (!strcasecmp(bs, ts) && !strcasecmp(bh, th) && !strcmp(bp, tp))
		r = FETCH_REDIRECT_SAME_ORIGIN;
	else
		r = FETCH_REDIRECT_OTHER_ORIGIN;
out:
	curl_free(bs);
	curl_free(bh);
	curl_free(bp);
	curl_free(ts);
	curl_free(th);
	curl_free(tp);
	return r;
}

/* One fetch_endpoints call. */
struct run {
	const struct fetch_config *cfg;
	CURLM *m;
	struct curl_slist *hdrs;      /* with the token and user: only for the configured origin */
	struct curl_slist *anon_hdrs; /* without them: for any other origin */
	char *token;
	char tokerr[256];
	long timeout_ms;              /* for each endpoint, redirect included */
};

/* A 3xx just finished on t: follow it (1, the handle is back in the multi) or not (0, *err set).
 * Only one redirect is followed (a standby controller points at the primary). Credentials go only
 * to --slurmctld.url's origin: curl would send our custom headers to any host it is sent to. */
static int follow(struct run *r, struct xfer *t, char *why, size_t whylen, const char **err)
{
	char *loc = NULL, safe[160];
	curl_easy_getinfo(t->h, CURLINFO_REDIRECT_URL, &loc);
	if (!loc)
		return 0; /* a 3xx without Location: classified as an HTTP error */
	log_escape(safe, sizeof(safe), loc, strlen(loc));
	if (t->redirected) {
		snprintf(why, whylen, "redirected more than once (HTTP %ld); point --slurmctld.url at the primary controller",
			 t->p->http_status);
		*err = why;
		return 0;
	}
	enum fetch_redirect k = fetch_redirect_check(r->cfg->base_url, loc);
	if (k == FETCH_REDIRECT_REFUSE) {
		snprintf(why, whylen, "redirect to %s refused (not http(s), or https to http)", safe);
		*err = why;
		return 0;
	}
	if (k == FETCH_REDIRECT_OTHER_ORIGIN && (r->token || r->cfg->user))
		log_warn("%s: redirected to another origin, %s: following without the token and user, which go only to --slurmctld.url",
			 endpoints[t->p->ep].name, safe);
	/* the second request gets what is left of the endpoint's time, as when curl followed itself */
	long left_ms = r->timeout_ms - (long)((mono_now() - t->t0) * 1000);
	curl_multi_remove_handle(r->m, t->h);
	curl_easy_setopt(t->h, CURLOPT_TIMEOUT_MS, left_ms > 1 ? left_ms : 1L);
	curl_easy_setopt(t->h, CURLOPT_CONNECTTIMEOUT_MS, left_ms > 1 ? left_ms : 1L);
	curl_easy_setopt(t->h, CURLOPT_URL, loc); /* copied by curl before loc is freed */
	curl_easy_setopt(t->h, CURLOPT_HTTPHEADER, k == FETCH_REDIRECT_SAME_ORIGIN ? r->hdrs : r->anon_hdrs);
	payload_restart(t->p, 0);
	t->redirected = 1;
	curl_multi_add_handle(r->m, t->h);
	return 1;
}

/* A transfer finished: follow a redirect (returns 1) or finish its payload (returns 0). */
static int done(struct run *r, CURLMsg *msg)
{
	struct xfer *t;
	curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, (char **)&t);
	CURLcode rc = msg->data.result;
	struct payload *p = t->p;
	char why[300];
	const char *err = NULL;
	curl_easy_getinfo(t->h, CURLINFO_RESPONSE_CODE, &p->http_status);
	if (t->too_big || rc == CURLE_FILESIZE_EXCEEDED) {
		snprintf(why, sizeof(why), "body larger than %zu bytes (--slurmctld.max-body)", r->cfg->max_body);
		err = why;
	} else if (rc != CURLE_OK) {
		snprintf(why, sizeof(why), "%s (%s)", t->errbuf[0] ? t->errbuf : curl_easy_strerror(rc),
			 curl_easy_strerror(rc));
		err = why;
	} else if (p->http_status >= 300 && p->http_status < 400 && follow(r, t, why, sizeof(why), &err)) {
		return 1;
	}
	p->seconds = mono_now() - t->t0;
	p->at = mono_now();
	/* a 401/403 with a token is explained by payload_finish; the token itself is never logged */
	if (!r->token && r->tokerr[0] && !err && p->http_status == 401) {
		snprintf(why, sizeof(why), "401 Unauthorized and no usable token: %s", r->tokerr);
		err = why;
	}
	payload_finish(p, err);
	return 0;
}

static void add_credentials(struct run *r)
{
	r->hdrs = curl_slist_append(r->hdrs, "Accept: text/plain");
	r->anon_hdrs = curl_slist_append(r->anon_hdrs, "Accept: text/plain");
	if (r->cfg->token_file) {
		r->token = fetch_read_token(r->cfg->token_file, r->tokerr, sizeof(r->tokerr));
		if (r->token) {
			char *h = xmalloc(strlen(r->token) + 32);
			sprintf(h, "X-SLURM-USER-TOKEN: %s", r->token);
			r->hdrs = curl_slist_append(r->hdrs, h);
			explicit_bzero(h, strlen(h));
			free(h);
		} else {
			log_warn("%s", r->tokerr);
		}
	}
	if (r->cfg->user) {
		char h[300];
		snprintf(h, sizeof(h), "X-SLURM-USER-NAME: %s", r->cfg->user);
		r->hdrs = curl_slist_append(r->hdrs, h);
	}
}

static CURL *new_handle(struct run *r, struct xfer *x, const char *url, long timeout_ms)
{
	CURL *h = curl_easy_init();
	curl_easy_setopt(h, CURLOPT_URL, url);
	curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
	/* redirects are followed by follow(), which checks the origin first */
	curl_easy_setopt(h, CURLOPT_FOLLOWLOCATION, 0L);
	curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, timeout_ms);
	curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, timeout_ms);
	curl_easy_setopt(h, CURLOPT_HTTP_VERSION, (long)CURL_HTTP_VERSION_1_1);
	curl_easy_setopt(h, CURLOPT_USERAGENT, "slurm-exporter-shim/" SHIM_VERSION);
	curl_easy_setopt(h, CURLOPT_HTTPHEADER, r->hdrs);
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_data);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, x);
	curl_easy_setopt(h, CURLOPT_ERRORBUFFER, x->errbuf);
	curl_easy_setopt(h, CURLOPT_MAXFILESIZE_LARGE, (curl_off_t)r->cfg->max_body);
	curl_easy_setopt(h, CURLOPT_FORBID_REUSE, 1L);
	curl_easy_setopt(h, CURLOPT_PRIVATE, x);
	return h;
}

void fetch_endpoints(const struct fetch_config *cfg, unsigned mask, double timeout_s, unsigned gen, expo_keep_fn keep,
		     void *ctx, struct payload *out[EP_COUNT])
{
	struct xfer x[EP_COUNT];
	struct run r = { .cfg = cfg, .m = curl_multi_init() };
	double timeout = cfg->timeout < timeout_s ? cfg->timeout : timeout_s;
	long timeout_ms = timeout > 0.001 ? (long)(timeout * 1000) : 1;
	r.timeout_ms = timeout_ms;
	size_t blen = strlen(cfg->base_url);

	while (blen && cfg->base_url[blen - 1] == '/')
		blen--;
	add_credentials(&r);
	memset(x, 0, sizeof(x));
	for (int ep = 0; ep < EP_COUNT; ep++) {
		out[ep] = NULL;
		if (!(mask & (1u << ep)))
			continue;
		char url[4096];
		snprintf(url, sizeof(url), "%.*s%s", (int)blen, cfg->base_url, endpoints[ep].path);
		x[ep].p = payload_new((enum endpoint)ep, gen, keep, ctx);
		x[ep].max_body = cfg->max_body;
		x[ep].t0 = mono_now();
		x[ep].h = new_handle(&r, &x[ep], url, timeout_ms);
		curl_multi_add_handle(r.m, x[ep].h);
	}
	int running = 1;
	while (running) {
		CURLMsg *msg;
		int left;
		if (curl_multi_perform(r.m, &running) != CURLM_OK)
			break;
		while ((msg = curl_multi_info_read(r.m, &left)))
			if (msg->msg == CURLMSG_DONE && done(&r, msg))
				running = 1; /* a redirect: the handle is back in */
		if (running)
			curl_multi_poll(r.m, NULL, 0, 200, NULL);
	}
	for (int ep = 0; ep < EP_COUNT; ep++) {
		if (!x[ep].h)
			continue;
		if (!x[ep].p->at) { /* never completed: multi failure */
			payload_finish(x[ep].p, "transfer did not complete");
		}
		curl_multi_remove_handle(r.m, x[ep].h);
		curl_easy_cleanup(x[ep].h);
		out[ep] = x[ep].p;
	}
	curl_multi_cleanup(r.m);
	curl_slist_free_all(r.hdrs);
	curl_slist_free_all(r.anon_hdrs);
	if (r.token) {
		explicit_bzero(r.token, strlen(r.token));
		free(r.token);
	}
}
