/*
 * The writer thread, or pump (wthread.h): the only thread that touches the
 * writers and the string table. It moves what the sources queued into the
 * assembler (assembler.h), which joins, orders and gates it, and hands the
 * records the assembler emits to the sinks: the trace sink (tsink.h, the
 * trace file) and the recorder sink (rsink.h, the flight recorder's ring
 * and dumps), frame by frame.
 *
 * Each round pops the ring FIRST, then reads the published epochs, then
 * takes the completed CUPTI buffers, then lets the assembler drain: the
 * order the assembler's rules rely on (see assembler.c). Between rounds:
 * the time schedule's tick, a CUPTI flush of completed buffers, the
 * periodic MEMSAMPLE, and a frame end every GMEMPROF_FLUSH_MS.
 *
 * The output in use is one of four: the trace, the ring (the recorder
 * alone), a chunk's baseline, or a dump's file while it is written. A
 * chunk the recorder sink wants begun gets its baseline once the record
 * that began it is out: asked of the assembler (gmp_asm_ask_baseline) when
 * the record came from it, written at once when it came from the pump. A
 * dump begun inside io.failure asks for its live set the same way
 * (gmp_asm_ask_live). No io call has the assembler write.
 *
 * The writer writes the HEADER first and the TRAILER last, and the
 * launcher's summary line (or the "wrote" line) after closing the file.
 */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <unistd.h>

#include "wthread.h"

#include "activity.h"
#include "assembler.h"
#include "devices.h"
#include "gmp_rt.h"
#include "gmt_io.h"
#include "launch.h"
#include "log.h"
#include "post.h"
#include "rsink.h"
#include "steps.h"
#include "summary.h"
#include "torch.h"
#include "tsink.h"

#define TAKE_BUFS 16 /* completed buffers taken at once */

/* The output in use. */
enum { OUT_TRACE, OUT_RING, OUT_BASE, OUT_DUMP };

static struct {
    /* The settings (read-only, set at start) and the run's start. */
    const gmp_config *cfg;
    uint64_t start_unix_ns, start_ts;

    gmt_strtab *strtab;
    gmp_asm *as;
    gmp_tsink trace; /* trace.w NULL: the flight recorder alone */
    gmp_rsink rec;
    int trace_on;    /* a trace is written (trace.w until it is closed) */
    int rec_on;      /* the flight recorder runs (rec is set up) */

    int out;             /* OUT_*: the output in use */
    gmt_writer *w;       /* its writer (NULL once the trace is closed) */
    int in_asm;          /* inside an assembler io call: what the pump writes is asked of it */
    struct {
        int out;         /* while a baseline is written: the output to go back to */
        gmt_writer *w;
    } base_back;
    /* While a dump is written: its file, its failure, the output to go
     * back to (a dump begun inside io.failure ends once the assembler has
     * written the live set it asked for). */
    struct {
        gmt_writer *w;
        char name[GMP_PATH_MAX];
        int error;       /* its writer failed (said once) */
        gmt_oom oom;
        int back_out;
        gmt_writer *back_w;
    } dump;

    pthread_t th;
    _Atomic int running;
    _Atomic int finish_req; /* reason + 1 */
    _Atomic int finish_sig; /* signal number */
    _Atomic uint64_t sync_ticket;
    _Atomic uint64_t sync_done;
    _Atomic int dump_req;   /* SIGUSR2 */

    /* Finishing for a signal: the interrupted thread may hold the step lock
     * or the devices' lock (it can be inside a step call or a context
     * callback), so the writer takes the step lock only with trylock and
     * asks the driver nothing. */
    int sig_mode;
    uint64_t deadline_ns; /* for a signal: stop taking buffers then (mono_ns) */
    int finalizing;
    uint64_t frame_records;
    uint64_t last_frame_ns, last_flush_ns;
    uint64_t summary_bytes, summary_records, summary_dropped;
    /* GMEMPROF_TEST_ROUND_GAP_US (test harnesses only): a pause between a
     * round's epochs and its buffers, where a step and a buffer of its
     * records can slip in (profiler.e2e.accounting). */
    unsigned test_gap_us;
    gmp_clock_fit clk;   /* the trace clock's fitting side (clock.h) */
    gmp_clock_facts clk_facts; /* what GMEMPROF_CLOCK=auto decided on */
    char clk_source[64];       /* the clocksource those facts name */
    /* GMEMPROF_TEST_DUMP_NAME (test harnesses only): a name interned while
     * each dump is written, which no source does, so that the trace's
     * STRING of it is written then (profiler.e2e.oom_sched_diskfull). */
    const char *test_dump_name;

    /* The exit began at this trace time (UINT64_MAX: not yet): records
     * made after it are not written, and counted as dropped (cut). */
    _Atomic uint64_t cutoff;
    uint64_t cut;
} W;

size_t gmp_wt_staging_bytes(size_t budget) { return gmp_asm_staging_bytes(budget); }

static inline uint64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int have_trace(void) { return W.trace_on; }

/* ---- output: routing to the sinks ------------------------------------------ */

static void use(int out, gmt_writer *w)
{
    W.out = out;
    W.w = w;
}

/* The writer in use failed: a dump's in its own name and status, any other
 * in the trace's. */
static void report_io_error(void)
{
    if (W.out == OUT_DUMP)
        gmp_tsink_say_failed(W.w, W.dump.name, &W.dump.error);
    else
        gmp_tsink_failed(&W.trace, W.w);
}

/* The write status the trailer and STATS of the output in use report. */
static int io_error(void) { return W.out == OUT_DUMP ? W.dump.error : W.trace.io_error; }

