/*
 * fuzz_analyze: the analyzer (analyzer/, library gma_core) over any input,
 * the way gmem-analyze drives it (analyzer/main.c): every record the reader
 * returns goes to gma_replay_record, then gma_replay_finish, the report in
 * one output format, and on some inputs one extra: the Chrome trace export,
 * the SVG or HTML timeline, the diff of the trace with itself, or the
 * insights (--insights) in place of the report.
 *
 * Input: OPT_BYTES option bytes, then the trace (see opts_from below for the
 * bits: --by, --format, the extra, --sort, --top, --full-names, --window,
 * --step, --device), so that a mutation of one byte moves one option and the
 * fuzzer can try another view of a trace it already knows. A trace that
 * starts like zstd is read as a trace file; anything else is taken as the
 * decompressed record stream and compressed here into one zstd frame first,
 * so that mutations reach the replay instead of dying in zstd.
 *
 * Bounded work per input (docs/reliability.md, "fuzz_analyze's speed"): the
 * input is cut at FZ_MAX_INPUT bytes, the replay stops after FZ_MAX_RECORDS
 * records, the report goes to a memory stream, and in the libFuzzer build
 * large zeroed blocks (the analyzer's 3 MiB closed-range ring, the timeline)
 * are recycled instead of being mapped afresh by AddressSanitizer for every
 * input (block_cache below: recycled blocks are poisoned while unused, so a
 * use after free is still reported).
 *
 * Checked: no crash, no sanitizer report, no leak (libFuzzer), no hang; every
 * print function succeeds; the JSON report and the Chrome export are one
 * well-formed JSON value each (a strict parser below: strings without raw
 * control bytes, valid escapes, numbers as JSON writes them -- no nan or
 * inf); the CSV output has no NUL byte; a trace warning is one non-empty
 * terminated string.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <zstd.h>

#include "fuzz_util.h"
#include "gma.h"
#include "view.h"
#include "insights.h"
#include "gmt_io.h"
#include "export.h"
#include "diff.h"
#include "print.h"

#define OPT_BYTES 4
#define FZ_MAX_INPUT 4096u          /* bytes of an input looked at (scripts pass -max_len=4096) */
#define FZ_MAX_RECORDS (1u << 13)   /* records replayed per trace */
#define JSON_DEPTH 256

/* ---- a strict JSON syntax check -------------------------------------------- */

typedef struct js {
    const char *p, *end;
    const char *err;
} js;

static void js_ws(js *j)
{
    while (j->p < j->end && (*j->p == ' ' || *j->p == '\t' || *j->p == '\n' || *j->p == '\r'))
        j->p++;
}

static int js_fail(js *j, const char *why)
{
    if (!j->err)
        j->err = why;
    return -1;
}

static int js_lit(js *j, const char *w)
{
    size_t n = strlen(w);
    if ((size_t)(j->end - j->p) < n || memcmp(j->p, w, n) != 0)
        return js_fail(j, "bad literal");
    j->p += n;
    return 0;
}

static int js_digits(js *j)
{
    const char *s = j->p;
    while (j->p < j->end && *j->p >= '0' && *j->p <= '9')
        j->p++;
    return j->p > s ? 0 : js_fail(j, "digits expected");
}

static int js_number(js *j)
{
    if (j->p < j->end && *j->p == '-')
        j->p++;
    if (j->p < j->end && *j->p == '0')
        j->p++;
    else if (js_digits(j))
        return -1;
    if (j->p < j->end && *j->p == '.') {
        j->p++;
        if (js_digits(j))
            return -1;
    }
    if (j->p < j->end && (*j->p == 'e' || *j->p == 'E')) {
        j->p++;
        if (j->p < j->end && (*j->p == '+' || *j->p == '-'))
            j->p++;
        if (js_digits(j))
            return -1;
    }
    return 0;
}

