/*
 * check_trace: reads a gmemprof trace with gmt_reader and checks it against
 * what a sample says it did (its --json file) and/or expectations given on
 * the command line. Also prints facts the GPU scripts compare with PyTorch's
 * own counters: the peak of live device memory computed here from ALLOC and
 * FREE records alone (independent of gmem-analyze), a JSON summary, and the
 * per-NVTX-range self memory (emit_nvtx vs torch.profiler comparison).
 *
 *   check_trace TRACE [--expect-json FILE] [--expect KEY=VALUE]... [--tag-prefix P]
 *                     [--summary] [--print-peak] [--ranges OUT.json] [--ranges-scope active|all]
 *
 * Check lines go to stderr ("ok", "FAIL", "warn"); --summary / --print-peak
 * write to stdout. Exit 0: every check passed; 1: a check failed; 2: bad
 * usage, unreadable trace or expectations.
 *
 * How a trace is read (the rules the checks rely on):
 *  - ALLOC/FREE records are replayed in time order (ts, then file order), so
 *    a writer that emits CUPTI buffers out of order is still judged right.
 *  - An ALLOC flagged BASELINE re-announces an allocation live at a window
 *    begin: ignored when that (device, address) is already live, otherwise
 *    it enters the live set (it was made before recording began).
 *  - "Active steps" are the steps covered by a window: from each
 *    WINDOW_BEGIN's step to its WINDOW_END's step (to the last step seen when
 *    the end is missing). An expected allocation, free, kernel or tag is
 *    required only when its step is active; outside, it is optional but must
 *    match if present. Totals, copies and live-at-end are compared only when
 *    every expected step is active (a whole-run trace).
 *  - Device memory = everything except pinned/pageable host and managed
 *    memory (by memory kind or by source).
 *  - The consumer of an allocation is the KERNEL with the allocation's tid
 *    and seq + 1 (the next launch of that thread), as docs/attribution.md
 *    states.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "gmt_io.h"

/* ------------------------------------------------------------------------ */
/* small utilities */

static void *xcalloc(size_t n, size_t sz)
{
    void *p = calloc(n ? n : 1, sz);
    if (!p) {
        fprintf(stderr, "check_trace: out of memory\n");
        exit(2);
    }
    return p;
}

static void *xrealloc(void *p, size_t n, size_t sz)
{
    if (n && sz > SIZE_MAX / n) {
        fprintf(stderr, "check_trace: out of memory\n");
        exit(2);
    }
    size_t total = n * sz;
    void *q = realloc(p, total ? total : 1);
    if (!q) {
        fprintf(stderr, "check_trace: out of memory\n");
        exit(2);
    }
    return q;
}

static char *xstrndup(const char *s, size_t n)
{
    char *p = xcalloc(n + 1, 1);
    memcpy(p, s, n);
    return p;
}

#define VEC(T)                                                                                     \
    struct {                                                                                       \
        T *v;                                                                                      \
        size_t n, cap;                                                                             \
    }
#define VEC_PUSH(vec, item)                                                                        \
    do {                                                                                           \
        if ((vec).n == (vec).cap) {                                                                \
            (vec).cap = (vec).cap ? (vec).cap * 2 : 64;                                            \
            (vec).v = xrealloc((vec).v, (vec).cap, sizeof *(vec).v);                               \
        }                                                                                          \
        (vec).v[(vec).n++] = (item);                                                               \
    } while (0)

/* Open-addressing map from a pair of u64 to a u64 value. */
typedef struct pmap {
    uint64_t *ka, *kb, *val;
    unsigned char *used;
    size_t cap, n;
} pmap;

static uint64_t mix64(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ull;
    x ^= x >> 33;
    return x;
}

static void pmap_init(pmap *m, size_t cap)
{
    size_t c = 64;
    while (c < cap * 2)
        c *= 2;
    m->cap = c;
    m->n = 0;
    m->ka = xcalloc(c, sizeof *m->ka);
    m->kb = xcalloc(c, sizeof *m->kb);
    m->val = xcalloc(c, sizeof *m->val);
    m->used = xcalloc(c, 1);
}

static void pmap_free(pmap *m)
{
    free(m->ka);
    free(m->kb);
    free(m->val);
    free(m->used);
    memset(m, 0, sizeof *m);
}

static size_t pmap_slot(const pmap *m, uint64_t a, uint64_t b)
{
    size_t i = (size_t)(mix64(a * 31 + mix64(b)) & (m->cap - 1));
    while (m->used[i] && (m->ka[i] != a || m->kb[i] != b))
        i = (i + 1) & (m->cap - 1);
    return i;
}

static uint64_t *pmap_get(pmap *m, uint64_t a, uint64_t b)
{
    size_t i = pmap_slot(m, a, b);
    return m->used[i] ? &m->val[i] : NULL;
}

static void pmap_put(pmap *m, uint64_t a, uint64_t b, uint64_t v)
{
    if ((m->n + 1) * 2 > m->cap) {
        pmap old = *m;
        pmap_init(m, old.cap);
        for (size_t i = 0; i < old.cap; i++)
            if (old.used[i])
                pmap_put(m, old.ka[i], old.kb[i], old.val[i]);
        pmap_free(&old);
    }
    size_t i = pmap_slot(m, a, b);
    if (!m->used[i]) {
        m->used[i] = 1;
        m->ka[i] = a;
        m->kb[i] = b;
        m->n++;
    }
    m->val[i] = v;
}

/* Backward-shift deletion keeps probe chains intact. */
static int pmap_del(pmap *m, uint64_t a, uint64_t b)
{
    size_t i = pmap_slot(m, a, b);
    if (!m->used[i])
        return 0;
    m->used[i] = 0;
    m->n--;
    size_t j = i;
    for (;;) {
        j = (j + 1) & (m->cap - 1);
        if (!m->used[j])
            break;
        size_t home = (size_t)(mix64(m->ka[j] * 31 + mix64(m->kb[j])) & (m->cap - 1));
        /* move j to i if home is not cyclically in (i, j] */
        int in_range = (i <= j) ? (home > i && home <= j) : (home > i || home <= j);
        if (!in_range) {
            m->ka[i] = m->ka[j];
            m->kb[i] = m->kb[j];
            m->val[i] = m->val[j];
            m->used[i] = 1;
            m->used[j] = 0;
            i = j;
        }
    }
    return 1;
}

/* ------------------------------------------------------------------------ */
/* a small JSON reader (objects, arrays, strings, integers, doubles, literals) */

typedef enum jtype { J_NULL, J_BOOL, J_NUM, J_STR, J_ARR, J_OBJ } jtype;

typedef struct jval {
    jtype t;
    int b;
    int is_int;
    int64_t i;
    double d;
    char *s;
    struct jval **items; /* array items or object values */
    char **keys;         /* object keys */
    size_t n;
} jval;

typedef struct jparser {
    const char *p, *end;
    char err[160];
} jparser;

static void jskip(jparser *jp)
{
    while (jp->p < jp->end && (*jp->p == ' ' || *jp->p == '\n' || *jp->p == '\r' || *jp->p == '\t'))
        jp->p++;
}

static jval *jparse_value(jparser *jp, int depth);

static char *jparse_string(jparser *jp)
{
    if (jp->p >= jp->end || *jp->p != '"') {
        snprintf(jp->err, sizeof jp->err, "expected a string");
        return NULL;
    }
    jp->p++;
    size_t cap = 32, n = 0;
    char *out = xcalloc(cap, 1);
    while (jp->p < jp->end && *jp->p != '"') {
        char c = *jp->p++;
        if (c == '\\') {
            if (jp->p >= jp->end)
                break;
            char e = *jp->p++;
            switch (e) {
            case 'n': c = '\n'; break;
            case 't': c = '\t'; break;
            case 'r': c = '\r'; break;
            case 'b': c = '\b'; break;
            case 'f': c = '\f'; break;
            case 'u': {
                unsigned v = 0;
                for (int k = 0; k < 4; k++) {
                    if (jp->p >= jp->end) {
                        free(out);
                        snprintf(jp->err, sizeof jp->err, "bad \\u escape");
                        return NULL;
                    }
                    char h = *jp->p++;
                    v <<= 4;
                    if (h >= '0' && h <= '9')
                        v |= (unsigned)(h - '0');
                    else if (h >= 'a' && h <= 'f')
                        v |= (unsigned)(h - 'a' + 10);
                    else if (h >= 'A' && h <= 'F')
                        v |= (unsigned)(h - 'A' + 10);
                }
                c = v < 0x80 ? (char)v : '?'; /* names here are ASCII */
                break;
            }
            default: c = e; break;
            }
        }
        if (n + 2 > cap) {
            cap *= 2;
            out = xrealloc(out, cap, 1);
        }
        out[n++] = c;
    }
    if (jp->p >= jp->end) {
        free(out);
        snprintf(jp->err, sizeof jp->err, "unterminated string");
        return NULL;
    }
    jp->p++;
    out[n] = '\0';
    return out;
}

static void jfree(jval *v)
{
    if (!v)
        return;
    free(v->s);
    for (size_t i = 0; i < v->n; i++) {
        jfree(v->items[i]);
        if (v->keys)
            free(v->keys[i]);
    }
    free(v->items);
    free(v->keys);
    free(v);
}

