/*
 * The trace sink (tsink.h): the trace file's writer, its name and status.
 */
#include "tsink.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "log.h"
#include "summary.h"

void gmp_tsink_init(gmp_tsink *t, gmt_writer *w, const char *path, const gmt_strtab *st)
{
    memset(t, 0, sizeof *t);
    t->w = w;
    t->strtab = st;
    size_t n = strnlen(path, sizeof t->path - 1);
    memcpy(t->path, path, n);
    t->path[n] = '\0';
    pthread_mutex_init(&t->claim_lock, NULL);
    atomic_store(&t->claim_done, 0);
}

void gmp_tsink_free(gmp_tsink *t)
{
    free(t->held);
    t->held = NULL;
    t->held_cap = 0;
}

/* Why a file writer failed: its errno, else the compressor. */
static const char *writer_error(gmt_writer *w)
{
    if (gmt_writer_fd_lost(w))
        return "the program closed its descriptor (another file may have its number now), so nothing more is "
               "written to it";
    int e = gmt_writer_errno(w);
    return e ? strerror(e) : "compression error";
}

void gmp_tsink_say_failed(gmt_writer *w, const char *name, int *status)
{
    if (*status)
        return;
    *status = 1;
    gmp_log_error("writing the trace %s failed: %s; the rest of this run is counted as dropped records", name,
                  writer_error(w));
}

void gmp_tsink_failed(gmp_tsink *t, gmt_writer *w) { gmp_tsink_say_failed(w, t->path, &t->io_error); }

void gmp_tsink_put_string(gmp_tsink *t, uint64_t id, const char *s, size_t n)
{
    gmt_record rec = {.type = GMT_REC_STRING};
    rec.u.string = (gmt_string){id, {s, n > GMT_MAX_STRING ? GMT_MAX_STRING : (uint32_t)n}};
    if (gmt_writer_put(t->w, &rec) != GMT_OK)
        gmp_tsink_failed(t, t->w);
}

int gmp_tsink_hold(gmp_tsink *t, uint64_t id)
{
    if (id / 8 >= t->held_cap) {
        size_t cap = t->held_cap ? t->held_cap : 64;
        while (cap <= id / 8)
            cap *= 2;
        uint8_t *p = realloc(t->held, cap);
        if (!p)
            return -1;
        memset(p + t->held_cap, 0, cap - t->held_cap);
        t->held = p;
        t->held_cap = cap;
    }
    t->held[id / 8] |= (uint8_t)(1u << (id % 8));
    return 0;
}

int gmp_tsink_unhold(gmp_tsink *t, uint64_t id)
{
    if (id / 8 >= t->held_cap || !(t->held[id / 8] >> (id % 8) & 1))
        return 0;
    t->held[id / 8] &= (uint8_t)~(1u << (id % 8));
    return 1;
}

unsigned gmp_tsink_put(gmp_tsink *t, const gmt_record *r)
{
    unsigned n = 0;
    if (t->held_cap) {
        /* a range's name (a window's baseline) or a failure's op */
        uint64_t id = r->type == GMT_REC_RANGE_BEGIN ? r->u.range.name : r->type == GMT_REC_OOM ? r->u.oom.op : 0;
        size_t len = 0;
        const char *p = id && gmp_tsink_unhold(t, id) ? gmt_strtab_get(t->strtab, id, &len) : NULL;
        if (p) {
            gmp_tsink_put_string(t, id, p, len);
            n++;
        }
    }
    if (gmt_writer_put(t->w, r) != GMT_OK)
        gmp_tsink_failed(t, t->w);
    return n + 1;
}

static void claim_locked(gmp_tsink *t, int due)
{
    if (atomic_load(&t->claim_done) || !t->w || t->claim_failed || gmt_writer_claimed(t->w) || !due)
        return;
    char why[GMP_PATH_MAX + 128];
    if (gmt_writer_claim(t->w, t->path, sizeof t->path, why, sizeof why) != 0) {
        t->claim_failed = 1;
        t->io_error = 1;
        gmp_log_error("%s; no trace is kept for this run (the program runs on)", why);
        atomic_store(&t->claim_done, 1);
        return;
    }
    atomic_store(&t->claim_done, 1);
    if (why[0])
        gmp_log_info("%s", why); /* another process holds the name: this one's own file */
}

