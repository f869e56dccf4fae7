/* server.c: see server.h. */
#include "server.h"
#include "buf.h"
#include "compress.h"
#include "http_encoding.h"
#include "log.h"
#include "mapping.h"
#include "probe.h"
#include "native.h"
#include "scrape.h"
#include "status.h"
#include "webconfig.h"
#include "writer.h"

#include <arpa/inet.h>
#include <errno.h>
#include <microhttpd.h>
#include <netdb.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define SERVER_LISTEN_MAX 8

struct server {
	struct server_config cfg;
	struct scraper *scraper;
	struct MHD_Daemon *d[SERVER_LISTEN_MAX];
	int fd[SERVER_LISTEN_MAX];       /* until its daemon owns it */
	const char *listen_use[SERVER_LISTEN_MAX]; /* cfg.listen without duplicates (listen_dedupe) */
	size_t schema_use[SERVER_LISTEN_MAX];      /* and their cfg.listen_schema */
	unsigned port[SERVER_LISTEN_MAX];
	int lfd[SERVER_LISTEN_MAX];      /* listener i's socket, set before its daemon starts (listener_schema) */
	size_t n;
	char listening[1024];
	/* Why MHD_start_daemon failed: the first message libmicrohttpd logs on the starting thread
	 * while `starting` (e.g. GnuTLS refusing the certificate/key pair). Only the starting thread
	 * reads or writes these two, so they need no lock. */
	pthread_t starter;
	int starting;
	char why[300];
};

/* Content type and the web config's headers, on every response (401 included, as exporter-toolkit). */
static void add_headers(struct MHD_Response *r, const char *ctype, const struct webconfig *wc)
{
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, ctype);
	for (size_t i = 0; wc && i < webconfig_header_count(wc); i++) {
		const char *k, *v;
		webconfig_header(wc, i, &k, &v);
		MHD_add_response_header(r, k, v);
	}
}

/* Queue r (its body already set) with the content type and the web config's headers. */
static enum MHD_Result queue(struct MHD_Connection *c, unsigned code, struct MHD_Response *r, const char *ctype,
			     const struct webconfig *wc)
{
	enum MHD_Result ret;
	add_headers(r, ctype, wc);
	if (code == MHD_HTTP_METHOD_NOT_ALLOWED)
		MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, "GET, HEAD");
	ret = MHD_queue_response(c, code, r);
	MHD_destroy_response(r);
	return ret;
}

static enum MHD_Result respond(struct MHD_Connection *c, unsigned code, char *body, size_t len, const char *ctype,
			       const struct webconfig *wc)
{
	struct MHD_Response *r = MHD_create_response_from_buffer(len, body, MHD_RESPMEM_MUST_FREE);
	if (!r) {
		free(body);
		return MHD_NO;
	}
	return queue(c, code, r, ctype, wc);
}

/* A connection sending an answer: registered with the answer (answer.h) from its response's creation
 * to its release, so that it can be closed when what clients that do not read hold is over
 * --web.max-held-bytes. */
struct holding {
	struct answer_holder h;
	MHD_socket fd;
};

/* Close the connection at once: no lingering (a reset, not the rest of the answer), and both
 * directions shut, which wakes its libmicrohttpd thread, whose send then fails and closes it. The fd
 * is still the connection's: the response (and with it this holder) is released before
 * libmicrohttpd closes a connection's socket, and answer.c calls this under the lock that
 * answer_unhold takes. */
static void evict(struct answer_holder *h)
{
	MHD_socket fd = ((struct holding *)h->cls)->fd;
	struct linger now = { 1, 0 };
	setsockopt(fd, SOL_SOCKET, SO_LINGER, &now, sizeof(now));
	shutdown(fd, SHUT_RDWR);
}

static void answer_release(void *cls)
{
	struct holding *k = cls;
	struct answer *a = k->h.a;
	if (k->fd != MHD_INVALID_SOCKET)
		answer_unhold(&k->h);
	answer_unref(a);
	free(k);
}

static enum MHD_Result add_accept_encoding(void *cls, enum MHD_ValueKind kind, const char *key, size_t klen,
					  const char *value, size_t vlen)
{
	(void)kind;
	if (klen == strlen(MHD_HTTP_HEADER_ACCEPT_ENCODING) && !strcasecmp(key, MHD_HTTP_HEADER_ACCEPT_ENCODING))
		accept_encoding_add(cls, value ? value : "", value ? vlen : 0);
	return MHD_YES;
}

