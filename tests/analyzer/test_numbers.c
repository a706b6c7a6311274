/*
 * The key numbers of every scenario, asserted through the analyzer library
 * (no text parsing): peak, attribution per kernel and range, live at the
 * peak, leaks, baseline, steps, tags, filters, damaged input. The expected
 * values are worked out by hand in scenarios.c.
 * Usage: test_numbers DIR (a scratch directory for the traces).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gma.h"
#include "diff.h"
#include "report.h"
#include "scenarios.h"

#include "../check.h"

/* the case being checked is tc_context's, printed with each failure */

static char dir[4096];
static gma_replay R;

static void opts(gma_opts *o)
{
    memset(o, 0, sizeof(*o));
    o->by = GMA_BY_KERNEL;
    o->sort = GMA_SORT_MEM;
    o->top = 10;
    o->window = o->step = o->device = -1;
}

static char *path_of(const char *name)
{
    static char p[4200];
    snprintf(p, sizeof(p), "%s/%s.gmt", dir, name);
    return p;
}

static int load(const char *name, const gma_opts *o)
{
    char msg[600];
    tc_context("%s", name);
    int rc = gma_replay_file(&R, o, path_of(name), msg, sizeof(msg));
    CHECK(rc == 0, "%s: %s", name, msg);
    return rc;
}

static const gma_krow *krow(uint32_t name)
{
    if (name == 0)
        return &GMA_VEC_AT(&R.krows, gma_krow, 0);
    for (size_t i = 1; i < R.krows.len; i++)
        if (GMA_VEC_AT(&R.krows, gma_krow, i).name == name)
            return &GMA_VEC_AT(&R.krows, gma_krow, i);
    static gma_krow none;
    return &none;
}

static const gma_rrow *rrow(uint32_t name)
{
    if (name == 0)
        return &GMA_VEC_AT(&R.rrows, gma_rrow, 0);
    for (size_t i = 1; i < R.rrows.len; i++)
        if (GMA_VEC_AT(&R.rrows, gma_rrow, i).name == name)
            return &GMA_VEC_AT(&R.rrows, gma_rrow, i);
    static gma_rrow none;
    return &none;
}

static const gma_steprow *steprow(uint64_t step)
{
    for (size_t i = 0; i < R.steps.len; i++)
        if (GMA_VEC_AT(&R.steps, gma_steprow, i).step == step)
            return &GMA_VEC_AT(&R.steps, gma_steprow, i);
    static gma_steprow none;
    return &none;
}

static const gma_group *group(const gma_report *rep, const gma_vec *v, size_t i)
{
    static gma_group none;
    (void)rep;
    return i < v->len ? &GMA_VEC_AT(v, gma_group, i) : &none;
}
#define GNAME(rep, v, i) gma_rep_str(rep, group(rep, v, i)->name)

