/*
 * gmem-analyze: the command line. Exit status: 0 success, 1 the trace is
 * unreadable or invalid (or an output cannot be written), 2 bad usage, 3 the
 * report was made but a trace is incomplete (truncated, damaged, no trailer,
 * frames without a checksum).
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "export.h"
#include "outfile.h"
#include "insights.h"
#include "ranks.h"
#include "diff.h"
#include "print.h"
#include "fitview.h"
#include "oom.h"
#include "category.h"
#include "modules.h"
#include "progress.h"
#include "export_sqlite.h"
#include "view.h"

#include <sys/ioctl.h>
#include <unistd.h>

#define EXIT_BAD_INPUT GMA_EXIT_BAD_INPUT
#define EXIT_USAGE GMA_EXIT_USAGE
#define EXIT_DAMAGED GMA_EXIT_DAMAGED

static const char USAGE[] =
    "Usage: gmem-analyze TRACE [options]\n"
    "       gmem-analyze TRACE TRACE... [options]     (one trace per rank, e.g. trace-*.zst)\n"
    "Ranks what used GPU memory in a gmemprof trace: a summary (peak, when, which kernel), a ranked table,\n"
    "the allocations live at the peak, hints (only when temporaries, activations, the allocator's cache\n"
    "or the growth across steps cross a threshold; --insights says more) and the leaks.\n"
    "\n"
    "  -b, --by WHAT        rows: kernel (default; module, else range, where the PyTorch bridge\n"
    "                       recorded the run), range, alloc, step, tag, stream, device;\n"
    "                       module: PyTorch nn.Module paths, self and total (with the children), forward\n"
    "                       and backward rows; line: the source line of the program's code;\n"
    "                       category: PyTorch's kinds of memory (parameter, gradient, optimizer state,\n"
    "                       activation, temporary, input, workspace, other, allocator cache, outside the\n"
    "                       allocator) at the peak, allocated, freed (with --diff: which one separates the runs);\n"
    "                       rank: one row per trace (peak, imbalance against the mean peak, totals)\n"
    "      --depth N        --by module: fold paths deeper than N components into their ancestor at\n"
    "                       depth N (the root module is depth 1)\n"
    "  -s, --sort KEY       mem (default; self = allocated - freed), peak, alloc, count, time, name;\n"
    "                       held (--diff by kernel or range: bytes each row holds at the peak)\n"
    "                       (--by step and --by tag default to time: chronological; --by module and\n"
    "                       line rank mem by the bytes held at the peak, module's with its children)\n"
    "  -n, --top N          show the first N rows (default 10; 0 = all)\n"
    "  -f, --format FMT     table (default), csv, json\n"
    "  -w, --window N       only window N (as numbered in the trace)\n"
    "  -S, --step N         only step N\n"
    "  -d, --device N       only device N\n"
    "  -D, --diff OTHER     compare TRACE (A) with OTHER (B): summaries and rows matched by name,\n"
    "                       ranked by |B - A| (default metric: by kernel and range the bytes each\n"
    "                       holds at the peak, else bytes allocated)\n"
    "      --chrome OUT     write a Chrome/Perfetto trace-event JSON (chrome://tracing, ui.perfetto.dev);\n"
    "                       '-' or /dev/stdout: to standard output, with no report; a warning once the\n"
    "                       file passes 256 MiB (chrome://tracing opens no more; ui.perfetto.dev ~1 GB)\n"
    "      --chrome-largest N\n"
    "                       a bounded --chrome: the N largest allocations of each trace (slices), the\n"
    "                       live-bytes counter at their ends and the peak, the driver's samples, steps\n"
    "                       and windows; kernels, copies and ranges left out (N at most 4000000)\n"
    "      --timeline OUT   write the memory timeline, a band per allocation coloured by --by (kernel,\n"
    "                       range, step or stream; with the PyTorch bridge by memory category, stacked):\n"
    "                       OUT.html (interactive, self-contained; colour by module, op, line, kernel) or\n"
    "                       OUT.svg; with --diff, both runs on one axis of steps\n"
    "                       (exports without --format: one line per file written, no report)\n"
    "      --layer WHICH    the allocations of the tables in a trace with PyTorch blocks: blocks (the\n"
    "                       default there: tensors as torch.cuda counts them) or segments (what CUDA\n"
    "                       handed out: the allocator's segments and other libraries' memory)\n"
    "      --insights       what the peak is made of (with PyTorch blocks: the categories of --by\n"
    "                       category; else persistent, step-scoped, temporary, outside the allocator,\n"
    "                       reserved), growth across steps, idle allocations, what-ifs (an\n"
    "                       owner freed one op earlier, one layer's activations recomputed); each line\n"
    "                       a number, a reason and what to try (with --diff: A against B)\n"
    "      --fit SIZES      how the peak grows with a size: the TRACEs are runs at SIZES, one per\n"
    "                       trace (--fit 512,1024,2048), or STEP=SIZE pairs name steps of one trace;\n"
    "                       the peak, the reserved peak and each owner's bytes at the peak (by range,\n"
    "                       else kernel) fitted as the simplest of constant, linear, quadratic\n"
    "      --at N           --fit: the size to predict (default: twice the largest)\n"
    "      --capacity BYTES --fit: the device's bytes (default: the recorded device's), e.g. 80GiB;\n"
    "                       the report gives the largest size that fits\n"
    "      --full-names     demangled names in full in the table and the timeline (default: shortened;\n"
    "                       CSV and JSON always carry them in full)\n"
    "      --per-rank       several traces: the rows of every rank with a rank column\n"
    "                       (default: rows merged across ranks, with a 'ranks' column)\n"
    "      --rank N         several traces: the full report of rank N alone\n"
    "      --progress       say what runs, how far and how fast on stderr, also where stderr is not a\n"
    "                       terminal: a line a second (default: on a terminal, a line rewritten in place\n"
    "                       and erased when done, after the first second; in a pipe or a log, nothing)\n"
    "      --no-progress    no progress line, also on a terminal\n"
    "      --sqlite OUT     write the trace as SQLite tables (allocations with owner, step, times and\n"
    "                       layer; kernels, ranges, steps, windows, samples, summary), for queries in SQL\n"
    "                       or pandas; schema: sqlite-schema.md (one trace, no --diff)\n"
    "      --threads N      decompress the trace on N threads (default: one per online CPU, at most 64);\n"
    "                       the output is the same for any N\n"
    "  -h, --help           this text\n"
    "  -V, --version        version\n"
    "\n"
    "Several traces are identified by the rank in their header (by position when ranks are missing or\n"
    "repeated); --chrome then holds one process per rank, --timeline one lane per rank.\n"
    "TRACE may be '-' for standard input. An export is written whole or not at all (a temporary file\n"
    "renamed into place; a pipe, a device or /dev/stdout is written in place, and appended to as the\n"
    "shell opened it); an output that is a TRACE, two outputs that are one file, or an export to\n"
    "standard output beside a report there, are refused.\n"
    "Exit status: 0 ok; 1 unreadable or invalid trace, or an output could not be written; 2 bad usage;\n"
    "3 the report was made, but a trace is incomplete (truncated, damaged, no trailer, or frames\n"
    "without a checksum; the warning says which).\n"
    "Attribution rules: " GMEMPROF_DOCDIR "/attribution.md.\n"
    "Reading the tables: " GMEMPROF_DOCDIR "/analyzer.md.\n";

static int usage_error(const char *fmt, const char *arg)
{
    fprintf(stderr, "gmem-analyze: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, "\nTry 'gmem-analyze --help'.\n");
    return EXIT_USAGE;
}

static int pick(const char *arg, const char *const *names, int n)
{
    for (int i = 0; i < n; i++)
        if (strcmp(arg, names[i]) == 0)
            return i;
    return -1;
}

/* A non-negative decimal integer, the whole argument. */
static int parse_u64(const char *s, uint64_t *out)
{
    if (!s || !*s)
        return -1;
    for (const char *p = s; *p; p++)
        if (*p < '0' || *p > '9')
            return -1;
    errno = 0;
    char *end;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || *end)
        return -1;
    *out = v;
    return 0;
}

