/* test_http_ha.c: several controllers in --slurmctld.url (fakes switched with /_role/standby|primary):
 * failover and failback, 303s to configured and unconfigured origins, a hung or unusable first
 * controller, all down, no mixing of answers from two controllers, a single URL as a list of one, the
 * URL list and its checks. */
#include "http_fixture.h"

/* ---- Several controllers (--slurmctld.url repeated or a comma list). The fakes play
 * slurmctld's primary and standby (/_role/standby: a 25.11.7 standby's 303 to --redirect-port). */

/* Start the fake on a given port (a controller restarted where it was). */
static void fake_start_at(struct proc *f, unsigned port, const char *dir, const char *redirect_port)
{
	char p[16];
	const char *bin = getenv("FAKE_SLURMCTLD") ? getenv("FAKE_SLURMCTLD") : "build/tests/fake_slurmctld";
	char *argv[] = { (char *)bin, "--port", p, "--dir", (char *)dir, "--redirect-port", (char *)redirect_port, NULL };
	snprintf(p, sizeof(p), "%u", port);
	f->port = port;
	for (int attempt = 0; attempt < 20; attempt++) {
		snprintf(f->log, sizeof(f->log), "%s/fake-%u.log", tu_tmpdir(), port);
		f->pid = spawn(argv, f->log);
		if (wait_ready(f->pid, port))
			return;
		tu_sleep_ms(100);
	}
	fail_msg("fake_slurmctld does not restart on port %u (see %s)", port, f->log);
}

static void set_role(const struct proc *f, const char *role)
{
	struct resp r;
	char path[32];
	snprintf(path, sizeof(path), "/_role/%s", role);
	http("GET", f->port, path, &r, 5000);
	assert_int_equal(r.status, 200);
	buf_free(&r.body);
}

/* The exposition has the line (whole). */
static int has_line(const char *body, const char *line)
{
	size_t n = strlen(line);
	for (const char *p = strstr(body, line); p; p = strstr(p + 1, line))
		if ((p == body || p[-1] == '\n') && (p[n] == '\n' || !p[n]))
			return 1;
	return 0;
}

static int has_role(const char *body, unsigned port, const char *role)
{
	char line[160];
	snprintf(line, sizeof(line), "slurm_exporter_shim_controller_info{url=\"http://127.0.0.1:%u\",role=\"%s\"} 1", port,
		 role);
	return has_line(body, line);
}

/* Primary A and standby B (listed first): the standby's 303 to A (configured) is followed, the
 * answers are A's; A killed, B promoted: the next scrape fails over within itself, no restart;
 * A back as primary, B standby again: failback. Each change counted and logged once. */
