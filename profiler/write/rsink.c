/*
 * The recorder sink (rsink.h): the flight recorder's share of the records.
 */
#include "rsink.h"

#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "gmt_names.h"
#include "log.h"
#include "summary.h"

int gmp_rsink_init(gmp_rsink *s, const gmp_rsink_settings *set, uint64_t ts)
{
    memset(s, 0, sizeof *s);
    s->set = *set;
    s->rec = gmp_rec_create(set->steps, set->seconds * 1000000000ull, set->max_mb << 20);
    gmt_writer_opts wo = {set->zstd_level, 0};
    s->ring_w = s->rec ? gmt_writer_open_sink(gmp_rec_sink_records, s->rec, &wo) : NULL;
    s->base_w = s->rec ? gmt_writer_open_sink(gmp_rec_sink_baseline, s->rec, &wo) : NULL;
    if (!s->rec || !s->ring_w || !s->base_w)
        return -1;
    gmp_rec_begin(s->rec, 0, 0, ts);
    return 0;
}

void gmp_rsink_close(gmp_rsink *s)
{
    gmt_writer_close(s->ring_w);
    gmt_writer_close(s->base_w);
    s->ring_w = s->base_w = NULL;
}

void gmp_rsink_free(gmp_rsink *s)
{
    gmp_rsink_close(s);
    gmp_rec_destroy(s->rec);
    s->rec = NULL;
}

void gmp_rsink_status(gmp_rsink *s, gmt_status st)
{
    if (st == GMT_OK || s->ring_error)
        return;
    s->ring_error = 1;
    gmp_log_error("the flight recorder could not compress a frame (%s); its dumps may lack records",
                  gmt_status_str(st));
}

static void keep_device(gmp_rsink *s, const gmt_record *r)
{
    uint64_t d = r->u.device.device;
    if (d >= GMP_MAX_DEVICES)
        return;
    s->devs[d] = *r;
    size_t n = r->u.device.name.len < sizeof s->dev_names[d] ? r->u.device.name.len : sizeof s->dev_names[d];
    if (n)
        memcpy(s->dev_names[d], r->u.device.name.ptr, n);
    s->devs[d].u.device.name = (gmt_bytes){s->dev_names[d], (uint32_t)n};
    s->dev_have[d] = 1;
}

/* A record's time on the trace clock, 0 for a record that has none. */
static uint64_t rec_ts(const gmt_record *r)
{
    switch (r->type) {
    case GMT_REC_ALLOC:
    case GMT_REC_FREE: return r->u.mem.ts;
    case GMT_REC_BLOCK: return r->u.block.ts;
    case GMT_REC_RANGE_BEGIN:
    case GMT_REC_RANGE_END: return r->u.range.ts;
    case GMT_REC_KERNEL: return r->u.kernel.start;
    default: return 0;
    }
}

