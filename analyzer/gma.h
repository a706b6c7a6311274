/*
 * gmem-analyze internals shared by its files: options, the replay state
 * (one streaming pass over a trace) and the rows the tables are built from.
 *
 * Memory is bounded by distinct names, threads, streams, steps, windows and
 * live allocations -- never by the number of records: per-record work only
 * touches preallocated, open-addressing structures indexed by integer ids.
 */
#ifndef GMA_H
#define GMA_H

#include <stdint.h>
#include <stdio.h>

#include "gmemprof/trace_format.h"
#include "gmt_io.h"
#include "util/gma_util.h"
#include "layer.h"

#define GMA_MAX_DEVICES 64

/* gmem-analyze's exit statuses (its --help): a view that runs a whole
 * command returns one. */
#define GMA_EXIT_BAD_INPUT 1 /* unreadable or invalid trace, or an output could not be written */
#define GMA_EXIT_USAGE 2
#define GMA_EXIT_DAMAGED 3   /* made, but a trace is incomplete */
#define GMA_MAX_STRING_ID (1u << 24)  /* larger string ids are ignored */
#define GMA_KRING 4096u               /* recent kernels remembered per host thread */
#define GMA_RRING 65536u              /* closed NVTX range instances remembered */
#define GMA_PENDING_MAX (1u << 18)    /* kernels waited for at once */
#define GMA_PENDING_HORIZON 65536u    /* launches after which a wait is given up */
#define GMA_CHAIN_MAX 32u             /* range nesting followed for "total" */

/* Attribution values of an allocation's kernel / range name. */
#define GMA_NAME_UNATTR 0u            /* "(unattributed)" */
#define GMA_NAME_BASELINE 0xFFFFFFFEu /* allocated before the window */

typedef enum gma_by {
    GMA_BY_KERNEL,
    GMA_BY_RANGE,
    GMA_BY_ALLOC,
    GMA_BY_STEP,
    GMA_BY_TAG,
    GMA_BY_STREAM,
    GMA_BY_DEVICE,
    GMA_BY_MODULE, /* nn.Module paths (modules.h) */
    GMA_BY_LINE,   /* source lines (lines.h) */
    GMA_BY_CATEGORY, /* PyTorch's kinds of memory (category.h) */
    GMA_BY_COUNT_
} gma_by;

typedef enum gma_sort {
    GMA_SORT_MEM,
    GMA_SORT_PEAK,
    GMA_SORT_ALLOC,
    GMA_SORT_COUNT,
    GMA_SORT_TIME,
    GMA_SORT_NAME,
    GMA_SORT_HELD, /* --diff by kernel or range: bytes each row holds at the peak */
    GMA_SORT_COUNT_
} gma_sort;

typedef enum gma_format { GMA_FMT_TABLE, GMA_FMT_CSV, GMA_FMT_JSON } gma_format;

extern const char *const gma_by_names[GMA_BY_COUNT_];
extern const char *const gma_sort_names[GMA_SORT_COUNT_];

typedef struct gma_opts {
    gma_by by;
    gma_sort sort;
    int sort_given;        /* --sort was on the command line */
    uint64_t top;          /* 0: every row */
    gma_format format;
    int64_t window;        /* -1: all */
    int64_t step;          /* -1: all */
    int64_t device;        /* -1: all */
    const char *diff_path;
    const char *chrome_path;
    const char *timeline_path;
    int full_names;        /* the report's names whole: --full-names, and always in CSV and JSON */
    int full_labels;       /* the timeline's labels whole: --full-names */
    int layer;             /* gma_layer_kind: which allocations the who-tables take */
    struct gma_progress *progress; /* the run's progress line (progress.h), NULL none */
    int chrome_bounded;    /* --chrome-largest N given: the bounded Chrome export */
    uint64_t chrome_largest; /* its N: the largest allocations kept (per trace) */
    uint64_t chrome_warn_bytes; /* warn once the Chrome export passes this; 0: GMA_CHROME_WARN_BYTES */
    uint64_t depth;        /* --by module: paths deeper than this folded (0: none) */
    unsigned threads;      /* --threads: frames decompressed on this many threads; 0: one per online CPU */
    const char *sqlite_path; /* --sqlite OUT */
    int alloc_spill;       /* --by alloc --top 0 of one trace: rows spilled to a file, not kept (arows.h) */
} gma_opts;

