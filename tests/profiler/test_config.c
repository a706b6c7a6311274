/*
 * GMEMPROF_* settings: every setting with good, bad and edge values (each bad
 * value gives exactly one line and leaves the default), output pattern
 * expansion, the rank helper, describe, step-marker and tag matching, the
 * single-value check and the unknown-name check.
 */
#include <stdlib.h>

#include "clock.h"
#include "config.h"
#include "../check.h"

/* ---- a fake environment ------------------------------------------------------ */

#define MAXVARS 8
typedef struct fenv {
    const char *name[MAXVARS];
    const char *value[MAXVARS];
    int n;
} fenv;

static const char *fenv_get(const char *name, void *ctx)
{
    const fenv *e = ctx;
    for (int i = 0; i < e->n; i++)
        if (strcmp(e->name[i], name) == 0)
            return e->value[i];
    return NULL;
}

static fenv env1(const char *name, const char *value)
{
    fenv e = {{name}, {value}, 1};
    return e;
}

static int cfg_equal(const gmp_config *a, const gmp_config *b)
{
    return a->enabled == b->enabled && strcmp(a->output, b->output) == 0 &&
           a->schedule.kind == b->schedule.kind && a->schedule.skip_first == b->schedule.skip_first &&
           a->schedule.wait == b->schedule.wait && a->schedule.warmup == b->schedule.warmup &&
           a->schedule.active == b->schedule.active && a->schedule.repeat == b->schedule.repeat &&
           a->schedule.delay_ns == b->schedule.delay_ns &&
           a->schedule.duration_ns == b->schedule.duration_ns &&
           strcmp(a->step_marker, b->step_marker) == 0 && strcmp(a->tag_prefix, b->tag_prefix) == 0 &&
           a->sample_period_ms == b->sample_period_ms && a->flush_period_ms == b->flush_period_ms &&
           a->host_buffer_mb == b->host_buffer_mb && a->cupti_buffer_kb == b->cupti_buffer_kb &&
           a->device_buffer_kb == b->device_buffer_kb && a->kernels == b->kernels &&
           a->zstd_level == b->zstd_level && a->log == b->log &&
           strcmp(a->summary_file, b->summary_file) == 0;
}

static char *repeat_char(char c, size_t n)
{
    char *s = malloc(n + 1);
    memset(s, c, n);
    s[n] = '\0';
    return s;
}

/* ---- defaults --------------------------------------------------------------- */

static void test_defaults(void)
{
    gmp_config c, d;
    gmp_diag diag;
    fenv none = {{0}, {0}, 0};
    memset(&diag, 0, sizeof diag);
    memset(&c, 0x77, sizeof c);
    CHECK_EQ_U64(gmp_config_load(&c, fenv_get, &none, &diag), 0);
    CHECK_EQ_U64(diag.count, 0);
    CHECK_EQ_U64(c.enabled, 1);
    CHECK_STR(c.output, "gmemprof-%h-%p.zst");
    CHECK(c.schedule.kind == GMP_SCHED_WHOLE);
    CHECK_STR(c.step_marker, "step");
    CHECK_STR(c.tag_prefix, "tag:");
    CHECK_EQ_U64(c.sample_period_ms, 100);
    CHECK_EQ_U64(c.flush_period_ms, 1000);
    CHECK_EQ_U64(c.host_buffer_mb, 64);
    CHECK_EQ_U64(c.cupti_buffer_kb, 1024);
    CHECK_EQ_U64(c.device_buffer_kb, 1024);
    CHECK_EQ_U64(c.kernels, GMP_KERNELS_LAUNCH);
    CHECK_EQ_U64(c.zstd_level, 3);
    CHECK(c.log == GMP_LOG_INFO);
    CHECK_STR(c.summary_file, "");
    gmp_config_defaults(&d);
    CHECK(cfg_equal(&c, &d));

    /* Empty values are unset: defaults, no lines. */
    const char *names[] = {"GMEMPROF_ENABLE", "GMEMPROF_OUTPUT", "GMEMPROF_SCHEDULE", "GMEMPROF_SAMPLE_MS",
                           "GMEMPROF_LOG", "GMEMPROF_STEP_MARKER", "GMEMPROF_ZSTD_LEVEL",
                           "GMEMPROF_KERNELS"};
    fenv e;
    e.n = 8;
    for (int i = 0; i < 8; i++) {
        e.name[i] = names[i];
        e.value[i] = "";
    }
    CHECK_EQ_U64(gmp_config_load(&c, fenv_get, &e, &diag), 0);
    CHECK_EQ_U64(diag.count, 0);
    CHECK(cfg_equal(&c, &d));

    /* NULL get reads the real environment. */
    setenv("GMEMPROF_ZSTD_LEVEL", "7", 1);
    CHECK_EQ_U64(gmp_config_load(&c, NULL, NULL, NULL), 0);
    CHECK_EQ_U64(c.zstd_level, 7);
    unsetenv("GMEMPROF_ZSTD_LEVEL");
}

/* ---- good values ------------------------------------------------------------ */

static gmp_config load_one_ok(const char *name, const char *value)
{
    gmp_config c;
    gmp_diag diag;
    fenv e = env1(name, value);
    memset(&diag, 0, sizeof diag);
    int n = gmp_config_load(&c, fenv_get, &e, &diag);
    if (n != 0)
        fprintf(stderr, "%s='%s' unexpectedly bad: %s\n", name, value, diag.line[0]);
    CHECK_EQ_U64(n, 0);
    CHECK_EQ_U64(diag.count, 0);
    return c;
}

