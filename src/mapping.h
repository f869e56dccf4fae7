/* mapping.h: the mapping table (a JSON file, see docs/mapping.md), compiled once into rows.
 *
 * Each row makes one output family from an expression over the sources' families (slurmctld's
 * native metrics, slurmrestd's converted answers), then applies, in order: rename_labels,
 * fill_labels, drop_zero, default. Rows read source families only; they never see each other's
 * output, so a source's series can only leave the shim through a row.
 *
 * A row may also list preferred forms ("prefer", e.g. over slurmrestd's families): per scrape the
 * first form whose every source is up is evaluated instead of the row's own expression, which is
 * the fallback (the "native form": its expr, fidelity, note, sources and inputs).
 *
 * Code: mapping_load.c (loading and checks), mapping.c (the row driver and a row's steps),
 * series_sort.c (the output order and the duplicate check).
 *
 * Ownership: mapping_load returns a new mapping (mapping_free). mapping_run owns the memory of the
 * results it emits: a row's series (which also borrow from the mapping and the parsed answers) are
 * valid only during the emit call. */
#ifndef SHIM_MAPPING_H
#define SHIM_MAPPING_H

#include <stddef.h>

#include "source.h"
#include "expr.h"

enum fidelity { FID_EXACT, FID_APPROXIMATE, FID_UNAVAILABLE };

struct kv {
	char *key, *value;
};

/* A family a row reads, and whether its absence is normal when its endpoint's answer names no
 * family at all ("absent_ok"; from an answer naming others it is missing all the same). */
struct row_input {
	char *name;
	int absent_ok;
};

/* A preferred form: an expression used instead of the row's own while all its sources are up. */
struct row_form {
	char *expr_src, *note;      /* note: NULL when exact */
	enum fidelity fidelity;     /* exact or approximate */
	struct expr *expr;
	unsigned sources;           /* bit per enum source_id the expression reads */
	struct row_input *inputs;   /* as struct row's */
	size_t ninputs;
};

struct row {
	char *name, *help, *type, *note, *expr_src, *enabled_by;
	enum fidelity fidelity;
	struct expr *expr;          /* NULL when unavailable */
	struct kv *renames, *fills;
	size_t nrenames, nfills;
	int drop_zero, has_default;
	double defval;
	unsigned sources;           /* bit per enum source_id the expression reads */
	struct row_input *inputs;   /* the families the expression reads, each once */
	size_t ninputs;
	struct row_form *prefer;    /* tried in order before the row's own expression */
	size_t nprefer;
};

struct mapping {
	char *path;
	struct row *rows;
	size_t nrows;
	unsigned sources;           /* union over rows (enabled or not) and their preferred forms */
	size_t nmemo;               /* shared subexpressions (expr_memo_assign_work) */
	size_t load_work;           /* steps of the checks across rows and of expr_memo_assign_work: tests
				       check that it grows linearly with the file */
	char **inputs;              /* sorted, unique native names the rows read */
	size_t ninputs;
	size_t *names;              /* the rows by name (mapping_row_index): index + 1, 0 empty */
	size_t names_mask;
};

/* The index of the row called name, or -1. */
int mapping_row_index(const struct mapping *m, const char *name);
/* expo_keep_fn over a mapping's inputs (ctx: the mapping): only these families need storing. */
int mapping_reads(const char *name, size_t len, void *ctx);

/* Load and compile. Every problem is appended to `problems` (one per line, "file:line:col: row 'x':
 * message"); returns NULL if there was any. problems may be NULL. */
struct buf;
struct mapping *mapping_load(const char *path, struct buf *problems);
void mapping_free(struct mapping *m);
/* The keys a row may have, as the loader reads them (docs/mapping.md lists exactly these). */
struct mapping_field {
	const char *key;
	const char *type;       /* the JSON type: "string", "number", "boolean", "object" or "array" */
	const char *required;   /* "yes", "no", "unless exact" or "unless unavailable" */
	const char *doc;        /* one line */
};
/* Fill *out with the i-th key; 0 past the last. */
int mapping_field(size_t i, struct mapping_field *out);
/* Sources needed by the rows enabled under `flags` (a comma-separated list such as "gpus-acct"):
 * every row's own expression's, and a preferred form's only when all its sources are in `usable`
 * (the sources that can be fetched: configured and not switched off). usable 0: native forms only. */
unsigned mapping_sources(const struct mapping *m, const char *flags, unsigned usable);
int row_enabled(const struct row *r, const char *flags);
/* "exact", "approximate" or "unavailable" (a literal). */
const char *fidelity_name(enum fidelity f);
/* The upstream row r's form (-1: its own expression, else an index into prefer) reads: slurmrestd
 * when any of its sources is slurmrestd's, else slurmctld. */
enum upstream_id row_upstream(const struct row *r, int form);

enum row_status {
	ROW_OK,            /* v holds the series (possibly none, for labelled families) */
	ROW_DISABLED,      /* enabled_by flag not set */
	ROW_UNAVAILABLE,   /* fidelity unavailable: no source */
	ROW_INPUT_DOWN,    /* an endpoint it reads failed: family left out */
	ROW_NO_INPUT,      /* endpoints fine, but nothing to compute from and no default */
	ROW_ERROR,         /* evaluation or output error (duplicate series...): left out */
	ROW_INPUT_MISSING, /* a family it reads is absent from a usable answer (absent_ok: one naming others) */
};

struct row_result {
	enum row_status status;
	int form;                  /* the preferred form evaluated (index in prefer), -1: the row's own */
	enum fidelity fidelity;    /* the evaluated form's */
	struct vec v;              /* sorted by label set */
	size_t repaired;           /* label values whose invalid UTF-8 was repaired (U+FFFD) */
	char err[160];
};

/* Called with each row's result right after it is evaluated, in row order; res and its series
 * are valid only during the call. */
typedef void (*mapping_emit_fn)(void *ctx, size_t row, const struct row_result *res);

/* The one row driver (the daemon, --once, tests, fuzzers and bench): evaluate every row enabled
 * under flags over one scrape's answers and emit it. up[ep] says whether endpoint ep delivered a
 * usable answer; ex[ep] is its parsed answer (NULL if down). A row is evaluated with its first
 * preferred form whose sources are all up, else with its own expression (unavailable if none). */
void mapping_run(const struct mapping *m, const char *flags, const struct expo *const ex[SRC_COUNT],
		 const int up[SRC_COUNT], mapping_emit_fn emit, void *ctx);

#endif
