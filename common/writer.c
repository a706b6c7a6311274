/*
 * gmt_writer: encodes records into a frame buffer and compresses each frame
 * whole with ZSTD_compressStream2(ZSTD_e_end) once it holds frame_bytes of
 * input (or on gmt_writer_end_frame).  Compressing a frame in one call lets
 * zstd know its size (smaller window, content size in the frame header) and
 * makes a record straddling two frames impossible by construction.  Every
 * frame carries a checksum.  The codec state (the deltas and the frame's
 * kernel-shape and allocation-context tables of format 1.2) is reset at each
 * frame start, so every frame decodes on its own given the strings before it.
 * Format 2.0: the encoder sends the records' time fields to a second buffer,
 * which goes into the frame first, as its TIMES record; a frame also ends
 * when that buffer is nearly at the TIMES record's limit (GMT_MAX_PAYLOAD).
 *
 * Memory: one frame buffer (frame_bytes + the largest possible record), the
 * time buffer, a buffer to put the frame together in, and one zstd output
 * buffer, allocated at open.  Nothing is allocated per record.
 * The first error is sticky: later puts fail fast and count as dropped.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <zstd.h>

#include "gmt_io.h"
#include "gmt_names.h"

#define DEFAULT_LEVEL 3
#define DEFAULT_FRAME_BYTES (1u << 20)
/* Frames stay far below what a reader accepts (GMT_MAX_FRAME_CONTENT). */
#define MAX_FRAME_BYTES (32u << 20)
/* Largest encoding of any record: a HEADER with four strings at the limit. */
#define MAX_RECORD_BYTES (4u + 10u * 14u + 4u * GMT_MAX_STRING)
/* The time stream of one frame: a TIMES record's payload, so at most
 * GMT_MAX_PAYLOAD.  A frame ends once a record leaves less room than the next
 * one's times might need (GMT_RECORD_TIME_MAX). */
#define TIMES_CAP ((size_t)GMT_MAX_PAYLOAD)

struct gmt_writer {
    int fd;
    gmt_sink_fn sink;   /* a memory writer: frames go here, not to fd */
    void *sink_ctx;
    int level;
    size_t frame_bytes;
    ZSTD_CCtx *cctx;
    uint8_t *ib;        /* the current frame's encoded bytes */
    size_t ib_len;
    size_t ib_cap;
    uint8_t *ob;        /* compressed output, written to fd as it fills */
    size_t ob_cap;
    gmt_codec codec;
    uint8_t *tb;        /* the frame's time stream (format 2.0), its TIMES record */
    size_t tb_cap;
    uint8_t *sb;        /* the frame put together: [preamble] TIMES, then ib's records */
    int started;        /* preamble written */
    gmt_status err;     /* first error, sticky */
    int err_no;
    uint64_t records;
    uint64_t dropped;
    uint64_t bytes_in;
    uint64_t bytes_out;
    uint64_t frames;
    /* The file fd was opened on: a write first checks that fd still names
     * it, so a program that closed the descriptor and opened a file of its
     * own on the number never gets our bytes (fd_lost then). */
    int have_id, fd_lost;
    dev_t id_dev;
    ino_t id_ino;
    char *tmp; /* not yet claimed: the temporary name it is written under */
};

static gmt_status fail(gmt_writer *w, gmt_status st, int e)
{
    if (w->err == GMT_OK) {
        w->err = st;
        w->err_no = e;
    }
    return w->err;
}

/* fd still names the file the writer opened (the program may have closed
 * it and opened another file on the number). */
static int fd_is_ours(gmt_writer *w)
{
    struct stat st;
    if (!w->have_id)
        return 1;
    if (!w->fd_lost && (fstat(w->fd, &st) != 0 || st.st_dev != w->id_dev || st.st_ino != w->id_ino))
        w->fd_lost = 1;
    return !w->fd_lost;
}

