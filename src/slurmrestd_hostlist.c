/* slurmrestd_hostlist.c: see slurmrestd_hostlist.h. Two passes: the first checks the list and counts
 * its hosts, the second calls fn, so a bad list calls nothing. */
#include "slurmrestd_hostlist.h"

#include <stdio.h>
#include <string.h>

/* One N or N-M of a bracket: its bounds and width; 0, or -1 when it is none. */
static int range(const char *s, size_t n, unsigned long *lo, unsigned long *hi, int *width)
{
	const char *dash = memchr(s, '-', n);
	size_t a = dash ? (size_t)(dash - s) : n;
	if (!a || a > 9 || (dash && (n - a - 1 == 0 || n - a - 1 > 9)))
		return -1;
	*lo = *hi = 0;
	for (size_t i = 0; i < n; i++) {
		if (i == a)
			continue;
		if (s[i] < '0' || s[i] > '9')
			return -1;
		unsigned long *t = i < a ? lo : hi;
		*t = *t * 10 + (unsigned long)(s[i] - '0');
	}
	if (!dash)
		*hi = *lo;
	*width = (int)a;
	return *hi < *lo || *hi - *lo >= REST_HOSTLIST_MAX ? -1 : 0;
}

/* One item (no top-level comma): its host count, or -1; with fn, each host. */
static long item(const char *s, size_t n, rest_host_fn fn, void *ctx)
{
	const char *open = memchr(s, '[', n), *close = open ? memchr(open, ']', n - (size_t)(open - s)) : NULL;
	if (!open) {
		if (!n || n >= REST_HOST_MAX || memchr(s, ']', n))
			return -1;
		if (fn)
			fn(ctx, s, n);
		return 1;
	}
	if (!close || memchr(open + 1, '[', (size_t)(close - open - 1)) || memchr(close + 1, '[', n - (size_t)(close + 1 - s)) ||
	    memchr(close + 1, ']', n - (size_t)(close + 1 - s)))
		return -1;
	size_t pre = (size_t)(open - s), suf = n - (size_t)(close + 1 - s);
	long count = 0;
	for (const char *r = open + 1; r < close;) {
		const char *end = memchr(r, ',', (size_t)(close - r));
		if (!end)
			end = close;
		unsigned long lo, hi;
		int width;
		if (range(r, (size_t)(end - r), &lo, &hi, &width) < 0 || pre + suf + 12 >= REST_HOST_MAX)
			return -1;
		count += (long)(hi - lo + 1);
		if (count > (long)REST_HOSTLIST_MAX)
			return -1;
		for (unsigned long v = lo; fn && v <= hi; v++) {
			char host[REST_HOST_MAX];
			int k = snprintf(host, sizeof(host), "%.*s%0*lu%.*s", (int)pre, s, width, v, (int)suf, close + 1);
			fn(ctx, host, (size_t)k);
		}
		r = end + 1;
	}
	return count;
}

/* Each top-level item of s[0..n) (commas inside brackets are the bracket's): the host count, or -1. */
static long walk(const char *s, size_t n, rest_host_fn fn, void *ctx)
{
	long total = 0;
	size_t start = 0;
	int depth = 0;
	for (size_t i = 0; i <= n; i++) {
		if (i < n && s[i] == '[')
			depth++;
		else if (i < n && s[i] == ']')
			depth--;
		if (depth < 0 || depth > 1)
			return -1;
		if (i < n && (s[i] != ',' || depth))
			continue;
		long c = item(s + start, i - start, fn, ctx);
		if (c < 0 || (total += c) > (long)REST_HOSTLIST_MAX)
			return -1;
		start = i + 1;
	}
	return depth ? -1 : total;
}

long rest_hostlist_each(const char *s, size_t n, rest_host_fn fn, void *ctx)
{
	if (!n)
		return 0;
	long c = walk(s, n, NULL, NULL);
	return c < 0 || !fn ? c : walk(s, n, fn, ctx);
}
