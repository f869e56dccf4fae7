/* slurmrestd.c: see slurmrestd.h. A yajl callback parser (fed through jsonfeed.h, which bounds the
 * strings yajl holds) walks the document with a stack of open containers (the key each map is at);
 * the shape down to the records is checked as each value begins (value_begins); a record (one node,
 * job or share row, or diag's statistics object) is read into a small scratch, its scalars named by
 * their path inside it ("cpus", "free_mem" for free_mem's {set, infinite, number} object, "state[]"
 * for an item of the state array), and turned into samples when it closes (slurmrestd_rec.c). Calls
 * go one way: the walk calls the records (and their rest_fail), never the other way. */
#include "slurmrestd_int.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define KEY_IS(l, lit) ((l)->klen == sizeof(lit) - 1 && memcmp((l)->key, lit, sizeof(lit) - 1) == 0)

enum jkind { J_NULL, J_BOOL, J_NUM, J_STR, J_MAP, J_ARRAY };
static const char *const kind_name[] = { "null", "a boolean", "a number", "a string", "an object", "an array" };

#define TOP_ERRORS (1u << 8)      /* st->top: "errors" seen; bit d: the records' key at depth d */
#define TOP_CLOCK (1u << 9)       /* st->top: "last_update" read (docs with .clock) */

/* ---- the walk ---- */

/* Is key the first step of a slot's path? The index + 1 of the first slot it starts (a record's
 * keys read are told apart by it), 0: none. The values of other keys (most of a job) are skipped
 * without building a path. Diag (no slots) reads every key. */
static int wanted(const struct doc_info *d, const unsigned char *k, size_t n)
{
	if (!d->slots)
		return 1;
	for (const struct slot *f = d->slots; f->path; f++) {
		if (!n || f->path[0] != k[0])
			continue;
		size_t len = strlen(f->path);
		if (len >= n && memcmp(f->path, k, n) == 0 && (len == n || f->path[n] == '.' || f->path[n] == '['))
			return (int)(f - d->slots) + 1;
	}
	return 0;
}

static int key_is_named(const struct level *l, const char *k)
{
	size_t n = strlen(k);
	return l->klen == n && memcmp(l->key, k, n) == 0;
}

/* The path inside the record of the value the first `top` levels lead to (top = st->depth: the value
 * about to be read), or NULL when it is outside a record or too deep to matter. "state[]" is an
 * item of the array "state"; "fairshare.factor" a member. */
static inline int levels_of(const struct rest *st)
{
	return docs[st->doc].levels ? docs[st->doc].levels : PATH_LEVELS;
}

static const char *path_of(const struct rest *st, char *buf, int top)
{
	if (!st->in_rec || !st->want || top < st->rd || top >= st->rd + levels_of(st))
		return NULL;
	size_t n = 0;
	for (int i = st->rd - 1; i < top; i++) {
		const struct level *l = &st->lv[i];
		if (l->array) {
			memcpy(buf + n, "[]", 2);
			n += 2;
			continue;
		}
		if (l->klen >= KEY_MAX)
			return NULL;
		if (i >= st->rd)
			buf[n++] = '.';
		memcpy(buf + n, l->key, l->klen);
		n += l->klen;
	}
	buf[n] = '\0';
	return buf;
}

/* An item of a string list into s, after a ',' when s holds one already (S_LIST) */
static int list_add(struct rest *st, struct str *s, const unsigned char *p, size_t n)
{
	if (!s->set || !s->len)
		return rest_keep_str(st, s, p, n);
	struct str item;
	size_t was = s->len;
	if (s->off + s->len != st->slen) { /* not the last string kept: keep a copy of it last */
		struct str copy;
		if (!rest_keep_str(st, &copy, (const unsigned char *)st->scratch + s->off, s->len))
			return 0;
		*s = copy;
	}
	if (!rest_keep_str(st, &item, (const unsigned char *)",", 1) || !rest_keep_str(st, &item, p, n))
		return 0;
	s->len = (uint32_t)(was + 1 + n);
	return 1;
}

