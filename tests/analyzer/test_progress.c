/*
 * The progress line's logic (analyzer/print/progress.c) with an injected clock
 * and a captured output: when it is drawn (not in the first second, at
 * most every 100 ms on a terminal, every second as lines), what it says,
 * how it is erased, and which mode each stderr gets.
 */
#include "../check.h"
#include "progress.h"

#define MS 1000000ull
#define MIB (1024ull * 1024ull)

typedef struct {
    uint64_t now;
    char out[8192];
    size_t len;
    int writes;
} fake;

static uint64_t fake_clock(void *ctx) { return ((fake *)ctx)->now; }

static void fake_write(void *ctx, const char *s, size_t n)
{
    fake *f = ctx;
    if (f->len + n < sizeof f->out) {
        memcpy(f->out + f->len, s, n);
        f->len += n;
        f->out[f->len] = 0;
    }
    f->writes++;
}

static void reset(fake *f)
{
    f->len = 0;
    f->out[0] = 0;
    f->writes = 0;
}

static void test_choose(void)
{
    tc_context("choose");
    CHECK(gma_progress_choose(-1, 1, "xterm-256color") == GMA_PROGRESS_TTY);
    CHECK(gma_progress_choose(-1, 0, "xterm") == GMA_PROGRESS_OFF);     /* a pipe, a file, CI */
    CHECK(gma_progress_choose(-1, 1, "dumb") == GMA_PROGRESS_OFF);      /* Emacs' shell, some CI */
    CHECK(gma_progress_choose(-1, 1, NULL) == GMA_PROGRESS_OFF);
    CHECK(gma_progress_choose(-1, 1, "") == GMA_PROGRESS_OFF);
    CHECK(gma_progress_choose(0, 1, "xterm") == GMA_PROGRESS_OFF);      /* --no-progress */
    CHECK(gma_progress_choose(1, 0, "xterm") == GMA_PROGRESS_LINES);    /* --progress into a log */
    CHECK(gma_progress_choose(1, 1, "dumb") == GMA_PROGRESS_LINES);
    CHECK(gma_progress_choose(1, 1, "xterm") == GMA_PROGRESS_TTY);
    tc_context(NULL);
}

static void test_format(void)
{
    char b[256];
    tc_context("format");
    /* 50 MiB of 200 MiB: 25%; 3,000,000 records in 0.5 s: 6.0 M records/s */
    size_t n = gma_progress_format(b, sizeof b, 0, "reading t.zst", 50 * MIB, 200 * MIB, 3000000, 500 * MS);
    CHECK_STR(b, "reading t.zst: 50.0 of 200.0 MiB (25%), 3.0 M records, 6.0 M records/s");
    CHECK_EQ_U64(n, strlen(b));
    /* unknown size (standard input): the bytes alone; under a million records: the count */
    gma_progress_format(b, sizeof b, 0, "reading -", 3 * MIB / 2, 0, 65536, 1000 * MS);
    CHECK_STR(b, "reading -: 1.5 MiB, 65536 records, 0.1 M records/s");
    /* a step without counts: what it does alone */
    gma_progress_format(b, sizeof b, 0, "writing t.html", 0, 0, 0, 2000 * MS);
    CHECK_STR(b, "writing t.html");
    /* more read than the size said (a growing file): never past 100% */
    gma_progress_format(b, sizeof b, 0, "reading t", 3 * MIB, 2 * MIB, 0, MS);
    CHECK_STR(b, "reading t: 3.0 of 2.0 MiB (100%)");
    /* 40 columns: the numbers (": 1.0 of 2.0 MiB (50%)", 22 columns) whole, the
     * path's end after "reading ..." (11): 39 - 22 - 11 = 6 columns of it */
    gma_progress_format(b, sizeof b, 40, "reading /a/very/long/path/to/trace.zst", MIB, 2 * MIB, 0, MS);
    CHECK_STR(b, "reading ...ce.zst: 1.0 of 2.0 MiB (50%)");
    CHECK_EQ_U64(strlen(b), 39);
    /* a cut never splits a UTF-8 character: "é" is 2 bytes, 1 column */
    gma_progress_format(b, sizeof b, 30, "reading /d/\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9.zst", MIB, 2 * MIB, 0, MS);
    /* 29 - 22 - 11 = -4: no room for "reading ...": the line cut to 29 columns */
    CHECK_STR(b, "reading /d/\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9.zst: 1.0 of ");
    gma_progress_format(b, sizeof b, 36, "reading /d/\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9.zst", MIB, 2 * MIB, 0,
                        MS);
    /* 35 - 22 - 11 = 2 columns of the end: "st" */
    CHECK_STR(b, "reading ...st: 1.0 of 2.0 MiB (50%)");
    gma_progress_format(b, sizeof b, 39, "reading /d/\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9.zst", MIB, 2 * MIB, 0,
                        MS);
    /* 38 - 33 = 5 columns: "\xc3\xa9.zst", the character whole */
    CHECK_STR(b, "reading ...\xc3\xa9.zst: 1.0 of 2.0 MiB (50%)");
    /* a small buffer: cut, NUL-terminated */
    char s[8];
    n = gma_progress_format(s, sizeof s, 0, "reading t.zst", MIB, 2 * MIB, 0, MS);
    CHECK_EQ_U64(n, 7);
    CHECK_STR(s, "reading");
    tc_context(NULL);
}

