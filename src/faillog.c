/* faillog.c: see faillog.h. */
#include "faillog.h"

#include <stdio.h>
#include <string.h>

#include "controllers.h"
#include "cred.h"
#include "log.h"

/* p's reason without its "<path>: ": what the line says after where it was fetched. */
static const char *reason_text(const struct payload *p)
{
	size_t n = strlen(sources[p->src].path);
	return !strncmp(p->reason, sources[p->src].path, n) && !strncmp(p->reason + n, ": ", 2) ? p->reason + n + 2
												: p->reason;
}

/* Whether two reasons say the same: equal but for the figure after "after " (curl's "Failed to connect
 * to h port 6817 after 1 ms", "timed out after 10001 milliseconds"), which differs between the
 * endpoints of one refused or timed-out fetch by the moment each was tried. */
static int reason_is_same(const char *a, const char *b)
{
	static const char after[] = "after ";
	const size_t n = sizeof(after) - 1;
	while (*a && *a == *b) {
		if (!strncmp(a, after, n) && !strncmp(b, after, n) && a[n] >= '0' && a[n] <= '9' && b[n] >= '0' &&
		    b[n] <= '9') {
			for (a += n; *a >= '0' && *a <= '9'; a++)
				;
			for (b += n; *b >= '0' && *b <= '9'; b++)
				;
			continue;
		}
		a++, b++;
	}
	return *a == *b;
}

/* Where p came from: the upstream and its URL (the controller it was fetched from when known), or
 * the replay directory. */
static const char *fetched_from(const struct payload *p, const struct upstream_config cfg[UPSTREAM_COUNT],
				struct controllers *ctl, const char *replay_dir, char *out, size_t len)
{
	const struct upstream_config *u = &cfg[sources[p->src].upstream];
	const char *name = upstreams[sources[p->src].upstream].name;
	char shown[CRED_SHOWN_MAX];
	if (replay_dir)
		snprintf(out, len, "replay of %s", replay_dir);
	else if (ctl && sources[p->src].upstream == UPSTREAM_SLURMCTLD && p->controller >= 0)
		snprintf(out, len, "%s %s", name, controllers_shown(ctl, (size_t)p->controller));
	else
		snprintf(out, len, "%s %s", name, cred_url_shown(shown, sizeof(shown), u->base_url));
	return out;
}

void faillog_report(unsigned failed, struct payload *const got[SRC_COUNT], const struct upstream_config cfg[UPSTREAM_COUNT],
		    struct controllers *ctl, const char *replay_dir)
{
	for (int id = 0; id < SRC_COUNT; id++) {
		if (!(failed & (1u << id)))
			continue;
		char list[600], where[CRED_SHOWN_MAX + 64];
		size_t o = 0, k = 0, count = 0;
		unsigned same = 0;
		for (int j = id; j < SRC_COUNT; j++)
			if ((failed & (1u << j)) && sources[j].upstream == sources[id].upstream &&
			    got[j]->controller == got[id]->controller && reason_is_same(reason_text(got[j]), reason_text(got[id]))) {
				same |= 1u << j;
				count++;
			}
		failed &= ~same;
		for (int j = id; j < SRC_COUNT && o < sizeof(list); j++)
			if (same & (1u << j)) {
				k++;
				int w = snprintf(list + o, sizeof(list) - o, "%s%s", k == 1 ? "" : k == count ? " and " : ", ",
						 sources[j].path);
				o += w > 0 ? (size_t)w : 0;
			}
		log_warn("endpoint%s %s failed: %s: %s", count > 1 ? "s" : "", list,
			 fetched_from(got[id], cfg, ctl, replay_dir, where, sizeof(where)), reason_text(got[id]));
	}
}
