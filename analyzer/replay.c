/*
 * The replay: one streaming pass over a trace that keeps the live set
 * (keyed by device and address), the peak per device, per-window, per-step,
 * per-kernel, per-range and per-stream accounting, leaks at window ends and
 * the attribution of allocations to kernels (docs/attribution.md).
 *
 * Attribution joins an alloc/free (tid, seq) with the kernel (tid, seq + 1).
 * Either may come first in the trace, so:
 *   - every kernel is remembered in a per-thread ring indexed by seq, and an
 *     alloc looks its kernel up there;
 *   - an alloc whose kernel has not come yet joins a "slot" (one per awaited
 *     kernel) that accumulates its bytes and links the waiting entries; the
 *     kernel, when it comes, settles the slot in O(1 + waiting entries);
 *   - slots are bounded (GMA_PENDING_MAX, and given up once the thread has
 *     launched GMA_PENDING_HORIZON more kernels); what is never settled goes
 *     to "(unattributed)".
 * No per-record allocation: pools and maps grow geometrically and are reused.
 */
#include <errno.h>
#include <string.h>
#include <stdlib.h>

#include "consumer.h"
#include "gma.h"
#include "names.h"
#include "oom.h"

const char *const gma_by_names[GMA_BY_COUNT_] = { "kernel", "range", "alloc", "step", "tag", "stream", "device" };
const char *const gma_sort_names[GMA_SORT_COUNT_] = { "mem", "peak", "alloc", "count", "time", "name" };

/* An event to the registered consumers: with none, the loop's test is the
 * one (predictable) branch the event costs. */
#define PUBLISH(r, ev, ...)                                         \
    do {                                                            \
        for (unsigned ci_ = 0; ci_ < (r)->ncons; ci_++)             \
            if ((r)->cons[ci_]->ev)                                 \
                (r)->cons[ci_]->ev((r), __VA_ARGS__);               \
    } while (0)

/* Whether a registered consumer takes marks: their test of the selection
 * has an effect of its own (win_of may open a window), so it runs only
 * then. */
static int consumers_take_marks(const gma_replay *r)
{
    for (unsigned i = 0; i < r->ncons; i++)
        if (r->cons[i]->mark)
            return 1;
    return 0;
}

int gma_replay_consumer_add(gma_replay *r, const gma_consumer *c)
{
    for (unsigned i = 0; i < r->ncons; i++)
        if (r->cons[i] == c)
            return 0;
    if (r->ncons >= GMA_MAX_CONSUMERS)
        return -1;
    r->cons[r->ncons++] = c;
    r->cons_needs |= c->needs;
    return 0;
}

void gma_replay_consumer_remove(gma_replay *r, const gma_consumer *c)
{
    unsigned n = 0;
    r->cons_needs = 0;
    for (unsigned i = 0; i < r->ncons; i++)
        if (r->cons[i] != c) {
            r->cons[n++] = r->cons[i];
            r->cons_needs |= r->cons[i]->needs;
        }
    r->ncons = n;
}

#define KEY40 ((1ull << 40) - 1)
#define NO_WIN UINT32_MAX /* (uint32_t) of win_of's -1 */
#define NAME_UNNAMED 0xFFFFFFFDu /* a kernel record without a name */
#define KROW_NONE 0xFFFFFFFFu    /* krow_hit_name when krow_hit is not valid: no name is it */

/* A kernel record's name as the tables key it: its string id, or
 * NAME_UNNAMED for 0 and ids past GMA_MAX_STRING_ID (one unsigned compare:
 * 0 wraps to the top). */
static inline uint32_t kernel_name(uint64_t id)
{
    return id - 1 < GMA_MAX_STRING_ID - 1 ? (uint32_t)id : NAME_UNNAMED;
}
#define GMA_READ_BATCH 64

static void oom(gma_replay *r) { r->err = GMT_E_NOMEM; }

/* ---- strings ------------------------------------------------------------ */

static int grow_u32(uint32_t **a, uint32_t **b, size_t *cap, size_t need)
{
    if (need <= *cap)
        return 0;
    size_t nc = *cap ? *cap : 1024;
    while (nc < need)
        nc *= 2;
    uint32_t *na = realloc(*a, nc * sizeof(uint32_t));
    if (!na)
        return -1;
    memset(na + *cap, 0, (nc - *cap) * sizeof(uint32_t));
    *a = na;
    if (b) {
        uint32_t *nb = realloc(*b, nc * sizeof(uint32_t));
        if (!nb)
            return -1;
        memset(nb + *cap, 0, (nc - *cap) * sizeof(uint32_t));
        *b = nb;
    }
    *cap = nc;
    return 0;
}

