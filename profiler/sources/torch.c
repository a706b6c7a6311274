/*
 * The PyTorch source (torch.h): finding, checking and attaching the bridge,
 * and the bridge's one hot path, host_block.
 */
#include "torch.h"

#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "frames.h"
#include "gmp_rt.h"
#include "log.h"
#include "nvtx.h"
#include "post.h"
#include "steps.h"
#include "torch_bridge.h"

#define BRIDGE_FILE "libgmemprof_torch.so"

static struct {
    _Atomic int state;       /* gmp_torch_state */
    void *dl;                /* the bridge, while attached */
    const gmp_bridge *br;
    char describe[96];
    _Atomic int want_ops;    /* the schedule collects: op ranges wanted */
    _Atomic int ops_said;    /* the line about withheld op ranges was printed */
    _Atomic uint64_t optimizer_steps; /* seen, whether they made steps or not */
} T;

/* ---- the hot path ---------------------------------------------------------- */

/* The origin's words: ts, tid, epoch, range, seq, internal thread. */
enum { O_TS, O_TID, O_EPOCH, O_RANGE, O_SEQ, O_INTERNAL };

static void host_origin(gmp_bridge_origin *o)
{
    gmp_tls *t = gmp_self();
    o->w[O_RANGE] = gmp_nvtx_current(t); /* its RANGE_BEGIN goes first */
    o->w[O_TS] = gmp_now();
    o->w[O_TID] = gmp_tid(t);
    o->w[O_EPOCH] = atomic_load_explicit(&gmp_g.epoch, memory_order_acquire);
    o->w[O_SEQ] = t->seq;
    o->w[O_INTERNAL] = (uint64_t)t->internal;
}

/* c10's free() reports FREE_REQUESTED and, when no other stream used the
 * block, FREE_COMPLETED right after it in the same call, under the same
 * lock. Such a completion marks the request's ring event instead of a
 * second push (a third of a tensor's events): when the newest event in the
 * ring is this thread's request of the same block, less than
 * SAME_CALL_NS old. The writer writes both records, the completion at the
 * request's time. A completion that record_stream delayed comes after
 * a launch of the thread, after other events or later than that, and goes
 * out on its own. Whether a completion with nothing but under 2 us between
 * it and its request is folded changes its time by less than that and
 * nothing else. */
#define SAME_CALL_NS 2000u

static int complete_newest(unsigned device, uint64_t address, uint64_t stream)
{
    uint64_t pos;
    const gmp_ev *ev = gmp_ring_newest(&gmp_g.ring, &pos);
    if (!ev)
        return 0;
    /* the thread's block is warm: the request's call used it a moment ago */
    gmp_tls *t = gmp_self();
    gmp_block_call c = {.device = device, .tid = gmp_tid(t), .address = address, .stream = stream, .seq = t->seq,
                        .now = gmp_now()};
    if (!gmp_ev_block_same_call(ev, &c, SAME_CALL_NS))
        return 0;
    return gmp_ring_mark(&gmp_g.ring, pos) == 0;
}

/* On the allocating thread, with the allocator's lock held: no lock, no
 * allocation, one ring push or one mark (torch_bridge.h). */
static void host_block_at(const gmp_bridge_origin *o, unsigned action, unsigned device, uint64_t address,
                          uint64_t bytes, uint64_t requested, uint64_t stream, uint64_t pool, unsigned flags,
                          uint64_t counter, uint32_t frame, uint32_t stack)
{
    if (!gmp_live_state() || atomic_load_explicit(&gmp_g.forked, memory_order_relaxed))
        return;
    if (action == GMT_BLK_FREE_COMPLETED && !o && complete_newest(device, address, stream))
        return;
    gmp_bridge_origin now;
    if (!o) {
        host_origin(&now);
        o = &now;
    }
    if (o->w[O_INTERNAL])
        return;
    gmp_ev ev;
    memset(&ev, 0, offsetof(gmp_ev, name) + sizeof ev.block);
    ev.type = GMP_EV_BLOCK;
    ev.len = sizeof ev.block;
    ev.ts = o->w[O_TS];
    ev.tid = (uint32_t)o->w[O_TID];
    ev.epoch = (uint32_t)o->w[O_EPOCH];
    ev.a = address;
    ev.b = bytes;
    ev.c = stream;
    ev.d = pool;
    ev.block.range = o->w[O_RANGE];
    ev.block.seq = o->w[O_SEQ];
    ev.block.action = (uint8_t)action;
    ev.block.flags = (uint8_t)(flags & 0xffu);
    ev.block.has_counter = (flags & GMP_BRIDGE_HAS_COUNTER) != 0;
    ev.block.device = (uint16_t)device;
    ev.block.requested = requested;
    ev.block.counter = counter;
    ev.block.frame = frame;
    ev.block.stack = stack;
    (void)gmp_post_ready(&ev); /* stamped from the origin: no second look at the thread */
}

