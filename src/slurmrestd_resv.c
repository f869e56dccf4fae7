/* slurmrestd_resv.c: slurmrestd's /reservations, what `scontrol show reservation` prints. A reservation
 * is kept when its record closes and written when the document ends, since its state (scontrol's
 * State=ACTIVE or INACTIVE) is told against the answer's own clock, its top-level "last_update", which
 * may come after the records: slurmctld's show_resv() packs its time(NULL) there, the instant
 * scontrol's slurm_sprint_reservation_info() compares start and end times with its own time(NULL).
 * Flags are written as scontrol writes them (reservation_flags_string(): its order, its words,
 * PURGE_COMP=<time>), not in the data_parser's order. Each reservation's node_list is expanded
 * (slurmrestd_hostlist.h) only while a table reads slurmrestd_reservation_node. */
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "slurmrestd_hostlist.h"
#include "slurmrestd_int.h"

#define RESV(p, k, f) { p, k, offsetof(struct resv_rec, f) }

const struct slot rest_resv_slots[] = {
	RESV("name", S_STR, name), RESV("users", S_STR, users), RESV("accounts", S_STR, accounts),
	RESV("node_list", S_STR, nodes), RESV("partition", S_STR, partition), RESV("flags[]", S_LIST, flags),
	RESV("start_time", S_NUM, start), RESV("end_time", S_NUM, end), RESV("node_count", S_NUM, node_count),
	RESV("core_count", S_NUM, core_count), RESV("purge_completed.time", S_NUM, purge), { NULL, S_NUM, 0 },
};

/* scontrol's words, in its order (Slurm 25.11's reservation_flags_string()). The data_parser's other
 * names (NO_IGNORE_JOBS, NO_WEEKDAY, NO_WEEKEND, NO_FLEX, DURATION_PLUS, DURATION_MINUS,
 * NO_PURGE_COMP, SKIP, REOCCURRING, TRES_PER_NODE) scontrol never prints; a name neither list knows
 * (a newer Slurm's) is written after these, in the answer's order. */
static const char *const scontrol_flags[] = {
	"MAINT", "NO_MAINT", "FLEX", "OVERLAP", "IGNORE_JOBS", "HOURLY", "NO_HOURLY", "DAILY", "NO_DAILY",
	"WEEKDAY", "WEEKEND", "WEEKLY", "NO_WEEKLY", "SPEC_NODES", "ALL_NODES", "ANY_NODES", "NO_ANY_NODES",
	"STATIC", "NO_STATIC", "PART_NODES", "NO_PART_NODES", "TIME_FLOAT", "REPLACE", "REPLACE_DOWN",
	"PURGE_COMP", "NO_HOLD_JOBS_AFTER_END", "MAGNETIC", "NO_MAGNETIC", "USER_DELETE", "NO_USER_DELETE",
	"FORCE_START",
};

static const char *const unprinted_flags[] = {
	"NO_IGNORE_JOBS", "NO_WEEKDAY", "NO_WEEKEND", "NO_FLEX", "DURATION_PLUS", "DURATION_MINUS",
	"NO_PURGE_COMP", "SKIP", "REOCCURRING", "TRES_PER_NODE",
};

#define NFLAGS(a) (sizeof(a) / sizeof((a)[0]))

static int list_has(const char *s, size_t n, const char *word)
{
	size_t w = strlen(word);
	for (size_t i = 0, start = 0; i <= n; i++)
		if (i == n || s[i] == ',') {
			if (i - start == w && !memcmp(s + start, word, w))
				return 1;
			start = i + 1;
		}
	return 0;
}

static int word_is_listed(const char *p, size_t n, const char *const *v, size_t nv)
{
	for (size_t i = 0; i < nv; i++)
		if (strlen(v[i]) == n && !memcmp(p, v[i], n))
			return 1;
	return 0;
}

