#!/usr/bin/env python3
"""bench/tracker_split.py's side of the bridge interface, through the C
fake bridge (fake_bridge.c), on the CPU: its ctypes tables match
profiler/sources/torch_bridge.h, the empty host receives the attach's seed and is
detached, a loaded bridge is found by its file name, and the summary's
points are the ones worked out by hand.

    test_tracker_split.py FAKE_BRIDGE FAKE_C10 WORKDIR
"""
import ctypes
import os
import shutil
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "bench"))
import tracker_split as ts  # noqa: E402

fails = 0


def check(cond, what):
    global fails
    if not cond:
        fails += 1
        print("FAIL: %s" % what)


def main():
    bridge, c10, work = sys.argv[1:4]
    os.makedirs(work, exist_ok=True)
    ctypes.CDLL(c10, mode=ctypes.RTLD_GLOBAL)

    # the tables: the fake fills gmp_bridge with sizeof(gmp_bridge) and its strings
    lib, br = ts.bridge_table(bridge)
    check(br.abi == ts.bridge_abi(), "abi %d, header %d" % (br.abi, ts.bridge_abi()))
    check(br.size == ctypes.sizeof(ts.Bridge), "gmp_bridge is %d bytes, the script's Bridge %d"
          % (br.size, ctypes.sizeof(ts.Bridge)))
    check(br.framework == b"torch" and br.library == b"libc10_cuda.so",
          "strings read through Bridge: %r %r" % (br.framework, br.library))

    # attach_empty: fake_attach seeds a segment and two blocks through host->block
    seen = []
    ts.attach_empty(bridge, lambda *a: seen.append((a[1], a[3], a[4])))
    check(len(seen) == 3, "seed calls through the empty host: %d, want 3" % len(seen))
    check([s[0] for s in seen] == [3, 0, 0],
          "seed actions %s, want SEGMENT_ALLOC (3), ALLOC (0), ALLOC (0)" % [s[0] for s in seen])
    host = lib.fake_bridge_host
    host.restype = ctypes.c_void_p
    check(host() is None, "the host is still attached after attach_empty")
    event = lib.fake_bridge_event
    event.restype = ctypes.c_int
    check(event(1, 0, 4096, 512, 0, 0) == -1, "an event reached a host after the detach")

    # a loaded bridge is found by its name in /proc/self/maps
    check(ts.loaded_bridge() is None, "a bridge found before one named libgmemprof_torch.so was loaded")
    named = os.path.join(work, "libgmemprof_torch.so")
    shutil.copyfile(bridge, named)
    ctypes.CDLL(named)
    found = ts.loaded_bridge()
    check(found is not None and os.path.samefile(found, named), "loaded bridge %r, want %s" % (found, named))

    # summary: gmemprof 0.8 -> +25.00 points; bare 1.03, 1.0133 and 1.01 -> median +1.33
    lines = os.path.join(work, "split.txt")
    with open(lines, "w") as f:
        f.write("tracker_split small gmemprof a 20.0 ms_per_step b 16.0 ms_per_step ratio 0.8000\n"
                "tracker_split small bare a 16.0 ms_per_step b 16.48 ms_per_step ratio 1.0300"
                " allocs_per_step 700.0 large_per_step 200.0\n"
                "tracker_split small bare a 12.0 ms_per_step b 12.16 ms_per_step ratio 1.0133"
                " allocs_per_step 720.0 large_per_step 220.0\n"
                "tracker_split small bare a 14.0 ms_per_step b 14.14 ms_per_step ratio 1.0100"
                " allocs_per_step 710.0 large_per_step 210.0\n"
                "tracker_split medium bare a 100.0 ms_per_step b 101.0 ms_per_step ratio 1.0100"
                " allocs_per_step 1000.0\n"
                "tracker_split alloc gmemprof a 2300.0 ns_per_pair b 2100.0 ns_per_pair ratio 0.9130\n"
                "tracker_split alloc bare a 2000.0 ns_per_pair b 2120.0 ns_per_pair ratio 1.0600\n"
                "tracker_split alloc-large gmemprof a 2600.0 ns_per_pair b 2200.0 ns_per_pair ratio 0.8462\n"
                "tracker_split alloc-large bare a 2000.0 ns_per_pair b 2180.0 ns_per_pair ratio 1.0900\n"
                "# gmemprof-control small failed: no line\n")
    out = os.path.join(work, "split.md")
    with open(out, "w") as f:
        old, sys.stdout = sys.stdout, f
        try:
            rc = ts.summary(lines)
        finally:
            sys.stdout = old
    text = open(out).read()
    check(rc == 0, "summary rc %d" % rc)
    check("| small | gmemprof | gmemprof's share (A/B - 1) | +25.00 | +25.00 .. +25.00 | 1 |" in text,
          "gmemprof row:\n" + text)
    check("| small | bare | PyTorch's tracker share (B/A - 1) | +1.33 | +1.00 .. +3.00 | 3 |" in text,
          "bare row:\n" + text)
    check("| alloc-large | gmemprof | gmemprof's share (A/B - 1) | +18.18 | +18.18 .. +18.18 | 1 |" in text,
          "alloc-large row (2600 / 2200 - 1):\n" + text)
    # small, pools apart: gmemprof 200 ns (2300 - 2100) x (710 - 210) small-pool allocations
    # + 400 ns (2600 - 2200) x 210 large-pool ones = 184,000 ns per 14 ms step = 1.31 points;
    # PyTorch's 120 ns x 500 + 180 ns x 210 = 97,800 ns = 0.70
    check("| small | gmemprof's | 200.0 | 400.0 | 710 | 210 | 14.000 | +1.31 |" in text,
          "projected gmemprof row:\n" + text)
    check("| small | PyTorch's | 120.0 | 180.0 | 710 | 210 | 14.000 | +0.70 |" in text,
          "projected PyTorch row:\n" + text)
    # both: (320 x 500 + 580 x 210) ns / 14 ms = 2.01 points; medium 320 x 1000 / 100 ms = 0.32
    check("| small | both (the bridge against none) | 320.0 | 580.0 | 710 | 210 | 14.000 | +2.01 |" in text,
          "projected small total row:\n" + text)
    check("| medium | both (the bridge against none) | 320.0 | n/a | 1000 | n/a | 100.000 | +0.32 |" in text,
          "projected medium total row:\n" + text)
    # medium has no large-pool count: every allocation at the small pool's price,
    # 200 ns x 1000 / 100 ms = 0.20 points, PyTorch's 120 ns x 1000 = 0.12
    check("| medium | gmemprof's | 200.0 | n/a | 1000 | n/a | 100.000 | +0.20 |" in text,
          "projected medium gmemprof row:\n" + text)
    check("| medium | PyTorch's | 120.0 | n/a | 1000 | n/a | 100.000 | +0.12 |" in text,
          "projected medium PyTorch row:\n" + text)
    try:
        ts.parse_args(["alloc-large", "--numel", "262144"])
        check(False, "alloc-large accepted a 1 MiB tensor, which is PyTorch's small pool")
    except SystemExit:
        pass
    check(ts.parse_args(["alloc-large"]).numel == 1 << 20 and ts.parse_args(["alloc"]).numel == 4096,
          "default --numel: alloc-large 1048576, alloc 4096")
    print("tracker_split: %d failure(s)" % fails)
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
