/*
 * Schedule transitions (profiler/steps.c), with the writer's side (the
 * event ring, the driver snapshot, the CUPTI flush) stubbed here.
 *
 * - The schedule handed over at init runs: an epoch per step, published
 *   with its step, phase, window and snapshot; the collection hooks at the
 *   phase edges; a forced flush at window edges only.
 * - The flight recorder's settings: collection and op ranges stay on, and
 *   every step flushes (its ring is cut at steps).
 * - Which step source counts (GMEMPROF_STEP_SOURCE): gmemprof_step() over
 *   NVTX over optimizer steps in AUTO, one source in the others.
 * - A tag: the hooks, a flush, a TAG event with its snapshot.
 * - Nothing while the profiler is not live or is stopping.
 */
#include <string.h>

#include "../check.h"
#include "activity.h"
#include "devices.h"
#include "gmp_rt.h"
#include "post.h"
#include "steps.h"

gmp_rt gmp_g;
__thread gmp_tls gmp_t;

/* ---- stubs of the modules steps.c calls ---- */
static int n_flush_forced;
static uint64_t n_snaps;
static gmp_ev last_ev;
static int n_posted;
void gmp_activity_flush_forced(void) { n_flush_forced++; }
uint64_t gmp_snapshot_take(void) { return ++n_snaps; }
void gmp_post(gmp_ev *ev)
{
    last_ev = *ev;
    n_posted++;
}
void gmp_wake(void) {}

/* ---- the hooks, as a log ---- */
static int collect_on = -1, watch_on = -1, n_collect, n_attach, n_hflush;
static void h_collect(int on)
{
    collect_on = on;
    n_collect++;
}
static void h_watch(int on) { watch_on = on; }
static void h_attach(void) { n_attach++; }
static void h_flush(void) { n_hflush++; }

static void reset_log(void)
{
    collect_on = watch_on = -1;
    n_collect = n_attach = n_hflush = n_flush_forced = n_posted = 0;
    n_snaps = 0;
}

static void init(const char *schedule, int step_source, int on_oom, int oom_kernels)
{
    gmp_steps_settings set;
    memset(&set, 0, sizeof set);
    char err[256];
    REQUIRE(gmp_sched_parse(schedule, &set.schedule, err, sizeof err) == 0, "%s", err);
    set.step_source = step_source;
    set.on_oom = on_oom;
    set.oom_kernels = oom_kernels;
    gmp_steps_hooks hooks = {h_collect, h_watch, h_attach, h_flush};
    reset_log();
    atomic_store(&gmp_g.state, GMP_ST_LIGHT);
    atomic_store(&gmp_g.stopping, 0);
    gmp_steps_init(&hooks, &set);
}

static gmp_epoch_info epoch(uint32_t e)
{
    const gmp_epoch_info *h = gmp_steps_lock(0);
    gmp_epoch_info i = h[e % GMP_EPOCH_HIST];
    gmp_steps_unlock();
    return i;
}

static uint32_t published(void) { return atomic_load(&gmp_g.epoch); }

static void test_schedule(void)
{
    tc_context("schedule");
    /* step 0 WAIT, 1 WARMUP, 2 and 3 ACTIVE (one window), 4 on DONE */
    init("wait=1,warmup=1,active=2", GMP_STEPS_AUTO, 0, 0);
    CHECK_EQ_U64(published(), 0);
    gmp_epoch_info e = epoch(0);
    CHECK(e.epoch == 0 && e.kind == GMP_TR_INIT && e.step == 0 && e.phase == GMT_PHASE_WAIT);
    CHECK_EQ_U64(e.snap, 0); /* no snapshot before the run */
    gmp_steps_apply_collect();
    CHECK(collect_on == 0 && watch_on == 0);

    gmp_steps_step(GMT_STEPSRC_API);
    CHECK_EQ_U64(published(), 1);
    e = epoch(1);
    CHECK(e.kind == GMP_TR_STEP && e.step == 1 && e.phase == GMT_PHASE_WARMUP && e.source == GMT_STEPSRC_API);
    CHECK(e.ev & GMP_SCHED_EV_COLLECT_BEGIN);
    CHECK(collect_on == 1 && watch_on == 1);
    CHECK_EQ_U64(e.snap, 1);
    CHECK(n_attach == 1 && n_hflush == 1);
    CHECK_EQ_U64(n_flush_forced, 0); /* no window edge */

    gmp_steps_step(GMT_STEPSRC_API);
    e = epoch(2);
    CHECK(e.step == 2 && e.phase == GMT_PHASE_ACTIVE && e.in_window == 1 && e.window == 1);
    CHECK(e.ev & GMP_SCHED_EV_WINDOW_BEGIN);
    CHECK_EQ_U64(n_flush_forced, 1); /* the window's baseline needs every record before it */

    gmp_steps_step(GMT_STEPSRC_API);
    e = epoch(3);
    CHECK(e.step == 3 && e.ev == 0); /* a step that changes nothing still has its epoch */
    CHECK_EQ_U64(n_flush_forced, 1);

    int before = n_collect;
    gmp_steps_step(GMT_STEPSRC_API);
    e = epoch(4);
    CHECK(e.step == 4 && e.phase == GMT_PHASE_DONE && e.in_window == 0);
    CHECK(e.ev & GMP_SCHED_EV_WINDOW_END);
    CHECK(collect_on == 0 && n_collect == before + 1);
    CHECK_EQ_U64(n_flush_forced, 2);
    CHECK_EQ_U64(e.snap, 4);

    int source = -1;
    CHECK_EQ_U64(gmp_steps_count(&source), 4);
    CHECK_EQ_U64(source, GMT_STEPSRC_API);

    /* a capture edge or a tick changes nothing in a schedule of steps: no epoch */
    gmp_steps_transition(GMP_TR_CAPTURE, 1, GMT_STEPSRC_CAPTURE);
    gmp_steps_transition(GMP_TR_TICK, 0, GMT_STEPSRC_TIME);
    CHECK_EQ_U64(published(), 4);
}

