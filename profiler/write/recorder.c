/*
 * The flight recorder's ring of chunks (recorder.h).
 */
#include "recorder.h"

#include <stdlib.h>
#include <string.h>

typedef struct blob {
    uint8_t *p;
    size_t n, cap;
} blob;

typedef struct chunk {
    blob base, recs;
    uint64_t base_records, base_frames, records, frames;
    uint64_t step, start;
    int is_step;
} chunk;

struct gmp_rec {
    uint64_t steps, span_ns;
    size_t cap;
    chunk **c; /* oldest first; c[n - 1] is being filled */
    size_t n, ncap;
    size_t bytes, peak;
    int steps_seen; /* a step beyond the first began */
    int cut;        /* the cap dropped a chunk the rules would keep, and they have not dropped one since */
    uint64_t trimmed, lost;
};

#define BLOB_MIN (64u << 10)

static size_t chunk_bytes(const chunk *k) { return sizeof *k + k->base.cap + k->recs.cap; }

gmp_rec *gmp_rec_create(uint64_t steps, uint64_t span_ns, uint64_t cap_bytes)
{
    gmp_rec *r = calloc(1, sizeof *r);
    if (!r)
        return NULL;
    r->steps = steps;
    r->span_ns = span_ns;
    r->cap = (size_t)cap_bytes;
    return r;
}

static void chunk_free(chunk *k)
{
    if (!k)
        return;
    free(k->base.p);
    free(k->recs.p);
    free(k);
}

void gmp_rec_destroy(gmp_rec *r)
{
    if (!r)
        return;
    for (size_t i = 0; i < r->n; i++)
        chunk_free(r->c[i]);
    free(r->c);
    free(r);
}

static void drop_oldest(gmp_rec *r)
{
    r->bytes -= chunk_bytes(r->c[0]);
    chunk_free(r->c[0]);
    memmove(r->c, r->c + 1, (r->n - 1) * sizeof *r->c);
    r->n--;
}

/* Over the cap with `need` more bytes: drops the oldest chunks (never the
 * current one). */
static void make_room(gmp_rec *r, size_t need)
{
    while (r->n > 1 && r->bytes + need > r->cap) {
        drop_oldest(r);
        r->trimmed++;
        r->cut = 1;
    }
}

static int blob_add(gmp_rec *r, blob *b, const uint8_t *p, size_t n)
{
    if (b->n + n > b->cap) {
        size_t nc = b->cap ? b->cap : BLOB_MIN;
        while (nc < b->n + n)
            nc *= 2;
        make_room(r, nc - b->cap);
        uint8_t *q = r->bytes + (nc - b->cap) <= r->cap ? realloc(b->p, nc) : NULL;
        if (!q) {
            r->lost += n;
            return 0; /* never fails the writer: the frame is lost, counted */
        }
        r->bytes += nc - b->cap;
        b->p = q;
        b->cap = nc;
    }
    memcpy(b->p + b->n, p, n);
    b->n += n;
    if (r->bytes > r->peak)
        r->peak = r->bytes;
    return 0;
}

int gmp_rec_sink_records(void *ctx, const uint8_t *bytes, size_t n)
{
    gmp_rec *r = ctx;
    return r->n ? blob_add(r, &r->c[r->n - 1]->recs, bytes, n) : 0;
}

int gmp_rec_sink_baseline(void *ctx, const uint8_t *bytes, size_t n)
{
    gmp_rec *r = ctx;
    return r->n ? blob_add(r, &r->c[r->n - 1]->base, bytes, n) : 0;
}

/* The step rule: the chunks before the one where the (steps + 1)-th newest
 * step began go. The time rule (no steps): chunks that ended (the next one
 * began) more than span_ns before now go. */
static void apply_rules(gmp_rec *r, uint64_t now)
{
    size_t keep_from = 0;
    if (r->steps_seen) {
        uint64_t seen = 0;
        for (size_t i = r->n; i-- > 0;)
            if (r->c[i]->is_step && ++seen == r->steps + 1) {
                keep_from = i;
                break;
            }
    } else {
        while (keep_from + 1 < r->n && now > r->c[keep_from + 1]->start && now - r->c[keep_from + 1]->start > r->span_ns)
            keep_from++;
    }
    if (keep_from > 0)
        r->cut = 0;
    for (size_t i = 0; i < keep_from; i++)
        drop_oldest(r);
}

int gmp_rec_begin(gmp_rec *r, uint64_t step, int is_step, uint64_t ts)
{
    if (r->n == r->ncap) {
        size_t nc = r->ncap ? r->ncap * 2 : 16;
        chunk **c = realloc(r->c, nc * sizeof *c);
        if (!c)
            return -1;
        r->c = c;
        r->ncap = nc;
    }
    chunk *k = calloc(1, sizeof *k);
    if (!k)
        return -1;
    k->step = step;
    k->start = ts;
    k->is_step = is_step;
    if (is_step && r->n > 0)
        r->steps_seen = 1;
    r->c[r->n++] = k;
    r->bytes += sizeof *k;
    apply_rules(r, ts);
    make_room(r, 0);
    return 0;
}

void gmp_rec_set_counts(gmp_rec *r, uint64_t base_records, uint64_t base_frames, uint64_t records,
                        uint64_t frames)
{
    if (!r->n)
        return;
    chunk *k = r->c[r->n - 1];
    k->base_records = base_records;
    k->base_frames = base_frames;
    k->records = records;
    k->frames = frames;
}

size_t gmp_rec_current_bytes(const gmp_rec *r) { return r->n ? chunk_bytes(r->c[r->n - 1]) : 0; }
uint64_t gmp_rec_current_start(const gmp_rec *r) { return r->n ? r->c[r->n - 1]->start : 0; }
size_t gmp_rec_count(const gmp_rec *r) { return r->n; }

int gmp_rec_get(const gmp_rec *r, size_t i, gmp_rec_chunk *c)
{
    if (i >= r->n)
        return -1;
    const chunk *k = r->c[i];
    *c = (gmp_rec_chunk){k->base.p, k->recs.p, k->base.n, k->recs.n, k->base_records, k->base_frames,
                         k->records, k->frames, k->step, k->is_step};
    return 0;
}

void gmp_rec_get_stats(const gmp_rec *r, gmp_rec_stats *out)
{
    out->bytes = r->bytes;
    out->peak = r->peak;
    out->cap = r->cap;
    out->trimmed = r->cut ? r->trimmed : 0;
    out->lost_bytes = r->lost;
}