/* A value read at path, a string s (is_str) or a number v: into its slot (a value of the wrong
 * type is ignored), or diag's family. 1, or 0 when it made the document unusable. */
static int on_value(struct rest *st, const char *path, int is_str, const unsigned char *s, size_t n, double v)
{
	const struct slot *f = docs[st->doc].slots;
	if (!f && strstr(path, "[]"))
		return rest_diag_item_value(st, path, is_str, s, n, v);
	if (!f)
		return is_str ? 1 : rest_diag_num(st, path, v);
	while (f->path && strcmp(f->path, path))
		f++;
	char *rec = (char *)&st->r;
	if (f->path && f->kind == S_HOOK) /* the document checks the type itself */
		return docs[st->doc].hook(st, f, is_str, s, n, v);
	if (!f->path || (f->kind == S_NUM) == is_str)
		return 1;
	switch (f->kind) {
	case S_NUM:
		*(double *)(void *)(rec + f->off) = v;
		return 1;
	case S_STR:
		return rest_keep_str(st, (struct str *)(void *)(rec + f->off), s, n);
	case S_NODE_STATE:
		node_state_add((struct node_state *)(void *)(rec + f->off), (const char *)s, n);
		return 1;
	case S_JOB_STATE:
		job_state_add((struct job_state *)(void *)(rec + f->off), (const char *)s, n);
		return 1;
	case S_JOB_STATE_KNOWN: /* a job counted in a state of its own: which one is not known */
		if (job_state_add((struct job_state *)(void *)(rec + f->off), (const char *)s, n) < 0) {
			char esc[48];
			return rest_fail(st, 1, "a job with state '%s', a name no data_parser writes",
					 rest_esc(esc, sizeof(esc), (const char *)s, n));
		}
		return 1;
	case S_PART:
		return rest_add_part(st, s, n);
	case S_LIST:
		return list_add(st, (struct str *)(void *)(rec + f->off), s, n);
	case S_HOOK:
		break;
	}
	return 1;
}

/* A slurmrestd error entry's text (its "error" and "description", or the string itself) into the
 * reason being built; at most REST_ERRS_MAX bytes of it, escaped. */
static void errors_add(struct rest *st, const char *s, size_t n)
{
	size_t used = strlen(st->errs);
	if (used + 8 >= sizeof(st->errs))
		return;
	if (used) {
		memcpy(st->errs + used, "; ", 3);
		used += 2;
	}
	rest_esc(st->errs + used, sizeof(st->errs) - used, s, n);
}

/* Is the value about to be read at depth d inside the top-level "errors" array's entry? */
static int value_is_in_errors(const struct rest *st, int d)
{
	return st->depth >= d && d >= 2 && KEY_IS(&st->lv[0], "errors");
}

/* The shape of the document down to its records, checked as each value begins outside a record: 1,
 * or 0 when the document is not what it should be (the parse stops). */
