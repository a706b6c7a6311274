/*
 * --sqlite OUT.db: the trace as SQLite tables (docs/sqlite-schema.md), for
 * a user's own questions in SQL or pandas.  Rows are written as the replay
 * makes them (an allocation when it ends, or at the end for the ones still
 * live; a kernel, range, step, window or sample as it comes), through
 * prepared statements, a transaction per GMA_SQL_BATCH rows: memory stays
 * bounded by the distinct names, never by the number of rows.  The file is
 * written under a temporary name and renamed into place when complete.
 * Built without SQLite's library, --sqlite says how to get it.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "consumer.h"
#include "export_sqlite.h"
#include "tracestr.h"

#if GMA_HAVE_SQLITE
#include <sqlite3.h>

#define GMA_SQL_BATCH 100000u

enum { S_ALLOC, S_KERNEL, S_RANGE, S_STEP, S_WINDOW, S_SAMPLE, S_NAME, S_SEGMENT, S_SEGFREE, S_COUNT_ };

static const char *const SCHEMA =
    "PRAGMA journal_mode=OFF;"
    "PRAGMA synchronous=OFF;"
    "CREATE TABLE names(id INTEGER PRIMARY KEY, kind TEXT NOT NULL, name TEXT NOT NULL);"
    "CREATE TABLE allocations(id INTEGER PRIMARY KEY, device INTEGER, address INTEGER, bytes INTEGER,"
    " kind TEXT, source TEXT, layer TEXT, stream INTEGER, tid INTEGER, step INTEGER, window INTEGER,"
    " alloc_ns INTEGER, free_ns INTEGER, state TEXT, baseline INTEGER, leaked INTEGER,"
    " kernel_id INTEGER REFERENCES names(id), range_id INTEGER REFERENCES names(id), live_after INTEGER);"
    "CREATE TABLE segments(id INTEGER PRIMARY KEY, device INTEGER, address INTEGER, bytes INTEGER,"
    " step INTEGER, alloc_ns INTEGER, free_ns INTEGER);"
    "CREATE TABLE kernels(id INTEGER PRIMARY KEY, name_id INTEGER REFERENCES names(id), device INTEGER,"
    " stream INTEGER, tid INTEGER, seq INTEGER, start_ns INTEGER, end_ns INTEGER);"
    "CREATE TABLE ranges(id INTEGER PRIMARY KEY, tid INTEGER, name_id INTEGER REFERENCES names(id),"
    " begin_ns INTEGER, end_ns INTEGER);"
    "CREATE TABLE steps(step INTEGER, begin_ns INTEGER, phase INTEGER, source INTEGER);"
    "CREATE TABLE windows(window INTEGER, ts_ns INTEGER, edge TEXT);"
    "CREATE TABLE samples(device INTEGER, ts_ns INTEGER, used_bytes INTEGER);"
    "CREATE TABLE summary(device INTEGER, peak_bytes INTEGER, peak_ns INTEGER, peak_step INTEGER,"
    " peak_window INTEGER, baseline_bytes INTEGER, baseline_count INTEGER, alloc_bytes INTEGER,"
    " alloc_count INTEGER, free_bytes INTEGER, free_count INTEGER, leaked_bytes INTEGER, leaked_count INTEGER,"
    " kernels INTEGER, kernel_ns INTEGER, driver_max_used INTEGER, total_mem INTEGER);"
    "CREATE TABLE meta(key TEXT PRIMARY KEY, value);"
    "CREATE VIEW allocations_named AS SELECT a.*, k.name AS kernel, g.name AS range FROM allocations a"
    " LEFT JOIN names k ON k.id = a.kernel_id LEFT JOIN names g ON g.id = a.range_id;"
    "CREATE VIEW kernels_named AS SELECT k.*, n.name AS name FROM kernels k LEFT JOIN names n ON n.id = k.name_id;"
    "CREATE VIEW ranges_named AS SELECT g.*, n.name AS name FROM ranges g LEFT JOIN names n ON n.id = g.name_id;";

static const char *const SQL[S_COUNT_] = {
    [S_ALLOC] = "INSERT INTO allocations VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
    [S_KERNEL] = "INSERT INTO kernels VALUES(NULL,?,?,?,?,?,?,?)",
    [S_RANGE] = "INSERT INTO ranges VALUES(NULL,?,?,?,?)",
    [S_STEP] = "INSERT INTO steps VALUES(?,?,?,?)",
    [S_WINDOW] = "INSERT INTO windows VALUES(?,?,?)",
    [S_SAMPLE] = "INSERT INTO samples VALUES(?,?,?)",
    [S_NAME] = "INSERT INTO names VALUES(?,?,?)",
    [S_SEGMENT] = "INSERT INTO segments VALUES(NULL,?,?,?,?,?,NULL)",
    [S_SEGFREE] = "UPDATE segments SET free_ns = ? WHERE id = ?",
};

/* An allocation that ended while its kernel was still to come (CUPTI's
 * records can reach the trace after the free): its row waits for the
 * kernel (settle) or the end. */
