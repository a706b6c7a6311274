/*
 * The test traces' writer (scenarios.c, sc_modules.c, tl_bridge.c and the
 * gma_mk* generators): one gmt_writer and the first error it gave, so that
 * a trace is written without a check per record and learns of a failure at
 * the close; and the records every test trace opens and ends with.
 */
#ifndef GMA_TEST_SC_WRITER_H
#define GMA_TEST_SC_WRITER_H

#include <stddef.h>
#include <stdint.h>

#include "gmt_io.h"

typedef struct sc_tb {
    gmt_writer *w;
    gmt_status st; /* the first error, GMT_OK while none */
    uint64_t n;    /* records put */
} sc_tb;

/* A test trace's HEADER: profiler "test", started at Unix time
 * 1700000000000000000 ns and trace time start_ts. */
typedef struct sc_head {
    uint64_t pid, start_ts;
    const char *cmdline; /* NULL: "python train.py" */
    const char *config;  /* NULL: "schedule=whole" */
    const char *host;    /* NULL: "testhost" */
    int64_t rank, world; /* -1: none; the local rank is the rank */
} sc_head;
#define SC_HEAD(pid_, start_ts_) ((sc_head){ .pid = (pid_), .start_ts = (start_ts_), .rank = -1, .world = -1 })

/* Opens path (zstd level 3, 1 MiB frames): 0, or -1 with a message on stderr. */
int sc_open(sc_tb *b, const char *path);
/* Writes r unless an earlier record failed. */
void sc_put(sc_tb *b, const gmt_record *r);
/* A STRING record: id and its text. */
void sc_string(sc_tb *b, uint64_t id, const char *s);
/* The same with the text's length given (it need not end in a NUL). */
void sc_string_n(sc_tb *b, uint64_t id, const char *s, size_t n);
void sc_header(sc_tb *b, const sc_head *h);
/* A DEVICE record: 132 SMs, compute capability 9; name NULL: "Test GPU". */
void sc_device(sc_tb *b, uint64_t dev, const char *name, uint64_t total_mem);
/* The TRAILER: its time and the records before it. */
void sc_trailer(sc_tb *b, uint64_t ts, uint64_t records);
/* Closes the file: 0, or -1 with the first error on stderr. */
int sc_close(sc_tb *b, const char *path);

#endif
