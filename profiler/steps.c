/*
 * Schedule transitions (steps.h): every step source (the in-app API, NVTX
 * step markers, cudaProfilerStart/Stop, the time schedule's tick) and every
 * tag goes through here. A transition runs the schedule (schedule.c) under
 * the step lock, switches kernel collection at the phase edges, takes a
 * driver snapshot, and publishes the next epoch (gmp_g.epoch) for every
 * thread to stamp its calls with; the writer reads the epochs back under
 * the same lock.
 */
#include "steps.h"

#include <stddef.h>
#include <string.h>

#include "activity.h"
#include "devices.h"
#include "gmp_rt.h"
#include "post.h"

static void on_none(int on) { (void)on; }
static void none(void) {}

static struct {
    pthread_mutex_t lock;       /* the schedule and the epoch history */
    gmp_sched sched;
    gmp_epoch_info epochs[GMP_EPOCH_HIST];
    _Atomic int api_steps;      /* gmemprof_step() was called: the other step sources are ignored */
    _Atomic int nvtx_steps;     /* an NVTX step marker came: optimizer steps are ignored (AUTO) */
    uint64_t steps;             /* steps taken, under the lock */
    int last_source;            /* the source of the latest of them */
    gmp_steps_hooks hooks;      /* every one set: a no-op where none was given */
    gmp_steps_settings set;     /* read-only after init */
} S = {.lock = PTHREAD_MUTEX_INITIALIZER, .hooks = {on_none, on_none, none, none}};

/* What is collected in a phase that collects (on) or not: the schedule's
 * choice, but the flight recorder records the whole run, so beside a
 * schedule of windows it keeps the op ranges on (a failure names its op),
 * and kernels too when it keeps them (GMEMPROF_KERNELS given). */
static void collect_set(int on)
{
    S.hooks.collect(on || S.set.oom_kernels);
    S.hooks.watch_ops(on || S.set.on_oom);
}

static void publish_epoch(unsigned ev, int kind, int source, uint64_t snap)
{
    const gmp_sched *s = &S.sched;
    uint32_t e = atomic_load_explicit(&gmp_g.epoch, memory_order_relaxed) + (kind == GMP_TR_INIT ? 0 : 1);
    gmp_epoch_info *info = &S.epochs[e % GMP_EPOCH_HIST];
    info->epoch = e;
    info->ev = ev;
    info->ts = gmp_now();
    info->step = s->step;
    info->window = s->window;
    info->phase = (uint8_t)s->phase;
    info->source = (uint8_t)source;
    info->kind = (uint8_t)kind;
    info->in_window = (uint8_t)s->in_window;
    info->snap = snap;
    atomic_store_explicit(&gmp_g.epoch, e, memory_order_release);
}

void gmp_steps_init(const gmp_steps_hooks *hooks, const gmp_steps_settings *set)
{
    S.set = *set;
    gmp_steps_hooks h = {0};
    if (hooks)
        h = *hooks;
    S.hooks.collect = h.collect ? h.collect : on_none;
    S.hooks.watch_ops = h.watch_ops ? h.watch_ops : on_none;
    S.hooks.attach = h.attach ? h.attach : none;
    S.hooks.flush = h.flush ? h.flush : none;
    atomic_store(&S.api_steps, 0);
    atomic_store(&S.nvtx_steps, 0);
    pthread_mutex_lock(&S.lock);
    S.steps = 0;
    S.last_source = GMT_STEPSRC_NONE;
    unsigned ev = gmp_sched_init(&S.sched, &S.set.schedule, gmp_now());
    atomic_store(&gmp_g.epoch, 0);
    publish_epoch(ev, GMP_TR_INIT, GMT_STEPSRC_NONE, 0);
    pthread_mutex_unlock(&S.lock);
}

