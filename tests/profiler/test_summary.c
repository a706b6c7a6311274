/*
 * The summary line shared by the library (writer) and the launcher (reader):
 * exact text, round trips with awkward paths, and malformed lines refused.
 */
#include <stdlib.h>

#include "summary.h"
#include "../check.h"

/* The line of the fields that every line has. */
static size_t fmt(char *out, size_t cap, const char *path, uint64_t bytes, uint64_t windows, uint64_t records,
                  uint64_t dropped, const char *status)
{
    static gmp_summary s;
    memset(&s, 0, sizeof s);
    snprintf(s.trace, sizeof s.trace, "%s", path ? path : "");
    snprintf(s.status, sizeof s.status, "%s", status ? status : "");
    s.bytes = bytes;
    s.windows = windows;
    s.records = records;
    s.dropped = dropped;
    return gmp_summary_format_line(out, cap, &s);
}

static void test_steps(void)
{
    char line[GMP_SUMMARY_LINE_MAX];
    gmp_summary s, back;
    memset(&s, 0, sizeof s);
    snprintf(s.trace, sizeof s.trace, "t.zst");
    snprintf(s.status, sizeof s.status, "ok");
    s.steps = 12;
    snprintf(s.step_source, sizeof s.step_source, "optimizer");
    gmp_summary_format_line(line, sizeof line, &s);
    CHECK_STR(line, "trace=t.zst\tbytes=0\twindows=0\trecords=0\tdropped=0\tsteps=12\tstep_source=optimizer\t"
                    "status=ok\n");
    CHECK_EQ_U64(gmp_summary_parse_line(line, &back), 0);
    CHECK_EQ_U64(back.steps, 12);
    CHECK_STR(back.step_source, "optimizer");
    /* a line without them (an older library, or no step) reads as 0 steps */
    CHECK_EQ_U64(gmp_summary_parse_line("trace=t.zst\tstatus=ok", &back), 0);
    CHECK_EQ_U64(back.steps, 0);
    CHECK_STR(back.step_source, "");
    CHECK_EQ_U64(gmp_summary_parse_line("trace=t.zst\tsteps=x\tstatus=ok", &back), (uint64_t)-1);
}

static void test_format(void)
{
    char line[GMP_SUMMARY_LINE_MAX];
    const char *expect = "trace=/w/gmemprof-h-1234.zst\tbytes=1258291\twindows=3\trecords=48213\t"
                         "dropped=0\tstatus=ok\n";
    size_t n = fmt(line, sizeof line, "/w/gmemprof-h-1234.zst", 1258291, 3, 48213, 0,
                                       GMP_SUMMARY_STATUS_OK);
    CHECK_STR(line, expect);
    CHECK_EQ_U64(n, strlen(expect));

    /* Escapes: backslash, tab, newline, carriage return. */
    n = fmt(line, sizeof line, "a\\b\tc\nd\re", 0, 0, 0, 0, "incomplete");
    CHECK_STR(line, "trace=a\\\\b\\tc\\nd\\re\tbytes=0\twindows=0\trecords=0\tdropped=0\tstatus=incomplete\n");

    /* Too small: the length needed, and an empty string, never half a line. */
    char small[20];
    memset(small, 'Q', sizeof small);
    n = fmt(small, sizeof small, "/x", 1, 2, 3, 4, "ok");
    CHECK_EQ_U64(n, strlen("trace=/x\tbytes=1\twindows=2\trecords=3\tdropped=4\tstatus=ok\n"));
    CHECK_STR(small, "");
    CHECK_EQ_U64(fmt(NULL, 0, "/x", 1, 2, 3, 4, "ok"), n);
    /* Exactly fitting. */
    char *fit = malloc(n + 1);
    CHECK_EQ_U64(fmt(fit, n + 1, "/x", 1, 2, 3, 4, "ok"), n);
    CHECK_STR(fit, "trace=/x\tbytes=1\twindows=2\trecords=3\tdropped=4\tstatus=ok\n");
    free(fit);
    /* NULL path and status are empty. */
    fmt(line, sizeof line, NULL, 0, 0, 0, 0, NULL);
    CHECK_STR(line, "trace=\tbytes=0\twindows=0\trecords=0\tdropped=0\tstatus=\n");
}

