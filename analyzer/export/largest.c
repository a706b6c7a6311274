/*
 * The N largest allocations of a pass (largest.h).
 */
#include "largest.h"

#include <stdlib.h>
#include <string.h>

void gma_largest_init(gma_largest *l, uint64_t n)
{
    memset(l, 0, sizeof(*l));
    l->cap = n;
}

void gma_largest_release(gma_largest *l)
{
    free(l->slot);
    free(l->heap);
    gma_map_free(&l->at);
    memset(l, 0, sizeof(*l));
}

/* a below b: smaller, or as large and later (evicted first) */
static int below(const gma_largest *l, uint32_t a, uint32_t b)
{
    const gma_big *x = &l->slot[a], *y = &l->slot[b];
    return x->bytes != y->bytes ? x->bytes < y->bytes : x->seq > y->seq;
}

static void place(gma_largest *l, size_t i, uint32_t s)
{
    l->heap[i] = s;
    l->slot[s].hpos = (uint32_t)i;
}

static void sift_up(gma_largest *l, size_t i)
{
    uint32_t s = l->heap[i];
    while (i > 0) {
        size_t p = (i - 1) / 2;
        if (!below(l, s, l->heap[p]))
            break;
        place(l, i, l->heap[p]);
        i = p;
    }
    place(l, i, s);
}

static void sift_down(gma_largest *l, size_t i)
{
    uint32_t s = l->heap[i];
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= l->n)
            break;
        if (c + 1 < l->n && below(l, l->heap[c + 1], l->heap[c]))
            c++;
        if (!below(l, l->heap[c], s))
            break;
        place(l, i, l->heap[c]);
        i = c;
    }
    place(l, i, s);
}

static int grow(gma_largest *l)
{
    size_t room = l->room ? l->room * 2 : 1024;
    if (room > l->cap)
        room = (size_t)l->cap;
    gma_big *s = realloc(l->slot, room * sizeof(*s));
    if (!s)
        return -1;
    l->slot = s;
    uint32_t *h = realloc(l->heap, room * sizeof(*h));
    if (!h)
        return -1;
    l->heap = h;
    l->room = room;
    return 0;
}

int gma_largest_alloc(gma_largest *l, const gma_big *b, int baseline, int first_baseline)
{
    uint32_t s;
    if (gma_map_get(&l->at, b->key, &s)) {
        gma_big *k = &l->slot[s];
        if (baseline && k->state == GMA_BIG_DROPPED && k->bytes == b->bytes) {
            k->state = GMA_BIG_OPEN; /* the window's baseline repeats it: it goes on */
            k->entry = b->entry;
            return 0;
        }
        /* that one has ended (replaced without a free: it ends now); this is another */
        if (k->state == GMA_BIG_OPEN) {
            k->state = GMA_BIG_DROPPED;
            k->t1 = b->t0;
        }
        gma_map_del(&l->at, b->key, NULL);
        k->mapped = 0;
    }
    if (baseline && !first_baseline)
        return 0; /* a repeat of one seen before and not kept */
    l->offered++;
    l->bytes_offered += b->bytes;
    if (l->cap == 0)
        return 0;
    if (l->n == l->cap) {
        uint32_t top = l->heap[0];
        if (b->bytes <= l->slot[top].bytes)
            return 0;
        if (l->slot[top].mapped)
            gma_map_del(&l->at, l->slot[top].key, NULL);
        s = top;
    } else {
        if (l->n == l->room && grow(l) != 0)
            return -1;
        s = (uint32_t)l->n;
    }
    /* the map first: on failure nothing has changed but an evicted one's key */
    if (gma_map_put(&l->at, b->key, s) != 0)
        return -1;
    l->slot[s] = *b;
    l->slot[s].seq = l->seq++;
    l->slot[s].state = GMA_BIG_OPEN;
    l->slot[s].mapped = 1;
    if (s == l->n) {
        l->heap[l->n++] = s;
        sift_up(l, l->n - 1);
    } else {
        sift_down(l, 0);
    }
    return 0;
}

void gma_largest_freed(gma_largest *l, uint64_t key, uint64_t ts, uint64_t live1, uint32_t kname)
{
    uint32_t s;
    if (!gma_map_del(&l->at, key, &s))
        return;
    gma_big *k = &l->slot[s];
    k->mapped = 0;
    k->state = GMA_BIG_FREED;
    k->t1 = ts;
    k->live1 = live1;
    k->kname = kname;
}

void gma_largest_dropped(gma_largest *l, uint64_t key, uint64_t ts, uint32_t kname)
{
    uint32_t s;
    if (!gma_map_get(&l->at, key, &s))
        return;
    gma_big *k = &l->slot[s];
    k->state = GMA_BIG_DROPPED; /* kept in the map: a baseline may carry it on */
    k->t1 = ts;
    k->kname = kname;
}

static int by_start(const void *pa, const void *pb)
{
    const gma_big *a = pa, *b = pb;
    if (a->dev != b->dev)
        return a->dev < b->dev ? -1 : 1;
    if (a->t0 != b->t0)
        return a->t0 < b->t0 ? -1 : 1;
    return a->seq < b->seq ? -1 : a->seq > b->seq;
}

/* The lanes' ends: a min-heap on (end, lane). */
typedef struct {
    uint64_t end;
    uint32_t lane;
} lane_end;

static int lane_below(const lane_end *a, const lane_end *b)
{
    return a->end != b->end ? a->end < b->end : a->lane < b->lane;
}

static void lanes_down(lane_end *h, size_t n, size_t i)
{
    lane_end x = h[i];
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= n)
            break;
        if (c + 1 < n && lane_below(&h[c + 1], &h[c]))
            c++;
        if (!lane_below(&h[c], &x))
            break;
        h[i] = h[c];
        i = c;
    }
    h[i] = x;
}

static void lanes_up(lane_end *h, size_t i)
{
    lane_end x = h[i];
    while (i > 0 && lane_below(&x, &h[(i - 1) / 2])) {
        h[i] = h[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    h[i] = x;
}

const gma_big *gma_largest_finish(gma_largest *l, uint64_t end_ts, uint32_t *nlanes, size_t *n, int *oom)
{
    *n = 0;
    *oom = 0;
    memset(nlanes, 0, 256 * sizeof(*nlanes));
    if (!l->n)
        return NULL;
    lane_end *h = malloc(l->n * sizeof(*h));
    if (!h) {
        *oom = 1;
        return NULL;
    }
    qsort(l->slot, l->n, sizeof(*l->slot), by_start);
    gma_map_free(&l->at); /* the slots moved: the map and heap are done with */
    memset(&l->at, 0, sizeof(l->at));
    size_t nh = 0;
    for (size_t i = 0; i < l->n; i++) {
        gma_big *b = &l->slot[i];
        if (i == 0 || b->dev != l->slot[i - 1].dev)
            nh = 0; /* a device's lanes are its own */
        if (b->state == GMA_BIG_OPEN)
            b->t1 = end_ts > b->t0 ? end_ts : b->t0;
        if (b->t1 < b->t0)
            b->t1 = b->t0;
        if (nh && h[0].end <= b->t0) { /* the lane that came free first */
            b->lane = h[0].lane;
            h[0].end = b->t1;
            lanes_down(h, nh, 0);
        } else {
            b->lane = nlanes[b->dev]++;
            h[nh] = (lane_end){ b->t1, b->lane };
            lanes_up(h, nh++);
        }
    }
    free(h);
    *n = l->n;
    return l->slot;
}
