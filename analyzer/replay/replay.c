/*
 * The replay: one streaming pass over a trace. This file is the pass itself
 * -- its life cycle, the read loop, and the handler of each record type,
 * which combines the modules that keep the state:
 *   devtime   the devices and the trace's time span
 *   tracestr  the trace's strings, display names and labels
 *   liveset   the live allocations, the peak per device, the --by alloc rows
 *   attr      the attribution of allocations to kernels, the kernel rows
 *   ranges    NVTX range instances and the range rows
 *   winsteps  windows (and their leaks), steps and streams
 * and publishes what it meets to the registered consumers (consumer.h).
 * The helpers on the path of every record are inline in the modules'
 * headers, so that the read loop below still compiles into one loop.
 * No per-record allocation: pools and maps grow geometrically and are reused.
 */
#include <errno.h>
#include <sys/stat.h>
#include <string.h>
#include <stdlib.h>
#include <unistd.h>

#include "replay_int.h"
#include "attr.h"
#include "devtime.h"
#include "liveset.h"
#include "ranges.h"
#include "tracestr.h"
#include "winsteps.h"
#include "progress.h"

const char *const gma_by_names[GMA_BY_COUNT_] = { "kernel", "range", "alloc", "step", "tag", "stream", "device",
                                                   "module", "line", "category" };
const char *const gma_sort_names[GMA_SORT_COUNT_] = { "mem", "peak", "alloc", "count", "time", "name", "held" };

/* Whether a registered consumer takes marks: their test of the selection
 * has an effect of its own (win_of may open a window), so it runs only
 * then. */
static int consumers_take_marks(const gma_replay *r)
{
    for (unsigned i = 0; i < r->ncons; i++)
        if (r->cons[i]->mark)
            return 1;
    return 0;
}

int gma_replay_consumer_add_ctx(gma_replay *r, const gma_consumer *c, void *ctx)
{
    for (unsigned i = 0; i < r->ncons; i++)
        if (r->cons[i] == c)
            return 0;
    for (unsigned i = 0; i < r->nrare; i++)
        if (r->rare[i] == c)
            return 0;
    if ((c->rare ? r->nrare : r->ncons) >= GMA_MAX_CONSUMERS)
        return -1;
    if (c->rare) {
        r->rare_ctx[r->nrare] = ctx;
        r->rare[r->nrare++] = c;
        return 0;
    }
    r->cons_ctx[r->ncons] = ctx;
    r->cons[r->ncons++] = c;
    r->cons_needs |= c->needs;
    return 0;
}

int gma_replay_consumer_add(gma_replay *r, const gma_consumer *c) { return gma_replay_consumer_add_ctx(r, c, NULL); }

void *gma_replay_consumer_ctx(const gma_replay *r, const gma_consumer *c)
{
    for (unsigned i = 0; i < r->ncons; i++)
        if (r->cons[i] == c)
            return r->cons_ctx[i];
    for (unsigned i = 0; i < r->nrare; i++)
        if (r->rare[i] == c)
            return r->rare_ctx[i];
    return NULL;
}

void gma_replay_consumer_remove(gma_replay *r, const gma_consumer *c)
{
    unsigned n = 0;
    r->cons_needs = 0;
    for (unsigned i = 0; i < r->ncons; i++)
        if (r->cons[i] != c) {
            r->cons_ctx[n] = r->cons_ctx[i];
            r->cons[n++] = r->cons[i];
            r->cons_needs |= r->cons[i]->needs;
        }
    r->ncons = n;
    n = 0;
    for (unsigned i = 0; i < r->nrare; i++)
        if (r->rare[i] != c) {
            r->rare_ctx[n] = r->rare_ctx[i];
            r->rare[n++] = r->rare[i];
        }
    r->nrare = n;
}

#define GMA_READ_BATCH 64

/* ---- the plain run ------------------------------------------------------------------ */

/* A run is plain when nothing is selected (--window, --step, --device), no
 * export is written and no per-stream, per-range or per-allocation rows are
 * kept: the default run. The read loop then replays with the handlers'
 * `plain` argument a constant 1, so that the tests below fold away instead
 * of running per event (a dozen per alloc); with plain 0 they are the
 * general tests. gma_replay_record always takes the general path. */
static int replay_plain(const gma_replay *r)
{
    return r->opt.window < 0 && r->opt.step < 0 && r->opt.device < 0 && r->opt.by != GMA_BY_STREAM &&
           r->opt.by != GMA_BY_RANGE && r->opt.by != GMA_BY_ALLOC && !r->ncons;
}

static inline int p_dev(const gma_replay *r, int plain, uint64_t d) { return plain || gma_dev_selected(r, d); }
static inline int p_win(const gma_replay *r, int plain, int64_t w) { return plain ? w >= 0 : win_selected(r, w); }
static inline int p_step(const gma_replay *r, int plain, uint64_t step)
{
    return plain || r->opt.step < 0 || step == (uint64_t)r->opt.step;
}
/* only for the tables replay_plain excludes */
static inline int p_by(const gma_replay *r, int plain, gma_by by) { return !plain && r->opt.by == by; }

/* ---- memory records ---------------------------------------------------------------- */

/* A live allocation whose free was lost, replaced by a new one. */
static inline __attribute__((always_inline)) void alloc_replace(gma_replay *r, uint32_t old, uint64_t ts, const int plain)
{
    gma_entry *oe = ENT(r, old);
    r->replaced_allocs++;
    gma_dev *OD = &r->dev[oe->device];
    if (oe->flags & GMA_E_HOST)
        OD->live_host -= oe->bytes;
    else {
        OD->live -= oe->bytes;
        if (p_dev(r, plain, oe->device))
            r->live_total -= oe->bytes;
    }
    entry_dead(r, old, ts, 1, plain);
}

/* An accounted (not baseline) allocation into its name's, window's,
 * device's, step's and stream's rows. */
static inline __attribute__((always_inline)) void alloc_account(gma_replay *r, gma_dev *D, const gmt_mem *m,
                                                                  attr *a, int64_t w, int host, uint64_t live_after,
                                                                  const int plain)
{
    attr_account(r, a, m->bytes, 1, live_after);
    gma_window *W = WIN(r, w);
    W->alloc_bytes += m->bytes;
    W->alloc_count++;
    if (!host) {
        D->alloc_bytes += m->bytes;
        D->alloc_count++;
    }
    gma_steprow *st = step_row(r, m->step);
    if (st) {
        st->alloc_bytes += m->bytes;
        st->alloc_count++;
        if (!host && live_after > st->peak)
            st->peak = live_after;
        if (!host) {
            st->live_end = r->live_total;
            st->has_live = 1;
        }
    }
    if (p_by(r, plain, GMA_BY_STREAM)) {
        gma_streamrow *sr = gma_stream_row(r, m->device, m->stream);
        if (sr) {
            sr->alloc_bytes += m->bytes;
            sr->alloc_count++;
            if (!host && live_after > sr->peak)
                sr->peak = live_after;
        }
    }
}

