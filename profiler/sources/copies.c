/*
 * Launch mode (GMEMPROF_KERNELS=launch): MEMCPY and MEMSET records made from
 * the API calls, without CUPTI's memcpy/memset activity.
 *
 * Why: with memcpy or memset activity enabled, CUPTI adds host time to every
 * kernel launch, not only to copies (bench/ab_bench.sh on the H200: about
 * 0.7% of a GPU-bound GPT step, the largest part of what launch mode still
 * cost). Copies are few per step; launches are hundreds. So launch mode
 * reads each copy from the callback of its call, as it reads launches.
 *
 * The outermost memcpy/memset call of a thread makes one event: at ENTER
 * its parameter block is read through the table below (addresses, bytes,
 * stream, memset value); at EXIT, when the call succeeded, the memory kind
 * of each end is asked of the driver (cuPointerGetAttributes: pinned or
 * pageable host, device, managed) and the event is queued. A runtime call
 * whose parameters the table does not describe (3D copies, arrays...) is
 * read from the driver call it makes instead, when that one
 * is described; a call described by neither (batch copies) is not recorded,
 * and says so once per API.
 *
 * The record: start = end = the host time of the call (no GPU time: that
 * is what launch mode gives up), the launching thread, the CUPTI stream id
 * and device, the bytes, the copy kind derived from the two ends as CUPTI
 * derives it. A copy into a stream being captured into a CUDA graph is
 * recorded when it is captured, as a launch is (docs/user-guide.md 11.1).
 */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "copies.h"

#include "gmp_rt.h"
#include "launch.h"
#include "log.h"
#include "post.h"

/* What an API says of one end of a copy. */
enum {
    CE_PTR = 0, /* an address: ask the driver what it is */
    CE_ARRAY,   /* a CUDA array */
    CE_SYMBOL,  /* a __device__ variable named by its host symbol */
};

/* Shapes of parameter blocks. */
enum {
    CS_LINEAR = 0, /* dst, src, bytes (memset: dst, value, count x elem) */
    CS_2D,         /* dst, src (memset: value), width x height */
    CS_DESC2D,     /* dst: a const CUDA_MEMCPY2D * */
    CS_DESC3D,     /* dst: a const CUDA_MEMCPY3D * */
};

#define CF_MEMSET 0x01u
#define CF_PTSZ 0x02u     /* the _ptds/_ptsz variant: the default stream is per-thread */
#define CF_PEER_RT 0x04u  /* peer copy: device ordinals (int) at pd and ps */
#define CF_PEER_DRV 0x08u /* peer copy: contexts at pd and ps */
#define NO 0xffu          /* no such field */

/* Where the fields are, as byte offsets into the call's parameter block
 * (CUpti_CallbackData.functionParams). The blocks are the structs of
 * generated_cuda_meta.h and generated_cuda_runtime_api_meta.h, which
 * cupti.h includes: the offsets below are taken from them by offsetof, so
 * they follow the headers the library is built with. */
typedef struct copy_desc {
    uint8_t dom; /* CUPTI_CB_DOMAIN_RUNTIME_API or _DRIVER_API */
    uint16_t cbid;
    uint8_t shape, flags;
    uint8_t dst_end, src_end; /* CE_* */
    uint8_t dst, src;         /* src: the value of a memset */
    uint8_t n, h;             /* bytes, or width and height */
    uint8_t stream;
    uint8_t elem;             /* memset element bytes (1, 2, 4); 1 for copies */
    uint8_t pd, ps;           /* peer copies */
} copy_desc;

#define OF(api, f) ((uint8_t)offsetof(api##_params, f))
#define RTD CUPTI_CB_DOMAIN_RUNTIME_API
#define DRD CUPTI_CB_DOMAIN_DRIVER_API
#define ID_RT(api) RTD, CUPTI_RUNTIME_TRACE_CBID_##api
#define ID_DRV(api) DRD, CUPTI_DRIVER_TRACE_CBID_##api
/* copies: (dst, src, bytes) fields; the _S forms add the stream field */
#define CPY(id, api, fl, de, se, d, s, n) \
    {id(api), CS_LINEAR, fl, de, se, OF(api, d), OF(api, s), OF(api, n), NO, NO, 1, NO, NO}
