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
/* Display names. A kernel's short name (full 0) is its label for the whole
 * trace once gma_kernel_labels_make ran: the same wherever it is shown. */
void gma_kernel_display(const gma_replay *r, uint32_t name, int full, gma_buf *out);
/* The labels of every name that a kernel record of the trace carries:
 * the short form (60 characters); where several names share it, the longer
 * one (110); where those still do, the label of the first id with " #2",
 * " #3"... by id. Different names never share a label. 0, or -1 on OOM. */
int gma_kernel_labels_make(gma_replay *r);
void gma_range_display(const gma_replay *r, uint32_t name, int full, gma_buf *out);
/* "cudaMalloc", "async pool", ... and "device", "pinned", ... */
const char *gma_source_label(uint64_t src);
const char *gma_kind_label(uint64_t kind);

#endif
