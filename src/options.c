/* options.c: see options.h. One row per flag (as redis' standardConfig and tmux's options_table):
 * its names, type, where it is stored, its default (as text, parsed by the same code as argv, so a
 * default is range-checked like any value), its bounds, metavar and help. */
#include "options.h"

#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "controllers.h"
#include "cred.h"
#include "log.h"

#ifndef SHIM_SYSCONFDIR
#define SHIM_SYSCONFDIR "/etc"
#endif
#define DEFAULT_MAPPING SHIM_SYSCONFDIR "/slurm-exporter-shim/prometheus-slurm-exporter.json"

enum opt_type {
	T_STRING,   /* const char * */
	T_ADDR,     /* const char *, [host]:port with a decimal port of 0 to 65535 (addr_ok); given again: one
		       more listener (options.listens, the first one here) */
	T_PATH,     /* const char *, a URL path: starts with '/' */
	T_URL,      /* const char *, http:// or https:// */
	T_RURL,     /* const char *, http://, https:// or unix:/path (a socket) */
	T_URLS,     /* const char *, a comma list of T_URL; given again: appended (options.url_list) */
	T_BOOL,     /* int */
	T_INT,      /* long long */
	T_BYTES,    /* long long */
	T_WSECONDS, /* long long: whole seconds */
	T_SECONDS,  /* double */
	T_ENUM,     /* int: the value of the matching choice */
	T_NAME,     /* const char *, a header value: no control byte (CR, LF...), at most CRED_USER_MAX bytes */
	T_FILES,    /* const char *, a file; given again: one more (the list named by the flag's list/nlist,
		       the first one here; the first one given replaces the default) */
};

/* What a value of each type is, for "value "x" is not ...". */
static const char *const type_what[] = {
	[T_STRING] = "a string", [T_ADDR] = "a valid [host]:port address", [T_PATH] = "a URL path starting with \"/\"",
	[T_URL] = "an http:// or https:// URL",
	[T_RURL] = "an http:// or https:// URL or unix:/path/to/socket", [T_URLS] = "an http:// or https:// URL",
	[T_BOOL] = "a boolean",
	/* decimal digits only: strtod also read "1e3" and "0x10" as whole numbers */
	[T_INT] = "a valid whole number in decimal digits", [T_BYTES] = "a valid whole number of bytes in decimal digits",
	[T_WSECONDS] = "a valid whole number of seconds in decimal digits", [T_SECONDS] = "a valid number of seconds",
	[T_ENUM] = "a valid choice",
	[T_NAME] = "a user name (no control characters, at most " CRED_USER_MAX_TEXT " bytes)",
	[T_FILES] = "a file name",
};

struct choice {
	const char *name; /* NULL ends the list */
	int value;
	int alias;        /* accepted, not listed; aliases come last */
};

/* The order of enum log_level; "warning" is accepted for warn. */
static const struct choice log_levels[] = {
	{ "debug", LOG_DEBUG, 0 }, { "info", LOG_INFO, 0 }, { "warn", LOG_WARN, 0 }, { "error", LOG_ERROR, 0 },
	{ "warning", LOG_WARN, 1 }, { NULL, 0, 0 },
};

/* --log.format: the order of log.h's log_json (0, 1), exporter-toolkit's two names; "text" is the
 * SckyzO fork's name for its default format (its --log.format takes json or text), key=value lines
 * as logfmt's, so that the fork's unit starts. */
static const struct choice log_formats[] = { { "logfmt", 0, 0 }, { "json", 1, 0 }, { "text", 0, 1 }, { NULL, 0, 0 } };

/* The order of enum compare_format (compare.h). */
static const struct choice compare_formats[] = { { "table", 0, 0 }, { "json", 1, 0 }, { NULL, 0, 0 } };

struct flag {
	const char *name, *alias; /* alias: the old exporter's spelling, or "h" */
	enum opt_type type;
	size_t off;               /* where in struct options */
	const char *def;          /* default as text; NULL: unset (strings) or false (booleans) */
	double lo, hi;            /* bounds of the numeric types (unset: strings, booleans, choices) */
	const struct choice *choices;
	const char *metavar, *help; /* help NULL: the choices */
	size_t list, nlist;       /* T_FILES: where its const char *[OPTIONS_FILES_MAX] and its count are */
};

/* The flag's type and where its value goes, one macro per type: the field's offset in struct options,
 * checked at compile time to have the type's C type (another type matches no _Generic association:
 * a compile error, not a value written over the wrong bytes). */
