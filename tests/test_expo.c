/* test_expo.c: the exposition parser, on slurmctld's real quirks and on bad input. */
#include "testutil.h"

#include <glob.h>
#include <math.h>

#include "expo.h"
#include "source.h"

static const struct expo_sample *sample(const struct expo *e, const char *fam, size_t i)
{
	const struct expo_family *f = expo_find(e, fam, strlen(fam));
	assert_non_null(f);
	assert_true(i < f->n);
	return &f->samples[i];
}

static void label_is(const struct expo_sample *s, size_t i, const char *name, const char *value)
{
	assert_true(i < s->nlabels);
	assert_int_equal(s->labels[i].nlen, strlen(name));
	assert_memory_equal(s->labels[i].name, name, strlen(name));
	assert_int_equal(s->labels[i].vlen, strlen(value));
	assert_memory_equal(s->labels[i].value, value, strlen(value));
}

static void test_basic_families(void **state)
{
	(void)state;
	const char *t = "# HELP slurm_nodes Total number of nodes\n# TYPE slurm_nodes gauge\nslurm_nodes 4\n"
			"# HELP slurm_node_cpus Total\n# TYPE slurm_node_cpus gauge\n"
			"slurm_node_cpus{node=\"n1\"} 4\nslurm_node_cpus{node=\"n2\"} 8\n";
	struct expo e;
	expo_init(&e);
	assert_int_equal(expo_parse(&e, t, strlen(t), 0), 0);
	assert_int_equal(e.nfams, 2);
	assert_int_equal(e.nsamples, 3);
	assert_true(sample(&e, "slurm_nodes", 0)->value == 4);
	assert_int_equal(expo_find(&e, "slurm_nodes", 11)->type, EXPO_GAUGE);
	label_is(sample(&e, "slurm_node_cpus", 1), 0, "node", "n2");
	assert_true(sample(&e, "slurm_node_cpus", 1)->value == 8);
	assert_null(expo_find(&e, "slurm_node", 10));
	expo_free(&e);
}

/* slurmctld 25.11 writes label values verbatim: the true value is recovered. */
static void test_unescaped_label_value(void **state)
{
	(void)state;
	const char *t = "slurm_account_jobs_pending{account=\"odd\"acct\\\\x y\"} 1\n"
			"slurm_account_jobs_pending{account=\"a,b=\\\"c\"} 2\n"
			"x{a=\"q\"r\",b=\"s\"} 3\n";
	struct expo e;
	expo_init(&e);
	assert_int_equal(expo_parse(&e, t, strlen(t), 0), 0);
	label_is(sample(&e, "slurm_account_jobs_pending", 0), 0, "account", "odd\"acct\\\\x y");
	label_is(sample(&e, "slurm_account_jobs_pending", 1), 0, "account", "a,b=\\\"c");
	label_is(sample(&e, "x", 0), 0, "a", "q\"r");
	label_is(sample(&e, "x", 0), 1, "b", "s");
	expo_free(&e);
}

static void test_strict_escapes(void **state)
{
	(void)state;
	const char *t = "m{a=\"odd\\\"acct\\\\\\\\x y\",b=\"l1\\nl2\"} 1\n";
	struct expo e;
	expo_init(&e);
	assert_int_equal(expo_parse(&e, t, strlen(t), EXPO_STRICT), 0);
	label_is(sample(&e, "m", 0), 0, "a", "odd\"acct\\\\x y");
	label_is(sample(&e, "m", 0), 1, "b", "l1\nl2");
	expo_free(&e);
	const char *bad = "m{a=\"x\\q\"} 1\n";
	expo_init(&e);
	assert_int_equal(expo_parse(&e, bad, strlen(bad), EXPO_STRICT), 1);
	assert_string_equal(e.errors[0].reason, "invalid escape in label value");
	expo_free(&e);
}

