/*
 * Internal to libgmt (common/codec.c, common/reader.c): the decoder of the
 * record types that make up nearly every trace, shared so that the reader's
 * per-record fast path inlines it instead of calling gmt_decode.  The public
 * decoder (gmt_decode) uses it too, so there is one definition of these
 * payloads besides the checked one in codec.c, and test_codec, the fuzzers
 * and the corruption tests exercise both (any input of GMT_FAST_MARGIN bytes
 * or more takes this path).
 */
#ifndef GMEMPROF_CODEC_FAST_H
#define GMEMPROF_CODEC_FAST_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "gmemprof/trace_format.h"

/* ---- the interning tables of format 1.2 -------------------------------- */

/* A kernel shape is gmt_kernel's fields name .. local_mem, copied as one
 * block of GMT_SHAPE_WORDS words: they must be contiguous and in order. */
#define GMT_SHAPE_OFF offsetof(gmt_kernel, name)
_Static_assert(offsetof(gmt_kernel, grid) == GMT_SHAPE_OFF + 8 &&
                   offsetof(gmt_kernel, block) == GMT_SHAPE_OFF + 32 &&
                   offsetof(gmt_kernel, registers) == GMT_SHAPE_OFF + 56 &&
                   offsetof(gmt_kernel, local_mem) == GMT_SHAPE_OFF + 8 * (GMT_SHAPE_WORDS - 1),
               "gmt_kernel's shape fields are not one block");
/* Entry indices are stored in a byte, slots in 16 bits. */
_Static_assert(GMT_TAB_CAP <= 256 && GMT_TAB_SLOTS <= 65536 && GMT_TAB_SLOTS > GMT_TAB_CAP,
               "interning table sizes");

static inline void gmt_shape_of(const gmt_kernel *k, uint64_t key[GMT_SHAPE_WORDS])
{
    memcpy(key, (const char *)k + GMT_SHAPE_OFF, GMT_SHAPE_WORDS * 8);
}

/* A context's words in the order of gmt_mem's fields, so that gmt_ctx_put
 * copies them in three blocks (kind..flags, stream..tid, device); the order
 * is the decoder's own business: a table entry's index is the order of its
 * first record, whatever the words' order, so the wire does not see it. */
_Static_assert(offsetof(gmt_mem, source) == offsetof(gmt_mem, kind) + 8 &&
                   offsetof(gmt_mem, flags) == offsetof(gmt_mem, kind) + 16 &&
                   offsetof(gmt_mem, tid) == offsetof(gmt_mem, stream) + 8,
               "gmt_mem's context fields are not in three blocks");

static inline void gmt_ctx_of(const gmt_mem *m, uint64_t key[GMT_CTX_WORDS])
{
    key[0] = m->kind;
    key[1] = m->source;
    key[2] = m->flags;
    key[3] = m->stream;
    key[4] = m->tid;
    key[5] = m->device;
}

/* The slot a key hashes to: a sum of products (independent multiplies, not
 * a chain), then the high bits of one more mix.  Only the encoder and the
 * decoder's rare plain records hash; a _REF is decoded without it. */
static inline uint32_t gmt_tab_hash(const uint64_t *key, unsigned words)
{
    static const uint64_t mul[GMT_SHAPE_WORDS] = {
        0x79463e00ec00bcf5ull, 0xc95140e2cab9b0e7ull, 0x5f62389f3deb2b71ull, 0xbca2dc9edd7102bdull,
        0x0ce09ed157875eb1ull, 0x2516567236c8ab95ull, 0x6143058fd8ee8a8full, 0x58f740e3b4c80c05ull,
        0xd37af51d76d5de6dull, 0xd3f0a64605022405ull, 0xb1fca0072f0cad23ull,
    };
    uint64_t h = 0;
    for (unsigned i = 0; i < words; i++)
        h += (key[i] ^ (key[i] >> 32)) * mul[i];
    h ^= h >> 29;
    h *= 0x9e3779b97f4a7c15ull;
    return (uint32_t)(h >> (64 - GMT_TAB_SLOT_BITS));
}