static void host_block(const gmp_bridge_origin *o, unsigned action, unsigned device, uint64_t address,
                       uint64_t bytes, uint64_t requested, uint64_t stream, uint64_t pool, unsigned flags,
                       uint64_t counter)
{
    host_block_at(o, action, device, address, bytes, requested, stream, pool, flags, counter, 0, 0);
}

static void host_log(int debug, const char *line)
{
    if (debug)
        gmp_log_debug("%s", line);
    else
        gmp_log_error("%s", line);
}

/* Op ranges: the NVTX module's stack, so that an op and an NVTX range
 * nest and attribute alike. */
static void host_op_begin(const char *name)
{
    if (!atomic_load_explicit(&gmp_g.forked, memory_order_relaxed))
        gmp_nvtx_op_begin(name);
}

static void host_op_end(void)
{
    if (!atomic_load_explicit(&gmp_g.forked, memory_order_relaxed))
        gmp_nvtx_op_end();
}

/* Module ranges (and ops) of the bridge: the same stack, with their kind. */
static void host_range_begin(unsigned kind, const char *name)
{
    if (kind == GMT_RANGE_NVTX || kind >= GMT_RANGE_KIND_COUNT_)
        kind = GMT_RANGE_OP; /* an NVTX range is NVTX's to open */
    if (!atomic_load_explicit(&gmp_g.forked, memory_order_relaxed))
        gmp_nvtx_range_pend(kind, name);
}

static uint32_t host_intern(const char *s, size_t n) { return gmp_frames_intern(s, n); }

/* The end of an optimizer step is the end of a training step when a
 * backward pass ran since the previous one: gradient accumulation (several
 * backward passes, one optimizer step) gives one step, and several
 * optimizers stepping one after another give one step, at the first. */
static void host_optimizer_step(const char *name, int after_backward)
{
    (void)name;
    if (atomic_load_explicit(&gmp_g.forked, memory_order_relaxed))
        return;
    atomic_fetch_add_explicit(&T.optimizer_steps, 1, memory_order_relaxed);
    if (after_backward)
        gmp_steps_step(GMT_STEPSRC_OPTIMIZER);
}

static const gmp_bridge_host host = {GMP_BRIDGE_ABI,      sizeof(gmp_bridge_host), host_origin,
                                     host_block,          host_log,                host_op_begin,
                                     host_op_end,         host_optimizer_step,     host_range_begin,
                                     host_op_end,         host_intern,             host_block_at};

/* What the bridge should watch now. */
static unsigned watch_bits(void)
{
    unsigned w = 0;
    int collect = atomic_load(&T.want_ops);
    if (gmp_settings()->torch_ops && collect)
        w |= GMP_BRIDGE_WATCH_OPS;
    /* modules and frames while the schedule collects, whatever the ops */
    if (collect && gmp_settings()->torch_modules)
        w |= GMP_BRIDGE_WATCH_MODULES | (gmp_settings()->torch_module_hooks ? GMP_BRIDGE_WATCH_MODULE_HOOKS : 0);
    if (collect && strcmp(gmp_settings()->stacks, "off") != 0)
        w |= GMP_BRIDGE_WATCH_FRAMES;
    if (collect && strcmp(gmp_settings()->stacks, "python") == 0)
        w |= GMP_BRIDGE_WATCH_STACKS;
    if (gmp_steps_wants_optimizer())
        w |= GMP_BRIDGE_WATCH_STEPS;
    return w;
}

static void apply_watch(void)
{
    char err[256] = "";
    unsigned want = watch_bits();
    unsigned got = T.br->watch(want, err, sizeof err);
    if ((want & ~got & GMP_BRIDGE_WATCH_OPS) && !atomic_exchange(&T.ops_said, 1))
        gmp_log_info("%s", err[0] ? err : "the PyTorch bridge records no op ranges in this process");
}

/* ---- build ids --------------------------------------------------------------- */

typedef struct bid_ctx {
    const char *name;
    char *out;
    size_t cap;
    int found; /* -1 not loaded, 0 no id, 1 id */
} bid_ctx;

