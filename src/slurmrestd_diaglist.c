/* slurmrestd_diaglist.c: slurmrestd's /diag lists of objects (sdiag's RPC statistics):
 * "rpcs_by_message_type": [{"message_type": "REQUEST_NODE_INFO", "count": 23, "total_time": 5219, ...}]
 * becomes one sample per item in slurmrestd_diag_rpcs_by_message_type_count, _total_time... labelled
 * by the item's string members (message_type="REQUEST_NODE_INFO"). An item is read when it closes;
 * its members are kept meanwhile (at most DIAG_ITEM_MAX strings and numbers: the rest are skipped). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "slurmrestd_int.h"
#include "xmalloc.h"

static int name_ok(const char *s, size_t n)
{
	if (!n || (s[0] >= '0' && s[0] <= '9'))
		return 0;
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9') || s[i] == '_'))
			return 0;
	return 1;
}

/* path "list[].member": keep member (a valid name) of the current item; deeper paths are skipped. */
int rest_diag_item_value(struct rest *st, const char *path, int is_str, const unsigned char *s, size_t n, double v)
{
	const char *m = strstr(path, "[].");
	if (!m || m == path || !name_ok(path, (size_t)(m - path)))
		return 1;
	m += 3;
	size_t ml = strlen(m);
	if (ml >= KEY_MAX || !name_ok(m, ml))
		return 1;
	if (!st->item)
		st->item = xcalloc(1, sizeof(*st->item));
	struct diag_item *it = st->item;
	unsigned *cnt = is_str ? &it->nstr : &it->nnum;
	struct diag_member *arr = is_str ? it->str : it->num;
	for (unsigned i = 0; i < *cnt; i++)
		if (arr[i].klen == ml && !memcmp(arr[i].key, m, ml))
			return rest_fail(st, 1, "'statistics.%s' given twice", path);
	if (*cnt >= DIAG_ITEM_MAX)
		return 1;
	struct diag_member *d = &arr[(*cnt)++];
	memcpy(d->key, m, ml);
	d->klen = (unsigned char)ml;
	d->v = v;
	return is_str ? rest_keep_str(st, &d->s, s, n) : 1;
}

static int by_key(const void *a, const void *b)
{
	const struct label *x = a, *y = b;
	return strcmp(x->name, y->name);
}

/* The item closes: its numbers into slurmrestd_diag_<list>_<member>{<its strings>}; an item whose
 * strings are another's of the same list makes the answer unusable. */
int rest_diag_item_end(struct rest *st)
{
	struct diag_item *it = st->item;
	const struct level *list = &st->lv[st->rd - 1];
	if (!it || list->klen >= KEY_MAX)
		goto done;
	struct label l[DIAG_ITEM_MAX];
	char key[DIAG_ITEM_MAX][KEY_MAX + 1];
	char seen[KEY_MAX + 2 + DIAG_ITEM_MAX * 96];
	size_t sl = (size_t)snprintf(seen, sizeof(seen), "%.*s", (int)list->klen, list->key);
	unsigned nl = 0;
	for (unsigned i = 0; i < it->nstr; i++) {
		memcpy(key[i], it->str[i].key, it->str[i].klen);
		key[i][it->str[i].klen] = '\0';
		l[nl++] = (struct label){ key[i], rest_sp(st, &it->str[i].s), it->str[i].klen, it->str[i].s.len };
	}
	qsort(l, nl, sizeof(l[0]), by_key);
	for (unsigned i = 0; i < nl && sl < sizeof(seen); i++)
		sl += (size_t)snprintf(seen + sl, sizeof(seen) - sl, "\x1f%.*s", (int)(l[i].vlen < 80 ? l[i].vlen : 80), l[i].value);
	if (sl >= sizeof(seen))
		sl = sizeof(seen) - 1;
	if (rest_seen_before(st, seen, sl)) {
		char esc[48];
		return rest_fail(st, 1, "'statistics.%.*s' lists an item twice (%s)", (int)list->klen, list->key,
				 rest_esc(esc, sizeof(esc), nl ? l[0].value : "", nl ? l[0].vlen : 0));
	}
	for (unsigned i = 0; i < it->nnum; i++) {
		char fam[sizeof("slurmrestd_diag_") + 2 * KEY_MAX + 2];
		int fl = snprintf(fam, sizeof(fam), "slurmrestd_diag_%.*s_%.*s", (int)list->klen, list->key,
				  (int)it->num[i].klen, it->num[i].key);
		if (fl > 0 && (size_t)fl < sizeof(fam) && !isnan(it->num[i].v))
			expo_add(st->e, fam, (size_t)fl, l, nl, it->num[i].v);
	}
done:
	if (it)
		memset(it, 0, sizeof(*it));
	st->slen = 0;
	return 1;
}