static void test_basic(void)
{
    gma_opts o;
    opts(&o);
    if (load("basic", &o) != 0)
        return;
    const gma_dev *D = &R.dev[0];
    CHECK(R.rend.has_trailer && !R.rend.truncated);
    CHECK_EQ_U64(D->peak, 127 * MiB);
    CHECK_EQ_U64(gma_rel(&R, D->peak_ts), 32000000);
    CHECK_EQ_U64(D->peak_step, 1);
    CHECK_EQ_U64(D->peak_state, GMA_PEAK_KERNEL);
    CHECK_EQ_U64(D->peak_kname, 5); /* kernE */
    CHECK_EQ_U64(D->best_used, 240 * MiB);
    CHECK_EQ_U64(D->baseline_bytes, 96 * MiB);
    CHECK_EQ_U64(D->baseline_count, 2);
    CHECK_EQ_U64(D->alloc_bytes, 42 * MiB);
    CHECK_EQ_U64(D->alloc_count, 7);
    CHECK_EQ_U64(D->free_bytes, 27 * MiB);
    CHECK_EQ_U64(D->free_count, 4);
    CHECK_EQ_U64(D->leaked_bytes, 15 * MiB);
    CHECK_EQ_U64(D->leaked_count, 3);
    CHECK_EQ_U64(D->kernels, 6);
    CHECK_EQ_U64(D->kernel_ns, 21000);
    /* attribution */
    CHECK_EQ_U64(krow(4)->alloc_bytes, 16 * MiB); /* kernD: A5, settled when it came */
    CHECK_EQ_U64(krow(4)->free_bytes, 2 * MiB);
    CHECK_EQ_U64(krow(4)->peak, 118 * MiB);
    CHECK_EQ_U64(krow(1)->calls, 2); /* kernA */
    CHECK_EQ_U64(krow(1)->time_ns, 4000);
    CHECK_EQ_U64(krow(1)->alloc_bytes, 11 * MiB);
    CHECK_EQ_U64(krow(1)->free_bytes, 0);
    CHECK_EQ_U64(krow(1)->peak, 110 * MiB);
    CHECK_EQ_U64(krow(5)->alloc_bytes, 6 * MiB); /* kernE: its kernel came first */
    CHECK_EQ_U64(krow(5)->peak, 127 * MiB);
    CHECK_EQ_U64(krow(2)->alloc_bytes, 4 * MiB); /* kernB */
    CHECK_EQ_U64(krow(2)->free_bytes, 1 * MiB);
    CHECK_EQ_U64(krow(2)->peak, 103 * MiB);
    CHECK_EQ_U64(krow(3)->alloc_bytes, 0); /* kernC */
    CHECK_EQ_U64(krow(3)->free_bytes, 8 * MiB);
    CHECK_EQ_U64(krow(0)->alloc_bytes, 5 * MiB); /* (unattributed) */
    CHECK_EQ_U64(krow(0)->free_bytes, 16 * MiB);
    CHECK_EQ_U64(krow(0)->peak, 121 * MiB);
    CHECK_EQ_U64(R.unattributed_end, 1);
    /* steps */
    CHECK_EQ_U64(steprow(0)->alloc_bytes, 15 * MiB);
    CHECK_EQ_U64(steprow(0)->free_bytes, 9 * MiB);
    CHECK_EQ_U64(steprow(0)->peak, 110 * MiB);
    CHECK_EQ_U64(steprow(0)->live_end, 102 * MiB);
    CHECK_EQ_U64(steprow(1)->alloc_bytes, 27 * MiB);
    CHECK_EQ_U64(steprow(1)->free_bytes, 18 * MiB);
    CHECK_EQ_U64(steprow(1)->peak, 127 * MiB);
    CHECK_EQ_U64(steprow(1)->live_end, 111 * MiB);
    CHECK_EQ_U64(steprow(0)->end_ts - steprow(0)->start_ts, 15000000);
    /* tag rows are kept for --by tag (and the timeline) only */
    CHECK_EQ_U64(R.tags.len, 0);
    /* windows */
    CHECK_EQ_U64(R.windows.len, 1);
    CHECK_EQ_U64(GMA_VEC_AT(&R.windows, gma_window, 0).baseline_seen_bytes, 96 * MiB);
    CHECK_EQ_U64(GMA_VEC_AT(&R.windows, gma_window, 0).peak, 127 * MiB);
    CHECK_EQ_U64(GMA_VEC_AT(&R.windows, gma_window, 0).leaked_bytes, 15 * MiB);

    gma_report rep;
    CHECK(gma_report_build(&rep, &R) == 0);
    CHECK_STR(rep.mode.mode, "plain cudaMalloc");
    CHECK_EQ_U64(rep.nwarn, 0);
    CHECK_EQ_U64(rep.npeaks, 1);
    const gma_peakview *pv = &rep.peaks[0];
    CHECK_EQ_U64(pv->bytes, 127 * MiB); /* the allocations live at the peak add up to it */
    CHECK_EQ_U64(pv->count, 6);
    CHECK_EQ_U64(pv->baseline_bytes, 96 * MiB);
    CHECK_EQ_U64(pv->baseline_count, 2);
    CHECK_STR(GNAME(&rep, &pv->by_kernel, 0), "triton_poi_fused_add_0");
    CHECK_EQ_U64(group(&rep, &pv->by_kernel, 0)->bytes, 16 * MiB);
    CHECK_STR(GNAME(&rep, &pv->by_kernel, 1), "kernel_e");
    CHECK_EQ_U64(group(&rep, &pv->by_kernel, 1)->bytes, 6 * MiB);
    CHECK_STR(GNAME(&rep, &pv->by_kernel, 2), "(unattributed)");
    CHECK_EQ_U64(group(&rep, &pv->by_kernel, 2)->bytes, 5 * MiB);
    CHECK_STR(GNAME(&rep, &pv->by_kernel, 3), "kernel_b");
    CHECK_EQ_U64(group(&rep, &pv->by_kernel, 3)->bytes, 4 * MiB);
    CHECK_STR(GNAME(&rep, &pv->by_range, 0), "(unattributed)");
    CHECK_EQ_U64(group(&rep, &pv->by_range, 0)->bytes, 27 * MiB);
    CHECK_STR(GNAME(&rep, &pv->by_range, 1), "forward");
    CHECK_EQ_U64(group(&rep, &pv->by_range, 1)->bytes, 4 * MiB);
    CHECK_EQ_U64(rep.leaks.bytes, 15 * MiB);
    CHECK_EQ_U64(rep.leaks.count, 3);
    CHECK(!rep.leaks.at_trace_end);
    CHECK_STR(GNAME(&rep, &rep.leaks.by_kernel, 0), "kernel_e");
    CHECK_STR(GNAME(&rep, &rep.leaks.by_kernel, 1), "(unattributed)");
    CHECK_STR(GNAME(&rep, &rep.leaks.by_kernel, 2), "kernel_b");
    CHECK_STR(GNAME(&rep, &rep.leaks.by_range, 0), "(unattributed)");
    CHECK_EQ_U64(group(&rep, &rep.leaks.by_range, 0)->bytes, 11 * MiB);
    /* the ranked table: self memory, descending */
    const gma_table *t = &rep.table;
    CHECK_EQ_U64(t->nrows, 6);
    CHECK_STR(gma_cell_text(t, gma_table_cell(t, 0, 0)), "triton_poi_fused_add_0");
    CHECK_EQ_U64(gma_table_cell(t, 0, 2)->v.i, 14 * MiB);
    CHECK_STR(gma_cell_text(t, gma_table_cell(t, 1, 0)), "test::kernel_a<float, 4>");
    CHECK_STR(gma_cell_text(t, gma_table_cell(t, 4, 0)), "kernel_c");
    CHECK_EQ_U64(gma_table_cell(t, 4, 2)->v.i, -(int64_t)(8 * MiB));
    CHECK_STR(gma_cell_text(t, gma_table_cell(t, 5, 0)), "(unattributed)");
    CHECK_EQ_U64(gma_table_cell(t, 5, 2)->v.i, -(int64_t)(11 * MiB));
    gma_report_free(&rep);
    gma_replay_free(&R);

    /* ranges: self and total (torch.profiler's self_cuda_memory_usage and cuda_memory_usage) */
    opts(&o);
    o.by = GMA_BY_RANGE;
    if (load("basic", &o) == 0) {
        const gma_rrow *f = rrow(6), *in = rrow(7), *u = rrow(0);
        CHECK_EQ_U64(f->calls, 1);
        CHECK_EQ_U64(f->self_alloc, 7 * MiB);
        CHECK_EQ_U64(f->self_free, 1 * MiB);
        CHECK_EQ_U64(f->tot_alloc, 15 * MiB);
        CHECK_EQ_U64(f->tot_free, 9 * MiB);
        CHECK_EQ_U64(f->peak, 110 * MiB);
        CHECK_EQ_U64(f->time_ns, 13000000);
        CHECK_EQ_U64(in->self_alloc, 8 * MiB);
        CHECK_EQ_U64(in->self_free, 8 * MiB);
        CHECK_EQ_U64(in->tot_alloc, 8 * MiB);
        CHECK_EQ_U64(in->time_ns, 4000000);
        CHECK_EQ_U64(u->self_alloc, 27 * MiB);
        CHECK_EQ_U64(u->self_free, 18 * MiB);
        gma_replay_free(&R);
    }

    /* tags: the MemoryMonitor table */
    opts(&o);
    o.by = GMA_BY_TAG;
    if (load("basic", &o) == 0) {
        CHECK_EQ_U64(R.tags.len, 2);
        if (R.tags.len == 2) {
            CHECK_EQ_U64(GMA_VEC_AT(&R.tags, gma_tagrow, 0).live, 96 * MiB);
            CHECK_EQ_U64(GMA_VEC_AT(&R.tags, gma_tagrow, 1).live - GMA_VEC_AT(&R.tags, gma_tagrow, 0).live, 15 * MiB);
            CHECK_EQ_U64(GMA_VEC_AT(&R.tags, gma_tagrow, 1).driver_used - GMA_VEC_AT(&R.tags, gma_tagrow, 0).driver_used,
               30 * MiB);
        }
        gma_replay_free(&R);
    }

    /* streams */
    opts(&o);
    o.by = GMA_BY_STREAM;
    if (load("basic", &o) == 0) {
        for (size_t i = 0; i < R.streams.len; i++) {
            const gma_streamrow *s = &GMA_VEC_AT(&R.streams, gma_streamrow, i);
            if (s->stream == 0) {
                CHECK_EQ_U64(s->alloc_count, 6);
                CHECK_EQ_U64(s->alloc_bytes, 36 * MiB);
                CHECK_EQ_U64(s->free_bytes, 27 * MiB);
            } else {
                CHECK_EQ_U64(s->stream, 7);
                CHECK_EQ_U64(s->kernels, 6);
                CHECK_EQ_U64(s->kernel_ns, 21000);
                CHECK_EQ_U64(s->alloc_bytes, 6 * MiB);
                CHECK_EQ_U64(s->peak, 127 * MiB);
            }
        }
        CHECK_EQ_U64(R.streams.len, 2);
        gma_replay_free(&R);
    }

    /* --step 1 */
    opts(&o);
    o.step = 1;
    if (load("basic", &o) == 0) {
        CHECK_EQ_U64(R.dev[0].alloc_bytes, 27 * MiB);
        CHECK_EQ_U64(R.dev[0].free_bytes, 18 * MiB);
        CHECK_EQ_U64(R.dev[0].peak, 127 * MiB);
        CHECK_EQ_U64(R.dev[0].kernels, 2);
        CHECK_EQ_U64(krow(1)->calls, 0);
        CHECK_EQ_U64(krow(4)->alloc_bytes, 16 * MiB);
        gma_replay_free(&R);
    }
    /* --step 0: the peak is reached at A4 */
    opts(&o);
    o.step = 0;
    if (load("basic", &o) == 0) {
        CHECK_EQ_U64(R.dev[0].peak, 110 * MiB);
        CHECK_EQ_U64(R.dev[0].alloc_bytes, 15 * MiB);
        gma_replay_free(&R);
    }
}

