/* openmetrics.c: see openmetrics.h. The line grammar and the family, metadata and type rules; the
 * lexical layer (numbers, label sets, a set of byte strings) is openmetrics_syntax.c. One pass over
 * the lines. What spans lines lives in struct om: the current family, its current metric (label set)
 * and, for histograms, the current MetricPoint. Numbers are kept as their text (pointing into the
 * exposition) so that order and equality are exact, not float64-rounded. All memory is owned by
 * struct om and released by om_free(). */
#include "openmetrics.h"

#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "labels.h"
#include "openmetrics_syntax.h"
#include "utf8.h"
#include "names.h"

#define EXEMPLAR_MAX_CODEPOINTS 128
#define NAME_SHOWN 80 /* at most this many bytes of a name in a reason */

/* ---- the validator's state -------------------------------------------------------------------- */

enum om_type { T_UNKNOWN, T_GAUGE, T_COUNTER, T_STATESET, T_INFO, T_HISTOGRAM, T_GAUGEHISTOGRAM, T_SUMMARY, T_NTYPES };

static const char *const type_name[T_NTYPES] = {
	"unknown", "gauge", "counter", "stateset", "info", "histogram", "gaugehistogram", "summary",
};

enum sfx { S_NONE, S_TOTAL, S_CREATED, S_INFO, S_BUCKET, S_COUNT, S_SUM, S_GCOUNT, S_GSUM, S_END };

static const char *const sfx_text[S_END] = {
	"", "_total", "_created", "_info", "_bucket", "_count", "_sum", "_gcount", "_gsum",
};

/* The sample names of each type: the family name plus one of these suffixes (S_END ends a list). */
static const enum sfx type_sfx[T_NTYPES][5] = {
	[T_UNKNOWN] = { S_NONE, S_END },
	[T_GAUGE] = { S_NONE, S_END },
	[T_COUNTER] = { S_TOTAL, S_CREATED, S_END },
	[T_STATESET] = { S_NONE, S_END },
	[T_INFO] = { S_INFO, S_END },
	[T_HISTOGRAM] = { S_BUCKET, S_COUNT, S_SUM, S_CREATED, S_END },
	[T_GAUGEHISTOGRAM] = { S_BUCKET, S_GCOUNT, S_GSUM, S_END },
	[T_SUMMARY] = { S_NONE, S_COUNT, S_SUM, S_CREATED, S_END },
};

static int is_histogram(enum om_type t)
{
	return t == T_HISTOGRAM || t == T_GAUGEHISTOGRAM;
}

/* One histogram MetricPoint: consecutive samples of one metric with one timestamp. */
struct hpoint {
	int active;
	size_t last_line;
	int nbuckets, neg_bucket;
	struct om_num le, bval; /* the last bucket's threshold and value */
	int have_count, have_sum, have_gsum, neg_gsum;
	struct om_num count;
	size_t count_line, sum_line, gsum_line;
};

struct family {
	int open;
	const char *name;
	size_t nlen;
	enum om_type type;
	int has_type, has_help, has_unit;
	size_t ulen; /* length of a non-empty unit */
	size_t nsamples;
	/* the current metric: its label set without le / quantile / the stateset label */
	int in_metric;
	struct buf metric;
	int metric_ts; /* its samples carry timestamps */
	struct om_num ts; /* the last of them */
	struct om_keyset metrics; /* every metric of the family so far */
	struct om_keyset series;  /* series of the current metric (when it has no timestamps) */
	struct hpoint hp;
};

struct om {
	size_t err_line;
	char *reason;
	size_t reasonlen;
	struct family fam;
	struct om_keyset names; /* the sample names of every closed family */
	struct om_labelset ls, xs; /* the sample's and the exemplar's labels */
	struct buf key, skey, tmp;
};

static void om_init(struct om *o, char *reason, size_t reasonlen)
{
	memset(o, 0, sizeof(*o));
	o->reason = reason;
	o->reasonlen = reasonlen;
	buf_init(&o->fam.metric, 0);
	om_keyset_init(&o->fam.metrics);
	om_keyset_init(&o->fam.series);
	om_keyset_init(&o->names);
	om_labelset_init(&o->ls);
	om_labelset_init(&o->xs);
	buf_init(&o->key, 0);
	buf_init(&o->skey, 0);
	buf_init(&o->tmp, 0);
}

