/*
 * The gmemprof launcher, run as a program: exit status passthrough, death by
 * the same signal, stdout untouched, missing command, bad options, the
 * environment given to the command, signal forwarding, and the summary
 * printed from the lines the command appended to the summary file.
 *
 * LAUNCHER (a private build of profiler/launcher.c in <dir>/bin), FAKE_LIB
 * (<dir>/lib/libgmemprof.so, found by default), CHILD (launcher_child.c) and
 * WORKDIR come from CMake.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../check.h"

typedef struct result {
    int status;
    char out[16384], err[16384];
} result;

static char workdir[PATH_MAX];
static const char *run_cwd; /* where the launcher starts; NULL: workdir */

static void slurp(const char *path, char *buf, size_t cap)
{
    FILE *f = fopen(path, "r");
    size_t n = 0;
    if (f) {
        n = fread(buf, 1, cap - 1, f);
        fclose(f);
    }
    buf[n] = '\0';
}

static int exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

/* Starts LAUNCHER with args (NULL-terminated) in WORKDIR, stdout and stderr
 * to files. env: "NAME=VALUE" sets, "NAME" unsets. Returns the pid. */
static pid_t start(const char *const *env, const char *const *args)
{
    const char *argv[64];
    int n = 0;
    argv[n++] = LAUNCHER;
    for (; *args && n < 63; args++)
        argv[n++] = *args;
    argv[n] = NULL;
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        char path[PATH_MAX + 16];
        if (chdir(run_cwd ? run_cwd : workdir) != 0)
            _exit(99);
        snprintf(path, sizeof path, "%s/out.txt", workdir);
        int fo = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        snprintf(path, sizeof path, "%s/err.txt", workdir);
        int fe = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fo < 0 || fe < 0 || dup2(fo, 1) < 0 || dup2(fe, 2) < 0)
            _exit(99);
        for (; env && *env; env++) {
            const char *eq = strchr(*env, '=');
            if (eq) {
                char name[128];
                snprintf(name, sizeof name, "%.*s", (int)(eq - *env), *env);
                setenv(name, eq + 1, 1);
            } else {
                unsetenv(*env);
            }
        }
        execv(LAUNCHER, (char *const *)argv);
        _exit(98);
    }
    return pid;
}

static void finish(pid_t pid, result *r)
{
    char path[PATH_MAX + 16];
    while (waitpid(pid, &r->status, 0) < 0 && errno == EINTR)
        ;
    snprintf(path, sizeof path, "%s/out.txt", workdir);
    slurp(path, r->out, sizeof r->out);
    snprintf(path, sizeof path, "%s/err.txt", workdir);
    slurp(path, r->err, sizeof r->err);
}

static void run(result *r, const char *const *env, const char *const *args)
{
    finish(start(env, args), r);
}

#define ARGS(...) ((const char *const[]){__VA_ARGS__, NULL})
#define ENV(...) ((const char *const[]){__VA_ARGS__, NULL})

static int exited_with(const result *r, int code)
{
    if (!WIFEXITED(r->status) || WEXITSTATUS(r->status) != code) {
        fprintf(stderr, "  expected exit %d, got status 0x%x; stderr:\n%s\n", code, r->status, r->err);
        return 0;
    }
    return 1;
}

static char tmpdir[PATH_MAX + 8];
static const char *const base_env[] = {"GMEMPROF_LIB", "CUDA_INJECTION64_PATH", "NVTX_INJECTION64_PATH",
                                       "GMEMPROF_OUTPUT", "GMEMPROF_SUMMARY_FILE", NULL};
static char tmpdir_env[PATH_MAX + 16];

/* Base environment plus one more entry (or none). */
static const char *const *env_plus(const char *extra)
{
    static const char *e[16];
    int n = 0;
    for (const char *const *b = base_env; *b; b++)
        e[n++] = *b;
    e[n++] = tmpdir_env;
    if (extra)
        e[n++] = extra;
    e[n] = NULL;
    return e;
}

/* No summary-file leftovers in the private TMPDIR. */
static int tmp_is_empty(void)
{
    char cmd[sizeof tmpdir + 64];
    snprintf(cmd, sizeof cmd, "test -z \"$(ls -A '%s')\"", tmpdir);
    return system(cmd) == 0;
}

/* ---- cases ----------------------------------------------------------------- */

