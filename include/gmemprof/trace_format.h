/*
 * gmemprof trace format — the one definition shared by the profiler (writer)
 * and the analyzer (reader).  docs/trace-format.md describes it byte for byte.
 *
 * File  = one or more standard zstd frames (zstd -d decodes the file).
 * Stream (the concatenated decompressed bytes):
 *     preamble: 8 bytes magic "GMEMPROF", u16le major, u16le minor
 *     records : u8 type, varint payload length, payload
 * Format 2.0: every frame's first record (after the preamble in the first
 * frame) is a TIMES record (type 22), whose payload holds the time fields
 * of all the frame's records in record order; the records' payloads leave
 * them out.  Format 1.x (still read) kept each record's times at the end of
 * its own payload.
 * Records never straddle a zstd frame, and the codec state (gmt_codec: the
 * delta state -- last time, last GPU end, last address, last correlation id,
 * last launch sequence, last range id, last step -- and, since 1.2, the
 * frame's tables of kernel shapes and allocation contexts) is reset at the
 * start of every frame, so each frame decodes on its own given the strings
 * before it.
 *
 * Interned contexts (1.2): every plain KERNEL of a frame adds its "shape"
 * (name, grid, block, registers, shared and local memory) to the frame's
 * shape table unless the table holds it already or is full
 * (GMT_TAB_CAP entries); every plain ALLOC or FREE adds its "context"
 * (device, kind, source, flags, stream, tid) to the frame's context table
 * likewise.  KERNEL_REF, ALLOC_REF and FREE_REF records name a table entry
 * by its index instead of carrying those fields.  The encoder writes the
 * _REF form whenever the table holds the record's shape or context; the
 * decoder returns a _REF record as the plain KERNEL, ALLOC or FREE it
 * stands for, so no consumer ever sees the _REF types.  Payloads:
 *   KERNEL_REF (19): shape index, device, stream, corr ("corr"), tid,
 *                    seq ("seq"), range ("rid"), step ("step"), flags,
 *                    start ("gts"), "dur"
 *   ALLOC_REF (20), FREE_REF (21): context index, address ("addr"), bytes,
 *                    corr ("corr"), range ("rid"), seq ("seq"), step
 *                    ("step"), ts ("ts")
 * An index at or beyond its table's count is corruption.
 *
 * Payload order: the struct's fields in order, EXCEPT the time fields
 * ("ts", or "gts" + "dur"): 2.0 writes them, in that order, to the frame's
 * TIMES record (1.x wrote them last in the payload).  The jittery low bits
 * of the times are what no compressor predicts; apart from the rest, they
 * cost zstd literals only, and the records become runs that zstd copies
 * many at a time (13% smaller and a third of the decompression work on
 * training-like traces, docs/trace-format.md).
 *
 * Payload fields are, unless said otherwise, unsigned LEB128 varints.
 *   "ts"   : host-side time: zigzag varint of (value - last_ts), then last_ts = value
 *   "gts"  : GPU activity start (kernel, memcpy, memset): zigzag varint of
 *            (start - last_gpu); then "dur", a plain varint of (end - start);
 *            then last_gpu = end
 *   "addr" : zigzag varint of (value - last_addr), then last_addr = value
 *   "corr" : zigzag varint of (value - last_corr), then last_corr = value
 *   "seq"  : zigzag varint of (value - last_seq),  then last_seq  = value
 *   "rid"  : zigzag varint of (value - last_rid),  then last_rid  = value
 *            (RANGE_BEGIN: after its parent, last_rid is set back to its id)
 *   "step" : zigzag varint of (value - last_step), then last_step = value
 *   "sv"   : zigzag varint (signed value)
 *   "bytes": varint length, then that many raw bytes (not NUL terminated)
 * A reader of the same major version ignores payload bytes after the fields
 * it knows (a newer minor version may append fields) and skips record types
 * it does not know; a record whose payload is shorter than its 1.0 fields
 * is an error.  So that this holds in 2.x, the TIMES record holds the time
 * fields of 2.0's record types only: a field or type added by a later minor
 * version keeps any time it has in its own payload. A field appended in a later minor version (KERNEL flags, 1.1)
 * reads as 0 when the payload ends before it, and a writer omits it when 0.
 * Type 0 is reserved (never written; zeroed bytes look so).
 */
#ifndef GMEMPROF_TRACE_FORMAT_H
#define GMEMPROF_TRACE_FORMAT_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define GMT_MAGIC "GMEMPROF"
#define GMT_MAGIC_LEN 8
#define GMT_PREAMBLE_LEN 12
#define GMT_VERSION_MAJOR 2
#define GMT_VERSION_MINOR 3

/* Largest payload a record may have; a larger length is corruption. */
#define GMT_MAX_PAYLOAD (1u << 20)
/* Format 2.0: the most bytes of a frame's time stream one record takes (a
 * record has at most two time fields, a varint at most 10 bytes). */