static void om_free(struct om *o)
{
	buf_free(&o->fam.metric);
	om_keyset_free(&o->fam.metrics);
	om_keyset_free(&o->fam.series);
	om_keyset_free(&o->names);
	om_labelset_free(&o->ls);
	om_labelset_free(&o->xs);
	buf_free(&o->key);
	buf_free(&o->skey);
	buf_free(&o->tmp);
}

__attribute__((format(printf, 3, 4))) static int fail(struct om *o, size_t line, const char *fmt, ...)
{
	o->err_line = line;
	if (o->reason && o->reasonlen) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(o->reason, o->reasonlen, fmt, ap);
		va_end(ap);
	}
	return -1;
}

static int shown(size_t n)
{
	return n > NAME_SHOWN ? NAME_SHOWN : (int)n;
}

/* Parse a number token. special: also [sign] inf/infinity and nan. 0, or -1 when it is not one. */
static int parse_num(struct om *o, const char *s, size_t n, int special, struct om_num *out)
{
	out->s = s;
	out->n = n;
	if (om_is_realnumber(s, n)) {
		o->tmp.len = 0;
		buf_append(&o->tmp, s, n);
		buf_putc(&o->tmp, '\0');
		out->kind = OM_FINITE;
		out->v = strtod(o->tmp.data, NULL);
		return isinf(out->v) ? -1 : 0; /* must fit in a float64 */
	}
	if (!special)
		return -1;
	if (om_ascii_ieq(s, n, "nan")) {
		out->kind = OM_NAN;
		out->v = NAN;
		return 0;
	}
	size_t i = n && (s[0] == '+' || s[0] == '-');
	if (om_ascii_ieq(s + i, n - i, "inf") || om_ascii_ieq(s + i, n - i, "infinity")) {
		out->kind = s[0] == '-' ? OM_NINF : OM_PINF;
		out->v = s[0] == '-' ? -INFINITY : INFINITY;
		return 0;
	}
	return -1;
}

/* ---- families --------------------------------------------------------------------------------- */

/* Is `name` a sample name of the open family? Sets *sfx. */
static int fam_owns(const struct family *f, const char *name, size_t nlen, enum sfx *sfx)
{
	if (!f->open || nlen < f->nlen || memcmp(name, f->name, f->nlen) != 0)
		return 0;
	for (const enum sfx *s = type_sfx[f->type]; *s != S_END; s++) {
		size_t sl = strlen(sfx_text[*s]);
		if (nlen - f->nlen == sl && memcmp(name + f->nlen, sfx_text[*s], sl) == 0) {
			*sfx = *s;
			return 1;
		}
	}
	return 0;
}

static int hist_finish(struct om *o)
{
	struct hpoint *h = &o->fam.hp;
	struct family *f = &o->fam;
	const char *cnt = f->type == T_HISTOGRAM ? "_count" : "_gcount";
	const char *sum = f->type == T_HISTOGRAM ? "_sum" : "_gsum";
	int rc = -1;
	if (!h->nbuckets || h->le.kind != OM_PINF)
		rc = fail(o, h->last_line, "%s '%.*s': a metric point has no +Inf bucket (it must be the last bucket)",
			  type_name[f->type], shown(f->nlen), f->name);
	else if (h->have_count && om_num_cmp(&h->count, &h->bval) != 0)
		rc = fail(o, h->count_line, "%s '%.*s': %s is not the value of the +Inf bucket", type_name[f->type],
			  shown(f->nlen), f->name, cnt);
	else if ((h->have_sum || h->have_gsum) && !h->have_count)
		rc = fail(o, h->have_sum ? h->sum_line : h->gsum_line, "%s '%.*s': %s without %s", type_name[f->type],
			  shown(f->nlen), f->name, sum, cnt);
	else if (h->have_count && !h->have_sum && !h->have_gsum)
		rc = fail(o, h->count_line, "%s '%.*s': %s without %s", type_name[f->type], shown(f->nlen), f->name,
			  cnt, sum);
	else if (h->neg_bucket && h->have_sum)
		rc = fail(o, h->sum_line, "histogram '%.*s': a metric point with negative buckets must not have _sum",
			  shown(f->nlen), f->name);
	else if (!h->neg_bucket && h->neg_gsum)
		rc = fail(o, h->gsum_line, "gaugehistogram '%.*s': negative _gsum without negative buckets",
			  shown(f->nlen), f->name);
	else
		rc = 0;
	memset(h, 0, sizeof(*h));
	return rc;
}

