/* main.c: command line, start-up, signals. See `slurm-exporter-shim --help` and the man page. */
#include "buf.h"
#include "compare.h"
#include "cred.h"
#include "expo.h"
#include "fetch.h"
#include "log.h"
#include "mapping.h"
#include "nodeview.h"
#include "openmetrics.h"
#include "options.h"
#include "probe.h"
#include "slurmrestd_api.h"
#include "rules.h"
#include "scrape.h"
#include "sdlisten.h"
#include "server.h"
#include "version.h"
#include "webconfig.h"

#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* --check-mapping FILE...: every file checked, and the set as the daemon loads it (mapping.h's
 * mapping_load_set: two files of one stem, an unsafe stem). */
static int check_mapping(const struct options *opt)
{
	struct buf problems;
	buf_init(&problems, 0);
	struct mapping *set = mapping_load_set(opt->checks, opt->ncheck, &problems);
	if (!set) {
		fwrite(problems.data, 1, problems.len, stderr);
		buf_free(&problems);
		return 1;
	}
	for (const struct mapping *m = set; m; m = m->next) {
		size_t counts[3] = { 0 };
		for (size_t i = 0; i < m->nrows; i++)
			counts[row_native(&m->rows[i])->fidelity]++;
		printf("%s: OK, %zu rows (%zu exact, %zu approximate, %zu unavailable)\n", m->path, m->nrows, counts[0],
		       counts[1], counts[2]);
	}
	mapping_free(set);
	buf_free(&problems);
	return 0;
}

/* --version; with --mapping.file, each schema given: its name, file and rows by the best fidelity
 * their forms promise (mapping_fidelity_counts). 0, or 1 when a file is not valid (its problems on stderr). */
static int version(const struct options *opt)
{
	version_print(stdout);
	if (!opt->mappings_given)
		return 0;
	struct buf problems;
	buf_init(&problems, 0);
	struct mapping *set = mapping_load_set(opt->mappings, opt->nmapping, &problems);
	if (!set)
		fwrite(problems.data, 1, problems.len, stderr);
	for (const struct mapping *m = set; m; m = m->next) {
		size_t c[FID_COUNT];
		mapping_fidelity_counts(m, c);
		printf("  schema:           %s (%s%s): %zu rows, %zu exact, %zu approximate, %zu unavailable\n",
		       m->stem[0] ? m->stem : "(unnamed)", m->path, m == set ? ", at the metrics path" : "", m->nrows,
		       c[FID_EXACT], c[FID_APPROXIMATE], c[FID_UNAVAILABLE]);
	}
	mapping_free(set);
	buf_free(&problems);
	return set ? 0 : 1;
}

