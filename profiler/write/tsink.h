/*
 * The trace sink (tsink.c): the trace file of a run. It owns the file's
 * writer and name, says once when a write fails, holds back the STRING of
 * a name no trace record names yet, takes the name once the process
 * records (the claim), closes the file and appends the run's summary line.
 *
 * The writer thread (wthread.c) calls it; a test can make one on a memory
 * writer (gmt_writer_open_sink). No thread of its own; the claim's lock is
 * the only one, taken once or twice in a run.
 */
#ifndef GMEMPROF_PROFILER_TSINK_H
#define GMEMPROF_PROFILER_TSINK_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "config.h"
#include "gmt_io.h"

typedef struct gmp_tsink {
    gmt_writer *w;            /* the trace file's writer; NULL with the flight recorder alone */
    const gmt_strtab *strtab; /* the writer thread's string table: the held STRINGs' text */
    char path[GMP_PATH_MAX];  /* the trace file; the claim may change it (another process holds the name) */
    /* The trace failed (said once): the trailer's WRITE_ERRORS, the
     * summary's status. With the recorder alone: its ring's writer, or a
     * chunk baseline's. */
    int io_error;
    int claim_failed;         /* the trace could not take its name (said once) */
    /* a bit per string id: its STRING is held back from the trace until a
     * record put there names it */
    uint8_t *held;
    size_t held_cap;
    pthread_mutex_t claim_lock; /* orders a context callback's claim with the close */
    _Atomic int claim_done;
} gmp_tsink;

/* A fresh sink (every field reset) for the writer w (NULL: none) of the
 * file path; st gives the text of held STRINGs. */
void gmp_tsink_init(gmp_tsink *t, gmt_writer *w, const char *path, const gmt_strtab *st);
/* Frees what init and the held bits took (not the writer). */
void gmp_tsink_free(gmp_tsink *t);

/* The writer w of the file `name` failed: said once ("writing the trace
 * NAME failed: why"), counted in *status. */
void gmp_tsink_say_failed(gmt_writer *w, const char *name, int *status);
/* A writer standing for the trace (its own, the recorder's ring or a
 * chunk baseline's with the recorder alone) failed. */
void gmp_tsink_failed(gmp_tsink *t, gmt_writer *w);

/* r to the trace, after the STRING of the name it carries (a RANGE_BEGIN's,
 * an OOM's op) when that was held back. Returns the records written. */
unsigned gmp_tsink_put(gmp_tsink *t, const gmt_record *r);
/* id's STRING (s, n bytes) to the trace now. */
void gmp_tsink_put_string(gmp_tsink *t, uint64_t id, const char *s, size_t n);
/* Holds id's STRING back: 0, or -1 out of memory (the caller writes it). */
int gmp_tsink_hold(gmp_tsink *t, uint64_t id);
/* 1 when id's STRING was held back; it is not from now on. */
int gmp_tsink_unhold(gmp_tsink *t, uint64_t id);

/* Takes the file's name once the process records (a context was made,
 * ctx_seen, or a dump was written): a process that makes no context leaves
 * the name to one that does. Any thread; cheap once done. */
void gmp_tsink_claim(gmp_tsink *t, int ctx_seen);
/* The end: claims if due (ctx_seen), then closes the file, and no claim
 * runs after. *named: the file has its name (an unclaimed file is
 * removed). Returns 1 when everything was written. */
int gmp_tsink_close(gmp_tsink *t, int ctx_seen, int *named);

/* Appends line (n bytes, '\n' ended; n >= cap: it did not fit) to the
 * launcher's summary file (O_APPEND: every profiled process of the run
 * appends its own). 0, or an errno. */
int gmp_tsink_append_line(const char *summary_file, const char *line, size_t n, size_t cap);

/* What the end of a run says of its trace. */
typedef struct gmp_tsink_outcome {
    uint64_t bytes;       /* the file's size (the bytes written when it cannot be read) */
    uint64_t windows, records, dropped;
    uint64_t steps;       /* steps seen, and what made the latest (gmt_step_source) */
    int step_source;
    int fw_seen;          /* a framework allocator reported: fw_events of fw_name */
    uint64_t fw_events;
    const char *fw_name;
    /* keys added to the summary line (the recorder beside the trace); NULL none */
    size_t (*add_keys)(void *ctx, char *line, size_t cap);
    void *ctx;
} gmp_tsink_outcome;

/* The run's line in the launcher's summary file (status: a
 * GMP_SUMMARY_STATUS_*; add_keys unless NOCTX); on stderr when it cannot
 * be added, never silent. */
void gmp_tsink_summary_line(const gmp_tsink *t, const char *summary_file, const gmp_tsink_outcome *o,
                            const char *status);
/* The "wrote" line on stderr, without a launcher. */
void gmp_tsink_say_wrote(const gmp_tsink *t, const gmp_tsink_outcome *o);
/* The trace file's size, else fallback. */
uint64_t gmp_tsink_file_size(const gmp_tsink *t, uint64_t fallback);

#endif