/* "wrote ..." lines: on stdout, or on stderr when an export is written
 * to stdout (a line after it would spoil it). */
static FILE *said;

static void say(const char *line) { fprintf(said ? said : stdout, "gmem-analyze: %s\n", line); }

/* An export written earlier in the run and gone by its end (its directory
 * removed or renamed meanwhile): said, so that no "wrote" names it. */
static int still_there(const char *path)
{
    if (!path || gma_out_present(path) == 0)
        return 1;
    fprintf(stderr, "gmem-analyze: %s was written but is not there now (%s): was its directory removed or renamed "
                    "during the run? Run again with a directory that stays\n", path, strerror(errno));
    return 0;
}

/* A step after the replay that writes PATH: on the progress line as it
 * starts (once the run is past its first second), erased when it ends. */
static void writing_begin(const gma_opts *o, const char *path)
{
    if (!o->progress)
        return;
    char what[160];
    snprintf(what, sizeof what, "writing %s", gma_out_shown(path));
    gma_progress_begin(o->progress, what, 0);
}

static void writing_end(const gma_opts *o)
{
    if (o->progress)
        gma_progress_end(o->progress);
}

enum { OPT_CHROME = 256, OPT_TIMELINE, OPT_FULL, OPT_PER_RANK, OPT_RANK, OPT_LAYER, OPT_INSIGHTS, OPT_FIT, OPT_AT,
       OPT_CAPACITY, OPT_PROGRESS, OPT_NO_PROGRESS, OPT_CHROME_LARGEST, OPT_DEPTH,
       OPT_THREADS, OPT_SQLITE };

/* The Chrome export written: a "wrote" line when only exports were asked
 * for; a bounded one says what it kept there, or in a note on stderr. */
static void said_chrome(const char *path, const char *note, int exports_only)
{
    char line[4 * PATH_MAX + 700];
    if (exports_only) {
        snprintf(line, sizeof line, "wrote %s (Chrome/Perfetto trace events%s%s)", gma_out_shown(path),
                 note[0] ? ": " : "", note);
        say(line);
    } else if (note[0]) {
        fprintf(stderr, "gmem-analyze: note: --chrome %s: %s\n", gma_out_shown(path), note);
    }
}

/* Several traces (or --by rank / --per-rank): each replayed on its own, one
 * after the other, keeping only its summary and table (ranks.c). */
