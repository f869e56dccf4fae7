/* test_nodeview.c: the status page's node view (src/nodeview.c) and its page (src/status.c) on the
 * real captures and at 50,000 nodes: on R4 with slurmrestd the not-OK nodes are n2 maint, n4 fail
 * and n5 drained* with the reasons, users and times scontrol shows, sinfo -s sums them 1/3/1/5, the
 * partitions and the queue are sinfo's and squeue's; on 03 without slurmrestd the states are
 * slurmctld's counters and the source says guess; at 50,000 nodes (more states, not-OK nodes and
 * partitions than listed, hostile 1,000-byte reasons, every slot of the families left out and of
 * those served approximate for a counter that may have wrapped full, and both lists of the native
 * catalog's differences: 100 names of 127 bytes HTML escapes) the counts stay right, the
 * lists stop at their bounds, a cut reason is still valid UTF-8, and the page stays under STATUS_PAGE_MAX,
 * also with the most schemas, each with its lists full;
 * at 70,000 nodes without slurmrestd the counters that may have wrapped at 65,536 are marked; and a
 * page from a record whose every string is hostile is all escaped and valid UTF-8. The page reads
 * a result record (render.h) as the last answer holds it: page_record makes one by hand. */
#include "testutil.h"

#include <math.h>

#include "expo.h"
#include "nodeview.h"
#include "render.h"
#include "scrape.h"
#include "slurmrestd.h"
#include "status.h"
#include "utf8.h"

#define R4 "tests/fixtures/slurm-25.11-rest/R4-downdrain-fail-maint-reserved/"

/* A result record as a render leaves it (render.h), for the page: a table of nrows rows named
 * name (each with one form whose wraps_at reads bound), and the node view v; and the page's view
 * of it (scraper_status), as the last answer of a scraper with nothing configured. */
struct page_record {
	struct mapping m;
	struct row_form form;
	struct row_wrap wrap;
	struct render_result res;
	struct scraper_status st;
};

static struct page_record *page_record_new(size_t nrows, const char *name, const char *bound, struct nodeview *v)
{
	struct page_record *r = xcalloc(1, sizeof(*r));
	r->wrap = (struct row_wrap){ .bound_src = (char *)bound, .limit = 65536 };
	r->form = (struct row_form){ .fidelity = FID_EXACT, .wrap = &r->wrap };
	r->m.nrows = nrows;
	r->m.rows = xcalloc(nrows + 1, sizeof(*r->m.rows));
	for (size_t i = 0; i < nrows; i++)
		r->m.rows[i] = (struct row){ .name = (char *)name, .forms = &r->form, .nforms = 1 };
	r->res = (struct render_result){ .status = 200, .m = &r->m, .nrows = nrows, .nodes = v,
					 .rows = xcalloc(nrows + 1, sizeof(*r->res.rows)), .has_clock = 1, .at = 100 };
	r->st = (struct scraper_status){ .res = &r->res, .now = 101, .age = 1 };
	return r;
}

static void page_record_free(struct page_record *r)
{
	free(r->m.rows);
	free(r->res.rows);
	free(r);
}

/* A page is safe: no tag from data, valid UTF-8. */
static void assert_page_safe(const char *page, size_t len)
{
	assert_true(utf8_is_valid(page, len));
	assert_int_equal(strlen(page), len); /* no NUL */
	assert_null(strstr(page, "<script"));
}
#define S03 "tests/fixtures/slurm-25.11/03-drain-down-cancel/"

struct input {
	struct expo e[SRC_COUNT];
	char *body[SRC_COUNT];   /* expo_parse borrows the text */
	const struct expo *ex[SRC_COUNT];
};

static void load_native(struct input *in, enum source_id id, const char *path)
{
	size_t len;
	in->body[id] = tu_slurp(path, &len);
	assert_non_null(in->body[id]);
	expo_init(&in->e[id]);
	assert_int_equal(expo_parse(&in->e[id], in->body[id], len, 0), 0);
	in->ex[id] = &in->e[id];
}

static void load_rest(struct input *in, const char *path)
{
	size_t len;
	char *text = tu_slurp(path, &len);
	assert_non_null(text);
	struct expo *e = &in->e[SRC_REST_NODES];
	expo_init(e);
	void *st = rest_begin_nodes(e);
	rest_feed(st, e, text, len);
	assert_int_equal(rest_end(st, e), 0);
	free(text);
	in->ex[SRC_REST_NODES] = e;
}