static void test_ha_failover_failback(void **state)
{
	(void)state;
	struct proc a, b, s;
	struct resp r;
	char aport[16], burl[64];
	fake_start(&a, STATE, NULL);
	snprintf(aport, sizeof(aport), "%u", a.port);
	fake_start(&b, STATE, "--redirect-port", aport, NULL);
	set_role(&b, "standby");
	snprintf(burl, sizeof(burl), "http://127.0.0.1:%u", b.port);
	shim_start(&s, a.port, "--slurmctld.url", burl, "--slurmctld.min-interval", "0", "--slurmctld.jobs.min-interval",
		   "0", NULL);
	/* the shim's list is A,B: A answers, B is never asked */
	http("GET", s.port, "/metrics", &r, 10000);
	assert_int_equal(r.status, 200);
	assert_non_null(strstr(r.body.data, "\nslurm_cpus_total 44\n"));
	assert_true(has_role(r.body.data, a.port, "primary"));
	assert_true(has_role(r.body.data, b.port, "unknown"));
	assert_true(has_line(r.body.data, "slurm_exporter_shim_controller_switches_total 0"));
	assert_int_equal(stat_count(b.port, "nodes"), 0);
	buf_free(&r.body);

	/* failover: A dies, B becomes primary */
	stop(&a);
	set_role(&b, "primary");
	http("GET", s.port, "/metrics", &r, 10000);
	assert_int_equal(r.status, 200);
	assert_non_null(strstr(r.body.data, "\nslurm_cpus_total 44\n"));
	assert_true(has_line(r.body.data, "slurm_exporter_shim_up{endpoint=\"nodes\"} 1"));
	assert_true(has_role(r.body.data, a.port, "down"));
	assert_true(has_role(r.body.data, b.port, "primary"));
	assert_true(has_line(r.body.data, "slurm_exporter_shim_controller_switches_total 1"));
	buf_free(&r.body);
	assert_int_equal(stat_count(b.port, "nodes"), 1);

	/* failback: A back as primary, B standby (its 303 points at A); B, current, is tried first */
	fake_start_at(&a, a.port, STATE, aport);
	set_role(&b, "standby");
	http("GET", s.port, "/metrics", &r, 10000);
	assert_int_equal(r.status, 200);
	assert_true(has_role(r.body.data, a.port, "primary"));
	assert_true(has_role(r.body.data, b.port, "standby"));
	assert_true(has_line(r.body.data, "slurm_exporter_shim_controller_switches_total 2"));
	buf_free(&r.body);
	assert_int_equal(stat_count(a.port, "nodes"), 1);
	assert_int_equal(stat_count(b.port, "nodes"), 2); /* one answer, one 303 */
	stop(&s);
	char *log = tu_slurp(s.log, NULL);
	char want[160];
	snprintf(want, sizeof(want), "switched from controller http://127.0.0.1:%u to http://127.0.0.1:%u", a.port, b.port);
	assert_non_null(strstr(log, want));
	assert_non_null(strstr(log, "was down (Couldn't connect to server)"));
	snprintf(want, sizeof(want), "switched from controller http://127.0.0.1:%u to http://127.0.0.1:%u", b.port, a.port);
	assert_non_null(strstr(log, want));
	free(log);
	stop(&b);
	stop(&a);
}

/* A standby's 303 to an origin that is not configured (C) is not followed: C never gets a
 * request, nor the token; the next configured controller (A) answers. */
static void test_ha_redirect_not_configured(void **state)
{
	(void)state;
	struct proc a, b, c, s;
	struct resp r;
	char cport[16], aurl[64];
	tu_write(tu_tmp("token-ha"), "tok-SECRET-14\n");
	fake_start(&c, STATE, NULL);
	fake_start(&a, STATE, NULL);
	snprintf(cport, sizeof(cport), "%u", c.port);
	fake_start(&b, STATE, "--redirect-port", cport, NULL);
	set_role(&b, "standby");
	snprintf(aurl, sizeof(aurl), "http://127.0.0.1:%u", a.port);
	shim_start(&s, b.port, "--slurmctld.url", aurl, "--slurmctld.auth.token-file", tu_tmp("token-ha"), NULL);
	http("GET", s.port, "/metrics", &r, 10000);
	assert_int_equal(r.status, 200);
	assert_true(has_role(r.body.data, b.port, "standby"));
	assert_true(has_role(r.body.data, a.port, "primary"));
	buf_free(&r.body);
	assert_int_equal(stat_count(b.port, "nodes"), 1);
	assert_int_equal(stat_count(a.port, "nodes"), 1);
	assert_int_equal(stat_count(c.port, "nodes"), 0);
	assert_int_equal(stat_count(c.port, "jobs"), 0);
	http("GET", c.port, "/_last_request", &r, 5000);
	assert_null(strstr(r.body.data, "SECRET"));
	buf_free(&r.body);
	http("GET", a.port, "/_last_request", &r, 5000); /* the configured ones get it */
	assert_non_null(strstr(r.body.data, "X-SLURM-USER-TOKEN: tok-SECRET-14"));
	buf_free(&r.body);
	char want[300];
	http("GET", s.port, "/", &r, 5000); /* the status page's controller table */
	assert_non_null(strstr(r.body.data, "<h2>Controllers</h2>"));
	snprintf(want, sizeof(want), "<tr><td><code>http://127.0.0.1:%u</code></td><td class=\"off\">standby</td>"
		 "<td class=\"err\">standby (HTTP 303 to http://127.0.0.1:%u), not configured: not followed</td>", b.port,
		 c.port);
	assert_non_null(strstr(r.body.data, want));
	snprintf(want, sizeof(want), "<tr><td><code>http://127.0.0.1:%u</code> (read now)</td><td class=\"up\">primary</td>",
		 a.port);
	assert_non_null(strstr(r.body.data, want));
	buf_free(&r.body);
	stop(&s);
	stop(&b);
	stop(&a);
	stop(&c);
}

