/*
 * Fixed-size records kept in an unnamed temporary file, so that a view
 * that needs every allocation of a trace holds only a window of them in
 * memory (--insights).
 *
 * gma_spill: records numbered in the order they are pushed. The newest
 * GMA_SPILL_WINDOW-ish of them stay in memory, where they are cheap to
 * change; older ones are in the file, and a change to one of those is
 * read, changed and written back (gma_spill_get, gma_spill_put). Once
 * sealed the file is mapped read-only: gma_spill_at is a pointer into the
 * map, and gma_spill_trim drops the pages read so far from the process's
 * resident set (the kernel's page cache keeps them), which a pass over
 * the records calls every so often to stay bounded.
 *
 * gma_xsort: an external merge sort. Elements are sorted in memory in runs
 * of a fixed count, each full run written to a temporary file; reading
 * back merges the runs. Equal elements keep the order they were added in,
 * as gma_msort keeps it.
 */
#ifndef GMA_SPILL_H
#define GMA_SPILL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

typedef struct gma_spill {
    size_t size;            /* bytes per record */
    size_t win;             /* records the window holds (a power of two) */
    unsigned char *w;       /* the window, a ring: record i at i % win */
    unsigned char *scratch; /* one record read from the file */
    uint64_t n;             /* records pushed */
    uint64_t flushed;       /* records [0, flushed) are in the file */
    FILE *f;
    unsigned char *map;     /* sealed: the file, mapped */
    size_t map_len;
    int sealed, err;
} gma_spill;

/* window: records kept in memory (rounded up to a power of two, at least 2).
 * 0, or -1 when out of memory or no temporary file could be made. */
int gma_spill_open(gma_spill *s, size_t size, size_t window);
/* A new record (zeroed) numbered s->n - 1, or NULL on an error (s->err). */
void *gma_spill_push(gma_spill *s);
/* Record i to change, then gma_spill_put(s, i) before any other call. NULL
 * on an error. */
void *gma_spill_get(gma_spill *s, uint64_t i);
int gma_spill_put(gma_spill *s, uint64_t i);
/* Writes what the window holds and maps the file; later calls do nothing.
 * 0, or -1 on an error (the file could not be written or mapped). */
int gma_spill_seal(gma_spill *s);
/* Sealed: record i. */
static inline const void *gma_spill_at(const gma_spill *s, uint64_t i) { return s->map + i * s->size; }
/* Sealed: drops the mapped pages from the resident set. */
void gma_spill_trim(const gma_spill *s);
void gma_spill_close(gma_spill *s);

typedef int (*gma_xsort_cmp)(const void *a, const void *b, void *ctx);

typedef struct gma_xsort_run {
    uint64_t off, n, next;  /* in the file: first record, count, next to read */
    unsigned char *buf;     /* records read ahead */
    size_t have, at;
} gma_xsort_run;

typedef struct gma_xsort {
    size_t size, run_cap;
    gma_xsort_cmp cmp;
    void *ctx;
    unsigned char *buf;     /* the run being filled */
    size_t n, cap;
    FILE *f;                /* full runs; NULL until the first */
    uint64_t written;
    gma_xsort_run *runs;
    size_t nruns, runs_cap;
    size_t *heap;           /* merging: runs by their next record */
    size_t nheap;
    size_t mem_at;          /* one run only: the next record in buf */
    int merging, err;
} gma_xsort;

/* run: elements sorted in memory at once (the memory is twice that). */
int gma_xsort_open(gma_xsort *x, size_t size, size_t run, gma_xsort_cmp cmp, void *ctx);
int gma_xsort_add(gma_xsort *x, const void *e);
/* After the last add: the elements in order, one a call (NULL at the end or
 * on an error: x->err). */
int gma_xsort_begin(gma_xsort *x);
const void *gma_xsort_next(gma_xsort *x);
void gma_xsort_close(gma_xsort *x);

/*
 * gma_big: arrays that may hold a value per allocation of a trace (the
 * timeline's bands and their columns). Up to GMA_BIG_MIN bytes they are
 * malloc's; larger ones are a shared map of an unnamed temporary file, whose
 * pages the kernel's page cache holds, not the process: gma_big_tick, called
 * once per element in the loops over them, drops every such map from the
 * resident set each GMA_BIG_TICK calls, so that a loop holds at most that
 * many elements' pages (a loop that jumps about, that many pages). Reads
 * after a drop fault the pages back in from the cache. One thread only.
 */
#define GMA_BIG_MIN ((size_t)1 << 20)
#define GMA_BIG_TICK 16384u
#define GMA_BIG_SORT_BYTES ((size_t)16 << 20) /* gma_xsort runs of the timeline's big arrays */

/* Elements of size bytes a gma_xsort run of the big arrays holds:
 * GMA_BIG_SORT_BYTES' worth. In the tests GMEM_ANALYZE_TEST_SPILL_RUN=N
 * makes it N, and maps every big array however small. */
size_t gma_big_run(size_t size);
/* n bytes, zeroed; NULL on an error. */
void *gma_big_alloc(size_t n);
/* p (NULL, or from gma_big_alloc/realloc, of old bytes) grown or shrunk to
 * n bytes, the new part zeroed; NULL on an error (p is kept). */
void *gma_big_realloc(void *p, size_t old, size_t n);
void gma_big_free(void *p);
void gma_big_tick(void);
/* Drops every map from the resident set now. */
void gma_big_trim(void);

#endif
