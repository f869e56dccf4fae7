/* fuzz_mapping.c: libFuzzer target for the mapping loader (src/mapping_load.c, with src/jsonpos.c and the
 * expression compiler of src/expr.c): the input is written to a memfd and loaded by its
 * /proc/self/fd path, as a mapping file would be. A table that loads is evaluated against the fixed
 * payload of fuzz_payload.h twice, through the daemon's path (each answer parsed as it arrives, in
 * pieces, keeping what the table reads; then render_run: the rows, the writer, the output cap, the
 * self metrics): with every endpoint up, and with some down and sometimes a small output cap (both
 * chosen by the input's length), with every row enabled; the property is evaluate()'s.
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
#include "render.h"
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

/* The fixed payload through the daemon's render (render_run): every source parsed in pieces with
 * the table's filter, the ones in down failed instead; the legacy families capped at max_output
 * bytes (0: no cap). Property: the body reads back strictly without an error (what Prometheus
 * gets), every served row's bytes are its family, whole, one after the other, none past the cap,
 * and a row left out for the cap wrote nothing. */
static void evaluate(const struct mapping *m, unsigned down, size_t max_output)
{
	struct payload *p[SRC_COUNT] = { 0 };
	for (int i = 0; i < SRC_NATIVE_COUNT; i++) { /* slurmctld's answers; no slurmrestd */
		size_t len = strlen(fuzz_payload[i]);
		p[i] = payload_new((enum source_id)i, 0, mapping_has_input, (void *)m);
		if (down >> i & 1)
			payload_fault(p[i], FAULT_TRANSPORT, "down");
		for (size_t off = 0; off < len && !(down >> i & 1); off += 100) /* lines split across pieces */
			if (payload_feed(p[i], fuzz_payload[i] + off, len - off < 100 ? len - off : 100, 0) == PAYLOAD_FEED_TOO_BIG)
				abort();
		payload_finish(p[i]);
	}
	const struct render_in in = { .m = m, .flags = ROW_FLAG_GPUS_ACCT, .p = (const struct payload *const *)p,
				      .max_output = max_output };
	struct render_result res;
	struct buf body;
	struct expo e;
	buf_init(&body, 0);
	int status = render_run(&in, &body, &res);
	/* 503 (no row evaluated) only when no answer is usable: never with every endpoint up */
	if (status != 200 && (status != 503 || !down || res.nrows || strncmp(body.data, "slurm-exporter-shim: ", 21)))
		abort();
	size_t end = 0;
	for (size_t i = 0; i < res.nrows; i++) {
		const struct render_row *o = &res.rows[i];
		char head[600];
		int hn = snprintf(head, sizeof(head), "# HELP %s ", m->rows[i].name);
		if ((o->len != 0) != (o->status == ROW_OK && !o->output_full) || (o->output_full && o->status != ROW_OK))
			abort();
		if (o->len && (o->off < end || (max_output && o->off + o->len > max_output) ||
			       (hn < (int)sizeof(head) && strncmp(body.data + o->off, head, (size_t)hn))))
			abort();
		end = o->len ? o->off + o->len : end;
	}
	expo_init(&e);
	if (status == 200 && expo_parse(&e, body.data, body.len, EXPO_STRICT))
		abort();
	expo_free(&e);
	buf_free(&body);
	render_result_free(&res);
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
		evaluate(m, 0, 0);
		evaluate(m, (unsigned)size % 32, size % 7 ? 0 : size * 13 % 8192);
	}
	mapping_free(m);
	buf_free(&problems);
	return 0;
}
