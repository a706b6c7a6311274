/*
 * GMEMPROF_* settings (see config.h). Pure logic: the environment is read
 * through a getenv-like function, nothing is printed, problems become lines
 * in a gmp_diag.
 *
 * Parsing rules, the same for every setting:
 * - An unset or empty variable means the default, silently.
 * - Numbers: decimal digits only (blanks around them are ignored), checked
 *   against the setting's range. Booleans: 1/0, true/false, on/off, yes/no
 *   in any case. GMEMPROF_LOG: quiet, info, debug (or 0, 1, 2), any case.
 * - Text settings (output, step marker, tag prefix, summary file) are taken
 *   byte for byte: no trimming, since blanks may be meant.
 * - A bad value gives exactly one line: the variable, the value, what is
 *   accepted, and what the profiler does instead (the default; for
 *   GMEMPROF_OUTPUT: the profiler is off for this run).
 */
#include "config.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#define GMP_DEFAULT_OUTPUT "gmemprof-%h-%p.zst"

/* ---- diagnostics ------------------------------------------------------------ */

void gmp_diag_add(gmp_diag *d, const char *fmt, ...)
{
    va_list ap;
    if (!d)
        return;
    if (d->count >= GMP_DIAG_MAX) {
        d->lost++;
        return;
    }
    va_start(ap, fmt);
    vsnprintf(d->line[d->count], GMP_DIAG_LINE, fmt, ap);
    va_end(ap);
    /* Last line of defence for the one-line rule: no control byte survives. */
    for (char *p = d->line[d->count]; *p; p++)
        if ((unsigned char)*p < 0x20 || *p == 0x7f)
            *p = '?';
    d->count++;
}

/* Quotes a user value for a message: at most 48 bytes, control and non-ASCII
 * bytes as \xNN, "..." when shortened, so one bad byte cannot break the line. */
#define GMP_QUOTE_MAX (48 * 4 + 8)
static const char *quote(const char *v, char *buf, size_t cap)
{
    size_t n = 0, i;
    for (i = 0; v[i] && i < 48 && n + 8 < cap; i++) {
        unsigned char c = (unsigned char)v[i];
        if (c < 0x20 || c >= 0x7f || c == '\'' || c == '\\')
            n += (size_t)snprintf(buf + n, cap - n, "\\x%02x", c);
        else
            buf[n++] = (char)c;
    }
    if (v[i] && n + 4 <= cap) {
        memcpy(buf + n, "...", 3);
        n += 3;
    }
    buf[n] = '\0';
    return buf;
}

/* ---- the settings --------------------------------------------------------- */

typedef enum setting_type { T_BOOL, T_KMODE, T_STEPSRC, T_CLOCK, T_U64, T_INT, T_LOG, T_SCHED, T_OUTPUT, T_NAME, T_PATH } setting_type;

typedef struct setting {
    const char *name;
    setting_type type;
    size_t off;        /* offset of the field in gmp_config */
    uint64_t lo, hi;   /* T_U64, T_INT */
    const char *what;  /* T_U64, T_INT: "a number of milliseconds" */
    const char *hint;  /* appended to the accepted range, or NULL */
} setting;

#define OFF(f) offsetof(gmp_config, f)

