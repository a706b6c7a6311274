/*
 * launch_cost: what gmemprof adds to a kernel launch on a real GPU, per
 * launch, in and outside its window — the number behind the step ratios of
 * docs/benchmarks.md, measured where process-to-process noise cannot hide it.
 *
 *   gm_launch_cost [--steps S] [--launches L] [--api runtime|driver] [--words N]
 *
 * Each step launches L tiny kernels back to back on one stream (N words
 * written each, default 256: about 2 us of GPU time), then synchronizes, then
 * calls gmemprof_step() (a no-op when the profiler is not loaded). Per step
 * it records
 *   enqueue_ns  host time of the L launch calls / L  (what callbacks and
 *               CUPTI's per-launch record work cost the launching thread)
 *   total_ns    launches + synchronize / L  (adds any GPU-side cost, e.g.
 *               kernel timestamps)
 * and prints ONE JSON line on stdout at the end. Run it under
 * `gmemprof --schedule wait=W,warmup=U,active=A,repeat=0` and the steps
 * alternate between the wait phase (allocations tracked, kernels not) and
 * the active window (kernels collected), so one process yields both sides
 * of the comparison, step by step; bench/run_bench.sh --launch-cost runs it
 * and bench/summarize.py reduces it.
 *
 * --api runtime (default) launches through cudaLaunchKernel on a CUkernel
 * (cuLibraryGetKernel), as PyTorch does: one runtime and one driver API
 * call per launch, so four CUPTI callbacks when the window is open. --api
 * driver calls cuLaunchKernel directly (two callbacks).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cuda.h>
#include <cuda_runtime_api.h>

#define GMEMPROF_API_IMPL
#include "gmemprof/gmemprof.h"
#include "gm_sample.h"

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int parse_int(const char *opt, const char *v, int lo, int hi)
{
    char *end;
    long x = strtol(v, &end, 10);
    if (*v == '\0' || *end != '\0' || x < lo || x > hi) {
        fprintf(stderr, "gm_launch_cost: %s wants a number in %d..%d, not '%s'\n", opt, lo, hi, v);
        exit(2);
    }
    return (int)x;
}

int main(int argc, char **argv)
{
    int steps = 60, launches = 2000, words = 256, runtime = 1;
    for (int i = 1; i < argc; i++) {
        const char *v = i + 1 < argc ? argv[i + 1] : "";
        if (!strcmp(argv[i], "--steps"))
            steps = parse_int("--steps", v, 1, 100000), i++;
        else if (!strcmp(argv[i], "--launches"))
            launches = parse_int("--launches", v, 1, 10000000), i++;
        else if (!strcmp(argv[i], "--words"))
            words = parse_int("--words", v, 1, 1 << 24), i++;
        else if (!strcmp(argv[i], "--api") && (!strcmp(v, "runtime") || !strcmp(v, "driver")))
            runtime = !strcmp(v, "runtime"), i++;
        else {
            fprintf(stderr, "usage: gm_launch_cost [--steps S] [--launches L] [--api runtime|driver] "
                            "[--words N]\n");
            return 2;
        }
    }
    gms_init_device("launch_cost");

    CUlibrary lib;
    CUkernel kern;
    CUfunction fn;
    const char *names[1] = {"gm_k_tiny"};
    char *ptx = gms_kernel_ptx(names, 1);
    GMS_CU(cuLibraryLoadData(&lib, ptx, NULL, NULL, 0, NULL, NULL, 0));
    free(ptx);
    GMS_CU(cuLibraryGetKernel(&kern, lib, "gm_k_tiny"));
    GMS_CU(cuKernelGetFunction(&fn, kern));
    void *buf = NULL;
    GMS_RT(cudaMalloc(&buf, (size_t)words * 4));
    cudaStream_t stream;
    GMS_RT(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));

    CUdeviceptr dp = (CUdeviceptr)(uintptr_t)buf;
    uint32_t val = 1;
    uint64_t n = (uint64_t)words;
    void *params[3] = {&dp, &val, &n};
    unsigned block = 256, grid = (unsigned)((n + block - 1) / block);

    uint64_t *enq = calloc((size_t)steps, sizeof *enq), *tot = calloc((size_t)steps, sizeof *tot);
    if (!enq || !tot) {
        fprintf(stderr, "gm_launch_cost: out of host memory\n");
        return 1;
    }
    for (int s = 0; s < steps; s++) {
        uint64_t t0 = now_ns();
        for (int i = 0; i < launches; i++) {
            if (runtime)
                GMS_RT(cudaLaunchKernel((const void *)kern, (dim3){grid, 1, 1}, (dim3){block, 1, 1},
                                        params, 0, stream));
            else
                GMS_CU(cuLaunchKernel(fn, grid, 1, 1, block, 1, 1, 0, (CUstream)stream, params, NULL));
        }
        uint64_t t1 = now_ns();
        GMS_RT(cudaStreamSynchronize(stream));
        uint64_t t2 = now_ns();
        enq[s] = (t1 - t0) / (uint64_t)launches;
        tot[s] = (t2 - t0) / (uint64_t)launches;
        gmemprof_step();
    }

    printf("{\"api\": \"%s\", \"launches\": %d, \"words\": %d, \"steps\": %d, \"enqueue_ns\": [",
           runtime ? "runtime" : "driver", launches, words, steps);
    for (int s = 0; s < steps; s++)
        printf("%s%llu", s ? ", " : "", (unsigned long long)enq[s]);
    printf("], \"total_ns\": [");
    for (int s = 0; s < steps; s++)
        printf("%s%llu", s ? ", " : "", (unsigned long long)tot[s]);
    printf("]}\n");
    free(enq);
    free(tot);
    GMS_RT(cudaStreamDestroy(stream));
    GMS_RT(cudaFree(buf));
    GMS_CU(cuLibraryUnload(lib));
    return 0;
}