/* Slurm's secs2time_str(): [days-]HH:MM:SS, UNLIMITED for INFINITE */
static int purge_text(double secs, char *out, size_t cap)
{
	if (isinf(secs))
		return snprintf(out, cap, "UNLIMITED");
	long t = (long)secs, d = t / 86400, h = (t / 3600) % 24, m = (t / 60) % 60, s = t % 60;
	if (d)
		return snprintf(out, cap, "%ld-%2.2ld:%2.2ld:%2.2ld", d, h, m, s);
	return snprintf(out, cap, "%2.2ld:%2.2ld:%2.2ld", h, m, s);
}

/* The flags as scontrol prints them, into the arena; *len its length. */
static const char *flags_scontrol(struct rest *st, const struct resv_rec *r, uint32_t *len)
{
	const char *s = rest_sp(st, &r->flags);
	size_t n = r->flags.set ? r->flags.len : 0, at = 0;
	char *out = arena_alloc(&st->arena, n + 48);
	for (size_t i = 0; i < NFLAGS(scontrol_flags); i++) {
		if (!list_has(s, n, scontrol_flags[i]))
			continue;
		at += (size_t)snprintf(out + at, n + 48 - at, "%s%s", at ? "," : "", scontrol_flags[i]);
		double p = r->purge;
		if (!strcmp(scontrol_flags[i], "PURGE_COMP") && !isnan(p) && p > 0 && p < 1e12) {
			out[at++] = '=';
			at += (size_t)purge_text(p, out + at, n + 48 - at);
		}
	}
	for (size_t i = 0, start = 0; i <= n; i++) /* names scontrol does not know of: as given */
		if (i == n || s[i] == ',') {
			size_t w = i - start;
			if (w && !word_is_listed(s + start, w, scontrol_flags, NFLAGS(scontrol_flags)) &&
			    !word_is_listed(s + start, w, unprinted_flags, NFLAGS(unprinted_flags))) {
				if (at)
					out[at++] = ',';
				memcpy(out + at, s + start, w);
				at += w;
			}
			start = i + 1;
		}
	*len = (uint32_t)at;
	return out;
}

/* The hosts of every reservation's node_list, together (each list is bounded by REST_HOSTLIST_MAX on
 * its own, but "n[1-65536]" is 11 bytes of JSON): a document listing more is refused. */
#define RESV_HOSTS_MAX (1u << 20)

static void count_host(void *ctx, const char *host, size_t n)
{
	(void)host;
	(void)n;
	(*(size_t *)ctx)++;
}

static const char node_fam[] = "slurmrestd_reservation_node";

/* One host of a reservation's node_list: slurmrestd_reservation_node{node,reservation} 1. */
struct resv_host_ctx {
	struct rest *st;
	struct label name;
};

static void resv_host(void *ctx, const char *host, size_t n)
{
	struct resv_host_ctx *c = ctx;
	struct label l[2] = { label_of("node", host, n), c->name };
	expo_add(c->st->e, node_fam, sizeof(node_fam) - 1, l, 2, 1);
}

/* A reservation's node_list, when a table reads its hosts: counted (expanded in rest_resv_finish, once
 * every list is known to be within the bounds). */
static int resv_nodes(struct rest *st, const struct resv_rec *r, const char *esc)
{
	if (!r->nodes.len || !expo_wants(st->e, node_fam, sizeof(node_fam) - 1))
		return 1;
	char list[40];
	size_t hosts = 0;
	if (rest_hostlist_each(rest_sp(st, &r->nodes), r->nodes.len, count_host, &hosts) < 0)
		return rest_fail(st, 1, "reservation '%s': node_list '%s' not expanded (over %u hosts, or no host list)", esc,
				 rest_esc(list, sizeof(list), rest_sp(st, &r->nodes), r->nodes.len), REST_HOSTLIST_MAX);
	if (hosts > RESV_HOSTS_MAX - st->resv_hosts)
		return rest_fail(st, 1, "the reservations' node_lists hold more than %u hosts together (at reservation '%s')",
				 RESV_HOSTS_MAX, esc);
	st->resv_hosts += hosts;
	return 1;
}