static int run_ranks(const gma_opts *opt, int by_rank, int per_rank, int exports_only, char *const *paths, size_t n,
                     gma_ranks *set)
{
    static gma_replay r; /* large: kept off the stack */
    char msg[600];
    uint64_t origin = 0;
    int has_origin = gma_ranks_origin(set, &origin);
    (void)by_rank;
    (void)per_rank;
    struct gma_chrome *ch = NULL;
    struct gma_tlmulti *tl = NULL;
    if (opt->chrome_path && !(ch = gma_chrome_multi_open(opt->chrome_path, origin, has_origin, opt))) {
        fprintf(stderr, "gmem-analyze: cannot write %s: %s\n", opt->chrome_path, strerror(errno));
        return EXIT_BAD_INPUT;
    }
    if (opt->timeline_path && !(tl = gma_timeline_multi_new(opt->timeline_path))) {
        fprintf(stderr, "gmem-analyze: cannot write %s: %s\n", opt->timeline_path, strerror(errno));
        gma_chrome_multi_abort(ch);
        return EXIT_BAD_INPUT;
    }
    int rc = 0, damaged = 0;
    char chrome_note[600] = "";
    for (size_t i = 0; i < n && !rc; i++) {
        if (gma_replay_open(&r, opt, paths[i]) != 0) {
            fprintf(stderr, "gmem-analyze: out of memory\n");
            rc = EXIT_BAD_INPUT;
            break;
        }
        if (ch)
            gma_chrome_attach(&r, ch, (uint64_t)i + 1, set->runs[i].id);
        if (tl && gma_timeline_collect(&r) != 0) {
            fprintf(stderr, "gmem-analyze: out of memory\n");
            rc = EXIT_BAD_INPUT;
        }
        if (!rc && gma_replay_read(&r, msg, sizeof(msg)) != 0) {
            fprintf(stderr, "gmem-analyze: %s\n", msg);
            rc = EXIT_BAD_INPUT;
        }
        if (!rc) {
            char w[400];
            if (gma_trace_warning(&r, w, sizeof(w)) && (damaged = 1))
                fprintf(stderr, "gmem-analyze: warning: %s: %s\n", paths[i], w);
            if (tl)
                gma_timeline_multi_take(tl, &r, set->runs[i].id);
            if (ch)
                gma_chrome_detach(&r);
            if (gma_ranks_take(set, i, &r) != 0) {
                fprintf(stderr, "gmem-analyze: out of memory while reading %s\n", paths[i]);
                rc = EXIT_BAD_INPUT;
            }
        }
        if (ch)
            r.chrome = NULL; /* the shared file outlives this replay */
        gma_replay_free(&r);
    }
    if (!rc && !exports_only && (gma_ranks_print(stdout, gma_printer_of(set->opt.format), set) != 0 || fflush(stdout) != 0)) {
        fprintf(stderr, "gmem-analyze: writing the report failed: %s\n", errno ? strerror(errno) : "out of memory");
        rc = EXIT_BAD_INPUT;
    }
    if (ch) {
        int crc = 0;
        writing_begin(opt, opt->chrome_path);
        if (rc)
            gma_chrome_multi_abort(ch);
        else
            crc = gma_chrome_multi_finish(ch, (const char *const *)paths, n, chrome_note, sizeof chrome_note);
        int e = errno;
        writing_end(opt);
        if (crc != 0) {
            fprintf(stderr, "gmem-analyze: writing %s failed: %s\n", opt->chrome_path, strerror(e));
            rc = EXIT_BAD_INPUT;
        }
    }
    if (tl) {
        writing_begin(opt, opt->timeline_path);
        int wrc = rc ? 0 : gma_timeline_multi_write(tl);
        int e = errno;
        writing_end(opt);
        if (wrc != 0) {
            fprintf(stderr, "gmem-analyze: writing %s failed: %s\n", opt->timeline_path, strerror(e));
            rc = EXIT_BAD_INPUT;
        }
        if (!rc && exports_only && gma_timeline_multi_summary(tl) && still_there(opt->timeline_path))
            say(gma_timeline_multi_summary(tl));
        gma_timeline_multi_free(tl);
    }
    if (!rc && (!still_there(ch ? opt->chrome_path : NULL) || !still_there(tl ? opt->timeline_path : NULL)))
        rc = EXIT_BAD_INPUT;
    if (!rc && ch)
        said_chrome(opt->chrome_path, chrome_note, exports_only);
    return rc ? rc : damaged ? EXIT_DAMAGED : 0;
}

/* Outputs that would destroy an input or each other, or an export to
 * standard output where the report goes too: refused (exit 2). */
static int check_outputs(const gma_opts *o, char *const *paths, size_t n, int report)
{
    const char *outs[] = { o->chrome_path, o->timeline_path };
    static const char *const opt_of[] = { "--chrome", "--timeline" };
    for (size_t i = 0; i < 2; i++) {
        if (!outs[i] || !gma_out_is_stdout(outs[i]))
            continue;
        if (report) {
            fprintf(stderr, "gmem-analyze: %s %s writes to standard output, where the report goes too: one would "
                            "spoil the other. Leave out --format (and --insights) to write the export alone, or name a "
                            "file\nTry 'gmem-analyze --help'.\n", opt_of[i], outs[i]);
            return EXIT_USAGE;
        }
        said = stderr;
    }
    const char **ins = calloc(n + 1, sizeof(*ins));
    char msg[8400]; /* two paths */
    if (!ins)
        return 0; /* the check is a safeguard; out of memory is reported later */
    for (size_t i = 0; i < n; i++)
        ins[i] = paths[i];
    ins[n] = o->diff_path;
    int bad = gma_out_check(outs, 2, ins, n + 1, msg, sizeof(msg)) != 0;
    free(ins);
    return bad ? usage_error("%s", msg) : 0;
}

/* The command line as parsed: the replay's options and what picks the path. */
typedef struct {
    gma_opts opt;
    int by_rank, per_rank, format_given, insights, by_given;
    int by_module_default; /* a bridge trace: by module when it has module ranges */
    int64_t want_rank;
    /* --fit */
    gma_fit_point fit[GMA_FIT_MAX_POINTS];
    size_t nfit;
    uint64_t fit_at, capacity;
    int progress; /* 1 --progress, 0 --no-progress, -1 neither */
} cli;

#define CLI_GO (-1) /* parse_option: go on */