#define CPY_S(id, api, fl, de, se, d, s, n, st) \
    {id(api), CS_LINEAR, fl, de, se, OF(api, d), OF(api, s), OF(api, n), NO, OF(api, st), 1, NO, NO}
#define CPY2(id, api, fl, st) \
    {id(api), CS_2D, fl, CE_PTR, CE_PTR, OF(api, dst), OF(api, src), OF(api, width), OF(api, height), st, 1, NO, NO}
#define PEER(id, api, fl, d, pd, s, ps, n, st) \
    {id(api), CS_LINEAR, fl, CE_PTR, CE_PTR, OF(api, d), OF(api, s), OF(api, n), NO, st, 1, OF(api, pd), OF(api, ps)}
#define DESC(api, shape, fl, st) {ID_DRV(api), shape, fl, CE_PTR, CE_PTR, OF(api, pCopy), NO, NO, NO, st, 1, NO, NO}
/* memsets: (dst, value, count) fields, or (dst, value, width, height) */
#define SET(id, api, fl, d, v, n, st, el) \
    {id(api), CS_LINEAR, CF_MEMSET | (fl), CE_PTR, CE_PTR, OF(api, d), OF(api, v), OF(api, n), NO, st, el, NO, NO}
#define SET2(id, api, fl, d, v, w, h, st, el) \
    {id(api), CS_2D, CF_MEMSET | (fl), CE_PTR, CE_PTR, OF(api, d), OF(api, v), OF(api, w), OF(api, h), st, el, NO, NO}
#define P CE_PTR
#define A CE_ARRAY
#define S CE_SYMBOL
#define PT CF_PTSZ

