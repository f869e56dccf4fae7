/* test_rest_labels.c: the labels slurmrestd's reader makes from its records' fields, and the peers' rows
 * that read them. A time as Slurm's commands print it (clitime.c: slurm_make_time_str's "%FT%T" in the
 * local time zone, "Unknown" and "None" where sinfo prints them), in UTC and in other zones, on every bad
 * input; the node families that carry it and the load as sinfo prints it (slurmrestd_node_reason,
 * slurmrestd_partition_node_reason, slurmrestd_node_cpu_load_reported and its node x partition twin);
 * the release slurmrestd reports (slurmrestd_diag_slurm_info); the rows that read them (SckyzO's
 * slurm_node_drain_reason_info and slurm_info, rivosinc's slurm_cpu_load and slurm_partition_cpu_load)
 * rendered from small documents, a reason with control characters and quotes escaped as every label
 * value is. */
#include "rest_fixture.h"

#include <math.h>

#include "clitime.h"
#include "expo.h"
#include "labels.h"
#include "payload.h"
#include "render.h"
#include "slurmrestd.h"
#include "source.h"

static void set_tz(const char *tz)
{
	setenv("TZ", tz, 1);
	tzset();
}

static const char *fmt(double t)
{
	static char out[CLITIME_LEN];
	size_t n = clitime_format(t, out, sizeof(out));
	assert_int_equal(n, strlen(out));
	return out;
}

/* 1796363221: when P2's reasons were set (sinfo printed 2026-12-04T05:47:01 in UTC) */
#define P2_REASON_AT 1796363221.0

static void test_format_zones(void **state)
{
	(void)state;
	set_tz("UTC");
	assert_string_equal(fmt(P2_REASON_AT), "2026-12-04T05:47:01");
	assert_string_equal(fmt(1), "1970-01-01T00:00:01");
	assert_string_equal(fmt(CLITIME_MAX), "9999-12-31T23:59:59");
	/* POSIX TZ strings need no zone files: UTC+05:30, and New York's rules (EST in December, EDT in July) */
	set_tz("IST-5:30");
	assert_string_equal(fmt(P2_REASON_AT), "2026-12-04T11:17:01");
	set_tz("EST5EDT,M3.2.0,M11.1.0");
	assert_string_equal(fmt(P2_REASON_AT), "2026-12-04T00:47:01");
	assert_string_equal(fmt(1783000000), "2026-07-02T09:46:40"); /* 13:46:40 UTC, EDT */
	assert_string_equal(fmt(1), "1969-12-31T19:00:01");
	/* a zone file when the machine has one */
	if (access("/usr/share/zoneinfo/Asia/Tokyo", R_OK) == 0) {
		set_tz("Asia/Tokyo");
		assert_string_equal(fmt(P2_REASON_AT), "2026-12-04T14:47:01");
	}
	set_tz("UTC");
}

static void test_format_bad_inputs(void **state)
{
	(void)state;
	set_tz("UTC");
	/* as sinfo prints them: 0 and INFINITE "Unknown", NO_VAL "None" */
	assert_string_equal(fmt(0), "Unknown");
	assert_string_equal(fmt(4294967295.0), "Unknown");
	assert_string_equal(fmt(4294967294.0), "None");
	assert_string_equal(fmt(4294967293.0), "2106-02-07T06:28:13");
	/* no time Slurm sends: not given, infinite, negative, fractional, past year 9999 */
	assert_string_equal(fmt(NAN), "Unknown");
	assert_string_equal(fmt(INFINITY), "Unknown");
	assert_string_equal(fmt(-INFINITY), "Unknown");
	assert_string_equal(fmt(-1), "Unknown");
	assert_string_equal(fmt(-1e300), "Unknown");
	assert_string_equal(fmt(1.5), "Unknown");
	assert_string_equal(fmt(CLITIME_MAX + 1), "Unknown");
	assert_string_equal(fmt(1e300), "Unknown");
	assert_string_equal(fmt(18446744073709551615.0), "Unknown");
	/* a short buffer is cut, never overrun; none at all writes nothing */
	char small[5] = "xxxx";
	assert_int_equal(clitime_format(P2_REASON_AT, small, sizeof(small)), 4);
	assert_string_equal(small, "2026");
	assert_int_equal(clitime_format(0, small, 0), 0);
	assert_string_equal(small, "2026");
}