/* A standby's 303 to a configured controller is followed to it next: list B (standby, 303 to A),
 * D (another standby), A: A answers second, D is never asked. */
static void test_ha_redirect_to_configured(void **state)
{
	(void)state;
	struct proc a, b, d, s;
	struct resp r;
	char aport[16], aurl[64], durl[64];
	fake_start(&a, STATE, NULL);
	snprintf(aport, sizeof(aport), "%u", a.port);
	fake_start(&b, STATE, "--redirect-port", aport, NULL);
	fake_start(&d, STATE, "--redirect-port", aport, NULL);
	set_role(&b, "standby");
	set_role(&d, "standby");
	snprintf(aurl, sizeof(aurl), "http://127.0.0.1:%u", a.port);
	snprintf(durl, sizeof(durl), "http://127.0.0.1:%u", d.port);
	shim_start(&s, b.port, "--slurmctld.url", durl, "--slurmctld.url", aurl, NULL);
	http("GET", s.port, "/metrics", &r, 10000);
	assert_int_equal(r.status, 200);
	assert_true(has_role(r.body.data, b.port, "standby"));
	assert_true(has_role(r.body.data, d.port, "unknown"));
	assert_true(has_role(r.body.data, a.port, "primary"));
	assert_true(has_line(r.body.data, "slurm_exporter_shim_controller_switches_total 0"));
	buf_free(&r.body);
	assert_int_equal(stat_count(d.port, "nodes"), 0);
	assert_int_equal(stat_count(a.port, "nodes"), 1);
	stop(&s);
	stop(&d);
	stop(&b);
	stop(&a);
}

/* A primary that accepts connections and never answers no longer takes the whole timeout of the
 * fetch: having sent nothing by its share of the scrape's time (half of it, with two controllers),
 * it has the next controller asked alongside, and the scrape fails over within itself (before:
 * 503 "down (Timeout was reached)", and only the next scrape failed over). */
static void test_ha_hung_controller(void **state)
{
	(void)state;
	struct proc a, b, s;
	struct resp r;
	char burl[64], want[200];
	fake_start(&a, STATE, "--fault", "hang", NULL);
	fake_start(&b, STATE, NULL);
	snprintf(burl, sizeof(burl), "http://127.0.0.1:%u", b.port);
	shim_start(&s, a.port, "--slurmctld.url", burl, "--slurmctld.timeout", "1", "--slurmctld.min-interval", "0",
		   "--slurmctld.jobs.min-interval", "0", NULL);
	double t0 = now_s();
	http("GET", s.port, "/metrics", &r, 10000);
	double took = now_s() - t0;
	assert_int_equal(r.status, 200);
	assert_non_null(strstr(r.body.data, "\nslurm_cpus_total 44\n"));
	assert_true(has_role(r.body.data, a.port, "down"));
	assert_true(has_role(r.body.data, b.port, "primary"));
	buf_free(&r.body);
	if (took >= 1.0) /* half of it, and B's answer */
		fail_msg("the scrape took %.2f s: the hung controller used the whole timeout", took);
	http("GET", s.port, "/", &r, 5000);
	snprintf(want, sizeof(want), "down (no answer within 0.");
	assert_non_null(strstr(r.body.data, want));
	buf_free(&r.body);
	http("GET", s.port, "/metrics", &r, 10000); /* B, current, first: A is not asked */
	assert_int_equal(r.status, 200);
	buf_free(&r.body);
	assert_int_equal(stat_count(b.port, "nodes"), 2);
	assert_int_equal(stat_count(a.port, "nodes"), 1);
	stop(&s);
	stop(&b);
	stop(&a);
}

