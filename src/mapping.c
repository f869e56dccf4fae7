/* mapping.c: load, check and evaluate the mapping table. See mapping.h and docs/mapping.md. */
#include "mapping.h"
#include "buf.h"
#include "expo.h"
#include "jsonpos.h"
#include "utf8.h"

#include <errno.h>
#include <stdarg.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAPPING_MAX_BYTES (4u << 20)

const char *fidelity_name(enum fidelity f)
{
	static const char *const n[] = { "exact", "approximate", "unavailable" };
	return n[f];
}

static void row_clear(struct row *r)
{
	free(r->name);
	free(r->help);
	free(r->type);
	free(r->note);
	free(r->expr_src);
	free(r->enabled_by);
	expr_free(r->expr);
	for (size_t i = 0; i < r->nrenames; i++) {
		free(r->renames[i].key);
		free(r->renames[i].value);
	}
	for (size_t i = 0; i < r->nfills; i++) {
		free(r->fills[i].key);
		free(r->fills[i].value);
	}
	free(r->renames);
	free(r->fills);
	for (size_t i = 0; i < r->ninputs; i++)
		free(r->inputs[i].name);
	free(r->inputs);
}

void mapping_free(struct mapping *m)
{
	if (!m)
		return;
	for (size_t i = 0; i < m->nrows; i++)
		row_clear(&m->rows[i]);
	free(m->rows);
	for (size_t i = 0; i < m->ninputs; i++)
		free(m->inputs[i]);
	free(m->inputs);
	free(m->names);
	free(m->path);
	free(m);
}

/* ---- loading ---- */

struct inputs {
	char **v;
	size_t n, cap;
	size_t row_start;         /* the current row's first */
};

struct loader {
	const char *path;
	const char *text;
	size_t len;
	struct jsonpos pos;
	struct buf *problems;
	size_t nproblems;
	size_t work;              /* struct mapping's load_work */
	struct inputs inputs;     /* every row's metric names (note_input) */
	unsigned endpoints;       /* the current row's */
	struct row *row;          /* the row whose expression note_input walks */
	size_t row_inputs_cap;    /* of row->inputs */
};

