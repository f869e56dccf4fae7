/*
 * fake_slurmctld - stand-in for the HTTP metrics listener of slurmctld
 * 25.11/26.05, for tests and benchmarks of slurm-exporter-shim.
 *
 * It imitates, byte for byte, what slurmctld's http_con_send_response()
 * writes (checked against tests/fixtures/slurm-25.11/http-behaviour):
 *
 *   HTTP/1.<minor> <code> <UPPER CASE REASON>\r\n    (request's version echoed)
 *   [Location: ...\r\n]                              (303 only)
 *   Connection: Close\r\n
 *   Content-Length: N\r\n                            (only if the body is not
 *   Content-Type: text/plain\r\n                      empty; no CL on 201-299)
 *   \r\n
 *   <body>
 *
 * and then the server closes the connection (no keep-alive). Quirks kept:
 * requests already pipelined in the same read are all answered before the
 * close; a request carrying "Connection: close" gets a stray
 * "Connection: Close\r\n" written AFTER the body (a slurmctld bug); an unknown
 * method (or an unparsable request line) gets "405 NOT ALLOWED" with body
 * "Invalid HTTP method" and no Connection header; method names match
 * case-insensitively; the path match is exact; the query string is ignored.
 *
 * Routes (GET only; HEAD, POST, trailing slash, ... get 404 with a text body):
 *   /metrics/{jobs,nodes,partitions,scheduler,jobs-users-accts}
 *       -> DIR/metrics_<name>.txt, re-read on every request (a missing file
 *          serves "200, empty body", like a slurmctld without MetricsType)
 *   /slurm/v0.0.44/{nodes,shares,jobs,diag,licenses,jobs/state,reservations},
 *   /slurmdb/v0.0.44/associations
 *       (slurmrestd, endpoint names rest_nodes ... rest_licenses,
 *       rest_jobs_state, rest_reservations, rest_associations) ->
 *       DIR/rest_<name>.json, the same way; the
 *       framing stays slurmctld's but for Content-Type: application/json, as
 *       slurmrestd's (--content-type TYPE: every 200 data answer's type)
 *   /openapi/v3 (endpoint name openapi) -> a small document whose "paths"
 *       list /slurm/v0.0.42 (--openapi-oldest V: V) to the version served
 *       and v0.0.47 (one the shim does not read, never served), as
 *       slurmrestd's lists its plugins' versions; --openapi-pad N puts N
 *       more paths first (a big document)
 *   /metrics, /           -> the index texts; with --legacy FILE, /metrics serves
 *          FILE instead (re-read every request; 404 if it is missing): the old
 *          prometheus-slurm-exporter's page, for --compare-legacy
 *   /livez /readyz /healthz -> 204, empty
 *   /_stats               -> per-endpoint request counts (fake only)
 *   /_last_request        -> raw header block of the last request (fake only)
 *   /_delay-ms/N          -> sets --delay-ms to N from now on (fake only)
 *   /_fault/MODE          -> sets --fault to MODE from now on (fake only)
 *   /_hostile-redirect/<path> -> 303 whose Location is no http(s) URL and holds
 *          a quote, a backslash, ESC [31m and DEL (a hostile upstream reason; fake only)
 *   /_header-bytes/N/<path> -> 200, empty, with one X-Padding header of N bytes
 *          (N <= 16 MiB: a head over the client's limit; fake only)
 *   /_rest-version/V      -> slurmrestd's paths are /slurm/V/... from now on
 *          (default v0.0.44; a slurmrestd upgrade that drops a version)
 *   /_role/standby, /_role/primary -> from now on, answer as a standby backup
 *          controller (25.11.7: every /metrics* request, counted, gets 303
 *          REDIRECT SEE OTHER with Location: http://127.0.0.1:<--redirect-port>
 *          <path>[?query], Connection: Close, no body, no Content-Length) or as
 *          the primary again (default; fake only)
 *
 * --fault MODE applies to the data endpoints, slurmrestd's and /openapi/v3
 * included (or only to --fault-endpoint NAME):
 *   none       normal answers (default)
 *   hang       read the request, never answer; close when the client does
 *   drip       the correct response, one byte every 200 ms
 *   garbage    4 KiB of random non-HTTP bytes, then close
 *   cut        headers with the full Content-Length, half the body, close
 *   cutline    well framed, but the body ends in the middle of a sample line
 *   401 403    empty-body 401 UNAUTHORIZED / 403 FORBIDDEN
 *   500 503    500 INTERNAL ERROR / 503 SERVICE UNAVAILABLE with a short body
 *   redirect   303 REDIRECT SEE OTHER, Location: http://127.0.0.1:<P><path>
 *   empty      200 with an empty body (no Content-Length/Content-Type)
 *   huge       200, Content-Length 300000000, that many bytes of sample lines
 *              (slurmrestd's: a JSON text that never ends, {"x":[ and strings)
 *   huge-nolength  the same, close-delimited (no Content-Length)
 *   huge-error 500 INTERNAL ERROR with the huge body
 *   close      read the request, close with no bytes (like disable_http)
 *   badquote   the file plus: slurm_node_cpus{node="we"ird"} 3 (for a JSON
 *              document: trailing garbage, a parse error)
 *   duplicate  the file plus a copy of its first sample line
 *   nan        the file with every sample of the first family set to NaN
 *   redirect-self  303 to the same origin (this fake's own port) with the
 *              query "redirected"; a request with that query is served as
 *              with "none" (so --token is checked after the redirect)
 *   cuthead    "HTTP/1.<minor> 200 OK\r\n", then close: the headers never end
 *   nolength   the file, well formed, but close-delimited: no Content-Length
 *   404        404 NOT FOUND with slurmctld's "Invalid or unknown URL path"
 *
 * Order for a data request: count it, sleep --delay-ms, then the transport
 * faults (close, hang, garbage), then redirect, then the --token/--user check
 * (401/403, empty body; with --rest-jwt, slurmrestd's answer to a wrong token
 * is 511, 500 on /shares, as 25.11.7's rest_auth/jwt: 401 only without one),
 * then the other faults.
 *
 * Listens on 127.0.0.1 only, or with --unix PATH on that unix socket only
 * (as slurmrestd -s ... unix:/path). One thread per connection (at most 512), request
 * head bounded to 64 KiB and 10 s. SIGTERM/SIGINT exit with status 0.
 * Build: make build/tests/fake_slurmctld. Usage: see usage() or tests/README.md.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define MAX_HEAD (64 * 1024)
#define HEAD_TIMEOUT_MS 10000
#define LINGER_MS 2000
#define MAX_THREADS 512
#define DRIP_MS 200
#define GARBAGE_BYTES 4096
#define HUGE_BYTES 300000000ULL
#define HUGE_LINE_LEN 23 /* strlen("slurm_x{node=\"n000\"} 1\n") */
#define HUGE_NODES 1000