/* What the request's Accept-Encoding lines (all of them: several are one list) choose. */
static enum content_coding negotiate(struct MHD_Connection *c)
{
	struct accept_encoding ae;
	accept_encoding_init(&ae);
	MHD_get_connection_values_n(c, MHD_HEADER_KIND, add_accept_encoding, &ae);
	return accept_encoding_choose(&ae);
}

/* A scrape's answer is shared by every connection sending it: the response borrows the body and
 * holds a reference, dropped when libmicrohttpd is done with the response (the last byte sent or
 * the connection closed), so N slow readers of one answer hold one body, not N. With compression
 * on, /metrics, /native/metrics/<endpoint> and /probe are negotiable: every answer of theirs says
 * Vary: Accept-Encoding, and a 200 goes to a client that accepts gzip as the answer's one gzip form
 * (compress.h), borrowed the same way; a 503 (a few lines of reasons) always goes plain. HEAD gets
 * the same headers, its Content-Length that of the coding chosen (libmicrohttpd sets it from the
 * body and sends no body). s: the scraper the answer is from, whose self metrics count it. */
static enum MHD_Result respond_answer(struct server *srv, struct MHD_Connection *c, struct scraper *s, struct answer *a,
				      int head)
{
	unsigned code = (unsigned)a->status;
	const void *body = a->body;
	size_t len = a->len;
	enum content_coding coding = CODING_IDENTITY;
	if (srv->cfg.compression && code == 200 && negotiate(c) == CODING_GZIP &&
	    answer_gzip(a, scraper_compress_stats(s), &body, &len) == 0)
		coding = CODING_GZIP;
	struct holding *k = xcalloc(1, sizeof(*k));
	const union MHD_ConnectionInfo *ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
	k->h.a = a;
	k->h.evict = evict;
	k->h.cls = k;
	k->fd = ci ? ci->connect_fd : MHD_INVALID_SOCKET;
	struct MHD_Response *r = MHD_create_response_from_buffer_with_free_callback_cls(len, (void *)body, answer_release, k);
	if (!r) {
		answer_unref(a);
		free(k);
		return MHD_NO;
	}
	if (k->fd != MHD_INVALID_SOCKET)
		answer_hold(a, &k->h);
	if (!head)
		compress_count_sent(scraper_compress_stats(s), coding, len);
	if (srv->cfg.compression)
		MHD_add_response_header(r, MHD_HTTP_HEADER_VARY, MHD_HTTP_HEADER_ACCEPT_ENCODING);
	if (coding == CODING_GZIP)
		MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_ENCODING, "gzip");
	return queue(c, code, r, code == 200 ? TEXT_CONTENT_TYPE : "text/plain; charset=utf-8", srv->cfg.web);
}

static enum MHD_Result text(struct MHD_Connection *c, unsigned code, const char *msg, const struct webconfig *wc)
{
	return respond(c, code, xstrdup(msg), strlen(msg), "text/plain; charset=utf-8", wc);
}

static int authorized(struct server *srv, struct MHD_Connection *c)
{
	const struct webconfig *wc = srv->cfg.web;
	const char *h = NULL;
	size_t hlen = 0;
	struct basic_cred cred;
	int ok;
	if (!wc || !webconfig_has_users(wc))
		return 1;
	/* decoded here, not by MHD_basic_auth_get_username_password: its C strings would hide a NUL in
	 * the password ("right\0junk" would pass) */
	if (MHD_lookup_connection_value_n(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_AUTHORIZATION,
					  strlen(MHD_HTTP_HEADER_AUTHORIZATION), &h, &hlen) != MHD_YES ||
	    webconfig_parse_basic(h, hlen, &cred) < 0)
		return 0;
	ok = webconfig_auth_is_valid(wc, cred.user, cred.ulen, cred.pass, cred.plen, NULL);
	webconfig_basic_free(&cred);
	return ok;
}

static enum MHD_Result count_content_length(void *cls, enum MHD_ValueKind kind, const char *key, const char *value)
{
	(void)kind;
	(void)value;
	if (!strcasecmp(key, MHD_HTTP_HEADER_CONTENT_LENGTH))
		(*(unsigned *)cls)++;
	return MHD_YES;
}

static enum MHD_Result unauthorized(struct MHD_Connection *c, const struct webconfig *wc)
{
	struct MHD_Response *r = MHD_create_response_from_buffer(13, (void *)"Unauthorized\n", MHD_RESPMEM_PERSISTENT);
	enum MHD_Result ret;
	if (!r)
		return MHD_NO;
	add_headers(r, "text/plain; charset=utf-8", wc);
	ret = MHD_queue_basic_auth_fail_response(c, "slurm-exporter-shim", r);
	MHD_destroy_response(r);
	return ret;
}