#define GMT_RECORD_TIME_MAX 20u
/* Largest decompressed frame a reader accepts (writer stays far below). */
#define GMT_MAX_FRAME_CONTENT (64u << 20)
/* Largest string (names, command line) carried in a record. */
#define GMT_MAX_STRING 65535u
/* Devices carried in one TAG record. */
#define GMT_MAX_TAG_DEVICES 64u

typedef enum gmt_type {
    GMT_REC_HEADER = 1,
    GMT_REC_DEVICE = 2,
    GMT_REC_STRING = 3,
    GMT_REC_ALLOC = 4,
    GMT_REC_FREE = 5,
    GMT_REC_KERNEL = 6,
    GMT_REC_MEMCPY = 7,
    GMT_REC_MEMSET = 8,
    GMT_REC_RANGE_BEGIN = 9,
    GMT_REC_RANGE_END = 10,
    GMT_REC_MARK = 11,
    GMT_REC_TAG = 12,
    GMT_REC_STEP = 13,
    GMT_REC_WINDOW_BEGIN = 14,
    GMT_REC_WINDOW_END = 15,
    GMT_REC_MEMSAMPLE = 16,
    GMT_REC_STATS = 17,
    GMT_REC_TRAILER = 18,
    GMT_REC_TYPE_MAX_ = 19, /* one past format 2.0's types, 1..18 */
    /* Format 2.1, after the stream-only types: one event of a framework's
     * own allocator (PyTorch's caching allocator, through the bridge).  Its
     * time is in its own payload (the 2.x rule), and it has a delta state of
     * its own, so a 2.0 reader that skips it keeps its place. */
    GMT_REC_BLOCK = 23,
    /* Format 2.2, the flight recorder (GMEMPROF_SCHEDULE=on-oom): a failure
     * and, after it, the allocations live at that moment.  Both keep their
     * times in their own payloads and use no delta state, so a 2.0 or 2.1
     * reader that skips them keeps its place and its live set. */
    GMT_REC_OOM = 24,
    GMT_REC_LIVE = 25
} gmt_type;

/* 1 for every type a decoded gmt_record can have. */
static inline int gmt_type_is_record(unsigned t)
{
    return (t >= GMT_REC_HEADER && t < GMT_REC_TYPE_MAX_) || t == GMT_REC_BLOCK || t == GMT_REC_OOM ||
           t == GMT_REC_LIVE;
}

/* Record types of the byte stream only: the decoder returns the _REF forms
 * (format 1.2) as GMT_REC_KERNEL, GMT_REC_ALLOC and GMT_REC_FREE, and the
 * encoder chooses them by itself; the reader takes each frame's TIMES record
 * (2.0) for the frame's time fields, and the writer puts it there.  A
 * gmt_record never has these types. */
enum {
    GMT_WIRE_KERNEL_REF = 19, /* a KERNEL whose shape is in the frame's shape table */
    GMT_WIRE_ALLOC_REF = 20,  /* an ALLOC whose context is in the frame's context table */
    GMT_WIRE_FREE_REF = 21,   /* a FREE, likewise */
    GMT_WIRE_TIMES = 22,      /* (2.0) first in every frame: the time fields of the frame's records */
    GMT_WIRE_TYPE_MAX_ = 26   /* one past the last type this version knows (GMT_REC_LIVE) */
};

/* Where device memory was, as CUPTI reports it (CUpti_ActivityMemoryKind). */
typedef enum gmt_mem_kind {
    GMT_MEMKIND_UNKNOWN = 0,
    GMT_MEMKIND_PAGEABLE = 1,
    GMT_MEMKIND_PINNED = 2,
    GMT_MEMKIND_DEVICE = 3,
    GMT_MEMKIND_ARRAY = 4,
    GMT_MEMKIND_MANAGED = 5,
    GMT_MEMKIND_DEVICE_STATIC = 6,
    GMT_MEMKIND_MANAGED_STATIC = 7,
    GMT_MEMKIND_COUNT_
} gmt_mem_kind;

/* Which API family made the allocation: the allocator mode follows from it. */
typedef enum gmt_mem_source {
    GMT_SRC_UNKNOWN = 0,
    GMT_SRC_MALLOC = 1,      /* cudaMalloc / cuMemAlloc: plain device memory */
    GMT_SRC_ASYNC_POOL = 2,  /* cudaMallocAsync / cuMemAllocFromPoolAsync */
    GMT_SRC_VMM = 3,         /* cuMemCreate + cuMemMap (expandable segments) */
    GMT_SRC_MANAGED = 4,     /* cudaMallocManaged */
    GMT_SRC_PINNED_HOST = 5, /* cudaMallocHost / cudaHostAlloc */
    GMT_SRC_PITCHED = 6,     /* cudaMallocPitch / arrays */
    GMT_SRC_STATIC = 7,      /* module globals (__device__ variables) */
    GMT_SRC_FRAMEWORK = 8,   /* a framework allocator's block (a BLOCK record as the analyzer
                              * replays it; never in an ALLOC record) */
    GMT_SRC_COUNT_
} gmt_mem_source;

