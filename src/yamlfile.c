/* yamlfile.c: see yamlfile.h. */
#include "yamlfile.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "xmalloc.h"

/* --- errors ------------------------------------------------------------------------------------ */

/* Make the message one printable line (paths and escapes could carry control bytes). */
static void one_line(char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || (unsigned char)*s == 0x7f)
			*s = '?';
}

static void vset_err(struct yf_ctx *c, const yaml_mark_t *m, const char *fmt, va_list ap)
	__attribute__((format(printf, 3, 0)));
static void vset_err(struct yf_ctx *c, const yaml_mark_t *m, const char *fmt, va_list ap)
{
	int n;

	if (!c->err || c->errlen == 0)
		return;
	if (m)
		n = snprintf(c->err, c->errlen, "%s:%zu:%zu: ", c->path, m->line + 1, m->column + 1);
	else
		n = snprintf(c->err, c->errlen, "%s: ", c->path);
	if (n >= 0 && (size_t)n < c->errlen)
		vsnprintf(c->err + n, c->errlen - (size_t)n, fmt, ap);
	one_line(c->err);
}

int yf_fail_at(struct yf_ctx *c, yaml_mark_t m, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vset_err(c, &m, fmt, ap);
	va_end(ap);
	return -1;
}

int yf_fail_nopos(struct yf_ctx *c, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vset_err(c, NULL, fmt, ap);
	va_end(ap);
	return -1;
}

/* Printable, truncated copy of [s, s+n) for quoting in messages: `"`, `\` and non-ASCII or control
 * bytes are escaped, input beyond 64 bytes becomes "...". Returns buf. */
const char *yf_esc(char buf[YF_ESC_SIZE], const char *s, size_t n)
{
	size_t o = 0, i;

	for (i = 0; i < n && i < 64; i++) {
		unsigned char ch = (unsigned char)s[i];
		if (ch == '"' || ch == '\\') {
			buf[o++] = '\\';
			buf[o++] = (char)ch;
		} else if (ch < 0x20 || ch >= 0x7f) {
			o += (size_t)snprintf(buf + o, YF_ESC_SIZE - o, "\\x%02x", ch);
		} else {
			buf[o++] = (char)ch;
		}
	}
	if (i < n) {
		memcpy(buf + o, "...", 3);
		o += 3;
	}
	buf[o] = '\0';
	return buf;
}

const char *yf_type_name(const yaml_node_t *n)
{
	switch (n->type) {
	case YAML_MAPPING_NODE: return "a mapping";
	case YAML_SEQUENCE_NODE: return "a sequence";
	case YAML_SCALAR_NODE: return "a scalar";
	default: return "an empty node";
	}
}

char *yf_dup_scalar(const yaml_node_t *n)
{
	return xstrndup(yf_sval(n), yf_slen(n)); /* keys and hashes hold no NUL (checked before) */
}

/* Decode a string field. Null leaves *out NULL; so does an empty string when empty_is_unset (Go's
 * zero value means "not configured"). */
int yf_get_string(struct yf_ctx *c, const yaml_node_t *n, const char *what, int empty_is_unset,
		      char **out)
{
	*out = NULL;
	if (n->type != YAML_SCALAR_NODE)
		return yf_fail_at(c, n->start_mark, "%s must be a string, not %s", what, yf_type_name(n));
	if (yf_is_null(n) || (empty_is_unset && yf_slen(n) == 0))
		return 0;
	if (memchr(yf_sval(n), '\0', yf_slen(n)))
		return yf_fail_at(c, n->start_mark, "%s contains a NUL character", what);
	*out = yf_dup_scalar(n);
	return 0;
}

