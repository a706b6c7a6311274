/*
 * fuzz_config: the GMEMPROF_* settings parser (profiler/config.c) and the
 * step schedule (profiler/schedule.c).
 *
 * The input is a list of NUL-separated pieces. A piece "KEY=VALUE" is an
 * environment variable seen by gmp_config_load through its getenv seam (the
 * first one of a name wins, as with getenv); a one-letter key 'a'.. stands
 * for the n-th known setting so that mutations reach every setting without
 * spelling its name. Checked:
 *
 * - gmp_config_load against a reference model written here from the rules
 *   in config.h/config.c: each value is parsed by the documented rules
 *   (digits with blanks around, yes/no words, log levels, the output escapes,
 *   the schedule grammar through gmp_sched_parse); a valid value is taken, a
 *   bad one leaves the default and gives exactly one line naming the
 *   variable; a bad output turns the profiler off; the CUPTI buffer is cut
 *   to a quarter of the host budget with one more line. The return value
 *   equals the lines kept plus lost. Every line is one terminated line with
 *   no control characters (it goes to the host's stderr).
 * - gmp_config_check_value agrees with the model for every piece.
 * - gmp_config_check_names over the pieces: one line per unknown GMEMPROF_*
 *   name (GMEMPROF_TEST_* skipped).
 * - gmp_config_expand_output on every piece (and the loaded output) against
 *   a reference expansion, with small and large buffers and guard bytes.
 * - gmp_config_describe and gmp_sched_describe: snprintf semantics (length
 *   needed, a terminated prefix when short, nothing written past cap), and
 *   the schedule text parses back to the same schedule (schedule.c promises
 *   the round trip).
 * - gmp_sched_parse on every piece and value, with tiny error buffers.
 * - The schedule state machine driven by the input bytes (steps, ticks,
 *   capture on/off, finish) against a reference model of its phases, and the
 *   event bits against the state changes they report.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "clock.h"
#include "config.h"
#include "fuzz_util.h"
#include "schedule.h"

#define GUARD 0xa5
#define DEFAULT_OUTPUT "gmemprof-%h-%p.zst"
#define MAX_PIECES 64
#define MAX_OPS 1024

/* ---- the input as pieces -------------------------------------------------- */

typedef struct env {
    char *buf;                  /* the input, NUL-terminated pieces */
    size_t npieces;
    char *piece[MAX_PIECES];
    const char *name[MAX_PIECES];  /* NULL: piece has no '=' */
    const char *value[MAX_PIECES];
    char names[MAX_PIECES][40];
} env;

/* ---- the reference model of the settings ----------------------------------- */

typedef enum kind { K_BOOL, K_KMODE, K_STEPSRC, K_CLOCK, K_U64, K_INT, K_LOG, K_SCHED, K_OUTPUT, K_NAME, K_PATH } kind;

typedef struct model_setting {
    const char *name;
    kind type;
    uint64_t lo, hi;
} model_setting;

/* The settings, their kinds and ranges as config.c documents them. */
static const model_setting known[] = {
    {"GMEMPROF_ENABLE", K_BOOL, 0, 0},
    {"GMEMPROF_OUTPUT", K_OUTPUT, 0, 0},
    {"GMEMPROF_SCHEDULE", K_SCHED, 0, 0},
    {"GMEMPROF_STEP_MARKER", K_NAME, 0, 0},
    {"GMEMPROF_TAG_PREFIX", K_NAME, 0, 0},
    {"GMEMPROF_SAMPLE_MS", K_U64, 0, 3600000},
    {"GMEMPROF_FLUSH_MS", K_U64, 10, 60000},
    {"GMEMPROF_HOST_BUFFER_MB", K_U64, 4, 4096},
    {"GMEMPROF_CUPTI_BUFFER_KB", K_U64, 32, 65536},
    {"GMEMPROF_DEVICE_BUFFER_KB", K_U64, 64, 65536},
    {"GMEMPROF_KERNELS", K_KMODE, 0, 0},
    {"GMEMPROF_ZSTD_LEVEL", K_INT, 1, 19},
    {"GMEMPROF_LOG", K_LOG, 0, 0},
    {"GMEMPROF_SUMMARY_FILE", K_PATH, 0, 0},
    {"GMEMPROF_TORCH", K_BOOL, 0, 0},
    {"GMEMPROF_TORCH_BRIDGE", K_PATH, 0, 0},
    {"GMEMPROF_TORCH_OPS", K_BOOL, 0, 0},
    {"GMEMPROF_TORCH_MODULES", K_BOOL, 0, 0},
    {"GMEMPROF_TORCH_MODULE_HOOKS", K_BOOL, 0, 0},
    {"GMEMPROF_STACKS", K_NAME, 0, 0},
    {"GMEMPROF_STEP_SOURCE", K_STEPSRC, 0, 0},
    {"GMEMPROF_CLOCK", K_CLOCK, 0, 0},
    {"GMEMPROF_ON_OOM", K_BOOL, 0, 0},
    {"GMEMPROF_OOM_STEPS", K_U64, 1, 10000},
    {"GMEMPROF_OOM_SECONDS", K_U64, 1, 86400},
    {"GMEMPROF_OOM_MAX_MB", K_U64, 8, 65536},
    {"GMEMPROF_OOM_DUMPS", K_U64, 1, 1000},
    {"GMEMPROF_OOM_AT_EXIT", K_BOOL, 0, 0},
    {"GMEMPROF_OOM_SIGNAL", K_BOOL, 0, 0},
};
#define NKNOWN (sizeof known / sizeof known[0])
/* Other names the one-letter keys reach (read by the rank helpers). */
static const char *const extra_names[] = {"RANK", "LOCAL_RANK", "WORLD_SIZE", "GMEMPROF_LIB",
                                          "GMEMPROF_TEST_X", "GMEMPROF_OUTPT", "GMEMPROF_CUPTI_LIB"};
#define NEXTRA (sizeof extra_names / sizeof extra_names[0])

static const char *env_lookup(const env *e, const char *name)
{
    for (size_t i = 0; i < e->npieces; i++)
        if (e->name[i] && strcmp(e->name[i], name) == 0)
            return e->value[i];
    return NULL;
}

