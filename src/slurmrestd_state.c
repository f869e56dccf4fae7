/* slurmrestd_state.c: see slurmrestd_state.h. The rules follow Slurm 25.11's node_state_string() and
 * job_state_string() (src/common/slurm_protocol_defs.c) and sinfo's _update_sinfo() (src/sinfo/sinfo.c),
 * rewritten as tables; the names are those of the data_parser's NODE_STATES and JOB_STATE arrays. */
#include "slurmrestd_state.h"

#include <stdio.h>
#include <string.h>

enum {
	RNF_EXTERNAL, RNF_RESERVED, RNF_UNDRAIN, RNF_CLOUD, RNF_RESUME, RNF_DRAIN, RNF_COMPLETING,
	RNF_NOT_RESPONDING, RNF_POWERED_DOWN, RNF_FAIL, RNF_POWERING_UP, RNF_MAINTENANCE,
	RNF_REBOOT_REQUESTED, RNF_REBOOT_CANCELED, RNF_POWERING_DOWN, RNF_DYNAMIC_FUTURE,
	RNF_REBOOT_ISSUED, RNF_PLANNED, RNF_INVALID_REG, RNF_POWER_DOWN, RNF_POWER_UP, RNF_POWER_DRAIN,
	RNF_DYNAMIC_NORM, RNF_BLOCKED, RNF_COUNT
};

#define F(x) (1u << RNF_##x)

static const char *const node_bases[] = {
	[RNODE_UNKNOWN] = "UNKNOWN", [RNODE_DOWN] = "DOWN", [RNODE_IDLE] = "IDLE",
	[RNODE_ALLOCATED] = "ALLOCATED", [RNODE_ERROR] = "ERROR", [RNODE_MIXED] = "MIXED",
	[RNODE_FUTURE] = "FUTURE",
};

static const char *const node_flags[RNF_COUNT] = {
	"EXTERNAL", "RESERVED", "UNDRAIN", "CLOUD", "RESUME", "DRAIN", "COMPLETING", "NOT_RESPONDING",
	"POWERED_DOWN", "FAIL", "POWERING_UP", "MAINTENANCE", "REBOOT_REQUESTED", "REBOOT_CANCELED",
	"POWERING_DOWN", "DYNAMIC_FUTURE", "REBOOT_ISSUED", "PLANNED", "INVALID_REG", "POWER_DOWN",
	"POWER_UP", "POWER_DRAIN", "DYNAMIC_NORM", "BLOCKED",
};

/* data_parser v0.0.45's NODE_STATES masks of two flags */
static const struct { const char *name; uint32_t flags; } node_pairs[] = {
	{ "POWER_DOWN_ASAP", F(POWER_DOWN) | F(POWER_DRAIN) },
	{ "POWER_DOWN_FORCE", F(POWER_DOWN) | F(POWERED_DOWN) },
};

static int name_is_equal(const char *s, size_t n, const char *name)
{
	return strlen(name) == n && memcmp(s, name, n) == 0;
}

int node_state_add(struct node_state *s, const char *name, size_t n)
{
	for (int b = 0; b < (int)(sizeof(node_bases) / sizeof(node_bases[0])); b++)
		if (name_is_equal(name, n, node_bases[b])) {
			s->base = b;
			return 0;
		}
	for (int f = 0; f < RNF_COUNT; f++)
		if (name_is_equal(name, n, node_flags[f])) {
			s->flags |= 1u << f;
			return 0;
		}
	/* v0.0.45 on: names of two flags at once, listed besides each of them (node_state_string()
	 * prints no word of their own) */
	for (size_t c = 0; c < sizeof(node_pairs) / sizeof(node_pairs[0]); c++)
		if (name_is_equal(name, n, node_pairs[c].name)) {
			s->flags |= node_pairs[c].flags;
			return 0;
		}
	return name_is_equal(name, n, "INVALID") ? 0 : -1; /* NO_VAL: nothing to add */
}