#define NV(x) "{\"set\": true, \"infinite\": false, \"number\": " #x "}"
#define UNSET "{\"set\": false, \"infinite\": false, \"number\": 0}"

/* d: down with a stale load, in two partitions; i: idle, no reason (time 0); r: drained, a reason with
 * control characters, a quote and a backslash, no time, in no partition; n: draining+not responding,
 * reason "Not responding", its load never reported; f: failing, a huge time; x: drained, "NONE", a
 * negative time, no load at all; b: down, a reason with '|' and spaces at its ends, NO_VAL time. */
static const char reason_doc[] =
	"{\"nodes\": ["
	"{\"name\": \"d\", \"state\": [\"DOWN\"], \"cpus\": 16, \"reason\": \"ipmi: psu failure\","
	" \"reason_set_by_user\": \"root\", \"reason_changed_at\": " NV(1796363221) ", \"cpu_load\": 911,"
	" \"partitions\": [\"batch\", \"gpu\"]},"
	"{\"name\": \"i\", \"state\": [\"IDLE\"], \"cpus\": 4, \"reason\": \"\", \"reason_changed_at\": " NV(0) ","
	" \"cpu_load\": 97, \"partitions\": [\"batch\"]},"
	"{\"name\": \"r\", \"state\": [\"IDLE\", \"DRAIN\"], \"cpus\": 4,"
	" \"reason\": \"bad\\u001b[31m \\\"dimm\\\" \\\\ B2\\r\\nnext\\u007f\", \"reason_changed_at\": " UNSET ","
	" \"cpu_load\": 3, \"partitions\": []},"
	"{\"name\": \"n\", \"state\": [\"ALLOCATED\", \"DRAIN\", \"NOT_RESPONDING\"], \"cpus\": 4,"
	" \"reason\": \"Not responding\", \"reason_changed_at\": " NV(1796363221) ", \"cpu_load\": 4294967294,"
	" \"partitions\": [\"batch\"]},"
	"{\"name\": \"f\", \"state\": [\"MIXED\", \"FAIL\"], \"cpus\": 4, \"reason\": \"ecc\","
	" \"reason_changed_at\": " NV(1e300) ", \"cpu_load\": 150, \"partitions\": [\"batch\"]},"
	"{\"name\": \"x\", \"state\": [\"IDLE\", \"DRAIN\"], \"cpus\": 4, \"reason\": \"NONE\","
	" \"reason_changed_at\": " NV(-5) ", \"partitions\": [\"batch\"]},"
	"{\"name\": \"b\", \"state\": [\"DOWN\"], \"cpus\": 4, \"reason\": \" a|b \","
	" \"reason_changed_at\": " NV(4294967294) ", \"cpu_load\": 0, \"partitions\": [\"gpu\"]}"
	"], \"errors\": []}";

/* The value of fam's sample whose labels are exactly want ("a=1,b=2", sorted), NaN when none. */
static double sample(const struct expo *e, const char *fam, const char *want)
{
	const struct expo_family *f = expo_find(e, fam, strlen(fam));
	for (size_t i = 0; f && i < f->n; i++) {
		struct buf b;
		buf_init(&b, 0);
		for (size_t k = 0; k < f->samples[i].nlabels; k++) {
			const struct label *l = &f->samples[i].labels[k];
			buf_printf(&b, "%s%.*s=%.*s", k ? "," : "", (int)l->nlen, l->name, (int)l->vlen, l->value);
		}
		buf_putc(&b, '\0');
		int same = strcmp(b.data, want) == 0;
		buf_free(&b);
		if (same)
			return f->samples[i].value;
	}
	return NAN;
}

