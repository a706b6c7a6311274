/*
 * Trace I/O shared by the profiler, the analyzer and gmem-synth:
 *   gmt_strtab_*  string interning (writer side): name -> id, ids from 1
 *   gmt_writer_*  encoder + zstd streaming compression to a file descriptor,
 *                 synchronous; the profiler runs it on its own thread
 *   gmt_reader_*  streaming decompression + decode, tolerant of truncation
 *                 and corruption: it never crashes or hangs on any input
 */
#ifndef GMEMPROF_GMT_IO_H
#define GMEMPROF_GMT_IO_H

#include <stdio.h>

#include "gmemprof/trace_format.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- string table ------------------------------------------------------ */

typedef struct gmt_strtab gmt_strtab;

gmt_strtab *gmt_strtab_create(void);
void gmt_strtab_free(gmt_strtab *t);
/* Returns the id of `s` (len bytes); *is_new is set to 1 when the string was
 * not seen before (the caller must then write a STRING record). 0 on OOM. */
uint64_t gmt_strtab_intern(gmt_strtab *t, const char *s, size_t len, int *is_new);
size_t gmt_strtab_count(const gmt_strtab *t);
/* The string of id (1..count): its bytes (not NUL terminated), NULL for
 * any other id. */
const char *gmt_strtab_get(const gmt_strtab *t, uint64_t id, size_t *len);

/* ---- writer ------------------------------------------------------------ */

typedef struct gmt_writer gmt_writer;

typedef struct gmt_writer_opts {
    int level;                 /* zstd level; 0 means the default (3) */
    size_t frame_bytes;        /* end a frame after this much input; 0: 1 MiB */
} gmt_writer_opts;

/* Where a memory writer's compressed bytes go: 0, or -1 to fail the writer
 * (counted as a write error, ENOSPC). */
typedef int (*gmt_sink_fn)(void *ctx, const uint8_t *bytes, size_t n);

/* A writer whose frames go to sink instead of a file, WITHOUT the preamble:
 * its frames are the middle of a stream that another writer begins (the
 * flight recorder keeps them in memory and appends them to a trace with
 * gmt_writer_put_frames).  NULL with errno when out of memory. */
gmt_writer *gmt_writer_open_sink(gmt_sink_fn sink, void *ctx, const gmt_writer_opts *opts);

/* Ends the current frame, then writes n bytes of whole frames made by a sink
 * writer of the same format, counting `records` records and `frames`
 * frames in them. */
gmt_status gmt_writer_put_frames(gmt_writer *w, const uint8_t *bytes, size_t n, uint64_t records,
                                 uint64_t frames);

/* Takes ownership of fd (closed by gmt_writer_close). Writes nothing until
 * the first record. Returns NULL on OOM. */
gmt_writer *gmt_writer_open_fd(int fd, const gmt_writer_opts *opts);
/* Creates the trace file at path, never writing through an existing file or
 * a link: a new file (mode 0666 less the umask) under a temporary name in
 * the same directory, locked (flock) while the writer is open, renamed to
 * path.  A file at path that no open writer holds is replaced; a link at
 * path is replaced, its target untouched; a character device (/dev/null) is
 * written in place; a FIFO, socket or directory is refused; a name that
 * stands for an open descriptor (/dev/stdout, gmt_path_names_fd) is never
 * replaced: a character device behind it is written in place, anything else
 * refused.  The descriptor sits at a high number (half the descriptor limit,
 * at most 1024), out of the way of a program that closes every descriptor
 * and opens files of its own.  When a live
 * writer holds path, gmt_writer_create writes beside it, at path with
 * ".<pid>" before its extension (s.zst -> s.1234.zst), and rewrites path
 * (cap bytes) to the name it took; gmt_writer_open fails with EBUSY.
 * NULL and errno on failure; msg (may be NULL) gets one line saying what
 * went wrong, or on success a line when another name was taken, else "". */
gmt_writer *gmt_writer_create(char *path, size_t cap, const gmt_writer_opts *opts, char *msg, size_t msgcap);
gmt_writer *gmt_writer_open(const char *path, const gmt_writer_opts *opts);
/* As gmt_writer_create, but the file stays under its temporary name (what
 * is written goes there) until gmt_writer_claim puts it at path by the same
 * rules, rewriting path (cap bytes) to the name it took; closing a writer
 * never claimed removes the file.  A character device at path (or behind a
 * descriptor's name) is opened in place at once: the writer is claimed.
 * gmt_writer_claim: 0, or -1 with errno and msg (the writer stays
 * unclaimed); on success msg says when another name was taken, else "". */
gmt_writer *gmt_writer_create_unclaimed(const char *path, const gmt_writer_opts *opts, char *msg, size_t msgcap);
int gmt_writer_claim(gmt_writer *w, char *path, size_t cap, char *msg, size_t msgcap);
int gmt_writer_claimed(const gmt_writer *w);

/* Appends one record (the preamble goes first automatically). A frame ends
 * by itself once frame_bytes of input have gone in. Returns GMT_OK or the
 * first error (GMT_E_IO with errno saved, GMT_E_ZSTD); after an error every
 * later call fails fast and the record counts as dropped. */
gmt_status gmt_writer_put(gmt_writer *w, const gmt_record *r);
/* Convenience: interns s and writes a STRING record when it is new. */
gmt_status gmt_writer_intern(gmt_writer *w, gmt_strtab *t, const char *s, size_t len, uint64_t *id);
/* Ends the current frame (if it holds anything) and writes it out. */
gmt_status gmt_writer_end_frame(gmt_writer *w);
/* Ends the frame, closes the fd, frees. Returns the first error seen. */
gmt_status gmt_writer_close(gmt_writer *w);

