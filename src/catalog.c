/* catalog.c: see catalog.h. */
#include "catalog.h"
#include "names.h"

#include <stdio.h>
#include <string.h>

static const char *const kind_names[] = {
#define CATALOG_KIND_NAME(id, name) [id] = name,
	CATALOG_KINDS(CATALOG_KIND_NAME)
#undef CATALOG_KIND_NAME
};

const char *catalog_kind_name(enum catalog_kind k)
{
	return kind_names[k];
}

int catalog_diff_has_any(const struct catalog_diff *d)
{
	return d->n[CATALOG_MISSING] || d->n[CATALOG_UNKNOWN];
}

/* Whether source id's answer is compared: usable and naming some family. */
static int is_compared(const struct payload *const p[SRC_COUNT], const int up[SRC_COUNT], int id)
{
	return p[id] && up[id] && p[id]->named.n > 0;
}

/* How far release r's catalog is from the compared answers: the families it lists that they lack,
 * plus those they name that it does not list. */
static size_t distance(const struct catalog_release *r, const struct payload *const p[SRC_COUNT], const int up[SRC_COUNT])
{
	size_t d = 0;
	for (int id = 0; id < SRC_NATIVE_COUNT; id++) {
		if (!is_compared(p, up, id))
			continue;
		const struct payload_names *nm = &p[id]->named;
		for (size_t i = 0; i < r->nfams[id]; i++)
			d += !payload_has_named(p[id], r->fams[id][i], strlen(r->fams[id][i]));
		for (size_t i = 0; i < nm->n; i++)
			d += !mapping_catalog_has(r, (enum source_id)id, nm->v[i], strlen(nm->v[i]));
		d += nm->more;
	}
	return d;
}

static void note(struct catalog_diff *out, enum catalog_kind k, int id, const char *name)
{
	if (out->n[k] < CATALOG_LISTED_MAX) {
		struct catalog_family *f = &out->fam[k][out->n[k]];
		f->src = (enum source_id)id;
		snprintf(f->name, sizeof(f->name), "%s", name);
	}
	out->n[k]++;
}

/* Whether any release lists name on source id. */
static int is_listed(const struct mapping *m, int id, const char *name)
{
	for (size_t r = 0; r < m->nreleases; r++)
		if (mapping_catalog_has(&m->releases[r], (enum source_id)id, name, strlen(name)))
			return 1;
	return 0;
}

void catalog_compare(const struct mapping *m, const struct payload *const p[SRC_COUNT], const int up[SRC_COUNT],
		     struct catalog_diff *out)
{
	memset(out, 0, sizeof(*out));
	const struct catalog_release *best = NULL;
	size_t best_d = 0;
	for (int id = 0; id < SRC_NATIVE_COUNT; id++)
		out->compared |= is_compared(p, up, id);
	if (!m->nreleases || !out->compared) {
		out->compared = 0;
		return;
	}
	for (size_t r = 0; r < m->nreleases; r++) {
		size_t d = distance(&m->releases[r], p, up);
		if (!best || d <= best_d) { /* a tie: the later release */
			best = &m->releases[r];
			best_d = d;
		}
	}
	snprintf(out->release, sizeof(out->release), "%s", best->name);
	for (int id = 0; id < SRC_NATIVE_COUNT; id++) {
		if (!is_compared(p, up, id))
			continue;
		for (size_t i = 0; i < best->nfams[id]; i++) {
			const char *f = best->fams[id][i];
			if (mapping_has_input(f, strlen(f), (void *)m) && !payload_has_named(p[id], f, strlen(f)))
				note(out, CATALOG_MISSING, id, f);
		}
		const struct payload_names *nm = &p[id]->named;
		for (size_t i = 0; i < nm->n; i++)
			if (!is_listed(m, id, nm->v[i]))
				note(out, CATALOG_UNKNOWN, id, nm->v[i]);
		out->n[CATALOG_UNKNOWN] += nm->more; /* names past the payload's list: not looked at, counted */
	}
}

uint64_t catalog_diff_hash(const struct catalog_diff *d)
{
	uint64_t h = fnv1a(d->release, strlen(d->release));
	for (int k = 0; k < CATALOG_KIND_COUNT; k++) {
		h = fnv1a_byte(h, (unsigned char)(d->n[k] & 0xff)) ^ (uint64_t)d->n[k];
		for (size_t i = 0; i < d->n[k] && i < CATALOG_LISTED_MAX; i++) {
			h = fnv1a_byte(h, (unsigned char)d->fam[k][i].src);
			for (const char *c = d->fam[k][i].name; *c; c++)
				h = fnv1a_byte(h, (unsigned char)*c);
			h = fnv1a_byte(h, 0);
		}
	}
	return h;
}

void catalog_describe(const struct catalog_diff *d, char *out, size_t outsz)
{
	static const char *const what[] = { "families the table reads that slurmctld no longer serves",
					    "families slurmctld serves that no validated catalog lists" };
	size_t len = 0;
	out[0] = '\0';
	for (int k = 0; k < CATALOG_KIND_COUNT && len < outsz; k++) {
		if (!d->n[k])
			continue;
		len += (size_t)snprintf(out + len, outsz - len, "%s%zu %s:", len ? "; " : "", d->n[k], what[k]);
		size_t i = 0;
		for (; i < d->n[k] && i < CATALOG_LISTED_MAX && len + CATALOG_NAME_MAX + 40 < outsz; i++)
			len += (size_t)snprintf(out + len, outsz - len, " %s/%s", sources[d->fam[k][i].src].name,
						d->fam[k][i].name);
		if (i < d->n[k] && len < outsz)
			len += (size_t)snprintf(out + len, outsz - len, " and %zu more", d->n[k] - i);
	}
}
