/* test_hmap.c: the one hash table (src/hmap.c): finding what was put among entries of the same
 * hash (every key forced to collide), growth from empty through many doublings with every entry
 * still found, a clear that forgets every entry, a free that leaves the map usable, neighbouring
 * hashes kept apart, hmap_reset's sizing and reuse, a map in the caller's slots (hmap_init_in), and
 * hmap_hash (equal bytes hash equal, the empty key, different keys differ). */
#include "testutil.h"

#include <stdio.h>
#include <string.h>

#include "hmap.h"

/* The index of key among keys[0..n) through m, hashed with hash(), or HMAP_NONE. */
static size_t find(const struct hmap *m, char keys[][16], const char *key, uint32_t hash)
{
	struct hmap_iter it = hmap_iter(m, hash);
	for (size_t i; (i = hmap_next(&it)) != HMAP_NONE;)
		if (!strcmp(keys[i], key))
			return i;
	return HMAP_NONE;
}

static char keys[5000][16];

static void test_empty(void **state)
{
	(void)state;
	struct hmap m = { 0 };
	assert_int_equal(find(&m, keys, "x", 7), HMAP_NONE);
	hmap_free(&m);
	assert_null(m.slot);
}

/* Every key of one hash: each found by comparing, the missing one not. */
static void test_collisions(void **state)
{
	(void)state;
	struct hmap m = { 0 };
	for (size_t i = 0; i < 100; i++) {
		snprintf(keys[i], sizeof(keys[i]), "k%zu", i);
		hmap_put(&m, 42, i);
	}
	for (size_t i = 0; i < 100; i++)
		assert_int_equal(find(&m, keys, keys[i], 42), i);
	assert_int_equal(find(&m, keys, "k100", 42), HMAP_NONE);
	assert_int_equal(find(&m, keys, "k1", 43), HMAP_NONE); /* another hash: not a candidate */
	/* the iterator gives every entry of the hash once */
	struct hmap_iter it = hmap_iter(&m, 42);
	size_t seen = 0, sum = 0;
	for (size_t i; (i = hmap_next(&it)) != HMAP_NONE; seen++)
		sum += i;
	assert_int_equal(seen, 100);
	assert_int_equal(sum, 99 * 100 / 2);
	hmap_free(&m);
}

/* From empty to 5000 entries: the table doubles many times, stays at most half full, and finds
 * every entry after each growth. */
static void test_growth(void **state)
{
	(void)state;
	struct hmap m = { 0 };
	size_t grew = 0, last = 0;
	for (size_t i = 0; i < 5000; i++) {
		snprintf(keys[i], sizeof(keys[i]), "key-%zu", i);
		hmap_put(&m, hmap_hash(keys[i], strlen(keys[i])), i);
		if (m.mask != last) {
			grew++;
			last = m.mask;
			for (size_t k = 0; k <= i; k++)
				assert_int_equal(find(&m, keys, keys[k], hmap_hash(keys[k], strlen(keys[k]))), k);
		}
		assert_true(2 * m.n <= m.mask + 1);
	}
	assert_int_equal(m.n, 5000);
	assert_true(grew >= 9); /* 16 slots to 16384 */
	assert_int_equal(find(&m, keys, "key-5000", hmap_hash("key-5000", 8)), HMAP_NONE);
	size_t mask = m.mask;
	hmap_clear(&m);
	assert_int_equal(m.n, 0);
	assert_int_equal(m.mask, mask);
	assert_int_equal(find(&m, keys, keys[7], hmap_hash(keys[7], strlen(keys[7]))), HMAP_NONE);
	hmap_put(&m, hmap_hash(keys[7], strlen(keys[7])), 7);
	assert_int_equal(find(&m, keys, keys[7], hmap_hash(keys[7], strlen(keys[7]))), 7);
	hmap_free(&m);
	hmap_put(&m, 1, 0); /* usable again after hmap_free */
	assert_int_equal(m.n, 1);
	hmap_free(&m);
}

/* Two hashes in neighbouring slots (1 and 0xdeadbee1 both start at slot 1 of 16): each found under
 * its own hash only, with its own index. */
static void test_neighbours(void **state)
{
	(void)state;
	struct hmap m = { 0 };
	hmap_put(&m, 0xdeadbee1u, 5);
	hmap_put(&m, 0x00000001u, 6);
	struct hmap_iter it = hmap_iter(&m, 0xdeadbee1u);
	assert_int_equal(hmap_next(&it), 5);
	assert_int_equal(hmap_next(&it), HMAP_NONE);
	it = hmap_iter(&m, 1);
	assert_int_equal(hmap_next(&it), 6);
	assert_int_equal(hmap_next(&it), HMAP_NONE);
	hmap_free(&m);
}

/* hmap_reset sizes for n and reuses the memory; hmap_init_in works in the caller's slots, full at
 * n entries without growing. */
static void test_reset_and_fixed(void **state)
{
	(void)state;
	struct hmap m = { 0 };
	hmap_reset(&m, 1000);
	assert_int_equal(m.mask + 1, 2048);
	const uint64_t *mem = m.slot;
	for (size_t i = 0; i < 1000; i++)
		hmap_put(&m, (uint32_t)i * 7, i);
	assert_ptr_equal(m.slot, mem); /* room for 1000: no growth */
	hmap_reset(&m, 10);
	assert_int_equal(m.mask + 1, 32);
	assert_ptr_equal(m.slot, mem); /* smaller: the same memory, a part of it */
	struct hmap_iter it = hmap_iter(&m, 7);
	assert_int_equal(hmap_next(&it), HMAP_NONE);
	hmap_free(&m);

	assert_int_equal(hmap_slots_for(0), 16);
	assert_int_equal(hmap_slots_for(9), 32);
	uint64_t slot[32];
	memset(slot, 0xab, sizeof(slot)); /* any contents */
	struct hmap f;
	hmap_init_in(&f, slot, 9);
	for (size_t i = 0; i < 9; i++)
		hmap_put(&f, 3, i); /* all collide */
	assert_ptr_equal(f.slot, slot);
	it = hmap_iter(&f, 3);
	size_t n = 0;
	while (hmap_next(&it) != HMAP_NONE)
		n++;
	assert_int_equal(n, 9);
}

static void test_hash(void **state)
{
	(void)state;
	assert_int_equal(hmap_hash("abc", 3), hmap_hash("abcd", 3));
	assert_int_not_equal(hmap_hash("abc", 3), hmap_hash("abd", 3));
	assert_int_not_equal(hmap_hash("", 0), hmap_hash("\0", 1));
	/* FNV-1a 64 of "a" is 0xaf63dc4c8601ec8c; folded: the two halves xored */
	assert_int_equal(hmap_hash("a", 1), 0xaf63dc4cu ^ 0x8601ec8cu);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_empty),
		cmocka_unit_test(test_collisions),
		cmocka_unit_test(test_growth),
		cmocka_unit_test(test_neighbours),
		cmocka_unit_test(test_reset_and_fixed),
		cmocka_unit_test(test_hash),
	};
	return cmocka_run_group_tests_name("hmap", tests, NULL, NULL);
}
