/*
 * The writer thread, or pump (wthread.c): the only thread that touches the
 * writers; it moves events and activity buffers to the assembler and hands
 * what it emits to the trace sink (tsink.h) and the recorder sink
 * (rsink.h), frame by frame, until the trailer.
 */
#ifndef GMEMPROF_PROFILER_WTHREAD_H
#define GMEMPROF_PROFILER_WTHREAD_H

#include <stddef.h>
#include <stdint.h>

#include "config.h"
#include "gmt_io.h"

/* Bytes of the writer's staging area for a host budget in bytes
 * (GMEMPROF_HOST_BUFFER_MB; activity.h). */
size_t gmp_wt_staging_bytes(size_t budget);

/* What the writer is told at start. */
typedef struct gmp_wt_setup {
    const gmp_config *cfg;  /* the settings: read-only, valid for the process's life */
    const char *path;       /* the trace file's name (copied) */
    uint64_t start_unix_ns; /* the run's start (the HEADER) */
    uint64_t start_ts;
} gmp_wt_setup;

/* Takes w and starts the thread: 0, or -1 with err filled. w NULL: the
 * flight recorder (GMEMPROF_SCHEDULE=on-oom): nothing is written until a
 * failure, which writes a dump to a new file (setup->path, then
 * NAME.k.EXT). */
int gmp_wt_start(gmt_writer *w, const gmp_wt_setup *setup, char *err, size_t cap);
int gmp_wt_running(void);
/* Makes the writer take in everything queued so far and end its frame;
 * waits at most timeout_ms. */
void gmp_wt_sync(unsigned timeout_ms);
/* Normal end (exit, destructor): the writer writes the rest, the trailer,
 * closes the file and prints the summary; waits at most timeout_ms. */
void gmp_wt_finish(int reason, unsigned timeout_ms);
/* The exit began at trace time ts: records the program makes after it
 * (other threads run on while exit() runs its handlers) are counted as
 * dropped, not written, and the window ends at ts. The first call counts. */
void gmp_wt_cutoff(uint64_t ts);
/* A context was made (the resource callback, on the thread that made it):
 * the trace takes its name now, so that a process this one starts after
 * it finds the name held. */
void gmp_wt_claim(void);
/* From a signal handler (async-signal-safe: atomics and one sem_post; no
 * lock, no wait): the writer ends the trace (window end reason "signal")
 * within about GMP_WT_SIGNAL_MS, counting as dropped what it could not take
 * by then, then makes the process die by sig (default action, sent to the
 * process). -1 when the writer is not running. */
#define GMP_WT_SIGNAL_MS 50
int gmp_wt_finish_signal(int sig);
/* From a signal handler (SIGUSR2; async-signal-safe: an atomic store and
 * one sem_post): the flight recorder writes a dump soon. -1 when there is
 * no recorder running. */
int gmp_wt_dump_request(void);
/* Waits at most timeout_ms while the writer runs (an exit that overtakes a
 * signal's end waits for it, then dies by the signal); at once otherwise. */
void gmp_wt_wait(unsigned timeout_ms);

#endif
