/*
 * Varints, zigzag, the preamble and the name tables: every edge a codec
 * tends to get wrong, with expected bytes computed by hand in the test.
 */
#include "tutil.h"

static void check_varint(uint64_t v, const uint8_t *expect, size_t n)
{
    uint8_t buf[16];
    memset(buf, 0xee, sizeof buf);
    size_t k = gmt_varint_put(buf, sizeof buf, v);
    CHECK(k == n, "varint %llu: %zu bytes, want %zu", (unsigned long long)v, k, n);
    CHECK(memcmp(buf, expect, n) == 0, "varint %llu: wrong bytes", (unsigned long long)v);
    uint64_t back = 0;
    CHECK(gmt_varint_get(buf, k, &back) == (int)n && back == v, "varint %llu does not read back",
          (unsigned long long)v);
    /* every shorter input is "truncated" (0), never a wrong value */
    for (size_t cut = 0; cut < n; cut++)
        CHECK(gmt_varint_get(buf, cut, &back) == 0, "varint %llu cut at %zu not reported short",
              (unsigned long long)v, cut);
    /* too little room: nothing written */
    if (n > 0)
        CHECK(gmt_varint_put(buf, n - 1, v) == 0, "varint %llu put into %zu bytes", (unsigned long long)v, n - 1);
}

