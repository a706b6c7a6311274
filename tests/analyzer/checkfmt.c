/*
 * checkfmt: validators for the analyzer's exports, with no dependency.
 *   checkfmt json FILE [SUBSTRING=COUNT ...]
 *       strict JSON (RFC 8259) syntax, then each SUBSTRING must occur
 *       exactly COUNT times (COUNT may be "+N": at least N).
 *   checkfmt xml FILE [SUBSTRING=COUNT ...]
 *       well-formed XML: balanced, properly nested tags, quoted attributes,
 *       no stray '<' or '&' in text or attribute values.
 * Exit 0 when valid, 1 with a message otherwise.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *src;
static size_t pos, len;
static char err[256];

static int fail(const char *what)
{
    if (!err[0])
        snprintf(err, sizeof(err), "%s at byte %zu", what, pos);
    return -1;
}

static void ws(void)
{
    while (pos < len && (src[pos] == ' ' || src[pos] == '\t' || src[pos] == '\n' || src[pos] == '\r'))
        pos++;
}

static int jvalue(int depth);

static int jstring(void)
{
    if (src[pos] != '"')
        return fail("expected a string");
    pos++;
    while (pos < len) {
        unsigned char c = (unsigned char)src[pos];
        if (c == '"') {
            pos++;
            return 0;
        }
        if (c < 0x20)
            return fail("control character in a string");
        if (c == '\\') {
            pos++;
            if (pos >= len)
                break;
            char e = src[pos];
            if (e == 'u') {
                for (int i = 1; i <= 4; i++)
                    if (pos + (size_t)i >= len || !isxdigit((unsigned char)src[pos + (size_t)i]))
                        return fail("bad \\u escape");
                pos += 4;
            } else if (!strchr("\"\\/bfnrt", e)) {
                return fail("bad escape");
            }
        }
        pos++;
    }
    return fail("unterminated string");
}

static int jnumber(void)
{
    size_t s = pos;
    if (src[pos] == '-')
        pos++;
    if (pos < len && src[pos] == '0') {
        pos++;
    } else if (pos < len && src[pos] >= '1' && src[pos] <= '9') {
        while (pos < len && isdigit((unsigned char)src[pos]))
            pos++;
    } else {
        return fail("bad number");
    }
    if (pos < len && src[pos] == '.') {
        pos++;
        if (pos >= len || !isdigit((unsigned char)src[pos]))
            return fail("bad fraction");
        while (pos < len && isdigit((unsigned char)src[pos]))
            pos++;
    }
    if (pos < len && (src[pos] == 'e' || src[pos] == 'E')) {
        pos++;
        if (pos < len && (src[pos] == '+' || src[pos] == '-'))
            pos++;
        if (pos >= len || !isdigit((unsigned char)src[pos]))
            return fail("bad exponent");
        while (pos < len && isdigit((unsigned char)src[pos]))
            pos++;
    }
    return pos > s ? 0 : fail("bad number");
}

static int jvalue(int depth)
{
    if (depth > 200)
        return fail("nested too deep");
    ws();
    if (pos >= len)
        return fail("unexpected end");
    char c = src[pos];
    if (c == '{' || c == '[') {
        char close = c == '{' ? '}' : ']';
        pos++;
        ws();
        if (pos < len && src[pos] == close) {
            pos++;
            return 0;
        }
        for (;;) {
            ws();
            if (c == '{') {
                if (jstring() != 0)
                    return -1;
                ws();
                if (pos >= len || src[pos] != ':')
                    return fail("expected ':'");
                pos++;
            }
            if (jvalue(depth + 1) != 0)
                return -1;
            ws();
            if (pos < len && src[pos] == ',') {
                pos++;
                continue;
            }
            if (pos < len && src[pos] == close) {
                pos++;
                return 0;
            }
            return fail("expected ',' or a closing bracket");
        }
    }
    if (c == '"')
        return jstring();
    if (c == '-' || isdigit((unsigned char)c))
        return jnumber();
    static const char *const words[] = { "true", "false", "null" };
    for (int i = 0; i < 3; i++) {
        size_t l = strlen(words[i]);
        if (len - pos >= l && memcmp(src + pos, words[i], l) == 0) {
            pos += l;
            return 0;
        }
    }
    return fail("unexpected character");
}

static int check_json(void)
{
    pos = 0;
    if (jvalue(0) != 0)
        return -1;
    ws();
    return pos == len ? 0 : fail("trailing bytes after the value");
}

/* ---- XML ---------------------------------------------------------------- */

static int text_ok(size_t a, size_t b)
{
    for (size_t i = a; i < b; i++) {
        if (src[i] == '<') {
            pos = i;
            return fail("stray '<'");
        }
        if (src[i] == '&') {
            size_t j = i + 1;
            while (j < b && j - i < 12 && (isalnum((unsigned char)src[j]) || src[j] == '#'))
                j++;
            if (j >= b || src[j] != ';' || j == i + 1) {
                pos = i;
                return fail("bare '&'");
            }
        }
    }
    return 0;
}

