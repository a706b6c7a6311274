/*
 * Posting events to the writer (post.h).
 */
#include "post.h"

#include <errno.h>
#include <semaphore.h>
#include <string.h>
#include <time.h>

#include "gmp_rt.h"

/* A semaphore, not a descriptor: a program that closes every descriptor
 * and opens its own files must never get the wake-ups written into one. */
static sem_t wake_sem;
static _Atomic int wake_ok;
static _Atomic int ring_wake_pending;

void gmp_wake_open(void) { atomic_store(&wake_ok, sem_init(&wake_sem, 0, 0) == 0); }

void gmp_wake_forget(void) { atomic_store(&wake_ok, 0); }

void gmp_wake(void)
{
    if (atomic_load_explicit(&wake_ok, memory_order_relaxed))
        (void)sem_post(&wake_sem); /* EOVERFLOW: plenty pending already */
}

void gmp_wake_wait(unsigned ms)
{
    struct timespec dl;
    if (!atomic_load_explicit(&wake_ok, memory_order_relaxed)) {
        struct timespec ts = {0, (long)ms * 1000000L};
        nanosleep(&ts, NULL);
        return;
    }
    clock_gettime(CLOCK_REALTIME, &dl);
    dl.tv_nsec += (long)ms * 1000000L;
    while (dl.tv_nsec >= 1000000000L) {
        dl.tv_sec++;
        dl.tv_nsec -= 1000000000L;
    }
    if (sem_timedwait(&wake_sem, &dl) != 0)
        return; /* the time is up (or EINTR) */
    while (sem_trywait(&wake_sem) == 0)
        ; /* one round serves every wake-up made so far */
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