/* The least a client's X-Prometheus-Scrape-Timeout-Seconds lowers a scrape's deadline to. */
#define SCRAPE_TIMEOUT_FLOOR_S 0.25

/* Prometheus sends its scrape timeout; answer a little before it gives up. It bounds how long this
 * scrape waits, never the shared fetch (see scrape.h); absurd values are raised to the floor. */
static double scrape_timeout(struct server *srv, struct MHD_Connection *c)
{
	double t = srv->cfg.upstream_timeout;
	const char *h = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "X-Prometheus-Scrape-Timeout-Seconds");
	if (h) {
		char *end;
		double v = strtod(h, &end);
		if (end != h && v > 0 && v < 86400) {
			v -= v > 2 ? 0.5 : v * 0.25;
			if (v < SCRAPE_TIMEOUT_FLOOR_S)
				v = SCRAPE_TIMEOUT_FLOOR_S;
			if (v < t)
				t = v;
		}
	}
	return t;
}

/* The status page: the last answer's record, read through a reference (it fetches nothing of its own). */
static enum MHD_Result status(struct server *srv, struct MHD_Connection *c)
{
	struct scraper_status st;
	struct status_page_info info = { SHIM_VERSION, srv->cfg.path, srv->cfg.mapping_file, 0, srv->cfg.probes,
					 srv->cfg.native_passthrough, srv->cfg.schema_stem, srv->cfg.nschemas,
					 srv->cfg.listen, srv->cfg.listen_fds ? 0 : srv->cfg.nlisten, srv->cfg.listen_schema, NULL };
	struct scraper_status other[MAPPING_SET_MAX];
	const struct scraper_status *other_p[MAPPING_SET_MAX] = { 0 };
	size_t n = srv->cfg.schemas && srv->cfg.nschemas <= MAPPING_SET_MAX ? srv->cfg.nschemas : 0;
	struct buf b;
	struct timespec now;
	size_t len;
	clock_gettime(CLOCK_REALTIME, &now);
	info.now = (double)now.tv_sec + now.tv_nsec / 1e9;
	scraper_status(srv->scraper, &st);
	for (size_t k = 1; k < n; k++) { /* every schema's rows, each from its own last answer */
		scraper_status(srv->cfg.schemas[k], &other[k]);
		other_p[k] = &other[k];
	}
	info.schema_st = n > 1 ? other_p : NULL;
	buf_init(&b, 0);
	status_page(&b, &info, &st);
	for (size_t k = 1; k < n; k++)
		scraper_status_put(srv->cfg.schemas[k], &other[k]);
	scraper_status_put(srv->scraper, &st);
	char *body = buf_steal(&b, &len);
	return respond(c, MHD_HTTP_OK, body, len, "text/html; charset=utf-8", srv->cfg.web);
}

/* The `target` parameters of a query: how many, and the first one's value (NULL: none, or
 * "?target" without a value). */
struct target_arg {
	unsigned count;
	const char *value;
	size_t len;
};

static enum MHD_Result count_target(void *cls, enum MHD_ValueKind kind, const char *key, size_t key_size,
				    const char *value, size_t value_size)
{
	struct target_arg *t = cls;
	(void)kind;
	if (key_size != 6 || memcmp(key, "target", 6))
		return MHD_YES; /* exact case, as the blackbox exporter's url.Values; "TARGET" is another parameter */
	if (!t->count++) {
		t->value = value;
		t->len = value_size;
	}
	return MHD_YES;
}

/* /probe?target=NAME: that target's scrape. Only names from the targets file are looked up; the
 * value is taken with its length, so "a%00b" is not "a". The parameter is matched exactly
 * (libmicrohttpd's own lookup ignores case), and a repeated one is refused: which of two clusters
 * the answer is about must not depend on who reads the query. */
static enum MHD_Result probe(struct server *srv, struct MHD_Connection *c, int head)
{
	struct target_arg t = { 0, NULL, 0 };
	char msg[400], safe[300];
	MHD_get_connection_values_n(c, MHD_GET_ARGUMENT_KIND, count_target, &t);
	if (t.count > 1) {
		snprintf(msg, sizeof(msg), "parameter \"target\" given %u times: give it once\n", t.count);
		return text(c, MHD_HTTP_BAD_REQUEST, msg, srv->cfg.web);
	}
	if (!t.value)
		return text(c, MHD_HTTP_BAD_REQUEST, "missing parameter \"target\"\n", srv->cfg.web);
	struct scraper *s = probe_set_find(srv->cfg.probes, t.value, t.len);
	if (!s) {
		snprintf(msg, sizeof(msg), "unknown target \"%s\"\n", log_escape(safe, sizeof(safe), t.value, t.len));
		return text(c, MHD_HTTP_BAD_REQUEST, msg, srv->cfg.web);
	}
	return respond_answer(srv, c, s, scraper_answer(s, scrape_timeout(srv, c)), head);
}

