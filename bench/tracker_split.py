#!/usr/bin/env python3
"""The price of following PyTorch's caching allocator, split in one process
into PyTorch's share and gmemprof's share (bench/split_bench.sh runs it).

    python3 bench/tracker_split.py alloc|alloc-large|small|medium [--control] [--bridge PATH]
        [--rounds N] [--pairs N] [--numel N] [--warmup N] [--steps N]
    python3 bench/tracker_split.py summary FILE

Every allocator event with a trace tracker attached costs PyTorch a
TraceEntry and a call through std::function, then costs the tracker what
it does. Between two processes this host's noise (5-20%) hides a 1-point
difference, so each process measures two phases, A then B, and prints B/A:

  - Under gmemprof, with the PyTorch bridge attached (it is loaded in the
    process): A is the bridge forwarding every event to libgmemprof.so;
    then the bridge is detached, so its tracker returns at its first check;
    B is PyTorch's tracker machinery alone. A/B - 1 is gmemprof's share.
  - Without the bridge loaded (no gmemprof, or GMEMPROF_TORCH=0): A is the
    allocator without a tracker; then the bridge (--bridge, default
    $GM_BUILD_DIR/lib/libgmemprof_torch.so) is attached to an empty host
    table and detached at once; B is the same tracker machinery. B/A - 1 is
    PyTorch's share, the floor under any tracker.
  - --control: no switch between A and B: B/A is the drift of a process
    over the same phases, the noise to read the others against.

Workloads: alloc, torch.empty(NUMEL) + del on the GPU, best of ROUNDS
medians of PAIRS pairs per phase (ns per pair), NUMEL 4096 floats (16 KiB,
PyTorch's small pool) by default; alloc-large the same with 1,048,576
floats (4 MiB, the large pool, where the bridge also reads the
allocator's counter: profiler/torch/bridge.cpp); small and medium, the
GPT loops of bench/workload.py, WARMUP steps then STEPS timed steps per
phase, each between two torch.cuda.synchronize() (median ms per step).
Prints one line on stderr:
  tracker_split WORKLOAD ROLE a UNIT b UNIT ratio B/A [allocs_per_step N large_per_step M]
ROLE: gmemprof, bare, gmemprof-control or bare-control; a GPT loop adds
its tensor allocations per step, all and from the large pool (PyTorch's
own counts over phase A).
`summary` reads such lines from FILE and prints, per workload and role,
the median share in points of the step or pair ((A/B - 1) x 100 for
gmemprof's share, (B/A - 1) x 100 for PyTorch's and for the controls'
drift) with its range. With alloc lines and a GPT loop's, it also
projects each share onto that loop: ns per alloc+free (the alloc
workload's median A - B or B - A) x allocations per step / the loop's
step time (bare phase A): points too small for the loop's own noise to
show, from a measurement that is not. With alloc-large lines too, the
loop's large-pool allocations are priced at alloc-large's ns and the rest
at alloc's. With both shares, a last row adds them: the bridge against
no tracker at all.
"""
import argparse
import ctypes
import os
import re
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
from torch_alloc_cost import pair_rounds  # noqa: E402


# The bridge interface that Host and Bridge below spell out.
LAYOUT_ABI = 3


def bridge_abi():
    """GMP_BRIDGE_ABI as profiler/sources/torch_bridge.h defines it, which must be
    the one the tables below were written for."""
    with open(os.path.join(ROOT, "profiler", "sources", "torch_bridge.h")) as f:
        m = re.search(r"#define GMP_BRIDGE_ABI (\d+)u", f.read())
    if not m:
        sys.exit("tracker_split: GMP_BRIDGE_ABI not found in profiler/sources/torch_bridge.h")
    if int(m.group(1)) != LAYOUT_ABI:
        sys.exit("tracker_split: profiler/sources/torch_bridge.h is at bridge ABI %s, this script's tables at %d: "
                 "update Host, Bridge and LAYOUT_ABI" % (m.group(1), LAYOUT_ABI))
    return LAYOUT_ABI


# The C tables of profiler/sources/torch_bridge.h, as far as this script calls them.
BLOCK_FN = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_uint, ctypes.c_uint, ctypes.c_uint64, ctypes.c_uint64,
                            ctypes.c_uint64, ctypes.c_uint64, ctypes.c_uint64, ctypes.c_uint, ctypes.c_uint64)
ATTACH_FN = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_char_p, ctypes.c_size_t)
DETACH_FN = ctypes.CFUNCTYPE(None)


class Host(ctypes.Structure):
    _fields_ = [("abi", ctypes.c_uint32), ("size", ctypes.c_uint32), ("origin", ctypes.c_void_p),
                ("block", BLOCK_FN), ("log", ctypes.c_void_p), ("op_begin", ctypes.c_void_p),
                ("op_end", ctypes.c_void_p), ("optimizer_step", ctypes.c_void_p),
                ("range_begin", ctypes.c_void_p), ("range_end", ctypes.c_void_p), ("intern", ctypes.c_void_p),
                ("block_at", ctypes.c_void_p)]


