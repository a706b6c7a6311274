/*
 * --chrome OUT.json: Chrome trace-event JSON, which chrome://tracing and
 * ui.perfetto.dev both open.
 *   process "GPU n: NAME" (pid n+1): one thread per CUDA stream with kernels
 *     and copies as "X" slices (args: grid, block, registers, shared and
 *     local memory), counter tracks "live bytes" and "driver used";
 *   process "host" (the traced pid): one thread per host thread with the
 *     NVTX ranges as "X" slices and marks as instant events;
 *   steps, tags and window edges as global instant events.
 * Timestamps are microseconds (numbers, 3 decimals) from the trace start.
 * Events are written as they are replayed: memory stays bounded by the
 * distinct names, streams and threads.
 *
 * Several traces (one per rank) go into one file: one process per rank,
 * "rank N (host, GPU d)", holding that rank's stream threads ("GPU d stream
 * s"), host threads, and counter tracks "live bytes GPU d"; steps, tags and
 * windows become instants of the rank's process rather than global ones;
 * time is counted from the earliest trace start, so the ranks line up.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <sys/stat.h>

#include "consumer.h"
#include "export.h"
#include "largest.h"
#include "names.h"
#include "progress.h"
#include "tracestr.h"
#include "outfile.h"

/* The consumer's callbacks (consumer.h), in the table below. */
static void gma_chrome_device(gma_replay *r, uint64_t dev);
static void gma_chrome_kernel(gma_replay *r, const gmt_kernel *k);
static void gma_chrome_copy(gma_replay *r, const gmt_copy *cp, int is_memset);
static void gma_chrome_range(gma_replay *r, uint64_t tid, uint32_t name, uint64_t begin, uint64_t end);
static void gma_chrome_mark(gma_replay *r, uint64_t tid, uint32_t name, uint64_t ts);
static void gma_chrome_step(gma_replay *r, const gmt_step *s);
static void gma_chrome_tag(gma_replay *r, const gmt_tag *t);
static void gma_chrome_window(gma_replay *r, uint64_t id, uint64_t ts, int begin);
static void gma_chrome_live(gma_replay *r, uint64_t dev, uint64_t ts, uint64_t live);
static void gma_chrome_driver(gma_replay *r, uint64_t dev, uint64_t ts, uint64_t used);
static void gma_chrome_free(gma_replay *r);

typedef struct gma_chrome {
    FILE *f;
    gma_out *out;           /* f's file: renamed into place at a good close */
    int first;
    gma_map seen;           /* streams (dev << 48 ^ stream) and host threads (tid | 1 << 63) */
    unsigned char dev_named[GMA_MAX_DEVICES];
    gma_strs names;         /* short display names, by string id */
    uint32_t *name_off;
    size_t name_cap;
    uint64_t host_pid;
    int host_named;
    uint64_t events;
    /* several traces: the rank being replayed */
    int multi;
    uint64_t rank_pid;
    int64_t rank;
    uint64_t origin;       /* common time origin */
    int has_origin;
    /* the file's size, watched every 4096 events against what viewers open */
    const char *path;
    gma_replay *r;         /* the replay being written: its progress line, how far it is */
    uint64_t warn_bytes;
    int watched;           /* warned */
    /* --chrome-largest N: the N largest allocations and the memory counters */
    int bounded;
    uint64_t largest_n;
    gma_largest big;       /* the current trace's */
    int oom;
    uint64_t left_kernels, left_copies, left_ranges, left_marks;
    uint64_t allocs_seen, allocs_kept; /* over all traces */
} gma_chrome;

#define GIB (1024.0 * 1024.0 * 1024.0)
#define MIB (1024.0 * 1024.0)

static double us(const gma_replay *r, uint64_t ts)
{
    const gma_chrome *c = r->chrome;
    if (c && c->multi && c->has_origin)
        return (double)(int64_t)(ts - c->origin) / 1000.0;
    return (double)gma_rel(r, ts) / 1000.0;
}

/* The process of a device's tracks, and a stream's thread in it. */
static uint64_t dev_pid(const gma_chrome *c, uint64_t dev) { return c->multi ? c->rank_pid : dev + 1; }
/* Host thread ids are Linux tids (< 2^22): stream threads of a rank's
 * process are numbered from 10^9 per device, clear of them. */
static uint64_t stream_tid(const gma_chrome *c, uint64_t dev, uint64_t stream)
{
    return c->multi ? (dev + 1) * 1000000000ull + stream : stream;
}
/* Instants: global for one trace, the rank's own with several. */
static const char *scope(const gma_chrome *c) { return c->multi ? "p" : "g"; }

/* The file has passed what chrome://tracing opens: said once, on stderr,
 * with the size to expect where the trace is a file being read. The bytes
 * counted are those out of the stream's buffer (64 KiB behind at most). */
