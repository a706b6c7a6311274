/*
 * gmem-analyze: the command line. Exit status: 0 success, 1 the trace is
 * unreadable or invalid (or an output cannot be written), 2 bad usage.
 */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "export.h"
#include "report.h"

#define EXIT_BAD_INPUT 1
#define EXIT_USAGE 2

static const char USAGE[] =
    "Usage: gmem-analyze TRACE [options]\n"
    "Ranks what used GPU memory in a gmemprof trace: a summary (peak, when, which kernel), a ranked table,\n"
    "the allocations live at the peak and the leaks.\n"
    "\n"
    "  -b, --by WHAT        rows: kernel (default), range, alloc, step, tag, stream, device\n"
    "  -s, --sort KEY       mem (default; self = allocated - freed), peak, alloc, count, time, name\n"
    "                       (--by step and --by tag default to time: chronological)\n"
    "  -n, --top N          show the first N rows (default 10; 0 = all)\n"
    "  -f, --format FMT     table (default), csv, json\n"
    "  -w, --window N       only window N (as numbered in the trace)\n"
    "  -S, --step N         only step N\n"
    "  -d, --device N       only device N\n"
    "  -D, --diff OTHER     compare TRACE (A) with OTHER (B): summaries and rows matched by name,\n"
    "                       ranked by |B - A| (default metric: bytes allocated)\n"
    "      --chrome OUT     write a Chrome/Perfetto trace-event JSON (chrome://tracing, ui.perfetto.dev)\n"
    "      --timeline OUT   write the live-memory timeline: OUT.svg, or OUT.html (self-contained, hover values)\n"
    "      --full-names     demangled names in full (default: shortened)\n"
    "  -h, --help           this text\n"
    "  -V, --version        version\n"
    "\n"
    "TRACE may be '-' for standard input. Exit status: 0 ok, 1 unreadable or invalid trace, 2 bad usage.\n"
    "Attribution rules: docs/attribution.md. Reading the tables: docs/analyzer.md.\n";

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

enum { OPT_CHROME = 256, OPT_TIMELINE, OPT_FULL };

