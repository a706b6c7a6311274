/*
 * Random corruption, many iterations: bit flips, zeroed / duplicated /
 * spliced / garbage byte ranges, cuts combined with flips, on the
 * compressed file AND on the decompressed record stream (recompressed as
 * valid zstd, so the record decoder itself meets the damage).  The reader
 * must never crash, hang or return unboundedly many records, and must always
 * end with a status and a message.  Runs under ASan+UBSan in the sanitize
 * build (label "sanitize").
 * usage: test_corruption [iterations]
 */
#include <signal.h>
#include <zstd.h>

#include "synth.h"
#include "tutil.h"

static uint64_t max_records;

/* Reads everything; returns the number of records. */
static size_t read_all(const uint8_t *p, size_t n, const char *what, unsigned it, gmt_status *status)
{
    gmt_reader *r = gmt_reader_open_mem(p, n);
    REQUIRE(r != NULL, "open");
    gmt_record rec;
    size_t k = 0;
    int rc;
    while ((rc = gmt_reader_next(r, &rec)) > 0) {
        k++;
        /* borrowed strings must lie inside the reader's memory: touch them */
        if (rec.type == GMT_REC_STRING && rec.u.string.str.len) {
            volatile char c = rec.u.string.str.ptr[rec.u.string.str.len - 1];
            (void)c;
        }
        if (k > max_records) {
            CHECK(0, "%s %u: more than %llu records from a %zu-byte input", what, it,
                  (unsigned long long)max_records, n);
            break;
        }
    }
    const gmt_reader_end *e = gmt_reader_end_info(r);
    CHECK(e->message[0] != '\0', "%s %u: no message", what, it);
    CHECK(rc == (e->status == GMT_OK ? 0 : (int)e->status), "%s %u: return %d vs status %d", what, it, rc, e->status);
    CHECK(e->records == k, "%s %u: records", what, it);
    CHECK(gmt_reader_next(r, &rec) == rc, "%s %u: next after the end changed", what, it);
    if (status)
        *status = e->status;
    gmt_reader_close(r);
    return k;
}

static void mutate(tu_rng *g, uint8_t *p, size_t *n, size_t cap, const uint8_t *other, size_t on)
{
    int times = 1 + (int)tu_below(g, 3);
    for (int t = 0; t < times && *n > 0; t++) {
        size_t at = tu_below(g, *n);
        size_t len = 1 + tu_below(g, *n - at < 64 ? *n - at : 64);
        switch (tu_below(g, 8)) {
        case 0: /* bit flips */
            for (int i = 0, m = 1 + (int)tu_below(g, 8); i < m; i++)
                p[tu_below(g, *n)] ^= (uint8_t)(1u << tu_below(g, 8));
            break;
        case 1: /* zeroed range */
            memset(p + at, 0, len);
            break;
        case 2: /* 0xff range (varints that never end, huge lengths) */
            memset(p + at, 0xff, len);
            break;
        case 3: /* garbage range */
            for (size_t i = 0; i < len; i++)
                p[at + i] = (uint8_t)tu_next(g);
            break;
        case 4: { /* duplicate a range elsewhere (insert) */
            if (*n + len > cap)
                break;
            size_t to = tu_below(g, *n + 1);
            uint8_t tmp[64];
            memcpy(tmp, p + at, len);
            memmove(p + to + len, p + to, *n - to);
            memcpy(p + to, tmp, len);
            *n += len;
            break;
        }
        case 5: { /* splice a range of another trace in */
            if (!on)
                break;
            size_t from = tu_below(g, on);
            size_t l = len < on - from ? len : on - from;
            memcpy(p + at, other + from, l < *n - at ? l : *n - at);
            break;
        }
        case 6: /* delete a range */
            memmove(p + at, p + at + len, *n - at - len);
            *n -= len;
            break;
        default: /* cut */
            *n = at;
            break;
        }
    }
}

