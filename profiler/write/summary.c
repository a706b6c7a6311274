/*
 * The summary line (see summary.h): formatter for the library, parser for
 * the launcher. Pure logic, no allocation.
 */
#include "summary.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

typedef struct lbuf {
    char *out;
    size_t cap, len;
} lbuf;

static void lb_putc(lbuf *b, char c)
{
    if (b->len + 1 < b->cap)
        b->out[b->len] = c;
    b->len++;
}

static void lb_puts(lbuf *b, const char *s)
{
    while (*s)
        lb_putc(b, *s++);
}

/* Escapes the bytes that would break the line or the fields. */
static void lb_escaped(lbuf *b, const char *s)
{
    for (; s && *s; s++) {
        switch (*s) {
        case '\\': lb_puts(b, "\\\\"); break;
        case '\t': lb_puts(b, "\\t"); break;
        case '\n': lb_puts(b, "\\n"); break;
        case '\r': lb_puts(b, "\\r"); break;
        default: lb_putc(b, *s); break;
        }
    }
}

static void lb_num(lbuf *b, const char *key, uint64_t v)
{
    char num[24];
    snprintf(num, sizeof num, "%llu", (unsigned long long)v);
    lb_putc(b, '\t');
    lb_puts(b, key);
    lb_putc(b, '=');
    lb_puts(b, num);
}

/* A text field: tab, key, '=', the value escaped. */
static void lb_str(lbuf *b, const char *key, const char *v)
{
    lb_putc(b, '\t');
    lb_puts(b, key);
    lb_putc(b, '=');
    lb_escaped(b, v);
}

/* Reopens a formatted line to add keys before its '\n'; 0 when it is one. */
static int lb_reopen(lbuf *b, char *line, size_t cap)
{
    size_t n = line ? strlen(line) : 0;
    if (!line || n == 0 || line[n - 1] != '\n')
        return -1;
    *b = (lbuf){line, cap, n - 1};
    return 0;
}

/* Ends the line: '\n', and the NUL; too long: "" rather than half a line.
 * Returns the length the whole line needs. */
static size_t lb_end(lbuf *b)
{
    lb_putc(b, '\n');
    if (b->out && b->cap > 0)
        b->out[b->len < b->cap ? b->len : 0] = '\0';
    return b->len;
}

size_t gmp_summary_format_line(char *out, size_t cap, const gmp_summary *s)
{
    lbuf b = {out, cap, 0};
    lb_puts(&b, GMP_SUMMARY_KEY_TRACE "=");
    lb_escaped(&b, s->trace);
    lb_num(&b, GMP_SUMMARY_KEY_BYTES, s->bytes);
    lb_num(&b, GMP_SUMMARY_KEY_WINDOWS, s->windows);
    lb_num(&b, GMP_SUMMARY_KEY_RECORDS, s->records);
    lb_num(&b, GMP_SUMMARY_KEY_DROPPED, s->dropped);
    if (s->steps) {
        lb_num(&b, GMP_SUMMARY_KEY_STEPS, s->steps);
        lb_str(&b, GMP_SUMMARY_KEY_STEP_SOURCE, s->step_source);
    }
    lb_str(&b, GMP_SUMMARY_KEY_STATUS, s->status);
    return lb_end(&b);
}

size_t gmp_summary_add_oom(char *line, size_t cap, uint64_t dumps, uint64_t ring, uint64_t ring_cap, long rank)
{
    lbuf b;
    if (lb_reopen(&b, line, cap) != 0)
        return cap;
    lb_num(&b, GMP_SUMMARY_KEY_DUMPS, dumps);
    lb_num(&b, GMP_SUMMARY_KEY_RING, ring);
    lb_num(&b, GMP_SUMMARY_KEY_RING_CAP, ring_cap);
    if (rank >= 0)
        lb_num(&b, GMP_SUMMARY_KEY_RANK, (uint64_t)rank);
    return lb_end(&b);
}

size_t gmp_summary_add_dump(char *line, size_t cap, const char *dump, uint64_t bytes, const char *status)
{
    lbuf b;
    if (lb_reopen(&b, line, cap) != 0)
        return cap;
    lb_str(&b, GMP_SUMMARY_KEY_DUMP, dump);
    lb_num(&b, GMP_SUMMARY_KEY_DUMP_BYTES, bytes);
    lb_str(&b, GMP_SUMMARY_KEY_DUMP_STATUS, status);
    return lb_end(&b);
}

/* Unescapes [s, e) into out (cap bytes). -1 when it does not fit or holds a
 * bad escape. */
