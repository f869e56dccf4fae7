/* fuzz_expo.c: libFuzzer target for the exposition parsers: expo_parse in tolerant and strict mode
 * (src/expo.c) and the OpenMetrics validator om_validate (src/openmetrics.c), on the same input.
 * Checks the documented contracts: every malformed line is counted, every sample is in its family,
 * expo_find finds every family, and om_validate reports a line >= 1 and a reason exactly when it fails.
 * Ownership: each parse owns its struct expo and frees it before returning. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "expo.h"
#include "openmetrics.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void parse(const char *text, size_t size, int flags)
{
	struct expo e;
	expo_init(&e);
	size_t errors = expo_parse(&e, text, size, flags);
	size_t n = 0;
	if (errors != e.nerrors)
		abort();
	for (size_t i = 0; i < e.nfams; i++) {
		const struct expo_family *f = &e.fams[i];
		if (expo_find(&e, f->name, f->nlen) != f)
			abort();
		n += f->n;
		for (size_t k = 0; k < f->n; k++)
			for (uint32_t j = 0; j < f->samples[k].nlabels; j++)
				if (!f->samples[k].labels[j].nlen)
					abort();
	}
	if (n != e.nsamples)
		abort();
	expo_free(&e);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *text = (const char *)data;
	char reason[160];
	size_t line = 0;

	parse(text, size, 0);
	parse(text, size, EXPO_STRICT);
	reason[0] = 'x';
	int rc = om_validate(text, size, &line, reason, sizeof(reason));
	if (rc == 0 ? line != 0 : rc != -1 || line == 0 || reason[0] == '\0' || !memchr(reason, '\0', sizeof(reason)))
		abort();
	return 0;
}
