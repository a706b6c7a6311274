/*
 * The recently closed ranges (rhist.h).
 */
#include <stdlib.h>
#include <string.h>

#include "rhist.h"

int gma_rhist_init(gma_rhist *h, size_t cap)
{
    memset(h, 0, sizeof(*h));
    if (!cap || (cap & (cap - 1)))
        return -1;
    h->ring = calloc(cap, sizeof(*h->ring));
    if (!h->ring)
        return -1;
    h->cap = cap;
    return 0;
}

void gma_rhist_free(gma_rhist *h)
{
    gma_map_free(&h->of);
    free(h->ring);
    memset(h, 0, sizeof(*h));
}
