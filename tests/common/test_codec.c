/*
 * gmt_encode / gmt_decode on random records of every type (full 64-bit
 * ranges, edge values, empty and maximal strings), many seeds: single
 * records, sequences sharing one delta state, every prefix of an encoding,
 * too-small output buffers, newer-minor trailing bytes, unknown types and
 * every limit the decoder enforces.
 */
#include "tutil.h"

/* room for a sequence of 64 records, each up to a HEADER with four maximal strings */
static uint8_t enc[66u * (4u * GMT_MAX_STRING + 4096u)];
static uint8_t enc2[8u * GMT_MAX_STRING];
static tu_strpool pool;

static int codec_same(const gmt_codec *a, const gmt_codec *b) { return memcmp(a, b, sizeof *a) == 0; }

static void one_record(tu_rng *r, gmt_type type)
{
    gmt_record in, out;
    char why[200];
    tu_random_record(r, &pool, type, &in);
    /* a random, non-zero delta state on both sides */
    gmt_codec ce, cd;
    gmt_codec_reset(&ce);
    ce.last_ts = tu_u64(r);
    ce.last_addr = tu_u64(r);
    ce.last_corr = tu_u64(r);
    ce.last_gpu = tu_u64(r);
    ce.last_seq = tu_u64(r);
    ce.last_rid = tu_u64(r);
    ce.last_step = tu_u64(r);
    cd = ce;
    gmt_codec before = ce;

    size_t bound = gmt_encode_bound(&in);
    size_t n = gmt_encode(&ce, &in, enc, sizeof enc);
    REQUIRE(n > 0, "encode %s failed", gmt_type_name(type));
    CHECK(n <= bound, "%s: %zu bytes > bound %zu", gmt_type_name(type), n, bound);
    if (type != GMT_REC_HEADER && type != GMT_REC_DEVICE && type != GMT_REC_STRING && type != GMT_REC_TAG)
        CHECK(n <= GMT_ENCODE_MAX, "%s: %zu bytes > GMT_ENCODE_MAX", gmt_type_name(type), n);
    CHECK(enc[0] == (uint8_t)type, "type byte");

    size_t used = 0;
    gmt_status st = gmt_decode(&cd, enc, n, &out, &used);
    CHECK(st == GMT_OK && used == n, "decode %s: %s, used %zu of %zu", gmt_type_name(type), gmt_status_str(st),
          used, n);
    CHECK(tu_record_eq(&in, &out, why, sizeof why), "%s round trip: %s", gmt_type_name(type), why);
    CHECK(codec_same(&ce, &cd), "%s: encoder and decoder delta states differ", gmt_type_name(type));

    /* every strict prefix: "need more", state untouched */
    for (size_t cut = 0; cut < n; cut++) {
        gmt_codec c2 = before;
        size_t u2 = 12345;
        st = gmt_decode(&c2, enc, cut, &out, &u2);
        CHECK(st == GMT_E_SHORT, "%s cut at %zu/%zu: %s", gmt_type_name(type), cut, n, gmt_status_str(st));
        CHECK(codec_same(&c2, &before), "%s: state moved on a short record", gmt_type_name(type));
        if (n > 64 && cut > 8)
            cut += n / 50; /* long records: sample the prefixes */
    }
    /* output too small by one byte: refused, state untouched */
    gmt_codec c3 = before;
    CHECK(gmt_encode(&c3, &in, enc2, n - 1) == 0, "%s encoded into %zu bytes", gmt_type_name(type), n - 1);
    CHECK(codec_same(&c3, &before), "%s: state moved on a refused encode", gmt_type_name(type));
    CHECK(gmt_encode(&c3, &in, enc2, n) == n && memcmp(enc, enc2, n) == 0, "%s: exact-size encode differs",
          gmt_type_name(type));

    /* newer minor version: extra payload bytes after the known fields */
    {
        uint64_t plen = 0;
        int lb = gmt_varint_get(enc + 1, n - 1, &plen);
        REQUIRE(lb > 0, "length varint");
        size_t extra = 1 + tu_below(r, 20);
        /* KERNEL's flags (1.1) are omitted when 0: a newer writer that
         * appends fields after them writes them explicitly */
        int kflags0 = type == GMT_REC_KERNEL && in.u.kernel.flags == 0;
        size_t m = 0;
        enc2[m++] = enc[0];
        m += gmt_varint_put(enc2 + m, 10, plen + (size_t)kflags0 + extra);
        memcpy(enc2 + m, enc + 1 + lb, plen);
        m += plen;
        if (kflags0)
            enc2[m++] = 0;
        for (size_t i = 0; i < extra; i++)
            enc2[m++] = (uint8_t)tu_next(r);
        gmt_codec c4 = before;
        st = gmt_decode(&c4, enc2, m, &out, &used);
        CHECK(st == GMT_OK && used == m, "%s with %zu trailing bytes: %s", gmt_type_name(type), extra,
              gmt_status_str(st));
        CHECK(tu_record_eq(&in, &out, why, sizeof why), "%s with trailing bytes: %s", gmt_type_name(type), why);
        /* and a payload one byte short of its fields is an error */
        /* (a KERNEL with flags cut by one byte is a valid 1.0 KERNEL when
         * its flags took one byte: not corrupt by the format's rule) */
        int kcut_ok = type == GMT_REC_KERNEL && in.u.kernel.flags != 0 && in.u.kernel.flags < 128;
        if (plen > 0 && !kcut_ok) {
            m = 0;
            enc2[m++] = enc[0];
            m += gmt_varint_put(enc2 + m, 10, plen - 1);
            memcpy(enc2 + m, enc + 1 + lb, plen - 1);
            m += plen - 1;
            gmt_codec c5 = before;
            st = gmt_decode(&c5, enc2, m, &out, &used);
            CHECK(st == GMT_E_CORRUPT, "%s with a payload one byte short: %s", gmt_type_name(type),
                  gmt_status_str(st));
            CHECK(codec_same(&c5, &before), "state moved on a corrupt record");
        }
    }
}