class Bridge(ctypes.Structure):
    _fields_ = [("abi", ctypes.c_uint32), ("size", ctypes.c_uint32), ("framework", ctypes.c_char_p),
                ("version", ctypes.c_char_p), ("library", ctypes.c_char_p), ("build_id", ctypes.c_char_p),
                ("attach", ATTACH_FN), ("detach", DETACH_FN), ("flush", ctypes.c_void_p),
                ("watch", ctypes.c_void_p)]


def loaded_bridge():
    """The path of libgmemprof_torch.so when gmemprof loaded it, else None."""
    with open("/proc/self/maps") as f:
        for line in f:
            if line.rstrip().endswith("/libgmemprof_torch.so"):
                return line.split(None, 5)[5].strip()
    return None


def bridge_table(path):
    lib = ctypes.CDLL(path)
    entry = lib.gmemprof_torch_bridge
    entry.restype = ctypes.POINTER(Bridge)
    entry.argtypes = [ctypes.c_uint32]
    table = entry(bridge_abi())
    if not table:
        sys.exit("tracker_split: %s speaks another bridge interface than profiler/sources/torch_bridge.h" % path)
    return lib, table.contents


KEEP = []  # the empty host and its callback live as long as the tracker


def attach_empty(path, on_block=None):
    """Attaches the bridge's tracker to a host whose block() does nothing
    (or calls on_block), then detaches it: from then on every allocator
    event builds PyTorch's TraceEntry and calls the tracker, which returns
    at once."""
    lib, br = bridge_table(path)
    # called only for the snapshot's blocks, before the detach
    block = BLOCK_FN(on_block or (lambda *a: None))
    host = Host(bridge_abi(), ctypes.sizeof(Host), None, block, None, None, None, None)
    KEEP.extend([lib, block, host])
    err = ctypes.create_string_buffer(256)
    rc = br.attach(ctypes.addressof(host), err, len(err))
    if rc != 0:
        sys.exit("tracker_split: the bridge did not attach (%d): %s" % (rc, err.value.decode(errors="replace")))
    br.detach()


def detach(path):
    lib, br = bridge_table(path)
    KEEP.append(lib)
    br.detach()


SMALL_POOL_MAX = 1 << 20  # c10's kSmallSize: a larger request comes from the large pool
LARGE_NUMEL = 1 << 20     # 4 MiB of floats


