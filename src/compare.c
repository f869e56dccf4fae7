/* compare.c: see compare.h. */
#include "compare.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "utf8.h"
#include "xmalloc.h"

/* One differing series: present on one side or both, with different values. */
struct diff {
	const struct expo_sample *legacy, *shim; /* NULL: absent on that side */
	const char *part;                        /* a histogram's or summary's part: "_sum"...; else "" */
};

/* A sample and the part of its family it was written under ("" but in a histogram or summary). */
struct ref {
	const struct expo_sample *s;
	const char *part;
};

/* What the comparison found for one family, and its name in the report. */
#define VERDICTS(X) \
	X(V_EQUAL, "equal") \
	X(V_DIFFERS, "differs") \
	X(V_ONLY_LEGACY, "only-legacy") \
	X(V_ONLY_SHIM, "only-shim") \
	X(V_ABSENT, "absent")     /* enabled, not served, and not on the old exporter's page either */ \
	X(V_DISABLED, "disabled") /* its flag not set, and not on the old exporter's page */

enum verdict {
#define VERDICT_ID(id, name) id,
	VERDICTS(VERDICT_ID)
#undef VERDICT_ID
};

static const char *const verdict_names[] = {
#define VERDICT_NAME(id, name) [id] = name,
	VERDICTS(VERDICT_NAME)
#undef VERDICT_NAME
};

#define FID_NO_ROW FID_COUNT /* struct fam_result's fidelity when no row serves the family */

/* What one family gave. Strings borrow the mapping, the expositions or literals. */
struct fam_result {
	const char *name, *upstream, *note;
	enum verdict verdict;
	enum fidelity fidelity;           /* the served form's, else the native form's; FID_NO_ROW: no row */
	size_t nlen;                      /* name is not NUL-terminated when it comes from the old exporter's text */
	int bad;                          /* counts against exit 0: a family with an exact form that disagrees */
	size_t nlegacy, nshim, ndiff;
	struct diff diffs[COMPARE_MAX_DIFFS];
};

/* The old exporter's runtime families: Prometheus' Go client, not Slurm. */
static int family_is_ignored(const char *name, size_t n)
{
	return (n >= 3 && !memcmp(name, "go_", 3)) || (n >= 8 && !memcmp(name, "process_", 8)) ||
	       (n >= 9 && !memcmp(name, "promhttp_", 9));
}

int compare_is_exporter_page(const struct expo *legacy)
{
	for (size_t i = 0; i < legacy->nfams; i++)
		if (legacy->fams[i].n)
			return 1;
	return 0;
}

/* A histogram's samples are written as NAME_bucket, NAME_sum and NAME_count, a summary's as NAME (its
 * quantiles), NAME_sum and NAME_count: the parts of the one family NAME that its # TYPE line declares,
 * which the parser keeps apart by the names the samples have. */
static const char *const part_suffixes[] = { "_bucket", "_sum", "_count" };
#define NPARTS (sizeof(part_suffixes) / sizeof(part_suffixes[0]))

static int is_whole(const struct expo_family *f)
{
	return f && (f->type == EXPO_HISTOGRAM || f->type == EXPO_SUMMARY);
}

/* The part i of the histogram or summary w in e, or NULL. */
static const struct expo_family *part_of(const struct expo *e, const struct expo_family *w, size_t i)
{
	if (i == 0 && w->type != EXPO_HISTOGRAM) /* a summary has no buckets */
		return NULL;
	size_t k = strlen(part_suffixes[i]);
	char *name = xmalloc(w->nlen + k + 1);
	memcpy(name, w->name, w->nlen);
	memcpy(name + w->nlen, part_suffixes[i], k + 1);
	const struct expo_family *f = expo_find(e, name, w->nlen + k);
	free(name);
	return f;
}

/* 1 if the family named name (n bytes) of e is a part of a histogram or summary of e. */
static int is_part(const struct expo *e, const char *name, size_t n)
{
	for (size_t i = 0; i < NPARTS; i++) {
		size_t k = strlen(part_suffixes[i]);
		if (n > k && !memcmp(name + n - k, part_suffixes[i], k)) {
			const struct expo_family *w = expo_find(e, name, n - k);
			if (is_whole(w) && part_of(e, w, i))
				return 1;
		}
	}
	return 0;
}

