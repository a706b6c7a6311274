/*
 * alloc_kinds: one of every allocation kind the profiler must see, with
 * sizes, counts and consumer kernels known by construction. One host thread.
 *
 * Expected trace (whole run, no schedule), G = the VMM granularity
 * (cuMemGetAllocationGranularity, MINIMUM; 2 MiB on current GPUs):
 *   source       allocs  bytes                              frees  freed bytes
 *   malloc       3       6 MiB + 5 MiB (leak) + 1.5 MiB     2      7.5 MiB
 *   async_pool   2       7 MiB (stream s1) + 9 MiB (s2)     2      16 MiB
 *   managed      1       12 MiB                             1      12 MiB
 *   pinned_host  2       4 MiB+64 KiB (cudaMallocHost)      2      all
 *                        + 3 MiB+64 KiB (cudaHostAlloc)
 *   vmm          1       2*G (cuMemCreate + cuMemMap)       1      2*G
 *   live at end: 1 allocation, the 5 MiB cudaMalloc leak.
 *   memcpy: htod 4 MiB (pinned), 512 KiB (pinned, async on s1), 64 KiB (pageable);
 *           dtoh 2 MiB (pinned), 64 KiB (driver API, async on s1);
 *           dtod 1 MiB, 128 KiB (2D, async on s2);
 *   memset: 6 MiB, 9 MiB (async on s2), 32 KiB (2D, async on s1), 16 KiB (driver, 32-bit, s2).
 *   (Launch mode reads these from their API calls, GPU mode from CUPTI's
 *   activity: the GPU test compares the two.)
 *   kernels (1 launch each): gm_k_malloc, gm_k_async1, gm_k_async2, gm_k_managed,
 *   gm_k_pinned, gm_k_vmm, gm_k_leak.
 *   consumers (next kernel on the same thread): malloc_a -> gm_k_malloc,
 *   async_s1 -> gm_k_async1, async_s2 -> gm_k_async2, managed -> gm_k_managed,
 *   pinned_mallochost and pinned_hostalloc -> gm_k_pinned, vmm -> gm_k_vmm,
 *   malloc_leak -> gm_k_leak, malloc_tail -> none ("(unattributed)").
 * The exact numbers, the thread id and the granularity go to --json FILE.
 */
#include <stdio.h>
#include <string.h>

#include "gm_sample.h"

enum { K_MALLOC, K_ASYNC1, K_ASYNC2, K_MANAGED, K_PINNED, K_VMM, K_LEAK, K_COUNT };