uint64_t gmt_writer_records(const gmt_writer *w);   /* records accepted */
uint64_t gmt_writer_dropped(const gmt_writer *w);   /* records refused after an error */
uint64_t gmt_writer_bytes_out(const gmt_writer *w); /* compressed bytes written */
uint64_t gmt_writer_bytes_in(const gmt_writer *w);  /* encoded bytes, before compression */
uint64_t gmt_writer_frames(const gmt_writer *w);
int gmt_writer_errno(const gmt_writer *w);          /* errno of the first I/O error */
/* The descriptor the writer opened no longer names its file (the program
 * closed it, perhaps opening another file on the number): nothing more is
 * written to it, nor is it closed; the error is GMT_E_IO with EBADF. */
int gmt_writer_fd_lost(const gmt_writer *w);
int gmt_writer_fd(const gmt_writer *w);             /* -1 for a memory writer */

/* ---- reader ------------------------------------------------------------ */

typedef struct gmt_reader gmt_reader;

/* How the stream ended (valid once gmt_reader_next returned <= 0). */
typedef struct gmt_reader_end {
    gmt_status status;      /* GMT_OK: clean end of input */
    int truncated;          /* input ended inside a frame or a record */
    int has_trailer;        /* a TRAILER record was read */
    uint64_t records;       /* records returned */
    uint64_t frames;        /* complete frames decoded */
    uint64_t good_offset;   /* compressed offset after the last good frame */
    uint64_t file_size;     /* compressed bytes read in total */
    uint64_t skipped_unknown; /* records of unknown types skipped */
    uint16_t major, minor;  /* version seen (0 before the preamble) */
    uint64_t unchecked_frames; /* frames without a zstd checksum (gmemprof writes one in each) */
    char message[256];      /* human-readable: what happened and where */
} gmt_reader_end;

/* Opens a trace. NULL with errno on open failure. "-" reads stdin. */
gmt_reader *gmt_reader_open(const char *path);
/* Reads from a FILE the caller owns (not closed by the reader). */
gmt_reader *gmt_reader_open_file(FILE *f);
/* Reads from memory (tests, fuzzing); the buffer must outlive the reader. */
gmt_reader *gmt_reader_open_mem(const void *data, size_t len);
void gmt_reader_close(gmt_reader *r);

/* Next record: 1 with *rec filled (gmt_bytes valid until the next call),
 * 0 at the end of input, <0 (gmt_status) on an error that stops the stream.
 * After 0 or <0, gmt_reader_end_info() says what happened. A frame whole in
 * the input is decompressed in one call; a cut or damaged one is streamed,
 * its records returned as soon as they are decompressed (a cut inside a
 * frame still yields the complete records before the cut); memory is
 * bounded by a whole frame of at most 4 MiB or, streaming, by the largest
 * record (GMT_MAX_PAYLOAD), never by the file. */
int gmt_reader_next(gmt_reader *r, gmt_record *rec);
const gmt_reader_end *gmt_reader_end_info(const gmt_reader *r);
/* Compressed bytes of the input decoded so far (how far a reader is into a
 * file, for progress): cheap, callable at any time. */
uint64_t gmt_reader_offset(const gmt_reader *r);
/* The records that make up nearly every trace, without gmt_record's other
 * members (a TAG's device array makes a gmt_record 2.6 KB): a batch of
 * them stays in the L1 cache.  A _REF record comes as its plain type. */
typedef struct gmt_hot {
    gmt_type type;          /* GMT_REC_ALLOC, _FREE, _KERNEL, _MEMCPY, _MEMSET, _RANGE_BEGIN or _RANGE_END */
    union {
        gmt_mem mem;        /* ALLOC, FREE */
        gmt_kernel kernel;
        gmt_copy copy;      /* MEMCPY, MEMSET */
        gmt_range range;    /* RANGE_BEGIN, RANGE_END */
    } u;
} gmt_hot;

/* A run of up to cap of the next records, when they are of those types and
 * whole in the decompressed window (nearly always): returns how many went
 * into hot[0..), 0 when the next record is of another type, is not whole
 * in the window yet, is damaged, or the stream has not started or has
 * ended.  Those records are the ones gmt_reader_next would have returned,
 * in the same order, counted the same; the record that stopped the run is
 * the next that gmt_reader_next returns.  So a loop of "take a run, then
 * one record from gmt_reader_next" sees exactly the records, ends and
 * errors of a gmt_reader_next loop, with one call per run instead of one
 * per record, and the decoder's state kept in registers over the run. */
size_t gmt_reader_next_hot(gmt_reader *r, gmt_hot *hot, size_t cap);
/* gmt_reader_next_hot packs long varints with BMI2's pext where the CPU
 * runs it fast (Intel; AMD from Zen 3), else with shifts and masks; the
 * records are the same.  For tests: on = 0 forces the portable decoder,
 * on = 1 asks for pext again; returns whether pext is used now. */
int gmt_reader_set_pext(gmt_reader *r, int on);
/* Decompresses frames on n - 1 worker threads ahead of the reader (the
 * reader's thread decodes them in order): the records, ends and errors are
 * those of one thread.  Only for a regular file not yet read; call before
 * the first record.  Returns the threads in use (1: the reader alone, n
 * below 2, not a regular file, or no thread could start), -1 when called
 * twice. */
int gmt_reader_set_threads(gmt_reader *r, unsigned n);


#ifdef __cplusplus
}
#endif
#endif