int gmp_rsink_take(gmp_rsink *s, const gmt_record *r, gmp_rsink_split *split)
{
    memset(split, 0, sizeof *split);
    switch (r->type) {
    case GMT_REC_WINDOW_BEGIN:
        s->skip_ranges = 1; /* the RANGE_BEGINs of its baseline: the ring has them */
        return 0;
    case GMT_REC_WINDOW_END:
        return 0; /* a dump is one window of its own */
    case GMT_REC_HEADER:
    case GMT_REC_TRAILER:
    case GMT_REC_STRING:
    case GMT_REC_OOM:
    case GMT_REC_LIVE:
        return 0; /* the trace's, beside the recorder; a dump writes its own */
    case GMT_REC_ALLOC:
        if (r->u.mem.flags & GMT_MEMF_BASELINE)
            return 0; /* (the chunks carry their own baselines) */
        break;
    case GMT_REC_BLOCK:
        if (r->u.block.flags & GMT_BLKF_BASELINE)
            return 0;
        break;
    case GMT_REC_RANGE_BEGIN:
        if (s->skip_ranges)
            return 0;
        break;
    case GMT_REC_KERNEL:
    case GMT_REC_MEMCPY:
    case GMT_REC_MEMSET:
        if (!s->set.kernels)
            return 0; /* the trace's windows collect them; the ring keeps them only when asked */
        break;
    case GMT_REC_DEVICE:
        keep_device(s, r);
        return 0;
    case GMT_REC_STEP: {
        s->skip_ranges = 0;
        /* A chunk begins where a step does (the first chunk is step 0's).
         * Another transition in the same step is a phase change of the
         * trace's schedule (time, capture): not the ring's, whose dump is
         * one window. */
        int same = r->u.step.step == s->step;
        if (same && s->step_seen)
            return 0;
        s->step_seen = 1;
        if (!same) {
            s->step = r->u.step.step;
            s->steps = 1;
            *split = (gmp_rsink_split){.due = 1, .is_step = 1, .step_known = 1, .step = r->u.step.step,
                                       .ts = r->u.step.ts};
        }
        return 1;
    }
    default:
        break;
    }
    s->skip_ranges = 0;
    /* Without steps, a chunk ends a quarter of the kept span after it
     * began, by the records' own times (recorder.h) */
    size_t cap = (size_t)s->set.max_mb << 20;
    uint64_t ts = rec_ts(r), start = gmp_rec_current_start(s->rec);
    if (gmp_rec_current_bytes(s->rec) > cap / 4 ||
        (!s->steps && ts > start && ts - start > s->set.seconds * 250000000ull))
        *split = (gmp_rsink_split){.due = 1, .ts = ts};
    return 1;
}

void gmp_rsink_sync(gmp_rsink *s)
{
    gmp_rec_set_counts(s->rec, s->base_records, s->base_frames, gmt_writer_records(s->ring_w) - s->chunk_rec0,
                       gmt_writer_frames(s->ring_w) - s->chunk_frames0);
}

int gmp_rsink_begin(gmp_rsink *s, uint64_t step, int is_step, uint64_t ts)
{
    if (gmp_rec_begin(s->rec, step, is_step, ts) != 0)
        return -1;
    s->chunk_rec0 = gmt_writer_records(s->ring_w);
    s->chunk_frames0 = gmt_writer_frames(s->ring_w);
    return 0;
}

gmt_writer *gmp_rsink_base_writer(gmp_rsink *s)
{
    s->base_r0 = gmt_writer_records(s->base_w);
    s->base_f0 = gmt_writer_frames(s->base_w);
    return s->base_w;
}

void gmp_rsink_base_done(gmp_rsink *s)
{
    s->base_records = gmt_writer_records(s->base_w) - s->base_r0;
    s->base_frames = gmt_writer_frames(s->base_w) - s->base_f0;
    gmp_rec_set_counts(s->rec, s->base_records, s->base_frames, 0, 0);
}

/* ---- dumps ---- */

void gmp_rsink_dump_name(uint64_t k, const char *trace_path, int beside, char *out, size_t cap)
{
    if (gmt_dump_name(out, cap, trace_path, k, beside) >= cap)
        snprintf(out, cap, "%s", trace_path); /* too long: the writer puts .PID beside it */
}

int gmp_rsink_dump_allowed(gmp_rsink *s, uint64_t cause)
{
    if (s->dumps < s->set.dumps)
        return 1;
    if (s->dumps_skipped++ == 0)
        gmp_log_info("another failure (%s), but GMEMPROF_OOM_DUMPS=%llu dumps were written: not written",
                     gmt_oom_cause_name(cause), (unsigned long long)s->set.dumps);
    return 0;
}

uint64_t gmp_rsink_put_ring(gmp_rsink *s, gmt_writer *f, int *failed)
{
    gmp_rec_chunk c;
    size_t n = gmp_rec_count(s->rec);
    uint64_t first = 0;
    for (size_t i = 0; i < n && gmp_rec_get(s->rec, i, &c) == 0; i++) {
        gmt_status st = GMT_OK;
        if (i == 0) {
            first = c.step;
            st = gmt_writer_put_frames(f, c.base, c.base_n, c.base_records, c.base_frames);
        }
        if (st == GMT_OK)
            st = gmt_writer_put_frames(f, c.recs, c.recs_n, c.records, c.frames);
        if (st != GMT_OK)
            *failed = 1;
    }
    return first;
}