static void size_watch(gma_chrome *c)
{
    uint64_t at = c->out->written;
    if (at < c->warn_bytes)
        return;
    c->watched = 1;
    const gma_replay *r = c->r;
    char whole[160] = "";
    struct stat st;
    if (r && r->rd && !c->multi && strcmp(r->path, "-") != 0 && stat(r->path, &st) == 0 && S_ISREG(st.st_mode)) {
        uint64_t read = gmt_reader_offset(r->rd), size = (uint64_t)st.st_size;
        double all = (double)at * (double)size / (double)read;
        if (read > 0 && read < size)
            snprintf(whole, sizeof whole, " at %llu%% of the trace (about %.1f %s in all)",
                     (unsigned long long)(read * 100 / size), all >= GIB ? all / GIB : all / MIB, all >= GIB ? "GiB" : "MiB");
    }
    if (r && r->opt.progress)
        gma_progress_clear(r->opt.progress);
    char lim[40];
    if (c->warn_bytes % (1u << 20) == 0)
        snprintf(lim, sizeof lim, "%llu MiB", (unsigned long long)(c->warn_bytes >> 20));
    else
        snprintf(lim, sizeof lim, "%llu bytes", (unsigned long long)c->warn_bytes);
    fprintf(stderr, "gmem-analyze: warning: --chrome %s has passed %s%s, more than chrome://tracing opens "
                    "(about 256 MiB of JSON; ui.perfetto.dev about 1 GB): %s\n",
            gma_out_shown(c->path), lim, whole,
            c->bounded ? "a smaller --chrome-largest N keeps fewer allocations"
                       : "--chrome-largest N writes the memory counters and the N largest allocations only");
}

static void ev(gma_chrome *c)
{
    fputs(c->first ? "\n" : ",\n", c->f);
    c->first = 0;
    if ((++c->events & 4095) == 0 && !c->watched)
        size_watch(c);
}

static gma_chrome *chrome_new(const char *path, const gma_opts *opt)
{
    gma_chrome *c = calloc(1, sizeof(*c));
    if (!c)
        return NULL;
    c->out = gma_out_open(path);
    if (!c->out) {
        int e = errno;
        free(c);
        errno = e;
        return NULL;
    }
    c->f = c->out->f;
    c->first = 1;
    c->path = path;
    c->warn_bytes = opt->chrome_warn_bytes ? opt->chrome_warn_bytes : GMA_CHROME_WARN_BYTES;
    c->bounded = opt->chrome_bounded;
    c->largest_n = opt->chrome_largest;
    gma_largest_init(&c->big, c->largest_n);
    fputs("{\"traceEvents\":[", c->f);
    return c;
}

/* ---- the bounded form (--chrome-largest N) ------------------------------------- */

static void left_kernel(gma_replay *r, const gmt_kernel *k)
{
    (void)k;
    r->chrome->left_kernels++;
}

static void left_copy(gma_replay *r, const gmt_copy *cp, int is_memset)
{
    (void)cp;
    (void)is_memset;
    r->chrome->left_copies++;
}

static void left_range(gma_replay *r, uint64_t tid, uint32_t name, uint64_t begin, uint64_t end)
{
    (void)tid;
    (void)name;
    (void)begin;
    (void)end;
    r->chrome->left_ranges++;
}

static void left_mark(gma_replay *r, uint64_t tid, uint32_t name, uint64_t ts)
{
    (void)tid;
    (void)name;
    (void)ts;
    r->chrome->left_marks++;
}

static void big_alloc(gma_replay *r, const gma_entry *e, const gmt_mem *m, int pending, uint64_t key)
{
    (void)m;
    (void)pending;
    (void)key;
    gma_chrome *c = r->chrome;
    if (!(e->flags & GMA_E_ACCOUNTED) || !gma_dev_selected(r, e->device))
        return;
    gma_big b;
    memset(&b, 0, sizeof(b));
    b.key = gma_largest_key(e->device, e->addr);
    b.bytes = e->bytes;
    b.t0 = e->ts;
    b.live0 = e->live_after;
    b.step = e->step;
    b.kname = e->kname;
    b.entry = (uint32_t)(e - (const gma_entry *)r->entries.data);
    b.dev = e->device;
    int base = (e->flags & GMA_E_BASELINE) != 0;
    int first = e->window != UINT32_MAX && (int64_t)e->window == r->baseline_win;
    if (gma_largest_alloc(&c->big, &b, base, first) != 0)
        c->oom = 1;
}

/* An entry leaves before its free is accounted: the device's live bytes still hold it. */
static void big_free(gma_replay *r, const gma_entry *e, uint64_t ts)
{
    uint64_t live = r->dev[e->device].live;
    gma_largest_freed(&r->chrome->big, gma_largest_key(e->device, e->addr), ts,
                      live >= e->bytes ? live - e->bytes : 0, e->kname);
}

static void big_dropped(gma_replay *r, const gma_entry *e)
{
    gma_largest_dropped(&r->chrome->big, gma_largest_key(e->device, e->addr), e->free_ts, e->kname);
}

