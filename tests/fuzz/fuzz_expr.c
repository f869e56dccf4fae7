/* fuzz_expr.c: libFuzzer target for the expression compiler and evaluator (src/expr_*.c): compile the
 * input (made a C string), evaluate the result against the fixed payload of fuzz_payload.h, print it
 * back as PromQL and compile that again (what --mapping.to-rules relies on: the printed form must
 * compile).
 * Ownership: the compiled trees, the arena and the print buffer are freed before returning; the
 * payload expos live for the whole run. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "expr.h"
#include "fuzz_payload.h"
#include "xmalloc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct expo payload[SRC_COUNT];
static const struct expo *payload_ptrs[SRC_COUNT];
static int ready;

static void count_metric(const char *name, void *ctx)
{
	if (!name || !*name)
		abort();
	(*(size_t *)ctx)++;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *src = NULL, errmsg[160];
	size_t errpos = 0, nmetrics = 0;
	struct expr *x = NULL, *again = NULL;
	struct arena a;
	struct buf printed;
	struct vec out;

	if (!ready) {
		fuzz_payload_parse(payload);
		for (int i = 0; i < SRC_COUNT; i++)
			payload_ptrs[i] = &payload[i];
		ready = 1;
	}
	arena_init(&a);
	buf_init(&printed, 0);
	if (size > 4096 || memchr(data, '\0', size)) /* expressions are short C strings */
		goto out;
	src = xstrndup((const char *)data, size);
	x = expr_compile(src, &errpos, errmsg, sizeof(errmsg));
	if (!x) {
		if (errpos > size)
			abort();
		goto out;
	}
	expr_foreach_metric(x, count_metric, &nmetrics);
	(void)expr_is_scalar(x);
	struct expr_source s = { payload_ptrs, SRC_COUNT, NULL, 0, NULL };
	const char *missing = NULL;
	if (expr_eval(x, &s, &a, &out, errmsg, sizeof(errmsg), &missing) == 0)
		for (size_t i = 0; i < out.n; i++)
			for (uint32_t j = 0; j < out.e[i].nlabels; j++)
				if (!out.e[i].labels[j].name)
					abort();
	expr_print(x, &printed, NULL);
	buf_putc(&printed, '\0');
	again = expr_compile(printed.data, &errpos, errmsg, sizeof(errmsg));
	if (!again) {
		fprintf(stderr, "printed form does not compile: %s\n  input:   %s\n  printed: %s\n", errmsg, src,
			printed.data);
		abort();
	}
out:
	expr_free(again);
	expr_free(x);
	free(src);
	buf_free(&printed);
	arena_reset(&a);
	return 0;
}
