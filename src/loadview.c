/* loadview.c: see loadview.h. slurmrestd.c adds a node's samples in node order, one sample per node
 * in slurmrestd_node_cpus and _cpus_alloc, so a node of the load family is found by walking them. */
#include "loadview.h"
#include "buf.h"
#include "expo.h"
#include "labels.h"
#include "log.h"
#include "status_html.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static const char *const load_fams[] = {
	"slurmrestd_node_cpu_load", "slurmrestd_node_cpu_load_unknown", "slurmrestd_node_cpus",
	"slurmrestd_node_cpus_alloc", "slurmrestd_node_memory_free", "slurmrestd_node_job_user",
};

int loadview_has_input(const char *name, size_t len)
{
	for (size_t i = 0; i < sizeof(load_fams) / sizeof(load_fams[0]); i++)
		if (strlen(load_fams[i]) == len && !memcmp(name, load_fams[i], len))
			return 1;
	return 0;
}

static const struct expo_family *fam(const struct expo *e, const char *name)
{
	const struct expo_family *f = e ? expo_find(e, name, strlen(name)) : NULL;
	return f && !f->duplicate ? f : NULL;
}

/* A label's value, or "" (and *n 0) when the sample has none. */
static const char *label(const struct expo_sample *s, const char *name, size_t *n)
{
	int k = labels_find(s->labels, s->nlabels, name, strlen(name));
	*n = k < 0 ? 0 : s->labels[k].vlen;
	return k < 0 ? "" : s->labels[k].value;
}

static int same_node(const struct expo_sample *a, const struct expo_sample *b)
{
	size_t na, nb;
	const char *va = label(a, "node", &na), *vb = label(b, "node", &nb);
	return na == nb && !memcmp(va, vb, na);
}

/* Copy s[0..n) into out (cap bytes, NUL-terminated), cut at a UTF-8 character boundary. */
static void copy_cut(char *out, size_t cap, const char *s, size_t n)
{
	if (n >= cap) {
		n = cap - 1;
		while (n && ((unsigned char)s[n] & 0xC0) == 0x80)
			n--;
	}
	memcpy(out, s, n);
	out[n] = '\0';
}

static void copy_label(char *out, size_t cap, const struct expo_sample *s, const char *name)
{
	size_t n;
	const char *v = label(s, name, &n);
	copy_cut(out, cap, v, n);
}

/* Node s (of the load family) into over[], kept sorted by excess, largest first, the first
 * LOADVIEW_MAX of them. */
static void list_node(struct loadview *v, const struct expo_sample *s, double alloc, double cpus, double excess,
		      double margin)
{
	size_t n = v->nover++ < LOADVIEW_MAX ? v->nover - 1 : LOADVIEW_MAX;
	size_t at = n;
	while (at > 0 && v->over[at - 1].excess < excess)
		at--;
	if (at == LOADVIEW_MAX)
		return; /* not among the first */
	if (n == LOADVIEW_MAX)
		n--; /* the last one falls off */
	memmove(&v->over[at + 1], &v->over[at], (n - at) * sizeof(v->over[0]));
	struct loadview_node *o = &v->over[at];
	memset(o, 0, sizeof(*o));
	copy_label(o->node, sizeof(o->node), s, "node");
	copy_label(o->state, sizeof(o->state), s, "state");
	o->load = s->value;
	o->alloc = alloc;
	o->cpus = cpus;
	o->excess = excess;
	o->margin = margin;
	o->free_mem = NAN;
}

/* The free memory and the users of the listed nodes (at most LOADVIEW_MAX walks). */
static void fill_listed(struct loadview *v, const struct expo_family *mem, const struct expo_family *users)
{
	for (size_t i = 0; i < v->nover && i < LOADVIEW_MAX; i++) {
		struct loadview_node *o = &v->over[i];
		size_t len = strlen(o->node), n, used = 0;
		for (size_t k = 0; mem && k < mem->n; k++) {
			const char *name = label(&mem->samples[k], "node", &n);
			if (n == len && !memcmp(name, o->node, n)) {
				o->free_mem = mem->samples[k].value;
				break;
			}
		}
		for (size_t k = 0; users && k < users->n; k++) {
			const char *name = label(&users->samples[k], "node", &n);
			if (n != len || memcmp(name, o->node, n))
				continue;
			const char *u = label(&users->samples[k], "user", &n);
			if (used + n + 3 >= sizeof(o->users))
				break; /* cut at a whole name; the page says "..." */
			if (used)
				o->users[used++] = ',';
			memcpy(o->users + used, u, n);
			used += n;
			o->users[used] = '\0';
		}
	}
}

