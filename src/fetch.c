/* fetch.c: see fetch.h. */
#include "fetch.h"
#include "buf.h"
#include "controllers.h"
#include "cred.h"
#include "file_read.h"
#include "log.h"
#include "restapi.h"

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

/* One source's transfer. */
struct xfer {
	struct payload *p;
	struct cred *c;          /* its upstream's */
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

/* A token file holds one JWT line (`scontrol token` writes "SLURM_JWT=..."): a bigger file is not one */
#define TOKEN_FILE_MAX 65536

/* Read the token file (first line, trimmed) with file_read: a FIFO or a directory is refused at
 * once (never waited on: this runs on the fetch worker), a file over TOKEN_FILE_MAX refused (never
 * cut), a token with a control byte refused (it would end the header line). Returns a new string
 * or NULL with *err set; the file's bytes are wiped. */
static char *read_token(const char *path, char *err, size_t errlen)
{
	struct file_text f;
	char why[100], safe[120];
	char *tok = NULL;
	log_escape(safe, sizeof(safe), path, strlen(path));
	if (file_read(path, TOKEN_FILE_MAX, FILE_SECRET, &f, why, sizeof(why)) < 0) {
		snprintf(err, errlen, "cannot read token file %s: %s", safe, why);
		return NULL;
	}
	const char *line = f.data;
	size_t n = strcspn(line, "\r\n");
	int nul = n < f.len && line[n] == '\0'; /* a NUL in the line: not a token */
	while (n && (line[n - 1] == ' ' || line[n - 1] == '\t'))
		n--;
	size_t s = 0;
	while (s < n && (line[s] == ' ' || line[s] == '\t'))
		s++;
	/* an "SLURM_JWT=..." line, as `scontrol token` prints it, is accepted as is */
	if (n - s > 10 && memcmp(line + s, "SLURM_JWT=", 10) == 0)
		s += 10;
	const char *bad = cred_value_problem(line + s, n - s, TOKEN_FILE_MAX, why, sizeof(why));
	if (n == s || nul)
		snprintf(err, errlen, "token file %s %s", safe, nul ? "holds a NUL byte" : "is empty");
	else if (bad)
		snprintf(err, errlen, "token file %s: the token %s", safe, bad);
	else
		tok = xstrndup(line + s, n - s);
	file_text_free(&f);
	return tok;
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

/* One upstream's configuration and credentials, for one fetch_sources call. */
struct cred {
	const struct upstream_config *cfg;
	const struct upstream *up;
	struct curl_slist *hdrs;      /* with the token and user: only for the configured origin */
	struct curl_slist *anon_hdrs; /* without them: for any other origin */
	char *token;
	char tokerr[256];
	long timeout_ms;              /* for each source, redirect included */
	long connect_ms;              /* for each connection attempt */
	int used;
	int api;                      /* slurmrestd's API version: 0 not looked up, 1 in version, -1 failed (api_why) */
	char version[RESTAPI_VERSION_MAX];
	char api_why[300];
};

/* What one controller did in one round (fetch_ha): its sources' answers taken together. */
struct round {
	int answered;            /* HTTP answers other than 3xx and 503: it is the primary */
	int standby;             /* 3xx or 503 (a standby's answers), or a followed redirect */
	char why[200];           /* the first reason it is not the primary (raw upstream bytes) */
	char location[512];      /* the first 3xx's Location */
};

/* One run_sources call. */
struct run {
	CURLM *m;
	struct cred c[UPSTREAM_COUNT];
	int ha;                  /* several controllers: a 303 is the controller's answer, not followed */
	struct round rd;         /* slurmctld's transfers */
};

/* A 3xx just finished on t: follow it (1, the handle is back in the multi) or not (0; a refused
 * or second redirect is recorded as the payload's fault). Only one redirect is followed (a standby
 * controller points at the primary). Credentials go only to the upstream's origin (its base_url,
 * e.g. --slurmctld.url): curl would send our custom headers to any host it is sent to. */
static int follow(struct run *r, struct xfer *t)
{
	char *loc = NULL, safe[160];
	struct cred *c = t->c;
	curl_easy_getinfo(t->h, CURLINFO_REDIRECT_URL, &loc);
	if (!loc)
		return 0; /* a 3xx without Location: classified as an HTTP error */
	log_escape(safe, sizeof(safe), loc, strlen(loc));
	if (t->redirected) {
		payload_fault(t->p, FAULT_REDIRECT_LOOP, NULL);
		return 0;
	}
	enum fetch_redirect k = fetch_redirect_check(c->cfg->base_url, loc);
	if (k == FETCH_REDIRECT_REFUSE) {
		payload_fault(t->p, FAULT_REDIRECT_REFUSED, safe);
		return 0;
	}
	if (k == FETCH_REDIRECT_OTHER_ORIGIN && (c->token || c->cfg->user))
		log_warn("%s: redirected to another origin, %s: following without the token and user, which go only to %s.url",
			 sources[t->p->src].name, safe, c->up->flag);
	/* the second request gets what is left of the source's time, as when curl followed itself */
	long left_ms = c->timeout_ms - (long)((mono_now() - t->t0) * 1000);
	curl_multi_remove_handle(r->m, t->h);
	curl_easy_setopt(t->h, CURLOPT_TIMEOUT_MS, left_ms > 1 ? left_ms : 1L);
	curl_easy_setopt(t->h, CURLOPT_CONNECTTIMEOUT_MS, left_ms > 1 ? left_ms : 1L);
	curl_easy_setopt(t->h, CURLOPT_URL, loc); /* copied by curl before loc is freed */
	curl_easy_setopt(t->h, CURLOPT_HTTPHEADER, k == FETCH_REDIRECT_SAME_ORIGIN ? c->hdrs : c->anon_hdrs);
	payload_restart(t->p, 0);
	t->redirected = 1;
	curl_multi_add_handle(r->m, t->h);
	return 1;
}

/* What a finished slurmctld transfer says about its controller. */
static void note_round(struct round *rd, const struct xfer *t, CURLcode rc)
{
	long code = t->p->http_status;
	char *loc = NULL;
	if (t->c->up != &upstreams[UPSTREAM_SLURMCTLD])
		return;
	if (t->redirected || (code >= 300 && code < 400) || code == 503) {
		rd->standby++;
		curl_easy_getinfo(t->h, CURLINFO_REDIRECT_URL, &loc);
		const char *host = loc && !t->redirected ? strstr(loc, "://") : NULL;
		int olen = host ? (int)strcspn(host + 3, "/?#") + (int)(host + 3 - loc) : 0; /* its origin: short */
		if (!rd->why[0])
			snprintf(rd->why, sizeof(rd->why), "standby (HTTP %ld%s%.*s)", t->redirected ? 303 : code,
				 host ? " to " : "", olen < 150 ? olen : 150, host ? loc : "");
		if (loc && !rd->location[0] && !t->redirected)
			snprintf(rd->location, sizeof(rd->location), "%s", loc);
	} else if (code > 0) {
		rd->answered++;
	} else if (!rd->why[0]) {
		snprintf(rd->why, sizeof(rd->why), "down (%s)", curl_easy_strerror(rc)); /* errbuf: too long for the 503 body */
	}
}

/* What to check when up's transfer failed with rc: "" when curl's words say it all. */
static const char *transport_hint(const struct upstream *up, CURLcode rc)
{
	int ctld = up == &upstreams[UPSTREAM_SLURMCTLD];
	switch (rc) {
	case CURLE_COULDNT_CONNECT:
		return ctld ? "; is slurmctld up, and is the URL's port its SlurmctldPort (slurm.conf)?"
			    : "; is slurmrestd up, and listening on that address?";
	case CURLE_OPERATION_TIMEDOUT:
		return ctld ? "; is slurmctld up and not stalled, does a firewall drop the port, or is --slurmctld.timeout too short?"
			    : "; is slurmrestd up, does a firewall drop the port, or is --slurmrestd.timeout too short?";
	case CURLE_COULDNT_RESOLVE_HOST:
		return ctld ? "; is the host name in --slurmctld.url right?" : "; is the host name in --slurmrestd.url right?";
	default:
		return "";
	}
}

/* A transfer finished: follow a redirect (returns 1) or record its facts and finish its payload
 * (returns 0). Whether it is usable is source_verdict's to say. */
static int done(struct run *r, CURLMsg *msg)
{
	struct xfer *t;
	curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, (char **)&t);
	CURLcode rc = msg->data.result;
	struct payload *p = t->p;
	curl_easy_getinfo(t->h, CURLINFO_RESPONSE_CODE, &p->http_status);
	if (t->too_big || rc == CURLE_FILESIZE_EXCEEDED) {
		p->facts.limit = t->c->cfg->max_body;
		payload_fault(p, FAULT_TOO_BIG, NULL);
	} else if (rc != CURLE_OK) {
		char why[400]; /* cut to the facts' detail */
		/* curl's words once (errbuf holds curl_easy_strerror's text already, or more) */
		snprintf(why, sizeof(why), "%s%s", t->errbuf[0] ? t->errbuf : curl_easy_strerror(rc),
			 transport_hint(t->c->up, rc));
		payload_fault(p, FAULT_TRANSPORT, why);
	} else if (p->http_status >= 300 && p->http_status < 400 && !r->ha && follow(r, t)) {
		return 1;
	}
	note_round(&r->rd, t, rc);
	p->seconds = mono_now() - t->t0;
	p->at = mono_now();
	/* a 401 without a token is explained by why there is none; the token itself is never logged */
	if (!t->c->token && t->c->tokerr[0])
		payload_fault(p, FAULT_NO_TOKEN, t->c->tokerr);
	payload_finish(p);
	return 0;
}

/* Read the upstream's token (on every fetch: a rotated token needs no restart) and build its
 * headers. */
static void add_credentials(struct cred *c)
{
	c->hdrs = curl_slist_append(c->hdrs, c->up->accept);
	c->anon_hdrs = curl_slist_append(c->anon_hdrs, c->up->accept);
	if (c->cfg->token_file) {
		c->token = read_token(c->cfg->token_file, c->tokerr, sizeof(c->tokerr));
		if (c->token) {
			char *h = xmalloc(strlen(c->token) + 32);
			sprintf(h, "X-SLURM-USER-TOKEN: %s", c->token);
			c->hdrs = curl_slist_append(c->hdrs, h);
			explicit_bzero(h, strlen(h));
			free(h);
		} else {
			log_warn("%s", c->tokerr);
		}
	}
	if (c->cfg->user) {
		char h[300];
		snprintf(h, sizeof(h), "X-SLURM-USER-NAME: %s", c->cfg->user);
		c->hdrs = curl_slist_append(c->hdrs, h);
	}
}

static void free_credentials(struct cred *c)
{
	curl_slist_free_all(c->hdrs);
	curl_slist_free_all(c->anon_hdrs);
	if (c->token) {
		explicit_bzero(c->token, strlen(c->token));
		free(c->token);
	}
}

/* A unix: base URL's socket path, or NULL. */
static const char *unix_socket(const char *base_url)
{
	return strncmp(base_url, "unix:", 5) ? NULL : base_url + 5;
}

/* The URL of path on c's upstream into url: its base_url (over a unix socket, http://localhost)
 * and path, "{version}" replaced by c's API version. */
static void make_url(const struct cred *c, const char *path, char *url, size_t len)
{
	const char *base = unix_socket(c->cfg->base_url) ? "http://localhost" : c->cfg->base_url;
	const char *var = strstr(path, "{version}");
	size_t blen = strlen(base);
	while (blen && base[blen - 1] == '/')
		blen--;
	if (var)
		snprintf(url, len, "%.*s%.*s%s%s", (int)blen, base, (int)(var - path), path, c->version, var + 9);
	else
		snprintf(url, len, "%.*s%s", (int)blen, base, path);
}

/* A handle for url on c's upstream with its headers and the options every request has. */
static CURL *base_handle(const struct cred *c, const char *url, long timeout_ms, char *errbuf)
{
	CURL *h = curl_easy_init();
	const char *sock = unix_socket(c->cfg->base_url);
	if (sock)
		curl_easy_setopt(h, CURLOPT_UNIX_SOCKET_PATH, sock);
	curl_easy_setopt(h, CURLOPT_URL, url);
	curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
	/* redirects are followed by follow(), which checks the origin first */
	curl_easy_setopt(h, CURLOPT_FOLLOWLOCATION, 0L);
	curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, timeout_ms);
	curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, c->connect_ms && c->connect_ms < timeout_ms ? c->connect_ms : timeout_ms);
	curl_easy_setopt(h, CURLOPT_HTTP_VERSION, (long)CURL_HTTP_VERSION_1_1);
	curl_easy_setopt(h, CURLOPT_USERAGENT, "slurm-exporter-shim/" SHIM_VERSION);
	curl_easy_setopt(h, CURLOPT_HTTPHEADER, c->hdrs);
	curl_easy_setopt(h, CURLOPT_ERRORBUFFER, errbuf);
	curl_easy_setopt(h, CURLOPT_MAXFILESIZE_LARGE, (curl_off_t)c->cfg->max_body);
	curl_easy_setopt(h, CURLOPT_FORBID_REUSE, 1L);
	return h;
}