static void problem(struct loader *L, struct jpos at, const char *row, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static void problem(struct loader *L, struct jpos at, const char *row, const char *fmt, ...)
{
	va_list ap;
	L->nproblems++;
	if (!L->problems)
		return;
	buf_printf(L->problems, "%s:%d:%d: ", L->path, at.line, at.col);
	if (row)
		buf_printf(L->problems, "row '%s': ", row);
	va_start(ap, fmt);
	buf_vprintf(L->problems, fmt, ap);
	va_end(ap);
	buf_putc(L->problems, '\n');
}

static int valid_metric_name(const char *s)
{
	if (!*s || !((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || *s == '_' || *s == ':'))
		return 0;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') || *s == '_' || *s == ':'))
			return 0;
	return 1;
}

static int valid_label_name(const char *s)
{
	return valid_metric_name(s) && !strchr(s, ':') && strncmp(s, "__", 2) != 0;
}

/* Comparing each row's name with every row before it was quadratic (36 s for 50,000 rows): rows
 * are found by name in a table with room for all of them (m->names). Returns the slot of the row
 * of this name (its index + 1), or the empty slot where it goes (0); *work counts the probes. */
static size_t *name_slot(const struct mapping *m, const char *name, size_t *work)
{
	uint64_t h = 0xCBF29CE484222325ULL; /* FNV-1a */
	for (const char *c = name; *c; c++)
		h = (h ^ (unsigned char)*c) * 0x100000001B3ULL;
	for (size_t j = (size_t)(h ^ h >> 32) & m->names_mask;; j = (j + 1) & m->names_mask) {
		(*work)++;
		if (!m->names[j] || strcmp(m->rows[m->names[j] - 1].name, name) == 0)
			return &m->names[j];
	}
}

int mapping_row_index(const struct mapping *m, const char *name)
{
	size_t work = 0;
	return (int)*name_slot(m, name, &work) - 1;
}

static const char *const row_keys[] = { "name", "help", "type", "expr", "fidelity", "note", "default", "drop_zero",
					"rename_labels", "fill_labels", "enabled_by", "absent_ok", NULL };
static const char *const known_flags[] = { "gpus-acct", "slurmrestd-jobs", NULL };

static int in_list(const char *const *list, const char *s)
{
	for (; *list; list++)
		if (strcmp(*list, s) == 0)
			return 1;
	return 0;
}

static void load_kv(struct loader *L, size_t ri, const char *rname, json_t *obj, const char *field, struct kv **out,
		    size_t *n, int keys_are_labels, int values_are_labels)
{
	const char *k;
	json_t *v;
	struct jpos at = jsonpos_field(&L->pos, ri, field);
	if (!json_is_object(obj)) {
		problem(L, at, rname, "\"%s\" must be an object", field);
		return;
	}
	*out = xcalloc(json_object_size(obj) + 1, sizeof(**out));
	json_object_foreach(obj, k, v) {
		if (!json_is_string(v)) {
			problem(L, at, rname, "\"%s\": value of \"%s\" must be a string", field, k);
			continue;
		}
		const char *sv = json_string_value(v);
		if ((keys_are_labels && !valid_label_name(k)) || (values_are_labels && !valid_label_name(sv))) {
			problem(L, at, rname, "\"%s\": \"%s\": \"%s\" is not a valid label name", field, k,
				keys_are_labels && !valid_label_name(k) ? k : sv);
			continue;
		}
		(*out)[*n].key = xstrdup(k);
		(*out)[*n].value = xstrdup(sv);
		(*n)++;
	}
}

/* One walk over a row's expression for the endpoints it reads and the inputs of the mapping (a name
 * repeated in a row, as in a + a + a, is stored once). */
static void note_input(const char *name, void *ctx)
{
	struct loader *L = ctx;
	struct inputs *in = &L->inputs;
	struct row *r = L->row;
	L->endpoints |= 1u << endpoint_for_metric(name);
	if (in->n > in->row_start && strcmp(in->v[in->n - 1], name) == 0)
		return;
	in->v = xgrow(in->v, &in->cap, in->n + 1, sizeof(*in->v));
	in->v[in->n++] = xstrdup(name);
	r->inputs = xgrow(r->inputs, &L->row_inputs_cap, r->ninputs + 1, sizeof(*r->inputs));
	r->inputs[r->ninputs++] = (struct row_input){ xstrdup(name), 0 };
}

static int row_input_cmp(const void *a, const void *b)
{
	return strcmp(((const struct row_input *)a)->name, ((const struct row_input *)b)->name);
}

/* The row's inputs sorted, each once (a row may read a family in several places). */
static void unique_row_inputs(struct row *r)
{
	size_t u = 0;
	if (r->ninputs)
		qsort(r->inputs, r->ninputs, sizeof(*r->inputs), row_input_cmp);
	for (size_t i = 0; i < r->ninputs; i++) {
		if (u && !strcmp(r->inputs[u - 1].name, r->inputs[i].name))
			free(r->inputs[i].name);
		else
			r->inputs[u++] = r->inputs[i];
	}
	r->ninputs = u;
}

/* A row's name: a valid metric name, not reserved, not already a row's. */
static void check_name(struct loader *L, const struct mapping *m, size_t ri, const char *rname, json_t *v)
{
	size_t first;
	if (!json_is_string(v) || !valid_metric_name(json_string_value(v)))
		problem(L, jsonpos_field(&L->pos, ri, "name"), rname, "\"name\" must be a valid metric name");
	else if (strncmp(json_string_value(v), "slurm_exporter_shim_", 20) == 0)
		problem(L, jsonpos_field(&L->pos, ri, "name"), rname, "names starting with slurm_exporter_shim_ are reserved for self metrics");
	else if ((first = *name_slot(m, json_string_value(v), &L->work)))
		problem(L, jsonpos_field(&L->pos, ri, "name"), rname, "duplicate row name (first defined at row %zu)", first);
}

/* Compile the row's expression; note the endpoints and metric names it reads. */
static void load_expr(struct loader *L, struct row *r, size_t ri, const char *rname, const char *src)
{
	size_t errpos = 0;
	char err[160];
	r->expr_src = xstrdup(src);
	r->expr = expr_compile(r->expr_src, &errpos, err, sizeof(err));
	if (!r->expr) {
		struct jpos at = jsonpos_field(&L->pos, ri, "expr");
		problem(L, jsonpos_in_string(L->text, L->len, at, errpos), rname, "expr: %s", err);
		return;
	}
	L->endpoints = 0;
	L->inputs.row_start = L->inputs.n;
	L->row = r;
	L->row_inputs_cap = 0;
	expr_foreach_metric(r->expr, note_input, L);
	unique_row_inputs(r);
	r->endpoints = L->endpoints;
}

/* "absent_ok": native families the expression reads whose absence from a usable answer is normal
 * (slurmctld omits them in some state): they then read as no series, and the row is served. Any
 * other absent input leaves the row out (input_missing), whatever "default" says. */
static void load_absent_ok(struct loader *L, size_t ri, const char *rname, struct row *r, json_t *v)
{
	struct jpos at = jsonpos_field(&L->pos, ri, "absent_ok");
	size_t i;
	json_t *e;
	if (!json_is_array(v)) {
		problem(L, at, rname, "\"absent_ok\" must be an array of native family names");
		return;
	}
	json_array_foreach(v, i, e) {
		struct row_input key, *in;
		if (!json_is_string(e)) {
			problem(L, at, rname, "\"absent_ok\"[%zu] must be a string", i);
			continue;
		}
		key.name = (char *)json_string_value(e);
		in = r->ninputs ? bsearch(&key, r->inputs, r->ninputs, sizeof(*r->inputs), row_input_cmp) : NULL;
		if (!in)
			problem(L, at, rname, "\"absent_ok\": the expression does not read \"%s\"", key.name);
		else
			in->absent_ok = 1;
	}
}

/* The optional fields that shape a row's result: default, drop_zero, labels, absent_ok, enabled_by. */
static void load_options(struct loader *L, size_t ri, const char *rname, struct row *r, json_t *jr)
{
	json_t *v;
	if ((v = json_object_get(jr, "default"))) {
		if (!json_is_number(v))
			problem(L, jsonpos_field(&L->pos, ri, "default"), rname, "\"default\" must be a number");
		r->has_default = 1;
		r->defval = json_number_value(v);
	}
	if ((v = json_object_get(jr, "drop_zero"))) {
		if (!json_is_boolean(v))
			problem(L, jsonpos_field(&L->pos, ri, "drop_zero"), rname, "\"drop_zero\" must be true or false");
		r->drop_zero = json_is_true(v);
	}
	if ((v = json_object_get(jr, "rename_labels")))
		load_kv(L, ri, rname, v, "rename_labels", &r->renames, &r->nrenames, 1, 1);
	if ((v = json_object_get(jr, "fill_labels")))
		load_kv(L, ri, rname, v, "fill_labels", &r->fills, &r->nfills, 1, 0);
	if ((v = json_object_get(jr, "absent_ok")))
		load_absent_ok(L, ri, rname, r, v);
	if ((v = json_object_get(jr, "enabled_by"))) {
		if (!json_is_string(v) || !in_list(known_flags, json_string_value(v)))
			problem(L, jsonpos_field(&L->pos, ri, "enabled_by"), rname, "\"enabled_by\" must be one of: gpus-acct, slurmrestd-jobs");
		else
			r->enabled_by = xstrdup(json_string_value(v));
	}
}

static void load_row(struct loader *L, struct mapping *m, size_t ri, json_t *jr)
{
	struct row *r = &m->rows[m->nrows];
	char label[32];
	const char *rname;
	json_t *v;
	const char *k;
	size_t before = L->nproblems;

	memset(r, 0, sizeof(*r));
	if (!json_is_object(jr)) {
		problem(L, jsonpos_field(&L->pos, ri, NULL), NULL, "metrics[%zu] must be an object", ri);
		return;
	}
	v = json_object_get(jr, "name");
	snprintf(label, sizeof(label), "#%zu", ri + 1);
	rname = json_is_string(v) ? json_string_value(v) : label;

	json_object_foreach(jr, k, v) {
		if (!in_list(row_keys, k))
			problem(L, jsonpos_field(&L->pos, ri, k), rname, "unknown field \"%s\"", k);
	}
	check_name(L, m, ri, rname, json_object_get(jr, "name"));

	v = json_object_get(jr, "help");
	if (!json_is_string(v))
		problem(L, jsonpos_field(&L->pos, ri, "help"), rname, "\"help\" must be a string");
	else
		r->help = xstrdup(json_string_value(v));

	v = json_object_get(jr, "type");
	if (!json_is_string(v) || (strcmp(json_string_value(v), "gauge") && strcmp(json_string_value(v), "counter") &&
				   strcmp(json_string_value(v), "untyped")))
		problem(L, jsonpos_field(&L->pos, ri, "type"), rname, "\"type\" must be \"gauge\", \"counter\" or \"untyped\"");
	else
		r->type = xstrdup(json_string_value(v));

	v = json_object_get(jr, "fidelity");
	if (json_is_string(v) && strcmp(json_string_value(v), "exact") == 0)
		r->fidelity = FID_EXACT;
	else if (json_is_string(v) && strcmp(json_string_value(v), "approximate") == 0)
		r->fidelity = FID_APPROXIMATE;
	else if (json_is_string(v) && strcmp(json_string_value(v), "unavailable") == 0)
		r->fidelity = FID_UNAVAILABLE;
	else
		problem(L, jsonpos_field(&L->pos, ri, "fidelity"), rname,
			"\"fidelity\" must be \"exact\", \"approximate\" or \"unavailable\"");

	v = json_object_get(jr, "note");
	if (v && !json_is_string(v))
		problem(L, jsonpos_field(&L->pos, ri, "note"), rname, "\"note\" must be a string");
	else if (v)
		r->note = xstrdup(json_string_value(v));
	else if (r->fidelity != FID_EXACT)
		problem(L, jsonpos_field(&L->pos, ri, NULL), rname, "a row that is not exact needs a \"note\" saying why");

	v = json_object_get(jr, "expr");
	if (v && !json_is_string(v)) {
		problem(L, jsonpos_field(&L->pos, ri, "expr"), rname, "\"expr\" must be a string");
	} else if (v && r->fidelity == FID_UNAVAILABLE) {
		problem(L, jsonpos_field(&L->pos, ri, "expr"), rname, "an unavailable row has no \"expr\"");
	} else if (v) {
		load_expr(L, r, ri, rname, json_string_value(v));
	} else if (r->fidelity != FID_UNAVAILABLE) {
		problem(L, jsonpos_field(&L->pos, ri, NULL), rname, "missing \"expr\" (only an unavailable row has none)");
	}

	load_options(L, ri, rname, r, jr);
	if (L->nproblems != before) {
		row_clear(r);
		return;
	}
	r->name = xstrdup(rname);
	*name_slot(m, r->name, &L->work) = m->nrows + 1;
	m->endpoints |= r->endpoints;
	m->nrows++;
}

static int str_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Sort the names the rows read (note_input) and drop repeats. */
static void collect_inputs(struct mapping *m, struct inputs in)
{
	if (in.n > 1)
		qsort(in.v, in.n, sizeof(*in.v), str_cmp);
	size_t u = 0;
	for (size_t i = 0; i < in.n; i++)
		if (u && !strcmp(in.v[u - 1], in.v[i]))
			free(in.v[i]);
		else
			in.v[u++] = in.v[i];
	m->inputs = in.v;
	m->ninputs = u;
}

int mapping_reads(const char *name, size_t len, void *ctx)
{
	const struct mapping *m = ctx;
	size_t lo = 0, hi = m->ninputs;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		const char *s = m->inputs[mid];
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

static char *slurp(const char *path, size_t max, size_t *len, char *err, size_t errlen)
{
	FILE *f = fopen(path, "rb");
	struct buf b;
	char chunk[65536];
	size_t n;
	if (!f) {
		snprintf(err, errlen, "%s", strerror(errno));
		return NULL;
	}
	buf_init(&b, max);
	while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0)
		if (buf_append(&b, chunk, n) < 0)
			break;
	if (ferror(f) || b.overflow) {
		snprintf(err, errlen, b.overflow ? "file larger than %zu bytes" : "read error", max);
		fclose(f);
		buf_free(&b);
		return NULL;
	}
	fclose(f);
	return buf_steal(&b, len);
}

struct mapping *mapping_load(const char *path, struct buf *problems)
{
	struct loader L = { .path = path, .problems = problems };
	struct mapping *m = NULL;
	json_t *root = NULL, *rows;
	json_error_t jerr;
	char err[128];
	char *text = slurp(path, MAPPING_MAX_BYTES, &L.len, err, sizeof(err));
	const char *k;
	json_t *v;

	if (!text) {
		problem(&L, (struct jpos){ 1, 1, 0 }, NULL, "cannot read mapping file: %s", err);
		goto out;
	}
	L.text = text;
	root = json_loadb(text, L.len, JSON_REJECT_DUPLICATES, &jerr);
	if (!root) {
		problem(&L, (struct jpos){ jerr.line > 0 ? jerr.line : 1, jerr.column > 0 ? jerr.column : 1, 0 }, NULL,
			"invalid JSON: %s", jerr.text);
		goto out;
	}
	jsonpos_scan(text, L.len, &L.pos);
	if (!json_is_object(root)) {
		problem(&L, (struct jpos){ 1, 1, 0 }, NULL, "the top level must be an object with a \"metrics\" array");
		goto out;
	}
	json_object_foreach(root, k, v) {
		if (strcmp(k, "metrics") && strcmp(k, "description") && strcmp(k, "format_version"))
			problem(&L, jsonpos_top(&L.pos, k), NULL, "unknown top-level field \"%s\"", k);
	}
	if ((v = json_object_get(root, "format_version")) && !(json_is_integer(v) && json_integer_value(v) == 1))
		problem(&L, jsonpos_top(&L.pos, "format_version"), NULL, "\"format_version\" must be 1");
	rows = json_object_get(root, "metrics");
	if (!json_is_array(rows)) {
		problem(&L, jsonpos_top(&L.pos, "metrics"), NULL, "\"metrics\" must be an array of rows");
		goto out;
	}
	m = xcalloc(1, sizeof(*m));
	m->path = xstrdup(path);
	m->rows = xcalloc(json_array_size(rows) + 1, sizeof(*m->rows));
	m->names_mask = 15;
	while (m->names_mask < json_array_size(rows) * 2)
		m->names_mask = m->names_mask * 2 + 1;
	m->names = xcalloc(m->names_mask + 1, sizeof(*m->names));
	for (size_t i = 0; i < json_array_size(rows); i++)
		load_row(&L, m, i, json_array_get(rows, i));
	if (!L.nproblems) {
		struct expr **roots = xcalloc(m->nrows + 1, sizeof(*roots));
		for (size_t i = 0; i < m->nrows; i++)
			roots[i] = m->rows[i].expr;
		m->nmemo = expr_memo_assign_work(roots, m->nrows, &m->load_work);
		m->load_work += L.work;
		free(roots);
		collect_inputs(m, L.inputs);
		L.inputs.v = NULL;
	}
out:
	if (L.nproblems) {
		mapping_free(m);
		m = NULL;
	}
	json_decref(root);
	jsonpos_free(&L.pos);
	for (size_t i = 0; i < L.inputs.n && L.inputs.v; i++)
		free(L.inputs.v[i]);
	free(L.inputs.v);
	free(text);
	return m;
}

int row_enabled(const struct row *r, const char *flags)
{
	if (!r->enabled_by)
		return 1;
	size_t n = strlen(r->enabled_by);
	for (const char *p = flags; p && *p;) {
		const char *e = strchr(p, ',');
		size_t len = e ? (size_t)(e - p) : strlen(p);
		if (len == n && memcmp(p, r->enabled_by, n) == 0)
			return 1;
		p = e ? e + 1 : NULL;
	}
	return 0;
}

unsigned mapping_endpoints(const struct mapping *m, const char *flags)
{
	unsigned eps = 0;
	for (size_t i = 0; i < m->nrows; i++)
		if (row_enabled(&m->rows[i], flags))
			eps |= m->rows[i].endpoints;
	return eps;
}

/* ---- evaluation ---- */

static int elem_cmp(const void *a, const void *b)
{
	const struct velem *x = a, *y = b;
	return labels_cmp(x->labels, x->nlabels, y->labels, y->nlabels);
}

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
				if (slice_eq(l.name, l.nlen, r->renames[j].key, strlen(r->renames[j].key))) {
					l.name = r->renames[j].value;
					l.nlen = (uint32_t)strlen(l.name);
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
			if (labels_find(ls, n, key, strlen(key)) < 0)
				ls[n++] = (struct label){ key, r->fills[j].value, (uint32_t)strlen(key),
							  (uint32_t)strlen(r->fills[j].value) };
		}
		labels_sort(ls, n);
		e->labels = ls;
		e->nlabels = n;
		e->hash = labels_hash(ls, n);
	}
	return 0;
}