typedef struct sq_defer {
    gma_entry e;
    uint64_t free_ts, key;
    const char *state; /* NULL: on the free list */
    uint32_t next; /* the next waiting for the same kernel (index + 1), or the free list */
} sq_defer;

typedef struct gma_sqlite {
    sqlite3 *db;
    sqlite3_stmt *st[S_COUNT_];
    char *path, *tmp;
    gma_map names;    /* kind << 32 | string id -> names.id */
    uint32_t next_name;
    gma_map segs;     /* live CUDA segment (device, address) -> segments.id */
    gma_vec defer;    /* sq_defer */
    gma_map defer_of; /* kernel wait key -> first waiting row (index + 1) */
    uint32_t defer_free;
    uint64_t pending; /* rows in the open transaction */
    uint64_t rows;
    int failed;       /* the first error is in msg; nothing more is written */
    char msg[300];
    gma_buf b;
} gma_sqlite;

static int sq_fail(gma_sqlite *s, const char *what)
{
    if (!s->failed) {
        s->failed = 1;
        snprintf(s->msg, sizeof s->msg, "%s: %s", what, s->db ? sqlite3_errmsg(s->db) : "out of memory");
    }
    return -1;
}

static int sq_exec(gma_sqlite *s, const char *sql)
{
    char *err = NULL;
    if (sqlite3_exec(s->db, sql, NULL, NULL, &err) != SQLITE_OK) {
        if (!s->failed) {
            s->failed = 1;
            snprintf(s->msg, sizeof s->msg, "%s", err ? err : "SQLite error");
        }
        sqlite3_free(err);
        return -1;
    }
    return 0;
}

/* Runs statement k with its bound values; a transaction is committed every
 * GMA_SQL_BATCH rows. */
static int sq_step(gma_sqlite *s, int k)
{
    sqlite3_stmt *st = s->st[k];
    int rc = sqlite3_step(st);
    sqlite3_reset(st);
    if (rc != SQLITE_DONE)
        return sq_fail(s, "writing a row");
    s->rows++;
    if (++s->pending >= GMA_SQL_BATCH) {
        s->pending = 0;
        if (sq_exec(s, "COMMIT; BEGIN") != 0)
            return -1;
    }
    return 0;
}

static void bind_u(sqlite3_stmt *st, int i, uint64_t v) { sqlite3_bind_int64(st, i, (sqlite3_int64)v); }
static void bind_i(sqlite3_stmt *st, int i, int64_t v) { sqlite3_bind_int64(st, i, (sqlite3_int64)v); }

#define NAME_KERNEL 1u
#define NAME_RANGE 2u

/* The names row of a kernel's or range's string id (written the first time). */
static uint32_t name_id(gma_replay *r, gma_sqlite *s, unsigned kind, uint32_t id)
{
    uint64_t key = (uint64_t)kind << 32 | id;
    uint32_t v;
    if (gma_map_get(&s->names, key, &v))
        return v;
    v = ++s->next_name;
    if (gma_map_put(&s->names, key, v) != 0) {
        sq_fail(s, "out of memory");
        return 0;
    }
    gma_buf_reset(&s->b);
    if (kind == NAME_KERNEL)
        gma_kernel_display(r, id, 1, &s->b);
    else
        gma_range_display(r, id, 1, &s->b);
    if (s->b.oom) {
        sq_fail(s, "out of memory");
        return 0;
    }
    sqlite3_stmt *st = s->st[S_NAME];
    bind_u(st, 1, v);
    sqlite3_bind_text(st, 2, kind == NAME_KERNEL ? "kernel" : "range", -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 3, gma_buf_str(&s->b), (int)s->b.len, SQLITE_TRANSIENT);
    sq_step(s, S_NAME);
    return v;
}

