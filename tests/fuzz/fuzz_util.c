/*
 * Shared fuzz helpers (see fuzz_util.h).
 */
#include "fuzz_util.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void fz_fail(const char *file, int line, const char *cond, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "\nFUZZ INVARIANT FAILED at %s:%d: %s\n  ", file, line, cond);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    fflush(stderr);
    abort();
}

int fz_known(const char *id)
{
    static const char *list;
    static int loaded;
    if (!loaded) {
        list = getenv("FUZZ_KNOWN_FINDINGS");
        loaded = 1;
    }
    if (!list || !id || !id[0])
        return 0;
    size_t n = strlen(id);
    for (const char *p = list; *p;) {
        const char *end = strchr(p, ',');
        size_t k = end ? (size_t)(end - p) : strlen(p);
        if (k == n && strncmp(p, id, n) == 0)
            return 1;
        if (!end)
            break;
        p = end + 1;
    }
    return 0;
}

uint64_t fz_hash_bytes(uint64_t h, const void *p, size_t n)
{
    const uint8_t *b = p;
    for (size_t i = 0; i < n; i++) {
        h ^= b[i];
        h *= 0x100000001b3ull;
    }
    return h;
}

uint64_t fz_hash_u64(uint64_t h, uint64_t v)
{
    uint8_t b[8];
    for (int i = 0; i < 8; i++)
        b[i] = (uint8_t)(v >> (8 * i));
    return fz_hash_bytes(h, b, sizeof b);
}

static uint64_t hash_str(uint64_t h, const gmt_bytes *s)
{
    h = fz_hash_u64(h, s->len);
    return fz_hash_bytes(h, s->ptr, s->len);
}

#define HV(x) (h = fz_hash_u64(h, (uint64_t)(x)))

uint64_t fz_record_digest(const gmt_record *r)
{
    uint64_t h = FZ_FNV_INIT;
    HV(r->type);
    switch (r->type) {
    case GMT_REC_HEADER: {
        const gmt_header *x = &r->u.header;
        HV(x->pid);
        HV(x->ppid);
        HV(x->start_unix_ns);
        HV(x->start_ts);
        HV(x->rank);
        HV(x->local_rank);
        HV(x->world_size);
        HV(x->cupti_version);
        HV(x->driver_version);
        HV(x->flags);
        h = hash_str(h, &x->host);
        h = hash_str(h, &x->cmdline);
        h = hash_str(h, &x->config);
        h = hash_str(h, &x->profiler_version);
        break;
    }
    case GMT_REC_DEVICE: {
        const gmt_device *x = &r->u.device;
        HV(x->device);
        HV(x->total_mem);
        HV(x->sm_count);
        HV(x->cc_major);
        HV(x->cc_minor);
        h = fz_hash_bytes(h, x->uuid, sizeof x->uuid);
        h = hash_str(h, &x->name);
        break;
    }
    case GMT_REC_STRING:
        HV(r->u.string.id);
        h = hash_str(h, &r->u.string.str);
        break;
    case GMT_REC_ALLOC:
    case GMT_REC_FREE: {
        const gmt_mem *x = &r->u.mem;
        HV(x->ts);
        HV(x->device);
        HV(x->address);
        HV(x->bytes);
        HV(x->kind);
        HV(x->source);
        HV(x->flags);
        HV(x->corr);
        HV(x->stream);
        HV(x->tid);
        HV(x->range);
        HV(x->seq);
        HV(x->step);
        break;
    }
    case GMT_REC_KERNEL: {
        const gmt_kernel *x = &r->u.kernel;
        HV(x->start);
        HV(x->end);
        HV(x->device);
        HV(x->stream);
        HV(x->corr);
        HV(x->name);
        for (int i = 0; i < 3; i++)
            HV(x->grid[i]);
        for (int i = 0; i < 3; i++)
            HV(x->block[i]);
        HV(x->registers);
        HV(x->static_smem);
        HV(x->dynamic_smem);
        HV(x->local_mem);
        HV(x->tid);
        HV(x->seq);
        HV(x->range);
        HV(x->step);
        break;
    }
    case GMT_REC_MEMCPY:
    case GMT_REC_MEMSET: {
        const gmt_copy *x = &r->u.copy;
        HV(x->start);
        HV(x->end);
        HV(x->device);
        HV(x->stream);
        HV(x->corr);
        HV(x->bytes);
        HV(x->copy_kind);
        HV(x->src_kind);
        HV(x->dst_kind);
        HV(x->tid);
        HV(x->step);
        break;
    }
    case GMT_REC_RANGE_BEGIN:
    case GMT_REC_RANGE_END: {
        const gmt_range *x = &r->u.range;
        HV(x->ts);
        HV(x->tid);
        HV(x->id);
        if (r->type == GMT_REC_RANGE_BEGIN) {
            HV(x->parent);
            HV(x->name);
        }
        break;
    }
    case GMT_REC_MARK:
        HV(r->u.mark.ts);
        HV(r->u.mark.tid);
        HV(r->u.mark.name);
        break;
    case GMT_REC_TAG: {
        const gmt_tag *x = &r->u.tag;
        HV(x->ts);
        HV(x->name);
        HV(x->step);
        HV(x->ndev);
        for (uint64_t i = 0; i < x->ndev && i < GMT_MAX_TAG_DEVICES; i++) {
            HV(x->dev[i].device);
            HV(x->dev[i].live_bytes);
            HV(x->dev[i].driver_used);
            HV(x->dev[i].driver_free);
            HV(x->dev[i].driver_total);
        }
        break;
    }
    case GMT_REC_STEP:
        HV(r->u.step.ts);
        HV(r->u.step.step);
        HV(r->u.step.phase);
        HV(r->u.step.source);
        break;
    case GMT_REC_WINDOW_BEGIN:
        HV(r->u.wbegin.ts);
        HV(r->u.wbegin.window);
        HV(r->u.wbegin.step);
        HV(r->u.wbegin.baseline_count);
        HV(r->u.wbegin.baseline_bytes);
        break;
    case GMT_REC_WINDOW_END:
        HV(r->u.wend.ts);
        HV(r->u.wend.window);
        HV(r->u.wend.step);
        HV(r->u.wend.reason);
        break;
    case GMT_REC_MEMSAMPLE:
        HV(r->u.sample.ts);
        HV(r->u.sample.device);
        HV(r->u.sample.used);
        HV(r->u.sample.free_);
        HV(r->u.sample.total);
        break;
    case GMT_REC_STATS: {
        const gmt_stats *x = &r->u.stats;
        HV(x->ts);
        HV(x->records_written);
        HV(x->dropped_cupti);
        HV(x->dropped_writer);
        HV(x->host_time_ns);
        HV(x->own_device_bytes);
        HV(x->own_host_bytes);
        HV(x->bytes_written);
        HV(x->unmatched_corr);
        HV(x->outside_window);
        break;
    }
    case GMT_REC_TRAILER:
        HV(r->u.trailer.ts);
        HV(r->u.trailer.records);
        HV(r->u.trailer.status);
        break;
    default:
        break;
    }
    return h;
}

