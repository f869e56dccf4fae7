/* mapping.c: evaluate the mapping table's rows, one at a time, and answer what a loaded table reads
 * (see mapping.h and docs/mapping.md). */
#include "mapping.h"
#include "expo.h"
#include "mapping_sort.h"
#include "utf8.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Rename and fill labels of every element (new label arrays in the arena); drop empty values. */
static int relabel(const struct row *r, struct vec *v, struct arena *a, char *err, size_t errlen)
{
	if (!r->nrenames && !r->nfills)
		return 0;
	for (size_t i = 0; i < v->n; i++) {
		struct velem *e = &v->e[i];
		size_t cap = e->nlabels + r->nfills;
		struct label *ls = arena_alloc(a, (cap ? cap : 1) * sizeof(*ls));
		uint32_t n = 0;
		for (uint32_t k = 0; k < e->nlabels; k++) {
			struct label l = e->labels[k];
			if (!l.vlen)
				continue;
			for (size_t j = 0; j < r->nrenames; j++)
				if (label_has_name(&l, r->renames[j].key)) {
					l = label_of(r->renames[j].value, l.value, l.vlen);
					break;
				}
			if (labels_find(ls, n, l.name, l.nlen) >= 0) {
				snprintf(err, errlen, "rename_labels makes two labels named %.*s", (int)l.nlen, l.name);
				return -1;
			}
			ls[n++] = l;
		}
		for (size_t j = 0; j < r->nfills; j++) {
			const char *key = r->fills[j].key;
			if (labels_find_str(ls, n, key) < 0)
				ls[n++] = label_str(key, r->fills[j].value);
		}
		labels_sort(ls, n);
		e->labels = ls;
		e->nlabels = n;
		e->hash = labels_hash(ls, n);
	}
	return 0;
}

/* slurmctld copies node, user and account names verbatim, so a label value may be invalid UTF-8,
 * which would make Prometheus refuse the whole scrape, or hold control bytes, which the writer does
 * not serve raw (utf8.h). Such values are repaired (U+FFFD, utf8_clean) in the
 * row's result before its duplicate check: two names that repair to the same bytes are then two
 * series with the same labels, and the row is left out rather than served with a duplicate.
 * Only when some answer holds such a value (expo.invalid_utf8). Returns the values repaired. */
static size_t repair_utf8(struct vec *v, const struct expr_source *src, struct arena *a)
{
	size_t fixed = 0, any = 0;
	for (size_t i = 0; i < src->nexpos; i++)
		any |= src->expos[i] ? src->expos[i]->invalid_utf8 : 0;
	for (size_t i = 0; any && i < v->n; i++) {
		struct label *ls = NULL;
		for (uint32_t k = 0; k < v->e[i].nlabels; k++) {
			const struct label *l = &v->e[i].labels[k];
			if (utf8_is_clean(l->value, l->vlen))
				continue;
			if (!fixed) { /* the elements may be a payload's or a shared result: copy them */
				struct velem *e = arena_alloc(a, v->n * sizeof(*e));
				memcpy(e, v->e, v->n * sizeof(*e));
				v->e = e;
			}
			if (!ls) {
				ls = arena_alloc(a, v->e[i].nlabels * sizeof(*ls));
				memcpy(ls, v->e[i].labels, v->e[i].nlabels * sizeof(*ls));
			}
			char *d = arena_alloc(a, 3 * (size_t)l->vlen);
			ls[k].vlen = (uint32_t)utf8_clean(d, l->value, l->vlen);
			ls[k].value = d;
			fixed++;
		}
		if (ls) {
			v->e[i].labels = ls;
			v->e[i].hash = labels_hash(ls, v->e[i].nlabels);
		}
	}
	return fixed;
}

/* Is a family the form reads absent from its endpoint's answer (which was usable: the form's
 * sources are up)? Computing without it would serve a part of the data as the whole (a NaN, a 0,
 * a node's status label flipped), so the row is left out. "absent_ok" is no exception to that: it
 * says that the family may be absent when its endpoint's answer named no family at all (slurmctld's
 * empty jobs-users-accts answer, no jobs in memory; a slurmrestd document with no record) or when
 * the answer declares it with no series (expo_declare: no node in a reservation), never that it may
 * be missing from an answer that names others. Returns the first missing family, or
 * NULL; *absent is set when an absent_ok family is absent from an empty answer. */
