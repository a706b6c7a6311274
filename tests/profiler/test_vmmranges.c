/*
 * VMM address ranges (profiler/assemble/vmmranges.c).
 *
 * - A mapping covers [base, base + size) from its call's time on; mappings
 *   added out of order are found by address; a remap at the same base
 *   replaces the mapping.
 * - A reservation covers from its time on; freeing it ends that.
 * - The latest unmapping covering an address is found, the ring keeping
 *   the last GMP_VMM_UNMAPPED of them.
 * - A mapping an unmap removed still covers what was made before the unmap
 *   began (a record that reaches the writer after the unmap's event).
 * - Growth past the first 64 ranges; the bytes held follow the capacity.
 */
#include <string.h>

#include "../check.h"
#include "vmmranges.h"

static gmp_vrange vr(uint64_t base, uint64_t size, uint64_t start, uint64_t range)
{
    gmp_vrange v;
    memset(&v, 0, sizeof v);
    v.base = base;
    v.size = size;
    v.start = start;
    v.range = range;
    v.tid = 7;
    return v;
}

static void test_mappings(void)
{
    tc_context("mappings");
    gmp_vmm m;
    memset(&m, 0, sizeof m);
    CHECK(gmp_vmm_mapping(&m, 0x1000, 0) == NULL); /* empty */
    gmp_vrange a = vr(0x300000, 0x100000, 50, 1), b = vr(0x100000, 0x100000, 10, 2);
    gmp_vmm_map(&m, &a);
    gmp_vmm_map(&m, &b); /* below a: kept sorted */
    const gmp_vrange *v = gmp_vmm_mapping(&m, 0x1fffff, 10);
    CHECK(v && v->range == 2);
    CHECK(gmp_vmm_mapping(&m, 0x200000, 100) == NULL); /* between the two */
    CHECK(gmp_vmm_mapping(&m, 0x0fffff, 100) == NULL); /* below both */
    CHECK(gmp_vmm_mapping(&m, 0x300000, 49) == NULL);  /* before its call */
    v = gmp_vmm_mapping(&m, 0x300000, 50);
    CHECK(v && v->range == 1);
    CHECK(gmp_vmm_mapping(&m, 0x400000, 100) == NULL); /* one past its end */
    gmp_vrange a2 = vr(0x300000, 0x200000, 60, 3);
    gmp_vmm_map(&m, &a2); /* remapped at the same base */
    CHECK_EQ_U64(m.nmaps, 2);
    v = gmp_vmm_mapping(&m, 0x4fffff, 60);
    CHECK(v && v->range == 3);
    CHECK(gmp_vmm_covers(&m, 0x100000, 10));
    CHECK(!gmp_vmm_covers(&m, 0x100000, 9));

    gmp_vmm_unmap(&m, &b);
    CHECK_EQ_U64(m.nmaps, 1);
    CHECK(gmp_vmm_mapping(&m, 0x100000, 100) == NULL);
    v = gmp_vmm_unmapping(&m, 0x180000);
    CHECK(v && v->range == 2);
    CHECK(gmp_vmm_unmapping(&m, 0x200000) == NULL);
    gmp_vmm_free(&m);
    CHECK(m.maps == NULL && m.nmaps == 0);
}

static void test_unmapped_mapping(void)
{
    tc_context("a mapping after its unmap");
    gmp_vmm m;
    memset(&m, 0, sizeof m);
    gmp_vrange c = vr(0x800000, 0x100000, 100, 5), u = vr(0x800000, 0x100000, 500, 9);
    gmp_vmm_map(&m, &c);
    gmp_vmm_unmap(&m, &u); /* the unmap call began at 500 */
    CHECK_EQ_U64(m.nmaps, 0);
    const gmp_vrange *v = gmp_vmm_mapping(&m, 0x800800, 300);
    CHECK(v && v->range == 5 && v->tid == 7); /* the mapping's call, not the unmap's */
    CHECK(gmp_vmm_covers(&m, 0x800800, 300));
    CHECK(gmp_vmm_mapping(&m, 0x800800, 500) == NULL); /* from the unmap on */
    CHECK(gmp_vmm_mapping(&m, 0x800800, 99) == NULL);  /* before the map */
    CHECK(gmp_vmm_mapping(&m, 0x900000, 300) == NULL); /* past its end */
    gmp_vrange d = vr(0x800000, 0x100000, 700, 6);
    gmp_vmm_map(&m, &d); /* mapped again: the live mapping first */
    v = gmp_vmm_mapping(&m, 0x800800, 800);
    CHECK(v && v->range == 6);
    v = gmp_vmm_mapping(&m, 0x800800, 300);
    CHECK(v && v->range == 5);
    gmp_vmm_free(&m);
}

