/* payload.h: one endpoint's answer, fetched (fetch.c) or replayed from a file, then classified and
 * parsed once. A payload is immutable after payload_finish() and shared by concurrent scrapes
 * through a reference count.
 * Ownership: payload_new returns a new reference; payload_ref adds one; payload_unref drops one. */
#ifndef SHIM_PAYLOAD_H
#define SHIM_PAYLOAD_H

#include <stddef.h>

#include "endpoint.h"
#include "expo.h"

struct payload {
	int refs;
	enum endpoint ep;
	int ok;                  /* usable: rows may read it */
	long http_status;        /* 0: no HTTP answer (connection failed, replay) */
	char *body;
	size_t len;
	struct expo expo;        /* parsed when ok */
	size_t parse_errors;
	double seconds;          /* fetch duration */
	double at;               /* monotonic time the fetch finished */
	unsigned gen;            /* the scraper's mapping generation it was parsed for */
	char reason[240];        /* why it is not ok: one line for logs and the 503 body */
};

struct payload *payload_new(enum endpoint ep);
struct payload *payload_ref(struct payload *p);
void payload_unref(struct payload *p);
/* Classify (transport error, HTTP status, empty body). transport_err: NULL when the transfer completed. */
void payload_finish(struct payload *p, const char *transport_err);
/* Parse a payload that payload_finish found usable, storing the families keep() wants (NULL: all).
 * Any malformed line makes it unusable. Call before sharing the payload. */
void payload_parse(struct payload *p, expo_keep_fn keep, void *ctx);
/* Read DIR/<endpoint file> into a finished (not yet parsed) payload. A missing file is a failed endpoint. */
struct payload *payload_replay(const char *dir, enum endpoint ep, size_t max_body);
double mono_now(void);

#endif
