/*
 * Devices (devices.c): the contexts the program created, each device's
 * properties for its DEVICE record, and driver memory samples for MEMSAMPLE
 * and TAG records, now or as a snapshot taken at a step or a tag.
 *
 * No lock of ours is held across a driver call; context teardown pauses
 * sampling (gmp_devices_pause_sampling) so no sampler uses a context being
 * destroyed.
 */
#ifndef GMEMPROF_PROFILER_DEVICES_H
#define GMEMPROF_PROFILER_DEVICES_H

#include <stdatomic.h>
#include <stdint.h>

#include <cuda.h>

#include "epoch.h"

typedef struct gmp_devinfo {
    _Atomic int ready;     /* fields below are filled (release; by the writer) */
    uint64_t total_mem, sm_count, cc_major, cc_minor;
    uint8_t uuid[16];
    char name[256];
    CUcontext ctx;         /* a live context of this device, for cuMemGetInfo; under the module's lock */
} gmp_devinfo;

/* A context was created (resource callback, inside the driver): notes the
 * device and its context; the first context of a device posts a DEVICE
 * event so that the writer queries it. */
void gmp_devices_add(CUcontext ctx);
/* A context is being destroyed: no sampling through it from now on. */
void gmp_devices_forget(CUcontext ctx);
/* Context teardown calls pause sampling at their ENTER (waiting, bounded,
 * for samplers in flight) and resume it at their EXIT. */
void gmp_devices_pause_sampling(void);
void gmp_devices_resume_sampling(void);

/* The writer: the device's name, memory, SMs and compute capability, asked
 * of the driver once (NULL: not a device ordinal we track). */
const gmp_devinfo *gmp_devices_query(unsigned id);
/* cuMemGetInfo through the device's context: 0 ok, -1 no context or error. */
int gmp_devices_meminfo(unsigned dev, uint64_t *free_b, uint64_t *total_b);

/* Samples every device now; the ticket (0: no device, or not ON). */
uint64_t gmp_snapshot_take(void);
/* 1 with *out filled while the ticket is still in the ring. */
int gmp_snapshot_get(uint64_t ticket, gmp_snap *out);

/* GPU memory of our own (CUPTI's device buffers): bytes per context, set
 * before any context exists; the total so far, for STATS. */
void gmp_devices_set_context_bytes(uint64_t bytes);
uint64_t gmp_devices_own_bytes(void);

#endif
