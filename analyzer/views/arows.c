/*
 * --by alloc --top 0 with bounded memory (arows.h). An allocation's row is
 * final when its entry dies (the replay's "ended" event: freed, replaced or
 * dropped), or at the end for the live ones; only its kernel may still
 * change, while the kernel it waited for has not come (the row then waits
 * for that kernel's "settle", as a kept entry would have learnt it). Final
 * rows go into a buffer of AS_RUN records; a full buffer is sorted by the
 * table's order (liveset.c's gma_arow_before, on the record's fields) and
 * written to an unnamed temporary file as a run. The table merges the runs,
 * AS_WINDOW rows at a time, each merge reading its runs through small
 * buffers with pread, so that several tables can read the same spill.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "arows.h"
#include "consumer.h"
#include "replay_int.h"
#include "tables.h"

#define AS_RUN ((size_t)1 << 19)  /* records sorted in memory per run (36 MiB, and as much to sort) */
#define AS_READ 2048u             /* records a merge reads from a run at once */
#define AS_WINDOW ((size_t)1 << 15) /* rows a table holds at once */

/* One row: what its cells and its rank need. */
typedef struct gma_arec {
    uint64_t addr, bytes, ts, free_ts, live_after, ord, step;
    uint32_t kname, rname;
    uint16_t flags;
    uint8_t device, kind, source;
} gma_arec;

typedef struct as_run {
    uint64_t off, n; /* records in the file */
} as_run;

/* A row waiting for its kernel. */
typedef struct as_defer {
    gma_arec a;
    uint64_t key;
    uint32_t next; /* the next waiting for the same kernel (index + 1), or the free list */
} as_defer;

typedef struct gma_aspill {
    const gma_replay *r;
    gma_arec *buf;
    size_t n, run_cap; /* AS_RUN; GMEM_ANALYZE_TEST_SPILL_RUN=N in the tests: many short runs (off: no spill) */
    FILE *f;
    uint64_t written; /* records in the file */
    gma_vec runs;     /* as_run */
    gma_vec defer;    /* as_defer */
    gma_map defer_of; /* kernel wait key -> first waiting (index + 1) */
    uint32_t defer_free;
    int done;         /* the live rows added, the last run written */
    int err;
} gma_aspill;

/* 1 when a ranks before b: gma_arow_before's order on the records. */
static int arec_before(const gma_replay *r, const gma_arec *a, const gma_arec *b)
{
    switch (r->opt.sort) {
    case GMA_SORT_MEM:
    case GMA_SORT_ALLOC:
        if (a->bytes != b->bytes)
            return a->bytes > b->bytes;
        break;
    case GMA_SORT_PEAK:
        if (a->live_after != b->live_after)
            return a->live_after > b->live_after;
        break;
    case GMA_SORT_TIME: {
        uint64_t ea = a->free_ts ? a->free_ts : r->last_ts, eb = b->free_ts ? b->free_ts : r->last_ts;
        uint64_t la = ea > a->ts ? ea - a->ts : 0, lb = eb > b->ts ? eb - b->ts : 0;
        if (la != lb)
            return la > lb;
        break;
    }
    case GMA_SORT_NAME:
        if (a->device != b->device)
            return a->device < b->device;
        if (a->addr != b->addr)
            return a->addr < b->addr;
        break;
    default:
        break;
    }
    return a->ord < b->ord;
}

static int arec_cmp(const void *pa, const void *pb, void *pr)
{
    const gma_arec *a = pa, *b = pb;
    if (arec_before(pr, a, b))
        return -1;
    return arec_before(pr, b, a) ? 1 : 0;
}

static void arec_of(gma_arec *a, const gma_entry *e)
{
    a->addr = e->addr;
    a->bytes = e->bytes;
    a->ts = e->ts;
    a->free_ts = e->free_ts;
    a->live_after = e->live_after;
    a->ord = e->ord;
    a->step = e->step;
    a->kname = e->kname;
    a->rname = e->rname;
    a->flags = e->flags;
    a->device = e->device;
    a->kind = e->kind;
    a->source = e->source;
}

