/*
 * Exports written during the replay pass: Chrome/Perfetto trace-event JSON
 * (export_chrome.c) and the SVG/HTML memory timeline (export_timeline.c).
 * Each registers as a consumer of the replay's events (consumer.h) when it
 * opens; the Chrome export keeps bounded memory, the timeline one small
 * record per device allocation in a temporary file (spill.h).
 */
#ifndef GMA_EXPORT_H
#define GMA_EXPORT_H

#include "gma.h"

/* Opens path for writing; 0, or -1 with errno. Sets r->chrome and
 * registers the export as a consumer of r. */
int gma_chrome_open(gma_replay *r, const char *path);
/* What viewers open of a Chrome trace-event JSON (docs/analyzer.md,
 * "Exports"): chrome://tracing reads the file into one JavaScript string,
 * which V8's limit on a string's length stops at about 256 MiB; Perfetto's
 * web UI is bound by the browser tab's memory (about 2 GB), where a JSON
 * trace of about 1 GB already fails. The export warns once, on stderr,
 * when its file passes the first of these. */
#define GMA_CHROME_WARN_BYTES (256ull << 20)
/* --chrome-largest: the most allocations kept, to bound the export's memory
 * (about 120 bytes each with the heap and map: ~480 MB at most) and its file
 * (about 430 bytes each: ~1.7 GB at most). */
#define GMA_CHROME_LARGEST_MAX 4000000ull

/* Writes the trailer of the JSON and closes; 0, or -1 on a write error. */
int gma_chrome_close(gma_replay *r);
/* The same, and note (cap bytes) says what a bounded export kept and left
 * out ("" for a full one). */
int gma_chrome_finish(gma_replay *r, char *note, size_t cap);

/* Several traces in one file, one process per rank: open once, attach to
 * each replay in turn (pid: the rank's process), detach after its pass
 * (names the process; the replay may then be freed), close at the end.
 * origin: the time origin shared by all traces (has_origin 0: each trace's own). */
struct gma_chrome *gma_chrome_multi_open(const char *path, uint64_t origin, int has_origin, const gma_opts *opt);
void gma_chrome_attach(gma_replay *r, struct gma_chrome *c, uint64_t pid, int64_t rank);
void gma_chrome_detach(gma_replay *r);
int gma_chrome_multi_close(struct gma_chrome *c, const char *const *paths, size_t n);
int gma_chrome_multi_finish(struct gma_chrome *c, const char *const *paths, size_t n, char *note, size_t cap);
/* Frees without finishing the file (an error stopped the analysis). */
void gma_chrome_multi_abort(struct gma_chrome *c);

/* The timeline collects during the pass and is written at the end. */
int gma_timeline_open(gma_replay *r, const char *path);
/* Writes SVG or HTML (by the file name) once the replay has finished. */
int gma_timeline_write(gma_replay *r);
/* --diff: A's and B's lanes in one file; the page's axis is in steps. */
int gma_timeline_diff_write(gma_replay *a, gma_replay *b);
/* The line to print for the file written, NULL before. */
const char *gma_timeline_summary(const gma_replay *r);

/* Several traces: one lane per rank and device, on a common time axis.
 * Each replay collects as usual (gma_timeline_collect: no file);
 * gma_timeline_multi_take copies its lanes once it has finished. */
struct gma_tlmulti;
struct gtm_doc;
/* Checks that path can be written; NULL with errno otherwise. */
struct gma_tlmulti *gma_timeline_multi_new(const char *path);
int gma_timeline_collect(gma_replay *r);
int gma_timeline_multi_take(struct gma_tlmulti *m, gma_replay *r, int64_t rank);
int gma_timeline_multi_write(struct gma_tlmulti *m);
const char *gma_timeline_multi_summary(const struct gma_tlmulti *m);
void gma_timeline_multi_free(struct gma_tlmulti *m);
/* Adds a finished replay's lanes (one per device) to a model. */
int gma_timeline_model_add(struct gtm_doc *d, gma_replay *r, const char *title_prefix);

#endif