void gmp_tsink_claim(gmp_tsink *t, int due)
{
    if (atomic_load_explicit(&t->claim_done, memory_order_acquire))
        return;
    pthread_mutex_lock(&t->claim_lock);
    claim_locked(t, due);
    pthread_mutex_unlock(&t->claim_lock);
}

int gmp_tsink_close(gmp_tsink *t, int due, int *named)
{
    pthread_mutex_lock(&t->claim_lock); /* no claim from a context callback once the file is closed */
    claim_locked(t, due);               /* a context made since the last round */
    atomic_store(&t->claim_done, 1);    /* a claim waiting on the lock finds it done */
    *named = gmt_writer_claimed(t->w);
    int ok = gmt_writer_close(t->w) == GMT_OK && !t->io_error; /* an unclaimed file is removed */
    t->w = NULL;
    pthread_mutex_unlock(&t->claim_lock);
    return ok;
}

int gmp_tsink_append_line(const char *summary_file, const char *line, size_t n, size_t cap)
{
    int fd = open(summary_file, O_WRONLY | O_APPEND | O_CLOEXEC);
    int e = fd < 0 ? errno : 0;
    if (fd >= 0) {
        ssize_t w = n < cap ? write(fd, line, n) : -1;
        e = n >= cap ? EMSGSIZE : w < 0 ? errno : w != (ssize_t)n ? ENOSPC : 0;
        if (close(fd) != 0 && !e && errno != EINTR)
            e = errno;
    }
    return e;
}

uint64_t gmp_tsink_file_size(const gmp_tsink *t, uint64_t fallback)
{
    struct stat sb;
    return stat(t->path, &sb) == 0 ? (uint64_t)sb.st_size : fallback;
}

void gmp_tsink_summary_line(const gmp_tsink *t, const char *summary_file, const gmp_tsink_outcome *o,
                            const char *status)
{
    static gmp_summary sm; /* the writer thread's, once at the end: not on its stack */
    memset(&sm, 0, sizeof sm);
    snprintf(sm.trace, sizeof sm.trace, "%s", t->path);
    snprintf(sm.status, sizeof sm.status, "%s", status);
    sm.bytes = o->bytes;
    sm.windows = o->windows;
    sm.records = o->records;
    sm.dropped = o->dropped;
    sm.steps = o->steps;
    if (sm.steps)
        snprintf(sm.step_source, sizeof sm.step_source, "%s", gmt_step_source_name((uint64_t)o->step_source));
    char line[GMP_SUMMARY_LINE_MAX];
    size_t n = gmp_summary_format_line(line, sizeof line, &sm);
    if (o->add_keys && strcmp(status, GMP_SUMMARY_STATUS_NOCTX) != 0 && n < sizeof line)
        n = o->add_keys(o->ctx, line, sizeof line);
    int e = gmp_tsink_append_line(summary_file, line, n, sizeof line);
    if (!e)
        return;
    /* Never silent: what the launcher would have said, on stderr. */
    gmp_log_info("cannot add this run's summary to %s (%s): trace %s, %" PRIu64 " bytes, %" PRIu64
                 " windows, %" PRIu64 " records, %" PRIu64 " dropped, status %s",
                 summary_file, strerror(e), t->path, o->bytes, o->windows, o->records, o->dropped, status);
}

void gmp_tsink_say_wrote(const gmp_tsink *t, const gmp_tsink_outcome *o)
{
    char hb[32];
    gmp_summary_human_bytes(o->bytes, hb, sizeof hb);
    char fw[160] = "";
    if (o->fw_seen)
        snprintf(fw, sizeof fw, "; %" PRIu64 " events of the %s", o->fw_events, o->fw_name);
    char st[64] = "";
    if (o->steps)
        snprintf(st, sizeof st, ", %" PRIu64 " step%s by %s", o->steps, o->steps == 1 ? "" : "s",
                 gmt_step_source_name((uint64_t)o->step_source));
    gmp_log_info("wrote %s (%s, %" PRIu64 " window%s%s, %" PRIu64 " records, %" PRIu64 " dropped%s)", t->path,
                 hb, o->windows, o->windows == 1 ? "" : "s", st, o->records, o->dropped, fw);
}