/* The output whose frames the flush period ends: the trace's, or the
 * ring's with the recorder alone (not a chunk baseline's or a dump's). */
static int main_writer(void) { return W.out == (have_trace() ? OUT_TRACE : OUT_RING) && W.w; }

static void end_frame(void);
static void write_baseline(uint64_t ts, uint64_t step);

/* A chunk of the ring begins (rsink.h): the last frame of the one before
 * ended, its counts set; its baseline asked of the assembler when inside
 * one of its calls (it writes it once the call returns), else written now. */
static void ring_split(const gmp_rsink_split *sp)
{
    uint64_t step = sp->step_known ? sp->step : gmp_asm_step(W.as);
    uint64_t ts = sp->ts ? sp->ts : gmp_now();
    int keep = W.out;
    gmt_writer *kw = W.w;
    use(OUT_RING, W.rec.ring_w);
    end_frame();
    use(keep, kw);
    gmp_rsink_sync(&W.rec);
    if (gmp_rsink_begin(&W.rec, step, sp->is_step, ts) != 0)
        return; /* out of memory: the current chunk goes on */
    if (W.in_asm)
        gmp_asm_ask_baseline(W.as, ts, step);
    else
        write_baseline(ts, step);
}

/* Whether the ring takes r; a chunk it begins is begun first. */
static int ring_take(const gmt_record *r)
{
    gmp_rsink_split sp;
    int take = gmp_rsink_take(&W.rec, r, &sp);
    if (sp.due)
        ring_split(&sp);
    return take;
}

/* The ring's copy of a record (the recorder beside a trace, or one the
 * trace's gate kept out). */
static void ring_put(const gmt_record *r)
{
    if (W.rec.ring_w && ring_take(r))
        gmp_rsink_status(&W.rec, gmt_writer_put(W.rec.ring_w, r));
}

/* The time of a record the program made, or 0 for the writer's own. */
static uint64_t made_at(const gmt_record *r)
{
    switch (r->type) {
    case GMT_REC_ALLOC:
    case GMT_REC_FREE:
        return r->u.mem.ts;
    case GMT_REC_KERNEL:
        return r->u.kernel.start;
    case GMT_REC_MEMCPY:
    case GMT_REC_MEMSET:
        return r->u.copy.start;
    case GMT_REC_BLOCK:
        return r->u.block.ts;
    case GMT_REC_MARK:
        return r->u.mark.ts;
    default:
        return 0;
    }
}

static void put(const gmt_record *r)
{
    if (made_at(r) > atomic_load_explicit(&W.cutoff, memory_order_acquire)) {
        W.cut++; /* made after the exit began: other threads ran on */
        return;
    }
    switch (W.out) {
    case OUT_TRACE: {
        unsigned n = gmp_tsink_put(&W.trace, r);
        if (W.rec_on)
            ring_put(r);
        W.frame_records += n;
        return;
    }
    case OUT_RING:
        if (!ring_take(r))
            return;
        break;
    default:
        break;
    }
    if (gmt_writer_put(W.w, r) != GMT_OK)
        report_io_error();
    W.frame_records += (uint64_t)main_writer();
}

/* The STRING record of id: to the output in use unless it is the ring's or
 * a baseline's, which hold no STRING (every dump writes the whole table
 * first); beside the recorder, to the trace too while a dump is written. */
static void put_string(uint64_t id, const char *s, size_t n)
{
    if (have_trace() && W.out != OUT_TRACE)
        gmp_tsink_put_string(&W.trace, id, s, n);
    if (W.out == OUT_RING || W.out == OUT_BASE)
        return;
    gmt_record rec = {.type = GMT_REC_STRING};
    rec.u.string = (gmt_string){id, {s, n > GMT_MAX_STRING ? GMT_MAX_STRING : (uint32_t)n}};
    put(&rec);
}

/* s's id in the string table; 0 out of memory (the trace's names lost). */
static uint64_t string_id(const char *s, size_t n, int *is_new)
{
    uint64_t id = gmt_strtab_intern(W.strtab, s, n, is_new);
    if (!id && !W.rec_on)
        report_io_error();
    return id;
}

static void end_frame(void)
{
    if (gmt_writer_end_frame(W.w) != GMT_OK)
        report_io_error();
    if (main_writer()) {
        W.frame_records = 0;
        W.last_frame_ns = mono_ns();
    }
    if (W.rec_on && W.rec.ring_w && W.out == OUT_TRACE)
        gmp_rsink_status(&W.rec, gmt_writer_end_frame(W.rec.ring_w)); /* the ring's frame ends with the trace's */
}

/* A chunk's baseline (the live set now, as a window would begin here) to
 * the baseline writer: begin 1 before the assembler writes it, 0 after. */
static void baseline_edge(int begin)
{
    if (begin) {
        W.base_back.out = W.out;
        W.base_back.w = W.w;
        use(OUT_BASE, gmp_rsink_base_writer(&W.rec));
        return;
    }
    end_frame();
    use(W.base_back.out, W.base_back.w);
    gmp_rsink_base_done(&W.rec);
}

static void write_baseline(uint64_t ts, uint64_t step)
{
    baseline_edge(1);
    gmp_asm_put_baseline(W.as, ts, 0, step);
    baseline_edge(0);
}

/* ---- the assembler's io -------------------------------------------------------- */

static void io_put(void *ctx, const gmt_record *r)
{
    (void)ctx;
    W.in_asm++;
    put(r);
    W.in_asm--;
}

