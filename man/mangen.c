/*
 * gmp-mangen: turns a tool's --help text (standard input) into a man page
 * (standard output), so that the page is built from the text the binary
 * prints and the two cannot drift.
 *
 *   TOOL --help | gmp-mangen [--env TABLE.md INTRO] NAME SECTION VERSION SUMMARY [SEE_ALSO] > NAME.SECTION
 *
 * The help text is read as the tools write it:
 *   - "usage: NAME ..." (any case), and the lines under it that start with
 *     spaces and NAME: SYNOPSIS;
 *   - the paragraphs before the first option: DESCRIPTION;
 *   - paragraphs of option lines ("  -x, --long VALUE   text": the text
 *     starts at the column most option lines start it at, after two spaces,
 *     and goes on over the lines indented deeper than the option): OPTIONS;
 *   - the paragraphs after the options: NOTES.
 * With --env, an ENVIRONMENT section follows: the paragraph INTRO, then an
 * entry per row of the first Markdown table in TABLE.md whose header is
 * "| variable | default | accepted | effect |" (docs/user-guide.md's settings
 * table, which tests/docs/check_settings_doc.sh checks against the code), so
 * the page documents every variable the guide does. Inline Markdown is
 * rendered: `code` bold, [text](link) as its text, \| as |.
 * Non-ASCII text is written as groff's \[uXXXX] escapes.
 * Exit status: 0, 1 read or write error, 2 bad usage.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define MG_LINE_MAX 1024
#define MG_LINES_MAX 512
/* An option line starts with '-' within this many columns. */
#define MG_OPTION_INDENT 8

typedef struct mg_help {
    char *line[MG_LINES_MAX];
    size_t n;
} mg_help;

static void mg_freeHelp(mg_help *h)
{
    for (size_t i = 0; i < h->n; i++)
        free(h->line[i]);
    h->n = 0;
}

/* Reads stdin into h, one line per entry, without the newline. */
static int mg_readHelp(FILE *in, mg_help *h)
{
    char buf[MG_LINE_MAX];
    h->n = 0;
    while (fgets(buf, sizeof buf, in)) {
        size_t len = strlen(buf);
        if (len && buf[len - 1] == '\n')
            buf[--len] = '\0';
        else if (!feof(in)) {
            fprintf(stderr, "gmp-mangen: a help line is longer than %d bytes\n", MG_LINE_MAX - 2);
            return -1;
        }
        if (h->n == MG_LINES_MAX) {
            fprintf(stderr, "gmp-mangen: the help text has more than %d lines\n", MG_LINES_MAX);
            return -1;
        }
        if (!(h->line[h->n] = strdup(buf))) {
            fprintf(stderr, "gmp-mangen: out of memory\n");
            return -1;
        }
        h->n++;
    }
    if (ferror(in)) {
        fprintf(stderr, "gmp-mangen: cannot read the help text\n");
        return -1;
    }
    return 0;
}

static size_t mg_indent(const char *s)
{
    return strspn(s, " \t");
}

static int mg_isBlank(const char *s)
{
    return s[mg_indent(s)] == '\0';
}

static int mg_isOption(const char *s)
{
    size_t i = mg_indent(s);
    return i > 0 && i < MG_OPTION_INDENT && s[i] == '-';
}

/* The length of the UTF-8 sequence at s and its code point in *cp; 0 for a
 * byte that starts no valid sequence. */
static size_t mg_utf8(const unsigned char *s, unsigned long *cp)
{
    size_t n = s[0] >= 0xf0 && s[0] < 0xf5 ? 4 : s[0] >= 0xe0 ? 3 : s[0] >= 0xc2 && s[0] < 0xe0 ? 2 : 0;
    if (n == 0)
        return 0;
    unsigned long v = s[0] & (0x7f >> n);
    for (size_t i = 1; i < n; i++) {
        if ((s[i] & 0xc0) != 0x80)
            return 0;
        v = v << 6 | (s[i] & 0x3f);
    }
    *cp = v;
    return n;
}

/* Writes the character at s, escaped for roff: a backslash, a minus sign
 * (options are typed with '-', not a hyphen), a non-ASCII character as
 * \[uXXXX] (roff reads its input as Latin-1; an invalid byte becomes '?').
 * Returns the bytes consumed. */