/* The scraper of /schemas/<stem>/metrics, or NULL: another path. */
static struct scraper *schema_at(const struct server *srv, const char *url)
{
	static const char pre[] = "/schemas/", post[] = "/metrics";
	size_t n = strlen(url);
	if (n <= sizeof(pre) - 1 + sizeof(post) - 1 || strncmp(url, pre, sizeof(pre) - 1) ||
	    strcmp(url + n - (sizeof(post) - 1), post))
		return NULL;
	const char *stem = url + sizeof(pre) - 1;
	size_t len = n - (sizeof(pre) - 1) - (sizeof(post) - 1);
	for (size_t i = 0; i < srv->cfg.nschemas; i++)
		if (srv->cfg.schema_stem[i][0] && strlen(srv->cfg.schema_stem[i]) == len && !memcmp(stem, srv->cfg.schema_stem[i], len))
			return srv->cfg.schemas[i];
	return NULL;
}

/* The scraper of the metrics path on the listener connection c came through. */
static struct scraper *listener_schema(const struct server *srv, struct MHD_Connection *c)
{
	const union MHD_ConnectionInfo *ci = srv->cfg.listen_schema ? MHD_get_connection_info(c, MHD_CONNECTION_INFO_DAEMON) : NULL;
	const union MHD_DaemonInfo *di = ci ? MHD_get_daemon_info(ci->daemon, MHD_DAEMON_INFO_LISTEN_FD) : NULL;
	for (size_t i = 0; di && i < srv->n; i++)
		if (srv->lfd[i] == di->listen_fd && srv->cfg.listen_schema[i] < srv->cfg.nschemas)
			return srv->cfg.schemas[srv->cfg.listen_schema[i]];
	return srv->scraper;
}

static enum MHD_Result handle(void *cls, struct MHD_Connection *c, const char *url, const char *method,
			      const char *version, const char *upload, size_t *upload_size, void **state)
{
	struct server *srv = cls;
	const struct webconfig *wc = srv->cfg.web;
	(void)version;
	(void)upload;
	if (!*state) {
		/* First call: headers only. Everything is decided now, because libmicrohttpd takes no
		 * response while a body is being received (it would drop the connection without an
		 * answer); the body is never read. Credentials come before the method, so that without
		 * them every method gets 401 (as exporter-toolkit answers). */
		const char *cl = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
		unsigned ncl = 0;
		*state = srv;
		MHD_get_connection_values(c, MHD_HEADER_KIND, count_content_length, &ncl);
		if (ncl > 1) /* which one frames the body? a proxy in front may pick the other (smuggling) */
			return text(c, MHD_HTTP_BAD_REQUEST, "more than one Content-Length\n", wc);
		if (!authorized(srv, c))
			return unauthorized(c, wc);
		if (strcmp(method, MHD_HTTP_METHOD_GET) && strcmp(method, MHD_HTTP_METHOD_HEAD))
			return text(c, MHD_HTTP_METHOD_NOT_ALLOWED, "only GET and HEAD are supported\n", wc);
		if ((cl && strspn(cl, "0") != strlen(cl)) ||
		    MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_TRANSFER_ENCODING))
			return text(c, MHD_HTTP_METHOD_NOT_ALLOWED, "request bodies are not accepted\n", wc);
		return MHD_YES;
	}
	if (*upload_size)
		return MHD_NO; /* a body the headers did not announce: close */
	int head = strcmp(method, MHD_HTTP_METHOD_HEAD) == 0;
	struct scraper *one = strcmp(url, srv->cfg.path) == 0 ? listener_schema(srv, c) : schema_at(srv, url);
	if (one)
		return respond_answer(srv, c, one, scraper_answer(one, scrape_timeout(srv, c)), head);
	int native = srv->cfg.native_passthrough ? native_source(url) : -1;
	if (native >= 0)
		return respond_answer(srv, c, srv->scraper,
				      scraper_native(srv->scraper, (enum source_id)native, scrape_timeout(srv, c)), head);
	if (strcmp(url, "/") == 0)
		return status(srv, c);
	if (strcmp(url, "/probe") == 0 && srv->cfg.probes)
		return probe(srv, c, head);
	return text(c, MHD_HTTP_NOT_FOUND, "404 page not found\n", wc);
}