static CURL *new_handle(struct xfer *x, const char *url, long timeout_ms)
{
	CURL *h = base_handle(x->c, url, timeout_ms, x->errbuf);
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_data);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, x);
	curl_easy_setopt(h, CURLOPT_PRIVATE, x);
	return h;
}

static size_t on_doc(char *ptr, size_t size, size_t nmemb, void *ud)
{
	return buf_append(ud, ptr, size * nmemb) < 0 ? 0 : size * nmemb;
}

#define OPENAPI_MAX (64u << 20) /* slurmrestd's /openapi/v3 is a few MB */

/* Look up c's API version (slurmrestd): the remembered one, or learnt now from /openapi/v3 with a
 * blocking request that takes its time out of the upstream's timeout (this call's fetches get what
 * is left). A failure is kept in c for this call's other sources and retried on the next call. */
static void look_up_version(struct cred *c)
{
	char errbuf[CURL_ERROR_SIZE] = "", url[4096];
	struct buf doc;
	long code = 0;
	double t0 = mono_now();

	c->api = -1;
	if (restapi_get(c->cfg->api, c->version)) {
		c->api = 1;
		return;
	}
	make_url(c, "/openapi/v3", url, sizeof(url));
	buf_init(&doc, OPENAPI_MAX);
	CURL *h = base_handle(c, url, c->timeout_ms, errbuf);
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_doc);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, &doc);
	CURLcode rc = curl_easy_perform(h);
	curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &code);
	curl_easy_cleanup(h);
	const char *hint = c->up->status_hint ? c->up->status_hint(code) : NULL;
	if (rc != CURLE_OK)
		snprintf(c->api_why, sizeof(c->api_why), "API version discovery: /openapi/v3: %s",
			 errbuf[0] ? errbuf : curl_easy_strerror(rc));
	else if (code != 200 && hint)
		snprintf(c->api_why, sizeof(c->api_why), "API version discovery: /openapi/v3: %s", hint);
	else if (code != 200)
		snprintf(c->api_why, sizeof(c->api_why), "API version discovery: /openapi/v3: HTTP status %ld", code);
	else if (restapi_learn(c->cfg->api, doc.data ? doc.data : "", doc.len, c->api_why, sizeof(c->api_why)) == 0 &&
		 restapi_get(c->cfg->api, c->version)) {
		c->api = 1;
		log_info("%s: API version %s (newest in /openapi/v3 this shim reads)", c->up->name, c->version);
	}
	buf_free(&doc);
	long left_ms = c->timeout_ms - (long)((mono_now() - t0) * 1000);
	c->timeout_ms = left_ms > 1 ? left_ms : 1;
}