/* A record the trace's windows leave out: the ring's alone. */
static void io_put_aside(void *ctx, const gmt_record *r)
{
    (void)ctx;
    W.in_asm++;
    ring_put(r);
    W.in_asm--;
}

static uint64_t io_intern(void *ctx, const char *s, size_t n)
{
    (void)ctx;
    int is_new = 0;
    uint64_t id = string_id(s, n, &is_new);
    if (is_new || gmp_tsink_unhold(&W.trace, id))
        put_string(id, s, n);
    return id;
}

static uint64_t io_intern_held(void *ctx, const char *s, size_t n)
{
    (void)ctx;
    int is_new = 0;
    uint64_t id = string_id(s, n, &is_new);
    if (is_new && have_trace() && gmp_tsink_hold(&W.trace, id) != 0)
        put_string(id, s, n); /* no memory to hold it back: written now */
    return id;
}

static void io_end_frame(void *ctx)
{
    (void)ctx;
    end_frame();
}

static uint64_t writer_cpu_ns(void)
{
    struct timespec ts;
    if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0)
        return 0;
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t dropped_writer(void)
{
    gmp_asm_counts c;
    gmp_asm_get_counts(W.as, &c);
    return atomic_load(&gmp_g.ring.dropped) + gmp_activity_dropped_buffers() + gmt_writer_dropped(W.w) +
           c.bad_records + W.cut;
}

static void put_stats(void)
{
    gmp_asm_counts c;
    gmp_asm_get_counts(W.as, &c);
    gmt_record r;
    memset(&r, 0, sizeof r.type + sizeof r.u.stats + 16);
    r.type = GMT_REC_STATS;
    gmt_stats *s = &r.u.stats;
    s->ts = gmp_now();
    s->records_written = gmt_writer_records(W.w) + 1; /* this one included */
    s->dropped_cupti = gmp_activity_dropped_cupti();
    s->dropped_writer = dropped_writer();
    s->host_time_ns = writer_cpu_ns() + atomic_load(&gmp_g.cb_time_ns);
    s->own_device_bytes = gmp_devices_own_bytes();
    s->own_host_bytes = gmp_bufq_host_bytes() + c.host_bytes;
    s->bytes_written = gmt_writer_bytes_out(W.w);
    s->unmatched_corr = c.unmatched;
    /* a dump is one window of the whole run: nothing of it was outside */
    s->outside_window = W.out == OUT_TRACE ? c.outside : 0;
    put(&r);
}

static void io_stats(void *ctx)
{
    (void)ctx;
    W.in_asm++;
    put_stats();
    W.in_asm--;
}

static void io_device(void *ctx, unsigned d, gmt_device *out)
{
    (void)ctx;
    const gmp_devinfo *i = gmp_devices_query(d);
    if (!i)
        return;
    out->total_mem = i->total_mem;
    out->sm_count = i->sm_count;
    out->cc_major = i->cc_major;
    out->cc_minor = i->cc_minor;
    memcpy(out->uuid, i->uuid, 16);
    out->name.ptr = i->name;
    out->name.len = (uint32_t)strnlen(i->name, sizeof i->name);
}

/* For a signal, the driver and our locks may be held by the interrupted
 * thread: no samples then. */
static int io_meminfo(void *ctx, unsigned d, uint64_t *free_b, uint64_t *total_b)
{
    (void)ctx;
    return W.sig_mode ? -1 : gmp_devices_meminfo(d, free_b, total_b);
}

static int io_snapshot(void *ctx, uint64_t ticket, gmp_snap *out)
{
    (void)ctx;
    return !W.sig_mode && gmp_snapshot_get(ticket, out);
}

static uint64_t io_now(void *ctx)
{
    (void)ctx;
    uint64_t t = gmp_now(), cut = atomic_load_explicit(&W.cutoff, memory_order_acquire);
    return t > cut ? cut : t; /* the trace ends when the exit began */
}

static uint64_t io_mono(void *ctx)
{
    (void)ctx;
    return mono_ns();
}

static void io_synced(void *ctx, uint64_t ticket)
{
    (void)ctx;
    atomic_store_explicit(&W.sync_done, ticket, memory_order_release);
}

static void io_failure(void *ctx, gmt_oom *o);
static void rec_dump_end(void);

/* What the pump asked of the assembler from inside an io call, written
 * now: a chunk's baseline, or a dump's live set (the dump then ends). */
static void io_asked(void *ctx, int what, int begin)
{
    (void)ctx;
    if (what == GMP_ASM_ASK_BASELINE)
        baseline_edge(begin);
    else if (!begin)
        rec_dump_end();
}

static const gmp_asm_io writer_io = {NULL,       io_put,      io_intern, io_end_frame, io_stats,  io_device,
                                     io_meminfo, io_snapshot, io_now,    io_mono,      io_synced, io_failure,
                                     io_asked};

/* ---- one round ------------------------------------------------------------------ */

static void pull_epochs(void)
{
    uint32_t cur = atomic_load_explicit(&gmp_g.epoch, memory_order_acquire);
    if (!gmp_asm_wants_epochs(W.as, cur))
        return;
    const gmp_epoch_info *hist = gmp_steps_lock(W.sig_mode);
    if (!hist)
        return;
    cur = atomic_load_explicit(&gmp_g.epoch, memory_order_relaxed);
    gmp_asm_take_epochs(W.as, hist, cur);
    gmp_steps_unlock();
}

static int past_deadline(void) { return W.deadline_ns && mono_ns() >= W.deadline_ns; }

/* An end was asked for while the loop runs: the round in progress stops
 * taking buffers so that the loop sees it. */