static void test_exit_codes(void)
{
    static const char *const codes[] = {"0", "3", "255"};
    result r;
    for (int i = 0; i < 3; i++) {
        run(&r, env_plus(NULL), ARGS("-q", "--", CHILD, "exit", codes[i]));
        CHECK(exited_with(&r, atoi(codes[i])));
        CHECK_STR(r.out, "");
        CHECK_STR(r.err, ""); /* -q: nothing at all */
    }
    /* Without "--", the first non-option starts the command. */
    run(&r, env_plus(NULL), ARGS("-q", CHILD, "exit", "4"));
    CHECK(exited_with(&r, 4));
    /* Options after the command belong to the command. */
    run(&r, env_plus(NULL), ARGS("-q", "--", CHILD, "print", "-o", "--bogus", "--"));
    CHECK(exited_with(&r, 0));
    CHECK_STR(r.out, "-o\n--bogus\n--\n");
    CHECK(tmp_is_empty());
}

static void test_signals_reproduced(void)
{
    static const int sigs[] = {SIGTERM, SIGKILL, SIGSEGV, SIGABRT, SIGUSR1};
    result r;
    for (int i = 0; i < 5; i++) {
        char num[8];
        snprintf(num, sizeof num, "%d", sigs[i]);
        run(&r, env_plus(NULL), ARGS("--", CHILD, "signal", num));
        CHECK(WIFSIGNALED(r.status) && WTERMSIG(r.status) == sigs[i]);
        CHECK_STR(r.out, "");
        CHECK_HAS(r.err, "gmemprof: no trace was recorded: the command was killed by signal");
    }
    CHECK(!exists("core"));
    CHECK(tmp_is_empty());
}

static void test_stdout_untouched(void)
{
    result r;
    run(&r, env_plus(NULL), ARGS("-o", "t.zst", "--", CHILD, "print", "hello", "", "  world\t!"));
    CHECK(exited_with(&r, 0));
    CHECK_STR(r.out, "hello\n\n  world\t!\n");
    CHECK_HAS(r.err, "no CUDA context was created"); /* the summary goes to stderr */
    /* -v writes more, still only on stderr. */
    run(&r, env_plus(NULL), ARGS("-v", "--", CHILD, "print", "x"));
    CHECK_STR(r.out, "x\n");
    CHECK_HAS(r.err, "gmemprof: CUDA_INJECTION64_PATH=");
    CHECK_HAS(r.err, "gmemprof: GMEMPROF_LOG=debug");
}

static void test_missing_command(void)
{
    result r;
    run(&r, env_plus(NULL), ARGS("--", "no-such-command-gmemprof-test", "a"));
    CHECK(exited_with(&r, 127));
    CHECK_STR(r.out, "");
    CHECK_STR(r.err, "gmemprof: cannot run 'no-such-command-gmemprof-test': command not found\n");
    run(&r, env_plus(NULL), ARGS("--", "/nonexistent/dir/cmd"));
    CHECK(exited_with(&r, 127));
    CHECK_HAS(r.err, "cannot run '/nonexistent/dir/cmd': command not found");
    /* Found but not executable (the fake library is a plain file). */
    run(&r, env_plus(NULL), ARGS("--", FAKE_LIB));
    CHECK(exited_with(&r, 126));
    CHECK_HAS(r.err, "cannot run '" FAKE_LIB "': Permission denied");
    CHECK(tmp_is_empty());
}