/* The most bytes the sizes of one trace's records add up to (2^62, 4 EiB,
 * more than any machine holds): with every size counted against it, no sum
 * of them wraps, nor does a signed difference of two. */
#define GMA_BYTES_MAX (1ull << 62)

/* ---- rows --------------------------------------------------------------- */

typedef struct gma_krow {  /* per kernel name; row 0 is "(unattributed)" */
    uint32_t name;         /* string id */
    uint64_t calls, time_ns, min_ns, max_ns;
    uint64_t alloc_bytes, free_bytes, alloc_count, free_count;
    uint64_t peak;         /* device live bytes right after an attributed alloc, max */
    uint64_t regs, smem, local_mem; /* max over launches; smem = static + dynamic */
    uint64_t launch_calls; /* of calls, those known from their launch only (GMT_KERNF_LAUNCH): no GPU time */
    uint64_t attr_calls;   /* of calls, those with registers/shared/local memory known (GPU or GMT_KERNF_ATTRS) */
} gma_krow;

typedef struct gma_rrow {  /* per NVTX range name; row 0 is "(unattributed)" */
    uint32_t name;         /* string id (the representative of its base name) */
    uint64_t calls, time_ns;
    uint64_t self_alloc, self_free, self_alloc_count, self_free_count;
    uint64_t tot_alloc, tot_free;
    uint64_t peak;         /* over allocs inside the range or its children */
} gma_rrow;

typedef struct gma_steprow {
    uint64_t step;
    uint64_t phase;        /* gmt_phase from its STEP record, 0 unknown */
    uint64_t start_ts, end_ts;
    int has_start, in_window;
    uint64_t alloc_bytes, free_bytes, alloc_count, free_count;
    uint64_t peak, live_end;
    int has_live;
    uint64_t kernels, kernel_ns;
} gma_steprow;

typedef struct gma_tagrow {
    uint64_t ts, name, step, device;
    uint64_t live, driver_used, driver_total;
    uint64_t fw_allocated, fw_reserved; /* with has_fw: the framework allocator's view */
    int has_fw;
    int nodev; /* made before the first CUDA call: no device, no driver reading */
} gma_tagrow;

typedef struct gma_streamrow {
    uint64_t device, stream;
    uint64_t kernels, kernel_ns;
    uint64_t alloc_bytes, free_bytes, alloc_count, free_count, peak;
    uint64_t copies, copy_bytes;
} gma_streamrow;

/* One allocation. Pool slots are reused; an entry outlives its free only
 * while something still needs it (the KEEP flags). */
typedef struct gma_entry {
    uint64_t addr, bytes;
    uint64_t ts, free_ts;
    uint64_t ord;          /* memory-event ordinal of the alloc */
    uint64_t live_after;   /* device live bytes right after it */
    uint64_t step, stream;
    uint32_t kname;        /* kernel string id, GMA_NAME_* */
    uint32_t rname;        /* innermost range's string id, GMA_NAME_* */
    uint32_t slot;         /* pending kernel wait + 1, 0 none */
    uint32_t prev, next;   /* pending list (entry + 1), or free list */
    uint32_t keep_next;    /* per-device "freed after the peak" list (entry + 1) */
    uint32_t window;       /* window index it was made in, UINT32_MAX none */
    uint16_t flags;
    uint8_t device, kind, source;
    /* For the report's hints (hints.h): the alloc record's thread, launch
     * count and range instance, and the lifetime class (GMA_HC_*) and owner
     * that gma_range_class_at_free gives an entry freed while live at the
     * current peak.
     * They fill what was padding: 128 bytes make ENT's index a shift, not
     * a multiply, on the path of every alloc and free. */
    uint8_t hclass;
    uint32_t seq;          /* low 32 bits */
    uint32_t howner;       /* its op's range name id, 0 none */
    uint64_t range, tid;
} gma_entry;
_Static_assert(sizeof(gma_entry) == 128, "gma_entry is 128 bytes");

