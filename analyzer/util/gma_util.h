/*
 * Small containers and formatting shared by every analyzer file:
 *   gma_map   open-addressing hash map, u64 key -> u32 value, no per-insert malloc
 *   gma_vec   growable array of fixed-size elements
 *   gma_strs  append-only string store (NUL-terminated, addressed by offset)
 *   gma_fmt_* 1024-based byte units, milliseconds, JSON/CSV escaping
 * Every function that can allocate returns an error the caller checks.
 */
#ifndef GMA_UTIL_H
#define GMA_UTIL_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <stdio.h>

/* ---- hash map ---------------------------------------------------------- */

/* Linear probing with backward-shift deletion (no tombstones), so a map that
 * sees many inserts and removes (the live set) never degrades. */
typedef struct gma_slot_kv {
    uint64_t key;
    uint64_t val;    /* value + 1; 0 marks an empty bucket */
} gma_slot_kv;

/* Keys and values interleaved: one cache line per probe. */
typedef struct gma_map {
    gma_slot_kv *b;
    size_t cap;      /* power of two, or 0 */
    size_t count;
    unsigned shift;  /* 64 - log2(cap) */
} gma_map;

/* Fibonacci hashing: the top bits of the product depend on every bit of
 * the key at or below them, so aligned addresses (low bits 0), counters
 * (steps, sequence numbers) and keys with a device in their top bits all
 * spread; no pre-mix, which cost a fifth of a probe. */
static inline size_t gma_map_hash(const gma_map *m, uint64_t k)
{
    return (size_t)((k * 0x9E3779B97F4A7C15ull) >> m->shift);
}

void gma_map_free(gma_map *m);
/* Empties the map, keeping its buckets. */
void gma_map_clear(gma_map *m);
/* Returns 1 and *val when present, else 0. */
static inline int gma_map_get(const gma_map *m, uint64_t key, uint32_t *val)
{
    if (!m->count)
        return 0;
    size_t mask = m->cap - 1;
    for (size_t i = gma_map_hash(m, key);; i = (i + 1) & mask) {
        const gma_slot_kv *s = &m->b[i];
        if (!s->val)
            return 0;
        if (s->key == key) {
            *val = (uint32_t)(s->val - 1);
            return 1;
        }
    }
}
/* FNV-1a of n bytes: the key of a name in a gma_map (names that collide
 * merge; at 64 bits, not in practice). */
static inline uint64_t gma_hash_bytes(const char *s, size_t n)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < n; i++)
        h = (h ^ (unsigned char)s[i]) * 0x100000001b3ull;
    return h;
}
static inline uint64_t gma_hash_str(const char *s) { return gma_hash_bytes(s, strlen(s)); }

/* Doubles the buckets (64 first). 0, or -1 on OOM (map unchanged). */
int gma_map_grow(gma_map *m);
/* Inserts or overwrites. 0 on success, -1 on OOM (map unchanged). */
int gma_map_put(gma_map *m, uint64_t key, uint32_t val);

/* swap and del are inline: the live set calls them once per alloc and free,
 * and a call there costs as much as the probe (spilled registers, the
 * result through memory). */

/* Inserts key -> val; when key was present, replaces its value, sets *old
 * and returns 1. 0 on a fresh insert, -1 on OOM (map unchanged). One probe. */
static inline int gma_map_swap(gma_map *m, uint64_t key, uint32_t val, uint32_t *old)
{
    /* Load factor at most 1/2: probes stay short on aligned addresses. */
    if ((m->count + 1) * 2 > m->cap && gma_map_grow(m) != 0) {
        *old = UINT32_MAX; /* defined on every path a caller may test with if (had) */
        return -1;
    }
    gma_slot_kv *b = m->b;
    size_t mask = m->cap - 1;
    size_t i = gma_map_hash(m, key);
    while (b[i].val) {
        if (b[i].key == key) {
            *old = (uint32_t)(b[i].val - 1);
            b[i].val = (uint64_t)val + 1;
            return 1;
        }
        i = (i + 1) & mask;
    }
    b[i].key = key;
    b[i].val = (uint64_t)val + 1;
    m->count++;
    return 0;
}

