/* slurmrestd_state.h: Slurm's state words for slurmrestd records, computed as Slurm's own tools print them.
 *
 * slurmrestd (data_parser v0.0.41..v0.0.46) lists a node's state as an array of names ("IDLE",
 * "DRAIN", "NOT_RESPONDING"...) and a job's the same way ("PENDING", "COMPLETING"...). sinfo's %T
 * (what the old exporter read) prints node_state_string() lower-cased: "drained*", "draining@",
 * "mixed-", "maint"; squeue's %T prints job_state_string(): the first set flag of a fixed order,
 * else the base state. These functions rebuild those strings from the names. */
#ifndef SHIM_SLURMRESTD_STATE_H
#define SHIM_SLURMRESTD_STATE_H

#include <stddef.h>
#include <stdint.h>

/* A node state as Slurm holds it: one base state and a set of flags (our own bit numbering). */
struct node_state {
	int base;          /* RNODE_* below; RNODE_UNKNOWN when none was named */
	uint32_t flags;    /* 1u << RNF_* */
};

enum { RNODE_UNKNOWN, RNODE_DOWN, RNODE_IDLE, RNODE_ALLOCATED, RNODE_ERROR, RNODE_MIXED, RNODE_FUTURE };

/* Add one name of a data_parser state array to s. Returns 0, or -1 for a name it does not know
 * (ignored: a newer Slurm may add flags). */
int node_state_add(struct node_state *s, const char *name, size_t n);
/* The base state's word, as scontrol show node's State= begins (node_state_base_string():
 * "IDLE", "ALLOCATED", "MIXED", "DOWN", "ERROR", "FUTURE", "UNKNOWN"). */
const char *node_state_base_name(const struct node_state *s);
/* sinfo's long state (%T, lower case) into buf (at least 24 bytes); returns its length. */
size_t node_state_sinfo(const struct node_state *s, char *buf, size_t cap);
/* sinfo's CPU rule (%C): the unallocated CPUs of a drained/draining or down node are "other". */
int node_state_is_cpus_other(const struct node_state *s);
/* Why a node's slurmd no longer reports its load (NOT_RESPONDING, POWERED_DOWN, base state DOWN),
 * or NULL: it does. */
const char *node_state_silent(const struct node_state *s);

/* A job state: rank of the flag squeue prints first (0 = none yet), and the base name. */
struct job_state {
	int flag;          /* index + 1 into the flag order, 0 = no flag seen */
	const char *base;  /* static name, NULL until a base state is named */
};
/* Add one name of a data_parser job state array to s. Returns 0 for every name data_parser v0.0.41..v0.0.46
 * writes (the flags squeue never prints, LAUNCH_FAILED, RECONFIG_FAIL, POWER_UP_NODE, and END, add
 * nothing), -1 for any other (a newer Slurm's: where its job counts is not known). */
int job_state_add(struct job_state *s, const char *name, size_t n);
/* squeue's %T: the first flag of Slurm's order, else the base; "?" when neither was named. */
const char *job_state_squeue(const struct job_state *s);

#endif