/* The replay's events the Chrome export writes (consumer.h). */
static const gma_consumer chrome_consumer = {
    .device = gma_chrome_device,
    .kernel_selected = gma_chrome_kernel,
    .copy = gma_chrome_copy,
    .range_closed = gma_chrome_range,
    .mark = gma_chrome_mark,
    .step = gma_chrome_step,
    .tag = gma_chrome_tag,
    .window = gma_chrome_window,
    .sample = gma_chrome_driver,
    .live = gma_chrome_live,
    .release = gma_chrome_free,
};

/* The bounded form: the records it keeps as the full one does; kernels,
 * copies, ranges and marks counted, not written; allocations kept by size. */
static const gma_consumer chrome_bounded_consumer = {
    .device = gma_chrome_device,
    .kernel_selected = left_kernel,
    .copy = left_copy,
    .range_closed = left_range,
    .mark = left_mark,
    .step = gma_chrome_step,
    .tag = gma_chrome_tag,
    .window = gma_chrome_window,
    .sample = gma_chrome_driver,
    .alloc = big_alloc,
    .free = big_free,
    .dropped = big_dropped,
    .release = gma_chrome_free,
};

static const gma_consumer *consumer_of(const gma_chrome *c)
{
    return c->bounded ? &chrome_bounded_consumer : &chrome_consumer;
}

int gma_chrome_open(gma_replay *r, const char *path)
{
    gma_chrome *c = chrome_new(path, &r->opt);
    if (!c)
        return -1;
    c->r = r;
    r->chrome = c;
    if (gma_replay_consumer_add(r, consumer_of(c)) != 0) {
        gma_chrome_free(r);
        errno = ENOMEM;
        return -1;
    }
    return 0;
}

/* The display name of a kernel or range string id, cached. */
static const char *name_of(gma_replay *r, uint32_t id, int kernel)
{
    gma_chrome *c = r->chrome;
    if (id == 0 || id >= GMA_MAX_STRING_ID)
        return kernel ? "(unnamed kernel)" : "(unnamed)";
    if (id >= c->name_cap) {
        size_t nc = c->name_cap ? c->name_cap : 1024;
        while (nc <= id)
            nc *= 2;
        uint32_t *n = realloc(c->name_off, nc * sizeof(*n));
        if (!n)
            return "?";
        memset(n + c->name_cap, 0, (nc - c->name_cap) * sizeof(*n));
        c->name_off = n;
        c->name_cap = nc;
    }
    if (!c->name_off[id]) {
        gma_buf b = { 0 };
        size_t len;
        const char *raw = gma_str(r, id, &len);
        if (kernel)
            gma_kernel_display(r, id, 0, &b);
        else if (len) /* a range as recorded, decorations included */
            gma_buf_putn(&b, raw, len);
        else
            gma_range_display(r, id, 1, &b);
        size_t off = gma_strs_add(&c->names, gma_buf_str(&b), b.len);
        gma_buf_free(&b);
        if (off == (size_t)-1 || off >= UINT32_MAX)
            return "?";
        c->name_off[id] = (uint32_t)off + 1;
    }
    return gma_strs_get(&c->names, c->name_off[id] - 1);
}

static uint64_t host_pid(gma_replay *r)
{
    gma_chrome *c = r->chrome;
    if (c->multi)
        return c->rank_pid;
    if (!c->host_named) {
        uint64_t pid = r->has_header ? r->hdr.pid : 0;
        /* keep clear of the device pids 1..64 */
        c->host_pid = pid > GMA_MAX_DEVICES ? pid : 1000000 + pid;
        c->host_named = 1;
        ev(c);
        fprintf(c->f, "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":%llu,\"args\":{\"name\":\"host (pid %llu)\"}}",
                (unsigned long long)c->host_pid, (unsigned long long)pid);
        ev(c);
        fprintf(c->f, "{\"name\":\"process_sort_index\",\"ph\":\"M\",\"pid\":%llu,\"args\":{\"sort_index\":-1}}",
                (unsigned long long)c->host_pid);
    }
    return c->host_pid;
}

static void host_thread(gma_replay *r, uint64_t tid)
{
    gma_chrome *c = r->chrome;
    uint64_t key = tid | (1ull << 63);
    uint32_t v;
    if (gma_map_get(&c->seen, key, &v) || gma_map_put(&c->seen, key, 1) != 0)
        return;
    uint64_t pid = host_pid(r);
    ev(c);
    fprintf(c->f, "{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":%llu,\"tid\":%llu,\"args\":{\"name\":\"thread %llu\"}}",
            (unsigned long long)pid, (unsigned long long)tid, (unsigned long long)tid);
}

