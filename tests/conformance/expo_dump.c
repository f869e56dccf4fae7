/* expo_dump.c: print what the tolerant parser (expo_parse, flags 0: the mode the daemon uses on
 * slurmctld's answers) yields for one exposition, for docs/conformance.md (see gen-doc.sh).
 *
 *   expo_dump FILE     one line: the families in order, separated by " · "; each is its samples
 *                      `name{label="value",...} value` (values escaped as the writer serves them:
 *                      \\ \" \n), or `name: TYPE t, no samples`; a family holding the same label
 *                      set twice is marked "(duplicate series: family not used)".
 *   expo_dump -i FILE  one line: the file itself, line feeds shown as ⏎, cut after about 160 characters.
 *
 * Bytes outside printable ASCII, '|' and '`' are shown as \xNN. Exit 0, or 2 on bad usage.
 *
 * Built by gen-doc.sh with src/expo.c, labels.c, utf8.c, xmalloc.c and buf.c; not part of the daemon.
 * Ownership: main owns the input buffer and the parsed expo and frees both at `out:`. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "expo.h"

static void put_escaped(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c < 0x20 || c > 0x7e || c == '|' || c == '`')
			printf("\\x%02x", c);
		else
			putchar(c);
	}
}

/* A label value as the writer serves it: \\ \" \n escaped (then as put_escaped). */
static void put_value_text(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (s[i] == '\\' || s[i] == '"')
			printf("\\%c", s[i]);
		else if (s[i] == '\n')
			fputs("\\n", stdout);
		else
			put_escaped(s + i, 1);
	}
}

static void put_value(double v)
{
	if (isnan(v))
		fputs("NaN", stdout);
	else if (isinf(v))
		fputs(v > 0 ? "+Inf" : "-Inf", stdout);
	else
		printf("%.17g", v);
}

static const char *type_name(enum expo_type t)
{
	switch (t) {
	case EXPO_GAUGE:
		return "gauge";
	case EXPO_COUNTER:
		return "counter";
	case EXPO_SUMMARY:
		return "summary";
	case EXPO_HISTOGRAM:
		return "histogram";
	case EXPO_OTHER:
		return "other (gaugehistogram, stateset or info)";
	default:
		return "untyped";
	}
}

static void dump(const struct expo *e)
{
	int first = 1;
	for (size_t k = 0; k < e->nfams; k++) {
		const struct expo_family *f = &e->fams[k];
		if (!f->n) {
			fputs(first ? "" : " · ", stdout);
			put_escaped(f->name, f->nlen);
			printf(": TYPE %s, no samples", type_name(f->type));
			first = 0;
			continue;
		}
		for (size_t i = 0; i < f->n; i++) {
			const struct expo_sample *s = &f->samples[i];
			fputs(first ? "" : " · ", stdout);
			put_escaped(f->name, f->nlen);
			if (s->nlabels) {
				putchar('{');
				for (uint32_t j = 0; j < s->nlabels; j++) {
					printf("%s", j ? "," : "");
					put_escaped(s->labels[j].name, s->labels[j].nlen);
					fputs("=\"", stdout);
					put_value_text(s->labels[j].value, s->labels[j].vlen);
					putchar('"');
				}
				putchar('}');
			}
			putchar(' ');
			put_value(s->value);
			first = 0;
		}
		if (f->duplicate)
			fputs(" (duplicate series: family not used)", stdout);
	}
	if (first)
		fputs("nothing", stdout);
	putchar('\n');
}

static void show_input(const char *s, size_t n)
{
	size_t i, width = 0; /* characters printed: at most about 160 */
	for (i = 0; i < n && width < 160; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c == '\n')
			fputs("⏎", stdout);
		else
			put_escaped(s + i, 1);
		width += c < 0x20 || c > 0x7e || c == '|' || c == '`' ? (c == '\n' ? 1 : 4) : 1;
	}
	if (!n)
		fputs("(empty file)", stdout);
	fputs(i < n ? "…\n" : "\n", stdout);
}

int main(int argc, char **argv)
{
	int rc = 2;
	struct buf in;
	char chunk[65536];
	size_t n;
	FILE *f = NULL;
	struct expo e;

	buf_init(&in, 0);
	expo_init(&e);
	int input = argc == 3 && strcmp(argv[1], "-i") == 0;
	if (argc != 2 && !input) {
		fprintf(stderr, "usage: expo_dump [-i] FILE\n");
		goto out;
	}
	f = fopen(argv[argc - 1], "rb");
	if (!f) {
		perror(argv[argc - 1]);
		goto out;
	}
	while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0)
		buf_append(&in, chunk, n);
	if (input) {
		show_input(in.data ? in.data : "", in.len);
	} else {
		expo_parse(&e, in.data ? in.data : "", in.len, 0);
		dump(&e);
	}
	rc = 0;
out:
	if (f)
		fclose(f);
	expo_free(&e);
	buf_free(&in);
	return rc;
}
