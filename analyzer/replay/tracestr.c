/*
 * Strings, display names and labels (tracestr.h).
 */
#include "tracestr.h"

#include <stdlib.h>
#include <string.h>

#include "names.h"
#include "replay_int.h"

void gma_str_set(gma_replay *r, uint64_t id, const gmt_bytes *s)
{
    if (id == 0 || id >= GMA_MAX_STRING_ID) {
        r->bad_strings++;
        return;
    }
    if (gma_grow_u32(&r->str_off, &r->str_len, &r->str_cap, (size_t)id + 1) != 0) {
        oom(r);
        return;
    }
    size_t off = gma_strs_add(&r->strs, s->ptr, s->len);
    if (off == (size_t)-1 || off >= UINT32_MAX) {
        oom(r);
        return;
    }
    r->str_off[id] = (uint32_t)off + 1;
    r->str_len[id] = s->len;
    if (gma_grow_u32(&r->klabel, NULL, &r->klabel_cap, (size_t)id + 1) != 0)
        oom(r);
}

const char *gma_str(const gma_replay *r, uint64_t id, size_t *len)
{
    if (id < r->str_cap && r->str_off[id]) {
        if (len)
            *len = r->str_len[id];
        return gma_strs_get(&r->strs, r->str_off[id] - 1);
    }
    if (len)
        *len = 0;
    return "";
}

uint32_t gma_str_keep(gma_replay *r, const gmt_bytes *b)
{
    size_t off = gma_strs_add(&r->strs, b->ptr, b->len);
    if (off == (size_t)-1) {
        oom(r);
        return 0;
    }
    return (uint32_t)off;
}

/* For the terminal's table (and the text it shares with the exports of
 * that run): the name appended to out since `from` with its control bytes
 * escaped and bad UTF-8 replaced. CSV and JSON escape at writing. */
static void shown_for_text(const gma_replay *r, gma_buf *out, size_t from)
{
    if (r->opt.format != GMA_FMT_TABLE || from > out->len || gma_text_is_clean(out->p + from, out->len - from))
        return;
    gma_buf raw = { 0 };
    gma_buf_putn(&raw, out->p + from, out->len - from);
    out->len = from;
    if (out->p)
        out->p[from] = '\0';
    gma_text_clean(out, gma_buf_str(&raw), raw.len);
    out->oom |= raw.oom;
    gma_buf_free(&raw);
}

/* The string of id name, *len its bytes; NULL when the trace has none
 * (then "(string ID)" is in out). */
static const char *named(const gma_replay *r, uint32_t name, size_t *len, gma_buf *out)
{
    const char *s = gma_str(r, name, len);
    if (*len)
        return s;
    gma_buf_printf(out, "(string %u)", name);
    return NULL;
}

static void kernel_display(const gma_replay *r, uint32_t name, int full, gma_buf *out)
{
    if (name == GMA_NAME_UNATTR) {
        gma_buf_puts(out, "(unattributed)");
        return;
    }
    if (name == GMA_NAME_BASELINE) {
        gma_buf_puts(out, "(baseline)");
        return;
    }
    if (name == NAME_UNNAMED) {
        gma_buf_puts(out, "(unnamed kernel)");
        return;
    }
    size_t len;
    const char *s = named(r, name, &len, out);
    if (!s)
        return;
    if (full)
        gma_name_full(s, len, out);
    else if (name < r->klabel_cap && r->klabel[name] > 1)
        gma_buf_puts(out, gma_strs_get(&r->klabels, r->klabel[name] - 1));
    else
        gma_name_short(s, len, 60, out);
}

/* ---- kernel labels for the whole trace ------------------------------------ */

/* A set of labels (offsets in strs) by their text: a hash, and the next
 * keys on a (64-bit, unlikely) collision of two texts. */
typedef struct lset {
    gma_map m;
    const gma_strs *strs;
} lset;

/* The index stored for text s, or UINT32_MAX; *key the key where s is or
 * would go. */
static uint32_t lset_find(const lset *ls, const uint32_t *off, const char *s, uint64_t *key)
{
    uint64_t k = gma_hash_str(s);
    uint32_t v;
    while (gma_map_get(&ls->m, k, &v)) {
        if (strcmp(gma_strs_get(ls->strs, off[v]), s) == 0) {
            *key = k;
            return v;
        }
        k++;
    }
    *key = k;
    return UINT32_MAX;
}

/* first[i]: the first index whose label is that of i; count[first]: how
 * many share it. 0, or -1 on OOM. */
static int group(const gma_strs *strs, const uint32_t *off, size_t n, uint32_t *first, uint32_t *count)
{
    lset ls = { { 0 }, strs };
    int err = 0;
    for (size_t i = 0; i < n; i++)
        count[i] = 0;
    for (size_t i = 0; i < n && !err; i++) {
        uint64_t key;
        uint32_t f = lset_find(&ls, off, gma_strs_get(strs, off[i]), &key);
        if (f == UINT32_MAX) {
            f = (uint32_t)i;
            err = gma_map_put(&ls.m, key, f) != 0;
        }
        first[i] = f;
        count[f]++;
    }
    gma_map_free(&ls.m);
    return err ? -1 : 0;
}