/* A sequence of records through one encoder state and one decoder state. */
static void sequence(tu_rng *r, int count)
{
    static tu_rec recs[64];
    static size_t offs[65];
    gmt_codec ce, cd;
    gmt_codec_reset(&ce);
    gmt_codec_reset(&cd);
    size_t n = 0;
    for (int i = 0; i < count; i++) {
        gmt_record tmp;
        tu_random_record(r, &pool, 0, &tmp);
        tu_rec_copy(&recs[i], &tmp);
        offs[i] = n;
        size_t k = gmt_encode(&ce, &recs[i].r, enc + n, sizeof enc - n);
        REQUIRE(k > 0, "encode in sequence");
        n += k;
    }
    offs[count] = n;
    size_t pos = 0;
    char why[200];
    for (int i = 0; i < count; i++) {
        gmt_record out;
        size_t used = 0;
        gmt_status st = gmt_decode(&cd, enc + pos, n - pos, &out, &used);
        CHECK(st == GMT_OK && pos + used == offs[i + 1], "sequence record %d: %s", i, gmt_status_str(st));
        if (st != GMT_OK)
            break;
        CHECK(tu_record_eq(&recs[i].r, &out, why, sizeof why), "sequence record %d: %s", i, why);
        pos += used;
    }
    CHECK(codec_same(&ce, &cd), "sequence: final states differ");
    for (int i = 0; i < count; i++)
        tu_rec_free(&recs[i]);
}