static void test_multiwin(void)
{
    gma_opts o;
    opts(&o);
    if (load("multiwin", &o) != 0)
        return;
    CHECK_EQ_U64(R.windows.len, 2);
    CHECK_EQ_U64(R.dev[0].peak, 131 * MiB);
    CHECK_EQ_U64(R.dev[0].peak_step, 3);
    CHECK_EQ_U64(R.dev[0].peak_kname, 10);
    CHECK_EQ_U64(R.dev[0].baseline_bytes, 96 * MiB); /* the first window's */
    CHECK_EQ_U64(GMA_VEC_AT(&R.windows, gma_window, 0).leaked_bytes, 15 * MiB);
    CHECK_EQ_U64(GMA_VEC_AT(&R.windows, gma_window, 1).leaked_bytes, 0);
    CHECK_EQ_U64(GMA_VEC_AT(&R.windows, gma_window, 1).baseline_seen_bytes, 111 * MiB);
    CHECK_EQ_U64(GMA_VEC_AT(&R.windows, gma_window, 1).baseline_seen_count, 5);
    CHECK_EQ_U64(R.dev[0].leaked_bytes, 15 * MiB);
    gma_report rep;
    CHECK(gma_report_build(&rep, &R) == 0);
    CHECK_EQ_U64(rep.peaks[0].bytes, 131 * MiB);
    CHECK_EQ_U64(rep.peaks[0].baseline_bytes, 111 * MiB);
    CHECK_EQ_U64(rep.leaks.bytes, 15 * MiB); /* window 0's leaks, kept after window 1 began */
    gma_report_free(&rep);
    gma_replay_free(&R);

    opts(&o);
    o.window = 0;
    if (load("multiwin", &o) == 0) {
        CHECK_EQ_U64(R.dev[0].peak, 127 * MiB);
        CHECK_EQ_U64(R.dev[0].alloc_bytes, 42 * MiB);
        CHECK_EQ_U64(R.dev[0].leaked_bytes, 15 * MiB);
        gma_replay_free(&R);
    }
    opts(&o);
    o.window = 1;
    if (load("multiwin", &o) == 0) {
        CHECK_EQ_U64(R.dev[0].peak, 131 * MiB);
        CHECK_EQ_U64(R.dev[0].alloc_bytes, 20 * MiB);
        CHECK_EQ_U64(R.dev[0].free_bytes, 20 * MiB);
        CHECK_EQ_U64(R.dev[0].leaked_bytes, 0);
        CHECK_EQ_U64(R.dev[0].baseline_bytes, 111 * MiB);
        CHECK_EQ_U64(krow(0)->free_bytes, 20 * MiB);
        CHECK_EQ_U64(krow(10)->alloc_bytes, 20 * MiB);
        gma_replay_free(&R);
    }
}