/* f's series: a histogram's or summary's, those of every part; any other family's, its own. */
static size_t family_series(const struct expo *e, const struct expo_family *f)
{
	size_t n = f ? f->n : 0;
	for (size_t i = 0; is_whole(f) && i < NPARTS; i++) {
		const struct expo_family *p = part_of(e, f, i);
		n += p ? p->n : 0;
	}
	return n;
}

static int ref_cmp(const void *a, const void *b)
{
	const struct ref *x = a, *y = b;
	int c = labels_cmp(x->s->labels, x->s->nlabels, y->s->labels, y->s->nlabels);
	return c ? c : strcmp(x->part, y->part);
}

static int value_is_same(double a, double b)
{
	return a == b || (isnan(a) && isnan(b));
}

/* A family's samples (a histogram's or summary's: its parts' too), sorted by label set: a new array
 * (free it). */
static struct ref *sorted(const struct expo *e, const struct expo_family *f)
{
	size_t n = 0;
	struct ref *s = xmalloc((family_series(e, f) + 1) * sizeof(*s));
	for (size_t i = 0; f && i < f->n; i++)
		s[n++] = (struct ref){ &f->samples[i], "" };
	for (size_t k = 0; is_whole(f) && k < NPARTS; k++) {
		const struct expo_family *p = part_of(e, f, k);
		for (size_t i = 0; p && i < p->n; i++)
			s[n++] = (struct ref){ &p->samples[i], part_suffixes[k] };
	}
	qsort(s, n, sizeof(*s), ref_cmp);
	return s;
}

static void add_diff(struct fam_result *r, const struct ref *l, const struct ref *s)
{
	if (r->ndiff < COMPARE_MAX_DIFFS)
		r->diffs[r->ndiff] = (struct diff){ l ? l->s : NULL, s ? s->s : NULL, l ? l->part : s->part };
	r->ndiff++;
}

/* Merge the two sorted sample lists: every series on one side only, or with another value. */
static void diff_series(struct fam_result *r, const struct expo *legacy, const struct expo_family *lf,
			const struct expo *shim, const struct expo_family *sf)
{
	struct ref *l = sorted(legacy, lf), *s = sorted(shim, sf);
	size_t i = 0, j = 0;
	while (i < r->nlegacy || j < r->nshim) {
		int c = i == r->nlegacy ? 1 : j == r->nshim ? -1 : ref_cmp(&l[i], &s[j]);
		if (c < 0) {
			add_diff(r, &l[i++], NULL);
		} else if (c > 0) {
			add_diff(r, NULL, &s[j++]);
		} else {
			if (!value_is_same(l[i].s->value, s[j].s->value))
				add_diff(r, &l[i], &s[j]);
			i++;
			j++;
		}
	}
	free(l);
	free(s);
}

/* Whether row r was served, as the render's result record o says (NULL: nothing was), and with
 * which form: its fidelity, upstream and note. */
static int served_form(const struct row *r, const struct render_row *o, struct fam_result *res)
{
	if (!o || o->status != ROW_OK || o->output_full)
		return 0;
	res->upstream = upstreams[row_upstream(r, o->form)].name;
	res->fidelity = o->fidelity;
	res->note = r->forms[o->form].note;
	return 1;
}

/* Compare one family: row r (NULL: no row serves it; o: what it gave) against the old exporter's. */
static void compare_one(const char *name, size_t nlen, const struct row *r, const struct render_row *o, unsigned flags,
			const struct expo *legacy, const struct expo *shim, struct fam_result *res)
{
	const struct expo_family *lf = expo_find(legacy, name, nlen);
	const struct expo_family *sf = r ? expo_find(shim, name, nlen) : NULL;
	int enabled = r && row_is_enabled(r, flags);
	int served = enabled && served_form(r, o, res);
	memset(res->diffs, 0, sizeof(res->diffs));
	res->name = name;
	res->nlen = nlen;
	res->nlegacy = family_series(legacy, lf);
	res->nshim = served ? family_series(shim, sf) : 0;
	res->ndiff = 0;
	if (!served) {
		res->fidelity = r ? row_native(r)->fidelity : FID_NO_ROW;
		res->upstream = "-";
		res->note = r ? row_native(r)->note : "no row of the mapping serves this family";
	}
	diff_series(res, legacy, lf, shim, served ? sf : NULL);
	if (!res->nlegacy && !res->nshim)
		res->verdict = served ? V_EQUAL : enabled ? V_ABSENT : V_DISABLED;
	else if (!res->nshim)
		res->verdict = V_ONLY_LEGACY;
	else if (!res->nlegacy)
		res->verdict = V_ONLY_SHIM;
	else
		res->verdict = res->ndiff ? V_DIFFERS : V_EQUAL;
	/* an unavailable row or a family no row serves is expected to be missing: not a failure */
	res->bad = res->ndiff && res->fidelity == FID_EXACT;
}