/* slurmctld copies node, user and account names verbatim, so a label value may be invalid UTF-8,
 * which would make Prometheus refuse the whole scrape. Such values are repaired (U+FFFD) in the
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
			if (utf8_valid(l->value, l->vlen))
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
			ls[k].vlen = (uint32_t)utf8_repair(d, l->value, l->vlen);
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

/* Is a family the row reads absent from its endpoint's answer (which was usable: the row's
 * endpoints are up)? Computing without it would serve a part of the data as the whole (a NaN, a 0,
 * a node's status label flipped), so the row is left out unless it says the absence is normal.
 * Returns the first such family, or NULL; *absent is set when an absent_ok family is absent. */
static const char *missing_input(const struct row *r, const struct expr_source *src, int *absent)
{
	for (size_t i = 0; i < r->ninputs; i++) {
		const char *name = r->inputs[i].name;
		const struct expo *e = src->expos[endpoint_for_metric(name)];
		const struct expo_family *f = e ? expo_find(e, name, strlen(name)) : NULL;
		if (f && f->n)
			continue;
		if (!r->inputs[i].absent_ok)
			return name;
		*absent = 1;
	}
	return NULL;
}

/* Sort keys: 16 bytes of the first label's value, big-endian and zero-padded, when every element's
 * first label has the same name; the bytes after the prefix all the values share (node names
 * "cluster-node-00017"...). Their order is labels_cmp's wherever they differ, and a tie falls back
 * to labels_cmp. So most comparisons are one or two integer compares. */