/* ALLOC/FREE flags */
#define GMT_MEMF_BASELINE 0x1u  /* live at window begin, allocated earlier */
#define GMT_MEMF_NO_THREAD 0x2u /* host thread unknown (no API callback seen) */

typedef enum gmt_phase {
    GMT_PHASE_NONE = 0, /* skip_first or between repeats: nothing recorded */
    GMT_PHASE_WAIT = 1,
    GMT_PHASE_WARMUP = 2,
    GMT_PHASE_ACTIVE = 3,
    GMT_PHASE_DONE = 4, /* all repeats finished */
    GMT_PHASE_COUNT_
} gmt_phase;

typedef enum gmt_step_source {
    GMT_STEPSRC_NONE = 0,     /* whole run, no steps */
    GMT_STEPSRC_API = 1,      /* gmemprof_step() */
    GMT_STEPSRC_NVTX = 2,     /* NVTX mark or range matching the step marker */
    GMT_STEPSRC_CAPTURE = 3,  /* cudaProfilerStart/Stop */
    GMT_STEPSRC_TIME = 4,     /* time-based schedule (delay,duration) */
    GMT_STEPSRC_OPTIMIZER = 5, /* the end of an optimizer step after a backward pass (PyTorch bridge) */
    GMT_STEPSRC_COUNT_
} gmt_step_source;

typedef enum gmt_window_end_reason {
    GMT_WEND_SCHEDULE = 0, /* the active phase ended */
    GMT_WEND_EXIT = 1,     /* process exit inside the window */
    GMT_WEND_SIGNAL = 2,   /* SIGTERM/SIGINT inside the window */
    GMT_WEND_RESET = 3,    /* cudaDeviceReset */
    GMT_WEND_ERROR = 4,    /* profiler turned itself off */
    GMT_WEND_FAILURE = 5,  /* (2.2) a flight recorder's dump: the window ends at its OOM record */
    GMT_WEND_COUNT_
} gmt_window_end_reason;

typedef enum gmt_copy_kind {
    GMT_COPY_UNKNOWN = 0,
    GMT_COPY_HTOD = 1,
    GMT_COPY_DTOH = 2,
    GMT_COPY_DTOD = 3,
    GMT_COPY_HTOH = 4,
    GMT_COPY_PTOP = 5,
    GMT_COPY_OTHER = 6,
    GMT_COPY_COUNT_
} gmt_copy_kind;

/* TRAILER status bits */
#define GMT_TRAILER_CLEAN 0x0u
#define GMT_TRAILER_WRITE_ERRORS 0x1u /* some frames could not be written */
#define GMT_TRAILER_DISABLED 0x2u     /* the profiler turned itself off */

/* A borrowed byte string: points into the reader's frame buffer (valid until
 * the next gmt_reader_next call) or into the caller's memory when writing. */
typedef struct gmt_bytes {
    const char *ptr;
    uint32_t len;
} gmt_bytes;

/* HEADER: first record of a trace. Field order is the payload order. */
typedef struct gmt_header {
    uint64_t pid;
    uint64_t ppid;
    uint64_t start_unix_ns; /* wall clock at profiler start */
    uint64_t start_ts;      /* the trace clock (CUPTI timestamp, ns) at start */
    int64_t rank;           /* sv; -1 when RANK/LOCAL_RANK unset */
    int64_t local_rank;     /* sv; -1 when unset */
    int64_t world_size;     /* sv; -1 when unset */
    uint64_t cupti_version;
    uint64_t driver_version;
    uint64_t flags;         /* reserved, 0 */
    gmt_bytes host;
    gmt_bytes cmdline;      /* argv joined by single spaces */
    gmt_bytes config;       /* the effective settings, "key=value;..." */
    gmt_bytes profiler_version;
} gmt_header;

/* DEVICE: one per CUDA device the profiler saw. */
typedef struct gmt_device {
    uint64_t device;        /* CUDA device ordinal */
    uint64_t total_mem;     /* bytes */
    uint64_t sm_count;
    uint64_t cc_major;
    uint64_t cc_minor;
    uint8_t uuid[16];       /* raw 16 bytes in the payload */
    gmt_bytes name;
} gmt_device;

/* STRING: interns a name; ids start at 1 and 0 means "none". */
typedef struct gmt_string {
    uint64_t id;
    gmt_bytes str;
} gmt_string;

