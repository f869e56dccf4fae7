/* slurmrestd_assoc.c: slurmdbd's associations through slurmrestd's /slurmdb/{version}/associations, what
 * `sacctmgr show assoc` prints: per association (cluster, account, user, partition) its GrpTRES (the
 * data_parser's "max.tres.total", a list of {type, name, id, count}), GrpJobs ("max.jobs.per.count")
 * and GrpSubmitJobs ("max.jobs.per.submitted"), each a series only while the limit is set, as sacctmgr
 * prints a column only then: a limit of 0 is a series of 0, an unset or cleared one (the data_parser's
 * {"set": false, "infinite": true}, or the TRES absent from the list; a TRES count of Slurm's INFINITE64
 * or NO_VAL64, which dump as -1 and -2) none. Read in Slurm 25.11's data_parser v0.0.41-v0.0.44 and
 * 26.05's v0.0.45 (src/plugins/data_parser/v0.0.4x/parsers.c, PARSER_ARRAY(ASSOC), the same paths in
 * all). A limit that is no count Slurm holds (a string but complex mode's "Infinity", a fraction, a
 * number out of range) makes the answer unusable, naming the association. */
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "slurmrestd_int.h"

#define ASSOC(p, k, f) { p, k, offsetof(struct assoc_rec, f) }

/* The hook fields (S_HOOK slots) by their index in rest_assoc_slots, and the item's members */
enum { ASSOC_F_JOBS = 1, ASSOC_F_SUBMIT = 2, ASSOC_F_TOTAL = 4, ASSOC_F_TYPE = 8, ASSOC_F_NAME = 16, ASSOC_F_COUNT = 32 };
#define FIRST_HOOK 5

const struct slot rest_assoc_slots[] = {
	ASSOC("account", S_STR, account), ASSOC("user", S_STR, user), ASSOC("partition", S_STR, partition),
	ASSOC("cluster", S_STR, cluster), ASSOC("parent_account", S_STR, parent),
	/* FIRST_HOOK: in the order of ASSOC_F_* */
	ASSOC("max.jobs.per.count", S_HOOK, grp_jobs), ASSOC("max.jobs.per.submitted", S_HOOK, grp_submit),
	ASSOC("max.tres.total", S_HOOK, given), ASSOC("max.tres.total[].type", S_HOOK, item.type),
	ASSOC("max.tres.total[].name", S_HOOK, item.name), ASSOC("max.tres.total[].count", S_HOOK, item.count),
	ASSOC("max.tres.total[]", S_HOOK, item), /* an item that is no object: ASSOC_F_TOTAL too */
	{ NULL, S_NUM, 0 },
};

/* Most TRES in one association's GrpTRES (Slurm's TRES table holds tens: cpu, mem, energy, node,
 * billing, fs/disk, vmem, pages, and the configured gres/, license/ and bb/ ones) */
#define ASSOC_TRES_MAX 1024
/* A TRES count is an int64 in the answer; a double holds it exactly up to 2^53 */
#define COUNT_MAX 9007199254740992.0
/* A GrpJobs or GrpSubmitJobs is a uint32_t below Slurm's NO_VAL (4294967294) and INFINITE */
#define JOBS_MAX 4294967293.0

static unsigned field_bit(const struct slot *f)
{
	long i = f - rest_assoc_slots - FIRST_HOOK;
	return i >= 0 && i < 6 ? 1u << i : ASSOC_F_TOTAL;
}

/* A limit of the {set, infinite, number} kind, given as a string: complex mode's "Infinity" (the
 * data_parser's +data_parser/v0.0.4x+complex dumps INFINITE so, NO_VAL as null) is unlimited */
static int limit_text(struct rest *st, const struct slot *f, const unsigned char *s, size_t n, double *out)
{
	char esc[40];
	if (n == 8 && !memcmp(s, "Infinity", 8)) {
		*out = INFINITY;
		return 1;
	}
	return rest_fail(st, 1, "'%s' is the string '%s', not a number", f->path, rest_esc(esc, sizeof(esc), (const char *)s, n));
}

