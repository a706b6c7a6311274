/*
 * Categories of PyTorch memory: what kind of memory each tensor block is
 * (parameter, gradient, optimizer state, activation, temporary, input,
 * workspace, other), and beside the blocks the allocator's cache (reserved,
 * not allocated) and the memory outside the allocator.
 *
 * A consumer of the replay (consumer.h) on traces the PyTorch bridge
 * recorded: while the replay runs it keeps one small record per block (its
 * lifetime in memory events and what the open ranges said at its alloc and
 * its free); gma_category_finish, after the replay, gives each block its
 * category, the bytes of each category at every device's peak, and takes
 * the blocks that are no leaks (parameters, gradients, optimizer state and
 * library workspaces kept to the end) out of the replay's leak counts.
 * The rules are docs/analyzer.md's ("Categories"); gma_cat_classify is
 * them, on facts that a test can write by hand.
 *
 * Memory: about 80 bytes per block, 16 per module range.
 */
#ifndef GMA_CATEGORY_H
#define GMA_CATEGORY_H

#include <stdio.h>

#include "gma.h"

typedef enum gma_cat {
    GMA_CAT_PARAMETER,
    GMA_CAT_GRADIENT,
    GMA_CAT_OPTIMIZER,
    GMA_CAT_ACTIVATION,
    GMA_CAT_TEMPORARY,
    GMA_CAT_INPUT,
    GMA_CAT_WORKSPACE,
    GMA_CAT_OTHER,
    GMA_CAT_TENSORS_,              /* the categories of blocks end here */
    GMA_CAT_CACHE = GMA_CAT_TENSORS_, /* reserved by the allocator, in no block */
    GMA_CAT_OUTSIDE,               /* CUDA memory outside the allocator */
    GMA_CAT_COUNT_
} gma_cat;

/* "parameter", "gradient", "optimizer state", "activation", "temporary",
 * "input", "workspace", "other", "allocator cache", "outside the allocator" */
extern const char *const gma_cat_names[GMA_CAT_COUNT_];

/* What a range says about the memory made under it (or freed under it). */
#define GMA_RC_OP 0x1u      /* an op: kind 1, or an op-like name ("aten::mm", "MmBackward0") */
#define GMA_RC_BWD 0x2u     /* autograd's backward: kind 3, "...Backward0", "autograd::engine::..." */
#define GMA_RC_OPT 0x4u     /* an optimizer step: "Optimizer.step#AdamW.step" */
#define GMA_RC_ZERO 0x8u    /* "Optimizer.zero_grad#..." */
#define GMA_RC_MODULE 0x10u /* a module's forward: kind 2 */
#define GMA_RC_MATMUL 0x20u /* a matmul-family op (cuBLAS): aten::mm, addmm, bmm, linear ... */
#define GMA_RC_COPY 0x40u   /* a copy op: aten::to, aten::_to_copy, aten::copy_ */

/* The GMA_RC_* bits of a range named name (len bytes) of kind (gmt_range_kind). */
unsigned gma_cat_range_class(const char *name, size_t len, uint64_t kind);

/* What the trace told about one block. */
typedef struct gma_cat_facts {
    unsigned a;          /* GMA_RC_* of the ranges open at its alloc (its thread's chain) */
    unsigned f;          /* ... at its free (0 when never freed) */
    int baseline;        /* live at window begin or seeded when the bridge attached */
    int before_train;    /* made before the first module forward, backward or optimizer step */
    int alive_end;       /* never freed */
    int freed_in_op;     /* freed while the innermost op open at its alloc was still open */
    int freed_in_module; /* freed while the module open at its alloc was still open */
    int freed_in_step;   /* made in an optimizer step, freed before that step ended */
    int htod;            /* its copy op copied host memory to the device */
    int mm_later;        /* its matmul op had made another block before it */
} gma_cat_facts;

/* The category of a block (GMA_CAT_PARAMETER .. GMA_CAT_OTHER). */
gma_cat gma_cat_classify(const gma_cat_facts *f);

/* ---- on a replay ------------------------------------------------------------ */

struct gma_category;

/* Starts collecting on r (before its pass; a trace with blocks). 0, or -1 on OOM. */
int gma_category_open(gma_replay *r);
/* After gma_replay_read: the categories, the bytes at the peaks, and the
 * leaks that are no leaks taken out of the replay's counts. 0, or -1 on OOM. */
int gma_category_finish(gma_replay *r);
/* 1 when r collected categories (the trace has blocks and finished). */
int gma_category_known(const gma_replay *r);

/* The category of an allocation of a finished replay (the timeline's
 * colour, the leak section): GMA_CAT_COUNT_ when unknown. */
gma_cat gma_category_of(const gma_replay *r, const gma_entry *e);

/* A device's bytes of each category at its peak (GMA_CAT_COUNT_ values). 0,
 * or -1 when unknown. */
int gma_category_at_peak(const gma_replay *r, unsigned device, uint64_t out[GMA_CAT_COUNT_]);

/* The Peak line's split: "parameter 4.00 MiB, activation ..." (non-zero
 * categories), 1 when written. */
int gma_category_peak_split(const gma_replay *r, unsigned device, char *out, size_t cap);
/* The leaks taken out: bytes and count, per category (tensors). */
int gma_category_kept(const gma_replay *r, uint64_t *bytes, uint64_t *count, char *out, size_t cap);

/* --by category is a view (view.h): gma_view_category. */

#endif