static void test_reservations(void)
{
    tc_context("reservations");
    gmp_vmm m;
    memset(&m, 0, sizeof m);
    gmp_vrange r = vr(0x10000000, 0x4000000, 100, 0);
    gmp_vmm_reserve(&m, &r);
    CHECK(!gmp_vmm_covers(&m, 0x10000000, 99)); /* a plain allocation made before the reservation */
    CHECK(gmp_vmm_covers(&m, 0x10000000, 100));
    CHECK(gmp_vmm_covers(&m, 0x13ffffff, 200));
    CHECK(!gmp_vmm_covers(&m, 0x14000000, 200));
    CHECK(gmp_vmm_mapping(&m, 0x10000000, 200) == NULL); /* reserved, not mapped */
    gmp_vmm_addrfree(&m, 0x10000001);                     /* not its base: nothing */
    CHECK(gmp_vmm_covers(&m, 0x10000000, 200));
    gmp_vmm_addrfree(&m, 0x10000000);
    CHECK(!gmp_vmm_covers(&m, 0x10000000, 200));
    gmp_vmm_free(&m);
}

static void test_unmapped_ring(void)
{
    tc_context("unmapped ring");
    gmp_vmm m;
    memset(&m, 0, sizeof m);
    /* GMP_VMM_UNMAPPED + 1 unmappings of one address, the range telling them
     * apart: the newest wins; then one address per unmapping, the oldest
     * falls out of the ring */
    for (uint64_t i = 0; i <= GMP_VMM_UNMAPPED; i++) {
        gmp_vrange u = vr(0x500000, 0x1000, 0, 100 + i);
        gmp_vmm_unmap(&m, &u);
    }
    const gmp_vrange *v = gmp_vmm_unmapping(&m, 0x500800);
    CHECK(v && v->range == 100 + GMP_VMM_UNMAPPED);
    for (uint64_t i = 0; i < GMP_VMM_UNMAPPED; i++) {
        gmp_vrange u = vr(0x1000000 + i * 0x1000, 0x1000, 0, 200 + i);
        gmp_vmm_unmap(&m, &u);
    }
    CHECK(gmp_vmm_unmapping(&m, 0x500800) == NULL); /* pushed out */
    v = gmp_vmm_unmapping(&m, 0x1000000);
    CHECK(v && v->range == 200);
    gmp_vmm_free(&m);
}

static void test_growth(void)
{
    tc_context("growth");
    gmp_vmm m;
    memset(&m, 0, sizeof m);
    CHECK_EQ_U64(gmp_vmm_bytes(&m), 0);
    /* 100 mappings in descending order (each goes in front) */
    for (uint64_t i = 100; i > 0; i--) {
        gmp_vrange v = vr(i * 0x10000, 0x8000, 0, i);
        gmp_vmm_map(&m, &v);
    }
    CHECK_EQ_U64(m.nmaps, 100);
    CHECK_EQ_U64(m.capmaps, 128); /* 64, then doubled */
    CHECK_EQ_U64(gmp_vmm_bytes(&m), 128 * sizeof(gmp_vrange));
    int sorted = 1;
    for (size_t i = 1; i < m.nmaps; i++)
        sorted &= m.maps[i - 1].base < m.maps[i].base;
    CHECK(sorted);
    for (uint64_t i = 1; i <= 100; i++) {
        const gmp_vrange *v = gmp_vmm_mapping(&m, i * 0x10000 + 0x7fff, 0);
        CHECK(v && v->range == i, "mapping %llu", (unsigned long long)i);
        CHECK(gmp_vmm_mapping(&m, i * 0x10000 + 0x8000, 0) == NULL);
    }
    gmp_vmm_free(&m);
}

int main(void)
{
    test_mappings();
    test_unmapped_mapping();
    test_reservations();
    test_unmapped_ring();
    test_growth();
    return tc_result("test_vmmranges");
}
