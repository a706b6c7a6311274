/*
 * Run-time resolution of CUPTI and driver functions (see cuapi.h).
 */
#include "cuapi.h"

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

/* A dlsym result into a typed function pointer (POSIX guarantees the
 * conversion works; the memcpy keeps compilers quiet about it). */
#define GMP_SYM(lib, dst, name)                                                                    \
    do {                                                                                           \
        void *gmp_sym_p = dlsym((lib), (name));                                                    \
        memcpy(&(dst), &gmp_sym_p, sizeof gmp_sym_p);                                              \
    } while (0)

static const char *const cupti_dirs[] = {
    "/usr/local/cuda/extras/CUPTI/lib64/" GMP_CUPTI_SONAME,
    "/usr/local/cuda/lib64/" GMP_CUPTI_SONAME,
};

static void *open_cupti(const char *override, char *from, size_t fromcap, char *why, size_t whycap)
{
    void *h;
    const char *e;
    why[0] = '\0';
    /* 1. Already in the process: use that copy, whatever else is installed. */
    h = dlopen(GMP_CUPTI_SONAME, RTLD_NOW | RTLD_NOLOAD);
    if (h) {
        snprintf(from, fromcap, "%s (already loaded)", GMP_CUPTI_SONAME);
        return h;
    }
    /* 2. The explicit path. */
    if (override && override[0]) {
        h = dlopen(override, RTLD_NOW | RTLD_LOCAL);
        if (h) {
            snprintf(from, fromcap, "%s (GMEMPROF_CUPTI_LIB)", override);
            return h;
        }
        e = dlerror();
        snprintf(why, whycap, "GMEMPROF_CUPTI_LIB=%s: %s", override, e ? e : "cannot be loaded");
        return NULL; /* an explicit choice that fails is not silently replaced */
    }
    /* 3. The loader's search. */
    h = dlopen(GMP_CUPTI_SONAME, RTLD_NOW | RTLD_LOCAL);
    if (h) {
        snprintf(from, fromcap, "%s (library search path)", GMP_CUPTI_SONAME);
        return h;
    }
    e = dlerror();
    snprintf(why, whycap, "%s", e ? e : GMP_CUPTI_SONAME " not found");
    /* 4. The usual toolkit places. */
    for (size_t i = 0; i < sizeof cupti_dirs / sizeof cupti_dirs[0]; i++) {
        h = dlopen(cupti_dirs[i], RTLD_NOW | RTLD_LOCAL);
        if (h) {
            snprintf(from, fromcap, "%s", cupti_dirs[i]);
            return h;
        }
    }
    return NULL;
}