/* Writes all n bytes, retrying short writes and EINTR. */
static gmt_status write_all(gmt_writer *w, const uint8_t *p, size_t n)
{
    if (w->sink) {
        if (w->sink(w->sink_ctx, p, n) != 0)
            return fail(w, GMT_E_IO, ENOSPC);
        w->bytes_out += n;
        return GMT_OK;
    }
    if (!fd_is_ours(w))
        return fail(w, GMT_E_IO, EBADF);
    while (n > 0) {
        ssize_t k = write(w->fd, p, n);
        if (k < 0) {
            if (errno == EINTR)
                continue;
            return fail(w, GMT_E_IO, errno);
        }
        if (k == 0) /* no progress and no error: treat as a full disk, never spin */
            return fail(w, GMT_E_IO, ENOSPC);
        p += k;
        n -= (size_t)k;
        w->bytes_out += (uint64_t)k;
    }
    return GMT_OK;
}

gmt_writer *gmt_writer_open_fd(int fd, const gmt_writer_opts *opts)
{
    if (fd < 0) {
        errno = EBADF;
        return NULL;
    }
    gmt_writer *w = calloc(1, sizeof(*w));
    if (!w) {
        errno = ENOMEM;
        return NULL;
    }
    w->fd = fd;
    struct stat st;
    if (fstat(fd, &st) == 0) {
        w->have_id = 1;
        w->id_dev = st.st_dev;
        w->id_ino = st.st_ino;
    }
    w->level = opts && opts->level ? opts->level : DEFAULT_LEVEL;
    if (w->level > ZSTD_maxCLevel())
        w->level = ZSTD_maxCLevel();
    if (w->level < ZSTD_minCLevel())
        w->level = ZSTD_minCLevel();
    w->frame_bytes = opts && opts->frame_bytes ? opts->frame_bytes : DEFAULT_FRAME_BYTES;
    if (w->frame_bytes > MAX_FRAME_BYTES)
        w->frame_bytes = MAX_FRAME_BYTES;
    /* A frame ends once frame_bytes are in, so before any put there is
     * always room for the largest record after frame_bytes - 1 bytes. */
    w->ib_cap = w->frame_bytes + MAX_RECORD_BYTES + GMT_PREAMBLE_LEN;
    w->ob_cap = ZSTD_CStreamOutSize();
    w->ib = malloc(w->ib_cap);
    w->tb_cap = TIMES_CAP;
    w->tb = malloc(w->tb_cap);
    w->sb = malloc(w->ib_cap + w->tb_cap + 4);
    w->ob = malloc(w->ob_cap);
    w->cctx = ZSTD_createCCtx();
    if (!w->ib || !w->tb || !w->sb || !w->ob || !w->cctx)
        goto oom;
    if (ZSTD_isError(ZSTD_CCtx_setParameter(w->cctx, ZSTD_c_compressionLevel, w->level)) ||
        ZSTD_isError(ZSTD_CCtx_setParameter(w->cctx, ZSTD_c_checksumFlag, 1)))
        goto oom;
    /* Readers cap the window at 2^24 bytes (bounded memory on hostile
     * input); the ultra levels would ask for more. */
    if (w->level > 19 && ZSTD_isError(ZSTD_CCtx_setParameter(w->cctx, ZSTD_c_windowLog, 23)))
        goto oom;
    gmt_codec_reset(&w->codec);
    gmt_codec_set_time_sink(&w->codec, w->tb, w->tb_cap);
    return w;
oom:
    ZSTD_freeCCtx(w->cctx);
    free(w->ib);
    free(w->tb);
    free(w->sb);
    free(w->ob);
    free(w);
    errno = ENOMEM;
    return NULL;
}

/* ---- creating the file -------------------------------------------------
 *
 * The trace is created as a new file under a temporary name in the same
 * directory (.gmemprof-PID-N.tmp: short, so any legal name works;
 * O_CREAT|O_EXCL|O_NOFOLLOW: never an existing file, never through a link,
 * owned by this process, mode 0666 less the umask), locked with flock, then
 * claimed: renamed to its name.  The lock is held until the writer closes,
 * so a second process handed the same name finds it locked and writes
 * NAME-with-.PID beside it instead of into it; an unlocked file there is a
 * finished or abandoned trace and is replaced (rename: atomic, and a link
 * there is replaced, not followed).  An existing character device (/dev/null,
 * /dev/full) is written in place; any other non-regular file (a FIFO, which
 * would block open(), a socket, a directory) is refused.  A name that
 * stands for an open descriptor (/dev/stdout, /dev/fd/N, /proc/self/fd/N,
 * or a link to one) is never replaced: a character device behind it is
 * written in place, anything else refused.  The descriptor is moved to a
 * high number, where a program that closes every descriptor and opens its
 * own files does not get it back. */

