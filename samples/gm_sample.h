/*
 * Shared helpers for the CUDA C samples: error checks, a PTX module built at
 * run time (no nvcc needed), and the book-keeping that lets each sample write
 * down exactly what it did (every allocation with its size, source, host
 * thread, stream, step and consumer kernel; every copy, memset, kernel, tag
 * and step) as a JSON file that tests/gpu/check_trace compares with a trace.
 *
 * Conventions every sample follows:
 *  - stdout stays empty except for one final line, and only when asked
 *    (--say TEXT); errors go to stderr;
 *  - --json FILE writes the expectations; --exit N makes the program end
 *    with status N (to check that the profiler passes it through);
 *  - exit status 77 means "no usable GPU" (CTest's SKIP_RETURN_CODE).
 *
 * The consumer rule mirrors docs/attribution.md: an allocation belongs to
 * the next kernel that the same host thread launches. gms_launch() resolves
 * every allocation noted by the calling thread since its previous launch.
 */
#ifndef GMEMPROF_SAMPLES_GM_SAMPLE_H
#define GMEMPROF_SAMPLES_GM_SAMPLE_H

#include <stddef.h>
#include <stdint.h>

#include <cuda.h>
#include <cuda_runtime_api.h>

#define GMS_MIB (1024ull * 1024ull)
#define GMS_KIB 1024ull

/* Exit code meaning "skip": no device, no driver. */
#define GMS_EXIT_SKIP 77

void gms_fail_rt(const char *what, cudaError_t e, const char *file, int line);
void gms_fail_cu(const char *what, CUresult e, const char *file, int line);

/* Abort the sample (exit 1) with one line on stderr when a call fails. */
#define GMS_RT(call)                                                                               \
    do {                                                                                           \
        cudaError_t gms_e_ = (call);                                                               \
        if (gms_e_ != cudaSuccess)                                                                 \
            gms_fail_rt(#call, gms_e_, __FILE__, __LINE__);                                        \
    } while (0)
#define GMS_CU(call)                                                                               \
    do {                                                                                           \
        CUresult gms_e_ = (call);                                                                  \
        if (gms_e_ != CUDA_SUCCESS)                                                                \
            gms_fail_cu(#call, gms_e_, __FILE__, __LINE__);                                        \
    } while (0)

/* Command line shared by all samples. */
typedef struct gms_args {
    const char *json;  /* --json FILE: write expectations there */
    const char *say;   /* --say TEXT: the only line printed on stdout, at the end */
    int exit_code;     /* --exit N */
    int threads;       /* --threads N (threads sample) */
    int steps;         /* --steps N (step samples) */
    const char *style; /* --style mark|numbered|range (nvtx_steps) */
    int sleep_ms;      /* --sleep-ms N: pause per step (time schedules) */
} gms_args;

/* Parses argv; prints usage on stderr and exits 2 on a bad option. */
void gms_parse_args(const char *prog, int argc, char **argv, gms_args *a);

/* Device 0: exits 77 when no device can be used, then creates the primary
 * context (cudaFree(0)) and makes it current. */
void gms_init_device(const char *prog);
/* Makes the primary context current on the calling thread (other threads). */
void gms_bind_thread(void);

/* A kernel of the run-time module: `name` is its PTX entry name, which is
 * also the kernel name CUPTI reports (plain C linkage, no mangling). */
typedef struct gms_kernel {
    const char *name;
    CUfunction fn;
} gms_kernel;

/* Builds one PTX module holding an entry per name (each writes
 * p[i] = v + i for i < n, 32-bit words) and loads it. */
void gms_load_kernels(gms_kernel *ks, int n);
/* The PTX of n kernels with the given names, each
 * `(u64 p, u32 v, u64 n)`: writes p[i] = i + v for i < n, one thread per
 * word. malloc'd; the caller frees it. */
char *gms_kernel_ptx(const char *const *names, int n);

/* Allocation source names, as check_trace and trace_format.h spell them. */
typedef enum gms_source {
    GMS_SRC_MALLOC = 0,
    GMS_SRC_ASYNC_POOL,
    GMS_SRC_VMM,
    GMS_SRC_MANAGED,
    GMS_SRC_PINNED_HOST,
    GMS_SRC_COUNT
} gms_source;
const char *gms_source_name(gms_source s);

/* Book-keeping. All functions are thread-safe. `stream_label` names the
 * stream an async allocation used ("s1"), NULL for none: check_trace checks
 * that equal labels map to one CUPTI stream id and different labels to
 * different ids. `soft` marks fields (tid, consumer) the profiler may not
 * be able to know (VMM: CUPTI gives no correlation id); they only warn. */
int gms_note_alloc(const char *label, gms_source src, uint64_t bytes, const void *ptr,
                   const char *stream_label, int soft);
void gms_note_free(int idx);
void gms_note_memcpy(const char *kind, uint64_t bytes); /* "htod", "dtoh", "dtod" */
void gms_note_memset(uint64_t bytes);
/* A tag snapshot: records the device bytes live now (malloc/async/VMM). */
void gms_note_tag(const char *name);
/* A step boundary: step+1 begins; records what is live at its start. */
void gms_note_step(void);
int gms_current_step(void);
uint64_t gms_live_device_bytes(void);

/* Launches k over n 32-bit words of p on stream s (grid of 256-thread
 * blocks) and resolves the consumer of every allocation this thread noted
 * since its previous launch. */
void gms_launch(const gms_kernel *k, CUstream s, void *p, uint32_t v, uint64_t n_words);

/* Free-form top-level fields for the JSON ("granularity", ...). */
void gms_note_number(const char *key, uint64_t value);
void gms_note_string(const char *key, const char *value);

/* Writes the expectations (when --json was given), prints --say, returns
 * the --exit code. */
int gms_finish(const char *sample, const gms_args *a);

long gms_gettid(void);

#endif
