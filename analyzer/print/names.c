/*
 * Names: a small Itanium C++ demangler, a shortener and a normalizer.
 *
 * The demangler is a recursive-descent parser over the subset of the ABI
 * that CUDA kernel names use. Every produced piece of text lives in one
 * arena addressed by offsets (the arena may move when it grows), and a type
 * is kept as a left and a right part so that declarators nest correctly:
 * "void (*)(int)" is left "void (*" and right ")(int)".
 * Depth, arena size, substitution and template-argument counts are bounded,
 * so no input can recurse without end or grow memory without bound.
 */
#include "names.h"

#include <ctype.h>
#include <string.h>
#include <stdlib.h>

#define DM_MAX_SUBS 1024
#define DM_MAX_TARGS 128
#define DM_MAX_DEPTH 192
#define DM_MAX_ARENA (1u << 20)
/* The arena of a name of n bytes holds at most DM_ARENA_PER_BYTE * n bytes
 * (DM_MIN_ARENA at least, DM_MAX_ARENA at most): every piece of text is
 * written once into it, so this bounds the demangler's work by the name's
 * length. The names of real traces use at most 32 bytes per byte. */
#define DM_ARENA_PER_BYTE 64
#define DM_MIN_ARENA (64u << 10)

typedef struct dstr {
    uint32_t off, len;
} dstr;

typedef struct dty {
    dstr l, r;
} dty;

typedef struct dm {
    const char *s;
    size_t n, p;
    char *a;
    size_t alen, acap, amax;
    dty subs[DM_MAX_SUBS];
    size_t nsubs;
    dstr targs[DM_MAX_TARGS];
    size_t ntargs;
    dstr last_args[DM_MAX_TARGS]; /* items of the last completed <template-args> */
    size_t nlast;
    int err;
    int depth;
} dm;

typedef struct nameinfo {
    int is_template;   /* the name ends with template arguments */
    int cdc;           /* constructor, destructor or conversion operator */
    dstr cv;           /* " const" of a const member function */
    dstr ref;          /* " &" / " &&" member function ref-qualifier */
} nameinfo;

static const dstr NOSTR = { 0, 0 };

/* ---- arena and builder -------------------------------------------------- */

static int ar_room(dm *d, size_t extra)
{
    if (d->err)
        return -1;
    if (d->alen + extra <= d->acap)
        return 0;
    if (d->alen + extra > d->amax) {
        d->err = 1;
        return -1;
    }
    size_t nc = d->acap ? d->acap : 1024;
    while (nc < d->alen + extra)
        nc *= 2;
    if (nc > d->amax)
        nc = d->amax;
    char *na = realloc(d->a, nc);
    if (!na) {
        d->err = 1;
        return -1;
    }
    d->a = na;
    d->acap = nc;
    return 0;
}

static void b_lit(dm *d, const char *p, size_t n)
{
    if (ar_room(d, n) != 0)
        return;
    memcpy(d->a + d->alen, p, n);
    d->alen += n;
}
static void b_c(dm *d, const char *p) { b_lit(d, p, strlen(p)); }
static void b_s(dm *d, dstr s)
{
    if (ar_room(d, s.len) != 0)
        return;
    memmove(d->a + d->alen, d->a + s.off, s.len);
    d->alen += s.len;
}
static dstr b_end(dm *d, size_t begin)
{
    dstr r = { (uint32_t)begin, (uint32_t)(d->alen - begin) };
    if (d->err)
        return NOSTR;
    return r;
}
static dstr s_lit(dm *d, const char *p, size_t n)
{
    size_t b = d->alen;
    b_lit(d, p, n);
    return b_end(d, b);
}
static dstr s_cat(dm *d, dstr x, const char *mid, dstr y)
{
    size_t b = d->alen;
    b_s(d, x);
    if (mid)
        b_c(d, mid);
    b_s(d, y);
    return b_end(d, b);
}
static dstr ty_full(dm *d, dty t)
{
    if (!t.r.len)
        return t.l;
    return s_cat(d, t.l, NULL, t.r);
}
static char last_char(const dm *d, dstr s) { return s.len ? d->a[s.off + s.len - 1] : 0; }

/* name<args>, with a space after an operator name ending in '<' */
static dstr with_args(dm *d, dstr name, dstr args)
{
    return s_cat(d, name, last_char(d, name) == '<' ? " " : NULL, args);
}

static dty ty_of(dstr s)
{
    dty t = { s, NOSTR };
    return t;
}

/* ---- input -------------------------------------------------------------- */

static char pk(const dm *d, size_t k) { return d->p + k < d->n ? d->s[d->p + k] : 0; }
static int eat(dm *d, char c)
{
    if (pk(d, 0) == c) {
        d->p++;
        return 1;
    }
    return 0;
}
static void fail(dm *d) { d->err = 1; }
static void need(dm *d, char c)
{
    if (!eat(d, c))
        fail(d);
}

static int enter(dm *d)
{
    if (d->err || ++d->depth > DM_MAX_DEPTH) {
        d->err = 1;
        return 0;
    }
    return 1;
}
static void leave(dm *d) { d->depth--; }

static void push_sub(dm *d, dty t)
{
    if (d->err)
        return;
    if (d->nsubs >= DM_MAX_SUBS) {
        fail(d);
        return;
    }
    d->subs[d->nsubs++] = t;
}

/* <number>: decimal digits; 0 when none (the caller checks). */
static size_t p_number(dm *d, int *ok)
{
    size_t v = 0;
    int any = 0;
    while (isdigit((unsigned char)pk(d, 0))) {
        v = v * 10 + (size_t)(pk(d, 0) - '0');
        if (v > 1u << 24)
            fail(d);
        d->p++;
        any = 1;
    }
    if (ok)
        *ok = any;
    return v;
}

static dstr p_source_name(dm *d)
{
    int ok;
    size_t len = p_number(d, &ok);
    if (!ok || len == 0 || d->p + len > d->n) {
        fail(d);
        return NOSTR;
    }
    const char *id = d->s + d->p;
    d->p += len;
    if (len >= 10 && strncmp(id, "_GLOBAL__N", 10) == 0)
        return s_lit(d, "(anonymous namespace)", 21);
    return s_lit(d, id, len);
}

static dty p_type(dm *d);
static dstr p_name(dm *d, nameinfo *ni, int enc);
static dstr p_encoding(dm *d, int top, size_t *nb, size_t *ne);
static dstr p_template_args(dm *d, int set);
static dstr p_expr(dm *d);

