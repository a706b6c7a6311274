/* Export files written whole or not at all; stderr escaped (outfile.h). */
#include "outfile.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/gma_util.h"
#include "gmt_text.h"

/* Whether dir is this process's descriptor folder (/proc/self/fd, /dev/fd
 * or /proc/thread-self/fd of the one thread, by any name). */
static int is_own_fd_dir(const char *dir)
{
    char *real = realpath(dir, NULL);
    if (!real)
        return 0;
    char own[64], task[96];
    long pid = (long)getpid();
    snprintf(own, sizeof own, "/proc/%ld/fd", pid);
    snprintf(task, sizeof task, "/proc/%ld/task/%ld/fd", pid, pid);
    int yes = strcmp(real, own) == 0 || strcmp(real, task) == 0;
    free(real);
    return yes;
}

int gma_out_fd_of(const char *path)
{
    if (strcmp(path, "-") == 0)
        return STDOUT_FILENO;
    char cur[PATH_MAX], next[PATH_MAX], tgt[PATH_MAX];
    if ((size_t)snprintf(cur, sizeof cur, "%s", path) >= sizeof cur)
        return -1;
    for (int hop = 0; hop < 40; hop++) { /* the kernel's own limit on links */
        struct stat ls;
        if (lstat(cur, &ls) != 0 || !S_ISLNK(ls.st_mode))
            return -1;
        char *slash = strrchr(cur, '/');
        const char *base = slash ? slash + 1 : cur;
        char dir[PATH_MAX];
        if (!slash)
            snprintf(dir, sizeof dir, ".");
        else
            snprintf(dir, sizeof dir, "%.*s", slash == cur ? 1 : (int)(slash - cur), cur);
        size_t blen = strlen(base);
        if (blen && blen < 10 && strspn(base, "0123456789") == blen && is_own_fd_dir(dir))
            return atoi(base);
        ssize_t n = readlink(cur, tgt, sizeof tgt - 1);
        if (n <= 0)
            return -1;
        tgt[n] = '\0';
        int w = tgt[0] == '/' ? snprintf(next, sizeof next, "%s", tgt) : snprintf(next, sizeof next, "%s/%s", dir, tgt);
        if (w < 0 || (size_t)w >= sizeof next)
            return -1;
        memcpy(cur, next, (size_t)w + 1);
    }
    return -1;
}

/* What a write to out reaches: the descriptor's file, else the file at out. */
static int out_stat(const char *out, struct stat *st)
{
    int fd = gma_out_fd_of(out);
    return fd >= 0 ? fstat(fd, st) : stat(out, st);
}

int gma_out_is_stdout(const char *path)
{
    if (gma_out_fd_of(path) == STDOUT_FILENO)
        return 1;
    struct stat so, st;
    /* a terminal or /dev/null takes both without losing either */
    return fstat(STDOUT_FILENO, &so) == 0 && out_stat(path, &st) == 0 && !S_ISCHR(so.st_mode) &&
           so.st_dev == st.st_dev && so.st_ino == st.st_ino;
}

/* The file a write to path lands in: a link's target, else path itself.
 * *direct: write to path itself, not through a temporary file -- it is not
 * a regular file (a FIFO, a device), or a link that does not lead to a
 * name in a directory (/proc/PID/fd/N of another process's pipe). */
static char *target_of(const char *path, int *direct)
{
    struct stat st, ls;
    *direct = stat(path, &st) == 0 && !S_ISREG(st.st_mode);
    if (!*direct && lstat(path, &ls) == 0 && S_ISLNK(ls.st_mode)) {
        char *real = realpath(path, NULL);
        if (real && stat(real, &st) == 0)
            return real;
        free(real);
        *direct = 1;
    }
    return strdup(path);
}

static char *tmp_beside(const char *target)
{
    const char *slash = strrchr(target, '/');
    size_t dl = slash ? (size_t)(slash - target) + 1 : 0;
    size_t n = strlen(target) + 32;
    char *t = malloc(n);
    if (t)
        snprintf(t, n, "%.*s.%s.XXXXXX", (int)dl, target, target + dl);
    return t;
}