static void test_threads(void)
{
    gma_opts o;
    opts(&o);
    if (load("threads", &o) != 0)
        return;
    CHECK_EQ_U64(krow(1)->alloc_bytes, 5 * MiB);
    CHECK_EQ_U64(krow(1)->calls, 2);
    CHECK_EQ_U64(krow(2)->alloc_bytes, 2 * MiB);
    CHECK_EQ_U64(krow(0)->alloc_bytes, 0);
    gma_replay_free(&R);
    opts(&o);
    o.by = GMA_BY_RANGE;
    if (load("threads", &o) != 0)
        return;
    CHECK_EQ_U64(rrow(3)->self_alloc, 1 * MiB);
    CHECK_EQ_U64(rrow(3)->tot_alloc, 5 * MiB);
    CHECK_EQ_U64(rrow(4)->self_alloc, 2 * MiB);
    CHECK_EQ_U64(rrow(4)->tot_alloc, 2 * MiB);
    CHECK_EQ_U64(rrow(5)->self_alloc, 4 * MiB);
    CHECK_EQ_U64(rrow(5)->tot_alloc, 4 * MiB); /* recursion counted once */
    CHECK_EQ_U64(rrow(5)->calls, 2);
    gma_replay_free(&R);
}

static void test_torchnames(void)
{
    gma_opts o;
    opts(&o);
    o.by = GMA_BY_RANGE;
    if (load("torchnames", &o) != 0)
        return;
    gma_report rep;
    CHECK(gma_report_build(&rep, &R) == 0);
    const gma_table *t = &rep.table;
    CHECK_EQ_U64(t->nrows, 1); /* both calls of aten::mm in one row */
    CHECK_STR(gma_cell_text(t, gma_table_cell(t, 0, 0)), "aten::mm");
    CHECK_EQ_U64(gma_table_cell(t, 0, 1)->v.u, 2);
    CHECK_EQ_U64(gma_table_cell(t, 0, 2)->v.i, 3 * MiB);
    gma_report_free(&rep);
    gma_replay_free(&R);

    opts(&o);
    if (load("torchnames", &o) != 0)
        return;
    CHECK(gma_report_build(&rep, &R) == 0);
    t = &rep.table;
    CHECK_EQ_U64(t->nrows, 2);
    CHECK_STR(gma_cell_text(t, gma_table_cell(t, 0, 0)),
          "at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<double>, std::array<char*, 1ul> >");
    CHECK_STR(gma_cell_text(t, gma_table_cell(t, 1, 0)),
          "at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, std::array<char*, 1ul> >");
    /* live at the peak, grouped by kernel: the same unique labels */
    CHECK_STR(GNAME(&rep, &rep.peaks[0].by_kernel, 0),
          "at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<double>, std::array<char*, 1ul> >");
    CHECK_STR(GNAME(&rep, &rep.peaks[0].by_range, 0), "aten::mm");
    /* the peak (3 MiB, after the FillFunctor<double> launch) names its
     * kernel by the table's label, not by the short form both share */
    CHECK_STR(gma_rep_str(&rep, rep.peaks[0].kernel),
          "at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<double>, std::array<char*, 1ul> >");
    gma_report_free(&rep);
    gma_replay_free(&R);
}