static int check_xml(void)
{
    char stack[256][64];
    int depth = 0, roots = 0;
    size_t i = 0;
    while (i < len) {
        size_t lt = i;
        while (lt < len && src[lt] != '<')
            lt++;
        if (text_ok(i, lt) != 0)
            return -1;
        if (lt >= len)
            break;
        pos = lt;
        if (len - lt >= 4 && memcmp(src + lt, "<!--", 4) == 0) {
            const char *e = strstr(src + lt + 4, "-->");
            if (!e)
                return fail("unterminated comment");
            i = (size_t)(e - src) + 3;
            continue;
        }
        if (len - lt >= 9 && memcmp(src + lt, "<![CDATA[", 9) == 0) {
            const char *e = strstr(src + lt, "]]>");
            if (!e)
                return fail("unterminated CDATA");
            i = (size_t)(e - src) + 3;
            continue;
        }
        if (src[lt + 1] == '?' || src[lt + 1] == '!') {
            const char *e = memchr(src + lt, '>', len - lt);
            if (!e)
                return fail("unterminated declaration");
            i = (size_t)(e - src) + 1;
            continue;
        }
        int closing = src[lt + 1] == '/';
        size_t n = lt + 1 + (size_t)closing, ns = n;
        while (n < len && (isalnum((unsigned char)src[n]) || src[n] == '-' || src[n] == ':' || src[n] == '_'))
            n++;
        if (n == ns || n - ns >= 64)
            return fail("bad tag name");
        char name[64];
        memcpy(name, src + ns, n - ns);
        name[n - ns] = 0;
        /* attributes */
        int self = 0;
        for (;;) {
            while (n < len && isspace((unsigned char)src[n]))
                n++;
            if (n >= len)
                return fail("unterminated tag");
            if (src[n] == '>') {
                n++;
                break;
            }
            if (src[n] == '/' && n + 1 < len && src[n + 1] == '>') {
                self = 1;
                n += 2;
                break;
            }
            if (closing)
                return fail("attributes on a closing tag");
            size_t an = n;
            while (n < len && (isalnum((unsigned char)src[n]) || src[n] == '-' || src[n] == ':' || src[n] == '_'))
                n++;
            if (n == an || n >= len || src[n] != '=')
                return fail("bad attribute");
            n++;
            char q = n < len ? src[n] : 0;
            if (q != '"' && q != '\'')
                return fail("unquoted attribute value");
            size_t vs = ++n;
            while (n < len && src[n] != q)
                n++;
            if (n >= len)
                return fail("unterminated attribute value");
            if (text_ok(vs, n) != 0)
                return -1;
            n++;
        }
        if (closing) {
            if (depth == 0 || strcmp(stack[depth - 1], name) != 0)
                return fail("mismatched closing tag");
            depth--;
        } else if (!self) {
            if (depth == 0)
                roots++;
            if (depth >= 256)
                return fail("nested too deep");
            strcpy(stack[depth++], name);
        } else if (depth == 0) {
            roots++;
        }
        i = n;
        /* script and style content is text: it must hold no '<' or '&' */
    }
    if (depth)
        return fail("unclosed tag");
    return roots == 1 ? 0 : fail("not exactly one root element");
}

static size_t count(const char *needle)
{
    size_t n = 0, l = strlen(needle);
    for (const char *p = src; (p = strstr(p, needle)) != NULL; p += l)
        n++;
    return n;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: checkfmt json|xml FILE [SUBSTRING=COUNT ...]\n");
        return 2;
    }
    FILE *f = fopen(argv[2], "rb");
    if (!f) {
        perror(argv[2]);
        return 1;
    }
    size_t cap = 1 << 20;
    char *buf = malloc(cap + 1);
    len = 0;
    size_t k;
    while (buf && (k = fread(buf + len, 1, cap - len, f)) > 0) {
        len += k;
        if (len == cap) {
            char *nb = realloc(buf, (cap *= 2) + 1);
            if (!nb)
                free(buf);
            buf = nb;
        }
    }
    fclose(f);
    if (!buf) {
        fprintf(stderr, "out of memory\n");
        return 1;
    }
    buf[len] = 0;
    src = buf;
    int rc = strcmp(argv[1], "json") == 0 ? check_json() : check_xml();
    if (rc != 0) {
        fprintf(stderr, "%s: invalid %s: %s\n", argv[2], argv[1], err);
        return 1;
    }
    int bad = 0;
    for (int i = 3; i < argc; i++) {
        char *eq = strrchr(argv[i], '=');
        if (!eq) {
            fprintf(stderr, "bad expectation %s\n", argv[i]);
            return 2;
        }
        *eq = 0;
        const char *want = eq + 1;
        size_t got = count(argv[i]);
        int ok = want[0] == '+' ? got >= strtoul(want + 1, NULL, 10) : got == strtoul(want, NULL, 10);
        if (!ok) {
            fprintf(stderr, "%s: '%s' occurs %zu times, expected %s\n", argv[2], argv[i], got, want);
            bad = 1;
        }
    }
    free(buf);
    if (!bad)
        printf("%s: valid %s\n", argv[2], argv[1]);
    return bad;
}
