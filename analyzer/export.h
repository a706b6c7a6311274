/*
 * Exports written during the replay pass: Chrome/Perfetto trace-event JSON
 * (export_chrome.c) and the SVG/HTML live-memory timeline (export_timeline.c).
 * Both are fed by replay.c as records go by, and keep bounded memory.
 */
#ifndef GMA_EXPORT_H
#define GMA_EXPORT_H

#include "gma.h"

/* Opens path for writing; 0, or -1 with errno. Sets r->chrome. */
int gma_chrome_open(gma_replay *r, const char *path);
void gma_chrome_device(gma_replay *r, uint64_t dev);
void gma_chrome_kernel(gma_replay *r, const gmt_kernel *k);
void gma_chrome_copy(gma_replay *r, const gmt_copy *c, int is_memset);
void gma_chrome_range(gma_replay *r, uint64_t tid, uint32_t name, uint64_t begin, uint64_t end);
void gma_chrome_mark(gma_replay *r, uint64_t tid, uint32_t name, uint64_t ts);
void gma_chrome_step(gma_replay *r, const gmt_step *s);
void gma_chrome_tag(gma_replay *r, const gmt_tag *t);
void gma_chrome_window(gma_replay *r, uint64_t id, uint64_t ts, int begin);
void gma_chrome_live(gma_replay *r, uint64_t dev, uint64_t ts, uint64_t live);
void gma_chrome_driver(gma_replay *r, uint64_t dev, uint64_t ts, uint64_t used);
/* Writes the trailer of the JSON and closes; 0, or -1 on a write error. */
int gma_chrome_close(gma_replay *r);
void gma_chrome_free(gma_replay *r);

/* The timeline collects during the pass and is written at the end. */
int gma_timeline_open(gma_replay *r, const char *path);
void gma_timeline_live(gma_replay *r, uint64_t dev, uint64_t ts, uint64_t live);
void gma_timeline_driver(gma_replay *r, uint64_t dev, uint64_t ts, uint64_t used);
void gma_timeline_step(gma_replay *r, uint64_t ts, uint64_t step);
/* Writes SVG or HTML (by the file name) once the replay has finished. */
int gma_timeline_write(gma_replay *r);
void gma_timeline_free(gma_replay *r);

#endif