static void gma_chrome_device(gma_replay *r, uint64_t dev)
{
    gma_chrome *c = r->chrome;
    if (!c || dev >= GMA_MAX_DEVICES || c->multi) /* a rank's process is named when it ends */
        return;
    const gma_dev *D = &r->dev[dev];
    const char *dn = D->name_off ? gma_strs_get(&r->strs, D->name_off) : "";
    /* named again once the DEVICE record gives the name: the last one wins */
    if (c->dev_named[dev] == 2 || (c->dev_named[dev] == 1 && !dn[0]))
        return;
    c->dev_named[dev] = dn[0] ? 2 : 1;
    ev(c);
    fprintf(c->f, "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":%llu,\"args\":{\"name\":", (unsigned long long)dev + 1);
    gma_buf b = { 0 };
    gma_buf_printf(&b, "GPU %llu%s%s", (unsigned long long)dev, dn[0] ? ": " : "", dn);
    gma_json_str(c->f, gma_buf_str(&b), b.len);
    gma_buf_free(&b);
    fputs("}}", c->f);
    ev(c);
    fprintf(c->f, "{\"name\":\"process_sort_index\",\"ph\":\"M\",\"pid\":%llu,\"args\":{\"sort_index\":%llu}}",
            (unsigned long long)dev + 1, (unsigned long long)dev);
}

static void stream_thread(gma_replay *r, uint64_t dev, uint64_t stream)
{
    gma_chrome *c = r->chrome;
    uint64_t key = (dev << 48) ^ stream;
    uint32_t v;
    if (gma_map_get(&c->seen, key, &v) || gma_map_put(&c->seen, key, 1) != 0)
        return;
    ev(c);
    if (c->multi)
        fprintf(c->f,
                "{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":%llu,\"tid\":%llu,\"args\":{\"name\":\"GPU %llu stream %llu\"}}",
                (unsigned long long)c->rank_pid, (unsigned long long)stream_tid(c, dev, stream),
                (unsigned long long)dev, (unsigned long long)stream);
    else
        fprintf(c->f, "{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":%llu,\"tid\":%llu,\"args\":{\"name\":\"stream %llu\"}}",
                (unsigned long long)dev + 1, (unsigned long long)stream, (unsigned long long)stream);
}

/* A kernel known from its launch (GMEMPROF_KERNELS=launch): an instant
 * event on the launching host thread, not a slice on a GPU stream: its
 * time is the launch call's, and it has no duration. */
static void chrome_launch(gma_replay *r, const gmt_kernel *k)
{
    gma_chrome *c = r->chrome;
    host_thread(r, k->tid);
    ev(c);
    fputs("{\"name\":", c->f);
    gma_json_cstr(c->f, name_of(r, (uint32_t)(k->name < GMA_MAX_STRING_ID ? k->name : 0), 1));
    fprintf(c->f,
            ",\"cat\":\"kernel launch\",\"ph\":\"i\",\"s\":\"t\",\"pid\":%llu,\"tid\":%llu,\"ts\":%.3f,\"args\":{"
            "\"device\":%llu,\"stream\":%llu,\"grid\":\"[%llu,%llu,%llu]\",\"block\":\"[%llu,%llu,%llu]\","
            "\"correlation\":%llu,\"step\":%llu,\"time\":\"launch (GMEMPROF_KERNELS=launch)\"}}",
            (unsigned long long)host_pid(r), (unsigned long long)k->tid, us(r, k->start),
            (unsigned long long)k->device, (unsigned long long)k->stream,
            (unsigned long long)k->grid[0], (unsigned long long)k->grid[1], (unsigned long long)k->grid[2],
            (unsigned long long)k->block[0], (unsigned long long)k->block[1], (unsigned long long)k->block[2],
            (unsigned long long)k->corr, (unsigned long long)k->step);
}

static void gma_chrome_kernel(gma_replay *r, const gmt_kernel *k)
{
    gma_chrome *c = r->chrome;
    if (k->flags & GMT_KERNF_LAUNCH) {
        chrome_launch(r, k);
        return;
    }
    stream_thread(r, k->device, k->stream);
    uint64_t dur = k->end > k->start ? k->end - k->start : 0;
    ev(c);
    fputs("{\"name\":", c->f);
    gma_json_cstr(c->f, name_of(r, (uint32_t)(k->name < GMA_MAX_STRING_ID ? k->name : 0), 1));
    fprintf(c->f,
            ",\"cat\":\"kernel\",\"ph\":\"X\",\"pid\":%llu,\"tid\":%llu,\"ts\":%.3f,\"dur\":%.3f,\"args\":{"
            "\"grid\":\"[%llu,%llu,%llu]\",\"block\":\"[%llu,%llu,%llu]\",\"registers\":%llu,\"static_smem\":%llu,"
            "\"dynamic_smem\":%llu,\"local_mem\":%llu,\"correlation\":%llu,\"step\":%llu}}",
            (unsigned long long)dev_pid(c, k->device), (unsigned long long)stream_tid(c, k->device, k->stream),
            us(r, k->start), (double)dur / 1000.0,
            (unsigned long long)k->grid[0], (unsigned long long)k->grid[1], (unsigned long long)k->grid[2],
            (unsigned long long)k->block[0], (unsigned long long)k->block[1], (unsigned long long)k->block[2],
            (unsigned long long)k->registers, (unsigned long long)k->static_smem,
            (unsigned long long)k->dynamic_smem, (unsigned long long)k->local_mem, (unsigned long long)k->corr,
            (unsigned long long)k->step);
}

