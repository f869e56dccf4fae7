/* log.h: leveled logging to stderr (journald adds timestamps under systemd), one logfmt line per
 * message: level=info msg="...".
 * The sink escapes, once: in what log_msg formats, '"' and '\\' get a '\\', control bytes and
 * invalid UTF-8 become \xNN, so untrusted bytes (upstream bodies and headers, client input, file
 * content) are passed to log_* as they are: a hostile payload cannot forge log lines or terminal
 * escapes, and nothing is escaped twice (a log_escape'd string logged again read \\x22 for a quote).
 * log_escape is for the other sinks: HTTP bodies, stdout, stderr written with fprintf. */
#ifndef SHIM_LOG_H
#define SHIM_LOG_H

#include <stddef.h>

enum log_level { LOG_DEBUG, LOG_INFO, LOG_WARN, LOG_ERROR };

/* Messages below this level are dropped. Process-wide state (options.h): main() sets it from
 * --log.level before any thread starts; nothing writes it afterwards. */
extern enum log_level log_min_level;
/* 1: each line is a JSON object, {"level":"info","msg":"..."} (--log.format json), with the fields
 * of the logfmt line; 0: logfmt. Process-wide state, set as log_min_level is. */
extern int log_json;

void log_msg(enum log_level lvl, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Write a printable, quoted-safe copy of [s, s+n) into out (size outsz, always NUL-terminated when
 * outsz > 0): bytes outside printable ASCII, '"' and '\\' become \xNN; input that does not fit in
 * outsz is cut off at a whole byte's escape. Returns out. */
char *log_escape(char *out, size_t outsz, const char *s, size_t n);
/* Log each '\n'-terminated line of [text, text+len) as an error, after prefix: a loader's problems,
 * one log line each. They were escaped where they were written (--check-mapping prints them as
 * they are: \xNN, \"), so each backslash escape in them is kept as it is, not escaped again. */
void log_error_lines(const char *prefix, const char *text, size_t len);

#define log_debug(...) log_msg(LOG_DEBUG, __VA_ARGS__)
#define log_info(...) log_msg(LOG_INFO, __VA_ARGS__)
#define log_warn(...) log_msg(LOG_WARN, __VA_ARGS__)
#define log_error(...) log_msg(LOG_ERROR, __VA_ARGS__)

#endif