/* A labelled family may hold one unlabelled sample (jobs without an account). */
static void test_unlabelled_in_labelled_family(void **state)
{
	(void)state;
	const char *t = "slurm_account_jobs_running{account=\"biology\"} 8\nslurm_account_jobs_running 1\n";
	struct expo e;
	expo_init(&e);
	assert_int_equal(expo_parse(&e, t, strlen(t), 0), 0);
	assert_int_equal(sample(&e, "slurm_account_jobs_running", 1)->nlabels, 0);
	assert_true(sample(&e, "slurm_account_jobs_running", 1)->value == 1);
	expo_free(&e);
}

static void test_values_timestamps_eof_crlf(void **state)
{
	(void)state;
	const char *t = "a 1.5e3 1700000000000\r\nb NaN\r\nc +Inf\nd -Inf\ne -2.25\nf 18446744073709551615\n"
			"g{l=\"v\"} 7 123\n\n# just a comment\n# EOF\n";
	struct expo e;
	expo_init(&e);
	assert_int_equal(expo_parse(&e, t, strlen(t), 0), 0);
	assert_true(sample(&e, "a", 0)->value == 1500);
	assert_true(isnan(sample(&e, "b", 0)->value));
	assert_true(isinf(sample(&e, "c", 0)->value) && sample(&e, "c", 0)->value > 0);
	assert_true(isinf(sample(&e, "d", 0)->value) && sample(&e, "d", 0)->value < 0);
	assert_true(sample(&e, "e", 0)->value == -2.25);
	assert_true(sample(&e, "f", 0)->value == 18446744073709551615.0);
	assert_true(sample(&e, "g", 0)->value == 7);
	expo_free(&e);
}

/* Numbers as Prometheus' parser (Go's strconv.ParseFloat) reads them: a finite literal past the
 * largest double is an error, not +Inf; an underflow is 0 or a subnormal, not an error; the
 * spellings of infinity and NaN stay valid. */
static void test_value_range(void **state)
{
	(void)state;
	static const char *const bad[] = { "1e309", "-1e309", "+1e309", "1.8e308", "999999999e300" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char line[64];
		struct expo e;
		expo_init(&e);
		snprintf(line, sizeof(line), "ok 1\nx %s\n", bad[i]);
		assert_int_equal(expo_parse(&e, line, strlen(line), 0), 1);
		assert_string_equal(e.errors[0].reason, "invalid sample value");
		assert_null(expo_find(&e, "x", 1));
		expo_free(&e);
		snprintf(line, sizeof(line), "x 1 %s\n", bad[i]); /* nor as a timestamp */
		expo_init(&e);
		assert_int_equal(expo_parse(&e, line, strlen(line), 0), 1);
		expo_free(&e);
	}
	const char *t = "a 1e-400\nb -1e-400\nc 4.9e-324\nd 1.7976931348623157e308\ne Inf\nf +Inf\ng -Inf\nh NaN\n";
	struct expo e;
	expo_init(&e);
	assert_int_equal(expo_parse(&e, t, strlen(t), 0), 0);
	assert_true(sample(&e, "a", 0)->value == 0);
	assert_true(sample(&e, "b", 0)->value == 0);
	assert_true(sample(&e, "c", 0)->value > 0 && sample(&e, "c", 0)->value < 1e-323);
	assert_true(sample(&e, "d", 0)->value == 1.7976931348623157e308);
	assert_true(isinf(sample(&e, "e", 0)->value) && isinf(sample(&e, "f", 0)->value));
	assert_true(isinf(sample(&e, "g", 0)->value) && sample(&e, "g", 0)->value < 0);
	assert_true(isnan(sample(&e, "h", 0)->value));
	expo_free(&e);
}

