/* Insights as rows: every row a number, a reason and what to try; handed
 * to the printer main.c chose (print.h), which writes them. */
#include "insights_int.h"
#include "print.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

enum { C_DEV, C_FINDING, C_OWNER, C_BYTES, C_SHARE, C_COUNT, C_CHANGE, C_REASON, C_TRY, C_N };

static const gma_col COLS[C_N] = {
    { "dev", "device", GMA_CT_U64, 1, 0 },
    { "finding", "finding", GMA_CT_STR, 1, 0 },
    { "owner", "owner", GMA_CT_STR, 1, 0 },
    { "bytes", "bytes", GMA_CT_BYTES, 1, 0 },
    { "share", "share", GMA_CT_SHARE, 1, 0 },
    { "count", "count", GMA_CT_U64, 1, 0 },
    { "change", "change_bytes", GMA_CT_DBYTES, 1, 0 },
    { "reason", "reason", GMA_CT_STR, 0, 0 },
    { "what to try", "try", GMA_CT_STR, 0, 0 },
};

enum { D_DEV, D_FINDING, D_OWNER, D_A, D_B, D_DELTA, D_REASON, D_TRY, D_N };

static const gma_col DCOLS[D_N] = {
    { "dev", "device", GMA_CT_U64, 1, 0 },
    { "finding", "finding", GMA_CT_STR, 1, 0 },
    { "owner", "owner", GMA_CT_STR, 1, 0 },
    { "A", "a_bytes", GMA_CT_BYTES, 1, 0 },
    { "B", "b_bytes", GMA_CT_BYTES, 1, 0 },
    { "delta", "delta_bytes", GMA_CT_DBYTES, 1, 0 },
    { "reason", "reason", GMA_CT_STR, 0, 0 },
    { "what to try", "try", GMA_CT_STR, 0, 0 },
};

/* What each class is, and the first thing to try about it: by lifetime,
 * and by category (category.h's order). */
static const char *const CLASS_REASON[GMA_IC_COUNT_] = {
    "live across the peak's step: weights, gradients, optimizer state, baseline",
    "made and freed in the peak's step, live across ops: activations kept for backward",
    "freed in the op (or kernel gap) that made it: workspaces, intermediates",
    "CUDA memory of other libraries (cuBLAS workspaces, NCCL, module globals)",
    "held by the allocator's segments but in no tensor: cache and fragmentation",
};
static const char *const CLASS_TRY[GMA_IC_COUNT_] = {
    "lower precision, sharded optimizer state (ZeRO/FSDP), or fewer parameters",
    "activation checkpointing of the top owners, a fused kernel that keeps less, smaller batch",
    "a fused or in-place variant of the top owners' ops",
    "cap library workspaces (CUBLAS_WORKSPACE_CONFIG=:4096:8) or count them in the budget",
    "see the fragmentation row: whether it is the allocator's cache or holes too small to reuse",
};
static const char *const CAT_REASON[GMA_CAT_COUNT_] = {
    "the model's weights and buffers: made before training, kept to the end",
    "the parameters' gradients: made in backward, kept until zero_grad",
    "the optimizer's state (Adam's moments, momentum buffers): made in its step, kept across steps",
    "made in forward, kept for backward",
    "freed in the op or module that made it: intermediates, workspaces of one op",
    "data copied to the device from the host",
    "library workspaces kept by their handle (cuBLAS)",
    "blocks no rule places: made outside any op, or kept to the end by no known owner",
    "held by the allocator's segments but in no tensor: cache and fragmentation",
    "CUDA memory of other libraries (cuBLAS workspaces, NCCL, module globals)",
};
static const char *const CAT_TRY[GMA_CAT_COUNT_] = {
    "lower precision, sharded parameters (FSDP), or fewer parameters",
    "zero_grad(set_to_none=True) before the forward, sharded gradients (ZeRO-2/FSDP), or lower precision",
    "a lighter optimizer state (8-bit Adam, Adafactor, SGD without momentum) or sharded state (ZeRO/FSDP)",
    "activation checkpointing of the top owners, a fused kernel that keeps less, smaller batch",
    "a fused or in-place variant of the top owners' ops",
    "a smaller batch, or copy the next batch after the peak",
    "cap library workspaces (CUBLAS_WORKSPACE_CONFIG=:4096:8) or count them in the budget",
    "see the owners: the ops that made them",
    "see the fragmentation row: whether it is the allocator's cache or holes too small to reuse",
    "cap library workspaces (CUBLAS_WORKSPACE_CONFIG=:4096:8) or count them in the budget",
};