/* A terminal: nothing in the first second; then at most every 100 ms;
 * erased with '\r', spaces and '\r' at the end. */
static void test_tty(void)
{
    fake f = { 0 };
    gma_progress p;
    tc_context("tty");
    f.now = 1000 * MS;
    gma_progress_init(&p, GMA_PROGRESS_TTY, fake_clock, &f, fake_write, &f);
    gma_progress_begin(&p, "reading t.zst", 100 * MIB);
    f.now += 999 * MS; /* the run is 999 ms old */
    gma_progress_update(&p, 10 * MIB, 65536);
    CHECK(f.len == 0, "nothing in the first second");
    f.now += 1 * MS; /* 1 s: due */
    gma_progress_update(&p, 20 * MIB, 2000000);
    /* 2,000,000 records in 1 s */
    CHECK_STR(f.out, "\rreading t.zst: 20.0 of 100.0 MiB (20%), 2.0 M records, 2.0 M records/s");
    size_t first = strlen(f.out) - 1; /* columns shown */
    CHECK_EQ_U64(p.shown, first);
    reset(&f);
    f.now += 99 * MS; /* 99 ms after the last line: not yet */
    gma_progress_update(&p, 21 * MIB, 2100000);
    CHECK(f.len == 0, "at most 10 lines a second");
    f.now += 1 * MS; /* 100 ms: due */
    gma_progress_update(&p, 30 * MIB, 4400000);
    /* 4,400,000 records in 1.1 s: 4.0 M records/s */
    CHECK_STR(f.out, "\rreading t.zst: 30.0 of 100.0 MiB (30%), 4.4 M records, 4.0 M records/s");
    reset(&f);
    /* a shorter line: the rest of the longer one blanked, the line again */
    f.now += 100 * MS;
    gma_progress_update(&p, 0, 0);
    /* the last line was 70 columns ("reading t.zst" 13, ": 30.0 of 100.0 MiB (30%)" 25,
     * ", 4.4 M records" 15, ", 4.0 M records/s" 17): 57 spaces */
    char want[128] = "\rreading t.zst";
    memset(want + 14, ' ', 57);
    strcpy(want + 14 + 57, "\rreading t.zst");
    CHECK_STR(f.out, want);
    CHECK_EQ_U64(p.shown, 13);
    reset(&f);
    gma_progress_end(&p);
    CHECK(strcmp(f.out, "\r             \r") == 0, "erased: as many spaces as columns shown");
    CHECK_EQ_U64(p.shown, 0);
    reset(&f);
    /* a later step of a run past its first second shows at once */
    gma_progress_begin(&p, "writing t.html", 0);
    CHECK_STR(f.out, "\rwriting t.html");
    reset(&f);
    /* and its first numbers at once, though the name was drawn 1 ms ago */
    f.now += 1 * MS;
    gma_progress_update(&p, 0, 500);
    /* 500 records in 1 ms: 0.5 M records/s */
    CHECK_STR(f.out, "\rwriting t.html: 500 records, 0.5 M records/s");
    reset(&f);
    f.now += 1 * MS;
    gma_progress_update(&p, 0, 1000);
    CHECK(f.len == 0, "then at most every 100 ms");
    gma_progress_clear(&p); /* before another message */
    /* "writing t.html" 14 + ": 500 records" 13 + ", 0.5 M records/s" 17 columns */
    memset(want, ' ', sizeof want);
    want[0] = '\r';
    strcpy(want + 1 + 44, "\r");
    CHECK_STR(f.out, want);
    reset(&f);
    gma_progress_clear(&p); /* nothing shown: nothing to erase */
    CHECK_EQ_U64(f.len, 0);
    gma_progress_end(&p);
    CHECK_EQ_U64(f.len, 0);
    tc_context(NULL);
}

