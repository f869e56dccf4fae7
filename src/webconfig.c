/* webconfig.c: exporter-toolkit web config (--web.config.file) parser, see webconfig.h.
 *
 * The file is read into memory (bounded), checked for nesting depth with libyaml's event API (its
 * scanner is quadratic in flow depth), loaded with the document API and then walked:
 * every mapping is first checked for non-scalar and duplicate keys, then each key is dispatched to
 * its handler; anything unknown is an error, as with the toolkit's yaml.UnmarshalStrict. The parts
 * (YAML layer, TLS, basic auth) are listed in webconfig_int.h. Secrets (key PEM, password hashes,
 * the config text) are wiped before they are freed. */
#include "webconfig.h"

#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "file_read.h"
#include "webconfig_int.h"
#include "xmalloc.h"

/* http_server_config.headers: the toolkit's allowed headers; values NULL = free-form. */
static const struct {
	const char *name;
	const char *values[3];
} allowed_headers[] = {
	{ "Strict-Transport-Security", { NULL } },
	{ "X-Content-Type-Options", { "nosniff", NULL } },
	{ "X-Frame-Options", { "deny", "sameorigin", NULL } },
	{ "X-XSS-Protection", { NULL } },
	{ "Content-Security-Policy", { NULL } },
};
#define N_HEADERS (sizeof allowed_headers / sizeof allowed_headers[0])

/* --- http_server_config ------------------------------------------------------------------------ */

static int parse_headers(struct wc_ctx *c, const yaml_node_t *n)
{
	struct webconfig *wc = c->wc;
	const yaml_node_t *k, *v;
	char eb[YF_ESC_SIZE], eb2[YF_ESC_SIZE];
	size_t count, i, h;
	char *val = NULL;
	int present;

	if (yf_get_mapping(&c->y, n, "http_server_config.headers", &present) < 0)
		return -1;
	if (!present)
		return 0;
	count = (size_t)(n->data.mapping.pairs.top - n->data.mapping.pairs.start);
	if (count == 0)
		return 0;
	wc->headers = xcalloc(count, sizeof *wc->headers);
	YF_FOR_PAIRS(&c->y, n, k, v) {
		for (h = 0; h < N_HEADERS && !yf_scalar_is_equal(k, allowed_headers[h].name); h++)
			;
		if (h == N_HEADERS)
			return yf_fail_at(&c->y, k->start_mark,
				       "HTTP header \"%s\" can not be configured (allowed: Strict-Transport-Security, X-Content-Type-Options, X-Frame-Options, X-XSS-Protection, Content-Security-Policy)",
				       yf_esc(eb, yf_sval(k), yf_slen(k)));
		if (yf_get_string(&c->y, v, allowed_headers[h].name, 0, &val) < 0)
			return -1;
		if (allowed_headers[h].values[0]) {
			for (i = 0; allowed_headers[h].values[i] && !yf_scalar_is_equal(v, allowed_headers[h].values[i]); i++)
				;
			if (!allowed_headers[h].values[i] || !val) {
				free(val);
				return yf_fail_at(&c->y, v->start_mark, "invalid value \"%s\" for HTTP header %s (expected %s%s%s)",
					       val ? yf_esc(eb2, yf_sval(v), yf_slen(v)) : "", allowed_headers[h].name,
					       allowed_headers[h].values[0],
					       allowed_headers[h].values[1] ? " or " : "",
					       allowed_headers[h].values[1] ? allowed_headers[h].values[1] : "");
			}
		}
		if (!val || !val[0]) { /* blank: header unset */
			free(val);
			val = NULL;
			continue;
		}
		for (i = 0; val[i]; i++) {
			if ((unsigned char)val[i] < 0x20 && val[i] != '\t') {
				free(val);
				return yf_fail_at(&c->y, v->start_mark, "value of HTTP header %s contains a control character",
					       allowed_headers[h].name);
			}
		}
		wc->headers[wc->nheaders].key = allowed_headers[h].name;
		wc->headers[wc->nheaders].value = val;
		wc->nheaders++;
		val = NULL;
	}
	return 0;
}

static int parse_http(struct wc_ctx *c, const yaml_node_t *n)
{
	const yaml_node_t *k, *v;
	char eb[YF_ESC_SIZE];
	int present, http2 = 1;

	if (yf_get_mapping(&c->y, n, "http_server_config", &present) < 0)
		return -1;
	if (!present)
		return 0;
	YF_FOR_PAIRS(&c->y, n, k, v) {
		if (yf_scalar_is_equal(k, "http2")) {
			if (yf_get_bool(&c->y, v, "http_server_config.http2", &http2) < 0)
				return -1;
		} else if (yf_scalar_is_equal(k, "headers")) {
			if (parse_headers(c, v) < 0)
				return -1;
		} else {
			return yf_fail_at(&c->y, k->start_mark, "unknown key \"%s\" in http_server_config",
				       yf_esc(eb, yf_sval(k), yf_slen(k)));
		}
	}
	return 0;
}

/* --- top level --------------------------------------------------------------------------------- */