/* The family ends: finish its last histogram point and reserve its name and sample names. */
static int fam_close(struct om *o)
{
	struct family *f = &o->fam;
	if (!f->open)
		return 0;
	if (is_histogram(f->type) && f->hp.active && hist_finish(o) < 0)
		return -1;
	om_keyset_add(&o->names, f->name, f->nlen); /* family names are unique too */
	for (const enum sfx *s = type_sfx[f->type]; *s != S_END; s++) {
		o->key.len = 0;
		buf_append(&o->key, f->name, f->nlen);
		buf_puts(&o->key, sfx_text[*s]);
		om_keyset_add(&o->names, o->key.data, o->key.len);
	}
	f->open = 0;
	f->metric.len = 0;
	f->in_metric = 0;
	om_keyset_clear(&f->metrics);
	om_keyset_clear(&f->series);
	return 0;
}

static int fam_start(struct om *o, size_t line, const char *name, size_t nlen)
{
	struct family *f = &o->fam;
	if (om_keyset_has(&o->names, name, nlen))
		return fail(o, line, "metric family '%.*s' repeats or clashes with an earlier family's sample name "
				     "(families must be contiguous and unique)",
			    shown(nlen), name);
	f->open = 1;
	f->name = name;
	f->nlen = nlen;
	f->type = T_UNKNOWN;
	f->has_type = f->has_help = f->has_unit = 0;
	f->ulen = 0;
	f->nsamples = 0;
	f->in_metric = 0;
	memset(&f->hp, 0, sizeof(f->hp));
	return 0;
}

/* ---- metadata lines --------------------------------------------------------------------------- */

static int do_metadata(struct om *o, size_t line, const char *p, const char *end)
{
	struct family *f = &o->fam;
	if (end - p < 7 || p[1] != ' ' || p[6] != ' ' ||
	    (memcmp(p + 2, "HELP", 4) != 0 && memcmp(p + 2, "TYPE", 4) != 0 && memcmp(p + 2, "UNIT", 4) != 0))
		return fail(o, line, "a line starting with '#' must be # HELP, # TYPE, # UNIT or # EOF");
	char kind = p[2];
	const char *name = p + 7, *q = name;
	if (q < end && is_name_start(*q))
		for (q++; q < end && is_name_char(*q); q++)
			;
	size_t nlen = (size_t)(q - name);
	if (!nlen)
		return fail(o, line, "invalid metric name in metadata");
	if (q >= end || *q != ' ')
		return fail(o, line, "expected ' ' after the metric name in metadata");
	const char *v = q + 1;
	size_t vlen = (size_t)(end - v);

	if (f->open && slice_is_equal(f->name, f->nlen, name, nlen)) {
		if (f->nsamples)
			return fail(o, line, "metadata for '%.*s' after its samples", shown(nlen), name);
	} else {
		if (fam_close(o) < 0 || fam_start(o, line, name, nlen) < 0)
			return -1;
	}

	if (kind == 'H') {
		if (f->has_help)
			return fail(o, line, "second HELP for '%.*s'", shown(nlen), name);
		for (size_t i = 0; i < vlen; i++)
			if (v[i] == '\\' && ++i == vlen)
				return fail(o, line, "HELP text ends with a lone backslash");
		f->has_help = 1;
		return 0;
	}
	if (kind == 'T') {
		if (f->has_type)
			return fail(o, line, "second TYPE for '%.*s'", shown(nlen), name);
		enum om_type t = T_NTYPES;
		for (int i = 0; i < T_NTYPES; i++)
			if (vlen == strlen(type_name[i]) && memcmp(v, type_name[i], vlen) == 0)
				t = (enum om_type)i;
		if (t == T_NTYPES)
			return fail(o, line, "invalid TYPE (counter, gauge, histogram, gaugehistogram, stateset, info, "
					     "summary or unknown)");
		if (f->ulen && (t == T_INFO || t == T_STATESET))
			return fail(o, line, "%s '%.*s' must not have a UNIT", type_name[t], shown(nlen), name);
		for (const enum sfx *s = type_sfx[t]; *s != S_END; s++) {
			o->key.len = 0;
			buf_append(&o->key, name, nlen);
			buf_puts(&o->key, sfx_text[*s]);
			if (om_keyset_has(&o->names, o->key.data, o->key.len))
				return fail(o, line, "%s '%.*s': sample name '%.*s' clashes with an earlier family",
					    type_name[t], shown(nlen), name, shown(o->key.len), o->key.data);
		}
		f->type = t;
		f->has_type = 1;
		return 0;
	}
	/* UNIT */
	if (f->has_unit)
		return fail(o, line, "second UNIT for '%.*s'", shown(nlen), name);
	for (size_t i = 0; i < vlen; i++)
		if (!is_name_char(v[i]))
			return fail(o, line, "invalid character in UNIT");
	if (vlen) {
		if (nlen <= vlen || name[nlen - vlen - 1] != '_' || memcmp(name + nlen - vlen, v, vlen) != 0)
			return fail(o, line, "UNIT '%.*s' is not a suffix '_%.*s' of the name '%.*s'", shown(vlen), v,
				    shown(vlen), v, shown(nlen), name);
		if (f->type == T_INFO || f->type == T_STATESET)
			return fail(o, line, "%s '%.*s' must not have a UNIT", type_name[f->type], shown(nlen), name);
	}
	f->has_unit = 1;
	f->ulen = vlen;
	return 0;
}

