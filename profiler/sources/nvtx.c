/*
 * NVTX injection: libgmemprof.so fills NVTX's export table with its own
 * handlers (InitializeInjectionNvtx2 in inject.c calls gmp_nvtx_attach).
 *
 * Why not forward to libcupti's InitializeInjectionNvtx2 and use the
 * CUPTI_CB_DOMAIN_NVTX callbacks:
 *   - cost: a push/pop/mark goes straight from the NVTX stub to a handler
 *     here (a TLS access, an id, a copy into the event ring), instead of
 *     through CUPTI's callback dispatch and its own NVTX bookkeeping;
 *   - it works before CUDA starts: NVTX calls made before cuInit (Python
 *     code that marks a step before its first tensor) are seen, and the
 *     NVTX side does not depend on a CUPTI subscription at all;
 *   - CUPTI 13.0's own NVTX injection crashes in nvtxNameOsThreadA
 *     (NVIDIA/NVTX#125); here unhandled calls stay NVTX's no-ops.
 * Each NVTX instance (every DSO that includes the NVTX headers has its own)
 * calls InitializeInjectionNvtx2 once; attach fills that instance's table.
 *
 * What counts:
 *   - a mark or a range (push or start) whose name is a step marker
 *     (gmp_config_is_step_marker) is a step boundary; a range is also
 *     recorded as a range;
 *   - a mark whose name starts with the tag prefix is a tag snapshot;
 *   - other marks become MARK records, ranges RANGE_BEGIN/END records.
 * Every domain is treated alike (the default domain and nvtxDomain* calls).
 * Push/pop ranges deeper than GMP_RANGE_STACK on one thread are not
 * recorded (their allocations are attributed to the deepest recorded one).
 */
#define NVTX_NO_IMPL
#include <nvtx3/nvToolsExt.h>

#include <stdlib.h>
#include <string.h>
#include <wchar.h>

#include "gmp_rt.h"
#include "nvtx.h"
#include "post.h"
#include "steps.h"

/* NVTX range ids, process-wide (0 is "no range"). */
static _Atomic uint64_t range_ids;

#define NAME_BUF 512

/* wchar_t (UTF-32 on Linux) to UTF-8, cut to fit. */
static size_t utf8_of_wide(const wchar_t *w, char *out, size_t cap)
{
    size_t n = 0;
    if (!w)
        return 0;
    for (; *w && n + 4 < cap; w++) {
        uint32_t c = (uint32_t)*w;
        if (c < 0x80) {
            out[n++] = (char)c;
        } else if (c < 0x800) {
            out[n++] = (char)(0xC0 | (c >> 6));
            out[n++] = (char)(0x80 | (c & 0x3F));
        } else if (c < 0x10000) {
            out[n++] = (char)(0xE0 | (c >> 12));
            out[n++] = (char)(0x80 | ((c >> 6) & 0x3F));
            out[n++] = (char)(0x80 | (c & 0x3F));
        } else if (c < 0x110000) {
            out[n++] = (char)(0xF0 | (c >> 18));
            out[n++] = (char)(0x80 | ((c >> 12) & 0x3F));
            out[n++] = (char)(0x80 | ((c >> 6) & 0x3F));
            out[n++] = (char)(0x80 | (c & 0x3F));
        } else {
            out[n++] = '?';
        }
    }
    out[n] = '\0';
    return n;
}

/* The message of an event attribute block, NUL-terminated: either the
 * caller's ASCII string or a conversion in buf. NULL when there is none. */
static const char *attr_message(const nvtxEventAttributes_t *a, char *buf, size_t cap)
{
    if (!a)
        return NULL;
    switch (a->messageType) {
    case NVTX_MESSAGE_TYPE_ASCII:
        return a->message.ascii;
    case NVTX_MESSAGE_TYPE_UNICODE:
        utf8_of_wide(a->message.unicode, buf, cap);
        return buf;
    case NVTX_MESSAGE_TYPE_REGISTERED:
        /* our nvtxDomainRegisterString handles are the strings themselves */
        return (const char *)a->message.registered;
    default:
        return NULL;
    }
}

static void on_mark(const char *name)
{
    if (!name || !gmp_live_state())
        return;
    if (gmp_config_is_step_marker(gmp_settings(), name)) {
        gmp_steps_step(GMT_STEPSRC_NVTX);
        return;
    }
    const char *tag = NULL;
    if (gmp_config_tag_name(gmp_settings(), name, &tag) && tag) {
        gmp_steps_tag(tag, strlen(tag));
        return;
    }
    gmp_ev ev;
    memset(&ev, 0, offsetof(gmp_ev, name));
    ev.type = GMP_EV_MARK;
    gmp_ev_set_name(&ev, name, strlen(name));
    gmp_post(&ev);
}