static const char *env_get(const char *name, void *ctx)
{
    FZ_CHECK(name != NULL, "gmp_config_load asked for a NULL name");
    return env_lookup(ctx, name);
}

/* The value without blanks around it (C locale isspace), into out. */
static size_t ref_trim(const char *v, char *out, size_t cap)
{
    while (*v && isspace((unsigned char)*v))
        v++;
    size_t n = strlen(v);
    while (n > 0 && isspace((unsigned char)v[n - 1]))
        n--;
    if (n >= cap)
        return (size_t)-1;
    memcpy(out, v, n);
    out[n] = '\0';
    return n;
}

/* A number: digits only after trimming. A trimmed text of 32 bytes or more is
 * refused (config.c's documented buffer), whatever its digits say. */
static int ref_u64(const char *v, uint64_t *out)
{
    char t[32];
    size_t n = ref_trim(v, t, sizeof t);
    if (n == (size_t)-1 || n == 0)
        return -1;
    uint64_t x = 0;
    for (size_t i = 0; i < n; i++) {
        if (t[i] < '0' || t[i] > '9')
            return -1;
        unsigned d = (unsigned)(t[i] - '0');
        if (x > (UINT64_MAX - d) / 10)
            return -1;
        x = x * 10 + d;
    }
    *out = x;
    return 0;
}

/* One of n names, in any case: *out gets the mode beside it. */
static int ref_named(const char *v, const char *const *names, const int *modes, int n, int *out)
{
    char t[16];
    if (ref_trim(v, t, sizeof t) == (size_t)-1)
        return -1;
    for (int i = 0; i < n; i++)
        if (strcasecmp(t, names[i]) == 0)
            return *out = modes[i], 0;
    return -1;
}

/* GMEMPROF_CLOCK: auto, tsc or system, in any case. */
static int ref_clock(const char *v, int *out)
{
    static const char *const names[] = {"auto", "tsc", "system"};
    static const int modes[] = {GMP_CLOCK_AUTO, GMP_CLOCK_TSC, GMP_CLOCK_SYSTEM};
    return ref_named(v, names, modes, 3, out);
}

static int ref_bool(const char *v, int *out);

/* GMEMPROF_KERNELS: a yes/no value (gpu / none), or gpu, launch, none. */
static int ref_kmode(const char *v, int *out)
{
    static const char *const names[] = {"none", "gpu", "launch"};
    static const int modes[] = {GMP_KERNELS_NONE, GMP_KERNELS_GPU, GMP_KERNELS_LAUNCH};
    int b = 0;
    if (ref_bool(v, &b) == 0)
        return *out = b ? GMP_KERNELS_GPU : GMP_KERNELS_NONE, 0;
    return ref_named(v, names, modes, 3, out);
}

/* GMEMPROF_STEP_SOURCE: auto, nvtx, optimizer or none, in any case. */
static int ref_stepsrc(const char *v, int *out)
{
    static const char *const names[] = {"auto", "nvtx", "optimizer", "none"};
    static const int modes[] = {GMP_STEPS_AUTO, GMP_STEPS_NVTX, GMP_STEPS_OPTIMIZER, GMP_STEPS_NONE};
    return ref_named(v, names, modes, 4, out);
}

static int ref_bool(const char *v, int *out)
{
    static const char *const yes[] = {"1", "true", "on", "yes"};
    static const char *const no[] = {"0", "false", "off", "no"};
    char t[16];
    if (ref_trim(v, t, sizeof t) == (size_t)-1)
        return -1;
    for (int i = 0; i < 4; i++) {
        if (strcasecmp(t, yes[i]) == 0)
            return *out = 1, 0;
        if (strcasecmp(t, no[i]) == 0)
            return *out = 0, 0;
    }
    return -1;
}

static int ref_log(const char *v, int *out)
{
    char t[16];
    if (ref_trim(v, t, sizeof t) == (size_t)-1)
        return -1;
    if (strcasecmp(t, "quiet") == 0 || strcmp(t, "0") == 0)
        return *out = GMP_LOG_QUIET, 0;
    if (strcasecmp(t, "info") == 0 || strcmp(t, "1") == 0)
        return *out = GMP_LOG_INFO, 0;
    if (strcasecmp(t, "debug") == 0 || strcmp(t, "2") == 0)
        return *out = GMP_LOG_DEBUG, 0;
    return -1;
}

/* Escapes: %p %h %r %t %%, nothing else. */
static int ref_pattern_ok(const char *v)
{
    for (const char *p = v; *p; p++) {
        if (*p != '%')
            continue;
        if (p[1] == 'p' || p[1] == 'h' || p[1] == 'r' || p[1] == 't' || p[1] == '%')
            p++;
        else
            return 0;
    }
    return 1;
}

static int spec_eq(const gmp_sched_spec *a, const gmp_sched_spec *b)
{
    if (a->kind != b->kind)
        return 0;
    if (a->kind == GMP_SCHED_STEPS)
        return a->skip_first == b->skip_first && a->wait == b->wait && a->warmup == b->warmup &&
               a->active == b->active && a->repeat == b->repeat;
    if (a->kind == GMP_SCHED_TIME)
        return a->delay_ns == b->delay_ns && a->duration_ns == b->duration_ns;
    return 1;
}

/* Expected config and problem count for the environment e. */
typedef struct expect {
    gmp_config cfg;
    int problems;
    int bad[NKNOWN];
} expect;

