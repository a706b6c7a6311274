/*
 * The table of live allocations (see live.h).
 *
 * Linear probing over a power-of-two array of slots keyed by (device,
 * address). Deletion shifts the following entries of the probe run back
 * (Knuth's algorithm R), so there are no tombstones: lookups stay short after
 * any number of alloc/free pairs, which is the profiler's steady state. The
 * table grows (doubles) before an insert would take the load past 70%.
 *
 * Totals are kept incrementally: per device for device-memory kinds (see
 * gmp_live_is_device_kind), and over every kind, so a TAG or WINDOW_BEGIN
 * record costs O(1) per device, not a scan. Devices at or above
 * GMP_LIVE_MAX_DEVICES are summed by a scan (never seen in practice).
 *
 * Only calloc is used to allocate (a test wraps it to simulate OOM).
 */
#include "live.h"

#include <stdlib.h>
#include <string.h>

struct gmp_live {
    gmt_mem *slot;      /* cap entries */
    uint8_t *used;      /* cap flags: 1 when slot[i] holds an entry */
    size_t cap;         /* power of two */
    size_t count;
    uint64_t bytes_all;
    uint64_t dev_bytes[GMP_LIVE_MAX_DEVICES];
};

#define LIVE_MIN_CAP 16u

int gmp_live_is_device_kind(uint64_t kind)
{
    switch (kind) {
    case GMT_MEMKIND_DEVICE:
    case GMT_MEMKIND_DEVICE_STATIC:
    case GMT_MEMKIND_MANAGED:
    case GMT_MEMKIND_MANAGED_STATIC:
    case GMT_MEMKIND_ARRAY:
        return 1;
    default:
        return 0; /* PAGEABLE, PINNED (host memory), UNKNOWN */
    }
}

/* Device addresses are aligned (256 B and up), so the low bits carry no
 * information: a full 64-bit mix (splitmix64's finalizer) spreads them. */
static size_t live_hash(uint64_t device, uint64_t address)
{
    uint64_t x = address ^ (device * 0x9e3779b97f4a7c15ull);
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ull;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebull;
    x ^= x >> 31;
    return (size_t)x;
}

/* Smallest power of two >= n / 0.7 (and >= LIVE_MIN_CAP); 0 on overflow. */
static size_t cap_for(size_t n)
{
    size_t need = n + n / 2 + 1; /* > n / 0.7 */
    size_t cap = LIVE_MIN_CAP;
    if (need < n)
        return 0;
    while (cap < need) {
        if (cap > SIZE_MAX / 2)
            return 0;
        cap <<= 1;
    }
    return cap;
}

/* Allocates empty arrays for cap slots; 0 on success. */
static int alloc_slots(size_t cap, gmt_mem **slot, uint8_t **used)
{
    if (cap > SIZE_MAX / sizeof(gmt_mem))
        return -1;
    *slot = calloc(cap, sizeof(gmt_mem));
    *used = calloc(cap, 1);
    if (!*slot || !*used) {
        free(*slot);
        free(*used);
        *slot = NULL;
        *used = NULL;
        return -1;
    }
    return 0;
}

gmp_live *gmp_live_create(size_t initial_capacity)
{
    size_t cap = cap_for(initial_capacity);
    gmp_live *t;
    if (cap == 0)
        return NULL;
    t = calloc(1, sizeof *t);
    if (!t)
        return NULL;
    if (alloc_slots(cap, &t->slot, &t->used) != 0) {
        free(t);
        return NULL;
    }
    t->cap = cap;
    return t;
}

void gmp_live_free(gmp_live *t)
{
    if (!t)
        return;
    free(t->slot);
    free(t->used);
    free(t);
}

void gmp_live_clear(gmp_live *t)
{
    if (!t)
        return;
    memset(t->used, 0, t->cap);
    t->count = 0;
    t->bytes_all = 0;
    memset(t->dev_bytes, 0, sizeof t->dev_bytes);
}

/* Index of the key's slot, or of the empty slot where it would go. The
 * table always keeps at least one empty slot, so the loop ends. */
static size_t probe(const gmp_live *t, uint64_t device, uint64_t address)
{
    size_t mask = t->cap - 1;
    size_t i = live_hash(device, address) & mask;
    while (t->used[i] && (t->slot[i].device != device || t->slot[i].address != address))
        i = (i + 1) & mask;
    return i;
}