#define AT(ctype, field) _Generic(((struct options *)0)->field, ctype: offsetof(struct options, field))
#define F_STRING(field)   .type = T_STRING, .off = AT(const char *, field)
#define F_ADDR(field)     .type = T_ADDR, .off = AT(const char *, field)
#define F_PATH(field)     .type = T_PATH, .off = AT(const char *, field)
#define F_NAME(field)     .type = T_NAME, .off = AT(const char *, field)
#define F_URL(field)      .type = T_URL, .off = AT(const char *, field)
#define F_RURL(field)     .type = T_RURL, .off = AT(const char *, field)
#define F_URLS(field)     .type = T_URLS, .off = AT(const char *, field)
#define F_BOOL(field)     .type = T_BOOL, .off = AT(int, field)
#define F_INT(field)      .type = T_INT, .off = AT(long long, field)
#define F_BYTES(field)    .type = T_BYTES, .off = AT(long long, field)
#define F_WSECONDS(field) .type = T_WSECONDS, .off = AT(long long, field)
#define F_SECONDS(field)  .type = T_SECONDS, .off = AT(double, field)
#define F_ENUM(field, list) .type = T_ENUM, .off = AT(int, field), .choices = list
#define F_FILES(field, all, n) .type = T_FILES, .off = AT(const char *, field), \
	.list = AT(const char **, all), .nlist = AT(size_t, n)

