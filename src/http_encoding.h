/* http_encoding.h: Accept-Encoding (RFC 9110 section 12.5.3), for the answers server.c may send
 * gzip-compressed. The only codings the shim has are gzip and identity; every other coding a client
 * lists (br, zstd, deflate, ...) is parsed and ignored.
 *
 *   Accept-Encoding = #( codings [ weight ] )      codings = content-coding / "identity" / "*"
 *   weight = OWS ";" OWS "q=" qvalue               content-coding = token
 *   qvalue = ( "0" [ "." 0*3DIGIT ] ) / ( "1" [ "." 0*3("0") ] )
 *
 * Read strictly: codings and the "q" are case-insensitive, "x-gzip" is gzip (RFC 9110 8.4.1.3),
 * empty list elements are skipped (5.6.1), several field lines are one list (5.3). A field that
 * does not follow the grammar (another parameter than q, a q of 1.5 or 0.1234, a stray byte) or
 * longer than ACCEPT_ENCODING_MAX bytes is disregarded whole: identity, what a client that sent no
 * Accept-Encoding gets. A coding listed twice takes the lower weight (a q=0 anywhere refuses it;
 * RFC 9110 leaves this open).
 *
 * The choice: gzip when its weight (its own, else that of "*") is above 0 and not below identity's
 * (its own, else that of "*", else acceptable by default and below any listed weight); identity
 * otherwise. When nothing is acceptable ("identity;q=0" alone, "*;q=0") the answer is identity all
 * the same, as client_golang's promhttp does, never 406: a scraper with an odd header gets its
 * metrics (RFC 9110 12.1 lets a server disregard the field). Pure functions: everything is
 * borrowed. */
#ifndef SHIM_HTTP_ENCODING_H
#define SHIM_HTTP_ENCODING_H

#include <stddef.h>

#define ACCEPT_ENCODING_MAX 4096 /* bytes of all field lines together; longer: disregarded */

enum content_coding { CODING_IDENTITY, CODING_GZIP };

/* What the field lines read so far say. Weights in thousandths (0 to 1000); -1: not listed. */
struct accept_encoding {
	int gzip, identity, star;
	int malformed;  /* a line broke the grammar, or the lines were too long: disregarded whole */
	size_t bytes;   /* of every line so far */
};

void accept_encoding_init(struct accept_encoding *ae);
/* Add one field line's value (len bytes, no NUL needed). 0, or -1 when it is malformed or the
 * lines are now over ACCEPT_ENCODING_MAX (ae->malformed is then set for good). */
int accept_encoding_add(struct accept_encoding *ae, const char *value, size_t len);
/* The coding to send, after every field line was added; identity when there was none. */
enum content_coding accept_encoding_choose(const struct accept_encoding *ae);
/* The same for a request with this one field line. */
enum content_coding http_encoding_negotiate(const char *value, size_t len);
/* A qvalue exactly as the grammar above spells it: its thousandths, or -1. */
int http_qvalue_parse(const char *s, size_t len);

#endif