static const char *missing_input(const struct row_form *f, const struct expr_source *src, int *absent)
{
	for (size_t i = 0; i < f->ninputs; i++) {
		const char *name = f->inputs[i].name;
		const struct expo *e = src->expos[source_for_metric(name)];
		const struct expo_family *fam = e ? expo_find(e, name, strlen(name)) : NULL;
		if (fam && fam->n)
			continue;
		/* nnamed: named, kept or not; declared: the answer says the family has no series */
		if (!f->inputs[i].absent_ok || !e || (e->nnamed && !(fam && fam->declared)))
			return name;
		*absent = 1;
	}
	return NULL;
}

/* The first source form f reads that is not up, or -1 when all are. */
static int down_source(const struct row_form *f, const int up[SRC_COUNT])
{
	for (int ep = 0; ep < SRC_COUNT; ep++)
		if ((f->sources & (1u << ep)) && !up[ep])
			return ep;
	return -1;
}

/* The form a row is evaluated with this scrape: its first preferred form whose sources are all up
 * and whose families are all there (a slurmrestd answer lacking one falls back too, rather than
 * leave out what native data can serve), else its native form; *form is its index in r->forms.
 * NULL when that is the native form and it is unavailable. */
static const struct row_form *choose_form(const struct row *r, const struct expr_source *src, const int up[SRC_COUNT],
					  size_t *form)
{
	int absent = 0;
	for (*form = 0; *form + 1 < r->nforms; (*form)++) {
		const struct row_form *f = &r->forms[*form];
		if (down_source(f, up) < 0 && !missing_input(f, src, &absent))
			return f;
	}
	return r->forms[*form].fidelity == FID_UNAVAILABLE ? NULL : &r->forms[*form];
}

/* The row's series from form f's expression, its labels and values as the row says; 0, or -1 with
 * res->status and res->err set. */
static int eval_form(const struct row *r, const struct row_form *f, const struct expr_source *src,
		     const int up[SRC_COUNT], struct arena *a, struct row_result *res, int *absent)
{
	int down = down_source(f, up);
	if (down >= 0) {
		res->status = ROW_INPUT_DOWN;
		snprintf(res->err, sizeof(res->err), "endpoint %s is down", sources[down].name);
		return -1;
	}
	const char *lost = missing_input(f, src, absent);
	if (lost) {
		res->status = ROW_INPUT_MISSING;
		enum source_id id = source_for_metric(lost);
		snprintf(res->err, sizeof(res->err), "%sfamily %s is absent from %s",
			 sources[id].upstream == UPSTREAM_SLURMCTLD ? "native " : "", lost, sources[id].path);
		return -1;
	}
	struct vec shared;
	if (expr_eval(f->expr, src, a, &shared, res->err, sizeof(res->err), NULL) < 0) {
		res->status = ROW_ERROR;
		return -1;
	}
	/* the result may be a payload's own samples or a shared subexpression's: relabel and
	 * drop_zero change elements in place, so they work on a copy (the sort makes a new array) */
	res->v = shared;
	if (r->nrenames || r->nfills || r->drop_zero) {
		res->v.e = arena_alloc(a, (shared.n ? shared.n : 1) * sizeof(*res->v.e));
		if (shared.n)
			memcpy(res->v.e, shared.e, shared.n * sizeof(*res->v.e));
	}
	if (relabel(r, &res->v, a, res->err, sizeof(res->err)) < 0) {
		res->status = ROW_ERROR;
		return -1;
	}
	return 0;
}

/* What form f's "wraps_at" says this scrape (mapping.h's struct row_wrap): WRAP_REACHED with the
 * bound's largest value in *bound when a value of the bound is at or over its limit, WRAP_UNCHECKED
 * when the bound cannot be read (a source of it down, a family of it absent, an ambiguous family). */
static enum row_wrap_state wrap_check(const struct row_form *f, const struct expr_source *src, const int up[SRC_COUNT],
				      struct arena *a, double *bound)
{
	const struct row_wrap *w = f->wrap;
	const char *missing = NULL;
	char err[160];
	struct vec v;
	if (!w)
		return WRAP_NONE;
	for (int ep = 0; ep < SRC_COUNT; ep++)
		if ((w->sources & (1u << ep)) && !up[ep])
			return WRAP_UNCHECKED;
	if (expr_eval(w->bound, src, a, &v, err, sizeof(err), &missing) < 0 || missing)
		return WRAP_UNCHECKED;
	enum row_wrap_state st = WRAP_NONE;
	for (size_t i = 0; i < v.n; i++)
		if (v.e[i].v >= w->limit && (st == WRAP_NONE || v.e[i].v > *bound)) {
			st = WRAP_REACHED;
			*bound = v.e[i].v;
		}
	return st;
}