/* Looks key up in table t (entries ent, `words` each).  Returns its index,
 * or -1 with *where set to the free slot it would take.  Linear probing
 * ends at the first slot not in use: there are at most GMT_TAB_CAP in use
 * of GMT_TAB_SLOTS, so it ends within GMT_TAB_CAP + 1 probes whatever the
 * keys (and nothing is ever removed within a frame). */
static inline int gmt_tab_find(const gmt_itab *t, const uint64_t *ent, unsigned words, const uint64_t *key,
                               uint32_t *where)
{
    uint32_t s = gmt_tab_hash(key, words);
    for (;;) {
        uint32_t e = t->slot[s];
        if (e >= t->n || t->home[e] != s) {
            *where = s;
            return -1;
        }
        if (memcmp(ent + (size_t)e * words, key, (size_t)words * 8) == 0)
            return (int)e;
        s = (s + 1) & (GMT_TAB_SLOTS - 1);
    }
}

/* Appends key as entry n at the free slot `where` (from gmt_tab_find);
 * the caller checked that the table has room. */
static inline void gmt_tab_add(gmt_itab *t, uint64_t *ent, unsigned words, const uint64_t *key, uint32_t where)
{
    uint32_t e = t->n++;
    t->slot[where] = (uint8_t)e;
    t->home[e] = (uint16_t)where;
    memcpy(ent + (size_t)e * words, key, (size_t)words * 8);
}

/* The append rule, on the decoder's side: a plain record's shape or context
 * joins the table unless it is there already or the table is full.  The
 * encoder applies the same rule (gmt_encode), so both sides hold the same
 * tables after every record, and a state that decoded a record equals, byte
 * for byte, one that encoded it.  Out of line: in a 1.2 trace only a frame's
 * first record of each shape or context gets here. */
static __attribute__((noinline, unused)) void gmt_tab_note(gmt_itab *t, uint64_t *ent, unsigned words,
                                                           const uint64_t *key)
{
    uint32_t where;
    if (gmt_tab_find(t, ent, words, key, &where) < 0)
        gmt_tab_add(t, ent, words, key, where);
}

static inline __attribute__((always_inline)) void gmt_note_shape(gmt_codec *c, const gmt_kernel *k)
{
    if (c->shapes.n < GMT_TAB_CAP) {
        uint64_t key[GMT_SHAPE_WORDS];
        gmt_shape_of(k, key);
        gmt_tab_note(&c->shapes, c->shape, GMT_SHAPE_WORDS, key);
    }
}

static inline __attribute__((always_inline)) void gmt_note_ctx(gmt_codec *c, const gmt_mem *m)
{
    if (c->ctxs.n < GMT_TAB_CAP) {
        uint64_t key[GMT_CTX_WORDS];
        gmt_ctx_of(m, key);
        gmt_tab_note(&c->ctxs, c->ctx, GMT_CTX_WORDS, key);
    }
}

/* A _REF record's table entry back into the record it stands for. */
static inline __attribute__((always_inline)) void gmt_shape_put(const gmt_codec *c, uint64_t idx, gmt_kernel *k)
{
    /* one block copy: the shape's 11 words lie together in gmt_kernel */
    memcpy((char *)k + GMT_SHAPE_OFF, c->shape + idx * GMT_SHAPE_WORDS, GMT_SHAPE_WORDS * 8);
}

static inline __attribute__((always_inline)) void gmt_ctx_put(const gmt_codec *c, uint64_t idx, gmt_mem *m)
{
    const uint64_t *e = c->ctx + idx * GMT_CTX_WORDS;
    memcpy(&m->kind, e, 3 * 8);
    memcpy(&m->stream, e + 3, 2 * 8);
    m->device = e[5];
}

/*
 * ALLOC, FREE, KERNEL, MEMCPY, MEMSET, RANGE_BEGIN and RANGE_END (and since
 * 1.2 the _REF forms) are nearly every record of a trace, and the checked
 * decoder above spends most of its time on a bounds check
 * and a cursor store per field.  When the input holds at least GMT_FAST_MARGIN
 * bytes from the record's start, no field of these types can read past the
 * input: the header takes at most 4 bytes, a field at most 10 (a longer one
 * stops the decoding), and these records have at most GMT_FAST_FIELDS fields.
 * Their fields are then read without a check each; one check at the end
 * refuses a payload whose fields ran past its length, which is exactly what
 * the checked decoder refuses field by field.  Deltas go into locals and the
 * delta state is committed only for a good record.
 */