struct skey {
	uint64_t k[2];
	size_t i;
};

static int skey_cmp(const struct skey *x, const struct skey *y, const struct vec *v)
{
	if (x->k[0] != y->k[0])
		return x->k[0] < y->k[0] ? -1 : 1;
	if (x->k[1] != y->k[1])
		return x->k[1] < y->k[1] ? -1 : 1;
	return elem_cmp(&v->e[x->i], &v->e[y->i]);
}

static inline uint64_t be64(const unsigned char *b)
{
	return (uint64_t)b[0] << 56 | (uint64_t)b[1] << 48 | (uint64_t)b[2] << 40 | (uint64_t)b[3] << 32 |
	       (uint64_t)b[4] << 24 | (uint64_t)b[5] << 16 | (uint64_t)b[6] << 8 | b[7];
}

static void make_keys(const struct vec *v, struct skey *keys)
{
	const struct label *first = v->e[0].nlabels ? &v->e[0].labels[0] : NULL;
	int usable = first != NULL;
	size_t common = first ? first->vlen : 0;
	for (size_t i = 1; i < v->n && usable; i++) {
		const struct label *l = &v->e[i].labels[0];
		usable = v->e[i].nlabels && slice_eq(l->name, l->nlen, first->name, first->nlen);
		if (usable) {
			size_t c = 0, max = l->vlen < common ? l->vlen : common;
			while (c < max && l->value[c] == first->value[c])
				c++;
			common = c;
		}
	}
	for (size_t i = 0; i < v->n; i++) {
		unsigned char b[16] = { 0 };
		if (usable) {
			const struct label *l = &v->e[i].labels[0];
			size_t len = l->vlen - common; /* every value is at least `common` long */
			memcpy(b, l->value + common, len < 16 ? len : 16);
		}
		keys[i].k[0] = be64(b);
		keys[i].k[1] = be64(b + 8);
		keys[i].i = i;
	}
}