enum fault {
	F_NONE, F_HANG, F_DRIP, F_GARBAGE, F_CUT, F_CUTLINE, F_401, F_403,
	F_500, F_503, F_REDIRECT, F_EMPTY, F_HUGE, F_HUGE_NOLENGTH, F_CLOSE,
	F_BADQUOTE, F_DUPLICATE, F_NAN, F_REDIRECT_SELF, F_CUTHEAD, F_NOLENGTH,
	F_404, F_HUGE_ERROR, F_COUNT
};
static const char *const fault_names[F_COUNT] = {
	"none", "hang", "drip", "garbage", "cut", "cutline", "401", "403",
	"500", "503", "redirect", "empty", "huge", "huge-nolength", "close",
	"badquote", "duplicate", "nan", "redirect-self", "cuthead", "nolength",
	"404", "huge-error",
};

enum endpoint {
	EP_JOBS, EP_NODES, EP_PARTS, EP_SCHED, EP_UA,
	EP_RNODES, EP_RSHARES, EP_RJOBS, EP_RDIAG, EP_RLICENSES, EP_RJSTATE, EP_RRESV, EP_RASSOC, EP_OPENAPI,
	EP_OTHER, EP_COUNT
};
static const char *const ep_names[EP_COUNT] = {
	"jobs", "nodes", "partitions", "scheduler", "jobs-users-accts",
	"rest_nodes", "rest_shares", "rest_jobs", "rest_diag", "rest_licenses", "rest_jobs_state", "rest_reservations",
	"rest_associations",
	"openapi", "other",
};
#define IS_REST(ep) ((ep) >= EP_RNODES && (ep) <= EP_RASSOC)

#define REST_VERSION_MAX 16

static const char index_metrics[] =
	"slurmctld index of metrics endpoints:\n"
	"  '/metrics/jobs': get job metrics\n"
	"  '/metrics/nodes': get node metrics\n"
	"  '/metrics/partitions': get partition metrics\n"
	"  '/metrics/jobs-users-accts': get user and account jobs metrics\n"
	"  '/metrics/scheduler': get scheduler metrics\n";
static const char index_root[] =
	"slurmctld index of endpoints:\n"
	"  '/readyz': check slurmctld is servicing RPCs\n"
	"  '/livez': check slurmctld is running\n"
	"  '/healthz': check slurmctld is running\n"
	"  '/metrics': print available metric endpoints\n";

static struct {
	const char *dir, *port_file, *stats_file, *token, *user, *unix_path, *legacy;
	enum fault fault;
	int fault_ep; /* -1: every data endpoint */
	unsigned port, redirect_port;
	long delay_ms;
	bool standby; /* /_role/standby: every /metrics* gets a standby's 303 */
	const char *content_type; /* of 200 data answers; NULL: text/plain, slurmrestd's application/json */
	bool rest_jwt; /* slurmrestd's answers to a bad token: 511, /shares 500; 401 only without one */
	long openapi_pad; /* extra "paths" in /openapi/v3 */
	int openapi_oldest; /* the first version /openapi/v3 lists: v0.0.<this> */
	char rest_version[REST_VERSION_MAX]; /* the API version slurmrestd's paths are served under */
} opt = { .fault = F_NONE, .fault_ep = -1, .rest_version = "v0.0.44", .openapi_oldest = 42 };

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t slot_freed = PTHREAD_COND_INITIALIZER;
static unsigned active_threads;
static unsigned long counts[EP_COUNT];
static char *last_request;
static size_t last_request_len;

static int stop_pipe[2] = { -1, -1 };
static volatile sig_atomic_t stopping;

/* ---------------------------------------------------------------- utils */

struct buf {
	char *p;
	size_t len, cap;
};

static void buf_add(struct buf *b, const void *data, size_t n)
{
	if (b->len + n + 1 > b->cap) {
		size_t cap = b->cap ? b->cap : 256;
		while (cap < b->len + n + 1)
			cap *= 2;
		char *p = realloc(b->p, cap);
		if (!p) {
			fprintf(stderr, "fake_slurmctld: out of memory\n");
			abort();
		}
		b->p = p;
		b->cap = cap;
	}
	if (n && data)
		memcpy(b->p + b->len, data, n);
	b->len += n;
	b->p[b->len] = '\0';
}

static void buf_str(struct buf *b, const char *s)
{
	buf_add(b, s, strlen(s));
}

__attribute__((format(printf, 2, 3)))
static void buf_fmt(struct buf *b, const char *fmt, ...)
{
	char *s = NULL;
	va_list ap;

	va_start(ap, fmt);
	int n = vasprintf(&s, fmt, ap);
	va_end(ap);
	if (n < 0) {
		fprintf(stderr, "fake_slurmctld: out of memory\n");
		abort();
	}
	buf_add(b, s, (size_t)n);
	free(s);
}

static void buf_free(struct buf *b)
{
	free(b->p);
	*b = (struct buf){ 0 };
}

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

/* Write everything, retrying on EINTR and partial writes. */
static bool send_all(int fd, const void *data, size_t n)
{
	const char *p = data;

	while (n) {
		ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			return false;
		}
		p += w;
		n -= (size_t)w;
	}
	return true;
}

/* recv() that gives up at the deadline: >0 bytes, 0 EOF, -1 error/timeout. */
static ssize_t recv_until(int fd, void *p, size_t n, long long deadline)
{
	for (;;) {
		long long left = deadline - now_ms();
		if (left <= 0)
			return -1;
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		int r = poll(&pfd, 1, (int)left);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return -1;
		ssize_t got = recv(fd, p, n, 0);
		if (got < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		return got;
	}
}

/* Write a file atomically: F.tmp.<pid>, then rename over F. */
static void write_file_atomic(const char *path, const char *data, size_t len)
{
	char tmp[4096];
	int n = snprintf(tmp, sizeof(tmp), "%s.tmp.%ld", path, (long)getpid());
	if (n < 0 || (size_t)n >= sizeof(tmp)) {
		fprintf(stderr, "fake_slurmctld: path too long: %s\n", path);
		return;
	}
	int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		fprintf(stderr, "fake_slurmctld: %s: %s\n", tmp, strerror(errno));
		return;
	}
	bool ok = true;
	for (size_t off = 0; off < len;) {
		ssize_t w = write(fd, data + off, len - off);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0) {
			ok = false;
			break;
		}
		off += (size_t)w;
	}
	if (close(fd) < 0 || !ok || rename(tmp, path) < 0) {
		fprintf(stderr, "fake_slurmctld: writing %s: %s\n", path, strerror(errno));
		unlink(tmp);
	}
}

