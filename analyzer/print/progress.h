/*
 * The progress of a long run on stderr: what gmem-analyze is doing (reading
 * TRACE, writing the timeline, ...), how far it is (the compressed bytes of
 * a trace read of its size when known, the records replayed) and its rate.
 *
 * Shown only where a person watches: on a terminal (stderr a tty, TERM not
 * "dumb") as one line rewritten in place with '\r' at most 10 times a
 * second and erased when the task ends; with --progress as plain lines, one
 * a second, for logs. Nothing in the run's first second, so a short run
 * prints nothing. The caller asks the clock only every GMA_PROGRESS_EVERY
 * records (gma_progress_update), so the replay's loop pays one comparison
 * per batch of records.
 *
 * The clock and the output are functions, so the logic (when to draw,
 * what, how to erase) is tested with an injected clock
 * (tests/analyzer/test_progress.c); the state is this struct, nothing global.
 */
#ifndef GMA_PROGRESS_H
#define GMA_PROGRESS_H

#include <stddef.h>
#include <stdint.h>

/* Records between two looks at the clock: 64 Ki records take about 3 ms
 * at the replay's 20 M records/s, well under the 100 ms between lines. */
#define GMA_PROGRESS_EVERY (64u * 1024u)

typedef enum {
    GMA_PROGRESS_OFF,   /* a pipe, a file, CI, or --no-progress */
    GMA_PROGRESS_TTY,   /* one line rewritten in place, erased at the end */
    GMA_PROGRESS_LINES, /* --progress: plain lines, one a second */
} gma_progress_mode;

/* Nanoseconds on a monotonic clock; the output of the characters given. */
typedef uint64_t (*gma_progress_clock_fn)(void *ctx);
typedef void (*gma_progress_write_fn)(void *ctx, const char *s, size_t n);

typedef struct gma_progress {
    gma_progress_mode mode;
    gma_progress_clock_fn clock;
    void *clock_ctx;
    gma_progress_write_fn write;
    void *write_ctx;
    uint64_t after_ns;  /* nothing is shown before the run is this old (1 s) */
    uint64_t every_ns;  /* at least this between two lines (100 ms, 1 s as lines) */
    unsigned width;     /* the terminal's columns: a line never wraps */
    uint64_t run_t0;    /* when the run started (gma_progress_init) */
    /* the task under way */
    char what[160];
    int active;
    int drawn;          /* a line of this task was shown */
    int counted;        /* ... with its numbers (gma_progress_update) */
    uint64_t t0, last;  /* its start, its last line */
    uint64_t total;     /* bytes of its input, 0 unknown */
    uint64_t done, records;
    size_t shown;       /* columns of the line on the terminal now, 0 none */
} gma_progress;

/* The mode: asked is 1 for --progress, 0 for --no-progress, -1 for neither
 * (then a terminal that is not "dumb" gets the line, anything else none). */
gma_progress_mode gma_progress_choose(int asked, int stderr_is_tty, const char *term);

/* A run starting now; clock and write NULL: the monotonic clock and
 * write(2) to stderr's descriptor (bypassing stdio, whose stderr escapes
 * control characters). */
void gma_progress_init(gma_progress *p, gma_progress_mode mode, gma_progress_clock_fn clock, void *clock_ctx,
                       gma_progress_write_fn write, void *write_ctx);

/* A task starts: what it does ("reading trace.zst"; cut to fit), and the
 * size of its input in bytes (0: unknown or not bytes). Once the run has
 * passed after_ns, its line shows at once. */
void gma_progress_begin(gma_progress *p, const char *what, uint64_t total);
/* How far the task is: done of total bytes, records so far. Looks at the
 * clock; draws when due. Call it every GMA_PROGRESS_EVERY records or so. */
void gma_progress_update(gma_progress *p, uint64_t done, uint64_t records);
/* The task ended: its line is erased (a terminal) or closed by a last line
 * with the totals (--progress, when a line of it was shown). */
void gma_progress_end(gma_progress *p);
/* Erases the line now (before another message on stderr); the next update
 * draws it again. */
void gma_progress_clear(gma_progress *p);

/* One line, without a newline, at most width - 1 columns (0: no limit):
 * "WHAT: 12.5 of 305.3 MiB (4%), 4.1 M records, 24.5 M records/s".
 * total 0: the bytes alone; done and records 0: WHAT alone. Returns the
 * length written (always < cap, NUL-terminated). */
size_t gma_progress_format(char *buf, size_t cap, unsigned width, const char *what, uint64_t done, uint64_t total,
                           uint64_t records, uint64_t elapsed_ns);

/* The default clock and output. */
uint64_t gma_progress_clock_mono(void *ctx);
void gma_progress_write_stderr(void *ctx, const char *s, size_t n);

#endif
