/*
 * The --by views and their sort keys as data (analyzer/views/view.h, views.c,
 * tables.c): every key row names its --sort value, ranks by a column its
 * view's table has, and sends --diff to a key of its own; a --by device
 * table of three devices built by hand ranks as each key says; and --by
 * category ranks the hand-built training step (scenarios.c sc_train) as
 * each key says.
 */
#include "category.h"
#include "tables.h"
#include "view.h"

#include "../check.h"

static int has_col(const gma_table *t, const char *key)
{
    for (size_t c = 0; c < t->ncols; c++)
        if (strcmp(t->cols[c].key, key) == 0)
            return 1;
    return 0;
}

/* Every view's key table, against the columns of its (empty) table. */
static void test_key_tables(void)
{
    for (unsigned b = 0; b < GMA_BY_COUNT_; b++) {
        const gma_view *v = gma_view_of((gma_by)b);
        tc_context("--by %s", gma_by_names[b]);
        CHECK_STR(v->name, gma_by_names[b]);
        gma_opts o;
        memset(&o, 0, sizeof o);
        o.by = (gma_by)b;
        o.window = o.step = o.device = -1;
        gma_replay r;
        REQUIRE(gma_replay_open(&r, &o, "none") == 0);
        gma_table t;
        REQUIRE(v->build(&r, &t, 0) == 0);
        CHECK(t.nrows == 0);
        CHECK(v->names[0] && has_col(&t, v->names[0]), " name column %s", v->names[0]);
        CHECK(!v->names[1] || has_col(&t, v->names[1]));
        for (unsigned s = 0; s < GMA_SORT_COUNT_; s++) {
            const gma_sortkey *k = &v->keys[s];
            tc_context("--by %s --sort %s", gma_by_names[b], gma_sort_names[s]);
            CHECK_STR(k->name, gma_sort_names[s]);
            CHECK(k->value != NULL);
            CHECK(gma_sortkey_of((gma_by)b, (gma_sort)s) == k);
            /* --diff compares a key that compares itself, and says what it is */
            CHECK((unsigned)k->diff < GMA_SORT_COUNT_);
            CHECK(v->keys[k->diff].diff == k->diff);
            CHECK(v->keys[k->diff].diff_header != NULL);
            if (s == GMA_SORT_HELD)
                continue; /* --diff only */
            CHECK(k->header != NULL);
            if (k->compare != GMA_ORDER_NAME)
                CHECK(k->print && has_col(&t, k->print), " column %s", k->print ? k->print : "(none)");
        }
        gma_table_free(&t);
        gma_replay_free(&r);
    }
    tc_context(NULL);
    /* out of range: the kernel view, the mem key */
    CHECK(gma_view_of(GMA_BY_COUNT_) == &gma_view_kernel);
    CHECK(gma_sortkey_of(GMA_BY_DEVICE, GMA_SORT_COUNT_) == &gma_view_device.keys[GMA_SORT_MEM]);
    /* --sort name is no metric: --diff compares bytes allocated */
    CHECK(gma_view_kernel.keys[GMA_SORT_NAME].diff == GMA_SORT_ALLOC);
    /* a step's time is its order in the table, its duration in --diff */
    CHECK(gma_view_step.keys[GMA_SORT_TIME].compare == GMA_ORDER_ASC);
    CHECK(gma_view_step.keys[GMA_SORT_TIME].metric != NULL);
    /* only an allocation's lifetime waits for its end */
    for (unsigned b = 0; b < GMA_BY_COUNT_; b++)
        for (unsigned s = 0; s < GMA_SORT_COUNT_; s++)
            CHECK(gma_view_of((gma_by)b)->keys[s].at_end == (b == GMA_BY_ALLOC && s == GMA_SORT_TIME));
}