/* Where each ascending run of keys starts; runs[nruns] = n. *dup is set if neighbours are equal. */
static size_t find_runs(const struct skey *k, size_t n, const struct vec *v, size_t *runs, int *dup)
{
	size_t nruns = 0;
	runs[nruns++] = 0;
	for (size_t i = 1; i < n; i++) {
		int c = skey_cmp(&k[i - 1], &k[i], v);
		if (c > 0)
			runs[nruns++] = i;
		*dup |= c == 0;
	}
	runs[nruns] = n;
	return nruns;
}

/* Keys in no order (per user, per account): an LSD radix sort of the 16 key bytes, least
 * significant first, skipping a byte that is the same in every key. No comparisons, so no branch
 * the processor has to guess; stable, so equal keys stay together for sort_ties(). Returns the
 * buffer (k or tmp) that holds the result. */
static struct skey *radix_sort(struct skey *k, struct skey *tmp, size_t n)
{
	size_t count[256];
	for (int byte = 15; byte >= 0; byte--) {
		int w = byte / 8, shift = (7 - byte % 8) * 8;
		memset(count, 0, sizeof(count));
		for (size_t i = 0; i < n; i++)
			count[(k[i].k[w] >> shift) & 255]++;
		if (count[(k[0].k[w] >> shift) & 255] == n)
			continue;
		size_t pos = 0;
		for (int d = 0; d < 256; d++) {
			size_t c = count[d];
			count[d] = pos;
			pos += c;
		}
		for (size_t i = 0; i < n; i++)
			tmp[count[(k[i].k[w] >> shift) & 255]++] = k[i];
		struct skey *t = k;
		k = tmp;
		tmp = t;
	}
	return k;
}