/* No controller answers: 503, the body says what each one did. */
static void test_ha_all_down(void **state)
{
	(void)state;
	struct proc b, s;
	struct resp r;
	char aurl[64], want[200];
	unsigned dead = free_port(); /* nothing listens there */
	fake_start(&b, STATE, "--redirect-port", "1", NULL);
	set_role(&b, "standby");
	snprintf(aurl, sizeof(aurl), "http://127.0.0.1:%u", dead);
	shim_start(&s, b.port, "--slurmctld.url", aurl, NULL);
	http("GET", s.port, "/metrics", &r, 10000);
	assert_int_equal(r.status, 503);
	snprintf(want, sizeof(want), "/metrics/nodes: no slurmctld controller answered as primary: http://127.0.0.1:%u: "
		 "standby (HTTP 303 to http://127.0.0.1:1), not configured: not followed; ", b.port);
	assert_non_null(strstr(r.body.data, want));
	snprintf(want, sizeof(want), "http://127.0.0.1:%u: down (Couldn't connect to server)", dead);
	assert_non_null(strstr(r.body.data, want));
	buf_free(&r.body);
	stop(&s);
	stop(&b);
}

/* No mixing: a job walk cached from A (jobs interval 60 s) is not served once B answers the
 * cheap endpoints; it is fetched again from B for the same scrape. */
static void test_ha_no_mixing(void **state)
{
	(void)state;
	struct proc a, b, s;
	struct resp r;
	char burl[64];
	fake_start(&a, STATE, NULL);
	fake_start(&b, STATE, NULL);
	snprintf(burl, sizeof(burl), "http://127.0.0.1:%u", b.port);
	shim_start(&s, a.port, "--slurmctld.url", burl, "--slurmctld.min-interval", "0", "--slurmctld.jobs.min-interval",
		   "60", NULL);
	http("GET", s.port, "/metrics", &r, 10000);
	assert_int_equal(r.status, 200);
	buf_free(&r.body);
	assert_int_equal(stat_count(a.port, "jobs-users-accts"), 1);
	stop(&a);
	http("GET", s.port, "/metrics", &r, 10000);
	assert_int_equal(r.status, 200);
	assert_true(has_role(r.body.data, b.port, "primary"));
	assert_true(has_line(r.body.data, "slurm_exporter_shim_up{endpoint=\"jobs-users-accts\"} 1"));
	buf_free(&r.body);
	assert_int_equal(stat_count(b.port, "nodes"), 1);
	assert_int_equal(stat_count(b.port, "jobs-users-accts"), 1);       /* not A's cached walk */
	assert_int_equal(stat_count(b.port, "partitions"), 1);
	http("GET", s.port, "/metrics", &r, 10000);            /* B's walk is reused within the interval */
	buf_free(&r.body);
	assert_int_equal(stat_count(b.port, "jobs-users-accts"), 1);
	stop(&s);
	stop(&b);
}

/* A controller is the primary only when some of its answers are usable: a first
 * controller answering 500, 404, 401, or a 200 of which nothing is usable (empty, cut in its
 * headers) is passed over (role unusable, with its first reason) and the healthy second one is
 * asked and read, and first from then on. Before: the first was taken as the primary, 503. */