static void test_reader_families(void **state)
{
	(void)state;
	set_tz("UTC");
	struct expo e;
	tu_rest_parse_ok(&e, REST_NODES, reason_doc);
	/* every node once, its reason as sinfo's %E (none: no label), %H, %u and %T */
	assert_int_equal(tu_family_size(&e, "slurmrestd_node_reason"), 7);
	assert_true(sample(&e, "slurmrestd_node_reason",
			   "node=d,reason=ipmi: psu failure,reason_time=2026-12-04T05:47:01,state=down,user=root") == 1);
	assert_true(sample(&e, "slurmrestd_node_reason", "node=i,reason_time=Unknown,state=idle") == 1);
	assert_true(sample(&e, "slurmrestd_node_reason",
			   "node=r,reason=bad\x1b[31m \"dimm\" \\ B2\r\nnext\x7f,reason_time=Unknown,state=drained") == 1);
	assert_true(sample(&e, "slurmrestd_node_reason",
			   "node=n,reason=Not responding,reason_time=2026-12-04T05:47:01,state=draining*") == 1);
	assert_true(sample(&e, "slurmrestd_node_reason", "node=f,reason=ecc,reason_time=Unknown,state=failing") == 1);
	assert_true(sample(&e, "slurmrestd_node_reason", "node=x,reason=NONE,reason_time=Unknown,state=drained") == 1);
	assert_true(sample(&e, "slurmrestd_node_reason", "node=b,reason= a|b ,reason_time=None,state=down") == 1);
	/* per partition the node lists: d twice, r (in none) never */
	assert_int_equal(tu_family_size(&e, "slurmrestd_partition_node_reason"), 7);
	assert_true(sample(&e, "slurmrestd_partition_node_reason",
			   "node=d,partition=gpu,reason=ipmi: psu failure,reason_time=2026-12-04T05:47:01,state=down,"
			   "user=root") == 1);
	assert_true(sample(&e, "slurmrestd_partition_node_reason",
			   "node=i,partition=batch,reason_time=Unknown,state=idle") == 1);
	/* the time as a number, for nodes with a reason (unchanged) */
	assert_int_equal(tu_family_size(&e, "slurmrestd_node_reason_info"), 6);
	assert_true(sample(&e, "slurmrestd_node_reason_info", "node=d,reason=ipmi: psu failure,user=root") == P2_REASON_AT);
	assert_true(sample(&e, "slurmrestd_node_reason_info", "node=x,reason=NONE") == -5);
	/* the load as sinfo's %O: d's stale 9.11 too; n's NO_VAL (N/A) and x's missing load have none */
	assert_int_equal(tu_family_size(&e, "slurmrestd_node_cpu_load_reported"), 5);
	assert_true(sample(&e, "slurmrestd_node_cpu_load_reported", "node=d,state=down") == 9.11);
	assert_true(sample(&e, "slurmrestd_node_cpu_load_reported", "node=b,state=down") == 0);
	assert_true(isnan(sample(&e, "slurmrestd_node_cpu_load_reported", "node=n,state=draining*")));
	assert_true(sample(&e, "slurmrestd_partition_node_cpu_load_reported", "node=d,partition=gpu,state=down") == 9.11);
	assert_int_equal(tu_family_size(&e, "slurmrestd_partition_node_cpu_load_reported"), 5); /* d twice, r in none */
	/* the load that is a reading now leaves d out, as before */
	assert_true(isnan(sample(&e, "slurmrestd_node_cpu_load", "node=d,state=down")));
	assert_true(sample(&e, "slurmrestd_node_cpu_load_unknown", "node=d,state=down,why=down: its load is the last "
										"slurmd reported") == 1);
	/* the same document in another zone: only the times differ */
	set_tz("IST-5:30");
	struct expo z;
	tu_rest_parse_ok(&z, REST_NODES, reason_doc);
	assert_true(sample(&z, "slurmrestd_node_reason",
			   "node=d,reason=ipmi: psu failure,reason_time=2026-12-04T11:17:01,state=down,user=root") == 1);
	assert_true(sample(&z, "slurmrestd_node_reason", "node=b,reason= a|b ,reason_time=None,state=down") == 1);
	expo_free(&z);
	expo_free(&e);
	set_tz("UTC");
}

