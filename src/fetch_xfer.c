/* fetch_xfer.c: the transfer engine of fetch.c and fetch_ctld.c (see fetch_int.h): libcurl
 * transfers, each parsed into its payload as it arrives; upstreams' credentials, only to their
 * origins; redirects; slurmrestd's API version. It calls no other part of fetch. */
#include "fetch.h"
#include "buf.h"
#include "cred.h"
#include "fetch_int.h"
#include "file_read.h"
#include "log.h"
#include "monotime.h"
#include "slurmrestd_api.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* Every header line of every response (an interim 1xx's, a redirect's, then the answer's), its
 * status line first: whether the answer's header block ended, and whether its body is chunked
 * (source_verdict judges these facts). */
static size_t on_header(char *ptr, size_t size, size_t nmemb, void *ud)
{
	struct xfer *x = ud;
	size_t n = size * nmemb;
	static const char te[] = "transfer-encoding:";
	if (n >= 5 && !memcmp(ptr, "HTTP/", 5)) {
		x->headers_done = 0;
		x->chunked = 0;
		if (x->responded)
			*x->responded = 1;
	} else if ((n == 2 && ptr[0] == '\r' && ptr[1] == '\n') || (n == 1 && ptr[0] == '\n')) {
		x->headers_done = 1;
	} else if (n > sizeof(te) - 1 && !strncasecmp(ptr, te, sizeof(te) - 1)) {
		for (size_t i = sizeof(te) - 1; i + 7 <= n && !x->chunked; i++)
			x->chunked = !strncasecmp(ptr + i, "chunked", 7);
	}
	return n;
}

/* How the answer on t was framed, as facts: headers that never ended, its Content-Length, or
 * neither a length nor chunks (its end is where the connection closed). */
static void note_framing(const struct xfer *t, struct payload *p)
{
	curl_off_t cl = -1;
	if (p->http_status <= 0)
		return;
	curl_easy_getinfo(t->h, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &cl);
	p->facts.headers_cut = !t->headers_done;
	p->facts.content_length = cl > 0 ? (long long)cl : 0;
	p->facts.unframed = cl < 0 && !t->chunked;
}

/* An answer known unusable from its status or its headers: a status other than 200 (but a
 * redirect's, which done() follows), or a Content-Type not its upstream's media type (recorded). */
static int answer_is_known_unusable(struct xfer *x, long code)
{
	char *type = NULL, safe[100];
	const char *want = upstreams[sources[x->p->src].upstream].media_type;
	if (code != 200)
		return code < 300 || code >= 400;
	if (!want || curl_easy_getinfo(x->h, CURLINFO_CONTENT_TYPE, &type) != CURLE_OK || !type)
		return 0;
	size_t n = strcspn(type, "; \t");
	if (strlen(want) == n && !strncasecmp(type, want, n))
		return 0;
	payload_fault(x->p, FAULT_CONTENT_TYPE, log_escape(safe, sizeof(safe), type, strlen(type)));
	return 1;
}

/* The body goes straight to the parser (payload_feed): it is never held whole. An answer known
 * unusable (status, type, the parser's first problem) is not downloaded further. */