static void test_good_values(void)
{
    static const char *const off[] = {"0", "off", "OFF", "no", "No", "false", " FALSE "};
    static const char *const on[] = {"1", "on", "yes", "YES", "true", "True", "\t1\n"};
    for (size_t i = 0; i < 7; i++) {
        CHECK_EQ_U64(load_one_ok("GMEMPROF_ENABLE", off[i]).enabled, 0);
        CHECK_EQ_U64(load_one_ok("GMEMPROF_ENABLE", on[i]).enabled, 1);
        CHECK_EQ_U64(load_one_ok("GMEMPROF_KERNELS", off[i]).kernels, 0);
        CHECK_EQ_U64(load_one_ok("GMEMPROF_KERNELS", on[i]).kernels, 1);
    }
    /* the kernel modes by name (yes/no keep their meaning: gpu/none) */
    CHECK_EQ_U64(load_one_ok("GMEMPROF_KERNELS", "gpu").kernels, GMP_KERNELS_GPU);
    CHECK_EQ_U64(load_one_ok("GMEMPROF_KERNELS", " GPU ").kernels, GMP_KERNELS_GPU);
    CHECK_EQ_U64(load_one_ok("GMEMPROF_KERNELS", "launch").kernels, GMP_KERNELS_LAUNCH);
    CHECK_EQ_U64(load_one_ok("GMEMPROF_KERNELS", "Launch").kernels, GMP_KERNELS_LAUNCH);
    CHECK_EQ_U64(load_one_ok("GMEMPROF_KERNELS", "none").kernels, GMP_KERNELS_NONE);
    CHECK_STR(load_one_ok("GMEMPROF_OUTPUT", "/tmp/run %r-%t-%p-%%.zst").output, "/tmp/run %r-%t-%p-%%.zst");
    CHECK_STR(load_one_ok("GMEMPROF_OUTPUT", "traces/").output, "traces/gmemprof-%h-%p.zst");
    CHECK_STR(load_one_ok("GMEMPROF_OUTPUT", "/").output, "/gmemprof-%h-%p.zst");
    char *p = repeat_char('a', GMP_PATH_MAX - 1);
    CHECK_STR(load_one_ok("GMEMPROF_OUTPUT", p).output, p);
    free(p);

    gmp_config c = load_one_ok("GMEMPROF_SCHEDULE", "wait=2,warmup=1,active=3");
    CHECK(c.schedule.kind == GMP_SCHED_STEPS && c.schedule.wait == 2 && c.schedule.warmup == 1 &&
          c.schedule.active == 3 && c.schedule.repeat == 1);
    CHECK(load_one_ok("GMEMPROF_SCHEDULE", "capture").schedule.kind == GMP_SCHED_CAPTURE);
    CHECK(load_one_ok("GMEMPROF_SCHEDULE", "delay=1s").schedule.kind == GMP_SCHED_TIME);

    CHECK_STR(load_one_ok("GMEMPROF_STEP_MARKER", "iteration").step_marker, "iteration");
    CHECK_STR(load_one_ok("GMEMPROF_STEP_MARKER", " step ").step_marker, " step "); /* byte for byte */
    p = repeat_char('m', GMP_NAME_MAX - 1);
    CHECK_STR(load_one_ok("GMEMPROF_STEP_MARKER", p).step_marker, p);
    CHECK_STR(load_one_ok("GMEMPROF_TAG_PREFIX", p).tag_prefix, p);
    free(p);
    CHECK_STR(load_one_ok("GMEMPROF_TAG_PREFIX", "snap/").tag_prefix, "snap/");

    CHECK_EQ_U64(load_one_ok("GMEMPROF_SAMPLE_MS", "0").sample_period_ms, 0);
    CHECK_EQ_U64(load_one_ok("GMEMPROF_SAMPLE_MS", "3600000").sample_period_ms, 3600000);
    CHECK_EQ_U64(load_one_ok("GMEMPROF_SAMPLE_MS", " 250 ").sample_period_ms, 250);
    CHECK_EQ_U64(load_one_ok("GMEMPROF_SAMPLE_MS", "007").sample_period_ms, 7);
    CHECK_EQ_U64(load_one_ok("GMEMPROF_FLUSH_MS", "10").flush_period_ms, 10);
    CHECK_EQ_U64(load_one_ok("GMEMPROF_FLUSH_MS", "60000").flush_period_ms, 60000);
    CHECK_EQ_U64(load_one_ok("GMEMPROF_HOST_BUFFER_MB", "4").host_buffer_mb, 4); /* 4 x 1024 KiB fit */
    CHECK_EQ_U64(load_one_ok("GMEMPROF_HOST_BUFFER_MB", "4096").host_buffer_mb, 4096);
    CHECK_EQ_U64(load_one_ok("GMEMPROF_CUPTI_BUFFER_KB", "32").cupti_buffer_kb, 32);
    CHECK_EQ_U64(load_one_ok("GMEMPROF_CUPTI_BUFFER_KB", "16384").cupti_buffer_kb, 16384); /* 64 MiB / 4 */
    CHECK_EQ_U64(load_one_ok("GMEMPROF_DEVICE_BUFFER_KB", "64").device_buffer_kb, 64);
    CHECK_EQ_U64(load_one_ok("GMEMPROF_DEVICE_BUFFER_KB", "65536").device_buffer_kb, 65536);
    CHECK_EQ_U64(load_one_ok("GMEMPROF_ZSTD_LEVEL", "1").zstd_level, 1);
    CHECK_EQ_U64(load_one_ok("GMEMPROF_ZSTD_LEVEL", "19").zstd_level, 19);
    CHECK(load_one_ok("GMEMPROF_LOG", "quiet").log == GMP_LOG_QUIET);
    CHECK(load_one_ok("GMEMPROF_LOG", "INFO").log == GMP_LOG_INFO);
    CHECK(load_one_ok("GMEMPROF_LOG", "Debug").log == GMP_LOG_DEBUG);
    CHECK(load_one_ok("GMEMPROF_LOG", "0").log == GMP_LOG_QUIET);
    CHECK(load_one_ok("GMEMPROF_LOG", "1").log == GMP_LOG_INFO);
    CHECK(load_one_ok("GMEMPROF_LOG", "2").log == GMP_LOG_DEBUG);
    CHECK_STR(load_one_ok("GMEMPROF_SUMMARY_FILE", "/tmp/s x").summary_file, "/tmp/s x");
    CHECK_EQ_U64(load_one_ok("GMEMPROF_LOG", "info").clock, GMP_CLOCK_AUTO); /* the default */
    CHECK_EQ_U64(load_one_ok("GMEMPROF_CLOCK", "tsc").clock, GMP_CLOCK_TSC);
    CHECK_EQ_U64(load_one_ok("GMEMPROF_CLOCK", " System ").clock, GMP_CLOCK_SYSTEM);
    CHECK_EQ_U64(load_one_ok("GMEMPROF_CLOCK", "AUTO").clock, GMP_CLOCK_AUTO);

    /* The largest CUPTI buffer fits a large host budget. */
    fenv e = {{"GMEMPROF_HOST_BUFFER_MB", "GMEMPROF_CUPTI_BUFFER_KB"}, {"4096", "65536"}, 2};
    gmp_diag diag;
    memset(&diag, 0, sizeof diag);
    CHECK_EQ_U64(gmp_config_load(&c, fenv_get, &e, &diag), 0);
    CHECK_EQ_U64(c.cupti_buffer_kb, 65536);
}