static int tie_cmp(const void *a, const void *b, void *v)
{
	return elem_cmp(&((const struct vec *)v)->e[((const struct skey *)a)->i],
			&((const struct vec *)v)->e[((const struct skey *)b)->i]);
}

/* Order each run of equal keys by label set. Returns 1 if two elements have the same label set
 * (equal neighbours once a run is sorted). */
static int sort_ties(struct skey *k, size_t n, const struct vec *v)
{
	for (size_t lo = 0, hi; lo < n; lo = hi) {
		for (hi = lo + 1; hi < n && k[hi].k[0] == k[lo].k[0] && k[hi].k[1] == k[lo].k[1]; hi++)
			;
		if (hi - lo < 2)
			continue;
		qsort_r(k + lo, hi - lo, sizeof(*k), tie_cmp, (void *)v);
		for (size_t i = lo + 1; i < hi; i++)
			if (tie_cmp(&k[i - 1], &k[i], (void *)v) == 0)
				return 1;
	}
	return 0;
}

/* Sort by label set. Results are usually a few runs already in order (one per branch of an `or`,
 * each in the payload's order), so this is a natural merge sort (of keys, see above): find the
 * runs, merge neighbours until one is left, O(n log runs); results in no order (per user) are
 * radix sorted instead. The scratch space comes from the arena. Returns 1 if two elements have the
 * same label set: equal elements are neighbours within a run, meet at the heads of two runs being
 * merged, or share a key and meet in sort_ties(), so every such pair is compared. */
