/*
 * Devices and time (devtime.h).
 */
#include "devtime.h"

gma_dev *gma_dev_get_slow(gma_replay *r, uint64_t d)
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

void gma_note_first(gma_replay *r, uint64_t ts)
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

void gma_sample_update(gma_dev *D, uint64_t ts, uint64_t used, uint64_t total)
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
