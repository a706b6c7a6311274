/*
 * String interning: ids from 1 in order of first use, the same id for the
 * same bytes, distinct ids for distinct bytes (embedded NULs, prefixes,
 * empty string), growth across many strings, and gmt_writer_intern writing
 * each STRING record exactly once.
 */
#include "tutil.h"

int main(void)
{
    gmt_strtab *t = gmt_strtab_create();
    REQUIRE(t != NULL, "create");
    int is_new = -1;
    CHECK(gmt_strtab_count(t) == 0, "empty table");
    CHECK(gmt_strtab_intern(t, "forward", 7, &is_new) == 1 && is_new == 1, "first id is 1");
    CHECK(gmt_strtab_intern(t, "backward", 8, &is_new) == 2 && is_new == 1, "second id is 2");
    CHECK(gmt_strtab_intern(t, "forward", 7, &is_new) == 1 && is_new == 0, "same string, same id");
    CHECK(gmt_strtab_intern(t, "forw", 4, &is_new) == 3 && is_new == 1, "prefix is another string");
    CHECK(gmt_strtab_intern(t, "a\0b", 3, &is_new) == 4 && is_new == 1, "embedded NUL");
    CHECK(gmt_strtab_intern(t, "a\0c", 3, &is_new) == 5 && is_new == 1, "bytes after NUL count");
    CHECK(gmt_strtab_intern(t, "a", 1, &is_new) == 6 && is_new == 1, "shorter than an embedded-NUL string");
    CHECK(gmt_strtab_intern(t, "", 0, &is_new) == 7 && is_new == 1, "empty string");
    CHECK(gmt_strtab_intern(t, NULL, 0, &is_new) == 7 && is_new == 0, "NULL with length 0 is the empty string");
    CHECK(gmt_strtab_intern(t, NULL, 3, &is_new) == 0, "NULL with a length");
    CHECK(gmt_strtab_count(t) == 7, "count");

    /* many strings: growth keeps every id */
    enum { N = 100000 };
    char buf[64];
    for (int i = 0; i < N; i++) {
        int len = snprintf(buf, sizeof buf, "kernel_%d_%x", i, i * 2654435761u);
        uint64_t id = gmt_strtab_intern(t, buf, (size_t)len, &is_new);
        CHECK(id == (uint64_t)(8 + i) && is_new == 1, "new string %d got id %llu", i, (unsigned long long)id);
    }
    for (int i = N - 1; i >= 0; i -= 7) {
        int len = snprintf(buf, sizeof buf, "kernel_%d_%x", i, i * 2654435761u);
        uint64_t id = gmt_strtab_intern(t, buf, (size_t)len, &is_new);
        CHECK(id == (uint64_t)(8 + i) && is_new == 0, "string %d found as %llu", i, (unsigned long long)id);
    }
    CHECK(gmt_strtab_count(t) == 7 + N, "count after growth");
    /* a long name (mangled C++ names run to kilobytes) */
    static char longname[GMT_MAX_STRING * 2];
    memset(longname, 'Z', sizeof longname);
    uint64_t lid = gmt_strtab_intern(t, longname, sizeof longname, &is_new);
    CHECK(lid == 8 + N && is_new == 1, "long name");
    CHECK(gmt_strtab_intern(t, longname, sizeof longname, &is_new) == lid && !is_new, "long name again");
    gmt_strtab_free(t);
    gmt_strtab_free(NULL);

    /* gmt_writer_intern: one STRING record per distinct name */
    char path[256];
    tu_tmp_path(path, sizeof path, "strtab");
    gmt_writer *w = gmt_writer_open(path, NULL);
    REQUIRE(w != NULL, "open %s", path);
    t = gmt_strtab_create();
    REQUIRE(t != NULL, "create");
    const char *names[] = { "gemm", "softmax", "gemm", "gelu", "softmax", "gemm" };
    uint64_t ids[6];
    for (int i = 0; i < 6; i++)
        CHECK(gmt_writer_intern(w, t, names[i], strlen(names[i]), &ids[i]) == GMT_OK, "intern %s", names[i]);
    CHECK(ids[0] == 1 && ids[1] == 2 && ids[2] == 1 && ids[3] == 3 && ids[4] == 2 && ids[5] == 1, "writer ids");
    CHECK(gmt_writer_records(w) == 3, "3 STRING records, got %llu", (unsigned long long)gmt_writer_records(w));
    CHECK(gmt_writer_close(w) == GMT_OK, "close");
    gmt_strtab_free(t);
    gmt_reader *r = gmt_reader_open(path);
    REQUIRE(r != NULL, "reader");
    gmt_record rec;
    int n = 0;
    const char *want[] = { "gemm", "softmax", "gelu" };
    while (gmt_reader_next(r, &rec) > 0) {
        CHECK(n < 3 && rec.type == GMT_REC_STRING && rec.u.string.id == (uint64_t)(n + 1) &&
                  rec.u.string.str.len == strlen(want[n]) && memcmp(rec.u.string.str.ptr, want[n], rec.u.string.str.len) == 0,
              "STRING record %d", n);
        n++;
    }
    CHECK(n == 3, "read %d STRING records", n);
    gmt_reader_close(r);
    unlink(path);
    return tc_result("test_strtab");
}
