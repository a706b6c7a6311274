/*
 * The "copies" scenario of e2e_app (e2e_copies.c) and what e2e_test checks
 * of it: the addresses the fake driver describes.
 */
#ifndef GMEMPROF_TESTS_E2E_COPIES_H
#define GMEMPROF_TESTS_E2E_COPIES_H

#include <stdint.h>

#define E2E_DEV0 0x7f0000000000ull    /* device memory of device 0 */
#define E2E_DEV1 0x7f1000000000ull    /* device memory of device 1 */
#define E2E_PINNED 0x600000000ull     /* pinned host memory */
#define E2E_MANAGED 0x7f2000000000ull /* managed memory */

typedef void (*e2e_fact_fn)(const char *key, uint64_t v);
int e2e_sc_copies(e2e_fact_fn fact);

#endif