static const struct flag flags[] = {
	/* checked here: the port was taken mod 65536 by the bind (":99999" listened on 34463); repeated,
	 * as exporter-toolkit's: one listener each (an IPv4 and an IPv6 address, say) */
	{ .name = "web.listen-address", .alias = "listen-address", F_ADDR(listen), .def = ":9341", .metavar = "ADDR",
	  .help = "address to serve on; repeat it to serve on several; ADDR=NAME serves the --mapping.file NAME "
	  "(its name without .json) at the metrics path of that address" },
	/* exporter-toolkit's: the unit's .socket holds the address (socket activation, sd_listen_fds) */
	{ .name = "web.systemd-socket", F_BOOL(systemd_socket),
	  .help = "serve on the sockets systemd passes (socket activation: LISTEN_FDS) instead of --web.listen-address" },
	/* a path without its '/' would be accepted, then never match a request */
	{ .name = "web.telemetry-path", F_PATH(path), .def = "/metrics", .metavar = "PATH",
	  .help = "path of the metrics" },
	{ .name = "web.config.file", F_STRING(web_config), .metavar = "FILE",
	  .help = "TLS and basic auth config (Prometheus exporter-toolkit format)" },
	/* client_golang's handler compresses whenever the client accepts gzip (its DisableCompression) */
	{ .name = "web.compression", F_BOOL(compression), .def = "true",
	  .help = "gzip-compress /metrics, /native/metrics/<endpoint> and /probe answers for clients that accept it (Accept-Encoding)" },
	{ .name = "web.native-passthrough", F_BOOL(native), .def = "true",
	  .help = "serve slurmctld's own metrics, re-escaped, at /native/metrics/<endpoint> (jobs, nodes, partitions, scheduler, jobs-users-accts)" },
	/* 0 would make libmicrohttpd refuse every connection */
	{ .name = "web.max-connections", F_INT(max_conn), .def = "64", .lo = 1, .hi = 65535, .metavar = "N",
	  .help = "simultaneous HTTP connections" },
	/* libmicrohttpd counts whole seconds and takes 0 as "never": an idle client would hold a slot forever */
	{ .name = "web.connection-timeout", F_WSECONDS(conn_timeout), .def = "30", .lo = 1, .hi = 86400,
	  .metavar = "SECONDS", .help = "idle HTTP connection timeout" },
	/* clients that do not read keep answers alive: 256 MiB is a dozen answers of a 50,000-node
	 * cluster (docs/reliability.md) */
	{ .name = "web.max-held-bytes", F_BYTES(max_held), .def = "268435456", .lo = 1048576, .hi = 1099511627776.0,
	  .metavar = "BYTES",
	  .help = "bytes of earlier answers that connections still sending them may hold; beyond it a scrape that needs a new answer gets 503" },
	/* without a scheme curl would guess, and "ctl1:6817" reads as scheme "ctl1" */
	{ .name = "slurmctld.url", F_URLS(url), .def = "http://localhost:6817", .metavar = "URL",
	  .help = "base URL of slurmctld's HTTP listener; repeat it (or give a comma list) for every controller of a "
		  "high-availability pair: the current primary is used" },
	/* 0 used to become a 1 ms timeout: every fetch failed */
	{ .name = "slurmctld.timeout", F_SECONDS(timeout), .def = "10", .lo = 0.001, .hi = 86400, .metavar = "SECONDS",
	  .help = "per-request timeout to slurmctld" },
	/* the cheap endpoints: 5 s only shares one fetch among scrapes that come together */
	{ .name = "slurmctld.min-interval", F_SECONDS(min_interval), .def = "5", .lo = 0, .hi = 86400,
	  .metavar = "SECONDS", .help = "reuse a /metrics/nodes or /metrics/scheduler answer this long" },
	/* each of these walks every job record (partitions under the node write lock; what that costs
	 * slurmctld: docs/performance.md). The shipped table reads two (partitions and
	 * jobs-users-accts; /metrics/jobs is derived). They take turns (schedule.h refreshes one
	 * early): 75 s makes a scrape every 10 to 60 s walk at most once, and one every 30 s two
	 * times in three, below the old exporter's commands (60 s: every 30 s scrape walks once, about
	 * their cost); an answer is at most 75 s old (docs/operations.md's table) */
	{ .name = "slurmctld.jobs.min-interval", F_SECONDS(jobs_min_interval), .def = "75", .lo = 0, .hi = 86400,
	  .metavar = "SECONDS",
	  .help = "reuse a /metrics/jobs, /metrics/partitions or /metrics/jobs-users-accts answer this long" },
	{ .name = "slurmctld.max-body", F_BYTES(max_body), .def = "268435456", .lo = 1, .hi = 1099511627776.0,
	  .metavar = "BYTES", .help = "largest upstream body accepted" },
	{ .name = "slurmctld.auth.token-file", F_STRING(token_file), .metavar = "FILE",
	  .help = "JWT sent as X-SLURM-USER-TOKEN (Slurm 26.05), re-read every fetch" },
	{ .name = "slurmctld.auth.user", F_NAME(user), .metavar = "NAME",
	  .help = "user name sent as X-SLURM-USER-NAME" },
	{ .name = "slurmrestd.url", F_RURL(rest_url), .metavar = "URL",
	  .help = "slurmrestd, for node states, FairShare and job detail (http(s)://host:6820 or unix:/path); unset: not used" },
	{ .name = "slurmrestd.auth.token-file", F_STRING(rest_token_file), .metavar = "FILE",
	  .help = "JWT sent to slurmrestd as X-SLURM-USER-TOKEN, re-read every fetch" },
	{ .name = "slurmrestd.auth.user", F_NAME(rest_user), .metavar = "NAME",
	  .help = "user name sent to slurmrestd as X-SLURM-USER-NAME" },
	{ .name = "slurmrestd.api-version", F_STRING(rest_api_version), .metavar = "VERSION",
	  .help = "slurmrestd API version, v0.0.41 to v0.0.46; unset: the newest the server lists in /openapi/v3" },
	{ .name = "slurmrestd.timeout", F_SECONDS(rest_timeout), .def = "10", .lo = 0.001, .hi = 86400,
	  .metavar = "SECONDS", .help = "per-request timeout to slurmrestd" },
	{ .name = "slurmrestd.min-interval", F_SECONDS(rest_min_interval), .def = "5", .lo = 0, .hi = 86400,
	  .metavar = "SECONDS", .help = "reuse a slurmrestd /nodes, /shares, /diag or /jobs/state answer at least this long "
	  "(the floor of its interval)" },
	{ .name = "slurmrestd.max-share", F_INT(rest_max_share), .def = "5", .lo = 0, .hi = 100,
	  .metavar = "PERCENT", .help = "fetch a slurmrestd document other than /jobs again only once its last fetch took at "
	  "most this share of the time since that fetch began (a 3 s /jobs/state fetch at 5%: every 60 s; one under "
	  "0.25 s: every --slurmrestd.min-interval); 0: every --slurmrestd.min-interval" },
	{ .name = "slurmrestd.jobs", F_BOOL(rest_jobs),
	  .help = "fetch slurmrestd's /jobs (about 10 KB per job) for the rows only it serves (pending reasons, per-user and "
		  "per-account jobs); the job-state rows read /jobs/state without it" },
	{ .name = "slurmrestd.jobs.min-interval", F_SECONDS(rest_jobs_min_interval), .def = "30", .lo = 0, .hi = 86400,
	  .metavar = "SECONDS", .help = "reuse a slurmrestd /jobs answer at least this long (the floor of its interval)" },
	{ .name = "slurmrestd.jobs.max-share", F_INT(rest_jobs_max_share), .def = "1", .lo = 0, .hi = 100,
	  .metavar = "PERCENT", .help = "fetch /jobs again only once its last fetch took at most this share of the time "
	  "since that fetch began (a 2.7 s fetch at 1%: every 270 s); 0: every --slurmrestd.jobs.min-interval" },
	{ .name = "slurmrestd.jobs.max-backoff", F_SECONDS(rest_jobs_max_backoff), .def = "600", .lo = 0, .hi = 86400,
	  .metavar = "SECONDS", .help = "after failed /jobs fetches, wait --slurmrestd.jobs.min-interval doubled per "
	  "failure in a row, at most this long" },
	{ .name = "slurmrestd.jobs.max-timeout", F_SECONDS(rest_jobs_max_timeout), .def = "300", .lo = 0.001, .hi = 86400,
	  .metavar = "SECONDS", .help = "the timeout of a /jobs fetch before one was usable, and the longest: then it gets "
	  "twice its last usable fetch's duration, doubled per failure in a row, never less than --slurmrestd.timeout" },
	{ .name = "slurmrestd.max-body", F_BYTES(rest_max_body), .def = "4294967296", .lo = 1, .hi = 1099511627776.0,
	  .metavar = "BYTES", .help = "largest slurmrestd body accepted" },
	{ .name = "mapping.file", F_FILES(mapping, mappings, nmapping), .def = DEFAULT_MAPPING, .metavar = "FILE",
	  .help = "mapping table; repeat it to serve several schemas from one set of fetches: the first at the metrics "
	  "path, each at /schemas/<file name without .json>/metrics" },
	{ .name = "mapping.exclude", F_STRING(exclude), .metavar = "REGEX",
	  .help = "serve no family whose name matches REGEX (POSIX extended, anchored at both ends, e.g. "
	  "'slurm_scheduler_.*|slurm_user_.*'), in any schema, and fetch nothing for them only" },
	{ .name = "mapping.to-rules", F_STRING(to_rules), .metavar = "DIR",
	  .help = "write DIR/rules.yml, DIR/scrape.yml (through the shim) and DIR/scrape-direct.yml for Prometheus, then exit" },
	{ .name = "probe.targets-file", F_STRING(targets_file), .metavar = "FILE",
	  .help = "YAML file of named clusters, each scraped at /probe?target=NAME (see docs/operations.md)" },
	{ .name = "gpus-acct", F_BOOL(gpus), .help = "serve the legacy GPU families (old exporter: -gpus-acct)" },
	{ .name = "log.level", F_ENUM(log_level, log_levels), .def = "info", .metavar = "LEVEL" },
	{ .name = "log.format", F_ENUM(log_format, log_formats), .def = "logfmt", .metavar = "FORMAT",
	  .help = "log lines as logfmt (level=info msg=\"...\") or json (one object a line, the same fields)" },
	/* slurmctld's sdiag does not count its HTTP requests: this is where an admin sees their cost */
	{ .name = "log.slow-fetch", F_SECONDS(slow_fetch), .def = "1", .lo = 0, .hi = 86400, .metavar = "SECONDS",
	  .help = "warn once when an endpoint's fetches take longer than this, and count them; 0: never" },
	{ .name = "once", F_BOOL(once), .help = "scrape once, print to stdout, exit (1 when every endpoint failed)" },
	{ .name = "once.schema", F_STRING(once_schema), .metavar = "NAME",
	  .help = "with --once: print the schema of this --mapping.file (its name without .json) instead of the first" },
	{ .name = "status.load-margin", F_INT(load_margin), .def = "10", .lo = 0, .hi = 1000, .metavar = "PERCENT",
	  .help = "the status page lists a node whose load exceeds its allocated CPUs by more than this share of its "
	  "CPUs (at least 1 CPU)" },
	{ .name = "replay-dir", F_STRING(replay_dir), .metavar = "DIR",
	  .help = "read DIR/metrics_<endpoint>.txt instead of fetching over HTTP" },
	{ .name = "compare-legacy", F_URL(compare_legacy), .metavar = "URL",
	  .help = "scrape the old exporter at URL and the shim at once, report per family, exit (0 every exact family agrees and none disappears, 1 otherwise, 2 URL unreadable)" },
	{ .name = "compare-legacy.format", F_ENUM(compare_format, compare_formats), .def = "table",
	  .metavar = "FORMAT", .help = "how --compare-legacy reports: table or json" },
	{ .name = "compare-legacy.schema", F_STRING(compare_schema), .metavar = "NAME",
	  .help = "with --compare-legacy: compare against this --mapping.file (its name without .json) instead of the "
	  "schema whose row names the old exporter's page shares most" },
	{ .name = "check-mapping", F_FILES(check_mapping, checks, ncheck), .metavar = "FILE",
	  .help = "check a mapping file (repeat it for several, checked as one set): print every problem, exit 1 if any" },
	{ .name = "check-exposition", F_BOOL(check_expo),
	  .help = "parse one exposition from stdin: exit 0 if valid, else 1 with the first error" },
	{ .name = "strict", F_BOOL(strict), .help = "with --check-exposition: the strict OpenMetrics grammar" },
	{ .name = "version", F_BOOL(version), .help = "print the version and exit; with --mapping.file, also each schema "
	  "and its rows by fidelity" },
	{ .name = "help", .alias = "h", F_BOOL(help), .help = "print this help and exit" },
};
#define NFLAGS (sizeof(flags) / sizeof(flags[0]))