int rest_resv_end(struct rest *st)
{
	const struct resv_rec *r = &st->r.resv;
	char esc[48];
	if (!r->name.len)
		return rest_fail(st, 1, "a reservation without a name");
	const char *name = rest_sp(st, &r->name);
	rest_esc(esc, sizeof(esc), name, r->name.len);
	if (rest_seen_before(st, name, r->name.len))
		return rest_fail(st, 1, "reservation '%s' listed twice", esc);
	if (!resv_nodes(st, r, esc))
		return 0;
	st->resv = xgrow(st->resv, &st->resvcap, st->nresv + 1, sizeof(*st->resv));
	struct resv_kept *k = &st->resv[st->nresv++];
	const struct str *s[RESV_L_N] = { [RESV_L_ACCOUNTS] = &r->accounts, [RESV_L_NODES] = &r->nodes,
					  [RESV_L_PARTITION] = &r->partition, [RESV_L_NAME] = &r->name,
					  [RESV_L_USERS] = &r->users };
	for (int i = 0; i < RESV_L_N; i++) {
		size_t n = s[i] && s[i]->set ? s[i]->len : 0;
		k->v[i] = n ? arena_strndup(&st->arena, rest_sp(st, s[i]), n) : "";
		k->n[i] = (uint32_t)n;
	}
	k->v[RESV_L_FLAGS] = flags_scontrol(st, r, &k->n[RESV_L_FLAGS]);
	k->start = r->start;
	k->end = r->end;
	/* scontrol's NodeCnt prints Slurm's NO_VAL as 0 */
	k->node_count = r->node_count == 4294967294.0 ? 0 : r->node_count;
	k->core_count = r->core_count;
	return 1;
}

static void put(struct rest *st, const char *fam, struct label *name, double v)
{
	struct label l = *name;
	if (!isnan(v))
		expo_add(st->e, fam, strlen(fam), &l, 1, v);
}

int rest_resv_finish(struct rest *st)
{
	static const char *const lname[RESV_L_N] = { [RESV_L_ACCOUNTS] = "accounts", [RESV_L_FLAGS] = "flags",
						     [RESV_L_NODES] = "nodes", [RESV_L_PARTITION] = "partition",
						     [RESV_L_NAME] = "reservation", [RESV_L_USERS] = "users" };
	if (isnan(st->clock))
		return rest_fail(st, 1, "no 'last_update': the reservations' state cannot be told");
	if (isinf(st->clock))
		return rest_fail(st, 1, "'last_update' is no time");
	for (size_t i = 0; i < st->nresv; i++) {
		const struct resv_kept *k = &st->resv[i];
		struct label l[RESV_L_N + 1], name = label_of("reservation", k->v[RESV_L_NAME], k->n[RESV_L_NAME]);
		uint32_t n = 0;
		for (int j = 0; j < RESV_L_N; j++)
			if (k->n[j]) /* an empty value is no label */
				l[n++] = label_of(lname[j], k->v[j], k->n[j]);
		/* scontrol: ACTIVE when start_time <= now <= end_time */
		l[n++] = label_str("state", k->start <= st->clock && k->end >= st->clock ? "ACTIVE" : "INACTIVE");
		expo_add(st->e, "slurmrestd_reservation_info", sizeof("slurmrestd_reservation_info") - 1, l, n, 1);
		put(st, "slurmrestd_reservation_start_time", &name, k->start);
		put(st, "slurmrestd_reservation_end_time", &name, k->end);
		put(st, "slurmrestd_reservation_node_count", &name, k->node_count);
		put(st, "slurmrestd_reservation_core_count", &name, k->core_count);
		if (st->resv_hosts && k->n[RESV_L_NODES]) { /* counted and bounded when the record ended */
			struct resv_host_ctx c = { st, name };
			rest_hostlist_each(k->v[RESV_L_NODES], k->n[RESV_L_NODES], resv_host, &c);
		}
	}
	return 1;
}