/* An alloc; baseline is (m->flags & GMT_MEMF_BASELINE) != 0, a constant in
 * each of the two copies below, so that neither tests it again and again:
 * a window begin repeats hundreds of live allocations as baseline records,
 * and the events in between are never baseline. */
static inline __attribute__((always_inline)) void alloc_record(gma_replay *r, const gmt_mem *m, const int baseline,
                                                                 const int plain, const gmt_hot *la,
                                                                 const gmt_hot *lend)
{
    gma_dev *D = dev_get(r, m->device);
    if (!D)
        return;
    int host = is_host_mem(m->kind, m->source);
    uint64_t ord = ++r->mem_ord;
    int64_t w;
    if (baseline) {
        w = r->cur_win >= 0 ? r->cur_win : win_of(r, m->ts);
    } else {
        note_ts(r, m->ts);
        if (m->ts < r->last_mem_ts)
            r->unordered_mem++;
        else
            r->last_mem_ts = m->ts;
        w = win_of(r, m->ts);
    }
    int dsel = p_dev(r, plain, m->device);
    int acc, acc_peak;
    if (baseline) {
        acc = p_win(r, plain, w) && dsel && p_step(r, plain, m->step);
        acc_peak = p_win(r, plain, w) && dsel &&
                   (plain || r->opt.step < 0 || (r->has_cur_step && r->cur_step == (uint64_t)r->opt.step));
    } else {
        acc = p_win(r, plain, w) && dsel && p_step(r, plain, m->step);
        acc_peak = acc;
    }
    if (w < 0)
        r->outside_mem++;

    uint32_t ei = entry_new(r);
    if (ei == UINT32_MAX)
        return;
    uint32_t old;
    int had = gma_map_swap(&r->live, live_key(m->device, m->address), ei, &old);
    if (had < 0) {
        oom(r);
        return;
    }
    if (had) /* A free was lost: the new allocation replaces the old one. */
        alloc_replace(r, old, m->ts, plain);
    live_add(r, D, m, host, dsel);
    attr a = { baseline ? GMA_NAME_BASELINE : GMA_NAME_UNATTR, 0, 0 };
    if (!baseline)
        a = attribute(r, m, la, lend);
    uint64_t live_after = host ? D->live_host : D->live;
    uint32_t rname = baseline ? GMA_NAME_BASELINE : range_of_event(r, m->range, m->bytes, 1, live_after, acc);

    gma_entry *e = ENT(r, ei);
    entry_fill(e, m, ord, live_after, a.slot ? GMA_NAME_UNATTR : a.name, rname, w,
               GMA_E_INUSE | GMA_E_LIVE | (baseline ? GMA_E_BASELINE : 0) | (host ? GMA_E_HOST : 0) |
                   (acc ? GMA_E_ACCOUNTED : 0));
    if (a.slot) { /* wait with the other allocations for this kernel */
        gma_slot *s = SLOT(r, a.slot - 1);
        e->slot = a.slot;
        e->next = s->head;
        if (s->head)
            ENT(r, s->head - 1)->prev = ei + 1;
        s->head = ei + 1;
    }
    if (!plain && !host)
        PUBLISH(r, alloc, e, m, a.slot != 0, a.slot ? SLOT(r, a.slot - 1)->key : 0);

    gma_srcstat *ss = m->source < GMT_SRC_COUNT_ ? &r->src[m->source] : &r->src_other;
    /* allocations seen: the accounted ones and the first selected window's
     * baseline (later baselines repeat what is already counted) */
    if (baseline ? (w >= 0 && w == r->baseline_win && dsel) : acc) {
        ss->count++;
        ss->bytes += m->bytes;
        /* Added, not branched on: sizes alternate unpredictably. */
        ss->seg_like += m->bytes && m->bytes % (2u << 20) == 0;
    }
    if (baseline && w >= 0) {
        gma_window *W = WIN(r, w);
        W->baseline_seen_count++;
        W->baseline_seen_bytes += m->bytes;
        if (acc_peak && !host && w == r->baseline_win) {
            D->baseline_bytes += m->bytes;
            D->baseline_count++;
        }
    }
    if (acc && !baseline)
        alloc_account(r, D, m, &a, w, host, live_after, plain);
    if (acc_peak && !host) {
        if (!D->has_peak || D->live > D->peak)
            gma_peak_set(r, D, D->live, baseline ? WIN(r, w)->begin_ts : m->ts, baseline ? r->cur_step : m->step, ord,
                     w, &a, baseline, rname);
        gma_window *W = WIN(r, w);
        if (D->live > W->peak)
            W->peak = D->live;
        if (!plain)
            PUBLISH(r, live, m->device, baseline ? W->begin_ts : m->ts, D->live);
    }
    if (p_by(r, plain, GMA_BY_ALLOC) && acc && !r->arow_time_key)
        gma_arow_offer(r, ei);
}

static __attribute__((noinline)) void on_alloc(gma_replay *r, const gmt_mem *m) { alloc_record(r, m, 0, 0, NULL, NULL); }
static __attribute__((noinline)) void on_baseline(gma_replay *r, const gmt_mem *m)
{
    alloc_record(r, m, 1, 0, NULL, NULL);
}
static __attribute__((noinline)) void on_alloc_plain(gma_replay *r, const gmt_mem *m)
{
    alloc_record(r, m, 0, 1, NULL, NULL);
}
static __attribute__((noinline)) void on_baseline_plain(gma_replay *r, const gmt_mem *m)
{
    alloc_record(r, m, 1, 1, NULL, NULL);
}

