/*
 * Failures (oom.h): taken at each OOM record from the replay's live set,
 * printed first in the report.
 */
#include "oom.h"
#include "fit.h"
#include "layer.h"
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
    if (w.n > 1)
        qsort(w.a, w.n, sizeof *w.a, by_bytes);
    f->owners = w.n;
    f->ntop = w.n < GMA_OOM_TOP ? w.n : GMA_OOM_TOP;
    if (f->ntop)
        memcpy(f->top, w.a, f->ntop * sizeof *w.a);
    free(w.a);
    if ((f->o.flags & GMT_OOMF_FRAMEWORK) && f->o.fw_reserved > f->o.fw_allocated)
        f->cls_bytes[GMA_OOM_RESERVED] = f->o.fw_reserved - f->o.fw_allocated;
}

void gma_oom_record(gma_replay *r, const gmt_oom *o)
{
    if (!r->oom && !(r->oom = calloc(1, sizeof *r->oom)))
        return;
    gma_oom *m = r->oom;
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

void gma_oom_live(gma_replay *r, const gmt_mem *m)
{
    if (!r->oom || !r->oom->n)
        return;
    gma_oom_fail *f = &r->oom->f[r->oom->n - 1];
    f->seen_count++;
    if (m->source != GMT_SRC_FRAMEWORK)
        f->seen_bytes += m->bytes;
}

void gma_oom_free(gma_replay *r)
{
    if (!r->oom)
        return;
    free(r->oom->f);
    free(r->oom);
    r->oom = NULL;
}

static const char *human(uint64_t b, char *out, size_t cap)
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
             human(w->req, a, sizeof a), human(w->free, b, sizeof b), human(w->cached, c, sizeof c),
             human(w->free + w->cached, d, sizeof d));
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
             human(w->outside, a, sizeof a), human(w->total, b, sizeof b), 100.0 * (double)w->outside / (double)w->total,
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
                 gma_law_names[fit.law], human((uint64_t)fmax(0.0, gma_fit_eval(&fit, (double)f->o.step + 1)), e,
                                               sizeof e),
                 f->o.step);
    snprintf(x->text, sizeof x->text,
             "step %" PRIu64 " needed %s at the failure (%s held, %s asked), x%.1f the peak of step %" PRIu64
             " (%s); the %zu steps before grew x%.1f a step at the last%s",
             f->o.step, human(w->need, a, sizeof a), human(w->held, b, sizeof b), human(w->req, c, sizeof c),
             (double)w->need / (double)w->p_last, w->s_last, human(w->p_last, d, sizeof d), w->ns,
             (double)w->p_last / (double)w->p_prev, law);
    if (beyond)
        snprintf(x->try_, sizeof x->try_,
                 "no allocator setting makes room: the step needs more than the device's %s%s; run a smaller batch "
                 "or sequence (gmem-analyze --fit on runs at three sizes gives the largest that fits)",
                 human(cap, e, sizeof e), w->outside ? " left beside what is held outside the allocator" : "");
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
                 who, human(w->req, a, sizeof a), human(w->p_last, b, sizeof b), human(w->need, c, sizeof c));
    else
        snprintf(x->text, sizeof x->text, "\"%s\" asked %s at once, %.0f%% of the device", who,
                 human(w->req, a, sizeof a), 100.0 * (double)w->req / (double)w->total);
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

static void print_why(FILE *out, const gma_replay *r, const gma_oom_fail *f)
{
    gma_oom_reasons why;
    gma_oom_explain(r, f, &why);
    if (!why.n)
        return;
    fprintf(out, "  why, most likely first:\n");
    for (size_t i = 0; i < why.n; i++)
        fprintf(out, "    %zu. %s: %s\n       try: %s\n", i + 1, gma_oom_why_names[why.r[i].why], why.r[i].text,
                why.r[i].try_);
}

/* ---- the section ------------------------------------------------------------ */


static void print_cause(FILE *out, const gma_oom_fail *f)
{
    const gmt_oom *o = &f->o;
    char dump[40] = "";
    if (o->dump && !(o->flags & GMT_OOMF_IN_TRACE)) /* a trace's record names its dump on a line of its own */
        snprintf(dump, sizeof dump, ", dump %" PRIu64, o->dump);
    switch (o->cause) {
    case GMT_OOM_CUDA:
        fprintf(out, "Out of memory%s: the CUDA call %s failed (CUresult %" PRIu64 ")\n", dump,
                f->api[0] ? f->api : "(unknown)", o->status);
        break;
    case GMT_OOM_FRAMEWORK:
        fprintf(out, "Out of memory%s: the framework's allocator gave up%s%s\n", dump,
                f->api[0] ? " after " : "", f->api);
        break;
    case GMT_OOM_SIGNAL:
        fprintf(out, "Flight recorder dump%s, asked by SIGUSR2 (no failure)\n", dump);
        return;
    default:
        fprintf(out, "Flight recorder dump%s at the end of the program (no failure)\n", dump);
        return;
    }
}

