/*
 * gmemprof — the launcher: profile a command with libgmemprof.so.
 *
 *   gmemprof [-o FILE] [--schedule SPEC] [--step-marker NAME] [--steps SOURCE] [--tag-prefix P]
 *            [--sample-ms N] [--kernels gpu|launch|none] [--no-kernels] [--stacks python|none|off]
 *            [--lib PATH]
 *            [-q|--quiet] [-v]
 *            [--help] [-V|--version] -- CMD ARGS...
 *
 * BUILD: needs only libc and these sources (no gmt, no zstd, no CUDA):
 *   profiler/launcher.c profiler/write/summary.c profiler/config.c profiler/schedule.c
 *   common/gmt_text.c
 * with include directories include/, profiler/ and common/, e.g.
 *   add_executable(gmemprof profiler/launcher.c profiler/write/summary.c
 *                  profiler/config.c profiler/schedule.c common/gmt_text.c)
 *   target_include_directories(gmemprof PRIVATE include profiler common)
 * (config.c/schedule.c validate option values before the command starts, so
 * a typo fails in a second instead of after an hour-long run.)
 *
 * What it does: finds libgmemprof.so (--lib, else $GMEMPROF_LIB, else
 * ../libexec/gmemprof, ../lib or ../lib64 next to this executable:
 * find_lib_beside_exe); points
 * CUDA_INJECTION64_PATH and NVTX_INJECTION64_PATH at it; turns the options
 * into GMEMPROF_* variables; points GMEMPROF_SUMMARY_FILE at a new temporary
 * file; runs the command; forwards SIGINT/SIGTERM/SIGHUP sent to the launcher;
 * waits; prints one summary on stderr from the lines the profiled processes
 * appended to the summary file (profiler/write/summary.h).
 *
 * Rules: never writes to stdout while a command runs (only --help and
 * --version print there, as GNU tools do); the exit status is the command's,
 * and a command killed by a signal makes the launcher die of the same signal.
 * Exit 2: bad usage or option value. 125: the launcher could not start the
 * run (library not found, fork failed). 126/127: the command could not be
 * executed / was not found (as in a shell).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "config.h"
#include "gmt_names.h"
#include "gmt_text.h"
#include "summary.h"

#ifndef GMEMPROF_VERSION
#define GMEMPROF_VERSION "unknown"
#endif

#define EXIT_USAGE 2
#define EXIT_LAUNCH 125
#define EXIT_NOEXEC 126
#define EXIT_NOTFOUND 127

typedef struct options {
    const char *output, *schedule, *step_marker, *steps, *tag_prefix, *sample_ms, *lib;
    const char *kernels; /* --kernels MODE; --no-kernels is --kernels none */
    const char *stacks;  /* --stacks python|none|off */
    int verbosity; /* -1 quiet, 0 normal, 1 verbose */
    int on_oom;    /* --on-oom: the flight recorder */
    char **cmd;    /* NULL-terminated */
} options;

static const char usage_text[] =
    "usage: gmemprof [options] -- COMMAND [ARGS...]\n"
    "Profiles the GPU memory of COMMAND with libgmemprof.so and prints a summary on stderr.\n"
    "\n"
    "  -o, --output FILE      trace file pattern (%p pid, %h host, %r rank, %t start time,\n"
    "                         %% percent); default gmemprof-%h-%p.zst in the working directory;\n"
    "                         ending in '/': that directory. Checked before COMMAND starts: its\n"
    "                         directory must exist; a directory, FIFO or socket is refused. The\n"
    "                         trace is a new file (a file or link there is replaced, never written\n"
    "                         through); a second process given the same name writes NAME.<pid>.zst\n"
    "      --schedule SPEC    steps to record: 'wait=2,warmup=1,active=3[,repeat=1][,skip_first=N]',\n"
    "                         'delay=5s,duration=10s', 'capture' (cudaProfilerStart/Stop) or\n"
    "                         'whole' (default: the whole run)\n"
    "      --step-marker NAME NVTX mark/range name that ends a step (default 'step')\n"
    "      --steps SOURCE     what ends a step: 'auto' (default: NVTX step markers once the\n"
    "                         program sends one, until then each PyTorch optimizer step after a\n"
    "                         backward pass), 'nvtx', 'optimizer' or 'none'\n"
    "      --tag-prefix P     NVTX marks starting with P take a tagged snapshot (default 'tag:')\n"
    "      --sample-ms N      driver memory sample period in active windows, 0 = off (default 100)\n"
    "      --kernels MODE     what is recorded of kernels in recorded steps: 'launch' (default:\n"
    "                         from the launch calls: name, thread, stream, grid, registers,\n"
    "                         shared memory; no GPU time; the lowest overhead), 'gpu' (CUPTI\n"
    "                         kernel records, with GPU start/end; costs more per launch) or\n"
    "                         'none' (allocations only)\n"
    "      --no-kernels       the same as --kernels none\n"
    "      --stacks MODE      'python': each PyTorch tensor carries its whole Python stack besides\n"
    "                         the line of the program that made it; 'none' (default): that line;\n"
    "                         'off': no line (the cheapest recording)\n"
    "      --on-oom           the flight recorder: keep the last steps in memory, write nothing\n"
    "                         unless a CUDA allocation (or PyTorch's allocator) runs out of memory;\n"
    "                         then the steps before the failure, the failure and what held the\n"
    "                         memory go to the -o file (GMEMPROF_OOM_STEPS, GMEMPROF_OOM_MAX_MB...).\n"
    "                         With a --schedule of windows the trace is written as without it, and\n"
    "                         a failure's dump goes beside it: -o NAME.zst, dump NAME.oom.zst\n"
    "      --lib PATH         libgmemprof.so to use (default: $GMEMPROF_LIB, else\n"
    "                         ../libexec/gmemprof, ../lib or ../lib64 next to gmemprof)\n"
    "  -q, --quiet            no summary, and the profiler prints only errors\n"
    "  -v, --verbose          show the environment given to COMMAND; profiler debug messages\n"
    "  -h, --help             this help\n"
    "  -V, --version          the version\n"
    "\n"
    "Other settings are read from GMEMPROF_* variables (" GMEMPROF_DOCDIR "/user-guide.md).\n"
    "Exit status: COMMAND's (death by the same signal if it was killed); 2 bad usage or an\n"
    "output that cannot be written (-o);\n"
    "125 the run could not start; 126 COMMAND cannot be executed; 127 COMMAND not found.\n";

