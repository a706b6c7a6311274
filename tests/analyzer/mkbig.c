/*
 * mkbig: traces whose size comes from their names or their live set, for
 * the analyzer's bounds on work and memory (issue 39, item 10).
 *
 *   gma_mkbig names OUT N LEN SHAPE   N distinct kernel names of LEN bytes,
 *                                     each launched once after a 4 KiB
 *                                     allocation it keeps
 *   gma_mkbig live OUT N BYTES        N allocations of BYTES, all live at
 *                                     the end, made by 16 kernels in turn
 *
 * SHAPE: plain ("k_" + letters + the number at the end), tmpl (a
 * demangled template instance whose number sits deep in its arguments, so
 * every short form collides) or mangled (an Itanium name whose number is
 * deep in its template arguments beside a long identifier).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gmt_io.h"
#include "sc_writer.h"

#define T0 1000000000ull

static sc_tb B;

static void put(const gmt_record *r) { sc_put(&B, r); }

static void alloc(uint64_t ts, uint64_t addr, uint64_t bytes, uint64_t seq)
{
    gmt_record r;
    memset(&r, 0, sizeof(r));
    r.type = GMT_REC_ALLOC;
    r.u.mem.ts = ts;
    r.u.mem.address = addr;
    r.u.mem.bytes = bytes;
    r.u.mem.kind = GMT_MEMKIND_DEVICE;
    r.u.mem.source = GMT_SRC_MALLOC;
    r.u.mem.tid = 100;
    r.u.mem.seq = seq;
    put(&r);
}

static void kernel(uint64_t ts, uint64_t name, uint64_t seq)
{
    gmt_record r;
    memset(&r, 0, sizeof(r));
    r.type = GMT_REC_KERNEL;
    r.u.kernel.start = ts;
    r.u.kernel.end = ts + 1000;
    r.u.kernel.stream = 7;
    r.u.kernel.corr = seq + 1000;
    r.u.kernel.name = name;
    r.u.kernel.grid[0] = r.u.kernel.grid[1] = r.u.kernel.grid[2] = 1;
    r.u.kernel.block[0] = r.u.kernel.block[1] = r.u.kernel.block[2] = 1;
    r.u.kernel.tid = 100;
    r.u.kernel.seq = seq;
    put(&r);
}

/* Name i of len bytes (len >= 64) into s. */
static size_t name_of(char *s, size_t len, const char *shape, size_t i)
{
    char num[24];
    int nl = snprintf(num, sizeof(num), "%zu", i);
    size_t n = 0;
    if (strcmp(shape, "plain") == 0) {
        memcpy(s, "k_", 2);
        n = 2;
        while (n < len - (size_t)nl) {
            s[n] = (char)('a' + n % 26);
            n++;
        }
        memcpy(s + n, num, (size_t)nl);
        return n + (size_t)nl;
    }
    if (strcmp(shape, "tmpl") == 0) {
        /* void ns::kern<ns::F<ns::G<IDX, aaaa...> >, 4>(int, float*) */
        n = (size_t)snprintf(s, len, "void ns::kern<ns::F<ns::G<%s, ", num);
        const char *end = "> >, 4>(int, float*)";
        size_t el = strlen(end);
        while (n < len - el) {
            s[n] = (char)('a' + n % 26);
            n++;
        }
        memcpy(s + n, end, el);
        return n + el;
    }
    /* _ZN2ns4kernINS_1FINS_1GILi<IDX>ENS_<L><id>EEEEELi4EEEviPf:
     * ns::kern<ns::F<ns::G<IDX, ns::<id> > >, 4>(int, float*), id L letters */
    const char *end = "EEEEELi4EEEviPf";
    size_t el = strlen(end);
    n = (size_t)snprintf(s, len, "_ZN2ns4kernINS_1FINS_1GILi%sENS_", num);
    size_t id = len - n - el - 1; /* its digits shrink it until it fits */
    while (n + (size_t)snprintf(NULL, 0, "%zu", id) + id + el > len)
        id--;
    n += (size_t)sprintf(s + n, "%zu", id);
    for (size_t j = 0; j < id; j++)
        s[n++] = (char)('a' + j % 26);
    memcpy(s + n, end, el);
    return n + el;
}

int main(int argc, char **argv)
{
    if (argc < 5) {
        fprintf(stderr, "usage: gma_mkbig names OUT N LEN plain|tmpl|mangled\n"
                        "       gma_mkbig live OUT N BYTES\n");
        return 2;
    }
    const char *mode = argv[1], *path = argv[2];
    size_t n = strtoull(argv[3], NULL, 10), v = strtoull(argv[4], NULL, 10);
    int names = strcmp(mode, "names") == 0;
    if ((!names && strcmp(mode, "live") != 0) || !n || (names && (argc < 6 || v < 64)) || (!names && !v)) {
        fprintf(stderr, "gma_mkbig: bad arguments (N >= 1, LEN >= 64, BYTES >= 1)\n");
        return 2;
    }
    if (sc_open(&B, path) != 0)
        return 1;
    sc_header(&B, &(sc_head){ .pid = 4300, .start_ts = T0, .cmdline = "python big.py", .rank = -1, .world = -1 });
    sc_device(&B, 0, NULL, 80ull << 30);
    uint64_t ts = T0 + 1000000, recs = 2;
    if (names) {
        char *s = malloc(v + 32);
        if (!s) {
            fprintf(stderr, "gma_mkbig: out of memory for a name of %zu bytes\n", v);
            return 1;
        }
        for (size_t i = 0; i < n && B.st == GMT_OK; i++) {
            sc_string_n(&B, i + 1, s, name_of(s, v, argv[5], i));
            alloc(ts, 0x100000000ull + (uint64_t)i * 4096, 4096, i);
            kernel(ts + 500, i + 1, i + 1);
            ts += 2000;
            recs += 3;
        }
        free(s);
    } else {
        static const char *const kn[16] = { "k0", "k1", "k2", "k3", "k4", "k5", "k6", "k7",
                                            "k8", "k9", "k10", "k11", "k12", "k13", "k14", "k15" };
        for (size_t k = 0; k < 16; k++)
            sc_string(&B, k + 1, kn[k]);
        uint64_t step = (v + 511) & ~511ull;
        for (size_t i = 0; i < n && B.st == GMT_OK; i++) {
            alloc(ts, 0x100000000ull + (uint64_t)i * step, v, i);
            kernel(ts + 500, i % 16 + 1, i + 1);
            ts += 2000;
            recs += 2;
        }
    }
    sc_trailer(&B, ts, recs + 1);
    return sc_close(&B, path) == 0 ? 0 : 1;
}