#define GMT_FAST_FIELDS 21u /* KERNEL: 20 fields and the 1.1 flags */
#define GMT_FAST_MARGIN 256u
/* The longest record the fast path decodes: a type byte, a one-byte length
 * and at most 127 bytes of payload (gmt_decode_hot_d leaves longer ones to
 * the checked decoder). */
#define GMT_FAST_RECORD_MAX 129u
/* Format 2.0: the time fields are read from the frame's time stream, as
 * unchecked as the rest when this many of its bytes remain (all one record
 * can take); a time past the stream's end refuses the record like a field
 * past its payload. */
#define GMT_FAST_TIME_MARGIN GMT_RECORD_TIME_MAX
_Static_assert(4u + 10u * (GMT_FAST_FIELDS + 1u) <= GMT_FAST_MARGIN, "GMT_FAST_MARGIN too small");
_Static_assert(GMT_RECORD_TIME_MAX >= 2u * 10u, "a record's two time fields fit in GMT_RECORD_TIME_MAX");

/* x86-64 with GCC-style inline assembly: the decoder has a second copy that
 * packs long varints with BMI2's pext (its callers choose it at run time:
 * px = 1 only where gmt_reader found the instruction fast). */
#if defined(__x86_64__) && defined(__GNUC__)
#define GMT_HAVE_PEXT 1
#else
#define GMT_HAVE_PEXT 0
#endif

typedef struct gmt_fres {
    uint64_t v;
    const uint8_t *p; /* after the varint; NULL when malformed */
} gmt_fres;

/* Nine or ten bytes (or any length on a big-endian host): the byte loop,
 * out of line since it is rare. */
static __attribute__((noinline, unused)) gmt_fres fget_long(const uint8_t *p)
{
    gmt_fres r = { 0, NULL };
    uint64_t x = 0;
    for (int i = 0; i < 10; i++) {
        uint8_t b = p[i];
        /* The 10th byte holds bit 63 only, as in gmt_varint_get. */
        if (i == 9 && b > 1)
            return r;
        x |= (uint64_t)(b & 0x7f) << (7 * i);
        if (!(b & 0x80)) {
            r.v = x;
            r.p = p + i + 1;
            return r;
        }
    }
    return r;
}

/* One varint at *pp, at least 10 readable bytes there (GMT_FAST_MARGIN). On a
 * malformed varint *bad is set and the cursor moves one byte, so it stays
 * within the margin. */
static inline __attribute__((always_inline)) uint64_t fget(const uint8_t **pp, int *bad, const int px)
{
    const uint8_t *p = *pp;
    if (p[0] < 0x80) {
        *pp = p + 1;
        return p[0];
    }
    if (p[1] < 0x80) {
        *pp = p + 2;
        return (uint64_t)(p[0] & 0x7f) | (uint64_t)p[1] << 7;
    }
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    /* Three to eight bytes (addresses, sizes, times): the length and the
     * value come from one 8-byte load without a loop.  The varint ends at the
     * first byte whose high bit is clear; its 7-bit groups are packed
     * together in three shift-and-mask steps.  A byte loop mispredicts its
     * exit on every field whose length varies, which most long ones do. */
    uint64_t w;
    memcpy(&w, p, 8);
    uint64_t stop = ~w & 0x8080808080808080ull;
    if (stop) {
        uint64_t x;
#if GMT_HAVE_PEXT
        if (px) {
            /* BMI2's pext gathers the 7-bit groups in one instruction
             * (gmt_cpu_fast_pext says when it is fast); inline assembly, so
             * that this file builds without -mbmi2 and the portable copy of
             * the decoder never contains it. */
            __asm__("pextq %2, %1, %0" : "=r"(x) : "r"(w), "r"((stop ^ (stop - 1)) & 0x7f7f7f7f7f7f7f7full));
        } else
#endif
        {
            x = w & (stop ^ (stop - 1)) & 0x7f7f7f7f7f7f7f7full;
            x = (x & 0x007f007f007f007full) | ((x & 0x7f007f007f007f00ull) >> 1);
            x = (x & 0x00003fff00003fffull) | ((x & 0x3fff00003fff0000ull) >> 2);
            x = (x & 0x000000000fffffffull) | ((x & 0x0fffffff00000000ull) >> 4);
        }
        *pp = p + (__builtin_ctzll(stop) >> 3) + 1;
        return x;
    }
#endif
    gmt_fres r = fget_long(p);
    if (!r.p) {
        *bad = 1;
        *pp = p + 1;
        return 0;
    }
    *pp = r.p;
    return r.v;
}