/* Whole file into *out (NUL-terminated). false if it cannot be opened. */
static bool read_file(const char *path, struct buf *out)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		if (errno != ENOENT)
			fprintf(stderr, "fake_slurmctld: %s: %s\n", path, strerror(errno));
		return false;
	}
	char chunk[16384];
	for (;;) {
		ssize_t r = read(fd, chunk, sizeof(chunk));
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		buf_add(out, chunk, (size_t)r);
	}
	close(fd);
	buf_add(out, "", 0); /* make sure out->p is allocated */
	return true;
}

/* ------------------------------------------------------------ requests */

struct request {
	char *copy;            /* NUL-terminated, chopped-up copy of the head */
	const char *raw;       /* the raw head bytes (request line .. blank line) */
	size_t raw_len;
	const char *method;    /* canonical upper case, NULL if unknown */
	int minor;             /* HTTP/1.<minor>, -1 if unparsable */
	const char *path;      /* without scheme, authority, query, fragment */
	const char *query;     /* NULL if none */
	const char *x_token, *x_user, *authorization;
	bool conn_close;       /* "Connection: close" was sent */
	unsigned long long content_length;
};

static const char *const methods[] = {
	"GET", "POST", "PUT", "DELETE", "OPTIONS", "HEAD", "PATCH", "TRACE",
};

static const char *known_method(const char *m, size_t n)
{
	for (size_t i = 0; i < sizeof(methods) / sizeof(methods[0]); i++)
		if (strlen(methods[i]) == n && !strncasecmp(methods[i], m, n))
			return methods[i];
	return NULL;
}

/* Offset just past the blank line ending the head, or 0 if not there yet. */
static size_t head_end(const char *p, size_t len)
{
	for (size_t i = 0; i < len; i++) {
		if (p[i] != '\n')
			continue;
		if (i + 1 < len && p[i + 1] == '\n')
			return i + 2;
		if (i + 2 < len && p[i + 1] == '\r' && p[i + 2] == '\n')
			return i + 3;
	}
	return 0;
}

/* First line complete and its method is not an HTTP one? */
static bool bad_first_line(const char *p, size_t len)
{
	const char *nl = memchr(p, '\n', len);
	if (!nl)
		return false;
	size_t n = 0;
	while (p + n < nl && p[n] != ' ' && p[n] != '\r')
		n++;
	return !known_method(p, n);
}

static char *trim(char *s)
{
	while (*s == ' ' || *s == '\t')
		s++;
	char *e = s + strlen(s);
	while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r'))
		*--e = '\0';
	return s;
}

static void parse_request(struct request *r, const char *raw, size_t len)
{
	*r = (struct request){ .raw = raw, .raw_len = len, .minor = -1 };
	r->copy = malloc(len + 1);
	if (!r->copy)
		abort();
	memcpy(r->copy, raw, len);
	r->copy[len] = '\0';

	char *save = NULL;
	char *line = strtok_r(r->copy, "\n", &save);
	if (!line)
		return;
	line = trim(line);

	/* METHOD SP target SP HTTP/1.x */
	char *sp1 = strchr(line, ' ');
	char *sp2 = sp1 ? strchr(sp1 + 1, ' ') : NULL;
	if (!sp1 || !sp2 || strchr(sp2 + 1, ' '))
		return;
	*sp1 = *sp2 = '\0';
	r->method = known_method(line, strlen(line));
	if (!strcmp(sp2 + 1, "HTTP/1.0"))
		r->minor = 0;
	else if (!strcmp(sp2 + 1, "HTTP/1.1"))
		r->minor = 1;

	/* absolute-form URI: keep only the path (and query) */
	char *target = sp1 + 1;
	if (!strncasecmp(target, "http://", 7) || !strncasecmp(target, "https://", 8))
		target = strchr(strstr(target, "//") + 2, '/');
	r->path = "/";
	if (target) {
		char *cut = strchr(target, '#');
		if (cut)
			*cut = '\0';
		if ((cut = strchr(target, '?'))) {
			*cut = '\0';
			r->query = cut + 1;
		}
		r->path = target;
	}

	while ((line = strtok_r(NULL, "\n", &save))) {
		char *colon = strchr(line, ':');
		if (!colon)
			continue;
		*colon = '\0';
		const char *name = trim(line);
		const char *value = trim(colon + 1);
		if (!strcasecmp(name, "Connection"))
			r->conn_close = !strcasecmp(value, "close");
		else if (!strcasecmp(name, "X-SLURM-USER-TOKEN"))
			r->x_token = value;
		else if (!strcasecmp(name, "X-SLURM-USER-NAME"))
			r->x_user = value;
		else if (!strcasecmp(name, "Authorization"))
			r->authorization = value;
		else if (!strcasecmp(name, "Content-Length"))
			r->content_length = strtoull(value, NULL, 10);
	}
}

/* ------------------------------------------------------------ responses */

static const char *reason(int code)
{
	switch (code) {
	case 200: return "OK";
	case 204: return "NO CONTENT";
	case 303: return "REDIRECT SEE OTHER";
	case 401: return "UNAUTHORIZED";
	case 403: return "FORBIDDEN";
	case 404: return "NOT FOUND";
	case 405: return "NOT ALLOWED";
	case 511: return "NETWORK AUTHENTICATION REQUIRED";
	case 500: return "INTERNAL ERROR";
	case 503: return "SERVICE UNAVAILABLE";
	default:  return "default";
	}
}

/*
 * The header block, as http_con_send_response() writes it. No Content-Length
 * and no Content-Type when there is no body; content_length < 0 leaves out
 * Content-Length only (close-delimited body).
 */
static void head_into(struct buf *b, int minor, int code, const char *location,
		      bool close_hdr, bool has_body, long long content_length, const char *ctype)
{
	buf_fmt(b, "HTTP/1.%d %d %s\r\n", minor, code, reason(code));
	if (location)
		buf_fmt(b, "Location: %s\r\n", location);
	if (close_hdr)
		buf_str(b, "Connection: Close\r\n");
	if (has_body) {
		/* RFC 7230 3.3.2, as Slurm reads it: no CL on 1xx or 201-299 */
		if (content_length >= 0 && !(code > 100 && code < 200) &&
		    !(code > 200 && code < 300))
			buf_fmt(b, "Content-Length: %lld\r\n", content_length);
		buf_fmt(b, "Content-Type: %s\r\n", ctype ? ctype : "text/plain");
	}
	buf_str(b, "\r\n");
}

