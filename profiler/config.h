/*
 * GMEMPROF_* settings. Pure logic: reads through a getenv-like function so a
 * test can feed any environment, and never prints: problems are returned as
 * human-readable lines that the caller prefixes with "gmemprof: ".
 *
 * Rule: a bad value never stops the host program. A bad optional setting
 * falls back to its default (one line says so); a bad output pattern turns
 * the profiler off (config->enabled = 0).
 */
#ifndef GMEMPROF_PROFILER_CONFIG_H
#define GMEMPROF_PROFILER_CONFIG_H

#include <stddef.h>
#include <stdint.h>

#include "schedule.h"

#define GMP_PATH_MAX 4096
#define GMP_NAME_MAX 128
#define GMP_DIAG_MAX 8      /* at most this many problem lines are kept */
#define GMP_DIAG_LINE 320

typedef struct gmp_diag {
    int count;                               /* lines kept */
    int lost;                                /* lines beyond GMP_DIAG_MAX */
    char line[GMP_DIAG_MAX][GMP_DIAG_LINE];  /* without the "gmemprof: " prefix */
} gmp_diag;

typedef enum gmp_log_level { GMP_LOG_QUIET = 0, GMP_LOG_INFO = 1, GMP_LOG_DEBUG = 2 } gmp_log_level;

/* GMEMPROF_KERNELS: what is recorded about kernels in warmup/active steps. */
enum gmp_kernels_mode {
    GMP_KERNELS_NONE = 0,   /* 0/no: allocations only (no kernel, memcpy, memset) */
    GMP_KERNELS_GPU = 1,    /* 1/yes/gpu: CUPTI kernel activity: GPU start/end, registers... */
    GMP_KERNELS_LAUNCH = 2  /* launch: from the launch callbacks; no CUPTI kernel activity */
};

/* GMEMPROF_STEP_SOURCE: what ends a training step (gmemprof_step() always
 * does, and then it alone). AUTO: an NVTX step marker once the program
 * sends one, until then the end of each optimizer step that follows a
 * backward pass (the PyTorch bridge). */
enum gmp_step_source_mode {
    GMP_STEPS_AUTO = 0,
    GMP_STEPS_NVTX = 1,      /* NVTX step markers only */
    GMP_STEPS_OPTIMIZER = 2, /* optimizer steps only */
    GMP_STEPS_NONE = 3       /* neither: without gmemprof_step(), the whole run is one window */
};

typedef struct gmp_config {
    int enabled;                      /* GMEMPROF_ENABLE=0 turns everything off */
    char output[GMP_PATH_MAX];        /* GMEMPROF_OUTPUT pattern: %p %h %r %t %% */
    gmp_sched_spec schedule;          /* GMEMPROF_SCHEDULE */
    char step_marker[GMP_NAME_MAX];   /* GMEMPROF_STEP_MARKER, default "step" */
    char tag_prefix[GMP_NAME_MAX];    /* GMEMPROF_TAG_PREFIX, default "tag:" */
    uint64_t sample_period_ms;        /* GMEMPROF_SAMPLE_MS: driver memory samples in active windows; 0 off */
    uint64_t flush_period_ms;         /* GMEMPROF_FLUSH_MS: frame end at least this often, default 1000 */
    uint64_t host_buffer_mb;          /* GMEMPROF_HOST_BUFFER_MB: all host buffers together, default 64 */
    uint64_t cupti_buffer_kb;         /* GMEMPROF_CUPTI_BUFFER_KB: one activity buffer, default 1024 */
    uint64_t device_buffer_kb;        /* GMEMPROF_DEVICE_BUFFER_KB: CUPTI device buffer size, default 1024 */
    int kernels;                      /* GMEMPROF_KERNELS: GMP_KERNELS_* (default LAUNCH) */
    int zstd_level;                   /* GMEMPROF_ZSTD_LEVEL, 1..19, default 3 */
    gmp_log_level log;                /* GMEMPROF_LOG=quiet|info|debug, default info */
    /* Added (additive): GMEMPROF_SUMMARY_FILE, set by the launcher; "" = none.
     * At exit the library appends one line (profiler/write/summary.h) to it. */
    char summary_file[GMP_PATH_MAX];
    /* GMEMPROF_TORCH=0 keeps the PyTorch bridge out (default 1: loaded when
     * the process has PyTorch's CUDA allocator, profiler/sources/torch.h). */
    int torch;
    /* GMEMPROF_TORCH_BRIDGE: the bridge library to load instead of the one
     * beside libgmemprof.so ("" = that one). */
    char torch_bridge[GMP_PATH_MAX];
    int step_source;                  /* GMEMPROF_STEP_SOURCE: GMP_STEPS_* (default AUTO) */
    int clock;                        /* GMEMPROF_CLOCK: GMP_CLOCK_* (clock.h; default AUTO) */
    /* GMEMPROF_TORCH_OPS=0: no op ranges from the bridge (default 1: in
     * warmup and active steps, each op PyTorch records is a range). */
    int torch_ops;
    /* GMEMPROF_TORCH_MODULES=0: no module ranges (default 1). */
    int torch_modules;
    /* GMEMPROF_TORCH_MODULE_HOOKS=1: module calls seen through PyTorch's
     * global module hooks instead of a wrapper of nn.Module.__call__
     * (default 0). */
    int torch_module_hooks;
    /* GMEMPROF_STACKS=python: each tensor block carries the whole Python
     * stack besides its innermost frame (default "none"; torch.c checks). */
    char stacks[GMP_NAME_MAX];
    /* The flight recorder (docs/user-guide.md, "When CUDA runs out of
     * memory"): on when GMEMPROF_ON_OOM=1 or GMEMPROF_SCHEDULE starts with
     * on-oom. Alone (the schedule is the whole run) nothing is written until
     * a failure; beside a schedule of windows the trace is written as
     * without it, and a failure's dump goes to a file of its own
     * (gmp_config_oom_beside). */
    int on_oom;
    /* The recorder keeps KERNEL/MEMCPY/MEMSET records: only when
     * GMEMPROF_KERNELS was given (not "none"); they cost the most. */
    int oom_kernels;
    uint64_t oom_steps;   /* GMEMPROF_OOM_STEPS: steps kept before the failing one, default 3 */
    uint64_t oom_seconds; /* GMEMPROF_OOM_SECONDS: seconds kept when the program makes no steps, default 30 */
    uint64_t oom_max_mb;  /* GMEMPROF_OOM_MAX_MB: the ring's hard cap, default 256 */
    uint64_t oom_dumps;   /* GMEMPROF_OOM_DUMPS: dumps written at most, default 3 */
    int oom_at_exit;      /* GMEMPROF_OOM_AT_EXIT=1: a dump at the end when none was written */
    int oom_signal;       /* GMEMPROF_OOM_SIGNAL=1: SIGUSR2 writes a dump */
    /* PyTorch's caching allocator settings as the process ran with them
     * (PYTORCH_ALLOC_CONF, and its older name PYTORCH_CUDA_ALLOC_CONF),
     * "" unset: the header records them, so that an out-of-memory dump is
     * explained against the settings in force (analyzer/views/oom.c). */
    char alloc_conf[GMP_NAME_MAX];
    char cuda_alloc_conf[GMP_NAME_MAX];
} gmp_config;