static int unescape(const char *s, const char *e, char *out, size_t cap)
{
    size_t n = 0;
    for (; s < e; s++) {
        char c = *s;
        if (c == '\\') {
            if (++s >= e)
                return -1;
            switch (*s) {
            case '\\': c = '\\'; break;
            case 't': c = '\t'; break;
            case 'n': c = '\n'; break;
            case 'r': c = '\r'; break;
            default: return -1;
            }
        }
        if (n + 1 >= cap)
            return -1;
        out[n++] = c;
    }
    out[n] = '\0';
    return 0;
}

static int parse_num(const char *s, const char *e, uint64_t *v)
{
    uint64_t x = 0;
    if (s == e)
        return -1;
    for (; s < e; s++) {
        if (*s < '0' || *s > '9')
            return -1;
        unsigned d = (unsigned)(*s - '0');
        if (x > (UINT64_MAX - d) / 10)
            return -1;
        x = x * 10 + d;
    }
    *v = x;
    return 0;
}

int gmp_summary_parse_line(const char *line, gmp_summary *s)
{
    static const char *const keys[] = {GMP_SUMMARY_KEY_TRACE,   GMP_SUMMARY_KEY_BYTES,
                                       GMP_SUMMARY_KEY_WINDOWS, GMP_SUMMARY_KEY_RECORDS,
                                       GMP_SUMMARY_KEY_DROPPED, GMP_SUMMARY_KEY_STATUS,
                                       GMP_SUMMARY_KEY_STEPS,   GMP_SUMMARY_KEY_STEP_SOURCE,
                                       GMP_SUMMARY_KEY_DUMPS,   GMP_SUMMARY_KEY_RING,
                                       GMP_SUMMARY_KEY_RING_CAP, GMP_SUMMARY_KEY_RANK,
                                       GMP_SUMMARY_KEY_DUMP,    GMP_SUMMARY_KEY_DUMP_BYTES,
                                       GMP_SUMMARY_KEY_DUMP_STATUS};
    enum { NKEYS = sizeof keys / sizeof keys[0] };
    int seen[NKEYS] = {0};
    if (!line || !s)
        return -1;
    memset(s, 0, sizeof *s);
    const char *end = line + strlen(line);
    if (end > line && end[-1] == '\n')
        end--;
    if (end > line && end[-1] == '\r')
        end--;
    const char *p = line;
    while (p < end) {
        const char *f = memchr(p, '\t', (size_t)(end - p));
        if (!f)
            f = end;
        const char *eq = memchr(p, '=', (size_t)(f - p));
        if (!eq || eq == p)
            return -1;
        size_t klen = (size_t)(eq - p);
        int k;
        for (k = 0; k < NKEYS; k++)
            if (strlen(keys[k]) == klen && memcmp(p, keys[k], klen) == 0)
                break;
        if (k < NKEYS) {
            if (seen[k])
                return -1;
            seen[k] = 1;
            int rc;
            switch (k) {
            case 0: rc = unescape(eq + 1, f, s->trace, sizeof s->trace); break;
            case 1: rc = parse_num(eq + 1, f, &s->bytes); break;
            case 2: rc = parse_num(eq + 1, f, &s->windows); break;
            case 3: rc = parse_num(eq + 1, f, &s->records); break;
            case 4: rc = parse_num(eq + 1, f, &s->dropped); break;
            case 5: rc = unescape(eq + 1, f, s->status, sizeof s->status); break;
            case 6: rc = parse_num(eq + 1, f, &s->steps); break;
            case 7: rc = unescape(eq + 1, f, s->step_source, sizeof s->step_source); break;
            case 8: rc = parse_num(eq + 1, f, &s->dumps), s->has_oom = 1; break;
            case 9: rc = parse_num(eq + 1, f, &s->ring); break;
            case 10: rc = parse_num(eq + 1, f, &s->ring_cap); break;
            case 11: rc = parse_num(eq + 1, f, &s->rank), s->has_rank = 1; break;
            case 12: rc = unescape(eq + 1, f, s->dump, sizeof s->dump), s->has_dump = 1; break;
            case 13: rc = parse_num(eq + 1, f, &s->dump_bytes); break;
            default: rc = unescape(eq + 1, f, s->dump_status, sizeof s->dump_status); break;
            }
            if (rc != 0)
                return -1;
        } /* else: a key from a newer library, ignored */
        p = f < end ? f + 1 : end;
    }
    return seen[0] && seen[5] ? 0 : -1;
}

void gmp_summary_human_bytes(uint64_t b, char *out, size_t cap)
{
    if (b < 1024)
        snprintf(out, cap, "%" PRIu64 " B", b);
    else if (b < (1u << 20))
        snprintf(out, cap, "%.1f KiB", (double)b / 1024.0);
    else if (b < (1u << 30))
        snprintf(out, cap, "%.1f MiB", (double)b / 1048576.0);
    else
        snprintf(out, cap, "%.2f GiB", (double)b / 1073741824.0);
}