static void test_small(void)
{
    gma_opts o;
    opts(&o);
    if (load("nowindow", &o) == 0) {
        CHECK_EQ_U64(R.windows.len, 1);
        CHECK_EQ_U64(GMA_VEC_AT(&R.windows, gma_window, 0).implicit, 1);
        CHECK_EQ_U64(R.dev[0].alloc_bytes, 3 * MiB);
        CHECK_EQ_U64(R.dev[0].free_bytes, 1 * MiB);
        CHECK_EQ_U64(R.dev[0].peak, 3 * MiB);
        CHECK_EQ_U64(krow(1)->alloc_bytes, 1 * MiB);
        CHECK_EQ_U64(krow(0)->alloc_bytes, 2 * MiB);
        CHECK_EQ_U64(krow(0)->free_bytes, 1 * MiB);
        gma_report rep;
        CHECK(gma_report_build(&rep, &R) == 0);
        CHECK_EQ_U64(rep.leaks.bytes, 2 * MiB);
        CHECK(rep.leaks.at_trace_end);
        gma_report_free(&rep);
        gma_replay_free(&R);
    }

    opts(&o);
    if (load("twodev", &o) == 0) {
        CHECK_EQ_U64(R.dev[0].peak, 10 * MiB);
        CHECK_EQ_U64(R.dev[1].peak, 20 * MiB);
        CHECK_EQ_U64(R.dev[0].host_peak, 4 * MiB);
        CHECK_EQ_U64(R.dev[0].leaked_bytes, 0);
        CHECK_EQ_U64(R.dev[1].leaked_bytes, 20 * MiB);
        CHECK_EQ_U64(R.dev[1].best_used, 300 * MiB);
        gma_report rep;
        CHECK(gma_report_build(&rep, &R) == 0);
        CHECK_STR(rep.mode.mode, "async pool per tensor");
        CHECK_EQ_U64(rep.npeaks, 2);
        gma_report_free(&rep);
        gma_replay_free(&R);
    }
    opts(&o);
    o.device = 1;
    if (load("twodev", &o) == 0) {
        gma_report rep;
        CHECK(gma_report_build(&rep, &R) == 0);
        CHECK_EQ_U64(rep.alloc_bytes, 20 * MiB);
        CHECK_EQ_U64(rep.kernels, 1);
        CHECK_EQ_U64(rep.npeaks, 1);
        CHECK_EQ_U64(rep.peaks[0].device, 1);
        CHECK_EQ_U64(rep.peaks[0].bytes, 20 * MiB);
        CHECK_EQ_U64(rep.leaks.bytes, 20 * MiB);
        gma_report_free(&rep);
        gma_replay_free(&R);
    }

    opts(&o);
    if (load("edge", &o) == 0) {
        CHECK_EQ_U64(R.unmatched_frees, 1);
        CHECK_EQ_U64(R.replaced_allocs, 1);
        CHECK_EQ_U64(R.unknown_ranges, 1);
        CHECK_EQ_U64(R.dev[0].alloc_bytes, 10 * MiB);
        CHECK_EQ_U64(R.dev[0].peak, 9 * MiB);
        CHECK_EQ_U64(R.dev[0].leaked_bytes, 9 * MiB);
        CHECK_EQ_U64(R.dev[0].leaked_count, 3);
        CHECK_EQ_U64(R.dev[0].copies, 1);
        CHECK_EQ_U64(krow(0)->alloc_bytes, 4 * MiB); /* not mixed with the unnamed kernel */
        gma_report rep;
        CHECK(gma_report_build(&rep, &R) == 0);
        CHECK_EQ_U64(rep.peaks[0].bytes, 9 * MiB);
        CHECK_STR(gma_cell_text(&rep.table, gma_table_cell(&rep.table, 0, 0)), "(unnamed kernel)");
        CHECK_EQ_U64(gma_table_cell(&rep.table, 0, 3)->v.u, 6 * MiB);
        CHECK(rep.nnotes >= 3);
        gma_report_free(&rep);
        gma_replay_free(&R);
    }
}

