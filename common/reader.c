/*
 * gmt_reader: streaming zstd decompression + record decoding, tolerant of
 * truncation and corruption.
 *
 * A frame whose size its header gives, up to WHOLE_FRAME_MAX, and which is
 * whole in the input (every frame of a complete trace the writer made) is
 * decompressed in one call into the window.  Any other frame -- cut short,
 * damaged, larger, of unknown size -- is streamed: its records are decoded
 * out of the decompressed window as soon as they are complete, so a file
 * cut inside a frame still yields every record before the cut, and a
 * damaged frame every record before the damage (a frame that fails whole
 * is streamed again for that).  Memory is bounded by WHOLE_FRAME_MAX, or
 * for streamed frames by GMT_MAX_PAYLOAD plus one zstd output chunk and
 * the zstd window (capped by ZSTD_d_windowLogMax), never by the file.
 *
 * Frame ends come from the whole-frame call or from ZSTD_decompressStream
 * returning 0.  Decompression stops there until every record of the frame
 * has been handed out; then the codec's state (deltas and, since format
 * 1.2, the frame's tables) is reset, as the writer did at the same point.
 *
 * Format 2.0: a frame's first record is its TIMES record, the time fields
 * of all its records.  The reader copies its payload out of the window
 * (which moves as records are decoded) and gives it to the codec as the
 * time source of the frame; a frame that does not start with it, or whose
 * records leave some of it unused, is corrupt.
 *
 * Every loop iteration either returns, consumes input, produces output, or
 * changes state towards the end; a step that does none of these is an error,
 * so no input can make the reader spin.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <zstd.h>

#include "codec_fast.h"
#include "framepool.h"
#include "gmt_io.h"
#if GMT_HAVE_PEXT
#include <cpuid.h>
#endif

#define OB_INITIAL (64u << 10)
/* A record is at most 1 type byte + 3 length bytes + GMT_MAX_PAYLOAD; room
 * for one more zstd chunk after it keeps the decompressor moving. */
#define OB_MAX ((size_t)GMT_MAX_PAYLOAD + 4u + (128u << 10))
/* Largest zstd window accepted: the writer never asks for more than 2^23. */
#define WINDOW_LOG_MAX 24
/* A frame whose content size is known and at most this is decompressed in
 * one call straight into the window (the writer's default frames are 1 MiB
 * and a record): no copy through zstd's own buffer, no per-block calls.
 * Larger frames, frames of unknown size and frames not yet whole in the
 * input take the streaming path. */
#define WHOLE_FRAME_MAX ((size_t)4 << 20)

struct gmt_reader {
    /* input */
    FILE *f;
    int own_f;
    uint8_t *ibuf;      /* file input buffer (NULL when reading memory) */
    size_t ibuf_cap;
    ZSTD_inBuffer in;
    int eof;            /* the source has no more bytes */
    uint64_t in_total;  /* bytes taken from the source */
    uint64_t consumed;  /* bytes consumed by zstd (compressed offset) */
    int magic_checked;
    /* decompression */
    ZSTD_DCtx *dctx;
    uint8_t *ob;
    size_t ob_cap;
    size_t ob_pos;      /* next undecoded byte */
    size_t ob_len;      /* bytes filled */
    uint64_t stream_off; /* decompressed offset of ob[0] */
    int frame_open;     /* zstd has taken bytes of the current frame */
    int frame_done;     /* zstd finished a frame; drain ob, then reset */
    uint64_t frame_start;
    uint64_t frame_end;
    uint64_t frame_content;
    uint64_t hdr_seen_at; /* consumed + 1 at the last frame header looked at */
    int stalls;
    /* decoding */
    int fast;           /* have_preamble && !finished: gmt_reader_next may decode inline */
    int pext;           /* gmt_reader_next_hot decodes with pext (gmt_cpu_fast_pext) */
    int have_preamble;
    gmt_codec codec;
    int times_first;    /* format 2.0: every frame starts with its TIMES record */
    int need_times;     /* ... and this frame's is still to come */
    uint8_t *tbuf;      /* its payload, copied: the window moves under it */
    size_t tbuf_cap;
    int finished;
    gmt_reader_end end;
    /* frames decompressed ahead on worker threads (gmt_reader_set_threads) */
    gmt_fpool *pool;
    uint64_t pool_base; /* the file offset of the stream's byte 0 */
};

