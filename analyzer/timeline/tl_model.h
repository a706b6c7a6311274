/*
 * What a memory timeline page or picture shows, built from band sets
 * (tl_bands.h) once their replays have finished: lanes (a device of a
 * trace, a rank, a side of a diff), each with its bands sorted by
 * allocation, its owners' bytes at its peak, its axis marks and the
 * driver's used memory; owners ranked over all lanes, the top ones
 * coloured; and, above GTM_MERGE_AT bands in a lane, the small ones merged
 * (drawn as the lane's live total less the bands drawn, from the summary
 * of that total). With the PyTorch bridge each band also knows its memory
 * category, module, op and source line, and the owners can be the
 * categories: ranked in a fixed order (the stacking order), with the
 * merged bytes split by category at every bucket of the summary. Names
 * are copied: a lane outlives its replay. Times are ns from the lane's
 * origin (gtm_lane_add's shift).
 */
#ifndef GTM_MODEL_H
#define GTM_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "tl_bands.h"
#include "util/gma_util.h"

#define GTM_MERGE_AT 100000 /* bands in a lane above which small ones merge */
#define GTM_KEEP 40000      /* bands drawn one by one once merging (plus those live at the peak) */
#define GTM_KEEP_PEAK 40000 /* at most this many more: the largest live at the peak */
#define GTM_TOP_MAX 20      /* colours */
#define GTM_SUM_MAX 65536   /* buckets of a lane's summary of its live total */
#define GTM_LAYERS 4

typedef struct gtm_mark {
    int64_t t, t_end;      /* t_end: windows */
    uint64_t no;           /* step number */
    uint32_t name;         /* doc string: tags */
} gtm_mark;

/* The framework layers of a lane (PyTorch bridge), beside its bands (the
 * tensors): the allocator's reserved segments, and CUDA's allocations that
 * are none of those segments (memory outside the allocator). Drawn in one
 * colour each, never merged: a run has few. */
enum { GTM_CTX_SEG, GTM_CTX_OUT, GTM_CTX_N };

typedef struct gtm_ctx {
    gtb_band *b;           /* sorted by (t0, seq); times relative, as the lane's */
    size_t n;
    uint64_t at_peak;      /* bytes live at the lane's peak */
    size_t n_at_peak;
} gtm_ctx;

typedef struct gtm_lane {
    uint32_t title;        /* doc string */
    unsigned device;
    size_t n;
    gtb_band *b;           /* sorted by (t0, seq); t0/t1 relative, t1 GTB_OPEN kept */
    uint32_t *own, *kn, *rn; /* doc strings per band */
    /* with the bridge (gtm_lane_fw_cols), doc strings per band: category
     * (NULL when the replay had none), module ("(no module)"), op ("(no
     * op)"), source line ("" unknown); NULL without */
    uint32_t *cat, *mod, *op, *ln;
    unsigned char *keep;   /* drawn one by one */
    size_t nkeep, nmerged;
    uint64_t merged_bytes, merge_max; /* merged: allocations of merge_max bytes or fewer */
    uint64_t left_out, left_out_bytes; /* not collected (tl_bands' bound) */
    int has_peak;
    uint64_t peak;         /* the analyzer's peak of this device */
    int64_t peak_t;
    uint64_t peak_step;
    size_t peak_pos;       /* bands [0, peak_pos) were allocated by the peak */
    uint64_t *at_peak;     /* per doc string (owners): bytes live at the peak */
    size_t at_peak_cap;
    /* The lane's live total (every band, kept or merged), as buckets of
     * consecutive distinct event times, at most GTM_SUM_MAX, half of them
     * for the opening view when it needs them (a bucket ends at the peak and
     * where the view begins and ends; within each part, half the cuts by
     * count and half at the widest gaps): per bucket its first and last
     * time, the lowest and highest level after any of its times, and the
     * level after its last. Between buckets the total is exactly the
     * previous one's end; with one time per bucket it is the exact step
     * function. */
    size_t nsum, sum_per;  /* buckets; the most distinct times one may hold */
    int64_t *sum_t0, *sum_t1;
    uint64_t *sum_lo, *sum_hi, *sum_end;
    /* With d->split and merged bands: the merged bytes of each colour of
     * the owners (ncolors + 1, the grey last) at each bucket's end, so
     * that a column at an exact total splits its merged layer exactly:
     * split[k * (ncolors + 1) + g]. NULL otherwise. */
    uint64_t *split;    gma_vec steps, windows, tags; /* gtm_mark */
    gma_vec drv_t, drv_v;  /* int64_t, uint64_t: driver's used memory */
    int64_t view0, view1;  /* the opening view */
    int64_t shift;         /* added to every time when written: lanes of several traces */
    int64_t t_min, t_max;
    uint32_t layer_name[GTM_LAYERS]; /* doc strings */
    unsigned nlayers;
    uint32_t warning;      /* doc string, 0 none */
    int fw;                /* the framework layers below are set */
    gtm_ctx ctx[GTM_CTX_N];
    uint64_t ctx_top;      /* highest reserved + outside level */
    /* the analyzer's figures at its allocated peak (layer.c), for the legend */
    uint64_t fw_reserved, fw_outside;
} gtm_lane;

