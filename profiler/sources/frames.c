/*
 * Interned frames and stacks (frames.h): texts in chunks of fixed size that
 * never move, so an id published to the ring stays readable by the writer
 * without a lock while other threads intern more.
 */
#include "frames.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#define CHUNK 4096u
#define CHUNKS (GMP_FRAMES_MAX / CHUNK)

typedef struct frame_text {
    size_t n;
    char s[]; /* NUL-terminated */
} frame_text;

static struct {
    pthread_mutex_t mu;
    frame_text *_Atomic *_Atomic chunk[CHUNKS];
    _Atomic uint32_t next; /* ids handed out, the next is next + 1 */
} F = {.mu = PTHREAD_MUTEX_INITIALIZER};

uint32_t gmp_frames_intern(const char *s, size_t n)
{
    if (!s)
        return 0;
    frame_text *t = malloc(sizeof *t + n + 1);
    if (!t)
        return 0;
    t->n = n;
    memcpy(t->s, s, n);
    t->s[n] = '\0';
    uint32_t id = 0;
    pthread_mutex_lock(&F.mu);
    uint32_t i = atomic_load_explicit(&F.next, memory_order_relaxed);
    if (i < GMP_FRAMES_MAX) {
        frame_text *_Atomic *c = atomic_load_explicit(&F.chunk[i / CHUNK], memory_order_relaxed);
        if (!c) {
            c = calloc(CHUNK, sizeof *c);
            if (c)
                atomic_store_explicit(&F.chunk[i / CHUNK], c, memory_order_release);
        }
        if (c) {
            atomic_store_explicit(&c[i % CHUNK], t, memory_order_release);
            atomic_store_explicit(&F.next, i + 1, memory_order_release);
            id = i + 1;
        }
    }
    pthread_mutex_unlock(&F.mu);
    if (!id)
        free(t);
    return id;
}

const char *gmp_frames_get(uint32_t id, size_t *n)
{
    if (!id || id > atomic_load_explicit(&F.next, memory_order_acquire))
        return NULL;
    uint32_t i = id - 1;
    frame_text *_Atomic *c = atomic_load_explicit(&F.chunk[i / CHUNK], memory_order_acquire);
    frame_text *t = c ? atomic_load_explicit(&c[i % CHUNK], memory_order_acquire) : NULL;
    if (!t)
        return NULL;
    if (n)
        *n = t->n;
    return t->s;
}

void gmp_frames_reset(void)
{
    pthread_mutex_lock(&F.mu);
    uint32_t n = atomic_load(&F.next);
    for (uint32_t k = 0; k < CHUNKS && k * CHUNK < n; k++) {
        frame_text *_Atomic *c = atomic_load(&F.chunk[k]);
        for (uint32_t j = 0; c && j < CHUNK; j++)
            free(atomic_load(&c[j]));
        free(c);
        atomic_store(&F.chunk[k], NULL);
    }
    atomic_store(&F.next, 0);
    pthread_mutex_unlock(&F.mu);
}