/* Whether pext is there and fast: BMI2 on an Intel CPU, or on AMD from
 * family 19h (Zen 3) on -- Zen 1 and 2 have it in microcode, at hundreds of
 * cycles, far slower than the shifts it replaces.  Asked once per reader
 * (cpuid is a few hundred cycles, a reader opens once per file). */
static int cpu_fast_pext(void)
{
#if GMT_HAVE_PEXT
    unsigned a, b, c, d;
    if (!__get_cpuid(0, &a, &b, &c, &d) || a < 7)
        return 0;
    char vendor[13];
    memcpy(vendor, &b, 4);
    memcpy(vendor + 4, &d, 4);
    memcpy(vendor + 8, &c, 4);
    vendor[12] = 0;
    int intel = strcmp(vendor, "GenuineIntel") == 0;
    int amd = strcmp(vendor, "AuthenticAMD") == 0 || strcmp(vendor, "HygonGenuine") == 0;
    if (!intel && !amd)
        return 0;
    if (amd) {
        if (!__get_cpuid(1, &a, &b, &c, &d))
            return 0;
        unsigned family = (a >> 8) & 0xf;
        if (family == 0xf)
            family += (a >> 20) & 0xff;
        if (family < 0x19)
            return 0;
    }
    __cpuid_count(7, 0, a, b, c, d);
    return (b >> 8) & 1; /* BMI2 */
#else
    return 0;
#endif
}

static gmt_reader *reader_new(void)
{
    gmt_reader *r = calloc(1, sizeof(*r));
    if (!r)
        return NULL;
    r->dctx = ZSTD_createDCtx();
    r->ob_cap = OB_INITIAL;
    r->ob = malloc(r->ob_cap);
    if (!r->dctx || !r->ob ||
        ZSTD_isError(ZSTD_DCtx_setParameter(r->dctx, ZSTD_d_windowLogMax, WINDOW_LOG_MAX))) {
        ZSTD_freeDCtx(r->dctx);
        free(r->ob);
        free(r);
        errno = ENOMEM;
        return NULL;
    }
    gmt_codec_reset(&r->codec);
    r->end.status = GMT_OK;
    r->pext = cpu_fast_pext();
    return r;
}

gmt_reader *gmt_reader_open_mem(const void *data, size_t len)
{
    if (!data && len) {
        errno = EINVAL;
        return NULL;
    }
    gmt_reader *r = reader_new();
    if (!r)
        return NULL;
    r->in.src = data ? data : "";
    r->in.size = len;
    r->in.pos = 0;
    r->in_total = len;
    r->eof = 1;
    return r;
}

gmt_reader *gmt_reader_open_file(FILE *f)
{
    if (!f) {
        errno = EINVAL;
        return NULL;
    }
    gmt_reader *r = reader_new();
    if (!r)
        return NULL;
    r->ibuf_cap = ZSTD_DStreamInSize();
    r->ibuf = malloc(r->ibuf_cap);
    if (!r->ibuf) {
        gmt_reader_close(r);
        errno = ENOMEM;
        return NULL;
    }
    r->f = f;
    r->in.src = r->ibuf;
    r->in.size = 0;
    r->in.pos = 0;
    return r;
}

gmt_reader *gmt_reader_open(const char *path)
{
    if (!path) {
        errno = EINVAL;
        return NULL;
    }
    int is_stdin = strcmp(path, "-") == 0;
    FILE *f = is_stdin ? stdin : fopen(path, "rb");
    if (!f)
        return NULL;
    struct stat st;
    if (fstat(fileno(f), &st) == 0 && S_ISDIR(st.st_mode)) { /* fopen takes one; reads fail */
        if (!is_stdin)
            fclose(f);
        errno = EISDIR;
        return NULL;
    }
    gmt_reader *r = gmt_reader_open_file(f);
    if (!r) {
        int e = errno;
        if (!is_stdin)
            fclose(f);
        errno = e;
        return NULL;
    }
    r->own_f = !is_stdin;
    return r;
}

void gmt_reader_close(gmt_reader *r)
{
    if (!r)
        return;
    gmt_fpool_stop(r->pool);
    if (r->own_f && r->f)
        fclose(r->f);
    ZSTD_freeDCtx(r->dctx);
    free(r->ibuf);
    free(r->ob);
    free(r->tbuf);
    free(r);
}

const gmt_reader_end *gmt_reader_end_info(const gmt_reader *r) { return r ? &r->end : NULL; }

uint64_t gmt_reader_offset(const gmt_reader *r) { return r ? r->consumed : 0; }

/* Ends the stream: sets the status, the message, and returns what
 * gmt_reader_next returns from now on (0 on a clean end, else the status). */