enum { PLACE_OK, PLACE_TAKEN, PLACE_FAIL };

static void say(char *msg, size_t cap, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void say(char *msg, size_t cap, const char *fmt, ...)
{
    if (!msg || !cap)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, cap, fmt, ap);
    va_end(ap);
}

/* rename that fails with EEXIST instead of replacing: renameat2 where the
 * file system has it, else link + unlink, else (no hard links) rename. */
static int rename_noreplace(const char *from, const char *to)
{
#ifdef SYS_renameat2
    if (syscall(SYS_renameat2, AT_FDCWD, from, AT_FDCWD, to, 1 /* RENAME_NOREPLACE */) == 0)
        return 0;
    if (errno != EINVAL && errno != ENOSYS && errno != ENOTSUP)
        return -1;
#endif
    if (link(from, to) == 0) {
        unlink(from);
        return 0;
    }
    if (errno != EPERM && errno != EOPNOTSUPP)
        return -1;
    /* No hard links either (vfat, some FUSE): a plain rename, which a
     * creator that appeared since the lstat could lose its name to. */
    return rename(from, to);
}

static const char *kind_of(mode_t m)
{
    return S_ISFIFO(m) ? "a FIFO" : S_ISSOCK(m) ? "a socket" : S_ISDIR(m) ? "a directory"
                                  : S_ISBLK(m)  ? "a block device" : S_ISREG(m) ? "a regular file"
                                                                    : "not a regular file";
}

/* fd moved to a high number (the program's own files take the lowest free
 * ones); fd itself where that is not possible. */
static int move_high(int fd)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur < 64)
        return fd;
    /* half the limit, at most 1024: far above what a program reopens, and
     * no descriptor table grown to millions of entries */
    int lo = rl.rlim_cur / 2 > 1024 ? 1024 : (int)(rl.rlim_cur / 2);
    if (fd >= lo)
        return fd;
    int hi = fcntl(fd, F_DUPFD_CLOEXEC, lo);
    if (hi < 0)
        return fd;
    close(fd);
    return hi;
}

/* A character device opened in place at path (following a descriptor's
 * link when follow is set): the descriptor, -1 with errno, or -2 when
 * something else is there now. */
static int open_device(const char *path, int follow)
{
    int dfd = open(path, O_WRONLY | O_NOCTTY | O_CLOEXEC | (follow ? 0 : O_NOFOLLOW));
    if (dfd < 0)
        return -1;
    struct stat st;
    if (fstat(dfd, &st) != 0 || !S_ISCHR(st.st_mode)) {
        close(dfd);
        return -2;
    }
    return move_high(dfd);
}

/* path stands for an open descriptor: a character device behind it is
 * opened in place (PLACE_OK, *fd set); anything else is refused. */
static int place_descriptor(const char *path, int *fd, char *msg, size_t cap)
{
    struct stat st;
    if (stat(path, &st) == 0 && S_ISCHR(st.st_mode)) {
        int dfd = open_device(path, 1);
        if (dfd >= 0) {
            *fd = dfd;
            return PLACE_OK;
        }
        if (dfd == -2)
            errno = EINVAL;
        say(msg, cap, "cannot write the trace to %s: %s", path, strerror(errno));
        return PLACE_FAIL;
    }
    int e = errno;
    if (e == EBADF || e == ENOENT)
        say(msg, cap, "cannot write the trace to %s: it names a descriptor that is not open; name a regular file",
            path);
    else
        say(msg, cap,
            "cannot write the trace to %s: it names an open descriptor (%s), which is never replaced or "
            "written; name a regular file",
            path, kind_of(st.st_mode));
    errno = EINVAL;
    return PLACE_FAIL;
}

/* Puts the locked temporary file tmp (descriptor *fd) at path.  PLACE_OK (a
 * character device: *fd is replaced by one open on it, tmp removed; only
 * while nothing is written, else refused), PLACE_TAKEN (a live writer holds
 * path), PLACE_FAIL with errno and msg. */
