/* rules.c: see rules.h.
 *
 * A row's expression means the same in Prometheus as in the shim only if three differences of a
 * direct scrape are undone (docs/recording-rules.md):
 *  - Prometheus adds job and instance to every scraped series, and PromQL matches the operands of a
 *    binary operator on their whole label sets. The shim's native series have neither label, so
 *    `slurm_nodes_draining - max(...)` matches there and would match nothing in Prometheus. Every
 *    selector is therefore read as `sum without (job, instance) (selector)`.
 *  - Native families named like a legacy family would sit next to the rule's result. Every legacy
 *    name is renamed at scrape time to native_<name> (scrape.yml), and the rules read that name.
 *  - The five endpoints are scraped independently. The shim leaves a family out when an endpoint
 *    it reads failed; a rule would compute from what is left (an `or` would fall back to its other
 *    side). Each rule is therefore gated on the `up` of the scrape jobs it reads. */
#include "rules.h"
#include "buf.h"
#include "cred.h"
#include "mapping.h"
#include "native.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* The scrape job of endpoint ep is JOB_PREFIX + sources[ep].name. */
#define JOB_PREFIX "slurmctld-"

/* 1 if a row of the table (enabled or not, available or not) has this name (through the table's
 * index: comparing with every row made --mapping.to-rules quadratic; docs/performance.md). */
static int is_legacy_name(const struct mapping *m, const char *name)
{
	return mapping_row_index(m, name) >= 0;
}

/* expr_print's selector hook: the selector without target labels, under the name scrape.yml
 * stores it by. */
static void print_selector(const struct expr *sel, struct buf *b, void *ctx)
{
	const struct mapping *m = ctx;
	const char *name = expr_selector_metric(sel);
	buf_printf(b, "sum without (job, instance) (%s%s", is_legacy_name(m, name) ? RULES_NATIVE_PREFIX : "", name);
	expr_print_matchers(sel, b);
	buf_putc(b, ')');
}

/* The row's expression with target labels stripped from every selector (a scalar expression
 * becomes vector(...), as the shim serves it). Returns a new string. */
static char *row_base_expr(const struct mapping *m, const struct row *r)
{
	struct buf out;
	const struct expr_print_hooks hooks = { print_selector, (void *)m };
	buf_init(&out, 0);
	const struct expr *x = row_native(r)->expr;
	if (expr_is_scalar(x))
		buf_puts(&out, "vector(");
	expr_print(x, &out, &hooks);
	if (expr_is_scalar(x))
		buf_putc(&out, ')');
	return buf_steal(&out, NULL);
}

/* `label_replace(v, "dst", "replacement", "src", "regex")`; a literal replacement has its '$' doubled. */
static void put_label_replace(struct buf *b, const char *v, const char *dst, const char *repl, int literal,
			      const char *src, const char *re)
{
	buf_printf(b, "label_replace(%s, ", v);
	expr_print_str(b, dst, 0);
	buf_puts(b, ", ");
	expr_print_str(b, repl, literal);
	buf_puts(b, ", ");
	expr_print_str(b, src, 0);
	buf_puts(b, ", ");
	expr_print_str(b, re, 0);
	buf_putc(b, ')');
}

/* rename_labels: copy each native label to its legacy name, then drop the native one. */
static char *apply_renames(const struct row *r, char *cur)
{
	for (size_t i = 0; i < r->nrenames; i++) {
		struct buf e;
		buf_init(&e, 0);
		buf_printf(&e, "sum without (%s) (", r->renames[i].key);
		put_label_replace(&e, cur, r->renames[i].value, "$1", 0, r->renames[i].key, "(.+)");
		buf_putc(&e, ')');
		free(cur);
		cur = buf_steal(&e, NULL);
	}
	return cur;
}

/* fill_labels: a series whose label is absent or empty gets the value (regex "" is anchored). */
static char *apply_fills(const struct row *r, char *cur)
{
	for (size_t i = 0; i < r->nfills; i++) {
		struct buf e;
		buf_init(&e, 0);
		put_label_replace(&e, cur, r->fills[i].key, r->fills[i].value, 1, r->fills[i].key, "");
		free(cur);
		cur = buf_steal(&e, NULL);
	}
	return cur;
}

/* `count(up{job=~"slurmctld-(a|b)"} == 1) == N`: every endpoint the row reads answered its last
 * scrape. Empty when the row reads no native family. */