static int finish(gmt_reader *r, gmt_status st, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static int finish(gmt_reader *r, gmt_status st, const char *fmt, ...)
{
    r->finished = 1;
    r->fast = 0;
    r->end.status = st;
    r->end.file_size = r->in_total;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->end.message, sizeof(r->end.message), fmt, ap);
    va_end(ap);
    return st == GMT_OK ? 0 : (int)st;
}

static const char *trailer_words(const gmt_reader *r)
{
    return r->end.has_trailer ? "trailer present" : "no trailer";
}

/* Reads more compressed input when zstd has used up what it had. */
static int refill(gmt_reader *r)
{
    if (r->in.pos < r->in.size || r->eof)
        return 0;
    if (!r->f) {
        r->eof = 1;
        return 0;
    }
    size_t n = fread(r->ibuf, 1, r->ibuf_cap, r->f);
    r->in.pos = 0;
    r->in.size = n;
    r->in_total += n;
    if (n == 0) {
        if (ferror(r->f))
            return -1;
        r->eof = 1;
    }
    return 0;
}

/* Moves the unread input to the front of ibuf and reads more after it,
 * growing ibuf to `want` bytes if needed: for a frame that is not yet whole
 * in the buffer.  0, or -1 on a read error. */
static int gather(gmt_reader *r, size_t want)
{
    /* a file reader's input is ibuf */
    size_t left = r->in.size - r->in.pos;
    if (r->in.pos > 0 && left)
        memmove(r->ibuf, r->ibuf + r->in.pos, left);
    r->in.pos = 0;
    r->in.size = left;
    if (want > r->ibuf_cap) {
        uint8_t *nb = realloc(r->ibuf, want);
        if (nb) { /* else: read what fits; the streaming path needs no more */
            r->ibuf = nb;
            r->ibuf_cap = want;
        }
    }
    r->in.src = r->ibuf;
    while (r->in.size < r->ibuf_cap && !r->eof) {
        size_t n = fread(r->ibuf + r->in.size, 1, r->ibuf_cap - r->in.size, r->f);
        r->in.size += n;
        r->in_total += n;
        if (n == 0) {
            if (ferror(r->f))
                return -1;
            r->eof = 1;
        }
    }
    return 0;
}

/* At a frame start with an empty window: decompresses the frame in one call
 * if it is small enough, its size is in its header and it is whole in the
 * input (read more of a file to make it so).  1 when done (the frame is
 * complete in ob), 0 to leave the frame to the streaming path, which also
 * takes a damaged frame again so that the records before the damage come
 * out as they always did; -1 on a read error. */
static int whole_frame(gmt_reader *r)
{
    size_t avail = r->in.size - r->in.pos;
    unsigned long long content = ZSTD_getFrameContentSize((const uint8_t *)r->in.src + r->in.pos, avail);
    /* unknown, an error or too short to tell (the streaming path says
     * which), a skippable or empty frame, or too large */
    if (content == ZSTD_CONTENTSIZE_UNKNOWN || content == ZSTD_CONTENTSIZE_ERROR || content == 0 ||
        content > WHOLE_FRAME_MAX)
        return 0;
    size_t csize = ZSTD_findFrameCompressedSize((const uint8_t *)r->in.src + r->in.pos, avail);
    if (ZSTD_isError(csize) && r->f && !r->eof) {
        /* most likely cut by the input buffer: a frame's compressed size is
         * at most ZSTD_compressBound of its content */
        size_t want = ZSTD_compressBound((size_t)content) + 64;
        if (gather(r, want) < 0)
            return -1;
        avail = r->in.size - r->in.pos;
        csize = ZSTD_findFrameCompressedSize((const uint8_t *)r->in.src + r->in.pos, avail);
    }
    if (ZSTD_isError(csize) || csize > avail)
        return 0;
    if (content > r->ob_cap) {
        uint8_t *nb = realloc(r->ob, (size_t)content);
        if (!nb)
            return 0;
        r->ob = nb;
        r->ob_cap = (size_t)content;
    }
    size_t n = ZSTD_decompressDCtx(r->dctx, r->ob, (size_t)content, (const uint8_t *)r->in.src + r->in.pos, csize);
    if (ZSTD_isError(n) || n != content) {
        ZSTD_DCtx_reset(r->dctx, ZSTD_reset_session_only);
        return 0;
    }
    r->frame_start = r->consumed;
    r->in.pos += csize;
    r->consumed += csize;
    r->ob_len = n;
    r->frame_content = n;
    r->frame_done = 1;
    r->frame_open = 0;
    r->frame_end = r->consumed;
    r->stalls = 0;
    return 1;
}