static void test_bad_options(void)
{
    char envfile[PATH_MAX + 16];
    result r;
    snprintf(envfile, sizeof envfile, "%s/env-bad.txt", workdir);
    unlink(envfile);
    struct {
        const char *const *args;
        const char *msg;
    } cases[] = {
        {ARGS("--bogus", "--", CHILD, "env", envfile), "gmemprof: unknown option '--bogus'"},
        {ARGS("-x", CHILD, "env", envfile), "unknown option '-x'"},
        {ARGS("-o"), "option -o needs a value"},
        {ARGS("--schedule"), "option --schedule needs a value"},
        {ARGS("-o", "", "--", CHILD, "env", envfile), "option --output needs a non-empty value"},
        {ARGS("-q"), "no command to run"},
        {ARGS("--"), "no command to run"},
        {ARGS("--sample-ms", "abc", "--", CHILD, "env", envfile),
         "gmemprof: --sample-ms 'abc' is not a number of milliseconds (0..3600000"},
        {ARGS("--sample-ms=99999999", "--", CHILD, "env", envfile), "--sample-ms '99999999' is out of range"},
        {ARGS("--kernels", "fast", "--", CHILD, "env", envfile),
         "gmemprof: --kernels 'fast' is not a kernel mode (accepted: gpu, launch, none"},
        {ARGS("--kernels"), "option --kernels needs a value"},
        {ARGS("--schedule", "wait=1", "--", CHILD, "env", envfile), "gmemprof: --schedule: 'wait=1' has no active=N"},
        {ARGS("-o", "x%q", "--", CHILD, "env", envfile), "-o 'x%q' has an unknown escape '%q'"},
        {ARGS("--step-marker", "sssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssss"
                               "sssssssssssssssssssssssssssssssssssssssssssssssss", "--", CHILD, "env", envfile),
         "--step-marker 's"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        run(&r, env_plus(NULL), cases[i].args);
        CHECK(exited_with(&r, 2));
        CHECK_STR(r.out, "");
        CHECK_HAS(r.err, cases[i].msg);
        CHECK_HAS(r.err, "usage: gmemprof [options] -- COMMAND");
    }
    CHECK(!exists(envfile)); /* the command never ran */
    CHECK(tmp_is_empty());

    /* --help and --version: stdout, exit 0, no command needed. */
    run(&r, env_plus(NULL), ARGS("--help"));
    CHECK(exited_with(&r, 0));
    CHECK_HAS(r.out, "usage: gmemprof [options] -- COMMAND");
    CHECK_HAS(r.out, "--schedule SPEC");
    run(&r, env_plus(NULL), ARGS("--version"));
    CHECK(exited_with(&r, 0));
    CHECK_HAS(r.out, "gmemprof ");
}

/* Reads the env file the child wrote and checks NAME=VALUE lines. */
static void expect_var(const char *envtext, const char *name, const char *value)
{
    char want[PATH_MAX * 2];
    snprintf(want, sizeof want, "\n%s=%s\n", name, value);
    char text[32768];
    snprintf(text, sizeof text, "\n%s", envtext);
    if (!strstr(text, want))
        fprintf(stderr, "  env lacks %s=%s:\n%s", name, value, envtext);
    CHECK(strstr(text, want) != NULL);
}

static void test_environment(void)
{
    char envfile[PATH_MAX + 16], text[32768], lib[PATH_MAX], out[PATH_MAX * 2];
    result r;
    snprintf(envfile, sizeof envfile, "%s/env.txt", workdir);
    CHECK(realpath(FAKE_LIB, lib) != NULL);

    run(&r, env_plus(NULL),
        ARGS("-o", "out-%p.zst", "--schedule", "2,1,3", "--step-marker", "iter", "--tag-prefix", "snap/",
             "--sample-ms", "50", "--no-kernels", "-q", "--", CHILD, "env", envfile));
    CHECK(exited_with(&r, 0));
    slurp(envfile, text, sizeof text);
    expect_var(text, "CUDA_INJECTION64_PATH", lib); /* found next to the launcher */
    expect_var(text, "NVTX_INJECTION64_PATH", lib);
    snprintf(out, sizeof out, "%s/out-%%p.zst", workdir); /* made absolute */
    expect_var(text, "GMEMPROF_OUTPUT", out);
    expect_var(text, "GMEMPROF_SCHEDULE", "2,1,3");
    expect_var(text, "GMEMPROF_STEP_MARKER", "iter");
    expect_var(text, "GMEMPROF_TAG_PREFIX", "snap/");
    expect_var(text, "GMEMPROF_SAMPLE_MS", "50");
    expect_var(text, "GMEMPROF_KERNELS", "0");
    expect_var(text, "GMEMPROF_LOG", "quiet");
    expect_var(text, "summary_file_exists", "1");
    /* the summary file has no name: the launcher's descriptor */
    CHECK_HAS(text, "GMEMPROF_SUMMARY_FILE=/proc/");
    CHECK_HAS(text, "/fd/");
    CHECK(tmp_is_empty()); /* removed after the run */

    /* --kernels MODE goes through as GMEMPROF_KERNELS */
    run(&r, env_plus(NULL), ARGS("--kernels", "launch", "-q", "--", CHILD, "env", envfile));
    CHECK(exited_with(&r, 0));
    slurp(envfile, text, sizeof text);
    expect_var(text, "GMEMPROF_KERNELS", "launch");

    /* A working directory with '%' in its name stays literal in the pattern. */
    char pctdir[PATH_MAX + 16];
    snprintf(pctdir, sizeof pctdir, "%s/a%%p", workdir);
    mkdir(pctdir, 0755);
    run_cwd = pctdir;
    run(&r, env_plus(NULL), ARGS("-q", "-o", "o.zst", "--", CHILD, "env", envfile));
    run_cwd = NULL;
    CHECK(exited_with(&r, 0));
    slurp(envfile, text, sizeof text);
    snprintf(out, sizeof out, "%s/a%%%%p/o.zst", workdir);
    expect_var(text, "GMEMPROF_OUTPUT", out);

    /* --opt=value forms, -oFILE, an absolute output kept as is; nothing set
     * that was not asked for. */
    char absopt[PATH_MAX + 16];
    snprintf(absopt, sizeof absopt, "-o%s/x.zst", workdir); /* a directory that exists (checked first) */
    run(&r, env_plus(NULL), ARGS(absopt, "--schedule=capture", "--", CHILD, "env", envfile));
    CHECK(exited_with(&r, 0));
    slurp(envfile, text, sizeof text);
    expect_var(text, "GMEMPROF_OUTPUT", absopt + 2);
    expect_var(text, "GMEMPROF_SCHEDULE", "capture");
    CHECK(strstr(text, "GMEMPROF_KERNELS") == NULL);
    CHECK(strstr(text, "GMEMPROF_LOG") == NULL);
    CHECK(strstr(text, "GMEMPROF_STEP_MARKER") == NULL);

    /* GMEMPROF_LIB, and --lib over it; an old CUDA_INJECTION64_PATH is
     * replaced with a warning. */
    char libenv[PATH_MAX + 32];
    snprintf(libenv, sizeof libenv, "GMEMPROF_LIB=%s", envfile); /* any readable file */
    run(&r, env_plus(libenv), ARGS("--", CHILD, "env", envfile));
    CHECK(exited_with(&r, 0));
    slurp(envfile, text, sizeof text);
    char real[PATH_MAX];
    CHECK(realpath(envfile, real) != NULL);
    expect_var(text, "CUDA_INJECTION64_PATH", real);
    const char *e2[] = {"GMEMPROF_LIB=/nonexistent/lib.so", "CUDA_INJECTION64_PATH=/other/tool.so", tmpdir_env,
                        NULL};
    run(&r, e2, ARGS("--lib", FAKE_LIB, "--", CHILD, "env", envfile));
    CHECK(exited_with(&r, 0));
    slurp(envfile, text, sizeof text);
    expect_var(text, "CUDA_INJECTION64_PATH", lib);
    CHECK_HAS(r.err, "gmemprof: CUDA_INJECTION64_PATH was /other/tool.so; using ");

    /* A library that is not there: 125 and where it looked. */
    run(&r, env_plus(NULL), ARGS("--lib", "/nonexistent/libgmemprof.so", "--", CHILD, "exit", "0"));
    CHECK(exited_with(&r, 125));
    CHECK_HAS(r.err, "gmemprof: cannot use /nonexistent/libgmemprof.so (from --lib): No such file");
    run(&r, env_plus("GMEMPROF_LIB=/nonexistent/x.so"), ARGS("--", CHILD, "exit", "0"));
    CHECK(exited_with(&r, 125));
    CHECK_HAS(r.err, "(from GMEMPROF_LIB)");
    run(&r, env_plus(NULL), ARGS("--lib", workdir, "--", CHILD, "exit", "0"));
    CHECK(exited_with(&r, 125));
    CHECK_HAS(r.err, "is not a regular file");

    /* No usable TMPDIR: the command still runs, without a summary. */
    run(&r, ENV("TMPDIR=/nonexistent/tmp", "GMEMPROF_LIB"), ARGS("--", CHILD, "env", envfile));
    CHECK(exited_with(&r, 0));
    CHECK_HAS(r.err, "gmemprof: cannot create a summary file in /nonexistent/tmp");
    slurp(envfile, text, sizeof text);
    CHECK(strstr(text, "GMEMPROF_SUMMARY_FILE") == NULL);
}

static void test_summary(void)
{
    result r;
    char p1[PATH_MAX + 32], p2[PATH_MAX + 32], p3[PATH_MAX + 32];
    snprintf(p1, sizeof p1, "%s/out.zst", workdir);
    snprintf(p2, sizeof p2, "%s/sub/rank1.zst", workdir);
    snprintf(p3, sizeof p3, "%s/my trace.zst", workdir);

    /* 1258291 B = 1.2 MiB (1.2 * 1048576 = 1258291.2). */
    run(&r, env_plus(NULL), ARGS("--", CHILD, "summary", p1, "1258291", "3", "48213", "0", "ok"));
    CHECK(exited_with(&r, 0));
    CHECK_STR(r.out, "");
    CHECK_STR(r.err, "gmemprof: trace out.zst (1.2 MiB, 3 windows, 48,213 records, 0 dropped) "
                     "\xe2\x80\x94 next: gmem-analyze out.zst\n");

    /* Singular words, bytes below 1 KiB, dropped records, incomplete. */
    run(&r, env_plus(NULL), ARGS("--", CHILD, "summary", "/elsewhere/t.zst", "999", "1", "1", "1234567",
                                 "incomplete"));
    CHECK_HAS(r.err, "gmemprof: trace /elsewhere/t.zst (999 B, 1 window, 1 record, 1,234,567 dropped; "
                     "incomplete");
    CHECK_HAS(r.err, "next: gmem-analyze /elsewhere/t.zst\n");

    /* A path that needs quoting in the suggested command. */
    run(&r, env_plus(NULL), ARGS("--", CHILD, "summary", p3, "2048", "0", "10", "0", "ok"));
    CHECK_HAS(r.err, "gmemprof: trace my trace.zst (2.0 KiB, 0 windows, 10 records, 0 dropped)");
    CHECK_HAS(r.err, "next: gmem-analyze 'my trace.zst'\n");

    /* A trace written to a device: nothing to read back, so no "next:". */
    run(&r, env_plus(NULL), ARGS("--", CHILD, "summary", "/dev/full", "2048", "0", "10", "0", "ok"));
    CHECK_HAS(r.err, "gmemprof: trace /dev/full (2.0 KiB, 0 windows, 10 records, 0 dropped)\n");
    CHECK(strstr(r.err, "next:") == NULL, "%s", r.err);

    /* Several processes: each listed. */
    run(&r, env_plus(NULL), ARGS("--", CHILD, "summary", p1, "100", "1", "5", "0", "ok", p2,
                                 "3221225472", "2", "1000000", "7", "ok"));
    CHECK(exited_with(&r, 0));
    CHECK_HAS(r.err, "gmemprof: 2 traces, one per profiled process \xe2\x80\x94 next: gmem-analyze out.zst\n");
    CHECK_HAS(r.err, "gmemprof:   out.zst (100 B, 1 window, 5 records, 0 dropped)\n");
    CHECK_HAS(r.err, "gmemprof:   sub/rank1.zst (3.0 GiB, 2 windows, 1,000,000 records, 7 dropped)\n");
    CHECK(strstr(r.err, "one after another") == NULL);

    /* One name twice: processes of the run that wrote it in turn (the
     * second after the first had ended): said, since only the last remains. */
    run(&r, env_plus(NULL), ARGS("--", CHILD, "summary", p1, "100", "1", "5", "0", "ok", p1, "200", "1", "6", "0",
                                 "ok"));
    CHECK(exited_with(&r, 0));
    CHECK_HAS(r.err, "gmemprof: out.zst was written by processes one after another");

    /* The profiler turned itself off before writing anything. */
    run(&r, env_plus(NULL), ARGS("--", CHILD, "summary", p1, "0", "0", "0", "0", "disabled"));
    CHECK_STR(r.err, "gmemprof: no trace: the profiler turned itself off (see its message above)\n");

    /* A malformed line is reported, the good one still shown. */
    run(&r, env_plus(NULL), ARGS("--", CHILD, "summary", "RAW:garbage", "0", "0", "0", "0", "x", p1, "1",
                                 "1", "1", "0", "ok"));
    CHECK_HAS(r.err, "gmemprof: trace out.zst (1 B, 1 window, 1 record, 0 dropped)");
    CHECK_HAS(r.err, "gmemprof: 1 summary line could not be read");

    /* Nothing recorded. */
    run(&r, env_plus(NULL), ARGS("--", CHILD, "exit", "3"));
    CHECK(exited_with(&r, 3));
    CHECK_STR(r.err, "gmemprof: no trace was recorded: no CUDA context was created (the command did not "
                     "use the GPU through CUDA)\n");

    /* Exit status still passes through with a summary; -q silences it. */
    run(&r, env_plus(NULL), ARGS("-q", "--", CHILD, "summary", p1, "1", "1", "1", "0", "ok"));
    CHECK(exited_with(&r, 0));
    CHECK_STR(r.err, "");
    CHECK(tmp_is_empty());
}

/* Polls for the child's ready file (10 s at most). */
static int wait_ready(const char *path)
{
    for (int i = 0; i < 1000; i++) {
        if (exists(path))
            return 1;
        usleep(10000);
    }
    return 0;
}

static void test_forwarding(void)
{
    static const int sigs[] = {SIGTERM, SIGINT, SIGHUP};
    char ready[PATH_MAX + 16];
    result r;
    snprintf(ready, sizeof ready, "%s/ready", workdir);
    for (int i = 0; i < 3; i++) {
        /* The command catches it and exits 40+sig: the launcher passed it on
         * and did not die itself. */
        unlink(ready);
        pid_t pid = start(env_plus(NULL), ARGS("-q", "--", CHILD, "wait", ready, "catch"));
        CHECK(wait_ready(ready));
        kill(pid, sigs[i]);
        finish(pid, &r);
        CHECK(exited_with(&r, 40 + sigs[i]));

        /* The command dies of it: so does the launcher. */
        unlink(ready);
        pid = start(env_plus(NULL), ARGS("-q", "--", CHILD, "wait", ready));
        CHECK(wait_ready(ready));
        kill(pid, sigs[i]);
        finish(pid, &r);
        CHECK(WIFSIGNALED(r.status) && WTERMSIG(r.status) == sigs[i]);
    }
    unlink(ready);

    /* The command starts with default dispositions and nothing blocked,
     * except that a signal ignored by the launcher's parent stays ignored. */
    char disp[PATH_MAX + 16], text[256];
    snprintf(disp, sizeof disp, "%s/disp.txt", workdir);
    run(&r, env_plus(NULL), ARGS("-q", "--", CHILD, "disp", disp));
    slurp(disp, text, sizeof text);
    CHECK_STR(text, "INT=dfl TERM=dfl HUP=dfl \n");
    signal(SIGHUP, SIG_IGN);
    run(&r, env_plus(NULL), ARGS("-q", "--", CHILD, "disp", disp));
    signal(SIGHUP, SIG_DFL);
    slurp(disp, text, sizeof text);
    CHECK_STR(text, "INT=dfl TERM=dfl HUP=ign \n");
    CHECK(tmp_is_empty());
}


/* -o checked before the command starts (issue 26, item 11): a missing
 * directory, a directory named as the file, a FIFO. Exit 2 and the command
 * never runs (CHILD exit 3 would show). */
static void test_output_checked(void)
{
    result r;
    char o1[PATH_MAX + 32], fifo[PATH_MAX + 32], okdir[PATH_MAX + 32], env[PATH_MAX + 48];
    snprintf(o1, sizeof o1, "%s/no-such-dir/t.zst", workdir);
    run(&r, env_plus(NULL), ARGS("-o", o1, "--", CHILD, "exit", "3"));
    CHECK(exited_with(&r, 2));
    CHECK_HAS(r.err, "no-such-dir");
    CHECK_HAS(r.err, "create it first");

    run(&r, env_plus(NULL), ARGS("-o", workdir, "--", CHILD, "exit", "3"));
    CHECK(exited_with(&r, 2));
    CHECK_HAS(r.err, "is a directory");

    snprintf(fifo, sizeof fifo, "%s/out.fifo", workdir);
    unlink(fifo);
    CHECK(mkfifo(fifo, 0644) == 0);
    run(&r, env_plus(NULL), ARGS("-o", "out.fifo", "--", CHILD, "exit", "3"));
    CHECK(exited_with(&r, 2));
    CHECK_HAS(r.err, "a FIFO");
    /* the same through the environment */
    snprintf(env, sizeof env, "GMEMPROF_OUTPUT=%s", fifo);
    const char *fe[] = {"GMEMPROF_LIB", "CUDA_INJECTION64_PATH", "NVTX_INJECTION64_PATH", "GMEMPROF_SUMMARY_FILE",
                        tmpdir_env, env, NULL};
    run(&r, fe, ARGS("--", CHILD, "exit", "3"));
    CHECK(exited_with(&r, 2));
    CHECK_HAS(r.err, "GMEMPROF_OUTPUT");
    CHECK_HAS(r.err, "a FIFO");
    unlink(fifo);

    /* a name that stands for a descriptor, as /dev/stdout does (stdout is
     * out.txt here, a regular file): refused, never replaced */
    char fdlink[PATH_MAX + 32];
    struct stat ls;
    snprintf(fdlink, sizeof fdlink, "%s/stdout.zst", workdir);
    unlink(fdlink);
    CHECK(symlink("/proc/self/fd/1", fdlink) == 0);
    run(&r, env_plus(NULL), ARGS("-o", "stdout.zst", "--", CHILD, "exit", "3"));
    CHECK(exited_with(&r, 2));
    CHECK_HAS(r.err, "gmemprof: -o 'stdout.zst' names an open descriptor (a regular file), which the profiler "
                     "never replaces or writes: name a regular file");
    CHECK(lstat(fdlink, &ls) == 0 && S_ISLNK(ls.st_mode));
    unlink(fdlink);

    /* fine: a directory with the trailing '/', a pattern, a new file */
    snprintf(okdir, sizeof okdir, "%s/", workdir);
    run(&r, env_plus(NULL), ARGS("-o", okdir, "--", CHILD, "exit", "3"));
    CHECK(exited_with(&r, 3));
    run(&r, env_plus(NULL), ARGS("-o", "t-%p.zst", "--", CHILD, "exit", "3"));
    CHECK(exited_with(&r, 3));
    run(&r, env_plus(NULL), ARGS("-o", "new.zst", "--", CHILD, "exit", "3"));
    CHECK(exited_with(&r, 3));
    CHECK(tmp_is_empty());
}

/* Control bytes in a path never reach the terminal raw (item 5): the
 * summary, the list of traces, the suggested command ($'...' quoting), a
 * usage error naming the path. */
static void test_escaped_paths(void)
{
    result r;
    char p1[PATH_MAX + 32], p2[PATH_MAX + 32], bad[PATH_MAX + 32];
    snprintf(p1, sizeof p1, "%s/a\x1b[31mb.zst", workdir);
    snprintf(p2, sizeof p2, "%s/c\nd.zst", workdir);
    run(&r, env_plus(NULL), ARGS("--", CHILD, "summary", p1, "10", "1", "1", "0", "ok"));
    CHECK(exited_with(&r, 0));
    CHECK(strchr(r.err, '\x1b') == NULL);
    CHECK_HAS(r.err, "gmemprof: trace a\\x1b[31mb.zst (10 B,");
    CHECK_HAS(r.err, "next: gmem-analyze $'a\\x1b[31mb.zst'\n");
    run(&r, env_plus(NULL), ARGS("--", CHILD, "summary", p1, "10", "1", "1", "0", "ok", p2, "10", "1", "1", "0", "ok"));
    CHECK(strchr(r.err, '\x1b') == NULL);
    CHECK_HAS(r.err, "gmemprof:   a\\x1b[31mb.zst (10 B");
    CHECK_HAS(r.err, "gmemprof:   c\\nd.zst (10 B");
    snprintf(bad, sizeof bad, "%s/no\x1b]0;x\a/t.zst", workdir);
    run(&r, env_plus(NULL), ARGS("-o", bad, "--", CHILD, "exit", "0"));
    CHECK(exited_with(&r, 2));
    CHECK(strchr(r.err, '\x1b') == NULL && strchr(r.err, '\a') == NULL);
    CHECK_HAS(r.err, "no\\x1b]0;x\\x07/t.zst");
}

/* TMPDIR full (item 6): the summary file can be made but no line added.
 * The launcher finds out before the run (it reserves room) and says so,
 * instead of "no CUDA context was created" afterwards. Needs a small tmpfs:
 * root in a private mount namespace; skipped otherwise. */
static void test_full_tmpdir(void)
{
    char full[PATH_MAX + 16], env[PATH_MAX + 32], fill[PATH_MAX + 32], p1[PATH_MAX + 32];
    snprintf(full, sizeof full, "%s/fulltmp", workdir);
    snprintf(env, sizeof env, "TMPDIR=%s", full);
    snprintf(fill, sizeof fill, "%s/fill", full);
    snprintf(p1, sizeof p1, "%s/t.zst", workdir);
    mkdir(full, 0755);
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        if (unshare(CLONE_NEWNS) != 0 || mount("none", "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0 ||
            mount("tmpfs", full, "tmpfs", 0, "size=16k") != 0)
            _exit(77);
        int fd = open(fill, O_WRONLY | O_CREAT, 0644);
        char blk[4096] = {0};
        while (fd >= 0 && write(fd, blk, sizeof blk) > 0)
            ;
        const char *e[] = {"GMEMPROF_LIB", "CUDA_INJECTION64_PATH", "NVTX_INJECTION64_PATH", "GMEMPROF_OUTPUT",
                           "GMEMPROF_SUMMARY_FILE", env, NULL};
        result r;
        run(&r, e, ARGS("--", CHILD, "summary", p1, "10", "1", "1", "0", "ok"));
        _exit(0);
    }
    int st = 0;
    waitpid(pid, &st, 0);
    if (WIFEXITED(st) && WEXITSTATUS(st) == 77) {
        fprintf(stderr, "test_full_tmpdir: skipped (no private tmpfs: not root)\n");
        return;
    }
    CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    char err[16384], path[PATH_MAX + 16];
    snprintf(path, sizeof path, "%s/err.txt", workdir);
    slurp(path, err, sizeof err);
    CHECK_HAS(err, "No space left on device");
    CHECK_HAS(err, "each profiled process prints its own line instead");
    CHECK(strstr(err, "no CUDA context") == NULL, "stderr: %s", err);
}

/* A launcher killed outright (SIGKILL) takes its command with it and
 * leaves no summary file; -V is --version. */
static void test_killed_launcher(void)
{
    char pidf[PATH_MAX + 16], text[64];
    result r;
    snprintf(pidf, sizeof pidf, "%s/hold.pid", workdir);
    unlink(pidf);
    /* the orphan comes to this process, which can then wait for it */
    CHECK(prctl(PR_SET_CHILD_SUBREAPER, 1) == 0);
    pid_t pid = start(env_plus(NULL), ARGS("-q", "--", CHILD, "hold", pidf));
    CHECK(wait_ready(pidf));
    slurp(pidf, text, sizeof text);
    pid_t child = (pid_t)atol(text);
    CHECK(child > 0);
    kill(pid, SIGKILL);
    finish(pid, &r);
    CHECK(WIFSIGNALED(r.status) && WTERMSIG(r.status) == SIGKILL);
    int st = 0;
    CHECK(child > 0 && waitpid(child, &st, 0) == child, "%s", strerror(errno));
    CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL, "the command ended with status %#x", st);
    prctl(PR_SET_CHILD_SUBREAPER, 0);
    CHECK(tmp_is_empty());
    unlink(pidf);

    run(&r, env_plus(NULL), ARGS("-V"));
    CHECK(exited_with(&r, 0));
    CHECK(strncmp(r.out, "gmemprof ", 9) == 0, "stdout: %s", r.out);
}

