/* slurmrestd_stub.c: TEMPORARY, for branch p3f only (issue 11 wiring). LEAD: DELETE THIS FILE AT
 * MERGE; engineer E's src/slurmrestd.c (branch p2e) implements the same slurmrestd.h interface for
 * real (streaming, every family of docs/mapping.md).
 * This stand-in holds the body (bounded by the upstream's max-body) and converts it at the end with
 * jansson into two families, enough for the wiring tests: slurmrestd_node_cpus{node} from /nodes
 * and slurmrestd_jobs{user} (job count) from /jobs; /shares and /diag name none. */
#include "slurmrestd.h"
#include "buf.h"
#include "xmalloc.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct stub {
	enum rest_doc doc;
	struct buf body;
};

void *rest_begin(struct expo *e, enum rest_doc doc)
{
	(void)e;
	struct stub *st = xcalloc(1, sizeof(*st));
	st->doc = doc;
	buf_init(&st->body, 0);
	return st;
}

void *rest_begin_nodes(struct expo *e) { return rest_begin(e, REST_NODES); }
void *rest_begin_shares(struct expo *e) { return rest_begin(e, REST_SHARES); }
void *rest_begin_jobs(struct expo *e) { return rest_begin(e, REST_JOBS); }
void *rest_begin_diag(struct expo *e) { return rest_begin(e, REST_DIAG); }

void rest_feed(void *st, struct expo *e, const char *data, size_t n)
{
	(void)e;
	buf_append(&((struct stub *)st)->body, data, n);
}

void rest_discard(void *st)
{
	struct stub *s = st;
	buf_free(&s->body);
	free(s);
}

/* One sample line per record of the document's array, as exposition text. */
static void to_text(const struct stub *s, json_t *root, struct buf *t)
{
	size_t i;
	json_t *v;
	if (s->doc == REST_NODES)
		json_array_foreach(json_object_get(root, "nodes"), i, v)
			buf_printf(t, "slurmrestd_node_cpus{node=\"%s\"} %lld\n", json_string_value(json_object_get(v, "name")),
				   json_integer_value(json_object_get(v, "cpus")));
	if (s->doc == REST_JOBS)
		json_array_foreach(json_object_get(root, "jobs"), i, v)
			buf_printf(t, "slurmrestd_jobs{user=\"%s\",job=\"%zu\"} 1\n",
				   json_string_value(json_object_get(v, "user_name")), i);
}

size_t rest_end(void *st, struct expo *e)
{
	struct stub *s = st;
	json_error_t err;
	json_t *root = json_loadb(s->body.data ? s->body.data : "", s->body.len, 0, &err);
	struct buf t;
	buf_init(&t, 0);
	if (root)
		to_text(s, root, &t);
	else
		buf_puts(&t, "{ not JSON\n"); /* the text parser's malformed line stands for the JSON error */
	expo_feed(e, t.data ? t.data : "", t.len, 0);
	size_t bad = expo_feed_end(e, 0);
	json_decref(root);
	buf_free(&t);
	rest_discard(s);
	return bad;
}

unsigned long rest_array_tasks(const char *s, size_t n)
{
	(void)s;
	(void)n;
	return 0;
}
