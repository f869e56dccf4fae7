/* log.c: see log.h. */
#include "log.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "utf8.h"

/* Process-wide (see options.h): set once by main() before any thread starts, then only read. */
enum log_level log_min_level = LOG_INFO;
int log_json;

static const char *const names[] = { "debug", "info", "warn", "error" };

/* {"level":"info","msg":"..."}: the fields of the logfmt line, the text escaped as RFC 8259 says (" \
 * and control characters; DEL too, so that no terminal control reaches a screen), invalid UTF-8
 * replaced by U+FFFD (as Go's encoding/json does: a JSON text is UTF-8). One write. */
static void json_line(enum log_level lvl, const char *text, size_t n)
{
	static const char hex[] = "0123456789abcdef";
	char out[2048 * 6 + 64];
	const unsigned char *u = (const unsigned char *)text;
	size_t o = (size_t)snprintf(out, sizeof(out), "{\"level\":\"%s\",\"msg\":\"", names[lvl]);
	for (size_t i = 0; i < n && o < sizeof(out) - 16;) {
		int ok = 1;
		size_t len = u[i] < 0x80 ? 1 : utf8_next(u + i, n - i, &ok);
		if (!ok) {
			memcpy(out + o, "\\ufffd", 6);
			o += 6;
		} else if (len > 1) {
			memcpy(out + o, text + i, len);
			o += len;
		} else if (u[i] == '"' || u[i] == '\\') {
			out[o++] = '\\';
			out[o++] = (char)u[i];
		} else if (u[i] < 0x20 || u[i] == 0x7f) {
			const char *short_esc = u[i] == '\n' ? "n" : u[i] == '\t' ? "t" : u[i] == '\r' ? "r" : NULL;
			o += short_esc ? (size_t)snprintf(out + o, sizeof(out) - o, "\\%s", short_esc)
				       : (size_t)snprintf(out + o, sizeof(out) - o, "\\u00%c%c", hex[u[i] >> 4], hex[u[i] & 15]);
		} else {
			out[o++] = (char)u[i];
		}
		i += len;
	}
	memcpy(out + o, "\"}\n", 3);
	fwrite(out, 1, o + 3, stderr);
}

/* logfmt: level=info msg="..." with \ " and control bytes escaped, one line per message */
void log_msg(enum log_level lvl, const char *fmt, ...)
{
	char line[2048], out[2048 * 2 + 64];
	va_list ap;
	size_t o;
	if (lvl < log_min_level)
		return;
	va_start(ap, fmt);
	int len = vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (log_json) {
		json_line(lvl, line, len < 0 ? 0 : (size_t)len < sizeof(line) ? (size_t)len : sizeof(line) - 1);
		return;
	}
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
