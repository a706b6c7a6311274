/*
 * gmp-mangen: turns a tool's --help text (standard input) into a man page
 * (standard output), so that the page is built from the text the binary
 * prints and the two cannot drift.
 *
 *   TOOL --help | gmp-mangen NAME SECTION VERSION SUMMARY [SEE_ALSO] > NAME.SECTION
 *
 * The help text is read as the tools write it:
 *   - "usage: NAME ..." (any case), and the lines under it that start with
 *     spaces and NAME: SYNOPSIS;
 *   - the paragraphs before the first option: DESCRIPTION;
 *   - paragraphs of option lines ("  -x, --long VALUE   text": the text
 *     starts at the column most option lines start it at, after two spaces,
 *     and goes on over the lines indented deeper than the option): OPTIONS;
 *   - the paragraphs after the options: NOTES.
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

/* Writes text with roff's special characters escaped: backslashes, minus
 * signs (options are typed with '-', not a hyphen), and a leading '.' or '\''
 * that roff would read as a request. */
static void mg_putText(FILE *out, const char *s)
{
    if (*s == '.' || *s == '\'')
        fputs("\\&", out);
    for (; *s; s++) {
        if (*s == '\\')
            fputs("\\e", out);
        else if (*s == '-')
            fputs("\\-", out);
        else
            fputc(*s, out);
    }
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
    if (col > (size_t)(spec - s) + 1 && strlen(s) > col && s[col - 1] == ' ' && s[col] != ' ')
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

static void mg_putUpper(FILE *out, const char *s)
{
    for (; *s; s++)
        fputc(toupper((unsigned char)*s), out);
}

int main(int argc, char **argv)
{
    if (argc < 5 || argc > 6) {
        fprintf(stderr, "usage: TOOL --help | gmp-mangen NAME SECTION VERSION SUMMARY [SEE_ALSO]\n");
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
