/* test_encoding.c: compressed answers without a network.
 *   - http_encoding.c: the Accept-Encoding table (RFC 9110 12.5.3's examples, q-values as the
 *     grammar spells them, q=0 refusals, "*", x-gzip, case, empty elements, several field lines,
 *     a coding listed twice, garbage and overlong fields disregarded whole);
 *   - compress.c: a gzip form that zlib (another implementation) decompresses to the same bytes,
 *     none for what does not shrink, one form for 16 threads asking at once, the counters and
 *     their self metrics. Fuzz target: tests/fuzz/fuzz_accept.c. */
#include "testutil.h"

#include "compress.h"
#include "http_encoding.h"
#include "render.h"

#define G CODING_GZIP
#define I CODING_IDENTITY

static const struct {
	const char *field;
	enum content_coding want;
} table[] = {
	/* RFC 9110 12.5.3's examples */
	{ "compress, gzip", G },
	{ "", I },
	{ "*", G },
	{ "compress;q=0.5, gzip;q=1.0", G },
	{ "gzip;q=1.0, identity; q=0.5, *;q=0", G },
	/* what scrapers send: Prometheus, curl --compressed, browsers */
	{ "gzip", G },
	{ "deflate, gzip, br, zstd", G },
	{ "gzip, deflate, br", G },
	/* case, x-gzip (RFC 9110 8.4.1.3), whitespace, empty list elements (5.6.1) */
	{ "GZIP", G },
	{ "x-gzip", G },
	{ "X-GZip;Q=0.5", G },
	{ " \tgzip \t", G },
	{ "gzip\t;\tq=1", G },
	{ "gzip ; q=1.000", G },
	{ ", , gzip ,,", G },
	{ ",", I },
	{ "gzipx", I },
	{ "xgzip", I },
	{ "gzi", I },
	/* weights: refusals, ties (the smaller form wins), identity's own weight, "*" */
	{ "gzip;q=0", I },
	{ "gzip;q=0.", I },
	{ "gzip;q=0.000", I },
	{ "gzip;q=0.001", G },
	{ "gzip;q=1.", G },
	{ "gzip;q=0.5", G },
	{ "gzip;q=0.5, identity", I },
	{ "identity, gzip;q=0.5", I },
	{ "gzip;q=0.5, identity;q=0.5", G },
	{ "identity;q=0.5, gzip;q=0.501", G },
	{ "identity;q=0.501, gzip;q=0.5", I },
	{ "identity", I },
	{ "br, zstd", I },
	{ "*;q=0.5", G },
	{ "*;q=0.3, identity;q=0.4", I },
	{ "*;q=0.3, gzip;q=0.2", I },
	{ "*, gzip;q=0", I },
	{ "*;q=0, gzip", G },
	{ "*;q=0, identity", I },
	{ "gzip;q=0, *", I },
	{ "x-gzip;q=0, gzip", I },
	/* nothing acceptable: identity all the same (as client_golang; never 406) */
	{ "identity;q=0", I },
	{ "*;q=0", I },
	{ "identity;q=0, *;q=0", I },
	{ "gzip;q=0, identity;q=0", I },
	{ "identity;q=0, gzip", G },
	/* a coding listed twice: the lower weight */
	{ "gzip, gzip;q=0", I },
	{ "gzip;q=0, gzip", I },
	{ "gzip;q=0.2, identity;q=0.3, gzip;q=1", I },
	/* malformed: disregarded whole, whatever else it says */
	{ "gzip;q=1.001", I },
	{ "gzip;q=1.0000", I },
	{ "gzip;q=2", I },
	{ "gzip;q=0.1234", I },
	{ "gzip;q=.5", I },
	{ "gzip;q=01", I },
	{ "gzip;q=-1", I },
	{ "gzip;q=1e0", I },
	{ "gzip;q=0,5", I },
	{ "gzip;q=", I },
	{ "gzip;q", I },
	{ "gzip;", I },
	{ "gzip;level=1", I },
	{ "gzip;q=0.5;q=1", I },
	{ "gzip q=1", I },
	{ "gzip;q= 1", I },
	{ "gzip;q =1", I },
	{ "gzip, ;q=1", I },
	{ ";q=1, gzip", I },
	{ "g\"zip", I },
	{ "gzip, \"br\"", I },
	{ "gzip/1", I },
	{ "gzip, br\x01", I },
	{ "gzip\r\n", I },
	{ "gzip, identity;q=0, \xff", I },
	{ "gzip, {}", I },
};