int main(void)
{
    /* LEB128 by hand: 7 bits per byte, low group first, high bit = more. */
    check_varint(0, (const uint8_t[]){ 0x00 }, 1);
    check_varint(1, (const uint8_t[]){ 0x01 }, 1);
    check_varint(127, (const uint8_t[]){ 0x7f }, 1);
    check_varint(128, (const uint8_t[]){ 0x80, 0x01 }, 2);
    check_varint(300, (const uint8_t[]){ 0xac, 0x02 }, 2); /* 300 = 0b10_0101100 */
    check_varint(16383, (const uint8_t[]){ 0xff, 0x7f }, 2);
    check_varint(16384, (const uint8_t[]){ 0x80, 0x80, 0x01 }, 3);
    check_varint(1ull << 63, (const uint8_t[]){ 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01 }, 10);
    check_varint(UINT64_MAX, (const uint8_t[]){ 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01 }, 10);

    /* malformed: an 11th byte, or a 10th byte with bits above bit 63 */
    uint64_t v = 0;
    const uint8_t eleven[11] = { 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00 };
    CHECK(gmt_varint_get(eleven, sizeof eleven, &v) == -1, "11-byte varint accepted");
    const uint8_t over[10] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02 };
    CHECK(gmt_varint_get(over, sizeof over, &v) == -1, "varint above 2^64 accepted");
    CHECK(gmt_varint_get(over, 0, &v) == 0, "empty input not short");

    /* zigzag: 0,-1,1,-2,2 -> 0,1,2,3,4; extremes */
    const int64_t zs[] = { 0, -1, 1, -2, 2 };
    for (int i = 0; i < 5; i++)
        CHECK(gmt_zigzag(zs[i]) == (uint64_t)i, "zigzag(%lld)", (long long)zs[i]);
    CHECK(gmt_zigzag(INT64_MAX) == UINT64_MAX - 1, "zigzag(INT64_MAX)");
    CHECK(gmt_zigzag(INT64_MIN) == UINT64_MAX, "zigzag(INT64_MIN)");
    tu_rng r = { 7 };
    for (int i = 0; i < 100000; i++) {
        int64_t x = (int64_t)tu_u64(&r);
        CHECK(gmt_unzigzag(gmt_zigzag(x)) == x, "zigzag round trip %lld", (long long)x);
        uint64_t u = tu_u64(&r);
        uint8_t buf[10];
        size_t k = gmt_varint_put(buf, sizeof buf, u);
        uint64_t back = 0;
        CHECK(k > 0 && gmt_varint_get(buf, k, &back) == (int)k && back == u, "varint round trip");
    }

    /* preamble: "GMEMPROF", u16le major, u16le minor */
    uint8_t pre[GMT_PREAMBLE_LEN];
    gmt_preamble_put(pre);
    const uint8_t want[GMT_PREAMBLE_LEN] = { 'G', 'M', 'E', 'M', 'P', 'R', 'O', 'F',
                                             GMT_VERSION_MAJOR & 0xff, GMT_VERSION_MAJOR >> 8,
                                             GMT_VERSION_MINOR & 0xff, GMT_VERSION_MINOR >> 8 };
    CHECK(memcmp(pre, want, sizeof want) == 0, "preamble bytes");
    uint16_t ma = 0, mi = 0;
    CHECK(gmt_preamble_parse(pre, sizeof pre, &ma, &mi) == GMT_OK && ma == GMT_VERSION_MAJOR &&
              mi == GMT_VERSION_MINOR, "preamble parse");
    CHECK(gmt_preamble_parse(pre, sizeof pre - 1, &ma, &mi) == GMT_E_SHORT, "short preamble");
    uint8_t bad[GMT_PREAMBLE_LEN];
    memcpy(bad, pre, sizeof bad);
    bad[0] = 'X';
    CHECK(gmt_preamble_parse(bad, sizeof bad, &ma, &mi) == GMT_E_MAGIC, "bad magic");
    memcpy(bad, pre, sizeof bad);
    bad[8] = GMT_VERSION_MAJOR + 1;
    bad[10] = 7;
    CHECK(gmt_preamble_parse(bad, sizeof bad, &ma, &mi) == GMT_E_VERSION && ma == GMT_VERSION_MAJOR + 1 && mi == 7,
          "newer major not refused");
    memcpy(bad, pre, sizeof bad);
    bad[10] = 0x34;
    bad[11] = 0x12; /* newer minor: fine */
    CHECK(gmt_preamble_parse(bad, sizeof bad, &ma, &mi) == GMT_OK && mi == 0x1234, "newer minor refused");
    memcpy(bad, pre, sizeof bad);
    bad[8] = 0;
    bad[9] = 0;
    CHECK(gmt_preamble_parse(bad, sizeof bad, &ma, &mi) == GMT_E_CORRUPT, "major 0 accepted");

    /* names: every known value named, unknown values say so */
    for (int t = 1; t < GMT_REC_TYPE_MAX_; t++)
        CHECK(strcmp(gmt_type_name((gmt_type)t), "unknown") != 0, "type %d unnamed", t);
    CHECK(strcmp(gmt_type_name((gmt_type)0), "unknown") == 0 && strcmp(gmt_type_name((gmt_type)200), "unknown") == 0,
          "unknown type named");
    CHECK(strcmp(gmt_type_name(GMT_REC_KERNEL), "kernel") == 0, "kernel name");
    for (uint64_t k = 0; k < GMT_MEMKIND_COUNT_; k++)
        CHECK(gmt_mem_kind_name(k) != NULL, "mem kind");
    CHECK(strcmp(gmt_mem_kind_name(GMT_MEMKIND_DEVICE), "device") == 0, "device kind");
    CHECK(strcmp(gmt_mem_source_name(GMT_SRC_ASYNC_POOL), "async_pool") == 0, "async source");
    CHECK(strcmp(gmt_phase_name(GMT_PHASE_ACTIVE), "active") == 0, "phase");
    CHECK(strcmp(gmt_step_source_name(GMT_STEPSRC_NVTX), "nvtx") == 0, "step source");
    CHECK(strcmp(gmt_window_end_reason_name(GMT_WEND_SIGNAL), "signal") == 0, "wend");
    CHECK(strcmp(gmt_copy_kind_name(GMT_COPY_DTOH), "DtoH") == 0, "copy kind");
    CHECK(strcmp(gmt_mem_kind_name(UINT64_MAX), "unknown") == 0 && strcmp(gmt_mem_source_name(99), "unknown") == 0 &&
              strcmp(gmt_phase_name(99), "unknown") == 0 && strcmp(gmt_step_source_name(99), "unknown") == 0 &&
              strcmp(gmt_window_end_reason_name(99), "unknown") == 0 && strcmp(gmt_copy_kind_name(99), "unknown") == 0,
          "out-of-range names");
    for (int s = 0; s >= -9; s--)
        CHECK(gmt_status_str((gmt_status)s) && strcmp(gmt_status_str((gmt_status)s), "unknown status") != 0,
              "status %d", s);
    return tc_result("test_varint");
}
