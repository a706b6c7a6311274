/*
 * The tree of nn.Module paths: a path's parent is the path less its last
 * component, made when missing (a ModuleList that is never called still
 * totals its layers); forward and backward are two trees of the same paths.
 * Pure: no replay, no I/O (modules.h fills it, lines.c names its nodes).
 */
#ifndef GMA_MTREE_H
#define GMA_MTREE_H

#include <stddef.h>
#include <stdint.h>

#include "gma.h"

/* ---- paths ---------------------------------------------------------------- */

/* Components of a path ("GPT" 1, "GPT.h.0" 3; "" 0). */
unsigned gma_mod_depth(const char *path, size_t len);
/* Length of the path's ancestor at depth d (the path's own length when it
 * is no deeper than d; 0 when d is 0). */
size_t gma_mod_prefix_len(const char *path, size_t len, unsigned d);

/* ---- the tree --------------------------------------------------------------- */

/* What a node counts. free_*: of the bytes it allocated, those freed (a
 * tensor's free is counted to its owner); peak: its bytes live at the
 * device's peak; params: of those, the bytes of the parameters and buffers
 * it holds (the tensors' own bytes, as numel x element size). */
typedef struct gma_mstat {
    uint64_t alloc_bytes, alloc_count, free_bytes, free_count, peak, params;
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
void gma_mtree_name(const gma_mtree *t, uint32_t node, gma_buf *b);

/* The rows --diff matches by name, with the metric m (gma_sort) and calls. */
typedef int (*gma_modules_row_fn)(void *ctx, const char *name, size_t len, int64_t v, uint64_t calls);

/* A row of a view ranked by a key, then by its name (an offset in names),
 * then by its index: gma_keyrows_sort (largest key first; by_name: the
 * name alone, then the index). 0, or -1 out of memory. */
typedef struct gma_keyrow {
    int64_t key;
    size_t name;
    size_t idx;
} gma_keyrow;
int gma_keyrows_sort(gma_keyrow *rows, size_t n, const gma_strs *names, int by_name);

#endif