/* A complete routed response (plus the stray trailer slurmctld sends). */
static void response_into(struct buf *b, const struct request *r, int code,
			  const char *location, const char *body, size_t len, const char *ctype)
{
	head_into(b, r->minor, code, location, true, len > 0, (long long)len, ctype);
	buf_add(b, body, len);
	if (r->conn_close)
		buf_str(b, "Connection: Close\r\n");
}

static bool respond(int fd, const struct request *r, int code,
		    const char *location, const char *body, size_t len)
{
	struct buf b = { 0 };

	response_into(&b, r, code, location, body, len, NULL);
	bool ok = send_all(fd, b.p, b.len);
	buf_free(&b);
	return ok;
}

/* slurmctld's _reply_error() text */
static bool respond_error(int fd, const struct request *r, int code, const char *err)
{
	struct buf body = { 0 };

	buf_fmt(&body, "slurmctld HTTP server request for '%s %s':\n", r->method, r->path);
	buf_fmt(&body, "Failed: %s\n", err);
	bool ok = respond(fd, r, code, NULL, body.p, body.len);
	buf_free(&body);
	return ok;
}

/* 405 from _send_reject(): no Connection header, no stray trailer. */
static void reject_method(int fd, int minor, bool conn_close)
{
	static const char body[] = "Invalid HTTP method";
	struct buf b = { 0 };

	head_into(&b, minor < 0 ? 1 : minor, 405, NULL, conn_close, true,
		  (long long)strlen(body), NULL);
	buf_str(&b, body);
	(void)send_all(fd, b.p, b.len);
	buf_free(&b);
}

/* ---------------------------------------------------------- bookkeeping */

static void stats_into(struct buf *b)
{
	for (int i = 0; i < EP_COUNT; i++)
		buf_fmt(b, "%s %lu\n", ep_names[i], counts[i]);
}

/* Count a request, remember its head, refresh --stats-file. */
static void record(enum endpoint ep, const char *raw, size_t len)
{
	char *copy = malloc(len + 1);
	if (!copy)
		abort();
	memcpy(copy, raw, len);
	copy[len] = '\0';

	pthread_mutex_lock(&lock);
	counts[ep]++;
	free(last_request);
	last_request = copy;
	last_request_len = len;
	if (opt.stats_file) {
		struct buf b = { 0 };
		stats_into(&b);
		write_file_atomic(opt.stats_file, b.p, b.len);
		buf_free(&b);
	}
	pthread_mutex_unlock(&lock);
}

/* ------------------------------------------------------- body mutations */

/* Bounds [*s, *e) of the first line that is neither empty nor a comment. */
static bool first_sample(const char *p, size_t len, size_t from, size_t *s, size_t *e)
{
	for (size_t i = from; i < len;) {
		const char *nl = memchr(p + i, '\n', len - i);
		size_t end = nl ? (size_t)(nl - p) : len;
		if (end > i && p[i] != '#') {
			*s = i;
			*e = end;
			return true;
		}
		i = end + 1;
	}
	return false;
}

static size_t name_len(const char *line, size_t n)
{
	size_t i = 0;
	while (i < n && line[i] != '{' && line[i] != ' ')
		i++;
	return i;
}

static void mutate_nan(struct buf *body)
{
	size_t s, e;
	if (!first_sample(body->p, body->len, 0, &s, &e))
		return;
	const char *fam = body->p + s;
	size_t fam_len = name_len(fam, e - s);
	struct buf out = { 0 };

	for (size_t i = 0; i < body->len;) {
		const char *line = body->p + i;
		const char *nl = memchr(line, '\n', body->len - i);
		size_t n = nl ? (size_t)(nl - line) : body->len - i;
		const char *sp = n ? memrchr(line, ' ', n) : NULL;
		if (n && line[0] != '#' && sp && name_len(line, n) == fam_len &&
		    !memcmp(line, fam, fam_len)) {
			buf_add(&out, line, (size_t)(sp - line) + 1);
			buf_str(&out, "NaN");
		} else {
			buf_add(&out, line, n);
		}
		if (nl)
			buf_str(&out, "\n");
		i += n + 1;
	}
	buf_free(body);
	*body = out;
}

static void mutate_append_line(struct buf *body, const char *line, size_t n)
{
	if (body->len && body->p[body->len - 1] != '\n')
		buf_str(body, "\n");
	buf_add(body, line, n);
	buf_str(body, "\n");
}

/*
 * Well framed but truncated: the body ends in the middle of the sample line
 * holding the middle byte (or the next sample line, or the last one).
 */
static void mutate_cutline(struct buf *body)
{
	size_t s = 0, e = 0, mid = body->len / 2;

	while (mid > 0 && body->p[mid - 1] != '\n')
		mid--;
	if (!first_sample(body->p, body->len, mid, &s, &e)) {
		size_t from = 0, ps, pe;
		while (first_sample(body->p, body->len, from, &ps, &pe)) {
			s = ps;
			e = pe;
			from = pe + 1;
		}
		if (!from)
			return; /* no sample line at all */
	}
	size_t cut = s + (e - s) / 2;
	if (cut == s)
		cut = s + 1;
	body->len = cut;
	body->p[cut] = '\0';
}

/* -------------------------------------------------------- fault helpers */

static void wait_for_client_close(int fd)
{
	char junk[4096];

	for (;;) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		int r = poll(&pfd, 1, -1);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return;
		ssize_t got = recv(fd, junk, sizeof(junk), 0);
		if (got == 0 || (got < 0 && errno != EINTR && errno != EAGAIN))
			return;
	}
}

static void send_garbage(int fd)
{
	unsigned char g[GARBAGE_BYTES];
	uint64_t x = (uint64_t)now_ms() ^ ((uint64_t)fd << 32) ^ (uint64_t)(uintptr_t)g;

	for (size_t i = 0; i < sizeof(g); i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		g[i] = (unsigned char)(x >> 24);
	}
	if (g[0] == 'H')
		g[0] = 0xff; /* never looks like "HTTP/" */
	(void)send_all(fd, g, sizeof(g));
}

static void send_drip(int fd, const char *p, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (!send_all(fd, p + i, 1))
			return;
		if (i + 1 < n)
			sleep_ms(DRIP_MS);
	}
}

/* HUGE_BYTES of `slurm_x{node="nNNN"} 1\n`, padded with a comment line; for slurmrestd (json)
 * `{"x":[` and strings of the same length, padded with blanks: a JSON text that never ends. */
