/* test_bidi.c: bidirectional formatting characters (U+061C, U+200E, U+200F, U+202A to U+202E,
 * U+2066 to U+2069) in upstream strings (a Slurm node reason, an endpoint's failure reason) never
 * reach an admin raw: raw, U+202E turns "disk failure [root]" into text that reads backwards from
 * there, so what the page or a terminal shows differs from what the string is. The status page
 * shows each as "<U+XXXX>" (status_html_escape), the log as \xNN bytes (logfmt) or \uXXXX (JSON);
 * the characters next to them in Unicode stay as they are. */
#include "testutil.h"

#include "log.h"
#include "scrape.h"
#include "status.h"
#include "status_html.h"
#include "utf8.h"

#include <stdio.h>

static const struct {
	const char *utf8;
	unsigned cp;
} bidi[] = {
	{ "\xD8\x9C", 0x061C },     { "\xE2\x80\x8E", 0x200E }, { "\xE2\x80\x8F", 0x200F },
	{ "\xE2\x80\xAA", 0x202A }, { "\xE2\x80\xAB", 0x202B }, { "\xE2\x80\xAC", 0x202C },
	{ "\xE2\x80\xAD", 0x202D }, { "\xE2\x80\xAE", 0x202E }, { "\xE2\x81\xA6", 0x2066 },
	{ "\xE2\x81\xA7", 0x2067 }, { "\xE2\x81\xA8", 0x2068 }, { "\xE2\x81\xA9", 0x2069 },
};
#define NBIDI (sizeof(bidi) / sizeof(bidi[0]))

/* their neighbours, ordinary characters: U+061B, U+200D, U+2010, U+2029, U+202F, U+2065, U+206A */
static const char *const neighbours[] = { "\xD8\x9B", "\xE2\x80\x8D", "\xE2\x80\x90", "\xE2\x80\xA9",
					  "\xE2\x80\xAF", "\xE2\x81\xA5", "\xE2\x81\xAA" };

/* Whether any bidi formatting character is in s, raw. */
static int has_raw_bidi(const char *s)
{
	for (size_t i = 0; i < NBIDI; i++)
		if (strstr(s, bidi[i].utf8))
			return 1;
	return 0;
}

static void test_utf8_bidi_control(void **state)
{
	(void)state;
	for (size_t i = 0; i < NBIDI; i++) {
		const unsigned char *u = (const unsigned char *)bidi[i].utf8;
		int ok;
		size_t k = utf8_next(u, strlen(bidi[i].utf8), &ok);
		assert_true(ok);
		assert_int_equal(utf8_bidi_control(u, k), bidi[i].cp);
	}
	for (size_t i = 0; i < sizeof(neighbours) / sizeof(neighbours[0]); i++)
		assert_int_equal(utf8_bidi_control((const unsigned char *)neighbours[i], strlen(neighbours[i])), 0);
	assert_int_equal(utf8_bidi_control((const unsigned char *)"a", 1), 0);
}

/* status_html_escape: each one visible as <U+XXXX>, the text around it as it was, neighbours raw. */
static void test_html_shows_bidi(void **state)
{
	(void)state;
	for (size_t i = 0; i < NBIDI; i++) {
		char in[32], want[64];
		struct buf b;
		snprintf(in, sizeof(in), "disk%sfailure", bidi[i].utf8);
		snprintf(want, sizeof(want), "disk&lt;U+%04X&gt;failure", bidi[i].cp);
		buf_init(&b, 0);
		status_html_escape(&b, in, strlen(in));
		buf_putc(&b, '\0');
		assert_string_equal(b.data, want);
		buf_free(&b);
	}
	for (size_t i = 0; i < sizeof(neighbours) / sizeof(neighbours[0]); i++) {
		struct buf b;
		buf_init(&b, 0);
		status_html_escape(&b, neighbours[i], strlen(neighbours[i]));
		buf_putc(&b, '\0');
		assert_string_equal(b.data, neighbours[i]);
		buf_free(&b);
	}
}

/* The status page with a configured string holding U+202E, U+2066 and U+2069 (the mapping file's
 * name; the upstream strings, node and endpoint reasons, go through the same status_html_escape):
 * none raw anywhere on the page, all shown. */
static void test_status_page_shows_bidi(void **state)
{
	(void)state;
	static const char name[] = "fan \xE2\x80\xAE" "deliaf \xE2\x81\xA6" "ok\xE2\x81\xA9.json";
	struct scraper_status st;
	struct status_page_info info;
	struct buf b;
	memset(&st, 0, sizeof(st)); /* no scrape yet */
	memset(&info, 0, sizeof(info));
	info.version = "0.test";
	info.metrics_path = "/metrics";
	info.mapping_file = name;
	info.now = 1800000000;
	buf_init(&b, 0);
	status_page(&b, &info, &st);
	buf_putc(&b, '\0');
	assert_false(has_raw_bidi(b.data));
	assert_true(utf8_is_valid(b.data, b.len - 1));
	assert_non_null(strstr(b.data, "fan &lt;U+202E&gt;deliaf &lt;U+2066&gt;ok&lt;U+2069&gt;.json"));
	buf_free(&b);
}

/* What log_info writes to stderr for a reason holding every one of them, in format json. */
static char *logged(int json)
{
	char path[256], reason[128] = "reason ";
	snprintf(path, sizeof(path), "%s/bidi-XXXXXX", tu_tmpdir());
	int fd = mkstemp(path), saved = dup(2);
	assert_true(fd >= 0 && saved >= 0);
	for (size_t i = 0; i < NBIDI; i++)
		strcat(reason, bidi[i].utf8);
	strcat(reason, " end");
	fflush(stderr);
	dup2(fd, 2);
	log_json = json;
	log_info("node n1: %s", reason);
	fflush(stderr);
	log_json = 0;
	dup2(saved, 2);
	close(saved);
	close(fd);
	char *text = tu_slurp(path, NULL);
	unlink(path);
	assert_non_null(text);
	return text;
}

static void test_log_escapes_bidi(void **state)
{
	(void)state;
	char *t = logged(0);
	assert_false(has_raw_bidi(t));
	assert_non_null(strstr(t, "msg=\"node n1: reason \\xd8\\x9c\\xe2\\x80\\x8e\\xe2\\x80\\x8f\\xe2\\x80\\xaa"));
	assert_non_null(strstr(t, "\\xe2\\x81\\xa9 end\"\n"));
	free(t);
	t = logged(1);
	assert_false(has_raw_bidi(t));
	assert_non_null(strstr(t, "\"msg\":\"node n1: reason \\u061c\\u200e\\u200f\\u202a\\u202b\\u202c\\u202d\\u202e"
				  "\\u2066\\u2067\\u2068\\u2069 end\"}\n"));
	free(t);
	/* log_escape (the HTTP bodies' and stdout's) escapes every byte outside printable ASCII */
	char out[64];
	log_escape(out, sizeof(out), "a\xE2\x80\xAE" "b", 5);
	assert_string_equal(out, "a\\xe2\\x80\\xaeb");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_utf8_bidi_control),
		cmocka_unit_test(test_html_shows_bidi),
		cmocka_unit_test(test_status_page_shows_bidi),
		cmocka_unit_test(test_log_escapes_bidi),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
