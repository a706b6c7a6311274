/*
 * --sqlite OUT: the trace as SQLite tables (export_sqlite.c; the schema is
 * docs/sqlite-schema.md). Registers as a consumer of the replay's events.
 */
#ifndef GMA_EXPORT_SQLITE_H
#define GMA_EXPORT_SQLITE_H

#include "gma.h"

/* Creates the database (under a temporary name) and registers on r; 0, or
 * -1 with msg (cap bytes) saying why (also: built without SQLite). */
int gma_sqlite_open(gma_replay *r, const char *path, char *msg, size_t cap);
/* After the replay: the rows still to write, the summary, then the file
 * renamed into place; 0 with msg the line to show ("wrote ..."), or -1
 * with msg the error (the file is removed). */
int gma_sqlite_finish(gma_replay *r, char *msg, size_t cap);

#endif
