/* options_fork.c: see options_fork.h. The rows follow SckyzO/slurm_exporter's cmd/slurm_exporter
 * (v1.8, and the two its unreleased 2.0 adds: --collector.node.gres, --collector.queue.terminal-states):
 * its collector flags and the few flags of its own; docs/migration.md says what each does. */
#include "options_fork.h"

#include <string.h>

#include "log.h"

#define NO_COMMAND "the shim runs no Slurm command"
#define COLLECTOR "the shim serves every legacy family from slurmctld's metrics whatever the collector flags (docs/migration.md)"

static const struct fork_flag fork_flags[] = {
	{ .name = "command.timeout", .kind = FORK_DURATION, .why = NO_COMMAND },
	{ .name = "slurm.bin-path", .kind = FORK_STRING, .why = NO_COMMAND },
	{ .name = "web.disable-exporter-metrics", .kind = FORK_BOOL,
	  .why = "the shim serves no Go runtime metrics (go_*, process_*, promhttp_*) to disable" },
	{ .name = "collector.gpus", .kind = FORK_GPUS },
	{ .name = "collector.accounts", .kind = FORK_BOOL, .why = COLLECTOR },
	{ .name = "collector.cpus", .kind = FORK_BOOL, .why = COLLECTOR },
	{ .name = "collector.drain_reason", .kind = FORK_BOOL, .why = COLLECTOR },
	{ .name = "collector.fairshare", .kind = FORK_BOOL, .why = COLLECTOR },
	{ .name = "collector.info", .kind = FORK_BOOL, .why = COLLECTOR },
	{ .name = "collector.licenses", .kind = FORK_BOOL, .why = COLLECTOR },
	{ .name = "collector.node", .kind = FORK_BOOL, .why = COLLECTOR },
	{ .name = "collector.nodes", .kind = FORK_BOOL, .why = COLLECTOR },
	{ .name = "collector.partitions", .kind = FORK_BOOL, .why = COLLECTOR },
	{ .name = "collector.queue", .kind = FORK_BOOL, .why = COLLECTOR },
	{ .name = "collector.reservation_nodes", .kind = FORK_BOOL, .why = COLLECTOR },
	{ .name = "collector.reservations", .kind = FORK_BOOL, .why = COLLECTOR },
	{ .name = "collector.sacct_efficiency", .kind = FORK_BOOL, .why = COLLECTOR },
	{ .name = "collector.scheduler", .kind = FORK_BOOL, .why = COLLECTOR },
	{ .name = "collector.users", .kind = FORK_BOOL, .why = COLLECTOR },
	{ .name = "collector.nodes.feature-set", .kind = FORK_BOOL,
	  .why = "the shim's slurm_nodes_* have the old exporter's labels, no active_feature_set" },
	{ .name = "collector.fairshare.user-metrics", .kind = FORK_BOOL,
	  .why = "the shim serves the old exporter's per-account slurm_account_fairshare only" },
	{ .name = "collector.queue.user-label", .kind = FORK_BOOL,
	  .why = "the shim's slurm_queue_* have the old exporter's labels, no user" },
	{ .name = "collector.node.gres", .kind = FORK_BOOL,
	  .why = "the shim serves no slurm_node_gres_* (the fork's own families)" },
	{ .name = "collector.queue.terminal-states", .kind = FORK_BOOL,
	  .why = "the shim runs no squeue: its job counts are slurmctld's" },
	{ .name = "collector.sacct.interval", .kind = FORK_DURATION, .why = "the shim runs no sacct" },
	{ .name = "collector.sacct.lookback", .kind = FORK_DURATION, .why = "the shim runs no sacct" },
	/* last: any other --[no-]collector.NAME */
	{ .name = "collector.*", .kind = FORK_BOOL, .why = COLLECTOR },
};
#define NFORK (sizeof(fork_flags) / sizeof(fork_flags[0]))

/* A collector's name: what kingpin would take as a flag name after "collector.". */
static int is_collector_name(const char *s, size_t n)
{
	if (!n)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (!strchr("abcdefghijklmnopqrstuvwxyz0123456789_-.", s[i]))
			return 0;
	return 1;
}

const struct fork_flag *fork_flag_find(const char *name, size_t n, int *negated)
{
	*negated = n > 3 && !memcmp(name, "no-", 3);
	if (*negated) {
		name += 3;
		n -= 3;
	}
	for (size_t k = 0; k + 1 < NFORK; k++)
		if (strlen(fork_flags[k].name) == n && !memcmp(fork_flags[k].name, name, n))
			return *negated && fork_flags[k].kind != FORK_BOOL && fork_flags[k].kind != FORK_GPUS ? NULL
															: &fork_flags[k];
	if (n > 10 && !memcmp(name, "collector.", 10) && is_collector_name(name + 10, n - 10))
		return &fork_flags[NFORK - 1];
	return NULL;
}

/* One decimal number ("5", "1.5", ".5", "5.") at s: its length, or 0. */
static size_t duration_number(const char *s)
{
	size_t i = strspn(s, "0123456789"), f = 0;
	if (s[i] == '.')
		f = strspn(s + i + 1, "0123456789") + 1;
	return i || f > 1 ? i + f : 0;
}

int fork_is_duration(const char *v)
{
	static const char *const units[] = { "ns", "us", "\xc2\xb5s", "\xce\xbcs", "ms", "s", "m", "h" };
	if (*v == '+' || *v == '-')
		v++;
	if (!strcmp(v, "0"))
		return 1;
	if (!*v)
		return 0;
	while (*v) {
		size_t n = duration_number(v), u = 0;
		if (!n)
			return 0;
		v += n;
		for (size_t k = 0; k < sizeof(units) / sizeof(units[0]) && !u; k++) /* "ms" is tried before "m" */
			if (!strncmp(v, units[k], strlen(units[k])))
				u = strlen(units[k]);
		if (!u)
			return 0; /* time: missing unit in duration */
		v += u;
	}
	return 1;
}

void fork_flags_warn(const char *const *given, size_t n, size_t more)
{
	for (size_t i = 0; i < n; i++) {
		const char *a = given[i] + strspn(given[i], "-");
		size_t len = strcspn(a, "=");
		int neg, on = 1;
		const struct fork_flag *f = fork_flag_find(a, len, &neg);
		if (!f)
			continue; /* not one of the fork's: options_parse gives none */
		if (f->kind == FORK_GPUS) {
			const char *v = a[len] == '=' ? a + len + 1 : "true";
			on = !neg && strchr("1tT", v[0]) != NULL;
			log_info("flag --%.*s is the SckyzO slurm_exporter's: the legacy GPU families are %s, as with the shim's "
				 "%s", (int)len, a, on ? "served" : "not served", on ? "--gpus-acct" : "default (no --gpus-acct)");
			continue;
		}
		if (f == &fork_flags[NFORK - 1])
			log_warn("flag --%.*s looks like a SckyzO slurm_exporter collector flag, though it lists no such collector; "
				 "%s, ignored", (int)len, a, f->why);
		else
			log_warn("flag --%.*s is the SckyzO slurm_exporter's; %s, ignored", (int)len, a, f->why);
	}
	if (more)
		log_warn("%zu more of the SckyzO slurm_exporter's flags given, each ignored as the ones above", more);
}