static int sort_series(struct vec *v, struct arena *a)
{
	size_t n = v->n, nruns = 0;
	int dup = 0;
	if (n < 2)
		return 0;
	struct skey *src = arena_alloc(a, n * sizeof(*src));
	make_keys(v, src);
	size_t *runs = arena_alloc(a, (n + 1) * sizeof(*runs));
	nruns = find_runs(src, n, v, runs, &dup);
	if (nruns == 1 || dup)
		return dup; /* in order already (or refused): nothing moves */
	struct skey *dst = arena_alloc(a, n * sizeof(*dst));
	if (nruns > n / 8 && n >= 512) { /* no order to speak of, and enough keys to pay for 256 buckets */
		src = radix_sort(src, dst, n);
		if (sort_ties(src, n, v))
			return 1;
		nruns = 1;
	}
	while (nruns > 1) {
		size_t out = 0;
		for (size_t r = 0; r < nruns; r += 2) {
			size_t lo = runs[r];
			if (r + 1 == nruns) { /* the odd run out is carried over as it is */
				memcpy(dst + lo, src + lo, (n - lo) * sizeof(*dst));
				runs[out++] = lo;
				break;
			}
			size_t mid = runs[r + 1], hi = runs[r + 2]; /* runs[nruns] == n */
			size_t i = lo, j = mid, k = lo;
			while (i < mid && j < hi) {
				int c = skey_cmp(&src[j], &src[i], v);
				dup |= c == 0;
				dst[k++] = c < 0 ? src[j++] : src[i++];
			}
			memcpy(dst + k, src + i, (mid - i) * sizeof(*dst));
			k += mid - i;
			memcpy(dst + k, src + j, (hi - j) * sizeof(*dst));
			runs[out++] = lo;
		}
		runs[out] = n;
		nruns = out;
		struct skey *t = src;
		src = dst;
		dst = t;
	}
	struct velem *sorted = arena_alloc(a, n * sizeof(*sorted));
	for (size_t i = 0; i < n; i++)
		sorted[i] = v->e[src[i].i];
	v->e = sorted;
	return dup;
}

