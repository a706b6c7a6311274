/*
 * threads: N host threads (--threads, default 4, at most 8) allocate, launch
 * and free at the same time, each with its own sizes, stream and kernel name,
 * so per-thread attribution can be checked exactly.
 *
 * Thread i (0-based), after all threads meet at a barrier:
 *   cudaMalloc       (i+1) MiB + i*64 KiB            label t<i>_malloc
 *   cudaMallocAsync  (i+1)*512 KiB + 4 KiB on its stream   label t<i>_async, stream "t<i>"
 *   kernel gm_k_t<i> on the malloc buffer, then on the async buffer (2 launches)
 *   cudaFreeAsync, cudaStreamSynchronize, cudaFree
 * Expected trace (whole run): per thread exactly one malloc and one async_pool
 * allocation of those sizes, both made and freed by that thread's tid (the
 * JSON holds the tids), both consumed by gm_k_t<i>; N distinct tids; nothing
 * live at the end. Totals for N=4: malloc 4 allocs, 10 MiB + 384 KiB;
 * async_pool 4 allocs, 5 MiB + 16 KiB.
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "gm_sample.h"

#define MAX_THREADS 8

static gms_kernel g_k[MAX_THREADS] = {
    {"gm_k_t0", NULL}, {"gm_k_t1", NULL}, {"gm_k_t2", NULL}, {"gm_k_t3", NULL},
    {"gm_k_t4", NULL}, {"gm_k_t5", NULL}, {"gm_k_t6", NULL}, {"gm_k_t7", NULL},
};
static pthread_barrier_t g_bar;

static void *worker(void *arg)
{
    int i = (int)(intptr_t)arg;
    char label[32], slabel[8];
    gms_bind_thread();
    cudaStream_t st;
    GMS_RT(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
    pthread_barrier_wait(&g_bar);

    const size_t mb = (size_t)(i + 1) * GMS_MIB + (size_t)i * 64 * GMS_KIB;
    const size_t ab = (size_t)(i + 1) * 512 * GMS_KIB + 4 * GMS_KIB;
    void *m = NULL, *a = NULL;
    GMS_RT(cudaMalloc(&m, mb));
    snprintf(label, sizeof label, "t%d_malloc", i);
    int im = gms_note_alloc(label, GMS_SRC_MALLOC, mb, m, NULL, 0);
    GMS_RT(cudaMallocAsync(&a, ab, st));
    snprintf(label, sizeof label, "t%d_async", i);
    snprintf(slabel, sizeof slabel, "t%d", i);
    int ia = gms_note_alloc(label, GMS_SRC_ASYNC_POOL, ab, a, slabel, 0);
    gms_launch(&g_k[i], (CUstream)st, m, (uint32_t)i, mb / 4);
    gms_launch(&g_k[i], (CUstream)st, a, (uint32_t)i, ab / 4);
    GMS_RT(cudaFreeAsync(a, st));
    gms_note_free(ia);
    GMS_RT(cudaStreamSynchronize(st));
    GMS_RT(cudaFree(m));
    gms_note_free(im);
    GMS_RT(cudaStreamDestroy(st));
    return NULL;
}

int main(int argc, char **argv)
{
    gms_args args;
    gms_parse_args("threads", argc, argv, &args);
    gms_init_device("threads");
    int n = args.threads;
    gms_load_kernels(g_k, n);

    if (pthread_barrier_init(&g_bar, NULL, (unsigned)n) != 0) {
        fprintf(stderr, "threads: pthread_barrier_init failed\n");
        return 1;
    }
    pthread_t th[MAX_THREADS];
    for (int i = 0; i < n; i++) {
        if (pthread_create(&th[i], NULL, worker, (void *)(intptr_t)i) != 0) {
            fprintf(stderr, "threads: pthread_create failed\n");
            return 1;
        }
    }
    for (int i = 0; i < n; i++)
        pthread_join(th[i], NULL);
    pthread_barrier_destroy(&g_bar);
    GMS_RT(cudaDeviceSynchronize());

    gms_note_number("threads", (uint64_t)n);
    gms_note_number("distinct_tids", (uint64_t)n);
    return gms_finish("threads", &args);
}
