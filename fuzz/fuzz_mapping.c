/* fuzz_mapping.c: libFuzzer target for the mapping loader (src/mapping.c, with src/jsonpos.c and the
 * expression compiler of src/expr.c): the input is written to a memfd and loaded by its
 * /proc/self/fd path, as a mapping file would be. A table that loads is evaluated against the fixed
 * payload of fuzz_payload.h twice: with every endpoint up, and with some down (chosen by the input's
 * length), with every row enabled. Inputs that only reproduce the known regcomp blow-up are skipped
 * Ownership: the memfd and the payload live for the whole run; the mapping, the problems buffer, the
 * results and the arena are freed before returning. */
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
#include "xmalloc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct expo payload[EP_COUNT];
static const struct expo *payload_ptrs[EP_COUNT];
static int fd = -1;
static char path[64];

static void setup(void)
{
	fuzz_payload_parse(payload);
	for (int i = 0; i < EP_COUNT; i++)
		payload_ptrs[i] = &payload[i];
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

static void evaluate(const struct mapping *m, unsigned down)
{
	struct arena a;
	struct row_result *res = xcalloc(m->nrows + 1, sizeof(*res));
	int up[EP_COUNT];
	for (int i = 0; i < EP_COUNT; i++)
		up[i] = !(down >> i & 1);
	arena_init(&a);
	mapping_eval(m, "gpus-acct", payload_ptrs, up, &a, res);
	for (size_t i = 0; i < m->nrows; i++)
		if (res[i].status == ROW_OK)
			for (size_t k = 0; k < res[i].v.n; k++)
				for (uint32_t j = 0; j < res[i].v.e[k].nlabels; j++)
					if (!res[i].v.e[k].labels[j].name)
						abort();
	arena_reset(&a);
	free(res);
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
		(void)mapping_endpoints(m, "gpus-acct");
		(void)mapping_endpoints(m, "");
		evaluate(m, 0);
		evaluate(m, (unsigned)size % 32);
	}
	mapping_free(m);
	buf_free(&problems);
	return 0;
}