static void eval_row(const struct row *r, const struct expr_source *src, const int up[SRC_COUNT], struct arena *a,
		     struct row_result *res)
{
	int absent = 0;
	memset(res, 0, sizeof(*res));
	const struct row_form *f = choose_form(r, src, up, &res->form);
	if (!f) {
		res->status = ROW_UNAVAILABLE;
		res->fidelity = FID_UNAVAILABLE;
		return;
	}
	res->fidelity = f->fidelity;
	if (eval_form(r, f, src, up, a, res, &absent) < 0) {
		res->v.n = 0;
		return;
	}
	res->repaired = repair_utf8(&res->v, src, a);
	if (r->drop_zero) {
		size_t n = 0;
		for (size_t i = 0; i < res->v.n; i++)
			if (res->v.e[i].v != 0)
				res->v.e[n++] = res->v.e[i];
		res->v.n = n;
	}
	if (!res->v.n && r->has_default) {
		res->v.e = arena_alloc(a, sizeof(struct velem));
		res->v.e[0] = (struct velem){ .v = r->defval, .hash = labels_hash(NULL, 0) };
		res->v.n = 1;
	}
	if (!res->v.n && !r->drop_zero && !absent && !(f->reads_record && !f->sources)) {
		/* only drop_zero rows, rows whose absent_ok input is absent and forms of the record
		 * alone (the sources they name not needed this scrape) may legitimately come out empty;
		 * for the others a guard in the expression refused the data (e.g. GPUs allocated but
		 * none counted: no gres/gpu TRES) */
		res->status = ROW_NO_INPUT;
		snprintf(res->err, sizeof(res->err), "the expression gave no series");
		return;
	}
	if (mapping_sort(&res->v, a) < 0) {
		res->status = ROW_ERROR;
		snprintf(res->err, sizeof(res->err), "two series with the same labels%s",
			 res->repaired ? " (once invalid UTF-8 in label values was repaired)" : "");
		res->v.n = 0;
		return;
	}
	if ((res->wrap = wrap_check(f, src, up, a, &res->bound)) != WRAP_NONE)
		res->fidelity = FID_APPROXIMATE; /* never served as exact from counters that may have wrapped */
}

void mapping_run(const struct mapping *m, unsigned flags, const struct expo *const ex[SRC_COUNT],
		 const int up[SRC_COUNT], const struct expo *record, mapping_emit_fn emit, void *ctx)
{
	struct arena scrape_a, row_a;
	struct row_result res;
	const struct expo *all[SRC_COUNT + 1]; /* the sources' answers by source_id, then the record */
	memcpy(all, ex, SRC_COUNT * sizeof(*all));
	all[SRC_COUNT] = record;
	arena_init(&scrape_a);
	arena_init(&row_a);
	/* shared subexpressions are computed once, by the first row that reads them, and live until the
	 * last row; a row's own series only until it is emitted, so memory holds one row at a time */
	const struct expr_source src = { all, SRC_COUNT + 1, expr_memo_alloc(&scrape_a, m->nmemo), m->nmemo, &scrape_a };
	for (size_t i = 0; i < m->nrows; i++) {
		if (row_is_enabled(&m->rows[i], flags)) {
			eval_row(&m->rows[i], &src, up, &row_a, &res);
		} else {
			memset(&res, 0, sizeof(res));
			res.status = ROW_DISABLED;
			res.form = m->rows[i].nforms - 1;
			res.fidelity = row_native(&m->rows[i])->fidelity;
		}
		emit(ctx, i, &res);
		arena_rewind(&row_a); /* the next row reuses the same (cached) bytes */
	}
	arena_reset(&row_a);
	arena_reset(&scrape_a);
}

const char *mapping_record_name(enum mapping_record_family f)
{
	static const char *const names[REC_COUNT] = {
#define REC_NAME(id, name) [id] = name,
		MAPPING_RECORD_FAMILIES(REC_NAME)
#undef REC_NAME
	};
	return names[f];
}

int mapping_is_record_family(const char *name)
{
	return strncmp(name, MAPPING_RECORD_PREFIX, strlen(MAPPING_RECORD_PREFIX)) == 0;
}

