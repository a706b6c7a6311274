/*
 * Kernel and range names for display and for matching across traces.
 *
 * gma_demangle: a small Itanium C++ ABI demangler in plain C (no libstdc++),
 * good for CUDA kernel names: nested and template names, literals, lambdas
 * and closures, local names, substitutions, template parameters, function
 * and array types, simple expressions. What it cannot read it reports, and
 * the callers fall back to the raw name.
 */
#ifndef GMA_NAMES_H
#define GMA_NAMES_H

#include <stddef.h>

#include "util/gma_util.h"

/* Demangles s[0..n) ("_Z..."). Returns 0 and appends the full text to out
 * ("void ns::f<int>(int*)"); *name_b and *name_e delimit, inside what was
 * appended, the qualified name without return type and parameters.
 * Returns -1 (out unchanged) when s is not a mangled name it can read. */
int gma_demangle(const char *s, size_t n, gma_buf *out, size_t *name_b, size_t *name_e);

/* Full display text: demangled when mangled, else the raw text. */
void gma_name_full(const char *s, size_t n, gma_buf *out);
/* Short display text: the qualified name without return type and
 * parameters, template arguments elided from the inside out and, last, the
 * middle cut, until it fits max_len characters (0: no limit). A qualified
 * name longer than GMA_SHORT_SCAN bytes is shortened from its first and
 * last GMA_SHORT_SCAN / 2 bytes, joined by "...": the work is linear in n
 * (demangling, bounded per byte) plus a constant. */
#define GMA_SHORT_SCAN 4096
void gma_name_short(const char *s, size_t n, size_t max_len, gma_buf *out);
/* Name used to match rows across two traces: the qualified name without
 * template arguments, parameters, hex addresses and hash-like tokens; for
 * kernels (is_kernel) also without a trailing "_<digits>" (generated names
 * such as triton_poi_fused_add_0 are numbered in compile order). */
void gma_name_normalize(const char *s, size_t n, int is_kernel, gma_buf *out);

/* Length of the part of an NVTX range name that names the operation:
 * PyTorch's emit_nvtx appends per-call decorations (", seq = 12",
 * ", op_id = 345", ", sizes = [...]") that would make every call its own
 * row; they are cut. */
size_t gma_nvtx_base_len(const char *s, size_t n);

#endif
