/* expo.c: see expo.h for the grammar and the label value rule. */
#include "expo.h"
#include "names.h"
#include "utf8.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_LABELS 64

/* Where a parse stands: private to this file, so that only the parser moves it. Allocated by the
 * first parse (or expo_init_keep), freed by expo_free and expo_drop_keep. */
struct expo_parse {
	expo_keep_fn keep;        /* NULL: keep every family */
	void *keep_ctx;
	const char *skip_name;    /* the family of the previous line, when it was not kept */
	size_t skip_len;
	size_t cur;               /* index + 1 of the family of the previous kept sample line */
	size_t twin;              /* index + 1 of the family kept before that one */
	struct {                  /* where the input stands (expo_feed keeps it between chunks) */
		int copy;         /* names and values must be copied: the bytes are not kept */
		int eof_seen;
		int too_long;     /* discarding a line longer than EXPO_MAX_LINE */
		size_t line;
		char *part;       /* the unfinished last line */
		size_t plen, pcap;
		char *skip;       /* copy of skip_name */
		size_t skipcap;
	} in;
};

void expo_init(struct expo *e)
{
	memset(e, 0, sizeof(*e));
	arena_init(&e->arena);
}

void expo_init_keep(struct expo *e, expo_keep_fn keep, void *ctx)
{
	expo_init(e);
	if (!keep)
		return;
	e->ps = xcalloc(1, sizeof(*e->ps));
	e->ps->keep = keep;
	e->ps->keep_ctx = ctx;
}

static struct expo_parse *parse_state(struct expo *e)
{
	if (!e->ps)
		e->ps = xcalloc(1, sizeof(*e->ps));
	return e->ps;
}

static void parse_state_free(struct expo *e)
{
	if (!e->ps)
		return;
	free(e->ps->in.part);
	free(e->ps->in.skip);
	free(e->ps);
	e->ps = NULL;
}

void expo_free(struct expo *e)
{
	for (size_t i = 0; i < e->nfams; i++)
		free(e->fams[i].samples);
	free(e->fams);
	hmap_free(&e->fidx);
	parse_state_free(e);
	arena_reset(&e->arena);
	memset(e, 0, sizeof(*e));
}

void expo_reset(struct expo *e)
{
	expo_keep_fn keep = e->ps ? e->ps->keep : NULL;
	void *ctx = e->ps ? e->ps->keep_ctx : NULL;
	expo_free(e);
	expo_init_keep(e, keep, ctx);
}

void expo_drop_keep(struct expo *e)
{
	parse_state_free(e);
}

size_t expo_pending(const struct expo *e)
{
	return e->ps ? e->ps->in.pcap : 0;
}

const struct expo_family *expo_find(const struct expo *e, const char *name, size_t nlen)
{
	struct hmap_iter it = hmap_iter(&e->fidx, hmap_hash(name, nlen));
	for (size_t i; (i = hmap_next(&it)) != HMAP_NONE;) {
		const struct expo_family *f = &e->fams[i];
		if (slice_is_equal(f->name, f->nlen, name, nlen))
			return f;
	}
	return NULL;
}

static struct expo_family *family_get(struct expo *e, const char *name, size_t nlen)
{
	struct expo_family *f = (struct expo_family *)expo_find(e, name, nlen);
	if (f)
		return f;
	e->fams = xgrow(e->fams, &e->capfams, e->nfams + 1, sizeof(*e->fams));
	f = &e->fams[e->nfams++];
	memset(f, 0, sizeof(*f));
	f->name = e->ps && e->ps->in.copy ? arena_strndup(&e->arena, name, nlen) : name; /* expo_add copies first */
	f->nlen = (uint32_t)nlen;
	hmap_put(&e->fidx, hmap_hash(name, nlen), e->nfams - 1);
	return f;
}

static void add_error(struct expo *e, size_t line, const char *reason)
{
	if (e->nerrors < EXPO_MAX_ERRORS) {
		e->errors[e->nerrors].line = line;
		snprintf(e->errors[e->nerrors].reason, sizeof(e->errors[0].reason), "%s", reason);
	}
	e->nerrors++;
}

void expo_add_error(struct expo *e, size_t at, const char *reason)
{
	add_error(e, at, reason);
}