static void limits(void)
{
    gmt_codec c;
    gmt_record out;
    size_t used = 0;
    uint8_t b[64];
    size_t m;

    /* type 0 is reserved: zeroed bytes are corruption, not a record */
    gmt_codec_reset(&c);
    memset(b, 0, sizeof b);
    CHECK(gmt_decode(&c, b, sizeof b, &out, &used) == GMT_E_CORRUPT, "type 0 accepted");
    CHECK(gmt_decode(&c, b, 0, &out, &used) == GMT_E_SHORT, "empty input");

    /* unknown type: skipped with its length; state untouched */
    m = 0;
    b[m++] = 200;
    b[m++] = 3;
    b[m++] = 1;
    b[m++] = 2;
    b[m++] = 3;
    used = 0;
    CHECK(gmt_decode(&c, b, m, &out, &used) == GMT_E_TYPE && used == m, "unknown type not skippable");
    CHECK(gmt_decode(&c, b, m - 1, &out, &used) == GMT_E_SHORT, "cut unknown type");
    b[0] = GMT_REC_TYPE_MAX_;
    CHECK(gmt_decode(&c, b, m, &out, &used) == GMT_E_TYPE, "first unassigned type");

    /* payload length above GMT_MAX_PAYLOAD: corrupt even before the bytes arrive */
    m = 0;
    b[m++] = GMT_REC_ALLOC;
    m += gmt_varint_put(b + m, 10, (uint64_t)GMT_MAX_PAYLOAD + 1);
    CHECK(gmt_decode(&c, b, m, &out, &used) == GMT_E_CORRUPT, "oversized payload accepted");
    b[0] = 250; /* same for unknown types */
    CHECK(gmt_decode(&c, b, m, &out, &used) == GMT_E_CORRUPT, "oversized unknown payload accepted");
    m = 0;
    b[m++] = GMT_REC_ALLOC;
    m += gmt_varint_put(b + m, 10, UINT64_MAX);
    CHECK(gmt_decode(&c, b, m, &out, &used) == GMT_E_CORRUPT, "2^64-1 payload accepted");
    /* malformed length varint */
    memset(b, 0xff, 12);
    b[0] = GMT_REC_ALLOC;
    CHECK(gmt_decode(&c, b, 12, &out, &used) == GMT_E_CORRUPT, "bad length varint accepted");

    /* string longer than GMT_MAX_STRING */
    static uint8_t big[GMT_MAX_STRING + 32];
    m = 0;
    big[m++] = GMT_REC_STRING;
    m += gmt_varint_put(big + m, 10, 1 + 3 + GMT_MAX_STRING + 1);
    big[m++] = 1; /* id */
    m += gmt_varint_put(big + m, 10, GMT_MAX_STRING + 1);
    memset(big + m, 'a', GMT_MAX_STRING + 1);
    m += GMT_MAX_STRING + 1;
    CHECK(gmt_decode(&c, big, m, &out, &used) == GMT_E_CORRUPT, "oversized string accepted");
    /* string length beyond its payload */
    m = 0;
    b[m++] = GMT_REC_STRING;
    b[m++] = 3;
    b[m++] = 1;
    b[m++] = 5; /* 5 bytes claimed, 1 present */
    b[m++] = 'x';
    CHECK(gmt_decode(&c, b, m, &out, &used) == GMT_E_CORRUPT, "string past payload accepted");

    /* TAG with ndev above GMT_MAX_TAG_DEVICES */
    m = 0;
    b[m++] = GMT_REC_TAG;
    size_t lenpos = m++;
    b[m++] = 1;                           /* name */
    b[m++] = 0;                           /* step */
    b[m++] = GMT_MAX_TAG_DEVICES + 1;     /* ndev */
    for (int i = 0; i < 5; i++)
        b[m++] = 0;
    b[m++] = 0; /* ts */
    b[lenpos] = (uint8_t)(m - lenpos - 1);
    CHECK(gmt_decode(&c, b, m, &out, &used) == GMT_E_CORRUPT, "TAG ndev > max accepted");

    /* malformed varint inside a payload */
    m = 0;
    b[m++] = GMT_REC_MARK;
    b[m++] = 12;
    memset(b + m, 0x80, 11);
    b[m + 11] = 0x00;
    m += 12;
    CHECK(gmt_decode(&c, b, m, &out, &used) == GMT_E_CORRUPT, "bad field varint accepted");

    /* encoder: strings above the limit are cut to GMT_MAX_STRING */
    static char longs[GMT_MAX_STRING + 100];
    memset(longs, 'z', sizeof longs);
    gmt_record s;
    memset(&s, 0, sizeof s);
    s.type = GMT_REC_STRING;
    s.u.string.id = 9;
    s.u.string.str.ptr = longs;
    s.u.string.str.len = sizeof longs;
    gmt_codec_reset(&c);
    size_t n = gmt_encode(&c, &s, enc, sizeof enc);
    CHECK(n > 0 && n <= gmt_encode_bound(&s), "long string encode");
    gmt_codec_reset(&c);
    CHECK(gmt_decode(&c, enc, n, &out, &used) == GMT_OK && out.u.string.str.len == GMT_MAX_STRING,
          "long string not cut to the limit");
    /* TAG with ndev above the limit is written with the limit */
    memset(&s, 0, sizeof s);
    s.type = GMT_REC_TAG;
    s.u.tag.ndev = 1000;
    gmt_codec_reset(&c);
    n = gmt_encode(&c, &s, enc, sizeof enc);
    gmt_codec_reset(&c);
    CHECK(n > 0 && gmt_decode(&c, enc, n, &out, &used) == GMT_OK && out.u.tag.ndev == GMT_MAX_TAG_DEVICES,
          "TAG ndev not clamped");
    /* invalid types and arguments are refused */
    s.type = (gmt_type)0;
    CHECK(gmt_encode(&c, &s, enc, sizeof enc) == 0, "type 0 encoded");
    s.type = GMT_REC_TYPE_MAX_;
    CHECK(gmt_encode(&c, &s, enc, sizeof enc) == 0, "unknown type encoded");
    CHECK(gmt_encode(NULL, &s, enc, sizeof enc) == 0 && gmt_encode(&c, NULL, enc, sizeof enc) == 0,
          "NULL accepted");
    CHECK(gmt_decode(NULL, b, 1, &out, &used) == GMT_E_ARG, "NULL codec accepted");
}

