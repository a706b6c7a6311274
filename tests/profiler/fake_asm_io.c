/* The assembler's fake io (fake_asm_io.h). */
#include "fake_asm_io.h"

#include <string.h>

static void nothing(void *ctx) { (void)ctx; }

static void device(void *ctx, unsigned d, gmt_device *o)
{
    (void)d;
    o->total_mem = ((const fake_asm_io *)ctx)->total_mem;
}

static int meminfo(void *ctx, unsigned d, uint64_t *free_b, uint64_t *total_b)
{
    (void)ctx;
    (void)d;
    (void)free_b;
    (void)total_b;
    return -1; /* no driver */
}

static int snapshot(void *ctx, uint64_t ticket, gmp_snap *o)
{
    (void)ctx;
    (void)ticket;
    (void)o;
    return 0;
}

static uint64_t now(void *ctx) { return ((const fake_asm_io *)ctx)->now; }

static uint64_t mono(void *ctx)
{
    (void)ctx;
    return 0;
}

static void synced(void *ctx, uint64_t ticket)
{
    (void)ctx;
    (void)ticket;
}

void fake_asm_io_init(fake_asm_io *f, const fake_asm_sink *sink, uint64_t total_mem, uint64_t now_ns)
{
    memset(f, 0, sizeof *f);
    f->total_mem = total_mem;
    f->now = now_ns;
    f->io.ctx = f;
    f->io.put = sink->put;
    f->io.intern = sink->intern;
    f->io.end_frame = sink->end_frame ? sink->end_frame : nothing;
    f->io.stats = sink->stats ? sink->stats : nothing;
    f->io.device = device;
    f->io.meminfo = meminfo;
    f->io.snapshot = snapshot;
    f->io.now = now;
    f->io.mono = mono;
    f->io.synced = synced;
    f->io.failure = sink->failure;
}
