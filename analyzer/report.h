/*
 * The printing layer and what it prints. A view computes rows and hands
 * them over as data: the report of one replay (the summary, the ranked
 * table of --by rows, the allocations live at each device's peak, the
 * leaks, the warnings; tables.c), the comparison of two (diff.c) and the
 * table of a rank set (ranks.c). Columns are data (gma_col), cells are
 * typed (gma_cell); report_table.c, report_csv.c and report_json.c alone
 * write them, and compute nothing.
 */
#ifndef GMA_REPORT_H
#define GMA_REPORT_H

#include "gma.h"
#include "hints.h"

/* ---- a generic table ------------------------------------------------------ */

typedef enum gma_ctype {
    GMA_CT_STR,
    GMA_CT_U64,
    GMA_CT_I64,
    GMA_CT_BYTES,   /* exact in csv/json, KiB/MiB/GiB in tables */
    GMA_CT_SBYTES,  /* signed bytes */
    GMA_CT_DBYTES,  /* a change in bytes: "+1.00 MiB" in tables */
    GMA_CT_NS,      /* a duration */
    GMA_CT_TS,      /* a time relative to the trace start (ns; ms in tables) */
    GMA_CT_DNS,     /* a change in time: "+1.20 ms" in tables */
    GMA_CT_HEX,     /* an address */
    GMA_CT_RATIO,   /* B / A, printed "x1.50" */
    GMA_CT_PCT,     /* a relative difference (0.1 = 10%): "+10.0%" in tables, full precision in csv/json */
    GMA_CT_SHARE    /* a part of a whole (0.1 = 10%): "10.0%" in tables, full precision in csv/json */
} gma_ctype;

typedef struct gma_col {
    const char *title;  /* table header */
    const char *key;    /* csv header and json member */
    gma_ctype type;
    int in_table;       /* shown by --format table (csv/json show every column) */
    int right;          /* a text column right-aligned (numbers are always) */
} gma_col;

typedef struct gma_cell {
    int null;           /* "-" in tables, empty in csv, null in json */
    union {
        uint64_t u;
        int64_t i;
        double d;
        size_t s;       /* offset in the table's strs */
    } v;
} gma_cell;

typedef struct gma_table {
    const char *title;
    const char *sort_note;  /* what the sort key means for this table (gma_sort_label) */
    const gma_col *cols;
    size_t ncols;
    gma_vec cells;          /* gma_cell, nrows x ncols */
    size_t nrows;
    uint64_t total_rows;    /* rows before --top */
    gma_strs strs;
} gma_table;

void gma_table_init(gma_table *t, const char *title, const gma_col *cols, size_t ncols);
void gma_table_free(gma_table *t);
/* Starts a row; returns its cells (zeroed), NULL on OOM. */
gma_cell *gma_table_row(gma_table *t);
void gma_cell_str(gma_table *t, gma_cell *c, const char *s);
static inline gma_cell *gma_table_cell(const gma_table *t, size_t row, size_t col)
{
    return &((gma_cell *)t->cells.data)[row * t->ncols + col];
}
static inline const char *gma_cell_text(const gma_table *t, const gma_cell *c)
{
    return gma_strs_get(&t->strs, c->v.s);
}

/* ---- live at the peak, leaks ---------------------------------------------- */

typedef struct gma_group {
    size_t name;            /* offset in the report's strs */
    uint64_t bytes, count;
} gma_group;

typedef struct gma_peakview {
    unsigned device;
    uint64_t peak, ts, step, window;
    size_t kernel, range;   /* display names (report strs) */
    uint64_t count, bytes;  /* allocations live at the peak; bytes == peak */
    uint64_t baseline_bytes, baseline_count;
    gma_vec by_kernel, by_range;  /* gma_group, largest first, baseline excluded */
    uint64_t more_kernels, more_ranges; /* groups beyond --top */
} gma_peakview;

typedef struct gma_leakview {
    uint64_t bytes, count;
    int at_trace_end;       /* a window had no end: measured at the trace end */
    gma_vec by_kernel, by_range;
    uint64_t more_kernels, more_ranges;
} gma_leakview;

/* ---- the whole report ----------------------------------------------------- */

#define GMA_MAX_WARN 12

