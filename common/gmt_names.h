/*
 * gmt_names: the file names that go with a trace.  The flight recorder's
 * dumps are named from the trace's path, and the analyzer finds them by the
 * same rule (docs/trace-format.md §4), and whether a name stands for an
 * open descriptor.  libc only.
 */
#ifndef GMEMPROF_GMT_NAMES_H
#define GMEMPROF_GMT_NAMES_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Dump k's file (k from 1) for the trace path `path`, into out (cap bytes,
 * NUL-terminated; cut at cap - 1).  Beside a trace (beside != 0):
 * NAME.oom.EXT, then NAME.oom.k.EXT (run.zst: run.oom.zst, run.oom.2.zst).
 * The recorder alone: the path itself, then NAME.k.EXT.  EXT is what
 * follows the last dot of the file's base name; a base name without one
 * (or with only a leading dot) has none.  Returns the length the whole
 * name needs (as snprintf): the name was cut when it is >= cap. */
size_t gmt_dump_name(char *out, size_t cap, const char *path, uint64_t k, int beside);

/* 1 when path, or a link on the way from it, lies in /proc: the name stands
 * for an open descriptor (/dev/stdout, /dev/fd/1, /proc/self/fd/1, a link
 * to one), not for a file that can be created or replaced.  0 otherwise,
 * also when path does not exist. */
int gmt_path_names_fd(const char *path);

#ifdef __cplusplus
}
#endif
#endif
