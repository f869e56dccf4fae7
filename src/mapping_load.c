/* mapping_load.c: read, check and compile the mapping table (docs/mapping.md); free it; find a row
 * by name. What a scrape asks of the loaded table is in mapping.c. See mapping.h. */
#include "names.h"
#include "mapping.h"
#include "mapping_int.h"
#include "buf.h"
#include "file_read.h"
#include "jsonpos.h"

#include <stdarg.h>
#include <stddef.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAPPING_MAX_BYTES (4u << 20)

static void inputs_free(struct row_input *in, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(in[i].name);
	free(in);
}

static void row_clear(struct row *r)
{
	free(r->name);
	free(r->help);
	free(r->type);
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
	for (size_t k = 0; k < r->nforms; k++) {
		free(r->forms[k].expr_src);
		free(r->forms[k].note);
		expr_free(r->forms[k].expr);
		inputs_free(r->forms[k].inputs, r->forms[k].ninputs);
		if (r->forms[k].wrap) {
			free(r->forms[k].wrap->bound_src);
			expr_free(r->forms[k].wrap->bound);
			free(r->forms[k].wrap);
		}
	}
	free(r->forms);
}

void mapping_free(struct mapping *m)
{
	if (!m)
		return;
	mapping_free(m->next); /* at most MAPPING_SET_MAX deep */
	for (size_t i = 0; i < m->nrows; i++)
		row_clear(&m->rows[i]);
	free(m->rows);
	for (size_t i = 0; i < m->ninputs; i++)
		free(m->inputs[i]);
	free(m->inputs);
	hmap_free(&m->names);
	free(m->path);
	mapping_catalog_free(m);
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
	struct mapping *m;        /* being built */
	struct row *row;          /* the row being read (m->rows[m->nrows]) */
	size_t ri;                /* its index in "metrics" */
	const char *rname;        /* its name for messages ("#3" when "name" is not a string) */
	struct row_form *form;    /* the form being read: the row's native form while its own keys are */
	const char *form_key;     /* NULL while the row's own keys are read; in a preferred form the row's
				     key ("prefer"), where its problems are reported */
	char form_name[48];       /* the preferred form, for messages: "prefer[1]" */
	size_t form_inputs_cap;   /* of form->inputs */
	char bad_record[64];      /* the first name of the record's namespace a form read that is no
				     family of it ("": none) */
};

/* "FILE:LINE:COLUMN: row 'NAME': FORM: message" (row and form NULL: not named). */
static void vproblem(struct loader *L, struct jpos at, const char *row, const char *form, const char *fmt, va_list ap)
	__attribute__((format(printf, 5, 0)));
static void vproblem(struct loader *L, struct jpos at, const char *row, const char *form, const char *fmt, va_list ap)
{
	L->nproblems++;
	if (!L->problems)
		return;
	buf_printf(L->problems, "%s:%d:%d: ", L->path, at.line, at.col);
	if (row)
		buf_printf(L->problems, "row '%s': ", row);
	if (form)
		buf_printf(L->problems, "%s: ", form);
	buf_vprintf(L->problems, fmt, ap);
	buf_putc(L->problems, '\n');
}