static int is_numeric(enum opt_type t)
{
	return t == T_INT || t == T_BYTES || t == T_WSECONDS || t == T_SECONDS;
}

static int parse_bool(const char *v, int *out)
{
	if (!strcmp(v, "true") || !strcmp(v, "1") || !strcmp(v, "t") || !strcmp(v, "TRUE") || !strcmp(v, "True"))
		*out = 1;
	else if (!strcmp(v, "false") || !strcmp(v, "0") || !strcmp(v, "f") || !strcmp(v, "FALSE") || !strcmp(v, "False"))
		*out = 0;
	else
		return -1;
	return 0;
}

/* 1 if v is 1 to max decimal digits and nothing else. */
static int is_digits(const char *v, size_t max)
{
	size_t n = strspn(v, "0123456789");
	return n > 0 && n <= max && !v[n];
}

/* A number of type t within [lo, hi]: 0 and *out, or -1. The integer types take decimal digits
 * only (at most 15: every bound is below 10^15, and each such number is exact in a double). */
static int parse_number(const struct flag *f, const char *v, double *out)
{
	char *end;
	if (f->type != T_SECONDS && !is_digits(v, 15))
		return -1;
	errno = 0;
	double d = strtod(v, &end);
	if (errno || end == v || *end || v[0] == ' ' || !isfinite(d) || d < f->lo || d > f->hi)
		return -1;
	*out = d;
	return 0;
}