/* For the report people read (writer.c's text_escaped is for Prometheus): s escaped as in the text
 * format (\\ \" \n), and also every other control byte, as \xHH, so that none reaches a terminal;
 * invalid UTF-8 repaired. */
static void report_escaped(struct buf *b, const char *s, size_t n)
{
	char *fixed = xmalloc(3 * n + 1);
	size_t m = utf8_repair(fixed, s, n);
	for (size_t i = 0; i < m; i++) {
		unsigned char c = (unsigned char)fixed[i];
		if (c == '\\' || c == '"')
			buf_printf(b, "\\%c", c);
		else if (c == '\n')
			buf_puts(b, "\\n");
		else if (c < 0x20 || c == 0x7f)
			buf_printf(b, "\\x%02x", c);
		else
			buf_putc(b, (char)c);
	}
	free(fixed);
}

static void report_labels(struct buf *b, const struct expo_sample *s)
{
	buf_putc(b, '{');
	for (uint32_t i = 0; i < s->nlabels; i++) {
		buf_printf(b, "%s%.*s=\"", i ? "," : "", (int)s->labels[i].nlen, s->labels[i].name);
		report_escaped(b, s->labels[i].value, s->labels[i].vlen);
		buf_putc(b, '"');
	}
	buf_putc(b, '}');
}

/* A series' value in the report: "-" when that side has no such series, else as read (%.17g). */
static void report_value(struct buf *b, const struct expo_sample *s)
{
	if (!s)
		buf_puts(b, "-");
	else if (isnan(s->value))
		buf_puts(b, "NaN");
	else if (isinf(s->value))
		buf_puts(b, s->value > 0 ? "+Inf" : "-Inf");
	else
		buf_printf(b, "%.17g", s->value);
}

/* The fidelity's name in the report. */
static const char *fid_name(enum fidelity f)
{
	return f == FID_NO_ROW ? "none" : fidelity_name(f);
}

static void table_row(struct buf *b, const struct fam_result *r)
{
	int approx = r->verdict == V_DIFFERS && r->fidelity != FID_EXACT;
	buf_printf(b, "%-22s %-12s %-10s %.*s (legacy %zu series, shim %zu)\n",
		   approx ? "differs (approximate)" : verdict_names[r->verdict], fid_name(r->fidelity), r->upstream, (int)r->nlen, r->name, r->nlegacy, r->nshim);
	for (size_t i = 0; i < r->ndiff && i < COMPARE_MAX_DIFFS; i++) {
		buf_printf(b, "    %s", r->diffs[i].part);
		report_labels(b, r->diffs[i].legacy ? r->diffs[i].legacy : r->diffs[i].shim);
		buf_puts(b, " legacy ");
		report_value(b, r->diffs[i].legacy);
		buf_puts(b, " shim ");
		report_value(b, r->diffs[i].shim);
		buf_putc(b, '\n');
	}
	if (r->ndiff > COMPARE_MAX_DIFFS)
		buf_printf(b, "    ... %zu more differing series\n", r->ndiff - COMPARE_MAX_DIFFS);
	if (r->note && r->verdict != V_EQUAL) /* the JSON form has every note */
		buf_printf(b, "    note: %s\n", r->note);
}

/* A JSON string of untrusted bytes: repaired to valid UTF-8 first (jansson refuses invalid UTF-8). */
static json_t *jstr(const char *s, size_t n)
{
	char *fixed = xmalloc(3 * n + 1);
	json_t *j = json_stringn(fixed, utf8_repair(fixed, s, n));
	free(fixed);
	return j;
}

