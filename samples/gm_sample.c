/* Helpers shared by the CUDA C samples; see gm_sample.h. */
#include "gm_sample.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#define GMS_MAX_ALLOCS 512
#define GMS_MAX_KCOUNTS 256
#define GMS_MAX_TAGS 256
#define GMS_MAX_STEPS 1024
#define GMS_MAX_PENDING 64
#define GMS_MAX_EXTRA 16

static const char *g_prog = "sample";
static CUcontext g_ctx;

typedef struct gms_alloc {
    char label[64];
    gms_source src;
    uint64_t bytes;
    uintptr_t ptr;
    char stream[16];
    int soft;
    long tid;
    int step;
    char consumer[64]; /* "" until resolved; stays "" when no kernel followed */
    int freed;
    long free_tid;
    int free_step;
} gms_alloc;

typedef struct gms_kcount {
    char name[64];
    int step;
    uint64_t count;
} gms_kcount;

typedef struct gms_tag {
    char name[64];
    int step;
    uint64_t live_bytes;
} gms_tag;

typedef struct gms_live_at {
    uint64_t count, bytes;
} gms_live_at;

typedef struct gms_extra {
    char key[32];
    char sval[128];
    uint64_t nval;
    int is_string;
} gms_extra;

static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;
static gms_alloc g_allocs[GMS_MAX_ALLOCS];
static int g_nallocs;
static gms_kcount g_kc[GMS_MAX_KCOUNTS];
static int g_nkc;
static gms_tag g_tags[GMS_MAX_TAGS];
static int g_ntags;
static gms_live_at g_live_at[GMS_MAX_STEPS + 1];
static int g_step;
static uint64_t g_copy_count[3], g_copy_bytes[3];
static uint64_t g_memset_count, g_memset_bytes;
static gms_extra g_extra[GMS_MAX_EXTRA];
static int g_nextra;

/* Allocations the calling thread noted since its previous launch. */
static _Thread_local int t_pending[GMS_MAX_PENDING];
static _Thread_local int t_npending;

static const char *const k_source_names[GMS_SRC_COUNT] = {
    "malloc", "async_pool", "vmm", "managed", "pinned_host",
};

const char *gms_source_name(gms_source s)
{
    return (unsigned)s < GMS_SRC_COUNT ? k_source_names[s] : "unknown";
}

long gms_gettid(void) { return (long)syscall(SYS_gettid); }

static void die(const char *fmt, const char *a)
{
    fprintf(stderr, "%s: ", g_prog);
    fprintf(stderr, fmt, a);
    fputc('\n', stderr);
    exit(1);
}

void gms_fail_rt(const char *what, cudaError_t e, const char *file, int line)
{
    fprintf(stderr, "%s: %s:%d: %s failed: %s (%d)\n", g_prog, file, line, what,
            cudaGetErrorString(e), (int)e);
    exit(1);
}

void gms_fail_cu(const char *what, CUresult e, const char *file, int line)
{
    const char *s = NULL;
    if (cuGetErrorString(e, &s) != CUDA_SUCCESS || !s)
        s = "unknown error";
    fprintf(stderr, "%s: %s:%d: %s failed: %s (%d)\n", g_prog, file, line, what, s, (int)e);
    exit(1);
}

static int parse_int(const char *opt, const char *v, int lo, int hi)
{
    char *end = NULL;
    errno = 0;
    long x = strtol(v, &end, 10);
    if (errno || !end || *end || x < lo || x > hi) {
        fprintf(stderr, "%s: %s wants an integer in [%d, %d], got '%s'\n", g_prog, opt, lo, hi, v);
        exit(2);
    }
    return (int)x;
}