typedef struct gma_report {
    const gma_replay *r;
    gma_table table;
    gma_peakview peaks[GMA_MAX_DEVICES];
    size_t npeaks;
    gma_leakview leaks;
    gma_hints hints;        /* the short section of --insights (hints.h) */
    gma_strs strs;
    char warn[GMA_MAX_WARN][400];
    size_t nwarn;
    char notes[GMA_MAX_WARN][300];  /* analyzer notes (anomalies it met) */
    size_t nnotes;
    /* totals over the selected windows and devices (device memory) */
    uint64_t alloc_bytes, free_bytes, alloc_count, free_count, leaked_bytes, leaked_count;
    uint64_t baseline_bytes, baseline_count, kernels, kernel_ns;
    uint64_t windows_selected, steps_count, step_first, step_last;
    uint64_t host_peak;
    gma_mode mode;
} gma_report;

int gma_report_build(gma_report *rep, const gma_replay *r);
void gma_report_free(gma_report *rep);
static inline const char *gma_rep_str(const gma_report *rep, size_t off) { return gma_strs_get(&rep->strs, off); }

/* ---- --diff (diff.c), as its writers print it ------------------------------ */

typedef enum gma_unit { GMA_UNIT_BYTES, GMA_UNIT_COUNT, GMA_UNIT_NS } gma_unit;

/* A line of the summary comparison: a metric of trace A and of trace B. */
typedef struct gma_diff_line {
    char metric[48];
    gma_unit u;
    uint64_t a, b;
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
    int truncated;
    char warn[GMA_MAX_WARN][400];
    size_t nwarn;
    gma_table table;        /* its --by table, every row */
} gma_rankrun;

/* Sums over the set. */
typedef struct gma_rank_totals {
    uint64_t baseline, alloc, alloc_count, freed, free_count, leaked, leaked_count, kernels, kernel_ns, dropped;
    uint64_t records;
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

/* Formats. Each returns 0, or -1 when writing failed. */
int gma_print_table(FILE *f, const gma_report *rep);
int gma_print_csv(FILE *f, const gma_report *rep);
int gma_print_json(FILE *f, const gma_report *rep);
/* --diff and several ranks, in each format (table: -1 out of memory). */
int gma_print_diff_table(FILE *f, const gma_diff_view *v);
void gma_print_diff_csv(FILE *f, const gma_diff_view *v);
void gma_print_diff_json(FILE *f, const gma_diff_view *v);
void gma_print_ranks_table(FILE *f, const gma_ranks_view *v);
void gma_print_ranks_csv(FILE *f, const gma_ranks_view *v);
void gma_print_ranks_json(FILE *f, const gma_ranks_view *v);

/* Builds the --by table alone (tables.c); used by the report and the diff. */
int gma_table_build(const gma_replay *r, gma_table *t, uint64_t top);

/* The hints' section of the table format (report_table.c). */
void gma_print_hints(FILE *f, const gma_hints *h);

/* Shared by the formats: a cell as text ("1.50 MiB" or "1572864"). */
void gma_cell_format(const gma_table *t, size_t col, const gma_cell *c, int human, char *out, size_t cap);

/* What the sort key means for a --by table ("self memory (allocated - freed)"). */
const char *gma_sort_label(gma_by by, gma_sort s);
/* How a window ended ("schedule", "no end record", ...). */
const char *gma_window_end_label(const gma_window *w);

/* The aligned grid of a table (report_table.c) and its CSV lines (report_csv.c). */
void gma_print_grid(FILE *f, const gma_table *t);
void gma_print_csv_rows(FILE *f, const gma_table *t);

/* A cell as a JSON value. */
void gma_json_cell(gma_jw *j, const gma_table *t, size_t col, const gma_cell *c);
/* The "columns" key (the column keys) and the "rows" key (an object per
 * row), inside an open object. */
void gma_json_columns(gma_jw *j, const gma_table *t);
void gma_json_rows(gma_jw *j, const gma_table *t);

/* --diff OTHER: compares two finished replays; prints in opt->format. */
int gma_diff_print(FILE *f, const gma_replay *a, const gma_replay *b);
/* --diff compares like with like: with --layer auto and PyTorch blocks in
 * one trace only, sets opt->layer to segments for both and returns 1 with
 * a note for the user. */
int gma_diff_layer(gma_opts *opt, const char *a, const char *b, char *note, size_t cap);

#endif
