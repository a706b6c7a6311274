/*
 * fuzz_analyze: the analyzer (analyzer/, library gma_core) over any input,
 * the way gmem-analyze drives it (analyzer/main.c): every record the reader
 * returns goes to gma_replay_record, then gma_replay_finish, the report and
 * one output format; on some inputs also the Chrome trace export, the
 * SVG/HTML timeline and the diff of the trace with itself. The options
 * (--by, --sort, --top, --format, --window, --step, --device, --full-names)
 * come from the input's hash.
 *
 * An input that starts like zstd is read as a trace file; any other input is
 * taken as the decompressed record stream and compressed here into one zstd
 * frame first, so that mutations reach the replay instead of dying in zstd.
 *
 * Checked: no crash, no sanitizer report, no leak (libFuzzer), no hang; every
 * print function succeeds; the JSON report and the Chrome export are one
 * well-formed JSON value each (a strict parser below: strings without raw
 * control bytes, valid escapes, numbers as JSON writes them -- no nan or
 * inf); the CSV output has no NUL byte.
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
#include "gmt_io.h"
#include "export.h"
#include "report.h"

#define MAX_RECORDS (1u << 18)
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

/* A file in memory that the exporters can open by name. */
typedef struct memfile {
    int fd;
    char path[64];
} memfile;

static void memfile_reset(memfile *m, const char *name)
{
    if (m->fd <= 0) {
        m->fd = memfd_create(name, MFD_CLOEXEC);
        FZ_CHECK(m->fd >= 0, "memfd_create: %s", strerror(errno));
        snprintf(m->path, sizeof m->path, "/proc/self/fd/%d", m->fd);
    }
    /* Empty, and the shared offset back at 0 (ftruncate keeps it). */
    FZ_CHECK(ftruncate(m->fd, 0) == 0 && lseek(m->fd, 0, SEEK_SET) == 0, "memfd reset: %s", strerror(errno));
}