static const char *skip_ws(const char *p, const char *end)
{
	while (p < end && (*p == ' ' || *p == '\t'))
		p++;
	return p;
}

/* Parse a float token. Integers take a fast exact path; the rest must look like a decimal float
 * or be one of NaN, +Inf, -Inf, Inf (any case). Hex floats and "infinity" are refused. */
int expo_parse_value(const char *s, size_t n, double *out);
int expo_parse_value(const char *s, size_t n, double *out)
{
	size_t i = 0;
	int neg = 0;
	if (n == 0 || n > 64)
		return -1;
	if (s[0] == '-' || s[0] == '+') {
		neg = s[0] == '-';
		i = 1;
	}
	if (i < n && n - i <= 18) {
		uint64_t v = 0;
		size_t j = i;
		while (j < n && s[j] >= '0' && s[j] <= '9')
			v = v * 10 + (uint64_t)(s[j++] - '0');
		if (j == n && j > i) {
			*out = neg ? -(double)v : (double)v;
			return 0;
		}
	}
	char tmp[65];
	memcpy(tmp, s, n);
	tmp[n] = '\0';
	const char *w = tmp + i;
	if (strcasecmp(w, "nan") == 0 && i == 0) {
		*out = NAN;
		return 0;
	}
	if (strcasecmp(w, "inf") == 0) {
		*out = neg ? -INFINITY : INFINITY;
		return 0;
	}
	int digits = 0;
	for (size_t k = i; k < n; k++) {
		char c = tmp[k];
		if (c >= '0' && c <= '9')
			digits = 1;
		else if (c != '.' && c != 'e' && c != 'E' && c != '+' && c != '-')
			return -1;
	}
	if (!digits)
		return -1;
	char *endp;
	errno = 0;
	double v = strtod(tmp, &endp);
	if (*endp != '\0')
		return -1;
	/* a finite literal past the largest double (1e309) is refused, as Prometheus' parser does
	 * (Go's ParseFloat: +Inf with ErrRange); an underflow (1e-400) reads as 0 or a subnormal
	 * there without an error, and here too */
	if (errno == ERANGE && isinf(v))
		return -1;
	*out = v;
	return 0;
}

/* Where does a tolerant (verbatim) label value that starts at p end? At the first '"' followed by
 * '}' or by ',' + optional blanks + ('}' or a label name + blanks + '=' + blanks + '"'). */
static const char *tolerant_value_end(const char *p, const char *end)
{
	for (const char *q = p; q < end; q++) {
		q = memchr(q, '"', (size_t)(end - q));
		if (!q)
			return NULL;
		const char *r = skip_ws(q + 1, end);
		if (r < end && *r == '}')
			return q;
		if (r < end && *r == ',') {
			r = skip_ws(r + 1, end);
			if (r < end && *r == '}')
				return q;
			if (r < end && is_label_start(*r)) {
				while (r < end && is_label_char(*r))
					r++;
				r = skip_ws(r, end);
				if (r < end && *r == '=') {
					r = skip_ws(r + 1, end);
					if (r < end && *r == '"')
						return q;
				}
			}
		}
	}
	return NULL;
}

/* Strict value: ends at the first unescaped '"'; escapes \\ \" \n decoded into the arena. */
static const char *strict_value(struct expo *e, const char *p, const char *end, struct label *l,
				const char **err)
{
	const char *q = p;
	int escaped = 0;
	while (q < end && *q != '"') {
		if (*q == '\\') {
			if (q + 1 >= end || (q[1] != '\\' && q[1] != '"' && q[1] != 'n')) {
				*err = "invalid escape in label value";
				return NULL;
			}
			escaped = 1;
			q += 2;
		} else {
			q++;
		}
	}
	if (q >= end) {
		*err = "unterminated label value";
		return NULL;
	}
	if (!escaped) {
		l->value = p;
		l->vlen = (uint32_t)(q - p);
		return q;
	}
	char *d = arena_alloc(&e->arena, (size_t)(q - p));
	size_t n = 0;
	for (const char *s = p; s < q; s++) {
		if (*s == '\\') {
			s++;
			d[n++] = *s == 'n' ? '\n' : *s;
		} else {
			d[n++] = *s;
		}
	}
	l->value = d;
	l->vlen = (uint32_t)n;
	return q;
}