/* fget for the fields whose length varies from record to record (an
 * allocation's address and size, its time): no tests for one and two bytes,
 * whose outcome such a field makes unpredictable; one to eight bytes take the
 * 8-byte load, a branch that always goes the same way.  The same values and
 * cursor as fget (on a big-endian host it is fget). */
static inline __attribute__((always_inline)) uint64_t fgetw(const uint8_t **pp, int *bad, const int px)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    const uint8_t *p = *pp;
    uint64_t w;
    memcpy(&w, p, 8);
    uint64_t stop = ~w & 0x8080808080808080ull;
    if (__builtin_expect(stop != 0, 1)) {
        uint64_t x;
        uint64_t keep = (stop ^ (stop - 1)) & 0x7f7f7f7f7f7f7f7full;
#if GMT_HAVE_PEXT
        if (px) {
            __asm__("pextq %2, %1, %0" : "=r"(x) : "r"(w), "r"(keep));
        } else
#endif
        {
            x = w & keep;
            x = (x & 0x007f007f007f007full) | ((x & 0x7f007f007f007f00ull) >> 1);
            x = (x & 0x00003fff00003fffull) | ((x & 0x3fff00003fff0000ull) >> 2);
            x = (x & 0x000000000fffffffull) | ((x & 0x0fffffff00000000ull) >> 4);
        }
        *pp = p + (__builtin_ctzll(stop) >> 3) + 1;
        return x;
    }
#endif
    return fget(pp, bad, px);
}

static inline __attribute__((always_inline)) uint64_t fdeltaw(const uint8_t **pp, int *bad, const int px,
                                                              uint64_t last)
{
    return last + (uint64_t)gmt_unzigzag(fgetw(pp, bad, px));
}

static inline __attribute__((always_inline)) uint64_t fdelta(const uint8_t **pp, int *bad, const int px,
                                                             uint64_t last)
{
    return last + (uint64_t)gmt_unzigzag(fget(pp, bad, px));
}

/* Four one-byte varints in a row: the small fields of the _REF records
 * (a table index, a device, a stream; the deltas of correlation ids,
 * sequence numbers, range ids and steps, nearly always in -64..63) come four
 * at a time from one 4-byte load, with one test that no high bit is set
 * instead of one branch per field.  Returns 1 with the bytes in *w (byte i
 * is field i), 0 when any of them is longer: the caller then decodes them
 * one by one, so the values are the same either way.  Little-endian only
 * (GMT_FAST_QUADS). */
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define GMT_FAST_QUADS 1
#else
#define GMT_FAST_QUADS 0
#endif

static inline __attribute__((always_inline)) int fquad(const uint8_t *p, uint32_t *w)
{
    uint32_t x;
    memcpy(&x, p, 4);
    *w = x;
    return GMT_FAST_QUADS && (x & 0x80808080u) == 0;
}

/* The four bytes of fquad, unzigzagged each: byte i of the result is field
 * i's signed delta as an int8 ((v >> 1) ^ -(v & 1) on 7-bit values; the
 * multiply makes 0xff of each low bit, with no carry between bytes). */
static inline __attribute__((always_inline)) uint32_t fquad_zz(uint32_t w)
{
    return ((w >> 1) & 0x7f7f7f7fu) ^ ((w & 0x01010101u) * 0xffu);
}

/* last + the signed delta in byte i of z. */
static inline __attribute__((always_inline)) uint64_t fquad_delta(uint64_t last, uint32_t z, int i)
{
    return last + (uint64_t)(int64_t)(int8_t)(uint8_t)(z >> (8 * i));
}