static void test_attention(void)
{
    gma_opts o;
    opts(&o);
    static gma_replay B;
    char msg[600];
    if (load("attn_naive", &o) != 0)
        return;
    int rc = gma_replay_file(&B, &o, path_of("attn_flash"), msg, sizeof(msg));
    CHECK(rc == 0, "attn_flash: %s", msg);
    if (rc != 0)
        return;
    tc_context("attention diff");
    CHECK_EQ_U64(R.dev[0].peak, 84 * MiB);
    CHECK_EQ_U64(B.dev[0].peak, 21 * MiB);
    o.format = GMA_FMT_JSON;
    R.opt.format = GMA_FMT_JSON;
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    CHECK(f && gma_diff_print(f, gma_printer_of(R.opt.format), &R, &B) == 0);
    fclose(f);
    /* the naive variant's score matrix first, then the fused kernel */
    const char *a = strstr(buf, "\"name\": \"bmm_qk\"");
    const char *b = strstr(buf, "\"name\": \"flash::flash_fwd\"");
    const char *c = strstr(buf, "\"name\": \"bmm_av\"");
    const char *first = strstr(buf, "\"rows\": [");
    CHECK(a && b && c && first && a < b && b < c);
    CHECK(first && a && !memchr(first, '}', (size_t)(a - first)));
    CHECK(strstr(buf, "\"delta\": -67108864"));
    free(buf);
    gma_replay_free(&R);
    gma_replay_free(&B);
}

