/* The file names that go with a trace (gmt_names.h). */
#include "gmt_names.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#ifndef PROC_SUPER_MAGIC
#define PROC_SUPER_MAGIC 0x9fa0
#endif

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

/* The directory part of p (".", "/" or the text before the last slash). */
static void dir_of(const char *p, char *out, size_t cap)
{
    const char *slash = strrchr(p, '/');
    if (!slash)
        snprintf(out, cap, ".");
    else if (slash == p)
        snprintf(out, cap, "/");
    else
        snprintf(out, cap, "%.*s", (int)(slash - p), p);
}

int gmt_path_names_fd(const char *path)
{
    char cur[PATH_MAX], dir[PATH_MAX], link[PATH_MAX];
    if (!path || strlen(path) >= sizeof cur)
        return 0;
    snprintf(cur, sizeof cur, "%s", path);
    for (int hop = 0; hop < 40; hop++) {
        struct stat ls;
        struct statfs fs;
        dir_of(cur, dir, sizeof dir);
        if (statfs(dir, &fs) == 0 && fs.f_type == PROC_SUPER_MAGIC)
            return 1;
        if (lstat(cur, &ls) != 0 || !S_ISLNK(ls.st_mode))
            return 0;
        ssize_t n = readlink(cur, link, sizeof link - 1);
        if (n <= 0)
            return 0;
        link[n] = '\0';
        if (link[0] == '/')
            snprintf(cur, sizeof cur, "%s", link);
        else if ((size_t)snprintf(cur, sizeof cur, "%s/%s", dir, link) >= sizeof cur)
            return 0;
    }
    return 0;
}
