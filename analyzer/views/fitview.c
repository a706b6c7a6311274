/* --fit: the peak's growth with a size, from runs at several sizes (fitview.h). */
#include "fitview.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "diff.h"
#include "layer.h"
#include "print.h"
#include "view.h"

/* ---- the command line ----------------------------------------------------- */

static int parse_pos(const char *s, size_t n, uint64_t *out)
{
    if (n == 0 || n > 19)
        return -1;
    uint64_t v = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9')
            return -1;
        v = v * 10 + (uint64_t)(s[i] - '0');
    }
    *out = v;
    return 0;
}

int gma_fit_parse(const char *arg, gma_fit_point *pts, size_t cap, size_t *n, char *err, size_t errcap)
{
    size_t k = 0;
    int steps = -1; /* unknown, then 0 (sizes) or 1 (STEP=SIZE) */
    for (const char *p = arg;;) {
        const char *end = strchr(p, ',');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        const char *eq = memchr(p, '=', len);
        uint64_t step = 0, size = 0;
        int is_step = eq != NULL;
        if (k == cap) {
            snprintf(err, errcap, "--fit: more than %zu sizes", cap);
            return -1;
        }
        if (steps >= 0 && steps != is_step) {
            snprintf(err, errcap, "--fit: '%s' mixes SIZE and STEP=SIZE; give sizes (one per trace) or STEP=SIZE "
                                  "pairs (steps of one trace)", arg);
            return -1;
        }
        steps = is_step;
        if ((is_step && parse_pos(p, (size_t)(eq - p), &step) != 0) ||
            parse_pos(is_step ? eq + 1 : p, is_step ? len - (size_t)(eq - p) - 1 : len, &size) != 0 || size == 0 ||
            size > GMA_FIT_SIZE_MAX) {
            snprintf(err, errcap, "--fit: '%.*s' is not %s (a size is an integer from 1 to 2^40)", (int)len, p,
                     is_step ? "STEP=SIZE" : "a size");
            return -1;
        }
        for (size_t i = 0; i < k; i++)
            if (pts[i].size == size) {
                snprintf(err, errcap, "--fit: the size %llu is given twice; each run needs its own size",
                         (unsigned long long)size);
                return -1;
            }
        pts[k].path = NULL;
        pts[k].step = is_step ? (int64_t)step : -1;
        pts[k].size = size;
        k++;
        if (!end)
            break;
        p = end + 1;
    }
    if (k < 2) {
        snprintf(err, errcap, "--fit: '%s' names one size; a law needs runs at two sizes at least (three tell a "
                              "line from a quadratic)", arg);
        return -1;
    }
    *n = k;
    return 0;
}

int gma_fit_parse_bytes(const char *arg, uint64_t *out)
{
    static const char *const suf[] = { "", "K", "M", "G", "T" };
    size_t digits = strspn(arg, "0123456789");
    uint64_t v;
    if (parse_pos(arg, digits, &v) != 0)
        return -1;
    const char *s = arg + digits;
    for (int e = 0; e < 5; e++) {
        size_t L = strlen(suf[e]);
        if (strncmp(s, suf[e], L) != 0)
            continue;
        const char *rest = s + L;
        if (*rest && !(e > 0 && (strcmp(rest, "iB") == 0 || strcmp(rest, "B") == 0)))
            continue;
        if (e > 0 && !*rest && L == 0)
            continue;
        if (v > (UINT64_MAX >> (10 * e)))
            return -1;
        *out = v << (10 * e);
        return 0;
    }
    return -1;
}

/* ---- one run -------------------------------------------------------------- */

typedef struct fit_owner {
    size_t name;   /* in the view's strs */
    uint64_t key;  /* hash of the name */
    double y[GMA_FIT_MAX_POINTS];
    gma_fit fit;
    double pred, growth;
} fit_owner;

typedef struct fit_state {
    gma_strs names;
    gma_vec owners;  /* fit_owner */
    gma_map of;      /* name hash -> owner index */
    size_t point;    /* the run being read */
    int k;           /* owners are kernels */
    uint64_t held;   /* bytes the run's owners hold */
} fit_state;

