/*
 * String interning for the writer side: name -> id (ids from 1, in order of
 * first use).  Open addressing with linear probing over (hash, id) slots; the
 * bytes live in one growing arena addressed by offset, so growing it never
 * invalidates the table.  Allocation happens only when the table or the
 * arena grows, never per lookup.
 */
#include <stdlib.h>
#include <string.h>

#include "gmt_io.h"

typedef struct slot {
    uint64_t hash;
    uint64_t id;  /* 0: empty */
} slot;

typedef struct entry {
    size_t off;
    size_t len;
} entry;

struct gmt_strtab {
    slot *slots;
    size_t mask;      /* capacity - 1 (a power of two) */
    entry *entries;   /* by id - 1 */
    size_t count;
    size_t entries_cap;
    char *arena;
    size_t arena_len;
    size_t arena_cap;
};

static uint64_t hash_bytes(const char *s, size_t len)
{
    /* FNV-1a, then a final mix so that linear probing sees well-spread bits. */
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < len; i++) {
        h ^= (uint8_t)s[i];
        h *= 0x100000001b3ull;
    }
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdull;
    h ^= h >> 33;
    return h;
}

gmt_strtab *gmt_strtab_create(void)
{
    gmt_strtab *t = calloc(1, sizeof(*t));
    if (!t)
        return NULL;
    t->mask = 255;
    t->slots = calloc(t->mask + 1, sizeof(slot));
    if (!t->slots) {
        free(t);
        return NULL;
    }
    return t;
}

void gmt_strtab_free(gmt_strtab *t)
{
    if (!t)
        return;
    free(t->slots);
    free(t->entries);
    free(t->arena);
    free(t);
}

size_t gmt_strtab_count(const gmt_strtab *t) { return t ? t->count : 0; }

const char *gmt_strtab_get(const gmt_strtab *t, uint64_t id, size_t *len)
{
    if (!t || id == 0 || id > t->count)
        return NULL;
    const entry *e = &t->entries[id - 1];
    if (len)
        *len = e->len;
    return t->arena + e->off;
}

static int grow_slots(gmt_strtab *t)
{
    size_t ncap = (t->mask + 1) * 2;
    slot *ns = calloc(ncap, sizeof(slot));
    if (!ns)
        return -1;
    for (size_t i = 0; i <= t->mask; i++) {
        if (!t->slots[i].id)
            continue;
        size_t j = (size_t)t->slots[i].hash & (ncap - 1);
        while (ns[j].id)
            j = (j + 1) & (ncap - 1);
        ns[j] = t->slots[i];
    }
    free(t->slots);
    t->slots = ns;
    t->mask = ncap - 1;
    return 0;
}

uint64_t gmt_strtab_intern(gmt_strtab *t, const char *s, size_t len, int *is_new)
{
    if (is_new)
        *is_new = 0;
    if (!t || (!s && len))
        return 0;
    if (!s)
        s = "";
    uint64_t h = hash_bytes(s, len);
    size_t i = (size_t)h & t->mask;
    while (t->slots[i].id) {
        if (t->slots[i].hash == h) {
            const entry *e = &t->entries[t->slots[i].id - 1];
            if (e->len == len && (len == 0 || memcmp(t->arena + e->off, s, len) == 0))
                return t->slots[i].id;
        }
        i = (i + 1) & t->mask;
    }
    /* New string: make room everywhere first, so a failure changes nothing. */
    if (t->count == t->entries_cap) {
        size_t ncap = t->entries_cap ? t->entries_cap * 2 : 64;
        entry *ne = realloc(t->entries, ncap * sizeof(entry));
        if (!ne)
            return 0;
        t->entries = ne;
        t->entries_cap = ncap;
    }
    if (t->arena_cap - t->arena_len < len) {
        size_t ncap = t->arena_cap ? t->arena_cap : 4096;
        while (ncap - t->arena_len < len) {
            if (ncap > SIZE_MAX / 2)
                return 0;
            ncap *= 2;
        }
        char *na = realloc(t->arena, ncap);
        if (!na)
            return 0;
        t->arena = na;
        t->arena_cap = ncap;
    }
    /* Keep the load factor at or below one half. */
    if ((t->count + 1) * 2 > t->mask + 1) {
        if (grow_slots(t) != 0)
            return 0;
        i = (size_t)h & t->mask;
        while (t->slots[i].id)
            i = (i + 1) & t->mask;
    }
    if (len) /* arena is NULL until the first non-empty string */
        memcpy(t->arena + t->arena_len, s, len);
    t->entries[t->count].off = t->arena_len;
    t->entries[t->count].len = len;
    t->arena_len += len;
    t->count++;
    t->slots[i].hash = h;
    t->slots[i].id = t->count;
    if (is_new)
        *is_new = 1;
    return t->count;
}
