// libgmemprof_torch.so: PyTorch's caching allocator, seen from inside.
//
// The one C++ module of gmemprof, because c10's hooks are C++ API. It
// attaches a trace tracker to c10's CUDA caching allocator (every block
// alloc, free-requested and free-completed, every segment alloc, free, map
// and unmap, with memory history off) and forwards each event to
// libgmemprof.so through the C table of profiler/torch_bridge.h. Built
// against one torch's own headers; libgmemprof.so checks the build id of
// the libc10_cuda.so it was built for before using it.
#include <c10/cuda/CUDACachingAllocator.h>
#include <c10/cuda/CUDAFunctions.h>

#include <atomic>
#include <cstdio>
#include <cstring>
#include <exception>

#include "gmemprof/trace_format.h"
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
// Each ALLOC goes out with the allocator's allocated bytes as read in the
// callback, and a flush sends the reading alone; from
// their changes the profiler's writer knows every block's size as
// memory_allocated() counts it (profiler/torch.h says how).
constexpr int kMaxDevices = 64;
std::atomic<uint64_t> g_events[kMaxDevices];

uint64_t allocated_now(c10::DeviceIndex dev) {
  // the device lock: already held (recursive) in a callback, taken briefly
  // by a flush
  return static_cast<uint64_t>(
      cca::getDeviceStats(dev).allocated_bytes[static_cast<size_t>(c10::CachingAllocator::StatType::AGGREGATE)]
          .current);
}

// Runs with the allocator's device lock held: reads the entry and the
// counter, one call.
void on_trace(const TraceEntry& e) {
  const gmp_bridge_host* h = g_host.load(std::memory_order_acquire);
  if (!h) return;
  int a = action_of(e.action_);
  if (a < 0) return;
  uint64_t size = static_cast<uint64_t>(e.size_), counter = 0;
  // a free's size the writer knows from its live table: only allocations
  // need the reading
  bool sized = a == GMT_BLK_ALLOC && e.device_ >= 0 && e.device_ < kMaxDevices;
  if (sized) {
    counter = allocated_now(e.device_);
    g_events[e.device_].fetch_add(1, std::memory_order_relaxed);
  }
  h->block(nullptr, static_cast<unsigned>(a), static_cast<unsigned>(e.device_), static_cast<uint64_t>(e.addr_),
           size, a == GMT_BLK_ALLOC || a == GMT_BLK_FREE_REQUESTED ? size : 0, reinterpret_cast<uint64_t>(e.stream_), static_cast<uint64_t>(e.mempool_.first),
           sized ? GMP_BRIDGE_HAS_COUNTER : 0u, counter);
}

void bridge_flush() {
  const gmp_bridge_host* h = g_host.load(std::memory_order_acquire);
  if (!h) return;
  int n = static_cast<int>(c10::cuda::device_count());
  for (int i = 0; i < n && i < kMaxDevices; i++)
    if (g_events[i].load(std::memory_order_relaxed))
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

int bridge_attach(const gmp_bridge_host* host, char* err, size_t cap) {
  if (!host || host->abi != GMP_BRIDGE_ABI || host->size < sizeof(gmp_bridge_host)) {
    std::snprintf(err, cap, "the profiler speaks another bridge interface");
    return GMP_BRIDGE_NEVER;
  }
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

const gmp_bridge g_bridge = {
    GMP_BRIDGE_ABI, sizeof(gmp_bridge), "torch", GMP_TORCH_VERSION, "libc10_cuda.so", GMP_C10_CUDA_BUILD_ID,
    bridge_attach, bridge_detach, bridge_flush,
};

}  // namespace

extern "C" __attribute__((visibility("default"))) const gmp_bridge* gmemprof_torch_bridge(uint32_t abi) {
  return abi == GMP_BRIDGE_ABI ? &g_bridge : nullptr;
}