static const setting settings[] = {
    {"GMEMPROF_ENABLE", T_BOOL, OFF(enabled), 0, 0, NULL, NULL},
    {"GMEMPROF_OUTPUT", T_OUTPUT, OFF(output), 0, 0, NULL, NULL},
    {"GMEMPROF_SCHEDULE", T_SCHED, OFF(schedule), 0, 0, NULL, NULL},
    {"GMEMPROF_STEP_MARKER", T_NAME, OFF(step_marker), 0, 0, NULL, NULL},
    {"GMEMPROF_TAG_PREFIX", T_NAME, OFF(tag_prefix), 0, 0, NULL, NULL},
    {"GMEMPROF_SAMPLE_MS", T_U64, OFF(sample_period_ms), 0, 3600000, "a number of milliseconds",
     "0 turns sampling off"},
    {"GMEMPROF_FLUSH_MS", T_U64, OFF(flush_period_ms), 10, 60000, "a number of milliseconds", NULL},
    {"GMEMPROF_HOST_BUFFER_MB", T_U64, OFF(host_buffer_mb), 4, 4096, "a number of MiB", NULL},
    {"GMEMPROF_CUPTI_BUFFER_KB", T_U64, OFF(cupti_buffer_kb), 32, 65536, "a number of KiB", NULL},
    {"GMEMPROF_DEVICE_BUFFER_KB", T_U64, OFF(device_buffer_kb), 64, 65536, "a number of KiB", NULL},
    {"GMEMPROF_KERNELS", T_KMODE, OFF(kernels), 0, 0, NULL, NULL},
    {"GMEMPROF_ZSTD_LEVEL", T_INT, OFF(zstd_level), 1, 19, "a zstd compression level", NULL},
    {"GMEMPROF_LOG", T_LOG, OFF(log), 0, 0, NULL, NULL},
    {"GMEMPROF_SUMMARY_FILE", T_PATH, OFF(summary_file), 0, 0, NULL, NULL},
    {"GMEMPROF_TORCH", T_BOOL, OFF(torch), 0, 0, NULL, NULL},
    {"GMEMPROF_TORCH_BRIDGE", T_PATH, OFF(torch_bridge), 0, 0, NULL, NULL},
    {"GMEMPROF_TORCH_OPS", T_BOOL, OFF(torch_ops), 0, 0, NULL, NULL},
    {"GMEMPROF_TORCH_MODULES", T_BOOL, OFF(torch_modules), 0, 0, NULL, NULL},
    {"GMEMPROF_TORCH_MODULE_HOOKS", T_BOOL, OFF(torch_module_hooks), 0, 0, NULL, NULL},
    {"GMEMPROF_STACKS", T_NAME, OFF(stacks), 0, 0, NULL, NULL},
    {"GMEMPROF_STEP_SOURCE", T_STEPSRC, OFF(step_source), 0, 0, NULL, NULL},
    {"GMEMPROF_CLOCK", T_CLOCK, OFF(clock), 0, 0, NULL, NULL},
    {"GMEMPROF_ON_OOM", T_BOOL, OFF(on_oom), 0, 0, NULL, NULL},
    {"GMEMPROF_OOM_STEPS", T_U64, OFF(oom_steps), 1, 10000, "a number of steps", NULL},
    {"GMEMPROF_OOM_SECONDS", T_U64, OFF(oom_seconds), 1, 86400, "a number of seconds", NULL},
    {"GMEMPROF_OOM_MAX_MB", T_U64, OFF(oom_max_mb), 8, 65536, "a number of MiB", NULL},
    {"GMEMPROF_OOM_DUMPS", T_U64, OFF(oom_dumps), 1, 1000, "a number of dumps", NULL},
    {"GMEMPROF_OOM_AT_EXIT", T_BOOL, OFF(oom_at_exit), 0, 0, NULL, NULL},
    {"GMEMPROF_OOM_SIGNAL", T_BOOL, OFF(oom_signal), 0, 0, NULL, NULL},
};
#define NSETTINGS (sizeof settings / sizeof settings[0])

/* Read by other parts (the launcher, the CUPTI loader), not by gmp_config_load. */
static const char *const other_names[] = {"GMEMPROF_LIB", "GMEMPROF_CUPTI_LIB"};

void gmp_config_defaults(gmp_config *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->enabled = 1;
    snprintf(cfg->output, sizeof cfg->output, "%s", GMP_DEFAULT_OUTPUT);
    cfg->schedule.kind = GMP_SCHED_WHOLE;
    snprintf(cfg->step_marker, sizeof cfg->step_marker, "step");
    snprintf(cfg->tag_prefix, sizeof cfg->tag_prefix, "tag:");
    cfg->sample_period_ms = 100;
    cfg->flush_period_ms = 1000;
    cfg->host_buffer_mb = 64;
    cfg->cupti_buffer_kb = 1024;
    cfg->device_buffer_kb = 1024;
    /* launch: kernels from their launch calls, the same memory attribution
     * as gpu mode at a third to a fifth of its cost per launch
     * (docs/benchmarks.md, measured on the H200);
     * GPU times are one setting away (GMEMPROF_KERNELS=gpu) */
    cfg->kernels = GMP_KERNELS_LAUNCH;
    cfg->zstd_level = 3;
    cfg->log = GMP_LOG_INFO;
    cfg->summary_file[0] = '\0';
    cfg->torch = 1;
    cfg->torch_ops = 1;
    cfg->torch_modules = 1;
    cfg->torch_module_hooks = 0;
    snprintf(cfg->stacks, sizeof cfg->stacks, "none");
    cfg->step_source = GMP_STEPS_AUTO;
    cfg->on_oom = 0;
    cfg->oom_steps = 3;
    cfg->oom_seconds = 30;
    cfg->oom_max_mb = 256;
    cfg->oom_dumps = 3;
    cfg->oom_at_exit = 0;
    cfg->oom_signal = 0;
    cfg->oom_kernels = 0;
}

