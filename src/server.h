/* server.h: the HTTP side (libmicrohttpd): /metrics (configurable), slurmctld's own families at
 * /native/metrics/<endpoint> (native.h; unless switched off), a status page at / (status.h), 404
 * elsewhere, GET and HEAD only, optional TLS and basic auth from a web config file.
 *
 * Thread model: one thread per connection (MHD_USE_THREAD_PER_CONNECTION), because a scrape blocks
 * for up to the upstream timeout while it waits for slurmctld; the connection limit bounds the
 * threads, a per-IP limit keeps one client from taking them all, and idle connections time out.
 * /probe?target=NAME (with --probe.targets-file) answers as /metrics does, from that target's
 * scraper; an unknown or missing target gets 400 and fetches nothing.
 * Listeners: one libmicrohttpd daemon per address (--web.listen-address, repeated) or per socket
 * systemd passed (--web.systemd-socket), each with the connection limits; all serve the same, but
 * that a listener may be bound to a schema (server_config.listen_schema) for its metrics path.
 * Ownership: server_start returns a new server (server_stop frees it); it borrows the scraper, the
 * probe set and the web config, which must outlive it, and takes the listen_fds (closed on stop). */
#ifndef SHIM_SERVER_H
#define SHIM_SERVER_H

#include <stddef.h>

struct probe_set;
struct scraper;
struct webconfig;

struct server_config {
	const char *const *listen;   /* ":9341", "127.0.0.1:9341", "[::1]:9341": nlisten of them */
	size_t nlisten;
	const int *listen_fds;       /* listening sockets to serve instead (systemd's: sdlisten.h), or NULL */
	size_t nfds;
	const char *path;            /* "/metrics" */
	unsigned max_connections;
	unsigned per_ip_connections;
	unsigned connection_timeout; /* seconds */
	double upstream_timeout;     /* seconds, upper bound of a scrape's fetch */
	const struct webconfig *web; /* NULL: plain HTTP, no auth */
	const char *mapping_file;    /* named on the status page at /; NULL: none */
	const struct probe_set *probes; /* /probe?target=NAME (probe.h); NULL: /probe is not served */
	int native_passthrough;      /* serve /native/metrics/<endpoint> (native.h) */
	int compression;             /* gzip answers for clients that accept it (http_encoding.h) */
	/* Several schemas (mapping.h's mapping_load_set): schemas[i] serves /schemas/<schema_stem[i]>/metrics
	 * (a stem "" is not served there), schemas[0] is the scraper given to server_start; listener i
	 * serves schemas[listen_schema[i]] at path. nschemas 0: the scraper alone, everywhere. */
	struct scraper *const *schemas;
	const char *const *schema_stem;
	size_t nschemas;
	const size_t *listen_schema; /* nlisten of them; NULL: every listener serves the first */
};

struct server;

struct server *server_start(const struct server_config *cfg, struct scraper *s, char *err, size_t errlen);
/* The port actually bound by the first listener (useful with port 0). */
unsigned server_port(const struct server *srv);
/* Every listener for the log: "127.0.0.1:9341 (port 9341), [::1]:0 (port 40123)" or
 * "systemd socket fd 3 (127.0.0.1:9341)". Owned by the server. */
const char *server_listening(const struct server *srv);
void server_stop(struct server *srv);

#endif