static int place(const char *tmp, const char *path, int *fd, int written, char *msg, size_t cap)
{
    if (gmt_path_names_fd(path)) {
        int dfd = -1;
        if (written) {
            say(msg, cap, "cannot write the trace to %s: it names an open descriptor now; name a regular file",
                path);
            errno = EINVAL;
            return PLACE_FAIL;
        }
        int rc = place_descriptor(path, &dfd, msg, cap);
        if (rc == PLACE_OK) {
            unlink(tmp);
            close(*fd);
            *fd = dfd;
        }
        return rc;
    }
    for (int tries = 0; tries < 16; tries++) {
        struct stat ls, st;
        if (lstat(path, &ls) != 0) {
            if (errno == ENOENT && rename_noreplace(tmp, path) == 0)
                return PLACE_OK;
            if (errno == EEXIST)
                continue; /* created meanwhile: look again */
            break;
        }
        if (S_ISLNK(ls.st_mode)) {
            if (rename(tmp, path) == 0)
                return PLACE_OK; /* the link replaced, its target untouched */
            break;
        }
        if (S_ISCHR(ls.st_mode) && written) {
            say(msg, cap, "cannot write the trace to %s: a device appeared there after the trace began; "
                          "name a regular file", path);
            errno = EINVAL;
            return PLACE_FAIL;
        }
        if (S_ISCHR(ls.st_mode)) {
            int dfd = open_device(path, 0);
            if (dfd == -2)
                continue; /* replaced meanwhile */
            if (dfd < 0)
                break;
            unlink(tmp);
            close(*fd);
            *fd = dfd;
            return PLACE_OK;
        }
        if (!S_ISREG(ls.st_mode)) {
            say(msg, cap, "cannot write the trace to %s: it is %s; name a regular file", path, kind_of(ls.st_mode));
            errno = S_ISDIR(ls.st_mode) ? EISDIR : EINVAL;
            return PLACE_FAIL;
        }
        /* A regular file: a live writer holds its lock. */
        int ofd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
        if (ofd < 0) {
            if (errno == EACCES && rename(tmp, path) == 0)
                return PLACE_OK; /* unreadable to us: not ours to wait for */
            if (errno == ENOENT || errno == ELOOP)
                continue;
            break;
        }
        if (fstat(ofd, &st) != 0 || st.st_dev != ls.st_dev || st.st_ino != ls.st_ino) {
            close(ofd);
            continue;
        }
        if (flock(ofd, LOCK_EX | LOCK_NB) != 0 && errno == EWOULDBLOCK) {
            close(ofd);
            return PLACE_TAKEN;
        } /* (no locks on this file system, ENOLCK: nobody can hold it) */
        /* Locked: still the file at path?  (Another creator may have
         * replaced it between the lstat and the lock.) */
        struct stat now;
        int same = lstat(path, &now) == 0 && now.st_dev == st.st_dev && now.st_ino == st.st_ino;
        int rc = same ? rename(tmp, path) : 0;
        int e = errno;
        close(ofd);
        if (!same)
            continue;
        if (rc == 0)
            return PLACE_OK;
        errno = e;
        break;
    }
    if (errno == EEXIST || errno == 0)
        errno = EAGAIN;
    say(msg, cap, "cannot write the trace to %s: %s", path, strerror(errno));
    return PLACE_FAIL;
}

/* A new, locked file in path's directory, its name in *tmp (malloc'd).
 * -1 with errno and msg. */
static int create_tmp(const char *path, char **tmp, char *msg, size_t msgcap)
{
    static _Atomic unsigned seq;
    const char *slash = strrchr(path, '/');
    int dlen = slash ? (int)(slash - path) + 1 : 0;
    size_t cap = (size_t)dlen + 64;
    char *t = malloc(cap);
    if (!t) {
        errno = ENOMEM;
        say(msg, msgcap, "cannot write the trace to %s: out of memory", path);
        return -1;
    }
    for (int i = 0; i < 64; i++) {
        unsigned n = atomic_fetch_add(&seq, 1);
        snprintf(t, cap, "%.*s.gmemprof-%ld-%u.tmp", dlen, path, (long)getpid(), n);
        int fd = open(t, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC, 0666);
        if (fd < 0 && errno == EEXIST)
            continue;
        if (fd < 0)
            break;
        /* A fresh file cannot be held by another; where the file system
         * has no locks (ENOLCK on some NFS) the trace is written unlocked. */
        (void)flock(fd, LOCK_EX | LOCK_NB);
        *tmp = t;
        return move_high(fd);
    }
    int e = errno;
    free(t);
    errno = e;
    say(msg, msgcap, "cannot write the trace to %s: %s", path, strerror(errno));
    return -1;
}

