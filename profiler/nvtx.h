/*
 * The NVTX source (nvtx.c): our own handlers in NVTX's export table; ranges
 * and marks become events, step markers steps, tag marks tags.
 */
#ifndef GMEMPROF_PROFILER_NVTX_H
#define GMEMPROF_PROFILER_NVTX_H

#include <stdint.h>

/* Fills the export table of one NVTX instance: 1 done, 0 refused. */
int gmp_nvtx_attach(const void *(*get_export_table)(uint32_t));

#endif
