/*
 * gmt_fpool (framepool.h): whole zstd frames decompressed ahead of the
 * reader on worker threads.  A worker claims the next frame under the
 * pool's lock (reads it from the file into its slot), decompresses it
 * outside the lock with its own context, and marks the slot done; the
 * reader takes slots in claim order, which is file order.  The ring of
 * depth slots bounds how far the workers run ahead.
 *
 * The reader never waits for a worker: a frame still being decompressed
 * (its worker may be off the CPU on a loaded machine) it decompresses
 * itself from a copy, leaving the worker's result to be dropped, and a
 * frame no worker has claimed yet it claims and decompresses itself.  So
 * more threads can cost some duplicated work, never a stall.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zstd.h>

#include "framepool.h"

#define FP_MAX_WORKERS 64u
/* A zstd frame header's most bytes (RFC 8878: 4 magic + 14) */
#define FP_HEADER_MAX 18u
/* How much of the file one read takes: enough for several frames, so that
 * the lock is taken for a read once per several frames. */
#define FP_READ_CHUNK ((size_t)8 << 20)

/* STOLEN: the reader took the frame while its worker decompressed it; the
 * worker frees the slot when it is done */
enum { SLOT_FREE, SLOT_BUSY, SLOT_DONE, SLOT_FAILED, SLOT_STOLEN };

typedef struct fp_slot {
    int state;
    int checked;
    uint64_t off, csize;
    size_t len;
    uint8_t *cb, *ob; /* compressed input, decompressed output */
    size_t ccap, ocap;
} fp_slot;

struct gmt_fpool {
    pthread_mutex_t mu;
    pthread_cond_t cv_work; /* a slot freed, or quit (the reader never waits) */
    int fd;
    int wlog;
    size_t max_content;
    fp_slot *s;
    unsigned depth;
    uint64_t next_seq, take_seq; /* next frame to claim, next to hand out */
    uint64_t next_off;           /* the file offset of the next frame to claim */
    int ended;                   /* no frame is claimed any more */
    int quit;
    uint8_t *rb; /* read-ahead: rb[0..rb_len) is the file at rb_off */
    size_t rb_cap, rb_len;
    uint64_t rb_off;
    int rb_eof;
    ZSTD_DCtx *dctx; /* the reader's, for the frames it decompresses itself */
    fp_slot own;     /* ... and their compressed bytes */
    pthread_t th[FP_MAX_WORKERS];
    unsigned nth; /* threads started (joined by stop) */
};

/* Makes rb hold n bytes from next_off on where the file has them (fewer at
 * its end). 0, or -1 on a read error or no memory. Under the lock. */
static int fp_ensure(gmt_fpool *p, size_t n)
{
    size_t at = (size_t)(p->next_off - p->rb_off);
    if (p->rb_len >= at && p->rb_len - at >= n)
        return 0;
    size_t left = p->rb_len > at ? p->rb_len - at : 0;
    if (left && at)
        memmove(p->rb, p->rb + at, left);
    p->rb_off = p->next_off;
    p->rb_len = left;
    size_t want = n > FP_READ_CHUNK ? n : FP_READ_CHUNK;
    if (want > p->rb_cap) {
        uint8_t *nb = realloc(p->rb, want);
        if (!nb)
            return -1;
        p->rb = nb;
        p->rb_cap = want;
    }
    while (p->rb_len < n && !p->rb_eof) {
        ssize_t k = pread(p->fd, p->rb + p->rb_len, p->rb_cap - p->rb_len, (off_t)(p->rb_off + p->rb_len));
        if (k < 0 && errno == EINTR)
            continue;
        if (k < 0)
            return -1;
        if (k == 0)
            p->rb_eof = 1;
        p->rb_len += (size_t)k;
    }
    return 0;
}

/* Claims the frame at next_off into slot s: 0, or -1 when it is not one the
 * pool takes (the pool ends there). Under the lock. */
