/*
 * Several per-rank traces (ranks.c), through the library: the --by rank
 * numbers worked out by hand in scenarios.c (sc_rank), the merged kernel
 * table against a sum computed here independently from each trace's raw
 * kernel rows, --per-rank, and how traces are told apart.
 * Usage: gma_test_ranks TRACEDIR (written by gma_mktrace).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ranks.h"
#include "tracestr.h"

#define MiB (1ull << 20)

#include "../check.h"

static gma_replay rep; /* large */

static void defaults(gma_opts *o)
{
    memset(o, 0, sizeof(*o));
    o->by = GMA_BY_KERNEL;
    o->sort = GMA_SORT_MEM;
    o->top = 0;
    o->format = GMA_FMT_TABLE;
    o->window = o->step = o->device = -1;
}

/* Runs the set as gmem-analyze does: headers, identification, each replay. */
static int run_set(gma_ranks *s, const gma_opts *o, int by_rank, int per_rank, char **paths, size_t n)
{
    char msg[600];
    if (gma_ranks_init(s, o, by_rank, per_rank, paths, n) != 0)
        return -1;
    for (size_t i = 0; i < n; i++)
        if (gma_ranks_peek(s, i, msg, sizeof(msg)) != 0) {
            fprintf(stderr, "%s\n", msg);
            return -1;
        }
    gma_ranks_identify(s);
    for (size_t i = 0; i < n; i++) {
        if (gma_replay_file(&rep, o, paths[i], msg, sizeof(msg)) != 0) {
            fprintf(stderr, "%s\n", msg);
            gma_replay_free(&rep);
            return -1;
        }
        int e = gma_ranks_take(s, i, &rep);
        gma_replay_free(&rep);
        if (e)
            return -1;
    }
    return gma_ranks_build(s);
}

static int col(const gma_table *t, const char *key)
{
    for (size_t c = 0; c < t->ncols; c++)
        if (strcmp(t->cols[c].key, key) == 0)
            return (int)c;
    fprintf(stderr, "no column %s\n", key);
    exit(1);
}

static const gma_cell *cell(const gma_table *t, size_t row, const char *key)
{
    return gma_table_cell(t, row, (size_t)col(t, key));
}

static void paths4(const char *dir, char buf[4][1024], char **p)
{
    for (int i = 0; i < 4; i++) {
        snprintf(buf[i], sizeof(buf[i]), "%s/rank%d.gmt", dir, i);
        p[i] = buf[i];
    }
}

static void test_by_rank(const char *dir)
{
    char buf[4][1024], *p[4];
    paths4(dir, buf, p);
    gma_opts o;
    defaults(&o);
    gma_ranks s;
    CHECK(run_set(&s, &o, 1, 0, p, 4) == 0, "by rank");
    CHECK(s.nwarn == 0, "%zu warnings", s.nwarn);
    const gma_table *t = &s.out;
    CHECK(t->nrows == 4, "%zu rows", t->nrows);
    /* peaks 104 + 8r MiB, mean 116 MiB; ranked by peak: 3, 2, 1, 0 */
    for (size_t row = 0; row < t->nrows && row < 4; row++) {
        uint64_t r = 3 - row;
        CHECK(cell(t, row, "rank")->v.u == r, "row %zu rank %llu", row, (unsigned long long)cell(t, row, "rank")->v.u);
        CHECK(cell(t, row, "peak_bytes")->v.u == (104 + 8 * r) * MiB, "rank %llu peak", (unsigned long long)r);
        double want = ((double)(104 + 8 * r) - 116.0) / 116.0;
        double got = cell(t, row, "imbalance")->v.d;
        CHECK(fabs(got - want) < 1e-12, "rank %llu imbalance %.17g, want %.17g", (unsigned long long)r, got, want);
        CHECK(cell(t, row, "peak_step")->v.u == 0, "peak step");
        CHECK(cell(t, row, "peak_ns")->v.i == 14000000, "peak at 14 ms");
        CHECK(cell(t, row, "baseline_bytes")->v.u == 64 * MiB, "baseline");
        CHECK(cell(t, row, "alloc_bytes")->v.u == (56 + 8 * r) * MiB, "allocated");
        CHECK(cell(t, row, "freed_bytes")->v.u == 48 * MiB, "freed");
        CHECK(cell(t, row, "leaked_bytes")->v.u == (8 + 8 * r) * MiB, "leaked");
        CHECK(cell(t, row, "kernels")->v.u == 3, "kernels");
        CHECK(cell(t, row, "kernel_ns")->v.u == (300 + 50 * r) * 1000, "kernel time");
        CHECK(cell(t, row, "steps")->v.u == 2, "steps");
        CHECK(strcmp(gma_cell_text(t, cell(t, row, "host")), r < 2 ? "node-a" : "node-b") == 0, "host");
    }
    gma_ranks_free(&s);
    /* --sort alloc keeps the same order here; --sort name is rank order */
    o.sort = GMA_SORT_NAME;
    CHECK(run_set(&s, &o, 1, 0, p, 4) == 0, "by rank, sort name");
    for (size_t row = 0; row < s.out.nrows; row++)
        CHECK(cell(&s.out, row, "rank")->v.u == row, "sort name row %zu", row);
    gma_ranks_free(&s);
}