static const char *parse_labels(struct expo *e, const char *p, const char *end, int flags,
				struct label *ls, uint32_t *nls, const char **err)
{
	uint32_t n = 0;
	p++; /* '{' */
	for (;;) {
		p = skip_ws(p, end);
		if (p < end && *p == '}')
			break;
		if (p >= end || !is_label_start(*p)) {
			*err = "invalid label name";
			return NULL;
		}
		if (n == MAX_LABELS) {
			*err = "too many labels";
			return NULL;
		}
		struct label *l = &ls[n];
		l->name = p;
		while (p < end && is_label_char(*p))
			p++;
		l->nlen = (uint32_t)(p - l->name);
		p = skip_ws(p, end);
		if (p >= end || *p != '=') {
			*err = "expected '=' after label name";
			return NULL;
		}
		p = skip_ws(p + 1, end);
		if (p >= end || *p != '"') {
			*err = "expected '\"' to open label value";
			return NULL;
		}
		p++;
		const char *q;
		if (flags & EXPO_STRICT) {
			q = strict_value(e, p, end, l, err);
			if (!q)
				return NULL;
		} else {
			q = tolerant_value_end(p, end);
			if (!q) {
				*err = "unterminated label value";
				return NULL;
			}
			l->value = p;
			l->vlen = (uint32_t)(q - p);
		}
		for (uint32_t k = 0; k < n; k++)
			if (slice_is_equal(ls[k].name, ls[k].nlen, l->name, l->nlen)) {
				*err = "duplicate label name";
				return NULL;
			}
		n++;
		p = skip_ws(q + 1, end);
		if (p < end && *p == ',') {
			p++;
			continue;
		}
		if (p < end && *p == '}')
			break;
		*err = "expected ',' or '}' after label value";
		return NULL;
	}
	*nls = n;
	return p + 1;
}

/* In copy mode, bytes of the line being parsed [lo, hi) are copied to the arena before they are
 * stored; anything else (a shared name, a decoded value) is already the expo's. */
static const char *own(struct expo *e, const char *s, size_t n, const char *lo, const char *hi)
{
	if (!e->ps->in.copy || (uintptr_t)s - (uintptr_t)lo >= (uintptr_t)(hi - lo))
		return s;
	return n ? arena_strndup(&e->arena, s, n) : "";
}

/* Is a sample line of family name (again: the previous line's family) kept? A family the filter
 * refuses is remembered, so that its next lines are skipped without asking again; a kept one
 * becomes the current family. Returns 0 to skip the line. */
static int keep_sample_family(struct expo *e, const char *name, size_t nlen, int again)
{
	if (again && e->ps->skip_name)
		return 0; /* another line of the family just skipped */
	const struct expo_family *cur = e->ps->cur ? &e->fams[e->ps->cur - 1] : NULL;
	int same = again || (cur && slice_is_equal(cur->name, cur->nlen, name, nlen));
	if (e->ps->keep && !same) {
		if (e->ps->skip_name && slice_is_equal(e->ps->skip_name, e->ps->skip_len, name, nlen))
			return 0;
		if (!e->ps->keep(name, nlen, e->ps->keep_ctx)) {
			if (e->ps->in.copy) { /* the line goes away with its chunk */
				e->ps->in.skip = xgrow(e->ps->in.skip, &e->ps->in.skipcap, nlen ? nlen : 1, 1);
				memcpy(e->ps->in.skip, name, nlen);
				name = e->ps->in.skip;
			}
			e->ps->skip_name = name;
			e->ps->skip_len = nlen;
			return 0;
		}
	}
	e->ps->skip_name = NULL;

	/* samples of a family are contiguous in practice: skip the hash lookup then */
	if (!same) {
		size_t k = (size_t)(family_get(e, name, nlen) - e->fams);
		e->ps->twin = e->ps->cur;
		e->ps->cur = k + 1;
		if (!e->fams[k].n)
			e->fams[k].twin = e->ps->twin;
	}
	return 1;
}

/* Sample s (the newest of family f) takes its nls labels ls (the caller's scratch, sorted here):
 * names shared with the previous sample, the whole set shared with the same sample of the twin
 * family when equal, else copied out of the line into e's arena. */
