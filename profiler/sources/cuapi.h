/*
 * CUPTI and CUDA driver functions, resolved at run time with dlopen/dlsym.
 *
 * libgmemprof.so links neither libcupti nor libcuda: a missing or broken
 * library must never stop the host program from loading or running. The
 * CUPTI and driver headers are used for their types only.
 *
 * Where CUPTI comes from, in order:
 *   1. a libcupti.so.13 already loaded in the process (RTLD_NOLOAD): PyTorch
 *      loads its own copy, and two copies of CUPTI in one process must never
 *      happen (each would own a different set of subscribers and buffers);
 *   2. GMEMPROF_CUPTI_LIB, when set: an explicit path is the user's intent
 *      and wins over any search;
 *   3. dlopen("libcupti.so.13"): LD_LIBRARY_PATH, then the loader cache;
 *   4. /usr/local/cuda/extras/CUPTI/lib64 and /usr/local/cuda/lib64.
 * The driver: an already loaded libcuda.so.1 (it is, when the driver loaded
 * us through CUDA_INJECTION64_PATH), else dlopen("libcuda.so.1").
 */
#ifndef GMEMPROF_PROFILER_CUAPI_H
#define GMEMPROF_PROFILER_CUAPI_H

#include <stddef.h>
#include <stdint.h>

#include <cuda.h>
#include <cupti.h>

#define GMP_CUPTI_SONAME "libcupti.so.13"
#define GMP_CUDA_SONAME "libcuda.so.1"

typedef struct gmp_cuapi {
    void *cupti_lib;
    void *cuda_lib;
    char cupti_from[256]; /* how CUPTI was found, for the debug log */

    /* CUPTI: required */
    CUptiResult (*Subscribe)(CUpti_SubscriberHandle *, CUpti_CallbackFunc, void *);
    CUptiResult (*Unsubscribe)(CUpti_SubscriberHandle);
    CUptiResult (*EnableCallback)(uint32_t, CUpti_SubscriberHandle, CUpti_CallbackDomain,
                                  CUpti_CallbackId);
    CUptiResult (*ActivityEnable)(CUpti_ActivityKind);
    CUptiResult (*ActivityDisable)(CUpti_ActivityKind);
    CUptiResult (*ActivityRegisterCallbacks)(CUpti_BuffersCallbackRequestFunc,
                                             CUpti_BuffersCallbackCompleteFunc);
    CUptiResult (*ActivityGetNextRecord)(uint8_t *, size_t, CUpti_Activity **);
    CUptiResult (*ActivityFlushAll)(uint32_t);
    CUptiResult (*ActivityEnableDriverApi)(CUpti_CallbackId, uint8_t); /* GMEMPROF_TEST_COLLECT=drvact */
    /* CUPTI: optional (NULL when this CUPTI lacks them) */
    CUptiResult (*Subscribe_v2)(CUpti_SubscriberHandle *, CUpti_CallbackFunc, void *,
                                CUpti_SubscriberParams *);
    CUptiResult (*GetCallbackName)(CUpti_CallbackDomain, uint32_t, const char **);
    CUptiResult (*ActivityGetNumDroppedRecords)(CUcontext, uint32_t, size_t *);
    CUptiResult (*ActivitySetAttribute)(CUpti_ActivityAttribute, size_t *, void *);
    CUptiResult (*ActivityRegisterTimestampCallback)(CUpti_TimestampCallbackFunc);
    CUptiResult (*GetVersion)(uint32_t *);
    CUptiResult (*GetResultString)(CUptiResult, const char **);
    CUptiResult (*GetDeviceId)(CUcontext, uint32_t *);
    CUptiResult (*GetStreamIdEx)(CUcontext, CUstream, uint8_t, uint32_t *); /* launch mode */

    /* Driver: required */
    CUresult (*MemGetInfo)(size_t *, size_t *);
    CUresult (*CtxPushCurrent)(CUcontext);
    CUresult (*CtxPopCurrent)(CUcontext *);
    /* Driver: optional */
    CUresult (*DriverGetVersion)(int *);
    CUresult (*DeviceGet)(CUdevice *, int);
    CUresult (*DeviceGetName)(char *, int, CUdevice);
    CUresult (*DeviceGetUuid)(CUuuid *, CUdevice);
    CUresult (*DeviceTotalMem)(size_t *, CUdevice);
    CUresult (*DeviceGetAttribute)(int *, CUdevice_attribute, CUdevice);
    CUresult (*FuncGetAttribute)(int *, CUfunction_attribute, CUfunction); /* launch mode */
    CUresult (*KernelGetAttribute)(int *, CUfunction_attribute, CUkernel, CUdevice); /* launch mode */
    /* launch mode: the memory kinds of a copy's ends */
    CUresult (*PointerGetAttributes)(unsigned, CUpointer_attribute *, void **, CUdeviceptr);
} gmp_cuapi;

/* Loads both libraries and resolves the functions. cupti_override is
 * GMEMPROF_CUPTI_LIB (NULL or "" when unset). Returns 0, or -1 with one
 * human-readable sentence in err (what is missing and how to fix it). */
int gmp_cuapi_load(gmp_cuapi *api, const char *cupti_override, char *err, size_t errcap);

/* "CUPTI_ERROR_..." text of r, or a number when the library has no names. */
const char *gmp_cuapi_strerror(const gmp_cuapi *api, CUptiResult r, char *buf, size_t cap);

#endif
