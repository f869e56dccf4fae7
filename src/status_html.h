/* status_html.h: text made safe for an HTML page. slurmctld copies node, user and account names verbatim
 * (they may hold '<', '&', quotes and invalid UTF-8), and configured strings (paths) are the
 * operator's: every one is escaped before it reaches the status page (status.h). */
#ifndef SHIM_STATUS_HTML_H
#define SHIM_STATUS_HTML_H

#include <stddef.h>

struct buf;

/* Append s[0..n) to out as HTML text, valid in element content and in quoted attribute values:
 * & < > " ' become character references, invalid UTF-8 is repaired as the writer repairs label
 * values (each maximal subpart becomes U+FFFD, utf8.h), and control characters other than tab and
 * newline (NUL included) become U+FFFD too. */
void status_html_escape(struct buf *out, const char *s, size_t n);

#endif