static const char *class_reason(const gma_ins_result *a, unsigned k)
{
    return a->categories ? CAT_REASON[k] : CLASS_REASON[k];
}

/* A class shown without bytes: lifetimes always, the layers beside the
 * blocks only with bytes, categories only with bytes (eight of them). */
static int class_shown(const gma_ins_result *a, unsigned k, uint64_t bytes)
{
    return bytes || (!a->categories && k != a->ic_outside && k != a->ic_cache);
}

typedef struct gmi_rowbuf {
    gma_table *t;
    char reason[400], try_[300];
} gmi_rowbuf;

static double share_of(uint64_t part, uint64_t whole) { return whole ? (double)part / (double)whole : 0.0; }

static int row(gma_table *t, const gma_ins_dev *D, const char *finding, const char *owner, uint64_t bytes,
               double share, int has_share, uint64_t count, int64_t change, int has_change, const char *reason,
               const char *try_)
{
    gma_cell *c = gma_table_row(t);
    if (!c)
        return -1;
    c[C_DEV].v.u = D->device;
    gma_cell_str(t, &c[C_FINDING], finding);
    if (owner)
        gma_cell_str(t, &c[C_OWNER], owner);
    else
        c[C_OWNER].null = 1;
    c[C_BYTES].v.u = bytes;
    c[C_SHARE].v.d = share;
    c[C_SHARE].null = !has_share;
    c[C_COUNT].v.u = count;
    c[C_CHANGE].v.i = change;
    c[C_CHANGE].null = !has_change;
    if (reason)
        gma_cell_str(t, &c[C_REASON], reason);
    else
        c[C_REASON].null = 1;
    if (try_)
        gma_cell_str(t, &c[C_TRY], try_);
    else
        c[C_TRY].null = 1;
    return 0;
}

static uint64_t class_total(const gma_ins_result *a, const gma_ins_dev *D)
{
    uint64_t s = 0;
    for (unsigned k = 0; k < a->ncls; k++)
        s += D->cls[k].bytes;
    return s;
}

/* A class's advice, naming its first owners (names: n of them). */
static const char *class_try(char *out, size_t cap, const gma_ins_result *a, unsigned k, const char *const *names,
                             size_t n)
{
    int len = snprintf(out, cap, "%s", a->categories ? CAT_TRY[k] : CLASS_TRY[k]);
    for (size_t i = 0; i < n && len > 0 && (size_t)len < cap; i++)
        len += snprintf(out + len, cap - (size_t)len, "%s%s", i ? ", " : "; first: ", names[i]);
    return out;
}

static int rows_classes(gma_table *t, const gma_ins_result *a, const gma_ins_dev *D, uint64_t top)
{
    uint64_t total = class_total(a, D);
    char reason[400], b1[GMA_FMT_CAP], try_[600];
    for (unsigned k = 0; k < a->ncls; k++) {
        const gma_ins_class *C = &D->cls[k];
        if (!C->known || !class_shown(a, k, C->bytes))
            continue;
        const char *names[2];
        size_t n = 0;
        for (; n < 2 && n < C->owners.len; n++)
            names[n] = gma_ins_str(a, GMA_VEC_AT(&C->owners, gma_ins_owner, n).name);
        if (row(t, D, a->cls_names[k], NULL, C->bytes, share_of(C->bytes, total), 1, C->count, 0, 0,
                 class_reason(a, k), C->bytes ? class_try(try_, sizeof(try_), a, k, names, n) : NULL) != 0)
            return -1;
        for (size_t i = 0; i < C->owners.len && (!top || i < top); i++) {
            const gma_ins_owner *o = &GMA_VEC_AT(&C->owners, gma_ins_owner, i);
            snprintf(reason, sizeof(reason), "%.1f%% of the %s bytes (%s) in %llu allocations",
                     100.0 * share_of(o->bytes, C->bytes), a->cls_names[k], gma_fmt_bytes(b1, C->bytes),
                     (unsigned long long)o->count);
            if (row(t, D, a->cls_names[k], gma_ins_str(a, o->name), o->bytes, share_of(o->bytes, total), 1,
                    o->count, 0, 0, reason, NULL) != 0)
                return -1;
        }
    }
    return 0;
}