static const char *log_name(gmp_log_level l)
{
    return l == GMP_LOG_QUIET ? "quiet" : l == GMP_LOG_DEBUG ? "debug" : "info";
}

/* Blanks around a number or keyword are ignored: copies the trimmed value.
 * Returns -1 when it does not fit (then it cannot be a valid value). */
static int trimmed(const char *v, char *out, size_t cap)
{
    while (isspace((unsigned char)*v))
        v++;
    size_t n = strlen(v);
    while (n > 0 && isspace((unsigned char)v[n - 1]))
        n--;
    if (n >= cap)
        return -1;
    memcpy(out, v, n);
    out[n] = '\0';
    return 0;
}

/* 0: ok; -1: not a number; -2: a number too large for 64 bits. */
static int parse_u64(const char *v, uint64_t *out)
{
    char t[32];
    uint64_t x = 0;
    if (trimmed(v, t, sizeof t) != 0) {
        /* Too long for any 64-bit number: still say "out of range" if all digits. */
        const char *p = v;
        while (isspace((unsigned char)*p))
            p++;
        if (!isdigit((unsigned char)*p))
            return -1;
        while (isdigit((unsigned char)*p))
            p++;
        while (isspace((unsigned char)*p))
            p++;
        return *p ? -1 : -2;
    }
    if (!t[0])
        return -1;
    for (const char *p = t; *p; p++) {
        if (!isdigit((unsigned char)*p))
            return -1;
        unsigned d = (unsigned)(*p - '0');
        if (x > (UINT64_MAX - d) / 10)
            return -2;
        x = x * 10 + d;
    }
    *out = x;
    return 0;
}

static int parse_bool(const char *v, int *out)
{
    static const char *const yes[] = {"1", "true", "on", "yes"};
    static const char *const no[] = {"0", "false", "off", "no"};
    char t[16];
    if (trimmed(v, t, sizeof t) != 0)
        return -1;
    for (size_t i = 0; i < 4; i++) {
        if (strcasecmp(t, yes[i]) == 0) {
            *out = 1;
            return 0;
        }
        if (strcasecmp(t, no[i]) == 0) {
            *out = 0;
            return 0;
        }
    }
    return -1;
}

/* GMEMPROF_KERNELS: a yes/no value (yes keeps its old meaning, GPU
 * activity), or the mode by name. */
static int parse_kmode(const char *v, int *out)
{
    char t[16];
    int b = 0;
    if (parse_bool(v, &b) == 0) {
        *out = b ? GMP_KERNELS_GPU : GMP_KERNELS_NONE;
        return 0;
    }
    if (trimmed(v, t, sizeof t) != 0)
        return -1;
    if (strcasecmp(t, "gpu") == 0)
        *out = GMP_KERNELS_GPU;
    else if (strcasecmp(t, "launch") == 0)
        *out = GMP_KERNELS_LAUNCH;
    else if (strcasecmp(t, "none") == 0)
        *out = GMP_KERNELS_NONE;
    else
        return -1;
    return 0;
}

static const char *kmode_name(int m)
{
    return m == GMP_KERNELS_LAUNCH ? "launch" : m == GMP_KERNELS_NONE ? "none" : "gpu";
}

static const char *const stepsrc_names[] = {"auto", "nvtx", "optimizer", "none"};

/* GMEMPROF_CLOCK: a gmp_clock_mode by name (clock.h). */
static const char *const clock_names[] = {"auto", "tsc", "system"};

/* A setting whose values are n names, the value the name's index. */
static int parse_named(const char *v, const char *const *names, int n, int *out)
{
    char t[16];
    if (trimmed(v, t, sizeof t) != 0)
        return -1;
    for (int i = 0; i < n; i++)
        if (strcasecmp(t, names[i]) == 0) {
            *out = i;
            return 0;
        }
    return -1;
}

/* GMEMPROF_STEP_SOURCE: a gmp_step_source_mode by name. */
static int parse_stepsrc(const char *v, int *out)
{
    return parse_named(v, stepsrc_names, (int)(sizeof stepsrc_names / sizeof stepsrc_names[0]), out);
}

static int parse_log(const char *v, gmp_log_level *out)
{
    char t[16];
    if (trimmed(v, t, sizeof t) != 0)
        return -1;
    if (strcasecmp(t, "quiet") == 0 || strcmp(t, "0") == 0)
        *out = GMP_LOG_QUIET;
    else if (strcasecmp(t, "info") == 0 || strcmp(t, "1") == 0)
        *out = GMP_LOG_INFO;
    else if (strcasecmp(t, "debug") == 0 || strcmp(t, "2") == 0)
        *out = GMP_LOG_DEBUG;
    else
        return -1;
    return 0;
}

