/* test_http_native.c: the native passthrough /native/metrics/<endpoint>: native_render without network
 * (re-escaped, invalid UTF-8 and control bytes repaired and counted), over HTTP read sample for sample by
 * a strict reader, 404 elsewhere or when off, 503 when down, one fetch shared with /metrics, families no
 * row reads served, basic auth, a name starting with a digit never served back. */
#include "http_fixture.h"

/* ---- The native passthrough, /native/metrics/<endpoint> ------------------------------------------ */

/* Every family and sample of want (slurmctld's text, read tolerantly) is in got (the passthrough's,
 * read strictly), with the same type, HELP, label values and value, in the same order. */
static void assert_same_families(const struct expo *want, const struct expo *got)
{
	assert_int_equal(got->nfams, want->nfams);
	for (size_t k = 0; k < want->nfams; k++) {
		const struct expo_family *w = &want->fams[k], *g = &got->fams[k];
		assert_true(w->nlen == g->nlen && !memcmp(w->name, g->name, w->nlen));
		assert_int_equal(g->type, w->type);
		assert_int_equal(g->n, w->n);
		assert_true(w->hlen == g->hlen && (!w->hlen || !memcmp(w->help, g->help, w->hlen)));
		for (size_t i = 0; i < w->n; i++) {
			const struct expo_sample *a = &w->samples[i], *b = &g->samples[i];
			assert_true(labels_is_equal(a->labels, a->nlabels, b->labels, b->nlabels));
			assert_true(a->value == b->value || (isnan(a->value) && isnan(b->value)));
		}
	}
}

static int keep_a(const char *name, size_t len, void *ctx)
{
	(void)ctx;
	return len == 1 && name[0] == 'a';
}

/* The pure part, no network: slurmctld's unescaped text -> families -> text a strict (Prometheus)
 * reader takes, sample for sample; paths map to the five endpoints only. */
