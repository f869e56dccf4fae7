/* catalog.h: what changed upstream. Each scrape compares the slurmctld answers it read with the
 * native catalog the table was validated on (mapping.h's "validated_on", per Slurm release), so
 * that an upgrade that renames or drops a family shows the day it happens:
 *   - missing: families the table reads that slurmctld's answer on their endpoint no longer names,
 *     though the validated release closest to this scrape's answers serves them there;
 *   - unknown: families an answer names that no validated release lists on that endpoint.
 *
 * The rule (docs/operations.md, "Upgrading Slurm"): an answer is compared only when it is usable
 * and names at least one family (slurmctld names every family of its endpoint whatever the counts,
 * but jobs-users-accts names none while no job is in memory); an endpoint the scrape did not read
 * says nothing. The closest release is the one whose catalog differs least from the compared
 * answers (families it lists that they lack, plus families they name that it does not list),
 * the later one in the file on a tie. On every shipped capture (25.11.7, 26.05.3) nothing is found.
 *
 * Pure: a function of the table and the payloads (no lock, no clock); render.c fills the result
 * record's diff, which the self metrics, the status page and the log read. */
#ifndef SHIM_CATALOG_H
#define SHIM_CATALOG_H

#include <stdint.h>

#include "buf.h"
#include "mapping.h"
#include "payload.h"

#define CATALOG_LISTED_MAX 50   /* families listed of each kind; the rest counted */
#define CATALOG_NAME_MAX 128    /* bytes of a listed name, with its NUL (longer ones cut) */

#define CATALOG_KINDS(X) \
	X(CATALOG_MISSING, "missing") /* the table reads it, the closest release serves it, the answer lacks it */ \
	X(CATALOG_UNKNOWN, "unknown") /* the answer names it, no release lists it on that endpoint */

enum catalog_kind {
#define CATALOG_KIND_ID(id, name) id,
	CATALOG_KINDS(CATALOG_KIND_ID)
#undef CATALOG_KIND_ID
	CATALOG_KIND_COUNT
};

struct catalog_family {
	enum source_id src;
	char name[CATALOG_NAME_MAX];
};

struct catalog_diff {
	int compared;                     /* the table has a catalog and at least one answer was compared */
	char release[MAPPING_RELEASE_MAX + 1]; /* the closest validated release ("" when none compared) */
	size_t n[CATALOG_KIND_COUNT];     /* every family found, of each kind */
	struct catalog_family fam[CATALOG_KIND_COUNT][CATALOG_LISTED_MAX]; /* the first ones: by source,
					     missing ones in name order, unknown ones as the answer named them */
};

/* Compare the answers of p (NULL: not read) that up says are usable with m's catalog, into *out. */
void catalog_compare(const struct mapping *m, const struct payload *const p[SRC_COUNT], const int up[SRC_COUNT],
		     struct catalog_diff *out);
/* "missing" or "unknown" (a literal). */
const char *catalog_kind_name(enum catalog_kind k);
/* Whether d found any family of either kind. */
int catalog_diff_has_any(const struct catalog_diff *d);
/* A fingerprint of what d lists and counts (the log says it once per change). */
uint64_t catalog_diff_hash(const struct catalog_diff *d);
/* One line for the log: each kind's families as "endpoint/family", at most about outsz bytes,
 * the rest counted. */
void catalog_describe(const struct catalog_diff *d, char *out, size_t outsz);

#endif
