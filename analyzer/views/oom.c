/*
 * Failures (oom.h): taken at each OOM record from the replay's live set,
 * printed first in the report.
 */
#include "oom.h"
#include "consumer.h"
#include "fit.h"
#include "layer.h"
#include "modules.h"
#include "owners.h"
#include "gmt_names.h"
#include "gmt_text.h"
#include "tracestr.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* A string of the trace, copied (cut to cap - 1 bytes); "" for none. */
static void copy_str(const gma_replay *r, uint64_t id, char *out, size_t cap)
{
    size_t len = 0;
    const char *s = id ? gma_str(r, id, &len) : NULL;
    if (!s)
        len = 0;
    if (len >= cap)
        len = cap - 1;
    if (len)
        memcpy(out, s, len);
    out[len] = '\0';
}

static void owner_name(const gma_replay *r, const gma_entry *e, char *out, size_t cap)
{
    if ((e->flags & GMA_E_BASELINE) || e->rname == GMA_NAME_BASELINE) {
        snprintf(out, cap, "(before the window)");
        return;
    }
    uint32_t id = e->rname != GMA_NAME_UNATTR ? e->rname : e->kname;
    copy_str(r, id != GMA_NAME_BASELINE ? id : 0, out, cap);
    if (!out[0])
        snprintf(out, cap, "(unattributed)");
}

/* Adds an entry to its owner's sums (owners kept in a growing array). */
typedef struct owners {
    gma_oom_owner *a;
    size_t n, cap;
} owners;

static void owner_add(owners *w, const char *name, uint64_t bytes)
{
    for (size_t i = 0; i < w->n; i++)
        if (strcmp(w->a[i].name, name) == 0) {
            w->a[i].bytes += bytes;
            w->a[i].count++;
            return;
        }
    if (w->n == w->cap) {
        size_t nc = w->cap ? w->cap * 2 : 32;
        gma_oom_owner *p = realloc(w->a, nc * sizeof *p);
        if (!p)
            return; /* the owner table is a summary: a name lost to memory is only not shown */
        w->a = p;
        w->cap = nc;
    }
    gma_oom_owner *o = &w->a[w->n++];
    memset(o, 0, sizeof *o);
    snprintf(o->name, sizeof o->name, "%s", name);
    o->bytes = bytes;
    o->count = 1;
}

static int by_bytes(const void *a, const void *b)
{
    const gma_oom_owner *x = a, *y = b;
    if (x->bytes != y->bytes)
        return x->bytes > y->bytes ? -1 : 1;
    return strcmp(x->name, y->name);
}

/* persistent: made before the failing step (or before the window);
 * temporary: made in the failing step inside the op that failed;
 * step-scoped: made in the failing step, elsewhere. */
static int class_of(const gma_entry *e, const gma_oom_fail *f, const char *owner)
{
    if ((e->flags & GMA_E_BASELINE) || e->step < f->o.step)
        return GMA_OOM_PERSISTENT;
    if (f->op[0] && strcmp(owner, f->op) == 0)
        return GMA_OOM_TEMP;
    return GMA_OOM_STEP;
}

/* The sorted first GMA_OOM_TOP owners of w into top, and frees w. */
static void owners_top(owners *w, gma_oom_owner *top, size_t *ntop, uint64_t *distinct)
{
    if (w->n > 1)
        qsort(w->a, w->n, sizeof *w->a, by_bytes);
    *distinct = w->n;
    *ntop = w->n < GMA_OOM_TOP ? w->n : GMA_OOM_TOP;
    if (*ntop)
        memcpy(top, w->a, *ntop * sizeof *w->a);
    free(w->a);
}

/* The module and the line of each live allocation, and the module of the
 * failed request (its innermost range's). */