static const copy_desc copy_table[] = {
    /* runtime: memcpy(dst, src, count, kind[, stream]) and its relatives */
    CPY(ID_RT, cudaMemcpy_v3020, 0, P, P, dst, src, count),
    CPY(ID_RT, cudaMemcpy_ptds_v7000, PT, P, P, dst, src, count),
    CPY_S(ID_RT, cudaMemcpyAsync_v3020, 0, P, P, dst, src, count, stream),
    CPY_S(ID_RT, cudaMemcpyAsync_ptsz_v7000, PT, P, P, dst, src, count, stream),
    PEER(ID_RT, cudaMemcpyPeer_v4000, CF_PEER_RT, dst, dstDevice, src, srcDevice, count, NO),
    PEER(ID_RT, cudaMemcpyPeerAsync_v4000, CF_PEER_RT, dst, dstDevice, src, srcDevice, count,
         OF(cudaMemcpyPeerAsync_v4000, stream)),
    CPY2(ID_RT, cudaMemcpy2D_v3020, 0, NO),
    CPY2(ID_RT, cudaMemcpy2D_ptds_v7000, PT, NO),
    CPY2(ID_RT, cudaMemcpy2DAsync_v3020, 0, OF(cudaMemcpy2DAsync_v3020, stream)),
    CPY2(ID_RT, cudaMemcpy2DAsync_ptsz_v7000, PT, OF(cudaMemcpy2DAsync_ptsz_v7000, stream)),
    CPY(ID_RT, cudaMemcpyToSymbol_v3020, 0, S, P, symbol, src, count),
    CPY(ID_RT, cudaMemcpyToSymbol_ptds_v7000, PT, S, P, symbol, src, count),
    CPY_S(ID_RT, cudaMemcpyToSymbolAsync_v3020, 0, S, P, symbol, src, count, stream),
    CPY_S(ID_RT, cudaMemcpyToSymbolAsync_ptsz_v7000, PT, S, P, symbol, src, count, stream),
    CPY(ID_RT, cudaMemcpyFromSymbol_v3020, 0, P, S, dst, symbol, count),
    CPY(ID_RT, cudaMemcpyFromSymbol_ptds_v7000, PT, P, S, dst, symbol, count),
    CPY_S(ID_RT, cudaMemcpyFromSymbolAsync_v3020, 0, P, S, dst, symbol, count, stream),
    CPY_S(ID_RT, cudaMemcpyFromSymbolAsync_ptsz_v7000, PT, P, S, dst, symbol, count, stream),
    /* runtime: memset(devPtr, int value, count[, stream]); 2D (devPtr, pitch, value, width, height) */
    SET(ID_RT, cudaMemset_v3020, 0, devPtr, value, count, NO, 1),
    SET(ID_RT, cudaMemset_ptds_v7000, PT, devPtr, value, count, NO, 1),
    SET(ID_RT, cudaMemsetAsync_v3020, 0, devPtr, value, count, OF(cudaMemsetAsync_v3020, stream), 1),
    SET(ID_RT, cudaMemsetAsync_ptsz_v7000, PT, devPtr, value, count, OF(cudaMemsetAsync_ptsz_v7000, stream), 1),
    SET2(ID_RT, cudaMemset2D_v3020, 0, devPtr, value, width, height, NO, 1),
    SET2(ID_RT, cudaMemset2D_ptds_v7000, PT, devPtr, value, width, height, NO, 1),
    SET2(ID_RT, cudaMemset2DAsync_v3020, 0, devPtr, value, width, height, OF(cudaMemset2DAsync_v3020, stream), 1),
    SET2(ID_RT, cudaMemset2DAsync_ptsz_v7000, PT, devPtr, value, width, height,
         OF(cudaMemset2DAsync_ptsz_v7000, stream), 1),

    /* driver: unified addresses */
    CPY(ID_DRV, cuMemcpy, 0, P, P, dst, src, ByteCount),
    CPY(ID_DRV, cuMemcpy_ptds, PT, P, P, dst, src, ByteCount),
    CPY_S(ID_DRV, cuMemcpyAsync, 0, P, P, dst, src, ByteCount, hStream),
    CPY_S(ID_DRV, cuMemcpyAsync_ptsz, PT, P, P, dst, src, ByteCount, hStream),
    PEER(ID_DRV, cuMemcpyPeer, CF_PEER_DRV, dstDevice, dstContext, srcDevice, srcContext, ByteCount, NO),
    PEER(ID_DRV, cuMemcpyPeer_ptds, CF_PEER_DRV | PT, dstDevice, dstContext, srcDevice, srcContext, ByteCount, NO),
    PEER(ID_DRV, cuMemcpyPeerAsync, CF_PEER_DRV, dstDevice, dstContext, srcDevice, srcContext, ByteCount,
         OF(cuMemcpyPeerAsync, hStream)),
    PEER(ID_DRV, cuMemcpyPeerAsync_ptsz, CF_PEER_DRV | PT, dstDevice, dstContext, srcDevice, srcContext, ByteCount,
         OF(cuMemcpyPeerAsync_ptsz, hStream)),
    /* driver: the direction in the name */
    CPY(ID_DRV, cuMemcpyHtoD_v2, 0, P, P, dstDevice, srcHost, ByteCount),
    CPY(ID_DRV, cuMemcpyHtoD_v2_ptds, PT, P, P, dstDevice, srcHost, ByteCount),
    CPY(ID_DRV, cuMemcpyDtoH_v2, 0, P, P, dstHost, srcDevice, ByteCount),
    CPY(ID_DRV, cuMemcpyDtoH_v2_ptds, PT, P, P, dstHost, srcDevice, ByteCount),
    CPY(ID_DRV, cuMemcpyDtoD_v2, 0, P, P, dstDevice, srcDevice, ByteCount),
    CPY(ID_DRV, cuMemcpyDtoD_v2_ptds, PT, P, P, dstDevice, srcDevice, ByteCount),
    CPY_S(ID_DRV, cuMemcpyHtoDAsync_v2, 0, P, P, dstDevice, srcHost, ByteCount, hStream),
    CPY_S(ID_DRV, cuMemcpyHtoDAsync_v2_ptsz, PT, P, P, dstDevice, srcHost, ByteCount, hStream),
    CPY_S(ID_DRV, cuMemcpyDtoHAsync_v2, 0, P, P, dstHost, srcDevice, ByteCount, hStream),
    CPY_S(ID_DRV, cuMemcpyDtoHAsync_v2_ptsz, PT, P, P, dstHost, srcDevice, ByteCount, hStream),
    CPY_S(ID_DRV, cuMemcpyDtoDAsync_v2, 0, P, P, dstDevice, srcDevice, ByteCount, hStream),
    CPY_S(ID_DRV, cuMemcpyDtoDAsync_v2_ptsz, PT, P, P, dstDevice, srcDevice, ByteCount, hStream),
    /* driver: arrays */
    CPY(ID_DRV, cuMemcpyHtoA_v2, 0, A, P, dstArray, srcHost, ByteCount),
    CPY(ID_DRV, cuMemcpyHtoA_v2_ptds, PT, A, P, dstArray, srcHost, ByteCount),
    CPY_S(ID_DRV, cuMemcpyHtoAAsync_v2, 0, A, P, dstArray, srcHost, ByteCount, hStream),
    CPY_S(ID_DRV, cuMemcpyHtoAAsync_v2_ptsz, PT, A, P, dstArray, srcHost, ByteCount, hStream),
    CPY(ID_DRV, cuMemcpyDtoA_v2, 0, A, P, dstArray, srcDevice, ByteCount),
    CPY(ID_DRV, cuMemcpyDtoA_v2_ptds, PT, A, P, dstArray, srcDevice, ByteCount),
    CPY(ID_DRV, cuMemcpyAtoH_v2, 0, P, A, dstHost, srcArray, ByteCount),
    CPY(ID_DRV, cuMemcpyAtoH_v2_ptds, PT, P, A, dstHost, srcArray, ByteCount),
    CPY_S(ID_DRV, cuMemcpyAtoHAsync_v2, 0, P, A, dstHost, srcArray, ByteCount, hStream),
    CPY_S(ID_DRV, cuMemcpyAtoHAsync_v2_ptsz, PT, P, A, dstHost, srcArray, ByteCount, hStream),
    CPY(ID_DRV, cuMemcpyAtoD_v2, 0, P, A, dstDevice, srcArray, ByteCount),
    CPY(ID_DRV, cuMemcpyAtoD_v2_ptds, PT, P, A, dstDevice, srcArray, ByteCount),
    CPY(ID_DRV, cuMemcpyAtoA_v2, 0, A, A, dstArray, srcArray, ByteCount),
    CPY(ID_DRV, cuMemcpyAtoA_v2_ptds, PT, A, A, dstArray, srcArray, ByteCount),
    /* driver: descriptors */
    DESC(cuMemcpy2D_v2, CS_DESC2D, 0, NO),
    DESC(cuMemcpy2D_v2_ptds, CS_DESC2D, PT, NO),
    DESC(cuMemcpy2DUnaligned_v2, CS_DESC2D, 0, NO),
    DESC(cuMemcpy2DUnaligned_v2_ptds, CS_DESC2D, PT, NO),
    DESC(cuMemcpy2DAsync_v2, CS_DESC2D, 0, OF(cuMemcpy2DAsync_v2, hStream)),
    DESC(cuMemcpy2DAsync_v2_ptsz, CS_DESC2D, PT, OF(cuMemcpy2DAsync_v2_ptsz, hStream)),
    DESC(cuMemcpy3D_v2, CS_DESC3D, 0, NO),
    DESC(cuMemcpy3D_v2_ptds, CS_DESC3D, PT, NO),
    DESC(cuMemcpy3DAsync_v2, CS_DESC3D, 0, OF(cuMemcpy3DAsync_v2, hStream)),
    DESC(cuMemcpy3DAsync_v2_ptsz, CS_DESC3D, PT, OF(cuMemcpy3DAsync_v2_ptsz, hStream)),
    /* driver: memsets. The synchronous ones without _v2 take 32-bit
     * addresses (CUDA 3.x): not read. */
    SET(ID_DRV, cuMemsetD8_v2, 0, dstDevice, uc, N, NO, 1),
    SET(ID_DRV, cuMemsetD8_v2_ptds, PT, dstDevice, uc, N, NO, 1),
    SET(ID_DRV, cuMemsetD16_v2, 0, dstDevice, us, N, NO, 2),
    SET(ID_DRV, cuMemsetD16_v2_ptds, PT, dstDevice, us, N, NO, 2),
    SET(ID_DRV, cuMemsetD32_v2, 0, dstDevice, ui, N, NO, 4),
    SET(ID_DRV, cuMemsetD32_v2_ptds, PT, dstDevice, ui, N, NO, 4),
    SET(ID_DRV, cuMemsetD8Async, 0, dstDevice, uc, N, OF(cuMemsetD8Async, hStream), 1),
    SET(ID_DRV, cuMemsetD8Async_ptsz, PT, dstDevice, uc, N, OF(cuMemsetD8Async_ptsz, hStream), 1),
    SET(ID_DRV, cuMemsetD16Async, 0, dstDevice, us, N, OF(cuMemsetD16Async, hStream), 2),
    SET(ID_DRV, cuMemsetD16Async_ptsz, PT, dstDevice, us, N, OF(cuMemsetD16Async_ptsz, hStream), 2),
    SET(ID_DRV, cuMemsetD32Async, 0, dstDevice, ui, N, OF(cuMemsetD32Async, hStream), 4),
    SET(ID_DRV, cuMemsetD32Async_ptsz, PT, dstDevice, ui, N, OF(cuMemsetD32Async_ptsz, hStream), 4),
    SET2(ID_DRV, cuMemsetD2D8_v2, 0, dstDevice, uc, Width, Height, NO, 1),
    SET2(ID_DRV, cuMemsetD2D8_v2_ptds, PT, dstDevice, uc, Width, Height, NO, 1),
    SET2(ID_DRV, cuMemsetD2D16_v2, 0, dstDevice, us, Width, Height, NO, 2),
    SET2(ID_DRV, cuMemsetD2D16_v2_ptds, PT, dstDevice, us, Width, Height, NO, 2),
    SET2(ID_DRV, cuMemsetD2D32_v2, 0, dstDevice, ui, Width, Height, NO, 4),
    SET2(ID_DRV, cuMemsetD2D32_v2_ptds, PT, dstDevice, ui, Width, Height, NO, 4),
    SET2(ID_DRV, cuMemsetD2D8Async, 0, dstDevice, uc, Width, Height, OF(cuMemsetD2D8Async, hStream), 1),
    SET2(ID_DRV, cuMemsetD2D8Async_ptsz, PT, dstDevice, uc, Width, Height, OF(cuMemsetD2D8Async_ptsz, hStream), 1),
    SET2(ID_DRV, cuMemsetD2D16Async, 0, dstDevice, us, Width, Height, OF(cuMemsetD2D16Async, hStream), 2),
    SET2(ID_DRV, cuMemsetD2D16Async_ptsz, PT, dstDevice, us, Width, Height, OF(cuMemsetD2D16Async_ptsz, hStream),
         2),
    SET2(ID_DRV, cuMemsetD2D32Async, 0, dstDevice, ui, Width, Height, OF(cuMemsetD2D32Async, hStream), 4),
    SET2(ID_DRV, cuMemsetD2D32Async_ptsz, PT, dstDevice, ui, Width, Height, OF(cuMemsetD2D32Async_ptsz, hStream),
         4),
};