static int shape_is_valid(struct rest *st, enum jkind k)
{
	const struct doc_info *d = &docs[st->doc];
	int depth = st->depth;
	if (depth > d->nprefix + 1)
		return 1;
	if (depth == 0)
		return k == J_MAP ? 1 : rest_fail(st, 1, "the document is %s, not an object", kind_name[k]);
	if (depth == 1 && KEY_IS(&st->lv[0], "errors")) {
		if (st->top & TOP_ERRORS)
			return rest_fail(st, 1, "'errors' given twice");
		st->top |= TOP_ERRORS;
		return k == J_ARRAY ? 1 : rest_fail(st, 1, "'errors' is %s, not an array", kind_name[k]);
	}
	if (depth == 2 && value_is_in_errors(st, 2)) { /* an entry of slurmrestd's own report */
		st->nerrs++;
		st->err_text[0][0] = st->err_text[1][0] = '\0';
		if (k != J_MAP && k != J_STR)
			errors_add(st, kind_name[k], strlen(kind_name[k]));
		return 1;
	}
	for (int i = 0; i < depth - 1 && i < d->nprefix; i++)
		if (st->lv[i].array || !key_is_named(&st->lv[i], d->prefix[i]))
			return 1;
	if (depth <= d->nprefix) {
		if (st->lv[depth - 1].array || !key_is_named(&st->lv[depth - 1], d->prefix[depth - 1]))
			return 1;
		if (st->top & (1u << depth))
			return rest_fail(st, 1, "'%s' given twice", d->what);
		st->top |= 1u << depth;
		enum jkind want = depth == d->nprefix && d->array ? J_ARRAY : J_MAP;
		if (k != want)
			return rest_fail(st, 1, "'%s' is %s, not %s", depth == d->nprefix ? d->what : d->prefix[0],
					 kind_name[k], kind_name[want]);
		return 1;
	}
	if (d->array && k != J_MAP)
		return rest_fail(st, 1, "item %zu of '%s' is %s, not an object", st->nitems, d->what, kind_name[k]);
	st->nitems++;
	return 1;
}

static inline int value_begins(struct rest *st, enum jkind k)
{
	return st->in_rec || shape_is_valid(st, k);
}

/* Is the value about to be read the document's top-level "last_update" (depth 1) or a member of its
 * {set, infinite, number} object (depth 2)? Only for the documents that read their clock. */
static int value_is_clock(const struct rest *st)
{
	return docs[st->doc].clock && !st->in_rec && (st->depth == 1 || (st->depth == 2 && !st->lv[1].array)) &&
	       KEY_IS(&st->lv[0], "last_update");
}

/* The document's clock: slurmctld's time when it answered (show_resv() packs time(NULL) as the
 * message's last_update), against which a reservation's state is told as scontrol tells it. */
static int clock_set(struct rest *st, double v)
{
	if (st->top & TOP_CLOCK)
		return rest_fail(st, 1, "'last_update' given twice");
	st->top |= TOP_CLOCK;
	st->clock = v;
	return 1;
}

/* A number, or a member of a {set, infinite, number} object (data_parser's NO_VAL wrapper): its
 * members are kept in its level and the value is read when it closes, whatever their order. */
static int on_number(struct rest *st, double v, int is_bool)
{
	char buf[PATH_MAX_LEN + 8];
	const char *path = path_of(st, buf, st->depth);
	int clock = !path && value_is_clock(st);
	if (!path && !clock)
		return 1;
	if (clock)
		path = "last_update";
	struct level *top = &st->lv[st->depth - 1];
	if ((clock ? st->depth == 2 : st->depth > st->rd) && !top->array) {
		if (is_bool && KEY_IS(top, "set")) {
			top->nv_set = v != 0;
			return 1;
		}
		if (is_bool && KEY_IS(top, "infinite")) {
			top->nv_inf = v != 0;
			return 1;
		}
		if (KEY_IS(top, "number")) {
			if (top->nv_has)
				return rest_fail(st, 1, "'%s' given twice", path);
			top->nv_has = 1;
			top->nv_num = v;
			return 1;
		}
	}
	if (clock)
		return st->depth == 1 ? clock_set(st, v) : 1;
	return on_value(st, path, 0, NULL, 0, v);
}

static int cb_null(void *ctx)
{
	return value_begins(ctx, J_NULL);
}

static int cb_bool(void *ctx, int b)
{
	return value_begins(ctx, J_BOOL) && on_number(ctx, b ? 1 : 0, 1);
}

/* A number as its text (yajl_number): its length is checked whatever the chunks were (jsonfeed.h). */
static int cb_number(void *ctx, const char *s, size_t n)
{
	struct rest *st = ctx;
	char buf[JSONFEED_MAX_TOKEN + 1];
	if (!value_begins(st, J_NUM))
		return 0;
	if (n > JSONFEED_MAX_TOKEN)
		return rest_fail(st, 1, "a number or word longer than %d bytes", JSONFEED_MAX_TOKEN);
	size_t neg = n && s[0] == '-', i = neg;
	double v = 0;
	while (i < n && i - neg < 15 && s[i] >= '0' && s[i] <= '9') /* most are integers: exact without strtod */
		v = v * 10 + (s[i++] - '0');
	if (i == n && n > neg)
		return on_number(st, neg ? -v : v, 0);
	memcpy(buf, s, n);
	buf[n] = '\0';
	return on_number(st, strtod(buf, NULL), 0);
}

