/* The framework layer's bookkeeping (layer.h). */
#include "layer.h"

#include <stdlib.h>
#include <string.h>

const char *const gma_layer_names[GMA_LAYER_COUNT_] = { "auto", "blocks", "segments" };

/* Entries sorted for holes over a whole trace: a run that reaches a new
 * peak very often with very many live blocks stops recomputing them. */
#define HOLES_BUDGET 100000000ull

/* ---- (device, address) -> bytes ------------------------------------------------ */

static uint64_t key_of(uint64_t device, uint64_t address) { return (address ^ (device << 56)) | 1u; }
static uint64_t key_dev(uint64_t k) { return k >> 56; }
static uint64_t key_addr(uint64_t k) { return (k & ((1ull << 56) - 1)) & ~1ull; }
static size_t home_of(const gma_amap *m, uint64_t k) { return (size_t)((k * 0x9e3779b97f4a7c15ull) >> 20) & (m->cap - 1); }

static size_t slot_of(const gma_amap *m, uint64_t k)
{
    size_t i = home_of(m, k);
    while (m->keys[i] && m->keys[i] != k)
        i = (i + 1) & (m->cap - 1);
    return i;
}

static int grow(gma_amap *m)
{
    size_t cap = m->cap ? m->cap * 2 : 1024;
    uint64_t *k = calloc(cap, sizeof *k), *v = calloc(cap, sizeof *v);
    if (!k || !v) {
        free(k);
        free(v);
        return -1;
    }
    gma_amap old = *m;
    m->keys = k, m->vals = v, m->cap = cap;
    for (size_t i = 0; i < old.cap; i++)
        if (old.keys[i]) {
            size_t s = slot_of(m, old.keys[i]);
            m->keys[s] = old.keys[i];
            m->vals[s] = old.vals[i];
        }
    free(old.keys);
    free(old.vals);
    return 0;
}

/* Removes slot i (backward-shift deletion keeps the probe chains whole). */
static void erase(gma_amap *m, size_t i)
{
    size_t j = i;
    m->n--;
    for (;;) {
        m->keys[i] = 0;
        for (;;) {
            j = (j + 1) & (m->cap - 1);
            if (!m->keys[j])
                return;
            size_t h = home_of(m, m->keys[j]);
            /* j's entry may move to i when its home is not in (i, j] */
            if (i <= j ? (h <= i || h > j) : (h <= i && h > j))
                break;
        }
        m->keys[i] = m->keys[j];
        m->vals[i] = m->vals[j];
        i = j;
    }
}

/* Puts k -> v; *old gets the bytes of an entry it replaced (a lost free),
 * else 0. -1 out of memory. */
static int amap_put(gma_amap *m, uint64_t k, uint64_t v, uint64_t *old)
{
    *old = 0;
    if ((m->n + 1) * 2 > m->cap && grow(m) != 0)
        return -1;
    size_t s = slot_of(m, k);
    if (m->keys[s])
        *old = m->vals[s];
    else
        m->n++;
    m->keys[s] = k;
    m->vals[s] = v;
    return 0;
}

/* Removes k; 1 and its bytes in *v when it was there. */
static int amap_take(gma_amap *m, uint64_t k, uint64_t *v)
{
    if (!m->cap)
        return 0;
    size_t s = slot_of(m, k);
    if (!m->keys[s])
        return 0;
    *v = m->vals[s];
    erase(m, s);
    return 1;
}

static void amap_clear(gma_amap *m)
{
    if (m->cap)
        memset(m->keys, 0, m->cap * sizeof *m->keys);
    m->n = 0;
}

static void amap_free(gma_amap *m)
{
    free(m->keys);
    free(m->vals);
    memset(m, 0, sizeof *m);
}

/* ---- holes at the peak ------------------------------------------------------------ */

typedef struct span {
    uint64_t addr, bytes;
} span;

