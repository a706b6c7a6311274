/* Containers and formatting for the analyzer; see gma_util.h. */
#include "gma_util.h"

#include "gmt_text.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* ---- hash map ---------------------------------------------------------- */

void gma_map_free(gma_map *m)
{
    free(m->b);
    memset(m, 0, sizeof(*m));
}

void gma_map_clear(gma_map *m)
{
    if (m->b)
        memset(m->b, 0, m->cap * sizeof(*m->b));
    m->count = 0;
}

int gma_map_grow(gma_map *m)
{
    size_t ncap = m->cap ? m->cap * 2 : 64;
    unsigned nshift = 64;
    for (size_t c = ncap; c > 1; c >>= 1)
        nshift--;
    gma_slot_kv *nb = calloc(ncap, sizeof(*nb));
    if (!nb)
        return -1;
    gma_map old = *m;
    m->b = nb;
    m->cap = ncap;
    m->shift = nshift;
    size_t mask = ncap - 1;
    for (size_t i = 0; i < old.cap; i++) {
        if (!old.b[i].val)
            continue;
        size_t j = gma_map_hash(m, old.b[i].key);
        while (nb[j].val)
            j = (j + 1) & mask;
        nb[j] = old.b[i];
    }
    free(old.b);
    return 0;
}

int gma_map_put(gma_map *m, uint64_t key, uint32_t val)
{
    uint32_t old;
    return gma_map_swap(m, key, val, &old) < 0 ? -1 : 0;
}

/* ---- vectors ----------------------------------------------------------- */

void gma_vec_init(gma_vec *v, size_t elem)
{
    memset(v, 0, sizeof(*v));
    v->elem = elem;
}

void gma_vec_free(gma_vec *v)
{
    free(v->data);
    v->data = NULL;
    v->len = v->cap = 0;
}

int gma_vec_reserve(gma_vec *v, size_t n)
{
    if (n <= v->cap)
        return 0;
    size_t ncap = v->cap ? v->cap : 16;
    while (ncap < n)
        ncap *= 2;
    void *p = realloc(v->data, ncap * v->elem);
    if (!p)
        return -1;
    v->data = p;
    v->cap = ncap;
    return 0;
}

int gma_grow_u32(uint32_t **a, uint32_t **b, size_t *cap, size_t need)
{
    if (need <= *cap)
        return 0;
    size_t nc = *cap ? *cap : 1024;
    while (nc < need)
        nc *= 2;
    uint32_t *na = realloc(*a, nc * sizeof(uint32_t));
    if (!na)
        return -1;
    memset(na + *cap, 0, (nc - *cap) * sizeof(uint32_t));
    *a = na;
    if (b) {
        uint32_t *nb = realloc(*b, nc * sizeof(uint32_t));
        if (!nb)
            return -1;
        memset(nb + *cap, 0, (nc - *cap) * sizeof(uint32_t));
        *b = nb;
    }
    *cap = nc;
    return 0;
}

void *gma_vec_push(gma_vec *v)
{
    if (v->len == v->cap && gma_vec_reserve(v, v->len + 1) != 0)
        return NULL;
    void *p = (char *)v->data + v->len * v->elem;
    memset(p, 0, v->elem);
    v->len++;
    return p;
}

/* ---- strings ----------------------------------------------------------- */

void gma_strs_free(gma_strs *s)
{
    free(s->buf);
    memset(s, 0, sizeof(*s));
}

size_t gma_strs_add(gma_strs *s, const char *p, size_t n)
{
    if (!s->buf) {
        s->cap = 4096;
        s->buf = malloc(s->cap);
        if (!s->buf) {
            s->cap = 0;
            return (size_t)-1;
        }
        s->buf[0] = 0;
        s->len = 1;
    }
    if (s->len + n + 1 > s->cap) {
        size_t ncap = s->cap;
        while (s->len + n + 1 > ncap)
            ncap *= 2;
        char *nb = realloc(s->buf, ncap);
        if (!nb)
            return (size_t)-1;
        s->buf = nb;
        s->cap = ncap;
    }
    size_t off = s->len;
    if (n)
        memcpy(s->buf + off, p, n);
    s->buf[off + n] = 0;
    s->len += n + 1;
    return off;
}

/* ---- text buffer ------------------------------------------------------- */

void gma_buf_free(gma_buf *b)
{
    free(b->p);
    memset(b, 0, sizeof(*b));
}

void gma_buf_reset(gma_buf *b)
{
    b->len = 0;
    if (b->p)
        b->p[0] = 0;
}

