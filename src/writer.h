/* writer.h: the Prometheus text exposition format 0.0.4 (what the old exporter served).
 * Label values escape \ " and newline; HELP escapes \ and newline; invalid UTF-8 in either is
 * repaired (U+FFFD per maximal invalid subpart, see utf8.h), so Prometheus never refuses the scrape,
 * and every other control byte (C0 but newline, and DEL) is served as U+FFFD too (utf8_is_clean).
 * A family is written whole or not at all: write_family() rolls the buffer back if it runs out of
 * room. */
#ifndef SHIM_WRITER_H
#define SHIM_WRITER_H

#include <stddef.h>

#include "buf.h"
#include "labels.h"

#define TEXT_CONTENT_TYPE "text/plain; version=0.0.4; charset=utf-8"

void write_value(struct buf *b, double v);
void write_header(struct buf *b, const char *name, const char *help, const char *type);
void write_sample(struct buf *b, const char *name, const struct label *ls, size_t n, double v);
/* The same for a name and a HELP text of a given length (not NUL-terminated): the native
 * passthrough writes slurmctld's families from an expo (native.h). */
void write_help(struct buf *b, const char *name, size_t nlen, const char *help, size_t hlen);
void write_sample_n(struct buf *b, const char *name, size_t nlen, const struct label *ls, size_t n, double v);
/* HELP/TYPE and every sample of v; returns 0, or -1 (buffer rolled back) when it does not fit. */
int write_family(struct buf *b, const char *name, const char *help, const char *type, const struct vec *v);

#endif
