/*
 * CUPTI subscription and activity (activity.c): the one subscriber handle,
 * the activity settings and kinds, and the host buffer pool that CUPTI fills
 * with activity records and the writer empties, in order.
 */
#ifndef GMEMPROF_PROFILER_ACTIVITY_H
#define GMEMPROF_PROFILER_ACTIVITY_H

#include <stddef.h>
#include <stdint.h>

#include <cupti.h>

/* Subscribes cb as this process's CUPTI callback (the API and resource
 * callbacks, callbacks.h). 0, or -1 with err filled (another CUPTI client,
 * an old CUPTI). */
int gmp_activity_subscribe(CUpti_CallbackFunc cb, char *err, size_t cap);
void gmp_activity_unsubscribe(void);
CUpti_SubscriberHandle gmp_activity_subscriber(void);

/* The buffer pool: the host budget (GMEMPROF_HOST_BUFFER_MB, in bytes)
 * less `fixed` (ring, correlation table, the writer's staging), in buffers
 * of buf_bytes (GMEMPROF_CUPTI_BUFFER_KB), at least two. 0, or -1 with err
 * filled. */
int gmp_activity_setup_buffers(size_t budget, size_t fixed, size_t buf_bytes, char *err, size_t cap);
/* Before any context exists: device buffers of devbuf_bytes
 * (GMEMPROF_DEVICE_BUFFER_KB), one buffer stream for all threads, the
 * trace clock, the buffer callbacks, MEMORY2 and MEMORY_POOL records. 0, or
 * -1 with err filled. */
int gmp_activity_enable(size_t devbuf_bytes, char *err, size_t cap);
/* Kernel, memcpy and memset activity on or off; mask bit i selects the i-th
 * of those three (GMEMPROF_TEST_COLLECT can leave some out). */
void gmp_activity_collect(int on, unsigned mask);
/* CUPTI hands over every buffer, the one being filled too (no-op unless ON). */
void gmp_activity_flush_forced(void);
/* CUPTI hands over the buffers already complete (cheap; the writer's tick). */
void gmp_activity_flush_completed(void);

uint64_t gmp_activity_dropped_cupti(void);   /* CUPTI's own drops */
uint64_t gmp_activity_dropped_buffers(void); /* records in buffers we had to discard */

/* The writer's side of the pool. */
typedef struct gmp_done_buf {
    uint8_t *buf;
    size_t valid;
} gmp_done_buf;
/* Completed buffers are queued only while accepted (the writer runs). */
void gmp_bufq_accept(int on);
/* Up to max completed buffers, oldest first. */
size_t gmp_bufq_take(gmp_done_buf *out, size_t max);
void gmp_bufq_release(uint8_t *buf);
/* Gives a completed buffer back unread: its records are counted as dropped. */
void gmp_bufq_discard(uint8_t *buf, size_t valid);
/* Host bytes of the pool and the fixed parts, for STATS. */
size_t gmp_bufq_host_bytes(void);
size_t gmp_bufq_pending(void);

#endif
