/*
 * gmt-dump: prints every record of a trace, one line each, then the
 * reader's end status.  A test helper (and a debugging aid), not a product:
 * gmem-analyze is the user-facing tool.
 *   gmt-dump TRACE [--count] [--max N]
 * Exit status: 0 clean end, 1 the reader stopped with an error or found the
 * trace truncated, 2 usage.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gmt_io.h"

static void print_bytes(const gmt_bytes *b)
{
    putchar('"');
    for (uint32_t i = 0; i < b->len && i < 200; i++) {
        unsigned char ch = (unsigned char)b->ptr[i];
        if (ch >= 32 && ch < 127 && ch != '"' && ch != '\\')
            putchar(ch);
        else
            printf("\\x%02x", ch);
    }
    if (b->len > 200)
        printf("...(%u bytes)", b->len);
    putchar('"');
}

#define U(x) ((unsigned long long)(x))

/* The names an OWNER block points to: STRING texts by id, copied as they
 * come (a trace writes a string before the records that name it). */
static char **g_names;
static uint64_t g_nnames;

static void keep_name(const gmt_string *s)
{
    if (s->id == 0 || s->id > (1u << 24))
        return;
    if (s->id >= g_nnames) {
        uint64_t n = g_nnames ? g_nnames : 64;
        while (n <= s->id)
            n *= 2;
        char **p = realloc(g_names, n * sizeof *p);
        if (!p)
            return;
        memset(p + g_nnames, 0, (n - g_nnames) * sizeof *p);
        g_names = p;
        g_nnames = n;
    }
    char *t = malloc(s->str.len + 1u);
    if (!t)
        return;
    memcpy(t, s->str.ptr, s->str.len);
    t[s->str.len] = '\0';
    free(g_names[s->id]);
    g_names[s->id] = t;
}

