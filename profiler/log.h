/*
 * The profiler's stderr: one "gmemprof: ..." line per message, written with a
 * single write() so lines of several threads or processes never interleave.
 * Errors print at every GMEMPROF_LOG level (a problem is never silent); info
 * and debug follow the level set at init (GMEMPROF_LOG); until then only
 * errors print.
 */
#ifndef GMEMPROF_PROFILER_LOG_H
#define GMEMPROF_PROFILER_LOG_H

/* The level (gmp_log_level, config.h) from the settings, once they are read. */
void gmp_log_set_level(int level);

void gmp_log_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void gmp_log_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void gmp_log_debug(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
