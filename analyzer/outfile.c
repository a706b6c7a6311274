/* Export files written whole or not at all; stderr escaped (outfile.h). */
#include "outfile.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gmt_text.h"

/* The file a write to path lands in: a link's target, else path itself.
 * *direct: write to path itself, not through a temporary file -- it is not
 * a regular file (a FIFO, a device), or a link that does not lead to a
 * name in a directory (/proc/self/fd/N of a pipe or a memfd). */
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

gma_out *gma_out_open(const char *path)
{
    gma_out *o = calloc(1, sizeof(*o));
    int direct = 0;
    if (!o || !(o->path = target_of(path, &direct))) {
        free(o);
        errno = ENOMEM;
        return NULL;
    }
    struct stat st;
    int fd = -1;
    if (direct) {
        if (stat(o->path, &st) == 0 && S_ISDIR(st.st_mode))
            errno = EISDIR;
        else /* as asked: a FIFO, /dev/stdout, a memfd */
            fd = open(o->path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOCTTY, 0666);
    } else if ((o->tmp = tmp_beside(o->path))) {
        fd = mkostemp(o->tmp, O_CLOEXEC);
        if (fd >= 0) {
            mode_t mask = umask(0); /* the analyzer runs one thread */
            umask(mask);
            if (fchmod(fd, 0666 & ~mask) != 0) {
                int e = errno;
                close(fd);
                unlink(o->tmp);
                fd = -1;
                errno = e;
            }
        }
    } else {
        errno = ENOMEM;
    }
    if (fd < 0 || !(o->f = fdopen(fd, "w"))) {
        int e = errno;
        if (fd >= 0) {
            close(fd);
            if (o->tmp)
                unlink(o->tmp);
        }
        free(o->tmp);
        free(o->path);
        free(o);
        errno = e;
        return NULL;
    }
    return o;
}

int gma_out_close(gma_out *o, int ok)
{
    if (!o)
        return 0;
    int err = ferror(o->f) != 0;
    int e = err ? EIO : 0;
    if (fclose(o->f) != 0 && !err) {
        err = 1;
        e = errno;
    }
    int rc = 0;
    if (o->tmp) {
        if (ok && !err && rename(o->tmp, o->path) != 0) {
            err = 1;
            e = errno;
        }
        if (!ok || err)
            unlink(o->tmp);
    }
    if (ok && err) {
        rc = -1;
    }
    free(o->tmp);
    free(o->path);
    free(o);
    if (rc)
        errno = e;
    return rc;
}

int gma_out_probe(const char *path)
{
    gma_out *o = gma_out_open(path);
    if (!o)
        return -1;
    gma_out_close(o, 0);
    return 0;
}

/* The same file: both exist with one device and inode. */
static int same_file(const char *a, const char *b)
{
    struct stat sa, sb;
    return stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
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
        for (size_t j = 0; j < nin; j++)
            if (ins[j] && strcmp(ins[j], "-") != 0 && same_file(outs[i], ins[j])) {
                snprintf(msg, cap, "the output %s is the trace %s: writing it would destroy the trace; name "
                                   "another file", outs[i], ins[j]);
                return -1;
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

const char *gma_out_shown(const char *s)
{
    static char buf[4 * PATH_MAX];
    gmt_text_escape(buf, sizeof buf, s);
    return buf;
}
