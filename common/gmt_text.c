/* gmt_text: control bytes escaped for display (gmt_text.h). */
#include "gmt_text.h"

#include <string.h>

static int is_ctrl(unsigned char c) { return c < 0x20 || c == 0x7f; }

size_t gmt_text_escape_n(char *out, size_t cap, const char *s, size_t n)
{
    static const char hex[] = "0123456789abcdef";
    size_t len = 0, w = 0, room = cap ? cap - 1 : 0;
    int full = 0;
    for (size_t i = 0; s && i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        char e[4] = {(char)c, 0, 0, 0};
        size_t k = 1;
        if (is_ctrl(c)) {
            e[0] = '\\';
            e[1] = c == '\n' ? 'n' : c == '\t' ? 't' : c == '\r' ? 'r' : 'x';
            k = 2;
            if (e[1] == 'x') {
                e[2] = hex[c >> 4];
                e[3] = hex[c & 15];
                k = 4;
            }
        }
        if (!full && w + k <= room) {
            memcpy(out + w, e, k);
            w += k;
        } else {
            full = 1; /* nothing after a cut escape, so none is split */
        }
        len += k;
    }
    if (cap)
        out[w] = '\0';
    return len;
}

size_t gmt_text_escape(char *out, size_t cap, const char *s) { return gmt_text_escape_n(out, cap, s, s ? strlen(s) : 0); }

int gmt_text_has_ctrl(const char *s)
{
    for (; s && *s; s++)
        if (is_ctrl((unsigned char)*s))
            return 1;
    return 0;
}