/* The buffer, sorted, as a run at the end of the file. */
static int run_flush(gma_aspill *s)
{
    if (!s->n || s->err)
        return s->err ? -1 : 0;
    if (gma_msort(s->buf, s->n, sizeof(*s->buf), arec_cmp, (void *)s->r) != 0 ||
        fwrite(s->buf, sizeof(*s->buf), s->n, s->f) != s->n) {
        s->err = errno ? errno : ENOMEM;
        return -1;
    }
    as_run *run = gma_vec_push(&s->runs);
    if (!run) {
        s->err = ENOMEM;
        return -1;
    }
    run->off = s->written;
    run->n = s->n;
    s->written += s->n;
    s->n = 0;
    return 0;
}

static void add(gma_aspill *s, const gma_arec *a)
{
    if (s->err)
        return;
    s->buf[s->n++] = *a;
    if (s->n == s->run_cap)
        run_flush(s);
}

/* The rows waiting for a kernel, with its name. */
static void defer_flush(gma_aspill *s, uint32_t head, uint32_t kname)
{
    while (head) {
        as_defer *d = &GMA_VEC_AT(&s->defer, as_defer, head - 1);
        uint32_t next = d->next;
        d->a.kname = kname;
        add(s, &d->a);
        d->next = s->defer_free;
        s->defer_free = head;
        head = next;
    }
}

static void row_final(gma_replay *r, const gma_entry *e)
{
    gma_aspill *s = r->aspill;
    if (!(e->flags & GMA_E_ACCOUNTED) || s->err)
        return;
    gma_arec a;
    arec_of(&a, e);
    if (!e->slot) {
        add(s, &a);
        return;
    }
    uint32_t i;
    if (s->defer_free) {
        i = s->defer_free - 1;
        s->defer_free = GMA_VEC_AT(&s->defer, as_defer, i).next;
    } else {
        if (!gma_vec_push(&s->defer)) {
            s->err = ENOMEM;
            return;
        }
        i = (uint32_t)(s->defer.len - 1);
    }
    as_defer *d = &GMA_VEC_AT(&s->defer, as_defer, i);
    d->a = a;
    d->key = SLOT(r, e->slot - 1)->key;
    uint32_t head = 0;
    (void)gma_map_get(&s->defer_of, d->key, &head);
    d->next = head;
    if (gma_map_put(&s->defer_of, d->key, i + 1) != 0)
        s->err = ENOMEM;
}

static void on_ended(gma_replay *r, const gma_entry *e) { row_final(r, e); }

static void on_settle(gma_replay *r, uint64_t key, uint32_t kname)
{
    gma_aspill *s = r->aspill;
    uint32_t head;
    if (s->defer_of.count && gma_map_del(&s->defer_of, key, &head))
        defer_flush(s, head, kname);
}

static void spill_free(gma_aspill *s)
{
    if (!s)
        return;
    if (s->f)
        fclose(s->f);
    free(s->buf);
    gma_vec_free(&s->runs);
    gma_vec_free(&s->defer);
    gma_map_free(&s->defer_of);
    free(s);
}

static void on_release(gma_replay *r)
{
    spill_free(r->aspill);
    r->aspill = NULL;
}

static const gma_consumer spill_consumer = {
    .ended = on_ended,
    .settle = on_settle,
    .release = on_release,
};

int gma_aspill_open(gma_replay *r)
{
    const char *test = getenv("GMEM_ANALYZE_TEST_SPILL_RUN");
    if (test && strcmp(test, "off") == 0) /* the tests' reference: the entries kept */
        return -1;
    gma_aspill *s = calloc(1, sizeof(*s));
    if (!s)
        return -1;
    s->r = r;
    s->run_cap = AS_RUN;
    if (test && atoi(test) > 0)
        s->run_cap = (size_t)atoi(test);
    s->buf = malloc(s->run_cap * sizeof(*s->buf));
    s->f = tmpfile();
    gma_vec_init(&s->runs, sizeof(as_run));
    gma_vec_init(&s->defer, sizeof(as_defer));
    if (!s->buf || !s->f) {
        spill_free(s);
        return -1;
    }
    r->aspill = s;
    r->aspill_table = gma_aspill_table;
    if (gma_replay_consumer_add(r, &spill_consumer) != 0) {
        r->aspill = NULL;
        spill_free(s);
        return -1;
    }
    return 0;
}

