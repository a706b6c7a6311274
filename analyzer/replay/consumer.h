/*
 * Consumers of the replay: what the replay publishes as it goes through a
 * trace, in the manner of perf's struct perf_tool. A consumer (the Chrome
 * export, the timeline, insights) fills a table of callbacks, any of them
 * NULL, and registers it on a replay with a context, its state, which
 * gma_replay_consumer_ctx gives back to its callbacks; the replay calls the
 * callbacks of the registered tables, in registration order, and names no
 * consumer. With no consumer registered, each event costs the replay one
 * branch. A consumer of the rare records only (a trace's failures) sets
 * `rare`: it is kept off the per-event loop.
 */
#ifndef GMA_CONSUMER_H
#define GMA_CONSUMER_H

#include "gma.h"

/* What a consumer needs the replay to keep that it would not otherwise. */
#define GMA_NEED_TAG_ROWS 1u /* a row per tag even without --by tag */

typedef struct gma_consumer {
    unsigned needs; /* GMA_NEED_* */
    int rare;       /* takes only failure and live_rec (and release) */
    /* Records, as they are replayed (sel: inside the selection) */
    void (*device)(gma_replay *r, uint64_t dev);
    void (*kernel)(gma_replay *r, const gmt_kernel *k);          /* every kernel, before attribution */
    void (*kernel_selected)(gma_replay *r, const gmt_kernel *k); /* a selected kernel, accounted */
    void (*copy)(gma_replay *r, const gmt_copy *c, int is_memset);
    void (*range)(gma_replay *r, const gmt_range *g); /* every range begin */
    void (*range_end)(gma_replay *r, const gmt_range *g); /* every range end (id and ts) */
    /* an accounted range instance ended */
    void (*range_closed)(gma_replay *r, uint64_t tid, uint32_t name, uint64_t begin, uint64_t end);
    void (*mark)(gma_replay *r, uint64_t tid, uint32_t name, uint64_t ts); /* in a selected window */
    void (*step)(gma_replay *r, const gmt_step *s);                         /* a step in the selection */
    void (*tag)(gma_replay *r, const gmt_tag *t);
    void (*window)(gma_replay *r, uint64_t id, uint64_t ts, int begin); /* a selected window */
    void (*sample)(gma_replay *r, uint64_t dev, uint64_t ts, uint64_t used); /* the driver's used memory */
    void (*block)(gma_replay *r, const gmt_block *b);
    /* blocks layer: a CUDA allocation or free on a selected device, not taken as an allocation */
    void (*cuda)(gma_replay *r, const gmt_mem *m, int is_alloc);
    /* The live set of device memory (not host) */
    void (*live)(gma_replay *r, uint64_t dev, uint64_t ts, uint64_t live); /* a device's accounted level */
    /* an allocation entered (pending: its kernel comes with settle(key)) */
    void (*alloc)(gma_replay *r, const gma_entry *e, const gmt_mem *m, int pending, uint64_t key);
    void (*free)(gma_replay *r, const gma_entry *e, uint64_t ts); /* an entry leaves, before accounting */
    void (*freed)(gma_replay *r, const gma_entry *e, const gmt_mem *m, uint64_t ord); /* ... accounted */
    void (*dropped)(gma_replay *r, const gma_entry *e); /* an entry died without its free */
    void (*settle)(gma_replay *r, uint64_t key, uint32_t kname); /* a kernel wait resolved */
    /* A failure (OOM record) and each LIVE record of the dump after it */
    void (*failure)(gma_replay *r, const gmt_oom *o);
    void (*live_rec)(gma_replay *r, const gmt_mem *m);
    /* an entry died (freed, replaced, or dropped by a window begin), device
     * or host memory: its row is final but for a kernel still to settle */
    void (*ended)(gma_replay *r, const gma_entry *e);
    /* Frees the consumer's state (gma_replay_free). */
    void (*release)(gma_replay *r);
} gma_consumer;

/* Registers c on r with its context (at most GMA_MAX_CONSUMERS of each
 * kind); 0, or -1 when full. A table already registered is not added
 * twice. gma_replay_consumer_add registers with no context. */
int gma_replay_consumer_add_ctx(gma_replay *r, const gma_consumer *c, void *ctx);
int gma_replay_consumer_add(gma_replay *r, const gma_consumer *c);
/* The context c was registered with on r (NULL: none, or not registered). */
void *gma_replay_consumer_ctx(const gma_replay *r, const gma_consumer *c);
/* Unregisters c (nothing when it is not registered). */
void gma_replay_consumer_remove(gma_replay *r, const gma_consumer *c);

/* For a consumer's callback: the entry live at (dev, addr) now (a block an
 * OWNER record names), its index in r->entries, or UINT32_MAX (liveset.c). */
uint32_t gma_live_entry(const gma_replay *r, uint64_t dev, uint64_t addr);

#endif
