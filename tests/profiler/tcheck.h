/*
 * The profiler tests' names for the shared checks (tests/check.h): main
 * returns tcheck_result(name).
 */
#ifndef GMEMPROF_TESTS_TCHECK_H
#define GMEMPROF_TESTS_TCHECK_H

#include "../check.h"

#define tcheck_failures tc_failures
#define tcheck_checks tc_checks
#define tcheck_result tc_result

#endif