/* gma_entry.hclass: the lifetime class, as insights.h's classes. */
#define GMA_HC_PERSISTENT 0u
#define GMA_HC_STEP 1u
#define GMA_HC_TEMP 2u

#define GMA_E_LIVE 0x1u
#define GMA_E_BASELINE 0x2u
#define GMA_E_ACCOUNTED 0x4u  /* passed the window/step/device selection */
#define GMA_E_HOST 0x8u       /* pinned/pageable host memory: not device bytes */
#define GMA_E_LEAKED 0x10u    /* still live at the end of its window */
#define GMA_E_KEEP_PEAK 0x20u /* freed after the peak it was live at */
#define GMA_E_KEEP_ROW 0x40u  /* held by the --by alloc top-N */
#define GMA_E_DROPPED 0x80u   /* dropped by a window begin (baseline is authoritative) */
#define GMA_E_INUSE 0x100u    /* pool slot in use */
#define GMA_E_LEAK_AT_END 0x200u /* window never closed: leak measured at trace end */

typedef struct gma_window {
    uint64_t id;
    uint64_t begin_ts, end_ts;
    uint64_t first_step, last_step;
    uint64_t reason;
    int closed;            /* ended: by its WINDOW_END, or by what followed */
    int no_end;            /* no WINDOW_END: ended by the next begin or the trace end */
    int implicit;          /* no window records: the whole trace */
    uint64_t baseline_count, baseline_bytes;  /* as the record says */
    uint64_t baseline_seen_count, baseline_seen_bytes;
    uint64_t peak;         /* max device live bytes in it (any device) */
    uint64_t alloc_bytes, free_bytes, alloc_count, free_count;
    uint64_t leaked_bytes, leaked_count;
    uint64_t kernels;
} gma_window;

typedef struct gma_dev {
    int present;           /* a DEVICE record or an event named it */
    uint32_t name_off;     /* in strs */
    uint64_t total_mem, sm_count, cc_major, cc_minor;
    uint64_t live, live_host;
    /* the peak over accounted events */
    int has_peak;
    uint64_t peak, peak_ts, peak_step, peak_ord, peak_window;
    uint64_t peak_key;     /* pending kernel key while unresolved */
    int peak_state;        /* GMA_PEAK_* */
    uint32_t peak_kname, peak_rname;
    uint32_t keep_head;    /* entries freed after the peak they were live at */
    uint64_t peak_count;   /* allocations live at the peak (filled at the end) */
    /* whole-trace peak, windows or not */
    uint64_t all_peak, all_peak_ts;
    /* driver view */
    int has_sample, has_best;
    uint64_t sample_ts, sample_used, best_ts, best_used, max_used, driver_total;
    /* accounted totals */
    uint64_t baseline_bytes, baseline_count;
    uint64_t alloc_bytes, free_bytes, alloc_count, free_count;
    uint64_t leaked_bytes, leaked_count;
    uint64_t kernels, kernel_ns, copies, copy_bytes;
    uint64_t host_peak;
} gma_dev;

#define GMA_PEAK_UNATTR 0
#define GMA_PEAK_KERNEL 1
#define GMA_PEAK_PENDING 2
#define GMA_PEAK_BASELINE 3

typedef struct gma_srcstat {
    uint64_t count, bytes, frees, free_bytes;
    uint64_t seg_like;     /* sizes that are multiples of 2 MiB */
} gma_srcstat;

typedef struct gma_thread {
    uint64_t tid;
    uint64_t max_seq;
    uint64_t ckey;         /* the thread's newest wait, kept out of slot_of */
    uint32_t cslot;        /* its slot + 1, 0 none */
    struct gma_kslot { uint64_t seq; uint32_t name; } *ring;
} gma_thread;

