/* webconfig_auth.c: basic_auth_users (see webconfig_int.h and webconfig.h): bcrypt hashes checked
 * at load, the password check (constant time, the same cost for unknown users, a verified password
 * remembered per user under that user's lock) and the Authorization header decoder. Password hashes
 * and remembered passwords are wiped before they are freed. */
#include "names.h"
#include "webconfig_int.h"

#include <crypt.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "xmalloc.h"

#define BCRYPT_LEN 60

/* Tail (salt + digest) of a real bcrypt hash: an unknown user's check runs bcrypt on it, with the
 * prefix and cost of a configured user's hash (see hash_for). */
#define DUMMY_TAIL "B4XKbEPco2Nrn6xg7QJy5Oee73Rb8onnLBqauVot3lyIp5LC3GuO6"
_Static_assert(7 + sizeof DUMMY_TAIL == BCRYPT_LEN + 1, "dummy hash length");

/* --- basic_auth_users -------------------------------------------------------------------------- */

/* Reason why h is not an acceptable bcrypt hash, or NULL; *cost set when valid. */
static const char *bcrypt_problem(const char *h, size_t len, unsigned *cost)
{
	static const char alphabet[] = "./ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
	size_t i;

	if (len < 4 || h[0] != '$' || h[1] != '2' || (h[2] != 'a' && h[2] != 'b' && h[2] != 'y') ||
	    h[3] != '$')
		return "password hash is not a bcrypt hash (it must start with $2a$, $2b$ or $2y$)";
	if (len != BCRYPT_LEN)
		return "bcrypt hash has the wrong length (a bcrypt hash is 60 characters)";
	if (h[4] < '0' || h[4] > '9' || h[5] < '0' || h[5] > '9' || h[6] != '$')
		return "malformed bcrypt hash (expected a two-digit cost after the prefix)";
	*cost = (unsigned)(h[4] - '0') * 10 + (unsigned)(h[5] - '0');
	if (*cost < 4 || *cost > 31)
		return "malformed bcrypt hash (cost must be between 04 and 31)";
	for (i = 7; i < len; i++)
		if (!memchr(alphabet, h[i], sizeof alphabet - 1))
			return "malformed bcrypt hash (invalid character in salt or digest)";
	return NULL;
}

int wc_parse_users(struct wc_ctx *c, const yaml_node_t *n)
{
	struct webconfig *wc = c->wc;
	const yaml_node_t *k, *v;
	char eb[YF_ESC_SIZE];
	unsigned cost;
	const char *why;
	size_t count;
	int present;

	if (yf_get_mapping(&c->y, n, "basic_auth_users", &present) < 0)
		return -1;
	if (!present)
		return 0;
	count = (size_t)(n->data.mapping.pairs.top - n->data.mapping.pairs.start);
	if (count == 0)
		return 0;
	wc->users = xcalloc(count, sizeof *wc->users);
	YF_FOR_PAIRS(&c->y, n, k, v) {
		if (v->type != YAML_SCALAR_NODE)
			return yf_fail_at(&c->y, v->start_mark, "basic_auth_users: user \"%s\": password hash must be a string, not %s",
				       yf_esc(eb, yf_sval(k), yf_slen(k)), yf_type_name(v));
		why = yf_is_null(v) ? "password hash is empty" : bcrypt_problem(yf_sval(v), yf_slen(v), &cost);
		if (why)
			return yf_fail_at(&c->y, v->start_mark, "basic_auth_users: user \"%s\": %s",
				       yf_esc(eb, yf_sval(k), yf_slen(k)), why);
		wc->users[wc->nusers].name = yf_dup_scalar(k);
		wc->users[wc->nusers].hash = yf_dup_scalar(v);
		pthread_mutex_init(&wc->users[wc->nusers].lock, NULL);
		wc->nusers++;
	}
	return 0;
}

void wc_users_free(struct webconfig *wc)
{
	for (size_t i = 0; i < wc->nusers; i++) {
		struct wc_user *u = &wc->users[i];
		free(u->name);
		free_secret_str(u->hash);
		free_secret_str(u->verified);
		pthread_mutex_destroy(&u->lock);
	}
	free(wc->users);
}


/* Equal iff same length and same bytes; the byte loop does not exit early. */
static int ct_is_equal(const char *a, size_t la, const char *b, size_t lb)
{
	volatile unsigned char d = 0;
	size_t i;

	if (la != lb)
		return 0;
	for (i = 0; i < la; i++)
		d |= (unsigned char)(a[i] ^ b[i]);
	return d == 0;
}

/* The hash a check for this user name runs bcrypt on. A configured user's own; for an unknown name,
 * a dummy with the cost of a configured user picked from the name (FNV-1a): a wrong password then
 * costs the same whether the user exists or not, and the same name always costs the same, so neither
 * one probe nor repeated probes tell a configured name from another. (Every failure at the highest
 * cost would not do: a configured user with a lower cost would stand out by answering faster.) */
