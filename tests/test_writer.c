/* test_writer.c: text format 0.0.4 output: escaping, numbers, invalid UTF-8 repaired, control bytes
 * replaced, and whole-family rollback. */
#include "testutil.h"

#include <math.h>

#include "utf8.h"
#include "writer.h"

static char *value_str(double v)
{
	struct buf b;
	buf_init(&b, 0);
	write_value(&b, v);
	return buf_steal(&b, NULL);
}

static void test_values(void **state)
{
	(void)state;
	static const struct { double v; const char *s; } cases[] = {
		{ 0, "0" }, { 42, "42" }, { -7, "-7" }, { 1795965166, "1795965166" }, { 0.5, "0.5" },
		{ 0.1, "0.1" }, { 1.0 / 3, "0.3333333333333333" }, { 1e300, "1e+300" }, { 2.5e-7, "2.5e-07" },
		{ 18446744073709551616.0, "1.8446744073709552e+19" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *s = value_str(cases[i].v);
		assert_string_equal(s, cases[i].s);
		double back = strtod(s, NULL);
		assert_true(back == cases[i].v);
		free(s);
	}
	char *s = value_str(NAN);
	assert_string_equal(s, "NaN");
	free(s);
	s = value_str(INFINITY);
	assert_string_equal(s, "+Inf");
	free(s);
	s = value_str(-INFINITY);
	assert_string_equal(s, "-Inf");
	free(s);
}

static void test_escaping(void **state)
{
	(void)state;
	struct buf b;
	buf_init(&b, 0);
	const char *raw = "odd\"acct\\\\x y";
	struct label l[2] = { { "account", raw, 7, (uint32_t)strlen(raw) }, { "n", "a\nb", 1, 3 } };
	write_header(&b, "m", "help with \\ and\nnewline \"quotes\"", "gauge");
	write_sample(&b, "m", l, 2, 1);
	struct label empty = { "gone", "", 4, 0 };
	write_sample(&b, "m", &empty, 1, 2);
	buf_putc(&b, '\0');
	assert_string_equal(b.data,
			    "# HELP m help with \\\\ and\\nnewline \"quotes\"\n# TYPE m gauge\n"
			    "m{account=\"odd\\\"acct\\\\\\\\x y\",n=\"a\\nb\"} 1\n"
			    "m 2\n");
	buf_free(&b);
}

/* Label values are always valid UTF-8 in the output: each maximal subpart of an invalid sequence
 * becomes U+FFFD; valid multi-byte characters pass unchanged. */
static void test_invalid_utf8_repaired(void **state)
{
	(void)state;
	static const struct { const char *in, *out; } cases[] = {
		{ "n\xff", "n\xEF\xBF\xBD" },                                  /* a byte never valid */
		{ "a\xC0\xAF" "b", "a\xEF\xBF\xBD\xEF\xBF\xBD" "b" },                /* overlong '/': two */
		{ "\xE0\x80\xAF", "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD" },          /* overlong, 3 bytes */
		{ "s\xED\xA0\x80", "s\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD" },        /* surrogate U+D800 */
		{ "\xF4\x90\x80\x80", "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD" }, /* U+110000 */
		{ "\xE2\x82x", "\xEF\xBF\xBDx" },                              /* cut short: one */
		{ "\xF0\x9F\x98", "\xEF\xBF\xBD" },                              /* cut short at the end */
		{ "\x80\"", "\xEF\xBF\xBD\\\"" },                               /* stray continuation */
		{ "caf\xC3\xA9 \xF0\x9F\x98\x80 \xED\x9F\xBF \xF4\x8F\xBF\xBF", "caf\xC3\xA9 \xF0\x9F\x98\x80 \xED\x9F\xBF \xF4\x8F\xBF\xBF" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct buf b, want;
		buf_init(&b, 0);
		buf_init(&want, 0);
		struct label l = { "node", cases[i].in, 4, (uint32_t)strlen(cases[i].in) };
		write_sample(&b, "m", &l, 1, 1);
		buf_printf(&want, "m{node=\"%s\"} 1\n", cases[i].out);
		buf_putc(&b, '\0');
		buf_putc(&want, '\0');
		if (strcmp(b.data, want.data))
			fail_msg("case %zu: got %s want %s", i, b.data, want.data);
		assert_int_equal(utf8_is_valid(cases[i].out, strlen(cases[i].out)), 1);
		assert_int_equal(utf8_is_valid(cases[i].in, strlen(cases[i].in)), i == 8);
		buf_free(&b);
		buf_free(&want);
	}
}

/* Control bytes are never served raw: every C0 control but newline (escaped \n), and DEL, becomes
 * U+FFFD in label values and HELP texts (the format has no escape for them); utf8_is_clean says
 * which values need it and utf8_clean makes what the writer writes. */
static void test_control_bytes_replaced(void **state)
{
	(void)state;
#define R "\xEF\xBF\xBD"
	static const struct { const char *in, *label, *help; } cases[] = {
		{ "n\x1b[31mred", "n" R "[31mred", "n" R "[31mred" },              /* a terminal escape */
		{ "a\rb\tc", "a" R "b" R "c", "a" R "b" R "c" },                    /* CR and tab */
		{ "x\x7fy\x01\x1f", "x" R "y" R R, "x" R "y" R R },                  /* DEL, SOH, US */
		{ "l1\nl2\x08", "l1\\nl2" R, "l1\\nl2" R },                          /* newline escaped, BS */
		{ "\"q\" \\ ~", "\\\"q\\\" \\\\ ~", "\"q\" \\\\ ~" },             /* printable: as before */
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct buf b, want;
		size_t n = strlen(cases[i].in);
		buf_init(&b, 0);
		buf_init(&want, 0);
		struct label l = { "node", cases[i].in, 4, (uint32_t)n };
		write_sample(&b, "m", &l, 1, 1);
		write_help(&b, "m", 1, cases[i].in, n);
		buf_printf(&want, "m{node=\"%s\"} 1\n# HELP m %s\n", cases[i].label, cases[i].help);
		buf_putc(&b, '\0');
		buf_putc(&want, '\0');
		if (strcmp(b.data, want.data))
			fail_msg("case %zu: got %s want %s", i, b.data, want.data);
		assert_int_equal(utf8_is_clean(cases[i].in, n), i == 4);
		assert_int_equal(utf8_is_valid(cases[i].in, n), 1); /* valid UTF-8 all the same */
		char fixed[64];
		size_t m = utf8_clean(fixed, cases[i].in, n);
		assert_true(utf8_is_clean(fixed, m));
		buf_free(&b);
		buf_free(&want);
	}
	/* a NUL inside a value (a length-delimited label) is a control byte too */
	struct buf b;
	buf_init(&b, 0);
	struct label l = { "node", "a\0b", 4, 3 };
	write_sample(&b, "m", &l, 1, 1);
	assert_int_equal(b.len, strlen("m{node=\"a" R "b\"} 1\n"));
	assert_memory_equal(b.data, "m{node=\"a" R "b\"} 1\n", b.len);
	buf_free(&b);
#undef R
}

static void test_family_rollback(void **state)
{
	(void)state;
	struct buf b;
	struct velem e[3];
	struct label l[3] = { { "node", "n1", 4, 2 }, { "node", "n2", 4, 2 }, { "node", "n3", 4, 2 } };
	for (int i = 0; i < 3; i++)
		e[i] = (struct velem){ .labels = &l[i], .nlabels = 1, .v = i };
	struct vec v = { e, 3 };
	buf_init(&b, 120);
	assert_int_equal(write_family(&b, "a", "h", "gauge", &v), 0);
	size_t after_first = b.len;
	/* the second family does not fit: nothing of it remains */
	assert_int_equal(write_family(&b, "second_family_name", "a longer help text", "gauge", &v), -1);
	assert_int_equal(b.len, after_first);
	assert_false(b.overflow);
	assert_int_equal(memcmp(b.data, "# HELP a h\n", 11), 0);
	buf_free(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_values),
		cmocka_unit_test(test_escaping),
		cmocka_unit_test(test_invalid_utf8_repaired),
		cmocka_unit_test(test_control_bytes_replaced),
		cmocka_unit_test(test_family_rollback),
	};
	return cmocka_run_group_tests_name("writer", tests, NULL, NULL);
}
