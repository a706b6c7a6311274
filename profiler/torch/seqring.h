// The backward table of the PyTorch bridge (bridge.cpp): which module's
// forward made the autograd node of a given sequence number. Torch-free, so
// that its logic is tested on any machine (tests/profiler/test_seqring.cpp).
//
// Autograd names a node by a sequence number that grows per forward
// thread. The numbers taken on a thread between two changes of its
// innermost module (a module call begins or ends) belong to the innermost
// module of that stretch: at each change the stretch just ended notes its
// module under each of its numbers. Nothing runs per forward op; a store
// per node, at the change after it. The ring is a fixed array indexed by
// number and thread: no allocation, and numbers further apart than its
// size (one forward pass of over kSize nodes) lose the oldest. A slot
// holds its number and thread, so a lookup never takes another node's
// note for its own.
#ifndef GMEMPROF_PROFILER_TORCH_SEQRING_H
#define GMEMPROF_PROFILER_TORCH_SEQRING_H

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace gmp_seq {

struct Ring {
  static constexpr size_t kSize = size_t{1} << 16;
  struct Note {
    std::atomic<int64_t> seq{-1};
    std::atomic<uint64_t> tid{0};
    std::atomic<const void*> module{nullptr};
  };
  Note slots[kSize];

  Note& slot(int64_t s, uint64_t tid) {
    return slots[(static_cast<uint64_t>(s) + tid * 0x9E3779B97F4A7C15ull) & (kSize - 1)];
  }

  // Numbers [from, to) of thread tid belong to module (the last kSize of
  // them, when more).
  void note(int64_t from, int64_t to, uint64_t tid, const void* module) {
    if (to - from > static_cast<int64_t>(kSize)) from = to - static_cast<int64_t>(kSize);
    for (int64_t s = from; s < to; s++) {
      Note& n = slot(s, tid);
      n.seq.store(s, std::memory_order_relaxed);
      n.tid.store(tid, std::memory_order_relaxed);
      n.module.store(module, std::memory_order_relaxed);
    }
  }

  // The module noted for number s of thread tid, nullptr: none (or lost).
  const void* find(int64_t s, uint64_t tid) {
    if (s < 0) return nullptr;
    const Note& n = slot(s, tid);
    const void* m = n.module.load(std::memory_order_relaxed);
    if (!m || n.seq.load(std::memory_order_relaxed) != s || n.tid.load(std::memory_order_relaxed) != tid)
      return nullptr;
    return m;
  }
};

// One thread's stretch: its first number and its module.
struct Stretch {
  int64_t from = -1;
  const void* module = nullptr;

  // The innermost module is now innermost (nullptr: none) and the next
  // number is now: the stretch that ends goes into ring. reset: the
  // thread's modules were dropped, and the stretch that ends belongs to
  // none of them.
  void change(Ring* ring, int64_t now, uint64_t tid, const void* innermost, bool reset) {
    if (!reset && module && from >= 0 && now > from) ring->note(from, now, tid, module);
    from = now;
    module = reset ? nullptr : innermost;
  }
};

}  // namespace gmp_seq

#endif
