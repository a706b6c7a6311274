/*
 * Owners in PyTorch's terms (owners.h): the module and line of the peak,
 * groups by module and line, and the growth of leaks from step to step.
 */
#include <stdlib.h>
#include <string.h>

#include "owners.h"
#include "modules.h"
#include "names.h"
#include "report.h"
#include "tracestr.h"

/* ---- names ------------------------------------------------------------------ */

void gma_owners_line_name(const gma_replay *r, uint32_t frame, gma_buf *b)
{
    gma_buf_reset(b);
    if (!frame) {
        gma_buf_puts(b, "(no line)");
        return;
    }
    size_t len;
    const char *s = gma_str(r, frame, &len);
    gma_text_clean(b, s, len);
}

static size_t add_str(gma_strs *strs, const gma_buf *b, int *err)
{
    size_t off = b->oom ? (size_t)-1 : gma_strs_add(strs, gma_buf_str(b), b->len);
    if (off == (size_t)-1) {
        *err = 1;
        return 0;
    }
    return off;
}

/* ---- the peak's owner ------------------------------------------------------------ */

int gma_owners_peak(const gma_replay *r, unsigned d, gma_strs *strs, size_t *module, size_t *line)
{
    const gma_dev *D = &r->dev[d];
    *module = *line = 0;
    int paths = gma_modules_has_paths(r), frames = gma_modules_has_frames(r);
    if ((!paths && !frames) || !D->has_peak || D->peak_state == GMA_PEAK_BASELINE)
        return 0;
    /* the allocation whose alloc record made the peak: live at it, so kept */
    for (size_t i = 0; i < r->entries.len; i++) {
        const gma_entry *e = &GMA_VEC_AT(&r->entries, gma_entry, i);
        uint32_t node, frame;
        if (!(e->flags & GMA_E_INUSE) || e->device != d || e->ord != D->peak_ord || (e->flags & GMA_E_HOST) ||
            !gma_modules_entry(r, e, &node, &frame))
            continue;
        gma_buf b = { 0 };
        int err = 0;
        if (paths) {
            gma_modules_name(r, node, &b);
            *module = add_str(strs, &b, &err);
        }
        if (frames) {
            gma_owners_line_name(r, frame, &b);
            *line = add_str(strs, &b, &err);
        }
        gma_buf_free(&b);
        return err ? -1 : 0;
    }
    return 0;
}

/* ---- groups by module and by line -------------------------------------------------- */

typedef struct orow {
    uint32_t key;       /* module node or frame */
    uint64_t bytes, count;
    size_t label;
} orow;

void gma_ownset_init(gma_ownset *s, const gma_replay *r, gma_owngroups *out)
{
    memset(s, 0, sizeof(*s));
    s->out = out;
    out->has_module = gma_modules_has_paths(r);
    out->has_line = gma_modules_has_frames(r);
    gma_vec_init(&out->by_module, sizeof(gma_group));
    gma_vec_init(&out->by_line, sizeof(gma_group));
    gma_vec_init(&s->mods, sizeof(orow));
    gma_vec_init(&s->lines, sizeof(orow));
}

static int orow_add(gma_map *of, gma_vec *v, uint32_t key, uint64_t bytes)
{
    uint32_t i;
    if (!gma_map_get(of, key, &i)) {
        orow *x = gma_vec_push(v);
        if (!x)
            return -1;
        memset(x, 0, sizeof(*x));
        x->key = key;
        i = (uint32_t)(v->len - 1);
        if (gma_map_put(of, key, i) != 0)
            return -1;
    }
    orow *x = &GMA_VEC_AT(v, orow, i);
    x->bytes += bytes;
    x->count++;
    return 0;
}

int gma_ownset_add(gma_ownset *s, const gma_replay *r, const gma_entry *e)
{
    uint32_t node, frame;
    if ((!s->out->has_module && !s->out->has_line) || !gma_modules_entry(r, e, &node, &frame))
        return 0;
    int err = 0;
    if (s->out->has_module)
        err |= orow_add(&s->mod_of, &s->mods, node, e->bytes) != 0;
    if (s->out->has_line)
        err |= orow_add(&s->line_of, &s->lines, frame, e->bytes) != 0;
    return err ? -1 : 0;
}

static int orow_cmp(const void *pa, const void *pb, void *pc)
{
    const orow *a = pa, *b = pb;
    const gma_strs *labels = pc;
    if (a->bytes != b->bytes)
        return a->bytes > b->bytes ? -1 : 1;
    return strcmp(gma_strs_get(labels, a->label), gma_strs_get(labels, b->label));
}

static int orows_finish(const gma_replay *r, gma_vec *rows, int lines, gma_strs *strs, uint64_t top, gma_vec *out,
                        uint64_t *more)
{
    gma_buf b = { 0 };
    int err = 0;
    for (size_t i = 0; i < rows->len && !err; i++) {
        orow *x = &GMA_VEC_AT(rows, orow, i);
        if (lines)
            gma_owners_line_name(r, x->key, &b);
        else
            gma_modules_name(r, x->key, &b);
        x->label = add_str(strs, &b, &err);
    }
    gma_buf_free(&b);
    err |= gma_msort(rows->data, rows->len, sizeof(orow), orow_cmp, strs) != 0;
    size_t keep = top && top < rows->len ? (size_t)top : rows->len;
    *more = rows->len - keep;
    for (size_t i = 0; i < keep && !err; i++) {
        const orow *x = &GMA_VEC_AT(rows, orow, i);
        gma_group *o = gma_vec_push(out);
        if (!o)
            return -1;
        o->name = x->label;
        o->bytes = x->bytes;
        o->count = x->count;
    }
    return err ? -1 : 0;
}

