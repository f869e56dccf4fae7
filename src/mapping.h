/* mapping.h: the mapping table (a JSON file, see docs/mapping.md), compiled once into rows.
 *
 * Each row makes one output family from an expression over the sources' families (slurmctld's
 * native metrics, slurmrestd's converted answers; and the scrape's record, MAPPING_RECORD_FAMILIES),
 * then applies, in order: rename_labels,
 * fill_labels, drop_zero, default. Rows read source families only; they never see each other's
 * output, so a source's series can only leave the shim through a row.
 *
 * A row is a list of forms (struct row_form): its preferred forms ("prefer", e.g. over slurmrestd's
 * families), then its native form (its own expr, fidelity, note and absent_ok). Per scrape the
 * first preferred form whose every source is up and whose families are all there is evaluated,
 * else the native form, the fallback.
 *
 * Code: mapping_load.c (reading the file through the tables of row and form keys, the checks,
 * mapping_free, mapping_row_index over its table of names, fidelity_name), mapping.c (what a scrape
 * asks of a loaded table: the row driver and a row's steps, the sources and families it reads,
 * row_upstream), mapping_sort.c (the output order and the duplicate check), mapping_catalog.c
 * ("validated_on": reading, checking and looking up the native catalog).
 *
 * Ownership: mapping_load returns a new mapping (mapping_free). mapping_run owns the results it
 * emits: a row's series (which also borrow from the mapping and the parsed answers) are valid only
 * during the emit call. */
#ifndef SHIM_MAPPING_H
#define SHIM_MAPPING_H

#include <stddef.h>

#include "source.h"
#include "expr.h"
#include "hmap.h"

enum fidelity { FID_EXACT, FID_APPROXIMATE, FID_UNAVAILABLE, FID_COUNT };

struct kv {
	char *key, *value;
};

/* A family a form reads, and whether its absence is normal when its endpoint's answer names no
 * family at all ("absent_ok"; from an answer naming others it is missing all the same). */
struct row_input {
	char *name;
	int absent_ok;
};

/* A form's "wraps_at": the counters it reads wrap at `limit` (slurmctld's 16-bit families, at
 * 65536), so its value may be wrong by multiples of it whenever `bound`, an expression over
 * counters that do not wrap (the partition's CPUs, the number of nodes), gives a value at or over
 * limit. Checked per scrape when the form is used; the form is then served approximate. The
 * families bound reads are not the form's inputs: a bound that cannot be read marks the form
 * approximate but never leaves the row out. */
struct row_wrap {
	char *bound_src;
	struct expr *bound;
	double limit;
	unsigned sources;           /* bit per enum source_id bound reads */
};

/* A form of a row: an expression and what it promises. The row's native form is its own "expr",
 * "fidelity", "note", "absent_ok" and "wraps_at"; a preferred form is an element of its "prefer". */
struct row_form {
	char *expr_src, *note;      /* note: NULL when exact; expr_src: NULL when unavailable */
	enum fidelity fidelity;     /* unavailable: only a native form, which then has no expr */
	struct expr *expr;          /* NULL when unavailable */
	unsigned sources;           /* bit per enum source_id the expression reads */
	struct row_input *inputs;   /* the families the expression reads, sorted, each once */
	size_t ninputs;
	struct row_wrap *wrap;      /* "wraps_at"; NULL: none */
	int reads_record;           /* the expression reads the scrape's record (MAPPING_RECORD_PREFIX) */
};

/* The flags that enable rows ("enabled_by"), as bits: --gpus-acct, --slurmrestd.jobs. */
enum row_flag {
	ROW_FLAG_GPUS_ACCT = 1u << 0, /* "gpus-acct" */
	ROW_FLAG_REST_JOBS = 1u << 1, /* "slurmrestd-jobs" */
};

struct row {
	char *name, *help, *type;
	unsigned enabled_by;        /* the enum row_flag that enables it; 0: always enabled */
	int excluded;               /* its name matches --mapping.exclude: never enabled (mapping_exclude) */
	struct kv *renames, *fills;
	size_t nrenames, nfills;
	int drop_zero, has_default;
	double defval;
	struct row_form *forms;     /* the preferred forms in the order they are tried, the native form last */
	size_t nforms;              /* at least 1 */
};

