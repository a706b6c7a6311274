/*
 * libgmemprof.so entry points and life cycle.
 *
 *   InitializeInjection       the CUDA driver calls it inside cuInit when
 *                             CUDA_INJECTION64_PATH names this library
 *   InitializeInjectionNvtx2  NVTX calls it at a program's first NVTX call
 *                             when NVTX_INJECTION64_PATH names this library
 *   gmemprof_step_impl / gmemprof_mark_impl   the in-app API
 *
 * Two init levels, each done once, from whichever entry comes first:
 *   light: settings (each problem printed once), the schedule, the event
 *          ring and correlation table, exit/fork handlers. Enough for NVTX
 *          and the in-app API to queue steps, ranges and tags before CUDA
 *          starts.
 *   full:  CUPTI and the driver (dlopen), the subscription, the output file,
 *          the writer thread, CUPTI buffers and callbacks, signal handlers.
 *          Done by InitializeInjection; by InitializeInjectionNvtx2 only when
 *          CUDA_INJECTION64_PATH does not name this library (then nobody else
 *          will).
 * A problem at any point prints one "gmemprof: " line and turns the
 * profiler off; the program runs on, and InitializeInjection still returns 1
 * (a failed injection must not change what CUDA does).
 *
 * Exit: atexit and a destructor (whichever runs first) flush CUPTI (forced),
 * let the writer finish the trace (WINDOW_END, STATS, TRAILER) and print the
 * summary. SIGTERM/SIGINT/SIGHUP: if the program had a handler, ours calls it (the
 * program decides; a normal exit then flushes through atexit); if it had the
 * default action, ours only asks the writer to end the trace and returns
 * (no lock, no wait: the interrupted thread may hold what the writer
 * needs); the writer then makes the process die by the signal, and a
 * watchdog timer sends it again after 5 s in case the writer is stuck; if
 * the program ignored the signal, we install nothing. cudaDeviceReset:
 * flush before it.
 *
 * fork: the child of a profiled process records nothing and never flushes
 * (its copy of the writer thread does not exist, and CUPTI does not work
 * after fork); an exec'd child with the variables set starts its own trace
 * (use %p in GMEMPROF_OUTPUT so the names differ).
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "gmemprof/gmemprof.h"
#include "activity.h"
#include "callbacks.h"
#include "gmp_rt.h"
#include "gmt_io.h"
#include "log.h"
#include "nvtx.h"
#include "post.h"
#include "steps.h"
#include "summary.h"
#include "torch.h"
#include "wthread.h"

#define GMP_API __attribute__((visibility("default")))

/* The settings, read once at light init; the modules get them as
 * parameters at their init (or through gmp_settings()), never write them. */
static gmp_config g_cfg;
static uint64_t g_start_unix_ns; /* the run's start, on the trace clock */
static char g_path[GMP_PATH_MAX];  /* the trace file ("" until chosen at full init) */


/* ---- off ----------------------------------------------------------------- */

static _Atomic int g_disabled_by_error;

static void write_disabled_summary(void)
{
    if (!g_cfg.summary_file[0])
        return;
    static gmp_summary sm; /* once, at the end: not on the caller's stack */
    memset(&sm, 0, sizeof sm);
    snprintf(sm.trace, sizeof sm.trace, "%s", g_path);
    snprintf(sm.status, sizeof sm.status, "%s", GMP_SUMMARY_STATUS_DISABLED);
    char line[GMP_SUMMARY_LINE_MAX];
    size_t n = gmp_summary_format_line(line, sizeof line, &sm);
    int fd = open(g_cfg.summary_file, O_WRONLY | O_APPEND | O_CLOEXEC);
    if (fd < 0)
        return;
    if (n < sizeof line) {
        ssize_t w = write(fd, line, n);
        (void)w;
    }
    close(fd);
}

static void turn_off(void)
{
    atomic_store(&g_disabled_by_error, 1);
    atomic_store(&gmp_g.state, GMP_ST_OFF);
}

/* ---- exit, signals, fork -------------------------------------------------- */