static void model_load(const env *e, expect *x)
{
    memset(x, 0, sizeof *x);
    gmp_config_defaults(&x->cfg);
    gmp_config *c = &x->cfg;
    int out_bad = 0;
    for (size_t i = 0; i < NKNOWN; i++) {
        const model_setting *s = &known[i];
        const char *v = env_lookup(e, s->name);
        if (!v || !v[0])
            continue;
        int ok = 0, b = 0, lv = 0;
        uint64_t u = 0;
        gmp_sched_spec spec;
        char err[GMP_DIAG_LINE];
        size_t n = strlen(v);
        switch (s->type) {
        case K_BOOL:
            ok = ref_bool(v, &b) == 0;
            if (ok && strcmp(s->name, "GMEMPROF_ENABLE") == 0)
                c->enabled = b;
            else if (ok && strcmp(s->name, "GMEMPROF_TORCH_OPS") == 0)
                c->torch_ops = b;
            else if (ok && strcmp(s->name, "GMEMPROF_TORCH_MODULES") == 0)
                c->torch_modules = b;
            else if (ok && strcmp(s->name, "GMEMPROF_TORCH_MODULE_HOOKS") == 0)
                c->torch_module_hooks = b;
            else if (ok && strcmp(s->name, "GMEMPROF_ON_OOM") == 0)
                c->on_oom = b;
            else if (ok && strcmp(s->name, "GMEMPROF_OOM_AT_EXIT") == 0)
                c->oom_at_exit = b;
            else if (ok && strcmp(s->name, "GMEMPROF_OOM_SIGNAL") == 0)
                c->oom_signal = b;
            else if (ok)
                c->torch = b;
            break;
        case K_STEPSRC:
            ok = ref_stepsrc(v, &lv) == 0;
            if (ok)
                c->step_source = lv;
            break;
        case K_CLOCK:
            ok = ref_clock(v, &lv) == 0;
            if (ok)
                c->clock = lv;
            break;
        case K_KMODE:
            ok = ref_kmode(v, &lv) == 0;
            if (ok)
                c->kernels = lv;
            break;
        case K_U64:
        case K_INT:
            ok = ref_u64(v, &u) == 0 && u >= s->lo && u <= s->hi;
            if (!ok)
                break;
            if (strcmp(s->name, "GMEMPROF_SAMPLE_MS") == 0)
                c->sample_period_ms = u;
            else if (strcmp(s->name, "GMEMPROF_FLUSH_MS") == 0)
                c->flush_period_ms = u;
            else if (strcmp(s->name, "GMEMPROF_HOST_BUFFER_MB") == 0)
                c->host_buffer_mb = u;
            else if (strcmp(s->name, "GMEMPROF_CUPTI_BUFFER_KB") == 0)
                c->cupti_buffer_kb = u;
            else if (strcmp(s->name, "GMEMPROF_DEVICE_BUFFER_KB") == 0)
                c->device_buffer_kb = u;
            else if (strcmp(s->name, "GMEMPROF_OOM_STEPS") == 0)
                c->oom_steps = u;
            else if (strcmp(s->name, "GMEMPROF_OOM_SECONDS") == 0)
                c->oom_seconds = u;
            else if (strcmp(s->name, "GMEMPROF_OOM_MAX_MB") == 0)
                c->oom_max_mb = u;
            else if (strcmp(s->name, "GMEMPROF_OOM_DUMPS") == 0)
                c->oom_dumps = u;
            else
                c->zstd_level = (int)u;
            break;
        case K_LOG:
            ok = ref_log(v, &lv) == 0;
            if (ok)
                c->log = (gmp_log_level)lv;
            break;
        case K_SCHED:
            ok = gmp_sched_parse(v, &spec, err, sizeof err) == 0;
            if (ok)
                c->schedule = spec;
            break;
        case K_OUTPUT: {
            int dir = n > 0 && v[n - 1] == '/';
            ok = n + (dir ? strlen(DEFAULT_OUTPUT) : 0) < GMP_PATH_MAX && ref_pattern_ok(v);
            if (ok)
                snprintf(c->output, sizeof c->output, "%s%s", v, dir ? DEFAULT_OUTPUT : "");
            else
                out_bad = 1;
            break;
        }
        case K_NAME:
            ok = n < GMP_NAME_MAX;
            if (ok && strcmp(s->name, "GMEMPROF_STEP_MARKER") == 0)
                snprintf(c->step_marker, sizeof c->step_marker, "%s", v);
            else if (ok && strcmp(s->name, "GMEMPROF_STACKS") == 0)
                snprintf(c->stacks, sizeof c->stacks, "%s", v);
            else if (ok)
                snprintf(c->tag_prefix, sizeof c->tag_prefix, "%s", v);
            break;
        case K_PATH:
            ok = n < GMP_PATH_MAX;
            if (ok && strcmp(s->name, "GMEMPROF_TORCH_BRIDGE") == 0)
                snprintf(c->torch_bridge, sizeof c->torch_bridge, "%s", v);
            else if (ok)
                snprintf(c->summary_file, sizeof c->summary_file, "%s", v);
            break;
        }
        if (!ok) {
            x->bad[i] = 1;
            x->problems++;
        }
    }
    if (out_bad)
        c->enabled = 0;
    uint64_t most = c->host_buffer_mb * 1024 / 4;
    if (c->cupti_buffer_kb > most) {
        c->cupti_buffer_kb = most;
        x->problems++;
    }
    /* the flight recorder: alone (the whole run) or beside any schedule of
     * windows; kernels only when asked. Alone, nothing collects them
     * unasked; beside windows, the trace keeps its own kernel setting. */
    c->on_oom = c->on_oom || c->schedule.on_oom;
    c->schedule.on_oom = c->on_oom;
    const char *km = env_lookup(e, "GMEMPROF_KERNELS");
    int asked = km && km[0];
    if (c->on_oom && !asked && c->schedule.kind == GMP_SCHED_WHOLE)
        c->kernels = GMP_KERNELS_NONE;
    c->oom_kernels = c->on_oom && asked && c->kernels != GMP_KERNELS_NONE;
}

/* ---- checks ----------------------------------------------------------------- */

/* A problem line goes to the host's stderr after "gmemprof: ": one line,
 * terminated, not empty, no control bytes (a value holding a newline or an
 * escape sequence must not break the line or the terminal). `known` names
 * the finding id under which a control byte is already reported. */
static void check_line_id(const char *line, size_t cap, const char *what, const char *known)
{
    const char *nul = memchr(line, '\0', cap);
    FZ_CHECK(nul != NULL, "%s: line not terminated", what);
    FZ_CHECK(line[0] != '\0', "%s: empty line", what);
    if (fz_known(known))
        return;
    for (const char *p = line; *p; p++)
        FZ_CHECK((unsigned char)*p >= 0x20 && *p != 0x7f,
                 "%s: control byte 0x%02x at %zu in a stderr line: \"%s\"", what, (unsigned char)*p,
                 (size_t)(p - line), line);
}

