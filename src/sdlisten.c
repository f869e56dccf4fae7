/* sdlisten.c: see sdlisten.h. */
#include "sdlisten.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

/* A decimal number of at most 9 digits, nothing else: its value, or -1. */
static long decimal(const char *s)
{
	size_t n = s ? strspn(s, "0123456789") : 0;
	return n && n <= 9 && !s[n] ? atol(s) : -1;
}

/* Why fd is not a listening stream socket, or NULL. */
static const char *not_listening(int fd)
{
	struct stat st;
	int type = 0, acc = 0;
	socklen_t l = sizeof(type), la = sizeof(acc);
	if (fstat(fd, &st) < 0)
		return errno == EBADF ? "is not open" : strerror(errno);
	if (!S_ISSOCK(st.st_mode))
		return "is not a socket";
	if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &l) < 0 || type != SOCK_STREAM)
		return "is not a stream socket (ListenStream= in the .socket unit)";
	if (getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &acc, &la) < 0 || !acc)
		return "is not listening";
	return NULL;
}

int sdlisten_fds(int *fds, size_t max, char *err, size_t errlen)
{
	const char *pid_s = getenv("LISTEN_PID"), *fds_s = getenv("LISTEN_FDS");
	long pid = decimal(pid_s), n = decimal(fds_s);
	int rc = -1;
	if (!pid_s || !fds_s)
		snprintf(err, errlen, "--web.systemd-socket: no socket passed by systemd (LISTEN_PID and LISTEN_FDS are "
		 "not set: start the shim from its .socket unit, or leave --web.systemd-socket out)");
	else if (pid != (long)getpid())
		snprintf(err, errlen, "--web.systemd-socket: the sockets passed are not this process's (LISTEN_PID %.20s, "
		 "this process %ld)", pid_s, (long)getpid());
	else if (n < 1 || (size_t)n > max)
		snprintf(err, errlen, "--web.systemd-socket: LISTEN_FDS \"%.20s\" is not a count of sockets from 1 to %zu",
			 fds_s, max);
	else
		rc = 0;
	for (long i = 0; rc == 0 && i < n; i++) {
		int fd = SDLISTEN_FDS_START + (int)i;
		const char *why = not_listening(fd);
		if (why) {
			snprintf(err, errlen, "--web.systemd-socket: fd %d (socket %ld of LISTEN_FDS %ld) %s", fd, i + 1, n, why);
			rc = -1;
			break;
		}
		fcntl(fd, F_SETFD, FD_CLOEXEC);
		fds[i] = fd;
	}
	unsetenv("LISTEN_PID");
	unsetenv("LISTEN_FDS");
	unsetenv("LISTEN_FDNAMES");
	return rc < 0 ? -1 : (int)n;
}