static void gmp_shutdown(int reason)
{
    if (atomic_load(&gmp_g.forked))
        return;
    if (atomic_exchange(&gmp_g.stopping, 1)) {
        /* A signal's end may be under way: exiting now would cut the trace
         * and turn the death by the signal into an exit. */
        gmp_wt_wait(10000);
        return;
    }
    int st = atomic_load(&gmp_g.state);
    if (st == GMP_ST_ON) {
        /* Other threads may go on calling CUDA while exit() runs: what they
         * make from now on is not the trace's, and the writer takes no
         * buffer after the flush, so the end takes bounded time. */
        gmp_wt_cutoff(gmp_now());
        gmp_torch_flush();
        gmp_torch_detach(); /* its allocator may still run in atexit handlers */
        gmp_activity_flush_forced();
        gmp_bufq_accept(0); /* later buffers: counted as dropped as they come */
        gmp_wt_finish(reason, 10000);
        atomic_store(&gmp_g.state, GMP_ST_OFF);
        return;
    }
    atomic_store(&gmp_g.state, GMP_ST_OFF);
    if (atomic_load(&g_disabled_by_error))
        write_disabled_summary();
}

static void on_exit_handler(void) { gmp_shutdown(GMT_WEND_EXIT); }

__attribute__((destructor)) static void gmp_destructor(void) { gmp_shutdown(GMT_WEND_EXIT); }

static void on_fork_child(void)
{
    atomic_store(&gmp_g.forked, 1);
    atomic_store(&gmp_g.state, GMP_ST_OFF);
    gmp_wake_forget(); /* shared with the parent: never poke the parent's writer */
}

/* The signals that end a program by default and that a user sends to stop
 * one: a closed terminal or SSH session sends SIGHUP. */
#define GMP_NSIGS 3
static const int g_sigs[GMP_NSIGS] = {SIGTERM, SIGINT, SIGHUP};
static struct sigaction g_prev[GMP_NSIGS];
/* Per signal, a one-shot timer that sends it again if the writer has not
 * ended the trace in time (the writer could be stuck in a write): the
 * handler then takes the default action at once. */
static timer_t g_watchdog[GMP_NSIGS];
static int g_have_watchdog[GMP_NSIGS];
#define GMP_SIGNAL_WATCHDOG_S 5

/* The default action now: die by the signal. */
static void die_now(int sig)
{
    struct sigaction dfl;
    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    sigemptyset(&dfl.sa_mask);
    (void)sigaction(sig, &dfl, NULL); /* cannot fail for these signals with SIG_DFL */
    sigset_t s;
    sigemptyset(&s);
    sigaddset(&s, sig);
    sigprocmask(SIG_UNBLOCK, &s, NULL);
    raise(sig);
}

/* Takes no lock and waits for nothing: the interrupted thread may hold a
 * lock the writer needs (the buffer pool's, CUPTI's, the step lock). The
 * writer is asked to end the trace and returns here at once; it makes the
 * process die by the signal once the trailer is written. */
static void on_signal(int sig, siginfo_t *si, void *uc)
{
    int i = 0;
    while (i < GMP_NSIGS - 1 && g_sigs[i] != sig)
        i++;
    const struct sigaction *p = &g_prev[i];
    if (p->sa_flags & SA_SIGINFO) {
        if (p->sa_sigaction) {
            p->sa_sigaction(sig, si, uc);
            return;
        }
    } else if (p->sa_handler != SIG_DFL && p->sa_handler != SIG_IGN) {
        p->sa_handler(sig);
        return;
    }
    int saved = errno;
    if (!atomic_load(&gmp_g.forked) && atomic_load(&gmp_g.state) == GMP_ST_ON &&
        !atomic_exchange(&gmp_g.stopping, 1) && gmp_wt_finish_signal(sig) == 0) {
        if (g_have_watchdog[i]) {
            struct itimerspec its;
            memset(&its, 0, sizeof its);
            its.it_value.tv_sec = GMP_SIGNAL_WATCHDOG_S;
            (void)timer_settime(g_watchdog[i], 0, &its, NULL); /* async-signal-safe */
        }
        errno = saved;
        return;
    }
    /* Not recording, a second signal, or the watchdog: the default action. */
    die_now(sig);
    errno = saved;
}

static void install_signal_handlers(void)
{
    for (int i = 0; i < GMP_NSIGS; i++) {
        struct sigaction old, sa;
        if (sigaction(g_sigs[i], NULL, &old) != 0)
            continue;
        if (!(old.sa_flags & SA_SIGINFO) && old.sa_handler == SIG_IGN)
            continue; /* the program ignores it: so do we */
        g_prev[i] = old;
        struct sigevent sev;
        memset(&sev, 0, sizeof sev);
        sev.sigev_notify = SIGEV_SIGNAL;
        sev.sigev_signo = g_sigs[i];
        g_have_watchdog[i] = timer_create(CLOCK_MONOTONIC, &sev, &g_watchdog[i]) == 0;
        memset(&sa, 0, sizeof sa);
        sa.sa_sigaction = on_signal;
        sa.sa_flags = SA_SIGINFO | SA_RESTART;
        sigemptyset(&sa.sa_mask);
        if (sigaction(g_sigs[i], &sa, NULL) != 0)
            gmp_log_debug("cannot handle signal %d: the trace is not finished if it arrives", g_sigs[i]);
    }
}