static void gma_chrome_copy(gma_replay *r, const gmt_copy *cp, int is_memset)
{
    gma_chrome *c = r->chrome;
    stream_thread(r, cp->device, cp->stream);
    uint64_t dur = cp->end > cp->start ? cp->end - cp->start : 0;
    ev(c);
    if (is_memset)
        fprintf(c->f, "{\"name\":\"memset\",\"cat\":\"memset\"");
    else
        fprintf(c->f, "{\"name\":\"memcpy %s\",\"cat\":\"memcpy\"", gmt_copy_kind_name(cp->copy_kind));
    fprintf(c->f, ",\"ph\":\"X\",\"pid\":%llu,\"tid\":%llu,\"ts\":%.3f,\"dur\":%.3f,\"args\":{\"bytes\":%llu}}",
            (unsigned long long)dev_pid(c, cp->device), (unsigned long long)stream_tid(c, cp->device, cp->stream),
            us(r, cp->start),
            (double)dur / 1000.0, (unsigned long long)cp->bytes);
}

static void gma_chrome_range(gma_replay *r, uint64_t tid, uint32_t name, uint64_t begin, uint64_t end)
{
    gma_chrome *c = r->chrome;
    host_thread(r, tid);
    ev(c);
    fputs("{\"name\":", c->f);
    gma_json_cstr(c->f, name_of(r, name, 0));
    fprintf(c->f, ",\"cat\":\"nvtx\",\"ph\":\"X\",\"pid\":%llu,\"tid\":%llu,\"ts\":%.3f,\"dur\":%.3f}",
            (unsigned long long)host_pid(r), (unsigned long long)tid, us(r, begin),
            (double)(end > begin ? end - begin : 0) / 1000.0);
}

static void gma_chrome_mark(gma_replay *r, uint64_t tid, uint32_t name, uint64_t ts)
{
    gma_chrome *c = r->chrome;
    host_thread(r, tid);
    ev(c);
    fputs("{\"name\":", c->f);
    gma_json_cstr(c->f, name_of(r, name, 0));
    fprintf(c->f, ",\"cat\":\"mark\",\"ph\":\"i\",\"s\":\"t\",\"pid\":%llu,\"tid\":%llu,\"ts\":%.3f}",
            (unsigned long long)host_pid(r), (unsigned long long)tid, us(r, ts));
}

static void gma_chrome_step(gma_replay *r, const gmt_step *s)
{
    gma_chrome *c = r->chrome;
    uint64_t pid = host_pid(r);
    ev(c);
    fprintf(c->f,
            "{\"name\":\"step %llu (%s)\",\"cat\":\"step\",\"ph\":\"i\",\"s\":\"%s\",\"pid\":%llu,\"tid\":0,\"ts\":%.3f,"
            "\"args\":{\"step\":%llu,\"phase\":\"%s\",\"source\":\"%s\"}}",
            (unsigned long long)s->step, gmt_phase_name(s->phase), scope(c), (unsigned long long)pid, us(r, s->ts),
            (unsigned long long)s->step, gmt_phase_name(s->phase), gmt_step_source_name(s->source));
}

static void gma_chrome_tag(gma_replay *r, const gmt_tag *t)
{
    gma_chrome *c = r->chrome;
    uint64_t pid = host_pid(r);
    size_t len;
    const char *nm = gma_str(r, t->name, &len);
    ev(c);
    fputs("{\"name\":", c->f);
    gma_buf b = { 0 };
    gma_buf_puts(&b, "tag ");
    gma_buf_putn(&b, nm, len);
    gma_json_str(c->f, gma_buf_str(&b), b.len);
    gma_buf_free(&b);
    fprintf(c->f, ",\"cat\":\"tag\",\"ph\":\"i\",\"s\":\"%s\",\"pid\":%llu,\"tid\":0,\"ts\":%.3f,\"args\":{\"step\":%llu",
            scope(c), (unsigned long long)pid, us(r, t->ts), (unsigned long long)t->step);
    uint64_t n = t->ndev < GMT_MAX_TAG_DEVICES ? t->ndev : GMT_MAX_TAG_DEVICES;
    for (uint64_t i = 0; i < n; i++)
        fprintf(c->f, ",\"dev%llu_live_bytes\":%llu,\"dev%llu_driver_used_bytes\":%llu",
                (unsigned long long)t->dev[i].device, (unsigned long long)t->dev[i].live_bytes,
                (unsigned long long)t->dev[i].device, (unsigned long long)t->dev[i].driver_used);
    fputs("}}", c->f);
}