/* The row's native form (its own expression: the fallback, and what --mapping.to-rules exports). */
static inline const struct row_form *row_native(const struct row *r)
{
	return &r->forms[r->nforms - 1];
}

/* One Slurm release of "validated_on", the native catalog the table was validated on
 * (docs/mapping.md): the families slurmctld served on each of its endpoints, built from real
 * captures (tests/gen-catalog.py). Only the names are kept; the file records TYPE and labels too,
 * which the loader checks. Each scrape compares slurmctld's answers with it (catalog.h). */
#define MAPPING_STEM_MAX 64           /* bytes of a schema's stem, with its NUL */
#define MAPPING_RELEASE_MAX 32         /* bytes of a release's name */
struct catalog_release {
	char *name;                          /* "25.11" */
	char **fams[SRC_NATIVE_COUNT];       /* per slurmctld source: sorted, each once */
	size_t nfams[SRC_NATIVE_COUNT];
};

struct mapping {
	char *path;
	struct row *rows;
	size_t nrows;
	unsigned sources;           /* union over every form of every row (enabled or not) */
	size_t nmemo;               /* shared subexpressions (expr_memo_assign_work) */
	size_t load_work;           /* steps of the checks across rows and of expr_memo_assign_work: tests
				       check that it grows linearly with the file */
	char **inputs;              /* sorted, unique native names the rows read */
	size_t ninputs;
	struct hmap names;          /* the rows' index by name (mapping_row_index; hmap.h) */
	struct catalog_release *releases; /* "validated_on", in the file's order; none: nothing to compare */
	size_t nreleases;
	/* Several schemas served by one process (mapping_load_set): the next one, owned (mapping_free
	 * frees the chain), and this one's stem, its file name without ".json" ("" when it is no safe
	 * URL path segment: then it is served at the metrics path only). */
	struct mapping *next;
	char stem[MAPPING_STEM_MAX];
	int reads_record;           /* a form of a row reads the scrape's record (render.c builds it) */
};

/* The scrape's record as families rows may read (docs/mapping.md, "The scrape's record"): one
 * series per source fetched for the scrape (a payload given), labelled source="<its name>" (slurm_exporter_shim_up's
 * endpoint), made by render.c from the result record before the rows are evaluated. They come from
 * no upstream: a form reading them reads no source (never input_down), they are not in the
 * payloads' keep list, and --mapping.to-rules exports no row whose native form reads them. */
#define MAPPING_RECORD_PREFIX "shim_source_"
#define MAPPING_RECORD_FAMILIES(X) \
	X(REC_UP, "shim_source_up")                             /* 1: rows could read its answer, 0: not */ \
	X(REC_DURATION, "shim_source_duration_seconds")         /* how long its fetch took */ \
	X(REC_AGE, "shim_source_age_seconds")                   /* its answer's age when the rows were evaluated */ \
	X(REC_ERRORS, "shim_source_errors_total")               /* its fetches since start whose answer was not usable */

enum mapping_record_family {
#define REC_ID(id, name) id,
	MAPPING_RECORD_FAMILIES(REC_ID)
#undef REC_ID
	REC_COUNT
};
/* The family's name (a literal), as above. */
const char *mapping_record_name(enum mapping_record_family f);
/* Whether name is in the record's namespace (MAPPING_RECORD_PREFIX), and which family it is (-1:
 * none, which the loader refuses). */
int mapping_is_record_family(const char *name);
int mapping_record_index(const char *name);

/* mapping_set.c: the schemas of one process, one chain loaded and reloaded together. Each is served
 * at /schemas/<stem>/metrics, the first also at the metrics path; the payload cache keeps what any
 * of them reads (mapping_set_has_input), so a schema adds no fetch of its own. */
#define MAPPING_SET_MAX 8
/* Load every file of paths[0..n) (1 <= n <= MAPPING_SET_MAX) as one chain, the first at its head;
 * every problem of every file appended, and two files of one stem, or (n > 1) a stem with a
 * character other than [A-Za-z0-9._-] or starting with '.', refused. NULL on any problem. */
