/* utf8.h: UTF-8 validation and repair for label values, which slurmctld copies verbatim from node,
 * user and account names: one invalid byte would make Prometheus refuse the whole scrape ("invalid
 * UTF-8 label value").
 *
 * Valid means well-formed per Unicode 15 table 3-7: no overlong forms (C0, C1, E0 80..9F,
 * F0 80..8F), no surrogates (ED A0..BF), nothing past U+10FFFF (F4 90.., F5..FF), no stray
 * continuation bytes, no truncated sequences. Repair replaces each maximal subpart of an invalid
 * sequence with U+FFFD (EF BF BD), the rule of the WHATWG Encoding Standard and of Unicode's
 * "substitution of maximal subparts": "\xE2\x82" (a 3-byte sequence cut short) is one U+FFFD,
 * "\xC0\xAF" (overlong) is two, "\xED\xA0\x80" (a surrogate) is three.
 *
 * What is served (utf8_is_clean, utf8_clean): well-formed UTF-8 without a C0 control other than
 * newline, and without DEL. The text format 0.0.4 escapes only \\, \" and newline; any other
 * control byte would reach Prometheus (which takes it) and every terminal, log and page that shows a
 * label value, raw: ESC starts a terminal escape sequence, CR rewrites a line. Each such byte is
 * served as U+FFFD, like an invalid byte, and counted with them. Newline is escaped (\n), not
 * replaced; tab is a control like the others. utf8_repair and utf8_clean write into the caller's dst. */
#ifndef SHIM_UTF8_H
#define SHIM_UTF8_H

#include <stddef.h>

/* 1 if s[0..n) is well-formed UTF-8. */
int utf8_is_valid(const char *s, size_t n);
/* Copy s[0..n) into dst, which has room for 3 * n bytes, with every maximal subpart of an invalid
 * sequence replaced by U+FFFD. Returns the bytes written. */
size_t utf8_repair(char *dst, const char *s, size_t n);
/* 1 if the byte c, valid UTF-8 on its own, is still not served: a C0 control other than newline,
 * or DEL. */
static inline int utf8_is_control(unsigned char c)
{
	return (c < 0x20 && c != '\n') || c == 0x7f;
}
/* The code point of the valid sequence at s of len bytes (utf8_next's) when it is a bidirectional
 * formatting character, else 0: U+061C, U+200E, U+200F, U+202A to U+202E, U+2066 to U+2069. Raw,
 * they reorder the text around them where it is shown (a status page, a terminal reading a log), so
 * that an upstream string can make what an admin reads differ from what it is: the page and the log
 * show them as their code point instead (status_html.h, log.h). */
static inline unsigned utf8_bidi_control(const unsigned char *s, size_t len)
{
	unsigned cp;
	if (len == 2 && s[0] == 0xD8 && s[1] == 0x9C)
		return 0x061C;
	if (len != 3 || s[0] != 0xE2 || (s[1] != 0x80 && s[1] != 0x81))
		return 0;
	cp = 0x2000u | ((unsigned)(s[1] & 0x3F) << 6) | (s[2] & 0x3F);
	return cp == 0x200E || cp == 0x200F || (cp >= 0x202A && cp <= 0x202E) || (cp >= 0x2066 && cp <= 0x2069) ? cp : 0;
}
/* 1 if s[0..n) is served as it is: well-formed UTF-8 and no control byte (utf8_is_control). */
int utf8_is_clean(const char *s, size_t n);
/* utf8_repair, and every control byte (utf8_is_control) replaced by U+FFFD too. dst has room for
 * 3 * n bytes. Returns the bytes written. */
size_t utf8_clean(char *dst, const char *s, size_t n);
/* The length of the sequence at s (n >= 1 bytes left): a valid sequence's length with *ok = 1, or
 * the length of the maximal subpart to replace (at least 1) with *ok = 0. */
size_t utf8_next(const unsigned char *s, size_t n, int *ok);

#endif
