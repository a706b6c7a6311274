/*
 * The checks of every C test: a failed check prints where, what and an
 * optional message, and the test goes on so that one run shows every
 * failure; main returns tc_result(name). Header-only (static functions), so
 * each test stays one .c file.
 *
 *   CHECK(cond)                      CHECK(cond, "fmt", args...)
 *   CHECK_EQ_U64(a, b)               CHECK_STR(a, b)     CHECK_HAS(hay, needle)
 *   REQUIRE(cond, "fmt", args...)    fatal: the test cannot go on (setup failed)
 *   tc_context("fmt", args...)       printed with every later failure (a case
 *                                    name, an iteration); tc_context(NULL) clears it
 *
 * A test that may fail in a loop defines TC_MAX_FAILURES before including
 * this header: it stops after that many failures instead of flooding.
 */
#ifndef GMEMPROF_TESTS_CHECK_H
#define GMEMPROF_TESTS_CHECK_H

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef TC_MAX_FAILURES
#define TC_MAX_FAILURES 0 /* no limit */
#endif

static int tc_failures;
static int tc_checks;
static char tc_where[160];

static inline void tc_context(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static inline void tc_context(const char *fmt, ...)
{
    tc_where[0] = 0;
    if (!fmt)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(tc_where, sizeof tc_where, fmt, ap);
    va_end(ap);
}

/* fmt starts with one space (so that an absent message is not an empty
 * format string); the message is what follows it. */
static inline void tc_fail(const char *file, int line, const char *kind, const char *what, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
static inline void tc_fail(const char *file, int line, const char *kind, const char *what, const char *fmt, ...)
{
    tc_failures++;
    fprintf(stderr, "%s:%d: %s failed: %s", file, line, kind, what);
    if (tc_where[0])
        fprintf(stderr, " [%s]", tc_where);
    if (fmt[1]) {
        va_list ap;
        va_start(ap, fmt);
        fputs(":", stderr);
        vfprintf(stderr, fmt, ap);
        va_end(ap);
    }
    fputc('\n', stderr);
    if (TC_MAX_FAILURES > 0 && tc_failures >= TC_MAX_FAILURES) {
        fprintf(stderr, "%d failures, stopping\n", tc_failures);
        exit(1);
    }
}

#define CHECK(cond, ...)                                                                           \
    do {                                                                                           \
        tc_checks++;                                                                               \
        if (!(cond))                                                                               \
            tc_fail(__FILE__, __LINE__, "CHECK", #cond, " " __VA_ARGS__);                          \
    } while (0)

#define REQUIRE(cond, ...)                                                                         \
    do {                                                                                           \
        tc_checks++;                                                                               \
        if (!(cond)) {                                                                             \
            tc_fail(__FILE__, __LINE__, "REQUIRE", #cond, " " __VA_ARGS__);                        \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

#define CHECK_EQ_U64(a, b)                                                                         \
    do {                                                                                           \
        uint64_t tc_a = (uint64_t)(a), tc_b = (uint64_t)(b);                                       \
        tc_checks++;                                                                               \
        if (tc_a != tc_b)                                                                          \
            tc_fail(__FILE__, __LINE__, "CHECK", #a " == " #b, " %" PRIu64 " != %" PRIu64, tc_a,   \
                    tc_b);                                                                         \
    } while (0)

#define CHECK_STR(a, b)                                                                            \
    do {                                                                                           \
        const char *tc_a = (a), *tc_b = (b);                                                       \
        tc_checks++;                                                                               \
        if (!tc_a || !tc_b || strcmp(tc_a, tc_b) != 0)                                             \
            tc_fail(__FILE__, __LINE__, "CHECK", #a " == " #b, "\n  got      '%s'\n  expected '%s'", \
                    tc_a ? tc_a : "(null)", tc_b ? tc_b : "(null)");                               \
    } while (0)

/* Substring check, for messages: the test names the parts that must be there. */
#define CHECK_HAS(hay, needle)                                                                     \
    do {                                                                                           \
        const char *tc_h = (hay), *tc_n = (needle);                                                \
        tc_checks++;                                                                               \
        if (!tc_h || !strstr(tc_h, tc_n))                                                          \
            tc_fail(__FILE__, __LINE__, "CHECK", #hay " contains " #needle, " '%s' in '%s'", tc_n, \
                    tc_h ? tc_h : "(null)");                                                       \
    } while (0)

static inline int tc_result(const char *name)
{
    if (tc_failures) {
        fprintf(stderr, "%s: %d of %d checks FAILED\n", name, tc_failures, tc_checks);
        return 1;
    }
    fprintf(stderr, "%s: all %d checks passed\n", name, tc_checks);
    return 0;
}

#endif
