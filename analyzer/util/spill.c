/* Records in a temporary file, and an external merge sort (spill.h). */
#include "spill.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "util/gma_util.h"

#define XS_READ 4096u /* records a merge reads from a run at once */

static int pwrite_all(FILE *f, const void *p, size_t len, uint64_t off)
{
    const unsigned char *b = p;
    while (len) {
        ssize_t k = pwrite(fileno(f), b, len, (off_t)off);
        if (k <= 0)
            return -1;
        b += k, len -= (size_t)k, off += (uint64_t)k;
    }
    return 0;
}

static int pread_all(FILE *f, void *p, size_t len, uint64_t off)
{
    unsigned char *b = p;
    while (len) {
        ssize_t k = pread(fileno(f), b, len, (off_t)off);
        if (k <= 0)
            return -1;
        b += k, len -= (size_t)k, off += (uint64_t)k;
    }
    return 0;
}

/* ---- gma_spill ------------------------------------------------------------------ */

int gma_spill_open(gma_spill *s, size_t size, size_t window)
{
    memset(s, 0, sizeof(*s));
    s->size = size;
    s->win = 2;
    while (s->win < window)
        s->win *= 2;
    s->w = calloc(s->win, size);
    s->scratch = malloc(size);
    s->f = tmpfile();
    if (!s->w || !s->scratch || !s->f) {
        gma_spill_close(s);
        return -1;
    }
    return 0;
}

void *gma_spill_push(gma_spill *s)
{
    if (s->err || s->sealed) {
        s->err = 1;
        return NULL;
    }
    if (s->n - s->flushed == s->win) {
        /* the older half, whole: flushed is a multiple of win / 2 */
        size_t half = s->win / 2;
        if (pwrite_all(s->f, s->w + (s->flushed % s->win) * s->size, half * s->size, s->flushed * s->size) != 0) {
            s->err = 1;
            return NULL;
        }
        s->flushed += half;
    }
    unsigned char *p = s->w + (s->n % s->win) * s->size;
    memset(p, 0, s->size);
    s->n++;
    return p;
}

void *gma_spill_get(gma_spill *s, uint64_t i)
{
    if (s->err || s->sealed || i >= s->n)
        return NULL;
    if (i >= s->flushed)
        return s->w + (i % s->win) * s->size;
    if (pread_all(s->f, s->scratch, s->size, i * s->size) != 0) {
        s->err = 1;
        return NULL;
    }
    return s->scratch;
}

int gma_spill_put(gma_spill *s, uint64_t i)
{
    if (i >= s->flushed)
        return 0;
    if (pwrite_all(s->f, s->scratch, s->size, i * s->size) != 0) {
        s->err = 1;
        return -1;
    }
    return 0;
}

int gma_spill_seal(gma_spill *s)
{
    if (s->sealed)
        return s->err ? -1 : 0;
    s->sealed = 1;
    if (s->err)
        return -1;
    /* the window's records, at most two pieces of the ring */
    while (s->flushed < s->n) {
        uint64_t at = s->flushed % s->win, k = s->n - s->flushed;
        if (k > s->win - at)
            k = s->win - at;
        if (pwrite_all(s->f, s->w + at * s->size, (size_t)k * s->size, s->flushed * s->size) != 0) {
            s->err = 1;
            return -1;
        }
        s->flushed += k;
    }
    free(s->w);
    s->w = NULL;
    s->map_len = (size_t)s->n * s->size;
    if (!s->map_len)
        return 0;
    void *m = mmap(NULL, s->map_len, PROT_READ, MAP_SHARED, fileno(s->f), 0);
    if (m == MAP_FAILED) {
        s->map_len = 0;
        s->err = 1;
        return -1;
    }
    s->map = m;
    return 0;
}

void gma_spill_trim(const gma_spill *s)
{
    /* only the resident set changes: the map reads the file again */
    if (s->map)
        (void)madvise(s->map, s->map_len, MADV_DONTNEED);
}

void gma_spill_close(gma_spill *s)
{
    if (s->map)
        munmap(s->map, s->map_len);
    if (s->f)
        fclose(s->f);
    free(s->w);
    free(s->scratch);
    memset(s, 0, sizeof(*s));
}

/* ---- gma_xsort ------------------------------------------------------------------- */

int gma_xsort_open(gma_xsort *x, size_t size, size_t run, gma_xsort_cmp cmp, void *ctx)
{
    memset(x, 0, sizeof(*x));
    x->size = size;
    x->run_cap = run ? run : 1;
    x->cmp = cmp;
    x->ctx = ctx;
    return 0; /* buf grows as elements come: a small sort stays small */
}