def parse_args(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("workload", choices=("alloc", "alloc-large", "small", "medium", "summary"))
    ap.add_argument("input", nargs="?", help="summary: the file of tracker_split lines")
    ap.add_argument("--control", action="store_true", help="no switch between the phases (drift)")
    ap.add_argument("--bridge", default=os.path.join(os.environ.get("GM_BUILD_DIR", os.path.join(ROOT, "build-gpu")),
                                                     "lib", "libgmemprof_torch.so"))
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--pairs", type=int, default=100000)
    ap.add_argument("--numel", type=int, default=None,
                    help="floats per tensor: alloc 4096 (small pool), alloc-large 1048576 (large pool)")
    ap.add_argument("--warmup", type=int, default=20)
    ap.add_argument("--steps", type=int, default=60)
    args = ap.parse_args(argv)
    if (args.workload == "summary") != (args.input is not None):
        ap.error("FILE goes with summary, and only with it")
    if args.numel is None:
        args.numel = LARGE_NUMEL if args.workload == "alloc-large" else 4096
    if min(args.rounds, args.pairs, args.numel, args.warmup, args.steps) < 1:
        ap.error("--rounds, --pairs, --numel, --warmup and --steps must be >= 1")
    if args.workload == "alloc-large" and args.numel * 4 <= SMALL_POOL_MAX:
        ap.error("alloc-large: --numel %d is %d bytes, PyTorch's small pool (at most %d): give more than %d"
                 % (args.numel, args.numel * 4, SMALL_POOL_MAX, SMALL_POOL_MAX // 4))
    return args


def summary(path):
    """Shares in points per (workload, role), from the lines of FILE, and
    the alloc workloads' shares projected onto the GPT loops."""
    shares, ns, allocs, large, step_ms = {}, {}, {}, {}, {}
    with open(path) as f:
        for line in f:
            w = line.split()
            if len(w) not in (11, 13, 15) or w[0] != "tracker_split":
                continue
            wl, role, a, b, ratio = w[1], w[2], float(w[4]), float(w[7]), float(w[10])
            pts = (1.0 / ratio - 1.0) * 100.0 if role == "gmemprof" else (ratio - 1.0) * 100.0
            shares.setdefault((wl, role), []).append(pts)
            if wl in ("alloc", "alloc-large") and role in ("gmemprof", "bare"):
                ns.setdefault((wl, role), []).append(a - b if role == "gmemprof" else b - a)
            if len(w) >= 13 and not wl.startswith("alloc"):
                allocs.setdefault(wl, []).append(float(w[12]))
                if len(w) == 15:
                    large.setdefault(wl, []).append(float(w[14]))
                if role == "bare":
                    step_ms.setdefault(wl, []).append(a)
    what = {"gmemprof": "gmemprof's share (A/B - 1)", "bare": "PyTorch's tracker share (B/A - 1)",
            "gmemprof-control": "drift under gmemprof (B/A - 1)", "bare-control": "drift, bare (B/A - 1)"}
    print("| workload | role | what | points, median | range | processes |")
    print("|---|---|---|---|---|---|")
    for (wl, role), pts in sorted(shares.items()):
        print("| %s | %s | %s | %+.2f | %+.2f .. %+.2f | %d |"
              % (wl, role, what.get(role, role), statistics.median(pts), min(pts), max(pts), len(pts)))
    roles = [role for role in ("bare", "gmemprof") if ("alloc", role) in ns]
    if roles and step_ms:
        print()
        print("| loop | share | ns per alloc+free, small pool (alloc) | large pool (alloc-large) "
              "| allocations per step | of them large | step, ms (bare A) | points, projected |")
        print("|---|---|---|---|---|---|---|---|")
        for wl in sorted(step_ms):
            k, ms = statistics.median(allocs[wl]), statistics.median(step_ms[wl])
            # the large pool priced apart only where its ns and its count were measured for every role
            split = wl in large and all(("alloc-large", role) in ns for role in roles)
            kl = statistics.median(large[wl]) if split else 0.0
            priced = []  # (share, ns small pool, ns large pool)
            for role in roles:
                n = statistics.median(ns[("alloc", role)])
                nl = statistics.median(ns[("alloc-large", role)]) if split else n
                priced.append(("PyTorch's" if role == "bare" else "gmemprof's", n, nl))
            if len(priced) == 2:
                priced.append(("both (the bridge against none)", priced[0][1] + priced[1][1],
                               priced[0][2] + priced[1][2]))
            for name, n, nl in priced:
                cost = n * (k - kl) + nl * kl
                print("| %s | %s | %.1f | %s | %.0f | %s | %.3f | %+.2f |"
                      % (wl, name, n, "%.1f" % nl if split else "n/a", k, "%.0f" % kl if split else "n/a", ms,
                         cost / (ms * 1e6) * 100.0))
    return 0 if shares else 1


def main(argv=None):
    args = parse_args(argv)
    if args.workload == "summary":
        return summary(args.input)
    import torch

    if args.workload.startswith("alloc"):
        torch.cuda.init()
        torch.empty(1024, device="cuda")  # the allocator is initialized: the bridge may attach
        unit = "ns_per_pair"

        def phase():
            return min(pair_rounds(torch, args.pairs, args.rounds, args.numel))
    else:
        from workload import build_loop

        _, step = build_loop(args.workload, 0)
        count = [0]
        unit = "ms_per_step"

        def run(n):
            times = []
            for _ in range(n):
                torch.cuda.synchronize()
                t0 = time.perf_counter()
                step(count[0])
                torch.cuda.synchronize()
                times.append(time.perf_counter() - t0)
                torch.cuda.nvtx.mark("step")  # as bench/workload.py: gmemprof's steps
                count[0] += 1
            return times

        def phase():
            run(args.warmup)
            return statistics.median(run(args.steps)) * 1000.0

        def allocations():
            st = torch.cuda.memory_stats()
            return st.get("allocation.all.allocated", 0), st.get("allocation.large_pool.allocated", 0)

    # gmemprof attaches its bridge at the first CUDA context, or at the
    # first step once PyTorch's allocator is initialized: make one, then look
    torch.cuda.nvtx.mark("step")
    loaded = loaded_bridge()
    role = "gmemprof" if loaded else "bare"
    if not loaded and not args.control and not os.path.exists(args.bridge):
        sys.exit("tracker_split: no bridge at %s: build with -DGMEMPROF_TORCH=ON or pass --bridge" % args.bridge)
    looped = not args.workload.startswith("alloc")
    made = allocations() if looped else None
    a = phase()
    per_step = ""
    if looped:
        now, steps = allocations(), float(args.warmup + args.steps)
        per_step = " allocs_per_step %.1f large_per_step %.1f" % ((now[0] - made[0]) / steps,
                                                                 (now[1] - made[1]) / steps)
    if args.control:
        role += "-control"
    elif loaded:
        detach(loaded)
    else:
        attach_empty(args.bridge)
    b = phase()
    print("tracker_split %s %s a %.4f %s b %.4f %s ratio %.4f%s"
          % (args.workload, role, a, unit, b, unit, b / a, per_step), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