void gmp_steps_transition(int kind, int arg, int source)
{
    if (!gmp_live_state() || atomic_load(&gmp_g.stopping))
        return;
    S.hooks.flush(); /* the allocator's events of the step that ends, first */
    pthread_mutex_lock(&S.lock);
    unsigned ev;
    switch (kind) {
    case GMP_TR_STEP:
        ev = gmp_sched_step(&S.sched);
        break;
    case GMP_TR_CAPTURE:
        ev = gmp_sched_capture(&S.sched, arg);
        break;
    case GMP_TR_TICK:
        ev = gmp_sched_tick(&S.sched, gmp_now());
        break;
    default:
        ev = 0;
        break;
    }
    if (kind != GMP_TR_STEP && ev == 0) {
        pthread_mutex_unlock(&S.lock);
        return; /* nothing changed: no new epoch */
    }
    /* A window edge needs every record made before it in our queue first,
     * so the writer can put the baseline (and the window's last records)
     * exactly: forced flush, synchronous. Edges are rare. */
    /* So does a step of the flight recorder: its ring is cut at steps. */
    if ((ev & (GMP_SCHED_EV_WINDOW_BEGIN | GMP_SCHED_EV_WINDOW_END)) || (S.set.on_oom && kind == GMP_TR_STEP))
        gmp_activity_flush_forced();
    if (ev & GMP_SCHED_EV_COLLECT_BEGIN)
        collect_set(1);
    if (ev & GMP_SCHED_EV_COLLECT_END)
        collect_set(0);
    if (kind == GMP_TR_STEP) {
        S.steps++;
        S.last_source = source;
    }
    publish_epoch(ev, kind, source, gmp_snapshot_take());
    pthread_mutex_unlock(&S.lock);
    gmp_wake();
}

/* Whether a step from `source` counts (GMEMPROF_STEP_SOURCE, steps.h). */
static int source_counts(int source)
{
    int mode = S.set.step_source;
    switch (source) {
    case GMT_STEPSRC_API:
        atomic_store(&S.api_steps, 1);
        return 1;
    case GMT_STEPSRC_NVTX:
        if (atomic_load(&S.api_steps) || mode == GMP_STEPS_OPTIMIZER || mode == GMP_STEPS_NONE)
            return 0;
        atomic_store(&S.nvtx_steps, 1);
        return 1;
    case GMT_STEPSRC_OPTIMIZER:
        return !atomic_load(&S.api_steps) && (mode == GMP_STEPS_OPTIMIZER ||
                                              (mode == GMP_STEPS_AUTO && !atomic_load(&S.nvtx_steps)));
    default:
        return 1;
    }
}

void gmp_steps_step(int source)
{
    if (!gmp_live_state())
        return;
    S.hooks.attach();
    if (!source_counts(source))
        return;
    gmp_steps_transition(GMP_TR_STEP, 0, source);
}

int gmp_steps_wants_optimizer(void)
{
    int mode = S.set.step_source;
    return mode == GMP_STEPS_OPTIMIZER || mode == GMP_STEPS_AUTO;
}

uint64_t gmp_steps_count(int *source)
{
    pthread_mutex_lock(&S.lock);
    uint64_t n = S.steps;
    if (source)
        *source = n ? S.last_source : GMT_STEPSRC_NONE;
    pthread_mutex_unlock(&S.lock);
    return n;
}

void gmp_steps_tag(const char *name, size_t len)
{
    if (!gmp_live_state())
        return;
    S.hooks.attach();
    S.hooks.flush();
    /* The snapshot must include every allocation made before this call. */
    gmp_activity_flush_forced();
    gmp_ev ev;
    memset(&ev, 0, offsetof(gmp_ev, name));
    ev.type = GMP_EV_TAG;
    ev.c = gmp_snapshot_take(); /* the driver's view now, not when the writer gets there */
    gmp_ev_set_name(&ev, name, len);
    gmp_post(&ev);
    gmp_wake();
}

void gmp_steps_apply_collect(void)
{
    pthread_mutex_lock(&S.lock);
    collect_set(gmp_sched_collects(&S.sched));
    pthread_mutex_unlock(&S.lock);
}

const gmp_epoch_info *gmp_steps_lock(int try_only)
{
    if (try_only) {
        if (pthread_mutex_trylock(&S.lock) != 0)
            return NULL;
    } else {
        pthread_mutex_lock(&S.lock);
    }
    return S.epochs;
}

void gmp_steps_unlock(void) { pthread_mutex_unlock(&S.lock); }
