/*
 * Minimal checks for the profiler unit tests: a failed check prints where
 * and what, and the test keeps going so one run shows every failure; main
 * returns tcheck_result().
 */
#ifndef GMEMPROF_TESTS_TCHECK_H
#define GMEMPROF_TESTS_TCHECK_H

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

static int tcheck_failures;
static int tcheck_checks;

#define CHECK(cond)                                                                                \
    do {                                                                                           \
        tcheck_checks++;                                                                           \
        if (!(cond)) {                                                                             \
            tcheck_failures++;                                                                     \
            fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond);               \
        }                                                                                          \
    } while (0)

#define CHECK_EQ_U64(a, b)                                                                         \
    do {                                                                                           \
        uint64_t tc_a = (uint64_t)(a), tc_b = (uint64_t)(b);                                       \
        tcheck_checks++;                                                                           \
        if (tc_a != tc_b) {                                                                        \
            tcheck_failures++;                                                                     \
            fprintf(stderr, "%s:%d: %s == %s failed: %" PRIu64 " != %" PRIu64 "\n", __FILE__,      \
                    __LINE__, #a, #b, tc_a, tc_b);                                                 \
        }                                                                                          \
    } while (0)

#define CHECK_STR(a, b)                                                                            \
    do {                                                                                           \
        const char *tc_a = (a), *tc_b = (b);                                                       \
        tcheck_checks++;                                                                           \
        if (!tc_a || !tc_b || strcmp(tc_a, tc_b) != 0) {                                           \
            tcheck_failures++;                                                                     \
            fprintf(stderr, "%s:%d: %s == %s failed:\n  got      '%s'\n  expected '%s'\n",        \
                    __FILE__, __LINE__, #a, #b, tc_a ? tc_a : "(null)", tc_b ? tc_b : "(null)");   \
        }                                                                                          \
    } while (0)

/* Substring check, for messages: the test names the parts that must be there. */
#define CHECK_HAS(hay, needle)                                                                     \
    do {                                                                                           \
        const char *tc_h = (hay), *tc_n = (needle);                                                \
        tcheck_checks++;                                                                           \
        if (!tc_h || !strstr(tc_h, tc_n)) {                                                        \
            tcheck_failures++;                                                                     \
            fprintf(stderr, "%s:%d: '%s' does not contain '%s'\n", __FILE__, __LINE__,            \
                    tc_h ? tc_h : "(null)", tc_n);                                                 \
        }                                                                                          \
    } while (0)

static inline int tcheck_result(const char *name)
{
    if (tcheck_failures) {
        fprintf(stderr, "%s: %d of %d checks FAILED\n", name, tcheck_failures, tcheck_checks);
        return 1;
    }
    fprintf(stderr, "%s: all %d checks passed\n", name, tcheck_checks);
    return 0;
}

#endif
