/*
 * nn.Module paths and source lines (modules.h): the collector that
 * attributes each allocation to a module and a source line, and the two
 * views over it.
 */
#include <stdlib.h>
#include <string.h>

#include "modules.h"
#include "view.h"
#include "consumer.h"
#include "lines.h"
#include "mtree.h"
#include "replay_int.h"
#include "rhist.h"
#include "tracestr.h"
#include "winsteps.h"

/* ---- the collector ------------------------------------------------------------ */

/* Closed ranges kept for late blocks (a power of two; rhist.h). */
#define GMA_MOD_CLOSED 65536u

typedef struct gma_modules {
    gma_mtree tree;
    gma_map node_of_name;  /* string id << 1 | bwd -> node */
    gma_rhist open;        /* range id -> its module node (inherited by ops): the open
                            * ones and the last GMA_MOD_CLOSED closed ones */
    uint32_t *ent_node, *ent_frame; /* per replay entry: its module node and frame */
    size_t ent_cap;
    /* the last BLOCK ALLOC, for the allocation that follows it */
    int blk_valid;
    uint64_t blk_dev, blk_addr, blk_frame;
    gma_lines lines;
    /* blocks that hold a module's parameters or buffers (OWNER records):
     * entry index -> its gma_owned in owners */
    gma_map owned;
    gma_vec owners;
    int seen_owners;
    int seen;              /* a module range or a frame was met */
    int seen_paths, seen_frames; /* ... which of them */
    int peaks_done;
    int oom;
} gma_modules;

/* What an OWNER record said of a live block. */
typedef struct gma_owned {
    uint32_t node;  /* the module that holds it */
    uint64_t bytes; /* its tensors' own bytes */
} gma_owned;

static gma_modules *mods(const gma_replay *r) { return r->modules; }

/* The node of the module path with string id name (its backward tree:
 * bwd), made at first sight; UINT32_MAX out of memory. */
static uint32_t node_of(gma_replay *r, gma_modules *m, uint64_t name, int bwd)
{
    uint64_t key = name << 1 | (uint64_t)bwd;
    uint32_t node;
    if (gma_map_get(&m->node_of_name, key, &node))
        return node;
    size_t len;
    const char *s = gma_str(r, name, &len);
    node = gma_mtree_intern(&m->tree, s, len, bwd);
    if (node == UINT32_MAX || gma_map_put(&m->node_of_name, key, node) != 0) {
        m->oom = 1;
        return UINT32_MAX;
    }
    return node;
}

static void on_range(gma_replay *r, const gmt_range *g)
{
    gma_modules *m = mods(r);
    if (g->kind != GMT_RANGE_MODULE && g->kind != GMT_RANGE_MODULE_BWD) {
        /* an op or NVTX range: inside the module of its parent */
        uint32_t node;
        if (gma_rhist_count(&m->open) && g->parent && gma_rhist_get(&m->open, g->parent, &node) &&
            gma_rhist_put(&m->open, g->id, node) != 0)
            m->oom = 1;
        return;
    }
    uint32_t node = node_of(r, m, g->name, g->kind == GMT_RANGE_MODULE_BWD);
    if (node == UINT32_MAX)
        return;
    m->seen = m->seen_paths = 1;
    if (gma_rhist_put(&m->open, g->id, node) != 0) {
        m->oom = 1;
        return;
    }
    if (win_selected(r, win_of(r, g->ts)) && step_selected(r))
        gma_mtree_node(&m->tree, node)->calls++;
}

/* Only ranges inside a module are kept. A closed one stays for the next
 * GMA_MOD_CLOSED closes (rhist.h): the bridge's blocks reach the trace after the op
 * that made them has ended (their sizes wait for the allocator's next
 * reading), and still name its range. */
static void on_range_end(gma_replay *r, const gmt_range *g)
{
    (void)gma_rhist_closed(&mods(r)->open, g->id, NULL);
}

static uint32_t ent_index(const gma_replay *r, const gma_entry *e)
{
    return (uint32_t)(e - (const gma_entry *)r->entries.data);
}

/* A module holds the tensors of a live block (its parameters or buffers,
 * made under .cuda() outside any module range): the block and its bytes at
 * the peak are that module's from now on. A tied tensor stays with the
 * first module that said so; the next window's baseline says it again. */