static void gma_chrome_window(gma_replay *r, uint64_t id, uint64_t ts, int begin)
{
    gma_chrome *c = r->chrome;
    uint64_t pid = host_pid(r);
    ev(c);
    fprintf(c->f, "{\"name\":\"window %llu %s\",\"cat\":\"window\",\"ph\":\"i\",\"s\":\"%s\",\"pid\":%llu,\"tid\":0,\"ts\":%.3f}",
            (unsigned long long)id, begin ? "begin" : "end", scope(c), (unsigned long long)pid, us(r, ts));
}

static void gma_chrome_live(gma_replay *r, uint64_t dev, uint64_t ts, uint64_t live)
{
    gma_chrome *c = r->chrome;
    ev(c);
    if (c->multi) /* counters are per (process, name): one per device of the rank */
        fprintf(c->f, "{\"name\":\"live bytes GPU %llu\",\"ph\":\"C\",\"pid\":%llu,\"ts\":%.3f,\"args\":{\"live_bytes\":%llu}}",
                (unsigned long long)dev, (unsigned long long)c->rank_pid, us(r, ts), (unsigned long long)live);
    else
        fprintf(c->f, "{\"name\":\"live bytes\",\"ph\":\"C\",\"pid\":%llu,\"ts\":%.3f,\"args\":{\"live_bytes\":%llu}}",
                (unsigned long long)dev + 1, us(r, ts), (unsigned long long)live);
}

static void gma_chrome_driver(gma_replay *r, uint64_t dev, uint64_t ts, uint64_t used)
{
    gma_chrome *c = r->chrome;
    ev(c);
    if (c->multi)
        fprintf(c->f,
                "{\"name\":\"driver used GPU %llu\",\"ph\":\"C\",\"pid\":%llu,\"ts\":%.3f,\"args\":{\"driver_used_bytes\":%llu}}",
                (unsigned long long)dev, (unsigned long long)c->rank_pid, us(r, ts), (unsigned long long)used);
    else
        fprintf(c->f,
                "{\"name\":\"driver used\",\"ph\":\"C\",\"pid\":%llu,\"ts\":%.3f,\"args\":{\"driver_used_bytes\":%llu}}",
                (unsigned long long)dev + 1, us(r, ts), (unsigned long long)used);
}

/* A kept allocation's thread: lane k of its device, clear of the stream
 * threads (stream numbers, or 10^9 per device in a rank's process). */
static uint64_t lane_tid(const gma_chrome *c, uint64_t dev, uint32_t lane)
{
    return (c->multi ? (dev + 1) * 1000000000ull : 0) + 900000000ull + lane;
}

/* The bounded form's allocations, each an "X" slice on a lane of its device
 * with the live-bytes counter at its start and end, and each device's peak. */
static void write_largest(gma_replay *r)
{
    gma_chrome *c = r->chrome;
    uint32_t nl[256];
    size_t n;
    int oom;
    const gma_big *b = gma_largest_finish(&c->big, r->last_ts, nl, &n, &oom);
    c->oom |= oom;
    c->allocs_seen += c->big.offered;
    c->allocs_kept += n;
    for (unsigned d = 0; d < 256; d++)
        for (uint32_t k = 0; k < nl[d]; k++) {
            ev(c);
            char gpu[24] = "";
            if (c->multi) /* a rank's process holds all its devices */
                snprintf(gpu, sizeof gpu, "GPU %u ", d);
            fprintf(c->f, "{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":%llu,\"tid\":%llu,\"args\":{\"name\":\""
                          "%slargest allocations %u\"}}",
                    (unsigned long long)dev_pid(c, d), (unsigned long long)lane_tid(c, d, k), gpu, k + 1);
        }
    gma_buf nm = { 0 };
    for (size_t i = 0; i < n; i++) {
        const gma_big *a = &b[i];
        uint32_t kname = a->kname;
        if (a->state == GMA_BIG_OPEN && a->entry < r->entries.len) /* its kernel may have come later */
            kname = GMA_VEC_AT(&r->entries, gma_entry, a->entry).kname;
        gma_buf_reset(&nm);
        if (kname == GMA_NAME_UNATTR || kname == GMA_NAME_BASELINE || kname >= GMA_MAX_STRING_ID)
            gma_kernel_display(r, kname, 0, &nm);
        else
            gma_buf_puts(&nm, name_of(r, kname, 1));
        ev(c);
        fputs("{\"name\":", c->f);
        gma_json_str(c->f, gma_buf_str(&nm), nm.len);
        static const char *const ends[] = { "live at the end", "freed", "its free was not recorded" };
        fprintf(c->f,
                ",\"cat\":\"allocation\",\"ph\":\"X\",\"pid\":%llu,\"tid\":%llu,\"ts\":%.3f,\"dur\":%.3f,\"args\":{"
                "\"bytes\":%llu,\"address\":\"0x%llx\",\"step\":%llu,\"end\":\"%s\"}}",
                (unsigned long long)dev_pid(c, a->dev), (unsigned long long)lane_tid(c, a->dev, a->lane), us(r, a->t0),
                (double)(a->t1 - a->t0) / 1000.0, (unsigned long long)a->bytes,
                (unsigned long long)(a->key ^ ((uint64_t)a->dev << 58)), (unsigned long long)a->step,
                ends[a->state <= GMA_BIG_DROPPED ? a->state : 0]);
        gma_chrome_live(r, a->dev, a->t0, a->live0);
        if (a->state == GMA_BIG_FREED)
            gma_chrome_live(r, a->dev, a->t1, a->live1);
    }
    gma_buf_free(&nm);
    for (unsigned d = 0; d < GMA_MAX_DEVICES; d++)
        if (r->dev[d].present && r->dev[d].has_peak && gma_dev_selected(r, d))
            gma_chrome_live(r, d, r->dev[d].peak_ts, r->dev[d].peak);
    gma_largest_release(&c->big);
    gma_largest_init(&c->big, c->largest_n);
}

