/* probe.c: see probe.h. The targets file is read like the web config (webconfig.c): bounded read,
 * nesting-depth guard, libyaml's document API, strict mappings; unlike the web config, problems do
 * not stop the walk: each is added to the list and the walk goes on, so an admin sees them all at
 * once. */
#include "probe.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <yaml.h>

#include "buf.h"
#include "controllers.h"
#include "cred.h"
#include "file_read.h"
#include "log.h"
#include "mapping.h"
#include "scrape.h"
#include "yamlfile.h"
#include "xmalloc.h"

/* --- problems ---------------------------------------------------------------------------------- */

struct pctx {
	struct yf_ctx c;        /* the YAML layer's context: the path, the document, msg for its errors */
	char msg[600];
	struct buf *problems;
	size_t nerr;
};

/* One problem at mark m (NULL: the whole file), as one printable line. */
static void perr(struct pctx *p, const yaml_mark_t *m, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void perr(struct pctx *p, const yaml_mark_t *m, const char *fmt, ...)
{
	char line[sizeof(p->msg)];
	va_list ap;
	int n;
	if (p->nerr++ >= PROBE_MAX_ERRORS)
		return;
	if (m)
		n = snprintf(line, sizeof(line), "%s:%zu:%zu: ", p->c.path, m->line + 1, m->column + 1);
	else
		n = snprintf(line, sizeof(line), "%s: ", p->c.path);
	if (n < 0 || (size_t)n >= sizeof(line))
		n = 0;
	va_start(ap, fmt);
	vsnprintf(line + n, sizeof(line) - (size_t)n, fmt, ap);
	va_end(ap);
	for (char *s = line; *s; s++) /* the path may hold control bytes; the file's bytes are escaped */
		if ((unsigned char)*s < 0x20 || (unsigned char)*s == 0x7f)
			*s = '?';
	buf_printf(p->problems, "%s\n", line);
}

/* The YAML layer's message (in msg, already "FILE:LINE:COLUMN: reason") as one problem. */
static void note(struct pctx *p)
{
	if (p->nerr++ < PROBE_MAX_ERRORS)
		buf_printf(p->problems, "%s\n", p->msg);
}

/* --- values ------------------------------------------------------------------------------------ */

/* A string field: null or "" leave *out NULL (not configured). 0, or -1 reported. */
static int get_string(struct pctx *p, const yaml_node_t *n, const char *what, char **out)
{
	if (n->type != YAML_SCALAR_NODE) {
		perr(p, &n->start_mark, "%s must be a string, not %s", what, yf_type_name(n));
		return -1;
	}
	if (yf_is_null(n) || yf_slen(n) == 0)
		return 0;
	if (memchr(yf_sval(n), '\0', yf_slen(n))) {
		perr(p, &n->start_mark, "%s contains a NUL character", what);
		return -1;
	}
	*out = yf_dup_scalar(n);
	return 0;
}

/* slurmctld_url's join: what --slurmctld.url takes (options.h's url_list, controllers.h's count). A
 * sequence of aliases to one long scalar would otherwise be joined whole, once per alias. */
#define PROBE_URLS_MAX 4095
struct urls {
	struct buf b;
	size_t n;  /* URLs so far */
	int bad;
};

/* Check every comma-separated URL of scalar n and append them to u (comma-separated). -1 when the
 * list is over its bounds (reported at list: n, or the sequence n is an item of, since an alias
 * item is the node it names, at its anchor's position): the rest is not looked at. */
static int add_urls(struct pctx *p, const yaml_node_t *n, const yaml_node_t *list, struct urls *u)
{
	char eb[YF_ESC_SIZE];
	if (n->type != YAML_SCALAR_NODE || yf_is_null(n)) {
		perr(p, &n->start_mark, "slurmctld_url must be a URL, not %s", yf_is_null(n) ? "null" : yf_type_name(n));
		u->bad = 1;
		return 0;
	}
	const char *s = yf_sval(n), *end = s + yf_slen(n);
	if (yf_slen(n) + (u->b.len > 0) > PROBE_URLS_MAX - u->b.len) { /* (b.len is at most the bound) */
		perr(p, &list->start_mark, "slurmctld_url: the controller list is longer than %d bytes", PROBE_URLS_MAX);
		u->bad = 1;
		return -1;
	}
	for (;;) {
		const char *comma = memchr(s, ',', (size_t)(end - s)), *e = comma ? comma : end;
		if (++u->n > CONTROLLERS_MAX) {
			perr(p, &list->start_mark, "slurmctld_url: more than %d controllers", CONTROLLERS_MAX);
			u->bad = 1;
			return -1;
		}
		if (!upstream_url_is_valid(s, (size_t)(e - s), 0)) {
			perr(p, &n->start_mark, "slurmctld_url \"%s\" is not an http:// or https:// URL",
			     yf_esc(eb, s, (size_t)(e - s)));
			u->bad = 1;
		}
		if (!comma)
			break;
		s = comma + 1;
	}
	if (u->b.len)
		buf_putc(&u->b, ',');
	buf_append(&u->b, yf_sval(n), yf_slen(n));
	return 0;
}

/* slurmctld_url: a URL, a comma list of them, or a sequence of either (joined with commas: the
 * form --slurmctld.url takes), bounded as --slurmctld.url is. Passed on as given. 0 with *out
 * set, or -1 reported. */
static int get_ctld_url(struct pctx *p, const yaml_node_t *n, char **out)
{
	struct urls u = { .n = 0 };
	buf_init(&u.b, 0);
	if (n->type == YAML_SEQUENCE_NODE) {
		for (yaml_node_item_t *it = n->data.sequence.items.start; it < n->data.sequence.items.top; it++)
			if (add_urls(p, yf_node(&p->c, *it), n, &u) < 0)
				break;
		if (n->data.sequence.items.top == n->data.sequence.items.start) {
			perr(p, &n->start_mark, "slurmctld_url is an empty sequence");
			u.bad = 1;
		}
	} else if (n->type == YAML_SCALAR_NODE) {
		add_urls(p, n, n, &u);
	} else {
		perr(p, &n->start_mark, "slurmctld_url must be a URL or a sequence of URLs, not %s", yf_type_name(n));
		u.bad = 1;
	}
	if (!u.bad)
		*out = buf_steal(&u.b, NULL);
	buf_free(&u.b);
	return u.bad ? -1 : 0;
}

/* --- the file ---------------------------------------------------------------------------------- */

static const char *const target_keys[] = { "slurmctld_url", "token_file", "user", "mapping",
					   "slurmrestd_url", "slurmrestd_token_file", "slurmrestd_user" };
enum { K_URL, K_TOKEN, K_USER, K_MAPPING, K_REST_URL, K_REST_TOKEN, K_REST_USER, K_COUNT };

/* The checks of field i (a string: not the slurmctld_url) whose value v (NULL: not set) is at vv. */
static void check_value(struct pctx *p, int i, const yaml_node_t *vv, const char *v)
{
	char eb[YF_ESC_SIZE], why[80];
	if (v && i == K_REST_URL && !upstream_url_is_valid(v, strlen(v), 1))
		perr(p, &vv->start_mark, "slurmrestd_url \"%s\" is not an http:// or https:// URL or unix:/path/to/socket",
		     yf_esc(eb, yf_sval(vv), yf_slen(vv)));
	/* a user name goes into a request header as is: a CR or LF in it would add header lines */
	if (v && (i == K_USER || i == K_REST_USER) && cred_value_problem(v, strlen(v), CRED_USER_MAX, why, sizeof(why)))
		perr(p, &vv->start_mark, "%s %s", target_keys[i], why);
}

/* One target's settings (v) into t; k is its name's node. */
static void parse_target(struct pctx *p, const yaml_node_t *k, const yaml_node_t *v, struct probe_target *t)
{
	char **field[K_COUNT] = { &t->slurmctld_url, &t->token_file, &t->user, &t->mapping,
				  &t->rest_url, &t->rest_token_file, &t->rest_user };
	const yaml_node_t *kk, *vv;
	char eb[YF_ESC_SIZE];
	unsigned seen = 0;
	if (v->type != YAML_MAPPING_NODE && !yf_is_null(v)) {
		perr(p, &v->start_mark, "target \"%s\" must be a mapping, not %s", t->name, yf_type_name(v));
		return;
	}
	if (v->type == YAML_MAPPING_NODE)
		YF_FOR_PAIRS(&p->c, v, kk, vv) {
			int i = yf_lookup(kk, target_keys, K_COUNT);
			if (kk->type != YAML_SCALAR_NODE) {
				perr(p, &kk->start_mark, "keys of target \"%s\" must be strings, not %s", t->name,
				     yf_type_name(kk));
			} else if (i < 0) {
				perr(p, &kk->start_mark,
				     "unknown key \"%s\" in target \"%s\" (expected slurmctld_url, token_file, user, mapping, slurmrestd_url, slurmrestd_token_file or slurmrestd_user)",
				     yf_esc(eb, yf_sval(kk), yf_slen(kk)), t->name);
			} else if (seen & 1u << i) {
				perr(p, &kk->start_mark, "duplicate key \"%s\" in target \"%s\"", target_keys[i], t->name);
			} else {
				seen |= 1u << i;
				if (i == K_URL)
					get_ctld_url(p, vv, field[i]);
				else if (get_string(p, vv, target_keys[i], field[i]) == 0)
					check_value(p, i, vv, *field[i]);
			}
		}
	if (!(seen & 1u << K_URL))
		perr(p, &k->start_mark, "target \"%s\" has no slurmctld_url", t->name);
}

/* A target name: [A-Za-z0-9_.-]+, at most PROBE_NAME_MAX bytes (it goes into URLs and logs). */
static int target_name_is_valid(const yaml_node_t *k)
{
	if (k->type != YAML_SCALAR_NODE || yf_slen(k) == 0 || yf_slen(k) > PROBE_NAME_MAX)
		return 0;
	return strspn(yf_sval(k), "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-") == yf_slen(k);
}

struct name_at {
	const yaml_node_t *k;
	size_t i; /* its pair's index */
};

static int cmp_name(const void *a, const void *b)
{
	const struct name_at *x = a, *y = b;
	int r = strcmp(yf_sval(x->k), yf_sval(y->k)); /* valid names: no NUL inside */
	return r ? r : x->i < y->i ? -1 : x->i > y->i;
}

/* first[i]: for the i-th key of n that repeats an earlier valid name, that earlier key; else NULL.
 * Sorted, not compared pairwise: a 1 MiB file holds tens of thousands of names. */
static const yaml_node_t **find_repeats(struct pctx *p, const yaml_node_t *n, size_t count)
{
	const yaml_node_t **first = xcalloc(count ? count : 1, sizeof(*first));
	struct name_at *keys = xcalloc(count ? count : 1, sizeof(*keys));
	size_t nk = 0;
	for (size_t i = 0; i < count; i++) {
		const yaml_node_t *k = yf_node(&p->c, n->data.mapping.pairs.start[i].key);
		if (target_name_is_valid(k))
			keys[nk++] = (struct name_at){ k, i };
	}
	qsort(keys, nk, sizeof(*keys), cmp_name);
	for (size_t j = 1, run = 0; j < nk; j++) {
		if (strcmp(yf_sval(keys[j].k), yf_sval(keys[run].k)))
			run = j;
		else
			first[keys[j].i] = keys[run].k;
	}
	free(keys);
	return first;
}

/* targets: NAME: {...}, ... into out. */
static void parse_targets(struct pctx *p, const yaml_node_t *n, struct probe_targets *out)
{
	size_t count = (size_t)(n->data.mapping.pairs.top - n->data.mapping.pairs.start), i = 0;
	const yaml_node_t **first = find_repeats(p, n, count), *k, *v;
	char eb[YF_ESC_SIZE];
	if (!count)
		perr(p, &n->start_mark, "targets is empty");
	out->t = xcalloc(count ? count : 1, sizeof(*out->t));
	YF_FOR_PAIRS(&p->c, n, k, v) {
		if (!target_name_is_valid(k)) {
			if (k->type != YAML_SCALAR_NODE)
				perr(p, &k->start_mark, "a target name must be a string, not %s", yf_type_name(k));
			else
				perr(p, &k->start_mark, "target name \"%s\" is not [A-Za-z0-9_.-]+ of at most %d bytes",
				     yf_esc(eb, yf_sval(k), yf_slen(k)), PROBE_NAME_MAX);
		} else if (first[i]) {
			perr(p, &k->start_mark, "duplicate target \"%s\" (first at line %zu, column %zu)",
			     yf_sval(k), first[i]->start_mark.line + 1, first[i]->start_mark.column + 1);
		} else {
			struct probe_target *t = &out->t[out->n++];
			t->name = yf_dup_scalar(k);
			parse_target(p, k, v, t);
		}
		i++;
	}
	free(first);
}

static void parse_root(struct pctx *p, const yaml_node_t *root, struct probe_targets *out)
{
	const yaml_node_t *k, *v, *targets = NULL;
	char eb[YF_ESC_SIZE];
	if (!root || yf_is_null(root)) {
		perr(p, NULL, "no targets (expected \"targets:\" with NAME: {slurmctld_url: URL} under it)");
		return;
	}
	if (root->type != YAML_MAPPING_NODE) {
		perr(p, &root->start_mark, "the targets file must be a mapping, not %s", yf_type_name(root));
		return;
	}
	YF_FOR_PAIRS(&p->c, root, k, v) { /* in file order, so the problems are listed in it */
		if (!yf_scalar_is_equal(k, "targets")) {
			perr(p, &k->start_mark, "unknown key \"%s\" (expected targets)",
			     k->type == YAML_SCALAR_NODE ? yf_esc(eb, yf_sval(k), yf_slen(k)) : yf_type_name(k));
		} else if (targets) {
			perr(p, &k->start_mark, "duplicate key \"targets\"");
		} else {
			targets = v;
			if (v->type != YAML_MAPPING_NODE)
				perr(p, &v->start_mark, "targets must be a mapping of target names, not %s", yf_type_name(v));
			else
				parse_targets(p, v, out);
		}
	}
	if (!targets)
		perr(p, &root->start_mark, "no \"targets\" key");
}

/* Parse buf (len bytes) into out: the YAML layer's problems are added, the walk's are too. */
static void parse_text(struct pctx *p, const char *buf, size_t len, struct probe_targets *out)
{
	yaml_parser_t parser;
	yaml_document_t doc, doc2;
	int doc_init = 0;
	if (yf_check_bounds(&p->c, buf, len) < 0) {
		note(p);
		return;
	}
	if (!yaml_parser_initialize(&parser)) {
		perr(p, NULL, "out of memory");
		return;
	}
	yaml_parser_set_input_string(&parser, (const unsigned char *)buf, len);
	if (!yaml_parser_load(&parser, &doc)) { /* libyaml frees a partial document itself */
		yf_parser_fail(&p->c, &parser, buf, len);
		note(p);
		goto out;
	}
	doc_init = 1;
	p->c.doc = &doc;
	const yaml_node_t *root = yaml_document_get_root_node(&doc);
	if (root) {
		if (!yaml_parser_load(&parser, &doc2)) {
			yf_parser_fail(&p->c, &parser, buf, len);
			note(p);
			goto out;
		}
		const yaml_node_t *root2 = yaml_document_get_root_node(&doc2);
		if (root2)
			perr(p, &root2->start_mark, "multiple YAML documents are not supported");
		yaml_document_delete(&doc2);
		if (root2)
			goto out;
	}
	parse_root(p, root, out);
out:
	if (doc_init)
		yaml_document_delete(&doc);
	yaml_parser_delete(&parser);
}

struct probe_targets *probe_targets_load(const char *path, struct buf *problems)
{
	struct pctx p = { .c = { .path = path }, .problems = problems };
	struct probe_targets *out = xcalloc(1, sizeof(*out));
	struct file_text file;
	char why[128];
	p.c.err = p.msg;
	p.c.errlen = sizeof(p.msg);
	if (file_read(path, YF_MAX_FILE, 0, &file, why, sizeof(why)) < 0)
		perr(&p, NULL, "cannot read the targets file: %s", why);
	else
		parse_text(&p, file.data, file.len, out);
	file_text_free(&file);
	if (p.nerr > PROBE_MAX_ERRORS)
		buf_printf(problems, "%s: %zu more problems\n", path, p.nerr - PROBE_MAX_ERRORS);
	if (p.nerr) {
		probe_targets_free(out);
		out = NULL;
	}
	return out;
}

void probe_targets_free(struct probe_targets *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->n; i++) {
		struct probe_target *x = &t->t[i];
		free(x->name);
		free(x->slurmctld_url);
		free(x->token_file);
		free(x->user);
		free(x->mapping);
		free(x->rest_url);
		free(x->rest_token_file);
		free(x->rest_user);
	}
	free(t->t);
	free(t);
}