typedef const char *(*gmp_getenv_fn)(const char *name, void *ctx);

/* Fills *cfg from the environment seen through get (NULL: getenv). Returns
 * the number of problems (their lines are in *diag). */
int gmp_config_load(gmp_config *cfg, gmp_getenv_fn get, void *ctx, gmp_diag *diag);
void gmp_config_defaults(gmp_config *cfg);

/* Expands %p pid, %h host, %r rank (RANK, else LOCAL_RANK, else 0), %t start
 * time (YYYYmmdd-HHMMSS, UTC), %% a percent. Returns 0, or -1 with a line in
 * *diag when the result does not fit or the pattern has an unknown escape. */
int gmp_config_expand_output(const char *pattern, char *out, size_t cap, long pid, const char *host,
                             long rank, uint64_t start_unix_ns, gmp_diag *diag);

/* "key=value;..." of the effective settings, for the trace header. */
size_t gmp_config_describe(const gmp_config *cfg, char *out, size_t cap);

void gmp_diag_add(gmp_diag *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* ---- added (additive) ------------------------------------------------------ */

/* Notes on the functions above: gmp_config_load appends to *diag (zero it
 * first; NULL discards the lines) and counts every problem, kept or lost.
 * An empty variable is the same as an unset one. A GMEMPROF_OUTPUT ending
 * in '/' is a directory: the default file name is appended. */

/* Checks one value of one setting (e.g. the launcher's --sample-ms before it
 * sets GMEMPROF_SAMPLE_MS). 0 when valid (or empty); -1 with a message in err
 * (the variable, the value, what is accepted). */
int gmp_config_check_value(const char *name, const char *value, char *err, size_t cap);

/* Adds one line per GMEMPROF_* variable of envp that is not a setting (a
 * typo would otherwise be ignored silently), with the nearest name as a
 * suggestion. GMEMPROF_TEST_* is reserved for test harnesses and skipped.
 * Returns the number of such variables. */
int gmp_config_check_names(char *const *envp, gmp_diag *diag);

/* A non-negative integer variable (RANK, LOCAL_RANK, WORLD_SIZE), -1 when
 * unset or not a number in 0..2^31-1. get NULL: getenv. */
long gmp_config_env_int(gmp_getenv_fn get, void *ctx, const char *name);
/* The rank for %r: RANK, else LOCAL_RANK, else 0. */
long gmp_config_rank(gmp_getenv_fn get, void *ctx); /* RANK, else LOCAL_RANK, else -1 */

/* 1 when the flight recorder runs beside a trace: on_oom with a schedule of
 * windows (steps, time or capture). The trace is then written as without
 * the recorder, and each dump goes to a file of its own beside it. 0 with
 * the recorder alone (whole run: no trace) or without the recorder. */
int gmp_config_oom_beside(const gmp_config *cfg);

/* 1 when an NVTX mark/range name is a step boundary: it equals the step
 * marker, or starts with it followed by ' ', ':', '#', '_', '-' or a digit
 * ("step", "step 12", "step:3", "step_4"; not "steps", "stepper").
 * Case-sensitive. */
int gmp_config_is_step_marker(const gmp_config *cfg, const char *name);
/* 1 when name starts with the tag prefix and has a non-blank rest; *tag then
 * points into name, after the prefix and any blanks ("tag: x" -> "x"). */
int gmp_config_tag_name(const gmp_config *cfg, const char *name, const char **tag);

#endif