static int end_asked(void)
{
    return !W.finalizing && (atomic_load_explicit(&W.finish_sig, memory_order_relaxed) ||
                             atomic_load_explicit(&W.finish_req, memory_order_relaxed));
}

/* The buffers queued when the round began, no more: under a producer faster
 * than the writer a round still ends, and the loop gets to its periodic
 * work and to an end request. Returns 0 when it left some of them. */
static int take_buffers(void)
{
    gmp_done_buf bufs[TAKE_BUFS];
    size_t left = gmp_bufq_pending(), n;
    /* for a signal, one buffer at a time: the budget is checked at each */
    size_t max = W.deadline_ns ? 1 : TAKE_BUFS;
    while (left > 0 && !past_deadline() && !end_asked() &&
           (n = gmp_bufq_take(bufs, left < max ? left : max)) > 0) {
        left -= n;
        /* A record without an API call takes the epoch of its time: every
         * epoch published before it was made must be known first (a step
         * published after this round's pull_epochs, then a buffer of its
         * records queued: they went to the step before, outside the window). */
        pull_epochs();
        for (size_t i = 0; i < n; i++) {
            gmp_asm_stage_buffer(W.as, bufs[i].buf, bufs[i].valid, gmp_g.api.ActivityGetNextRecord);
            gmp_bufq_release(bufs[i].buf);
        }
    }
    return left == 0;
}

/* A signal's end has a time budget: what the writer could not take by then
 * is counted as dropped. No buffer is queued after this. */
static void discard_buffers(void)
{
    gmp_done_buf bufs[TAKE_BUFS];
    size_t n;
    gmp_bufq_accept(0);
    while ((n = gmp_bufq_take(bufs, TAKE_BUFS)) > 0)
        for (size_t i = 0; i < n; i++)
            gmp_bufq_discard(bufs[i].buf, bufs[i].valid);
}

/* The trace takes the name it was given once the process records (its
 * first context, or a dump): the context callback claims at once
 * (gmp_wt_claim), so that a process this one starts afterwards finds the
 * name held whatever the scheduling; the writer's rounds claim too (a
 * context made before the writer ran). */
static int claim_due(void) { return atomic_load(&gmp_g.ctx_seen) || W.rec.dumps; }

void gmp_wt_claim(void)
{
    /* a fork's child has no writer of its own: the file is the parent's */
    if (atomic_load_explicit(&W.running, memory_order_acquire) && !atomic_load(&gmp_g.forked))
        gmp_tsink_claim(&W.trace, claim_due());
}

/* One round: ring first, then epochs, then buffers (see the top comment). */
static void round_once(void)
{
    gmp_tsink_claim(&W.trace, claim_due());
    gmp_asm_round_begin(W.as, gmp_now());
    uint32_t pub = atomic_load_explicit(&gmp_g.epoch, memory_order_acquire);
    gmp_ev *slot;
    int popped;
    while ((slot = gmp_asm_event_slot(W.as)) != NULL && (popped = gmp_ring_pop(&gmp_g.ring, slot)) != 0)
        gmp_asm_event_added(W.as, popped);
    gmp_asm_events_done(W.as, pub);
    gmp_post_rearm();
    pull_epochs();
    if (W.test_gap_us) {
        struct timespec ts = {0, (long)W.test_gap_us * 1000L};
        nanosleep(&ts, NULL);
    }
    if (take_buffers())
        gmp_asm_drain(W.as, 0);
    else
        gmp_asm_drain_held(W.as); /* a window must not open or close before its records */
}

/* ---- header ------------------------------------------------------------- */

static void put_header(const gmp_config *cfg)
{
    char host[256] = "";
    char cmd[4096];
    char cfgtext[2048];
    size_t n = 0;
    if (gethostname(host, sizeof host - 1) != 0)
        host[0] = '\0'; /* an empty host field says "unknown" */
    int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
        ssize_t k = read(fd, cmd, sizeof cmd - 1);
        close(fd);
        if (k > 0) {
            n = (size_t)k;
            while (n > 0 && cmd[n - 1] == '\0')
                n--;
            for (size_t i = 0; i < n; i++)
                if (cmd[i] == '\0')
                    cmd[i] = ' ';
        }
    }
    size_t cl = gmp_config_describe(cfg, cfgtext, sizeof cfgtext);
    if (cl >= sizeof cfgtext)
        cl = sizeof cfgtext - 1;
    uint32_t cv = 0;
    int dv = 0;
    if (gmp_g.api.GetVersion)
        gmp_g.api.GetVersion(&cv);
    if (gmp_g.api.DriverGetVersion)
        gmp_g.api.DriverGetVersion(&dv);
    gmt_record r;
    memset(&r, 0, sizeof r.type + sizeof r.u.header + 16);
    r.type = GMT_REC_HEADER;
    gmt_header *h = &r.u.header;
    h->pid = (uint64_t)getpid();
    h->ppid = (uint64_t)getppid();
    h->start_unix_ns = W.start_unix_ns;
    h->start_ts = W.start_ts;
    long v;
    h->rank = (v = gmp_config_env_int(NULL, NULL, "RANK")) >= 0 ? v : -1;
    h->local_rank = (v = gmp_config_env_int(NULL, NULL, "LOCAL_RANK")) >= 0 ? v : -1;
    h->world_size = (v = gmp_config_env_int(NULL, NULL, "WORLD_SIZE")) >= 0 ? v : -1;
    h->cupti_version = cv;
    h->driver_version = (uint64_t)(dv > 0 ? dv : 0);
    h->host = (gmt_bytes){host, (uint32_t)strlen(host)};
    h->cmdline = (gmt_bytes){cmd, (uint32_t)n};
    h->config = (gmt_bytes){cfgtext, (uint32_t)cl};
    h->profiler_version = (gmt_bytes){GMEMPROF_VERSION, (uint32_t)strlen(GMEMPROF_VERSION)};
    put(&r);
}