static jval *jparse_value(jparser *jp, int depth)
{
    if (depth > 64) {
        snprintf(jp->err, sizeof jp->err, "nesting too deep");
        return NULL;
    }
    jskip(jp);
    if (jp->p >= jp->end) {
        snprintf(jp->err, sizeof jp->err, "unexpected end of input");
        return NULL;
    }
    jval *v = xcalloc(1, sizeof *v);
    char c = *jp->p;
    if (c == '{' || c == '[') {
        int obj = c == '{';
        v->t = obj ? J_OBJ : J_ARR;
        jp->p++;
        size_t cap = 0;
        jskip(jp);
        if (jp->p < jp->end && *jp->p == (obj ? '}' : ']')) {
            jp->p++;
            return v;
        }
        for (;;) {
            char *key = NULL;
            if (obj) {
                jskip(jp);
                key = jparse_string(jp);
                if (!key)
                    goto fail;
                jskip(jp);
                if (jp->p >= jp->end || *jp->p != ':') {
                    free(key);
                    snprintf(jp->err, sizeof jp->err, "expected ':'");
                    goto fail;
                }
                jp->p++;
            }
            jval *item = jparse_value(jp, depth + 1);
            if (!item) {
                free(key);
                goto fail;
            }
            if (v->n == cap) {
                cap = cap ? cap * 2 : 8;
                v->items = xrealloc(v->items, cap, sizeof *v->items);
                if (obj)
                    v->keys = xrealloc(v->keys, cap, sizeof *v->keys);
            }
            v->items[v->n] = item;
            if (obj)
                v->keys[v->n] = key;
            v->n++;
            jskip(jp);
            if (jp->p < jp->end && *jp->p == ',') {
                jp->p++;
                continue;
            }
            if (jp->p < jp->end && *jp->p == (obj ? '}' : ']')) {
                jp->p++;
                return v;
            }
            snprintf(jp->err, sizeof jp->err, "expected ',' or '%c'", obj ? '}' : ']');
            goto fail;
        }
    }
    if (c == '"') {
        v->t = J_STR;
        v->s = jparse_string(jp);
        if (!v->s)
            goto fail;
        return v;
    }
    if (!strncmp(jp->p, "true", 4) || !strncmp(jp->p, "false", 5)) {
        v->t = J_BOOL;
        v->b = *jp->p == 't';
        jp->p += v->b ? 4 : 5;
        return v;
    }
    if (!strncmp(jp->p, "null", 4)) {
        v->t = J_NULL;
        jp->p += 4;
        return v;
    }
    {
        char buf[64];
        size_t n = 0;
        int frac = 0;
        while (jp->p < jp->end && n + 1 < sizeof buf &&
               (strchr("+-0123456789", *jp->p) || *jp->p == '.' || *jp->p == 'e' || *jp->p == 'E')) {
            if (*jp->p == '.' || *jp->p == 'e' || *jp->p == 'E')
                frac = 1;
            buf[n++] = *jp->p++;
        }
        buf[n] = '\0';
        if (!n) {
            snprintf(jp->err, sizeof jp->err, "unexpected character '%c'", c);
            goto fail;
        }
        v->t = J_NUM;
        char *e = NULL;
        errno = 0;
        if (!frac) {
            v->i = strtoll(buf, &e, 10);
            v->is_int = 1;
            v->d = (double)v->i;
        } else {
            v->d = strtod(buf, &e);
            v->i = (int64_t)v->d;
        }
        if (errno || !e || *e) {
            snprintf(jp->err, sizeof jp->err, "bad number '%s'", buf);
            goto fail;
        }
        return v;
    }
fail:
    jfree(v);
    return NULL;
}

static const jval *jget(const jval *o, const char *key)
{
    if (!o || o->t != J_OBJ)
        return NULL;
    for (size_t i = 0; i < o->n; i++)
        if (!strcmp(o->keys[i], key))
            return o->items[i];
    return NULL;
}

static int64_t jint(const jval *o, const char *key, int64_t dflt)
{
    const jval *v = jget(o, key);
    return v && v->t == J_NUM ? v->i : dflt;
}

static const char *jstr(const jval *o, const char *key)
{
    const jval *v = jget(o, key);
    return v && v->t == J_STR ? v->s : NULL;
}

static int jbool(const jval *o, const char *key, int dflt)
{
    const jval *v = jget(o, key);
    return v && v->t == J_BOOL ? v->b : dflt;
}

static jval *jload(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "check_trace: cannot open %s: %s\n", path, strerror(errno));
        return NULL;
    }
    size_t cap = 1 << 16, n = 0;
    char *buf = xcalloc(cap, 1);
    size_t k;
    while ((k = fread(buf + n, 1, cap - n, f)) > 0) {
        n += k;
        if (n == cap) {
            cap *= 2;
            buf = xrealloc(buf, cap, 1);
        }
    }
    fclose(f);
    jparser jp = {buf, buf + n, ""};
    jval *v = jparse_value(&jp, 0);
    if (v) {
        jskip(&jp);
        if (jp.p != jp.end) {
            snprintf(jp.err, sizeof jp.err, "trailing characters");
            jfree(v);
            v = NULL;
        }
    }
    if (!v)
        fprintf(stderr, "check_trace: %s: invalid JSON: %s (at byte %zu)\n", path, jp.err,
                (size_t)(jp.p - buf));
    free(buf);
    return v;
}

/* ------------------------------------------------------------------------ */
/* the trace, loaded */

typedef struct mem_rec {
    gmt_mem m;
    int is_free;
    uint64_t order;  /* position in the file */
    int64_t window;  /* last WINDOW_BEGIN before it in the file, -1 none */
    int64_t matched; /* expected alloc index, -1 none */
} mem_rec;

typedef struct window_rec {
    gmt_window_begin b;
    int has_end;
    gmt_window_end e;
    uint64_t baseline_seen_count, baseline_seen_bytes;
} window_rec;

typedef struct tag_rec {
    uint64_t name, step, ts;
    int has_dev0;
    gmt_tag_device dev0;
    int used;
} tag_rec;

typedef struct range_rec {
    uint64_t id, name, ts, tid;
} range_rec;

typedef struct trace {
    const char *path;
    uint64_t file_bytes;
    gmt_reader_end end;
    int has_header;
    gmt_header hdr;
    char *host, *cmdline, *config;
    VEC(gmt_device) devices;
    VEC(char *) devnames;
    VEC(char *) strings; /* index = string id */
    VEC(mem_rec) mems;
    VEC(gmt_block) blocks; /* a bridge's block ALLOC and FREE_REQUESTED, not baseline */
    VEC(gmt_kernel) kernels;
    VEC(gmt_copy) memcpys;
    VEC(gmt_copy) memsets;
    VEC(range_rec) ranges;
    uint64_t range_ends, marks, memsamples;
    VEC(tag_rec) tags;
    VEC(gmt_step) steps;
    VEC(window_rec) windows;
    int has_stats;
    gmt_stats stats;
    int has_trailer;
    gmt_trailer trailer;
    uint64_t by_type[GMT_REC_TYPE_MAX_];
    uint64_t max_step;
    /* derived */
    pmap kernel_by_seq; /* (tid, seq) -> kernel index */
    pmap range_names;   /* (range id, 0) -> string id */
} trace;

static const char *str_of(const trace *t, uint64_t id)
{
    if (id == 0 || id >= t->strings.n || !t->strings.v[id])
        return "";
    return t->strings.v[id];
}

static char *dup_bytes(gmt_bytes b) { return xstrndup(b.ptr ? b.ptr : "", b.ptr ? b.len : 0); }