/* ---- operators ---------------------------------------------------------- */

typedef struct opdef {
    char code[3];
    const char *sym;
    int arity;
} opdef;

static const opdef OPS[] = {
    { "nw", "new", 1 },  { "na", "new[]", 1 }, { "dl", "delete", 1 }, { "da", "delete[]", 1 },
    { "ps", "+", 1 },    { "ng", "-", 1 },     { "ad", "&", 1 },      { "de", "*", 1 },
    { "co", "~", 1 },    { "pl", "+", 2 },     { "mi", "-", 2 },      { "ml", "*", 2 },
    { "dv", "/", 2 },    { "rm", "%", 2 },     { "an", "&", 2 },      { "or", "|", 2 },
    { "eo", "^", 2 },    { "aS", "=", 2 },     { "pL", "+=", 2 },     { "mI", "-=", 2 },
    { "mL", "*=", 2 },   { "dV", "/=", 2 },    { "rM", "%=", 2 },     { "aN", "&=", 2 },
    { "oR", "|=", 2 },   { "eO", "^=", 2 },    { "ls", "<<", 2 },     { "rs", ">>", 2 },
    { "lS", "<<=", 2 },  { "rS", ">>=", 2 },   { "eq", "==", 2 },     { "ne", "!=", 2 },
    { "lt", "<", 2 },    { "gt", ">", 2 },     { "le", "<=", 2 },     { "ge", ">=", 2 },
    { "ss", "<=>", 2 },  { "nt", "!", 1 },     { "aa", "&&", 2 },     { "oo", "||", 2 },
    { "pp", "++", 1 },   { "mm", "--", 1 },    { "cm", ",", 2 },      { "pm", "->*", 2 },
    { "pt", "->", 2 },   { "cl", "()", 2 },    { "ix", "[]", 2 },     { "qu", "?", 3 },
};

static const opdef *find_op(char a, char b)
{
    for (size_t i = 0; i < sizeof(OPS) / sizeof(OPS[0]); i++)
        if (OPS[i].code[0] == a && OPS[i].code[1] == b)
            return &OPS[i];
    return NULL;
}

/* ---- names -------------------------------------------------------------- */

/* "{lambda(int, float)#2}" from Ul <types> E [<number>] _ */
static dstr p_closure(dm *d)
{
    d->p += 2; /* Ul */
    dstr items[64];
    size_t n = 0;
    if (pk(d, 0) == 'v' && pk(d, 1) == 'E') {
        d->p++;
    } else {
        while (!d->err && pk(d, 0) != 'E') {
            if (!pk(d, 0) || n >= 64) {
                fail(d);
                break;
            }
            items[n++] = ty_full(d, p_type(d));
        }
    }
    need(d, 'E');
    int ok;
    size_t num = p_number(d, &ok);
    need(d, '_');
    char tail[32];
    snprintf(tail, sizeof(tail), ")#%zu}", ok ? num + 2 : (size_t)1);
    size_t b = d->alen;
    b_c(d, "{lambda(");
    for (size_t i = 0; i < n; i++) {
        if (i)
            b_c(d, ", ");
        b_s(d, items[i]);
    }
    b_c(d, tail);
    return b_end(d, b);
}

static dstr p_unqualified(dm *d, nameinfo *ni, dstr last_src, dstr *src_out)
{
    char c = pk(d, 0), c1 = pk(d, 1);
    dstr r = NOSTR;
    if (ni)
        ni->cdc = 0;
    if (isdigit((unsigned char)c)) {
        r = p_source_name(d);
        if (src_out)
            *src_out = r;
    } else if (c == 'C' && (isdigit((unsigned char)c1) || c1 == 'I')) {
        d->p++;
        if (eat(d, 'I')) {
            d->p++; /* CI1 / CI2 <base class type> */
            (void)p_type(d);
        } else {
            d->p++;
        }
        if (!last_src.len)
            fail(d);
        r = last_src;
        if (ni)
            ni->cdc = 1;
    } else if (c == 'D' && isdigit((unsigned char)c1)) {
        d->p += 2;
        if (!last_src.len)
            fail(d);
        r = s_cat(d, s_lit(d, "~", 1), NULL, last_src);
        if (ni)
            ni->cdc = 1;
    } else if (c == 'U' && c1 == 't') {
        d->p += 2;
        int ok;
        size_t num = p_number(d, &ok);
        need(d, '_');
        char buf[48];
        snprintf(buf, sizeof(buf), "{unnamed type#%zu}", ok ? num + 2 : (size_t)1);
        r = s_lit(d, buf, strlen(buf));
    } else if (c == 'U' && c1 == 'l') {
        r = p_closure(d);
    } else if (c == 'c' && c1 == 'v') {
        d->p += 2;
        dstr t = ty_full(d, p_type(d));
        r = s_cat(d, s_lit(d, "operator ", 9), NULL, t);
        if (ni)
            ni->cdc = 1;
    } else if (c == 'l' && c1 == 'i') {
        d->p += 2;
        r = s_cat(d, s_lit(d, "operator\"\" ", 11), NULL, p_source_name(d));
    } else if (islower((unsigned char)c)) {
        const opdef *op = find_op(c, c1);
        if (!op) {
            fail(d);
            return NOSTR;
        }
        d->p += 2;
        int word = isalpha((unsigned char)op->sym[0]);
        size_t b = d->alen;
        b_c(d, word ? "operator " : "operator");
        b_c(d, op->sym);
        r = b_end(d, b);
    } else {
        fail(d);
        return NOSTR;
    }
    while (!d->err && pk(d, 0) == 'B') { /* ABI tags */
        d->p++;
        dstr tag = p_source_name(d);
        size_t b = d->alen;
        b_s(d, r);
        b_c(d, "[abi:");
        b_s(d, tag);
        b_c(d, "]");
        r = b_end(d, b);
    }
    return r;
}