/* ---- bad values ------------------------------------------------------------- */

typedef struct bad_case {
    const char *name, *value;
    const char *expect[3]; /* pieces the single line must contain */
} bad_case;

static void test_bad_values(void)
{
    static const bad_case cases[] = {
        {"GMEMPROF_ENABLE", "maybe", {"GMEMPROF_ENABLE='maybe' is not a yes/no value", "true, false", "using the default 1"}},
        {"GMEMPROF_ENABLE", "2", {"GMEMPROF_ENABLE='2'", "accepted: 1, 0", "using the default 1"}},
        {"GMEMPROF_KERNELS", "nope", {"GMEMPROF_KERNELS='nope' is not a kernel mode", "gpu, launch, none", "using the default launch"}},
        {"GMEMPROF_KERNELS", "launches", {"GMEMPROF_KERNELS='launches'", "1/yes = gpu, 0/no = none", "using the default launch"}},
        {"GMEMPROF_CLOCK", "hpet", {"GMEMPROF_CLOCK='hpet' is not a clock", "accepted: auto, tsc, system", "using the default auto"}},
        {"GMEMPROF_SAMPLE_MS", "abc", {"GMEMPROF_SAMPLE_MS='abc' is not a number of milliseconds (0..3600000", "0 turns sampling off", "; using the default 100"}},
        {"GMEMPROF_SAMPLE_MS", "-5", {"GMEMPROF_SAMPLE_MS='-5' is not a number", "0..3600000", "using the default 100"}},
        {"GMEMPROF_SAMPLE_MS", "+5", {"'+5' is not a number", "using the default 100", NULL}},
        {"GMEMPROF_SAMPLE_MS", "1e3", {"'1e3' is not a number", NULL, NULL}},
        {"GMEMPROF_SAMPLE_MS", "0x10", {"'0x10' is not a number", NULL, NULL}},
        {"GMEMPROF_SAMPLE_MS", "1 2", {"'1 2' is not a number", NULL, NULL}},
        {"GMEMPROF_SAMPLE_MS", "12.5", {"'12.5' is not a number", NULL, NULL}},
        {"GMEMPROF_SAMPLE_MS", "3600001", {"GMEMPROF_SAMPLE_MS='3600001' is out of range", "0..3600000", "using the default 100"}},
        {"GMEMPROF_SAMPLE_MS", "99999999999999999999999", {"is out of range", "using the default 100", NULL}},
        {"GMEMPROF_SAMPLE_MS", "18446744073709551616", {"is out of range", NULL, NULL}}, /* 2^64 */
        {"GMEMPROF_FLUSH_MS", "9", {"GMEMPROF_FLUSH_MS='9' is out of range", "10..60000", "using the default 1000"}},
        {"GMEMPROF_FLUSH_MS", "60001", {"GMEMPROF_FLUSH_MS='60001'", "10..60000", "using the default 1000"}},
        {"GMEMPROF_HOST_BUFFER_MB", "3", {"GMEMPROF_HOST_BUFFER_MB='3'", "a number of MiB (4..4096)", "using the default 64"}},
        {"GMEMPROF_HOST_BUFFER_MB", "4097", {"'4097' is out of range", "4..4096", "using the default 64"}},
        {"GMEMPROF_CUPTI_BUFFER_KB", "31", {"GMEMPROF_CUPTI_BUFFER_KB='31'", "KiB (32..65536)", "using the default 1024"}},
        {"GMEMPROF_CUPTI_BUFFER_KB", "65537", {"'65537' is out of range", "32..65536", "using the default 1024"}},
        {"GMEMPROF_DEVICE_BUFFER_KB", "63", {"GMEMPROF_DEVICE_BUFFER_KB='63'", "64..65536", "using the default 1024"}},
        {"GMEMPROF_DEVICE_BUFFER_KB", "65537", {"'65537'", "64..65536", "using the default 1024"}},
        {"GMEMPROF_DEVICE_BUFFER_KB", "1MB", {"'1MB' is not a number of KiB", NULL, NULL}},
        {"GMEMPROF_ZSTD_LEVEL", "0", {"GMEMPROF_ZSTD_LEVEL='0' is out of range for a zstd compression level (1..19)", "using the default 3", NULL}},
        {"GMEMPROF_ZSTD_LEVEL", "20", {"'20' is out of range", "1..19", "using the default 3"}},
        {"GMEMPROF_ZSTD_LEVEL", "fast", {"'fast' is not a zstd compression level", "using the default 3", NULL}},
        {"GMEMPROF_LOG", "loud", {"GMEMPROF_LOG='loud' is not a log level", "quiet, info, debug", "using the default info"}},
        {"GMEMPROF_LOG", "3", {"GMEMPROF_LOG='3'", "0, 1, 2", "using the default info"}},
        {"GMEMPROF_LOG", "warn", {"'warn'", NULL, NULL}},
        {"GMEMPROF_SCHEDULE", "wait=2", {"GMEMPROF_SCHEDULE: ", "no active=N", "recording the whole run as one window"}},
        {"GMEMPROF_SCHEDULE", "bogus", {"GMEMPROF_SCHEDULE: 'bogus'", "capture", "recording the whole run"}},
        {"GMEMPROF_SCHEDULE", "wait=1,active=0", {"active=0", "recording the whole run", NULL}},
        {"GMEMPROF_OUTPUT", "out-%q.zst", {"GMEMPROF_OUTPUT='out-%q.zst' has an unknown escape '%q'", "%p pid, %h host, %r rank, %t start time", "the profiler is off for this run"}},
        {"GMEMPROF_OUTPUT", "out-%", {"GMEMPROF_OUTPUT='out-%'", "lone '%'", "the profiler is off"}},
        {"GMEMPROF_OUTPUT", "a\nb%z", {"'a\\x0ab%z'", "'%z'", "the profiler is off"}},
    };
    gmp_config def;
    gmp_config_defaults(&def);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const bad_case *b = &cases[i];
        gmp_config c;
        gmp_diag diag;
        fenv e = env1(b->name, b->value);
        memset(&diag, 0, sizeof diag);
        int n = gmp_config_load(&c, fenv_get, &e, &diag);
        CHECK_EQ_U64(n, 1);
        CHECK_EQ_U64(diag.count, 1);
        CHECK_EQ_U64(diag.lost, 0);
        for (int k = 0; k < 3 && b->expect[k]; k++)
            CHECK_HAS(diag.line[0], b->expect[k]);
        CHECK(strchr(diag.line[0], '\n') == NULL); /* one line, whatever the value */
        gmp_config want = def;
        if (strcmp(b->name, "GMEMPROF_OUTPUT") == 0)
            want.enabled = 0;
        CHECK(cfg_equal(&c, &want));
        /* The single-value check agrees and gives the same core message. */
        char err[GMP_DIAG_LINE];
        CHECK(gmp_config_check_value(b->name, b->value, err, sizeof err) == -1);
        CHECK_HAS(diag.line[0], err);
        CHECK(strstr(err, "default") == NULL && strstr(err, "the profiler is off") == NULL);
    }

    /* Over-long text settings. */
    char *longv = repeat_char('x', 5000);
    struct {
        const char *name;
        size_t len;
        const char *expect;
    } longs[] = {
        {"GMEMPROF_OUTPUT", 5000, "is longer than 4095 bytes; the profiler is off for this run"},
        {"GMEMPROF_OUTPUT", GMP_PATH_MAX, "is longer than 4095 bytes"},
        {"GMEMPROF_STEP_MARKER", GMP_NAME_MAX, "is longer than 127 bytes; using the default 'step'"},
        {"GMEMPROF_TAG_PREFIX", 200, "is longer than 127 bytes; using the default 'tag:'"},
        {"GMEMPROF_SUMMARY_FILE", 5000, "is longer than 4095 bytes; no summary is written"},
    };
    for (size_t i = 0; i < sizeof longs / sizeof longs[0]; i++) {
        gmp_config c;
        gmp_diag diag;
        longv[longs[i].len] = '\0';
        fenv e = env1(longs[i].name, longv);
        memset(&diag, 0, sizeof diag);
        CHECK_EQ_U64(gmp_config_load(&c, fenv_get, &e, &diag), 1);
        CHECK_EQ_U64(diag.count, 1);
        CHECK_HAS(diag.line[0], longs[i].expect);
        CHECK_HAS(diag.line[0], "xxx..."); /* the value is shown shortened */
        CHECK(strlen(diag.line[0]) < GMP_DIAG_LINE);
        longv[longs[i].len] = 'x';
    }
    /* A directory pattern whose default file name would not fit. */
    longv[GMP_PATH_MAX - 5] = '/';
    longv[GMP_PATH_MAX - 4] = '\0';
    {
        gmp_config c;
        gmp_diag diag;
        fenv e = env1("GMEMPROF_OUTPUT", longv);
        memset(&diag, 0, sizeof diag);
        CHECK_EQ_U64(gmp_config_load(&c, fenv_get, &e, &diag), 1);
        CHECK_EQ_U64(c.enabled, 0);
    }
    free(longv);
}