static int add_label(gma_replay *r, gma_buf *b, uint32_t *off)
{
    size_t o = gma_strs_add(&r->klabels, gma_buf_str(b), b->len);
    if (b->oom || o == (size_t)-1 || o >= UINT32_MAX)
        return -1;
    *off = (uint32_t)o;
    return 0;
}

int gma_kernel_labels_make(gma_replay *r)
{
    size_t n = 0;
    for (size_t id = 1; id < r->klabel_cap; id++)
        n += r->klabel[id] == 1 && id < r->str_cap && r->str_off[id] && r->str_len[id];
    if (!n)
        return 0;
    uint32_t *ids = malloc(n * sizeof(*ids)), *off = malloc(n * sizeof(*off));
    uint32_t *first = malloc(n * sizeof(*first)), *count = malloc(n * sizeof(*count));
    gma_buf b = { 0 };
    int err = !ids || !off || !first || !count;
    size_t k = 0;
    for (size_t id = 1; id < r->klabel_cap && !err; id++)
        if (r->klabel[id] == 1 && id < r->str_cap && r->str_off[id] && r->str_len[id])
            ids[k++] = (uint32_t)id;
    /* the short forms; the longer ones where they are shared */
    for (int pass = 0; pass < 2 && !err; pass++) {
        for (size_t i = 0; i < n && !err; i++) {
            if (pass && count[first[i]] < 2)
                continue;
            size_t len;
            const char *s = gma_str(r, ids[i], &len);
            gma_buf_reset(&b);
            gma_name_short(s, len, pass ? 110 : 60, &b);
            err = add_label(r, &b, &off[i]) != 0;
        }
        err = err || group(&r->klabels, off, n, first, count) != 0;
    }
    /* still shared: " #2", " #3"... after the first, skipping any text
     * that another label already is */
    lset ls = { { 0 }, &r->klabels };
    for (size_t i = 0; i < n && !err; i++) {
        uint64_t key;
        if (first[i] == i && lset_find(&ls, off, gma_strs_get(&r->klabels, off[i]), &key) == UINT32_MAX)
            err = gma_map_put(&ls.m, key, (uint32_t)i) != 0;
    }
    for (size_t i = 0; i < n; i++)
        if (first[i] == i)
            count[i] = 1; /* the number its group gave last */
    for (size_t i = 0; i < n && !err; i++) {
        if (first[i] == i)
            continue;
        uint32_t f = first[i];
        uint64_t key;
        do {
            gma_buf_reset(&b);
            gma_buf_printf(&b, "%s #%u", gma_strs_get(&r->klabels, off[f]), ++count[f]);
        } while (!b.oom && lset_find(&ls, off, gma_buf_str(&b), &key) != UINT32_MAX);
        err = add_label(r, &b, &off[i]) != 0 || gma_map_put(&ls.m, key, (uint32_t)i) != 0;
    }
    gma_map_free(&ls.m);
    for (size_t i = 0; i < n && !err; i++)
        r->klabel[ids[i]] = off[i] + 1;
    gma_buf_free(&b);
    free(ids);
    free(off);
    free(first);
    free(count);
    return err ? -1 : 0;
}

void gma_kernel_display(const gma_replay *r, uint32_t name, int full, gma_buf *out)
{
    size_t from = out->len;
    kernel_display(r, name, full, out);
    shown_for_text(r, out, from);
}

static void range_display(const gma_replay *r, uint32_t name, int full, gma_buf *out)
{
    if (name == GMA_NAME_UNATTR || name == GMA_NAME_BASELINE || name == NAME_UNNAMED) {
        kernel_display(r, name, full, out);
        return;
    }
    size_t len;
    const char *s = named(r, name, &len, out);
    if (!s)
        return;
    len = gma_nvtx_base_len(s, len);
    if (full || len <= 60) {
        gma_buf_putn(out, s, len);
    } else {
        gma_buf_putn(out, s, 28);
        gma_buf_puts(out, "...");
        gma_buf_putn(out, s + len - 29, 29);
    }
}

void gma_range_display(const gma_replay *r, uint32_t name, int full, gma_buf *out)
{
    size_t from = out->len;
    range_display(r, name, full, out);
    shown_for_text(r, out, from);
}

/* ---- labels ------------------------------------------------------------- */

const char *gma_source_label(uint64_t src)
{
    static const char *const tab[GMT_SRC_COUNT_] = { "unknown",   "cudaMalloc",  "async pool",   "VMM",
                                                     "managed",   "pinned host", "pitched/array", "static",
                                                     "PyTorch blocks" };
    return src < GMT_SRC_COUNT_ ? tab[src] : "unknown";
}

const char *gma_kind_label(uint64_t kind)
{
    static const char *const tab[GMT_MEMKIND_COUNT_] = { "unknown", "pageable", "pinned", "device",
                                                         "array",   "managed",  "device static",
                                                         "managed static" };
    return kind < GMT_MEMKIND_COUNT_ ? tab[kind] : "unknown";
}
