/* utf8.c: see utf8.h. */
#include "utf8.h"

#include <string.h>

size_t utf8_next(const unsigned char *s, size_t n, int *ok)
{
	unsigned char c = s[0];
	size_t len;
	unsigned char lo = 0x80, hi = 0xBF; /* the range of the second byte */
	*ok = 1;
	if (c < 0x80)
		return 1;
	if (c >= 0xC2 && c <= 0xDF) {
		len = 2;
	} else if (c >= 0xE0 && c <= 0xEF) {
		len = 3;
		if (c == 0xE0)
			lo = 0xA0; /* overlong below */
		else if (c == 0xED)
			hi = 0x9F; /* surrogates above */
	} else if (c >= 0xF0 && c <= 0xF4) {
		len = 4;
		if (c == 0xF0)
			lo = 0x90; /* overlong below */
		else if (c == 0xF4)
			hi = 0x8F; /* past U+10FFFF above */
	} else {
		*ok = 0; /* a continuation byte, C0/C1 (always overlong) or F5..FF */
		return 1;
	}
	for (size_t i = 1; i < len; i++) {
		unsigned char min = i == 1 ? lo : 0x80, max = i == 1 ? hi : 0xBF;
		if (i >= n || s[i] < min || s[i] > max) {
			*ok = 0;
			return i; /* the bytes so far are the maximal subpart */
		}
	}
	return len;
}

/* Whether [s, s+n) is well-formed UTF-8 (and, with controls, holds no utf8_is_control byte). */
static int scan(const char *s, size_t n, int controls)
{
	const unsigned char *p = (const unsigned char *)s;
	for (size_t i = 0; i < n;) {
		int ok;
		if (p[i] < 0x80) {
			if (controls && utf8_is_control(p[i]))
				return 0;
			i++;
			continue;
		}
		i += utf8_next(p + i, n - i, &ok);
		if (!ok)
			return 0;
	}
	return 1;
}

/* [s, s+n) into dst, each invalid subpart (and, with controls, each control byte) as U+FFFD. */
static size_t rewrite(char *dst, const char *s, size_t n, int controls)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t out = 0;
	for (size_t i = 0; i < n;) {
		int ok;
		size_t len = utf8_next(p + i, n - i, &ok);
		if (ok && !(controls && len == 1 && utf8_is_control(p[i]))) {
			memcpy(dst + out, s + i, len);
			out += len;
		} else {
			memcpy(dst + out, "\xEF\xBF\xBD", 3);
			out += 3;
		}
		i += len;
	}
	return out;
}

int utf8_is_valid(const char *s, size_t n)
{
	return scan(s, n, 0);
}

size_t utf8_repair(char *dst, const char *s, size_t n)
{
	return rewrite(dst, s, n, 0);
}

int utf8_is_clean(const char *s, size_t n)
{
	return scan(s, n, 1);
}

size_t utf8_clean(char *dst, const char *s, size_t n)
{
	return rewrite(dst, s, n, 1);
}
