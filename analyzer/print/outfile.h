/*
 * Files the analyzer writes (--chrome, --timeline), and its stderr.
 *
 * An export is written to a temporary file in the directory of its target
 * and renamed onto it only when complete, so a run that fails (a bad trace,
 * a full disk) leaves an earlier export as it was and never a half-written
 * one; an output that is one of the inputs is refused before anything is
 * opened (gma_out_check). A stream is written in place, never renamed
 * over: a descriptor of this process named as a path (/dev/stdout,
 * /dev/fd/N, /proc/self/fd/N, a link to one, or '-' for standard output) is
 * written at its own offset, so `>> log` appends; a FIFO or a device is
 * opened and written.
 */
#ifndef GMA_OUTFILE_H
#define GMA_OUTFILE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

typedef struct gma_out {
    FILE *f;            /* write here */
    char *path;         /* the target (a link's target when path was a link) */
    char *tmp;          /* the temporary file; NULL when writing to path itself */
    int fd;             /* what f writes to */
    int err;            /* errno of the first failed write, 0 while none */
    int stream;         /* written in place: a descriptor, a FIFO, a device */
    uint64_t written;   /* bytes gone out of f's buffer so far */
} gma_out;

/* The descriptor of this process that path names ('-' is standard output;
 * /dev/stdout, /dev/fd/N, /proc/self/fd/N, links to them), or -1. */
int gma_out_fd_of(const char *path);
/* Whether a write to path lands in standard output's file (a terminal or
 * /dev/null aside, which take both): a report printed there would be lost
 * or mixed with the export. */
int gma_out_is_stdout(const char *path);
/* Opens a temporary file beside path (mode 0666 less the umask). A stream
 * (above) is written itself. NULL with errno. */
gma_out *gma_out_open(const char *path);
/* Ends the file: when ok, flushes, closes and renames it onto its target (0,
 * or -1 with errno, the temporary file removed); when not ok, removes it
 * (returns 0). Frees o; NULL is a no-op. */
int gma_out_close(gma_out *o, int ok);
/* Whether path could be written (its directory exists and takes a new
 * file; a stream is open for writing), without touching path and without
 * opening a FIFO: 0, or -1 with errno. */
int gma_out_probe(const char *path);
/* Whether a file written earlier is still at path (its directory may have
 * been removed or renamed since): 0, or -1 with errno. */
int gma_out_present(const char *path);

/* Refuses outputs that would destroy an input or each other: -1 with one
 * line in msg when an output is the same file as an input (same device and
 * inode; an input "-" is standard input's file or pipe) or two outputs are
 * one file; 0 otherwise. NULL entries are skipped. */
int gma_out_check(const char *const *outs, size_t nout, const char *const *ins, size_t nin, char *msg, size_t cap);

/* Makes stderr write every control byte but '\n' escaped (\x1b): paths and
 * names in the analyzer's messages come from the user and from traces. */
void gma_out_escape_stderr(void);
/* The same for stdout: every control byte but '\n' escaped, whatever prints
 * it (a terminal's escape sequence or a CR in a name never gets out raw);
 * names and paths have their newlines escaped where they are printed. */
void gma_out_escape_stdout(void);
/* A copy of s with its control bytes escaped and bad UTF-8 replaced
 * (U+FFFD), for a line on stdout; valid until the next call. */
const char *gma_out_shown(const char *s);

#endif