static int xs_reserve(gma_xsort *x)
{
    size_t cap = x->cap ? x->cap * 2 : 1024;
    if (cap > x->run_cap)
        cap = x->run_cap;
    unsigned char *b = realloc(x->buf, cap * x->size);
    if (!b)
        return -1;
    x->buf = b;
    x->cap = cap;
    return 0;
}

static int xs_flush(gma_xsort *x)
{
    if (!x->n)
        return 0;
    if (!x->f && !(x->f = tmpfile()))
        return -1;
    if (gma_msort(x->buf, x->n, x->size, x->cmp, x->ctx) != 0)
        return -1;
    if (x->nruns == x->runs_cap) {
        size_t cap = x->runs_cap ? x->runs_cap * 2 : 16;
        gma_xsort_run *r = realloc(x->runs, cap * sizeof(*r));
        if (!r)
            return -1;
        x->runs = r, x->runs_cap = cap;
    }
    if (pwrite_all(x->f, x->buf, x->n * x->size, x->written * x->size) != 0)
        return -1;
    x->runs[x->nruns++] = (gma_xsort_run){ x->written, x->n, 0, NULL, 0, 0 };
    x->written += x->n;
    x->n = 0;
    return 0;
}

int gma_xsort_add(gma_xsort *x, const void *e)
{
    if (x->err || x->merging)
        return x->err = 1, -1;
    if (x->n == x->run_cap && xs_flush(x) != 0)
        return x->err = 1, -1;
    if (x->n == x->cap && xs_reserve(x) != 0)
        return x->err = 1, -1;
    memcpy(x->buf + x->n * x->size, e, x->size);
    x->n++;
    return 0;
}

static int xs_fill(gma_xsort *x, gma_xsort_run *r)
{
    uint64_t k = r->n - r->next;
    if (k > XS_READ)
        k = XS_READ;
    if (k && pread_all(x->f, r->buf, (size_t)k * x->size, (r->off + r->next) * x->size) != 0)
        return -1;
    r->next += k;
    r->have = (size_t)k;
    r->at = 0;
    return 0;
}

static const void *xs_head(const gma_xsort *x, size_t run)
{
    const gma_xsort_run *r = &x->runs[run];
    return r->buf + r->at * x->size;
}

/* Heap order: the smaller head first, ties by run (the earlier added). */
static int xs_less(const gma_xsort *x, size_t a, size_t b)
{
    int c = x->cmp(xs_head(x, a), xs_head(x, b), x->ctx);
    return c < 0 || (c == 0 && a < b);
}

static void xs_down(gma_xsort *x, size_t i)
{
    for (;;) {
        size_t l = 2 * i + 1, m = i;
        if (l < x->nheap && xs_less(x, x->heap[l], x->heap[m]))
            m = l;
        if (l + 1 < x->nheap && xs_less(x, x->heap[l + 1], x->heap[m]))
            m = l + 1;
        if (m == i)
            return;
        size_t t = x->heap[i];
        x->heap[i] = x->heap[m], x->heap[m] = t;
        i = m;
    }
}

int gma_xsort_begin(gma_xsort *x)
{
    if (x->err)
        return -1;
    x->merging = 1;
    if (!x->f) { /* one run: sorted where it is */
        if (x->n && gma_msort(x->buf, x->n, x->size, x->cmp, x->ctx) != 0)
            return x->err = 1, -1;
        return 0;
    }
    if (xs_flush(x) != 0)
        return x->err = 1, -1;
    free(x->buf);
    x->buf = NULL;
    x->cap = 0;
    if (!(x->heap = malloc(x->nruns * sizeof(*x->heap))))
        return x->err = 1, -1;
    for (size_t i = 0; i < x->nruns; i++) {
        gma_xsort_run *r = &x->runs[i];
        if (!(r->buf = malloc((size_t)XS_READ * x->size)) || xs_fill(x, r) != 0)
            return x->err = 1, -1;
        if (r->have)
            x->heap[x->nheap++] = i;
    }
    for (size_t i = x->nheap / 2; i-- > 0;)
        xs_down(x, i);
    /* the element handed out: a copy, as its run's buffer refills */
    if (!(x->buf = malloc(x->size)))
        return x->err = 1, -1;
    return 0;
}

