/*
 * The table of live allocations: what the profiler knows is allocated right
 * now, kept for the whole run so every window can begin with its baseline.
 * Open addressing on (device, address); one owner thread (the writer thread),
 * no locks. Allocation happens only when the table grows.
 */
#ifndef GMEMPROF_PROFILER_LIVE_H
#define GMEMPROF_PROFILER_LIVE_H

#include <stddef.h>
#include <stdint.h>

#include "gmemprof/trace_format.h"

#define GMP_LIVE_MAX_DEVICES 64

typedef struct gmp_live gmp_live;

gmp_live *gmp_live_create(size_t initial_capacity);
void gmp_live_free(gmp_live *t);
void gmp_live_clear(gmp_live *t);

/* Inserts m (keyed by m->device, m->address). If the key was live already
 * (a free record was lost), the old entry is replaced and 1 is returned;
 * 0 on a fresh insert, -1 on OOM (the table is unchanged). */
int gmp_live_insert(gmp_live *t, const gmt_mem *m);
/* Removes the entry; copies it to *out when out != NULL. 1 found, 0 not. */
int gmp_live_remove(gmp_live *t, uint64_t device, uint64_t address, gmt_mem *out);
const gmt_mem *gmp_live_find(const gmp_live *t, uint64_t device, uint64_t address);

size_t gmp_live_count(const gmp_live *t);
uint64_t gmp_live_bytes(const gmp_live *t, uint64_t device); /* device-memory kinds only */
uint64_t gmp_live_bytes_all(const gmp_live *t);               /* every kind */
/* Calls fn for every entry (order unspecified); stops early if fn returns non-zero. */
void gmp_live_foreach(const gmp_live *t, int (*fn)(const gmt_mem *m, void *ctx), void *ctx);
/* Host bytes the table holds (for the STATS record). */
size_t gmp_live_footprint(const gmp_live *t);

/* Added (additive): 1 for the kinds that count as device memory in
 * gmp_live_bytes: DEVICE, DEVICE_STATIC, MANAGED, MANAGED_STATIC, ARRAY.
 * PAGEABLE, PINNED (host memory) and UNKNOWN do not. */
int gmp_live_is_device_kind(uint64_t kind);

#endif