static void print_request(FILE *out, const gma_oom_fail *f)
{
    const gmt_oom *o = &f->o;
    char a[32], b[32], c[32];
    if (o->cause == GMT_OOM_CUDA || o->cause == GMT_OOM_FRAMEWORK) {
        fprintf(out, "  asked       %s on device %" PRIu64 ", thread %" PRIu64 ", stream 0x%" PRIx64 ", step %" PRIu64,
                human(o->bytes, a, sizeof a), o->device, o->tid, o->stream, o->step);
        if (f->op[0])
            fprintf(out, ", in \"%s\"", f->op);
        fputc('\n', out);
    }
    if (o->flags & GMT_OOMF_DRIVER)
        fprintf(out, "  free        %s of %s (the driver, at the failure)\n", human(o->driver_free, a, sizeof a),
                human(o->driver_total ? o->driver_total : f->dev_total, b, sizeof b));
    if (o->flags & GMT_OOMF_FRAMEWORK)
        fprintf(out, "  allocator   %s allocated, %s reserved (%s reserved but unallocated)\n",
                human(o->fw_allocated, a, sizeof a), human(o->fw_reserved, b, sizeof b),
                human(f->cls_bytes[GMA_OOM_RESERVED], c, sizeof c));
}

/* The dump's file as printed: control bytes escaped (gmt_text.h). */
static const char *dump_shown(const gma_oom_fail *f, char *buf, size_t cap)
{
    gmt_text_escape(buf, cap, f->dump_file);
    return buf;
}

static void print_held(FILE *out, const gma_oom_fail *f)
{
    static const char *const what[GMA_OOM_NCLASS] = {
        "made before the failing step (weights, state kept across steps)",
        "made in the failing step, outside the op that failed",
        "made in the failing step, in the op that failed",
        "the allocator's cache and fragmentation",
    };
    static const char *const cls[GMA_OOM_NCLASS] = {"persistent", "step-scoped", "temporary",
                                                    "reserved, unallocated"};
    char a[32];
    fprintf(out, "  held        %s in %" PRIu64 " allocation%s on device %" PRIu64 ", by lifetime:\n",
            human(f->live_bytes, a, sizeof a), f->live_count, f->live_count == 1 ? "" : "s", f->o.device);
    for (int k = 0; k < GMA_OOM_NCLASS; k++) {
        if (k == GMA_OOM_RESERVED && !(f->o.flags & GMT_OOMF_FRAMEWORK))
            continue;
        fprintf(out, "    %-22s %12s  %6" PRIu64 "  %s\n", cls[k], human(f->cls_bytes[k], a, sizeof a),
                f->cls_count[k], what[k]);
    }
    fprintf(out, "  by owner (%" PRIu64 " owner%s; the first %zu):\n", f->owners, f->owners == 1 ? "" : "s", f->ntop);
    for (size_t i = 0; i < f->ntop; i++)
        fprintf(out, "    %12s  %6" PRIu64 "  %s\n", human(f->top[i].bytes, a, sizeof a), f->top[i].count,
                f->top[i].name);
    char shown[4 * sizeof f->dump_file];
    if (f->outside && f->dump_found)
        fprintf(out, "  note: the failure came outside the trace's windows: the memory held is what they saw; "
                     "the steps before it are in its dump, %s\n", dump_shown(f, shown, sizeof shown));
    else if (f->outside)
        fprintf(out, "  note: the failure came outside the trace's windows: the memory held is what they saw; "
                     "the steps before it are in the flight recorder's dump (gmemprof --on-oom with a "
                     "--schedule writes NAME.oom.zst beside NAME.zst)\n");
    if (f->seen_count && f->seen_bytes != f->o.live_bytes)
        fprintf(out, "  note: the dump lists %s live (LIVE records), the failure record says %s\n",
                human(f->seen_bytes, a, sizeof a), human(f->o.live_bytes, a, sizeof a));
}

static void print_steps(FILE *out, const gma_replay *r, const gma_oom_fail *f)
{
    uint64_t first = f->o.first_step ? f->o.first_step : (f->o.step >= 3 ? f->o.step - 3 : 0);
    char a[32], b[32], c[32], d[32];
    int head = 0;
    for (size_t i = 0; i < r->steps.len; i++) {
        const gma_steprow *s = &GMA_VEC_AT(&r->steps, gma_steprow, i);
        if (s->step < first || s->step > f->o.step)
            continue;
        if (!head++)
            fprintf(out, "  the steps before it:\n    %6s %12s %12s %12s %12s\n", "step", "allocated", "freed",
                    "live at end", "peak");
        fprintf(out, "    %6" PRIu64 " %12s %12s %12s %12s%s\n", s->step, human(s->alloc_bytes, a, sizeof a),
                human(s->free_bytes, b, sizeof b), s->has_live ? human(s->live_end, c, sizeof c) : "-",
                human(s->peak, d, sizeof d), s->step == f->o.step ? "  (failed)" : "");
    }
    if (f->o.flags & GMT_OOMF_TRIMMED)
        fprintf(out, "  (the recorder's memory cap, GMEMPROF_OOM_MAX_MB, cut older steps from this dump)\n");
}

