/* compress.h: an answer's gzip form, for the clients that accept it (server.c, http_encoding.h).
 * libdeflate's whole-buffer compressor at COMPRESS_LEVEL: an answer is a finished buffer, and at
 * 10,000 nodes level 1 makes the 4.2 MB answer 8% of its size in about 12 ms of CPU, where zlib's
 * level 1 takes 20 ms for 9% and any higher level of either passes 15 ms (docs/performance.md,
 * "Compressed answers", measured by tests/bench/bench_gzip.c).
 *
 * The gzip form is computed once per answer, by the first request that wants it, under the
 * answer's lock (concurrent requests wait for that one result), and then borrowed by every request
 * that sends the answer, as the plain body is; it is freed with the answer (compressed_free). A
 * form that fails, or does not come out smaller than the plain body, is never made: the answer is
 * then sent plain (never a broken body). So an answer holds at most twice its plain size, about
 * 1.08 times in practice.
 * Ownership: a struct compressed owns its body; compressed_get lends it for as long as the caller
 * holds the answer it belongs to. The stats are a scraper's (its self metrics), updated atomically. */
#ifndef SHIM_COMPRESS_H
#define SHIM_COMPRESS_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>

#include "buf.h"

#define COMPRESS_LEVEL 1

struct compressed {
	pthread_mutex_t mu;
	int state;          /* 0: not tried yet; 1: body holds the gzip form; -1: none (send plain) */
	unsigned char *body;
	size_t len;
};

/* One scraper's answers since start, for its self metrics. */
struct compress_stats {
	atomic_ulong answers;       /* gzip forms made (once per answer) */
	atomic_ullong cpu_ns;       /* CPU time making them */
	atomic_ullong bytes[2];     /* body bytes queued for GET requests, by enum content_coding */
};

void compressed_init(struct compressed *z);
void compressed_free(struct compressed *z);
/* The bytes of z's gzip form (0: not made, or none). */
size_t compressed_bytes(struct compressed *z);
/* The gzip form of the len bytes at plain, made on the first call (st counts it; NULL: not
 * counted): 0 with *body and *blen, or -1 when there is none (send plain). Every call for one
 * struct compressed must pass the same plain bytes. */
int compressed_get(struct compressed *z, const void *plain, size_t len, struct compress_stats *st,
		   const void **body, size_t *blen);
/* One whole-buffer gzip member of in at level (1 to 12) into a new buffer *out of *outlen bytes,
 * smaller than len: 0, or -1 (nothing allocated) when it fails or would not be smaller. */
int compress_gzip(const void *in, size_t len, int level, unsigned char **out, size_t *outlen);
/* Count body bytes sent with coding (enum content_coding) for the self metrics. */
void compress_count_sent(struct compress_stats *st, int coding, size_t bytes);

#endif
