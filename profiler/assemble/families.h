/*
 * API families: what kind of CUDA call a correlation id belongs to. The
 * callbacks classify each callback id into one (callbacks.c), the
 * correlation table carries it, and the assembler reads it back to name the
 * source of an allocation (assembler.c). Types only.
 */
#ifndef GMEMPROF_PROFILER_FAMILIES_H
#define GMEMPROF_PROFILER_FAMILIES_H

/* API families: what kind of CUDA call a correlation id belongs to. */
enum gmp_fam {
    GMP_FAM_NONE = 0,
    GMP_FAM_MALLOC,       /* cudaMalloc, cuMemAlloc */
    GMP_FAM_PITCH,        /* cudaMallocPitch/3D/Array, cuMemAllocPitch, cuArrayCreate */
    GMP_FAM_HOST,         /* cudaMallocHost/HostAlloc, cuMemHostAlloc/AllocHost */
    GMP_FAM_MANAGED,      /* cudaMallocManaged, cuMemAllocManaged */
    GMP_FAM_ASYNC,        /* cudaMallocAsync/FromPoolAsync, cuMemAllocAsync/FromPoolAsync */
    GMP_FAM_FREE,         /* cudaFree, cuMemFree, array frees */
    GMP_FAM_FREE_HOST,    /* cudaFreeHost, cuMemFreeHost */
    GMP_FAM_FREE_ASYNC,   /* cudaFreeAsync, cuMemFreeAsync */
    GMP_FAM_VMM_CREATE,   /* cuMemCreate */
    GMP_FAM_VMM_RELEASE,  /* cuMemRelease */
    GMP_FAM_VMM_MAP,      /* cuMemMap */
    GMP_FAM_VMM_UNMAP,    /* cuMemUnmap */
    GMP_FAM_VMM_RESERVE,  /* cuMemAddressReserve */
    GMP_FAM_VMM_ADDRFREE, /* cuMemAddressFree */
    GMP_FAM_LAUNCH,       /* kernel launches */
    GMP_FAM_GRAPH,        /* graph launches */
    GMP_FAM_MEMCPY,
    GMP_FAM_MEMSET,
    GMP_FAM_PROF_START,   /* cudaProfilerStart, cuProfilerStart */
    GMP_FAM_PROF_STOP,
    GMP_FAM_RESET,        /* cudaDeviceReset, cuDevicePrimaryCtxReset */
    GMP_FAM_CTX_DESTROY,  /* cuCtxDestroy, cuDevicePrimaryCtxRelease */
    GMP_FAM_COUNT_
};

static inline int gmp_fam_is_vmm(unsigned f) { return f >= GMP_FAM_VMM_CREATE && f <= GMP_FAM_VMM_ADDRFREE; }
/* Families whose callbacks are on only while kernels are collected. */
static inline int gmp_fam_is_collect(unsigned f)
{
    return f == GMP_FAM_LAUNCH || f == GMP_FAM_GRAPH || f == GMP_FAM_MEMCPY || f == GMP_FAM_MEMSET;
}

#endif