/* gmemprof writes every frame with zstd's content checksum (bit 2 of the
 * frame header descriptor, RFC 8878 3.1.1.1.1), so a frame without one was
 * not written so: counted (gmt_reader_end.unchecked_frames), for a warning.
 * Called at a frame start; once per frame. */
static void note_frame_header(gmt_reader *r)
{
    const uint8_t *p = (const uint8_t *)r->in.src + r->in.pos;
    if (r->hdr_seen_at == r->consumed + 1 || r->in.size - r->in.pos < 5)
        return;
    r->hdr_seen_at = r->consumed + 1;
    if (p[0] == 0x28 && p[1] == 0xb5 && p[2] == 0x2f && p[3] == 0xfd && !(p[4] & 0x04))
        r->end.unchecked_frames++;
}

/* Does p[0..n) start like a zstd frame or a zstd skippable frame? */
static int is_zstd_magic_prefix(const uint8_t *p, size_t n)
{
    static const uint8_t zmagic[4] = { 0x28, 0xb5, 0x2f, 0xfd };
    static const uint8_t smagic[4] = { 0x50, 0x2a, 0x4d, 0x18 }; /* 0x184D2A5? little endian */
    if (n > 4)
        n = 4;
    if (memcmp(p, zmagic, n) == 0)
        return 1;
    if (n > 0 && (p[0] & 0xf0) != smagic[0])
        return 0;
    return n <= 1 || memcmp(p + 1, smagic + 1, n - 1) == 0;
}

/* Called once the input ended (no more bytes and zstd has used them all). */
static int end_of_input(gmt_reader *r)
{
    gmt_reader_end *e = &r->end;
    if (r->in_total == 0) {
        e->truncated = 1;
        return finish(r, GMT_E_SHORT, "empty file: no trace data (0 bytes)");
    }
    if (r->frame_open) {
        e->truncated = 1;
        if (!r->have_preamble && e->frames == 0)
            return finish(r, GMT_E_SHORT,
                          "trace cut short: input ended inside frame 1 at byte %llu, before the "
                          "trace preamble; no trailer; 0 records recovered",
                          (unsigned long long)r->in_total);
        return finish(r, GMT_E_SHORT,
                      "trace cut short: input ended inside frame %llu at byte %llu (last complete frame "
                      "ended at byte %llu); %s; %llu records recovered",
                      (unsigned long long)e->frames + 1, (unsigned long long)r->in_total,
                      (unsigned long long)e->good_offset, trailer_words(r), (unsigned long long)e->records);
    }
    if (!r->have_preamble)
        return finish(r, GMT_E_MAGIC, "not a gmemprof trace (a zstd file holding no gmemprof preamble)");
    if (!e->has_trailer)
        return finish(r, GMT_OK,
                      "trace ended without a trailer record (the profiled process did not exit cleanly); "
                      "%llu records in %llu frames, %llu bytes",
                      (unsigned long long)e->records, (unsigned long long)e->frames,
                      (unsigned long long)r->in_total);
    return finish(r, GMT_OK, "complete trace: %llu records in %llu frames, %llu bytes, version %u.%u",
                  (unsigned long long)e->records, (unsigned long long)e->frames, (unsigned long long)r->in_total,
                  e->major, e->minor);
}

static int bad_record(gmt_reader *r, const char *what)
{
    uint8_t type = r->ob_pos < r->ob_len ? r->ob[r->ob_pos] : 0;
    return finish(r, GMT_E_CORRUPT,
                  "corrupt record in frame %llu at decompressed byte %llu (%s, type byte %u); %llu records "
                  "recovered; %s",
                  (unsigned long long)r->end.frames + 1, (unsigned long long)(r->stream_off + r->ob_pos), what,
                  (unsigned)type, (unsigned long long)r->end.records, trailer_words(r));
}

/* Takes the preamble from the front of the stream; 1 when done, 0 when more
 * bytes are needed, <0 when the stream must stop. */
