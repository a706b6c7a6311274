#!/usr/bin/env python3
"""bench/tracker_split.py's side of the bridge interface, through the C
fake bridge (fake_bridge.c), on the CPU: its ctypes tables match
profiler/torch_bridge.h, the empty host receives the attach's seed and is
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
                "tracker_split small bare a 16.0 ms_per_step b 16.48 ms_per_step ratio 1.0300 allocs_per_step 700.0\n"
                "tracker_split small bare a 12.0 ms_per_step b 12.16 ms_per_step ratio 1.0133 allocs_per_step 720.0\n"
                "tracker_split small bare a 14.0 ms_per_step b 14.14 ms_per_step ratio 1.0100 allocs_per_step 710.0\n"
                "tracker_split alloc gmemprof a 2300.0 ns_per_pair b 2100.0 ns_per_pair ratio 0.9130\n"
                "tracker_split alloc bare a 2000.0 ns_per_pair b 2120.0 ns_per_pair ratio 1.0600\n"
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
    # projected: 200 ns (2300 - 2100) x 710 allocations / 14 ms = 1.01 points;
    # PyTorch's 120 ns (2120 - 2000) x 710 / 14 ms = 0.61
    check("| small | gmemprof's | 200.0 | 710 | 14.000 | +1.01 |" in text, "projected gmemprof row:\n" + text)
    check("| small | PyTorch's | 120.0 | 710 | 14.000 | +0.61 |" in text, "projected PyTorch row:\n" + text)
    print("tracker_split: %d failure(s)" % fails)
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