/* An allocation's row, once its end is known (or at the trace's end). */
static void alloc_row_now(gma_replay *r, const gma_entry *e, uint64_t free_ts, const char *state)
{
    gma_sqlite *s = r->sqlite;
    uint32_t kid = name_id(r, s, NAME_KERNEL, e->kname), rid = name_id(r, s, NAME_RANGE, e->rname);
    sqlite3_stmt *st = s->st[S_ALLOC];
    bind_u(st, 1, e->ord);
    bind_u(st, 2, e->device);
    bind_u(st, 3, e->addr);
    bind_u(st, 4, e->bytes);
    sqlite3_bind_text(st, 5, gma_kind_label(e->kind), -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 6, gma_source_label(e->source), -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 7, r->fw ? "blocks" : "segments", -1, SQLITE_STATIC);
    bind_u(st, 8, e->stream);
    bind_u(st, 9, e->tid);
    bind_u(st, 10, e->step);
    if (e->window == UINT32_MAX)
        sqlite3_bind_null(st, 11);
    else
        bind_u(st, 11, e->window);
    bind_i(st, 12, gma_rel(r, e->ts));
    if (free_ts)
        bind_i(st, 13, gma_rel(r, free_ts));
    else
        sqlite3_bind_null(st, 13);
    sqlite3_bind_text(st, 14, state, -1, SQLITE_STATIC);
    sqlite3_bind_int(st, 15, (e->flags & GMA_E_BASELINE) != 0);
    sqlite3_bind_int(st, 16, (e->flags & GMA_E_LEAKED) != 0);
    bind_u(st, 17, kid);
    bind_u(st, 18, rid);
    bind_u(st, 19, e->live_after);
    sq_step(s, S_ALLOC);
}

static void alloc_row(gma_replay *r, const gma_entry *e, uint64_t free_ts, const char *state)
{
    gma_sqlite *s = r->sqlite;
    if (s->failed || !(e->flags & GMA_E_ACCOUNTED))
        return;
    if (!e->slot) {
        alloc_row_now(r, e, free_ts, state);
        return;
    }
    uint64_t key = GMA_VEC_AT(&r->slots, gma_slot, e->slot - 1).key;
    uint32_t i;
    if (s->defer_free) {
        i = s->defer_free - 1;
        s->defer_free = GMA_VEC_AT(&s->defer, sq_defer, i).next;
    } else {
        if (!gma_vec_push(&s->defer)) {
            sq_fail(s, "out of memory");
            return;
        }
        i = (uint32_t)(s->defer.len - 1);
    }
    sq_defer *d = &GMA_VEC_AT(&s->defer, sq_defer, i);
    d->e = *e;
    d->free_ts = free_ts;
    d->key = key;
    d->state = state;
    uint32_t head = 0;
    (void)gma_map_get(&s->defer_of, key, &head);
    d->next = head;
    if (gma_map_put(&s->defer_of, key, i + 1) != 0)
        sq_fail(s, "out of memory");
}

/* The rows waiting for a kernel, with its name (GMA_NAME_UNATTR: none came). */
static void defer_flush(gma_replay *r, uint32_t head, uint32_t kname)
{
    gma_sqlite *s = r->sqlite;
    while (head) {
        sq_defer *d = &GMA_VEC_AT(&s->defer, sq_defer, head - 1);
        uint32_t next = d->next;
        d->e.kname = kname;
        if (!s->failed)
            alloc_row_now(r, &d->e, d->free_ts, d->state);
        d->state = NULL;
        d->next = s->defer_free;
        s->defer_free = head;
        head = next;
    }
}

static void on_settle(gma_replay *r, uint64_t key, uint32_t kname)
{
    gma_sqlite *s = r->sqlite;
    uint32_t head;
    if (gma_map_del(&s->defer_of, key, &head))
        defer_flush(r, head, kname);
}