/* The served family of row name of the table at path, over slurmrestd's answer doc of source src alone. */
static char *served_from(const char *path, const char *name, enum source_id src, const char *doc)
{
	struct buf out;
	struct mapping *m = tu_load(path);
	struct payload *p[SRC_COUNT] = { 0 };
	p[src] = payload_new(src, 0, mapping_has_input, m);
	assert_int_equal(payload_feed(p[src], doc, strlen(doc), 0), PAYLOAD_FEED_MORE);
	payload_finish(p[src]);
	assert_true(p[src]->ok);
	const struct render_in in = { .m = m, .p = (const struct payload *const *)p };
	struct render_result res;
	buf_init(&out, 0);
	assert_int_equal(render_run(&in, &out, &res), 200);
	size_t r = 0;
	while (r < m->nrows && strcmp(m->rows[r].name, name))
		r++;
	assert_true(r < m->nrows);
	assert_int_equal(res.rows[r].status, ROW_OK);
	assert_int_equal(res.rows[r].form, 0);
	char *text = xmalloc(res.rows[r].len + 1);
	memcpy(text, out.data + res.rows[r].off, res.rows[r].len);
	text[res.rows[r].len] = '\0';
	render_result_free(&res);
	buf_free(&out);
	payload_unref(p[src]);
	mapping_free(m);
	return text;
}

static char *served(const char *path, const char *name, const char *doc)
{
	return served_from(path, name, SRC_REST_NODES, doc);
}

static void test_drain_reason_row(void **state)
{
	(void)state;
	set_tz("UTC");
	char *text = served("mappings/sckyzo-slurm-exporter.json", "slurm_node_drain_reason_info", reason_doc);
	/* d (down) and b (down, its reason as given); not i (no reason), r (in no partition: sinfo -N
	 * prints it nowhere), n (not responding), f (failing), x (none, in any case) */
	const char *want =
		"# HELP slurm_node_drain_reason_info Information about why a node is in drain or down state. Value is "
		"always 1 \xe2\x80\x94 use labels for the reason and timestamp.\n"
		"# TYPE slurm_node_drain_reason_info gauge\n"
		"slurm_node_drain_reason_info{node=\"b\",reason=\" a|b \",since=\"None\"} 1\n"
		"slurm_node_drain_reason_info{node=\"d\",reason=\"ipmi: psu failure\",since=\"2026-12-04T05:47:01\"} 1\n";
	assert_string_equal(text, want);
	free(text);
	/* r in a partition: its reason escaped as every label value is (quote, backslash, CR, LF), the
	 * control characters the text format cannot carry never raw */
	const char *in_part = "{\"nodes\": [{\"name\": \"r\", \"state\": [\"IDLE\", \"DRAIN\"], \"cpus\": 4,"
			      " \"reason\": \"bad\\u001b[31m \\\"dimm\\\" \\\\ B2\\r\\nnext\\u007f\","
			      " \"reason_changed_at\": " NV(1796363221) ", \"partitions\": [\"batch\"]}], \"errors\": []}";
	text = served("mappings/sckyzo-slurm-exporter.json", "slurm_node_drain_reason_info", in_part);
	const char *line = strstr(text, "\nslurm_node_drain_reason_info{");
	assert_non_null(line);
	for (const char *c = line + 1; *c; c++)
		assert_true(*c == '\n' || (unsigned char)*c >= 0x20);
	/* ESC, CR and DEL as U+FFFD, LF as \n */
	assert_string_equal(line + 1, "slurm_node_drain_reason_info{node=\"r\",reason=\"bad\xef\xbf\xbd[31m \\\"dimm\\\" "
				      "\\\\ B2\xef\xbf\xbd\\nnext\xef\xbf\xbd\",since=\"2026-12-04T05:47:01\"} 1\n");
	free(text);
}