static void store_labels(struct expo *e, const struct expo_family *f, struct expo_sample *s, struct label *ls,
			 uint32_t nls, const char *line, const char *end)
{
	labels_sort(ls, nls);
	/* samples of a family carry the same label names: share the previous sample's pointers
	 * so that label comparisons in evaluation are mostly pointer tests */
	if (f->n > 1) {
		const struct expo_sample *prev = &f->samples[f->n - 2];
		for (uint32_t k = 0; k < nls && k < prev->nlabels; k++)
			if (slice_is_equal(ls[k].name, ls[k].nlen, prev->labels[k].name, prev->labels[k].nlen))
				ls[k].name = prev->labels[k].name;
	}
	/* and families of one endpoint list the same series in the same order (one per node,
	 * user...): share the label set of the same position in the previous family, so that
	 * matching one family against another is mostly a pointer test too */
	const struct expo_family *t = e->ps->twin ? &e->fams[e->ps->twin - 1] : NULL;
	const struct expo_sample *ts = t && t->n >= f->n ? &t->samples[f->n - 1] : NULL;
	if (ts && labels_is_equal(ts->labels, ts->nlabels, ls, nls)) {
		s->labels = ts->labels;
		s->hash = ts->hash;
	} else {
		for (uint32_t k = 0; k < nls; k++) {
			e->invalid_utf8 += !utf8_is_clean(ls[k].value, ls[k].vlen);
			ls[k].name = own(e, ls[k].name, ls[k].nlen, line, end);
			ls[k].value = own(e, ls[k].value, ls[k].vlen, line, end);
		}
		s->labels = arena_alloc(&e->arena, nls * sizeof(*ls));
		memcpy(s->labels, ls, nls * sizeof(*ls));
	}
}

static int parse_sample(struct expo *e, const char *p, const char *end, int flags, const char **err)
{
	struct label ls[MAX_LABELS];
	uint32_t nls = 0;
	const char *const line = p;
	const char *name = p;
	/* lines of one family follow each other: try the previous line's name before scanning */
	const char *last = e->ps->skip_name ? e->ps->skip_name : e->ps->cur ? e->fams[e->ps->cur - 1].name : NULL;
	size_t llen = e->ps->skip_name ? e->ps->skip_len : e->ps->cur ? e->fams[e->ps->cur - 1].nlen : 0;
	int again = last && llen < (size_t)(end - p) && !is_name_char(p[llen]) && memcmp(p, last, llen) == 0;
	if (again)
		p += llen;
	else
		while (p < end && is_name_char(*p))
			p++;
	size_t nlen = (size_t)(p - name);
	if (!(flags & EXPO_STRICT)) {
		const char *q = skip_ws(p, end); /* tolerate "name {" */
		if (q < end && *q == '{')
			p = q;
	}
	if (p < end && *p == '{') {
		p = parse_labels(e, p, end, flags, ls, &nls, err);
		if (!p)
			return -1;
	}
	if (p >= end || (*p != ' ' && *p != '\t')) {
		*err = p >= end ? "missing value" : "unexpected character after metric name";
		return -1;
	}
	p = skip_ws(p, end);
	const char *v = p;
	while (p < end && *p != ' ' && *p != '\t')
		p++;
	double value;
	if (expo_parse_value(v, (size_t)(p - v), &value) < 0) {
		*err = "invalid sample value";
		return -1;
	}
	p = skip_ws(p, end);
	if (p < end && *p != '#') {
		const char *t = p;
		while (p < end && *p != ' ' && *p != '\t')
			p++;
		double ts;
		if (expo_parse_value(t, (size_t)(p - t), &ts) < 0 || isnan(ts) || isinf(ts)) {
			*err = "invalid timestamp";
			return -1;
		}
		p = skip_ws(p, end);
	}
	if (p < end && *p != '#') {
		*err = "unexpected text after sample";
		return -1;
	}
	/* a trailing "# {...} v" exemplar is accepted and ignored in tolerant mode */
	e->nnamed++;
	if (!keep_sample_family(e, name, nlen, again))
		return 0;
	struct expo_family *f = &e->fams[e->ps->cur - 1];
	f->samples = xgrow(f->samples, &f->cap, f->n + 1, sizeof(*f->samples));
	struct expo_sample *s = &f->samples[f->n++];
	s->nlabels = nls;
	s->value = value;
	s->labels = NULL;
	s->hash = 0;
	if (nls)
		store_labels(e, f, s, ls, nls, line, end);
	if (!s->hash)
		s->hash = labels_hash(s->labels, nls);
	e->nsamples++;
	return 0;
}