/* An allocation's state and end as the --by alloc table gives them. */
static void on_ended(gma_replay *r, const gma_entry *e)
{
    if (e->flags & GMA_E_LIVE)
        alloc_row(r, e, 0, "live at end");
    else if (e->flags & GMA_E_DROPPED)
        alloc_row(r, e, 0, "dropped");
    else
        alloc_row(r, e, e->free_ts, "freed");
}

static void on_kernel(gma_replay *r, const gmt_kernel *k)
{
    gma_sqlite *s = r->sqlite;
    if (s->failed)
        return;
    uint32_t nid = name_id(r, s, NAME_KERNEL, (uint32_t)k->name);
    sqlite3_stmt *st = s->st[S_KERNEL];
    bind_u(st, 1, nid);
    bind_u(st, 2, k->device);
    bind_u(st, 3, k->stream);
    bind_u(st, 4, k->tid);
    bind_u(st, 5, k->seq);
    bind_i(st, 6, gma_rel(r, k->start));
    bind_i(st, 7, gma_rel(r, k->end));
    sq_step(s, S_KERNEL);
}

static void on_range(gma_replay *r, uint64_t tid, uint32_t name, uint64_t begin, uint64_t end)
{
    gma_sqlite *s = r->sqlite;
    if (s->failed)
        return;
    uint32_t nid = name_id(r, s, NAME_RANGE, name);
    sqlite3_stmt *st = s->st[S_RANGE];
    bind_u(st, 1, tid);
    bind_u(st, 2, nid);
    bind_i(st, 3, gma_rel(r, begin));
    bind_i(st, 4, gma_rel(r, end));
    sq_step(s, S_RANGE);
}

static void on_step(gma_replay *r, const gmt_step *g)
{
    gma_sqlite *s = r->sqlite;
    if (s->failed)
        return;
    sqlite3_stmt *st = s->st[S_STEP];
    bind_u(st, 1, g->step);
    bind_i(st, 2, gma_rel(r, g->ts));
    bind_u(st, 3, g->phase);
    bind_u(st, 4, g->source);
    sq_step(s, S_STEP);
}

static void on_window(gma_replay *r, uint64_t id, uint64_t ts, int begin)
{
    gma_sqlite *s = r->sqlite;
    if (s->failed)
        return;
    sqlite3_stmt *st = s->st[S_WINDOW];
    bind_u(st, 1, id);
    bind_i(st, 2, gma_rel(r, ts));
    sqlite3_bind_text(st, 3, begin ? "begin" : "end", -1, SQLITE_STATIC);
    sq_step(s, S_WINDOW);
}

static void on_sample(gma_replay *r, uint64_t dev, uint64_t ts, uint64_t used)
{
    gma_sqlite *s = r->sqlite;
    if (s->failed)
        return;
    sqlite3_stmt *st = s->st[S_SAMPLE];
    bind_u(st, 1, dev);
    bind_i(st, 2, gma_rel(r, ts));
    bind_u(st, 3, used);
    sq_step(s, S_SAMPLE);
}

/* With the blocks layer: CUDA's own allocations, the allocator's segments. */
static void on_cuda(gma_replay *r, const gmt_mem *m, int is_alloc)
{
    gma_sqlite *s = r->sqlite;
    if (s->failed)
        return;
    uint64_t key = m->address ^ (m->device << 58);
    if (!is_alloc) {
        uint32_t id;
        if (!gma_map_del(&s->segs, key, &id))
            return;
        sqlite3_stmt *st = s->st[S_SEGFREE];
        bind_i(st, 1, gma_rel(r, m->ts));
        bind_u(st, 2, id);
        sq_step(s, S_SEGFREE);
        return;
    }
    sqlite3_stmt *st = s->st[S_SEGMENT];
    bind_u(st, 1, m->device);
    bind_u(st, 2, m->address);
    bind_u(st, 3, m->bytes);
    bind_u(st, 4, m->step);
    bind_i(st, 5, gma_rel(r, m->ts));
    if (sq_step(s, S_SEGMENT) == 0 && gma_map_put(&s->segs, key, (uint32_t)sqlite3_last_insert_rowid(s->db)) != 0)
        sq_fail(s, "out of memory");
}