static dty p_subst(dm *d)
{
    d->p++; /* S */
    char c = pk(d, 0);
    static const struct {
        char c;
        const char *s;
    } special[] = { { 't', "std" },          { 'a', "std::allocator" }, { 'b', "std::basic_string" },
                    { 's', "std::string" },  { 'i', "std::istream" },   { 'o', "std::ostream" },
                    { 'd', "std::iostream" } };
    for (size_t i = 0; i < sizeof(special) / sizeof(special[0]); i++) {
        if (c == special[i].c) {
            d->p++;
            return ty_of(s_lit(d, special[i].s, strlen(special[i].s)));
        }
    }
    size_t idx = 0;
    if (c != '_') {
        size_t v = 0;
        int any = 0;
        while (isdigit((unsigned char)pk(d, 0)) || isupper((unsigned char)pk(d, 0))) {
            char x = pk(d, 0);
            v = v * 36 + (size_t)(isdigit((unsigned char)x) ? x - '0' : x - 'A' + 10);
            if (v > DM_MAX_SUBS)
                break;
            d->p++;
            any = 1;
        }
        if (!any) {
            fail(d);
            return ty_of(NOSTR);
        }
        idx = v + 1;
    }
    need(d, '_');
    if (d->err || idx >= d->nsubs) {
        fail(d);
        return ty_of(NOSTR);
    }
    return d->subs[idx];
}

static dstr p_template_param(dm *d)
{
    d->p++; /* T */
    size_t idx = 0;
    if (!eat(d, '_')) {
        int ok;
        idx = p_number(d, &ok) + 1;
        need(d, '_');
        if (!ok)
            fail(d);
    }
    if (d->err)
        return NOSTR;
    if (idx < d->ntargs)
        return d->targs[idx];
    return s_lit(d, "auto", 4); /* refers to nothing known here */
}

static void p_discriminator(dm *d)
{
    if (pk(d, 0) != '_')
        return;
    if (pk(d, 1) == '_') {
        d->p += 2;
        (void)p_number(d, NULL);
        need(d, '_');
    } else if (isdigit((unsigned char)pk(d, 1))) {
        d->p += 2;
    }
}

/* Z <function encoding> E <entity name> [<discriminator>] */
static dstr p_local(dm *d, nameinfo *ni)
{
    d->p++; /* Z */
    dstr fn = p_encoding(d, 0, NULL, NULL);
    need(d, 'E');
    dstr ent;
    if (eat(d, 's')) {
        ent = s_lit(d, "string literal", 14);
    } else if (pk(d, 0) == 'd') {
        fail(d);
        return NOSTR;
    } else {
        ent = p_name(d, ni, 0);
    }
    p_discriminator(d);
    return s_cat(d, fn, "::", ent);
}

static dstr p_nested(dm *d, nameinfo *ni, int enc)
{
    d->p++; /* N */
    size_t b;
    b = d->alen;
    for (;;) {
        char c = pk(d, 0);
        if (c == 'r')
            b_c(d, " restrict");
        else if (c == 'V')
            b_c(d, " volatile");
        else if (c == 'K')
            b_c(d, " const");
        else
            break;
        d->p++;
    }
    dstr cv = b_end(d, b);
    dstr ref = NOSTR;
    if (pk(d, 0) == 'R' || pk(d, 0) == 'O') {
        ref = pk(d, 0) == 'R' ? s_lit(d, " &", 2) : s_lit(d, " &&", 3);
        d->p++;
    }
    dstr sofar = NOSTR, last_src = NOSTR;
    int have = 0, pushed_last = 0, tmpl = 0, cdc = 0;
    while (!d->err) {
        if (eat(d, 'E'))
            break;
        eat(d, 'L');
        char c = pk(d, 0), c1 = pk(d, 1);
        pushed_last = 0;
        tmpl = 0;
        cdc = 0;
        if (!c) {
            fail(d);
            break;
        }
        if (c == 'S' && c1 == 't') {
            d->p += 2;
            sofar = have ? s_cat(d, sofar, "::", s_lit(d, "std", 3)) : s_lit(d, "std", 3);
            have = 1;
            continue;
        }
        if (c == 'S') {
            sofar = ty_full(d, p_subst(d));
            have = 1;
            continue;
        }
        if (c == 'T' && (c1 == '_' || isdigit((unsigned char)c1))) {
            sofar = p_template_param(d);
            have = 1;
        } else if (c == 'I') {
            if (!have) {
                fail(d);
                break;
            }
            dstr args = p_template_args(d, 0);
            /* The last template arguments of the function's own name are
             * what T_ means in its signature. */
            if (enc && pk(d, 0) == 'E' && !d->err) {
                memcpy(d->targs, d->last_args, d->nlast * sizeof(dstr));
                d->ntargs = d->nlast;
            }
            sofar = with_args(d, sofar, args);
            tmpl = 1;
        } else if (c == 'D' && (c1 == 't' || c1 == 'T')) {
            dstr t = ty_full(d, p_type(d));
            sofar = t;
            have = 1;
        } else {
            nameinfo tmp = { 0 };
            dstr src = NOSTR;
            dstr u = p_unqualified(d, &tmp, last_src, &src);
            if (src.len)
                last_src = src;
            cdc = tmp.cdc;
            sofar = have ? s_cat(d, sofar, "::", u) : u;
            have = 1;
        }
        push_sub(d, ty_of(sofar));
        pushed_last = 1;
    }
    if (pushed_last && d->nsubs)
        d->nsubs--; /* the whole name is not a prefix of anything */
    if (!have)
        fail(d);
    if (ni) {
        ni->is_template = tmpl;
        ni->cdc = cdc;
        ni->cv = cv;
        ni->ref = ref;
    }
    return sofar;
}

static dstr p_name(dm *d, nameinfo *ni, int enc)
{
    nameinfo dummy;
    if (!ni)
        ni = &dummy;
    memset(ni, 0, sizeof(*ni));
    if (!enter(d))
        return NOSTR;
    char c = pk(d, 0), c1 = pk(d, 1);
    dstr nm;
    if (c == 'N') {
        nm = p_nested(d, ni, enc);
        leave(d);
        return nm;
    }
    if (c == 'Z') {
        nm = p_local(d, ni);
        leave(d);
        return nm;
    }
    if (c == 'S' && c1 == 't') {
        d->p += 2;
        nm = s_cat(d, s_lit(d, "std", 3), "::", p_unqualified(d, ni, NOSTR, NULL));
    } else if (c == 'S') {
        nm = ty_full(d, p_subst(d));
        if (pk(d, 0) != 'I') { /* a substitution alone is not a name here */
            fail(d);
            leave(d);
            return NOSTR;
        }
        dstr args = p_template_args(d, enc);
        ni->is_template = 1;
        leave(d);
        return s_cat(d, nm, NULL, args);
    } else {
        nm = p_unqualified(d, ni, NOSTR, NULL);
    }
    if (pk(d, 0) == 'I') {
        push_sub(d, ty_of(nm)); /* <unscoped-template-name> */
        dstr args = p_template_args(d, enc);
        nm = with_args(d, nm, args);
        ni->is_template = 1;
    }
    leave(d);
    return nm;
}