/* One option into the command line; CLI_GO, or the exit status to end with. */
static int parse_option(cli *k, int c, char **argv)
{
    gma_opts *o = &k->opt;
    uint64_t v;
    int i;
    switch (c) {
    case 'b':
        k->by_rank = strcmp(optarg, "rank") == 0;
        if (k->by_rank) { /* a table of the set, not of a trace: the replay keeps its default */
            o->by = GMA_BY_KERNEL;
            break;
        }
        if ((i = pick(optarg, gma_by_names, GMA_BY_COUNT_)) < 0)
            return usage_error("--by: '%s' is not one of kernel, range, alloc, step, tag, stream, device, module, line, category, rank", optarg);
        o->by = (gma_by)i;
        k->by_given = 1;
        break;
    case 's':
        if ((i = pick(optarg, gma_sort_names, GMA_SORT_COUNT_)) < 0)
            return usage_error("--sort: '%s' is not one of mem, peak, alloc, count, time, name, held", optarg);
        o->sort = (gma_sort)i;
        o->sort_given = 1;
        break;
    case 'n':
        if (parse_u64(optarg, &o->top) != 0)
            return usage_error("--top: '%s' is not a non-negative integer", optarg);
        break;
    case 'f':
        if ((i = gma_format_named(optarg)) < 0) {
            char m[300];
            snprintf(m, sizeof m, "--format: '%s' is not one of %s", optarg, gma_format_names());
            return usage_error("%s", m);
        }
        o->format = (gma_format)i;
        k->format_given = 1;
        break;
    case 'w':
        if (parse_u64(optarg, &v) != 0 || v > INT64_MAX)
            return usage_error("--window: '%s' is not a window number", optarg);
        o->window = (int64_t)v;
        break;
    case 'S':
        if (parse_u64(optarg, &v) != 0 || v > INT64_MAX)
            return usage_error("--step: '%s' is not a step number", optarg);
        o->step = (int64_t)v;
        break;
    case 'd':
        if (parse_u64(optarg, &v) != 0 || v >= GMA_MAX_DEVICES)
            return usage_error("--device: '%s' is not a device number (0-63)", optarg);
        o->device = (int64_t)v;
        break;
    case 'D': o->diff_path = optarg; break;
    case OPT_CHROME: o->chrome_path = optarg; break;
    case OPT_THREADS:
        if (parse_u64(optarg, &v) != 0 || v < 1 || v > 64)
            return usage_error("--threads: '%s' is not a number of threads from 1 to 64", optarg);
        o->threads = (unsigned)v;
        break;
    case OPT_SQLITE: o->sqlite_path = optarg; break;
    case OPT_CHROME_LARGEST:
        if (parse_u64(optarg, &o->chrome_largest) != 0 || o->chrome_largest > GMA_CHROME_LARGEST_MAX)
            return usage_error("--chrome-largest: '%s' is not a number of allocations from 0 to 4000000 (about "
                               "430 bytes of JSON each: more would not open in a viewer)", optarg);
        o->chrome_bounded = 1;
        break;
    case OPT_TIMELINE: {
        size_t n = strlen(optarg);
        if (!((n > 4 && strcasecmp(optarg + n - 4, ".svg") == 0) ||
              (n > 5 && strcasecmp(optarg + n - 5, ".html") == 0)))
            return usage_error("--timeline: '%s' must end in .svg or .html", optarg);
        o->timeline_path = optarg;
        break;
    }
    case OPT_FULL: o->full_names = o->full_labels = 1; break;
    case OPT_LAYER:
        if ((i = pick(optarg, gma_layer_names + 1, 2)) < 0)
            return usage_error("--layer: '%s' is not one of blocks, segments", optarg);
        o->layer = i + 1;
        break;
    case OPT_INSIGHTS: k->insights = 1; break;
    case OPT_FIT: {
        char err[300];
        if (gma_fit_parse(optarg, k->fit, GMA_FIT_MAX_POINTS, &k->nfit, err, sizeof err) != 0)
            return usage_error("%s", err);
        break;
    }
    case OPT_AT:
        if (parse_u64(optarg, &k->fit_at) != 0 || k->fit_at == 0 || k->fit_at > GMA_FIT_SIZE_MAX)
            return usage_error("--at: '%s' is not a size (an integer from 1 to 2^40)", optarg);
        break;
    case OPT_CAPACITY:
        if (gma_fit_parse_bytes(optarg, &k->capacity) != 0 || k->capacity == 0)
            return usage_error("--capacity: '%s' is not a number of bytes (e.g. 85899345920, 80GiB or 80G)", optarg);
        break;
    case OPT_DEPTH:
        if (parse_u64(optarg, &o->depth) != 0 || o->depth == 0 || o->depth > 1000)
            return usage_error("--depth: '%s' is not a depth of module paths (1 to 1000; the root is 1)", optarg);
        break;
    case OPT_PROGRESS: k->progress = 1; break;
    case OPT_NO_PROGRESS: k->progress = 0; break;
    case OPT_PER_RANK: k->per_rank = 1; break;
    case OPT_RANK:
        if (parse_u64(optarg, &v) != 0 || v > INT64_MAX)
            return usage_error("--rank: '%s' is not a rank number", optarg);
        k->want_rank = (int64_t)v;
        break;
    case 'h': fputs(USAGE, stdout); return 0;
    case 'V':
        printf("gmem-analyze %s (trace format %d.%d)\n", GMEMPROF_VERSION, GMT_VERSION_MAJOR, GMT_VERSION_MINOR);
        return 0;
    case ':': return usage_error("option '%s' needs a value", argv[optind - 1]);
    default: return usage_error("unknown option '%s'", argv[optind - 1]);
    }
    return CLI_GO;
}