static inline __attribute__((always_inline)) int fast_mem(const uint8_t *p, const uint8_t *end,
                                                          const uint8_t **tq, const uint8_t *tend, gmt_codec *c,
                                                          gmt_deltas *d, gmt_mem *m, const int px)
{
    int bad = 0;
    const uint8_t *tl = tq ? *tq : NULL;
    const uint8_t **tpp = tq ? &tl : &p;
    m->device = fget(&p, &bad, px);
    uint64_t addr = fdelta(&p, &bad, px, d->last_addr);
    m->address = addr;
    m->bytes = fget(&p, &bad, px);
    m->kind = fget(&p, &bad, px);
    m->source = fget(&p, &bad, px);
    m->flags = fget(&p, &bad, px);
    uint64_t corr = fdelta(&p, &bad, px, d->last_corr);
    m->corr = corr;
    m->stream = fget(&p, &bad, px);
    m->tid = fget(&p, &bad, px);
    uint64_t rid = fdelta(&p, &bad, px, d->last_rid);
    m->range = rid;
    uint64_t seq = fdelta(&p, &bad, px, d->last_seq);
    m->seq = seq;
    uint64_t step = fdelta(&p, &bad, px, d->last_step);
    m->step = step;
    uint64_t ts = fdelta(tpp, &bad, px, d->last_ts);
    m->ts = ts;
    if (bad || p > end || (tq && tl > tend))
        return 0;
    if (tq)
        *tq = tl;
    d->last_addr = addr;
    d->last_corr = corr;
    d->last_rid = rid;
    d->last_seq = seq;
    d->last_step = step;
    d->last_ts = ts;
    gmt_note_ctx(c, m);
    return 1;
}

/* ALLOC_REF / FREE_REF (1.2): the context from the table, then the fields
 * that change from one allocation to the next. */
static inline __attribute__((always_inline)) int fast_mem_ref(const uint8_t *p, const uint8_t *end,
                                                              const uint8_t **tq, const uint8_t *tend, gmt_codec *c,
                                                              gmt_deltas *d, gmt_mem *m, const int px)
{
    int bad = 0;
    const uint8_t *tl = tq ? *tq : NULL;
    const uint8_t **tpp = tq ? &tl : &p;
    uint64_t idx = fget(&p, &bad, px);
    uint64_t addr = fdeltaw(&p, &bad, px, d->last_addr);
    m->address = addr;
    m->bytes = fgetw(&p, &bad, px);
    uint64_t corr, rid, seq, step;
    uint32_t w;
    if (fquad(p, &w)) {
        uint32_t z = fquad_zz(w);
        corr = fquad_delta(d->last_corr, z, 0);
        rid = fquad_delta(d->last_rid, z, 1);
        seq = fquad_delta(d->last_seq, z, 2);
        step = fquad_delta(d->last_step, z, 3);
        p += 4;
    } else {
        corr = fdelta(&p, &bad, px, d->last_corr);
        rid = fdelta(&p, &bad, px, d->last_rid);
        seq = fdelta(&p, &bad, px, d->last_seq);
        step = fdelta(&p, &bad, px, d->last_step);
    }
    m->corr = corr;
    m->range = rid;
    m->seq = seq;
    m->step = step;
    uint64_t ts = fdeltaw(tpp, &bad, px, d->last_ts);
    m->ts = ts;
    if (bad || p > end || idx >= c->ctxs.n || (tq && tl > tend))
        return 0;
    if (tq)
        *tq = tl;
    gmt_ctx_put(c, idx, m);
    d->last_addr = addr;
    d->last_corr = corr;
    d->last_rid = rid;
    d->last_seq = seq;
    d->last_step = step;
    d->last_ts = ts;
    return 1;
}

