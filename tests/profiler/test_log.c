/*
 * The profiler's stderr lines (profiler/log.c), read back through a pipe.
 *
 * - Until the level is set only errors print; then info at info, debug at
 *   debug, errors at every level.
 * - One line per message, "gmemprof: " first, control bytes escaped, a
 *   message longer than the line cut and still ended by '\n'.
 */
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "../check.h"
#include "config.h"
#include "log.h"

static int pipe_r = -1;

/* What the messages since the last call wrote on stderr, into buf
 * (NUL-ended). */
#define GOT 4096
static const char *drain(char *buf)
{
    ssize_t n = read(pipe_r, buf, GOT - 1);
    buf[n > 0 ? n : 0] = '\0';
    return buf;
}

int main(void)
{
    int p[2];
    REQUIRE(pipe(p) == 0);
    int saved = dup(STDERR_FILENO);
    REQUIRE(saved >= 0 && dup2(p[1], STDERR_FILENO) >= 0);
    close(p[1]);
    pipe_r = p[0];
    REQUIRE(fcntl(pipe_r, F_SETFL, O_NONBLOCK) == 0);

    /* before the settings are read: errors only */
    gmp_log_info("i%d", 1);
    gmp_log_debug("d%d", 1);
    gmp_log_error("e%d", 1);
    static char got1[GOT];
    drain(got1);

    gmp_log_set_level(GMP_LOG_INFO);
    gmp_log_info("i%d", 2);
    gmp_log_debug("d%d", 2);
    static char got2[GOT];
    drain(got2);

    gmp_log_set_level(GMP_LOG_DEBUG);
    gmp_log_debug("d%d", 3);
    gmp_log_info("a\tb\nc\x1b");
    static char got3[GOT];
    drain(got3);

    gmp_log_set_level(GMP_LOG_QUIET);
    gmp_log_info("i%d", 4);
    gmp_log_error("e%d", 4);
    static char got4[GOT];
    drain(got4);

    static char big[3000];
    memset(big, 'x', sizeof big - 1);
    gmp_log_error("%s", big);
    static char got5[GOT];
    drain(got5);
    size_t n5 = strlen(got5);

    dup2(saved, STDERR_FILENO); /* the checks' own messages go to stderr again */
    close(saved);
    CHECK_STR(got1, "gmemprof: e1\n");
    CHECK_STR(got2, "gmemprof: i2\n");
    CHECK_STR(got3, "gmemprof: d3\ngmemprof: a\\tb\\nc\\x1b\n");
    CHECK_STR(got4, "gmemprof: e4\n");
    /* the line's buffer is 1024 bytes: 1022 of text, then '\n' */
    CHECK_EQ_U64(n5, 1023);
    CHECK(n5 > 0 && got5[n5 - 1] == '\n' && strncmp(got5, "gmemprof: xxx", 13) == 0);
    return tc_result("test_log");
}