/* All options; CLI_GO, or the exit status to end with (help, version, a usage error). */
static int parse_options(cli *k, int argc, char **argv)
{
    static const struct option longopts[] = {
        { "by", required_argument, NULL, 'b' },        { "sort", required_argument, NULL, 's' },
        { "top", required_argument, NULL, 'n' },       { "format", required_argument, NULL, 'f' },
        { "window", required_argument, NULL, 'w' },    { "step", required_argument, NULL, 'S' },
        { "device", required_argument, NULL, 'd' },    { "diff", required_argument, NULL, 'D' },
        { "chrome", required_argument, NULL, OPT_CHROME }, { "timeline", required_argument, NULL, OPT_TIMELINE },
        { "full-names", no_argument, NULL, OPT_FULL }, { "help", no_argument, NULL, 'h' },
        { "per-rank", no_argument, NULL, OPT_PER_RANK }, { "rank", required_argument, NULL, OPT_RANK },
        { "layer", required_argument, NULL, OPT_LAYER }, { "version", no_argument, NULL, 'V' },
        { "insights", no_argument, NULL, OPT_INSIGHTS }, { "fit", required_argument, NULL, OPT_FIT },
        { "at", required_argument, NULL, OPT_AT },     { "capacity", required_argument, NULL, OPT_CAPACITY },
        { "progress", no_argument, NULL, OPT_PROGRESS }, { "no-progress", no_argument, NULL, OPT_NO_PROGRESS },
        { "chrome-largest", required_argument, NULL, OPT_CHROME_LARGEST },
        { "depth", required_argument, NULL, OPT_DEPTH },
        { "threads", required_argument, NULL, OPT_THREADS }, { "sqlite", required_argument, NULL, OPT_SQLITE },
        { NULL, 0, NULL, 0 },
    };
    memset(k, 0, sizeof(*k));
    k->opt.by = GMA_BY_KERNEL;
    k->opt.sort = GMA_SORT_MEM;
    k->opt.top = 10;
    k->opt.format = GMA_FMT_TABLE;
    k->opt.window = k->opt.step = k->opt.device = -1;
    k->want_rank = -1;
    k->progress = -1;
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, ":b:s:n:f:w:S:d:D:hV", longopts, NULL)) != -1) {
        int rc = parse_option(k, c, argv);
        if (rc != CLI_GO)
            return rc;
    }
    return CLI_GO;
}

static int is_multi(const cli *k, size_t ntraces)
{
    return ntraces > 1 || k->by_rank || k->per_rank || k->want_rank >= 0;
}

/* Options that do not go together, and the default sort; CLI_GO or exit status. */
static int check_combination(cli *k, char *const *paths, size_t ntraces)
{
    int modview = k->opt.by == GMA_BY_MODULE || k->opt.by == GMA_BY_LINE;
    if (ntraces > 1 && k->opt.diff_path)
        return usage_error("%s", "--diff compares one TRACE with OTHER; with several traces, choose one with --rank N "
                                 "or compare the ranks with --by rank");
    if (k->insights && is_multi(k, ntraces))
        return usage_error("%s", "--insights reads one trace (and --diff OTHER): choose one rank's trace");
    if (k->by_rank && k->opt.diff_path)
        return usage_error("%s", "--by rank has no --diff: compare the ranks of one run with --by rank alone");
    for (size_t i = 0; ntraces > 1 && i < ntraces; i++)
        if (strcmp(paths[i], "-") == 0)
            return usage_error("%s", "standard input is one trace: with several traces, give files");
    if (k->opt.sort_given && k->opt.sort == GMA_SORT_HELD &&
        (!k->opt.diff_path || (k->opt.by != GMA_BY_KERNEL && k->opt.by != GMA_BY_RANGE && !modview)))
        return usage_error("%s", "--sort held ranks --diff rows by kernel or range by the bytes each holds at the "
                                 "peak (--by module and line too); for one trace, the report's 'Live at the peak' section "
                                 "shows them");
    if (k->opt.depth && k->opt.by != GMA_BY_MODULE)
        return usage_error("%s", "--depth N folds the module paths of --by module: give --by module too");
    if (modview && (k->by_rank || k->per_rank || (ntraces > 1 && k->want_rank < 0)))
        return usage_error("%s", "--by module and --by line read one trace: choose one rank's trace with --rank N");
    if (k->opt.by == GMA_BY_CATEGORY && (k->per_rank || (ntraces > 1 && k->want_rank < 0)))
        return usage_error("%s", "--by category reads one trace: choose one rank's trace with --rank N");
    if (k->opt.chrome_bounded && !k->opt.chrome_path)
        return usage_error("%s", "--chrome-largest N bounds the Chrome export: give --chrome OUT.json too");
    if (k->opt.sqlite_path && (is_multi(k, ntraces) || k->opt.diff_path))
        return usage_error("%s", "--sqlite exports one trace: give one TRACE, without --diff or rank options");
    if (k->opt.sqlite_path && (strcmp(k->opt.sqlite_path, "-") == 0 || strcmp(k->opt.sqlite_path, paths[0]) == 0))
        return usage_error("--sqlite: '%s' is not a new file's name (a database is a file, and not the trace)",
                           k->opt.sqlite_path);
    int exports_only = (k->opt.chrome_path || k->opt.timeline_path || k->opt.sqlite_path) && !k->format_given &&
                       !k->insights;
    if (check_outputs(&k->opt, paths, ntraces, !exports_only) != 0)
        return EXIT_USAGE;
    /* machine formats carry whole names; only the terminal's table elides them */
    if (k->opt.format != GMA_FMT_TABLE)
        k->opt.full_names = 1;
    if (!k->opt.sort_given && !k->by_rank && (k->opt.by == GMA_BY_STEP || k->opt.by == GMA_BY_TAG))
        k->opt.sort = GMA_SORT_TIME;
    return CLI_GO;
}

/* --rank N names no trace: say which ranks there are. */
static int report_missing_rank(const gma_ranks *set, int64_t want, size_t ntraces)
{
    char have[200];
    size_t len = 0;
    for (size_t i = 0; i < ntraces && len + 24 < sizeof(have); i++)
        len += (size_t)snprintf(have + len, sizeof(have) - len, "%s%lld", i ? ", " : "", (long long)set->runs[i].id);
    fprintf(stderr, "gmem-analyze: --rank %lld: no trace is rank %lld (the traces are ranks %s)\n"
                    "Try 'gmem-analyze --help'.\n", (long long)want, (long long)want, have);
    return EXIT_USAGE;
}

