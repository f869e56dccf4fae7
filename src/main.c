/* main.c: command line, start-up, signals. See `slurm-exporter-shim --help` and the man page. */
#include "buf.h"
#include "expo.h"
#include "fetch.h"
#include "log.h"
#include "mapping.h"
#include "openmetrics.h"
#include "rules.h"
#include "scrape.h"
#include "server.h"
#include "webconfig.h"

#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#define DEFAULT_MAPPING SHIM_SYSCONFDIR "/slurm-exporter-shim/prometheus-slurm-exporter.json"

struct options {
	const char *listen, *path, *web_config, *url, *token_file, *user, *mapping, *to_rules, *log_level;
	const char *replay_dir, *check_mapping;
	double timeout, min_interval, conn_timeout;
	double max_conn, max_body;
	int gpus, once, check_expo, strict, version, help;
};

enum kind { O_STR, O_NUM, O_BOOL };

static struct options opt = {
	.listen = ":9341", .path = "/metrics", .url = "http://localhost:6817", .mapping = DEFAULT_MAPPING,
	.log_level = "info", .timeout = 10, .min_interval = 5, .conn_timeout = 30, .max_conn = 64,
	.max_body = 268435456,
};

/* One row per flag: the table drives parsing and --help alike. */
static const struct flag {
	const char *name, *alias, *arg, *help;
	enum kind kind;
	void *dst;
} flags[] = {
	{ "web.listen-address", "listen-address", "ADDR", "address to serve on (default \":9341\")", O_STR, &opt.listen },
	{ "web.telemetry-path", NULL, "PATH", "path of the metrics (default \"/metrics\")", O_STR, &opt.path },
	{ "web.config.file", NULL, "FILE", "TLS and basic auth config (Prometheus exporter-toolkit format)", O_STR, &opt.web_config },
	{ "web.max-connections", NULL, "N", "simultaneous HTTP connections (default 64)", O_NUM, &opt.max_conn },
	{ "web.connection-timeout", NULL, "SECONDS", "idle HTTP connection timeout (default 30)", O_NUM, &opt.conn_timeout },
	{ "slurmctld.url", NULL, "URL", "base URL of slurmctld's HTTP listener (default \"http://localhost:6817\")", O_STR, &opt.url },
	{ "slurmctld.timeout", NULL, "SECONDS", "per-request timeout to slurmctld (default 10)", O_NUM, &opt.timeout },
	{ "slurmctld.min-interval", NULL, "SECONDS", "reuse an upstream answer this long (default 5)", O_NUM, &opt.min_interval },
	{ "slurmctld.max-body", NULL, "BYTES", "largest upstream body accepted (default 268435456)", O_NUM, &opt.max_body },
	{ "slurmctld.auth.token-file", NULL, "FILE", "JWT sent as X-SLURM-USER-TOKEN (Slurm 26.05), re-read every fetch", O_STR, &opt.token_file },
	{ "slurmctld.auth.user", NULL, "NAME", "user name sent as X-SLURM-USER-NAME", O_STR, &opt.user },
	{ "mapping.file", NULL, "FILE", "mapping table (default " DEFAULT_MAPPING ")", O_STR, &opt.mapping },
	{ "mapping.to-rules", NULL, "DIR", "write DIR/rules.yml and DIR/scrape.yml for Prometheus, then exit", O_STR, &opt.to_rules },
	{ "gpus-acct", NULL, NULL, "serve the legacy GPU families (old exporter: -gpus-acct)", O_BOOL, &opt.gpus },
	{ "log.level", NULL, "LEVEL", "debug, info, warn or error (default info)", O_STR, &opt.log_level },
	{ "once", NULL, NULL, "scrape once, print to stdout, exit (1 when every endpoint failed)", O_BOOL, &opt.once },
	{ "replay-dir", NULL, "DIR", "read DIR/metrics_<endpoint>.txt instead of fetching over HTTP", O_STR, &opt.replay_dir },
	{ "check-mapping", NULL, "FILE", "check a mapping file: print every problem, exit 1 if any", O_STR, &opt.check_mapping },
	{ "check-exposition", NULL, NULL, "parse one exposition from stdin: exit 0 if valid, else 1 with the first error", O_BOOL, &opt.check_expo },
	{ "strict", NULL, NULL, "with --check-exposition: the strict OpenMetrics grammar", O_BOOL, &opt.strict },
	{ "version", NULL, NULL, "print the version and exit", O_BOOL, &opt.version },
	{ "help", "h", NULL, "print this help and exit", O_BOOL, &opt.help },
};
#define NFLAGS (sizeof(flags) / sizeof(flags[0]))