/* la, lend: the records after this one in the batch (NULL outside one). */
static inline __attribute__((always_inline)) void free_record(gma_replay *r, const gmt_mem *m, const int plain,
                                                                const gmt_hot *la, const gmt_hot *lend)
{
    gma_dev *D = dev_get(r, m->device);
    if (!D)
        return;
    note_ts(r, m->ts);
    uint64_t ord = ++r->mem_ord;
    if (m->ts < r->last_mem_ts)
        r->unordered_mem++;
    else
        r->last_mem_ts = m->ts;
    int64_t w = win_of(r, m->ts);
    if (w < 0)
        r->outside_mem++;
    int dsel = p_dev(r, plain, m->device);
    int acc = p_win(r, plain, w) && dsel && p_step(r, plain, m->step);
    uint32_t ei;
    if (!gma_map_del(&r->live, live_key(m->device, m->address), &ei)) {
        r->unmatched_frees++;
        r->unmatched_free_bytes += m->bytes;
        return;
    }
    gma_entry *e = ENT(r, ei);
    uint64_t bytes = e->bytes;
    int host = (e->flags & GMA_E_HOST) != 0;
    D = &r->dev[e->device];
    uint64_t live_before = host ? D->live_host : D->live;
    if (!plain && !host)
        PUBLISH(r, free, e, m->ts);
    if (host) {
        D->live_host -= bytes;
    } else {
        D->live -= bytes;
        if (p_dev(r, plain, e->device))
            r->live_total -= bytes;
    }
    attr a = attribute(r, m, la, lend);
    e = ENT(r, ei);
    uint32_t src = e->source;
    if (acc && !host && (!D->has_peak || live_before > D->peak)) {
        /* the level just before this free is the highest yet (a step or
         * window selection that begins with frees) */
        gma_peak_set(r, D, live_before, m->ts, m->step, ord - 1, w, &a, 0, GMA_NAME_UNATTR);
        if (live_before > WIN(r, w)->peak)
            WIN(r, w)->peak = live_before;
    }
    if (acc) {
        attr_account(r, &a, bytes, 0, 0);
        if (p_by(r, plain, GMA_BY_RANGE))
            gma_range_account(r, m->range, bytes, 0, 0, 1);
        gma_window *W = WIN(r, w);
        W->free_bytes += bytes;
        W->free_count++;
        if (!host) {
            D->free_bytes += bytes;
            D->free_count++;
        }
        gma_steprow *st = step_row(r, m->step);
        if (st) {
            st->free_bytes += bytes;
            st->free_count++;
            if (!host) {
                if (live_before > st->peak) /* the level carried into the step */
                    st->peak = live_before;
                st->live_end = r->live_total;
                st->has_live = 1;
            }
        }
        if (p_by(r, plain, GMA_BY_STREAM)) {
            gma_streamrow *sr = gma_stream_row(r, m->device, m->stream);
            if (sr) {
                sr->free_bytes += bytes;
                sr->free_count++;
            }
        }
        gma_srcstat *ss = &r->src[src];
        ss->frees++;
        ss->free_bytes += bytes;
        if (!host) {
            if (!plain)
                PUBLISH(r, live, m->device, m->ts, D->live);
        }
    }
    if (!plain && !host)
        PUBLISH(r, freed, ENT(r, ei), m, ord);
    if (!host && D->has_peak && ENT(r, ei)->ord <= D->peak_ord) /* live at the peak: its class (hints.h) */
        gma_range_class_at_free(r, ENT(r, ei), m);
    entry_dead(r, ei, m->ts, 0, plain);
}

static __attribute__((noinline)) void on_free(gma_replay *r, const gmt_mem *m) { free_record(r, m, 0, NULL, NULL); }
static __attribute__((noinline)) void on_free_plain(gma_replay *r, const gmt_mem *m)
{
    free_record(r, m, 1, NULL, NULL);
}

/* ---- other records ------------------------------------------------------------------ */

static inline __attribute__((always_inline)) void kernel_record(gma_replay *r, const gmt_kernel *k, const int plain)
{
    gma_dev *D = dev_get(r, k->device);
    if (!D)
        return;
    note_ts2(r, k->start, k->end);
    if (!plain)
        PUBLISH(r, kernel, k);
    uint32_t name = kernel_name(k->name);
    if (name < r->klabel_cap)
        r->klabel[name] = 1; /* labelled at the end (gma_kernel_labels_make) */
    if (k->tid) {
        uint32_t t;
        gma_thread *th = thread_get(r, k->tid, &t);
        if (th) {
            struct gma_kslot *ks = &th->ring[k->seq % GMA_KRING];
            ks->seq = k->seq;
            ks->name = name;
            if (k->seq > th->max_seq)
                th->max_seq = k->seq;
            if (r->pending) {
                uint32_t si = slot_find(r, th, ((uint64_t)t << 40) | (k->seq & KEY40));
                if (si != UINT32_MAX)
                    slot_settle(r, si, name);
            }
        }
    }
    int64_t w = win_of(r, k->start);
    if (!p_win(r, plain, w) || !p_dev(r, plain, k->device) || !p_step(r, plain, k->step))
        return;
    uint64_t dur = k->end > k->start ? k->end - k->start : 0;
    gma_krow *kr = krow_get(r, name);
    if (k->flags & GMT_KERNF_LAUNCH) {
        /* a launch time (start = end): counted, but no GPU time to add */
        kr->launch_calls++;
        r->launch_kernels++;
        dur = 0;
        if (k->flags & GMT_KERNF_ATTRS)
            kr->attr_calls++;
    } else {
        r->gpu_kernels++;
        kr->attr_calls++;
    }
    if (!kr->calls || dur < kr->min_ns)
        kr->min_ns = dur;
    if (dur > kr->max_ns)
        kr->max_ns = dur;
    kr->calls++;
    kr->time_ns += dur;
    if (k->registers > kr->regs)
        kr->regs = k->registers;
    if (k->static_smem + k->dynamic_smem > kr->smem)
        kr->smem = k->static_smem + k->dynamic_smem;
    if (k->local_mem > kr->local_mem)
        kr->local_mem = k->local_mem;
    D->kernels++;
    D->kernel_ns += dur;
    WIN(r, w)->kernels++;
    gma_steprow *st = step_row(r, k->step);
    if (st) {
        st->kernels++;
        st->kernel_ns += dur;
    }
    if (p_by(r, plain, GMA_BY_STREAM)) {
        gma_streamrow *sr = gma_stream_row(r, k->device, k->stream);
        if (sr) {
            sr->kernels++;
            sr->kernel_ns += dur;
        }
    }
    if (!plain)
        PUBLISH(r, kernel_selected, k);
}

static __attribute__((noinline)) void on_kernel(gma_replay *r, const gmt_kernel *k) { kernel_record(r, k, 0); }
static __attribute__((noinline)) void on_kernel_plain(gma_replay *r, const gmt_kernel *k) { kernel_record(r, k, 1); }

