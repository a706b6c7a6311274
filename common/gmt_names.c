/* The file names that go with a trace (gmt_names.h). */
#include "gmt_names.h"

#include <stdio.h>
#include <string.h>

size_t gmt_dump_name(char *out, size_t cap, const char *path, uint64_t k, int beside)
{
    if (!path)
        path = "";
    if (k <= 1 && !beside)
        return (size_t)snprintf(out, cap, "%s", path);
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    const char *dot = strrchr(base, '.');
    int stem = dot && dot > base ? (int)(dot - path) : (int)strlen(path);
    char num[24] = "";
    if (k > 1)
        snprintf(num, sizeof num, ".%llu", (unsigned long long)k);
    int n = snprintf(out, cap, "%.*s%s%s%s", stem, path, beside ? ".oom" : "", num, path + stem);
    return n < 0 ? 0 : (size_t)n;
}