static void test_table(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
		enum content_coding got = http_encoding_negotiate(table[i].field, strlen(table[i].field));
		if (got != table[i].want)
			fail_msg("Accept-Encoding \"%s\": %s, want %s", table[i].field, got == G ? "gzip" : "identity",
				 table[i].want == G ? "gzip" : "identity");
	}
}

static void test_qvalue(void **state)
{
	(void)state;
	static const struct {
		const char *s;
		int want;
	} q[] = {
		{ "0", 0 }, { "0.", 0 }, { "0.5", 500 }, { "0.05", 50 }, { "0.005", 5 }, { "0.123", 123 },
		{ "0.999", 999 }, { "1", 1000 }, { "1.", 1000 }, { "1.0", 1000 }, { "1.000", 1000 },
		{ "", -1 }, { "1.001", -1 }, { "1.0000", -1 }, { "0.1234", -1 }, { "2", -1 }, { ".5", -1 },
		{ "01", -1 }, { "0,5", -1 }, { "1.1", -1 }, { " 1", -1 }, { "0.a", -1 }, { "-0", -1 }, { "0..", -1 },
	};
	for (size_t i = 0; i < sizeof(q) / sizeof(q[0]); i++)
		if (http_qvalue_parse(q[i].s, strlen(q[i].s)) != q[i].want)
			fail_msg("qvalue \"%s\": %d, want %d", q[i].s, http_qvalue_parse(q[i].s, strlen(q[i].s)), q[i].want);
	/* the length counts, not a NUL: "0.5" of "0.5x" */
	assert_int_equal(http_qvalue_parse("0.5x", 3), 500);
	/* a NUL inside a field is a byte like any other: malformed */
	assert_int_equal(http_encoding_negotiate("gzip\0, br", 9), I);
}

/* Several field lines are one list (RFC 9110 5.3); one malformed line spoils the lot. */
static void test_field_lines(void **state)
{
	(void)state;
	struct accept_encoding ae;
	accept_encoding_init(&ae);
	assert_int_equal(accept_encoding_choose(&ae), I); /* no Accept-Encoding at all */
	assert_int_equal(accept_encoding_add(&ae, "br", 2), 0);
	assert_int_equal(accept_encoding_choose(&ae), I);
	assert_int_equal(accept_encoding_add(&ae, "gzip;q=0.5", 10), 0);
	assert_int_equal(accept_encoding_choose(&ae), G);
	assert_int_equal(accept_encoding_add(&ae, "identity", 8), 0);
	assert_int_equal(accept_encoding_choose(&ae), I);

	accept_encoding_init(&ae);
	assert_int_equal(accept_encoding_add(&ae, "gzip", 4), 0);
	assert_int_equal(accept_encoding_add(&ae, "gzip;;", 6), -1);
	assert_int_equal(accept_encoding_add(&ae, "gzip", 4), -1); /* disregarded for good */
	assert_int_equal(accept_encoding_choose(&ae), I);

	accept_encoding_init(&ae);
	assert_int_equal(accept_encoding_add(&ae, "gzip;q=0", 8), 0);
	assert_int_equal(accept_encoding_add(&ae, "gzip", 4), 0);
	assert_int_equal(accept_encoding_choose(&ae), I);
}

/* Fields are bounded: up to ACCEPT_ENCODING_MAX bytes (all lines together) are read, a longer one
 * is disregarded without being read. */