/* Malformed lines: counted with their line number, skipped whole, never a sample. */
static void test_malformed_lines(void **state)
{
	(void)state;
	const char *t = "ok 1\n"
			"bad{node=\"n1\" 2\n"    /* line 2: unterminated */
			"bad2 twelve\n"          /* line 3: bad value */
			"{x=\"y\"} 3\n"          /* line 4: no name */
			"bad3 1 notatimestamp\n" /* line 5 */
			"bad4{1x=\"v\"} 1\n"     /* line 6 */
			"# TYPE ok wibble\n"     /* line 7 */
			"ok2 2\n";
	struct expo e;
	expo_init(&e);
	assert_int_equal(expo_parse(&e, t, strlen(t), 0), 6);
	assert_int_equal(e.errors[0].line, 2);
	assert_int_equal(e.errors[1].line, 3);
	assert_string_equal(e.errors[1].reason, "invalid sample value");
	assert_int_equal(e.errors[2].line, 4);
	assert_int_equal(e.errors[5].line, 7);
	assert_int_equal(e.nsamples, 2);
	assert_null(expo_find(&e, "bad", 3));
	assert_null(expo_find(&e, "bad2", 4));
	expo_free(&e);
}

/* A body cut mid-line: "12" of "123" must not become a value. */
static void test_truncated_last_line(void **state)
{
	(void)state;
	const char *t = "a 1\nb 12";
	struct expo e;
	expo_init(&e);
	assert_int_equal(expo_parse(&e, t, strlen(t), 0), 1);
	assert_int_equal(e.errors[0].line, 2);
	assert_null(expo_find(&e, "b", 1));
	expo_free(&e);
}

static void test_duplicate_series(void **state)
{
	(void)state;
	const char *t = "m{a=\"1\"} 1\nm{a=\"2\"} 2\nm{a=\"1\"} 3\nn 1\n";
	struct expo e;
	expo_init(&e);
	assert_int_equal(expo_parse(&e, t, strlen(t), 0), 0);
	assert_true(expo_find(&e, "m", 1)->duplicate);
	assert_false(expo_find(&e, "n", 1)->duplicate);
	expo_free(&e);
}

/* Labels are kept sorted so equal sets hash equal whatever the input order. */
static void test_label_order(void **state)
{
	(void)state;
	const char *t = "m{b=\"2\",a=\"1\"} 1\nm2{a=\"1\",b=\"2\"} 1\n";
	struct expo e;
	expo_init(&e);
	assert_int_equal(expo_parse(&e, t, strlen(t), 0), 0);
	label_is(sample(&e, "m", 0), 0, "a", "1");
	assert_true(sample(&e, "m", 0)->hash == sample(&e, "m2", 0)->hash);
	expo_free(&e);
}

/* Everything a parse produced, as text: families in order with type, duplicate flag, samples
 * (labels, value bits, hash), the counts and the errors. */
static char *dump(const struct expo *e)
{
	struct buf b;
	buf_init(&b, 0);
	for (size_t k = 0; k < e->nfams; k++) {
		const struct expo_family *f = &e->fams[k];
		buf_printf(&b, "%.*s type=%d dup=%d n=%zu\n", (int)f->nlen, f->name, (int)f->type, f->duplicate, f->n);
		for (size_t i = 0; i < f->n; i++) {
			const struct expo_sample *s = &f->samples[i];
			uint64_t bits;
			memcpy(&bits, &s->value, sizeof(bits));
			buf_printf(&b, " %016llx %016llx", (unsigned long long)bits, (unsigned long long)s->hash);
			for (uint32_t l = 0; l < s->nlabels; l++)
				buf_printf(&b, " %.*s=[%.*s]", (int)s->labels[l].nlen, s->labels[l].name, (int)s->labels[l].vlen,
					   s->labels[l].value);
			buf_putc(&b, '\n');
		}
	}
	buf_printf(&b, "samples=%zu lines=%zu errors=%zu\n", e->nsamples, e->nlines, e->nerrors);
	for (size_t i = 0; i < e->nerrors && i < EXPO_MAX_ERRORS; i++)
		buf_printf(&b, "error line %zu: %s\n", e->errors[i].line, e->errors[i].reason);
	return buf_steal(&b, NULL);
}

static int keep_not_b(const char *name, size_t len, void *ctx)
{
	(void)ctx;
	return !(len >= 1 && name[0] == 'b');
}

/* expo_feed in pieces of `chunk` bytes, each from a scratch buffer that is scribbled over as soon
 * as the call returns: what the expo keeps must be its own. */