void gms_parse_args(const char *prog, int argc, char **argv, gms_args *a)
{
    g_prog = prog;
    memset(a, 0, sizeof *a);
    a->threads = 4;
    a->steps = 10;
    a->style = "mark";
    for (int i = 1; i < argc; i += 2) {
        const char *o = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(o, "-h") || !strcmp(o, "--help")) {
            fprintf(stderr,
                    "usage: %s [--json FILE] [--say TEXT] [--exit N] [--threads N] [--steps N]\n"
                    "          [--style mark|numbered|range] [--sleep-ms N]\n",
                    prog);
            exit(0);
        }
        if (!v) {
            fprintf(stderr, "%s: option %s needs a value (or is unknown)\n", prog, o);
            exit(2);
        }
        if (!strcmp(o, "--json"))
            a->json = v;
        else if (!strcmp(o, "--say"))
            a->say = v;
        else if (!strcmp(o, "--exit"))
            a->exit_code = parse_int(o, v, 0, 255);
        else if (!strcmp(o, "--threads"))
            a->threads = parse_int(o, v, 1, 8);
        else if (!strcmp(o, "--steps"))
            a->steps = parse_int(o, v, 1, GMS_MAX_STEPS - 1);
        else if (!strcmp(o, "--style")) {
            if (strcmp(v, "mark") && strcmp(v, "numbered") && strcmp(v, "range")) {
                fprintf(stderr, "%s: --style wants mark, numbered or range, got '%s'\n", prog, v);
                exit(2);
            }
            a->style = v;
        } else if (!strcmp(o, "--sleep-ms"))
            a->sleep_ms = parse_int(o, v, 0, 60000);
        else {
            fprintf(stderr, "%s: unknown option %s\n", prog, o);
            exit(2);
        }
    }
}

void gms_init_device(const char *prog)
{
    g_prog = prog;
    int n = 0;
    cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess || n < 1) {
        fprintf(stderr, "%s: no usable CUDA device (%s); skipping\n", prog,
                e != cudaSuccess ? cudaGetErrorString(e) : "0 devices");
        exit(GMS_EXIT_SKIP);
    }
    GMS_RT(cudaSetDevice(0));
    GMS_RT(cudaFree(0)); /* creates the primary context */
    GMS_CU(cuCtxGetCurrent(&g_ctx));
    if (!g_ctx)
        die("%s", "no current context after cudaFree(0)");
}

void gms_bind_thread(void)
{
    GMS_RT(cudaSetDevice(0));
    GMS_CU(cuCtxSetCurrent(g_ctx));
}

/* One entry; '@' stands for the entry name, except in "@%p1", PTX's
 * predicate guard (the only '@' followed by '%'). Labels are function-scoped,
 * so every entry can reuse $L_done. */
static const char k_entry_tmpl[] =
    ".visible .entry @(\n"
    "    .param .u64 @_p,\n"
    "    .param .u32 @_v,\n"
    "    .param .u64 @_n\n"
    ")\n"
    "{\n"
    "    .reg .pred %p<2>;\n"
    "    .reg .b32 %r<6>;\n"
    "    .reg .b64 %rd<8>;\n"
    "    ld.param.u64 %rd1, [@_p];\n"
    "    ld.param.u32 %r1, [@_v];\n"
    "    ld.param.u64 %rd2, [@_n];\n"
    "    mov.u32 %r2, %ctaid.x;\n"
    "    mov.u32 %r3, %ntid.x;\n"
    "    mov.u32 %r4, %tid.x;\n"
    "    mul.wide.u32 %rd3, %r2, %r3;\n"
    "    cvt.u64.u32 %rd4, %r4;\n"
    "    add.u64 %rd3, %rd3, %rd4;\n"
    "    setp.ge.u64 %p1, %rd3, %rd2;\n"
    "    @%p1 bra $L_done;\n"
    "    cvta.to.global.u64 %rd5, %rd1;\n"
    "    shl.b64 %rd6, %rd3, 2;\n"
    "    add.u64 %rd7, %rd5, %rd6;\n"
    "    cvt.u32.u64 %r5, %rd3;\n"
    "    add.u32 %r5, %r5, %r1;\n"
    "    st.global.u32 [%rd7], %r5;\n"
    "$L_done:\n"
    "    ret;\n"
    "}\n";

static const char k_ptx_head[] = ".version 7.0\n.target sm_75\n.address_size 64\n\n";

char *gms_kernel_ptx(const char *const *names, int n)
{
    size_t cap = sizeof k_ptx_head + (size_t)n * (sizeof k_entry_tmpl + 16 * 64);
    char *ptx = malloc(cap);
    if (!ptx)
        die("%s", "out of host memory");
    size_t len = strlen(k_ptx_head);
    memcpy(ptx, k_ptx_head, len + 1);
    for (int i = 0; i < n; i++) {
        const char *name = names[i];
        size_t nl = strlen(name);
        for (const char *t = k_entry_tmpl; *t; t++) {
            if (*t == '@' && t[1] != '%') {
                if (len + nl + 1 >= cap)
                    die("%s", "PTX buffer too small");
                memcpy(ptx + len, name, nl);
                len += nl;
            } else {
                if (len + 2 >= cap)
                    die("%s", "PTX buffer too small");
                ptx[len++] = *t;
            }
        }
        ptx[len] = '\0';
    }
    return ptx;
}