static enum expo_type parse_type(const char *s, size_t n)
{
	static const struct { const char *name; enum expo_type t; } types[] = {
		{ "gauge", EXPO_GAUGE }, { "counter", EXPO_COUNTER }, { "untyped", EXPO_UNTYPED },
		{ "unknown", EXPO_UNTYPED }, { "summary", EXPO_SUMMARY }, { "histogram", EXPO_HISTOGRAM },
		{ "gaugehistogram", EXPO_OTHER }, { "stateset", EXPO_OTHER }, { "info", EXPO_OTHER },
	};
	for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++)
		if (slice_is_equal(s, n, types[i].name, strlen(types[i].name)))
			return types[i].t;
	return (enum expo_type)-1;
}

/* "# TYPE name type" and "# HELP name text"; other comments are ignored. */
static int parse_comment(struct expo *e, const char *p, const char *end, const char **err)
{
	const char *const line = p;
	p = skip_ws(p + 1, end);
	int is_type = end - p > 5 && memcmp(p, "TYPE", 4) == 0 && (p[4] == ' ' || p[4] == '\t');
	int is_help = end - p > 5 && memcmp(p, "HELP", 4) == 0 && (p[4] == ' ' || p[4] == '\t');
	if (!is_type && !is_help)
		return 0;
	p = skip_ws(p + 4, end);
	const char *name = p;
	while (p < end && is_name_char(*p))
		p++;
	/* a name, not just name characters: "# TYPE 9x gauge" would reach the native passthrough's
	 * output, and Prometheus refuses a scrape for one such line */
	if (p == name || !is_name_start(*name) || (p < end && *p != ' ' && *p != '\t')) {
		*err = is_type ? "invalid metric name in TYPE" : "invalid metric name in HELP";
		return -1;
	}
	if (!is_type) {
		/* kept as the TYPE is (the native passthrough serves it); a family nobody reads has none */
		size_t nlen = (size_t)(p - name);
		const char *t = skip_ws(p, end);
		if (!e->ps->keep || e->ps->keep(name, nlen, e->ps->keep_ctx)) {
			struct expo_family *f = family_get(e, name, nlen);
			f->hlen = (uint32_t)(end - t);
			f->help = f->hlen ? own(e, t, f->hlen, line, end) : "";
		}
	} else {
		const char *t = skip_ws(p, end);
		const char *te = end;
		while (te > t && (te[-1] == ' ' || te[-1] == '\t'))
			te--;
		enum expo_type ty = parse_type(t, (size_t)(te - t));
		if ((int)ty < 0) {
			*err = "unknown metric type";
			return -1;
		}
		e->nnamed++;
		/* the TYPE of a family nobody reads is checked, never stored: a body of a million
		 * such lines must cost no more memory than an empty one */
		if (!e->ps->keep || e->ps->keep(name, (size_t)(p - name), e->ps->keep_ctx))
			family_get(e, name, (size_t)(p - name))->type = ty;
	}
	return 0;
}

/* Does f list exactly the label sets (the same arrays) of the first f->n samples of its twin,
 * checked before it and found without duplicates? Then it has none either. */
static int same_sets_as_twin(const struct expo *e, size_t k)
{
	const struct expo_family *f = &e->fams[k];
	if (!f->twin || f->twin - 1 >= k)
		return 0;
	const struct expo_family *t = &e->fams[f->twin - 1];
	if (t->duplicate || t->n < f->n)
		return 0;
	for (size_t i = 0; i < f->n; i++)
		if (f->samples[i].labels != t->samples[i].labels || f->samples[i].nlabels != t->samples[i].nlabels)
			return 0;
	return 1;
}