static void on_owner(gma_replay *r, const gmt_block *b)
{
    gma_modules *m = mods(r);
    if (!b->frame || b->frame >= GMA_MAX_STRING_ID)
        return;
    uint32_t node = node_of(r, m, b->frame, 0);
    if (node == UINT32_MAX)
        return;
    m->seen = m->seen_paths = m->seen_owners = 1;
    uint32_t ei = gma_live_entry(r, b->device, b->address), k;
    if (ei >= m->ent_cap || ENT(r, ei)->source != GMT_SRC_FRAMEWORK)
        return; /* not a live block (--layer segments: a CUDA allocation) */
    if (gma_map_get(&m->owned, ei, &k)) {
        gma_owned *o = &GMA_VEC_AT(&m->owners, gma_owned, k);
        if (o->node == node)
            o->bytes = b->bytes;
        return;
    }
    gma_owned *o = gma_vec_push(&m->owners);
    if (!o || gma_map_put(&m->owned, ei, (uint32_t)(m->owners.len - 1)) != 0) {
        m->oom = 1;
        return;
    }
    o->node = node;
    o->bytes = b->bytes;
    const gma_entry *e = ENT(r, ei);
    uint32_t old = m->ent_node[ei];
    if (old != node && (e->flags & (GMA_E_ACCOUNTED | GMA_E_BASELINE)) == GMA_E_ACCOUNTED) {
        gma_mstat *from = &gma_mtree_node(&m->tree, old)->self, *to = &gma_mtree_node(&m->tree, node)->self;
        from->alloc_bytes -= e->bytes;
        from->alloc_count--;
        to->alloc_bytes += e->bytes;
        to->alloc_count++;
    }
    m->ent_node[ei] = node;
}

static void on_block(gma_replay *r, const gmt_block *b)
{
    gma_modules *m = mods(r);
    if (b->action == GMT_BLK_OWNER) {
        on_owner(r, b);
        return;
    }
    if (b->action != GMT_BLK_ALLOC)
        return;
    m->blk_valid = 1;
    m->blk_dev = b->device;
    m->blk_addr = b->address;
    m->blk_frame = b->frame < GMA_MAX_STRING_ID ? b->frame : 0;
    if (b->frame)
        m->seen = m->seen_frames = 1;
}

static void on_alloc(gma_replay *r, const gma_entry *e, const gmt_mem *mm, int pending, uint64_t key)
{
    (void)pending;
    (void)key;
    gma_modules *m = mods(r);
    uint32_t ei = ent_index(r, e), node = 0, frame = 0;
    if (mm->range)
        (void)gma_rhist_get(&m->open, mm->range, &node);
    if (m->blk_valid && m->blk_dev == mm->device && m->blk_addr == mm->address)
        frame = (uint32_t)m->blk_frame;
    m->blk_valid = 0;
    if (ei >= m->ent_cap && gma_grow_u32(&m->ent_node, &m->ent_frame, &m->ent_cap, (size_t)ei + 1) != 0) {
        m->oom = 1;
        return;
    }
    m->ent_node[ei] = node;
    m->ent_frame[ei] = frame;
    /* A slot is reused only by a new allocation: the owner of the entry it
     * held before goes here, not when that entry dies, because an entry
     * freed after the peak (a model's teardown at exit) still counts at it. */
    if (m->owned.count)
        (void)gma_map_del(&m->owned, ei, NULL);
    if ((e->flags & (GMA_E_ACCOUNTED | GMA_E_BASELINE)) != GMA_E_ACCOUNTED)
        return;
    gma_mstat *s = &gma_mtree_node(&m->tree, node)->self;
    s->alloc_bytes += e->bytes;
    s->alloc_count++;
    if (gma_lines_alloc(&m->lines, frame, node, e->bytes) != 0)
        m->oom = 1;
}

static void on_freed(gma_replay *r, const gma_entry *e, const gmt_mem *mm, uint64_t ord)
{
    (void)mm;
    (void)ord;
    gma_modules *m = mods(r);
    uint32_t ei = ent_index(r, e);
    if (ei >= m->ent_cap || (e->flags & (GMA_E_ACCOUNTED | GMA_E_BASELINE)) != GMA_E_ACCOUNTED)
        return;
    gma_mstat *s = &gma_mtree_node(&m->tree, m->ent_node[ei])->self;
    s->free_bytes += e->bytes;
    s->free_count++;
    gma_lines_freed(&m->lines, m->ent_frame[ei], e->bytes);
}

static void release(gma_replay *r);

static const gma_consumer modules_consumer = {
    .range = on_range,
    .range_end = on_range_end,
    .block = on_block,
    .alloc = on_alloc,
    .freed = on_freed,
    .release = release,
};

