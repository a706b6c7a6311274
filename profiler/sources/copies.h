/*
 * Launch mode's MEMCPY and MEMSET records (copies.c), made from the copy
 * calls' callbacks on the calling thread: no lock, no allocation.
 */
#ifndef GMEMPROF_PROFILER_COPIES_H
#define GMEMPROF_PROFILER_COPIES_H

#include <cupti.h>

#include "gmp_rt.h"

/* The callback ids whose parameters are read (callbacks' init). */
void gmp_copy_init(void);
/* Outermost ENTER of a memcpy/memset call (either domain). */
void gmp_copy_begin(gmp_tls *t, CUpti_CallbackDomain dom, CUpti_CallbackId cbid, const CUpti_CallbackData *cb);
/* A driver copy inside a runtime one whose parameters could not be read. */
void gmp_copy_nested(gmp_tls *t, CUpti_CallbackId cbid, const CUpti_CallbackData *cb);
/* Outermost EXIT: queues the MEMCPY/MEMSET event when the call succeeded. */
void gmp_copy_end(gmp_tls *t, const CUpti_CallbackData *cb);

#endif