/* The FILE's writes, keeping the first error's errno: stdio's ferror()
 * says only that one happened, and ENOSPC must not read as EIO. */
static ssize_t out_write(void *cookie, const char *buf, size_t n)
{
    gma_out *o = cookie;
    for (size_t off = 0; off < n;) {
        ssize_t k = write(o->fd, buf + off, n - off);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0) {
            if (!o->err)
                o->err = k < 0 ? errno : EIO;
            return -1;
        }
        off += (size_t)k;
        o->written += (uint64_t)k;
    }
    return (ssize_t)n;
}

/* A new file beside target, mode 0666 less the umask; fd or -1 with errno. */
static int make_tmp(char *tmp)
{
    int fd = mkostemp(tmp, O_CLOEXEC);
    if (fd < 0)
        return -1;
    mode_t mask = umask(0); /* the analyzer runs one thread */
    umask(mask);
    if (fchmod(fd, 0666 & ~mask) != 0) {
        int e = errno;
        close(fd);
        unlink(tmp);
        errno = e;
        return -1;
    }
    return fd;
}

/* The descriptor to write for o->path; sets o->stream and o->tmp. */
static int open_target(gma_out *o, int own, int direct)
{
    struct stat st;
    if (own >= 0) { /* /dev/stdout, /dev/fd/N, '-': that descriptor, at its offset */
        o->stream = 1;
        return fcntl(own, F_DUPFD_CLOEXEC, 3);
    }
    if (direct) {
        if (stat(o->path, &st) == 0 && S_ISDIR(st.st_mode)) {
            errno = EISDIR;
            return -1;
        }
        o->stream = 1; /* as asked: a FIFO, a device, another process's descriptor */
        return open(o->path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOCTTY, 0666);
    }
    if (!(o->tmp = tmp_beside(o->path))) {
        errno = ENOMEM;
        return -1;
    }
    return make_tmp(o->tmp);
}

gma_out *gma_out_open(const char *path)
{
    gma_out *o = calloc(1, sizeof(*o));
    int direct = 0, own = gma_out_fd_of(path);
    if (!o || !(o->path = own >= 0 ? strdup(path) : target_of(path, &direct))) {
        free(o);
        errno = ENOMEM;
        return NULL;
    }
    cookie_io_functions_t io = { NULL, out_write, NULL, NULL };
    o->fd = open_target(o, own, direct);
    if (o->fd < 0 || !(o->f = fopencookie(o, "w", io))) {
        int e = errno;
        if (o->fd >= 0) {
            close(o->fd);
            if (o->tmp)
                unlink(o->tmp);
        }
        free(o->tmp);
        free(o->path);
        free(o);
        errno = e;
        return NULL;
    }
    setvbuf(o->f, NULL, _IOFBF, 1 << 16);
    return o;
}

int gma_out_close(gma_out *o, int ok)
{
    if (!o)
        return 0;
    if (fflush(o->f) != 0 && !o->err)
        o->err = errno ? errno : EIO;
    if (fclose(o->f) != 0 && !o->err)
        o->err = errno ? errno : EIO;
    if (close(o->fd) != 0 && !o->err) /* a network file system reports here */
        o->err = errno;
    int e = o->err;
    if (o->tmp) {
        if (ok && !e && rename(o->tmp, o->path) != 0)
            e = errno;
        if (!ok || e)
            unlink(o->tmp);
    }
    free(o->tmp);
    free(o->path);
    free(o);
    if (ok && e) {
        errno = e;
        return -1;
    }
    return 0;
}

int gma_out_probe(const char *path)
{
    int own = gma_out_fd_of(path);
    if (own >= 0) { /* a descriptor: open for writing? */
        int fl = fcntl(own, F_GETFL);
        if (fl < 0 || (fl & O_ACCMODE) == O_RDONLY) {
            errno = EBADF;
            return -1;
        }
        return 0;
    }
    struct stat st;
    if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
        if (S_ISDIR(st.st_mode)) {
            errno = EISDIR;
            return -1;
        }
        return access(path, W_OK); /* opening a FIFO would wait for its reader */
    }
    gma_out *o = gma_out_open(path);
    if (!o)
        return -1;
    gma_out_close(o, 0);
    return 0;
}