static void sq_close(gma_sqlite *s, int keep)
{
    for (int k = 0; k < S_COUNT_; k++)
        sqlite3_finalize(s->st[k]);
    if (s->db)
        sqlite3_close(s->db);
    if (!keep && s->tmp)
        unlink(s->tmp);
    gma_map_free(&s->names);
    gma_map_free(&s->segs);
    gma_map_free(&s->defer_of);
    gma_vec_free(&s->defer);
    gma_buf_free(&s->b);
    free(s->path);
    free(s->tmp);
    free(s);
}

static void sqlite_release(gma_replay *r)
{
    if (r->sqlite)
        sq_close(r->sqlite, 0);
    r->sqlite = NULL;
}

static const gma_consumer sqlite_consumer = {
    .kernel_selected = on_kernel,
    .range_closed = on_range,
    .step = on_step,
    .window = on_window,
    .sample = on_sample,
    .cuda = on_cuda,
    .ended = on_ended,
    .settle = on_settle,
    .release = sqlite_release,
};

int gma_sqlite_open(gma_replay *r, const char *path, char *msg, size_t cap)
{
    gma_sqlite *s = calloc(1, sizeof(*s));
    size_t n = strlen(path);
    if (s) {
        s->path = strdup(path);
        s->tmp = malloc(n + 32);
    }
    if (!s || !s->path || !s->tmp) {
        if (s)
            sq_close(s, 0);
        snprintf(msg, cap, "out of memory");
        return -1;
    }
    gma_vec_init(&s->defer, sizeof(sq_defer));
    snprintf(s->tmp, n + 32, "%s.tmp%ld", path, (long)getpid());
    unlink(s->tmp);
    if (sqlite3_open_v2(s->tmp, &s->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL) != SQLITE_OK ||
        sq_exec(s, SCHEMA) != 0 || sq_exec(s, "BEGIN") != 0) {
        snprintf(msg, cap, "cannot write %s: %s", path, s->failed ? s->msg : sqlite3_errmsg(s->db));
        sq_close(s, 0);
        return -1;
    }
    for (int k = 0; k < S_COUNT_; k++) {
        if (sqlite3_prepare_v2(s->db, SQL[k], -1, &s->st[k], NULL) != SQLITE_OK) {
            snprintf(msg, cap, "cannot write %s: %s", path, sqlite3_errmsg(s->db));
            sq_close(s, 0);
            return -1;
        }
    }
    r->sqlite = s;
    if (gma_replay_consumer_add(r, &sqlite_consumer) != 0) {
        r->sqlite = NULL;
        sq_close(s, 0);
        snprintf(msg, cap, "cannot write %s: too many exports at once", path);
        return -1;
    }
    return 0;
}

static void meta(gma_sqlite *s, const char *key, const char *text, int64_t num)
{
    sqlite3_stmt *st = NULL;
    if (s->failed || sqlite3_prepare_v2(s->db, "INSERT INTO meta VALUES(?,?)", -1, &st, NULL) != SQLITE_OK) {
        sq_fail(s, "writing meta");
        return;
    }
    sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
    if (text)
        sqlite3_bind_text(st, 2, text, -1, SQLITE_TRANSIENT);
    else
        sqlite3_bind_int64(st, 2, num);
    if (sqlite3_step(st) != SQLITE_DONE)
        sq_fail(s, "writing meta");
    sqlite3_finalize(st);
}

