/* cred.h: credentials as the shim sends and shows them. A credential (a token, a user name, a
 * URL's userinfo "user:password@") goes into an HTTP request only as the admin gave it and into a
 * metric, a page or a log line never.
 *
 *   cred_url_shown     a URL (or a comma list of them) for display: each one's userinfo, whatever
 *                      is between "://" and its last "@", becomes "***"; the rest is kept as is
 *                      (every label, page and log line that shows an upstream URL uses it);
 *   cred_value_problem why a user name or token cannot go into a header as is: a control byte
 *                      (CR and LF would start another header line), or its length.
 *
 * Thread-safe (nothing is kept between calls). */
#ifndef SHIM_CRED_H
#define SHIM_CRED_H

#include <stddef.h>

#define CRED_USER_MAX 255   /* bytes of a user name (--*.auth.user, a target's user:) */
#define CRED_STR_(x) #x
#define CRED_STR(x) CRED_STR_(x)
#define CRED_USER_MAX_TEXT CRED_STR(CRED_USER_MAX) /* "255", for messages built at compile time */
#define CRED_SHOWN_MAX 4352 /* room for any --slurmctld.url list (4095 bytes, 8 URLs) shown */

/* url for display into out (outsz > 0; NUL-terminated, cut at outsz). Returns out. */
char *cred_url_shown(char *out, size_t outsz, const char *url);
/* Whether [s, s+n) can go into a header as is: at most max bytes, no byte below 0x20 nor 0x7f. */
int cred_value_is_ok(const char *s, size_t n, size_t max);
/* NULL when [s, s+n) can go into a header as is (at most max bytes, no byte below 0x20 nor 0x7f),
 * else why not ("holds a control character (byte 3)", "is longer than 255 bytes"), in buf. */
const char *cred_value_problem(const char *s, size_t n, size_t max, char *buf, size_t buflen);

#endif
