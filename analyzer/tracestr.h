/*
 * The strings of a trace by id, the names shown for kernels and ranges,
 * and the labels of allocator sources and memory kinds.
 */
#ifndef GMA_TRACESTR_H
#define GMA_TRACESTR_H

#include "gma.h"

/* A STRING record: keeps s as the string of id. */
void gma_str_set(gma_replay *r, uint64_t id, const gmt_bytes *s);
/* Keeps b in the replay's strings; its offset there. */
uint32_t gma_str_keep(gma_replay *r, const gmt_bytes *b);
/* String of an id ("" when unknown). */
const char *gma_str(const gma_replay *r, uint64_t id, size_t *len);
/* Display names (cached per call site by the caller). */
void gma_kernel_display(const gma_replay *r, uint32_t name, int full, gma_buf *out);
void gma_range_display(const gma_replay *r, uint32_t name, int full, gma_buf *out);
/* "cudaMalloc", "async pool", ... and "device", "pinned", ... */
const char *gma_source_label(uint64_t src);
const char *gma_kind_label(uint64_t kind);

#endif
