/*
 * The "copies" scenario of e2e_app: memcpy and memset calls of the runtime
 * and of the driver with their real parameter blocks (the structs of
 * generated_cuda_meta.h and generated_cuda_runtime_api_meta.h, so the
 * profiler's reading of them is checked against the CUDA headers), and
 * memory kinds scripted in the fake driver's cuPointerGetAttributes.
 * Launch mode makes MEMCPY/MEMSET records from these calls (profiler/sources/copies.c);
 * GPU mode takes them from CUPTI's activity only, which this scenario does not
 * emit.
 */
#include <cuda.h>
#include <cuda_runtime_api.h>
#include <cupti.h> /* and with it the parameter blocks (generated_*_meta.h) */
#include <stdint.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "e2e_copies.h"
#include "fake_cupti.h"

#define RTD CUPTI_CB_DOMAIN_RUNTIME_API
#define DRD CUPTI_CB_DOMAIN_DRIVER_API
#define RT(x) CUPTI_RUNTIME_TRACE_CBID_##x
#define DRV(x) CUPTI_DRIVER_TRACE_CBID_##x

/* A runtime call (rt_cbid, its block) around a driver call (drv_cbid, its
 * block), either may be 0; ret is both calls' result. Returns the
 * correlation id of the outermost call; *drv_corr the driver call's. */
static uint32_t call2(uint32_t rt_cbid, const void *rp, uint32_t drv_cbid, const void *dp, int ret,
                      uint32_t *drv_corr)
{
    uint32_t rt = 0, drv = 0;
    if (rt_cbid) {
        rt = fake_cupti_corr();
        fake_cupti_api_enter(RTD, rt_cbid, rt, NULL, rp);
    }
    if (drv_cbid) {
        drv = fake_cupti_corr();
        fake_cupti_api_enter(DRD, drv_cbid, drv, NULL, dp);
        fake_cupti_api_exit(DRD, drv_cbid, drv, NULL, dp, ret);
    }
    if (rt_cbid)
        fake_cupti_api_exit(RTD, rt_cbid, rt, NULL, rp, ret);
    if (drv_corr)
        *drv_corr = drv;
    return rt ? rt : drv;
}