/* The decompressed stream of a trace (all frames concatenated). */
static tu_buf decompress_all(const tu_buf *z)
{
    tu_buf out = { NULL, 0 };
    size_t cap = 1 << 20;
    out.p = malloc(cap);
    REQUIRE(out.p, "oom");
    size_t pos = 0;
    while (pos < z->n) {
        size_t fl = ZSTD_findFrameCompressedSize(z->p + pos, z->n - pos);
        REQUIRE(!ZSTD_isError(fl), "frame");
        unsigned long long cs = ZSTD_getFrameContentSize(z->p + pos, fl);
        REQUIRE(cs != ZSTD_CONTENTSIZE_UNKNOWN && cs != ZSTD_CONTENTSIZE_ERROR, "content size");
        while (out.n + cs > cap) {
            cap *= 2;
            out.p = realloc(out.p, cap);
            REQUIRE(out.p, "oom");
        }
        size_t k = ZSTD_decompress(out.p + out.n, cap - out.n, z->p + pos, fl);
        REQUIRE(!ZSTD_isError(k), "decompress");
        out.n += k;
        pos += fl;
    }
    return out;
}

/* Recompresses a raw stream as frames of random sizes. */
static size_t recompress(tu_rng *g, const uint8_t *raw, size_t n, uint8_t *out, size_t cap)
{
    size_t pos = 0, o = 0;
    while (pos < n || (n == 0 && o == 0)) {
        size_t len = 1 + tu_below(g, 4000);
        if (len > n - pos)
            len = n - pos;
        size_t k = ZSTD_compress(out + o, cap - o, raw + pos, len, 1);
        REQUIRE(!ZSTD_isError(k), "compress");
        o += k;
        pos += len;
        if (n == 0)
            break;
    }
    return o;
}

static void on_alarm(int sig)
{
    (void)sig;
    static const char msg[] = "test_corruption: timed out: the reader hangs\n";
    if (write(2, msg, sizeof msg - 1) < 0) {
    }
    _exit(1);
}

int main(int argc, char **argv)
{
    unsigned iters = argc > 1 ? (unsigned)atoi(argv[1]) : 2000;
    signal(SIGALRM, on_alarm);
    alarm(300);
    tu_buf a = tu_synth_trace("corrupt", 1, 2500, 1500);
    tu_buf b = tu_synth_trace("corrupt", 2, 3000, 800);
    fprintf(stderr, "base traces: %zu and %zu bytes\n", a.n, b.n);
    tu_buf raw = decompress_all(&a);
    size_t cap = a.n * 2 + raw.n * 2 + 4096;
    uint8_t *buf = malloc(cap);
    uint8_t *rbuf = malloc(cap);
    REQUIRE(buf && rbuf, "oom");

    /* the untouched trace reads completely */
    max_records = 1u << 20;
    size_t whole = read_all(a.p, a.n, "clean", 0, NULL);
    CHECK(whole >= 2500, "clean trace: %zu records", whole);
    /* No input can yield more records than 1 per 2 decompressed bytes; the
     * inputs here stay below a few times the clean size. */
    max_records = (raw.n * 4) / 2 + 16;

    tu_rng g = { 12345 };
    size_t total = 0;
    unsigned stopped_clean = 0;
    for (unsigned it = 0; it < iters; it++) {
        /* compressed-level damage */
        size_t n = a.n;
        memcpy(buf, a.p, n);
        mutate(&g, buf, &n, cap, b.p, b.n);
        total += read_all(buf, n, "compressed", it, NULL);

        /* record-level damage inside valid zstd (the preamble kept 3 times in 4) */
        size_t keep = it % 4 != 0 ? GMT_PREAMBLE_LEN : 0;
        memcpy(rbuf, raw.p, raw.n);
        size_t body = raw.n - keep;
        mutate(&g, rbuf + keep, &body, cap - keep, raw.p, raw.n);
        size_t zn = recompress(&g, rbuf, keep + body, buf, cap);
        gmt_status st = GMT_OK;
        total += read_all(buf, zn, "records", it, &st);
        if (st == GMT_OK)
            stopped_clean++;
    }
    /* pure garbage of every small length and some large ones */
    for (unsigned it = 0; it < 300; it++) {
        size_t n = it < 64 ? it : tu_below(&g, 100000);
        for (size_t i = 0; i < n; i++)
            buf[i] = (uint8_t)tu_next(&g);
        if (it % 3 == 0 && n >= 4) { /* with a valid zstd magic in front */
            buf[0] = 0x28;
            buf[1] = 0xb5;
            buf[2] = 0x2f;
            buf[3] = 0xfd;
        }
        read_all(buf, n, "garbage", it, NULL);
    }
    fprintf(stderr, "%u iterations, %zu records returned in total, %u record-level runs ended cleanly\n", iters,
            total, stopped_clean);
    free(buf);
    free(rbuf);
    tu_buf_free(&a);
    tu_buf_free(&b);
    tu_buf_free(&raw);
    return tc_result("test_corruption");
}