static const char *base_name(const char *p)
{
    const char *s = strrchr(p, '/');
    return s ? s + 1 : p;
}

static int note_build_id(const ElfW(Phdr) *ph, ElfW(Addr) base, bid_ctx *c)
{
    const unsigned char *p = (const unsigned char *)(base + ph->p_vaddr);
    const unsigned char *end = p + ph->p_memsz;
    while (p + sizeof(ElfW(Nhdr)) <= end) {
        const ElfW(Nhdr) *nh = (const ElfW(Nhdr) *)(const void *)p;
        size_t nsz = (nh->n_namesz + 3u) & ~3u, dsz = (nh->n_descsz + 3u) & ~3u;
        const unsigned char *name = p + sizeof *nh, *desc = name + nsz;
        if (desc + dsz > end)
            break;
        if (nh->n_type == NT_GNU_BUILD_ID && nh->n_namesz == 4 && memcmp(name, "GNU", 4) == 0) {
            size_t k = 0;
            for (uint32_t i = 0; i < nh->n_descsz && k + 3 <= c->cap; i++, k += 2)
                snprintf(c->out + k, 3, "%02x", desc[i]);
            return 1;
        }
        p = desc + dsz;
    }
    return 0;
}

static int bid_visit(struct dl_phdr_info *info, size_t size, void *vctx)
{
    (void)size;
    bid_ctx *c = vctx;
    if (!info->dlpi_name || strcmp(base_name(info->dlpi_name), c->name) != 0)
        return 0;
    c->found = 0;
    for (int i = 0; i < info->dlpi_phnum; i++)
        if (info->dlpi_phdr[i].p_type == PT_NOTE && note_build_id(&info->dlpi_phdr[i], info->dlpi_addr, c)) {
            c->found = 1;
            break;
        }
    return 1;
}

int gmp_torch_loaded_build_id(const char *name, char *out, size_t cap)
{
    if (!out || cap == 0)
        return -1;
    out[0] = '\0';
    bid_ctx c = {name, out, cap, -1};
    dl_iterate_phdr(bid_visit, &c);
    return c.found;
}

/* ---- loading ----------------------------------------------------------------- */

/* The bridge beside this library (lib/libgmemprof.so -> lib/libgmemprof_torch.so). */
static int bridge_path(char *out, size_t cap)
{
    if (gmp_settings()->torch_bridge[0])
        return snprintf(out, cap, "%s", gmp_settings()->torch_bridge) < (int)cap ? 0 : -1;
    Dl_info di;
    if (!dladdr((void *)&gmp_torch_maybe_attach, &di) || !di.dli_fname)
        return -1;
    const char *slash = strrchr(di.dli_fname, '/');
    int dir = slash ? (int)(slash - di.dli_fname) : 0;
    int n = slash ? snprintf(out, cap, "%.*s/%s", dir, di.dli_fname, BRIDGE_FILE) : snprintf(out, cap, "%s", BRIDGE_FILE);
    return n > 0 && n < (int)cap ? 0 : -1;
}

#define REBUILD "rebuild gmemprof in this Python environment (cmake -DGMEMPROF_TORCH=ON) to record tensors"

/* A bridge that is there and built for this process's torch; NULL with the
 * line printed otherwise. */
static const gmp_bridge *load_bridge(const char *loaded_id, void **dl_out)
{
    char path[GMP_PATH_MAX];
    if (bridge_path(path, sizeof path) != 0) {
        gmp_log_error("PyTorch is in this process, but the path of its bridge is too long; only the allocator's "
                      "segments are recorded");
        return NULL;
    }
    void *dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!dl) {
        const char *why = dlerror();
        gmp_log_error("PyTorch is in this process, but its bridge %s could not be loaded (%s); only the "
                      "allocator's segments are recorded: %s", path, why ? why : "unknown error", REBUILD);
        return NULL;
    }
    gmp_bridge_entry_fn entry = (gmp_bridge_entry_fn)dlsym(dl, GMP_BRIDGE_ENTRY);
    const gmp_bridge *br = entry ? entry(GMP_BRIDGE_ABI) : NULL;
    if (!br || br->abi != GMP_BRIDGE_ABI || br->size < sizeof(gmp_bridge) || !br->attach || !br->flush ||
        !br->watch) {
        gmp_log_error("the PyTorch bridge %s speaks another interface than this libgmemprof.so (ABI %u "
                      "expected); only the allocator's segments are recorded: %s", path, GMP_BRIDGE_ABI, REBUILD);
        dlclose(dl);
        return NULL;
    }
    if (br->build_id && br->build_id[0] && loaded_id[0] && strcmp(br->build_id, loaded_id) != 0) {
        gmp_log_error("the PyTorch bridge %s was built for %s %s (%s build id %.12s), but this process has a "
                      "different %s (build id %.12s); only the allocator's segments are recorded: %s",
                      path, br->framework ? br->framework : "torch", br->version ? br->version : "?",
                      br->library ? br->library : "libc10_cuda.so", br->build_id,
                      br->library ? br->library : "libc10_cuda.so", loaded_id, REBUILD);
        dlclose(dl);
        return NULL;
    }
    *dl_out = dl;
    return br;
}