#undef OF
#undef RTD
#undef DRD
#undef ID_RT
#undef ID_DRV
#undef CPY
#undef CPY_S
#undef CPY2
#undef PEER
#undef DESC
#undef SET
#undef SET2
#undef P
#undef A
#undef S
#undef PT

/* A field of a block: w bytes at offset off, zero-extended (an int or a
 * char field is read from its own bytes: the low ones). */
_Static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "fields are read as little-endian words");
static uint64_t field(const void *p, uint8_t off, unsigned w)
{
    uint64_t v = 0;
    memcpy(&v, (const char *)p + off, w);
    return v;
}
static uint64_t word(const void *p, uint8_t off) { return field(p, off, 8); }

/* callback id -> 1 + index in copy_table (0: not described) */
static uint8_t desc_rt[CUPTI_RUNTIME_TRACE_CBID_SIZE];
static uint8_t desc_drv[CUPTI_DRIVER_TRACE_CBID_SIZE];
_Static_assert(sizeof copy_table / sizeof copy_table[0] < 255, "copy_table indices fit in a byte");
/* APIs whose copies were not recorded, said once each (bit per id). */
static _Atomic uint8_t said_rt[CUPTI_RUNTIME_TRACE_CBID_SIZE / 8 + 1];
static _Atomic uint8_t said_drv[CUPTI_DRIVER_TRACE_CBID_SIZE / 8 + 1];