/* ---- the end -------------------------------------------------------------- */

static size_t rec_keys(void *ctx, char *line, size_t cap)
{
    (void)ctx;
    return gmp_rsink_add_keys(&W.rec, W.trace.path, 1, line, cap); /* the recorder beside the trace */
}

/* The steps and the recorder's keys of the end's line. */
static void outcome_base(gmp_tsink_outcome *o)
{
    memset(o, 0, sizeof *o);
    int source = 0;
    o->steps = gmp_steps_count(&source);
    o->step_source = source;
    if (W.rec_on && have_trace())
        o->add_keys = rec_keys;
}

static void write_summary(int ok)
{
    gmp_asm_counts c;
    gmp_asm_get_counts(W.as, &c);
    gmp_tsink_outcome o;
    outcome_base(&o);
    o.bytes = gmp_tsink_file_size(&W.trace, W.summary_bytes);
    o.windows = c.windows;
    o.records = W.summary_records;
    o.dropped = gmp_activity_dropped_cupti() + W.summary_dropped;
    o.fw_seen = c.fw_seen;
    o.fw_events = c.block_events;
    if (c.fw_seen)
        o.fw_name = gmp_torch_describe()[0] ? gmp_torch_describe() : "framework allocator";
    if (W.cfg->summary_file[0]) {
        gmp_tsink_summary_line(&W.trace, W.cfg->summary_file, &o,
                               ok ? GMP_SUMMARY_STATUS_OK : GMP_SUMMARY_STATUS_INCOMPLETE);
        return;
    }
    if (ok) /* (else the write error was reported on its own line) */
        gmp_tsink_say_wrote(&W.trace, &o);
    if (W.rec_on)
        gmp_rsink_say(&W.rec, 1); /* beside the trace */
}

static void write_summary_noctx(void)
{
    if (!W.cfg->summary_file[0]) {
        gmp_log_debug("no CUDA context was created: nothing recorded, no trace written (%s left alone)",
                      W.trace.path);
        return;
    }
    gmp_tsink_outcome o;
    outcome_base(&o);
    gmp_tsink_summary_line(&W.trace, W.cfg->summary_file, &o, GMP_SUMMARY_STATUS_NOCTX);
}

/* ---- the flight recorder's dumps ------------------------------------------------ */

static void put_all_strings(void)
{
    size_t n = gmt_strtab_count(W.strtab);
    for (uint64_t id = 1; id <= n; id++) {
        size_t len = 0;
        const char *p = gmt_strtab_get(W.strtab, id, &len);
        gmt_record r = {.type = GMT_REC_STRING};
        r.u.string = (gmt_string){id, {p, len > GMT_MAX_STRING ? GMT_MAX_STRING : (uint32_t)len}};
        put(&r);
    }
}

static void say_dump(const gmt_oom *o, const char *path, uint64_t bytes)
{
    char req[32], fr[32], size[32];
    gmp_summary_human_bytes(o->bytes, req, sizeof req);
    gmp_summary_human_bytes(o->driver_free, fr, sizeof fr);
    gmp_summary_human_bytes(bytes, size, sizeof size);
    if (o->cause == GMT_OOM_CUDA || o->cause == GMT_OOM_FRAMEWORK)
        gmp_log_info("out of memory on device %llu: %s asked, %s free; the last steps are in %s (%s, dump %llu) "
                     "\xe2\x80\x94 gmem-analyze %s",
                     (unsigned long long)o->device, req, (o->flags & GMT_OOMF_DRIVER) ? fr : "unknown", path,
                     size, (unsigned long long)o->dump, path);
    else
        gmp_log_info("flight recorder dump %llu (%s): %s (%s)", (unsigned long long)o->dump,
                     gmt_oom_cause_name(o->cause), path, size);
}

/* The end of a dump, after its live set: the window's end, STATS, the
 * trailer; the file closed and counted, the output in use back. */
static void rec_dump_end(void)
{
    const gmt_oom *o = &W.dump.oom;
    gmt_record r;
    memset(&r, 0, sizeof r.type + sizeof r.u.wend + 16);
    r.type = GMT_REC_WINDOW_END;
    r.u.wend = (gmt_window_end){.ts = o->ts, .window = 0, .step = o->step, .reason = GMT_WEND_FAILURE};
    put(&r);
    put_stats();
    memset(&r, 0, sizeof r.type + sizeof r.u.trailer + 16);
    r.type = GMT_REC_TRAILER;
    r.u.trailer.ts = gmp_now();
    r.u.trailer.records = gmt_writer_records(W.w);
    r.u.trailer.status = io_error() ? GMT_TRAILER_WRITE_ERRORS : 0;
    put(&r);
    end_frame();
    gmt_writer *f = W.dump.w;
    uint64_t records = gmt_writer_records(f), bytes = gmt_writer_bytes_out(f);
    int ok = gmt_writer_close(f) == GMT_OK && !W.dump.error;
    use(W.dump.back_out, W.dump.back_w);
    W.dump.w = NULL;
    gmp_rsink_dump_done(&W.rec, W.dump.name, records, bytes, ok);
    say_dump(o, W.dump.name, bytes);
}

/* Writes the ring, the failure and the live set to a new file; the
 * recording goes on. Inside io.failure the live set is asked of the
 * assembler, which writes it once the call returns (rec_dump_end then). */