static void test_many_problems(void)
{
    /* Cross-field: 4 MiB of host buffers hold four 1 MiB CUPTI buffers, not 2 MiB ones. */
    fenv e = {{"GMEMPROF_HOST_BUFFER_MB", "GMEMPROF_CUPTI_BUFFER_KB"}, {"4", "2048"}, 2};
    gmp_config c;
    gmp_diag diag;
    memset(&diag, 0, sizeof diag);
    CHECK_EQ_U64(gmp_config_load(&c, fenv_get, &e, &diag), 1);
    CHECK_EQ_U64(diag.count, 1);
    CHECK_HAS(diag.line[0], "GMEMPROF_CUPTI_BUFFER_KB=2048");
    CHECK_HAS(diag.line[0], "GMEMPROF_HOST_BUFFER_MB=4");
    CHECK_HAS(diag.line[0], "using 1024 KiB buffers");
    CHECK_EQ_U64(c.cupti_buffer_kb, 1024);
    CHECK_EQ_U64(c.host_buffer_mb, 4);

    /* Eight bad settings: eight lines; loading again into the same diag
     * appends and counts what no longer fits. */
    fenv m = {{"GMEMPROF_ENABLE", "GMEMPROF_SAMPLE_MS", "GMEMPROF_FLUSH_MS", "GMEMPROF_HOST_BUFFER_MB",
               "GMEMPROF_CUPTI_BUFFER_KB", "GMEMPROF_KERNELS", "GMEMPROF_ZSTD_LEVEL", "GMEMPROF_LOG"},
              {"x", "x", "x", "x", "x", "x", "x", "x"},
              8};
    memset(&diag, 0, sizeof diag);
    CHECK_EQ_U64(gmp_config_load(&c, fenv_get, &m, &diag), 8);
    CHECK_EQ_U64(diag.count, 8);
    CHECK_EQ_U64(diag.lost, 0);
    CHECK_EQ_U64(gmp_config_load(&c, fenv_get, &m, &diag), 8);
    CHECK_EQ_U64(diag.count, GMP_DIAG_MAX);
    CHECK_EQ_U64(diag.lost, 8);
    CHECK_EQ_U64(gmp_config_load(&c, fenv_get, &m, NULL), 8); /* no diag: still counted */
}

