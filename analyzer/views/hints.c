/* Hints: the default report's short section (hints.h). */
#include "hints.h"
#include "tracestr.h"
#include "winsteps.h"

#include <string.h>

const char *const gma_hint_names[GMA_HINT_KINDS_] = { "temporary", "step-scoped", "reserved, unallocated", "growth" };

/* Owners of one class at the peak, merged by display name as insights does. */
typedef struct hint_owner {
    uint64_t key, bytes;
} hint_owner;

typedef struct owners {
    gma_map of;  /* key -> index */
    gma_vec v;   /* hint_owner */
} owners;

static int owner_add(owners *o, const gma_entry *e)
{
    uint64_t key = e->howner ? (1ull << 40) | e->howner : e->kname;
    uint32_t i;
    if (!gma_map_get(&o->of, key, &i)) {
        hint_owner *h = gma_vec_push(&o->v);
        if (!h || gma_map_put(&o->of, key, (uint32_t)(o->v.len - 1)) != 0)
            return -1;
        h->key = key;
        i = (uint32_t)(o->v.len - 1);
    }
    GMA_VEC_AT(&o->v, hint_owner, i).bytes += e->bytes;
    return 0;
}

static void owner_name(const gma_replay *r, uint64_t key, gma_buf *b)
{
    gma_buf_reset(b);
    if (key >> 40)
        gma_range_display(r, (uint32_t)key, r->opt.full_names, b);
    else
        gma_kernel_display(r, (uint32_t)key, r->opt.full_names, b);
}

/* The first owner (most bytes; ties: the smaller name) into h: each owner
 * id's display name computed once, ids of one name merged by its hash. */
static int owner_first(const gma_replay *r, owners *o, gma_hint *h)
{
    gma_buf a = { 0 };
    gma_strs names = { 0 };
    gma_map by_name;
    memset(&by_name, 0, sizeof(by_name));
    gma_vec merged; /* hint_owner: key = the name's offset in names */
    gma_vec_init(&merged, sizeof(hint_owner));
    int err = 0;
    for (size_t i = 0; i < o->v.len && !err; i++) {
        const hint_owner *x = &GMA_VEC_AT(&o->v, hint_owner, i);
        owner_name(r, x->key, &a);
        const char *s = gma_buf_str(&a);
        uint64_t hs = gma_hash_str(s);
        uint32_t k;
        hint_owner *m;
        if (gma_map_get(&by_name, hs, &k)) {
            m = &GMA_VEC_AT(&merged, hint_owner, k);
        } else {
            size_t off = gma_strs_add(&names, s, strlen(s));
            m = gma_vec_push(&merged);
            if (off == (size_t)-1 || !m || gma_map_put(&by_name, hs, (uint32_t)(merged.len - 1)) != 0) {
                err = 1;
                break;
            }
            *m = (hint_owner){ off, 0 };
        }
        m->bytes += x->bytes;
    }
    for (size_t i = 0; i < merged.len && !err; i++) {
        const hint_owner *m = &GMA_VEC_AT(&merged, hint_owner, i);
        const char *s = gma_strs_get(&names, m->key);
        if (m->bytes > h->owner_bytes || (m->bytes == h->owner_bytes && strcmp(s, h->owner) < 0)) {
            h->owner_bytes = m->bytes;
            snprintf(h->owner, sizeof(h->owner), "%s", s);
        }
    }
    gma_buf_free(&a);
    gma_strs_free(&names);
    gma_map_free(&by_name);
    gma_vec_free(&merged);
    return err ? -1 : 0;
}

static gma_hint *hint_new(gma_hints *h, unsigned dev, gma_hint_kind kind, uint64_t bytes, uint64_t whole)
{
    if (h->n >= GMA_MAX_HINTS)
        return NULL;
    gma_hint *x = &h->hint[h->n++];
    memset(x, 0, sizeof(*x));
    x->device = dev;
    x->kind = kind;
    x->bytes = bytes;
    x->whole = whole;
    return x;
}

