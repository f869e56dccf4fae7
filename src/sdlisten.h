/* sdlisten.h: systemd socket activation (--web.systemd-socket) without libsystemd: the protocol of
 * sd_listen_fds(3). systemd starts the service with the .socket unit's listening sockets open from
 * fd 3 (SD_LISTEN_FDS_START), LISTEN_FDS their count and LISTEN_PID the service's own pid (so that a
 * child the service starts does not take them as its own). As exporter-toolkit's --web.systemd-socket
 * (go-systemd's activation.Listeners), every socket passed is served and --web.listen-address is
 * not used.
 *
 * Ownership: the fds returned are the process's (from systemd); the caller serves and closes them.
 * Not thread-safe: it unsets LISTEN_PID, LISTEN_FDS and LISTEN_FDNAMES (as sd_listen_fds(1) does,
 * so that nothing the shim starts inherits them), so call it before any thread starts. */
#ifndef SHIM_SDLISTEN_H
#define SHIM_SDLISTEN_H

#include <stddef.h>

#define SDLISTEN_FDS_START 3
#define SDLISTEN_MAX 8 /* sockets served at most */

/* The sockets passed: their count (1 to max) with fds[] filled and each set close-on-exec, or -1
 * with why in err: no LISTEN_PID or LISTEN_FDS (not started by a .socket unit), LISTEN_PID another
 * process's, a count that is not a decimal number from 1 to max, or an fd that is not a listening
 * stream socket. */
int sdlisten_fds(int *fds, size_t max, char *err, size_t errlen);

#endif