static void name_unknown(struct loadview *v, const struct expo_family *unknown)
{
	for (size_t k = 0; unknown && k < unknown->n; k++) {
		if (v->nunknown++ >= LOADVIEW_MAX)
			continue;
		struct loadview_unknown *u = &v->unknown[v->nunknown - 1];
		copy_label(u->node, sizeof(u->node), &unknown->samples[k], "node");
		copy_label(u->state, sizeof(u->state), &unknown->samples[k], "state");
		copy_label(u->why, sizeof(u->why), &unknown->samples[k], "why");
	}
}

void loadview_build(struct loadview *v, const struct expo *const ex[SRC_COUNT], double margin_pct)
{
	memset(v, 0, sizeof(*v));
	v->margin_pct = margin_pct;
	const struct expo *e = ex[SRC_REST_NODES];
	const struct expo_family *load = fam(e, "slurmrestd_node_cpu_load"), *cpus = fam(e, "slurmrestd_node_cpus"),
				 *alloc = fam(e, "slurmrestd_node_cpus_alloc"),
				 *unknown = fam(e, "slurmrestd_node_cpu_load_unknown");
	if (!cpus || !alloc || cpus->n != alloc->n || (!load && !unknown))
		return;
	v->read = 1;
	const struct expo_family *users = fam(ex[SRC_REST_JOBS], "slurmrestd_node_job_user");
	v->has_users = users != NULL;
	v->jobs_read = ex[SRC_REST_JOBS] != NULL;
	size_t c = 0;
	for (size_t k = 0; load && k < load->n; k++) {
		const struct expo_sample *s = &load->samples[k];
		while (c < cpus->n && !same_node(&cpus->samples[c], s))
			c++;
		if (c == cpus->n)
			break; /* not in node order: never with slurmrestd.c's families */
		double n = cpus->samples[c].value, a = alloc->samples[c].value, x = s->value - a;
		double margin = fmax(1, margin_pct / 100 * n);
		v->nloaded++;
		if (x > margin)
			list_node(v, s, a, n, x, margin);
	}
	fill_listed(v, fam(e, "slurmrestd_node_memory_free"), users);
	name_unknown(v, unknown);
}

uint64_t loadview_unknown_hash(const struct loadview *v)
{
	uint64_t h = v->nunknown ? 1469598103934665603ull : 0;
	for (size_t i = 0; i < v->nunknown && i < LOADVIEW_MAX; i++)
		for (const char *p = v->unknown[i].node; *p; p++)
			h = (h ^ (unsigned char)*p) * 1099511628211ull;
	for (size_t i = 0; i < v->nunknown && i < LOADVIEW_MAX; i++)
		for (const char *p = v->unknown[i].why; *p; p++)
			h = (h ^ (unsigned char)*p) * 1099511628211ull;
	return h ^ v->nunknown;
}

void loadview_log_unknown(const struct loadview *v)
{
	struct buf b;
	buf_init(&b, 0);
	for (size_t i = 0; i < v->nunknown && i < LOADVIEW_MAX; i++)
		buf_printf(&b, "%s%s (%s, %s)", i ? "; " : "", v->unknown[i].node, v->unknown[i].state, v->unknown[i].why);
	if (v->nunknown > LOADVIEW_MAX)
		buf_printf(&b, "; and %zu more", v->nunknown - LOADVIEW_MAX);
	char safe[4096];
	log_warn("load unknown on %zu node%s, left out of slurmrestd_node_cpu_load and the status page's load table: %s",
		 v->nunknown, v->nunknown == 1 ? "" : "s", log_escape(safe, sizeof(safe), b.data ? b.data : "", b.len));
	buf_free(&b);
}

static void esc(struct buf *out, const char *s)
{
	status_html_escape(out, s, strlen(s));
}