static char *dump_fed(const char *body, size_t len, size_t chunk, int filter, size_t *errors)
{
	struct expo e;
	char *scratch = xmalloc(chunk);
	expo_init_keep(&e, filter ? keep_not_b : NULL, NULL);
	for (size_t off = 0; off < len; off += chunk) {
		size_t n = len - off < chunk ? len - off : chunk;
		memcpy(scratch, body + off, n);
		expo_feed(&e, scratch, n, 0);
		memset(scratch, '#', chunk);
	}
	*errors = expo_feed_end(&e, 0);
	char *d = dump(&e);
	expo_free(&e);
	free(scratch);
	return d;
}

static void feed_equals_parse(const char *body, size_t len)
{
	static const size_t chunks[] = { 1, 2, 3, 5, 16, 100, 4096, 16384 };
	for (int filter = 0; filter < 2; filter++) {
		struct expo e;
		expo_init_keep(&e, filter ? keep_not_b : NULL, NULL);
		size_t want_errors = expo_parse(&e, body, len, 0);
		char *want = dump(&e);
		expo_free(&e);
		for (size_t c = 0; c < sizeof(chunks) / sizeof(chunks[0]); c++) {
			size_t errors;
			char *got = dump_fed(body, len, chunks[c], filter, &errors);
			if (strcmp(got, want) || errors != want_errors)
				fail_msg("pieces of %zu bytes (filter %d):\n%s\nwhole body:\n%s", chunks[c], filter, got, want);
			free(got);
		}
		free(want);
	}
}

/* A body parsed as it arrives, in pieces of any size, gives exactly what the whole body gives. */
static void test_feed_in_pieces(void **state)
{
	(void)state;
	static const char *const bodies[] = {
		("# HELP a help\n# TYPE a gauge\na{node=\"n1\",x=\"y\"} 1\na{node=\"n2\",x=\"y\"} 2\na 3\n"
		 "# TYPE b counter\nb{node=\"n1\",x=\"y\"} 4\nbb{node=\"n1\"} 5\nc{node=\"n1\",x=\"y\"} 6\nc{node=\"n2\",x=\"z\"} 7\n"),
		"m{account=\"odd\"acct\\\\x y\"} 1\r\nm{account=\"plain\"} 2\r\n\r\nm2 +Inf 123\n# EOF\n",
		"ok 1\nbad{node=\"n1\" 2\nbad2 twelve\n{x=\"y\"} 3\nok2 2\nok2 3\nb 1\nb 2\n",
		"a 1\nb 12",
		"a 1\n# EOF\nb 2\n",
		"m{a=\"1\"} 1\nm{a=\"2\"} 2\nm{a=\"1\"} 3\nn{a=\"1\"} 1\nn{a=\"2\"} 1\n",
		"",
		"\n\n",
	};
	for (size_t i = 0; i < sizeof(bodies) / sizeof(bodies[0]); i++)
		feed_equals_parse(bodies[i], strlen(bodies[i]));
	static const char *const real[] = { "tests/fixtures/slurm-25.11/02-busy-mix/metrics_nodes.txt",
					    "tests/fixtures/slurm-25.11/03-drain-down-cancel/metrics_jobs-users-accts.txt",
					    "tests/fixtures/slurm-26.05/02-busy-gpu/metrics_jobs.txt" };
	for (size_t i = 0; i < sizeof(real) / sizeof(real[0]); i++) {
		size_t len;
		char *body = tu_slurp(real[i], &len);
		assert_non_null(body);
		feed_equals_parse(body, len);
		free(body);
	}
}

/* A line longer than EXPO_MAX_LINE is refused while it streams in (never buffered whole); the
 * lines around it are unharmed. */