/* --rank N with --by rank / --per-rank: the set of that trace alone. */
static int run_one_rank(cli *k, char **one, int64_t id)
{
    gma_ranks sub;
    char pmsg[600];
    if (gma_ranks_init(&sub, &k->opt, k->by_rank, k->per_rank, one, 1) != 0) {
        fprintf(stderr, "gmem-analyze: out of memory\n");
        return EXIT_BAD_INPUT;
    }
    (void)gma_ranks_peek(&sub, 0, pmsg, sizeof(pmsg));
    sub.runs[0].id = id;
    int exports_only = (k->opt.chrome_path || k->opt.timeline_path) && !k->format_given;
    int rc = run_ranks(&k->opt, k->by_rank, k->per_rank, exports_only, one, 1, &sub);
    gma_ranks_free(&sub);
    return rc;
}

/* Several traces, or a rank option: the rank set's report, or (--rank N
 * alone) *sel set to the trace whose single report follows; CLI_GO then. */
static int run_multi(cli *k, char **paths, size_t ntraces, long *sel)
{
    /* the headers first: which trace is which rank, and a missing
     * file named before any long replay */
    gma_ranks set;
    if (gma_ranks_init(&set, &k->opt, k->by_rank, k->per_rank, paths, ntraces) != 0) {
        fprintf(stderr, "gmem-analyze: out of memory\n");
        return EXIT_BAD_INPUT;
    }
    char pmsg[600];
    for (size_t i = 0; i < ntraces; i++)
        if (strcmp(paths[i], "-") != 0 && gma_ranks_peek(&set, i, pmsg, sizeof(pmsg)) != 0) {
            fprintf(stderr, "gmem-analyze: %s\n", pmsg);
            gma_ranks_free(&set);
            return EXIT_BAD_INPUT;
        }
    gma_ranks_identify(&set);
    for (size_t i = 0; i < set.nwarn; i++)
        fprintf(stderr, "gmem-analyze: warning: %s\n", set.warn[i]);
    *sel = -1;
    if (k->want_rank >= 0 && (*sel = gma_ranks_find(&set, k->want_rank)) < 0) {
        int rc = report_missing_rank(&set, k->want_rank, ntraces);
        gma_ranks_free(&set);
        return rc;
    }
    if (*sel >= 0 && !k->by_rank && !k->per_rank) { /* --rank N alone */
        gma_ranks_free(&set);
        return CLI_GO;
    }
    if (*sel >= 0) {
        int64_t id = set.runs[*sel].id;
        gma_ranks_free(&set);
        return run_one_rank(k, paths + *sel, id);
    }
    int exports_only = (k->opt.chrome_path || k->opt.timeline_path) && !k->format_given;
    int rc = run_ranks(&k->opt, k->by_rank, k->per_rank, exports_only, paths, ntraces, &set);
    gma_ranks_free(&set);
    return rc;
}

/* Replay TRACE into ra (with its exports and insights), and OTHER into rb
 * where --diff names it; *have_b says whether rb was set up (to free). */
static int replay_inputs(cli *k, const char *path, gma_replay *ra, gma_replay *rb, int *have_b)
{
    gma_opts *o = &k->opt;
    char msg[600];
    *have_b = 0;
    if (o->diff_path && gma_diff_layer(o, path, o->diff_path, msg, sizeof(msg)))
        fprintf(stderr, "gmem-analyze: note: %s\n", msg);
    /* one trace's --by alloc --top 0 is printed row by row from a spill */
    o->alloc_spill = !o->diff_path;
    if (gma_replay_open(ra, o, path) != 0) {
        fprintf(stderr, "gmem-analyze: out of memory\n");
        return EXIT_BAD_INPUT;
    }
    if (o->chrome_path && gma_chrome_open(ra, o->chrome_path) != 0) {
        fprintf(stderr, "gmem-analyze: cannot write %s: %s\n", o->chrome_path, strerror(errno));
        return EXIT_BAD_INPUT;
    }
    if (o->timeline_path && gma_timeline_open(ra, o->timeline_path) != 0) {
        fprintf(stderr, "gmem-analyze: cannot write %s: %s\n", o->timeline_path, strerror(errno));
        return EXIT_BAD_INPUT;
    }
    if (k->insights && gma_insights_open(ra) != 0) {
        /* its records go to a temporary file */
        fprintf(stderr, "gmem-analyze: --insights cannot start: %s (out of memory, or no temporary file could be made in /tmp)\n",
                strerror(errno));
        return EXIT_BAD_INPUT;
    }
    if (o->sqlite_path && gma_sqlite_open(ra, o->sqlite_path, msg, sizeof(msg)) != 0) {
        fprintf(stderr, "gmem-analyze: %s\n", msg);
        return EXIT_BAD_INPUT;
    }
    int blocks = gma_trace_has_blocks(path);
    /* the modules and lines name the report's owners (owners.h) */
    if (blocks && (gma_category_open(ra) != 0 || gma_modules_open(ra) != 0)) {
        fprintf(stderr, "gmem-analyze: out of memory\n");
        return EXIT_BAD_INPUT;
    }
    if (gma_replay_read(ra, msg, sizeof(msg)) != 0) {
        fprintf(stderr, "gmem-analyze: %s\n", msg);
        return EXIT_BAD_INPUT;
    }
    if (k->by_module_default && gma_modules_has_paths(ra))
        ra->opt.by = GMA_BY_MODULE;
    if (blocks && gma_category_finish(ra) != 0) {
        fprintf(stderr, "gmem-analyze: out of memory\n");
        return EXIT_BAD_INPUT;
    }
    if (!o->diff_path)
        return 0;
    *have_b = 1;
    if (gma_replay_open(rb, o, o->diff_path) != 0 || (o->timeline_path && gma_timeline_collect(rb) != 0) ||
        (k->insights && gma_insights_open(rb) != 0)) {
        fprintf(stderr, "gmem-analyze: out of memory\n");
        return EXIT_BAD_INPUT;
    }
    int blocks_b = gma_trace_has_blocks(o->diff_path);
    if (blocks_b && gma_category_open(rb) != 0) {
        fprintf(stderr, "gmem-analyze: out of memory\n");
        return EXIT_BAD_INPUT;
    }
    if (gma_replay_read(rb, msg, sizeof(msg)) != 0) {
        fprintf(stderr, "gmem-analyze: %s\n", msg);
        return EXIT_BAD_INPUT;
    }
    if (blocks_b && gma_category_finish(rb) != 0) {
        fprintf(stderr, "gmem-analyze: out of memory\n");
        return EXIT_BAD_INPUT;
    }
    return 0;
}