int gmp_cuapi_load(gmp_cuapi *api, const char *cupti_override, char *err, size_t errcap)
{
    char why[512];
    memset(api, 0, sizeof *api);
    api->cupti_lib = open_cupti(cupti_override, api->cupti_from, sizeof api->cupti_from, why,
                                sizeof why);
    if (!api->cupti_lib) {
        snprintf(err, errcap,
                 "cannot load CUPTI (%s); install the CUDA toolkit's CUPTI or set "
                 "GMEMPROF_CUPTI_LIB to its path",
                 why);
        return -1;
    }
    void *c = api->cupti_lib;
    GMP_SYM(c, api->Subscribe, "cuptiSubscribe");
    GMP_SYM(c, api->Unsubscribe, "cuptiUnsubscribe");
    GMP_SYM(c, api->EnableCallback, "cuptiEnableCallback");
    GMP_SYM(c, api->ActivityEnable, "cuptiActivityEnable");
    GMP_SYM(c, api->ActivityDisable, "cuptiActivityDisable");
    GMP_SYM(c, api->ActivityRegisterCallbacks, "cuptiActivityRegisterCallbacks");
    GMP_SYM(c, api->ActivityGetNextRecord, "cuptiActivityGetNextRecord");
    GMP_SYM(c, api->ActivityFlushAll, "cuptiActivityFlushAll");
    GMP_SYM(c, api->ActivityEnableDriverApi, "cuptiActivityEnableDriverApi");
    GMP_SYM(c, api->Subscribe_v2, "cuptiSubscribe_v2");
    GMP_SYM(c, api->GetCallbackName, "cuptiGetCallbackName");
    GMP_SYM(c, api->ActivityGetNumDroppedRecords, "cuptiActivityGetNumDroppedRecords");
    GMP_SYM(c, api->ActivitySetAttribute, "cuptiActivitySetAttribute");
    GMP_SYM(c, api->ActivityRegisterTimestampCallback, "cuptiActivityRegisterTimestampCallback");
    GMP_SYM(c, api->GetVersion, "cuptiGetVersion");
    GMP_SYM(c, api->GetResultString, "cuptiGetResultString");
    GMP_SYM(c, api->GetDeviceId, "cuptiGetDeviceId");
    GMP_SYM(c, api->GetStreamIdEx, "cuptiGetStreamIdEx");
    const char *missing = !api->Subscribe                   ? "cuptiSubscribe"
                          : !api->Unsubscribe               ? "cuptiUnsubscribe"
                          : !api->EnableCallback            ? "cuptiEnableCallback"
                          : !api->ActivityEnable            ? "cuptiActivityEnable"
                          : !api->ActivityDisable           ? "cuptiActivityDisable"
                          : !api->ActivityRegisterCallbacks ? "cuptiActivityRegisterCallbacks"
                          : !api->ActivityGetNextRecord     ? "cuptiActivityGetNextRecord"
                          : !api->ActivityFlushAll          ? "cuptiActivityFlushAll"
                                                            : NULL;
    if (missing) {
        snprintf(err, errcap, "the CUPTI library %s has no %s (too old or not CUPTI)",
                 api->cupti_from, missing);
        return -1;
    }

    api->cuda_lib = dlopen(GMP_CUDA_SONAME, RTLD_NOW | RTLD_NOLOAD);
    if (!api->cuda_lib)
        api->cuda_lib = dlopen(GMP_CUDA_SONAME, RTLD_NOW | RTLD_LOCAL);
    if (!api->cuda_lib) {
        const char *e = dlerror();
        snprintf(err, errcap, "cannot load the CUDA driver (%s)", e ? e : GMP_CUDA_SONAME);
        return -1;
    }
    void *d = api->cuda_lib;
    GMP_SYM(d, api->MemGetInfo, "cuMemGetInfo_v2");
    GMP_SYM(d, api->CtxPushCurrent, "cuCtxPushCurrent_v2");
    GMP_SYM(d, api->CtxPopCurrent, "cuCtxPopCurrent_v2");
    GMP_SYM(d, api->DriverGetVersion, "cuDriverGetVersion");
    GMP_SYM(d, api->DeviceGet, "cuDeviceGet");
    GMP_SYM(d, api->DeviceGetName, "cuDeviceGetName");
    GMP_SYM(d, api->DeviceGetUuid, "cuDeviceGetUuid_v2");
    if (!api->DeviceGetUuid)
        GMP_SYM(d, api->DeviceGetUuid, "cuDeviceGetUuid");
    GMP_SYM(d, api->DeviceTotalMem, "cuDeviceTotalMem_v2");
    GMP_SYM(d, api->DeviceGetAttribute, "cuDeviceGetAttribute");
    GMP_SYM(d, api->FuncGetAttribute, "cuFuncGetAttribute");
    GMP_SYM(d, api->KernelGetAttribute, "cuKernelGetAttribute");
    GMP_SYM(d, api->PointerGetAttributes, "cuPointerGetAttributes");
    missing = !api->MemGetInfo       ? "cuMemGetInfo_v2"
              : !api->CtxPushCurrent ? "cuCtxPushCurrent_v2"
              : !api->CtxPopCurrent  ? "cuCtxPopCurrent_v2"
                                     : NULL;
    if (missing) {
        snprintf(err, errcap, "the CUDA driver " GMP_CUDA_SONAME " has no %s", missing);
        return -1;
    }
    return 0;
}

const char *gmp_cuapi_strerror(const gmp_cuapi *api, CUptiResult r, char *buf, size_t cap)
{
    const char *s = NULL;
    if (api && api->GetResultString && api->GetResultString(r, &s) == CUPTI_SUCCESS && s) {
        snprintf(buf, cap, "%s", s);
        return buf;
    }
    snprintf(buf, cap, "CUPTI error %d", (int)r);
    return buf;
}
