/* compare_get.c: the old exporter's page for --compare-legacy (compare.h): one plain GET. */
#include "compare.h"

#include <curl/curl.h>
#include <stdio.h>
#include <string.h>

#include "cred.h"

static size_t on_body(char *p, size_t size, size_t n, void *ctx)
{
	/* a short count makes curl stop: a body over the cap is an error, never a truncated page */
	return buf_append(ctx, p, size * n) < 0 ? 0 : size * n;
}

int compare_get(const char *url, double timeout_s, struct buf *out, char *err, size_t errsz)
{
	char cerr[CURL_ERROR_SIZE] = "", shown[CRED_SHOWN_MAX];
	long status = 0, ms = (long)(timeout_s * 1000);
	int rc = -1;
	CURL *h = curl_easy_init();
	if (!h) {
		snprintf(err, errsz, "cannot start a transfer");
		return -1;
	}
	curl_easy_setopt(h, CURLOPT_URL, url);
	curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https"); /* no file://, no gopher:// */
	curl_easy_setopt(h, CURLOPT_FOLLOWLOCATION, 0L);
	curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, ms > 1 ? ms : 1L);
	curl_easy_setopt(h, CURLOPT_USERAGENT, "slurm-exporter-shim/" SHIM_VERSION " (--compare-legacy)");
	curl_easy_setopt(h, CURLOPT_ERRORBUFFER, cerr);
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, out);
	CURLcode cc = curl_easy_perform(h);
	curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
	cred_url_shown(shown, sizeof(shown), url); /* the old exporter's basic auth, if any, is never shown; raw: the log escapes */
	if (out->overflow)
		snprintf(err, errsz, "%s: body larger than %zu bytes", shown, out->max);
	else if (cc != CURLE_OK)
		snprintf(err, errsz, "%s: %s", shown, cerr[0] ? cerr : curl_easy_strerror(cc)); /* curl's own words */
	else if (status != 200)
		snprintf(err, errsz, "%s: HTTP status %ld", shown, status);
	else
		rc = 0;
	curl_easy_cleanup(h);
	return rc;
}