int gma_sqlite_finish(gma_replay *r, char *msg, size_t cap)
{
    gma_sqlite *s = r->sqlite;
    if (!s)
        return 0;
    /* the allocations still live at the end */
    for (size_t i = 0; i < r->entries.len && !s->failed; i++) {
        const gma_entry *e = &GMA_VEC_AT(&r->entries, gma_entry, i);
        if ((e->flags & (GMA_E_INUSE | GMA_E_LIVE)) == (GMA_E_INUSE | GMA_E_LIVE))
            alloc_row(r, e, 0, "live at end");
    }
    /* rows whose kernel never came, in the order they ended */
    for (size_t i = 0; i < s->defer.len && !s->failed; i++) {
        sq_defer *d = &GMA_VEC_AT(&s->defer, sq_defer, i);
        if (d->state && !s->failed) {
            uint32_t head;
            if (gma_map_del(&s->defer_of, d->key, &head))
                defer_flush(r, head, GMA_NAME_UNATTR);
        }
    }
    sqlite3_stmt *st = NULL;
    if (!s->failed &&
        sqlite3_prepare_v2(s->db, "INSERT INTO summary VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)", -1, &st, NULL) !=
            SQLITE_OK)
        sq_fail(s, "writing the summary");
    for (size_t d = 0; d < GMA_MAX_DEVICES && st && !s->failed; d++) {
        const gma_dev *D = &r->dev[d];
        if (!D->present || !gma_dev_selected(r, d))
            continue;
        bind_u(st, 1, d);
        bind_u(st, 2, D->has_peak ? D->peak : 0);
        if (D->has_peak) {
            bind_i(st, 3, gma_rel(r, D->peak_ts));
            bind_u(st, 4, D->peak_step);
            bind_u(st, 5, D->peak_window);
        } else {
            sqlite3_bind_null(st, 3);
            sqlite3_bind_null(st, 4);
            sqlite3_bind_null(st, 5);
        }
        bind_u(st, 6, D->baseline_bytes);
        bind_u(st, 7, D->baseline_count);
        bind_u(st, 8, D->alloc_bytes);
        bind_u(st, 9, D->alloc_count);
        bind_u(st, 10, D->free_bytes);
        bind_u(st, 11, D->free_count);
        bind_u(st, 12, D->leaked_bytes);
        bind_u(st, 13, D->leaked_count);
        bind_u(st, 14, D->kernels);
        bind_u(st, 15, D->kernel_ns);
        bind_u(st, 16, D->max_used);
        bind_u(st, 17, D->total_mem);
        if (sqlite3_step(st) != SQLITE_DONE)
            sq_fail(s, "writing the summary");
        sqlite3_reset(st);
    }
    sqlite3_finalize(st);
    meta(s, "trace", r->path ? r->path : "", 0);
    meta(s, "format", "gmemprof sqlite 1", 0);
    meta(s, "layer", r->fw ? "blocks" : "segments", 0);
    meta(s, "origin_ns", NULL, (int64_t)r->origin);
    if (!s->failed)
        sq_exec(s, "COMMIT");
    if (!s->failed)
        sq_exec(s, "CREATE INDEX allocations_step ON allocations(step);"
                   "CREATE INDEX allocations_kernel ON allocations(kernel_id);"
                   "CREATE INDEX allocations_range ON allocations(range_id)");
    int ok = !s->failed;
    if (ok) {
        for (int k = 0; k < S_COUNT_; k++) {
            sqlite3_finalize(s->st[k]);
            s->st[k] = NULL;
        }
        if (sqlite3_close(s->db) != SQLITE_OK) {
            ok = 0;
            snprintf(s->msg, sizeof s->msg, "closing: %s", sqlite3_errmsg(s->db));
        }
        s->db = NULL;
    }
    if (ok && rename(s->tmp, s->path) != 0) {
        ok = 0;
        snprintf(s->msg, sizeof s->msg, "renaming into place: %s", strerror(errno));
    }
    if (!ok)
        snprintf(msg, cap, "writing %s failed: %s", s->path, s->msg);
    else
        snprintf(msg, cap, "wrote %s (SQLite, %llu rows)", s->path, (unsigned long long)s->rows);
    sq_close(s, ok);
    r->sqlite = NULL;
    gma_replay_consumer_remove(r, &sqlite_consumer);
    return ok ? 0 : -1;
}

#else /* no SQLite at build time */

int gma_sqlite_open(gma_replay *r, const char *path, char *msg, size_t cap)
{
    (void)r;
    snprintf(msg, cap,
             "--sqlite %s: this gmem-analyze was built without SQLite; install its headers (Debian/Ubuntu: "
             "apt-get install libsqlite3-dev; Fedora: dnf install sqlite-devel) and build again",
             path);
    return -1;
}

int gma_sqlite_finish(gma_replay *r, char *msg, size_t cap)
{
    (void)r;
    if (cap)
        msg[0] = 0;
    return 0;
}

#endif