/* Checks the escapes of an output pattern. 0, or -1 with the core message. */
static int check_pattern(const char *name, const char *v, char *err, size_t cap)
{
    char q[256];
    for (const char *p = v; *p; p++) {
        if (*p != '%')
            continue;
        char c = p[1];
        if (c == 'p' || c == 'h' || c == 'r' || c == 't' || c == '%') {
            p++;
            continue;
        }
        char esc[8];
        snprintf(esc, sizeof esc, "'%%%c'", isprint((unsigned char)c) ? c : '?');
        snprintf(err, cap,
                 "%s='%s' has an unknown escape %s (accepted: %%p pid, %%h host, %%r rank, %%t start "
                 "time, %%%% a percent sign)",
                 name, quote(v, q, sizeof q), c == '\0' ? "(a lone '%' at the end)" : esc);
        return -1;
    }
    return 0;
}

/* Parses `value` for setting s into cfg. 0 on success; -1 with the core of
 * the message (variable, value, what is accepted) in err. */
static int parse_setting(const setting *s, const char *value, gmp_config *cfg, char *err, size_t cap)
{
    char q[256];
    char *base = (char *)cfg + s->off;
    switch (s->type) {
    case T_BOOL:
        if (parse_bool(value, (int *)(void *)base) == 0)
            return 0;
        snprintf(err, cap, "%s='%s' is not a yes/no value (accepted: 1, 0, true, false, on, off, yes, no)",
                 s->name, quote(value, q, sizeof q));
        return -1;
    case T_KMODE:
        if (parse_kmode(value, (int *)(void *)base) == 0)
            return 0;
        snprintf(err, cap,
                 "%s='%s' is not a kernel mode (accepted: gpu, launch, none, or a yes/no value: "
                 "1/yes = gpu, 0/no = none)",
                 s->name, quote(value, q, sizeof q));
        return -1;
    case T_STEPSRC:
        if (parse_stepsrc(value, (int *)(void *)base) == 0)
            return 0;
        snprintf(err, cap, "%s='%s' is not a step source (accepted: auto, nvtx, optimizer, none)", s->name,
                 quote(value, q, sizeof q));
        return -1;
    case T_CLOCK:
        if (parse_named(value, clock_names, 3, (int *)(void *)base) == 0)
            return 0;
        snprintf(err, cap, "%s='%s' is not a clock (accepted: auto, tsc, system)", s->name,
                 quote(value, q, sizeof q));
        return -1;
    case T_U64:
    case T_INT: {
        uint64_t v = 0;
        int rc = parse_u64(value, &v);
        if (rc == 0 && v >= s->lo && v <= s->hi) {
            if (s->type == T_INT)
                *(int *)(void *)base = (int)v;
            else
                *(uint64_t *)(void *)base = v;
            return 0;
        }
        char range[96];
        snprintf(range, sizeof range, "%llu..%llu%s%s", (unsigned long long)s->lo,
                 (unsigned long long)s->hi, s->hint ? "; " : "", s->hint ? s->hint : "");
        if (rc == -1)
            snprintf(err, cap, "%s='%s' is not %s (%s)", s->name, quote(value, q, sizeof q), s->what,
                     range);
        else
            snprintf(err, cap, "%s='%s' is out of range for %s (%s)", s->name,
                     quote(value, q, sizeof q), s->what, range);
        return -1;
    }
    case T_LOG:
        if (parse_log(value, (gmp_log_level *)(void *)base) == 0)
            return 0;
        snprintf(err, cap, "%s='%s' is not a log level (accepted: quiet, info, debug, or 0, 1, 2)",
                 s->name, quote(value, q, sizeof q));
        return -1;
    case T_SCHED: {
        char e[256]; /* leaves room for the name in a GMP_DIAG_LINE */
        gmp_sched_spec spec;
        if (gmp_sched_parse(value, &spec, e, sizeof e) == 0) {
            *(gmp_sched_spec *)(void *)base = spec;
            return 0;
        }
        snprintf(err, cap, "%s: %s", s->name, e);
        return -1;
    }
    case T_OUTPUT: {
        size_t n = strlen(value);
        /* A pattern ending in '/' names a directory: the default file name goes in it. */
        int dir = n > 0 && value[n - 1] == '/';
        if (n + (dir ? strlen(GMP_DEFAULT_OUTPUT) : 0) >= GMP_PATH_MAX) {
            snprintf(err, cap, "%s='%s' is longer than %d bytes", s->name, quote(value, q, sizeof q),
                     GMP_PATH_MAX - 1);
            return -1;
        }
        if (check_pattern(s->name, value, err, cap) != 0)
            return -1;
        snprintf(base, GMP_PATH_MAX, "%s%s", value, dir ? GMP_DEFAULT_OUTPUT : "");
        return 0;
    }
    case T_NAME:
        if (strlen(value) >= GMP_NAME_MAX) {
            snprintf(err, cap, "%s='%s' is longer than %d bytes", s->name, quote(value, q, sizeof q),
                     GMP_NAME_MAX - 1);
            return -1;
        }
        snprintf(base, GMP_NAME_MAX, "%s", value);
        return 0;
    case T_PATH:
        if (strlen(value) >= GMP_PATH_MAX) {
            snprintf(err, cap, "%s='%s' is longer than %d bytes", s->name, quote(value, q, sizeof q),
                     GMP_PATH_MAX - 1);
            return -1;
        }
        snprintf(base, GMP_PATH_MAX, "%s", value);
        return 0;
    }
    return -1;
}