static void usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void usage_error(const char *fmt, ...)
{
    va_list ap;
    char raw[2 * PATH_MAX], shown[8 * PATH_MAX];
    va_start(ap, fmt);
    vsnprintf(raw, sizeof raw, fmt, ap);
    va_end(ap);
    gmt_text_escape(shown, sizeof shown, raw); /* option values may hold control bytes */
    fprintf(stderr, "gmemprof: %s\nusage: gmemprof [options] -- COMMAND [ARGS...]  (gmemprof --help for more)\n",
            shown);
    exit(EXIT_USAGE);
}

/* One "gmemprof: " line on stderr, its control bytes escaped (paths and
 * names in it come from the user). */
static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *fmt, ...)
{
    va_list ap;
    char raw[4 * PATH_MAX], shown[16 * PATH_MAX];
    va_start(ap, fmt);
    vsnprintf(raw, sizeof raw, fmt, ap);
    va_end(ap);
    gmt_text_escape(shown, sizeof shown, raw);
    fprintf(stderr, "gmemprof: %s\n", shown);
}

/* ---- options ------------------------------------------------------------ */

/* Matches "--name VALUE", "--name=VALUE", and for a short name "-o VALUE"
 * and "-oVALUE". Returns 1 and *val when argv[*i] is this option. */
static int opt_value(char **argv, int argc, int *i, const char *lng, const char *shrt,
                     const char **val)
{
    const char *a = argv[*i];
    size_t n = strlen(lng);
    if (strcmp(a, lng) == 0 || (shrt && strcmp(a, shrt) == 0)) {
        if (*i + 1 >= argc)
            usage_error("option %s needs a value", a);
        *val = argv[++*i];
    } else if (strncmp(a, lng, n) == 0 && a[n] == '=') {
        *val = a + n + 1;
    } else if (shrt && strncmp(a, shrt, 2) == 0 && a[2] != '\0') {
        *val = a + 2;
    } else {
        return 0;
    }
    if (!(*val)[0])
        usage_error("option %s needs a non-empty value", lng);
    return 1;
}

/* Validates an option value with the profiler's own parser and reports it
 * under the option's name ("--sample-ms 'abc' is not a number of ..."). */
static void check_option(const char *opt, const char *var, const char *value)
{
    char err[GMP_DIAG_LINE], msg[GMP_DIAG_LINE + 64];
    size_t n = strlen(var);
    if (!value || gmp_config_check_value(var, value, err, sizeof err) == 0)
        return;
    if (strncmp(err, var, n) == 0 && err[n] == '=')
        snprintf(msg, sizeof msg, "%s %s", opt, err + n + 1);
    else if (strncmp(err, var, n) == 0 && err[n] == ':')
        snprintf(msg, sizeof msg, "%s%s", opt, err + n);
    else
        snprintf(msg, sizeof msg, "%s: %s", opt, err);
    usage_error("%s", msg);
}

/* The text of n bytes of a pattern with "%%" as '%'. -1 when it holds
 * another escape (%p, %h...): then only the library can tell the name. */
static int pattern_literal(const char *pat, size_t n, char *out, size_t cap)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (pat[i] == '%' && (i + 1 >= n || pat[++i] != '%'))
            return -1;
        if (k + 1 >= cap)
            return -1;
        out[k++] = pat[i];
    }
    out[k] = '\0';
    return 0;
}

/* Refuses, before the command starts, an output the library could not
 * create: a missing or unwritable directory, a directory named as the file,
 * a FIFO (opening it would block the program). Otherwise the whole run would
 * go unprofiled. what: the option as the user gave it; path: absolute. */
