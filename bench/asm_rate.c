/*
 * asm_rate: records per CPU second of the profiler writer thread's work on
 * one core, without the thread: the assembler (profiler/assemble/assembler.c) stages
 * CUPTI buffers, joins, orders, gates and emits, and the trace writer
 * (common/writer.c, codec, zstd) writes to /dev/null.
 *
 *   asm_rate [N [BUFFERS]]
 *     N        records (default 3e7): the e2e long test's stream, per round
 *              an ALLOC and a FREE of 4 KiB at one of 1024 addresses
 *              stamped with the time of making, and a KERNEL whose GPU time
 *              runs on its own clock (two lanes in the drain's order), no
 *              API call (the epoch by time), as MEMORY2 and
 *              CONCURRENT_KERNEL records
 *     BUFFERS  1 MiB CUPTI buffers made once and staged round robin
 *              (default 64: more than the cache holds, as in a run)
 *
 * The pipeline's rate (bench/pipeline_rate.sh) adds what no single thread
 * shows: the buffers are written on another core, and the two threads share
 * the machine. This isolates the writer thread's own work, so a change to
 * it can be measured on a loaded machine (CPU time, best of 3 passes).
 * Prints one line: records, seconds, records/s.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "assembler.h"
#include "fake_asm_io.h"
#include "gmt_io.h"
#include "schedule.h"

static double cpu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static gmt_writer *g_w;
static gmt_strtab *g_st;
static uint64_t g_put;

static void io_put(void *ctx, const gmt_record *r)
{
    (void)ctx;
    g_put++;
    gmt_writer_put(g_w, r);
}

static uint64_t io_intern(void *ctx, const char *s, size_t n)
{
    (void)ctx;
    uint64_t id = 0;
    gmt_writer_intern(g_w, g_st, s, n, &id);
    return id;
}

static void io_end_frame(void *ctx)
{
    (void)ctx;
    gmt_writer_end_frame(g_w);
}

/* The records to the trace writer, counted (fake_asm_io.h). */
static const fake_asm_sink bench_sink = {io_put, io_intern, io_end_frame, NULL, NULL};

/* cuptiActivityGetNextRecord over the two record kinds made here. */
static size_t rec_size(CUpti_ActivityKind k)
{
    return k == CUPTI_ACTIVITY_KIND_MEMORY2 ? sizeof(CUpti_ActivityMemory4) : sizeof(CUpti_ActivityKernel10);
}
static size_t align8(size_t n) { return (n + 7) & ~(size_t)7; }

static CUptiResult next_rec(uint8_t *buf, size_t valid, CUpti_Activity **rec)
{
    size_t off = *rec ? (size_t)((uint8_t *)*rec - buf) + align8(rec_size((*rec)->kind)) : 0;
    if (off + sizeof(CUpti_Activity) > valid)
        return CUPTI_ERROR_MAX_LIMIT_REACHED;
    *rec = (CUpti_Activity *)(buf + off);
    return CUPTI_SUCCESS;
}

typedef struct buf {
    uint8_t *p;
    size_t valid;
    uint64_t n;
} buf;

static void fill(buf *b, size_t cap, uint64_t *i, uint64_t *t)
{
    CUpti_ActivityMemory4 m;
    CUpti_ActivityKernel10 k;
    size_t round = 2 * align8(sizeof m) + align8(sizeof k);
    b->valid = b->n = 0;
    while (b->valid + round <= cap) {
        uint64_t a = 0x40000000ull + (*i % 1024) * 4096;
        memset(&m, 0, sizeof m);
        m.kind = CUPTI_ACTIVITY_KIND_MEMORY2;
        m.memoryOperationType = CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION;
        m.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
        m.address = a;
        m.bytes = 4096;
        m.timestamp = *t;
        m.streamId = CUPTI_INVALID_STREAM_ID;
        memcpy(b->p + b->valid, &m, sizeof m);
        b->valid += align8(sizeof m);
        m.memoryOperationType = CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE;
        m.timestamp = *t + 20;
        memcpy(b->p + b->valid, &m, sizeof m);
        b->valid += align8(sizeof m);
        memset(&k, 0, sizeof k);
        k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
        k.name = "long_k";
        k.start = 1000 + *i * 10; /* the GPU's clock, behind the host's */
        k.end = k.start + 5;
        k.streamId = 7;
        k.gridX = 128;
        k.gridY = 2;
        k.gridZ = 1;
        k.blockX = 256;
        k.blockY = k.blockZ = 1;
        k.registersPerThread = 32;
        memcpy(b->p + b->valid, &k, sizeof k);
        b->valid += align8(sizeof k);
        b->n += 3;
        *i += 1;
        *t += 40;
    }
}

