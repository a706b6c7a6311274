/*
 * A fake io table for the assembler (profiler/assemble/assembler.h), shared by its
 * test (tests/profiler/test_assembler.c: keeps every record to check it) and
 * its benchmark (bench/asm_rate.c: counts the records and writes them to
 * /dev/null). The fake has no driver and no writer thread: every device has
 * the same total memory, driver memory figures and snapshots are never
 * there, the trace clock stays where it is set, the monotonic clock at 0,
 * and a SYNC event reached does nothing. Where the records, strings and
 * frames go is the user's (fake_asm_sink).
 */
#ifndef GMEMPROF_TESTS_FAKE_ASM_IO_H
#define GMEMPROF_TESTS_FAKE_ASM_IO_H

#include <stddef.h>
#include <stdint.h>

#include "assembler.h"

/* The user's side, called with the fake_asm_io as ctx. */
typedef struct fake_asm_sink {
    void (*put)(void *ctx, const gmt_record *r);            /* required */
    uint64_t (*intern)(void *ctx, const char *s, size_t n); /* required */
    void (*end_frame)(void *ctx);                           /* NULL: nothing */
    void (*stats)(void *ctx);                               /* NULL: no STATS record */
    void (*failure)(void *ctx, gmt_oom *o);                 /* NULL: failures not reported */
} fake_asm_sink;

typedef struct fake_asm_io {
    gmp_asm_io io;      /* for gmp_asm_create; its ctx is this struct */
    uint64_t total_mem; /* every device's, in its DEVICE record */
    uint64_t now;       /* the trace clock (ns) */
} fake_asm_io;

/* Fills f from the sink; f must outlive the assemblers made on f->io. */
void fake_asm_io_init(fake_asm_io *f, const fake_asm_sink *sink, uint64_t total_mem, uint64_t now);

#endif
