/*
 * The event ring: application threads hand small events (NVTX ranges and
 * marks, tags, device and VMM notices, sync requests) to the writer thread.
 *
 * A bounded multi-producer / single-consumer queue of fixed-size cells
 * (Vyukov's bounded queue: a per-cell sequence number, one CAS on the tail
 * per push). A push never blocks and never allocates: when the ring is full
 * the event is dropped and counted. Pop is for the writer thread only.
 */
#ifndef GMEMPROF_PROFILER_EVRING_H
#define GMEMPROF_PROFILER_EVRING_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

typedef enum gmp_ev_type {
    GMP_EV_NONE = 0,
    GMP_EV_RANGE_BEGIN = 1, /* a=id b=parent (0 none) c=gmt_range_kind; name */
    GMP_EV_RANGE_END = 2,   /* a=id */
    GMP_EV_MARK = 3,        /* name */
    GMP_EV_TAG = 4,         /* name (prefix already stripped) */
    GMP_EV_DEVICE = 5,      /* a=device ordinal: gmp_g.dev[a] is filled */
    GMP_EV_VMM_RESERVE = 6, /* a=base b=size; `vmm` */
    GMP_EV_VMM_ADDRFREE = 7,/* a=base b=size */
    GMP_EV_VMM_MAP = 8,     /* a=ptr b=size c=range d=seq, corr; tid, epoch of the call; `vmm` */
    GMP_EV_VMM_UNMAP = 9,   /* a=ptr b=size */
    GMP_EV_SYNC = 10,       /* a=ticket: end the frame, then acknowledge */
    GMP_EV_RESET = 11,      /* a=device: cudaDeviceReset finished */
    GMP_EV_LAUNCH = 12,     /* GMEMPROF_KERNELS=launch: one kernel launch; a=seq b=range
                             * c=stream d=device, corr, ts = launch time; `launch` */
    GMP_EV_COPY = 13,       /* GMEMPROF_KERNELS=launch: one memcpy or memset from its API
                             * call; a=bytes b=copy kind (memcpy) or value (memset)
                             * c=stream d=device, corr, ts = call time; `copy` */
    GMP_EV_BLOCK = 14,      /* a framework allocator event (profiler/sources/torch.c): a=address
                             * b=bytes c=stream d=pool; `block` */
    GMP_EV_OOM = 15,        /* a CUDA allocation failed out of memory: a=bytes asked
                             * b=driver free c=stream handle d=driver total; `oom` */
} gmp_ev_type;

/* One cell is 256 bytes: 8 for the sequence, 248 for the event. */
#define GMP_EV_NAME_MAX 192

/* What a launch event carries besides the common fields. The kernel name
 * travels once per (thread, symbolName pointer, module generation): the
 * first launch copies it (inline when it fits, else in a malloc'd copy that
 * the writer frees); later ones carry only the pointer, as a key, which the
 * writer never dereferences (docs/profiler-internals.md, "launch mode"). */
#define GMP_LAUNCH_NAME_MAX 120
typedef struct gmp_ev_launch {
    uint32_t grid[3], block[3]; /* 0: the launch API does not say */
    /* the function's resources (the driver's attributes, cached per thread) and
     * the launch's dynamic shared memory; has_attrs 0: not known */
    uint32_t regs, static_smem, dynamic_smem, local_mem, has_attrs;
    uint32_t gen;               /* module generation of the key */
    uint32_t nlen;              /* bytes in name (inline copy), 0 none */
    uint64_t key;               /* symbolName pointer value, 0: no name */
    char *heap;                 /* a name too long for `name`: the writer frees it */
    char name[GMP_LAUNCH_NAME_MAX];
} gmp_ev_launch;

/* What a copy event carries besides the common fields (gmt_mem_kind values). */
typedef struct gmp_ev_copy {
    uint8_t is_memset;
    uint8_t src_kind; /* memcpy: the source; memset: the memory set */
    uint8_t dst_kind; /* memcpy: the destination; memset: 0 */
} gmp_ev_copy;

/* What a VMM event carries besides the common fields: the time of the
 * call's ENTER (the event itself is stamped at its EXIT), from which on
 * the range covers records (0: unknown, always). */
typedef struct gmp_ev_vmm {
    uint64_t start;
} gmp_ev_vmm;

/* What a block event carries besides the common fields. */
typedef struct gmp_ev_block {
    uint64_t range;   /* innermost open range of the thread, 0 none */
    uint64_t seq;     /* kernels the thread had launched */
    uint64_t requested;
    uint64_t counter; /* the allocator's allocated bytes read at the event, 0 none (torch_bridge.h) */
    uint8_t action;   /* gmt_block_action, or GMP_BRIDGE_COUNTER */
    uint8_t flags;    /* GMT_BLKF_* */
    uint16_t device;
    uint8_t has_counter;
    uint8_t completed; /* set by the writer from the ring's mark (gmp_asm_event_added):
                        * a FREE_REQUESTED that stands for its FREE_COMPLETED too */
    uint32_t frame, stack; /* gmp_frames ids (frames.h), 0 none */
} gmp_ev_block;

