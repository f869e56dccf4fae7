/* slurmrestd_int.h: the inside of slurmrestd.c's converter, shared by its two halves: the walk over the
 * document (slurmrestd.c: shapes, paths, {set, infinite, number} objects) and the records it reads
 * (slurmrestd_rec.c: a node, job, share row or diag's statistics into samples, duplicates refused, the jobs'
 * and partitions' aggregates) with slurmrestd_nodepart.c, slurmrestd_resv.c, slurmrestd_assoc.c and
 * slurmrestd_diaglist.c, and what they all share about the document (slurmrestd_doc.c: its failure,
 * rest_fail; what it listed; the record's strings). Calls go down
 * that list, never back. Not an interface for anyone else: see slurmrestd.h.
 * Every function returning int returns 1 to go on, or 0 when it made the document unusable
 * (rest_fail: the parse stops), as the yajl callbacks it is called from do. */
#ifndef SHIM_SLURMRESTD_INT_H
#define SHIM_SLURMRESTD_INT_H

#include <stddef.h>
#include <stdint.h>

#include "expo.h"
#include "hmap.h"
#include "jsonfeed.h"
#include "labels.h"
#include "slurmrestd_state.h"
#include "slurmrestd.h"
#include "xmalloc.h"

#define KEY_MAX 48            /* longer keys match no field */
#define PATH_LEVELS 4         /* a record's field and three levels inside it (a doc's .levels: more) */
#define PATH_LEVELS_MAX 5     /* the most any document reads (/associations' "max.tres.total[].count") */
#define PATH_MAX_LEN (PATH_LEVELS_MAX * (KEY_MAX + 2)) /* "key." or "[]" per level, then '\0' */
#define REST_DECLARED_MAX 8   /* families a document declares (doc_info.declared) */
#define REC_MAX (256u * 1024) /* scratch bytes of one record */
#define REST_WHY_MAX 160      /* the first problem's reason */
#define REST_ERRS_MAX 120     /* slurmrestd's error messages quoted in it */
#define REST_META_MAX 64      /* meta.slurm's cluster or release: a longer one is not kept */

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
	struct str features;      /* active_features, joined by ',' as read */
	struct str resv;          /* reservation: the active reservation it is in (scontrol's ReservationName) */
	double cpus, alloc_cpus, real_memory, alloc_memory, free_mem, reason_at;
	double cpu_load;          /* load average x 100, as slurmd reported it */
	double weight;            /* the scheduling weight (sinfo's %w) */
	size_t nparts;            /* in rest.parts */
};

struct job_rec {
	struct job_state state;
	struct str reason, desc, user, account, partition, tasks, nodes;
	struct str sid;           /* /jobs/state: the job id as a string ("17", "16_8", "20+1") */
	struct str tres_alloc, tres_req; /* tres_alloc_str, tres_req_str ("cpu=2,mem=2G,node=1,gres/gpu=1") */
	double cpus, uid, id;
	double mem_node, mem_cpu; /* memory_per_node, memory_per_cpu (MB; NaN when not set) */
};

struct lic_rec {              /* an item of /licenses' "licenses" (scontrol show licenses) */
	struct str name;
	double total, used, free, reserved, last_consumed, last_deficit;
};

struct resv_rec {             /* an item of /reservations' "reservations" (scontrol show reservation) */
	struct str name, users, accounts, nodes, partition;
	struct str flags;         /* flags, joined by ',' as read */
	double start, end, node_count, core_count, purge;
};

/* /associations (sacctmgr show assoc): an item of an association's max.tres.total (GrpTRES) being
 * read, and the association */
struct assoc_item {
	struct str type, name;
	double count;
	unsigned given;           /* ASSOC_F_* of the item's members read: twice is refused */
};

struct assoc_rec {
	struct str account, user, partition, cluster, parent;
	double grp_jobs, grp_submit; /* max.jobs.per.count, .submitted: NaN not given, +Inf unlimited */
	unsigned given;           /* ASSOC_F_* of the hook fields read: twice is refused */
	struct assoc_item item;
};

/* An association's GrpTRES, kept while its record is read (strings in the scratch) */
struct assoc_tres {
	struct str type, name;
	double count;
};

/* A reservation read, kept until the document's clock (its last_update) is known: its label values
 * (RESV_L_* below) and numbers. */
enum { RESV_L_ACCOUNTS, RESV_L_FLAGS, RESV_L_NODES, RESV_L_PARTITION, RESV_L_NAME, RESV_L_USERS, RESV_L_N };
struct resv_kept {
	const char *v[RESV_L_N];
	uint32_t n[RESV_L_N];
	double start, end, node_count, core_count;
};