static void test_merge_rules(void)
{
    gma_col peak = { "peak", "peak_bytes", GMA_CT_BYTES, 1, 0 }, calls = { "calls", "calls", GMA_CT_U64, 1, 0 };
    gma_col phase = { "phase", "phase", GMA_CT_STR, 1, 0 }, start = { "start", "start_ns", GMA_CT_TS, 1, 0 };
    CHECK(gma_view_merge_rule(&gma_view_kernel, &peak) == GMA_MERGE_MAX);
    CHECK(gma_view_merge_rule(&gma_view_kernel, &calls) == GMA_MERGE_SUM);
    CHECK(gma_view_merge_rule(&gma_view_step, &phase) == GMA_MERGE_FIRST);
    CHECK(gma_view_merge_rule(&gma_view_step, &start) == GMA_MERGE_MIN);
    /* not listed: text first, numbers summed */
    gma_col text = { "x", "x", GMA_CT_STR, 1, 0 };
    CHECK(gma_view_merge_rule(&gma_view_tag, &text) == GMA_MERGE_FIRST);
}

/* Three devices, every number set here:
 *   dev  peak  allocated  kernels  kernel ns
 *    0    300     100        5        70
 *    1    100     300        9        10
 *    2    200     200        1        90
 * mem and peak rank by the peak (0, 2, 1), alloc by bytes allocated
 * (1, 2, 0), count by kernels (1, 0, 2), time by kernel time (2, 0, 1),
 * name by device (0, 1, 2). */
static void test_device_ranking(void)
{
    static const struct {
        gma_sort s;
        unsigned order[3];
        const char *header;
    } want[] = {
        { GMA_SORT_MEM, { 0, 2, 1 }, "peak" },          { GMA_SORT_PEAK, { 0, 2, 1 }, "peak" },
        { GMA_SORT_ALLOC, { 1, 2, 0 }, "bytes allocated" }, { GMA_SORT_COUNT, { 1, 0, 2 }, "kernels" },
        { GMA_SORT_TIME, { 2, 0, 1 }, "kernel time" },   { GMA_SORT_NAME, { 0, 1, 2 }, "device" },
    };
    static const uint64_t peak[3] = { 300, 100, 200 }, alloc[3] = { 100, 300, 200 }, kern[3] = { 5, 9, 1 },
                          ns[3] = { 70, 10, 90 };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        tc_context("--sort %s", gma_sort_names[want[i].s]);
        gma_opts o;
        memset(&o, 0, sizeof o);
        o.by = GMA_BY_DEVICE;
        o.sort = want[i].s;
        o.window = o.step = o.device = -1;
        gma_replay r;
        REQUIRE(gma_replay_open(&r, &o, "none") == 0);
        for (unsigned d = 0; d < 3; d++) {
            r.dev[d].present = 1;
            r.dev[d].has_peak = 1;
            r.dev[d].peak = peak[d];
            r.dev[d].alloc_bytes = alloc[d];
            r.dev[d].kernels = kern[d];
            r.dev[d].kernel_ns = ns[d];
        }
        gma_table t;
        REQUIRE(gma_table_build(&r, &t, 0) == 0);
        CHECK_STR(t.sort_note, want[i].header);
        REQUIRE(t.nrows == 3);
        for (size_t j = 0; j < 3; j++)
            CHECK_EQ_U64(gma_table_cell(&t, j, 0)->v.u, want[i].order[j]);
        gma_table_free(&t);
        /* --top 1 keeps the first, and counts them all */
        REQUIRE(gma_table_build(&r, &t, 1) == 0);
        CHECK(t.nrows == 1 && t.total_rows == 3);
        CHECK_EQ_U64(gma_table_cell(&t, 0, 0)->v.u, want[i].order[0]);
        gma_table_free(&t);
        gma_replay_free(&r);
    }
    tc_context(NULL);
}

/* The categories of train.gmt's dev0 in table order. */
static void check_order(const gma_table *t, const char *const *want, size_t n)
{
    REQUIRE(t->nrows == n);
    for (size_t i = 0; i < n; i++)
        CHECK_STR(gma_cell_text(t, gma_table_cell(t, i, 1)), want[i]);
}

/* sc_train's dev0 (scenarios.c), in MiB at the peak / allocated / count:
 *   parameter 8/8/1, gradient 8/16/2, optimizer state 16/16/2,
 *   activation 4/8/2, temporary 0/7/3, input 1/2/2, workspace 2/2/1,
 *   other 2/2/2, allocator cache 0, outside the allocator 0 (no counts).
 * Ties keep the vocabulary's order. */
