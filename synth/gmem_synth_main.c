/*
 * gmem-synth: writes a deterministic synthetic training-like trace (see
 * synth/synth.h and docs/trace-format.md).  The summary goes to stderr;
 * stdout stays empty so the tool composes in pipelines.
 * Exit status: 0 done, 1 runtime failure, 2 bad usage.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "synth.h"

static void usage(FILE *f)
{
    fprintf(f,
            "usage: gmem-synth --events N [options] -o FILE\n"
            "       gmem-synth --steps N [options] -o FILE\n"
            "Writes a synthetic training-like gmemprof trace (deterministic for a seed).\n"
            "\n"
            "  -n, --events N       stop after about N records (suffixes k, M, G: x1000)\n"
            "  -s, --steps N        stop after N training steps (all phases)\n"
            "  -S, --seed S         random seed (default 1)\n"
            "  -l, --level L        zstd level 1..19 (default 3)\n"
            "  -f, --frame-bytes B  end a zstd frame after B bytes of input (default 1M)\n"
            "  -L, --layers N       transformer layers, 1..256 (default 12)\n"
            "  -c, --schedule W,U,A wait, warmup and active steps per cycle, each 0..1000,\n"
            "                       A >= 1 (default 1,1,3)\n"
            "  -r, --rank R         the trace of rank R (header rank; device R %% 8; a per-rank\n"
            "                       cudaMalloc buffer of (R %% 8 + 1) x 8 MiB before the first window)\n"
            "  -w, --world-size W   the header's world size (ranks 0..W-1)\n"
            "  -o, --output FILE    the trace to write (\"-\": standard output)\n"
            "      --no-write       generate only, to measure the generator's speed\n"
            "  -q, --quiet          no summary\n"
            "  -h, --help           this help\n");
}

/* Parses a non-negative integer with an optional k/M/G suffix (x1000). */
static int parse_u64(const char *s, uint64_t *out)
{
    if (!s || !*s || *s == '-' || *s == '+')
        return -1;
    errno = 0;
    char *end = NULL;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || end == s)
        return -1;
    uint64_t mul = 1;
    if (*end == 'k' || *end == 'K')
        mul = 1000ull, end++;
    else if (*end == 'm' || *end == 'M')
        mul = 1000000ull, end++;
    else if (*end == 'g' || *end == 'G')
        mul = 1000000000ull, end++;
    if (*end)
        return -1;
    if (v > UINT64_MAX / mul)
        return -1;
    *out = (uint64_t)v * mul;
    return 0;
}

static int bad(const char *opt, const char *val)
{
    fprintf(stderr, "gmem-synth: invalid value for %s: '%s' (try --help)\n", opt, val ? val : "");
    return 2;
}

/* The command line as parsed. */
typedef struct {
    gmt_synth_opts o;
    gmt_writer_opts wo;
    const char *out;
    int quiet, no_write;
} cli;

#define CLI_GO (-1) /* parse_option: go on */
enum { OPT_NO_WRITE = 256 };

/* One option into the command line; CLI_GO, or the exit status to end with. */
static int parse_option(cli *k, int c, char **argv)
{
    uint64_t v = 0;
    switch (c) {
    case 'n':
        if (parse_u64(optarg, &v) || v == 0)
            return bad("--events", optarg);
        k->o.events = v;
        break;
    case 's':
        if (parse_u64(optarg, &v) || v == 0)
            return bad("--steps", optarg);
        k->o.steps = v;
        break;
    case 'S':
        if (parse_u64(optarg, &v))
            return bad("--seed", optarg);
        k->o.seed = v;
        break;
    case 'l':
        if (parse_u64(optarg, &v) || v < 1 || v > 19)
            return bad("--level (1..19)", optarg);
        k->wo.level = (int)v;
        break;
    case 'f':
        if (parse_u64(optarg, &v) || v == 0 || v > (32u << 20))
            return bad("--frame-bytes (1..33554432)", optarg);
        k->wo.frame_bytes = (size_t)v;
        break;
    case 'L':
        if (parse_u64(optarg, &v) || v < 1 || v > 256)
            return bad("--layers (1..256)", optarg);
        k->o.layers = (unsigned)v;
        break;
    case 'c': {
        unsigned w, u, a;
        char tail;
        if (sscanf(optarg, "%u,%u,%u%c", &w, &u, &a, &tail) != 3 || a == 0 || w > 1000 || u > 1000 ||
            a > 1000)
            return bad("--schedule (W,U,A: each 0..1000, A >= 1)", optarg);
        k->o.wait = w;
        k->o.warmup = u;
        k->o.active = a;
        break;
    }
    case 'r':
        if (parse_u64(optarg, &v) || v > 1000000)
            return bad("--rank (0..1000000)", optarg);
        k->o.has_rank = 1;
        k->o.rank = v;
        break;
    case 'w':
        if (parse_u64(optarg, &v) || v == 0 || v > 1000000)
            return bad("--world-size (1..1000000)", optarg);
        k->o.world_size = v;
        break;
    case 'o':
        k->out = optarg;
        break;
    case OPT_NO_WRITE:
        k->no_write = 1;
        break;
    case 'q':
        k->quiet = 1;
        break;
    case 'h':
        usage(stdout);
        return 0;
    case ':':
        fprintf(stderr, "gmem-synth: option '%s' needs a value (try --help)\n", argv[optind - 1]);
        return 2;
    default:
        fprintf(stderr, "gmem-synth: unknown option '%s' (try --help)\n", argv[optind - 1]);
        return 2;
    }
    return CLI_GO;
}