/* YAML 1.1 booleans, as go-yaml v2 resolves plain scalars for a bool field. */
int yf_get_bool(struct yf_ctx *c, const yaml_node_t *n, const char *what, int *out)
{
	static const char *const yes[] = { "y", "Y", "yes", "Yes", "YES", "on", "On", "ON",
					   "true", "True", "TRUE" };
	static const char *const no[] = { "n", "N", "no", "No", "NO", "off", "Off", "OFF",
					  "false", "False", "FALSE" };
	char eb[YF_ESC_SIZE];
	size_t i;

	if (n->type != YAML_SCALAR_NODE)
		return yf_fail_at(c, n->start_mark, "%s must be a boolean, not %s", what, yf_type_name(n));
	if (yf_is_null(n))
		return 0;
	if (n->data.scalar.style == YAML_PLAIN_SCALAR_STYLE) {
		for (i = 0; i < sizeof yes / sizeof yes[0]; i++) {
			if (yf_scalar_is_equal(n, yes[i])) {
				*out = 1;
				return 0;
			}
			if (yf_scalar_is_equal(n, no[i])) {
				*out = 0;
				return 0;
			}
		}
	}
	return yf_fail_at(c, n->start_mark, "%s must be a boolean (true or false), not \"%s\"", what,
		       yf_esc(eb, yf_sval(n), yf_slen(n)));
}

/* Index of scalar n in names[0..count), or -1. */
int yf_lookup(const yaml_node_t *n, const char *const *names, size_t count)
{
	size_t i;

	for (i = 0; i < count; i++)
		if (yf_scalar_is_equal(n, names[i]))
			return (int)i;
	return -1;
}

static int cmp_key(const void *a, const void *b)
{
	const yaml_node_t *x = *(const yaml_node_t *const *)a;
	const yaml_node_t *y = *(const yaml_node_t *const *)b;
	size_t l = yf_slen(x) < yf_slen(y) ? yf_slen(x) : yf_slen(y);
	int r = memcmp(yf_sval(x), yf_sval(y), l);

	if (r)
		return r;
	if (yf_slen(x) != yf_slen(y))
		return yf_slen(x) < yf_slen(y) ? -1 : 1;
	return x->start_mark.index < y->start_mark.index ? -1 : x->start_mark.index > y->start_mark.index;
}

/* Every key of mapping n must be a scalar without NUL bytes and appear once; a duplicate is
 * reported at its first repetition in the file. what names the mapping for messages. */
int yf_check_mapping(struct yf_ctx *c, const yaml_node_t *n, const char *what)
{
	const yaml_node_t **keys = NULL;
	const yaml_node_t *dup = NULL;
	size_t count = (size_t)(n->data.mapping.pairs.top - n->data.mapping.pairs.start), i;
	char eb[YF_ESC_SIZE];
	int rc = -1;

	for (i = 0; i < count; i++) {
		const yaml_node_t *k = yf_node(c, n->data.mapping.pairs.start[i].key);
		if (k->type != YAML_SCALAR_NODE) {
			yf_fail_at(c, k->start_mark, "keys in %s must be strings, not %s", what, yf_type_name(k));
			goto out;
		}
		if (memchr(yf_sval(k), '\0', yf_slen(k))) {
			yf_fail_at(c, k->start_mark, "key in %s contains a NUL character", what);
			goto out;
		}
	}
	if (count < 2) {
		rc = 0;
		goto out;
	}
	keys = xmalloc(count * sizeof *keys);
	for (i = 0; i < count; i++)
		keys[i] = yf_node(c, n->data.mapping.pairs.start[i].key);
	qsort(keys, count, sizeof *keys, cmp_key);
	for (i = 1; i < count; i++) {
		/* keys[i] is the second occurrence of a run when keys[i-1] starts that run. */
		if (yf_slen(keys[i]) != yf_slen(keys[i - 1]) ||
		    memcmp(yf_sval(keys[i]), yf_sval(keys[i - 1]), yf_slen(keys[i])) != 0)
			continue;
		if (i >= 2 && yf_slen(keys[i - 2]) == yf_slen(keys[i]) &&
		    memcmp(yf_sval(keys[i - 2]), yf_sval(keys[i]), yf_slen(keys[i])) == 0)
			continue;
		if (!dup || keys[i]->start_mark.index < dup->start_mark.index)
			dup = keys[i];
	}
	if (dup) {
		yf_fail_at(c, dup->start_mark, "duplicate key \"%s\" in %s", yf_esc(eb, yf_sval(dup), yf_slen(dup)),
			what);
		goto out;
	}
	rc = 0;
out:
	free(keys);
	return rc;
}

