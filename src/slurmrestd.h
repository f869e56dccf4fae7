/* slurmrestd.h: slurmrestd's JSON answers (data_parser v0.0.41..v0.0.46) -> families of a struct expo,
 * streaming: the bytes are parsed as they arrive (yajl's callback parser), one record (a node, a
 * job, a share row) at a time in a bounded scratch, so memory follows what is kept, not the body.
 * Jobs are aggregated while streaming into count and CPU-sum families keyed by the labels rows read,
 * so a 100k-job answer costs what its distinct label sets cost. The families (slurmrestd_*) and the
 * JSON field each comes from are documented in docs/mapping.md, "slurmrestd families".
 *
 * Interface (one parser per document, as a source's parser calls it, one call per chunk):
 *   st = rest_begin_nodes(e);   (or _shares, _jobs, _diag, _licenses, _job_states: /jobs/state,
 *                               _reservations, _associations)
 *   rest_feed(st, e, data, n);  for every chunk, in order; the chunk may go away after the call
 *   rest_is_stopped(st);           1 once the document is known unusable: the rest of it need not come
 *   bad = rest_end(st, e);      frees st; returns the problem count (0: a good document)
 *   rest_discard(st);           instead of rest_end: a restarted or failed transfer; frees st
 * Families go into e only in rest_end (a discarded transfer leaves e untouched), through
 * expo_add(), so e->keep applies: families nobody reads cost nothing. With problems, rest_end also
 * records the first one in e->errors[0]: its reason, and as its "line" the byte offset of the raw
 * document just after the token where it was seen.
 * A document that is not what it should be is unusable, never an empty answer (docs/reliability.md),
 * and its first problem stops the parse (rest_is_stopped: the transfer can stop too; records complete
 * before it are kept, for the tests' sake: the source's verdict refuses the document). Problems:
 * - not JSON, truncated, nesting deeper than REST_MAX_DEPTH, a number longer than JSONFEED_MAX_TOKEN;
 * - its shape: not an object; no records container ("nodes", "jobs", "shares"."shares" arrays,
 *   "statistics" object), one of another type or given twice, a record that is not an object,
 *   "errors" that is not an array or given twice;
 * - slurmrestd's own report, its top-level "errors" array, not empty: read to its end, it counts 1
 *   per entry and the reason quotes their messages (escaped, bounded);
 * - /jobs/state: a job without a job_id or a state, or with a state name no data_parser writes (a
 *   newer Slurm's: which state it counts in is not known), a job id listed twice;
 * - a record missing or mistyping a field it needs, a field it reads given twice, a string it reads
 *   longer than REST_MAX_STRING, a uid that is not one, a node, share row or job listed twice, a
 *   node listing a partition twice or more than REST_MAX_PARTS, a diag number given twice;
 * - /reservations: no top-level "last_update" (slurmctld's clock when it answered, which a
 *   reservation's state is told against) or one given twice, a reservation without a name or
 *   listed twice, one whose node_list is no host list the reader expands (while a table reads
 *   the reservations' nodes: more than REST_HOSTLIST_MAX hosts, nested brackets), node_lists of
 *   more than 1,048,576 hosts together;
 * - /associations: an association without an account or a "user" field, or listed twice (cluster,
 *   account, user and partition), a GrpJobs or GrpSubmitJobs that is no count (a string but
 *   "Infinity", a fraction, over 4294967293), a "max.tres.total" that is no array of objects, an
 *   item of it without a type or a count, with a count that is no integer from -2 to 2^53, given
 *   twice, or more than 1024 of them.
 * Strings longer than REST_MAX_STRING in fields nothing reads are skipped whatever their length,
 * without being held (jsonfeed.h); {set, infinite, number} objects are read whatever their key order.
 * Ownership: the state is the caller's between begin and end/discard; e is borrowed. */
#ifndef SHIM_SLURMRESTD_H
#define SHIM_SLURMRESTD_H

#include <stddef.h>

#include "expo.h"

#define REST_MAX_DEPTH 64
#define REST_MAX_STRING (64u * 1024)   /* a longer string is cut (jsonfeed.h): refused where it is read */
#define REST_MAX_PARTS 4096            /* partitions of one node */

enum rest_doc { REST_NODES, REST_SHARES, REST_JOBS, REST_DIAG, REST_LICENSES, REST_JOB_STATES, REST_RESERVATIONS,
		REST_ASSOCIATIONS,
		REST_DOCS };

void *rest_begin(struct expo *e, enum rest_doc doc);
void *rest_begin_nodes(struct expo *e);
void *rest_begin_shares(struct expo *e);
void *rest_begin_jobs(struct expo *e);
void *rest_begin_diag(struct expo *e);
void *rest_begin_licenses(struct expo *e);
void *rest_begin_job_states(struct expo *e);
void *rest_begin_reservations(struct expo *e);
void *rest_begin_associations(struct expo *e);
void rest_feed(void *st, struct expo *e, const char *data, size_t n);
int rest_is_stopped(const void *st);
size_t rest_end(void *st, struct expo *e);
void rest_discard(void *st);

/* Tasks of an array record's task string ("1-6", "1,3,5-9:2%4"); 0 for an empty or bad string. */
unsigned long rest_array_tasks(const char *s, size_t n);
/* squeue's %m text of mb megabytes (0 to 2^63; its convert_num_unit: the largest binary unit that
 * keeps the figure exact or a half, "%.2f" past that, cut to 9 characters as squeue's buffer cuts
 * it): the number it prints into *num and its unit letter into unit ("" for "0" or a cut text;
 * "M", "G", "T", "P" or "?"). The family slurmrestd_jobs_memory_printed; slurmrestd_nodepart.c. */
void rest_squeue_memory(double mb, double *num, char unit[2]);

#endif
