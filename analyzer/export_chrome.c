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

#include "consumer.h"
#include "export.h"
#include "names.h"
#include "tracestr.h"
#include "outfile.h"

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
} gma_chrome;

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

static void ev(gma_chrome *c)
{
    fputs(c->first ? "\n" : ",\n", c->f);
    c->first = 0;
    c->events++;
}

static gma_chrome *chrome_new(const char *path)
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
    fputs("{\"traceEvents\":[", c->f);
    return c;
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

int gma_chrome_open(gma_replay *r, const char *path)
{
    gma_chrome *c = chrome_new(path);
    if (!c)
        return -1;
    r->chrome = c;
    if (gma_replay_consumer_add(r, &chrome_consumer) != 0) {
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

void gma_chrome_device(gma_replay *r, uint64_t dev)
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

void gma_chrome_kernel(gma_replay *r, const gmt_kernel *k)
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

void gma_chrome_copy(gma_replay *r, const gmt_copy *cp, int is_memset)
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

void gma_chrome_range(gma_replay *r, uint64_t tid, uint32_t name, uint64_t begin, uint64_t end)
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

void gma_chrome_mark(gma_replay *r, uint64_t tid, uint32_t name, uint64_t ts)
{
    gma_chrome *c = r->chrome;
    host_thread(r, tid);
    ev(c);
    fputs("{\"name\":", c->f);
    gma_json_cstr(c->f, name_of(r, name, 0));
    fprintf(c->f, ",\"cat\":\"mark\",\"ph\":\"i\",\"s\":\"t\",\"pid\":%llu,\"tid\":%llu,\"ts\":%.3f}",
            (unsigned long long)host_pid(r), (unsigned long long)tid, us(r, ts));
}

void gma_chrome_step(gma_replay *r, const gmt_step *s)
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

void gma_chrome_tag(gma_replay *r, const gmt_tag *t)
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

void gma_chrome_window(gma_replay *r, uint64_t id, uint64_t ts, int begin)
{
    gma_chrome *c = r->chrome;
    uint64_t pid = host_pid(r);
    ev(c);
    fprintf(c->f, "{\"name\":\"window %llu %s\",\"cat\":\"window\",\"ph\":\"i\",\"s\":\"%s\",\"pid\":%llu,\"tid\":0,\"ts\":%.3f}",
            (unsigned long long)id, begin ? "begin" : "end", scope(c), (unsigned long long)pid, us(r, ts));
}

void gma_chrome_live(gma_replay *r, uint64_t dev, uint64_t ts, uint64_t live)
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

void gma_chrome_driver(gma_replay *r, uint64_t dev, uint64_t ts, uint64_t used)
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

int gma_chrome_close(gma_replay *r)
{
    gma_chrome *c = r->chrome;
    if (!c)
        return 0;
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
    fprintf(c->f, ",\"events\":%llu}}\n", (unsigned long long)c->events);
    int err = gma_out_close(c->out, 1) != 0;
    c->out = NULL;
    c->f = NULL;
    gma_chrome_free(r);
    return err ? -1 : 0;
}

static void chrome_release(gma_chrome *c)
{
    gma_out_close(c->out, 0); /* unfinished: the target keeps what it held */
    gma_map_free(&c->seen);
    gma_strs_free(&c->names);
    free(c->name_off);
    free(c);
}

void gma_chrome_free(gma_replay *r)
{
    gma_chrome *c = r->chrome;
    if (!c)
        return;
    chrome_release(c);
    r->chrome = NULL;
    gma_replay_consumer_remove(r, &chrome_consumer);
}

/* ---- several traces ------------------------------------------------------------ */

struct gma_chrome *gma_chrome_multi_open(const char *path, uint64_t origin, int has_origin)
{
    gma_chrome *c = chrome_new(path);
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
    r->chrome = c;
    /* cannot fail: there are three consumers, and room for GMA_MAX_CONSUMERS */
    (void)gma_replay_consumer_add(r, &chrome_consumer);
}

void gma_chrome_detach(gma_replay *r)
{
    gma_chrome *c = r->chrome;
    if (!c)
        return;
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
    r->chrome = NULL;
    gma_replay_consumer_remove(r, &chrome_consumer);
}

void gma_chrome_multi_abort(struct gma_chrome *c)
{
    if (c)
        chrome_release(c);
}

int gma_chrome_multi_close(struct gma_chrome *c, const char *const *paths, size_t n)
{
    if (!c)
        return 0;
    fputs("\n],\n\"displayTimeUnit\":\"ms\",\n\"otherData\":{\"producer\":\"gmem-analyze " GMEMPROF_VERSION "\",\"traces\":[", c->f);
    for (size_t i = 0; i < n; i++) {
        if (i)
            fputc(',', c->f);
        gma_json_cstr(c->f, paths[i]);
    }
    fprintf(c->f, "],\"events\":%llu}}\n", (unsigned long long)c->events);
    int err = gma_out_close(c->out, 1) != 0;
    c->out = NULL;
    c->f = NULL;
    chrome_release(c);
    return err ? -1 : 0;
}