void gmp_copy_init(void)
{
    memset(desc_rt, 0, sizeof desc_rt);
    memset(desc_drv, 0, sizeof desc_drv);
    for (size_t i = 0; i < sizeof said_rt; i++)
        atomic_store(&said_rt[i], 0);
    for (size_t i = 0; i < sizeof said_drv; i++)
        atomic_store(&said_drv[i], 0);
    for (size_t i = 0; i < sizeof copy_table / sizeof copy_table[0]; i++) {
        const copy_desc *d = &copy_table[i];
        if (d->dom == CUPTI_CB_DOMAIN_RUNTIME_API && d->cbid < CUPTI_RUNTIME_TRACE_CBID_SIZE)
            desc_rt[d->cbid] = (uint8_t)(i + 1);
        else if (d->dom == CUPTI_CB_DOMAIN_DRIVER_API && d->cbid < CUPTI_DRIVER_TRACE_CBID_SIZE)
            desc_drv[d->cbid] = (uint8_t)(i + 1);
    }
}

static const copy_desc *desc_of(CUpti_CallbackDomain dom, CUpti_CallbackId cbid)
{
    unsigned k = 0;
    if (dom == CUPTI_CB_DOMAIN_RUNTIME_API && cbid < CUPTI_RUNTIME_TRACE_CBID_SIZE)
        k = desc_rt[cbid];
    else if (dom == CUPTI_CB_DOMAIN_DRIVER_API && cbid < CUPTI_DRIVER_TRACE_CBID_SIZE)
        k = desc_drv[cbid];
    return k ? &copy_table[k - 1] : NULL;
}

