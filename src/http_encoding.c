/* http_encoding.c: see http_encoding.h. */
#include "http_encoding.h"

#include <string.h>
#include <strings.h>

/* tchar (RFC 9110 5.6.2): a token's bytes */
static int is_tchar(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       (c && strchr("!#$%&'*+-.^_`|~", c));
}

static size_t skip_ows(const char *s, size_t i, size_t n)
{
	while (i < n && (s[i] == ' ' || s[i] == '\t'))
		i++;
	return i;
}

int http_qvalue_parse(const char *s, size_t len)
{
	int v, scale = 100;
	if (len == 0 || len > 5 || (s[0] != '0' && s[0] != '1'))
		return -1;
	v = (s[0] - '0') * 1000;
	if (len == 1)
		return v;
	if (s[1] != '.')
		return -1;
	for (size_t i = 2; i < len; i++, scale /= 10) {
		if (s[i] < '0' || s[i] > '9' || (s[0] == '1' && s[i] != '0'))
			return -1;
		v += (s[i] - '0') * scale;
	}
	return v;
}

void accept_encoding_init(struct accept_encoding *ae)
{
	*ae = (struct accept_encoding){ .gzip = -1, .identity = -1, .star = -1 };
}

static int coding_is_named(const char *s, size_t n, const char *name)
{
	return n == strlen(name) && strncasecmp(s, name, n) == 0;
}

/* A coding listed twice keeps the lower weight. */
static void take(int *slot, int w)
{
	if (*slot < 0 || w < *slot)
		*slot = w;
}

static void record(struct accept_encoding *ae, const char *coding, size_t n, int w)
{
	if (coding_is_named(coding, n, "gzip") || coding_is_named(coding, n, "x-gzip"))
		take(&ae->gzip, w);
	else if (coding_is_named(coding, n, "identity"))
		take(&ae->identity, w);
	else if (n == 1 && coding[0] == '*')
		take(&ae->star, w);
}

/* One element at v[*i] (after its OWS): coding [ OWS ";" OWS "q=" qvalue ] OWS, up to a comma or
 * the end. 0, or -1 when it breaks the grammar. */
static int element(struct accept_encoding *ae, const char *v, size_t len, size_t *i)
{
	size_t t = *i, q, n;
	int w = 1000;
	while (*i < len && is_tchar((unsigned char)v[*i]))
		(*i)++;
	if ((n = *i - t) == 0)
		return -1;
	*i = skip_ows(v, *i, len);
	if (*i < len && v[*i] == ';') {
		*i = skip_ows(v, *i + 1, len);
		if (len - *i < 2 || (v[*i] != 'q' && v[*i] != 'Q') || v[*i + 1] != '=')
			return -1;
		q = *i += 2;
		while (*i < len && (v[*i] == '.' || (v[*i] >= '0' && v[*i] <= '9')))
			(*i)++;
		if ((w = http_qvalue_parse(v + q, *i - q)) < 0)
			return -1;
		*i = skip_ows(v, *i, len);
	}
	if (*i < len && v[*i] != ',')
		return -1;
	record(ae, v + t, n, w);
	return 0;
}

int accept_encoding_add(struct accept_encoding *ae, const char *value, size_t len)
{
	size_t i = 0;
	if (ae->malformed || len > ACCEPT_ENCODING_MAX - ae->bytes) {
		ae->malformed = 1;
		return -1;
	}
	ae->bytes += len;
	while (i < len) {
		i = skip_ows(value, i, len);
		if (i == len)
			break;
		if (value[i] == ',') { /* an empty element, or the comma after the last one */
			i++;
			continue;
		}
		if (element(ae, value, len, &i) < 0) {
			ae->malformed = 1;
			return -1;
		}
	}
	return 0;
}

enum content_coding accept_encoding_choose(const struct accept_encoding *ae)
{
	if (ae->malformed)
		return CODING_IDENTITY;
	int gzip = ae->gzip >= 0 ? ae->gzip : ae->star >= 0 ? ae->star : 0;
	/* identity unlisted and no "*": acceptable, below any listed weight (0 compares so below gzip's) */
	int identity = ae->identity >= 0 ? ae->identity : ae->star >= 0 ? ae->star : 0;
	return gzip > 0 && gzip >= identity ? CODING_GZIP : CODING_IDENTITY;
}

enum content_coding http_encoding_negotiate(const char *value, size_t len)
{
	struct accept_encoding ae;
	accept_encoding_init(&ae);
	accept_encoding_add(&ae, value, len);
	return accept_encoding_choose(&ae);
}