static void test_ha_unusable_first(void **state)
{
	(void)state;
	static const char *const faults[] = { "500", "404", "401", "empty", "cuthead" };
	static const char *const why[] = { "HTTP status 500", "404 Not Found", "401 Unauthorized", "empty answer",
					   "ended inside its headers" };
	for (size_t i = 0; i < sizeof(faults) / sizeof(faults[0]); i++) {
		struct proc a, b, s;
		struct resp r;
		char burl[64], want[300];
		fake_start(&a, STATE, "--fault", faults[i], NULL);
		fake_start(&b, STATE, NULL);
		snprintf(burl, sizeof(burl), "http://127.0.0.1:%u", b.port);
		shim_start(&s, a.port, "--slurmctld.url", burl, "--slurmctld.min-interval", "0",
			   "--slurmctld.jobs.min-interval", "0", NULL);
		http("GET", s.port, "/metrics", &r, 10000);
		if (r.status != 200 || !strstr(r.body.data, "\nslurm_cpus_total 44\n") || !has_role(r.body.data, b.port, "primary") ||
		    !has_role(r.body.data, a.port, "unusable"))
			fail_msg("first controller answering %s: status %ld, body:\n%s", faults[i], r.status, r.body.data);
		buf_free(&r.body);
		http("GET", s.port, "/", &r, 5000);
		snprintf(want, sizeof(want), "<tr><td><code>http://127.0.0.1:%u</code></td><td class=\"off\">unusable</td>"
			 "<td class=\"err\">unusable (/metrics/", a.port);
		if (!strstr(r.body.data, want) || !strstr(r.body.data, why[i]))
			fail_msg("%s: the status page does not say why:\n%s", faults[i], r.body.data);
		buf_free(&r.body);
		http("GET", s.port, "/metrics", &r, 10000); /* B, the primary, first: A not asked again */
		assert_int_equal(r.status, 200);
		buf_free(&r.body);
		assert_int_equal(stat_count(a.port, "nodes"), 1);
		assert_int_equal(stat_count(b.port, "nodes"), 2);
		stop(&s);
		stop(&b);
		stop(&a);
	}
}

/* A single --slurmctld.url gives the one-controller guarantee of a list: one endpoint
 * answering 303 elsewhere while the others answer is not followed (that endpoint fails, the other
 * host gets nothing); a standby's 303s on every endpoint are followed to the origin they point at,
 * learnt as a controller of its own (no token), and a job walk cached from the URL is not served
 * with that host's answers, nor the host's after the URL is the primary again. Before: each
 * endpoint followed its own 303, and answers of both hosts were served as one. Once the URL is
 * the primary again, the host (not asked) is role "unknown", not a second "primary" (before: live,
 * one URL at the standby, a takeover left controller_info with two primaries). */
static void test_ha_single_url_no_mixing(void **state)
{
	(void)state;
	struct proc p, u, s;
	struct resp r;
	char pport[16], want[200];
	tu_write(tu_tmp("token-single"), "tok-SECRET-19\n");
	fake_start(&p, STATE, NULL);
	snprintf(pport, sizeof(pport), "%u", p.port);
	fake_start(&u, STATE, "--fault", "redirect", "--fault-endpoint", "partitions", "--redirect-port", pport, NULL);
	shim_start(&s, u.port, NULL);
	http("GET", s.port, "/metrics", &r, 10000);
	assert_int_equal(r.status, 200);
	assert_non_null(strstr(r.body.data, "\nslurm_cpus_total 44\n"));
	assert_non_null(strstr(r.body.data, "slurm_exporter_shim_up{endpoint=\"partitions\"} 0\n"));
	buf_free(&r.body);
	assert_int_equal(stat_count(p.port, "partitions"), 0);
	assert_int_equal(fake_requests(p.port), 0);
	stop(&s);
	char *log = tu_slurp(s.log, NULL);
	snprintf(want, sizeof(want), "/metrics/partitions failed: slurmctld http://127.0.0.1:%u: redirected to "
		 "http://127.0.0.1:%u/metrics/partitions: not followed", u.port, p.port);
	assert_non_null(strstr(log, want));
	free(log);
	stop(&u);

	fake_start(&u, STATE, "--redirect-port", pport, NULL);
	shim_start(&s, u.port, "--slurmctld.min-interval", "0", "--slurmctld.jobs.min-interval", "60",
		   "--slurmctld.auth.token-file", tu_tmp("token-single"), NULL);
	http("GET", s.port, "/metrics", &r, 10000);
	assert_int_equal(r.status, 200);
	buf_free(&r.body);
	assert_int_equal(stat_count(u.port, "jobs-users-accts"), 1);
	set_role(&u, "standby"); /* every endpoint: 303 to P */
	http("GET", s.port, "/metrics", &r, 10000);
	assert_int_equal(r.status, 200);
	assert_int_equal(stat_count(p.port, "jobs-users-accts"), 1); /* not U's cached walk */
	assert_int_equal(stat_count(p.port, "partitions"), 1);
	assert_true(has_role(r.body.data, u.port, "standby"));
	assert_true(has_role(r.body.data, p.port, "primary"));
	assert_true(has_line(r.body.data, "slurm_exporter_shim_up{endpoint=\"jobs-users-accts\"} 1"));
	buf_free(&r.body);
	http("GET", p.port, "/_last_request", &r, 5000);
	assert_null(strstr(r.body.data, "SECRET"));
	buf_free(&r.body);
	http("GET", s.port, "/metrics", &r, 10000); /* P's walk reused; P reached through U's 303 only */
	assert_int_equal(r.status, 200);
	buf_free(&r.body);
	assert_int_equal(stat_count(p.port, "jobs-users-accts"), 1);
	assert_int_equal(stat_count(u.port, "nodes"), 3);
	set_role(&u, "primary"); /* back: U's answers only, P's walks fetched again from U */
	http("GET", s.port, "/metrics", &r, 10000);
	assert_int_equal(r.status, 200);
	assert_true(has_role(r.body.data, u.port, "primary"));
	/* P, not asked (reached only through U's 303), is no longer shown as a second primary */
	assert_false(has_role(r.body.data, p.port, "primary"));
	assert_true(has_role(r.body.data, p.port, "unknown"));
	assert_true(has_line(r.body.data, "slurm_exporter_shim_controller_switches_total 2"));
	buf_free(&r.body);
	assert_int_equal(stat_count(u.port, "jobs-users-accts"), 3); /* 1, its 303 when P's was fetched, 1 */
	assert_int_equal(stat_count(p.port, "nodes"), 2);
	stop(&s);
	stop(&u);
	stop(&p);
}