/* One end of a CUDA_MEMCPY2D/3D: its memory type says which field holds it. */
static void desc_end(CUmemorytype type, const void *host, CUdeviceptr dev, uint8_t *end, uint64_t *addr)
{
    *end = CE_PTR;
    switch (type) {
    case CU_MEMORYTYPE_HOST:
        *addr = (uint64_t)(uintptr_t)host;
        break;
    case CU_MEMORYTYPE_ARRAY:
        *end = CE_ARRAY;
        *addr = 0;
        break;
    default: /* DEVICE, UNIFIED */
        *addr = (uint64_t)dev;
        break;
    }
}

/* Reads the call's parameter block into t->cp; 0 when it is not described. */
static int copy_read(gmp_tls *t, CUpti_CallbackDomain dom, CUpti_CallbackId cbid, const CUpti_CallbackData *cb)
{
    const copy_desc *d = desc_of(dom, cbid);
    const void *p = cb->functionParams;
    if (!d || !p)
        return 0;
    gmp_copy_pend *c = &t->cp;
    c->is_memset = (d->flags & CF_MEMSET) != 0;
    c->ptsz = (d->flags & CF_PTSZ) != 0;
    c->dst_end = d->dst_end;
    c->src_end = c->is_memset ? CE_PTR : d->src_end;
    c->dst = d->dst_end == CE_PTR ? word(p, d->dst) : 0;
    c->src = 0;
    c->value = 0;
    c->peer = 0;
    c->stream = d->stream != NO ? (CUstream)(uintptr_t)word(p, d->stream) : NULL;
    switch (d->shape) {
    case CS_LINEAR:
    case CS_2D:
        c->bytes = word(p, d->n) * (d->h != NO ? word(p, d->h) : 1) * d->elem;
        if (c->is_memset)
            /* an int (runtime) or the element (driver: uc, us, ui) */
            c->value = field(p, d->src, dom == CUPTI_CB_DOMAIN_RUNTIME_API ? sizeof(int) : d->elem);
        else if (d->src_end == CE_PTR)
            c->src = word(p, d->src);
        if (d->flags & CF_PEER_RT)
            c->peer = field(p, d->pd, sizeof(int)) != field(p, d->ps, sizeof(int));
        else if (d->flags & CF_PEER_DRV)
            c->peer = word(p, d->pd) != word(p, d->ps);
        break;
    case CS_DESC2D: {
        const CUDA_MEMCPY2D *m = (const CUDA_MEMCPY2D *)(uintptr_t)word(p, d->dst);
        if (!m)
            return 0;
        c->bytes = (uint64_t)m->WidthInBytes * m->Height;
        desc_end(m->srcMemoryType, m->srcHost, m->srcDevice, &c->src_end, &c->src);
        desc_end(m->dstMemoryType, m->dstHost, m->dstDevice, &c->dst_end, &c->dst);
        break;
    }
    case CS_DESC3D: {
        const CUDA_MEMCPY3D *m = (const CUDA_MEMCPY3D *)(uintptr_t)word(p, d->dst);
        if (!m)
            return 0;
        c->bytes = (uint64_t)m->WidthInBytes * m->Height * (m->Depth ? m->Depth : 1);
        desc_end(m->srcMemoryType, m->srcHost, m->srcDevice, &c->src_end, &c->src);
        desc_end(m->dstMemoryType, m->dstHost, m->dstDevice, &c->dst_end, &c->dst);
        break;
    }
    default:
        return 0;
    }
    c->corr = cb->correlationId;
    c->ctx = cb->context;
    c->state = GMP_CP_READ;
    return 1;
}