static int owner_add(void *ctx, const char *name, size_t len, uint64_t bytes)
{
    fit_state *s = ctx;
    uint64_t key = gma_hash_bytes(name, len);
    uint32_t i;
    /* a name whose hash another name took probes on */
    while (gma_map_get(&s->of, key, &i)) {
        const fit_owner *o = &GMA_VEC_AT(&s->owners, fit_owner, i);
        const char *on = gma_strs_get(&s->names, o->name);
        if (strlen(on) == len && memcmp(on, name, len) == 0)
            break;
        key++;
    }
    if (!gma_map_get(&s->of, key, &i)) {
        fit_owner *o = gma_vec_push(&s->owners);
        if (!o)
            return -1;
        o->name = gma_strs_add(&s->names, name, len);
        o->key = key;
        i = (uint32_t)(s->owners.len - 1);
        if (o->name == (size_t)-1 || gma_map_put(&s->of, key, i) != 0)
            return -1;
    }
    GMA_VEC_AT(&s->owners, fit_owner, i).y[s->point] += (double)bytes;
    s->held += bytes;
    return 0;
}

/* Has the trace any allocation made inside a range, at the peak? */
static int range_seen(void *ctx, const char *name, size_t len, uint64_t bytes)
{
    (void)bytes;
    int *seen = ctx;
    *seen |= !(len == 14 && memcmp(name, "(unattributed)", 14) == 0);
    return 0;
}

/* Replays point i into run u and its owners. Exit status as gma_fit_run. */
static int read_point(const gma_opts *base, const gma_fit_point *p, size_t i, gma_fit_run_info *u, fit_state *s,
                      int *by_range)
{
    static gma_replay r; /* large: kept off the stack */
    gma_opts opt = *base;
    char msg[600];
    if (p->step >= 0)
        opt.step = p->step;
    if (gma_replay_open(&r, &opt, p->path) != 0) {
        fprintf(stderr, "gmem-analyze: out of memory\n");
        return GMA_EXIT_BAD_INPUT;
    }
    if (gma_replay_read(&r, msg, sizeof(msg)) != 0) {
        fprintf(stderr, "gmem-analyze: %s\n", msg);
        gma_replay_free(&r);
        return GMA_EXIT_BAD_INPUT;
    }
    int rc = 0;
    char w[400];
    if (gma_trace_warning(&r, w, sizeof(w))) {
        fprintf(stderr, "gmem-analyze: warning: %s: %s\n", p->path, w);
        rc = GMA_EXIT_DAMAGED;
    }
    u->path = p->path;
    u->step = p->step;
    u->size = p->size;
    u->has_reserved = r.fw;
    for (unsigned d = 0; d < GMA_MAX_DEVICES; d++) {
        const gma_dev *D = &r.dev[d];
        if (!D->has_peak || !gma_dev_selected(&r, d))
            continue;
        u->peak += D->peak;
        if (D->peak >= u->dev_peak) { /* the device that peaks highest gives the capacity */
            u->dev_peak = D->peak;
            u->device = d;
            u->total_mem = D->total_mem;
        }
        if (r.fw && d < GMA_LAYER_DEVICES) {
            const gma_layer_dev *L = &r.layer.dev[d];
            u->reserved += L->reserved_peak;
            u->outside += gma_layer_outside(L->at_peak_cuda, L->at_peak_reserved);
        }
    }
    if (*by_range < 0) { /* decided by the first run: ranges where it has them */
        int seen = 0;
        if (gma_held_each(&r, 0, range_seen, &seen) != 0)
            rc = GMA_EXIT_BAD_INPUT;
        *by_range = seen;
        s->k = !seen;
    }
    s->point = i;
    s->held = 0;
    if (rc != GMA_EXIT_BAD_INPUT && gma_held_each(&r, s->k, owner_add, s) != 0) {
        fprintf(stderr, "gmem-analyze: out of memory while reading %s\n", p->path);
        rc = GMA_EXIT_BAD_INPUT;
    }
    u->held = s->held;
    gma_replay_free(&r);
    return rc;
}

/* ---- the fit -------------------------------------------------------------- */

static int growth_cmp(const void *pa, const void *pb, void *pc)
{
    const fit_owner *a = pa, *b = pb;
    const gma_strs *names = pc;
    if (a->growth != b->growth)
        return a->growth > b->growth ? -1 : 1;
    return strcmp(gma_strs_get(names, a->name), gma_strs_get(names, b->name));
}

