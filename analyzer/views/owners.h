/*
 * Owners in PyTorch's terms for the report (report.h): the nn.Module and
 * the source line of the allocation that made each device's peak, the
 * bytes live at the peak and leaked grouped by module and by line, and
 * what grows from step to step (leaked allocations made in several steps,
 * per owner: the module, else the op or range).
 *
 * All of it comes from the module collector (modules.h), which the analyzer
 * runs on every trace with PyTorch blocks. A trace without module ranges
 * names no module and one without frames no line: its report keeps the
 * sections it had.
 */
#ifndef GMA_OWNERS_H
#define GMA_OWNERS_H

#include "gma.h"

/* Groups by module and by line (gma_group, report.h), largest first. */
typedef struct gma_owngroups {
    int has_module, has_line;   /* the trace has module ranges; frames */
    gma_vec by_module, by_line;
    uint64_t more_modules, more_lines; /* groups beyond --top */
} gma_owngroups;

/* One owner that grew: leaked allocations made in `steps` distinct steps. */
typedef struct gma_growth {
    size_t name;                /* offset in the report's strs */
    int is_module;              /* a module path, else an op or range */
    uint64_t steps, first_step, last_step;
    uint64_t bytes, count;
    uint64_t min_step_bytes, max_step_bytes; /* the least and most one step left */
} gma_growth;

/* The collector of groups: entries added one by one, then finished. */
typedef struct gma_ownset {
    gma_owngroups *out;
    gma_map mod_of, line_of;
    gma_vec mods, lines;        /* internal rows */
} gma_ownset;

/* Starts groups into out (zeroed by the caller) for r. */
void gma_ownset_init(gma_ownset *s, const gma_replay *r, gma_owngroups *out);
/* An entry still in use. 0, or -1 out of memory. */
int gma_ownset_add(gma_ownset *s, const gma_replay *r, const gma_entry *e);
/* Names, sorts and keeps the first top (0: all). 0, or -1 out of memory. */
int gma_ownset_finish(gma_ownset *s, const gma_replay *r, gma_strs *strs, uint64_t top);
void gma_owngroups_free(gma_owngroups *g);

/* The module and line of the allocation that made device d's peak, as
 * offsets in strs (0: not named: no module ranges, no frames, or a peak
 * that no allocation of the trace made). 0, or -1 out of memory. */
int gma_owners_peak(const gma_replay *r, unsigned d, gma_strs *strs, size_t *module, size_t *line);

/* The owners whose leaked allocations were made in two steps or more,
 * most bytes first, cut to top (0: all) with *more beyond it, into out
 * (gma_growth). Nothing without module ranges or frames. 0, or -1 out of
 * memory. */
int gma_owners_growth(const gma_replay *r, gma_strs *strs, uint64_t top, gma_vec *out, uint64_t *more);

/* A frame's display name ("(no line)" for 0). */
void gma_owners_line_name(const gma_replay *r, uint32_t frame, gma_buf *b);

#endif