static void str_set(gma_replay *r, uint64_t id, const gmt_bytes *s)
{
    if (id == 0 || id >= GMA_MAX_STRING_ID) {
        r->bad_strings++;
        return;
    }
    if (grow_u32(&r->str_off, &r->str_len, &r->str_cap, (size_t)id + 1) != 0) {
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

static uint32_t keep_bytes(gma_replay *r, const gmt_bytes *b)
{
    size_t off = gma_strs_add(&r->strs, b->ptr, b->len);
    if (off == (size_t)-1) {
        oom(r);
        return 0;
    }
    return (uint32_t)off;
}

void gma_kernel_display(const gma_replay *r, uint32_t name, int full, gma_buf *out)
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
    const char *s = gma_str(r, name, &len);
    if (!len) {
        gma_buf_printf(out, "(string %u)", name);
        return;
    }
    if (full)
        gma_name_full(s, len, out);
    else
        gma_name_short(s, len, 60, out);
}

void gma_range_display(const gma_replay *r, uint32_t name, int full, gma_buf *out)
{
    if (name == GMA_NAME_UNATTR || name == GMA_NAME_BASELINE || name == NAME_UNNAMED) {
        gma_kernel_display(r, name, full, out);
        return;
    }
    size_t len;
    const char *s = gma_str(r, name, &len);
    if (!len) {
        gma_buf_printf(out, "(string %u)", name);
        return;
    }
    len = gma_nvtx_base_len(s, len);
    if (full || len <= 60) {
        gma_buf_putn(out, s, len);
    } else {
        gma_buf_putn(out, s, 28);
        gma_buf_puts(out, "...");
        gma_buf_putn(out, s + len - 29, 29);
    }
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

static int is_host_mem(uint64_t kind, uint64_t source)
{
    return kind == GMT_MEMKIND_PINNED || kind == GMT_MEMKIND_PAGEABLE || source == GMT_SRC_PINNED_HOST;
}

/* ---- devices and time ----------------------------------------------------- */

static gma_dev *dev_get_slow(gma_replay *r, uint64_t d)
{
    if (d >= GMA_MAX_DEVICES) {
        r->bad_device++;
        return NULL;
    }
    gma_dev *D = &r->dev[d];
    if (!D->present) {
        D->present = 1;
        PUBLISH(r, device, d);
    }
    r->last_dev = d;
    return D;
}

/* The device of a record, NULL past GMA_MAX_DEVICES. The last one's id is
 * kept (not its address: the rows are inside the replay, which its owner
 * may move between records): one compare instead of the range test and the
 * present flag. */
static inline gma_dev *dev_get(gma_replay *r, uint64_t d)
{
    if (d == r->last_dev)
        return &r->dev[d];
    return dev_get_slow(r, d);
}

/* The first time seen, out of line: first_ts starts at UINT64_MAX, so that
 * the hot path below is two compares and no has_ts test. */
static __attribute__((noinline)) void note_first(gma_replay *r, uint64_t ts)
{
    if (!r->has_ts) {
        r->has_ts = 1;
        if (!r->has_origin) {
            r->origin = ts;
            r->has_origin = 1;
        }
    }
    r->first_ts = ts;
}

static inline void note_ts(gma_replay *r, uint64_t ts)
{
    /* <=: a time of UINT64_MAX still counts as seen */
    if (__builtin_expect(ts <= r->first_ts, 0))
        note_first(r, ts);
    if (ts > r->last_ts)
        r->last_ts = ts;
}

/* note_ts(a) then note_ts(b), as a kernel's start and end: one test each
 * way on their min and max. */
static inline void note_ts2(gma_replay *r, uint64_t a, uint64_t b)
{
    uint64_t lo = a < b ? a : b, hi = a < b ? b : a;
    if (__builtin_expect(lo <= r->first_ts, 0)) {
        note_ts(r, a);
        note_ts(r, b);
        return;
    }
    if (hi > r->last_ts)
        r->last_ts = hi;
}

static void sample_update(gma_dev *D, uint64_t ts, uint64_t used, uint64_t total)
{
    D->has_sample = 1;
    D->sample_ts = ts;
    D->sample_used = used;
    if (used > D->max_used)
        D->max_used = used;
    if (total)
        D->driver_total = total;
    if (D->has_peak) {
        uint64_t dn = ts > D->peak_ts ? ts - D->peak_ts : D->peak_ts - ts;
        uint64_t db = D->best_ts > D->peak_ts ? D->best_ts - D->peak_ts : D->peak_ts - D->best_ts;
        if (!D->has_best || dn < db) {
            D->has_best = 1;
            D->best_ts = ts;
            D->best_used = used;
        }
    }
}

/* ---- entries ------------------------------------------------------------ */

#define ENT(r, i) (&GMA_VEC_AT(&(r)->entries, gma_entry, (i)))
#define SLOT(r, i) (&GMA_VEC_AT(&(r)->slots, gma_slot, (i)))

static uint32_t entry_new(gma_replay *r)
{
    if (r->free_entry) {
        uint32_t i = r->free_entry - 1;
        gma_entry *e = ENT(r, i);
        r->free_entry = e->next;
        e->flags = 0; /* on_alloc sets every field: no memset on the hot path */
        /* The pool outgrows the L1 cache: start loading the entry the next
         * allocation will take (and write) while this one is filled. */
        if (r->free_entry)
            __builtin_prefetch(ENT(r, r->free_entry - 1), 1);
        return i;
    }
    if (r->entries.len >= UINT32_MAX - 2 || !gma_vec_push(&r->entries)) {
        oom(r);
        return UINT32_MAX;
    }
    return (uint32_t)(r->entries.len - 1);
}

static void entry_unlink(gma_replay *r, gma_entry *e)
{
    if (!e->slot)
        return;
    if (e->prev)
        ENT(r, e->prev - 1)->next = e->next;
    else
        SLOT(r, e->slot - 1)->head = e->next;
    if (e->next)
        ENT(r, e->next - 1)->prev = e->prev;
    e->slot = e->prev = e->next = 0;
}

/* Returns the entry to the pool once nothing needs it any more. Inline: once
 * per free (entry_dead), mostly a flag test. */
static inline __attribute__((always_inline)) void entry_maybe_release(gma_replay *r, uint32_t i)
{
    gma_entry *e = ENT(r, i);
    if (e->flags & (GMA_E_LIVE | GMA_E_KEEP_PEAK | GMA_E_KEEP_ROW | GMA_E_LEAKED))
        return;
    entry_unlink(r, e);
    e->flags = 0;
    e->next = r->free_entry;
    r->free_entry = i + 1;
}

static inline uint64_t live_key(uint64_t dev, uint64_t addr) { return addr ^ (dev << 58); }

/* ---- kernel rows ------------------------------------------------------------ */

#define KROW(r, i) (&GMA_VEC_AT(&(r)->krows, gma_krow, (i)))
#define RROW(r, i) (&GMA_VEC_AT(&(r)->rrows, gma_rrow, (i)))

/* Row of a name in a (krows or rrows) table, created on first use (the
 * caller names it then: *created); row 0 is "(unattributed)". Unnamed
 * kernels (NAME_UNNAMED) use slot 0 of the lookup array, which no string
 * id can take. */
static uint32_t row_for(gma_replay *r, gma_vec *rows, uint32_t **of, size_t *cap, uint32_t name, int *created)
{
    *created = 0;
    if (name == GMA_NAME_UNATTR)
        return 0;
    size_t key = name == NAME_UNNAMED ? 0 : name;
    if (key >= GMA_MAX_STRING_ID)
        return 0;
    if (key >= *cap && grow_u32(of, NULL, cap, key + 1) != 0) {
        oom(r);
        return 0;
    }
    if ((*of)[key])
        return (*of)[key] - 1;
    if (!gma_vec_push(rows)) {
        oom(r);
        return 0;
    }
    uint32_t idx = (uint32_t)(rows->len - 1);
    (*of)[key] = idx + 1;
    *created = 1;
    return idx;
}

static inline uint32_t krow_for(gma_replay *r, uint32_t name)
{
    /* the common case, inline; id 0 is "(unattributed)", row 0, while slot 0
     * of the lookup array belongs to unnamed kernels */
    if (name && name < r->krow_cap && r->krow_of[name])
        return r->krow_of[name] - 1;
    int created;
    uint32_t i = row_for(r, &r->krows, &r->krow_of, &r->krow_cap, name, &created);
    if (created) {
        r->krow_hit_name = KROW_NONE; /* the rows may have moved */
        KROW(r, i)->name = name;
    }
    return i;
}

/* The row of a name by address. The last one is kept: an allocation's
 * kernel is mostly the kernel record's or the allocation's before it. */
static inline gma_krow *krow_get(gma_replay *r, uint32_t name)
{
    if (r->krow_hit_name == name)
        return r->krow_hit;
    uint32_t i = krow_for(r, name);
    r->krow_hit = KROW(r, i);
    r->krow_hit_name = name;
    return r->krow_hit;
}
static inline uint32_t rrow_for(gma_replay *r, uint32_t name)
{
    int created;
    uint32_t i = row_for(r, &r->rrows, &r->rrow_of, &r->rrow_cap, name, &created);
    if (created)
        RROW(r, i)->name = name;
    return i;
}

/* ---- threads and slots -------------------------------------------------------- */

static uint32_t thread_idx_slow(gma_replay *r, uint64_t tid)
{
    uint32_t t;
    if (!gma_map_get(&r->thread_of, tid, &t)) {
        gma_thread *th = gma_vec_push(&r->threads);
        if (!th) {
            oom(r);
            return UINT32_MAX;
        }
        r->last_th = NULL; /* the threads may have moved */
        th->tid = tid;
        th->ring = calloc(GMA_KRING, sizeof(*th->ring));
        t = (uint32_t)(r->threads.len - 1);
        if (!th->ring || gma_map_put(&r->thread_of, tid, t) != 0) {
            oom(r);
            return UINT32_MAX;
        }
    }
    r->last_tid = tid;
    r->last_thread = t;
    r->last_th = &GMA_VEC_AT(&r->threads, gma_thread, t);
    return t;
}

#define THR(r, i) (&GMA_VEC_AT(&(r)->threads, gma_thread, (i)))

/* The thread of tid and its index (*t), NULL when it cannot be had (out of
 * memory). The last one by address: no multiply by its size per event. */
static inline gma_thread *thread_get(gma_replay *r, uint64_t tid, uint32_t *t)
{
    if (r->last_th && r->last_tid == tid) {
        *t = r->last_thread;
        return r->last_th;
    }
    *t = thread_idx_slow(r, tid);
    return *t == UINT32_MAX ? NULL : r->last_th;
}

static void peaks_settle(gma_replay *r, uint64_t key, uint32_t name)
{
    for (unsigned d = 0; r->peaks_pending && d < GMA_MAX_DEVICES; d++) {
        gma_dev *D = &r->dev[d];
        if (D->present && D->has_peak && D->peak_state == GMA_PEAK_PENDING && D->peak_key == key) {
            D->peak_state = name == GMA_NAME_UNATTR ? GMA_PEAK_UNATTR : GMA_PEAK_KERNEL;
            D->peak_kname = name;
            r->peaks_pending--;
        }
    }
}

/* A slot learns its kernel (or that it never comes: name 0). Inline: on_kernel
 * settles one slot per kernel that allocations waited for. */
static inline __attribute__((always_inline)) void slot_settle(gma_replay *r, uint32_t si, uint32_t name)
{
    gma_slot *s = SLOT(r, si);
    uint32_t kr = krow_for(r, name);
    s = SLOT(r, si);
    gma_krow *k = KROW(r, kr);
    k->alloc_bytes += s->alloc_bytes;
    k->free_bytes += s->free_bytes;
    k->alloc_count += s->alloc_count;
    k->free_count += s->free_count;
    if (s->peak > k->peak)
        k->peak = s->peak;
    for (uint32_t e = s->head; e;) {
        gma_entry *en = ENT(r, e - 1);
        uint32_t nx = en->next;
        en->kname = name;
        en->slot = en->prev = en->next = 0;
        e = nx;
    }
    peaks_settle(r, s->key, name);
    PUBLISH(r, settle, s->key, name);
    gma_thread *th = THR(r, (uint32_t)(s->key >> 40));
    if (th->cslot == si + 1)
        th->cslot = 0;
    else
        gma_map_del(&r->slot_of, s->key, NULL);
    s->used = 0;
    s->head = 0;
    s->gen++;
    s->next_free = r->free_slot;
    r->free_slot = si + 1;
    r->pending--;
}

static void fifo_push(gma_replay *r, uint64_t item)
{
    if (r->fifo_len == r->fifo_cap) {
        size_t nc = r->fifo_cap ? r->fifo_cap * 2 : 1024;
        uint64_t *nf = malloc(nc * sizeof(*nf));
        if (!nf) {
            oom(r);
            return;
        }
        for (size_t i = 0; i < r->fifo_len; i++)
            nf[i] = r->fifo[(r->fifo_head + i) % r->fifo_cap];
        free(r->fifo);
        r->fifo = nf;
        r->fifo_cap = nc;
        r->fifo_head = 0;
    }
    /* fifo_cap is a power of two (1024, doubled): a mask, not a division,
     * on the path of every new wait. */
    r->fifo[(r->fifo_head + r->fifo_len) & (r->fifo_cap - 1)] = item;
    r->fifo_len++;
}

/* Drops stale FIFO items and gives up waits that are too old or too many. */
static void fifo_trim(gma_replay *r)
{
    while (r->fifo_len) {
        uint64_t item = r->fifo[r->fifo_head];
        uint32_t si = (uint32_t)(item >> 32), gen = (uint32_t)item;
        gma_slot *s = SLOT(r, si);
        if (s->used && s->gen == gen) {
            gma_thread *th = THR(r, (uint32_t)(s->key >> 40));
            uint64_t seq = s->key & KEY40;
            int too_many = r->fifo_len > GMA_PENDING_MAX;
            int too_old = th->max_seq > seq + GMA_PENDING_HORIZON;
            if (!too_many && !too_old)
                return;
            r->pending_evicted++;
            slot_settle(r, si, GMA_NAME_UNATTR);
        }
        r->fifo_head = (r->fifo_head + 1) & (r->fifo_cap - 1);
        r->fifo_len--;
    }
}

/* The slot waiting for `key` on thread t, UINT32_MAX when none. The
 * thread's newest wait is found without hashing: allocations come in runs
 * before the kernel that consumes them. */
static inline uint32_t slot_find(const gma_replay *r, const gma_thread *th, uint64_t key)
{
    uint32_t si;
    if (th->cslot && th->ckey == key)
        return th->cslot - 1;
    if (r->slot_of.count && gma_map_get(&r->slot_of, key, &si))
        return si;
    return UINT32_MAX;
}

/* The attribution of one alloc or free: a settled kernel name, or a slot. */
typedef struct attr {
    uint32_t name;  /* GMA_NAME_UNATTR or a kernel name when settled */
    uint32_t slot;  /* slot + 1 while waiting */
    uint64_t key;
} attr;

/* The kernel that settles a new wait for a->key, when it is ahead in the
 * batch [la, lend) and taking its name now is exactly what the wait would
 * come to: it is the first kernel of the thread with that key (kernel_record
 * settles the wait there, so its device must pass dev_get), the records
 * before it make no wait of their own (each other alloc or free has the
 * same thread and seq, so it would join this wait, or no thread at all), so
 * nothing trims the FIFO in between, and its name has a kernel row already
 * (the settle would create it there, and row order shows in ties). Returns
 * the kernel record, or NULL: wait in a slot. */
static inline const gmt_hot *kernel_ahead(const gma_replay *r, const gmt_mem *m, uint64_t key, const gmt_hot *la,
                                   const gmt_hot *lend)
{
    for (const gmt_hot *h = la; h < lend; h++) {
        if (h->type == GMT_REC_KERNEL) {
            const gmt_kernel *k = &h->u.kernel;
            if (k->tid != m->tid || (k->seq & KEY40) != (key & KEY40))
                continue;
            uint32_t name = kernel_name(k->name);
            if (k->device >= GMA_MAX_DEVICES || name >= r->krow_cap || !r->krow_of[name])
                return NULL;
            return h;
        }
        if (h->type != GMT_REC_ALLOC && h->type != GMT_REC_FREE)
            continue;
        const gmt_mem *o = &h->u.mem;
        if (o->tid == 0 || (o->flags & GMT_MEMF_NO_THREAD) ||
            (h->type == GMT_REC_ALLOC && (o->flags & GMT_MEMF_BASELINE)))
            continue;
        if (o->tid != m->tid || o->seq != m->seq)
            return NULL;
    }
    return NULL;
}

/* The wait for a->key when it is not the thread's newest: one in the map,
 * the kernel ahead in the batch (kernel_ahead), or a new slot. Out of line:
 * attribute() keeps the common case short. */
static __attribute__((noinline)) void slot_get(gma_replay *r, uint32_t t, attr *a, const gmt_mem *m,
                                               const gmt_hot *la, const gmt_hot *lend)
{
    uint32_t si;
    uint64_t key = a->key;
    /* attribute() checked the thread's newest wait already */
    if (r->slot_of.count && gma_map_get(&r->slot_of, key, &si)) {
        a->slot = si + 1;
        return;
    }
    /* Give up old waits first, so the slot made here lives through this
     * record. */
    fifo_trim(r);
    const gmt_hot *k = kernel_ahead(r, m, key, la, lend);
    if (k) {
        /* No slot: the name now. The FIFO still gets an item, one that is
         * always stale (slot 0 is never used), where the slot's would be:
         * the item of a settled slot is stale too, and the FIFO's length
         * decides which waits are given up (GMA_PENDING_MAX). */
        fifo_push(r, 0);
        a->name = kernel_name(k->u.kernel.name);
        r->dkey = key;
        r->dname = a->name;
        r->dk = (uintptr_t)k;
        return;
    }
    if (r->free_slot) {
        si = r->free_slot - 1;
        r->free_slot = SLOT(r, si)->next_free;
    } else {
        if (!gma_vec_push(&r->slots)) {
            oom(r);
            return;
        }
        si = (uint32_t)(r->slots.len - 1);
    }
    gma_slot *s = SLOT(r, si);
    uint32_t gen = s->gen;
    /* every field but gen */
    s->key = key;
    s->alloc_bytes = s->free_bytes = s->alloc_count = s->free_count = s->peak = 0;
    s->head = 0;
    s->next_free = 0;
    s->used = 1;
    /* The thread's previous newest wait moves to the map. */
    gma_thread *th = THR(r, t);
    if (th->cslot && gma_map_put(&r->slot_of, th->ckey, th->cslot - 1) != 0) {
        oom(r);
        return;
    }
    th->cslot = si + 1;
    th->ckey = key;
    r->pending++;
    fifo_push(r, ((uint64_t)si << 32) | gen);
    a->slot = si + 1;
}

/* Inline in on_alloc and on_free, which both run it per event: out of line,
 * its call and the attr returned through registers and back cost a fifth of
 * it. The ring hit and the thread's newest wait are the common cases. */
static inline __attribute__((always_inline)) attr attribute(gma_replay *r, const gmt_mem *m, const gmt_hot *la,
                                                            const gmt_hot *lend)
{
    attr a = { GMA_NAME_UNATTR, 0, 0 };
    if (m->tid == 0 || (m->flags & GMT_MEMF_NO_THREAD))
        return a;
    uint32_t t;
    gma_thread *th = thread_get(r, m->tid, &t);
    if (!th)
        return a;
    uint64_t target = m->seq + 1;
    /* The ring holds the kernel only when one with that seq was seen, and
     * then max_seq >= target: mostly the kernel comes after its allocations
     * and the ring's line (64 KiB a thread, L1-cold) is not loaded. */
    struct gma_kslot *ks = &th->ring[target % GMA_KRING];
    if (target <= th->max_seq && ks->seq == target) {
        a.name = ks->name;
        return a;
    }
    a.key = ((uint64_t)t << 40) | (target & KEY40);
    if (th->cslot && th->ckey == a.key) {
        a.slot = th->cslot;
        return a;
    }
    if (la) {
        /* the kernel ahead in this batch that an earlier record found */
        if (r->dkey == a.key && r->dk >= (uintptr_t)la) {
            a.name = r->dname;
            return a;
        }
        /* slot_get's kernel_ahead case inline when the FIFO is empty or
         * holds one always-stale item: slot_get's trim would drop that item
         * and push another, which leaves the FIFO as it is. */
        if (!r->slot_of.count &&
            (r->fifo_len ? r->fifo_len == 1 && r->fifo[r->fifo_head] == 0 : r->fifo_cap != 0)) {
            const gmt_hot *k = kernel_ahead(r, m, a.key, la, lend);
            if (k) {
                if (!r->fifo_len) {
                    r->fifo[r->fifo_head] = 0;
                    r->fifo_len = 1;
                }
                a.name = kernel_name(k->u.kernel.name);
                r->dkey = a.key;
                r->dname = a.name;
                r->dk = (uintptr_t)k;
                return a;
            }
        }
    }
    slot_get(r, t, &a, m, la, lend);
    return a;
}

/* Adds an accounted alloc (sign > 0) or free to its kernel. Inline: once per
 * accounted event, and out of line it was a call for two adds and a max. */
static inline __attribute__((always_inline)) void attr_account(gma_replay *r, const attr *a, uint64_t bytes, int is_alloc,
                                                                 uint64_t live_after)
{
    if (a->slot) {
        gma_slot *s = SLOT(r, a->slot - 1);
        if (is_alloc) {
            s->alloc_bytes += bytes;
            s->alloc_count++;
            if (live_after > s->peak)
                s->peak = live_after;
        } else {
            s->free_bytes += bytes;
            s->free_count++;
        }
        return;
    }
    gma_krow *k = krow_get(r, a->name);
    if (is_alloc) {
        k->alloc_bytes += bytes;
        k->alloc_count++;
        if (live_after > k->peak)
            k->peak = live_after;
    } else {
        k->free_bytes += bytes;
        k->free_count++;
    }
}

/* ---- ranges ------------------------------------------------------------------ */

#define RINST(r, i) (&GMA_VEC_AT(&(r)->rinsts, gma_rinst, (i)))

/* The representative string id of a range name's operation (names.c:
 * gma_nvtx_base_len), so that "aten::mm, seq = 9, op_id = 55" and
 * "aten::mm, seq = 12, op_id = 80" share one row, as torch.profiler does. */
static uint32_t range_canon(gma_replay *r, uint32_t name)
{
    if (name == NAME_UNNAMED || name == 0 || name >= GMA_MAX_STRING_ID)
        return name;
    if (name < r->rcanon_cap && r->rcanon[name])
        return r->rcanon[name];
    size_t len;
    const char *s = gma_str(r, name, &len);
    size_t bl = gma_nvtx_base_len(s, len);
    uint64_t h = 0xcbf29ce484222325ull; /* FNV-1a of the base name */
    for (size_t i = 0; i < bl; i++)
        h = (h ^ (unsigned char)s[i]) * 0x100000001b3ull;
    uint32_t repr;
    if (!gma_map_get(&r->rcanon_of, h, &repr)) {
        repr = name;
        if (gma_map_put(&r->rcanon_of, h, repr) != 0) {
            oom(r);
            return name;
        }
    }
    if (name >= r->rcanon_cap && grow_u32(&r->rcanon, NULL, &r->rcanon_cap, (size_t)name + 1) != 0) {
        oom(r);
        return repr;
    }
    r->rcanon[name] = repr;
    return repr;
}

static const gma_rinst *rinst_find(const gma_replay *r, uint64_t id)
{
    uint32_t i;
    if (gma_map_get(&r->rinst_of, id, &i))
        return RINST(r, i);
    const gma_rinst *c = &r->rring[id % GMA_RRING];
    return c->id == id ? c : NULL;
}

/* Fills r->chain with the rows of range `id` and its ancestors (each name
 * once, so recursion is not counted twice). Returns the name of `id`, or
 * GMA_NAME_UNATTR when the instance is not known. */
static uint32_t range_chain(gma_replay *r, uint64_t id, int rows)
{
    if (r->chain_valid && r->chain_id == id && (!rows || r->chain_len))
        return r->chain_name;
    const gma_rinst *in = rinst_find(r, id);
    if (!in)
        return GMA_NAME_UNATTR;
    uint32_t name = in->canon;
    r->chain_id = id;
    r->chain_name = name;
    r->chain_len = 0;
    r->chain_valid = 1;
    r->chain_hit = name != GMA_NAME_UNATTR && r->opt.by != GMA_BY_RANGE ? id : 0;
    if (!rows)
        return name;
    for (unsigned depth = 0; in && depth < 64 && r->chain_len < GMA_CHAIN_MAX; depth++) {
        uint32_t row = rrow_for(r, in->canon);
        int seen = 0;
        for (uint32_t k = 0; k < r->chain_len; k++)
            seen |= r->chain[k] == row;
        if (!seen)
            r->chain[r->chain_len++] = row;
        if (!in->parent || in->parent == in->id)
            break;
        in = rinst_find(r, in->parent);
    }
    return name;
}

static uint32_t range_account(gma_replay *r, uint64_t range, uint64_t bytes, int is_alloc, uint64_t live_after,
                              int acc)
{
    if (!range) {
        if (acc && r->opt.by == GMA_BY_RANGE) {
            gma_rrow *rr = RROW(r, 0);
            if (is_alloc) {
                rr->self_alloc += bytes;
                rr->self_alloc_count++;
                rr->tot_alloc += bytes;
                if (live_after > rr->peak)
                    rr->peak = live_after;
            } else {
                rr->self_free += bytes;
                rr->self_free_count++;
                rr->tot_free += bytes;
            }
        }
        return GMA_NAME_UNATTR;
    }
    int rows = acc && r->opt.by == GMA_BY_RANGE;
    uint32_t name = range_chain(r, range, rows);
    if (name == GMA_NAME_UNATTR) {
        if (acc)
            r->unknown_ranges++;
        return range_account(r, 0, bytes, is_alloc, live_after, acc);
    }
    if (!rows)
        return name;
    for (uint32_t k = 0; k < r->chain_len; k++) {
        gma_rrow *rr = RROW(r, r->chain[k]);
        if (k == 0) {
            if (is_alloc) {
                rr->self_alloc += bytes;
                rr->self_alloc_count++;
            } else {
                rr->self_free += bytes;
                rr->self_free_count++;
            }
        }
        if (is_alloc) {
            rr->tot_alloc += bytes;
            if (live_after > rr->peak)
                rr->peak = live_after;
        } else {
            rr->tot_free += bytes;
        }
    }
    return name;
}

/* range_account's common case inline: no range rows to add to (the default
 * tables) and the same range instance as the previous event (chain_hit:
 * the cached instance when that holds, else 0). */
static inline uint32_t range_of_event(gma_replay *r, uint64_t range, uint64_t bytes, int is_alloc, uint64_t live_after,
                                      int acc)
{
    if (range && range == r->chain_hit)
        return r->chain_name;
    return range_account(r, range, bytes, is_alloc, live_after, acc);
}

/* ---- steps and streams ------------------------------------------------------------ */

#define STEPROW(r, i) (&GMA_VEC_AT(&(r)->steps, gma_steprow, (i)))

static gma_steprow *step_row_slow(gma_replay *r, uint64_t step)
{
    uint32_t i;
    if (!gma_map_get(&r->step_of, step, &i)) {
        gma_steprow *s = gma_vec_push(&r->steps);
        if (!s) {
            oom(r);
            return NULL;
        }
        r->last_step_row = NULL; /* the rows may have moved */
        s->step = step;
        i = (uint32_t)(r->steps.len - 1);
        if (gma_map_put(&r->step_of, step, i) != 0) {
            oom(r);
            return NULL;
        }
    }
    r->last_step_key = step;
    r->last_step_row = STEPROW(r, i);
    return r->last_step_row;
}

static inline gma_steprow *step_row(gma_replay *r, uint64_t step)
{
    /* the row's address, not its index: no multiply by its size per event */
    if (r->last_step_row && r->last_step_key == step)
        return r->last_step_row;
    return step_row_slow(r, step);
}

static gma_streamrow *stream_row(gma_replay *r, uint64_t dev, uint64_t stream)
{
    uint64_t key = (dev << 48) ^ stream;
    uint32_t i;
    if (!gma_map_get(&r->stream_of, key, &i)) {
        gma_streamrow *s = gma_vec_push(&r->streams);
        if (!s) {
            oom(r);
            return NULL;
        }
        s->device = dev;
        s->stream = stream;
        i = (uint32_t)(r->streams.len - 1);
        if (gma_map_put(&r->stream_of, key, i) != 0) {
            oom(r);
            return NULL;
        }
    }
    return &GMA_VEC_AT(&r->streams, gma_streamrow, i);
}

/* ---- windows ------------------------------------------------------------------- */

#define WIN(r, i) (&GMA_VEC_AT(&(r)->windows, gma_window, (i)))

static int64_t window_open(gma_replay *r, uint64_t id, uint64_t ts, uint64_t step, int implicit)
{
    gma_window *w = gma_vec_push(&r->windows);
    if (!w) {
        oom(r);
        return -1;
    }
    w->id = id;
    w->begin_ts = ts;
    w->first_step = w->last_step = step;
    w->implicit = implicit;
    r->cur_win = (int64_t)(r->windows.len - 1);
    r->cur_begin = ts;
    r->cur_implicit = implicit;
    r->win_from = implicit ? 0 : ts;
    /* The per-device baseline of the summary is the first selected window's. */
    if (r->baseline_win < 0 && (r->opt.window < 0 || id == (uint64_t)r->opt.window))
        r->baseline_win = r->cur_win;
    return r->cur_win;
}

/* The window an event at ts belongs to, -1 outside every window. */
static int64_t win_of_slow(gma_replay *r, uint64_t ts)
{
    /* late records (kernels come after their window closed) */
    size_t n = r->windows.len;
    for (size_t k = 0; k < n && k < 8; k++) {
        size_t i = n - 1 - k;
        gma_window *w = WIN(r, i);
        if ((int64_t)i != r->cur_win && w->closed && ts >= w->begin_ts && ts <= w->end_ts)
            return (int64_t)i;
    }
    /* No window records at all (and no step says we are outside one): the
     * whole trace is one implicit window. */
    if (!r->window_records && r->cur_win < 0 && (!r->phase_seen || r->cur_phase == GMT_PHASE_ACTIVE))
        return window_open(r, 0, ts, r->has_cur_step ? r->cur_step : 0, 1);
    return -1;
}

static inline int64_t win_of(gma_replay *r, uint64_t ts)
{
    /* win_from: 0 in an implicit window, its begin in a recorded one,
     * UINT64_MAX outside (where no time is >= it but UINT64_MAX, which the
     * test below sends to win_of_slow too) */
    if (ts >= r->win_from && r->cur_win >= 0)
        return r->cur_win;
    return win_of_slow(r, ts);
}

static int win_selected(const gma_replay *r, int64_t w)
{
    return w >= 0 && (r->opt.window < 0 || WIN(r, w)->id == (uint64_t)r->opt.window);
}

static void window_close(gma_replay *r, uint64_t ts, uint64_t last_step, uint64_t reason, int have_end)
{
    if (r->cur_win < 0)
        return;
    uint32_t wi = (uint32_t)r->cur_win;
    gma_window *w = WIN(r, wi);
    w->end_ts = ts;
    w->last_step = last_step;
    w->reason = reason;
    w->closed = 1;
    w->no_end = !have_end;
    /* Leaks: made in this window, accounted, still live at its end. The
     * live map holds exactly the live entries: walk it, not the pool. */
    for (size_t b = 0; b < r->live.cap; b++) {
        if (!r->live.b[b].val)
            continue;
        gma_entry *e = ENT(r, r->live.b[b].val - 1);
        if ((e->flags & (GMA_E_INUSE | GMA_E_LIVE | GMA_E_ACCOUNTED | GMA_E_BASELINE)) !=
                (GMA_E_INUSE | GMA_E_LIVE | GMA_E_ACCOUNTED) ||
            e->window != wi || e->source == GMT_SRC_STATIC) /* module globals live as long as their module */
            continue;
        e->flags |= GMA_E_LEAKED | (have_end ? 0 : GMA_E_LEAK_AT_END);
        w = WIN(r, wi);
        w->leaked_bytes += e->bytes;
        w->leaked_count++;
        if (!(e->flags & GMA_E_HOST)) {
            r->dev[e->device].leaked_bytes += e->bytes;
            r->dev[e->device].leaked_count++;
        }
    }
    r->cur_win = -1;
    r->win_from = UINT64_MAX;
}

/* ---- the --by alloc rows -------------------------------------------------------- */

static uint64_t lifetime(const gma_replay *r, const gma_entry *e)
{
    uint64_t end = e->free_ts ? e->free_ts : r->last_ts;
    return end > e->ts ? end - e->ts : 0;
}

/* 1 when entry a ranks before entry b in the --by alloc table. */
static int arow_before(const gma_replay *r, const gma_entry *a, const gma_entry *b)
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
        uint64_t la = lifetime(r, a), lb = lifetime(r, b);
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
    return a->ord < b->ord; /* COUNT: chronological; the tiebreak for all */
}


int gma_arow_before(const gma_replay *r, uint32_t a, uint32_t b)
{
    return arow_before(r, ENT(r, a), ENT(r, b));
}

#define AROW(r, i) GMA_VEC_AT(&(r)->arows, uint32_t, (i))

/* The kept rows form a heap whose root is the row that ranks last. */
static void arow_sift_down(gma_replay *r, size_t i)
{
    size_t n = r->arows.len;
    for (;;) {
        size_t l = 2 * i + 1, w = i;
        if (l < n && arow_before(r, ENT(r, AROW(r, w)), ENT(r, AROW(r, l))))
            w = l;
        if (l + 1 < n && arow_before(r, ENT(r, AROW(r, w)), ENT(r, AROW(r, l + 1))))
            w = l + 1;
        if (w == i)
            return;
        uint32_t t = AROW(r, i);
        AROW(r, i) = AROW(r, w);
        AROW(r, w) = t;
        i = w;
    }
}

static void arow_offer(gma_replay *r, uint32_t ei)
{
    gma_entry *e = ENT(r, ei);
    if (e->flags & GMA_E_KEEP_ROW)
        return;
    uint64_t top = r->opt.top;
    if (!top || r->arows.len < top) {
        uint32_t *slot = gma_vec_push(&r->arows);
        if (!slot) {
            oom(r);
            return;
        }
        *slot = ei;
        ENT(r, ei)->flags |= GMA_E_KEEP_ROW;
        if (top) { /* sift up */
            size_t i = r->arows.len - 1;
            while (i) {
                size_t p = (i - 1) / 2;
                if (!arow_before(r, ENT(r, AROW(r, p)), ENT(r, AROW(r, i))))
                    break;
                uint32_t t = AROW(r, i);
                AROW(r, i) = AROW(r, p);
                AROW(r, p) = t;
                i = p;
            }
        }
        return;
    }
    uint32_t root = AROW(r, 0);
    if (!arow_before(r, e, ENT(r, root)))
        return;
    ENT(r, root)->flags &= (uint16_t)~GMA_E_KEEP_ROW;
    entry_maybe_release(r, root);
    AROW(r, 0) = ei;
    ENT(r, ei)->flags |= GMA_E_KEEP_ROW;
    arow_sift_down(r, 0);
}

/* ---- the peak ------------------------------------------------------------------ */

static void peak_set(gma_replay *r, gma_dev *D, uint64_t value, uint64_t ts, uint64_t step, uint64_t ord,
                     int64_t w, const attr *a, int baseline, uint32_t rname)
{
    /* Entries kept because they were live at the old peak are not needed. */
    uint32_t k = D->keep_head;
    D->keep_head = 0;
    while (k) {
        gma_entry *e = ENT(r, k - 1);
        uint32_t nx = e->keep_next;
        e->keep_next = 0;
        e->flags &= (uint16_t)~GMA_E_KEEP_PEAK;
        entry_maybe_release(r, k - 1);
        k = nx;
    }
    if (D->has_peak && D->peak_state == GMA_PEAK_PENDING)
        r->peaks_pending--;
    D->has_peak = 1;
    D->peak = value;
    D->peak_ts = ts;
    D->peak_step = step;
    D->peak_ord = ord;
    D->peak_window = w >= 0 ? WIN(r, w)->id : 0;
    D->peak_rname = rname;
    if (baseline) {
        D->peak_state = GMA_PEAK_BASELINE;
        D->peak_kname = GMA_NAME_BASELINE;
    } else if (a->slot) {
        D->peak_state = GMA_PEAK_PENDING;
        D->peak_key = a->key;
        r->peaks_pending++;
        D->peak_kname = GMA_NAME_UNATTR;
    } else {
        D->peak_state = a->name == GMA_NAME_UNATTR ? GMA_PEAK_UNATTR : GMA_PEAK_KERNEL;
        D->peak_kname = a->name;
    }
    D->has_best = D->has_sample;
    D->best_ts = D->sample_ts;
    D->best_used = D->sample_used;
}

/* ---- the plain run ------------------------------------------------------------------ */

/* A run is plain when nothing is selected (--window, --step, --device), no
 * export is written and no per-stream, per-range or per-allocation rows are
 * kept: the default run. The read loop then replays with the handlers'
 * `plain` argument a constant 1, so that the tests below fold away instead
 * of running per event (a dozen per alloc); with plain 0 they are the
 * general tests. gma_replay_record always takes the general path. */
static int replay_plain(const gma_replay *r)
{
    return r->opt.window < 0 && r->opt.step < 0 && r->opt.device < 0 && r->opt.by != GMA_BY_STREAM &&
           r->opt.by != GMA_BY_RANGE && r->opt.by != GMA_BY_ALLOC && !r->ncons;
}

static inline int p_dev(const gma_replay *r, int plain, uint64_t d) { return plain || gma_dev_selected(r, d); }
static inline int p_win(const gma_replay *r, int plain, int64_t w) { return plain ? w >= 0 : win_selected(r, w); }
static inline int p_step(const gma_replay *r, int plain, uint64_t step)
{
    return plain || r->opt.step < 0 || step == (uint64_t)r->opt.step;
}
/* only for the tables replay_plain excludes */
static inline int p_by(const gma_replay *r, int plain, gma_by by) { return !plain && r->opt.by == by; }

/* ---- memory records ---------------------------------------------------------------- */

/* An entry stops being live (freed, replaced, or dropped by a window begin).
 * Inline: on_free runs it once per free. */
static inline __attribute__((always_inline)) void entry_dead(gma_replay *r, uint32_t ei, uint64_t ts, int dropped, const int plain)
{
    gma_entry *e = ENT(r, ei);
    gma_dev *D = &r->dev[e->device];
    e->flags &= (uint16_t)~GMA_E_LIVE;
    e->free_ts = ts;
    if (dropped)
        e->flags |= GMA_E_DROPPED;
    if (!plain && dropped && !(e->flags & GMA_E_HOST))
        PUBLISH(r, dropped, e);
    if (!(e->flags & GMA_E_HOST) && D->has_peak && e->ord <= D->peak_ord) {
        e->flags |= GMA_E_KEEP_PEAK;
        e->keep_next = D->keep_head;
        D->keep_head = ei + 1;
    }
    if (!plain && r->arow_time_key && (e->flags & GMA_E_ACCOUNTED)) /* plain: no --by alloc */
        arow_offer(r, ei);
    entry_maybe_release(r, ei);
}

/* A live allocation whose free was lost, replaced by a new one. */
static inline __attribute__((always_inline)) void alloc_replace(gma_replay *r, uint32_t old, uint64_t ts, const int plain)
{
    gma_entry *oe = ENT(r, old);
    r->replaced_allocs++;
    gma_dev *OD = &r->dev[oe->device];
    if (oe->flags & GMA_E_HOST)
        OD->live_host -= oe->bytes;
    else {
        OD->live -= oe->bytes;
        if (p_dev(r, plain, oe->device))
            r->live_total -= oe->bytes;
    }
    entry_dead(r, old, ts, 1, plain);
}

/* An allocation into the live totals of its device (and of the selection). */
static inline __attribute__((always_inline)) void live_add(gma_replay *r, gma_dev *D, const gmt_mem *m, int host, int dsel)
{
    if (host) {
        D->live_host += m->bytes;
        if (D->live_host > D->host_peak)
            D->host_peak = D->live_host;
    } else {
        D->live += m->bytes;
        if (dsel)
            r->live_total += m->bytes;
        if (D->live > D->all_peak) {
            D->all_peak = D->live;
            D->all_peak_ts = m->ts;
        }
    }
}

/* A new live-set entry from its alloc record and what replay made of it. */
static inline __attribute__((always_inline)) void entry_fill(gma_entry *e, const gmt_mem *m, uint64_t ord,
                                                               uint64_t live_after, uint32_t kname, uint32_t rname,
                                                               int64_t w, uint32_t flags)
{
    e->addr = m->address;
    e->bytes = m->bytes;
    e->ts = m->ts;
    e->free_ts = 0;
    e->slot = e->prev = e->next = e->keep_next = 0;
    e->ord = ord;
    e->live_after = live_after;
    e->step = m->step;
    e->stream = m->stream;
    e->kname = kname;
    e->rname = rname;
    e->window = (uint32_t)w; /* -1 (none) is NO_WIN */
    e->device = (uint8_t)m->device;
    e->kind = (uint8_t)(m->kind < 256 ? m->kind : 0);
    e->source = (uint8_t)(m->source < GMT_SRC_COUNT_ ? m->source : 0);
    e->flags = flags;
}

/* An accounted (not baseline) allocation into its name's, window's,
 * device's, step's and stream's rows. */
static inline __attribute__((always_inline)) void alloc_account(gma_replay *r, gma_dev *D, const gmt_mem *m,
                                                                  attr *a, int64_t w, int host, uint64_t live_after,
                                                                  const int plain)
{
    attr_account(r, a, m->bytes, 1, live_after);
    gma_window *W = WIN(r, w);
    W->alloc_bytes += m->bytes;
    W->alloc_count++;
    if (!host) {
        D->alloc_bytes += m->bytes;
        D->alloc_count++;
    }
    gma_steprow *st = step_row(r, m->step);
    if (st) {
        st->alloc_bytes += m->bytes;
        st->alloc_count++;
        if (!host && live_after > st->peak)
            st->peak = live_after;
        if (!host) {
            st->live_end = r->live_total;
            st->has_live = 1;
        }
    }
    if (p_by(r, plain, GMA_BY_STREAM)) {
        gma_streamrow *sr = stream_row(r, m->device, m->stream);
        if (sr) {
            sr->alloc_bytes += m->bytes;
            sr->alloc_count++;
            if (!host && live_after > sr->peak)
                sr->peak = live_after;
        }
    }
}

/* An alloc; baseline is (m->flags & GMT_MEMF_BASELINE) != 0, a constant in
 * each of the two copies below, so that neither tests it again and again:
 * a window begin repeats hundreds of live allocations as baseline records,
 * and the events in between are never baseline. */
static inline __attribute__((always_inline)) void alloc_record(gma_replay *r, const gmt_mem *m, const int baseline,
                                                                 const int plain, const gmt_hot *la,
                                                                 const gmt_hot *lend)
{
    gma_dev *D = dev_get(r, m->device);
    if (!D)
        return;
    int host = is_host_mem(m->kind, m->source);
    uint64_t ord = ++r->mem_ord;
    int64_t w;
    if (baseline) {
        w = r->cur_win >= 0 ? r->cur_win : win_of(r, m->ts);
    } else {
        note_ts(r, m->ts);
        if (m->ts < r->last_mem_ts)
            r->unordered_mem++;
        else
            r->last_mem_ts = m->ts;
        w = win_of(r, m->ts);
    }
    int dsel = p_dev(r, plain, m->device);
    int acc, acc_peak;
    if (baseline) {
        acc = p_win(r, plain, w) && dsel && p_step(r, plain, m->step);
        acc_peak = p_win(r, plain, w) && dsel &&
                   (plain || r->opt.step < 0 || (r->has_cur_step && r->cur_step == (uint64_t)r->opt.step));
    } else {
        acc = p_win(r, plain, w) && dsel && p_step(r, plain, m->step);
        acc_peak = acc;
    }
    if (w < 0)
        r->outside_mem++;

    uint32_t ei = entry_new(r);
    if (ei == UINT32_MAX)
        return;
    uint32_t old;
    int had = gma_map_swap(&r->live, live_key(m->device, m->address), ei, &old);
    if (had < 0) {
        oom(r);
        return;
    }
    if (had) /* A free was lost: the new allocation replaces the old one. */
        alloc_replace(r, old, m->ts, plain);
    live_add(r, D, m, host, dsel);
    attr a = { baseline ? GMA_NAME_BASELINE : GMA_NAME_UNATTR, 0, 0 };
    if (!baseline)
        a = attribute(r, m, la, lend);
    uint64_t live_after = host ? D->live_host : D->live;
    uint32_t rname = baseline ? GMA_NAME_BASELINE : range_of_event(r, m->range, m->bytes, 1, live_after, acc);

    gma_entry *e = ENT(r, ei);
    entry_fill(e, m, ord, live_after, a.slot ? GMA_NAME_UNATTR : a.name, rname, w,
               GMA_E_INUSE | GMA_E_LIVE | (baseline ? GMA_E_BASELINE : 0) | (host ? GMA_E_HOST : 0) |
                   (acc ? GMA_E_ACCOUNTED : 0));
    if (a.slot) { /* wait with the other allocations for this kernel */
        gma_slot *s = SLOT(r, a.slot - 1);
        e->slot = a.slot;
        e->next = s->head;
        if (s->head)
            ENT(r, s->head - 1)->prev = ei + 1;
        s->head = ei + 1;
    }
    if (!plain && !host)
        PUBLISH(r, alloc, e, m, a.slot != 0, a.slot ? SLOT(r, a.slot - 1)->key : 0);

    gma_srcstat *ss = m->source < GMT_SRC_COUNT_ ? &r->src[m->source] : &r->src_other;
    /* allocations seen: the accounted ones and the first selected window's
     * baseline (later baselines repeat what is already counted) */
    if (baseline ? (w >= 0 && w == r->baseline_win && dsel) : acc) {
        ss->count++;
        ss->bytes += m->bytes;
        /* Added, not branched on: sizes alternate unpredictably. */
        ss->seg_like += m->bytes && m->bytes % (2u << 20) == 0;
    }
    if (baseline && w >= 0) {
        gma_window *W = WIN(r, w);
        W->baseline_seen_count++;
        W->baseline_seen_bytes += m->bytes;
        if (acc_peak && !host && w == r->baseline_win) {
            D->baseline_bytes += m->bytes;
            D->baseline_count++;
        }
    }
    if (acc && !baseline)
        alloc_account(r, D, m, &a, w, host, live_after, plain);
    if (acc_peak && !host) {
        if (!D->has_peak || D->live > D->peak)
            peak_set(r, D, D->live, baseline ? WIN(r, w)->begin_ts : m->ts, baseline ? r->cur_step : m->step, ord,
                     w, &a, baseline, rname);
        gma_window *W = WIN(r, w);
        if (D->live > W->peak)
            W->peak = D->live;
        if (!plain)
            PUBLISH(r, live, m->device, baseline ? W->begin_ts : m->ts, D->live);
    }
    if (p_by(r, plain, GMA_BY_ALLOC) && acc && !r->arow_time_key)
        arow_offer(r, ei);
}

static __attribute__((noinline)) void on_alloc(gma_replay *r, const gmt_mem *m) { alloc_record(r, m, 0, 0, NULL, NULL); }
static __attribute__((noinline)) void on_baseline(gma_replay *r, const gmt_mem *m)
{
    alloc_record(r, m, 1, 0, NULL, NULL);
}
static __attribute__((noinline)) void on_alloc_plain(gma_replay *r, const gmt_mem *m)
{
    alloc_record(r, m, 0, 1, NULL, NULL);
}
static __attribute__((noinline)) void on_baseline_plain(gma_replay *r, const gmt_mem *m)
{
    alloc_record(r, m, 1, 1, NULL, NULL);
}

/* la, lend: the records after this one in the batch (NULL outside one). */
static inline __attribute__((always_inline)) void free_record(gma_replay *r, const gmt_mem *m, const int plain,
                                                                const gmt_hot *la, const gmt_hot *lend)
{
    gma_dev *D = dev_get(r, m->device);
    if (!D)
        return;
    note_ts(r, m->ts);
    uint64_t ord = ++r->mem_ord;
    if (m->ts < r->last_mem_ts)
        r->unordered_mem++;
    else
        r->last_mem_ts = m->ts;
    int64_t w = win_of(r, m->ts);
    if (w < 0)
        r->outside_mem++;
    int dsel = p_dev(r, plain, m->device);
    int acc = p_win(r, plain, w) && dsel && p_step(r, plain, m->step);
    uint32_t ei;
    if (!gma_map_del(&r->live, live_key(m->device, m->address), &ei)) {
        r->unmatched_frees++;
        r->unmatched_free_bytes += m->bytes;
        return;
    }
    gma_entry *e = ENT(r, ei);
    uint64_t bytes = e->bytes;
    int host = (e->flags & GMA_E_HOST) != 0;
    D = &r->dev[e->device];
    uint64_t live_before = host ? D->live_host : D->live;
    if (!plain && !host)
        PUBLISH(r, free, e, m->ts);
    if (host) {
        D->live_host -= bytes;
    } else {
        D->live -= bytes;
        if (p_dev(r, plain, e->device))
            r->live_total -= bytes;
    }
    attr a = attribute(r, m, la, lend);
    e = ENT(r, ei);
    uint32_t src = e->source;
    if (acc && !host && (!D->has_peak || live_before > D->peak)) {
        /* the level just before this free is the highest yet (a step or
         * window selection that begins with frees) */
        peak_set(r, D, live_before, m->ts, m->step, ord - 1, w, &a, 0, GMA_NAME_UNATTR);
        if (live_before > WIN(r, w)->peak)
            WIN(r, w)->peak = live_before;
    }
    if (acc) {
        attr_account(r, &a, bytes, 0, 0);
        if (p_by(r, plain, GMA_BY_RANGE))
            range_account(r, m->range, bytes, 0, 0, 1);
        gma_window *W = WIN(r, w);
        W->free_bytes += bytes;
        W->free_count++;
        if (!host) {
            D->free_bytes += bytes;
            D->free_count++;
        }
        gma_steprow *st = step_row(r, m->step);
        if (st) {
            st->free_bytes += bytes;
            st->free_count++;
            if (!host) {
                if (live_before > st->peak) /* the level carried into the step */
                    st->peak = live_before;
                st->live_end = r->live_total;
                st->has_live = 1;
            }
        }
        if (p_by(r, plain, GMA_BY_STREAM)) {
            gma_streamrow *sr = stream_row(r, m->device, m->stream);
            if (sr) {
                sr->free_bytes += bytes;
                sr->free_count++;
            }
        }
        gma_srcstat *ss = &r->src[src];
        ss->frees++;
        ss->free_bytes += bytes;
        if (!host) {
            if (!plain)
                PUBLISH(r, live, m->device, m->ts, D->live);
        }
    }
    if (!plain && !host)
        PUBLISH(r, freed, ENT(r, ei), m, ord);
    entry_dead(r, ei, m->ts, 0, plain);
}

static __attribute__((noinline)) void on_free(gma_replay *r, const gmt_mem *m) { free_record(r, m, 0, NULL, NULL); }
static __attribute__((noinline)) void on_free_plain(gma_replay *r, const gmt_mem *m)
{
    free_record(r, m, 1, NULL, NULL);
}

/* ---- other records ------------------------------------------------------------------ */

static inline __attribute__((always_inline)) void kernel_record(gma_replay *r, const gmt_kernel *k, const int plain)
{
    gma_dev *D = dev_get(r, k->device);
    if (!D)
        return;
    note_ts2(r, k->start, k->end);
    if (!plain)
        PUBLISH(r, kernel, k);
    uint32_t name = kernel_name(k->name);
    if (k->tid) {
        uint32_t t;
        gma_thread *th = thread_get(r, k->tid, &t);
        if (th) {
            struct gma_kslot *ks = &th->ring[k->seq % GMA_KRING];
            ks->seq = k->seq;
            ks->name = name;
            if (k->seq > th->max_seq)
                th->max_seq = k->seq;
            if (r->pending) {
                uint32_t si = slot_find(r, th, ((uint64_t)t << 40) | (k->seq & KEY40));
                if (si != UINT32_MAX)
                    slot_settle(r, si, name);
            }
        }
    }
    int64_t w = win_of(r, k->start);
    if (!p_win(r, plain, w) || !p_dev(r, plain, k->device) || !p_step(r, plain, k->step))
        return;
    uint64_t dur = k->end > k->start ? k->end - k->start : 0;
    gma_krow *kr = krow_get(r, name);
    if (k->flags & GMT_KERNF_LAUNCH) {
        /* a launch time (start = end): counted, but no GPU time to add */
        kr->launch_calls++;
        r->launch_kernels++;
        dur = 0;
        if (k->flags & GMT_KERNF_ATTRS)
            kr->attr_calls++;
    } else {
        r->gpu_kernels++;
        kr->attr_calls++;
    }
    if (!kr->calls || dur < kr->min_ns)
        kr->min_ns = dur;
    if (dur > kr->max_ns)
        kr->max_ns = dur;
    kr->calls++;
    kr->time_ns += dur;
    if (k->registers > kr->regs)
        kr->regs = k->registers;
    if (k->static_smem + k->dynamic_smem > kr->smem)
        kr->smem = k->static_smem + k->dynamic_smem;
    if (k->local_mem > kr->local_mem)
        kr->local_mem = k->local_mem;
    D->kernels++;
    D->kernel_ns += dur;
    WIN(r, w)->kernels++;
    gma_steprow *st = step_row(r, k->step);
    if (st) {
        st->kernels++;
        st->kernel_ns += dur;
    }
    if (p_by(r, plain, GMA_BY_STREAM)) {
        gma_streamrow *sr = stream_row(r, k->device, k->stream);
        if (sr) {
            sr->kernels++;
            sr->kernel_ns += dur;
        }
    }
    if (!plain)
        PUBLISH(r, kernel_selected, k);
}

static __attribute__((noinline)) void on_kernel(gma_replay *r, const gmt_kernel *k) { kernel_record(r, k, 0); }
static __attribute__((noinline)) void on_kernel_plain(gma_replay *r, const gmt_kernel *k) { kernel_record(r, k, 1); }


static void on_copy(gma_replay *r, const gmt_copy *c, int is_memset)
{
    gma_dev *D = dev_get(r, c->device);
    if (!D)
        return;
    note_ts(r, c->start);
    int64_t w = win_of(r, c->start);
    if (!win_selected(r, w) || !gma_dev_selected(r, c->device) ||
        (r->opt.step >= 0 && c->step != (uint64_t)r->opt.step))
        return;
    D->copies++;
    D->copy_bytes += c->bytes;
    if (r->opt.by == GMA_BY_STREAM) {
        gma_streamrow *sr = stream_row(r, c->device, c->stream);
        if (sr) {
            sr->copies++;
            sr->copy_bytes += c->bytes;
        }
    }
    PUBLISH(r, copy, c, is_memset);
}

static int step_selected(const gma_replay *r)
{
    return r->opt.step < 0 || (r->has_cur_step && r->cur_step == (uint64_t)r->opt.step);
}

static void on_range_begin(gma_replay *r, const gmt_range *g)
{
    note_ts(r, g->ts);
    uint32_t i;
    if (r->free_rinst) {
        i = r->free_rinst - 1;
        r->free_rinst = RINST(r, i)->next_free;
    } else {
        if (!gma_vec_push(&r->rinsts)) {
            oom(r);
            return;
        }
        i = (uint32_t)(r->rinsts.len - 1);
    }
    gma_rinst *in = RINST(r, i);
    memset(in, 0, sizeof(*in));
    in->id = g->id;
    in->parent = g->parent;
    in->tid = g->tid;
    in->begin_ts = g->ts;
    in->name = g->name && g->name < GMA_MAX_STRING_ID ? (uint32_t)g->name : NAME_UNNAMED;
    in->canon = range_canon(r, in->name);
    in->accounted = win_selected(r, win_of(r, g->ts)) && step_selected(r);
    uint32_t old;
    if (gma_map_get(&r->rinst_of, g->id, &old)) { /* a reused id: forget the old one */
        RINST(r, old)->next_free = r->free_rinst;
        r->free_rinst = old + 1;
    }
    if (gma_map_put(&r->rinst_of, g->id, i) != 0) {
        oom(r);
        return;
    }
    if (r->chain_valid && r->chain_id == g->id) {
        r->chain_valid = 0;
        r->chain_hit = 0;
    }
    if (in->accounted && r->opt.by == GMA_BY_RANGE) {
        uint32_t row = rrow_for(r, in->canon);
        RROW(r, row)->calls++;
    }
    PUBLISH(r, range, g);
}

static void range_close(gma_replay *r, uint32_t i, uint64_t ts)
{
    gma_rinst *in = RINST(r, i);
    uint64_t dur = ts > in->begin_ts ? ts - in->begin_ts : 0;
    if (in->accounted && r->opt.by == GMA_BY_RANGE) {
        uint32_t row = rrow_for(r, in->canon);
        in = RINST(r, i);
        RROW(r, row)->time_ns += dur;
    }
    if (in->accounted)
        PUBLISH(r, range_closed, in->tid, in->name, in->begin_ts, ts);
    in = RINST(r, i);
    r->rring[in->id % GMA_RRING] = *in;
    gma_map_del(&r->rinst_of, in->id, NULL);
    in->next_free = r->free_rinst;
    r->free_rinst = i + 1;
}

static void on_range_end(gma_replay *r, const gmt_range *g)
{
    note_ts(r, g->ts);
    uint32_t i;
    if (gma_map_get(&r->rinst_of, g->id, &i))
        range_close(r, i, g->ts);
}

static void on_step(gma_replay *r, const gmt_step *s)
{
    note_ts(r, s->ts);
    if (r->has_cur_step && r->cur_step != s->step) {
        gma_steprow *prev = step_row(r, r->cur_step);
        if (prev && !prev->end_ts)
            prev->end_ts = s->ts;
    }
    r->cur_step = s->step;
    r->has_cur_step = 1;
    r->cur_phase = s->phase;
    r->phase_seen = 1;
    r->step_records++;
    gma_steprow *st = step_row(r, s->step);
    if (st) {
        st->start_ts = s->ts;
        st->has_start = 1;
        st->phase = s->phase;
    }
    int64_t w = win_of(r, s->ts);
    if (r->cur_win >= 0 && w == r->cur_win) {
        gma_window *W = WIN(r, w);
        W->last_step = s->step;
    }
    if (win_selected(r, w) && step_selected(r)) {
        if (st)
            st->in_window = 1;
        PUBLISH(r, step, s);
    }
}

/* In a trace with blocks, CUDA's own allocations feed the layer's numbers
 * (reserved and outside the allocator); with the blocks layer (returns 1)
 * nothing else. */
static int fw_cuda(gma_replay *r, const gmt_mem *m, int is_alloc)
{
    if (gma_layer_cuda(&r->layer, m, is_alloc) != 0)
        oom(r);
    if (r->fw) {
        note_ts(r, m->ts);
        if (r->ncons && gma_dev_selected(r, m->device))
            PUBLISH(r, cuda, m, is_alloc);
    }
    return r->fw;
}

/* A framework allocator event: its numbers, and with the blocks layer its
 * blocks as the allocations every table and the peak are made of. */
static void on_block(gma_replay *r, const gmt_block *b)
{
    note_ts(r, b->ts);
    PUBLISH(r, block, b);
    int as_alloc = gma_layer_block(&r->layer, b);
    if (r->layer.err)
        oom(r);
    if (!as_alloc || !r->fw)
        return;
    gmt_mem m;
    gma_layer_as_mem(b, &m);
    if (b->action == GMT_BLK_FREE_REQUESTED)
        on_free(r, &m);
    else if (m.flags & GMT_MEMF_BASELINE)
        on_baseline(r, &m);
    else
        on_alloc(r, &m);
}

static void on_tag(gma_replay *r, const gmt_tag *t)
{
    note_ts(r, t->ts);
    uint64_t n = t->ndev < GMT_MAX_TAG_DEVICES ? t->ndev : GMT_MAX_TAG_DEVICES;
    for (uint64_t i = 0; i < n; i++) {
        const gmt_tag_device *td = &t->dev[i];
        gma_dev *D = dev_get(r, td->device);
        if (!D)
            continue;
        sample_update(D, t->ts, td->driver_used, td->driver_total);
        gma_layer_sample(&r->layer, td->device, t->ts, td->driver_used);
    }
    if (r->opt.window >= 0) {
        int64_t w = win_of(r, t->ts);
        if (!win_selected(r, w))
            return;
    }
    if (r->opt.step >= 0 && t->step != (uint64_t)r->opt.step)
        return;
    PUBLISH(r, tag, t);
    /* Tag rows are kept only where they are shown: they grow with the run. */
    if (r->opt.by != GMA_BY_TAG && !(r->cons_needs & GMA_NEED_TAG_ROWS))
        return;
    /* A tag made before the program's first CUDA call names no device:
     * nothing was on any, shown as device 0 with 0 B. */
    static const gmt_tag_device none;
    for (uint64_t i = 0; i < (n ? n : 1); i++) {
        const gmt_tag_device *td = n ? &t->dev[i] : &none;
        if (td->device >= GMA_MAX_DEVICES || !gma_dev_selected(r, td->device))
            continue;
        gma_tagrow *row = gma_vec_push(&r->tags);
        if (!row) {
            oom(r);
            return;
        }
        row->ts = t->ts;
        row->name = t->name;
        row->step = t->step;
        row->device = td->device;
        row->live = td->live_bytes;
        row->driver_used = td->driver_used;
        row->driver_total = td->driver_total;
        row->has_fw = t->has_framework != 0;
        row->fw_allocated = td->fw_allocated;
        row->fw_reserved = td->fw_reserved;
        row->nodev = n == 0;
    }
}

static void on_sample(gma_replay *r, const gmt_memsample *s)
{
    gma_dev *D = dev_get(r, s->device);
    if (!D)
        return;
    note_ts(r, s->ts);
    sample_update(D, s->ts, s->used, s->total);
    gma_layer_sample(&r->layer, s->device, s->ts, s->used);
    if (!gma_dev_selected(r, s->device))
        return;
    int64_t w = r->opt.window >= 0 ? win_of(r, s->ts) : 0;
    if (r->opt.window >= 0 && !win_selected(r, w))
        return;
    PUBLISH(r, sample, s->device, s->ts, s->used);
}

static void on_window_begin(gma_replay *r, const gmt_window_begin *b)
{
    note_ts(r, b->ts);
    r->window_records = 1;
    gma_layer_window_begin(&r->layer);
    if (r->cur_win >= 0)
        window_close(r, b->ts, WIN(r, r->cur_win)->last_step, GMT_WEND_SCHEDULE, 0);
    /* The baseline that follows is the live set: drop what we had. The walk
     * empties the buckets it drops (val 0 marks an empty one): one pass over
     * the map instead of the walk and then a memset of it. */
    for (size_t k = 0; k < r->live.cap; k++) {
        if (r->live.b[k].val) {
            entry_dead(r, (uint32_t)(r->live.b[k].val - 1), b->ts, 1, 0);
            r->live.b[k].val = 0;
        }
    }
    r->live.count = 0;
    for (unsigned d = 0; d < GMA_MAX_DEVICES; d++) {
        r->dev[d].live = 0;
        r->dev[d].live_host = 0;
    }
    r->live_total = 0;
    int64_t w = window_open(r, b->window, b->ts, b->step, 0);
    if (w < 0)
        return;
    gma_window *W = WIN(r, w);
    W->baseline_count = b->baseline_count;
    W->baseline_bytes = b->baseline_bytes;
    if (r->ncons && win_selected(r, w))
        PUBLISH(r, window, b->window, b->ts, 1);
}

static void on_window_end(gma_replay *r, const gmt_window_end *e)
{
    note_ts(r, e->ts);
    r->window_records = 1;
    if (r->cur_win < 0)
        return;
    int sel = win_selected(r, r->cur_win);
    window_close(r, e->ts, e->step, e->reason, 1);
    if (sel)
        PUBLISH(r, window, e->window, e->ts, 0);
}

static void on_header(gma_replay *r, const gmt_header *h)
{
    r->has_header = 1;
    r->hdr = *h;
    r->hdr_host = keep_bytes(r, &h->host);
    r->hdr_cmd = keep_bytes(r, &h->cmdline);
    r->hdr_cfg = keep_bytes(r, &h->config);
    r->hdr_ver = keep_bytes(r, &h->profiler_version);
    memset(&r->hdr.host, 0, sizeof(r->hdr.host));
    memset(&r->hdr.cmdline, 0, sizeof(r->hdr.cmdline));
    memset(&r->hdr.config, 0, sizeof(r->hdr.config));
    memset(&r->hdr.profiler_version, 0, sizeof(r->hdr.profiler_version));
    if (!r->has_origin || h->start_ts <= r->origin) {
        r->origin = h->start_ts;
        r->has_origin = 1;
    }
}

static void on_device(gma_replay *r, const gmt_device *d)
{
    gma_dev *D = dev_get(r, d->device);
    if (!D)
        return;
    D->name_off = keep_bytes(r, &d->name);
    D->total_mem = d->total_mem;
    D->sm_count = d->sm_count;
    D->cc_major = d->cc_major;
    D->cc_minor = d->cc_minor;
    PUBLISH(r, device, d->device);
}

/* One record. Inline in both callers: the read loop, which runs it once per
 * event and so saves a call and its register spills per record, and
 * gma_replay_record (the fuzzer and tests feed records one by one). */
static inline __attribute__((always_inline)) int replay_record(gma_replay *r, const gmt_record *rec, const int plain)
{
    r->records++;
    if (r->fw_cuda && (rec->type == GMT_REC_ALLOC || rec->type == GMT_REC_FREE) &&
        fw_cuda(r, &rec->u.mem, rec->type == GMT_REC_ALLOC))
        return r->err ? -1 : 0;
    switch (rec->type) {
    case GMT_REC_ALLOC:
        if (rec->u.mem.flags & GMT_MEMF_BASELINE)
            (plain ? on_baseline_plain : on_baseline)(r, &rec->u.mem);
        else
            (plain ? on_alloc_plain : on_alloc)(r, &rec->u.mem);
        break;
    case GMT_REC_FREE: (plain ? on_free_plain : on_free)(r, &rec->u.mem); break;
    case GMT_REC_KERNEL: (plain ? on_kernel_plain : on_kernel)(r, &rec->u.kernel); break;
    case GMT_REC_RANGE_BEGIN: on_range_begin(r, &rec->u.range); break;
    case GMT_REC_RANGE_END: on_range_end(r, &rec->u.range); break;
    case GMT_REC_STRING: str_set(r, rec->u.string.id, &rec->u.string.str); break;
    case GMT_REC_MEMCPY: on_copy(r, &rec->u.copy, 0); break;
    case GMT_REC_MEMSET: on_copy(r, &rec->u.copy, 1); break;
    case GMT_REC_STEP: on_step(r, &rec->u.step); break;
    case GMT_REC_TAG: on_tag(r, &rec->u.tag); break;
    case GMT_REC_BLOCK: on_block(r, &rec->u.block); break;
    case GMT_REC_MEMSAMPLE: on_sample(r, &rec->u.sample); break;
    case GMT_REC_MARK:
        note_ts(r, rec->u.mark.ts);
        if (consumers_take_marks(r) && win_selected(r, win_of(r, rec->u.mark.ts)))
            PUBLISH(r, mark, rec->u.mark.tid,
                            rec->u.mark.name < GMA_MAX_STRING_ID ? (uint32_t)rec->u.mark.name : 0, rec->u.mark.ts);
        break;
    case GMT_REC_WINDOW_BEGIN: on_window_begin(r, &rec->u.wbegin); break;
    case GMT_REC_WINDOW_END: on_window_end(r, &rec->u.wend); break;
    case GMT_REC_HEADER: on_header(r, &rec->u.header); break;
    case GMT_REC_DEVICE: on_device(r, &rec->u.device); break;
    case GMT_REC_STATS:
        r->has_stats = 1;
        r->stats = rec->u.stats;
        break;
    case GMT_REC_TRAILER:
        r->has_trailer_rec = 1;
        r->trailer = rec->u.trailer;
        break;
    case GMT_REC_OOM: gma_oom_record(r, &rec->u.oom); break;
    case GMT_REC_LIVE: gma_oom_live(r, &rec->u.live); break;
    default: break;
    }
    return r->err ? -1 : 0;
}

int gma_replay_record(gma_replay *r, const gmt_record *rec) { return replay_record(r, rec, 0); }

/* replay_record for a record of a batch (gmt_hot: the hot types only). */
static inline __attribute__((always_inline)) int replay_hot(gma_replay *r, const gmt_hot *h, const gmt_hot *end,
                                                           const int plain)
{
    /* r->records: read_loop counts a batch at once */
    /* the handlers inline here, their one hot call site; replay_record
     * calls their out-of-line copies. The three types of nearly every
     * record are tested first: compares cost less than a jump table. */
    gmt_type t = h->type;
    if (__builtin_expect(r->fw_cuda, 0) && (t == GMT_REC_FREE || t == GMT_REC_ALLOC) &&
        fw_cuda(r, &h->u.mem, t == GMT_REC_ALLOC)) {
        /* the blocks layer: CUDA's allocations feed its numbers alone */
    } else if (t == GMT_REC_FREE) {
        free_record(r, &h->u.mem, plain, h + 1, end);
    } else if (t == GMT_REC_KERNEL) {
        kernel_record(r, &h->u.kernel, plain);
    } else if (t == GMT_REC_ALLOC) {
        if (h->u.mem.flags & GMT_MEMF_BASELINE)
            alloc_record(r, &h->u.mem, 1, plain, NULL, NULL);
        else
            alloc_record(r, &h->u.mem, 0, plain, h + 1, end);
    } else {
        switch (t) {
        case GMT_REC_MEMCPY: on_copy(r, &h->u.copy, 0); break;
        case GMT_REC_MEMSET: on_copy(r, &h->u.copy, 1); break;
        case GMT_REC_RANGE_BEGIN: on_range_begin(r, &h->u.range); break;
        case GMT_REC_RANGE_END: on_range_end(r, &h->u.range); break;
        default: break;
        }
    }
    return r->err ? -1 : 0;
}



/* ---- life cycle ---------------------------------------------------------------------- */

int gma_replay_init(gma_replay *r, const gma_opts *opt, const char *path)
{
    memset(r, 0, sizeof(*r));
    r->opt = *opt;
    r->path = path;
    r->cur_win = -1;
    r->win_from = UINT64_MAX;
    r->first_ts = UINT64_MAX; /* note_ts */
    r->baseline_win = -1;
    r->last_dev = UINT64_MAX;
    r->krow_hit_name = KROW_NONE;
    gma_vec_init(&r->entries, sizeof(gma_entry));
    gma_vec_init(&r->threads, sizeof(gma_thread));
    gma_vec_init(&r->slots, sizeof(gma_slot));
    gma_vec_init(&r->krows, sizeof(gma_krow));
    gma_vec_init(&r->rinsts, sizeof(gma_rinst));
    gma_vec_init(&r->rrows, sizeof(gma_rrow));
    gma_vec_init(&r->steps, sizeof(gma_steprow));
    gma_vec_init(&r->tags, sizeof(gma_tagrow));
    gma_vec_init(&r->streams, sizeof(gma_streamrow));
    gma_vec_init(&r->windows, sizeof(gma_window));
    gma_vec_init(&r->arows, sizeof(uint32_t));
    r->arow_time_key = opt->by == GMA_BY_ALLOC && opt->sort == GMA_SORT_TIME;
    r->rring = calloc(GMA_RRING, sizeof(*r->rring));
    /* Row 0 of kernels and ranges is "(unattributed)"; slot 0 is never
     * used (slot_get's always-stale FIFO item names it). */
    if (!r->rring || !gma_vec_push(&r->krows) || !gma_vec_push(&r->rrows) || !gma_vec_push(&r->slots) ||
        gma_vec_reserve(&r->entries, 1024) != 0) {
        gma_replay_free(r);
        return -1;
    }
    return 0;
}

void gma_replay_free(gma_replay *r)
{
    while (r->ncons) { /* a release may remove its table: take it off first */
        const gma_consumer *c = r->cons[--r->ncons];
        if (c->release)
            c->release(r);
    }
    r->cons_needs = 0;
    gma_oom_free(r);
    gma_strs_free(&r->strs);
    free(r->str_off);
    free(r->str_len);
    gma_vec_free(&r->entries);
    gma_map_free(&r->live);
    for (size_t i = 0; i < r->threads.len; i++)
        free(THR(r, i)->ring);
    gma_vec_free(&r->threads);
    gma_map_free(&r->thread_of);
    gma_vec_free(&r->slots);
    gma_map_free(&r->slot_of);
    free(r->fifo);
    gma_vec_free(&r->krows);
    free(r->krow_of);
    gma_vec_free(&r->rinsts);
    gma_map_free(&r->rinst_of);
    free(r->rring);
    gma_vec_free(&r->rrows);
    free(r->rrow_of);
    free(r->rcanon);
    gma_map_free(&r->rcanon_of);
    gma_vec_free(&r->steps);
    gma_map_free(&r->step_of);
    gma_vec_free(&r->tags);
    gma_layer_free(&r->layer);
    gma_vec_free(&r->streams);
    gma_map_free(&r->stream_of);
    gma_vec_free(&r->windows);
    gma_vec_free(&r->arows);
    r->rring = NULL;
    r->str_off = r->str_len = r->krow_of = r->rrow_of = r->rcanon = NULL;
    r->fifo = NULL;
}

int gma_replay_finish(gma_replay *r, const gmt_reader_end *end)
{
    if (r->finished)
        return r->err ? -1 : 0;
    r->finished = 1;
    if (end)
        r->rend = *end;
    /* A window still open when the trace ends: its leaks are measured here. */
    if (r->cur_win >= 0)
        window_close(r, r->last_ts, WIN(r, r->cur_win)->last_step, GMT_WEND_EXIT, 0);
    /* Kernels that never came: their allocations stay unattributed. */
    for (size_t i = 0; i < r->slots.len; i++) {
        if (SLOT(r, i)->used) {
            r->unattributed_end++;
            slot_settle(r, (uint32_t)i, GMA_NAME_UNATTR);
        }
    }
    /* Ranges still open end with the trace. */
    for (size_t i = 0; i < r->rinsts.len; i++) {
        gma_rinst *in = RINST(r, i);
        uint32_t j;
        if (gma_map_get(&r->rinst_of, in->id, &j) && j == i)
            range_close(r, (uint32_t)i, r->last_ts);
    }
    if (r->arow_time_key) {
        for (size_t i = 0; i < r->entries.len; i++) {
            gma_entry *e = ENT(r, i);
            if ((e->flags & (GMA_E_INUSE | GMA_E_LIVE | GMA_E_ACCOUNTED)) ==
                (GMA_E_INUSE | GMA_E_LIVE | GMA_E_ACCOUNTED))
                arow_offer(r, (uint32_t)i);
        }
    }
    /* Step durations: a step ends where the next begins, or the trace ends. */
    for (size_t i = 0; i < r->steps.len; i++) {
        gma_steprow *s = STEPROW(r, i);
        if (s->has_start && !s->end_ts)
            s->end_ts = r->last_ts;
    }
    return r->err ? -1 : 0;
}

/* The read loop: a run of hot records from gmt_reader_next_hot, replayed,
 * then the record that ended the run from gmt_reader_next. 1 when the
 * replay failed (out of memory), 0 at the end of the trace. */
static inline __attribute__((always_inline)) int read_loop(gma_replay *r, gmt_reader *rd,
                                                           gmt_hot hot[GMA_READ_BATCH], const int plain)
{
    gmt_record rec;
    for (;;) {
        size_t n = gmt_reader_next_hot(rd, hot, GMA_READ_BATCH);
        r->dk = 0; /* the batch's records are new: no kernel ahead yet */
        /* counted at once (the handlers do not read the count); a failed
         * record is the last one counted, as when they were one by one */
        r->records += n;
        for (const gmt_hot *h = hot, *end = hot + n; h < end; h++) {
            if (replay_hot(r, h, end, plain) != 0) {
                r->records -= (uint64_t)(end - h - 1);
                return 1;
            }
        }
        if (n == GMA_READ_BATCH)
            continue;
        if (gmt_reader_next(rd, &rec) <= 0)
            return 0;
        if (replay_record(r, &rec, plain) != 0)
            return 1;
    }
}

/* Whether the trace holds BLOCK records, from its beginning: the bridge
 * attaches at the first CUDA context, so its first records come early; a
 * trace without them pays at most this many records read twice. */
#define GMA_BLOCK_SCAN 2000000u

int gma_trace_has_blocks(const char *path)
{
    if (strcmp(path, "-") == 0)
        return 0; /* standard input is read once: --layer blocks says it */
    gmt_reader *rd = gmt_reader_open(path);
    if (!rd)
        return 0;
    gmt_record rec;
    int found = 0;
    for (uint64_t n = 0; n < GMA_BLOCK_SCAN && !found && gmt_reader_next(rd, &rec) > 0; n++)
        found = rec.type == GMT_REC_BLOCK;
    gmt_reader_close(rd);
    return found;
}

int gma_replay_read(gma_replay *r, char *msg, size_t msgcap)
{
    const char *path = r->path;
    msg[0] = 0;
    int blocks = r->opt.layer == GMA_LAYER_BLOCKS || gma_trace_has_blocks(path);
    r->fw = blocks && r->opt.layer != GMA_LAYER_SEGMENTS;
    /* standard input cannot be scanned first: CUDA's allocations feed the
     * layer's numbers in case blocks come */
    r->fw_cuda = blocks || strcmp(path, "-") == 0;
    gmt_reader *rd = gmt_reader_open(path);
    if (!rd) {
        snprintf(msg, msgcap, "cannot open %s: %s", path, strerror(errno));
        return 1;
    }
    /* Runs of the hot records come in batches (gmt_reader_next_hot): the
     * decoder runs a tight loop over a run, then the replay over it,
     * instead of a call into the reader per record; each run is followed
     * by the one record that stopped it, from gmt_reader_next. The batch
     * stays in L1 (11 KiB). */
    gmt_hot hot[GMA_READ_BATCH];
    /* Exports are attached before the read and stay for all of it. */
    int failed = replay_plain(r) ? read_loop(r, rd, hot, 1) : read_loop(r, rd, hot, 0);
    if (failed) {
        gmt_reader_close(rd);
        snprintf(msg, msgcap, "%s: out of memory after %llu records", path, (unsigned long long)r->records);
        return 1;
    }
    gmt_reader_end end = *gmt_reader_end_info(rd);
    gmt_reader_close(rd);
    if (r->records == 0) {
        /* Nothing usable: say precisely why. */
        if (end.status == GMT_E_VERSION)
            snprintf(msg, msgcap, "%s: trace format version %u.%u is newer than this gmem-analyze reads (%u.x)", path,
                     end.major, end.minor, GMT_VERSION_MAJOR);
        else if (end.file_size == 0)
            snprintf(msg, msgcap, "%s: empty file, not a gmemprof trace", path);
        else if ((end.status == GMT_E_MAGIC || end.status == GMT_E_ZSTD) &&
                 strncmp(end.message, "not a gmemprof trace", 20) == 0)
            snprintf(msg, msgcap, "%s: %s", path, end.message); /* the reader said it already */
        else if (end.status == GMT_E_MAGIC || end.status == GMT_E_ZSTD)
            snprintf(msg, msgcap, "%s: not a gmemprof trace (%s)", path, end.message);
        else if (end.status != GMT_OK)
            snprintf(msg, msgcap, "%s: unreadable trace: %s", path, end.message);
        else
            snprintf(msg, msgcap, "%s: the trace holds no records", path);
        return 1;
    }
    gma_layer_finish(&r->layer);
    if (gma_replay_finish(r, &end) != 0 || r->layer.err) {
        snprintf(msg, msgcap, "%s: out of memory", path);
        return 1;
    }
    return 0;
}

int gma_replay_file(gma_replay *r, const gma_opts *opt, const char *path, char *msg, size_t msgcap)
{
    if (gma_replay_init(r, opt, path) != 0) {
        snprintf(msg, msgcap, "out of memory");
        return 1;
    }
    return gma_replay_read(r, msg, msgcap);
}

/* ---- summary helpers -------------------------------------------------------------------- */

gma_mode gma_allocator_mode(const gma_replay *r)
{
    const gma_srcstat *s = r->src;
    uint64_t dev_bytes = s[GMT_SRC_MALLOC].bytes + s[GMT_SRC_ASYNC_POOL].bytes + s[GMT_SRC_VMM].bytes +
                         s[GMT_SRC_MANAGED].bytes + s[GMT_SRC_PITCHED].bytes + s[GMT_SRC_STATIC].bytes +
                         s[GMT_SRC_UNKNOWN].bytes;
    gma_mode m = { "none", "no device allocations were seen in the selection" };
    if (r->fw) {
        m.mode = "PyTorch caching allocator, tensors";
        m.meaning = "the PyTorch bridge reported every block of the caching allocator: bytes are tensors as "
                    "torch.cuda.memory_allocated counts them; reserved and outside-allocator bytes come from "
                    "its segments and CUPTI (--layer segments shows what CUDA handed out instead)";
        return m;
    }
    if (r->fw_cuda && r->layer.seen) {
        m.mode = "PyTorch caching allocator, segments";
        m.meaning = "bytes are what CUDA handed out: the allocator's segments (reserved memory) and other libraries' "
                    "memory; a kernel is charged when a segment is created (--layer blocks shows tensors)";
        return m;
    }
    if (!dev_bytes && s[GMT_SRC_PINNED_HOST].count) {
        m.mode = "pinned host memory";
        m.meaning = "only cudaMallocHost/cudaHostAlloc buffers: host memory pinned for fast copies, no device memory";
    }
    if (!dev_bytes)
        return m;
    /* The source holding most of the device bytes names the mode. */
    uint64_t best = 0;
    int bi = GMT_SRC_UNKNOWN;
    for (int i = 0; i < GMT_SRC_COUNT_; i++) {
        if (i == GMT_SRC_PINNED_HOST)
            continue;
        if (s[i].bytes > best) {
            best = s[i].bytes;
            bi = i;
        }
    }
    switch (bi) {
    case GMT_SRC_MALLOC: {
        const gma_srcstat *x = &s[GMT_SRC_MALLOC];
        /* PyTorch's caching allocator asks cudaMalloc for segments (2 MiB
         * multiples, 20 MiB and larger blocks) and hardly ever frees them. */
        int seg = x->count && x->seg_like * 10 >= x->count * 8 && x->frees * 10 <= x->count;
        if (seg) {
            m.mode = "caching-allocator segments";
            m.meaning = "CUPTI sees the framework's cudaMalloc segments (reserved memory), not tensors: bytes are "
                        "reserved, and a kernel is charged when a segment is created; run with "
                        "PYTORCH_NO_CUDA_MEMORY_CACHING=1 or backend:cudaMallocAsync to see tensors";
        } else {
            m.mode = "plain cudaMalloc";
            m.meaning = "every buffer is its own cudaMalloc: bytes, owners and lifetimes are exact per buffer";
        }
        break;
    }
    case GMT_SRC_ASYNC_POOL:
        m.mode = "async pool per tensor";
        m.meaning = "stream-ordered cudaMallocAsync, one allocation per tensor: bytes are what tensors use "
                    "(torch.cuda.memory_allocated), the pool's reserve is not counted";
        break;
    case GMT_SRC_VMM:
        m.mode = "VMM mappings";
        m.meaning = "memory mapped with cuMemCreate/cuMemMap in chunks (expandable segments): bytes are mapped "
                    "(reserved) memory, which grows in chunk steps, not per tensor";
        break;
    case GMT_SRC_MANAGED:
        m.mode = "managed memory";
        m.meaning = "cudaMallocManaged: bytes are the managed sizes, which the driver migrates on demand; "
                    "device residency can be lower";
        break;
    default:
        m.mode = "mixed/other";
        m.meaning = "allocations of an unknown or uncommon API: bytes are what CUPTI reported";
        break;
    }
    return m;
}

int gma_trace_warning(const gma_replay *r, char *out, size_t cap)
{
    const gmt_reader_end *e = &r->rend;
    if (e->status != GMT_OK || e->truncated || !e->has_trailer) {
        const char *what = e->status != GMT_OK && !e->truncated ? "trace damaged"
                           : e->truncated                       ? "trace truncated"
                                                                : "trace has no trailer (cut short)";
        snprintf(out, cap, "%s (%s): the numbers cover the %llu records before the cut only", what,
                 e->message[0] ? e->message : "the profiler did not finish writing", (unsigned long long)r->records);
        return 1;
    }
    if (e->unchecked_frames) { /* gmemprof writes a checksum in every frame */
        snprintf(out, cap, "trace altered: %llu of %llu frames carry no zstd checksum (gmemprof writes one in every "
                 "frame), so damage in them would go unnoticed: the trace was not left as the profiler wrote it",
                 (unsigned long long)e->unchecked_frames, (unsigned long long)e->frames);
        return 1;
    }
    return 0;
}