static void check_line(const char *line, size_t cap, const char *what)
{
    /* Lines about GMEMPROF_SCHEDULE carry gmp_sched_parse's message. */
    check_line_id(line, cap, what, strncmp(line, "GMEMPROF_SCHEDULE", 17) == 0 ? "sched-msg-ctrl" : "");
}

static void check_diag_id(const gmp_diag *d, int count_before, int lost_before, int added, const char *what,
                          const char *known);

static void check_diag(const gmp_diag *d, int count_before, int lost_before, int added, const char *what)
{
    check_diag_id(d, count_before, lost_before, added, what, NULL);
}

/* known: the finding id of a control byte in these lines; NULL: by line. */
static void check_diag_id(const gmp_diag *d, int count_before, int lost_before, int added, const char *what,
                          const char *known)
{
    FZ_CHECK(d->count >= 0 && d->count <= GMP_DIAG_MAX, "%s: diag count %d", what, d->count);
    FZ_CHECK((d->count - count_before) + (d->lost - lost_before) == added,
             "%s: %d problems reported, %d lines kept + %d lost", what, added, d->count - count_before,
             d->lost - lost_before);
    for (int i = count_before; i < d->count; i++) {
        if (known)
            check_line_id(d->line[i], GMP_DIAG_LINE, what, known);
        else
            check_line(d->line[i], GMP_DIAG_LINE, what);
    }
}

static void check_terminated(const char *s, size_t cap, const char *what)
{
    FZ_CHECK(memchr(s, '\0', cap) != NULL, "%s not terminated within %zu bytes", what, cap);
}

static void check_config(const gmp_config *got, const expect *x, const gmp_diag *d, int problems)
{
    const gmp_config *w = &x->cfg;
    FZ_CHECK(problems == x->problems, "gmp_config_load reported %d problems, the model expects %d", problems,
             x->problems);
    check_diag(d, 0, 0, problems, "gmp_config_load");
    check_terminated(got->output, sizeof got->output, "output");
    check_terminated(got->step_marker, sizeof got->step_marker, "step_marker");
    check_terminated(got->tag_prefix, sizeof got->tag_prefix, "tag_prefix");
    check_terminated(got->summary_file, sizeof got->summary_file, "summary_file");
    FZ_CHECK(got->enabled == w->enabled, "enabled %d, expected %d", got->enabled, w->enabled);
    FZ_CHECK(strcmp(got->output, w->output) == 0, "output \"%s\", expected \"%s\"", got->output, w->output);
    FZ_CHECK(spec_eq(&got->schedule, &w->schedule), "schedule kind %d, expected kind %d", got->schedule.kind,
             w->schedule.kind);
    FZ_CHECK(strcmp(got->step_marker, w->step_marker) == 0, "step_marker differs");
    FZ_CHECK(strcmp(got->tag_prefix, w->tag_prefix) == 0, "tag_prefix differs");
    FZ_CHECK(strcmp(got->summary_file, w->summary_file) == 0, "summary_file differs");
    check_terminated(got->torch_bridge, sizeof got->torch_bridge, "torch_bridge");
    FZ_CHECK(strcmp(got->torch_bridge, w->torch_bridge) == 0, "torch_bridge differs");
    FZ_CHECK(got->torch == w->torch, "torch %d, expected %d", got->torch, w->torch);
    FZ_CHECK(got->torch_ops == w->torch_ops, "torch_ops %d, expected %d", got->torch_ops, w->torch_ops);
    FZ_CHECK(got->torch_modules == w->torch_modules, "torch_modules %d, expected %d", got->torch_modules,
             w->torch_modules);
    FZ_CHECK(got->torch_module_hooks == w->torch_module_hooks, "torch_module_hooks %d, expected %d",
             got->torch_module_hooks, w->torch_module_hooks);
    check_terminated(got->stacks, sizeof got->stacks, "stacks");
    FZ_CHECK(strcmp(got->stacks, w->stacks) == 0, "stacks \"%s\", expected \"%s\"", got->stacks, w->stacks);
    FZ_CHECK(got->on_oom == w->on_oom && got->oom_at_exit == w->oom_at_exit && got->oom_signal == w->oom_signal,
             "on_oom %d/%d/%d, expected %d/%d/%d", got->on_oom, got->oom_at_exit, got->oom_signal, w->on_oom,
             w->oom_at_exit, w->oom_signal);
    FZ_CHECK(got->oom_steps == w->oom_steps && got->oom_seconds == w->oom_seconds &&
                 got->oom_max_mb == w->oom_max_mb && got->oom_dumps == w->oom_dumps,
             "oom numbers %llu/%llu/%llu/%llu", (unsigned long long)got->oom_steps,
             (unsigned long long)got->oom_seconds, (unsigned long long)got->oom_max_mb,
             (unsigned long long)got->oom_dumps);
    FZ_CHECK(got->step_source == w->step_source, "step_source %d, expected %d", got->step_source,
             w->step_source);
    FZ_CHECK(got->sample_period_ms == w->sample_period_ms, "sample_ms %llu, expected %llu",
             (unsigned long long)got->sample_period_ms, (unsigned long long)w->sample_period_ms);
    FZ_CHECK(got->flush_period_ms == w->flush_period_ms, "flush_ms %llu, expected %llu",
             (unsigned long long)got->flush_period_ms, (unsigned long long)w->flush_period_ms);
    FZ_CHECK(got->host_buffer_mb == w->host_buffer_mb, "host_buffer_mb %llu, expected %llu",
             (unsigned long long)got->host_buffer_mb, (unsigned long long)w->host_buffer_mb);
    FZ_CHECK(got->cupti_buffer_kb == w->cupti_buffer_kb, "cupti_buffer_kb %llu, expected %llu",
             (unsigned long long)got->cupti_buffer_kb, (unsigned long long)w->cupti_buffer_kb);
    FZ_CHECK(got->device_buffer_kb == w->device_buffer_kb, "device_buffer_kb %llu, expected %llu",
             (unsigned long long)got->device_buffer_kb, (unsigned long long)w->device_buffer_kb);
    FZ_CHECK(got->kernels == w->kernels, "kernels %d, expected %d", got->kernels, w->kernels);
    FZ_CHECK(got->oom_kernels == w->oom_kernels, "oom_kernels %d, expected %d", got->oom_kernels, w->oom_kernels);
    FZ_CHECK(gmp_config_oom_beside(got) == (w->on_oom && w->schedule.kind != GMP_SCHED_WHOLE),
             "oom beside %d with on_oom %d and schedule kind %d", gmp_config_oom_beside(got), w->on_oom,
             w->schedule.kind);
    FZ_CHECK(got->zstd_level == w->zstd_level, "zstd_level %d, expected %d", got->zstd_level, w->zstd_level);
    FZ_CHECK(got->log == w->log, "log %d, expected %d", (int)got->log, (int)w->log);
    /* Invariants whatever the model says. */
    FZ_CHECK(got->zstd_level >= 1 && got->zstd_level <= 19, "zstd_level %d", got->zstd_level);
    FZ_CHECK(got->cupti_buffer_kb * 4 <= got->host_buffer_mb * 1024, "CUPTI buffers do not fit the host budget");
    /* Each bad setting is named by a line (when the lines all fit). */
    if (problems <= GMP_DIAG_MAX) {
        for (size_t i = 0; i < NKNOWN; i++) {
            if (!x->bad[i])
                continue;
            int named = 0;
            for (int k = 0; k < d->count && !named; k++)
                named = strstr(d->line[k], known[i].name) != NULL;
            FZ_CHECK(named, "no line names the bad %s", known[i].name);
        }
    }
}