/* The merged kernel table equals the per-trace raw kernel rows summed by
 * name (peak: the maximum), computed here without ranks.c or tables.c. */
typedef struct ksum {
    char name[128];
    uint64_t calls, alloc, freed, time, peak, ranks;
} ksum;

static void test_merged_kernels(const char *dir)
{
    char buf[4][1024], *p[4];
    paths4(dir, buf, p);
    gma_opts o;
    defaults(&o);
    ksum sums[16];
    size_t ns = 0;
    char msg[600];
    for (int i = 0; i < 4; i++) {
        CHECK(gma_replay_file(&rep, &o, p[i], msg, sizeof(msg)) == 0, "%s", msg);
        for (size_t k = 0; k < rep.krows.len; k++) {
            const gma_krow *x = &GMA_VEC_AT(&rep.krows, gma_krow, k);
            if (!x->calls && !x->alloc_count && !x->free_count)
                continue;
            size_t len = 0;
            const char *nm = k ? gma_str(&rep, x->name, &len) : "(unattributed)";
            if (!k)
                len = strlen(nm);
            size_t j = 0;
            while (j < ns && (strlen(sums[j].name) != len || memcmp(sums[j].name, nm, len) != 0))
                j++;
            if (j == ns && ns < 16) {
                memset(&sums[ns], 0, sizeof(sums[ns]));
                snprintf(sums[ns].name, sizeof(sums[ns].name), "%.*s", (int)len, nm);
                ns++;
            }
            sums[j].calls += x->calls;
            sums[j].alloc += x->alloc_bytes;
            sums[j].freed += x->free_bytes;
            sums[j].time += x->time_ns;
            sums[j].peak = x->alloc_count && x->peak > sums[j].peak ? x->peak : sums[j].peak;
            sums[j].ranks++;
        }
        gma_replay_free(&rep);
    }
    CHECK(ns == 3, "%zu kernel names", ns);
    gma_ranks s;
    CHECK(run_set(&s, &o, 0, 0, p, 4) == 0, "merged");
    const gma_table *t = &s.out;
    CHECK(t->nrows == ns, "%zu merged rows, %zu names", t->nrows, ns);
    for (size_t j = 0; j < ns; j++) {
        size_t row = 0;
        while (row < t->nrows && strcmp(gma_cell_text(t, cell(t, row, "name")), sums[j].name) != 0)
            row++;
        CHECK(row < t->nrows, "no merged row %s", sums[j].name);
        if (row >= t->nrows)
            continue;
        const gma_cell *calls = cell(t, row, "calls");
        CHECK((calls->null ? 0 : calls->v.u) == sums[j].calls, "%s calls", sums[j].name);
        CHECK(cell(t, row, "alloc_bytes")->v.u == sums[j].alloc, "%s allocated", sums[j].name);
        CHECK(cell(t, row, "freed_bytes")->v.u == sums[j].freed, "%s freed", sums[j].name);
        CHECK(cell(t, row, "self_bytes")->v.i == (int64_t)(sums[j].alloc - sums[j].freed), "%s self", sums[j].name);
        const gma_cell *tm = cell(t, row, "time_ns");
        CHECK((tm->null ? 0 : tm->v.u) == sums[j].time, "%s time", sums[j].name);
        const gma_cell *pk = cell(t, row, "peak_bytes");
        CHECK((pk->null ? 0 : pk->v.u) == sums[j].peak, "%s peak", sums[j].name);
        CHECK(cell(t, row, "ranks")->v.u == sums[j].ranks, "%s ranks", sums[j].name);
        if (sums[j].calls)
            CHECK(cell(t, row, "mean_ns")->v.u == sums[j].time / sums[j].calls, "%s mean", sums[j].name);
    }
    /* by hand (scenarios.c): nccl 4 calls, 80 MiB, 700 us, peak 128 MiB; gemm 8 calls, 192 MiB, peak 112 */
    CHECK(t->nrows == 3 && strcmp(gma_cell_text(t, cell(t, 0, "name")), "ncclDevKernel_AllReduce_Sum_bf16_RING_LL") == 0 &&
              cell(t, 0, "alloc_bytes")->v.u == 80 * MiB && cell(t, 0, "time_ns")->v.u == 700000 &&
              cell(t, 0, "peak_bytes")->v.u == 128 * MiB,
          "nccl row first, by hand");
    gma_ranks_free(&s);

    /* --per-rank: every rank's rows (3 each) with a rank column; they add up */
    CHECK(run_set(&s, &o, 0, 1, p, 4) == 0, "per rank");
    CHECK(s.out.nrows == 12, "%zu per-rank rows", s.out.nrows);
    CHECK(strcmp(s.out.cols[0].key, "rank") == 0, "rank column first");
    uint64_t alloc = 0, want = 0;
    for (size_t row = 0; row < s.out.nrows; row++)
        alloc += cell(&s.out, row, "alloc_bytes")->v.u;
    for (size_t j = 0; j < ns; j++)
        want += sums[j].alloc;
    CHECK(alloc == want && want == 272 * MiB, "per-rank allocated %llu", (unsigned long long)alloc);
    /* ranked by self memory: rank 3's nccl row (32 MiB) first */
    CHECK(cell(&s.out, 0, "rank")->v.u == 3 && cell(&s.out, 0, "self_bytes")->v.i == (int64_t)(32 * MiB), "first per-rank row");
    gma_ranks_free(&s);
}