static int take_preamble(gmt_reader *r)
{
    size_t avail = r->ob_len - r->ob_pos;
    if (avail < GMT_PREAMBLE_LEN) {
        if (avail && memcmp(r->ob + r->ob_pos, GMT_MAGIC, avail < GMT_MAGIC_LEN ? avail : GMT_MAGIC_LEN) != 0)
            return finish(r, GMT_E_MAGIC, "not a gmemprof trace (a zstd file whose content does not start "
                                          "with \"GMEMPROF\")");
        return 0;
    }
    uint16_t ma = 0, mi = 0;
    gmt_status st = gmt_preamble_parse(r->ob + r->ob_pos, avail, &ma, &mi);
    r->end.major = ma;
    r->end.minor = mi;
    if (st == GMT_E_MAGIC)
        return finish(r, st, "not a gmemprof trace (a zstd file whose content does not start with \"GMEMPROF\")");
    if (st == GMT_E_VERSION)
        return finish(r, st,
                      "trace format version %u.%u is newer than this reader supports (%u.%u): upgrade "
                      "gmem-analyze to read it",
                      ma, mi, GMT_VERSION_MAJOR, GMT_VERSION_MINOR);
    if (st != GMT_OK)
        return finish(r, GMT_E_CORRUPT, "corrupt trace preamble (format version %u.%u does not exist)", ma, mi);
    r->ob_pos += GMT_PREAMBLE_LEN;
    r->have_preamble = 1;
    r->times_first = ma >= 2;
    r->need_times = r->times_first;
    r->fast = !r->need_times;
    return 1;
}

static __attribute__((noinline)) int reader_next_slow(gmt_reader *r, gmt_record *rec);

/* The common case, kept small so that it costs little per record: a whole
 * record of a hot type waits in the window with GMT_FAST_MARGIN bytes from
 * its start (nearly always: frames are decompressed whole, or in chunks of
 * tens of KiB), and is decoded inline.  Anything else (another type, fewer
 * bytes, the preamble, a frame end, an error, the end) takes the full loop,
 * which decodes the same bytes again: a failed decode leaves the codec state
 * as it was.  (ob_len >= ob_pos always, so the one subtraction also says
 * that a record is there.) */
int gmt_reader_next(gmt_reader *r, gmt_record *rec)
{
    if (r && rec && r->fast && r->ob_len - r->ob_pos >= GMT_FAST_MARGIN) {
        size_t used = gmt_decode_hot_any(&r->codec, r->ob + r->ob_pos, rec);
        /* neither 0 (not a hot record) nor GMT_FAST_BAD */
        if (used - 1 < GMT_FAST_BAD - 1) {
            r->ob_pos += used;
            r->end.records++;
            return 1;
        }
    }
    return reader_next_slow(r, rec);
}

/* A run of hot records decoded in one tight loop: the window's cursor and
 * the delta state stay in locals (registers) for the run and are stored
 * once at its end, and the caller pays one call per run instead of one per
 * record.  The run stops at the first record the fast path of
 * gmt_reader_next would not take (another type, fewer than GMT_FAST_MARGIN
 * bytes left in the window, damage); gmt_reader_next then returns it. */
static inline __attribute__((always_inline)) size_t hot_run(gmt_reader *r, gmt_hot *hot, size_t cap, const int px,
                                                            const int ts)
{
    size_t n = 0;
    gmt_deltas d = r->codec.d;
    const uint8_t *ob = r->ob;
    size_t pos = r->ob_pos, len = r->ob_len;
    /* ts (format 2.0): the time cursor stays in a register for the run too */
    const uint8_t *tp = r->codec.tp, *tend = r->codec.tend;
    while (n < cap && len - pos >= GMT_FAST_MARGIN && (!ts || (size_t)(tend - tp) >= GMT_FAST_TIME_MARGIN)) {
        /* The margins hold for k records in a row without a test each: a
         * record takes at most GMT_FAST_RECORD_MAX bytes of the window and
         * GMT_RECORD_TIME_MAX of the time stream, so record i of the k
         * starts with both margins left.  In a frame of a MiB, k is the
         * rest of the batch until the frame's last few kilobytes. */
        size_t k = (len - pos - GMT_FAST_MARGIN) / GMT_FAST_RECORD_MAX + 1;
        if (ts) {
            size_t kt = ((size_t)(tend - tp) - GMT_FAST_TIME_MARGIN) / GMT_RECORD_TIME_MAX + 1;
            k = kt < k ? kt : k;
        }
        size_t stop = cap - n < k ? cap : n + k;
        for (; n < stop; n++) {
            size_t used = gmt_decode_hot_d(&r->codec, &d, ob + pos, &hot[n].type, &hot[n].u.mem, &hot[n].u.kernel,
                                           &hot[n].u.copy, &hot[n].u.range, px, ts ? &tp : NULL, tend);
            /* neither 0 (not a hot record) nor GMT_FAST_BAD */
            if (used - 1 >= GMT_FAST_BAD - 1)
                goto out;
            pos += used;
        }
    }
out:
    r->codec.d = d;
    if (ts)
        r->codec.tp = tp;
    r->ob_pos = pos;
    r->end.records += n;
    return n;
}

