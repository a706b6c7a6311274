/*
 * VMM address ranges (vmmranges.c), the assembler's record of what the
 * program reserved (cuMemAddressReserve), mapped (cuMemMap) and recently
 * unmapped (cuMemUnmap). A range covers records from its call's ENTER on,
 * so a plain allocation at an address reserved only later is not VMM, in
 * whatever order the events and records reach the writer. Pure: no lock,
 * no global; the owner frees it.
 */
#ifndef GMEMPROF_PROFILER_VMMRANGES_H
#define GMEMPROF_PROFILER_VMMRANGES_H

#include <stddef.h>
#include <stdint.h>

typedef struct gmp_vrange {
    uint64_t base, size;
    uint32_t tid, epoch;  /* of the call */
    uint64_t range, seq;  /* the thread's NVTX range and launch count at the call */
    uint64_t start;       /* covers records from this time on (the call's ENTER; 0 always) */
} gmp_vrange;

#define GMP_VMM_UNMAPPED 64 /* recent unmappings kept */

/* A cuMemUnmap call and the mapping it removed (had: there was one). The
 * mapping still covers the records made before the call's ENTER
 * (call.start), however late they reach the writer: a record without an
 * API call takes the epoch of its time, and can be merged after an unmap
 * of an older epoch. */
typedef struct gmp_vunmap {
    gmp_vrange call, mapping;
    int had;
} gmp_vunmap;

typedef struct gmp_vmm {
    gmp_vrange *res;      /* reservations */
    size_t nres, capres;
    gmp_vrange *maps;     /* mappings, sorted by base */
    size_t nmaps, capmaps;
    gmp_vunmap unmapped[GMP_VMM_UNMAPPED]; /* recent cuMemUnmap calls, a ring */
    unsigned nunmapped;
} gmp_vmm;

/* A zeroed gmp_vmm is empty. Out of memory: the range is not kept. */
void gmp_vmm_reserve(gmp_vmm *m, const gmp_vrange *v);
void gmp_vmm_map(gmp_vmm *m, const gmp_vrange *v); /* replaces a mapping at the same base */
void gmp_vmm_addrfree(gmp_vmm *m, uint64_t base);
/* v->start: the unmap call's ENTER, the end of the mapping's cover. */
void gmp_vmm_unmap(gmp_vmm *m, const gmp_vrange *v);
/* The mapping that covers addr at time ts (NULL none): a live one, or one
 * unmapped recently whose unmap began after ts. */
const gmp_vrange *gmp_vmm_mapping(const gmp_vmm *m, uint64_t addr, uint64_t ts);
/* The latest unmapping that covered addr: a release record without a
 * correlation id is attributed to it (NULL none). */
const gmp_vrange *gmp_vmm_unmapping(const gmp_vmm *m, uint64_t addr);
/* 1 when addr lies in a reservation or mapping at time ts. */
int gmp_vmm_covers(const gmp_vmm *m, uint64_t addr, uint64_t ts);
size_t gmp_vmm_bytes(const gmp_vmm *m);
void gmp_vmm_free(gmp_vmm *m);

#endif