static void test_identify(const char *dir)
{
    char b[3][1024], *p[3];
    const char *names[3] = { "rank1", "world8", "norank" };
    for (int i = 0; i < 3; i++) {
        snprintf(b[i], sizeof(b[i]), "%s/%s.gmt", dir, names[i]);
        p[i] = b[i];
    }
    gma_opts o;
    defaults(&o);
    gma_ranks s;
    char msg[600];
    /* rank1 and world8 both say rank 1, norank says none: positions */
    CHECK(gma_ranks_init(&s, &o, 1, 0, p, 3) == 0, "init");
    for (size_t i = 0; i < 3; i++)
        CHECK(gma_ranks_peek(&s, i, msg, sizeof(msg)) == 0, "peek");
    gma_ranks_identify(&s);
    for (size_t i = 0; i < 3; i++)
        CHECK(s.runs[i].id == (int64_t)i, "position id %zu: %lld", i, (long long)s.runs[i].id);
    CHECK(s.nwarn == 2, "%zu warnings (repeated rank, world sizes)", s.nwarn);
    CHECK(s.nwarn >= 1 && strstr(s.warn[0], "both say rank 1"), "%s", s.warn[0]);
    CHECK(gma_ranks_find(&s, 2) == 2, "find");
    gma_ranks_free(&s);
    /* ranks given out of order keep their header rank */
    char c[2][1024], *q[2];
    snprintf(c[0], sizeof(c[0]), "%s/rank3.gmt", dir);
    snprintf(c[1], sizeof(c[1]), "%s/rank0.gmt", dir);
    q[0] = c[0];
    q[1] = c[1];
    CHECK(gma_ranks_init(&s, &o, 1, 0, q, 2) == 0, "init");
    for (size_t i = 0; i < 2; i++)
        CHECK(gma_ranks_peek(&s, i, msg, sizeof(msg)) == 0, "peek");
    gma_ranks_identify(&s);
    CHECK(s.runs[0].id == 3 && s.runs[1].id == 0 && s.nwarn == 0, "header ranks %lld %lld", (long long)s.runs[0].id,
          (long long)s.runs[1].id);
    uint64_t origin = 0;
    CHECK(gma_ranks_origin(&s, &origin) == 1 && origin == 1000000000ull, "origin");
    gma_ranks_free(&s);
    /* a missing file is named */
    char m[1024], *mp[1];
    snprintf(m, sizeof(m), "%s/no-such.gmt", dir);
    mp[0] = m;
    CHECK(gma_ranks_init(&s, &o, 1, 0, mp, 1) == 0, "init");
    CHECK(gma_ranks_peek(&s, 0, msg, sizeof(msg)) != 0 && strstr(msg, "no-such.gmt"), "missing: %s", msg);
    gma_ranks_free(&s);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: gma_test_ranks TRACEDIR\n");
        return 2;
    }
    test_by_rank(argv[1]);
    test_merged_kernels(argv[1]);
    test_identify(argv[1]);
    if (tc_failures) {
        fprintf(stderr, "%d failure(s)\n", tc_failures);
        return 1;
    }
    printf("ranks ok\n");
    return 0;
}