static int fp_claim(gmt_fpool *p, fp_slot *s)
{
    if (fp_ensure(p, FP_HEADER_MAX) < 0)
        return -1;
    const uint8_t *src = p->rb + (p->next_off - p->rb_off);
    size_t avail = p->rb_len - (size_t)(p->next_off - p->rb_off);
    if (avail < 5 || memcmp(src, "\x28\xb5\x2f\xfd", 4) != 0)
        return -1;
    unsigned long long content = ZSTD_getFrameContentSize(src, avail);
    if (content == ZSTD_CONTENTSIZE_UNKNOWN || content == ZSTD_CONTENTSIZE_ERROR || content == 0 ||
        content > p->max_content)
        return -1;
    size_t csize = ZSTD_findFrameCompressedSize(src, avail);
    if (ZSTD_isError(csize) || csize > avail) {
        if (fp_ensure(p, ZSTD_compressBound((size_t)content) + 64) < 0)
            return -1;
        src = p->rb + (p->next_off - p->rb_off);
        avail = p->rb_len - (size_t)(p->next_off - p->rb_off);
        csize = ZSTD_findFrameCompressedSize(src, avail);
        if (ZSTD_isError(csize) || csize > avail)
            return -1;
    }
    if (csize > s->ccap) {
        uint8_t *nb = realloc(s->cb, csize);
        if (!nb)
            return -1;
        s->cb = nb;
        s->ccap = csize;
    }
    memcpy(s->cb, src, csize);
    s->checked = (src[4] & 0x04) != 0;
    s->off = p->next_off;
    s->csize = csize;
    s->len = (size_t)content;
    s->state = SLOT_BUSY;
    p->next_off += csize;
    return 0;
}

static void *fp_worker(void *arg)
{
    gmt_fpool *p = arg;
    ZSTD_DCtx *dctx = ZSTD_createDCtx();
    if (dctx && ZSTD_isError(ZSTD_DCtx_setParameter(dctx, ZSTD_d_windowLogMax, p->wlog))) {
        ZSTD_freeDCtx(dctx);
        dctx = NULL;
    }
    if (!dctx) /* the other workers go on; with none, the reader does it all */
        return NULL;
    pthread_mutex_lock(&p->mu);
    for (;;) {
        while (!p->quit && (p->ended || p->next_seq - p->take_seq >= p->depth ||
                            p->s[p->next_seq % p->depth].state != SLOT_FREE))
            pthread_cond_wait(&p->cv_work, &p->mu);
        if (p->quit)
            break;
        fp_slot *s = &p->s[p->next_seq % p->depth];
        if (fp_claim(p, s) < 0) {
            p->ended = 1;
            continue;
        }
        p->next_seq++;
        pthread_mutex_unlock(&p->mu);
        int ok = 1;
        if (s->len > s->ocap) {
            uint8_t *nb = realloc(s->ob, s->len);
            if (nb) {
                s->ob = nb;
                s->ocap = s->len;
            } else {
                ok = 0;
            }
        }
        if (ok) {
            size_t n = ZSTD_decompressDCtx(dctx, s->ob, s->len, s->cb, (size_t)s->csize);
            ok = !ZSTD_isError(n) && n == s->len;
            if (!ok)
                ZSTD_DCtx_reset(dctx, ZSTD_reset_session_only);
        }
        pthread_mutex_lock(&p->mu);
        if (s->state == SLOT_STOLEN) {
            s->state = SLOT_FREE;
            pthread_cond_broadcast(&p->cv_work);
            continue;
        }
        s->state = ok ? SLOT_DONE : SLOT_FAILED;
        if (!ok)
            p->ended = 1;
    }
    pthread_mutex_unlock(&p->mu);
    ZSTD_freeDCtx(dctx);
    return NULL;
}

gmt_fpool *gmt_fpool_start(int fd, uint64_t start, unsigned workers, int window_log_max, size_t max_content)
{
    if (workers < 1)
        return NULL;
    if (workers > FP_MAX_WORKERS)
        workers = FP_MAX_WORKERS;
    gmt_fpool *p = calloc(1, sizeof(*p));
    if (!p)
        return NULL;
    /* two frames a worker, and the one being decoded: beyond 16 slots the
     * decoding thread, not decompression, sets the pace */
    p->depth = 2 * workers + 2 < 16 ? 2 * workers + 2 : 16;
    p->s = calloc(p->depth, sizeof(*p->s));
    if (!p->s || pthread_mutex_init(&p->mu, NULL) != 0) {
        free(p->s);
        free(p);
        return NULL;
    }
    pthread_cond_init(&p->cv_work, NULL);
    p->dctx = ZSTD_createDCtx();
    if (!p->dctx || ZSTD_isError(ZSTD_DCtx_setParameter(p->dctx, ZSTD_d_windowLogMax, window_log_max))) {
        ZSTD_freeDCtx(p->dctx);
        pthread_cond_destroy(&p->cv_work);
        pthread_mutex_destroy(&p->mu);
        free(p->s);
        free(p);
        return NULL;
    }
    p->fd = fd;
    p->wlog = window_log_max;
    p->max_content = max_content;
    p->next_off = p->rb_off = start;
    pthread_mutex_lock(&p->mu);
    for (unsigned i = 0; i < workers; i++) {
        if (pthread_create(&p->th[p->nth], NULL, fp_worker, p) != 0)
            break;
        p->nth++;
    }
    unsigned started = p->nth;
    pthread_mutex_unlock(&p->mu);
    if (!started) {
        gmt_fpool_stop(p);
        return NULL;
    }
    return p;
}