static void test_native_render(void **state)
{
	(void)state;
	static const char raw[] = "# HELP a_jobs Jobs with a \\ and \xfe in the help\n# TYPE a_jobs gauge\n"
				  "a_jobs{account=\"odd\"acct\\\\x y\",user=\"bad\xff\xc0name\"} 3\n"
				  "a_jobs{account=\"plain\",user=\"\"} NaN\n# TYPE b_total counter\nb_total 1.5e+300\n"
				  "c_untyped{x=\"ends in \\\"} 2\n";
	struct expo in, out;
	struct buf b;
	expo_init(&in);
	assert_int_equal(expo_parse(&in, raw, sizeof(raw) - 1, 0), 0);
	buf_init(&b, 0);
	assert_int_equal(native_render(&in, &b), 2); /* the HELP and one label value repaired */
	buf_putc(&b, '\0');
	assert_true(utf8_is_valid(b.data, b.len - 1));
	assert_string_equal(b.data,
			    "# HELP a_jobs Jobs with a \\\\ and \xEF\xBF\xBD in the help\n# TYPE a_jobs gauge\n"
			    "a_jobs{account=\"odd\\\"acct\\\\\\\\x y\",user=\"bad\xEF\xBF\xBD\xEF\xBF\xBDname\"} 3\n"
			    "a_jobs{account=\"plain\"} NaN\n# TYPE b_total counter\nb_total 1.5e+300\n"
			    "c_untyped{x=\"ends in \\\\\"} 2\n");
	expo_init(&out);
	assert_int_equal(expo_parse(&out, b.data, b.len - 1, EXPO_STRICT), 0);
	const struct expo_family *f = expo_find(&out, "a_jobs", 6);
	assert_non_null(f);
	assert_int_equal(f->samples[0].labels[0].vlen, 13); /* odd"acct\\x y: the quote and both backslashes */
	assert_memory_equal(f->samples[0].labels[0].value, "odd\"acct\\\\x y", 13);
	f = expo_find(&out, "c_untyped", 9);
	assert_memory_equal(f->samples[0].labels[0].value, "ends in \\", 9);
	expo_free(&out);
	expo_free(&in);
	buf_free(&b);

	/* HELP is kept as the TYPE is: for the families kept, copied out of the pieces of a transfer;
	 * a family the filter refuses stores nothing, its HELP neither */
	static const char fed[] = "# HELP b unread help\n# TYPE b gauge\nb 1\n# HELP a the help of a\n# TYPE a gauge\na 2\n";
	char piece[4];
	expo_init_keep(&in, keep_a, NULL);
	for (size_t i = 0; i < sizeof(fed) - 1; i += sizeof(piece)) {
		size_t n = sizeof(fed) - 1 - i < sizeof(piece) ? sizeof(fed) - 1 - i : sizeof(piece);
		memcpy(piece, fed + i, n);
		expo_feed(&in, piece, n, 0);
		memset(piece, 'x', sizeof(piece)); /* the piece goes away */
	}
	assert_int_equal(expo_feed_end(&in, 0), 0);
	assert_int_equal(in.nfams, 1);
	assert_null(expo_find(&in, "b", 1));
	f = expo_find(&in, "a", 1);
	assert_non_null(f);
	assert_int_equal(f->hlen, 13);
	assert_memory_equal(f->help, "the help of a", 13);
	assert_int_equal(f->n, 1);
	expo_free(&in);

	assert_int_equal(native_source("/native/metrics/jobs-users-accts"), SRC_UA);
	assert_int_equal(native_source("/native/metrics/jobs"), SRC_JOBS);
	assert_int_equal(native_source("/native/metrics/scheduler"), SRC_SCHEDULER);
	static const char *const bad[] = { "/native/metrics/", "/native/metrics/jobs/", "/native/metrics/Jobs",
					   "/native/metrics/slurmrestd-nodes", "/native/metrics/jobs?x", "/metrics/jobs",
					   "/native/metrics/../metrics" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(native_source(bad[i]), -1);
}

/* The passthrough serves no control byte raw either: C0 controls but newline, and DEL, in a label
 * value or a HELP text become U+FFFD as the writer makes them, and each value is counted repaired. */
static void test_native_control_bytes(void **state)
{
	(void)state;
	static const char raw[] = "# HELP a_jobs jobs\x1b]0;title\x07 of\taccount\n# TYPE a_jobs gauge\n"
				  "a_jobs{account=\"x\x1b[2Jy\",user=\"u\rv\x7f\"} 3\na_jobs{account=\"plain\",user=\"tab\\tok\"} 1\n";
	struct expo in;
	struct buf b;
	expo_init(&in);
	assert_int_equal(expo_parse(&in, raw, sizeof(raw) - 1, 0), 0);
	buf_init(&b, 0);
	assert_int_equal(native_render(&in, &b), 3); /* the HELP and two label values */
	buf_putc(&b, '\0');
	assert_true(utf8_is_clean(b.data, b.len - 1));
	assert_string_equal(b.data, "# HELP a_jobs jobs\xEF\xBF\xBD]0;title\xEF\xBF\xBD of\xEF\xBF\xBD" "account\n# TYPE a_jobs gauge\n"
				    "a_jobs{account=\"x\xEF\xBF\xBD[2Jy\",user=\"u\xEF\xBF\xBDv\xEF\xBF\xBD\"} 3\n"
				    "a_jobs{account=\"plain\",user=\"tab\\\\tok\"} 1\n");
	expo_free(&in);
	buf_free(&b);
}

/* State 25.11/03: an account named odd"acct\\x y, which makes Prometheus refuse slurmctld's own
 * /metrics/jobs-users-accts. Through the passthrough every endpoint reads strictly, sample for
 * sample as slurmctld sent it; an unknown path is 404; a down slurmctld is a 503 with the reason. */
static void test_native_passthrough(void **state)
{
	(void)state;
	static const char *const eps[] = { "jobs", "nodes", "partitions", "scheduler", "jobs-users-accts" };
	struct proc f, s;
	struct resp r;
	fake_start(&f, STATE, NULL);
	shim_start(&s, f.port, NULL);
	for (int i = 0; i < 5; i++) {
		char path[96], file[128];
		snprintf(path, sizeof(path), "/native/metrics/%s", eps[i]);
		snprintf(file, sizeof(file), STATE "/metrics_%s.txt", eps[i]);
		http("GET", s.port, path, &r, 10000);
		assert_int_equal(r.status, 200);
		assert_string_equal(r.ctype, "text/plain; version=0.0.4; charset=utf-8");
		size_t len;
		char *raw = tu_slurp(file, &len);
		struct expo want, got;
		expo_init(&want);
		expo_init(&got);
		assert_int_equal(expo_parse(&want, raw, len, 0), 0);
		assert_int_equal(expo_parse(&got, r.body.data, r.body.len - 1, EXPO_STRICT), 0);
		assert_true(want.nsamples > 0);
		assert_same_families(&want, &got);
		if (i == 4) {
			assert_non_null(strstr(r.body.data, "slurm_account_jobs_running{account=\"odd\\\"acct\\\\\\\\x y\"} "));
			const struct expo_family *fam = expo_find(&got, "slurm_account_jobs_running", 26);
			int found = 0;
			for (size_t k = 0; fam && k < fam->n; k++)
				found += fam->samples[k].nlabels == 1 && fam->samples[k].labels[0].vlen == 13 &&
					 !memcmp(fam->samples[k].labels[0].value, "odd\"acct\\\\x y", 13);
			assert_int_equal(found, 1);
		}
		expo_free(&want);
		expo_free(&got);
		free(raw);
		buf_free(&r.body);
	}
	static const char *const not_found[] = { "/native/metrics/nope", "/native/metrics/", "/native/metrics/jobs/",
						 "/native/metrics", "/native/metrics/slurmrestd-nodes" };
	for (size_t i = 0; i < sizeof(not_found) / sizeof(not_found[0]); i++) {
		http("GET", s.port, not_found[i], &r, 5000);
		assert_int_equal(r.status, 404);
		buf_free(&r.body);
	}
	/* the status page links the five */
	http("GET", s.port, "/", &r, 5000);
	for (int i = 0; i < 5; i++) {
		char link[96];
		snprintf(link, sizeof(link), "<a href=\"/native/metrics/%s\">", eps[i]);
		assert_non_null(strstr(r.body.data, link));
	}
	buf_free(&r.body);
	/* never mixed into /metrics: slurmctld's own names stay out of it */
	http("GET", s.port, "/metrics", &r, 10000);
	assert_int_equal(r.status, 200);
	assert_null(strstr(r.body.data, "\nslurm_account_jobs_bootfail{"));
	assert_null(strstr(r.body.data, "\nslurm_node_cpus{"));
	buf_free(&r.body);
	stop(&s);
	/* switched off: no route */
	shim_start(&s, f.port, "--web.native-passthrough=false", NULL);
	http("GET", s.port, "/native/metrics/jobs", &r, 5000);
	assert_int_equal(r.status, 404);
	buf_free(&r.body);
	http("GET", s.port, "/", &r, 5000);
	assert_null(strstr(r.body.data, "/native/"));
	buf_free(&r.body);
	stop(&s);
	stop(&f);
	/* slurmctld down: 503 with the reason, as /metrics' */
	shim_start(&s, free_port(), NULL);
	http("GET", s.port, "/native/metrics/jobs-users-accts", &r, 10000);
	assert_int_equal(r.status, 503);
	assert_non_null(strstr(r.body.data, "/metrics/jobs-users-accts: "));
	assert_non_null(strstr(r.body.data, "onnect"));
	assert_null(strstr(r.body.data, "# TYPE"));
	buf_free(&r.body);
	stop(&s);
}

/* Hostile bytes: invalid UTF-8 in a label value and a HELP text is repaired to U+FFFD and counted
 * (slurm_exporter_shim_native_repaired_total), a quote and a backslash are escaped, and the family
 * (which no row reads) is served all the same. */
static void test_native_hostile(void **state)
{
	(void)state;
	struct proc f, s;
	struct resp r;
	const char *cap = tu_tmp("native-capture");
	char cmd[512];
	snprintf(cmd, sizeof(cmd), "rm -rf %s && cp -r " STATE " %s", cap, cap);
	assert_int_equal(system(cmd), 0);
	char *ua = tu_slurp(STATE "/metrics_jobs-users-accts.txt", NULL);
	struct buf b;
	buf_init(&b, 0);
	buf_puts(&b, ua);
	buf_puts(&b, "# HELP slurm_account_hostile A \\ and \xfe\n# TYPE slurm_account_hostile gauge\n"
		     "slurm_account_hostile{account=\"bad\xff\xc0name\",user=\"q\"u\\o\"} 7\n");
	buf_putc(&b, '\0');
	tu_write(tu_tmp("native-capture/metrics_jobs-users-accts.txt"), b.data);
	buf_free(&b);
	free(ua);
	fake_start(&f, cap, NULL);
	shim_start(&s, f.port, NULL);
	http("GET", s.port, "/native/metrics/jobs-users-accts", &r, 10000);
	assert_int_equal(r.status, 200);
	assert_true(utf8_is_valid(r.body.data, r.body.len - 1));
	assert_non_null(strstr(r.body.data, "# HELP slurm_account_hostile A \\\\ and \xEF\xBF\xBD\n"));
	assert_non_null(strstr(r.body.data, "\nslurm_account_hostile{account=\"bad\xEF\xBF\xBD\xEF\xBF\xBDname\",user=\"q\\\"u\\\\o\"} 7\n"));
	struct expo got;
	expo_init(&got);
	assert_int_equal(expo_parse(&got, r.body.data, r.body.len - 1, EXPO_STRICT), 0);
	expo_free(&got);
	buf_free(&r.body);
	http("GET", s.port, "/metrics", &r, 10000);
	assert_int_equal(r.status, 200);
	assert_true(self_value(r.body.data, "slurm_exporter_shim_native_repaired_total", "jobs-users-accts") == 2);
	assert_true(self_value(r.body.data, "slurm_exporter_shim_native_repaired_total", "nodes") == 0);
	assert_true(self_value(r.body.data, "slurm_exporter_shim_native_repaired_total", "slurmrestd-nodes") == -1);
	buf_free(&r.body);
	stop(&s);
	stop(&f);
}

struct native_arg {
	unsigned port;
	const char *path;
	long status;
};

static void *native_thread(void *p)
{
	struct native_arg *a = p;
	struct resp r;
	http("GET", a->port, a->path, &r, 15000);
	a->status = r.status;
	buf_free(&r.body);
	return NULL;
}

/* The passthrough shares the scrape's fetches. The table here reads one family of one endpoint, so
 * the first passthrough request after a /metrics scrape fetches again (the scrape's answer was
 * filtered: the unread families, served by the passthrough, were never stored); from then on, 16
 * requests at once, half /metrics and half the passthrough, against a slow slurmctld: one fetch. */
static void test_native_shares_fetch(void **state)
{
	(void)state;
	struct proc f, s;
	struct resp r;
	pthread_t t[16];
	struct native_arg a[16];
	tu_write(tu_tmp("native.json"),
		 "{\"metrics\": [{\"name\": \"slurm_account_running\", \"help\": \"h\", \"type\": \"gauge\","
		 " \"expr\": \"sum(slurm_account_jobs_running)\", \"fidelity\": \"exact\"}]}\n");
	fake_start(&f, STATE, "--delay-ms", "300", NULL);
	shim_start(&s, f.port, "--mapping.file", tu_tmp("native.json"), "--slurmctld.jobs.min-interval", "60", NULL);
	http("GET", s.port, "/metrics", &r, 10000);
	assert_int_equal(r.status, 200);
	assert_non_null(strstr(r.body.data, "\nslurm_account_running "));
	buf_free(&r.body);
	assert_int_equal(stat_count(f.port, "jobs-users-accts"), 1);
	/* the passthrough is on from the start: the table's fetch kept every family, and the first
	 * request of the passthrough shares it (it used to switch to unfiltered fetches then, and
	 * fetch again) */
	http("GET", s.port, "/native/metrics/jobs-users-accts", &r, 10000);
	assert_int_equal(r.status, 200);
	/* families no row reads */
	assert_non_null(strstr(r.body.data, "\nslurm_user_jobs_running{username=\"alice\"} "));
	assert_non_null(strstr(r.body.data, "# HELP slurm_account_jobs_bootfail "));
	buf_free(&r.body);
	assert_int_equal(stat_count(f.port, "jobs-users-accts"), 1);
	http("GET", s.port, "/metrics", &r, 10000); /* the unfiltered answer serves the table too */
	assert_int_equal(r.status, 200);
	assert_non_null(strstr(r.body.data, "\nslurm_account_running "));
	buf_free(&r.body);
	assert_int_equal(stat_count(f.port, "jobs-users-accts"), 1);
	stop(&s);
	/* a fresh shim; the passthrough asked once (nodes), then both at once */
	shim_start(&s, f.port, "--mapping.file", tu_tmp("native.json"), NULL);
	http("GET", s.port, "/native/metrics/nodes", &r, 10000);
	assert_int_equal(r.status, 200);
	buf_free(&r.body);
	for (int i = 0; i < 16; i++) {
		a[i] = (struct native_arg){ s.port, i % 2 ? "/metrics" : "/native/metrics/jobs-users-accts", 0 };
		pthread_create(&t[i], NULL, native_thread, &a[i]);
	}
	for (int i = 0; i < 16; i++) {
		pthread_join(t[i], NULL);
		assert_int_equal(a[i].status, 200);
	}
	assert_int_equal(stat_count(f.port, "jobs-users-accts"), 2);
	stop(&s);
	stop(&f);
}

/* Basic auth from --web.config.file applies to the passthrough as to /metrics. */
static void test_native_basic_auth(void **state)
{
	(void)state;
	struct proc f, s;
	struct resp r;
	fake_start(&f, STATE, NULL);
	shim_start(&s, f.port, "--web.config.file", "tests/webconfig/auth_only.yml", NULL);
	http("GET", s.port, "/native/metrics/jobs-users-accts", &r, 10000);
	assert_int_equal(r.status, 401);
	assert_null(strstr(r.body.data, "slurm_"));
	buf_free(&r.body);
	http_hdr("GET", s.port, "/native/metrics/jobs-users-accts", "Authorization: Basic YWxpY2U6d3Jvbmc=", &r, 10000);
	assert_int_equal(r.status, 401);
	buf_free(&r.body);
	http_hdr("GET", s.port, "/native/metrics/jobs-users-accts", "Authorization: Basic YWxpY2U6Y29ycmVjdCBob3JzZQ==", &r,
		 10000);
	assert_int_equal(r.status, 200);
	assert_non_null(strstr(r.body.data, "# TYPE slurm_account_jobs_running gauge\n"));
	buf_free(&r.body);
	assert_int_equal(stat_count(f.port, "jobs-users-accts"), 1); /* the refused requests fetched nothing */
	stop(&s);
	stop(&f);
}


/* fuzz_native found it: a HELP or TYPE line whose name starts with a digit was read (the name loop
 * took name characters, not a name), so the passthrough wrote "# HELP 1x ..." back, a line on which
 * Prometheus fails the whole scrape. Both readers now refuse the line, counted as malformed. */
static void test_native_digit_name(void **state)
{
	(void)state;
	static const char raw[] = "# HELP 1x text\n# TYPE 9x gauge\n# HELP x_ok fine\nx_ok 1\n";
	struct expo in, strict;
	struct buf b;
	expo_init(&in);
	expo_init(&strict);
	assert_int_equal(expo_parse(&in, raw, sizeof(raw) - 1, 0), 2);
	assert_int_equal(expo_parse(&strict, raw, sizeof(raw) - 1, EXPO_STRICT), 2);
	assert_int_equal(in.nerrors, 2);
	assert_string_equal(in.errors[0].reason, "invalid metric name in HELP");
	assert_string_equal(in.errors[1].reason, "invalid metric name in TYPE");
	buf_init(&b, 0);
	native_render(&in, &b);
	buf_putc(&b, '\0');
	assert_string_equal(b.data, "# HELP x_ok fine\nx_ok 1\n");
	expo_free(&in);
	expo_free(&strict);
	buf_free(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_native_render),
		cmocka_unit_test(test_native_control_bytes),
		cmocka_unit_test_teardown(test_native_passthrough, kill_children),
		cmocka_unit_test_teardown(test_native_hostile, kill_children),
		cmocka_unit_test_teardown(test_native_shares_fetch, kill_children),
		cmocka_unit_test_teardown(test_native_basic_auth, kill_children),
		cmocka_unit_test(test_native_digit_name),
	};
	return http_fixture_run("http_native", tests, sizeof(tests) / sizeof(tests[0]));
}