/* A trace's failures on their own, before a report that does not carry
 * them (the printer's failures). */
static int print_failures(const gma_printer *p, const gma_replay *r)
{
    gma_oom_view v;
    if (gma_oom_view_build(&v, r) != 0)
        return -1;
    int rc = p->failures(stdout, &v);
    gma_oom_view_free(&v);
    return rc;
}

/* The report on stdout: insights, a diff, or the table in its format. */
static int print_report(const cli *k, const gma_replay *ra, const gma_replay *rb)
{
    /* a failure first: what was asked, what was free, what held the
     * memory, and why it failed (insights too: the cause is their question) */
    const gma_printer *p = gma_printer_of(k->opt.format);
    if (p->failures && (print_failures(p, ra) != 0 || (rb && print_failures(p, rb) != 0)))
        return -1;
    if (k->insights)
        return gma_insights_print(stdout, p, ra, rb);
    if (rb)
        return gma_diff_print(stdout, p, ra, rb);
    if (gma_view_of(k->opt.by)->alone) { /* the view's table is the report */
        gma_view_report v;
        int verr = gma_view_report_build(&v, gma_view_of(k->opt.by), ra, NULL);
        if (!verr)
            verr = p->view(stdout, &v);
        gma_view_report_free(&v);
        return verr;
    }
    gma_report rep;
    int perr = gma_report_build(&rep, ra);
    if (!perr)
        perr = p->report(stdout, &rep);
    gma_report_free(&rep);
    return perr;
}

/* --by category reads PyTorch's blocks: 1 (said) when neither run has them. */
static int category_missing(const char *path, const gma_replay *ra, const gma_replay *rb)
{
    if (gma_category_known(ra) || (rb && gma_category_known(rb)))
        return 0;
    fprintf(stderr, "gmem-analyze: --by category needs a trace the PyTorch bridge recorded (BLOCK records); "
                    "%s has none: record with the bridge, or use --by kernel or range\n", path);
    return 1;
}

/* After the replays: warnings, the report, the exports written. */
static int write_outputs(const cli *k, const char *path, gma_replay *ra, gma_replay *rb, int *damaged)
{
    const gma_opts *o = &k->opt;
    /* exports without --format: a line per file written, no report */
    int exports_only = (o->chrome_path || o->timeline_path || o->sqlite_path) && !k->format_given && !k->insights;
    int rc = 0;
    char w[400];
    if (gma_trace_warning(ra, w, sizeof(w)) && (*damaged = 1))
        fprintf(stderr, "gmem-analyze: warning: %s: %s\n", path, w);
    if (rb && gma_trace_warning(rb, w, sizeof(w)) && (*damaged = 1))
        fprintf(stderr, "gmem-analyze: warning: %s: %s\n", o->diff_path, w);
    /* said here too for the insights and the exports, which carry no report's warnings */
    if (gma_layer_warning(ra, w, sizeof(w)))
        fprintf(stderr, "gmem-analyze: warning: %s: %s\n", path, w);
    if (rb && gma_layer_warning(rb, w, sizeof(w)))
        fprintf(stderr, "gmem-analyze: warning: %s: %s\n", o->diff_path, w);
    int missing = !exports_only && o->by == GMA_BY_CATEGORY && category_missing(path, ra, rb);
    if (missing)
        rc = EXIT_BAD_INPUT;
    /* with exports only, the report is the exports' lines, printed last */
    int perr = exports_only || missing ? 0 : print_report(k, ra, rb);
    if (perr || fflush(stdout) != 0) {
        fprintf(stderr, "gmem-analyze: writing the report failed: %s\n", errno ? strerror(errno) : "out of memory");
        rc = EXIT_BAD_INPUT;
    }
    char chrome_note[600] = "";
    if (o->chrome_path) {
        writing_begin(o, o->chrome_path);
        int crc = gma_chrome_finish(ra, chrome_note, sizeof chrome_note);
        int e = errno;
        writing_end(o);
        if (crc != 0) {
            fprintf(stderr, "gmem-analyze: writing %s failed: %s\n", o->chrome_path, strerror(e));
            rc = EXIT_BAD_INPUT;
        }
    }
    int trc = 0, terr = 0;
    if (o->timeline_path) {
        writing_begin(o, o->timeline_path);
        trc = rb ? gma_timeline_diff_write(ra, rb) : gma_timeline_write(ra);
        terr = errno;
        writing_end(o);
    }
    if (trc != 0) {
        fprintf(stderr, "gmem-analyze: writing %s failed: %s\n", o->timeline_path, strerror(terr));
        rc = EXIT_BAD_INPUT;
    }
    if (!rc && (!still_there(o->chrome_path) || !still_there(o->timeline_path)))
        rc = EXIT_BAD_INPUT;
    if (!rc && o->chrome_path)
        said_chrome(o->chrome_path, chrome_note, exports_only);
    if (o->sqlite_path) {
        char sline[PATH_MAX + 400];
        writing_begin(o, o->sqlite_path);
        int src = gma_sqlite_finish(ra, sline, sizeof sline);
        writing_end(o);
        if (src != 0) {
            fprintf(stderr, "gmem-analyze: %s\n", sline);
            rc = EXIT_BAD_INPUT;
        } else if (exports_only) {
            say(sline);
        } else {
            fprintf(stderr, "gmem-analyze: %s\n", sline);
        }
    }
    if (!rc && exports_only && o->timeline_path && gma_timeline_summary(ra))
        say(gma_timeline_summary(ra));
    return rc;
}