/* ---- template arguments and expressions ---------------------------------- */

static dstr p_expr_primary(dm *d)
{
    d->p++; /* L */
    if ((pk(d, 0) == '_' && pk(d, 1) == 'Z') || pk(d, 0) == 'Z') {
        d->p += pk(d, 0) == '_' ? 2 : 1;
        size_t nb = 0, ne = 0;
        dstr e = p_encoding(d, 0, &nb, &ne);
        need(d, 'E');
        dstr nm = { (uint32_t)(e.off + nb), (uint32_t)(ne - nb) };
        return d->err ? NOSTR : nm; /* an entity's address names it only */
    }
    dstr t = ty_full(d, p_type(d));
    if (d->err)
        return NOSTR;
    int neg = eat(d, 'n');
    size_t vb = d->p;
    while (d->p < d->n && pk(d, 0) != 'E')
        d->p++;
    size_t vlen = d->p - vb;
    need(d, 'E');
    if (d->err)
        return NOSTR;
    const char *ts = d->a + t.off;
    size_t tl = t.len;
#define TIS(lit) (tl == sizeof(lit) - 1 && memcmp(ts, lit, tl) == 0)
    if (TIS("decltype(nullptr)"))
        return s_lit(d, "nullptr", 7);
    if (TIS("bool") && vlen == 1)
        return s_lit(d, d->s[vb] == '0' ? "false" : "true", d->s[vb] == '0' ? 5 : 4);
    const char *suffix = NULL;
    if (TIS("int"))
        suffix = "";
    else if (TIS("unsigned int"))
        suffix = "u";
    else if (TIS("long"))
        suffix = "l";
    else if (TIS("unsigned long"))
        suffix = "ul";
    else if (TIS("long long"))
        suffix = "ll";
    else if (TIS("unsigned long long"))
        suffix = "ull";
#undef TIS
    size_t b = d->alen;
    if (!suffix) {
        b_c(d, "(");
        b_s(d, t);
        b_c(d, ")");
    }
    if (neg)
        b_c(d, "-");
    b_lit(d, d->s + vb, vlen);
    if (suffix)
        b_c(d, suffix);
    return b_end(d, b);
}

static dstr p_template_arg(dm *d)
{
    char c = pk(d, 0);
    if (c == 'L')
        return p_expr_primary(d);
    if (c == 'X') {
        d->p++;
        dstr e = p_expr(d);
        need(d, 'E');
        return e;
    }
    if (c == 'J') { /* argument pack */
        d->p++;
        dstr items[64];
        size_t n = 0;
        while (!d->err && !eat(d, 'E')) {
            if (!pk(d, 0) || n >= 64) {
                fail(d);
                break;
            }
            items[n++] = p_template_arg(d);
        }
        size_t b = d->alen;
        for (size_t i = 0; i < n; i++) {
            if (i)
                b_c(d, ", ");
            b_s(d, items[i]);
        }
        return b_end(d, b);
    }
    return ty_full(d, p_type(d));
}

static dstr p_template_args(dm *d, int set)
{
    if (!enter(d))
        return NOSTR;
    d->p++; /* I */
    dstr items[DM_MAX_TARGS];
    size_t n = 0;
    while (!d->err && !eat(d, 'E')) {
        if (!pk(d, 0) || n >= DM_MAX_TARGS) {
            fail(d);
            break;
        }
        items[n++] = p_template_arg(d);
    }
    size_t b = d->alen;
    b_c(d, "<");
    for (size_t i = 0; i < n; i++) {
        if (i)
            b_c(d, ", ");
        b_s(d, items[i]);
    }
    dstr body = b_end(d, b);
    b_c(d, last_char(d, body) == '>' ? " >" : ">");
    dstr r = b_end(d, b);
    memcpy(d->last_args, items, n * sizeof(items[0]));
    d->nlast = n;
    if (set && !d->err) {
        memcpy(d->targs, items, n * sizeof(items[0]));
        d->ntargs = n;
    }
    leave(d);
    return r;
}

static dstr p_expr(dm *d)
{
    if (!enter(d))
        return NOSTR;
    char c = pk(d, 0), c1 = pk(d, 1);
    dstr r = NOSTR;
    if (c == 'L') {
        r = p_expr_primary(d);
    } else if (c == 'T') {
        r = p_template_param(d);
    } else if (c == 'f' && c1 == 'p') {
        d->p += 2;
        while (pk(d, 0) == 'r' || pk(d, 0) == 'V' || pk(d, 0) == 'K')
            d->p++;
        int ok;
        size_t num = p_number(d, &ok);
        need(d, '_');
        char buf[32];
        snprintf(buf, sizeof(buf), "{parm#%zu}", ok ? num + 2 : (size_t)1);
        r = s_lit(d, buf, strlen(buf));
    } else if (c == 's' && c1 == 'Z') {
        d->p += 2;
        r = s_cat(d, s_lit(d, "sizeof...(", 10), NULL, s_cat(d, p_template_param(d), NULL, s_lit(d, ")", 1)));
    } else if ((c == 's' || c == 'a') && (c1 == 't' || c1 == 'z')) {
        d->p += 2;
        dstr in = c1 == 't' ? ty_full(d, p_type(d)) : p_expr(d);
        size_t b = d->alen;
        b_c(d, c == 's' ? "sizeof (" : "alignof (");
        b_s(d, in);
        b_c(d, ")");
        r = b_end(d, b);
    } else if (c == 'c' && c1 == 'v') {
        d->p += 2;
        dstr t = ty_full(d, p_type(d));
        if (pk(d, 0) == '_') {
            fail(d);
        } else {
            dstr e = p_expr(d);
            size_t b = d->alen;
            b_c(d, "(");
            b_s(d, t);
            b_c(d, ")(");
            b_s(d, e);
            b_c(d, ")");
            r = b_end(d, b);
        }
    } else {
        const opdef *op = find_op(c, c1);
        /* new/delete/call have their own grammar: not read here */
        if (!op || (c == 'n' && (c1 == 'w' || c1 == 'a')) || (c == 'd' && (c1 == 'l' || c1 == 'a')) ||
            (c == 'c' && c1 == 'l')) {
            fail(d);
            leave(d);
            return NOSTR;
        }
        d->p += 2;
        dstr x = p_expr(d);
        size_t b;
        if (op->arity == 1) {
            int simple = 1;
            for (uint32_t k = 0; k < x.len && !d->err; k++)
                if (!(isalnum((unsigned char)d->a[x.off + k]) || d->a[x.off + k] == '_' || d->a[x.off + k] == ':'))
                    simple = 0;
            b = d->alen;
            b_c(d, op->sym);
            b_c(d, simple ? "" : "(");
            b_s(d, x);
            b_c(d, simple ? "" : ")");
        } else if (op->arity == 2) {
            dstr y = p_expr(d);
            b = d->alen;
            b_c(d, "(");
            b_s(d, x);
            b_c(d, ")");
            b_c(d, op->sym);
            b_c(d, "(");
            b_s(d, y);
            b_c(d, ")");
        } else {
            dstr y = p_expr(d);
            dstr z = p_expr(d);
            b = d->alen;
            b_c(d, "(");
            b_s(d, x);
            b_c(d, ") ? (");
            b_s(d, y);
            b_c(d, ") : (");
            b_s(d, z);
            b_c(d, ")");
        }
        r = b_end(d, b);
    }
    leave(d);
    return r;
}