static void send_huge(int fd, const struct request *r, bool with_length, int code, bool json,
		      const char *ctype)
{
	struct buf b = { 0 };

	head_into(&b, r->minor, code, NULL, true, true, with_length ? (long long)HUGE_BYTES : -1, ctype);
	size_t head = b.len;
	if (json)
		buf_str(&b, "{\"x\":[");
	size_t pre = b.len - head;
	head = b.len;
	for (int i = 0; i < HUGE_NODES; i++)
		if (json)
			buf_fmt(&b, "\"0123456789abcdef%03d\",\n", i);
		else
			buf_fmt(&b, "slurm_x{node=\"n%03d\"} 1\n", i);
	const char *chunk = b.p + head;
	const size_t chunk_len = (size_t)HUGE_NODES * HUGE_LINE_LEN;

	if (!send_all(fd, b.p, head))
		goto out;
	unsigned long long left = HUGE_BYTES - pre;
	while (left >= chunk_len) {
		if (!send_all(fd, chunk, chunk_len))
			goto out;
		left -= chunk_len;
	}
	size_t lines = (size_t)(left / HUGE_LINE_LEN) * HUGE_LINE_LEN;
	if (!send_all(fd, chunk, lines))
		goto out;
	left -= lines;
	if (left) {
		char pad[HUGE_LINE_LEN];
		memset(pad, ' ', sizeof(pad));
		pad[0] = json ? ' ' : '#';
		pad[left - 1] = '\n';
		(void)send_all(fd, pad, (size_t)left);
	}
out:
	buf_free(&b);
}

/* /openapi/v3: "paths" from /slurm/v0.0.42 (--openapi-oldest) to the version served, v0.0.47 (one
 * the shim does not read, never served) and slurmdb's; --openapi-pad more before them. */
static void openapi_into(struct buf *b, const char *served)
{
	buf_str(b, "{\"openapi\": \"3.0.3\", \"paths\": {");
	for (long i = 0; i < opt.openapi_pad; i++)
		buf_fmt(b, "\"/slurm/%s/pad%07ld/\": {\"get\": {\"summary\": \"a padding path\"}}, ", served, i);
	for (int v = opt.openapi_oldest; v <= 46 && strcmp(served, "v0.0.41"); v++) {
		char name[24];
		snprintf(name, sizeof(name), "v0.0.%d", v);
		buf_fmt(b, "\"/slurm/%s/nodes/\": {}, ", name);
		if (!strcmp(name, served))
			break;
	}
	buf_str(b, "\"/slurm/v0.0.47/nodes/\": {}, \"/slurmdb/v0.0.44/accounts/\": {}}}\n");
}

/* ------------------------------------------------------------- routing */

static int data_endpoint(const char *path, const char *served)
{
	static const char *const paths[] = {
		[EP_JOBS] = "/metrics/jobs",
		[EP_NODES] = "/metrics/nodes",
		[EP_PARTS] = "/metrics/partitions",
		[EP_SCHED] = "/metrics/scheduler",
		[EP_UA] = "/metrics/jobs-users-accts",
		[EP_RNODES] = "/slurm/v0.0.44/nodes",
		[EP_RSHARES] = "/slurm/v0.0.44/shares",
		[EP_RJOBS] = "/slurm/v0.0.44/jobs",
		[EP_RDIAG] = "/slurm/v0.0.44/diag",
		[EP_RLICENSES] = "/slurm/v0.0.44/licenses",
		[EP_RJSTATE] = "/slurm/v0.0.44/jobs/state",
		[EP_RRESV] = "/slurm/v0.0.44/reservations",
		[EP_RASSOC] = "/slurmdb/v0.0.44/associations",
		[EP_OPENAPI] = "/openapi/v3",
	};
	char rest[64];
	for (int i = 0; i < EP_OTHER; i++) {
		const char *want = paths[i];
		if (IS_REST(i)) { /* "/slurm/v0.0.44/x", "/slurmdb/v0.0.44/x" under the version served */
			const char *v = strstr(paths[i], "/v0.0.44");
			snprintf(rest, sizeof(rest), "%.*s/%s%s", (int)(v - paths[i]), paths[i], served, v + strlen("/v0.0.44"));
			want = rest;
		}
		if (!strcmp(path, want))
			return i;
	}
	return -1;
}

/* 0 if allowed, else 401 or 403 (Slurm 26.05 MetricsAuth imitation). */
static int auth_status(const struct request *r)
{
	if (!opt.token)
		return 0;
	bool ok = r->x_token && !strcmp(r->x_token, opt.token);
	if (!ok && r->authorization && !strncasecmp(r->authorization, "Bearer ", 7)) {
		const char *t = r->authorization + 7;
		while (*t == ' ')
			t++;
		ok = !strcmp(t, opt.token);
	}
	if (!ok)
		return 401;
	if (opt.user && r->x_user && strcmp(r->x_user, opt.user))
		return 403;
	return 0;
}

/* 303 to http://127.0.0.1:PORT<path>[?query]. Returns true if the connection may go on. */
static bool redirect(int fd, const struct request *r, unsigned port, const char *query)
{
	struct buf loc = { 0 };
	buf_fmt(&loc, "http://127.0.0.1:%u%s%s%s", port, r->path, query ? "?" : "", query ? query : "");
	bool ok = respond(fd, r, 303, loc.p, NULL, 0);
	buf_free(&loc);
	return ok;
}

