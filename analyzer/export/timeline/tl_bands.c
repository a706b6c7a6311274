/* Band collection for the memory timeline (see tl_bands.h). */
#include "tl_bands.h"
#include "spill.h"

#include <stdlib.h>
#include <string.h>

void gtb_init(gtb_set *s, size_t max)
{
    memset(s, 0, sizeof(*s));
    s->max = max ? max : (size_t)1 << 24;
}

void gtb_free(gtb_set *s)
{
    gma_big_free(s->b);
    gma_map_free(&s->open);
    gma_map_free(&s->pend);
    memset(s, 0, sizeof(*s));
}

static uint64_t open_key(unsigned device, uint64_t addr) { return addr ^ ((uint64_t)device << 58); }

static int grow(gtb_set *s)
{
    size_t nc = s->cap ? s->cap * 2 : 4096;
    if (nc > s->max)
        nc = s->max;
    gtb_band *nb = gma_big_realloc(s->b, s->cap * sizeof(*nb), nc * sizeof(*nb));
    if (!nb)
        return -1;
    s->b = nb;
    s->cap = nc;
    return 0;
}

int gtb_alloc(gtb_set *s, const gtb_band *b, int baseline, int pending, uint64_t key)
{
    uint64_t ok = open_key(b->device, b->addr);
    uint32_t old;
    gma_big_tick(); /* the bands are a file's map: pages read or written so far leave the resident set */
    if (gma_map_get(&s->open, ok, &old)) {
        gtb_band *o = &s->b[old];
        if (baseline && o->bytes == b->bytes)
            return 0; /* the window repeats what is live: the band goes on */
        o->t1 = b->t0; /* its free was lost: the new allocation replaces it */
        gma_map_del(&s->open, ok, NULL);
    }
    if (s->n >= s->max) {
        s->left_out++;
        s->left_out_bytes += b->bytes;
        return 0;
    }
    if (s->n == s->cap && grow(s) != 0) {
        s->err = 1;
        return -1;
    }
    uint32_t i = (uint32_t)s->n;
    gtb_band *nb = &s->b[i];
    *nb = *b;
    nb->t1 = GTB_OPEN;
    nb->seq = s->n;
    nb->pend_next = 0;
    if (gma_map_put(&s->open, ok, i) != 0) {
        s->err = 1;
        return -1;
    }
    if (pending) {
        uint32_t head;
        if (gma_map_get(&s->pend, key, &head))
            nb->pend_next = head + 1;
        if (gma_map_put(&s->pend, key, i) != 0) {
            s->err = 1;
            return -1;
        }
    }
    s->n++;
    return 0;
}

void gtb_release(gtb_set *s, unsigned device, uint64_t addr, uint64_t ts)
{
    uint32_t i;
    if (gma_map_del(&s->open, open_key(device, addr), &i))
        s->b[i].t1 = ts;
}

void gtb_settle(gtb_set *s, uint64_t key, uint32_t kname)
{
    uint32_t i;
    if (!gma_map_del(&s->pend, key, &i))
        return;
    for (uint32_t k = i + 1; k;) {
        gtb_band *b = &s->b[k - 1];
        b->kname = kname;
        k = b->pend_next;
        b->pend_next = 0;
    }
}

static int u32_cmp(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

int gtb_release_range(gtb_set *s, unsigned device, uint64_t addr, uint64_t bytes, uint64_t ts)
{
    uint32_t i;
    if (gma_map_get(&s->open, open_key(device, addr), &i) && s->b[i].bytes == bytes) {
        gtb_release(s, device, addr, ts); /* the whole of one band: the common case */
        return 0;
    }
    /* the open bands it touches, collected first: the map changes below */
    uint32_t *hit = malloc((s->open.count ? s->open.count : 1) * sizeof(*hit));
    if (!hit) {
        s->err = 1;
        return -1;
    }
    size_t nh = 0;
    uint64_t end = addr + bytes;
    for (size_t k = 0; k < s->open.cap; k++) {
        if (!s->open.b[k].val)
            continue;
        const gtb_band *b = &s->b[s->open.b[k].val - 1];
        if (b->device == device && b->addr < end && addr < b->addr + b->bytes)
            hit[nh++] = (uint32_t)(s->open.b[k].val - 1);
    }
    qsort(hit, nh, sizeof(*hit), u32_cmp); /* in the order they were made, not the map's */
    int rc = 0;
    for (size_t h = 0; h < nh; h++) {
        gtb_band old = s->b[hit[h]];
        gtb_release(s, device, old.addr, ts);
        gtb_band part = old;
        part.t0 = ts;
        if (old.addr < addr) { /* the part below the range goes on */
            part.bytes = addr - old.addr;
            rc |= gtb_alloc(s, &part, 0, 0, 0);
        }
        if (end < old.addr + old.bytes) { /* and the part above it */
            part.addr = end;
            part.bytes = old.addr + old.bytes - end;
            rc |= gtb_alloc(s, &part, 0, 0, 0);
        }
    }
    free(hit);
    return rc ? -1 : 0;
}