typedef struct gma_slot {  /* a kernel that allocations wait for */
    uint64_t key;          /* thread index << 40 | seq */
    uint64_t alloc_bytes, free_bytes, alloc_count, free_count, peak;
    uint32_t head;         /* waiting entries (entry + 1) */
    uint32_t gen;          /* bumped on reuse, for the FIFO */
    uint32_t next_free;
    int used;
} gma_slot;

typedef struct gma_rinst {  /* an NVTX range instance */
    uint64_t id, parent, tid, begin_ts;
    uint32_t name;         /* as recorded (the Chrome export shows it) */
    uint32_t canon;        /* the row it aggregates into (gma_nvtx_base_len) */
    uint32_t next_free;
    int accounted;
} gma_rinst;

struct gma_chrome;
struct gma_consumer;
struct gma_table;
#define GMA_MAX_CONSUMERS 4
struct gma_timeline;
struct gma_category;
struct gma_modules;

typedef struct gma_replay {
    gma_opts opt;
    const char *path;
    int err;               /* GMT_E_NOMEM when a structure could not grow */

    /* strings of the trace, by id */
    gma_strs strs;
    uint32_t *str_off;     /* id -> offset + 1 in strs */
    uint32_t *str_len;
    size_t str_cap;
    /* Kernel labels, one per kernel name id for the whole trace (made at
     * the end, unless full_names): 0 not a kernel's name, 1 a kernel's name
     * (set by every kernel record), else offset + 1 in klabels. */
    uint32_t *klabel;
    size_t klabel_cap;
    gma_strs klabels;
    /* header and run information */
    int has_header;
    gmt_header hdr;        /* gmt_bytes fields point into strs after copy */
    uint32_t hdr_host, hdr_cmd, hdr_cfg, hdr_ver;
    int has_stats, has_trailer_rec;
    gmt_stats stats;
    gmt_trailer trailer;
    gmt_reader_end rend;
    uint64_t records;
    /* While reading: the reader, and the record count at which the progress
     * is looked at next (UINT64_MAX without a progress line). */
    const gmt_reader *rd;
    uint64_t progress_next;
    /* KERNEL records known from their launch (GMEMPROF_KERNELS=launch):
     * their time is the host's launch time, not a GPU duration */
    uint64_t launch_kernels, gpu_kernels;
    uint64_t origin;       /* trace start on the trace clock */
    int has_origin;
    uint64_t first_ts, last_ts;
    int has_ts;

    /* devices */
    gma_dev dev[GMA_MAX_DEVICES];
    uint64_t last_dev;     /* the device dev_get returned last (present), UINT64_MAX none */
    uint64_t live_total;   /* device bytes live, selected devices */
    unsigned peaks_pending; /* devices whose peak waits for its kernel */
    uint64_t bad_device;   /* records naming a device >= GMA_MAX_DEVICES */

    /* live set */
    gma_vec entries;       /* gma_entry */
    uint32_t free_entry;   /* free list head (entry + 1) */
    gma_map live;          /* (device, address) -> entry */
    uint64_t mem_ord;

    /* attribution */
    gma_vec threads;       /* gma_thread */
    gma_map thread_of;     /* tid -> thread */
    uint64_t last_tid;
    uint32_t last_thread;
    gma_thread *last_th;   /* its address, NULL none: valid until threads
                            * grows, which only thread_idx_slow does */
    gma_vec slots;         /* gma_slot */
    gma_map slot_of;       /* key -> slot */
    uint32_t free_slot;
    uint64_t *fifo;        /* slot index << 32 | gen, creation order */
    size_t fifo_cap, fifo_head, fifo_len;
    size_t pending;
    /* A kernel found ahead in the batch (read loop only): allocations with
     * key dkey take its name dname directly while the record at dk (a
     * gmt_hot of the current batch, as an address; 0 none) is still to come,
     * instead of waiting in a slot that it would settle. */
    uint64_t dkey;
    uintptr_t dk;
    uint32_t dname;
    gma_vec krows;         /* gma_krow */
    uint32_t *krow_of;     /* string id -> krow + 1 */
    gma_krow *krow_hit;    /* the row of name krow_hit_name (KROW_NONE: none): valid
                            * until krows grows (krow_for resets it then) */
    uint32_t krow_hit_name;
    size_t krow_cap;

    /* ranges */
    gma_vec rinsts;        /* open instances */
    gma_map rinst_of;      /* id -> open instance */
    uint32_t free_rinst;
    gma_rinst *rring;      /* closed instances, by id % GMA_RRING */
    gma_vec rrows;         /* gma_rrow */
    uint32_t *rcanon;      /* range string id -> representative id of its base name */
    size_t rcanon_cap;
    gma_map rcanon_of;     /* hash of a base name -> representative id */
    uint32_t *rrow_of;
    size_t rrow_cap;
    uint64_t chain_id;     /* cache: range id -> rows of it and its ancestors */
    uint32_t chain[GMA_CHAIN_MAX];
    uint32_t chain_len, chain_name;
    int chain_valid;
    uint64_t chain_hit;    /* range_of_event's test: chain_id when valid, named and not --by range, else 0 */

    /* steps, tags, streams, windows */
    gma_vec steps;         /* gma_steprow */
    gma_map step_of;
    uint64_t last_step_key;
    gma_steprow *last_step_row; /* its row, NULL none: valid until steps grows,
                                 * which only step_row_slow does */
    uint64_t cur_step, cur_phase;
    int has_cur_step, phase_seen;
    uint64_t step_records;
    gma_vec tags;          /* gma_tagrow */
    gma_vec streams;       /* gma_streamrow */
    gma_map stream_of;
    gma_vec windows;       /* gma_window */
    int64_t cur_win;       /* open window index, -1 none */
    uint64_t cur_begin;    /* its begin time, and whether it is implicit */
    int cur_implicit;
    uint64_t win_from;     /* win_of's fast test: 0 implicit, cur_begin, UINT64_MAX none */
    int64_t baseline_win;  /* first selected window: the summary's baseline */
    int window_records;    /* a WINDOW_BEGIN/END was read */

    /* the framework layer (layer.h): fw 1 when BLOCK records are the
     * allocations and CUPTI's feed only the layer's numbers */
    gma_layer layer;
    int fw;
    int fw_cuda;   /* the trace has blocks: CUPTI's allocations feed the layer too */

    /* allocator sources */
    gma_srcstat src[GMT_SRC_COUNT_];
    gma_srcstat src_other;

    /* anomalies, all shown in the summary */
    uint64_t unmatched_frees, unmatched_free_bytes;
    uint64_t replaced_allocs;       /* alloc at an address already live */
    uint64_t unknown_ranges;        /* alloc naming a range instance not known */
    uint64_t pending_evicted;       /* waits given up (bounded memory) */
    uint64_t unattributed_end;      /* waits still open at the end */
    uint64_t outside_mem;           /* memory events outside every window */
    uint64_t unordered_mem;         /* memory events older than the previous one */
    uint64_t last_mem_ts;
    uint64_t bad_strings;
    uint64_t bytes_seen;            /* sizes of the records taken, all added (< GMA_BYTES_MAX) */
    uint64_t huge_refused;          /* records refused: their sizes would pass GMA_BYTES_MAX */

    /* --by alloc top-N (entry indices, a heap while bounded) */
    gma_vec arows;         /* uint32_t */
    int arow_time_key;     /* rows enter when their lifetime is known */
    const struct gma_sortkey *alloc_key; /* --by alloc's --sort key (view.h), set by gma_replay_open */

    /* consumers of the replay's events (consumer.h), in registration order */
    const struct gma_consumer *cons[GMA_MAX_CONSUMERS];
    void *cons_ctx[GMA_MAX_CONSUMERS]; /* the context each registered with */
    unsigned ncons;
    unsigned cons_needs; /* GMA_NEED_* of all of them */
    /* consumers of the rare records only (consumer.h: `rare`), off the
     * per-event loop, so that a run with only them stays plain */
    const struct gma_consumer *rare[GMA_MAX_CONSUMERS];
    void *rare_ctx[GMA_MAX_CONSUMERS];
    unsigned nrare;
    /* the consumers' state, optional */
    struct gma_chrome *chrome;
    struct gma_timeline *timeline;
    struct gma_category *category; /* with the PyTorch bridge (category.h), NULL none */
    struct gma_modules *modules;   /* modules and source lines (modules.h), NULL not collected */
    struct gma_sqlite *sqlite;     /* --sqlite (export_sqlite.h) */
    struct gma_aspill *aspill;     /* --by alloc --top 0: the rows spilled (arows.h), NULL kept */
    /* the --by alloc table of the spilled rows (set with aspill, so that the
     * view reaches the spill without depending on it) */
    int (*aspill_table)(const struct gma_replay *r, struct gma_table *t);

    int finished;
} gma_replay;

