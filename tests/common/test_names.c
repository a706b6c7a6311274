/*
 * gmt_dump_name: the flight recorder's dump files, named from the trace's
 * path, as the profiler writes them and the analyzer looks for them.
 * Every expected name is written out by hand.
 */
#include "gmt_names.h"
#include "tutil.h"

static void name_is(const char *path, uint64_t k, int beside, const char *want)
{
    char out[256];
    size_t n = gmt_dump_name(out, sizeof out, path, k, beside);
    CHECK_STR(out, want);
    CHECK(n == strlen(want), "%s dump %llu: length %zu, want %zu", path, (unsigned long long)k, n, strlen(want));
}

int main(void)
{
    /* beside a trace: .oom before the extension, then the dump's number */
    name_is("run.zst", 1, 1, "run.oom.zst");
    name_is("run.zst", 2, 1, "run.oom.2.zst");
    name_is("out/run-0.zst", 12, 1, "out/run-0.oom.12.zst");
    /* the extension is the base name's: a dot in a directory is not one */
    name_is("v1.2/trace", 1, 1, "v1.2/trace.oom");
    name_is("v1.2/trace", 3, 1, "v1.2/trace.oom.3");
    /* a leading dot starts the name, it is not an extension */
    name_is(".hidden", 1, 1, ".hidden.oom");
    name_is("a/.hidden", 2, 1, "a/.hidden.oom.2");
    /* only the last dot: run.tar.zst keeps run.tar */
    name_is("run.tar.zst", 1, 1, "run.tar.oom.zst");
    /* the recorder alone: the trace's name, then NAME.k.EXT */
    name_is("oom.zst", 1, 0, "oom.zst");
    name_is("oom.zst", 0, 0, "oom.zst");
    name_is("oom.zst", 2, 0, "oom.2.zst");
    name_is("dumps/x", 4, 0, "dumps/x.4");
    name_is(NULL, 1, 0, "");

    /* too little room: cut, NUL-terminated, and the whole length returned */
    char small[8];
    memset(small, 'x', sizeof small);
    size_t n = gmt_dump_name(small, sizeof small, "trace.zst", 2, 1);
    CHECK_EQ_U64(n, strlen("trace.oom.2.zst"));
    CHECK_STR(small, "trace.o");
    return tc_result("test_names");
}
