/*
 * nn.Module paths and source lines (--by module, --by line).
 *
 * The PyTorch bridge opens a MODULE range per module call (name = the
 * module's path from its root, "GPT.h.3.attn") and a MODULE_BWD range for
 * autograd's backward of it; BLOCK records name the innermost frame of the
 * program's code. A tensor belongs to the innermost module range open on
 * its thread's range stack (an op inside a module is a child of it);
 * allocations under no module range go to "(no module)".
 *
 * The paths make a tree (gma_mtree): a path's parent is the path less its
 * last component, created when missing (a ModuleList that is never called
 * still totals its layers). Forward and backward are two trees of the same
 * paths. A node's self counts the allocations attributed to it; its total
 * adds its descendants' (as a profiler's call tree). --depth N keeps the
 * nodes of depth <= N (the root is depth 1) and folds the self of deeper
 * ones into their ancestor at depth N.
 */
#ifndef GMA_MODULES_H
#define GMA_MODULES_H

#include <stddef.h>
#include <stdint.h>

#include "gma.h"
#include "table.h"

/* ---- paths ---------------------------------------------------------------- */

/* Components of a path ("GPT" 1, "GPT.h.0" 3; "" 0). */
unsigned gma_mod_depth(const char *path, size_t len);
/* Length of the path's ancestor at depth d (the path's own length when it
 * is no deeper than d; 0 when d is 0). */
size_t gma_mod_prefix_len(const char *path, size_t len, unsigned d);

/* ---- the tree --------------------------------------------------------------- */

/* What a node counts. free_*: of the bytes it allocated, those freed (a
 * tensor's free is counted to its owner); peak: its bytes live at the
 * device's peak. */
typedef struct gma_mstat {
    uint64_t alloc_bytes, alloc_count, free_bytes, free_count, peak;
} gma_mstat;

typedef struct gma_mnode {
    size_t path;        /* offset in the tree's strs */
    uint32_t len;       /* of the path */
    uint32_t parent;    /* node index + 1, 0 a root */
    unsigned depth;     /* components; 0 for node 0, "(no module)" */
    int bwd;            /* the backward tree */
    uint64_t calls;
    gma_mstat self;
} gma_mnode;

/* Node 0 is "(no module)"; every other node's parent has a lower index. */
typedef struct gma_mtree {
    gma_vec nodes;      /* gma_mnode */
    gma_map of;         /* hash of (path, bwd) -> node */
    gma_strs strs;
} gma_mtree;

int gma_mtree_init(gma_mtree *t);
void gma_mtree_free(gma_mtree *t);
/* The node of (path, bwd), made with its missing ancestors; UINT32_MAX out
 * of memory. */
uint32_t gma_mtree_intern(gma_mtree *t, const char *path, size_t len, int bwd);
static inline gma_mnode *gma_mtree_node(const gma_mtree *t, uint32_t i)
{
    return &GMA_VEC_AT(&t->nodes, gma_mnode, i);
}

/* A row of the view: a node kept at --depth, its self (folded) and total. */
typedef struct gma_mrow {
    uint32_t node;
    uint64_t calls;
    gma_mstat self, total;
} gma_mrow;

/* The rows of the tree with deeper nodes folded to depth (0: none); only
 * nodes that were called or own or total anything. *rows is malloc'd
 * (free it); 0, or -1 out of memory. */
int gma_mtree_rows(const gma_mtree *t, unsigned depth, gma_mrow **rows, size_t *n);

/* A node's display name: its path, with " (backward)" in the backward tree. */
void gma_modules_node_name(const gma_mtree *t, uint32_t node, gma_buf *b);

/* ---- the replay's consumer and the views ------------------------------------ */

/* Registers the module and line collector on r (before the read). 0, or -1
 * out of memory or no consumer slot left. */
int gma_modules_open(gma_replay *r);
/* Whether the replay met a module range or a frame (the views have data). */
int gma_modules_seen(const gma_replay *r);
/* Whether the replay met a module range; a frame on a block. */
int gma_modules_has_paths(const gma_replay *r);
int gma_modules_has_frames(const gma_replay *r);
/* The module node and frame (string id, 0 none) of an entry still in use
 * (live, kept for the peak, leaked; during the replay, live): 1 when the
 * collector knows them. */
int gma_modules_entry(const gma_replay *r, const gma_entry *e, uint32_t *node, uint32_t *frame);
/* The module node of an open range instance (an op inside a module): 1
 * when it is inside one. */
int gma_modules_of_range(const gma_replay *r, uint64_t range, uint32_t *node);
/* A node's display name ("(no module)" for 0). */
void gma_modules_name(const gma_replay *r, uint32_t node, gma_buf *b);
/* --by module and --by line (opt.by), ranked by opt.sort, cut to top. */
int gma_modules_table(const gma_replay *r, gma_table *t, uint64_t top);
int gma_lines_table(const gma_replay *r, gma_table *t, uint64_t top);
/* The rows --diff matches by name, with the metric m (gma_sort) and calls. */
typedef int (*gma_modules_row_fn)(void *ctx, const char *name, size_t len, int64_t v, uint64_t calls);
int gma_modules_diff_rows(const gma_replay *r, gma_sort m, gma_modules_row_fn fn, void *ctx);

#endif
