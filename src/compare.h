/* compare.h: --compare-legacy, the migration check. The old exporter's families against the shim's
 * own, family by family, as Prometheus would see them: label sets compared exactly, values
 * exactly (NaN equals NaN). compare_families is pure (two parsed expositions and the shim's result
 * record in, a report out, no network: tests/test_compare.c); compare_get is the one HTTP GET of the old exporter's page. */
#ifndef SHIM_COMPARE_H
#define SHIM_COMPARE_H

#include <stddef.h>

#include "buf.h"
#include "expo.h"
#include "mapping.h"
#include "render.h"

/* Differing series printed per family: the rest are only counted. */
#define COMPARE_MAX_DIFFS 5

enum compare_format { COMPARE_TABLE, COMPARE_JSON };

/* Report every row of m (enabled under flags, enum row_flag bits, or not) and every family of legacy that no row
 * serves; go_*, process_* and promhttp_* families are ignored. shim is the shim's answer as served,
 * parsed; served is the result record of the render that made it (render.h), which says whether
 * each row was served and with which form (its fidelity, upstream and note); NULL, or a result
 * without rows (a 503): none was. The report's last line (the JSON's top-level counts) counts the
 * exact differences, the approximate ones and the families that disappear (the old exporter serves
 * them, the shim serves none of their series). Returns 0 only when nothing disappears and every
 * family whose form is exact agrees (same series, same values); 1 otherwise. */
int compare_families(const struct mapping *m, unsigned flags, const struct expo *legacy, const struct expo *shim,
		     const struct render_result *served, enum compare_format fmt, struct buf *out);
/* The same, naming m when name_schema is set (several schemas loaded): the table's first line
 * "schema NAME (FILE)", the JSON's "schema" and "schema_file". */
int compare_schema_families(const struct mapping *m, int name_schema, unsigned flags, const struct expo *legacy,
			    const struct expo *shim, const struct render_result *served, enum compare_format fmt,
			    struct buf *out);

/* Which schema of chain (mapping.h's mapping_load_set) the old exporter's page legacy speaks: the one
 * whose row names are most like its family names (those with a sample; go_*, process_* and
 * promhttp_* ignored): the most names shared over the names of either (so a schema that adds rows to
 * another's names is not taken for it). Its index, or -1 with the reason in why (each schema's
 * "shared of either"): no family is a row of any schema, or two schemas are alike best (then
 * --compare-legacy.schema decides). */
int compare_pick_schema(const struct mapping *chain, const struct expo *legacy, char *why, size_t whysz);

/* 1 if legacy, the old exporter's page parsed, is an exporter's page at all: it has one sample or
 * more. An empty 200 or a page of comments is not (the URL points at something else): the caller
 * exits 2 as for an unreadable page, not 1 as if every family differed. */
int compare_is_exporter_page(const struct expo *legacy);

/* GET url (http:// or https:// only; no redirect followed) into out, within timeout_s seconds and
 * out's cap. 0 on a 200 answer; -1 with the reason in err otherwise: raw (for the log, which escapes
 * it), naming url without its userinfo. */
int compare_get(const char *url, double timeout_s, struct buf *out, char *err, size_t errsz);

#endif