static int parse_root(struct wc_ctx *c, const yaml_node_t *root)
{
	const yaml_node_t *k, *v;
	char eb[YF_ESC_SIZE];

	if (!root || yf_is_null(root))
		return 0; /* empty file, comments only, or an explicit empty document */
	if (root->type != YAML_MAPPING_NODE)
		return yf_fail_at(&c->y, root->start_mark, "the web config must be a mapping, not %s",
			       yf_type_name(root));
	if (yf_check_mapping(&c->y, root, "the web config") < 0)
		return -1;
	YF_FOR_PAIRS(&c->y, root, k, v) {
		if (yf_scalar_is_equal(k, "tls_server_config")) {
			if (wc_parse_tls(c, k, v) < 0)
				return -1;
		} else if (yf_scalar_is_equal(k, "http_server_config")) {
			if (parse_http(c, v) < 0)
				return -1;
		} else if (yf_scalar_is_equal(k, "basic_auth_users")) {
			if (wc_parse_users(c, v) < 0)
				return -1;
		} else if (yf_scalar_is_equal(k, "rate_limit")) {
			if (!yf_is_null(v))
				return yf_fail_at(&c->y, k->start_mark, "rate_limit is not supported by slurm-exporter-shim");
		} else {
			return yf_fail_at(&c->y, k->start_mark,
				       "unknown key \"%s\" (expected tls_server_config, http_server_config or basic_auth_users)",
				       yf_esc(eb, yf_sval(k), yf_slen(k)));
		}
	}
	return 0;
}

int webconfig_load(const char *path, struct webconfig **out, char *err, size_t errlen)
{
	struct wc_ctx c = { .y = { .path = path ? path : "(null)", .err = err, .errlen = errlen } };
	yaml_parser_t parser;
	yaml_document_t doc, doc2;
	int parser_init = 0, doc_init = 0, doc2_init = 0, rc = -1;
	const yaml_node_t *root, *root2;
	struct file_text file = { 0 };
	char *buf;
	size_t len;
	char why[128];

	c.tls.min_v = c.tls.max_v = -1;
	c.tls.prefer_server = 1;
	if (err && errlen)
		err[0] = '\0';
	if (out)
		*out = NULL;
	if (!path || !out) {
		yf_fail_nopos(&c.y, "invalid argument");
		goto out;
	}
	/* secret: it may hold the TLS key inline, and password hashes */
	if (file_read(path, YF_MAX_FILE, FILE_SECRET, &file, why, sizeof why) < 0) {
		yf_fail_nopos(&c.y, "cannot read web config: %s", why);
		goto out;
	}
	buf = file.data;
	len = file.len;
	if (yf_check_bounds(&c.y, buf, len) < 0)
		goto out;
	c.wc = xcalloc(1, sizeof *c.wc);
	if (!yaml_parser_initialize(&parser)) {
		yf_fail_nopos(&c.y, "out of memory");
		goto out;
	}
	parser_init = 1;
	yaml_parser_set_input_string(&parser, (const unsigned char *)buf, len);
	if (!yaml_parser_load(&parser, &doc)) { /* libyaml frees a partial document itself */
		yf_parser_fail(&c.y, &parser, buf, len);
		goto out;
	}
	doc_init = 1;
	c.y.doc = &doc;
	root = yaml_document_get_root_node(&doc);
	if (root) {
		if (!yaml_parser_load(&parser, &doc2)) {
			yf_parser_fail(&c.y, &parser, buf, len);
			goto out;
		}
		doc2_init = 1;
		root2 = yaml_document_get_root_node(&doc2);
		if (root2) {
			yf_fail_at(&c.y, root2->start_mark, "multiple YAML documents are not supported");
			goto out;
		}
	}
	if (parse_root(&c, root) < 0)
		goto out;
	*out = c.wc;
	c.wc = NULL;
	rc = 0;
out:
	wc_tls_cfg_clear(&c.tls);
	if (doc2_init)
		yaml_document_delete(&doc2);
	if (doc_init)
		yaml_document_delete(&doc);
	if (parser_init)
		yaml_parser_delete(&parser);
	file_text_free(&file);
	webconfig_free(c.wc);
	return rc;
}

void webconfig_free(struct webconfig *wc)
{
	size_t i;

	if (!wc)
		return;
	free(wc->cert_pem);
	free_secret_str(wc->key_pem);
	free(wc->priorities);
	wc_users_free(wc);
	for (i = 0; i < wc->nheaders; i++)
		free(wc->headers[i].value);
	free(wc->headers);
	free(wc);
}

/* --- getters ----------------------------------------------------------------------------------- */

const char *webconfig_tls_cert_pem(const struct webconfig *wc)
{
	return wc ? wc->cert_pem : NULL;
}

const char *webconfig_tls_key_pem(const struct webconfig *wc)
{
	return wc ? wc->key_pem : NULL;
}

const char *webconfig_tls_min_version(const struct webconfig *wc)
{
	return wc ? wc->min_version : NULL;
}

const char *webconfig_tls_max_version(const struct webconfig *wc)
{
	return wc ? wc->max_version : NULL;
}

const char *webconfig_tls_priorities(const struct webconfig *wc)
{
	return wc ? wc->priorities : NULL;
}

int webconfig_has_users(const struct webconfig *wc)
{
	return wc && wc->nusers > 0;
}

size_t webconfig_header_count(const struct webconfig *wc)
{
	return wc ? wc->nheaders : 0;
}

void webconfig_header(const struct webconfig *wc, size_t i, const char **key, const char **value)
{
	int ok = wc && i < wc->nheaders;

	if (key)
		*key = ok ? wc->headers[i].key : NULL;
	if (value)
		*value = ok ? wc->headers[i].value : NULL;
}