static void check_output(const char *what, const char *shown, const char *path)
{
    char lit[PATH_MAX];
    struct stat st;
    const char *slash = strrchr(path, '/');
    if (slash && slash > path && pattern_literal(path, (size_t)(slash - path), lit, sizeof lit) == 0) {
        if (stat(lit, &st) != 0)
            usage_error("%s '%s': the directory %s: %s; create it first", what, shown, lit, strerror(errno));
        if (!S_ISDIR(st.st_mode))
            usage_error("%s '%s': %s is not a directory", what, shown, lit);
        if (access(lit, W_OK | X_OK) != 0)
            usage_error("%s '%s': cannot create a file in %s: %s", what, shown, lit, strerror(errno));
    }
    if ((slash && !slash[1]) || pattern_literal(path, strlen(path), lit, sizeof lit) != 0 || stat(lit, &st) != 0)
        return; /* a directory for the default name, a pattern, or a new file */
    if (gmt_path_names_fd(lit) && !S_ISCHR(st.st_mode))
        usage_error("%s '%s' names an open descriptor (%s), which the profiler never replaces or writes: "
                    "name a regular file, such as trace.zst",
                    what, shown,
                    S_ISFIFO(st.st_mode)   ? "a pipe"
                    : S_ISREG(st.st_mode)  ? "a regular file"
                    : S_ISSOCK(st.st_mode) ? "a socket"
                                           : "not a device");
    if (S_ISDIR(st.st_mode))
        usage_error("%s '%s' is a directory: name a file in it, or end it with '/' for the default name there",
                    what, shown);
    if (!S_ISREG(st.st_mode) && !S_ISCHR(st.st_mode))
        usage_error("%s '%s' is %s, not a regular file: name a file", what, shown,
                    S_ISFIFO(st.st_mode) ? "a FIFO" : S_ISSOCK(st.st_mode) ? "a socket" : "a device");
}

static void parse_args(int argc, char **argv, options *o)
{
    int i;
    memset(o, 0, sizeof *o);
    for (i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--") == 0) {
            i++;
            break;
        }
        if (a[0] != '-' || a[1] == '\0')
            break; /* the command starts here */
        if (opt_value(argv, argc, &i, "--output", "-o", &o->output) ||
            opt_value(argv, argc, &i, "--schedule", NULL, &o->schedule) ||
            opt_value(argv, argc, &i, "--step-marker", NULL, &o->step_marker) ||
            opt_value(argv, argc, &i, "--steps", NULL, &o->steps) ||
            opt_value(argv, argc, &i, "--tag-prefix", NULL, &o->tag_prefix) ||
            opt_value(argv, argc, &i, "--sample-ms", NULL, &o->sample_ms) ||
            opt_value(argv, argc, &i, "--kernels", NULL, &o->kernels) ||
            opt_value(argv, argc, &i, "--stacks", NULL, &o->stacks) ||
            opt_value(argv, argc, &i, "--lib", NULL, &o->lib))
            continue;
        if (strcmp(a, "--no-kernels") == 0)
            o->kernels = "0";
        else if (strcmp(a, "--on-oom") == 0)
            o->on_oom = 1;
        else if (strcmp(a, "-q") == 0 || strcmp(a, "--quiet") == 0)
            o->verbosity = -1;
        else if (strcmp(a, "-v") == 0 || strcmp(a, "--verbose") == 0)
            o->verbosity = 1;
        else if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            fputs(usage_text, stdout);
            exit(fflush(stdout) == 0 ? 0 : 1);
        } else if (strcmp(a, "-V") == 0 || strcmp(a, "--version") == 0) {
            printf("gmemprof %s (trace format %d.%d)\n", GMEMPROF_VERSION, GMT_VERSION_MAJOR,
                   GMT_VERSION_MINOR);
            exit(fflush(stdout) == 0 ? 0 : 1);
        } else {
            usage_error("unknown option '%s'", a);
        }
    }
    if (i >= argc)
        usage_error("no command to run");
    o->cmd = argv + i;
    check_option("-o", "GMEMPROF_OUTPUT", o->output);
    check_option("--schedule", "GMEMPROF_SCHEDULE", o->schedule);
    check_option("--step-marker", "GMEMPROF_STEP_MARKER", o->step_marker);
    check_option("--steps", "GMEMPROF_STEP_SOURCE", o->steps);
    check_option("--tag-prefix", "GMEMPROF_TAG_PREFIX", o->tag_prefix);
    check_option("--sample-ms", "GMEMPROF_SAMPLE_MS", o->sample_ms);
    check_option("--kernels", "GMEMPROF_KERNELS", o->kernels);
    if (o->stacks && strcmp(o->stacks, "python") != 0 && strcmp(o->stacks, "none") != 0 && strcmp(o->stacks, "off") != 0)
        usage_error("--stacks '%s' is not a mode: 'python' (whole Python stacks), 'none' (the line) or 'off'",
                    o->stacks);
}

/* ---- the library ----------------------------------------------------------- */

/* The library directory of an installed launcher, relative to its bin/ (an
 * absolute one is used as is): CMake passes libexec/gmemprof (cmake/install.cmake). */
#ifndef GMEMPROF_LIBDIR
#define GMEMPROF_LIBDIR "lib"
#endif

/* Finds libgmemprof.so beside the launcher: in GMEMPROF_LIBDIR, ../lib or
 * ../lib64 (a tree laid out by hand), the first that exists. 0 and
 * the candidate in out, or -1 after printing where it looked. */