static void usage(FILE *f)
{
	fprintf(f, "usage: slurm-exporter-shim [flags]\n\n"
		   "Serves the old prometheus-slurm-exporter's metrics, computed from slurmctld's native metrics.\n\nFlags:\n");
	for (size_t i = 0; i < NFLAGS; i++) {
		char left[64];
		int short_alias = flags[i].alias && strlen(flags[i].alias) == 1; /* -h: shown; the long legacy ones below */
		snprintf(left, sizeof(left), "--%s%s%s%s%s", flags[i].name, flags[i].arg ? " " : "", flags[i].arg ? flags[i].arg : "",
			 short_alias ? ", -" : "", short_alias ? flags[i].alias : "");
		fprintf(f, "  %-34s %s\n", left, flags[i].help);
	}
	fprintf(f, "\nThe old exporter's -listen-address ADDR and -gpus-acct[=BOOL] are accepted too.\n");
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

/* Go-flag style: -name, --name, with "=value" or the next argument as the value. */
static int parse_args(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (a[0] != '-' || !a[1]) {
			fprintf(stderr, "slurm-exporter-shim: unexpected argument \"%s\"\n", a);
			return -1;
		}
		a += a[1] == '-' ? 2 : 1;
		const char *eq = strchr(a, '=');
		size_t n = eq ? (size_t)(eq - a) : strlen(a);
		const struct flag *f = NULL;
		for (size_t k = 0; k < NFLAGS && !f; k++)
			if ((strlen(flags[k].name) == n && !strncmp(flags[k].name, a, n)) ||
			    (flags[k].alias && strlen(flags[k].alias) == n && !strncmp(flags[k].alias, a, n)))
				f = &flags[k];
		if (!f) {
			fprintf(stderr, "slurm-exporter-shim: unknown flag \"%s\" (see --help)\n", argv[i]);
			return -1;
		}
		if (f->kind == O_BOOL) {
			int *dst = f->dst;
			if (!eq)
				*dst = 1;
			else if (parse_bool(eq + 1, dst) < 0) {
				fprintf(stderr, "slurm-exporter-shim: --%s wants true or false, not \"%s\"\n", f->name, eq + 1);
				return -1;
			}
			continue;
		}
		const char *v = eq ? eq + 1 : (i + 1 < argc ? argv[++i] : NULL);
		if (!v) {
			fprintf(stderr, "slurm-exporter-shim: --%s needs a value\n", f->name);
			return -1;
		}
		if (f->kind == O_STR) {
			*(const char **)f->dst = v;
		} else {
			char *end;
			errno = 0;
			double d = strtod(v, &end);
			if (errno || end == v || *end || d < 0 || d != d) {
				fprintf(stderr, "slurm-exporter-shim: --%s wants a non-negative number, not \"%s\"\n", f->name, v);
				return -1;
			}
			*(double *)f->dst = d;
		}
	}
	return 0;
}