static uint64_t post_begin(const char *name, uint64_t parent, uint64_t ts, unsigned kind)
{
    uint64_t id = atomic_fetch_add_explicit(&range_ids, 1, memory_order_relaxed) + 1;
    gmp_ev ev;
    memset(&ev, 0, offsetof(gmp_ev, name));
    ev.type = GMP_EV_RANGE_BEGIN;
    ev.a = id;
    ev.b = parent;
    ev.c = kind;
    ev.ts = ts;
    gmp_ev_set_name(&ev, name, name ? strlen(name) : 0);
    gmp_post(&ev);
    return id;
}

/* Begins the op ranges that wait on this thread's stack, outermost first,
 * each with its own start time. Their ids are taken now, so a parent's is
 * still below its child's (the writer lists open ranges by id). */
static void begin_pending(gmp_tls *t)
{
    uint32_t n = t->nranges < GMP_RANGE_STACK ? t->nranges : GMP_RANGE_STACK;
    for (uint32_t d = n - t->npend; d < n; d++)
        t->lv[d].id = post_begin(t->lv[d].name, d ? t->lv[d - 1].id : 0, t->lv[d].ts, t->lv[d].kind);
    t->npend = 0;
}

uint64_t gmp_nvtx_current(gmp_tls *t)
{
    uint32_t n = t->nranges < GMP_RANGE_STACK ? t->nranges : GMP_RANGE_STACK;
    if (t->npend && gmp_live_state())
        begin_pending(t);
    return n ? t->lv[n - 1].id : 0;
}

/* marker: the name may be a step marker (an NVTX range; an op is not) */
static uint64_t range_begin(const char *name, int push, int marker)
{
    gmp_tls *t = gmp_self();
    if (!gmp_live_state())
        return 0;
    if (marker && name && gmp_config_is_step_marker(gmp_settings(), name))
        gmp_steps_step(GMT_STEPSRC_NVTX);
    uint64_t parent = 0;
    if (push) {
        if (t->npend)
            begin_pending(t); /* the ops around it are its parents */
        uint32_t d = t->nranges++;
        if (d >= GMP_RANGE_STACK)
            return 0; /* too deep: counted in the depth, not recorded */
        parent = d ? t->lv[d - 1].id : 0;
    }
    uint64_t id = post_begin(name, parent, 0, GMT_RANGE_NVTX);
    if (push)
        t->lv[t->nranges - 1].id = id;
    return id;
}

static void range_end(uint64_t id)
{
    if (!id || !gmp_live_state())
        return;
    gmp_ev ev;
    memset(&ev, 0, offsetof(gmp_ev, name));
    ev.type = GMP_EV_RANGE_END;
    ev.a = id;
    gmp_post(&ev);
}

static int range_push(const char *name)
{
    gmp_tls *t = gmp_self();
    if (!gmp_live_state())
        return 0;
    range_begin(name, 1, 1);
    return (int)t->nranges - 1;
}

static int range_pop(void)
{
    gmp_tls *t = gmp_self();
    if (t->nranges == 0)
        return -1; /* unbalanced (or pushed before the profiler attached) */
    uint32_t d = --t->nranges;
    if (d < GMP_RANGE_STACK) {
        if (t->npend) {
            t->npend--; /* an op that never began: nothing to end */
            return (int)d;
        }
        range_end(t->lv[d].id);
    }
    return (int)d;
}

void gmp_nvtx_op_end_begun(void) { (void)range_pop(); }

/* ---- the handlers NVTX calls ------------------------------------------------ */

static void NVTX_API h_markA(const char *m) { on_mark(m); }
static void NVTX_API h_markW(const wchar_t *m)
{
    char b[NAME_BUF];
    utf8_of_wide(m, b, sizeof b);
    on_mark(b);
}
static void NVTX_API h_markEx(const nvtxEventAttributes_t *a)
{
    char b[NAME_BUF];
    on_mark(attr_message(a, b, sizeof b));
}
static nvtxRangeId_t NVTX_API h_startA(const char *m) { return range_begin(m, 0, 1); }
static nvtxRangeId_t NVTX_API h_startW(const wchar_t *m)
{
    char b[NAME_BUF];
    utf8_of_wide(m, b, sizeof b);
    return range_begin(b, 0, 1);
}
static nvtxRangeId_t NVTX_API h_startEx(const nvtxEventAttributes_t *a)
{
    char b[NAME_BUF];
    return range_begin(attr_message(a, b, sizeof b), 0, 1);
}
static void NVTX_API h_end(nvtxRangeId_t id) { range_end(id); }
static int NVTX_API h_pushA(const char *m) { return range_push(m); }
static int NVTX_API h_pushW(const wchar_t *m)
{
    char b[NAME_BUF];
    utf8_of_wide(m, b, sizeof b);
    return range_push(b);
}
static int NVTX_API h_pushEx(const nvtxEventAttributes_t *a)
{
    char b[NAME_BUF];
    return range_push(attr_message(a, b, sizeof b));
}
static int NVTX_API h_pop(void) { return range_pop(); }