const void *gma_xsort_next(gma_xsort *x)
{
    if (x->err || !x->merging)
        return NULL;
    if (!x->f)
        return x->mem_at < x->n ? x->buf + x->size * x->mem_at++ : NULL;
    if (!x->nheap)
        return NULL;
    size_t top = x->heap[0];
    gma_xsort_run *r = &x->runs[top];
    memcpy(x->buf, xs_head(x, top), x->size);
    if (++r->at == r->have && xs_fill(x, r) != 0) {
        x->err = 1;
        return NULL;
    }
    if (!r->have)
        x->heap[0] = x->heap[--x->nheap];
    xs_down(x, 0);
    return x->buf;
}

void gma_xsort_close(gma_xsort *x)
{
    for (size_t i = 0; i < x->nruns; i++)
        free(x->runs[i].buf);
    free(x->runs);
    free(x->heap);
    free(x->buf);
    if (x->f)
        fclose(x->f);
    memset(x, 0, sizeof(*x));
}

/* ---- gma_big --------------------------------------------------------------------- */

typedef struct big_map {
    void *p;
    size_t len;
    FILE *f;
} big_map;

static big_map *big;     /* the maps alive */
static size_t nbig, big_cap;
static unsigned big_ticks;

static big_map *big_find(const void *p)
{
    for (size_t i = 0; i < nbig; i++)
        if (big[i].p == p)
            return &big[i];
    return NULL;
}

/* A map of n bytes of a new temporary file (zero: the file's holes). */
static void *big_map_new(size_t n)
{
    if (!n)
        n = 1;
    if (nbig == big_cap) {
        size_t cap = big_cap ? big_cap * 2 : 16;
        big_map *b = realloc(big, cap * sizeof(*b));
        if (!b)
            return NULL;
        big = b, big_cap = cap;
    }
    FILE *f = tmpfile();
    if (!f)
        return NULL;
    void *p = MAP_FAILED;
    if (ftruncate(fileno(f), (off_t)n) == 0)
        p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_SHARED, fileno(f), 0);
    if (p == MAP_FAILED) {
        fclose(f);
        return NULL;
    }
    big[nbig++] = (big_map){ p, n, f };
    return p;
}

/* GMEM_ANALYZE_TEST_SPILL_RUN, once: 0 unset */
static size_t big_test_run(void)
{
    static int read;
    static size_t run;
    if (!read) {
        const char *e = getenv("GMEM_ANALYZE_TEST_SPILL_RUN");
        run = e && atoi(e) > 0 ? (size_t)atoi(e) : 0;
        read = 1;
    }
    return run;
}

size_t gma_big_run(size_t size)
{
    size_t t = big_test_run();
    return t ? t : GMA_BIG_SORT_BYTES / size;
}

static size_t big_min(void) { return big_test_run() ? 0 : GMA_BIG_MIN; }

void *gma_big_alloc(size_t n)
{
    if (n < big_min())
        return calloc(n ? n : 1, 1);
    return big_map_new(n);
}

void *gma_big_realloc(void *p, size_t old, size_t n)
{
    big_map *m = p ? big_find(p) : NULL;
    if (m) { /* the file grows or shrinks under the map */
        if (ftruncate(fileno(m->f), (off_t)n) != 0)
            return NULL;
        void *q = mremap(m->p, m->len, n, MREMAP_MAYMOVE);
        if (q == MAP_FAILED)
            return NULL;
        m->p = q, m->len = n;
        return q;
    }
    if (n < big_min()) {
        unsigned char *q = realloc(p, n ? n : 1);
        if (q && n > old)
            memset(q + old, 0, n - old);
        return q;
    }
    void *q = big_map_new(n);
    if (!q)
        return NULL;
    if (p) {
        memcpy(q, p, old < n ? old : n);
        free(p);
    }
    return q;
}

void gma_big_free(void *p)
{
    big_map *m = p ? big_find(p) : NULL;
    if (!m) {
        free(p);
        return;
    }
    munmap(m->p, m->len);
    fclose(m->f);
    *m = big[--nbig];
    if (!nbig) {
        free(big);
        big = NULL;
        big_cap = 0;
    }
}

void gma_big_trim(void)
{
    /* shared maps: the pages stay in the file's cache, dirty or not */
    for (size_t i = 0; i < nbig; i++)
        (void)madvise(big[i].p, big[i].len, MADV_DONTNEED);
}

void gma_big_tick(void)
{
    if (++big_ticks % GMA_BIG_TICK == 0 && nbig)
        gma_big_trim();
}