/* The credentials of upstream u, set up on its first source of this call. */
static struct cred *cred_of(struct run *r, const struct upstream_config cfg[UPSTREAM_COUNT], enum upstream_id u)
{
	struct cred *c = &r->c[u];
	if (c->used)
		return c;
	double timeout = cfg[u].timeout;
	c->used = 1;
	c->cfg = &cfg[u];
	c->up = &upstreams[u];
	c->timeout_ms = timeout > 0.001 ? (long)(timeout * 1000) : 1;
	c->connect_ms = cfg[u].connect_timeout > 0.001 ? (long)(cfg[u].connect_timeout * 1000) : 0;
	add_credentials(c);
	return c;
}

/* A payload that failed before its transfer started. */
static void fail_early(struct xfer *x, const char *why)
{
	payload_fault(x->p, FAULT_TRANSPORT, why);
	x->p->at = mono_now();
	payload_finish(x->p);
}

/* Start source id's transfer. */
static void start(struct run *r, struct xfer *x, const struct upstream_config cfg[UPSTREAM_COUNT], enum source_id id,
		  unsigned gen, expo_keep_fn keep, void *ctx)
{
	const struct source *src = &sources[id];
	char url[4096];
	x->p = payload_new(id, gen, keep, ctx);
	if (!cfg[src->upstream].base_url) {
		fail_early(x, "upstream not configured");
		return;
	}
	x->c = cred_of(r, cfg, src->upstream);
	if (strstr(src->path, "{version}") && x->c->api == 0)
		look_up_version(x->c);
	if (strstr(src->path, "{version}") && x->c->api < 0) {
		fail_early(x, x->c->api_why[0] ? x->c->api_why : "no slurmrestd API version");
		return;
	}
	make_url(x->c, src->path, url, sizeof(url));
	x->max_body = x->c->cfg->max_body;
	x->t0 = mono_now();
	x->h = new_handle(x, url, x->c->timeout_ms);
	curl_multi_add_handle(r->m, x->h);
}