/* A command killed by a signal that made no trace: the launcher does not
 * name an earlier run's file at the output's name; one this run put there
 * it names. */
static void test_earlier_trace(void)
{
    char old[PATH_MAX + 16];
    result r;
    snprintf(old, sizeof old, "%s/x.zst", workdir);
    FILE *f = fopen(old, "w");
    CHECK(f != NULL);
    if (f) {
        fputs("an earlier run's trace", f);
        fclose(f);
    }
    run(&r, env_plus(NULL), ARGS("-o", "x.zst", "--", "sh", "-c", "kill -SEGV $$"));
    CHECK(WIFSIGNALED(r.status) && WTERMSIG(r.status) == SIGSEGV);
    CHECK(strstr(r.err, "cut short") == NULL, "stderr: %s", r.err);
    CHECK_HAS(r.err, "gmemprof: no trace was recorded: the command was killed by signal 11");
    /* a new file at the name, made by this run */
    run(&r, env_plus(NULL), ARGS("-o", "x.zst", "--", "sh", "-c", "printf abc > x.new && mv x.new x.zst && kill -SEGV $$"));
    CHECK(WIFSIGNALED(r.status) && WTERMSIG(r.status) == SIGSEGV);
    CHECK_HAS(r.err, "the trace cut short at x.zst (3 bytes)");
    unlink(old);
    CHECK(tmp_is_empty());
}

int main(void)
{
    snprintf(workdir, sizeof workdir, "%s", WORKDIR);
    snprintf(tmpdir, sizeof tmpdir, "%s/tmp", workdir);
    snprintf(tmpdir_env, sizeof tmpdir_env, "TMPDIR=%s", tmpdir);
    mkdir(workdir, 0755);
    mkdir(tmpdir, 0755);
    if (chdir(workdir) != 0) {
        perror(workdir);
        return 1;
    }
    /* Leftovers from an earlier run would make tmp_is_empty() fail. */
    char cmd[sizeof tmpdir + 64];
    snprintf(cmd, sizeof cmd, "rm -f '%s'/gmemprof-summary-*", tmpdir);
    if (system(cmd) != 0)
        return 1;
    test_exit_codes();
    test_signals_reproduced();
    test_stdout_untouched();
    test_missing_command();
    test_bad_options();
    test_environment();
    test_summary();
    test_forwarding();
    test_output_checked();
    test_escaped_paths();
    test_full_tmpdir();
    test_killed_launcher();
    test_earlier_trace();
    return tc_result("test_launcher");
}