static void rec_dump(gmt_oom *o)
{
    gmp_rsink *s = &W.rec;
    if (!gmp_rsink_dump_allowed(s, o->cause))
        return;
    int keep = W.out;
    gmt_writer *kw = W.w;
    use(OUT_RING, s->ring_w);
    end_frame();
    use(keep, kw);
    gmp_rsink_sync(s);
    char why[GMP_PATH_MAX + 128];
    gmp_rsink_dump_name(s->dumps + 1, W.trace.path, have_trace(), W.dump.name, sizeof W.dump.name);
    gmt_writer_opts wo = {W.cfg->zstd_level, 0};
    gmt_writer *f = gmt_writer_create(W.dump.name, sizeof W.dump.name, &wo, why, sizeof why);
    s->dumps++;
    if (!f) {
        gmp_log_error("%s; this failure is not written", why);
        return;
    }
    if (why[0])
        gmp_log_info("%s", why);
    W.dump.w = f;
    W.dump.error = 0;
    W.dump.back_out = keep;
    W.dump.back_w = kw;
    use(OUT_DUMP, f);
    static gmp_config dcfg; /* the writer thread's: what the dump holds (no kernels unless kept) */
    dcfg = *W.cfg;
    if (!dcfg.oom_kernels)
        dcfg.kernels = GMP_KERNELS_NONE;
    put_header(&dcfg);
    for (unsigned d = 0; d < GMP_MAX_DEVICES; d++)
        if (s->dev_have[d])
            put(&s->devs[d]);
    put_all_strings();
    if (W.test_dump_name) {
        char name[128];
        int k = snprintf(name, sizeof name, "%s %llu", W.test_dump_name, (unsigned long long)s->dumps);
        io_intern(NULL, name, k > 0 && (size_t)k < sizeof name ? (size_t)k : 0);
    }
    int failed = 0;
    o->first_step = gmp_rsink_put_ring(s, f, &failed);
    if (failed)
        report_io_error();
    gmp_rec_stats rs;
    gmp_rec_get_stats(s->rec, &rs);
    o->dump = s->dumps;
    o->ring_bytes = rs.bytes;
    if (rs.trimmed)
        o->flags |= GMT_OOMF_TRIMMED;
    W.dump.oom = *o;
    gmt_record r;
    memset(&r, 0, sizeof r.type + sizeof r.u.oom + 16);
    r.type = GMT_REC_OOM;
    r.u.oom = *o;
    put(&r);
    if (W.in_asm) {
        gmp_asm_ask_live(W.as);
        return;
    }
    gmp_asm_put_live(W.as);
    rec_dump_end();
}

/* A failure the assembler saw (io table): a dump in recorder mode; in a
 * trace, the failure record alone, where it happened. */
static void io_failure(void *ctx, gmt_oom *o)
{
    (void)ctx;
    W.in_asm++;
    if (have_trace()) {
        gmt_record r;
        memset(&r, 0, sizeof r.type + sizeof r.u.oom + 16);
        r.type = GMT_REC_OOM;
        r.u.oom = *o;
        r.u.oom.live_count = 0; /* no LIVE records follow: the trace's own records give the live set */
        /* the dump that rec_dump is about to write, named from the trace's
         * path by the rule the analyzer follows to find it */
        r.u.oom.flags |= GMT_OOMF_IN_TRACE;
        r.u.oom.dump = W.rec_on && W.rec.dumps < W.cfg->oom_dumps ? W.rec.dumps + 1 : 0;
        put(&r);
    }
    if (W.rec_on)
        rec_dump(o); /* beside a trace too: the steps before it may be outside its windows */
    W.in_asm--;
}

/* A dump that no failure asked for (SIGUSR2, the end of the program). */
static void rec_dump_now(int cause)
{
    gmt_oom o;
    memset(&o, 0, sizeof o);
    o.ts = gmp_now();
    o.cause = (uint64_t)cause;
    o.step = gmp_asm_step(W.as);
    gmp_asm_fill_failure(W.as, &o);
    rec_dump(&o);
}

static int rec_start(char *err, size_t cap)
{
    const gmp_config *c = W.cfg;
    gmp_rsink_settings set = {.steps = c->oom_steps,
                              .seconds = c->oom_seconds,
                              .max_mb = c->oom_max_mb,
                              .dumps = c->oom_dumps,
                              .kernels = c->oom_kernels,
                              .zstd_level = c->zstd_level};
    if (gmp_rsink_init(&W.rec, &set, gmp_now()) != 0) {
        snprintf(err, cap, "out of memory for the flight recorder");
        return -1;
    }
    W.rec_on = 1;
    if (have_trace()) /* beside a schedule of windows: what they leave out is the ring's */
        gmp_asm_set_aside(W.as, io_put_aside, c->oom_kernels);
    else
        use(OUT_RING, W.rec.ring_w);
    return 0;
}

/* The recorder's end: a dump if asked and none was written, then its
 * writers closed. */
static void rec_end(void)
{
    if (W.cfg->oom_at_exit && W.rec.dumps == 0)
        rec_dump_now(GMT_OOM_EXIT);
    if (W.out == OUT_RING)
        use(OUT_RING, NULL);
    gmp_rsink_close(&W.rec);
}

/* The end of the recorder alone: nothing more (no file was made unless
 * there was a dump). */
static void rec_finish(void)
{
    rec_end();
    if (!atomic_load(&gmp_g.ctx_seen) && !atomic_load(&gmp_g.forked) && W.rec.dumps == 0) {
        write_summary_noctx();
        return;
    }
    gmp_rsink_summary(&W.rec, W.cfg->summary_file, W.trace.path, gmp_activity_dropped_cupti());
}

