/*
 * End-to-end tests of libgmemprof.so against the fake CUPTI: runs e2e_app
 * (or e2e_search, or the launcher) for one scenario in a child process,
 * then checks its exit status, its stdout/stderr and the trace it left,
 * read back with the real gmt_reader. Expected values come from the
 * scenario's construction (e2e_app.c) and the facts the app wrote
 * (thread ids, correlation ids): nothing is copied from a previous run.
 *
 *   e2e_test SCENARIO APP SEARCH LAUNCHER LIB WORKDIR
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cupti.h>

#include "gmt_io.h"
#include "torch_bridge.h"
#include "../check.h"

#define MIB (1024ull * 1024ull)
#define GIB (1024ull * MIB)

static const char *g_app, *g_search, *g_launcher, *g_lib, *g_work;

/* ---- facts ----------------------------------------------------------------- */

typedef struct facts {
    int n;
    char key[1024][48];
    uint64_t val[1024];
} facts;

static facts g_facts;

static void facts_load(const char *path)
{
    memset(&g_facts, 0, sizeof g_facts);
    FILE *f = fopen(path, "r");
    char line[256];
    if (!f)
        return;
    while (fgets(line, sizeof line, f) && g_facts.n < 1024) {
        char *eq = strchr(line, '=');
        if (!eq)
            continue;
        *eq = '\0';
        if (strlen(line) >= sizeof g_facts.key[0])
            continue;
        memcpy(g_facts.key[g_facts.n], line, strlen(line) + 1);
        g_facts.val[g_facts.n++] = strtoull(eq + 1, NULL, 10);
    }
    fclose(f);
}

static int has_fact(const char *k)
{
    for (int i = 0; i < g_facts.n; i++)
        if (strcmp(g_facts.key[i], k) == 0)
            return 1;
    return 0;
}

static uint64_t F(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static uint64_t F(const char *fmt, ...)
{
    char k[64];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(k, sizeof k, fmt, ap);
    va_end(ap);
    int i = 0;
    while (i < g_facts.n && strcmp(g_facts.key[i], k) != 0)
        i++;
    CHECK(i < g_facts.n, "missing fact %s", k);
    return i < g_facts.n ? g_facts.val[i] : UINT64_MAX;
}

/* ---- running a program ------------------------------------------------------ */

typedef struct run {
    int status;
    pid_t pid;
    char *out, *err;
    char dir[1024];
} run;

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return strdup("");
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *b = malloc((size_t)n + 1);
    size_t k = fread(b, 1, (size_t)n, f);
    b[k] = '\0';
    fclose(f);
    return b;
}

static void rm_tree(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    char p[2048];
    if (!d)
        return;
    while ((e = readdir(d))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
        unlink(p);
    }
    closedir(d);
}

/* Starts argv with the extra environment (NAME=VALUE, NULL-terminated) in a
 * clean work dir; GMEMPROF_OUTPUT defaults to DIR/trace-%p.zst. */