static inline __attribute__((always_inline)) int fast_kernel(const uint8_t *p, const uint8_t *end,
                                                             const uint8_t **tq, const uint8_t *tend, gmt_codec *c,
                                                             gmt_deltas *d, gmt_kernel *k, const int px)
{
    int bad = 0;
    const uint8_t *tl = tq ? *tq : NULL;
    const uint8_t **tpp = tq ? &tl : &p;
    k->device = fget(&p, &bad, px);
    k->stream = fget(&p, &bad, px);
    uint64_t corr = fdelta(&p, &bad, px, d->last_corr);
    k->corr = corr;
    k->name = fget(&p, &bad, px);
    for (int i = 0; i < 3; i++)
        k->grid[i] = fget(&p, &bad, px);
    for (int i = 0; i < 3; i++)
        k->block[i] = fget(&p, &bad, px);
    k->registers = fget(&p, &bad, px);
    k->static_smem = fget(&p, &bad, px);
    k->dynamic_smem = fget(&p, &bad, px);
    k->local_mem = fget(&p, &bad, px);
    k->tid = fget(&p, &bad, px);
    uint64_t seq = fdelta(&p, &bad, px, d->last_seq);
    k->seq = seq;
    uint64_t rid = fdelta(&p, &bad, px, d->last_rid);
    k->range = rid;
    uint64_t step = fdelta(&p, &bad, px, d->last_step);
    k->step = step;
    uint64_t start = fdelta(tpp, &bad, px, d->last_gpu);
    uint64_t end_ts = start + fget(tpp, &bad, px);
    k->start = start;
    k->end = end_ts;
    /* 1.1: optional trailing flags, as in codec.c's get_kernel (absent: 0;
     * a payload that ends early is caught by the check below). */
    k->flags = p < end ? fget(&p, &bad, px) : 0;
    if (bad || p > end || (tq && tl > tend))
        return 0;
    if (tq)
        *tq = tl;
    d->last_corr = corr;
    d->last_seq = seq;
    d->last_rid = rid;
    d->last_step = step;
    d->last_gpu = end_ts;
    gmt_note_shape(c, k);
    return 1;
}

/* KERNEL_REF (1.2): the shape from the table, then the launch's own fields;
 * flags are always there (before the times, which stay last). */
static inline __attribute__((always_inline)) int fast_kernel_ref(const uint8_t *p, const uint8_t *end,
                                                                 const uint8_t **tq, const uint8_t *tend,
                                                                 gmt_codec *c, gmt_deltas *d, gmt_kernel *k,
                                                                 const int px)
{
    int bad = 0;
    const uint8_t *tl = tq ? *tq : NULL;
    const uint8_t **tpp = tq ? &tl : &p;
    uint64_t idx, corr, seq, rid, step;
    uint32_t w;
    if (fquad(p, &w)) {
        idx = w & 0xff;
        k->device = (w >> 8) & 0xff;
        k->stream = (w >> 16) & 0xff;
        corr = fquad_delta(d->last_corr, fquad_zz(w), 3);
        p += 4;
    } else {
        idx = fget(&p, &bad, px);
        k->device = fget(&p, &bad, px);
        k->stream = fget(&p, &bad, px);
        corr = fdelta(&p, &bad, px, d->last_corr);
    }
    k->corr = corr;
    k->tid = fget(&p, &bad, px);
    if (fquad(p, &w)) {
        uint32_t z = fquad_zz(w);
        seq = fquad_delta(d->last_seq, z, 0);
        rid = fquad_delta(d->last_rid, z, 1);
        step = fquad_delta(d->last_step, z, 2);
        k->flags = w >> 24;
        p += 4;
    } else {
        seq = fdelta(&p, &bad, px, d->last_seq);
        rid = fdelta(&p, &bad, px, d->last_rid);
        step = fdelta(&p, &bad, px, d->last_step);
        k->flags = fget(&p, &bad, px);
    }
    k->seq = seq;
    k->range = rid;
    k->step = step;
    uint64_t start = fdelta(tpp, &bad, px, d->last_gpu);
    uint64_t end_ts = start + fget(tpp, &bad, px);
    k->start = start;
    k->end = end_ts;
    if (bad || p > end || idx >= c->shapes.n || (tq && tl > tend))
        return 0;
    if (tq)
        *tq = tl;
    gmt_shape_put(c, idx, k);
    d->last_corr = corr;
    d->last_seq = seq;
    d->last_rid = rid;
    d->last_step = step;
    d->last_gpu = end_ts;
    return 1;
}