/* After the replay: the rows still live, and the last run. */
static int spill_done(gma_aspill *s, const gma_replay *r)
{
    if (s->done)
        return s->err ? -1 : 0;
    s->done = 1;
    /* every wait was settled by the replay's end (gma_replay_finish) */
    for (size_t i = 0; i < s->defer.len; i++) {
        as_defer *d = &GMA_VEC_AT(&s->defer, as_defer, i);
        uint32_t head;
        if (s->defer_of.count && gma_map_del(&s->defer_of, d->key, &head))
            defer_flush(s, head, GMA_NAME_UNATTR);
    }
    for (size_t i = 0; i < r->entries.len && !s->err; i++) {
        const gma_entry *e = &GMA_VEC_AT(&r->entries, gma_entry, i);
        if ((e->flags & (GMA_E_INUSE | GMA_E_LIVE | GMA_E_ACCOUNTED)) ==
            (GMA_E_INUSE | GMA_E_LIVE | GMA_E_ACCOUNTED)) {
            gma_arec a;
            arec_of(&a, e);
            add(s, &a);
        }
    }
    if (run_flush(s) != 0 || fflush(s->f) != 0) {
        s->err = s->err ? s->err : errno;
        return -1;
    }
    free(s->buf); /* the runs are in the file now */
    s->buf = NULL;
    return 0;
}

/* ---- a table's merge of the runs ------------------------------------------ */

typedef struct as_cur {
    uint64_t next, end; /* the run's records still to read, in the file */
    gma_arec *b;        /* read ahead */
    size_t pos, len;
} as_cur;

typedef struct as_merge {
    const gma_replay *r;
    gma_aspill *s;
    as_cur *cur;
    uint32_t *heap; /* runs by their next record, the first at the root */
    size_t nheap, nruns;
    size_t row;     /* rows merged so far */
    int err;
    gma_buf b;
} as_merge;

static const gma_arec *cur_head(as_merge *m, uint32_t k) { return &m->cur[k].b[m->cur[k].pos]; }

static int cur_load(as_merge *m, uint32_t k)
{
    as_cur *c = &m->cur[k];
    c->pos = c->len = 0;
    if (c->next >= c->end)
        return 0;
    size_t want = c->end - c->next < AS_READ ? (size_t)(c->end - c->next) : AS_READ;
    size_t bytes = want * sizeof(gma_arec), got = 0;
    int fd = fileno(m->s->f);
    while (got < bytes) {
        ssize_t n = pread(fd, (char *)c->b + got, bytes - got, (off_t)(c->next * sizeof(gma_arec) + got));
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            m->err = n < 0 ? errno : EIO;
            return -1;
        }
        got += (size_t)n;
    }
    c->next += want;
    c->len = want;
    return 1;
}

static int heap_less(as_merge *m, uint32_t a, uint32_t b)
{
    return arec_before(m->r, cur_head(m, a), cur_head(m, b));
}

static void heap_down(as_merge *m, size_t i)
{
    for (;;) {
        size_t l = 2 * i + 1, w = i;
        if (l < m->nheap && heap_less(m, m->heap[l], m->heap[w]))
            w = l;
        if (l + 1 < m->nheap && heap_less(m, m->heap[l + 1], m->heap[w]))
            w = l + 1;
        if (w == i)
            return;
        uint32_t t = m->heap[i];
        m->heap[i] = m->heap[w];
        m->heap[w] = t;
        i = w;
    }
}

/* Starts the merge over from the first row. */
static int merge_restart(as_merge *m)
{
    m->nheap = 0;
    m->row = 0;
    for (size_t k = 0; k < m->nruns; k++) {
        const as_run *run = &GMA_VEC_AT(&m->s->runs, as_run, k);
        m->cur[k].next = run->off;
        m->cur[k].end = run->off + run->n;
        int got = cur_load(m, (uint32_t)k);
        if (got < 0)
            return -1;
        if (got)
            m->heap[m->nheap++] = (uint32_t)k;
    }
    for (size_t i = m->nheap / 2; i-- > 0;)
        heap_down(m, i);
    return 0;
}

