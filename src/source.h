/* source.h: the inputs a scrape reads, as a table (one row per source), and the one rule that says
 * whether a source's answer is usable and why not.
 *
 * A source is one answer of one upstream server: where it is fetched (its upstream and path), how
 * its bytes become families (its parser, fed chunk by chunk), which metric names it serves, and
 * what an empty answer means. slurmctld's five OpenMetrics endpoints are the first sources; a new
 * kind (slurmrestd's JSON) is a new table row, its parser and its upstream's configuration: the
 * scrape loop, fetch.c and payload.c do not change.
 *
 * fetch.c and payload.c only record facts about an answer (struct source_facts: transport error,
 * HTTP status, framing, size, redirect refused, deadline passed, malformed items); source_verdict() alone
 * turns them into usable / not usable and the reason (payload.h's source_usable() applies the
 * rules across the answers of one scrape). */
#ifndef SHIM_SOURCE_H
#define SHIM_SOURCE_H

#include <stddef.h>

struct expo;

/* slurmctld's five OpenMetrics endpoints, then slurmrestd's JSON documents (optional upstream). */
enum source_id {
	SRC_JOBS, SRC_NODES, SRC_PARTITIONS, SRC_SCHEDULER, SRC_UA,
	SRC_REST_NODES, SRC_REST_SHARES, SRC_REST_JOBS, SRC_REST_DIAG, SRC_REST_LICENSES, SRC_REST_JOB_STATES, SRC_REST_RESERVATIONS,
	SRC_REST_ASSOCIATIONS,
	SRC_COUNT
};
#define SRC_NATIVE_COUNT SRC_REST_NODES /* slurmctld's sources come first: 0 to this - 1 */
enum upstream_id { UPSTREAM_SLURMCTLD, UPSTREAM_SLURMRESTD, UPSTREAM_COUNT };

/* Where an upstream is and how to reach it; one per upstream (a scraper_config holds them). */
struct upstream_config {
	const char *base_url;     /* e.g. "http://localhost:6817", or "unix:/path/to/socket"; NULL: the
				     upstream is not configured and its sources are never fetched.
				     slurmctld: a comma list of controllers ("http://a:6817,http://b:6817") */
	double timeout;           /* seconds, per request */
	size_t max_body;          /* bytes; 0: no limit */
	const char *token_file;   /* JWT for X-SLURM-USER-TOKEN, or NULL */
	const char *user;         /* X-SLURM-USER-NAME, or NULL */
	const char *api_version;  /* slurmrestd: --slurmrestd.api-version for "{version}" in paths, or NULL:
				     learnt at run time (the scraper's upstream_rt, fetch.h); slurmctld: NULL */
};

struct upstream {
	const char *name;         /* "slurmctld" */
	const char *flag;         /* flag prefix named in messages: "--slurmctld" */
	const char *accept;       /* the Accept header */
	const char *(*status_hint)(long code); /* what an HTTP status means, for the operator, or NULL */
	const char *empty_hint;   /* what an empty answer suggests */
	const char *media_type;   /* the Content-Type of a usable answer (parameters aside), or NULL: any;
				     an answer of another type is refused at its headers (fetch.c) */
	int optional;             /* used only when its base_url is set (in a replay too: its files are
				     read only then); slurmctld is always used */
	int length_required;      /* a 200 with a body must say its length (Content-Length, or chunked):
				     slurmctld always sends Content-Length with a body, so one without
				     cannot be told from an answer cut short */
};

extern const struct upstream upstreams[UPSTREAM_COUNT];

/* How an answer's bytes become families: begin once, feed every chunk in order, end when the body
 * is complete or the transfer failed (returns the malformed-item count, the first ones recorded
 * in the expo's errors; frees the state), discard instead of end when the bytes so far are void
 * (a redirect restarted the transfer, or the payload goes away unfinished); the expo's families
 * are the result. One call per chunk: nothing per sample. */
struct source_parser {
	void *(*begin)(struct expo *e);               /* parser state, may be NULL */
	void (*feed)(void *st, struct expo *e, const char *data, size_t n);
	size_t (*end)(void *st, struct expo *e);
	void (*discard)(void *st);                    /* frees the state; the expo is reset by the caller */
	int (*stopped)(const void *st);               /* the answer is known unusable already: the rest
							 of its bytes need not come (NULL: never) */
	const char *at;                               /* what the errors' "line" counts: "line", "byte" */
};

struct source {
	const char *name;         /* self-metric label value: "jobs", "jobs-users-accts" */
	const char *path;         /* "/metrics/jobs"; slurmrestd's carry "{version}" (slurmrestd_api.h) */
	const char *file;         /* replay file name, "metrics_jobs.txt" */
	enum upstream_id upstream;
	const struct source_parser *parser;
	int empty_ok;             /* an empty 200 is normal (no jobs in memory) */
	int empty_vouched_by;     /* read only with empty_ok: an empty answer counts only when this
				     source (a source_id) is usable too; -1: always */
	const char *const *prefixes; /* the metric names it serves, by prefix; NULL-terminated */
	int catch_all;            /* serves the names no source's prefixes claim */
	int names_optional;       /* a well-formed answer may name no family (JSON: no jobs, no
				     shares); slurmctld's text always names some when it has bytes */
	int walks_jobs;           /* the cost class: the upstream walks every job record to answer
				     (docs/performance.md has what a record costs), so the answer is
				     reused for the upstream's jobs interval
				     (--slurmctld.jobs.min-interval, --slurmrestd.jobs.min-interval);
				     0: cheap (nodes, scheduler), reused for --*.min-interval */
};

extern const struct source sources[SRC_COUNT];