/* Serve one data endpoint. Returns true if the connection may go on. */
static bool serve_data(int fd, const struct request *r, int ep, const char *served)
{
	pthread_mutex_lock(&lock); /* /_delay-ms/N and /_fault/MODE change them */
	long delay_ms = opt.delay_ms;
	enum fault f = (opt.fault_ep < 0 || opt.fault_ep == ep) ? opt.fault : F_NONE;
	pthread_mutex_unlock(&lock);
	if (delay_ms > 0)
		sleep_ms(delay_ms);

	switch (f) {
	case F_CLOSE:
		return false;
	case F_HANG:
		wait_for_client_close(fd);
		return false;
	case F_GARBAGE:
		send_garbage(fd);
		return false;
	case F_REDIRECT:
		return redirect(fd, r, opt.redirect_port, r->query);
	case F_REDIRECT_SELF:
		if (!r->query || strcmp(r->query, "redirected"))
			return redirect(fd, r, opt.port, "redirected");
		f = F_NONE;
		break;
	default:
		break;
	}

	int denied = auth_status(r);
	if (denied && opt.rest_jwt && (IS_REST(ep) || ep == EP_OPENAPI) && (r->x_token || r->authorization))
		denied = ep == EP_RSHARES ? 500 : 511; /* slurmrestd 25.11.7, rest_auth/jwt, a bad token */
	if (denied)
		return respond(fd, r, denied, NULL, NULL, 0);

	const char *ctype = opt.content_type ? opt.content_type :
			    IS_REST(ep) || ep == EP_OPENAPI ? "application/json" : NULL;
	switch (f) {
	case F_401:
		return respond(fd, r, 401, NULL, NULL, 0);
	case F_403:
		return respond(fd, r, 403, NULL, NULL, 0);
	case F_500:
		return respond_error(fd, r, 500, "Unspecified error");
	case F_404:
		return respond_error(fd, r, 404, "Invalid or unknown URL path");
	case F_CUTHEAD: {
		struct buf b = { 0 };
		buf_fmt(&b, "HTTP/1.%d 200 OK\r\n", r->minor);
		(void)send_all(fd, b.p, b.len);
		buf_free(&b);
		return false;
	}
	case F_503: {
		static const char body[] =
			"slurmctld: primary mode controller address unavailable\n";
		return respond(fd, r, 503, NULL, body, strlen(body));
	}
	case F_EMPTY:
		return respond(fd, r, 200, NULL, NULL, 0);
	case F_HUGE:
	case F_HUGE_NOLENGTH:
	case F_HUGE_ERROR:
		send_huge(fd, r, f != F_HUGE_NOLENGTH, f == F_HUGE_ERROR ? 500 : 200, IS_REST(ep), ctype);
		return false;
	default:
		break;
	}

	char path[4096];
	struct buf body = { 0 };
	if (IS_REST(ep))
		snprintf(path, sizeof(path), "%s/%s.json", opt.dir, ep_names[ep]);
	else
		snprintf(path, sizeof(path), "%s/metrics_%s.txt", opt.dir, ep_names[ep]);
	if (ep == EP_OPENAPI)
		openapi_into(&body, served);
	else
		(void)read_file(path, &body);

	size_t s, e;
	switch (f) {
	case F_BADQUOTE:
		mutate_append_line(&body, "slurm_node_cpus{node=\"we\"ird\"} 3",
				   strlen("slurm_node_cpus{node=\"we\"ird\"} 3"));
		break;
	case F_DUPLICATE:
		if (first_sample(body.p, body.len, 0, &s, &e)) {
			char *line = strndup(body.p + s, e - s);
			if (!line)
				abort();
			mutate_append_line(&body, line, e - s);
			free(line);
		}
		break;
	case F_NAN:
		mutate_nan(&body);
		break;
	case F_CUTLINE:
		mutate_cutline(&body);
		break;
	default:
		break;
	}

	bool go_on = true;
	struct buf out = { 0 };
	if (f == F_CUT) {
		head_into(&out, r->minor, 200, NULL, true, body.len > 0, (long long)body.len, ctype);
		buf_add(&out, body.p, body.len / 2);
		(void)send_all(fd, out.p, out.len);
		go_on = false;
	} else if (f == F_NOLENGTH) {
		head_into(&out, r->minor, 200, NULL, true, body.len > 0, -1, ctype);
		buf_add(&out, body.p, body.len);
		(void)send_all(fd, out.p, out.len);
		go_on = false;
	} else {
		response_into(&out, r, 200, NULL, body.p, body.len, ctype);
		if (f == F_DRIP) {
			send_drip(fd, out.p, out.len);
			go_on = false;
		} else {
			go_on = send_all(fd, out.p, out.len);
		}
	}
	buf_free(&out);
	buf_free(&body);
	return go_on;
}

/* Answer one parsed request. Returns true if the connection may go on. */
static bool handle_request(int fd, const struct request *r)
{
	bool get = !strcmp(r->method, "GET");
	const char *p = r->path;

	if (get && !strcmp(p, "/_stats")) {
		struct buf b = { 0 };
		pthread_mutex_lock(&lock);
		stats_into(&b);
		pthread_mutex_unlock(&lock);
		bool ok = respond(fd, r, 200, NULL, b.p, b.len);
		buf_free(&b);
		return ok;
	}
	if (get && !strncmp(p, "/_delay-ms/", 11)) { /* a test makes the answers slow, then fast again */
		long ms = strtol(p + 11, NULL, 10);
		pthread_mutex_lock(&lock);
		opt.delay_ms = ms < 0 ? 0 : ms;
		pthread_mutex_unlock(&lock);
		return respond(fd, r, 200, NULL, "ok\n", 3);
	}
	if (get && !strncmp(p, "/_fault/", 8)) { /* a controller starts misbehaving, or stops */
		int i = 0;
		while (i < F_COUNT && strcmp(p + 8, fault_names[i]))
			i++;
		if (i == F_COUNT)
			return respond_error(fd, r, 404, "unknown fault mode");
		pthread_mutex_lock(&lock);
		opt.fault = (enum fault)i;
		pthread_mutex_unlock(&lock);
		return respond(fd, r, 200, NULL, "ok\n", 3);
	}
	if (get && !strcmp(p, "/_last_request")) {
		struct buf b = { 0 };
		pthread_mutex_lock(&lock);
		buf_add(&b, last_request, last_request ? last_request_len : 0);
		pthread_mutex_unlock(&lock);
		bool ok = respond(fd, r, 200, NULL, b.p, b.len);
		buf_free(&b);
		return ok;
	}

	if (get && !strncmp(p, "/_hostile-redirect/", 19)) /* --slurmctld.url http://...:P/_hostile-redirect */
		return respond(fd, r, 303, "ftp://evil/\"\\\x1b[31mred\x7f", NULL, 0);
	if (get && !strncmp(p, "/_header-bytes/", 15)) { /* --slurmctld.url http://...:P/_header-bytes/N */
		struct buf b = { 0 };
		long n = strtol(p + 15, NULL, 10);
		buf_fmt(&b, "HTTP/1.%d 200 OK\r\nConnection: Close\r\nX-Padding: ", r->minor);
		for (long i = 0; i < n && i < (16L << 20); i++)
			buf_add(&b, "x", 1);
		buf_str(&b, "\r\nContent-Length: 0\r\n\r\n");
		bool ok = send_all(fd, b.p, b.len);
		buf_free(&b);
		return ok;
	}
	if (get && !strncmp(p, "/_rest-version/", 15) && strlen(p + 15) < REST_VERSION_MAX) {
		pthread_mutex_lock(&lock); /* slurmrestd's paths from now on: /slurm/<version>/... */
		snprintf(opt.rest_version, sizeof(opt.rest_version), "%s", p + 15);
		pthread_mutex_unlock(&lock);
		return respond(fd, r, 200, NULL, "ok\n", 3);
	}
	if (get && (!strcmp(p, "/_role/standby") || !strcmp(p, "/_role/primary"))) {
		pthread_mutex_lock(&lock);
		opt.standby = !strcmp(p, "/_role/standby");
		pthread_mutex_unlock(&lock);
		return respond(fd, r, 200, NULL, "ok\n", 3);
	}

	char served[REST_VERSION_MAX];
	pthread_mutex_lock(&lock);
	memcpy(served, opt.rest_version, sizeof(served));
	pthread_mutex_unlock(&lock);
	int ep = get ? data_endpoint(p, served) : -1;
	record(ep < 0 ? EP_OTHER : (enum endpoint)ep, r->raw, r->raw_len);
	pthread_mutex_lock(&lock);
	bool standby = opt.standby;
	pthread_mutex_unlock(&lock);
	if (standby && !strncmp(p, "/metrics", 8)) /* slurmctld's _reply_standby(): to SlurmctldHost[0] */
		return redirect(fd, r, opt.redirect_port, r->query);
	if (ep >= 0)
		return serve_data(fd, r, ep, served);

	if (get && !strcmp(p, "/metrics") && opt.legacy) {
		struct buf b = { 0 };
		bool ok = read_file(opt.legacy, &b) ? respond(fd, r, 200, NULL, b.p, b.len) :
						    respond_error(fd, r, 404, "no legacy file");
		buf_free(&b);
		return ok;
	}
	if (get && !strcmp(p, "/metrics")) {
		int denied = auth_status(r);
		if (denied)
			return respond(fd, r, denied, NULL, NULL, 0);
		return respond(fd, r, 200, NULL, index_metrics, strlen(index_metrics));
	}
	if (get && !strcmp(p, "/"))
		return respond(fd, r, 200, NULL, index_root, strlen(index_root));
	if (get && (!strcmp(p, "/livez") || !strcmp(p, "/readyz") || !strcmp(p, "/healthz")))
		return respond(fd, r, 204, NULL, NULL, 0);
	return respond_error(fd, r, 404, "Invalid or unknown URL path");
}

