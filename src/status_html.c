/* status_html.c: see status_html.h. */
#include "status_html.h"
#include "buf.h"
#include "utf8.h"

#include <stdio.h>

#define REPLACEMENT "\xEF\xBF\xBD" /* U+FFFD */

void status_html_escape(struct buf *out, const char *s, size_t n)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t i = 0;
	while (i < n) {
		int ok;
		size_t k = utf8_next(u + i, n - i, &ok);
		if (!ok || (u[i] < 0x20 && u[i] != '\t' && u[i] != '\n') || u[i] == 0x7f)
			buf_puts(out, REPLACEMENT);
		else if (utf8_bidi_control(u + i, k)) {
			char cp[24];
			snprintf(cp, sizeof(cp), "&lt;U+%04X&gt;", utf8_bidi_control(u + i, k));
			buf_puts(out, cp); /* shown, never obeyed: it would reorder what follows */
		} else if (u[i] == '&')
			buf_puts(out, "&amp;");
		else if (u[i] == '<')
			buf_puts(out, "&lt;");
		else if (u[i] == '>')
			buf_puts(out, "&gt;");
		else if (u[i] == '"')
			buf_puts(out, "&quot;");
		else if (u[i] == '\'')
			buf_puts(out, "&#39;");
		else
			buf_append(out, s + i, k);
		i += k;
	}
}