struct mapping *mapping_load_set(const char *const *paths, size_t n, struct buf *problems);
/* The stem of path into out (a name [A-Za-z0-9._-], not starting with '.', of at most
 * MAPPING_STEM_MAX - 1 bytes): 0, or -1 with out "" when it is none. */
int mapping_stem(const char *path, char out[MAPPING_STEM_MAX]);
/* The i-th schema of the chain, or NULL past its end; the index of stem, or -1. */
const struct mapping *mapping_schema(const struct mapping *m, size_t i);
size_t mapping_schema_count(const struct mapping *m);
/* --mapping.exclude: every row of every schema of the chain m whose name matches re (a POSIX ERE,
 * anchored at both ends) is excluded, served by no schema as a row whose enabled_by flag is not
 * given (row_is_enabled), and fetches nothing. The number of rows excluded, or -1 with why re is
 * not a regex in err. */
long mapping_exclude(struct mapping *m, const char *re, char *err, size_t errlen);
int mapping_schema_index(const struct mapping *m, const char *stem, size_t len);
/* expo_keep_fn over every schema of the chain (ctx: its head). */
int mapping_set_has_input(const char *name, size_t len, void *ctx);

/* Whether release r lists family [name, name + len) on slurmctld source src. */
int mapping_catalog_has(const struct catalog_release *r, enum source_id src, const char *name, size_t len);

/* The index of the row called name, or -1. */
int mapping_row_index(const struct mapping *m, const char *name);
/* Whether the sorted names v[0..n) hold [name, name + len). */
int mapping_sorted_has(char *const *v, size_t n, const char *name, size_t len);
/* expo_keep_fn over a mapping's inputs (ctx: the mapping): only these families need storing. */
int mapping_has_input(const char *name, size_t len, void *ctx);

/* Load and compile. Every problem is appended to `problems` (one per line, "file:line:col: row 'x':
 * message"); returns NULL if there was any. problems may be NULL. */
struct buf;
struct mapping *mapping_load(const char *path, struct buf *problems);
void mapping_free(struct mapping *m);
/* The keys a row may have, and a preferred form, as the loader reads them (docs/mapping.md lists
 * exactly these). */
struct mapping_field {
	const char *key;
	const char *type;       /* the JSON type: "string", "number", "boolean", "object" or "array" */
	const char *required;   /* "yes", "no", "unless exact" or "unless unavailable" */
	const char *doc;        /* one line */
};
/* Fill *out with the i-th key of a row, of a preferred form; 0 past the last. */
int mapping_field(size_t i, struct mapping_field *out);
int mapping_form_field(size_t i, struct mapping_field *out);
/* Sources needed by the rows enabled under `flags` (enum row_flag bits): every row's native form's,
 * and a preferred form's only when all its sources are in `usable` (the sources that can be
 * fetched: configured and not switched off), each with its wraps_at bound's. usable 0: native
 * forms only. */
unsigned mapping_sources(const struct mapping *m, unsigned flags, unsigned usable);
/* The same, fetching only the forms a row may be served with: its usable forms in order up to the
 * first whose sources are all in usable & expect (the sources whose answers are expected to be
 * usable: their last fetch was), the native form only when none is. A row served from slurmrestd
 * does not fetch slurmctld's job walk for a fallback it does not use; mapping_fallback_sources says
 * what the answers then need. expect 0: as mapping_sources. */
unsigned mapping_sources_expecting(const struct mapping *m, unsigned flags, unsigned usable, unsigned expect);
/* What the rows enabled under flags that one scrape's answers (ex, up: as mapping_run's) serve with
 * their native form, having a preferred form, fetch (as mapping_sources): their usable forms' and
 * native form's sources, with their wraps_at bounds'. */
unsigned mapping_fallback_sources(const struct mapping *m, unsigned flags, unsigned usable,
				  const struct expo *const ex[SRC_COUNT], const int up[SRC_COUNT]);
/* Whether r is enabled under flags (enum row_flag bits). */
static inline int row_is_enabled(const struct row *r, unsigned flags)
{
	return !r->excluded && (!r->enabled_by || (r->enabled_by & flags));
}
/* "exact", "approximate" or "unavailable" (a literal). */
const char *fidelity_name(enum fidelity f);
/* m's rows (this schema's alone, not the chain's) by the best fidelity any of their forms promises
 * (a preferred form's with the upstream it reads, else the native form's): out[FID_EXACT] rows exact
 * at best, and so on; the status page, --version and slurm_exporter_shim_schema_rows count so. */