/* All options and arguments, checked together; CLI_GO or the exit status. */
static int parse_options(cli *k, int argc, char **argv)
{
    static const struct option longopts[] = {
        { "events", required_argument, NULL, 'n' },
        { "steps", required_argument, NULL, 's' },
        { "seed", required_argument, NULL, 'S' },
        { "level", required_argument, NULL, 'l' },
        { "frame-bytes", required_argument, NULL, 'f' },
        { "layers", required_argument, NULL, 'L' },
        { "schedule", required_argument, NULL, 'c' },
        { "rank", required_argument, NULL, 'r' },
        { "world-size", required_argument, NULL, 'w' },
        { "output", required_argument, NULL, 'o' },
        { "no-write", no_argument, NULL, OPT_NO_WRITE },
        { "quiet", no_argument, NULL, 'q' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    memset(k, 0, sizeof(*k));
    gmt_synth_opts_default(&k->o);
    k->o.events = 0;
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, ":n:s:S:l:f:L:c:r:w:o:qh", longopts, NULL)) != -1) {
        int rc = parse_option(k, c, argv);
        if (rc != CLI_GO)
            return rc;
    }
    const gmt_synth_opts *o = &k->o;
    if (optind < argc) {
        fprintf(stderr, "gmem-synth: unexpected argument '%s' (try --help)\n", argv[optind]);
        return 2;
    }
    if (!o->events && !o->steps) {
        fprintf(stderr, "gmem-synth: say how long the trace is: --events N or --steps N (try --help)\n");
        return 2;
    }
    if (o->has_rank && o->world_size && o->rank >= o->world_size) {
        fprintf(stderr, "gmem-synth: --rank %llu is not below --world-size %llu: ranks are 0..%llu (try --help)\n",
                (unsigned long long)o->rank, (unsigned long long)o->world_size, (unsigned long long)(o->world_size - 1));
        return 2;
    }
    if (!k->out && !k->no_write) {
        fprintf(stderr, "gmem-synth: no output file: -o FILE (or --no-write) (try --help)\n");
        return 2;
    }
    return CLI_GO;
}

/* The trace to standard output, through a writer on fd 1; -1 when the
 * writer could not start (reported here), else 0 and the status in *out. */
static int write_stdout(const cli *k, gmt_synth_summary *s, gmt_status *out)
{
    gmt_writer *w = gmt_writer_open_fd(1, &k->wo);
    if (!w) {
        fprintf(stderr, "gmem-synth: cannot start writing to standard output: %s\n", strerror(errno));
        return -1;
    }
    gmt_status st = gmt_synth_to_writer(&k->o, w, s);
    gmt_writer_end_frame(w);
    s->bytes_in = gmt_writer_bytes_in(w);
    s->bytes_out = gmt_writer_bytes_out(w);
    s->frames = gmt_writer_frames(w);
    int e = gmt_writer_errno(w);
    gmt_status cst = gmt_writer_close(w);
    if (st == GMT_OK)
        st = cst;
    if (st == GMT_E_IO)
        errno = e;
    *out = st;
    return 0;
}

/* The summary on stderr: what was generated, written, and how fast. */
static void print_summary(const cli *k, const gmt_synth_summary *s)
{
    double secs = s->gen_seconds > 0 ? s->gen_seconds : 1e-9;
    fprintf(stderr, "gmem-synth: %llu records (%llu kernels, %llu allocs, %llu frees), %llu steps, %llu windows\n",
            (unsigned long long)s->records, (unsigned long long)s->by_type[GMT_REC_KERNEL],
            (unsigned long long)s->by_type[GMT_REC_ALLOC], (unsigned long long)s->by_type[GMT_REC_FREE],
            (unsigned long long)s->steps, (unsigned long long)s->windows);
    fprintf(stderr, "gmem-synth: baseline %.1f MiB, peak live %.1f MiB in step %llu\n",
            (double)s->baseline_bytes / 1048576.0, (double)s->peak_live_bytes / 1048576.0,
            (unsigned long long)s->peak_step);
    if (!k->no_write)
        fprintf(stderr,
                "gmem-synth: wrote %s: %llu bytes in %llu frames, %.3f bytes/event compressed, "
                "%.2f bytes/event encoded, ratio %.1fx\n",
                k->out, (unsigned long long)s->bytes_out, (unsigned long long)s->frames,
                s->records ? (double)s->bytes_out / (double)s->records : 0.0,
                s->records ? (double)s->bytes_in / (double)s->records : 0.0,
                s->bytes_out ? (double)s->bytes_in / (double)s->bytes_out : 0.0);
    fprintf(stderr, "gmem-synth: %.3f s, %.1f M events/s\n", secs, (double)s->records / secs / 1e6);
}

int main(int argc, char **argv)
{
    static cli k;
    int rc = parse_options(&k, argc, argv);
    if (rc != CLI_GO)
        return rc;
    gmt_synth_summary s;
    gmt_status st;
    if (k.no_write) {
        st = gmt_synth_run(&k.o, NULL, NULL, &s);
    } else if (strcmp(k.out, "-") == 0) {
        if (write_stdout(&k, &s, &st) != 0)
            return 1;
    } else {
        st = gmt_synth_write(k.out, &k.o, &k.wo, &s);
    }
    if (st != GMT_OK) {
        if (st == GMT_E_IO)
            fprintf(stderr, "gmem-synth: cannot write %s: %s\n", k.out ? k.out : "-", strerror(errno));
        else
            fprintf(stderr, "gmem-synth: generation failed: %s\n", gmt_status_str(st));
        return 1;
    }
    if (!k.quiet)
        print_summary(&k, &s);
    return 0;
}
