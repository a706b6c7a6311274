/* The test traces' writer (sc_writer.h). */
#include "sc_writer.h"

#include <stdio.h>
#include <string.h>

int sc_open(sc_tb *b, const char *path)
{
    gmt_writer_opts o = { 3, 1u << 20 };
    b->st = GMT_OK;
    b->n = 0;
    b->w = gmt_writer_open(path, &o);
    if (!b->w) {
        perror(path);
        return -1;
    }
    return 0;
}

void sc_put(sc_tb *b, const gmt_record *r)
{
    if (b->st == GMT_OK)
        b->st = gmt_writer_put(b->w, r);
    b->n++;
}

void sc_string_n(sc_tb *b, uint64_t id, const char *s, size_t n)
{
    gmt_record r;
    memset(&r, 0, sizeof(r));
    r.type = GMT_REC_STRING;
    r.u.string.id = id;
    r.u.string.str = (gmt_bytes){ s, (uint32_t)n };
    sc_put(b, &r);
}

void sc_string(sc_tb *b, uint64_t id, const char *s) { sc_string_n(b, id, s, strlen(s)); }

static gmt_bytes text(const char *s, const char *dflt)
{
    const char *t = s ? s : dflt;
    return (gmt_bytes){ t, (uint32_t)strlen(t) };
}

void sc_header(sc_tb *b, const sc_head *h)
{
    gmt_record r;
    memset(&r, 0, sizeof(r));
    r.type = GMT_REC_HEADER;
    r.u.header.pid = h->pid;
    r.u.header.ppid = 1;
    r.u.header.start_unix_ns = 1700000000000000000ull;
    r.u.header.start_ts = h->start_ts;
    r.u.header.rank = h->rank;
    r.u.header.local_rank = h->rank;
    r.u.header.world_size = h->world;
    r.u.header.host = text(h->host, "testhost");
    r.u.header.cmdline = text(h->cmdline, "python train.py");
    r.u.header.config = text(h->config, "schedule=whole");
    r.u.header.profiler_version = text("test", NULL);
    sc_put(b, &r);
}

void sc_device(sc_tb *b, uint64_t dev, const char *name, uint64_t total_mem)
{
    gmt_record r;
    memset(&r, 0, sizeof(r));
    r.type = GMT_REC_DEVICE;
    r.u.device.device = dev;
    r.u.device.total_mem = total_mem;
    r.u.device.sm_count = 132;
    r.u.device.cc_major = 9;
    r.u.device.name = text(name, "Test GPU");
    sc_put(b, &r);
}

void sc_trailer(sc_tb *b, uint64_t ts, uint64_t records)
{
    gmt_record r;
    memset(&r, 0, sizeof(r));
    r.type = GMT_REC_TRAILER;
    r.u.trailer.ts = ts;
    r.u.trailer.records = records;
    sc_put(b, &r);
}

int sc_close(sc_tb *b, const char *path)
{
    gmt_status c = gmt_writer_close(b->w);
    if (b->st == GMT_OK)
        b->st = c;
    if (b->st != GMT_OK) {
        fprintf(stderr, "%s: %s\n", path, gmt_status_str(b->st));
        return -1;
    }
    return 0;
}