int mapping_record_index(const char *name)
{
	for (int f = 0; f < REC_COUNT; f++)
		if (strcmp(name, mapping_record_name((enum mapping_record_family)f)) == 0)
			return f;
	return -1;
}

const char *row_wrap_name(enum row_wrap_state w)
{
	static const char *const names[ROW_WRAP_COUNT] = {
#define ROW_WRAP_NAME(id, name) [id] = name,
		ROW_WRAPS(ROW_WRAP_NAME)
#undef ROW_WRAP_NAME
	};
	return names[w];
}

const char *row_status_name(enum row_status s)
{
	static const char *const names[ROW_STATUS_COUNT] = {
#define ROW_STATUS_NAME(id, name) [id] = name,
		ROW_STATUSES(ROW_STATUS_NAME)
#undef ROW_STATUS_NAME
	};
	return names[s];
}

/* ---- what the loaded table reads (asked per scrape) ---- */

int mapping_sorted_has(char *const *v, size_t n, const char *name, size_t len)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		const char *s = v[mid];
		int c = strncmp(s, name, len);
		if (!c)
			c = s[len] ? 1 : 0;
		if (!c)
			return 1;
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return 0;
}

int mapping_has_input(const char *name, size_t len, void *ctx)
{
	const struct mapping *m = ctx;
	return mapping_sorted_has(m->inputs, m->ninputs, name, len);
}

enum upstream_id row_upstream(const struct row *r, size_t form)
{
	return r->forms[form].sources & source_of_upstream(UPSTREAM_SLURMRESTD) ? UPSTREAM_SLURMRESTD : UPSTREAM_SLURMCTLD;
}

/* What using form f fetches: the sources of its expression and of its wraps_at bound. */
static unsigned form_sources(const struct row_form *f)
{
	return f->sources | (f->wrap ? f->wrap->sources : 0);
}

unsigned mapping_sources(const struct mapping *m, unsigned flags, unsigned usable)
{
	unsigned eps = 0;
	for (size_t i = 0; i < m->nrows; i++) {
		const struct row *r = &m->rows[i];
		if (!row_is_enabled(r, flags))
			continue;
		eps |= form_sources(row_native(r));
		/* a form that can never be used this way (slurmrestd not configured) fetches nothing */
		for (size_t k = 0; k + 1 < r->nforms; k++)
			if (!(r->forms[k].sources & ~usable))
				eps |= form_sources(&r->forms[k]);
	}
	return eps;
}

unsigned mapping_sources_expecting(const struct mapping *m, unsigned flags, unsigned usable, unsigned expect)
{
	unsigned eps = 0;
	for (size_t i = 0; i < m->nrows; i++) {
		const struct row *r = &m->rows[i];
		if (!row_is_enabled(r, flags))
			continue;
		size_t k = 0; /* the forms in order, up to the first expected to serve the row */
		for (; k + 1 < r->nforms; k++) {
			if (r->forms[k].sources & ~usable)
				continue;
			eps |= form_sources(&r->forms[k]);
			if (!(r->forms[k].sources & ~(usable & expect)))
				break;
		}
		if (k + 1 >= r->nforms)
			eps |= form_sources(row_native(r));
	}
	return eps;
}

unsigned mapping_fallback_sources(const struct mapping *m, unsigned flags, unsigned usable,
				  const struct expo *const ex[SRC_COUNT], const int up[SRC_COUNT])
{
	const struct expr_source src = { ex, SRC_COUNT, NULL, 0, NULL };
	unsigned eps = 0;
	for (size_t i = 0; i < m->nrows; i++) {
		const struct row *r = &m->rows[i];
		size_t form;
		if (!row_is_enabled(r, flags) || r->nforms < 2 || choose_form(r, &src, up, &form) != row_native(r))
			continue;
		for (size_t k = 0; k < r->nforms; k++)
			if (k + 1 == r->nforms || !(r->forms[k].sources & ~usable))
				eps |= form_sources(&r->forms[k]);
	}
	return eps;
}

void mapping_fidelity_counts(const struct mapping *m, size_t out[FID_COUNT])
{
	for (int f = 0; f < FID_COUNT; f++)
		out[f] = 0;
	for (size_t i = 0; m && i < m->nrows; i++) {
		enum fidelity best = FID_UNAVAILABLE;
		for (size_t k = 0; k < m->rows[i].nforms; k++)
			if (m->rows[i].forms[k].fidelity < best)
				best = m->rows[i].forms[k].fidelity;
		out[best]++;
	}
}