void gmp_copy_begin(gmp_tls *t, CUpti_CallbackDomain dom, CUpti_CallbackId cbid, const CUpti_CallbackData *cb)
{
    gmp_copy_pend *c = &t->cp;
    c->state = GMP_CP_UNREAD;
    c->outer_corr = cb->correlationId;
    c->dom = (uint8_t)dom;
    c->cbid = cbid;
    c->ts = gmp_now();
    copy_read(t, dom, cbid, cb);
}

void gmp_copy_nested(gmp_tls *t, CUpti_CallbackId cbid, const CUpti_CallbackData *cb)
{
    if (t->cp.state == GMP_CP_UNREAD)
        copy_read(t, CUPTI_CB_DOMAIN_DRIVER_API, cbid, cb);
}

/* The memory kind of an address, from the driver (gmt_mem_kind). */
static uint8_t ptr_kind(gmp_tls *t, uint64_t addr, int *ordinal)
{
    *ordinal = -1;
    if (!gmp_g.api.PointerGetAttributes)
        return GMT_MEMKIND_UNKNOWN;
    unsigned type = 0, managed = 0;
    int ord = -1;
    CUpointer_attribute at[3] = {CU_POINTER_ATTRIBUTE_MEMORY_TYPE, CU_POINTER_ATTRIBUTE_IS_MANAGED,
                                 CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL};
    void *data[3] = {&type, &managed, &ord};
    t->internal = 1; /* CUPTI may report the call: not the program's */
    CUresult r = gmp_g.api.PointerGetAttributes(3, at, data, (CUdeviceptr)addr);
    t->internal = 0;
    if (r != CUDA_SUCCESS)
        return GMT_MEMKIND_UNKNOWN;
    *ordinal = ord;
    if (managed)
        return GMT_MEMKIND_MANAGED;
    switch (type) {
    case CU_MEMORYTYPE_HOST:
        return GMT_MEMKIND_PINNED;
    case CU_MEMORYTYPE_DEVICE:
        return GMT_MEMKIND_DEVICE;
    case CU_MEMORYTYPE_ARRAY:
        return GMT_MEMKIND_ARRAY;
    default:
        /* not memory the driver knows of: ordinary host memory (the driver
         * answers so, with success, for any address it did not hand out) */
        return GMT_MEMKIND_PAGEABLE;
    }
}

static uint8_t end_kind(gmp_tls *t, uint8_t end, uint64_t addr, int *ordinal)
{
    *ordinal = -1;
    switch (end) {
    case CE_ARRAY:
        return GMT_MEMKIND_ARRAY;
    case CE_SYMBOL:
        return GMT_MEMKIND_DEVICE;
    default:
        return ptr_kind(t, addr, ordinal);
    }
}