/* A mapping with sane keys (*present 1), or null, absent (*present 0): 0; else -1. */
int yf_get_mapping(struct yf_ctx *c, const yaml_node_t *n, const char *what, int *present)
{
	*present = 0;
	if (yf_is_null(n))
		return 0;
	if (n->type != YAML_MAPPING_NODE)
		return yf_fail_at(c, n->start_mark, "%s must be a mapping, not %s", what, yf_type_name(n));
	*present = 1;
	return yf_check_mapping(c, n, what);
}


/* --- the parser ------------------------------------------------------------------------------ */

void yf_parser_fail(struct yf_ctx *c, const yaml_parser_t *p, const char *buf, size_t len)
{
	yaml_mark_t m = p->problem_mark;
	const char *problem = p->problem ? p->problem : "unknown error";
	size_t i;

	switch (p->error) {
	case YAML_MEMORY_ERROR:
		yf_fail_nopos(c, "out of memory while parsing YAML");
		return;
	case YAML_READER_ERROR:
		/* Reader errors carry a byte offset only: derive line and (byte) column from it. */
		memset(&m, 0, sizeof m);
		for (i = 0; i < p->problem_offset && i < len; i++) {
			if (buf[i] == '\n') {
				m.line++;
				m.column = 0;
			} else {
				m.column++;
			}
		}
		yf_fail_at(c, m, "invalid YAML input: %s", problem);
		return;
	default:
		if (p->context)
			yf_fail_at(c, m, "YAML syntax error: %s (%s started at line %zu, column %zu)", problem,
				p->context, p->context_mark.line + 1, p->context_mark.column + 1);
		else
			yf_fail_at(c, m, "YAML syntax error: %s", problem);
		return;
	}
}

/* --- bounds ------------------------------------------------------------------------------------ */

/* Before a document is composed, its events are streamed once and checked against bounds no web
 * config or targets file comes near:
 *  - nesting: libyaml's scanner is quadratic in flow nesting depth (a 1 MiB line of '[' takes an
 *    hour);
 *  - anchors and aliases: libyaml's composer looks every alias up, and every new anchor, in a list
 *    of the anchors so far (quadratic in their count);
 *  - what aliases expand to: a node is stored once whatever the number of aliases to it, but every
 *    walk of the document (probe.c's join of a URL sequence) visits it once per alias, so a few
 *    KiB of nested aliases ("billion laughs") are gigabytes once walked. The expanded size of the
 *    document counts one per node plus its scalar's bytes, each alias as the whole node it names;
 *    a document without aliases counts at most about 1.5 times its bytes.
 * The first bound passed is the error, at the event that passes it. */
#define YF_MAX_ANCHORS 1024
#define YF_MAX_ALIASES 16384
#define YF_MAX_EXPANDED ((size_t)4 * YF_MAX_FILE)
#define ANCHOR_SLOTS (2 * YF_MAX_ANCHORS) /* open addressing, at most half full */
#define SIZE_OPEN SIZE_MAX                /* an anchored node not ended yet */

struct anchor {
	char *name;      /* NULL: a free slot */
	size_t size;     /* its node's expanded size, or SIZE_OPEN */
};

struct bounds {
	struct anchor slot[ANCHOR_SLOTS];
	size_t nanchors, naliases;
	size_t total;                     /* the expanded size so far */
	struct { size_t start; struct anchor *a; } open[YF_MAX_DEPTH + 1]; /* the containers not ended */
	int depth;
};

static struct anchor *anchor_slot(struct bounds *b, const char *name)
{
	uint32_t h = 2166136261u; /* FNV-1a */
	for (const unsigned char *p = (const unsigned char *)name; *p; p++)
		h = (h ^ *p) * 16777619u;
	for (size_t i = h % ANCHOR_SLOTS;; i = (i + 1) % ANCHOR_SLOTS)
		if (!b->slot[i].name || !strcmp(b->slot[i].name, name))
			return &b->slot[i];
}