static int rows_fragmentation(gma_table *t, const gma_ins_result *a, const gma_ins_dev *D)
{
    if (!D->has_fw || !D->fw_reserved)
        return 0;
    uint64_t cached = D->cls[a->ic_cache].bytes;
    char reason[400], b1[GMA_FMT_CAP], b2[GMA_FMT_CAP], b3[GMA_FMT_CAP];
    /* said only when the numbers show it: an eighth of the reserve or more */
    if (cached * 8 < D->fw_reserved && !D->ooms)
        return 0;
    char b4[GMA_FMT_CAP];
    int n = snprintf(reason, sizeof(reason),
                     "reserved %s, allocated %s at the peak; largest free hole %s in %llu segments, largest request %s",
                     gma_fmt_bytes(b1, D->fw_reserved), gma_fmt_bytes(b2, D->fw_allocated),
                     gma_fmt_bytes(b4, D->largest_hole), (unsigned long long)D->segments,
                     gma_fmt_bytes(b3, D->largest_request));
    if (D->ooms && n > 0 && (size_t)n < sizeof(reason))
        snprintf(reason + n, sizeof(reason) - (size_t)n, "; %llu failed requests, the largest %s",
                 (unsigned long long)D->ooms, gma_fmt_bytes(b1, D->oom_bytes));
    const char *try_;
    if (cached >= D->largest_request && D->largest_hole < D->largest_request)
        try_ = "fragmentation: the cache holds the largest request but no hole does; "
               "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True lets freed space serve any size";
    else if (cached >= D->largest_request)
        try_ = "the allocator's cache, not fragmentation: a hole holds the largest request; "
               "torch.cuda.empty_cache() gives it back to other processes";
    else
        try_ = "the cache is smaller than the largest request: neither cache nor fragmentation set the peak";
    return row(t, D, "fragmentation", NULL, cached, share_of(cached, D->fw_reserved), 1, D->ooms, 0, 0, reason, try_);
}

static int rows_growth(gma_table *t, const gma_ins_result *a, const gma_ins_dev *D, uint64_t top)
{
    if (D->nsteps < 3)
        return 0;
    char reason[400], b1[GMA_FMT_CAP], b2[GMA_FMT_CAP], b3[GMA_FMT_CAP];
    snprintf(reason, sizeof(reason), "live at the end of steps %llu-%llu: %s to %s, %s per step (least squares)",
             (unsigned long long)D->step_first, (unsigned long long)D->step_last, gma_fmt_bytes(b1, D->total_first),
             gma_fmt_bytes(b2, D->total_last), gma_fmt_sbytes(b3, D->total_slope, 1));
    const char *try_ = D->growth.len ? "see the leak suspects below" : "nothing grows step over step";
    if (row(t, D, "growth", "(all owners)", D->total_last, 0, 0, D->nsteps, D->total_slope, 1, reason, try_) != 0)
        return -1;
    for (size_t i = 0; i < D->growth.len && (!top || i < top); i++) {
        const gma_ins_owner *o = &GMA_VEC_AT(&D->growth, gma_ins_owner, i);
        snprintf(reason, sizeof(reason), "leak suspect: grew in %llu of %llu steps, %s to %s, %s per step",
                 (unsigned long long)o->grew, (unsigned long long)(D->nsteps - 1), gma_fmt_bytes(b1, o->first),
                 gma_fmt_bytes(b2, o->last), gma_fmt_sbytes(b3, o->slope, 1));
        if (row(t, D, "growth", gma_ins_str(a, o->name), o->last, 0, 0, D->nsteps, o->slope, 1, reason,
                "find what keeps its tensors across steps (a list of losses, a cache, a hook), del or .detach() it") != 0)
            return -1;
    }
    return 0;
}