/* Values parse_args accepts but the daemon cannot use. */
static int check_values(void)
{
	const char *u = opt.url;
	/* 0 would make libmicrohttpd refuse every connection */
	if (opt.max_conn < 1 || opt.max_conn > 65535) {
		fprintf(stderr, "slurm-exporter-shim: --web.max-connections wants a number from 1 to 65535, not %g\n", opt.max_conn);
		return -1;
	}
	/* libmicrohttpd counts whole seconds and takes 0 as "never": an idle client would hold a slot forever */
	if (opt.conn_timeout < 1 || opt.conn_timeout > 86400) {
		fprintf(stderr, "slurm-exporter-shim: --web.connection-timeout wants a number of seconds from 1 to 86400, not %g\n",
			opt.conn_timeout);
		return -1;
	}
	/* 0 used to become a 1 ms timeout: every fetch failed */
	if (opt.timeout < 0.001 || opt.timeout > 86400) {
		fprintf(stderr, "slurm-exporter-shim: --slurmctld.timeout wants a number of seconds from 0.001 to 86400, not %g\n",
			opt.timeout);
		return -1;
	}
	/* without a scheme curl would guess, and "ctl1:6817" reads as scheme "ctl1" */
	if (strncasecmp(u, "http://", 7) && strncasecmp(u, "https://", 8)) {
		char safe[200];
		fprintf(stderr, "slurm-exporter-shim: --slurmctld.url wants an http:// or https:// URL, not \"%s\"\n",
			log_escape(safe, sizeof(safe), u, strlen(u)));
		return -1;
	}
	return 0;
}

static int check_mapping(const char *path)
{
	struct buf problems;
	buf_init(&problems, 0);
	struct mapping *m = mapping_load(path, &problems);
	if (!m) {
		fwrite(problems.data, 1, problems.len, stderr);
		buf_free(&problems);
		return 1;
	}
	size_t counts[3] = { 0 };
	for (size_t i = 0; i < m->nrows; i++)
		counts[m->rows[i].fidelity]++;
	printf("%s: OK, %zu rows (%zu exact, %zu approximate, %zu unavailable)\n", path, m->nrows, counts[0], counts[1], counts[2]);
	mapping_free(m);
	buf_free(&problems);
	return 0;
}

static int check_exposition(int strict)
{
	struct buf in;
	char chunk[65536];
	size_t n;
	buf_init(&in, (size_t)opt.max_body);
	while ((n = fread(chunk, 1, sizeof(chunk), stdin)) > 0)
		if (buf_append(&in, chunk, n) < 0) {
			fprintf(stderr, "input larger than %zu bytes\n", in.max);
			buf_free(&in);
			return 1;
		}
	if (strict) { /* OpenMetrics 1.0, as the specification defines it */
		char reason[200], safe[400];
		size_t line = 0;
		int bad = om_validate(in.data, in.len, &line, reason, sizeof(reason)) < 0;
		if (bad)
			printf("line %zu: %s\n", line, log_escape(safe, sizeof(safe), reason, strlen(reason)));
		else
			printf("ok: valid OpenMetrics 1.0\n");
		buf_free(&in);
		return bad;
	}
	struct expo e;
	expo_init(&e);
	size_t errors = expo_parse(&e, in.data ? in.data : "", in.len, 0);
	int rc = 0;
	if (errors) {
		char safe[200];
		printf("line %zu: %s\n", e.errors[0].line, log_escape(safe, sizeof(safe), e.errors[0].reason, strlen(e.errors[0].reason)));
		rc = 1;
	} else {
		printf("ok: %zu families, %zu samples\n", e.nfams, e.nsamples);
	}
	expo_free(&e);
	buf_free(&in);
	return rc;
}

static struct mapping *load_mapping(const char *path)
{
	struct buf problems;
	buf_init(&problems, 0);
	struct mapping *m = mapping_load(path, &problems);
	if (!m) {
		/* every problem, each on its own log line */
		char *line = problems.data;
		for (size_t i = 0; problems.data && i < problems.len; i++)
			if (problems.data[i] == '\n') {
				problems.data[i] = '\0';
				log_error("mapping: %s", line);
				line = problems.data + i + 1;
			}
	}
	buf_free(&problems);
	return m;
}