static int point_cmp(const void *pa, const void *pb, void *pc)
{
    (void)pc;
    const gma_fit_point *a = pa, *b = pb;
    return a->size < b->size ? -1 : a->size > b->size ? 1 : 0;
}

static uint64_t clamp_bytes(double v) { return v <= 0 ? 0 : v >= 1.8e19 ? UINT64_MAX : (uint64_t)llround(v); }

static int fit_total(gma_fit_total *t, const char *what, const double *x, const double *y, size_t n, double at)
{
    t->what = what;
    if (gma_fit_points(x, y, n, &t->fit) != 0)
        return -1;
    t->pred = gma_fit_eval(&t->fit, at);
    t->pred_bytes = clamp_bytes(t->pred);
    t->present = 1;
    return 0;
}

static int owners_table(gma_fit_view *v, fit_state *s, const double *x, size_t n, double at)
{
    size_t nc = 0;
    gma_col *c = v->cols;
    c[nc++] = (gma_col){ "owner", "owner", GMA_CT_STR, 1, 0 };
    c[nc++] = (gma_col){ "law", "law", GMA_CT_STR, 1, 0 };
    for (size_t i = 0; i < n; i++) {
        snprintf(v->titles[i], sizeof v->titles[i], "at %llu", (unsigned long long)x[i]);
        snprintf(v->keys[i], sizeof v->keys[i], "bytes_at_%llu", (unsigned long long)x[i]);
        c[nc++] = (gma_col){ v->titles[i], v->keys[i], GMA_CT_BYTES, 1, 0 };
    }
    snprintf(v->titles[n], sizeof v->titles[n], "at %llu (predicted)", (unsigned long long)v->at);
    c[nc++] = (gma_col){ v->titles[n], "predicted_bytes", GMA_CT_BYTES, 1, 0 };
    c[nc++] = (gma_col){ "growth", "growth_bytes", GMA_CT_DBYTES, 1, 0 };
    c[nc++] = (gma_col){ "c0", "c0", GMA_CT_REAL, 0, 0 };
    c[nc++] = (gma_col){ "c1", "c1", GMA_CT_REAL, 0, 0 };
    c[nc++] = (gma_col){ "c2", "c2", GMA_CT_REAL, 0, 0 };
    c[nc++] = (gma_col){ "max miss", "max_miss_bytes", GMA_CT_BYTES, 0, 0 };
    c[nc++] = (gma_col){ "fits", "fits", GMA_CT_U64, 0, 0 };
    gma_table_init(&v->table, "owners", v->cols, nc);
    for (size_t i = 0; i < s->owners.len; i++) {
        fit_owner *o = &GMA_VEC_AT(&s->owners, fit_owner, i);
        if (gma_fit_points(x, o->y, n, &o->fit) != 0)
            return -1;
        o->pred = gma_fit_eval(&o->fit, at);
        o->growth = o->pred - o->y[n - 1];
    }
    if (gma_msort(s->owners.data, s->owners.len, sizeof(fit_owner), growth_cmp, &s->names) != 0)
        return -1;
    v->table.total_rows = s->owners.len;
    for (size_t i = 0; i < s->owners.len && (!v->top || i < v->top); i++) {
        const fit_owner *o = &GMA_VEC_AT(&s->owners, fit_owner, i);
        gma_cell *cell = gma_table_row(&v->table);
        if (!cell)
            return -1;
        size_t k = 0;
        gma_cell_str(&v->table, &cell[k++], gma_strs_get(&s->names, o->name));
        gma_cell_str(&v->table, &cell[k++], gma_law_names[o->fit.law]);
        for (size_t p = 0; p < n; p++)
            cell[k++].v.u = clamp_bytes(o->y[p]);
        cell[k++].v.u = clamp_bytes(o->pred);
        cell[k++].v.i = (int64_t)llround(fmax(fmin(o->growth, 9.2e18), -9.2e18));
        for (int j = 0; j < 3; j++)
            cell[k++].v.d = o->fit.c[j];
        cell[k++].v.u = clamp_bytes(o->fit.max_resid);
        cell[k++].v.u = (uint64_t)o->fit.fits;
    }
    return 0;
}

/* The device: its bytes less what the runs show outside the allocator, and
 * the largest size whose predicted reserve (or peak) stays within them. */
