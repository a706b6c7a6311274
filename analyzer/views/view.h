/*
 * A --by view as data: its sort keys, the columns that name a row, how
 * several ranks' rows merge, what --diff compares without --sort, and the
 * function that builds its table. Each --sort key is a row of the view's key
 * table, in the manner of perf's struct sort_entry: the --by table (tables.c),
 * the --by alloc rows kept during the replay (liveset.c), the rank sets
 * (ranks.c) and --diff (diff.c) all rank through it, so `--sort` means one
 * thing per view, written in one place.
 *
 * A new view is one file that defines a gma_view and one row in the
 * registry, VIEWS[] in views.c.
 */
#ifndef GMA_VIEW_H
#define GMA_VIEW_H

#include "gma.h"
#include "table.h"

/* How a key ranks the rows. */
typedef enum gma_order {
    GMA_ORDER_DESC, /* the largest value first */
    GMA_ORDER_ASC,  /* the smallest first (chronological) */
    GMA_ORDER_NAME  /* the name columns first, then the value */
} gma_order;

/* A key's value for one row of the replay (the view's row type). */
typedef int64_t (*gma_keyval)(const gma_replay *r, const void *row);

typedef struct gma_sortkey {
    const char *name;      /* the --sort value (gma_sort_names) */
    const char *header;    /* what it means: the "ranked by" of every format */
    gma_order compare;
    gma_keyval value;      /* the value the view's rows rank by */
    const char *print;     /* the column (key) that shows it: rank sets compare
                            * its cells; NULL with GMA_ORDER_NAME */
    /* --diff: the key compared instead (--sort name compares bytes
     * allocated), what the compared value is, its type, and the value
     * itself where it is not `value` (NULL: value) */
    gma_sort diff;
    const char *diff_header;
    gma_ctype diff_type;
    gma_keyval metric;
    /* the value is known only once the row has ended (a lifetime): rows
     * the replay ranks as it goes (--by alloc) enter then */
    int at_end;
} gma_sortkey;

/* How one column of several ranks' rows merges into one row. */
typedef enum gma_merge_rule {
    GMA_MERGE_SUM,
    GMA_MERGE_KEY,    /* the rows match on it */
    GMA_MERGE_MAX,
    GMA_MERGE_MIN,
    GMA_MERGE_FIRST,
    GMA_MERGE_MEAN,
    GMA_MERGE_ATPEAK  /* the value of the rank whose peak is highest */
} gma_merge_rule;

typedef struct gma_merge {
    const char *key;  /* a column key; NULL ends the list */
    gma_merge_rule rule;
} gma_merge;

/* A finding beside a view's own table: a line a person reads, a value a
 * program reads. */
typedef struct gma_note {
    const char *key;    /* CSV and JSON: "separates" */
    const char *label;  /* the table format's line: "Separates the runs most" */
    char text[200];     /* "" when there is none: the table and CSV leave it out */
} gma_note;

#define GMA_VIEW_NOTES 2

/* A view whose table is the whole report (gma_view.alone): the table and
 * its notes, as the printers print them (print.h). */
typedef struct gma_view_report {
    const char *by;     /* the --by name */
    char what[600];     /* what the report is of: "train.gmt (by category)" */
    gma_table t;
    gma_note notes[GMA_VIEW_NOTES];
    size_t nnotes;
} gma_view_report;

typedef struct gma_view {
    const char *name;           /* the --by value */
    const gma_sortkey *keys;    /* GMA_SORT_COUNT_ rows, indexed by gma_sort */
    /* the columns that name a row: --sort name ranks by them in order, the
     * other keys break ties by the last */
    const char *names[2];
    /* columns that do not add up across ranks (the others: strings first,
     * numbers summed) */
    const gma_merge *merge;
    gma_sort diff_default;      /* what --diff compares without --sort */
    int diff_max;               /* --diff: rows of one name combine by max, not sum */
    /* The view's table of a finished replay, ranked by r->opt.sort and cut
     * to `top` (0: all). 0, or -1 out of memory. */
    int (*build)(const gma_replay *r, gma_table *t, uint64_t top);
    /* The view's table is the report by itself, without the summary around
     * it (gma_view_report_build): --by category. */
    int alone;
    /* --diff: the view's own table of A against B and its note, instead of
     * rows matched by name (diff.c). NULL: matched by name. 0, or -1. */
    int (*diff_build)(const gma_replay *a, const gma_replay *b, gma_table *t, gma_note *note);
} gma_view;

/* gma_replay_init, and what the views need from the pass: the failures'
 * consumer, the --by alloc key, modules and lines, the --by alloc spill.
 * The program opens its replays with this; the replay knows no view. */
int gma_replay_open(gma_replay *r, const gma_opts *opt, const char *path);

/* The view of a --by value (an out-of-range value: the kernel view). */
const gma_view *gma_view_of(gma_by by);
/* The key of a --sort value in a view. */
const gma_sortkey *gma_sortkey_of(gma_by by, gma_sort s);
/* The rule for a column of the view's merged rank rows. */
gma_merge_rule gma_view_merge_rule(const gma_view *v, const gma_col *col);

/* A view's own report (v->alone) of r, or of A against B (b: --diff's
 * other run, through v->diff_build): built into out (gma_view_report_free).
 * 0, or -1. */
int gma_view_report_build(gma_view_report *out, const gma_view *v, const gma_replay *r, const gma_replay *b);
void gma_view_report_free(gma_view_report *out);

/* The built-in views (tables.c). */
extern const gma_view gma_view_kernel, gma_view_range, gma_view_alloc, gma_view_step, gma_view_tag,
    gma_view_stream, gma_view_device;
/* nn.Module paths and source lines (modules.c, lines.c) */
extern const gma_view gma_view_module, gma_view_line;
/* PyTorch's kinds of memory (category.c) */
extern const gma_view gma_view_category;

#endif
