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

#include "log.h"

#ifndef SHIM_SYSCONFDIR
#define SHIM_SYSCONFDIR "/etc"
#endif
#define DEFAULT_MAPPING SHIM_SYSCONFDIR "/slurm-exporter-shim/prometheus-slurm-exporter.json"

enum opt_type {
	T_STRING,   /* const char * */
	T_URL,      /* const char *, http:// or https:// */
	T_RURL,     /* const char *, http://, https:// or unix:/path (a socket) */
	T_URLS,     /* const char *, a comma list of T_URL; given again: appended (options.url_list) */
	T_BOOL,     /* int */
	T_INT,      /* long long */
	T_BYTES,    /* long long */
	T_WSECONDS, /* long long: whole seconds */
	T_SECONDS,  /* double */
	T_ENUM,     /* int: the value of the matching choice */
};

/* What a value of each type is, for "value "x" is not ...". */
static const char *const type_what[] = {
	[T_STRING] = "a string", [T_URL] = "an http:// or https:// URL",
	[T_RURL] = "an http:// or https:// URL or unix:/path/to/socket", [T_URLS] = "an http:// or https:// URL",
	[T_BOOL] = "a boolean",
	[T_INT] = "a valid whole number", [T_BYTES] = "a valid whole number of bytes",
	[T_WSECONDS] = "a valid whole number of seconds", [T_SECONDS] = "a valid number of seconds",
	[T_ENUM] = "a valid choice",
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

/* The order of enum compare_format (compare.h). */
static const struct choice compare_formats[] = { { "table", 0, 0 }, { "json", 1, 0 }, { NULL, 0, 0 } };

struct flag {
	const char *name, *alias; /* alias: the old exporter's spelling, or "h" */
	enum opt_type type;
	size_t off;               /* where in struct options */
	const char *def;          /* default as text; NULL: unset (strings) or false (booleans) */
	double lo, hi;            /* bounds of the numeric types */
	const struct choice *choices;
	const char *metavar, *help; /* help NULL: the choices */
};

#define OFF(field) offsetof(struct options, field)
#define ANY 0, 0 /* no bounds: strings and booleans */

static const struct flag flags[] = {
	{ "web.listen-address", "listen-address", T_STRING, OFF(listen), ":9341", ANY, NULL, "ADDR", "address to serve on" },
	{ "web.telemetry-path", NULL, T_STRING, OFF(path), "/metrics", ANY, NULL, "PATH", "path of the metrics" },
	{ "web.config.file", NULL, T_STRING, OFF(web_config), NULL, ANY, NULL, "FILE",
	  "TLS and basic auth config (Prometheus exporter-toolkit format)" },
	/* 0 would make libmicrohttpd refuse every connection */
	{ "web.native-passthrough", NULL, T_BOOL, OFF(native), "true", ANY, NULL, NULL,
	  "serve slurmctld's own metrics, re-escaped, at /native/metrics/<endpoint> (jobs, nodes, partitions, scheduler, jobs-users-accts)" },
	{ "web.max-connections", NULL, T_INT, OFF(max_conn), "64", 1, 65535, NULL, "N", "simultaneous HTTP connections" },
	/* libmicrohttpd counts whole seconds and takes 0 as "never": an idle client would hold a slot forever */
	{ "web.connection-timeout", NULL, T_WSECONDS, OFF(conn_timeout), "30", 1, 86400, NULL, "SECONDS",
	  "idle HTTP connection timeout" },
	/* clients that do not read keep answers alive: 256 MiB is a dozen answers of a 50,000-node
	 * cluster (docs/reliability.md) */
	{ "web.max-held-bytes", NULL, T_BYTES, OFF(max_held), "268435456", 1048576, 1099511627776.0, NULL, "BYTES",
	  "bytes of earlier answers that connections still sending them may hold; beyond it a scrape that needs a new answer gets 503" },
	/* without a scheme curl would guess, and "ctl1:6817" reads as scheme "ctl1" */
	{ "slurmctld.url", NULL, T_URLS, OFF(url), "http://localhost:6817", ANY, NULL, "URL",
	  "base URL of slurmctld's HTTP listener; repeat it (or give a comma list) for every controller of a "
	  "high-availability pair: the current primary is used" },
	/* 0 used to become a 1 ms timeout: every fetch failed */
	{ "slurmctld.timeout", NULL, T_SECONDS, OFF(timeout), "10", 0.001, 86400, NULL, "SECONDS",
	  "per-request timeout to slurmctld" },
	/* the cheap endpoints: 5 s only shares one fetch among scrapes that come together */
	{ "slurmctld.min-interval", NULL, T_SECONDS, OFF(min_interval), "5", 0, 86400, NULL, "SECONDS",
	  "reuse a /metrics/nodes or /metrics/scheduler answer this long" },
	/* each of these walks every job record (partitions under the node write lock): at 5,000
	 * records, 70 to 80 ms of slurmctld CPU each. The shipped table reads two (partitions and
	 * jobs-users-accts; /metrics/jobs is derived). They take turns (schedule.h refreshes one
	 * early): 75 s makes a scrape every 10 to 60 s walk at most once, and one every 30 s two
	 * times in three, below the old exporter's commands (60 s: every 30 s scrape walks once, about
	 * their cost); an answer is at most 75 s old (docs/operations.md's table) */
	{ "slurmctld.jobs.min-interval", NULL, T_SECONDS, OFF(jobs_min_interval), "75", 0, 86400, NULL, "SECONDS",
	  "reuse a /metrics/jobs, /metrics/partitions or /metrics/jobs-users-accts answer this long" },
	{ "slurmctld.max-body", NULL, T_BYTES, OFF(max_body), "268435456", 1, 1099511627776.0, NULL, "BYTES",
	  "largest upstream body accepted" },
	{ "slurmctld.auth.token-file", NULL, T_STRING, OFF(token_file), NULL, ANY, NULL, "FILE",
	  "JWT sent as X-SLURM-USER-TOKEN (Slurm 26.05), re-read every fetch" },
	{ "slurmctld.auth.user", NULL, T_STRING, OFF(user), NULL, ANY, NULL, "NAME", "user name sent as X-SLURM-USER-NAME" },
	{ "slurmrestd.url", NULL, T_RURL, OFF(rest_url), NULL, ANY, NULL, "URL",
	  "slurmrestd, for node states, FairShare and job detail (http(s)://host:6820 or unix:/path); unset: not used" },
	{ "slurmrestd.auth.token-file", NULL, T_STRING, OFF(rest_token_file), NULL, ANY, NULL, "FILE",
	  "JWT sent to slurmrestd as X-SLURM-USER-TOKEN, re-read every fetch" },
	{ "slurmrestd.auth.user", NULL, T_STRING, OFF(rest_user), NULL, ANY, NULL, "NAME",
	  "user name sent to slurmrestd as X-SLURM-USER-NAME" },
	{ "slurmrestd.api-version", NULL, T_STRING, OFF(rest_api_version), NULL, ANY, NULL, "VERSION",
	  "slurmrestd API version, v0.0.41 to v0.0.44; unset: the newest the server lists in /openapi/v3" },
	{ "slurmrestd.timeout", NULL, T_SECONDS, OFF(rest_timeout), "10", 0.001, 86400, NULL, "SECONDS",
	  "per-request timeout to slurmrestd" },
	{ "slurmrestd.min-interval", NULL, T_SECONDS, OFF(rest_min_interval), "5", 0, 86400, NULL, "SECONDS",
	  "reuse a slurmrestd /nodes, /shares or /diag answer this long" },
	{ "slurmrestd.jobs", NULL, T_BOOL, OFF(rest_jobs), NULL, ANY, NULL, NULL,
	  "fetch slurmrestd's /jobs (about 10 KB per job) for the rows enabled_by \"slurmrestd-jobs\"" },
	{ "slurmrestd.jobs.min-interval", NULL, T_SECONDS, OFF(rest_jobs_min_interval), "30", 0, 86400, NULL, "SECONDS",
	  "reuse a slurmrestd /jobs answer this long" },
	{ "slurmrestd.max-body", NULL, T_BYTES, OFF(rest_max_body), "4294967296", 1, 1099511627776.0, NULL, "BYTES",
	  "largest slurmrestd body accepted" },
	{ "mapping.file", NULL, T_STRING, OFF(mapping), DEFAULT_MAPPING, ANY, NULL, "FILE", "mapping table" },
	{ "mapping.to-rules", NULL, T_STRING, OFF(to_rules), NULL, ANY, NULL, "DIR",
	  "write DIR/rules.yml, DIR/scrape.yml (through the shim) and DIR/scrape-direct.yml for Prometheus, then exit" },
	{ "probe.targets-file", NULL, T_STRING, OFF(targets_file), NULL, ANY, NULL, "FILE",
	  "YAML file of named clusters, each scraped at /probe?target=NAME (see docs/operations.md)" },
	{ "gpus-acct", NULL, T_BOOL, OFF(gpus), NULL, ANY, NULL, NULL, "serve the legacy GPU families (old exporter: -gpus-acct)" },
	{ "log.level", NULL, T_ENUM, OFF(log_level), "info", ANY, log_levels, "LEVEL", NULL /* the choices */ },
	/* slurmctld's sdiag does not count its HTTP requests: this is where an admin sees their cost */
	{ "log.slow-fetch", NULL, T_SECONDS, OFF(slow_fetch), "1", 0, 86400, NULL, "SECONDS",
	  "warn once when an endpoint's fetches take longer than this, and count them; 0: never" },
	{ "once", NULL, T_BOOL, OFF(once), NULL, ANY, NULL, NULL, "scrape once, print to stdout, exit (1 when every endpoint failed)" },
	{ "replay-dir", NULL, T_STRING, OFF(replay_dir), NULL, ANY, NULL, "DIR",
	  "read DIR/metrics_<endpoint>.txt instead of fetching over HTTP" },
	{ "compare-legacy", NULL, T_URL, OFF(compare_legacy), NULL, ANY, NULL, "URL",
	  "scrape the old exporter at URL and the shim at once, report per family, exit (0 agree, 1 an exact family differs, 2 URL unreadable)" },
	{ "compare-legacy.format", NULL, T_ENUM, OFF(compare_format), "table", ANY, compare_formats, "FORMAT",
	  "how --compare-legacy reports: table or json" },
	{ "check-mapping", NULL, T_STRING, OFF(check_mapping), NULL, ANY, NULL, "FILE",
	  "check a mapping file: print every problem, exit 1 if any" },
	{ "check-exposition", NULL, T_BOOL, OFF(check_expo), NULL, ANY, NULL, NULL,
	  "parse one exposition from stdin: exit 0 if valid, else 1 with the first error" },
	{ "strict", NULL, T_BOOL, OFF(strict), NULL, ANY, NULL, NULL, "with --check-exposition: the strict OpenMetrics grammar" },
	{ "version", NULL, T_BOOL, OFF(version), NULL, ANY, NULL, NULL, "print the version and exit" },
	{ "help", "h", T_BOOL, OFF(help), NULL, ANY, NULL, NULL, "print this help and exit" },
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

/* A number of type t within [lo, hi]: 0 and *out, or -1. */
static int parse_number(const struct flag *f, const char *v, double *out)
{
	char *end;
	errno = 0;
	double d = strtod(v, &end);
	if (errno || end == v || *end || v[0] == ' ' || !isfinite(d) || d < f->lo || d > f->hi)
		return -1;
	if (f->type != T_SECONDS && d != floor(d)) /* the integer types: whole numbers only */
		return -1;
	*out = d;
	return 0;
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

static int url_ok(const char *v, size_t n)
{
	return (n > 7 && !strncasecmp(v, "http://", 7)) || (n > 8 && !strncasecmp(v, "https://", 8));
}

/* A comma list of URLs, every element checked (the error names the one that is not a URL); a
 * second occurrence of the flag is appended to the first into o->url_list. */
static int set_urls(struct options *o, const struct flag *f, const char *v, FILE *err)
{
	const char **dst = (const char **)((char *)o + f->off);
	for (const char *s = v;; s++) {
		size_t n = strcspn(s, ",");
		if (!url_ok(s, n)) {
			char el[300];
			snprintf(el, sizeof(el), "%.*s", (int)(n < 299 ? n : 299), s);
			return bad_value(f, el, err);
		}
		s += n;
		if (!*s)
			break;
	}
	if (!*dst || *dst == f->def) { /* the default, or not set yet */
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

/* Check value v for flag f and store it into *o. 0, or -1 with the error written. */
static int set_value(struct options *o, const struct flag *f, const char *v, FILE *err)
{
	void *dst = (char *)o + f->off;
	double d;
	switch (f->type) {
	case T_URLS:
		return set_urls(o, f, v, err);
	case T_RURL:
	case T_URL:
		if (strncasecmp(v, "http://", 7) && strncasecmp(v, "https://", 8) &&
		    (f->type == T_URL || strncmp(v, "unix:/", 6)))
			return bad_value(f, v, err);
		/* fall through */
	case T_STRING:
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
		const struct flag *f = find_flag(a, eq ? (size_t)(eq - a) : strlen(a));
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
			int quote = g->type == T_STRING || g->type == T_URL || g->type == T_RURL || g->type == T_URLS;
			snprintf(def, sizeof(def), " (%sdefault %s%s%s)", range, quote ? "\"" : "", g->def, quote ? "\"" : "");
		}
		char choices[150] = "";
		if (g->type == T_ENUM)
			choices_text(g->choices, choices, sizeof(choices));
		fprintf(f, "  %-34s %s%s\n", left, g->help ? g->help : choices, def);
	}
	fprintf(f, "\nThe old exporter's -listen-address ADDR and -gpus-acct[=BOOL] are accepted too.\n");
}