/* snprintf semantics of a describe function: the needed length, a terminated
 * prefix when short, nothing past cap. */
typedef size_t (*describe_fn)(const void *obj, char *out, size_t cap);

static size_t describe_cfg(const void *o, char *out, size_t cap) { return gmp_config_describe(o, out, cap); }
static size_t describe_sched(const void *o, char *out, size_t cap) { return gmp_sched_describe(o, out, cap); }

static void check_describe(describe_fn f, const void *obj, size_t small, const char *what, char *full, size_t fullcap)
{
    size_t need = f(obj, full, fullcap);
    FZ_CHECK(need < fullcap, "%s needs %zu bytes, more than %zu", what, need, fullcap);
    FZ_CHECK(strlen(full) == need, "%s returned %zu, wrote %zu", what, need, strlen(full));
    static char buf[256 + 16]; /* static: a malloc per call costs more than the check */
    FZ_CHECK(small <= 256, "cap %zu", small);
    memset(buf, GUARD, small + 16);
    size_t again = f(obj, buf, small);
    FZ_CHECK(again == need, "%s with cap %zu returned %zu, with room %zu", what, small, again, need);
    for (size_t i = small; i < small + 16; i++)
        FZ_CHECK((uint8_t)buf[i] == GUARD, "%s wrote past cap %zu", what, small);
    if (small > 0) {
        size_t k = need < small ? need : small - 1;
        FZ_CHECK(buf[k] == '\0' && memcmp(buf, full, k) == 0, "%s with cap %zu is not a prefix", what, small);
    }
}

/* Reference expansion of an output pattern; -1 when it does not fit. */
static int ref_expand(const char *pat, char *out, size_t cap, long pid, const char *host, long rank, uint64_t t_ns)
{
    size_t n = 0;
    if (!host || !host[0])
        host = "unknown-host";
    for (const char *p = pat; *p; p++) {
        char piece[64];
        const char *add = piece;
        if (*p != '%') {
            piece[0] = *p;
            piece[1] = '\0';
        } else {
            p++;
            if (*p == 'p') {
                snprintf(piece, sizeof piece, "%ld", pid);
            } else if (*p == 'h') {
                add = host;
            } else if (*p == 'r') {
                if (rank >= 0) /* no rank: "p" and the pid (profiler/config.c) */
                    snprintf(piece, sizeof piece, "%ld", rank);
                else
                    snprintf(piece, sizeof piece, "p%ld", pid);
            } else if (*p == 't') {
                time_t t = (time_t)(t_ns / 1000000000ull);
                struct tm tm;
                if (!gmtime_r(&t, &tm) || strftime(piece, sizeof piece, "%Y%m%d-%H%M%S", &tm) == 0)
                    snprintf(piece, sizeof piece, "%llu", (unsigned long long)t);
            } else {
                piece[0] = '%';
                piece[1] = '\0';
            }
        }
        size_t len = strlen(add);
        if (n + len >= cap)
            return -1;
        memcpy(out + n, add, len);
        n += len;
    }
    out[n] = '\0';
    return 0;
}

static void check_expand(const char *pat, uint64_t h, const char *host)
{
    static const size_t caps[] = {1, 2, 8, 24, 64, 300, GMP_PATH_MAX};
    size_t cap = caps[h % (sizeof caps / sizeof caps[0])];
    long pid = (h >> 8) & 1 ? (long)((h >> 16) & 0x3fffff) : -(long)((h >> 16) & 0xff);
    long rank = (long)((h >> 40) & 0xffff) - 16;
    uint64_t t = (h >> 3) % 4 == 0 ? UINT64_MAX - (h & 0xffff) : (h * 2654435761ull) % (4102444800ull * 1000000000ull);
    static char out[GMP_PATH_MAX + 16], ref[GMP_PATH_MAX + 16];
    memset(out, GUARD, cap + 16);
    gmp_diag d;
    memset(&d, 0, sizeof d);
    int rc = gmp_config_expand_output(pat, out, cap, pid, host, rank, t, &d);
    for (size_t i = cap; i < cap + 16; i++)
        FZ_CHECK((uint8_t)out[i] == GUARD, "gmp_config_expand_output wrote past cap %zu", cap);
    int want = ref_pattern_ok(pat) ? ref_expand(pat, ref, cap, pid, host, rank, t) : -1;
    FZ_CHECK(rc == want, "gmp_config_expand_output returned %d, the model %d (cap %zu)", rc, want, cap);
    if (rc == 0) {
        FZ_CHECK(strcmp(out, ref) == 0, "expanded to \"%s\", expected \"%s\"", out, ref);
        check_diag(&d, 0, 0, 0, "gmp_config_expand_output");
    } else {
        check_diag(&d, 0, 0, 1, "gmp_config_expand_output");
        FZ_CHECK(memchr(out, '\0', cap) != NULL, "failed expansion left out unterminated");
    }
}

