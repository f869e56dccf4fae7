/* jsonpos.h: where things are in a JSON text. jansson reports line:column only for syntax errors;
 * the mapping loader also wants them for each row and field, so this scans the raw text once.
 * Ownership: jsonpos_scan fills *out, which then owns its arrays (jsonpos_free). */
#ifndef SHIM_JSONPOS_H
#define SHIM_JSONPOS_H

#include <stddef.h>

struct jpos {
	int line, col;      /* 1-based; byte columns */
	size_t off;         /* byte offset of the value's first character */
};

struct jsonpos_field {
	char *key;
	struct jpos at;
};

struct jsonpos_row {
	struct jpos at;
	struct jsonpos_field *fields;
	size_t nfields;
};

struct jsonpos {
	struct jsonpos_field *top;   /* members of the root object */
	size_t ntop;
	struct jsonpos_row *rows;    /* elements of root."metrics" */
	size_t nrows;
};

/* Returns 0, or -1 if the text is not the expected shape (positions then default to 1:1). */
int jsonpos_scan(const char *text, size_t len, struct jsonpos *out);
void jsonpos_free(struct jsonpos *p);
/* Position of field `key` of row `row`, else of the row, else 1:1. */
struct jpos jsonpos_field(const struct jsonpos *p, size_t row, const char *key);
struct jpos jsonpos_top(const struct jsonpos *p, const char *key);
/* Position of the character at decoded byte offset `doff` inside the JSON string starting at `str`
 * (which points at the opening quote). */
struct jpos jsonpos_in_string(const char *text, size_t len, struct jpos str, size_t doff);

#endif