int gma_ownset_finish(gma_ownset *s, const gma_replay *r, gma_strs *strs, uint64_t top)
{
    int err = orows_finish(r, &s->mods, 0, strs, top, &s->out->by_module, &s->out->more_modules) != 0;
    err |= orows_finish(r, &s->lines, 1, strs, top, &s->out->by_line, &s->out->more_lines) != 0;
    gma_map_free(&s->mod_of);
    gma_map_free(&s->line_of);
    gma_vec_free(&s->mods);
    gma_vec_free(&s->lines);
    return err ? -1 : 0;
}

void gma_owngroups_free(gma_owngroups *g)
{
    gma_vec_free(&g->by_module);
    gma_vec_free(&g->by_line);
}

/* ---- growth from step to step ----------------------------------------------------- */

/* A leaked allocation: its owner (a module node << 1, or a range name << 1
 * | 1) and its step. */
typedef struct leak1 {
    uint64_t owner, step, bytes;
} leak1;

static int leak1_cmp(const void *pa, const void *pb, void *pc)
{
    (void)pc;
    const leak1 *a = pa, *b = pb;
    if (a->owner != b->owner)
        return a->owner < b->owner ? -1 : 1;
    return a->step < b->step ? -1 : a->step > b->step;
}

static int growth_cmp(const void *pa, const void *pb, void *pc)
{
    const gma_growth *a = pa, *b = pb;
    const gma_strs *labels = pc;
    if (a->bytes != b->bytes)
        return a->bytes > b->bytes ? -1 : 1;
    return strcmp(gma_strs_get(labels, a->name), gma_strs_get(labels, b->name));
}

/* The leaked allocations of the selection with their owners. */
static int collect_leaks(const gma_replay *r, gma_vec *v)
{
    for (size_t i = 0; i < r->entries.len; i++) {
        const gma_entry *e = &GMA_VEC_AT(&r->entries, gma_entry, i);
        uint32_t node, frame;
        if ((e->flags & (GMA_E_INUSE | GMA_E_LEAKED)) != (GMA_E_INUSE | GMA_E_LEAKED) ||
            !gma_dev_selected(r, e->device) || !gma_modules_entry(r, e, &node, &frame))
            continue;
        leak1 *x = gma_vec_push(v);
        if (!x)
            return -1;
        x->owner = node ? (uint64_t)node << 1 : (uint64_t)e->rname << 1 | 1;
        x->step = e->step;
        x->bytes = e->bytes;
    }
    return 0;
}

/* The owner's name into strs. */
static size_t owner_label(const gma_replay *r, uint64_t owner, gma_strs *strs, gma_buf *b, int *err)
{
    if (owner & 1) {
        gma_buf_reset(b);
        gma_range_display(r, (uint32_t)(owner >> 1), r->opt.full_names, b);
    } else {
        gma_modules_name(r, (uint32_t)(owner >> 1), b);
    }
    return add_str(strs, b, err);
}

int gma_owners_growth(const gma_replay *r, gma_strs *strs, uint64_t top, gma_vec *out, uint64_t *more)
{
    gma_vec_init(out, sizeof(gma_growth));
    *more = 0;
    if (!gma_modules_seen(r))
        return 0;
    gma_vec v;
    gma_vec_init(&v, sizeof(leak1));
    int err = collect_leaks(r, &v) != 0;
    err |= gma_msort(v.data, v.len, sizeof(leak1), leak1_cmp, NULL) != 0;
    gma_buf b = { 0 };
    for (size_t i = 0; i < v.len && !err;) {
        const leak1 *x = &GMA_VEC_AT(&v, leak1, i);
        gma_growth g = { 0 };
        g.is_module = !(x->owner & 1);
        g.first_step = x->step;
        g.min_step_bytes = UINT64_MAX;
        size_t j = i;
        while (j < v.len && GMA_VEC_AT(&v, leak1, j).owner == x->owner) {
            uint64_t st = GMA_VEC_AT(&v, leak1, j).step, sb = 0;
            for (; j < v.len && GMA_VEC_AT(&v, leak1, j).owner == x->owner && GMA_VEC_AT(&v, leak1, j).step == st; j++) {
                sb += GMA_VEC_AT(&v, leak1, j).bytes;
                g.count++;
            }
            g.steps++;
            g.last_step = st;
            g.bytes += sb;
            g.min_step_bytes = sb < g.min_step_bytes ? sb : g.min_step_bytes;
            g.max_step_bytes = sb > g.max_step_bytes ? sb : g.max_step_bytes;
        }
        if (g.steps >= 2) {
            g.name = owner_label(r, x->owner, strs, &b, &err);
            gma_growth *o = err ? NULL : gma_vec_push(out);
            if (!o)
                err = 1;
            else
                *o = g;
        }
        i = j;
    }
    gma_buf_free(&b);
    gma_vec_free(&v);
    if (!err)
        err = gma_msort(out->data, out->len, sizeof(gma_growth), growth_cmp, strs) != 0;
    if (!err && top && out->len > top) {
        *more = out->len - top;
        out->len = (size_t)top;
    }
    return err ? -1 : 0;
}