int rest_assoc_value(struct rest *st, const struct slot *f, int is_str, const unsigned char *s, size_t n, double v)
{
	struct assoc_rec *r = &st->r.assoc;
	unsigned bit = field_bit(f);
	int in_item = bit & (ASSOC_F_TYPE | ASSOC_F_NAME | ASSOC_F_COUNT);
	unsigned *given = in_item ? &r->item.given : &r->given;
	if (bit == ASSOC_F_TOTAL)
		return rest_fail(st, 1, "'%s' is %s, not %s", f->path, is_str ? "a string" : "a number",
				 strchr(f->path, '[') ? "an object" : "an array");
	if (*given & bit)
		return rest_fail(st, 1, "'%s' given twice in an association", f->path);
	*given |= bit;
	switch (bit) {
	case ASSOC_F_JOBS:
		return is_str ? limit_text(st, f, s, n, &r->grp_jobs) : (r->grp_jobs = v, 1);
	case ASSOC_F_SUBMIT:
		return is_str ? limit_text(st, f, s, n, &r->grp_submit) : (r->grp_submit = v, 1);
	case ASSOC_F_COUNT:
		if (is_str)
			return rest_fail(st, 1, "'%s' is a string, not a number", f->path);
		r->item.count = v;
		return 1;
	default: /* the TRES's type or name */
		if (!is_str)
			return rest_fail(st, 1, "'%s' is a number, not a string", f->path);
		return rest_keep_str(st, bit == ASSOC_F_TYPE ? &r->item.type : &r->item.name, s, n);
	}
}

/* The TRES's name as sacctmgr prints it in GrpTRES= ("cpu", "mem", "gres/gpu", "license/matlab"), made
 * in the record's scratch (type, '/', name kept one after the other) */
static int tres_text(struct rest *st, const struct assoc_tres *t, struct str *out)
{
	struct str slash, name;
	if (!rest_keep_str(st, out, (const unsigned char *)rest_sp(st, &t->type), t->type.len))
		return 0;
	if (!t->name.len)
		return 1;
	if (!rest_keep_str(st, &slash, (const unsigned char *)"/", 1) ||
	    !rest_keep_str(st, &name, (const unsigned char *)rest_sp(st, &t->name), t->name.len))
		return 0;
	out->len += 1 + t->name.len;
	return 1;
}

static int tres_is_same(const struct rest *st, const struct assoc_tres *a, const struct assoc_tres *b)
{
	return a->type.len == b->type.len && a->name.len == b->name.len &&
	       !memcmp(rest_sp(st, &a->type), rest_sp(st, &b->type), a->type.len) &&
	       !memcmp(rest_sp(st, &a->name), rest_sp(st, &b->name), a->name.len);
}

/* An item of max.tres.total closed: kept, with its count checked (-1, -2: unset) */
int rest_assoc_item_end(struct rest *st, const char *path)
{
	struct assoc_rec *r = &st->r.assoc;
	if (strcmp(path, "max.tres.total[]"))
		return 1;
	struct assoc_tres t = { r->item.type, r->item.name, r->item.count };
	int had_count = (r->item.given & ASSOC_F_COUNT) != 0;
	memset(&r->item, 0, sizeof(r->item));
	if (!t.type.len)
		return rest_fail(st, 1, "an item of an association's max.tres.total without a type");
	char esc[48];
	rest_esc(esc, sizeof(esc), rest_sp(st, &t.type), t.type.len);
	if (!had_count)
		return rest_fail(st, 1, "TRES '%s' of an association's max.tres.total without a count", esc);
	if (t.count != floor(t.count) || t.count < -2 || t.count > COUNT_MAX)
		return rest_fail(st, 1, "TRES '%s' of an association's max.tres.total: count %.17g is no count (-2 to 2^53)",
				 esc, t.count);
	for (size_t i = 0; i < st->ntres; i++)
		if (tres_is_same(st, &st->tres[i], &t))
			return rest_fail(st, 1, "TRES '%s' given twice in an association's max.tres.total", esc);
	if (st->ntres >= ASSOC_TRES_MAX)
		return rest_fail(st, 1, "an association with more than %d TRES in max.tres.total", ASSOC_TRES_MAX);
	st->tres = xgrow(st->tres, &st->trescap, st->ntres + 1, sizeof(*st->tres));
	st->tres[st->ntres++] = t;
	return 1;
}

/* A GrpJobs or GrpSubmitJobs: 1 with *v the limit, 0 when not set (NaN, +Inf: no series), -1 no count */
static int jobs_limit(double x)
{
	if (isnan(x) || (isinf(x) && x > 0))
		return 0;
	return x >= 0 && x <= JOBS_MAX && x == floor(x) ? 1 : -1;
}

