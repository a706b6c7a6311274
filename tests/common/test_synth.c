/*
 * The synthetic training-like stream (synth/synth.h):
 *  - prints its compressed size per event and FAILS above 4.0 bytes/event at
 *    the writer's default level (the budget);
 *  - is deterministic (same seed, same bytes; another seed, other bytes);
 *  - is internally consistent, checked by replaying it: strings defined
 *    before use, every FREE matches a live ALLOC, the consumer kernel of an
 *    allocation has seq + 1, sequence numbers count launches per thread,
 *    NVTX ranges nest and allocations/kernels name the innermost one,
 *    windows carry their baseline, MEMSAMPLE used + free = total, STATS
 *    and TRAILER close the trace, and the generator's own summary (counts,
 *    baseline, peak live bytes) matches what the replay computes.
 * usage: test_synth [events]
 */
#include "synth.h"
#include "tutil.h"

#define MAXSTR 4096
#define LIVECAP (1u << 16) /* power of two, far above the live set */

/* Live allocations: open addressing on the address, backward-shift delete. */
typedef struct live {
    uint64_t addr, bytes; /* addr 0: empty */
} live;

static live lv[LIVECAP];
static size_t nlive;

static size_t slot_of(uint64_t a) { return (size_t)((a >> 9) * 0x9e3779b97f4a7c15ull >> 48) & (LIVECAP - 1); }

static live *live_find(uint64_t a)
{
    for (size_t i = slot_of(a);; i = (i + 1) & (LIVECAP - 1)) {
        if (lv[i].addr == a)
            return &lv[i];
        if (!lv[i].addr)
            return NULL;
    }
}

static void live_add(uint64_t a, uint64_t bytes)
{
    REQUIRE(a != 0 && nlive < LIVECAP / 2, "live table");
    size_t i = slot_of(a);
    while (lv[i].addr)
        i = (i + 1) & (LIVECAP - 1);
    lv[i] = (live){ a, bytes };
    nlive++;
}

static void live_del(live *e)
{
    size_t i = (size_t)(e - lv);
    for (size_t j = (i + 1) & (LIVECAP - 1); lv[j].addr; j = (j + 1) & (LIVECAP - 1)) {
        size_t h = slot_of(lv[j].addr);
        /* move j back to i when its home slot is not in (i, j] */
        if ((j > i && (h <= i || h > j)) || (j < i && (h <= i && h > j))) {
            lv[i] = lv[j];
            i = j;
        }
    }
    lv[i].addr = 0;
    nlive--;
}