void gms_load_kernels(gms_kernel *ks, int n)
{
    const char *names[16] = {0};
    if (n > 16)
        die("%s", "too many kernel kinds");
    for (int i = 0; i < n; i++)
        names[i] = ks[i].name;
    char *ptx = gms_kernel_ptx(names, n);
    CUmodule mod;
    char log[4096] = "";
    CUjit_option opts[2] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
    void *vals[2] = {log, (void *)(uintptr_t)sizeof log};
    CUresult e = cuModuleLoadDataEx(&mod, ptx, 2, opts, vals);
    if (e != CUDA_SUCCESS) {
        fprintf(stderr, "%s: PTX JIT failed: %s\n", g_prog, log);
        gms_fail_cu("cuModuleLoadDataEx", e, __FILE__, __LINE__);
    }
    free(ptx);
    for (int i = 0; i < n; i++)
        GMS_CU(cuModuleGetFunction(&ks[i].fn, mod, ks[i].name));
}

static void copy_str(char *dst, size_t cap, const char *src)
{
    snprintf(dst, cap, "%s", src ? src : "");
}

static int is_device_source(gms_source s)
{
    return s == GMS_SRC_MALLOC || s == GMS_SRC_ASYNC_POOL || s == GMS_SRC_VMM;
}

int gms_note_alloc(const char *label, gms_source src, uint64_t bytes, const void *ptr,
                   const char *stream_label, int soft)
{
    pthread_mutex_lock(&g_mu);
    if (g_nallocs >= GMS_MAX_ALLOCS)
        die("%s", "too many allocations noted");
    int idx = g_nallocs++;
    gms_alloc *a = &g_allocs[idx];
    memset(a, 0, sizeof *a);
    copy_str(a->label, sizeof a->label, label);
    a->src = src;
    a->bytes = bytes;
    a->ptr = (uintptr_t)ptr;
    copy_str(a->stream, sizeof a->stream, stream_label);
    a->soft = soft;
    a->tid = gms_gettid();
    a->step = g_step;
    pthread_mutex_unlock(&g_mu);
    if (t_npending >= GMS_MAX_PENDING)
        die("%s", "too many pending allocations on one thread");
    t_pending[t_npending++] = idx;
    return idx;
}

void gms_note_free(int idx)
{
    pthread_mutex_lock(&g_mu);
    g_allocs[idx].freed = 1;
    g_allocs[idx].free_tid = gms_gettid();
    g_allocs[idx].free_step = g_step;
    pthread_mutex_unlock(&g_mu);
}

void gms_note_memcpy(const char *kind, uint64_t bytes)
{
    int k = !strcmp(kind, "htod") ? 0 : !strcmp(kind, "dtoh") ? 1 : !strcmp(kind, "dtod") ? 2 : -1;
    if (k < 0)
        die("unknown memcpy kind %s", kind);
    pthread_mutex_lock(&g_mu);
    g_copy_count[k]++;
    g_copy_bytes[k] += bytes;
    pthread_mutex_unlock(&g_mu);
}

void gms_note_memset(uint64_t bytes)
{
    pthread_mutex_lock(&g_mu);
    g_memset_count++;
    g_memset_bytes += bytes;
    pthread_mutex_unlock(&g_mu);
}

/* Caller holds g_mu. */
static void live_now(uint64_t *count, uint64_t *bytes, uint64_t *dev_bytes)
{
    uint64_t c = 0, b = 0, d = 0;
    for (int i = 0; i < g_nallocs; i++) {
        if (g_allocs[i].freed)
            continue;
        c++;
        b += g_allocs[i].bytes;
        if (is_device_source(g_allocs[i].src))
            d += g_allocs[i].bytes;
    }
    if (count)
        *count = c;
    if (bytes)
        *bytes = b;
    if (dev_bytes)
        *dev_bytes = d;
}

uint64_t gms_live_device_bytes(void)
{
    uint64_t d;
    pthread_mutex_lock(&g_mu);
    live_now(NULL, NULL, &d);
    pthread_mutex_unlock(&g_mu);
    return d;
}

