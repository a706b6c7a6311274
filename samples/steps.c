/*
 * steps / nvtx_steps: a training-like loop with a known allocation pattern
 * per step, for the schedule, baseline and tag tests. Built twice: `steps`
 * marks steps and tags with the in-app API (gmemprof_step, gmemprof_mark);
 * `nvtx_steps` (-DGMS_USE_NVTX) with NVTX marks "step" and "tag:NAME".
 *
 * Setup (step 0): cudaMalloc 8 MiB ("model") and 16 MiB ("optimizer"), kernel
 * gm_k_setup, tag "after_setup" (live 24 MiB).
 * Iteration k = 0..N-1 (--steps N, default 10), running in step k:
 *   cudaMalloc (k+2) MiB scratch and 1 MiB leak (never freed), kernel
 *   gm_k_step (the consumer of both), tag "after_alloc" (live 24 MiB +
 *   (k+1) MiB of leaks + (k+2) MiB), cudaFree(scratch), then the step
 *   boundary: step k+1 begins.
 * End (step N): free model and optimizer, tag "end" (live N MiB of leaks).
 * So at the start of step s (mark styles, API) the live set is 2 + s allocations, 24 + s MiB;
 * that is the baseline a window beginning at step s must carry.
 * Example: schedule wait=2,warmup=1,active=3,repeat=1 -> one window, steps
 * 3..5, baseline 5 allocations / 27 MiB, per active step 2 allocations
 * ((k+2) MiB + 1 MiB) and 1 free, 1 gm_k_step kernel, no kernel outside.
 *
 * nvtx_steps --style: mark (default) "step" at the end of each iteration;
 * numbered: "step <k>" at the end of iteration k (as `nvtx.mark(f"step {i}")`
 * would); range: each iteration inside an NVTX push/pop range "step <n>".
 * The profiler takes a step-marker range's begin as the boundary
 * (profiler/sources/nvtx.c), so in the range style iteration k runs in step k+1 and
 * step 0 holds only the setup; the JSON records the steps that way.
 * --sleep-ms N pauses N ms per iteration (for time-based schedules).
 */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "gm_sample.h"

#ifdef GMS_USE_NVTX
#include <nvtx3/nvToolsExt.h>
#define SAMPLE_NAME "nvtx_steps"
#else
#define GMEMPROF_API_IMPL
#include "gmemprof/gmemprof.h"
#define SAMPLE_NAME "steps"
#endif

static void tag(const char *name)
{
    gms_note_tag(name);
#ifdef GMS_USE_NVTX
    char buf[96];
    snprintf(buf, sizeof buf, "tag:%s", name);
    nvtxMarkA(buf);
#else
    gmemprof_mark(name);
#endif
}

/* The boundary after an iteration (mark styles and the API). */
static void step_mark(const char *style)
{
#ifdef GMS_USE_NVTX
    if (!strcmp(style, "numbered")) {
        char buf[48];
        snprintf(buf, sizeof buf, "step %d", gms_current_step());
        nvtxMarkA(buf);
    } else {
        nvtxMarkA("step");
    }
#else
    (void)style;
    gmemprof_step();
#endif
    gms_note_step();
}

static void sleep_ms(int ms)
{
    if (ms <= 0)
        return;
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0) {
    }
}

int main(int argc, char **argv)
{
    gms_args args;
    gms_parse_args(SAMPLE_NAME, argc, argv, &args);
    /* CUDA first: with only CUDA_INJECTION64_PATH set, NVTX reaches the
     * profiler only for NVTX calls made after the driver loaded it. */
    gms_init_device(SAMPLE_NAME);
    int use_range = 0;
#ifdef GMS_USE_NVTX
    use_range = !strcmp(args.style, "range");
#else
    if (strcmp(args.style, "mark") != 0) {
        fprintf(stderr, "%s: --style applies to nvtx_steps only\n", SAMPLE_NAME);
        return 2;
    }
#endif

    gms_kernel ks[2] = {{"gm_k_setup", NULL}, {"gm_k_step", NULL}};
    gms_load_kernels(ks, 2);

    void *model = NULL, *opt = NULL;
    GMS_RT(cudaMalloc(&model, 8 * GMS_MIB));
    int im = gms_note_alloc("model", GMS_SRC_MALLOC, 8 * GMS_MIB, model, NULL, 0);
    GMS_RT(cudaMalloc(&opt, 16 * GMS_MIB));
    int io = gms_note_alloc("optimizer", GMS_SRC_MALLOC, 16 * GMS_MIB, opt, NULL, 0);
    gms_launch(&ks[0], NULL, model, 1, 8 * GMS_MIB / 4);
    GMS_RT(cudaDeviceSynchronize());
    tag("after_setup");

    for (int k = 0; k < args.steps; k++) {
#ifdef GMS_USE_NVTX
        if (use_range) {
            char buf[48];
            snprintf(buf, sizeof buf, "step %d", gms_current_step() + 1);
            nvtxRangePushA(buf); /* the boundary: step k+1 begins */
            gms_note_step();
        }
#endif
        char label[32];
        const size_t sb = (size_t)(k + 2) * GMS_MIB;
        void *scratch = NULL, *leak = NULL;
        GMS_RT(cudaMalloc(&scratch, sb));
        snprintf(label, sizeof label, "scratch_%d", k);
        int is = gms_note_alloc(label, GMS_SRC_MALLOC, sb, scratch, NULL, 0);
        GMS_RT(cudaMalloc(&leak, GMS_MIB));
        snprintf(label, sizeof label, "leak_%d", k);
        gms_note_alloc(label, GMS_SRC_MALLOC, GMS_MIB, leak, NULL, 0);
        gms_launch(&ks[1], NULL, scratch, (uint32_t)k, sb / 4);
        GMS_RT(cudaDeviceSynchronize());
        tag("after_alloc");
        GMS_RT(cudaFree(scratch));
        gms_note_free(is);
        sleep_ms(args.sleep_ms);
#ifdef GMS_USE_NVTX
        if (use_range) {
            nvtxRangePop();
            continue;
        }
#endif
        step_mark(args.style);
    }
    (void)use_range;

    GMS_RT(cudaFree(model));
    gms_note_free(im);
    GMS_RT(cudaFree(opt));
    gms_note_free(io);
    GMS_RT(cudaDeviceSynchronize());
    tag("end");

    gms_note_string("style", args.style);
    return gms_finish(SAMPLE_NAME, &args);
}
