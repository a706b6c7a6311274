/*
 * The printing layer: report_table.c, report_csv.c and report_json.c alone
 * write table, CSV and JSON, and compute nothing. Each is a printer, a
 * table of functions (gma_printer), listed in printers.c; main.c chooses
 * one. A view computes rows and hands them over as data: the report of one
 * replay (report.h), the comparison of two (diff.c), the table of a rank
 * set (ranks.c), a fit (fitview.c), a trace's failures (oom.h), a view's
 * own table (view.h: --by category) and the insights (insights.h). Every
 * table goes through the same grid, CSV lines and JSON columns and rows.
 */
#ifndef GMA_PRINT_H
#define GMA_PRINT_H

#include <stdio.h>

#include "fit.h"
#include "insights.h"
#include "oom.h"
#include "report.h"
#include "table.h"
#include "view.h"

/* ---- --diff (diff.c), as its writers print it ------------------------------ */

typedef enum gma_unit { GMA_UNIT_BYTES, GMA_UNIT_COUNT, GMA_UNIT_NS } gma_unit;

/* A line of the summary comparison: a metric of trace A and of trace B. */
typedef struct gma_diff_line {
    char metric[48];
    gma_unit u;
    uint64_t a, b;
    /* the trace did not collect it (kernel times of a launch-mode trace):
     * its value is shown as missing, and so are the delta and the ratio */
    uint8_t a_missing, b_missing;
} gma_diff_line;

typedef struct gma_diff_view {
    const char *by;         /* the --by table's name */
    const char *metric;     /* the metric's key (gma_sort_names) */
    const char *meaning;    /* and what it means */
    const gma_report *ra, *rb;
    const gma_diff_line *sl;
    size_t ns;
    const gma_table *t;     /* the rows of both, matched by name */
} gma_diff_view;

/* ---- several ranks (ranks.c), as their writers print them ------------------ */

/* One trace of the set. */
typedef struct gma_rankrun {
    const char *path;
    /* from the header (read before the replay) */
    int has_header;
    int64_t hdr_rank, world_size;
    uint64_t pid, start_ts;
    char host[128];
    int64_t id;             /* the rank shown: the header's, or the position */
    /* from the finished replay */
    int done;
    char devices[96];       /* "0" or "0,1" */
    unsigned first_dev;
    int has_peak;
    uint64_t peak, peak_step;
    int64_t peak_ns;
    uint64_t baseline, alloc_bytes, alloc_count, free_bytes, free_count, leaked, leaked_count;
    uint64_t kernels, kernel_ns, steps, dropped, records;
    int launch_only;        /* kernel times not collected (GMEMPROF_KERNELS=launch) */
    int truncated;
    char warn[GMA_MAX_WARN][GMA_WARN_LEN];
    size_t nwarn;
    gma_table table;        /* its --by table, every row */
} gma_rankrun;

/* Sums over the set. */
typedef struct gma_rank_totals {
    uint64_t baseline, alloc, alloc_count, freed, free_count, leaked, leaked_count, kernels, kernel_ns, dropped;
    uint64_t records;
    int no_kernel_times;    /* no rank collected kernel times: kernel_ns means nothing */
    size_t hi, lo;  /* runs with the highest and lowest peak */
    double mean;
    int64_t world;  /* the world size the traces agree on, -1 none */
} gma_rank_totals;

typedef struct gma_ranks_view {
    const gma_rankrun *runs;
    size_t n;
    const char (*warn)[400]; /* about the set */
    size_t nwarn;
    gma_rank_totals t;
    const gma_table *table;  /* --by rank, merged or per-rank */
    const char *title;       /* the table's title line */
    const char *by, *sort, *mode; /* the table's keys: "rank" or a --by name, the sort key, "merged"... */
    uint64_t top;
    int by_rank;
} gma_ranks_view;

/* ---- --fit (fitview.c), as its writers print it ---------------------------- */

/* One run: a trace at a size, or one step of it. */
typedef struct gma_fit_run_info {
    const char *path;
    int64_t step;           /* -1: the whole trace */
    uint64_t size;
    uint64_t peak;          /* over the selected devices (with the bridge: tensors allocated) */
    uint64_t held;          /* of which the owners in the window hold */
    uint64_t reserved;      /* the allocator's reserved peak, with has_reserved */
    int has_reserved;
    uint64_t outside;       /* CUDA's bytes outside the allocator at its peak */
    unsigned device;        /* the device that peaks highest */
    uint64_t dev_peak, total_mem;
} gma_fit_run_info;

/* A fitted total: the peak or the reserved peak. */
typedef struct gma_fit_total {
    const char *what;
    int present;
    gma_fit fit;
    double pred;            /* at the view's size */
    uint64_t pred_bytes;    /* the same, rounded to bytes (0 for a law that goes below 0) */
} gma_fit_total;

typedef struct gma_fit_view {
    gma_fit_run_info runs[GMA_FIT_MAX_POINTS]; /* by size */
    size_t n;
    int per_step;           /* the runs are steps of one trace */
    uint64_t at;            /* the size predicted */
    gma_fit_total allocated, reserved;
    /* the device: its bytes (recorded, or --capacity), the most the runs
     * held outside the allocator, and the largest size that fits in the
     * difference (GMA_FIT_SIZE_MAX: every size; 0: none) */
    uint64_t device_total, outside, capacity, largest;
    int capacity_given, has_largest;
    const char *by;         /* the owners: "range" or "kernel" */
    uint64_t top;
    gma_table table;        /* the owners, fastest growing first */
    gma_col cols[GMA_FIT_MAX_POINTS + 9];
    char titles[GMA_FIT_MAX_POINTS + 1][40], keys[GMA_FIT_MAX_POINTS][32];
} gma_fit_view;

