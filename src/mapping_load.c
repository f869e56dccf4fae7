/* mapping_load.c: read, check and compile the mapping table (docs/mapping.md); free it; answer
 * what a loaded table reads. See mapping.h. */
#include "mapping.h"
#include "buf.h"
#include "jsonpos.h"

#include <errno.h>
#include <stdarg.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAPPING_MAX_BYTES (4u << 20)

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
static const char *const known_flags[] = { "gpus-acct", NULL };

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
			problem(L, jsonpos_field(&L->pos, ri, "enabled_by"), rname, "\"enabled_by\" must be one of: gpus-acct");
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