static void test_feed_line_too_long(void **state)
{
	(void)state;
	size_t big = EXPO_MAX_LINE + 10;
	struct buf b;
	buf_init(&b, 0);
	buf_puts(&b, "a 1\nhuge{v=\"");
	for (size_t i = 0; i < big; i++)
		buf_putc(&b, 'x');
	buf_puts(&b, "\"} 1\nz 2\n");
	for (int pass = 0; pass < 2; pass++) {
		size_t chunk = pass ? 65536 : b.len; /* streamed, and in one piece */
		struct expo e;
		expo_init(&e);
		for (size_t off = 0; off < b.len; off += chunk) {
			expo_feed(&e, b.data + off, b.len - off < chunk ? b.len - off : chunk, 0);
			assert_true(expo_pending(&e) <= EXPO_MAX_LINE);
		}
		assert_int_equal(expo_feed_end(&e, 0), 1);
		assert_int_equal(e.errors[0].line, 2);
		assert_string_equal(e.errors[0].reason, "line longer than 1 MiB");
		assert_non_null(expo_find(&e, "a", 1));
		assert_non_null(expo_find(&e, "z", 1));
		assert_null(expo_find(&e, "huge", 4));
		assert_int_equal(e.nlines, 3);
		expo_free(&e);
	}
	buf_free(&b);
}

static int keep_only_a(const char *name, size_t len, void *ctx)
{
	(void)ctx;
	return len == 1 && name[0] == 'a';
}

/* Families nobody reads cost nothing: a body of 200,000 TYPE, HELP and sample lines of unread
 * families leaves the expo as empty as it was (no family, no hash table, no arena bytes), fed in
 * pieces or parsed whole, and their lines are still checked and counted. */
static void test_unread_families_kept_nowhere(void **state)
{
	(void)state;
	struct buf b;
	buf_init(&b, 0);
	buf_puts(&b, "# TYPE a gauge\na 1\n");
	for (size_t i = 0; i < 200000; i++)
		buf_printf(&b, "# HELP zz_%zu h\n# TYPE zz_%zu gauge\n# just a comment\nzz_%zu{node=\"n%zu\"} 1\n", i, i, i, i);
	for (int pass = 0; pass < 2; pass++) {
		struct expo e;
		expo_init_keep(&e, keep_only_a, NULL);
		if (pass) {
			for (size_t off = 0; off < b.len; off += 4096)
				expo_feed(&e, b.data + off, b.len - off < 4096 ? b.len - off : 4096, 0);
			assert_int_equal(expo_feed_end(&e, 0), 0);
		} else {
			assert_int_equal(expo_parse(&e, b.data, b.len, 0), 0);
		}
		assert_int_equal(e.nfams, 1);
		assert_true(e.fidx.mask + 1 <= 64);
		assert_true(e.arena.peak <= 4096);
		assert_int_equal(e.nnamed, 2 + 2 * 200000);
		assert_non_null(expo_find(&e, "a", 1));
		assert_null(expo_find(&e, "zz_7", 4));
		expo_free(&e);
	}
	buf_free(&b);
}

/* What a capture says, read line by line without the parser: each family (named by a TYPE, HELP or
 * sample line), its TYPE, its sample lines and the sum of their values (the last field). */
struct text_family {
	char name[128], type[16];
	size_t n;
	double sum;
};

static struct text_family *text_family(struct text_family *f, size_t *n, const char *name, size_t len)
{
	for (size_t i = 0; i < *n; i++)
		if (strlen(f[i].name) == len && !memcmp(f[i].name, name, len))
			return &f[i];
	assert_true(*n < 512 && len < sizeof(f->name));
	memset(&f[*n], 0, sizeof(*f));
	memcpy(f[*n].name, name, len);
	return &f[(*n)++];
}

static size_t read_text(char *body, struct text_family *f, size_t *samples)
{
	size_t n = 0;
	*samples = 0;
	for (char *line = strtok(body, "\n"); line; line = strtok(NULL, "\n")) {
		line[strcspn(line, "\r")] = '\0';
		if (!strncmp(line, "# TYPE ", 7) || !strncmp(line, "# HELP ", 7)) {
			char *name = line + 7;
			size_t len = strcspn(name, " ");
			struct text_family *t = text_family(f, &n, name, len);
			if (line[2] == 'T')
				snprintf(t->type, sizeof(t->type), "%s", name + len + (name[len] ? 1 : 0));
		} else if (line[0] && line[0] != '#') {
			struct text_family *t = text_family(f, &n, line, strcspn(line, "{ "));
			t->n++;
			t->sum += strtod(strrchr(line, ' ') + 1, NULL);
			(*samples)++;
		}
	}
	return n;
}