static void input_free(struct input *in)
{
	for (int id = 0; id < SRC_COUNT; id++) {
		if (in->ex[id])
			expo_free(&in->e[id]);
		free(in->body[id]);
	}
}

static void load_native_all(struct input *in, const char *dir)
{
	char path[256];
	snprintf(path, sizeof(path), "%smetrics_nodes.txt", dir);
	load_native(in, SRC_NODES, path);
	snprintf(path, sizeof(path), "%smetrics_partitions.txt", dir);
	load_native(in, SRC_PARTITIONS, path);
	snprintf(path, sizeof(path), "%smetrics_jobs-users-accts.txt", dir);
	load_native(in, SRC_UA, path);
}

static const struct nodeview_part *find_part(const struct nodeview *v, const char *name)
{
	for (size_t i = 0; i < v->nparts; i++)
		if (!strcmp(v->part[i].name, name))
			return &v->part[i];
	fail_msg("no partition %s", name);
	return NULL;
}

static double state_count(const struct nodeview *v, const char *name)
{
	for (size_t i = 0; i < v->nstates; i++)
		if (!strcmp(v->state[i].name, name))
			return v->state[i].n;
	return 0;
}

/* context_sinfo_Nel.txt and context_scontrol_nodes.txt of R4; the legacy exporter's queue. */
static void test_r4_with_slurmrestd(void **state)
{
	(void)state;
	struct input in = { 0 };
	load_native_all(&in, R4);
	load_rest(&in, R4 "rest_nodes.json");
	struct nodeview *v = xmalloc(sizeof(*v));
	nodeview_build(v, in.ex);
	assert_int_equal(v->source, NV_SRC_SLURMRESTD);
	assert_true(v->nodes == 5);
	assert_true(v->a == 1 && v->i == 3 && v->o == 1); /* n3 mixed; n1 resv, n2 maint, n4 fail; n5 drained* */
	assert_int_equal(v->nbad, 3);
	assert_string_equal(v->bad[0].node, "n2");
	assert_string_equal(v->bad[0].state, "maint");
	assert_string_equal(v->bad[0].reason, "");
	assert_string_equal(v->bad[1].node, "n4");
	assert_string_equal(v->bad[1].state, "fail");
	assert_string_equal(v->bad[1].reason, "R3 fail busy n4");
	assert_string_equal(v->bad[1].user, "root");
	assert_true(v->bad[1].since == 1796121752); /* 2026-12-01T10:42:32 */
	assert_string_equal(v->bad[2].node, "n5");
	assert_string_equal(v->bad[2].state, "drained*");
	assert_string_equal(v->bad[2].reason, "R4 down+drain n5");
	assert_true(v->bad[2].since == 1796121854);
	assert_true(state_count(v, "drained*") == 1 && state_count(v, "reserved") == 1);
	assert_int_equal(v->nparts, 4);
	const struct nodeview_part *p = find_part(v, "batch");
	assert_true(p->nodes == 5 && p->cpus == 52 && p->cpus_alloc == 8 && p->a == 1 && p->i == 3 && p->o == 1);
	p = find_part(v, "hidden"); /* n5 only */
	assert_true(p->nodes == 1 && p->a == 0 && p->i == 0 && p->o == 1);
	assert_true(v->has_queue);
	assert_true(v->queue[NV_Q_pending] == 12 && v->queue[NV_Q_running] == 2); /* slurm_queue_pending 12 */
	free(v);
	input_free(&in);
}

/* 03 without slurmrestd: metrics_nodes.txt's counters, flags beside base states. */
static void test_03_native_only(void **state)
{
	(void)state;
	struct input in = { 0 };
	load_native_all(&in, S03);
	struct nodeview *v = xmalloc(sizeof(*v));
	nodeview_build(v, in.ex);
	assert_int_equal(v->source, NV_SRC_GUESS);
	assert_true(v->nodes == 4);
	assert_true(state_count(v, "down") == 1 && state_count(v, "draining") == 1);
	assert_true(state_count(v, "alloc") == 2 && state_count(v, "mixed") == 1);
	assert_true(state_count(v, "idle") == 0); /* zero counters are not listed */
	assert_int_equal(v->nbad, 0);
	assert_true(isnan(v->a));
	assert_true(isnan(find_part(v, "batch")->a));
	free(v);
	input_free(&in);
	/* no usable source at all */
	const struct expo *none[SRC_COUNT] = { 0 };
	struct nodeview *w = xmalloc(sizeof(*w));
	nodeview_build(w, none);
	assert_int_equal(w->source, NV_SRC_NONE);
	assert_true(isnan(w->nodes) && !w->nparts && !w->has_queue);
	free(w);
}