/* ---- types -------------------------------------------------------------- */

static const char *builtin(char c)
{
    switch (c) {
    case 'v': return "void";
    case 'w': return "wchar_t";
    case 'b': return "bool";
    case 'c': return "char";
    case 'a': return "signed char";
    case 'h': return "unsigned char";
    case 's': return "short";
    case 't': return "unsigned short";
    case 'i': return "int";
    case 'j': return "unsigned int";
    case 'l': return "long";
    case 'm': return "unsigned long";
    case 'x': return "long long";
    case 'y': return "unsigned long long";
    case 'n': return "__int128";
    case 'o': return "unsigned __int128";
    case 'f': return "float";
    case 'd': return "double";
    case 'e': return "long double";
    case 'g': return "__float128";
    case 'z': return "...";
    default: return NULL;
    }
}

static const char *builtin_d(char c)
{
    switch (c) {
    case 'd': return "decimal64";
    case 'e': return "decimal128";
    case 'f': return "decimal32";
    case 'h': return "half";
    case 'i': return "char32_t";
    case 's': return "char16_t";
    case 'u': return "char8_t";
    case 'a': return "auto";
    case 'c': return "decltype(auto)";
    case 'n': return "decltype(nullptr)";
    default: return NULL;
    }
}

/* Parameter list "(a, b)" up to (not including) 'E' or the end; "v" alone is "()". */
static dstr p_params(dm *d, int stop_at_ref)
{
    dstr items[DM_MAX_TARGS];
    size_t n = 0;
    if (pk(d, 0) == 'v' && (pk(d, 1) == 'E' || pk(d, 1) == 0 || pk(d, 1) == '.' ||
                            (stop_at_ref && (pk(d, 1) == 'R' || pk(d, 1) == 'O') && pk(d, 2) == 'E'))) {
        d->p++;
    } else {
        while (!d->err && pk(d, 0) && pk(d, 0) != 'E' && pk(d, 0) != '.') {
            if (stop_at_ref && (pk(d, 0) == 'R' || pk(d, 0) == 'O') && pk(d, 1) == 'E')
                break;
            if (n >= DM_MAX_TARGS) {
                fail(d);
                break;
            }
            items[n++] = ty_full(d, p_type(d));
        }
    }
    size_t b = d->alen;
    b_c(d, "(");
    for (size_t i = 0; i < n; i++) {
        if (i)
            b_c(d, ", ");
        b_s(d, items[i]);
    }
    b_c(d, ")");
    return b_end(d, b);
}

static dty wrap_ptr(dm *d, dty t, const char *sym)
{
    dty r;
    char lc = last_char(d, t.l);
    if (t.r.len && (lc == '*' || lc == '&')) {
        /* already inside a declarator group: "void (*" -> "void (**" */
        r.l = s_cat(d, t.l, sym, NOSTR);
        r.r = t.r;
    } else if (t.r.len) {
        size_t b = d->alen;
        b_s(d, t.l);
        b_c(d, lc == ' ' || lc == '(' ? "(" : " (");
        b_c(d, sym);
        r.l = b_end(d, b);
        b = d->alen;
        b_c(d, ")");
        b_s(d, t.r);
        r.r = b_end(d, b);
    } else {
        r.l = s_cat(d, t.l, sym, NOSTR);
        r.r = NOSTR;
    }
    return r;
}

/* The D types that are not builtins: _Float<n>, pack expansions,
 * decltype and vectors. *sub is cleared where the result is not a
 * substitution candidate. */
static dty p_type_d(dm *d, char c1, int *sub)
{
    dty res = ty_of(NOSTR);
    if (c1 == 'F') { /* _Float<n> */
        d->p += 2;
        int ok;
        size_t bits = p_number(d, &ok);
        need(d, '_');
        char buf[32];
        snprintf(buf, sizeof(buf), "_Float%zu", bits);
        *sub = 0;
        return ty_of(s_lit(d, buf, strlen(buf)));
    } else if (c1 == 'p') {
        /* A pack expansion of an instantiated pack reads as its
         * elements, which the template parameter already spells. */
        d->p += 2;
        res = ty_of(ty_full(d, p_type(d)));
    } else if (c1 == 't' || c1 == 'T') {
        d->p += 2;
        dstr e = p_expr(d);
        need(d, 'E');
        res = ty_of(s_cat(d, s_lit(d, "decltype(", 9), NULL, s_cat(d, e, ")", NOSTR)));
    } else if (c1 == 'v') {
        d->p += 2;
        int ok;
        size_t num = p_number(d, &ok);
        need(d, '_');
        dstr el = ty_full(d, p_type(d));
        char buf[48];
        snprintf(buf, sizeof(buf), " __vector(%zu)", num);
        res = ty_of(s_cat(d, el, buf, NOSTR));
    } else {
        fail(d);
    }
    return res;
}

/* r, V, K: a type under cv (and restrict) qualifiers. */
static dty p_type_qualified(dm *d)
{
    size_t b = d->alen;
    while (pk(d, 0) == 'r' || pk(d, 0) == 'V' || pk(d, 0) == 'K') {
        char q = pk(d, 0);
        b_c(d, q == 'K' ? " const" : q == 'V' ? " volatile" : " restrict");
        d->p++;
    }
    dstr quals = b_end(d, b);
    dty in = p_type(d);
    if (in.r.len) /* a function type: the qualifiers follow its parameters */
        return (dty){ in.l, s_cat(d, in.r, NULL, quals) };
    return ty_of(s_cat(d, in.l, NULL, quals));
}