static void mark_duplicates(struct expo *e)
{
	struct hmap set = { 0 }; /* the family's samples by label set */
	for (size_t k = 0; k < e->nfams; k++) {
		struct expo_family *f = &e->fams[k];
		if (f->n < 2 || f->duplicate || same_sets_as_twin(e, k))
			continue;
		hmap_reset(&set, f->n);
		for (size_t i = 0; i < f->n && !f->duplicate; i++) {
			const struct expo_sample *s = &f->samples[i];
			struct hmap_iter it = hmap_iter(&set, s->hash);
			for (size_t j; (j = hmap_next(&it)) != HMAP_NONE;) {
				const struct expo_sample *o = &f->samples[j];
				if (labels_is_equal(o->labels, o->nlabels, s->labels, s->nlabels)) {
					f->duplicate = 1;
					break;
				}
			}
			if (!f->duplicate)
				hmap_put(&set, s->hash, i);
		}
	}
	hmap_free(&set);
}

/* One line [p, le), without its '\n' (has_nl 0: the body's last line has none). */
static void parse_line(struct expo *e, const char *p, const char *le, int has_nl, int flags)
{
	const char *err = NULL;
	size_t line = ++e->ps->in.line;
	if (le > p && le[-1] == '\r')
		le--;
	if (e->ps->in.copy && (size_t)(le - p) > EXPO_MAX_LINE) {
		add_error(e, line, "line longer than 1 MiB"); /* the same whatever the pieces were */
	} else if (e->ps->in.eof_seen) {
		if (le > p)
			add_error(e, line, "text after # EOF");
	} else if (!has_nl && (flags & EXPO_STRICT)) {
		add_error(e, line, "last line has no newline");
	} else if (le == p) {
		/* blank line */
	} else if (*p == '#') {
		if (le - p == 5 && memcmp(p, "# EOF", 5) == 0)
			e->ps->in.eof_seen = 1;
		else if (parse_comment(e, p, le, &err) < 0)
			add_error(e, line, err);
	} else if (!is_name_start(*p)) {
		add_error(e, line, "line does not start with a metric name");
	} else if (!has_nl && !(flags & EXPO_STRICT)) {
		/* a body cut mid-line: the last line may be truncated ("12" of "123"),
		 * so it is refused rather than risk a wrong value */
		add_error(e, line, "last line has no newline (truncated body?)");
	} else if (parse_sample(e, p, le, flags, &err) < 0) {
		add_error(e, line, err);
	}
}

/* Parse the complete lines of [p, end); returns where the unterminated rest begins. */
static const char *parse_lines(struct expo *e, const char *p, const char *end, int flags)
{
	const char *nl;
	while (p < end && (nl = memchr(p, '\n', (size_t)(end - p)))) {
		parse_line(e, p, nl, 1, flags);
		p = nl + 1;
	}
	return p;
}

static size_t finish(struct expo *e, size_t before)
{
	e->nlines += e->ps->in.line;
	e->ps->in.line = 0;
	e->ps->in.eof_seen = 0;
	e->ps->in.copy = 0;
	e->ps->cur = e->ps->twin = 0;
	e->ps->skip_name = NULL;
	mark_duplicates(e);
	return e->nerrors - before;
}

size_t expo_parse(struct expo *e, const char *body, size_t len, int flags)
{
	parse_state(e);
	size_t before = e->nerrors;
	const char *end = body + len, *rest = parse_lines(e, body, end, flags);
	if (rest < end)
		parse_line(e, rest, end, 0, flags);
	return finish(e, before);
}

