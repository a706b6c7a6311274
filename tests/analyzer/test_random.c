/*
 * Property test: random record streams (every record type, out-of-order
 * kernels, reused addresses, lost frees, unknown ranges, several threads,
 * devices and windows, garbage ids) fed to the replay under every --by and
 * some selections; every format and export is produced, and invariants that
 * must hold whatever the input are checked:
 *   - the allocations "live at the peak" add up to the peak, per device;
 *   - every accounted byte lands in exactly one kernel row (unattributed
 *     included): sum over kernel rows == sum over windows, allocated and freed;
 *   - the same for step rows and, with --by range, for self bytes of ranges;
 *   - every wait for a kernel is settled at the end.
 * Usage: test_random SCRATCH_DIR [ITERATIONS]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "export.h"
#include "gma.h"
#include "view.h"
#include "diff.h"
#include "print.h"

static uint64_t rng = 88172645463325252ull;
static uint64_t next(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}
static uint64_t pick(uint64_t n) { return n ? next() % n : 0; }

#include "../check.h"

static const char *names[] = { "_ZN4test8kernel_aIfLi4EEEvPT_i", "kernel_b", "_Z8kernel_cPfS_", "fwd", "bwd",
                               "_ZN3FoolsIiEERS_RKT_", "_Zgarbage", "" };

static void random_record(gmt_record *r, uint64_t *ts, int it)
{
    memset(r, 0, sizeof(*r));
    *ts += pick(3000);
    uint64_t t = it % 3 == 0 ? *ts : *ts - pick(2000); /* sometimes out of order */
    uint64_t dev = pick(20) == 0 ? pick(100) : pick(2);
    uint64_t tid = pick(4);
    uint64_t seq = pick(12);
    uint64_t addr = 0x1000 * (1 + pick(24)) + (pick(50) == 0 ? (1ull << 60) : 0);
    switch (pick(20)) {
    case 0: case 1: case 2: case 3: case 4: case 5:
        r->type = GMT_REC_ALLOC;
        goto mem;
    case 6: case 7: case 8: case 9:
        r->type = GMT_REC_FREE;
    mem:
        r->u.mem.ts = t;
        r->u.mem.device = dev;
        r->u.mem.address = addr;
        r->u.mem.bytes = 1 + pick(1 << 20);
        r->u.mem.kind = pick(8);
        r->u.mem.source = pick(9);
        r->u.mem.flags = pick(10) == 0 ? GMT_MEMF_BASELINE : pick(10) == 0 ? GMT_MEMF_NO_THREAD : 0;
        r->u.mem.tid = tid;
        r->u.mem.seq = seq;
        r->u.mem.range = pick(6);
        r->u.mem.step = pick(5);
        r->u.mem.stream = pick(3);
        break;
    case 10: case 11: case 12:
        r->type = GMT_REC_KERNEL;
        r->u.kernel.start = t;
        r->u.kernel.end = t + pick(1000);
        r->u.kernel.device = dev;
        r->u.kernel.stream = pick(3);
        r->u.kernel.name = pick(10);
        r->u.kernel.tid = tid;
        r->u.kernel.seq = seq;
        r->u.kernel.step = pick(5);
        r->u.kernel.registers = pick(255);
        break;
    case 13:
        r->type = pick(2) ? GMT_REC_RANGE_BEGIN : GMT_REC_RANGE_END;
        r->u.range.ts = t;
        r->u.range.tid = tid;
        r->u.range.id = 1 + pick(6);
        r->u.range.parent = pick(7);
        r->u.range.name = pick(9);
        break;
    case 14:
        r->type = GMT_REC_STEP;
        r->u.step.ts = t;
        r->u.step.step = pick(5);
        r->u.step.phase = pick(5);
        break;
    case 15:
        r->type = pick(2) ? GMT_REC_WINDOW_BEGIN : GMT_REC_WINDOW_END;
        r->u.wbegin.ts = t;
        r->u.wbegin.window = pick(3);
        r->u.wbegin.step = pick(5);
        break;
    case 16:
        r->type = GMT_REC_TAG;
        r->u.tag.ts = t;
        r->u.tag.name = pick(9);
        r->u.tag.ndev = pick(3) == 0 ? 1000 : 1 + pick(2); /* more than GMT_MAX_TAG_DEVICES too */
        for (unsigned i = 0; i < GMT_MAX_TAG_DEVICES; i++) {
            r->u.tag.dev[i].device = i % 3;
            r->u.tag.dev[i].live_bytes = pick(1 << 30);
            r->u.tag.dev[i].driver_used = pick(1 << 30);
        }
        break;
    case 17:
        r->type = GMT_REC_MEMSAMPLE;
        r->u.sample.ts = t;
        r->u.sample.device = dev;
        r->u.sample.used = pick(1 << 30);
        break;
    case 18:
        r->type = pick(2) ? GMT_REC_MEMCPY : GMT_REC_MARK;
        r->u.copy.start = t;
        r->u.copy.end = t + pick(100);
        r->u.copy.device = dev;
        r->u.copy.bytes = pick(1 << 20);
        break;
    default: {
        r->type = GMT_REC_STRING;
        uint64_t k = pick(sizeof(names) / sizeof(names[0]));
        r->u.string.id = pick(12) == 0 ? (1ull << 40) : k + 1;
        r->u.string.str.ptr = names[k];
        r->u.string.str.len = (uint32_t)strlen(names[k]);
        break;
    }
    }
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: test_random SCRATCH_DIR [ITERATIONS]\n");
        return 2;
    }
    int iters = argc > 2 ? atoi(argv[2]) : 300;
    char chrome[4200], tl[4200];
    snprintf(chrome, sizeof(chrome), "%s/random.json", argv[1]);
    static gma_replay R, B;
    for (int it = 0; it < iters; it++) {
        tc_context("iteration %d", it);
        gma_opts o;
        memset(&o, 0, sizeof(o));
        o.by = (gma_by)(it % GMA_BY_COUNT_);
        o.sort = (gma_sort)((it / 7) % GMA_SORT_COUNT_);
        o.top = it % 4 == 0 ? 0 : 1 + (uint64_t)(it % 5);
        o.format = (gma_format)(it % 3);
        o.window = it % 11 == 0 ? 1 : -1;
        o.step = it % 13 == 0 ? 2 : -1;
        o.device = it % 17 == 0 ? 1 : -1;
        o.full_names = it % 2;
        snprintf(tl, sizeof(tl), "%s/random.%s", argv[1], it % 2 ? "svg" : "html");
        if (gma_replay_open(&R, &o, "random") != 0 || gma_replay_open(&B, &o, "random-b") != 0) {
            fprintf(stderr, "init failed\n");
            return 1;
        }
        int exports = it % 5 == 0;
        if (exports && (gma_chrome_open(&R, chrome) != 0 || gma_timeline_open(&R, tl) != 0)) {
            perror("exports");
            return 1;
        }
        uint64_t ts = 1000000, n = 200 + pick(3000);
        gmt_record rec;
        for (uint64_t i = 0; i < n; i++) {
            random_record(&rec, &ts, it);
            CHECK(gma_replay_record(&R, &rec) == 0, "record %llu", (unsigned long long)i);
            random_record(&rec, &ts, it);
            CHECK(gma_replay_record(&B, &rec) == 0, "record %llu (B)", (unsigned long long)i);
        }
        gmt_reader_end end;
        memset(&end, 0, sizeof(end));
        end.has_trailer = it % 2;
        end.truncated = !end.has_trailer;
        CHECK(gma_replay_finish(&R, &end) == 0, "finish");
        CHECK(gma_replay_finish(&B, &end) == 0, "finish B");
        CHECK(R.pending == 0, "%zu waits left", R.pending);

        /* every accounted byte in exactly one kernel row, one step row */
        uint64_t wa = 0, wf = 0, ka = 0, kf = 0, sa = 0, sf = 0;
        for (size_t i = 0; i < R.windows.len; i++) {
            wa += GMA_VEC_AT(&R.windows, gma_window, i).alloc_bytes;
            wf += GMA_VEC_AT(&R.windows, gma_window, i).free_bytes;
        }
        for (size_t i = 0; i < R.krows.len; i++) {
            ka += GMA_VEC_AT(&R.krows, gma_krow, i).alloc_bytes;
            kf += GMA_VEC_AT(&R.krows, gma_krow, i).free_bytes;
        }
        for (size_t i = 0; i < R.steps.len; i++) {
            sa += GMA_VEC_AT(&R.steps, gma_steprow, i).alloc_bytes;
            sf += GMA_VEC_AT(&R.steps, gma_steprow, i).free_bytes;
        }
        CHECK(ka == wa && kf == wf, "kernels %llu/%llu vs windows %llu/%llu", (unsigned long long)ka,
              (unsigned long long)kf, (unsigned long long)wa, (unsigned long long)wf);
        CHECK(sa == wa && sf == wf, "steps %llu/%llu vs windows %llu/%llu", (unsigned long long)sa,
              (unsigned long long)sf, (unsigned long long)wa, (unsigned long long)wf);
        if (o.by == GMA_BY_RANGE) {
            uint64_t ra = 0, rf = 0;
            for (size_t i = 0; i < R.rrows.len; i++) {
                ra += GMA_VEC_AT(&R.rrows, gma_rrow, i).self_alloc;
                rf += GMA_VEC_AT(&R.rrows, gma_rrow, i).self_free;
            }
            CHECK(ra == wa && rf == wf, "ranges %llu/%llu vs windows %llu/%llu", (unsigned long long)ra,
                  (unsigned long long)rf, (unsigned long long)wa, (unsigned long long)wf);
        }

        gma_report rep;
        CHECK(gma_report_build(&rep, &R) == 0, "report");
        for (size_t i = 0; i < rep.npeaks; i++)
            CHECK(rep.peaks[i].bytes == R.dev[rep.peaks[i].device].peak, "dev%u live at peak %llu != peak %llu",
                  rep.peaks[i].device, (unsigned long long)rep.peaks[i].bytes,
                  (unsigned long long)R.dev[rep.peaks[i].device].peak);
        FILE *f = fopen("/dev/null", "w");
        if (!f)
            return 1;
        CHECK(gma_print_table(f, &rep) == 0, "table");
        CHECK(gma_print_csv(f, &rep) == 0, "csv");
        CHECK(gma_print_json(f, &rep) == 0, "json");
        if (o.by != GMA_BY_ALLOC)
            CHECK(gma_diff_print(f, gma_printer_of(R.opt.format), &R, &B) == 0, "diff");
        fclose(f);
        gma_report_free(&rep);
        if (exports) {
            CHECK(gma_chrome_close(&R) == 0, "chrome");
            CHECK(gma_timeline_write(&R) == 0, "timeline");
        }
        gma_replay_free(&R);
        gma_replay_free(&B);
    }
    if (tc_failures) {
        fprintf(stderr, "%d checks failed\n", tc_failures);
        return 1;
    }
    printf("%d random streams ok\n", iters);
    return 0;
}