/* ---- sample lines ----------------------------------------------------------------------------- */

static const char *token_end(const char *p, const char *end)
{
	while (p < end && *p != ' ')
		p++;
	return p;
}

/* Report a bad number token ("what" is value, timestamp...). */
static int bad_token(struct om *o, size_t line, const char *what, const char *p, const char *t)
{
	if (p == t)
		return fail(o, line, "missing %s (two spaces, or a space at the end of the line?)", what);
	return fail(o, line, "invalid %s '%.*s'", what, shown((size_t)(t - p)), p);
}

/* Label rules of the family's type. Sets *le for a histogram bucket. */
static int check_labels(struct om *o, size_t line, enum sfx sfx, struct om_num *le)
{
	struct family *f = &o->fam;
	const struct om_label *l;
	if (f->type == T_STATESET && !om_label_find(&o->ls, f->name, f->nlen))
		return fail(o, line, "stateset '%.*s': a sample without the label '%.*s'", shown(f->nlen), f->name,
			    shown(f->nlen), f->name);
	if (is_histogram(f->type)) {
		l = om_label_find(&o->ls, "le", 2);
		if (sfx != S_BUCKET) {
			if (l)
				return fail(o, line, "%s '%.*s': only _bucket samples have an le label", type_name[f->type],
					    shown(f->nlen), f->name);
			return 0;
		}
		if (!l)
			return fail(o, line, "%s '%.*s': a _bucket sample without le label", type_name[f->type],
				    shown(f->nlen), f->name);
		const char *v = om_label_value(&o->ls, l);
		if (slice_is_equal(v, l->vlen, "+Inf", 4)) {
			le->kind = OM_PINF;
			le->v = INFINITY;
		} else if (slice_is_equal(v, l->vlen, "-Inf", 4)) {
			le->kind = OM_NINF;
			le->v = -INFINITY;
		} else if (parse_num(o, v, l->vlen, 0, le) < 0) {
			return fail(o, line, "%s '%.*s': le value '%.*s' is not a number, +Inf or -Inf", type_name[f->type],
				    shown(f->nlen), f->name, shown(l->vlen), v);
		}
		le->s = l->raw; /* a number has no escapes: the raw text is the value, and it stays valid */
		le->n = l->rawlen;
	}
	if (f->type == T_SUMMARY) {
		l = om_label_find(&o->ls, "quantile", 8);
		if (sfx != S_NONE) {
			if (l)
				return fail(o, line, "summary '%.*s': only quantile samples have a quantile label",
					    shown(f->nlen), f->name);
			return 0;
		}
		if (!l)
			return fail(o, line, "summary '%.*s': a quantile sample without quantile label", shown(f->nlen),
				    f->name);
		struct om_num q;
		if (parse_num(o, om_label_value(&o->ls, l), l->vlen, 0, &q) < 0 || om_num_cmp(&q, &om_num_zero) < 0 ||
		    om_num_cmp(&q, &om_num_one) > 0)
			return fail(o, line, "summary '%.*s': quantile value '%.*s' is not a number from 0 to 1",
				    shown(f->nlen), f->name, shown(l->vlen), om_label_value(&o->ls, l));
	}
	return 0;
}

