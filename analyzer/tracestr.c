/*
 * Strings, display names and labels (tracestr.h).
 */
#include "tracestr.h"
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
    else
        gma_name_short(s, len, 60, out);
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