/* ---- the schedule ----------------------------------------------------------- */

static void check_spec_valid(const gmp_sched_spec *s, const char *text)
{
    FZ_CHECK(s->kind >= GMP_SCHED_WHOLE && s->kind <= GMP_SCHED_CAPTURE, "kind %d from '%s'", s->kind, text);
    if (s->kind == GMP_SCHED_STEPS)
        FZ_CHECK(s->active >= 1, "a STEPS schedule with active=0 from '%s'", text);
}

static void check_sched_parse(const char *text, uint64_t h)
{
    char err[GMP_DIAG_LINE + 16];
    gmp_sched_spec spec;
    memset(err, GUARD, sizeof err);
    int rc = gmp_sched_parse(text, &spec, err, GMP_DIAG_LINE);
    FZ_CHECK(rc == 0 || rc == -1, "gmp_sched_parse returned %d", rc);
    for (size_t i = GMP_DIAG_LINE; i < sizeof err; i++)
        FZ_CHECK((uint8_t)err[i] == GUARD, "gmp_sched_parse wrote past errcap");
    if (rc == 0) {
        check_spec_valid(&spec, text);
        char desc[256];
        check_describe(describe_sched, &spec, (size_t)(h % 48), "gmp_sched_describe", desc, sizeof desc);
        gmp_sched_spec back;
        char err2[GMP_DIAG_LINE];
        FZ_CHECK(gmp_sched_parse(desc, &back, err2, sizeof err2) == 0, "'%s' describes as '%s', which does not "
                 "parse: %s", text, desc, err2);
        FZ_CHECK(spec_eq(&spec, &back), "'%s' -> '%s' parses back to another schedule", text, desc);
    } else {
        check_line_id(err, GMP_DIAG_LINE, "gmp_sched_parse error", "sched-msg-ctrl");
        /* A tiny error buffer is filled with a terminated prefix, no more. */
        size_t small = (size_t)(h % 9);
        memset(err, GUARD, sizeof err);
        FZ_CHECK(gmp_sched_parse(text, &spec, err, small) == -1, "gmp_sched_parse changed its mind");
        for (size_t i = small; i < sizeof err; i++)
            FZ_CHECK((uint8_t)err[i] == GUARD, "gmp_sched_parse wrote past errcap %zu", small);
        if (small)
            check_terminated(err, small, "gmp_sched_parse error with a small buffer");
    }
}

static int collects(gmt_phase p) { return p == GMT_PHASE_WARMUP || p == GMT_PHASE_ACTIVE; }

/* The phase of a step under STEPS, from the rules at the top of schedule.c. */
static gmt_phase ref_steps_phase(const gmp_sched_spec *sp, uint64_t step, uint64_t *cycle)
{
    *cycle = UINT64_MAX;
    if (step < sp->skip_first)
        return GMT_PHASE_NONE;
    uint64_t rel = step - sp->skip_first, len = sp->wait + sp->warmup + sp->active;
    if (len == 0)
        return GMT_PHASE_DONE;
    uint64_t c = rel / len, pos = rel % len;
    if (sp->repeat > 0 && c >= sp->repeat)
        return GMT_PHASE_DONE;
    *cycle = c;
    return pos < sp->wait ? GMT_PHASE_WAIT : pos < sp->wait + sp->warmup ? GMT_PHASE_WARMUP : GMT_PHASE_ACTIVE;
}

static gmt_phase ref_time_phase(const gmp_sched_spec *sp, uint64_t elapsed)
{
    if (elapsed < sp->delay_ns)
        return GMT_PHASE_WAIT;
    if (sp->duration_ns == 0 || elapsed - sp->delay_ns < sp->duration_ns)
        return GMT_PHASE_ACTIVE;
    return GMT_PHASE_DONE;
}

static void check_event(const gmp_sched *s, gmt_phase op, int owin, uint64_t ow, unsigned ev, const char *what)
{
    FZ_CHECK((ev & ~0x1fu) == 0, "%s: unknown event bits 0x%x", what, ev);
    FZ_CHECK(s->phase < GMT_PHASE_COUNT_, "%s: phase %d", what, (int)s->phase);
    FZ_CHECK(!!(ev & GMP_SCHED_EV_PHASE) == (s->phase != op), "%s: PHASE bit %d, phase %d -> %d", what,
             !!(ev & GMP_SCHED_EV_PHASE), (int)op, (int)s->phase);
    FZ_CHECK(!!(ev & GMP_SCHED_EV_COLLECT_BEGIN) == (!collects(op) && collects(s->phase)),
             "%s: COLLECT_BEGIN bit wrong, phase %d -> %d", what, (int)op, (int)s->phase);
    FZ_CHECK(!!(ev & GMP_SCHED_EV_COLLECT_END) == (collects(op) && !collects(s->phase)),
             "%s: COLLECT_END bit wrong, phase %d -> %d", what, (int)op, (int)s->phase);
    FZ_CHECK(gmp_sched_collects(s) == collects(s->phase), "%s: gmp_sched_collects disagrees with phase", what);
    FZ_CHECK(!!s->in_window == (s->phase == GMT_PHASE_ACTIVE), "%s: in_window %d in phase %d", what, s->in_window,
             (int)s->phase);
    if (ev & GMP_SCHED_EV_WINDOW_END)
        FZ_CHECK(owin, "%s: WINDOW_END with no window open", what);
    if (ev & GMP_SCHED_EV_WINDOW_BEGIN)
        FZ_CHECK(s->window == ow + 1 && s->in_window, "%s: WINDOW_BEGIN but window %llu -> %llu", what,
                 (unsigned long long)ow, (unsigned long long)s->window);
    else
        FZ_CHECK(s->window == ow, "%s: window count moved without WINDOW_BEGIN", what);
    if (owin && !s->in_window)
        FZ_CHECK(ev & GMP_SCHED_EV_WINDOW_END, "%s: window closed without WINDOW_END", what);
    if (owin && s->in_window && (ev & GMP_SCHED_EV_WINDOW_BEGIN))
        FZ_CHECK(ev & GMP_SCHED_EV_WINDOW_END, "%s: a new window opened over an open one", what);
}