static int rows_waste(gma_table *t, const gma_ins_result *a, const gma_ins_dev *D, uint64_t top)
{
    if (!D->idle_count)
        return 0;
    char reason[400], b1[GMA_FMT_CAP];
    snprintf(reason, sizeof(reason),
             "%llu allocations (%s) idle for most of their lifetime: no kernel on their stream and thread after the allocation "
             "or before the free; a hint, not proof (kernel arguments are not traced)",
             (unsigned long long)D->idle_count, gma_fmt_bytes(b1, D->idle_bytes));
    if (row(t, D, "idle", NULL, D->idle_at_peak, share_of(D->idle_at_peak, D->peak), 1, D->idle_at_peak_count, 0,
            0, reason, "allocate right before the first use and free right after the last (del, a narrower scope)") != 0)
        return -1;
    for (size_t i = 0; i < D->idle_owners.len && (!top || i < top); i++) {
        const gma_ins_owner *o = &GMA_VEC_AT(&D->idle_owners, gma_ins_owner, i);
        if (row(t, D, "idle", gma_ins_str(a, o->name), o->bytes, share_of(o->bytes, D->peak), 1, o->count, 0, 0,
                "held idle at the peak", NULL) != 0)
            return -1;
    }
    return 0;
}

static int rows_whatif(gma_table *t, const gma_ins_result *a, const gma_ins_dev *D)
{
    if (!D->has_whatif)
        return 0;
    char reason[400], b1[GMA_FMT_CAP], b2[GMA_FMT_CAP], b3[GMA_FMT_CAP];
    int gain = D->whatif_peak < D->whatif_base;
    snprintf(reason, sizeof(reason),
             "peak %s instead of %s, replayed with its %llu allocations freed when the op holding each free began "
             "(%s of them live at the peak)%s",
             gma_fmt_bytes(b1, D->whatif_peak), gma_fmt_bytes(b2, D->whatif_base), (unsigned long long)D->whatif_count,
             gma_fmt_bytes(b3, D->whatif_moved_at_peak), gain ? "" : ": one op earlier is still after the peak");
    return row(t, D, "what-if", gma_ins_str(a, D->whatif_owner), D->whatif_peak, share_of(D->whatif_peak, D->whatif_base),
               1, D->whatif_count, (int64_t)D->whatif_peak - (int64_t)D->whatif_base, 1, reason,
               gain ? "free them one op earlier: del after the last use, or fuse the op that frees them"
                    : "they are needed at the peak: recompute them (activation checkpointing) instead of keeping them");
}