int gma_out_present(const char *path)
{
    struct stat st;
    return gma_out_fd_of(path) >= 0 || stat(path, &st) == 0 ? 0 : -1;
}

/* The same file: both exist with one device and inode. */
static int same_file(const char *a, const char *b)
{
    struct stat sa, sb;
    return out_stat(a, &sa) == 0 && out_stat(b, &sb) == 0 && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

/* An output that reaches standard input, the trace of "-". */
static int is_stdin(const char *out)
{
    struct stat si, so;
    return fstat(STDIN_FILENO, &si) == 0 && out_stat(out, &so) == 0 && si.st_dev == so.st_dev &&
           si.st_ino == so.st_ino;
}

/* Two names of one file that does not exist yet: the same directory
 * (device and inode) and the same last component. */
static int same_new_file(const char *a, const char *b)
{
    char da[PATH_MAX], db[PATH_MAX];
    const char *ba = strrchr(a, '/'), *bb = strrchr(b, '/');
    snprintf(da, sizeof da, "%.*s", ba ? (int)(ba - a + 1) : 1, ba ? a : ".");
    snprintf(db, sizeof db, "%.*s", bb ? (int)(bb - b + 1) : 1, bb ? b : ".");
    return strcmp(ba ? ba + 1 : a, bb ? bb + 1 : b) == 0 && same_file(da, db);
}

int gma_out_check(const char *const *outs, size_t nout, const char *const *ins, size_t nin, char *msg, size_t cap)
{
    for (size_t i = 0; i < nout; i++) {
        if (!outs[i])
            continue;
        for (size_t j = 0; j < nin; j++) {
            if (!ins[j])
                continue;
            int in_stdin = strcmp(ins[j], "-") == 0;
            if (in_stdin ? is_stdin(outs[i]) : same_file(outs[i], ins[j])) {
                snprintf(msg, cap, "the output %s is the trace %s%s: writing it would destroy the trace; name "
                                   "another file", outs[i], ins[j], in_stdin ? " (standard input)" : "");
                return -1;
            }
        }
        for (size_t j = 0; j < i; j++)
            if (outs[j] && (same_file(outs[i], outs[j]) || same_new_file(outs[i], outs[j]))) {
                snprintf(msg, cap, "%s and %s are one file: give each output its own name", outs[j], outs[i]);
                return -1;
            }
    }
    return 0;
}

static ssize_t escaped_write(void *cookie, const char *buf, size_t n)
{
    int fd = *(int *)cookie;
    char out[4096];
    size_t i = 0;
    while (i < n) {
        size_t len = 0;
        for (; i < n && len + 4 < sizeof out; i++) {
            if (buf[i] == '\n')
                out[len++] = '\n';
            else
                len += gmt_text_escape_n(out + len, sizeof out - len, buf + i, 1);
        }
        for (size_t off = 0; off < len;) {
            ssize_t k = write(fd, out + off, len - off);
            if (k < 0 && errno == EINTR)
                continue;
            if (k <= 0)
                return -1;
            off += (size_t)k;
        }
    }
    return (ssize_t)n;
}

void gma_out_escape_stderr(void)
{
    static int fd = STDERR_FILENO;
    cookie_io_functions_t io = { NULL, escaped_write, NULL, NULL };
    FILE *f = fopencookie(&fd, "w", io);
    if (!f)
        return; /* stays raw: the messages still get out */
    setvbuf(f, NULL, _IOLBF, 0);
    stderr = f;
}

void gma_out_escape_stdout(void)
{
    static int fd = STDOUT_FILENO;
    cookie_io_functions_t io = { NULL, escaped_write, NULL, NULL };
    FILE *f = fopencookie(&fd, "w", io);
    if (!f)
        return; /* each line's untrusted text is escaped where it is printed */
    setvbuf(f, NULL, isatty(STDOUT_FILENO) ? _IOLBF : _IOFBF, 1 << 16);
    stdout = f;
}

const char *gma_out_shown(const char *s)
{
    static gma_buf b;
    gma_buf_reset(&b);
    gma_text_clean(&b, s ? s : "", s ? strlen(s) : 0);
    return gma_buf_str(&b);
}