/* --- the scrapers ------------------------------------------------------------------------------ */

struct probe_set {
	struct probe_targets *targets;
	const char *default_mapping;
	struct scraper **scraper;  /* one per target, each with its upstreams' runtime state (clusters
				      may run different slurmrestd versions) */
};

/* Target t's mapping, or NULL with its problems logged. */
static struct mapping *target_mapping(const struct probe_set *ps, const struct probe_target *t)
{
	const char *path = t->mapping ? t->mapping : ps->default_mapping;
	struct buf problems;
	buf_init(&problems, 0);
	struct mapping *m = mapping_load(path, &problems);
	if (!m) {
		char prefix[PROBE_NAME_MAX + 32];
		snprintf(prefix, sizeof(prefix), "target %s: mapping: ", t->name);
		log_error_lines(prefix, problems.data, problems.len);
	}
	buf_free(&problems);
	return m;
}

struct probe_set *probe_set_new(struct probe_targets *targets, const struct scraper_config *base,
				const char *default_mapping)
{
	struct probe_set *ps = xcalloc(1, sizeof(*ps));
	size_t n = targets->n ? targets->n : 1;
	ps->targets = targets;
	ps->default_mapping = default_mapping;
	ps->scraper = xcalloc(n, sizeof(*ps->scraper));
	for (size_t i = 0; i < targets->n; i++) {
		const struct probe_target *t = &targets->t[i];
		struct mapping *m = target_mapping(ps, t);
		if (!m) {
			log_error("cannot start: the mapping of target %s is not valid", t->name);
			probe_set_free(ps);
			return NULL;
		}
		struct scraper_config sc = *base;
		struct upstream_config *ctl = &sc.upstream[UPSTREAM_SLURMCTLD], *rest = &sc.upstream[UPSTREAM_SLURMRESTD];
		sc.replay_dir = NULL;
		ctl->base_url = t->slurmctld_url;
		ctl->token_file = t->token_file;
		ctl->user = t->user;
		rest->base_url = t->rest_url;
		rest->token_file = t->rest_token_file;
		rest->user = t->rest_user;
		ps->scraper[i] = scraper_new(&sc, m);
		char ctld_shown[CRED_SHOWN_MAX], rest_shown[CRED_SHOWN_MAX];
		log_info("probe target %s: slurmctld %s, slurmrestd %s, %zu rows", t->name,
			 cred_url_shown(ctld_shown, sizeof(ctld_shown), t->slurmctld_url),
			 t->rest_url ? cred_url_shown(rest_shown, sizeof(rest_shown), t->rest_url) : "not used", m->nrows);
	}
	return ps;
}