/* A failback keeps the scrape inside its deadline: B, read after a failover, hangs
 * as it returns to standby while A is the primary again. B, tried first, has sent nothing by its
 * share of the scrape's time (X-Prometheus-Scrape-Timeout-Seconds 4: 3.5 s), so A is asked
 * alongside and answers: 200 within the deadline, although --slurmctld.timeout is 10 s. Before: B
 * used the whole timeout, and the scrape answered 503 at its deadline (live: a 10.0 s scrape). */
static void test_ha_failback_hang_deadline(void **state)
{
	(void)state;
	struct proc a, b, s;
	struct resp r;
	char aport[16], burl[64];
	fake_start(&a, STATE, NULL);
	snprintf(aport, sizeof(aport), "%u", a.port);
	fake_start(&b, STATE, "--redirect-port", aport, NULL);
	set_role(&b, "standby");
	snprintf(burl, sizeof(burl), "http://127.0.0.1:%u", b.port);
	shim_start(&s, a.port, "--slurmctld.url", burl, "--slurmctld.min-interval", "0", "--slurmctld.jobs.min-interval",
		   "0", NULL);
	stop(&a); /* failover */
	set_role(&b, "primary");
	http("GET", s.port, "/metrics", &r, 10000);
	assert_int_equal(r.status, 200);
	assert_true(has_role(r.body.data, b.port, "primary"));
	buf_free(&r.body);
	fake_start_at(&a, a.port, STATE, aport); /* failback: A primary, B hangs on its way to standby */
	http("GET", b.port, "/_fault/hang", &r, 5000);
	assert_int_equal(r.status, 200);
	buf_free(&r.body);
	double t0 = now_s();
	http_hdr("GET", s.port, "/metrics", "X-Prometheus-Scrape-Timeout-Seconds: 4", &r, 10000);
	double took = now_s() - t0;
	if (r.status != 200 || took > 3.6 || !has_role(r.body.data, a.port, "primary") || !has_role(r.body.data, b.port, "down"))
		fail_msg("failback with a hung controller: status %ld after %.2f s, body:\n%s", r.status, took, r.body.data);
	assert_true(has_line(r.body.data, "slurm_exporter_shim_controller_switches_total 1"));
	buf_free(&r.body);
	http("GET", b.port, "/_fault/none", &r, 5000);
	buf_free(&r.body);
	stop(&s);
	stop(&b);
	stop(&a);
}