static void problem(struct loader *L, struct jpos at, const char *row, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static void problem(struct loader *L, struct jpos at, const char *row, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vproblem(L, at, row, NULL, fmt, ap);
	va_end(ap);
}

/* A problem of the current row (and form) at `at`. */
static void problem_in(struct loader *L, struct jpos at, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void problem_in(struct loader *L, struct jpos at, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vproblem(L, at, L->rname, L->form_key ? L->form_name : NULL, fmt, ap);
	va_end(ap);
}

/* A problem of the current row, at its field key (or at the row: key NULL); in a preferred form, at
 * the row's key of the form, naming the form. */
static void row_problem(struct loader *L, const char *key, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void row_problem(struct loader *L, const char *key, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vproblem(L, jsonpos_field(&L->pos, L->ri, L->form_key ? L->form_key : key), L->rname,
		 L->form_key ? L->form_name : NULL, fmt, ap);
	va_end(ap);
}

static int label_name_is_valid(const char *s)
{
	return names_is_label_name(s) && strncmp(s, "__", 2) != 0;
}

/* Comparing each row's name with every row before it was quadratic (docs/performance.md): rows
 * are found by name in a map with room for all of them (m->names). Returns the row of this name's
 * index + 1, or 0; *work counts the rows compared (and the lookup). */
static size_t name_row(const struct mapping *m, const char *name, size_t *work)
{
	struct hmap_iter it = hmap_iter(&m->names, hmap_hash(name, strlen(name)));
	(*work)++;
	for (size_t i; (i = hmap_next(&it)) != HMAP_NONE;) {
		(*work)++;
		if (strcmp(m->rows[i].name, name) == 0)
			return i + 1;
	}
	return 0;
}

int mapping_row_index(const struct mapping *m, const char *name)
{
	size_t work = 0;
	return (int)name_row(m, name, &work) - 1;
}

static void load_kv(struct loader *L, json_t *obj, const char *field, struct kv **out, size_t *n, int keys_are_labels,
		    int values_are_labels)
{
	const char *k;
	json_t *v;
	*out = xcalloc(json_object_size(obj) + 1, sizeof(**out));
	json_object_foreach(obj, k, v) {
		if (!json_is_string(v)) {
			row_problem(L, field, "\"%s\": value of \"%s\" must be a string", field, k);
			continue;
		}
		const char *sv = json_string_value(v);
		if ((keys_are_labels && !label_name_is_valid(k)) || (values_are_labels && !label_name_is_valid(sv))) {
			row_problem(L, field, "\"%s\": \"%s\": \"%s\" is not a valid label name", field, k,
				    keys_are_labels && !label_name_is_valid(k) ? k : sv);
			continue;
		}
		(*out)[*n].key = xstrdup(k);
		(*out)[*n].value = xstrdup(sv);
		(*n)++;
	}
}

/* One walk over a form's expression for the sources it reads and the inputs of the mapping (a name
 * repeated in a form, as in a + a + a, is stored once). */
static void note_input(const char *name, void *ctx)
{
	struct loader *L = ctx;
	struct inputs *in = &L->inputs;
	struct row_form *f = L->form;
	if (in->n > in->row_start && strcmp(in->v[in->n - 1], name) == 0)
		return; /* as the name before it: its source is noted already */
	if (mapping_is_record_family(name)) { /* the scrape's own record: no source, no payload keeps it */
		if (mapping_record_index(name) < 0 && !L->bad_record[0])
			snprintf(L->bad_record, sizeof(L->bad_record), "%s", name);
		f->reads_record = L->m->reads_record = 1;
		return;
	}
	f->sources |= 1u << source_for_metric(name);
	in->v = xgrow(in->v, &in->cap, in->n + 1, sizeof(*in->v));
	in->v[in->n++] = xstrdup(name);
	f->inputs = xgrow(f->inputs, &L->form_inputs_cap, f->ninputs + 1, sizeof(*f->inputs));
	f->inputs[f->ninputs++] = (struct row_input){ xstrdup(name), 0 };
}

/* A family a "wraps_at" bound reads: fetched and kept like the rows' inputs, but not one of its
 * form's inputs (a bound that cannot be read marks the form approximate, never leaves it out). */
static void note_bound_input(const char *name, void *ctx)
{
	struct loader *L = ctx;
	struct inputs *in = &L->inputs;
	if (mapping_is_record_family(name)) {
		if (!L->bad_record[0])
			snprintf(L->bad_record, sizeof(L->bad_record), "%s", name);
		return;
	}
	L->form->wrap->sources |= 1u << source_for_metric(name);
	in->v = xgrow(in->v, &in->cap, in->n + 1, sizeof(*in->v));
	in->v[in->n++] = xstrdup(name);
}

static int row_input_cmp(const void *a, const void *b)
{
	return strcmp(((const struct row_input *)a)->name, ((const struct row_input *)b)->name);
}

/* The form's inputs sorted, each once (a form may read a family in several places). */
static void unique_form_inputs(struct row_form *f)
{
	size_t u = 0;
	if (f->ninputs)
		qsort(f->inputs, f->ninputs, sizeof(*f->inputs), row_input_cmp);
	for (size_t i = 0; i < f->ninputs; i++) {
		if (u && !strcmp(f->inputs[u - 1].name, f->inputs[i].name))
			free(f->inputs[i].name);
		else
			f->inputs[u++] = f->inputs[i];
	}
	f->ninputs = u;
}

/* Compile form f's expression (f->expr_src); note the sources and metric names it reads. A syntax
 * error is reported at `at`, inside the string when at is a JSON string's position. */
static int compile_form(struct loader *L, struct row_form *f, struct jpos at, int at_string, const char *what)
{
	size_t errpos = 0;
	char err[160];
	f->expr = expr_compile(f->expr_src, &errpos, err, sizeof(err));
	if (!f->expr) {
		problem_in(L, at_string ? jsonpos_in_string(L->text, L->len, at, errpos) : at, "%s: %s", what, err);
		return -1;
	}
	L->form = f;
	L->inputs.row_start = L->inputs.n;
	L->form_inputs_cap = 0;
	expr_foreach_metric(f->expr, note_input, L);
	unique_form_inputs(f);
	if (L->bad_record[0]) {
		problem_in(L, at, "%s: %s is no family of the scrape's record (" MAPPING_RECORD_PREFIX "*: %s, %s, %s, %s)",
			   what, L->bad_record, mapping_record_name(REC_UP), mapping_record_name(REC_DURATION),
			   mapping_record_name(REC_AGE), mapping_record_name(REC_ERRORS));
		L->bad_record[0] = '\0';
		return -1;
	}
	return 0;
}

/* ---- the keys of a row and of a preferred form: a table each (as tmux's options_table) for the
 * loader, its messages and the docs (docs/mapping.md lists exactly these keys; test_mapping checks
 * it) ---- */

enum field_type { FT_STRING, FT_NUMBER, FT_BOOLEAN, FT_OBJECT, FT_ARRAY };
enum field_presence {
	FP_OPTIONAL,
	FP_REQUIRED,
	FP_UNLESS_EXACT,       /* needed by a form that is not exact (note) */
	FP_UNLESS_UNAVAILABLE, /* needed by, and only allowed in, a form that is not unavailable (expr) */
};

struct field;
/* Check a value of the field's JSON type and store it in the row (L->row) or in the form being
 * read (L->form: the row's native form while the row's own keys are read). */
typedef void (*field_load_fn)(struct loader *L, const struct field *f, json_t *v);

struct field {
	const char *key;
	enum field_type type;
	enum field_presence presence;
	const char *what;                /* the value's rule, as in "\"key\" must be <what>" */
	field_load_fn load;
	size_t offset;                   /* where load_string and load_one_of store it in struct row */
	const char *const *choices;      /* load_one_of, load_fidelity: the allowed values */
	const char *doc;                 /* one line */
};

/* The keys of an object, in the order they are read, and what the messages call such an object. */
struct field_table {
	const struct field *fields;
	size_t n;
	const char *noun;                /* "row", "form" */
};

static void bad_value(struct loader *L, const struct field *f)
{
	row_problem(L, f->key, "\"%s\" must be %s", f->key, f->what);
}

static int one_of(const char *const *choices, const char *s)
{
	for (int i = 0; choices[i]; i++)
		if (strcmp(choices[i], s) == 0)
			return i;
	return -1;
}

static int choice(const struct field *f, const char *s)
{
	return one_of(f->choices, s);
}

static void load_string(struct loader *L, const struct field *f, json_t *v)
{
	*(char **)((char *)L->row + f->offset) = xstrdup(json_string_value(v));
}

static void load_one_of(struct loader *L, const struct field *f, json_t *v)
{
	if (choice(f, json_string_value(v)) < 0)
		bad_value(L, f);
	else
		load_string(L, f, v);
}

/* "enabled_by": the flag, as its bit (enum row_flag). */
static void load_flag(struct loader *L, const struct field *f, json_t *v)
{
	int i = choice(f, json_string_value(v));
	if (i < 0)
		bad_value(L, f);
	else
		L->row->enabled_by = 1u << i;
}

/* A row's name: a valid metric name, not reserved, not already a row's. */
static void load_name(struct loader *L, const struct field *f, json_t *v)
{
	const char *name = json_string_value(v);
	size_t first;
	if (!names_is_metric_name(name))
		bad_value(L, f);
	else if (strncmp(name, "slurm_exporter_shim_", 20) == 0)
		row_problem(L, f->key, "names starting with slurm_exporter_shim_ are reserved for self metrics");
	else if ((first = name_row(L->m, name, &L->work)))
		row_problem(L, f->key, "duplicate row name (first defined at row %zu)", first);
	else
		load_string(L, f, v);
}

static void load_default(struct loader *L, const struct field *f, json_t *v)
{
	(void)f;
	L->row->has_default = 1;
	L->row->defval = json_number_value(v);
}

static void load_drop_zero(struct loader *L, const struct field *f, json_t *v)
{
	(void)f;
	L->row->drop_zero = json_is_true(v);
}

static void load_renames(struct loader *L, const struct field *f, json_t *v)
{
	load_kv(L, v, f->key, &L->row->renames, &L->row->nrenames, 1, 1);
}

static void load_fills(struct loader *L, const struct field *f, json_t *v)
{
	load_kv(L, v, f->key, &L->row->fills, &L->row->nfills, 1, 0);
}

/* ---- a form's keys ---- */

static void load_fidelity(struct loader *L, const struct field *f, json_t *v)
{
	int i = choice(f, json_string_value(v));
	if (i < 0)
		bad_value(L, f);
	else
		L->form->fidelity = (enum fidelity)i;
}

static void load_note(struct loader *L, const struct field *f, json_t *v)
{
	(void)f;
	L->form->note = xstrdup(json_string_value(v));
}

/* Compile the form's expression; note the sources and metric names it reads. The native form's
 * syntax errors are reported inside the string, a preferred form's at the row's key of the form. */
static void load_expr(struct loader *L, const struct field *f, json_t *v)
{
	L->form->expr_src = xstrdup(json_string_value(v));
	compile_form(L, L->form, jsonpos_field(&L->pos, L->ri, L->form_key ? L->form_key : f->key), !L->form_key,
		     f->key);
}

/* "absent_ok": families the expression reads that may be absent when their endpoint's answer names
 * no family at all (no job in memory): they then read as no series, and the row is served. Any other
 * absence, these families' from an answer naming others included, leaves the row out
 * (input_missing, mapping.c), whatever "default" says. Not checked against an expression that did
 * not compile. */
static void load_absent_ok(struct loader *L, const struct field *f, json_t *v)
{
	struct row_form *form = L->form;
	size_t i;
	json_t *e;
	if (form->expr_src && !form->expr)
		return;
	json_array_foreach(v, i, e) {
		struct row_input k, *in;
		if (!json_is_string(e)) {
			row_problem(L, f->key, "\"%s\"[%zu] must be a string", f->key, i);
			continue;
		}
		k.name = (char *)json_string_value(e);
		in = form->ninputs ? bsearch(&k, form->inputs, form->ninputs, sizeof(*form->inputs), row_input_cmp) : NULL;
		if (!in)
			row_problem(L, f->key, "\"%s\": the expression does not read \"%s\"", f->key, k.name);
		else
			in->absent_ok = 1;
	}
}

/* "wraps_at": {"bound": EXPR, "limit": N}: the counters the form reads wrap at N, so it is served
 * approximate on a scrape where EXPR (over counters that do not wrap) gives a value at or over N
 * (mapping.h's struct row_wrap). */
static void load_wraps_at(struct loader *L, const struct field *f, json_t *v)
{
	json_t *bound = json_object_get(v, "bound"), *limit = json_object_get(v, "limit");
	const char *k;
	json_t *e;
	size_t errpos = 0;
	char err[160];
	json_object_foreach(v, k, e) {
		if (strcmp(k, "bound") && strcmp(k, "limit"))
			row_problem(L, f->key, "\"%s\": unknown key \"%s\" (expected bound, limit)", f->key, k);
	}
	if (L->form->fidelity == FID_UNAVAILABLE) {
		row_problem(L, f->key, "an unavailable row has no \"%s\"", f->key);
		return;
	}
	if (!json_is_number(limit) || !(json_number_value(limit) > 0) || json_number_value(limit) > 9007199254740992.0)
		row_problem(L, f->key, "\"%s\": \"limit\" must be a number above 0 (and at most 2^53)", f->key);
	if (!json_is_string(bound)) {
		row_problem(L, f->key, "\"%s\": \"bound\" must be a string (an expression)", f->key);
		return;
	}
	struct row_wrap *w = xcalloc(1, sizeof(*w));
	w->bound_src = xstrdup(json_string_value(bound));
	w->limit = json_is_number(limit) ? json_number_value(limit) : 0;
	L->form->wrap = w;
	if (!(w->bound = expr_compile(w->bound_src, &errpos, err, sizeof(err)))) {
		row_problem(L, f->key, "\"%s\": \"bound\": %s (at byte %zu)", f->key, err, errpos);
		return;
	}
	expr_foreach_metric(w->bound, note_bound_input, L);
	if (L->bad_record[0]) {
		row_problem(L, f->key, "\"%s\": \"bound\": reads %s: a bound reads the native counters, not the "
			    "scrape's record", f->key, L->bad_record);
		L->bad_record[0] = '\0';
	}
}

static void load_prefer(struct loader *L, const struct field *f, json_t *v);

/* histogram and summary: an unavailable row's only (row_type_rule) */
static const char *const type_choices[] = { "gauge", "counter", "untyped", "histogram", "summary", NULL };
#define TYPES_SERVED 3 /* type_choices[0..2]: what a served row may be */
static const char *const fidelity_choices[] = { [FID_EXACT] = "exact", [FID_APPROXIMATE] = "approximate",
						[FID_UNAVAILABLE] = "unavailable", NULL };
static const char *const form_fidelity_choices[] = { [FID_EXACT] = "exact", [FID_APPROXIMATE] = "approximate", NULL };
static const char *const known_flags[] = { "gpus-acct", "slurmrestd-jobs", NULL }; /* bit i: enum row_flag 1u << i */
_Static_assert(ROW_FLAG_REST_JOBS == 1u << 1, "known_flags[] is in the order of enum row_flag");

/* In the order they are read: a key's checks may depend on the keys above it (note and expr on
 * fidelity, absent_ok on expr, wraps_at on fidelity). fidelity, note, expr, absent_ok and wraps_at
 * make the row's native form. */
static const struct field row_fields[] = {
	{ "name", FT_STRING, FP_REQUIRED, "a valid metric name", load_name, offsetof(struct row, name), NULL,
	  "the output family's name, unique in the file" },
	{ "help", FT_STRING, FP_REQUIRED, "a string", load_string, offsetof(struct row, help), NULL, "the HELP text" },
	{ "type", FT_STRING, FP_REQUIRED,
	  "\"gauge\", \"counter\" or \"untyped\" (\"histogram\" or \"summary\" on an unavailable row)", load_one_of,
	  offsetof(struct row, type), type_choices, "the TYPE" },
	{ "fidelity", FT_STRING, FP_REQUIRED, "\"exact\", \"approximate\" or \"unavailable\"", load_fidelity, 0,
	  fidelity_choices, "how close to the old exporter's value it is" },
	{ "note", FT_STRING, FP_UNLESS_EXACT, "a string", load_note, 0, NULL, "why the row is not exact" },
	{ "expr", FT_STRING, FP_UNLESS_UNAVAILABLE, "a string", load_expr, 0, NULL, "the expression over native families" },
	{ "default", FT_NUMBER, FP_OPTIONAL, "a number", load_default, 0, NULL, "the value when the expression gives nothing" },
	{ "drop_zero", FT_BOOLEAN, FP_OPTIONAL, "true or false", load_drop_zero, 0, NULL, "leave out series whose value is 0" },
	{ "rename_labels", FT_OBJECT, FP_OPTIONAL, "an object", load_renames, 0, NULL, "native label name -> legacy name" },
	{ "fill_labels", FT_OBJECT, FP_OPTIONAL, "an object", load_fills, 0, NULL, "label -> value for series that lack it" },
	{ "absent_ok", FT_ARRAY, FP_OPTIONAL, "an array of native family names", load_absent_ok, 0, NULL,
	  "native families the expression reads that may be absent" },
	{ "wraps_at", FT_OBJECT, FP_OPTIONAL, "an object {\"bound\": expression, \"limit\": number}", load_wraps_at, 0, NULL,
	  "the counters it reads wrap at limit: approximate while bound reaches it" },
	{ "enabled_by", FT_STRING, FP_OPTIONAL, "one of: gpus-acct, slurmrestd-jobs", load_flag, 0, known_flags,
	  "the flag that enables the row" },
	{ "prefer", FT_ARRAY, FP_OPTIONAL, "an array of forms", load_prefer, 0, NULL,
	  "preferred forms (below), tried first, each while its sources are up" },
};

/* The keys of a preferred form (an element of "prefer"), in the order they are read. */
static const struct field form_fields[] = {
	{ "expr", FT_STRING, FP_REQUIRED, "a string", load_expr, 0, NULL, "the expression (over any source's families)" },
	{ "fidelity", FT_STRING, FP_REQUIRED, "\"exact\" or \"approximate\"", load_fidelity, 0, form_fidelity_choices,
	  "how close to the old exporter's value it is" },
	{ "note", FT_STRING, FP_UNLESS_EXACT, "a string", load_note, 0, NULL, "why the form is not exact" },
	{ "absent_ok", FT_ARRAY, FP_OPTIONAL, "an array of family names", load_absent_ok, 0, NULL,
	  "families the expression reads that may be absent" },
	{ "wraps_at", FT_OBJECT, FP_OPTIONAL, "an object {\"bound\": expression, \"limit\": number}", load_wraps_at, 0, NULL,
	  "the counters it reads wrap at limit: approximate while bound reaches it" },
};

#define TABLE(fields, noun) { fields, sizeof(fields) / sizeof(fields[0]), noun }
static const struct field_table row_table = TABLE(row_fields, "row");
static const struct field_table form_table = TABLE(form_fields, "form");

static int field_doc(const struct field_table *t, size_t i, struct mapping_field *out)
{
	static const char *const types[] = { "string", "number", "boolean", "object", "array" };
	static const char *const presence[] = { "no", "yes", "unless exact", "unless unavailable" };
	if (i >= t->n)
		return 0;
	*out = (struct mapping_field){ t->fields[i].key, types[t->fields[i].type], presence[t->fields[i].presence],
				       t->fields[i].doc };
	return 1;
}

int mapping_field(size_t i, struct mapping_field *out)
{
	return field_doc(&row_table, i, out);
}

int mapping_form_field(size_t i, struct mapping_field *out)
{
	return field_doc(&form_table, i, out);
}

static int type_ok(enum field_type t, const json_t *v)
{
	switch (t) {
	case FT_STRING: return json_is_string(v);
	case FT_NUMBER: return json_is_number(v);
	case FT_BOOLEAN: return json_is_boolean(v);
	case FT_OBJECT: return json_is_object(v);
	case FT_ARRAY: return json_is_array(v);
	}
	return 0;
}

/* One key of the object being read: its presence rule, its JSON type, then its own checks. */
static void load_field(struct loader *L, const struct field_table *t, const struct field *f, json_t *obj)
{
	json_t *v = json_object_get(obj, f->key);
	enum fidelity fid = L->form->fidelity; /* read before (a field order rule) */
	if (!v) {
		if (f->presence == FP_REQUIRED)
			bad_value(L, f);
		else if (f->presence == FP_UNLESS_EXACT && fid != FID_EXACT)
			row_problem(L, NULL, "a %s that is not exact needs a \"%s\" saying why", t->noun, f->key);
		else if (f->presence == FP_UNLESS_UNAVAILABLE && fid != FID_UNAVAILABLE)
			row_problem(L, NULL, "missing \"%s\" (only an unavailable %s has none)", f->key, t->noun);
	} else if (!type_ok(f->type, v)) {
		bad_value(L, f);
	} else if (f->presence == FP_UNLESS_UNAVAILABLE && fid == FID_UNAVAILABLE) {
		row_problem(L, f->key, "an unavailable %s has no \"%s\"", t->noun, f->key);
	} else {
		f->load(L, f, v);
	}
}

/* Every key of obj through table t: a key it does not have is an error listing the ones it has. */
static void load_object(struct loader *L, const struct field_table *t, json_t *obj)
{
	const char *k;
	json_t *v;
	json_object_foreach(obj, k, v) {
		size_t i = 0;
		while (i < t->n && strcmp(t->fields[i].key, k))
			i++;
		if (i < t->n)
			continue;
		struct buf keys;
		buf_init(&keys, 0);
		for (i = 0; i < t->n; i++)
			buf_printf(&keys, "%s%s", i ? ", " : "", t->fields[i].key);
		buf_putc(&keys, '\0');
		row_problem(L, k, "unknown field \"%s\" (expected one of: %s)", k, keys.data);
		buf_free(&keys);
	}
	for (size_t i = 0; i < t->n; i++)
		load_field(L, t, &t->fields[i], obj);
}

/* "prefer": the forms tried, in order, before the native form (mapping.h), each read through
 * form_fields; their problems are reported at the row's "prefer" key, naming the form. */
static void load_prefer(struct loader *L, const struct field *f, json_t *v)
{
	struct row_form *native = L->form;
	size_t i;
	json_t *e;
	json_array_foreach(v, i, e) {
		if (!json_is_object(e)) {
			row_problem(L, f->key, "\"%s\"[%zu] must be an object", f->key, i);
			continue;
		}
		L->form = &L->row->forms[i];
		L->form_key = f->key;
		snprintf(L->form_name, sizeof(L->form_name), "%s[%zu]", f->key, i);
		load_object(L, &form_table, e);
	}
	L->form = native;
	L->form_key = NULL;
}

/* A row whose "type" is histogram or summary documents a family the shim does not serve (it writes
 * one sample line per series, never a histogram's _bucket/_sum/_count): it must be unavailable, with
 * no preferred form. Not checked when its fidelity is not one of the choices (reported already). */
static void row_type_rule(struct loader *L, const struct row *r, json_t *jr)
{
	json_t *fid = json_object_get(jr, "fidelity");
	if (!r->type || one_of(type_choices, r->type) < TYPES_SERVED || !json_is_string(fid) ||
	    one_of(fidelity_choices, json_string_value(fid)) < 0)
		return;
	if (r->nforms > 1 || r->forms[0].fidelity != FID_UNAVAILABLE)
		row_problem(L, "type", "a row of type \"%s\" must be unavailable, with no \"prefer\" (the shim serves "
			    "gauges, counters and untyped families only; such a row documents a family it does not serve)",
			    r->type);
}

static void load_row(struct loader *L, struct mapping *m, size_t ri, json_t *jr)
{
	struct row *r = &m->rows[m->nrows];
	char label[32];
	json_t *v;
	size_t before = L->nproblems;

	memset(r, 0, sizeof(*r));
	if (!json_is_object(jr)) {
		problem(L, jsonpos_field(&L->pos, ri, NULL), NULL, "metrics[%zu] must be an object", ri);
		return;
	}
	v = json_object_get(jr, "name");
	snprintf(label, sizeof(label), "#%zu", ri + 1);
	L->row = r;
	L->ri = ri;
	L->rname = json_is_string(v) ? json_string_value(v) : label;
	v = json_object_get(jr, "prefer");
	r->nforms = (json_is_array(v) ? json_array_size(v) : 0) + 1;
	r->forms = xcalloc(r->nforms, sizeof(*r->forms));
	L->form = &r->forms[r->nforms - 1];
	load_object(L, &row_table, jr);
	row_type_rule(L, r, jr);
	if (L->nproblems != before) {
		row_clear(r);
		return;
	}
	hmap_put(&m->names, hmap_hash(r->name, strlen(r->name)), m->nrows);
	for (size_t k = 0; k < r->nforms; k++)
		m->sources |= r->forms[k].sources | (r->forms[k].wrap ? r->forms[k].wrap->sources : 0);
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

/* A problem of "validated_on" (mapping_catalog.c), at its key. */
static void catalog_problem(void *ctx, const char *msg)
{
	struct loader *L = ctx;
	problem(L, jsonpos_top(&L->pos, "validated_on"), NULL, "validated_on: %s", msg);
}

struct mapping *mapping_load(const char *path, struct buf *problems)
{
	struct loader L = { .path = path, .problems = problems };
	struct mapping *m = NULL;
	json_t *root = NULL, *rows;
	json_error_t jerr;
	char err[128];
	struct file_text file;
	const char *k;
	json_t *v;

	if (file_read(path, MAPPING_MAX_BYTES, 0, &file, err, sizeof(err)) < 0) { /* a FIFO: refused, never waited on */
		problem(&L, (struct jpos){ 1, 1, 0 }, NULL, "cannot read mapping file: %s", err);
		goto out;
	}
	L.text = file.data;
	L.len = file.len;
	root = json_loadb(L.text, L.len, JSON_REJECT_DUPLICATES, &jerr);
	if (!root) {
		problem(&L, (struct jpos){ jerr.line > 0 ? jerr.line : 1, jerr.column > 0 ? jerr.column : 1, 0 }, NULL,
			"invalid JSON: %s", jerr.text);
		goto out;
	}
	jsonpos_scan(L.text, L.len, &L.pos);
	if (!json_is_object(root)) {
		problem(&L, (struct jpos){ 1, 1, 0 }, NULL, "the top level must be an object with a \"metrics\" array");
		goto out;
	}
	json_object_foreach(root, k, v) {
		if (strcmp(k, "metrics") && strcmp(k, "description") && strcmp(k, "format_version") && strcmp(k, "validated_on"))
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
	L.m = m;
	m->path = xstrdup(path);
	m->rows = xcalloc(json_array_size(rows) + 1, sizeof(*m->rows));
	hmap_reset(&m->names, json_array_size(rows));
	for (size_t i = 0; i < json_array_size(rows); i++)
		load_row(&L, m, i, json_array_get(rows, i));
	if (!L.nproblems) {
		size_t nroots = 0;
		for (size_t i = 0; i < m->nrows; i++)
			nroots += 2 * m->rows[i].nforms;
		struct expr **roots = xcalloc(nroots + 1, sizeof(*roots));
		nroots = 0;
		for (size_t i = 0; i < m->nrows; i++) /* the native form first, as the rows were read */
			for (size_t j = 0; j < m->rows[i].nforms; j++) {
				const struct row_form *f = &m->rows[i].forms[(j + m->rows[i].nforms - 1) % m->rows[i].nforms];
				roots[nroots++] = f->expr;
				if (f->wrap)
					roots[nroots++] = f->wrap->bound;
			}
		m->nmemo = expr_memo_assign_work(roots, nroots, &m->load_work);
		m->load_work += L.work;
		free(roots);
		collect_inputs(m, L.inputs);
		L.inputs.v = NULL;
	}
	if ((v = json_object_get(root, "validated_on")) && !mapping_catalog_load(m, v, catalog_problem, &L) && !L.nproblems)
		mapping_catalog_check_inputs(m, catalog_problem, &L);
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
	file_text_free(&file);
	return m;
}

const char *fidelity_name(enum fidelity f)
{
	return fidelity_choices[f];
}
