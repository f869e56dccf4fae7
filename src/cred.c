/* cred.c: see cred.h. */
#include "cred.h"

#include <stdio.h>
#include <string.h>

/* One URL [s, e) of a list, shown into out at *o. */
static void shown_one(char *out, size_t outsz, size_t *o, const char *s, const char *e)
{
	const char *scheme = NULL, *at = NULL;
	for (const char *p = s; p + 3 <= e && !scheme; p++)
		if (!memcmp(p, "://", 3))
			scheme = p + 3;
	/* the last "@", wherever it is: an unencoded "/" or "?" in a password ends curl's authority
	 * early, but the bytes after it are the admin's secret all the same */
	for (const char *p = scheme; p && p < e; p++)
		if (*p == '@')
			at = p;
	int n = at ? snprintf(out + *o, outsz - *o, "%.*s***%.*s", (int)(scheme - s), s, (int)(e - at), at)
		   : snprintf(out + *o, outsz - *o, "%.*s", (int)(e - s), s);
	*o += n < 0 ? 0 : (size_t)n < outsz - *o ? (size_t)n : outsz - *o - 1;
}

char *cred_url_shown(char *out, size_t outsz, const char *url)
{
	size_t o = 0;
	out[0] = '\0';
	for (const char *s = url ? url : "";;) {
		const char *comma = strchr(s, ',');
		const char *e = comma ? comma : s + strlen(s);
		shown_one(out, outsz, &o, s, e);
		if (!comma || o + 1 >= outsz)
			break;
		out[o++] = ',';
		out[o] = '\0';
		s = comma + 1;
	}
	return out;
}

int cred_value_is_ok(const char *s, size_t n, size_t max)
{
	char why[64];
	return cred_value_problem(s, n, max, why, sizeof(why)) == NULL;
}

const char *cred_value_problem(const char *s, size_t n, size_t max, char *buf, size_t buflen)
{
	if (n > max) {
		snprintf(buf, buflen, "is longer than %zu bytes", max);
		return buf;
	}
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)s[i] < 0x20 || (unsigned char)s[i] == 0x7f) {
			snprintf(buf, buflen, "holds a control character (byte %zu)", i + 1);
			return buf;
		}
	return NULL;
}