int main(int argc, char **argv)
{
    uint64_t n = argc > 1 ? strtoull(argv[1], NULL, 10) : 30000000ull;
    size_t nb = argc > 2 ? (size_t)strtoul(argv[2], NULL, 10) : 64;
    size_t cap = 1u << 20;
    buf *bufs = calloc(nb, sizeof *bufs);
    if (!bufs || nb == 0)
        return 1;
    uint64_t i = 0, t = 1000000000ull;
    for (size_t b = 0; b < nb; b++) {
        bufs[b].p = aligned_alloc(64, cap);
        if (!bufs[b].p)
            return 1;
        fill(&bufs[b], cap, &i, &t);
    }
    static gmp_epoch_info hist[GMP_EPOCH_HIST];
    hist[0].ev = GMP_SCHED_EV_WINDOW_BEGIN;
    hist[0].ts = 1;
    hist[0].window = 1;
    hist[0].phase = GMT_PHASE_ACTIVE;
    hist[0].in_window = 1;
    gmp_corrtab corr = {0};
    corr.mask = 1023;
    corr.slots = calloc(corr.mask + 1, sizeof *corr.slots);
    fake_asm_io fio; /* devices of 16 GiB, the trace clock past every record */
    fake_asm_io_init(&fio, &bench_sink, 1ull << 34, UINT64_MAX / 2);
    double best = 0;
    uint64_t done = 0;
    for (int pass = 0; pass < 3; pass++) {
        gmt_writer_opts wo = {0, 0};
        g_w = gmt_writer_open("/dev/null", &wo);
        g_st = gmt_strtab_create();
        gmp_asm *a = gmp_asm_create(&fio.io, &corr, 64u << 20);
        if (!g_w || !g_st || !a || !corr.slots)
            return 1;
        g_put = 0;
        done = 0;
        double t0 = cpu_now();
        gmp_asm_round_begin(a, UINT64_MAX / 2);
        gmp_asm_events_done(a, 0);
        gmp_asm_take_epochs(a, hist, 0);
        for (size_t b = 0; done < n; b = (b + 1) % nb) {
            /* a round takes 16 buffers, as the writer thread does */
            if (b % 16 == 0) {
                gmp_asm_drain(a, 0);
                gmp_asm_round_begin(a, UINT64_MAX / 2);
                gmp_asm_events_done(a, 0);
            }
            gmp_asm_stage_buffer(a, bufs[b].p, bufs[b].valid, next_rec);
            done += bufs[b].n;
        }
        gmp_asm_finish(a, GMT_WEND_EXIT);
        double s = cpu_now() - t0;
        gmp_asm_destroy(a);
        gmt_writer_close(g_w);
        gmt_strtab_free(g_st);
        if (pass == 0 || s < best)
            best = s;
        if (g_put < done) {
            fprintf(stderr, "asm_rate: %llu of %llu records written\n", (unsigned long long)g_put,
                    (unsigned long long)done);
            return 1;
        }
    }
    printf("records=%llu seconds=%.3f records_per_s=%.0f\n", (unsigned long long)done, best, (double)done / best);
    for (size_t b = 0; b < nb; b++)
        free(bufs[b].p);
    free(bufs);
    free(corr.slots);
    return 0;
}