static void eval_row(const struct row *r, const struct expr_source *src, const int up[EP_COUNT], struct arena *a,
		     struct row_result *res)
{
	memset(res, 0, sizeof(*res));
	if (r->fidelity == FID_UNAVAILABLE) {
		res->status = ROW_UNAVAILABLE;
		return;
	}
	for (int ep = 0; ep < EP_COUNT; ep++)
		if ((r->endpoints & (1u << ep)) && !up[ep]) {
			res->status = ROW_INPUT_DOWN;
			snprintf(res->err, sizeof(res->err), "endpoint %s is down", endpoints[ep].name);
			return;
		}
	int absent = 0;
	const char *lost = missing_input(r, src, &absent);
	if (lost) {
		res->status = ROW_INPUT_MISSING;
		snprintf(res->err, sizeof(res->err), "native family %s is absent from %s", lost,
			 endpoints[endpoint_for_metric(lost)].path);
		return;
	}
	struct vec shared;
	if (expr_eval(r->expr, src, a, &shared, res->err, sizeof(res->err), NULL) < 0) {
		res->status = ROW_ERROR;
		res->v.n = 0;
		return;
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
	if (!res->v.n && !r->drop_zero && !absent) {
		/* only drop_zero rows, and rows whose absent_ok input is absent, may legitimately come
		 * out empty; for the others a guard in the expression refused the data (e.g. GPUs
		 * allocated but none counted: no gres/gpu TRES) */
		res->status = ROW_NO_INPUT;
		snprintf(res->err, sizeof(res->err), "the expression gave no series");
		return;
	}
	if (sort_series(&res->v, a)) {
		res->status = ROW_ERROR;
		snprintf(res->err, sizeof(res->err), "two series with the same labels%s",
			 res->repaired ? " (once invalid UTF-8 in label values was repaired)" : "");
		res->v.n = 0;
	}
}

void mapping_scrape_begin(const struct mapping *m, const struct expo *const expos[EP_COUNT], const int up[EP_COUNT],
			  struct arena *scrape_arena, struct mapping_scrape *ms)
{
	ms->src = (struct expr_source){ expos, EP_COUNT, expr_memo_alloc(scrape_arena, m->nmemo), m->nmemo, scrape_arena };
	ms->up = up;
}

void mapping_eval_row(const struct mapping *m, size_t i, const char *flags, const struct mapping_scrape *ms,
		      struct arena *row_arena, struct row_result *res)
{
	if (!row_enabled(&m->rows[i], flags)) {
		memset(res, 0, sizeof(*res));
		res->status = ROW_DISABLED;
		return;
	}
	eval_row(&m->rows[i], &ms->src, ms->up, row_arena, res);
}

void mapping_eval(const struct mapping *m, const char *flags, const struct expo *const expos[EP_COUNT],
		  const int up[EP_COUNT], struct arena *a, struct row_result *results)
{
	struct mapping_scrape ms;
	mapping_scrape_begin(m, expos, up, a, &ms);
	for (size_t i = 0; i < m->nrows; i++)
		mapping_eval_row(m, i, flags, &ms, a, &results[i]);
}