static void print_record(const gmt_record *r)
{
    printf("%-12s ", gmt_type_name(r->type));
    switch (r->type) {
    case GMT_REC_HEADER: {
        const gmt_header *h = &r->u.header;
        printf("pid=%llu ppid=%llu start_unix_ns=%llu start_ts=%llu rank=%lld local_rank=%lld world_size=%lld "
               "cupti=%llu driver=%llu flags=%llu host=",
               U(h->pid), U(h->ppid), U(h->start_unix_ns), U(h->start_ts), (long long)h->rank,
               (long long)h->local_rank, (long long)h->world_size, U(h->cupti_version), U(h->driver_version),
               U(h->flags));
        print_bytes(&h->host);
        printf(" cmdline=");
        print_bytes(&h->cmdline);
        printf(" config=");
        print_bytes(&h->config);
        printf(" version=");
        print_bytes(&h->profiler_version);
        break;
    }
    case GMT_REC_DEVICE: {
        const gmt_device *d = &r->u.device;
        printf("device=%llu total_mem=%llu sms=%llu cc=%llu.%llu uuid=", U(d->device), U(d->total_mem),
               U(d->sm_count), U(d->cc_major), U(d->cc_minor));
        for (int i = 0; i < 16; i++)
            printf("%02x", d->uuid[i]);
        printf(" name=");
        print_bytes(&d->name);
        break;
    }
    case GMT_REC_STRING:
        printf("id=%llu ", U(r->u.string.id));
        print_bytes(&r->u.string.str);
        keep_name(&r->u.string);
        break;
    case GMT_REC_ALLOC:
    case GMT_REC_FREE: {
        const gmt_mem *m = &r->u.mem;
        printf("ts=%llu dev=%llu addr=0x%llx bytes=%llu kind=%s source=%s flags=%llu corr=%llu stream=%llu "
               "tid=%llu range=%llu seq=%llu step=%llu",
               U(m->ts), U(m->device), U(m->address), U(m->bytes), gmt_mem_kind_name(m->kind),
               gmt_mem_source_name(m->source), U(m->flags), U(m->corr), U(m->stream), U(m->tid), U(m->range),
               U(m->seq), U(m->step));
        break;
    }
    case GMT_REC_KERNEL: {
        const gmt_kernel *k = &r->u.kernel;
        printf("start=%llu end=%llu dev=%llu stream=%llu corr=%llu name=%llu grid=%llux%llux%llu "
               "block=%llux%llux%llu regs=%llu smem=%llu dsmem=%llu lmem=%llu tid=%llu seq=%llu range=%llu step=%llu",
               U(k->start), U(k->end), U(k->device), U(k->stream), U(k->corr), U(k->name), U(k->grid[0]),
               U(k->grid[1]), U(k->grid[2]), U(k->block[0]), U(k->block[1]), U(k->block[2]), U(k->registers),
               U(k->static_smem), U(k->dynamic_smem), U(k->local_mem), U(k->tid), U(k->seq), U(k->range),
               U(k->step));
        break;
    }
    case GMT_REC_MEMCPY:
    case GMT_REC_MEMSET: {
        const gmt_copy *c = &r->u.copy;
        printf("start=%llu end=%llu dev=%llu stream=%llu corr=%llu bytes=%llu copy_kind=%llu src_kind=%llu "
               "dst_kind=%llu tid=%llu step=%llu",
               U(c->start), U(c->end), U(c->device), U(c->stream), U(c->corr), U(c->bytes), U(c->copy_kind),
               U(c->src_kind), U(c->dst_kind), U(c->tid), U(c->step));
        break;
    }
    case GMT_REC_RANGE_BEGIN:
    case GMT_REC_RANGE_END:
        printf("ts=%llu tid=%llu id=%llu parent=%llu name=%llu", U(r->u.range.ts), U(r->u.range.tid),
               U(r->u.range.id), U(r->u.range.parent), U(r->u.range.name));
        break;
    case GMT_REC_MARK:
        printf("ts=%llu tid=%llu name=%llu", U(r->u.mark.ts), U(r->u.mark.tid), U(r->u.mark.name));
        break;
    case GMT_REC_TAG: {
        const gmt_tag *t = &r->u.tag;
        printf("ts=%llu name=%llu step=%llu ndev=%llu", U(t->ts), U(t->name), U(t->step), U(t->ndev));
        for (uint64_t i = 0; i < t->ndev && i < GMT_MAX_TAG_DEVICES; i++)
            printf(" [dev=%llu live=%llu used=%llu free=%llu total=%llu]", U(t->dev[i].device),
                   U(t->dev[i].live_bytes), U(t->dev[i].driver_used), U(t->dev[i].driver_free),
                   U(t->dev[i].driver_total));
        for (uint64_t i = 0; t->has_framework && i < t->ndev && i < GMT_MAX_TAG_DEVICES; i++)
            printf(" [fw dev=%llu allocated=%llu reserved=%llu]", U(t->dev[i].device), U(t->dev[i].fw_allocated),
                   U(t->dev[i].fw_reserved));
        break;
    }
    case GMT_REC_BLOCK: {
        const gmt_block *b = &r->u.block;
        printf("ts=%llu action=%s dev=%llu addr=0x%llx bytes=%llu stream=0x%llx tid=%llu range=%llu seq=%llu "
               "step=%llu flags=%llu pool=%llu requested=%llu", U(b->ts), gmt_block_action_name(b->action), U(b->device),
               U(b->address), U(b->bytes), U(b->stream), U(b->tid), U(b->range), U(b->seq), U(b->step),
               U(b->flags), U(b->pool), U(b->requested));
        if (b->frame || b->stack)
            printf(" frame=%llu stack=%llu", U(b->frame), U(b->stack));
        if (b->action == GMT_BLK_OWNER) /* frame names the owner */
            printf(" owner=\"%s\"", b->frame < g_nnames && g_names[b->frame] ? g_names[b->frame] : "");
        break;
    }
    case GMT_REC_OOM: {
        const gmt_oom *o = &r->u.oom;
        printf("ts=%llu cause=%s dump=%llu dev=%llu bytes=%llu stream=0x%llx tid=%llu range=%llu op=%llu api=%llu "
               "status=%llu step=%llu flags=%llu free=%llu total=%llu fw_allocated=%llu fw_reserved=%llu "
               "live_count=%llu live_bytes=%llu first_step=%llu ring_bytes=%llu",
               U(o->ts), gmt_oom_cause_name(o->cause), U(o->dump), U(o->device), U(o->bytes), U(o->stream), U(o->tid),
               U(o->range), U(o->op), U(o->api), U(o->status), U(o->step), U(o->flags), U(o->driver_free),
               U(o->driver_total), U(o->fw_allocated), U(o->fw_reserved), U(o->live_count), U(o->live_bytes),
               U(o->first_step), U(o->ring_bytes));
        break;
    }
    case GMT_REC_LIVE: {
        const gmt_mem *m = &r->u.live;
        printf("ts=%llu dev=%llu addr=0x%llx bytes=%llu kind=%s source=%s flags=%llu corr=%llu stream=%llu tid=%llu "
               "range=%llu seq=%llu step=%llu", U(m->ts), U(m->device), U(m->address), U(m->bytes),
               gmt_mem_kind_name(m->kind), gmt_mem_source_name(m->source), U(m->flags), U(m->corr), U(m->stream),
               U(m->tid), U(m->range), U(m->seq), U(m->step));
        break;
    }
    case GMT_REC_STEP:
        printf("ts=%llu step=%llu phase=%s source=%s", U(r->u.step.ts), U(r->u.step.step),
               gmt_phase_name(r->u.step.phase), gmt_step_source_name(r->u.step.source));
        break;
    case GMT_REC_WINDOW_BEGIN:
        printf("ts=%llu window=%llu step=%llu baseline_count=%llu baseline_bytes=%llu", U(r->u.wbegin.ts),
               U(r->u.wbegin.window), U(r->u.wbegin.step), U(r->u.wbegin.baseline_count),
               U(r->u.wbegin.baseline_bytes));
        break;
    case GMT_REC_WINDOW_END:
        printf("ts=%llu window=%llu step=%llu reason=%s", U(r->u.wend.ts), U(r->u.wend.window), U(r->u.wend.step),
               gmt_window_end_reason_name(r->u.wend.reason));
        break;
    case GMT_REC_MEMSAMPLE:
        printf("ts=%llu dev=%llu used=%llu free=%llu total=%llu", U(r->u.sample.ts), U(r->u.sample.device),
               U(r->u.sample.used), U(r->u.sample.free_), U(r->u.sample.total));
        break;
    case GMT_REC_STATS: {
        const gmt_stats *s = &r->u.stats;
        printf("ts=%llu written=%llu dropped_cupti=%llu dropped_writer=%llu host_ns=%llu own_dev=%llu "
               "own_host=%llu bytes_written=%llu unmatched_corr=%llu outside_window=%llu",
               U(s->ts), U(s->records_written), U(s->dropped_cupti), U(s->dropped_writer), U(s->host_time_ns),
               U(s->own_device_bytes), U(s->own_host_bytes), U(s->bytes_written), U(s->unmatched_corr),
               U(s->outside_window));
        break;
    }
    case GMT_REC_TRAILER:
        printf("ts=%llu records=%llu status=%llu", U(r->u.trailer.ts), U(r->u.trailer.records),
               U(r->u.trailer.status));
        break;
    default:
        break;
    }
    putchar('\n');
}