static void release(gma_replay *r)
{
    gma_modules *m = mods(r);
    if (!m)
        return;
    gma_mtree_free(&m->tree);
    gma_map_free(&m->node_of_name);
    gma_rhist_free(&m->open);
    gma_map_free(&m->owned);
    gma_vec_free(&m->owners);
    free(m->ent_node);
    free(m->ent_frame);
    gma_lines_release(&m->lines);
    free(m);
    r->modules = NULL;
    gma_replay_consumer_remove(r, &modules_consumer);
}

int gma_modules_open(gma_replay *r)
{
    if (r->modules)
        return 0;
    gma_modules *m = calloc(1, sizeof(*m));
    if (!m)
        return -1;
    if (gma_rhist_init(&m->open, GMA_MOD_CLOSED) != 0 || gma_mtree_init(&m->tree) != 0 ||
        gma_lines_init(&m->lines) != 0) {
        gma_mtree_free(&m->tree);
        gma_lines_release(&m->lines);
        gma_rhist_free(&m->open);
        free(m);
        return -1;
    }
    gma_vec_init(&m->owners, sizeof(gma_owned));
    r->modules = m;
    if (gma_replay_consumer_add(r, &modules_consumer) != 0) {
        release(r);
        return -1;
    }
    return 0;
}

int gma_modules_seen(const gma_replay *r) { return r->modules && mods(r)->seen; }
int gma_modules_has_paths(const gma_replay *r) { return r->modules && mods(r)->seen_paths; }
int gma_modules_has_frames(const gma_replay *r) { return r->modules && mods(r)->seen_frames; }

int gma_modules_entry(const gma_replay *r, const gma_entry *e, uint32_t *node, uint32_t *frame)
{
    const gma_modules *m = mods(r);
    if (!m || m->oom || !(e->flags & GMA_E_INUSE))
        return 0;
    uint32_t ei = ent_index(r, e);
    if (ei >= m->ent_cap || ei >= r->entries.len)
        return 0;
    *node = m->ent_node[ei];
    *frame = m->ent_frame[ei];
    return 1;
}

int gma_modules_of_range(const gma_replay *r, uint64_t range, uint32_t *node)
{
    const gma_modules *m = mods(r);
    *node = 0;
    if (!m || !range || !gma_rhist_count(&m->open))
        return 0;
    return gma_rhist_get(&m->open, range, node);
}

void gma_modules_name(const gma_replay *r, uint32_t node, gma_buf *b)
{
    if (!r->modules) {
        gma_buf_reset(b);
        gma_buf_puts(b, "(no module)");
        return;
    }
    gma_mtree_name(&mods(r)->tree, node, b);
}

/* The bytes live at each device's peak, to their module and line (once,
 * after the replay: the peak is known only then). */
static int peaks(const gma_replay *r)
{
    gma_modules *m = mods(r);
    if (m->peaks_done)
        return m->oom ? -1 : 0;
    m->peaks_done = 1;
    for (size_t i = 0; i < r->entries.len && i < m->ent_cap; i++) {
        const gma_entry *e = &GMA_VEC_AT(&r->entries, gma_entry, i);
        if (!(e->flags & GMA_E_INUSE) || (e->flags & GMA_E_HOST) || !r->dev[e->device].has_peak ||
            !gma_dev_selected(r, e->device) || !gma_entry_live_at_peak(r, e))
            continue;
        gma_mstat *s = &gma_mtree_node(&m->tree, m->ent_node[i])->self;
        s->peak += e->bytes;
        uint32_t k;
        if (m->owned.count && gma_map_get(&m->owned, i, &k))
            s->params += GMA_VEC_AT(&m->owners, gma_owned, k).bytes;
        gma_lines_peak(&m->lines, m->ent_frame[i], e->bytes);
    }
    return m->oom ? -1 : 0;
}

/* ---- the views ------------------------------------------------------------------ */


static int64_t sat(uint64_t v) { return v > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)v; }


/* --sort over module rows (gma_mrow): the view's key table (view.h) */
#define MR_(x) ((const gma_mrow *)(x))
static int64_t m_total_peak(const gma_replay *r, const void *x) { (void)r; return sat(MR_(x)->total.peak); }
static int64_t m_self_peak(const gma_replay *r, const void *x) { (void)r; return sat(MR_(x)->self.peak); }
static int64_t m_alloc(const gma_replay *r, const void *x) { (void)r; return sat(MR_(x)->total.alloc_bytes); }
static int64_t m_calls(const gma_replay *r, const void *x) { (void)r; return sat(MR_(x)->calls); }
static int64_t m_self_net(const gma_replay *r, const void *x)
{
    (void)r;
    return (int64_t)(MR_(x)->self.alloc_bytes - MR_(x)->self.free_bytes);
}