static void finalize(int reason)
{
    W.finalizing = 1;
    /* Take in everything still queued (the caller flushed CUPTI first).
     * One round at least, past a signal's deadline too: it takes no buffer
     * then, but the ring and the epochs, so the window that the run began
     * is opened and ended (a writer that did not run before the signal
     * came, on a loaded machine, left the trace without one). */
    for (int i = 0; i < 64; i++) {
        round_once();
        if (past_deadline() ||
            (gmp_ring_size(&gmp_g.ring) == 0 && gmp_bufq_pending() == 0 && !gmp_asm_epochs_pending(W.as)))
            break;
    }
    /* What the rounds could not take (a signal's deadline, a producer that
     * outran 64 rounds) is counted before the last STATS; a buffer CUPTI
     * hands over from now on is counted as it arrives (buf_completed). */
    discard_buffers();
    gmp_asm_finish(W.as, reason);
    if (W.rec_on && !have_trace()) {
        rec_finish();
        return;
    }
    if (W.rec_on)
        rec_end(); /* beside the trace: its dump at the end first, then the trace's end */
    gmt_record r;
    memset(&r, 0, sizeof r.type + sizeof r.u.trailer + 16);
    r.type = GMT_REC_TRAILER;
    r.u.trailer.ts = gmp_now();
    r.u.trailer.records = gmt_writer_records(W.w);
    r.u.trailer.status = (io_error() ? GMT_TRAILER_WRITE_ERRORS : 0) |
                         (reason == GMT_WEND_ERROR ? GMT_TRAILER_DISABLED : 0);
    put(&r);
    end_frame();
    W.summary_records = gmt_writer_records(W.w);
    W.summary_bytes = gmt_writer_bytes_out(W.w);
    W.summary_dropped = dropped_writer();
    gmp_asm_counts c;
    gmp_asm_get_counts(W.as, &c);
    if (c.bad_records || c.unmatched || c.lost_epochs || c.late || c.outside)
        gmp_log_debug("writer: %" PRIu64 " unmatched, %" PRIu64 " unreadable, %" PRIu64
                      " written after their window's end, %" PRIu64 " outside windows, %" PRIu64
                      " lost transitions",
                      c.unmatched, c.bad_records, c.late, c.outside, c.lost_epochs);
    if (W.cfg->kernels == GMP_KERNELS_LAUNCH)
        gmp_launch_log_misses();
    int named = 0;
    int ok = gmp_tsink_close(&W.trace, claim_due(), &named);
    use(OUT_TRACE, NULL);
    if (!named && !W.trace.claim_failed) {
        /* cuInit without a context (a launcher's agent, a device query):
         * nothing was recorded, and the name stays free for the process
         * that records. */
        write_summary_noctx();
        return;
    }
    write_summary(ok);
}

/* ---- the thread ----------------------------------------------------------- */

static unsigned wait_ms(void)
{
    return 20; /* the ring is polled 50 times a second; urgent work wakes us */
}

/* Fits the trace clock's line (clock.h); says once which clock it is. */
static void clock_tick(void)
{
    if (gmp_clock_tick(&gmp_g.clock, &W.clk) != 1)
        return;
    if (W.cfg->clock == GMP_CLOCK_TSC)
        gmp_log_debug("trace clock: the TSC, mapped to CLOCK_REALTIME (GMEMPROF_CLOCK=tsc)");
    else
        gmp_log_debug("trace clock: the TSC, mapped to CLOCK_REALTIME (GMEMPROF_CLOCK=auto; clocksource %.*s, "
                      "clock_gettime %" PRIu64 " ns)",
                      (int)strcspn(W.clk_source, "\n"), W.clk_source, W.clk_facts.system_read_ns);
}

static void periodic(void)
{
    uint64_t now = mono_ns();
    clock_tick();
    uint64_t flush_ns = W.cfg->flush_period_ms * 1000000ull;
    uint64_t cupti_ns = flush_ns / 4 < 100000000ull ? flush_ns / 4 : 100000000ull;
    if (W.cfg->schedule.kind == GMP_SCHED_TIME)
        gmp_steps_transition(GMP_TR_TICK, 0, GMT_STEPSRC_TIME);
    if (now - W.last_flush_ns >= cupti_ns) {
        /* Completed buffers only: cheap, and never cuts a record short. */
        gmp_activity_flush_completed();
        W.last_flush_ns = now;
    }
    gmp_asm_sample_due(W.as, now, W.cfg->sample_period_ms * 1000000ull);
    if (now - W.last_frame_ns >= flush_ns) {
        if (W.frame_records) {
            put_stats();
            end_frame();
        }
        W.last_frame_ns = now;
    }
}

/* A signal's end: the trace is complete; the process dies by the signal as
 * it would have without us. Process-directed: this thread blocks every
 * signal, so one of the program's threads takes it. */
static void die_by(int sig)
{
    struct sigaction dfl;
    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    sigemptyset(&dfl.sa_mask);
    (void)sigaction(sig, &dfl, NULL); /* cannot fail for SIGTERM/SIGINT with SIG_DFL */
    kill(getpid(), sig);
}