static void test_round_trip(void)
{
    static const char *const paths[] = {"/plain/path.zst", "with space.zst", "tab\there", "nl\nhere",
                                        "back\\slash\\", "cr\r", "=equals=", "ünïcode-✓.zst"};
    for (size_t i = 0; i < sizeof paths / sizeof paths[0]; i++) {
        char line[GMP_SUMMARY_LINE_MAX];
        gmp_summary s;
        fmt(line, sizeof line, paths[i], UINT64_MAX, i, 1000000 + i, 7, "disabled");
        CHECK(strchr(line, '\n') == line + strlen(line) - 1); /* one line */
        CHECK_EQ_U64(gmp_summary_parse_line(line, &s), 0);
        CHECK_STR(s.trace, paths[i]);
        CHECK_EQ_U64(s.bytes, UINT64_MAX);
        CHECK_EQ_U64(s.windows, i);
        CHECK_EQ_U64(s.records, 1000000 + i);
        CHECK_EQ_U64(s.dropped, 7);
        CHECK_STR(s.status, "disabled");
    }
    /* The longest path the struct holds. */
    char *p = malloc(GMP_SUMMARY_PATH_MAX);
    memset(p, '\t', GMP_SUMMARY_PATH_MAX - 1);
    p[GMP_SUMMARY_PATH_MAX - 1] = '\0';
    char *line = malloc(GMP_SUMMARY_LINE_MAX);
    gmp_summary *s = malloc(sizeof *s);
    CHECK(fmt(line, GMP_SUMMARY_LINE_MAX, p, 1, 1, 1, 1, "ok") < GMP_SUMMARY_LINE_MAX);
    CHECK_EQ_U64(gmp_summary_parse_line(line, s), 0);
    CHECK_STR(s->trace, p);
    free(p);
    free(line);
    free(s);
}

static void test_parse(void)
{
    gmp_summary s;
    /* Field order does not matter, unknown keys are skipped, CRLF and a
     * missing newline are fine, missing numbers are 0. */
    CHECK_EQ_U64(gmp_summary_parse_line("status=ok\tnewkey=whatever\ttrace=/t.zst\trecords=5\r\n", &s), 0);
    CHECK_STR(s.trace, "/t.zst");
    CHECK_STR(s.status, "ok");
    CHECK_EQ_U64(s.records, 5);
    CHECK_EQ_U64(s.bytes, 0);
    CHECK_EQ_U64(gmp_summary_parse_line("trace=x\tstatus=ok", &s), 0);

    static const char *const bad[] = {
        "",
        "\n",
        "garbage",
        "trace=x",                                   /* no status */
        "status=ok",                                 /* no trace */
        "trace=x\tstatus=ok\tbytes=",                /* empty number */
        "trace=x\tstatus=ok\tbytes=12a",             /* bad number */
        "trace=x\tstatus=ok\tbytes=-1",
        "trace=x\tstatus=ok\tbytes=18446744073709551616", /* 2^64 */
        "trace=x\tstatus=ok\ttrace=y",               /* duplicate */
        "trace=x\t\tstatus=ok",                      /* empty field */
        "trace=x\tnoequals\tstatus=ok",
        "trace=x\t=v\tstatus=ok",                    /* empty key */
        "trace=a\\qb\tstatus=ok",                    /* bad escape */
        "trace=a\\\tstatus=ok",                      /* escape at the end of a field */
        "trace=x\tstatus=this-status-is-far-too-long-for-the-field",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        if (gmp_summary_parse_line(bad[i], &s) != -1)
            fprintf(stderr, "  accepted bad line %zu\n", i);
        CHECK_EQ_U64(gmp_summary_parse_line(bad[i], &s), (uint64_t)-1);
    }
    CHECK_EQ_U64(gmp_summary_parse_line(NULL, &s), (uint64_t)-1);
    CHECK_EQ_U64(gmp_summary_parse_line("trace=x\tstatus=ok", NULL), (uint64_t)-1);
    CHECK_EQ_U64(gmp_summary_parse_line("trace=x\tbytes=18446744073709551615\tstatus=ok", &s), 0);
    CHECK_EQ_U64(s.bytes, UINT64_MAX);
}

/* The flight recorder's keys: appended before the newline, read back; a
 * rank only when there is one; a line without them says so. */
static void test_oom_keys(void)
{
    char line[GMP_SUMMARY_LINE_MAX];
    gmp_summary s;
    size_t n = fmt(line, sizeof line, "/t/d-1.zst", 1024, 1, 34, 0, GMP_SUMMARY_STATUS_OOM);
    size_t m = gmp_summary_add_oom(line, sizeof line, 1, 393528, 8388608, 1);
    CHECK(m > n && m == strlen(line) && line[m - 1] == '\n', "%s", line);
    CHECK_HAS(line, "\tstatus=oom\tdumps=1\tring=393528\tring_cap=8388608\trank=1\n");
    CHECK_EQ_U64(gmp_summary_parse_line(line, &s), 0);
    CHECK(s.has_oom && s.dumps == 1 && s.ring == 393528 && s.ring_cap == 8388608 && s.has_rank && s.rank == 1);
    CHECK_STR(s.status, "oom");
    fmt(line, sizeof line, "/t/d.zst", 0, 0, 0, 0, GMP_SUMMARY_STATUS_NO_OOM);
    gmp_summary_add_oom(line, sizeof line, 0, 100, 200, -1);
    CHECK(!strstr(line, "rank="), "%s", line);
    CHECK_EQ_U64(gmp_summary_parse_line(line, &s), 0);
    CHECK(s.has_oom && !s.has_rank && s.dumps == 0);
    CHECK_EQ_U64(gmp_summary_parse_line("trace=x\tstatus=ok", &s), 0);
    CHECK(!s.has_oom && !s.has_rank);
}