static void take_modules(const gma_replay *r, gma_oom_fail *f)
{
    f->has_module = gma_modules_has_paths(r);
    f->has_line = gma_modules_has_frames(r);
    if (!f->has_module && !f->has_line)
        return;
    owners wm = { NULL, 0, 0 }, wl = { NULL, 0, 0 };
    gma_buf b = { 0 };
    uint32_t node = 0, frame;
    if (f->has_module) {
        (void)gma_modules_of_range(r, f->o.range, &node);
        gma_modules_name(r, node, &b);
        snprintf(f->module, sizeof f->module, "%s", gma_buf_str(&b));
    }
    for (size_t i = 0; i < r->entries.len; i++) {
        const gma_entry *e = &GMA_VEC_AT(&r->entries, gma_entry, i);
        if ((e->flags & (GMA_E_INUSE | GMA_E_LIVE)) != (GMA_E_INUSE | GMA_E_LIVE) || (e->flags & GMA_E_HOST) ||
            e->device != f->o.device || !gma_modules_entry(r, e, &node, &frame))
            continue;
        if (f->has_module) {
            gma_modules_name(r, node, &b);
            owner_add(&wm, gma_buf_str(&b), e->bytes);
        }
        if (f->has_line) {
            gma_owners_line_name(r, frame, &b);
            owner_add(&wl, gma_buf_str(&b), e->bytes);
        }
    }
    gma_buf_free(&b);
    owners_top(&wm, f->top_module, &f->ntop_module, &f->modules);
    owners_top(&wl, f->top_line, &f->ntop_line, &f->lines);
}

static void take_live_set(const gma_replay *r, gma_oom_fail *f)
{
    owners w = {NULL, 0, 0};
    char name[96];
    for (size_t i = 0; i < r->entries.len; i++) {
        const gma_entry *e = &GMA_VEC_AT(&r->entries, gma_entry, i);
        if ((e->flags & (GMA_E_INUSE | GMA_E_LIVE)) != (GMA_E_INUSE | GMA_E_LIVE) || (e->flags & GMA_E_HOST) ||
            e->device != f->o.device)
            continue;
        owner_name(r, e, name, sizeof name);
        int k = class_of(e, f, name);
        f->cls_bytes[k] += e->bytes;
        f->cls_count[k]++;
        f->live_bytes += e->bytes;
        f->live_count++;
        owner_add(&w, name, e->bytes);
    }
    owners_top(&w, f->top, &f->ntop, &f->owners);
    take_modules(r, f);
    if ((f->o.flags & GMT_OOMF_FRAMEWORK) && f->o.fw_reserved > f->o.fw_allocated)
        f->cls_bytes[GMA_OOM_RESERVED] = f->o.fw_reserved - f->o.fw_allocated;
}

/* ---- the consumer: OOM records and the LIVE list after each ------------------- */

static void oom_failure(gma_replay *r, const gmt_oom *o);
static void oom_live(gma_replay *r, const gmt_mem *m);
static void oom_release(gma_replay *r);

static const gma_consumer OOM_CONSUMER = { .rare = 1, .failure = oom_failure, .live_rec = oom_live,
                                           .release = oom_release };

int gma_oom_open(gma_replay *r)
{
    gma_oom *m = calloc(1, sizeof *m);
    if (!m || gma_replay_consumer_add_ctx(r, &OOM_CONSUMER, m) != 0) {
        free(m);
        return -1;
    }
    return 0;
}

static gma_oom *state(const gma_replay *r) { return gma_replay_consumer_ctx(r, &OOM_CONSUMER); }

static void oom_failure(gma_replay *r, const gmt_oom *o)
{
    gma_oom *m = state(r);
    if (!m)
        return;
    if (m->n == m->cap) {
        size_t nc = m->cap ? m->cap * 2 : 4;
        gma_oom_fail *p = realloc(m->f, nc * sizeof *p);
        if (!p)
            return;
        m->f = p;
        m->cap = nc;
    }
    gma_oom_fail *f = &m->f[m->n++];
    memset(f, 0, sizeof *f);
    f->o = *o;
    copy_str(r, o->op, f->op, sizeof f->op);
    copy_str(r, o->api, f->api, sizeof f->api);
    if (o->device < GMA_MAX_DEVICES)
        f->dev_total = r->dev[o->device].total_mem;
    f->outside = r->cur_win < 0 && o->live_count == 0;
    if ((o->flags & GMT_OOMF_IN_TRACE) && o->dump && r->path && strcmp(r->path, "-") != 0 &&
        gmt_dump_name(f->dump_file, sizeof f->dump_file, r->path, o->dump, 1) < sizeof f->dump_file)
        f->dump_found = access(f->dump_file, F_OK) == 0;
    else
        f->dump_file[0] = '\0';
    take_live_set(r, f);
}