void gms_note_tag(const char *name)
{
    pthread_mutex_lock(&g_mu);
    if (g_ntags >= GMS_MAX_TAGS)
        die("%s", "too many tags");
    gms_tag *t = &g_tags[g_ntags++];
    copy_str(t->name, sizeof t->name, name);
    t->step = g_step;
    live_now(NULL, NULL, &t->live_bytes);
    pthread_mutex_unlock(&g_mu);
}

void gms_note_step(void)
{
    pthread_mutex_lock(&g_mu);
    if (g_step + 1 > GMS_MAX_STEPS)
        die("%s", "too many steps");
    g_step++;
    live_now(&g_live_at[g_step].count, &g_live_at[g_step].bytes, NULL);
    pthread_mutex_unlock(&g_mu);
}

int gms_current_step(void)
{
    pthread_mutex_lock(&g_mu);
    int s = g_step;
    pthread_mutex_unlock(&g_mu);
    return s;
}

void gms_launch(const gms_kernel *k, CUstream s, void *p, uint32_t v, uint64_t n_words)
{
    CUdeviceptr dp = (CUdeviceptr)(uintptr_t)p;
    void *params[3] = {&dp, &v, &n_words};
    unsigned block = 256;
    uint64_t grid = (n_words + block - 1) / block;
    if (grid == 0)
        grid = 1;
    if (grid > 0x7fffffffull)
        die("%s", "kernel grid too large");
    GMS_CU(cuLaunchKernel(k->fn, (unsigned)grid, 1, 1, block, 1, 1, 0, s, params, NULL));

    pthread_mutex_lock(&g_mu);
    for (int i = 0; i < t_npending; i++)
        copy_str(g_allocs[t_pending[i]].consumer, sizeof g_allocs[0].consumer, k->name);
    t_npending = 0;
    int found = 0;
    for (int i = 0; i < g_nkc; i++) {
        if (g_kc[i].step == g_step && !strcmp(g_kc[i].name, k->name)) {
            g_kc[i].count++;
            found = 1;
            break;
        }
    }
    if (!found) {
        if (g_nkc >= GMS_MAX_KCOUNTS)
            die("%s", "too many kernel kinds");
        copy_str(g_kc[g_nkc].name, sizeof g_kc[0].name, k->name);
        g_kc[g_nkc].step = g_step;
        g_kc[g_nkc].count = 1;
        g_nkc++;
    }
    pthread_mutex_unlock(&g_mu);
}

void gms_note_number(const char *key, uint64_t value)
{
    pthread_mutex_lock(&g_mu);
    if (g_nextra < GMS_MAX_EXTRA) {
        copy_str(g_extra[g_nextra].key, sizeof g_extra[0].key, key);
        g_extra[g_nextra].nval = value;
        g_extra[g_nextra].is_string = 0;
        g_nextra++;
    }
    pthread_mutex_unlock(&g_mu);
}

void gms_note_string(const char *key, const char *value)
{
    pthread_mutex_lock(&g_mu);
    if (g_nextra < GMS_MAX_EXTRA) {
        copy_str(g_extra[g_nextra].key, sizeof g_extra[0].key, key);
        copy_str(g_extra[g_nextra].sval, sizeof g_extra[0].sval, value);
        g_extra[g_nextra].is_string = 1;
        g_nextra++;
    }
    pthread_mutex_unlock(&g_mu);
}

static void json_str(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            fprintf(f, "\\%c", c);
        else if (c < 0x20)
            fprintf(f, "\\u%04x", c);
        else
            fputc(c, f);
    }
    fputc('"', f);
}

