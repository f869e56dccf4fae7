/* expr_re.c: PromQL (RE2) regexes as POSIX ones, and label_replace's replacement templates. */
#include "expr_int.h"
#include "buf.h"

#include <stdlib.h>
#include <string.h>

/* Compile a PromQL (RE2) regex with POSIX regcomp, fully anchored as PromQL does. The RE2 classes
 * \d \D \s \S \w \W are translated; RE2 syntax POSIX would read differently ((?..), lazy
 * quantifiers, back-references, escapes inside [...]) is refused rather than silently misread.
 * glibc's regcomp takes time and memory exponential in stacked repetition ("a++++...",
 * "((a+)+)+...", "(a{1,100}){1,100}"), so, like RE2's own limits, these are refused too: more than
 * RE_MAX_LEN bytes, two repetition operators in a row, a bound above RE_MAX_REPEAT (also for the
 * product of nested bounds), repeated groups nested deeper than RE_MAX_NEST, more than RE_MAX_QUANT
 * repetition operators. */
#define RE_MAX_LEN 1024
#define RE_MAX_REPEAT 1000
#define RE_MAX_NEST 2
#define RE_MAX_QUANT 32
#define RE_MAX_GROUPS 64

/* At s a repetition operator? Sets *len (bytes), *copies (how many copies of the atom regcomp
 * builds for an interval; 1 for * + ?) and checks an interval's bounds. */
static int repetition_at(const char *s, size_t *len, long *copies, const char **why)
{
	*copies = 1;
	if (*s == '*' || *s == '+' || *s == '?') {
		*len = 1;
		return 1;
	}
	if (*s != '{')
		return 0;
	const char *p = s + 1;
	long lo = -1, hi = -1;
	if (*p >= '0' && *p <= '9')
		lo = strtol(p, (char **)&p, 10);
	if (*p == ',') {
		p++;
		if (*p >= '0' && *p <= '9')
			hi = strtol(p, (char **)&p, 10);
	} else {
		hi = lo;
	}
	if (*p != '}' || lo < 0) {
		*why = "a '{' that is not a repetition {n}, {n,} or {n,m} must be escaped";
		return -1;
	}
	if (lo > RE_MAX_REPEAT || hi > RE_MAX_REPEAT || (hi >= 0 && hi < lo)) {
		*why = "repetition bound above 1000 or reversed";
		return -1;
	}
	*len = (size_t)(p + 1 - s);
	*copies = hi > lo ? hi : (lo > 0 ? lo : 1);
	return 1;
}

/* What the translation tracks of the groups open at the cursor, to bound stacked repetition. */
struct re_limits {
	int prev_rep, last_depth, nquant, ngroup;
	int depth[RE_MAX_GROUPS + 1];   /* deepest repeated nesting inside each open group */
	long weight[RE_MAX_GROUPS + 1]; /* largest product of interval copies inside it */
	long last_weight;
};

/* A repetition operator (at s, making `copies` copies of the last atom): within the limits? */
static int re_repetition(struct re_limits *l, const char *s, long copies, const char **why)
{
	if (l->prev_rep) {
		*why = (s[0] == '?') ? "lazy quantifiers are not supported" : "two repetition operators in a row";
		return -1;
	}
	if (++l->nquant > RE_MAX_QUANT) {
		*why = "more than 32 repetition operators";
		return -1;
	}
	/* the repeated atom was a group of nesting last_depth, or a single atom (0) */
	if (l->last_depth + 1 > RE_MAX_NEST) {
		*why = "repeated groups nested too deep";
		return -1;
	}
	if (l->depth[l->ngroup] < l->last_depth + 1)
		l->depth[l->ngroup] = l->last_depth + 1;
	if (l->last_weight * copies > RE_MAX_REPEAT) {
		*why = "nested repetition bounds multiply to more than 1000";
		return -1;
	}
	if (l->weight[l->ngroup] < l->last_weight * copies)
		l->weight[l->ngroup] = l->last_weight * copies;
	l->prev_rep = 1;
	return 0;
}

/* '(' or ')' outside a class: open or close a group. */
static int re_group(struct re_limits *l, const char *s, const char **why)
{
	if (*s == '(' && s[1] == '?') {
		*why = "(?...) groups and flags are not supported";
		return -1;
	}
	if (*s == '(') {
		if (l->ngroup == RE_MAX_GROUPS) {
			*why = "more than 64 groups";
			return -1;
		}
		l->depth[++l->ngroup] = 0;
		l->weight[l->ngroup] = 1;
	} else if (l->ngroup > 0) {
		l->last_weight = l->weight[l->ngroup];
		l->last_depth = l->depth[l->ngroup--];
		if (l->depth[l->ngroup] < l->last_depth)
			l->depth[l->ngroup] = l->last_depth;
		if (l->weight[l->ngroup] < l->last_weight)
			l->weight[l->ngroup] = l->last_weight;
	}
	return 0;
}