/* What the profiler does instead of a bad value of s (cfg holds defaults). */
static void fallback_text(const setting *s, const gmp_config *def, char *out, size_t cap)
{
    const char *base = (const char *)def + s->off;
    switch (s->type) {
    case T_BOOL:
        snprintf(out, cap, "using the default %d", *(const int *)(const void *)base);
        break;
    case T_KMODE:
        snprintf(out, cap, "using the default %s", kmode_name(*(const int *)(const void *)base));
        break;
    case T_STEPSRC:
        snprintf(out, cap, "using the default %s", stepsrc_names[*(const int *)(const void *)base & 3]);
        break;
    case T_CLOCK:
        snprintf(out, cap, "using the default %s", clock_names[(unsigned)*(const int *)(const void *)base % 3u]);
        break;
    case T_U64:
        snprintf(out, cap, "using the default %llu",
                 (unsigned long long)*(const uint64_t *)(const void *)base);
        break;
    case T_INT:
        snprintf(out, cap, "using the default %d", *(const int *)(const void *)base);
        break;
    case T_LOG:
        snprintf(out, cap, "using the default %s", log_name(def->log));
        break;
    case T_SCHED:
        snprintf(out, cap, "recording the whole run as one window");
        break;
    case T_OUTPUT:
        snprintf(out, cap, "the profiler is off for this run");
        break;
    case T_NAME:
        snprintf(out, cap, "using the default '%s'", base);
        break;
    case T_PATH:
        snprintf(out, cap, "no summary is written");
        break;
    }
}

static const char *env_get(const char *name, void *ctx)
{
    (void)ctx;
    return getenv(name);
}

int gmp_config_load(gmp_config *cfg, gmp_getenv_fn get, void *ctx, gmp_diag *diag)
{
    gmp_config def;
    int problems = 0;
    if (!get)
        get = env_get;
    gmp_config_defaults(&def);
    *cfg = def;
    for (size_t i = 0; i < NSETTINGS; i++) {
        const setting *s = &settings[i];
        const char *v = get(s->name, ctx);
        char err[GMP_DIAG_LINE], fb[96];
        if (!v || !v[0])
            continue; /* unset or empty: the default */
        if (parse_setting(s, v, cfg, err, sizeof err) == 0)
            continue;
        fallback_text(s, &def, fb, sizeof fb);
        gmp_diag_add(diag, "%s; %s", err, fb);
        problems++;
        if (s->type == T_OUTPUT)
            cfg->enabled = 0;
    }
    /* The host budget must hold several CUPTI buffers, or the writer would
     * drop records at once: at least 4. */
    uint64_t most = cfg->host_buffer_mb * 1024 / 4;
    if (cfg->cupti_buffer_kb > most) {
        gmp_diag_add(diag,
                     "GMEMPROF_CUPTI_BUFFER_KB=%llu does not fit 4 times in GMEMPROF_HOST_BUFFER_MB=%llu "
                     "(the CUPTI buffers live in the host budget); using %llu KiB buffers",
                     (unsigned long long)cfg->cupti_buffer_kb, (unsigned long long)cfg->host_buffer_mb,
                     (unsigned long long)most);
        cfg->cupti_buffer_kb = most;
        problems++;
    }
    /* The flight recorder: alone (the whole run) or beside a schedule of
     * windows, which the trace keeps as without it. It keeps kernels only
     * when asked (GMEMPROF_KERNELS set, or --kernels): they cost the most.
     * Alone, nothing else would want them; beside windows, the trace
     * collects them in its windows as it would without the recorder. */
    cfg->on_oom = cfg->on_oom || cfg->schedule.on_oom;
    cfg->schedule.on_oom = cfg->on_oom;
    const char *km = get("GMEMPROF_KERNELS", ctx);
    int asked = km && km[0];
    if (cfg->on_oom && !asked && cfg->schedule.kind == GMP_SCHED_WHOLE)
        cfg->kernels = GMP_KERNELS_NONE;
    cfg->oom_kernels = cfg->on_oom && asked && cfg->kernels != GMP_KERNELS_NONE;
    const char *ac = get("PYTORCH_ALLOC_CONF", ctx), *cac = get("PYTORCH_CUDA_ALLOC_CONF", ctx);
    snprintf(cfg->alloc_conf, sizeof cfg->alloc_conf, "%s", ac ? ac : "");
    snprintf(cfg->cuda_alloc_conf, sizeof cfg->cuda_alloc_conf, "%s", cac ? cac : "");
    return problems;
}