/* The recorder beside a trace: the trace's line, the recorder's keys and
 * its dump's (an escaped path, its size, its status); the parser gives both
 * files; a dump path as long as a trace path still fits the line. */
static void test_dump_keys(void)
{
    static char line[GMP_SUMMARY_LINE_MAX];
    static gmp_summary s;
    fmt(line, sizeof line, "/t/t-1.zst", 802, 1, 28, 0, GMP_SUMMARY_STATUS_OK);
    gmp_summary_add_oom(line, sizeof line, 1, 393528, 8388608, 1);
    size_t m = gmp_summary_add_dump(line, sizeof line, "/t/a\tb.oom.zst", 1229, GMP_SUMMARY_STATUS_OOM);
    CHECK(m == strlen(line) && line[m - 1] == '\n', "%s", line);
    CHECK_HAS(line, "\trank=1\tdump=/t/a\\tb.oom.zst\tdump_bytes=1229\tdump_status=oom\n");
    CHECK_EQ_U64(gmp_summary_parse_line(line, &s), 0);
    CHECK_STR(s.trace, "/t/t-1.zst");
    CHECK_STR(s.status, "ok");
    CHECK(s.has_oom && s.dumps == 1 && s.has_dump && s.dump_bytes == 1229);
    CHECK_STR(s.dump, "/t/a\tb.oom.zst");
    CHECK_STR(s.dump_status, "oom");
    /* the recorder alone has no dump keys */
    fmt(line, sizeof line, "/t/d.zst", 0, 0, 0, 0, GMP_SUMMARY_STATUS_NO_OOM);
    gmp_summary_add_oom(line, sizeof line, 0, 100, 200, -1);
    CHECK_EQ_U64(gmp_summary_parse_line(line, &s), 0);
    CHECK(s.has_oom && !s.has_dump);
    /* two paths of GMP_SUMMARY_PATH_MAX - 1 tabs (each escaped to 2 bytes) */
    static char p[GMP_SUMMARY_PATH_MAX];
    memset(p, '\t', sizeof p - 1);
    p[sizeof p - 1] = '\0';
    size_t n = fmt(line, sizeof line, p, 1, 1, 1, 1, GMP_SUMMARY_STATUS_INCOMPLETE);
    CHECK(n < sizeof line);
    n = gmp_summary_add_oom(line, sizeof line, UINT64_MAX, UINT64_MAX, UINT64_MAX, 2147483647);
    CHECK(n < sizeof line);
    n = gmp_summary_add_dump(line, sizeof line, p, UINT64_MAX, GMP_SUMMARY_STATUS_INCOMPLETE);
    CHECK(n < sizeof line, "%zu bytes for a line of %zu", n, sizeof line);
    CHECK_EQ_U64(gmp_summary_parse_line(line, &s), 0);
    CHECK_EQ_U64(strlen(s.dump), sizeof p - 1);
    /* a duplicate dump key is refused */
    CHECK_EQ_U64(gmp_summary_parse_line("trace=x\tstatus=ok\tdump=a\tdump=b", &s), (uint64_t)-1);
}

/* Sizes as the "wrote" line shows them: whole bytes below 1 KiB, one
 * decimal in KiB and MiB, two in GiB. */
static void test_human_bytes(void)
{
    char b[32];
    gmp_summary_human_bytes(0, b, sizeof b);
    CHECK_STR(b, "0 B");
    gmp_summary_human_bytes(1023, b, sizeof b);
    CHECK_STR(b, "1023 B");
    gmp_summary_human_bytes(1024, b, sizeof b);
    CHECK_STR(b, "1.0 KiB");
    gmp_summary_human_bytes(1536, b, sizeof b); /* 1.5 * 1024 */
    CHECK_STR(b, "1.5 KiB");
    gmp_summary_human_bytes(3u << 20, b, sizeof b);
    CHECK_STR(b, "3.0 MiB");
    gmp_summary_human_bytes((1u << 30) + (1u << 28), b, sizeof b); /* 1.25 GiB */
    CHECK_STR(b, "1.25 GiB");
}

int main(void)
{
    test_oom_keys();
    test_dump_keys();
    test_format();
    test_steps();
    test_round_trip();
    test_parse();
    test_human_bytes();
    return tc_result("test_summary");
}
