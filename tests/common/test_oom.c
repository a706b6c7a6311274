/*
 * Format 2.2: the OOM and LIVE records, and the writer's frames made in
 * memory (gmt_writer_open_sink, gmt_writer_put_frames) that the flight
 * recorder appends to a trace.
 *
 * - OOM and LIVE read back field for field, with and without a time stream.
 * - They keep their times in their own payloads and touch no delta state:
 *   every other record encodes to the same bytes, and the frame's time
 *   stream is the same, with or without them in between (what lets a 2.1
 *   reader skip them and keep its place).
 * - A trace made of a file writer's header, a sink writer's frames (without
 *   a preamble) and the file writer's end reads back complete, every record
 *   in order, the trailer's count right.
 */
#include "tutil.h"

#define N 48

static gmt_record oom_at(uint64_t i)
{
    gmt_record r;
    memset(&r, 0, sizeof r);
    if (i % 3 == 0) {
        r.type = GMT_REC_OOM;
        r.u.oom = (gmt_oom){ .ts = 3000000 + i * 911, .cause = 1 + i % 4, .dump = i / 3, .device = i & 1,
                             .bytes = (i + 1) << 26, .stream = 0x7f00aa00ull + i, .tid = 4242, .range = i,
                             .op = 3, .api = 4, .status = 2, .step = i / 4, .flags = i & 7,
                             .driver_free = (i + 3) << 20, .driver_total = 80ull << 30, .fw_allocated = i << 24,
                             .fw_reserved = i << 25, .live_count = i, .live_bytes = i << 22, .first_step = i / 8,
                             .ring_bytes = 123456 + i };
    } else {
        r.type = GMT_REC_LIVE;
        r.u.live = (gmt_mem){ .ts = 2900000 + i * 13, .device = i & 1, .address = 0x7f0000000000ull + i * 8192,
                              .bytes = 4096 * (i + 1), .kind = GMT_MEMKIND_DEVICE,
                              .source = i % 2 ? GMT_SRC_FRAMEWORK : GMT_SRC_MALLOC, .flags = i % 5 == 0,
                              .corr = 70 + i, .stream = i % 4, .tid = 4243, .range = i / 3, .seq = i * 2,
                              .step = i / 6 };
    }
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
        r.type = GMT_REC_STEP;
        r.u.step = (gmt_step){ .ts = 1000050 + i * 650, .step = i / 2, .phase = GMT_PHASE_ACTIVE,
                               .source = GMT_STEPSRC_API };
    }
    return r;
}

/* ---- a trace put together from a sink writer's frames -------------------- */

typedef struct mem {
    uint8_t *p;
    size_t n, cap;
} mem;

static int sink(void *ctx, const uint8_t *b, size_t n)
{
    mem *m = ctx;
    if (m->n + n > m->cap) {
        m->cap = (m->n + n) * 2;
        m->p = realloc(m->p, m->cap);
        REQUIRE(m->p != NULL, "out of memory");
    }
    memcpy(m->p + m->n, b, n);
    m->n += n;
    return 0;
}