static void test_overlong(void **state)
{
	(void)state;
	size_t big = 1 << 20;
	char *f = xmalloc(big);
	struct accept_encoding ae;
	memset(f, ' ', big);
	memcpy(f, "gzip", 4);
	assert_int_equal(http_encoding_negotiate(f, ACCEPT_ENCODING_MAX), G);
	assert_int_equal(http_encoding_negotiate(f, ACCEPT_ENCODING_MAX + 1), I);
	assert_int_equal(http_encoding_negotiate(f, big), I);
	/* the same bound across lines */
	accept_encoding_init(&ae);
	assert_int_equal(accept_encoding_add(&ae, f, ACCEPT_ENCODING_MAX / 2), 0);
	assert_int_equal(accept_encoding_add(&ae, f, ACCEPT_ENCODING_MAX / 2), 0);
	assert_int_equal(accept_encoding_choose(&ae), G);
	assert_int_equal(accept_encoding_add(&ae, f, 1), -1);
	assert_int_equal(accept_encoding_choose(&ae), I);
	/* many elements: linear, no storage */
	for (size_t i = 0; i + 3 <= ACCEPT_ENCODING_MAX; i += 3)
		memcpy(f + i, "a, ", 3);
	memcpy(f + ACCEPT_ENCODING_MAX - 4, "gzip", 4);
	assert_int_equal(http_encoding_negotiate(f, ACCEPT_ENCODING_MAX), G);
	free(f);
}

static char *sample_text(size_t *len)
{
	struct buf b;
	buf_init(&b, 0);
	for (int i = 0; i < 20000; i++)
		buf_printf(&b, "slurm_node_cpu_alloc{node=\"cn%05d\",status=\"%s\"} %d\n", i, i % 3 ? "mixed" : "idle", i % 97);
	return buf_steal(&b, len);
}

static void test_compress_round_trip(void **state)
{
	(void)state;
	size_t len, glen = 0, back = 0;
	char *text = sample_text(&len);
	unsigned char *gz = NULL;
	assert_int_equal(compress_gzip(text, len, COMPRESS_LEVEL, &gz, &glen), 0);
	assert_true(glen > 18 && glen < len / 5);
	assert_int_equal(gz[0], 0x1f); /* a gzip member (RFC 1952), not a raw deflate stream */
	assert_int_equal(gz[1], 0x8b);
	char *out = tu_gunzip(gz, glen, &back);
	assert_non_null(out);
	assert_int_equal(back, len);
	assert_memory_equal(out, text, len);
	free(out);
	/* cut short, it is not a whole member */
	assert_null(tu_gunzip(gz, glen - 1, &back));
	free(gz);
	/* random hex digits come out at about half: over the first try's quarter, so a second one */
	char hex[100000];
	srand(5);
	for (size_t i = 0; i < sizeof(hex); i++)
		hex[i] = "0123456789abcdef"[rand() % 16];
	assert_int_equal(compress_gzip(hex, sizeof(hex), COMPRESS_LEVEL, &gz, &glen), 0);
	assert_true(glen > sizeof(hex) / 4 && glen < sizeof(hex));
	out = tu_gunzip(gz, glen, &back);
	assert_non_null(out);
	assert_int_equal(back, sizeof(hex));
	assert_memory_equal(out, hex, sizeof(hex));
	free(out);
	free(gz);
	/* what does not shrink has no gzip form; nothing is allocated */
	unsigned char rnd[8192];
	srand(7);
	for (size_t i = 0; i < sizeof(rnd); i++)
		rnd[i] = (unsigned char)rand();
	gz = NULL;
	assert_int_equal(compress_gzip(rnd, sizeof(rnd), COMPRESS_LEVEL, &gz, &glen), -1);
	assert_null(gz);
	assert_int_equal(compress_gzip("a", 1, COMPRESS_LEVEL, &gz, &glen), -1);
	assert_int_equal(compress_gzip("", 0, COMPRESS_LEVEL, &gz, &glen), -1);
	assert_int_equal(compress_gzip(text, len, 99, &gz, &glen), -1); /* a level libdeflate refuses */
	assert_null(gz);
	free(text);
}

struct getter {
	struct compressed *z;
	const char *plain;
	size_t len;
	struct compress_stats *st;
	const void *body;
	size_t blen;
	int rc;
};

static void *get_thread(void *p)
{
	struct getter *g = p;
	g->rc = compressed_get(g->z, g->plain, g->len, g->st, &g->body, &g->blen);
	return NULL;
}

