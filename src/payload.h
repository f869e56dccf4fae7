/* payload.h: one endpoint's answer, fetched (fetch.c) or replayed from a file, parsed as its bytes
 * arrive (the body itself is never held: only the families the mapping reads are kept, see
 * expo_feed) and classified when it is complete. A payload is immutable after payload_finish()
 * and shared by concurrent scrapes through a reference count.
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
	size_t len;              /* body bytes received */
	struct expo expo;        /* the families kept, when ok */
	size_t parse_errors;
	double seconds;          /* fetch duration */
	double at;               /* monotonic time the fetch finished */
	unsigned gen;            /* the mapping generation it was parsed for: set by payload_new, never changed */
	char reason[240];        /* why it is not ok: one line for logs and the 503 body */
};

/* A payload that will store the families keep() wants (NULL: all); ctx must outlive the parse. gen
 * names the mapping (table) keep() filters for: a payload is only used by scrapes of that table. */
struct payload *payload_new(enum endpoint ep, unsigned gen, expo_keep_fn keep, void *ctx);
struct payload *payload_ref(struct payload *p);
void payload_unref(struct payload *p);
/* Body bytes as they arrive, after http_status is set (0 for a file). They are counted, and parsed
 * when the status is 200 or 0. Returns -1, and takes nothing, when the body would pass max_body. */
/* A new HTTP response begins (a redirect was followed): forget what the previous one sent. */
void payload_restart(struct payload *p, long http_status);
int payload_feed(struct payload *p, const char *data, size_t n, size_t max_body);
/* The body is complete (transport_err NULL) or the transfer failed: classify (transport error,
 * HTTP status, empty body, malformed lines). A payload that is not ok keeps no families. */
void payload_finish(struct payload *p, const char *transport_err);
/* Read DIR/<endpoint file> into a finished payload. A missing file is a failed endpoint. */
struct payload *payload_replay(const char *dir, enum endpoint ep, size_t max_body, unsigned gen, expo_keep_fn keep,
			       void *ctx);
double mono_now(void);

#endif