static void NVTX_API h_dmarkEx(nvtxDomainHandle_t d, const nvtxEventAttributes_t *a)
{
    (void)d;
    h_markEx(a);
}
static nvtxRangeId_t NVTX_API h_dstartEx(nvtxDomainHandle_t d, const nvtxEventAttributes_t *a)
{
    (void)d;
    return h_startEx(a);
}
static void NVTX_API h_dend(nvtxDomainHandle_t d, nvtxRangeId_t id)
{
    (void)d;
    range_end(id);
}
static int NVTX_API h_dpushEx(nvtxDomainHandle_t d, const nvtxEventAttributes_t *a)
{
    (void)d;
    return h_pushEx(a);
}
static int NVTX_API h_dpop(nvtxDomainHandle_t d)
{
    (void)d;
    return range_pop();
}
/* Registered strings: the handle is a copy of the string (kept for the life
 * of the process, as NVTX requires). */
static nvtxStringHandle_t NVTX_API h_dregA(nvtxDomainHandle_t d, const char *s)
{
    (void)d;
    return (nvtxStringHandle_t)(s ? strdup(s) : NULL);
}
static nvtxStringHandle_t NVTX_API h_dregW(nvtxDomainHandle_t d, const wchar_t *s)
{
    char b[NAME_BUF];
    (void)d;
    utf8_of_wide(s, b, sizeof b);
    return (nvtxStringHandle_t)strdup(b);
}

typedef struct slot_fn {
    unsigned id;
    NvtxFunctionPointer fn;
} slot_fn;

static int fill(const NvtxExportTableCallbacks *cb, NvtxCallbackModule mod, const slot_fn *fns, size_t n)
{
    NvtxFunctionTable tab = NULL;
    unsigned int size = 0;
    if (!cb->GetModuleFunctionTable(mod, &tab, &size) || !tab)
        return 0;
    for (size_t i = 0; i < n; i++)
        if (fns[i].id < size && tab[fns[i].id])
            *tab[fns[i].id] = fns[i].fn;
    return 1;
}

#define FN(f) ((NvtxFunctionPointer)(void (*)(void))(f))

int gmp_nvtx_attach(const void *(*get_export_table)(uint32_t))
{
    if (!get_export_table)
        return 0;
    const NvtxExportTableCallbacks *cb = get_export_table(NVTX_ETID_CALLBACKS);
    if (!cb || cb->struct_size < sizeof *cb || !cb->GetModuleFunctionTable)
        return 0;
    static const slot_fn core[] = {
        {NVTX_CBID_CORE_MarkEx, FN(h_markEx)},     {NVTX_CBID_CORE_MarkA, FN(h_markA)},
        {NVTX_CBID_CORE_MarkW, FN(h_markW)},       {NVTX_CBID_CORE_RangeStartEx, FN(h_startEx)},
        {NVTX_CBID_CORE_RangeStartA, FN(h_startA)}, {NVTX_CBID_CORE_RangeStartW, FN(h_startW)},
        {NVTX_CBID_CORE_RangeEnd, FN(h_end)},      {NVTX_CBID_CORE_RangePushEx, FN(h_pushEx)},
        {NVTX_CBID_CORE_RangePushA, FN(h_pushA)},  {NVTX_CBID_CORE_RangePushW, FN(h_pushW)},
        {NVTX_CBID_CORE_RangePop, FN(h_pop)},
    };
    static const slot_fn core2[] = {
        {NVTX_CBID_CORE2_DomainMarkEx, FN(h_dmarkEx)},
        {NVTX_CBID_CORE2_DomainRangeStartEx, FN(h_dstartEx)},
        {NVTX_CBID_CORE2_DomainRangeEnd, FN(h_dend)},
        {NVTX_CBID_CORE2_DomainRangePushEx, FN(h_dpushEx)},
        {NVTX_CBID_CORE2_DomainRangePop, FN(h_dpop)},
        {NVTX_CBID_CORE2_DomainRegisterStringA, FN(h_dregA)},
        {NVTX_CBID_CORE2_DomainRegisterStringW, FN(h_dregW)},
    };
    int ok = fill(cb, NVTX_CB_MODULE_CORE, core, sizeof core / sizeof core[0]);
    fill(cb, NVTX_CB_MODULE_CORE2, core2, sizeof core2 / sizeof core2[0]);
    return ok;
}