static size_t mg_putChar(FILE *out, const char *s)
{
    unsigned long cp;
    size_t n;
    if (*s == '\\')
        fputs("\\e", out);
    else if (*s == '-')
        fputs("\\-", out);
    else if ((unsigned char)*s < 0x80)
        fputc(*s, out);
    else if ((n = mg_utf8((const unsigned char *)s, &cp)) != 0) {
        fprintf(out, "\\[u%04lX]", cp);
        return n;
    } else
        fputc('?', out);
    return 1;
}

/* Writes text with roff's special characters escaped (mg_putChar), and a
 * leading '.' or '\'' that roff would read as a request. */
static void mg_putText(FILE *out, const char *s)
{
    if (*s == '.' || *s == '\'')
        fputs("\\&", out);
    while (*s)
        s += mg_putChar(out, s);
}

/* Writes an option spec ("-b, --by WHAT"): option names bold, values italic. */
static void mg_putSpec(FILE *out, const char *s, size_t len)
{
    size_t i = 0;
    while (i < len) {
        size_t w = i;
        while (w < len && s[w] != ' ' && s[w] != ',')
            w++;
        if (w > i) {
            char word[MG_LINE_MAX];
            memcpy(word, s + i, w - i);
            word[w - i] = '\0';
            fputs(word[0] == '-' ? "\\fB" : "\\fI", out);
            mg_putText(out, word);
            fputs("\\fR", out);
        }
        if (w < len)
            fputc(s[w], out);
        i = w + 1;
    }
}

/* The column where the option lines' text starts: the most common end of
 * the first two-space gap after the option. A spec that fills its column
 * leaves only one space before the text; this column still splits it. */
static size_t mg_textColumn(const mg_help *h)
{
    size_t votes[MG_LINE_MAX] = { 0 }, best = 0;
    for (size_t i = 0; i < h->n; i++) {
        const char *s = h->line[i];
        const char *gap = mg_isOption(s) ? strstr(s + mg_indent(s), "  ") : NULL;
        if (!gap)
            continue;
        size_t col = (size_t)(gap - s) + mg_indent(gap);
        if (col < MG_LINE_MAX && ++votes[col] > votes[best])
            best = col;
    }
    return best;
}

/* Writes the option line s: .TP, the spec, then the text on its own line. */
static void mg_putOption(FILE *out, const char *s, size_t col)
{
    const char *spec = s + mg_indent(s), *text = NULL;
    /* past the column, one word after a spec that runs up to it: the spec's
     * value ("--chrome-largest N"), its text on the lines below */
    int value_only = col >= 2 && s[col - 2] != ' ' && strlen(s) > col && !strchr(s + col, ' ');
    if (col > (size_t)(spec - s) + 1 && strlen(s) > col && s[col - 1] == ' ' && s[col] != ' ' && !value_only)
        text = s + col;
    else if ((text = strstr(spec, "  ")))
        text += mg_indent(text);
    size_t len = text ? (size_t)(text - spec) : strlen(spec);
    while (len && spec[len - 1] == ' ')
        len--;
    fputs(".TP\n", out);
    mg_putSpec(out, spec, len);
    fputc('\n', out);
    if (text) {
        mg_putText(out, text);
        fputc('\n', out);
    }
}

/* SYNOPSIS from the usage lines; returns the index of the first line after. */
static size_t mg_putSynopsis(FILE *out, const mg_help *h, const char *name)
{
    size_t i = 0, nlen = strlen(name);
    if (h->n == 0 || strncasecmp(h->line[0], "usage:", 6) != 0)
        return 0;
    fputs(".SH SYNOPSIS\n.nf\n", out);
    for (; i < h->n; i++) {
        const char *s = h->line[i];
        if (i == 0)
            s += 6;
        else if (mg_indent(s) == 0)
            break;
        s += mg_indent(s);
        if (strncmp(s, name, nlen) != 0 || (s[nlen] != ' ' && s[nlen] != '\0'))
            break;
        fprintf(out, "\\fB");
        mg_putText(out, name);
        fprintf(out, "\\fR");
        mg_putText(out, s + nlen);
        fputc('\n', out);
    }
    fputs(".fi\n", out);
    return i;
}