static int rows_recompute(gma_table *t, const gma_ins_result *a, const gma_ins_dev *D)
{
    if (!D->has_recompute)
        return 0;
    char reason[900], owner[300], b1[GMA_FMT_CAP], b2[GMA_FMT_CAP], b3[GMA_FMT_CAP], b4[GMA_FMT_CAP],
        b5[GMA_FMT_CAP], b6[GMA_FMT_CAP], b7[GMA_FMT_CAP];
    const char *name = gma_ins_str(a, D->rc_layer);
    int gain = D->rc_peak < D->whatif_base;
    snprintf(owner, sizeof(owner), "%s #%u", name, D->rc_ordinal);
    snprintf(reason, sizeof(reason),
             "peak %s instead of %s, replayed with layer %s (the op of that name numbered %u in its step, in %llu "
             "step%s) recomputed: its "
             "%llu activations (%s; %s live at the peak), made in its forward and freed later in the step, live only "
             "during that forward (%s-%s ms in the peak's step) and again from its backward's begin (%s ms: when the "
             "op holding the first of their frees began) to their frees; an estimate: the recomputation's own "
             "temporaries are not counted, and what the next layer keeps of this layer's output is counted as "
             "recomputed",
             gma_fmt_bytes(b1, D->rc_peak), gma_fmt_bytes(b2, D->whatif_base), owner, D->rc_ordinal,
             (unsigned long long)D->rc_steps, D->rc_steps == 1 ? "" : "s", (unsigned long long)D->rc_count, gma_fmt_bytes(b3, D->rc_bytes),
             gma_fmt_bytes(b4, D->rc_at_peak), gma_fmt_ms(b5, D->rc_begin_ns), gma_fmt_ms(b6, D->rc_end_ns),
             gma_fmt_ms(b7, D->rc_back_ns));
    return row(t, D, "what-if recompute", owner, D->rc_peak, share_of(D->rc_peak, D->whatif_base), 1, D->rc_count,
               (int64_t)D->rc_peak - (int64_t)D->whatif_base, 1, reason,
               gain ? "checkpoint this layer: torch.utils.checkpoint around the module whose forward makes these "
                      "tensors"
                    : "recomputing it does not lower the peak: its activations are needed where the peak is "
                      "(in its backward window), or the peak does not hold them");
}

/* The replay in time order peaks elsewhere than the report's, which follows
 * the trace's order: say so, with the count of records out of order. */
static int rows_order(gma_table *t, const gma_ins_dev *D)
{
    if (!D->has_base || D->whatif_base == D->peak)
        return 0;
    char reason[400], b1[GMA_FMT_CAP], b2[GMA_FMT_CAP];
    snprintf(reason, sizeof(reason),
             "replayed in time order the live bytes peak at %s, not %s: %llu memory records are older than the one "
             "before them in the trace; the what-if compares with this peak",
             gma_fmt_bytes(b1, D->whatif_base), gma_fmt_bytes(b2, D->peak), (unsigned long long)D->unordered);
    return row(t, D, "peak in time order", NULL, D->whatif_base, 0, 0, D->unordered,
               (int64_t)D->whatif_base - (int64_t)D->peak, 1, reason,
               "read the classes as those of the trace-order peak; torch.cuda.max_memory_allocated is the time-order one");
}

/* The classes do not add up to the peak: allocations past the records kept,
 * or a peak the live set cannot explain. Said before anything else. */
static int rows_partial(gma_table *t, const gma_ins_dev *D)
{
    if (D->live_sum == D->peak && !D->not_kept)
        return 0;
    char reason[400], b1[GMA_FMT_CAP], b2[GMA_FMT_CAP];
    snprintf(reason, sizeof(reason),
             "the classes hold %s of the %s peak: %llu allocations past the first %u were not kept for the insights",
             gma_fmt_bytes(b1, D->live_sum), gma_fmt_bytes(b2, D->peak), (unsigned long long)D->not_kept, GMI_MAX_RECS);
    return row(t, D, "partial", NULL, D->live_sum, share_of(D->live_sum, D->peak), 1, D->not_kept,
               (int64_t)D->live_sum - (int64_t)D->peak, 1, reason,
               "select less (--window N, --step N, a schedule with fewer active steps) and run again");
}

static int table_one(gma_table *t, const gma_ins_result *a, uint64_t top)
{
    gma_table_init(t, "Insights: what the peak is made of, and what to try", COLS, C_N);
    for (size_t i = 0; i < a->ndev; i++) {
        const gma_ins_dev *D = &a->dev[i];
        if (rows_partial(t, D) || rows_order(t, D) || rows_classes(t, a, D, top) || rows_fragmentation(t, a, D) || rows_growth(t, a, D, top) ||
            rows_waste(t, a, D, top) || rows_whatif(t, a, D) || rows_recompute(t, a, D))
            return -1;
    }
    t->total_rows = t->nrows;
    return 0;
}

/* ---- --diff: A against B ------------------------------------------------------ */