static void start_prog(const char *scenario, char *const *argv, const char *const *env, run *r)
{
    memset(r, 0, sizeof *r);
    snprintf(r->dir, sizeof r->dir, "%s/%s", g_work, scenario);
    mkdir(g_work, 0755);
    mkdir(r->dir, 0755);
    rm_tree(r->dir);
    char outp[1200], errp[1200], factp[1200], outpat[1200];
    snprintf(outp, sizeof outp, "%s/stdout", r->dir);
    snprintf(errp, sizeof errp, "%s/stderr", r->dir);
    snprintf(factp, sizeof factp, "%s/facts", r->dir);
    snprintf(outpat, sizeof outpat, "%s/trace-%%p.zst", r->dir);
    pid_t pid = fork();
    if (pid == 0) {
        for (char **e = environ; *e; e++)
            ; /* the test's own environment (LD_LIBRARY_PATH) is kept */
        unsetenv("CUDA_INJECTION64_PATH");
        unsetenv("NVTX_INJECTION64_PATH");
        setenv("E2E_LIB", g_lib, 1);
        setenv("E2E_FACTS", factp, 1);
        setenv("GMEMPROF_OUTPUT", outpat, 1);
        /* The scenarios replay CUPTI kernel activity, which GPU mode
         * collects; a test of the default (launch) mode passes
         * GMEMPROF_KERNELS= (empty: the default) or its own value. */
        setenv("GMEMPROF_KERNELS", "gpu", 1);
        for (int i = 0; env && env[i]; i++)
            putenv((char *)env[i]);
        int o = open(outp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        int e = open(errp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        dup2(o, 1);
        dup2(e, 2);
        execv(argv[0], argv);
        _exit(127);
    }
    r->pid = pid;
}

/* The end of a program started by start_prog, whose wait status is st. */
static void collect_prog(const char *scenario, run *r, int st)
{
    char outp[1200], errp[1200], factp[1200];
    snprintf(outp, sizeof outp, "%s/stdout", r->dir);
    snprintf(errp, sizeof errp, "%s/stderr", r->dir);
    snprintf(factp, sizeof factp, "%s/facts", r->dir);
    r->status = st;
    /* kept reachable here (and freed on the next run) */
    static char *last_out, *last_err;
    free(last_out);
    free(last_err);
    r->out = last_out = slurp(outp);
    r->err = last_err = slurp(errp);
    facts_load(factp);
    fprintf(stderr, "--- %s stderr ---\n%s--- end ---\n", scenario, r->err);
}

/* Waits for the program, every step_ms, at most limit_ms: the wait status,
 * or -1 after killing a program that hung (counted as a failure). */
static int wait_prog(const char *scenario, pid_t pid, unsigned step_ms, unsigned limit_ms)
{
    int st = 0;
    for (unsigned waited = 0; waited < limit_ms; waited += step_ms) {
        if (waitpid(pid, &st, WNOHANG) == pid)
            return st;
        struct timespec ts = {(time_t)(step_ms / 1000), (long)(step_ms % 1000) * 1000000L};
        nanosleep(&ts, NULL);
    }
    fprintf(stderr, "%s: the program hung; killing it\n", scenario);
    kill(pid, SIGKILL);
    waitpid(pid, &st, 0);
    CHECK(!"the program hung", "%s", scenario);
    return st;
}

static void run_prog(const char *scenario, char *const *argv, const char *const *env, run *r)
{
    start_prog(scenario, argv, env, r);
    /* 60 s: a hang is a failure, not a stuck CI. E2E_HANG_S raises it for
     * runs made by hand (the 10^8-event long run takes minutes). */
    const char *hs = getenv("E2E_HANG_S");
    unsigned limit = hs && atoi(hs) > 0 ? (unsigned)atoi(hs) * 1000u : 60000u;
    collect_prog(scenario, r, wait_prog(scenario, r->pid, 100, limit));
}

/* dir: the test's own work directory (tests run in parallel). */
static void run_app_in(const char *dir, const char *scenario, const char *const *env, run *r)
{
    char *argv[] = {(char *)g_app, (char *)scenario, NULL};
    run_prog(dir, argv, env, r);
}

static void run_app(const char *scenario, const char *const *env, run *r) { run_app_in(scenario, scenario, env, r); }

static int exited(const run *r, int code) { return WIFEXITED(r->status) && WEXITSTATUS(r->status) == code; }
static int signaled(const run *r, int sig) { return WIFSIGNALED(r->status) && WTERMSIG(r->status) == sig; }

static int count_lines(const char *s, const char *prefix)
{
    int n = 0;
    size_t pl = strlen(prefix);
    for (const char *p = s; *p;) {
        if (strncmp(p, prefix, pl) == 0)
            n++;
        const char *nl = strchr(p, '\n');
        if (!nl)
            break;
        p = nl + 1;
    }
    return n;
}

static void trace_path(const run *r, pid_t pid, char *out, size_t cap)
{
    snprintf(out, cap, "%s/trace-%d.zst", r->dir, (int)pid);
}

static int file_exists(const char *p)
{
    struct stat sb;
    return stat(p, &sb) == 0;
}

/* ---- reading a trace --------------------------------------------------------- */

typedef struct rec {
    gmt_type type;
    union {
        gmt_mem mem;
        gmt_kernel kernel;
        gmt_copy copy;
        gmt_range range;
        gmt_mark mark;
        gmt_step step;
        gmt_window_begin wb;
        gmt_window_end we;
        gmt_memsample sample;
        gmt_stats stats;
        gmt_trailer trailer;
        gmt_block block;
        gmt_oom oom;
        gmt_mem live;
        uint64_t str; /* STRING: its id */
        struct {
            uint64_t device, total_mem, sm_count, cc_major, cc_minor;
            char name[64];
        } dev;
        struct {
            uint64_t pid, ppid, cupti_version, driver_version;
            int64_t rank;
        } hdr;
        struct {
            uint64_t ts, name, step, ndev, has_framework;
            gmt_tag_device dev[2];
        } tag;
    } u;
} rec;

typedef struct trace {
    rec *r;
    size_t n, cap;
    char **str;
    size_t nstr;
    gmt_reader_end end;
    int ok;
} trace;

static void trace_free(trace *t)
{
    for (size_t i = 0; i < t->nstr; i++)
        free(t->str[i]);
    free(t->str);
    free(t->r);
    memset(t, 0, sizeof *t);
}

static int trace_load(const char *path, trace *t)
{
    memset(t, 0, sizeof *t);
    gmt_reader *rd = gmt_reader_open(path);
    if (!rd)
        return -1;
    static gmt_record g; /* 2.6 KB */
    int rc;
    while ((rc = gmt_reader_next(rd, &g)) == 1) {
        if (g.type == GMT_REC_STRING) {
            if (g.u.string.id >= t->nstr) {
                size_t nn = g.u.string.id + 64;
                t->str = realloc(t->str, nn * sizeof *t->str);
                memset(t->str + t->nstr, 0, (nn - t->nstr) * sizeof *t->str);
                t->nstr = nn;
            }
            char *s = malloc(g.u.string.str.len + 1);
            memcpy(s, g.u.string.str.ptr, g.u.string.str.len);
            s[g.u.string.str.len] = '\0';
            free(t->str[g.u.string.id]);
            t->str[g.u.string.id] = s;
        }
        if (t->n == t->cap) {
            t->cap = t->cap ? t->cap * 2 : 1024;
            t->r = realloc(t->r, t->cap * sizeof *t->r);
        }
        rec *x = &t->r[t->n++];
        memset(x, 0, sizeof *x);
        x->type = g.type;
        switch (g.type) {
        case GMT_REC_ALLOC:
        case GMT_REC_FREE:
            x->u.mem = g.u.mem;
            break;
        case GMT_REC_KERNEL:
            x->u.kernel = g.u.kernel;
            break;
        case GMT_REC_MEMCPY:
        case GMT_REC_MEMSET:
            x->u.copy = g.u.copy;
            break;
        case GMT_REC_RANGE_BEGIN:
        case GMT_REC_RANGE_END:
            x->u.range = g.u.range;
            break;
        case GMT_REC_MARK:
            x->u.mark = g.u.mark;
            break;
        case GMT_REC_STEP:
            x->u.step = g.u.step;
            break;
        case GMT_REC_WINDOW_BEGIN:
            x->u.wb = g.u.wbegin;
            break;
        case GMT_REC_WINDOW_END:
            x->u.we = g.u.wend;
            break;
        case GMT_REC_MEMSAMPLE:
            x->u.sample = g.u.sample;
            break;
        case GMT_REC_STATS:
            x->u.stats = g.u.stats;
            break;
        case GMT_REC_TRAILER:
            x->u.trailer = g.u.trailer;
            break;
        case GMT_REC_BLOCK:
            x->u.block = g.u.block;
            break;
        case GMT_REC_OOM:
            x->u.oom = g.u.oom;
            break;
        case GMT_REC_LIVE:
            x->u.live = g.u.live;
            break;
        case GMT_REC_STRING:
            x->u.str = g.u.string.id;
            break;
        case GMT_REC_DEVICE:
            x->u.dev.device = g.u.device.device;
            x->u.dev.total_mem = g.u.device.total_mem;
            x->u.dev.sm_count = g.u.device.sm_count;
            x->u.dev.cc_major = g.u.device.cc_major;
            x->u.dev.cc_minor = g.u.device.cc_minor;
            snprintf(x->u.dev.name, sizeof x->u.dev.name, "%.*s", (int)g.u.device.name.len, g.u.device.name.ptr);
            break;
        case GMT_REC_HEADER:
            x->u.hdr.pid = g.u.header.pid;
            x->u.hdr.ppid = g.u.header.ppid;
            x->u.hdr.cupti_version = g.u.header.cupti_version;
            x->u.hdr.driver_version = g.u.header.driver_version;
            x->u.hdr.rank = g.u.header.rank;
            break;
        case GMT_REC_TAG:
            x->u.tag.ts = g.u.tag.ts;
            x->u.tag.name = g.u.tag.name;
            x->u.tag.step = g.u.tag.step;
            x->u.tag.ndev = g.u.tag.ndev;
            x->u.tag.has_framework = g.u.tag.has_framework;
            for (uint64_t i = 0; i < g.u.tag.ndev && i < 2; i++)
                x->u.tag.dev[i] = g.u.tag.dev[i];
            break;
        default:
            break;
        }
    }
    t->end = *gmt_reader_end_info(rd);
    t->ok = rc == 0;
    gmt_reader_close(rd);
    return 0;
}

static const char *S(const trace *t, uint64_t id) { return id < t->nstr && t->str[id] ? t->str[id] : ""; }

static size_t count(const trace *t, gmt_type type)
{
    size_t n = 0;
    for (size_t i = 0; i < t->n; i++)
        n += t->r[i].type == type;
    return n;
}

static const rec *nth(const trace *t, gmt_type type, size_t k)
{
    for (size_t i = 0; i < t->n; i++)
        if (t->r[i].type == type && k-- == 0)
            return &t->r[i];
    return NULL;
}

static size_t index_of(const trace *t, const rec *r) { return r ? (size_t)(r - t->r) : SIZE_MAX; }

/* The ALLOC or FREE of an API call (baseline copies excluded). */
static const rec *mem_by_corr(const trace *t, gmt_type type, uint64_t corr)
{
    for (size_t i = 0; i < t->n; i++)
        if (t->r[i].type == type && t->r[i].u.mem.corr == corr && !(t->r[i].u.mem.flags & GMT_MEMF_BASELINE))
            return &t->r[i];
    return NULL;
}

static const rec *mem_by_addr(const trace *t, gmt_type type, uint64_t addr, int baseline)
{
    for (size_t i = 0; i < t->n; i++)
        if (t->r[i].type == type && t->r[i].u.mem.address == addr &&
            !!(t->r[i].u.mem.flags & GMT_MEMF_BASELINE) == baseline)
            return &t->r[i];
    return NULL;
}

static const rec *kernel_by_name(const trace *t, const char *name)
{
    for (size_t i = 0; i < t->n; i++)
        if (t->r[i].type == GMT_REC_KERNEL && strcmp(S(t, t->r[i].u.kernel.name), name) == 0)
            return &t->r[i];
    return NULL;
}

static const rec *range_by_name(const trace *t, const char *name)
{
    for (size_t i = 0; i < t->n; i++)
        if (t->r[i].type == GMT_REC_RANGE_BEGIN && strcmp(S(t, t->r[i].u.range.name), name) == 0)
            return &t->r[i];
    return NULL;
}

static const rec *range_end_of(const trace *t, uint64_t id)
{
    for (size_t i = 0; i < t->n; i++)
        if (t->r[i].type == GMT_REC_RANGE_END && t->r[i].u.range.id == id)
            return &t->r[i];
    return NULL;
}

static size_t count_marks(const trace *t, const char *name)
{
    size_t n = 0;
    for (size_t i = 0; i < t->n; i++)
        n += t->r[i].type == GMT_REC_MARK && strcmp(S(t, t->r[i].u.mark.name), name) == 0;
    return n;
}

static const rec *last(const trace *t, gmt_type type)
{
    for (size_t i = t->n; i-- > 0;)
        if (t->r[i].type == type)
            return &t->r[i];
    return NULL;
}

/* A complete trace: read to the end without error, trailer last, its
 * record count right. */
static void check_complete(const trace *t)
{
    CHECK(t->ok);
    CHECK(t->end.has_trailer);
    CHECK(!t->end.truncated);
    CHECK(t->n > 2);
    if (t->n > 2) {
        CHECK_EQ_U64(t->r[0].type, GMT_REC_HEADER);
        CHECK_EQ_U64(t->r[t->n - 1].type, GMT_REC_TRAILER);
        CHECK_EQ_U64(t->r[t->n - 1].u.trailer.records, t->n - 1);
    }
}

/* Every window: WINDOW_BEGIN, its baseline_count BASELINE allocs right after
 * (their bytes summing to baseline_bytes), WINDOW_END later. */
static void check_windows(const trace *t)
{
    for (size_t i = 0; i < t->n; i++) {
        if (t->r[i].type != GMT_REC_WINDOW_BEGIN)
            continue;
        const gmt_window_begin *w = &t->r[i].u.wb;
        uint64_t bytes = 0;
        CHECK(i + w->baseline_count < t->n);
        for (uint64_t k = 1; k <= w->baseline_count && i + k < t->n; k++) {
            CHECK_EQ_U64(t->r[i + k].type, GMT_REC_ALLOC);
            CHECK(t->r[i + k].u.mem.flags & GMT_MEMF_BASELINE);
            bytes += t->r[i + k].u.mem.bytes;
        }
        CHECK_EQ_U64(bytes, w->baseline_bytes);
        int ended = 0;
        for (size_t j = i + 1; j < t->n; j++)
            if (t->r[j].type == GMT_REC_WINDOW_END && t->r[j].u.we.window == w->window)
                ended = 1;
        CHECK(ended);
    }
}

static trace load_trace_of(const run *r)
{
    char p[1300];
    trace t;
    trace_path(r, r->pid, p, sizeof p);
    int rc = trace_load(p, &t);
    CHECK(rc == 0, "cannot read %s: %s", p, strerror(errno));
    if (rc != 0)
        memset(&t, 0, sizeof t);
    return t;
}

/* ---- scenarios ----------------------------------------------------------------- */

static void t_whole(void)
{
    run r;
    run_app("whole", NULL, &r);
    CHECK(exited(&r, 0));
    CHECK_STR(r.out, "");
    CHECK_EQ_U64(count_lines(r.err, "gmemprof: "), 1);
    CHECK_HAS(r.err, "gmemprof: wrote ");
    CHECK_HAS(r.err, "1 window, ");
    CHECK_HAS(r.err, " 17 dropped)");
    trace t = load_trace_of(&r);
    check_complete(&t);
    check_windows(&t);
    uint64_t tid = F("tid");

    const rec *h = nth(&t, GMT_REC_HEADER, 0);
    CHECK(h && h->u.hdr.pid == (uint64_t)r.pid);
    CHECK(h && h->u.hdr.ppid == (uint64_t)getpid());
    CHECK(h && h->u.hdr.cupti_version == CUPTI_API_VERSION);
    CHECK(h && h->u.hdr.driver_version == 13000);
    const rec *d = nth(&t, GMT_REC_DEVICE, 0);
    CHECK(d != NULL);
    if (d) {
        CHECK_EQ_U64(d->u.dev.device, 0);
        CHECK_STR(d->u.dev.name, "Fake GPU 0");
        CHECK_EQ_U64(d->u.dev.total_mem, 80 * GIB);
        CHECK_EQ_U64(d->u.dev.sm_count, 132);
        CHECK_EQ_U64(d->u.dev.cc_major, 9);
    }
    CHECK_EQ_U64(count(&t, GMT_REC_WINDOW_BEGIN), 1);
    const rec *wb = nth(&t, GMT_REC_WINDOW_BEGIN, 0);
    CHECK(wb && wb->u.wb.window == 0 && wb->u.wb.step == 0 && wb->u.wb.baseline_count == 0);
    const rec *st0 = nth(&t, GMT_REC_STEP, 0);
    CHECK(st0 && st0->u.step.step == 0 && st0->u.step.phase == GMT_PHASE_ACTIVE &&
          st0->u.step.source == GMT_STEPSRC_NONE);

    const rec *fwd = range_by_name(&t, "fwd");
    CHECK(fwd != NULL);
    uint64_t rid = fwd ? fwd->u.range.id : 0;
    CHECK(fwd && fwd->u.range.tid == tid && fwd->u.range.parent == 0);
    const rec *fwd_end = range_end_of(&t, rid);
    CHECK(fwd_end != NULL);

    const rec *a = mem_by_corr(&t, GMT_REC_ALLOC, F("A.corr"));
    CHECK(a != NULL);
    if (a) {
        const gmt_mem *m = &a->u.mem;
        CHECK_EQ_U64(m->device, 0);
        CHECK_EQ_U64(m->address, 0x10000);
        CHECK_EQ_U64(m->bytes, 1 * MIB);
        CHECK_EQ_U64(m->kind, GMT_MEMKIND_DEVICE);
        CHECK_EQ_U64(m->source, GMT_SRC_MALLOC);
        CHECK_EQ_U64(m->flags, 0);
        CHECK_EQ_U64(m->tid, tid);
        CHECK_EQ_U64(m->range, rid);
        CHECK_EQ_U64(m->seq, 0);
        CHECK_EQ_U64(m->step, 0);
        CHECK_EQ_U64(m->stream, 0);
        CHECK(index_of(&t, a) > index_of(&t, wb));
    }
    const rec *k1 = kernel_by_name(&t, "k1");
    CHECK(k1 != NULL);
    if (k1) {
        const gmt_kernel *k = &k1->u.kernel;
        CHECK_EQ_U64(k->corr, F("k1.corr"));
        CHECK_EQ_U64(k->tid, tid);
        CHECK_EQ_U64(k->seq, 1);
        CHECK_EQ_U64(k->range, rid);
        CHECK_EQ_U64(k->step, 0);
        CHECK_EQ_U64(k->stream, 7);
        CHECK_EQ_U64(k->end - k->start, 4000);
        CHECK_EQ_U64(k->grid[0], 128);
        CHECK_EQ_U64(k->grid[1], 2);
        CHECK_EQ_U64(k->block[0], 256);
        CHECK_EQ_U64(k->registers, 32);
        CHECK_EQ_U64(k->static_smem, 1024);
        CHECK_EQ_U64(k->dynamic_smem, 4096);
        CHECK_EQ_U64(k->local_mem, 16);
    }
    const rec *b = mem_by_corr(&t, GMT_REC_ALLOC, F("B.corr"));
    CHECK(b && b->u.mem.seq == 1 && b->u.mem.range == rid && b->u.mem.bytes == 2 * MIB);
    const rec *k2 = kernel_by_name(&t, "k2");
    CHECK(k2 && k2->u.kernel.seq == 2 && k2->u.kernel.range == rid && k2->u.kernel.corr == F("k2.corr"));
    const rec *fa = mem_by_corr(&t, GMT_REC_FREE, F("freeA.corr"));
    CHECK(fa != NULL);
    if (fa) {
        CHECK_EQ_U64(fa->u.mem.address, 0x10000);
        CHECK_EQ_U64(fa->u.mem.bytes, 1 * MIB);
        CHECK_EQ_U64(fa->u.mem.source, GMT_SRC_MALLOC);
        CHECK_EQ_U64(fa->u.mem.seq, 2);
        CHECK_EQ_U64(fa->u.mem.range, 0);
        CHECK_EQ_U64(fa->u.mem.tid, tid);
    }
    /* a direct driver launch is a launch of its own */
    const rec *k3 = kernel_by_name(&t, "k3");
    CHECK(k3 && k3->u.kernel.seq == 3 && k3->u.kernel.range == 0 && k3->u.kernel.corr == F("k3.corr"));
    const rec *cp = nth(&t, GMT_REC_MEMCPY, 0);
    CHECK(cp && cp->u.copy.corr == F("cpy.corr") && cp->u.copy.bytes == 4096 &&
          cp->u.copy.copy_kind == GMT_COPY_HTOD && cp->u.copy.src_kind == GMT_MEMKIND_PAGEABLE &&
          cp->u.copy.dst_kind == GMT_MEMKIND_DEVICE && cp->u.copy.tid == tid && cp->u.copy.stream == 7);
    const rec *ms = nth(&t, GMT_REC_MEMSET, 0);
    CHECK(ms && ms->u.copy.corr == F("set.corr") && ms->u.copy.bytes == 8192 && ms->u.copy.copy_kind == 0xab &&
          ms->u.copy.src_kind == GMT_MEMKIND_DEVICE && ms->u.copy.tid == tid);
    CHECK_EQ_U64(count_marks(&t, "hello"), 1);
    const rec *orphan = kernel_by_name(&t, "orphan");
    CHECK(orphan && orphan->u.kernel.tid == 0 && orphan->u.kernel.seq == 0);
    CHECK_EQ_U64(count(&t, GMT_REC_KERNEL), 4);
    CHECK_EQ_U64(count(&t, GMT_REC_ALLOC), 2);
    CHECK_EQ_U64(count(&t, GMT_REC_FREE), 1);

    const rec *we = last(&t, GMT_REC_WINDOW_END);
    CHECK(we && we->u.we.reason == GMT_WEND_EXIT && we->u.we.window == 0);
    const rec *s = last(&t, GMT_REC_STATS);
    CHECK(s != NULL);
    if (s) {
        CHECK_EQ_U64(s->u.stats.unmatched_corr, 1);
        CHECK_EQ_U64(s->u.stats.dropped_cupti, 17);
        CHECK_EQ_U64(s->u.stats.dropped_writer, 0);
        /* 1024 KiB device buffers, 2 pre-allocated, one context */
        CHECK_EQ_U64(s->u.stats.own_device_bytes, 2 * 1024 * 1024);
        CHECK(s->u.stats.own_host_bytes > 0);
        CHECK(s->u.stats.host_time_ns > 0);
        CHECK(s->u.stats.records_written > 10);
    }
    CHECK_EQ_U64(last(&t, GMT_REC_TRAILER)->u.trailer.status, GMT_TRAILER_CLEAN);
    trace_free(&t);
}

static void t_schedule(void)
{
    const char *env[] = {"GMEMPROF_SCHEDULE=wait=2,warmup=1,active=3", NULL};
    run r;
    run_app("schedule", env, &r);
    CHECK(exited(&r, 0));
    CHECK_STR(r.out, "");
    trace t = load_trace_of(&r);
    check_complete(&t);
    check_windows(&t);
    /* steps 0..8: 0,1 WAIT, 2 WARMUP, 3..5 ACTIVE, 6..8 DONE */
    static const int phase[9] = {GMT_PHASE_WAIT,   GMT_PHASE_WAIT,   GMT_PHASE_WARMUP,
                                 GMT_PHASE_ACTIVE, GMT_PHASE_ACTIVE, GMT_PHASE_ACTIVE,
                                 GMT_PHASE_DONE,   GMT_PHASE_DONE,   GMT_PHASE_DONE};
    CHECK_EQ_U64(count(&t, GMT_REC_STEP), 9);
    for (int i = 0; i < 9; i++) {
        const rec *s = nth(&t, GMT_REC_STEP, (size_t)i);
        CHECK(s && s->u.step.step == (uint64_t)i && s->u.step.phase == (uint64_t)phase[i]);
        CHECK(s && s->u.step.source == (i ? GMT_STEPSRC_API : GMT_STEPSRC_NONE));
    }
    CHECK_EQ_U64(count(&t, GMT_REC_WINDOW_BEGIN), 1);
    CHECK_EQ_U64(count(&t, GMT_REC_WINDOW_END), 1);
    const rec *wb = nth(&t, GMT_REC_WINDOW_BEGIN, 0);
    const rec *we = nth(&t, GMT_REC_WINDOW_END, 0);
    CHECK(wb && wb->u.wb.step == 3 && wb->u.wb.window == 0);
    /* baseline: the weights (4 MiB, step 0) and X (3 MiB, step 1, freed in step 4) */
    CHECK(wb && wb->u.wb.baseline_count == 2 && wb->u.wb.baseline_bytes == 7 * MIB);
    const rec *bw = mem_by_addr(&t, GMT_REC_ALLOC, 0x100000, 1);
    CHECK(bw && bw->u.mem.corr == F("W.corr") && bw->u.mem.step == 0 && bw->u.mem.bytes == 4 * MIB &&
          bw->u.mem.tid == F("tid"));
    const rec *bx = mem_by_addr(&t, GMT_REC_ALLOC, 0x200000, 1);
    CHECK(bx && bx->u.mem.corr == F("X.corr") && bx->u.mem.step == 1);
    CHECK(we && we->u.we.step == 5 && we->u.we.reason == GMT_WEND_SCHEDULE);
    const rec *fx = mem_by_corr(&t, GMT_REC_FREE, F("freeX.corr"));
    CHECK(fx && fx->u.mem.step == 4 && fx->u.mem.bytes == 3 * MIB && fx->u.mem.source == GMT_SRC_MALLOC);
    /* exactly 3 active steps of records */
    CHECK_EQ_U64(count(&t, GMT_REC_KERNEL), 3);
    CHECK_EQ_U64(count(&t, GMT_REC_ALLOC), 2 + 3);
    CHECK_EQ_U64(count(&t, GMT_REC_FREE), 3 + 1);
    for (int i = 0; i < 8; i++) {
        char kn[32];
        snprintf(kn, sizeof kn, "k_step_%d", i);
        const rec *k = kernel_by_name(&t, kn);
        const rec *a = mem_by_corr(&t, GMT_REC_ALLOC, F("act%d.corr", i));
        const rec *f = mem_by_corr(&t, GMT_REC_FREE, F("free%d.corr", i));
        int active = i >= 3 && i <= 5;
        CHECK((k != NULL) == active);
        CHECK((a != NULL) == active);
        CHECK((f != NULL) == active);
        if (active && k && a && f) {
            CHECK_EQ_U64(k->u.kernel.step, (uint64_t)i);
            CHECK_EQ_U64(a->u.mem.step, (uint64_t)i);
            CHECK_EQ_U64(a->u.mem.bytes, (uint64_t)(i + 1) * MIB);
            /* the allocation's consumer is the next launch of its thread */
            CHECK_EQ_U64(k->u.kernel.seq, a->u.mem.seq + 1);
            CHECK_EQ_U64(f->u.mem.seq, k->u.kernel.seq);
            CHECK(index_of(&t, a) > index_of(&t, wb) && index_of(&t, f) < index_of(&t, we));
        }
    }
    /* kernel collection is on in WARMUP and ACTIVE only */
    for (int i = 0; i <= 8; i++)
        CHECK_EQ_U64(F("kernels_on.%d", i), (uint64_t)(i >= 2 && i <= 5));
    /* driver memory at every step boundary once the device is known (the
     * app creates its context after init, so step 0 may have none) */
    for (int i = 1; i <= 8; i++) {
        size_t k = index_of(&t, nth(&t, GMT_REC_STEP, (size_t)i));
        CHECK(k + 1 < t.n && t.r[k + 1].type == GMT_REC_MEMSAMPLE && t.r[k + 1].u.sample.device == 0);
    }
    trace_free(&t);
}

static void t_nvtx_steps(void)
{
    const char *env[] = {"GMEMPROF_SCHEDULE=1,1,2", NULL};
    run r;
    run_app("nvtx_steps", env, &r);
    CHECK(exited(&r, 0));
    trace t = load_trace_of(&r);
    check_complete(&t);
    check_windows(&t);
    CHECK_EQ_U64(count(&t, GMT_REC_STEP), 6);
    for (int i = 1; i <= 5; i++) {
        const rec *s = nth(&t, GMT_REC_STEP, (size_t)i);
        CHECK(s && s->u.step.step == (uint64_t)i && s->u.step.source == GMT_STEPSRC_NVTX);
    }
    CHECK_EQ_U64(count(&t, GMT_REC_WINDOW_BEGIN), 1);
    const rec *wb = nth(&t, GMT_REC_WINDOW_BEGIN, 0);
    CHECK(wb && wb->u.wb.step == 2 && wb->u.wb.baseline_count == 1 && wb->u.wb.baseline_bytes == 4 * MIB);
    for (int i = 0; i < 5; i++) {
        char kn[32];
        snprintf(kn, sizeof kn, "k_step_%d", i);
        CHECK((kernel_by_name(&t, kn) != NULL) == (i == 2 || i == 3));
    }
    CHECK_EQ_U64(count(&t, GMT_REC_KERNEL), 2);
    /* "stepper" is no step marker: a mark, recorded in steps 2 and 3 */
    CHECK_EQ_U64(count_marks(&t, "stepper"), 2);
    CHECK(range_by_name(&t, "step#2") != NULL);
    CHECK(range_by_name(&t, "step#4") == NULL);
    trace_free(&t);
}

/* The STRING records of `name`. */
static size_t count_strings(const trace *t, const char *name)
{
    size_t n = 0;
    for (size_t i = 0; i < t->n; i++)
        n += t->r[i].type == GMT_REC_STRING && strcmp(S(t, t->r[i].u.str), name) == 0;
    return n;
}

/* The trace of sc_nvtx_window (step 0 waits, step 1 is the window): a
 * range's name is written only when a record of it names it, and before
 * that record. */
static void check_nvtx_window(const char *path)
{
    trace t;
    CHECK(trace_load(path, &t) == 0, "cannot read %s", path);
    check_complete(&t);
    check_windows(&t);
    /* named in the trace: "across" (the window's baseline), "inside" and
     * "reused" (begun in the window), "failing" (the OOM record's op) and
     * cuMemAlloc_v2 (its call): 5 STRINGs, one each; "before" and "after"
     * (begun outside the window, named by nothing) none */
    CHECK_EQ_U64(count(&t, GMT_REC_STRING), 5);
    static const char *const named[] = {"across", "inside", "reused", "failing", "cuMemAlloc_v2"};
    for (size_t i = 0; i < sizeof named / sizeof *named; i++)
        CHECK(count_strings(&t, named[i]) == 1, "%s: %zu STRINGs", named[i], count_strings(&t, named[i]));
    CHECK_EQ_U64(count_strings(&t, "before"), 0);
    CHECK_EQ_U64(count_strings(&t, "after"), 0);
    /* each name comes before the first record that names it */
    for (size_t i = 0; i < t.n; i++) {
        const rec *x = &t.r[i];
        uint64_t id = x->type == GMT_REC_RANGE_BEGIN ? x->u.range.name : x->type == GMT_REC_OOM ? x->u.oom.op : 0;
        size_t k = 0;
        while (id && k < i && !(t.r[k].type == GMT_REC_STRING && t.r[k].u.str == id))
            k++;
        CHECK(!id || k < i, "record %zu names string %" PRIu64 " before its STRING", i, id);
    }
    /* 3 RANGE_BEGINs: "across" in the baseline, after WINDOW_BEGIN; its
     * allocation in the window carries it */
    CHECK_EQ_U64(count(&t, GMT_REC_RANGE_BEGIN), 3);
    const rec *ac = range_by_name(&t, "across"), *a = mem_by_corr(&t, GMT_REC_ALLOC, F("A.corr"));
    CHECK(ac && index_of(&t, ac) > index_of(&t, nth(&t, GMT_REC_WINDOW_BEGIN, 0)));
    CHECK(ac && a && a->u.mem.range == ac->u.range.id);
    const rec *o = nth(&t, GMT_REC_OOM, 0);
    CHECK(o && strcmp(S(&t, o->u.oom.op), "failing") == 0);
    trace_free(&t);
}

/* The same beside the flight recorder: the trace as without it; the dump
 * of the failure holds every name (the whole string table, first). */
static void t_nvtx_window(void)
{
    const char *env[] = {"GMEMPROF_SCHEDULE=wait=1,active=1", NULL};
    run r;
    run_app("nvtx_window", env, &r);
    CHECK(exited(&r, 0));
    CHECK_STR(r.out, "");
    char p[1300], d[1300];
    trace_path(&r, r.pid, p, sizeof p);
    check_nvtx_window(p);

    const char *renv[] = {"GMEMPROF_SCHEDULE=on-oom,wait=1,active=1", NULL};
    run_app_in("nvtx_window_oom", "nvtx_window", renv, &r);
    CHECK(exited(&r, 0));
    trace_path(&r, r.pid, p, sizeof p);
    check_nvtx_window(p);
    snprintf(d, sizeof d, "%s/trace-%d.oom.zst", r.dir, (int)r.pid);
    trace t;
    CHECK(trace_load(d, &t) == 0, "cannot read %s", d);
    CHECK_EQ_U64(count(&t, GMT_REC_STRING), 7);
    CHECK_EQ_U64(count_strings(&t, "before"), 1);
    CHECK_EQ_U64(count_strings(&t, "after"), 1);
    trace_free(&t);
}

static void t_api_precedence(void)
{
    run r;
    run_app("api_precedence", NULL, &r);
    CHECK(exited(&r, 0));
    trace t = load_trace_of(&r);
    check_complete(&t);
    CHECK_EQ_U64(count(&t, GMT_REC_STEP), 5);
    static const uint64_t src[5] = {GMT_STEPSRC_NONE, GMT_STEPSRC_NVTX, GMT_STEPSRC_NVTX, GMT_STEPSRC_API,
                                    GMT_STEPSRC_API};
    for (int i = 0; i < 5; i++) {
        const rec *s = nth(&t, GMT_REC_STEP, (size_t)i);
        CHECK(s && s->u.step.step == (uint64_t)i && s->u.step.source == src[i]);
    }
    trace_free(&t);
}

static void t_capture(void)
{
    const char *env[] = {"GMEMPROF_SCHEDULE=capture", NULL};
    run r;
    run_app("capture", env, &r);
    CHECK(exited(&r, 0));
    trace t = load_trace_of(&r);
    check_complete(&t);
    check_windows(&t);
    CHECK_EQ_U64(count(&t, GMT_REC_WINDOW_BEGIN), 2);
    const rec *w0 = nth(&t, GMT_REC_WINDOW_BEGIN, 0), *w1 = nth(&t, GMT_REC_WINDOW_BEGIN, 1);
    const rec *e0 = nth(&t, GMT_REC_WINDOW_END, 0), *e1 = nth(&t, GMT_REC_WINDOW_END, 1);
    CHECK(w0 && w0->u.wb.window == 0 && w0->u.wb.baseline_count == 1 && w0->u.wb.baseline_bytes == 1 * MIB);
    CHECK(w1 && w1->u.wb.window == 1 && w1->u.wb.baseline_count == 3 && w1->u.wb.baseline_bytes == 6 * MIB);
    CHECK(e0 && e0->u.we.reason == GMT_WEND_SCHEDULE && e1 && e1->u.we.reason == GMT_WEND_SCHEDULE);
    const rec *b = mem_by_corr(&t, GMT_REC_ALLOC, F("B.corr"));
    CHECK(b && index_of(&t, b) > index_of(&t, w0) && index_of(&t, b) < index_of(&t, e0));
    const rec *fb = mem_by_corr(&t, GMT_REC_FREE, F("freeB.corr"));
    CHECK(fb && index_of(&t, fb) > index_of(&t, w1) && index_of(&t, fb) < index_of(&t, e1));
    CHECK(mem_by_corr(&t, GMT_REC_ALLOC, F("A.corr")) == NULL);
    CHECK(mem_by_corr(&t, GMT_REC_ALLOC, F("C.corr")) == NULL);
    CHECK(kernel_by_name(&t, "k1") && kernel_by_name(&t, "k3"));
    CHECK(!kernel_by_name(&t, "k0") && !kernel_by_name(&t, "k2"));
    CHECK_EQ_U64(count(&t, GMT_REC_KERNEL), 2);
    for (size_t i = 1; i < count(&t, GMT_REC_STEP); i++)
        CHECK(nth(&t, GMT_REC_STEP, i)->u.step.source == GMT_STEPSRC_CAPTURE);
    trace_free(&t);
}

/* The trace clock read through the TSC (forced here: the CI machines'
 * clocksource need not be tsc): each range's start lies between the
 * system clock's readings around its push, before and after the line is fitted (the
 * writer fits it 50 ms after its start, and again every 50 ms). */
static void t_clock(void)
{
    run r;
    const char *env[] = {"GMEMPROF_CLOCK=tsc", "GMEMPROF_LOG=debug", NULL};
    run_app("clock", env, &r);
    CHECK(exited(&r, 0));
#if defined(__x86_64__)
    CHECK_EQ_U64(count_lines(r.err, "gmemprof: trace clock: the TSC, mapped to CLOCK_REALTIME (GMEMPROF_CLOCK=tsc)\n"), 1);
#endif
    trace t = load_trace_of(&r);
    check_complete(&t);
    CHECK_EQ_U64(count(&t, GMT_REC_RANGE_BEGIN), 6);
    for (int i = 0; i < 6; i++) {
        char name[8];
        snprintf(name, sizeof name, "r%d", i);
        const rec *g = range_by_name(&t, name);
        uint64_t lo = F("before%d", i), hi = F("after%d", i);
        CHECK(g && g->u.range.ts >= lo && g->u.range.ts <= hi, "%s at %llu, outside [%llu, %llu]", name,
              g ? (unsigned long long)g->u.range.ts : 0ull, (unsigned long long)lo, (unsigned long long)hi);
    }
    trace_free(&t);
}

static void t_tags(void)
{
    run r;
    run_app("tags", NULL, &r);
    CHECK(exited(&r, 0));
    trace t = load_trace_of(&r);
    check_complete(&t);
    CHECK_EQ_U64(count(&t, GMT_REC_TAG), 3);
    static const char *names[3] = {"before_model", "after_model", "after_free"};
    static const uint64_t live[3] = {0, 16 * MIB, 8 * MIB};
    static const uint64_t used[3] = {10 * GIB, 20 * GIB, 20 * GIB};
    for (int i = 0; i < 3; i++) {
        const rec *g = nth(&t, GMT_REC_TAG, (size_t)i);
        CHECK(g != NULL);
        if (!g)
            continue;
        CHECK_STR(S(&t, g->u.tag.name), names[i]);
        CHECK_EQ_U64(g->u.tag.ndev, 2);
        /* device 1: 5 MiB from "after_model" on (same address as on device 0:
         * the live table keys on (device, address)); driver 1 of 40 GiB used */
        CHECK_EQ_U64(g->u.tag.dev[1].device, 1);
        CHECK_EQ_U64(g->u.tag.dev[1].live_bytes, i == 0 ? 0 : 5 * MIB);
        CHECK_EQ_U64(g->u.tag.dev[1].driver_used, 1 * GIB);
        CHECK_EQ_U64(g->u.tag.dev[1].driver_total, 40 * GIB);
        CHECK_EQ_U64(g->u.tag.dev[0].device, 0);
        CHECK_EQ_U64(g->u.tag.dev[0].live_bytes, live[i]);
        CHECK_EQ_U64(g->u.tag.dev[0].driver_used, used[i]);
        CHECK_EQ_U64(g->u.tag.dev[0].driver_total, 80 * GIB);
        CHECK_EQ_U64(g->u.tag.dev[0].driver_free, 80 * GIB - used[i]);
        CHECK_EQ_U64(g->u.tag.step, 0);
        /* a MEMSAMPLE follows every tag */
        size_t k = index_of(&t, g);
        CHECK(k + 1 < t.n && t.r[k + 1].type == GMT_REC_MEMSAMPLE && t.r[k + 1].u.sample.used == used[i]);
    }
    CHECK_EQ_U64(count_marks(&t, "plain mark"), 1);
    CHECK_EQ_U64(count_marks(&t, "tag: after_model"), 0);
    CHECK_EQ_U64(count(&t, GMT_REC_DEVICE), 2);
    trace_free(&t);
}

static void t_threads(void)
{
    run r;
    run_app("threads", NULL, &r);
    CHECK(exited(&r, 0));
    trace t = load_trace_of(&r);
    check_complete(&t);
    uint64_t ids[4] = {0};
    for (int i = 0; i < 4; i++) {
        char rn[8], kn[16];
        uint64_t tid = F("t%d.tid", i);
        snprintf(rn, sizeof rn, "t%d", i);
        const rec *rg = range_by_name(&t, rn);
        CHECK(rg && rg->u.range.tid == tid);
        uint64_t rid = rg ? rg->u.range.id : 0;
        ids[i] = rid;
        const rec *a = mem_by_corr(&t, GMT_REC_ALLOC, F("t%d.alloc", i));
        CHECK(a && a->u.mem.tid == tid && a->u.mem.seq == 0 && a->u.mem.range == rid &&
              a->u.mem.bytes == (uint64_t)(i + 1) * MIB);
        for (int k = 0; k < 3; k++) {
            snprintf(kn, sizeof kn, "t%d_k%d", i, k);
            const rec *kr = kernel_by_name(&t, kn);
            CHECK(kr && kr->u.kernel.tid == tid && kr->u.kernel.seq == (uint64_t)k + 1 &&
                  kr->u.kernel.range == rid && kr->u.kernel.corr == F("t%d.k%d", i, k));
        }
        const rec *f = mem_by_corr(&t, GMT_REC_FREE, F("t%d.free", i));
        CHECK(f && f->u.mem.tid == tid && f->u.mem.seq == 3 && f->u.mem.range == rid);
    }
    for (int i = 0; i < 4; i++)
        for (int j = i + 1; j < 4; j++)
            CHECK(ids[i] != ids[j]);
    CHECK_EQ_U64(count(&t, GMT_REC_KERNEL), 12);
    trace_free(&t);
}

/* GMEMPROF_KERNELS=launch: KERNEL records from the launch callbacks. */
static const rec *kernel_by_corr(const trace *t, uint64_t corr)
{
    for (size_t i = 0; i < t->n; i++)
        if (t->r[i].type == GMT_REC_KERNEL && t->r[i].u.kernel.corr == corr)
            return &t->r[i];
    return NULL;
}

/* A window's last step makes far more ring events than one writer batch:
 * every one made before the window ended is in it (none dropped: the ring
 * holds 16384 cells). */
static void t_burst(void)
{
    const char *env[] = {"GMEMPROF_SCHEDULE=wait=1,active=1", "E2E_BURST=7000", NULL};
    run r;
    run_app("burst", env, &r);
    CHECK(exited(&r, 0));
    trace t = load_trace_of(&r);
    check_complete(&t);
    uint64_t begins = 0, ends = 0;
    for (size_t i = 0; i < t.n; i++) {
        if (t.r[i].type == GMT_REC_RANGE_BEGIN && !strcmp(S(&t, t.r[i].u.range.name), "burst"))
            begins++;
        ends += t.r[i].type == GMT_REC_RANGE_END;
    }
    const rec *st = last(&t, GMT_REC_STATS);
    CHECK(st && st->u.stats.dropped_cupti + st->u.stats.dropped_writer == 0);
    CHECK_EQ_U64(begins, F("n"));
    CHECK_EQ_U64(ends, F("n"));
    trace_free(&t);

    /* the same with launches in launch mode: every KERNEL, and all of them
     * before the window's end */
    const char *lenv[] = {"GMEMPROF_SCHEDULE=wait=1,active=1", "GMEMPROF_KERNELS=launch", "E2E_BURST=7000",
                          "E2E_BURST_LAUNCH=1", NULL};
    run_app_in("burst-launch", "burst", lenv, &r);
    CHECK(exited(&r, 0));
    t = load_trace_of(&r);
    check_complete(&t);
    uint64_t kernels = 0, after_end = 0;
    int ended = 0;
    for (size_t i = 0; i < t.n; i++) {
        ended |= t.r[i].type == GMT_REC_WINDOW_END;
        if (t.r[i].type == GMT_REC_KERNEL) {
            kernels++;
            after_end += ended;
        }
    }
    st = last(&t, GMT_REC_STATS);
    CHECK(st && st->u.stats.dropped_cupti + st->u.stats.dropped_writer == 0);
    CHECK_EQ_U64(kernels, 7000);
    CHECK_EQ_U64(after_end, 0);
    trace_free(&t);

    /* an allocation and a free inside every range: the ring's range events
     * and CUPTI's memory records meet in the writer, and no ALLOC/FREE may
     * come before the RANGE_BEGIN it names, however far the ring runs behind
     * (its pops stop at a batch): a reader could not name its range.  One
     * may come after the range's RANGE_END (its CUPTI buffer came in a later
     * round), which gmem-analyze resolves from its closed ranges. */
    const char *aenv[] = {"GMEMPROF_SCHEDULE=wait=1,active=1", "E2E_BURST=7000", "E2E_BURST_ALLOC=1", NULL};
    run_app_in("burst-alloc", "burst", aenv, &r);
    CHECK(exited(&r, 0));
    t = load_trace_of(&r);
    check_complete(&t);
    uint64_t mem = 0, early = 0, max_begun = 0;
    for (size_t i = 0; i < t.n; i++) {
        const rec *x = &t.r[i];
        if (x->type == GMT_REC_RANGE_BEGIN && x->u.range.id > max_begun)
            max_begun = x->u.range.id; /* ids count up from 1 on the one thread */
        else if ((x->type == GMT_REC_ALLOC || x->type == GMT_REC_FREE) && x->u.mem.range) {
            mem++;
            early += x->u.mem.range > max_begun;
        }
    }
    st = last(&t, GMT_REC_STATS);
    CHECK(st && st->u.stats.dropped_cupti + st->u.stats.dropped_writer == 0);
    CHECK_EQ_U64(mem, 2 * 7000);
    CHECK_EQ_U64(early, 0); /* before the RANGE_BEGIN of their range */
    trace_free(&t);
}

/* Launch mode's copies (profiler/sources/copies.c): one MEMCPY/MEMSET per
 * successful outermost call, read from its parameter block, the memory
 * kinds from the driver; e2e_copies.c plays the calls. */
static const rec *copy_by_corr(const trace *t, uint64_t corr)
{
    for (size_t i = 0; i < t->n; i++)
        if ((t->r[i].type == GMT_REC_MEMCPY || t->r[i].type == GMT_REC_MEMSET) && t->r[i].u.copy.corr == corr)
            return &t->r[i];
    return NULL;
}

static void check_copy(const trace *t, const char *fact_name, gmt_type type, uint64_t bytes, uint64_t kind,
                       uint64_t src, uint64_t dst, uint64_t stream, uint64_t tid)
{
    const rec *c = copy_by_corr(t, F("%s", fact_name));
    CHECK(c != NULL);
    if (!c) {
        fprintf(stderr, "  no record for %s\n", fact_name);
        return;
    }
    const gmt_copy *k = &c->u.copy;
    if (c->type != type || k->bytes != bytes || k->copy_kind != kind || k->src_kind != src ||
        k->dst_kind != dst || k->stream != stream)
        fprintf(stderr, "  %s: type %d bytes %llu kind %llu src %llu dst %llu stream %llu\n", fact_name,
                (int)c->type, (unsigned long long)k->bytes, (unsigned long long)k->copy_kind,
                (unsigned long long)k->src_kind, (unsigned long long)k->dst_kind, (unsigned long long)k->stream);
    CHECK_EQ_U64(c->type, type);
    CHECK_EQ_U64(k->bytes, bytes);
    CHECK_EQ_U64(k->copy_kind, kind);
    CHECK_EQ_U64(k->src_kind, src);
    CHECK_EQ_U64(k->dst_kind, dst);
    CHECK_EQ_U64(k->stream, stream);
    CHECK_EQ_U64(k->tid, tid);
    CHECK_EQ_U64(k->start, k->end);
    CHECK(k->start != 0);
}

static void t_copies(void)
{
    const char *env[] = {"GMEMPROF_KERNELS=launch", NULL};
    run r;
    run_app("copies", env, &r);
    CHECK(exited(&r, 0));
    CHECK_STR(r.out, "");
    trace t = load_trace_of(&r);
    check_complete(&t);
    CHECK_EQ_U64(F("memcpy_on"), 0);
    CHECK_EQ_U64(F("memset_on"), 0);
    CHECK_EQ_U64(F("rt_copy_cb"), 1);
    CHECK_EQ_U64(F("drv_copy_cb"), 1);
    uint64_t tid = F("tid");
    enum { PAGE = GMT_MEMKIND_PAGEABLE, PIN = GMT_MEMKIND_PINNED, DEV = GMT_MEMKIND_DEVICE,
           MAN = GMT_MEMKIND_MANAGED, ARR = GMT_MEMKIND_ARRAY };
    /* the fake's CUPTI stream ids: handle & 0xffff + 100; legacy 7, per-thread 8 */
    check_copy(&t, "c1", GMT_REC_MEMCPY, 4096, GMT_COPY_HTOD, PIN, DEV, 0x55 + 100, tid);
    check_copy(&t, "c2", GMT_REC_MEMCPY, 1000, GMT_COPY_DTOH, DEV, PAGE, 8, tid);
    check_copy(&t, "c3", GMT_REC_MEMSET, 3000, 0x7f, DEV, 0, 7, tid);
    check_copy(&t, "c4", GMT_REC_MEMSET, 500, 0x11, MAN, 0, 8, tid);
    check_copy(&t, "c5", GMT_REC_MEMCPY, 2 << 20, GMT_COPY_PTOP, DEV, DEV, 0x66 + 100, tid);
    check_copy(&t, "c6", GMT_REC_MEMSET, 400, 0xdeadbeef, DEV, 0, 0x55 + 100, tid);
    check_copy(&t, "c7", GMT_REC_MEMCPY, 2560, GMT_COPY_HTOD, PIN, DEV, 0x55 + 100, tid);
    /* the runtime's 3D copy is read from its driver call: that call's id */
    check_copy(&t, "c8.drv", GMT_REC_MEMCPY, 512, GMT_COPY_DTOD, DEV, DEV, 7, tid);
    CHECK(copy_by_corr(&t, F("c8")) == NULL);
    check_copy(&t, "c11", GMT_REC_MEMSET, 300, 0x22, DEV, 0, 7, tid);
    check_copy(&t, "c12", GMT_REC_MEMCPY, 64, GMT_COPY_HTOD, PIN, DEV, 7, tid);
    check_copy(&t, "c13", GMT_REC_MEMCPY, 128, GMT_COPY_OTHER, ARR, PAGE, 7, tid);
    /* batch copies: not recorded, said once; a failed copy: nothing */
    CHECK(copy_by_corr(&t, F("c9")) == NULL && copy_by_corr(&t, F("c9b")) == NULL);
    CHECK(copy_by_corr(&t, F("c10")) == NULL);
    CHECK(copy_by_corr(&t, F("c14")) == NULL && copy_by_corr(&t, F("c14x")) == NULL);
    CHECK_EQ_U64(count(&t, GMT_REC_MEMCPY) + count(&t, GMT_REC_MEMSET), 11);
    CHECK_EQ_U64(count_lines(r.err, "gmemprof: launch mode: copies made through cudaMemcpyBatchAsync_v13000"), 1);
    CHECK_EQ_U64(count_lines(r.err, "gmemprof: "), 2); /* that line and the summary */
    /* the driver asked once per end that is an address, failed calls not */
    CHECK_EQ_U64(F("ptr_calls"), 16);
    trace_free(&t);

    /* GPU mode: CUPTI's activity (the scenario emits none), no reading */
    const char *genv[] = {"GMEMPROF_KERNELS=gpu", NULL};
    run_app_in("copies-gpu", "copies", genv, &r);
    CHECK(exited(&r, 0));
    t = load_trace_of(&r);
    check_complete(&t);
    CHECK_EQ_U64(F("memcpy_on"), 1);
    CHECK_EQ_U64(F("memset_on"), 1);
    CHECK_EQ_U64(count(&t, GMT_REC_MEMCPY) + count(&t, GMT_REC_MEMSET), 0);
    CHECK_EQ_U64(F("ptr_calls"), 0);
    CHECK_EQ_U64(count_lines(r.err, "gmemprof: "), 1);
    trace_free(&t);

    /* outside the window (collection off): no copy callbacks, no records */
    const char *wenv[] = {"GMEMPROF_KERNELS=launch", "GMEMPROF_SCHEDULE=wait=5,active=1", NULL};
    run_app_in("copies-wait", "copies", wenv, &r);
    CHECK(exited(&r, 0));
    t = load_trace_of(&r);
    CHECK_EQ_U64(F("rt_copy_cb"), 0);
    CHECK_EQ_U64(count(&t, GMT_REC_MEMCPY) + count(&t, GMT_REC_MEMSET), 0);
    CHECK_EQ_U64(F("ptr_calls"), 0);
    trace_free(&t);
}

/* Launch mode's caches hold 60 kernels launched round robin (e2e_app
 * launch_many): each name sent once, each function queried once. */
static void t_launch_many(void)
{
    const char *env[] = {"GMEMPROF_KERNELS=launch", "GMEMPROF_LOG=debug", NULL};
    run r;
    run_app("launch_many", env, &r);
    CHECK(exited(&r, 0));
    trace t = load_trace_of(&r);
    check_complete(&t);
    CHECK_EQ_U64(count(&t, GMT_REC_KERNEL), 180);
    CHECK_EQ_U64(F("attr_calls"), 60);
    CHECK_HAS(r.err, "launch mode: cache misses: 60 names sent, 60 functions queried, 1 stream lookups");
    trace_free(&t);
}

/* A FREE made on another thread than its ALLOC still comes after it in the
 * trace (e2e_app xthread; the fake CUPTI keeps per-thread buffers unless
 * the profiler asks for one stream, as CUPTI does). */
static void t_xthread(void)
{
    const char *env[] = {"GMEMPROF_CUPTI_BUFFER_KB=32", NULL};
    run r;
    run_app("xthread", env, &r);
    CHECK(exited(&r, 0));
    trace t = load_trace_of(&r);
    check_complete(&t);
    const rec *aA = mem_by_corr(&t, GMT_REC_ALLOC, F("allocA")), *fA = mem_by_corr(&t, GMT_REC_FREE, F("T.freeA"));
    const rec *aB = mem_by_corr(&t, GMT_REC_ALLOC, F("T.allocB")), *fB = mem_by_corr(&t, GMT_REC_FREE, F("freeB"));
    CHECK(aA && fA && aB && fB);
    CHECK(aA && fA && index_of(&t, aA) < index_of(&t, fA));
    CHECK(aB && fB && index_of(&t, aB) < index_of(&t, fB));
    trace_free(&t);
}

static void t_launch(void)
{
    const char *env[] = {"GMEMPROF_KERNELS=launch", NULL};
    run r;
    run_app("launch", env, &r);
    CHECK(exited(&r, 0));
    CHECK_STR(r.out, "");
    CHECK_EQ_U64(count_lines(r.err, "gmemprof: "), 1);
    trace t = load_trace_of(&r);
    check_complete(&t);
    CHECK_EQ_U64(F("kernels_on"), 0); /* no CUPTI kernel activity */
    CHECK_EQ_U64(F("memcpy_on"), 0);  /* nor memcpy activity */
    uint64_t tid = F("tid"), ttid = F("T.tid");
    CHECK(tid != ttid);
    /* one KERNEL per successful launch: 5 on the main thread, 2 on T */
    CHECK_EQ_U64(count(&t, GMT_REC_KERNEL), 7);
    CHECK(kernel_by_name(&t, "k_fails") == NULL);
    for (size_t i = 0; i < t.n; i++) {
        if (t.r[i].type != GMT_REC_KERNEL)
            continue;
        const gmt_kernel *k = &t.r[i].u.kernel;
        CHECK_EQ_U64(k->end, k->start);
        CHECK(k->name != 0);
        if (!strcmp(S(&t, k->name), "k_shared")) {
            /* the driver's function attributes and the launch's dynamic
             * shared memory (grid x * 16 in launch_full) */
            CHECK_EQ_U64(k->flags, GMT_KERNF_LAUNCH | GMT_KERNF_ATTRS);
            CHECK_EQ_U64(k->registers, 40);
            CHECK_EQ_U64(k->static_smem, 2048);
            CHECK_EQ_U64(k->local_mem, 64);
            CHECK_EQ_U64(k->dynamic_smem, k->grid[0] * 16);
        } else {
            /* the driver does not know the function (or the launch gave
             * none): nothing rather than zeros */
            CHECK_EQ_U64(k->flags, GMT_KERNF_LAUNCH);
            CHECK_EQ_U64(k->registers + k->static_smem + k->dynamic_smem + k->local_mem, 0);
        }
    }
    /* cuFuncGetAttribute once per (thread, function), failures included:
     * main: k_shared 3 calls (hit afterwards), k_fails 1, the long name 1;
     * T: k_shared 3, the long name 1 */
    CHECK_EQ_U64(F("attr_calls"), 9);
    const rec *fwd = range_by_name(&t, "fwd");
    uint64_t rid = fwd ? fwd->u.range.id : 0;
    CHECK(rid != 0);
    /* Launches are heard from the driver's callbacks alone, in both modes
     * (the runtime's cost several times more on a GPU): a runtime launch is
     * heard as its nested cuLaunchKernel and its KERNEL carries that call's
     * id, which the fake allocates right after the runtime's (launch_full). */
    CHECK_EQ_U64(F("rt_launch_cb"), 0);
    CHECK_EQ_U64(F("drv_launch_cb"), 1);
#define DRV_ID(fact_name) (F(fact_name) + 1)
    const rec *k1 = kernel_by_corr(&t, DRV_ID("k1.corr"));
    CHECK(k1 != NULL);
    if (k1) {
        const gmt_kernel *k = &k1->u.kernel;
        CHECK_STR(S(&t, k->name), "k_shared");
        CHECK_EQ_U64(k->tid, tid);
        CHECK_EQ_U64(k->seq, 1);
        CHECK_EQ_U64(k->range, rid);
        CHECK_EQ_U64(k->stream, 0x55 + 100); /* the fake's CUPTI id of handle 0x55 */
        CHECK_EQ_U64(k->grid[0], 4);
        CHECK_EQ_U64(k->grid[1], 2);
        CHECK_EQ_U64(k->grid[2], 1);
        CHECK_EQ_U64(k->block[0], 128);
        CHECK_EQ_U64(k->device, 0);
    }
    CHECK(kernel_by_corr(&t, F("k1.corr")) == NULL); /* one record: none for the runtime id */
    /* the direct driver launch */
    const rec *kd = kernel_by_corr(&t, F("kd.corr"));
    CHECK(kd && kd->u.kernel.seq == 2 && kd->u.kernel.tid == tid);
    CHECK(kd && !strcmp(S(&t, kd->u.kernel.name), "k_triton"));
    CHECK(kd && kd->u.kernel.grid[0] == 7 && kd->u.kernel.grid[1] == 8 && kd->u.kernel.grid[2] == 9 &&
          kd->u.kernel.block[0] == 32 && kd->u.kernel.block[1] == 4 && kd->u.kernel.stream == 7);
    /* the cached name (no bytes the second time) still resolves */
    const rec *k2 = kernel_by_corr(&t, DRV_ID("k2.corr"));
    CHECK(k2 && k2->u.kernel.seq == 4 && k1 && k2->u.kernel.name == k1->u.kernel.name);
    CHECK(k2 && k2->u.kernel.start > (kd ? kd->u.kernel.start : 0));
    /* a long name (heap copy) and its cached repeat */
    const rec *kl = kernel_by_corr(&t, DRV_ID("kl.corr")), *kl2 = kernel_by_corr(&t, DRV_ID("kl2.corr"));
    CHECK(kl && strlen(S(&t, kl->u.kernel.name)) == 399 && !strncmp(S(&t, kl->u.kernel.name), "_Z9long_name", 12));
    CHECK(kl && kl2 && kl->u.kernel.name == kl2->u.kernel.name && kl2->u.kernel.range == 0);
    /* attribution: an allocation's consumer is the thread's next launch */
    const rec *a = mem_by_corr(&t, GMT_REC_ALLOC, F("A.corr"));
    const rec *b = mem_by_corr(&t, GMT_REC_ALLOC, F("B.corr"));
    const rec *c = mem_by_corr(&t, GMT_REC_ALLOC, F("C.corr"));
    CHECK(a && k1 && a->u.mem.seq + 1 == k1->u.kernel.seq && a->u.mem.tid == tid);
    CHECK(b && kd && b->u.mem.seq + 1 == kd->u.kernel.seq);
    CHECK(c && k2 && c->u.mem.seq + 1 == k2->u.kernel.seq); /* the failed launch counted, as in GPU mode */
    /* the second thread: its own seq, the same kernel name */
    const rec *ta = mem_by_corr(&t, GMT_REC_ALLOC, F("T.alloc"));
    const rec *tk1 = kernel_by_corr(&t, DRV_ID("T.k1")), *tk2 = kernel_by_corr(&t, DRV_ID("T.k2"));
    CHECK(ta && tk1 && ta->u.mem.tid == ttid && tk1->u.kernel.tid == ttid && ta->u.mem.seq + 1 == tk1->u.kernel.seq);
    CHECK(tk1 && tk1->u.kernel.seq == 1 && k1 && tk1->u.kernel.name == k1->u.kernel.name);
    CHECK(tk2 && kl && tk2->u.kernel.seq == 2 && tk2->u.kernel.name == kl->u.kernel.name);
    /* copies and sets from their calls, not CUPTI's activity (t_copies) */
    CHECK_EQ_U64(count(&t, GMT_REC_MEMCPY), 1);
    CHECK_EQ_U64(count(&t, GMT_REC_MEMSET), 1);
    const rec *cp = nth(&t, GMT_REC_MEMCPY, 0);
    CHECK(cp && cp->u.copy.corr == F("cpy.corr") - 1 && cp->u.copy.bytes == 4096 && cp->u.copy.tid == tid &&
          cp->u.copy.start == cp->u.copy.end);
    trace_free(&t);
#undef DRV_ID

    /* the same program in GPU mode: kernel activity on, no flag */
    const char *genv[] = {"GMEMPROF_KERNELS=gpu", NULL};
    run_app_in("launch-gpu", "launch", genv, &r);
    CHECK(exited(&r, 0));
    t = load_trace_of(&r);
    CHECK_EQ_U64(F("kernels_on"), 1);
    CHECK_EQ_U64(F("rt_launch_cb"), 0); /* the kernel record carries the driver call's id */
    CHECK_EQ_U64(F("drv_launch_cb"), 1);
    CHECK_EQ_U64(count(&t, GMT_REC_KERNEL), 6); /* the fake emits activity for runtime launches only */
    for (size_t i = 0; i < t.n; i++)
        if (t.r[i].type == GMT_REC_KERNEL)
            CHECK(t.r[i].u.kernel.flags == 0 && t.r[i].u.kernel.end > t.r[i].u.kernel.start);
    trace_free(&t);

    /* no setting (empty is unset): launch mode is the default */
    const char *denv[] = {"GMEMPROF_KERNELS=", NULL};
    run_app_in("launch-default", "launch", denv, &r);
    CHECK(exited(&r, 0));
    CHECK_EQ_U64(count_lines(r.err, "gmemprof: "), 1);
    t = load_trace_of(&r);
    CHECK_EQ_U64(F("kernels_on"), 0);
    CHECK_EQ_U64(F("rt_launch_cb"), 0);
    CHECK_EQ_U64(F("drv_launch_cb"), 1);
    CHECK_EQ_U64(count(&t, GMT_REC_KERNEL), 7);
    for (size_t i = 0; i < t.n; i++)
        if (t.r[i].type == GMT_REC_KERNEL)
            CHECK(t.r[i].u.kernel.flags & GMT_KERNF_LAUNCH);
    trace_free(&t);
}

static void t_overflow(void)
{
    run r;
    run_app("overflow", NULL, &r);
    CHECK(exited(&r, 0));
    CHECK_EQ_U64(F("blocked"), 1);
    trace t = load_trace_of(&r);
    check_complete(&t);
    const rec *s = last(&t, GMT_REC_STATS);
    uint64_t written = count_marks(&t, "m");
    uint64_t dropped = s ? s->u.stats.dropped_writer : 0;
    fprintf(stderr, "overflow: %" PRIu64 " written, %" PRIu64 " dropped\n", written, dropped);
    CHECK(dropped > 0);
    CHECK(written > 0);
    CHECK_EQ_U64(written + dropped, F("produced"));
    CHECK_EQ_U64(count_marks(&t, "warm up NVTX"), 1);
    CHECK_HAS(r.err, " dropped)");
    trace_free(&t);
}

static void t_settings(void)
{
    const char *env[] = {"GMEMPROF_SAMPLE_MS=abc", "GMEMPROF_FLUSH_MS=5", "GMEMPROF_SCHEDUEL=whole",
                         "GMEMPROF_LOG=quiet", NULL};
    run r;
    run_app("settings", env, &r);
    CHECK(exited(&r, 3));
    CHECK_STR(r.out, "");
    CHECK_EQ_U64(count_lines(r.err, "gmemprof: "), 3);
    CHECK_EQ_U64(count_lines(r.err, ""), 3);
    CHECK_HAS(r.err, "GMEMPROF_SAMPLE_MS");
    CHECK_HAS(r.err, "GMEMPROF_FLUSH_MS");
    CHECK_HAS(r.err, "GMEMPROF_SCHEDUEL");
    trace t = load_trace_of(&r); /* the defaults were used */
    check_complete(&t);
    CHECK(kernel_by_name(&t, "k") != NULL);
    trace_free(&t);
}

static void t_badoutput(void)
{
    char env0[1400];
    snprintf(env0, sizeof env0, "GMEMPROF_OUTPUT=%s/badoutput/no/such/dir/t.zst", g_work);
    /* (WORK/badoutput exists, WORK/badoutput/no does not) */
    const char *env[] = {env0, NULL};
    run r;
    run_app_in("badoutput", "plain", env, &r);
    CHECK(exited(&r, 0));
    CHECK_STR(r.out, "");
    CHECK_EQ_U64(count_lines(r.err, "gmemprof: "), 1);
    CHECK_HAS(r.err, "/badoutput/no/such/dir/t.zst");
    CHECK_HAS(r.err, "No such file or directory");
    CHECK(has_fact("A.corr")); /* the program ran on */
}

/* ---- output directory without write permission ------------------------------- */

#define NOPERM_ID 65534 /* nobody / nogroup on Debian and Ubuntu */

/* A program found on PATH or in the sbin directories (runuser lives there). */
static int find_tool(const char *name, char *out, size_t cap)
{
    const char *path = getenv("PATH");
    char dirs[4096];
    snprintf(dirs, sizeof dirs, "%s:/usr/sbin:/sbin:/usr/bin:/bin", path ? path : "");
    for (char *save = NULL, *d = strtok_r(dirs, ":", &save); d; d = strtok_r(NULL, ":", &save)) {
        snprintf(out, cap, "%s/%s", *d ? d : ".", name);
        if (access(out, X_OK) == 0)
            return 1;
    }
    return 0;
}

static int copy_file(const char *from, const char *to, mode_t mode)
{
    int in = open(from, O_RDONLY), o = open(to, O_WRONLY | O_CREAT | O_TRUNC, mode);
    char buf[65536];
    ssize_t n = 0;
    int ok = in >= 0 && o >= 0;
    while (ok && (n = read(in, buf, sizeof buf)) > 0)
        ok = write(o, buf, (size_t)n) == n;
    ok = ok && n == 0;
    if (in >= 0)
        close(in);
    if (o >= 0 && close(o) != 0)
        ok = 0;
    if (!ok)
        fprintf(stderr, "noperm: cannot copy %s to %s: %s\n", from, to, strerror(errno));
    return ok ? 0 : -1;
}

static void noperm_skip(const char *why)
{
    printf("SKIP noperm: %s\n", why);
    fprintf(stderr, "SKIP noperm: %s\n", why);
    exit(77);
}

/* Row 8 of docs/reliability.md: GMEMPROF_OUTPUT in a directory the program's
 * user may not write to. Permission bits take nothing away from root (the
 * tests run as root in CI), so as root the app runs as uid/gid 65534 through
 * setpriv (util-linux) or, failing that, runuser; as another user it runs as
 * that user against a directory of mode 0555. Skips (77) only as root with
 * neither tool. The app, the library and the fake CUPTI and driver are copied
 * to a fresh directory under /tmp that the unprivileged user can read (the
 * build tree may not be). A control run into a directory the user owns must
 * leave a complete trace owned by that user (so the privilege drop did
 * happen and nothing else stops the profiler); the run into the read-only
 * directory must then print exactly one `gmemprof:` line naming the path and
 * `Permission denied`, create no file, and leave the program's exit status,
 * stdout and work unchanged. */
static void t_noperm(void)
{
    int root = geteuid() == 0;
    char tool[1024] = "";
    const char *kind = "";
    if (root) {
        if (find_tool("setpriv", tool, sizeof tool))
            kind = "setpriv";
        else if (find_tool("runuser", tool, sizeof tool))
            kind = "runuser";
        else
            noperm_skip("running as root and neither setpriv nor runuser is installed (util-linux)");
        if (strcmp(kind, "runuser") == 0) {
            struct passwd *pw = getpwnam("nobody");
            if (!pw || pw->pw_uid != NOPERM_ID)
                noperm_skip("runuser needs a user 'nobody' with uid 65534");
        }
    }
    uid_t uid = root ? NOPERM_ID : geteuid();

    /* What the app needs, where the unprivileged user can read it. */
    char tmp[] = "/tmp/gmemprof-noperm-XXXXXX";
    REQUIRE(mkdtemp(tmp) != NULL, "noperm: mkdtemp %s: %s", tmp, strerror(errno));
    chmod(tmp, 0755);
    char app[256], lib[256], libdir[256], cupti[300], cuda[300], ro[256], ok[256], factsdir[256];
    snprintf(app, sizeof app, "%s/e2e_app", tmp);
    snprintf(lib, sizeof lib, "%s/libgmemprof.so", tmp);
    snprintf(libdir, sizeof libdir, "%s/lib", tmp);
    snprintf(cupti, sizeof cupti, "%s/libcupti.so.13", libdir);
    snprintf(cuda, sizeof cuda, "%s/libcuda.so.1", libdir);
    snprintf(ro, sizeof ro, "%s/readonly", tmp);
    snprintf(ok, sizeof ok, "%s/writable", tmp);
    snprintf(factsdir, sizeof factsdir, "%s/facts", tmp);
    mkdir(libdir, 0755);
    mkdir(ro, root ? 0755 : 0555); /* root-owned 0755: not writable by uid 65534 */
    mkdir(ok, 0755);
    mkdir(factsdir, 0777);
    chmod(factsdir, 0777);
    if (root)
        REQUIRE(chown(ok, NOPERM_ID, NOPERM_ID) == 0 && chown(factsdir, NOPERM_ID, NOPERM_ID) == 0);
    /* The fakes come from LD_LIBRARY_PATH (e2e.cmake sets it to their directory). */
    const char *ldp = getenv("LD_LIBRARY_PATH");
    char fdir[1024], src[1200];
    snprintf(fdir, sizeof fdir, "%s", ldp ? ldp : "");
    char *colon = strchr(fdir, ':');
    if (colon)
        *colon = '\0';
    /* setup: without these copies the run says nothing */
    REQUIRE(copy_file(g_app, app, 0755) == 0);
    REQUIRE(copy_file(g_lib, lib, 0755) == 0);
    snprintf(src, sizeof src, "%s/libcupti.so.13", fdir);
    REQUIRE(copy_file(src, cupti, 0755) == 0);
    snprintf(src, sizeof src, "%s/libcuda.so.1", fdir);
    REQUIRE(copy_file(src, cuda, 0755) == 0);

    char e_lib[400], e_ldp[400], e_facts[400], e_out[600];
    snprintf(e_lib, sizeof e_lib, "E2E_LIB=%s", lib);
    snprintf(e_ldp, sizeof e_ldp, "LD_LIBRARY_PATH=%s", libdir);
    snprintf(e_facts, sizeof e_facts, "E2E_FACTS=%s/facts", factsdir);
    char *argv[12];
    int a = 0;
    char reuid[32], regid[32];
    snprintf(reuid, sizeof reuid, "--reuid=%d", NOPERM_ID);
    snprintf(regid, sizeof regid, "--regid=%d", NOPERM_ID);
    if (root && strcmp(kind, "setpriv") == 0) {
        argv[a++] = tool;
        argv[a++] = reuid;
        argv[a++] = regid;
        argv[a++] = "--clear-groups";
        argv[a++] = "--";
    } else if (root) {
        argv[a++] = tool;
        argv[a++] = "-u";
        argv[a++] = "nobody";
        argv[a++] = "--";
    }
    argv[a++] = app;
    argv[a++] = "plain";
    argv[a] = NULL;
    fprintf(stderr, "noperm: running as uid %d%s%s\n", (int)uid, root ? " through " : "", kind);

    /* Control: a directory the user owns. */
    char okfile[400];
    snprintf(okfile, sizeof okfile, "%s/t.zst", ok);
    snprintf(e_out, sizeof e_out, "GMEMPROF_OUTPUT=%s", okfile);
    const char *env_ok[] = {e_lib, e_ldp, e_facts, e_out, NULL};
    run c;
    run_prog("noperm", argv, env_ok, &c);
    facts_load(e_facts + strlen("E2E_FACTS="));
    CHECK(exited(&c, 0));
    CHECK(has_fact("A.corr"));
    struct stat sb;
    CHECK(stat(okfile, &sb) == 0);
    if (stat(okfile, &sb) == 0)
        CHECK_EQ_U64(sb.st_uid, uid); /* written by the unprivileged user */
    trace t;
    if (trace_load(okfile, &t) == 0) {
        check_complete(&t);
        trace_free(&t);
    } else {
        CHECK(!"the control run's trace reads back");
    }
    char *control_out = strdup(c.out);
    int control_status = c.status;
    CHECK_EQ_U64(count_lines(c.err, "gmemprof: "), 1); /* "wrote PATH (...)" */
    CHECK_EQ_U64(count_lines(c.err, "gmemprof: wrote "), 1);

    /* The directory it may not write to. */
    char rofile[400];
    snprintf(rofile, sizeof rofile, "%s/t.zst", ro);
    snprintf(e_out, sizeof e_out, "GMEMPROF_OUTPUT=%s", rofile);
    unlink(e_facts + strlen("E2E_FACTS="));
    const char *env_ro[] = {e_lib, e_ldp, e_facts, e_out, NULL};
    run r;
    run_prog("noperm", argv, env_ro, &r);
    facts_load(e_facts + strlen("E2E_FACTS="));
    CHECK(exited(&r, 0));
    CHECK(r.status == control_status);
    CHECK_STR(r.out, control_out);
    CHECK_EQ_U64(count_lines(r.err, "gmemprof: "), 1);
    CHECK_HAS(r.err, rofile);
    CHECK_HAS(r.err, "Permission denied");
    CHECK(!file_exists(rofile));
    CHECK(has_fact("A.corr")); /* the program ran on */
    if (stat(e_facts + strlen("E2E_FACTS="), &sb) == 0)
        CHECK_EQ_U64(sb.st_uid, uid);
    else
        CHECK(!"the app wrote its facts");
    free(control_out);

    /* Clean up (the directories were made here). */
    const char *files[] = {app, lib, cupti, cuda, okfile, rofile, NULL};
    for (int i = 0; files[i]; i++)
        unlink(files[i]);
    unlink(e_facts + strlen("E2E_FACTS="));
    chmod(ro, 0755);
    rmdir(ro);
    rmdir(ok);
    rmdir(factsdir);
    rmdir(libdir);
    rmdir(tmp);
}

static void t_diskfull(void)
{
    const char *env[] = {"GMEMPROF_OUTPUT=/dev/full", NULL};
    run r;
    run_app_in("diskfull", "plain", env, &r);
    CHECK(exited(&r, 0));
    CHECK_STR(r.out, "");
    CHECK_EQ_U64(count_lines(r.err, "gmemprof: "), 1);
    CHECK_HAS(r.err, "/dev/full");
    CHECK_HAS(r.err, "No space left on device");
}

static void t_conflict(void)
{
    const char *env[] = {"E2E_CONFLICT=Nsight Systems", NULL};
    run r;
    run_app_in("conflict", "plain", env, &r);
    CHECK(exited(&r, 0));
    CHECK_STR(r.out, "");
    CHECK_EQ_U64(count_lines(r.err, "gmemprof: "), 1);
    CHECK_HAS(r.err, "another CUPTI client");
    CHECK_HAS(r.err, "Nsight Systems");
    char p[1300];
    trace_path(&r, r.pid, p, sizeof p);
    CHECK(!file_exists(p));
}

static void t_signal(const char *scenario, int sig)
{
    run r;
    run_app(scenario, NULL, &r);
    CHECK(signaled(&r, sig));
    trace t = load_trace_of(&r);
    check_complete(&t);
    const rec *we = last(&t, GMT_REC_WINDOW_END);
    CHECK(we && we->u.we.reason == GMT_WEND_SIGNAL);
    CHECK(mem_by_corr(&t, GMT_REC_ALLOC, F("A.corr")) != NULL);
    CHECK(kernel_by_name(&t, "k1") != NULL);
    trace_free(&t);
}

static uint64_t mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* SIGTERM (even rounds) or SIGINT sent from outside while the fake CUPTI
 * produces records at full rate, 20 times: every run dies by that signal
 * with a complete trace (window end reason "signal"). The signal lands on
 * the producing thread, often inside the buffer pool's lock or the fake
 * CUPTI's. The outcome does not depend on timing: the signal goes out once
 * the app has recorded its first kernel (a fact), and what the writer could
 * not take within its budget is counted as dropped (the allocation made
 * first is in the trace, or the drop count says why not). The time from the
 * signal to the end is printed, not checked: a loaded machine stretches it. */
static void t_sigload(void)
{
    const char *rs = getenv("E2E_SIGLOAD_ROUNDS");
    int rounds = rs && atoi(rs) > 0 ? atoi(rs) : 20;
    uint64_t worst = 0, sum = 0;
    if (rounds > 64)
        rounds = 64;
    for (int i = 0; i < rounds; i++) {
        int sig = i % 2 ? SIGINT : SIGTERM;
        tc_context("round %d (%s)", i, sig == SIGTERM ? "SIGTERM" : "SIGINT");
        char *argv[] = {(char *)g_app, (char *)"sigload", NULL};
        run r;
        start_prog("sigload", argv, NULL, &r);
        /* producing: its first kernel is noted (the handlers are in place
         * by then), or the app ended (a failure the checks below show) */
        char factp[1200];
        snprintf(factp, sizeof factp, "%s/facts", r.dir);
        int st = 0, ended = 0;
        for (;;) {
            char *f = slurp(factp);
            int ready = strstr(f, "k1.corr=") != NULL;
            free(f);
            if (ready)
                break;
            if (waitpid(r.pid, &st, WNOHANG) == r.pid) {
                ended = 1;
                break;
            }
            struct timespec ms = {0, 1000000};
            nanosleep(&ms, NULL);
        }
        uint64_t t0 = mono_ms();
        if (!ended) {
            kill(r.pid, sig);
            st = wait_prog("sigload", r.pid, 1, 30000);
        }
        uint64_t dt = mono_ms() - t0;
        collect_prog("sigload", &r, st);
        worst = dt > worst ? dt : worst;
        sum += dt;
        CHECK(signaled(&r, sig), "wait status %#x", r.status);
        trace t = load_trace_of(&r);
        check_complete(&t);
        const rec *we = last(&t, GMT_REC_WINDOW_END);
        CHECK(we && we->u.we.reason == GMT_WEND_SIGNAL, "%zu WINDOW_BEGIN, %zu WINDOW_END, reason %d",
              count(&t, GMT_REC_WINDOW_BEGIN), count(&t, GMT_REC_WINDOW_END), we ? (int)we->u.we.reason : -1);
        const rec *stats = last(&t, GMT_REC_STATS);
        CHECK(mem_by_corr(&t, GMT_REC_ALLOC, F("A.corr")) != NULL || (stats && stats->u.stats.dropped_writer > 0),
              "the first allocation is neither written nor counted as dropped");
        trace_free(&t);
    }
    tc_context(NULL);
    fprintf(stderr, "sigload: %d rounds, signal to exit: worst %" PRIu64 " ms, mean %" PRIu64 " ms\n", rounds,
            worst, sum / (uint64_t)rounds);
}

/* A program that closes every descriptor above 2 and opens its own files
 * (as daemons do): not one byte of the profiler's (zstd frames, wake-ups)
 * lands in them; the profiler says so in one line and stops the trace. */
static void t_closefds(void)
{
    char dir[1200], env_dir[1300], p[1300], want[128];
    snprintf(dir, sizeof dir, "%s/closefds-data", g_work);
    mkdir(g_work, 0755);
    mkdir(dir, 0755);
    rm_tree(dir);
    snprintf(env_dir, sizeof env_dir, "E2E_DATA_DIR=%s", dir);
    const char *env[] = {env_dir, "GMEMPROF_FLUSH_MS=10", NULL};
    run r;
    run_app("closefds", env, &r);
    CHECK(exited(&r, 0), "wait status %#x", r.status);
    CHECK_STR(r.out, "");
    CHECK_EQ_U64(F("trace_fd_found"), 1);
    CHECK_EQ_U64(F("held"), 1); /* the writer was held while the descriptors changed */
    CHECK_EQ_U64(F("written"), 100);
    for (int i = 0; i < 9; i++) {
        snprintf(p, sizeof p, "%s/d%d", dir, i);
        char *got = slurp(p);
        /* "dI line K\n" for K = 0..99: 10 lines of 10 bytes, 90 of 11 */
        size_t len = strlen(got);
        CHECK_EQ_U64(len, 10 * 10 + 90 * 11);
        size_t at = 0;
        for (int k = 0; k < 100 && at <= len; k++) {
            int n = snprintf(want, sizeof want, "d%d line %d\n", i, k);
            CHECK(strncmp(got + at, want, (size_t)n) == 0, "d%d: line %d is not the program's", i, k);
            at += (size_t)n;
        }
        free(got);
    }
    CHECK_EQ_U64(count_lines(r.err, "gmemprof: "), 1);
    CHECK_HAS(r.err, "failed: the program closed its descriptor");
}

/* A name that stands for a descriptor (here a link in the work directory to
 * /proc/self/fd/1, as /dev/stdout is) is never replaced: a regular file
 * behind it is refused, a character device written in place. Never
 * /dev/stdout itself: a library without the fix, run as root, would
 * replace the system's link. */
static void t_devstdout(void)
{
    char dir[1200], link[1300], out[1400], p[1700];
    snprintf(dir, sizeof dir, "%s/devstdout-links", g_work);
    mkdir(g_work, 0755);
    mkdir(dir, 0755);
    snprintf(link, sizeof link, "%s/out.zst", dir);
    unlink(link);
    CHECK(symlink("/proc/self/fd/1", link) == 0, "%s", strerror(errno));
    snprintf(out, sizeof out, "GMEMPROF_OUTPUT=%s", link);
    const char *env[] = {out, NULL};
    run r;
    struct stat ls;
    /* stdout is a regular file (start_prog's): refused, the link kept */
    run_app("devstdout", env, &r);
    CHECK(exited(&r, 0));
    CHECK_STR(r.out, "");
    CHECK(lstat(link, &ls) == 0 && S_ISLNK(ls.st_mode), "the link was replaced");
    CHECK_EQ_U64(count_lines(r.err, "gmemprof: "), 1);
    snprintf(p, sizeof p, "gmemprof: cannot write the trace to %s: it names an open descriptor (a regular file), "
             "which is never replaced or written; name a regular file", link);
    CHECK_HAS(r.err, p);
    /* stdout is /dev/null: written in place, the link kept */
    const char *env3[] = {out, "E2E_STDOUT_NULL=1", NULL};
    run_app("devstdout", env3, &r);
    CHECK(exited(&r, 0));
    CHECK(lstat(link, &ls) == 0 && S_ISLNK(ls.st_mode), "the link was replaced");
    snprintf(p, sizeof p, "gmemprof: wrote %s (", link);
    CHECK_HAS(r.err, p);
    CHECK_EQ_U64(count_lines(r.err, "gmemprof: "), 1);
    unlink(link);
}

/* exit() from the main thread while two threads call CUDA in a loop: the
 * process exits, the trace is complete, and it holds nothing the threads
 * made after the exit began (the window's end). */
static void t_exitload(void)
{
    run r;
    /* the exit's flush lets the threads make 1000 more records first */
    const char *env[] = {"E2E_FORCED_FLUSH_WAIT=1000", NULL};
    run_app("exitload", env, &r);
    CHECK(exited(&r, 0), "wait status %#x", r.status);
    CHECK_STR(r.out, "");
    trace t = load_trace_of(&r);
    check_complete(&t);
    const rec *we = last(&t, GMT_REC_WINDOW_END);
    CHECK(we && we->u.we.reason == GMT_WEND_EXIT);
    uint64_t end = we ? we->u.we.ts : 0;
    /* the exit began after the program's last word before exit(), and
     * was over before its handler that runs after the profiler's */
    CHECK(end >= F("exit_ts"), "window end %" PRIu64 " before exit() at %" PRIu64, end, F("exit_ts"));
    CHECK(end <= F("end_ts"), "window end %" PRIu64 " after the end at %" PRIu64, end, F("end_ts"));
    /* the 1000 records made during the exit's flush are not in */
    uint64_t flush = F("forced_ts");
    CHECK(flush > 0 && end <= flush, "window end %" PRIu64 ", the exit's flush at %" PRIu64, end, flush);
    size_t late = 0, mems = 0;
    for (size_t i = 0; i < t.n; i++) {
        uint64_t ts = t.r[i].type == GMT_REC_ALLOC || t.r[i].type == GMT_REC_FREE ? t.r[i].u.mem.ts
                      : t.r[i].type == GMT_REC_KERNEL                            ? t.r[i].u.kernel.start
                                                                                 : 0;
        mems += t.r[i].type == GMT_REC_ALLOC;
        late += ts > end || ts > flush;
    }
    CHECK_EQ_U64(late, 0);
    CHECK(mems > 1, "%zu allocations", mems);
    CHECK(mem_by_corr(&t, GMT_REC_ALLOC, F("A.corr")) != NULL);
    trace_free(&t);
}

/* The name given belongs to the process that records: the agent (CUDA
 * started, no context) starts first and outlives its child, which records
 * and takes the name. */
static void t_claimname(void)
{
    char out[1300], p[1300];
    snprintf(out, sizeof out, "GMEMPROF_OUTPUT=%s/claimname/pl.zst", g_work);
    const char *env[] = {out, NULL};
    run r;
    run_app_in("claimname", "agent", env, &r);
    snprintf(p, sizeof p, "%s/pl.zst", r.dir);
    CHECK(exited(&r, 0));
    CHECK_EQ_U64(F("child_exit"), 0);
    trace t;
    CHECK(trace_load(p, &t) == 0, "%s", p);
    check_complete(&t);
    CHECK(t.n > 0 && t.r[0].u.hdr.pid == F("child"), "the trace at the name is the recording child's");
    trace_free(&t);
    snprintf(p, sizeof p, "%s/pl.%d.zst", r.dir, (int)F("child"));
    CHECK(!file_exists(p), "%s", p);
    CHECK(strstr(r.err, "is being written by another process") == NULL);
    /* nothing else is left in the directory: no temporary file */
    DIR *d = opendir(r.dir);
    struct dirent *e;
    int others = 0;
    while (d && (e = readdir(d)) != NULL)
        others += strncmp(e->d_name, ".gmemprof-", 10) == 0;
    if (d)
        closedir(d);
    CHECK_EQ_U64(others, 0);
}

/* The longest legal name (255 bytes) takes the trace. */
static void t_longname(void)
{
    char base[256], out[1600], p[1500];
    memset(base, 'a', 251);
    memcpy(base + 251, ".zst", 5);
    snprintf(p, sizeof p, "%s/longname/%s", g_work, base);
    snprintf(out, sizeof out, "GMEMPROF_OUTPUT=%s", p);
    const char *env[] = {out, NULL};
    run r;
    run_app("longname", env, &r);
    CHECK(exited(&r, 0));
    CHECK_EQ_U64(strlen(base), 255);
    trace t;
    CHECK(trace_load(p, &t) == 0, "%s", p);
    check_complete(&t);
    CHECK(mem_by_corr(&t, GMT_REC_ALLOC, F("A.corr")) != NULL);
    trace_free(&t);
    CHECK_EQ_U64(count_lines(r.err, "gmemprof: "), 1);
    CHECK_HAS(r.err, "gmemprof: wrote ");
}

static void t_sigchain(void)
{
    run r;
    run_app("sigchain", NULL, &r);
    CHECK(exited(&r, 7)); /* the program's own handler ran, and it decided */
    trace t = load_trace_of(&r);
    check_complete(&t);
    const rec *we = last(&t, GMT_REC_WINDOW_END);
    CHECK(we && we->u.we.reason == GMT_WEND_EXIT);
    trace_free(&t);
}

static void t_sigign(void)
{
    run r;
    run_app("sigign", NULL, &r);
    CHECK(exited(&r, 0)); /* still ignored: the program went on */
    trace t = load_trace_of(&r);
    check_complete(&t);
    CHECK(kernel_by_name(&t, "after_signal") != NULL);
    const rec *we = last(&t, GMT_REC_WINDOW_END);
    CHECK(we && we->u.we.reason == GMT_WEND_EXIT);
    trace_free(&t);
}

static void t_time(void)
{
    const char *env[] = {"GMEMPROF_SCHEDULE=delay=300ms,duration=1s", "GMEMPROF_SAMPLE_MS=50", NULL};
    run r;
    run_app("time", env, &r);
    CHECK(exited(&r, 0));
    trace t = load_trace_of(&r);
    check_complete(&t);
    check_windows(&t);
    CHECK_EQ_U64(count(&t, GMT_REC_WINDOW_BEGIN), 1);
    const rec *wb = nth(&t, GMT_REC_WINDOW_BEGIN, 0), *we = nth(&t, GMT_REC_WINDOW_END, 0);
    CHECK(wb && wb->u.wb.baseline_count == 1 && wb->u.wb.baseline_bytes == 1 * MIB);
    CHECK(we && we->u.we.reason == GMT_WEND_SCHEDULE);
    const rec *b = mem_by_corr(&t, GMT_REC_ALLOC, F("B.corr"));
    CHECK(b && index_of(&t, b) > index_of(&t, wb) && index_of(&t, b) < index_of(&t, we));
    CHECK(kernel_by_name(&t, "k1") != NULL);
    CHECK(mem_by_corr(&t, GMT_REC_ALLOC, F("C.corr")) == NULL);
    CHECK(kernel_by_name(&t, "k2") == NULL);
    /* phase changes: WAIT at start, ACTIVE, DONE, from the clock */
    CHECK_EQ_U64(count(&t, GMT_REC_STEP), 3);
    for (size_t i = 1; i < count(&t, GMT_REC_STEP); i++)
        CHECK(nth(&t, GMT_REC_STEP, i)->u.step.source == GMT_STEPSRC_TIME);
    CHECK(nth(&t, GMT_REC_STEP, 1) && nth(&t, GMT_REC_STEP, 1)->u.step.phase == GMT_PHASE_ACTIVE);
    CHECK(nth(&t, GMT_REC_STEP, 2) && nth(&t, GMT_REC_STEP, 2)->u.step.phase == GMT_PHASE_DONE);
    /* periodic driver samples inside the window (1 s at 50 ms: about 20) */
    size_t samples = 0;
    for (size_t i = index_of(&t, wb); we && i < index_of(&t, we); i++)
        samples += t.r[i].type == GMT_REC_MEMSAMPLE;
    fprintf(stderr, "time: %zu samples in the window\n", samples);
    CHECK(samples >= 5);
    trace_free(&t);
}

static void t_budget(void)
{
    const char *env[] = {"GMEMPROF_HOST_BUFFER_MB=4", "GMEMPROF_CUPTI_BUFFER_KB=32", NULL};
    run r;
    run_app("budget", env, &r);
    CHECK(exited(&r, 0));
    CHECK_EQ_U64(F("blocked"), 1);
    trace t = load_trace_of(&r);
    check_complete(&t);
    size_t allocs = count(&t, GMT_REC_ALLOC) + count(&t, GMT_REC_FREE); /* every memory record */
    const rec *s = last(&t, GMT_REC_STATS);
    uint64_t dropped = s ? s->u.stats.dropped_writer : 0;
    fprintf(stderr, "budget: %zu written, %" PRIu64 " dropped, host bytes %" PRIu64 "\n", allocs, dropped,
            s ? s->u.stats.own_host_bytes : 0);
    CHECK(dropped > 0);
    CHECK_EQ_U64(allocs + dropped, F("produced"));
    /* the 4 MiB budget, plus the live table (not a buffer: it grows with
     * the program's live allocations, here a handful) */
    CHECK(s && s->u.stats.own_host_bytes <= 4 * MIB + 256 * 1024);
    trace_free(&t);
}

static void t_sigkill(void)
{
    const char *env[] = {"GMEMPROF_FLUSH_MS=50", NULL};
    run r;
    run_app("sigkill", env, &r);
    CHECK(signaled(&r, SIGKILL));
    trace t = load_trace_of(&r);
    CHECK(!t.end.has_trailer);
    CHECK(t.n > 3);
    CHECK(t.n > 0 && t.r[0].type == GMT_REC_HEADER);
    CHECK(mem_by_corr(&t, GMT_REC_ALLOC, F("A.corr")) != NULL);
    CHECK(count(&t, GMT_REC_KERNEL) > 0);
    fprintf(stderr, "sigkill: %zu records readable, %" PRIu64 " frames, truncated=%d: %s\n", t.n, t.end.frames,
            t.end.truncated, t.end.message);
    trace_free(&t);
}

static void t_fork(void)
{
    run r;
    run_app("fork", NULL, &r);
    CHECK(exited(&r, 0));
    CHECK_EQ_U64(F("child_exit"), 0);
    trace t = load_trace_of(&r);
    check_complete(&t);
    CHECK(mem_by_addr(&t, GMT_REC_ALLOC, 0x20000, 0) != NULL); /* the parent goes on */
    CHECK(mem_by_addr(&t, GMT_REC_ALLOC, 0x90000, 0) == NULL);
    CHECK(kernel_by_name(&t, "k_child") == NULL);
    char p[1300];
    trace_path(&r, (pid_t)F("child"), p, sizeof p);
    CHECK(!file_exists(p)); /* a forked child records nothing */
    CHECK_EQ_U64(count_lines(r.err, "gmemprof: "), 1);
    trace_free(&t);
}

static void t_vmm(void)
{
    run r;
    run_app("vmm", NULL, &r);
    CHECK(exited(&r, 0));
    trace t = load_trace_of(&r);
    check_complete(&t);
    const uint64_t base = 0x7f0000000000ull;
    const rec *grow = range_by_name(&t, "grow");
    CHECK(grow != NULL);
    const rec *a1 = mem_by_addr(&t, GMT_REC_ALLOC, base, 0);
    CHECK(a1 != NULL);
    if (a1) {
        CHECK_EQ_U64(a1->u.mem.source, GMT_SRC_VMM);
        CHECK_EQ_U64(a1->u.mem.corr, 0);
        CHECK_EQ_U64(a1->u.mem.bytes, 20 * MIB);
        CHECK_EQ_U64(a1->u.mem.tid, F("tid")); /* from the cuMemMap that mapped it */
        CHECK_EQ_U64(a1->u.mem.flags & GMT_MEMF_NO_THREAD, 0);
        CHECK_EQ_U64(a1->u.mem.range, grow ? grow->u.range.id : 1);
    }
    const rec *a2 = mem_by_addr(&t, GMT_REC_ALLOC, base + 20 * MIB, 0);
    CHECK(a2 && a2->u.mem.source == GMT_SRC_VMM && a2->u.mem.corr == F("create2.corr") &&
          a2->u.mem.tid == F("tid"));
    const rec *pl = mem_by_corr(&t, GMT_REC_ALLOC, F("plain.corr"));
    CHECK(pl && pl->u.mem.source == GMT_SRC_MALLOC);
    const rec *f1 = mem_by_addr(&t, GMT_REC_FREE, base, 0);
    CHECK(f1 && f1->u.mem.source == GMT_SRC_VMM && f1->u.mem.bytes == 20 * MIB);
    /* a release without an id is attributed to the cuMemUnmap that covered it */
    CHECK(f1 && f1->u.mem.tid == F("tid") && !(f1->u.mem.flags & GMT_MEMF_NO_THREAD));
    /* one ALLOC per physical chunk: nothing counted twice */
    CHECK_EQ_U64(count(&t, GMT_REC_ALLOC), 3);
    trace_free(&t);
}

static void t_sources(void)
{
    run r;
    run_app("sources", NULL, &r);
    CHECK(exited(&r, 0));
    trace t = load_trace_of(&r);
    check_complete(&t);
    const rec *a = mem_by_corr(&t, GMT_REC_ALLOC, F("async.corr"));
    CHECK(a && a->u.mem.source == GMT_SRC_ASYNC_POOL && a->u.mem.stream == 13 && a->u.mem.bytes == 2 * MIB);
    const rec *m = mem_by_corr(&t, GMT_REC_ALLOC, F("managed.corr"));
    CHECK(m && m->u.mem.source == GMT_SRC_MANAGED && m->u.mem.kind == GMT_MEMKIND_MANAGED);
    const rec *p = mem_by_corr(&t, GMT_REC_ALLOC, F("pinned.corr"));
    CHECK(p && p->u.mem.source == GMT_SRC_PINNED_HOST && p->u.mem.kind == GMT_MEMKIND_PINNED);
    const rec *pi = mem_by_corr(&t, GMT_REC_ALLOC, F("pitch.corr"));
    CHECK(pi && pi->u.mem.source == GMT_SRC_PITCHED);
    const rec *fa = mem_by_corr(&t, GMT_REC_FREE, F("freeasync.corr"));
    CHECK(fa && fa->u.mem.source == GMT_SRC_ASYNC_POOL && fa->u.mem.bytes == 2 * MIB);
    CHECK(mem_by_corr(&t, GMT_REC_ALLOC, F("after_reset.corr")) != NULL);
    /* the reset paused driver sampling at its ENTER and resumed it at EXIT */
    const rec *g = nth(&t, GMT_REC_TAG, 0);
    CHECK(g && g->u.tag.ndev == 1 && g->u.tag.dev[0].driver_total == 80 * GIB);
    trace_free(&t);
}

static void t_attrs(void)
{
    const char *env[] = {"GMEMPROF_CUPTI_BUFFER_KB=32", "GMEMPROF_DEVICE_BUFFER_KB=256", NULL};
    run r;
    run_app("attrs", env, &r);
    CHECK(exited(&r, 0));
    CHECK_EQ_U64(F("devbuf"), 256 * 1024);
    CHECK_EQ_U64(F("prealloc"), 2);
    CHECK_EQ_U64(F("poollimit"), (16 * MIB) / (256 * 1024));
    /* one buffer stream for all threads (CUPTI's default is one per thread) */
    CHECK_EQ_U64(F("per_thread_buffers"), 0);
    CHECK_EQ_U64(F("memory2_on"), 1);
    CHECK_EQ_U64(F("kernel_on"), 1);
    CHECK_EQ_U64(F("malloc_cb"), 1);
    CHECK_EQ_U64(F("launch_cb"), 1);
    CHECK_EQ_U64(F("rt_launch_cb"), 0);
    CHECK_EQ_U64(F("memcpy_cb"), 1);
    CHECK_EQ_U64(F("vmm_cb"), 1);
    CHECK_EQ_U64(F("ctx_cb"), 1);
    CHECK(F("buffers") > 10);
    trace t = load_trace_of(&r);
    check_complete(&t);
    CHECK_EQ_U64(count(&t, GMT_REC_ALLOC), 3000);
    CHECK_EQ_U64(count(&t, GMT_REC_KERNEL), 3000);
    const rec *s = last(&t, GMT_REC_STATS);
    CHECK(s && s->u.stats.dropped_writer == 0 && s->u.stats.dropped_cupti == 0 && s->u.stats.unmatched_corr == 0);
    CHECK(s && s->u.stats.own_device_bytes == 2 * 256 * 1024);
    trace_free(&t);
}

static void t_search(void)
{
    char *argv[] = {(char *)g_search, NULL};
    run r;
    run_prog("search", argv, NULL, &r);
    CHECK(exited(&r, 5));
    CHECK_EQ_U64(count_lines(r.err, "gmemprof: "), 1);
    CHECK_HAS(r.err, "gmemprof: wrote ");
    trace t = load_trace_of(&r);
    check_complete(&t);
    trace_free(&t);
}

static void t_nocupti(void)
{
    char env0[1400];
    snprintf(env0, sizeof env0, "GMEMPROF_CUPTI_LIB=%s/nocupti/libcupti.so.13", g_work);
    const char *env[] = {env0, NULL};
    char *argv[] = {(char *)g_search, NULL};
    run r;
    run_prog("nocupti", argv, env, &r);
    CHECK(exited(&r, 5));
    CHECK_STR(r.out, "");
    CHECK_EQ_U64(count_lines(r.err, "gmemprof: "), 1);
    CHECK_HAS(r.err, "cannot load CUPTI");
    CHECK_HAS(r.err, "GMEMPROF_CUPTI_LIB");
    char p[1300];
    trace_path(&r, r.pid, p, sizeof p);
    CHECK(!file_exists(p));
}

static void t_launcher(void)
{
    char out[1400];
    snprintf(out, sizeof out, "%s/launcher/via-launcher.zst", g_work);
    char *argv[] = {(char *)g_launcher, "-o", out, "--", (char *)g_app, "plain", NULL};
    run r;
    run_prog("launcher", argv, NULL, &r);
    CHECK(exited(&r, 0));
    CHECK_STR(r.out, "");
    CHECK_HAS(r.err, "via-launcher.zst");
    trace t;
    CHECK(trace_load(out, &t) == 0);
    check_complete(&t);
    CHECK(mem_by_corr(&t, GMT_REC_ALLOC, F("A.corr")) != NULL);
    trace_free(&t);
}

/* _exit() and abort(): like SIGKILL, the trace ends at the last frame the
 * writer finished, without a trailer; the exit status is the program's. */
static void check_cut_trace(const run *r, const char *scenario)
{
    trace t = load_trace_of(r);
    CHECK(!t.end.has_trailer);
    CHECK(t.n > 3);
    CHECK(t.n > 0 && t.r[0].type == GMT_REC_HEADER);
    CHECK_EQ_U64(count(&t, GMT_REC_TRAILER), 0);
    CHECK(mem_by_corr(&t, GMT_REC_ALLOC, F("A.corr")) != NULL);
    /* 10 launches 20 ms apart, then 300 ms of frame ends at 50 ms: normally
     * all 10 are in; a heavily loaded machine may delay the writer, so the
     * test asks only for a prefix (at least one, never more than launched). */
    CHECK(count(&t, GMT_REC_KERNEL) >= 1 && count(&t, GMT_REC_KERNEL) <= 10);
    fprintf(stderr, "%s: %zu records readable, %" PRIu64 " frames, truncated=%d: %s\n", scenario, t.n,
            t.end.frames, t.end.truncated, t.end.message);
    trace_free(&t);
}

static void t_exit(void)
{
    const char *env[] = {"GMEMPROF_FLUSH_MS=50", NULL};
    run r;
    run_app("exit", env, &r);
    CHECK(exited(&r, 5)); /* _exit(5), unchanged */
    CHECK_STR(r.out, "");
    CHECK_EQ_U64(count_lines(r.err, "gmemprof: "), 0); /* no exit handler ran */
    check_cut_trace(&r, "exit");
}

static void t_abort(void)
{
    const char *env[] = {"GMEMPROF_FLUSH_MS=50", NULL};
    run r;
    run_app("abort", env, &r);
    CHECK(signaled(&r, SIGABRT)); /* dies by SIGABRT, as it would have */
    CHECK_STR(r.out, "");
    check_cut_trace(&r, "abort");
}

/* A launcher's own process that starts CUDA but creates no context
 * (torchrun's agent) and execs a worker: the agent leaves no file; the
 * worker's trace is the only one; %r without RANK/LOCAL_RANK is p<pid>, so
 * the agent could never have taken a rank's name (it did, when %r was 0:
 * rank 0's trace was truncated and then cut off by the agent's). */
static void t_agent(void)
{
    char pat[1300], p[1400];
    snprintf(pat, sizeof pat, "%s/agent/t-%%r.zst", g_work);
    char *argv[] = {(char *)g_launcher, "-o", pat, "--", (char *)g_app, "agent", NULL};
    const char *env[] = {"RANK=", "LOCAL_RANK=", NULL};
    run r;
    run_prog("agent", argv, env, &r);
    CHECK(exited(&r, 0));
    CHECK_STR(r.out, "");
    CHECK_EQ_U64(F("child_exit"), 0);
    snprintf(p, sizeof p, "%s/agent/t-p%llu.zst", g_work, (unsigned long long)F("pid"));
    CHECK(!file_exists(p)); /* the agent: nothing recorded, no file */
    snprintf(p, sizeof p, "%s/agent/t-p%llu.zst", g_work, (unsigned long long)F("child"));
    CHECK(file_exists(p));
    trace c;
    CHECK(trace_load(p, &c) == 0);
    check_complete(&c);
    CHECK(nth(&c, GMT_REC_HEADER, 0) && nth(&c, GMT_REC_HEADER, 0)->u.hdr.rank == -1);
    trace_free(&c);
    CHECK_HAS(r.err, "gmemprof: trace ");
    CHECK_HAS(r.err, "1 more process started CUDA but created no context");
    CHECK_EQ_U64(count_lines(r.err, "gmemprof:   "), 0); /* one trace, not a list of two */
}

static void t_forkexec(void)
{
    run r;
    run_app("forkexec", NULL, &r);
    CHECK(exited(&r, 0));
    CHECK_STR(r.out, "");
    CHECK_EQ_U64(F("child_exit"), 0); /* the exec'd program ran to its end */
    pid_t child = (pid_t)F("child");
    /* the parent: complete, its own events, none of the child's */
    trace t = load_trace_of(&r);
    check_complete(&t);
    CHECK(mem_by_corr(&t, GMT_REC_ALLOC, F("A.corr")) != NULL);
    CHECK(mem_by_corr(&t, GMT_REC_ALLOC, F("B.corr")) != NULL); /* the parent goes on */
    CHECK(kernel_by_name(&t, "k_parent") != NULL);
    CHECK(mem_by_addr(&t, GMT_REC_ALLOC, 0x10000, 0) == NULL);
    CHECK(kernel_by_name(&t, "k") == NULL);
    CHECK(nth(&t, GMT_REC_HEADER, 0) && nth(&t, GMT_REC_HEADER, 0)->u.hdr.pid == (uint64_t)r.pid);
    trace_free(&t);
    /* the exec'd child: profiled afresh into its own %p file */
    char p[1300], fp[1300];
    trace_path(&r, child, p, sizeof p);
    CHECK(file_exists(p));
    trace c;
    CHECK(trace_load(p, &c) == 0);
    check_complete(&c);
    snprintf(fp, sizeof fp, "%s/facts.child", r.dir);
    facts_load(fp);
    CHECK_EQ_U64(F("pid"), (uint64_t)child);
    CHECK(mem_by_corr(&c, GMT_REC_ALLOC, F("A.corr")) != NULL);
    CHECK(mem_by_addr(&c, GMT_REC_ALLOC, 0x10000, 0) != NULL);
    CHECK(kernel_by_name(&c, "k") != NULL);
    CHECK(kernel_by_name(&c, "k_parent") == NULL);
    CHECK(mem_by_addr(&c, GMT_REC_ALLOC, 0x20000, 0) == NULL);
    CHECK(nth(&c, GMT_REC_HEADER, 0) && nth(&c, GMT_REC_HEADER, 0)->u.hdr.pid == (uint64_t)child &&
          nth(&c, GMT_REC_HEADER, 0)->u.hdr.ppid == (uint64_t)r.pid);
    trace_free(&c);
    /* one "wrote" line each */
    CHECK_EQ_U64(count_lines(r.err, "gmemprof: "), 2);
}

static void t_devices(void)
{
    run r;
    run_app("devices", NULL, &r);
    CHECK(exited(&r, 0));
    trace t = load_trace_of(&r);
    check_complete(&t);
    /* one DEVICE record per device, in context order */
    CHECK_EQ_U64(count(&t, GMT_REC_DEVICE), 2);
    for (uint64_t d = 0; d < 2; d++) {
        const rec *dv = nth(&t, GMT_REC_DEVICE, d);
        char nm[32];
        snprintf(nm, sizeof nm, "Fake GPU %d", (int)d);
        CHECK(dv && dv->u.dev.device == d && dv->u.dev.total_mem == 80 * GIB);
        CHECK(dv && strcmp(dv->u.dev.name, nm) == 0);
    }
    /* every allocation on its own device; bytes per device from the scenario:
     * device 0: 3 + 1 MiB; device 1: 5 + 2 + 4 MiB, then 2 MiB freed */
    static const uint64_t dev[5] = {0, 1, 0, 1, 1};
    static const uint64_t bytes[5] = {3 * MIB, 5 * MIB, 1 * MIB, 2 * MIB, 4 * MIB};
    uint64_t alloc_bytes[2] = {0, 0};
    for (int i = 0; i < 5; i++) {
        const rec *a = mem_by_corr(&t, GMT_REC_ALLOC, F("a%d.corr", i));
        CHECK(a && a->u.mem.device == dev[i] && a->u.mem.bytes == bytes[i]);
    }
    for (size_t i = 0; i < t.n; i++)
        if (t.r[i].type == GMT_REC_ALLOC && t.r[i].u.mem.device < 2)
            alloc_bytes[t.r[i].u.mem.device] += t.r[i].u.mem.bytes;
    CHECK_EQ_U64(alloc_bytes[0], 4 * MIB);
    CHECK_EQ_U64(alloc_bytes[1], 11 * MIB);
    CHECK_EQ_U64(count(&t, GMT_REC_ALLOC), 5);
    CHECK_EQ_U64(count(&t, GMT_REC_FREE), 1);
    const rec *f = mem_by_corr(&t, GMT_REC_FREE, F("free1.corr"));
    CHECK(f && f->u.mem.device == 1 && f->u.mem.address == 0x20000 && f->u.mem.bytes == 2 * MIB);
    const rec *k0 = kernel_by_name(&t, "k_dev0"), *k1 = kernel_by_name(&t, "k_dev1");
    CHECK(k0 && k0->u.kernel.device == 0 && k0->u.kernel.corr == F("k0.corr"));
    CHECK(k1 && k1->u.kernel.device == 1 && k1->u.kernel.corr == F("k1.corr"));
    /* the tag: each device its own live bytes and driver figures */
    const rec *g = nth(&t, GMT_REC_TAG, 0);
    CHECK(g && g->u.tag.ndev == 2);
    if (g && g->u.tag.ndev == 2) {
        CHECK_EQ_U64(g->u.tag.dev[0].device, 0);
        CHECK_EQ_U64(g->u.tag.dev[0].live_bytes, 4 * MIB);
        CHECK_EQ_U64(g->u.tag.dev[0].driver_used, 10 * GIB);
        CHECK_EQ_U64(g->u.tag.dev[0].driver_total, 80 * GIB);
        CHECK_EQ_U64(g->u.tag.dev[1].device, 1);
        CHECK_EQ_U64(g->u.tag.dev[1].live_bytes, 9 * MIB);
        CHECK_EQ_U64(g->u.tag.dev[1].driver_used, 10 * GIB);
        CHECK_EQ_U64(g->u.tag.dev[1].driver_total, 40 * GIB);
    }
    trace_free(&t);
}

/* Counts a long trace's records by type while reading (a trace of 10^7
 * records does not fit in a rec array). */
typedef struct counts {
    uint64_t alloc, free_, kernel, total;
    gmt_stats stats;
    int has_stats, ok;
    gmt_reader_end end;
} counts;

static int count_trace(const char *path, counts *c)
{
    memset(c, 0, sizeof *c);
    gmt_reader *rd = gmt_reader_open(path);
    if (!rd)
        return -1;
    static gmt_record g;
    int rc;
    while ((rc = gmt_reader_next(rd, &g)) == 1) {
        c->total++;
        c->alloc += g.type == GMT_REC_ALLOC;
        c->free_ += g.type == GMT_REC_FREE;
        c->kernel += g.type == GMT_REC_KERNEL;
        if (g.type == GMT_REC_STATS) {
            c->stats = g.u.stats;
            c->has_stats = 1;
        }
    }
    c->end = *gmt_reader_end_info(rd);
    c->ok = rc == 0;
    gmt_reader_close(rd);
    return 0;
}

static void run_long(uint64_t n, counts *c, uint64_t *maxrss_kb, double *secs)
{
    char env0[64];
    snprintf(env0, sizeof env0, "E2E_LONG_N=%" PRIu64, n);
    const char *env[] = {env0, NULL};
    run r;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    run_app_in("long", "long", env, &r);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    *secs = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
    CHECK(exited(&r, 0));
    CHECK_STR(r.out, "");
    char p[1300];
    trace_path(&r, r.pid, p, sizeof p);
    CHECK(count_trace(p, c) == 0);
    CHECK(c->ok && c->end.has_trailer && !c->end.truncated);
    CHECK(c->has_stats);
    CHECK_EQ_U64(c->stats.dropped_cupti, 0);
    /* exact drop count: written + dropped == produced */
    CHECK_EQ_U64(F("produced"), 3 * n);
    CHECK_EQ_U64(F("emitted"), 3 * n);
    CHECK_EQ_U64(c->alloc + c->free_ + c->kernel + c->stats.dropped_writer, 3 * n);
    *maxrss_kb = F("maxrss_kb");
    fprintf(stderr,
            "long: n=%" PRIu64 " rounds in %.1f s: %" PRIu64 " alloc, %" PRIu64 " free, %" PRIu64
            " kernel written, %" PRIu64 " dropped, peak RSS %" PRIu64 " KiB, host bytes %" PRIu64 "\n",
            n, *secs, c->alloc, c->free_, c->kernel, c->stats.dropped_writer, *maxrss_kb, c->stats.own_host_bytes);
}

/* Peak RSS (KiB) of the children waited for so far: after run_long(small)
 * that run's own peak, exit-time flush included; after run_long(big) the
 * larger of the two. */
static uint64_t children_maxrss_kb(void)
{
    struct rusage ru;
    if (getrusage(RUSAGE_CHILDREN, &ru) != 0)
        return UINT64_MAX;
    return (uint64_t)ru.ru_maxrss;
}

/* A long run with the default budget: host memory stays bounded. The peak
 * RSS of 10^4 rounds is the baseline; E2E_LONG_ROUNDS rounds (default
 * 3333334: 10^7 activity records, a third each allocation, free, kernel)
 * may add at most 64 MiB to it, both as the app measured it at its end and
 * as the kernel reports it for the whole process life. */
static void t_long(void)
{
    counts small, big;
    uint64_t app_small = 0, app_big = 0;
    double s_small = 0, s_big = 0;
    const char *nr = getenv("E2E_LONG_ROUNDS");
    uint64_t n = nr ? strtoull(nr, NULL, 10) : 3333334;
    run_long(10000, &small, &app_small, &s_small);
    uint64_t rss_small = children_maxrss_kb();
    CHECK_EQ_U64(small.stats.dropped_writer, 0);
    run_long(n, &big, &app_big, &s_big);
    uint64_t rss_big = children_maxrss_kb();
    CHECK(app_big <= app_small + 64 * 1024);
    CHECK(rss_big <= rss_small + 64 * 1024);
    fprintf(stderr,
            "long: peak RSS %" PRIu64 " KiB (app %" PRIu64 ") at 10^4 rounds, %" PRIu64 " KiB (app %" PRIu64
            ") at %" PRIu64 " rounds (%.1f s)\n",
            rss_small, app_small, rss_big, app_big, n, s_big);
}

/* ---- the PyTorch bridge (fake_bridge.c; scenario sc_torch) ------------------ */

static char g_bridge[1200], g_c10[1200], g_analyze[1200];

/* gmem-analyze ARGS on the run's trace: its stdout (CSV: without the "#"
 * lines when rows_only), NULL when it failed (a failed check). */
static char *analyze(const run *r, const char *args, int rows_only)
{
    char p[1300], cmd[3000], line[4096];
    trace_path(r, r->pid, p, sizeof p);
    snprintf(cmd, sizeof cmd, "'%s' '%s' %s", g_analyze, p, args);
    FILE *f = popen(cmd, "r");
    size_t cap = 1 << 16, n = 0;
    char *out = calloc(cap, 1);
    while (f && out && fgets(line, sizeof line, f)) {
        size_t k = strlen(line);
        if ((rows_only && line[0] == '#') || n + k + 1 > cap)
            continue;
        memcpy(out + n, line, k + 1);
        n += k;
    }
    int st = f ? pclose(f) : -1;
    CHECK(st == 0, "%s: status %d", cmd, st);
    if (st != 0) {
        free(out);
        return NULL;
    }
    return out;
}

/* A row of `gmem-analyze --by tag --format csv`: name, device, allocated, reserved. */
static int has_tag_row(const char *csv, const char *name, unsigned dev, uint64_t alloc, uint64_t res)
{
    char want[200];
    for (const char *l = csv; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : "") {
        unsigned d;
        unsigned long long step, ts, a, rr;
        int k = snprintf(want, sizeof want, "%s,", name);
        if (strncmp(l, want, (size_t)k) == 0 && sscanf(l + k, "%u,%llu,%llu,%llu,%llu,", &d, &step, &ts, &a, &rr) == 5 &&
            d == dev && a == alloc && rr == res)
            return 1;
    }
    return 0;
}

/* The kernel table of a fake-bridge run as CUDA sees it (CUPTI's two
 * cudaMallocs of 20 MiB, made before k_a, are k_a's): with the bridge off,
 * missing or refused, and with it on under --layer segments. */
static const char KERNELS_CUDA[] =
    "name,calls,self_bytes,alloc_bytes,freed_bytes,peak_bytes,alloc_count,free_count,time_ns,mean_ns,min_ns,max_ns,"
    "registers,shared_mem_bytes,local_mem_bytes\n"
    "k_a,1,41943040,41943040,0,41943040,2,0,4000,4000,4000,4000,32,5120,16\n"
    "k_b,1,0,0,0,,0,0,4000,4000,4000,4000,32,5120,16\n"
    "k_c,1,0,0,0,,0,0,4000,4000,4000,4000,32,5120,16\n";

/* The same run's kernel table in tensor blocks: k_a the 4 MiB block made
 * before it (live 1.5 + 4 = 5.5 MiB); k_b the 2 MiB one (peak 7.5 MiB); k_c
 * the 1 MiB record_stream block and the frees of it and of the 2 MiB one
 * (live then 1.5 + 4 + 1 = 6.5 MiB); (unattributed) the two seeded blocks,
 * made before the bridge attached, and the second thread's 1 MiB on dev1. */
static const char KERNELS_BLOCKS[] =
    "name,calls,self_bytes,alloc_bytes,freed_bytes,peak_bytes,alloc_count,free_count,time_ns,mean_ns,min_ns,max_ns,"
    "registers,shared_mem_bytes,local_mem_bytes\n"
    "k_a,1,4194304,4194304,0,5767168,1,0,4000,4000,4000,4000,32,5120,16\n"
    "(unattributed),,2621440,2621440,0,1572864,3,0,,,,,,,\n"
    "k_b,1,2097152,2097152,0,7864320,1,0,4000,4000,4000,4000,32,5120,16\n"
    "k_c,1,-2097152,1048576,3145728,6815744,1,2,4000,4000,4000,4000,32,5120,16\n";

/* The analyzer on the fake bridge's trace: seeded 1 MiB + 512 KiB in a
 * 20 MiB segment, then a 20 MiB segment with 4 MiB and 2 MiB: peak 7.5 MiB
 * with 40 MiB reserved, 32.5 MiB unallocated in two holes (18.5 MiB after
 * the seeded blocks, 14 MiB after the 6 MiB), nothing outside (CUPTI saw
 * the two segments alone); dev1 1 MiB of a 2 MiB segment. */
static void torch_analyzed(const run *r)
{
    char *csv = analyze(r, "--format csv", 0);
    CHECK_HAS(csv ? csv : "", "# framework.dev0: layer=blocks allocated_peak_bytes=7864320 ");
    CHECK_HAS(csv ? csv : "", " reserved_peak_bytes=41943040 at_peak_reserved_bytes=41943040 "
                              "at_peak_unallocated_bytes=34078720 at_peak_outside_allocator_bytes=0 "
                              "at_peak_driver_used_bytes=1073741824 ");
    CHECK_HAS(csv ? csv : "", " holes=ok holes_bytes=34078720 holes_count=2 largest_holes_bytes=19398656;14680064 ");
    CHECK_HAS(csv ? csv : "", "# framework.dev1: layer=blocks allocated_peak_bytes=1048576 ");
    CHECK_HAS(csv ? csv : "", " holes=ok holes_bytes=1048576 holes_count=1 largest_holes_bytes=1048576 ");
    free(csv);
    /* the MemoryMonitor table: before_model reads 0 B / 0 B */
    char *tags = analyze(r, "--by tag --format csv --top 0", 1);
    CHECK(has_tag_row(tags, "before_model", 0, 0, 0));
    CHECK(has_tag_row(tags, "after_forward", 0, 1 * MIB + 512 * 1024 + 4 * MIB, 40 * MIB));
    CHECK(has_tag_row(tags, "after_forward", 1, 0, 0));
    CHECK(has_tag_row(tags, "end", 0, 1 * MIB + 512 * 1024 + 4 * MIB, 40 * MIB));
    CHECK(has_tag_row(tags, "end", 1, 1 * MIB, 2 * MIB));
    free(tags);
    char *blk = analyze(r, "--by kernel --format csv --top 0", 1);
    CHECK_STR(blk ? blk : "", KERNELS_BLOCKS);
    free(blk);
    char *seg = analyze(r, "--layer segments --format csv --top 0", 1);
    CHECK_STR(seg ? seg : "", KERNELS_CUDA);
    free(seg);
}

static size_t count_blocks(const trace *t, unsigned action, uint64_t flags)
{
    size_t n = 0;
    for (size_t i = 0; i < t->n; i++)
        if (t->r[i].type == GMT_REC_BLOCK && t->r[i].u.block.action == action &&
            (t->r[i].u.block.flags & flags) == flags)
            n++;
    return n;
}

static const rec *block_at(const trace *t, unsigned action, uint64_t addr, unsigned device)
{
    for (size_t i = 0; i < t->n; i++)
        if (t->r[i].type == GMT_REC_BLOCK && t->r[i].u.block.action == action &&
            t->r[i].u.block.address == addr && t->r[i].u.block.device == device)
            return &t->r[i];
    return NULL;
}

#define TSEG 0x7f0001400000ull

/* The environment that makes a run load the fake bridge beside the fake
 * libc10_cuda.so (its GMEMPROF_TORCH_BRIDGE and E2E_C10 entries). */
#define BRIDGE_ENV_CAP 1300
static void bridge_env(char be[BRIDGE_ENV_CAP], char ce[BRIDGE_ENV_CAP])
{
    snprintf(be, BRIDGE_ENV_CAP, "GMEMPROF_TORCH_BRIDGE=%s", g_bridge);
    snprintf(ce, BRIDGE_ENV_CAP, "E2E_C10=%s", g_c10);
}

/* Scenario sc of e2e_app.c with the fake bridge, and `extra` (NULL: none)
 * in its environment. */
static void run_bridge(const char *sc, const char *extra, run *r)
{
    char be[BRIDGE_ENV_CAP], ce[BRIDGE_ENV_CAP];
    bridge_env(be, ce);
    const char *env[] = {be, ce, extra, NULL};
    run_app(sc, env, r);
}

static void t_torch(void)
{
    char be[BRIDGE_ENV_CAP], ce[BRIDGE_ENV_CAP];
    bridge_env(be, ce);
    const char *env[] = {be, ce, NULL};
    run r;
    run_app("torch", env, &r);
    CHECK(exited(&r, 0));
    CHECK_STR(r.out, "");
    CHECK_EQ_U64(count_lines(r.err, "gmemprof: "), 1);
    CHECK_HAS(r.err, "; 13 events of the PyTorch 0.0.0-fake allocator)");
    CHECK(!has_fact("bridge_off"));
    trace t = load_trace_of(&r);
    check_complete(&t);
    /* 3 seeded (segment, two blocks), then 10 live events */
    CHECK_EQ_U64(count(&t, GMT_REC_BLOCK), 13);
    CHECK_EQ_U64(count_blocks(&t, GMT_BLK_ALLOC, GMT_BLKF_SEEDED), 2);
    CHECK_EQ_U64(count_blocks(&t, GMT_BLK_SEGMENT_ALLOC, GMT_BLKF_SEEDED), 1);
    CHECK_EQ_U64(count_blocks(&t, GMT_BLK_ALLOC, 0), 2 + 4);
    CHECK_EQ_U64(count_blocks(&t, GMT_BLK_FREE_REQUESTED, 0), 2);
    CHECK_EQ_U64(count_blocks(&t, GMT_BLK_FREE_COMPLETED, 0), 2);
    CHECK_EQ_U64(count_blocks(&t, GMT_BLK_SEGMENT_ALLOC, 0), 3);
    /* attribution: the thread, the innermost range, the kernels before */
    const rec *fwd = range_by_name(&t, "forward");
    const rec *a = block_at(&t, GMT_BLK_ALLOC, TSEG, 0);
    const rec *b = block_at(&t, GMT_BLK_ALLOC, TSEG + 4 * MIB, 0);
    const rec *ka = kernel_by_name(&t, "k_a");
    CHECK(fwd && a && b && ka);
    if (fwd && a && b && ka) {
        CHECK_EQ_U64(a->u.block.tid, F("tid"));
        CHECK_EQ_U64(a->u.block.range, fwd->u.range.id);
        CHECK_EQ_U64(a->u.block.seq + 1, ka->u.kernel.seq); /* k_a is the next launch */
        CHECK_EQ_U64(b->u.block.seq, ka->u.kernel.seq);
        CHECK_EQ_U64(a->u.block.bytes, 4 * MIB);
        CHECK_EQ_U64(a->u.block.stream, 0x5000);
        CHECK_EQ_U64(a->u.block.step, 1);
    }
    const rec *d1 = block_at(&t, GMT_BLK_ALLOC, 0x7f1000000000ull, 1);
    CHECK(d1 && d1->u.block.tid == F("t2.tid") && d1->u.block.range == 0);
    /* the delayed free: requested before k_c, completed after it */
    const rec *fr = block_at(&t, GMT_BLK_FREE_REQUESTED, TSEG + 6 * MIB, 0);
    const rec *fc = block_at(&t, GMT_BLK_FREE_COMPLETED, TSEG + 6 * MIB, 0);
    const rec *kc = kernel_by_name(&t, "k_c");
    CHECK(fr && fc && kc && fr->u.block.seq + 1 == kc->u.kernel.seq && fc->u.block.seq == kc->u.kernel.seq);
    CHECK(fr && fc && fc->u.block.ts > fr->u.block.ts);
    /* the free completed in the same call: attributed as its request.
     * Whether it was folded into the request's ring event (torch.c: its
     * time then is the request's) or the writer took the request first
     * (its own, later time) depends on scheduling; both are right, so
     * only what holds in both is checked here. The fold itself:
     * profiler.evring (test_mark, test_same_call), profiler.assembler. */
    const rec *sr = block_at(&t, GMT_BLK_FREE_REQUESTED, TSEG + 4 * MIB, 0);
    const rec *sc = block_at(&t, GMT_BLK_FREE_COMPLETED, TSEG + 4 * MIB, 0);
    CHECK(sr && sc);
    if (sr && sc) {
        CHECK(sc->u.block.ts >= sr->u.block.ts);
        CHECK_EQ_U64(sc->u.block.tid, sr->u.block.tid);
        CHECK_EQ_U64(sc->u.block.range, sr->u.block.range);
        CHECK_EQ_U64(sc->u.block.seq, sr->u.block.seq);
        CHECK_EQ_U64(sc->u.block.requested, 0);
        CHECK_EQ_U64(sc->u.block.bytes, 2 * MIB);
    }
    /* tags: allocated and reserved of the allocator, beside CUPTI's live
     * bytes; the one before the first context names no device */
    CHECK_EQ_U64(count(&t, GMT_REC_TAG), 3);
    const rec *gb = nth(&t, GMT_REC_TAG, 0);
    CHECK(gb && gb->u.tag.ndev == 0 && gb->u.tag.has_framework == 0);
    const rec *g0 = nth(&t, GMT_REC_TAG, 1), *g1 = nth(&t, GMT_REC_TAG, 2);
    CHECK(g0 && g1);
    if (g0 && g1) {
        CHECK_EQ_U64(g0->u.tag.has_framework, 1);
        CHECK_EQ_U64(g0->u.tag.dev[0].fw_allocated, 1 * MIB + 512 * 1024 + 4 * MIB);
        CHECK_EQ_U64(g0->u.tag.dev[0].fw_reserved, 40 * MIB);
        CHECK_EQ_U64(g0->u.tag.dev[0].live_bytes, 40 * MIB);
        CHECK_EQ_U64(g0->u.tag.dev[1].fw_allocated, 0);
        CHECK_EQ_U64(g1->u.tag.dev[0].fw_allocated, 1 * MIB + 512 * 1024 + 4 * MIB);
        CHECK_EQ_U64(g1->u.tag.dev[1].fw_allocated, 1 * MIB);
        CHECK_EQ_U64(g1->u.tag.dev[1].fw_reserved, 2 * MIB);
    }
    trace_free(&t);

    torch_analyzed(&r);

    /* sizes from the allocator's counter, as the real bridge sends them:
     * the requests are 100 bytes short, the sizes must come out whole */
    const char *cenv[] = {be, ce, "FAKE_BRIDGE_COUNTERS=1", NULL};
    run_app_in("torch_counters", "torch", cenv, &r);
    CHECK(exited(&r, 0));
    t = load_trace_of(&r);
    check_complete(&t);
    CHECK_EQ_U64(count(&t, GMT_REC_BLOCK), 13);
    torch_analyzed(&r);
    a = block_at(&t, GMT_BLK_ALLOC, TSEG, 0);
    b = block_at(&t, GMT_BLK_ALLOC, TSEG + 4 * MIB, 0);
    d1 = block_at(&t, GMT_BLK_ALLOC, 0x7f1000000000ull, 1);
    fr = block_at(&t, GMT_BLK_FREE_REQUESTED, TSEG + 6 * MIB, 0);
    CHECK(a && a->u.block.bytes == 4 * MIB && a->u.block.requested == 4 * MIB - 100);
    CHECK(b && b->u.block.bytes == 2 * MIB);
    CHECK(d1 && d1->u.block.bytes == 1 * MIB && d1->u.block.tid == F("t2.tid"));
    CHECK(fr && fr->u.block.bytes == 1 * MIB);
    g0 = nth(&t, GMT_REC_TAG, 1), g1 = nth(&t, GMT_REC_TAG, 2);
    CHECK(g0 && g0->u.tag.dev[0].fw_allocated == 1 * MIB + 512 * 1024 + 4 * MIB);
    CHECK(g1 && g1->u.tag.dev[0].fw_allocated == 1 * MIB + 512 * 1024 + 4 * MIB &&
          g1->u.tag.dev[1].fw_allocated == 1 * MIB);
    trace_free(&t);

    /* small tensors between two readings: sized by the bridge, and taken
     * out of the change that sizes the large block held before them */
    run_app_in("torch_small", "torch_small", cenv, &r);
    CHECK(exited(&r, 0));
    t = load_trace_of(&r);
    check_complete(&t);
    a = block_at(&t, GMT_BLK_ALLOC, TSEG, 0);
    const rec *s1 = block_at(&t, GMT_BLK_ALLOC, TSEG + 4 * MIB, 0);
    const rec *s2 = block_at(&t, GMT_BLK_ALLOC, TSEG + 4 * MIB + 64 * 1024, 0);
    const rec *f1 = block_at(&t, GMT_BLK_FREE_REQUESTED, TSEG + 4 * MIB, 0);
    b = block_at(&t, GMT_BLK_ALLOC, TSEG + 8 * MIB, 0);
    CHECK(a && a->u.block.bytes == 4 * MIB);
    CHECK(s1 && s1->u.block.bytes == 64 * 1024 && s1->u.block.requested == 64 * 1024 - 100);
    CHECK(s2 && s2->u.block.bytes == 512 && s2->u.block.requested == 412);
    CHECK(f1 && f1->u.block.bytes == 64 * 1024);
    CHECK(b && b->u.block.bytes == 3 * MIB);
    /* written in the order they happened, the held one first */
    CHECK(a && s1 && s2 && b && a < s1 && s1 < s2 && s2 < b);
    g1 = nth(&t, GMT_REC_TAG, 0);
    CHECK(g1 && g1->u.tag.dev[0].fw_allocated == 1 * MIB + 512 * 1024 + 4 * MIB + 512 + 3 * MIB);
    trace_free(&t);

    /* a completion on another thread right after the request is its own
     * event; a same-thread one is the request's thread's, folded or not */
    run_app_in("torch_xthread", "torch_xthread", env, &r);
    CHECK(exited(&r, 0));
    t = load_trace_of(&r);
    check_complete(&t);
    const rec *xr = block_at(&t, GMT_BLK_FREE_REQUESTED, TSEG, 0);
    const rec *xc = block_at(&t, GMT_BLK_FREE_COMPLETED, TSEG, 0);
    CHECK(xr && xc);
    if (xr && xc) {
        CHECK_EQ_U64(xr->u.block.tid, F("tid"));
        CHECK_EQ_U64(xc->u.block.tid, F("t3.tid"));
        CHECK(xc->u.block.ts > xr->u.block.ts);
    }
    xr = block_at(&t, GMT_BLK_FREE_REQUESTED, TSEG + 1 * MIB, 0);
    xc = block_at(&t, GMT_BLK_FREE_COMPLETED, TSEG + 1 * MIB, 0);
    CHECK(xr && xc && xc->u.block.ts >= xr->u.block.ts && xc->u.block.tid == F("tid") &&
          xc->u.block.seq == xr->u.block.seq && xc->u.block.range == xr->u.block.range);
    trace_free(&t);

    /* a schedule: what was live before the window is its baseline */
    const char *senv[] = {be, ce, "GMEMPROF_SCHEDULE=wait=1,active=1", NULL};
    run_app_in("torch_sched", "torch", senv, &r);
    CHECK(exited(&r, 0));
    t = load_trace_of(&r);
    check_complete(&t);
    /* the seeded segment and two blocks, live before step 1 */
    CHECK_EQ_U64(count_blocks(&t, GMT_BLK_SEGMENT_ALLOC, GMT_BLKF_BASELINE), 1);
    CHECK_EQ_U64(count_blocks(&t, GMT_BLK_ALLOC, GMT_BLKF_BASELINE), 2);
    CHECK_EQ_U64(count_blocks(&t, GMT_BLK_ALLOC, GMT_BLKF_SEEDED | GMT_BLKF_BASELINE), 2);
    CHECK_EQ_U64(count_blocks(&t, GMT_BLK_ALLOC, 0), 2 + 4);
    trace_free(&t);
    /* the analyzer's baseline: the two seeded blocks, 1 MiB + 512 KiB */
    char *csv = analyze(&r, "--format csv", 0);
    CHECK_HAS(csv ? csv : "", "# totals: baseline_bytes=1572864 baseline_count=2 ");
    free(csv);

    /* a window over step 0 alone: the seeded segment and blocks are in it,
     * every later event is gated out, and the tags after the window still
     * carry the allocator's bytes (the writer follows every event) */
    const char *genv[] = {be, ce, "GMEMPROF_SCHEDULE=wait=0,active=1,repeat=1", NULL};
    run_app_in("torch_gated", "torch", genv, &r);
    CHECK(exited(&r, 0));
    t = load_trace_of(&r);
    check_complete(&t);
    CHECK_EQ_U64(count(&t, GMT_REC_BLOCK), 3);
    CHECK_EQ_U64(count_blocks(&t, GMT_BLK_ALLOC, GMT_BLKF_SEEDED), 2);
    g1 = nth(&t, GMT_REC_TAG, 2);
    CHECK(g1 && g1->u.tag.has_framework && g1->u.tag.dev[0].fw_allocated == 1 * MIB + 512 * 1024 + 4 * MIB &&
          g1->u.tag.dev[0].fw_reserved == 40 * MIB && g1->u.tag.dev[1].fw_allocated == 1 * MIB);
    trace_free(&t);
    char *tags = analyze(&r, "--by tag --format csv --top 0", 1);
    CHECK(has_tag_row(tags, "end", 0, 1 * MIB + 512 * 1024 + 4 * MIB, 40 * MIB));
    CHECK(has_tag_row(tags, "end", 1, 1 * MIB, 2 * MIB));
    free(tags);
}

/* The bridge not used: one line (or none for GMEMPROF_TORCH=0), no BLOCK,
 * the CUPTI records as always. */
static void torch_unused(const char *dir, const char *extra, const char *line)
{
    char be[BRIDGE_ENV_CAP], ce[BRIDGE_ENV_CAP];
    bridge_env(be, ce);
    const char *env[] = {be, ce, extra, NULL};
    run r;
    run_app_in(dir, "torch", env, &r);
    CHECK(exited(&r, 0));
    CHECK_STR(r.out, "");
    CHECK_EQ_U64(count_lines(r.err, "gmemprof: "), line ? 2 : 1);
    if (line)
        CHECK_HAS(r.err, line);
    CHECK_HAS(r.err, " dropped)");
    CHECK(has_fact("bridge_off"));
    trace t = load_trace_of(&r);
    check_complete(&t);
    CHECK_EQ_U64(count(&t, GMT_REC_BLOCK), 0);
    CHECK_EQ_U64(count(&t, GMT_REC_ALLOC), 2);
    CHECK(nth(&t, GMT_REC_TAG, 1) && nth(&t, GMT_REC_TAG, 1)->u.tag.has_framework == 0);
    trace_free(&t);
    /* the analyzer's output is the one of a run without PyTorch */
    char *rows = analyze(&r, "--format csv --top 0", 1);
    CHECK_STR(rows ? rows : "", KERNELS_CUDA);
    free(rows);
}

static void t_torch_unused(void)
{
    torch_unused("torch_off", "GMEMPROF_TORCH=0", NULL);
    torch_unused("torch_missing", "GMEMPROF_TORCH_BRIDGE=/nonexistent/libgmemprof_torch.so",
                 "gmemprof: PyTorch is in this process, but its bridge /nonexistent/libgmemprof_torch.so could "
                 "not be loaded");
    torch_unused("torch_mismatch", "FAKE_BRIDGE_BUILD_ID=deadbeefdeadbeef",
                 "was built for torch 0.0.0-fake (libc10_cuda.so build id deadbeefdead), but this process has");
    torch_unused("torch_refused", "FAKE_BRIDGE_REFUSE=cudaMallocAsync does not yet support attachAllocatorTraceTracker",
                 "gmemprof: PyTorch's allocator cannot be tracked in this process: cudaMallocAsync does not yet "
                 "support attachAllocatorTraceTracker");
    /* no PyTorch in the process: no line, nothing loaded */
    char be[1300];
    snprintf(be, sizeof be, "GMEMPROF_TORCH_BRIDGE=%s", g_bridge);
    const char *env[] = {be, NULL};
    run r;
    run_app_in("torch_none", "torch", env, &r);
    CHECK(exited(&r, 0));
    CHECK_EQ_U64(count_lines(r.err, "gmemprof: "), 1);
    trace t = load_trace_of(&r);
    CHECK_EQ_U64(count(&t, GMT_REC_BLOCK), 0);
    trace_free(&t);
    /* attach() says "later" at the first context: the first step attaches */
    const char *lenv[] = {be, NULL, "FAKE_BRIDGE_LATER=1", NULL};
    char ce[1300];
    snprintf(ce, sizeof ce, "E2E_C10=%s", g_c10);
    lenv[1] = ce;
    run_app_in("torch_later", "torch", lenv, &r);
    CHECK(exited(&r, 0));
    t = load_trace_of(&r);
    CHECK_EQ_U64(count(&t, GMT_REC_BLOCK), 13);
    trace_free(&t);
}

/* Op ranges and steps from the bridge, with nothing marked by the program
 * (e2e_app.c sc_torch_ops): six iterations, each a pass (aten::linear
 * 1 MiB around aten::t, a view, and aten::mm 2 MiB; aten::view; aten::relu_,
 * a launch; aten::sdpa around the program's NVTX range "attn"; MmBackward0
 * on its own thread takes 512 KiB and frees the 2 MiB; the 1 MiB and the
 * 512 KiB freed outside any op) and
 * an SGD step of 256 KiB in and out; iteration 2 also steps Adam (128 KiB)
 * after SGD, iteration 3 runs two passes. Under wait=1,warmup=1,active=2
 * the optimizer rule gives steps 0-5 at iterations 0-5 (Adam's step, with no
 * backward before it, is none: its 128 KiB fall in step 3); the window is
 * steps 2 and 3, i.e. 3 passes, 2 SGD steps and 1 Adam step. */
/* Live before: the fake bridge's seeded 1.5 MiB; the peaks add what is
 * live inside each op (aten::mm: 1.5 + 1 + 2 MiB; MmBackward0: + 512 KiB). */
static const char RANGES_OPS[] =
    "name,calls,self_bytes,total_bytes,self_alloc_bytes,self_freed_bytes,total_alloc_bytes,total_freed_bytes,"
    "self_alloc_count,self_free_count,peak_bytes\n"
    "aten::mm,3,6291456,6291456,6291456,0,6291456,0,3,0,4718592\n"
    "aten::linear,3,3145728,9437184,3145728,0,9437184,0,3,0,4718592\n"
    "\"Optimizer.step#Adam.step\",1,0,0,131072,131072,131072,131072,1,1,1703936\n"
    "\"Optimizer.step#SGD.step\",2,0,0,524288,524288,524288,524288,2,2,1835008\n"
    "aten::relu_,3,0,0,0,0,0,0,0,0,\n"
    "aten::sdpa,3,0,0,0,0,0,0,0,0,\n"
    "attn,3,0,0,0,0,0,0,0,0,\n"
    "(unattributed),,-4718592,-4718592,0,4718592,0,4718592,0,6,\n"
    "MmBackward0,3,-4718592,-4718592,1572864,6291456,1572864,6291456,3,3,5242880\n";

/* CSV rows without their last n fields (times, which vary from run to run). */
static void cut_fields(char *csv, int n)
{
    char *w = csv;
    for (char *l = csv; *l;) {
        char *e = strchr(l, '\n');
        size_t len = e ? (size_t)(e - l) : strlen(l);
        size_t keep = len;
        for (int k = 0; k < n && keep > 0; k++) {
            while (keep > 0 && l[keep - 1] != ',')
                keep--;
            if (keep > 0)
                keep--;
        }
        memmove(w, l, keep);
        w += keep;
        *w++ = '\n';
        l += len + (e ? 1 : 0);
    }
    *w = '\0';
}

/* The range of kind `kind` named `name` that thread tid began, NULL none. */
static const rec *range_of(const trace *t, uint64_t kind, const char *name, uint64_t tid)
{
    for (size_t i = 0; i < t->n; i++)
        if (t->r[i].type == GMT_REC_RANGE_BEGIN && t->r[i].u.range.kind == kind && t->r[i].u.range.tid == tid &&
            strcmp(S(t, t->r[i].u.range.name), name) == 0)
            return &t->r[i];
    return NULL;
}

/* The ALLOC of `bytes` at address `addr` (not a baseline), NULL none. */
static const rec *alloc_at(const trace *t, uint64_t addr, uint64_t bytes)
{
    for (size_t i = 0; i < t->n; i++)
        if (t->r[i].type == GMT_REC_BLOCK && t->r[i].u.block.action == GMT_BLK_ALLOC &&
            !(t->r[i].u.block.flags & GMT_BLKF_BASELINE) && t->r[i].u.block.address == addr &&
            t->r[i].u.block.bytes == bytes)
            return &t->r[i];
    return NULL;
}

#define MSEG_T 0x7f0003c00000ull /* e2e_app.c's MSEG */

/* Module ranges, backward module ranges and frames (sc_torch_modules):
 * thread A runs GPT (aten::embedding, 2 x 1 MiB at train.py:20) and
 * GPT.h.0 (aten::mm, 2 MiB at model.py:7), thread B runs CNN
 * (aten::conv2d, 4 MiB at cnn.py:5) with the same sequence number as A's
 * embedding, autograd's thread runs the three backward nodes (512, 256,
 * 128 KiB, no frame) and AccumulateGrad (nothing). */
static void t_torch_modules_with(const char *stacks)
{
    char be[BRIDGE_ENV_CAP], ce[BRIDGE_ENV_CAP];
    bridge_env(be, ce);
    const char *env[] = {be, ce, "GMEMPROF_SCHEDULE=whole", stacks, NULL};
    run r;
    run_app_in(stacks ? "torch_modules_stacks" : "torch_modules", "torch_modules", env, &r);
    CHECK(exited(&r, 0));
    CHECK_STR(r.out, "");
    /* each text once: 3 frames, and the one stack when asked */
    CHECK_EQ_U64(F("interned"), stacks ? 4 : 3);
    trace t = load_trace_of(&r);
    check_complete(&t);
    uint64_t a = F("a.tid"), b = F("b.tid"), bw = F("bw.tid");
    /* A: GPT > aten::embedding, GPT > GPT.h.0 > aten::mm; B: CNN >
     * aten::conv2d; autograd: GPT.h.0 (backward) > MmBackward0, GPT
     * (backward) > EmbeddingBackward0, CNN (backward) >
     * ConvolutionBackward0; AccumulateGrad allocated nothing: no range */
    CHECK_EQ_U64(count(&t, GMT_REC_RANGE_BEGIN), 12);
    CHECK_EQ_U64(count(&t, GMT_REC_RANGE_END), 12);
    const rec *gpt = range_of(&t, GMT_RANGE_MODULE, "GPT", a), *emb = range_of(&t, GMT_RANGE_OP, "aten::embedding", a);
    const rec *h0 = range_of(&t, GMT_RANGE_MODULE, "GPT.h.0", a), *mm = range_of(&t, GMT_RANGE_OP, "aten::mm", a);
    const rec *cnn = range_of(&t, GMT_RANGE_MODULE, "CNN", b), *conv = range_of(&t, GMT_RANGE_OP, "aten::conv2d", b);
    const rec *bh0 = range_of(&t, GMT_RANGE_MODULE_BWD, "GPT.h.0", bw), *bmm = range_of(&t, GMT_RANGE_OP, "MmBackward0", bw);
    const rec *bgpt = range_of(&t, GMT_RANGE_MODULE_BWD, "GPT", bw);
    const rec *bemb = range_of(&t, GMT_RANGE_OP, "EmbeddingBackward0", bw);
    const rec *bcnn = range_of(&t, GMT_RANGE_MODULE_BWD, "CNN", bw);
    const rec *bconv = range_of(&t, GMT_RANGE_OP, "ConvolutionBackward0", bw);
    CHECK(gpt && emb && h0 && mm && cnn && conv && bh0 && bmm && bgpt && bemb && bcnn && bconv);
    CHECK(!range_by_name(&t, "AccumulateGrad"));
    if (!(gpt && emb && h0 && mm && cnn && conv && bh0 && bmm && bgpt && bemb && bcnn && bconv)) {
        trace_free(&t);
        return;
    }
    CHECK_EQ_U64(gpt->u.range.parent, 0);
    CHECK_EQ_U64(emb->u.range.parent, gpt->u.range.id);
    CHECK_EQ_U64(h0->u.range.parent, gpt->u.range.id);
    CHECK_EQ_U64(mm->u.range.parent, h0->u.range.id);
    CHECK_EQ_U64(cnn->u.range.parent, 0);
    CHECK_EQ_U64(conv->u.range.parent, cnn->u.range.id);
    CHECK_EQ_U64(bh0->u.range.parent, 0);
    CHECK_EQ_U64(bmm->u.range.parent, bh0->u.range.id);
    CHECK_EQ_U64(bgpt->u.range.parent, 0);
    CHECK_EQ_U64(bemb->u.range.parent, bgpt->u.range.id);
    CHECK_EQ_U64(bcnn->u.range.parent, 0);
    CHECK_EQ_U64(bconv->u.range.parent, bcnn->u.range.id);
    /* each block: its innermost range, its line; backward blocks none */
    static const struct {
        uint64_t mib_at, bytes;
        const char *frame;
    } want[] = {{0, 1u << 20, "train.py:20 GPT.forward"}, {1, 1u << 20, "train.py:20 GPT.forward"},
                {2, 2u << 20, "model.py:7 Block.forward"}, {4, 4u << 20, "cnn.py:5 CNN.forward"},
                {8, 512u << 10, ""}, {9, 256u << 10, ""}, {10, 128u << 10, ""}};
    const rec *in[] = {emb, emb, mm, conv, bmm, bemb, bconv};
    const rec *blk[7];
    for (int i = 0; i < 7; i++) {
        blk[i] = alloc_at(&t, MSEG_T + want[i].mib_at * (1u << 20), want[i].bytes);
        CHECK(blk[i] != NULL);
        if (!blk[i])
            continue;
        CHECK_EQ_U64(blk[i]->u.block.range, in[i]->u.range.id);
        CHECK_STR(S(&t, blk[i]->u.block.frame), want[i].frame);
        CHECK_EQ_U64(blk[i]->u.block.frame != 0, want[i].frame[0] != 0);
        /* the stack only with GMEMPROF_STACKS=python, and only where given */
        CHECK_STR(S(&t, blk[i]->u.block.stack), stacks && i < 2 ? "train.py:20 GPT.forward\ntrain.py:41 main" : "");
    }
    if (blk[0] && blk[1])
        CHECK_EQ_U64(blk[0]->u.block.frame, blk[1]->u.block.frame); /* one string, one id */
    trace_free(&t);
}

/* GMEMPROF_TORCH_MODULES=0: the same run without module ranges: the six
 * ops that allocate keep their ranges (no parent) and the forward blocks
 * their lines. */
static void t_torch_modules_off(void)
{
    char be[BRIDGE_ENV_CAP], ce[BRIDGE_ENV_CAP];
    bridge_env(be, ce);
    const char *env[] = {be, ce, "GMEMPROF_SCHEDULE=whole", "GMEMPROF_TORCH_MODULES=0", NULL};
    run r;
    run_app_in("torch_modules_off", "torch_modules", env, &r);
    CHECK(exited(&r, 0));
    CHECK_EQ_U64(count_lines(r.err, "gmemprof: "), 1);
    CHECK_EQ_U64(F("interned"), 3);
    trace t = load_trace_of(&r);
    check_complete(&t);
    CHECK_EQ_U64(count(&t, GMT_REC_RANGE_BEGIN), 6);
    for (size_t i = 0; i < t.n; i++)
        if (t.r[i].type == GMT_REC_RANGE_BEGIN) {
            CHECK_EQ_U64(t.r[i].u.range.kind, GMT_RANGE_OP);
            CHECK_EQ_U64(t.r[i].u.range.parent, 0);
        }
    const rec *mm = alloc_at(&t, MSEG_T + 2 * (1u << 20), 2u << 20);
    CHECK(mm && strcmp(S(&t, mm->u.block.frame), "model.py:7 Block.forward") == 0);
    trace_free(&t);
}

static int count_files(const char *dir);

/* Owners (sc_torch_owners): the blocks of GPT's parameters (1 MiB at
 * MSEG) and of GPT.ln's buffer (512 KiB at MSEG + 1 MiB) get one OWNER
 * each, after their ALLOC, with the tensors' bytes (1,000,000 and 2048),
 * the role in flags and the module path as frame. */
static void t_torch_owners(void)
{
    char be[BRIDGE_ENV_CAP], ce[BRIDGE_ENV_CAP];
    bridge_env(be, ce);
    const char *env[] = {be, ce, "GMEMPROF_SCHEDULE=whole", NULL};
    run r;
    run_app_in("torch_owners", "torch_owners", env, &r);
    CHECK(exited(&r, 0));
    CHECK_STR(r.out, "");
    CHECK_EQ_U64(F("owner.param"), 1);
    CHECK_EQ_U64(F("owner.buffer"), 1);
    trace t = load_trace_of(&r);
    check_complete(&t);
    static const struct {
        uint64_t addr, bytes, flags;
        const char *name;
    } want[] = {{MSEG_T, 1000000, GMT_BLKF_PARAMETER, "GPT"},
                {MSEG_T + (1u << 20), 2048, GMT_BLKF_BUFFER, "GPT.ln"}};
    size_t k = 0;
    for (size_t i = 0; i < t.n; i++) {
        const gmt_block *b = &t.r[i].u.block;
        if (t.r[i].type != GMT_REC_BLOCK || b->action != GMT_BLK_OWNER)
            continue;
        tc_context("owner %zu", k);
        REQUIRE(k < 2, "more than 2 OWNER records");
        CHECK_EQ_U64(b->address, want[k].addr);
        CHECK_EQ_U64(b->bytes, want[k].bytes);
        CHECK_EQ_U64(b->flags, want[k].flags);
        CHECK_EQ_U64(b->device, 0);
        CHECK_STR(S(&t, b->frame), want[k].name);
        const rec *blk = alloc_at(&t, want[k].addr, k ? 512u << 10 : 1u << 20);
        CHECK(blk && blk < &t.r[i]); /* its block first */
        k++;
    }
    tc_context(NULL);
    CHECK_EQ_U64(k, 2);
    trace_free(&t);

    /* The flight recorder keeps one step; the failure comes three steps
     * after the owners were reported: the dump's baseline names them
     * (flags BASELINE and the role), after the blocks' baseline. */
    const char *env2[] = {be, ce, "GMEMPROF_SCHEDULE=on-oom", "GMEMPROF_OOM_STEPS=1", "GMEMPROF_KERNELS=",
                          "OWNERS_OOM=1", NULL};
    run_app_in("torch_owners", "torch_owners", env2, &r);
    CHECK(exited(&r, 0));
    CHECK_STR(r.out, "");
    CHECK_EQ_U64(count_files(r.dir), 1);
    t = load_trace_of(&r);
    check_complete(&t);
    CHECK_EQ_U64(count(&t, GMT_REC_OOM), 1);
    k = 0;
    for (size_t i = 0; i < t.n; i++) {
        const gmt_block *b = &t.r[i].u.block;
        if (t.r[i].type != GMT_REC_BLOCK || b->action != GMT_BLK_OWNER)
            continue;
        tc_context("dump owner %zu", k);
        REQUIRE(k < 2, "more than 2 OWNER records in the dump");
        CHECK_EQ_U64(b->address, want[k].addr);
        CHECK_EQ_U64(b->bytes, want[k].bytes);
        CHECK_EQ_U64(b->flags, want[k].flags | GMT_BLKF_BASELINE);
        CHECK_STR(S(&t, b->frame), want[k].name);
        const rec *blk = NULL;
        for (size_t j = 0; j < i && !blk; j++)
            if (t.r[j].type == GMT_REC_BLOCK && t.r[j].u.block.action == GMT_BLK_ALLOC &&
                (t.r[j].u.block.flags & GMT_BLKF_BASELINE) && t.r[j].u.block.address == want[k].addr)
                blk = &t.r[j];
        CHECK(blk != NULL, "no baseline block before the owner"); /* its block's baseline first */
        k++;
    }
    tc_context(NULL);
    CHECK_EQ_U64(k, 2);
    trace_free(&t);
}

static void t_torch_modules(void)
{
    t_torch_modules_with(NULL);
    t_torch_modules_with("GMEMPROF_STACKS=python");
    t_torch_modules_off();
}

static void t_torch_ops(void)
{
    char be[BRIDGE_ENV_CAP], ce[BRIDGE_ENV_CAP];
    bridge_env(be, ce);
    const char *env[] = {be, ce, "GMEMPROF_SCHEDULE=wait=1,warmup=1,active=2", NULL};
    run r;
    run_app("torch_ops", env, &r);
    CHECK(exited(&r, 0));
    CHECK_STR(r.out, "");
    CHECK_EQ_U64(count_lines(r.err, "gmemprof: "), 1);
    CHECK_HAS(r.err, ", 1 window, 6 steps by optimizer, ");
    /* ops, modules and frames watched from the warmup step to the window's
     * end, steps always */
    CHECK_EQ_U64(F("watch.0"), GMP_BRIDGE_WATCH_STEPS);
    for (int i = 1; i <= 3; i++)
        CHECK_EQ_U64(F("watch.%d", i),
                     GMP_BRIDGE_WATCH_STEPS | GMP_BRIDGE_WATCH_OPS | GMP_BRIDGE_WATCH_MODULES | GMP_BRIDGE_WATCH_FRAMES);
    CHECK_EQ_U64(F("watch.4"), GMP_BRIDGE_WATCH_STEPS);
    CHECK_EQ_U64(F("watch.end"), GMP_BRIDGE_WATCH_STEPS);
    CHECK_EQ_U64(F("ops_on_calls"), 1);
    trace t = load_trace_of(&r);
    check_complete(&t);
    size_t nsteps = 0;
    for (size_t i = 0; i < t.n; i++)
        if (t.r[i].type == GMT_REC_STEP) {
            /* step 0 is the run's start, made by no source */
            CHECK_EQ_U64(t.r[i].u.step.source, t.r[i].u.step.step ? GMT_STEPSRC_OPTIMIZER : GMT_STEPSRC_NONE);
            nsteps++;
        }
    CHECK(nsteps >= 4);
    /* the ranges of the window: 3 passes of 6 ranges (linear, mm, relu_,
     * sdpa, attn, MmBackward0), 2 SGD steps, 1 Adam; aten::t and aten::view
     * made, freed and launched nothing: no range */
    CHECK_EQ_U64(count(&t, GMT_REC_RANGE_BEGIN), 3 * 6 + 2 + 1);
    CHECK_EQ_U64(count(&t, GMT_REC_RANGE_END), 3 * 6 + 2 + 1);
    CHECK(!range_by_name(&t, "aten::t") && !range_by_name(&t, "aten::view"));
    const rec *mm = range_by_name(&t, "aten::mm"), *lin = range_by_name(&t, "aten::linear");
    const rec *bw = range_by_name(&t, "MmBackward0"), *relu = range_by_name(&t, "aten::relu_");
    const rec *sdpa = range_by_name(&t, "aten::sdpa"), *attn = range_by_name(&t, "attn");
    CHECK(mm && lin && bw && relu && sdpa && attn);
    if (mm && lin && bw && relu && sdpa && attn) {
        CHECK_EQ_U64(mm->u.range.parent, lin->u.range.id);
        CHECK_EQ_U64(mm->u.range.tid, F("tid"));
        CHECK_EQ_U64(bw->u.range.parent, 0);
        CHECK_EQ_U64(relu->u.range.parent, 0);
        /* an NVTX range in an op that had not begun: the op begins first,
         * at its own time, as the NVTX range's parent */
        CHECK_EQ_U64(attn->u.range.parent, sdpa->u.range.id);
        CHECK(sdpa->u.range.ts < attn->u.range.ts);
        /* aten::linear began before aten::t, well before its allocation */
        CHECK(lin->u.range.ts < mm->u.range.ts);
    }
    trace_free(&t);
    char *rows = analyze(&r, "--by range --format csv --top 0", 1);
    if (rows)
        cut_fields(rows, 2);
    CHECK_STR(rows ? rows : "", RANGES_OPS);
    free(rows);

    /* emit_nvtx on: the bridge withholds op ranges and says so once; the
     * steps are the same */
    const char *nenv[] = {be, ce, "GMEMPROF_SCHEDULE=wait=1,warmup=1,active=2", "FAKE_BRIDGE_EMIT_NVTX=1", NULL};
    run_app_in("torch_ops_nvtx", "torch_ops", nenv, &r);
    CHECK(exited(&r, 0));
    CHECK_EQ_U64(count_lines(r.err, "gmemprof: "), 2);
    CHECK_HAS(r.err, "gmemprof: emit_nvtx is on: its NVTX ranges are the op ranges (fake)\n");
    CHECK_HAS(r.err, ", 1 window, 6 steps by optimizer, ");
    t = load_trace_of(&r);
    CHECK_EQ_U64(count(&t, GMT_REC_RANGE_BEGIN), 3); /* "attn", the program's own */
    CHECK(!range_by_name(&t, "aten::mm"));
    trace_free(&t);
    /* GMEMPROF_TORCH_OPS=0: no op range, no line, the same steps */
    const char *oenv[] = {be, ce, "GMEMPROF_SCHEDULE=wait=1,warmup=1,active=2", "GMEMPROF_TORCH_OPS=0", NULL};
    run_app_in("torch_ops_off", "torch_ops", oenv, &r);
    CHECK(exited(&r, 0));
    CHECK_EQ_U64(count_lines(r.err, "gmemprof: "), 1);
    CHECK_HAS(r.err, ", 1 window, 6 steps by optimizer, ");
    CHECK_EQ_U64(F("ops_on_calls"), 0);
    t = load_trace_of(&r);
    CHECK_EQ_U64(count(&t, GMT_REC_RANGE_BEGIN), 3);
    CHECK(!range_by_name(&t, "aten::mm"));
    trace_free(&t);
    /* --steps nvtx: optimizer steps are not steps, so the schedule never
     * leaves its wait step; the bridge does not watch them */
    const char *venv[] = {be, ce, "GMEMPROF_SCHEDULE=wait=1,warmup=1,active=2", "GMEMPROF_STEP_SOURCE=nvtx", NULL};
    run_app_in("torch_ops_stepnvtx", "torch_ops", venv, &r);
    CHECK(exited(&r, 0));
    /* header, step 0, device, stats, trailer: no STRING of "attn" (an open
     * NVTX range's name is written only when a window begins with it open) */
    CHECK_HAS(r.err, ", 0 windows, 5 records, ");
    CHECK_EQ_U64(F("watch.3"), 0);
}

/* The bridge's events past a full ring: the program is not held up, and
 * what the trace lacks is counted: the blocks written plus the drops are
 * the events made. */
static void t_torch_overflow(void)
{
    run r;
    run_bridge("torch_overflow", NULL, &r);
    CHECK(exited(&r, 0));
    CHECK_EQ_U64(F("blocked"), 1);
    CHECK(!has_fact("bridge_off"));
    trace t = load_trace_of(&r);
    check_complete(&t);
    uint64_t written = 0, seeded = 0;
    for (size_t i = 0; i < t.n; i++)
        if (t.r[i].type == GMT_REC_BLOCK) {
            if (t.r[i].u.block.flags & GMT_BLKF_SEEDED)
                seeded++;
            else
                written++;
        }
    const rec *st = last(&t, GMT_REC_STATS);
    uint64_t dropped = st ? st->u.stats.dropped_writer : 0;
    fprintf(stderr, "torch_overflow: %" PRIu64 " blocks written, %" PRIu64 " dropped, %" PRIu64 " seeded\n", written,
            dropped, seeded);
    CHECK(dropped > 0);
    CHECK_EQ_U64(written + dropped, F("produced"));
    CHECK_EQ_U64(seeded, 3); /* fake_bridge.c's seed: a segment and two blocks */
    char want[64];
    snprintf(want, sizeof want, " %" PRIu64 " dropped;", dropped);
    CHECK_HAS(r.err, want);
    /* the report says its totals are lower bounds */
    char *out = analyze(&r, "--format csv", 0);
    CHECK(out && strstr(out, "# WARNING: ") && strstr(out, " records were dropped (CUPTI 0, writer "),
          "no drop warning in the report: %s", out ? out : "(failed)");
    free(out);
    trace_free(&t);
}

/* Op ranges in a burst (e2e_app.c sc_torch_ops_rate): 4000 ops, the odd
 * ones (aten::mm, aten::_softmax) allocate and free a block inside them,
 * the even ones (aten::add, aten::empty_strided) nothing. The run makes
 * 2000 x (begin + 3 block events + end) = 10,000 ring events, fewer than
 * the ring's 16,384 cells, so none can drop however late the writer runs:
 * exactly 2000 ranges begin and end, 1000 of each odd name, none of an even
 * one, and each block names the range it was made in, begun before it. */
static void t_torch_ops_burst(void)
{
    run r;
    run_bridge("torch_ops_rate", "OPS_N=4000", &r);
    CHECK(exited(&r, 0));
    CHECK_EQ_U64(F("ops"), 4000);
    trace t = load_trace_of(&r);
    check_complete(&t);
    const rec *st = last(&t, GMT_REC_STATS);
    CHECK(st && st->u.stats.dropped_cupti + st->u.stats.dropped_writer == 0);
    CHECK_EQ_U64(count(&t, GMT_REC_RANGE_BEGIN), 2000);
    CHECK_EQ_U64(count(&t, GMT_REC_RANGE_END), 2000);
    const uint64_t oseg = 0x7f0002800000ull; /* e2e_app.c OSEG; the fake bridge seeds blocks elsewhere */
    uint64_t mm = 0, softmax = 0, other = 0, ours = 0, named = 0, last_begin = 0;
    for (size_t i = 0; i < t.n; i++) {
        const rec *x = &t.r[i];
        if (x->type == GMT_REC_RANGE_BEGIN) {
            const char *nm = S(&t, x->u.range.name);
            mm += !strcmp(nm, "aten::mm");
            softmax += !strcmp(nm, "aten::_softmax");
            other += strcmp(nm, "aten::mm") && strcmp(nm, "aten::_softmax");
            last_begin = x->u.range.id;
        } else if (x->type == GMT_REC_BLOCK && x->u.block.action == GMT_BLK_ALLOC &&
                   x->u.block.address - oseg < 2 * MIB) {
            ours++;
            named += x->u.block.range != 0 && x->u.block.range == last_begin;
        }
    }
    CHECK_EQ_U64(mm, 1000);
    CHECK_EQ_U64(softmax, 1000);
    CHECK_EQ_U64(other, 0);
    CHECK_EQ_U64(ours, 2000);
    CHECK_EQ_U64(named, 2000);
    trace_free(&t);
}

/* ---- issue 26: the trace file and its name ----------------------------------- */

/* A directory of the test's own beside the run's (run_prog empties that). */
static void side_dir(const char *name, char *out, size_t cap)
{
    snprintf(out, cap, "%s/%s", g_work, name);
    mkdir(g_work, 0755);
    mkdir(out, 0755);
    rm_tree(out);
}

/* One fixed -o for two processes (the program fork+execs a second CUDA
 * process): each ends with a complete trace of its own; the second says it
 * took NAME.<pid>.zst; the launcher lists both real files. */
static void t_samename(void)
{
    char d[1300], out[1400], second[1500];
    side_dir("samename.d", d, sizeof d);
    snprintf(out, sizeof out, "%s/s.zst", d);
    char *argv[] = {(char *)g_launcher, "-o", out, "--", (char *)g_app, "forkexec", NULL};
    run r;
    run_prog("samename", argv, NULL, &r);
    CHECK(exited(&r, 0));
    CHECK_STR(r.out, "");
    CHECK_EQ_U64(F("child_exit"), 0);
    pid_t child = (pid_t)F("child");
    snprintf(second, sizeof second, "%s/s.%d.zst", d, (int)child);
    trace t;
    CHECK(trace_load(out, &t) == 0);
    check_complete(&t);
    CHECK(kernel_by_name(&t, "k_parent") != NULL);
    CHECK(kernel_by_name(&t, "k") == NULL);
    trace_free(&t);
    CHECK(trace_load(second, &t) == 0);
    check_complete(&t);
    CHECK(kernel_by_name(&t, "k") != NULL);
    CHECK(kernel_by_name(&t, "k_parent") == NULL);
    CHECK(nth(&t, GMT_REC_HEADER, 0) && nth(&t, GMT_REC_HEADER, 0)->u.hdr.pid == (uint64_t)child);
    trace_free(&t);
    CHECK_HAS(r.err, "s.zst is being written by another process: this one writes ");
    CHECK_HAS(r.err, "gmemprof: 2 traces");
    char l1[1500], l2[1600];
    snprintf(l1, sizeof l1, "samename.d/s.zst (");  /* shown relative to the working directory */
    snprintf(l2, sizeof l2, "samename.d/s.%d.zst (", (int)child);
    CHECK_HAS(r.err, l1);
    CHECK_HAS(r.err, l2);
}

/* GMEMPROF_OUTPUT is a link (planted in a shared directory): the link is
 * replaced by the trace, its target is never written. */
static void t_outlink(void)
{
    char d[1300], victim[1400], link_[1400], env0[1500];
    side_dir("outlink.d", d, sizeof d);
    snprintf(victim, sizeof victim, "%s/victim", d);
    snprintf(link_, sizeof link_, "%s/t.zst", d);
    FILE *f = fopen(victim, "w");
    REQUIRE(f && fputs("precious\n", f) >= 0 && fclose(f) == 0, "victim");
    REQUIRE(symlink(victim, link_) == 0, "symlink");
    snprintf(env0, sizeof env0, "GMEMPROF_OUTPUT=%s", link_);
    const char *env[] = {env0, NULL};
    run r;
    run_app_in("outlink", "plain", env, &r);
    CHECK(exited(&r, 0));
    char *v = slurp(victim);
    CHECK_STR(v, "precious\n");
    free(v);
    struct stat st;
    CHECK(lstat(link_, &st) == 0 && S_ISREG(st.st_mode));
    trace t;
    CHECK(trace_load(link_, &t) == 0);
    check_complete(&t);
    trace_free(&t);
}

/* GMEMPROF_OUTPUT is a FIFO nobody reads: refused at once, one line, the
 * program runs on (opening it for writing would block forever). */
static void t_fifo(void)
{
    char d[1300], fifo[1400], env0[1500];
    side_dir("fifo.d", d, sizeof d);
    snprintf(fifo, sizeof fifo, "%s/t.zst", d);
    REQUIRE(mkfifo(fifo, 0644) == 0, "mkfifo");
    snprintf(env0, sizeof env0, "GMEMPROF_OUTPUT=%s", fifo);
    const char *env[] = {env0, NULL};
    run r;
    run_app_in("fifo", "plain", env, &r);
    CHECK(exited(&r, 0));
    CHECK_STR(r.out, "");
    CHECK_EQ_U64(count_lines(r.err, "gmemprof: "), 1);
    CHECK_HAS(r.err, "a FIFO");
    CHECK(has_fact("A.corr")); /* the program ran on */
}

/* Control bytes in the trace's name: the library's lines show them escaped. */
static void t_escpath(void)
{
    char env0[1500], raw[1400];
    run r;
    snprintf(env0, sizeof env0, "GMEMPROF_OUTPUT=%s/escpath/e\x1b[31m.zst", g_work);
    snprintf(raw, sizeof raw, "%s/escpath/e\x1b[31m.zst", g_work);
    const char *env[] = {env0, NULL};
    run_app_in("escpath", "plain", env, &r);
    CHECK(exited(&r, 0));
    CHECK(strchr(r.err, '\x1b') == NULL, "a raw ESC on stderr");
    CHECK_HAS(r.err, "gmemprof: wrote ");
    CHECK_HAS(r.err, "/escpath/e\\x1b[31m.zst (");
    trace t;
    CHECK(trace_load(raw, &t) == 0); /* the file itself has the name asked for */
    check_complete(&t);
    trace_free(&t);
}

/* Every record the fake CUPTI made or dropped is accounted for, exactly:
 * written (ALLOC but the baselines, FREE, KERNEL) + dropped (CUPTI's, the
 * writer's) + outside windows (waiting steps) == made. The writer pauses
 * between reading the epochs and taking the buffers (GMEMPROF_TEST_ROUND_GAP_US),
 * where a step and a small buffer of its records slip in: a record without
 * an API call must take its epoch from every step published before it was
 * made (before the fix: whole buffers of a window's first records went to
 * the waiting step before it, neither written nor counted). CUPTI's 7 drops
 * after the last completed buffer must be read at the exit's flush. */
static void t_accounting(void)
{
    const char *env[] = {"GMEMPROF_SCHEDULE=wait=1,warmup=0,active=1,repeat=0", "GMEMPROF_CUPTI_BUFFER_KB=32",
                         "GMEMPROF_TEST_ROUND_GAP_US=3000", NULL};
    run r;
    run_app("accounting", env, &r);
    CHECK(exited(&r, 0));
    CHECK_STR(r.out, "");
    uint64_t steps = F("steps"), rounds = F("rounds");
    uint64_t nwin = steps / 2;
    /* made by hand: an active step 3 records a round, a waiting one 2 x 100 */
    uint64_t in_win = nwin * rounds * 3, outside = nwin * 100 * 2;
    CHECK_EQ_U64(F("emitted"), in_win + outside);
    CHECK_EQ_U64(F("cupti_dropped"), 7);
    char p[1300];
    trace_path(&r, r.pid, p, sizeof p);
    gmt_reader *rd = gmt_reader_open(p);
    REQUIRE(rd != NULL, "open %s", p);
    static gmt_record g;
    uint64_t written = 0, windows = 0;
    gmt_stats st;
    memset(&st, 0, sizeof st);
    int rc;
    while ((rc = gmt_reader_next(rd, &g)) == 1) {
        written += (g.type == GMT_REC_ALLOC && !(g.u.mem.flags & GMT_MEMF_BASELINE)) || g.type == GMT_REC_FREE ||
                   g.type == GMT_REC_KERNEL;
        windows += g.type == GMT_REC_WINDOW_BEGIN;
        if (g.type == GMT_REC_STATS)
            st = g.u.stats;
    }
    CHECK(rc == 0 && gmt_reader_end_info(rd)->has_trailer);
    gmt_reader_close(rd);
    fprintf(stderr,
            "accounting: made %" PRIu64 " + %" PRIu64 " dropped by CUPTI; written %" PRIu64 ", dropped cupti %" PRIu64
            ", writer %" PRIu64 ", outside windows %" PRIu64 "\n",
            F("emitted"), F("cupti_dropped"), written, st.dropped_cupti, st.dropped_writer, st.outside_window);
    CHECK_EQ_U64(windows, nwin);
    CHECK_EQ_U64(st.dropped_cupti, 7);
    CHECK_EQ_U64(written + st.dropped_cupti + st.dropped_writer + st.outside_window, in_win + outside + 7);
    if (st.dropped_writer == 0) { /* nothing lost: each part exactly */
        CHECK_EQ_U64(written, in_win);
        CHECK_EQ_U64(st.outside_window, outside);
    }
}

/* A GMEMPROF_SUMMARY_FILE that cannot take the line: the line goes to
 * stderr instead of nowhere. */
static void t_summaryfile(void)
{
    const char *env[] = {"GMEMPROF_SUMMARY_FILE=/dev/full", NULL};
    run r;
    run_app_in("summaryfile", "plain", env, &r);
    CHECK(exited(&r, 0));
    CHECK_EQ_U64(count_lines(r.err, "gmemprof: "), 1);
    CHECK_HAS(r.err, "cannot add this run's summary to /dev/full (No space left on device): trace ");
    CHECK_HAS(r.err, "status ok");
    char env1[1400];
    snprintf(env1, sizeof env1, "GMEMPROF_SUMMARY_FILE=%s/no/such/summary", g_work);
    const char *env2[] = {env1, NULL};
    run_app_in("summaryfile", "plain", env2, &r);
    CHECK(exited(&r, 0));
    CHECK_HAS(r.err, "No such file or directory): trace ");
}

/* ---- the flight recorder (GMEMPROF_SCHEDULE=on-oom; scenario sc_oom) ------------ */

#define OOM_W 0x100000ull
#define OOM_LEAK 0x8000000ull
#define OOM_ACT 0x10000000ull
#define KIB 1024ull

/* A first dump of sc_oom: the failure in step `fail`, the ring holding
 * steps first..fail (GMEMPROF_OOM_STEPS = fail - first). */
static void check_oom_dump(const char *path, uint64_t first, uint64_t fail, uint64_t dump)
{
    trace t;
    CHECK(trace_load(path, &t) == 0, "cannot read %s", path);
    check_complete(&t);
    check_windows(&t);
    CHECK_EQ_U64(count(&t, GMT_REC_WINDOW_BEGIN), 1);
    CHECK_EQ_U64(count(&t, GMT_REC_DEVICE), 1);
    /* the baseline: the weights and the leaks of the steps before `first`
     * (a step's activations are freed in it, but a failed step's stay
     * until the program recovers) */
    const rec *wb = nth(&t, GMT_REC_WINDOW_BEGIN, 0);
    uint64_t nb = 1 + (first - 1), bb = 4 * MIB + (first - 1) * 256 * KIB;
    CHECK(wb && wb->u.wb.step == first, "window begins at step %" PRIu64, wb ? wb->u.wb.step : 0);
    CHECK(wb && wb->u.wb.baseline_count == nb, "baseline %" PRIu64 " allocations", wb ? wb->u.wb.baseline_count : 0);
    CHECK(wb && wb->u.wb.baseline_bytes == bb, "baseline %" PRIu64 " bytes", wb ? wb->u.wb.baseline_bytes : 0);
    /* exactly the steps first..fail */
    CHECK_EQ_U64(count(&t, GMT_REC_STEP), fail - first + 1);
    for (uint64_t k = 0; k < fail - first + 1; k++) {
        const rec *st = nth(&t, GMT_REC_STEP, k);
        CHECK(st && st->u.step.step == first + k);
    }
    /* each step: activations and a leak; the failed step keeps its activations */
    size_t nalloc = 0, nfree = 0;
    for (size_t i = 0; i < t.n; i++) {
        if (t.r[i].type == GMT_REC_ALLOC && !(t.r[i].u.mem.flags & GMT_MEMF_BASELINE))
            nalloc++;
        if (t.r[i].type == GMT_REC_FREE)
            nfree++;
    }
    CHECK_EQ_U64(nalloc, 2 * (fail - first + 1));
    CHECK_EQ_U64(nfree, fail - first);
    /* the failure */
    const rec *o = nth(&t, GMT_REC_OOM, 0);
    CHECK_EQ_U64(count(&t, GMT_REC_OOM), 1);
    if (o) {
        const gmt_oom *f = &o->u.oom;
        CHECK_EQ_U64(f->cause, GMT_OOM_CUDA);
        CHECK_EQ_U64(f->dump, dump);
        CHECK_EQ_U64(f->device, 0);
        CHECK_EQ_U64(f->bytes, 64 * MIB);
        CHECK_EQ_U64(f->driver_free, 3 * MIB);
        CHECK_EQ_U64(f->driver_total, 80 * GIB);
        CHECK(f->flags & GMT_OOMF_DRIVER);
        CHECK_EQ_U64(f->status, CUDA_ERROR_OUT_OF_MEMORY);
        CHECK_EQ_U64(f->tid, F("tid"));
        CHECK_STR(S(&t, f->op), "forward");
        CHECK_STR(S(&t, f->api), "cuMemAlloc_v2");
        CHECK_EQ_U64(f->step, fail);
        CHECK_EQ_U64(f->first_step, first);
        /* live: the weights, every step's leak, the failed step's activations */
        CHECK_EQ_U64(f->live_count, 1 + fail + 1);
        CHECK_EQ_U64(f->live_bytes, 4 * MIB + fail * 256 * KIB + fail * MIB);
        CHECK(f->ring_bytes > 0 && f->ring_bytes <= 8 * MIB);
        const rec *rg = range_by_name(&t, "forward");
        CHECK(rg && f->range == rg->u.range.id);
        /* the LIVE records, right after it, oldest first */
        size_t at = index_of(&t, o);
        CHECK_EQ_U64(count(&t, GMT_REC_LIVE), f->live_count);
        uint64_t sum = 0;
        int w = 0, act = 0, leaks = 0;
        for (size_t k = 1; k <= f->live_count && at + k < t.n; k++) {
            const rec *l = &t.r[at + k];
            CHECK_EQ_U64(l->type, GMT_REC_LIVE);
            sum += l->u.live.bytes;
            w += l->u.live.address == OOM_W && l->u.live.bytes == 4 * MIB;
            act += l->u.live.address == OOM_ACT + fail * 64 * MIB && l->u.live.bytes == fail * MIB;
            for (uint64_t s = 1; s <= fail; s++)
                leaks += l->u.live.address == OOM_LEAK + s * MIB && l->u.live.bytes == 256 * KIB;
            if (k > 1)
                CHECK(l->u.live.ts >= t.r[at + k - 1].u.live.ts);
        }
        CHECK_EQ_U64(sum, f->live_bytes);
        CHECK(w == 1 && act == 1 && leaks == (int)fail, "live: weights %d, activations %d, leaks %d", w, act,
              leaks);
        const rec *we = last(&t, GMT_REC_WINDOW_END);
        CHECK(we && we->u.we.reason == GMT_WEND_FAILURE && we->u.we.step == fail);
        CHECK(we && index_of(&t, we) == at + f->live_count + 1);
    }
    trace_free(&t);
}

static int count_files(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    int n = 0;
    while (d && (e = readdir(d)))
        n += strncmp(e->d_name, "trace", 5) == 0;
    if (d)
        closedir(d);
    return n;
}

/* The failure in step 5: the dump holds steps 3..5 (OOM_STEPS=2), the
 * failure and the live set; stdout and the exit status are the program's. */
static void t_oom(void)
{
    run r;
    const char *env[] = {"GMEMPROF_SCHEDULE=on-oom", "GMEMPROF_OOM_STEPS=2", "GMEMPROF_KERNELS=",
                         "GMEMPROF_OOM_MAX_MB=8", NULL};
    run_app("oom", env, &r);
    CHECK(exited(&r, 0));
    CHECK_STR(r.out, "");
    char p[1300];
    trace_path(&r, r.pid, p, sizeof p);
    check_oom_dump(p, 3, 5, 1);
    CHECK_EQ_U64(count_files(r.dir), 1);
    CHECK_HAS(r.err, "gmemprof: out of memory on device 0: 64.0 MiB asked, 3.0 MiB free");
    /* the report starts with the failure: persistent = the weights and the
     * leaks of steps 1..4 (5 MiB in 5), step-scoped = step 5's activations
     * and leak (5.25 MiB in 2) */
    char *rep = analyze(&r, "", 0);
    CHECK(rep && strncmp(rep, "Out of memory, dump 1: the CUDA call cuMemAlloc_v2 failed (CUresult 2)\n", 71) == 0,
          "%s", rep ? rep : "");
    CHECK_HAS(rep ? rep : "", "  asked       64.0 MiB on device 0, thread ");
    CHECK_HAS(rep ? rep : "", ", step 5, in \"forward\"\n  free        3.0 MiB of 80.0 GiB");
    CHECK_HAS(rep ? rep : "", "  held        10.2 MiB in 7 allocations on device 0");
    CHECK_HAS(rep ? rep : "", "    persistent                  5.0 MiB       5");
    CHECK_HAS(rep ? rep : "", "    step-scoped                 5.2 MiB       2");
    CHECK_HAS(rep ? rep : "", "         5  ");
    free(rep);
    /* the same in JSON: persistent 5 MiB, step-scoped 5.25 MiB */
    char *js = analyze(&r, "--format json", 0);
    CHECK_HAS(js ? js : "", "\"failures\": [");
    CHECK_HAS(js ? js : "", "\"persistent\": 5242880,");
    CHECK_HAS(js ? js : "", "\"step_scoped\": 5505024,");
    CHECK_HAS(js ? js : "", "\"op\": \"forward\",");
    free(js);
    /* a good run of the same steps, recorded as a trace, against the dump */
    run g;
    const char *genv[] = {"GMEMPROF_KERNELS=", "E2E_OOM_FAIL=99", NULL};
    run_app_in("oom_good", "oom", genv, &g);
    char gp[1300], args[1500];
    trace_path(&g, g.pid, gp, sizeof gp);
    snprintf(args, sizeof args, "--diff '%s'", gp);
    char *d = analyze(&r, args, 0);
    CHECK_HAS(d ? d : "", "Out of memory, dump 1");
    free(d);
}

/* A program that recovers (frees the failed step's activations) and fails
 * again in step 6: a second dump, NAME.2.zst, with steps 4..6. */
static void t_oom_again(void)
{
    run r;
    const char *env[] = {"GMEMPROF_SCHEDULE=on-oom", "GMEMPROF_OOM_STEPS=2", "GMEMPROF_KERNELS=",
                         "GMEMPROF_OOM_DUMPS=2", "E2E_OOM_STEPS=7", "E2E_OOM_FAIL=3", "E2E_OOM_AGAIN=6", NULL};
    run_app("oom_again", env, &r);
    CHECK(exited(&r, 0));
    char p[1300];
    trace_path(&r, r.pid, p, sizeof p);
    check_oom_dump(p, 1, 3, 1);
    /* the second: the first failure's activations were freed after it */
    trace t;
    snprintf(p, sizeof p, "%s/trace-%d.2.zst", r.dir, (int)r.pid);
    CHECK(trace_load(p, &t) == 0, "no second dump %s", p);
    check_complete(&t);
    const rec *o = nth(&t, GMT_REC_OOM, 0);
    CHECK(o && o->u.oom.dump == 2 && o->u.oom.step == 6 && o->u.oom.first_step == 4);
    /* W, leaks 1..6, step 6's activations (step 3's were freed) */
    CHECK(o && o->u.oom.live_count == 8, "live %" PRIu64, o ? o->u.oom.live_count : 0);
    CHECK(o && o->u.oom.live_bytes == 4 * MIB + 6 * 256 * KIB + 6 * MIB);
    const rec *wb = nth(&t, GMT_REC_WINDOW_BEGIN, 0);
    CHECK(wb && wb->u.wb.step == 4 && wb->u.wb.baseline_count == 4);
    trace_free(&t);
    CHECK_EQ_U64(count_files(r.dir), 2);
}

/* No failure: no file at all, and one line that says so (not an error). */
static void t_oom_none(void)
{
    run r;
    const char *env[] = {"GMEMPROF_SCHEDULE=on-oom", "GMEMPROF_KERNELS=", "E2E_OOM_FAIL=99", NULL};
    run_app("oom_none", env, &r);
    CHECK(exited(&r, 0));
    CHECK_EQ_U64(count_files(r.dir), 0);
    CHECK_HAS(r.err, "gmemprof: no out-of-memory in this run: the flight recorder wrote nothing");
    CHECK(!strstr(r.err, "error"), "%s", r.err);
}

/* The bridge's OOM is the failure: the allocator's cudaMalloc that failed
 * first (and that it could still have recovered from) writes nothing. */
/* The dump of sc_torch_oom: the framework's failure in step 2, the
 * allocator's numbers, the live set with its blocks. */
static void check_torch_oom_dump(const trace *t)
{
    check_complete(t);
    CHECK_EQ_U64(count(t, GMT_REC_OOM), 1);
    const rec *o = nth(t, GMT_REC_OOM, 0);
    if (o) {
        const gmt_oom *f = &o->u.oom;
        CHECK_EQ_U64(f->cause, GMT_OOM_FRAMEWORK);
        CHECK_EQ_U64(f->bytes, 64 * MIB);
        CHECK_EQ_U64(f->driver_free, 2 * MIB);
        CHECK_EQ_U64(f->driver_total, 80 * GIB);
        CHECK_EQ_U64(f->flags, GMT_OOMF_DRIVER | GMT_OOMF_FRAMEWORK);
        CHECK_STR(S(t, f->api), "cuMemAlloc_v2");
        CHECK_STR(S(t, f->op), "aten::mm");
        CHECK_EQ_U64(f->step, 2);
        CHECK_EQ_U64(f->tid, F("tid"));
        /* the seeded blocks (1 MiB + 512 KiB), 4 MiB and 8 MiB; two 20 MiB segments */
        CHECK_EQ_U64(f->fw_allocated, 13 * MIB + 512 * KIB);
        CHECK_EQ_U64(f->fw_reserved, 40 * MIB);
        CHECK_EQ_U64(f->live_count, 2 + 4);
        CHECK_EQ_U64(f->live_bytes, 40 * MIB);
        size_t fw = 0;
        for (size_t i = 0; i < t->n; i++)
            fw += t->r[i].type == GMT_REC_LIVE && t->r[i].u.live.source == GMT_SRC_FRAMEWORK;
        CHECK_EQ_U64(fw, 4);
    }
}

static void t_torch_oom(void)
{
    char be[BRIDGE_ENV_CAP], ce[BRIDGE_ENV_CAP];
    bridge_env(be, ce);
    const char *env[] = {be, ce, "GMEMPROF_SCHEDULE=on-oom", "GMEMPROF_KERNELS=", NULL};
    run r;
    run_app("torch_oom", env, &r);
    CHECK(exited(&r, 0));
    CHECK_STR(r.out, "");
    CHECK(!has_fact("bridge_off"));
    CHECK_EQ_U64(count_files(r.dir), 1);
    trace t = load_trace_of(&r);
    check_torch_oom_dump(&t);
    trace_free(&t);

    /* Beside a schedule whose window is step 0 (the allocator's blocks of
     * steps 1 and 2 are outside it): the same dump, beside the trace; the
     * trace has its window and the failure's record. */
    const char *env2[] = {be, ce, "GMEMPROF_SCHEDULE=on-oom,wait=0,warmup=0,active=1", "GMEMPROF_KERNELS=", NULL};
    run_app("torch_oom", env2, &r);
    CHECK(exited(&r, 0));
    CHECK(!has_fact("bridge_off"));
    CHECK_EQ_U64(count_files(r.dir), 2);
    char d[1300];
    snprintf(d, sizeof d, "%s/trace-%d.oom.zst", r.dir, (int)r.pid);
    CHECK(trace_load(d, &t) == 0, "%s", d);
    check_torch_oom_dump(&t);
    /* at least the scenario's own: the segment, the 4 and 8 MiB blocks, the OOM (the bridge's seeding adds its own) */
    CHECK(count(&t, GMT_REC_BLOCK) >= 4, "%zu blocks in the dump", count(&t, GMT_REC_BLOCK));
    trace_free(&t);
    t = load_trace_of(&r);
    check_complete(&t);
    CHECK_EQ_U64(count(&t, GMT_REC_WINDOW_BEGIN), 1);
    const rec *o = nth(&t, GMT_REC_OOM, 0);
    CHECK(o && o->u.oom.cause == GMT_OOM_FRAMEWORK && o->u.oom.step == 2 && o->u.oom.live_count == 0);
    for (size_t i = 0; i < t.n; i++)
        if (t.r[i].type == GMT_REC_BLOCK && !(t.r[i].u.block.flags & GMT_BLKF_BASELINE))
            CHECK(t.r[i].u.block.step == 0, "a block of step %" PRIu64 " in the trace", t.r[i].u.block.step);
    trace_free(&t);
}

/* A dump on demand (SIGUSR2 in step 2; the program goes on) and at the end
 * (GMEMPROF_OOM_AT_EXIT=1 does nothing once a dump was written; without the
 * signal, the end writes one). */
static void t_oom_signal(void)
{
    run r;
    const char *env[] = {"GMEMPROF_SCHEDULE=on-oom", "GMEMPROF_KERNELS=", "GMEMPROF_OOM_SIGNAL=1",
                         "GMEMPROF_OOM_AT_EXIT=1", "E2E_OOM_FAIL=99", "E2E_OOM_SIGNAL_AT=2", NULL};
    run_app("oom_signal", env, &r);
    CHECK(exited(&r, 0));
    CHECK_EQ_U64(count_files(r.dir), 1);
    trace t = load_trace_of(&r);
    check_complete(&t);
    const rec *o = nth(&t, GMT_REC_OOM, 0);
    CHECK(o && o->u.oom.cause == GMT_OOM_SIGNAL && o->u.oom.step == 2 && o->u.oom.bytes == 0);
    /* at the signal: the weights and step 1's leak */
    CHECK(o && o->u.oom.live_count == 2, "live %" PRIu64, o ? o->u.oom.live_count : 0);
    trace_free(&t);
    const char *env2[] = {"GMEMPROF_SCHEDULE=on-oom", "GMEMPROF_KERNELS=", "GMEMPROF_OOM_AT_EXIT=1",
                          "E2E_OOM_FAIL=99", NULL};
    run_app("oom_exit", env2, &r);
    CHECK(exited(&r, 0));
    t = load_trace_of(&r);
    check_complete(&t);
    o = nth(&t, GMT_REC_OOM, 0);
    /* at the end: the weights and the 5 leaks (every step freed its activations) */
    CHECK(o && o->u.oom.cause == GMT_OOM_EXIT && o->u.oom.step == 5 && o->u.oom.live_count == 6,
          "cause %" PRIu64 " step %" PRIu64 " live %" PRIu64, o ? o->u.oom.cause : 0, o ? o->u.oom.step : 0,
          o ? o->u.oom.live_count : 0);
    trace_free(&t);
}

/* Through the launcher, two ranks: rank 1 fails, rank 0 does not; each
 * rank's dump would be its own file (%r). And a run without failure. */
static void t_oom_launcher(void)
{
    char out[1400], dir[1300];
    snprintf(dir, sizeof dir, "%s/oom_launcher_out", g_work);
    mkdir(dir, 0755);
    rm_tree(dir);
    snprintf(out, sizeof out, "%s/dump-%%r.zst", dir);
    char *argv[] = {(char *)g_launcher, "--on-oom", "-o", out, "--", (char *)g_app, "oom_ranks", NULL};
    const char *env[] = {"GMEMPROF_KERNELS=", NULL};
    run r;
    run_prog("oom_launcher", argv, env, &r);
    CHECK(exited(&r, 0));
    CHECK_STR(r.out, "");
    CHECK_HAS(r.err, "gmemprof: rank 1 ran out of memory: the steps before it are in ");
    CHECK_HAS(r.err, "dump-1.zst (");
    CHECK_HAS(r.err, "gmemprof: 1 other process had no out-of-memory: nothing written for it\n");
    char p[1400];
    snprintf(p, sizeof p, "%s/dump-1.zst", dir);
    CHECK(file_exists(p), "%s", p);
    snprintf(p, sizeof p, "%s/dump-0.zst", dir);
    CHECK(!file_exists(p), "%s", p);
    trace t;
    snprintf(p, sizeof p, "%s/dump-1.zst", dir);
    CHECK(trace_load(p, &t) == 0);
    check_complete(&t);
    CHECK(t.n > 0 && t.r[0].u.hdr.rank == 1);
    trace_free(&t);
    /* no failure at all: one line, not an error, and the exit status is the command's */
    char *argv2[] = {(char *)g_launcher, "--on-oom", "-o", out, "--", (char *)g_app, "oom", NULL};
    const char *env2[] = {"GMEMPROF_KERNELS=", "E2E_OOM_FAIL=99", NULL};
    rm_tree(dir);
    run_prog("oom_launcher", argv2, env2, &r);
    CHECK(exited(&r, 0));
    CHECK_HAS(r.err, "gmemprof: no out-of-memory in this run: the flight recorder wrote nothing (it held at most ");
    CHECK_EQ_U64(count_lines(r.err, "gmemprof: "), 1);
}

/* A program without steps keeps the last GMEMPROF_OOM_SECONDS (here 1 of
 * its 2.5 s), in chunks begun every 256 records once a quarter of that has
 * passed (about 0.3 s here): the dump holds from 1 s to about 1.6 s of the
 * iterations, 40% to 65% of them; bounds of 25% and 85% leave room for a
 * slow machine. Without the time rule it would hold them all. */
static void t_oom_nosteps(void)
{
    run r;
    const char *env[] = {"GMEMPROF_SCHEDULE=on-oom", "GMEMPROF_OOM_SECONDS=1", "GMEMPROF_KERNELS=", NULL};
    run_app("oom_nosteps", env, &r);
    CHECK(exited(&r, 0));
    char p[1300];
    trace_path(&r, r.pid, p, sizeof p);
    trace t;
    CHECK(trace_load(p, &t) == 0, "%s", p);
    check_complete(&t);
    check_windows(&t);
    /* the ring keeps by the records' own times: bounds from when each
     * iteration ran (e2e_app.c, sc_oom_nosteps), whatever the load */
    uint64_t n = F("iters"), keep = F("must_keep"), drop = F("must_drop"), nalloc = 0;
    for (size_t i = 0; i < t.n; i++)
        nalloc += t.r[i].type == GMT_REC_ALLOC && !(t.r[i].u.mem.flags & GMT_MEMF_BASELINE);
    CHECK(n > 100 && nalloc >= keep && nalloc <= n - drop,
          "%" PRIu64 " of %" PRIu64 " iterations kept, at least %" PRIu64 ", at most %" PRIu64, nalloc, n, keep,
          n - drop);
    const rec *wb = nth(&t, GMT_REC_WINDOW_BEGIN, 0);
    CHECK(wb && wb->u.wb.baseline_count >= 1 && wb->u.wb.baseline_bytes >= 4 * MIB); /* the weights */
    const rec *o = nth(&t, GMT_REC_OOM, 0);
    CHECK(o && o->u.oom.step == 0 && o->u.oom.live_count == 1);
    trace_free(&t);
}

/* ---- the flight recorder beside a schedule of windows (scenario sc_oom) ---------- */

#define OOM_SCHED "GMEMPROF_SCHEDULE=on-oom,wait=1,warmup=0,active=2"

/* The trace of sc_oom under wait=1,warmup=0,active=2: step 0 waits, steps 1
 * and 2 are window 0, steps 3.. are after it; exactly what it is without
 * the recorder. `failed`: step 5 failed (its activations were not freed). */
static void check_sched_trace(const char *path, int failed)
{
    trace t;
    CHECK(trace_load(path, &t) == 0, "cannot read %s", path);
    check_complete(&t);
    check_windows(&t);
    CHECK_EQ_U64(count(&t, GMT_REC_WINDOW_BEGIN), 1);
    CHECK_EQ_U64(count(&t, GMT_REC_WINDOW_END), 1);
    /* the baseline at step 1: the weights, made in step 0 */
    const rec *wb = nth(&t, GMT_REC_WINDOW_BEGIN, 0);
    CHECK(wb && wb->u.wb.window == 0 && wb->u.wb.step == 1);
    CHECK(wb && wb->u.wb.baseline_count == 1 && wb->u.wb.baseline_bytes == 4 * MIB);
    const rec *we = nth(&t, GMT_REC_WINDOW_END, 0);
    CHECK(we && we->u.we.window == 0 && we->u.we.step == 2 && we->u.we.reason == GMT_WEND_SCHEDULE);
    /* a STEP at each transition: steps 0..5 */
    CHECK_EQ_U64(count(&t, GMT_REC_STEP), 6);
    /* in the window: steps 1 and 2, each an activation and a leak, the
     * activation freed; nothing of another step */
    size_t nalloc = 0, nfree = 0, at_wb = wb ? index_of(&t, wb) : 0, at_we = we ? index_of(&t, we) : 0;
    for (size_t i = 0; i < t.n; i++) {
        const rec *x = &t.r[i];
        if ((x->type != GMT_REC_ALLOC && x->type != GMT_REC_FREE) || (x->u.mem.flags & GMT_MEMF_BASELINE))
            continue;
        nalloc += x->type == GMT_REC_ALLOC;
        nfree += x->type == GMT_REC_FREE;
        CHECK(x->u.mem.step == 1 || x->u.mem.step == 2, "record %zu of step %" PRIu64, i, x->u.mem.step);
        CHECK(i > at_wb && i < at_we, "record %zu outside the window's bracket", i);
    }
    CHECK_EQ_U64(nalloc, 4);
    CHECK_EQ_U64(nfree, 2);
    /* the failure where it happened, its live set left to the trace's records */
    CHECK_EQ_U64(count(&t, GMT_REC_OOM), failed ? 1 : 0);
    CHECK_EQ_U64(count(&t, GMT_REC_LIVE), 0);
    const rec *o = nth(&t, GMT_REC_OOM, 0);
    if (failed && o) {
        CHECK_EQ_U64(o->u.oom.step, 5);
        CHECK_EQ_U64(o->u.oom.bytes, 64 * MIB);
        CHECK_EQ_U64(o->u.oom.live_count, 0);
        CHECK_EQ_U64(o->u.oom.dump, 1); /* the trace's record names the dump of the same failure */
        CHECK(o->u.oom.flags & GMT_OOMF_IN_TRACE);
        CHECK_STR(S(&t, o->u.oom.op), "forward");
    }
    /* outside the windows: step 0's weights, steps 3 and 4 (2 ALLOC + 1
     * FREE each), step 5 (2 ALLOC, and its FREE unless it failed) */
    const rec *st = last(&t, GMT_REC_STATS);
    CHECK(st && st->u.stats.outside_window == (failed ? 9u : 10u), "outside %" PRIu64,
          st ? st->u.stats.outside_window : 0);
    trace_free(&t);
}

/* The failure in step 5 with a schedule of windows: the trace holds its
 * window (steps 1 and 2), the dump beside it (NAME.oom.zst) steps 3..5, the
 * failure and the live set, as the recorder alone writes them. */
static void t_oom_sched(void)
{
    run r;
    const char *env[] = {OOM_SCHED, "GMEMPROF_OOM_STEPS=2", "GMEMPROF_KERNELS=", "GMEMPROF_OOM_MAX_MB=8", NULL};
    run_app("oom_sched", env, &r);
    CHECK(exited(&r, 0));
    CHECK_STR(r.out, "");
    char p[1300], d[1300];
    trace_path(&r, r.pid, p, sizeof p);
    check_sched_trace(p, 1);
    snprintf(d, sizeof d, "%s/trace-%d.oom.zst", r.dir, (int)r.pid);
    check_oom_dump(d, 3, 5, 1);
    trace t;
    CHECK(trace_load(d, &t) == 0);
    const rec *st = last(&t, GMT_REC_STATS);
    CHECK(st && st->u.stats.outside_window == 0, "a dump records everything: outside %" PRIu64,
          st ? st->u.stats.outside_window : 0);
    trace_free(&t);
    CHECK_EQ_U64(count_files(r.dir), 2);
    char want[1500];
    snprintf(want, sizeof want, "64.0 MiB asked, 3.0 MiB free; the last steps are in %s (", d);
    CHECK_HAS(r.err, want);
    snprintf(want, sizeof want, "gmemprof: wrote %s (", p);
    CHECK_HAS(r.err, want);
    CHECK_HAS(r.err, ", 1 window, 5 steps by api, ");
    snprintf(want, sizeof want, "gmemprof: the flight recorder wrote 1 dump (the first: %s)", d);
    CHECK_HAS(r.err, want);
    /* the trace's report of the failure points at the dump */
    char *rep = analyze(&r, "", 0);
    static const char head[] = "Out of memory: the CUDA call cuMemAlloc_v2 failed (CUresult 2)\n";
    CHECK(rep && strncmp(rep, head, sizeof head - 1) == 0, "%s", rep ? rep : "");
    CHECK_HAS(rep ? rep : "", "  note: the failure came outside the trace's windows: ");
    snprintf(want, sizeof want, "\n  the flight recorder's dump of it: %s\n", d);
    CHECK_HAS(rep ? rep : "", want);
    snprintf(want, sizeof want, "the steps before it are in its dump, %s\n", d);
    CHECK_HAS(rep ? rep : "", want);
    free(rep);
    rep = analyze(&r, "--format json", 0);
    CHECK_HAS(rep ? rep : "", "\"outside_every_window\": 1");
    snprintf(want, sizeof want, "\"dump_file\": \"%s\",", d);
    CHECK_HAS(rep ? rep : "", want);
    CHECK_HAS(rep ? rep : "", "\"dump_file_found\": 1");
    free(rep);
    /* the dump moved away: the report still names it, and says so */
    char moved[1400];
    snprintf(moved, sizeof moved, "%s.moved", d);
    CHECK(rename(d, moved) == 0);
    rep = analyze(&r, "", 0);
    snprintf(want, sizeof want, "  the flight recorder's dump of it: %s (not found beside this trace)\n", d);
    CHECK_HAS(rep ? rep : "", want);
    CHECK_HAS(rep ? rep : "", "the steps before it are in the flight recorder's dump (gmemprof --on-oom with a ");
    free(rep);
    CHECK(rename(moved, d) == 0);
    /* the analyzer reads the dump as one of the recorder alone */
    char cmd[3200];
    snprintf(cmd, sizeof cmd, "'%s' '%s'", g_analyze, d);
    FILE *f = popen(cmd, "r");
    char line[512] = "";
    CHECK(f && fgets(line, sizeof line, f));
    CHECK_HAS(line, "Out of memory, dump 1: the CUDA call cuMemAlloc_v2 failed (CUresult 2)");
    if (f)
        pclose(f);
}

/* Two failures (steps 3 and 6, the program recovering from the first):
 * two dumps beside the trace, NAME.oom.zst and NAME.oom.2.zst, and two OOM
 * records in the trace, both after its window (steps 1 and 2). */
static void t_oom_sched_again(void)
{
    run r;
    const char *env[] = {OOM_SCHED,          "GMEMPROF_OOM_STEPS=2", "GMEMPROF_KERNELS=", "GMEMPROF_OOM_DUMPS=2",
                         "E2E_OOM_STEPS=7", "E2E_OOM_FAIL=3",       "E2E_OOM_AGAIN=6",   NULL};
    run_app("oom_sched_again", env, &r);
    CHECK(exited(&r, 0));
    char p[1300];
    snprintf(p, sizeof p, "%s/trace-%d.oom.zst", r.dir, (int)r.pid);
    check_oom_dump(p, 1, 3, 1);
    trace t;
    snprintf(p, sizeof p, "%s/trace-%d.oom.2.zst", r.dir, (int)r.pid);
    CHECK(trace_load(p, &t) == 0, "no second dump %s", p);
    check_complete(&t);
    const rec *o = nth(&t, GMT_REC_OOM, 0);
    CHECK(o && o->u.oom.dump == 2 && o->u.oom.step == 6 && o->u.oom.first_step == 4);
    CHECK(o && o->u.oom.live_count == 8, "live %" PRIu64, o ? o->u.oom.live_count : 0);
    trace_free(&t);
    trace_path(&r, r.pid, p, sizeof p);
    CHECK(trace_load(p, &t) == 0, "%s", p);
    check_complete(&t);
    CHECK_EQ_U64(count(&t, GMT_REC_WINDOW_BEGIN), 1);
    CHECK_EQ_U64(count(&t, GMT_REC_OOM), 2);
    const rec *o1 = nth(&t, GMT_REC_OOM, 0), *o2 = nth(&t, GMT_REC_OOM, 1);
    CHECK(o1 && o2 && o1->u.oom.step == 3 && o2->u.oom.step == 6 && o1->u.oom.dump == 1 && o2->u.oom.dump == 2);
    trace_free(&t);
    CHECK_EQ_U64(count_files(r.dir), 3);
}

/* The KERNEL records of a file, each checked to be of a step in [lo, hi]
 * and, made in launch mode, with its grid's x equal to its step (sc_oom's
 * E2E_OOM_KERNEL; the fake's CUPTI records have a grid of their own). */
static size_t kernels_in(const char *path, uint64_t lo, uint64_t hi)
{
    trace t;
    CHECK(trace_load(path, &t) == 0, "cannot read %s", path);
    size_t n = 0;
    for (size_t i = 0; i < t.n; i++) {
        const gmt_kernel *k = &t.r[i].u.kernel;
        if (t.r[i].type != GMT_REC_KERNEL)
            continue;
        n++;
        CHECK(k->step >= lo && k->step <= hi && (!(k->flags & GMT_KERNF_LAUNCH) || k->grid[0] == k->step),
              "%s: a kernel of step %" PRIu64 " (grid %" PRIu64 ")", path, k->step, k->grid[0]);
    }
    trace_free(&t);
    return n;
}

/* Kernels, one per step: the trace holds those of its window (steps 1 and
 * 2) in every case; the dump (steps 3..5) holds its three only when
 * GMEMPROF_KERNELS is given, which keeps them collected outside the
 * windows too (gpu: CUPTI's records, which the fake drops while kernel
 * activity is off; launch: the launch callbacks). */
static void t_oom_sched_kernels(void)
{
    static const struct {
        const char *kernels;
        size_t in_dump;
        int launch;
    } c[] = {{"GMEMPROF_KERNELS=", 0, 1}, {"GMEMPROF_KERNELS=gpu", 3, 0}, {"GMEMPROF_KERNELS=launch", 3, 1}};
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
        tc_context("%s", c[i].kernels);
        run r;
        const char *env[] = {OOM_SCHED, "GMEMPROF_OOM_STEPS=2", c[i].kernels, "E2E_OOM_KERNEL=1", NULL};
        run_app("oom_sched_kernels", env, &r);
        CHECK(exited(&r, 0));
        char p[1300], d[1300];
        trace_path(&r, r.pid, p, sizeof p);
        snprintf(d, sizeof d, "%s/trace-%d.oom.zst", r.dir, (int)r.pid);
        CHECK_EQ_U64(kernels_in(p, 1, 2), 2);
        CHECK_EQ_U64(kernels_in(d, 3, 5), c[i].in_dump);
        trace t;
        CHECK(trace_load(p, &t) == 0);
        const rec *k = nth(&t, GMT_REC_KERNEL, 0);
        CHECK(k && !!(k->u.kernel.flags & GMT_KERNF_LAUNCH) == c[i].launch);
        trace_free(&t);
    }
    tc_context(NULL);
}

/* A capture schedule: cudaProfilerStart in step 1, Stop in step 3, so
 * window 0 holds steps 1 and 2. Its start and stop are transitions within
 * a step (STEP records of steps 1 and 3 again, source capture): the trace
 * has 8 STEP records, the ring begins chunks at steps only, and the dump is
 * the one the recorder alone writes (steps 3..5, each STEP once). */
static void t_oom_sched_capture(void)
{
    run r;
    const char *env[] = {"GMEMPROF_SCHEDULE=on-oom,capture", "GMEMPROF_OOM_STEPS=2", "GMEMPROF_KERNELS=",
                         "E2E_OOM_CAPTURE=1", NULL};
    run_app("oom_sched_capture", env, &r);
    CHECK(exited(&r, 0));
    char p[1300];
    snprintf(p, sizeof p, "%s/trace-%d.oom.zst", r.dir, (int)r.pid);
    check_oom_dump(p, 3, 5, 1);
    trace t;
    trace_path(&r, r.pid, p, sizeof p);
    CHECK(trace_load(p, &t) == 0, "%s", p);
    check_complete(&t);
    check_windows(&t);
    CHECK_EQ_U64(count(&t, GMT_REC_WINDOW_BEGIN), 1);
    CHECK_EQ_U64(count(&t, GMT_REC_STEP), 8);
    const rec *wb = nth(&t, GMT_REC_WINDOW_BEGIN, 0);
    CHECK(wb && wb->u.wb.step == 1 && wb->u.wb.baseline_count == 1 && wb->u.wb.baseline_bytes == 4 * MIB);
    size_t nalloc = 0;
    for (size_t i = 0; i < t.n; i++)
        if (t.r[i].type == GMT_REC_ALLOC && !(t.r[i].u.mem.flags & GMT_MEMF_BASELINE)) {
            nalloc++;
            CHECK(t.r[i].u.mem.step == 1 || t.r[i].u.mem.step == 2);
        }
    CHECK_EQ_U64(nalloc, 4);
    CHECK_EQ_U64(count(&t, GMT_REC_OOM), 1);
    const rec *st = last(&t, GMT_REC_STATS);
    CHECK(st && st->u.stats.outside_window == 9, "outside %" PRIu64, st ? st->u.stats.outside_window : 0);
    trace_free(&t);
    CHECK_EQ_U64(count_files(r.dir), 2);
}

/* A name interned while a dump is written (GMEMPROF_TEST_DUMP_NAME: no
 * source interns one then) reaches the trace and the dump. Then the trace's
 * disk fills up in step 1 (E2E_OOM_DISK_FULL_AT): the trace fails at its
 * window's end, and the dump of the failure in step 5 is still written
 * whole. The trace's failure is said once, also when the name's STRING
 * fails to reach it while the dump is written, and the trace is counted
 * incomplete: no "wrote" line for it. */
static void t_oom_sched_diskfull(void)
{
    run r;
    const char *env[] = {OOM_SCHED, "GMEMPROF_OOM_STEPS=2", "GMEMPROF_KERNELS=", "GMEMPROF_TEST_DUMP_NAME=dump name",
                         NULL};
    run_app("oom_sched_diskfull", env, &r);
    CHECK(exited(&r, 0));
    char p[1300], d[1300], want[1500];
    trace_path(&r, r.pid, p, sizeof p);
    snprintf(d, sizeof d, "%s/trace-%d.oom.zst", r.dir, (int)r.pid);
    check_sched_trace(p, 1);
    check_oom_dump(d, 3, 5, 1);
    trace t;
    CHECK(trace_load(p, &t) == 0, "%s", p);
    CHECK_EQ_U64(count_strings(&t, "dump name 1"), 1);
    trace_free(&t);
    CHECK(trace_load(d, &t) == 0, "%s", d);
    CHECK_EQ_U64(count_strings(&t, "dump name 1"), 1);
    trace_free(&t);

    const char *fenv[] = {OOM_SCHED, "GMEMPROF_OOM_STEPS=2", "GMEMPROF_KERNELS=", "GMEMPROF_TEST_DUMP_NAME=dump name",
                          "E2E_OOM_DISK_FULL_AT=1", NULL};
    run_app("oom_sched_diskfull", fenv, &r);
    CHECK(exited(&r, 0));
    CHECK_STR(r.out, "");
    CHECK_EQ_U64(F("trace_full"), 1);
    trace_path(&r, r.pid, p, sizeof p);
    snprintf(d, sizeof d, "%s/trace-%d.oom.zst", r.dir, (int)r.pid);
    check_oom_dump(d, 3, 5, 1);
    snprintf(want, sizeof want,
             "gmemprof: writing the trace %s failed: No space left on device; the rest of this run is counted as "
             "dropped records\n",
             p);
    CHECK_HAS(r.err, want);
    CHECK_EQ_U64(count_lines(r.err, "gmemprof: writing the trace "), 1);
    snprintf(want, sizeof want, "gmemprof: wrote %s", p);
    CHECK(strstr(r.err, want) == NULL, "the trace is counted as written whole");
    snprintf(want, sizeof want, "gmemprof: the flight recorder wrote 1 dump (the first: %s)", d);
    CHECK_HAS(r.err, want);
    /* the failure's line, the trace's, the recorder's */
    CHECK_EQ_U64(count_lines(r.err, "gmemprof: "), 3);
}

/* Dumps no failure asked for, beside a trace: SIGUSR2 in step 2, and the
 * end (GMEMPROF_OOM_AT_EXIT=1). The trace is the one of a run without
 * failure, and holds no OOM record: a dump on demand is not a failure. */
static void t_oom_sched_signal(void)
{
    run r;
    const char *env[] = {OOM_SCHED, "GMEMPROF_KERNELS=", "GMEMPROF_OOM_SIGNAL=1", "E2E_OOM_FAIL=99",
                         "E2E_OOM_SIGNAL_AT=2", NULL};
    run_app("oom_sched_signal", env, &r);
    CHECK(exited(&r, 0));
    CHECK_EQ_U64(count_files(r.dir), 2);
    char p[1300], d[1300];
    trace_path(&r, r.pid, p, sizeof p);
    check_sched_trace(p, 0);
    snprintf(d, sizeof d, "%s/trace-%d.oom.zst", r.dir, (int)r.pid);
    trace t;
    CHECK(trace_load(d, &t) == 0, "%s", d);
    check_complete(&t);
    const rec *o = nth(&t, GMT_REC_OOM, 0);
    CHECK(o && o->u.oom.cause == GMT_OOM_SIGNAL && o->u.oom.step == 2 && o->u.oom.bytes == 0);
    /* at the signal: the weights and step 1's leak */
    CHECK(o && o->u.oom.live_count == 2, "live %" PRIu64, o ? o->u.oom.live_count : 0);
    trace_free(&t);

    const char *env2[] = {OOM_SCHED, "GMEMPROF_KERNELS=", "GMEMPROF_OOM_AT_EXIT=1", "E2E_OOM_FAIL=99", NULL};
    run_app("oom_sched_exit", env2, &r);
    CHECK(exited(&r, 0));
    CHECK_EQ_U64(count_files(r.dir), 2);
    trace_path(&r, r.pid, p, sizeof p);
    check_sched_trace(p, 0);
    snprintf(d, sizeof d, "%s/trace-%d.oom.zst", r.dir, (int)r.pid);
    CHECK(trace_load(d, &t) == 0, "%s", d);
    check_complete(&t);
    o = nth(&t, GMT_REC_OOM, 0);
    /* at the end: the weights and the 5 leaks; the ring: steps 2..5 (GMEMPROF_OOM_STEPS 3) */
    CHECK(o && o->u.oom.cause == GMT_OOM_EXIT && o->u.oom.step == 5 && o->u.oom.live_count == 6 &&
              o->u.oom.first_step == 2,
          "cause %" PRIu64 " step %" PRIu64 " live %" PRIu64, o ? o->u.oom.cause : 0, o ? o->u.oom.step : 0,
          o ? o->u.oom.live_count : 0);
    trace_free(&t);
}

/* No failure: the trace alone, and a line saying the recorder wrote no dump. */
static void t_oom_sched_none(void)
{
    run r;
    const char *env[] = {OOM_SCHED, "GMEMPROF_KERNELS=", "E2E_OOM_FAIL=99", NULL};
    run_app("oom_sched_none", env, &r);
    CHECK(exited(&r, 0));
    char p[1300];
    trace_path(&r, r.pid, p, sizeof p);
    check_sched_trace(p, 0);
    CHECK_EQ_U64(count_files(r.dir), 1);
    char want[1500];
    snprintf(want, sizeof want, "gmemprof: wrote %s (", p);
    CHECK_HAS(r.err, want);
    CHECK_HAS(r.err, "gmemprof: no out-of-memory in this run: the flight recorder wrote no dump (it held at most");
    CHECK(!strstr(r.err, "error"), "%s", r.err);
}

/* The launcher: --on-oom with --schedule, two ranks, rank 1 fails: a trace
 * per rank, the dump beside rank 1's, and the summary names each file. */
static void t_oom_sched_launcher(void)
{
    char out[1400], dir[1300], p[1400];
    snprintf(dir, sizeof dir, "%s/oom_sched_launcher_out", g_work);
    mkdir(dir, 0755);
    rm_tree(dir);
    snprintf(out, sizeof out, "%s/t-%%r.zst", dir);
    char *argv[] = {(char *)g_launcher, "--on-oom", "--schedule", "wait=1,warmup=0,active=2", "-o", out, "--",
                    (char *)g_app, "oom_ranks", NULL};
    const char *env[] = {"GMEMPROF_KERNELS=", NULL};
    run r;
    run_prog("oom_sched_launcher", argv, env, &r);
    CHECK(exited(&r, 0));
    CHECK_STR(r.out, "");
    CHECK_HAS(r.err, "gmemprof: 2 traces, one per profiled process");
    CHECK_HAS(r.err, "t-0.zst (");
    CHECK_HAS(r.err, "t-1.zst (");
    CHECK_HAS(r.err, "gmemprof: rank 1 ran out of memory: the steps before it are in ");
    CHECK_HAS(r.err, "t-1.oom.zst (");
    CHECK_HAS(r.err, "next: gmem-analyze ");
    CHECK_HAS(r.err, "gmemprof: 1 other process had no out-of-memory: no dump for it\n");
    for (int k = 0; k < 2; k++) {
        snprintf(p, sizeof p, "%s/t-%d.zst", dir, k);
        check_sched_trace(p, k == 1);
    }
    /* the dump: GMEMPROF_OOM_STEPS 3 by default, so steps 2..5; live: the
     * weights, the leaks of steps 1..5, step 5's activations */
    snprintf(p, sizeof p, "%s/t-1.oom.zst", dir);
    trace t;
    CHECK(trace_load(p, &t) == 0, "%s", p);
    check_complete(&t);
    CHECK(t.n > 0 && t.r[0].u.hdr.rank == 1);
    const rec *o = nth(&t, GMT_REC_OOM, 0);
    CHECK(o && o->u.oom.step == 5 && o->u.oom.first_step == 2 && o->u.oom.dump == 1);
    CHECK(o && o->u.oom.live_count == 7, "live %" PRIu64, o ? o->u.oom.live_count : 0);
    CHECK_EQ_U64(count(&t, GMT_REC_STEP), 4);
    trace_free(&t);
    snprintf(p, sizeof p, "%s/t-0.oom.zst", dir);
    CHECK(!file_exists(p), "%s", p);
    /* one process, no failure: its trace, and no dump */
    snprintf(out, sizeof out, "%s/t.zst", dir);
    char *argv2[] = {(char *)g_launcher, "--on-oom", "--schedule", "wait=1,warmup=0,active=2", "-o", out, "--",
                     (char *)g_app, "oom", NULL};
    const char *env2[] = {"GMEMPROF_KERNELS=", "E2E_OOM_FAIL=99", NULL};
    rm_tree(dir);
    run_prog("oom_sched_launcher", argv2, env2, &r);
    CHECK(exited(&r, 0));
    CHECK_HAS(r.err, "gmemprof: trace ");
    CHECK_HAS(r.err, "/t.zst (");
    snprintf(p, sizeof p, "%s/t.zst", dir);
    check_sched_trace(p, 0);
    snprintf(p, sizeof p, "%s/t.oom.zst", dir);
    CHECK(!file_exists(p), "%s", p);
    CHECK_HAS(r.err, "gmemprof: no out-of-memory in this run: the flight recorder wrote no dump (it held at most ");
    CHECK_EQ_U64(count_lines(r.err, "gmemprof: "), 2);
}

int main(int argc, char **argv)
{
    if (argc < 7) {
        fprintf(stderr, "usage: e2e_test SCENARIO APP SEARCH LAUNCHER LIB WORKDIR\n");
        return 2;
    }
    const char *sc = argv[1];
    g_app = argv[2];
    g_search = argv[3];
    g_launcher = argv[4];
    g_lib = argv[5];
    g_work = argv[6];
    snprintf(g_bridge, sizeof g_bridge, "%s", getenv("E2E_FAKE_BRIDGE") ? getenv("E2E_FAKE_BRIDGE") : "");
    snprintf(g_c10, sizeof g_c10, "%s", getenv("E2E_FAKE_C10") ? getenv("E2E_FAKE_C10") : "");
    snprintf(g_analyze, sizeof g_analyze, "%s", getenv("E2E_ANALYZE") ? getenv("E2E_ANALYZE") : "gmem-analyze");
    static const struct {
        const char *name;
        void (*fn)(void);
    } tests[] = {
        {"torch", t_torch},       {"torch_unused", t_torch_unused}, {"torch_ops", t_torch_ops}, {"torch_modules", t_torch_modules}, {"torch_owners", t_torch_owners}, {"torch_ops_burst", t_torch_ops_burst}, {"torch_overflow", t_torch_overflow},
        {"whole", t_whole},       {"schedule", t_schedule},   {"nvtx_steps", t_nvtx_steps}, {"nvtx_window", t_nvtx_window},
        {"api_precedence", t_api_precedence}, {"capture", t_capture}, {"tags", t_tags}, {"clock", t_clock},
        {"threads", t_threads},   {"overflow", t_overflow},   {"settings", t_settings},
        {"badoutput", t_badoutput}, {"diskfull", t_diskfull}, {"conflict", t_conflict},
        {"sigchain", t_sigchain}, {"sigkill", t_sigkill},     {"fork", t_fork},
        {"sigign", t_sigign},     {"time", t_time},           {"budget", t_budget},
        {"vmm", t_vmm},           {"sources", t_sources},     {"attrs", t_attrs},
        {"search", t_search},     {"nocupti", t_nocupti},     {"launcher", t_launcher},
        {"exit", t_exit},         {"abort", t_abort},         {"forkexec", t_forkexec},
        {"devices", t_devices},   {"long", t_long},           {"agent", t_agent},
        {"noperm", t_noperm},     {"launch", t_launch},     {"copies", t_copies},     {"launch_many", t_launch_many},     {"xthread", t_xthread},     {"burst", t_burst},
        {"samename", t_samename}, {"outlink", t_outlink}, {"fifo", t_fifo}, {"escpath", t_escpath},
        {"summaryfile", t_summaryfile}, {"accounting", t_accounting},
        {"oom", t_oom},           {"oom_again", t_oom_again}, {"oom_none", t_oom_none},
        {"torch_oom", t_torch_oom}, {"oom_signal", t_oom_signal}, {"oom_launcher", t_oom_launcher},
        {"oom_nosteps", t_oom_nosteps}, {"oom_sched", t_oom_sched}, {"oom_sched_none", t_oom_sched_none}, {"oom_sched_again", t_oom_sched_again},
        {"oom_sched_kernels", t_oom_sched_kernels}, {"oom_sched_capture", t_oom_sched_capture},
        {"oom_sched_signal", t_oom_sched_signal}, {"oom_sched_diskfull", t_oom_sched_diskfull},
        {"oom_sched_launcher", t_oom_sched_launcher},
        {"closefds", t_closefds}, {"devstdout", t_devstdout}, {"exitload", t_exitload},
        {"claimname", t_claimname}, {"longname", t_longname},
    };
    if (strcmp(sc, "sigterm") == 0)
        t_signal("sigterm", SIGTERM);
    else if (strcmp(sc, "sigint") == 0)
        t_signal("sigint", SIGINT);
    else if (strcmp(sc, "sighup") == 0)
        t_signal("sighup", SIGHUP);
    else if (strcmp(sc, "sigload") == 0)
        t_sigload();
    else if (strcmp(sc, "sigexit") == 0)
        t_signal("sigexit", SIGTERM); /* the exit waits: death by the signal, complete trace */
    else {
        size_t i;
        for (i = 0; i < sizeof tests / sizeof tests[0]; i++)
            if (strcmp(tests[i].name, sc) == 0) {
                tests[i].fn();
                break;
            }
        if (i == sizeof tests / sizeof tests[0]) {
            fprintf(stderr, "unknown scenario %s\n", sc);
            return 2;
        }
    }
    return tc_result(sc);
}