/* path with ".<pid>" (and "-<k>" after the first try) before its extension. */
static int other_name(const char *path, int k, char *out, size_t cap)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    const char *dot = strrchr(base, '.');
    size_t stem = dot && dot > base ? (size_t)(dot - path) : strlen(path);
    char sfx[48];
    if (k == 0)
        snprintf(sfx, sizeof sfx, ".%ld", (long)getpid());
    else
        snprintf(sfx, sizeof sfx, ".%ld-%d", (long)getpid(), k);
    return (size_t)snprintf(out, cap, "%.*s%s%s", (int)stem, path, sfx, path + stem) < cap ? 0 : -1;
}

static void set_id(gmt_writer *w)
{
    struct stat st;
    w->have_id = fstat(w->fd, &st) == 0;
    w->fd_lost = 0;
    if (w->have_id) {
        w->id_dev = st.st_dev;
        w->id_ino = st.st_ino;
    }
}

gmt_writer *gmt_writer_create_unclaimed(const char *path, const gmt_writer_opts *opts, char *msg, size_t msgcap)
{
    if (msg && msgcap)
        msg[0] = '\0';
    if (!path || !path[0]) {
        errno = EINVAL;
        say(msg, msgcap, "no trace file name given");
        return NULL;
    }
    int fd = -1;
    char *tmp = NULL;
    struct stat ls;
    /* What can be told now is told now: a device is written in place at
     * once, a FIFO or a descriptor that is no device is refused. */
    if (gmt_path_names_fd(path)) {
        if (place_descriptor(path, &fd, msg, msgcap) != PLACE_OK)
            return NULL;
    } else if (lstat(path, &ls) == 0 && S_ISCHR(ls.st_mode)) {
        if ((fd = open_device(path, 0)) < 0) {
            if (fd == -2)
                errno = EINVAL;
            say(msg, msgcap, "cannot write the trace to %s: %s", path, strerror(errno));
            return NULL;
        }
    } else if (lstat(path, &ls) == 0 && !S_ISREG(ls.st_mode) && !S_ISLNK(ls.st_mode)) {
        say(msg, msgcap, "cannot write the trace to %s: it is %s; name a regular file", path, kind_of(ls.st_mode));
        errno = S_ISDIR(ls.st_mode) ? EISDIR : EINVAL;
        return NULL;
    } else if ((fd = create_tmp(path, &tmp, msg, msgcap)) < 0) {
        return NULL;
    }
    gmt_writer *w = gmt_writer_open_fd(fd, opts);
    if (!w) {
        int e = errno;
        if (tmp)
            unlink(tmp);
        free(tmp);
        close(fd);
        errno = e;
        say(msg, msgcap, "cannot write the trace to %s: out of memory", path);
        return NULL;
    }
    w->tmp = tmp;
    return w;
}

static int claim(gmt_writer *w, char *path, size_t cap, int fallback, char *msg, size_t msgcap)
{
    if (msg && msgcap)
        msg[0] = '\0';
    if (!w || !path || !path[0]) {
        errno = EINVAL;
        return -1;
    }
    if (!w->tmp)
        return 0;
    char *want = strdup(path);
    int rc = PLACE_FAIL;
    if (!want) {
        errno = ENOMEM;
        say(msg, msgcap, "cannot write the trace to %s: out of memory", path);
        return -1;
    }
    int written = w->bytes_out > 0;
    for (int k = 0; k < 8; k++) {
        if (k > 0 && other_name(want, k - 1, path, cap) != 0) {
            errno = ENAMETOOLONG;
            say(msg, msgcap, "cannot write the trace to %s: a name beside it is too long", want);
            break;
        }
        int fd = w->fd;
        rc = place(w->tmp, path, &fd, written, msg, msgcap);
        if (rc == PLACE_OK) {
            if (fd != w->fd) {
                w->fd = fd;
                set_id(w);
            }
            free(w->tmp);
            w->tmp = NULL;
            break;
        }
        if (rc == PLACE_FAIL)
            break;
        if (!fallback) {
            errno = EBUSY;
            say(msg, msgcap, "cannot write the trace to %s: another process is writing it", path);
            break;
        }
    }
    int e = errno;
    if (rc == PLACE_OK && strcmp(want, path) != 0)
        say(msg, msgcap, "%s is being written by another process: this one writes %s", want, path);
    else if (rc != PLACE_OK && strcmp(want, path) != 0)
        snprintf(path, cap, "%s", want); /* the failure names what was asked for */
    free(want);
    errno = e;
    return rc == PLACE_OK ? 0 : -1;
}