const char *node_state_base_name(const struct node_state *s)
{
	return node_bases[s->base];
}

/* The suffix character of a state word: the first of these flags the node carries. */
static const struct { uint32_t flag; char c; } suffixes[] = {
	{ F(MAINTENANCE), '$' }, { F(REBOOT_ISSUED), '^' }, { F(REBOOT_REQUESTED), '@' },
	{ F(POWERING_UP), '#' }, { F(POWERING_DOWN), '%' }, { F(POWERED_DOWN), '~' },
	{ F(POWER_DOWN), '!' }, { F(NOT_RESPONDING), '*' },
};

/* A state that is exactly one flag (base UNKNOWN, nothing else) prints that flag's word. */
static const struct { uint32_t flag; const char *word; } lone_flags[] = {
	{ F(REBOOT_ISSUED), "reboot_issued" }, { F(REBOOT_CANCELED), "cancel_reboot" },
	{ F(CLOUD), "cloud" }, { F(EXTERNAL), "external" }, { F(POWER_DOWN), "power_down" },
	{ F(POWER_UP), "power_up" }, { F(POWERING_DOWN), "powering_down" },
	{ F(POWERED_DOWN), "powered_down" }, { F(POWERING_UP), "powering_up" }, { F(UNDRAIN), "undrain" },
	{ F(DYNAMIC_FUTURE), "dynamic_future" }, { F(DYNAMIC_NORM), "dynamic_norm" },
};

/* word + the suffix of the first flag set, or + `other` when none is (0: nothing). */
static size_t with_suffix(uint32_t fl, const char *word, char other, char *buf, size_t cap)
{
	char c = other;
	for (size_t i = 0; i < sizeof(suffixes) / sizeof(suffixes[0]); i++)
		if (fl & suffixes[i].flag) {
			c = suffixes[i].c;
			break;
		}
	int n = c ? snprintf(buf, cap, "%s%c", word, c) : snprintf(buf, cap, "%s", word);
	return n < 0 ? 0 : (size_t)n < cap ? (size_t)n : cap - 1;
}

static size_t word(const char *w, char *buf, size_t cap)
{
	return with_suffix(0, w, 0, buf, cap);
}

/* The words of the base states, after the flag rules of node_state_sinfo() found none. */
static size_t base_word(const struct node_state *s, char *buf, size_t cap)
{
	uint32_t fl = s->flags;
	switch (s->base) {
	case RNODE_DOWN:
		return with_suffix(fl, "down", 0, buf, cap);
	case RNODE_ALLOCATED:
		return with_suffix(fl, "allocated", fl & F(COMPLETING) ? '+' : 0, buf, cap);
	default:
		break;
	}
	if (fl & F(COMPLETING))
		return with_suffix(fl, "completing", 0, buf, cap);
	switch (s->base) {
	case RNODE_IDLE:
		if (fl & (F(MAINTENANCE) | F(REBOOT_ISSUED) | F(REBOOT_REQUESTED) | F(POWERING_UP) |
			  F(POWERING_DOWN) | F(POWERED_DOWN) | F(POWER_DOWN) | F(NOT_RESPONDING)))
			return with_suffix(fl, "idle", 0, buf, cap);
		return word(fl & F(RESERVED) ? "reserved" : fl & F(BLOCKED) ? "blocked" :
			    fl & F(PLANNED) ? "planned" : "idle", buf, cap);
	case RNODE_MIXED:
		return with_suffix(fl, "mixed", fl & F(PLANNED) ? '-' : 0, buf, cap);
	case RNODE_FUTURE:
		return with_suffix(fl, "future", 0, buf, cap);
	default:
		break;
	}
	if (fl & F(RESUME))
		return word("resume", buf, cap);
	if (s->base == RNODE_UNKNOWN)
		return word(fl & F(NOT_RESPONDING) ? "unknown*" : "unknown", buf, cap);
	return word("?", buf, cap);
}