/* [host]:port as Go's net.SplitHostPort splits it (the old exporter's flag): the last ':' ends the
 * host, which is empty (every address), "[v6]" or a name or IPv4 address without ':', '[', ']',
 * spaces or control bytes; the port is decimal digits, 0 to 65535 (0: any free port). */
static int addr_ok(const char *v)
{
	const char *colon = strrchr(v, ':');
	if (!colon || !is_digits(colon + 1, 5) || atol(colon + 1) > 65535)
		return 0;
	size_t hl = (size_t)(colon - v);
	if (hl && v[0] == '[') {
		if (hl < 3 || v[hl - 1] != ']')
			return 0;
		v++;
		hl -= 2;
	} else if (memchr(v, ':', hl)) {
		return 0; /* an IPv6 address needs its brackets */
	}
	for (size_t i = 0; i < hl; i++)
		if ((unsigned char)v[i] <= ' ' || v[i] == 0x7f || v[i] == '[' || v[i] == ']')
			return 0;
	return 1;
}

/* "debug, info, warn or error": the choices that are not aliases. */
static void choices_text(const struct choice *c, char *out, size_t outsz)
{
	size_t n = 0, o = 0;
	while (c[n].name && !c[n].alias)
		n++;
	out[0] = '\0';
	for (size_t i = 0; i < n && o < outsz; i++)
		o += (size_t)snprintf(out + o, outsz - o, "%s%s", i == 0 ? "" : i + 1 == n ? " or " : ", ", c[i].name);
}

/* Report a value that does not fit flag f: flag --x: value "y" is not ... (expected ...). Always -1. */
static int bad_value(const struct flag *f, const char *v, FILE *err)
{
	char safe[200], expect[200] = "";
	if (is_numeric(f->type)) {
		snprintf(expect, sizeof(expect), " (expected %.15g to %.15g)", f->lo, f->hi);
	} else if (f->type == T_ADDR) {
		snprintf(expect, sizeof(expect), " (expected port 0 to 65535, an IPv6 host in brackets)");
	} else if (f->type == T_BOOL) {
		snprintf(expect, sizeof(expect), " (expected true or false)");
	} else if (f->type == T_ENUM) {
		char names[150];
		choices_text(f->choices, names, sizeof(names));
		snprintf(expect, sizeof(expect), " (expected %s)", names);
	}
	fprintf(err, "slurm-exporter-shim: flag --%s: value \"%s\" is not %s%s\n", f->name,
		log_escape(safe, sizeof(safe), v, strlen(v)), type_what[f->type], expect);
	return -1;
}