int gmt_writer_claim(gmt_writer *w, char *path, size_t cap, char *msg, size_t msgcap)
{
    return claim(w, path, cap, 1, msg, msgcap);
}

static gmt_writer *create(char *path, size_t cap, int fallback, const gmt_writer_opts *opts, char *msg,
                          size_t msgcap)
{
    gmt_writer *w = gmt_writer_create_unclaimed(path, opts, msg, msgcap);
    if (!w)
        return NULL;
    if (claim(w, path, cap, fallback, msg, msgcap) != 0) {
        int e = errno;
        gmt_writer_close(w); /* removes the temporary file */
        errno = e;
        return NULL;
    }
    return w;
}

gmt_writer *gmt_writer_create(char *path, size_t cap, const gmt_writer_opts *opts, char *msg, size_t msgcap)
{
    return create(path, cap, 1, opts, msg, msgcap);
}

gmt_writer *gmt_writer_open(const char *path, const gmt_writer_opts *opts)
{
    if (!path) {
        errno = EINVAL;
        return NULL;
    }
    size_t n = strlen(path) + 1;
    char *p = malloc(n);
    if (!p) {
        errno = ENOMEM;
        return NULL;
    }
    memcpy(p, path, n);
    gmt_writer *w = create(p, n, 0, opts, NULL, 0);
    int e = errno;
    free(p);
    errno = e;
    return w;
}

gmt_writer *gmt_writer_open_sink(gmt_sink_fn sink, void *ctx, const gmt_writer_opts *opts)
{
    if (!sink) {
        errno = EINVAL;
        return NULL;
    }
    /* fd 0 is never written or closed: the sink stands in for it */
    gmt_writer *w = gmt_writer_open_fd(0, opts);
    if (!w)
        return NULL;
    w->fd = -1;
    w->have_id = 0;
    w->sink = sink;
    w->sink_ctx = ctx;
    w->started = 1; /* no preamble: the stream's writer gives it */
    w->frames = 1;  /* (frame 0 is the one that carries the preamble) */
    return w;
}

gmt_status gmt_writer_put_frames(gmt_writer *w, const uint8_t *bytes, size_t n, uint64_t records, uint64_t frames)
{
    if (!w || (!bytes && n))
        return GMT_E_ARG;
    gmt_status st = gmt_writer_end_frame(w);
    if (st != GMT_OK)
        return st;
    if (n && write_all(w, bytes, n) != GMT_OK)
        return w->err;
    w->records += records;
    w->frames += frames;
    return GMT_OK;
}

gmt_status gmt_writer_end_frame(gmt_writer *w)
{
    if (!w)
        return GMT_E_ARG;
    if (w->err != GMT_OK)
        return w->err;
    if (w->ib_len == 0)
        return GMT_OK;
    /* Format 2.0: the frame's times go first, as its TIMES record, so that
     * a reader has them before the records that use them (and a frame cut
     * short still yields the records before the cut).  One copy of the
     * frame (1 MiB by default) costs far less than compressing it. */
    /* the first frame's ib starts with the preamble */
    size_t pre = w->frames == 0 ? GMT_PREAMBLE_LEN : 0, sl = pre;
    memcpy(w->sb, w->ib, pre);
    w->sb[sl++] = GMT_WIRE_TIMES;
    size_t tn = gmt_codec_time_len(&w->codec);
    sl += gmt_varint_put(w->sb + sl, 3, tn);
    memcpy(w->sb + sl, w->tb, tn);
    sl += tn;
    memcpy(w->sb + sl, w->ib + pre, w->ib_len - pre);
    sl += w->ib_len - pre;
    w->bytes_in += sl - w->ib_len;
    ZSTD_inBuffer in = { w->sb, sl, 0 };
    size_t rem;
    do {
        ZSTD_outBuffer out = { w->ob, w->ob_cap, 0 };
        rem = ZSTD_compressStream2(w->cctx, &out, &in, ZSTD_e_end);
        if (ZSTD_isError(rem)) {
            /* Drop the context's half-built frame so nothing stale lingers. */
            ZSTD_CCtx_reset(w->cctx, ZSTD_reset_session_only);
            return fail(w, GMT_E_ZSTD, 0);
        }
        if (out.pos && write_all(w, w->ob, out.pos) != GMT_OK)
            return w->err;
    } while (rem != 0);
    w->ib_len = 0;
    w->frames++;
    gmt_codec_reset(&w->codec);
    gmt_codec_set_time_sink(&w->codec, w->tb, w->tb_cap);
    return GMT_OK;
}

