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
    return 5;
}
