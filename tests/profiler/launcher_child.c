/*
 * The command test_launcher runs under the launcher. One mode per run:
 *   exit N                 exit with status N
 *   signal N               die of signal N (no core file)
 *   print TEXT...          write each TEXT and a newline to stdout, exit 0
 *   env FILE               write the environment the launcher set up to FILE
 *   summary P B W R D S... append summary lines (groups of six: path, bytes,
 *                          windows, records, dropped, status) to
 *                          $GMEMPROF_SUMMARY_FILE; a path "RAW:text" appends
 *                          text as is (malformed lines); then exit 0
 *   wait FILE [catch]      write "ready" to FILE, wait for a signal; with
 *                          "catch" exit 40+signal from a handler
 *   disp FILE              write the signal dispositions and mask to FILE
 */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "summary.h"

extern char **environ;

static void on_signal(int sig) { _exit(40 + sig); }

static int write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return -1;
    fputs(text, f);
    return fclose(f);
}

int main(int argc, char **argv)
{
    if (argc < 2)
        return 100;
    const char *mode = argv[1];
    if (strcmp(mode, "exit") == 0 && argc == 3)
        return atoi(argv[2]);
    if (strcmp(mode, "signal") == 0 && argc == 3) {
        int sig = atoi(argv[2]);
        struct rlimit rl = {0, 0};
        setrlimit(RLIMIT_CORE, &rl);
        signal(sig, SIG_DFL);
        raise(sig);
        return 101;
    }
    if (strcmp(mode, "print") == 0) {
        for (int i = 2; i < argc; i++)
            printf("%s\n", argv[i]);
        return 0;
    }
    if (strcmp(mode, "env") == 0 && argc == 3) {
        FILE *f = fopen(argv[2], "w");
        if (!f)
            return 102;
        for (char **e = environ; *e; e++)
            if (strncmp(*e, "GMEMPROF_", 9) == 0 || strncmp(*e, "CUDA_INJECTION64_PATH=", 22) == 0 ||
                strncmp(*e, "NVTX_INJECTION64_PATH=", 22) == 0)
                fprintf(f, "%s\n", *e);
        const char *s = getenv(GMP_SUMMARY_ENV);
        fprintf(f, "summary_file_exists=%d\n", s && access(s, W_OK) == 0);
        return fclose(f) == 0 ? 0 : 103;
    }
    if (strcmp(mode, "summary") == 0 && (argc - 2) % 6 == 0) {
        const char *path = getenv(GMP_SUMMARY_ENV);
        int fd = path ? open(path, O_WRONLY | O_APPEND) : -1;
        if (fd < 0)
            return 104;
        for (int i = 2; i < argc; i += 6) {
            char line[GMP_SUMMARY_LINE_MAX];
            size_t n;
            if (strncmp(argv[i], "RAW:", 4) == 0) {
                n = (size_t)snprintf(line, sizeof line, "%s\n", argv[i] + 4);
            } else {
                static gmp_summary s;
                memset(&s, 0, sizeof s);
                snprintf(s.trace, sizeof s.trace, "%s", argv[i]);
                s.bytes = strtoull(argv[i + 1], NULL, 10);
                s.windows = strtoull(argv[i + 2], NULL, 10);
                s.records = strtoull(argv[i + 3], NULL, 10);
                s.dropped = strtoull(argv[i + 4], NULL, 10);
                snprintf(s.status, sizeof s.status, "%s", argv[i + 5]);
                n = gmp_summary_format_line(line, sizeof line, &s);
            }
            if (n >= sizeof line || write(fd, line, n) != (ssize_t)n)
                return 105;
        }
        close(fd);
        return 0;
    }
    if (strcmp(mode, "wait") == 0 && (argc == 3 || argc == 4)) {
        if (argc == 4) {
            signal(SIGINT, on_signal);
            signal(SIGTERM, on_signal);
            signal(SIGHUP, on_signal);
        }
        if (write_file(argv[2], "ready\n") != 0)
            return 106;
        for (int i = 0; i < 100; i++) /* 10 s at most, then give up */
            usleep(100000);
        return 107;
    }
    if (strcmp(mode, "hold") == 0 && argc == 3) {
        /* its pid in FILE (whole once it exists), then 10 s at most */
        char text[32], tmp[4096];
        snprintf(text, sizeof text, "%ld\n", (long)getpid());
        snprintf(tmp, sizeof tmp, "%s.tmp", argv[2]);
        if (write_file(tmp, text) != 0 || rename(tmp, argv[2]) != 0)
            return 106;
        for (int i = 0; i < 100; i++)
            usleep(100000);
        return 107;
    }
    if (strcmp(mode, "disp") == 0 && argc == 3) {
        char text[256];
        size_t n = 0;
        static const int sigs[] = {SIGINT, SIGTERM, SIGHUP};
        static const char *const names[] = {"INT", "TERM", "HUP"};
        sigset_t mask;
        sigprocmask(SIG_BLOCK, NULL, &mask);
        for (int i = 0; i < 3; i++) {
            struct sigaction sa;
            sigaction(sigs[i], NULL, &sa);
            n += (size_t)snprintf(text + n, sizeof text - n, "%s=%s%s ", names[i],
                                  sa.sa_handler == SIG_IGN ? "ign" : sa.sa_handler == SIG_DFL ? "dfl" : "other",
                                  sigismember(&mask, sigs[i]) ? ",blocked" : "");
        }
        snprintf(text + n, sizeof text - n, "\n");
        return write_file(argv[2], text) == 0 ? 0 : 108;
    }
    return 100;
}
