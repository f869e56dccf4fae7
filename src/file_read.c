/* file_read.c: see file_read.h. */
#include "file_read.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "xmalloc.h"

/* What a file that is not a regular one is, for why. */
static const char *kind_of(mode_t m)
{
	if (S_ISDIR(m))
		return "is a directory";
	if (S_ISFIFO(m))
		return "is a FIFO, not a regular file";
	if (S_ISCHR(m))
		return "is a character device, not a regular file";
	if (S_ISBLK(m))
		return "is a block device, not a regular file";
	if (S_ISSOCK(m))
		return "is a socket, not a regular file";
	return "is not a regular file";
}

static void say_errno(int e, char *why, size_t whylen)
{
	char sb[128];
	snprintf(why, whylen, "%s", strerror_r(e, sb, sizeof(sb)));
}

int file_open(const char *path, size_t max, char *why, size_t whylen)
{
	struct stat st;
	/* O_NONBLOCK: opening a FIFO returns at once (there is no writer to wait for), and a device
	 * is not waited on either; both are refused below, before any read */
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0) {
		say_errno(errno, why, whylen);
		return -1;
	}
	if (fstat(fd, &st) < 0) {
		say_errno(errno, why, whylen);
	} else if (!S_ISREG(st.st_mode)) {
		snprintf(why, whylen, "%s", kind_of(st.st_mode));
	} else if ((uintmax_t)st.st_size > (uintmax_t)max) {
		snprintf(why, whylen, "is over %zu bytes", max);
	} else {
		return fd;
	}
	close(fd);
	return -1;
}

/* Grow t to hold at least need bytes and a NUL, copying and (a secret) wiping the old bytes. */
static void grow(struct file_text *t, size_t *cap, size_t need, size_t max)
{
	size_t ncap = *cap ? *cap * 2 : 4096;
	if (ncap < need + 1)
		ncap = need + 1;
	if (ncap > max + 2) /* max + 1 bytes read say "over max"; the NUL after them */
		ncap = max + 2;
	char *n = xmalloc(ncap);
	if (t->len)
		memcpy(n, t->data, t->len);
	if (t->data && t->secret)
		explicit_bzero(t->data, *cap);
	free(t->data);
	t->data = n;
	*cap = ncap;
}

int file_read(const char *path, size_t max, unsigned flags, struct file_text *out, char *why, size_t whylen)
{
	struct stat st;
	size_t cap = 0;
	int fd = file_open(path, max, why, whylen), rc = -1;

	*out = (struct file_text){ .secret = (flags & FILE_SECRET) != 0 };
	if (max == SIZE_MAX)
		max = SIZE_MAX - 2; /* room for the byte past max and the NUL */
	if (fd < 0)
		return -1;
	/* one allocation for the size fstat gives (0 for many /proc files: they grow as read) */
	grow(out, &cap, fstat(fd, &st) == 0 ? (size_t)st.st_size + 1 : 0, max);
	for (;;) {
		if (cap - out->len < 2)
			grow(out, &cap, out->len + 1, max);
		ssize_t r = read(fd, out->data + out->len, cap - out->len - 1);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			say_errno(errno, why, whylen);
			goto out;
		}
		if (r == 0)
			break;
		out->len += (size_t)r;
		if (out->len > max) { /* it grew while it was read */
			snprintf(why, whylen, "is over %zu bytes", max);
			goto out;
		}
	}
	out->data[out->len] = '\0';
	rc = 0;
out:
	close(fd);
	if (rc < 0) {
		if (out->data && out->secret)
			explicit_bzero(out->data, cap);
		free(out->data);
		out->data = NULL;
		out->len = 0;
	}
	return rc;
}

void file_text_free(struct file_text *t)
{
	if (t->data && t->secret)
		explicit_bzero(t->data, t->len + 1);
	free(t->data);
	t->data = NULL;
	t->len = 0;
}