static int cmp_span(const void *a, const void *b)
{
    const span *x = a, *y = b;
    return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* The device's entries of m, sorted by address (NULL with *n 0: none or no memory). */
static span *spans_of(const gma_amap *m, uint64_t dev, size_t *n, int *err)
{
    *n = 0;
    span *s = malloc((m->n ? m->n : 1) * sizeof *s);
    if (!s) {
        *err = 1;
        return NULL;
    }
    for (size_t i = 0; i < m->cap; i++)
        if (m->keys[i] && key_dev(m->keys[i]) == dev)
            s[(*n)++] = (span){ key_addr(m->keys[i]), m->vals[i] };
    qsort(s, *n, sizeof *s, cmp_span);
    return s;
}

static void hole(gma_layer_dev *d, uint64_t bytes)
{
    d->holes_count++;
    d->holes_bytes += bytes;
    for (int i = 0; i < GMA_LAYER_HOLES; i++)
        if (bytes > d->holes[i]) {
            memmove(&d->holes[i + 1], &d->holes[i], (GMA_LAYER_HOLES - 1 - (size_t)i) * sizeof d->holes[0]);
            d->holes[i] = bytes;
            return;
        }
}

/* The gaps between the live blocks of each segment, now (at the peak). */
static void holes_compute(gma_layer *l, unsigned dev)
{
    gma_layer_dev *d = &l->dev[dev];
    d->holes_dirty = 0;
    if (d->holes_state == GMA_HOLES_BUDGET)
        return;
    memset(d->holes, 0, sizeof d->holes);
    d->holes_count = d->holes_bytes = 0;
    if (d->expandable) {
        d->holes_state = GMA_HOLES_EXPANDABLE;
        return;
    }
    l->holes_work += l->blockmap.n + l->segmap.n;
    if (l->holes_work > HOLES_BUDGET) {
        d->holes_state = GMA_HOLES_BUDGET;
        return;
    }
    size_t ns, nb;
    span *S = spans_of(&l->segmap, dev, &ns, &l->err), *B = spans_of(&l->blockmap, dev, &nb, &l->err);
    d->holes_state = ns && S && B ? GMA_HOLES_OK : GMA_HOLES_NONE;
    for (size_t i = 0, j = 0; d->holes_state == GMA_HOLES_OK && i < ns; i++) {
        uint64_t cur = S[i].addr, end = S[i].addr + S[i].bytes;
        while (j < nb && B[j].addr < cur)
            j++;
        for (; j < nb && B[j].addr < end; j++) {
            if (B[j].addr > cur)
                hole(d, B[j].addr - cur);
            if (B[j].addr + B[j].bytes > cur)
                cur = B[j].addr + B[j].bytes;
        }
        if (end > cur)
            hole(d, end - cur);
    }
    free(S);
    free(B);
}

/* Before the allocated bytes or the segments change: the holes of a peak
 * just reached are those of this moment. */
static void settle(gma_layer *l, unsigned dev)
{
    if (l->dev[dev].holes_dirty)
        holes_compute(l, dev);
}

/* ---- the layer ------------------------------------------------------------------- */

void gma_layer_init(gma_layer *l) { memset(l, 0, sizeof *l); }

void gma_layer_free(gma_layer *l)
{
    amap_free(&l->cudamap);
    amap_free(&l->blockmap);
    amap_free(&l->segmap);
    memset(l, 0, sizeof *l);
}

void gma_layer_finish(gma_layer *l)
{
    for (unsigned i = 0; i < GMA_LAYER_DEVICES; i++)
        settle(l, i);
}

void gma_layer_window_begin(gma_layer *l)
{
    gma_layer_finish(l);
    for (unsigned i = 0; i < GMA_LAYER_DEVICES; i++) {
        gma_layer_dev *d = &l->dev[i];
        d->allocated = d->reserved = d->cuda = d->blocks = d->frees_pending = 0;
    }
    amap_clear(&l->cudamap);
    amap_clear(&l->blockmap);
    amap_clear(&l->segmap);
}

static gma_layer_dev *dev_of(gma_layer *l, uint64_t d) { return d < GMA_LAYER_DEVICES ? &l->dev[d] : NULL; }

static uint64_t sub_sat(uint64_t a, uint64_t b) { return a > b ? a - b : 0; }
static uint64_t dist(uint64_t a, uint64_t b) { return a > b ? a - b : b - a; }

static void alloc_peak(gma_layer_dev *d, uint64_t ts)
{
    if (d->allocated <= d->allocated_peak)
        return;
    d->allocated_peak = d->allocated;
    d->allocated_peak_ts = ts;
    d->at_peak_reserved = d->reserved;
    d->at_peak_cuda = d->cuda;
    d->holes_dirty = 1;
    d->has_peak_used = d->has_sample;
    d->peak_used = d->last_sample_used;
    d->peak_used_ts = d->last_sample_ts;
    d->want_after = 1;
}

void gma_layer_sample(gma_layer *l, uint64_t device, uint64_t ts, uint64_t used)
{
    gma_layer_dev *d = dev_of(l, device);
    if (!d)
        return;
    d->has_sample = 1;
    d->last_sample_ts = ts;
    d->last_sample_used = used;
    if (!d->want_after)
        return;
    /* the first reading after the peak, when nearer than the one before */
    d->want_after = 0;
    if (!d->has_peak_used || dist(ts, d->allocated_peak_ts) < dist(d->peak_used_ts, d->allocated_peak_ts)) {
        d->has_peak_used = 1;
        d->peak_used = used;
        d->peak_used_ts = ts;
    }
}

static void block_alloc(gma_layer *l, gma_layer_dev *d, const gmt_block *b)
{
    uint64_t old;
    if (amap_put(&l->blockmap, key_of(b->device, b->address), b->bytes, &old) != 0) {
        l->err = 1;
        return;
    }
    if (old) { /* the same block twice (a lost free): count it once */
        d->allocated = sub_sat(d->allocated, old);
        d->blocks = sub_sat(d->blocks, 1);
    }
    d->allocated += b->bytes;
    d->blocks++;
    alloc_peak(d, b->ts);
}

static void segment(gma_layer *l, gma_layer_dev *d, const gmt_block *b, int add)
{
    uint64_t k = key_of(b->device, b->address), old = 0;
    if (b->action == GMT_BLK_SEGMENT_MAP || b->action == GMT_BLK_SEGMENT_UNMAP)
        d->expandable = 1; /* pieces: no table by address */
    else if (add && amap_put(&l->segmap, k, b->bytes, &old) != 0)
        l->err = 1;
    else if (!add)
        (void)amap_take(&l->segmap, k, &old);
    if (add) {
        d->reserved = sub_sat(d->reserved, old) + b->bytes; /* old: the same segment twice */
        if (d->reserved > d->reserved_peak)
            d->reserved_peak = d->reserved;
    } else {
        d->reserved = sub_sat(d->reserved, b->bytes);
    }
}

int gma_layer_block(gma_layer *l, const gmt_block *b)
{
    l->seen = 1;
    gma_layer_dev *d = dev_of(l, b->device);
    if (!d)
        return 0;
    uint64_t v;
    switch (b->action) {
    case GMT_BLK_ALLOC:
        block_alloc(l, d, b);
        return 1;
    case GMT_BLK_FREE_REQUESTED:
        settle(l, (unsigned)b->device);
        (void)amap_take(&l->blockmap, key_of(b->device, b->address), &v);
        d->allocated = sub_sat(d->allocated, b->bytes);
        d->blocks = sub_sat(d->blocks, 1);
        d->frees_pending++;
        return 1;
    case GMT_BLK_FREE_COMPLETED:
        d->frees_pending = sub_sat(d->frees_pending, 1);
        return 0;
    case GMT_BLK_SEGMENT_ALLOC:
    case GMT_BLK_SEGMENT_MAP:
    case GMT_BLK_SEGMENT_FREE:
    case GMT_BLK_SEGMENT_UNMAP:
        settle(l, (unsigned)b->device);
        segment(l, d, b, b->action == GMT_BLK_SEGMENT_ALLOC || b->action == GMT_BLK_SEGMENT_MAP);
        return 0;
    case GMT_BLK_OOM:
        d->ooms++;
        if (b->bytes > d->oom_bytes)
            d->oom_bytes = b->bytes;
        return 0;
    default:
        return 0;
    }
}

void gma_layer_as_mem(const gmt_block *b, gmt_mem *m)
{
    memset(m, 0, sizeof *m);
    m->ts = b->ts;
    m->device = b->device;
    m->address = b->address;
    m->bytes = b->bytes;
    m->kind = GMT_MEMKIND_DEVICE;
    m->source = GMT_SRC_FRAMEWORK;
    m->flags = b->flags & GMT_BLKF_BASELINE ? GMT_MEMF_BASELINE : 0;
    m->tid = b->tid;
    m->range = b->range;
    m->seq = b->seq;
    m->step = b->step;
    /* a block from the allocator's snapshot: made before the bridge
     * attached, by a call nobody saw (its thread is the attaching one) */
    if (b->flags & GMT_BLKF_SEEDED) {
        m->flags |= GMT_MEMF_NO_THREAD;
        m->tid = m->range = 0;
    }
}

int gma_layer_cuda(gma_layer *l, const gmt_mem *m, int is_alloc)
{
    gma_layer_dev *d = dev_of(l, m->device);
    if (!d || !(m->kind == GMT_MEMKIND_DEVICE || m->kind == GMT_MEMKIND_DEVICE_STATIC ||
                m->kind == GMT_MEMKIND_MANAGED || m->kind == GMT_MEMKIND_ARRAY))
        return 0;
    uint64_t k = key_of(m->device, m->address), old;
    if (is_alloc) {
        if (amap_put(&l->cudamap, k, m->bytes, &old) != 0)
            return -1;
        d->cuda = sub_sat(d->cuda, old) + m->bytes; /* old: a lost free */
        if (d->cuda > d->cuda_peak)
            d->cuda_peak = d->cuda;
        return 0;
    }
    if (amap_take(&l->cudamap, k, &old))
        d->cuda = sub_sat(d->cuda, old);
    return 0;
}
