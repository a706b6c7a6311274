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

#include <stdint.h>
#include <string.h>

#include "gmemprof/trace_format.h"

/*
 * ALLOC, FREE, KERNEL, MEMCPY and MEMSET are nearly every record of a trace,
 * and the checked decoder above spends most of its time on a bounds check
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
_Static_assert(4u + 10u * (GMT_FAST_FIELDS + 1u) <= GMT_FAST_MARGIN, "GMT_FAST_MARGIN too small");

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
static inline __attribute__((always_inline)) uint64_t fget(const uint8_t **pp, int *bad)
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
        uint64_t x = w & (stop ^ (stop - 1)) & 0x7f7f7f7f7f7f7f7full;
        x = (x & 0x007f007f007f007full) | ((x & 0x7f007f007f007f00ull) >> 1);
        x = (x & 0x00003fff00003fffull) | ((x & 0x3fff00003fff0000ull) >> 2);
        x = (x & 0x000000000fffffffull) | ((x & 0x0fffffff00000000ull) >> 4);
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

static inline __attribute__((always_inline)) uint64_t fdelta(const uint8_t **pp, int *bad, uint64_t last)
{
    return last + (uint64_t)gmt_unzigzag(fget(pp, bad));
}

static inline __attribute__((always_inline)) int fast_mem(const uint8_t *p, const uint8_t *end, gmt_codec *c,
                                                          gmt_mem *m)
{
    int bad = 0;
    m->device = fget(&p, &bad);
    uint64_t addr = fdelta(&p, &bad, c->last_addr);
    m->address = addr;
    m->bytes = fget(&p, &bad);
    m->kind = fget(&p, &bad);
    m->source = fget(&p, &bad);
    m->flags = fget(&p, &bad);
    uint64_t corr = fdelta(&p, &bad, c->last_corr);
    m->corr = corr;
    m->stream = fget(&p, &bad);
    m->tid = fget(&p, &bad);
    uint64_t rid = fdelta(&p, &bad, c->last_rid);
    m->range = rid;
    uint64_t seq = fdelta(&p, &bad, c->last_seq);
    m->seq = seq;
    uint64_t step = fdelta(&p, &bad, c->last_step);
    m->step = step;
    uint64_t ts = fdelta(&p, &bad, c->last_ts);
    m->ts = ts;
    if (bad || p > end)
        return 0;
    c->last_addr = addr;
    c->last_corr = corr;
    c->last_rid = rid;
    c->last_seq = seq;
    c->last_step = step;
    c->last_ts = ts;
    return 1;
}

static inline __attribute__((always_inline)) int fast_kernel(const uint8_t *p, const uint8_t *end, gmt_codec *c,
                                                             gmt_kernel *k)
{
    int bad = 0;
    k->device = fget(&p, &bad);
    k->stream = fget(&p, &bad);
    uint64_t corr = fdelta(&p, &bad, c->last_corr);
    k->corr = corr;
    k->name = fget(&p, &bad);
    for (int i = 0; i < 3; i++)
        k->grid[i] = fget(&p, &bad);
    for (int i = 0; i < 3; i++)
        k->block[i] = fget(&p, &bad);
    k->registers = fget(&p, &bad);
    k->static_smem = fget(&p, &bad);
    k->dynamic_smem = fget(&p, &bad);
    k->local_mem = fget(&p, &bad);
    k->tid = fget(&p, &bad);
    uint64_t seq = fdelta(&p, &bad, c->last_seq);
    k->seq = seq;
    uint64_t rid = fdelta(&p, &bad, c->last_rid);
    k->range = rid;
    uint64_t step = fdelta(&p, &bad, c->last_step);
    k->step = step;
    uint64_t start = fdelta(&p, &bad, c->last_gpu);
    uint64_t end_ts = start + fget(&p, &bad);
    k->start = start;
    k->end = end_ts;
    /* 1.1: optional trailing flags, as in codec.c's get_kernel (absent: 0;
     * a payload that ends early is caught by the check below). */
    k->flags = p < end ? fget(&p, &bad) : 0;
    if (bad || p > end)
        return 0;
    c->last_corr = corr;
    c->last_seq = seq;
    c->last_rid = rid;
    c->last_step = step;
    c->last_gpu = end_ts;
    return 1;
}

static inline __attribute__((always_inline)) int fast_copy(const uint8_t *p, const uint8_t *end, gmt_codec *c,
                                                           gmt_copy *k)
{
    int bad = 0;
    k->device = fget(&p, &bad);
    k->stream = fget(&p, &bad);
    uint64_t corr = fdelta(&p, &bad, c->last_corr);
    k->corr = corr;
    k->bytes = fget(&p, &bad);
    k->copy_kind = fget(&p, &bad);
    k->src_kind = fget(&p, &bad);
    k->dst_kind = fget(&p, &bad);
    k->tid = fget(&p, &bad);
    uint64_t step = fdelta(&p, &bad, c->last_step);
    k->step = step;
    uint64_t start = fdelta(&p, &bad, c->last_gpu);
    uint64_t end_ts = start + fget(&p, &bad);
    k->start = start;
    k->end = end_ts;
    if (bad || p > end)
        return 0;
    c->last_corr = corr;
    c->last_step = step;
    c->last_gpu = end_ts;
    return 1;
}

/* Returned by gmt_decode_hot for a hot record whose payload is malformed. */
#define GMT_FAST_BAD ((size_t)-1)

/* Decodes one ALLOC, FREE, KERNEL, MEMCPY or MEMSET record at in[0..), whose
 * caller guarantees GMT_FAST_MARGIN readable bytes.  Returns its size (type,
 * one length byte, payload) with *r filled and the codec advanced; 0 when the
 * record is of another type or has a payload of 128 bytes or more (the caller
 * decodes it with gmt_decode: these payloads never are that long, so only a
 * newer minor version or damage gets there); GMT_FAST_BAD when the payload is
 * malformed (the codec is unchanged).  Type 0 and unknown types return 0. */
static inline __attribute__((always_inline)) size_t gmt_decode_hot(gmt_codec *c, const uint8_t *in, gmt_record *r)
{
    uint8_t type = in[0];
    if (type < GMT_REC_ALLOC || type > GMT_REC_MEMSET || in[1] >= 0x80)
        return 0;
    const uint8_t *pay = in + 2, *pend = pay + in[1];
    int ok;
    if (type <= GMT_REC_FREE)
        ok = fast_mem(pay, pend, c, &r->u.mem);
    else if (type == GMT_REC_KERNEL)
        ok = fast_kernel(pay, pend, c, &r->u.kernel);
    else
        ok = fast_copy(pay, pend, c, &r->u.copy);
    r->type = (gmt_type)type;
    return ok ? (size_t)(pend - in) : GMT_FAST_BAD;
}

#endif
