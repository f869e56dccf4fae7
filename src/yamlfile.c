/* yamlfile.c: see yamlfile.h. */
#include "yamlfile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
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
			if (yf_scalar_eq(n, yes[i])) {
				*out = 1;
				return 0;
			}
			if (yf_scalar_eq(n, no[i])) {
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
		if (yf_scalar_eq(n, names[i]))
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


/* --- files ------------------------------------------------------------------------------------- */

/* Read at most YF_MAX_FILE bytes of path into a NUL-terminated buffer. Returns 0 or an errno value
 * (EFBIG: larger than the limit). Growing copies and wipes, so secrets do not linger in freed
 * memory. */
int yf_read_bounded(const char *path, char **out, size_t *outlen)
{
	char *buf = NULL, *nbuf;
	size_t len = 0, cap = 0;
	struct stat st;
	ssize_t r;
	int fd, e = 0;

	*out = NULL;
	*outlen = 0;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return errno;
	if (fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
		e = EISDIR;
		goto out;
	}
	for (;;) {
		if (cap - len < 2) {
			size_t ncap = cap ? cap * 2 : 8192;
			if (ncap > YF_MAX_FILE + 2)
				ncap = YF_MAX_FILE + 2;
			nbuf = xmalloc(ncap);
			if (buf)
				memcpy(nbuf, buf, len);
			free_secret(buf, cap);
			buf = nbuf;
			cap = ncap;
		}
		r = read(fd, buf + len, cap - len - 1);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			e = errno;
			goto out;
		}
		if (r == 0)
			break;
		len += (size_t)r;
		if (len > YF_MAX_FILE) {
			e = EFBIG;
			goto out;
		}
	}
	buf[len] = '\0'; /* buf was allocated before the first read */
	*out = buf;
	*outlen = len;
	buf = NULL;
out:
	free_secret(buf, cap);
	close(fd);
	return e;
}

const char *yf_errstr(int e, char *buf, size_t n)
{
	if (e == EFBIG)
		return "file is larger than 1 MiB";
	return strerror_r(e, buf, n);
}

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

/* libyaml's scanner is quadratic in flow nesting depth (docs/performance.md), so
 * before composing the document, stream its events and stop at the first node nested deeper than
 * any valid web config needs. Returns -1 (error set) when too deep or out of memory; syntax
 * errors are left for yaml_parser_load to report. */
int yf_check_depth(struct yf_ctx *c, const char *buf, size_t len)
{
	yaml_parser_t p;
	yaml_event_t ev;
	int depth = 0, rc = 0, done = 0;

	if (!yaml_parser_initialize(&p))
		return yf_fail_nopos(c, "out of memory");
	yaml_parser_set_input_string(&p, (const unsigned char *)buf, len);
	while (!done && yaml_parser_parse(&p, &ev)) {
		if (ev.type == YAML_SEQUENCE_START_EVENT || ev.type == YAML_MAPPING_START_EVENT) {
			if (++depth > YF_MAX_DEPTH) {
				rc = yf_fail_at(c, ev.start_mark, "YAML nesting is deeper than %d levels", YF_MAX_DEPTH);
				done = 1;
			}
		} else if (ev.type == YAML_SEQUENCE_END_EVENT || ev.type == YAML_MAPPING_END_EVENT) {
			depth--;
		} else if (ev.type == YAML_STREAM_END_EVENT) {
			done = 1;
		}
		yaml_event_delete(&ev);
	}
	if (!done && p.error == YAML_MEMORY_ERROR)
		rc = yf_fail_nopos(c, "out of memory while parsing YAML");
	yaml_parser_delete(&p);
	return rc;
}