static void test_diag(void)
{
    gmp_diag d;
    memset(&d, 0, sizeof d);
    char *big = repeat_char('z', 1000);
    gmp_diag_add(&d, "%s", big);
    CHECK_EQ_U64(d.count, 1);
    CHECK_EQ_U64(strlen(d.line[0]), GMP_DIAG_LINE - 1);
    free(big);
    gmp_diag_add(NULL, "ignored %d", 1);
    for (int i = 0; i < 20; i++)
        gmp_diag_add(&d, "line %d", i);
    CHECK_EQ_U64(d.count, GMP_DIAG_MAX);
    CHECK_EQ_U64(d.lost, 20 - (GMP_DIAG_MAX - 1));
    CHECK_STR(d.line[1], "line 0");
}

/* ---- output expansion --------------------------------------------------------- */

static void test_expand(void)
{
    char out[256];
    gmp_diag d;
    /* 2024-01-02 03:04:05 UTC = 19724 days * 86400 + 11045 s = 1704164645 s
     * (54 years from 1970 with 13 leap days, plus one day). */
    const uint64_t t = 1704164645ull * 1000000000ull + 999;
    memset(&d, 0, sizeof d);
    CHECK_EQ_U64(gmp_config_expand_output("run-%p-%h-%r-%t-%%.zst", out, sizeof out, 1234, "node1", 3, t, &d), 0);
    CHECK_STR(out, "run-1234-node1-3-20240102-030405-%.zst");
    CHECK_EQ_U64(d.count, 0);
    /* No rank: p<pid>, never a rank's name (torchrun's agent vs rank 0). */
    CHECK_EQ_U64(gmp_config_expand_output("trace-%r.zst", out, sizeof out, 4321, "h", -1, 0, &d), 0);
    CHECK_STR(out, "trace-p4321.zst");
    CHECK_EQ_U64(gmp_config_expand_output("trace-%r.zst", out, sizeof out, 4321, "h", 0, 0, &d), 0);
    CHECK_STR(out, "trace-0.zst");
    CHECK_EQ_U64(gmp_config_expand_output("gmemprof-%h-%p.zst", out, sizeof out, 77, "h", 0, 0, &d), 0);
    CHECK_STR(out, "gmemprof-h-77.zst");
    CHECK_EQ_U64(gmp_config_expand_output(NULL, out, sizeof out, 5, "box", 0, 0, &d), 0);
    CHECK_STR(out, "gmemprof-box-5.zst");
    CHECK_EQ_U64(gmp_config_expand_output("%h/%p%p", out, sizeof out, 9, NULL, 0, 0, &d), 0);
    CHECK_STR(out, "unknown-host/99");
    CHECK_EQ_U64(gmp_config_expand_output("%t", out, sizeof out, 0, "h", 0, 0, &d), 0);
    CHECK_STR(out, "19700101-000000");
    CHECK_EQ_U64(gmp_config_expand_output("plain", out, sizeof out, 0, "h", 0, 0, &d), 0);
    CHECK_STR(out, "plain");
    CHECK_EQ_U64(d.count, 0);

    /* Exactly fitting: "a-1234" is 6 bytes, needs cap 7. */
    CHECK_EQ_U64(gmp_config_expand_output("a-%p", out, 7, 1234, "h", 0, 0, &d), 0);
    CHECK_STR(out, "a-1234");
    CHECK_EQ_U64(gmp_config_expand_output("a-%p", out, 6, 1234, "h", 0, 0, &d), (uint64_t)-1);
    CHECK_EQ_U64(d.count, 1);
    CHECK_HAS(d.line[0], "GMEMPROF_OUTPUT='a-%p' expands to more than 5 bytes");
    CHECK_HAS(d.line[0], "the profiler is off for this run");
    CHECK_STR(out, "");
    /* A host name that overflows. */
    CHECK_EQ_U64(gmp_config_expand_output("%h", out, 4, 1, "longhost", 0, 0, &d), (uint64_t)-1);
    CHECK_EQ_U64(d.count, 2);

    /* Bad escapes. */
    memset(&d, 0, sizeof d);
    CHECK_EQ_U64(gmp_config_expand_output("x-%d", out, sizeof out, 1, "h", 0, 0, &d), (uint64_t)-1);
    CHECK_EQ_U64(d.count, 1);
    CHECK_HAS(d.line[0], "unknown escape '%d'");
    CHECK_HAS(d.line[0], "the profiler is off for this run");
    CHECK_EQ_U64(gmp_config_expand_output("x%", out, sizeof out, 1, "h", 0, 0, &d), (uint64_t)-1);
    CHECK_HAS(d.line[1], "lone '%'");
    CHECK_EQ_U64(gmp_config_expand_output("x", out, 0, 1, "h", 0, 0, &d), (uint64_t)-1);
    CHECK_EQ_U64(d.count, 3);
}

