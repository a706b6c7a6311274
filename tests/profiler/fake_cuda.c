/*
 * A fake libcuda.so.1 for the CPU end-to-end tests: the few driver
 * functions libgmemprof.so resolves (device queries, context push/pop,
 * cuMemGetInfo), with values a test sets. A context handle is 0x1000 + the
 * device ordinal, as in the fake CUPTI.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cuda.h>

#include "fake_cupti.h"

#define EXPORT __attribute__((visibility("default")))
#define NDEV 64
#define GIB (1024ull * 1024ull * 1024ull)

static uint64_t mem_free[NDEV], mem_total[NDEV];
static __thread CUcontext stack[16];
static __thread int depth;

EXPORT void fake_cuda_set_meminfo(int device, uint64_t free_bytes, uint64_t total_bytes)
{
    if (device >= 0 && device < NDEV) {
        __atomic_store_n(&mem_free[device], free_bytes, __ATOMIC_RELAXED);
        __atomic_store_n(&mem_total[device], total_bytes, __ATOMIC_RELAXED);
    }
}

static int dev_of(CUcontext c)
{
    uintptr_t v = (uintptr_t)c;
    return v >= 0x1000 && v < 0x1000 + NDEV ? (int)(v - 0x1000) : -1;
}

static struct {
    const void *f;
    int regs, smem, local;
} funcs[8];
static unsigned nfuncs;
static uint64_t func_calls;

EXPORT void fake_cuda_set_func(const void *f, int regs, int static_smem, int local_mem)
{
    if (nfuncs < 8) {
        funcs[nfuncs].f = f;
        funcs[nfuncs].regs = regs;
        funcs[nfuncs].smem = static_smem;
        funcs[nfuncs].local = local_mem;
        nfuncs++;
    }
}

EXPORT uint64_t fake_cuda_func_attr_calls(void) { return __atomic_load_n(&func_calls, __ATOMIC_RELAXED); }

EXPORT CUresult cuFuncGetAttribute(int *v, CUfunction_attribute a, CUfunction f)
{
    __atomic_fetch_add(&func_calls, 1, __ATOMIC_RELAXED);
    for (unsigned i = 0; v && i < nfuncs; i++) {
        if (funcs[i].f != (const void *)f)
            continue;
        switch (a) {
        case CU_FUNC_ATTRIBUTE_NUM_REGS: *v = funcs[i].regs; return CUDA_SUCCESS;
        case CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES: *v = funcs[i].smem; return CUDA_SUCCESS;
        case CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES: *v = funcs[i].local; return CUDA_SUCCESS;
        default: return CUDA_ERROR_INVALID_VALUE;
        }
    }
    return CUDA_ERROR_INVALID_HANDLE;
}

static struct {
    uint64_t base, size;
    int type, managed, device;
} ptrs[16];
static unsigned nptrs;
static uint64_t ptr_calls;

EXPORT void fake_cuda_set_pointer(uint64_t base, uint64_t size, int memtype, int managed, int device)
{
    if (nptrs < 16) {
        ptrs[nptrs].base = base;
        ptrs[nptrs].size = size;
        ptrs[nptrs].type = memtype;
        ptrs[nptrs].managed = managed;
        ptrs[nptrs].device = device;
        nptrs++;
    }
}

EXPORT uint64_t fake_cuda_pointer_calls(void) { return __atomic_load_n(&ptr_calls, __ATOMIC_RELAXED); }

EXPORT CUresult cuPointerGetAttributes(unsigned n, CUpointer_attribute *at, void **data, CUdeviceptr p)
{
    __atomic_fetch_add(&ptr_calls, 1, __ATOMIC_RELAXED);
    if (!at || !data)
        return CUDA_ERROR_INVALID_VALUE;
    int type = 0, managed = 0, device = -2; /* -2: the driver's "none" (CU_DEVICE_INVALID) */
    for (unsigned i = 0; i < nptrs; i++)
        if (p >= ptrs[i].base && p - ptrs[i].base < ptrs[i].size) {
            type = ptrs[i].type;
            managed = ptrs[i].managed;
            device = ptrs[i].device;
        }
    for (unsigned i = 0; i < n; i++) {
        switch (at[i]) {
        case CU_POINTER_ATTRIBUTE_MEMORY_TYPE: *(unsigned *)data[i] = (unsigned)type; break;
        case CU_POINTER_ATTRIBUTE_IS_MANAGED: *(unsigned *)data[i] = (unsigned)managed; break;
        case CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL: *(int *)data[i] = device; break;
        default: return CUDA_ERROR_INVALID_VALUE;
        }
    }
    return CUDA_SUCCESS;
}

EXPORT CUresult cuDriverGetVersion(int *v)
{
    if (!v)
        return CUDA_ERROR_INVALID_VALUE;
    *v = 13000;
    return CUDA_SUCCESS;
}

EXPORT CUresult cuCtxPushCurrent_v2(CUcontext c)
{
    if (dev_of(c) < 0 || depth >= 16)
        return CUDA_ERROR_INVALID_CONTEXT;
    stack[depth++] = c;
    return CUDA_SUCCESS;
}

EXPORT CUresult cuCtxPopCurrent_v2(CUcontext *c)
{
    if (depth == 0)
        return CUDA_ERROR_INVALID_CONTEXT;
    depth--;
    if (c)
        *c = stack[depth];
    return CUDA_SUCCESS;
}

EXPORT CUresult cuMemGetInfo_v2(size_t *f, size_t *t)
{
    if (depth == 0)
        return CUDA_ERROR_INVALID_CONTEXT;
    int d = dev_of(stack[depth - 1]);
    uint64_t tot = __atomic_load_n(&mem_total[d], __ATOMIC_RELAXED);
    uint64_t fr = __atomic_load_n(&mem_free[d], __ATOMIC_RELAXED);
    if (!tot) {
        tot = 80 * GIB;
        fr = 79 * GIB;
    }
    *f = (size_t)fr;
    *t = (size_t)tot;
    return CUDA_SUCCESS;
}

EXPORT CUresult cuDeviceGet(CUdevice *d, int ordinal)
{
    if (!d || ordinal < 0 || ordinal >= NDEV)
        return CUDA_ERROR_INVALID_DEVICE;
    *d = ordinal;
    return CUDA_SUCCESS;
}

EXPORT CUresult cuDeviceGetName(char *name, int len, CUdevice d)
{
    if (!name || len <= 0)
        return CUDA_ERROR_INVALID_VALUE;
    snprintf(name, (size_t)len, "Fake GPU %d", (int)d);
    return CUDA_SUCCESS;
}

EXPORT CUresult cuDeviceGetUuid_v2(CUuuid *u, CUdevice d)
{
    if (!u)
        return CUDA_ERROR_INVALID_VALUE;
    for (int i = 0; i < 16; i++)
        u->bytes[i] = (char)(d * 16 + i);
    return CUDA_SUCCESS;
}

EXPORT CUresult cuDeviceTotalMem_v2(size_t *b, CUdevice d)
{
    (void)d;
    if (!b)
        return CUDA_ERROR_INVALID_VALUE;
    *b = (size_t)(80 * GIB);
    return CUDA_SUCCESS;
}

EXPORT CUresult cuDeviceGetAttribute(int *v, CUdevice_attribute a, CUdevice d)
{
    (void)d;
    if (!v)
        return CUDA_ERROR_INVALID_VALUE;
    switch (a) {
    case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT:
        *v = 132;
        break;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR:
        *v = 9;
        break;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR:
        *v = 0;
        break;
    default:
        *v = 0;
        break;
    }
    return CUDA_SUCCESS;
}