/* The next row in the table's order into *a; 0 at the end, -1 on error. */
static int merge_next(as_merge *m, gma_arec *a)
{
    if (!m->nheap)
        return 0;
    uint32_t k = m->heap[0];
    *a = *cur_head(m, k);
    if (++m->cur[k].pos == m->cur[k].len) {
        int got = cur_load(m, k);
        if (got < 0)
            return -1;
        if (!got)
            m->heap[0] = m->heap[--m->nheap];
    }
    if (m->nheap)
        heap_down(m, 0);
    m->row++;
    return 1;
}

/* table.h's fill: the window of AS_WINDOW rows that holds row. */
static int merge_fill(gma_table *t, size_t row)
{
    as_merge *m = t->fill_ctx;
    if (m->err || row >= t->nrows)
        return -1;
    if (row < m->row && merge_restart(m) != 0)
        return -1;
    /* rows are read in order: skip to the window's start */
    size_t lo = row - row % AS_WINDOW;
    gma_arec a;
    while (m->row < lo)
        if (merge_next(m, &a) != 1)
            return -1;
    size_t total = t->nrows;
    t->nrows = 0;
    t->cells.len = 0;
    t->strs.len = 0;
    gma_entry e;
    memset(&e, 0, sizeof(e));
    int err = 0;
    for (size_t i = 0; i < AS_WINDOW && lo + i < total && !err; i++) {
        if (merge_next(m, &a) != 1) {
            err = 1;
            break;
        }
        e.addr = a.addr;
        e.bytes = a.bytes;
        e.ts = a.ts;
        e.free_ts = a.free_ts;
        e.live_after = a.live_after;
        e.ord = a.ord;
        e.step = a.step;
        e.kname = a.kname;
        e.rname = a.rname;
        e.flags = a.flags;
        e.device = a.device;
        e.kind = a.kind;
        e.source = a.source;
        err = gma_alloc_row(m->r, t, &e, &m->b) != 0;
    }
    t->win_lo = lo;
    t->win_n = t->nrows;
    t->nrows = total;
    if (err) {
        m->err = m->err ? m->err : ENOMEM;
        t->win_n = 0;
        return -1;
    }
    return 0;
}

static void merge_free(gma_table *t)
{
    as_merge *m = t->fill_ctx;
    if (!m)
        return;
    for (size_t k = 0; k < m->nruns; k++)
        free(m->cur[k].b);
    free(m->cur);
    free(m->heap);
    gma_buf_free(&m->b);
    free(m);
    t->fill_ctx = NULL;
}

int gma_aspill_table(const gma_replay *r, gma_table *t)
{
    gma_alloc_table_init(t);
    gma_aspill *s = r->aspill;
    if (spill_done(s, r) != 0) {
        errno = s->err;
        return -1;
    }
    as_merge *m = calloc(1, sizeof(*m));
    if (!m)
        return -1;
    m->r = r;
    m->s = s;
    m->nruns = s->runs.len;
    m->cur = calloc(m->nruns ? m->nruns : 1, sizeof(*m->cur));
    m->heap = calloc(m->nruns ? m->nruns : 1, sizeof(*m->heap));
    int err = !m->cur || !m->heap;
    for (size_t k = 0; k < m->nruns && !err; k++)
        err = !(m->cur[k].b = malloc(AS_READ * sizeof(gma_arec)));
    t->fill_ctx = m;
    t->fill_free = merge_free;
    if (err || merge_restart(m) != 0) {
        merge_free(t);
        t->fill_free = NULL;
        return -1;
    }
    t->fill = merge_fill;
    t->nrows = (size_t)s->written;
    uint64_t total = gma_alloc_rows_total(r);
    t->total_rows = total > s->written ? total : s->written;
    t->win_lo = t->win_n = 0;
    return 0;
}
