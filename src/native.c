/* native.c: see native.h. */
#include "native.h"
#include "source.h"
#include "utf8.h"
#include "writer.h"

#include <string.h>

int native_source(const char *url)
{
	size_t n = strlen(NATIVE_PATH_PREFIX);
	if (strncmp(url, NATIVE_PATH_PREFIX, n) != 0)
		return -1;
	for (int id = 0; id < SRC_NATIVE_COUNT; id++)
		if (!strcmp(url + n, sources[id].name))
			return id;
	return -1;
}

/* The 0.0.4 name of a type; NULL: no TYPE line (untyped, or never typed: the two read the same). */
static const char *type_name(enum expo_type t)
{
	switch (t) {
	case EXPO_GAUGE: return "gauge";
	case EXPO_COUNTER: return "counter";
	case EXPO_SUMMARY: return "summary";
	case EXPO_HISTOGRAM: return "histogram";
	case EXPO_OTHER: return "untyped"; /* OpenMetrics-only types (info, stateset...) */
	case EXPO_UNTYPED: break;
	}
	return NULL;
}

size_t native_render(const struct expo *e, struct buf *out)
{
	size_t repaired = 0;
	for (size_t k = 0; k < e->nfams; k++) {
		const struct expo_family *f = &e->fams[k];
		const char *type = type_name(f->type);
		if (f->help) {
			repaired += !utf8_is_clean(f->help, f->hlen);
			write_help(out, f->name, f->nlen, f->help, f->hlen);
		}
		if (type) {
			buf_puts(out, "# TYPE ");
			buf_append(out, f->name, f->nlen);
			buf_putc(out, ' ');
			buf_puts(out, type);
			buf_putc(out, '\n');
		}
		for (size_t i = 0; i < f->n; i++) {
			const struct expo_sample *s = &f->samples[i];
			for (uint32_t j = 0; j < s->nlabels; j++)
				repaired += !utf8_is_clean(s->labels[j].value, s->labels[j].vlen);
			write_sample_n(out, f->name, f->nlen, s->labels, s->nlabels, s->value);
		}
	}
	return repaired;
}