/* SIGUSR2 (GMEMPROF_OOM_SIGNAL=1): a flight recorder's dump, for a job that
 * hangs. Like on_signal, it takes no lock and waits for nothing: it asks the
 * writer and returns. A handler the program had is called too. */
static struct sigaction g_prev_usr2;

static void on_dump_signal(int sig, siginfo_t *si, void *uc)
{
    int saved = errno;
    if (!atomic_load(&gmp_g.forked))
        (void)gmp_wt_dump_request();
    errno = saved;
    if (g_prev_usr2.sa_flags & SA_SIGINFO) {
        if (g_prev_usr2.sa_sigaction)
            g_prev_usr2.sa_sigaction(sig, si, uc);
    } else if (g_prev_usr2.sa_handler != SIG_DFL && g_prev_usr2.sa_handler != SIG_IGN) {
        g_prev_usr2.sa_handler(sig);
    }
}

static void install_dump_signal(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_dump_signal;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&sa.sa_mask);
    if (sigaction(SIGUSR2, NULL, &g_prev_usr2) != 0 || sigaction(SIGUSR2, &sa, NULL) != 0)
        gmp_log_error("cannot handle SIGUSR2 (%s): GMEMPROF_OOM_SIGNAL=1 has no effect", strerror(errno));
}

/* ---- init ---------------------------------------------------------------- */

static _Atomic int g_light; /* 0 not done, 1 running, 2 done */
static _Atomic int g_full;
static __thread int g_in_init;

static void wait_done(_Atomic int *flag)
{
    /* Another thread is initializing: wait for it (bounded; the init itself
     * never waits for an application thread). */
    for (int i = 0; i < 5000 && atomic_load(flag) != 2; i++) {
        struct timespec ts = {0, 1000000};
        nanosleep(&ts, NULL);
    }
}

static size_t pow2_floor(size_t v)
{
    size_t p = 1;
    while (p * 2 <= v)
        p *= 2;
    return p;
}

extern char **environ;

static int light_body(void)
{
    gmp_diag diag;
    memset(&diag, 0, sizeof diag);
    gmp_config_load(&g_cfg, NULL, NULL, &diag);
    gmp_settings_publish(&g_cfg);
    gmp_log_set_level(g_cfg.log);
    gmp_config_check_names(environ, &diag); /* misspelled GMEMPROF_* names */
    for (int i = 0; i < diag.count; i++)
        gmp_log_error("%s", diag.line[i]);
    if (diag.lost)
        gmp_log_error("(%d more problems with GMEMPROF_* settings not shown)", diag.lost);
    if (!g_cfg.enabled) {
        /* Off by request (GMEMPROF_ENABLE=0) or by a bad output pattern (its
         * line is above): the launcher must say "off", not "no CUDA". */
        if (diag.count == 0)
            gmp_log_info("GMEMPROF_ENABLE=0: profiling is off");
        write_disabled_summary();
        return -1;
    }

    g_start_unix_ns = gmp_now(); /* the trace clock is CLOCK_REALTIME: start_ts is the same */

    /* Fixed parts of the host budget (see gmp_activity_setup_buffers). */
    size_t total = (size_t)g_cfg.host_buffer_mb << 20;
    size_t ring = pow2_floor(total / 16 / sizeof(gmp_ring_cell));
    if (ring > 16384)
        ring = 16384;
    if (ring < 256)
        ring = 256;
    size_t slots = pow2_floor(total / 8 / sizeof(gmp_corr_slot));
    if (slots > ((size_t)1 << 18))
        slots = (size_t)1 << 18;
    if (slots < 4096)
        slots = 4096;
    gmp_g.corr.slots = calloc(slots, sizeof *gmp_g.corr.slots);
    gmp_g.corr.mask = (uint32_t)(slots - 1);
    if (!gmp_g.corr.slots || gmp_ring_init(&gmp_g.ring, ring) != 0) {
        gmp_log_error("out of memory for the profiler's tables; profiling is off");
        return -1;
    }
    /* Without the wake-up semaphore the writer still polls the ring every
     * 20 ms: only the early wake-ups are lost. */
    gmp_wake_open();
    gmp_steps_hooks hooks = {.collect = gmp_callbacks_collect,
                             .watch_ops = gmp_torch_watch_ops,
                             .attach = gmp_torch_maybe_attach,
                             .flush = gmp_torch_flush};
    gmp_steps_settings ss = {.schedule = g_cfg.schedule,
                             .step_source = g_cfg.step_source,
                             .on_oom = g_cfg.on_oom,
                             .oom_kernels = g_cfg.oom_kernels};
    gmp_steps_init(&hooks, &ss);
    /* Without the fork handler a child would try to use a writer thread it
     * does not have: refuse to run rather than risk a hang in the child. */
    if (pthread_atfork(NULL, NULL, on_fork_child) != 0) {
        gmp_log_error("cannot register a fork handler; profiling is off");
        return -1;
    }
    if (atexit(on_exit_handler) != 0)
        gmp_log_debug("atexit is full: the trace is finished by the library destructor only");
    return 0;
}