gmt_status gmt_writer_put(gmt_writer *w, const gmt_record *r)
{
    if (!w)
        return GMT_E_ARG;
    if (w->err != GMT_OK) {
        w->dropped++;
        return w->err;
    }
    if (!r) {
        w->dropped++;
        return GMT_E_ARG; /* a caller bug, not a stream error: not sticky */
    }
    if (!w->started) {
        gmt_preamble_put(w->ib);
        w->ib_len = GMT_PREAMBLE_LEN;
        w->bytes_in += GMT_PREAMBLE_LEN;
        w->started = 1;
    }
    size_t n = gmt_encode(&w->codec, r, w->ib + w->ib_len, w->ib_cap - w->ib_len);
    if (n == 0) {
        /* Space is guaranteed (ib_cap), so only an invalid type gets here. */
        w->dropped++;
        return GMT_E_ARG;
    }
    w->ib_len += n;
    w->bytes_in += n;
    w->records++;
    /* the frame ends here too when the next record's times might not fit */
    size_t tn = gmt_codec_time_len(&w->codec);
    if (w->ib_len + tn >= w->frame_bytes || w->tb_cap - tn < GMT_RECORD_TIME_MAX)
        return gmt_writer_end_frame(w);
    return GMT_OK;
}

gmt_status gmt_writer_intern(gmt_writer *w, gmt_strtab *t, const char *s, size_t len, uint64_t *id)
{
    if (!w || !t || !id)
        return GMT_E_ARG;
    int is_new = 0;
    uint64_t v = gmt_strtab_intern(t, s, len, &is_new);
    *id = v;
    if (v == 0)
        return GMT_E_NOMEM;
    if (!is_new)
        return GMT_OK;
    gmt_record rec;
    rec.type = GMT_REC_STRING;
    rec.u.string.id = v;
    rec.u.string.str.ptr = s;
    rec.u.string.str.len = len > GMT_MAX_STRING ? GMT_MAX_STRING : (uint32_t)len;
    return gmt_writer_put(w, &rec);
}

gmt_status gmt_writer_close(gmt_writer *w)
{
    if (!w)
        return GMT_E_ARG;
    gmt_writer_end_frame(w);
    /* A descriptor the program took over is the program's: never closed. */
    if (w->fd >= 0 && fd_is_ours(w) && close(w->fd) != 0 && errno != EINTR)
        fail(w, GMT_E_IO, errno);
    if (w->tmp) {
        unlink(w->tmp); /* never claimed: nothing was recorded worth a name */
        free(w->tmp);
    }
    gmt_status st = w->err;
    ZSTD_freeCCtx(w->cctx);
    free(w->ib);
    free(w->ob);
    free(w->tb);
    free(w->sb);
    free(w);
    return st;
}

uint64_t gmt_writer_records(const gmt_writer *w) { return w ? w->records : 0; }
uint64_t gmt_writer_dropped(const gmt_writer *w) { return w ? w->dropped : 0; }
uint64_t gmt_writer_bytes_out(const gmt_writer *w) { return w ? w->bytes_out : 0; }
uint64_t gmt_writer_bytes_in(const gmt_writer *w) { return w ? w->bytes_in : 0; }
uint64_t gmt_writer_frames(const gmt_writer *w) { return w ? w->frames : 0; }
int gmt_writer_errno(const gmt_writer *w) { return w ? w->err_no : 0; }
int gmt_writer_fd_lost(const gmt_writer *w) { return w ? w->fd_lost : 0; }
int gmt_writer_fd(const gmt_writer *w) { return w && !w->sink ? w->fd : -1; }
int gmt_writer_claimed(const gmt_writer *w) { return w && !w->tmp; }
