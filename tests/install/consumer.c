/* A program that uses the in-app API as an installed gmemprof gives it (the
 * header from include/gmemprof, the flags from gmemprof.pc or the CMake
 * package). Without the profiler loaded the calls do nothing: it prints
 * "consumer ok" and exits 0. */
#define GMEMPROF_API_IMPL
#include <gmemprof/gmemprof.h>

#include <stdio.h>

int main(void)
{
    gmemprof_step();
    gmemprof_mark("consumer");
    return puts("consumer ok") < 0;
}