/* The elements of comma list v, every one checked (upstream_url_is_valid; the error names the one that
 * is not a URL); -1 with the error written. */
static int count_urls(const struct flag *f, const char *v, FILE *err)
{
	int count = 0;
	for (const char *s = v;; s++, count++) {
		size_t n = strcspn(s, ",");
		if (!upstream_url_is_valid(s, n, 0)) {
			char el[300];
			snprintf(el, sizeof(el), "%.*s", (int)(n < 299 ? n : 299), s);
			return bad_value(f, el, err);
		}
		long mp = controllers_metrics_path(s, n);
		if (mp >= 0) { /* the old exporter's habit, or a copy of slurmctld's own URL: refused, not guessed */
			char el[300], shown[CRED_SHOWN_MAX], safe[600], base[300], bshown[CRED_SHOWN_MAX];
			snprintf(el, sizeof(el), "%.*s", (int)(n < 299 ? n : 299), s);
			snprintf(base, sizeof(base), "%.*s", (int)(mp < 299 ? mp : 299), s);
			cred_url_shown(shown, sizeof(shown), el);
			cred_url_shown(bshown, sizeof(bshown), base);
			fprintf(err, "slurm-exporter-shim: flag --%s: value \"%s\" is slurmctld's metrics path, not its base URL: "
				"give %s (the shim asks for /metrics/nodes, /metrics/jobs... itself)\n",
				f->name, log_escape(safe, sizeof(safe), shown, strlen(shown)), bshown);
			return -1;
		}
		s += n;
		if (!*s)
			return count + 1;
	}
}

/* A comma list of URLs, at most CONTROLLERS_MAX in all; a second occurrence of the flag is
 * appended to the first into o->url_list. */
static int set_urls(struct options *o, const struct flag *f, const char *v, FILE *err)
{
	const char **dst = (const char **)((char *)o + f->off);
	int n = count_urls(f, v, err), before = *dst && *dst != f->def ? count_urls(f, *dst, err) : 0;
	if (n < 0)
		return -1;
	if (n + before > CONTROLLERS_MAX) {
		fprintf(err, "slurm-exporter-shim: flag --%s: more than %d controllers\n", f->name, CONTROLLERS_MAX);
		return -1;
	}
	if (!before) { /* the default, or not set yet */
		*dst = v;
		return 0;
	}
	char joined[sizeof(o->url_list)];
	if ((size_t)snprintf(joined, sizeof(joined), "%s,%s", *dst, v) >= sizeof(joined)) {
		fprintf(err, "slurm-exporter-shim: flag --%s: the controller list is longer than %zu bytes\n", f->name,
			sizeof(joined) - 1);
		return -1;
	}
	memcpy(o->url_list, joined, sizeof(joined));
	*dst = o->url_list;
	return 0;
}

/* One more listener: the first one given replaces the default. ADDR=NAME: the address, bound to
 * schema NAME (checked against the mapping files at start). */
static int set_addrs(struct options *o, const struct flag *f, const char *v, FILE *err)
{
	const char **dst = (const char **)((char *)o + f->off);
	const char *eq = strchr(v, '=');
	if (*dst == f->def)
		o->nlisten = 0;
	if (o->nlisten == OPTIONS_LISTEN_MAX) {
		fprintf(err, "slurm-exporter-shim: flag --%s: given more than %d times\n", f->name, OPTIONS_LISTEN_MAX);
		return -1;
	}
	size_t i = o->nlisten;
	o->listen_schema[i] = NULL;
	if (eq) {
		size_t n = (size_t)(eq - v);
		if (n >= sizeof(o->listen_addr[0]) || !eq[1])
			return bad_value(f, v, err);
		memcpy(o->listen_addr[i], v, n);
		o->listen_addr[i][n] = '\0';
		if (!addr_ok(o->listen_addr[i]))
			return bad_value(f, v, err);
		o->listen_schema[i] = eq + 1;
		v = o->listen_addr[i];
	} else if (!addr_ok(v)) {
		return bad_value(f, v, err);
	}
	o->listens[o->nlisten++] = v;
	*dst = o->listens[0];
	return 0;
}