static void test_rank(void)
{
    fenv none = {{0}, {0}, 0};
    fenv r = {{"RANK", "LOCAL_RANK"}, {"5", "2"}, 2};
    fenv lr = {{"LOCAL_RANK"}, {"2"}, 1};
    fenv badr = {{"RANK", "LOCAL_RANK"}, {"abc", "1"}, 2};
    fenv neg = {{"RANK"}, {"-3"}, 1};
    fenv ws = {{"WORLD_SIZE"}, {" 8 "}, 1};
    CHECK_EQ_U64(gmp_config_rank(fenv_get, &r), 5);
    CHECK_EQ_U64(gmp_config_rank(fenv_get, &lr), 2);
    CHECK_EQ_U64(gmp_config_rank(fenv_get, &none), (uint64_t)-1);
    CHECK_EQ_U64(gmp_config_rank(fenv_get, &badr), 1);
    CHECK_EQ_U64(gmp_config_rank(fenv_get, &neg), (uint64_t)-1);
    CHECK_EQ_U64(gmp_config_env_int(fenv_get, &none, "WORLD_SIZE"), (uint64_t)-1);
    CHECK_EQ_U64(gmp_config_env_int(fenv_get, &ws, "WORLD_SIZE"), 8);
    CHECK_EQ_U64(gmp_config_env_int(fenv_get, &neg, "RANK"), (uint64_t)-1);
}

/* ---- describe ------------------------------------------------------------------ */

static void test_describe(void)
{
    gmp_config c;
    char out[1024];
    gmp_config_defaults(&c);
    const char *expect =
        "enabled=1;output=gmemprof-%h-%p.zst;schedule=whole;step_marker=step;tag_prefix=tag:;"
        "sample_ms=100;flush_ms=1000;host_buffer_mb=64;cupti_buffer_kb=1024;device_buffer_kb=1024;"
        "kernels=launch;zstd_level=3;log=info";
    CHECK_EQ_U64(gmp_config_describe(&c, out, sizeof out), strlen(expect));
    CHECK_STR(out, expect);

    fenv e = {{"GMEMPROF_OUTPUT", "GMEMPROF_SCHEDULE", "GMEMPROF_LOG", "GMEMPROF_KERNELS"},
              {"/t/a;b\\c-%p", "wait=1,active=2", "debug", "off"},
              4};
    CHECK_EQ_U64(gmp_config_load(&c, fenv_get, &e, NULL), 0);
    gmp_config_describe(&c, out, sizeof out);
    CHECK_HAS(out, ";output=/t/a\\;b\\\\c-%p;");
    CHECK_HAS(out, ";schedule=skip_first=0,wait=1,warmup=0,active=2,repeat=1;");
    CHECK_HAS(out, ";kernels=0;");
    CHECK_HAS(out, ";log=debug");
    fenv l = {{"GMEMPROF_KERNELS"}, {"gpu"}, 1};
    CHECK_EQ_U64(gmp_config_load(&c, fenv_get, &l, NULL), 0);
    gmp_config_describe(&c, out, sizeof out);
    CHECK_HAS(out, ";kernels=1;");
    CHECK(!strstr(out, "ALLOC_CONF"));
    /* PyTorch's allocator settings, as the process had them: each name
     * recorded when set, a ';' in a value escaped */
    fenv a = {{"PYTORCH_CUDA_ALLOC_CONF", "PYTORCH_ALLOC_CONF"},
              {"expandable_segments:True,max_split_size_mb:128", "garbage_collection_threshold:0.6;x"},
              2};
    CHECK_EQ_U64(gmp_config_load(&c, fenv_get, &a, NULL), 0);
    gmp_config_describe(&c, out, sizeof out);
    CHECK_HAS(out, ";PYTORCH_ALLOC_CONF=garbage_collection_threshold:0.6\\;x;"
                   "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True,max_split_size_mb:128");
    fenv a1 = {{"PYTORCH_CUDA_ALLOC_CONF"}, {"expandable_segments:True"}, 1};
    CHECK_EQ_U64(gmp_config_load(&c, fenv_get, &a1, NULL), 0);
    gmp_config_describe(&c, out, sizeof out);
    CHECK(!strstr(out, "PYTORCH_ALLOC_CONF="));
    CHECK_HAS(out, ";PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True");

    char small[10];
    memset(small, 'Q', sizeof small);
    size_t need = gmp_config_describe(&c, small, 8);
    CHECK(need > 100);
    CHECK_STR(small, "enabled");
    CHECK(small[8] == 'Q');
    CHECK_EQ_U64(gmp_config_describe(&c, NULL, 0), need);
}

/* ---- step markers and tags --------------------------------------------------- */

