/*
 * The profiler's stderr: one "gmemprof: ..." line per message, written with a
 * single write() so lines of several threads or processes never interleave.
 * Errors print at every GMEMPROF_LOG level (a problem is never silent); info
 * and debug follow the level (gmp_g.cfg.log).
 */
#ifndef GMEMPROF_PROFILER_LOG_H
#define GMEMPROF_PROFILER_LOG_H

void gmp_log_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void gmp_log_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void gmp_log_debug(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