static int hex_digit(char c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

/* libmicrohttpd's %HH decoding of the path and of every query key and value, except %00, which is
 * left as the three characters: decoded, a NUL would end the C string url there, and
 * "/metrics%00junk" would be routed as /metrics (every route compares url as a C string). Left
 * encoded, it is a path no route has (404) and a name no target has. Returns the length left in s. */
static size_t unescape(void *cls, struct MHD_Connection *c, char *s)
{
	char *w = s;
	int hi, lo;
	(void)cls;
	(void)c;
	for (const char *r = s; *r;) {
		if (r[0] == '%' && (hi = hex_digit(r[1])) >= 0 && (lo = hex_digit(r[2])) >= 0 && (hi | lo)) {
			*w++ = (char)(hi << 4 | lo);
			r += 3;
		} else {
			*w++ = *r++;
		}
	}
	*w = '\0';
	return (size_t)(w - s);
}

static void mhd_log(void *cls, const char *fmt, va_list ap) __attribute__((format(printf, 2, 0)));
static void mhd_log(void *cls, const char *fmt, va_list ap)
{
	struct server *srv = cls;
	char line[512];
	vsnprintf(line, sizeof(line), fmt, ap);
	line[strcspn(line, "\n")] = '\0';
	if (pthread_equal(pthread_self(), srv->starter) && srv->starting && !srv->why[0])
		snprintf(srv->why, sizeof(srv->why), "%.*s", (int)sizeof(srv->why) - 1, line); /* raw: main logs it, escaped there */
	log_debug("http: %s", line);
}

/* Bind ADDR: ":port" (all addresses, IPv6 dual-stack when available), "host:port", "[v6]:port". */
static int bind_listen(const char *addr, unsigned *port_out, char *err, size_t errlen)
{
	char host[256] = "", port[16];
	const char *colon = strrchr(addr, ':');
	struct addrinfo hints, *res = NULL, *ai;
	int fd = -1, rc;
	if (!colon || strlen(colon + 1) == 0 || strlen(colon + 1) >= sizeof(port)) {
		snprintf(err, errlen, "invalid listen address \"%s\" (want [host]:port)", addr);
		return -1;
	}
	snprintf(port, sizeof(port), "%s", colon + 1);
	size_t hl = (size_t)(colon - addr);
	if (hl >= 2 && addr[0] == '[' && addr[hl - 1] == ']') {
		addr++;
		hl -= 2;
	}
	if (hl >= sizeof(host)) {
		snprintf(err, errlen, "listen host too long");
		return -1;
	}
	memcpy(host, addr, hl);
	host[hl] = '\0';
	memset(&hints, 0, sizeof(hints));
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
	hints.ai_family = hl ? AF_UNSPEC : AF_INET6;
	rc = getaddrinfo(hl ? host : NULL, port, &hints, &res);
	if (rc && !hl) {
		hints.ai_family = AF_INET;
		rc = getaddrinfo(NULL, port, &hints, &res);
	}
	if (rc) {
		snprintf(err, errlen, "cannot resolve listen address \"%s\": %s", addr, gai_strerror(rc));
		return -1;
	}
	for (ai = res; ai; ai = ai->ai_next) {
		int one = 1, zero = 0;
		fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
		if (fd < 0)
			continue;
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		if (ai->ai_family == AF_INET6 && !hl)
			setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof(zero));
		if (bind(fd, ai->ai_addr, ai->ai_addrlen) == 0 && listen(fd, 128) == 0)
			break;
		snprintf(err, errlen, "cannot listen on %s: %s", addr, strerror(errno));
		close(fd);
		fd = -1;
	}
	if (fd < 0 && !res && !*err)
		snprintf(err, errlen, "cannot listen on %s", addr);
	if (fd >= 0) {
		struct sockaddr_storage ss;
		socklen_t sl = sizeof(ss);
		getsockname(fd, (struct sockaddr *)&ss, &sl);
		*port_out = ntohs(ss.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&ss)->sin6_port
							     : ((struct sockaddr_in *)&ss)->sin_port);
	}
	freeaddrinfo(res);
	return fd;
}

/* What a listen address binds, to tell two spellings of one address and port apart: the first
 * address getaddrinfo gives as bind_listen asks it, an IPv4-mapped IPv6 address as its IPv4 one.
 * any: 2 for every address (":port", "[::]:port": dual-stack), 1 for every IPv4 one ("0.0.0.0"). */
