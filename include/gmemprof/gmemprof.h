/*
 * gmemprof in-app API. Optional: the profiler works on unmodified programs.
 *
 * These functions are safe to call whether or not libgmemprof.so is loaded.
 * Include this header and compile with -DGMEMPROF_API_IMPL in exactly one
 * translation unit (or link nothing at all): the calls then look up the
 * profiler with dlsym at first use and do nothing when it is absent. The
 * library itself exports gmemprof_step_impl / gmemprof_mark_impl.
 */
#ifndef GMEMPROF_GMEMPROF_H
#define GMEMPROF_GMEMPROF_H

#ifdef __cplusplus
extern "C" {
#endif

/* Marks a step boundary (torch.profiler's prof.step()). Highest precedence
 * of the step sources: once called, NVTX step markers are ignored. */
void gmemprof_step(void);
/* Writes a tag snapshot named `name` (live bytes per device as tracked,
 * driver used/free/total): the MemoryMonitor of the seed in one line. */
void gmemprof_mark(const char *name);

/* Exported by libgmemprof.so. */
void gmemprof_step_impl(void);
void gmemprof_mark_impl(const char *name);

#ifdef GMEMPROF_API_IMPL
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
static void (*gmemprof__step_fn)(void);
static void (*gmemprof__mark_fn)(const char *);
static int gmemprof__resolved;
static void gmemprof__resolve(void)
{
    /* Until the library is found, look again at every call: the driver loads
     * it at CUDA's start, which may come after the first step or mark. */
    if (gmemprof__resolved)
        return;
    /* RTLD_DEFAULT finds the library when the driver loaded it globally or it
     * was preloaded; otherwise try the already-loaded object by name. */
    *(void **)&gmemprof__step_fn = dlsym(RTLD_DEFAULT, "gmemprof_step_impl");
    *(void **)&gmemprof__mark_fn = dlsym(RTLD_DEFAULT, "gmemprof_mark_impl");
    if (!gmemprof__step_fn || !gmemprof__mark_fn) {
        void *h = dlopen("libgmemprof.so", RTLD_NOW | RTLD_NOLOAD);
        if (h) {
            *(void **)&gmemprof__step_fn = dlsym(h, "gmemprof_step_impl");
            *(void **)&gmemprof__mark_fn = dlsym(h, "gmemprof_mark_impl");
        }
    }
    gmemprof__resolved = gmemprof__step_fn && gmemprof__mark_fn;
}
void gmemprof_step(void)
{
    gmemprof__resolve();
    if (gmemprof__step_fn)
        gmemprof__step_fn();
}
void gmemprof_mark(const char *name)
{
    gmemprof__resolve();
    if (gmemprof__mark_fn)
        gmemprof__mark_fn(name);
}
#endif /* GMEMPROF_API_IMPL */

#ifdef __cplusplus
}
#endif
#endif