int main(int argc, char **argv)
{
	enum log_level lvl;
	int rc = 1;
	struct mapping *m = NULL;
	struct webconfig *wc = NULL;
	struct server *srv = NULL;
	struct scraper *scraper = NULL;

	xmalloc_tune();
	if (parse_args(argc, argv) < 0)
		return 2;
	if (opt.help) {
		usage(stdout);
		return 0;
	}
	if (opt.version) {
		printf("slurm-exporter-shim %s\n", SHIM_VERSION);
		return 0;
	}
	if (log_parse_level(opt.log_level, &lvl) < 0) {
		fprintf(stderr, "slurm-exporter-shim: unknown log level \"%s\"\n", opt.log_level);
		return 2;
	}
	if (check_values() < 0)
		return 2;
	log_min_level = lvl;
	if (opt.check_mapping)
		return check_mapping(opt.check_mapping);
	if (opt.check_expo)
		return check_exposition(opt.strict);

	fetch_global_init();
	m = load_mapping(opt.mapping);
	if (!m) {
		log_error("cannot start: the mapping file %s is not valid", opt.mapping);
		goto out;
	}
	if (opt.to_rules) {
		char err[512];
		rc = rules_export(m, opt.url, opt.gpus ? "gpus-acct" : "", opt.to_rules, err, sizeof(err)) < 0 ? 1 : 0;
		if (rc)
			log_error("%s", err);
		goto out;
	}

	struct scraper_config sc = {
		.upstream[UPSTREAM_SLURMCTLD] = { .base_url = opt.url, .timeout = opt.timeout,
						  .max_body = (size_t)opt.max_body, .token_file = opt.token_file,
						  .user = opt.user },
		.replay_dir = opt.replay_dir,
		.flags = opt.gpus ? "gpus-acct" : "",
		.max_output = 1u << 30, /* legacy families; a family that does not fit is left out whole */
	};
	for (int id = 0; id < SRC_COUNT; id++)
		sc.min_interval[id] = opt.once ? 0 : opt.min_interval;
	scraper = scraper_new(&sc, m);
	m = NULL;

	if (opt.once) {
		struct buf out;
		buf_init(&out, 0);
		int status = scrape_run(scraper, opt.timeout, &out);
		fwrite(out.data, 1, out.len, status == 200 ? stdout : stderr);
		buf_free(&out);
		rc = status == 200 ? 0 : 1;
		goto out;
	}

	if (opt.web_config) {
		char err[512];
		if (webconfig_load(opt.web_config, &wc, err, sizeof(err)) < 0) {
			log_error("invalid web config: %s", err);
			goto out;
		}
	}
	/* Block the signals we handle before any thread starts, then wait for them here. */
	sigset_t sigs;
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGHUP);
	sigaddset(&sigs, SIGTERM);
	sigaddset(&sigs, SIGINT);
	pthread_sigmask(SIG_BLOCK, &sigs, NULL);
	signal(SIGPIPE, SIG_IGN);

	struct server_config srvc = {
		.listen = opt.listen, .path = opt.path, .max_connections = (unsigned)opt.max_conn,
		.per_ip_connections = (unsigned)(opt.max_conn > 8 ? opt.max_conn / 2 : opt.max_conn),
		.connection_timeout = (unsigned)opt.conn_timeout, .upstream_timeout = opt.timeout, .web = wc,
	};
	char err[512];
	srv = server_start(&srvc, scraper, err, sizeof(err));
	if (!srv) {
		log_error("%s", err);
		goto out;
	}
	log_info("listening on %s (port %u), path %s, slurmctld %s%s, mapping %s", opt.listen, server_port(srv), opt.path,
		 opt.replay_dir ? "replay from " : "", opt.replay_dir ? opt.replay_dir : opt.url, opt.mapping);
	for (;;) {
		int sig;
		if (sigwait(&sigs, &sig) != 0)
			continue;
		if (sig == SIGHUP) {
			struct mapping *nm = load_mapping(opt.mapping);
			if (nm)
				log_info("mapping reloaded from %s: %zu rows", opt.mapping, nm->nrows);
			else
				log_error("mapping reload failed; keeping the running table");
			scrape_set_mapping(scraper, nm);
			continue;
		}
		log_info("signal %d: shutting down", sig);
		break;
	}
	rc = 0;
out:
	server_stop(srv);
	scraper_free(scraper);
	mapping_free(m);
	webconfig_free(wc);
	return rc;
}