static inline __attribute__((always_inline)) int fast_copy(const uint8_t *p, const uint8_t *end,
                                                           const uint8_t **tq, const uint8_t *tend, gmt_deltas *d,
                                                           gmt_copy *k, const int px)
{
    int bad = 0;
    const uint8_t *tl = tq ? *tq : NULL;
    const uint8_t **tpp = tq ? &tl : &p;
    k->device = fget(&p, &bad, px);
    k->stream = fget(&p, &bad, px);
    uint64_t corr = fdelta(&p, &bad, px, d->last_corr);
    k->corr = corr;
    k->bytes = fget(&p, &bad, px);
    k->copy_kind = fget(&p, &bad, px);
    k->src_kind = fget(&p, &bad, px);
    k->dst_kind = fget(&p, &bad, px);
    k->tid = fget(&p, &bad, px);
    uint64_t step = fdelta(&p, &bad, px, d->last_step);
    k->step = step;
    uint64_t start = fdelta(tpp, &bad, px, d->last_gpu);
    uint64_t end_ts = start + fget(tpp, &bad, px);
    k->start = start;
    k->end = end_ts;
    if (bad || p > end || (tq && tl > tend))
        return 0;
    if (tq)
        *tq = tl;
    d->last_corr = corr;
    d->last_step = step;
    d->last_gpu = end_ts;
    return 1;
}

/* RANGE_BEGIN / RANGE_END, as codec.c's get_payload reads them: a BEGIN's
 * parent is a delta from its own id, and the id is what "rid" keeps; an END
 * has no parent or name (0).  NVTX ranges come in pairs around every
 * operator of a framework run: hot in real traces. */
static inline __attribute__((always_inline)) int fast_range(const uint8_t *p, const uint8_t *end,
                                                            const uint8_t **tq, const uint8_t *tend, gmt_deltas *d,
                                                            gmt_range *g, const int begin, const int px)
{
    int bad = 0;
    const uint8_t *tl = tq ? *tq : NULL;
    const uint8_t **tpp = tq ? &tl : &p;
    g->tid = fget(&p, &bad, px);
    uint64_t id = fdelta(&p, &bad, px, d->last_rid);
    uint64_t parent = 0, name = 0, kind = 0;
    if (begin) {
        parent = fdelta(&p, &bad, px, id);
        name = fget(&p, &bad, px);
    }
    uint64_t ts = fdelta(tpp, &bad, px, d->last_ts);
    if (begin && p < end) /* 2.3: the kind, when the payload goes on (after a 1.x time) */
        kind = fget(&p, &bad, px);
    g->id = id;
    g->parent = parent;
    g->name = name;
    g->kind = kind;
    g->ts = ts;
    if (bad || p > end || (tq && tl > tend))
        return 0;
    if (tq)
        *tq = tl;
    d->last_rid = id;
    d->last_ts = ts;
    return 1;
}

_Static_assert(GMT_WIRE_FREE_REF - GMT_WIRE_ALLOC_REF == GMT_REC_FREE - GMT_REC_ALLOC,
               "ALLOC_REF/FREE_REF map to ALLOC/FREE by one subtraction");

/* Returned by gmt_decode_hot for a hot record whose payload is malformed. */
#define GMT_FAST_BAD ((size_t)-1)

/* Decodes one ALLOC, FREE, KERNEL, MEMCPY, MEMSET, RANGE_BEGIN, RANGE_END,
 * ALLOC_REF, FREE_REF or KERNEL_REF record at in[0..), whose caller guarantees GMT_FAST_MARGIN
 * readable bytes.  Returns its size (type, one length byte, payload) with *r
 * filled (a _REF as the plain type it stands for) and the codec advanced; 0
 * when the record is of another type or has a payload of 128 bytes or more
 * (the caller decodes it with gmt_decode: these payloads never are that long,
 * so only a newer minor version or damage gets there); GMT_FAST_BAD when the
 * payload is malformed or a _REF index is beyond its table (the codec is
 * unchanged).  Type 0 and unknown types return 0.
 *
 * The delta state is *d, which is c->d or a copy of it that the caller
 * stores back (gmt_reader_next_hot keeps it in a local across a run of
 * records, so that it stays in registers instead of being loaded and
 * stored for every record); the tables are c's.  The record goes to *tp
 * and the one of *mem, *kern, *copy, *range its type uses (members of one union
 * in gmt_record and in gmt_io.h's gmt_hot).  px (a constant at each call
 * site) selects the pext copy of the varint decoder: only on a CPU that has
 * BMI2 and runs pext fast (see reader.c). */
