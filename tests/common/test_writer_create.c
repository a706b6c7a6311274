/*
 * How the writer creates the trace file (issue 26, items 2, 4 and 11):
 *   - a link at the name is replaced, its target never written;
 *   - an existing file is replaced by a new one (new inode, this process's,
 *     mode 0666 less the umask), never written in place;
 *   - a name held by a live writer (its flock) is left alone: the second
 *     writer takes NAME.<pid>.zst and says so (gmt_writer_open: EBUSY);
 *   - a FIFO, a socket or a directory is refused at once (no blocking open);
 *   - a character device (/dev/null) is written in place;
 *   - as root, a file owned by another user is replaced by one of ours.
 * Each is read back with the reader.
 */
#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include "tutil.h"

static char dir[200];

static gmt_record kernel(uint64_t i)
{
    gmt_record r;
    memset(&r, 0, sizeof r);
    r.type = GMT_REC_KERNEL;
    r.u.kernel.start = 1000 + i * 10;
    r.u.kernel.end = r.u.kernel.start + 5;
    r.u.kernel.name = 1;
    r.u.kernel.seq = i + 1;
    return r;
}

/* Writes n kernels and closes; the status of the close. */
static gmt_status fill(gmt_writer *w, int n)
{
    for (int i = 0; i < n; i++) {
        gmt_record k = kernel((uint64_t)i);
        gmt_writer_put(w, &k);
    }
    return gmt_writer_close(w);
}

/* Records in the trace at path, -1 when it does not read cleanly. */
static long records_in(const char *path)
{
    gmt_reader *r = gmt_reader_open(path);
    if (!r)
        return -1;
    gmt_record rec;
    long n = 0;
    int k;
    while ((k = gmt_reader_next(r, &rec)) > 0)
        n++;
    gmt_reader_close(r);
    return k == 0 ? n : -1;
}

static void write_text(const char *path, const char *text, mode_t mode)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, mode);
    REQUIRE(fd >= 0, "create %s: %s", path, strerror(errno));
    REQUIRE(write(fd, text, strlen(text)) == (ssize_t)strlen(text), "write %s", path);
    close(fd);
    chmod(path, mode);
}

static void test_symlink(void)
{
    char victim[300], link_[300];
    snprintf(victim, sizeof victim, "%s/victim", dir);
    snprintf(link_, sizeof link_, "%s/t.zst", dir);
    write_text(victim, "precious\n", 0644);
    REQUIRE(symlink(victim, link_) == 0, "symlink");
    gmt_writer *w = gmt_writer_open(link_, NULL);
    REQUIRE(w, "open over a link: %s", strerror(errno));
    CHECK(fill(w, 5) == GMT_OK);
    tu_buf b = tu_slurp(victim);
    CHECK(b.n == 9 && memcmp(b.p, "precious\n", 9) == 0, "the link's target was written: %zu bytes", b.n);
    tu_buf_free(&b);
    struct stat st;
    CHECK(lstat(link_, &st) == 0 && S_ISREG(st.st_mode), "the name is now a regular file");
    CHECK(records_in(link_) == 5);
    unlink(victim);
    unlink(link_);
}

static void test_existing_replaced(void)
{
    char p[300];
    snprintf(p, sizeof p, "%s/old.zst", dir);
    write_text(p, "an earlier file, readable by all\n", 0666);
    struct stat before, after;
    REQUIRE(stat(p, &before) == 0, "stat");
    int keep = open(p, O_RDONLY); /* holds the old inode: it cannot be reused */
    mode_t old_mask = umask(0027);
    gmt_writer *w = gmt_writer_open(p, NULL);
    umask(old_mask);
    REQUIRE(w, "open over a file: %s", strerror(errno));
    CHECK(fill(w, 3) == GMT_OK);
    REQUIRE(stat(p, &after) == 0, "stat");
    CHECK(after.st_ino != before.st_ino, "written in place (same inode)");
    CHECK((after.st_mode & 0777) == 0640, "mode %o, want 0666 less umask 027 = 0640", after.st_mode & 0777);
    CHECK(after.st_uid == geteuid());
    CHECK(records_in(p) == 3);
    close(keep);

    /* another umask: the mode follows it (not a fixed 0644) */
    old_mask = umask(0002);
    w = gmt_writer_open(p, NULL);
    umask(old_mask);
    REQUIRE(w, "open");
    CHECK(fill(w, 1) == GMT_OK);
    CHECK(stat(p, &after) == 0 && (after.st_mode & 0777) == 0664, "mode %o, want 0664", after.st_mode & 0777);

    /* as root: a file of another user is replaced by one of ours */
    if (geteuid() == 0) {
        REQUIRE(chown(p, 65534, 65534) == 0, "chown");
        w = gmt_writer_open(p, NULL);
        REQUIRE(w, "open");
        CHECK(fill(w, 1) == GMT_OK);
        CHECK(stat(p, &after) == 0 && after.st_uid == 0, "owner %u, want 0", (unsigned)after.st_uid);
    }
    unlink(p);
}

