/* log.c: see log.h. */
#include "log.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

enum log_level log_min_level = LOG_INFO;

static const char *const names[] = { "debug", "info", "warn", "error" };

int log_parse_level(const char *s, enum log_level *out)
{
	for (int i = 0; i < 4; i++) {
		if (strcmp(s, names[i]) == 0) {
			*out = (enum log_level)i;
			return 0;
		}
	}
	if (strcmp(s, "warning") == 0) {
		*out = LOG_WARN;
		return 0;
	}
	return -1;
}

void log_msg(enum log_level lvl, const char *fmt, ...)
{
	char line[2048];
	va_list ap;
	if (lvl < log_min_level)
		return;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	/* one write per line so concurrent threads do not interleave */
	fprintf(stderr, "level=%s msg=\"%s\"\n", names[lvl], line);
}

char *log_escape(char *out, size_t outsz, const char *s, size_t n)
{
	static const char hex[] = "0123456789abcdef";
	size_t o = 0;
	if (!outsz)
		return out;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c >= 0x20 && c < 0x7f && c != '\\' && c != '"') {
			if (o + 1 >= outsz)
				break;
			out[o++] = (char)c;
		} else {
			if (o + 4 >= outsz)
				break;
			out[o++] = '\\';
			out[o++] = 'x';
			out[o++] = hex[c >> 4];
			out[o++] = hex[c & 15];
		}
	}
	out[o] = '\0';
	return out;
}