void gmp_torch_maybe_attach(void)
{
    int expect = GMP_TORCH_IDLE;
    if (atomic_load_explicit(&T.state, memory_order_relaxed) != GMP_TORCH_IDLE || !gmp_on())
        return;
    if (!gmp_settings()->torch) {
        atomic_store(&T.state, GMP_TORCH_OFF);
        return;
    }
    if (!atomic_compare_exchange_strong(&T.state, &expect, GMP_TORCH_BUSY))
        return;
    int next = GMP_TORCH_IDLE;
    char id[128];
    /* PyTorch's CUDA allocator is in libc10_cuda: until it is loaded there
     * is nothing to attach to (and a program without PyTorch pays only
     * this walk of the loaded objects, at each context, step and tag). */
    if (gmp_torch_loaded_build_id("libc10_cuda.so", id, sizeof id) >= 0) {
        next = GMP_TORCH_OFF;
        if (!T.br)
            T.br = load_bridge(id, &T.dl);
        if (T.br) {
            char err[512] = "";
            int rc = T.br->attach(&host, err, sizeof err);
            if (rc == GMP_BRIDGE_ATTACHED) {
                next = GMP_TORCH_ATTACHED;
                if (strcmp(gmp_settings()->stacks, "python") != 0 && strcmp(gmp_settings()->stacks, "none") != 0 &&
                    strcmp(gmp_settings()->stacks, "off") != 0)
                    gmp_log_error("GMEMPROF_STACKS='%s' is not 'python', 'none' or 'off': tensors get their "
                                  "innermost frame only; set GMEMPROF_STACKS=python for whole stacks",
                                  gmp_settings()->stacks);
                apply_watch();
                snprintf(T.describe, sizeof T.describe, "PyTorch %s allocator", T.br->version ? T.br->version : "");
                gmp_log_debug("PyTorch bridge attached (torch %s)", T.br->version ? T.br->version : "?");
            } else if (rc == GMP_BRIDGE_LATER) {
                next = GMP_TORCH_IDLE;
            } else {
                gmp_log_error("PyTorch's allocator cannot be tracked in this process: %s; the CUPTI records "
                              "are kept as they are", err[0] ? err : "the bridge refused");
                dlclose(T.dl);
                T.dl = NULL;
                T.br = NULL;
            }
        }
    }
    atomic_store(&T.state, next);
}

void gmp_torch_flush(void)
{
    if (atomic_load_explicit(&T.state, memory_order_acquire) == GMP_TORCH_ATTACHED && T.br->flush)
        T.br->flush();
}

void gmp_torch_watch_ops(int on)
{
    atomic_store(&T.want_ops, on != 0);
    if (atomic_load_explicit(&T.state, memory_order_acquire) == GMP_TORCH_ATTACHED)
        apply_watch();
}

uint64_t gmp_torch_optimizer_steps(void) { return atomic_load(&T.optimizer_steps); }

void gmp_torch_detach(void)
{
    /* no watch(0) here: in a fork child torch's locks may be held by a
     * thread that is gone; a detached bridge's callbacks just return */
    if (atomic_load(&T.state) == GMP_TORCH_ATTACHED && T.br && T.br->detach)
        T.br->detach();
}

int gmp_torch_state(void) { return atomic_load(&T.state); }

const char *gmp_torch_describe(void) { return T.describe; }

void gmp_torch_reset(void)
{
    gmp_torch_detach();
    atomic_store(&T.state, GMP_TORCH_IDLE);
    T.br = NULL;
    T.dl = NULL; /* never closed while a tracker may call into it */
    T.describe[0] = '\0';
    atomic_store(&T.want_ops, 0);
    atomic_store(&T.ops_said, 0);
    atomic_store(&T.optimizer_steps, 0);
}