static void up_gate(const struct row *r, struct buf *b)
{
	int n = 0;
	for (int ep = 0; ep < SRC_COUNT; ep++)
		if (row_native(r)->sources & (1u << ep))
			buf_printf(b, "%s%s", n++ ? "|" : "count(up{job=~\"" JOB_PREFIX "(", sources[ep].name);
	if (n)
		buf_printf(b, ")\"} == 1) == %d", n);
}

/* The PromQL of one row (after renames, fills, drop_zero, default, and the gate on the `up` of the
 * scrape jobs it reads, so a failed endpoint leaves the family out as the shim does), into b. */
static void rules_row_expr(const struct mapping *m, const struct row *r, struct buf *b)
{
	char *cur = apply_fills(r, apply_renames(r, row_base_expr(m, r)));
	struct buf gate;
	buf_init(&gate, 0);
	up_gate(r, &gate);
	if (gate.len)
		buf_putc(b, '(');
	/* the stripped selectors leave no job/instance; this keeps the result free of them whatever
	 * the expression does */
	buf_printf(b, "sum without (job, instance) (%s)", cur);
	if (r->drop_zero)
		buf_puts(b, " != 0");
	if (r->has_default) {
		char num[64];
		snprintf(num, sizeof(num), "%.17g", r->defval);
		buf_printf(b, " or vector(%s)", num);
	}
	if (gate.len) {
		buf_putc(&gate, '\0');
		buf_printf(b, ") and on () (%s)", gate.data);
	}
	buf_free(&gate);
	free(cur);
}

/* A YAML double-quoted scalar. */
static void yaml_str(struct buf *b, const char *s)
{
	buf_putc(b, '"');
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '"' || c == '\\')
			buf_putc(b, '\\');
		if (c < 0x20)
			buf_printf(b, "\\x%02x", c);
		else
			buf_putc(b, (char)c);
	}
	buf_putc(b, '"');
}

