/*
 * Posting events to the writer (post.h).
 */
#include "post.h"

#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "gmp_rt.h"

static int wake_fd = -1;
static _Atomic int ring_wake_pending;

void gmp_wake_open(void) { wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC); }

void gmp_wake_forget(void) { wake_fd = -1; }

int gmp_wake_fd(void) { return wake_fd; }

void gmp_wake(void)
{
    if (wake_fd < 0)
        return;
    uint64_t one = 1;
    ssize_t k = write(wake_fd, &one, sizeof one); /* EAGAIN: already pending */
    (void)k;
}

void gmp_post(gmp_ev *ev)
{
    if (!ev->tid)
        ev->tid = gmp_tid(gmp_self());
    if (!ev->epoch)
        ev->epoch = atomic_load_explicit(&gmp_g.epoch, memory_order_acquire);
    if (!ev->ts)
        ev->ts = gmp_now();
    gmp_post_ready(ev);
}

int gmp_post_ready(const gmp_ev *ev)
{
    uint64_t pos;
    if (gmp_ring_push(&gmp_g.ring, ev, &pos) != 0)
        return -1; /* counted by the ring */
    /* The writer polls the ring on its own; wake it early when the ring is
     * half full so a burst does not overflow it (one wake per burst). Only
     * every 32nd push looks: the size reads the writer's head, a cache line
     * another core writes, a miss on every launch otherwise. */
    if ((pos & 31) == 0 && gmp_ring_size(&gmp_g.ring) > gmp_ring_capacity(&gmp_g.ring) / 2 &&
        !atomic_exchange_explicit(&ring_wake_pending, 1, memory_order_relaxed))
        gmp_wake();
    return 0;
}

void gmp_post_rearm(void) { atomic_store_explicit(&ring_wake_pending, 0, memory_order_relaxed); }