static int js_string(js *j)
{
    j->p++; /* the opening quote */
    while (j->p < j->end) {
        unsigned char c = (unsigned char)*j->p++;
        if (c == '"')
            return 0;
        if (c < 0x20)
            return js_fail(j, "raw control byte in a string");
        if (c != '\\')
            continue;
        if (j->p >= j->end)
            break;
        c = (unsigned char)*j->p++;
        if (c == 'u') {
            for (int i = 0; i < 4; i++, j->p++)
                if (j->p >= j->end || !((*j->p >= '0' && *j->p <= '9') || (*j->p >= 'a' && *j->p <= 'f') ||
                                        (*j->p >= 'A' && *j->p <= 'F')))
                    return js_fail(j, "bad \\u escape");
        } else if (!strchr("\"\\/bfnrt", c) || c == 0) {
            return js_fail(j, "bad escape");
        }
    }
    return js_fail(j, "unterminated string");
}

static int js_value(js *j, int depth)
{
    js_ws(j);
    if (j->p >= j->end)
        return js_fail(j, "value expected");
    if (depth > JSON_DEPTH)
        return js_fail(j, "nested too deep");
    char c = *j->p;
    if (c == '"')
        return js_string(j);
    if (c == '{' || c == '[') {
        char close = c == '{' ? '}' : ']';
        j->p++;
        js_ws(j);
        if (j->p < j->end && *j->p == close) {
            j->p++;
            return 0;
        }
        for (;;) {
            if (c == '{') {
                js_ws(j);
                if (j->p >= j->end || *j->p != '"')
                    return js_fail(j, "member name expected");
                if (js_string(j))
                    return -1;
                js_ws(j);
                if (j->p >= j->end || *j->p != ':')
                    return js_fail(j, "':' expected");
                j->p++;
            }
            if (js_value(j, depth + 1))
                return -1;
            js_ws(j);
            if (j->p < j->end && *j->p == ',') {
                j->p++;
                continue;
            }
            if (j->p < j->end && *j->p == close) {
                j->p++;
                return 0;
            }
            return js_fail(j, "',' or a closing bracket expected");
        }
    }
    if (c == 't')
        return js_lit(j, "true");
    if (c == 'f')
        return js_lit(j, "false");
    if (c == 'n')
        return js_lit(j, "null");
    if (c == '-' || (c >= '0' && c <= '9'))
        return js_number(j);
    return js_fail(j, "unexpected character");
}

static void check_json(const char *buf, size_t len, const char *what)
{
    js j = {buf, buf + len, NULL};
    int rc = js_value(&j, 0);
    if (rc == 0) {
        js_ws(&j);
        if (j.p != j.end)
            rc = js_fail(&j, "text after the value");
    }
    if (rc != 0) {
        size_t at = (size_t)(j.p - buf);
        size_t from = at > 60 ? at - 60 : 0;
        FZ_CHECK(0, "%s is not valid JSON (%s) at byte %zu of %zu, near: %.*s", what, j.err, at, len,
                 (int)((at + 20 < len ? at + 20 : len) - from), buf + from);
    }
}

/* ---- recycled large blocks (libFuzzer build) -------------------------------- */

#ifdef FUZZ_BLOCK_CACHE
/*
 * The libFuzzer build links with -Wl,--wrap=calloc,--wrap=free,--wrap=realloc
 * (tests/fuzz/CMakeLists.txt). AddressSanitizer serves every block above
 * 128 KiB with a fresh mmap and unmaps it through its quarantine, so the
 * analyzer's fixed 3 MiB ring (gma_replay_init) cost a few hundred page
 * faults and two shadow memsets per input: most of fuzz_analyze's time.
 * Here a calloc of at least CACHE_MIN bytes takes a cached block of the
 * same size when one is free (zeroed, as calloc promises); free and realloc
 * give it back. A cached block is a real heap block of its exact size, so
 * overflows still hit its redzones; while unused it is poisoned, so a use
 * after free is still reported (as use-after-poison); freeing it twice
 * fails an invariant.
 */
#include <sanitizer/asan_interface.h>

#define CACHE_MIN (256u * 1024u)
#define CACHE_SLOTS 8

void *__real_calloc(size_t n, size_t size);
void __real_free(void *p);
void *__real_realloc(void *p, size_t size);

static struct {
    void *p;
    size_t size;
    int used;
} cache[CACHE_SLOTS];

static int cache_find(const void *p)
{
    for (int i = 0; i < CACHE_SLOTS; i++)
        if (cache[i].p && cache[i].p == p)
            return i;
    return -1;
}