/* What a bounded export kept and left out, for the note, the file and the "wrote" line. */
static void bounded_note(const gma_chrome *c, char *out, size_t cap)
{
    snprintf(out, cap,
             "the %llu largest of %llu allocations (--chrome-largest %llu), the live-bytes counter at their ends and "
             "the peak, steps and windows; %llu kernels, %llu copies, %llu ranges and %llu marks left out",
             (unsigned long long)c->allocs_kept, (unsigned long long)c->allocs_seen, (unsigned long long)c->largest_n,
             (unsigned long long)c->left_kernels, (unsigned long long)c->left_copies,
             (unsigned long long)c->left_ranges, (unsigned long long)c->left_marks);
}

/* The note as an instant at the start (seen in the viewer), and in otherData. */
static void bounded_instant(gma_chrome *c, uint64_t pid, double ts, const char *scope_)
{
    char note[400], t[440];
    bounded_note(c, note, sizeof note);
    snprintf(t, sizeof t, "NOTE: bounded export: %s", note);
    ev(c);
    fputs("{\"name\":", c->f);
    gma_json_cstr(c->f, t);
    fprintf(c->f, ",\"cat\":\"note\",\"ph\":\"i\",\"s\":\"%s\",\"pid\":%llu,\"tid\":0,\"ts\":%.3f}", scope_,
            (unsigned long long)pid, ts);
}

static void bounded_other(const gma_chrome *c)
{
    if (!c->bounded)
        return;
    fprintf(c->f,
            ",\"bounded\":{\"largest\":%llu,\"allocations\":%llu,\"allocations_kept\":%llu,"
            "\"kernels_left_out\":%llu,\"copies_left_out\":%llu,\"ranges_left_out\":%llu,\"marks_left_out\":%llu}",
            (unsigned long long)c->largest_n, (unsigned long long)c->allocs_seen, (unsigned long long)c->allocs_kept,
            (unsigned long long)c->left_kernels, (unsigned long long)c->left_copies,
            (unsigned long long)c->left_ranges, (unsigned long long)c->left_marks);
}

int gma_chrome_close(gma_replay *r) { return gma_chrome_finish(r, NULL, 0); }

int gma_chrome_finish(gma_replay *r, char *note, size_t cap)
{
    gma_chrome *c = r->chrome;
    if (note && cap)
        note[0] = 0;
    if (!c)
        return 0;
    if (c->bounded) {
        write_largest(r);
        bounded_instant(c, host_pid(r), 0.0, "g");
        if (note && cap)
            bounded_note(c, note, cap);
    }
    /* the last events, past the last look every 4096 */
    if (!c->watched && fflush(c->f) == 0)
        size_watch(c);
    char w[400];
    int warned = gma_trace_warning(r, w, sizeof(w));
    if (warned) { /* visible in the viewer: a global instant at the cut */
        uint64_t pid = host_pid(r);
        ev(c);
        fputs("{\"name\":", c->f);
        char t[440];
        snprintf(t, sizeof(t), "WARNING: %s", w);
        gma_json_cstr(c->f, t);
        fprintf(c->f, ",\"cat\":\"warning\",\"ph\":\"i\",\"s\":\"g\",\"pid\":%llu,\"tid\":0,\"ts\":%.3f}",
                (unsigned long long)pid, us(r, r->last_ts));
    }
    fputs("\n],\n\"displayTimeUnit\":\"ms\",\n\"otherData\":{\"producer\":\"gmem-analyze " GMEMPROF_VERSION "\",\"trace\":", c->f);
    gma_json_cstr(c->f, r->path);
    if (warned) {
        fputs(",\"warning\":", c->f);
        gma_json_cstr(c->f, w);
    }
    bounded_other(c);
    fprintf(c->f, ",\"events\":%llu}}\n", (unsigned long long)c->events);
    int oom = c->oom;
    int err = gma_out_close(c->out, !oom) != 0;
    c->out = NULL;
    c->f = NULL;
    gma_chrome_free(r);
    if (oom)
        errno = ENOMEM;
    return err || oom ? -1 : 0;
}