int gmp_config_oom_beside(const gmp_config *cfg) { return cfg->on_oom && cfg->schedule.kind != GMP_SCHED_WHOLE; }

int gmp_config_check_value(const char *name, const char *value, char *err, size_t cap)
{
    gmp_config cfg;
    char e[GMP_DIAG_LINE];
    gmp_config_defaults(&cfg);
    if (err && cap)
        err[0] = '\0';
    for (size_t i = 0; i < NSETTINGS; i++) {
        if (strcmp(settings[i].name, name) != 0)
            continue;
        if (!value || !value[0])
            return 0;
        if (parse_setting(&settings[i], value, &cfg, e, sizeof e) == 0)
            return 0;
        if (err && cap)
            snprintf(err, cap, "%s", e);
        return -1;
    }
    if (err && cap)
        snprintf(err, cap, "%s is not a gmemprof setting", name);
    return -1;
}

/* ---- unknown names ---------------------------------------------------------- */

/* Edit distance, capped: returns a value > cap as soon as it exceeds cap. */
static size_t edit_distance(const char *a, const char *b, size_t cap)
{
    size_t la = strlen(a), lb = strlen(b);
    size_t row[64];
    if (la >= 64 || lb >= 64)
        return cap + 1;
    if ((la > lb ? la - lb : lb - la) > cap)
        return cap + 1;
    for (size_t j = 0; j <= lb; j++)
        row[j] = j;
    for (size_t i = 1; i <= la; i++) {
        size_t prev = row[0], best = i;
        row[0] = i;
        for (size_t j = 1; j <= lb; j++) {
            size_t cur = row[j];
            size_t sub = prev + (toupper((unsigned char)a[i - 1]) != toupper((unsigned char)b[j - 1]));
            size_t v = sub;
            if (row[j] + 1 < v)
                v = row[j] + 1;
            if (row[j - 1] + 1 < v)
                v = row[j - 1] + 1;
            row[j] = v;
            prev = cur;
            if (v < best)
                best = v;
        }
        if (best > cap)
            return cap + 1;
    }
    return row[lb];
}

int gmp_config_check_names(char *const *envp, gmp_diag *diag)
{
    static const char prefix[] = "GMEMPROF_";
    int problems = 0;
    if (!envp)
        return 0;
    for (char *const *e = envp; *e; e++) {
        const char *eq = strchr(*e, '=');
        char name[96];
        size_t n = eq ? (size_t)(eq - *e) : strlen(*e);
        if (strncmp(*e, prefix, sizeof prefix - 1) != 0 || n >= sizeof name)
            continue;
        memcpy(name, *e, n);
        name[n] = '\0';
        if (strncmp(name, "GMEMPROF_TEST_", 14) == 0)
            continue; /* reserved for test harnesses */
        int known = 0;
        const char *best = NULL;
        size_t best_d = 3;
        for (size_t i = 0; i < NSETTINGS + sizeof other_names / sizeof other_names[0]; i++) {
            const char *k = i < NSETTINGS ? settings[i].name : other_names[i - NSETTINGS];
            if (strcmp(name, k) == 0) {
                known = 1;
                break;
            }
            size_t d = edit_distance(name + sizeof prefix - 1, k + sizeof prefix - 1, 2);
            if (d < best_d) {
                best_d = d;
                best = k;
            }
        }
        if (known)
            continue;
        char shown[GMP_QUOTE_MAX];
        quote(name, shown, sizeof shown); /* the name itself may hold control bytes */
        if (best)
            gmp_diag_add(diag, "%s is not a gmemprof setting (did you mean %s?); it is ignored", shown,
                         best);
        else
            gmp_diag_add(diag,
                         "%s is not a gmemprof setting (" GMEMPROF_DOCDIR "/user-guide.md lists them); it is ignored",
                         shown);
        problems++;
    }
    return problems;
}