static void test_taken(void)
{
    char p[300], want[300], got[600], msg[700];
    snprintf(p, sizeof p, "%s/s.zst", dir);
    gmt_writer *first = gmt_writer_open(p, NULL);
    REQUIRE(first, "first writer");
    gmt_record k = kernel(0);
    CHECK(gmt_writer_put(first, &k) == GMT_OK);

    errno = 0;
    CHECK(gmt_writer_open(p, NULL) == NULL && errno == EBUSY, "open of a held name: errno %d", errno);

    snprintf(got, sizeof got, "%s", p);
    gmt_writer *second = gmt_writer_create(got, sizeof got, NULL, msg, sizeof msg);
    REQUIRE(second, "second writer: %s", msg);
    snprintf(want, sizeof want, "%s/s.%ld.zst", dir, (long)getpid());
    CHECK_STR(got, want);
    CHECK_HAS(msg, "is being written by another process");
    CHECK_HAS(msg, want);
    CHECK(fill(second, 4) == GMT_OK);
    CHECK(fill(first, 2) == GMT_OK); /* 1 + 2 */
    CHECK(records_in(p) == 3, "first trace");
    CHECK(records_in(want) == 4, "second trace");

    /* closed: the name is free again and is replaced, not renamed */
    snprintf(got, sizeof got, "%s", p);
    second = gmt_writer_create(got, sizeof got, NULL, msg, sizeof msg);
    REQUIRE(second, "writer after the first closed: %s", msg);
    CHECK_STR(got, p);
    CHECK_STR(msg, "");
    CHECK(fill(second, 1) == GMT_OK && records_in(p) == 1);
    unlink(p);
    unlink(want);

    /* no extension: .<pid> at the end */
    snprintf(p, sizeof p, "%s/plain", dir);
    first = gmt_writer_open(p, NULL);
    REQUIRE(first, "open");
    snprintf(got, sizeof got, "%s", p);
    second = gmt_writer_create(got, sizeof got, NULL, msg, sizeof msg);
    REQUIRE(second, "second: %s", msg);
    snprintf(want, sizeof want, "%s/plain.%ld", dir, (long)getpid());
    CHECK_STR(got, want);
    gmt_writer_close(second);
    gmt_writer_close(first);
    unlink(p);
    unlink(want);
}

static void on_alarm(int sig) { (void)sig; }

static void test_not_regular(void)
{
    char p[300], msg[700], got[300];
    /* a FIFO with no reader: refused at once (an open for writing would block) */
    snprintf(p, sizeof p, "%s/fifo.zst", dir);
    REQUIRE(mkfifo(p, 0644) == 0, "mkfifo");
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_alarm; /* no SA_RESTART: a blocked open fails with EINTR instead of hanging */
    sigaction(SIGALRM, &sa, NULL);
    alarm(5);
    snprintf(got, sizeof got, "%s", p);
    gmt_writer *w = gmt_writer_create(got, sizeof got, NULL, msg, sizeof msg);
    alarm(0);
    CHECK(w == NULL, "a FIFO was opened");
    CHECK(errno != EINTR, "blocked on the FIFO");
    CHECK_HAS(msg, "a FIFO");
    struct stat st;
    CHECK(lstat(p, &st) == 0 && S_ISFIFO(st.st_mode), "the FIFO is left as it was");
    unlink(p);

    /* a directory */
    errno = 0;
    CHECK(gmt_writer_open(dir, NULL) == NULL && errno == EISDIR, "directory: errno %d", errno);

    /* a socket */
    snprintf(p, sizeof p, "%s/sock", dir);
    int s = socket(AF_UNIX, SOCK_STREAM, 0);
    struct sockaddr_un a;
    memset(&a, 0, sizeof a);
    a.sun_family = AF_UNIX;
    int fits = strlen(p) < sizeof a.sun_path;
    if (fits)
        memcpy(a.sun_path, p, strlen(p) + 1);
    if (s >= 0 && fits && bind(s, (struct sockaddr *)&a, sizeof a) == 0) {
        snprintf(got, sizeof got, "%s", p);
        CHECK(gmt_writer_create(got, sizeof got, NULL, msg, sizeof msg) == NULL);
        CHECK_HAS(msg, "a socket");
    }
    if (s >= 0)
        close(s);
    unlink(p);

    /* a character device: written in place, left a device */
    w = gmt_writer_open("/dev/null", NULL);
    REQUIRE(w, "/dev/null: %s", strerror(errno));
    CHECK(fill(w, 10) == GMT_OK);
    CHECK(lstat("/dev/null", &st) == 0 && S_ISCHR(st.st_mode));

    /* nothing is left behind by the refusals (no temporary files) */
    char cmd[300];
    snprintf(cmd, sizeof cmd, "test -z \"$(ls -A '%s')\"", dir);
    CHECK(system(cmd) == 0, "files left in %s", dir);
}

int main(void)
{
    const char *t = getenv("TMPDIR");
    snprintf(dir, sizeof dir, "%s/gmt-create-%ld", t && *t ? t : "/tmp", (long)getpid());
    REQUIRE(mkdir(dir, 0755) == 0, "mkdir %s", dir);
    test_symlink();
    test_existing_replaced();
    test_taken();
    test_not_regular();
    rmdir(dir);
    return tc_result("test_writer_create");
}
