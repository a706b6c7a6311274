/*
 * Interned source frames and stacks (frames.c): the framework bridge hands
 * a frame's text ("FILE:LINE FUNCTION") or a whole stack once and gets a
 * small id, which its block events carry from then on; the writer thread
 * reads the text back by id when it writes the block.
 *
 * Ids start at 1 and are never reused. A text, once published, never moves
 * or changes until gmp_frames_reset, so the writer reads it without a lock.
 */
#ifndef GMEMPROF_PROFILER_FRAMES_H
#define GMEMPROF_PROFILER_FRAMES_H

#include <stddef.h>
#include <stdint.h>

/* The most texts kept; past it gmp_frames_intern answers 0 (no frame). */
#define GMP_FRAMES_MAX (1u << 22)

/* Copies s (n bytes) and returns its id, or 0 (out of memory, or full).
 * Takes the table's lock: once per distinct text, never per allocation. */
uint32_t gmp_frames_intern(const char *s, size_t n);
/* The text of id, with *n its length; NULL for 0 or an unknown id. */
const char *gmp_frames_get(uint32_t id, size_t *n);
/* Forgets every text (tests; the library is never unloaded). Only while
 * nothing interns or reads. */
void gmp_frames_reset(void);

#endif