/* Metrics (label sets) are contiguous; timestamps on all samples of one or on none, never backwards;
 * without timestamps a series appears once. Also ends histogram points. */
static int check_metric(struct om *o, size_t line, const char *name, size_t nlen, enum sfx sfx, int has_ts,
			const struct om_num *ts)
{
	struct family *f = &o->fam;
	const char *skip = NULL;
	size_t skiplen = 0;
	if (f->type == T_SUMMARY && sfx == S_NONE) {
		skip = "quantile";
		skiplen = 8;
	} else if (is_histogram(f->type) && sfx == S_BUCKET) {
		skip = "le";
		skiplen = 2;
	} else if (f->type == T_STATESET) {
		skip = f->name;
		skiplen = f->nlen;
	}
	o->key.len = 0;
	om_key_labels(&o->key, &o->ls, skip, skiplen);
	int same = f->in_metric && slice_is_equal(f->metric.data, f->metric.len, o->key.data, o->key.len);
	if (!same) {
		if (!om_keyset_add(&f->metrics, o->key.data, o->key.len))
			return fail(o, line, "'%.*s': the samples of one label set must be contiguous (metrics must not "
					     "be interleaved)",
				    shown(f->nlen), f->name);
		if (is_histogram(f->type) && f->hp.active && hist_finish(o) < 0)
			return -1;
		f->metric.len = 0;
		buf_append(&f->metric, o->key.data, o->key.len);
		f->in_metric = 1;
		f->metric_ts = has_ts;
		om_keyset_clear(&f->series);
	} else if (has_ts != f->metric_ts) {
		return fail(o, line, "'%.*s': samples with and without timestamp in one metric", shown(f->nlen),
			    f->name);
	} else if (has_ts) {
		int c = om_num_cmp(ts, &f->ts);
		if (c < 0)
			return fail(o, line, "'%.*s': timestamp goes backwards within a metric", shown(f->nlen), f->name);
		if (c > 0 && is_histogram(f->type) && f->hp.active && hist_finish(o) < 0)
			return -1;
	}
	if (has_ts) {
		f->ts = *ts;
		return 0;
	}
	o->skey.len = 0;
	buf_append(&o->skey, name, nlen);
	buf_putc(&o->skey, '\0');
	om_key_labels(&o->skey, &o->ls, NULL, 0);
	if (!om_keyset_add(&f->series, o->skey.data, o->skey.len))
		return fail(o, line, "'%.*s': the same series twice without timestamps", shown(nlen), name);
	return 0;
}