/* meta.slurm.cluster or meta.slurm.release (the string about to be read at depth 3, outside a record):
 * kept for the document's meta_fam, the last one given; one of REST_META_MAX bytes or more is not */
static void meta_keep(struct rest *st, const unsigned char *s, size_t n)
{
	static const char *const keys[2] = { "cluster", "release" };
	if (st->lv[0].array || !KEY_IS(&st->lv[0], "meta") || st->lv[1].array || !KEY_IS(&st->lv[1], "slurm") ||
	    st->lv[2].array)
		return;
	for (int i = 0; i < 2; i++)
		if (key_is_named(&st->lv[2], keys[i])) {
			st->meta_len[i] = n < REST_META_MAX ? (unsigned char)n : 0;
			memcpy(st->meta[i], s, st->meta_len[i]);
		}
}

/* The document's meta_fam: 1, labelled cluster and release, when it gave a release */
static void meta_add(struct rest *st)
{
	const char *fam = docs[st->doc].meta_fam;
	if (!fam || st->failed || !st->meta_len[1])
		return;
	struct label l[2] = { label_of("cluster", st->meta[0], st->meta_len[0]),
			      label_of("release", st->meta[1], st->meta_len[1]) };
	expo_add(st->e, fam, strlen(fam), l + !st->meta_len[0], 2 - !st->meta_len[0], 1);
}

static int cb_string(void *ctx, const unsigned char *s, size_t n)
{
	struct rest *st = ctx;
	char buf[PATH_MAX_LEN + 8];
	int cut = jsonfeed_is_long(&st->jf, n);
	if (!value_begins(st, J_STR))
		return 0;
	if (st->depth == 2 && value_is_in_errors(st, 2)) {
		errors_add(st, (const char *)s, n);
		return 1;
	}
	if (st->depth == 3 && value_is_in_errors(st, 3) && !st->lv[2].array) { /* {"error": ..., "description": ...} */
		int i = KEY_IS(&st->lv[2], "error") ? 0 : KEY_IS(&st->lv[2], "description") ? 1 : -1;
		if (i >= 0)
			rest_esc(st->err_text[i], sizeof(st->err_text[i]), (const char *)s, n);
		return 1;
	}
	if (st->depth == 3 && !st->in_rec && docs[st->doc].meta_fam) {
		meta_keep(st, s, n);
		return 1;
	}
	const char *path = path_of(st, buf, st->depth);
	if (!path)
		return 1;
	if (cut)
		return rest_fail(st, 1, "'%s' is longer than %u bytes", path, REST_MAX_STRING);
	return on_value(st, path, 1, s, n, 0);
}

static int cb_key(void *ctx, const unsigned char *k, size_t n)
{
	struct rest *st = ctx;
	int cut = jsonfeed_is_long(&st->jf, n);
	if (!st->depth)
		return 0;
	if (st->in_rec && st->depth > st->rd && (!st->want || st->depth >= st->rd + levels_of(st)))
		return 1; /* inside a value nobody reads: its keys do not matter */
	struct level *l = &st->lv[st->depth - 1];
	int short_key = !cut && n < KEY_MAX;
	l->klen = short_key ? (unsigned char)n : KEY_MAX;
	memcpy(l->key, k, short_key ? n : 0);
	if (!st->in_rec || st->depth != st->rd)
		return 1;
	int w = short_key ? wanted(&docs[st->doc], k, n) : 0;
	st->want = w != 0;
	if (w && docs[st->doc].slots) {
		unsigned bit = 1u << (w - 1);
		if (st->rec_keys & bit)
			return rest_fail(st, 1, "'%.*s' given twice in a record of '%s'", (int)n, (const char *)k,
					 docs[st->doc].what);
		st->rec_keys |= bit;
	}
	return 1;
}

