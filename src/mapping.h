/* mapping.h: the mapping table (a JSON file, see docs/mapping.md), compiled once into rows.
 *
 * Each row makes one output family from an expression over native metrics, then applies, in order:
 * rename_labels, fill_labels, drop_zero, default. Rows read native families only; they never see
 * each other's output, so a native series can only leave the shim through a row.
 *
 * Code: mapping_load.c (loading and checks), mapping.c (evaluation), series_sort.c (the output
 * order and the duplicate check).
 *
 * Ownership: mapping_load returns a new mapping (mapping_free). mapping_eval's results live in the
 * arena it is given and borrow from the mapping and the payloads. */
#ifndef SHIM_MAPPING_H
#define SHIM_MAPPING_H

#include <stddef.h>

#include "endpoint.h"
#include "expr.h"

enum fidelity { FID_EXACT, FID_APPROXIMATE, FID_UNAVAILABLE };

struct kv {
	char *key, *value;
};

/* A native family a row reads, and whether the row says its absence is normal ("absent_ok"). */
struct row_input {
	char *name;
	int absent_ok;
};

struct row {
	char *name, *help, *type, *note, *expr_src, *enabled_by;
	enum fidelity fidelity;
	struct expr *expr;          /* NULL when unavailable */
	struct kv *renames, *fills;
	size_t nrenames, nfills;
	int drop_zero, has_default;
	double defval;
	unsigned endpoints;         /* bit per enum endpoint the expression reads */
	struct row_input *inputs;   /* the families the expression reads, each once */
	size_t ninputs;
};

struct mapping {
	char *path;
	struct row *rows;
	size_t nrows;
	unsigned endpoints;         /* union over rows (enabled or not) */
	size_t nmemo;               /* shared subexpressions (expr_memo_assign) */
	size_t load_work;           /* steps of the checks across rows and of expr_memo_assign: tests
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
/* Endpoints needed by the rows enabled under `flags` (a comma-separated list such as "gpus-acct"). */
unsigned mapping_endpoints(const struct mapping *m, const char *flags);
int row_enabled(const struct row *r, const char *flags);

enum row_status {
	ROW_OK,            /* v holds the series (possibly none, for labelled families) */
	ROW_DISABLED,      /* enabled_by flag not set */
	ROW_UNAVAILABLE,   /* fidelity unavailable: no source */
	ROW_INPUT_DOWN,    /* an endpoint it reads failed: family left out */
	ROW_NO_INPUT,      /* endpoints fine, but nothing to compute from and no default */
	ROW_ERROR,         /* evaluation or output error (duplicate series...): left out */
	ROW_INPUT_MISSING, /* a family it reads is absent from a usable answer, and not absent_ok */
};

struct row_result {
	enum row_status status;
	struct vec v;              /* sorted by label set */
	size_t repaired;           /* label values whose invalid UTF-8 was repaired (U+FFFD) */
	char err[160];
};

/* One scrape's evaluation state: the payloads, which endpoints are up, and the results of shared
 * subexpressions (in scrape_arena, which must live until the last row is evaluated). */
struct mapping_scrape {
	struct expr_source src;
	const int *up;
};

void mapping_scrape_begin(const struct mapping *m, const struct expo *const expos[EP_COUNT], const int up[EP_COUNT],
			  struct arena *scrape_arena, struct mapping_scrape *ms);
/* Evaluate row i; its series live in row_arena (which may be reset once they are written). */
void mapping_eval_row(const struct mapping *m, size_t i, const char *flags, const struct mapping_scrape *ms,
		      struct arena *row_arena, struct row_result *res);

/* Evaluate every row. up[ep] says whether endpoint ep delivered a usable payload; expos[ep] is its
 * parsed payload (NULL if down). results must have m->nrows entries. */
void mapping_eval(const struct mapping *m, const char *flags, const struct expo *const expos[EP_COUNT],
		  const int up[EP_COUNT], struct arena *a, struct row_result *results);

#endif