static void on_copy(gma_replay *r, const gmt_copy *c, int is_memset)
{
    gma_dev *D = dev_get(r, c->device);
    if (!D)
        return;
    note_ts(r, c->start);
    int64_t w = win_of(r, c->start);
    if (!win_selected(r, w) || !gma_dev_selected(r, c->device) ||
        (r->opt.step >= 0 && c->step != (uint64_t)r->opt.step))
        return;
    D->copies++;
    D->copy_bytes += c->bytes;
    if (r->opt.by == GMA_BY_STREAM) {
        gma_streamrow *sr = gma_stream_row(r, c->device, c->stream);
        if (sr) {
            sr->copies++;
            sr->copy_bytes += c->bytes;
        }
    }
    PUBLISH(r, copy, c, is_memset);
}

/* In a trace with blocks, CUDA's own allocations feed the layer's numbers
 * (reserved and outside the allocator); with the blocks layer (returns 1)
 * nothing else. */
static int fw_cuda(gma_replay *r, const gmt_mem *m, int is_alloc)
{
    if (gma_layer_cuda(&r->layer, m, is_alloc) != 0)
        oom(r);
    if (r->fw) {
        note_ts(r, m->ts);
        if (r->ncons && gma_dev_selected(r, m->device))
            PUBLISH(r, cuda, m, is_alloc);
    }
    return r->fw;
}

/* A framework allocator event: its numbers, and with the blocks layer its
 * blocks as the allocations every table and the peak are made of. */
static void on_block(gma_replay *r, const gmt_block *b)
{
    note_ts(r, b->ts);
    PUBLISH(r, block, b);
    int as_alloc = gma_layer_block(&r->layer, b);
    if (r->layer.err)
        oom(r);
    if (!as_alloc || !r->fw)
        return;
    gmt_mem m;
    gma_layer_as_mem(b, &m);
    if (b->action == GMT_BLK_FREE_REQUESTED)
        on_free(r, &m);
    else if (m.flags & GMT_MEMF_BASELINE)
        on_baseline(r, &m);
    else
        on_alloc(r, &m);
}

static void on_tag(gma_replay *r, const gmt_tag *t)
{
    note_ts(r, t->ts);
    uint64_t n = t->ndev < GMT_MAX_TAG_DEVICES ? t->ndev : GMT_MAX_TAG_DEVICES;
    for (uint64_t i = 0; i < n; i++) {
        const gmt_tag_device *td = &t->dev[i];
        gma_dev *D = dev_get(r, td->device);
        if (!D)
            continue;
        gma_sample_update(D, t->ts, td->driver_used, td->driver_total);
        gma_layer_sample(&r->layer, td->device, t->ts, td->driver_used);
    }
    if (r->opt.window >= 0) {
        int64_t w = win_of(r, t->ts);
        if (!win_selected(r, w))
            return;
    }
    if (r->opt.step >= 0 && t->step != (uint64_t)r->opt.step)
        return;
    PUBLISH(r, tag, t);
    /* Tag rows are kept only where they are shown: they grow with the run. */
    if (r->opt.by != GMA_BY_TAG && !(r->cons_needs & GMA_NEED_TAG_ROWS))
        return;
    /* A tag made before the program's first CUDA call names no device:
     * nothing was on any, shown as device 0 with 0 B. */
    static const gmt_tag_device none;
    for (uint64_t i = 0; i < (n ? n : 1); i++) {
        const gmt_tag_device *td = n ? &t->dev[i] : &none;
        if (td->device >= GMA_MAX_DEVICES || !gma_dev_selected(r, td->device))
            continue;
        gma_tagrow *row = gma_vec_push(&r->tags);
        if (!row) {
            oom(r);
            return;
        }
        row->ts = t->ts;
        row->name = t->name;
        row->step = t->step;
        row->device = td->device;
        row->live = td->live_bytes;
        row->driver_used = td->driver_used;
        row->driver_total = td->driver_total;
        row->has_fw = t->has_framework != 0;
        row->fw_allocated = td->fw_allocated;
        row->fw_reserved = td->fw_reserved;
        row->nodev = n == 0;
    }
}

static void on_sample(gma_replay *r, const gmt_memsample *s)
{
    gma_dev *D = dev_get(r, s->device);
    if (!D)
        return;
    note_ts(r, s->ts);
    gma_sample_update(D, s->ts, s->used, s->total);
    gma_layer_sample(&r->layer, s->device, s->ts, s->used);
    if (!gma_dev_selected(r, s->device))
        return;
    int64_t w = r->opt.window >= 0 ? win_of(r, s->ts) : 0;
    if (r->opt.window >= 0 && !win_selected(r, w))
        return;
    PUBLISH(r, sample, s->device, s->ts, s->used);
}

static void on_window_begin(gma_replay *r, const gmt_window_begin *b)
{
    note_ts(r, b->ts);
    r->window_records = 1;
    gma_layer_window_begin(&r->layer);
    if (r->cur_win >= 0)
        gma_window_close(r, b->ts, WIN(r, r->cur_win)->last_step, GMT_WEND_SCHEDULE, 0);
    /* The baseline that follows is the live set: drop what we had. The walk
     * empties the buckets it drops (val 0 marks an empty one): one pass over
     * the map instead of the walk and then a memset of it. */
    for (size_t k = 0; k < r->live.cap; k++) {
        if (r->live.b[k].val) {
            entry_dead(r, (uint32_t)(r->live.b[k].val - 1), b->ts, 1, 0);
            r->live.b[k].val = 0;
        }
    }
    r->live.count = 0;
    for (unsigned d = 0; d < GMA_MAX_DEVICES; d++) {
        r->dev[d].live = 0;
        r->dev[d].live_host = 0;
    }
    r->live_total = 0;
    int64_t w = gma_window_open(r, b->window, b->ts, b->step, 0);
    if (w < 0)
        return;
    gma_window *W = WIN(r, w);
    W->baseline_count = b->baseline_count;
    W->baseline_bytes = b->baseline_bytes;
    if (r->ncons && win_selected(r, w))
        PUBLISH(r, window, b->window, b->ts, 1);
}

static void on_header(gma_replay *r, const gmt_header *h)
{
    r->has_header = 1;
    r->hdr = *h;
    r->hdr_host = gma_str_keep(r, &h->host);
    r->hdr_cmd = gma_str_keep(r, &h->cmdline);
    r->hdr_cfg = gma_str_keep(r, &h->config);
    r->hdr_ver = gma_str_keep(r, &h->profiler_version);
    memset(&r->hdr.host, 0, sizeof(r->hdr.host));
    memset(&r->hdr.cmdline, 0, sizeof(r->hdr.cmdline));
    memset(&r->hdr.config, 0, sizeof(r->hdr.config));
    memset(&r->hdr.profiler_version, 0, sizeof(r->hdr.profiler_version));
    if (!r->has_origin || h->start_ts <= r->origin) {
        r->origin = h->start_ts;
        r->has_origin = 1;
    }
}