/* A trace's failure: the dump that holds the steps before it. */
static void print_dump(FILE *out, const gma_oom_fail *f)
{
    if (!f->dump_file[0])
        return;
    char shown[4 * sizeof f->dump_file];
    fprintf(out, "  the flight recorder's dump of it: %s%s\n", dump_shown(f, shown, sizeof shown),
            f->dump_found ? "" : " (not found beside this trace)");
}

size_t gma_oom_print(FILE *out, const gma_replay *r)
{
    if (!r->oom)
        return 0;
    for (size_t i = 0; i < r->oom->n; i++) {
        const gma_oom_fail *f = &r->oom->f[i];
        print_cause(out, f);
        print_dump(out, f);
        print_request(out, f);
        print_held(out, f);
        print_steps(out, r, f);
        print_why(out, r, f);
        fputc('\n', out);
    }
    return r->oom->n;
}

void gma_oom_json(gma_jw *j, const gma_replay *r)
{
    static const char *const cls[GMA_OOM_NCLASS] = {"persistent", "step_scoped", "temporary",
                                                    "reserved_unallocated"};
    if (!r->oom || !r->oom->n)
        return;
    gma_jw_key(j, "failures");
    gma_jw_begin(j, '[');
    for (size_t i = 0; i < r->oom->n; i++) {
        const gma_oom_fail *f = &r->oom->f[i];
        const gmt_oom *o = &f->o;
        gma_jw_begin(j, '{');
        gma_jw_kstr(j, "cause", gmt_oom_cause_name(o->cause));
        gma_jw_ku64(j, "dump", o->dump);
        gma_jw_ku64(j, "device", o->device);
        gma_jw_ku64(j, "bytes", o->bytes);
        gma_jw_ku64(j, "stream", o->stream);
        gma_jw_ku64(j, "tid", o->tid);
        gma_jw_ku64(j, "step", o->step);
        gma_jw_kstr(j, "op", f->op);
        gma_jw_kstr(j, "api", f->api);
        gma_jw_ku64(j, "status", o->status);
        if (o->flags & GMT_OOMF_DRIVER) {
            gma_jw_ku64(j, "driver_free", o->driver_free);
            gma_jw_ku64(j, "driver_total", o->driver_total ? o->driver_total : f->dev_total);
        }
        if (o->flags & GMT_OOMF_FRAMEWORK) {
            gma_jw_ku64(j, "fw_allocated", o->fw_allocated);
            gma_jw_ku64(j, "fw_reserved", o->fw_reserved);
        }
        gma_jw_ku64(j, "live_count", f->live_count);
        gma_jw_ku64(j, "live_bytes", f->live_bytes);
        gma_jw_ku64(j, "first_step", o->first_step);
        gma_jw_ku64(j, "trimmed", (o->flags & GMT_OOMF_TRIMMED) != 0);
        /* 1: a trace's failure outside its windows (the text's note line) */
        gma_jw_ku64(j, "outside_every_window", f->outside != 0);
        if (f->dump_file[0]) { /* a trace's failure with a dump: its file, and whether it is there */
            gma_jw_kstr(j, "dump_file", f->dump_file);
            gma_jw_ku64(j, "dump_file_found", f->dump_found != 0);
        }
        gma_jw_key(j, "classes");
        gma_jw_begin(j, '{');
        for (int k = 0; k < GMA_OOM_NCLASS; k++)
            if (k != GMA_OOM_RESERVED || (o->flags & GMT_OOMF_FRAMEWORK))
                gma_jw_ku64(j, cls[k], f->cls_bytes[k]);
        gma_jw_end(j, '}');
        gma_oom_reasons why;
        gma_oom_explain(r, f, &why);
        gma_jw_kstr(j, "allocator_settings", why.conf);
        gma_jw_key(j, "causes");
        gma_jw_begin(j, '[');
        for (size_t k = 0; k < why.n; k++) {
            gma_jw_begin(j, '{');
            gma_jw_kstr(j, "cause", gma_oom_why_names[why.r[k].why]);
            gma_jw_ku64(j, "bytes", why.r[k].bytes);
            gma_jw_kstr(j, "reason", why.r[k].text);
            gma_jw_kstr(j, "try", why.r[k].try_);
            gma_jw_end(j, '}');
        }
        gma_jw_end(j, ']');
        gma_jw_key(j, "owners");
        gma_jw_begin(j, '[');
        for (size_t k = 0; k < f->ntop; k++) {
            gma_jw_begin(j, '{');
            gma_jw_kstr(j, "name", f->top[k].name);
            gma_jw_ku64(j, "bytes", f->top[k].bytes);
            gma_jw_ku64(j, "count", f->top[k].count);
            gma_jw_end(j, '}');
        }
        gma_jw_end(j, ']');
        gma_jw_end(j, '}');
    }
    gma_jw_end(j, ']');
}
