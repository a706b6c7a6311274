/* The category rules (category.h) on facts written by hand, and the range
 * names they read. */
#include <string.h>

#include "category.h"

#include "../check.h"

static unsigned cls(const char *name, uint64_t kind) { return gma_cat_range_class(name, strlen(name), kind); }

static void test_names(void)
{
    CHECK_EQ_U64(cls("aten::mm", GMT_RANGE_OP), GMA_RC_OP | GMA_RC_MATMUL);
    CHECK_EQ_U64(cls("aten::addmm, seq = 12", 0), GMA_RC_OP | GMA_RC_MATMUL); /* emit_nvtx */
    CHECK_EQ_U64(cls("MmBackward0", 0), GMA_RC_OP | GMA_RC_BWD);
    CHECK_EQ_U64(cls("autograd::engine::evaluate_function: torch::autograd::AccumulateGrad", 0), GMA_RC_OP | GMA_RC_BWD);
    CHECK_EQ_U64(cls("Optimizer.step#AdamW.step", 0), GMA_RC_OP | GMA_RC_OPT);
    CHECK_EQ_U64(cls("Optimizer.zero_grad#AdamW.zero_grad", 0), GMA_RC_OP | GMA_RC_ZERO);
    CHECK_EQ_U64(cls("aten::_to_copy", 0), GMA_RC_OP | GMA_RC_COPY);
    CHECK_EQ_U64(cls("GPT.h.3.attn", GMT_RANGE_MODULE), GMA_RC_MODULE);
    CHECK_EQ_U64(cls("GPT.h.3.attn", GMT_RANGE_MODULE_BWD), GMA_RC_BWD);
    CHECK_EQ_U64(cls("forward", GMT_RANGE_NVTX), 0);    /* a user's NVTX range is no op */
    CHECK_EQ_U64(cls("aten::mmx", GMT_RANGE_OP), GMA_RC_OP); /* not a matmul */
}

static void test_rules(void)
{
    const unsigned FWD = GMA_RC_OP | GMA_RC_MODULE, BWD = GMA_RC_OP | GMA_RC_BWD;
    gma_cat_facts f;
    /* weights: baseline and kept, or made before training and kept */
    f = (gma_cat_facts){ .baseline = 1, .alive_end = 1 };
    CHECK_EQ_U64(gma_cat_classify(&f), GMA_CAT_PARAMETER);
    f = (gma_cat_facts){ .before_train = 1, .alive_end = 1 };
    CHECK_EQ_U64(gma_cat_classify(&f), GMA_CAT_PARAMETER);
    /* a matmul's second block kept to the end: cuBLAS's workspace; its first (the output) is not */
    f = (gma_cat_facts){ .a = FWD | GMA_RC_MATMUL, .alive_end = 1, .mm_later = 1 };
    CHECK_EQ_U64(gma_cat_classify(&f), GMA_CAT_WORKSPACE);
    f.mm_later = 0;
    CHECK_EQ_U64(gma_cat_classify(&f), GMA_CAT_OTHER);
    /* Adam's state: made in the step, kept; a block freed in the step is a temporary */
    f = (gma_cat_facts){ .a = GMA_RC_OP | GMA_RC_OPT, .alive_end = 1 };
    CHECK_EQ_U64(gma_cat_classify(&f), GMA_CAT_OPTIMIZER);
    f = (gma_cat_facts){ .a = GMA_RC_OP | GMA_RC_OPT, .freed_in_step = 1 };
    CHECK_EQ_U64(gma_cat_classify(&f), GMA_CAT_TEMPORARY);
    /* backward: kept past it (freed by zero_grad) a gradient, freed inside it a temporary */
    f = (gma_cat_facts){ .a = BWD, .f = GMA_RC_OP | GMA_RC_ZERO };
    CHECK_EQ_U64(gma_cat_classify(&f), GMA_CAT_GRADIENT);
    f = (gma_cat_facts){ .a = BWD, .f = BWD };
    CHECK_EQ_U64(gma_cat_classify(&f), GMA_CAT_TEMPORARY);
    f = (gma_cat_facts){ .a = BWD, .alive_end = 1 };
    CHECK_EQ_U64(gma_cat_classify(&f), GMA_CAT_GRADIENT);
    /* forward: freed in backward an activation, in its op or module a temporary */
    f = (gma_cat_facts){ .a = FWD, .f = BWD };
    CHECK_EQ_U64(gma_cat_classify(&f), GMA_CAT_ACTIVATION);
    f = (gma_cat_facts){ .a = FWD, .f = FWD, .freed_in_op = 1 };
    CHECK_EQ_U64(gma_cat_classify(&f), GMA_CAT_TEMPORARY);
    f = (gma_cat_facts){ .a = FWD, .f = BWD, .freed_in_module = 1 };
    CHECK_EQ_U64(gma_cat_classify(&f), GMA_CAT_TEMPORARY);
    /* a copy op that copied from the host: an input; before training and kept, a weight */
    f = (gma_cat_facts){ .a = GMA_RC_OP | GMA_RC_COPY, .htod = 1 };
    CHECK_EQ_U64(gma_cat_classify(&f), GMA_CAT_INPUT);
    f.before_train = f.alive_end = 1;
    CHECK_EQ_U64(gma_cat_classify(&f), GMA_CAT_PARAMETER);
    /* made in forward and kept to the end: other (a leak unless it stops growing) */
    f = (gma_cat_facts){ .a = FWD, .alive_end = 1 };
    CHECK_EQ_U64(gma_cat_classify(&f), GMA_CAT_OTHER);
    CHECK(strcmp(gma_cat_names[GMA_CAT_OUTSIDE], "outside the allocator") == 0);
}

int main(void)
{
    test_names();
    test_rules();
    return tc_result("analyzer.category");
}