struct listen_key {
	int family, any;
	unsigned char addr[16];
	unsigned port;
};

/* 0 with *k, or -1 when addr does not resolve (its bind then says why). */
static int listen_key(const char *addr, struct listen_key *k)
{
	char host[256];
	const char *colon = strrchr(addr, ':');
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM, .ai_flags = AI_PASSIVE | AI_NUMERICSERV }, *res = NULL;
	size_t hl = colon ? (size_t)(colon - addr) : 0;
	if (!colon || !colon[1])
		return -1;
	if (hl >= 2 && addr[0] == '[' && addr[hl - 1] == ']') {
		addr++;
		hl -= 2;
	}
	if (hl >= sizeof(host))
		return -1;
	memcpy(host, addr, hl);
	host[hl] = '\0';
	hints.ai_family = hl ? AF_UNSPEC : AF_INET6;
	int rc = getaddrinfo(hl ? host : NULL, colon + 1, &hints, &res);
	if (rc && !hl) {
		hints.ai_family = AF_INET;
		rc = getaddrinfo(NULL, colon + 1, &hints, &res);
	}
	if (rc || !res)
		return -1;
	memset(k, 0, sizeof(*k));
	if (res->ai_family == AF_INET6) {
		const struct sockaddr_in6 *a6 = (const struct sockaddr_in6 *)res->ai_addr;
		k->port = ntohs(a6->sin6_port);
		if (IN6_IS_ADDR_V4MAPPED(&a6->sin6_addr)) {
			k->family = AF_INET;
			memcpy(k->addr, a6->sin6_addr.s6_addr + 12, 4);
			k->any = !memcmp(k->addr, "\0\0\0\0", 4);
		} else {
			k->family = AF_INET6;
			memcpy(k->addr, &a6->sin6_addr, 16);
			k->any = IN6_IS_ADDR_UNSPECIFIED(&a6->sin6_addr) ? 2 : 0;
		}
	} else {
		const struct sockaddr_in *a4 = (const struct sockaddr_in *)res->ai_addr;
		k->family = AF_INET;
		k->port = ntohs(a4->sin_port);
		memcpy(k->addr, &a4->sin_addr, 4);
		k->any = a4->sin_addr.s_addr == htonl(INADDR_ANY);
	}
	freeaddrinfo(res);
	return 0;
}

/* Whether listening on x already serves every connection to y (binding both would fail with "address
 * in use"): the same port (never port 0, which is a new port each time), and the same address or x
 * a wildcard that takes y's. */
static int listen_covers(const struct listen_key *x, const struct listen_key *y)
{
	if (x->port != y->port || !x->port)
		return 0;
	if (x->any == 2 || (x->any == 1 && y->family == AF_INET))
		return 1;
	return x->family == y->family && !memcmp(x->addr, y->addr, x->family == AF_INET ? 4 : 16);
}

/* The listen addresses to bind, into srv->listen_use (srv->cfg then points at them): each given once.
 * One that another given earlier already serves (the same address and port however written,
 * "127.1:9341" and "127.0.0.1:9341", or one inside a wildcard on that port) is left out, and an
 * earlier one inside a later wildcard is replaced by it, each with a warning naming both. */
static void listen_dedupe(struct server *srv)
{
	struct listen_key key[SERVER_LISTEN_MAX];
	int known[SERVER_LISTEN_MAX];
	size_t n = 0;
	const size_t *schema = srv->cfg.listen_schema;
	for (size_t i = 0; i < srv->cfg.nlisten && i < SERVER_LISTEN_MAX; i++) {
		const char *a = srv->cfg.listen[i];
		struct listen_key k;
		/* two schemas on one address are not one listener: binding both fails, naming it */
		int ok = listen_key(a, &k) == 0 && (!schema || schema[i] == schema[0]);
		size_t j = 0;
		while (ok && j < n && !(known[j] && listen_covers(&key[j], &k)))
			j++;
		if (ok && j < n) {
			log_warn("--web.listen-address \"%s\" is already served by \"%s\" (the same address and port%s): "
				 "listening on it once", a, srv->listen_use[j], key[j].any > k.any ? ", a wildcard" : "");
			continue;
		}
		for (j = 0; ok && j < n;) {
			if (!known[j] || !listen_covers(&k, &key[j])) {
				j++;
				continue;
			}
			log_warn("--web.listen-address \"%s\" is served by \"%s\" given after it (a wildcard on that port): "
				 "listening on that one only", srv->listen_use[j], a);
			memmove(&srv->listen_use[j], &srv->listen_use[j + 1], (n - j - 1) * sizeof(srv->listen_use[0]));
			memmove(&key[j], &key[j + 1], (n - j - 1) * sizeof(key[0]));
			memmove(&known[j], &known[j + 1], (n - j - 1) * sizeof(known[0]));
			if (schema)
				memmove(&srv->schema_use[j], &srv->schema_use[j + 1], (n - j - 1) * sizeof(srv->schema_use[0]));
			n--;
		}
		srv->listen_use[n] = a;
		if (schema)
			srv->schema_use[n] = schema[i];
		key[n] = k;
		known[n++] = ok;
	}
	srv->cfg.listen = srv->listen_use;
	if (schema)
		srv->cfg.listen_schema = srv->schema_use;
	srv->cfg.nlisten = n;
}