static int over(uint64_t part, uint64_t whole, unsigned pct)
{
    return whole && part && (double)part * 100.0 >= (double)whole * pct;
}

/* The classes of device d's peak, and its class hints. */
static int dev_build(gma_hints *h, const gma_replay *r, unsigned d, int fw_src)
{
    const gma_dev *D = &r->dev[d];
    gma_hint_dev *H = &h->dev[h->ndev++];
    H->device = d;
    H->peak = D->peak;
    H->outside_known = r->fw || fw_src >= 0;
    owners o[2];
    memset(o, 0, sizeof(o));
    gma_vec_init(&o[0].v, sizeof(hint_owner));
    gma_vec_init(&o[1].v, sizeof(hint_owner));
    int err = 0;
    for (size_t i = 0; i < r->entries.len && !err; i++) {
        const gma_entry *e = &GMA_VEC_AT(&r->entries, gma_entry, i);
        if (!(e->flags & GMA_E_INUSE) || e->device != d || (e->flags & GMA_E_HOST))
            continue;
        int keep = (e->flags & GMA_E_KEEP_PEAK) != 0;
        if (!keep && !((e->flags & GMA_E_LIVE) && e->ord <= D->peak_ord))
            continue;
        if (fw_src >= 0 && e->source != fw_src)
            H->outside += e->bytes;
        else if (!keep || e->hclass == GMA_HC_PERSISTENT)
            H->persistent += e->bytes;
        else if (e->hclass == GMA_HC_TEMP)
            H->temp += e->bytes, err = owner_add(&o[0], e);
        else
            H->step += e->bytes, err = owner_add(&o[1], e);
    }
    if (r->fw && d < GMA_LAYER_DEVICES) {
        const gma_layer_dev *L = &r->layer.dev[d];
        H->reserved_known = 1;
        H->outside = gma_layer_outside(L->at_peak_cuda, L->at_peak_reserved);
        H->reserved = L->at_peak_reserved > L->allocated_peak ? L->at_peak_reserved - L->allocated_peak : 0;
        H->reserve = L->at_peak_reserved;
    }
    gma_hint *x;
    if (!err && over(H->temp, D->peak, GMA_HINT_TEMP_PCT) && (x = hint_new(h, d, GMA_HINT_TEMP, H->temp, D->peak)))
        err = owner_first(r, &o[0], x);
    if (!err && over(H->step, D->peak, GMA_HINT_STEP_PCT) && (x = hint_new(h, d, GMA_HINT_STEP, H->step, D->peak)))
        err = owner_first(r, &o[1], x);
    if (!err && over(H->reserved, H->reserve, GMA_HINT_RESERVED_PCT))
        hint_new(h, d, GMA_HINT_RESERVED, H->reserved, H->reserve);
    for (int k = 0; k < 2; k++) {
        gma_map_free(&o[k].of);
        gma_vec_free(&o[k].v);
    }
    return err;
}

/* The complete steps of the window with id wid (gma_window_full_steps), at
 * most 100,000 of them. */
static int steps_of(const gma_replay *r, uint64_t wid, uint64_t *lo, uint64_t *hi)
{
    for (size_t i = 0; i < r->windows.len; i++) {
        const gma_window *W = &GMA_VEC_AT(&r->windows, gma_window, i);
        if (W->id == wid)
            return gma_window_full_steps(r, W, lo, hi) && *hi - *lo < 100000;
    }
    return 0;
}

/* Growth: the live bytes (selected devices) after the last memory event of
 * each complete step of the peak's window, their least-squares slope. */