/* F: a function type, its return type left and its parameters right. */
static dty p_type_function(dm *d)
{
    dty res;
    d->p++;
    eat(d, 'Y');
    dstr ret = ty_full(d, p_type(d));
    dstr params = p_params(d, 1);
    dstr refq = NOSTR;
    if (eat(d, 'R'))
        refq = s_lit(d, " &", 2);
    else if (eat(d, 'O'))
        refq = s_lit(d, " &&", 3);
    need(d, 'E');
    res.l = s_cat(d, ret, " ", NOSTR);
    res.r = s_cat(d, params, NULL, refq);
    return res;
}

/* A: an array, its dimension right of the element type. */
static dty p_type_array(dm *d)
{
    dty res = ty_of(NOSTR);
    d->p++;
    char dim[32] = "";
    if (isdigit((unsigned char)pk(d, 0))) {
        int ok;
        size_t num = p_number(d, &ok);
        snprintf(dim, sizeof(dim), "%zu", num);
    } else if (pk(d, 0) != '_') {
        fail(d);
        return res;
    }
    need(d, '_');
    dty el = p_type(d);
    size_t b = d->alen;
    b_c(d, " [");
    b_c(d, dim);
    b_c(d, "]");
    b_s(d, el.r);
    res.l = el.l;
    res.r = b_end(d, b);
    return res;
}

/* M: a pointer to member (of data, or of a function). */
static dty p_type_member(dm *d)
{
    dty res;
    d->p++;
    dstr cls = ty_full(d, p_type(d));
    dty mem = p_type(d);
    size_t b = d->alen;
    b_s(d, mem.l);
    if (mem.r.len) {
        b_c(d, "(");
        b_s(d, cls);
        b_c(d, "::*");
        res.l = b_end(d, b);
        res.r = s_cat(d, s_lit(d, ")", 1), NULL, mem.r);
    } else {
        b_c(d, " ");
        b_s(d, cls);
        b_c(d, "::*");
        res = ty_of(b_end(d, b));
    }
    return res;
}

/* T: a template parameter (with its arguments), or an elaborated name. */
static dty p_type_param(dm *d, char c1)
{
    dty res = ty_of(NOSTR);
    if (c1 == '_' || isdigit((unsigned char)c1)) {
        res = ty_of(p_template_param(d));
        if (pk(d, 0) == 'I') {
            push_sub(d, res);
            res = ty_of(s_cat(d, res.l, NULL, p_template_args(d, 0)));
        }
    } else if (c1 == 's' || c1 == 'u' || c1 == 'e') {
        d->p += 2;
        res = ty_of(p_name(d, NULL, 0));
    } else {
        fail(d);
    }
    return res;
}

static dty p_type(dm *d)
{
    dty res = ty_of(NOSTR);
    if (!enter(d))
        return res;
    char c = pk(d, 0), c1 = pk(d, 1);
    const char *bi = builtin(c);
    int sub = 1; /* a substitution candidate */
    if (bi) {
        d->p++;
        res = ty_of(s_lit(d, bi, strlen(bi)));
        leave(d);
        return res; /* builtins are not substitution candidates */
    }
    if (c == 'D' && builtin_d(c1)) {
        d->p += 2;
        bi = builtin_d(c1);
        res = ty_of(s_lit(d, bi, strlen(bi)));
        leave(d);
        return res;
    }
    switch (c) {
    case 'D': res = p_type_d(d, c1, &sub); break;
    case 'u':
        d->p++;
        res = ty_of(p_source_name(d));
        break;
    case 'r':
    case 'V':
    case 'K': res = p_type_qualified(d); break;
    case 'P':
        d->p++;
        res = wrap_ptr(d, p_type(d), "*");
        break;
    case 'R':
        d->p++;
        res = wrap_ptr(d, p_type(d), "&");
        break;
    case 'O':
        d->p++;
        res = wrap_ptr(d, p_type(d), "&&");
        break;
    case 'C':
    case 'G':
        d->p++;
        res = ty_of(s_cat(d, ty_full(d, p_type(d)), c == 'C' ? " _Complex" : " _Imaginary", NOSTR));
        break;
    case 'F': res = p_type_function(d); break;
    case 'A': res = p_type_array(d); break;
    case 'M': res = p_type_member(d); break;
    case 'T': res = p_type_param(d, c1); break;
    case 'S':
        if (c1 == 't') {
            res = ty_of(p_name(d, NULL, 0));
        } else {
            res = p_subst(d);
            if (pk(d, 0) != 'I') {
                sub = 0; /* already a candidate */
                break;
            }
            res = ty_of(s_cat(d, ty_full(d, res), NULL, p_template_args(d, 0)));
        }
        break;
    default:
        if (c == 'N' || c == 'Z' || isdigit((unsigned char)c))
            res = ty_of(p_name(d, NULL, 0));
        else
            fail(d);
        break;
    }
    if (sub)
        push_sub(d, res);
    leave(d);
    return res;
}

/* ---- encodings ---------------------------------------------------------- */

static dstr p_encoding(dm *d, int top, size_t *nb, size_t *ne)
{
    if (!enter(d))
        return NOSTR;
    if (pk(d, 0) == 'T' || pk(d, 0) == 'G') { /* vtables, guards, thunks: not kernels */
        fail(d);
        leave(d);
        return NOSTR;
    }
    nameinfo ni;
    dstr name = p_name(d, &ni, 1);
    char c = pk(d, 0);
    if (d->err || c == 0 || c == 'E' || c == '.') {
        if (nb) {
            *nb = 0;
            *ne = name.len;
        }
        leave(d);
        return name;
    }
    dstr ret = NOSTR;
    if (ni.is_template && !ni.cdc)
        ret = ty_full(d, p_type(d));
    dstr params = p_params(d, 0);
    (void)top;
    size_t b = d->alen;
    if (ret.len) {
        b_s(d, ret);
        b_c(d, " ");
    }
    size_t name_at = d->alen - b;
    b_s(d, name);
    b_s(d, params);
    b_s(d, ni.cv);
    b_s(d, ni.ref);
    if (nb) {
        *nb = name_at;
        *ne = name_at + name.len;
    }
    leave(d);
    return b_end(d, b);
}