/* Half-close, then drain briefly so unread input cannot turn FIN into RST. */
static void linger_close(int fd)
{
	char junk[4096];
	long long deadline = now_ms() + LINGER_MS;

	shutdown(fd, SHUT_WR);
	while (recv_until(fd, junk, sizeof(junk), deadline) > 0)
		;
	close(fd);
}

static void handle_connection(int fd)
{
	char *in = malloc(MAX_HEAD);
	size_t len = 0, end = 0;
	long long deadline = now_ms() + HEAD_TIMEOUT_MS;

	if (!in)
		abort();
	while (!(end = head_end(in, len))) {
		if (bad_first_line(in, len)) {
			record(EP_OTHER, in, len);
			reject_method(fd, -1, false);
			goto out;
		}
		if (len == MAX_HEAD)
			goto out; /* head too large: just drop it */
		ssize_t got = recv_until(fd, in + len, MAX_HEAD - len, deadline);
		if (got <= 0)
			goto out;
		len += (size_t)got;
	}

	/* Answer every complete request already received (pipelining). */
	for (size_t off = 0; (end = head_end(in + off, len - off)); ) {
		struct request r;
		parse_request(&r, in + off, end);
		bool go_on = false;
		if (!r.method || r.minor < 0) {
			record(EP_OTHER, r.raw, r.raw_len);
			reject_method(fd, r.minor, r.conn_close);
		} else {
			go_on = handle_request(fd, &r);
		}
		off += end;
		if (r.content_length > len - off)
			go_on = false; /* body not all here: stop */
		else
			off += (size_t)r.content_length;
		free(r.copy);
		if (!go_on)
			break;
	}
out:
	free(in);
	linger_close(fd);
}

static void *connection_thread(void *arg)
{
	int fd = (int)(intptr_t)arg;
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	pthread_sigmask(SIG_BLOCK, &set, NULL);

	handle_connection(fd);

	pthread_mutex_lock(&lock);
	active_threads--;
	pthread_cond_signal(&slot_freed);
	pthread_mutex_unlock(&lock);
	return NULL;
}

/* ---------------------------------------------------------------- main */

static void on_signal(int sig)
{
	int saved = errno;
	char c = (char)sig;

	stopping = 1;
	if (write(stop_pipe[1], &c, 1) < 0) {
		/* nothing to do: the flag is set */
	}
	errno = saved;
}

static void usage(void)
{
	fprintf(stderr,
		"usage: fake_slurmctld --port N [--port-file F] --dir DIR\n"
		"         [--fault MODE] [--fault-endpoint NAME] [--token TOKEN]\n"
		"         [--user NAME] [--redirect-port P] [--delay-ms MS]\n"
		"         [--stats-file F] [--unix PATH] [--legacy FILE]\n"
		"         [--content-type TYPE] [--rest-jwt] [--openapi-pad N]\n"
		"         [--openapi-oldest VERSION]\n"
		"  MODE: none hang drip garbage cut cutline 401 403 500 503 redirect\n"
		"        empty huge huge-nolength close badquote duplicate nan\n"
		"        redirect-self cuthead nolength 404 huge-error\n"
		"  NAME: jobs nodes partitions scheduler jobs-users-accts rest_nodes\n"
		"        rest_shares rest_jobs rest_diag rest_jobs_state rest_reservations\n"
		"        rest_associations openapi\n"
		"  Listens on 127.0.0.1:N (0: any free port, written to --port-file),\n"
		"  or with --unix PATH on that socket (--port is then ignored).\n");
	exit(2);
}

static long parse_num(const char *s, long max)
{
	char *end = NULL;
	errno = 0;
	long v = strtol(s, &end, 10);
	if (errno || !*s || *end || v < 0 || v > max) {
		fprintf(stderr, "fake_slurmctld: bad number: %s\n", s);
		usage();
	}
	return v;
}