size_t node_state_sinfo(const struct node_state *s, char *buf, size_t cap)
{
	uint32_t fl = s->flags;
	int busy = s->base == RNODE_ALLOCATED || s->base == RNODE_MIXED;
	int no_resp = !!(fl & F(NOT_RESPONDING));
	if (fl & F(INVALID_REG))
		return word("inval", buf, cap);
	if ((fl & F(MAINTENANCE)) && !(fl & F(DRAIN)) && !busy && s->base != RNODE_DOWN)
		return word(no_resp ? "maint*" : "maint", buf, cap);
	if ((fl & (F(REBOOT_REQUESTED) | F(REBOOT_ISSUED))) && !busy)
		return word(fl & F(REBOOT_ISSUED) ? "reboot^" : no_resp ? "reboot*" : "reboot", buf, cap);
	busy |= !!(fl & F(COMPLETING));
	if (fl & F(DRAIN))
		return with_suffix(fl, busy ? "draining" : "drained", 0, buf, cap);
	if (fl & F(FAIL))
		return with_suffix(fl & F(NOT_RESPONDING), busy ? "failing" : "fail", 0, buf, cap);
	for (size_t i = 0; i < sizeof(lone_flags) / sizeof(lone_flags[0]); i++)
		if (s->base == RNODE_UNKNOWN && fl == lone_flags[i].flag)
			return word(lone_flags[i].word, buf, cap);
	return base_word(s, buf, cap);
}

int node_state_is_cpus_other(const struct node_state *s)
{
	return (s->flags & F(DRAIN)) || s->base == RNODE_DOWN;
}

const char *node_state_silent(const struct node_state *s)
{
	if (s->flags & F(NOT_RESPONDING))
		return "not responding: its load is the last slurmd reported";
	if (s->flags & F(POWERED_DOWN))
		return "powered down: no slurmd reports its load";
	if (s->base == RNODE_DOWN)
		return "down: its load is the last slurmd reported";
	return NULL;
}

/* squeue prints the first of these flags a job carries, else its base state. */
static const char *const job_flags[] = {
	"COMPLETING", "STAGE_OUT", "CONFIGURING", "EXPEDITING", "RESIZING", "REQUEUED", "REQUEUE_FED",
	"REQUEUE_HOLD", "SPECIAL_EXIT", "STOPPED", "REVOKED", "RESV_DEL_HOLD", "SIGNALING",
};

static const char *const job_bases[] = {
	"PENDING", "RUNNING", "SUSPENDED", "COMPLETED", "CANCELLED", "FAILED", "TIMEOUT", "NODE_FAIL",
	"PREEMPTED", "BOOT_FAIL", "DEADLINE", "OUT_OF_MEMORY",
};

int job_state_add(struct job_state *s, const char *name, size_t n)
{
	for (size_t i = 0; i < sizeof(job_flags) / sizeof(job_flags[0]); i++)
		if (name_is_equal(name, n, job_flags[i])) {
			if (!s->flag || (int)i + 1 < s->flag)
				s->flag = (int)i + 1;
			return 0;
		}
	for (size_t i = 0; i < sizeof(job_bases) / sizeof(job_bases[0]); i++)
		if (name_is_equal(name, n, job_bases[i])) {
			s->base = job_bases[i];
			return 0;
		}
	/* flags squeue never prints, and v0.0.45's name of the bases' mask: nothing to add */
	static const char *const silent[] = { "LAUNCH_FAILED", "RECONFIG_FAIL", "POWER_UP_NODE", "END" };
	for (size_t i = 0; i < sizeof(silent) / sizeof(silent[0]); i++)
		if (name_is_equal(name, n, silent[i]))
			return 0;
	return -1; /* a name no data_parser (v0.0.41..v0.0.46) writes: a newer Slurm's */
}

const char *job_state_squeue(const struct job_state *s)
{
	return s->flag ? job_flags[s->flag - 1] : s->base ? s->base : "?";
}
