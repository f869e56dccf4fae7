/* test_faillog.c: one upstream failure is one log line (src/faillog.c), even when curl's text for
 * the endpoints of one refused fetch differs by the milliseconds each was tried at ("after 1 ms",
 * "after 0 ms"): that made `--once` against a refused slurmctld print two lines on a slow build. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "faillog.h"
#include "payload.h"

/* The lines faillog_report logs for the failed sources given their transport texts (NULL: not
 * failed), read back from standard error into out. */
static void report(const char *const text[SRC_COUNT], char *out, size_t cap)
{
	struct payload *got[SRC_COUNT] = { 0 };
	unsigned failed = 0;
	for (int id = 0; id < SRC_COUNT; id++) {
		got[id] = payload_new((enum source_id)id, 0, NULL, NULL);
		if (text[id]) {
			payload_fault(got[id], FAULT_TRANSPORT, text[id]);
			failed |= 1u << id;
		}
		payload_finish(got[id]);
	}
	struct upstream_config cfg[UPSTREAM_COUNT] = { [UPSTREAM_SLURMCTLD] = { .base_url = "http://u:secret@127.0.0.1:1" } };
	FILE *tmp = tmpfile();
	assert_non_null(tmp);
	fflush(stderr);
	int saved = dup(2);
	assert_true(saved >= 0 && dup2(fileno(tmp), 2) == 2);
	faillog_report(failed, got, cfg, NULL, NULL);
	fflush(stderr);
	assert_int_equal(dup2(saved, 2), 2);
	close(saved);
	rewind(tmp);
	size_t n = fread(out, 1, cap - 1, tmp);
	out[n] = '\0';
	fclose(tmp);
	for (int id = 0; id < SRC_COUNT; id++)
		payload_unref(got[id]);
}

static size_t lines(const char *s)
{
	size_t n = 0;
	for (; *s; s++)
		n += *s == '\n';
	return n;
}

static void test_refused_after_other_ms_one_line(void **state)
{
	(void)state;
	char out[4096];
	const char *text[SRC_COUNT] = {
		[SRC_NODES] = "Failed to connect to 127.0.0.1 port 1 after 1 ms: Couldn't connect to server",
		[SRC_PARTITIONS] = "Failed to connect to 127.0.0.1 port 1 after 0 ms: Couldn't connect to server",
		[SRC_UA] = "Failed to connect to 127.0.0.1 port 1 after 12 ms: Couldn't connect to server",
	};
	report(text, out, sizeof(out));
	assert_int_equal(lines(out), 1);
	assert_non_null(strstr(out, "endpoints /metrics/nodes, /metrics/partitions and /metrics/jobs-users-accts failed: "));
	assert_non_null(strstr(out, "after 1 ms"));
	assert_null(strstr(out, "secret"));
}

static void test_other_reasons_other_lines(void **state)
{
	(void)state;
	char out[4096];
	const char *text[SRC_COUNT] = {
		[SRC_NODES] = "Failed to connect to 127.0.0.1 port 1 after 1 ms: Couldn't connect to server",
		[SRC_PARTITIONS] = "Failed to connect to 127.0.0.1 port 2 after 1 ms: Couldn't connect to server",
		[SRC_SCHEDULER] = "Operation timed out after 10001 milliseconds with 0 bytes received",
		[SRC_UA] = "Operation timed out after 9999 milliseconds with 0 bytes received",
	};
	report(text, out, sizeof(out));
	/* another port is another reason; the two time-outs are one */
	assert_int_equal(lines(out), 3);
	assert_non_null(strstr(out, "endpoints /metrics/scheduler and /metrics/jobs-users-accts failed: "));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_refused_after_other_ms_one_line),
		cmocka_unit_test(test_other_reasons_other_lines),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
