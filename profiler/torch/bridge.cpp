// libgmemprof_torch.so: PyTorch's caching allocator and ops, seen from inside.
//
// The one C++ module of gmemprof, because c10's and ATen's hooks are C++
// API. It attaches a trace tracker to c10's CUDA caching allocator (every
// block alloc, free-requested and free-completed, every segment alloc,
// free, map and unmap, with memory history off), and registers
// RecordFunction callbacks for ops and optimizer steps while the profiler
// asks for them; it forwards everything to libgmemprof.so through the C
// table of profiler/sources/torch_bridge.h. Built against one torch's own headers;
// libgmemprof.so checks the build id of the libc10_cuda.so it was built
// for before using it.
#include <ATen/SequenceNumber.h>
#include <ATen/record_function.h>
#include <c10/cuda/CUDACachingAllocator.h>
#include <c10/cuda/CUDAFunctions.h>
#include <torch/csrc/profiler/orchestration/observer.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <mutex>

#include "gmemprof/trace_format.h"
#include "py.h"
#include "seqring.h"
#include "torch_bridge.h"

#ifndef GMP_TORCH_VERSION
#define GMP_TORCH_VERSION "unknown"
#endif
#ifndef GMP_C10_CUDA_BUILD_ID
#define GMP_C10_CUDA_BUILD_ID ""
#endif

