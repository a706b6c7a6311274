/*
 * Several per-rank traces in one analysis (torchrun writes one trace per
 * rank). Each trace is replayed on its own, one after the other; what is
 * kept of it is small: its summary numbers and its --by table (one row per
 * distinct name), so memory stays bounded by names and by the live set of
 * the trace being replayed, never by the number of traces' records.
 *
 * Output: --by rank (one row per rank, imbalance against the mean peak), or
 * any other --by table merged across ranks (rows matched by the key the
 * table uses, bytes and counts summed, peaks the maximum, a `ranks` column),
 * or with --per-rank the rows of every rank with a rank column.
 */
#ifndef GMA_RANKS_H
#define GMA_RANKS_H

#include "print.h"

#define GMA_RANKS_MAX_WARN 8

typedef struct gma_ranks {
    gma_opts opt;
    int by_rank;            /* --by rank */
    int per_rank;           /* --per-rank */
    gma_rankrun *runs;
    size_t n;
    char warn[GMA_RANKS_MAX_WARN][GMA_WARN_LEN]; /* about the set: ranks missing or repeated, runs mixed */
    size_t nwarn;
    gma_col *cols;          /* columns of the output table (owned) */
    gma_table out;
} gma_ranks;

/* paths[0..n-1] must outlive s. Returns 0, -1 on OOM. */
int gma_ranks_init(gma_ranks *s, const gma_opts *opt, int by_rank, int per_rank, char *const *paths, size_t n);
void gma_ranks_free(gma_ranks *s);

/* Reads the header of trace i (only its first record). Returns 0, or -1
 * when the file cannot be opened (message in msg). A trace whose first
 * record is not a header is left for the replay to judge. */
int gma_ranks_peek(gma_ranks *s, size_t i, char *msg, size_t msgcap);
/* After every peek: the rank each trace is shown as, and the warnings about
 * the set (missing or repeated ranks: position order instead; different
 * world sizes: traces of different runs). */
void gma_ranks_identify(gma_ranks *s);
/* Index of the trace shown as rank id, or -1. */
long gma_ranks_find(const gma_ranks *s, int64_t id);
/* The earliest header start time: the common time origin of the exports. */
int gma_ranks_origin(const gma_ranks *s, uint64_t *origin);

/* Keeps what the report needs of a finished replay of trace i. The replay
 * may be freed afterwards. Returns 0, -1 on OOM. */
int gma_ranks_take(gma_ranks *s, size_t i, gma_replay *r);

/* Prints the report in s->opt.format. 0, or -1 when writing failed. */
int gma_ranks_print(FILE *f, const gma_printer *p, gma_ranks *s);

/* Builds s->out: the --by rank, merged or per-rank table (tests use it). */
int gma_ranks_build(gma_ranks *s);

#endif