void mapping_fidelity_counts(const struct mapping *m, size_t out[FID_COUNT]);
/* The upstream form r->forms[form] reads: slurmrestd when any of its sources is slurmrestd's, else
 * slurmctld. */
enum upstream_id row_upstream(const struct row *r, size_t form);

/* What a row gave this scrape: its id, and its name in slurm_exporter_shim_mapping_rows{status}
 * (and, from ROW_INPUT_DOWN on, in slurm_exporter_shim_family_left_out{reason}: the row was left out). */
#define ROW_STATUSES(X) \
	X(ROW_OK, "served")               /* v holds the series (possibly none, for labelled families) */ \
	X(ROW_DISABLED, "disabled")       /* enabled_by flag not set */ \
	X(ROW_UNAVAILABLE, "unavailable") /* fidelity unavailable: no source */ \
	X(ROW_INPUT_DOWN, "input_down")   /* an endpoint it reads failed: family left out */ \
	X(ROW_NO_INPUT, "no_input")       /* endpoints fine, but nothing to compute from and no default */ \
	X(ROW_ERROR, "error")             /* evaluation or output error (duplicate series...): left out */ \
	X(ROW_INPUT_MISSING, "input_missing") /* a family it reads is absent from a usable answer (absent_ok: one naming others) */

enum row_status {
#define ROW_STATUS_ID(id, name) id,
	ROW_STATUSES(ROW_STATUS_ID)
#undef ROW_STATUS_ID
	ROW_STATUS_COUNT
};

/* The status's name (a literal), as above. */
const char *row_status_name(enum row_status s);
/* Whether a row with this status was left out (its family not served: input down, error...). */
static inline int row_status_is_left_out(enum row_status s)
{
	return s >= ROW_INPUT_DOWN;
}

/* What a served form's "wraps_at" said this scrape, and its name in
 * slurm_exporter_shim_row_fidelity{reason} (none for WRAP_NONE). */
#define ROW_WRAPS(X) \
	X(WRAP_NONE, "")                              /* no wraps_at, or its bound below the limit */ \
	X(WRAP_REACHED, "counter_wrap")               /* the bound at or over the limit: may have wrapped */ \
	X(WRAP_UNCHECKED, "counter_wrap_unchecked")   /* the bound could not be read (its input down or absent) */

enum row_wrap_state {
#define ROW_WRAP_ID(id, name) id,
	ROW_WRAPS(ROW_WRAP_ID)
#undef ROW_WRAP_ID
	ROW_WRAP_COUNT
};

/* The state's name (a literal), as above. */
const char *row_wrap_name(enum row_wrap_state w);

struct row_result {
	enum row_status status;
	size_t form;               /* the form evaluated (index in forms; the native one when none was) */
	enum fidelity fidelity;    /* that form's; approximate when its wraps_at says it may have wrapped */
	enum row_wrap_state wrap;  /* what the form's wraps_at said (served rows only) */
	double bound;              /* with WRAP_REACHED: the largest value of its bound */
	struct vec v;              /* sorted by label set */
	size_t repaired;           /* label values whose invalid UTF-8 was repaired (U+FFFD) */
	char err[160];
};

/* Called with each row's result right after it is evaluated, in row order; res and its series
 * are valid only during the call. */
typedef void (*mapping_emit_fn)(void *ctx, size_t row, const struct row_result *res);

/* The one row driver (the daemon, --once, tests, fuzzers and bench): evaluate every row enabled
 * under flags over one scrape's answers and emit it. up[ep] says whether endpoint ep delivered a
 * usable answer; ex[ep] is its parsed answer (NULL if down); record holds the scrape's record
 * families (MAPPING_RECORD_FAMILIES; NULL: none). A row is evaluated with its first preferred form
 * whose sources are all up, else with its native form (unavailable if that is). */
void mapping_run(const struct mapping *m, unsigned flags, const struct expo *const ex[SRC_COUNT],
		 const int up[SRC_COUNT], const struct expo *record, mapping_emit_fn emit, void *ctx);

#endif