static void replay(const char *path, const gmt_synth_summary *sum)
{
    gmt_reader *r = gmt_reader_open(path);
    REQUIRE(r, "open %s", path);
    gmt_record rec;
    uint64_t n = 0, by_type[GMT_REC_TYPE_MAX_] = { 0 };
    static uint8_t defined[MAXSTR];
    memset(defined, 0, sizeof defined);
    uint64_t last_seq = 0, pending_alloc_seq = UINT64_MAX;
    uint64_t rstack[64];
    int rdepth = 0;
    uint64_t live_bytes = 0, peak = 0, baseline_left = 0, baseline_bytes = 0, first_baseline = 0, announced = 0;
    int seq_known = 0;
    uint64_t last_step = 0, steps = 0, windows = 0, in_window = 0;
    int saw_stats = 0, saw_trailer = 0;
    gmt_type prev = (gmt_type)0;
    memset(lv, 0, sizeof lv);
    nlive = 0;
    while (gmt_reader_next(r, &rec) > 0) {
        CHECK(!saw_trailer, "record after the trailer");
        if (rec.type < GMT_REC_TYPE_MAX_)
            by_type[rec.type]++;
        if (n == 0)
            CHECK(rec.type == GMT_REC_HEADER, "first record is %s", gmt_type_name(rec.type));
        if (n == 1)
            CHECK(rec.type == GMT_REC_DEVICE, "second record is %s", gmt_type_name(rec.type));
        if (baseline_left) {
            CHECK(rec.type == GMT_REC_ALLOC && (rec.u.mem.flags & GMT_MEMF_BASELINE), "baseline record %llu is %s",
                  (unsigned long long)n, gmt_type_name(rec.type));
        }
        switch (rec.type) {
        case GMT_REC_STRING:
            CHECK(rec.u.string.id < MAXSTR && !defined[rec.u.string.id], "string id %llu reused or too large",
                  (unsigned long long)rec.u.string.id);
            if (rec.u.string.id < MAXSTR)
                defined[rec.u.string.id] = 1;
            CHECK(rec.u.string.str.len > 0, "empty name");
            break;
        case GMT_REC_ALLOC: {
            const gmt_mem *m = &rec.u.mem;
            CHECK(m->bytes > 0 && m->kind == GMT_MEMKIND_DEVICE && m->tid != 0 && m->corr != 0, "alloc fields");
            if (m->flags & GMT_MEMF_BASELINE) {
                CHECK(baseline_left > 0, "baseline alloc outside a baseline");
                baseline_bytes += m->bytes;
                if (baseline_left && --baseline_left == 0)
                    CHECK(baseline_bytes == announced, "baseline holds %llu bytes, WINDOW_BEGIN says %llu",
                          (unsigned long long)baseline_bytes, (unsigned long long)announced);
                /* each window repeats the same baseline: it is live already
                 * except in the first window */
                live *e = live_find(m->address);
                if (!e) {
                    live_add(m->address, m->bytes);
                    live_bytes += m->bytes;
                } else {
                    CHECK(e->bytes == m->bytes, "baseline size changed");
                }
                break;
            }
            CHECK(in_window, "alloc outside a window");
            CHECK(live_find(m->address) == NULL, "alloc of a live address 0x%llx", (unsigned long long)m->address);
            live_add(m->address, m->bytes);
            live_bytes += m->bytes;
            if (!seq_known) {
                last_seq = m->seq;
                seq_known = 1;
            }
            if (live_bytes > peak)
                peak = live_bytes;
            CHECK(m->seq == last_seq, "alloc.seq %llu, launches so far %llu", (unsigned long long)m->seq,
                  (unsigned long long)last_seq);
            pending_alloc_seq = m->seq;
            CHECK(m->range == (rdepth ? rstack[rdepth - 1] : 0), "alloc.range %llu, innermost %llu",
                  (unsigned long long)m->range, (unsigned long long)(rdepth ? rstack[rdepth - 1] : 0));
            break;
        }
        case GMT_REC_FREE: {
            const gmt_mem *m = &rec.u.mem;
            live *e = live_find(m->address);
            CHECK(e != NULL, "free of 0x%llx, not live", (unsigned long long)m->address);
            if (e) {
                CHECK(e->bytes == m->bytes, "free size %llu, allocated %llu", (unsigned long long)m->bytes,
                      (unsigned long long)e->bytes);
                live_bytes -= e->bytes;
                live_del(e);
            }
            CHECK(m->seq == last_seq, "free.seq");
            break;
        }
        case GMT_REC_KERNEL: {
            const gmt_kernel *k = &rec.u.kernel;
            CHECK(k->name < MAXSTR && defined[k->name], "kernel name %llu not defined", (unsigned long long)k->name);
            if (!seq_known) {
                last_seq = k->seq - 1;
                seq_known = 1;
            }
            CHECK(k->seq == last_seq + 1, "kernel seq %llu after %llu", (unsigned long long)k->seq,
                  (unsigned long long)last_seq);
            if (pending_alloc_seq != UINT64_MAX)
                CHECK(k->seq == pending_alloc_seq + 1, "consumer kernel seq %llu, alloc seq %llu",
                      (unsigned long long)k->seq, (unsigned long long)pending_alloc_seq);
            pending_alloc_seq = UINT64_MAX;
            last_seq = k->seq;
            CHECK(k->end > k->start && k->grid[0] && k->block[0], "kernel shape/time");
            CHECK(k->range == (rdepth ? rstack[rdepth - 1] : 0), "kernel.range");
            CHECK(in_window && k->step == last_step, "kernel outside its step/window");
            break;
        }
        case GMT_REC_RANGE_BEGIN:
            CHECK(rec.u.range.name < MAXSTR && defined[rec.u.range.name], "range name undefined");
            CHECK(rec.u.range.parent == (rdepth ? rstack[rdepth - 1] : 0), "range parent");
            REQUIRE(rdepth < 64, "range depth");
            rstack[rdepth++] = rec.u.range.id;
            break;
        case GMT_REC_RANGE_END:
            CHECK(rdepth > 0 && rstack[rdepth - 1] == rec.u.range.id, "range end %llu does not close the innermost",
                  (unsigned long long)rec.u.range.id);
            if (rdepth > 0)
                rdepth--;
            break;
        case GMT_REC_STEP:
            CHECK(steps == 0 || rec.u.step.step == last_step + 1, "step %llu after %llu",
                  (unsigned long long)rec.u.step.step, (unsigned long long)last_step);
            last_step = rec.u.step.step;
            steps++;
            CHECK(rdepth == 0, "ranges open across steps");
            break;
        case GMT_REC_WINDOW_BEGIN:
            CHECK(!in_window, "nested window");
            in_window = 1;
            windows++;
            baseline_left = rec.u.wbegin.baseline_count;
            announced = rec.u.wbegin.baseline_bytes;
            seq_known = 0; /* launches outside windows are not recorded */
            CHECK(baseline_left > 0, "empty baseline");
            if (windows == 1)
                first_baseline = rec.u.wbegin.baseline_bytes;
            baseline_bytes = 0;
            break;
        case GMT_REC_WINDOW_END:
            CHECK(in_window, "window end outside a window");
            in_window = 0;
            break;
        case GMT_REC_MEMSAMPLE:
            CHECK(rec.u.sample.used + rec.u.sample.free_ == rec.u.sample.total, "memsample used + free != total");
            CHECK(rec.u.sample.used >= live_bytes, "driver used below tracked live bytes");
            break;
        case GMT_REC_TAG:
            CHECK(rec.u.tag.ndev == 1 && rec.u.tag.dev[0].live_bytes == live_bytes, "tag live bytes %llu, replay %llu",
                  (unsigned long long)rec.u.tag.dev[0].live_bytes, (unsigned long long)live_bytes);
            CHECK(rec.u.tag.name < MAXSTR && defined[rec.u.tag.name], "tag name");
            break;
        case GMT_REC_STATS:
            saw_stats = 1;
            CHECK(rec.u.stats.records_written == n, "stats.records_written %llu at record %llu",
                  (unsigned long long)rec.u.stats.records_written, (unsigned long long)n);
            break;
        case GMT_REC_TRAILER:
            saw_trailer = 1;
            CHECK(prev == GMT_REC_STATS, "trailer not after stats");
            CHECK(rec.u.trailer.records == n, "trailer.records %llu, records before %llu",
                  (unsigned long long)rec.u.trailer.records, (unsigned long long)n);
            break;
        default:
            break;
        }
        prev = rec.type;
        n++;
    }
    const gmt_reader_end *e = gmt_reader_end_info(r);
    CHECK(e->status == GMT_OK && e->has_trailer, "end: %s", e->message);
    CHECK(saw_stats && saw_trailer, "stats/trailer missing");
    CHECK(n == sum->records, "replay %llu records, summary %llu", (unsigned long long)n,
          (unsigned long long)sum->records);
    for (int t = 1; t < GMT_REC_TYPE_MAX_; t++)
        CHECK(by_type[t] == sum->by_type[t], "%s: %llu read, summary %llu", gmt_type_name((gmt_type)t),
              (unsigned long long)by_type[t], (unsigned long long)sum->by_type[t]);
    CHECK(steps == sum->steps && windows == sum->windows, "steps/windows");
    CHECK(first_baseline == sum->baseline_bytes, "baseline bytes %llu vs %llu", (unsigned long long)first_baseline,
          (unsigned long long)sum->baseline_bytes);
    CHECK(peak == sum->peak_live_bytes, "peak live %llu, summary %llu", (unsigned long long)peak,
          (unsigned long long)sum->peak_live_bytes);
    CHECK(by_type[GMT_REC_KERNEL] > 0 && by_type[GMT_REC_ALLOC] > 0 && by_type[GMT_REC_FREE] > 0 &&
              by_type[GMT_REC_MEMSAMPLE] > 0 && by_type[GMT_REC_TAG] > 0 && by_type[GMT_REC_RANGE_BEGIN] > 0 &&
              by_type[GMT_REC_MEMCPY] > 0 && by_type[GMT_REC_MEMSET] > 0,
          "a record kind is missing");
    gmt_reader_close(r);
}