static void cache_release(int i)
{
    FZ_CHECK(cache[i].used, "a cached block (%zu bytes) freed twice", cache[i].size);
    cache[i].used = 0;
    ASAN_POISON_MEMORY_REGION(cache[i].p, cache[i].size);
}

void *__wrap_calloc(size_t n, size_t size);
void *__wrap_calloc(size_t n, size_t size)
{
    if (size && n > SIZE_MAX / size)
        return __real_calloc(n, size);
    size_t total = n * size;
    if (total < CACHE_MIN)
        return __real_calloc(n, size);
    int empty = -1;
    for (int i = 0; i < CACHE_SLOTS; i++) {
        if (cache[i].p && !cache[i].used && cache[i].size == total) {
            cache[i].used = 1;
            ASAN_UNPOISON_MEMORY_REGION(cache[i].p, total);
            memset(cache[i].p, 0, total);
            return cache[i].p;
        }
        if (!cache[i].p && empty < 0)
            empty = i;
    }
    void *p = __real_calloc(n, size);
    if (p && empty >= 0) {
        cache[empty].p = p;
        cache[empty].size = total;
        cache[empty].used = 1;
    }
    return p;
}

void __wrap_free(void *p);
void __wrap_free(void *p)
{
    int i = p ? cache_find(p) : -1;
    if (i >= 0)
        cache_release(i);
    else
        __real_free(p);
}

/* A cached block is never grown in place: realloc gives it back and returns
 * a new block with its contents. */
void *__wrap_realloc(void *p, size_t size);
void *__wrap_realloc(void *p, size_t size)
{
    int i = p ? cache_find(p) : -1;
    if (i < 0)
        return __real_realloc(p, size);
    FZ_CHECK(cache[i].used, "realloc of a freed cached block");
    void *q = malloc(size ? size : 1);
    if (!q)
        return NULL; /* the old block stays valid, as realloc promises */
    memcpy(q, p, size < cache[i].size ? size : cache[i].size);
    cache_release(i);
    return q;
}
#endif

/* ---- the run ----------------------------------------------------------------- */

static ZSTD_CCtx *cctx(void)
{
    static ZSTD_CCtx *c;
    if (!c) {
        c = ZSTD_createCCtx();
        FZ_CHECK(c != NULL, "ZSTD_createCCtx");
        ZSTD_CCtx_setParameter(c, ZSTD_c_compressionLevel, 1);
        ZSTD_CCtx_setParameter(c, ZSTD_c_checksumFlag, 1);
    }
    return c;
}

/* The Chrome exporter opens its output by name: a memfd, reused. */
static const char *chrome_path(int *fd)
{
    static int cfd = -1;
    static char path[64];
    if (cfd < 0) {
        cfd = memfd_create("chrome", MFD_CLOEXEC);
        FZ_CHECK(cfd >= 0, "memfd_create: %s", strerror(errno));
        snprintf(path, sizeof path, "/proc/self/fd/%d", cfd);
    }
    /* Empty, and the shared offset back at 0 (ftruncate keeps it). */
    FZ_CHECK(ftruncate(cfd, 0) == 0 && lseek(cfd, 0, SEEK_SET) == 0, "memfd reset: %s", strerror(errno));
    *fd = cfd;
    return path;
}

static char *fd_read(int fd, size_t *len)
{
    off_t n = lseek(fd, 0, SEEK_END);
    FZ_CHECK(n >= 0, "lseek: %s", strerror(errno));
    char *b = malloc((size_t)n + 1);
    FZ_CHECK(b != NULL, "out of memory");
    FZ_CHECK(pread(fd, b, (size_t)n, 0) == n, "pread: %s", strerror(errno));
    b[n] = '\0';
    *len = (size_t)n;
    return b;
}

/* Replays a trace held in memory as gma_replay_read does; 0 when it had
 * records (then finished), 1 when gmem-analyze would stop with a message. */
