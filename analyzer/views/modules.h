/*
 * nn.Module paths and source lines (--by module, --by line).
 *
 * The PyTorch bridge opens a MODULE range per module call (name = the
 * module's path from its root, "GPT.h.3.attn") and a MODULE_BWD range for
 * autograd's backward of it; BLOCK records name the innermost frame of the
 * program's code. A tensor belongs to the innermost module range open on
 * its thread's range stack (an op inside a module is a child of it);
 * allocations under no module range go to "(no module)".
 *
 * The paths make a tree (gma_mtree): a path's parent is the path less its
 * last component, created when missing (a ModuleList that is never called
 * still totals its layers). Forward and backward are two trees of the same
 * paths. A node's self counts the allocations attributed to it; its total
 * adds its descendants' (as a profiler's call tree). --depth N keeps the
 * nodes of depth <= N (the root is depth 1) and folds the self of deeper
 * ones into their ancestor at depth N.
 */
#ifndef GMA_MODULES_H
#define GMA_MODULES_H

#include <stddef.h>
#include <stdint.h>

#include "gma.h"
#include "table.h"

#include "mtree.h"

/* ---- the replay's consumer and the views ------------------------------------ */

/* Registers the module and line collector on r (before the read). 0, or -1
 * out of memory or no consumer slot left. */
int gma_modules_open(gma_replay *r);
/* Whether the replay met a module range or a frame (the views have data). */
int gma_modules_seen(const gma_replay *r);
/* Whether the replay met a module range; a frame on a block. */
int gma_modules_has_paths(const gma_replay *r);
int gma_modules_has_frames(const gma_replay *r);
/* The module node and frame (string id, 0 none) of an entry still in use
 * (live, kept for the peak, leaked; during the replay, live): 1 when the
 * collector knows them. */
int gma_modules_entry(const gma_replay *r, const gma_entry *e, uint32_t *node, uint32_t *frame);
/* The module node of an open range instance (an op inside a module): 1
 * when it is inside one. */
int gma_modules_of_range(const gma_replay *r, uint64_t range, uint32_t *node);
/* A node's display name ("(no module)" for 0). */
void gma_modules_name(const gma_replay *r, uint32_t node, gma_buf *b);
/* --by module and --by line (opt.by), ranked by opt.sort, cut to top. */
int gma_modules_table(const gma_replay *r, gma_table *t, uint64_t top);
int gma_lines_table(const gma_replay *r, gma_table *t, uint64_t top);
int gma_modules_diff_rows(const gma_replay *r, gma_sort m, gma_modules_row_fn fn, void *ctx);

#endif
