/* test_last_answer.c: the scraper's last rendered answer, which the status page reads (scrape.h's
 * scraper_status): before any scrape there is none; after one, the page's view is that answer's own
 * result record (the same pointer, not a copy) with the table it was rendered with, and it stays
 * readable after a reload replaced that table, and says per source from where it came and the
 * fidelity of the rows it fed; the next render replaces it. The budget of answers
 * only connections hold (--web.max-held-bytes) does not count the last answer while the page's
 * reference is the only one left; no scrape is refused for that budget. */
#include "testutil.h"

#include "answer.h"
#include "render.h"
#include "scrape.h"

#define S03 "tests/fixtures/slurm-25.11/03-drain-down-cancel"

static struct scraper *replay_scraper(size_t max_held)
{
	struct scraper_config cfg = { .replay_dir = S03, .max_held = max_held,
				      .upstream[UPSTREAM_SLURMCTLD] = { .max_body = 1u << 28 } };
	return scraper_new(&cfg, tu_load_shipped());
}

/* The view is the last answer's record itself, read with its own table after a reload. */
static void test_view_is_last_record(void **state)
{
	(void)state;
	struct scraper *sc = replay_scraper(0);
	struct scraper_status st;
	scraper_status(sc, &st);
	assert_null(st.res); /* no scrape yet */
	scraper_status_put(sc, &st);

	struct answer *a = scraper_answer(sc, 5);
	assert_int_equal(a->status, 200);
	scraper_status(sc, &st);
	assert_ptr_equal(st.res, a->result);
	const struct mapping *m = st.res->m;
	assert_non_null(m);
	scraper_set_mapping(sc, tu_load_shipped()); /* a reload: the record's table stays readable */
	assert_ptr_equal(st.res->m, m);
	assert_true(st.res->nrows == m->nrows && m->nrows > 0);
	assert_non_null(m->rows[m->nrows - 1].name);
	assert_non_null(st.res->nodes); /* the page's node view is in the record */
	/* per source: from where (a replay: no controller) and the fidelity of the rows it fed */
	size_t fed[SRC_COUNT][FID_COUNT] = { { 0 } };
	for (size_t i = 0; i < st.res->nrows; i++) {
		const struct render_row *o = &st.res->rows[i];
		for (int id = 0; o->status == ROW_OK && !o->output_full && id < SRC_COUNT; id++)
			fed[id][o->fidelity] += (m->rows[i].forms[o->form].sources >> id) & 1;
	}
	for (int id = 0; id < SRC_COUNT; id++) {
		assert_int_equal(st.res->src[id].controller, -1);
		assert_memory_equal(st.res->src[id].fed, fed[id], sizeof(fed[id]));
		assert_true(st.res->src[id].given || !fed[id][FID_EXACT]);
	}
	assert_true(st.res->src[SRC_NODES].fed[FID_EXACT] > 0 && st.res->src[SRC_PARTITIONS].fed[FID_EXACT] > 0);
	scraper_status_put(sc, &st);
	assert_null(st.res);

	struct answer *b = scraper_answer(sc, 5); /* a new table: a new render */
	assert_ptr_not_equal(b, a);
	scraper_status(sc, &st);
	assert_ptr_equal(st.res, b->result);
	assert_ptr_not_equal(st.res->m, m);
	scraper_status_put(sc, &st);
	answer_unref(a);
	answer_unref(b);
	scraper_free(sc);
}

/* With a budget smaller than one answer, renders go on while no connection holds an old answer
 * (the status page's reference to the last one does not count); an old answer that is held (here by
 * no registered connection, so nothing can be closed) does not stop them either: no scrape is ever
 * refused for the budget, and the held answer stays readable. */
static void test_held_budget_skips_last(void **state)
{
	(void)state;
	struct scraper *sc = replay_scraper(1);
	struct buf out;
	buf_init(&out, 0);
	for (int k = 0; k < 3; k++) {
		scraper_set_mapping(sc, tu_load_shipped()); /* each scrape renders anew */
		out.len = 0;
		assert_int_equal(scraper_run(sc, 5, &out), 200);
	}
	struct answer *held = scraper_answer(sc, 5); /* a connection that does not read */
	scraper_set_mapping(sc, tu_load_shipped());
	out.len = 0;
	assert_int_equal(scraper_run(sc, 5, &out), 200); /* held retired and counted, over the budget: served */
	buf_putc(&out, '\0');
	assert_null(strstr(out.data, "max-held-bytes"));
	assert_int_equal(held->status, 200);
	assert_non_null(strstr(held->body, "slurm_"));
	answer_unref(held); /* the connection is gone */
	out.len = 0;
	assert_int_equal(scraper_run(sc, 5, &out), 200);
	buf_free(&out);
	scraper_free(sc);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_view_is_last_record),
		cmocka_unit_test(test_held_budget_skips_last),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