static int replay_mem(gma_replay *r, const uint8_t *p, size_t n)
{
    gmt_reader *rd = gmt_reader_open_mem(p, n);
    FZ_CHECK(rd != NULL, "gmt_reader_open_mem: %s", strerror(errno));
    gmt_record rec;
    uint64_t k = 0;
    int oom = 0;
    while (k < FZ_MAX_RECORDS && gmt_reader_next(rd, &rec) > 0) {
        k++;
        if (gma_replay_record(r, &rec) != 0) {
            oom = 1;
            break;
        }
    }
    gmt_reader_end end = *gmt_reader_end_info(rd);
    gmt_reader_close(rd);
    if (oom || r->records == 0)
        return 1;
    FZ_CHECK(gma_replay_finish(r, &end) == 0, "gma_replay_finish failed");
    return 0;
}

enum extra { EXTRA_CHROME, EXTRA_SVG, EXTRA_HTML, EXTRA_DIFF, EXTRA_NONE, EXTRA_INSIGHTS };

/* The options from the first OPT_BYTES bytes (missing bytes read as 0):
 *   b0: bits 0-3 --by (mod 7), bits 4-5 --format (table, csv, json; 3 = table)
 *   b1: bits 0-2 the extra (chrome, svg, html, diff; 5 insights; 4, 6, 7 none), bits 3-5 --sort
 *       (mod 6), bit 6 --sort given, bit 7 --full-names
 *   b2: bits 0-3 --top (0 = every row), bits 4-5 --window (3 = all)
 *   b3: bits 0-2 --step (7 = all), bits 3-4 --device (3 = all)
 * The seeds (gen_corpus.c) use every format and every extra. */
static enum extra opts_from(const uint8_t *b, gma_opts *opt)
{
    memset(opt, 0, sizeof *opt);
    /* the views of the summary report (--by category is a report of its own) */
    opt->by = (gma_by)((b[0] & 15) % GMA_BY_CATEGORY);
    opt->format = (gma_format)(((b[0] >> 4) & 3) % 3);
    enum extra x = (b[1] & 7) < EXTRA_NONE ? (enum extra)(b[1] & 7) : (b[1] & 7) == EXTRA_INSIGHTS ? EXTRA_INSIGHTS : EXTRA_NONE;
    opt->sort = (gma_sort)(((b[1] >> 3) & 7) % GMA_SORT_COUNT_);
    opt->sort_given = (b[1] >> 6) & 1;
    opt->full_names = (b[1] >> 7) & 1;
    opt->top = b[2] & 15;
    opt->window = ((b[2] >> 4) & 3) == 3 ? -1 : (int64_t)((b[2] >> 4) & 3);
    opt->step = (b[3] & 7) == 7 ? -1 : (int64_t)(b[3] & 7);
    opt->device = ((b[3] >> 3) & 3) == 3 ? -1 : (int64_t)((b[3] >> 3) & 3);
    /* What main.c does to the options before it starts. */
    if (!opt->sort_given && (opt->by == GMA_BY_STEP || opt->by == GMA_BY_TAG))
        opt->sort = GMA_SORT_TIME;
    if (x == EXTRA_DIFF && opt->by == GMA_BY_ALLOC)
        x = EXTRA_NONE; /* main.c refuses --diff with --by alloc */
    return x;
}

