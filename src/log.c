/* log.c: see log.h. */
#include "log.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "utf8.h"

/* The longest message, formatted; what does not fit is cut off. */
#define LOG_LINE_MAX 2048

/* Process-wide (see options.h): set once by main() before any thread starts, then only read. */
enum log_level log_min_level = LOG_INFO;
int log_json;

static const char *const names[] = { "debug", "info", "warn", "error" };

/* The one escape of a log line, at the sink (logfmt, msg="..."): '"' and '\\' get a '\\', control
 * bytes (C0, DEL) and each byte of invalid UTF-8 become \xNN, valid UTF-8 is kept. pre: the text was
 * escaped where it was written (a loader's problems: \xNN, \"), so a backslash and the printable
 * byte after it are copied as they are, an escape already. A bidirectional formatting character
 * (utf8_bidi_control), valid but able to reorder the line on a terminal, is \xNN byte by byte too.
 * Appends to out[o..cap) and returns the new o; stops, at a whole character, 8 bytes before cap. */
static size_t quote_into(char *out, size_t o, size_t cap, const char *s, size_t n, int pre)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *u = (const unsigned char *)s;
	for (size_t i = 0; i < n;) {
		int ok = 1;
		size_t len = u[i] < 0x80 ? 1 : utf8_next(u + i, n - i, &ok);
		int bidi = ok && len > 1 && utf8_bidi_control(u + i, len);
		size_t need = ok && len > 1 && !bidi ? len : 4 * len;
		if (o + need >= cap - 8)
			break;
		if (pre && u[i] == '\\' && i + 1 < n && u[i + 1] > 0x20 && u[i + 1] < 0x7f) {
			out[o++] = '\\';
			out[o++] = (char)u[i + 1];
			len = 2;
		} else if (ok && len > 1 && !bidi) {
			memcpy(out + o, s + i, len);
			o += len;
		} else if (ok && (u[i] == '"' || u[i] == '\\')) {
			out[o++] = '\\';
			out[o++] = (char)u[i];
		} else if (ok && len == 1 && u[i] >= 0x20 && u[i] != 0x7f) {
			out[o++] = (char)u[i];
		} else {
			for (size_t k = 0; k < len; k++) {
				out[o++] = '\\';
				out[o++] = 'x';
				out[o++] = hex[u[i + k] >> 4];
				out[o++] = hex[u[i + k] & 15];
			}
		}
		i += len;
	}
	return o;
}

/* {"level":"info","msg":"..."}: the fields of the logfmt line, the text escaped as RFC 8259 says (" \
 * and control characters; DEL too, so that no terminal control reaches a screen; a bidirectional
 * formatting character as its \uXXXX, so that it reorders no terminal line), invalid UTF-8
 * replaced by U+FFFD (as Go's encoding/json does: a JSON text is UTF-8). One write. */
static void json_line(enum log_level lvl, const char *text, size_t n)
{
	static const char hex[] = "0123456789abcdef";
	char out[LOG_LINE_MAX * 6 + 64];
	const unsigned char *u = (const unsigned char *)text;
	size_t o = (size_t)snprintf(out, sizeof(out), "{\"level\":\"%s\",\"msg\":\"", names[lvl]);
	for (size_t i = 0; i < n && o < sizeof(out) - 16;) {
		int ok = 1;
		size_t len = u[i] < 0x80 ? 1 : utf8_next(u + i, n - i, &ok);
		if (!ok) {
			memcpy(out + o, "\\ufffd", 6);
			o += 6;
		} else if (len > 1 && utf8_bidi_control(u + i, len)) {
			o += (size_t)snprintf(out + o, sizeof(out) - o, "\\u%04x", utf8_bidi_control(u + i, len));
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

/* One line: level=LVL msg="TEXT" (or json_line's), in one write so that concurrent threads do not interleave. */
static void log_line(enum log_level lvl, const char *text, size_t n, int pre)
{
	char out[LOG_LINE_MAX * 4 + 64];
	if (log_json) {
		json_line(lvl, text, n);
		return;
	}
	size_t o = (size_t)snprintf(out, sizeof(out), "level=%s msg=\"", names[lvl]);
	o = quote_into(out, o, sizeof(out), text, n, pre);
	out[o++] = '"';
	out[o++] = '\n';
	fwrite(out, 1, o, stderr);
}

void log_msg(enum log_level lvl, const char *fmt, ...)
{
	char line[LOG_LINE_MAX];
	va_list ap;
	if (lvl < log_min_level)
		return;
	va_start(ap, fmt);
	int n = vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	log_line(lvl, line, strlen(line), 0);
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
	char line[LOG_LINE_MAX];
	if (LOG_ERROR < log_min_level)
		return;
	for (size_t i = 0, start = 0; text && i < len; i++)
		if (text[i] == '\n') {
			/* the prefix is ours, the line escaped where it was written: neither is escaped again */
			int n = snprintf(line, sizeof(line), "%s%.*s", prefix, (int)(i - start), text + start);
			log_line(LOG_ERROR, line, n < 0 ? 0 : (size_t)n < sizeof(line) ? (size_t)n : sizeof(line) - 1, 1);
			start = i + 1;
		}
}