static void test_sink_trace(void)
{
    gmt_writer_opts o = { 1, 4096 }; /* small frames: the sink gets several */
    mem m = { NULL, 0, 0 };
    gmt_writer *sw = gmt_writer_open_sink(sink, &m, &o);
    REQUIRE(sw != NULL, "gmt_writer_open_sink");
    static gmt_record recs[3000];
    size_t n = 0;
    for (uint64_t i = 0; i < 2000; i++)
        recs[n++] = other_at(i);
    for (size_t i = 0; i < n; i++)
        REQUIRE(gmt_writer_put(sw, &recs[i]) == GMT_OK, "sink put %zu", i);
    REQUIRE(gmt_writer_end_frame(sw) == GMT_OK, "sink end");
    uint64_t srecs = gmt_writer_records(sw), sframes = gmt_writer_frames(sw) - 1;
    CHECK(sframes > 2, "the sink got %llu frames", (unsigned long long)sframes);
    CHECK(gmt_writer_close(sw) == GMT_OK, "sink close");
    CHECK(m.n > 0 && !(m.p[0] == 0x28 && m.n > 12 && memcmp(m.p + 4, "GMEMPROF", 8) == 0), "sink bytes");

    char path[256];
    tu_tmp_path(path, sizeof path, "oom-sink");
    gmt_writer *fw = gmt_writer_open(path, &o);
    REQUIRE(fw != NULL, "gmt_writer_open %s", path);
    gmt_record h;
    memset(&h, 0, sizeof h);
    h.type = GMT_REC_HEADER;
    h.u.header.pid = 77;
    REQUIRE(gmt_writer_put(fw, &h) == GMT_OK, "header");
    REQUIRE(gmt_writer_put_frames(fw, m.p, m.n, srecs, sframes) == GMT_OK, "put_frames");
    gmt_record f = oom_at(0), t;
    REQUIRE(gmt_writer_put(fw, &f) == GMT_OK, "oom");
    memset(&t, 0, sizeof t);
    t.type = GMT_REC_TRAILER;
    t.u.trailer.records = gmt_writer_records(fw);
    CHECK(t.u.trailer.records == 1 + n + 1, "writer counts %llu records", (unsigned long long)t.u.trailer.records);
    REQUIRE(gmt_writer_put(fw, &t) == GMT_OK, "trailer");
    REQUIRE(gmt_writer_close(fw) == GMT_OK, "close");
    free(m.p);

    gmt_reader *rd = gmt_reader_open(path);
    REQUIRE(rd != NULL, "reader");
    gmt_record r;
    size_t k = 0;
    int rc;
    while ((rc = gmt_reader_next(rd, &r)) == 1) {
        char why[160];
        const gmt_record *want = k == 0 ? &h : k <= n ? &recs[k - 1] : k == n + 1 ? &f : &t;
        if (k == 0)
            CHECK(r.type == GMT_REC_HEADER && r.u.header.pid == 77, "header back");
        else
            CHECK(tu_record_eq(&r, want, why, sizeof why), "record %zu: %s", k, why);
        k++;
    }
    const gmt_reader_end *e = gmt_reader_end_info(rd);
    CHECK(rc == 0 && e->has_trailer && !e->truncated, "complete: %s", e->message);
    CHECK(k == n + 3, "%zu records read, want %zu", k, n + 3);
    gmt_reader_close(rd);
    unlink(path);
}

int main(void)
{
    static gmt_record mixed[2 * N], plain[N];
    static uint8_t a[1 << 16], b[1 << 16], ta[4096], tb[4096];
    size_t nm = 0, np = 0;
    for (uint64_t i = 0; i < N; i++) {
        mixed[nm++] = oom_at(i);
        mixed[nm++] = plain[np++] = other_at(i);
    }
    size_t tla = 0, tlb = 0;
    size_t la = tu_encode_all(mixed, nm, a, sizeof a, ta, &tla);
    tu_decode_all(a, la, ta, tla, mixed, nm, "2.0 layout");
    size_t l1 = tu_encode_all(mixed, nm, b, sizeof b, NULL, &tlb);
    tu_decode_all(b, l1, NULL, 0, mixed, nm, "1.x layout");

    /* the time stream and the other records' bytes without them */
    size_t lp = tu_encode_all(plain, np, b, sizeof b, tb, &tlb);
    CHECK(tla == tlb && memcmp(ta, tb, tla) == 0, "the time stream changed: %zu vs %zu bytes", tla, tlb);
    size_t pa = 0, pb = 0, k = 0;
    gmt_codec c;
    gmt_codec_reset(&c);
    gmt_codec_set_time_source(&c, ta, tla);
    for (size_t i = 0; i < nm; i++) {
        gmt_record r;
        size_t used = 0;
        REQUIRE(gmt_decode(&c, a + pa, la - pa, &r, &used) == GMT_OK, "re-decode %zu", i);
        if (r.type != GMT_REC_OOM && r.type != GMT_REC_LIVE) {
            CHECK(memcmp(a + pa, b + pb, used) == 0, "record %zu (%s) encodes differently", k,
                  gmt_type_name(r.type));
            pb += used;
            k++;
        }
        pa += used;
    }
    CHECK(k == np && pb == lp, "compared %zu of %zu records, %zu of %zu bytes", k, np, pb, lp);

    CHECK(strcmp(gmt_type_name(GMT_REC_OOM), "oom") == 0 && strcmp(gmt_type_name(GMT_REC_LIVE), "live") == 0,
          "type names");
    CHECK(strcmp(gmt_oom_cause_name(GMT_OOM_FRAMEWORK), "framework") == 0 &&
              strcmp(gmt_oom_cause_name(0), "unknown") == 0 && strcmp(gmt_oom_cause_name(99), "unknown") == 0,
          "cause names");
    CHECK(strcmp(gmt_window_end_reason_name(GMT_WEND_FAILURE), "failure") == 0, "window end reason");
    CHECK(gmt_type_is_record(GMT_REC_OOM) && gmt_type_is_record(GMT_REC_LIVE) && !gmt_type_is_record(26),
          "gmt_type_is_record");
    test_sink_trace();
    return tc_result("test_oom");
}