/* Removes key; returns 1 and *val (may be NULL) when it was present. */
static inline int gma_map_del(gma_map *m, uint64_t key, uint32_t *val)
{
    if (!m->count)
        return 0;
    gma_slot_kv *b = m->b;
    size_t mask = m->cap - 1;
    size_t i = gma_map_hash(m, key);
    for (;; i = (i + 1) & mask) {
        if (!b[i].val)
            return 0;
        if (b[i].key == key)
            break;
    }
    if (val)
        *val = (uint32_t)(b[i].val - 1);
    /* Backward shift: move later members of the probe run into the hole
     * when their home bucket is not between the hole and them. */
    size_t hole = i;
    for (size_t j = (i + 1) & mask; b[j].val; j = (j + 1) & mask) {
        size_t home = gma_map_hash(m, b[j].key);
        int movable = (hole <= j) ? (home <= hole || home > j) : (home <= hole && home > j);
        if (movable) {
            b[hole] = b[j];
            hole = j;
        }
    }
    b[hole].val = 0;
    m->count--;
    return 1;
}

/* ---- growable array ---------------------------------------------------- */

typedef struct gma_vec {
    void *data;
    size_t len, cap, elem;
} gma_vec;

void gma_vec_init(gma_vec *v, size_t elem);
void gma_vec_free(gma_vec *v);
/* Appends one zeroed element and returns it, NULL on OOM. */
void *gma_vec_push(gma_vec *v);
int gma_vec_reserve(gma_vec *v, size_t n);
#define GMA_VEC_AT(v, T, i) (((T *)(v)->data)[i])
/* Grows the zeroed arrays *a and (when b) *b of *cap elements to hold at
 * least need, doubling from 1024; 0, or -1 on OOM. */
int gma_grow_u32(uint32_t **a, uint32_t **b, size_t *cap, size_t need);

/* ---- string store ------------------------------------------------------ */

typedef struct gma_strs {
    char *buf;
    size_t len, cap;
} gma_strs;

/* Offset 0 always holds the empty string once anything was added. */
void gma_strs_free(gma_strs *s);
/* Copies s[0..n) plus a NUL; returns its offset, or (size_t)-1 on OOM. */
size_t gma_strs_add(gma_strs *s, const char *p, size_t n);
static inline const char *gma_strs_get(const gma_strs *s, size_t off) { return s->buf ? s->buf + off : ""; }

/* ---- a growable text buffer -------------------------------------------- */

typedef struct gma_buf {
    char *p;
    size_t len, cap;
    int oom;  /* sticky: set when a growth failed; the text is then cut */
} gma_buf;