int main(int argc, char **argv)
{
    uint64_t events = argc > 1 ? strtoull(argv[1], NULL, 10) : 1000000;
    char p1[256], p2[256], p3[256];
    tu_tmp_path(p1, sizeof p1, "synth1");
    tu_tmp_path(p2, sizeof p2, "synth2");
    tu_tmp_path(p3, sizeof p3, "synth3");
    gmt_synth_opts o;
    gmt_synth_opts_default(&o);
    o.events = events;
    gmt_synth_summary s;
    REQUIRE(gmt_synth_write(p1, &o, NULL, &s) == GMT_OK, "synth write");
    double bpe = (double)s.bytes_out / (double)s.records;
    unsigned kernels_per_step = (unsigned)(s.by_type[GMT_REC_KERNEL] / (s.windows ? s.windows * 3 : 1));
    printf("synthetic training-like stream (default level, seed %llu): %llu records (%llu kernels, %llu allocs, "
           "%llu frees, ~%u kernels per active step), %llu frames\n",
           (unsigned long long)o.seed, (unsigned long long)s.records, (unsigned long long)s.by_type[GMT_REC_KERNEL],
           (unsigned long long)s.by_type[GMT_REC_ALLOC], (unsigned long long)s.by_type[GMT_REC_FREE],
           kernels_per_step, (unsigned long long)s.frames);
    printf("bytes per event: %.3f compressed (%.2f encoded, ratio %.1fx)\n", bpe,
           (double)s.bytes_in / (double)s.records, (double)s.bytes_in / (double)s.bytes_out);
    CHECK(bpe <= 4.0, "%.3f bytes per event: over the 4.0 budget", bpe);
    CHECK(s.frames >= 2 * s.windows, "frames %llu for %llu windows: a frame must end at every window edge",
          (unsigned long long)s.frames, (unsigned long long)s.windows);
    CHECK(s.records >= events && s.records < events + 10, "records %llu for %llu events", (unsigned long long)s.records,
          (unsigned long long)events);
    replay(p1, &s);

    /* deterministic */
    gmt_synth_summary s2;
    REQUIRE(gmt_synth_write(p2, &o, NULL, &s2) == GMT_OK, "synth write 2");
    tu_buf a = tu_slurp(p1), b = tu_slurp(p2);
    CHECK(a.n == b.n && memcmp(a.p, b.p, a.n) == 0, "same seed, different bytes");
    tu_buf_free(&b);
    o.seed = 2;
    o.events = events / 4;
    REQUIRE(gmt_synth_write(p2, &o, NULL, &s2) == GMT_OK, "synth write seed 2");
    b = tu_slurp(p2);
    CHECK(b.n != a.n || memcmp(a.p, b.p, a.n) != 0, "seed 2 gives the same bytes");
    replay(p2, &s2);
    tu_buf_free(&a);
    tu_buf_free(&b);

    /* by steps, other schedule and depth */
    gmt_synth_opts_default(&o);
    o.events = 0;
    o.steps = 9;
    o.wait = 0;
    o.warmup = 2;
    o.active = 2;
    o.layers = 3;
    REQUIRE(gmt_synth_write(p3, &o, NULL, &s2) == GMT_OK, "synth steps");
    /* cycle of 4 (warmup 0-1, active 2-3): windows begin at steps 2 and 6 */
    CHECK(s2.steps == 9 && s2.windows == 2, "steps %llu windows %llu", (unsigned long long)s2.steps,
          (unsigned long long)s2.windows);
    replay(p3, &s2);

    /* bad options */
    gmt_synth_opts_default(&o);
    o.events = 0;
    o.steps = 0;
    CHECK(gmt_synth_run(&o, NULL, NULL, NULL) == GMT_E_ARG, "no length accepted");
    o.events = 10;
    o.layers = 1000;
    CHECK(gmt_synth_run(&o, NULL, NULL, NULL) == GMT_E_ARG, "1000 layers accepted");
    CHECK(gmt_synth_write("/nonexistent/x.zst", &o, NULL, NULL) != GMT_OK, "unwritable path");

    /* generation speed without the writer (printed, not asserted: timing) */
    gmt_synth_opts_default(&o);
    o.events = events * 4;
    REQUIRE(gmt_synth_run(&o, NULL, NULL, &s2) == GMT_OK, "generate only");
    printf("generator alone: %.1f M events/s\n", (double)s2.records / (s2.gen_seconds > 0 ? s2.gen_seconds : 1e-9) / 1e6);
    unlink(p1);
    unlink(p2);
    unlink(p3);
    return tc_result("test_synth");
}