int e2e_sc_copies(e2e_fact_fn fact)
{
    fact("tid", (uint64_t)syscall(SYS_gettid));
    fact("memcpy_on", (uint64_t)fake_cupti_activity_enabled(CUPTI_ACTIVITY_KIND_MEMCPY));
    fact("memset_on", (uint64_t)fake_cupti_activity_enabled(CUPTI_ACTIVITY_KIND_MEMSET));
    fact("rt_copy_cb", (uint64_t)fake_cupti_callback_enabled(RTD, RT(cudaMemcpyAsync_v3020)));
    fact("drv_copy_cb", (uint64_t)fake_cupti_callback_enabled(DRD, DRV(cuMemcpyHtoDAsync_v2)));
    fake_cuda_set_pointer(E2E_DEV0, 64 << 20, CU_MEMORYTYPE_DEVICE, 0, 0);
    fake_cuda_set_pointer(E2E_DEV1, 64 << 20, CU_MEMORYTYPE_DEVICE, 0, 1);
    fake_cuda_set_pointer(E2E_PINNED, 1 << 20, CU_MEMORYTYPE_HOST, 0, -2);
    fake_cuda_set_pointer(E2E_MANAGED, 1 << 20, CU_MEMORYTYPE_DEVICE, 1, 0);
    static char pageable[4096]; /* memory the driver did not hand out */
    fact("pageable", (uint64_t)(uintptr_t)pageable);
    void *dev0 = (void *)(uintptr_t)E2E_DEV0, *pin = (void *)(uintptr_t)E2E_PINNED;
    uint32_t drv;

    /* 1. cudaMemcpyAsync H2D from pinned memory on a stream, through the driver's call */
    cudaMemcpyAsync_v3020_params r1 = {dev0, pin, 4096, cudaMemcpyHostToDevice, (cudaStream_t)0x55};
    cuMemcpyHtoDAsync_v2_params d1 = {E2E_DEV0, pin, 4096, (CUstream)0x55};
    fact("c1", call2(RT(cudaMemcpyAsync_v3020), &r1, DRV(cuMemcpyHtoDAsync_v2), &d1, 0, NULL));
    /* 2. cudaMemcpy (per-thread default stream) D2H into pageable memory */
    cudaMemcpy_ptds_v7000_params r2 = {pageable, dev0, 1000, cudaMemcpyDeviceToHost};
    cuMemcpyDtoH_v2_ptds_params d2 = {pageable, E2E_DEV0, 1000};
    fact("c2", call2(RT(cudaMemcpy_ptds_v7000), &r2, DRV(cuMemcpyDtoH_v2_ptds), &d2, 0, NULL));
    /* 3. cudaMemset (legacy default stream): an int value */
    cudaMemset_v3020_params r3 = {dev0, 0x7f, 3000};
    fact("c3", call2(RT(cudaMemset_v3020), &r3, 0, NULL, 0, NULL));
    /* 4. cudaMemsetAsync_ptsz on managed memory */
    cudaMemsetAsync_ptsz_v7000_params r4 = {(void *)(uintptr_t)E2E_MANAGED, 0x11, 500, NULL};
    fact("c4", call2(RT(cudaMemsetAsync_ptsz_v7000), &r4, 0, NULL, 0, NULL));
    /* 5. the driver alone: a peer copy device 0 -> device 1 */
    cuMemcpyPeerAsync_params d5 = {E2E_DEV1, (CUcontext)0x1001, E2E_DEV0, (CUcontext)0x1000, 2 << 20,
                                   (CUstream)0x66};
    fact("c5", call2(0, NULL, DRV(cuMemcpyPeerAsync), &d5, 0, NULL));
    /* 6. cuMemsetD32Async: 100 elements of 4 bytes */
    cuMemsetD32Async_params d6 = {E2E_DEV0 + 4096, 0xdeadbeefu, 100, (CUstream)0x55};
    fact("c6", call2(0, NULL, DRV(cuMemsetD32Async), &d6, 0, NULL));
    /* 7. cuMemcpy2DAsync_v2: pinned host -> device, 256 x 10 */
    CUDA_MEMCPY2D m7;
    memset(&m7, 0, sizeof m7);
    m7.srcMemoryType = CU_MEMORYTYPE_HOST;
    m7.srcHost = pin;
    m7.srcPitch = 512;
    m7.dstMemoryType = CU_MEMORYTYPE_DEVICE;
    m7.dstDevice = E2E_DEV0;
    m7.dstPitch = 256;
    m7.WidthInBytes = 256;
    m7.Height = 10;
    cuMemcpy2DAsync_v2_params d7 = {&m7, (CUstream)0x55};
    fact("c7", call2(0, NULL, DRV(cuMemcpy2DAsync_v2), &d7, 0, NULL));
    /* 8. cudaMemcpy3D (its block is not read) -> cuMemcpy3D_v2 (read): device to device */
    struct cudaMemcpy3DParms p8;
    memset(&p8, 0, sizeof p8);
    cudaMemcpy3D_v3020_params r8 = {&p8};
    CUDA_MEMCPY3D m8;
    memset(&m8, 0, sizeof m8);
    m8.srcMemoryType = CU_MEMORYTYPE_DEVICE;
    m8.srcDevice = E2E_DEV0;
    m8.dstMemoryType = CU_MEMORYTYPE_DEVICE;
    m8.dstDevice = E2E_DEV0 + (1 << 20);
    m8.WidthInBytes = 64;
    m8.Height = 4;
    m8.Depth = 2;
    cuMemcpy3D_v2_params d8 = {&m8};
    fact("c8", call2(RT(cudaMemcpy3D_v3020), &r8, DRV(cuMemcpy3D_v2), &d8, 0, &drv));
    fact("c8.drv", drv);
    /* 9. batch copies, twice: neither block is read; one line says so */
    cudaMemcpyBatchAsync_v13000_params r9;
    memset(&r9, 0, sizeof r9);
    cuMemcpyBatchAsync_v2_params d9;
    memset(&d9, 0, sizeof d9);
    fact("c9", call2(RT(cudaMemcpyBatchAsync_v13000), &r9, DRV(cuMemcpyBatchAsync_v2), &d9, 0, NULL));
    fact("c9b", call2(RT(cudaMemcpyBatchAsync_v13000), &r9, DRV(cuMemcpyBatchAsync_v2), &d9, 0, NULL));
    /* 10. a copy that fails: nothing was copied */
    cudaMemcpyAsync_v3020_params r10 = {dev0, pin, 777, cudaMemcpyHostToDevice, NULL};
    fact("c10", call2(RT(cudaMemcpyAsync_v3020), &r10, DRV(cuMemcpyHtoDAsync_v2), &d1, 1, NULL));
    /* 11. cuMemsetD2D8_v2: 100 x 3 bytes */
    cuMemsetD2D8_v2_params d11 = {E2E_DEV0, 1024, 0x22, 100, 3};
    fact("c11", call2(0, NULL, DRV(cuMemsetD2D8_v2), &d11, 0, NULL));
    /* 12. cudaMemcpyToSymbol: the symbol end is device memory */
    static int symbol;
    cudaMemcpyToSymbol_v3020_params r12 = {&symbol, pin, 64, 0, cudaMemcpyHostToDevice};
    fact("c12", call2(RT(cudaMemcpyToSymbol_v3020), &r12, 0, NULL, 0, NULL));
    /* 13. cuMemcpyAtoH_v2: an array to pageable memory */
    cuMemcpyAtoH_v2_params d13 = {pageable, (CUarray)0x77, 0, 128};
    fact("c13", call2(0, NULL, DRV(cuMemcpyAtoH_v2), &d13, 0, NULL));
    /* 14. a driver copy whose EXIT never comes, then an EXIT whose ENTER never
     * came (callbacks switched in between): neither makes a record */
    cuMemcpyHtoDAsync_v2_params d14 = {E2E_DEV0, pin, 999, (CUstream)0x55};
    uint32_t c14 = fake_cupti_corr(), c14x = fake_cupti_corr();
    fake_cupti_api_enter(DRD, DRV(cuMemcpyHtoDAsync_v2), c14, NULL, &d14);
    fake_cupti_api_exit(DRD, DRV(cuMemcpyHtoDAsync_v2), c14x, NULL, &d14, 0);
    fact("c14", c14);
    fact("c14x", c14x);
    fact("ptr_calls", fake_cuda_pointer_calls());
    return 0;
}