/* A value as JSON: a number, or null when absent, or a string for NaN and the infinities. */
static json_t *jvalue(const struct expo_sample *s)
{
	if (!s)
		return json_null();
	if (isfinite(s->value))
		return json_real(s->value);
	return json_string(isnan(s->value) ? "NaN" : s->value > 0 ? "+Inf" : "-Inf");
}

static json_t *json_row(const struct fam_result *r)
{
	json_t *o = json_object(), *diffs = json_array();
	json_object_set_new(o, "family", jstr(r->name, r->nlen));
	json_object_set_new(o, "result", json_string(verdict_names[r->verdict]));
	json_object_set_new(o, "fidelity", json_string(fid_name(r->fidelity)));
	json_object_set_new(o, "upstream", json_string(r->upstream));
	json_object_set_new(o, "note", r->note ? json_string(r->note) : json_null());
	json_object_set_new(o, "legacy_series", json_integer((json_int_t)r->nlegacy));
	json_object_set_new(o, "shim_series", json_integer((json_int_t)r->nshim));
	json_object_set_new(o, "differing_series", json_integer((json_int_t)r->ndiff));
	for (size_t i = 0; i < r->ndiff && i < COMPARE_MAX_DIFFS; i++) {
		const struct expo_sample *s = r->diffs[i].legacy ? r->diffs[i].legacy : r->diffs[i].shim;
		json_t *d = json_object(), *labels = json_object();
		for (uint32_t k = 0; k < s->nlabels; k++) {
			char key[256];
			snprintf(key, sizeof(key), "%.*s", (int)s->labels[k].nlen, s->labels[k].name);
			json_object_set_new(labels, key, jstr(s->labels[k].value, s->labels[k].vlen));
		}
		json_object_set_new(d, "labels", labels);
		if (r->diffs[i].part[0]) /* a histogram's or summary's part */
			json_object_set_new(d, "part", json_string(r->diffs[i].part));
		json_object_set_new(d, "legacy", jvalue(r->diffs[i].legacy));
		json_object_set_new(d, "shim", jvalue(r->diffs[i].shim));
		json_array_append_new(diffs, d);
	}
	json_object_set_new(o, "differences", diffs);
	return o;
}

/* What the summary counts, each family in one class at most: one that disappears (the old exporter
 * serves it, the shim serves none of it, whatever its fidelity: a dashboard panel goes blank), an
 * exact difference (an exact form that disagrees: bad), an approximate one (a difference the row's
 * note explains). */
struct tally {
	size_t disappear, exact, approximate;
};

static int fam_is_disappearing(const struct fam_result *r)
{
	return r->nlegacy && !r->nshim;
}

static struct tally count(const struct fam_result *res, size_t n)
{
	struct tally t = { 0, 0, 0 };
	for (size_t i = 0; i < n; i++) {
		if (fam_is_disappearing(&res[i]))
			t.disappear++;
		else if (res[i].bad)
			t.exact++;
		else if (res[i].ndiff)
			t.approximate++;
	}
	return t;
}

/* The exit status: 0 only when nothing disappears and every exact family agrees. */
static int verdict_of(struct tally t)
{
	return t.disappear || t.exact ? 1 : 0;
}

static void render(const struct mapping *named, const struct fam_result *res, size_t n, enum compare_format fmt,
		   struct buf *out)
{
	struct tally t = count(res, n);
	int rc = verdict_of(t);
	if (fmt == COMPARE_JSON) {
		json_t *doc = json_object(), *fams = json_array();
		if (named) {
			json_object_set_new(doc, "schema", json_string(named->stem));
			json_object_set_new(doc, "schema_file", json_string(named->path));
		}
		for (size_t i = 0; i < n; i++)
			json_array_append_new(fams, json_row(&res[i]));
		json_object_set_new(doc, "passed", json_boolean(rc == 0));
		json_object_set_new(doc, "exact_agree", json_boolean(t.exact == 0));
		json_object_set_new(doc, "exact_differing", json_integer((json_int_t)t.exact));
		json_object_set_new(doc, "approximate_differing", json_integer((json_int_t)t.approximate));
		json_object_set_new(doc, "disappearing", json_integer((json_int_t)t.disappear));
		json_object_set_new(doc, "families", fams);
		char *text = json_dumps(doc, JSON_INDENT(1) | JSON_PRESERVE_ORDER);
		buf_puts(out, text);
		buf_putc(out, '\n');
		free(text);
		json_decref(doc);
		return;
	}
	if (named)
		buf_printf(out, "schema %s (%s)\n", named->stem, named->path);
	buf_printf(out, "%-22s %-12s %-10s %s\n", "RESULT", "FIDELITY", "UPSTREAM", "FAMILY");
	for (size_t i = 0; i < n; i++)
		table_row(out, &res[i]);
	buf_printf(out, "%zu families compared: %zu exact %s, %zu approximate %s, %zu %s (the old exporter serves %s, the shim "
		   "does not)%s\n", n, t.exact, t.exact == 1 ? "family differs" : "families differ", t.approximate,
		   t.approximate == 1 ? "one differs" : "ones differ", t.disappear, t.disappear == 1 ? "disappears" : "disappear",
		   t.disappear == 1 ? "it" : "them", rc ? "" : ": every exact family agrees and none disappears");
}

