/* slurmrestd_int.h: the inside of slurmrestd.c's converter, shared by its two halves: the walk over the
 * document (slurmrestd.c: shapes, paths, {set, infinite, number} objects) and the records it reads
 * (slurmrestd_rec.c: a node, job, share row or diag's statistics into samples, duplicates refused, the jobs'
 * and partitions' aggregates). Not an interface for anyone else: see slurmrestd.h.
 * Every function returning int returns 1 to go on, or 0 when it made the document unusable
 * (rest_fail: the parse stops), as the yajl callbacks it is called from do. */
#ifndef SHIM_SLURMRESTD_INT_H
#define SHIM_SLURMRESTD_INT_H

#include <stddef.h>
#include <stdint.h>

#include "expo.h"
#include "jsonfeed.h"
#include "labels.h"
#include "slurmrestd_state.h"
#include "slurmrestd.h"
#include "xmalloc.h"

#define KEY_MAX 48            /* longer keys match no field */
#define PATH_LEVELS 4         /* a record's field and three levels inside it */
#define PATH_MAX_LEN (PATH_LEVELS * (KEY_MAX + 2)) /* "key." or "[]" per level, then '\0' */
#define REC_MAX (256u * 1024) /* scratch bytes of one record */
#define REST_WHY_MAX 160      /* the first problem's reason */
#define REST_ERRS_MAX 120     /* slurmrestd's error messages quoted in it */

struct level {
	char key[KEY_MAX];
	unsigned char klen;       /* KEY_MAX: too long (or cut) */
	unsigned char array;
	unsigned char nv_set, nv_inf, nv_has; /* a {set, infinite, number} object's members so far */
	double nv_num;
};

struct str { uint32_t off, len; int set; };

struct node_rec {
	struct node_state state;
	struct str name, gres, gres_used, reason, reason_user;
	double cpus, alloc_cpus, real_memory, alloc_memory, free_mem, reason_at;
	double cpu_load;          /* load average x 100, as slurmd reported it */
	size_t nparts;            /* in rest.parts */
};

struct job_rec {
	struct job_state state;
	struct str reason, desc, user, account, partition, tasks, nodes;
	double cpus, uid, id;
};

struct share_rec {
	struct str name, parent, partition, type;
	double factor, level;
};

enum { AGG_STATE, AGG_REASON, AGG_USER, AGG_ACCOUNT, AGG_PARTITION, AGG_N };

struct agg {                  /* one distinct label set of an aggregate family */
	struct label l[AGG_N];
	uint32_t nl, hash;
	double v[4];              /* the values of the document's agg_fams */
	size_t node;              /* partitions: the last node (its sequence number) counted in it */
	int node_user;            /* jobs: a {node,user} entry of slurmrestd_node_job_user, not of agg_fams */
};

struct seen_ent { const char *s; uint32_t n, h; };

struct rest {
	enum rest_doc doc;
	struct expo *e;
	struct jsonfeed jf;
	struct level lv[REST_MAX_DEPTH];
	int depth;                /* open containers */
	int rd;                   /* depth inside a record map (constant per document) */
	int in_rec;
	int want;                 /* the record's current key is one its document reads */
	unsigned rec_keys;        /* the record's keys read so far, by slot (wanted()) */
	unsigned top;             /* the containers down to the records seen (slurmrestd.c) */
	size_t nitems;            /* records begun */
	int failed, done, ended;  /* the parse stopped; the top-level object closed; rest_end began */
	size_t nbad;
	size_t why_at;
	char why[REST_WHY_MAX];
	size_t nerrs;             /* entries of slurmrestd's "errors" */
	char err_text[2][65];     /* the entry's "error" and "description" */
	char errs[REST_ERRS_MAX];
	char *scratch;            /* the record's strings */
	size_t slen;
	union { struct node_rec node; struct job_rec job; struct share_rec share; } r;
	struct str *parts;        /* the node's partitions */
	size_t partcap, nodes;    /* nodes: records ended, for agg.node */
	struct agg *aggs;         /* jobs, partitions: open addressing, acap a power of two */
	size_t nagg, acap;
	struct seen_ent *seen;    /* what was listed (node names, share rows, job ids, diag paths) */
	size_t nseen, seencap;
	struct arena arena;       /* the label values of aggs, the strings of seen */
};

/* A field a record reads: its path inside the record ("state[]": an item of the array "state";
 * "fairshare.factor": a member; a {set, infinite, number} object reads as its own path), what it
 * holds and where in the record (an offset into rest.r). */
enum slot_kind { S_NUM, S_STR, S_NODE_STATE, S_JOB_STATE, S_PART };

struct slot {
	const char *path;
	enum slot_kind kind;
	size_t off;
};

struct doc_info {
	const char *prefix[2];    /* keys down to the records */
	int nprefix, array;       /* records are items of an array at the end of the prefix */
	const char *what;         /* the records' container, for messages */
	const struct slot *slots; /* NULL: every number, by its path (diag) */
	int (*end)(struct rest *st);
	const char *agg_fams[4];  /* the families of the aggregate's values, in rest_end */
};

extern const struct doc_info docs[4];

/* The document is unusable (count problems): the first reason is kept with its offset; the parse
 * stops. Returns 0. */
int rest_fail(struct rest *st, size_t count, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Untrusted bytes (valid UTF-8: yajl checks) for a reason: at most len - 1 of them, cut at a
 * character's start, control characters as '?'; each place the reason goes to escapes it (the log,
 * the status page, the 503 body). Returns out. */
const char *rest_esc(char *out, size_t len, const char *s, size_t n);

void rest_record_reset(struct rest *st);
int rest_keep_str(struct rest *st, struct str *s, const unsigned char *p, size_t n);
int rest_add_part(struct rest *st, const unsigned char *p, size_t n);
int rest_diag_num(struct rest *st, const char *path, double v);
void rest_add_aggregates(struct rest *st);

#endif