namespace {

namespace cca = c10::cuda::CUDACachingAllocator;
using c10::CachingDeviceAllocator::TraceEntry;

std::atomic<const gmp_bridge_host*> g_host{nullptr};
std::atomic<bool> g_attached{false};
std::atomic<unsigned> g_watching{0};  // GMP_BRIDGE_WATCH_* granted

// Our action numbers (trace_format.h), independent of c10's enum order.
int action_of(TraceEntry::Action a) {
  switch (a) {
    case TraceEntry::ALLOC: return GMT_BLK_ALLOC;
    case TraceEntry::FREE_REQUESTED: return GMT_BLK_FREE_REQUESTED;
    case TraceEntry::FREE_COMPLETED: return GMT_BLK_FREE_COMPLETED;
    case TraceEntry::SEGMENT_ALLOC: return GMT_BLK_SEGMENT_ALLOC;
    case TraceEntry::SEGMENT_FREE: return GMT_BLK_SEGMENT_FREE;
    case TraceEntry::SEGMENT_MAP: return GMT_BLK_SEGMENT_MAP;
    case TraceEntry::SEGMENT_UNMAP: return GMT_BLK_SEGMENT_UNMAP;
    case TraceEntry::OOM: return GMT_BLK_OOM;
    default: return -1;  // SNAPSHOT and later additions carry no memory
  }
}

// PyTorch counts a block by its size (rounded, sometimes grown by an
// unsplit remainder), while its trace entry carries the requested size.
// A request of at most 1 MiB comes from the small pool, whose blocks are
// always split to the request rounded up to 512 bytes unless
// roundup_power2_divisions is configured: such an ALLOC goes out with that
// size. Any other ALLOC goes out with the allocator's allocated bytes as
// read in the callback, and a flush sends the reading alone; from their
// changes the profiler's writer knows every block's size as
// memory_allocated() counts it (profiler/sources/torch.h says how). The reading
// copies the device's statistics (about 1 KB) under the allocator's lock,
// so the common small tensor goes without it.
constexpr int kMaxDevices = 64;
constexpr uint64_t kSmallSize = 1 << 20;  // c10's kSmallSize
constexpr uint64_t kMinBlockSize = 512;   // c10's kMinBlockSize
std::atomic<bool> g_read[kMaxDevices];    // a reading was sent: flush sends one too
bool g_small_exact = true;                // set at attach from the allocator's settings

uint64_t small_block_size(uint64_t request) {
  return request < kMinBlockSize ? kMinBlockSize : (request + kMinBlockSize - 1) / kMinBlockSize * kMinBlockSize;
}

// roundup_power2_divisions changes how small requests round; the settings
// come from these variables (torch.cuda.memory._set_allocator_settings
// later is not seen: user guide §7).
bool small_rounding_is_plain() {
  for (const char* name : {"PYTORCH_CUDA_ALLOC_CONF", "PYTORCH_ALLOC_CONF"}) {
    const char* v = std::getenv(name);
    if (v && std::strstr(v, "roundup_power2_divisions")) return false;
  }
  return true;
}

uint64_t allocated_now(c10::DeviceIndex dev) {
  // the device lock: already held (recursive) in a callback, taken briefly
  // by a flush
  return static_cast<uint64_t>(
      cca::getDeviceStats(dev).allocated_bytes[static_cast<size_t>(c10::CachingAllocator::StatType::AGGREGATE)]
          .current);
}

// The frame (and stack) of the outermost op running on this thread, 0 none
// (forward_start).
thread_local uint32_t tl_frame, tl_stack;
thread_local unsigned tl_ops;  // FUNCTION-scope ops open on this thread

// Runs with the allocator's device lock held: reads the entry and, for an
// allocation that needs it, the counter; one call.
void on_trace(const TraceEntry& e) {
  const gmp_bridge_host* h = g_host.load(std::memory_order_acquire);
  if (!h) return;
  int a = action_of(e.action_);
  if (a < 0) return;
  uint64_t size = static_cast<uint64_t>(e.size_), bytes = size, counter = 0;
  bool alloc = a == GMT_BLK_ALLOC, sized = false;
  if (alloc && g_small_exact && size <= kSmallSize) {
    bytes = small_block_size(size);
  } else if (alloc && e.device_ >= 0 && e.device_ < kMaxDevices) {
    // a free's size the writer knows from its live table
    sized = true;
    counter = allocated_now(e.device_);
    if (!g_read[e.device_].load(std::memory_order_relaxed)) g_read[e.device_].store(true, std::memory_order_relaxed);
  }
  // the program's line: the one its op started from (forward_start), or
  // where an allocation comes from Python without an op, the GIL's holder
  // walks its stack here (autograd's threads have neither)
  uint32_t frame = 0, stack = 0;
  unsigned w = g_watching.load(std::memory_order_relaxed);
  if (alloc && (w & GMP_BRIDGE_WATCH_FRAMES)) {
    frame = tl_frame;
    stack = tl_stack;
    if (!frame && gmp_py::holds_gil()) gmp_py::frame_ids((w & GMP_BRIDGE_WATCH_STACKS) != 0, &frame, &stack);
  }
  h->block_at(nullptr, static_cast<unsigned>(a), static_cast<unsigned>(e.device_), static_cast<uint64_t>(e.addr_),
              bytes, alloc || a == GMT_BLK_FREE_REQUESTED ? size : 0, reinterpret_cast<uint64_t>(e.stream_),
              static_cast<uint64_t>(e.mempool_.first), sized ? GMP_BRIDGE_HAS_COUNTER : 0u, counter, frame, stack);
}

void bridge_flush() {
  const gmp_bridge_host* h = g_host.load(std::memory_order_acquire);
  if (!h) return;
  int n = static_cast<int>(c10::cuda::device_count());
  for (int i = 0; i < n && i < kMaxDevices; i++)
    if (g_read[i].load(std::memory_order_relaxed))
      h->block(nullptr, GMP_BRIDGE_COUNTER, static_cast<unsigned>(i), 0, 0, 0, 0, 0, GMP_BRIDGE_HAS_COUNTER,
               allocated_now(static_cast<c10::DeviceIndex>(i)));
}

// The blocks and segments already live when the tracker is attached.
void seed(const gmp_bridge_host* h) {
  cca::SnapshotInfo snap = cca::snapshot();
  for (const auto& seg : snap.segments) {
    unsigned dev = static_cast<unsigned>(seg.device);
    uint64_t stream = reinterpret_cast<uint64_t>(seg.stream);
    uint64_t pool = static_cast<uint64_t>(seg.owner_private_pool_id.first);
    h->block(nullptr, seg.is_expandable ? GMT_BLK_SEGMENT_MAP : GMT_BLK_SEGMENT_ALLOC, dev, seg.address,
             seg.total_size, 0, stream, pool, GMT_BLKF_SEEDED, 0);
    uint64_t addr = seg.address;
    for (const auto& b : seg.blocks) {
      if (b.allocated)
        h->block(nullptr, GMT_BLK_ALLOC, dev, addr, b.size, b.requested_size, stream, pool, GMT_BLKF_SEEDED, 0);
      addr += b.size;
    }
  }
}

void module_changed(const void* innermost, bool reset);  // the backward table, below

int bridge_attach(const gmp_bridge_host* host, char* err, size_t cap) {
  if (!host || host->abi != GMP_BRIDGE_ABI || host->size < sizeof(gmp_bridge_host)) {
    std::snprintf(err, cap, "the profiler speaks another bridge interface");
    return GMP_BRIDGE_NEVER;
  }
  gmp_py::bind(&g_host, &g_watching, module_changed);
  if (g_attached.load()) {
    g_host.store(host, std::memory_order_release);
    return GMP_BRIDGE_ATTACHED;
  }
  try {
    cca::CUDAAllocator* al = cca::get();
    if (!al || !al->initialized()) return GMP_BRIDGE_LATER;
    // Events flow before the snapshot is read, so none is lost between the
    // two; a block allocated in between arrives twice, which the profiler's
    // live table takes as one (same device and address).
    g_small_exact = small_rounding_is_plain();
    g_host.store(host, std::memory_order_release);
    al->attachAllocatorTraceTracker(on_trace);
    g_attached.store(true);
    seed(host);
    return GMP_BRIDGE_ATTACHED;
  } catch (const std::exception& ex) {
    g_host.store(nullptr, std::memory_order_release);
    // e.g. the cudaMallocAsync backend: "does not yet support
    // attachAllocatorTraceTracker"; CUPTI then sees every tensor itself.
    std::snprintf(err, cap, "%s", ex.what());
    const char* nl = std::strchr(err, '\n');
    if (nl) err[nl - err] = '\0';
    return GMP_BRIDGE_NEVER;
  }
}

void bridge_detach() { g_host.store(nullptr, std::memory_order_release); }

// ---- ops and optimizer steps (RecordFunction) ----------------------------
//
// Three callbacks, one registered at a time: `full` while ops are watched
// (every op, autograd's backward functions and user scopes, which hold the
// optimizer's step), `modules` while modules are watched without ops (the
// same scopes, for the backward table, py.h's hooks and the steps, but no
// op range), `steps` otherwise (backward functions and user scopes: few
// per step). A RecordFunction keeps the callbacks it started with, so an
// op's end always reaches the callback that saw its start, even when the
// profiler swaps them in between (as it does from inside the end of an
// optimizer step). The bodies allocate nothing and copy no string.

std::atomic<bool> g_backward{false}; // a backward op since the last optimizer step

constexpr char kOptimizerStep[] = "Optimizer.step#";

bool is_optimizer_step(const at::RecordFunction& fn) {
  return fn.scope() == at::RecordScope::USER_SCOPE &&
         std::strncmp(fn.name(), kOptimizerStep, sizeof kOptimizerStep - 1) == 0;
}

// A step may open or close a window: the module hooks follow here, on the
// program's thread, once the profiler's step is done and holds no lock, so
// that the next forward starts with them in (or without them).
void optimizer_step_end(const gmp_bridge_host* h, const at::RecordFunction& fn) {
  if (!is_optimizer_step(fn)) return;
  bool after = g_backward.exchange(false, std::memory_order_relaxed);
  h->optimizer_step(fn.name(), after ? 1 : 0);
  if (gmp_py::present()) gmp_py::sync_hooks();
}

// Backward: RecordFunction's seqNr of a backward function is the
// sequence number of the forward op that made its node, and
// forwardThreadId that op's thread; seqring.h's table says which module's
// forward that was, from the module changes py.h reports. The function
// then runs inside a MODULE_BWD range of that module's path.
gmp_seq::Ring g_seq;
thread_local gmp_seq::Stretch tl_stretch;

void module_changed(const void* innermost, bool reset) {
  tl_stretch.change(&g_seq, static_cast<int64_t>(at::sequence_number::peek()), at::RecordFunction::currentThreadId(),
                    innermost, reset);
}

const char* backward_module(const at::RecordFunction& fn) {
  const void* m = g_seq.find(fn.seqNr(), fn.forwardThreadId());
  return m ? gmp_py::module_path(m) : nullptr;
}

// Per thread, which backward functions opened a module range: a bit per
// nesting level, so that the end closes what the start opened.
thread_local uint64_t tl_bwd_bits;
thread_local unsigned tl_bwd_depth;

void backward_start(const gmp_bridge_host* h, const at::RecordFunction& fn) {
  g_backward.store(true, std::memory_order_relaxed);
  const char* path = backward_module(fn);
  unsigned d = tl_bwd_depth++;
  if (d >= 64) return;
  if (path) h->range_begin(GMT_RANGE_MODULE_BWD, path);
  tl_bwd_bits = (tl_bwd_bits & ~(1ull << d)) | (static_cast<uint64_t>(path != nullptr) << d);
}

void backward_end(const gmp_bridge_host* h) {
  if (!tl_bwd_depth) return;
  unsigned d = --tl_bwd_depth;
  if (d < 64 && (tl_bwd_bits >> d & 1u) && h) h->range_end();
}

// A forward op. The outermost op of a thread that runs Python learns the
// program's line there, outside every allocator lock, for the blocks it
// allocates (an allocator callback runs under the allocator's lock, where
// taking the GIL could deadlock with a thread that holds it and frees a
// tensor); the first also puts the module hooks in.
void forward_start(const at::RecordFunction& fn) {
  if (fn.scope() != at::RecordScope::FUNCTION) return;
  // not inside a backward function: the engine may wait there on a thread
  // that holds the GIL
  if (tl_ops++ == 0 && tl_bwd_depth == 0) {
    unsigned w = g_watching.load(std::memory_order_relaxed);
    gmp_py::op_frame_ids((w & GMP_BRIDGE_WATCH_FRAMES) != 0, (w & GMP_BRIDGE_WATCH_STACKS) != 0, &tl_frame,
                         &tl_stack);
  }
}

void forward_end(const at::RecordFunction& fn) {
  if (fn.scope() != at::RecordScope::FUNCTION || !tl_ops) return;
  if (--tl_ops == 0) tl_frame = tl_stack = 0;
}

// ops and modules: every op is a range
std::unique_ptr<at::ObserverContext> full_start(const at::RecordFunction& fn) {
  const gmp_bridge_host* h = g_host.load(std::memory_order_acquire);
  if (!h) return nullptr;
  if (fn.scope() == at::RecordScope::BACKWARD_FUNCTION)
    backward_start(h, fn);
  else
    forward_start(fn);
  h->op_begin(fn.name());
  return nullptr;
}

void full_end(const at::RecordFunction& fn, at::ObserverContext*) {
  const gmp_bridge_host* h = g_host.load(std::memory_order_acquire);
  if (!h) return;
  h->op_end();  // the range closes first: the optimizer's step ends inside its step
  if (fn.scope() == at::RecordScope::BACKWARD_FUNCTION) backward_end(h);
  forward_end(fn);
  optimizer_step_end(h, fn);
}

// modules without op ranges (GMEMPROF_TORCH_OPS=0)
std::unique_ptr<at::ObserverContext> modules_start(const at::RecordFunction& fn) {
  const gmp_bridge_host* h = g_host.load(std::memory_order_acquire);
  if (!h) return nullptr;
  if (fn.scope() == at::RecordScope::BACKWARD_FUNCTION)
    backward_start(h, fn);
  else
    forward_start(fn);
  return nullptr;
}

void modules_end(const at::RecordFunction& fn, at::ObserverContext*) {
  const gmp_bridge_host* h = g_host.load(std::memory_order_acquire);
  if (!h) return;
  if (fn.scope() == at::RecordScope::BACKWARD_FUNCTION) backward_end(h);
  forward_end(fn);
  optimizer_step_end(h, fn);
}

std::unique_ptr<at::ObserverContext> steps_start(const at::RecordFunction& fn) {
  if (fn.scope() == at::RecordScope::BACKWARD_FUNCTION) g_backward.store(true, std::memory_order_relaxed);
  return nullptr;
}

void steps_end(const at::RecordFunction& fn, at::ObserverContext*) {
  const gmp_bridge_host* h = g_host.load(std::memory_order_acquire);
  if (h) optimizer_step_end(h, fn);
}

std::mutex g_watch_mu;  // watch() may come from two threads (a step, a new context)
at::CallbackHandle g_cb = 0;

at::CallbackHandle add_callback(unsigned what) {
  auto all = {at::RecordScope::FUNCTION, at::RecordScope::BACKWARD_FUNCTION, at::RecordScope::USER_SCOPE};
  if (what & GMP_BRIDGE_WATCH_OPS)
    return at::addGlobalCallback(at::RecordFunctionCallback(full_start, full_end).scopes(all));
  if (what & GMP_BRIDGE_WATCH_MODULES)
    return at::addGlobalCallback(at::RecordFunctionCallback(modules_start, modules_end).scopes(all));
  return at::addGlobalCallback(
      at::RecordFunctionCallback(steps_start, steps_end)
          .scopes({at::RecordScope::BACKWARD_FUNCTION, at::RecordScope::USER_SCOPE}));
}

unsigned bridge_watch(unsigned what, char* err, size_t cap) {
  std::lock_guard<std::mutex> lock(g_watch_mu);
  if ((what & GMP_BRIDGE_WATCH_OPS) &&
      torch::profiler::impl::profilerType() == torch::profiler::impl::ActiveProfilerType::NVTX) {
    // emit_nvtx: its NVTX ranges are the op ranges; two of each would nest
    what &= ~GMP_BRIDGE_WATCH_OPS;
    if (err && cap)
      std::snprintf(err, cap,
                    "torch.autograd.profiler.emit_nvtx() is on: its NVTX ranges are the op ranges, the PyTorch "
                    "bridge adds none");
  }
  // modules and frames need Python: a C++ program gets ops and tensors
  if (!gmp_py::present())
    what &= ~(GMP_BRIDGE_WATCH_MODULES | GMP_BRIDGE_WATCH_FRAMES | GMP_BRIDGE_WATCH_STACKS);
  if (!(what & GMP_BRIDGE_WATCH_FRAMES)) what &= ~GMP_BRIDGE_WATCH_STACKS;
  if (what & (GMP_BRIDGE_WATCH_OPS | GMP_BRIDGE_WATCH_MODULES)) what |= GMP_BRIDGE_WATCH_STEPS;  // seen by both
  unsigned cur = g_watching.load();
  if (what == cur) return what;
  const unsigned kind = GMP_BRIDGE_WATCH_OPS | GMP_BRIDGE_WATCH_MODULES | GMP_BRIDGE_WATCH_STEPS;
  if ((what & kind) == (cur & kind) && (g_cb || !(what & kind))) {
    g_watching.store(what);  // frames or stacks alone: no callback to change
    return what;
  }
  try {
    if (g_cb) at::removeCallback(g_cb);
    g_cb = 0;
    if (!(what & GMP_BRIDGE_WATCH_STEPS)) g_backward.store(false, std::memory_order_relaxed);
    if (what & kind) g_cb = add_callback(what);
    g_watching.store(what);
  } catch (const std::exception& ex) {
    g_watching.store(0);
    if (err && cap) std::snprintf(err, cap, "PyTorch refused a RecordFunction callback: %s", ex.what());
  }
  return g_watching.load();
}

const gmp_bridge g_bridge = {
    GMP_BRIDGE_ABI, sizeof(gmp_bridge), "torch", GMP_TORCH_VERSION, "libc10_cuda.so", GMP_C10_CUDA_BUILD_ID,
    bridge_attach, bridge_detach, bridge_flush, bridge_watch,
};

}  // namespace

extern "C" __attribute__((visibility("default"))) const gmp_bridge* gmemprof_torch_bridge(uint32_t abi) {
  return abi == GMP_BRIDGE_ABI ? &g_bridge : nullptr;
}
