/*
 * The step window state machine (see schedule.h). Pure logic: no CUDA, no
 * clock of its own (the caller passes time), no allocation, no printing.
 *
 * Decisions beyond the header (docs/user-guide.md repeats them for users):
 *
 * - STEPS follows torch.profiler.schedule: step s (from 0) is NONE while
 *   s < skip_first; then with r = s - skip_first and c = wait+warmup+active,
 *   cycle r / c runs WAIT for its first `wait` steps, WARMUP for the next
 *   `warmup`, ACTIVE for the last `active`; once r / c >= repeat (repeat > 0)
 *   every step is DONE.
 * - Each cycle's ACTIVE steps are their own window, as torch.profiler saves a
 *   trace at the end of every cycle (RECORD_AND_SAVE): with wait=0 and
 *   warmup=0 two cycles are back to back, and the step between them reports
 *   WINDOW_END and WINDOW_BEGIN together. When both bits are set the END
 *   applies to the window that was open and comes first.
 * - An omitted repeat means 1 (one cycle), not torch's 0 (forever): a memory
 *   trace should stay small unless the user asks for more. "repeat=0" keeps
 *   torch's meaning.
 * - gmp_sched_init behaves as a transition from "before the run": phase NONE,
 *   not collecting, no window. So it returns PHASE when step 0 is not NONE,
 *   plus WINDOW_BEGIN / COLLECT_BEGIN as step 0 requires.
 * - DONE is final: gmp_sched_finish sets it, and after it step() still counts
 *   steps but no phase, window or collection change happens again.
 * - TIME: WAIT before the delay, ACTIVE for `duration` (0: to the end), then
 *   DONE. Kernels are collected in the ACTIVE phase only (there is no warmup
 *   in time). A tick that jumps over the whole active span (two ticks further
 *   apart than the duration) opens no window: the caller should tick at least
 *   every sample period. step() only counts steps.
 * - CAPTURE: WAIT outside cudaProfilerStart/Stop, ACTIVE inside; a start
 *   while started or a stop while stopped changes nothing (as in CUDA).
 * - WHOLE: ACTIVE from init to finish, one window.
 * - capture() on a non-CAPTURE schedule and tick() on a non-TIME schedule do
 *   nothing and return 0.
 */
#include "schedule.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

/* Largest step count a schedule field may hold: keeps skip_first + the
 * cycle length far from uint64 overflow while allowing any real run. */
#define GMP_SCHED_MAX_STEPS 1000000000000ull
/* Largest delay or duration: 10^7 s (about 115 days). */
#define GMP_SCHED_MAX_NS (10000000ull * 1000000000ull)

#define GMP_SCHED_FORMS                                                                            \
    "expected e.g. 'wait=2,warmup=1,active=3,repeat=1', '2,1,3', 'delay=5s,duration=10s', "        \
    "'capture' or 'whole'"

/* ---- parsing -------------------------------------------------------------- */

