/*
 * The recorder sink (rsink.c): what the flight recorder (GMEMPROF_ON_OOM,
 * docs/user-guide.md) keeps of the records the writer thread writes, in
 * the ring of recorder.h, and the bookkeeping of its dumps.
 *
 * gmp_rsink_take decides, record by record, what the ring keeps and where
 * a chunk begins (a STEP; a chunk grown past a quarter of the cap, or,
 * without steps, past a quarter of the kept span). It never writes and
 * never calls the assembler: it says when a chunk is due, and the writer
 * thread begins it (gmp_rsink_begin) and has the chunk's baseline written
 * once the record being put is out (gmp_rsink_base_writer,
 * gmp_rsink_base_done). A test drives it with records alone.
 */
#ifndef GMEMPROF_PROFILER_RSINK_H
#define GMEMPROF_PROFILER_RSINK_H

#include <stddef.h>
#include <stdint.h>

#include "config.h"
#include "epoch.h" /* GMP_MAX_DEVICES */
#include "gmt_io.h"
#include "recorder.h"

/* The settings the recorder follows (config.h). */
typedef struct gmp_rsink_settings {
    uint64_t steps;     /* GMEMPROF_OOM_STEPS: steps kept before the failing one */
    uint64_t seconds;   /* GMEMPROF_OOM_SECONDS: seconds kept when the program makes no steps */
    uint64_t max_mb;    /* GMEMPROF_OOM_MAX_MB: the ring's cap */
    uint64_t dumps;     /* GMEMPROF_OOM_DUMPS: dumps written at most */
    int kernels;        /* the ring keeps KERNEL/MEMCPY/MEMSET records */
    int zstd_level;
} gmp_rsink_settings;

/* A chunk the ring wants begun (gmp_rsink_take): at step (step_known 0:
 * the current step, which the assembler knows), at ts (0: now). */
typedef struct gmp_rsink_split {
    int due;
    int is_step;
    int step_known;
    uint64_t step;
    uint64_t ts;
} gmp_rsink_split;

typedef struct gmp_rsink {
    gmp_rsink_settings set;
    gmp_rec *rec;
    gmt_writer *ring_w, *base_w;           /* the chunks' records, their baselines */
    uint64_t chunk_rec0, chunk_frames0;    /* ring_w's counts when the chunk began */
    uint64_t base_records, base_frames;    /* the chunk's baseline */
    uint64_t base_r0, base_f0;             /* base_w's counts when the baseline began */
    int steps;                             /* a step beyond step 0 began */
    uint64_t step;                         /* the step of the last STEP record the ring took */
    int step_seen;                         /* the ring took a STEP record */
    int skip_ranges;                       /* a window's baseline is being written: its RANGE_BEGINs are not the ring's */
    int ring_error;                        /* the ring's writer failed (said once) */
    gmt_record devs[GMP_MAX_DEVICES];      /* DEVICE records, for every dump */
    char dev_names[GMP_MAX_DEVICES][256];
    uint8_t dev_have[GMP_MAX_DEVICES];
    uint64_t dumps, dumps_skipped;
    char dump_path[GMP_PATH_MAX];          /* the first dump */
    uint64_t dump_bytes, dump_records;
    int dump_ok;
} gmp_rsink;

/* A fresh sink (every field reset) with its ring and writers, and a first
 * chunk at ts for what comes before the first transition. 0, or -1 out of
 * memory (gmp_rsink_free frees what was made). */
int gmp_rsink_init(gmp_rsink *s, const gmp_rsink_settings *set, uint64_t ts);
/* Closes the writers (the ring's counts stay, for the summary). */
void gmp_rsink_close(gmp_rsink *s);
/* Closes the writers, frees the ring. */
void gmp_rsink_free(gmp_rsink *s);

/* Whether the ring takes r (1) or not (0); *split says whether a chunk
 * begins at r (before it goes in). DEVICE records are kept aside for the
 * dumps. */
int gmp_rsink_take(gmp_rsink *s, const gmt_record *r, gmp_rsink_split *split);
/* The ring's writer's status after a put or a frame end: said once. */
void gmp_rsink_status(gmp_rsink *s, gmt_status st);

/* The counts of the chunk being filled (its last frame ended by the caller). */
void gmp_rsink_sync(gmp_rsink *s);
/* Begins the chunk a split asked for: 0, after which the chunk's baseline is
 * due (written to gmp_rsink_base_writer, then gmp_rsink_base_done); -1 out
 * of memory (the current chunk goes on, no baseline). */
int gmp_rsink_begin(gmp_rsink *s, uint64_t step, int is_step, uint64_t ts);
/* The baseline's writer, its counts taken. */
gmt_writer *gmp_rsink_base_writer(gmp_rsink *s);
/* The baseline is written, its frame ended. */
void gmp_rsink_base_done(gmp_rsink *s);

/* ---- dumps ---- */
/* Dump k's file, named from the trace's path (gmt_names.h; beside: a trace
 * is written too). */
void gmp_rsink_dump_name(uint64_t k, const char *trace_path, int beside, char *out, size_t cap);
/* 1 when one more dump may be written; otherwise 0, said once. */
int gmp_rsink_dump_allowed(gmp_rsink *s, uint64_t cause);
/* The ring as one window, to f: the oldest chunk's baseline, every chunk's
 * records. Returns the oldest chunk's step; *failed set when a write failed. */
uint64_t gmp_rsink_put_ring(gmp_rsink *s, gmt_writer *f, int *failed);
/* A dump was written (the first one's file and counts are kept). */
void gmp_rsink_dump_done(gmp_rsink *s, const char *path, uint64_t records, uint64_t bytes, int ok);

/* ---- the end ---- */
/* The recorder's status for the summary (GMP_SUMMARY_STATUS_*). */
const char *gmp_rsink_status_name(const gmp_rsink *s);
/* The recorder's line on stderr (no launcher to say it). beside: a trace
 * is written too. */
void gmp_rsink_say(const gmp_rsink *s, int beside);
/* Its keys on a summary line (formatted, '\n' ended): dumps, ring, rank;
 * beside a trace, its first dump's file too. Returns the new length (>=
 * cap: it did not fit). */
size_t gmp_rsink_add_keys(const gmp_rsink *s, const char *trace_path, int beside, char *line, size_t cap);
/* The recorder alone: its summary line names the first dump (or where it
 * would have gone) as the trace; on stderr without a summary file. */
void gmp_rsink_summary(const gmp_rsink *s, const char *summary_file, const char *trace_path, uint64_t dropped);

#endif