static int check_value(struct om *o, size_t line, const char *name, size_t nlen, enum sfx sfx, const struct om_num *v)
{
	struct family *f = &o->fam;
	int no_nan = sfx == S_TOTAL || sfx == S_SUM || sfx == S_COUNT || sfx == S_BUCKET || sfx == S_GCOUNT ||
		     sfx == S_GSUM;
	int no_neg = no_nan && sfx != S_GSUM;
	int integer = sfx == S_BUCKET || sfx == S_COUNT || sfx == S_GCOUNT;
	if (no_nan && v->kind == OM_NAN)
		return fail(o, line, "'%.*s': value must not be NaN", shown(nlen), name);
	if (no_neg && om_num_is_negative(v))
		return fail(o, line, "'%.*s': value must not be negative", shown(nlen), name);
	if (integer && (v->kind != OM_FINITE || !om_dec_is_integer(v->s, v->n)))
		return fail(o, line, "'%.*s': value must be an integer", shown(nlen), name);
	if (f->type == T_STATESET &&
	    (v->kind == OM_NAN || (om_num_cmp(v, &om_num_zero) != 0 && om_num_cmp(v, &om_num_one) != 0)))
		return fail(o, line, "stateset '%.*s': value must be 0 or 1", shown(f->nlen), f->name);
	if (f->type == T_INFO && (v->kind == OM_NAN || om_num_cmp(v, &om_num_one) != 0))
		return fail(o, line, "info '%.*s': value must be 1", shown(f->nlen), f->name);
	if (f->type == T_SUMMARY && sfx == S_NONE && om_num_is_negative(v))
		return fail(o, line, "summary '%.*s': quantile value must not be negative", shown(f->nlen), f->name);
	return 0;
}

static int check_exemplar(struct om *o, size_t line, enum sfx sfx)
{
	struct family *f = &o->fam;
	if (!((f->type == T_COUNTER && sfx == S_TOTAL) || (is_histogram(f->type) && sfx == S_BUCKET)))
		return fail(o, line, "exemplars are only allowed on counter _total and histogram _bucket samples");
	size_t cp = 0;
	for (size_t i = 0; i < o->xs.n; i++)
		cp += o->xs.l[i].nlen + o->xs.l[i].cp;
	if (cp > EXEMPLAR_MAX_CODEPOINTS)
		return fail(o, line, "exemplar labels are %zu code points long (at most %d)", cp,
			    EXEMPLAR_MAX_CODEPOINTS);
	return 0;
}

static int hist_add(struct om *o, size_t line, enum sfx sfx, const struct om_num *v, const struct om_num *le)
{
	struct family *f = &o->fam;
	struct hpoint *h = &f->hp;
	h->active = 1;
	h->last_line = line;
	switch (sfx) {
	case S_BUCKET:
		if (h->nbuckets && om_num_cmp(le, &h->le) <= 0)
			return fail(o, line, "%s '%.*s': buckets must be in increasing order of le", type_name[f->type],
				    shown(f->nlen), f->name);
		if (h->nbuckets && om_num_cmp(v, &h->bval) < 0)
			return fail(o, line, "%s '%.*s': bucket values must be cumulative (never decrease)",
				    type_name[f->type], shown(f->nlen), f->name);
		if (om_num_is_negative(le))
			h->neg_bucket = 1;
		h->nbuckets++;
		h->le = *le;
		h->bval = *v;
		break;
	case S_COUNT:
	case S_GCOUNT:
		h->have_count = 1;
		h->count = *v;
		h->count_line = line;
		break;
	case S_SUM:
		h->have_sum = 1;
		h->sum_line = line;
		break;
	case S_GSUM:
		h->have_gsum = 1;
		h->gsum_line = line;
		if (om_num_is_negative(v))
			h->neg_gsum = 1;
		break;
	default:
		break;
	}
	return 0;
}

