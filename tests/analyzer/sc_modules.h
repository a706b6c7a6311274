/*
 * The module scenario (sc_modules.c): nn.Module ranges forward and
 * backward on two threads, ops inside them, frames on the blocks.
 */
#ifndef GMA_TEST_SC_MODULES_H
#define GMA_TEST_SC_MODULES_H

#include <stdint.h>

/* head_mib: the bytes M.head's forward allocates (8 in "modules", 24 in
 * "modules_b", the --diff side). 0, or -1 with a message on stderr. */
int sc_modules_write(const char *path, uint64_t head_mib);
int sc_modules(const char *path);
int sc_modules_b(const char *path);
/* A failure inside a module (sc_modules.c's comment works out the numbers). */
int sc_oom_modules(const char *path);
/* Parameters and buffers named by OWNER records (the numbers: sc_modules.c). */
int sc_modules_owned(const char *path);

#endif