static int find_lib_beside_exe(char *out, size_t cap)
{
    static const char *const dirs[] = { GMEMPROF_LIBDIR, "lib", "lib64" };
    char exe[PATH_MAX], tried[3 * (PATH_MAX + 64)] = "";
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0) {
        say("cannot find libgmemprof.so: /proc/self/exe is unreadable (%s); pass --lib PATH or set GMEMPROF_LIB",
            strerror(errno));
        return -1;
    }
    exe[n] = '\0';
    char *slash = strrchr(exe, '/');
    if (slash)
        *slash = '\0';
    for (size_t i = 0; i < sizeof dirs / sizeof dirs[0]; i++) {
        if (dirs[i][0] == '/')
            snprintf(out, cap, "%s/libgmemprof.so", dirs[i]);
        else
            snprintf(out, cap, "%s/../%s/libgmemprof.so", exe, dirs[i]);
        if (access(out, R_OK) == 0)
            return 0;
        if (!strstr(tried, out))
            snprintf(tried + strlen(tried), sizeof tried - strlen(tried), "%s%s", tried[0] ? ", " : "",
                     out);
    }
    say("cannot find libgmemprof.so beside the launcher (looked for %s); pass --lib PATH or set GMEMPROF_LIB",
        tried);
    return -1;
}

/* Resolves the library to an absolute path in out. 0, or -1 after printing
 * where it looked. */
static int find_lib(const options *o, char *out, size_t cap)
{
    char cand[PATH_MAX + 64], real[PATH_MAX];
    const char *src, *path = NULL;
    if (o->lib) {
        src = "--lib";
        path = o->lib;
    } else if (getenv("GMEMPROF_LIB") && getenv("GMEMPROF_LIB")[0]) {
        src = "GMEMPROF_LIB";
        path = getenv("GMEMPROF_LIB");
    } else {
        if (find_lib_beside_exe(cand, sizeof cand) != 0)
            return -1;
        src = "the launcher's directory";
        path = cand;
    }
    if (access(path, R_OK) != 0 || !realpath(path, real)) {
        say("cannot use %s (from %s): %s; pass --lib PATH or set GMEMPROF_LIB", path, src, strerror(errno));
        return -1;
    }
    struct stat st;
    if (stat(real, &st) != 0 || !S_ISREG(st.st_mode)) {
        say("%s (from %s) is not a regular file; pass --lib PATH to libgmemprof.so", real, src);
        return -1;
    }
    snprintf(out, cap, "%s", real);
    return 0;
}

static void set_var(const options *o, const char *name, const char *value)
{
    const char *old = getenv(name);
    if (old && strcmp(old, value) != 0 && o->verbosity >= 0 &&
        (strcmp(name, "CUDA_INJECTION64_PATH") == 0 || strcmp(name, "NVTX_INJECTION64_PATH") == 0)) {
        char was[PATH_MAX], now[PATH_MAX];
        gmt_text_escape(was, sizeof was, old);
        gmt_text_escape(now, sizeof now, value);
        fprintf(stderr, "gmemprof: %s was %s; using %s for this run\n", name, was, now);
    }
    if (setenv(name, value, 1) != 0) {
        fprintf(stderr, "gmemprof: cannot set %s: %s\n", name, strerror(errno));
        exit(EXIT_LAUNCH);
    }
    if (o->verbosity > 0) {
        char shown[2 * PATH_MAX];
        gmt_text_escape(shown, sizeof shown, value);
        fprintf(stderr, "gmemprof: %s=%s\n", name, shown);
    }
}

/* ---- signals ----------------------------------------------------------- */

static volatile sig_atomic_t g_child; /* pid of the command, 0 before fork */
static const int g_fwd[] = {SIGINT, SIGTERM, SIGHUP};
#define NFWD (sizeof g_fwd / sizeof g_fwd[0])

/*
 * Forwards a signal to the command. A signal the kernel generated for the
 * terminal (Ctrl-C, hangup: si_code > 0) went to the whole foreground
 * process group, the command included, so it is not sent twice; one sent by
 * a process (kill, timeout, a batch system: si_code <= 0) is forwarded. (A
 * kill of the whole process group still reaches the command twice; the
 * launcher cannot tell it from a kill of its own pid.)
 */
static void forward(int sig, siginfo_t *si, void *uc)
{
    (void)uc;
    pid_t c = (pid_t)g_child;
    if (c <= 0 || (si && (si->si_code > 0 || si->si_pid == c)))
        return;
    int saved = errno;
    kill(c, sig);
    errno = saved;
}

/* ---- the summary ----------------------------------------------------------- */