/* The source serving a metric name: by slurmctld's naming, which does not change between
 * releases (slurm_partition* -> partitions, slurm_node_* and slurm_nodes* -> nodes, slurm_user_*
 * and slurm_account_* -> jobs-users-accts, slurm_jobs* -> jobs), and the converter's for
 * slurmrestd (slurmrestd_node_* and slurmrestd_partition_* -> slurmrestd-nodes, slurmrestd_share_*
 * -> slurmrestd-shares, slurmrestd_jobs* -> slurmrestd-jobs, slurmrestd_diag_* -> slurmrestd-diag,
 * slurmrestd_job_state* -> slurmrestd-jobs-state, slurmrestd_license_* -> slurmrestd-licenses,
 * slurmrestd_reservation_* -> slurmrestd-reservations, slurmrestd_association_* -> slurmrestd-associations);
 * everything else -> scheduler. */
enum source_id source_for_metric(const char *name);
/* The sources of upstream u, as a mask (bit 1 << id). */
unsigned source_of_upstream(enum upstream_id u);
/* The sources whose upstream is used under cfg (not optional, or base_url set), as a mask. */
unsigned source_configured(const struct upstream_config cfg[UPSTREAM_COUNT]);
/* mask and the sources that vouch for an empty answer of one in mask (empty_vouched_by): a
 * voucher not fetched cannot refuse an empty answer, so a scrape fetches it too. */
unsigned source_with_vouchers(unsigned mask);

/* What went wrong in getting an answer, recorded where it happened (fetch.c, a replay, the
 * scrape's deadline); the first one recorded is the one reported. */
enum source_fault {
	FAULT_NONE,
	FAULT_TRANSPORT,         /* detail: the transport's error text (or a replay file's) */
	FAULT_TOO_BIG,           /* limit: the body limit */
	FAULT_REDIRECT_LOOP,     /* a second redirect */
	FAULT_REDIRECT_REFUSED,  /* detail: the target (its first 159 bytes, raw: escaped where shown) */
	FAULT_REDIRECT_UNFOLLOWED, /* detail: the target (raw, as REFUSED's): a controller's 303 elsewhere
				     (the sources of one fetch are read from one controller) */
	FAULT_NO_TOKEN,          /* detail: why no token was sent; a fault only if the answer is 401 */
	FAULT_DEADLINE,          /* the scrape's deadline passed while the fetch was in flight */
	FAULT_NOT_WAITED,        /* detail: why the scrape answered without this fetch in flight
				    (slurmctld's answers were in: cache.h) */
	FAULT_CONTENT_TYPE,      /* detail: the answer's Content-Type (not its upstream's media_type), escaped */
};

/* Whether a token went with the request (fetch.c): the token is never recorded, only this. */
enum source_token_use {
	TOKEN_NOT_CONFIGURED,    /* no --*.auth.token-file (or a replay) */
	TOKEN_UNREADABLE,        /* configured, but the file could not be read: none sent */
	TOKEN_SENT,
	TOKEN_WITHHELD,          /* configured, not sent: the answer came from another origin (redirect) */
};

/* The facts about one answer. */
struct source_facts {
	enum source_fault fault;
	char detail[300];
	size_t limit;            /* FAULT_TOO_BIG: bytes */
	int from_file;           /* a replay file, not an HTTP answer */
	long http_status;        /* 0: no HTTP answer (connection failed, replay) */
	size_t len;              /* body bytes received */
	size_t malformed;        /* malformed items the parser counted */
	size_t first_line;       /* the first malformed item's line */
	const char *first_reason;
	size_t nnamed;           /* families the answer named (kept or not) */
	char exporter[64];       /* slurmctld: the first family named that slurmctld never writes
				    (source_is_exporter_family): the answer is an exporter's page */
	int headers_cut;         /* an HTTP answer whose header block never ended (the connection
				     closed after the status line): not an answer, whatever its status */
	int unframed;            /* an HTTP answer with neither Content-Length nor a chunked body: its
				     end is where the connection closed */
	long long content_length; /* its Content-Length; 0: none given, or not an HTTP answer */
	enum source_token_use token;
};

/* How far an answer got before it was found unusable; VERDICT_OK: usable. */
enum source_verdict {
	VERDICT_OK,
	VERDICT_FAULT,           /* transport, size, redirect, token, deadline */
	VERDICT_CUT,             /* headers that never ended, a body shorter than its length, or a
				     body without a length where the upstream always sends one */
	VERDICT_STATUS,          /* an HTTP status other than 200 */
	VERDICT_EMPTY,
	VERDICT_MALFORMED,
	VERDICT_NO_FAMILY,       /* bytes, but not one family named */
	VERDICT_EXPORTER,        /* slurmctld's source answered with an exporter's page (the old
				    exporter's, the shim's): its families are no slurmctld's */
};

/* Whether a family named [name, name + n) in slurmctld's answer says the answer is no slurmctld's
 * but an exporter's page: a Prometheus client library's own families (go_*, process_*, promhttp_*),
 * an exporter's self metrics (slurm_exporter_*: the shim's, the SckyzO fork's), or one of the legacy
 * families slurmctld has no family of that name for (slurm_cpus_alloc...). */
int source_is_exporter_family(const char *name, size_t n);

/* Is src's answer with facts f usable? When not, why goes into why (one line for logs and the 503
 * body, starting with the source's path). */
enum source_verdict source_verdict(const struct source *src, const struct source_facts *f, char *why, size_t whylen);

/* Whether an answer with facts f refused the token that was sent: 401 or 403; slurmrestd 25.11 with
 * rest_auth/jwt also answers 511 to an expired or forged token, and 500 on /shares. */
int source_is_token_refused(const struct source *src, const struct source_facts *f);

#endif
