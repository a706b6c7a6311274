/*
 * writer_rate: records per second that the trace writer (common/writer.c
 * and the codec, with zstd) sustains on one core, the profiler's writer
 * thread's share of the work once records are assembled.
 *
 *   writer_rate [WORKLOAD [N [LEVEL [OUT]]]]
 *     WORKLOAD  long  (default) the e2e long test's stream: per round an ALLOC
 *                     and a FREE of 4 KiB at one of 1024 addresses and a
 *                     KERNEL 10 ns after the last, correlation ids and
 *                     sequence numbers counting up (3 records a round)
 *               synth gmem-synth's training-like stream (gmt_synth_run)
 *     N         records (default 3e7 long, 1e7 synth)
 *     LEVEL     zstd level (default 0: the writer's default, 3)
 *     OUT       file to write (default /dev/null: the disk is not measured;
 *               bytes_out=0 then)
 *
 * The records are made on the fly; what making them costs is measured
 * alone (the same loop into a sink that drops them) and subtracted, so the
 * figure is the writer's: N / (CPU time with the writer - CPU time without).
 * Prints one line: workload, records, level, seconds, records/s, bytes in
 * and out, and where the writer's time went is for perf (docs/benchmarks.md).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gmt_io.h"
#include "synth.h"

static double cpu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

typedef struct sink {
    gmt_writer *w;     /* NULL: records are made and dropped */
    uint64_t n, sum;   /* sum: keeps the dropped records' making from being optimised away */
} sink;

static void put(sink *s, const gmt_record *r)
{
    s->n++;
    if (s->w)
        gmt_writer_put(s->w, r);
    else
        s->sum += r->u.kernel.start ^ r->type;
}

/* The e2e long test's stream, as the profiler's writer emits it. */
static void run_long(sink *s, uint64_t n)
{
    gmt_record r;
    memset(&r, 0, sizeof r);
    r.type = GMT_REC_STRING;
    r.u.string.id = 1;
    r.u.string.str.ptr = "long_k";
    r.u.string.str.len = 6;
    put(s, &r);
    uint64_t t = 1000000000ull, corr = 1;
    for (uint64_t i = 0; s->n < n; i++) {
        uint64_t a = 0x40000000ull + (i % 1024) * 4096;
        memset(&r, 0, sizeof r);
        r.type = GMT_REC_ALLOC;
        r.u.mem.ts = t + i * 10;
        r.u.mem.address = a;
        r.u.mem.bytes = 4096;
        r.u.mem.kind = GMT_MEMKIND_DEVICE;
        r.u.mem.source = GMT_SRC_MALLOC;
        r.u.mem.corr = corr++;
        r.u.mem.tid = 4242;
        r.u.mem.seq = i;
        put(s, &r);
        r.type = GMT_REC_FREE;
        r.u.mem.ts += 2;
        r.u.mem.corr = corr++;
        put(s, &r);
        memset(&r, 0, sizeof r);
        r.type = GMT_REC_KERNEL;
        r.u.kernel.start = t + i * 10;
        r.u.kernel.end = t + i * 10 + 5;
        r.u.kernel.stream = 7;
        r.u.kernel.corr = corr++;
        r.u.kernel.name = 1;
        r.u.kernel.grid[0] = r.u.kernel.grid[1] = r.u.kernel.grid[2] = 1;
        r.u.kernel.block[0] = 128;
        r.u.kernel.block[1] = r.u.kernel.block[2] = 1;
        r.u.kernel.registers = 32;
        r.u.kernel.tid = 4242;
        r.u.kernel.seq = i + 1;
        put(s, &r);
    }
}

static gmt_status synth_sink(void *ctx, const gmt_record *r)
{
    sink *s = ctx;
    if (!r)
        return s->w ? gmt_writer_end_frame(s->w) : GMT_OK;
    put(s, r);
    return GMT_OK;
}

static void run_synth(sink *s, uint64_t n)
{
    gmt_synth_opts o;
    gmt_synth_opts_default(&o);
    o.events = n;
    gmt_synth_run(&o, synth_sink, s, NULL);
}

int main(int argc, char **argv)
{
    const char *wl = argc > 1 ? argv[1] : "long";
    int synth = strcmp(wl, "synth") == 0;
    if (!synth && strcmp(wl, "long") != 0) {
        fprintf(stderr, "usage: writer_rate [long|synth [N [LEVEL [OUT]]]]\n");
        return 2;
    }
    uint64_t n = argc > 2 ? strtoull(argv[2], NULL, 10) : synth ? 10000000ull : 30000000ull;
    int level = argc > 3 ? atoi(argv[3]) : 0;
    const char *out = argc > 4 ? argv[4] : "/dev/null";

    sink s0 = { NULL, 0, 0 };
    double t0 = cpu_now();
    if (synth)
        run_synth(&s0, n);
    else
        run_long(&s0, n);
    double gen = cpu_now() - t0;

    gmt_writer_opts wo = { level, 0 };
    sink s1 = { gmt_writer_open(out, &wo), 0, 0 };
    if (!s1.w) {
        perror(out);
        return 1;
    }
    t0 = cpu_now();
    if (synth)
        run_synth(&s1, n);
    else
        run_long(&s1, n);
    uint64_t in = gmt_writer_bytes_in(s1.w), recs = gmt_writer_records(s1.w);
    gmt_status st = gmt_writer_close(s1.w);
    double all = cpu_now() - t0;
    uint64_t outb = 0;
    FILE *f = fopen(out, "rb");
    if (f && strcmp(out, "/dev/null") != 0 && fseek(f, 0, SEEK_END) == 0)
        outb = (uint64_t)ftell(f);
    if (f)
        fclose(f);
    double w = all - gen;
    printf("workload=%s records=%llu level=%d writer_s=%.3f gen_s=%.3f records_per_s=%.0f bytes_in=%llu "
           "bytes_per_record=%.2f bytes_out=%llu status=%s check=%llu\n",
           wl, (unsigned long long)recs, level ? level : 3, w, gen, w > 0 ? (double)recs / w : 0.0,
           (unsigned long long)in, recs ? (double)in / (double)recs : 0.0, (unsigned long long)outb,
           gmt_status_str(st), (unsigned long long)(s0.sum & 0xff));
    return st == GMT_OK && recs == s1.n ? 0 : 1;
}