static void test_markers(void)
{
    gmp_config c;
    gmp_config_defaults(&c);
    static const char *const yes[] = {"step", "step 12", "step:3", "step#3", "step_4", "step-5", "step7",
                                      "step:", "step train"};
    static const char *const no[] = {"steps", "stepper", "Step", "STEP", "train_step", " step", "ste",
                                     "", "step.1", "step/1"};
    for (size_t i = 0; i < sizeof yes / sizeof yes[0]; i++) {
        if (!gmp_config_is_step_marker(&c, yes[i]))
            fprintf(stderr, "expected '%s' to be a step\n", yes[i]);
        CHECK(gmp_config_is_step_marker(&c, yes[i]));
    }
    for (size_t i = 0; i < sizeof no / sizeof no[0]; i++) {
        if (gmp_config_is_step_marker(&c, no[i]))
            fprintf(stderr, "expected '%s' not to be a step\n", no[i]);
        CHECK(!gmp_config_is_step_marker(&c, no[i]));
    }
    CHECK(!gmp_config_is_step_marker(&c, NULL));
    CHECK(!gmp_config_is_step_marker(NULL, "step"));
    snprintf(c.step_marker, sizeof c.step_marker, "iter");
    CHECK(gmp_config_is_step_marker(&c, "iter 3"));
    CHECK(!gmp_config_is_step_marker(&c, "step"));
    c.step_marker[0] = '\0';
    CHECK(!gmp_config_is_step_marker(&c, "step"));
    CHECK(!gmp_config_is_step_marker(&c, ""));

    const char *tag = NULL;
    gmp_config_defaults(&c);
    CHECK(gmp_config_tag_name(&c, "tag:after_model", &tag) == 1);
    CHECK_STR(tag, "after_model");
    CHECK(gmp_config_tag_name(&c, "tag:  before optimizer", &tag) == 1);
    CHECK_STR(tag, "before optimizer");
    tag = "unchanged";
    CHECK(gmp_config_tag_name(&c, "tag:", &tag) == 0);
    CHECK(gmp_config_tag_name(&c, "tag:   ", &tag) == 0);
    CHECK(gmp_config_tag_name(&c, "Tag:x", &tag) == 0);
    CHECK(gmp_config_tag_name(&c, "xtag:a", &tag) == 0);
    CHECK(gmp_config_tag_name(&c, "step", &tag) == 0);
    CHECK(gmp_config_tag_name(&c, NULL, &tag) == 0);
    CHECK_STR(tag, "unchanged");
    CHECK(gmp_config_tag_name(&c, "tag:x", NULL) == 1);
    snprintf(c.tag_prefix, sizeof c.tag_prefix, "snap/");
    CHECK(gmp_config_tag_name(&c, "snap/epoch 3", &tag) == 1);
    CHECK_STR(tag, "epoch 3");
    CHECK(gmp_config_tag_name(&c, "tag:x", &tag) == 0);
}

/* ---- single values and names ------------------------------------------------- */

static void test_check_value(void)
{
    char err[GMP_DIAG_LINE];
    CHECK(gmp_config_check_value("GMEMPROF_SAMPLE_MS", "50", err, sizeof err) == 0);
    CHECK_STR(err, "");
    CHECK(gmp_config_check_value("GMEMPROF_SAMPLE_MS", "", err, sizeof err) == 0);
    CHECK(gmp_config_check_value("GMEMPROF_SCHEDULE", "2,1,3", err, sizeof err) == 0);
    CHECK(gmp_config_check_value("GMEMPROF_OUTPUT", "x-%p.zst", err, sizeof err) == 0);
    CHECK(gmp_config_check_value("GMEMPROF_SAMPLE_MS", "abc", err, sizeof err) == -1);
    CHECK_STR(err, "GMEMPROF_SAMPLE_MS='abc' is not a number of milliseconds (0..3600000; 0 turns sampling off)");
    CHECK(gmp_config_check_value("GMEMPROF_NOPE", "1", err, sizeof err) == -1);
    CHECK_STR(err, "GMEMPROF_NOPE is not a gmemprof setting");
    CHECK(gmp_config_check_value("GMEMPROF_LOG", "x", NULL, 0) == -1);
}

static void test_check_names(void)
{
    char *envp[] = {
        "PATH=/bin",
        "GMEMPROF_OUTPUT=x.zst",
        "GMEMPROF_SCHEDUEL=wait=1,active=1", /* typo */
        "GMEMPROF_sample_ms=5",              /* wrong case */
        "GMEMPROF_SOMETHING_ELSE_ENTIRELY=1",
        "GMEMPROF_TEST_SCRIPT=/x",           /* reserved for tests */
        "GMEMPROF_LIB=/lib.so",
        "GMEMPROF_SUMMARY_FILE=/tmp/s",
        "GMEMPROF_NOVALUE",
        "GMEMPROFX=1",
        NULL,
    };
    gmp_diag d;
    memset(&d, 0, sizeof d);
    CHECK_EQ_U64(gmp_config_check_names(envp, &d), 4);
    CHECK_EQ_U64(d.count, 4);
    CHECK_STR(d.line[0], "GMEMPROF_SCHEDUEL is not a gmemprof setting (did you mean GMEMPROF_SCHEDULE?); it is ignored");
    CHECK_HAS(d.line[1], "GMEMPROF_sample_ms is not a gmemprof setting (did you mean GMEMPROF_SAMPLE_MS?)");
    CHECK_HAS(d.line[2], "GMEMPROF_SOMETHING_ELSE_ENTIRELY is not a gmemprof setting (" GMEMPROF_DOCDIR "/user-guide.md");
    CHECK_HAS(d.line[3], "GMEMPROF_NOVALUE is not a gmemprof setting");
    CHECK_EQ_U64(gmp_config_check_names(NULL, &d), 0);
}

/* Loads env e: its problem count, the first line in line0. */
static int load_env(fenv *e, gmp_config *c, char *line0, size_t cap)
{
    gmp_diag diag;
    memset(&diag, 0, sizeof diag);
    int n = gmp_config_load(c, fenv_get, e, &diag);
    snprintf(line0, cap, "%s", diag.count ? diag.line[0] : "");
    return n;
}

/* The flight recorder: on-oom alone or through GMEMPROF_ON_OOM; kernels
 * off unless asked; its keys in the header's text only when on. */
