/*
 * The progress line (progress.h): when to draw, what, and how to erase.
 */
#include "progress.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define NS 1000000000ull
#define MIB (1024.0 * 1024.0)

gma_progress_mode gma_progress_choose(int asked, int stderr_is_tty, const char *term)
{
    if (asked == 0)
        return GMA_PROGRESS_OFF;
    /* a terminal still gets the line it can rewrite; a log gets lines */
    if (stderr_is_tty && term && *term && strcmp(term, "dumb") != 0)
        return GMA_PROGRESS_TTY;
    return asked == 1 ? GMA_PROGRESS_LINES : GMA_PROGRESS_OFF;
}

uint64_t gma_progress_clock_mono(void *ctx)
{
    (void)ctx;
    struct timespec ts;
    if (clock_gettime(CLOCK_MONOTONIC, &ts) != 0)
        return 0;
    return (uint64_t)ts.tv_sec * NS + (uint64_t)ts.tv_nsec;
}

void gma_progress_write_stderr(void *ctx, const char *s, size_t n)
{
    (void)ctx;
    /* the progress is a courtesy: a failed write is not the run's failure */
    while (n > 0) {
        ssize_t w = write(STDERR_FILENO, s, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return;
        s += w;
        n -= (size_t)w;
    }
}

void gma_progress_init(gma_progress *p, gma_progress_mode mode, gma_progress_clock_fn clock, void *clock_ctx,
                       gma_progress_write_fn write, void *write_ctx)
{
    memset(p, 0, sizeof(*p));
    p->mode = mode;
    p->clock = clock ? clock : gma_progress_clock_mono;
    p->clock_ctx = clock_ctx;
    p->write = write ? write : gma_progress_write_stderr;
    p->write_ctx = write_ctx;
    p->after_ns = NS;
    p->every_ns = mode == GMA_PROGRESS_LINES ? NS : NS / 10;
    p->width = 80;
    p->run_t0 = mode == GMA_PROGRESS_OFF ? 0 : p->clock(p->clock_ctx);
}

/* Columns of UTF-8 text: its bytes that start a character. */
static size_t columns(const char *s, size_t n)
{
    size_t c = 0;
    for (size_t i = 0; i < n; i++)
        c += ((unsigned char)s[i] & 0xC0) != 0x80;
    return c;
}

/* The offset in s where its last cols columns start. */
static size_t tail_from(const char *s, size_t n, size_t cols)
{
    size_t i = n;
    while (i > 0 && cols > 0) {
        i--;
        if (((unsigned char)s[i] & 0xC0) != 0x80)
            cols--;
    }
    while (i < n && ((unsigned char)s[i] & 0xC0) == 0x80)
        i++;
    return i;
}

/* The numbers after WHAT: ": 12.5 of 305.3 MiB (4%), 4.1 M records, 24.5 M records/s". */
static void numbers(char *buf, size_t cap, uint64_t done, uint64_t total, uint64_t records, uint64_t ns)
{
    size_t len = 0;
    buf[0] = 0;
    if (!done && !records)
        return;
#define ADD(...) (len += (size_t)snprintf(buf + len, len < cap ? cap - len : 0, __VA_ARGS__), len = len < cap ? len : cap - 1)
    const char *sep = ": ";
    if (total) {
        uint64_t pct = done >= total ? 100 : done * 100 / total;
        ADD("%s%.1f of %.1f MiB (%llu%%)", sep, (double)done / MIB, (double)total / MIB, (unsigned long long)pct);
        sep = ", ";
    } else if (done) {
        ADD("%s%.1f MiB", sep, (double)done / MIB);
        sep = ", ";
    }
    if (records) {
        if (records < 1000000)
            ADD("%s%llu records", sep, (unsigned long long)records);
        else
            ADD("%s%.1f M records", sep, (double)records / 1e6);
        if (ns)
            ADD(", %.1f M records/s", (double)records * 1e3 / (double)ns);
    }
#undef ADD
}

size_t gma_progress_format(char *buf, size_t cap, unsigned width, const char *what, uint64_t done, uint64_t total,
                           uint64_t records, uint64_t elapsed_ns)
{
    char num[160];
    if (cap == 0)
        return 0;
    numbers(num, sizeof num, done, total, records, elapsed_ns);
    size_t wn = strlen(what), nn = strlen(num);
    size_t room = width ? width - 1 : (size_t)-1;
    size_t wcols = columns(what, wn), ncols = columns(num, nn);
    size_t len = 0;
    if (wcols + ncols <= room || !width) {
        len = (size_t)snprintf(buf, cap, "%s%s", what, num);
    } else {
        /* too wide: WHAT's first word, "...", and as much of its end as fits
         * (a path's file name), then the numbers whole */
        const char *sp = memchr(what, ' ', wn);
        size_t head = sp ? (size_t)(sp - what) + 1 : 0;
        size_t hcols = columns(what, head);
        if (hcols + 3 + ncols < room && head < wn) {
            size_t keep = room - hcols - 3 - ncols;
            size_t from = tail_from(what, wn, keep);
            if (from < head)
                from = head;
            len = (size_t)snprintf(buf, cap, "%.*s...%s%s", (int)head, what, what + from, num);
        } else { /* too narrow even for that: the line, cut */
            len = (size_t)snprintf(buf, cap, "%s%s", what, num);
            if (len >= cap)
                len = cap - 1;
            size_t cut = tail_from(buf, len, columns(buf, len) - room);
            buf[cut] = 0;
            len = cut;
        }
    }
    return len < cap ? len : cap - 1;
}

static void put(gma_progress *p, const char *s, size_t n) { p->write(p->write_ctx, s, n); }

void gma_progress_clear(gma_progress *p)
{
    if (p->mode != GMA_PROGRESS_TTY || !p->shown)
        return;
    char sp[256];
    put(p, "\r", 1);
    for (size_t left = p->shown; left > 0;) {
        size_t k = left < sizeof sp ? left : sizeof sp;
        memset(sp, ' ', k);
        put(p, sp, k);
        left -= k;
    }
    put(p, "\r", 1);
    p->shown = 0;
}

static void draw(gma_progress *p, uint64_t now)
{
    char line[512];
    uint64_t ns = now - p->t0;
    if (p->mode == GMA_PROGRESS_TTY) {
        size_t n = gma_progress_format(line + 1, sizeof line - 1, p->width, p->what, p->done, p->total, p->records, ns);
        line[0] = '\r';
        size_t cols = columns(line + 1, n);
        put(p, line, n + 1);
        /* a shorter line than the last: blank the rest of it */
        for (size_t i = cols; i < p->shown; i++)
            put(p, " ", 1);
        if (cols < p->shown) {
            put(p, "\r", 1);
            put(p, line + 1, n);
        }
        p->shown = cols;
    } else {
        static const char pre[] = "gmem-analyze: ";
        memcpy(line, pre, sizeof pre - 1);
        size_t n = gma_progress_format(line + sizeof pre - 1, sizeof line - sizeof pre, 0, p->what, p->done, p->total,
                                       p->records, ns);
        n += sizeof pre - 1;
        line[n++] = '\n';
        put(p, line, n);
    }
    p->drawn = 1;
    p->last = now;
}

void gma_progress_begin(gma_progress *p, const char *what, uint64_t total)
{
    if (p->mode == GMA_PROGRESS_OFF)
        return;
    if (p->active)
        gma_progress_end(p);
    snprintf(p->what, sizeof p->what, "%s", what);
    p->active = 1;
    p->drawn = p->counted = 0;
    p->total = total;
    p->done = p->records = 0;
    p->t0 = p->last = p->clock(p->clock_ctx);
    if (p->t0 - p->run_t0 >= p->after_ns)
        draw(p, p->t0); /* a long run says each of its steps as it starts */
}

void gma_progress_update(gma_progress *p, uint64_t done, uint64_t records)
{
    if (p->mode == GMA_PROGRESS_OFF || !p->active)
        return;
    p->done = done;
    p->records = records;
    uint64_t now = p->clock(p->clock_ctx);
    if (now - p->run_t0 < p->after_ns)
        return;
    /* the task's first numbers at once, even just after its name */
    if (p->counted && now - p->last < p->every_ns)
        return;
    p->counted = 1;
    draw(p, now);
}

void gma_progress_end(gma_progress *p)
{
    if (p->mode == GMA_PROGRESS_OFF || !p->active)
        return;
    p->active = 0;
    if (p->mode == GMA_PROGRESS_TTY) {
        gma_progress_clear(p);
        return;
    }
    if (!p->drawn)
        return;
    /* a log's last line of the task: its totals and time */
    uint64_t now = p->clock(p->clock_ctx), ns = now - p->t0;
    char line[512];
    int n = snprintf(line, sizeof line, "gmem-analyze: %s: done in %.1f s", p->what, (double)ns / 1e9);
    if (n < 0 || (size_t)n >= sizeof line)
        n = (int)sizeof line - 1;
    char num[160];
    numbers(num, sizeof num, p->done, p->total, p->records, ns);
    /* the numbers follow as ", ..." rather than ": ..." */
    int m = snprintf(line + n, sizeof line - (size_t)n, "%s%s\n", num[0] ? ", " : "", num[0] ? num + 2 : "");
    if (m < 0 || (size_t)m >= sizeof line - (size_t)n)
        m = (int)(sizeof line - (size_t)n - 1);
    put(p, line, (size_t)n + (size_t)m);
}