static void capacity(gma_fit_view *v, const gma_fit_request *q)
{
    uint64_t total = UINT64_MAX, outside = 0;
    for (size_t i = 0; i < v->n; i++) {
        const gma_fit_run_info *u = &v->runs[i];
        if (u->total_mem && u->total_mem < total)
            total = u->total_mem;
        outside = u->outside > outside ? u->outside : outside;
    }
    v->capacity_given = q->capacity != 0;
    v->device_total = q->capacity ? q->capacity : total == UINT64_MAX ? 0 : total;
    v->outside = outside;
    if (!v->device_total)
        return;
    v->capacity = v->device_total > outside ? v->device_total - outside : 0;
    const gma_fit_total *t = v->reserved.present ? &v->reserved : &v->allocated;
    v->largest = gma_fit_largest(&t->fit, 1, (double)v->capacity);
    v->has_largest = 1;
}

static int print_view(FILE *f, const gma_printer *p, const gma_fit_view *v)
{
    errno = 0;
    int rc = p->fit(f, v);
    return rc || ferror(f) || fflush(f) != 0 ? -1 : 0;
}

int gma_fit_run(FILE *f, const gma_printer *p, const gma_opts *opt, const gma_fit_request *q)
{
    static gma_fit_view v;
    static gma_fit_point pts[GMA_FIT_MAX_POINTS];
    fit_state s = { 0 };
    memset(&v, 0, sizeof v);
    gma_vec_init(&s.owners, sizeof(fit_owner));
    if (q->n < 2 || q->n > GMA_FIT_MAX_POINTS)
        return GMA_EXIT_USAGE;
    memcpy(pts, q->pts, q->n * sizeof *pts);
    if (gma_msort(pts, q->n, sizeof *pts, point_cmp, NULL) != 0)
        return GMA_EXIT_BAD_INPUT;
    int by_range = q->by_given ? opt->by == GMA_BY_RANGE : -1;
    s.k = q->by_given && opt->by == GMA_BY_KERNEL;
    int rc = 0, damaged = 0;
    v.n = q->n;
    for (size_t i = 0; i < q->n && !rc; i++) {
        int r = read_point(opt, &pts[i], i, &v.runs[i], &s, &by_range);
        if (r == GMA_EXIT_DAMAGED)
            damaged = 1;
        else if (r)
            rc = r;
    }
    double x[GMA_FIT_MAX_POINTS], yp[GMA_FIT_MAX_POINTS], yr[GMA_FIT_MAX_POINTS];
    int reserved = 1;
    for (size_t i = 0; i < q->n && !rc; i++) {
        x[i] = (double)pts[i].size;
        yp[i] = (double)v.runs[i].peak;
        yr[i] = (double)v.runs[i].reserved;
        reserved &= v.runs[i].has_reserved;
        /* what no owner in the window holds: the baseline, other devices */
        if (v.runs[i].peak > v.runs[i].held && rc == 0) {
            s.point = i;
            s.held = 0;
            if (owner_add(&s, "(live before the window)", 24, v.runs[i].peak - v.runs[i].held) != 0)
                rc = GMA_EXIT_BAD_INPUT;
        }
    }
    v.at = q->at ? q->at : 2 * pts[q->n - 1].size;
    v.by = s.k ? "kernel" : "range";
    v.per_step = pts[0].step >= 0;
    v.top = opt->top;
    if (!rc && (fit_total(&v.allocated, "peak", x, yp, q->n, (double)v.at) != 0 ||
                (reserved && fit_total(&v.reserved, "reserved peak", x, yr, q->n, (double)v.at) != 0) ||
                owners_table(&v, &s, x, q->n, (double)v.at) != 0)) {
        fprintf(stderr, "gmem-analyze: out of memory while fitting\n");
        rc = GMA_EXIT_BAD_INPUT;
    }
    if (!rc) {
        capacity(&v, q);
        if (print_view(f, p, &v) != 0) {
            fprintf(stderr, "gmem-analyze: writing the report failed: %s\n", errno ? strerror(errno) : "out of memory");
            rc = GMA_EXIT_BAD_INPUT;
        }
    }
    gma_table_free(&v.table);
    gma_vec_free(&s.owners);
    gma_map_free(&s.of);
    gma_strs_free(&s.names);
    return rc ? rc : damaged ? GMA_EXIT_DAMAGED : 0;
}