struct share_rec {
	struct str name, parent, partition, type;
	double factor, level, shares, shares_norm, usage, usage_norm;
};

enum { AGG_STATE, AGG_REASON, AGG_USER, AGG_ACCOUNT, AGG_PARTITION, AGG_N };
#define AGG_LABELS_MAX (AGG_N + 1) /* jobs: the five labels and a family's own (tres, unit) */

struct agg {                  /* one distinct label set of an aggregate family */
	struct label l[AGG_LABELS_MAX];
	uint32_t nl, hash;
	double v[5];              /* the values of the document's agg_fams */
	size_t node;              /* partitions: the last node (its sequence number) counted in it */
	const char *fam;          /* jobs: NULL, an entry of agg_fams; else the one family of its v[0]
				   * (slurmrestd_node_job_user, slurmrestd_jobs_tres...) */
};

struct seen_ent { const char *s; uint32_t n; };

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
	signed char want_tres, want_mem; /* jobs: the table reads slurmrestd_jobs_tres, _memory_printed
					  * (1), not (-1), not asked yet (0) */
	size_t nbad;
	size_t why_at;
	char why[REST_WHY_MAX];
	size_t nerrs;             /* entries of slurmrestd's "errors" */
	char err_text[2][65];     /* the entry's "error" and "description" */
	char errs[REST_ERRS_MAX];
	char *scratch;            /* the record's strings */
	size_t slen;
	union { struct node_rec node; struct job_rec job; struct share_rec share; struct lic_rec lic; struct resv_rec resv;
		struct assoc_rec assoc; } r;
	struct diag_item *item;   /* diag: the list item being read (slurmrestd_diaglist.c), or NULL */
	struct str *parts;        /* the node's partitions */
	size_t partcap, nodes;    /* nodes: records ended, for agg.node */
	struct agg *aggs;         /* jobs, partitions: in the order first seen */
	size_t nagg, acap;
	struct hmap aidx;         /* aggs' index by label set (hmap.h) */
	struct seen_ent *seen;    /* what was listed (node names, share rows, job ids, diag paths) */
	size_t nseen, seencap;
	struct hmap sidx;         /* seen's index (hmap.h) */
	struct arena arena;       /* the label values of aggs, the strings of seen and of resv */
	double clock;             /* the top-level last_update (docs with .clock); NaN until read */
	struct resv_kept *resv;   /* reservations: read, emitted in rest_end against the clock */
	size_t nresv, resvcap;
	size_t resv_hosts;        /* reservations: the hosts of their node_lists counted so far (kept) */
	struct assoc_tres *tres;  /* associations: the record's max.tres.total so far */
	size_t ntres, trescap;
	char meta[2][REST_META_MAX]; /* meta.slurm's cluster and release, as given (meta_fam) */
	unsigned char meta_len[2];
};

/* A field a record reads: its path inside the record ("state[]": an item of the array "state";
 * "fairshare.factor": a member; a {set, infinite, number} object reads as its own path), what it
 * holds and where in the record (an offset into rest.r). */
enum slot_kind { S_NUM, S_STR, S_NODE_STATE, S_JOB_STATE, S_JOB_STATE_KNOWN, S_PART, S_LIST /* strings joined by ',' */,
		 S_HOOK /* a value of either type, to the document's hook */ };

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
	const char *agg_fams[5];  /* the families of the aggregate's values, in rest_end */
	int clock;                /* reads the top-level "last_update" into rest.clock (needed) */
	int (*finish)(struct rest *st); /* in rest_end, after the last record of a good document */
	const char *declared[REST_DECLARED_MAX]; /* families every good answer declares, with or without series */
	const char *meta_fam;     /* the family of the document's meta.slurm (release, cluster), or NULL */
	int levels;               /* the path levels a record reads (0: PATH_LEVELS; at most PATH_LEVELS_MAX) */
	/* an S_HOOK slot's value, a string (is_str) or a number, as read */
	int (*hook)(struct rest *st, const struct slot *f, int is_str, const unsigned char *s, size_t n, double v);
	/* a map inside a record closed, an item of the array at `path` ("max.tres.total[]") */
	int (*item_end)(struct rest *st, const char *path);
};

extern const struct doc_info docs[REST_DOCS];
/* slurmrestd_diaglist.c: diag's lists of objects ("rpcs_by_user": [{"user": "root", "count": 9}]):
 * a member of an item (path "list[].member"), and the item's end (depth: the item map's) */