int main(int argc, char **argv)
{
    const char *path = NULL;
    int count_only = 0;
    unsigned long long max = ~0ull;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--count") == 0)
            count_only = 1;
        else if (strcmp(argv[i], "--max") == 0 && i + 1 < argc)
            max = strtoull(argv[++i], NULL, 10);
        else if (!path)
            path = argv[i];
        else {
            fprintf(stderr, "usage: gmt-dump TRACE [--count] [--max N]\n");
            return 2;
        }
    }
    if (!path) {
        fprintf(stderr, "usage: gmt-dump TRACE [--count] [--max N]\n");
        return 2;
    }
    gmt_reader *r = gmt_reader_open(path);
    if (!r) {
        fprintf(stderr, "gmt-dump: cannot open %s: %s\n", path, strerror(errno));
        return 1;
    }
    gmt_record rec;
    unsigned long long n = 0;
    int rc;
    while ((rc = gmt_reader_next(r, &rec)) > 0) {
        if (!count_only && n < max)
            print_record(&rec);
        n++;
    }
    const gmt_reader_end *e = gmt_reader_end_info(r);
    fprintf(stderr, "gmt-dump: %llu records, %llu frames, %llu bytes; status %s; %s\n", n,
            (unsigned long long)e->frames, (unsigned long long)e->file_size, gmt_status_str(e->status), e->message);
    int bad = rc < 0 || e->truncated;
    gmt_reader_close(r);
    for (uint64_t i = 0; i < g_nnames; i++)
        free(g_names[i]);
    free(g_names);
    return bad ? 1 : 0;
}