/* The four copies of the loop: portable and with pext (GMT_HAVE_PEXT), for
 * format 1.x (times inline) and 2.0 (times from the TIMES record). */
static __attribute__((noinline)) size_t hot_run_plain(gmt_reader *r, gmt_hot *hot, size_t cap)
{
    return hot_run(r, hot, cap, 0, 0);
}

static __attribute__((noinline)) size_t hot_run_plain_t(gmt_reader *r, gmt_hot *hot, size_t cap)
{
    return hot_run(r, hot, cap, 0, 1);
}

#if GMT_HAVE_PEXT
static __attribute__((noinline)) size_t hot_run_pext(gmt_reader *r, gmt_hot *hot, size_t cap)
{
    return hot_run(r, hot, cap, 1, 0);
}

static __attribute__((noinline)) size_t hot_run_pext_t(gmt_reader *r, gmt_hot *hot, size_t cap)
{
    return hot_run(r, hot, cap, 1, 1);
}
#endif

size_t gmt_reader_next_hot(gmt_reader *r, gmt_hot *hot, size_t cap)
{
    if (!r || !hot || !r->fast)
        return 0;
    int ts = r->codec.tsep;
#if GMT_HAVE_PEXT
    if (r->pext)
        return ts ? hot_run_pext_t(r, hot, cap) : hot_run_pext(r, hot, cap);
#endif
    return ts ? hot_run_plain_t(r, hot, cap) : hot_run_plain(r, hot, cap);
}

int gmt_reader_set_pext(gmt_reader *r, int on)
{
    if (!r)
        return 0;
    r->pext = on && cpu_fast_pext();
    return r->pext;
}

/* What a step of reader_next_slow returns besides a result for the caller
 * (1 for a record, 0 at the end, a negative gmt_status): */
#define RD_AGAIN 2 /* start the loop over */
#define RD_ON 3    /* go on to the next step */

/* The frame's TIMES record, when it is whole in the window. */
static int take_times(gmt_reader *r)
{
    const uint8_t *p = r->ob + r->ob_pos;
    size_t avail = r->ob_len - r->ob_pos;
    uint64_t tl = 0;
    if (p[0] != GMT_WIRE_TIMES)
        return bad_record(r, "frame without its TIMES record");
    int lb = avail > 1 ? gmt_varint_get(p + 1, avail - 1, &tl) : 0;
    if (lb < 0 || tl > GMT_MAX_PAYLOAD)
        return bad_record(r, "malformed TIMES record");
    if (lb <= 0 || 1 + (size_t)lb + tl > avail)
        return RD_ON;
    if (tl > r->tbuf_cap) {
        uint8_t *nb = realloc(r->tbuf, tl);
        if (!nb)
            return finish(r, GMT_E_NOMEM, "out of memory");
        r->tbuf = nb;
        r->tbuf_cap = tl;
    }
    if (tl)
        memcpy(r->tbuf, p + 1 + lb, tl);
    gmt_codec_set_time_source(&r->codec, r->tbuf, (size_t)tl);
    r->ob_pos += 1 + (size_t)lb + tl;
    r->need_times = 0;
    r->fast = 1;
    return RD_AGAIN;
}

/* One record out of the window, when it is whole there. */
static int take_record(gmt_reader *r, gmt_record *rec)
{
    gmt_reader_end *e = &r->end;
    size_t used = 0;
    gmt_status st = gmt_decode(&r->codec, r->ob + r->ob_pos, r->ob_len - r->ob_pos, rec, &used);
    if (st == GMT_OK) {
        r->ob_pos += used;
        e->records++;
        if (rec->type == GMT_REC_TRAILER)
            e->has_trailer = 1;
        return 1;
    }
    if (st == GMT_E_TYPE) {
        r->ob_pos += used;
        e->skipped_unknown++;
        return RD_AGAIN;
    }
    if (st != GMT_E_SHORT) {
        uint8_t t = r->ob[r->ob_pos];
        return bad_record(r, t == 0 ? "zero type byte"
                             : t >= GMT_WIRE_KERNEL_REF && t < GMT_WIRE_TYPE_MAX_
                                 ? "malformed length or field, or an index past this frame's table"
                                 : "malformed length or field");
    }
    return RD_ON;
}

