/* slurmrestd_hostlist.h: Slurm's host lists ("n[1-3,05-07],gpu01"), as a job's "nodes" gives them in
 * slurmrestd's /jobs, expanded one host at a time (the users of a node's jobs: loadview.h).
 * Grammar read: comma-separated items; an item is a name, or prefix[ranges]suffix with ranges a comma
 * list of N or N-M (decimal; the width of N zero-padded as written, as Slurm prints it). Anything else
 * (nested or unclosed brackets, a range backwards or wider than REST_HOSTLIST_MAX hosts) makes the
 * whole list refused: nothing is expanded and -1 returned. */
#ifndef SHIM_SLURMRESTD_HOSTLIST_H
#define SHIM_SLURMRESTD_HOSTLIST_H

#include <stddef.h>

#define REST_HOSTLIST_MAX 65536u  /* hosts of one list */
#define REST_HOST_MAX 256u        /* bytes of one host name */

typedef void (*rest_host_fn)(void *ctx, const char *host, size_t n);
/* fn for every host of s[0..n): their count, or -1 (nothing called) for a list it does not read. */
long rest_hostlist_each(const char *s, size_t n, rest_host_fn fn, void *ctx);

#endif
