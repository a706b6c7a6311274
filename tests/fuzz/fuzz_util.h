/*
 * Helpers shared by the fuzz targets (tests/fuzz/): the libFuzzer entry
 * point's prototype, a check macro that aborts with file:line (libFuzzer and
 * the replay driver both report an abort as a failure and keep the input),
 * and a by-value digest of a trace record so that two decodings of the same
 * data can be compared without caring where their strings live.
 */
#ifndef GMEMPROF_FUZZ_UTIL_H
#define GMEMPROF_FUZZ_UTIL_H

#include <stddef.h>
#include <stdint.h>

#include "gmemprof/trace_format.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

void fz_fail(const char *file, int line, const char *cond, const char *fmt, ...)
    __attribute__((noreturn, format(printf, 4, 5)));

/* FZ_CHECK(cond, "fmt", ...): an invariant; on failure prints what and where
 * on stderr and aborts, so the fuzzer saves the input as a crash. */
#define FZ_CHECK(cond, ...)                                                                        \
    do {                                                                                           \
        if (!(cond))                                                                               \
            fz_fail(__FILE__, __LINE__, #cond, __VA_ARGS__);                                       \
    } while (0)

/* 1 when `id` is listed in the environment variable FUZZ_KNOWN_FINDINGS
 * (comma-separated): a finding already reported, whose check is then skipped
 * so that a long run can go on looking for others. docs/reliability.md lists
 * the ids. Never set in CI: there every check is fatal. */
int fz_known(const char *id);

/* FNV-1a, 64 bits: the digest of a record and of input bytes. */
#define FZ_FNV_INIT 0xcbf29ce484222325ull
uint64_t fz_hash_bytes(uint64_t h, const void *p, size_t n);
uint64_t fz_hash_u64(uint64_t h, uint64_t v);

/* Digest of every field of a record by value (strings by their bytes), in
 * payload order. Two records with equal digests hold the same values. */
uint64_t fz_record_digest(const gmt_record *r);

/* Checks what any decoded record must satisfy: a known type, string pointers
 * non-NULL with len <= GMT_MAX_STRING, TAG ndev <= GMT_MAX_TAG_DEVICES. Every
 * string byte is read, so AddressSanitizer sees a pointer past its buffer.
 * When lo/hi are given, every string must lie inside [lo, hi). */
void fz_record_check(const gmt_record *r, const uint8_t *lo, const uint8_t *hi);

/* Every gmt_bytes of a record (up to 4); returns how many. */
size_t fz_record_strings(const gmt_record *r, const gmt_bytes **out);

#endif
