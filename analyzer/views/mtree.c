/*
 * The tree of module paths (mtree.h): paths, nodes, folding to a depth.
 */
#include <stdlib.h>
#include <string.h>

#include "mtree.h"
#include "names.h"

/* ---- paths ---------------------------------------------------------------- */

unsigned gma_mod_depth(const char *path, size_t len)
{
    if (!len)
        return 0;
    unsigned d = 1;
    for (size_t i = 0; i < len; i++)
        d += path[i] == '.';
    return d;
}

size_t gma_mod_prefix_len(const char *path, size_t len, unsigned d)
{
    if (!d)
        return 0;
    unsigned seen = 1;
    for (size_t i = 0; i < len; i++)
        if (path[i] == '.' && seen++ == d)
            return i;
    return len;
}

/* ---- the tree --------------------------------------------------------------- */

static uint64_t node_key(const char *path, size_t len, int bwd)
{
    return gma_hash_bytes(path, len) ^ (bwd ? 0x5bd1e9955bd1e995ull : 0);
}

int gma_mtree_init(gma_mtree *t)
{
    memset(t, 0, sizeof(*t));
    gma_vec_init(&t->nodes, sizeof(gma_mnode));
    gma_mnode *none = gma_vec_push(&t->nodes);
    if (!none)
        return -1;
    none->path = gma_strs_add(&t->strs, "(no module)", 11);
    none->len = 11;
    return none->path == (size_t)-1 ? -1 : 0;
}

void gma_mtree_free(gma_mtree *t)
{
    gma_vec_free(&t->nodes);
    gma_map_free(&t->of);
    gma_strs_free(&t->strs);
}

/* The node of exactly (path, bwd), or UINT32_MAX. */
static uint32_t node_find(const gma_mtree *t, const char *path, size_t len, int bwd)
{
    uint32_t i;
    if (!gma_map_get(&t->of, node_key(path, len, bwd), &i))
        return UINT32_MAX;
    return i;
}

uint32_t gma_mtree_intern(gma_mtree *t, const char *path, size_t len, int bwd)
{
    if (!len || len > UINT32_MAX)
        return 0;
    uint32_t i = node_find(t, path, len, bwd);
    if (i != UINT32_MAX)
        return i;
    /* the ancestors first: a parent's index is below its children's */
    uint32_t parent = 0;
    unsigned d = gma_mod_depth(path, len);
    if (d > 1) {
        parent = gma_mtree_intern(t, path, gma_mod_prefix_len(path, len, d - 1), bwd);
        if (parent == UINT32_MAX)
            return UINT32_MAX;
        parent++;
    }
    size_t off = gma_strs_add(&t->strs, path, len);
    gma_mnode *n = off == (size_t)-1 ? NULL : gma_vec_push(&t->nodes);
    if (!n)
        return UINT32_MAX;
    n->path = off;
    n->len = (uint32_t)len;
    n->parent = parent;
    n->depth = d;
    n->bwd = bwd;
    i = (uint32_t)(t->nodes.len - 1);
    if (gma_map_put(&t->of, node_key(path, len, bwd), i) != 0) {
        t->nodes.len--;
        return UINT32_MAX;
    }
    return i;
}

static void stat_add(gma_mstat *a, const gma_mstat *b)
{
    a->alloc_bytes += b->alloc_bytes;
    a->alloc_count += b->alloc_count;
    a->free_bytes += b->free_bytes;
    a->free_count += b->free_count;
    a->peak += b->peak;
    a->params += b->params;
}

static int stat_any(const gma_mstat *s) { return s->alloc_count || s->free_count || s->peak || s->params; }

int gma_mtree_rows(const gma_mtree *t, unsigned depth, gma_mrow **rows, size_t *n)
{
    size_t nn = t->nodes.len;
    gma_mrow *all = calloc(nn ? nn : 1, sizeof(*all));
    uint32_t *keep = calloc(nn ? nn : 1, sizeof(*keep)); /* the row a node's self goes to */
    *rows = NULL;
    *n = 0;
    if (!all || !keep) {
        free(all);
        free(keep);
        return -1;
    }
    for (size_t i = 0; i < nn; i++) {
        const gma_mnode *x = gma_mtree_node(t, (uint32_t)i);
        all[i].node = (uint32_t)i;
        all[i].calls = x->calls;
        all[i].total = x->self;
        /* parents come first: a folded node's parent already knows its row */
        keep[i] = depth && x->depth > depth ? keep[x->parent - 1] : (uint32_t)i;
        stat_add(&all[keep[i]].self, &x->self);
    }
    /* totals bottom-up: children have the higher indices */
    for (size_t i = nn; i-- > 1;) {
        const gma_mnode *x = gma_mtree_node(t, (uint32_t)i);
        if (x->parent)
            stat_add(&all[x->parent - 1].total, &all[i].total);
    }
    size_t m = 0;
    for (size_t i = 0; i < nn; i++) {
        if (keep[i] != i || (!all[i].calls && !stat_any(&all[i].total)))
            continue;
        all[m++] = all[i];
    }
    free(keep);
    *rows = all;
    *n = m;
    return 0;
}

void gma_mtree_name(const gma_mtree *t, uint32_t node, gma_buf *b)
{
    const gma_mnode *x = gma_mtree_node(t, node);
    gma_buf_reset(b);
    gma_text_clean(b, gma_strs_get(&t->strs, x->path), x->len);
    if (x->bwd)
        gma_buf_puts(b, " (backward)");
}

typedef struct keyctx {
    const gma_strs *names;
    int by_name;
} keyctx;

static int keyrow_cmp(const void *pa, const void *pb, void *pc)
{
    const gma_keyrow *a = pa, *b = pb;
    const keyctx *c = pc;
    if (!c->by_name && a->key != b->key)
        return a->key > b->key ? -1 : 1;
    int n = strcmp(gma_strs_get(c->names, a->name), gma_strs_get(c->names, b->name));
    if (n)
        return n;
    return a->idx < b->idx ? -1 : a->idx > b->idx;
}

int gma_keyrows_sort(gma_keyrow *rows, size_t n, const gma_strs *names, int by_name)
{
    keyctx c = { names, by_name };
    return gma_msort(rows, n, sizeof(*rows), keyrow_cmp, &c);
}
