/* file_read.h: the one reader of the files an admin names (the mapping, the web config and its PEM
 * files, the targets file, the token files, replayed answers).
 *
 * Such a file can be anything its name points at: a FIFO (open() would wait for a writer for ever,
 * and with it the thread: a fetch worker, the main thread on SIGHUP, start-up), a directory, a
 * device, or a file far larger than its reader needs. file_open opens without blocking
 * (O_NONBLOCK, O_NOCTTY, O_CLOEXEC), takes regular files only and bounds the size; file_read also
 * reads the whole file, bounded, and wipes every copy of a secret it made on the way.
 *
 * Errors: why gets the reason only, one printable line, for the caller to put after the file's
 * name in its own form (PATH:LINE:COLUMN, "token file PATH: ..."): "is a FIFO, not a regular
 * file", "is a directory", "is over N bytes", or the system's words ("No such file or directory").
 *
 * Ownership: a file_text owns data (file_text_free wipes it first when it was read as a secret);
 * file_open's descriptor is the caller's to close. Nothing is kept between calls: thread-safe. */
#ifndef SHIM_FILE_READ_H
#define SHIM_FILE_READ_H

#include <stddef.h>

enum { FILE_SECRET = 1 }; /* file_read flag: the bytes are a secret (a token, a key, password hashes) */

struct file_text {
	char *data;  /* NUL-terminated (the file may hold NULs too: len says where it ends) */
	size_t len;
	int secret;  /* read with FILE_SECRET: wiped when freed */
};

/* Open path for reading, without blocking: a descriptor of a regular file of at most max bytes (as
 * fstat says now; SIZE_MAX: the caller bounds what it reads itself), or -1 with why set. */
int file_open(const char *path, size_t max, char *why, size_t whylen);
/* The whole of path, at most max bytes, into *out (a file that grows past max while it is read is
 * refused too). 0, or -1 with why set and *out empty. */
int file_read(const char *path, size_t max, unsigned flags, struct file_text *out, char *why, size_t whylen);
/* Wipe (a secret) and free t's bytes; t is left empty. */
void file_text_free(struct file_text *t);

#endif
