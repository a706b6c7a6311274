/*
 * VMM address ranges (vmmranges.h): reservations, mappings and recent
 * unmappings, as the assembler learns them from the VMM calls' events.
 */
#include "vmmranges.h"

#include <stdlib.h>
#include <string.h>

static void vr_add(gmp_vrange **arr, size_t *n, size_t *cap, const gmp_vrange *v, int sorted)
{
    if (*n == *cap) {
        size_t nc = *cap ? *cap * 2 : 64;
        gmp_vrange *p = realloc(*arr, nc * sizeof *p);
        if (!p)
            return;
        *arr = p;
        *cap = nc;
    }
    size_t i = *n;
    if (sorted) {
        size_t lo = 0, hi = *n;
        while (lo < hi) {
            size_t mid = (lo + hi) / 2;
            if ((*arr)[mid].base < v->base)
                lo = mid + 1;
            else
                hi = mid;
        }
        i = lo;
        if (i < *n && (*arr)[i].base == v->base) {
            (*arr)[i] = *v; /* remapped at the same address */
            return;
        }
        memmove(*arr + i + 1, *arr + i, (*n - i) * sizeof **arr);
    }
    (*arr)[i] = *v;
    (*n)++;
}

/* The index of the range at base (n: none). */
static size_t vr_find(const gmp_vrange *arr, size_t n, uint64_t base)
{
    size_t i = 0;
    while (i < n && arr[i].base != base)
        i++;
    return i;
}

/* Removes arr[i], if there is one. */
static void vr_remove_at(gmp_vrange *arr, size_t *n, size_t i)
{
    if (i >= *n)
        return;
    memmove(arr + i, arr + i + 1, (*n - i - 1) * sizeof *arr);
    (*n)--;
}

void gmp_vmm_reserve(gmp_vmm *m, const gmp_vrange *v) { vr_add(&m->res, &m->nres, &m->capres, v, 0); }

void gmp_vmm_map(gmp_vmm *m, const gmp_vrange *v) { vr_add(&m->maps, &m->nmaps, &m->capmaps, v, 1); }

void gmp_vmm_addrfree(gmp_vmm *m, uint64_t base) { vr_remove_at(m->res, &m->nres, vr_find(m->res, m->nres, base)); }

void gmp_vmm_unmap(gmp_vmm *m, const gmp_vrange *v)
{
    gmp_vunmap *u = &m->unmapped[m->nunmapped++ % GMP_VMM_UNMAPPED];
    size_t i = vr_find(m->maps, m->nmaps, v->base);
    u->call = *v;
    u->had = i < m->nmaps;
    if (u->had)
        u->mapping = m->maps[i];
    vr_remove_at(m->maps, &m->nmaps, i);
}

/* The kth most recent unmapping, k < min(nunmapped, GMP_VMM_UNMAPPED). */
static const gmp_vunmap *recent(const gmp_vmm *m, unsigned k)
{
    return &m->unmapped[(m->nunmapped - 1 - k) % GMP_VMM_UNMAPPED];
}

static unsigned nrecent(const gmp_vmm *m)
{
    return m->nunmapped < GMP_VMM_UNMAPPED ? m->nunmapped : GMP_VMM_UNMAPPED;
}

const gmp_vrange *gmp_vmm_mapping(const gmp_vmm *m, uint64_t addr, uint64_t ts)
{
    size_t lo = 0, hi = m->nmaps;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (m->maps[mid].base <= addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo > 0) {
        const gmp_vrange *v = &m->maps[lo - 1];
        if (addr - v->base < v->size && v->start <= ts)
            return v;
    }
    for (unsigned k = 0; k < nrecent(m); k++) {
        const gmp_vunmap *u = recent(m, k);
        if (u->had && addr - u->mapping.base < u->mapping.size && u->mapping.start <= ts && ts < u->call.start)
            return &u->mapping;
    }
    return NULL;
}

const gmp_vrange *gmp_vmm_unmapping(const gmp_vmm *m, uint64_t addr)
{
    for (unsigned k = 0; k < nrecent(m); k++) {
        const gmp_vrange *v = &recent(m, k)->call;
        if (addr - v->base < v->size)
            return v;
    }
    return NULL;
}

int gmp_vmm_covers(const gmp_vmm *m, uint64_t addr, uint64_t ts)
{
    for (size_t i = 0; i < m->nres; i++)
        if (addr - m->res[i].base < m->res[i].size && m->res[i].start <= ts)
            return 1;
    return gmp_vmm_mapping(m, addr, ts) != NULL;
}

size_t gmp_vmm_bytes(const gmp_vmm *m) { return (m->capres + m->capmaps) * sizeof(gmp_vrange); }

void gmp_vmm_free(gmp_vmm *m)
{
    free(m->res);
    free(m->maps);
    memset(m, 0, sizeof *m);
}