/* 16 threads ask for one answer's gzip form at once: one form is made, and all 16 get it. */
static void test_compressed_once(void **state)
{
	(void)state;
	size_t len;
	char *text = sample_text(&len);
	struct compressed z;
	struct compress_stats st = { 0 };
	struct getter g[16];
	pthread_t t[16];
	compressed_init(&z);
	for (int i = 0; i < 16; i++) {
		g[i] = (struct getter){ &z, text, len, &st, NULL, 0, -2 };
		assert_int_equal(pthread_create(&t[i], NULL, get_thread, &g[i]), 0);
	}
	for (int i = 0; i < 16; i++) {
		assert_int_equal(pthread_join(t[i], NULL), 0);
		assert_int_equal(g[i].rc, 0);
		assert_ptr_equal(g[i].body, g[0].body);
		assert_int_equal(g[i].blen, g[0].blen);
	}
	assert_int_equal(atomic_load(&st.answers), 1);
	assert_true(atomic_load(&st.cpu_ns) > 0);
	size_t back;
	char *out = tu_gunzip(g[0].body, g[0].blen, &back);
	assert_non_null(out);
	assert_int_equal(back, len);
	assert_memory_equal(out, text, len);
	free(out);
	/* a later request borrows the same form; NULL stats are allowed */
	const void *b2;
	size_t l2;
	assert_int_equal(compressed_get(&z, text, len, NULL, &b2, &l2), 0);
	assert_ptr_equal(b2, g[0].body);
	compressed_free(&z);
	free(text);
}

/* A body that does not shrink is sent plain, every time, and counts no compressed answer. */
static void test_compressed_none(void **state)
{
	(void)state;
	unsigned char rnd[4096];
	struct compressed z;
	struct compress_stats st = { 0 };
	const void *body = NULL;
	size_t blen = 0;
	srand(11);
	for (size_t i = 0; i < sizeof(rnd); i++)
		rnd[i] = (unsigned char)rand();
	compressed_init(&z);
	assert_int_equal(compressed_get(&z, rnd, sizeof(rnd), &st, &body, &blen), -1);
	assert_int_equal(compressed_get(&z, rnd, sizeof(rnd), &st, &body, &blen), -1);
	assert_null(body);
	assert_int_equal(atomic_load(&st.answers), 0);
	compressed_free(&z);
}

static void test_self_metrics(void **state)
{
	(void)state;
	struct compress_stats st = { 0 };
	struct buf b;
	atomic_store(&st.answers, 3);
	atomic_store(&st.cpu_ns, 1500000000ull);
	compress_count_sent(&st, CODING_GZIP, 100);
	compress_count_sent(&st, CODING_GZIP, 23);
	compress_count_sent(&st, CODING_IDENTITY, 4000);
	compress_count_sent(NULL, CODING_GZIP, 1);
	buf_init(&b, 0);
	/* written by the render from its record, as the daemon's answers are (render.h) */
	static const struct mapping none;
	const struct payload *p[SRC_COUNT] = { 0 };
	struct render_in in = { .m = &none, .p = p, .gz = &st };
	struct render_result res;
	assert_int_equal(render_run(&in, &b, &res), 200);
	assert_int_equal(res.gz_answers, 3);
	render_result_free(&res);
	buf_putc(&b, '\0');
	assert_non_null(strstr(b.data, "# TYPE slurm_exporter_shim_compressed_answers_total counter\n"
				       "slurm_exporter_shim_compressed_answers_total 3\n"));
	assert_non_null(strstr(b.data, "\nslurm_exporter_shim_compression_cpu_seconds_total 1.5\n"));
	assert_non_null(strstr(b.data, "\nslurm_exporter_shim_response_body_bytes_total{encoding=\"identity\"} 4000\n"
				       "slurm_exporter_shim_response_body_bytes_total{encoding=\"gzip\"} 123\n"));
	buf_free(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_table),
		cmocka_unit_test(test_qvalue),
		cmocka_unit_test(test_field_lines),
		cmocka_unit_test(test_overlong),
		cmocka_unit_test(test_compress_round_trip),
		cmocka_unit_test(test_compressed_once),
		cmocka_unit_test(test_compressed_none),
		cmocka_unit_test(test_self_metrics),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