static size_t on_data(char *ptr, size_t size, size_t nmemb, void *ud)
{
	struct xfer *x = ud;
	size_t n = size * nmemb;
	long code = 0;
	curl_easy_getinfo(x->h, CURLINFO_RESPONSE_CODE, &code);
	if (code != x->p->http_status)
		payload_restart(x->p, code); /* a new response (after a redirect): the bytes before are not its */
	x->body_seen = 1;
	enum payload_feed rc = answer_is_known_unusable(x, code) ? PAYLOAD_FEED_ENOUGH : payload_feed(x->p, ptr, n, x->max_body);
	x->too_big = rc == PAYLOAD_FEED_TOO_BIG;
	x->stopped = rc == PAYLOAD_FEED_ENOUGH;
	return rc == PAYLOAD_FEED_MORE ? n : 0; /* 0 aborts the transfer */
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
	char why[100];
	char *tok = NULL;
	if (file_read(path, TOKEN_FILE_MAX, FILE_SECRET, &f, why, sizeof(why)) < 0) {
		/* raw: a reason is escaped where it is shown (log, status page, 503 body) */
		snprintf(err, errlen, "cannot read token file %.120s: %s", path, why);
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
		snprintf(err, errlen, "token file %.120s %s", path, nul ? "holds a NUL byte" : "is empty");
	else if (bad)
		snprintf(err, errlen, "token file %.120s: the token %s", path, bad);
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

/* A 3xx just finished on t: follow it (1, the handle is back in the multi) or not (0; a refused,
 * second or, for a controller, other origin's redirect is recorded as the payload's fault). Only one
 * redirect is followed (a standby points at the primary). Credentials go only to the configured
 * origin (t->base): curl would send our custom headers to any host it is sent to. A controller's
 * 303 elsewhere is not followed here: every source of a fetch is read from one controller, and
 * fetch_ctld.c decides which controller is asked next. */
static int follow(struct run *r, struct xfer *t)
{
	char *loc = NULL, shown[160]; /* raw: each sink (log, 503 body, status page) escapes it */
	struct cred *c = t->c;
	curl_easy_getinfo(t->h, CURLINFO_REDIRECT_URL, &loc);
	if (!loc)
		return 0; /* a 3xx without Location: classified as an HTTP error */
	snprintf(shown, sizeof(shown), "%s", loc);
	if (t->redirected) {
		payload_fault(t->p, FAULT_REDIRECT_LOOP, NULL);
		return 0;
	}
	enum fetch_redirect k = fetch_redirect_check(t->base, loc);
	if (k == FETCH_REDIRECT_REFUSE) {
		payload_fault(t->p, FAULT_REDIRECT_REFUSED, shown);
		return 0;
	}
	if (k == FETCH_REDIRECT_OTHER_ORIGIN && !t->follow_any) {
		payload_fault(t->p, FAULT_REDIRECT_UNFOLLOWED, shown);
		return 0;
	}
	t->withheld = k == FETCH_REDIRECT_OTHER_ORIGIN;
	if (k == FETCH_REDIRECT_OTHER_ORIGIN && (c->token || c->cfg->user))
		log_warn("%s: redirected to another origin, %s: following without the token and user, which go only to %s.url",
			 sources[t->p->src].name, shown, c->up->flag);
	/* the second request gets what is left of the source's time, as when curl followed itself */
	long left_ms = t->timeout_ms - (long)((mono_now() - t->t0) * 1000);
	curl_multi_remove_handle(r->m, t->h);
	curl_easy_setopt(t->h, CURLOPT_TIMEOUT_MS, left_ms > 1 ? left_ms : 1L);
	curl_easy_setopt(t->h, CURLOPT_CONNECTTIMEOUT_MS, left_ms > 1 ? left_ms : 1L);
	curl_easy_setopt(t->h, CURLOPT_URL, loc); /* copied by curl before loc is freed */
	curl_easy_setopt(t->h, CURLOPT_HTTPHEADER, k == FETCH_REDIRECT_SAME_ORIGIN ? t->hdrs : c->anon_hdrs);
	payload_restart(t->p, 0);
	t->redirected = 1;
	curl_multi_add_handle(r->m, t->h);
	return 1;
}

/* A unix: base URL's socket path, or NULL. */
static const char *unix_socket(const char *base_url)
{
	return strncmp(base_url, "unix:", 5) ? NULL : base_url + 5;
}

/* Why transfer h at base failed (rc), into out: curl's words (errbuf, else its code's text),
 * except where they mislead. Over a unix socket, curl names the URL's placeholder host ("Failed to
 * connect to localhost port 80"): the socket is named instead, with the system's error. A header
 * line over libcurl's limit (CURL_MAX_HTTP_HEADER) before any body byte is curl's "Out of memory"
 * (CURLE_TOO_LARGE since libcurl 8.6). */
static void transport_error(const char *base, CURL *h, CURLcode rc, const char *errbuf, int body_seen, char *out,
			    size_t len)
{
	const char *sock = unix_socket(base);
	long oserr = 0;
	int too_large = rc == CURLE_OUT_OF_MEMORY;
#if LIBCURL_VERSION_NUM >= 0x080600
	too_large |= rc == CURLE_TOO_LARGE;
#endif
	if (sock && rc == CURLE_COULDNT_CONNECT) {
		curl_easy_getinfo(h, CURLINFO_OS_ERRNO, &oserr);
		snprintf(out, len, "cannot connect to unix socket %s: %s", sock,
			 oserr ? strerror((int)oserr) : curl_easy_strerror(rc));
	} else if (too_large && !body_seen) {
		snprintf(out, len, "response header too large (a header line over %d bytes)", CURL_MAX_HTTP_HEADER);
	} else { /* curl's words once: errbuf holds its code's text already, or more */
		snprintf(out, len, "%s", errbuf[0] ? errbuf : curl_easy_strerror(rc));
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
	} else if (rc != CURLE_OK && !(t->stopped && rc == CURLE_WRITE_ERROR)) {
		char why[400]; /* cut to the facts' detail */
		transport_error(t->base, t->h, rc, t->errbuf, t->body_seen, why, sizeof(why));
		size_t n = strlen(why);
		snprintf(why + n, sizeof(why) - n, "%s", transport_hint(t->c->up, rc));
		payload_fault(p, FAULT_TRANSPORT, why);
	} else if (p->http_status >= 300 && p->http_status < 400 && follow(r, t)) {
		return 1;
	}
	t->rc = rc;
	note_framing(t, p);
	p->seconds = mono_now() - t->t0;
	p->at = mono_now();
	/* a 401 without a token is explained by why there is none; the token itself is never logged */
	if (!t->c->token && t->c->tokerr[0])
		payload_fault(p, FAULT_NO_TOKEN, t->c->tokerr);
	p->facts.token = !t->c->cfg->token_file ? TOKEN_NOT_CONFIGURED : !t->c->token ? TOKEN_UNREADABLE :
			 t->withheld ? TOKEN_WITHHELD : TOKEN_SENT;
	/* slurmrestd no longer serves the version it was discovered with: ask /openapi/v3 next time. The
	 * version is discovered from the /slurm/ paths; a 404 on /slurmdb/ is a slurmrestd without its
	 * slurmdbd plugin, which another discovery would not change */
	if (p->http_status == 404 && t->c->ra && !strncmp(sources[p->src].path, "/slurm/{version}", 16) &&
	    slurmrestd_api_forget(t->c->ra, t->c->version))
		log_warn("%s: %s answered 404 with API version %s: looking the version up again on the next fetch",
			 t->c->up->name, sources[p->src].name, t->c->version);
	payload_finish(p);
	if (t->pending)
		--*t->pending;
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

/* The URL of path at base (over a unix socket, http://localhost) into url, "{version}" replaced
 * by c's API version. */
static void make_url(const struct cred *c, const char *base_url, const char *path, char *url, size_t len)
{
	const char *base = unix_socket(base_url) ? "http://localhost" : base_url;
	const char *var = strstr(path, "{version}");
	size_t blen = strlen(base);
	while (blen && base[blen - 1] == '/')
		blen--;
	if (var)
		snprintf(url, len, "%.*s%.*s%s%s", (int)blen, base, (int)(var - path), path, c->version, var + 9);
	else
		snprintf(url, len, "%.*s%s", (int)blen, base, path);
}

/* A handle for url at base on c's upstream with the options every request has (headers: the
 * caller's). connect_ms 0: timeout_ms. */
static CURL *base_handle(const struct cred *c, const char *base, const char *url, long timeout_ms, long connect_ms,
			 char *errbuf)
{
	CURL *h = curl_easy_init();
	const char *sock = unix_socket(base);
	if (sock)
		curl_easy_setopt(h, CURLOPT_UNIX_SOCKET_PATH, sock);
	curl_easy_setopt(h, CURLOPT_URL, url);
	curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
	/* redirects are followed by follow(), which checks the origin first */
	curl_easy_setopt(h, CURLOPT_FOLLOWLOCATION, 0L);
	curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, timeout_ms);
	curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, connect_ms && connect_ms < timeout_ms ? connect_ms : timeout_ms);
	curl_easy_setopt(h, CURLOPT_HTTP_VERSION, (long)CURL_HTTP_VERSION_1_1);
	curl_easy_setopt(h, CURLOPT_USERAGENT, "slurm-exporter-shim/" SHIM_VERSION);
	curl_easy_setopt(h, CURLOPT_ERRORBUFFER, errbuf);
	curl_easy_setopt(h, CURLOPT_MAXFILESIZE_LARGE, (curl_off_t)c->cfg->max_body);
	curl_easy_setopt(h, CURLOPT_FORBID_REUSE, 1L);
	return h;
}

/* /openapi/v3 as it arrives: read streaming (slurmrestd_api.h), stopped once its outcome is known. */
struct doc_xfer {
	CURL *h;
	struct slurmrestd_api_doc *d;
	size_t len, max;         /* max: --slurmrestd.max-body; 0: no limit */
	int stopped, too_big;
};

static size_t on_doc(char *ptr, size_t size, size_t nmemb, void *ud)
{
	struct doc_xfer *x = ud;
	size_t n = size * nmemb;
	long code = 0;
	curl_easy_getinfo(x->h, CURLINFO_RESPONSE_CODE, &code);
	x->too_big = code == 200 && x->max && n > x->max - x->len;
	x->stopped = code != 200 || x->too_big || slurmrestd_api_doc_feed(x->d, ptr, n);
	x->len += n;
	return x->stopped ? 0 : n;
}

/* Learn c's API version (slurmrestd) now from /openapi/v3 with a
 * blocking request that takes its time out of the upstream's timeout (this call's fetches get what
 * is left), read streaming and stopped once its outcome is known. A failure is kept in c for this
 * call's other sources, and asked again after slurmrestd_api's back-off. */
static void discover_version(struct cred *c)
{
	char errbuf[CURL_ERROR_SIZE] = "", url[4096], why[250];
	long code = 0;
	double t0 = mono_now();
	const char *what = "API version discovery: /openapi/v3";

	if (!slurmrestd_api_due(c->ra, t0, c->api_why, sizeof(c->api_why), &c->api_refused))
		return;
	make_url(c, c->cfg->base_url, "/openapi/v3", url, sizeof(url));
	struct doc_xfer x = { .d = slurmrestd_api_doc_new(), .max = c->cfg->max_body };
	x.h = base_handle(c, c->cfg->base_url, url, c->timeout_ms, c->connect_ms, errbuf);
	curl_easy_setopt(x.h, CURLOPT_HTTPHEADER, c->hdrs);
	curl_easy_setopt(x.h, CURLOPT_WRITEFUNCTION, on_doc);
	curl_easy_setopt(x.h, CURLOPT_WRITEDATA, &x);
	CURLcode rc = curl_easy_perform(x.h);
	curl_easy_getinfo(x.h, CURLINFO_RESPONSE_CODE, &code);
	int failed = rc != CURLE_OK && !(x.stopped && rc == CURLE_WRITE_ERROR);
	if (failed)
		transport_error(c->cfg->base_url, x.h, rc, errbuf, x.len > 0, why, sizeof(why));
	curl_easy_cleanup(x.h);
	const char *hint = c->up->status_hint ? c->up->status_hint(code) : NULL;
	if (failed)
		snprintf(c->api_why, sizeof(c->api_why), "%s: %s", what, why);
	else if (c->token && (code == 401 || code == 403 || code == 511))
		snprintf(c->api_why, sizeof(c->api_why), "%s: HTTP %ld with the token of %s.auth.token-file: token expired or "
			 "not accepted: renew it (scontrol token)", what, code, c->up->flag);
	else if (code != 200 && hint)
		snprintf(c->api_why, sizeof(c->api_why), "%s: %s", what, hint);
	else if (code != 200)
		snprintf(c->api_why, sizeof(c->api_why), "%s: HTTP status %ld", what, code);
	else if (x.too_big)
		snprintf(c->api_why, sizeof(c->api_why), "%s: larger than %zu bytes (--slurmrestd.max-body)", what, x.max);
	else {
		int learnt = slurmrestd_api_doc_learn(c->ra, x.d, why, sizeof(why)) == 0;
		x.d = NULL; /* freed */
		if (!learnt)
			snprintf(c->api_why, sizeof(c->api_why), "API version discovery: %s", why);
		else if (slurmrestd_api_version(c->ra, c->version) == 0)
			c->api = 1;
	}
	slurmrestd_api_doc_free(x.d);
	c->api_refused = c->api < 0 && c->token && (code == 401 || code == 403 || code == 511) ? code : 0;
	if (c->api > 0)
		log_info("%s: API version %s (newest in /openapi/v3 this shim reads)", c->up->name, c->version);
	else
		slurmrestd_api_failed(c->ra, mono_now(), c->api_why, c->api_refused);
	long left_ms = c->timeout_ms - (long)((mono_now() - t0) * 1000);
	c->timeout_ms = left_ms > 1 ? left_ms : 1;
}

/* c's API version: the remembered one, or discover_version's. One discovery at a time: a fetch
 * that waited for another's (slurmrestd's /jobs runs on a worker of its own) uses what it learnt. */
static void look_up_version(struct cred *c)
{
	c->api = -1;
	if (slurmrestd_api_version(c->ra, c->version) == 0) {
		c->api = 1;
		return;
	}
	slurmrestd_api_discovery_begin(c->ra);
	if (slurmrestd_api_version(c->ra, c->version) == 0)
		c->api = 1;
	else
		discover_version(c);
	slurmrestd_api_discovery_end(c->ra);
}

int fetch_origin_base(const char *url, char *out, size_t len)
{
	char *scheme, *host, *port;
	int rc = origin_of(url, &scheme, &host, &port);
	if (rc == 0 && (size_t)snprintf(out, len, "%s://%s:%s", scheme, host, port) >= len)
		rc = -1;
	curl_free(scheme);
	curl_free(host);
	curl_free(port);
	return rc;
}

/* The credentials of upstream u, set up on its first source of this call. */
struct cred *fetch_cred(struct run *r, const struct upstream_rt *rt, enum upstream_id u)
{
	struct cred *c = &r->c[u];
	if (c->used)
		return c;
	double timeout = r->timeout > 0 ? r->timeout : rt->cfg[u].timeout;
	c->used = 1;
	c->cfg = &rt->cfg[u];
	c->up = &upstreams[u];
	c->ra = rt->ra;
	c->timeout_ms = timeout > 0.001 ? (long)(timeout * 1000) : 1;
	add_credentials(c);
	return c;
}

/* A payload that failed before its transfer started. */
static void fail_early(struct xfer *x, const char *why)
{
	payload_fault(x->p, FAULT_TRANSPORT, why);
	x->p->at = mono_now();
	payload_finish(x->p);
	if (x->pending)
		--*x->pending;
}

void fetch_start(struct run *r, struct xfer *x, enum source_id id, const char *base, long timeout_ms, unsigned gen,
		 expo_keep_fn keep, void *ctx)
{
	const struct source *src = &sources[id];
	char url[4096];
	x->p = payload_new(id, gen, keep, ctx);
	if (x->pending)
		++*x->pending;
	if (!base) {
		fail_early(x, "upstream not configured");
		return;
	}
	if (strstr(src->path, "{version}") && x->c->api == 0)
		look_up_version(x->c); /* takes its time out of the upstream's */
	if (strstr(src->path, "{version}") && x->c->api < 0) {
		if (x->c->api_refused) { /* the discovery's answer to the token is this source's too */
			x->p->http_status = x->c->api_refused;
			x->p->facts.token = TOKEN_SENT;
		}
		fail_early(x, x->c->api_why[0] ? x->c->api_why : "no slurmrestd API version");
		return;
	}
	if (timeout_ms > x->c->timeout_ms)
		timeout_ms = x->c->timeout_ms;
	make_url(x->c, base, src->path, url, sizeof(url));
	x->base = base;
	x->max_body = x->c->cfg->max_body;
	x->timeout_ms = timeout_ms;
	x->t0 = mono_now();
	x->h = base_handle(x->c, base, url, timeout_ms, x->c->connect_ms, x->errbuf);
	curl_easy_setopt(x->h, CURLOPT_HTTPHEADER, x->hdrs);
	curl_easy_setopt(x->h, CURLOPT_WRITEFUNCTION, on_data);
	curl_easy_setopt(x->h, CURLOPT_WRITEDATA, x);
	curl_easy_setopt(x->h, CURLOPT_HEADERFUNCTION, on_header);
	curl_easy_setopt(x->h, CURLOPT_HEADERDATA, x);
	curl_easy_setopt(x->h, CURLOPT_PRIVATE, x);
	curl_multi_add_handle(r->m, x->h);
}

static atomic_int stop_all;

void fetch_stop_all(void)
{
	atomic_store(&stop_all, 1);
}

int fetch_stopping(void)
{
	return atomic_load(&stop_all);
}

int fetch_step(struct run *r, long wait_ms)
{
	CURLMsg *msg;
	int running = 0, left;
	if (fetch_stopping())
		return 0;
	if (curl_multi_perform(r->m, &running) != CURLM_OK)
		return 0;
	while ((msg = curl_multi_info_read(r->m, &left)))
		if (msg->msg == CURLMSG_DONE && done(r, msg))
			running++; /* a redirect: the handle is back in */
	if (running)
		curl_multi_poll(r->m, NULL, 0, (int)wait_ms, NULL);
	return running;
}

void fetch_end(struct run *r, struct xfer *x)
{
	if (!x->h)
		return;
	if (!x->p->at) { /* never completed: multi failure, given up, or shutting down */
		payload_fault(x->p, FAULT_TRANSPORT, fetch_stopping() ? "shutting down" : "transfer did not complete");
		payload_finish(x->p);
		if (x->pending)
			--*x->pending;
	}
	curl_multi_remove_handle(r->m, x->h);
	curl_easy_cleanup(x->h);
	x->h = NULL;
}

struct payload *fetch_failed(enum source_id id, unsigned gen, expo_keep_fn keep, void *ctx, const char *why, double t0)
{
	struct payload *p = payload_new(id, gen, keep, ctx);
	payload_fault(p, FAULT_TRANSPORT, why);
	p->at = mono_now();
	p->seconds = p->at - t0;
	payload_finish(p);
	return p;
}

void fetch_run_end(struct run *r)
{
	curl_multi_cleanup(r->m);
	for (int up = 0; up < UPSTREAM_COUNT; up++)
		if (r->c[up].used)
			free_credentials(&r->c[up]);
}
