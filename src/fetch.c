/* fetch.c: see fetch.h. */
#include "fetch.h"
#include "log.h"

#include <curl/curl.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

void fetch_endpoints(const struct fetch_config *cfg, unsigned mask, double timeout_s, unsigned gen, expo_keep_fn keep,
		     void *ctx, struct payload *out[EP_COUNT])
{
	struct xfer x[EP_COUNT];
	struct curl_slist *hdrs = NULL;
	CURLM *m = curl_multi_init();
	char *token = NULL;
	char tokerr[256] = "";
	double timeout = cfg->timeout < timeout_s ? cfg->timeout : timeout_s;
	long timeout_ms = timeout > 0.001 ? (long)(timeout * 1000) : 1;
	size_t blen = strlen(cfg->base_url);

	while (blen && cfg->base_url[blen - 1] == '/')
		blen--;
	hdrs = curl_slist_append(hdrs, "Accept: text/plain");
	if (cfg->token_file) {
		token = fetch_read_token(cfg->token_file, tokerr, sizeof(tokerr));
		if (token) {
			char *h = xmalloc(strlen(token) + 32);
			sprintf(h, "X-SLURM-USER-TOKEN: %s", token);
			hdrs = curl_slist_append(hdrs, h);
			free(h);
		} else {
			log_warn("%s", tokerr);
		}
	}
	if (cfg->user) {
		char h[300];
		snprintf(h, sizeof(h), "X-SLURM-USER-NAME: %s", cfg->user);
		hdrs = curl_slist_append(hdrs, h);
	}
	memset(x, 0, sizeof(x));
	for (int ep = 0; ep < EP_COUNT; ep++) {
		out[ep] = NULL;
		if (!(mask & (1u << ep)))
			continue;
		char url[4096];
		snprintf(url, sizeof(url), "%.*s%s", (int)blen, cfg->base_url, endpoints[ep].path);
		x[ep].p = payload_new((enum endpoint)ep, gen, keep, ctx);
		x[ep].max_body = cfg->max_body;
		x[ep].h = curl_easy_init();
		x[ep].t0 = mono_now();
		CURL *h = x[ep].h;
		curl_easy_setopt(h, CURLOPT_URL, url);
		curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
		curl_easy_setopt(h, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
		curl_easy_setopt(h, CURLOPT_FOLLOWLOCATION, 1L);
		curl_easy_setopt(h, CURLOPT_MAXREDIRS, 1L);
		curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
		curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, timeout_ms);
		curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, timeout_ms);
		curl_easy_setopt(h, CURLOPT_HTTP_VERSION, (long)CURL_HTTP_VERSION_1_1);
		curl_easy_setopt(h, CURLOPT_USERAGENT, "slurm-exporter-shim/" SHIM_VERSION);
		curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdrs);
		curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_data);
		curl_easy_setopt(h, CURLOPT_WRITEDATA, &x[ep]);
		curl_easy_setopt(h, CURLOPT_ERRORBUFFER, x[ep].errbuf);
		curl_easy_setopt(h, CURLOPT_MAXFILESIZE_LARGE, (curl_off_t)cfg->max_body);
		curl_easy_setopt(h, CURLOPT_FORBID_REUSE, 1L);
		curl_easy_setopt(h, CURLOPT_PRIVATE, &x[ep]);
		curl_multi_add_handle(m, h);
	}
	int running = 1;
	while (running) {
		if (curl_multi_perform(m, &running) != CURLM_OK)
			break;
		if (running)
			curl_multi_poll(m, NULL, 0, 200, NULL);
	}
	CURLMsg *msg;
	int left;
	while ((msg = curl_multi_info_read(m, &left))) {
		struct xfer *t;
		if (msg->msg != CURLMSG_DONE)
			continue;
		curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, (char **)&t);
		CURLcode rc = msg->data.result;
		struct payload *p = t->p;
		char why[300];
		const char *err = NULL;
		curl_easy_getinfo(t->h, CURLINFO_RESPONSE_CODE, &p->http_status);
		if (t->too_big || rc == CURLE_FILESIZE_EXCEEDED) {
			snprintf(why, sizeof(why), "body larger than %zu bytes (--slurmctld.max-body)", cfg->max_body);
			err = why;
		} else if (rc == CURLE_TOO_MANY_REDIRECTS) {
			snprintf(why, sizeof(why), "redirected more than once (HTTP %ld); point --slurmctld.url at the primary controller",
				 p->http_status);
			err = why;
		} else if (rc != CURLE_OK) {
			snprintf(why, sizeof(why), "%s (%s)", t->errbuf[0] ? t->errbuf : curl_easy_strerror(rc),
				 curl_easy_strerror(rc));
			err = why;
		}
		p->seconds = mono_now() - t->t0;
		p->at = mono_now();
		/* a 401/403 with a token is explained by payload_finish; the token itself is never logged */
		if (!token && tokerr[0] && !err && p->http_status == 401) {
			snprintf(why, sizeof(why), "401 Unauthorized and no usable token: %s", tokerr);
			err = why;
		}
		payload_finish(p, err);
	}
	for (int ep = 0; ep < EP_COUNT; ep++) {
		if (!x[ep].h)
			continue;
		if (!x[ep].p->at) { /* never completed: multi failure */
			payload_finish(x[ep].p, "transfer did not complete");
		}
		curl_multi_remove_handle(m, x[ep].h);
		curl_easy_cleanup(x[ep].h);
		out[ep] = x[ep].p;
	}
	curl_multi_cleanup(m);
	curl_slist_free_all(hdrs);
	if (token) {
		memset(token, 0, strlen(token));
		free(token);
	}
}
