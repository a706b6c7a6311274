/*
 * The scenario traces' writer (scenarios.c, sc_modules.c): one gmt_writer
 * and the first error it gave, so that a scenario writes its records
 * without a check per record and learns of a failure at the close.
 */
#ifndef GMA_TEST_SC_WRITER_H
#define GMA_TEST_SC_WRITER_H

#include <stdint.h>

#include "gmt_io.h"

typedef struct sc_tb {
    gmt_writer *w;
    gmt_status st; /* the first error, GMT_OK while none */
} sc_tb;

/* Opens path (zstd level 3, 1 MiB frames): 0, or -1 with a message on stderr. */
int sc_open(sc_tb *b, const char *path);
/* Writes r unless an earlier record failed. */
void sc_put(sc_tb *b, const gmt_record *r);
/* A STRING record: id and its text. */
void sc_string(sc_tb *b, uint64_t id, const char *s);
/* Closes the file: 0, or -1 with the first error on stderr. */
int sc_close(sc_tb *b, const char *path);

#endif