void probe_set_free(struct probe_set *ps)
{
	if (!ps)
		return;
	for (size_t i = 0; i < ps->targets->n; i++)
		scraper_free(ps->scraper[i]); /* before the strings it borrows */
	free(ps->scraper);
	probe_targets_free(ps->targets);
	free(ps);
}

struct scraper *probe_set_find(const struct probe_set *ps, const char *name, size_t len)
{
	for (size_t i = 0; ps && name && i < ps->targets->n; i++)
		if (strlen(ps->targets->t[i].name) == len && !memcmp(ps->targets->t[i].name, name, len))
			return ps->scraper[i];
	return NULL;
}

void probe_set_reload(struct probe_set *ps)
{
	for (size_t i = 0; ps && i < ps->targets->n; i++) {
		const struct probe_target *t = &ps->targets->t[i];
		struct mapping *m = target_mapping(ps, t);
		if (m)
			log_info("target %s: mapping reloaded: %zu rows", t->name, m->nrows);
		else
			log_error("target %s: mapping reload failed; keeping the running table", t->name);
		scraper_set_mapping(ps->scraper[i], m);
	}
}

size_t probe_set_count(const struct probe_set *ps)
{
	return ps ? ps->targets->n : 0;
}

const char *probe_set_name(const struct probe_set *ps, size_t i)
{
	return ps->targets->t[i].name;
}