int gma_demangle(const char *s, size_t n, gma_buf *out, size_t *name_b, size_t *name_e)
{
    if (n < 3 || s[0] != '_' || s[1] != 'Z')
        return -1;
    dm *d = calloc(1, sizeof(*d));
    if (!d)
        return -1;
    d->s = s;
    d->n = n;
    d->p = 2;
    d->amax = n < DM_MAX_ARENA / DM_ARENA_PER_BYTE ? n * DM_ARENA_PER_BYTE : DM_MAX_ARENA;
    if (d->amax < DM_MIN_ARENA)
        d->amax = DM_MIN_ARENA;
    size_t nb = 0, ne = 0;
    dstr r = p_encoding(d, 1, &nb, &ne);
    /* Only a vendor suffix (".clone", ".1") may follow a complete name. */
    if (!d->err && d->p < d->n && d->s[d->p] != '.')
        d->err = 1;
    int rc = -1;
    if (!d->err && r.len) {
        size_t base = out->len;
        gma_buf_putn(out, d->a + r.off, r.len);
        if (!out->oom) {
            if (name_b)
                *name_b = base + nb;
            if (name_e)
                *name_e = base + ne;
            rc = 0;
        }
    }
    free(d->a);
    free(d);
    return rc;
}

/* ---- display and matching ---------------------------------------------- */

/* At i, "operator" followed by symbol characters ("operator<<=",
 * "operator()"): the length of all of it, else 0. */
static size_t op_symbol_len(const char *p, size_t len, size_t i)
{
    if (p[i] != 'o' || len - i < 9 || memcmp(p + i, "operator", 8) != 0 || (i > 0 && (isalnum((unsigned char)p[i - 1]) || p[i - 1] == '_')))
        return 0;
    size_t j = i + 8;
    if (j < len && p[j] == '(' && j + 1 < len && p[j + 1] == ')')
        return 10; /* operator() */
    if (j < len && p[j] == '[' && j + 1 < len && p[j + 1] == ']')
        return 10;
    while (j < len && strchr("<>=!+-*/%^&|~,", p[j]) && p[j])
        j++;
    return j > i + 8 ? j - i : 0;
}

/* The qualified name part of s: demangled, or the raw text with a trailing
 * parameter list and a leading return type removed when it looks like a
 * demangled signature already. */
static void qualified_name(const char *s, size_t n, gma_buf *out)
{
    gma_buf tmp = { 0 };
    size_t nb, ne;
    if (gma_demangle(s, n, &tmp, &nb, &ne) == 0) {
        gma_buf_putn(out, tmp.p + nb, ne - nb);
        gma_buf_free(&tmp);
        return;
    }
    gma_buf_free(&tmp);
    /* Already demangled ("void ns::f<int>(int*) const"): drop the trailing
     * parameter list and a leading return type, at bracket depth 0. */
    size_t e = n;
    int signature = 0;
    while (e > 6 && memcmp(s + e - 6, " const", 6) == 0)
        e -= 6;
    if (e > 0 && s[e - 1] == ')') {
        int depth = 0;
        size_t i = e;
        while (i > 0) {
            char c = s[--i];
            if (c == ')')
                depth++;
            else if (c == '(' && --depth == 0)
                break;
        }
        if (depth == 0 && i > 0 && !(i >= 8 && memcmp(s + i - 8, "operator", 8) == 0)) {
            e = i;
            signature = 1;
        }
    }
    if (!signature) { /* plain text (NVTX names, C kernels): as it is */
        gma_buf_putn(out, s, n);
        return;
    }
    size_t b = 0;
    int angle = 0, paren = 0;
    for (size_t i = 0; i < e; i++) {
        char c = s[i];
        size_t ol = op_symbol_len(s, e, i);
        if (ol) {
            i += ol - 1;
            continue;
        }
        if (c == '<')
            angle++;
        else if (c == '>' && angle)
            angle--;
        else if (c == '(')
            paren++;
        else if (c == ')' && paren)
            paren--;
        else if (c == ' ' && !angle && !paren)
            b = i + 1; /* the last blank at depth 0 ends the return type */
    }
    if (b >= e)
        b = 0;
    gma_buf_putn(out, s + b, e - b);
}

void gma_name_full(const char *s, size_t n, gma_buf *out)
{
    if (gma_demangle(s, n, out, NULL, NULL) != 0)
        gma_buf_putn(out, s, n);
}

/* Replaces the contents of every bracket pair of kind open/close nested at
 * depth >= min_depth with "...". Returns 1 when something changed. One pass
 * over b; the result (at most 5/3 of b: "<a>" grows to "<...>") is written
 * straight into one buffer. */
static int elide(gma_buf *b, char open, char close, int min_depth)
{
    if (!b->p || !memchr(b->p, open, b->len))
        return 0;
    const char *p = b->p;
    size_t len = b->len, k = 0;
    char *o = malloc(2 * len + 4);
    if (!o)
        return 0;
#define PUT(src, n)                      \
    do {                                 \
        memcpy(o + k, (src), (n));       \
        k += (n);                        \
    } while (0)
    int depth = 0, changed = 0;
    for (size_t i = 0; i < len; i++) {
        char c = p[i];
        /* "operator<", "operator<<=", "operator->" ...: not brackets */
        size_t ol = op_symbol_len(p, len, i);
        if (ol) {
            if (depth < min_depth)
                PUT(p + i, ol);
            i += ol - 1;
            continue;
        }
        if (c == '-' && i + 1 < len && p[i + 1] == '>') {
            if (depth < min_depth)
                PUT("->", 2);
            i++;
            continue;
        }
        if (c == '(' && open == '(') { /* namespace markers are not parameter lists */
            size_t l = len - i >= 21 && memcmp(p + i, "(anonymous namespace)", 21) == 0 ? 21
                       : len - i >= 6 && memcmp(p + i, "(anon)", 6) == 0             ? 6
                                                                                     : 0;
            if (l) {
                if (depth < min_depth)
                    PUT(p + i, l);
                i += l - 1;
                continue;
            }
        }
        if (c == open) {
            depth++;
            if (depth == min_depth) {
                o[k++] = c;
                /* Keep an empty pair, and one already elided, as they are. */
                size_t j = i + 1;
                int empty = j < len && p[j] == close;
                int done = j + 3 < len && memcmp(p + j, "...", 3) == 0 && p[j + 3] == close;
                if (!empty)
                    PUT("...", 3);
                changed |= !empty && !done;
                continue;
            }
            if (depth < min_depth)
                o[k++] = c;
            continue;
        }
        if (c == close && depth > 0) {
            if (depth <= min_depth)
                o[k++] = c;
            depth--;
            continue;
        }
        if (depth < min_depth)
            o[k++] = c;
    }
#undef PUT
    if (!changed) {
        free(o);
        return 0;
    }
    o[k] = 0;
    free(b->p);
    b->p = o;
    b->len = k;
    b->cap = 2 * len + 4;
    return 1;
}

