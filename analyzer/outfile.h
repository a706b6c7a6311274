/*
 * Files the analyzer writes (--chrome, --timeline), and its stderr.
 *
 * An export is written to a temporary file in the directory of its target
 * and renamed onto it only when complete, so a run that fails (a bad trace,
 * a full disk) leaves an earlier export as it was and never a half-written
 * one; an output that is one of the inputs is refused before anything is
 * opened (gma_out_check).
 */
#ifndef GMA_OUTFILE_H
#define GMA_OUTFILE_H

#include <stddef.h>
#include <stdio.h>

typedef struct gma_out {
    FILE *f;            /* write here */
    char *path;         /* the target (a link's target when path was a link) */
    char *tmp;          /* the temporary file; NULL when writing to path itself */
} gma_out;

/* Opens a temporary file beside path (mode 0666 less the umask). A path that
 * exists and is not a regular file (a FIFO, a device) is opened itself.
 * NULL with errno. */
gma_out *gma_out_open(const char *path);
/* Ends the file: when ok, flushes, closes and renames it onto its target (0,
 * or -1 with errno, the temporary file removed); when not ok, removes it
 * (returns 0). Frees o; NULL is a no-op. */
int gma_out_close(gma_out *o, int ok);
/* Whether path could be written (its directory exists and takes a new
 * file), without touching path: 0, or -1 with errno. */
int gma_out_probe(const char *path);

/* Refuses outputs that would destroy an input or each other: -1 with one
 * line in msg when an output is the same file as an input (same device and
 * inode) or two outputs are one file; 0 otherwise. NULL entries and "-"
 * inputs (standard input) are skipped. */
int gma_out_check(const char *const *outs, size_t nout, const char *const *ins, size_t nin, char *msg, size_t cap);

/* Makes stderr write every control byte but '\n' escaped (\x1b): paths and
 * names in the analyzer's messages come from the user and from traces. */
void gma_out_escape_stderr(void);
/* A copy of s with its control bytes escaped, for a line on stdout;
 * valid until the next call. */
const char *gma_out_shown(const char *s);

#endif