static void growth_build(gma_hints *h, const gma_replay *r, uint64_t wid, uint64_t peak, unsigned dev)
{
    uint64_t lo, hi;
    if (!steps_of(r, wid, &lo, &hi))
        return;
    double n = (double)(hi - lo + 1), xm = (n - 1) / 2, sxy = 0, sxx = 0;
    uint64_t y = 0, first = 0, prev = 0, grew = 0;
    for (uint64_t s = lo; s <= hi; s++) {
        uint32_t i;
        int has = gma_map_get(&r->step_of, s, &i) && GMA_VEC_AT(&r->steps, gma_steprow, i).has_live;
        if (has)
            y = GMA_VEC_AT(&r->steps, gma_steprow, i).live_end;
        else if (s == lo)
            return; /* nothing known at the first step's end */
        double x = (double)(s - lo) - xm;
        sxy += x * (double)y;
        sxx += x * x;
        if (s == lo)
            first = y;
        else if (y > prev)
            grew++;
        prev = y;
    }
    int64_t slope = sxx > 0 ? (int64_t)(sxy / sxx + (sxy >= 0 ? 0.5 : -0.5)) : 0;
    if (slope <= 0 || y <= first || grew * 2 < hi - lo || !over(y - first, peak, GMA_HINT_GROWTH_PCT))
        return;
    gma_hint *x = hint_new(h, dev, GMA_HINT_GROWTH, y - first, peak);
    if (!x)
        return;
    x->step_first = lo;
    x->step_last = hi;
    x->first = first;
    x->last = y;
    x->grew = grew;
    x->slope = slope;
}

int gma_hints_build(gma_hints *h, const gma_replay *r)
{
    memset(h, 0, sizeof(*h));
    int fw_src = gma_framework_source(r);
    uint64_t peaks = 0, wid = 0;
    unsigned first = GMA_HINT_ALL_DEVICES;
    for (unsigned d = 0; d < GMA_MAX_DEVICES; d++) {
        const gma_dev *D = &r->dev[d];
        if (!D->present || !D->has_peak || !gma_dev_selected(r, d))
            continue;
        if (first == GMA_HINT_ALL_DEVICES) {
            first = d;
            wid = D->peak_window;
        }
        peaks += D->peak;
        if (dev_build(h, r, d, fw_src) != 0)
            return -1;
    }
    if (h->ndev)
        growth_build(h, r, wid, peaks, h->ndev == 1 ? first : GMA_HINT_ALL_DEVICES);
    return 0;
}

double gma_hint_share(const gma_hint *h) { return h->whole ? (double)h->bytes / (double)h->whole : 0.0; }

void gma_hint_reason(const gma_hint *h, char *out, size_t cap)
{
    char b1[GMA_FMT_CAP], b2[GMA_FMT_CAP], b3[GMA_FMT_CAP];
    switch (h->kind) {
    case GMA_HINT_TEMP:
    case GMA_HINT_STEP:
        snprintf(out, cap, "%s%s%s%s%s",
                 h->kind == GMA_HINT_TEMP ? "freed in the op (or kernel gap) that made them"
                                          : "made and freed in the peak's step, live across ops: activations kept "
                                            "for backward",
                 h->owner[0] ? "; first owner " : "", h->owner, h->owner[0] ? ", " : "",
                 h->owner[0] ? gma_fmt_bytes(b1, h->owner_bytes) : "");
        break;
    case GMA_HINT_RESERVED:
        snprintf(out, cap, "held by the allocator's segments but in no tensor at the peak, of a %s reserve",
                 gma_fmt_bytes(b1, h->whole));
        break;
    default:
        snprintf(out, cap,
                 "live at the end of steps %llu-%llu: %s to %s, %s per step (least squares), higher in %llu of %llu "
                 "steps: a leak suspect",
                 (unsigned long long)h->step_first, (unsigned long long)h->step_last, gma_fmt_bytes(b1, h->first),
                 gma_fmt_bytes(b2, h->last), gma_fmt_sbytes(b3, h->slope, 1), (unsigned long long)h->grew,
                 (unsigned long long)(h->step_last - h->step_first));
        break;
    }
}

const char *gma_hint_try(const gma_hint *h)
{
    static const char *const t[GMA_HINT_KINDS_] = {
        "a fused or in-place variant of the first owners' ops; --insights for every owner and the what-if",
        "activation checkpointing; --insights for the owners and the peak with one layer recomputed",
        "--insights tells cache from fragmentation (and whether expandable_segments:True helps)",
        "--insights for the owners that grow, ranked by slope",
    };
    return t[h->kind];
}