void gma_buf_free(gma_buf *b);
void gma_buf_reset(gma_buf *b);
void gma_buf_putn(gma_buf *b, const char *s, size_t n);
void gma_buf_puts(gma_buf *b, const char *s);
void gma_buf_putc(gma_buf *b, char c);
void gma_buf_printf(gma_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static inline const char *gma_buf_str(const gma_buf *b) { return b->p ? b->p : ""; }

/* ---- formatting -------------------------------------------------------- */

#define GMA_FMT_CAP 48
/* 1024-based: "512 B", "1.50 KiB", "12.00 MiB", "3.25 GiB", "1.00 TiB". */
const char *gma_fmt_bytes(char out[GMA_FMT_CAP], uint64_t v);
/* Signed, with an explicit "+" when show_plus and v > 0. */
const char *gma_fmt_sbytes(char out[GMA_FMT_CAP], int64_t v, int show_plus);
/* Nanoseconds as milliseconds with 3 decimals ("12.345"); signed. */
const char *gma_fmt_ms(char out[GMA_FMT_CAP], int64_t ns);
/* A duration in the most readable unit: "812 ns", "12.3 us", "4.56 ms", "1.234 s". */
const char *gma_fmt_dur(char out[GMA_FMT_CAP], uint64_t ns);
/* Thousands separators: 1234567 -> "1,234,567". */
const char *gma_fmt_count(char out[GMA_FMT_CAP], uint64_t v);

/* a + b, at most UINT64_MAX: sums across traces (one trace's stay below
 * GMA_BYTES_MAX), which must not wrap however many there are. */
static inline uint64_t gma_sat_add(uint64_t a, uint64_t b) { return a > UINT64_MAX - b ? UINT64_MAX : a + b; }
/* The same for signed values, kept within INT64_MIN..INT64_MAX. */
static inline int64_t gma_sat_addi(int64_t a, int64_t b)
{
    int64_t r;
    return __builtin_add_overflow(a, b, &r) ? (b > 0 ? INT64_MAX : INT64_MIN) : r;
}

/* Length of the valid UTF-8 sequence at s (n > 0 bytes left), 0 when the
 * byte at s starts none (then it is shown as U+FFFD, in every output). */
size_t gma_utf8_len(const char *s, size_t n);
/* Appends s with control bytes escaped (\n, \t, \r, \xHH) and bytes that
 * are not UTF-8 as U+FFFD: a name from a trace, for a terminal. */
void gma_text_clean(gma_buf *out, const char *s, size_t n);
/* The same, written to f: a path or a name inside a line of text. */
void gma_put_text(FILE *f, const char *s);
/* Whether gma_text_clean would copy s as it is. */
int gma_text_is_clean(const char *s, size_t n);

/* JSON string literal with quotes; invalid UTF-8 bytes become \ufffd. */
void gma_json_str(FILE *f, const char *s, size_t n);
void gma_json_cstr(FILE *f, const char *s);
/* CSV field: quoted when it holds a comma, a quote or '#'; control bytes
 * escaped (\n, \x1b: a record, or a comment line, stays one line), bytes
 * that are not UTF-8 as U+FFFD. */
void gma_csv_field(FILE *f, const char *s);
/* The same for text from a trace or a user (names, paths): one that starts
 * with = + - @ TAB or CR gets a leading ' so that a spreadsheet does not run
 * it as a formula. */
void gma_csv_text(FILE *f, const char *s);

/* A small pretty-printing JSON writer: commas and indentation handled. */
typedef struct gma_jw {
    FILE *f;
    int depth;
    unsigned char first[64]; /* no member written yet at this depth */
    int after_key;
} gma_jw;

void gma_jw_init(gma_jw *j, FILE *f);
void gma_jw_begin(gma_jw *j, char open);  /* '{' or '[' */
void gma_jw_end(gma_jw *j, char close);
void gma_jw_key(gma_jw *j, const char *key);
void gma_jw_str(gma_jw *j, const char *s);
void gma_jw_u64(gma_jw *j, uint64_t v);
void gma_jw_i64(gma_jw *j, int64_t v);
void gma_jw_dbl(gma_jw *j, double v);
/* A double that reads back to the same value (17 significant digits). */
void gma_jw_dbl_exact(gma_jw *j, double v);
void gma_jw_bool(gma_jw *j, int v);
void gma_jw_null(gma_jw *j);
/* key + value shorthands */
void gma_jw_kstr(gma_jw *j, const char *key, const char *s);
void gma_jw_ku64(gma_jw *j, const char *key, uint64_t v);
void gma_jw_ki64(gma_jw *j, const char *key, int64_t v);

/* Stable merge sort with a context: cmp < 0 when a goes first. */
int gma_msort(void *base, size_t n, size_t size, int (*cmp)(const void *a, const void *b, void *ctx), void *ctx);

/* Largest x with x <= v that is 1, 2 or 5 times a power of ten (axis ticks). */
double gma_nice_step(double range, int max_ticks);

#endif