void expo_feed(struct expo *e, const char *data, size_t n, int flags)
{
	parse_state(e);
	const char *end = data + n;
	e->ps->in.copy = 1;
	if (e->ps->in.plen || e->ps->in.too_long) {
		/* complete the held line first */
		const char *nl = memchr(data, '\n', n);
		size_t take = nl ? (size_t)(nl - data) : n;
		if (!e->ps->in.too_long && take > EXPO_MAX_LINE - e->ps->in.plen) {
			e->ps->in.too_long = 1;
			e->ps->in.plen = 0;
		}
		if (!e->ps->in.too_long) {
			e->ps->in.part = xgrow(e->ps->in.part, &e->ps->in.pcap, e->ps->in.plen + take, 1);
			memcpy(e->ps->in.part + e->ps->in.plen, data, take);
			e->ps->in.plen += take;
		}
		if (!nl)
			return;
		if (e->ps->in.too_long)
			add_error(e, ++e->ps->in.line, "line longer than 1 MiB");
		else
			parse_line(e, e->ps->in.part, e->ps->in.part + e->ps->in.plen, 1, flags);
		e->ps->in.too_long = 0;
		e->ps->in.plen = 0;
		data = nl + 1;
	}
	const char *rest = parse_lines(e, data, end, flags);
	size_t left = (size_t)(end - rest);
	if (left > EXPO_MAX_LINE) {
		e->ps->in.too_long = 1;
	} else if (left) {
		e->ps->in.part = xgrow(e->ps->in.part, &e->ps->in.pcap, left, 1);
		memcpy(e->ps->in.part, rest, left);
		e->ps->in.plen = left;
	}
}

size_t expo_feed_end(struct expo *e, int flags)
{
	parse_state(e);
	e->ps->in.copy = 1;
	if (e->ps->in.too_long)
		add_error(e, ++e->ps->in.line, "line longer than 1 MiB");
	else if (e->ps->in.plen)
		parse_line(e, e->ps->in.part, e->ps->in.part + e->ps->in.plen, 0, flags);
	free(e->ps->in.part);
	free(e->ps->in.skip);
	e->ps->in.part = e->ps->in.skip = NULL;
	e->ps->in.plen = e->ps->in.pcap = e->ps->in.skipcap = 0;
	e->ps->in.too_long = 0;
	return finish(e, 0);
}

int expo_wants(const struct expo *e, const char *name, size_t nlen)
{
	if (expo_find(e, name, nlen))
		return 1;
	return !e->ps || !e->ps->keep || e->ps->keep(name, nlen, e->ps->keep_ctx);
}

/* The family builder (see expo.h): the parser's storage, fed from slices rather than lines. */
int expo_add(struct expo *e, const char *name, size_t nlen, struct label *labels, uint32_t nlabels,
	     double value)
{
	e->nnamed++; /* kept or not, as a sample line of the text is */
	struct expo_family *f = (struct expo_family *)expo_find(e, name, nlen);
	if (!f) {
		if (e->ps && e->ps->keep && !e->ps->keep(name, nlen, e->ps->keep_ctx))
			return 0;
		f = family_get(e, arena_strndup(&e->arena, name, nlen), nlen);
		f->type = EXPO_GAUGE;
	}
	f->samples = xgrow(f->samples, &f->cap, f->n + 1, sizeof(*f->samples));
	struct expo_sample *s = &f->samples[f->n++];
	s->nlabels = nlabels;
	s->value = value;
	s->labels = NULL;
	if (nlabels) {
		labels_sort(labels, nlabels);
		const struct expo_sample *prev = f->n > 1 ? &f->samples[f->n - 2] : NULL;
		s->labels = arena_alloc(&e->arena, nlabels * sizeof(*labels));
		for (uint32_t k = 0; k < nlabels; k++) {
			struct label l = labels[k];
			/* samples of a family share their label names, as the parser makes them */
			if (prev && k < prev->nlabels &&
			    slice_is_equal(l.name, l.nlen, prev->labels[k].name, prev->labels[k].nlen))
				l.name = prev->labels[k].name;
			else
				l.name = arena_strndup(&e->arena, l.name, l.nlen);
			e->invalid_utf8 += !utf8_is_clean(l.value, l.vlen);
			l.value = l.vlen ? arena_strndup(&e->arena, l.value, l.vlen) : "";
			s->labels[k] = l;
		}
	}
	s->hash = labels_hash(s->labels, nlabels);
	e->nsamples++;
	return 1;
}

void expo_declare(struct expo *e, const char *name, size_t nlen)
{
	struct expo_family *f = (struct expo_family *)expo_find(e, name, nlen);
	if (!f) {
		if (e->ps && e->ps->keep && !e->ps->keep(name, nlen, e->ps->keep_ctx))
			return;
		f = family_get(e, arena_strndup(&e->arena, name, nlen), nlen);
		f->type = EXPO_GAUGE;
	}
	f->declared = 1;
}

void expo_add_end(struct expo *e)
{
	mark_duplicates(e);
}