static void on_device(gma_replay *r, const gmt_device *d)
{
    gma_dev *D = dev_get(r, d->device);
    if (!D)
        return;
    D->name_off = gma_str_keep(r, &d->name);
    D->total_mem = d->total_mem;
    D->sm_count = d->sm_count;
    D->cc_major = d->cc_major;
    D->cc_minor = d->cc_minor;
    PUBLISH(r, device, d->device);
}

/* A size past what the trace's sizes may add up to (GMA_BYTES_MAX): the
 * record is refused as damaged (counted, a note), so that no total wraps. */
static inline __attribute__((always_inline)) int size_refused(gma_replay *r, uint64_t bytes)
{
    if (__builtin_expect(bytes <= GMA_BYTES_MAX - r->bytes_seen, 1)) {
        r->bytes_seen += bytes;
        return 0;
    }
    r->huge_refused++;
    return 1;
}

/* One record. Inline in both callers: the read loop, which runs it once per
 * event and so saves a call and its register spills per record, and
 * gma_replay_record (the fuzzer and tests feed records one by one). */
static inline __attribute__((always_inline)) int replay_record(gma_replay *r, const gmt_record *rec, const int plain)
{
    r->records++;
    if ((rec->type == GMT_REC_ALLOC || rec->type == GMT_REC_FREE) && size_refused(r, rec->u.mem.bytes))
        return 0;
    if ((rec->type == GMT_REC_MEMCPY || rec->type == GMT_REC_MEMSET) && size_refused(r, rec->u.copy.bytes))
        return 0;
    if (rec->type == GMT_REC_BLOCK && size_refused(r, rec->u.block.bytes))
        return 0;
    if (r->fw_cuda && (rec->type == GMT_REC_ALLOC || rec->type == GMT_REC_FREE) &&
        fw_cuda(r, &rec->u.mem, rec->type == GMT_REC_ALLOC))
        return r->err ? -1 : 0;
    switch (rec->type) {
    case GMT_REC_ALLOC:
        if (rec->u.mem.flags & GMT_MEMF_BASELINE)
            (plain ? on_baseline_plain : on_baseline)(r, &rec->u.mem);
        else
            (plain ? on_alloc_plain : on_alloc)(r, &rec->u.mem);
        break;
    case GMT_REC_FREE: (plain ? on_free_plain : on_free)(r, &rec->u.mem); break;
    case GMT_REC_KERNEL: (plain ? on_kernel_plain : on_kernel)(r, &rec->u.kernel); break;
    case GMT_REC_RANGE_BEGIN: gma_on_range_begin(r, &rec->u.range); break;
    case GMT_REC_RANGE_END: gma_on_range_end(r, &rec->u.range); break;
    case GMT_REC_STRING: gma_str_set(r, rec->u.string.id, &rec->u.string.str); break;
    case GMT_REC_MEMCPY: on_copy(r, &rec->u.copy, 0); break;
    case GMT_REC_MEMSET: on_copy(r, &rec->u.copy, 1); break;
    case GMT_REC_STEP: gma_on_step(r, &rec->u.step); break;
    case GMT_REC_TAG: on_tag(r, &rec->u.tag); break;
    case GMT_REC_BLOCK: on_block(r, &rec->u.block); break;
    case GMT_REC_MEMSAMPLE: on_sample(r, &rec->u.sample); break;
    case GMT_REC_MARK:
        note_ts(r, rec->u.mark.ts);
        if (consumers_take_marks(r) && win_selected(r, win_of(r, rec->u.mark.ts)))
            PUBLISH(r, mark, rec->u.mark.tid,
                            rec->u.mark.name < GMA_MAX_STRING_ID ? (uint32_t)rec->u.mark.name : 0, rec->u.mark.ts);
        break;
    case GMT_REC_WINDOW_BEGIN: on_window_begin(r, &rec->u.wbegin); break;
    case GMT_REC_WINDOW_END: gma_on_window_end(r, &rec->u.wend); break;
    case GMT_REC_HEADER: on_header(r, &rec->u.header); break;
    case GMT_REC_DEVICE: on_device(r, &rec->u.device); break;
    case GMT_REC_STATS:
        r->has_stats = 1;
        r->stats = rec->u.stats;
        break;
    case GMT_REC_TRAILER:
        r->has_trailer_rec = 1;
        r->trailer = rec->u.trailer;
        break;
    case GMT_REC_OOM: PUBLISH_RARE(r, failure, &rec->u.oom); break;
    case GMT_REC_LIVE: PUBLISH_RARE(r, live_rec, &rec->u.live); break;
    default: break;
    }
    return r->err ? -1 : 0;
}

int gma_replay_record(gma_replay *r, const gmt_record *rec) { return replay_record(r, rec, 0); }

/* replay_record for a record of a batch (gmt_hot: the hot types only). */
static inline __attribute__((always_inline)) int replay_hot(gma_replay *r, const gmt_hot *h, const gmt_hot *end,
                                                           const int plain)
{
    /* r->records: read_loop counts a batch at once */
    /* the handlers inline here, their one hot call site; replay_record
     * calls their out-of-line copies. The three types of nearly every
     * record are tested first: compares cost less than a jump table. */
    gmt_type t = h->type;
    if (t == GMT_REC_FREE || t == GMT_REC_ALLOC ? size_refused(r, h->u.mem.bytes)
        : t == GMT_REC_MEMCPY || t == GMT_REC_MEMSET ? size_refused(r, h->u.copy.bytes) : 0) {
        /* refused: a size past GMA_BYTES_MAX */
    } else if (__builtin_expect(r->fw_cuda, 0) && (t == GMT_REC_FREE || t == GMT_REC_ALLOC) &&
        fw_cuda(r, &h->u.mem, t == GMT_REC_ALLOC)) {
        /* the blocks layer: CUDA's allocations feed its numbers alone */
    } else if (t == GMT_REC_FREE) {
        free_record(r, &h->u.mem, plain, h + 1, end);
    } else if (t == GMT_REC_KERNEL) {
        kernel_record(r, &h->u.kernel, plain);
    } else if (t == GMT_REC_ALLOC) {
        if (h->u.mem.flags & GMT_MEMF_BASELINE)
            alloc_record(r, &h->u.mem, 1, plain, NULL, NULL);
        else
            alloc_record(r, &h->u.mem, 0, plain, h + 1, end);
    } else {
        switch (t) {
        case GMT_REC_MEMCPY: on_copy(r, &h->u.copy, 0); break;
        case GMT_REC_MEMSET: on_copy(r, &h->u.copy, 1); break;
        case GMT_REC_RANGE_BEGIN: gma_on_range_begin(r, &h->u.range); break;
        case GMT_REC_RANGE_END: gma_on_range_end(r, &h->u.range); break;
        default: break;
        }
    }
    return r->err ? -1 : 0;
}