static void *writer_main(void *arg)
{
    (void)arg;
    sigset_t all;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, NULL); /* signals are the program's, not ours */
    gmp_t.internal = 1;
    W.last_frame_ns = W.last_flush_ns = mono_ns();
    if (have_trace())
        put_header(W.cfg); /* (a recorder's dumps each have their own) */
    for (;;) {
        int req = atomic_load(&W.finish_req);
        int sig = atomic_load(&W.finish_sig);
        if (sig && !req) {
            W.sig_mode = 1;
            W.deadline_ns = mono_ns() + GMP_WT_SIGNAL_MS * 1000000ull;
            gmp_activity_flush_forced();
            req = GMT_WEND_SIGNAL + 1;
        }
        if (req) {
            finalize(req - 1);
            break;
        }
        round_once();
        periodic();
        if (W.rec_on && atomic_exchange(&W.dump_req, 0)) {
            /* a round that starts after the request: everything the
             * program published before it (a step, its records) is in */
            round_once();
            rec_dump_now(GMT_OOM_SIGNAL);
        }
        if (gmp_ring_size(&gmp_g.ring) > 0 || gmp_bufq_pending() > 0)
            continue;
        gmp_wake_wait(wait_ms());
    }
    gmp_bufq_accept(0);
    if (W.sig_mode)
        die_by(atomic_load(&W.finish_sig));
    atomic_store(&W.running, 0);
    return NULL;
}

int gmp_wt_start(gmt_writer *w, const gmp_wt_setup *setup, char *err, size_t cap)
{
    W.cfg = setup->cfg;
    W.start_unix_ns = setup->start_unix_ns;
    W.start_ts = setup->start_ts;
    atomic_store(&W.cutoff, UINT64_MAX);
    if (W.cfg->clock == GMP_CLOCK_AUTO) /* the facts cost a file read and 56 clock reads: only auto's */
        gmp_clock_facts_read(&W.clk_facts, W.clk_source, sizeof W.clk_source);
    gmp_clock_init(&gmp_g.clock, &W.clk, W.cfg->clock, &W.clk_facts);
    clock_tick(); /* the first pair */
    W.strtab = gmt_strtab_create();
    gmp_tsink_init(&W.trace, w, setup->path, W.strtab);
    W.trace_on = w != NULL;
    use(OUT_TRACE, w);
    W.as = gmp_asm_create(&writer_io, &gmp_g.corr, (size_t)W.cfg->host_buffer_mb << 20);
    const char *gap = getenv("GMEMPROF_TEST_ROUND_GAP_US");
    W.test_gap_us = gap ? (unsigned)strtoul(gap, NULL, 10) % 1000000u : 0;
    W.test_dump_name = getenv("GMEMPROF_TEST_DUMP_NAME");
    if (!W.strtab || !W.as) {
        snprintf(err, cap, "out of memory for the trace writer");
        return -1;
    }
    gmp_asm_set_intern_held(W.as, io_intern_held);
    if (W.cfg->on_oom && rec_start(err, cap) != 0)
        return -1;
    atomic_store(&W.running, 1);
    gmp_bufq_accept(1);
    int e = pthread_create(&W.th, NULL, writer_main, NULL);
    if (e != 0) {
        atomic_store(&W.running, 0);
        gmp_bufq_accept(0);
        snprintf(err, cap, "cannot start the writer thread: %s", strerror(e));
        return -1;
    }
    (void)pthread_setname_np(W.th, "gmemprof-writer"); /* cosmetic (top, gdb) */
    return 0;
}

int gmp_wt_running(void) { return atomic_load_explicit(&W.running, memory_order_relaxed); }

void gmp_wt_sync(unsigned timeout_ms)
{
    if (!gmp_wt_running())
        return;
    uint64_t ticket = atomic_fetch_add(&W.sync_ticket, 1) + 1;
    gmp_ev ev;
    memset(&ev, 0, offsetof(gmp_ev, name));
    ev.type = GMP_EV_SYNC;
    ev.a = ticket;
    gmp_post(&ev);
    gmp_wake();
    for (unsigned waited = 0; waited < timeout_ms && gmp_wt_running(); waited++) {
        if (atomic_load_explicit(&W.sync_done, memory_order_acquire) >= ticket)
            return;
        struct timespec ts = {0, 1000000};
        nanosleep(&ts, NULL);
    }
}

void gmp_wt_finish(int reason, unsigned timeout_ms)
{
    if (!gmp_wt_running())
        return;
    atomic_store(&W.finish_req, reason + 1);
    gmp_wake();
    struct timespec dl;
    clock_gettime(CLOCK_REALTIME, &dl);
    dl.tv_sec += timeout_ms / 1000;
    dl.tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
    if (dl.tv_nsec >= 1000000000L) {
        dl.tv_sec++;
        dl.tv_nsec -= 1000000000L;
    }
    if (pthread_timedjoin_np(W.th, NULL, &dl) != 0)
        gmp_log_error("the trace writer did not finish within %u s; %s may lack its end", timeout_ms / 1000,
                      W.trace.path);
}

void gmp_wt_cutoff(uint64_t ts)
{
    uint64_t none = UINT64_MAX;
    atomic_compare_exchange_strong(&W.cutoff, &none, ts);
}

int gmp_wt_finish_signal(int sig)
{
    if (!atomic_load(&W.running))
        return -1;
    int none = 0;
    atomic_compare_exchange_strong(&W.finish_sig, &none, sig);
    gmp_wake();
    return 0;
}

int gmp_wt_dump_request(void)
{
    if (!atomic_load(&W.running) || !W.rec_on)
        return -1;
    atomic_store(&W.dump_req, 1);
    gmp_wake();
    return 0;
}

void gmp_wt_wait(unsigned timeout_ms)
{
    for (unsigned waited = 0; waited < timeout_ms && atomic_load(&W.running); waited++) {
        struct timespec ts = {0, 1000000};
        nanosleep(&ts, NULL);
    }
}
