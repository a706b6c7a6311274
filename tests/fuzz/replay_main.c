/*
 * Replay driver: a main() for a fuzz target built without libFuzzer (gcc, or
 * GMEMPROF_FUZZ=OFF). Runs LLVMFuzzerTestOneInput once over every file named
 * on the command line; a directory stands for the regular files in it, in
 * name order. A failed invariant aborts (the test fails); a clean run prints
 * how many inputs it replayed (none at all is a failure: a missing corpus
 * must not pass silently).
 *
 *   fuzz_reader tests/fuzz/corpus/reader crash-1234
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz_util.h"

static int run_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "replay: cannot open %s: %s\n", path, strerror(errno));
        return -1;
    }
    size_t cap = 4096, len = 0;
    uint8_t *buf = malloc(cap);
    for (;;) {
        if (!buf) {
            fclose(f);
            fprintf(stderr, "replay: out of memory reading %s\n", path);
            return -1;
        }
        size_t n = fread(buf + len, 1, cap - len, f);
        len += n;
        if (n == 0)
            break;
        if (len == cap) {
            cap *= 2;
            uint8_t *nb = realloc(buf, cap);
            if (!nb)
                free(buf);
            buf = nb;
        }
    }
    int bad = ferror(f);
    fclose(f);
    if (bad) {
        fprintf(stderr, "replay: read error on %s\n", path);
        free(buf);
        return -1;
    }
    /* A copy of exactly len bytes: ASan then sees a read one past the input. */
    uint8_t *exact = malloc(len ? len : 1);
    if (!exact) {
        free(buf);
        return -1;
    }
    memcpy(exact, buf, len);
    free(buf);
    LLVMFuzzerTestOneInput(exact, len);
    free(exact);
    return 0;
}

static int cmp_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Runs every regular file of dir in name order; returns files run or -1. */
static long run_dir(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d) {
        fprintf(stderr, "replay: cannot open directory %s: %s\n", dir, strerror(errno));
        return -1;
    }
    char **names = NULL;
    size_t n = 0, cap = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        if (n == cap) {
            cap = cap ? cap * 2 : 64;
            char **nn = realloc(names, cap * sizeof *nn);
            if (!nn)
                break;
            names = nn;
        }
        names[n] = malloc(strlen(dir) + strlen(e->d_name) + 2);
        if (!names[n])
            break;
        sprintf(names[n], "%s/%s", dir, e->d_name);
        n++;
    }
    closedir(d);
    qsort(names, n, sizeof *names, cmp_names);
    long ran = 0;
    for (size_t i = 0; i < n; i++) {
        struct stat st;
        if (stat(names[i], &st) == 0 && S_ISREG(st.st_mode)) {
            if (run_file(names[i]) != 0)
                ran = -1;
            else if (ran >= 0)
                ran++;
        }
        free(names[i]);
    }
    free(names);
    return ran;
}

int main(int argc, char **argv)
{
    long total = 0;
    int failed = 0;
    if (argc < 2) {
        fprintf(stderr, "usage: %s FILE|DIR...\n", argv[0]);
        return 2;
    }
    for (int i = 1; i < argc; i++) {
        struct stat st;
        if (stat(argv[i], &st) != 0) {
            fprintf(stderr, "replay: %s: %s\n", argv[i], strerror(errno));
            failed = 1;
            continue;
        }
        if (S_ISDIR(st.st_mode)) {
            long k = run_dir(argv[i]);
            if (k < 0)
                failed = 1;
            else
                total += k;
        } else if (run_file(argv[i]) != 0) {
            failed = 1;
        } else {
            total++;
        }
    }
    fprintf(stderr, "replay: %ld inputs replayed%s\n", total, failed ? ", some could not be read" : "");
    /* Replaying nothing proves nothing: an empty corpus is a failure. */
    return failed || total == 0 ? 1 : 0;
}