/* The list is split once, every element checked; the error names the bad one. */
static void test_ha_url_list(void **state)
{
	(void)state;
	char *err = NULL;
	char *argv[] = { (char *)tu_shim_bin(), "--slurmctld.url", "http://a:6817,ftp://b:6817", "--once", NULL };
	assert_int_not_equal(tu_run(argv, NULL, NULL, NULL, &err), 0);
	assert_non_null(strstr(err, "flag --slurmctld.url: value \"ftp://b:6817\" is not an http:// or https:// URL"));
	free(err);
	char big[2100];
	memset(big, 'a', sizeof(big) - 1);
	memcpy(big, "http://", 7);
	big[sizeof(big) - 1] = '\0';
	char *twice[] = { (char *)tu_shim_bin(), "--slurmctld.url", big, "--slurmctld.url", big, "--once", NULL };
	assert_int_not_equal(tu_run(twice, NULL, NULL, NULL, &err), 0);
	assert_non_null(strstr(err, "flag --slurmctld.url: the controller list is longer than 4095 bytes"));
	free(err);
	struct controllers *c = controllers_new("http://a:6817,https://b:6817,HTTP://c");
	assert_null(controllers_error(c));
	assert_int_equal(controllers_count(c), 3);
	assert_string_equal(controllers_url(c, 1), "https://b:6817");
	assert_int_equal(controllers_learn(c, "http://d:6817"), -1); /* a list never learns */
	size_t order[CONTROLLERS_MAX];
	assert_int_equal(controllers_order(c, order), 3);
	assert_int_equal(order[0], 0);
	controllers_seen(c, 2, ROLE_PRIMARY, NULL);
	controllers_answered(c, 2);
	controllers_order(c, order);
	assert_int_equal(order[0], 2); /* the last one that answered first */
	assert_int_equal(order[1], 0);
	assert_int_equal(order[2], 1);
	controllers_seen(c, 2, ROLE_DOWN, "down (Timeout was reached)");
	controllers_seen(c, 0, ROLE_DOWN, "down (Couldn't connect to server)");
	controllers_order(c, order);
	assert_int_equal(order[0], 1); /* the ones seen down last, the one seen down longest ago first */
	assert_int_equal(order[1], 2);
	assert_int_equal(order[2], 0);
	/* all down: they take turns (a hung one, tried and seen down on every fetch, goes behind the
	 * others; in config order it would be tried first every time and the others never) */
	controllers_seen(c, 1, ROLE_DOWN, "down (Couldn't connect to server)");
	controllers_order(c, order);
	assert_int_equal(order[0], 2);
	controllers_seen(c, 2, ROLE_DOWN, "down (Timeout was reached)");
	controllers_order(c, order);
	assert_int_equal(order[0], 0);
	assert_int_equal(order[1], 1);
	assert_int_equal(order[2], 2);
	controllers_free(c);
	c = controllers_new("http://a:6817,,http://c");
	assert_non_null(controllers_error(c));
	assert_non_null(strstr(controllers_error(c), "element 2 \"\""));
	controllers_free(c);
}

/* One URL check for --slurmctld.url (each element), --slurmrestd.url, --compare-legacy, the targets
 * file and controllers_new (upstream_url_is_valid); more than CONTROLLERS_MAX controllers are refused at
 * start, by the flag and by the targets file (before: accepted, then every fetch failed). */