static void test_damaged(void)
{
    gma_opts o;
    opts(&o);
    if (load("truncated", &o) == 0) {
        CHECK(R.rend.truncated || !R.rend.has_trailer);
        CHECK(!R.rend.has_trailer);
        char w[400];
        CHECK(gma_trace_warning(&R, w, sizeof(w)) == 1);
        CHECK_EQ_U64(R.dev[0].peak, 127 * MiB); /* everything before the cut is there */
        gma_report rep;
        CHECK(gma_report_build(&rep, &R) == 0);
        CHECK(rep.nwarn >= 1);
        CHECK_EQ_U64(rep.leaks.bytes, 15 * MiB);
        CHECK(rep.leaks.at_trace_end);
        gma_report_free(&rep);
        gma_replay_free(&R);
    }
    static const struct {
        const char *name, *words;
    } bad[] = { { "newer", "newer" }, { "garbage", "not a gmemprof trace" }, { "empty", "empty" } };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        char msg[600];
        tc_context("%s", bad[i].name);
        CHECK(gma_replay_file(&R, &o, path_of(bad[i].name), msg, sizeof(msg)) == 1);
        CHECK(strstr(msg, bad[i].words) != NULL);
        gma_replay_free(&R);
    }
    char msg[600];
    tc_context("missing");
    CHECK(gma_replay_file(&R, &o, path_of("does-not-exist"), msg, sizeof(msg)) == 1);
    CHECK(strstr(msg, "cannot open") != NULL);
    gma_replay_free(&R);
}

/* The PyTorch bridge's blocks (sc_torch): the layer's numbers, the tables in
 * blocks and in segments, the MemoryMonitor tag table. */
static void torch_layer(void)
{
    const gma_layer_dev *L = &R.layer.dev[0], *L1 = &R.layer.dev[1];
    CHECK(R.layer.seen);
    CHECK_EQ_U64(L->allocated_peak, 22 * MiB);
    CHECK_EQ_U64(gma_rel(&R, L->allocated_peak_ts), 25000000);
    CHECK_EQ_U64(L->reserved_peak, 36 * MiB);
    CHECK_EQ_U64(L->at_peak_reserved, 36 * MiB);
    CHECK_EQ_U64(gma_layer_unallocated(L), 14 * MiB);
    CHECK_EQ_U64(gma_layer_outside(L->at_peak_cuda, L->at_peak_reserved), 8 * MiB);
    CHECK_EQ_U64(L->cuda_peak, 44 * MiB);
    CHECK(L->has_peak_used);
    CHECK_EQ_U64(L->peak_used, 1 * GiB + 60 * MiB);
    CHECK_EQ_U64(L->holes_state, GMA_HOLES_OK);
    CHECK_EQ_U64(L->holes_count, 2);
    CHECK_EQ_U64(L->holes_bytes, 14 * MiB);
    CHECK_EQ_U64(L->holes[0], 8 * MiB);
    CHECK_EQ_U64(L->holes[1], 6 * MiB);
    CHECK_EQ_U64(L->holes[2], 0);
    /* at the end: B1 4 + B3 2 + B5 10 live; B2's free never completed */
    CHECK_EQ_U64(L->allocated, 16 * MiB);
    CHECK_EQ_U64(L->blocks, 3);
    CHECK_EQ_U64(L->frees_pending, 1);
    CHECK_EQ_U64(L1->allocated_peak, 1 * MiB);
    CHECK_EQ_U64(L1->reserved_peak, 2 * MiB);
    CHECK_EQ_U64(L1->holes_count, 1);
    CHECK_EQ_U64(L1->holes[0], 1 * MiB);
    CHECK_EQ_U64(gma_layer_outside(L1->at_peak_cuda, L1->at_peak_reserved), 0);
    CHECK_EQ_U64(L1->peak_used, 512 * MiB);
}