static void add_sample(struct expo *e, const char *fam, const char *const *kv, uint32_t n, double v)
{
	struct label l[4];
	for (uint32_t i = 0; i < n; i++)
		l[i] = (struct label){ kv[2 * i], kv[2 * i + 1], (uint32_t)strlen(kv[2 * i]), (uint32_t)strlen(kv[2 * i + 1]) };
	expo_add(e, fam, strlen(fam), l, n, v);
}

#define BIG_NODES 50000
#define BIG_WORDS 40      /* distinct state words: more than NODEVIEW_STATES_MAX */
#define BIG_PARTS 100     /* more than NODEVIEW_PARTS_MAX */

/* 50,000 nodes as slurmrestd.c adds them (node order), every fourth drained with a 1,000-byte
 * reason of characters HTML escapes and multi-byte ones; the page over that view and 96 left-out
 * families with hostile names is bounded. */
static void test_50000_nodes_bounded(void **state)
{
	(void)state;
	struct expo *e = xmalloc(sizeof(*e));
	expo_init(e);
	char reason[1001];
	for (int i = 0; i < 1000; i += 2)
		memcpy(reason + i, i % 4 ? "<&" : "\xc3\xa9", 2); /* "é" */
	reason[1000] = '\0';
	for (int i = 0; i < BIG_NODES; i++) {
		char node[80], st[32], part[32]; /* node names of 63 bytes, most of them escaped 5-fold */
		snprintf(node, sizeof(node), "node%05d%.54s", i, "&&&&&&&&&&&&&&&&&&&&&&&&&&&&&&&&&&&&&&&&&&&&&&&&&&&&&&&&&&&&");
		if (i % 4 == 0)
			snprintf(st, sizeof(st), "drained");
		else if (i % 4 == 1)
			snprintf(st, sizeof(st), "mixed");
		else
			snprintf(st, sizeof(st), "idle%c%d", "~*"[i % 2], (i / 4) % BIG_WORDS); /* idle~3...: not OK */
		const char *s[] = { "node", node, "state", st };
		add_sample(e, "slurmrestd_node_state", s, 2, 1);
		snprintf(part, sizeof(part), "part%03d", i % BIG_PARTS);
		const char *p[] = { "node", node, "partition", part };
		add_sample(e, "slurmrestd_node_partition", p, 2, 1);
		if (i % 4 == 0) {
			const char *r[] = { "node", node, "reason", reason, "user", "root" };
			add_sample(e, "slurmrestd_node_reason_info", r, 3, 1796121752);
		}
	}
	expo_add_end(e);
	struct expo *parts = xmalloc(sizeof(*parts)); /* /metrics/partitions: each partition once */
	expo_init(parts);
	for (int i = 0; i < BIG_PARTS; i++) {
		char part[32];
		snprintf(part, sizeof(part), "part%03d", i);
		const char *p[] = { "partition", part };
		add_sample(parts, "slurm_partition_nodes", p, 1, BIG_NODES / BIG_PARTS);
	}
	expo_add_end(parts);
	const struct expo *ex[SRC_COUNT] = { [SRC_REST_NODES] = e, [SRC_PARTITIONS] = parts };
	struct nodeview *v = xcalloc(1, sizeof(*v));
	nodeview_build(v, ex);
	assert_true(v->nodes == BIG_NODES);
	assert_true(v->a == BIG_NODES / 4 && v->o == BIG_NODES / 4 && v->i == BIG_NODES / 2);
	assert_int_equal(v->nbad, BIG_NODES / 4 + BIG_NODES / 2); /* drained, idle~ and idle* */
	assert_true(!strncmp(v->bad[0].node, "node00000&&", 11) && strlen(v->bad[0].node) == 63);
	assert_true(!strncmp(v->bad[1].node, "node00002&", 10));
	assert_true(!strncmp(v->bad[NODEVIEW_BAD_MAX - 1].node, "node00066&", 10)); /* 16 groups of 3, then 2 */
	assert_string_equal(v->bad[NODEVIEW_BAD_MAX - 1].state, "idle~16");
	assert_true(strlen(v->bad[0].reason) < sizeof(v->bad[0].reason) && strlen(v->bad[0].reason) > 190);
	assert_true(utf8_is_valid(v->bad[0].reason, strlen(v->bad[0].reason)));
	assert_string_equal(v->bad[1].reason, ""); /* node00002 has none: not node00004's */
	assert_int_equal(v->nstates, NODEVIEW_STATES_MAX);
	double listed = 0;
	for (size_t i = 0; i < v->nstates; i++)
		listed += v->state[i].n;
	assert_true(listed + v->states_more == BIG_NODES && v->states_more > 0);
	assert_int_equal(v->nparts, NODEVIEW_PARTS_MAX);
	assert_int_equal(v->parts_more, BIG_PARTS - NODEVIEW_PARTS_MAX);
	assert_true(v->part[0].a + v->part[0].i + v->part[0].o == BIG_NODES / BIG_PARTS);
	assert_true(v->part[0].nodes == BIG_NODES / BIG_PARTS);
	/* the page: this view, 5,000 families left out with an error and 5,000 served approximate for a
	   counter that may have wrapped, names and reasons full of characters HTML escapes */
	char name[96], err[160], bound[200];
	memset(name, '"', sizeof(name) - 1);
	name[sizeof(name) - 1] = '\0';
	memset(bound, '<', sizeof(bound) - 1);
	bound[sizeof(bound) - 1] = '\0';
	struct page_record *pr = page_record_new(10000, name, bound, v);
	memset(err, '<', sizeof(err) - 1);
	err[sizeof(err) - 1] = '\0';
	for (size_t i = 0; i < 10000; i++) {
		struct render_row *o = &pr->res.rows[i];
		o->status = i % 2 ? ROW_ERROR : ROW_OK;
		o->wrap = i % 2 ? WRAP_NONE : WRAP_REACHED;
		o->bound = 1e300;
		memcpy(o->err, err, sizeof(err));
	}
	pr->m.nreleases = 1; /* and both lists of the native catalog's differences full (catalog.h) */
	struct catalog_diff *d = &pr->res.catalog;
	d->compared = 1;
	memset(d->release, '&', MAPPING_RELEASE_MAX);
	for (int k = 0; k < CATALOG_KIND_COUNT; k++) {
		d->n[k] = 5000;
		for (size_t i = 0; i < CATALOG_LISTED_MAX; i++)
			memset(d->fam[k][i].name, '"', CATALOG_NAME_MAX - 1);
	}
	struct status_page_info info = { .version = "0", .metrics_path = "/metrics", .mapping_file = "/etc/m.json", .now = 1796121752, .native_passthrough = 1 };
	struct buf b;
	buf_init(&b, 0);
	status_page(&b, &info, &pr->st);
	buf_putc(&b, '\0');
	if (b.len > STATUS_PAGE_MAX)
		fail_msg("the page is %zu bytes, over STATUS_PAGE_MAX %u", b.len, STATUS_PAGE_MAX);
	assert_non_null(strstr(b.data, "Nodes not OK: 37500"));
	assert_non_null(strstr(b.data, "and 37450 more"));
	assert_non_null(strstr(b.data, "as <code>sinfo -s</code> sums them: 12500/25000/12500/50000"));
	assert_non_null(strstr(b.data, "and 36 more partitions"));
	assert_non_null(strstr(b.data, "and 4904 more (see slurm_exporter_shim_row_fidelity{reason!=&quot;&quot;})"));
	assert_non_null(strstr(b.data, "and 4904 more (see slurm_exporter_shim_family_left_out)"));
	assert_non_null(strstr(b.data, "and 4950 more unknown (see slurm_exporter_shim_native_catalog_differences)"));
	assert_non_null(strstr(b.data, "node00066"));
	assert_null(strstr(b.data, "node00067")); /* the 51st not-OK node */
	print_message("status page at %d nodes: %zu bytes (bound %u)\n", BIG_NODES, b.len, STATUS_PAGE_MAX);
	buf_free(&b);
	/* the most schemas (MAPPING_SET_MAX), each with both lists of families full, the longest stem and
	   a path of 255 characters HTML escapes: every schema's rows shown, the page still bounded */
	struct page_record *sch[MAPPING_SET_MAX];
	const struct scraper_status *sts[MAPPING_SET_MAX] = { 0 };
	const char *stems[MAPPING_SET_MAX];
	char path[256];
	memset(path, '&', sizeof(path) - 1);
	path[sizeof(path) - 1] = '\0';
	sch[0] = pr;
	for (size_t k = 0; k < MAPPING_SET_MAX; k++) {
		if (k) {
			sch[k] = page_record_new(10000, name, bound, v);
			memcpy(sch[k]->res.rows, pr->res.rows, 10000 * sizeof(*pr->res.rows));
			sch[k - 1]->m.next = &sch[k]->m;
			sts[k] = &sch[k]->st;
		}
		memset(sch[k]->m.stem, (int)('a' + k), MAPPING_STEM_MAX - 1);
		sch[k]->m.path = path;
		stems[k] = sch[k]->m.stem;
	}
	pr->st.schemas = &pr->m;
	info.schema_stem = stems;
	info.nschemas = MAPPING_SET_MAX;
	info.schema_st = sts;
	buf_init(&b, 0);
	status_page(&b, &info, &pr->st);
	buf_putc(&b, '\0');
	if (b.len > STATUS_PAGE_MAX)
		fail_msg("the page with %d schemas is %zu bytes, over STATUS_PAGE_MAX %u", MAPPING_SET_MAX, b.len, STATUS_PAGE_MAX);
	for (size_t k = 0; k < MAPPING_SET_MAX; k++) {
		char want[MAPPING_STEM_MAX + 64];
		snprintf(want, sizeof(want), "Rows: schema <code>%s</code></h2>", sch[k]->m.stem);
		assert_non_null(strstr(b.data, want));
	}
	assert_non_null(strstr(b.data, "and 4904 more (see slurm_exporter_shim_family_left_out)")); /* the first's */
	assert_non_null(strstr(b.data, "and 4995 more (see slurm_exporter_shim_family_left_out)")); /* the others': 40 / 7 */
	print_message("status page at %d nodes and %d schemas: %zu bytes (bound %u)\n", BIG_NODES, MAPPING_SET_MAX,
		      b.len, STATUS_PAGE_MAX);
	buf_free(&b);
	for (size_t k = 1; k < MAPPING_SET_MAX; k++)
		page_record_free(sch[k]);
	page_record_free(pr);
	free(v);
	expo_free(e);
	free(e);
	expo_free(parts);
	free(parts);
}

