/*
 * The summary handshake between libgmemprof.so and the gmemprof launcher.
 *
 * The launcher sets GMEMPROF_SUMMARY_FILE to an empty temporary file. When a
 * profiled process ends, the library appends ONE line to it, written with a
 * single write() on a descriptor opened with O_WRONLY|O_APPEND (so lines of
 * several processes never interleave):
 *
 *   trace=<path>\tbytes=<n>\twindows=<n>\trecords=<n>\tdropped=<n>[\tsteps=<n>\tstep_source=<name>]\tstatus=<ok|incomplete|disabled>\n
 *
 * <path> is the trace file (absolute, so the launcher can show it relative
 * to its own directory); '\\', TAB, LF and CR in it are written as "\\\\",
 * "\\t", "\\n", "\\r". bytes: compressed size of the trace; windows: windows
 * begun; records: records written; dropped: records lost (CUPTI + writer);
 * steps: training steps seen, step_source: what made them (a
 * gmt_step_source name), both left out when no step was seen.
 * status: ok (trailer written), incomplete (some frames could not be
 * written: disk full or an I/O error; the trailer says so), disabled (the profiler turned itself off; the
 * reason was printed on stderr). The parser ignores keys it does not know,
 * so fields can be added later.
 */
#ifndef GMEMPROF_PROFILER_SUMMARY_H
#define GMEMPROF_PROFILER_SUMMARY_H

#include <stddef.h>
#include <stdint.h>

#define GMP_SUMMARY_ENV "GMEMPROF_SUMMARY_FILE"

#define GMP_SUMMARY_KEY_TRACE "trace"
#define GMP_SUMMARY_KEY_BYTES "bytes"
#define GMP_SUMMARY_KEY_WINDOWS "windows"
#define GMP_SUMMARY_KEY_RECORDS "records"
#define GMP_SUMMARY_KEY_DROPPED "dropped"
#define GMP_SUMMARY_KEY_STATUS "status"
#define GMP_SUMMARY_KEY_STEPS "steps"
#define GMP_SUMMARY_KEY_STEP_SOURCE "step_source"
/* The flight recorder's line (GMEMPROF_SCHEDULE=on-oom) adds: dumps written,
 * the ring's peak memory and its cap (bytes), and the rank (when RANK or
 * LOCAL_RANK is set). Its status is "oom" (trace= names the first dump) or
 * "no-oom" (nothing was written; trace= names the file a dump would have
 * taken). */
#define GMP_SUMMARY_KEY_DUMPS "dumps"
#define GMP_SUMMARY_KEY_RING "ring"
#define GMP_SUMMARY_KEY_RING_CAP "ring_cap"
#define GMP_SUMMARY_KEY_RANK "rank"
#define GMP_SUMMARY_STATUS_OOM "oom"
#define GMP_SUMMARY_STATUS_NO_OOM "no-oom"
/* The flight recorder beside a schedule of windows: the line is the trace's
 * (trace=, its status ok|incomplete), with the recorder's keys above and
 * its dumps': dump (the first dump, or the file a dump would have taken),
 * dump_bytes and dump_status (oom, no-oom or incomplete). */
#define GMP_SUMMARY_KEY_DUMP "dump"
#define GMP_SUMMARY_KEY_DUMP_BYTES "dump_bytes"
#define GMP_SUMMARY_KEY_DUMP_STATUS "dump_status"

#define GMP_SUMMARY_STATUS_OK "ok"
#define GMP_SUMMARY_STATUS_INCOMPLETE "incomplete"
#define GMP_SUMMARY_STATUS_DISABLED "disabled"
/* The process started CUDA (cuInit loaded the library) but never created a
 * context, so it had nothing to record: its trace file was removed. A
 * launcher's own process does this (torchrun's agent queries the devices). */
#define GMP_SUMMARY_STATUS_NOCTX "no-context"

#define GMP_SUMMARY_PATH_MAX 4096
/* Enough for any line the formatter writes for paths < GMP_SUMMARY_PATH_MAX
 * (every byte of both paths escaped, the numbers, keys, statuses). */
#define GMP_SUMMARY_LINE_MAX (4 * GMP_SUMMARY_PATH_MAX + 768)

typedef struct gmp_summary {
    char trace[GMP_SUMMARY_PATH_MAX]; /* unescaped */
    uint64_t bytes, windows, records, dropped;
    char status[32];
    uint64_t steps;      /* 0: no step seen */
    char step_source[16]; /* "" when no step was seen */
    int has_oom;                       /* the flight recorder's keys were there */
    uint64_t dumps, ring, ring_cap;
    int has_rank;
    uint64_t rank;
    int has_dump; /* the recorder beside a trace: its dump's keys were there */
    char dump[GMP_SUMMARY_PATH_MAX]; /* unescaped */
    uint64_t dump_bytes;
    char dump_status[32];
} gmp_summary;

/* Writes s as one line, '\n' included, NUL-terminated. Returns its
 * length; when that is >= cap nothing usable was written (out is ""), so a
 * caller never appends half a line. */
size_t gmp_summary_format_line(char *out, size_t cap, const gmp_summary *s);

/* The flight recorder's keys, added to a line made by
 * gmp_summary_format_line (before its '\n'); rank < 0: none. Returns the
 * new length, or >= cap (line then "") when it does not fit. */
size_t gmp_summary_add_oom(char *line, size_t cap, uint64_t dumps, uint64_t ring, uint64_t ring_cap, long rank);

/* The dump's keys of the recorder beside a trace, added like
 * gmp_summary_add_oom. */
size_t gmp_summary_add_dump(char *line, size_t cap, const char *dump, uint64_t bytes, const char *status);

/* b as people read it on a line: "512 B", "1.5 KiB", "2.0 MiB", "1.25 GiB". */
void gmp_summary_human_bytes(uint64_t b, char *out, size_t cap);

/* Parses one line (with or without its '\n'). 0 on success; -1 when the
 * line is malformed: a field without '=', a bad number, a duplicate key, a
 * path or status too long, or no trace or no status key. */
int gmp_summary_parse_line(const char *line, gmp_summary *s);

#endif