size_t fz_record_strings(const gmt_record *r, const gmt_bytes **out)
{
    switch (r->type) {
    case GMT_REC_HEADER:
        out[0] = &r->u.header.host;
        out[1] = &r->u.header.cmdline;
        out[2] = &r->u.header.config;
        out[3] = &r->u.header.profiler_version;
        return 4;
    case GMT_REC_DEVICE:
        out[0] = &r->u.device.name;
        return 1;
    case GMT_REC_STRING:
        out[0] = &r->u.string.str;
        return 1;
    default:
        return 0;
    }
}

void fz_record_check(const gmt_record *r, const uint8_t *lo, const uint8_t *hi)
{
    FZ_CHECK(gmt_type_is_record((unsigned)r->type), "record type %d returned",
             (int)r->type);
    const gmt_bytes *s[4];
    size_t n = fz_record_strings(r, s);
    for (size_t i = 0; i < n; i++) {
        FZ_CHECK(s[i]->ptr != NULL, "%s string %zu has a NULL pointer", gmt_type_name(r->type), i);
        FZ_CHECK(s[i]->len <= GMT_MAX_STRING, "%s string %zu has len %u > GMT_MAX_STRING",
                 gmt_type_name(r->type), i, (unsigned)s[i]->len);
        if (lo && s[i]->len > 0) {
            const uint8_t *p = (const uint8_t *)s[i]->ptr;
            FZ_CHECK(p >= lo && p + s[i]->len <= hi, "%s string %zu lies outside its record",
                     gmt_type_name(r->type), i);
        }
        /* Read every byte: ASan reports a string that runs past its buffer. */
        volatile uint8_t sink = 0;
        for (uint32_t k = 0; k < s[i]->len; k++)
            sink ^= (uint8_t)s[i]->ptr[k];
        (void)sink;
    }
    if (r->type == GMT_REC_TAG)
        FZ_CHECK(r->u.tag.ndev <= GMT_MAX_TAG_DEVICES, "TAG ndev %llu > %u",
                 (unsigned long long)r->u.tag.ndev, GMT_MAX_TAG_DEVICES);
}