/* 70,000 nodes without slurmrestd, one partition of 140,000 CPUs, as slurmctld serves them: the
 * node count from the per-node series is whole, the 16-bit counters are modulo 65,536 (4,464 nodes,
 * 8,928 CPUs). The page marks each counter that may have wrapped and says why; the same view below
 * the limit (03) marks nothing. */
static void test_70000_nodes_counters_marked(void **state)
{
	(void)state;
	enum { NODES = 70000, CPUS = 2 * NODES };
	struct expo *nodes = xmalloc(sizeof(*nodes)), *parts = xmalloc(sizeof(*parts));
	expo_init(nodes);
	expo_init(parts);
	for (int i = 0; i < NODES; i++) {
		char node[16];
		snprintf(node, sizeof(node), "n%05d", i);
		const char *l[] = { "node", node };
		add_sample(nodes, "slurm_node_cpus", l, 1, 2);
	}
	add_sample(nodes, "slurm_nodes", NULL, 0, NODES % 65536);
	add_sample(nodes, "slurm_nodes_idle", NULL, 0, NODES % 65536);
	expo_add_end(nodes);
	const char *p[] = { "partition", "all" };
	add_sample(parts, "slurm_partition_nodes", p, 1, NODES % 65536);
	add_sample(parts, "slurm_partition_cpus", p, 1, CPUS);
	add_sample(parts, "slurm_partition_nodes_cpus_alloc", p, 1, 0);
	add_sample(parts, "slurm_partition_nodes_cpus_idle", p, 1, CPUS % 65536);
	expo_add_end(parts);
	const struct expo *ex[SRC_COUNT] = { [SRC_NODES] = nodes, [SRC_PARTITIONS] = parts };
	struct nodeview *v = xcalloc(1, sizeof(*v));
	nodeview_build(v, ex);
	assert_true(v->nodes == NODES);
	assert_true(v->counts_may_wrap && v->part[0].cpus_may_wrap);
	struct page_record *pr = page_record_new(0, "", "", v);
	struct status_page_info info = { .version = "0", .metrics_path = "/metrics", .mapping_file = "/etc/m.json", .now = 1796121752, .native_passthrough = 1 };
	struct buf b;
	buf_init(&b, 0);
	status_page(&b, &info, &pr->st);
	buf_putc(&b, '\0');
	assert_non_null(strstr(b.data, "<td>idle</td><td class=\"n wrap\">4464*</td>"));
	assert_non_null(strstr(b.data, "id=\"wrap-node-counters\""));
	assert_non_null(strstr(b.data, "id=\"wrap-partition-nodes\""));
	assert_non_null(strstr(b.data, "<td class=\"n\">140000</td><td class=\"n wrap\">0*</td><td class=\"n wrap\">8928*</td>"));
	assert_non_null(strstr(b.data, "id=\"wrap-partition-cpus\""));
	buf_free(&b);
	/* below the limit: nothing marked */
	struct input in = { 0 };
	load_native_all(&in, S03);
	nodeview_build(v, in.ex);
	assert_false(v->counts_may_wrap || v->part[0].cpus_may_wrap);
	buf_init(&b, 0);
	status_page(&b, &info, &pr->st);
	buf_putc(&b, '\0');
	assert_null(strstr(b.data, "class=\"n wrap\""));
	assert_null(strstr(b.data, "<p class=\"wrap\""));
	buf_free(&b);
	input_free(&in);
	page_record_free(pr);
	free(v);
	expo_free(nodes);
	expo_free(parts);
	free(nodes);
	free(parts);
}