/* Fetch mask in parallel, each source from its upstream's base_url; rd: what slurmctld's
 * transfers said about the controller (ha: several controllers, a 3xx is not followed). */
static void run_sources(const struct upstream_config cfg[UPSTREAM_COUNT], unsigned mask, unsigned gen,
			expo_keep_fn keep, void *ctx, struct payload *out[SRC_COUNT], int ha, struct round *rd)
{
	struct xfer x[SRC_COUNT];
	struct run r = { .m = curl_multi_init(), .ha = ha };

	memset(x, 0, sizeof(x));
	for (int id = 0; id < SRC_COUNT; id++) {
		out[id] = NULL;
		if (mask & (1u << id))
			start(&r, &x[id], cfg, (enum source_id)id, gen, keep, ctx);
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
	for (int id = 0; id < SRC_COUNT; id++) {
		if (!x[id].h) {
			out[id] = x[id].p; /* failed before its transfer (or not asked for: NULL) */
			continue;
		}
		if (!x[id].p->at) { /* never completed: multi failure */
			payload_fault(x[id].p, FAULT_TRANSPORT, "transfer did not complete");
			payload_finish(x[id].p);
		}
		curl_multi_remove_handle(r.m, x[id].h);
		curl_easy_cleanup(x[id].h);
		out[id] = x[id].p;
	}
	curl_multi_cleanup(r.m);
	for (int u = 0; u < UPSTREAM_COUNT; u++)
		if (r.c[u].used)
			free_credentials(&r.c[u]);
	*rd = r.rd;
}

/* A finished payload of source id that failed with why, for mapping generation gen. */
static struct payload *failed(enum source_id id, unsigned gen, expo_keep_fn keep, void *ctx, const char *why, double t0)
{
	struct payload *p = payload_new(id, gen, keep, ctx);
	payload_fault(p, FAULT_TRANSPORT, why);
	p->at = mono_now();
	p->seconds = p->at - t0;
	payload_finish(p);
	return p;
}

/* After order[k] answered as a standby with a 303 to location: a configured controller of that
 * origin not tried yet is tried next (a Location anywhere else is never followed). Returns whether
 * one was. */
static int prefer(const struct controllers *ctl, size_t order[], size_t n, size_t k, const char *location)
{
	for (size_t j = k + 1; j < n; j++) {
		const char *u = controllers_url(ctl, order[j]);
		if (fetch_redirect_check(u, location) != FETCH_REDIRECT_SAME_ORIGIN)
			continue;
		size_t pick = order[j];
		memmove(&order[k + 2], &order[k + 1], (j - k - 1) * sizeof(order[0]));
		order[k + 1] = pick;
		return 1;
	}
	return 0;
}

/* What controller order[k] did in rd, for the log and the 503 body. */
static void note_controller(struct controllers *ctl, size_t i, struct round *rd, int followed, char *summary, size_t len)
{
	size_t used = strlen(summary);
	int configured = 0;
	for (size_t j = 0; rd->location[0] && !followed && j < controllers_count(ctl); j++)
		configured |= fetch_redirect_check(controllers_url(ctl, j), rd->location) == FETCH_REDIRECT_SAME_ORIGIN;
	if (rd->location[0] && !followed && !configured) /* (a configured one was tried already) */
		snprintf(rd->why + strlen(rd->why), sizeof(rd->why) - strlen(rd->why), ", not configured: not followed");
	if (!rd->why[0])
		snprintf(rd->why, sizeof(rd->why), "no answer");
	controllers_seen(ctl, i, rd->standby ? ROLE_STANDBY : ROLE_DOWN, rd->why);
	snprintf(summary + used, len - used, "%s%s: %s", used ? "; " : "", controllers_shown(ctl, i), rd->why);
}

/* The least share of --slurmctld.timeout a controller is tried with. */
#define FETCH_HA_MIN_TRY 0.25

/* slurmctld's sources in mask from one of several controllers: each is tried in turn (the one
 * that answered last first, a 303's target next when it is configured), all of mask from one
 * controller; the first that answers as primary gives every source (a source it then fails is a
 * failed source: no mixing), so all controllers fit in the upstream's timeout, each connection
 * attempt gets a share of it. */
static void fetch_ha(const struct upstream_config cfg[UPSTREAM_COUNT], struct controllers *ctl, unsigned mask,
		     unsigned gen, expo_keep_fn keep, void *ctx, struct payload *out[SRC_COUNT])
{
	struct upstream_config one[UPSTREAM_COUNT];
	struct payload *got[SRC_COUNT];
	size_t order[CONTROLLERS_MAX], n = controllers_order(ctl, order);
	double t0 = mono_now(), total = cfg[UPSTREAM_SLURMCTLD].timeout;
	char summary[300] = "";

	memcpy(one, cfg, sizeof(one));
	one[UPSTREAM_SLURMCTLD].connect_timeout = total / (double)n;
	for (size_t k = 0; k < n; k++) {
		struct round rd = { 0 };
		double left = total - (mono_now() - t0);
		/* what is left of the upstream's timeout after a hung controller is a sliver: a controller
		 * tried with it would fail and be seen down for no fault of its own (then both are down,
		 * and the hung one is tried first again). Not tried, it is first on the next fetch. */
		if (left < total * FETCH_HA_MIN_TRY)
			break;
		one[UPSTREAM_SLURMCTLD].base_url = controllers_url(ctl, order[k]);
		one[UPSTREAM_SLURMCTLD].timeout = left;
		run_sources(one, mask, gen, keep, ctx, got, 1, &rd);
		if (rd.answered) {
			controllers_seen(ctl, order[k], ROLE_PRIMARY, NULL);
			controllers_answered(ctl, order[k]);
			for (int id = 0; id < SRC_COUNT; id++)
				if (mask & (1u << id)) {
					got[id]->controller = (int)order[k];
					out[id] = got[id];
				}
			return;
		}
		int followed = rd.location[0] && prefer(ctl, order, n, k, rd.location);
		note_controller(ctl, order[k], &rd, followed, summary, sizeof(summary));
		for (int id = 0; id < SRC_COUNT; id++)
			payload_unref(got[id]);
	}
	char why[400];
	snprintf(why, sizeof(why), "no slurmctld controller answered as primary: %s", summary);
	for (int id = 0; id < SRC_COUNT; id++)
		if (mask & (1u << id))
			out[id] = failed((enum source_id)id, gen, keep, ctx, why, t0);
}

void fetch_sources(const struct upstream_config cfg[UPSTREAM_COUNT], unsigned mask, unsigned gen, expo_keep_fn keep,
		   void *ctx, struct payload *out[SRC_COUNT])
{
	unsigned ctld = mask & source_of_upstream(UPSTREAM_SLURMCTLD);
	struct controllers *ctl = cfg[UPSTREAM_SLURMCTLD].ctl;
	struct round rd;

	if (!ctl || !ctld) {
		run_sources(cfg, mask, gen, keep, ctx, out, 0, &rd);
		return;
	}
	/* the scraper fetches one upstream at a time: the others' sources first is no delay */
	run_sources(cfg, mask & ~ctld, gen, keep, ctx, out, 0, &rd);
	if (controllers_error(ctl)) {
		for (int id = 0; id < SRC_COUNT; id++)
			if (ctld & (1u << id))
				out[id] = failed((enum source_id)id, gen, keep, ctx, controllers_error(ctl), mono_now());
	} else if (controllers_count(ctl) > 1) {
		fetch_ha(cfg, ctl, ctld, gen, keep, ctx, out);
	} else {
		/* one controller: a standby's 303 is followed once, as always */
		struct upstream_config one[UPSTREAM_COUNT];
		struct payload *got[SRC_COUNT];
		memcpy(one, cfg, sizeof(one));
		one[UPSTREAM_SLURMCTLD].base_url = controllers_url(ctl, 0);
		run_sources(one, ctld, gen, keep, ctx, got, 0, &rd);
		controllers_seen(ctl, 0, rd.answered ? ROLE_PRIMARY : rd.standby ? ROLE_STANDBY : ROLE_DOWN, rd.why);
		if (rd.answered || rd.standby)
			controllers_answered(ctl, 0);
		for (int id = 0; id < SRC_COUNT; id++)
			if (ctld & (1u << id)) {
				got[id]->controller = 0;
				out[id] = got[id];
			}
	}
}