static int do_sample(struct om *o, size_t line, const char *p, const char *end)
{
	struct family *f = &o->fam;
	const char *err = NULL, *name = p, *t;
	struct om_num val, ts, xval, xts, le = om_num_zero;
	int has_ts = 0, has_ex = 0;

	if (!is_name_start(*p))
		return fail(o, line, "invalid metric name");
	for (p++; p < end && is_name_char(*p); p++)
		;
	size_t nlen = (size_t)(p - name);
	o->ls.n = 0;
	o->ls.vals.len = 0;
	if (p < end && *p == '{' && !(p = om_parse_labels(&o->ls, p, end, &err)))
		return fail(o, line, "%s", err);
	if (p >= end || *p != ' ')
		return fail(o, line, p >= end ? "missing value" : "expected ' ' after the metric name or labels");
	t = token_end(++p, end);
	if (parse_num(o, p, (size_t)(t - p), 1, &val) < 0)
		return bad_token(o, line, "value", p, t);
	p = t;
	if (p < end && ++p >= end)
		return fail(o, line, "trailing space after the value");
	if (p < end && *p != '#') {
		t = token_end(p, end);
		if (parse_num(o, p, (size_t)(t - p), 0, &ts) < 0)
			return bad_token(o, line, "timestamp", p, t);
		has_ts = 1;
		p = t;
		if (p < end && (++p >= end || *p != '#'))
			return fail(o, line, "unexpected text after the timestamp");
	}
	if (p < end) { /* exemplar = SP HASH SP labels SP number [SP timestamp] */
		if (end - p < 3 || p[1] != ' ' || p[2] != '{')
			return fail(o, line, "invalid exemplar: expected '# {'");
		if (!(p = om_parse_labels(&o->xs, p + 2, end, &err)))
			return fail(o, line, "invalid exemplar: %s", err);
		if (p >= end || *p != ' ')
			return fail(o, line, "invalid exemplar: expected ' ' and a value after its labels");
		t = token_end(++p, end);
		if (parse_num(o, p, (size_t)(t - p), 1, &xval) < 0)
			return bad_token(o, line, "exemplar value", p, t);
		p = t;
		if (p < end) {
			t = token_end(++p, end);
			if (parse_num(o, p, (size_t)(t - p), 0, &xts) < 0)
				return bad_token(o, line, "exemplar timestamp", p, t);
			if (t < end)
				return fail(o, line, "unexpected text after the exemplar");
		}
		has_ex = 1;
	}

	enum sfx sfx = S_NONE;
	if (!fam_owns(f, name, nlen, &sfx)) {
		if (f->open && slice_is_equal(f->name, f->nlen, name, nlen))
			return fail(o, line, "%s '%.*s': '%.*s' is not one of its sample names", type_name[f->type],
				    shown(f->nlen), f->name, shown(nlen), name);
		if (fam_close(o) < 0 || fam_start(o, line, name, nlen) < 0)
			return -1;
		sfx = S_NONE;
	}
	f->nsamples++;
	if (check_labels(o, line, sfx, &le) < 0 || check_metric(o, line, name, nlen, sfx, has_ts, &ts) < 0 ||
	    check_value(o, line, name, nlen, sfx, &val) < 0 || (has_ex && check_exemplar(o, line, sfx) < 0))
		return -1;
	if (is_histogram(f->type))
		return hist_add(o, line, sfx, &val, &le);
	return 0;
}

/* ---- the exposition --------------------------------------------------------------------------- */

int om_validate(const char *text, size_t len, size_t *err_line, char *reason, size_t reasonlen)
{
	struct om o;
	int rc = -1;
	size_t line = 0;
	if (!text)
		text = "", len = 0;
	const char *p = text, *end = text + len;
	if (reason && reasonlen)
		reason[0] = '\0';
	om_init(&o, reason, reasonlen);
	for (;;) {
		line++;
		if (p >= end) {
			fail(&o, line, "missing # EOF at the end");
			goto out;
		}
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *le = nl ? nl : end;
		if (!utf8_is_valid(p, (size_t)(le - p))) {
			fail(&o, line, "invalid UTF-8");
			goto out;
		}
		if (line == 1 && le - p >= 3 && memcmp(p, "\xEF\xBB\xBF", 3) == 0) {
			fail(&o, line, "byte order mark");
			goto out;
		}
		if (le > p && le[-1] == '\r') {
			fail(&o, line, "carriage return at the end of the line");
			goto out;
		}
		if (le - p == 5 && memcmp(p, "# EOF", 5) == 0) {
			if (fam_close(&o) < 0)
				goto out;
			if (nl && nl + 1 < end) {
				fail(&o, line + 1, "text after # EOF");
				goto out;
			}
			rc = 0;
			goto out;
		}
		if (le == p) {
			fail(&o, line, "blank line");
			goto out;
		}
		if ((*p == '#' ? do_metadata(&o, line, p, le) : do_sample(&o, line, p, le)) < 0)
			goto out;
		if (!nl) {
			fail(&o, line, "the last line must be # EOF");
			goto out;
		}
		p = nl + 1;
	}
out:
	if (err_line)
		*err_line = rc < 0 ? o.err_line : 0;
	om_free(&o);
	return rc;
}
