/* The framework layer's bookkeeping (layer.h). */
#include "layer.h"

#include <stdlib.h>
#include <string.h>

void gma_layer_init(gma_layer *l) { memset(l, 0, sizeof *l); }

void gma_layer_free(gma_layer *l)
{
    free(l->keys);
    free(l->vals);
    memset(l, 0, sizeof *l);
}

void gma_layer_window_begin(gma_layer *l)
{
    for (unsigned i = 0; i < GMA_LAYER_DEVICES; i++) {
        gma_layer_dev *d = &l->dev[i];
        d->allocated = d->reserved = d->cuda = d->blocks = d->frees_pending = 0;
    }
    if (l->cap)
        memset(l->keys, 0, l->cap * sizeof *l->keys);
    l->n = 0;
}

static gma_layer_dev *dev_of(gma_layer *l, uint64_t d) { return d < GMA_LAYER_DEVICES ? &l->dev[d] : NULL; }

static void alloc_peak(gma_layer_dev *d, uint64_t ts)
{
    if (d->allocated > d->allocated_peak) {
        d->allocated_peak = d->allocated;
        d->allocated_peak_ts = ts;
        d->at_peak_reserved = d->reserved;
        d->at_peak_cuda = d->cuda;
    }
}

static uint64_t sub_sat(uint64_t a, uint64_t b) { return a > b ? a - b : 0; }

int gma_layer_block(gma_layer *l, const gmt_block *b)
{
    l->seen = 1;
    gma_layer_dev *d = dev_of(l, b->device);
    if (!d)
        return 0;
    switch (b->action) {
    case GMT_BLK_ALLOC:
        d->allocated += b->bytes;
        d->blocks++;
        alloc_peak(d, b->ts);
        return 1;
    case GMT_BLK_FREE_REQUESTED:
        d->allocated = sub_sat(d->allocated, b->bytes);
        d->blocks = sub_sat(d->blocks, 1);
        d->frees_pending++;
        return 1;
    case GMT_BLK_FREE_COMPLETED:
        d->frees_pending = sub_sat(d->frees_pending, 1);
        return 0;
    case GMT_BLK_SEGMENT_ALLOC:
    case GMT_BLK_SEGMENT_MAP:
        d->reserved += b->bytes;
        if (d->reserved > d->reserved_peak)
            d->reserved_peak = d->reserved;
        return 0;
    case GMT_BLK_SEGMENT_FREE:
    case GMT_BLK_SEGMENT_UNMAP:
        d->reserved = sub_sat(d->reserved, b->bytes);
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
}

/* ---- CUDA's allocations by address ------------------------------------------ */

static uint64_t key_of(const gmt_mem *m) { return (m->address ^ (m->device << 56)) | 1u; }

static size_t slot_of(const gma_layer *l, uint64_t k)
{
    size_t i = (size_t)((k * 0x9e3779b97f4a7c15ull) >> 20) & (l->cap - 1);
    while (l->keys[i] && l->keys[i] != k)
        i = (i + 1) & (l->cap - 1);
    return i;
}

static int grow(gma_layer *l)
{
    size_t cap = l->cap ? l->cap * 2 : 1024;
    uint64_t *k = calloc(cap, sizeof *k), *v = calloc(cap, sizeof *v);
    if (!k || !v) {
        free(k);
        free(v);
        return -1;
    }
    gma_layer old = *l;
    l->keys = k, l->vals = v, l->cap = cap;
    for (size_t i = 0; i < old.cap; i++)
        if (old.keys[i]) {
            size_t s = slot_of(l, old.keys[i]);
            l->keys[s] = old.keys[i];
            l->vals[s] = old.vals[i];
        }
    free(old.keys);
    free(old.vals);
    return 0;
}

/* Removes key k (backward-shift deletion keeps the probe chains whole). */
static void erase(gma_layer *l, size_t i)
{
    size_t j = i;
    for (;;) {
        l->keys[i] = 0;
        for (;;) {
            j = (j + 1) & (l->cap - 1);
            if (!l->keys[j])
                return;
            size_t h = (size_t)((l->keys[j] * 0x9e3779b97f4a7c15ull) >> 20) & (l->cap - 1);
            /* j's entry may move to i when its home is not in (i, j] */
            if (i <= j ? (h <= i || h > j) : (h <= i && h > j))
                break;
        }
        l->keys[i] = l->keys[j];
        l->vals[i] = l->vals[j];
        i = j;
    }
}

int gma_layer_cuda(gma_layer *l, const gmt_mem *m, int is_alloc)
{
    gma_layer_dev *d = dev_of(l, m->device);
    if (!d || !(m->kind == GMT_MEMKIND_DEVICE || m->kind == GMT_MEMKIND_DEVICE_STATIC ||
                m->kind == GMT_MEMKIND_MANAGED || m->kind == GMT_MEMKIND_ARRAY))
        return 0;
    uint64_t k = key_of(m);
    if (is_alloc) {
        if ((l->n + 1) * 2 > l->cap && grow(l) != 0)
            return -1;
        size_t s = slot_of(l, k);
        if (l->keys[s])
            d->cuda = sub_sat(d->cuda, l->vals[s]); /* a lost free */
        else
            l->n++;
        l->keys[s] = k;
        l->vals[s] = m->bytes;
        d->cuda += m->bytes;
        if (d->cuda > d->cuda_peak)
            d->cuda_peak = d->cuda;
        return 0;
    }
    if (!l->cap)
        return 0;
    size_t s = slot_of(l, k);
    if (!l->keys[s])
        return 0;
    d->cuda = sub_sat(d->cuda, l->vals[s]);
    erase(l, s);
    l->n--;
    return 0;
}