/* Node ev (a scalar or a container's start) is anchored: its slot, or NULL when one too many. */
static struct anchor *anchor_new(struct yf_ctx *c, struct bounds *b, const yaml_event_t *ev, const yaml_char_t *name)
{
	struct anchor *a = anchor_slot(b, (const char *)name);
	if (!a->name) { /* a repeated anchor is libyaml's to refuse */
		if (++b->nanchors > YF_MAX_ANCHORS) {
			yf_fail_at(c, ev->start_mark, "more than %d YAML anchors", YF_MAX_ANCHORS);
			return NULL;
		}
		a->name = xstrdup((const char *)name);
	}
	a->size = SIZE_OPEN;
	return a;
}

/* Add n to the expanded size: 0, or -1 (error set at ev) past the bound. */
static int expand(struct yf_ctx *c, struct bounds *b, const yaml_event_t *ev, size_t n)
{
	if (n > YF_MAX_EXPANDED - b->total)
		return yf_fail_at(c, ev->start_mark, "YAML aliases expand the document to more than %zu bytes",
				  YF_MAX_EXPANDED);
	b->total += n;
	return 0;
}

/* One event. 0, or -1 with the error set. */
static int bound_event(struct yf_ctx *c, struct bounds *b, const yaml_event_t *ev)
{
	const yaml_char_t *anchor = NULL;
	struct anchor *a;
	char eb[YF_ESC_SIZE];
	switch (ev->type) {
	case YAML_SCALAR_EVENT:
		if (expand(c, b, ev, 1 + ev->data.scalar.length) < 0)
			return -1;
		if (ev->data.scalar.anchor) {
			if (!(a = anchor_new(c, b, ev, ev->data.scalar.anchor)))
				return -1;
			a->size = 1 + ev->data.scalar.length;
		}
		return 0;
	case YAML_SEQUENCE_START_EVENT:
	case YAML_MAPPING_START_EVENT:
		anchor = ev->type == YAML_SEQUENCE_START_EVENT ? ev->data.sequence_start.anchor
								: ev->data.mapping_start.anchor;
		if (b->depth == YF_MAX_DEPTH)
			return yf_fail_at(c, ev->start_mark, "YAML nesting is deeper than %d levels", YF_MAX_DEPTH);
		a = NULL;
		if (anchor && !(a = anchor_new(c, b, ev, anchor)))
			return -1;
		b->open[b->depth].start = b->total;
		b->open[b->depth++].a = a;
		return expand(c, b, ev, 1);
	case YAML_SEQUENCE_END_EVENT:
	case YAML_MAPPING_END_EVENT:
		if (b->depth > 0 && (a = b->open[--b->depth].a) != NULL)
			a->size = b->total - b->open[b->depth].start;
		return 0;
	case YAML_ALIAS_EVENT:
		if (++b->naliases > YF_MAX_ALIASES)
			return yf_fail_at(c, ev->start_mark, "more than %d YAML aliases", YF_MAX_ALIASES);
		a = anchor_slot(b, (const char *)ev->data.alias.anchor);
		if (!a->name)
			return 0; /* an undefined alias: libyaml says so, with its position */
		if (a->size == SIZE_OPEN)
			return yf_fail_at(c, ev->start_mark, "YAML alias *%s is inside the node it names",
					  yf_esc(eb, (const char *)ev->data.alias.anchor,
						 strlen((const char *)ev->data.alias.anchor)));
		return expand(c, b, ev, a->size);
	default:
		return 0;
	}
}

int yf_check_bounds(struct yf_ctx *c, const char *buf, size_t len)
{
	struct bounds *b = xcalloc(1, sizeof(*b));
	yaml_parser_t p;
	yaml_event_t ev;
	int rc = 0, done = 0;

	if (!yaml_parser_initialize(&p)) {
		free(b);
		return yf_fail_nopos(c, "out of memory");
	}
	yaml_parser_set_input_string(&p, (const unsigned char *)buf, len);
	while (!done && yaml_parser_parse(&p, &ev)) {
		if (bound_event(c, b, &ev) < 0)
			rc = -1;
		done = rc < 0 || ev.type == YAML_STREAM_END_EVENT;
		yaml_event_delete(&ev);
	}
	if (!done && p.error == YAML_MEMORY_ERROR)
		rc = yf_fail_nopos(c, "out of memory while parsing YAML");
	yaml_parser_delete(&p);
	for (size_t i = 0; i < ANCHOR_SLOTS; i++)
		free(b->slot[i].name);
	free(b);
	return rc;
}