/* Decompresses the reader's own copy (p->own) into *buf; 1, or 0 when
 * zstd fails (the reader then reads the frame itself). No lock held. */
static int own_frame(gmt_fpool *p, uint8_t **buf, size_t *cap, gmt_fpool_frame *fr)
{
    fp_slot *s = &p->own;
    if (s->len > *cap) {
        uint8_t *nb = realloc(*buf, s->len);
        if (!nb)
            return 0;
        *buf = nb;
        *cap = s->len;
    }
    size_t n = ZSTD_decompressDCtx(p->dctx, *buf, s->len, s->cb, (size_t)s->csize);
    if (ZSTD_isError(n) || n != s->len) {
        ZSTD_DCtx_reset(p->dctx, ZSTD_reset_session_only);
        return 0;
    }
    fr->csize = s->csize;
    fr->len = s->len;
    fr->checked = s->checked;
    return 1;
}

int gmt_fpool_take(gmt_fpool *p, uint64_t off, uint8_t **buf, size_t *cap, gmt_fpool_frame *fr)
{
    if (!p)
        return 0;
    pthread_mutex_lock(&p->mu);
    if (p->take_seq < p->next_seq) {
        fp_slot *s = &p->s[p->take_seq % p->depth];
        if (s->off != off || s->state == SLOT_FAILED) {
            p->ended = 1;
            pthread_mutex_unlock(&p->mu);
            return 0;
        }
        if (s->state == SLOT_DONE) {
            uint8_t *ob = s->ob;
            size_t ocap = s->ocap;
            s->ob = *buf;
            s->ocap = *cap;
            *buf = ob;
            *cap = ocap;
            fr->csize = s->csize;
            fr->len = s->len;
            fr->checked = s->checked;
            s->state = SLOT_FREE;
            p->take_seq++;
            pthread_cond_signal(&p->cv_work);
            pthread_mutex_unlock(&p->mu);
            return 1;
        }
        /* BUSY: its worker is at it; take a copy and do it here */
        fp_slot *o = &p->own;
        if (s->csize > o->ccap) {
            uint8_t *nb = realloc(o->cb, (size_t)s->csize);
            if (!nb) {
                p->ended = 1;
                pthread_mutex_unlock(&p->mu);
                return 0;
            }
            o->cb = nb;
            o->ccap = (size_t)s->csize;
        }
        memcpy(o->cb, s->cb, (size_t)s->csize);
        o->csize = s->csize;
        o->len = s->len;
        o->checked = s->checked;
        o->off = s->off;
        s->state = SLOT_STOLEN;
        p->take_seq++;
    } else if (p->ended || p->next_off != off || fp_claim(p, &p->own) < 0) {
        /* no worker has it yet and it is not one the pool takes */
        p->ended = 1;
        pthread_mutex_unlock(&p->mu);
        return 0;
    }
    /* (else: claimed here, outside the ring) */
    pthread_mutex_unlock(&p->mu);
    if (own_frame(p, buf, cap, fr))
        return 1;
    pthread_mutex_lock(&p->mu);
    p->ended = 1;
    pthread_mutex_unlock(&p->mu);
    return 0;
}

void gmt_fpool_stop(gmt_fpool *p)
{
    if (!p)
        return;
    pthread_mutex_lock(&p->mu);
    p->quit = 1;
    unsigned n = p->nth;
    pthread_cond_broadcast(&p->cv_work);
    pthread_mutex_unlock(&p->mu);
    for (unsigned i = 0; i < n; i++)
        pthread_join(p->th[i], NULL);
    for (unsigned i = 0; i < p->depth; i++) {
        free(p->s[i].cb);
        free(p->s[i].ob);
    }
    pthread_cond_destroy(&p->cv_work);
    pthread_mutex_destroy(&p->mu);
    ZSTD_freeDCtx(p->dctx);
    free(p->own.cb);
    free(p->s);
    free(p->rb);
    free(p);
}
