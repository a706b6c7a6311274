/* Unit tests of util/: the open-addressing map (against a reference under
 * random inserts and deletes), byte/time formatting, the stable sort. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/gma_util.h"

#include "../check.h"

static int cmp_pair(const void *a, const void *b, void *ctx)
{
    (void)ctx;
    const int *x = a, *y = b;
    return x[0] - y[0]; /* by key only: stability keeps the second field's order */
}

int main(void)
{
    /* map vs a reference array of 4096 keys (aligned, like addresses) */
    enum { N = 4096 };
    static uint32_t ref[N];
    static char present[N];
    gma_map m = { 0 };
    unsigned x = 7;
    for (int it = 0; it < 400000; it++) {
        x = x * 1103515245u + 12345u;
        unsigned k = (x >> 8) % N;
        uint64_t key = 0x7f0000000000ull + (uint64_t)k * 4096u;
        unsigned op = (x >> 24) % 3;
        if (op == 0) {
            uint32_t old;
            int had = gma_map_swap(&m, key, (uint32_t)it, &old);
            CHECK(had == present[k]);
            if (had)
                CHECK(old == ref[k]);
            ref[k] = (uint32_t)it;
            present[k] = 1;
        } else if (op == 1) {
            uint32_t v;
            int had = gma_map_del(&m, key, &v);
            CHECK(had == present[k]);
            if (had)
                CHECK(v == ref[k]);
            present[k] = 0;
        } else {
            uint32_t v;
            int had = gma_map_get(&m, key, &v);
            CHECK(had == present[k]);
            if (had)
                CHECK(v == ref[k]);
        }
    }
    size_t count = 0;
    for (int k = 0; k < N; k++)
        count += present[k];
    CHECK(m.count == count);
    gma_map_clear(&m);
    CHECK(m.count == 0);
    uint32_t v;
    CHECK(!gma_map_get(&m, 0x7f0000000000ull, &v));
    CHECK(gma_map_put(&m, 42, 7) == 0 && gma_map_get(&m, 42, &v) && v == 7);
    gma_map_free(&m);

    char b[GMA_FMT_CAP];
    CHECK(strcmp(gma_fmt_bytes(b, 0), "0 B") == 0);
    CHECK(strcmp(gma_fmt_bytes(b, 1023), "1023 B") == 0);
    CHECK(strcmp(gma_fmt_bytes(b, 1024), "1.00 KiB") == 0);
    CHECK(strcmp(gma_fmt_bytes(b, 1536), "1.50 KiB") == 0);
    CHECK(strcmp(gma_fmt_bytes(b, 127ull << 20), "127.00 MiB") == 0);
    CHECK(strcmp(gma_fmt_bytes(b, (1ull << 20) - 1), "1.00 MiB") == 0); /* not "1024.00 KiB" */
    CHECK(strcmp(gma_fmt_bytes(b, 3ull << 30), "3.00 GiB") == 0);
    CHECK(strcmp(gma_fmt_sbytes(b, -(int64_t)(8ull << 20), 1), "-8.00 MiB") == 0);
    CHECK(strcmp(gma_fmt_sbytes(b, 8ll << 20, 1), "+8.00 MiB") == 0);
    CHECK(strcmp(gma_fmt_sbytes(b, 0, 1), "0 B") == 0);
    CHECK(strcmp(gma_fmt_ms(b, 32000000), "32.000") == 0);
    CHECK(strcmp(gma_fmt_ms(b, -1500000), "-1.500") == 0);
    CHECK(strcmp(gma_fmt_dur(b, 812), "812 ns") == 0);
    CHECK(strcmp(gma_fmt_dur(b, 12300), "12.3 us") == 0);
    CHECK(strcmp(gma_fmt_dur(b, 4560000), "4.56 ms") == 0);
    CHECK(strcmp(gma_fmt_count(b, 1234567), "1,234,567") == 0);
    CHECK(strcmp(gma_fmt_count(b, 999), "999") == 0);

    int pairs[1000][2];
    for (int i = 0; i < 1000; i++) {
        x = x * 1103515245u + 12345u;
        pairs[i][0] = (int)((x >> 8) % 10);
        pairs[i][1] = i;
    }
    CHECK(gma_msort(pairs, 1000, sizeof(pairs[0]), cmp_pair, NULL) == 0);
    for (int i = 1; i < 1000; i++) {
        CHECK(pairs[i - 1][0] <= pairs[i][0]);
        if (pairs[i - 1][0] == pairs[i][0])
            CHECK(pairs[i - 1][1] < pairs[i][1]);
    }
    if (tc_failures) {
        fprintf(stderr, "%d util checks failed\n", tc_failures);
        return 1;
    }
    printf("util ok\n");
    return 0;
}