/* A finished frame whose records are all out: check it, start the next. */
static int next_frame(gmt_reader *r)
{
    gmt_reader_end *e = &r->end;
    if (!r->have_preamble && r->frame_content > 0)
        return finish(r, GMT_E_MAGIC, "not a gmemprof trace (its first frame holds only %llu bytes)",
                      (unsigned long long)r->frame_content);
    if (r->ob_pos != r->ob_len)
        return bad_record(r, "the frame ends inside this record");
    /* (an empty frame, which no writer makes, holds nothing to miss) */
    if (r->times_first && ((r->need_times && r->frame_content > 0) || gmt_codec_time_left(&r->codec)))
        return finish(r, GMT_E_CORRUPT,
                      "corrupt frame %llu: %s; %llu records recovered; %s",
                      (unsigned long long)e->frames + 1,
                      r->need_times ? "it holds no TIMES record"
                                    : "its TIMES record holds more times than its records use",
                      (unsigned long long)e->records, trailer_words(r));
    e->frames++;
    e->good_offset = r->frame_end;
    gmt_codec_reset(&r->codec);
    if (r->times_first) {
        r->need_times = 1;
        r->fast = 0;
    }
    r->frame_done = 0;
    r->frame_content = 0;
    return RD_AGAIN;
}

/* Drop what was decoded from the window; grow it only for a large record. */
static int make_room(gmt_reader *r)
{
    if (r->ob_pos > 0) {
        memmove(r->ob, r->ob + r->ob_pos, r->ob_len - r->ob_pos);
        r->stream_off += r->ob_pos;
        r->ob_len -= r->ob_pos;
        r->ob_pos = 0;
    }
    if (r->ob_len == r->ob_cap) {
        if (r->ob_cap >= OB_MAX)
            return bad_record(r, "record larger than any valid record");
        size_t ncap = r->ob_cap * 2 > OB_MAX ? OB_MAX : r->ob_cap * 2;
        uint8_t *nb = realloc(r->ob, ncap);
        if (!nb)
            return finish(r, GMT_E_NOMEM, "out of memory after %llu records", (unsigned long long)r->end.records);
        r->ob = nb;
        r->ob_cap = ncap;
    }
    return RD_ON;
}

/* More compressed input if zstd used all it had; the zstd magic checked. */
static int feed_input(gmt_reader *r)
{
    if (refill(r) < 0)
        return finish(r, GMT_E_IO, "read error at byte %llu: %s; %llu records recovered",
                      (unsigned long long)r->in_total, strerror(errno), (unsigned long long)r->end.records);
    if (!r->magic_checked) {
        size_t avail = r->in.size - r->in.pos;
        if (avail >= 4 || (r->eof && avail > 0)) {
            r->magic_checked = 1;
            if (!is_zstd_magic_prefix((const uint8_t *)r->in.src + r->in.pos, avail))
                return finish(r, GMT_E_MAGIC, "not a gmemprof trace (bad zstd magic at byte 0)");
        }
    }
    if (r->in.pos == r->in.size) {
        if (r->eof)
            return end_of_input(r);
        return RD_AGAIN; /* refill made progress */
    }
    return RD_ON;
}

/* Decompress: a whole frame in one call, or one streaming step. */
static int decompress_step(gmt_reader *r)
{
    gmt_reader_end *e = &r->end;
    if (!r->frame_open)
        note_frame_header(r);
    if (!r->frame_open && r->ob_len == 0) {
        int k = whole_frame(r);
        if (k < 0)
            return finish(r, GMT_E_IO, "read error at byte %llu: %s; %llu records recovered",
                          (unsigned long long)r->in_total, strerror(errno), (unsigned long long)e->records);
        if (k > 0)
            return RD_AGAIN;
    }
    ZSTD_outBuffer out = { r->ob + r->ob_len, r->ob_cap - r->ob_len, 0 };
    size_t before = r->in.pos;
    if (!r->frame_open)
        r->frame_start = r->consumed;
    size_t ret = ZSTD_decompressStream(r->dctx, &out, &r->in);
    r->consumed += r->in.pos - before;
    if (ZSTD_isError(ret)) {
        return finish(r, GMT_E_ZSTD,
                      "corrupt frame %llu at byte %llu: %s (last complete frame ended at byte %llu); %llu "
                      "records recovered; %s",
                      (unsigned long long)e->frames + 1, (unsigned long long)r->frame_start,
                      ZSTD_getErrorName(ret), (unsigned long long)e->good_offset,
                      (unsigned long long)e->records, trailer_words(r));
    }
    if (r->in.pos > before)
        r->frame_open = 1;
    r->ob_len += out.pos;
    r->frame_content += out.pos;
    if (r->frame_content > GMT_MAX_FRAME_CONTENT)
        return finish(r, GMT_E_CORRUPT,
                      "corrupt frame %llu at byte %llu: more than %u bytes of content; %llu records recovered",
                      (unsigned long long)e->frames + 1, (unsigned long long)r->frame_start,
                      GMT_MAX_FRAME_CONTENT, (unsigned long long)e->records);
    if (ret == 0) {
        r->frame_done = 1;
        r->frame_open = 0;
        r->frame_end = r->consumed;
        r->stalls = 0;
    } else if (out.pos == 0 && r->in.pos == before) {
        /* zstd neither took nor gave anything although it had both input
         * and output room: never loop on that. */
        if (++r->stalls > 8)
            return finish(r, GMT_E_ZSTD, "corrupt frame %llu at byte %llu: the decoder stopped making progress",
                          (unsigned long long)e->frames + 1, (unsigned long long)r->frame_start);
    } else {
        r->stalls = 0;
    }
    return RD_AGAIN;
}