static int drow(gma_table *t, unsigned dev, const char *finding, const char *owner, uint64_t a, uint64_t b,
                const char *reason, const char *try_)
{
    gma_cell *c = gma_table_row(t);
    if (!c)
        return -1;
    c[D_DEV].v.u = dev;
    gma_cell_str(t, &c[D_FINDING], finding);
    if (owner)
        gma_cell_str(t, &c[D_OWNER], owner);
    else
        c[D_OWNER].null = 1;
    c[D_A].v.u = a;
    c[D_B].v.u = b;
    c[D_DELTA].v.i = (int64_t)b - (int64_t)a;
    if (reason)
        gma_cell_str(t, &c[D_REASON], reason);
    else
        c[D_REASON].null = 1;
    if (try_)
        gma_cell_str(t, &c[D_TRY], try_);
    else
        c[D_TRY].null = 1;
    return 0;
}

typedef struct gmi_pair {
    const char *name;
    uint64_t a, b;
} gmi_pair;

static uint64_t absdiff(uint64_t a, uint64_t b) { return a > b ? a - b : b - a; }

static int pair_cmp(const void *pa, const void *pb, void *ctx)
{
    (void)ctx;
    const gmi_pair *x = pa, *y = pb;
    uint64_t dx = absdiff(x->a, x->b), dy = absdiff(y->a, y->b);
    if (dx != dy)
        return dx > dy ? -1 : 1;
    return strcmp(x->name, y->name);
}

/* The owners of class k on both sides, matched by name, by |B - A|. */
static int owner_pairs(const gma_ins_result *ra, const gma_ins_dev *A, const gma_ins_result *rb, const gma_ins_dev *B,
                       unsigned k, gma_vec *out)
{
    gma_vec_init(out, sizeof(gmi_pair));
    const gma_vec *va = &A->cls[k].owners, *vb = &B->cls[k].owners; /* one vocabulary (gma_insights_print) */
    for (size_t i = 0; i < va->len; i++) {
        gmi_pair *p = gma_vec_push(out);
        if (!p)
            return -1;
        p->name = gma_ins_str(ra, GMA_VEC_AT(va, gma_ins_owner, i).name);
        p->a = GMA_VEC_AT(va, gma_ins_owner, i).bytes;
    }
    size_t na = out->len;
    for (size_t i = 0; i < vb->len; i++) {
        const char *name = gma_ins_str(rb, GMA_VEC_AT(vb, gma_ins_owner, i).name);
        gmi_pair *p = NULL;
        for (size_t j = 0; j < na && !p; j++)
            if (strcmp(GMA_VEC_AT(out, gmi_pair, j).name, name) == 0)
                p = &GMA_VEC_AT(out, gmi_pair, j);
        if (!p && !(p = gma_vec_push(out)))
            return -1;
        p->name = name;
        p->b = GMA_VEC_AT(vb, gma_ins_owner, i).bytes;
    }
    return gma_msort(out->data, out->len, sizeof(gmi_pair), pair_cmp, NULL);
}