static void write_over(struct buf *out, const struct loadview *v, int guess, double age)
{
	buf_puts(out, "<table id=\"load\">\n<tr><th>Node</th><th>State</th><th>Load</th><th>Allocated CPUs</th>"
		      "<th>CPUs</th><th>Excess</th><th>Free memory</th><th>Users of its jobs</th><th>Why</th></tr>\n");
	for (size_t i = 0; i < v->nover && i < LOADVIEW_MAX; i++) {
		const struct loadview_node *o = &v->over[i];
		buf_puts(out, "<tr><td class=\"fam\">");
		esc(out, o->node);
		buf_puts(out, "</td><td>");
		esc(out, o->state);
		buf_printf(out, "</td><td class=\"num down\">%.2f%s</td><td class=\"num\">%.0f</td><td class=\"num\">%.0f</td>"
			   "<td class=\"num\">%+.2f</td><td class=\"num\">", o->load, guess ? " (guess)" : "", o->alloc,
			   o->cpus, o->excess);
		if (isnan(o->free_mem))
			buf_puts(out, "not reported");
		else
			buf_printf(out, "%.0f MiB", o->free_mem);
		buf_puts(out, "</td><td>");
		if (!v->has_users)
			buf_puts(out, "<span class=\"off\">not known</span>");
		else
			esc(out, o->users[0] ? o->users : "none");
		buf_printf(out, "</td><td>%s (margin %.2f)</td></tr>\n",
			   o->alloc > 0 ? "load beyond its allocation" : "load with no allocation", o->margin);
	}
	buf_puts(out, "</table>\n");
	if (v->nover > LOADVIEW_MAX)
		buf_printf(out, "<p>and %zu more (the %d with the largest excess are listed).</p>\n", v->nover - LOADVIEW_MAX,
			   LOADVIEW_MAX);
	if (guess)
		buf_printf(out, "<p class=\"wrap\">Guess: these loads are from slurmrestd's answer of %.0f s ago, older than "
			   "a minute.</p>\n", age);
}

static void write_unknown(struct buf *out, const struct loadview *v)
{
	if (!v->nunknown)
		return;
	buf_printf(out, "<h3>Nodes whose load is unknown: %zu</h3>\n<p>Left out of the table above and of "
		      "slurmrestd_node_cpu_load (never shown as a load of 0).</p>\n<table id=\"load-unknown\">\n"
		      "<tr><th>Node</th><th>State</th><th>Why</th></tr>\n", v->nunknown);
	for (size_t i = 0; i < v->nunknown && i < LOADVIEW_MAX; i++) {
		buf_puts(out, "<tr><td class=\"fam\">");
		esc(out, v->unknown[i].node);
		buf_puts(out, "</td><td>");
		esc(out, v->unknown[i].state);
		buf_puts(out, "</td><td class=\"err\">");
		esc(out, v->unknown[i].why);
		buf_puts(out, "</td></tr>\n");
	}
	buf_puts(out, "</table>\n");
	if (v->nunknown > LOADVIEW_MAX)
		buf_printf(out, "<p>and %zu more.</p>\n", v->nunknown - LOADVIEW_MAX);
}

void loadview_page(struct buf *out, const struct loadview *v, double age)
{
	buf_printf(out, "<h3 id=\"load-head\">Nodes loaded beyond their allocation: %zu</h3>\n", v->read ? v->nover : 0);
	if (!v->read) {
		buf_puts(out, "<p class=\"off\">No load: slurmrestd's /nodes was not read this scrape (it needs "
			      "--slurmrestd.url and a schema that reads /nodes, e.g. mappings/slurm-node-load.json).</p>\n");
		return;
	}
	int guess = age > LOADVIEW_STALE_S;
	buf_printf(out, "<p>The load is the 1-minute load average slurmd last reported to slurmctld (sinfo's "
			"CPU_LOAD), from slurmrestd's /nodes answer of %.0f s ago. Listed: a load above the node's allocated "
			"CPUs by more than max(1, %.0f%% of its CPUs) (--status.load-margin), a node with no allocation "
			"included; largest excess first. %zu nodes have a load.</p>\n", age < 0 ? 0 : age, v->margin_pct,
		   v->nloaded);
	if (!v->has_users)
		buf_puts(out, v->jobs_read ? "<p class=\"off\">Users of the nodes' jobs: not known (slurmrestd's /jobs "
					     "was read, but without the jobs' nodes).</p>\n"
					   : "<p class=\"off\">Users of the nodes' jobs: slurmrestd's /jobs was not read "
					     "(--slurmrestd.jobs).</p>\n");
	if (v->nover)
		write_over(out, v, guess, age);
	else
		buf_puts(out, "<p>None: no node's load exceeds its allocation by more than its margin.</p>\n");
	write_unknown(out, v);
}