static void oom_live(gma_replay *r, const gmt_mem *m)
{
    const gma_oom *s = state(r);
    if (!s || !s->n)
        return;
    gma_oom_fail *f = &s->f[s->n - 1];
    f->seen_count++;
    if (m->source != GMT_SRC_FRAMEWORK)
        f->seen_bytes += m->bytes;
}

static void oom_release(gma_replay *r)
{
    gma_oom *m = state(r);
    if (!m)
        return;
    free(m->f);
    free(m);
}

const char *gma_oom_bytes(uint64_t b, char *out, size_t cap)
{
    static const char *const unit[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    double v = (double)b;
    int u = 0;
    while (v >= 1024.0 && u < 4) {
        v /= 1024.0;
        u++;
    }
    if (u == 0)
        snprintf(out, cap, "%" PRIu64 " B", b);
    else
        snprintf(out, cap, "%.1f %s", v, unit[u]);
    return out;
}

/* ---- why it failed ------------------------------------------------------------ */

const char *const gma_oom_why_names[GMA_WHY_COUNT_] = {"fragmentation", "growth", "spike", "outside the allocator"};

/* The value of key in the header's settings text ("k=v;...", '\' escapes
 * in values); 0 when the key is not there. */
static int cfg_value(const char *cfg, size_t len, const char *key, char *out, size_t cap)
{
    size_t kl = strlen(key);
    for (size_t i = 0; i < len;) {
        int match = len - i > kl && memcmp(cfg + i, key, kl) == 0 && cfg[i + kl] == '=';
        size_t j = match ? i + kl + 1 : i, o = 0;
        for (; j < len && cfg[j] != ';'; j++) {
            if (cfg[j] == '\\' && j + 1 < len)
                j++;
            if (match && o + 1 < cap)
                out[o++] = cfg[j];
        }
        if (match) {
            out[o] = '\0';
            return 1;
        }
        i = j + 1;
    }
    return 0;
}

/* The allocator's settings as PyTorch reads them: PYTORCH_ALLOC_CONF, else
 * its older name PYTORCH_CUDA_ALLOC_CONF. *name: the variable that held
 * them (the one to extend), or the older name, which every version reads. */
static void alloc_conf(const gma_replay *r, char *out, size_t cap, const char **name)
{
    const char *cfg = r->has_header ? gma_strs_get(&r->strs, r->hdr_cfg) : NULL;
    size_t len = cfg ? strlen(cfg) : 0;
    out[0] = '\0';
    *name = "PYTORCH_CUDA_ALLOC_CONF";
    if (cfg && cfg_value(cfg, len, "PYTORCH_ALLOC_CONF", out, cap))
        *name = "PYTORCH_ALLOC_CONF";
    else if (cfg)
        cfg_value(cfg, len, "PYTORCH_CUDA_ALLOC_CONF", out, cap);
}

static int conf_expandable(const char *conf)
{
    char low[160];
    size_t n = 0;
    for (; conf[n] && n + 1 < sizeof low; n++)
        low[n] = (char)(conf[n] >= 'A' && conf[n] <= 'Z' ? conf[n] + 32 : conf[n]);
    low[n] = '\0';
    return strstr(low, "expandable_segments:true") != NULL;
}

/* The numbers every rule reads. */
typedef struct why_in {
    uint64_t req, free, total, alloc, reserved, cached, outside, held, need;
    int driver, fw, expandable;
    uint64_t p_last, p_prev, s_last; /* peaks of the two steps before the failing one, and the last one's number */
    int growing, steady;
    /* the peaks of every step before the failing one, by step number, for
     * the law they follow (fit.h) */
    double sx[GMA_FIT_MAX_POINTS], sy[GMA_FIT_MAX_POINTS];
    size_t ns;
    char conf[160];
    const char *conf_name;
} why_in;

static void why_inputs(const gma_replay *r, const gma_oom_fail *f, why_in *w)
{
    const gmt_oom *o = &f->o;
    memset(w, 0, sizeof *w);
    w->req = o->bytes;
    w->driver = (o->flags & GMT_OOMF_DRIVER) != 0;
    w->fw = (o->flags & GMT_OOMF_FRAMEWORK) != 0;
    w->free = o->driver_free;
    w->total = o->driver_total ? o->driver_total : f->dev_total;
    w->alloc = o->fw_allocated;
    w->reserved = o->fw_reserved;
    w->cached = w->fw && w->reserved > w->alloc ? w->reserved - w->alloc : 0;
    w->held = w->fw ? w->alloc : f->live_bytes;
    w->need = w->held + w->req;
    uint64_t used = w->total > w->free ? w->total - w->free : 0, mine = w->fw ? w->reserved : f->live_bytes;
    w->outside = w->driver && used > mine ? used - mine : 0;
    alloc_conf(r, w->conf, sizeof w->conf, &w->conf_name);
    w->expandable = conf_expandable(w->conf) ||
                    (o->device < GMA_LAYER_DEVICES && r->layer.dev[o->device].expandable);
    int have = 0;
    for (size_t i = 0; i < r->steps.len; i++) { /* the two steps just before the failing one */
        const gma_steprow *st = &GMA_VEC_AT(&r->steps, gma_steprow, i);
        if (st->step >= o->step || !st->peak || (have && st->step <= w->s_last))
            continue;
        w->p_prev = have ? w->p_last : 0;
        w->p_last = st->peak;
        w->s_last = st->step;
        have = 1;
        if (w->ns == GMA_FIT_MAX_POINTS) { /* the newest ones */
            memmove(w->sx, w->sx + 1, (w->ns - 1) * sizeof w->sx[0]);
            memmove(w->sy, w->sy + 1, (w->ns - 1) * sizeof w->sy[0]);
            w->ns--;
        }
        w->sx[w->ns] = (double)st->step + 1; /* fit.h wants sizes above 0 */
        w->sy[w->ns++] = (double)st->peak;
    }
    /* growing: the last step peaked 10% over the one before; steady: within 10% */
    w->growing = w->p_prev && w->p_last * 10 >= w->p_prev * 11;
    w->steady = w->p_last && (!w->p_prev || (w->p_last * 10 < w->p_prev * 11 && w->p_last * 11 > w->p_prev * 10));
}

static gma_oom_reason *why_add(gma_oom_reasons *out, gma_oom_why why, unsigned score, uint64_t bytes)
{
    gma_oom_reason *x = &out->r[out->n++];
    memset(x, 0, sizeof *x);
    x->why = why;
    x->score = score;
    x->bytes = bytes;
    return x;
}

static void why_fragmentation(const why_in *w, gma_oom_reasons *out)
{
    if (!w->fw || !w->driver || w->req <= w->free || w->req > w->free + w->cached)
        return;
    char a[32], b[32], c[32], d[32];
    gma_oom_reason *x = why_add(out, GMA_WHY_FRAGMENTATION, 100, w->cached);
    snprintf(x->text, sizeof x->text,
             "the request (%s) is more than the device had free (%s), but the allocator held %s reserved and "
             "unallocated: together %s, enough had the cache been one piece",
             gma_oom_bytes(w->req, a, sizeof a), gma_oom_bytes(w->free, b, sizeof b), gma_oom_bytes(w->cached, c, sizeof c),
             gma_oom_bytes(w->free + w->cached, d, sizeof d));
    if (!w->expandable && w->conf[0])
        snprintf(x->try_, sizeof x->try_,
                 "add expandable_segments:True to %s (this run had '%s'): segments then grow in place and freed "
                 "space serves a request of any size", w->conf_name, w->conf);
    else if (!w->expandable)
        snprintf(x->try_, sizeof x->try_,
                 "%s=expandable_segments:True (not set in this run): segments then grow in place and freed space "
                 "serves a request of any size", w->conf_name);
    else
        snprintf(x->try_, sizeof x->try_,
                 "expandable_segments is on already (%s): the cached bytes sit in other streams' pools or between "
                 "live blocks; call torch.cuda.empty_cache() before this op, or add "
                 "garbage_collection_threshold:0.8 so the cache is given back before it fills",
                 w->conf[0] ? w->conf : "the trace maps segments piecewise");
}

static void why_outside(const why_in *w, gma_oom_reasons *out)
{
    if (!w->driver || !w->total || w->outside * 20 < w->total)
        return;
    int enough = w->req <= w->free + w->cached + w->outside;
    char a[32], b[32];
    gma_oom_reason *x = why_add(out, GMA_WHY_OUTSIDE, enough ? 90 : 20, w->outside);
    snprintf(x->text, sizeof x->text,
             "%s of the device's %s (%.0f%%) was held outside %s: CUDA contexts, libraries' workspaces (cuBLAS, "
             "cuDNN), NCCL buffers or other processes%s",
             gma_oom_bytes(w->outside, a, sizeof a), gma_oom_bytes(w->total, b, sizeof b), 100.0 * (double)w->outside / (double)w->total,
             w->fw ? "PyTorch's allocator" : "the allocations this trace saw",
             enough ? "; without them the request would have fit" : "");
    snprintf(x->try_, sizeof x->try_,
             "nvidia-smi lists the device's other processes; NCCL_BUFFSIZE and CUBLAS_WORKSPACE_CONFIG bound the "
             "libraries' buffers");
}

static void why_growth(const gma_oom_fail *f, const why_in *w, gma_oom_reasons *out)
{
    if (!w->growing || w->need * 4 < w->p_last * 5)
        return;
    uint64_t cap = w->total > w->outside ? w->total - w->outside : 0;
    int beyond = cap && w->need > cap;
    char a[32], b[32], c[32], d[32], e[32];
    gma_oom_reason *x = why_add(out, GMA_WHY_GROWTH, beyond ? 80 : 60, w->need);
    char law[160] = "";
    gma_fit fit;
    if (w->ns >= 3 && gma_fit_points(w->sx, w->sy, w->ns, &fit) == 0 && fit.fits)
        snprintf(law, sizeof law, ", %s in the step number (it gives %s for step %" PRIu64 ")",
                 gma_law_names[fit.law], gma_oom_bytes((uint64_t)fmax(0.0, gma_fit_eval(&fit, (double)f->o.step + 1)), e,
                                               sizeof e),
                 f->o.step);
    snprintf(x->text, sizeof x->text,
             "step %" PRIu64 " needed %s at the failure (%s held, %s asked), x%.1f the peak of step %" PRIu64
             " (%s); the %zu steps before grew x%.1f a step at the last%s",
             f->o.step, gma_oom_bytes(w->need, a, sizeof a), gma_oom_bytes(w->held, b, sizeof b), gma_oom_bytes(w->req, c, sizeof c),
             (double)w->need / (double)w->p_last, w->s_last, gma_oom_bytes(w->p_last, d, sizeof d), w->ns,
             (double)w->p_last / (double)w->p_prev, law);
    if (beyond)
        snprintf(x->try_, sizeof x->try_,
                 "no allocator setting makes room: the step needs more than the device's %s%s; run a smaller batch "
                 "or sequence (gmem-analyze --fit on runs at three sizes gives the largest that fits)",
                 gma_oom_bytes(cap, e, sizeof e), w->outside ? " left beside what is held outside the allocator" : "");
    else
        snprintf(x->try_, sizeof x->try_,
                 "what grows from step to step will fail again: gmem-analyze --by step shows it, and --fit on runs "
                 "at three sizes gives the largest size that fits");
}

static void why_spike(const gma_oom_fail *f, const why_in *w, gma_oom_reasons *out)
{
    int steady = w->steady && w->need > w->p_last && w->req >= w->need - w->p_last;
    if (!steady && !(w->total && w->req * 10 >= w->total))
        return;
    char a[32], b[32], c[32];
    gma_oom_reason *x = why_add(out, GMA_WHY_SPIKE, steady ? 70 : 40, w->req);
    const char *who = f->op[0] ? f->op : "the failing call";
    if (steady)
        snprintf(x->text, sizeof x->text,
                 "\"%s\" asked %s at once: the steps before peaked at %s, and this request is the difference "
                 "(the step needed %s)",
                 who, gma_oom_bytes(w->req, a, sizeof a), gma_oom_bytes(w->p_last, b, sizeof b), gma_oom_bytes(w->need, c, sizeof c));
    else
        snprintf(x->text, sizeof x->text, "\"%s\" asked %s at once, %.0f%% of the device", who,
                 gma_oom_bytes(w->req, a, sizeof a), 100.0 * (double)w->req / (double)w->total);
    snprintf(x->try_, sizeof x->try_,
             "split this op's work (chunk the batch or sequence through it) or run it in a lower precision; "
             "activation checkpointing does not shrink one op's own request");
}

static int reason_cmp(const void *a, const void *b)
{
    const gma_oom_reason *x = a, *y = b;
    if (x->score != y->score)
        return x->score > y->score ? -1 : 1;
    return (int)x->why - (int)y->why;
}

void gma_oom_explain(const gma_replay *r, const gma_oom_fail *f, gma_oom_reasons *out)
{
    why_in w;
    memset(out, 0, sizeof *out);
    if (f->o.cause != GMT_OOM_CUDA && f->o.cause != GMT_OOM_FRAMEWORK)
        return;
    why_inputs(r, f, &w);
    snprintf(out->conf, sizeof out->conf, "%s", w.conf);
    why_fragmentation(&w, out);
    why_growth(f, &w, out);
    why_spike(f, &w, out);
    why_outside(&w, out);
    qsort(out->r, out->n, sizeof out->r[0], reason_cmp);
}

/* ---- the section, as data for the printers ---------------------------------- */

int gma_oom_view_build(gma_oom_view *v, const gma_replay *r)
{
    memset(v, 0, sizeof *v);
    const gma_oom *m = state(r);
    if (!m || !m->n)
        return 0;
    v->s = calloc(m->n, sizeof *v->s);
    if (!v->s)
        return -1;
    v->n = m->n;
    int err = 0;
    for (size_t i = 0; i < v->n; i++) {
        gma_oom_section *x = &v->s[i];
        const gma_oom_fail *f = &m->f[i];
        x->f = f;
        gma_oom_explain(r, f, &x->why);
        gma_vec_init(&x->steps, sizeof(gma_oom_step));
        /* the steps before it: from the dump's first, or the three before */
        uint64_t first = f->o.first_step ? f->o.first_step : (f->o.step >= 3 ? f->o.step - 3 : 0);
        for (size_t k = 0; k < r->steps.len && !err; k++) {
            const gma_steprow *s = &GMA_VEC_AT(&r->steps, gma_steprow, k);
            if (s->step < first || s->step > f->o.step)
                continue;
            gma_oom_step *y = gma_vec_push(&x->steps);
            if (!y) {
                err = 1;
                break;
            }
            *y = (gma_oom_step){ s->step, s->alloc_bytes, s->free_bytes, s->live_end, s->peak, s->has_live };
        }
    }
    if (err)
        gma_oom_view_free(v);
    return err ? -1 : 0;
}

void gma_oom_view_free(gma_oom_view *v)
{
    for (size_t i = 0; i < v->n; i++)
        gma_vec_free(&v->s[i].steps);
    free(v->s);
    v->s = NULL;
    v->n = 0;
}