static void analyze(const uint8_t *trace, size_t n, const gma_opts *opt, enum extra x)
{
    static gma_replay ra, rb; /* large: off the stack, as in main.c */
    int chrome_fd = -1;
    char tl_path[128];
    if (x == EXTRA_SVG || x == EXTRA_HTML)
        snprintf(tl_path, sizeof tl_path, "%s/fuzz_analyze.%d.%s",
                 access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp", (int)getpid(), x == EXTRA_HTML ? "html" : "svg");

    FZ_CHECK(gma_replay_open(&ra, opt, "fuzz-input") == 0, "gma_replay_open");
    if (x == EXTRA_CHROME)
        FZ_CHECK(gma_chrome_open(&ra, chrome_path(&chrome_fd)) == 0, "gma_chrome_open: %s", strerror(errno));
    if (x == EXTRA_SVG || x == EXTRA_HTML)
        FZ_CHECK(gma_timeline_open(&ra, tl_path) == 0, "gma_timeline_open: %s", strerror(errno));
    if (x == EXTRA_INSIGHTS)
        FZ_CHECK(gma_insights_open(&ra) == 0, "gma_insights_open");
    if (replay_mem(&ra, trace, n) != 0) {
        gma_replay_free(&ra);
        if (x == EXTRA_SVG || x == EXTRA_HTML)
            unlink(tl_path);
        return;
    }
    char w[400];
    if (gma_trace_warning(&ra, w, sizeof w))
        FZ_CHECK(memchr(w, '\0', sizeof w) != NULL && w[0], "empty or unterminated warning");

    /* The report goes to a memory stream: no file, no system call. */
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    FZ_CHECK(f != NULL, "open_memstream: %s", strerror(errno));
    if (x == EXTRA_DIFF) {
        FZ_CHECK(gma_replay_open(&rb, opt, "fuzz-input-b") == 0, "gma_replay_open b");
        if (replay_mem(&rb, trace, n) == 0)
            FZ_CHECK(gma_diff_print(f, gma_printer_of(opt->format), &ra, &rb) == 0, "gma_diff_print failed");
        gma_replay_free(&rb);
    } else if (x == EXTRA_INSIGHTS) {
        FZ_CHECK(gma_insights_print(f, gma_printer_of(opt->format), &ra, NULL) == 0, "gma_insights_print failed");
    } else {
        gma_report rep;
        FZ_CHECK(gma_report_build(&rep, &ra) == 0, "gma_report_build failed");
        int perr = opt->format == GMA_FMT_JSON  ? gma_print_json(f, &rep)
                   : opt->format == GMA_FMT_CSV ? gma_print_csv(f, &rep)
                                                : gma_print_table(f, &rep);
        FZ_CHECK(perr == 0, "printing the %s report failed", opt->format == GMA_FMT_JSON ? "json" : "csv/table");
        gma_report_free(&rep);
    }
    FZ_CHECK(fclose(f) == 0, "fclose of the memory stream: %s", strerror(errno));
    if (x == EXTRA_CHROME)
        FZ_CHECK(gma_chrome_close(&ra) == 0, "gma_chrome_close: %s", strerror(errno));
    if (x == EXTRA_SVG || x == EXTRA_HTML)
        FZ_CHECK(gma_timeline_write(&ra) == 0, "gma_timeline_write: %s", strerror(errno));
    gma_replay_free(&ra);

    FZ_CHECK(text != NULL, "open_memstream left no buffer");
    if (x != EXTRA_DIFF && opt->format == GMA_FMT_JSON)
        check_json(text, len, "the --format json report");
    if (x != EXTRA_DIFF && opt->format == GMA_FMT_CSV)
        FZ_CHECK(memchr(text, '\0', len) == NULL, "NUL byte in the CSV report");
    free(text);
    if (x == EXTRA_CHROME) {
        text = fd_read(chrome_fd, &len);
        check_json(text, len, "the Chrome trace export");
        free(text);
    }
    if (x == EXTRA_SVG || x == EXTRA_HTML)
        unlink(tl_path);
}

static int zstd_start(const uint8_t *d, size_t n)
{
    if (n < 4)
        return 0;
    if (d[0] == 0x28 && d[1] == 0xb5 && d[2] == 0x2f && d[3] == 0xfd)
        return 1;
    return (d[0] & 0xf0) == 0x50 && d[1] == 0x2a && d[2] == 0x4d && d[3] == 0x18;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > FZ_MAX_INPUT)
        size = FZ_MAX_INPUT;
    uint8_t ob[OPT_BYTES] = {0};
    size_t k = size < OPT_BYTES ? size : OPT_BYTES;
    memcpy(ob, data, k);
    data += k;
    size -= k;
    gma_opts opt;
    enum extra x = opts_from(ob, &opt);
    if (zstd_start(data, size)) {
        analyze(data, size, &opt, x);
        return 0;
    }
    /* The raw record stream: one zstd frame around it. */
    size_t cap = ZSTD_compressBound(size);
    uint8_t *z = malloc(cap ? cap : 1);
    FZ_CHECK(z != NULL, "out of memory");
    size_t zn = ZSTD_compress2(cctx(), z, cap, data, size);
    FZ_CHECK(!ZSTD_isError(zn), "ZSTD_compress2: %s", ZSTD_getErrorName(zn));
    analyze(z, zn, &opt, x);
    free(z);
    return 0;
}