static void test_ha_url_checks(void **state)
{
	(void)state;
	static const struct { const char *url; int ok, unix_ok; } cases[] = {
		{ "http://a:6817", 1, 1 }, { "HTTPS://a", 1, 1 }, { "http://", 0, 0 }, { "https://", 0, 0 },
		{ "unix:/run/s.sock", 0, 1 }, { "unix:", 0, 0 }, { "ftp://a", 0, 0 }, { "http://a b", 0, 0 },
		{ " http://a", 0, 0 }, { "http://a\x7f", 0, 0 }, { "http://\xc3\xa9", 0, 0 }, { "a:6817", 0, 0 },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *u = cases[i].url;
		if (upstream_url_is_valid(u, strlen(u), 0) != cases[i].ok || upstream_url_is_valid(u, strlen(u), 1) != cases[i].unix_ok)
			fail_msg("upstream_url_is_valid(\"%s\")", u);
	}
	struct controllers *c = controllers_new("http://a, http://b");
	assert_non_null(strstr(controllers_error(c), "element 2 \" http://b\" is not an http:// or https:// URL"));
	controllers_free(c);
	c = controllers_new("unix:/run/slurmctld.sock");
	assert_non_null(controllers_error(c));
	controllers_free(c);

	char *err = NULL, nine[400] = "";
	for (int i = 0; i < CONTROLLERS_MAX + 1; i++)
		snprintf(nine + strlen(nine), sizeof(nine) - strlen(nine), "%shttp://c%d:6817", i ? "," : "", i);
	char *argv[] = { (char *)tu_shim_bin(), "--slurmctld.url", nine, "--once", NULL };
	assert_int_equal(tu_run(argv, NULL, NULL, NULL, &err), 2);
	assert_non_null(strstr(err, "flag --slurmctld.url: more than 8 controllers"));
	free(err);
	/* 8 given as 4 and 4 (the flag twice) are accepted, and a ninth given again is not */
	const char *four = "http://c0,http://c1,http://c2,http://c3", *more = "http://c4,http://c5,http://c6,http://c7";
	char *ok[] = { (char *)tu_shim_bin(), "--slurmctld.url", (char *)four, "--slurmctld.url", (char *)more,
		       "--check-mapping", MAPPING, NULL };
	assert_int_equal(tu_run(ok, NULL, NULL, NULL, &err), 0);
	free(err);
	char *again[] = { (char *)tu_shim_bin(), "--slurmctld.url", (char *)four, "--slurmctld.url", (char *)more,
			  "--slurmctld.url", "http://c8", "--check-mapping", MAPPING, NULL };
	assert_int_equal(tu_run(again, NULL, NULL, NULL, &err), 2);
	assert_non_null(strstr(err, "flag --slurmctld.url: more than 8 controllers"));
	free(err);
	char *space[] = { (char *)tu_shim_bin(), "--slurmrestd.url", "http://a b", "--check-mapping", MAPPING, NULL };
	assert_int_equal(tu_run(space, NULL, NULL, NULL, &err), 2);
	assert_non_null(strstr(err, "flag --slurmrestd.url: value \"http://a b\""));
	free(err);
	char *bare[] = { (char *)tu_shim_bin(), "--compare-legacy", "http://", "--check-mapping", MAPPING, NULL };
	assert_int_equal(tu_run(bare, NULL, NULL, NULL, &err), 2);
	free(err);
	tu_write(tu_tmp("nine.yml"), "targets:\n  big:\n    slurmctld_url: [http://c0, http://c1, http://c2, http://c3, "
					   "http://c4, http://c5, http://c6, http://c7, http://c8]\n");
	char *probe[] = { (char *)tu_shim_bin(), "--probe.targets-file", (char *)tu_tmp("nine.yml"), "--mapping.file", MAPPING,
			  "--once", NULL };
	assert_int_equal(tu_run(probe, NULL, NULL, NULL, &err), 2);
	assert_non_null(strstr(err, "slurmctld_url: more than 8 controllers"));
	free(err);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_ha_failover_failback, kill_children),
		cmocka_unit_test_teardown(test_ha_redirect_not_configured, kill_children),
		cmocka_unit_test_teardown(test_ha_redirect_to_configured, kill_children),
		cmocka_unit_test_teardown(test_ha_hung_controller, kill_children),
		cmocka_unit_test_teardown(test_ha_all_down, kill_children),
		cmocka_unit_test_teardown(test_ha_no_mixing, kill_children),
		cmocka_unit_test_teardown(test_ha_unusable_first, kill_children),
		cmocka_unit_test_teardown(test_ha_single_url_no_mixing, kill_children),
		cmocka_unit_test_teardown(test_ha_failback_hang_deadline, kill_children),
		cmocka_unit_test(test_ha_url_list),
		cmocka_unit_test(test_ha_url_checks),
	};
	return http_fixture_run("http_ha", tests, sizeof(tests) / sizeof(tests[0]));
}