#define D_ GMA_ORDER_DESC
#define N_ GMA_ORDER_NAME
#define TOTAL_AT_PEAK "total bytes at the peak (self + children)"
static const gma_sortkey MODULE_KEYS[GMA_SORT_COUNT_] = {
    { "mem", TOTAL_AT_PEAK, D_, m_total_peak, "total_peak_bytes", GMA_SORT_MEM, "self memory", GMA_CT_SBYTES, m_self_net, 0 },
    { "peak", "self bytes at the peak", D_, m_self_peak, "self_peak_bytes", GMA_SORT_PEAK, "peak", GMA_CT_BYTES, NULL, 0 },
    { "alloc", "total bytes allocated", D_, m_alloc, "total_alloc_bytes", GMA_SORT_ALLOC, "bytes allocated", GMA_CT_BYTES, NULL, 0 },
    { "count", "calls", D_, m_calls, "calls", GMA_SORT_COUNT, "calls", GMA_CT_U64, NULL, 0 },
    { "time", TOTAL_AT_PEAK, D_, m_total_peak, "total_peak_bytes", GMA_SORT_TIME, "time", GMA_CT_NS, NULL, 0 },
    { "name", "module path", N_, m_total_peak, NULL, GMA_SORT_ALLOC, "bytes allocated", GMA_CT_BYTES, NULL, 0 },
    { "held", TOTAL_AT_PEAK, D_, m_total_peak, "total_peak_bytes", GMA_SORT_HELD, "bytes held at the peak", GMA_CT_BYTES, NULL, 0 },
};

static int64_t module_key(const gma_replay *r, const gma_mrow *w, gma_sort s)
{
    return MODULE_KEYS[(unsigned)s < GMA_SORT_COUNT_ ? s : GMA_SORT_MEM].value(r, w);
}

/* The parameters' column is shown in the text table only when the trace
 * says which module holds which tensors (OWNER records). */
#define MODULE_COLS(params_shown)                                           \
    {                                                                       \
        { "module", "module", GMA_CT_STR, 1, 0 },                           \
        { "calls", "calls", GMA_CT_U64, 1, 0 },                             \
        { "self peak", "self_peak_bytes", GMA_CT_BYTES, 1, 0 },             \
        { "total peak", "total_peak_bytes", GMA_CT_BYTES, 1, 0 },           \
        { "params", "total_params_bytes", GMA_CT_BYTES, params_shown, 0 },  \
        { "self params", "self_params_bytes", GMA_CT_BYTES, 0, 0 },         \
        { "self alloc", "self_alloc_bytes", GMA_CT_BYTES, 1, 0 },           \
        { "total alloc", "total_alloc_bytes", GMA_CT_BYTES, 1, 0 },         \
        { "self freed", "self_freed_bytes", GMA_CT_BYTES, 1, 0 },           \
        { "total freed", "total_freed_bytes", GMA_CT_BYTES, 1, 0 },         \
        { "allocs", "self_alloc_count", GMA_CT_U64, 1, 0 },                 \
        { "total allocs", "total_alloc_count", GMA_CT_U64, 1, 0 },          \
        { "frees", "self_free_count", GMA_CT_U64, 0, 0 },                   \
        { "total frees", "total_free_count", GMA_CT_U64, 0, 0 },            \
        { "depth", "depth", GMA_CT_U64, 0, 0 },                             \
        { "pass", "pass", GMA_CT_STR, 0, 0 },                               \
    }
static const gma_col MCOLS[] = MODULE_COLS(0);
static const gma_col MCOLS_OWNED[] = MODULE_COLS(1);

#define NCOLS(a) (sizeof(a) / sizeof((a)[0]))

/* The module rows of r (folded to --depth), named and with their keys. */
static int module_rows(const gma_replay *r, gma_mrow **rows, size_t *n)
{
    *rows = NULL;
    *n = 0;
    if (!r->modules)
        return 0;
    if (peaks(r) != 0)
        return -1;
    return gma_mtree_rows(&mods(r)->tree, (unsigned)r->opt.depth, rows, n);
}

