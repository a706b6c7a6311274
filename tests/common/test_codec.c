/*
 * gmt_encode / gmt_decode on random records of every type (full 64-bit
 * ranges, edge values, empty and maximal strings), many seeds: single
 * records, sequences sharing one delta state, every prefix of an encoding,
 * too-small output buffers, newer-minor trailing bytes, unknown types and
 * every limit the decoder enforces.
 */
#include "tutil.h"

/* at least codec_fast.h's GMT_FAST_MARGIN: bytes after a record that make
 * gmt_decode take its fast path */
#define GMT_FAST_MARGIN_TEST 256u

/* room for a sequence of 64 records, each up to a HEADER with four maximal strings */
static uint8_t enc[66u * (4u * GMT_MAX_STRING + 4096u)];
static uint8_t enc2[8u * GMT_MAX_STRING];
static tu_strpool pool;

/* Two codec states are the same when their deltas and their tables' live
 * entries are (the bytes past a table's count are whatever they were). */
static int tab_same(const gmt_itab *a, const gmt_itab *b, const uint64_t *ea, const uint64_t *eb, unsigned w)
{
    if (a->n != b->n)
        return 0;
    for (uint32_t e = 0; e < a->n; e++)
        if (a->home[e] != b->home[e] || a->slot[a->home[e]] != e || b->slot[b->home[e]] != e ||
            memcmp(ea + (size_t)e * w, eb + (size_t)e * w, w * sizeof *ea) != 0)
            return 0;
    return 1;
}

static int codec_same(const gmt_codec *a, const gmt_codec *b)
{
    return memcmp(&a->d, &b->d, sizeof a->d) == 0 && tab_same(&a->shapes, &b->shapes, a->shape, b->shape, GMT_SHAPE_WORDS) &&
           tab_same(&a->ctxs, &b->ctxs, a->ctx, b->ctx, GMT_CTX_WORDS);
}

