/*
 * gmt_text: text shown to a person.  A path, a name or a value that came
 * from a user or a file may hold control bytes (an ESC sequence, a newline);
 * written raw they would drive the terminal or break a one-line message.
 * Shared by the profiler library, the launcher (libc only: it compiles
 * gmt_text.c itself) and the analyzer.
 */
#ifndef GMEMPROF_GMT_TEXT_H
#define GMEMPROF_GMT_TEXT_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Copies s into out (cap bytes, NUL-terminated, cut at cap - 1 without
 * splitting an escape) with every control byte (0x00-0x1f, 0x7f) written
 * as \n, \t, \r or \xHH; other bytes, UTF-8 included, as they are.  Returns
 * the length the whole escaped text needs (as snprintf).  NULL s is "". */
size_t gmt_text_escape(char *out, size_t cap, const char *s);
/* The same for n bytes of s (NUL bytes included). */
size_t gmt_text_escape_n(char *out, size_t cap, const char *s, size_t n);
/* Whether s holds a control byte. */
int gmt_text_has_ctrl(const char *s);

#ifdef __cplusplus
}
#endif
#endif
