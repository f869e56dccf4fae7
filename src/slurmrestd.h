/* slurmrestd.h: slurmrestd's JSON answers (data_parser v0.0.41..v0.0.44) -> families of a struct expo,
 * streaming: the bytes are parsed as they arrive (yajl's callback parser), one record (a node, a
 * job, a share row) at a time in a bounded scratch, so memory follows what is kept, not the body.
 * Jobs are aggregated while streaming into count and CPU-sum families keyed by the labels rows read,
 * so a 100k-job answer costs what its distinct label sets cost. The families (slurmrestd_*) and the
 * JSON field each comes from are documented in docs/mapping.md, "slurmrestd families".
 *
 * Interface (one parser per document, as a source's parser calls it, one call per chunk):
 *   st = rest_begin_nodes(e);   (or _shares, _jobs, _diag)
 *   rest_feed(st, e, data, n);  for every chunk, in order; the chunk may go away after the call
 *   bad = rest_end(st, e);      frees st; returns the malformed-item count (0 for a good document)
 *   rest_discard(st);           instead of rest_end: a restarted or failed transfer; frees st
 * Families go into e only in rest_end (a discarded transfer leaves e untouched), through
 * expo_add(), so e->keep applies: families nobody reads cost nothing.
 * Malformed: a JSON syntax error, a truncated body, nesting deeper than REST_MAX_DEPTH or a string
 * longer than REST_MAX_STRING counts 1 and ends the document (records complete before it are
 * kept); a record with a wrong-typed or missing field it needs counts 1 and is skipped; each entry
 * of the answer's top-level "errors" array counts 1 (slurmrestd's own report of a failure).
 * Ownership: the state is the caller's between begin and end/discard. */
#ifndef SHIM_SLURMRESTD_H
#define SHIM_SLURMRESTD_H

#include <stddef.h>

#include "expo.h"

#define REST_MAX_DEPTH 64
#define REST_MAX_STRING (64u * 1024)   /* a longer string or key is refused */

enum rest_doc { REST_NODES, REST_SHARES, REST_JOBS, REST_DIAG };

void *rest_begin(struct expo *e, enum rest_doc doc);
void *rest_begin_nodes(struct expo *e);
void *rest_begin_shares(struct expo *e);
void *rest_begin_jobs(struct expo *e);
void *rest_begin_diag(struct expo *e);
void rest_feed(void *st, struct expo *e, const char *data, size_t n);
size_t rest_end(void *st, struct expo *e);
void rest_discard(void *st);

/* Tasks of an array record's task string ("1-6", "1,3,5-9:2%4"); 0 for an empty or bad string. */
unsigned long rest_array_tasks(const char *s, size_t n);

#endif
