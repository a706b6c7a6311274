/*
 * trace_modules: what a trace says of nn.Module ranges and source frames,
 * as plain facts for the GPU scripts (tests/gpu/torch_modules.py writes
 * what the model knows; the analyzer's --by module and --by line check the
 * two against each other). Independent of gmem-analyze.
 *
 *   trace_modules TRACE [REQUESTED]
 *
 * Prints to stdout, one fact a line:
 *   ranges KIND COUNT          RANGE_BEGINs per kind (nvtx, op, module, module_bwd)
 *   module PATH                each distinct module path (kind 2), sorted
 *   module_bwd PATH            each distinct backward path (kind 3), sorted
 *   allocs N framed M stacked S  framework ALLOCs, how many carry a frame, a stack
 *   largest BYTES FRAME        the largest framework ALLOC and its frame ("-" none)
 *   line BYTES FRAME           ALLOC bytes per frame, the 10 largest
 *   requested N FRAME          with REQUESTED: the frame of the first ALLOC
 *                              that asked for exactly N bytes ("-" none)
 * Exit 0, or 2 when the trace cannot be read.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gmt_io.h"

typedef struct {
    char **v;
    size_t n;
} strs;

static void put_str(strs *s, uint64_t id, gmt_bytes b)
{
    if (id >= s->n) {
        size_t nn = s->n ? s->n : 256;
        while (nn <= id)
            nn *= 2;
        char **p = realloc(s->v, nn * sizeof *p);
        if (!p)
            exit(2);
        memset(p + s->n, 0, (nn - s->n) * sizeof *p);
        s->v = p;
        s->n = nn;
    }
    free(s->v[id]);
    s->v[id] = malloc(b.len + 1);
    if (!s->v[id])
        exit(2);
    memcpy(s->v[id], b.ptr, b.len);
    s->v[id][b.len] = '\0';
}

static const char *str_of(const strs *s, uint64_t id) { return id && id < s->n && s->v[id] ? s->v[id] : "-"; }

typedef struct {
    uint64_t id, bytes;
} acc;

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }
static int cmp_acc(const void *a, const void *b)
{
    const acc *x = a, *y = b;
    return x->bytes < y->bytes ? 1 : x->bytes > y->bytes ? -1 : (x->id > y->id) - (x->id < y->id);
}

int main(int argc, char **argv)
{
    if (argc != 2 && argc != 3) {
        fprintf(stderr, "usage: trace_modules TRACE [REQUESTED]\n");
        return 2;
    }
    gmt_reader *r = gmt_reader_open(argv[1]);
    if (!r) {
        fprintf(stderr, "trace_modules: cannot read %s\n", argv[1]);
        return 2;
    }
    strs s = {0};
    uint64_t kinds[GMT_RANGE_KIND_COUNT_] = {0}, allocs = 0, framed = 0, stacked = 0, big = 0, big_frame = 0;
    uint64_t want = argc == 3 ? strtoull(argv[2], NULL, 10) : 0, want_frame = 0;
    int want_seen = 0;
    uint64_t *names[2] = {NULL, NULL};
    size_t nn[2] = {0, 0}, cn[2] = {0, 0};
    acc *lines = NULL;
    size_t nl = 0, cl = 0;
    gmt_record rec;
    int k;
    while ((k = gmt_reader_next(r, &rec)) > 0) {
        if (rec.type == GMT_REC_STRING) {
            put_str(&s, rec.u.string.id, rec.u.string.str);
        } else if (rec.type == GMT_REC_RANGE_BEGIN && rec.u.range.kind < GMT_RANGE_KIND_COUNT_) {
            kinds[rec.u.range.kind]++;
            if (rec.u.range.kind >= GMT_RANGE_MODULE) {
                int b = rec.u.range.kind == GMT_RANGE_MODULE_BWD;
                if (nn[b] == cn[b]) {
                    cn[b] = cn[b] ? cn[b] * 2 : 64;
                    names[b] = realloc(names[b], cn[b] * sizeof *names[b]);
                    if (!names[b])
                        return 2;
                }
                names[b][nn[b]++] = rec.u.range.name;
            }
        } else if (rec.type == GMT_REC_BLOCK && rec.u.block.action == GMT_BLK_ALLOC &&
                   !(rec.u.block.flags & GMT_BLKF_BASELINE)) {
            allocs++;
            if (want && !want_seen && rec.u.block.requested == want) {
                want_seen = 1;
                want_frame = rec.u.block.frame;
            }
            framed += rec.u.block.frame != 0;
            stacked += rec.u.block.stack != 0;
            if (rec.u.block.bytes > big) {
                big = rec.u.block.bytes;
                big_frame = rec.u.block.frame;
            }
            size_t i = 0;
            while (i < nl && lines[i].id != rec.u.block.frame)
                i++;
            if (i == nl) {
                if (nl == cl) {
                    cl = cl ? cl * 2 : 64;
                    lines = realloc(lines, cl * sizeof *lines);
                    if (!lines)
                        return 2;
                }
                lines[nl++] = (acc){rec.u.block.frame, 0};
            }
            lines[i].bytes += rec.u.block.bytes;
        }
    }
    gmt_reader_close(r);
    if (k < 0) {
        fprintf(stderr, "trace_modules: %s is damaged\n", argv[1]);
        return 2;
    }
    static const char *kname[] = {"nvtx", "op", "module", "module_bwd"};
    for (int i = 0; i < GMT_RANGE_KIND_COUNT_; i++)
        printf("ranges %s %llu\n", kname[i], (unsigned long long)kinds[i]);
    for (int b = 0; b < 2; b++) {
        const char **p = malloc((nn[b] + 1) * sizeof *p);
        if (!p)
            return 2;
        for (size_t i = 0; i < nn[b]; i++)
            p[i] = str_of(&s, names[b][i]);
        qsort(p, nn[b], sizeof *p, cmp_str);
        for (size_t i = 0; i < nn[b]; i++)
            if (i == 0 || strcmp(p[i], p[i - 1]) != 0)
                printf("%s %s\n", b ? "module_bwd" : "module", p[i]);
        free(p);
    }
    printf("allocs %llu framed %llu stacked %llu\n", (unsigned long long)allocs, (unsigned long long)framed,
           (unsigned long long)stacked);
    printf("largest %llu %s\n", (unsigned long long)big, str_of(&s, big_frame));
    if (want)
        printf("requested %llu %s\n", (unsigned long long)want, want_seen ? str_of(&s, want_frame) : "-");
    qsort(lines, nl, sizeof *lines, cmp_acc);
    for (size_t i = 0; i < nl && i < 10; i++)
        printf("line %llu %s\n", (unsigned long long)lines[i].bytes, str_of(&s, lines[i].id));
    return 0;
}