/* ---- --insights (insights.h), as its writers print them ---------------------- */

typedef struct gma_insights_view {
    const gma_ins_result *run[2]; /* the trace, and --diff's other run */
    size_t nrun;
    const gma_table *t;           /* the findings (gma_insights_table) */
    /* the columns of the table format's paragraphs: the number, why, what to try */
    size_t num, reason, try_;
} gma_insights_view;

/* ---- the printers ------------------------------------------------------------ */

/* A format: one function per thing a view hands over. Each returns 0, or -1
 * when writing failed (or, for a table, out of memory). main.c chooses the
 * printer once (gma_printer_of) and hands it to the views. */
typedef struct gma_printer {
    const char *name;   /* the --format value */
    int (*report)(FILE *f, const gma_report *rep);
    int (*diff)(FILE *f, const gma_diff_view *v);
    int (*ranks)(FILE *f, const gma_ranks_view *v);
    int (*fit)(FILE *f, const gma_fit_view *v);
    /* a trace's failures, printed before whatever report follows (a
     * diff, insights); NULL where the format's report carries them */
    int (*failures)(FILE *f, const gma_oom_view *v);
    /* a view's own table and its notes (--by category) */
    int (*view)(FILE *f, const gma_view_report *v);
    int (*insights)(FILE *f, const gma_insights_view *v);
    /* rows shown of each group of findings (the insights' owners): a
     * person's table shows the first few, 0 every one --top keeps */
    uint64_t group_rows;
} gma_printer;

/* The printer of a --format value (an unknown one: the table), and the
 * value of a --format name (-1: none). */
const gma_printer *gma_printer_of(gma_format fmt);
int gma_format_named(const char *name);
/* "table, csv, json": the names, for a message. */
const char *gma_format_names(void);

/* The printers (printers.c lists them). */
extern const gma_printer gma_printer_table, gma_printer_csv, gma_printer_json;

/* The report in each format. */
int gma_print_table(FILE *f, const gma_report *rep);
int gma_print_csv(FILE *f, const gma_report *rep);
int gma_print_json(FILE *f, const gma_report *rep);
/* --diff, several ranks, --fit and the failures, in each format. */
int gma_print_diff_table(FILE *f, const gma_diff_view *v);
int gma_print_diff_csv(FILE *f, const gma_diff_view *v);
int gma_print_diff_json(FILE *f, const gma_diff_view *v);
int gma_print_ranks_table(FILE *f, const gma_ranks_view *v);
int gma_print_ranks_csv(FILE *f, const gma_ranks_view *v);
int gma_print_ranks_json(FILE *f, const gma_ranks_view *v);
int gma_print_fit_table(FILE *f, const gma_fit_view *v);
int gma_print_fit_csv(FILE *f, const gma_fit_view *v);
int gma_print_fit_json(FILE *f, const gma_fit_view *v);
int gma_print_oom_table(FILE *f, const gma_oom_view *v);
/* A view's own table, and the insights, in each format (report_*_sections.c). */
int gma_print_view_table(FILE *f, const gma_view_report *v);
int gma_print_view_csv(FILE *f, const gma_view_report *v);
int gma_print_view_json(FILE *f, const gma_view_report *v);
int gma_print_insights_table(FILE *f, const gma_insights_view *v);
int gma_print_insights_csv(FILE *f, const gma_insights_view *v);
int gma_print_insights_json(FILE *f, const gma_insights_view *v);
/* The failures inside a report: CSV lines "# failure.N...", JSON's
 * "failures" key. */
void gma_print_oom_csv(FILE *f, const gma_oom_view *v);
void gma_json_oom(gma_jw *j, const gma_oom_view *v);
/* The hints inside a report (hints.h). */
void gma_print_hints_csv(FILE *f, const gma_hints *h);
void gma_json_hints(gma_jw *j, const gma_hints *h);

/* The table format's lines around a table, for every report (report_table.c).
 * The first line: "gmem-analyze VERSION: " and what the report is of (a
 * trace's path, "diff", "2 traces"). */
void gma_print_head(FILE *f, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* warn[0..n), a line each, in every format but JSON: "<lead>WARNING<tag>:
 * <text>"; lead "# " in CSV, "" in a table; tag "", " (A)" and " (B)" in
 * a diff, ": rank N" for one rank's own. */
void gma_print_warnings(FILE *f, const char *lead, const char *tag, const char (*warn)[GMA_WARN_LEN], size_t n);
/* A set of ranks: its own warnings, then each rank's (tag ": rank N"). */
void gma_print_rank_warnings(FILE *f, const char *lead, const gma_ranks_view *s);
/* A blank line and a table's title line: what its rows are, with
 * " (top N of M)" when --top cut them. */
void gma_print_title(FILE *f, const gma_table *t, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* The table's grid, or "  (no rows)". */
void gma_print_rows(FILE *f, const gma_table *t);
/* A finding after a table, a paragraph: "  SUBJECT: REASON" and
 * "      try: TRY" (the hints, the insights' notes). */
void gma_print_advice(FILE *f, const char *reason, const char *try_, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* Any table: its aligned grid (report_table.c) and its CSV lines
 * (report_csv.c). */
void gma_print_grid(FILE *f, const gma_table *t);
void gma_print_csv_rows(FILE *f, const gma_table *t);
/* A cell as a JSON value. */
void gma_json_cell(gma_jw *j, const gma_table *t, size_t col, const gma_cell *c);
/* The "columns" key (the column keys) and the "rows" key (an object per
 * row), inside an open object. */
void gma_json_columns(gma_jw *j, const gma_table *t);
void gma_json_rows(gma_jw *j, const gma_table *t);

/* How a window ended ("schedule", "no end record", ...). */
const char *gma_window_end_label(const gma_window *w);

#endif