static int diff_dev(gma_table *t, const gma_ins_result *ra, const gma_ins_dev *A, const gma_ins_result *rb,
                    const gma_ins_dev *B, uint64_t top)
{
    char reason[400], b1[GMA_FMT_CAP], b2[GMA_FMT_CAP];
    if (drow(t, A->device, "peak", NULL, A->peak, B->peak, "the highest live bytes of each run", NULL) != 0)
        return -1;
    int sep = -1;
    for (unsigned k = 0; k < ra->ncls; k++)
        if (A->cls[k].known && B->cls[k].known &&
            (sep < 0 || absdiff(A->cls[k].bytes, B->cls[k].bytes) > absdiff(A->cls[sep].bytes, B->cls[sep].bytes)))
            sep = (int)k;
    for (unsigned k = 0; k < ra->ncls; k++) {
        if (!A->cls[k].known || !B->cls[k].known || (ra->categories && !(A->cls[k].bytes | B->cls[k].bytes)))
            continue;
        const char *why = class_reason(ra, k);
        if ((int)k == sep && A->cls[k].bytes != B->cls[k].bytes) {
            snprintf(reason, sizeof(reason), "the %s that separates the two runs (%s of the %s peak difference): %s",
                     ra->categories ? "category" : "class",
                     gma_fmt_sbytes(b1, (int64_t)B->cls[k].bytes - (int64_t)A->cls[k].bytes, 1),
                     gma_fmt_sbytes(b2, (int64_t)B->peak - (int64_t)A->peak, 1), class_reason(ra, k));
            why = reason;
        }
        if ((int)k != sep) {
            if (drow(t, A->device, ra->cls_names[k], NULL, A->cls[k].bytes, B->cls[k].bytes, why, NULL) != 0)
                return -1;
            continue;
        }
        gma_vec pairs;
        int rc = owner_pairs(ra, A, rb, B, k, &pairs);
        const char *names[2];
        size_t n = 0;
        for (; !rc && n < 2 && n < pairs.len && GMA_VEC_AT(&pairs, gmi_pair, n).a != GMA_VEC_AT(&pairs, gmi_pair, n).b; n++)
            names[n] = GMA_VEC_AT(&pairs, gmi_pair, n).name;
        char try_[600];
        if (!rc)
            rc = drow(t, A->device, ra->cls_names[k], NULL, A->cls[k].bytes, B->cls[k].bytes, why,
                      class_try(try_, sizeof(try_), ra, k, names, n));
        for (size_t i = 0; !rc && i < pairs.len && (!top || i < top); i++) {
            const gmi_pair *p = &GMA_VEC_AT(&pairs, gmi_pair, i);
            if (p->a == p->b)
                break;
            rc = drow(t, A->device, ra->cls_names[k], p->name, p->a, p->b,
                      p->b < p->a ? "held in A, not (or less) in B" : "held in B, not (or less) in A", NULL);
        }
        gma_vec_free(&pairs);
        if (rc)
            return -1;
    }
    return 0;
}

static int table_diff(gma_table *t, const gma_ins_result *a, const gma_ins_result *b, uint64_t top)
{
    gma_table_init(t,
                   a->categories ? "Insights, A against B: the peak by category"
                                 : "Insights, A against B: the peak by lifetime class",
                   DCOLS, D_N);
    for (size_t i = 0; i < a->ndev; i++)
        for (size_t j = 0; j < b->ndev; j++)
            if (a->dev[i].device == b->dev[j].device && diff_dev(t, a, &a->dev[i], b, &b->dev[j], top) != 0)
                return -1;
    t->total_rows = t->nrows;
    return 0;
}

int gma_insights_table(gma_table *t, const gma_ins_result *a, const gma_ins_result *b, uint64_t top)
{
    return b ? table_diff(t, a, b, top) : table_one(t, a, top);
}

/* ---- printing ------------------------------------------------------------------ */

int gma_insights_print(FILE *f, const gma_printer *p, const gma_replay *ra, const gma_replay *rb)
{
    gma_ins_result a, b;
    /* --diff compares in one vocabulary: categories where both runs have them */
    int cats = gma_insights_categories(ra) && (!rb || gma_insights_categories(rb));
    if (gma_insights_build_in(&a, ra, cats) != 0)
        return -1;
    if (rb && gma_insights_build_in(&b, rb, cats) != 0) {
        gma_insights_result_free(&a);
        return -1;
    }
    uint64_t top = ra->opt.top;
    if (p->group_rows && (!top || top > p->group_rows))
        top = p->group_rows;
    gma_table t;
    int rc = gma_insights_table(&t, &a, rb ? &b : NULL, top);
    if (!rc) {
        gma_insights_view v = { { &a, rb ? &b : NULL }, rb ? 2 : 1, &t, rb ? D_DELTA : C_BYTES,
                                rb ? D_REASON : C_REASON, rb ? D_TRY : C_TRY };
        rc = p->insights(f, &v);
    }
    gma_table_free(&t);
    gma_insights_result_free(&a);
    if (rb)
        gma_insights_result_free(&b);
    return rc || ferror(f) ? -1 : 0;
}