static void record_begin(struct rest *st)
{
	const struct doc_info *d = &docs[st->doc];
	if (st->depth != d->nprefix + d->array + 1 || (d->array && !st->lv[d->nprefix].array))
		return;
	for (int i = 0; i < d->nprefix; i++)
		if (st->lv[i].array || !key_is_named(&st->lv[i], d->prefix[i]))
			return;
	st->in_rec = 1;
	st->rec_keys = 0;
	rest_record_reset(st);
}

static int open_container(struct rest *st, int array)
{
	if (st->depth >= REST_MAX_DEPTH)
		return rest_fail(st, 1, "nested deeper than %d", REST_MAX_DEPTH);
	struct level *l = &st->lv[st->depth++];
	l->klen = 0;
	l->array = (unsigned char)array;
	l->nv_set = 1;
	l->nv_inf = 0;
	l->nv_has = 0;
	if (!array && !st->in_rec)
		record_begin(st);
	return 1;
}

static int cb_start_map(void *ctx)
{
	return value_begins(ctx, J_MAP) && open_container(ctx, 0);
}

static int cb_start_array(void *ctx)
{
	return value_begins(ctx, J_ARRAY) && open_container(ctx, 1);
}

/* The top-level "errors" array or one of its entries closes. */
static int errors_close(struct rest *st)
{
	if (st->depth == 3 && !st->lv[2].array) {
		char both[140];
		const char *e = st->err_text[0], *dsc = st->err_text[1];
		snprintf(both, sizeof(both), "%s%s%s", e, *e && *dsc ? ": " : "", *e || *dsc ? dsc : "(no message)");
		errors_add(st, both, strlen(both));
	} else if (st->depth == 2 && st->lv[1].array && st->nerrs) {
		return rest_fail(st, st->nerrs, "slurmrestd reported %zu error(s): %s", st->nerrs, st->errs);
	}
	return 1;
}

static int close_container(struct rest *st)
{
	struct level *l = &st->lv[st->depth - 1];
	if (!l->array && l->nv_has) { /* a {set, infinite, number} object, read as its own path */
		char buf[PATH_MAX_LEN + 8];
		const char *path = path_of(st, buf, st->depth - 1);
		double v = l->nv_inf ? INFINITY : !l->nv_set ? NAN : l->nv_num;
		if (path && !on_value(st, path, 0, NULL, 0, v))
			return 0;
		if (!path && value_is_clock(st) && !clock_set(st, v))
			return 0;
	}
	if (st->doc == REST_DIAG && st->in_rec && st->depth == st->rd + 2 && st->lv[st->rd].array && !l->array &&
	    !rest_diag_item_end(st))
		return 0;
	if (docs[st->doc].item_end && st->in_rec && st->depth > st->rd + 1 && !l->array && st->lv[st->depth - 2].array) {
		char buf[PATH_MAX_LEN + 8]; /* an item of an array inside the record: "max.tres.total[]" */
		const char *path = path_of(st, buf, st->depth - 1);
		if (path && !docs[st->doc].item_end(st, path))
			return 0;
	}
	if (st->in_rec && st->depth == st->rd) {
		st->in_rec = 0;
		if (docs[st->doc].end && !docs[st->doc].end(st))
			return 0;
	}
	if (value_is_in_errors(st, 2) && (st->depth == 2 || st->depth == 3) && !errors_close(st))
		return 0;
	if (st->depth == 1) {
		const struct doc_info *d = &docs[st->doc];
		st->done = 1;
		if (!(st->top & (1u << d->nprefix)))
			return rest_fail(st, 1, "no '%s' %s", d->what, d->array ? "array" : "object");
	}
	st->depth--;
	return 1;
}

static int cb_end(void *ctx)
{
	return close_container(ctx);
}