/* ---- life cycle ---------------------------------------------------------------------- */

int gma_replay_init(gma_replay *r, const gma_opts *opt, const char *path)
{
    memset(r, 0, sizeof(*r));
    r->opt = *opt;
    r->path = path;
    r->cur_win = -1;
    r->win_from = UINT64_MAX;
    r->first_ts = UINT64_MAX; /* note_ts */
    r->baseline_win = -1;
    r->last_dev = UINT64_MAX;
    r->krow_hit_name = KROW_NONE;
    gma_vec_init(&r->entries, sizeof(gma_entry));
    gma_vec_init(&r->threads, sizeof(gma_thread));
    gma_vec_init(&r->slots, sizeof(gma_slot));
    gma_vec_init(&r->krows, sizeof(gma_krow));
    gma_vec_init(&r->rinsts, sizeof(gma_rinst));
    gma_vec_init(&r->rrows, sizeof(gma_rrow));
    gma_vec_init(&r->steps, sizeof(gma_steprow));
    gma_vec_init(&r->tags, sizeof(gma_tagrow));
    gma_vec_init(&r->streams, sizeof(gma_streamrow));
    gma_vec_init(&r->windows, sizeof(gma_window));
    gma_vec_init(&r->arows, sizeof(uint32_t));
    r->rring = calloc(GMA_RRING, sizeof(*r->rring));
    /* Row 0 of kernels and ranges is "(unattributed)"; slot 0 is never
     * used (gma_slot_get's always-stale FIFO item names it). */
    if (!r->rring || !gma_vec_push(&r->krows) || !gma_vec_push(&r->rrows) || !gma_vec_push(&r->slots) ||
        gma_vec_reserve(&r->entries, 1024) != 0) {
        gma_replay_free(r);
        return -1;
    }
    return 0;
}

void gma_replay_free(gma_replay *r)
{
    while (r->ncons) { /* released while registered: its release finds its context */
        unsigned n = r->ncons;
        const gma_consumer *c = r->cons[n - 1];
        if (c->release)
            c->release(r);
        if (r->ncons == n) /* the release did not remove its table */
            r->ncons--;
    }
    r->cons_needs = 0;
    while (r->nrare) { /* released while registered: its release finds its context */
        unsigned n = r->nrare;
        const gma_consumer *c = r->rare[n - 1];
        if (c->release)
            c->release(r);
        if (r->nrare == n)
            r->nrare--;
    }
    gma_strs_free(&r->strs);
    free(r->str_off);
    free(r->str_len);
    free(r->klabel);
    gma_strs_free(&r->klabels);
    gma_vec_free(&r->entries);
    gma_map_free(&r->live);
    for (size_t i = 0; i < r->threads.len; i++)
        free(THR(r, i)->ring);
    gma_vec_free(&r->threads);
    gma_map_free(&r->thread_of);
    gma_vec_free(&r->slots);
    gma_map_free(&r->slot_of);
    free(r->fifo);
    gma_vec_free(&r->krows);
    free(r->krow_of);
    gma_vec_free(&r->rinsts);
    gma_map_free(&r->rinst_of);
    free(r->rring);
    gma_vec_free(&r->rrows);
    free(r->rrow_of);
    free(r->rcanon);
    gma_map_free(&r->rcanon_of);
    gma_vec_free(&r->steps);
    gma_map_free(&r->step_of);
    gma_vec_free(&r->tags);
    gma_layer_free(&r->layer);
    gma_vec_free(&r->streams);
    gma_map_free(&r->stream_of);
    gma_vec_free(&r->windows);
    gma_vec_free(&r->arows);
    r->rring = NULL;
    r->str_off = r->str_len = r->klabel = r->krow_of = r->rrow_of = r->rcanon = NULL;
    r->fifo = NULL;
}

int gma_replay_finish(gma_replay *r, const gmt_reader_end *end)
{
    if (r->finished)
        return r->err ? -1 : 0;
    r->finished = 1;
    if (end)
        r->rend = *end;
    /* A window still open when the trace ends: its leaks are measured here. */
    if (r->cur_win >= 0)
        gma_window_close(r, r->last_ts, WIN(r, r->cur_win)->last_step, GMT_WEND_EXIT, 0);
    /* Kernels that never came: their allocations stay unattributed. */
    for (size_t i = 0; i < r->slots.len; i++) {
        if (SLOT(r, i)->used) {
            r->unattributed_end++;
            slot_settle(r, (uint32_t)i, GMA_NAME_UNATTR);
        }
    }
    /* Ranges still open end with the trace. */
    for (size_t i = 0; i < r->rinsts.len; i++) {
        gma_rinst *in = RINST(r, i);
        uint32_t j;
        if (gma_map_get(&r->rinst_of, in->id, &j) && j == i)
            gma_range_close(r, (uint32_t)i, r->last_ts);
    }
    if (r->arow_time_key) {
        for (size_t i = 0; i < r->entries.len; i++) {
            gma_entry *e = ENT(r, i);
            if ((e->flags & (GMA_E_INUSE | GMA_E_LIVE | GMA_E_ACCOUNTED)) ==
                (GMA_E_INUSE | GMA_E_LIVE | GMA_E_ACCOUNTED))
                gma_arow_offer(r, (uint32_t)i);
        }
    }
    /* Step durations: a step ends where the next begins, or the trace ends. */
    for (size_t i = 0; i < r->steps.len; i++) {
        gma_steprow *s = STEPROW(r, i);
        if (s->has_start && !s->end_ts)
            s->end_ts = r->last_ts;
    }
    if (!r->opt.full_names && gma_kernel_labels_make(r) != 0)
        oom(r);
    return r->err ? -1 : 0;
}

/* The progress line (progress.h): how far into the file, records so far. */
static __attribute__((noinline, cold)) void progress_tick(gma_replay *r, const gmt_reader *rd)
{
    gma_progress_update(r->opt.progress, gmt_reader_offset(rd), r->records);
    r->progress_next = r->records + GMA_PROGRESS_EVERY;
}