static int check_exposition(int strict, size_t max_body)
{
	struct buf in;
	char chunk[65536];
	size_t n;
	buf_init(&in, max_body);
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

/* Every --mapping.file, as one chain (mapping.h's mapping_load_set), or NULL with every problem logged. */
static struct mapping *load_mapping(const struct options *opt)
{
	struct buf problems;
	buf_init(&problems, 0);
	struct mapping *m = mapping_load_set(opt->mappings, opt->nmapping, &problems);
	if (!m)
		log_error_lines("mapping: ", problems.data, problems.len); /* every problem, each on its own line */
	buf_free(&problems);
	char why[200], safe[200];
	long n = m && opt->exclude ? mapping_exclude(m, opt->exclude, why, sizeof(why)) : 0;
	if (n < 0) {
		log_error("--mapping.exclude %s: %s", log_escape(safe, sizeof(safe), opt->exclude, strlen(opt->exclude)), why);
		mapping_free(m);
		return NULL;
	}
	if (m && opt->exclude)
		log_info("--mapping.exclude: %ld rows served by no schema", n);
	return m;
}

/* The schemas served: one scraper each, the first's cache shared (scraper_new_schema). */
struct schemas {
	struct scraper *s[MAPPING_SET_MAX];
	const char *stem[MAPPING_SET_MAX]; /* into names: a reload frees the tables, never the files' names */
	char names[MAPPING_SET_MAX][MAPPING_STEM_MAX];
	size_t listen[OPTIONS_LISTEN_MAX]; /* the schema each --web.listen-address serves */
	size_t n;
};

/* The index of schema NAME (flag names the flag it was given to), or -1 logged. */
static int schema_named(const struct mapping *m, const char *flag, const char *name)
{
	int i = mapping_schema_index(m, name, strlen(name));
	if (i < 0) {
		char safe[200];
		log_error("%s: no --mapping.file is named \"%s\" (a file's name without .json)", flag,
			  log_escape(safe, sizeof(safe), name, strlen(name)));
	}
	return i;
}

/* The scrapers of the schemas after the first (borrowing its cache) and the listeners' schemas.
 * 0, or -1 logged. */
static int schemas_init(struct schemas *sc, const struct options *opt, struct scraper *first, const struct mapping *m)
{
	memset(sc, 0, sizeof(*sc));
	sc->n = mapping_schema_count(m);
	for (size_t i = 0; i < sc->n; i++) {
		const struct mapping *one = mapping_schema(m, i);
		memcpy(sc->names[i], one->stem, sizeof(sc->names[i]));
		sc->stem[i] = sc->names[i];
		sc->s[i] = i ? scraper_new_schema(first, i) : first;
	}
	for (size_t i = 0; i < opt->nlisten; i++) {
		int k = opt->listen_schema[i] ? schema_named(m, "--web.listen-address", opt->listen_schema[i]) : 0;
		if (k < 0)
			return -1;
		sc->listen[i] = (size_t)k;
	}
	return 0;
}

static void schemas_free(struct schemas *sc)
{
	for (size_t i = 1; i < sc->n; i++) /* before the first, whose cache they borrow */
		scraper_free(sc->s[i]);
}

/* Serve until SIGTERM or SIGINT; SIGHUP reloads the mapping (and every probe target's). 0, or 1
 * when the server cannot start. probes: the --probe.targets-file clusters, or NULL. */
static int serve(const struct options *opt, const struct schemas *sc, struct probe_set *probes)
{
	struct webconfig *wc = NULL;
	struct server *srv = NULL;
	char err[512];
	int rc = 1, fds[SDLISTEN_MAX], nfds = 0;

	if (opt->web_config && webconfig_load(opt->web_config, &wc, err, sizeof(err)) < 0) {
		log_error("invalid web config: %s", err);
		goto out;
	}
	if (opt->systemd_socket && (nfds = sdlisten_fds(fds, SDLISTEN_MAX, err, sizeof(err))) < 0) {
		log_error("%s", err);
		goto out;
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
		.listen = opt->listens, .nlisten = opt->nlisten, .listen_fds = nfds > 0 ? fds : NULL,
		.nfds = nfds > 0 ? (size_t)nfds : 0, .path = opt->path, .max_connections = (unsigned)opt->max_conn,
		.per_ip_connections = (unsigned)(opt->max_conn > 8 ? opt->max_conn / 2 : opt->max_conn),
		.connection_timeout = (unsigned)opt->conn_timeout, .upstream_timeout = opt->timeout, .web = wc,
		.mapping_file = opt->mapping, .probes = probes, .native_passthrough = opt->native,
		.compression = opt->compression, .schemas = sc->s, .schema_stem = sc->stem, .nschemas = sc->n,
		.listen_schema = opt->systemd_socket ? NULL : sc->listen,
	};
	struct scraper *scraper = sc->s[0];
	srv = server_start(&srvc, scraper, err, sizeof(err));
	if (!srv) {
		log_error("%s", err);
		goto out;
	}
	char ctld[CRED_SHOWN_MAX], rest[CRED_SHOWN_MAX];
	log_info("listening on %s, path %s, slurmctld %s%s, slurmrestd %s, mapping %s%s", server_listening(srv), opt->path, opt->replay_dir ? "replay from " : "",
		 opt->replay_dir ? opt->replay_dir : cred_url_shown(ctld, sizeof(ctld), opt->url),
		 opt->rest_url ? cred_url_shown(rest, sizeof(rest), opt->rest_url) : "not used", opt->mapping,
		 sc->n > 1 ? " (and more schemas at /schemas/<name>/metrics)" : "");
	for (;;) {
		int sig;
		if (sigwait(&sigs, &sig) != 0)
			continue;
		if (sig == SIGHUP) {
			struct mapping *nm = load_mapping(opt);
			for (const struct mapping *one = nm; one; one = one->next)
				log_info("mapping reloaded from %s: %zu rows", one->path, one->nrows);
			if (!nm)
				log_error("mapping reload failed; keeping the running tables");
			scraper_set_mapping(scraper, nm);
			probe_set_reload(probes);
			continue;
		}
		log_info("signal %d: shutting down", sig);
		break;
	}
	rc = 0;
out:
	fetch_stop_all(); /* a fetch in flight (a /jobs may be given minutes) ends now, not at its timeout */
	server_stop(srv);
	webconfig_free(wc);
	return rc;
}

/* The row flags (enabled_by) the command line turns on. */
static unsigned row_flags(const struct options *opt)
{
	return (opt->gpus ? ROW_FLAG_GPUS_ACCT : 0u) | (opt->rest_jobs ? ROW_FLAG_REST_JOBS : 0u);
}

/* How long source id's answer is reused: by its upstream and its cost class (source.h's walks_jobs:
 * an answer that walks every job record has its own, longer, default). */
static double min_interval(const struct options *opt, enum source_id id)
{
	int rest = sources[id].upstream == UPSTREAM_SLURMRESTD;
	if (sources[id].walks_jobs)
		return rest ? opt->rest_jobs_min_interval : opt->jobs_min_interval;
	return rest ? opt->rest_min_interval : opt->min_interval;
}

/* The scraper configuration the flags give: the daemon's scraper (plus the passthrough) and the
 * targets' scrapers (with their own upstreams) start from it. */
static void scraper_config_init(struct scraper_config *sc, const struct options *opt)
{
	*sc = (struct scraper_config){
		.upstream[UPSTREAM_SLURMCTLD] = { .base_url = opt->url, .timeout = opt->timeout,
						  .max_body = (size_t)opt->max_body, .token_file = opt->token_file,
						  .user = opt->user },
		.upstream[UPSTREAM_SLURMRESTD] = { .base_url = opt->rest_url, .timeout = opt->rest_timeout,
						   .max_body = (size_t)opt->rest_max_body,
						   .token_file = opt->rest_token_file, .user = opt->rest_user,
						   .api_version = opt->rest_api_version },
		.replay_dir = opt->replay_dir,
		.flags = row_flags(opt),
		.load_margin = (double)opt->load_margin,
		.log_load = !opt->once && !opt->compare_legacy, /* --once prints what it always printed */
		.self_schemas = !opt->once && !opt->compare_legacy,
		/* /jobs is the full job RPC: only on request, whatever the rows read */
		.sources_off = opt->rest_jobs ? 0 : 1u << SRC_REST_JOBS,
		.max_output = 1u << 30, /* legacy families; a family that does not fit is left out whole */
		.max_held = (size_t)opt->max_held,
		.slow_fetch = opt->slow_fetch,
		/* only the daemon sends answers over HTTP: --once prints what it always printed */
		.compression = opt->compression && !opt->once && !opt->compare_legacy,
		/* /jobs costs slurmrestd seconds of CPU: its interval follows that (schedule.h); a one-shot
		 * mode fetches once */
		.cost_sources = opt->once || opt->compare_legacy ? 0 : source_of_upstream(UPSTREAM_SLURMRESTD),
		.cost = { .floor = opt->rest_jobs_min_interval, .max_share = (double)opt->rest_jobs_max_share / 100.0,
			  .max_backoff = opt->rest_jobs_max_backoff, .timeout = opt->rest_timeout,
			  .timeout_factor = SCHED_COST_TIMEOUT_FACTOR, .max_timeout = opt->rest_jobs_max_timeout },
		/* every other slurmrestd document: the share rule over --slurmrestd.min-interval, no back-off
		 * (max_backoff is the floor) and the upstream's timeout (max_timeout is it) */
		.cost_light = { .floor = opt->rest_min_interval, .max_share = (double)opt->rest_max_share / 100.0,
				.max_backoff = opt->rest_min_interval, .timeout = opt->rest_timeout,
				.max_timeout = opt->rest_timeout },
		/* a one-shot mode has no next scrape to serve a slurmrestd answer that comes late */
		.wait_rest = opt->once || opt->compare_legacy,
	};
	for (int id = 0; id < SRC_COUNT; id++)
		sc->min_interval[id] = opt->once ? 0 : min_interval(opt, (enum source_id)id);
}

/* --mapping.to-rules DIR: the first schema's files into DIR, every other's into DIR/<its name>. 0, or 1 logged. */
static int to_rules(const struct options *opt, const struct mapping *m)
{
	char err[512], dir[4096];
	for (size_t i = 0; m; m = m->next, i++) {
		if (i && (size_t)snprintf(dir, sizeof(dir), "%s/%s", opt->to_rules, m->stem) >= sizeof(dir)) {
			log_error("--mapping.to-rules: the directory name is too long");
			return 1;
		}
		if (rules_export(m, opt->url, opt->listen, row_flags(opt), i ? dir : opt->to_rules, err, sizeof(err)) < 0) {
			log_error("%s", err);
			return 1;
		}
	}
	return 0;
}

/* One scrape to stdout (stderr when it failed): 0, or 1 when it failed. */
static int once(const struct options *opt, struct scraper *scraper)
{
	struct buf out;
	buf_init(&out, 0);
	int status = scraper_run(scraper, opt->timeout, &out);
	if (status != 200 && log_min_level <= LOG_WARN) /* each failure was logged as it came: not twice */
		log_error("no slurmctld metrics endpoint answered usably (each failure is logged above)");
	else
		fwrite(out.data, 1, out.len, status == 200 ? stdout : stderr);
	buf_free(&out);
	return status == 200 ? 0 : 1;
}

/* --probe.targets-file, checked at start-up whatever the mode: NULL (not given) with *bad 0, a new
 * table, or NULL with *bad 1 and every problem logged. */
static struct probe_targets *load_targets(const char *path, int *bad)
{
	struct buf problems;
	struct probe_targets *t = NULL;
	*bad = 0;
	if (!path)
		return NULL;
	buf_init(&problems, 0);
	t = probe_targets_load(path, &problems);
	if (!t) {
		log_error_lines("targets: ", problems.data, problems.len);
		*bad = 1;
	}
	buf_free(&problems);
	return t;
}

/* The old exporter's page, fetched on a thread of its own while the shim scrapes. */
struct legacy_page {
	const char *url;
	double timeout;
	struct buf body;
	char err[512];
	int rc;
};

static void *get_legacy(void *arg)
{
	struct legacy_page *p = arg;
	p->rc = compare_get(p->url, p->timeout, &p->body, p->err, sizeof(p->err));
	return NULL;
}

/* Parse a whole page strictly into e, an initialised expo (both sides escape as Prometheus does). 0, or -1 logged. */
static int parse_page(struct expo *e, const struct buf *b, const char *what)
{
	if (!expo_parse(e, b->data ? b->data : "", b->len, EXPO_STRICT))
		return 0;
	log_error("%s: line %zu: %s", what, e->errors[0].line, e->errors[0].reason);
	return -1;
}

/* The schema --compare-legacy compares against: --compare-legacy.schema's, else the only one, else
 * the one the old exporter's page legacy speaks (compare_pick_schema; NULL: not parsed yet). *k set
 * (-1: not yet known, the page decides). 0, or -1 logged. */
static int compare_schema(const struct options *opt, const struct mapping *chain, const struct expo *legacy, int *k)
{
	char why[512];
	if (opt->compare_schema)
		*k = schema_named(chain, "--compare-legacy.schema", opt->compare_schema);
	else if (!chain->next)
		*k = 0;
	else if (legacy && (*k = compare_pick_schema(chain, legacy, why, sizeof(why))) < 0)
		log_error("--compare-legacy: cannot tell which schema the old exporter speaks (its family names shared with "
			  "each schema's row names, of the names of either: %s); name it with --compare-legacy.schema", why);
	else if (legacy)
		log_info("--compare-legacy: the old exporter speaks %s (its family names shared with each schema's row names, "
			 "of the names of either: %s)",
			 mapping_schema(chain, (size_t)*k)->stem, why);
	else
		*k = -1;
	return opt->compare_schema || legacy ? (*k < 0 ? -1 : 0) : 0;
}

/* --compare-legacy: the old exporter and one scrape of the shim at the same moment, compared: the
 * shim's answer as served, and its render's result record for the form each row was served with.
 * With several schemas and none named, the page is read first and says which schema to scrape.
 * 0 every exact family agrees, 1 one differs (or the shim could not scrape), 2 the old exporter's
 * page could not be read or its schema not told. chain borrows the scrapers' tables. */
static int compare_legacy(const struct options *opt, const struct schemas *sc, const struct mapping *chain)
{
	struct legacy_page page = { .url = opt->compare_legacy, .timeout = opt->timeout };
	struct buf shim, report;
	struct expo le, se;
	struct answer *a = NULL;
	pthread_t t;
	int rc = 2, k;
	if (compare_schema(opt, chain, NULL, &k) < 0)
		return 2;
	buf_init(&page.body, (size_t)opt->max_body);
	buf_init(&shim, 0);
	buf_init(&report, 0);
	expo_init(&le);
	expo_init(&se);
	int started = pthread_create(&t, NULL, get_legacy, &page) == 0;
	if (!started)
		get_legacy(&page);
	if (k >= 0)
		a = scraper_answer(sc->s[k], opt->timeout);
	if (started)
		pthread_join(t, NULL);
	if (page.rc < 0) {
		log_error("the old exporter cannot be read: %s", page.err);
		goto out;
	}
	char shown[CRED_SHOWN_MAX];
	if (parse_page(&le, &page.body, cred_url_shown(shown, sizeof(shown), opt->compare_legacy)) < 0)
		goto out;
	if (!compare_is_exporter_page(&le)) {
		log_error("the old exporter cannot be read: its answer is no exporter's page (%zu bytes, no sample)",
			  page.body.len);
		goto out;
	}
	if (k < 0 && compare_schema(opt, chain, &le, &k) < 0)
		goto out;
	if (!a)
		a = scraper_answer(sc->s[k], opt->timeout);
	if (a->status != 200)
		fwrite(a->body, 1, a->len, stderr); /* nothing of the shim's: every family the old exporter has differs */
	else
		buf_append(&shim, a->body, a->len);
	if (parse_page(&se, &shim, "the shim's own answer") < 0)
		goto out;
	/* several schemas: the report names the one compared (one schema: as it always was) */
	rc = compare_schema_families(mapping_schema(chain, (size_t)k), chain->next != NULL, row_flags(opt), &le, &se,
				     a->result, (enum compare_format)opt->compare_format, &report);
	fwrite(report.data, 1, report.len, stdout);
out:
	answer_unref(a);
	expo_free(&le);
	expo_free(&se);
	buf_free(&page.body);
	buf_free(&shim);
	buf_free(&report);
	return rc;
}

int main(int argc, char **argv)
{
	struct options opt; /* process-wide, read-only once parsed (options.h) */
	struct mapping *m = NULL;
	struct scraper *scraper = NULL;
	struct probe_targets *targets = NULL; /* until probe_set_new takes them */
	struct probe_set *probes = NULL;
	struct schemas schemas = { .n = 0 };
	int rc = 1, bad_targets;

	xmalloc_tune();
	if (options_parse(&opt, argc, argv, stderr) < 0)
		return 2;
	if (opt.help) {
		options_usage(stdout);
		return 0;
	}
	if (opt.version)
		return version(&opt);
	if (opt.rest_api_version && !slurmrestd_api_is_known(opt.rest_api_version)) {
		fprintf(stderr, "slurm-exporter-shim: flag --slurmrestd.api-version: value \"%.40s\" is not a version this shim reads (%s)\n",
			opt.rest_api_version, slurmrestd_api_known_text());
		return 2;
	}
	log_min_level = (enum log_level)opt.log_level;
	log_json = opt.log_format;
	fork_flags_warn(opt.fork_given, opt.nfork_given, opt.nfork_more);
	if (opt.check_mapping)
		return check_mapping(&opt);
	if (opt.check_expo)
		return check_exposition(opt.strict, (size_t)opt.max_body);

	targets = load_targets(opt.targets_file, &bad_targets);
	if (bad_targets)
		return 2;

	fetch_global_init();
	m = load_mapping(&opt);
	if (!m) {
		log_error("cannot start: the mapping file%s %s%s not valid%s", opt.nmapping > 1 ? "s" : "", opt.mapping,
			  opt.nmapping > 1 ? " (and the others given) are" : " is", opt.exclude ? ", or --mapping.exclude" : "");
		goto out;
	}
	if (opt.to_rules) {
		rc = to_rules(&opt, m);
		goto out;
	}
	int once_schema = opt.once_schema ? schema_named(m, "--once.schema", opt.once_schema) : 0;
	if (once_schema < 0)
		goto out;

	struct scraper_config sc;
	scraper_config_init(&sc, &opt);
	if (!opt.rest_url && !opt.once && !opt.compare_legacy && nodeview_table_has_guess(m, sc.flags))
		log_warn("without slurmrestd the per-node status labels are guessed from CPU counts (down, drained, "
			 "failed and maint nodes read idle, allocated or mixed); the fix: " NODEVIEW_FIX);
	const struct mapping *table = m; /* the scraper's from here on; no reload in the one-shot modes */
	struct scraper_config own = sc; /* the targets' scrapers serve no passthrough */
	if (opt.native && !opt.once && !opt.compare_legacy)
		own.keep_all = (1u << SRC_NATIVE_COUNT) - 1; /* /native/metrics/<endpoint> shares every fetch */
	scraper = scraper_new(&own, m);
	m = NULL;
	if (schemas_init(&schemas, &opt, scraper, table) < 0)
		goto out;
	if (opt.compare_legacy) {
		rc = compare_legacy(&opt, &schemas, table);
	} else if (opt.once) {
		rc = once(&opt, schemas.s[once_schema]);
	} else {
		if (targets) { /* the targets' scrapers: the global flags, each target's upstreams */
			probes = probe_set_new(targets, &sc, opt.mapping);
			targets = NULL;
			if (!probes)
				goto out;
		}
		rc = serve(&opt, &schemas, probes);
	}
out:
	probe_set_free(probes); /* after the server, which borrows it, has stopped */
	probe_targets_free(targets);
	schemas_free(&schemas);
	scraper_free(scraper);
	mapping_free(m);
	return rc;
}