/* The port of bound socket fd, and its address as text ("127.0.0.1:9341", "[::1]:9341") into addr. */
static unsigned sock_port(int fd, char *addr, size_t addrlen)
{
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	char host[INET6_ADDRSTRLEN] = "?";
	if (getsockname(fd, (struct sockaddr *)&ss, &sl) < 0)
		return 0;
	int v6 = ss.ss_family == AF_INET6;
	unsigned port = ntohs(v6 ? ((struct sockaddr_in6 *)&ss)->sin6_port : ((struct sockaddr_in *)&ss)->sin_port);
	if (v6)
		inet_ntop(AF_INET6, &((struct sockaddr_in6 *)&ss)->sin6_addr, host, sizeof(host));
	else if (ss.ss_family == AF_INET)
		inet_ntop(AF_INET, &((struct sockaddr_in *)&ss)->sin_addr, host, sizeof(host));
	snprintf(addr, addrlen, v6 ? "[%s]:%u" : "%s:%u", host, port);
	return port;
}

/* One daemon on listening socket fd (which it owns from then on, even when it fails to start). */
static struct MHD_Daemon *start_daemon(struct server *srv, int fd, const char *what, char *err, size_t errlen)
{
	/* poll(), not select(): select() refuses every socket numbered FD_SETSIZE (1024) or above. ITC:
	 * without it, libmicrohttpd wakes its listening thread at stop with shutdown(2) on the listening
	 * socket, which stops it for every process holding it (systemd's socket, for the next start);
	 * with it, a pipe wakes the thread, and MHD_quiesce_daemon can hand the socket back (stop_daemon) */
	unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_THREAD_PER_CONNECTION | MHD_USE_POLL | MHD_USE_ERROR_LOG |
			 MHD_USE_ITC;
	const struct server_config *cfg = &srv->cfg;
	const struct webconfig *wc = cfg->web;
	struct MHD_OptionItem ops[13];
	size_t n = 0;
	/* first, or libmicrohttpd logs the options before it to stderr itself */
	ops[n++] = (struct MHD_OptionItem){ MHD_OPTION_EXTERNAL_LOGGER, (intptr_t)mhd_log, srv };
	ops[n++] = (struct MHD_OptionItem){ MHD_OPTION_LISTEN_SOCKET, fd, NULL };
	ops[n++] = (struct MHD_OptionItem){ MHD_OPTION_UNESCAPE_CALLBACK, (intptr_t)unescape, NULL };
	ops[n++] = (struct MHD_OptionItem){ MHD_OPTION_CONNECTION_LIMIT, cfg->max_connections, NULL };
	ops[n++] = (struct MHD_OptionItem){ MHD_OPTION_PER_IP_CONNECTION_LIMIT, cfg->per_ip_connections, NULL };
	ops[n++] = (struct MHD_OptionItem){ MHD_OPTION_CONNECTION_TIMEOUT, cfg->connection_timeout, NULL };
	/* bounds the request line and headers of each connection */
	ops[n++] = (struct MHD_OptionItem){ MHD_OPTION_CONNECTION_MEMORY_LIMIT, 32 * 1024, NULL };
	if (wc && webconfig_tls_cert_pem(wc)) {
		if (MHD_is_feature_supported(MHD_FEATURE_TLS) != MHD_YES) {
			snprintf(err, errlen, "TLS requested but libmicrohttpd was built without TLS support");
			close(fd);
			return NULL;
		}
		flags |= MHD_USE_TLS;
		ops[n++] = (struct MHD_OptionItem){ MHD_OPTION_HTTPS_MEM_CERT, 0, (void *)webconfig_tls_cert_pem(wc) };
		ops[n++] = (struct MHD_OptionItem){ MHD_OPTION_HTTPS_MEM_KEY, 0, (void *)webconfig_tls_key_pem(wc) };
		/* min/max_version (default TLS 1.2..1.3), cipher_suites, curves, server precedence */
		ops[n++] = (struct MHD_OptionItem){ MHD_OPTION_HTTPS_PRIORITIES, 0, (void *)webconfig_tls_priorities(wc) };
	}
	ops[n++] = (struct MHD_OptionItem){ MHD_OPTION_END, 0, NULL };
	srv->starter = pthread_self();
	srv->starting = 1;
	srv->why[0] = '\0';
	struct MHD_Daemon *d = MHD_start_daemon(flags, 0, NULL, NULL, handle, srv, MHD_OPTION_ARRAY, ops, MHD_OPTION_END);
	srv->starting = 0;
	if (!d) {
		snprintf(err, errlen, "cannot start the HTTP server on %s%s%s", what, srv->why[0] ? ": " : "", srv->why);
		close(fd);
	}
	return d;
}

