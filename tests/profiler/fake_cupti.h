/*
 * Control API of the fake CUPTI (libcupti.so.13) and fake driver
 * (libcuda.so.1) used by the CPU end-to-end tests. The fakes export the
 * CUPTI and driver functions libgmemprof.so resolves with dlsym, and replay
 * what a test scripts through the real callback paths:
 *   - API calls: ENTER/EXIT callbacks on the calling thread, only for the
 *     callback ids the subscriber enabled (as CUPTI does);
 *   - activity records: written into buffers obtained from the registered
 *     bufferRequested callback, only for enabled kinds, and handed back
 *     through bufferCompleted when a buffer is full or on a flush;
 *   - resource callbacks for context creation/destruction.
 * Knobs: a second subscriber (cuptiSubscribe fails), a dropped-records count,
 * a switch that makes the next periodic flush block (to stall the writer).
 */
#ifndef GMEMPROF_TESTS_FAKE_CUPTI_H
#define GMEMPROF_TESTS_FAKE_CUPTI_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- libcupti.so.13 ---- */
/* Makes cuptiSubscribe/_v2 fail with MULTIPLE_SUBSCRIBERS naming `other`. */
void fake_cupti_set_conflict(const char *other);
/* cuptiActivityGetNumDroppedRecords reports n once (then 0). */
void fake_cupti_set_dropped(size_t n);
/* The next correlation id (CUPTI numbers every API call). */
uint32_t fake_cupti_corr(void);
/* The trace clock as CUPTI would give it (the registered timestamp callback
 * when there is one). */
uint64_t fake_cupti_now(void);
/* When the first forced flush began (E2E_FORCED_FLUSH_WAIT set), else 0. */
uint64_t fake_cupti_forced_flush_ts(void);
int fake_cupti_subscribed(void);
int fake_cupti_callback_enabled(int domain, uint32_t cbid);
int fake_cupti_activity_enabled(int kind);
/* Value set through cuptiActivitySetAttribute (0 when never set). */
size_t fake_cupti_attr(int attr);

/* API callbacks: params is the call's parameter block (functionParams),
 * ret its return value (CUresult or cudaError_t, 0 = success). */
void fake_cupti_api_enter(int domain, uint32_t cbid, uint32_t corr, const char *symbol, const void *params);
void fake_cupti_api_exit(int domain, uint32_t cbid, uint32_t corr, const char *symbol, const void *params,
                         int ret);

/* Resource domain: a context of `device` (the fake context handle encodes it). */
void *fake_cupti_context_created(int device);
void fake_cupti_context_destroyed(int device);

/* Activity records (dropped, like CUPTI does, when the kind is off). */
void fake_cupti_emit_memory2(int op, int mem_kind, uint32_t corr, uint64_t addr, uint64_t bytes,
                             uint32_t device, uint32_t stream, int is_async, int pool_type, uint64_t ts);
void fake_cupti_emit_kernel(uint32_t corr, uint32_t device, uint32_t stream, const char *name,
                            uint64_t start, uint64_t end);
void fake_cupti_emit_memcpy(uint32_t corr, uint32_t rt_corr, int copy_kind, uint64_t bytes, uint32_t device,
                            uint32_t stream, uint64_t start, uint64_t end);
void fake_cupti_emit_memset(uint32_t corr, uint32_t value, uint64_t bytes, uint32_t device, uint32_t stream,
                            uint64_t start, uint64_t end);
void fake_cupti_emit_pool(uint32_t corr, int op, uint64_t size);

/* 1: the next cuptiActivityFlushAll(0) (the writer's periodic flush)
 * blocks until this is set back to 0. */
void fake_cupti_block_flush(int on);
/* 1 while a thread is blocked in that flush. */
int fake_cupti_flush_blocked(void);
/* Records accepted into buffers so far, and buffers completed. */
uint64_t fake_cupti_records_emitted(void);
uint64_t fake_cupti_buffers_completed(void);
/* Records dropped so far (no buffer, or fake_cupti_set_dropped), whether
 * the client has read the count or not. */
uint64_t fake_cupti_records_dropped(void);

/* ---- libcuda.so.1 ---- */
void fake_cuda_set_meminfo(int device, uint64_t free_bytes, uint64_t total_bytes);
/* cuFuncGetAttribute: f's registers, static shared and local memory (up to 8
 * functions; any other f: CUDA_ERROR_INVALID_HANDLE), and the calls made. */
void fake_cuda_set_func(const void *f, int regs, int static_smem, int local_mem);
uint64_t fake_cuda_func_attr_calls(void);
/* cuPointerGetAttributes: [base, base+size) is memory of this CUmemorytype
 * (managed: IS_MANAGED) on device `device` (up to 16 ranges); any other
 * address answers as the driver does for memory it did not hand out:
 * success, type 0. And the calls made. */
void fake_cuda_set_pointer(uint64_t base, uint64_t size, int memtype, int managed, int device);
uint64_t fake_cuda_pointer_calls(void);

#ifdef __cplusplus
}
#endif
#endif