/* What an out-of-memory event carries besides the common fields. */
#define GMP_OOM_API_MAX 48
typedef struct gmp_ev_oom {
    uint64_t range;   /* innermost open range of the thread, 0 none */
    uint32_t device;
    uint32_t status;  /* the CUresult */
    uint8_t has_mem;  /* b and d were read (cuMemGetInfo) */
    uint8_t api_len;
    char api[GMP_OOM_API_MAX]; /* the call's name, api_len bytes */
} gmp_ev_oom;

typedef struct gmp_ev {
    uint16_t type;
    uint16_t len;   /* bytes of name used */
    uint32_t tid;
    uint32_t epoch; /* schedule epoch when the event was made */
    uint32_t corr;
    uint64_t ts;
    uint64_t a, b, c, d;
    union {
        char name[GMP_EV_NAME_MAX];
        gmp_ev_launch launch; /* GMP_EV_LAUNCH: `len` covers the bytes of it in use */
        gmp_ev_copy copy;     /* GMP_EV_COPY: `len` = sizeof copy */
        gmp_ev_block block;   /* GMP_EV_BLOCK: `len` = sizeof block */
        gmp_ev_vmm vmm;       /* GMP_EV_VMM_*: `len` = sizeof vmm */
        gmp_ev_oom oom;       /* GMP_EV_OOM: `len` = sizeof oom */
    };
} gmp_ev;

typedef struct gmp_ring_cell {
    _Atomic uint64_t seq;
    gmp_ev ev;
} gmp_ring_cell;

typedef struct gmp_ring {
    gmp_ring_cell *cells;
    uint64_t mask;
    _Alignas(64) _Atomic uint64_t tail; /* producers */
    _Alignas(64) _Atomic uint64_t head; /* the consumer */
    _Alignas(64) _Atomic uint64_t dropped;
} gmp_ring;

/* capacity is rounded down to a power of two, at least 2. 0 or -1 (OOM). */
int gmp_ring_init(gmp_ring *r, size_t capacity);
void gmp_ring_destroy(gmp_ring *r);
size_t gmp_ring_capacity(const gmp_ring *r);
size_t gmp_ring_bytes(const gmp_ring *r);

/* Copies *ev in. 0 on success, with *pos (when not NULL) the event's
 * position in the ring's sequence; -1 when full (counted in r->dropped). */
int gmp_ring_push(gmp_ring *r, const gmp_ev *ev, uint64_t *pos);
/* The newest event, while it is published, nothing was pushed after it
 * and the writer has not taken it: its producer may read it to decide
 * whether to mark it (gmp_ring_mark). NULL otherwise; *pos its position.
 * A mark replaces a second push that would say what the event's type
 * defines (for a BLOCK free request: its free completed in the same call). */
const gmp_ev *gmp_ring_newest(gmp_ring *r, uint64_t *pos);
/* Marks the event at pos, once: 0, or -1 when the writer took it first
 * (or it was marked already). The event's bytes are not written: the mark
 * lives in the cell's sequence, so the writer never reads a cell in change. */
int gmp_ring_mark(gmp_ring *r, uint64_t pos);

/* Consumer: 0 when empty, else *out filled and 1, or GMP_RING_MARKED when
 * its producer marked it. */
#define GMP_RING_MARKED 2
int gmp_ring_pop(gmp_ring *r, gmp_ev *out);
/* Approximate number of queued events. */
size_t gmp_ring_size(const gmp_ring *r);

/* Sets ev->name from s (n bytes), cutting it to GMP_EV_NAME_MAX with a
 * trailing "..." so a cut name is visibly cut. */
void gmp_ev_set_name(gmp_ev *ev, const char *s, size_t n);

/* A FREE_COMPLETED as the bridge sees it: the block, the completing
 * thread, its launch count and the time of the call. */
typedef struct gmp_block_call {
    unsigned device;
    uint32_t tid;
    uint64_t address;
    uint64_t stream;
    uint64_t seq; /* the thread's launches so far (gmp_tls.seq) */
    uint64_t now;
} gmp_block_call;

/* 1 when req (the ring's newest event) is the free request that the
 * completion c finishes in the same allocator call: a BLOCK
 * FREE_REQUESTED of that block, by that thread, with no launch of the
 * thread in between, less than window_ns before c->now. 0 otherwise, req
 * NULL included. The launch count decides a completion that record_stream
 * delayed past a kernel whatever the timing; the window bounds the error
 * of stamping a completion at its request's time where nothing separates
 * them but time. */
int gmp_ev_block_same_call(const gmp_ev *req, const gmp_block_call *c, uint64_t window_ns);

#endif
