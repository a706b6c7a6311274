// profiler.unit.seqring: the PyTorch bridge's backward table
// (profiler/torch/seqring.h), torch-free. One thread's module changes over
// a forward (root, child, root, none) note each stretch of sequence numbers
// under its innermost module; numbers outside any module, the stretch a
// reset drops, another thread's same numbers, and numbers older than the
// ring's size are nobody's.
#include <cstdio>
#include <memory>

#include "check.h"
#include "seqring.h"

namespace {

int g_root, g_child, g_other;  // module tokens: only their addresses matter
const void* const kRoot = &g_root;
const void* const kChild = &g_child;
const void* const kOther = &g_other;

// find() over [from, to) is want for every number
void expect(gmp_seq::Ring* ring, int64_t from, int64_t to, uint64_t tid, const void* want, const char* what) {
  tc_context("%s", what);
  for (int64_t s = from; s < to; s++) CHECK(ring->find(s, tid) == want, " number %lld", static_cast<long long>(s));
  tc_context(nullptr);
}

}  // namespace

int main() {
  std::unique_ptr<gmp_seq::Ring> ring(new gmp_seq::Ring);
  const uint64_t a = 7, b = 8;  // two forward threads

  // thread a: the root's call begins at 0; nodes 0-4 in the root, the
  // child's call at 5-8, the root again at 9-11; the root's call ends at
  // 12; the loss's nodes 12-19 outside any module; the next forward's root
  // begins at 20
  gmp_seq::Stretch sa;
  sa.change(ring.get(), 0, a, kRoot, false);
  sa.change(ring.get(), 5, a, kChild, false);
  sa.change(ring.get(), 9, a, kRoot, false);
  sa.change(ring.get(), 12, a, nullptr, false);
  sa.change(ring.get(), 20, a, kRoot, false);
  expect(ring.get(), 0, 5, a, kRoot, "the root's own nodes");
  expect(ring.get(), 5, 9, a, kChild, "the child's nodes");
  expect(ring.get(), 9, 12, a, kRoot, "the root's after the child");
  expect(ring.get(), 12, 21, a, nullptr, "outside any module, and the open stretch");
  CHECK(ring->find(-1, a) == nullptr, "a number below 0");

  // thread b's same numbers: its own module, a's untouched
  gmp_seq::Stretch sb;
  sb.change(ring.get(), 0, b, kOther, false);
  sb.change(ring.get(), 12, b, nullptr, false);
  expect(ring.get(), 0, 12, b, kOther, "thread b's nodes");
  expect(ring.get(), 0, 5, a, kRoot, "thread a's, after b's");
  expect(ring.get(), 5, 9, a, kChild, "thread a's child, after b's");

  // a reset (the modules went out with the hooks) drops the open stretch:
  // the root's stretch from 20 is nobody's, and so is the one after it
  sa.change(ring.get(), 30, a, nullptr, true);
  sa.change(ring.get(), 35, a, kChild, false);
  sa.change(ring.get(), 40, a, nullptr, false);
  expect(ring.get(), 20, 35, a, nullptr, "the stretch a reset dropped");
  expect(ring.get(), 35, 40, a, kChild, "a module after the reset");

  // a stretch longer than the ring: its last kSize numbers are noted, the
  // older ones are lost (their slots hold newer numbers)
  const int64_t n = static_cast<int64_t>(gmp_seq::Ring::kSize), from = 100, to = 100 + n + 10;
  gmp_seq::Stretch sl;
  sl.change(ring.get(), from, b, kRoot, false);
  sl.change(ring.get(), to, b, nullptr, false);
  expect(ring.get(), from, from + 10, b, nullptr, "numbers older than the ring");
  expect(ring.get(), from + 10, to, b, kRoot, "the ring's worth of newest numbers");

  return tc_result("profiler.unit.seqring");
}
