/*
 * mktl_exact: a trace whose live total is known at every instant, for the
 * timeline page's exactness test (run_timeline_browser.py).
 *
 *   gma_mktl_exact OUT TRUTH N TICKS
 *
 * N allocations on one device, each made at a tick of 1 us and freed at a
 * later one (one in 50 never), at most TICKS distinct ticks: several
 * allocations and frees share a tick, so a page whose summary keeps every
 * distinct time is exact everywhere, and one with more ticks than that
 * must show ranges within its buckets. Sizes are mostly small (256 B to
 * 64 KiB, merged by the page past 100,000 bands) with one in 40 between 1
 * and 16 MiB. A step begins every TICKS / 20 ticks; kernels k0..k15 make
 * the allocations in turn. Addresses are never reused.
 *
 * TRUTH gets one line per distinct tick, "T LIVE": the time in ns from the
 * trace's start (as the page's times) and the bytes live after every
 * event at it; the total is that of the last line at or before a time, 0
 * before the first.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gmt_io.h"
#include "sc_writer.h"

#define T0 1000000000ull
#define TICK 1000ull
#define BASE (T0 + 1000000ull)

static sc_tb B;

static void put(const gmt_record *r) { sc_put(&B, r); }

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static uint64_t next(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

typedef struct ev {
    uint64_t tick;
    uint32_t i;
    uint8_t is_free;
} ev;

static int ev_cmp(const void *a, const void *b)
{
    const ev *x = a, *y = b;
    if (x->tick != y->tick)
        return x->tick < y->tick ? -1 : 1;
    if (x->is_free != y->is_free)
        return x->is_free ? -1 : 1;
    return (x->i > y->i) - (x->i < y->i);
}

static void head(void)
{
    sc_header(&B, &(sc_head){ .pid = 4300, .start_ts = T0, .cmdline = "python exact.py", .rank = -1, .world = -1 });
    sc_device(&B, 0, NULL, 80ull << 30);
    static const char *const kn[16] = { "k0", "k1", "k2", "k3", "k4", "k5", "k6", "k7",
                                        "k8", "k9", "k10", "k11", "k12", "k13", "k14", "k15" };
    for (uint64_t k = 0; k < 16; k++)
        sc_string(&B, k + 1, kn[k]);
}

static void mem(int type, uint64_t ts, uint64_t addr, uint64_t bytes, uint64_t seq)
{
    gmt_record r;
    memset(&r, 0, sizeof(r));
    r.type = (gmt_type)type;
    r.u.mem.ts = ts;
    r.u.mem.address = addr;
    r.u.mem.bytes = bytes;
    r.u.mem.kind = GMT_MEMKIND_DEVICE;
    r.u.mem.source = GMT_SRC_MALLOC;
    r.u.mem.tid = 100;
    r.u.mem.seq = seq;
    put(&r);
}

static void kernel(uint64_t ts, uint64_t name, uint64_t seq)
{
    gmt_record r;
    memset(&r, 0, sizeof(r));
    r.type = GMT_REC_KERNEL;
    r.u.kernel.start = ts;
    r.u.kernel.end = ts + 100;
    r.u.kernel.stream = 7;
    r.u.kernel.corr = seq + 1000;
    r.u.kernel.name = name;
    r.u.kernel.grid[0] = r.u.kernel.grid[1] = r.u.kernel.grid[2] = 1;
    r.u.kernel.block[0] = r.u.kernel.block[1] = r.u.kernel.block[2] = 1;
    r.u.kernel.tid = 100;
    r.u.kernel.seq = seq;
    put(&r);
}

static void step(uint64_t ts, uint64_t no)
{
    gmt_record r;
    memset(&r, 0, sizeof(r));
    r.type = GMT_REC_STEP;
    r.u.step.ts = ts;
    r.u.step.step = no;
    r.u.step.phase = GMT_PHASE_ACTIVE;
    put(&r);
}

int main(int argc, char **argv)
{
    if (argc != 5) {
        fprintf(stderr, "usage: gma_mktl_exact OUT TRUTH N TICKS\n");
        return 2;
    }
    size_t n = strtoull(argv[3], NULL, 10), ticks = strtoull(argv[4], NULL, 10);
    if (n < 1 || ticks < 40) {
        fprintf(stderr, "gma_mktl_exact: N must be at least 1 and TICKS at least 40 (got %zu, %zu)\n", n, ticks);
        return 2;
    }
    uint64_t *bytes = malloc(n * sizeof(*bytes));
    ev *e = malloc(2 * n * sizeof(*e));
    if (!bytes || !e) {
        fprintf(stderr, "gma_mktl_exact: out of memory for %zu allocations\n", n);
        return 1;
    }
    size_t ne = 0;
    for (size_t i = 0; i < n; i++) {
        uint64_t a = next() % (ticks - 1);
        bytes[i] = next() % 40 == 0 ? (1ull << 20) + next() % (15ull << 20) : 256 + next() % 65281;
        e[ne++] = (ev){ a, (uint32_t)i, 0 };
        if (next() % 50) { /* freed within a twentieth of the run, at most at the last tick */
            uint64_t f = a + 1 + next() % (ticks / 20);
            e[ne++] = (ev){ f < ticks ? f : ticks - 1, (uint32_t)i, 1 };
        }
    }
    qsort(e, ne, sizeof(*e), ev_cmp);
    FILE *truth = fopen(argv[2], "w");
    if (!truth) {
        perror(argv[2]);
        return 1;
    }
    if (sc_open(&B, argv[1]) != 0)
        return 1;
    head();
    uint64_t live = 0, seq = 0, next_step = 0, per_step = ticks / 20;
    for (size_t k = 0; k < ne && B.st == GMT_OK;) {
        uint64_t tick = e[k].tick, ts = BASE + tick * TICK;
        while (next_step * per_step <= tick) /* a step begins just before its first tick's events */
            step(BASE + next_step * per_step * TICK - 10, next_step), next_step++;
        for (; k < ne && e[k].tick == tick; k++) {
            uint32_t i = e[k].i;
            uint64_t addr = 0x100000000ull + (uint64_t)i * (16ull << 20);
            if (e[k].is_free) {
                mem(GMT_REC_FREE, ts, addr, bytes[i], seq++);
                live -= bytes[i];
            } else {
                mem(GMT_REC_ALLOC, ts, addr, bytes[i], seq++);
                kernel(ts + 10, i % 16 + 1, seq++);
                live += bytes[i];
            }
        }
        fprintf(truth, "%llu %llu\n", (unsigned long long)(ts - T0), (unsigned long long)live);
    }
    sc_trailer(&B, BASE + ticks * TICK, B.n + 1);
    free(bytes);
    free(e);
    int bad = sc_close(&B, argv[1]) != 0;
    if (fclose(truth) != 0) {
        fprintf(stderr, "gma_mktl_exact: %s: write error\n", argv[2]);
        bad = 1;
    }
    return bad;
}