/* An escape at s (s[1] is not NUL): RE2's classes translated, back-references refused, any other
 * escape copied. Returns how many bytes it took, or -1. */
static int re_escape(struct buf *b, const char *s, const char **why)
{
	static const char *const cls[][2] = { { "d", "[0-9]" }, { "D", "[^0-9]" }, { "s", "[[:space:]]" },
					      { "S", "[^[:space:]]" }, { "w", "[[:alnum:]_]" },
					      { "W", "[^[:alnum:]_]" } };
	if (s[1] >= '1' && s[1] <= '9') {
		*why = "back-references are not supported";
		return -1;
	}
	for (size_t i = 0; i < sizeof(cls) / sizeof(cls[0]); i++)
		if (s[1] == cls[i][0][0]) {
			buf_puts(b, cls[i][1]);
			return 2;
		}
	buf_append(b, s, 2);
	return 2;
}

/* Translate src into b (without the anchors). Returns 0, or -1 with *why set. */
static int re_translate(struct buf *b, const char *src, const char **why)
{
	struct re_limits l = { .weight = { 1 }, .last_weight = 1 };
	int in_class = 0;
	for (const char *s = src; *s; s++) {
		size_t replen;
		long copies;
		int r;
		if (in_class) {
			if (*s == '\\') {
				*why = "a backslash inside [...] is not supported";
				return -1;
			}
			if (*s == ']' && s[-1] != '[' && !(s[-1] == '^' && s[-2] == '['))
				in_class = 0;
			buf_putc(b, *s);
			continue;
		}
		if ((r = repetition_at(s, &replen, &copies, why)) < 0)
			return -1;
		if (r) {
			if (re_repetition(&l, s, copies, why) < 0)
				return -1;
			buf_append(b, s, replen);
			s += replen - 1;
			continue;
		}
		l.prev_rep = 0;
		l.last_depth = 0;
		l.last_weight = 1;
		if (*s == '[') {
			in_class = 1;
		} else if ((*s == '(' || *s == ')') && re_group(&l, s, why) < 0) {
			return -1;
		} else if (*s == '\\' && s[1]) {
			if ((r = re_escape(b, s, why)) < 0)
				return -1;
			s += r - 1;
			continue;
		}
		buf_putc(b, *s);
	}
	return 0;
}

int compile_re(regex_t *re, const char *src, int cflags, const char **why)
{
	struct buf b;
	int rc;
	if (strlen(src) > RE_MAX_LEN) {
		*why = "regular expression longer than 1024 bytes";
		return -1;
	}
	buf_init(&b, 0);
	buf_puts(&b, "^(");
	if (re_translate(&b, src, why) < 0) {
		buf_free(&b);
		return -1;
	}
	buf_puts(&b, ")$");
	buf_putc(&b, '\0');
	rc = regcomp(re, b.data, cflags);
	buf_free(&b);
	if (rc) {
		*why = "invalid regular expression";
		return -1;
	}
	return 0;
}

/* Go's regexp.Expand, which PromQL's label_replace uses: $$ is a '$'; $name or ${name} where name
 * is the longest run of [A-Za-z0-9_]; an all-digit name (no leading zero) is a group number, any
 * other name or an unmatched group expands to nothing; a malformed '$' stays literal. Group k of the
 * user's regex is group k+1 of ours (compile_re wraps it in a group). */
void expand_template(struct buf *b, const char *t, const char *sv, const regmatch_t *m, size_t ngroups)
{
	while (*t) {
		if (*t != '$') {
			buf_putc(b, *t++);
			continue;
		}
		if (t[1] == '$') {
			buf_putc(b, '$');
			t += 2;
			continue;
		}
		const char *name = t + 1, *end;
		int braces = *name == '{';
		if (braces)
			name++;
		end = name;
		while ((*end >= 'a' && *end <= 'z') || (*end >= 'A' && *end <= 'Z') || (*end >= '0' && *end <= '9') || *end == '_')
			end++;
		if (end == name || (braces && *end != '}')) {
			buf_putc(b, *t++); /* malformed: literal '$' */
			continue;
		}
		long num = -1;
		if (!(end - name > 1 && name[0] == '0')) {
			num = 0;
			for (const char *q = name; q < end && num >= 0; q++)
				num = (*q >= '0' && *q <= '9' && num < 100000000) ? num * 10 + (*q - '0') : -1;
		}
		if (num >= 0 && (size_t)num + 1 < ngroups && m[num + 1].rm_so >= 0)
			buf_append(b, sv + m[num + 1].rm_so, (size_t)(m[num + 1].rm_eo - m[num + 1].rm_so));
		t = end + braces;
	}
}