int gmp_init_light(void)
{
    if (atomic_load(&g_light) == 2)
        return gmp_live_state() ? 0 : -1;
    if (g_in_init)
        return -1;
    int exp = 0;
    if (!atomic_compare_exchange_strong(&g_light, &exp, 1)) {
        wait_done(&g_light);
        return gmp_live_state() ? 0 : -1;
    }
    g_in_init = 1;
    int rc = light_body();
    atomic_store(&gmp_g.state, rc == 0 ? GMP_ST_LIGHT : GMP_ST_OFF);
    g_in_init = 0;
    atomic_store(&g_light, 2);
    return rc;
}

static int full_body(void)
{
    char err[640];
    if (gmp_cuapi_load(&gmp_g.api, getenv("GMEMPROF_CUPTI_LIB"), err, sizeof err) != 0) {
        gmp_log_error("%s; profiling is off (the program runs on)", err);
        return -1;
    }
    gmp_log_debug("CUPTI: %s", gmp_g.api.cupti_from);
    gmp_callbacks_init(g_cfg.kernels, &g_cfg.schedule);
    if (gmp_activity_subscribe(gmp_callbacks_fn(), err, sizeof err) != 0) {
        gmp_log_error("%s", err);
        return -1;
    }

    char host[256] = "localhost";
    if (gethostname(host, sizeof host - 1) != 0)
        snprintf(host, sizeof host, "localhost"); /* only names the file */
    host[sizeof host - 1] = '\0';
    gmp_diag diag;
    memset(&diag, 0, sizeof diag);
    char *path = g_path;
    if (gmp_config_expand_output(g_cfg.output, path, sizeof g_path, (long)getpid(), host,
                                 gmp_config_rank(NULL, NULL), g_start_unix_ns, &diag) != 0) {
        gmp_log_error("%s; profiling is off", diag.count ? diag.line[0] : "bad GMEMPROF_OUTPUT");
        gmp_activity_unsubscribe();
        return -1;
    }
    if (path[0] != '/') {
        /* absolute, so the summary names the file wherever it is read */
        char cwd[PATH_MAX], abs[GMP_PATH_MAX];
        if (getcwd(cwd, sizeof cwd) &&
            (size_t)snprintf(abs, sizeof abs, "%s/%s", cwd, path) < sizeof abs)
            memcpy(path, abs, strlen(abs) + 1);
    }
    gmt_writer_opts wo = {g_cfg.zstd_level, 0};
    char why[GMP_PATH_MAX + 128];
    /* the flight recorder alone makes a file only when something fails */
    int trace = !g_cfg.on_oom || gmp_config_oom_beside(&g_cfg);
    /* The name is taken when the first context is made (the writer claims
     * it): a process that makes none leaves it to one that records. */
    gmt_writer *w = trace ? gmt_writer_create_unclaimed(path, &wo, why, sizeof why) : NULL;
    if (!w && trace) {
        gmp_log_error("%s; profiling is off (the program runs on)", why);
        gmp_activity_unsubscribe();
        return -1;
    }
    size_t budget = (size_t)g_cfg.host_buffer_mb << 20;
    size_t fixed = gmp_ring_bytes(&gmp_g.ring) + ((size_t)gmp_g.corr.mask + 1) * sizeof(gmp_corr_slot) +
                   gmp_wt_staging_bytes(budget);
    gmp_wt_setup ws = {.cfg = &g_cfg, .path = path, .start_unix_ns = g_start_unix_ns, .start_ts = g_start_unix_ns};
    if (gmp_activity_setup_buffers(budget, fixed, (size_t)g_cfg.cupti_buffer_kb << 10, err, sizeof err) != 0 ||
        gmp_wt_start(w, &ws, err, sizeof err) != 0) {
        gmp_log_error("%s; profiling is off", err);
        gmp_activity_unsubscribe();
        if (!gmp_wt_running() && w)
            gmt_writer_close(w); /* never claimed: its file is removed */
        return -1;
    }
    if (gmp_activity_enable((size_t)g_cfg.device_buffer_kb << 10, err, sizeof err) != 0) {
        gmp_log_error("%s; profiling is off", err);
        gmp_wt_finish(GMT_WEND_ERROR, 5000);
        gmp_activity_unsubscribe();
        return -1;
    }
    gmp_callbacks_enable();
    atomic_store(&gmp_g.state, GMP_ST_ON);
    /* Kernel collection as the current phase wants it (steps may have come
     * through NVTX or the in-app API before CUDA started). */
    gmp_steps_apply_collect();
    install_signal_handlers();
    if (g_cfg.on_oom && g_cfg.oom_signal)
        install_dump_signal();
    gmp_wake();
    return 0;
}