static void sched_err(char *err, size_t cap, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void sched_err(char *err, size_t cap, const char *fmt, ...)
{
    va_list ap;
    if (!err || cap == 0)
        return;
    va_start(ap, fmt);
    vsnprintf(err, cap, fmt, ap);
    va_end(ap);
    /* Values are echoed back; a control byte in one must not break the
     * one-line rule of every "gmemprof:" message. */
    for (char *p = err; *p; p++)
        if ((unsigned char)*p < 0x20 || *p == 0x7f)
            *p = '?';
}

/* Copies [s, s+n) into a NUL-terminated buffer without surrounding blanks,
 * shortened with "..." when it does not fit (only used for messages and keys). */
static void trim_copy(const char *s, size_t n, char *out, size_t cap)
{
    while (n > 0 && isspace((unsigned char)*s)) {
        s++;
        n--;
    }
    while (n > 0 && isspace((unsigned char)s[n - 1]))
        n--;
    if (n < cap) {
        memcpy(out, s, n);
        out[n] = '\0';
    } else {
        memcpy(out, s, cap - 4);
        memcpy(out + cap - 4, "...", 4);
    }
}

/* A whole number of steps: digits only, 0..GMP_SCHED_MAX_STEPS. */
static int parse_steps(const char *s, uint64_t *out)
{
    uint64_t v = 0;
    if (!*s)
        return -1;
    for (; *s; s++) {
        if (!isdigit((unsigned char)*s))
            return -1;
        v = v * 10 + (uint64_t)(*s - '0');
        if (v > GMP_SCHED_MAX_STEPS)
            return -1;
    }
    *out = v;
    return 0;
}

/* A duration: digits, optional '.' and up to 9 fraction digits, optional
 * unit ns|us|ms|s (blank allowed before it); a bare number is seconds. The
 * result must be a whole number of nanoseconds no larger than
 * GMP_SCHED_MAX_NS. */
static int parse_duration(const char *s, uint64_t *out)
{
    uint64_t ip = 0, fp = 0, fscale = 1, unit = 1000000000ull;
    int idigits = 0, fdigits = 0;
    for (; isdigit((unsigned char)*s); s++) {
        ip = ip * 10 + (uint64_t)(*s - '0');
        if (ip > GMP_SCHED_MAX_NS)
            return -1;
        idigits++;
    }
    if (*s == '.') {
        s++;
        for (; isdigit((unsigned char)*s); s++) {
            if (++fdigits > 9)
                return -1;
            fp = fp * 10 + (uint64_t)(*s - '0');
            fscale *= 10;
        }
    }
    if (idigits + fdigits == 0)
        return -1;
    while (isspace((unsigned char)*s))
        s++;
    if (*s == '\0' || strcmp(s, "s") == 0)
        unit = 1000000000ull;
    else if (strcmp(s, "ms") == 0)
        unit = 1000000ull;
    else if (strcmp(s, "us") == 0)
        unit = 1000ull;
    else if (strcmp(s, "ns") == 0)
        unit = 1ull;
    else
        return -1;
    if (ip > GMP_SCHED_MAX_NS / unit)
        return -1;
    /* fp / fscale < 1 and unit <= 1e9, fp < 1e9: the product fits in 64 bits. */
    if ((fp * unit) % fscale != 0)
        return -1; /* finer than a nanosecond */
    uint64_t ns = ip * unit + (fp * unit) / fscale;
    if (ns > GMP_SCHED_MAX_NS)
        return -1;
    *out = ns;
    return 0;
}

enum { K_SKIP, K_WAIT, K_WARMUP, K_ACTIVE, K_REPEAT, K_DELAY, K_DURATION, K_COUNT };
static const char *const key_names[K_COUNT] = {"skip_first", "wait",  "warmup",  "active",
                                               "repeat",     "delay", "duration"};

/* One key=value field into val/seen: 0, or -1 with err filled. */
static int parse_keyed(const char *field, const char *eq, uint64_t *val, int *seen, char *err, size_t errcap)
{
    char key[40], value[64];
    trim_copy(field, (size_t)(eq - field), key, sizeof key);
    trim_copy(eq + 1, strlen(eq + 1), value, sizeof value);
    int k;
    for (k = 0; k < K_COUNT; k++)
        if (strcasecmp(key, key_names[k]) == 0)
            break;
    if (k == K_COUNT) {
        if (strcasecmp(key, "skip_first_wait") == 0)
            sched_err(err, errcap,
                      "'%s' (torch's skip_first_wait) is not supported; use skip_first",
                      key);
        else
            sched_err(err, errcap,
                      "unknown key '%s'; keys are skip_first, wait, warmup, active, repeat "
                      "(steps) or delay, duration (time)",
                      key);
        return -1;
    }
    if (seen[k]) {
        sched_err(err, errcap, "'%s' is given twice", key_names[k]);
        return -1;
    }
    seen[k] = 1;
    if (k == K_DELAY || k == K_DURATION) {
        if (parse_duration(value, &val[k]) != 0) {
            sched_err(err, errcap,
                      "%s='%s' is not a duration; write e.g. 5s, 1.5s, 200ms, 10us, "
                      "500ns (a bare number is seconds, at most 10000000s)",
                      key_names[k], value);
            return -1;
        }
    } else if (parse_steps(value, &val[k]) != 0) {
        sched_err(err, errcap, "%s='%s' is not a whole number of steps (0..1000000000000)",
                  key_names[k], value);
        return -1;
    }
    return 0;
}

/* The comma-separated fields of text into val/seen (positional ones in
 * val[0..*nfields)); *keyed: 1 key=value, 0 positional. 0, or -1 with err. */
static int parse_fields(const char *text, const char *whole, uint64_t *val, int *seen, int *nfields, int *keyed,
                        char *err, size_t errcap)
{
    const char *p = text;
    for (;;) {
        const char *end = strchr(p, ',');
        size_t n = end ? (size_t)(end - p) : strlen(p);
        char field[80];
        trim_copy(p, n, field, sizeof field);
        if (field[0] == '\0') {
            sched_err(err, errcap, "an empty field between commas in '%s'; " GMP_SCHED_FORMS,
                      whole);
            return -1;
        }
        const char *eq = strchr(field, '=');
        int this_keyed = eq != NULL;
        if (*keyed >= 0 && *keyed != this_keyed) {
            sched_err(err, errcap,
                      "mixes key=value and positional fields ('%s'); use one form, " GMP_SCHED_FORMS,
                      field);
            return -1;
        }
        *keyed = this_keyed;
        if (this_keyed) {
            if (parse_keyed(field, eq, val, seen, err, errcap) != 0)
                return -1;
        } else {
            if (*nfields >= 5) {
                sched_err(err, errcap,
                          "'%s' has more than 5 numbers; " GMP_SCHED_FORMS, whole);
                return -1;
            }
            if (parse_steps(field, &val[*nfields]) != 0) {
                sched_err(err, errcap,
                          "'%s' is not a whole number of steps (0..1000000000000); " GMP_SCHED_FORMS,
                          field);
                return -1;
            }
        }
        (*nfields)++;
        if (!end)
            break;
        p = end + 1;
    }
    return 0;
}

/* 1 when a comma-separated field of text (not the first) is on-oom. */
static int names_on_oom(const char *text)
{
    for (const char *p = strchr(text, ','); p; p = strchr(p + 1, ',')) {
        const char *f = p + 1, *e = strchr(f, ',');
        size_t n = e ? (size_t)(e - f) : strlen(f);
        char field[16];
        trim_copy(f, n, field, sizeof field);
        if (strcasecmp(field, "on-oom") == 0)
            return 1;
    }
    return 0;
}

int gmp_sched_parse(const char *text, gmp_sched_spec *spec, char *err, size_t errcap)
{
    gmp_sched_spec r;
    char whole[96];
    memset(&r, 0, sizeof r);
    if (err && errcap)
        err[0] = '\0';
    if (!spec) {
        sched_err(err, errcap, "no place to store the schedule");
        return -1;
    }
    if (!text)
        text = "";
    trim_copy(text, strlen(text), whole, sizeof whole);
    if (strncasecmp(whole, "on-oom", 6) == 0 && (whole[6] == '\0' || whole[6] == ',')) {
        /* the flight recorder, then the trace's own schedule */
        const char *rest = text + strspn(text, " \t") + 6;
        if (*rest == ',')
            rest++;
        if (gmp_sched_parse(rest, &r, err, errcap) != 0)
            return -1;
        if (r.on_oom) {
            sched_err(err, errcap, "'%s' names on-oom twice; name it once, first (e.g. 'on-oom,wait=2,active=3')",
                      whole);
            return -1;
        }
        r.on_oom = 1;
        *spec = r;
        return 0;
    }
    if (names_on_oom(whole)) {
        sched_err(err, errcap, "'%s' names on-oom after the schedule; put it first (e.g. 'on-oom,wait=2,active=3')",
                  whole);
        return -1;
    }
    if (whole[0] == '\0' || strcasecmp(whole, "whole") == 0) {
        r.kind = GMP_SCHED_WHOLE;
        *spec = r;
        return 0;
    }
    if (strcasecmp(whole, "capture") == 0 || strcasecmp(whole, "cudaProfilerApi") == 0) {
        r.kind = GMP_SCHED_CAPTURE;
        *spec = r;
        return 0;
    }

    uint64_t val[K_COUNT] = {0};
    int seen[K_COUNT] = {0};
    int nfields = 0, keyed = -1; /* -1 unknown yet, 0 positional, 1 key=value */
    if (parse_fields(text, whole, val, seen, &nfields, &keyed, err, errcap) != 0)
        return -1;
    if (keyed == 0) {
        /* Positional: remap val[0..n) to the key slots. */
        uint64_t v[5];
        memcpy(v, val, sizeof v);
        memset(val, 0, sizeof val);
        if (nfields == 3 || nfields == 4) {
            val[K_WAIT] = v[0];
            val[K_WARMUP] = v[1];
            val[K_ACTIVE] = v[2];
            val[K_REPEAT] = nfields == 4 ? v[3] : 1;
        } else if (nfields == 5) {
            val[K_SKIP] = v[0];
            val[K_WAIT] = v[1];
            val[K_WARMUP] = v[2];
            val[K_ACTIVE] = v[3];
            val[K_REPEAT] = v[4];
        } else {
            sched_err(err, errcap,
                      "'%s' has %s number(s); positional forms are wait,warmup,active[,repeat] or "
                      "skip_first,wait,warmup,active,repeat",
                      whole, nfields == 1 ? "1" : "2");
            return -1;
        }
        r.kind = GMP_SCHED_STEPS;
    } else {
        int steps = seen[K_SKIP] || seen[K_WAIT] || seen[K_WARMUP] || seen[K_ACTIVE] || seen[K_REPEAT];
        int time = seen[K_DELAY] || seen[K_DURATION];
        if (steps && time) {
            sched_err(err, errcap,
                      "'%s' mixes step keys (skip_first, wait, warmup, active, repeat) with time "
                      "keys (delay, duration); use one form",
                      whole);
            return -1;
        }
        if (time) {
            r.kind = GMP_SCHED_TIME;
            r.delay_ns = val[K_DELAY];
            r.duration_ns = val[K_DURATION];
            *spec = r;
            return 0;
        }
        if (!seen[K_ACTIVE]) {
            sched_err(err, errcap,
                      "'%s' has no active=N: say how many steps to record, e.g. "
                      "'wait=2,warmup=1,active=3'",
                      whole);
            return -1;
        }
        if (!seen[K_REPEAT])
            val[K_REPEAT] = 1;
        r.kind = GMP_SCHED_STEPS;
    }
    if (val[K_ACTIVE] == 0) {
        sched_err(err, errcap,
                  "'%s' has active=0: a cycle must record at least 1 step (active >= 1)", whole);
        return -1;
    }
    r.skip_first = val[K_SKIP];
    r.wait = val[K_WAIT];
    r.warmup = val[K_WARMUP];
    r.active = val[K_ACTIVE];
    r.repeat = val[K_REPEAT];
    *spec = r;
    return 0;
}

/* Writes ns with the largest unit that keeps it exact. */
static int put_duration(char *out, size_t cap, uint64_t ns)
{
    if (ns == 0)
        return snprintf(out, cap, "0s");
    if (ns % 1000000000ull == 0)
        return snprintf(out, cap, "%llus", (unsigned long long)(ns / 1000000000ull));
    if (ns % 1000000ull == 0)
        return snprintf(out, cap, "%llums", (unsigned long long)(ns / 1000000ull));
    if (ns % 1000ull == 0)
        return snprintf(out, cap, "%lluus", (unsigned long long)(ns / 1000ull));
    return snprintf(out, cap, "%lluns", (unsigned long long)ns);
}

/* Output parses back to the same spec (tests check the round trip). Returns
 * the length the full text needs, like snprintf; out is always terminated
 * when cap > 0. */
size_t gmp_sched_describe(const gmp_sched_spec *spec, char *out, size_t cap)
{
    char tmp[160], d1[32], d2[32];
    int n;
    if (spec && spec->on_oom) {
        gmp_sched_spec rest = *spec;
        rest.on_oom = 0;
        char r[160];
        gmp_sched_describe(&rest, r, sizeof r);
        n = strcmp(r, "whole") == 0 ? snprintf(tmp, sizeof tmp, "on-oom") : snprintf(tmp, sizeof tmp, "on-oom,%s", r);
    } else if (!spec) {
        n = snprintf(tmp, sizeof tmp, "whole");
    } else {
        switch (spec->kind) {
        case GMP_SCHED_STEPS:
            n = snprintf(tmp, sizeof tmp, "skip_first=%llu,wait=%llu,warmup=%llu,active=%llu,repeat=%llu",
                         (unsigned long long)spec->skip_first, (unsigned long long)spec->wait,
                         (unsigned long long)spec->warmup, (unsigned long long)spec->active,
                         (unsigned long long)spec->repeat);
            break;
        case GMP_SCHED_TIME:
            put_duration(d1, sizeof d1, spec->delay_ns);
            put_duration(d2, sizeof d2, spec->duration_ns);
            n = snprintf(tmp, sizeof tmp, "delay=%s,duration=%s", d1, d2);
            break;
        case GMP_SCHED_CAPTURE:
            n = snprintf(tmp, sizeof tmp, "capture");
            break;
        case GMP_SCHED_WHOLE:
        default:
            n = snprintf(tmp, sizeof tmp, "whole");
            break;
        }
    }
    if (n < 0)
        n = 0;
    if (out && cap > 0)
        snprintf(out, cap, "%s", tmp);
    return (size_t)n;
}

/* ---- the state machine ---------------------------------------------------- */

static int phase_collects(gmt_phase p) { return p == GMT_PHASE_WARMUP || p == GMT_PHASE_ACTIVE; }

/* Phase of step `step` under a STEPS spec; *cycle gets its cycle number
 * (UINT64_MAX outside any cycle). */
static gmt_phase steps_phase(const gmp_sched_spec *sp, uint64_t step, uint64_t *cycle)
{
    *cycle = UINT64_MAX;
    if (step < sp->skip_first)
        return GMT_PHASE_NONE;
    uint64_t rel = step - sp->skip_first;
    uint64_t len = sp->wait + sp->warmup + sp->active; /* >= 1: parse demands active >= 1 */
    if (len == 0)
        return GMT_PHASE_DONE; /* a hand-made spec with active=0 records nothing */
    uint64_t c = rel / len, pos = rel % len;
    if (sp->repeat > 0 && c >= sp->repeat)
        return GMT_PHASE_DONE;
    *cycle = c;
    if (pos < sp->wait)
        return GMT_PHASE_WAIT;
    if (pos < sp->wait + sp->warmup)
        return GMT_PHASE_WARMUP;
    return GMT_PHASE_ACTIVE;
}

/* Moves to phase `np`; new_window forces a window edge between two ACTIVE
 * phases (a new cycle). Returns the event bits. */
static unsigned transition(gmp_sched *s, gmt_phase np, int new_window)
{
    unsigned ev = 0;
    gmt_phase op = s->phase;
    if (op != np)
        ev |= GMP_SCHED_EV_PHASE;
    if (!phase_collects(op) && phase_collects(np))
        ev |= GMP_SCHED_EV_COLLECT_BEGIN;
    if (phase_collects(op) && !phase_collects(np))
        ev |= GMP_SCHED_EV_COLLECT_END;
    if (s->in_window && (np != GMT_PHASE_ACTIVE || new_window)) {
        ev |= GMP_SCHED_EV_WINDOW_END;
        s->in_window = 0;
    }
    if (np == GMT_PHASE_ACTIVE && !s->in_window) {
        ev |= GMP_SCHED_EV_WINDOW_BEGIN;
        s->in_window = 1;
        s->window++;
    }
    s->phase = np;
    return ev;
}

static gmt_phase time_phase(const gmp_sched_spec *sp, uint64_t elapsed)
{
    if (elapsed < sp->delay_ns)
        return GMT_PHASE_WAIT;
    if (sp->duration_ns == 0 || elapsed - sp->delay_ns < sp->duration_ns)
        return GMT_PHASE_ACTIVE;
    return GMT_PHASE_DONE;
}

unsigned gmp_sched_init(gmp_sched *s, const gmp_sched_spec *spec, uint64_t now_ns)
{
    uint64_t cycle;
    gmt_phase p;
    memset(s, 0, sizeof *s);
    if (spec)
        s->spec = *spec;
    else
        s->spec.kind = GMP_SCHED_WHOLE;
    s->start_ns = now_ns;
    s->phase = GMT_PHASE_NONE;
    switch (s->spec.kind) {
    case GMP_SCHED_STEPS:
        p = steps_phase(&s->spec, 0, &cycle);
        break;
    case GMP_SCHED_TIME:
        p = time_phase(&s->spec, 0);
        break;
    case GMP_SCHED_CAPTURE:
        p = GMT_PHASE_WAIT;
        break;
    case GMP_SCHED_WHOLE:
    default:
        s->spec.kind = GMP_SCHED_WHOLE; /* an out-of-range kind is treated as the whole run */
        p = GMT_PHASE_ACTIVE;
        break;
    }
    return transition(s, p, 0);
}

unsigned gmp_sched_step(gmp_sched *s)
{
    uint64_t oc, nc;
    s->step++;
    if (s->spec.kind != GMP_SCHED_STEPS || s->phase == GMT_PHASE_DONE)
        return 0;
    (void)steps_phase(&s->spec, s->step - 1, &oc);
    gmt_phase np = steps_phase(&s->spec, s->step, &nc);
    return transition(s, np, oc != nc);
}

unsigned gmp_sched_tick(gmp_sched *s, uint64_t now_ns)
{
    if (s->spec.kind != GMP_SCHED_TIME || s->phase == GMT_PHASE_DONE)
        return 0;
    uint64_t elapsed = now_ns > s->start_ns ? now_ns - s->start_ns : 0;
    gmt_phase np = time_phase(&s->spec, elapsed);
    if (np == s->phase)
        return 0;
    return transition(s, np, 0);
}

unsigned gmp_sched_capture(gmp_sched *s, int on)
{
    if (s->spec.kind != GMP_SCHED_CAPTURE || s->phase == GMT_PHASE_DONE)
        return 0;
    gmt_phase np = on ? GMT_PHASE_ACTIVE : GMT_PHASE_WAIT;
    if (np == s->phase)
        return 0;
    return transition(s, np, 0);
}

unsigned gmp_sched_finish(gmp_sched *s)
{
    if (s->phase == GMT_PHASE_DONE)
        return 0;
    return transition(s, GMT_PHASE_DONE, 0);
}

int gmp_sched_collects(const gmp_sched *s) { return phase_collects(s->phase); }
