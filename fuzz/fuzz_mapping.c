/* fuzz_mapping.c: libFuzzer target for the mapping loader (src/mapping_load.c, with src/jsonpos.c and the
 * expression compiler of src/expr.c): the input is written to a memfd and loaded by its
 * /proc/self/fd path, as a mapping file would be. A table that loads is evaluated against the fixed
 * payload of fuzz_payload.h twice, through the daemon's path (each answer parsed as it arrives, in
 * pieces, keeping what the table reads; the rows run by mapping_run): with every endpoint up, and
 * with some down (chosen by the input's length), with every row enabled.
 * Ownership: the memfd lives for the whole run; the mapping, the problems buffer and the payloads
 * are freed before returning. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "buf.h"
#include "fuzz_payload.h"
#include "mapping.h"
#include "payload.h"
#include "source.h"
#include "xmalloc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int fd = -1;
static char path[64];

static void setup(void)
{
	fd = memfd_create("fuzz-mapping.json", 0);
	if (fd < 0) {
		perror("memfd_create");
		abort();
	}
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
}

static void write_input(const uint8_t *data, size_t size)
{
	if (ftruncate(fd, 0) < 0)
		abort();
	for (size_t off = 0; off < size;) {
		ssize_t n = pwrite(fd, data + off, size - off, (off_t)off);
		if (n <= 0)
			abort();
		off += (size_t)n;
	}
}

/* mapping_run's emit: every label of a served series has a name. */
static void check_row(void *ctx, size_t i, const struct row_result *res)
{
	(void)ctx;
	(void)i;
	if (res->status == ROW_OK)
		for (size_t k = 0; k < res->v.n; k++)
			for (uint32_t j = 0; j < res->v.e[k].nlabels; j++)
				if (!res->v.e[k].labels[j].name)
					abort();
}

static void evaluate(const struct mapping *m, unsigned down)
{
	struct payload *p[SRC_COUNT] = { 0 };
	const struct expo *ex[SRC_COUNT];
	int up[SRC_COUNT];
	for (int i = 0; i < SRC_NATIVE_COUNT; i++) { /* slurmctld's answers; no slurmrestd */
		size_t len = strlen(fuzz_payload[i]);
		p[i] = payload_new((enum source_id)i, 0, mapping_has_input, (void *)m);
		for (size_t off = 0; off < len; off += 100) /* lines split across pieces */
			if (payload_feed(p[i], fuzz_payload[i] + off, len - off < 100 ? len - off : 100, 0) < 0)
				abort();
		payload_finish(p[i]);
	}
	source_usable((const struct payload *const *)p, up); /* the daemon's verdict */
	for (int i = 0; i < SRC_COUNT; i++) {
		up[i] = up[i] && !(down >> i & 1);
		ex[i] = up[i] ? &p[i]->expo : NULL;
	}
	mapping_run(m, ROW_FLAG_GPUS_ACCT, ex, up, check_row, NULL);
	for (int i = 0; i < SRC_COUNT; i++)
		payload_unref(p[i]);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct buf problems;
	struct mapping *m;

	if (fd < 0)
		setup();
	write_input(data, size);
	buf_init(&problems, 0);
	m = mapping_load(path, &problems);
	if (!m && !problems.len) /* a refused table always says why */
		abort();
	if (m) {
		(void)mapping_sources(m, ROW_FLAG_GPUS_ACCT, ~0u);
		(void)mapping_sources(m, 0, 0);
		evaluate(m, 0);
		evaluate(m, (unsigned)size % 32);
	}
	mapping_free(m);
	buf_free(&problems);
	return 0;
}