/* 1 when the trace's kernels are all known from their launches
 * (GMEMPROF_KERNELS=launch): kernel time columns then say "not collected"
 * (null) instead of a misleading 0. */
static inline int gma_launch_times_only(const gma_replay *r)
{
    return r->launch_kernels > 0 && r->gpu_kernels == 0;
}

/* ---- replay.c ----------------------------------------------------------- */

int gma_replay_init(gma_replay *r, const gma_opts *opt, const char *path);
void gma_replay_free(gma_replay *r);
/* Feeds one record. Returns 0, or -1 when analysis cannot go on (OOM). */
int gma_replay_record(gma_replay *r, const gmt_record *rec);
/* Ends the pass: closes what is open, resolves what waits. */
int gma_replay_finish(gma_replay *r, const gmt_reader_end *end);
/* Reads r->path to the end and finishes. Returns 0; 1 when the trace is
 * unreadable or invalid (message in msg; r must still be freed). */
int gma_replay_read(gma_replay *r, char *msg, size_t msgcap);
/* init + read. */
int gma_replay_file(gma_replay *r, const gma_opts *opt, const char *path, char *msg, size_t msgcap);
/* Trace time relative to the start, ns. */
static inline int64_t gma_rel(const gma_replay *r, uint64_t ts) { return (int64_t)(ts - r->origin); }
/* Whether a device is selected (--device). */
static inline int gma_dev_selected(const gma_replay *r, uint64_t d)
{
    return r->opt.device < 0 || (uint64_t)r->opt.device == d;
}
/* Whether a finished replay's entry was live at its device's peak: live
 * and made before it, or freed after it (kept for the peak). */