static void one_record(tu_rng *r, gmt_type type)
{
    gmt_record in, out;
    char why[200];
    tu_random_record(r, &pool, type, &in);
    /* a random, non-zero delta state on both sides */
    gmt_codec ce, cd;
    gmt_codec_reset(&ce);
    ce.d.last_ts = tu_u64(r);
    ce.d.last_addr = tu_u64(r);
    ce.d.last_corr = tu_u64(r);
    ce.d.last_gpu = tu_u64(r);
    ce.d.last_seq = tu_u64(r);
    ce.d.last_rid = tu_u64(r);
    ce.d.last_step = tu_u64(r);
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
        /* likewise a TAG's framework fields (2.1), ndev x 2 varints */
        size_t tagfw0 = type == GMT_REC_TAG && !in.u.tag.has_framework ? 2 * (size_t)in.u.tag.ndev : 0;
        /* and a STATS's outside_window (2.2), omitted when 0 */
        int sout0 = type == GMT_REC_STATS && in.u.stats.outside_window == 0;
        /* a RANGE_BEGIN's kind and a BLOCK's frame and stack (2.3), omitted when 0 */
        int rkind0 = type == GMT_REC_RANGE_BEGIN && in.u.range.kind == 0;
        int bsrc0 = type != GMT_REC_BLOCK ? 0 : in.u.block.stack ? 0 : in.u.block.frame ? 1 : 2;
        size_t zeros = (size_t)(kflags0 + sout0 + rkind0 + bsrc0);
        size_t m = 0;
        enc2[m++] = enc[0];
        m += gmt_varint_put(enc2 + m, 10, plen + zeros + tagfw0 + extra);
        memcpy(enc2 + m, enc + 1 + lb, plen);
        m += plen;
        for (size_t i = 0; i < zeros; i++)
            enc2[m++] = 0;
        for (size_t i = 0; i < tagfw0; i++)
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
        /* (likewise a STATS whose outside_window took one byte: a 2.1 STATS) */
        kcut_ok |= type == GMT_REC_STATS && in.u.stats.outside_window != 0 && in.u.stats.outside_window < 128;
        /* (and a RANGE_BEGIN whose kind took one byte: a 2.2 RANGE_BEGIN) */
        kcut_ok |= type == GMT_REC_RANGE_BEGIN && in.u.range.kind != 0 && in.u.range.kind < 128;
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

/* ---- format 1.2: the frame's shape and context tables ------------------- */

/* A kernel of shape number `shape` (the shape's fields follow from the
 * number, full-range values included), its launch fields random. */
static gmt_record kernel_of(tu_rng *r, uint64_t shape)
{
    gmt_record k;
    memset(&k, 0, sizeof k);
    k.type = GMT_REC_KERNEL;
    gmt_kernel *x = &k.u.kernel;
    x->name = shape + 1;
    x->grid[0] = shape * 0x9e3779b97f4a7c15ull;
    x->grid[1] = 1;
    x->grid[2] = shape & 3;
    x->block[0] = 256;
    x->block[1] = shape >> 3;
    x->block[2] = 1;
    x->registers = 32 + (shape & 7);
    x->static_smem = shape % 5 == 0 ? UINT64_MAX : 0;
    x->dynamic_smem = shape << 10;
    x->local_mem = shape % 7;
    x->start = tu_u64(r);
    x->end = tu_u64(r);
    x->device = tu_below(r, 3);
    x->stream = tu_u64(r);
    x->corr = tu_u64(r);
    x->tid = tu_u64(r);
    x->seq = tu_u64(r);
    x->range = tu_u64(r);
    x->step = tu_u64(r);
    x->flags = tu_below(r, 4);
    return k;
}

/* An ALLOC or FREE of context number `ctx`, the rest random. */
static gmt_record mem_of(tu_rng *r, gmt_type t, uint64_t ctx)
{
    gmt_record m;
    memset(&m, 0, sizeof m);
    m.type = t;
    gmt_mem *x = &m.u.mem;
    x->device = ctx & 7;
    x->kind = ctx % 3;
    x->source = ctx >> 5;
    x->flags = ctx % 11 == 0 ? UINT64_MAX : ctx & 1;
    x->stream = ctx * 0xc2b2ae3d27d4eb4full;
    x->tid = 4242 + (ctx >> 2);
    x->ts = tu_u64(r);
    x->address = tu_u64(r);
    x->bytes = tu_u64(r);
    x->corr = tu_u64(r);
    x->range = tu_u64(r);
    x->seq = tu_u64(r);
    x->step = tu_u64(r);
    return m;
}

static size_t put_rec(gmt_codec *c, const gmt_record *rec, size_t at)
{
    size_t k = gmt_encode(c, rec, enc + at, sizeof enc - at);
    REQUIRE(k > 0, "encode %s", gmt_type_name(rec->type));
    return k;
}

/* Decodes enc[0..n) as recs[0..count) twice: in one buffer (the fast path
 * while 256 bytes remain) and record by record from an exact-size copy (the
 * checked path); both must give the records and end in the encoder's state. */
static void decode_both(const gmt_record *recs, const size_t *offs, size_t count, const gmt_codec *ce,
                        const char *what)
{
    static gmt_codec cd, cs;
    gmt_codec_reset(&cd);
    gmt_codec_reset(&cs);
    char why[200];
    size_t n = offs[count];
    for (size_t i = 0; i < count; i++) {
        gmt_record out;
        size_t used = 0;
        gmt_status st = gmt_decode(&cd, enc + offs[i], n - offs[i], &out, &used);
        CHECK(st == GMT_OK && used == offs[i + 1] - offs[i], "%s: record %zu: %s", what, i, gmt_status_str(st));
        CHECK(st != GMT_OK || tu_record_eq(&recs[i], &out, why, sizeof why), "%s: record %zu: %s", what, i, why);
        size_t len = offs[i + 1] - offs[i];
        memcpy(enc2, enc + offs[i], len);
        st = gmt_decode(&cs, enc2, len, &out, &used);
        CHECK(st == GMT_OK && used == len, "%s: record %zu alone: %s", what, i, gmt_status_str(st));
        CHECK(st != GMT_OK || tu_record_eq(&recs[i], &out, why, sizeof why), "%s: record %zu alone: %s", what, i,
              why);
        if (st != GMT_OK)
            return;
    }
    CHECK(codec_same(ce, &cd) && codec_same(ce, &cs), "%s: encoder and decoder states differ", what);
}

/* Kernels, allocations and frees from small pools of shapes and contexts,
 * between random records of every type: each shape and context goes plain
 * once, then as a _REF. */
static void interned_mix(tu_rng *r)
{
    enum { N = 3000 };
    static gmt_record recs[N];
    static size_t offs[N + 1];
    static gmt_codec ce;
    static uint8_t seen_shape[64], seen_ctx[64];
    gmt_codec_reset(&ce);
    memset(seen_shape, 0, sizeof seen_shape);
    memset(seen_ctx, 0, sizeof seen_ctx);
    unsigned nshape = 1 + (unsigned)tu_below(r, 40), nctx = 1 + (unsigned)tu_below(r, 20);
    size_t n = 0, plain = 0, refs = 0, bytes_ref = 0, bytes_plain = 0;
    for (size_t i = 0; i < N; i++) {
        uint64_t pick = tu_below(r, 10);
        gmt_record *x = &recs[i];
        int want_ref = -1;
        if (pick < 3) {
            unsigned sh = (unsigned)tu_below(r, nshape);
            *x = kernel_of(r, sh);
            want_ref = seen_shape[sh];
            seen_shape[sh] = 1;
        } else if (pick < 8) {
            unsigned cx = (unsigned)tu_below(r, nctx);
            *x = mem_of(r, pick < 6 ? GMT_REC_ALLOC : GMT_REC_FREE, cx);
            want_ref = seen_ctx[cx];
            seen_ctx[cx] = 1;
        } else {
            /* any other type, strings left out (they would need copies) */
            gmt_type t;
            do
                t = (gmt_type)(1 + tu_below(r, GMT_REC_TYPE_MAX_ - 1));
            while (t == GMT_REC_HEADER || t == GMT_REC_DEVICE || t == GMT_REC_STRING || t == GMT_REC_KERNEL ||
                   t == GMT_REC_ALLOC || t == GMT_REC_FREE);
            tu_random_record(r, &pool, t, x);
        }
        offs[i] = n;
        size_t k = put_rec(&ce, x, n);
        if (want_ref >= 0) {
            int is_ref = enc[n] >= GMT_REC_TYPE_MAX_;
            CHECK(is_ref == want_ref, "mix record %zu (%s): type byte %u", i, gmt_type_name(x->type), enc[n]);
            if (is_ref)
                refs++, bytes_ref += k;
            else
                plain++, bytes_plain += k;
        }
        n += k;
    }
    offs[N] = n;
    CHECK(ce.shapes.n <= nshape && ce.ctxs.n <= nctx, "mix: %u shapes, %u contexts in the tables", ce.shapes.n,
          ce.ctxs.n);
    CHECK(plain == ce.shapes.n + ce.ctxs.n, "mix: %zu plain records for %u + %u table entries", plain,
          ce.shapes.n, ce.ctxs.n);
    CHECK(refs == 0 || bytes_ref / refs < bytes_plain / (plain ? plain : 1), "mix: _REF records not smaller");
    decode_both(recs, offs, N, &ce, "mix");
}

/* GMT_TAB_CAP + 1 distinct shapes (and contexts) in one frame: the table
 * fills, the extra one stays plain and is not added, the others are found. */
static void table_full(tu_rng *r)
{
    enum { N = 2 * (GMT_TAB_CAP + 1) + 6 };
    static gmt_record recs[N];
    static size_t offs[N + 1];
    static gmt_codec ce;
    gmt_codec_reset(&ce);
    size_t n = 0, i = 0;
    for (unsigned s = 0; s <= GMT_TAB_CAP; s++) {
        recs[i] = kernel_of(r, s);
        offs[i] = n;
        n += put_rec(&ce, &recs[i], n);
        CHECK(enc[offs[i]] == GMT_REC_KERNEL, "shape %u: type %u", s, enc[offs[i]]);
        i++;
        recs[i] = mem_of(r, s & 1 ? GMT_REC_FREE : GMT_REC_ALLOC, s);
        offs[i] = n;
        n += put_rec(&ce, &recs[i], n);
        CHECK(enc[offs[i]] == recs[i].type, "context %u: type %u", s, enc[offs[i]]);
        i++;
    }
    CHECK(ce.shapes.n == GMT_TAB_CAP && ce.ctxs.n == GMT_TAB_CAP, "full tables hold %u and %u", ce.shapes.n,
          ce.ctxs.n);
    /* the first and the last entry: _REF, the index one and two bytes */
    static const unsigned again[3] = { 0, GMT_TAB_CAP - 1, GMT_TAB_CAP };
    for (int j = 0; j < 3; j++) {
        unsigned s = again[j];
        recs[i] = kernel_of(r, s);
        offs[i] = n;
        n += put_rec(&ce, &recs[i], n);
        const uint8_t *b = enc + offs[i];
        if (s < GMT_TAB_CAP)
            CHECK(b[0] == GMT_WIRE_KERNEL_REF && (s < 128 ? b[2] == s : b[2] == (0x80 | (s & 0x7f)) && b[3] == s >> 7),
                  "shape %u again: type %u, index byte %02x", s, b[0], b[2]);
        else
            CHECK(b[0] == GMT_REC_KERNEL, "the shape beyond the cap: type %u", b[0]);
        i++;
        recs[i] = mem_of(r, GMT_REC_FREE, s);
        offs[i] = n;
        n += put_rec(&ce, &recs[i], n);
        b = enc + offs[i];
        CHECK(b[0] == (s < GMT_TAB_CAP ? GMT_WIRE_FREE_REF : GMT_REC_FREE), "context %u again: type %u", s, b[0]);
        i++;
    }
    REQUIRE(i == N, "table_full: %zu records", i);
    offs[N] = n;
    CHECK(ce.shapes.n == GMT_TAB_CAP && ce.ctxs.n == GMT_TAB_CAP, "tables grew past the cap");
    decode_both(recs, offs, N, &ce, "table_full");
}

/* A KERNEL_REF's payload by hand, in the order docs/trace-format.md gives. */
static size_t kernel_ref_bytes(uint8_t *b, uint64_t idx, int pad)
{
    size_t m = 0;
    b[m++] = GMT_WIRE_KERNEL_REF;
    size_t lenpos = m++;
    m += gmt_varint_put(b + m, 10, idx);
    b[m++] = 1;    /* device */
    b[m++] = 7;    /* stream */
    b[m++] = 0x14; /* corr: +10 */
    b[m++] = 0x05; /* tid */
    b[m++] = 0x02; /* seq: +1 */
    b[m++] = 0x04; /* range: +2 */
    b[m++] = 0x00; /* step: +0 */
    b[m++] = 0x01; /* flags */
    b[m++] = 0xd0; /* start: +1000 */
    b[m++] = 0x0f;
    b[m++] = 0x64; /* dur 100 */
    b[lenpos] = (uint8_t)(m - lenpos - 1);
    if (pad) { /* more input after the record: the fast path */
        memset(b + m, 0, GMT_FAST_MARGIN_TEST);
    }
    return m;
}

static size_t mem_ref_bytes(uint8_t *b, uint8_t type, uint64_t idx)
{
    size_t m = 0;
    b[m++] = type;
    size_t lenpos = m++;
    m += gmt_varint_put(b + m, 10, idx);
    b[m++] = 0x80; /* address: +0x1000 */
    b[m++] = 0x40;
    b[m++] = 0x80; /* bytes 4096 */
    b[m++] = 0x20;
    b[m++] = 0x02; /* corr: +1 */
    b[m++] = 0x00; /* range */
    b[m++] = 0x00; /* seq */
    b[m++] = 0x02; /* step: +1 */
    b[m++] = 0x0a; /* ts: +5 */
    b[lenpos] = (uint8_t)(m - lenpos - 1);
    return m;
}

/* _REF records by hand: good ones decode to the table entry and the deltas;
 * an index at or past the table's count is corrupt (in a frame that has not
 * seen the shape: the state of a new frame) and leaves the state as it was;
 * every prefix is short; extra payload bytes (a newer minor) are ignored. */
static void refs_by_hand(tu_rng *r)
{
    static uint8_t b[1024];
    static gmt_codec c, before;
    gmt_record out;
    size_t used, m;
    for (int pad = 0; pad < 2; pad++) {
        size_t avail;
        /* a new frame: empty tables, so index 0 names nothing */
        gmt_codec_reset(&c);
        memset(b, 0, sizeof b);
        m = kernel_ref_bytes(b, 0, pad);
        avail = pad ? sizeof b : m;
        before = c;
        CHECK(gmt_decode(&c, b, avail, &out, &used) == GMT_E_CORRUPT, "KERNEL_REF in an empty table (pad %d)", pad);
        CHECK(codec_same(&c, &before), "state moved on a bad KERNEL_REF");
        m = mem_ref_bytes(b, GMT_WIRE_ALLOC_REF, 0);
        avail = pad ? sizeof b : m;
        CHECK(gmt_decode(&c, b, avail, &out, &used) == GMT_E_CORRUPT, "ALLOC_REF in an empty table (pad %d)", pad);
        m = mem_ref_bytes(b, GMT_WIRE_FREE_REF, 0);
        avail = pad ? sizeof b : m;
        CHECK(gmt_decode(&c, b, avail, &out, &used) == GMT_E_CORRUPT, "FREE_REF in an empty table (pad %d)", pad);
        CHECK(codec_same(&c, &before), "state moved on a bad _REF");

        /* one shape and one context known */
        gmt_record k = kernel_of(r, 9), a = mem_of(r, GMT_REC_ALLOC, 5);
        size_t kn = gmt_encode(&c, &k, enc, sizeof enc), an = gmt_encode(&c, &a, enc + kn, sizeof enc - kn);
        REQUIRE(kn && an && enc[0] == GMT_REC_KERNEL && enc[kn] == GMT_REC_ALLOC, "plain records");
        CHECK(c.shapes.n == 1 && c.ctxs.n == 1, "one entry each: %u %u", c.shapes.n, c.ctxs.n);
        static const uint64_t bad_idx[3] = { 1, 255, UINT64_MAX };
        for (int j = 0; j < 3; j++) {
            memset(b, 0, sizeof b);
            m = kernel_ref_bytes(b, bad_idx[j], pad);
            avail = pad ? sizeof b : m;
            before = c;
            CHECK(gmt_decode(&c, b, avail, &out, &used) == GMT_E_CORRUPT, "KERNEL_REF index %llu of 1 (pad %d)",
                  (unsigned long long)bad_idx[j], pad);
            m = mem_ref_bytes(b, GMT_WIRE_FREE_REF, bad_idx[j]);
            avail = pad ? sizeof b : m;
            CHECK(gmt_decode(&c, b, avail, &out, &used) == GMT_E_CORRUPT, "FREE_REF index %llu of 1 (pad %d)",
                  (unsigned long long)bad_idx[j], pad);
            CHECK(codec_same(&c, &before), "state moved on an index out of range");
        }
        /* index 0: the entry, and the deltas from the state */
        memset(b, 0, sizeof b);
        m = kernel_ref_bytes(b, 0, pad);
        avail = pad ? sizeof b : m;
        before = c;
        used = 0;
        CHECK(gmt_decode(&c, b, avail, &out, &used) == GMT_OK && used == m, "good KERNEL_REF (pad %d)", pad);
        const gmt_kernel *o = &out.u.kernel;
        CHECK(out.type == GMT_REC_KERNEL && o->name == k.u.kernel.name && o->grid[0] == k.u.kernel.grid[0] &&
                  o->block[1] == k.u.kernel.block[1] && o->local_mem == k.u.kernel.local_mem &&
                  o->static_smem == k.u.kernel.static_smem && o->device == 1 && o->stream == 7 &&
                  o->corr == before.d.last_corr + 10 && o->tid == 5 && o->seq == before.d.last_seq + 1 &&
                  o->range == before.d.last_rid + 2 && o->step == before.d.last_step && o->flags == 1 &&
                  o->start == before.d.last_gpu + 1000 && o->end == o->start + 100,
              "KERNEL_REF fields (pad %d)", pad);
        CHECK(c.shapes.n == 1 && c.d.last_gpu == o->end, "KERNEL_REF state");
        m = mem_ref_bytes(b, GMT_WIRE_FREE_REF, 0);
        memset(b + m, 0, sizeof b - m);
        avail = pad ? sizeof b : m;
        before = c;
        CHECK(gmt_decode(&c, b, avail, &out, &used) == GMT_OK && used == m, "good FREE_REF (pad %d)", pad);
        const gmt_mem *x = &out.u.mem;
        CHECK(out.type == GMT_REC_FREE && x->device == a.u.mem.device && x->kind == a.u.mem.kind &&
                  x->source == a.u.mem.source && x->flags == a.u.mem.flags && x->stream == a.u.mem.stream &&
                  x->tid == a.u.mem.tid && x->address == before.d.last_addr + 0x1000 && x->bytes == 4096 &&
                  x->corr == before.d.last_corr + 1 && x->range == before.d.last_rid &&
                  x->seq == before.d.last_seq && x->step == before.d.last_step + 1 && x->ts == before.d.last_ts + 5,
              "FREE_REF fields (pad %d)", pad);
        CHECK(c.ctxs.n == 1, "a _REF added an entry");

        /* every prefix: short; payload one byte short: corrupt; longer: ok */
        m = mem_ref_bytes(b, GMT_WIRE_ALLOC_REF, 0);
        before = c;
        for (size_t cut = 0; cut < m; cut++)
            CHECK(gmt_decode(&c, b, cut, &out, &used) == GMT_E_SHORT && codec_same(&c, &before),
                  "ALLOC_REF cut at %zu", cut);
        b[1]--;
        CHECK(gmt_decode(&c, b, pad ? sizeof b : m - 1, &out, &used) == GMT_E_CORRUPT && codec_same(&c, &before),
              "ALLOC_REF one byte short (pad %d)", pad);
        b[1] += 4;
        b[m] = 0x7f, b[m + 1] = 0x01, b[m + 2] = 0x00;
        CHECK(gmt_decode(&c, b, pad ? sizeof b : m + 3, &out, &used) == GMT_OK && used == m + 3 &&
                  out.type == GMT_REC_ALLOC && out.u.mem.ts == before.d.last_ts + 5,
              "ALLOC_REF with 3 more payload bytes (pad %d)", pad);
    }

    /* an encode refused for room changes no table */
    gmt_codec_reset(&c);
    gmt_record k = kernel_of(r, 1);
    size_t need = gmt_encode(&c, &k, enc, sizeof enc);
    gmt_codec_reset(&c);
    before = c;
    CHECK(gmt_encode(&c, &k, enc, need - 1) == 0 && c.shapes.n == 0 && codec_same(&c, &before),
          "refused plain KERNEL changed the state");
    gmt_record a = mem_of(r, GMT_REC_FREE, 1);
    need = gmt_encode(&c, &a, enc, sizeof enc);
    gmt_codec_reset(&c);
    CHECK(gmt_encode(&c, &a, enc, need - 1) == 0 && c.ctxs.n == 0, "refused plain FREE changed the state");
    /* and a refused _REF leaves the deltas */
    REQUIRE(gmt_encode(&c, &a, enc, sizeof enc) > 0, "FREE");
    before = c;
    need = gmt_encode(&before, &a, enc, sizeof enc);
    REQUIRE(enc[0] == GMT_WIRE_FREE_REF, "FREE_REF");
    before = c;
    CHECK(gmt_encode(&c, &a, enc, need - 1) == 0 && codec_same(&c, &before), "refused FREE_REF changed the state");
}

/* Frames are independent: a _REF right after a reset (a new frame) is
 * corrupt even though the previous frame had the entry, and a plain record
 * in the new frame starts its table again at index 0. */
static void frame_reset(tu_rng *r)
{
    static gmt_codec ce, cd, before;
    gmt_codec_reset(&ce);
    gmt_codec_reset(&cd);
    gmt_record k = kernel_of(r, 3), f = mem_of(r, GMT_REC_FREE, 2);
    size_t n = 0, offs[5];
    offs[0] = n, n += put_rec(&ce, &k, n);
    offs[1] = n, n += put_rec(&ce, &k, n);
    offs[2] = n, n += put_rec(&ce, &f, n);
    offs[3] = n, n += put_rec(&ce, &f, n);
    offs[4] = n;
    CHECK(enc[offs[1]] == GMT_WIRE_KERNEL_REF && enc[offs[3]] == GMT_WIRE_FREE_REF, "second of each is a _REF");
    gmt_record out;
    size_t used;
    for (int i = 0; i < 4; i++)
        REQUIRE(gmt_decode(&cd, enc + offs[i], n - offs[i], &out, &used) == GMT_OK, "frame 1 record %d", i);
    gmt_codec_reset(&cd);
    before = cd;
    for (int i = 1; i < 4; i += 2) {
        CHECK(gmt_decode(&cd, enc + offs[i], offs[i + 1] - offs[i], &out, &used) == GMT_E_CORRUPT,
              "record %d of frame 1 decoded in frame 2", i);
        memcpy(enc2, enc + offs[i], offs[i + 1] - offs[i]);
        memset(enc2 + offs[i + 1] - offs[i], 0, GMT_FAST_MARGIN_TEST);
        CHECK(gmt_decode(&cd, enc2, offs[i + 1] - offs[i] + GMT_FAST_MARGIN_TEST, &out, &used) == GMT_E_CORRUPT,
              "record %d of frame 1 decoded in frame 2 (fast path)", i);
        CHECK(codec_same(&cd, &before), "state moved");
    }
    /* the encoder after a reset writes the plain form again */
    gmt_codec_reset(&ce);
    n = put_rec(&ce, &k, 0);
    CHECK(enc[0] == GMT_REC_KERNEL && ce.shapes.n == 1, "after a reset: type %u", enc[0]);
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
    b[0] = GMT_WIRE_TYPE_MAX_;
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
    s.type = GMT_REC_TYPE_MAX_; /* = GMT_WIRE_KERNEL_REF: the encoder picks the _REF forms itself */
    CHECK(gmt_encode(&c, &s, enc, sizeof enc) == 0, "unknown type encoded");
    s.type = (gmt_type)GMT_WIRE_FREE_REF;
    CHECK(gmt_encode(&c, &s, enc, sizeof enc) == 0, "a stream-only type encoded");
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
    c.d.last_gpu = 4990;
    n = gmt_encode(&c, &k, enc, sizeof enc);
    /* 18 zero fields, then zigzag(10) = 20, then dur 100 */
    CHECK(n == 2 + 18 + 2 && enc[n - 2] == 20 && enc[n - 1] == 100 && c.d.last_gpu == 5100, "kernel time encoding");
}

int main(int argc, char **argv)
{
    int seeds = argc > 1 ? atoi(argv[1]) : 300;
    for (int seed = 0; seed < seeds; seed++) {
        tu_rng r = { (uint64_t)seed * 7919u + 1 };
        for (int t = 1; t < GMT_REC_TYPE_MAX_; t++)
            one_record(&r, (gmt_type)t);
        sequence(&r, 1 + (int)tu_below(&r, 64));
        if (seed % 10 == 0)
            interned_mix(&r);
    }
    {
        tu_rng r = { 4711 };
        table_full(&r);
        refs_by_hand(&r);
        frame_reset(&r);
    }
    limits();
    golden();
    return tc_result("test_codec");
}
