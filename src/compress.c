/* compress.c: see compress.h. */
#include "compress.h"
#include "http_encoding.h"
#include "log.h"
#include "xmalloc.h"

#include <libdeflate.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

void compressed_init(struct compressed *z)
{
	*z = (struct compressed){ .state = 0 };
	pthread_mutex_init(&z->mu, NULL);
}

void compressed_free(struct compressed *z)
{
	pthread_mutex_destroy(&z->mu);
	free(z->body);
	z->body = NULL;
}

int compress_gzip(const void *in, size_t len, int level, unsigned char **out, size_t *outlen)
{
	struct libdeflate_compressor *c;
	unsigned char *buf;
	size_t n = 0;
	if (len < 2 || !(c = libdeflate_alloc_compressor(level)))
		return -1;
	/* A quarter of the answer first (a text answer comes out at 8 to 10%), so that making the form
	 * takes no more than that beside the answer; then room for len - 1 bytes: a form that does not
	 * fit there saves nothing. libdeflate says "does not fit" with 0. */
	size_t cap = len / 4 >= 256 ? len / 4 : len - 1;
	buf = xmalloc(cap);
	n = libdeflate_gzip_compress(c, in, len, buf, cap);
	if (n == 0 && cap < len - 1) {
		free(buf);
		buf = xmalloc(cap = len - 1);
		n = libdeflate_gzip_compress(c, in, len, buf, cap);
	}
	libdeflate_free_compressor(c);
	if (n == 0) {
		free(buf);
		return -1;
	}
	*out = xrealloc(buf, n);
	*outlen = n;
	return 0;
}

static unsigned long long thread_cpu_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (unsigned long long)ts.tv_sec * 1000000000ull + (unsigned long long)ts.tv_nsec;
}

int compressed_get(struct compressed *z, const void *plain, size_t len, struct compress_stats *st,
		   const void **body, size_t *blen)
{
	int ok;
	pthread_mutex_lock(&z->mu);
	if (z->state == 0) {
		unsigned long long t0 = thread_cpu_ns();
		z->state = compress_gzip(plain, len, COMPRESS_LEVEL, &z->body, &z->len) == 0 ? 1 : -1;
		unsigned long long ns = thread_cpu_ns() - t0;
		if (st && z->state == 1)
			atomic_fetch_add(&st->answers, 1);
		if (st)
			atomic_fetch_add(&st->cpu_ns, ns);
		if (z->state == 1)
			log_debug("answer compressed: %zu bytes -> %zu gzip (%.1f%%) in %.1f ms of CPU", len, z->len,
				  100.0 * (double)z->len / (double)len, (double)ns / 1e6);
		else
			log_debug("answer of %zu bytes sent plain: no smaller gzip form", len);
	}
	ok = z->state == 1;
	if (ok) {
		*body = z->body;
		*blen = z->len;
	}
	pthread_mutex_unlock(&z->mu);
	return ok ? 0 : -1;
}

void compress_count_sent(struct compress_stats *st, int coding, size_t bytes)
{
	if (st && (coding == CODING_IDENTITY || coding == CODING_GZIP))
		atomic_fetch_add(&st->bytes[coding], (unsigned long long)bytes);
}

size_t compressed_bytes(struct compressed *z)
{
	pthread_mutex_lock(&z->mu);
	size_t n = z->state == 1 ? z->len : 0;
	pthread_mutex_unlock(&z->mu);
	return n;
}