/* --fit: sizes one per trace, or STEP=SIZE pairs of one trace. */
static int run_fit(cli *k, char **paths, size_t ntraces)
{
    int steps = k->fit[0].step >= 0;
    if (k->opt.diff_path || k->insights || k->by_rank || k->per_rank || k->want_rank >= 0 || k->opt.chrome_path ||
        k->opt.chrome_bounded || k->opt.sqlite_path ||
        k->opt.timeline_path || (k->by_given && k->opt.by != GMA_BY_KERNEL && k->opt.by != GMA_BY_RANGE))
        return usage_error("%s", "--fit makes its own report: it goes with --by kernel or range, --top, --format, "
                                 "--window, --device, --at and --capacity only");
    if (steps && ntraces != 1)
        return usage_error("%s", "--fit STEP=SIZE,... fits the steps of one trace: give one TRACE");
    if (!steps && ntraces != k->nfit) {
        char m[160];
        snprintf(m, sizeof m, "--fit gives %zu sizes for %zu traces: give one size per trace, in the traces' order",
                 k->nfit, ntraces);
        return usage_error("%s", m);
    }
    if (steps && k->opt.step >= 0)
        return usage_error("%s", "--fit STEP=SIZE chooses the steps: leave --step out");
    for (size_t i = 0; i < ntraces; i++)
        if (strcmp(paths[i], "-") == 0 && (steps || ntraces > 1))
            return usage_error("%s", "--fit reads each trace once per run: give files, not standard input");
    for (size_t i = 0; i < k->nfit; i++)
        k->fit[i].path = paths[steps ? 0 : i];
    if (k->opt.format != GMA_FMT_TABLE)
        k->opt.full_names = 1; /* machine formats carry names whole */
    gma_fit_request q = { k->fit, k->nfit, k->fit_at, k->capacity, k->by_given };
    return gma_fit_run(stdout, gma_printer_of(k->opt.format), &k->opt, &q);
}

/* The progress line on stderr (progress.h). GMEM_ANALYZE_TEST_PROGRESS_AFTER_MS,
 * for tests only, replaces the first second in which nothing is shown, so
 * that a test sees the line on a short run. */
static void progress_setup(cli *k, gma_progress *p)
{
    gma_progress_mode m = gma_progress_choose(k->progress, isatty(STDERR_FILENO), getenv("TERM"));
    /* an export written to the terminal itself: the line would land in it */
    if (m == GMA_PROGRESS_TTY && isatty(STDOUT_FILENO) &&
        ((k->opt.chrome_path && gma_out_is_stdout(k->opt.chrome_path)) ||
         (k->opt.timeline_path && gma_out_is_stdout(k->opt.timeline_path))))
        m = GMA_PROGRESS_OFF;
    gma_progress_init(p, m, NULL, NULL, NULL, NULL);
    const char *after = getenv("GMEM_ANALYZE_TEST_PROGRESS_AFTER_MS");
    uint64_t ms;
    if (after && parse_u64(after, &ms) == 0 && ms < 86400000)
        p->after_ns = ms * 1000000;
    /* for tests only too: the Chrome export's warning at a size a test can write */
    const char *warn = getenv("GMEM_ANALYZE_TEST_CHROME_WARN_BYTES");
    uint64_t wb;
    if (warn && parse_u64(warn, &wb) == 0)
        k->opt.chrome_warn_bytes = wb;
    struct winsize ws;
    if (m == GMA_PROGRESS_TTY && ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col >= 20)
        p->width = ws.ws_col;
    k->opt.progress = m == GMA_PROGRESS_OFF ? NULL : p;
}

int main(int argc, char **argv)
{
    static gma_progress progress;
    static cli k;
    gma_out_escape_stderr();
    gma_out_escape_stdout();
    int rc = parse_options(&k, argc, argv);
    if (rc != CLI_GO)
        return rc;
    if (optind >= argc)
        return usage_error("%s", "no TRACE given");
    progress_setup(&k, &progress);
    size_t ntraces = (size_t)(argc - optind);
    char **paths = argv + optind;
    if (k.nfit)
        return run_fit(&k, paths, ntraces);
    if (k.fit_at || k.capacity)
        return usage_error("%s", "--at and --capacity go with --fit SIZES");
    if ((rc = check_combination(&k, paths, ntraces)) != CLI_GO)
        return rc;
    if (is_multi(&k, ntraces)) {
        long sel;
        if ((rc = run_multi(&k, paths, ntraces, &sel)) != CLI_GO)
            return rc;
        paths += sel; /* --rank N alone: the single-trace report of that trace */
    }
    const char *path = paths[0];
    if (k.opt.diff_path && k.opt.by == GMA_BY_ALLOC)
        return usage_error("%s", "--diff compares rows matched by name: use --by kernel, range, step, tag, stream or device");
    if (k.opt.diff_path && strcmp(k.opt.diff_path, "-") == 0 && strcmp(path, "-") == 0)
        return usage_error("%s", "standard input can be read once: give a file for TRACE or OTHER");

    if (k.opt.by == GMA_BY_CATEGORY && k.insights)
        return usage_error("%s", "--by category is a table of its own: leave --insights out");
    /* the PyTorch bridge recorded the run: the first table ranks its
     * modules, or its ops where it saw none (known after the replay) */
    if (!k.by_given && !k.opt.diff_path && !k.opt.timeline_path && !k.insights &&
        k.opt.layer != GMA_LAYER_SEGMENTS && gma_trace_has_blocks(path)) {
        k.opt.by = GMA_BY_RANGE;
        k.by_module_default = 1;
    }
    static gma_replay ra, rb; /* large: kept off the stack */
    int have_b = 0, damaged = 0;
    rc = replay_inputs(&k, path, &ra, &rb, &have_b);
    if (!rc)
        rc = write_outputs(&k, path, &ra, have_b ? &rb : NULL, &damaged);
    gma_replay_free(&ra);
    if (have_b)
        gma_replay_free(&rb);
    return rc ? rc : damaged ? EXIT_DAMAGED : 0;
}