/* One more file of a repeatable flag: the first one given replaces the default. */
static int set_files(struct options *o, const struct flag *f, const char *v, FILE *err)
{
	const char **dst = (const char **)((char *)o + f->off), **all = (const char **)((char *)o + f->list);
	size_t *n = (size_t *)((char *)o + f->nlist);
	if (*dst == f->def)
		*n = 0;
	if (*n == OPTIONS_FILES_MAX) {
		fprintf(err, "slurm-exporter-shim: flag --%s: given more than %d times\n", f->name, OPTIONS_FILES_MAX);
		return -1;
	}
	if (!*v)
		return bad_value(f, v, err);
	all[(*n)++] = v;
	*dst = all[0];
	o->mappings_given |= all == o->mappings && v != f->def; /* the defaults are set through here too */
	return 0;
}

/* Check value v for flag f and store it into *o. 0, or -1 with the error written. */
static int set_value(struct options *o, const struct flag *f, const char *v, FILE *err)
{
	void *dst = (char *)o + f->off;
	double d;
	switch (f->type) {
	case T_URLS:
		return set_urls(o, f, v, err);
	case T_ADDR:
		return set_addrs(o, f, v, err);
	case T_FILES:
		return set_files(o, f, v, err);
	case T_PATH:
		if (v[0] != '/')
			return bad_value(f, v, err);
		*(const char **)dst = v;
		return 0;
	case T_RURL:
	case T_URL:
		if (!upstream_url_is_valid(v, strlen(v), f->type == T_RURL))
			return bad_value(f, v, err);
		/* fall through */
	case T_STRING:
		*(const char **)dst = v;
		return 0;
	case T_NAME: /* it goes into a request header as is: a CR or LF would add header lines */
		if (!cred_value_is_ok(v, strlen(v), CRED_USER_MAX))
			return bad_value(f, v, err);
		*(const char **)dst = v;
		return 0;
	case T_BOOL:
		return parse_bool(v, dst) < 0 ? bad_value(f, v, err) : 0;
	case T_ENUM:
		for (const struct choice *c = f->choices; c->name; c++)
			if (!strcmp(c->name, v)) {
				*(int *)dst = c->value;
				return 0;
			}
		return bad_value(f, v, err);
	case T_SECONDS:
		if (parse_number(f, v, &d) < 0)
			return bad_value(f, v, err);
		*(double *)dst = d;
		return 0;
	case T_INT:
	case T_BYTES:
	case T_WSECONDS:
		if (parse_number(f, v, &d) < 0)
			return bad_value(f, v, err);
		*(long long *)dst = (long long)d;
		return 0;
	}
	return -1;
}

static const struct flag *find_flag(const char *a, size_t n)
{
	for (size_t k = 0; k < NFLAGS; k++)
		if ((strlen(flags[k].name) == n && !strncmp(flags[k].name, a, n)) ||
		    (flags[k].alias && strlen(flags[k].alias) == n && !strncmp(flags[k].alias, a, n)))
			return &flags[k];
	return NULL;
}

/* [a, a + n) without a leading "no-". */
static const char *fork_base(const char *a, size_t *n)
{
	if (*n > 3 && !memcmp(a, "no-", 3)) {
		*n -= 3;
		return a + 3;
	}
	return a;
}

/* Remember argv word w (a fork flag spelled [a, a + n)) for fork_flags_warn: one per flag, the last
 * spelling given (--collector.gpus then --no-collector.gpus: the second). */
static void fork_remember(struct options *o, const char *w, const char *a, size_t n)
{
	const char *base = fork_base(a, &n);
	for (size_t k = 0; k < o->nfork_given; k++) {
		const char *g = o->fork_given[k] + strspn(o->fork_given[k], "-");
		size_t gn = strcspn(g, "=");
		const char *gb = fork_base(g, &gn);
		if (gn == n && !memcmp(gb, base, n)) {
			o->fork_given[k] = w;
			return;
		}
	}
	if (o->nfork_given < FORK_GIVEN_MAX)
		o->fork_given[o->nfork_given++] = w;
	else
		o->nfork_more++;
}

/* argv[*i], one of the SckyzO fork's flags (ff; spelled [a, a + n), eq its "=" or NULL): its value
 * checked as the fork checks it, --[no-]collector.gpus applied to --gpus-acct. 0, or -1 written. */