/* The association's labels (those with an empty value left out): account, cluster, partition, user */
static uint32_t assoc_labels(const struct rest *st, struct label *l)
{
	const struct assoc_rec *r = &st->r.assoc;
	const struct { const char *name; const struct str *s; } v[] = {
		{ "account", &r->account }, { "cluster", &r->cluster }, { "partition", &r->partition }, { "user", &r->user },
	};
	uint32_t n = 0;
	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++)
		if (v[i].s->set && v[i].s->len)
			l[n++] = label_of(v[i].name, rest_sp(st, v[i].s), v[i].s->len);
	return n;
}

static void put(struct rest *st, const char *fam, const struct label *l, uint32_t n, double v)
{
	struct label copy[6];
	memcpy(copy, l, n * sizeof(*l));
	expo_add(st->e, fam, strlen(fam), copy, n, v);
}

/* The association's GrpTRES: every TRES set in grp_tres{tres}, cpu and mem also on their own */
static int put_tres(struct rest *st, struct label *l, uint32_t n)
{
	static const char tres_fam[] = "slurmrestd_association_grp_tres";
	int want = expo_wants(st->e, tres_fam, sizeof(tres_fam) - 1);
	for (size_t i = 0; i < st->ntres; i++) {
		const struct assoc_tres *t = &st->tres[i];
		if (t->count < 0) /* Slurm's INFINITE64 or NO_VAL64: sacctmgr prints nothing */
			continue;
		const char *type = rest_sp(st, &t->type);
		if (!t->name.len && t->type.len == 3 && (!memcmp(type, "cpu", 3) || !memcmp(type, "mem", 3)))
			put(st, type[0] == 'c' ? "slurmrestd_association_grp_cpus" : "slurmrestd_association_grp_memory",
			    l, n, t->count);
		struct str name;
		if (!want)
			continue;
		if (!tres_text(st, t, &name))
			return 0;
		l[n] = label_of("tres", rest_sp(st, &name), name.len);
		put(st, tres_fam, l, n + 1, t->count);
	}
	return 1;
}

/* One association: its identity checked (an account, a user field, not listed before), its series */
int rest_assoc_end(struct rest *st)
{
	const struct assoc_rec *r = &st->r.assoc;
	char esc[96], key[4 * 64];
	if (!r->account.len)
		return rest_fail(st, 1, "an association without an account");
	struct label l[6];
	uint32_t n = assoc_labels(st, l);
	size_t at = 0;
	key[0] = '\0';
	for (uint32_t i = 0; i < n && at < sizeof(key); i++) /* "account=physics user=alice", for messages */
		at += (size_t)snprintf(key + at, sizeof(key) - at, "%s%s=%s", i ? " " : "", l[i].name,
				       rest_esc(esc, 48, l[i].value, l[i].vlen));
	if (!r->user.set)
		return rest_fail(st, 1, "association %s without a 'user' field", key);
	/* the identity, each part NUL-ended, in the scratch: listed twice is refused */
	const struct str *parts[] = { &r->cluster, &r->account, &r->user, &r->partition };
	struct str id = { 0, 0, 0 }, part;
	for (size_t i = 0; i < 4; i++) {
		size_t k = parts[i]->set ? parts[i]->len : 0;
		if (!rest_keep_str(st, &part, (const unsigned char *)rest_sp(st, parts[i]), k) ||
		    !rest_keep_str(st, &part, (const unsigned char *)"", 1))
			return 0;
		if (!i)
			id.off = part.off - (uint32_t)k;
		id.len = part.off + 1 - id.off;
	}
	if (rest_seen_before(st, rest_sp(st, &id), id.len))
		return rest_fail(st, 1, "association %s listed twice", key);
	const struct { const char *fam, *path; double v; } jobs[] = {
		{ "slurmrestd_association_grp_jobs", "max.jobs.per.count", r->grp_jobs },
		{ "slurmrestd_association_grp_submit_jobs", "max.jobs.per.submitted", r->grp_submit },
	};
	for (size_t i = 0; i < 2; i++)
		if (jobs_limit(jobs[i].v) < 0)
			return rest_fail(st, 1, "association %s: '%s' %.17g is no count (0 to %.0f)", key, jobs[i].path,
					 jobs[i].v, JOBS_MAX);
	struct label info[6];
	memcpy(info, l, n * sizeof(*l));
	uint32_t ni = n;
	if (r->parent.set && r->parent.len)
		info[ni++] = label_of("parent", rest_sp(st, &r->parent), r->parent.len);
	put(st, "slurmrestd_association_info", info, ni, 1);
	for (size_t i = 0; i < 2; i++)
		if (jobs_limit(jobs[i].v) > 0)
			put(st, jobs[i].fam, l, n, jobs[i].v);
	return put_tres(st, l, n);
}
