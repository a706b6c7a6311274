/*
 * gmt_fpool: decompresses the whole zstd frames of a trace file on worker
 * threads, ahead of the reader, in file order.  A trace is a sequence of
 * independent frames (trace_format.h), so any frame decompresses alone;
 * decoding the records stays with the reader (the codec's state runs
 * through a frame), which takes the frames back in order.
 *
 * The pool takes only what the reader's one-call path would take (a frame
 * whose content size is in its header, 1..max_content bytes, whole in the
 * file, that zstd decompresses without error) and stops at the first frame
 * it would not: the reader reads that one, and everything after it, itself,
 * so a damaged or cut trace ends exactly as without the pool.  Memory is
 * bounded by the ring: depth slots of one frame each.
 */
#ifndef GMT_FRAMEPOOL_H
#define GMT_FRAMEPOOL_H

#include <stddef.h>
#include <stdint.h>

typedef struct gmt_fpool gmt_fpool;

/* A decompressed frame handed to the reader. */
typedef struct gmt_fpool_frame {
    uint64_t csize;  /* its compressed bytes in the file */
    size_t len;      /* decompressed bytes (in the buffer swapped in) */
    int checked;     /* its header has a content checksum */
} gmt_fpool_frame;

/* Starts `workers` threads (1..64) reading fd (not closed by the pool) from
 * offset start. NULL when a thread or memory could not be had: the caller
 * reads alone, as it would have. */
gmt_fpool *gmt_fpool_start(int fd, uint64_t start, unsigned workers, int window_log_max, size_t max_content);
/* The frame that starts at file offset off: 1 with *buf and *cap swapped for
 * the frame's buffer (the old buffer goes to the pool for reuse), or the
 * frame decompressed into *buf (grown as needed) when no worker had it
 * ready, and *fr filled; never waits for a worker. 0 when the pool has no
 * such frame (it stopped before it, or the offset is not the next frame's):
 * the pool is then done for good and the caller reads from off on itself. */
int gmt_fpool_take(gmt_fpool *p, uint64_t off, uint8_t **buf, size_t *cap, gmt_fpool_frame *fr);
/* Stops the threads and frees the pool (NULL: nothing). */
void gmt_fpool_stop(gmt_fpool *p);

#endif