static void test_on_oom(void)
{
    gmp_config c = load_one_ok("GMEMPROF_SCHEDULE", "on-oom");
    CHECK(c.on_oom && c.schedule.on_oom && c.schedule.kind == GMP_SCHED_WHOLE);
    CHECK_EQ_U64(c.kernels, GMP_KERNELS_NONE);
    CHECK_EQ_U64(c.oom_kernels, 0);
    CHECK_EQ_U64(gmp_config_oom_beside(&c), 0);
    CHECK_EQ_U64(c.oom_steps, 3);
    CHECK_EQ_U64(c.oom_max_mb, 256);
    c = load_one_ok("GMEMPROF_ON_OOM", "1");
    CHECK(c.on_oom && c.kernels == GMP_KERNELS_NONE);
    char d[2048], line[GMP_DIAG_LINE];
    gmp_config_describe(&c, d, sizeof d);
    CHECK_HAS(d, "schedule=on-oom;");
    CHECK_HAS(d, "oom_steps=3;oom_seconds=30;oom_max_mb=256;oom_dumps=3");
    fenv e = {{"GMEMPROF_ON_OOM", "GMEMPROF_KERNELS"}, {"yes", "launch"}, 2};
    CHECK_EQ_U64(load_env(&e, &c, line, sizeof line), 0);
    CHECK_EQ_U64(c.kernels, GMP_KERNELS_LAUNCH);
    CHECK_EQ_U64(c.oom_kernels, 1);
    gmp_sched_spec sp;
    char err[256];
    CHECK(gmp_sched_parse(" ON-OOM ", &sp, err, sizeof err) == 0 && sp.on_oom && sp.kind == GMP_SCHED_WHOLE);
    gmp_config plain = load_one_ok("GMEMPROF_SCHEDULE", "whole");
    gmp_config_describe(&plain, d, sizeof d);
    CHECK(!strstr(d, "oom_"), "%s", d);
    CHECK_EQ_U64(plain.oom_kernels, 0);
    CHECK_EQ_U64(gmp_config_oom_beside(&plain), 0);
}

/* The flight recorder beside a schedule of windows: every schedule form is
 * accepted, in GMEMPROF_SCHEDULE or with GMEMPROF_ON_OOM; the trace keeps
 * the kernel setting it has without the recorder (launch by default), the
 * recorder keeps kernels only when GMEMPROF_KERNELS is given. Still
 * refused: on-oom named twice, or after another form. */
static void test_on_oom_beside(void)
{
    char line[GMP_DIAG_LINE], d[2048];
    gmp_config c = load_one_ok("GMEMPROF_SCHEDULE", "on-oom,wait=2,warmup=1,active=3");
    CHECK(c.on_oom && c.schedule.on_oom && c.schedule.kind == GMP_SCHED_STEPS);
    CHECK(c.schedule.wait == 2 && c.schedule.warmup == 1 && c.schedule.active == 3 && c.schedule.repeat == 1);
    CHECK_EQ_U64(gmp_config_oom_beside(&c), 1);
    CHECK_EQ_U64(c.kernels, GMP_KERNELS_LAUNCH);
    CHECK_EQ_U64(c.oom_kernels, 0);
    gmp_config_describe(&c, d, sizeof d);
    CHECK_HAS(d, "schedule=on-oom,skip_first=0,wait=2,warmup=1,active=3,repeat=1;");
    CHECK_HAS(d, "oom_steps=3;");

    /* the launcher's form: --on-oom and --schedule as two variables */
    fenv t = {{"GMEMPROF_ON_OOM", "GMEMPROF_SCHEDULE"}, {"1", "delay=5s,duration=10s"}, 2};
    CHECK_EQ_U64(load_env(&t, &c, line, sizeof line), 0);
    CHECK(c.on_oom && c.schedule.on_oom && c.schedule.kind == GMP_SCHED_TIME);
    CHECK_EQ_U64(c.schedule.delay_ns, 5000000000ull);
    CHECK_EQ_U64(gmp_config_oom_beside(&c), 1);
    fenv cap = {{"GMEMPROF_ON_OOM", "GMEMPROF_SCHEDULE"}, {"1", "capture"}, 2};
    CHECK_EQ_U64(load_env(&cap, &c, line, sizeof line), 0);
    CHECK(c.on_oom && c.schedule.kind == GMP_SCHED_CAPTURE && gmp_config_oom_beside(&c));
    fenv whole = {{"GMEMPROF_ON_OOM", "GMEMPROF_SCHEDULE"}, {"1", "whole"}, 2};
    CHECK_EQ_U64(load_env(&whole, &c, line, sizeof line), 0);
    CHECK(c.on_oom && c.schedule.kind == GMP_SCHED_WHOLE && !gmp_config_oom_beside(&c));
    CHECK_EQ_U64(c.kernels, GMP_KERNELS_NONE); /* the recorder alone */

    /* kernels given: the trace and the recorder both */
    fenv kg = {{"GMEMPROF_SCHEDULE", "GMEMPROF_KERNELS"}, {"on-oom,2,1,3", "gpu"}, 2};
    CHECK_EQ_U64(load_env(&kg, &c, line, sizeof line), 0);
    CHECK(c.kernels == GMP_KERNELS_GPU && c.oom_kernels == 1 && c.schedule.active == 3);
    fenv kn = {{"GMEMPROF_SCHEDULE", "GMEMPROF_KERNELS"}, {"on-oom,2,1,3", "none"}, 2};
    CHECK_EQ_U64(load_env(&kn, &c, line, sizeof line), 0);
    CHECK(c.kernels == GMP_KERNELS_NONE && c.oom_kernels == 0);

    /* still refused: one line naming the value and the form to use; the
     * schedule falls back to the whole run without the recorder */
    fenv twice = env1("GMEMPROF_SCHEDULE", "on-oom,on-oom");
    CHECK_EQ_U64(load_env(&twice, &c, line, sizeof line), 1);
    CHECK_HAS(line, "names on-oom twice");
    CHECK(!c.on_oom && c.schedule.kind == GMP_SCHED_WHOLE, "on_oom %d kind %d", c.on_oom, c.schedule.kind);
    fenv after = env1("GMEMPROF_SCHEDULE", "wait=2,active=3,on-oom");
    CHECK_EQ_U64(load_env(&after, &c, line, sizeof line), 1);
    CHECK_HAS(line, "GMEMPROF_SCHEDULE");
    CHECK(!c.on_oom);
}

int main(void)
{
    test_on_oom();
    test_on_oom_beside();
    test_defaults();
    test_good_values();
    test_bad_values();
    test_many_problems();
    test_diag();
    test_expand();
    test_rank();
    test_describe();
    test_markers();
    test_check_value();
    test_check_names();
    return tc_result("test_config");
}