/* ---- output pattern ------------------------------------------------------- */

int gmp_config_expand_output(const char *pattern, char *out, size_t cap, long pid, const char *host,
                             long rank, uint64_t start_unix_ns, gmp_diag *diag)
{
    char q[256], err[GMP_DIAG_LINE];
    size_t n = 0;
    if (!out || cap == 0) {
        gmp_diag_add(diag, "GMEMPROF_OUTPUT: no room for the output path; the profiler is off for this run");
        return -1;
    }
    out[0] = '\0';
    if (!pattern)
        pattern = GMP_DEFAULT_OUTPUT;
    if (!host || !host[0])
        host = "unknown-host";
    if (check_pattern("GMEMPROF_OUTPUT", pattern, err, sizeof err) != 0) {
        gmp_diag_add(diag, "%s; the profiler is off for this run", err);
        return -1;
    }
    for (const char *p = pattern; *p; p++) {
        char piece[64];
        const char *add = piece;
        size_t len;
        if (*p != '%') {
            piece[0] = *p;
            piece[1] = '\0';
        } else {
            switch (*++p) {
            case 'p':
                snprintf(piece, sizeof piece, "%ld", pid);
                break;
            case 'h':
                add = host;
                break;
            case 'r':
                /* No rank (a plain run, or a launcher's own process such
                 * as torchrun's agent, which may start CUDA too): the pid,
                 * marked, so it can never take a rank's file name. */
                if (rank >= 0)
                    snprintf(piece, sizeof piece, "%ld", rank);
                else
                    snprintf(piece, sizeof piece, "p%ld", pid);
                break;
            case 't': {
                time_t t = (time_t)(start_unix_ns / 1000000000ull);
                struct tm tm;
                if (!gmtime_r(&t, &tm) || strftime(piece, sizeof piece, "%Y%m%d-%H%M%S", &tm) == 0)
                    snprintf(piece, sizeof piece, "%llu", (unsigned long long)t);
                break;
            }
            default: /* '%': check_pattern allows nothing else */
                piece[0] = '%';
                piece[1] = '\0';
                break;
            }
        }
        len = strlen(add);
        if (n + len >= cap) {
            out[0] = '\0';
            gmp_diag_add(diag,
                         "GMEMPROF_OUTPUT='%s' expands to more than %zu bytes; the profiler is off for "
                         "this run",
                         quote(pattern, q, sizeof q), cap - 1);
            return -1;
        }
        memcpy(out + n, add, len);
        n += len;
    }
    out[n] = '\0';
    return 0;
}

long gmp_config_env_int(gmp_getenv_fn get, void *ctx, const char *name)
{
    uint64_t v;
    if (!get)
        get = env_get;
    const char *s = get(name, ctx);
    if (!s || !s[0] || parse_u64(s, &v) != 0 || v > 0x7fffffffull)
        return -1;
    return (long)v;
}

long gmp_config_rank(gmp_getenv_fn get, void *ctx)
{
    long r = gmp_config_env_int(get, ctx, "RANK");
    if (r < 0)
        r = gmp_config_env_int(get, ctx, "LOCAL_RANK");
    return r;
}

/* ---- describe --------------------------------------------------------------- */

typedef struct sbuf {
    char *out;
    size_t cap, len;
} sbuf;

static void sb_putc(sbuf *b, char c)
{
    if (b->len + 1 < b->cap)
        b->out[b->len] = c;
    b->len++;
}

static void sb_puts(sbuf *b, const char *s, int escape)
{
    for (; *s; s++) {
        if (escape && (*s == ';' || *s == '\\'))
            sb_putc(b, '\\');
        sb_putc(b, *s);
    }
}

static void sb_kv(sbuf *b, const char *key, const char *value)
{
    if (b->len > 0)
        sb_putc(b, ';');
    sb_puts(b, key, 0);
    sb_putc(b, '=');
    sb_puts(b, value, 1);
}

static void sb_kvu(sbuf *b, const char *key, unsigned long long v)
{
    char num[24];
    snprintf(num, sizeof num, "%llu", v);
    sb_kv(b, key, num);
}

/* "key=value;..." with ';' and '\' in values escaped by a backslash. Returns
 * the length the full text needs (like snprintf); always terminated. */
