/*
 * Format 2.1: the BLOCK record and the TAG's framework fields.
 *
 * - BLOCK and a framework TAG read back field for field, with and without a
 *   time stream (2.0 layout and 1.x layout).
 * - BLOCK keeps its own delta state and its time in its own payload: every
 *   other record of a stream encodes to the same bytes, and the frame's time
 *   stream is the same, whether BLOCK records are interleaved or not.  That
 *   is what lets a 2.0 reader skip BLOCK as an unknown type and keep its
 *   place.
 * - A TAG without framework fields is byte for byte what 2.0 wrote.
 */
#include "tutil.h"

#define N 64

static gmt_record block_at(uint64_t i)
{
    gmt_record r;
    memset(&r, 0, sizeof r);
    r.type = GMT_REC_BLOCK;
    r.u.block = (gmt_block){ .ts = 1000000 + i * 777, .action = i % GMT_BLK_COUNT_, .device = i & 1,
                             .address = 0x7f0000000000ull + (i * 0x200000ull) % 0x10000000ull,
                             .bytes = 512 * (i + 1), .stream = i % 3 ? 0x55aa00ull + i : 0, .tid = 4242 + (i & 1),
                             .range = i / 2, .seq = i * 3, .step = i / 8, .flags = i % 4 == 0 ? GMT_BLKF_BASELINE : 0,
                             .pool = i % 5 == 0 ? 7 : 0, .requested = 512 * (i + 1) - (i % 7) };
    return r;
}

static gmt_record other_at(uint64_t i)
{
    gmt_record r;
    memset(&r, 0, sizeof r);
    if (i % 2) {
        r.type = i % 4 == 1 ? GMT_REC_ALLOC : GMT_REC_FREE;
        r.u.mem = (gmt_mem){ .ts = 1000100 + i * 701, .device = 0, .address = 0x7e0000000000ull + i * 4096,
                             .bytes = 2097152, .kind = GMT_MEMKIND_DEVICE, .source = GMT_SRC_MALLOC, .corr = 10 + i,
                             .tid = 4242, .range = i / 2, .seq = i, .step = i / 8 };
    } else {
        r.type = GMT_REC_RANGE_BEGIN;
        r.u.range = (gmt_range){ .ts = 1000050 + i * 650, .tid = 4242, .id = i + 1, .parent = i / 2, .name = 3 };
    }
    return r;
}

static gmt_record tag_rec(int framework)
{
    gmt_record r;
    memset(&r, 0, sizeof r);
    r.type = GMT_REC_TAG;
    r.u.tag.ts = 2000000;
    r.u.tag.name = 5;
    r.u.tag.step = 3;
    r.u.tag.ndev = 2;
    r.u.tag.has_framework = (uint64_t)framework;
    for (unsigned d = 0; d < 2; d++) {
        r.u.tag.dev[d] = (gmt_tag_device){ d, 4194304, 1 << 30, 1ull << 34, (1ull << 34) + (1 << 30), 0, 0 };
        if (framework) {
            r.u.tag.dev[d].fw_allocated = 68198400ull + d;
            r.u.tag.dev[d].fw_reserved = 83886080ull + d;
        }
    }
    return r;
}

int main(void)
{
    static gmt_record mixed[2 * N + 2], plain[N + 2];
    static uint8_t a[1 << 16], b[1 << 16], ta[4096], tb[4096];
    size_t nm = 0, np = 0;
    for (uint64_t i = 0; i < N; i++) {
        mixed[nm++] = block_at(i);
        mixed[nm++] = plain[np++] = other_at(i);
    }
    mixed[nm++] = plain[np++] = tag_rec(0);
    mixed[nm++] = plain[np++] = tag_rec(1);

    /* 1. round trips, both layouts */
    size_t tla = 0, tlb = 0;
    size_t la = tu_encode_all(mixed, nm, a, sizeof a, ta, &tla);
    tu_decode_all(a, la, ta, tla, mixed, nm, "2.0 layout");
    size_t l1 = tu_encode_all(mixed, nm, b, sizeof b, NULL, &tlb);
    tu_decode_all(b, l1, NULL, 0, mixed, nm, "1.x layout");

    /* 2. the other records' bytes and the time stream do not depend on the
     * BLOCK records between them */
    size_t lp = tu_encode_all(plain, np, b, sizeof b, tb, &tlb);
    CHECK(tla == tlb && memcmp(ta, tb, tla) == 0, "the time stream changed with BLOCK records: %zu vs %zu bytes",
          tla, tlb);
    size_t pa = 0, pb = 0, k = 0;
    gmt_codec c;
    gmt_codec_reset(&c);
    gmt_codec_set_time_source(&c, ta, tla);
    for (size_t i = 0; i < nm; i++) {
        gmt_record r;
        size_t used = 0;
        REQUIRE(gmt_decode(&c, a + pa, la - pa, &r, &used) == GMT_OK, "re-decode %zu", i);
        if (r.type != GMT_REC_BLOCK) {
            uint64_t plen = 0, plen2 = 0;
            gmt_varint_get(a + pa + 1, la - pa - 1, &plen);
            gmt_varint_get(b + pb + 1, lp - pb - 1, &plen2);
            size_t used2 = 1 + (plen2 < 128 ? 1 : 2) + (size_t)plen2;
            CHECK(used == used2 && memcmp(a + pa, b + pb, used) == 0, "record %zu (%s) encodes differently among "
                  "BLOCK records", k, gmt_type_name(r.type));
            pb += used2;
            k++;
        }
        pa += used;
    }
    CHECK(k == np && pb == lp, "compared %zu of %zu records, %zu of %zu bytes", k, np, pb, lp);

    /* 3. a TAG without framework fields: no bytes after the device list;
     * with them, exactly ndev x 2 varints more */
    gmt_record t0 = tag_rec(0), t1 = tag_rec(1);
    gmt_codec_reset(&c);
    size_t n0 = gmt_encode(&c, &t0, a, sizeof a);
    gmt_codec_reset(&c);
    size_t n1 = gmt_encode(&c, &t1, b, sizeof b);
    size_t extra = 0;
    for (unsigned d = 0; d < 2; d++) {
        uint8_t v[10];
        extra += gmt_varint_put(v, sizeof v, t1.u.tag.dev[d].fw_allocated);
        extra += gmt_varint_put(v, sizeof v, t1.u.tag.dev[d].fw_reserved);
    }
    CHECK(n1 == n0 + extra, "framework TAG: %zu bytes, want %zu + %zu", n1, n0, extra);
    CHECK(memcmp(a + 2, b + 2, n0 - 2) == 0, "framework TAG: the 2.0 fields changed");

    /* 4. names */
    CHECK(strcmp(gmt_type_name(GMT_REC_BLOCK), "block") == 0, "type name");
    CHECK(strcmp(gmt_block_action_name(GMT_BLK_FREE_REQUESTED), "free_requested") == 0 &&
              strcmp(gmt_block_action_name(GMT_BLK_OOM), "oom") == 0 &&
              strcmp(gmt_block_action_name(GMT_BLK_OWNER), "owner") == 0 &&
              strcmp(gmt_block_action_name(GMT_BLK_COUNT_), "unknown") == 0,
          "action names");
    CHECK(gmt_type_is_record(GMT_REC_BLOCK) && !gmt_type_is_record(GMT_WIRE_TIMES) && !gmt_type_is_record(0),
          "gmt_type_is_record");
    return tc_result("test_block");
}