/* The read loop: a run of hot records from gmt_reader_next_hot, replayed,
 * then the record that ended the run from gmt_reader_next. 1 when the
 * replay failed (out of memory), 0 at the end of the trace. */
static inline __attribute__((always_inline)) int read_loop(gma_replay *r, gmt_reader *rd,
                                                           gmt_hot hot[GMA_READ_BATCH], const int plain)
{
    gmt_record rec;
    for (;;) {
        /* one comparison a batch: the clock only every GMA_PROGRESS_EVERY records */
        if (__builtin_expect(r->records >= r->progress_next, 0))
            progress_tick(r, rd);
        size_t n = gmt_reader_next_hot(rd, hot, GMA_READ_BATCH);
        r->dk = 0; /* the batch's records are new: no kernel ahead yet */
        /* counted at once (the handlers do not read the count); a failed
         * record is the last one counted, as when they were one by one */
        r->records += n;
        for (const gmt_hot *h = hot, *end = hot + n; h < end; h++) {
            if (replay_hot(r, h, end, plain) != 0) {
                r->records -= (uint64_t)(end - h - 1);
                return 1;
            }
        }
        if (n == GMA_READ_BATCH)
            continue;
        if (gmt_reader_next(rd, &rec) <= 0)
            return 0;
        if (replay_record(r, &rec, plain) != 0)
            return 1;
    }
}

/* Whether the trace holds BLOCK records, from its beginning: the bridge
 * attaches at the first CUDA context, so its first records come early; a
 * trace without them pays at most this many records read twice. */
#define GMA_BLOCK_SCAN 2000000u

int gma_trace_has_blocks(const char *path)
{
    if (strcmp(path, "-") == 0)
        return 0; /* standard input is read once: --layer blocks says it */
    gmt_reader *rd = gmt_reader_open(path);
    if (!rd)
        return 0;
    gmt_record rec;
    int found = 0;
    for (uint64_t n = 0; n < GMA_BLOCK_SCAN && !found && gmt_reader_next(rd, &rec) > 0; n++)
        found = rec.type == GMT_REC_BLOCK;
    gmt_reader_close(rd);
    return found;
}

/* "reading TRACE", of its size when it is a file. */
static void progress_begin(gma_replay *r, const gmt_reader *rd)
{
    r->rd = rd;
    r->progress_next = UINT64_MAX;
    gma_progress *p = r->opt.progress;
    if (!p || p->mode == GMA_PROGRESS_OFF)
        return;
    struct stat st;
    uint64_t size = strcmp(r->path, "-") != 0 && stat(r->path, &st) == 0 && S_ISREG(st.st_mode) ? (uint64_t)st.st_size : 0;
    gma_buf b = { 0 };
    gma_buf_puts(&b, "reading ");
    gma_text_clean(&b, r->path, strlen(r->path));
    gma_progress_begin(p, gma_buf_str(&b), size);
    gma_buf_free(&b);
    r->progress_next = GMA_PROGRESS_EVERY;
}

static void progress_end(gma_replay *r, const gmt_reader *rd)
{
    r->rd = NULL;
    if (r->progress_next == UINT64_MAX)
        return;
    r->progress_next = UINT64_MAX;
    gma_progress_update(r->opt.progress, gmt_reader_offset(rd), r->records);
    gma_progress_end(r->opt.progress);
}

int gma_replay_read(gma_replay *r, char *msg, size_t msgcap)
{
    const char *path = r->path;
    msg[0] = 0;
    int blocks = r->opt.layer == GMA_LAYER_BLOCKS || gma_trace_has_blocks(path);
    r->fw = blocks && r->opt.layer != GMA_LAYER_SEGMENTS;
    /* standard input cannot be scanned first: CUDA's allocations feed the
     * layer's numbers in case blocks come */
    r->fw_cuda = blocks || strcmp(path, "-") == 0;
    gmt_reader *rd = gmt_reader_open(path);
    if (!rd) {
        snprintf(msg, msgcap, "cannot open %s: %s", path, strerror(errno));
        return 1;
    }
    /* Frames decompress ahead on the other cores; the records come in the
     * same order, so the threads change no output (1: the reader alone,
     * as for a pipe). */
    unsigned nth = r->opt.threads;
    if (!nth) {
        long c = sysconf(_SC_NPROCESSORS_ONLN);
        nth = c < 1 ? 1u : c > 64 ? 64u : (unsigned)c;
    }
    (void)gmt_reader_set_threads(rd, nth);
    progress_begin(r, rd);
    /* Runs of the hot records come in batches (gmt_reader_next_hot): the
     * decoder runs a tight loop over a run, then the replay over it,
     * instead of a call into the reader per record; each run is followed
     * by the one record that stopped it, from gmt_reader_next. The batch
     * stays in L1 (11 KiB). */
    gmt_hot hot[GMA_READ_BATCH];
    /* Exports are attached before the read and stay for all of it. */
    int failed = replay_plain(r) ? read_loop(r, rd, hot, 1) : read_loop(r, rd, hot, 0);
    progress_end(r, rd);
    if (failed) {
        gmt_reader_close(rd);
        snprintf(msg, msgcap, "%s: out of memory after %llu records", path, (unsigned long long)r->records);
        return 1;
    }
    gmt_reader_end end = *gmt_reader_end_info(rd);
    gmt_reader_close(rd);
    if (r->records == 0) {
        /* Nothing usable: say precisely why. */
        if (end.status == GMT_E_VERSION)
            snprintf(msg, msgcap, "%s: trace format version %u.%u is newer than this gmem-analyze reads (%u.x)", path,
                     end.major, end.minor, GMT_VERSION_MAJOR);
        else if (end.file_size == 0)
            snprintf(msg, msgcap, "%s: empty file, not a gmemprof trace", path);
        else if ((end.status == GMT_E_MAGIC || end.status == GMT_E_ZSTD) &&
                 strncmp(end.message, "not a gmemprof trace", 20) == 0)
            snprintf(msg, msgcap, "%s: %s", path, end.message); /* the reader said it already */
        else if (end.status == GMT_E_MAGIC || end.status == GMT_E_ZSTD)
            snprintf(msg, msgcap, "%s: not a gmemprof trace (%s)", path, end.message);
        else if (end.status != GMT_OK)
            snprintf(msg, msgcap, "%s: unreadable trace: %s", path, end.message);
        else
            snprintf(msg, msgcap, "%s: the trace holds no records", path);
        return 1;
    }
    gma_layer_finish(&r->layer);
    if (gma_replay_finish(r, &end) != 0 || r->layer.err) {
        snprintf(msg, msgcap, "%s: out of memory", path);
        return 1;
    }
    return 0;
}

