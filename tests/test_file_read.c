/* test_file_read.c: the one reader of the files an admin names (src/file_read.c): a FIFO (with no
 * writer: it used to block the reader for ever), a directory, a device, a socket, a missing file,
 * sizes at and over the cap (from fstat, and a file that grows past it while it is read), a file
 * holding NULs, a symlink to a FIFO, file_open's descriptor (regular, non-blocking). Every test
 * runs under alarm(): a reader that blocks fails instead of hanging. */
#include "testutil.h"

#include <fcntl.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/un.h>

#include "file_read.h"

static char dir[160];

static const char *in_dir(const char *name)
{
	static char path[4][256];
	static int k;
	k = (k + 1) % 4;
	snprintf(path[k], sizeof(path[k]), "%s/%s", dir, name);
	return path[k];
}

static int setup(void **state)
{
	(void)state;
	snprintf(dir, sizeof(dir), "%s/file-XXXXXX", tu_tmpdir());
	assert_non_null(mkdtemp(dir));
	alarm(20);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	alarm(0);
	char cmd[300];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd) == 0 ? 0 : -1;
}

/* file_read of path must fail with exactly why; *out is left empty. */
static void refused(const char *path, size_t max, const char *want)
{
	struct file_text t = { .data = (char *)"x", .len = 9 };
	char why[128] = "unset";
	assert_int_equal(file_read(path, max, 0, &t, why, sizeof(why)), -1);
	if (strcmp(why, want))
		fail_msg("%s: got \"%s\", want \"%s\"", path, why, want);
	assert_null(t.data);
	assert_int_equal(t.len, 0);
	file_text_free(&t); /* an empty one: nothing */
	assert_int_equal(file_open(path, max, why, sizeof(why)), -1);
	assert_string_equal(why, want);
}

static void test_not_regular(void **state)
{
	(void)state;
	const char *fifo = in_dir("fifo");
	assert_int_equal(mkfifo(fifo, 0600), 0);
	refused(fifo, 1024, "is a FIFO, not a regular file"); /* no writer: open() alone would wait */
	assert_int_equal(symlink(fifo, in_dir("link")), 0);
	refused(in_dir("link"), 1024, "is a FIFO, not a regular file");
	refused(dir, 1024, "is a directory");
	refused("/dev/null", 1024, "is a character device, not a regular file");
	refused("/dev/zero", SIZE_MAX, "is a character device, not a regular file");
	refused(in_dir("missing"), 1024, "No such file or directory");
	refused("", 1024, "No such file or directory");

	/* a socket cannot be opened (ENXIO): the system's words */
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", in_dir("sock"));
	int s = socket(AF_UNIX, SOCK_STREAM, 0);
	assert_true(s >= 0);
	assert_int_equal(bind(s, (struct sockaddr *)&sa, sizeof(sa)), 0);
	char why[128];
	struct file_text t;
	assert_int_equal(file_read(sa.sun_path, 1024, 0, &t, why, sizeof(why)), -1);
	assert_string_equal(why, "No such device or address");
	close(s);
}

/* A FIFO with a writer that keeps it open is still refused at once, not read. */
static void test_fifo_with_writer(void **state)
{
	(void)state;
	const char *fifo = in_dir("fifo2");
	assert_int_equal(mkfifo(fifo, 0600), 0);
	int r = open(fifo, O_RDONLY | O_NONBLOCK), w = open(fifo, O_WRONLY | O_NONBLOCK);
	assert_true(r >= 0 && w >= 0);
	refused(fifo, 1024, "is a FIFO, not a regular file");
	close(w);
	close(r);
}

static void test_sizes(void **state)
{
	(void)state;
	struct file_text t;
	char why[128];
	const char *f = in_dir("f");
	tu_write(f, "0123456789");
	assert_int_equal(file_read(f, 10, 0, &t, why, sizeof(why)), 0); /* exactly the cap */
	assert_int_equal(t.len, 10);
	assert_string_equal(t.data, "0123456789");
	file_text_free(&t);
	assert_null(t.data);
	refused(f, 9, "is over 9 bytes");
	tu_write(f, "");
	assert_int_equal(file_read(f, 0, 0, &t, why, sizeof(why)), 0);
	assert_int_equal(t.len, 0);
	assert_string_equal(t.data, "");
	file_text_free(&t);
	/* a sparse file far over the cap: refused from fstat, never read */
	int fd = open(f, O_WRONLY | O_TRUNC);
	assert_int_equal(ftruncate(fd, (off_t)1 << 30), 0);
	close(fd);
	refused(f, 1u << 20, "is over 1048576 bytes");
	/* bytes after a NUL are kept: len says where the file ends */
	fd = open(f, O_WRONLY | O_TRUNC);
	assert_int_equal(write(fd, "a\0b", 3), 3);
	close(fd);
	assert_int_equal(file_read(f, 100, FILE_SECRET, &t, why, sizeof(why)), 0);
	assert_int_equal(t.len, 3);
	assert_int_equal(t.secret, 1);
	assert_memory_equal(t.data, "a\0b", 4);
	file_text_free(&t);
	/* more than one growth of the buffer (fstat says 0 for /proc files, which grow as read) */
	assert_int_equal(file_read("/proc/self/maps", 1u << 24, 0, &t, why, sizeof(why)), 0);
	assert_true(t.len > 0 && strlen(t.data) == t.len);
	file_text_free(&t);
	assert_int_equal(file_read("/proc/self/maps", 10, 0, &t, why, sizeof(why)), -1); /* grew past 10 */
	assert_string_equal(why, "is over 10 bytes");
}

/* file_open: a non-blocking descriptor of the regular file itself, for a streaming reader. */
static void test_open(void **state)
{
	(void)state;
	char why[128], got[8] = "";
	const char *f = in_dir("g");
	tu_write(f, "abc");
	int fd = file_open(f, SIZE_MAX, why, sizeof(why));
	assert_true(fd >= 0);
	assert_true(fcntl(fd, F_GETFD) & FD_CLOEXEC);
	assert_int_equal(read(fd, got, sizeof(got)), 3);
	assert_string_equal(got, "abc");
	close(fd);
	assert_int_equal(file_open(f, 2, why, sizeof(why)), -1);
	assert_string_equal(why, "is over 2 bytes");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_not_regular),
		cmocka_unit_test(test_fifo_with_writer),
		cmocka_unit_test(test_sizes),
		cmocka_unit_test(test_open),
	};
	return cmocka_run_group_tests_name("file_read", tests, setup, teardown);
}