static int buf_room(gma_buf *b, size_t n)
{
    if (b->oom)
        return -1;
    if (b->len + n + 1 <= b->cap)
        return 0;
    size_t ncap = b->cap ? b->cap : 256;
    while (b->len + n + 1 > ncap)
        ncap *= 2;
    char *np = realloc(b->p, ncap);
    if (!np) {
        b->oom = 1;
        return -1;
    }
    b->p = np;
    b->cap = ncap;
    return 0;
}

void gma_buf_putn(gma_buf *b, const char *s, size_t n)
{
    if (buf_room(b, n) != 0)
        return;
    memcpy(b->p + b->len, s, n);
    b->len += n;
    b->p[b->len] = 0;
}

void gma_buf_puts(gma_buf *b, const char *s) { gma_buf_putn(b, s, strlen(s)); }
void gma_buf_putc(gma_buf *b, char c) { gma_buf_putn(b, &c, 1); }

void gma_buf_printf(gma_buf *b, const char *fmt, ...)
{
    char tmp[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    if ((size_t)n < sizeof(tmp)) {
        gma_buf_putn(b, tmp, (size_t)n);
        return;
    }
    if (buf_room(b, (size_t)n) != 0)
        return;
    va_start(ap, fmt);
    vsnprintf(b->p + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
}

/* ---- formatting -------------------------------------------------------- */

const char *gma_fmt_bytes(char out[GMA_FMT_CAP], uint64_t v)
{
    static const char *const units[] = { "B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB" };
    if (v < 1024) {
        snprintf(out, GMA_FMT_CAP, "%llu B", (unsigned long long)v);
        return out;
    }
    unsigned u = 0;
    double d = (double)v;
    while (d >= 1024.0 && u < 6) {
        d /= 1024.0;
        u++;
    }
    /* Two decimals, but never print "1024.00 KiB": rounding up moves a unit. */
    if (d >= 1023.995 && u < 6) {
        d /= 1024.0;
        u++;
    }
    snprintf(out, GMA_FMT_CAP, "%.2f %s", d, units[u]);
    return out;
}

const char *gma_fmt_sbytes(char out[GMA_FMT_CAP], int64_t v, int show_plus)
{
    char tmp[GMA_FMT_CAP];
    uint64_t mag = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
    gma_fmt_bytes(tmp, mag);
    size_t o = 0;
    if (v < 0 || (show_plus && v > 0))
        out[o++] = v < 0 ? '-' : '+';
    size_t l = strlen(tmp);
    if (l > GMA_FMT_CAP - 1 - o) /* cannot happen: bytes text is short */
        l = GMA_FMT_CAP - 1 - o;
    memcpy(out + o, tmp, l);
    out[o + l] = 0;
    return out;
}

const char *gma_fmt_ms(char out[GMA_FMT_CAP], int64_t ns)
{
    uint64_t mag = ns < 0 ? (uint64_t)0 - (uint64_t)ns : (uint64_t)ns;
    snprintf(out, GMA_FMT_CAP, "%s%llu.%03llu", ns < 0 ? "-" : "", (unsigned long long)(mag / 1000000u),
             (unsigned long long)(mag / 1000u % 1000u));
    return out;
}

const char *gma_fmt_dur(char out[GMA_FMT_CAP], uint64_t ns)
{
    if (ns < 1000u)
        snprintf(out, GMA_FMT_CAP, "%llu ns", (unsigned long long)ns);
    else if (ns < 1000000u)
        snprintf(out, GMA_FMT_CAP, "%.1f us", (double)ns / 1e3);
    else if (ns < 1000000000u)
        snprintf(out, GMA_FMT_CAP, "%.2f ms", (double)ns / 1e6);
    else
        snprintf(out, GMA_FMT_CAP, "%.3f s", (double)ns / 1e9);
    return out;
}

const char *gma_fmt_count(char out[GMA_FMT_CAP], uint64_t v)
{
    char digits[32];
    int n = snprintf(digits, sizeof(digits), "%llu", (unsigned long long)v);
    int o = 0;
    for (int i = 0; i < n; i++) {
        if (i && (n - i) % 3 == 0)
            out[o++] = ',';
        out[o++] = digits[i];
    }
    out[o] = 0;
    return out;
}

size_t gma_utf8_len(const char *str, size_t n)
{
    const unsigned char *s = (const unsigned char *)str;
    unsigned char c = s[0];
    size_t need;
    uint32_t cp;
    if (c < 0x80)
        return 1;
    if (c >= 0xC2 && c <= 0xDF) {
        need = 2;
        cp = c & 0x1F;
    } else if (c >= 0xE0 && c <= 0xEF) {
        need = 3;
        cp = c & 0x0F;
    } else if (c >= 0xF0 && c <= 0xF4) {
        need = 4;
        cp = c & 0x07;
    } else {
        return 0;
    }
    if (n < need)
        return 0;
    for (size_t i = 1; i < need; i++) {
        if ((s[i] & 0xC0) != 0x80)
            return 0;
        cp = (cp << 6) | (s[i] & 0x3F);
    }
    if ((need == 3 && (cp < 0x800 || (cp >= 0xD800 && cp <= 0xDFFF))) || (need == 4 && (cp < 0x10000 || cp > 0x10FFFF)))
        return 0;
    return need;
}

void gma_json_str(FILE *f, const char *s, size_t n)
{
    const unsigned char *p = (const unsigned char *)s;
    putc('"', f);
    for (size_t i = 0; i < n;) {
        unsigned char c = p[i];
        if (c == '"' || c == '\\') {
            putc('\\', f);
            putc(c, f);
            i++;
        } else if (c < 0x20) {
            switch (c) {
            case '\n': fputs("\\n", f); break;
            case '\t': fputs("\\t", f); break;
            case '\r': fputs("\\r", f); break;
            default: fprintf(f, "\\u%04x", c); break;
            }
            i++;
        } else if (c < 0x80) {
            putc(c, f);
            i++;
        } else {
            size_t l = gma_utf8_len(s + i, n - i);
            if (l) {
                fwrite(p + i, 1, l, f);
                i += l;
            } else {
                fputs("\\ufffd", f); /* not UTF-8: U+FFFD, as in every output */
                i++;
            }
        }
    }
    putc('"', f);
}

void gma_json_cstr(FILE *f, const char *s) { gma_json_str(f, s ? s : "", s ? strlen(s) : 0); }

/* s as text for a person or a one-line record: control bytes escaped (\n,
 * \t, \r, \xHH), bytes that are not UTF-8 as U+FFFD; quotes doubled when
 * csv. */
static void put_clean(FILE *f, const char *s, size_t n, int csv)
{
    static const char hex[] = "0123456789abcdef";
    for (size_t i = 0; i < n;) {
        unsigned char c = (unsigned char)s[i];
        size_t l = gma_utf8_len(s + i, n - i);
        if (c < 0x20 || c == 0x7f) {
            putc('\\', f);
            if (c == '\n' || c == '\t' || c == '\r') {
                putc(c == '\n' ? 'n' : c == '\t' ? 't' : 'r', f);
            } else {
                putc('x', f);
                putc(hex[c >> 4], f);
                putc(hex[c & 15], f);
            }
            i++;
        } else if (!l) {
            fputs("\xef\xbf\xbd", f);
            i++;
        } else {
            if (csv && c == '"')
                putc('"', f);
            fwrite(s + i, 1, l, f);
            i += l;
        }
    }
}

void gma_put_text(FILE *f, const char *s)
{
    if (s)
        put_clean(f, s, strlen(s), 0);
}

void gma_text_clean(gma_buf *out, const char *s, size_t n)
{
    for (size_t i = 0; i < n;) {
        unsigned char c = (unsigned char)s[i];
        size_t l = gma_utf8_len(s + i, n - i);
        if (c < 0x20 || c == 0x7f) {
            char e[8];
            gma_buf_putn(out, e, gmt_text_escape_n(e, sizeof e, s + i, 1));
            i++;
        } else if (!l) {
            gma_buf_puts(out, "\xef\xbf\xbd");
            i++;
        } else {
            gma_buf_putn(out, s + i, l);
            i += l;
        }
    }
}

int gma_text_is_clean(const char *s, size_t n)
{
    for (size_t i = 0; i < n;) {
        unsigned char c = (unsigned char)s[i];
        size_t l = gma_utf8_len(s + i, n - i);
        if (c < 0x20 || c == 0x7f || !l)
            return 0;
        i += l;
    }
    return 1;
}

void gma_csv_field(FILE *f, const char *s)
{
    if (!s)
        s = "";
    size_t n = strlen(s);
    /* '#' is quoted too, so that pandas.read_csv(comment='#') keeps names
     * such as "{lambda()#1}" whole while skipping the summary lines. */
    int quote = strpbrk(s, ",\"#") != NULL;
    if (quote)
        putc('"', f);
    put_clean(f, s, n, 1); /* one line per record, the comment lines' too */
    if (quote)
        putc('"', f);
}

void gma_csv_text(FILE *f, const char *s)
{
    if (!s)
        s = "";
    /* A spreadsheet runs a cell that starts with one of these as a formula
     * (=cmd|...): a leading quote makes it text (OWASP's CSV injection rule). */
    if (!*s || !strchr("=+-@\t\r", *s)) {
        gma_csv_field(f, s);
        return;
    }
    size_t n = strlen(s);
    char *t = malloc(n + 2);
    if (!t) {
        gma_csv_field(f, "'");
        return;
    }
    t[0] = '\'';
    memcpy(t + 1, s, n + 1);
    gma_csv_field(f, t);
    free(t);
}

double gma_nice_step(double range, int max_ticks)
{
    if (!(range > 0) || max_ticks < 1)
        return 1.0;
    double raw = range / max_ticks;
    double p = pow(10.0, floor(log10(raw)));
    double m = raw / p;
    double step = m <= 1.0 ? 1.0 : m <= 2.0 ? 2.0 : m <= 5.0 ? 5.0 : 10.0;
    return step * p;
}

/* ---- sorting ------------------------------------------------------------- */

int gma_msort(void *base, size_t n, size_t size, int (*cmp)(const void *a, const void *b, void *ctx), void *ctx)
{
    if (n < 2)
        return 0;
    char *tmp = malloc(n * size);
    if (!tmp)
        return -1;
    char *a = base;
    /* bottom-up: runs of width w merged into tmp, then copied back */
    for (size_t w = 1; w < n; w *= 2) {
        for (size_t lo = 0; lo < n; lo += 2 * w) {
            size_t mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n;
            size_t i = lo, j = mid, k = lo;
            while (i < mid && j < hi) {
                if (cmp(a + j * size, a + i * size, ctx) < 0)
                    memcpy(tmp + (k++) * size, a + (j++) * size, size);
                else
                    memcpy(tmp + (k++) * size, a + (i++) * size, size);
            }
            if (i < mid)
                memcpy(tmp + k * size, a + i * size, (mid - i) * size), k += mid - i;
            if (j < hi)
                memcpy(tmp + k * size, a + j * size, (hi - j) * size);
        }
        memcpy(a, tmp, n * size);
    }
    free(tmp);
    return 0;
}

/* ---- JSON writer ------------------------------------------------------------ */

void gma_jw_init(gma_jw *j, FILE *f)
{
    memset(j, 0, sizeof(*j));
    j->f = f;
    j->first[0] = 1;
}

static void jw_value_prefix(gma_jw *j)
{
    if (j->after_key) {
        j->after_key = 0;
        return;
    }
    if (j->depth == 0)
        return;
    if (!j->first[j->depth])
        fputc(',', j->f);
    j->first[j->depth] = 0;
    fputc('\n', j->f);
    for (int i = 0; i < j->depth; i++)
        fputs("  ", j->f);
}

void gma_jw_begin(gma_jw *j, char open)
{
    jw_value_prefix(j);
    fputc(open, j->f);
    if (j->depth < 63)
        j->depth++;
    j->first[j->depth] = 1;
}

void gma_jw_end(gma_jw *j, char close)
{
    int empty = j->first[j->depth];
    if (j->depth > 0)
        j->depth--;
    if (!empty) {
        fputc('\n', j->f);
        for (int i = 0; i < j->depth; i++)
            fputs("  ", j->f);
    }
    fputc(close, j->f);
    if (j->depth == 0)
        fputc('\n', j->f);
}

void gma_jw_key(gma_jw *j, const char *key)
{
    jw_value_prefix(j);
    gma_json_cstr(j->f, key);
    fputs(": ", j->f);
    j->after_key = 1;
}

void gma_jw_str(gma_jw *j, const char *s)
{
    jw_value_prefix(j);
    gma_json_cstr(j->f, s);
}

void gma_jw_u64(gma_jw *j, uint64_t v)
{
    jw_value_prefix(j);
    fprintf(j->f, "%llu", (unsigned long long)v);
}

void gma_jw_i64(gma_jw *j, int64_t v)
{
    jw_value_prefix(j);
    fprintf(j->f, "%lld", (long long)v);
}

void gma_jw_dbl(gma_jw *j, double v)
{
    jw_value_prefix(j);
    if (v != v || v > 1e300 || v < -1e300)
        fputs("null", j->f); /* JSON has no NaN or infinity */
    else
        fprintf(j->f, "%.6g", v);
}

void gma_jw_dbl_exact(gma_jw *j, double v)
{
    jw_value_prefix(j);
    if (v != v || v > 1e300 || v < -1e300)
        fputs("null", j->f);
    else
        fprintf(j->f, "%.17g", v);
}

void gma_jw_bool(gma_jw *j, int v)
{
    jw_value_prefix(j);
    fputs(v ? "true" : "false", j->f);
}

void gma_jw_null(gma_jw *j)
{
    jw_value_prefix(j);
    fputs("null", j->f);
}

void gma_jw_kstr(gma_jw *j, const char *key, const char *s)
{
    gma_jw_key(j, key);
    gma_jw_str(j, s);
}

void gma_jw_ku64(gma_jw *j, const char *key, uint64_t v)
{
    gma_jw_key(j, key);
    gma_jw_u64(j, v);
}

void gma_jw_ki64(gma_jw *j, const char *key, int64_t v)
{
    gma_jw_key(j, key);
    gma_jw_i64(j, v);
}