static void test_load_rows(void **state)
{
	(void)state;
	/* d's stale 9.11 counted, as sinfo prints it and rivosinc sums it; n's N/A reads nothing */
	char *text = served("mappings/rivosinc-slurm-exporter.json", "slurm_cpu_load", reason_doc);
	assert_non_null(strstr(text, "\nslurm_cpu_load 11.61\n"));
	free(text);
	text = served("mappings/rivosinc-slurm-exporter.json", "slurm_partition_cpu_load", reason_doc);
	assert_non_null(strstr(text, "\nslurm_partition_cpu_load{partition=\"batch\"} 11.58\n"));
	assert_non_null(strstr(text, "slurm_partition_cpu_load{partition=\"gpu\"} 9.11\n"));
	free(text);
}

/* tpl with its one "%s" replaced by arg, into out (n bytes) */
static void fill(char *out, size_t n, const char *tpl, const char *arg)
{
	const char *at = strstr(tpl, "%s");
	assert_non_null(at);
	int len = snprintf(out, n, "%.*s%s%s", (int)(at - tpl), tpl, arg, at + 2);
	assert_true(len > 0 && (size_t)len < n);
}

/* meta.slurm of /diag: its release and cluster, once; SckyzO's slurm_info{type="general"} from it */
static void test_release(void **state)
{
	(void)state;
	static const char stats[] = "\"statistics\": {\"server_thread_count\": 3}";
	const char *docs[] = {
		"{\"meta\": {\"slurm\": {\"version\": {\"major\": \"25\"}, \"release\": \"25.11.7\", \"cluster\": \"peers\"}}, %s}",
		"{%s, \"meta\": {\"slurm\": {\"release\": \"26.05.3\"}}}",               /* after, no cluster */
		"{\"meta\": {\"slurm\": {\"cluster\": \"c\"}}, %s}",                          /* no release: none */
		"{\"meta\": {\"slurm\": [\"25.11.7\"]}, %s}",                                  /* not an object: none */
		"{\"meta\": {\"slurm\": {\"release\": \"%s\"}}, \"statistics\": {}}",            /* 64 bytes: none */
		"{%s, \"x\": {\"meta\": {\"slurm\": {\"release\": \"1\"}}}}",              /* deeper: none */
	};
	const char *want[] = { "cluster=peers,release=25.11.7", "release=26.05.3", NULL, NULL, NULL, NULL };
	char doc[512], long_release[65];
	memset(long_release, '9', 64);
	long_release[64] = '\0';
	for (size_t i = 0; i < sizeof(docs) / sizeof(docs[0]); i++) {
		fill(doc, sizeof(doc), docs[i], i == 4 ? long_release : stats);
		struct expo e;
		tu_rest_parse_ok(&e, REST_DIAG, doc);
		assert_int_equal(tu_family_size(&e, "slurmrestd_diag_slurm_info"), want[i] ? 1 : 0);
		if (want[i])
			assert_true(sample(&e, "slurmrestd_diag_slurm_info", want[i]) == 1);
		expo_free(&e);
	}
	fill(doc, sizeof(doc), docs[0], stats);
	char *text = served_from("mappings/sckyzo-slurm-exporter.json", "slurm_info", SRC_REST_DIAG, doc);
	assert_non_null(strstr(text, "\nslurm_info{type=\"general\",version=\"25.11.7\"} 1\n"));
	assert_int_equal(strstr(text, "} 1\n") + 4 - text, (long)strlen(text)); /* the one series */
	free(text);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_format_zones),
		cmocka_unit_test(test_format_bad_inputs),
		cmocka_unit_test(test_reader_families),
		cmocka_unit_test(test_drain_reason_row),
		cmocka_unit_test(test_load_rows),
		cmocka_unit_test(test_release),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