static inline __attribute__((always_inline)) size_t gmt_decode_hot_d(gmt_codec *c, gmt_deltas *d, const uint8_t *in,
                                                                     gmt_type *tp, gmt_mem *mem, gmt_kernel *kern,
                                                                     gmt_copy *copy, gmt_range *range, const int px,
                                                                     const uint8_t **tq, const uint8_t *tend)
{
    uint8_t type = in[0];
    if (in[1] >= 0x80)
        return 0;
    const uint8_t *pay = in + 2, *pend = pay + in[1];
    int ok;
    /* The _REF forms are nearly every record of a trace: tested before the
     * switch, whose jump table costs more than the two compares. */
    if ((unsigned)type - GMT_WIRE_ALLOC_REF <= GMT_WIRE_FREE_REF - GMT_WIRE_ALLOC_REF) {
        ok = fast_mem_ref(pay, pend, tq, tend, c, d, mem, px);
        /* a subtraction, not a select: the two pairs are in the same order */
        *tp = (gmt_type)(type - (GMT_WIRE_ALLOC_REF - GMT_REC_ALLOC));
    } else if (type == GMT_WIRE_KERNEL_REF) {
        ok = fast_kernel_ref(pay, pend, tq, tend, c, d, kern, px);
        *tp = GMT_REC_KERNEL;
    } else {
        switch (type) {
        case GMT_REC_ALLOC:
        case GMT_REC_FREE:
            ok = fast_mem(pay, pend, tq, tend, c, d, mem, px);
            *tp = (gmt_type)type;
            break;
        case GMT_REC_KERNEL:
            ok = fast_kernel(pay, pend, tq, tend, c, d, kern, px);
            *tp = GMT_REC_KERNEL;
            break;
        case GMT_REC_MEMCPY:
        case GMT_REC_MEMSET:
            ok = fast_copy(pay, pend, tq, tend, d, copy, px);
            *tp = (gmt_type)type;
            break;
        case GMT_REC_RANGE_BEGIN:
            ok = fast_range(pay, pend, tq, tend, d, range, 1, px);
            *tp = GMT_REC_RANGE_BEGIN;
            break;
        case GMT_REC_RANGE_END:
            ok = fast_range(pay, pend, tq, tend, d, range, 0, px);
            *tp = GMT_REC_RANGE_END;
            break;
        default:
            return 0;
        }
    }
    return ok ? (size_t)(pend - in) : GMT_FAST_BAD;
}

/* gmt_decode_hot_d on the codec's own delta state, a 1.x record (times
 * inline) or, with _t, a 2.0 one (times from the codec's time source, of
 * which the caller guarantees GMT_FAST_TIME_MARGIN bytes).  Two functions,
 * so that each call site compiles the layout it decodes and nothing more. */
static inline __attribute__((always_inline)) size_t gmt_decode_hot(gmt_codec *c, const uint8_t *in, gmt_record *r)
{
    return gmt_decode_hot_d(c, &c->d, in, &r->type, &r->u.mem, &r->u.kernel, &r->u.copy, &r->u.range, 0, NULL,
                            NULL);
}

static inline __attribute__((always_inline)) size_t gmt_decode_hot_t(gmt_codec *c, const uint8_t *in, gmt_record *r)
{
    return gmt_decode_hot_d(c, &c->d, in, &r->type, &r->u.mem, &r->u.kernel, &r->u.copy, &r->u.range, 0, &c->tp,
                            c->tend);
}

/* Either layout, as the codec says (1.x, or 2.0 with a time source): 0, as
 * for a record of another type, when the time source has fewer than
 * GMT_FAST_TIME_MARGIN bytes left; the caller then takes the checked path. */
static inline __attribute__((always_inline)) size_t gmt_decode_hot_any(gmt_codec *c, const uint8_t *in, gmt_record *r)
{
    if (!c->tsep)
        return gmt_decode_hot(c, in, r);
    if ((size_t)(c->tend - c->tp) < GMT_FAST_TIME_MARGIN)
        return 0;
    return gmt_decode_hot_t(c, in, r);
}

#endif
