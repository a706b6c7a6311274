/*
 * The NVTX source (nvtx.c): our own handlers in NVTX's export table; ranges
 * and marks become events, step markers steps, tag marks tags.
 */
#ifndef GMEMPROF_PROFILER_NVTX_H
#define GMEMPROF_PROFILER_NVTX_H

#include <stdint.h>

#include "gmp_rt.h"

/* Fills the export table of one NVTX instance: 1 done, 0 refused. */
int gmp_nvtx_attach(const void *(*get_export_table)(uint32_t));

/* A framework's op (the PyTorch bridge's op ranges) opens and closes a
 * range on the calling thread as an NVTX push and pop would: the same
 * stack, so attribution does not care which source a range came from. An
 * op's name is never a step marker, and must stay valid until its end. */
void gmp_nvtx_op_begin(const char *name);
void gmp_nvtx_op_end(void);

/* The innermost recorded range of thread t (0: none), for what is made
 * inside it now. An op range begins (its RANGE_BEGIN goes out) only here,
 * when something asks for it: an op that allocates, frees, launches and
 * nests nothing leaves no event. Owner thread only. */
uint64_t gmp_nvtx_current(gmp_tls *t);

#endif