/* Every real capture (every state, every slurmctld endpoint) parses without an error into exactly
 * the families, types, samples and values its text holds. */
static void test_real_captures(void **state)
{
	(void)state;
	static const char *const dirs[] = { "tests/fixtures/slurm-*/*/", "tests/fixtures/slurm-*/config-variants/*/" };
	static struct text_family want[512];
	size_t checked = 0, samples = 0;
	for (size_t d = 0; d < 2; d++) {
		glob_t g;
		if (glob(dirs[d], GLOB_ONLYDIR, NULL, &g))
			continue;
		for (size_t i = 0; i < g.gl_pathc; i++)
			for (int id = 0; id < SRC_NATIVE_COUNT; id++) {
				char path[512];
				size_t len, nsamples;
				snprintf(path, sizeof(path), "%s%s", g.gl_pathv[i], sources[id].file);
				char *body = tu_slurp(path, &len);
				if (!body)
					continue;
				struct expo e;
				expo_init(&e);
				if (expo_parse(&e, body, len, 0))
					fail_msg("%s: %zu malformed line(s), first at %zu: %s", path, e.nerrors, e.errors[0].line,
						 e.errors[0].reason);
				char *copy = xstrndup(body, len);
				size_t nfams = read_text(copy, want, &nsamples);
				if (e.nfams != nfams || e.nsamples != nsamples)
					fail_msg("%s: %zu families and %zu samples parsed, the text has %zu and %zu", path, e.nfams,
						 e.nsamples, nfams, nsamples);
				for (size_t k = 0; k < nfams; k++) {
					const struct expo_family *f = expo_find(&e, want[k].name, strlen(want[k].name));
					if (!f || f->n != want[k].n)
						fail_msg("%s: family %s: %zu samples parsed, %zu in the text", path, want[k].name,
							 f ? f->n : 0, want[k].n);
					double sum = 0;
					for (size_t j = 0; j < f->n; j++)
						sum += f->samples[j].value;
					if (!(fabs(sum - want[k].sum) <= 1e-9 * fabs(want[k].sum)) && !(isnan(sum) && isnan(want[k].sum)))
						fail_msg("%s: family %s: values sum to %.17g, %.17g in the text", path, want[k].name, sum,
							 want[k].sum);
					enum expo_type t = !strcmp(want[k].type, "gauge") ? EXPO_GAUGE :
							   !strcmp(want[k].type, "counter") ? EXPO_COUNTER : EXPO_UNTYPED;
					assert_int_equal(f->type, t);
					assert_false(f->duplicate);
				}
				free(copy);
				expo_free(&e);
				free(body);
				checked++;
				samples += nsamples;
			}
		globfree(&g);
	}
	/* 15 states of 5 endpoints, and the bodies of two config variants */
	assert_true(checked >= 85);
	assert_true(samples > 1000);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_basic_families),
		cmocka_unit_test(test_unescaped_label_value),
		cmocka_unit_test(test_strict_escapes),
		cmocka_unit_test(test_unlabelled_in_labelled_family),
		cmocka_unit_test(test_values_timestamps_eof_crlf),
		cmocka_unit_test(test_value_range),
		cmocka_unit_test(test_malformed_lines),
		cmocka_unit_test(test_truncated_last_line),
		cmocka_unit_test(test_duplicate_series),
		cmocka_unit_test(test_label_order),
		cmocka_unit_test(test_real_captures),
		cmocka_unit_test(test_feed_in_pieces),
		cmocka_unit_test(test_feed_line_too_long),
		cmocka_unit_test(test_unread_families_kept_nowhere),
	};
	return cmocka_run_group_tests_name("expo", tests, NULL, NULL);
}