int main(int argc, char **argv)
{
    gms_args args;
    gms_parse_args("alloc_kinds", argc, argv, &args);
    gms_init_device("alloc_kinds");

    gms_kernel ks[K_COUNT] = {
        {"gm_k_malloc", NULL}, {"gm_k_async1", NULL}, {"gm_k_async2", NULL},
        {"gm_k_managed", NULL}, {"gm_k_pinned", NULL}, {"gm_k_vmm", NULL},
        {"gm_k_leak", NULL},
    };
    gms_load_kernels(ks, K_COUNT);

    cudaStream_t s1, s2;
    GMS_RT(cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking));
    GMS_RT(cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking));

    /* 1. plain device memory, a memset, its consumer kernel */
    const size_t a_bytes = 6 * GMS_MIB;
    void *a = NULL;
    GMS_RT(cudaMalloc(&a, a_bytes));
    int ia = gms_note_alloc("malloc_a", GMS_SRC_MALLOC, a_bytes, a, NULL, 0);
    GMS_RT(cudaMemset(a, 0, a_bytes));
    gms_note_memset(a_bytes);
    gms_launch(&ks[K_MALLOC], NULL, a, 1, a_bytes / 4);

    /* 2. stream-ordered pool allocations on two streams */
    const size_t s1_bytes = 7 * GMS_MIB, s2_bytes = 9 * GMS_MIB;
    void *b1 = NULL, *b2 = NULL;
    GMS_RT(cudaMallocAsync(&b1, s1_bytes, s1));
    int ib1 = gms_note_alloc("async_s1", GMS_SRC_ASYNC_POOL, s1_bytes, b1, "s1", 0);
    gms_launch(&ks[K_ASYNC1], (CUstream)s1, b1, 2, s1_bytes / 4);
    GMS_RT(cudaMallocAsync(&b2, s2_bytes, s2));
    int ib2 = gms_note_alloc("async_s2", GMS_SRC_ASYNC_POOL, s2_bytes, b2, "s2", 0);
    GMS_RT(cudaMemsetAsync(b2, 0x11, s2_bytes, s2));
    gms_note_memset(s2_bytes);
    gms_launch(&ks[K_ASYNC2], (CUstream)s2, b2, 3, s2_bytes / 4);

    /* 3. managed memory (small) */
    const size_t m_bytes = 12 * GMS_MIB;
    void *m = NULL;
    GMS_RT(cudaMallocManaged(&m, m_bytes, cudaMemAttachGlobal));
    int im = gms_note_alloc("managed", GMS_SRC_MANAGED, m_bytes, m, NULL, 0);
    gms_launch(&ks[K_MANAGED], NULL, m, 4, m_bytes / 4);
    GMS_RT(cudaDeviceSynchronize());

    /* 4. pinned host memory, both APIs, and the copies */
    const size_t h1_bytes = 4 * GMS_MIB + 64 * GMS_KIB, h2_bytes = 3 * GMS_MIB + 64 * GMS_KIB;
    void *h1 = NULL, *h2 = NULL;
    GMS_RT(cudaMallocHost(&h1, h1_bytes));
    int ih1 = gms_note_alloc("pinned_mallochost", GMS_SRC_PINNED_HOST, h1_bytes, h1, NULL, 0);
    GMS_RT(cudaHostAlloc(&h2, h2_bytes, cudaHostAllocDefault));
    int ih2 = gms_note_alloc("pinned_hostalloc", GMS_SRC_PINNED_HOST, h2_bytes, h2, NULL, 0);
    memset(h1, 0x5a, h1_bytes);
    GMS_RT(cudaMemcpy(a, h1, 4 * GMS_MIB, cudaMemcpyHostToDevice));
    gms_note_memcpy("htod", 4 * GMS_MIB);
    GMS_RT(cudaMemcpy(h2, a, 2 * GMS_MIB, cudaMemcpyDeviceToHost));
    gms_note_memcpy("dtoh", 2 * GMS_MIB);
    gms_launch(&ks[K_PINNED], NULL, a, 5, a_bytes / 4);

    /* 5. virtual memory management: one physical allocation of two
     * granules, mapped into a reserved range (what expandable segments do) */
    CUmemAllocationProp prop;
    memset(&prop, 0, sizeof prop);
    prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    prop.location.id = 0;
    size_t gran = 0;
    GMS_CU(cuMemGetAllocationGranularity(&gran, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM));
    const size_t v_bytes = 2 * gran;
    CUmemGenericAllocationHandle vh;
    CUdeviceptr vp = 0;
    GMS_CU(cuMemCreate(&vh, v_bytes, &prop, 0));
    GMS_CU(cuMemAddressReserve(&vp, v_bytes, 0, 0, 0));
    GMS_CU(cuMemMap(vp, v_bytes, 0, vh, 0));
    CUmemAccessDesc acc;
    memset(&acc, 0, sizeof acc);
    acc.location = prop.location;
    acc.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    GMS_CU(cuMemSetAccess(vp, v_bytes, &acc, 1));
    /* soft: CUPTI's VMM records carry no correlation id, so the thread and
     * consumer depend on the profiler's own cuMemCreate/cuMemMap callbacks. */
    int iv = gms_note_alloc("vmm", GMS_SRC_VMM, v_bytes, (void *)(uintptr_t)vp, NULL, 1);
    gms_launch(&ks[K_VMM], NULL, (void *)(uintptr_t)vp, 6, v_bytes / 4);
    GMS_RT(cudaDeviceSynchronize());

    /* 6. device-to-device copy into the s1 pool buffer */
    GMS_RT(cudaMemcpy(b1, a, 1 * GMS_MIB, cudaMemcpyDeviceToDevice));
    gms_note_memcpy("dtod", 1 * GMS_MIB);
    GMS_RT(cudaDeviceSynchronize()); /* a D2D cudaMemcpy may return before it is done */

    /* 6b. more ways to copy and set: async on streams, 2D, the driver API,
     * pageable host memory */
    static char pageable[64 * 1024];
    memset(pageable, 0x3c, sizeof pageable);
    GMS_RT(cudaMemcpyAsync((char *)b1 + GMS_MIB, h1, 512 * GMS_KIB, cudaMemcpyHostToDevice, s1));
    gms_note_memcpy("htod", 512 * GMS_KIB);
    GMS_RT(cudaMemcpy(a, pageable, sizeof pageable, cudaMemcpyHostToDevice));
    gms_note_memcpy("htod", sizeof pageable);
    GMS_RT(cudaMemcpy2DAsync(b2, 4096, a, 8192, 2048, 64, cudaMemcpyDeviceToDevice, s2));
    gms_note_memcpy("dtod", 2048 * 64);
    GMS_RT(cudaMemset2DAsync(b1, 4096, 0x22, 1024, 32, s1));
    gms_note_memset(1024 * 32);
    GMS_CU(cuMemsetD32Async((CUdeviceptr)(uintptr_t)a, 0x01020304u, 4096, (CUstream)s2));
    gms_note_memset(4096 * 4);
    GMS_CU(cuMemcpyDtoHAsync(h2, (CUdeviceptr)(uintptr_t)b1, 64 * GMS_KIB, (CUstream)s1));
    gms_note_memcpy("dtoh", 64 * GMS_KIB);
    GMS_RT(cudaStreamSynchronize(s1));
    GMS_RT(cudaStreamSynchronize(s2));

    /* 7. the deliberate leak, then an allocation no kernel follows */
    const size_t leak_bytes = 5 * GMS_MIB, tail_bytes = 1 * GMS_MIB + 512 * GMS_KIB;
    void *leak = NULL, *tail = NULL;
    GMS_RT(cudaMalloc(&leak, leak_bytes));
    gms_note_alloc("malloc_leak", GMS_SRC_MALLOC, leak_bytes, leak, NULL, 0);
    gms_launch(&ks[K_LEAK], NULL, leak, 7, leak_bytes / 4);
    GMS_RT(cudaDeviceSynchronize());
    GMS_RT(cudaMalloc(&tail, tail_bytes));
    int it = gms_note_alloc("malloc_tail", GMS_SRC_MALLOC, tail_bytes, tail, NULL, 0);

    /* 8. frees: everything but the leak */
    GMS_RT(cudaFreeAsync(b1, s1));
    gms_note_free(ib1);
    GMS_RT(cudaFreeAsync(b2, s2));
    gms_note_free(ib2);
    GMS_RT(cudaStreamSynchronize(s1));
    GMS_RT(cudaStreamSynchronize(s2));
    GMS_RT(cudaFree(a));
    gms_note_free(ia);
    GMS_RT(cudaFree(m));
    gms_note_free(im);
    GMS_RT(cudaFreeHost(h1));
    gms_note_free(ih1);
    GMS_RT(cudaFreeHost(h2));
    gms_note_free(ih2);
    GMS_CU(cuMemUnmap(vp, v_bytes));
    GMS_CU(cuMemRelease(vh));
    GMS_CU(cuMemAddressFree(vp, v_bytes));
    gms_note_free(iv);
    GMS_RT(cudaFree(tail));
    gms_note_free(it);
    GMS_RT(cudaStreamDestroy(s1));
    GMS_RT(cudaStreamDestroy(s2));
    GMS_RT(cudaDeviceSynchronize());

    gms_note_number("granularity", gran);
    return gms_finish("alloc_kinds", &args);
}