/* --progress into a log: plain lines, one a second, no '\r', and a last
 * line with the totals; a task too short to be shown says nothing. */
static void test_lines(void)
{
    fake f = { 0 };
    gma_progress p;
    tc_context("lines");
    gma_progress_init(&p, GMA_PROGRESS_LINES, fake_clock, &f, fake_write, &f);
    gma_progress_begin(&p, "reading a.zst", 0);
    f.now = 500 * MS;
    gma_progress_update(&p, MIB, 100);
    gma_progress_end(&p);
    CHECK(f.len == 0, "a task done in its first half second: nothing");
    gma_progress_begin(&p, "reading b.zst", 4 * MIB);
    f.now = 1500 * MS; /* the run 1.5 s old, the task 1 s */
    gma_progress_update(&p, MIB, 1000000);
    CHECK_STR(f.out, "gmem-analyze: reading b.zst: 1.0 of 4.0 MiB (25%), 1.0 M records, 1.0 M records/s\n");
    reset(&f);
    f.now += 999 * MS;
    gma_progress_update(&p, 2 * MIB, 2000000);
    CHECK(f.len == 0, "a line a second");
    f.now += 1 * MS; /* 2 s into the task */
    gma_progress_update(&p, 4 * MIB, 3000000);
    CHECK_STR(f.out, "gmem-analyze: reading b.zst: 4.0 of 4.0 MiB (100%), 3.0 M records, 1.5 M records/s\n");
    CHECK(!strchr(f.out, '\r'));
    reset(&f);
    f.now += 500 * MS; /* ends 2.5 s in: 3,000,000 records, 1.2 M records/s */
    gma_progress_end(&p);
    CHECK_STR(f.out, "gmem-analyze: reading b.zst: done in 2.5 s, 4.0 of 4.0 MiB (100%), 3.0 M records, "
                     "1.2 M records/s\n");
    tc_context(NULL);
}

static void test_off(void)
{
    fake f = { 0 };
    gma_progress p;
    tc_context("off");
    gma_progress_init(&p, GMA_PROGRESS_OFF, fake_clock, &f, fake_write, &f);
    f.now = 10000 * MS;
    gma_progress_begin(&p, "reading t.zst", MIB);
    gma_progress_update(&p, MIB, 1000);
    gma_progress_clear(&p);
    gma_progress_end(&p);
    CHECK_EQ_U64(f.writes, 0);
    tc_context(NULL);
}

int main(void)
{
    test_choose();
    test_format();
    test_tty();
    test_lines();
    test_off();
    return tc_result("analyzer.unit.progress");
}