static const char *hash_for(const struct webconfig *wc, const char *user, size_t ulen, struct wc_user **u,
			    char dummy[BCRYPT_LEN + 1])
{
	size_t i;

	*u = NULL;
	for (i = 0; i < wc->nusers; i++) /* no early exit */
		if (!*u && ct_is_equal(wc->users[i].name, strlen(wc->users[i].name), user, ulen))
			*u = &wc->users[i];
	if (*u)
		return (*u)->hash;
	memcpy(dummy, wc->users[fnv1a(user, ulen) % wc->nusers].hash, 7); /* "$2b$CC$": the picked user's cost */
	memcpy(dummy + 7, DUMMY_TAIL, sizeof DUMMY_TAIL); /* includes the NUL */
	return dummy;
}

/* Prometheus sends the same credentials on every scrape, and a bcrypt check costs tens of
 * milliseconds by design; like exporter-toolkit, a password that verified once for a user is
 * remembered (one per user, under the user's lock, compared in constant time) so the next scrape
 * skips bcrypt. A wrong password always pays the full bcrypt cost. */
int webconfig_auth_is_valid(const struct webconfig *wc, const char *user, size_t ulen, const char *password,
			       size_t plen, unsigned *cost)
{
	struct crypt_data *cd = NULL;
	struct wc_user *u = NULL;
	char dummy[BCRYPT_LEN + 1];
	const char *hash, *res;
	int ok = 0;

	if (cost)
		*cost = 0;
	if (!wc || !user || !password || wc->nusers == 0)
		goto out;
	hash = hash_for(wc, user, ulen, &u, dummy);
	if (u) {
		pthread_mutex_lock(&u->lock);
		ok = u->verified && ct_is_equal(u->verified, strlen(u->verified), password, plen);
		pthread_mutex_unlock(&u->lock);
		if (ok)
			goto out;
	}
	if (cost)
		*cost = (unsigned)(hash[4] - '0') * 10 + (unsigned)(hash[5] - '0');
	cd = xcalloc(1, sizeof *cd);
	/* crypt reads up to a NUL: a password with one inside pays the same cost, then fails */
	res = crypt_rn(password, hash, cd, (int)sizeof *cd);
	if (!res || res[0] == '*')
		goto out;
	ok = ct_is_equal(res, strlen(res), hash, BCRYPT_LEN) & (u != NULL) & (memchr(password, '\0', plen) == NULL);
	if (ok) {
		char *copy = xstrndup(password, plen);
		pthread_mutex_lock(&u->lock);
		free_secret_str(u->verified);
		u->verified = copy;
		pthread_mutex_unlock(&u->lock);
	}
out:
	free_secret(cd, sizeof *cd);
	return ok;
}

/* Value of one base64 character, -1 for '=' and anything outside the standard alphabet. */
static int b64_value(unsigned char ch)
{
	static const char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	const char *p = ch ? strchr(alphabet, ch) : NULL;
	return p ? (int)(p - alphabet) : -1;
}

/* Strict base64 (RFC 4648 section 4, padded, no whitespace, unused bits zero) into out, which has
 * room for len / 4 * 3 bytes. Returns the decoded length or -1. */
static long b64_decode(const char *in, size_t len, char *out)
{
	size_t i, o = 0;

	if (len == 0 || len % 4)
		return -1;
	for (i = 0; i < len; i += 4) {
		int v[4], pad = 0;
		for (int k = 0; k < 4; k++) {
			v[k] = b64_value((unsigned char)in[i + k]);
			if (v[k] < 0 && (in[i + k] != '=' || i + 4 != len || k < 2))
				return -1;
			if (v[k] < 0)
				pad++;
			else if (pad)
				return -1; /* data after '=' */
		}
		if ((pad == 2 && (v[1] & 15)) || (pad == 1 && (v[2] & 3)))
			return -1; /* bits that no byte uses */
		out[o++] = (char)(v[0] << 2 | v[1] >> 4);
		if (pad < 2)
			out[o++] = (char)((v[1] & 15) << 4 | v[2] >> 2);
		if (pad < 1)
			out[o++] = (char)((v[2] & 3) << 6 | v[3]);
	}
	return (long)o;
}

int webconfig_parse_basic(const char *value, size_t len, struct basic_cred *out)
{
	size_t i = 5;
	long n;
	char *colon;

	memset(out, 0, sizeof *out);
	if (!value || len < 6 || strncasecmp(value, "Basic", 5) || value[5] != ' ')
		return -1;
	while (i < len && value[i] == ' ')
		i++;
	out->buf = xmalloc((len - i) / 4 * 3 + 1);
	n = b64_decode(value + i, len - i, out->buf);
	colon = n < 0 ? NULL : memchr(out->buf, ':', (size_t)n);
	if (!colon) {
		webconfig_basic_free(out);
		return -1;
	}
	out->buflen = (size_t)n;
	out->user = out->buf;
	out->ulen = (size_t)(colon - out->buf);
	out->pass = colon + 1;
	out->plen = (size_t)n - out->ulen - 1;
	out->buf[n] = '\0'; /* pass is a C string too; plen says where it really ends */
	return 0;
}

void webconfig_basic_free(struct basic_cred *c)
{
	free_secret(c->buf, c->buflen + 1);
	memset(c, 0, sizeof *c);
}