static int load_trace(trace *t, const char *path)
{
    memset(t, 0, sizeof *t);
    t->path = path;
    struct stat st;
    if (stat(path, &st) != 0) {
        fprintf(stderr, "check_trace: cannot stat %s: %s\n", path, strerror(errno));
        return -1;
    }
    t->file_bytes = (uint64_t)st.st_size;
    gmt_reader *r = gmt_reader_open(path);
    if (!r) {
        fprintf(stderr, "check_trace: cannot open %s: %s\n", path, strerror(errno));
        return -1;
    }
    gmt_record rec;
    int k;
    uint64_t order = 0;
    int64_t cur_window = -1;
    while ((k = gmt_reader_next(r, &rec)) > 0) {
        order++;
        if ((unsigned)rec.type < GMT_REC_TYPE_MAX_)
            t->by_type[rec.type]++;
        switch (rec.type) {
        case GMT_REC_HEADER:
            if (!t->has_header) {
                t->has_header = 1;
                t->hdr = rec.u.header;
                t->host = dup_bytes(rec.u.header.host);
                t->cmdline = dup_bytes(rec.u.header.cmdline);
                t->config = dup_bytes(rec.u.header.config);
                memset(&t->hdr.host, 0, sizeof t->hdr.host);
                memset(&t->hdr.cmdline, 0, sizeof t->hdr.cmdline);
                memset(&t->hdr.config, 0, sizeof t->hdr.config);
                memset(&t->hdr.profiler_version, 0, sizeof t->hdr.profiler_version);
            }
            break;
        case GMT_REC_DEVICE: {
            gmt_device d = rec.u.device;
            VEC_PUSH(t->devnames, dup_bytes(d.name));
            memset(&d.name, 0, sizeof d.name);
            VEC_PUSH(t->devices, d);
            break;
        }
        case GMT_REC_STRING: {
            uint64_t id = rec.u.string.id;
            if (id > 50u * 1000u * 1000u)
                break; /* absurd id: ignore rather than allocate gigabytes */
            while (t->strings.n <= id)
                VEC_PUSH(t->strings, NULL);
            free(t->strings.v[id]);
            t->strings.v[id] = dup_bytes(rec.u.string.str);
            break;
        }
        case GMT_REC_ALLOC:
        case GMT_REC_FREE: {
            mem_rec m;
            m.m = rec.u.mem;
            m.is_free = rec.type == GMT_REC_FREE;
            m.order = order;
            m.window = cur_window;
            m.matched = -1;
            VEC_PUSH(t->mems, m);
            if (!m.is_free && (m.m.flags & GMT_MEMF_BASELINE) && cur_window >= 0) {
                t->windows.v[cur_window].baseline_seen_count++;
                t->windows.v[cur_window].baseline_seen_bytes += m.m.bytes;
            }
            if (m.m.step > t->max_step)
                t->max_step = m.m.step;
            break;
        }
        case GMT_REC_BLOCK:
            if ((rec.u.block.action == GMT_BLK_ALLOC || rec.u.block.action == GMT_BLK_FREE_REQUESTED) &&
                !(rec.u.block.flags & GMT_BLKF_BASELINE))
                VEC_PUSH(t->blocks, rec.u.block);
            break;
        case GMT_REC_KERNEL:
            VEC_PUSH(t->kernels, rec.u.kernel);
            if (rec.u.kernel.step > t->max_step)
                t->max_step = rec.u.kernel.step;
            break;
        case GMT_REC_MEMCPY:
            VEC_PUSH(t->memcpys, rec.u.copy);
            break;
        case GMT_REC_MEMSET:
            VEC_PUSH(t->memsets, rec.u.copy);
            break;
        case GMT_REC_RANGE_BEGIN: {
            range_rec rr = {rec.u.range.id, rec.u.range.name, rec.u.range.ts, rec.u.range.tid};
            VEC_PUSH(t->ranges, rr);
            break;
        }
        case GMT_REC_RANGE_END:
            t->range_ends++;
            break;
        case GMT_REC_MARK:
            t->marks++;
            break;
        case GMT_REC_TAG: {
            tag_rec tr;
            memset(&tr, 0, sizeof tr);
            tr.name = rec.u.tag.name;
            tr.step = rec.u.tag.step;
            tr.ts = rec.u.tag.ts;
            uint64_t nd = rec.u.tag.ndev < GMT_MAX_TAG_DEVICES ? rec.u.tag.ndev : GMT_MAX_TAG_DEVICES;
            for (uint64_t i = 0; i < nd; i++) {
                if (rec.u.tag.dev[i].device == 0) {
                    tr.has_dev0 = 1;
                    tr.dev0 = rec.u.tag.dev[i];
                }
            }
            VEC_PUSH(t->tags, tr);
            break;
        }
        case GMT_REC_STEP:
            VEC_PUSH(t->steps, rec.u.step);
            if (rec.u.step.step > t->max_step)
                t->max_step = rec.u.step.step;
            break;
        case GMT_REC_WINDOW_BEGIN: {
            window_rec w;
            memset(&w, 0, sizeof w);
            w.b = rec.u.wbegin;
            VEC_PUSH(t->windows, w);
            cur_window = (int64_t)t->windows.n - 1;
            break;
        }
        case GMT_REC_WINDOW_END:
            /* pair with the most recent open window of the same number */
            for (size_t i = t->windows.n; i-- > 0;) {
                if (!t->windows.v[i].has_end && t->windows.v[i].b.window == rec.u.wend.window) {
                    t->windows.v[i].has_end = 1;
                    t->windows.v[i].e = rec.u.wend;
                    break;
                }
            }
            break;
        case GMT_REC_MEMSAMPLE:
            t->memsamples++;
            break;
        case GMT_REC_STATS:
            t->has_stats = 1;
            t->stats = rec.u.stats;
            break;
        case GMT_REC_TRAILER:
            t->has_trailer = 1;
            t->trailer = rec.u.trailer;
            break;
        default:
            break;
        }
    }
    t->end = *gmt_reader_end_info(r);
    gmt_reader_close(r);
    if (k < 0 && t->end.records == 0) {
        fprintf(stderr, "check_trace: %s: %s\n", path, t->end.message);
        return -1;
    }
    pmap_init(&t->kernel_by_seq, t->kernels.n);
    for (size_t i = 0; i < t->kernels.n; i++)
        if (t->kernels.v[i].tid)
            pmap_put(&t->kernel_by_seq, t->kernels.v[i].tid, t->kernels.v[i].seq, i);
    pmap_init(&t->range_names, t->ranges.n);
    for (size_t i = 0; i < t->ranges.n; i++)
        pmap_put(&t->range_names, t->ranges.v[i].id, 0, t->ranges.v[i].name);
    return 0;
}

static void free_trace(trace *t)
{
    free(t->host);
    free(t->cmdline);
    free(t->config);
    for (size_t i = 0; i < t->devnames.n; i++)
        free(t->devnames.v[i]);
    free(t->devnames.v);
    free(t->devices.v);
    for (size_t i = 0; i < t->strings.n; i++)
        free(t->strings.v[i]);
    free(t->strings.v);
    free(t->mems.v);
    free(t->blocks.v);
    free(t->kernels.v);
    free(t->memcpys.v);
    free(t->memsets.v);
    free(t->ranges.v);
    free(t->tags.v);
    free(t->steps.v);
    free(t->windows.v);
    if (t->kernel_by_seq.cap)
        pmap_free(&t->kernel_by_seq);
    if (t->range_names.cap)
        pmap_free(&t->range_names);
    memset(t, 0, sizeof *t);
}

/* A step is active when a window covers it. */
static int step_active(const trace *t, uint64_t step)
{
    for (size_t i = 0; i < t->windows.n; i++) {
        const window_rec *w = &t->windows.v[i];
        uint64_t last = w->has_end ? w->e.step : UINT64_MAX;
        if (step >= w->b.step && step <= last)
            return 1;
    }
    return 0;
}

static uint64_t active_step_count(const trace *t)
{
    uint64_t n = 0;
    for (uint64_t s = 0; s <= t->max_step + 1 && s < 1000000; s++)
        n += (uint64_t)step_active(t, s);
    return n;
}

static int is_device_mem(const gmt_mem *m)
{
    if (m->kind == GMT_MEMKIND_PINNED || m->kind == GMT_MEMKIND_PAGEABLE ||
        m->kind == GMT_MEMKIND_MANAGED || m->kind == GMT_MEMKIND_MANAGED_STATIC)
        return 0;
    if (m->source == GMT_SRC_PINNED_HOST || m->source == GMT_SRC_MANAGED)
        return 0;
    return 1;
}

static int cmp_mem_time(const void *a, const void *b)
{
    const mem_rec *x = *(const mem_rec *const *)a, *y = *(const mem_rec *const *)b;
    if (x->m.ts != y->m.ts)
        return x->m.ts < y->m.ts ? -1 : 1;
    return x->order < y->order ? -1 : x->order > y->order;
}

/* Records in time order (pointers into t->mems). */
static mem_rec **sorted_mems(trace *t)
{
    mem_rec **s = xcalloc(t->mems.n, sizeof *s);
    for (size_t i = 0; i < t->mems.n; i++)
        s[i] = &t->mems.v[i];
    qsort(s, t->mems.n, sizeof *s, cmp_mem_time);
    return s;
}

/* ------------------------------------------------------------------------ */
/* replay: peak and live set */

#define MAX_DEV 64

typedef struct replay {
    uint64_t live_dev[MAX_DEV];
    uint64_t peak_dev[MAX_DEV];
    uint64_t peak_ts[MAX_DEV], peak_step[MAX_DEV];
    uint64_t live_all, peak_all;
    /* device bytes live per source, and their values at each device's peak:
     * the allocator's own share of the peak (async pool, VMM) against what
     * libraries (cuBLAS workspaces, module statics) hold beside it */
    uint64_t live_src[MAX_DEV][GMT_SRC_COUNT_];
    uint64_t peak_src[MAX_DEV][GMT_SRC_COUNT_];
    uint64_t live_count_end, live_bytes_end, live_dev_bytes_end;
    uint64_t unmatched_frees, replaced_allocs;
    int max_device_seen;
} replay;

static void do_replay(trace *t, replay *rp)
{
    memset(rp, 0, sizeof *rp);
    rp->max_device_seen = -1;
    mem_rec **s = sorted_mems(t);
    pmap live; /* (device, address) -> index into t->mems */
    pmap_init(&live, 1024);
    for (size_t i = 0; i < t->mems.n; i++) {
        mem_rec *m = s[i];
        uint64_t dev = m->m.device < MAX_DEV ? m->m.device : MAX_DEV - 1;
        if ((int)dev > rp->max_device_seen)
            rp->max_device_seen = (int)dev;
        uint64_t *cur = pmap_get(&live, m->m.device, m->m.address);
        if (!m->is_free) {
            if (cur) {
                if (m->m.flags & GMT_MEMF_BASELINE)
                    continue; /* known already */
                /* a lost free: replace */
                const gmt_mem *old = &t->mems.v[*cur].m;
                uint64_t od = old->device < MAX_DEV ? old->device : MAX_DEV - 1;
                if (is_device_mem(old)) {
                    rp->live_dev[od] -= old->bytes;
                    rp->live_src[od][old->source < GMT_SRC_COUNT_ ? old->source : 0] -= old->bytes;
                }
                rp->live_all -= old->bytes;
                rp->replaced_allocs++;
            }
            pmap_put(&live, m->m.device, m->m.address, (uint64_t)(m - t->mems.v));
            rp->live_all += m->m.bytes;
            if (rp->live_all > rp->peak_all)
                rp->peak_all = rp->live_all;
            if (is_device_mem(&m->m)) {
                rp->live_dev[dev] += m->m.bytes;
                rp->live_src[dev][m->m.source < GMT_SRC_COUNT_ ? m->m.source : 0] += m->m.bytes;
                if (rp->live_dev[dev] > rp->peak_dev[dev]) {
                    rp->peak_dev[dev] = rp->live_dev[dev];
                    rp->peak_ts[dev] = m->m.ts;
                    rp->peak_step[dev] = m->m.step;
                    memcpy(rp->peak_src[dev], rp->live_src[dev], sizeof rp->peak_src[dev]);
                }
            }
        } else {
            if (!cur) {
                rp->unmatched_frees++;
                continue;
            }
            const gmt_mem *old = &t->mems.v[*cur].m;
            uint64_t od = old->device < MAX_DEV ? old->device : MAX_DEV - 1;
            if (is_device_mem(old)) {
                rp->live_dev[od] -= old->bytes;
                rp->live_src[od][old->source < GMT_SRC_COUNT_ ? old->source : 0] -= old->bytes;
            }
            rp->live_all -= old->bytes;
            pmap_del(&live, m->m.device, m->m.address);
        }
    }
    for (size_t i = 0; i < live.cap; i++) {
        if (!live.used[i])
            continue;
        const gmt_mem *m = &t->mems.v[live.val[i]].m;
        rp->live_count_end++;
        rp->live_bytes_end += m->bytes;
        if (is_device_mem(m))
            rp->live_dev_bytes_end += m->bytes;
    }
    pmap_free(&live);
    free(s);
}