static const yajl_callbacks callbacks = {
	cb_null, cb_bool, NULL, NULL, cb_number, cb_string,
	cb_start_map, cb_key, cb_end, cb_start_array, cb_end,
};

/* ---- the interface ---- */

void *rest_begin(struct expo *e, enum rest_doc doc)
{
	struct rest *st = xcalloc(1, sizeof(*st));
	st->doc = doc;
	st->e = e;
	st->rd = docs[doc].nprefix + docs[doc].array + 1;
	st->scratch = xmalloc(REC_MAX);
	st->clock = NAN;
	arena_init(&st->arena);
	jsonfeed_init(&st->jf, &callbacks, st, REST_MAX_STRING);
	return st;
}

void *rest_begin_nodes(struct expo *e)
{
	return rest_begin(e, REST_NODES);
}

void *rest_begin_shares(struct expo *e)
{
	return rest_begin(e, REST_SHARES);
}

void *rest_begin_jobs(struct expo *e)
{
	return rest_begin(e, REST_JOBS);
}

void *rest_begin_diag(struct expo *e)
{
	return rest_begin(e, REST_DIAG);
}

void *rest_begin_licenses(struct expo *e)
{
	return rest_begin(e, REST_LICENSES);
}

void *rest_begin_job_states(struct expo *e)
{
	return rest_begin(e, REST_JOB_STATES);
}

void *rest_begin_reservations(struct expo *e)
{
	return rest_begin(e, REST_RESERVATIONS);
}

void *rest_begin_associations(struct expo *e)
{
	return rest_begin(e, REST_ASSOCIATIONS);
}

/* The feeder stopped on its own (syntax, a bound): its reason is the document's problem. */
static void feeder_stopped(struct rest *st)
{
	if (st->failed)
		return;
	st->failed = 1;
	if (!st->nbad++) {
		st->why_at = st->jf.why_at;
		snprintf(st->why, sizeof(st->why), "%s", st->jf.why);
	}
}

void rest_feed(void *p, struct expo *e, const char *data, size_t n)
{
	struct rest *st = p;
	st->e = e;
	if (st->failed || !n)
		return;
	if (jsonfeed_feed(&st->jf, data, n) < 0)
		feeder_stopped(st);
}

int rest_is_stopped(const void *p)
{
	return ((const struct rest *)p)->failed;
}

void rest_discard(void *p)
{
	struct rest *st = p;
	if (!st)
		return;
	jsonfeed_free(&st->jf);
	free(st->scratch);
	free(st->item);
	free(st->parts);
	free(st->aggs);
	hmap_free(&st->aidx);
	free(st->seen);
	free(st->resv);
	free(st->tres);
	hmap_free(&st->sidx);
	arena_reset(&st->arena);
	free(st);
}

size_t rest_end(void *p, struct expo *e)
{
	struct rest *st = p;
	st->e = e;
	if (!st->failed && jsonfeed_end(&st->jf) < 0)
		feeder_stopped(st);
	st->ended = 1;
	if (!st->failed && !st->done) /* yajl takes an empty text */
		rest_fail(st, 1, "not a JSON document");
	const struct doc_info *d = &docs[st->doc];
	if (!st->failed && d->finish)
		d->finish(st);
	for (int i = 0; !st->failed && i < REST_DECLARED_MAX && d->declared[i]; i++) /* read as no series when none came */
		expo_declare(e, d->declared[i], strlen(d->declared[i]));
	rest_add_aggregates(st);
	meta_add(st);
	expo_add_end(e);
	for (size_t i = 0; i < e->nfams; i++) /* what the checks above let through: never served */
		if (e->fams[i].duplicate) {
			rest_fail(st, 1, "two series of %.*s with the same labels", (int)e->fams[i].nlen, e->fams[i].name);
			break;
		}
	if (st->nbad)
		expo_add_error(e, st->why_at, st->why);
	size_t bad = st->nbad;
	rest_discard(st);
	return bad;
}
