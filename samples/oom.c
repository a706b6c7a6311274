/*
 * oom: a loop that allocates until CUDA runs out of memory, for the flight
 * recorder's GPU test (tests/gpu/gpu_test.sh oom_cuda).
 *
 * Step 0: cudaMalloc 256 MiB ("weights"). Step s = 1, 2, ...: cudaMalloc
 * s x --chunk-mib MiB (default 1024), kept (a leak that grows each step),
 * a kernel over its first MiB, then gmemprof_step(). The first cudaMalloc
 * that fails with cudaErrorMemoryAllocation ends the loop: the program
 * frees everything and exits normally (as a framework that catches the
 * error would). The JSON (--json) gives what the dump must say:
 *   oom_bytes   the size of the request that failed
 *   oom_step    the step it failed in
 *   live_count  allocations live at the failure (weights + one per step)
 *   live_bytes  their bytes
 *   free_after  cuMemGetInfo's free bytes right after the failure
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gm_sample.h"

#define GMEMPROF_API_IMPL
#include "gmemprof/gmemprof.h"

#define MAX_STEPS 4096

int main(int argc, char **argv)
{
    uint64_t chunk = 1024;
    /* --chunk-mib N, taken out before the shared options */
    for (int i = 1; i + 1 < argc; i++)
        if (strcmp(argv[i], "--chunk-mib") == 0) {
            chunk = strtoull(argv[i + 1], NULL, 10);
            memmove(argv + i, argv + i + 2, (size_t)(argc - i - 1) * sizeof *argv);
            argc -= 2;
            break;
        }
    if (chunk == 0)
        chunk = 1024;
    gms_args a;
    gms_parse_args("oom", argc, argv, &a);
    gms_init_device("oom");
    gms_kernel k = {"gm_k_touch", NULL};
    gms_load_kernels(&k, 1);
    static void *held[MAX_STEPS];
    void *w = NULL;
    GMS_RT(cudaMalloc(&w, 256 * GMS_MIB));
    uint64_t live = 256 * GMS_MIB, count = 1, step = 0;
    gmemprof_step();
    for (step = 1; step < MAX_STEPS; step++) {
        uint64_t want = step * chunk * GMS_MIB;
        cudaError_t e = cudaMalloc(&held[step], want);
        if (e == cudaErrorMemoryAllocation) {
            (void)cudaGetLastError(); /* clear it: the program goes on */
            size_t f = 0, t = 0;
            GMS_RT(cudaMemGetInfo(&f, &t));
            gms_note_number("oom_bytes", want);
            gms_note_number("oom_step", step);
            gms_note_number("live_count", count);
            gms_note_number("live_bytes", live);
            gms_note_number("free_after", f);
            break;
        }
        GMS_RT(e);
        live += want;
        count++;
        gms_launch(&k, NULL, held[step], (uint32_t)step, GMS_MIB / 4);
        GMS_RT(cudaDeviceSynchronize());
        gmemprof_step();
    }
    for (uint64_t s = 1; s < step; s++)
        GMS_RT(cudaFree(held[s]));
    GMS_RT(cudaFree(w));
    return gms_finish("oom", &a);
}