int gma_replay_file(gma_replay *r, const gma_opts *opt, const char *path, char *msg, size_t msgcap)
{
    if (gma_replay_init(r, opt, path) != 0) {
        snprintf(msg, msgcap, "out of memory");
        return 1;
    }
    return gma_replay_read(r, msg, msgcap);
}

/* ---- summary helpers -------------------------------------------------------------------- */

int gma_main_source(const gma_replay *r)
{
    uint64_t best = 0;
    int bi = -1;
    for (int i = 0; i < GMT_SRC_COUNT_; i++)
        if (i != GMT_SRC_PINNED_HOST && r->src[i].bytes > best) {
            best = r->src[i].bytes;
            bi = i;
        }
    return bi;
}

int gma_framework_source(const gma_replay *r)
{
    if (r->fw)
        return -1; /* the bridge's blocks are the framework's tensors */
    int bi = gma_main_source(r);
    return bi == GMT_SRC_ASYNC_POOL || bi == GMT_SRC_VMM ? bi : -1;
}

gma_mode gma_allocator_mode(const gma_replay *r)
{
    const gma_srcstat *s = r->src;
    uint64_t dev_bytes = s[GMT_SRC_MALLOC].bytes + s[GMT_SRC_ASYNC_POOL].bytes + s[GMT_SRC_VMM].bytes +
                         s[GMT_SRC_MANAGED].bytes + s[GMT_SRC_PITCHED].bytes + s[GMT_SRC_STATIC].bytes +
                         s[GMT_SRC_UNKNOWN].bytes;
    gma_mode m = { "none", "no device allocations were seen in the selection" };
    if (r->fw && !r->layer.seen) {
        m.meaning = "--layer blocks, and the trace holds no PyTorch blocks";
        return m;
    }
    if (r->fw) {
        m.mode = "PyTorch caching allocator, tensors";
        m.meaning = "the PyTorch bridge reported every block of the caching allocator: bytes are tensors as "
                    "torch.cuda.memory_allocated counts them; reserved and outside-allocator bytes come from "
                    "its segments and CUPTI (--layer segments shows what CUDA handed out instead)";
        return m;
    }
    if (r->fw_cuda && r->layer.seen) {
        m.mode = "PyTorch caching allocator, segments";
        m.meaning = "bytes are what CUDA handed out: the allocator's segments (reserved memory) and other libraries' "
                    "memory; a kernel is charged when a segment is created (--layer blocks shows tensors)";
        return m;
    }
    if (!dev_bytes && s[GMT_SRC_PINNED_HOST].count) {
        m.mode = "pinned host memory";
        m.meaning = "only cudaMallocHost/cudaHostAlloc buffers: host memory pinned for fast copies, no device memory";
    }
    if (!dev_bytes)
        return m;
    /* The source holding most of the device bytes names the mode. */
    int bi = gma_main_source(r);
    switch (bi < 0 ? GMT_SRC_UNKNOWN : bi) {
    case GMT_SRC_MALLOC: {
        const gma_srcstat *x = &s[GMT_SRC_MALLOC];
        /* PyTorch's caching allocator asks cudaMalloc for segments (2 MiB
         * multiples, 20 MiB and larger blocks) and hardly ever frees them. */
        int seg = x->count && x->seg_like * 10 >= x->count * 8 && x->frees * 10 <= x->count;
        if (seg) {
            m.mode = "caching-allocator segments";
            m.meaning = "CUPTI sees the framework's cudaMalloc segments (reserved memory), not tensors: bytes are "
                        "reserved, and a kernel is charged when a segment is created; run with "
                        "PYTORCH_NO_CUDA_MEMORY_CACHING=1 or backend:cudaMallocAsync to see tensors";
        } else {
            m.mode = "plain cudaMalloc";
            m.meaning = "every buffer is its own cudaMalloc: bytes, owners and lifetimes are exact per buffer";
        }
        break;
    }
    case GMT_SRC_ASYNC_POOL:
        m.mode = "async pool per tensor";
        m.meaning = "stream-ordered cudaMallocAsync, one allocation per tensor: bytes are what tensors use "
                    "(torch.cuda.memory_allocated), the pool's reserve is not counted";
        break;
    case GMT_SRC_VMM:
        m.mode = "VMM mappings";
        m.meaning = "memory mapped with cuMemCreate/cuMemMap in chunks (expandable segments): bytes are mapped "
                    "(reserved) memory, which grows in chunk steps, not per tensor";
        break;
    case GMT_SRC_MANAGED:
        m.mode = "managed memory";
        m.meaning = "cudaMallocManaged: bytes are the managed sizes, which the driver migrates on demand; "
                    "device residency can be lower";
        break;
    default:
        m.mode = "mixed/other";
        m.meaning = "allocations of an unknown or uncommon API: bytes are what CUPTI reported";
        break;
    }
    return m;
}

int gma_layer_warning(const gma_replay *r, char *out, size_t cap)
{
    if (r->opt.layer != GMA_LAYER_BLOCKS || r->layer.seen)
        return 0;
    snprintf(out, cap, "--layer blocks: the trace holds no PyTorch blocks (the PyTorch bridge was not attached, or "
                       "reported none), so the tables are empty; without --layer they rank what CUDA handed out");
    return 1;
}

int gma_trace_warning(const gma_replay *r, char *out, size_t cap)
{
    const gmt_reader_end *e = &r->rend;
    if (e->status != GMT_OK || e->truncated || !e->has_trailer) {
        const char *what = e->status != GMT_OK && !e->truncated ? "trace damaged"
                           : e->truncated                       ? "trace truncated"
                                                                : "trace has no trailer (cut short)";
        snprintf(out, cap, "%s (%s): the numbers cover the %llu records before the cut only", what,
                 e->message[0] ? e->message : "the profiler did not finish writing", (unsigned long long)r->records);
        return 1;
    }
    if (e->unchecked_frames) { /* gmemprof writes a checksum in every frame */
        snprintf(out, cap, "trace altered: %llu of %llu frames carry no zstd checksum (gmemprof writes one in every "
                 "frame), so damage in them would go unnoticed: the trace was not left as the profiler wrote it",
                 (unsigned long long)e->unchecked_frames, (unsigned long long)e->frames);
        return 1;
    }
    return 0;
}