/* The old exporter's families that count (with a sample, not the Go client's; a histogram or summary
 * once, by its own name, not by its parts'), as a NUL-terminated name in name[] (NULL: this one does
 * not count). */
static const char *counted_family(const struct expo *legacy, const struct expo_family *f, char name[512])
{
	if (!family_series(legacy, f) || family_is_ignored(f->name, f->nlen) || f->nlen >= 512 ||
	    is_part(legacy, f->name, f->nlen))
		return NULL;
	memcpy(name, f->name, f->nlen);
	name[f->nlen] = '\0';
	return name;
}

int compare_pick_schema(const struct mapping *chain, const struct expo *legacy, char *why, size_t whysz)
{
	size_t npage = 0, bs = 0, bu = 1, nbest = 0, len = 0;
	char name[512];
	int pick = -1, k = 0;
	for (size_t i = 0; i < legacy->nfams; i++)
		npage += counted_family(legacy, &legacy->fams[i], name) != NULL;
	why[0] = '\0';
	for (const struct mapping *m = chain; m; m = m->next, k++) {
		size_t shared = 0;
		for (size_t i = 0; i < legacy->nfams; i++)
			shared += counted_family(legacy, &legacy->fams[i], name) && mapping_row_index(m, name) >= 0;
		size_t uni = npage + m->nrows - shared;
		/* shared / uni against the best's bs / bu, as integers: equal fractions tie */
		if (shared * bu > bs * uni)
			pick = k, bs = shared, bu = uni, nbest = 0;
		nbest += shared && shared * bu == bs * uni;
		if (len < whysz)
			len += (size_t)snprintf(why + len, whysz - len, "%s%s %zu of %zu", k ? ", " : "",
						m->stem[0] ? m->stem : m->path, shared, uni ? uni : 1);
	}
	return bs && nbest == 1 ? pick : -1;
}

int compare_families(const struct mapping *m, unsigned flags, const struct expo *legacy, const struct expo *shim,
		     const struct render_result *served, enum compare_format fmt, struct buf *out)
{
	return compare_schema_families(m, 0, flags, legacy, shim, served, fmt, out);
}

int compare_schema_families(const struct mapping *m, int name_schema, unsigned flags, const struct expo *legacy,
			    const struct expo *shim, const struct render_result *served, enum compare_format fmt,
			    struct buf *out)
{
	struct fam_result *res = xcalloc(m->nrows + legacy->nfams + 1, sizeof(*res));
	size_t n = 0;
	int rc = 0;
	for (size_t i = 0; i < m->nrows; i++) {
		const struct render_row *o = served && i < served->nrows ? &served->rows[i] : NULL;
		compare_one(m->rows[i].name, strlen(m->rows[i].name), &m->rows[i], o, flags, legacy, shim, &res[n++]);
	}
	for (size_t i = 0; i < legacy->nfams; i++) {
		const struct expo_family *f = &legacy->fams[i];
		char name[512];
		if (!counted_family(legacy, f, name) || mapping_row_index(m, name) >= 0)
			continue;
		compare_one(f->name, f->nlen, NULL, NULL, flags, legacy, shim, &res[n++]);
	}
	render(name_schema ? m : NULL, res, n, fmt, out);
	rc = verdict_of(count(res, n));
	free(res);
	return rc;
}