/* Known bytes, computed by hand: a MARK after a reset. */
static void golden(void)
{
    gmt_record m;
    memset(&m, 0, sizeof m);
    m.type = GMT_REC_MARK;
    m.u.mark.tid = 300;   /* ac 02 */
    m.u.mark.name = 5;    /* 05 */
    m.u.mark.ts = 1000;   /* zigzag(1000 - 0) = 2000 = d0 0f */
    gmt_codec c;
    gmt_codec_reset(&c);
    size_t n = gmt_encode(&c, &m, enc, sizeof enc);
    const uint8_t want[] = { GMT_REC_MARK, 5, 0xac, 0x02, 0x05, 0xd0, 0x0f };
    CHECK(n == sizeof want && memcmp(enc, want, n) == 0, "MARK bytes differ from the hand-made encoding");
    /* the next MARK 10 ns earlier: zigzag(-10) = 19 */
    m.u.mark.ts = 990;
    n = gmt_encode(&c, &m, enc, sizeof enc);
    CHECK(n == 6 && enc[5] == 19, "negative ts delta");
    /* a kernel's start is a delta from the previous GPU end, then the duration */
    gmt_record k;
    memset(&k, 0, sizeof k);
    k.type = GMT_REC_KERNEL;
    k.u.kernel.start = 5000;
    k.u.kernel.end = 5100;
    gmt_codec_reset(&c);
    c.last_gpu = 4990;
    n = gmt_encode(&c, &k, enc, sizeof enc);
    /* 18 zero fields, then zigzag(10) = 20, then dur 100 */
    CHECK(n == 2 + 18 + 2 && enc[n - 2] == 20 && enc[n - 1] == 100 && c.last_gpu == 5100, "kernel time encoding");
}

int main(int argc, char **argv)
{
    int seeds = argc > 1 ? atoi(argv[1]) : 300;
    for (int seed = 0; seed < seeds; seed++) {
        tu_rng r = { (uint64_t)seed * 7919u + 1 };
        for (int t = 1; t < GMT_REC_TYPE_MAX_; t++)
            one_record(&r, (gmt_type)t);
        sequence(&r, 1 + (int)tu_below(&r, 64));
    }
    limits();
    golden();
    return tu_finish("test_codec");
}
