/*
 * The module path tree (analyzer/views/modules.c): path depth and ancestors, the
 * ancestors made on the way, forward and backward apart, self and total,
 * and --depth folding, every number worked out here.
 */
#include "modules.h"

#include "../check.h"

static void test_paths(void)
{
    CHECK(gma_mod_depth("", 0) == 0);
    CHECK(gma_mod_depth("GPT", 3) == 1);
    CHECK(gma_mod_depth("GPT.h.3.attn", 12) == 4);
    /* "GPT.h.3.attn": depth 1 "GPT" (3), 2 "GPT.h" (5), 3 "GPT.h.3" (7), 4 and past: whole */
    CHECK_EQ_U64(gma_mod_prefix_len("GPT.h.3.attn", 12, 0), 0);
    CHECK_EQ_U64(gma_mod_prefix_len("GPT.h.3.attn", 12, 1), 3);
    CHECK_EQ_U64(gma_mod_prefix_len("GPT.h.3.attn", 12, 2), 5);
    CHECK_EQ_U64(gma_mod_prefix_len("GPT.h.3.attn", 12, 3), 7);
    CHECK_EQ_U64(gma_mod_prefix_len("GPT.h.3.attn", 12, 4), 12);
    CHECK_EQ_U64(gma_mod_prefix_len("GPT.h.3.attn", 12, 9), 12);
}

static uint32_t intern(gma_mtree *t, const char *p, int bwd) { return gma_mtree_intern(t, p, strlen(p), bwd); }

static const gma_mrow *row_of(const gma_mrow *rows, size_t n, uint32_t node)
{
    for (size_t i = 0; i < n; i++)
        if (rows[i].node == node)
            return &rows[i];
    return NULL;
}

static void test_tree(void)
{
    gma_mtree t;
    REQUIRE(gma_mtree_init(&t) == 0, "init");
    /* a leaf first: its ancestors GPT and GPT.h are made before it */
    uint32_t attn = intern(&t, "GPT.h.0.attn", 0);
    CHECK(attn == 4, "attn is node %u", attn); /* 0 (no module), 1 GPT, 2 GPT.h, 3 GPT.h.0 */
    uint32_t gpt = intern(&t, "GPT", 0), h0 = intern(&t, "GPT.h.0", 0), h = intern(&t, "GPT.h", 0);
    CHECK(gpt == 1 && h == 2 && h0 == 3);
    uint32_t mlp = intern(&t, "GPT.h.0.mlp", 0), h1 = intern(&t, "GPT.h.1", 0);
    uint32_t attn_b = intern(&t, "GPT.h.0.attn", 1);
    CHECK(attn_b != attn, "backward is a tree of its own");
    CHECK(gma_mtree_node(&t, attn_b)->bwd && gma_mtree_node(&t, attn_b)->depth == 4);
    CHECK(gma_mtree_node(&t, gma_mtree_node(&t, attn_b)->parent - 1)->bwd, "a backward node's parent is backward");
    /* self: GPT 1 (called once), GPT.h.0 2, attn 8 (5 freed, 4 at the peak), mlp 16 (0 at the
     * peak), GPT.h.1 32 (32 at the peak), attn backward 64 (64 at the peak), (no module) 128;
     * parameters held: attn 3 (of its 4 at the peak), GPT.h.1 20 */
    gma_mtree_node(&t, gpt)->calls = 1;
    gma_mtree_node(&t, gpt)->self = (gma_mstat){ 1, 1, 0, 0, 1, 0 };
    gma_mtree_node(&t, h0)->self = (gma_mstat){ 2, 1, 0, 0, 0, 0 };
    gma_mtree_node(&t, attn)->self = (gma_mstat){ 8, 2, 5, 1, 4, 3 };
    gma_mtree_node(&t, mlp)->self = (gma_mstat){ 16, 1, 16, 1, 0, 0 };
    gma_mtree_node(&t, h1)->self = (gma_mstat){ 32, 1, 0, 0, 32, 20 };
    gma_mtree_node(&t, attn_b)->self = (gma_mstat){ 64, 1, 0, 0, 64, 0 };
    gma_mtree_node(&t, 0)->self = (gma_mstat){ 128, 1, 0, 0, 128, 0 };

    gma_mrow *rows;
    size_t n;
    REQUIRE(gma_mtree_rows(&t, 0, &rows, &n) == 0, "rows");
    /* every node totals something: 0, GPT, GPT.h, GPT.h.0, attn, mlp, GPT.h.1 and the 4 backward */
    CHECK_EQ_U64(n, 11);
    const gma_mrow *w = row_of(rows, n, h0);
    /* GPT.h.0 total = 2 + 8 + 16 = 26 allocated, 21 freed, 4 at the peak, 4 allocations */
    CHECK(w && w->total.alloc_bytes == 26 && w->total.free_bytes == 21 && w->total.peak == 4 &&
          w->total.alloc_count == 4 && w->self.alloc_bytes == 2 && w->total.params == 3 && w->self.params == 0);
    w = row_of(rows, n, h);
    /* GPT.h: 26 + 32 = 58, at the peak 36; self 0, never called */
    CHECK(w && w->total.alloc_bytes == 58 && w->total.peak == 36 && w->self.alloc_bytes == 0 && w->calls == 0);
    w = row_of(rows, n, gpt);
    CHECK(w && w->total.alloc_bytes == 59 && w->total.peak == 37 && w->calls == 1 && w->total.params == 23);
    /* the backward root totals only backward: 64 */
    w = row_of(rows, n, gma_mtree_node(&t, attn_b)->parent - 1);
    CHECK(w && w->total.alloc_bytes == 64);
    w = row_of(rows, n, 0);
    CHECK(w && w->total.alloc_bytes == 128 && w->self.peak == 128);
    free(rows);

    /* --depth 2: GPT.h.0, attn, mlp and GPT.h.1 fold into GPT.h, whose self becomes its total */
    REQUIRE(gma_mtree_rows(&t, 2, &rows, &n) == 0, "rows at depth 2");
    CHECK_EQ_U64(n, 5); /* (no module), GPT, GPT.h, and the backward GPT, GPT.h */
    CHECK(!row_of(rows, n, h0) && !row_of(rows, n, attn) && !row_of(rows, n, h1));
    w = row_of(rows, n, h);
    CHECK(w && w->self.alloc_bytes == 58 && w->total.alloc_bytes == 58 && w->self.peak == 36 &&
          w->self.free_bytes == 21 && w->self.alloc_count == 5 && w->calls == 0 && w->self.params == 23);
    w = row_of(rows, n, gpt);
    CHECK(w && w->self.alloc_bytes == 1 && w->total.alloc_bytes == 59);
    free(rows);

    /* --depth 1: everything in GPT; the backward root takes its tree */
    REQUIRE(gma_mtree_rows(&t, 1, &rows, &n) == 0, "rows at depth 1");
    CHECK_EQ_U64(n, 3);
    w = row_of(rows, n, gpt);
    CHECK(w && w->self.alloc_bytes == 59 && w->self.peak == 37);
    free(rows);
    gma_mtree_free(&t);
}

int main(void)
{
    test_paths();
    test_tree();
    return tc_result("analyzer.unit.modules");
}