static void test_torch(void)
{
    gma_opts o;
    opts(&o);
    if (load("torch", &o) != 0)
        return;
    CHECK(R.fw && R.fw_cuda);
    torch_layer();
    CHECK_EQ_U64(R.dev[0].peak, 22 * MiB);
    CHECK_EQ_U64(R.dev[0].peak_kname, 2); /* kernel_b */
    CHECK_EQ_U64(R.dev[0].alloc_bytes, 25 * MiB);
    CHECK_EQ_U64(R.dev[0].free_bytes, 9 * MiB);
    CHECK_EQ_U64(R.dev[1].peak, 1 * MiB);
    CHECK_EQ_U64(krow(1)->alloc_bytes, 10 * MiB); /* kernel_a: B1, B2 */
    CHECK_EQ_U64(krow(2)->alloc_bytes, 12 * MiB); /* kernel_b: B3, B5 */
    CHECK_EQ_U64(krow(3)->alloc_bytes, 3 * MiB);  /* kernel_c: B6, and the frees of B2 and B6 */
    CHECK_EQ_U64(krow(3)->free_bytes, 9 * MiB);
    CHECK_EQ_U64(krow(0)->alloc_bytes, 1 * MiB);  /* B4 of the second thread */
    gma_report rep;
    CHECK(gma_report_build(&rep, &R) == 0);
    CHECK_STR(rep.mode.mode, "PyTorch caching allocator, tensors");
    CHECK_EQ_U64(rep.alloc_bytes, 26 * MiB);
    CHECK_EQ_U64(rep.alloc_count, 6);
    gma_report_free(&rep);
    gma_replay_free(&R);

    /* segments: CUDA's allocations are the rows; the layer's numbers stay */
    opts(&o);
    o.layer = GMA_LAYER_SEGMENTS;
    if (load("torch", &o) == 0) {
        CHECK(!R.fw && R.fw_cuda);
        torch_layer();
        CHECK_EQ_U64(R.dev[0].peak, 44 * MiB);
        CHECK_EQ_U64(gma_rel(&R, R.dev[0].peak_ts), 24000000);
        CHECK_EQ_U64(krow(1)->alloc_bytes, 28 * MiB); /* kernel_a: S1, W */
        CHECK_EQ_U64(krow(2)->alloc_bytes, 16 * MiB); /* kernel_b: S2 */
        CHECK_EQ_U64(krow(0)->alloc_bytes, 2 * MiB);  /* S3 */
        gma_replay_free(&R);
    }

    /* the MemoryMonitor table, the tag before CUDA included */
    opts(&o);
    o.by = GMA_BY_TAG;
    o.sort = GMA_SORT_TIME;
    if (load("torch", &o) != 0)
        return;
    CHECK(gma_report_build(&rep, &R) == 0);
    const gma_table *t = &rep.table;
    static const char *const names[4] = { "before_model", "after_model", "end", "end" };
    static const uint64_t dev[4] = { 0, 0, 0, 1 }, alloc[4] = { 0, 4 * MiB, 16 * MiB, 1 * MiB },
                          res[4] = { 0, 20 * MiB, 36 * MiB, 2 * MiB }, outside[4] = { 0, 8 * MiB, 8 * MiB, 0 };
    CHECK_EQ_U64(t->nrows, 4);
    for (size_t i = 0; i < 4 && i < t->nrows; i++) {
        CHECK_STR(gma_cell_text(t, gma_table_cell(t, i, 0)), names[i]);
        CHECK_EQ_U64(gma_table_cell(t, i, 1)->v.u, dev[i]);
        CHECK_EQ_U64(gma_table_cell(t, i, 4)->v.u, alloc[i]);
        CHECK_EQ_U64(gma_table_cell(t, i, 5)->v.u, res[i]);
        CHECK_EQ_U64(gma_table_cell(t, i, 6)->v.u, outside[i]);
    }
    if (t->nrows == 4) {
        CHECK(gma_table_cell(t, 0, 7)->null); /* no driver reading before CUDA */
        CHECK(gma_table_cell(t, 0, 9)->null);
        CHECK_EQ_U64(gma_table_cell(t, 1, 9)->v.i, 4 * MiB);
        CHECK_EQ_U64(gma_table_cell(t, 1, 10)->v.i, 20 * MiB);
        CHECK(gma_table_cell(t, 1, 11)->null); /* the tag before had no reading */
        CHECK_EQ_U64(gma_table_cell(t, 2, 9)->v.i, 12 * MiB);
        CHECK_EQ_U64(gma_table_cell(t, 2, 10)->v.i, 16 * MiB);
        CHECK_EQ_U64(gma_table_cell(t, 2, 11)->v.i, 32 * MiB);
        CHECK(gma_table_cell(t, 3, 9)->null); /* dev1's first tag */
    }
    gma_report_free(&rep);
    gma_replay_free(&R);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: test_numbers SCRATCH_DIR\n");
        return 2;
    }
    snprintf(dir, sizeof(dir), "%s", argv[1]);
    if (sc_write_all(dir) != 0)
        return 1;
    test_basic();
    test_multiwin();
    test_threads();
    test_torchnames();
    test_small();
    test_attention();
    test_torch();
    test_damaged();
    return tc_result("gma_test_numbers");
}