static int write_json(const char *path, const char *sample)
{
    FILE *f = fopen(path, "w");
    if (!f) {
        fprintf(stderr, "%s: cannot write %s: %s\n", g_prog, path, strerror(errno));
        return -1;
    }
    pthread_mutex_lock(&g_mu);
    fprintf(f, "{\n  \"sample\": ");
    json_str(f, sample);
    fprintf(f, ",\n  \"pid\": %ld,\n  \"main_tid\": %ld,\n  \"device\": 0,\n  \"steps\": %d",
            (long)getpid(), (long)getpid(), g_step);
    for (int i = 0; i < g_nextra; i++) {
        fprintf(f, ",\n  ");
        json_str(f, g_extra[i].key);
        fprintf(f, ": ");
        if (g_extra[i].is_string)
            json_str(f, g_extra[i].sval);
        else
            fprintf(f, "%" PRIu64, g_extra[i].nval);
    }
    fprintf(f, ",\n  \"allocs\": [");
    for (int i = 0; i < g_nallocs; i++) {
        const gms_alloc *a = &g_allocs[i];
        fprintf(f, "%s\n    {\"label\": ", i ? "," : "");
        json_str(f, a->label);
        fprintf(f, ", \"source\": \"%s\", \"bytes\": %" PRIu64 ", \"tid\": %ld, \"step\": %d",
                gms_source_name(a->src), a->bytes, a->tid, a->step);
        fprintf(f, ", \"consumer\": ");
        if (a->consumer[0])
            json_str(f, a->consumer);
        else
            fprintf(f, "null");
        fprintf(f, ", \"stream\": ");
        if (a->stream[0])
            json_str(f, a->stream);
        else
            fprintf(f, "null");
        fprintf(f, ", \"freed\": %s", a->freed ? "true" : "false");
        if (a->freed)
            fprintf(f, ", \"free_tid\": %ld, \"free_step\": %d", a->free_tid, a->free_step);
        fprintf(f, ", \"soft\": %s}", a->soft ? "true" : "false");
    }
    fprintf(f, "\n  ],\n  \"totals\": {");
    int first = 1;
    for (int s = 0; s < GMS_SRC_COUNT; s++) {
        uint64_t na = 0, ba = 0, nf = 0, bf = 0;
        for (int i = 0; i < g_nallocs; i++) {
            if (g_allocs[i].src != (gms_source)s)
                continue;
            na++;
            ba += g_allocs[i].bytes;
            if (g_allocs[i].freed) {
                nf++;
                bf += g_allocs[i].bytes;
            }
        }
        if (!na)
            continue;
        fprintf(f,
                "%s\n    \"%s\": {\"allocs\": %" PRIu64 ", \"alloc_bytes\": %" PRIu64
                ", \"frees\": %" PRIu64 ", \"free_bytes\": %" PRIu64 "}",
                first ? "" : ",", gms_source_name((gms_source)s), na, ba, nf, bf);
        first = 0;
    }
    fprintf(f, "\n  },\n  \"kernels\": [");
    for (int i = 0; i < g_nkc; i++) {
        fprintf(f, "%s\n    {\"name\": ", i ? "," : "");
        json_str(f, g_kc[i].name);
        fprintf(f, ", \"step\": %d, \"count\": %" PRIu64 "}", g_kc[i].step, g_kc[i].count);
    }
    static const char *const ck[3] = {"htod", "dtoh", "dtod"};
    fprintf(f, "\n  ],\n  \"memcpy\": {");
    for (int k = 0; k < 3; k++)
        fprintf(f, "%s\"%s\": {\"count\": %" PRIu64 ", \"bytes\": %" PRIu64 "}", k ? ", " : "",
                ck[k], g_copy_count[k], g_copy_bytes[k]);
    fprintf(f, "},\n  \"memset\": {\"count\": %" PRIu64 ", \"bytes\": %" PRIu64 "},\n",
            g_memset_count, g_memset_bytes);
    fprintf(f, "  \"tags\": [");
    for (int i = 0; i < g_ntags; i++) {
        fprintf(f, "%s\n    {\"name\": ", i ? "," : "");
        json_str(f, g_tags[i].name);
        fprintf(f, ", \"step\": %d, \"live_bytes\": %" PRIu64 "}", g_tags[i].step,
                g_tags[i].live_bytes);
    }
    fprintf(f, "\n  ],\n  \"live_at_step_start\": [");
    for (int s = 0; s <= g_step; s++)
        fprintf(f, "%s\n    {\"step\": %d, \"count\": %" PRIu64 ", \"bytes\": %" PRIu64 "}",
                s ? "," : "", s, g_live_at[s].count, g_live_at[s].bytes);
    uint64_t lc, lb;
    live_now(&lc, &lb, NULL);
    fprintf(f, "\n  ],\n  \"live_at_end\": {\"count\": %" PRIu64 ", \"bytes\": %" PRIu64 "}\n}\n",
            lc, lb);
    pthread_mutex_unlock(&g_mu);
    if (fclose(f) != 0) {
        fprintf(stderr, "%s: writing %s failed: %s\n", g_prog, path, strerror(errno));
        return -1;
    }
    return 0;
}

int gms_finish(const char *sample, const gms_args *a)
{
    if (a->json && write_json(a->json, sample) != 0)
        return 1;
    if (a->say) {
        fputs(a->say, stdout);
        fputc('\n', stdout);
    }
    if (fflush(stdout) != 0)
        return 1;
    return a->exit_code;
}