/* The paragraphs from line i on: text until the first option, the options,
 * then the rest, each under its heading. */
static void mg_putBody(FILE *out, const mg_help *h, size_t i)
{
    enum { BEFORE, OPTIONS, AFTER } part = BEFORE;
    int para_open = 0; /* in a paragraph: a blank line ends it */
    int has_text = 0;  /* the section has a paragraph: the next needs .PP */
    size_t col = mg_textColumn(h);
    fputs(".SH DESCRIPTION\n", out);
    for (; i < h->n; i++) {
        const char *s = h->line[i];
        if (mg_isBlank(s)) {
            para_open = 0;
            continue;
        }
        if (mg_isOption(s)) {
            if (part == BEFORE) {
                fputs(".SH OPTIONS\n", out);
                part = OPTIONS;
            }
            mg_putOption(out, s, col);
            para_open = has_text = 1;
            continue;
        }
        if (!para_open && part == OPTIONS) {
            fputs(".SH NOTES\n", out);
            part = AFTER;
            has_text = 0;
        }
        if (!para_open && has_text)
            fputs(".PP\n", out);
        mg_putText(out, s + mg_indent(s));
        fputc('\n', out);
        para_open = has_text = 1;
    }
}

/* Writes the Markdown cell text s[0..len): `code` in bold, [text](link) as
 * its text, a backslash escape as the character it escapes. */
static void mg_putInline(FILE *out, const char *s, size_t len)
{
    const char *end = s + len;
    if (s < end && (*s == '.' || *s == '\''))
        fputs("\\&", out);
    while (s < end) {
        const char *close;
        if (*s == '`' && (close = memchr(s + 1, '`', (size_t)(end - s - 1)))) {
            fputs("\\fB", out);
            for (s++; s < close;)
                s += mg_putChar(out, s);
            fputs("\\fR", out);
            s = close + 1;
        } else if (*s == '[' && (close = memchr(s + 1, ']', (size_t)(end - s - 1))) && close + 1 < end &&
                   close[1] == '(' && memchr(close + 2, ')', (size_t)(end - close - 2))) {
            mg_putInline(out, s + 1, (size_t)(close - s - 1));
            s = (const char *)memchr(close + 2, ')', (size_t)(end - close - 2)) + 1;
        } else if (*s == '\\' && s + 1 < end && ispunct((unsigned char)s[1])) {
            s += mg_putChar(out, s + 1) + 1;
        } else {
            s += mg_putChar(out, s);
        }
    }
}

#define MG_CELLS 4 /* variable, default, accepted, effect */

/* Splits the table row s into its first MG_CELLS cells (trimmed; a '|'
 * escaped by a backslash or inside `code` does not split). Returns the
 * number of cells found. */
static size_t mg_cells(const char *s, const char *cell[], size_t len[])
{
    size_t n = 0;
    int code = 0;
    s += mg_indent(s);
    if (*s != '|')
        return 0;
    const char *start = ++s;
    for (; *s && n < MG_CELLS; s++) {
        if (*s == '\\' && s[1]) {
            s++;
        } else if (*s == '`') {
            code = !code;
        } else if (*s == '|' && !code) {
            const char *a = start, *b = s;
            while (a < b && (*a == ' ' || *a == '\t'))
                a++;
            while (b > a && (b[-1] == ' ' || b[-1] == '\t'))
                b--;
            cell[n] = a;
            len[n++] = (size_t)(b - a);
            start = s + 1;
        }
    }
    return n;
}

static int mg_cellIs(const char *cell, size_t len, const char *word)
{
    return strlen(word) == len && strncasecmp(cell, word, len) == 0;
}

/* ENVIRONMENT: intro, then the settings table of the Markdown file at path
 * (see the top of this file). 0, or -1 after a message. */