int main(int argc, char **argv)
{
    static const struct option longopts[] = {
        { "by", required_argument, NULL, 'b' },        { "sort", required_argument, NULL, 's' },
        { "top", required_argument, NULL, 'n' },       { "format", required_argument, NULL, 'f' },
        { "window", required_argument, NULL, 'w' },    { "step", required_argument, NULL, 'S' },
        { "device", required_argument, NULL, 'd' },    { "diff", required_argument, NULL, 'D' },
        { "chrome", required_argument, NULL, OPT_CHROME }, { "timeline", required_argument, NULL, OPT_TIMELINE },
        { "full-names", no_argument, NULL, OPT_FULL }, { "help", no_argument, NULL, 'h' },
        { "version", no_argument, NULL, 'V' },         { NULL, 0, NULL, 0 },
    };
    static const char *const formats[] = { "table", "csv", "json" };
    gma_opts opt;
    memset(&opt, 0, sizeof(opt));
    opt.by = GMA_BY_KERNEL;
    opt.sort = GMA_SORT_MEM;
    opt.top = 10;
    opt.format = GMA_FMT_TABLE;
    opt.window = opt.step = opt.device = -1;
    uint64_t v;
    int c;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":b:s:n:f:w:S:d:D:hV", longopts, NULL)) != -1) {
        int i;
        switch (c) {
        case 'b':
            if ((i = pick(optarg, gma_by_names, GMA_BY_COUNT_)) < 0)
                return usage_error("--by: '%s' is not one of kernel, range, alloc, step, tag, stream, device", optarg);
            opt.by = (gma_by)i;
            break;
        case 's':
            if ((i = pick(optarg, gma_sort_names, GMA_SORT_COUNT_)) < 0)
                return usage_error("--sort: '%s' is not one of mem, peak, alloc, count, time, name", optarg);
            opt.sort = (gma_sort)i;
            opt.sort_given = 1;
            break;
        case 'n':
            if (parse_u64(optarg, &opt.top) != 0)
                return usage_error("--top: '%s' is not a non-negative integer", optarg);
            break;
        case 'f':
            if ((i = pick(optarg, formats, 3)) < 0)
                return usage_error("--format: '%s' is not one of table, csv, json", optarg);
            opt.format = (gma_format)i;
            break;
        case 'w':
            if (parse_u64(optarg, &v) != 0 || v > INT64_MAX)
                return usage_error("--window: '%s' is not a window number", optarg);
            opt.window = (int64_t)v;
            break;
        case 'S':
            if (parse_u64(optarg, &v) != 0 || v > INT64_MAX)
                return usage_error("--step: '%s' is not a step number", optarg);
            opt.step = (int64_t)v;
            break;
        case 'd':
            if (parse_u64(optarg, &v) != 0 || v >= GMA_MAX_DEVICES)
                return usage_error("--device: '%s' is not a device number (0-63)", optarg);
            opt.device = (int64_t)v;
            break;
        case 'D': opt.diff_path = optarg; break;
        case OPT_CHROME: opt.chrome_path = optarg; break;
        case OPT_TIMELINE: {
            size_t n = strlen(optarg);
            if (!((n > 4 && strcasecmp(optarg + n - 4, ".svg") == 0) ||
                  (n > 5 && strcasecmp(optarg + n - 5, ".html") == 0)))
                return usage_error("--timeline: '%s' must end in .svg or .html", optarg);
            opt.timeline_path = optarg;
            break;
        }
        case OPT_FULL: opt.full_names = 1; break;
        case 'h': fputs(USAGE, stdout); return 0;
        case 'V':
            printf("gmem-analyze %s (trace format %d.%d)\n", GMEMPROF_VERSION, GMT_VERSION_MAJOR, GMT_VERSION_MINOR);
            return 0;
        case ':': return usage_error("option '%s' needs a value", argv[optind - 1]);
        default: return usage_error("unknown option '%s'", argv[optind - 1]);
        }
    }
    if (optind >= argc)
        return usage_error("%s", "no TRACE given");
    if (optind + 1 < argc)
        return usage_error("one TRACE only (extra argument '%s'); use --diff OTHER to compare", argv[optind + 1]);
    const char *path = argv[optind];
    if (!opt.sort_given && (opt.by == GMA_BY_STEP || opt.by == GMA_BY_TAG))
        opt.sort = GMA_SORT_TIME;
    if (opt.diff_path && opt.by == GMA_BY_ALLOC)
        return usage_error("%s", "--diff compares rows matched by name: use --by kernel, range, step, tag, stream or device");
    if (opt.diff_path && strcmp(opt.diff_path, "-") == 0 && strcmp(path, "-") == 0)
        return usage_error("%s", "standard input can be read once: give a file for TRACE or OTHER");

    static gma_replay ra, rb; /* large: kept off the stack */
    char msg[600];
    if (gma_replay_init(&ra, &opt, path) != 0) {
        fprintf(stderr, "gmem-analyze: out of memory\n");
        return EXIT_BAD_INPUT;
    }
    int rc = 0;
    if (opt.chrome_path && gma_chrome_open(&ra, opt.chrome_path) != 0) {
        fprintf(stderr, "gmem-analyze: cannot write %s: %s\n", opt.chrome_path, strerror(errno));
        rc = EXIT_BAD_INPUT;
    }
    if (!rc && opt.timeline_path && gma_timeline_open(&ra, opt.timeline_path) != 0) {
        fprintf(stderr, "gmem-analyze: cannot write %s: %s\n", opt.timeline_path, strerror(errno));
        rc = EXIT_BAD_INPUT;
    }
    if (!rc && gma_replay_read(&ra, msg, sizeof(msg)) != 0) {
        fprintf(stderr, "gmem-analyze: %s\n", msg);
        rc = EXIT_BAD_INPUT;
    }
    int have_b = 0;
    if (!rc && opt.diff_path) {
        have_b = 1;
        if (gma_replay_file(&rb, &opt, opt.diff_path, msg, sizeof(msg)) != 0) {
            fprintf(stderr, "gmem-analyze: %s\n", msg);
            rc = EXIT_BAD_INPUT;
        }
    }
    if (!rc) {
        char w[400];
        if (gma_trace_warning(&ra, w, sizeof(w)))
            fprintf(stderr, "gmem-analyze: warning: %s: %s\n", path, w);
        if (have_b && gma_trace_warning(&rb, w, sizeof(w)))
            fprintf(stderr, "gmem-analyze: warning: %s: %s\n", opt.diff_path, w);
        int perr;
        if (have_b) {
            perr = gma_diff_print(stdout, &ra, &rb);
        } else {
            gma_report rep;
            perr = gma_report_build(&rep, &ra);
            if (!perr) {
                if (opt.format == GMA_FMT_JSON)
                    perr = gma_print_json(stdout, &rep);
                else if (opt.format == GMA_FMT_CSV)
                    perr = gma_print_csv(stdout, &rep);
                else
                    perr = gma_print_table(stdout, &rep);
            }
            gma_report_free(&rep);
        }
        if (perr || fflush(stdout) != 0) {
            fprintf(stderr, "gmem-analyze: writing the report failed: %s\n", errno ? strerror(errno) : "out of memory");
            rc = EXIT_BAD_INPUT;
        }
        if (opt.chrome_path && gma_chrome_close(&ra) != 0) {
            fprintf(stderr, "gmem-analyze: writing %s failed: %s\n", opt.chrome_path, strerror(errno));
            rc = EXIT_BAD_INPUT;
        }
        if (opt.timeline_path && gma_timeline_write(&ra) != 0) {
            fprintf(stderr, "gmem-analyze: writing %s failed: %s\n", opt.timeline_path, strerror(errno));
            rc = EXIT_BAD_INPUT;
        }
    }
    gma_replay_free(&ra);
    if (have_b)
        gma_replay_free(&rb);
    return rc;
}