int gmt_reader_set_threads(gmt_reader *r, unsigned n)
{
    if (!r)
        return 0;
    if (r->pool)
        return -1;
    if (n < 2 || !r->f || r->in_total || r->finished)
        return 1;
    struct stat st;
    int fd = fileno(r->f);
    if (fd < 0 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
        return 1;
    off_t start = ftello(r->f);
    if (start < 0)
        return 1;
    r->pool = gmt_fpool_start(fd, (uint64_t)start, n - 1, WINDOW_LOG_MAX, WHOLE_FRAME_MAX);
    r->pool_base = (uint64_t)start;
    return r->pool ? (int)n : 1;
}

/* With a pool, at a frame start: the frame from a worker, or the pool is
 * done and the reader reads the file itself from this frame on. */
static int pool_step(gmt_reader *r)
{
    if (!r->pool || r->frame_open || r->ob_len != 0)
        return RD_ON;
    gmt_fpool_frame fr;
    if (!gmt_fpool_take(r->pool, r->pool_base + r->consumed, &r->ob, &r->ob_cap, &fr)) {
        gmt_fpool_stop(r->pool);
        r->pool = NULL;
        /* the file was not read through f: start it where the pool stopped */
        if (fseeko(r->f, (off_t)(r->pool_base + r->consumed), SEEK_SET) != 0)
            return finish(r, GMT_E_IO, "seek error at byte %llu: %s; %llu records recovered",
                          (unsigned long long)r->consumed, strerror(errno), (unsigned long long)r->end.records);
        r->in.pos = r->in.size = 0;
        r->in_total = r->consumed;
        return RD_ON;
    }
    r->magic_checked = 1;
    if (!fr.checked)
        r->end.unchecked_frames++;
    r->frame_start = r->consumed;
    r->consumed += fr.csize;
    r->in_total = r->consumed;
    r->ob_len = fr.len;
    r->frame_content = fr.len;
    r->frame_done = 1;
    r->frame_open = 0;
    r->frame_end = r->consumed;
    r->stalls = 0;
    return RD_AGAIN;
}

static __attribute__((noinline)) int reader_next_slow(gmt_reader *r, gmt_record *rec)
{
    if (!r || !rec)
        return GMT_E_ARG;
    if (r->finished)
        return r->end.status == GMT_OK ? 0 : (int)r->end.status;
    for (;;) {
        int k = RD_ON;
        /* 1. Hand out whatever is complete in the window. */
        if (!r->have_preamble) {
            k = take_preamble(r);
            if (k < 0)
                return k;
            k = k > 0 ? RD_AGAIN : RD_ON;
        } else if (r->need_times && r->ob_pos < r->ob_len) {
            k = take_times(r);
        } else if (r->ob_pos < r->ob_len) {
            k = take_record(r, rec);
        }
        /* 2. A finished frame: all its records are out; start the next one.
         * 3. Make room. 4. More input. 5. Decompress. */
        if (k == RD_ON && r->frame_done)
            k = next_frame(r);
        if (k == RD_ON)
            k = make_room(r);
        if (k == RD_ON)
            k = pool_step(r);
        if (k == RD_ON)
            k = feed_input(r);
        if (k == RD_ON)
            k = decompress_step(r);
        if (k != RD_AGAIN)
            return k;
    }
}