typedef struct gtm_doc {
    gma_vec lanes;         /* gtm_lane */
    char **str;            /* doc strings; 0 is "" */
    size_t nstr, str_cap;
    gma_map str_of;        /* string hash -> index */
    const char *by;        /* owner kind: "kernel", "range", ... */
    uint32_t title;
    /* owners by rank (doc strings), the first ncolors coloured */
    uint32_t *rank;
    size_t nrank, ncolors;
    uint32_t *color_of;    /* per doc string: its colour, filled by gtm_finish */
    int step_axis;         /* lanes share a step-normalised axis (--diff) */
    uint32_t diff_a, diff_b; /* --diff: the two traces' file names (doc strings), else 0 */
    /* One trace: a kernel is its label for the whole trace (the report's).
     * Several (raw_kernels): kernel names are kept whole, so that one name
     * is one owner in every trace, and shown by a label made over all of
     * them: short, longer where short forms collide, numbered where those
     * still do (gtm_labels) */
    int raw_kernels;
    /* Owners ranked first, in this order, whatever their bytes (the
     * categories: the order they stack in); the rest by bytes. split: keep
     * the merged bytes per colour (lane->split). */
    uint32_t fixed[16];
    size_t nfixed;
    int split;
    gma_vec kernels;       /* uint32_t: doc strings that are raw kernel names */
    uint32_t *label;       /* per doc string: the string shown */
    size_t nlabel;
    int err;
} gtm_doc;

void gtm_init(gtm_doc *d, const char *by);
void gtm_free(gtm_doc *d);
/* The string's index (a copy); 0 on OOM (d->err). */
uint32_t gtm_str(gtm_doc *d, const char *s);
static inline const char *gtm_s(const gtm_doc *d, uint32_t i) { return i < d->nstr ? d->str[i] : ""; }
/* A new lane, its fields zero but for the vectors; NULL on OOM. */
gtm_lane *gtm_lane_new(gtm_doc *d);
/* Copies s's bands of one device into l (times made relative: minus
 * origin), sorted; owner/kernel/range strings are set by the caller after. */
int gtm_lane_bands(gtm_lane *l, const gtb_set *s, unsigned device, uint64_t origin);
/* The per-band columns of the bridge (mod, op, ln, and cat with cats),
 * zeroed; after gtm_lane_bands. 0, or -1 on OOM. */
int gtm_lane_fw_cols(gtm_lane *l, int cats);
/* The framework layers of one device: every segment of seg, and the bands
 * of cuda that are no part of one (a CUDA allocation that lies within a
 * segment while the segment lives is part of the reserve). Before
 * gtm_lane_at_peak. */
int gtm_lane_ctx(gtm_lane *l, const gtb_set *seg, const gtb_set *cuda, unsigned device, uint64_t origin);
/* Once every band knows its owner and the peak is set: bytes at the peak
 * (of the owners, and of the framework layers). */
int gtm_lane_at_peak(gtm_doc *d, gtm_lane *l);
/* Ranks owners over the lanes (d->fixed first, then bytes at the peak,
 * then size), colours the first ntop, merges small bands where a lane has
 * many, and summarises each lane's live total (gtm_lane_summary) and with
 * d->split its merged bytes per colour (gtm_lane_split). */
int gtm_finish(gtm_doc *d, size_t ntop);
/* The summary of l's live total (nsum, sum_*), at most max buckets (0:
 * GTM_SUM_MAX; at least 2), replacing any before. 0, or -1 on OOM. */
int gtm_lane_summary(gtm_lane *l, size_t max);
/* Owners of kind by, ranked first in the order of names (n at most 16),
 * with the merged bytes split by colour (d->split): the categories. */
void gtm_fixed_owners(gtm_doc *d, const char *by, const char *const *names, size_t n);
/* The merged bytes per colour at each bucket of l's summary (l->split);
 * after gtm_lane_summary. 0, or -1 on OOM. */
int gtm_lane_split(const gtm_doc *d, gtm_lane *l);
/* Labels for the kernel names: label(raw, max_len, out) writes a short
 * form; 0, or -1 on OOM. gtm_finish needs them set. */
int gtm_labels(gtm_doc *d, void (*label)(const char *raw, size_t len, size_t max_len, gma_buf *out), int full);
static inline const char *gtm_label(const gtm_doc *d, uint32_t i)
{
    return gtm_s(d, d->label && i < d->nlabel ? d->label[i] : i);
}
/* Colour of an owner: 0..ncolors-1, ncolors for grey. */
size_t gtm_color(const gtm_doc *d, uint32_t owner);

#endif