static void test_recorder(void)
{
    tc_context("recorder");
    init("wait=1,warmup=1,active=2", GMP_STEPS_AUTO, 1, 1);
    gmp_steps_apply_collect();
    CHECK(collect_on == 1 && watch_on == 1); /* the ring records the whole run */
    gmp_steps_step(GMT_STEPSRC_API);          /* WAIT -> WARMUP: no window edge */
    CHECK_EQ_U64(n_flush_forced, 1);          /* but the ring is cut at steps */
    gmp_steps_step(GMT_STEPSRC_API);
    gmp_steps_step(GMT_STEPSRC_API);
    gmp_steps_step(GMT_STEPSRC_API); /* DONE: collection stays on */
    CHECK(collect_on == 1 && watch_on == 1);
    CHECK_EQ_U64(n_flush_forced, 4);

    init("wait=1,warmup=1,active=2", GMP_STEPS_AUTO, 1, 0);
    gmp_steps_apply_collect();
    CHECK(collect_on == 0 && watch_on == 1); /* kernels only when the ring keeps them */
}

static uint64_t count(void) { return gmp_steps_count(NULL); }

static void test_sources(void)
{
    tc_context("sources AUTO");
    init("", GMP_STEPS_AUTO, 0, 0);
    CHECK(gmp_steps_wants_optimizer());
    gmp_steps_step(GMT_STEPSRC_OPTIMIZER);
    CHECK_EQ_U64(count(), 1); /* optimizer steps until an NVTX marker comes */
    gmp_steps_step(GMT_STEPSRC_NVTX);
    CHECK_EQ_U64(count(), 2);
    gmp_steps_step(GMT_STEPSRC_OPTIMIZER);
    CHECK_EQ_U64(count(), 2); /* then NVTX markers alone */
    gmp_steps_step(GMT_STEPSRC_API);
    CHECK_EQ_U64(count(), 3);
    gmp_steps_step(GMT_STEPSRC_NVTX);
    gmp_steps_step(GMT_STEPSRC_OPTIMIZER);
    CHECK_EQ_U64(count(), 3); /* gmemprof_step() alone from then on */
    gmp_steps_step(GMT_STEPSRC_API);
    int source = -1;
    CHECK_EQ_U64(gmp_steps_count(&source), 4);
    CHECK_EQ_U64(source, GMT_STEPSRC_API);
    CHECK_EQ_U64(n_attach, 7); /* every step call may be the first chance to attach the bridge */

    tc_context("sources NVTX");
    init("", GMP_STEPS_NVTX, 0, 0);
    CHECK(!gmp_steps_wants_optimizer());
    gmp_steps_step(GMT_STEPSRC_OPTIMIZER);
    gmp_steps_step(GMT_STEPSRC_NVTX);
    CHECK_EQ_U64(count(), 1);

    tc_context("sources OPTIMIZER");
    init("", GMP_STEPS_OPTIMIZER, 0, 0);
    CHECK(gmp_steps_wants_optimizer());
    gmp_steps_step(GMT_STEPSRC_NVTX);
    gmp_steps_step(GMT_STEPSRC_OPTIMIZER);
    gmp_steps_step(GMT_STEPSRC_OPTIMIZER);
    CHECK_EQ_U64(count(), 2);

    tc_context("sources NONE");
    init("", GMP_STEPS_NONE, 0, 0);
    CHECK(!gmp_steps_wants_optimizer());
    gmp_steps_step(GMT_STEPSRC_NVTX);
    gmp_steps_step(GMT_STEPSRC_OPTIMIZER);
    CHECK_EQ_U64(count(), 0);
    source = -1;
    gmp_steps_count(&source);
    CHECK_EQ_U64(source, GMT_STEPSRC_NONE);
    gmp_steps_step(GMT_STEPSRC_API);
    CHECK_EQ_U64(count(), 1);
}

static void test_tag_and_off(void)
{
    tc_context("tag");
    init("", GMP_STEPS_AUTO, 0, 0);
    gmp_steps_tag("after load", 10);
    CHECK(n_attach == 1 && n_hflush == 1 && n_flush_forced == 1);
    CHECK_EQ_U64(n_posted, 1);
    CHECK(last_ev.type == GMP_EV_TAG);
    CHECK_EQ_U64(last_ev.c, 1); /* the snapshot taken at the call */
    CHECK_EQ_U64(published(), 0); /* a tag is not a transition */

    tc_context("off");
    atomic_store(&gmp_g.state, GMP_ST_NONE);
    gmp_steps_step(GMT_STEPSRC_API);
    gmp_steps_tag("x", 1);
    CHECK_EQ_U64(count(), 0);
    CHECK_EQ_U64(n_posted, 1);
    atomic_store(&gmp_g.state, GMP_ST_ON);
    atomic_store(&gmp_g.stopping, 1);
    gmp_steps_step(GMT_STEPSRC_API);
    CHECK_EQ_U64(published(), 0); /* the exit began: no new epoch */
    atomic_store(&gmp_g.stopping, 0);
}

int main(void)
{
    test_schedule();
    test_recorder();
    test_sources();
    test_tag_and_off();
    return tc_result("test_steps");
}