void gmp_rsink_dump_done(gmp_rsink *s, const char *path, uint64_t records, uint64_t bytes, int ok)
{
    if (s->dumps != 1)
        return;
    snprintf(s->dump_path, sizeof s->dump_path, "%s", path);
    s->dump_bytes = bytes;
    s->dump_records = records;
    s->dump_ok = ok;
}

/* ---- the end ---- */

const char *gmp_rsink_status_name(const gmp_rsink *s)
{
    return !s->dumps ? GMP_SUMMARY_STATUS_NO_OOM : s->dump_ok ? GMP_SUMMARY_STATUS_OOM : GMP_SUMMARY_STATUS_INCOMPLETE;
}

/* Where the first dump went, or would have gone. */
static const char *first_dump(const gmp_rsink *s, const char *trace_path, int beside, char *tmp, size_t cap)
{
    if (s->dumps)
        return s->dump_path;
    gmp_rsink_dump_name(1, trace_path, beside, tmp, cap);
    return tmp;
}

void gmp_rsink_say(const gmp_rsink *s, int beside)
{
    gmp_rec_stats rs;
    gmp_rec_get_stats(s->rec, &rs);
    char peak[32], cap[32];
    gmp_summary_human_bytes(rs.peak, peak, sizeof peak);
    gmp_summary_human_bytes(rs.cap, cap, sizeof cap);
    if (!s->dumps)
        gmp_log_info("no out-of-memory in this run: the flight recorder wrote %s (it held at most %s of "
                     "its %s cap)", beside ? "no dump" : "nothing", peak, cap);
    else
        gmp_log_info("the flight recorder wrote %llu dump%s (the first: %s); it held at most %s of its %s cap",
                     (unsigned long long)s->dumps, s->dumps == 1 ? "" : "s", s->dump_path, peak, cap);
}

size_t gmp_rsink_add_keys(const gmp_rsink *s, const char *trace_path, int beside, char *line, size_t cap)
{
    gmp_rec_stats rs;
    gmp_rec_get_stats(s->rec, &rs);
    size_t n = gmp_summary_add_oom(line, cap, s->dumps, rs.peak, rs.cap, gmp_config_rank(NULL, NULL));
    if (n < cap && beside) {
        char tmp[GMP_PATH_MAX];
        n = gmp_summary_add_dump(line, cap, first_dump(s, trace_path, beside, tmp, sizeof tmp), s->dump_bytes,
                                 gmp_rsink_status_name(s));
    }
    return n;
}

void gmp_rsink_summary(const gmp_rsink *s, const char *summary_file, const char *trace_path, uint64_t dropped)
{
    if (summary_file[0]) {
        char line[GMP_SUMMARY_LINE_MAX];
        static gmp_summary sm; /* the writer thread's, once at the end: not on its stack */
        memset(&sm, 0, sizeof sm);
        snprintf(sm.trace, sizeof sm.trace, "%s", s->dumps ? s->dump_path : trace_path);
        snprintf(sm.status, sizeof sm.status, "%s", gmp_rsink_status_name(s));
        sm.bytes = s->dump_bytes;
        sm.windows = s->dumps ? 1 : 0;
        sm.records = s->dump_records;
        sm.dropped = dropped;
        size_t n = gmp_summary_format_line(line, sizeof line, &sm);
        if (n < sizeof line)
            n = gmp_rsink_add_keys(s, trace_path, 0, line, sizeof line);
        int fd = n < sizeof line ? open(summary_file, O_WRONLY | O_APPEND | O_CLOEXEC) : -1;
        if (fd >= 0) {
            ssize_t k = write(fd, line, n);
            (void)k;
            close(fd);
            return;
        }
    }
    gmp_rsink_say(s, 0);
}