static void run_machine(const gmp_sched_spec *spec, const uint8_t *ops, size_t nops)
{
    gmp_sched s;
    uint64_t now = 1000, start = now, scale = 1;
    int finished = 0, captured = 0;
    if (spec->kind == GMP_SCHED_TIME)
        scale = (spec->delay_ns + spec->duration_ns) / 48 + 1;
    unsigned ev = gmp_sched_init(&s, spec, now);
    check_event(&s, GMT_PHASE_NONE, 0, 0, ev, "init");
    FZ_CHECK(s.step == 0, "init at step %llu", (unsigned long long)s.step);
    for (size_t i = 0; i <= nops; i++) {
        /* The reference phase of the state reached so far. */
        uint64_t cyc;
        gmt_phase want = s.phase;
        if (finished)
            want = GMT_PHASE_DONE;
        else if (s.spec.kind == GMP_SCHED_STEPS)
            want = ref_steps_phase(&s.spec, s.step, &cyc);
        else if (s.spec.kind == GMP_SCHED_TIME && s.phase != GMT_PHASE_DONE)
            want = ref_time_phase(&s.spec, now - start);
        else if (s.spec.kind == GMP_SCHED_CAPTURE)
            want = captured ? GMT_PHASE_ACTIVE : GMT_PHASE_WAIT;
        else if (s.spec.kind == GMP_SCHED_WHOLE)
            want = GMT_PHASE_ACTIVE;
        /* STEPS: once DONE the machine stays DONE even if steps continue. */
        FZ_CHECK(s.phase == want, "step %llu (op %zu): phase %d, reference %d", (unsigned long long)s.step, i,
                 (int)s.phase, (int)want);
        if (i == nops)
            break;
        gmt_phase op = s.phase;
        int owin = s.in_window;
        uint64_t ow = s.window, ostep = s.step;
        uint8_t b = ops[i];
        const char *what = "step";
        switch (b & 3) {
        case 0:
        case 3:
            if ((b >> 2) == 63) {
                what = "finish";
                ev = gmp_sched_finish(&s);
                finished = 1;
                FZ_CHECK(s.phase == GMT_PHASE_DONE && !s.in_window, "finish left phase %d", (int)s.phase);
            } else {
                ev = gmp_sched_step(&s);
                FZ_CHECK(s.step == ostep + 1, "step did not count");
            }
            break;
        case 1:
            what = "tick";
            now += (uint64_t)(b >> 2) * scale;
            ev = gmp_sched_tick(&s, now);
            if (s.spec.kind != GMP_SCHED_TIME)
                FZ_CHECK(ev == 0 && s.phase == op, "tick changed a non-TIME schedule");
            break;
        default:
            what = "capture";
            ev = gmp_sched_capture(&s, (b >> 2) & 1);
            if (s.spec.kind == GMP_SCHED_CAPTURE && !finished)
                captured = (b >> 2) & 1;
            if (s.spec.kind != GMP_SCHED_CAPTURE)
                FZ_CHECK(ev == 0 && s.phase == op, "capture changed a non-CAPTURE schedule");
            break;
        }
        check_event(&s, op, owin, ow, ev, what);
        if (op == GMT_PHASE_DONE)
            FZ_CHECK(ev == 0 && s.phase == GMT_PHASE_DONE, "%s after DONE returned 0x%x", what, ev);
        if (s.spec.kind == GMP_SCHED_STEPS && !finished && ev == 0 && (b & 3) != 1 && (b & 3) != 2) {
            /* No event: the step stayed in the same phase and cycle (or DONE). */
            uint64_t c0, c1;
            gmt_phase p0 = ref_steps_phase(&s.spec, ostep, &c0), p1 = ref_steps_phase(&s.spec, s.step, &c1);
            FZ_CHECK(p0 == p1 && (c0 == c1 || p1 != GMT_PHASE_ACTIVE || op == GMT_PHASE_DONE),
                     "step %llu -> %llu crossed a cycle with no event", (unsigned long long)ostep,
                     (unsigned long long)s.step);
        }
        if (s.spec.kind == GMP_SCHED_STEPS && !finished && op == GMT_PHASE_ACTIVE && s.phase == GMT_PHASE_ACTIVE) {
            /* Two ACTIVE steps of different cycles are two windows. */
            uint64_t c0, c1;
            ref_steps_phase(&s.spec, ostep, &c0);
            ref_steps_phase(&s.spec, s.step, &c1);
            if (c0 != c1)
                FZ_CHECK((ev & GMP_SCHED_EV_WINDOW_END) && (ev & GMP_SCHED_EV_WINDOW_BEGIN),
                         "cycles %llu and %llu back to back share a window", (unsigned long long)c0,
                         (unsigned long long)c1);
        }
    }
    ev = gmp_sched_finish(&s);
    FZ_CHECK(s.phase == GMT_PHASE_DONE && !s.in_window, "final finish left phase %d", (int)s.phase);
    FZ_CHECK(gmp_sched_finish(&s) == 0, "a second finish reported events");
}

/* ---- the rest of config.h ----------------------------------------------------- */

static void check_markers(const gmp_config *cfg, const char *name)
{
    size_t n = strlen(cfg->step_marker);
    int want = 0;
    if (n > 0 && strncmp(name, cfg->step_marker, n) == 0) {
        char c = name[n];
        want = c == '\0' || c == ' ' || c == ':' || c == '#' || c == '_' || c == '-' || (c >= '0' && c <= '9');
    }
    FZ_CHECK(gmp_config_is_step_marker(cfg, name) == want, "is_step_marker('%s') with marker '%s' is not %d", name,
             cfg->step_marker, want);
    const char *tag = NULL;
    int is_tag = gmp_config_tag_name(cfg, name, &tag);
    size_t pn = strlen(cfg->tag_prefix);
    int want_tag = 0;
    const char *want_t = NULL;
    if (pn > 0 && strncmp(name, cfg->tag_prefix, pn) == 0) {
        want_t = name + pn;
        while (*want_t == ' ' || *want_t == '\t')
            want_t++;
        want_tag = *want_t != '\0';
    }
    FZ_CHECK(is_tag == want_tag, "tag_name('%s') with prefix '%s' is %d", name, cfg->tag_prefix, is_tag);
    if (is_tag)
        FZ_CHECK(tag == want_t, "tag_name points at the wrong place");
}

