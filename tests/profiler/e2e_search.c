/*
 * A program with no CUPTI of its own: libgmemprof.so must find (or fail to
 * find) libcupti.so.13 and libcuda.so.1 by itself, through the library
 * search path, GMEMPROF_CUPTI_LIB or the toolkit directories.
 *   e2e_search   (E2E_LIB names libgmemprof.so)
 * Exits 5, so the test can check that the status is the program's.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

int main(void)
{
    const char *lib = getenv("E2E_LIB");
    void *h = lib ? dlopen(lib, RTLD_NOW | RTLD_LOCAL) : NULL;
    if (!h) {
        fprintf(stderr, "e2e_search: cannot load %s: %s\n", lib ? lib : "(E2E_LIB unset)", dlerror());
        return 90;
    }
    int (*init)(void) = (int (*)(void))dlsym(h, "InitializeInjection");
    if (!init || init() != 1)
        return 91;
    /* A context, through the copy of the fake CUPTI the profiler found (a
     * process that never creates one leaves no trace). */
    void *c = dlopen("libcupti.so.13", RTLD_NOW | RTLD_NOLOAD);
    void *(*ctx)(int) = c ? (void *(*)(int))dlsym(c, "fake_cupti_context_created") : NULL;
    if (ctx)
        ctx(0);
    return 5;
}