static inline int gma_entry_live_at_peak(const gma_replay *r, const gma_entry *e)
{
    return ((e->flags & GMA_E_LIVE) && e->ord <= r->dev[e->device].peak_ord) || (e->flags & GMA_E_KEEP_PEAK);
}

/* Allocator mode inferred from sources, with its one-line meaning. */
typedef struct gma_mode {
    const char *mode;
    const char *meaning;
} gma_mode;
gma_mode gma_allocator_mode(const gma_replay *r);
/* The source (GMT_SRC_*) holding most device bytes, pinned host memory
 * aside (the first of a tie); -1 when none holds any. */
int gma_main_source(const gma_replay *r);
/* That source when it is a framework allocator's that CUPTI's records tell
 * apart from other libraries (a pool per tensor, or expandable segments),
 * else -1; -1 also when the PyTorch bridge reported the tensors itself. */
int gma_framework_source(const gma_replay *r);
/* 1 when the trace's first records include a BLOCK (the PyTorch bridge). */
int gma_trace_has_blocks(const char *path);

/* True when the trace ended badly (cut, no trailer, error): the warning. */
int gma_trace_warning(const gma_replay *r, char *out, size_t cap);
/* True when --layer blocks met a trace without PyTorch blocks: the warning. */
int gma_layer_warning(const gma_replay *r, char *out, size_t cap);

#endif
