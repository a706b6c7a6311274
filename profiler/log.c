/*
 * The profiler's stderr lines (log.h).
 */
#include "log.h"

#include <stdarg.h>
#include <stdio.h>
#include <unistd.h>

#include "config.h"
#include "gmt_text.h"

/* Read from any thread; written once, at light init, before any other
 * profiler thread exists. */
static int g_level = GMP_LOG_QUIET;

void gmp_log_set_level(int level) { g_level = level; }

static void vlog(const char *fmt, va_list ap)
{
    char line[1024];
    char raw[sizeof line];
    int n = snprintf(line, sizeof line, "gmemprof: ");
    if (vsnprintf(raw, sizeof raw, fmt, ap) < 0)
        return;
    /* Escaped: a path or name with control bytes cannot break the line or the terminal. */
    size_t len = (size_t)n + gmt_text_escape(line + n, sizeof line - (size_t)n - 1, raw);
    if (len > sizeof line - 2)
        len = sizeof line - 2;
    line[len++] = '\n';
    /* One write: lines of several threads or processes never interleave. */
    ssize_t w = write(STDERR_FILENO, line, len);
    (void)w;
}

void gmp_log_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vlog(fmt, ap);
    va_end(ap);
}

void gmp_log_info(const char *fmt, ...)
{
    if (g_level < GMP_LOG_INFO)
        return;
    va_list ap;
    va_start(ap, fmt);
    vlog(fmt, ap);
    va_end(ap);
}

void gmp_log_debug(const char *fmt, ...)
{
    if (g_level < GMP_LOG_DEBUG)
        return;
    va_list ap;
    va_start(ap, fmt);
    vlog(fmt, ap);
    va_end(ap);
}