/* Write all of [data, data + n) to fd. 0, or -1 with errno set. */
static int write_all(int fd, const char *data, size_t n)
{
	while (n) {
		ssize_t w = write(fd, data, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		data += w;
		n -= (size_t)w;
	}
	return 0;
}

/* A new file in dir for writing, under a name no one can have chosen: dir/.<name>.<16 random hex
 * digits>, created with O_CREAT|O_EXCL|O_NOFOLLOW (an existing file or a symlink planted under that
 * name is never opened: the next name is tried), mode 0644 less the umask. Its name into tmp. The
 * fd, or -1 with errno set. */
static int open_temp(const char *dir, const char *name, char *tmp, size_t tmplen)
{
	for (int attempt = 0; attempt < 100; attempt++) {
		uint64_t r = 0;
		if (getrandom(&r, sizeof(r), 0) != (ssize_t)sizeof(r))
			r ^= (uint64_t)getpid() << 32 ^ (uint64_t)attempt ^ (uint64_t)time(NULL); /* (never seen on Linux) */
		snprintf(tmp, tmplen, "%s/.%s.%016llx", dir, name, (unsigned long long)r);
		int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
		if (fd >= 0 || errno != EEXIST)
			return fd;
	}
	errno = EEXIST;
	return -1;
}

/* Write b to dir/name: into a new temporary file of dir (open_temp), then renamed over name, so a
 * reader sees the old file or the new one, never half of one. Nothing already in dir is opened,
 * followed or removed (rename replaces a symlink at dir/name itself, not what it points at). */
static int write_file(const char *dir, const char *name, const struct buf *b, char *err, size_t errlen)
{
	char path[4096], tmp[4200];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	int fd = open_temp(dir, name, tmp, sizeof(tmp));
	if (fd < 0) {
		snprintf(err, errlen, "cannot create a temporary file for %s: %s", path, strerror(errno));
		return -1;
	}
	int bad = write_all(fd, b->data, b->len) < 0;
	int saved = errno;
	if (close(fd) < 0 && !bad) {
		bad = 1;
		saved = errno;
	}
	if (bad) {
		snprintf(err, errlen, "cannot write %s: %s", tmp, strerror(saved));
		unlink(tmp);
		return -1;
	}
	if (rename(tmp, path) < 0) {
		snprintf(err, errlen, "cannot rename %s to %s: %s", tmp, path, strerror(errno));
		unlink(tmp);
		return -1;
	}
	return 0;
}

static void rules_file(const struct mapping *m, unsigned flags, struct buf *out)
{
	buf_printf(out, "# Generated by slurm-exporter-shim %s from %s.\n"
			"# Legacy prometheus-slurm-exporter families as recording rules over slurmctld's native metrics.\n"
			"# Scrape with scrape.yml (the shim's passthrough) or scrape-direct.yml (slurmctld): both\n"
			"# rename native families named like legacy ones to\n"
			"# " RULES_NATIVE_PREFIX "*, and each rule needs the `up` of the " JOB_PREFIX
			"* jobs it reads. See docs/recording-rules.md.\n",
		   SHIM_VERSION, m->path);
	for (size_t i = 0; i < m->nrows; i++)
		if (!row_native(&m->rows[i])->expr)
			buf_printf(out, "# %s: unavailable, no native source (%s)\n", m->rows[i].name,
				   row_native(&m->rows[i])->note ? row_native(&m->rows[i])->note : "");
		else if (row_native(&m->rows[i])->reads_record)
			buf_printf(out, "# %s: not exported, it reads the shim's record of a scrape (" MAPPING_RECORD_PREFIX
					"*), which Prometheus does not have\n", m->rows[i].name);
	buf_puts(out, "groups:\n  - name: slurm-exporter-shim-legacy\n    rules:\n");
	for (size_t i = 0; i < m->nrows; i++) {
		const struct row *r = &m->rows[i];
		if (!row_native(r)->expr || row_native(r)->reads_record || !row_is_enabled(r, flags))
			continue;
		struct buf e;
		buf_init(&e, 0);
		rules_row_expr(m, r, &e);
		buf_putc(&e, '\0');
		buf_printf(out, "      - record: %s\n        expr: ", r->name);
		yaml_str(out, e.data);
		buf_putc(out, '\n');
		buf_free(&e);
	}
}

/* The regex of every legacy name: "(a|b|...)". */
static void legacy_regex(const struct mapping *m, struct buf *b)
{
	buf_putc(b, '(');
	for (size_t i = 0; i < m->nrows; i++)
		buf_printf(b, "%s%s", i ? "|" : "", m->rows[i].name);
	buf_putc(b, ')');
	buf_putc(b, '\0');
}

/* scheme, host:port and path prefix of the slurmctld URL, as the shim fetches it (base URL without
 * trailing slashes, then /metrics/<endpoint>). */
static void split_url(const char *url, const char **scheme, char *host, size_t hostlen, char *prefix, size_t prefixlen)
{
	const char *hostport = url;
	*scheme = "http";
	if (strncmp(url, "https://", 8) == 0) {
		*scheme = "https";
		hostport = url + 8;
	} else if (strncmp(url, "http://", 7) == 0) {
		hostport = url + 7;
	}
	const char *at = strrchr(hostport, '@'); /* userinfo is no part of a target (cred.h: its last "@") */
	if (at)
		hostport = at + 1;
	size_t hl = strcspn(hostport, "/?#");
	snprintf(host, hostlen, "%.*s", (int)hl, hostport);
	const char *path = hostport + hl;
	size_t pl = *path == '/' ? strcspn(path, "?#") : 0;
	while (pl && path[pl - 1] == '/')
		pl--;
	snprintf(prefix, prefixlen, "%.*s", (int)pl, path);
}

/* Where Prometheus scrapes the native families: the shim's passthrough or slurmctld itself. */
struct scrape_target {
	const char *scheme;
	char host[1024];      /* host:port */
	char prefix[1024];    /* path prefix (slurmctld's URL); "" for the shim */
	int shim;             /* metrics_path /native/metrics/<endpoint>, else <prefix>/metrics/<endpoint> */
};

/* The shim's own address from --web.listen-address: ":9341", "0.0.0.0:9341" and "[::]:9341" listen
 * everywhere, which is no address to scrape: localhost then (docs: edit it when Prometheus runs
 * elsewhere). */
static void shim_target(const char *listen, struct scrape_target *t)
{
	const char *colon = strrchr(listen, ':');
	size_t hl = colon ? (size_t)(colon - listen) : 0;
	t->scheme = "http";
	t->prefix[0] = '\0';
	t->shim = 1;
	if (!colon || !hl || (hl == 7 && !strncmp(listen, "0.0.0.0", 7)) || (hl == 4 && !strncmp(listen, "[::]", 4)))
		snprintf(t->host, sizeof(t->host), "localhost%s", colon ? colon : ":9341");
	else
		snprintf(t->host, sizeof(t->host), "%s", listen);
}

static void scrape_file(const struct mapping *m, const struct scrape_target *t, const char *from, unsigned flags,
			struct buf *out)
{
	struct buf re;
	unsigned eps = mapping_sources(m, flags, 0); /* native forms only: Prometheus scrapes slurmctld */

	buf_init(&re, 0);
	legacy_regex(m, &re);
	buf_printf(out, "# Generated by slurm-exporter-shim %s: scrape_configs for slurmctld's native endpoints %s %s.\n",
		   SHIM_VERSION, t->shim ? "through the shim's passthrough at" : "at", from);
	if (t->shim)
		buf_puts(out, "# The shim serves them re-escaped (a quote or backslash in a name does not fail the scrape)\n"
			      "# and fetches each endpoint once for this and its own /metrics. For direct scraping of\n"
			      "# slurmctld, see scrape-direct.yml.\n");
	buf_puts(out, "# Only the endpoints the exported rules read are scraped (/metrics/partitions takes\n"
		      "# slurmctld's node write lock). Native families named like legacy ones are renamed to\n"
		      "# " RULES_NATIVE_PREFIX "* so the legacy names hold only the recording rules' results (rules.yml).\n"
		      "# Paste the list below under your scrape_configs, keeping the job names: the rules read them.\n"
		      "scrape_configs:\n");
	for (int ep = 0; ep < SRC_COUNT; ep++) {
		if (!(eps & (1u << ep)))
			continue;
		buf_printf(out, "  - job_name: " JOB_PREFIX "%s\n    scheme: %s\n    metrics_path: ", sources[ep].name, t->scheme);
		if (t->shim)
			buf_printf(out, NATIVE_PATH_PREFIX "%s", sources[ep].name);
		else
			buf_printf(out, "%s%s", t->prefix, sources[ep].path);
		buf_puts(out, "\n    static_configs:\n      - targets: [");
		yaml_str(out, t->host);
		buf_puts(out, "]\n    metric_relabel_configs:\n      - source_labels: [__name__]\n        regex: ");
		yaml_str(out, re.data);
		buf_puts(out, "\n        target_label: __name__\n        replacement: \"" RULES_NATIVE_PREFIX "${1}\"\n");
	}
	buf_free(&re);
}

int rules_export(const struct mapping *m, const char *url, const char *listen, unsigned flags, const char *dir,
		 char *err, size_t errlen)
{
	struct buf rules, scrape, direct;
	struct scrape_target shim, ctld = { .shim = 0 };
	int rc = -1;

	if (mkdir(dir, 0755) < 0 && errno != EEXIST) {
		snprintf(err, errlen, "cannot create %s: %s", dir, strerror(errno));
		return -1;
	}
	buf_init(&rules, 0);
	buf_init(&scrape, 0);
	buf_init(&direct, 0);
	rules_file(m, flags, &rules);
	shim_target(listen, &shim);
	scrape_file(m, &shim, shim.host, flags, &scrape);
	/* several controllers (--slurmctld.url a, b): Prometheus scrapes the first and follows a
	 * standby's 303 to the primary itself (follow_redirects is on by default); a dead first
	 * controller is what only the shim's scrape.yml rides out */
	char first[2048], shown[CRED_SHOWN_MAX];
	snprintf(first, sizeof(first), "%.*s", (int)strcspn(url, ","), url);
	cred_url_shown(shown, sizeof(shown), first);
	if (strcmp(shown, first))
		buf_puts(&direct, "# --slurmctld.url holds a user and password: they are not copied into this file; give\n"
				  "# each job below basic_auth (or authorization) for them.\n");
	if (strchr(url, ','))
		buf_puts(&direct, "# --slurmctld.url lists several controllers: this file scrapes the first, and Prometheus\n"
				  "# follows a standby's 303 to the primary, but a first controller that is down fails the\n"
				  "# scrape. scrape.yml, through the shim, reads whichever controller is primary.\n");
	split_url(first, &ctld.scheme, ctld.host, sizeof(ctld.host), ctld.prefix, sizeof(ctld.prefix));
	scrape_file(m, &ctld, shown, flags, &direct);
	if (write_file(dir, "rules.yml", &rules, err, errlen) == 0 && write_file(dir, "scrape.yml", &scrape, err, errlen) == 0 &&
	    write_file(dir, "scrape-direct.yml", &direct, err, errlen) == 0)
		rc = 0;
	buf_free(&rules);
	buf_free(&scrape);
	buf_free(&direct);
	return rc;
}
