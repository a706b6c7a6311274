/* The scenario traces' writer (sc_writer.h). */
#include "sc_writer.h"

#include <stdio.h>
#include <string.h>

int sc_open(sc_tb *b, const char *path)
{
    gmt_writer_opts o = { 3, 1u << 20 };
    b->st = GMT_OK;
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
}

void sc_string(sc_tb *b, uint64_t id, const char *s)
{
    gmt_record r;
    memset(&r, 0, sizeof(r));
    r.type = GMT_REC_STRING;
    r.u.string.id = id;
    r.u.string.str = (gmt_bytes){ s, (uint32_t)strlen(s) };
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