/* "(anonymous namespace)" -> "(anon)" throughout q. */
static void shorten_anon(gma_buf *q)
{
    static const char A[] = "(anonymous namespace)";
    if (!q->p || !strstr(q->p, A))
        return;
    gma_buf a = { 0 };
    const char *c = q->p, *e = q->p + q->len;
    for (const char *m; (m = strstr(c, A)) != NULL; c = m + sizeof(A) - 1) {
        gma_buf_putn(&a, c, (size_t)(m - c));
        gma_buf_putn(&a, "(anon)", 6);
    }
    gma_buf_putn(&a, c, (size_t)(e - c));
    if (a.oom) {
        gma_buf_free(&a);
        return;
    }
    gma_buf_free(q);
    *q = a;
}

void gma_name_short(const char *s, size_t n, size_t max_len, gma_buf *out)
{
    gma_buf q = { 0 };
    qualified_name(s, n, &q);
    if (max_len && q.len > GMA_SHORT_SCAN + 3 && !q.oom) {
        /* Only the ends can show in a label: the middle becomes "...", so
         * the work below is bounded whatever the name's length. */
        size_t h = GMA_SHORT_SCAN / 2;
        memmove(q.p + h + 3, q.p + q.len - h, h);
        memcpy(q.p + h, "...", 3);
        q.len = 2 * h + 3;
        q.p[q.len] = 0;
    }
    if (max_len && q.len > max_len)
        shorten_anon(&q);
    if (max_len && q.len > max_len) {
        /* Elide from the inside out: deep template arguments first, then
         * local-name signatures, then the outermost argument lists. */
        for (int depth = 3; depth >= 1 && q.len > max_len; depth--) {
            elide(&q, '<', '>', depth);
            if (q.len > max_len)
                elide(&q, '(', ')', depth);
        }
    }
    if (max_len && q.len > max_len && max_len >= 8) {
        /* Keep the head (namespace) and more of the tail (the function). */
        size_t head = (max_len - 3) / 3, tail = max_len - 3 - head;
        gma_buf_putn(out, q.p, head);
        gma_buf_putn(out, "...", 3);
        gma_buf_putn(out, q.p + q.len - tail, tail);
    } else {
        gma_buf_putn(out, gma_buf_str(&q), q.len);
    }
    gma_buf_free(&q);
}

size_t gma_nvtx_base_len(const char *s, size_t n)
{
    static const char *const cuts[] = { ", seq = ", ", op_id = ", ", sizes = ", ", input_op_ids = ",
                                        ", stashed seq = " };
    size_t best = n;
    for (size_t c = 0; c < sizeof(cuts) / sizeof(cuts[0]); c++) {
        size_t l = strlen(cuts[c]);
        for (size_t i = 0; i + l <= best; i++) {
            if (memcmp(s + i, cuts[c], l) == 0) {
                best = i;
                break;
            }
        }
    }
    return best;
}

static int is_hex(char c) { return isxdigit((unsigned char)c) != 0; }
static int is_word(char c) { return isalnum((unsigned char)c) || c == '_'; }

void gma_name_normalize(const char *s, size_t n, int is_kernel, gma_buf *out)
{
    gma_buf q = { 0 };
    if (!is_kernel)
        n = gma_nvtx_base_len(s, n);
    qualified_name(s, n, &q);
    /* Drop every template argument list entirely ("operator<" aside), then
     * addresses and hash-like tokens. */
    gma_buf t = { 0 };
    const char *p = gma_buf_str(&q);
    size_t len = q.len;
    int depth = 0;
    for (size_t i = 0; i < len;) {
        size_t ol = op_symbol_len(p, len, i);
        if (ol) {
            if (!depth)
                gma_buf_putn(&t, p + i, ol);
            i += ol;
            continue;
        }
        if (p[i] == '-' && i + 1 < len && p[i + 1] == '>') {
            if (!depth)
                gma_buf_putn(&t, "->", 2);
            i += 2;
            continue;
        }
        if (p[i] == '<') {
            depth++;
            i++;
            continue;
        }
        if (p[i] == '>' && depth) {
            depth--;
            i++;
            continue;
        }
        if (depth) {
            i++;
            continue;
        }
        /* 0x1234abcd addresses */
        if (p[i] == '0' && i + 2 < len && (p[i + 1] == 'x' || p[i + 1] == 'X') && is_hex(p[i + 2]) &&
            (i == 0 || !is_word(p[i - 1]))) {
            size_t j = i + 2;
            while (j < len && is_hex(p[j]))
                j++;
            i = j;
            continue;
        }
        /* hash-like tokens: 8+ hex digits mixing digits and letters */
        if (is_hex(p[i]) && (i == 0 || !is_word(p[i - 1]) || p[i - 1] == '_')) {
            size_t j = i;
            int dig = 0, alpha = 0;
            while (j < len && is_hex(p[j])) {
                if (isdigit((unsigned char)p[j]))
                    dig = 1;
                else
                    alpha = 1;
                j++;
            }
            if (j - i >= 8 && dig && alpha && (j == len || !is_word(p[j]) || p[j] == '_')) {
                i = j;
                continue;
            }
            gma_buf_putn(&t, p + i, j - i);
            i = j;
            continue;
        }
        gma_buf_putc(&t, p[i]);
        i++;
    }
    /* Trailing "_<digits>" of generated kernel names; trailing separators. */
    size_t e = t.len;
    const char *tp = gma_buf_str(&t);
    if (is_kernel) {
        size_t j = e;
        while (j > 0 && isdigit((unsigned char)tp[j - 1]))
            j--;
        if (j < e && j > 1 && tp[j - 1] == '_')
            e = j - 1;
    }
    while (e > 0 && (tp[e - 1] == '_' || tp[e - 1] == ' ' || tp[e - 1] == ':'))
        e--;
    size_t b = 0;
    while (b < e && tp[b] == ' ')
        b++;
    gma_buf_putn(out, tp + b, e - b);
    gma_buf_free(&t);
    gma_buf_free(&q);
}