static void account(gmp_live *t, const gmt_mem *m, int sign)
{
    if (sign > 0) {
        t->bytes_all += m->bytes;
        if (m->device < GMP_LIVE_MAX_DEVICES && gmp_live_is_device_kind(m->kind))
            t->dev_bytes[m->device] += m->bytes;
    } else {
        t->bytes_all -= m->bytes;
        if (m->device < GMP_LIVE_MAX_DEVICES && gmp_live_is_device_kind(m->kind))
            t->dev_bytes[m->device] -= m->bytes;
    }
}

/* Rehashes into a table of new_cap slots; -1 (table unchanged) on OOM. */
static int live_grow(gmp_live *t, size_t new_cap)
{
    gmt_mem *slot;
    uint8_t *used;
    if (alloc_slots(new_cap, &slot, &used) != 0)
        return -1;
    size_t mask = new_cap - 1;
    for (size_t i = 0; i < t->cap; i++) {
        if (!t->used[i])
            continue;
        size_t j = live_hash(t->slot[i].device, t->slot[i].address) & mask;
        while (used[j])
            j = (j + 1) & mask;
        slot[j] = t->slot[i];
        used[j] = 1;
    }
    free(t->slot);
    free(t->used);
    t->slot = slot;
    t->used = used;
    t->cap = new_cap;
    return 0;
}

int gmp_live_insert(gmp_live *t, const gmt_mem *m)
{
    size_t i = probe(t, m->device, m->address);
    if (t->used[i]) {
        account(t, &t->slot[i], -1);
        t->slot[i] = *m;
        account(t, m, +1);
        return 1;
    }
    /* Grow at 70% load. If growing fails the entry still goes in while an
     * empty slot would remain afterwards (a fuller table is slower, but a
     * lost allocation would make every later baseline wrong). */
    if ((t->count + 1) * 10 > t->cap * 7) {
        if (t->cap <= SIZE_MAX / 2 && live_grow(t, t->cap * 2) == 0) {
            i = probe(t, m->device, m->address);
        } else if (t->count + 2 > t->cap) {
            return -1;
        }
    }
    t->slot[i] = *m;
    t->used[i] = 1;
    t->count++;
    account(t, m, +1);
    return 0;
}

int gmp_live_remove(gmp_live *t, uint64_t device, uint64_t address, gmt_mem *out)
{
    size_t mask = t->cap - 1;
    size_t i = probe(t, device, address);
    if (!t->used[i])
        return 0;
    if (out)
        *out = t->slot[i];
    account(t, &t->slot[i], -1);
    t->count--;
    /* Backward shift: walk the run after the hole; an entry whose home slot
     * is not cyclically within (hole, j] may move into the hole. */
    size_t hole = i, j = i;
    for (;;) {
        j = (j + 1) & mask;
        if (!t->used[j])
            break;
        size_t home = live_hash(t->slot[j].device, t->slot[j].address) & mask;
        int stays = hole <= j ? (hole < home && home <= j) : (hole < home || home <= j);
        if (stays)
            continue;
        t->slot[hole] = t->slot[j];
        hole = j;
    }
    t->used[hole] = 0;
    return 1;
}

const gmt_mem *gmp_live_find(const gmp_live *t, uint64_t device, uint64_t address)
{
    size_t i = probe(t, device, address);
    return t->used[i] ? &t->slot[i] : NULL;
}

size_t gmp_live_count(const gmp_live *t) { return t->count; }

uint64_t gmp_live_bytes(const gmp_live *t, uint64_t device)
{
    if (device < GMP_LIVE_MAX_DEVICES)
        return t->dev_bytes[device];
    uint64_t sum = 0;
    for (size_t i = 0; i < t->cap; i++)
        if (t->used[i] && t->slot[i].device == device && gmp_live_is_device_kind(t->slot[i].kind))
            sum += t->slot[i].bytes;
    return sum;
}

uint64_t gmp_live_bytes_all(const gmp_live *t) { return t->bytes_all; }

void gmp_live_foreach(const gmp_live *t, int (*fn)(const gmt_mem *m, void *ctx), void *ctx)
{
    for (size_t i = 0; i < t->cap; i++)
        if (t->used[i] && fn(&t->slot[i], ctx) != 0)
            return;
}

size_t gmp_live_footprint(const gmp_live *t)
{
    return sizeof *t + t->cap * (sizeof(gmt_mem) + 1);
}