/* ALLOC and FREE share one body. */
typedef struct gmt_mem {
    uint64_t ts;      /* "ts" (in the frame's TIMES record; 1.x: last in the payload) */
    uint64_t device;
    uint64_t address; /* "addr" */
    uint64_t bytes;
    uint64_t kind;    /* gmt_mem_kind */
    uint64_t source;  /* gmt_mem_source */
    uint64_t flags;   /* GMT_MEMF_* */
    uint64_t corr;    /* "corr": CUPTI correlation id of the API call, 0 none */
    uint64_t stream;  /* CUPTI stream id, 0 none */
    uint64_t tid;     /* host thread (Linux tid) that made the call, 0 unknown */
    uint64_t range;   /* "rid": innermost open NVTX range instance of that thread, 0 none */
    uint64_t seq;     /* "seq": kernels that thread had launched before this call */
    uint64_t step;    /* "step": step number at the call */
} gmt_mem;

/* KERNEL: one launch, in warmup/active steps only (warmup ones dropped). */
typedef struct gmt_kernel {
    uint64_t start;   /* "gts", then "dur" (in TIMES; 1.x: last in the payload) */
    uint64_t end;     /* "dur": end - start */
    uint64_t device;
    uint64_t stream;
    uint64_t corr;    /* "corr" */
    uint64_t name;    /* string id */
    uint64_t grid[3];
    uint64_t block[3];
    uint64_t registers;
    uint64_t static_smem;
    uint64_t dynamic_smem;
    uint64_t local_mem;  /* local memory per thread, bytes */
    uint64_t tid;        /* launching host thread, 0 unknown */
    uint64_t seq;        /* "seq": launch number on that thread (first launch is 1) */
    uint64_t range;      /* "rid": innermost open NVTX range instance at launch */
    uint64_t step;       /* "step" */
    uint64_t flags;      /* GMT_KERNF_* (since 1.1; after "dur"; absent = 0) */
} gmt_kernel;

/* KERNEL flags (format 1.1). A writer omits the field when it is 0, so a
 * GPU-timed KERNEL is byte for byte what format 1.0 wrote. */
#define GMT_KERNF_LAUNCH 0x1u /* from the launch callback (GMEMPROF_KERNELS=launch):
                               * start = end = the host time of the launch call,
                               * not a GPU execution; registers, shared and local
                               * memory are 0 (unknown) unless GMT_KERNF_ATTRS */