int gma_modules_table(const gma_replay *r, gma_table *t, uint64_t top)
{
    gma_table_init(t, r->opt.depth ? "Modules (nn.Module paths folded to --depth; total = self + children)"
                                   : "Modules (nn.Module paths; total = self + children)",
                   r->modules && mods(r)->seen_owners ? MCOLS_OWNED : MCOLS, NCOLS(MCOLS));
    gma_mrow *mr;
    size_t n;
    if (module_rows(r, &mr, &n) != 0)
        return -1;
    gma_keyrow *rows = calloc(n ? n : 1, sizeof(*rows));
    gma_strs names = { 0 };
    gma_buf b = { 0 };
    int err = !rows;
    const gma_mtree *tr = r->modules ? &mods(r)->tree : NULL;
    for (size_t i = 0; i < n && !err; i++) {
        gma_mtree_name(tr, mr[i].node, &b);
        rows[i].name = gma_strs_add(&names, gma_buf_str(&b), b.len);
        rows[i].key = module_key(r, &mr[i], r->opt.sort);
        rows[i].idx = i;
        err |= rows[i].name == (size_t)-1 || b.oom;
    }
    if (!err && gma_keyrows_sort(rows, n, &names, r->opt.sort == GMA_SORT_NAME) != 0)
        err = 1;
    t->total_rows = n;
    size_t keep = top && top < n ? (size_t)top : n;
    for (size_t j = 0; j < keep && !err; j++) {
        const gma_mrow *w = &mr[rows[j].idx];
        const gma_mnode *x = gma_mtree_node(tr, w->node);
        gma_cell *cl = gma_table_row(t);
        if (!cl) {
            err = 1;
            break;
        }
        gma_cell_str(t, &cl[0], gma_strs_get(&names, rows[j].name));
        cl[1].v.u = w->calls;
        cl[2].v.u = w->self.peak;
        cl[3].v.u = w->total.peak;
        cl[4].v.u = w->total.params;
        cl[5].v.u = w->self.params;
        cl[6].v.u = w->self.alloc_bytes;
        cl[7].v.u = w->total.alloc_bytes;
        cl[8].v.u = w->self.free_bytes;
        cl[9].v.u = w->total.free_bytes;
        cl[10].v.u = w->self.alloc_count;
        cl[11].v.u = w->total.alloc_count;
        cl[12].v.u = w->self.free_count;
        cl[13].v.u = w->total.free_count;
        cl[14].v.u = x->depth;
        gma_cell_str(t, &cl[15], w->node == 0 ? "" : x->bwd ? "backward" : "forward");
        /* "(no module)" is no call and no path */
        cl[1].null = cl[14].null = cl[15].null = w->node == 0;
    }
    free(rows);
    free(mr);
    gma_strs_free(&names);
    gma_buf_free(&b);
    return err ? -1 : 0;
}

int gma_lines_table(const gma_replay *r, gma_table *t, uint64_t top)
{
    if (r->modules && peaks(r) != 0)
        return -1;
    const gma_modules *m = mods(r);
    return gma_lines_build(r, m ? &m->lines : NULL, m ? &m->tree : NULL, t, top);
}


int gma_modules_diff_rows(const gma_replay *r, gma_sort s, gma_modules_row_fn fn, void *ctx)
{
    if (r->opt.by == GMA_BY_LINE) {
        if (r->modules && peaks(r) != 0)
            return -1;
        return gma_lines_each(r, r->modules ? &mods(r)->lines : NULL, s, fn, ctx);
    }
    gma_mrow *mr;
    size_t n;
    if (module_rows(r, &mr, &n) != 0)
        return -1;
    gma_buf b = { 0 };
    int err = 0;
    for (size_t i = 0; i < n && !err; i++) {
        const gma_mrow *w = &mr[i];
        const gma_sortkey *k = &MODULE_KEYS[(unsigned)s < GMA_SORT_COUNT_ ? s : GMA_SORT_MEM];
        int64_t v = (k->metric ? k->metric : k->value)(r, w);
        gma_mtree_name(&mods(r)->tree, w->node, &b);
        err = b.oom || fn(ctx, gma_buf_str(&b), b.len, v, w->calls) != 0;
    }
    free(mr);
    gma_buf_free(&b);
    return err ? -1 : 0;
}

const gma_view gma_view_module = { "module", MODULE_KEYS, { "module", NULL }, NULL, GMA_SORT_HELD, 0,
                                   gma_modules_table, 0, NULL };
const gma_view gma_view_line = { "line", gma_line_keys, { "line", NULL }, NULL, GMA_SORT_HELD, 0, gma_lines_table, 0, NULL };