static int mg_putEnv(FILE *out, const char *path, const char *intro)
{
    FILE *in = fopen(path, "r");
    if (!in) {
        fprintf(stderr, "gmp-mangen: cannot open %s: ", path);
        perror(NULL);
        return -1;
    }
    char *line = NULL;
    size_t cap = 0, rows = 0;
    int state = 0; /* 0 before the header, 1 after it, 2 in the rows */
    fputs(".SH ENVIRONMENT\n", out);
    mg_putText(out, intro);
    fputc('\n', out);
    while (state < 3 && getline(&line, &cap, in) != -1) {
        const char *cell[MG_CELLS];
        size_t len[MG_CELLS];
        size_t n = mg_cells(line, cell, len);
        if (state == 0) {
            if (n == MG_CELLS && mg_cellIs(cell[0], len[0], "variable") && mg_cellIs(cell[1], len[1], "default") &&
                mg_cellIs(cell[2], len[2], "accepted") && mg_cellIs(cell[3], len[3], "effect"))
                state = 1;
        } else if (state == 1) {
            state = 2; /* the |---| line */
        } else if (n == 0) {
            state = 3; /* the table ends */
        } else if (n < MG_CELLS) {
            fprintf(stderr, "gmp-mangen: %s: a settings row has %zu cells, expected %d: %s", path, n, MG_CELLS,
                    line);
            free(line);
            fclose(in);
            return -1;
        } else {
            fputs(".TP\n", out);
            mg_putInline(out, cell[0], len[0]);
            fputc('\n', out);
            mg_putInline(out, cell[3], len[3]);
            fputs("\n.br\nDefault: ", out);
            mg_putInline(out, cell[1], len[1]);
            fputs("; accepted: ", out);
            mg_putInline(out, cell[2], len[2]);
            fputc('\n', out);
            rows++;
        }
    }
    int err = ferror(in);
    free(line);
    fclose(in);
    if (err) {
        fprintf(stderr, "gmp-mangen: cannot read %s\n", path);
        return -1;
    }
    if (rows == 0) {
        fprintf(stderr,
                "gmp-mangen: %s has no settings table (a '| variable | default | accepted | effect |' "
                "header and rows under it)\n",
                path);
        return -1;
    }
    return 0;
}

static void mg_putUpper(FILE *out, const char *s)
{
    for (; *s; s++)
        fputc(toupper((unsigned char)*s), out);
}

int main(int argc, char **argv)
{
    const char *env = NULL, *env_intro = NULL;
    if (argc > 3 && strcmp(argv[1], "--env") == 0) {
        env = argv[2];
        env_intro = argv[3];
        argv += 3;
        argc -= 3;
    }
    if (argc < 5 || argc > 6) {
        fprintf(stderr, "usage: TOOL --help | gmp-mangen [--env TABLE.md INTRO] NAME SECTION VERSION SUMMARY "
                        "[SEE_ALSO]\n");
        return 2;
    }
    const char *name = argv[1], *section = argv[2], *version = argv[3], *summary = argv[4];
    mg_help h;
    if (mg_readHelp(stdin, &h) != 0) {
        mg_freeHelp(&h);
        return 1;
    }
    if (h.n == 0) {
        fprintf(stderr, "gmp-mangen: no help text on standard input (expected '%s --help' output)\n",
                name);
        return 1;
    }
    fprintf(stdout, ".\\\" Generated from '%s --help' by man/mangen.c: edit the help text instead.\n",
            name);
    fputs(".TH ", stdout);
    mg_putUpper(stdout, name);
    fprintf(stdout, " %s \"\" \"gmemprof %s\" \"User Commands\"\n.SH NAME\n", section, version);
    mg_putText(stdout, name);
    fputs(" \\- ", stdout);
    mg_putText(stdout, summary);
    fputc('\n', stdout);
    mg_putBody(stdout, &h, mg_putSynopsis(stdout, &h, name));
    if (env && mg_putEnv(stdout, env, env_intro) != 0) {
        mg_freeHelp(&h);
        return 1;
    }
    if (argc == 6) {
        fputs(".SH SEE ALSO\n", stdout);
        mg_putText(stdout, argv[5]);
        fputc('\n', stdout);
    }
    mg_freeHelp(&h);
    if (fflush(stdout) != 0 || ferror(stdout)) {
        fprintf(stderr, "gmp-mangen: cannot write the man page\n");
        return 1;
    }
    return 0;
}