static void chrome_release(gma_chrome *c)
{
    gma_out_close(c->out, 0); /* unfinished: the target keeps what it held */
    gma_largest_release(&c->big);
    gma_map_free(&c->seen);
    gma_strs_free(&c->names);
    free(c->name_off);
    free(c);
}

static void gma_chrome_free(gma_replay *r)
{
    gma_chrome *c = r->chrome;
    if (!c)
        return;
    const gma_consumer *t = consumer_of(c);
    chrome_release(c);
    r->chrome = NULL;
    gma_replay_consumer_remove(r, t);
}

/* ---- several traces ------------------------------------------------------------ */

struct gma_chrome *gma_chrome_multi_open(const char *path, uint64_t origin, int has_origin, const gma_opts *opt)
{
    gma_chrome *c = chrome_new(path, opt);
    if (!c)
        return NULL;
    c->multi = 1;
    c->origin = origin;
    c->has_origin = has_origin;
    return c;
}

void gma_chrome_attach(gma_replay *r, struct gma_chrome *c, uint64_t pid, int64_t rank)
{
    /* string ids, streams and threads are the trace's own: start afresh */
    gma_map_free(&c->seen);
    memset(&c->seen, 0, sizeof(c->seen));
    gma_strs_free(&c->names);
    free(c->name_off);
    c->name_off = NULL;
    c->name_cap = 0;
    c->rank_pid = pid;
    c->rank = rank;
    c->r = r;
    r->chrome = c;
    /* cannot fail: there are three consumers, and room for GMA_MAX_CONSUMERS */
    (void)gma_replay_consumer_add(r, consumer_of(c));
}

void gma_chrome_detach(gma_replay *r)
{
    gma_chrome *c = r->chrome;
    if (!c)
        return;
    if (c->bounded)
        write_largest(r);
    /* the process is named now that the header and devices are known */
    gma_buf b = { 0 };
    gma_buf_printf(&b, "rank %lld (%s", (long long)c->rank, r->has_header ? gma_strs_get(&r->strs, r->hdr_host) : "?");
    int n = 0;
    for (unsigned d = 0; d < GMA_MAX_DEVICES; d++)
        if (r->dev[d].present && gma_dev_selected(r, d))
            gma_buf_printf(&b, "%s%u", n++ ? "," : ", GPU ", d);
    gma_buf_putc(&b, ')');
    ev(c);
    fprintf(c->f, "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":%llu,\"args\":{\"name\":", (unsigned long long)c->rank_pid);
    gma_json_str(c->f, gma_buf_str(&b), b.len);
    fputs("}}", c->f);
    gma_buf_free(&b);
    ev(c);
    fprintf(c->f, "{\"name\":\"process_sort_index\",\"ph\":\"M\",\"pid\":%llu,\"args\":{\"sort_index\":%lld}}",
            (unsigned long long)c->rank_pid, (long long)c->rank);
    char w[400];
    if (gma_trace_warning(r, w, sizeof(w))) {
        ev(c);
        char t[440];
        snprintf(t, sizeof(t), "WARNING: %s", w);
        fputs("{\"name\":", c->f);
        gma_json_cstr(c->f, t);
        fprintf(c->f, ",\"cat\":\"warning\",\"ph\":\"i\",\"s\":\"p\",\"pid\":%llu,\"tid\":0,\"ts\":%.3f}",
                (unsigned long long)c->rank_pid, us(r, r->last_ts));
    }
    c->r = NULL;
    r->chrome = NULL;
    gma_replay_consumer_remove(r, consumer_of(c));
}

void gma_chrome_multi_abort(struct gma_chrome *c)
{
    if (c)
        chrome_release(c);
}

int gma_chrome_multi_close(struct gma_chrome *c, const char *const *paths, size_t n)
{
    return gma_chrome_multi_finish(c, paths, n, NULL, 0);
}

int gma_chrome_multi_finish(struct gma_chrome *c, const char *const *paths, size_t n, char *note, size_t cap)
{
    if (note && cap)
        note[0] = 0;
    if (!c)
        return 0;
    if (c->bounded) {
        bounded_instant(c, c->rank_pid, 0.0, "g");
        if (note && cap)
            bounded_note(c, note, cap);
    }
    if (!c->watched && fflush(c->f) == 0)
        size_watch(c);
    fputs("\n],\n\"displayTimeUnit\":\"ms\",\n\"otherData\":{\"producer\":\"gmem-analyze " GMEMPROF_VERSION "\",\"traces\":[", c->f);
    for (size_t i = 0; i < n; i++) {
        if (i)
            fputc(',', c->f);
        gma_json_cstr(c->f, paths[i]);
    }
    fputc(']', c->f);
    bounded_other(c);
    fprintf(c->f, ",\"events\":%llu}}\n", (unsigned long long)c->events);
    int oom = c->oom;
    int err = gma_out_close(c->out, !oom) != 0;
    c->out = NULL;
    c->f = NULL;
    chrome_release(c);
    if (oom)
        errno = ENOMEM;
    return err || oom ? -1 : 0;
}