#define GMT_KERNF_ATTRS 0x2u  /* with LAUNCH: registers, static/dynamic shared and
                               * local memory are known (the driver's function
                               * attributes and the launch's dynamic shared memory) */

/* MEMCPY and MEMSET share one body. */
typedef struct gmt_copy {
    uint64_t start;   /* "gts", then "dur" (in TIMES; 1.x: last in the payload) */
    uint64_t end;     /* "dur" */
    uint64_t device;
    uint64_t stream;
    uint64_t corr;    /* "corr" */
    uint64_t bytes;
    uint64_t copy_kind; /* gmt_copy_kind (memcpy); the value set (memset) */
    uint64_t src_kind;  /* gmt_mem_kind (memcpy); memory kind (memset) */
    uint64_t dst_kind;  /* gmt_mem_kind (memcpy); 0 (memset) */
    uint64_t tid;
    uint64_t step;    /* "step" */
} gmt_copy;

/* RANGE_BEGIN's kind (2.3): who opened the range.  Every kind sits on the
 * same per-thread stack, so attribution to the innermost range is one rule. */
typedef enum gmt_range_kind {
    GMT_RANGE_NVTX = 0,        /* an NVTX push/pop or start/end (and every range before 2.3) */
    GMT_RANGE_OP = 1,          /* a framework op (PyTorch RecordFunction) */
    GMT_RANGE_MODULE = 2,      /* an nn.Module's forward; name = its path ("GPT.h.3.attn") */
    GMT_RANGE_MODULE_BWD = 3,  /* autograd's backward of that module's forward ops; name = its path */
    GMT_RANGE_KIND_COUNT_
} gmt_range_kind;

/* RANGE_BEGIN / RANGE_END: a range opened and closed on one host thread. */
typedef struct gmt_range {
    uint64_t ts;       /* "ts" */
    uint64_t tid;
    uint64_t id;       /* "rid": range instance id (unique in the trace, from 1) */
    uint64_t parent;   /* "rid": enclosing instance on the same thread, 0 none (BEGIN only) */
    uint64_t name;     /* string id (BEGIN only) */
    uint64_t kind;     /* gmt_range_kind (BEGIN only; 2.3, appended, written when not 0) */
} gmt_range;

/* MARK: an NVTX mark that is neither a step nor a tag. */
typedef struct gmt_mark {
    uint64_t ts;      /* "ts" */
    uint64_t tid;
    uint64_t name;    /* string id */
} gmt_mark;

typedef struct gmt_tag_device {
    uint64_t device;
    uint64_t live_bytes;   /* device memory live as the profiler tracks it */
    uint64_t driver_used;  /* cuMemGetInfo: total - free */
    uint64_t driver_free;
    uint64_t driver_total;
    /* (2.1, with has_framework) the framework allocator's view: */
    uint64_t fw_allocated; /* bytes in live blocks (torch.cuda.memory_allocated) */
    uint64_t fw_reserved;  /* bytes in its segments (torch.cuda.memory_reserved) */
} gmt_tag_device;

/* TAG: a named snapshot (gmemprof_mark, NVTX mark with the tag prefix). */
typedef struct gmt_tag {
    uint64_t ts;      /* "ts" */
    uint64_t name;    /* string id */
    uint64_t step;    /* "step" */
    uint64_t ndev;    /* count, then ndev x gmt_tag_device's first 5 fields */
    /* (2.1) 1: after the payload's other fields, ndev x (fw_allocated,
     * fw_reserved); written only when a framework bridge was attached. */
    uint64_t has_framework;
    gmt_tag_device dev[GMT_MAX_TAG_DEVICES];
} gmt_tag;

/* STEP: a step boundary; `phase` is the phase the new step runs in. */
typedef struct gmt_step {
    uint64_t ts;      /* "ts" */
    uint64_t step;    /* "step": number of the step that begins, from 0 */
    uint64_t phase;   /* gmt_phase */
    uint64_t source;  /* gmt_step_source */
} gmt_step;

/* WINDOW_BEGIN is followed by `baseline_count` ALLOC records flagged
 * GMT_MEMF_BASELINE: every allocation live at that moment. */
typedef struct gmt_window_begin {
    uint64_t ts;      /* "ts" */
    uint64_t window;  /* from 0 */
    uint64_t step;    /* "step" */
    uint64_t baseline_count;
    uint64_t baseline_bytes;
} gmt_window_begin;

typedef struct gmt_window_end {
    uint64_t ts;      /* "ts" */
    uint64_t window;
    uint64_t step;    /* "step": last step of the window */
    uint64_t reason;  /* gmt_window_end_reason */
} gmt_window_end;

/* MEMSAMPLE: driver view of a device, as nvidia-smi shows it. */
typedef struct gmt_memsample {
    uint64_t ts;      /* "ts" */
    uint64_t device;
    uint64_t used;
    uint64_t free_;
    uint64_t total;
} gmt_memsample;

/* STATS: cumulative counters since start (the last one wins). */
typedef struct gmt_stats {
    uint64_t ts;               /* "ts" */
    uint64_t records_written;  /* records handed to the encoder */
    uint64_t dropped_cupti;    /* records CUPTI reported dropped */
    uint64_t dropped_writer;   /* records the profiler dropped (queue or ring full, write error, unreadable) */
    uint64_t host_time_ns;     /* CPU time spent in the profiler's own threads and callbacks */
    uint64_t own_device_bytes; /* device memory held by CUPTI buffers for the profiler */
    uint64_t own_host_bytes;   /* host memory held by the profiler's buffers */
    uint64_t bytes_written;    /* compressed bytes written so far */
    uint64_t unmatched_corr;   /* activity records whose API callback was not found */
    /* (2.2) ALLOC/FREE/KERNEL/MEMCPY/MEMSET records of steps outside every
     * active window (waiting, warm-up), not written by design: records made
     * = written + dropped_cupti + dropped_writer + outside_window. After the
     * payload's other fields, present when not 0 (absent: 0). */
    uint64_t outside_window;
} gmt_stats;

/* TRAILER: last record; its absence means the trace was cut short. */
typedef struct gmt_trailer {
    uint64_t ts;       /* "ts" */
    uint64_t records;  /* records in the trace before the trailer */
    uint64_t status;   /* GMT_TRAILER_* bits */
} gmt_trailer;

/* BLOCK actions: what a framework's allocator did (format 2.1). */
typedef enum gmt_block_action {
    GMT_BLK_ALLOC = 0,          /* a block (tensor storage) handed out */
    GMT_BLK_FREE_REQUESTED = 1, /* the program let go of the block: allocated bytes drop */
    GMT_BLK_FREE_COMPLETED = 2, /* the block is reusable (later than REQUESTED under record_stream) */
    GMT_BLK_SEGMENT_ALLOC = 3,  /* the allocator reserved a segment from CUDA */
    GMT_BLK_SEGMENT_FREE = 4,   /* ... and gave it back */
    GMT_BLK_SEGMENT_MAP = 5,    /* expandable segments: bytes mapped into a segment */
    GMT_BLK_SEGMENT_UNMAP = 6,  /* ... and unmapped */
    GMT_BLK_OOM = 7,            /* the allocator failed a request: bytes = the request,
                                 * address = the device's free bytes CUDA reported */
    GMT_BLK_OWNER = 8,          /* a block holds an owner's tensors (nn.Module parameters or
                                 * buffers): address = the block (the tensors' storage), bytes =
                                 * the tensors' own bytes (numel x element size), frame = the
                                 * owner's name (a module path), flags GMT_BLKF_PARAMETER or
                                 * GMT_BLKF_BUFFER; no memory is allocated or freed */
    GMT_BLK_COUNT_
} gmt_block_action;

/* BLOCK flags */
#define GMT_BLKF_BASELINE 0x1u /* live at window begin (a block or a segment), made earlier */
#define GMT_BLKF_SEEDED 0x2u   /* known from the allocator's snapshot when the bridge attached */
#define GMT_BLKF_PARAMETER 0x4u /* OWNER: the tensors are parameters of the owner */
#define GMT_BLKF_BUFFER 0x8u    /* OWNER: the tensors are buffers of the owner */

/* BLOCK: one allocator event.  Payload order: action .. pool, ts, then
 * requested; address and ts are deltas against their own state
 * (last_baddr, last_bts), every other field a plain varint. */
typedef struct gmt_block {
    uint64_t ts;      /* host time (trace clock); last in the payload */
    uint64_t action;  /* gmt_block_action */
    uint64_t device;  /* CUDA device ordinal */
    uint64_t address; /* block or segment start (OOM: free bytes) */
    uint64_t bytes;   /* block size as the allocator counts it (what memory_allocated adds), or
                       * segment/mapped bytes */
    uint64_t stream;  /* the allocator's stream handle (cudaStream_t value), 0 none */
    uint64_t tid;     /* host thread that called the allocator */
    uint64_t range;   /* innermost open range instance of that thread, 0 none */
    uint64_t seq;     /* kernels that thread had launched before the call */
    uint64_t step;    /* step number at the call */
    uint64_t flags;   /* GMT_BLKF_* */
    uint64_t pool;    /* memory pool id (first of PyTorch's pair), 0 the default pool */
    uint64_t requested; /* the size the program asked for (blocks; 0 unknown) */
    /* 2.3, appended, written when not 0 (a later field forces the earlier): */
    uint64_t frame;   /* string id: the innermost frame of the program's own code at the call,
                       * "FILE:LINE FUNCTION" (FUNCTION has no space), 0 none */
    uint64_t stack;   /* string id: the whole stack, innermost first, one "FILE:LINE FUNCTION"
                       * per line ('\n' between), 0 none */
} gmt_block;

/* What set off a flight recorder's dump (OOM record, format 2.2). */
typedef enum gmt_oom_cause {
    GMT_OOM_CUDA = 1,      /* a CUDA allocation call returned out of memory */
    GMT_OOM_FRAMEWORK = 2, /* the framework's allocator raised its out-of-memory error */
    GMT_OOM_SIGNAL = 3,    /* SIGUSR2 asked for a dump (GMEMPROF_OOM_SIGNAL=1) */
    GMT_OOM_EXIT = 4,      /* the program ended with no dump written (GMEMPROF_OOM_AT_EXIT=1) */
    GMT_OOM_CAUSE_COUNT_
} gmt_oom_cause;

/* OOM flags */
#define GMT_OOMF_DRIVER 0x1u    /* driver_free/driver_total were read (cuMemGetInfo) */
#define GMT_OOMF_FRAMEWORK 0x2u /* fw_allocated/fw_reserved hold the framework allocator's view */
#define GMT_OOMF_TRIMMED 0x4u   /* the ring was cut by its memory cap: fewer steps than asked */
/* A trace's own failure record (beside a schedule of windows), not a dump's:
 * `dump`, when not 0, is the number of the flight recorder's dump of the
 * same failure, whose file is named from the trace's (gmt_names.h). */
#define GMT_OOMF_IN_TRACE 0x8u

/* OOM (2.2): the failure that ended a flight recorder's window.  All fields
 * are plain varints (ts too): a rare record, and one a reader can take
 * alone.  Followed by live_count LIVE records. */
typedef struct gmt_oom {
    uint64_t ts;           /* when the failure happened (trace clock) */
    uint64_t cause;        /* gmt_oom_cause */
    uint64_t dump;         /* this dump's number in the process, from 1 (GMT_OOMF_IN_TRACE: that of
                            * the dump of this failure, 0 none) */
    uint64_t device;       /* CUDA device ordinal of the request */
    uint64_t bytes;        /* the size requested (0 unknown: a signal, the exit) */
    uint64_t stream;       /* the request's stream handle (cudaStream_t value), 0 none */
    uint64_t tid;          /* host thread of the request, 0 unknown */
    uint64_t range;        /* its innermost open range instance, 0 none */
    uint64_t op;           /* string id: that range's name (the op), 0 none */
    uint64_t api;          /* string id: the call that failed ("cuMemAlloc_v2"), 0 none */
    uint64_t status;       /* the call's CUresult, 0 none */
    uint64_t step;         /* step number at the failure */
    uint64_t flags;        /* GMT_OOMF_* */
    uint64_t driver_free;  /* cuMemGetInfo at the failure (GMT_OOMF_DRIVER) */
    uint64_t driver_total;
    uint64_t fw_allocated; /* the framework allocator's allocated bytes (GMT_OOMF_FRAMEWORK) */
    uint64_t fw_reserved;  /* ... and reserved bytes */
    uint64_t live_count;   /* LIVE records that follow */
    uint64_t live_bytes;   /* bytes of the LIVE records that are not framework blocks */
    uint64_t first_step;   /* the first step the window holds (its baseline's) */
    uint64_t ring_bytes;   /* the recorder's memory when it dumped */
} gmt_oom;

/* LIVE (2.2): one allocation live at the failure, after its OOM record:
 * gmt_mem's fields, every one a plain varint (ts too).  Device memory as
 * CUPTI saw it, and with a framework bridge the allocator's live blocks
 * (source GMT_SRC_FRAMEWORK, after the CUPTI ones). */

typedef struct gmt_record {
    gmt_type type;
    union {
        gmt_header header;
        gmt_device device;
        gmt_string string;
        gmt_mem mem;       /* ALLOC, FREE */
        gmt_kernel kernel;
        gmt_copy copy;     /* MEMCPY, MEMSET */
        gmt_range range;   /* RANGE_BEGIN, RANGE_END */
        gmt_mark mark;
        gmt_tag tag;
        gmt_step step;
        gmt_window_begin wbegin;
        gmt_window_end wend;
        gmt_memsample sample;
        gmt_stats stats;
        gmt_trailer trailer;
        gmt_block block;
        gmt_oom oom;
        gmt_mem live;      /* LIVE */
    } u;
} gmt_record;

/* ---- the codec (common/codec.c) --------------------------------------- */

/* The delta state: every variable is 0 at the start of a frame. */
typedef struct gmt_deltas {
    uint64_t last_ts;
    uint64_t last_addr;
    uint64_t last_corr;
    uint64_t last_gpu;   /* "gts": end of the last kernel/memcpy/memset */
    uint64_t last_seq;   /* "seq" */
    uint64_t last_rid;   /* "rid": NVTX range instance ids */
    uint64_t last_step;  /* "step" */
    uint64_t last_bts;   /* BLOCK's ts (2.1) */
    uint64_t last_baddr; /* BLOCK's address (2.1) */
} gmt_deltas;

/* Entries per table per frame (format 1.2): a _REF index is below it. */
#define GMT_TAB_CAP 256u
/* Hash slots per table: twice the entries, so a probe ends soon. */
#define GMT_TAB_SLOT_BITS 9u
#define GMT_TAB_SLOTS (1u << GMT_TAB_SLOT_BITS)
/* A kernel shape: gmt_kernel's name .. local_mem, in that order. */
#define GMT_SHAPE_WORDS 11u
/* An allocation context: gmt_mem's device, kind, source, flags, stream, tid
 * (held as kind, source, flags, stream, tid, device: see gmt_ctx_of). */
#define GMT_CTX_WORDS 6u

/* One interning table.  Entries [0, n) are this frame's; slot[] hashes a
 * key to its entry.  A slot is in use iff its entry is below n and names
 * the slot back (home[slot[s]] == s), so gmt_codec_reset empties a table
 * by setting n = 0 alone, whatever the arrays hold: no clearing per frame,
 * and a gmt_codec needs no initialisation beyond gmt_codec_reset. */
typedef struct gmt_itab {
    uint32_t n;
    uint8_t slot[GMT_TAB_SLOTS];
    uint16_t home[GMT_TAB_CAP];
} gmt_itab;

/* Codec state: the delta state, the frame's two tables and, in format 2.0,
 * where its time stream is written or read; reset it at the start of every
 * frame (gmt_codec_reset).  Treat it as opaque: copy it whole, never field
 * by field (a copy is about 37 KB).  Two states that came from one state
 * through the same records have equal delta states and tables, byte for
 * byte. */
typedef struct gmt_codec {
    gmt_deltas d;
    /* Format 2.0's time stream (gmt_codec_set_time_sink / _source; both
     * unset by gmt_codec_reset, which means format 1.x, times inline). */
    uint8_t *tsink;            /* encoder: where the times go */
    size_t tsink_len, tsink_cap;
    int tsep;                  /* decoder: times come from tp..tend */
    const uint8_t *tp, *tend;
    gmt_itab shapes;   /* kernel shapes */
    gmt_itab ctxs;     /* allocation contexts (ALLOC and FREE share them) */
    uint64_t shape[GMT_TAB_CAP * GMT_SHAPE_WORDS];
    uint64_t ctx[GMT_TAB_CAP * GMT_CTX_WORDS];
} gmt_codec;

typedef enum gmt_status {
    GMT_OK = 0,
    GMT_E_SHORT = -1,    /* need more input / output space */
    GMT_E_CORRUPT = -2,  /* malformed varint, length or field */
    GMT_E_VERSION = -3,  /* newer major version */
    GMT_E_MAGIC = -4,    /* not a gmemprof trace */
    GMT_E_IO = -5,       /* read or write failed (errno kept by caller) */
    GMT_E_ZSTD = -6,     /* zstd reported an error (bad frame, checksum) */
    GMT_E_NOMEM = -7,
    GMT_E_TYPE = -8,     /* unknown record type (skippable) */
    GMT_E_ARG = -9
} gmt_status;

const char *gmt_status_str(gmt_status s);
const char *gmt_type_name(gmt_type t);
const char *gmt_mem_kind_name(uint64_t kind);
const char *gmt_mem_source_name(uint64_t source);
const char *gmt_phase_name(uint64_t phase);
const char *gmt_step_source_name(uint64_t source);
const char *gmt_window_end_reason_name(uint64_t reason);
const char *gmt_copy_kind_name(uint64_t kind);
const char *gmt_block_action_name(uint64_t action);
const char *gmt_oom_cause_name(uint64_t cause);

void gmt_codec_reset(gmt_codec *c);
/* Format 2.0 (docs/trace-format.md, section 3): after gmt_codec_reset, the
 * encoder writes the time fields (ts, gts, dur) of the records it encodes
 * into buf[0..cap) instead of their payloads; gmt_encode fails (returns 0)
 * when a record's times do not fit.  gmt_codec_time_len: the bytes written
 * there since the reset.  The decoder takes them from times[0..len) (the
 * frame's TIMES record) once gmt_codec_set_time_source is called; without
 * either call, both read and write format 1.x, times inline. */
void gmt_codec_set_time_sink(gmt_codec *c, uint8_t *buf, size_t cap);
size_t gmt_codec_time_len(const gmt_codec *c);
void gmt_codec_set_time_source(gmt_codec *c, const uint8_t *times, size_t len);
/* Time bytes of the source that no record has used yet. */
size_t gmt_codec_time_left(const gmt_codec *c);

/* Varints: put returns bytes written (<= 10), 0 if `cap` is too small;
 * get returns bytes read, 0 if truncated, or -1 if malformed (> 10 bytes). */
size_t gmt_varint_put(uint8_t *out, size_t cap, uint64_t v);
int gmt_varint_get(const uint8_t *in, size_t len, uint64_t *v);
static inline uint64_t gmt_zigzag(int64_t v) { return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63); }
static inline int64_t gmt_unzigzag(uint64_t v) { return (int64_t)(v >> 1) ^ -(int64_t)(v & 1); }