static int on_host(uint8_t k) { return k == GMT_MEMKIND_PAGEABLE || k == GMT_MEMKIND_PINNED; }
static int on_device(uint8_t k)
{
    return k == GMT_MEMKIND_DEVICE || k == GMT_MEMKIND_MANAGED || k == GMT_MEMKIND_DEVICE_STATIC ||
           k == GMT_MEMKIND_MANAGED_STATIC;
}

/* CUPTI's copy kind from the two ends (managed memory counts as device
 * memory: the driver decides at run time where its pages are). */
static uint64_t copy_kind(uint8_t src, uint8_t dst, int peer)
{
    if (src == GMT_MEMKIND_ARRAY || dst == GMT_MEMKIND_ARRAY)
        return GMT_COPY_OTHER;
    if (on_host(src) && on_device(dst))
        return GMT_COPY_HTOD;
    if (on_device(src) && on_host(dst))
        return GMT_COPY_DTOH;
    if (on_device(src) && on_device(dst))
        return peer ? GMT_COPY_PTOP : GMT_COPY_DTOD;
    if (on_host(src) && on_host(dst))
        return GMT_COPY_HTOH;
    return GMT_COPY_UNKNOWN;
}

static void say_unread(const gmp_copy_pend *c)
{
    _Atomic uint8_t *bits = c->dom == CUPTI_CB_DOMAIN_RUNTIME_API ? said_rt : said_drv;
    size_t n = c->dom == CUPTI_CB_DOMAIN_RUNTIME_API ? sizeof said_rt : sizeof said_drv;
    if (c->cbid / 8 >= n)
        return;
    uint8_t bit = (uint8_t)(1u << (c->cbid & 7));
    if (atomic_fetch_or(&bits[c->cbid / 8], bit) & bit)
        return;
    const char *name = NULL;
    if (!gmp_g.api.GetCallbackName ||
        gmp_g.api.GetCallbackName((CUpti_CallbackDomain)c->dom, c->cbid, &name) != CUPTI_SUCCESS || !name)
        name = "?";
    gmp_log_info("launch mode: copies made through %s (callback id %u) are not recorded; "
                 "GMEMPROF_KERNELS=gpu (--kernels gpu) records them",
                 name, (unsigned)c->cbid);
}

void gmp_copy_end(gmp_tls *t, const CUpti_CallbackData *cb)
{
    gmp_copy_pend *c = &t->cp;
    int state = c->state;
    c->state = GMP_CP_NONE;
    if (cb->correlationId != c->outer_corr)
        return; /* an EXIT whose ENTER we did not hear (callbacks switched on in between) */
    if (cb->functionReturnValue && *(const int *)cb->functionReturnValue != 0)
        return; /* the call failed: nothing was copied */
    if (state != GMP_CP_READ) {
        say_unread(c);
        return;
    }
    gmp_ev ev;
    memset(&ev, 0, offsetof(gmp_ev, name) + sizeof ev.copy);
    int dord = -1, sord = -1;
    uint8_t dk = end_kind(t, c->dst_end, c->dst, &dord);
    ev.type = GMP_EV_COPY;
    ev.tid = gmp_tid(t);
    ev.epoch = t->cur_epoch;
    ev.corr = c->corr;
    ev.ts = c->ts;
    ev.a = c->bytes;
    if (c->is_memset) {
        ev.b = c->value;
        ev.copy.src_kind = dk;
    } else {
        uint8_t sk = end_kind(t, c->src_end, c->src, &sord);
        int peer = c->peer || (dord >= 0 && sord >= 0 && dord != sord);
        ev.b = copy_kind(sk, dk, peer);
        ev.copy.src_kind = sk;
        ev.copy.dst_kind = dk;
    }
    ev.copy.is_memset = c->is_memset;
    /* the context may have been made by the call itself (a runtime's first call) */
    CUcontext ctx = cb->context ? cb->context : c->ctx;
    ev.c = gmp_launch_stream(t, ctx, c->stream, c->ptsz);
    ev.d = gmp_launch_device(t, ctx);
    ev.len = (uint16_t)sizeof ev.copy;
    gmp_post_ready(&ev); /* a drop is counted by the ring */
}
