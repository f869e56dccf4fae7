/* slurmrestd_doc.c: see slurmrestd_int.h. What every part of slurmrestd's reader shares about the
 * document being read: its first problem (rest_fail, which stops the parse) and the escaping of
 * untrusted bytes for it, and what the document listed (node names, share rows, job ids, diag paths,
 * licenses), each refused the second time; the record's strings (rest_keep_str). The walk (slurmrestd.c), the records (slurmrestd_rec.c,
 * slurmrestd_nodepart.c, slurmrestd_diaglist.c) call it; it calls none of them. */
#include "slurmrestd_int.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* ---- the document's first problem ---- */

int rest_fail(struct rest *st, size_t count, const char *fmt, ...)
{
	if (!st->nbad) {
		va_list ap;
		st->why_at = st->ended ? st->jf.off : jsonfeed_offset(&st->jf);
		va_start(ap, fmt);
		vsnprintf(st->why, sizeof(st->why), fmt, ap);
		va_end(ap);
	}
	st->nbad += count;
	if (!st->failed) {
		st->failed = 1;
		jsonfeed_fail(&st->jf, st->why);
	}
	return 0;
}

const char *rest_esc(char *out, size_t len, const char *s, size_t n)
{
	size_t k = n < len - 1 ? n : len - 1;
	while (k < n && k && ((unsigned char)s[k] & 0xc0) == 0x80) /* cut at a character's start */
		k--;
	for (size_t i = 0; i < k; i++)
		out[i] = (unsigned char)s[i] < 0x20 || s[i] == 0x7f ? '?' : s[i];
	out[k] = '\0';
	return out;
}

/* ---- strings of the record ---- */

int rest_keep_str(struct rest *st, struct str *s, const unsigned char *p, size_t n)
{
	if (n > REC_MAX - st->slen)
		return rest_fail(st, 1, "a record of '%s' holds more than %u bytes of strings", docs[st->doc].what,
				 REC_MAX);
	memcpy(st->scratch + st->slen, p, n);
	s->off = (uint32_t)st->slen;
	s->len = (uint32_t)n;
	s->set = 1;
	st->slen += n;
	return 1;
}

/* 1 when the bytes were listed before in this document, else 0 (and they are now). */
int rest_seen_before(struct rest *st, const void *s, size_t n)
{
	uint32_t h = hmap_hash(s, n);
	struct hmap_iter it = hmap_iter(&st->sidx, h);
	for (size_t i; (i = hmap_next(&it)) != HMAP_NONE;)
		if (st->seen[i].n == n && !memcmp(st->seen[i].s, s, n))
			return 1;
	st->seen = xgrow(st->seen, &st->seencap, st->nseen + 1, sizeof(*st->seen));
	st->seen[st->nseen] = (struct seen_ent){ arena_strndup(&st->arena, s, n), (uint32_t)n };
	hmap_put(&st->sidx, h, st->nseen++);
	return 0;
}