/* Preamble: writes GMT_PREAMBLE_LEN bytes; parse checks magic and major. */
void gmt_preamble_put(uint8_t out[GMT_PREAMBLE_LEN]);
gmt_status gmt_preamble_parse(const uint8_t *in, size_t len, uint16_t *major, uint16_t *minor);

/* Encodes one record (type, length, payload) into out: a KERNEL, ALLOC or
 * FREE whose shape or context the frame's table holds as its _REF form, any
 * other record as itself; its time fields go to the time sink if the codec
 * has one (2.0), else last in the payload (1.x). Returns the bytes written
 * to out, or 0 if cap or the sink is too small (the codec state is then
 * unchanged).
 * GMT_ENCODE_MAX bounds any record except HEADER/DEVICE/STRING/TAG, whose
 * size is bounded by gmt_encode_bound(). */
#define GMT_ENCODE_MAX 256u
size_t gmt_encode_bound(const gmt_record *r);
size_t gmt_encode(gmt_codec *c, const gmt_record *r, uint8_t *out, size_t cap);

/* Decodes one record from in[0..len), its time fields from the codec's
 * time source if it has one (2.0), else from the payload (1.x). On GMT_OK,
 * *used is the bytes taken and *r holds the record (gmt_bytes point into
 * `in`; a _REF record comes back as the KERNEL, ALLOC or FREE it stands
 * for). GMT_E_SHORT: the record is incomplete. GMT_E_TYPE: unknown type,
 * *used is set so the caller can skip it. GMT_E_CORRUPT: malformed (a _REF
 * index beyond its table, or a time past the end of the time source, too).
 * The codec state, the time source's cursor included, advances only on OK.
 * A TIMES record is not decoded here: gmt_reader takes it (it is GMT_E_CORRUPT
 * to gmt_decode). */
gmt_status gmt_decode(gmt_codec *c, const uint8_t *in, size_t len, gmt_record *r, size_t *used);

#ifdef __cplusplus
}
#endif
#endif