/* Stop daemon d. A socket systemd passed (inherited) is systemd's: libmicrohttpd hands it back
 * first (MHD_quiesce_daemon, so that stopping neither shuts it down nor closes it) and only this
 * process's descriptor is closed; the socket keeps listening for the next start. A socket of our
 * own bind is closed by the daemon. */
static void stop_daemon(struct MHD_Daemon *d, int inherited)
{
	int fd = inherited ? MHD_quiesce_daemon(d) : -1;
	MHD_stop_daemon(d);
	if (fd >= 0)
		close(fd);
}

struct server *server_start(const struct server_config *cfg, struct scraper *s, char *err, size_t errlen)
{
	struct server *srv = xcalloc(1, sizeof(*srv));
	size_t o = 0;
	srv->cfg = *cfg;
	srv->scraper = s;
	err[0] = '\0';
	if (!cfg->listen_fds && cfg->nlisten <= SERVER_LISTEN_MAX)
		listen_dedupe(srv);
	cfg = &srv->cfg;
	size_t want = cfg->listen_fds ? cfg->nfds : cfg->nlisten;
	if (!want || want > SERVER_LISTEN_MAX) {
		snprintf(err, errlen, "%zu listeners: from 1 to %d can be served", want, SERVER_LISTEN_MAX);
		goto fail;
	}
	/* every socket first: an address in use stops the start before anything is served */
	for (srv->n = 0; srv->n < want; srv->n++) {
		size_t i = srv->n;
		char addr[INET6_ADDRSTRLEN + 16] = "";
		srv->fd[i] = cfg->listen_fds ? cfg->listen_fds[i] : bind_listen(cfg->listen[i], &srv->port[i], err, errlen);
		if (srv->fd[i] < 0)
			goto fail;
		unsigned port = sock_port(srv->fd[i], addr, sizeof(addr));
		if (cfg->listen_fds)
			srv->port[i] = port;
		int w = cfg->listen_fds ? snprintf(srv->listening + o, sizeof(srv->listening) - o, "%ssystemd socket fd %d (%s)",
						   i ? ", " : "", srv->fd[i], addr)
					: snprintf(srv->listening + o, sizeof(srv->listening) - o, "%s%s (port %u)", i ? ", " : "",
						   cfg->listen[i], srv->port[i]);
		o += w < 0 ? 0 : (size_t)w < sizeof(srv->listening) - o ? (size_t)w : sizeof(srv->listening) - o - 1;
	}
	for (size_t i = 0; i < srv->n; i++) {
		int fd = srv->fd[i];
		srv->lfd[i] = fd;
		srv->fd[i] = -1; /* the daemon's from here, started or not */
		srv->d[i] = start_daemon(srv, fd, cfg->listen_fds ? "a systemd socket" : cfg->listen[i], err, errlen);
		if (!srv->d[i])
			goto fail;
	}
	return srv;
fail:
	for (size_t i = 0; i < SERVER_LISTEN_MAX; i++) {
		if (srv->d[i])
			stop_daemon(srv->d[i], cfg->listen_fds != NULL);
		else if (i < srv->n && srv->fd[i] >= 0)
			close(srv->fd[i]);
	}
	free(srv);
	return NULL;
}

unsigned server_port(const struct server *srv)
{
	return srv->port[0];
}

const char *server_listening(const struct server *srv)
{
	return srv->listening;
}

void server_stop(struct server *srv)
{
	if (!srv)
		return;
	for (size_t i = 0; i < srv->n; i++)
		stop_daemon(srv->d[i], srv->cfg.listen_fds != NULL); /* closes our descriptor of its socket */
	free(srv);
}