size_t gmp_config_describe(const gmp_config *cfg, char *out, size_t cap)
{
    sbuf b = {out, cap, 0};
    char sched[160];
    gmp_sched_describe(&cfg->schedule, sched, sizeof sched);
    sb_kvu(&b, "enabled", (unsigned long long)cfg->enabled);
    sb_kv(&b, "output", cfg->output);
    sb_kv(&b, "schedule", sched);
    sb_kv(&b, "step_marker", cfg->step_marker);
    sb_kv(&b, "tag_prefix", cfg->tag_prefix);
    sb_kvu(&b, "sample_ms", (unsigned long long)cfg->sample_period_ms);
    sb_kvu(&b, "flush_ms", (unsigned long long)cfg->flush_period_ms);
    sb_kvu(&b, "host_buffer_mb", (unsigned long long)cfg->host_buffer_mb);
    sb_kvu(&b, "cupti_buffer_kb", (unsigned long long)cfg->cupti_buffer_kb);
    sb_kvu(&b, "device_buffer_kb", (unsigned long long)cfg->device_buffer_kb);
    /* 0 and 1 as before (traces of the two old modes keep their header);
     * the new mode by name: the analyzer reads "kernels=launch". */
    if (cfg->kernels == GMP_KERNELS_LAUNCH)
        sb_kv(&b, "kernels", "launch");
    else
        sb_kvu(&b, "kernels", (unsigned long long)(cfg->kernels != GMP_KERNELS_NONE));
    sb_kvu(&b, "zstd_level", (unsigned long long)cfg->zstd_level);
    sb_kv(&b, "log", log_name(cfg->log));
    if (cfg->on_oom) { /* (absent otherwise: the headers of other traces keep their bytes) */
        sb_kvu(&b, "oom_steps", (unsigned long long)cfg->oom_steps);
        sb_kvu(&b, "oom_seconds", (unsigned long long)cfg->oom_seconds);
        sb_kvu(&b, "oom_max_mb", (unsigned long long)cfg->oom_max_mb);
        sb_kvu(&b, "oom_dumps", (unsigned long long)cfg->oom_dumps);
    }
    /* the allocator's settings, when set (absent otherwise, as above) */
    if (cfg->alloc_conf[0])
        sb_kv(&b, "PYTORCH_ALLOC_CONF", cfg->alloc_conf);
    if (cfg->cuda_alloc_conf[0])
        sb_kv(&b, "PYTORCH_CUDA_ALLOC_CONF", cfg->cuda_alloc_conf);
    if (out && cap > 0)
        out[b.len < cap ? b.len : cap - 1] = '\0';
    return b.len;
}

/* ---- step markers and tags ---------------------------------------------------- */

/*
 * The step-marker rule. An NVTX mark or range name is a step boundary when it
 * equals the marker, or starts with the marker followed by a space, ':', '#',
 * '_', '-' or a digit. Case-sensitive. With the default marker "step":
 * "step", "step 12", "step:3", "step#3", "step_4", "step-5", "step7" match;
 * "steps", "stepper", "Step", "train_step" do not. So a loop can number its
 * marks (torch.cuda.nvtx.mark(f"step {i}")) without changing the marker, and
 * a word that merely begins with the marker is not mistaken for one.
 */
int gmp_config_is_step_marker(const gmp_config *cfg, const char *name)
{
    size_t n;
    if (!cfg || !name || !cfg->step_marker[0])
        return 0;
    n = strlen(cfg->step_marker);
    if (strncmp(name, cfg->step_marker, n) != 0)
        return 0;
    char c = name[n];
    return c == '\0' || c == ' ' || c == ':' || c == '#' || c == '_' || c == '-' ||
           isdigit((unsigned char)c);
}

/*
 * The tag rule: a name that starts with the tag prefix (case-sensitive) is a
 * tag; the tag is the rest of the name without leading blanks
 * ("tag: after_model" -> "after_model"). A name that is only the prefix (or
 * the prefix and blanks) is not a tag: there would be nothing to call it.
 */
int gmp_config_tag_name(const gmp_config *cfg, const char *name, const char **tag)
{
    size_t n;
    if (!cfg || !name || !cfg->tag_prefix[0])
        return 0;
    n = strlen(cfg->tag_prefix);
    if (strncmp(name, cfg->tag_prefix, n) != 0)
        return 0;
    const char *t = name + n;
    while (*t == ' ' || *t == '\t')
        t++;
    if (!*t)
        return 0;
    if (tag)
        *tag = t;
    return 1;
}