/* status_page on a record whose every string is hostile: all escaped, the page valid UTF-8. */
static void test_status_page_render(void **state)
{
	(void)state;
	static const char hostile[] = "<script>alert(1)</script>&\"x\xff";
	struct scraper_status none = { 0 };
	struct status_page_info info = { .version = "0.test", .metrics_path = "/metrics\"><script>", .mapping_file = hostile, .now = 1800000000, .native_passthrough = 1 };
	struct buf b;
	buf_init(&b, 0);
	status_page(&b, &info, &none); /* no scrape yet */
	buf_putc(&b, '\0');
	assert_non_null(strstr(b.data, "No scrape has happened yet"));
	assert_non_null(strstr(b.data, "<a href=\"/metrics&quot;&gt;&lt;script&gt;\">"));
	assert_page_safe(b.data, b.len - 1);
	buf_free(&b);

	/* 7 rows served (5 exact, 2 approximate), 2 left out with their input down, and 97 for an error:
	   3 more than the page lists */
	struct page_record *pr = page_record_new(7 + 2 + 97, hostile, hostile, NULL);
	pr->st.reload_ok = 1;
	pr->st.configured = (1u << SRC_NATIVE_COUNT) - 1;
	for (size_t i = 0; i < pr->res.nrows; i++) {
		struct render_row *o = &pr->res.rows[i];
		o->status = i < 7 ? ROW_OK : i < 9 ? ROW_INPUT_DOWN : ROW_ERROR;
		o->fidelity = i < 5 ? FID_EXACT : FID_APPROXIMATE;
		snprintf(o->err, sizeof(o->err), "%s", hostile);
	}
	for (int id = 0; id < SRC_NATIVE_COUNT; id++) {
		struct render_source *o = &pr->res.src[id];
		o->given = o->up = 1;
		o->http_status = 200;
	}
	pr->res.src[SRC_NODES].up = 0;
	pr->res.src[SRC_NODES].http_status = 500;
	snprintf(pr->res.src[SRC_NODES].reason, sizeof(pr->res.src[SRC_NODES].reason), "%s", hostile);
	buf_init(&b, 0);
	status_page(&b, &info, &pr->st);
	buf_putc(&b, '\0');
	assert_page_safe(b.data, b.len - 1);
	assert_non_null(strstr(b.data, "&lt;script&gt;alert(1)&lt;/script&gt;&amp;&quot;x\xEF\xBF\xBD"));
	assert_non_null(strstr(b.data, "<td>served</td><td class=\"n\">7</td>"));
	assert_non_null(strstr(b.data, "<td>left out: input down</td><td class=\"n down\">2</td>"));
	assert_non_null(strstr(b.data, "<tr><td>exact</td><td class=\"n\">5</td><td class=\"n\">0</td></tr>"));
	assert_non_null(strstr(b.data, "and 3 more"));
	assert_non_null(strstr(b.data, "<td class=\"down\">down</td>"));
	assert_null(strstr(b.data, "slurmrestd-nodes")); /* slurmrestd not configured: not listed */
	buf_free(&b);
	page_record_free(pr);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_r4_with_slurmrestd),
		cmocka_unit_test(test_03_native_only),
		cmocka_unit_test(test_50000_nodes_bounded),
		cmocka_unit_test(test_70000_nodes_counters_marked),
		cmocka_unit_test(test_status_page_render),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