static int peak_device(const replay *rp)
{
    int best = 0;
    for (int d = 0; d <= rp->max_device_seen && d < MAX_DEV; d++)
        if (rp->peak_dev[d] > rp->peak_dev[best])
            best = d;
    return best;
}

/* ------------------------------------------------------------------------ */
/* check reporting */

typedef struct report {
    int checks, failed, warned;
} report;

static void outcome(report *r, int ok, int soft, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void outcome(report *r, int ok, int soft, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    r->checks++;
    const char *word = "ok  ";
    if (!ok && soft) {
        word = "warn";
        r->warned++;
    } else if (!ok) {
        word = "FAIL";
        r->failed++;
    }
    fprintf(stderr, "%s ", word);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

static const char *const k_sources[] = {"unknown", "malloc", "async_pool", "vmm",
                                        "managed", "pinned_host", "pitched", "static"};
#define N_SOURCES (sizeof k_sources / sizeof k_sources[0])

static const char *source_name(uint64_t s) { return s < N_SOURCES ? k_sources[s] : "unknown"; }

/* Tag names: the profiler may keep the NVTX prefix or strip it. */
static const char *strip_prefix(const char *name, const char *prefix)
{
    size_t n = strlen(prefix);
    return n && !strncmp(name, prefix, n) ? name + n : name;
}

/* ------------------------------------------------------------------------ */
/* expectations from a sample's JSON */

typedef struct exp_alloc {
    const jval *j;
    const char *label, *source, *consumer, *stream;
    uint64_t bytes;
    int64_t tid, step, free_tid, free_step;
    int freed, soft;
    int required, free_required;
    int64_t rec;      /* index of the matched ALLOC record, -1 none */
    int64_t free_rec; /* index of the matched FREE record */
} exp_alloc;

static void check_json(trace *t, const jval *ex, const char *tag_prefix, report *rep)
{
    /* header */
    int64_t pid = jint(ex, "pid", -1);
    if (pid >= 0)
        outcome(rep, t->has_header && t->hdr.pid == (uint64_t)pid, 0,
                "header pid: expected %" PRId64 ", trace has %" PRIu64, pid,
                t->has_header ? t->hdr.pid : 0);
    outcome(rep, t->has_trailer && !t->end.truncated, 0, "trace complete: trailer %s, %s",
            t->has_trailer ? "present" : "missing", t->end.truncated ? "truncated" : "not truncated");
    uint64_t dropped = t->has_stats ? t->stats.dropped_cupti + t->stats.dropped_writer : 0;
    outcome(rep, t->has_stats && dropped == 0, 0,
            "no dropped records: STATS %s, dropped_cupti %" PRIu64 ", dropped_writer %" PRIu64,
            t->has_stats ? "present" : "missing", t->has_stats ? t->stats.dropped_cupti : 0,
            t->has_stats ? t->stats.dropped_writer : 0);
    outcome(rep, t->windows.n >= 1, 0, "at least one window: %zu", t->windows.n);
    int dev0 = 0;
    for (size_t i = 0; i < t->devices.n; i++)
        if (t->devices.v[i].device == 0 && t->devices.v[i].total_mem > 0)
            dev0 = 1;
    outcome(rep, dev0, 0, "DEVICE record for device 0 with its total memory");

    /* expected allocations */
    const jval *ja = jget(ex, "allocs");
    size_t ne = ja && ja->t == J_ARR ? ja->n : 0;
    exp_alloc *ea = xcalloc(ne, sizeof *ea);
    int all_required = 1;
    for (size_t i = 0; i < ne; i++) {
        const jval *o = ja->items[i];
        exp_alloc *e = &ea[i];
        e->j = o;
        e->label = jstr(o, "label") ? jstr(o, "label") : "?";
        e->source = jstr(o, "source") ? jstr(o, "source") : "?";
        e->consumer = jstr(o, "consumer");
        e->stream = jstr(o, "stream");
        e->bytes = (uint64_t)jint(o, "bytes", 0);
        e->tid = jint(o, "tid", -1);
        e->step = jint(o, "step", 0);
        e->freed = jbool(o, "freed", 0);
        e->free_tid = jint(o, "free_tid", -1);
        e->free_step = jint(o, "free_step", e->step);
        e->soft = jbool(o, "soft", 0);
        e->required = step_active(t, (uint64_t)e->step);
        e->free_required = e->freed && step_active(t, (uint64_t)e->free_step);
        e->rec = e->free_rec = -1;
        if (!e->required || (e->freed && !e->free_required))
            all_required = 0;
    }

    /* match ALLOC records (time order) to expected allocations */
    mem_rec **s = sorted_mems(t);
    pmap live;
    pmap_init(&live, 256);
    uint64_t unexpected = 0;
    for (size_t i = 0; i < t->mems.n; i++) {
        mem_rec *m = s[i];
        int64_t mi = m - t->mems.v;
        if (m->m.flags & GMT_MEMF_BASELINE)
            continue;
        if (!m->is_free) {
            const char *src = source_name(m->m.source);
            int64_t best = -1;
            for (int pass = 0; pass < 2 && best < 0; pass++) {
                for (size_t k = 0; k < ne; k++) {
                    exp_alloc *e = &ea[k];
                    if (e->rec >= 0 || e->bytes != m->m.bytes || strcmp(e->source, src))
                        continue;
                    if (pass == 0 && (uint64_t)e->step != m->m.step)
                        continue;
                    best = (int64_t)k;
                    break;
                }
            }
            if (best < 0) {
                unexpected++;
                outcome(rep, 0, 0,
                        "unexpected allocation: %s %" PRIu64 " B at 0x%" PRIx64 ", tid %" PRIu64
                        ", step %" PRIu64,
                        src, m->m.bytes, m->m.address, m->m.tid, m->m.step);
                continue;
            }
            ea[best].rec = mi;
            m->matched = best;
            pmap_put(&live, m->m.device, m->m.address, (uint64_t)best);
        } else {
            uint64_t *k = pmap_get(&live, m->m.device, m->m.address);
            if (!k) {
                /* a free of something allocated before recording began or of a
                 * baseline allocation: judged by the baseline checks */
                continue;
            }
            exp_alloc *e = &ea[*k];
            e->free_rec = mi;
            m->matched = (int64_t)*k;
            pmap_del(&live, m->m.device, m->m.address);
        }
    }
    pmap_free(&live);
    free(s);
    if (!unexpected)
        outcome(rep, 1, 0, "no unexpected allocation records");

    /* per-allocation checks */
    const char *stream_label[64];
    uint64_t stream_id[64];
    size_t nstreams = 0;
    int streams_ok = 1;
    for (size_t k = 0; k < ne; k++) {
        exp_alloc *e = &ea[k];
        if (e->rec < 0) {
            outcome(rep, !e->required, 0, "alloc %s: %s %" PRIu64 " B in step %" PRId64 " %s",
                    e->label, e->source, e->bytes, e->step,
                    e->required ? "missing from the trace" : "not recorded (step outside windows)");
            continue;
        }
        const gmt_mem *m = &t->mems.v[e->rec].m;
        char why[512] = "";
        size_t wl = 0;
#define WHY(...)                                                                                   \
    do {                                                                                           \
        if (wl < sizeof why)                                                                       \
            wl += (size_t)snprintf(why + wl, sizeof why - wl, __VA_ARGS__);                        \
    } while (0)
        int hard_ok = 1, soft_ok = 1;
        if ((int64_t)m->step != e->step) {
            hard_ok = 0;
            WHY("; step expected %" PRId64 ", trace %" PRIu64, e->step, m->step);
        }
        if (e->tid >= 0 && (int64_t)m->tid != e->tid) {
            if (e->soft)
                soft_ok = 0;
            else
                hard_ok = 0;
            WHY("; tid expected %" PRId64 ", trace %" PRIu64, e->tid, m->tid);
        }
        /* consumer: the KERNEL with this tid and seq + 1 */
        const uint64_t *ki = m->tid ? pmap_get(&t->kernel_by_seq, m->tid, m->seq + 1) : NULL;
        const char *got = ki ? str_of(t, t->kernels.v[*ki].name) : NULL;
        /* kernels exist only inside windows: judge the consumer there only */
        if (e->consumer && e->required) {
            if (!got || strcmp(got, e->consumer)) {
                if (e->soft)
                    soft_ok = 0;
                else
                    hard_ok = 0;
                WHY("; consumer expected %s, trace %s (tid %" PRIu64 " seq %" PRIu64 ")",
                    e->consumer, got ? got : "(no kernel)", m->tid, m->seq + 1);
            }
        } else if (!e->consumer && got) {
            hard_ok = 0;
            WHY("; expected no consumer (unattributed), trace has %s", got);
        }
        if (e->stream) {
            if (m->stream == 0) {
                hard_ok = 0;
                WHY("; stream expected (%s), trace has 0", e->stream);
            } else {
                size_t j;
                for (j = 0; j < nstreams; j++) {
                    if (!strcmp(stream_label[j], e->stream)) {
                        if (stream_id[j] != m->stream) {
                            streams_ok = 0;
                            WHY("; stream %s was id %" PRIu64 ", now %" PRIu64, e->stream,
                                stream_id[j], m->stream);
                            hard_ok = 0;
                        }
                        break;
                    }
                    if (stream_id[j] == m->stream) {
                        streams_ok = 0;
                        hard_ok = 0;
                        WHY("; streams %s and %s share id %" PRIu64, stream_label[j], e->stream,
                            m->stream);
                        break;
                    }
                }
                if (j == nstreams && nstreams < 64) {
                    stream_label[nstreams] = e->stream;
                    stream_id[nstreams] = m->stream;
                    nstreams++;
                }
            }
        }
        /* the free */
        if (e->freed) {
            if (e->free_rec < 0) {
                if (e->free_required) {
                    hard_ok = 0;
                    WHY("; free missing");
                }
            } else {
                const gmt_mem *f = &t->mems.v[e->free_rec].m;
                if (f->bytes != 0 && f->bytes != e->bytes) {
                    hard_ok = 0;
                    WHY("; free bytes %" PRIu64, f->bytes);
                }
                if (e->free_tid >= 0 && (int64_t)f->tid != e->free_tid) {
                    if (e->soft)
                        soft_ok = 0;
                    else
                        hard_ok = 0;
                    WHY("; free tid expected %" PRId64 ", trace %" PRIu64, e->free_tid, f->tid);
                }
                if ((int64_t)f->step != e->free_step) {
                    hard_ok = 0;
                    WHY("; free step expected %" PRId64 ", trace %" PRIu64, e->free_step, f->step);
                }
            }
        } else if (e->free_rec >= 0) {
            hard_ok = 0;
            WHY("; expected live at end, trace frees it");
        }
#undef WHY
        outcome(rep, hard_ok, 0, "alloc %s: %s %" PRIu64 " B step %" PRId64 ", consumer %s%s%s",
                e->label, e->source, e->bytes, e->step, e->consumer ? e->consumer : "(none)",
                e->freed ? ", freed" : ", live at end", hard_ok ? "" : why);
        if (hard_ok && !soft_ok)
            outcome(rep, 0, 1, "alloc %s (soft fields)%s", e->label, why);
    }
    if (nstreams > 1)
        outcome(rep, streams_ok, 0, "stream labels map one-to-one to %zu CUPTI stream ids",
                nstreams);

    /* distinct threads */
    int64_t want_tids = jint(ex, "distinct_tids", -1);
    if (want_tids >= 0) {
        uint64_t tids[256];
        size_t nt = 0;
        for (size_t k = 0; k < ne; k++) {
            if (ea[k].rec < 0 || ea[k].soft)
                continue;
            uint64_t tid = t->mems.v[ea[k].rec].m.tid;
            size_t j;
            for (j = 0; j < nt; j++)
                if (tids[j] == tid)
                    break;
            if (j == nt && nt < 256)
                tids[nt++] = tid;
        }
        outcome(rep, (int64_t)nt == want_tids, 0,
                "distinct host threads among allocations: expected %" PRId64 ", trace %zu",
                want_tids, nt);
    }

    /* totals, copies, live at end: only when the whole run was recorded */
    if (!all_required) {
        fprintf(stderr, "note totals, copies and live-at-end skipped: not every expected step is "
                        "inside a window\n");
    } else {
        const jval *jt = jget(ex, "totals");
        for (size_t i = 0; jt && jt->t == J_OBJ && i < jt->n; i++) {
            const char *src = jt->keys[i];
            const jval *o = jt->items[i];
            uint64_t na = 0, ba = 0, nf = 0, bf = 0;
            for (size_t k = 0; k < t->mems.n; k++) {
                const mem_rec *m = &t->mems.v[k];
                if ((m->m.flags & GMT_MEMF_BASELINE) || strcmp(source_name(m->m.source), src))
                    continue;
                if (m->is_free) {
                    nf++;
                    bf += m->m.bytes;
                } else {
                    na++;
                    ba += m->m.bytes;
                }
            }
            uint64_t xa = (uint64_t)jint(o, "allocs", 0), xba = (uint64_t)jint(o, "alloc_bytes", 0);
            uint64_t xf = (uint64_t)jint(o, "frees", 0), xbf = (uint64_t)jint(o, "free_bytes", 0);
            outcome(rep, na == xa && ba == xba, 0,
                    "total %s allocs: expected %" PRIu64 " / %" PRIu64 " B, trace %" PRIu64
                    " / %" PRIu64 " B",
                    src, xa, xba, na, ba);
            outcome(rep, nf == xf && bf == xbf, 0,
                    "total %s frees: expected %" PRIu64 " / %" PRIu64 " B, trace %" PRIu64
                    " / %" PRIu64 " B",
                    src, xf, xbf, nf, bf);
        }
        static const char *const copy_names[] = {"htod", "dtoh", "dtod"};
        static const uint64_t copy_kinds[] = {GMT_COPY_HTOD, GMT_COPY_DTOH, GMT_COPY_DTOD};
        const jval *jc = jget(ex, "memcpy");
        for (int c = 0; jc && c < 3; c++) {
            const jval *o = jget(jc, copy_names[c]);
            if (!o)
                continue;
            uint64_t n = 0, b = 0;
            for (size_t k = 0; k < t->memcpys.n; k++) {
                if (t->memcpys.v[k].copy_kind == copy_kinds[c]) {
                    n++;
                    b += t->memcpys.v[k].bytes;
                }
            }
            uint64_t xn = (uint64_t)jint(o, "count", 0), xb = (uint64_t)jint(o, "bytes", 0);
            outcome(rep, n == xn && b == xb, 0,
                    "memcpy %s: expected %" PRIu64 " / %" PRIu64 " B, trace %" PRIu64 " / %" PRIu64
                    " B",
                    copy_names[c], xn, xb, n, b);
        }
        const jval *js = jget(ex, "memset");
        if (js) {
            uint64_t b = 0;
            for (size_t k = 0; k < t->memsets.n; k++)
                b += t->memsets.v[k].bytes;
            uint64_t xn = (uint64_t)jint(js, "count", 0), xb = (uint64_t)jint(js, "bytes", 0);
            outcome(rep, t->memsets.n == xn && b == xb, 0,
                    "memset: expected %" PRIu64 " / %" PRIu64 " B, trace %zu / %" PRIu64 " B", xn,
                    xb, t->memsets.n, b);
        }
        const jval *jl = jget(ex, "live_at_end");
        if (jl) {
            replay rp;
            do_replay(t, &rp);
            uint64_t xn = (uint64_t)jint(jl, "count", 0), xb = (uint64_t)jint(jl, "bytes", 0);
            outcome(rep, rp.live_count_end == xn && rp.live_bytes_end == xb, 0,
                    "live at end (leaks): expected %" PRIu64 " / %" PRIu64 " B, trace %" PRIu64
                    " / %" PRIu64 " B",
                    xn, xb, rp.live_count_end, rp.live_bytes_end);
        }
    }

    /* kernels: exact count per (name, active step); none outside windows */
    const jval *jk = jget(ex, "kernels");
    size_t nk = jk && jk->t == J_ARR ? jk->n : 0;
    for (size_t i = 0; i < nk; i++) {
        const jval *o = jk->items[i];
        const char *name = jstr(o, "name");
        int64_t step = jint(o, "step", 0);
        uint64_t want = (uint64_t)jint(o, "count", 0);
        if (!name || !step_active(t, (uint64_t)step))
            continue;
        uint64_t n = 0;
        for (size_t k = 0; k < t->kernels.n; k++)
            if ((int64_t)t->kernels.v[k].step == step && !strcmp(str_of(t, t->kernels.v[k].name), name))
                n++;
        outcome(rep, n == want, 0, "kernel %s in step %" PRId64 ": expected %" PRIu64 ", trace %" PRIu64,
                name, step, want, n);
    }
    uint64_t outside = 0, unknown = 0;
    for (size_t k = 0; k < t->kernels.n; k++) {
        const gmt_kernel *kr = &t->kernels.v[k];
        if (!step_active(t, kr->step))
            outside++;
        int known = 0;
        for (size_t i = 0; i < nk && !known; i++) {
            const char *name = jstr(jk->items[i], "name");
            known = name && !strcmp(name, str_of(t, kr->name));
        }
        if (!known) {
            if (unknown < 5)
                fprintf(stderr, "note unexpected kernel %s (step %" PRIu64 ")\n", str_of(t, kr->name),
                        kr->step);
            unknown++;
        }
    }
    outcome(rep, outside == 0, 0, "no kernel recorded outside the windows: %" PRIu64, outside);
    outcome(rep, unknown == 0, 0, "no unexpected kernel: %" PRIu64, unknown);

    /* baselines */
    const jval *jb = jget(ex, "live_at_step_start");
    for (size_t i = 0; i < t->windows.n; i++) {
        const window_rec *w = &t->windows.v[i];
        outcome(rep,
                w->baseline_seen_count == w->b.baseline_count &&
                    w->baseline_seen_bytes == w->b.baseline_bytes,
                0,
                "window %" PRIu64 " baseline records agree with WINDOW_BEGIN: %" PRIu64 " / %" PRIu64
                " B vs %" PRIu64 " / %" PRIu64 " B",
                w->b.window, w->baseline_seen_count, w->baseline_seen_bytes, w->b.baseline_count,
                w->b.baseline_bytes);
        const jval *o = NULL;
        for (size_t k = 0; jb && jb->t == J_ARR && k < jb->n; k++)
            if (jint(jb->items[k], "step", -1) == (int64_t)w->b.step)
                o = jb->items[k];
        if (!o) {
            outcome(rep, 0, 0, "window %" PRIu64 " begins at step %" PRIu64 ", which the sample never reached",
                    w->b.window, w->b.step);
            continue;
        }
        uint64_t xn = (uint64_t)jint(o, "count", 0), xb = (uint64_t)jint(o, "bytes", 0);
        outcome(rep, w->b.baseline_count == xn && w->b.baseline_bytes == xb, 0,
                "window %" PRIu64 " baseline at step %" PRIu64 ": expected %" PRIu64 " / %" PRIu64
                " B, trace %" PRIu64 " / %" PRIu64 " B",
                w->b.window, w->b.step, xn, xb, w->b.baseline_count, w->b.baseline_bytes);
    }

    /* tags */
    const jval *jtg = jget(ex, "tags");
    for (size_t i = 0; jtg && jtg->t == J_ARR && i < jtg->n; i++) {
        const jval *o = jtg->items[i];
        const char *name = jstr(o, "name");
        int64_t step = jint(o, "step", 0);
        uint64_t live = (uint64_t)jint(o, "live_bytes", 0);
        if (!name)
            continue;
        tag_rec *found = NULL;
        for (size_t k = 0; k < t->tags.n && !found; k++) {
            tag_rec *tr = &t->tags.v[k];
            if (!tr->used && (int64_t)tr->step == step &&
                !strcmp(strip_prefix(str_of(t, tr->name), tag_prefix), name))
                found = tr;
        }
        int req = step_active(t, (uint64_t)step);
        if (!found) {
            outcome(rep, !req, 0, "tag %s in step %" PRId64 ": %s", name, step,
                    req ? "missing" : "not recorded (outside windows)");
            continue;
        }
        found->used = 1;
        outcome(rep, found->has_dev0 && found->dev0.live_bytes == live, 0,
                "tag %s in step %" PRId64 ": live bytes expected %" PRIu64 ", trace %" PRIu64, name,
                step, live, found->has_dev0 ? found->dev0.live_bytes : 0);
        outcome(rep, found->has_dev0 && found->dev0.driver_total > 0 && found->dev0.driver_used > 0 &&
                         found->dev0.driver_used <= found->dev0.driver_total,
                0, "tag %s in step %" PRId64 ": driver used %" PRIu64 " of %" PRIu64, name, step,
                found->has_dev0 ? found->dev0.driver_used : 0,
                found->has_dev0 ? found->dev0.driver_total : 0);
    }
    free(ea);
}

/* ------------------------------------------------------------------------ */
/* expectations from the command line */

static int parse_u64(const char *s, uint64_t *v)
{
    char *e = NULL;
    errno = 0;
    unsigned long long x = strtoull(s, &e, 10);
    if (errno || !e || e == s || *e)
        return -1;
    *v = x;
    return 0;
}

static int check_kv(trace *t, const char *kv, report *rep)
{
    const char *eq = strchr(kv, '=');
    if (!eq) {
        fprintf(stderr, "check_trace: --expect wants KEY=VALUE, got '%s'\n", kv);
        return -1;
    }
    char key[64];
    snprintf(key, sizeof key, "%.*s", (int)(eq - kv), kv);
    const char *val = eq + 1;
    uint64_t v = 0;
    int numeric = parse_u64(val, &v) == 0;

    if (!strcmp(key, "step_source")) {
        uint64_t bad = 0;
        for (size_t i = 0; i < t->steps.n; i++) {
            /* The profiler opens step 0 at start, before any step source
             * has spoken: that one record carries source "none". */
            if (t->steps.v[i].step == 0 && t->steps.v[i].source == GMT_STEPSRC_NONE)
                continue;
            if (strcmp(gmt_step_source_name(t->steps.v[i].source), val))
                bad++;
        }
        outcome(rep, t->steps.n > 0 && bad == 0, 0,
                "every STEP record has source %s: %zu steps, %" PRIu64 " others", val, t->steps.n, bad);
        return 0;
    }
    if (!strcmp(key, "tag")) {
        int found = 0;
        for (size_t i = 0; i < t->tags.n && !found; i++)
            found = !strcmp(strip_prefix(str_of(t, t->tags.v[i].name), "tag:"), val) ||
                    !strcmp(str_of(t, t->tags.v[i].name), val);
        outcome(rep, found, 0, "tag %s present", val);
        return 0;
    }
    if (!numeric) {
        fprintf(stderr, "check_trace: --expect %s wants a number, got '%s'\n", key, val);
        return -1;
    }
    if (!strcmp(key, "windows")) {
        outcome(rep, t->windows.n == v, 0, "windows: expected %" PRIu64 ", trace %zu", v, t->windows.n);
    } else if (!strcmp(key, "active_steps")) {
        uint64_t n = active_step_count(t);
        uint64_t phase_active = 0;
        for (size_t i = 0; i < t->steps.n; i++)
            phase_active += t->steps.v[i].phase == GMT_PHASE_ACTIVE;
        outcome(rep, n == v && phase_active == v, 0,
                "active steps: expected %" PRIu64 ", windows cover %" PRIu64
                ", STEP records in phase active %" PRIu64,
                v, n, phase_active);
    } else if (!strcmp(key, "first_active_step")) {
        outcome(rep, t->windows.n > 0 && t->windows.v[0].b.step == v, 0,
                "first window begins at step %" PRIu64 ": trace %" PRIu64, v,
                t->windows.n ? t->windows.v[0].b.step : UINT64_MAX);
    } else if (!strcmp(key, "baseline_count_min")) {
        outcome(rep, t->windows.n > 0 && t->windows.v[0].b.baseline_count >= v, 0,
                "first window baseline holds >= %" PRIu64 " allocations: %" PRIu64, v,
                t->windows.n ? t->windows.v[0].b.baseline_count : 0);
    } else if (!strcmp(key, "baseline_bytes_min")) {
        outcome(rep, t->windows.n > 0 && t->windows.v[0].b.baseline_bytes >= v, 0,
                "first window baseline holds >= %" PRIu64 " B: %" PRIu64, v,
                t->windows.n ? t->windows.v[0].b.baseline_bytes : 0);
    } else if (!strcmp(key, "kernels_min")) {
        outcome(rep, t->kernels.n >= v, 0, "kernels >= %" PRIu64 ": %zu", v, t->kernels.n);
    } else if (!strcmp(key, "allocs_min")) {
        outcome(rep, t->by_type[GMT_REC_ALLOC] >= v, 0, "ALLOC records >= %" PRIu64 ": %" PRIu64, v,
                t->by_type[GMT_REC_ALLOC]);
    } else if (!strcmp(key, "kernels_in_window")) {
        uint64_t outside = 0;
        for (size_t i = 0; i < t->kernels.n; i++)
            outside += !step_active(t, t->kernels.v[i].step);
        outcome(rep, (outside == 0) == (v != 0), 0,
                "kernels outside windows: %" PRIu64 " (expected %s)", outside, v ? "none" : "some");
    } else if (!strcmp(key, "trailer")) {
        outcome(rep, (t->has_trailer && !t->end.truncated) == (v != 0), 0, "trailer %s, %s",
                t->has_trailer ? "present" : "missing", t->end.truncated ? "truncated" : "complete");
    } else if (!strcmp(key, "dropped")) {
        uint64_t d = t->has_stats ? t->stats.dropped_cupti + t->stats.dropped_writer : 0;
        outcome(rep, t->has_stats && d <= v, 0, "dropped records <= %" PRIu64 ": %" PRIu64 " (STATS %s)",
                v, d, t->has_stats ? "present" : "missing");
    } else if (!strcmp(key, "unmatched")) {
        /* activity records the writer could not join with their API
         * callback (no thread, seq or range): what a missing subscription
         * would show as (profiler/collect.c, rt_cbid_wanted) */
        outcome(rep, t->has_stats && t->stats.unmatched_corr <= v, 0,
                "activity records without their API call <= %" PRIu64 ": %" PRIu64 " (STATS %s)", v,
                t->has_stats ? t->stats.unmatched_corr : 0, t->has_stats ? "present" : "missing");
    } else if (!strcmp(key, "free_order")) {
        /* gmem-analyze replays in file order: a FREE must come after the
         * ALLOC it frees (records of two threads out of order break this:
         * profiler/collect.c, one activity buffer stream) */
        uint64_t early = 0;
        pmap live;
        pmap_init(&live, 1024);
        for (size_t i = 0; i < t->mems.n; i++) {
            const mem_rec *m = &t->mems.v[i];
            if (!m->is_free)
                pmap_put(&live, m->m.device, m->m.address, i);
            else if (!pmap_del(&live, m->m.device, m->m.address))
                early++;
        }
        pmap_free(&live);
        outcome(rep, early <= v, 0, "FREE records before their ALLOC in the file <= %" PRIu64 ": %" PRIu64, v,
                early);
    } else if (!strcmp(key, "tags_min")) {
        outcome(rep, t->tags.n >= v, 0, "TAG records >= %" PRIu64 ": %zu", v, t->tags.n);
    } else if (!strcmp(key, "pid")) {
        outcome(rep, t->has_header && t->hdr.pid == v, 0, "header pid %" PRIu64 ": %" PRIu64, v,
                t->has_header ? t->hdr.pid : 0);
    } else if (!strcmp(key, "rank") || !strcmp(key, "world_size")) {
        int64_t h = !t->has_header ? -2 : !strcmp(key, "rank") ? t->hdr.rank : t->hdr.world_size;
        outcome(rep, h >= 0 && (uint64_t)h == v, 0, "header %s %" PRIu64 ": %" PRId64 "%s", key, v, h,
                h == -1 ? " (unset)" : h == -2 ? " (no header)" : "");
    } else if (!strcmp(key, "ranges_min")) {
        outcome(rep, t->ranges.n >= v, 0, "RANGE_BEGIN records >= %" PRIu64 ": %zu", v, t->ranges.n);
    } else if (!strcmp(key, "distinct_alloc_tids_min")) {
        uint64_t tids[512];
        size_t nt = 0;
        for (size_t i = 0; i < t->mems.n; i++) {
            uint64_t tid = t->mems.v[i].m.tid;
            if (!tid || t->mems.v[i].is_free)
                continue;
            size_t j;
            for (j = 0; j < nt && tids[j] != tid; j++) {
            }
            if (j == nt && nt < 512)
                tids[nt++] = tid;
        }
        outcome(rep, nt >= v, 0, "distinct allocating threads >= %" PRIu64 ": %zu", v, nt);
    } else {
        fprintf(stderr, "check_trace: unknown --expect key '%s'\n", key);
        return -1;
    }
    return 0;
}

/* ------------------------------------------------------------------------ */
/* outputs for scripts */

static void json_out_str(FILE *f, const char *s)
{
    fputc('"', f);
    for (; s && *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            fprintf(f, "\\%c", c);
        else if (c < 0x20 || c >= 0x7f)
            fprintf(f, "\\u%04x", c);
        else
            fputc(c, f);
    }
    fputc('"', f);
}

static void print_summary(trace *t)
{
    replay rp;
    do_replay(t, &rp);
    int pd = peak_device(&rp);
    FILE *f = stdout;
    fprintf(f, "{\n  \"trace\": ");
    json_out_str(f, t->path);
    fprintf(f, ",\n  \"file_bytes\": %" PRIu64 ",\n  \"records\": %" PRIu64, t->file_bytes,
            t->end.records);
    fprintf(f, ",\n  \"truncated\": %s,\n  \"has_trailer\": %s,\n  \"end_message\": ",
            t->end.truncated ? "true" : "false", t->has_trailer ? "true" : "false");
    json_out_str(f, t->end.message);
    fprintf(f, ",\n  \"version\": \"%u.%u\"", t->end.major, t->end.minor);
    if (t->has_header) {
        fprintf(f, ",\n  \"header\": {\"pid\": %" PRIu64 ", \"host\": ", t->hdr.pid);
        json_out_str(f, t->host);
        fprintf(f, ", \"cmdline\": ");
        json_out_str(f, t->cmdline);
        fprintf(f, ", \"config\": ");
        json_out_str(f, t->config);
        fprintf(f, "}");
    }
    fprintf(f, ",\n  \"devices\": [");
    for (size_t i = 0; i < t->devices.n; i++) {
        fprintf(f, "%s{\"device\": %" PRIu64 ", \"name\": ", i ? ", " : "", t->devices.v[i].device);
        json_out_str(f, t->devnames.v[i]);
        fprintf(f, ", \"total_mem\": %" PRIu64 "}", t->devices.v[i].total_mem);
    }
    fprintf(f, "],\n  \"record_counts\": {");
    int first = 1;
    for (int ty = 1; ty < GMT_REC_TYPE_MAX_; ty++) {
        if (!t->by_type[ty])
            continue;
        fprintf(f, "%s\"%s\": %" PRIu64, first ? "" : ", ", gmt_type_name((gmt_type)ty), t->by_type[ty]);
        first = 0;
    }
    fprintf(f, "},\n  \"by_source\": {");
    first = 1;
    for (uint64_t s = 0; s < N_SOURCES; s++) {
        uint64_t na = 0, ba = 0, nf = 0, bf = 0, nb = 0;
        for (size_t i = 0; i < t->mems.n; i++) {
            const mem_rec *m = &t->mems.v[i];
            if (m->m.source != s)
                continue;
            if (m->m.flags & GMT_MEMF_BASELINE)
                nb++;
            else if (m->is_free) {
                nf++;
                bf += m->m.bytes;
            } else {
                na++;
                ba += m->m.bytes;
            }
        }
        if (!na && !nf && !nb)
            continue;
        fprintf(f,
                "%s\"%s\": {\"allocs\": %" PRIu64 ", \"alloc_bytes\": %" PRIu64 ", \"frees\": %" PRIu64
                ", \"free_bytes\": %" PRIu64 ", \"baseline_records\": %" PRIu64 "}",
                first ? "" : ", ", source_name(s), na, ba, nf, bf, nb);
        first = 0;
    }
    uint64_t cb = 0, sb = 0;
    for (size_t i = 0; i < t->memcpys.n; i++)
        cb += t->memcpys.v[i].bytes;
    for (size_t i = 0; i < t->memsets.n; i++)
        sb += t->memsets.v[i].bytes;
    fprintf(f, "},\n  \"kernels\": %zu,\n  \"memcpy\": {\"count\": %zu, \"bytes\": %" PRIu64 "}",
            t->kernels.n, t->memcpys.n, cb);
    fprintf(f, ",\n  \"memset\": {\"count\": %zu, \"bytes\": %" PRIu64 "}", t->memsets.n, sb);
    fprintf(f, ",\n  \"ranges\": %zu,\n  \"marks\": %" PRIu64 ",\n  \"memsamples\": %" PRIu64,
            t->ranges.n, t->marks, t->memsamples);
    fprintf(f, ",\n  \"windows\": [");
    for (size_t i = 0; i < t->windows.n; i++) {
        const window_rec *w = &t->windows.v[i];
        fprintf(f,
                "%s{\"window\": %" PRIu64 ", \"step\": %" PRIu64 ", \"baseline_count\": %" PRIu64
                ", \"baseline_bytes\": %" PRIu64,
                i ? ", " : "", w->b.window, w->b.step, w->b.baseline_count, w->b.baseline_bytes);
        if (w->has_end)
            fprintf(f, ", \"end_step\": %" PRIu64 ", \"end_reason\": \"%s\"", w->e.step,
                    gmt_window_end_reason_name(w->e.reason));
        fprintf(f, "}");
    }
    uint64_t phase_active = 0;
    for (size_t i = 0; i < t->steps.n; i++)
        phase_active += t->steps.v[i].phase == GMT_PHASE_ACTIVE;
    fprintf(f, "],\n  \"steps\": {\"records\": %zu, \"phase_active\": %" PRIu64
               ", \"active_steps\": %" PRIu64 ", \"max_step\": %" PRIu64 ", \"source\": \"%s\"}",
            t->steps.n, phase_active, active_step_count(t), t->max_step,
            t->steps.n ? gmt_step_source_name(t->steps.v[0].source) : "none");
    fprintf(f, ",\n  \"tags\": [");
    for (size_t i = 0; i < t->tags.n && i < 200; i++) {
        const tag_rec *tr = &t->tags.v[i];
        fprintf(f, "%s{\"name\": ", i ? ", " : "");
        json_out_str(f, str_of(t, tr->name));
        fprintf(f, ", \"step\": %" PRIu64 ", \"live_bytes\": %" PRIu64 ", \"driver_used\": %" PRIu64 "}",
                tr->step, tr->has_dev0 ? tr->dev0.live_bytes : 0, tr->has_dev0 ? tr->dev0.driver_used : 0);
    }
    fprintf(f, "],\n  \"peak\": {\"device_bytes\": %" PRIu64 ", \"device\": %d, \"ts\": %" PRIu64
               ", \"step\": %" PRIu64 ", \"all_kinds_bytes\": %" PRIu64 ", \"per_device\": {",
            rp.peak_dev[pd], pd, rp.peak_ts[pd], rp.peak_step[pd], rp.peak_all);
    for (int d = 0; d <= rp.max_device_seen && d < MAX_DEV; d++)
        fprintf(f, "%s\"%d\": %" PRIu64, d ? ", " : "", d, rp.peak_dev[d]);
    fprintf(f, "}, \"by_source\": {");
    for (int k = 0, first = 1; k < GMT_SRC_COUNT_; k++) {
        if (!rp.peak_src[pd][k])
            continue;
        fprintf(f, "%s\"%s\": %" PRIu64, first ? "" : ", ", gmt_mem_source_name((uint64_t)k), rp.peak_src[pd][k]);
        first = 0;
    }
    fprintf(f, "}},\n  \"live_at_end\": {\"count\": %" PRIu64 ", \"bytes\": %" PRIu64
               ", \"device_bytes\": %" PRIu64 "}",
            rp.live_count_end, rp.live_bytes_end, rp.live_dev_bytes_end);
    fprintf(f, ",\n  \"unmatched_frees\": %" PRIu64 ",\n  \"replaced_allocs\": %" PRIu64,
            rp.unmatched_frees, rp.replaced_allocs);
    if (t->has_stats)
        fprintf(f,
                ",\n  \"stats\": {\"records_written\": %" PRIu64 ", \"dropped_cupti\": %" PRIu64
                ", \"dropped_writer\": %" PRIu64 ", \"host_time_ns\": %" PRIu64
                ", \"own_device_bytes\": %" PRIu64 ", \"own_host_bytes\": %" PRIu64
                ", \"bytes_written\": %" PRIu64 ", \"unmatched_corr\": %" PRIu64 "}",
                t->stats.records_written, t->stats.dropped_cupti, t->stats.dropped_writer,
                t->stats.host_time_ns, t->stats.own_device_bytes, t->stats.own_host_bytes,
                t->stats.bytes_written, t->stats.unmatched_corr);
    fprintf(f, "\n}\n");
}

/* Range names as torch.profiler shows them: emit_nvtx appends ", seq = N"
 * (and more), so a name is cut at its first ", ". */
static void range_key(const char *name, char *out, size_t cap)
{
    const char *c = strstr(name, ", ");
    size_t n = c ? (size_t)(c - name) : strlen(name);
    if (n >= cap)
        n = cap - 1;
    memcpy(out, name, n);
    out[n] = '\0';
}

typedef struct range_acc {
    char name[256];
    uint64_t count, allocs, frees, alloc_bytes, free_bytes;
} range_acc;

static int write_ranges(trace *t, const char *path, int active_only)
{
    VEC(range_acc) acc = {0};
    pmap by_name; /* (hash, 0) -> index; collisions resolved by scanning */
    pmap_init(&by_name, 256);
#define ACC_FIND(nm, idxvar)                                                                       \
    do {                                                                                           \
        uint64_t h_ = 1469598103934665603ull;                                                      \
        for (const char *p_ = (nm); *p_; p_++)                                                     \
            h_ = (h_ ^ (unsigned char)*p_) * 1099511628211ull;                                     \
        uint64_t probe_ = 0;                                                                       \
        for (;;) {                                                                                 \
            uint64_t *ix_ = pmap_get(&by_name, h_, probe_);                                        \
            if (!ix_) {                                                                            \
                range_acc ra_;                                                                     \
                memset(&ra_, 0, sizeof ra_);                                                       \
                snprintf(ra_.name, sizeof ra_.name, "%s", (nm));                                   \
                VEC_PUSH(acc, ra_);                                                                \
                pmap_put(&by_name, h_, probe_, acc.n - 1);                                         \
                (idxvar) = acc.n - 1;                                                              \
                break;                                                                             \
            }                                                                                      \
            if (!strcmp(acc.v[*ix_].name, (nm))) {                                                 \
                (idxvar) = (size_t)*ix_;                                                           \
                break;                                                                             \
            }                                                                                      \
            probe_++;                                                                              \
        }                                                                                          \
    } while (0)

    /* instances per name, inside windows (by time) when active_only */
    for (size_t i = 0; i < t->ranges.n; i++) {
        const range_rec *r = &t->ranges.v[i];
        if (active_only) {
            int in = 0;
            for (size_t w = 0; w < t->windows.n && !in; w++) {
                const window_rec *wr = &t->windows.v[w];
                in = r->ts >= wr->b.ts && (!wr->has_end || r->ts <= wr->e.ts);
            }
            if (!in)
                continue;
        }
        char key[256];
        range_key(str_of(t, r->name), key, sizeof key);
        size_t ix;
        ACC_FIND(key, ix);
        acc.v[ix].count++;
    }
    /* self memory: each alloc/free to the innermost range of its thread; a
     * trace with a bridge's tensor blocks counts those, as torch.profiler
     * does (a block's size when allocated, and when the program frees it) */
    for (size_t i = 0; i < t->blocks.n; i++) {
        const gmt_block *b = &t->blocks.v[i];
        if (active_only && !step_active(t, b->step))
            continue;
        const char *nm = "(no range)";
        char key[256];
        if (b->range) {
            const uint64_t *sid = pmap_get(&t->range_names, b->range, 0);
            nm = sid ? str_of(t, *sid) : "(unknown range)";
        }
        range_key(nm, key, sizeof key);
        size_t ix;
        ACC_FIND(key, ix);
        if (b->action == GMT_BLK_FREE_REQUESTED) {
            acc.v[ix].frees++;
            acc.v[ix].free_bytes += b->bytes;
        } else {
            acc.v[ix].allocs++;
            acc.v[ix].alloc_bytes += b->bytes;
        }
    }
    mem_rec **s = sorted_mems(t);
    pmap live;
    pmap_init(&live, 1024);
    for (size_t i = 0; i < t->mems.n && t->blocks.n == 0; i++) {
        const mem_rec *m = s[i];
        if ((m->m.flags & GMT_MEMF_BASELINE) || !is_device_mem(&m->m))
            continue;
        uint64_t bytes = m->m.bytes;
        if (m->is_free) {
            uint64_t *b = pmap_get(&live, m->m.device, m->m.address);
            if (b) {
                if (!bytes)
                    bytes = *b;
                pmap_del(&live, m->m.device, m->m.address);
            }
        } else {
            pmap_put(&live, m->m.device, m->m.address, bytes);
        }
        if (active_only && !step_active(t, m->m.step))
            continue;
        const char *nm = "(no range)";
        char key[256];
        if (m->m.range) {
            const uint64_t *sid = pmap_get(&t->range_names, m->m.range, 0);
            nm = sid ? str_of(t, *sid) : "(unknown range)";
        }
        range_key(nm, key, sizeof key);
        size_t ix;
        ACC_FIND(key, ix);
        if (m->is_free) {
            acc.v[ix].frees++;
            acc.v[ix].free_bytes += bytes;
        } else {
            acc.v[ix].allocs++;
            acc.v[ix].alloc_bytes += bytes;
        }
    }
#undef ACC_FIND
    pmap_free(&live);
    free(s);
    FILE *f = fopen(path, "w");
    if (!f) {
        fprintf(stderr, "check_trace: cannot write %s: %s\n", path, strerror(errno));
        pmap_free(&by_name);
        free(acc.v);
        return -1;
    }
    fprintf(f, "{\"scope\": \"%s\", \"ranges\": {", active_only ? "active" : "all");
    for (size_t i = 0; i < acc.n; i++) {
        const range_acc *a = &acc.v[i];
        fprintf(f, "%s\n  ", i ? "," : "");
        json_out_str(f, a->name);
        fprintf(f,
                ": {\"count\": %" PRIu64 ", \"allocs\": %" PRIu64 ", \"frees\": %" PRIu64
                ", \"alloc_bytes\": %" PRIu64 ", \"free_bytes\": %" PRIu64 ", \"self\": %" PRId64 "}",
                a->count, a->allocs, a->frees, a->alloc_bytes, a->free_bytes,
                (int64_t)(a->alloc_bytes - a->free_bytes));
    }
    fprintf(f, "\n}}\n");
    int rc = fclose(f) == 0 ? 0 : -1;
    pmap_free(&by_name);
    free(acc.v);
    return rc;
}

/* ------------------------------------------------------------------------ */

static void usage(FILE *f)
{
    fprintf(f,
            "usage: check_trace TRACE [--expect-json FILE] [--expect KEY=VALUE]... [--tag-prefix P]\n"
            "                   [--summary] [--print-peak] [--ranges OUT.json] [--ranges-scope active|all]\n"
            "--expect keys: windows, active_steps, first_active_step, baseline_count_min,\n"
            "  baseline_bytes_min, kernels_min, allocs_min, kernels_in_window (1: none outside),\n"
            "  trailer (1), dropped (max), tags_min, tag (NAME), pid, ranges_min,\n"
            "  distinct_alloc_tids_min, step_source (api|nvtx|capture|time),\n"
            "  free_order (max FREE records before their ALLOC in file order)\n");
}

int main(int argc, char **argv)
{
    const char *path = NULL, *json = NULL, *ranges = NULL, *tag_prefix = "tag:";
    const char *kvs[64];
    int nkv = 0, summary = 0, print_peak = 0, ranges_active = 1;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage(stdout);
            return 0;
        } else if (!strcmp(a, "--summary")) {
            summary = 1;
        } else if (!strcmp(a, "--print-peak")) {
            print_peak = 1;
        } else if (!strcmp(a, "--expect-json") && v) {
            json = v;
            i++;
        } else if (!strcmp(a, "--expect") && v) {
            if (nkv < 64)
                kvs[nkv++] = v;
            i++;
        } else if (!strcmp(a, "--tag-prefix") && v) {
            tag_prefix = v;
            i++;
        } else if (!strcmp(a, "--ranges") && v) {
            ranges = v;
            i++;
        } else if (!strcmp(a, "--ranges-scope") && v) {
            if (strcmp(v, "active") && strcmp(v, "all")) {
                usage(stderr);
                return 2;
            }
            ranges_active = !strcmp(v, "active");
            i++;
        } else if (a[0] == '-' || path) {
            fprintf(stderr, "check_trace: bad argument '%s'\n", a);
            usage(stderr);
            return 2;
        } else {
            path = a;
        }
    }
    if (!path) {
        usage(stderr);
        return 2;
    }
    trace t;
    if (load_trace(&t, path) != 0) {
        free_trace(&t);
        return 2;
    }
    if (t.end.status != GMT_OK || t.end.truncated)
        fprintf(stderr, "note %s: %s\n", path, t.end.message);

    report rep = {0, 0, 0};
    int rc = 0;
    if (json) {
        jval *ex = jload(json);
        if (!ex) {
            free_trace(&t);
            return 2;
        }
        check_json(&t, ex, tag_prefix, &rep);
        jfree(ex);
    }
    for (int i = 0; i < nkv; i++)
        if (check_kv(&t, kvs[i], &rep) != 0)
            rc = 2;
    if (rc == 0 && summary)
        print_summary(&t);
    if (rc == 0 && print_peak) {
        replay rp;
        do_replay(&t, &rp);
        printf("%" PRIu64 "\n", rp.peak_dev[peak_device(&rp)]);
    }
    if (rc == 0 && ranges && write_ranges(&t, ranges, ranges_active) != 0)
        rc = 2;
    if (rc == 0 && rep.checks) {
        if (rep.failed)
            fprintf(stderr, "check_trace: FAIL, %d of %d checks failed (%d warnings) on %s\n", rep.failed,
                    rep.checks, rep.warned, path);
        else
            fprintf(stderr, "check_trace: PASS, %d checks (%d warnings) on %s\n", rep.checks, rep.warned,
                    path);
    }
    if (rc == 0 && rep.failed)
        rc = 1;
    free_trace(&t);
    return rc;
}