static void human_bytes(uint64_t b, char *out, size_t cap)
{
    static const char *const unit[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
    double v = (double)b;
    int u = 0;
    if (b < 1024) {
        snprintf(out, cap, "%llu B", (unsigned long long)b);
        return;
    }
    while (v >= 1024.0 && u < 5) {
        v /= 1024.0;
        u++;
    }
    snprintf(out, cap, "%.1f %s", v, unit[u]);
}

static void grouped(uint64_t v, char *out, size_t cap)
{
    char digits[24], tmp[40];
    int n = snprintf(digits, sizeof digits, "%llu", (unsigned long long)v), k = 0;
    for (int i = 0; i < n; i++) {
        if (i > 0 && (n - i) % 3 == 0)
            tmp[k++] = ',';
        tmp[k++] = digits[i];
    }
    tmp[k] = '\0';
    snprintf(out, cap, "%s", tmp);
}

/* The path as the user should see it: relative when under the working
 * directory. */
static const char *display_path(const char *path, const char *cwd)
{
    size_t n = cwd ? strlen(cwd) : 0;
    if (n > 1 && strncmp(path, cwd, n) == 0 && path[n] == '/' && path[n + 1])
        return path + n + 1;
    return path;
}

/* The same, its control bytes escaped (\x1b): never raw to the terminal. */
static const char *shown_path(const char *path, const char *cwd, char *out, size_t cap)
{
    gmt_text_escape(out, cap, display_path(path, cwd));
    return out;
}

/* Whether to suggest reading path back: not when it is something other
 * than a file (/dev/full, /dev/null, a FIFO), which holds no trace. */
static int analyzable(const char *path)
{
    struct stat st;
    return stat(path, &st) != 0 || S_ISREG(st.st_mode);
}

/* Single-quotes a path for the "next:" command when the shell would need it;
 * one with control bytes as $'...' with them escaped, which bash and zsh read
 * back to the same bytes. */
static void shell_word(const char *s, char *out, size_t cap)
{
    size_t n = 0;
    int plain = s[0] != '\0';
    for (const char *p = s; *p; p++)
        if (!strchr("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_./-+=:,@%", *p))
            plain = 0;
    if (plain) {
        snprintf(out, cap, "%s", s);
        return;
    }
    if (gmt_text_has_ctrl(s) && cap > 4) {
        out[n++] = '$';
        out[n++] = '\'';
        for (const char *p = s; *p && n + 8 < cap; p++) {
            if (*p == '\'' || *p == '\\') {
                out[n++] = '\\';
                out[n++] = *p;
            } else {
                n += gmt_text_escape_n(out + n, cap - n, p, 1); /* room: n + 8 < cap */
            }
        }
        out[n++] = '\'';
        out[n] = '\0';
        return;
    }
    if (cap < 3) {
        out[0] = '\0';
        return;
    }
    out[n++] = '\'';
    for (const char *p = s; *p && n + 6 < cap; p++) {
        if (*p == '\'') {
            memcpy(out + n, "'\\''", 4);
            n += 4;
        } else {
            out[n++] = *p;
        }
    }
    out[n++] = '\'';
    out[n] = '\0';
}

static void describe_trace(const gmp_summary *s, char *out, size_t cap)
{
    char size[32], rec[40], drop[40];
    const char *status = "";
    human_bytes(s->bytes, size, sizeof size);
    grouped(s->records, rec, sizeof rec);
    grouped(s->dropped, drop, sizeof drop);
    if (strcmp(s->status, GMP_SUMMARY_STATUS_INCOMPLETE) == 0)
        status = "; incomplete: part of the trace could not be written (disk full or an I/O "
                 "error, see the profiler's message above); the analyzer reads what was written";
    else if (strcmp(s->status, GMP_SUMMARY_STATUS_DISABLED) == 0)
        status = "; the profiler turned itself off, see its message above";
    else if (strcmp(s->status, GMP_SUMMARY_STATUS_OK) != 0)
        status = "; status unknown to this launcher";
    char steps[64] = "";
    if (s->steps)
        snprintf(steps, sizeof steps, ", %llu step%s by %s", (unsigned long long)s->steps,
                 s->steps == 1 ? "" : "s", s->step_source[0] ? s->step_source : "?");
    snprintf(out, cap, "%s, %llu window%s%s, %s record%s, %s dropped%s", size,
             (unsigned long long)s->windows, s->windows == 1 ? "" : "s", steps, rec,
             s->records == 1 ? "" : "s", drop, status);
}

/* The flight recorder's lines (GMEMPROF_ON_OOM): a line per process that
 * wrote a dump, naming its rank, and one for those that had nothing to
 * write, which is not an error. beside: the lines of the recorder beside a
 * trace (its dump's keys), else those of the recorder alone. 0 when f
 * holds no such line. */
static int print_oom_summary(FILE *f, const char *cwd, int beside)
{
    gmp_summary *s = malloc(sizeof *s);
    char *line = NULL, word[4 * GMP_SUMMARY_PATH_MAX + 8], shown[4 * GMP_SUMMARY_PATH_MAX];
    size_t linecap = 0;
    int quiet = 0, failed = 0;
    uint64_t peak = 0, cap = 0;
    rewind(f);
    while (s && getline(&line, &linecap, f) > 0) {
        if (gmp_summary_parse_line(line, s) != 0 || !s->has_oom || s->has_dump != beside)
            continue;
        if (beside) { /* the dump's file, size and status, as the recorder alone has them */
            memcpy(s->trace, s->dump, sizeof s->trace);
            memcpy(s->status, s->dump_status, sizeof s->status);
            s->bytes = s->dump_bytes;
        }
        if (s->ring > peak)
            peak = s->ring;
        cap = s->ring_cap;
        if (strcmp(s->status, GMP_SUMMARY_STATUS_NO_OOM) == 0) {
            quiet++;
            continue;
        }
        char who[48] = "the command", size[32];
        if (s->has_rank)
            snprintf(who, sizeof who, "rank %llu", (unsigned long long)s->rank);
        human_bytes(s->bytes, size, sizeof size);
        shell_word(display_path(s->trace, cwd), word, sizeof word);
        fprintf(stderr, "gmemprof: %s ran out of memory: the steps before it are in %s (%s%s%s)%s%s\n",
                who, shown_path(s->trace, cwd, shown, sizeof shown), size,
                s->dumps > 1 ? ", the first of its dumps" : "",
                strcmp(s->status, GMP_SUMMARY_STATUS_OOM) != 0 ? "; incomplete, see the message above" : "",
                analyzable(s->trace) ? " \xe2\x80\x94 next: gmem-analyze " : "", analyzable(s->trace) ? word : "");
        failed++;
    }
    char pk[32], cp[32];
    human_bytes(peak, pk, sizeof pk);
    human_bytes(cap, cp, sizeof cp);
    if (quiet && !failed)
        fprintf(stderr, "gmemprof: no out-of-memory in this run: the flight recorder wrote %s (it held at most "
                        "%s of its %s cap%s)\n", beside ? "no dump" : "nothing", pk, cp,
                quiet > 1 ? ", in every process" : "");
    else if (quiet)
        fprintf(stderr, "gmemprof: %d other process%s had no out-of-memory: %s %s\n", quiet,
                quiet == 1 ? "" : "es", beside ? "no dump for" : "nothing written for", quiet == 1 ? "it" : "them");
    free(line);
    free(s);
    return quiet + failed;
}

/* Reads the summary file and prints the summary; wstatus (how the command
 * ended) explains an empty file. */
static void print_summary(int fd, int wstatus, const char *cwd, const struct stat *before)
{
    FILE *f = NULL;
    int dupfd = fd >= 0 ? dup(fd) : -1;
    char *line = NULL;
    size_t linecap = 0;
    gmp_summary *s = malloc(sizeof *s), *first = malloc(sizeof *first);
    int good = 0, bad = 0, noctx = 0;
    char info[512], word[4 * GMP_SUMMARY_PATH_MAX + 8], shown[4 * GMP_SUMMARY_PATH_MAX];

    if (dupfd >= 0 && lseek(dupfd, 0, SEEK_SET) == 0)
        f = fdopen(dupfd, "r");
    if (!f) {
        if (dupfd >= 0)
            close(dupfd);
        fprintf(stderr, "gmemprof: cannot read the summary file (%s); see the gmemprof: lines above\n",
                strerror(errno));
        free(s);
        free(first);
        return;
    }
    if (!s || !first || print_oom_summary(f, cwd, 0)) {
        fclose(f);
        free(s);
        free(first);
        return;
    }
    rewind(f);
    /* First pass: count and keep the first good line (the usual case is one). */
    while (getline(&line, &linecap, f) > 0) {
        if (line[strspn(line, " \t\r\n")] == '\0')
            continue; /* blank */
        if (gmp_summary_parse_line(line, s) != 0) {
            bad++;
            continue;
        }
        if (strcmp(s->status, GMP_SUMMARY_STATUS_NOCTX) == 0) {
            noctx++;
            continue;
        }
        if (good++ == 0)
            *first = *s;
    }
    if (good == 1) {
        describe_trace(first, info, sizeof info);
        if (first->bytes == 0 && strcmp(first->status, GMP_SUMMARY_STATUS_DISABLED) == 0) {
            fprintf(stderr, "gmemprof: no trace: the profiler turned itself off (see its message above)\n");
        } else {
            shell_word(display_path(first->trace, cwd), word, sizeof word);
            fprintf(stderr, "gmemprof: trace %s (%s)%s%s\n", shown_path(first->trace, cwd, shown, sizeof shown), info,
                    analyzable(first->trace) ? " \xe2\x80\x94 next: gmem-analyze " : "",
                    analyzable(first->trace) ? word : "");
        }
    } else if (good > 1) {
        shell_word(display_path(first->trace, cwd), word, sizeof word);
        fprintf(stderr, "gmemprof: %d traces, one per profiled process%s%s\n", good,
                analyzable(first->trace) ? " \xe2\x80\x94 next: gmem-analyze " : "", analyzable(first->trace) ? word : "");
        rewind(f);
        char **seen = calloc((size_t)good, sizeof *seen);
        int nseen = 0, reused = 0;
        while (getline(&line, &linecap, f) > 0) {
            if (gmp_summary_parse_line(line, s) != 0 || strcmp(s->status, GMP_SUMMARY_STATUS_NOCTX) == 0)
                continue;
            describe_trace(s, info, sizeof info);
            fprintf(stderr, "gmemprof:   %s (%s)\n", shown_path(s->trace, cwd, shown, sizeof shown), info);
            int again = 0;
            for (int i = 0; seen && i < nseen && !again; i++)
                again = strcmp(seen[i], s->trace) == 0;
            if (again && reused++ == 0)
                fprintf(stderr, "gmemprof: %s was written by processes one after another (the name is taken "
                                "only while its writer runs): it holds the last one's trace; put %%p in -o for "
                                "a file each\n", shown_path(s->trace, cwd, shown, sizeof shown));
            else if (!again && seen && nseen < good)
                seen[nseen++] = strdup(s->trace);
        }
        for (int i = 0; seen && i < nseen; i++)
            free(seen[i]);
        free(seen);
    } else if (bad == 0) {
        const char *pat = getenv("GMEMPROF_OUTPUT");
        struct stat st;
        /* a file there before the run is named only if this run replaced
         * it (a trace is always a new file, renamed onto the name) */
        int ours = pat && !strchr(pat, '%') && stat(pat, &st) == 0 && st.st_size > 0 &&
                   (!before || before->st_dev != st.st_dev || before->st_ino != st.st_ino);
        if (WIFSIGNALED(wstatus) && ours)
            /* SIGKILL leaves no time to report, but every frame written before
             * it is readable: say where the cut-short trace is. */
            fprintf(stderr,
                    "gmemprof: the command was killed by signal %d (%s) before the profiler could "
                    "finish; the trace cut short at %s (%lld bytes) holds what was written: "
                    "gmem-analyze reads it and says what was lost\n",
                    WTERMSIG(wstatus), strsignal(WTERMSIG(wstatus)), shown_path(pat, cwd, shown, sizeof shown),
                    (long long)st.st_size);
        else if (WIFSIGNALED(wstatus))
            fprintf(stderr,
                    "gmemprof: no trace was recorded: the command was killed by signal %d (%s) "
                    "before the profiler could report, or it created no CUDA context\n",
                    WTERMSIG(wstatus), strsignal(WTERMSIG(wstatus)));
        else
            fprintf(stderr,
                    "gmemprof: no trace was recorded: no CUDA context was created (the command did "
                    "not use the GPU through CUDA)\n");
    }
    print_oom_summary(f, cwd, 1); /* the recorder beside the traces: its dumps */
    if (noctx > 0 && good > 0)
        fprintf(stderr,
                "gmemprof: %d more process%s started CUDA but created no context (a launcher's own "
                "process, e.g. torchrun's agent): nothing to record, no trace\n",
                noctx, noctx == 1 ? "" : "es");
    if (bad > 0)
        fprintf(stderr, "gmemprof: %d summary line%s could not be read (a library of another "
                        "version?)\n",
                bad, bad == 1 ? "" : "s");
    free(line);
    fclose(f);
    free(s);
    free(first);
}

/* ---- running the command ---------------------------------------------------- */

/* Ends the launcher the way the command ended. */
static void exit_like(int wstatus)
{
    if (WIFEXITED(wstatus))
        exit(WEXITSTATUS(wstatus));
    if (WIFSIGNALED(wstatus)) {
        int sig = WTERMSIG(wstatus);
        sigset_t set;
        /* The command already dumped core if it was going to: the launcher's
         * own death must not leave a second, misleading core file. */
        struct rlimit rl = {0, 0};
        setrlimit(RLIMIT_CORE, &rl);
        fflush(stderr);
        signal(sig, SIG_DFL);
        sigemptyset(&set);
        sigaddset(&set, sig);
        sigprocmask(SIG_UNBLOCK, &set, NULL);
        raise(sig);
        /* Not fatal by default (cannot happen for a signal that killed a
         * process), or blocked by something: the shell convention. */
        exit(128 + sig);
    }
    exit(EXIT_LAUNCH);
}

/* The command's environment: the library, and each option as its setting. */
static void set_environment(const options *o, const char *lib, const char *cwd)
{
    char outbuf[PATH_MAX + GMP_PATH_MAX];
    set_var(o, "CUDA_INJECTION64_PATH", lib);
    set_var(o, "NVTX_INJECTION64_PATH", lib);
    if (o->output) {
        /* Absolute, so a command that changes directory before it starts
         * CUDA still writes where the user asked. */
        size_t n = 0;
        if (o->output[0] != '/' && cwd[0]) {
            /* The directory is literal text in a pattern: its '%' are doubled. */
            for (const char *c = cwd; *c && n + 3 < sizeof outbuf; c++) {
                if (*c == '%')
                    outbuf[n++] = '%';
                outbuf[n++] = *c;
            }
            outbuf[n++] = '/';
        }
        snprintf(outbuf + n, sizeof outbuf - n, "%s", o->output);
        check_option("-o", "GMEMPROF_OUTPUT", outbuf); /* still within the length limit */
        check_output("-o", o->output, outbuf);
        set_var(o, "GMEMPROF_OUTPUT", outbuf);
    } else if (getenv("GMEMPROF_OUTPUT") && getenv("GMEMPROF_OUTPUT")[0] &&
               gmp_config_check_value("GMEMPROF_OUTPUT", getenv("GMEMPROF_OUTPUT"), NULL, 0) == 0) {
        check_output("GMEMPROF_OUTPUT", getenv("GMEMPROF_OUTPUT"), getenv("GMEMPROF_OUTPUT"));
    }
    if (o->schedule)
        set_var(o, "GMEMPROF_SCHEDULE", o->schedule);
    if (o->step_marker)
        set_var(o, "GMEMPROF_STEP_MARKER", o->step_marker);
    if (o->steps)
        set_var(o, "GMEMPROF_STEP_SOURCE", o->steps);
    if (o->tag_prefix)
        set_var(o, "GMEMPROF_TAG_PREFIX", o->tag_prefix);
    if (o->sample_ms)
        set_var(o, "GMEMPROF_SAMPLE_MS", o->sample_ms);
    if (o->kernels)
        set_var(o, "GMEMPROF_KERNELS", o->kernels);
    if (o->stacks)
        set_var(o, "GMEMPROF_STACKS", o->stacks);
    if (o->on_oom)
        set_var(o, "GMEMPROF_ON_OOM", "1");
    if (o->verbosity < 0)
        set_var(o, "GMEMPROF_LOG", "quiet");
    else if (o->verbosity > 0)
        set_var(o, "GMEMPROF_LOG", "debug");
}

/* The summary file the profiled processes append their lines to, or -1:
 * the run goes on without it if it cannot be made. It has no name: removed
 * as soon as it is made, the processes reach it as /proc/PID/fd/N of the
 * launcher, and nothing is left behind however the launcher ends. */
static int open_summary(const options *o, char *sumpath, size_t cap)
{
    const char *tmp = getenv("TMPDIR");
    if (!tmp || !tmp[0])
        tmp = "/tmp";
    snprintf(sumpath, cap, "%s/gmemprof-summary-XXXXXX", tmp);
    int sumfd = mkostemp(sumpath, O_CLOEXEC);
    /* Room for the lines reserved now: on a full TMPDIR the file is made
     * but no line could be added, and an empty summary would read as "no
     * CUDA context". Without the summary file each process prints its own. */
    if (sumfd >= 0 && fallocate(sumfd, FALLOC_FL_KEEP_SIZE, 0, 64 << 10) != 0 && errno != EOPNOTSUPP &&
        errno != ENOSYS) {
        int e = errno;
        close(sumfd);
        unlink(sumpath);
        sumfd = -1;
        errno = e;
    }
    if (sumfd >= 0) {
        unlink(sumpath);
        snprintf(sumpath, cap, "/proc/%ld/fd/%d", (long)getpid(), sumfd);
    }
    if (sumfd < 0) {
        if (o->verbosity >= 0)
            say("cannot create a summary file in %s (%s); each profiled process prints its own line instead",
                tmp, strerror(errno));
        unsetenv(GMP_SUMMARY_ENV);
    } else {
        set_var(o, GMP_SUMMARY_ENV, sumpath);
    }
    return sumfd;
}

int main(int argc, char **argv)
{
    options o;
    char lib[PATH_MAX], cwd[PATH_MAX];
    char sumpath[PATH_MAX];
    int errpipe[2];
    sigset_t block, old;
    struct sigaction sa, prev[NFWD];
    int installed[NFWD] = {0};

    parse_args(argc, argv, &o);
    if (!getcwd(cwd, sizeof cwd))
        cwd[0] = '\0';
    if (find_lib(&o, lib, sizeof lib) != 0)
        return EXIT_LAUNCH;

    set_environment(&o, lib, cwd);
    int sumfd = open_summary(&o, sumpath, sizeof sumpath);
    /* What is at the output's name now: an earlier run's trace is not this
     * run's to report. */
    struct stat before;
    const char *pat = getenv("GMEMPROF_OUTPUT");
    int had_before = pat && stat(pat, &before) == 0;

    /* Signals stay blocked from before fork until the handlers and g_child
     * are in place, so none is lost or acted on by the wrong process. A
     * signal ignored when the launcher started stays ignored (nohup, a
     * background job) and is inherited so by the command. */
    sigemptyset(&block);
    for (size_t i = 0; i < NFWD; i++)
        sigaddset(&block, g_fwd[i]);
    sigprocmask(SIG_BLOCK, &block, &old);
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = forward;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&sa.sa_mask);
    for (size_t i = 0; i < NFWD; i++) {
        if (sigaction(g_fwd[i], NULL, &prev[i]) == 0 && prev[i].sa_handler != SIG_IGN &&
            sigaction(g_fwd[i], &sa, NULL) == 0)
            installed[i] = 1;
    }

    if (pipe2(errpipe, O_CLOEXEC) != 0) {
        fprintf(stderr, "gmemprof: cannot create a pipe: %s\n", strerror(errno));
        return EXIT_LAUNCH;
    }
    fflush(stderr);
    pid_t launcher = getpid();
    pid_t pid = fork();
    if (pid < 0) {
        say("cannot start %s: fork failed: %s", o.cmd[0], strerror(errno));
        return EXIT_LAUNCH;
    }
    if (pid == 0) {
        /* A launcher killed outright (SIGKILL: nothing to forward) takes
         * the command with it rather than orphan it. */
        if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != launcher)
            _exit(EXIT_LAUNCH);
        /* The command: default dispositions first, then unblock. */
        for (size_t i = 0; i < NFWD; i++)
            if (installed[i])
                signal(g_fwd[i], SIG_DFL);
        sigprocmask(SIG_SETMASK, &old, NULL);
        close(errpipe[0]);
        execvp(o.cmd[0], o.cmd);
        int e = errno;
        ssize_t w = write(errpipe[1], &e, sizeof e);
        (void)w;
        _exit(e == ENOENT || e == ENOTDIR ? EXIT_NOTFOUND : EXIT_NOEXEC);
    }
    g_child = pid;
    sigprocmask(SIG_SETMASK, &old, NULL);
    close(errpipe[1]);

    int exec_errno = 0;
    ssize_t r;
    do
        r = read(errpipe[0], &exec_errno, sizeof exec_errno);
    while (r < 0 && errno == EINTR);
    close(errpipe[0]);

    int wstatus = 0;
    while (waitpid(pid, &wstatus, 0) < 0) {
        if (errno != EINTR) {
            fprintf(stderr, "gmemprof: lost track of the command: %s\n", strerror(errno));
            return EXIT_LAUNCH;
        }
    }
    g_child = 0;

    if (r == (ssize_t)sizeof exec_errno) {
        if (exec_errno == ENOENT || exec_errno == ENOTDIR)
            say("cannot run '%s': command not found", o.cmd[0]);
        else
            say("cannot run '%s': %s", o.cmd[0], strerror(exec_errno));
        return exec_errno == ENOENT || exec_errno == ENOTDIR ? EXIT_NOTFOUND : EXIT_NOEXEC;
    }

    if (sumfd >= 0) {
        if (o.verbosity >= 0)
            print_summary(sumfd, wstatus, cwd, had_before ? &before : NULL);
        close(sumfd);
    }
    exit_like(wstatus);
    return EXIT_LAUNCH;
}