static char *memfile_read(memfile *m, size_t *len)
{
    off_t n = lseek(m->fd, 0, SEEK_END);
    FZ_CHECK(n >= 0, "lseek: %s", strerror(errno));
    char *b = malloc((size_t)n + 1);
    FZ_CHECK(b != NULL, "out of memory");
    FZ_CHECK(pread(m->fd, b, (size_t)n, 0) == n, "pread: %s", strerror(errno));
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
    while (k < MAX_RECORDS && gmt_reader_next(rd, &rec) > 0) {
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

static void analyze(const uint8_t *trace, size_t n, uint64_t h)
{
    static memfile out, chrome;
    static gma_replay ra, rb; /* large: off the stack, as in main.c */
    gma_opts opt;
    memset(&opt, 0, sizeof opt);
    opt.by = (gma_by)(h % GMA_BY_COUNT_);
    opt.sort = (gma_sort)((h >> 4) % GMA_SORT_COUNT_);
    opt.sort_given = (int)((h >> 8) & 1);
    opt.top = ((h >> 9) & 3) == 0 ? 0 : (h >> 11) % 12;
    opt.format = (gma_format)((h >> 15) % 3);
    opt.window = ((h >> 17) & 3) == 0 ? (int64_t)((h >> 19) % 3) : -1;
    opt.step = ((h >> 21) & 3) == 0 ? (int64_t)((h >> 23) % 5) : -1;
    opt.device = ((h >> 26) & 7) == 0 ? (int64_t)((h >> 29) % 3) : -1;
    opt.full_names = (int)((h >> 31) & 1);
    /* What main.c does to the options before it starts. */
    if (!opt.sort_given && (opt.by == GMA_BY_STEP || opt.by == GMA_BY_TAG))
        opt.sort = GMA_SORT_TIME;
    int with_chrome = ((h >> 33) & 7) == 0;
    int with_timeline = ((h >> 36) & 7) == 0;
    int with_diff = ((h >> 39) & 7) == 0 && opt.by != GMA_BY_ALLOC;
    char tl_path[128];
    snprintf(tl_path, sizeof tl_path, "%s/fuzz_analyze.%d.%s", access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp",
             (int)getpid(), (h >> 42) & 1 ? "html" : "svg");

    FZ_CHECK(gma_replay_init(&ra, &opt, "fuzz-input") == 0, "gma_replay_init");
    if (with_chrome) {
        memfile_reset(&chrome, "chrome");
        FZ_CHECK(gma_chrome_open(&ra, chrome.path) == 0, "gma_chrome_open: %s", strerror(errno));
    }
    if (with_timeline)
        FZ_CHECK(gma_timeline_open(&ra, tl_path) == 0, "gma_timeline_open: %s", strerror(errno));
    if (replay_mem(&ra, trace, n) != 0) {
        gma_replay_free(&ra);
        return;
    }
    char w[400];
    if (gma_trace_warning(&ra, w, sizeof w))
        FZ_CHECK(memchr(w, '\0', sizeof w) != NULL && w[0], "empty or unterminated warning");

    memfile_reset(&out, "report");
    FILE *f = fdopen(dup(out.fd), "w");
    FZ_CHECK(f != NULL, "fdopen: %s", strerror(errno));
    int have_b = 0;
    if (with_diff) {
        FZ_CHECK(gma_replay_init(&rb, &opt, "fuzz-input-b") == 0, "gma_replay_init b");
        have_b = 1;
        if (replay_mem(&rb, trace, n) == 0)
            FZ_CHECK(gma_diff_print(f, &ra, &rb) == 0, "gma_diff_print failed");
    } else {
        gma_report rep;
        FZ_CHECK(gma_report_build(&rep, &ra) == 0, "gma_report_build failed");
        int perr = opt.format == GMA_FMT_JSON  ? gma_print_json(f, &rep)
                   : opt.format == GMA_FMT_CSV ? gma_print_csv(f, &rep)
                                               : gma_print_table(f, &rep);
        FZ_CHECK(perr == 0, "printing the %s report failed", opt.format == GMA_FMT_JSON ? "json" : "csv/table");
        gma_report_free(&rep);
    }
    FZ_CHECK(fclose(f) == 0, "fclose: %s", strerror(errno));
    if (with_chrome)
        FZ_CHECK(gma_chrome_close(&ra) == 0, "gma_chrome_close: %s", strerror(errno));
    if (with_timeline)
        FZ_CHECK(gma_timeline_write(&ra) == 0, "gma_timeline_write: %s", strerror(errno));
    gma_replay_free(&ra);
    if (have_b)
        gma_replay_free(&rb);

    size_t len;
    char *text = memfile_read(&out, &len);
    if (!with_diff && opt.format == GMA_FMT_JSON)
        check_json(text, len, "the --format json report");
    if (!with_diff && opt.format == GMA_FMT_CSV)
        FZ_CHECK(memchr(text, '\0', len) == NULL, "NUL byte in the CSV report");
    free(text);
    if (with_chrome) {
        text = memfile_read(&chrome, &len);
        check_json(text, len, "the Chrome trace export");
        free(text);
    }
    if (with_timeline)
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
    uint64_t h = fz_hash_bytes(FZ_FNV_INIT, data, size);
    h ^= h >> 29; /* spread the hash over the high bits used for options */
    h *= 0xbf58476d1ce4e5b9ull;
    h ^= h >> 32;
    if (zstd_start(data, size)) {
        analyze(data, size, h);
        return 0;
    }
    /* The raw record stream: one zstd frame around it. */
    size_t cap = ZSTD_compressBound(size);
    uint8_t *z = malloc(cap ? cap : 1);
    FZ_CHECK(z != NULL, "out of memory");
    size_t k = ZSTD_compress2(cctx(), z, cap, data, size);
    FZ_CHECK(!ZSTD_isError(k), "ZSTD_compress2: %s", ZSTD_getErrorName(k));
    analyze(z, k, h);
    free(z);
    return 0;
}
