/* log.c: see log.h. */
#include "log.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* Process-wide (see options.h): set once by main() before any thread starts, then only read. */
enum log_level log_min_level = LOG_INFO;

static const char *const names[] = { "debug", "info", "warn", "error" };

/* logfmt: level=info msg="..." with \ " and control bytes escaped, one line per message */
void log_msg(enum log_level lvl, const char *fmt, ...)
{
	char line[2048], out[2048 * 2 + 64];
	va_list ap;
	size_t o;
	if (lvl < log_min_level)
		return;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	o = (size_t)snprintf(out, sizeof(out), "level=%s msg=\"", names[lvl]);
	for (const char *p = line; *p && o < sizeof(out) - 8; p++) {
		unsigned char c = (unsigned char)*p;
		if (c == '"' || c == '\\') {
			out[o++] = '\\';
			out[o++] = (char)c;
		} else if (c < 0x20 || c == 0x7f) {
			o += (size_t)snprintf(out + o, sizeof(out) - o, "\\x%02x", c);
		} else {
			out[o++] = (char)c;
		}
	}
	out[o++] = '"';
	out[o++] = '\n';
	/* one write per line so concurrent threads do not interleave */
	fwrite(out, 1, o, stderr);
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

void log_error_lines(const char *prefix, const char *text, size_t len)
{
	for (size_t i = 0, start = 0; text && i < len; i++)
		if (text[i] == '\n') {
			log_error("%s%.*s", prefix, (int)(i - start), text + start);
			start = i + 1;
		}
}