static void check_names(const env *e)
{
    char *envp[MAX_PIECES + 1];
    size_t n = 0;
    int want = 0;
    for (size_t i = 0; i < e->npieces; i++) {
        const char *p = e->piece[i];
        envp[n++] = e->piece[i];
        const char *eq = strchr(p, '=');
        size_t len = eq ? (size_t)(eq - p) : strlen(p);
        if (strncmp(p, "GMEMPROF_", 9) != 0 || len >= 96 || strncmp(p, "GMEMPROF_TEST_", 14) == 0)
            continue;
        int k = 0;
        for (size_t j = 0; j < NKNOWN && !k; j++)
            k = strlen(known[j].name) == len && strncmp(known[j].name, p, len) == 0;
        /* read elsewhere (the launcher, the CUPTI loader), known all the same */
        k = k || (len == 12 && strncmp(p, "GMEMPROF_LIB", 12) == 0) ||
            (len == 18 && strncmp(p, "GMEMPROF_CUPTI_LIB", 18) == 0);
        want += !k;
    }
    envp[n] = NULL;
    gmp_diag d;
    memset(&d, 0, sizeof d);
    int got = gmp_config_check_names(envp, &d);
    FZ_CHECK(got == want, "gmp_config_check_names found %d unknown names, the model %d", got, want);
    check_diag_id(&d, 0, 0, got, "gmp_config_check_names", "names-msg-ctrl");
}

static void check_value_fn(const env *e)
{
    for (size_t i = 0; i < e->npieces; i++) {
        if (!e->name[i])
            continue;
        char err[GMP_DIAG_LINE];
        int rc = gmp_config_check_value(e->name[i], e->value[i], err, sizeof err);
        size_t k;
        for (k = 0; k < NKNOWN; k++)
            if (strcmp(known[k].name, e->name[i]) == 0)
                break;
        if (k == NKNOWN) {
            FZ_CHECK(rc == -1, "check_value accepted the unknown name %s", e->name[i]);
        } else {
            /* One-variable environment through the model. */
            env one;
            memset(&one, 0, sizeof one);
            one.npieces = 1;
            one.name[0] = e->name[i];
            one.value[0] = e->value[i];
            expect y;
            model_load(&one, &y);
            FZ_CHECK(rc == (y.bad[k] ? -1 : 0), "check_value(%s) says %d, the model %s", e->name[i], rc,
                     y.bad[k] ? "bad" : "good");
            /* Only for settings: an unknown name comes from the caller's code. */
            if (rc != 0)
                check_line(err, sizeof err, "gmp_config_check_value");
        }
    }
}

static void check_env_int(const env *e)
{
    static const char *const names[] = {"RANK", "LOCAL_RANK", "WORLD_SIZE"};
    long v[3];
    for (int i = 0; i < 3; i++) {
        v[i] = gmp_config_env_int(env_get, (void *)e, names[i]);
        const char *s = env_lookup(e, names[i]);
        uint64_t u;
        long want = s && s[0] && ref_u64(s, &u) == 0 && u <= 0x7fffffffull ? (long)u : -1;
        FZ_CHECK(v[i] == want, "env_int(%s) = %ld, expected %ld", names[i], v[i], want);
    }
    long r = gmp_config_rank(env_get, (void *)e);
    FZ_CHECK(r == (v[0] >= 0 ? v[0] : v[1] >= 0 ? v[1] : -1), "gmp_config_rank %ld", r);
}

/* ---- the entry point ---------------------------------------------------------- */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static env e;
    uint64_t h = fz_hash_bytes(FZ_FNV_INIT, data, size);
    memset(&e, 0, sizeof e);
    e.buf = malloc(size + 1);
    FZ_CHECK(e.buf != NULL, "out of memory");
    memcpy(e.buf, data, size);
    e.buf[size] = '\0';
    for (size_t off = 0; off <= size && e.npieces < MAX_PIECES;) {
        char *p = e.buf + off;
        size_t n = strlen(p);
        size_t i = e.npieces++;
        e.piece[i] = p;
        char *eq = strchr(p, '=');
        if (eq) {
            size_t kl = (size_t)(eq - p);
            if (kl == 1 && p[0] >= 'a' && (size_t)(p[0] - 'a') < NKNOWN + NEXTRA) {
                size_t k = (size_t)(p[0] - 'a');
                snprintf(e.names[i], sizeof e.names[i], "%s", k < NKNOWN ? known[k].name : extra_names[k - NKNOWN]);
                e.name[i] = e.names[i];
            } else if (kl < sizeof e.names[i]) {
                memcpy(e.names[i], p, kl);
                e.names[i][kl] = '\0';
                e.name[i] = e.names[i];
            }
            e.value[i] = eq + 1;
        }
        off += n + 1;
    }

    /* The settings against the model. */
    gmp_config cfg;
    gmp_diag d;
    expect x;
    memset(&d, 0, sizeof d);
    int problems = gmp_config_load(&cfg, env_get, &e, &d);
    model_load(&e, &x);
    check_config(&cfg, &x, &d, problems);
    char desc[GMP_PATH_MAX * 3];
    check_describe(describe_cfg, &cfg, (size_t)(h % 200), "gmp_config_describe", desc, sizeof desc);
    check_value_fn(&e);
    check_names(&e);
    check_env_int(&e);

    /* Every piece (and value) through the parsers and the expansion. */
    const char *host = e.npieces > 1 ? e.piece[e.npieces - 1] : NULL;
    for (size_t i = 0; i < e.npieces; i++) {
        uint64_t hi = fz_hash_u64(h, i);
        check_sched_parse(e.piece[i], hi);
        check_expand(e.piece[i], hi, host);
        check_markers(&cfg, e.piece[i]);
        if (e.value[i]) {
            check_sched_parse(e.value[i], hi >> 7);
            check_expand(e.value[i], hi >> 5, e.piece[0]);
        }
    }
    check_expand(cfg.output, h >> 11, "node-1");

    /* The state machine: the loaded schedule, driven by the input bytes. */
    run_machine(&cfg.schedule, data, size < MAX_OPS ? size : MAX_OPS);
    free(e.buf);
    return 0;
}