int gmp_init_full(void)
{
    if (gmp_init_light() != 0)
        return -1;
    if (atomic_load(&g_full) == 2)
        return gmp_on() ? 0 : -1;
    if (g_in_init)
        return -1; /* CUPTI called back into us from inside our own init */
    int exp = 0;
    if (!atomic_compare_exchange_strong(&g_full, &exp, 1)) {
        wait_done(&g_full);
        return gmp_on() ? 0 : -1;
    }
    g_in_init = 1;
    int rc = full_body();
    if (rc != 0)
        turn_off();
    g_in_init = 0;
    atomic_store(&g_full, 2);
    return rc;
}

/* The path this library was loaded from. */
static int self_path(char *out, size_t cap)
{
    Dl_info info;
    if (!dladdr((void *)&gmp_init_full, &info) || !info.dli_fname || !info.dli_fname[0])
        return -1;
    if (!realpath(info.dli_fname, out)) {
        if (strlen(info.dli_fname) >= cap)
            return -1;
        memcpy(out, info.dli_fname, strlen(info.dli_fname) + 1);
    }
    (void)cap;
    return 0;
}

/* ---- exported entry points ------------------------------------------------ */

GMP_API int InitializeInjection(void);
GMP_API int InitializeInjectionNvtx2(const void *(*get_export_table)(uint32_t));

int InitializeInjection(void)
{
    gmp_init_full();
    if (gmp_on() && !getenv("NVTX_INJECTION64_PATH")) {
        /* NVTX calls made from now on reach us even when only
         * CUDA_INJECTION64_PATH was set. A program that calls NVTX before
         * CUDA starts needs the launcher or the variable (docs). */
        char self[PATH_MAX];
        if (self_path(self, sizeof self) != 0 || setenv("NVTX_INJECTION64_PATH", self, 0) != 0)
            gmp_log_debug("cannot point NVTX_INJECTION64_PATH at this library: NVTX ranges are not seen");
    }
    return 1; /* always: a profiler problem must not change what CUDA does */
}

int InitializeInjectionNvtx2(const void *(*get_export_table)(uint32_t))
{
    if (gmp_init_light() != 0)
        return 0; /* NVTX calls stay no-ops */
    /* Nobody else will start CUPTI unless the driver loads this library. */
    const char *cip = getenv("CUDA_INJECTION64_PATH");
    char self[PATH_MAX], other[PATH_MAX];
    int driver_loads_us = cip && cip[0] && self_path(self, sizeof self) == 0 && realpath(cip, other) &&
                          strcmp(self, other) == 0;
    if (!driver_loads_us)
        gmp_init_full();
    if (!gmp_live_state())
        return 0;
    return gmp_nvtx_attach(get_export_table);
}

GMP_API void gmemprof_step_impl(void)
{
    if (gmp_init_light() != 0)
        return;
    gmp_steps_step(GMT_STEPSRC_API);
}

GMP_API void gmemprof_mark_impl(const char *name)
{
    if (!name || gmp_init_light() != 0)
        return;
    gmp_steps_tag(name, strlen(name));
}