static void parse_args(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "port", required_argument, NULL, 'p' },
		{ "port-file", required_argument, NULL, 'P' },
		{ "dir", required_argument, NULL, 'd' },
		{ "fault", required_argument, NULL, 'f' },
		{ "fault-endpoint", required_argument, NULL, 'e' },
		{ "token", required_argument, NULL, 't' },
		{ "user", required_argument, NULL, 'u' },
		{ "redirect-port", required_argument, NULL, 'r' },
		{ "delay-ms", required_argument, NULL, 'D' },
		{ "stats-file", required_argument, NULL, 's' },
		{ "unix", required_argument, NULL, 'U' },
		{ "legacy", required_argument, NULL, 'L' },
		{ "content-type", required_argument, NULL, 'C' },
		{ "rest-jwt", no_argument, NULL, 'J' },
		{ "openapi-pad", required_argument, NULL, 'O' },
		{ "openapi-oldest", required_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	bool have_port = false;
	long redirect = -1;
	int c;

	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		switch (c) {
		case 'p': opt.port = (unsigned)parse_num(optarg, 65535); have_port = true; break;
		case 'P': opt.port_file = optarg; break;
		case 'd': opt.dir = optarg; break;
		case 't': opt.token = optarg; break;
		case 'u': opt.user = optarg; break;
		case 'r': redirect = parse_num(optarg, 65535); break;
		case 'D': opt.delay_ms = parse_num(optarg, 3600L * 1000); break;
		case 's': opt.stats_file = optarg; break;
		case 'U': opt.unix_path = optarg; break;
		case 'L': opt.legacy = optarg; break;
		case 'C': opt.content_type = optarg; break;
		case 'J': opt.rest_jwt = true; break;
		case 'O': opt.openapi_pad = parse_num(optarg, 10000000); break;
		case 'o':
			if (strncmp(optarg, "v0.0.", 5)) {
				fprintf(stderr, "fake_slurmctld: --openapi-oldest: not v0.0.N: %s\n", optarg);
				usage();
			}
			opt.openapi_oldest = (int)parse_num(optarg + 5, 46);
			break;
		case 'f': {
			int i = 0;
			while (i < F_COUNT && strcmp(optarg, fault_names[i]))
				i++;
			if (i == F_COUNT) {
				fprintf(stderr, "fake_slurmctld: unknown fault mode: %s\n", optarg);
				usage();
			}
			opt.fault = (enum fault)i;
			break;
		}
		case 'e': {
			int i = 0;
			while (i < EP_OTHER && strcmp(optarg, ep_names[i]))
				i++;
			if (i == EP_OTHER) {
				fprintf(stderr, "fake_slurmctld: unknown endpoint: %s\n", optarg);
				usage();
			}
			opt.fault_ep = i;
			break;
		}
		default:
			usage();
		}
	}
	if (optind != argc || !have_port || !opt.dir)
		usage();
	if (opt.rest_jwt && !opt.token) {
		fprintf(stderr, "fake_slurmctld: --rest-jwt needs --token\n");
		usage();
	}
	if (opt.user && !opt.token) {
		fprintf(stderr, "fake_slurmctld: --user needs --token\n");
		usage();
	}
	struct stat st;
	if (stat(opt.dir, &st) < 0 || !S_ISDIR(st.st_mode)) {
		fprintf(stderr, "fake_slurmctld: --dir %s: not a directory\n", opt.dir);
		usage();
	}
	opt.redirect_port = redirect >= 0 ? (unsigned)redirect : 0;
}

/* --unix PATH: a stream socket there (an old one is replaced). */
static int listen_unix(void)
{
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	if (strlen(opt.unix_path) >= sizeof(sa.sun_path)) {
		fprintf(stderr, "fake_slurmctld: --unix %s: path too long\n", opt.unix_path);
		exit(1);
	}
	strcpy(sa.sun_path, opt.unix_path);
	unlink(opt.unix_path);
	if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || listen(fd, SOMAXCONN) < 0) {
		fprintf(stderr, "fake_slurmctld: listen on %s: %s\n", opt.unix_path, strerror(errno));
		exit(1);
	}
	return fd;
}

static int listen_loopback(void)
{
	if (opt.unix_path)
		return listen_unix();
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	int one = 1;
	struct sockaddr_in sa = {
		.sin_family = AF_INET,
		.sin_port = htons((uint16_t)opt.port),
		.sin_addr.s_addr = htonl(INADDR_LOOPBACK),
	};
	socklen_t sl = sizeof(sa);

	if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0 ||
	    bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || listen(fd, SOMAXCONN) < 0 ||
	    getsockname(fd, (struct sockaddr *)&sa, &sl) < 0) {
		fprintf(stderr, "fake_slurmctld: listen on 127.0.0.1:%u: %s\n", opt.port,
			strerror(errno));
		exit(1);
	}
	opt.port = ntohs(sa.sin_port);
	return fd;
}

int main(int argc, char **argv)
{
	parse_args(argc, argv);

	signal(SIGPIPE, SIG_IGN);
	if (pipe2(stop_pipe, O_CLOEXEC | O_NONBLOCK) < 0) {
		perror("fake_slurmctld: pipe");
		return 1;
	}
	struct sigaction sa = { .sa_handler = on_signal };
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);

	int lfd = listen_loopback();
	if (!opt.redirect_port)
		opt.redirect_port = opt.port;
	if (opt.port_file) {
		char line[16];
		int n = snprintf(line, sizeof(line), "%u\n", opt.port);
		write_file_atomic(opt.port_file, line, (size_t)n);
	}

	pthread_attr_t attr;
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	pthread_attr_setstacksize(&attr, 256 * 1024);

	while (!stopping) {
		struct pollfd pfd[2] = {
			{ .fd = lfd, .events = POLLIN },
			{ .fd = stop_pipe[0], .events = POLLIN },
		};
		if (poll(pfd, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			perror("fake_slurmctld: poll");
			break;
		}
		if (pfd[1].revents || stopping)
			break;
		if (!(pfd[0].revents & POLLIN))
			continue;

		/* wait for a free thread slot (the backlog holds the rest) */
		pthread_mutex_lock(&lock);
		while (active_threads >= MAX_THREADS && !stopping) {
			struct timespec ts;
			clock_gettime(CLOCK_REALTIME, &ts);
			ts.tv_nsec += 100 * 1000000L;
			if (ts.tv_nsec >= 1000000000L) {
				ts.tv_sec++;
				ts.tv_nsec -= 1000000000L;
			}
			pthread_cond_timedwait(&slot_freed, &lock, &ts);
		}
		active_threads++;
		pthread_mutex_unlock(&lock);

		int cfd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
		pthread_t tid;
		if (cfd >= 0 && pthread_create(&tid, &attr, connection_thread,
					       (void *)(intptr_t)cfd) == 0)
			continue;
		if (cfd < 0 && errno != EINTR && errno != EAGAIN && errno != ECONNABORTED) {
			perror("fake_slurmctld: accept");
			sleep_ms(100); /* EMFILE and friends: do not spin */
		} else if (cfd >= 0) {
			fprintf(stderr, "fake_slurmctld: cannot start a thread\n");
			close(cfd);
		}
		pthread_mutex_lock(&lock);
		active_threads--;
		pthread_mutex_unlock(&lock);
	}

	pthread_attr_destroy(&attr);
	close(lfd);
	return 0;
}