static void test_category_ranking(const char *dir)
{
    static const char *const natural[] = { "parameter", "gradient", "optimizer state", "activation",
                                           "temporary", "input", "workspace", "other",
                                           "allocator cache", "outside the allocator" };
    static const char *const by_peak[] = { "optimizer state", "parameter", "gradient", "activation",
                                           "workspace", "other", "input", "temporary",
                                           "allocator cache", "outside the allocator" };
    static const char *const by_alloc[] = { "gradient", "optimizer state", "parameter", "activation",
                                            "temporary", "input", "workspace", "other",
                                            "allocator cache", "outside the allocator" };
    static const char *const by_count[] = { "temporary", "gradient", "optimizer state", "activation",
                                            "input", "other", "parameter", "workspace",
                                            "allocator cache", "outside the allocator" };
    static const struct {
        int given;
        gma_sort s;
        const char *const *order;
        const char *header;
    } want[] = {
        { 0, GMA_SORT_MEM, natural, "category" },
        { 1, GMA_SORT_NAME, natural, "category" },
        { 1, GMA_SORT_MEM, by_peak, "bytes at the device's peak" },
        { 1, GMA_SORT_PEAK, by_peak, "bytes at the device's peak" },
        { 1, GMA_SORT_ALLOC, by_alloc, "bytes allocated" },
        { 1, GMA_SORT_COUNT, by_count, "allocations" },
    };
    char path[4200];
    snprintf(path, sizeof path, "%s/train.gmt", dir);
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        tc_context("--by category --sort %s%s", gma_sort_names[want[i].s], want[i].given ? "" : " (not given)");
        gma_opts o;
        memset(&o, 0, sizeof o);
        o.by = GMA_BY_CATEGORY;
        o.sort = want[i].s;
        o.sort_given = want[i].given;
        o.top = 3; /* a fixed set: --top does not cut it */
        o.window = o.step = o.device = -1;
        static gma_replay r;
        char msg[600];
        REQUIRE(gma_replay_open(&r, &o, path) == 0);
        REQUIRE(gma_category_open(&r) == 0);
        REQUIRE(gma_replay_read(&r, msg, sizeof msg) == 0, "%s", msg);
        REQUIRE(gma_category_finish(&r) == 0);
        gma_view_report v;
        REQUIRE(gma_view_report_build(&v, gma_view_of(GMA_BY_CATEGORY), &r, NULL) == 0);
        CHECK_STR(v.by, "category");
        CHECK_HAS(v.what, "train.gmt (by category)");
        CHECK(v.nnotes == 0);
        CHECK_STR(v.t.sort_note, want[i].header);
        check_order(&v.t, want[i].order, 10);
        /* the peak's bytes: 8 + 8 + 16 + 4 + 1 + 2 + 2 = 41 MiB */
        uint64_t sum = 0;
        for (size_t j = 0; j < v.t.nrows; j++)
            sum += gma_table_cell(&v.t, j, 2)->v.u;
        CHECK_EQ_U64(sum, 41ull << 20);
        gma_view_report_free(&v);
        if (i == 0) {
            /* --diff with itself: every change 0, no category separates them */
            REQUIRE(gma_view_report_build(&v, gma_view_of(GMA_BY_CATEGORY), &r, &r) == 0);
            CHECK_HAS(v.what, "diff by category: ");
            REQUIRE(v.nnotes == 1);
            CHECK_STR(v.notes[0].key, "separates");
            CHECK_STR(v.notes[0].text, "");
            check_order(&v.t, natural, 10);
            for (size_t j = 0; j < v.t.nrows; j++)
                CHECK(gma_table_cell(&v.t, j, 4)->v.i == 0);
            gma_view_report_free(&v);
        }
        gma_replay_free(&r);
    }
    tc_context(NULL);
    /* the view is the report by itself, and compares in its own table */
    CHECK(gma_view_category.alone && gma_view_category.diff_build);
    CHECK(!gma_view_kernel.alone && !gma_view_kernel.diff_build);
}

int main(int argc, char **argv)
{
    test_key_tables();
    test_merge_rules();
    test_device_ranking();
    if (argc > 1)
        test_category_ranking(argv[1]);
    return tc_result("analyzer.unit.views");
}