static int fork_take(struct options *o, const struct fork_flag *ff, int neg, const char *a, size_t n, const char *eq,
		     int argc, char **argv, int *i, FILE *err)
{
	const char *w = argv[*i], *v = eq ? eq + 1 : NULL;
	int on = !neg;
	if (ff->kind == FORK_BOOL || ff->kind == FORK_GPUS) {
		if (v && neg) {
			fprintf(err, "slurm-exporter-shim: flag --%.*s (the SckyzO slurm_exporter's) takes no value\n", (int)n, a);
			return -1;
		}
		if (v && parse_bool(v, &on) < 0) {
			char safe[200];
			fprintf(err, "slurm-exporter-shim: flag --%.*s (the SckyzO slurm_exporter's): value \"%s\" is not a boolean "
				"(expected true or false)\n", (int)n, a, log_escape(safe, sizeof(safe), v, strlen(v)));
			return -1;
		}
		if (ff->kind == FORK_GPUS)
			o->gpus = on;
	} else {
		if (!v && *i + 1 < argc)
			v = argv[++*i];
		if (!v) {
			fprintf(err, "slurm-exporter-shim: flag --%.*s: needs a value\n", (int)n, a);
			return -1;
		}
		if (ff->kind == FORK_DURATION && !fork_is_duration(v)) {
			char safe[200];
			fprintf(err, "slurm-exporter-shim: flag --%.*s (the SckyzO slurm_exporter's): value \"%s\" is not a "
				"duration (expected e.g. 5s, 1m30s)\n", (int)n, a, log_escape(safe, sizeof(safe), v, strlen(v)));
			return -1;
		}
	}
	fork_remember(o, w, a, n);
	return 0;
}

int options_parse(struct options *o, int argc, char **argv, FILE *err)
{
	memset(o, 0, sizeof(*o));
	for (size_t k = 0; k < NFLAGS; k++)
		if (flags[k].def && set_value(o, &flags[k], flags[k].def, err) < 0)
			return -1; /* a default out of its own bounds: a bug, caught by every test */
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (a[0] != '-' || !a[1]) {
			fprintf(err, "slurm-exporter-shim: unexpected argument \"%s\"\n", a);
			return -1;
		}
		a += a[1] == '-' ? 2 : 1;
		const char *eq = strchr(a, '=');
		size_t n = eq ? (size_t)(eq - a) : strlen(a);
		const struct flag *f = find_flag(a, n);
		int neg;
		const struct fork_flag *ff = f || argv[i][1] != '-' ? NULL : fork_flag_find(a, n, &neg);
		if (ff) { /* kingpin's double dash only */
			if (fork_take(o, ff, neg, a, n, eq, argc, argv, &i, err) < 0)
				return -1;
			continue;
		}
		if (!f) {
			fprintf(err, "slurm-exporter-shim: unknown flag \"%s\" (see --help)\n", argv[i]);
			return -1;
		}
		const char *v = eq ? eq + 1 : f->type == T_BOOL ? "true" : i + 1 < argc ? argv[++i] : NULL;
		if (!v) {
			fprintf(err, "slurm-exporter-shim: flag --%s: needs a value\n", f->name);
			return -1;
		}
		if (set_value(o, f, v, err) < 0)
			return -1;
	}
	return 0;
}

void options_usage(FILE *f)
{
	fprintf(f, "usage: slurm-exporter-shim [flags]\n\n"
		   "Serves the old prometheus-slurm-exporter's metrics, computed from slurmctld's native metrics.\n\nFlags:\n");
	for (size_t i = 0; i < NFLAGS; i++) {
		const struct flag *g = &flags[i];
		char left[64], range[80] = "", def[200] = "";
		int short_alias = g->alias && strlen(g->alias) == 1; /* -h: shown; the long legacy ones below */
		snprintf(left, sizeof(left), "--%s%s%s%s%s", g->name, g->metavar ? " " : "", g->metavar ? g->metavar : "",
			 short_alias ? ", -" : "", short_alias ? g->alias : "");
		if (is_numeric(g->type))
			snprintf(range, sizeof(range), "%.15g to %.15g, ", g->lo, g->hi);
		if (g->def) {
			int quote = g->type == T_STRING || g->type == T_FILES || g->type == T_ADDR || g->type == T_PATH || g->type == T_URL || g->type == T_RURL || g->type == T_URLS;
			snprintf(def, sizeof(def), " (%sdefault %s%s%s)", range, quote ? "\"" : "", g->def, quote ? "\"" : "");
		}
		char choices[150] = "";
		if (g->type == T_ENUM)
			choices_text(g->choices, choices, sizeof(choices));
		fprintf(f, "  %-34s %s%s\n", left, g->help ? g->help : choices, def);
	}
	fprintf(f, "\nThe old exporter's -listen-address ADDR and -gpus-acct[=BOOL] are accepted too, and so are the SckyzO\n"
		   "slurm_exporter's flags: --[no-]collector.gpus turns the GPU families on or off, the others\n"
		   "(--[no-]collector.NAME, --command.timeout, --slurm.bin-path, --web.disable-exporter-metrics...) are\n"
		   "ignored with a warning at start (man slurm-exporter-shim, COMPATIBILITY).\n");
}