#define DIAG_ITEM_MAX 8           /* string and number members kept per item */
struct diag_member { char key[KEY_MAX]; unsigned char klen; struct str s; double v; };
struct diag_item { unsigned nstr, nnum; struct diag_member str[DIAG_ITEM_MAX], num[DIAG_ITEM_MAX]; };
int rest_diag_item_value(struct rest *st, const char *path, int is_str, const unsigned char *s, size_t n, double v);
int rest_diag_item_end(struct rest *st);
/* slurmrestd_nodepart.c: the license document's fields and its record's end */
extern const struct slot rest_lic_slots[];
int rest_lic_end(struct rest *st);
/* slurmrestd_resv.c: /reservations' fields, a reservation's end, the document's end */
extern const struct slot rest_resv_slots[];
int rest_resv_end(struct rest *st);
int rest_resv_finish(struct rest *st);
/* slurmrestd_assoc.c: /associations' fields, their hook, a GrpTRES item's end, an association's end */
extern const struct slot rest_assoc_slots[];
int rest_assoc_value(struct rest *st, const struct slot *f, int is_str, const unsigned char *s, size_t n, double v);
int rest_assoc_item_end(struct rest *st, const char *path);
int rest_assoc_end(struct rest *st);
/* A string of the record: its bytes in the scratch (s->len of them, not NUL-terminated). */
static inline const char *rest_sp(const struct rest *st, const struct str *s)
{
	return st->scratch + s->off;
}

/* slurmrestd_doc.c, which every other file of the reader calls and which calls none of them. */
/* 1 when the bytes were listed before in this document, else 0 (and they are now). */
int rest_seen_before(struct rest *st, const void *s, size_t n);
/* The document is unusable (count problems): the first reason is kept with its offset; the parse
 * stops. Returns 0. */
int rest_fail(struct rest *st, size_t count, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Untrusted bytes (valid UTF-8: yajl checks) for a reason: at most len - 1 of them, cut at a
 * character's start, control characters as '?'; each place the reason goes to escapes it (the log,
 * the status page, the 503 body). Returns out. */
const char *rest_esc(char *out, size_t len, const char *s, size_t n);

/* slurmrestd_doc.c: n bytes at p into the record's scratch as s (refused past REC_MAX) */
int rest_keep_str(struct rest *st, struct str *s, const unsigned char *p, size_t n);
void rest_record_reset(struct rest *st);
int rest_add_part(struct rest *st, const unsigned char *p, size_t n);
int rest_diag_num(struct rest *st, const char *path, double v);
void rest_add_aggregates(struct rest *st);
/* slurmrestd_nodepart.c: one node's series in one of its partitions (labels node, partition, state) */
void rest_node_part_series(struct expo *e, const struct node_rec *r, const struct label l[3], double alloc, double idle,
			   double load, const double gpus[2]);
/* Slurm's NO_VAL and INFINITE of a uint32_t: a load slurmd never reported */
#define LOAD_NO_VAL 4294967294.0
/* slurmrestd_nodepart.c: the node's load as sinfo's %O prints it (cpu_load / 100, whatever the node's
 * state), NaN when it prints N/A (NO_VAL) or slurmrestd gave no load that Slurm could hold */
double rest_load_reported(const struct node_rec *r);
/* slurmrestd_nodepart.c: 1 in slurmrestd_partition_node_reason for one node and partition: l the node,
 * partition and state labels, why its reason, reason_time and user labels (each sorted by name; an
 * empty value is no label) */
void rest_node_reason_series(struct expo *e, const struct label l[3], const struct label why[3]);
/* slurmrestd_nodepart.c: slurmrestd_partition_node_active_features for one node and partition */
void rest_node_features_series(struct expo *e, const struct label l[3], const char *features, size_t n);
/* slurmrestd_nodepart.c: the items of a ','-joined list sorted (byte order) into out (n bytes) */
void rest_list_sorted(const char *s, size_t n, char *out);
/* slurmrestd_nodepart.c: what squeue's %m prints for a job, in MB (0 when neither is set) */
double rest_job_memory(const struct job_rec *r);
/* slurmrestd_nodepart.c: each item of a TRES string ("cpu=2,mem=2G,node=1,gres/gpu:a100=1"), as
 * slurmctld prints one: name=count, joined by ','. each() gets the item's name and its count,
 * an integer; an item whose count is printed with a unit or a fraction ("mem=2G", "bb/x=1.50T")
 * is skipped. Returns NULL, or what is wrong (the item not name=count: RTRES_MALFORMED; a count
 * of more than 2^53: RTRES_HUGE) with the item in *bad, *badlen. */
#define RTRES_MALFORMED "not name=count"
#define RTRES_HUGE "a count over 2^53"
const char *rest_tres_each(const char *s, size_t n, void (*each)(void *ctx, const char *name, size_t nlen, double v),
			   void *ctx, const char **bad, size_t *badlen);

#endif
