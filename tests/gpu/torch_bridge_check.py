"""Checks a gmemprof trace of tests/gpu/torch_bridge.py against PyTorch's own
counters (tests/gpu/gpu_test.sh torch_bridge*). Every comparison is exact.

    torch_bridge_check.py COUNTERS.json SUMMARY.csv TAGS.csv [--sched] [--dump DUMP.txt --outcome FILE]

SUMMARY.csv: gmem-analyze TRACE --format csv; TAGS.csv: gmem-analyze TRACE
--by tag --format csv --top 0; DUMP.txt: gmt-dump TRACE.
  - allocated peak (# framework.dev0) = max_memory_allocated(), reserved
    peak = max_memory_reserved() (not with --sched: the trace holds the
    window alone);
  - at every tag, allocated and reserved = memory_allocated() and
    memory_reserved() read right after the mark (before_model: 0 B / 0 B);
  - --sched: the window's baseline = memory_allocated() at the mark that
    began its first step (the N-th "step" mark begins step N);
  - --dump: what the tracker reported during a CUDA graph's capture and
    replays (BLOCK records between the tags), one line into --outcome.
Prints one line per check; exit 0 when all pass.
"""
import argparse
import csv
import json
import re
import sys


def rows(path):
    with open(path) as f:
        return list(csv.DictReader(l for l in f if l.strip() and not l.startswith("#")))


def hash_lines(path):
    with open(path) as f:
        return [l.rstrip("\n") for l in f if l.startswith("#")]


def kv(line):
    return dict(re.findall(r"(\w+)=(\S*)", line))


class Checks:
    def __init__(self):
        self.failed = 0

    def eq(self, what, got, want):
        ok = got is not None and got == want
        self.failed += not ok
        print("%s %s: gmemprof %s, torch %s" % ("ok  " if ok else "FAIL", what, got, want))


def graph_outcome(dump_path):
    """BLOCK records by action and pool between the graph's tags."""
    names, phase, counts = {}, None, {}
    order = ("before_capture", "after_capture", "after_replay", "after_graph_reset", "after_graph_empty_cache")
    with open(dump_path) as f:
        for line in f:
            word = line.split(" ", 1)[0]
            if word == "string":
                m = re.match(r'string\s+id=(\d+) "(.*)"$', line.rstrip("\n"))
                if m:
                    names[m.group(1)] = m.group(2)
            elif word == "tag":
                n = names.get(kv(line).get("name"))
                if n in order:
                    phase = n
            elif word == "block" and phase in order[:-1]:
                f_ = kv(line)
                key = "%s/%s" % (f_.get("action"), "private pool" if f_.get("pool", "0") != "0" else "default pool")
                counts.setdefault(phase, {}).setdefault(key, 0)
                counts[phase][key] += 1
    label = {"before_capture": "capture", "after_capture": "5 replays", "after_replay": "graph reset",
             "after_graph_reset": "empty_cache"}
    return "; ".join("%s: %s" % (label[p], ", ".join("%s %d" % kc for kc in sorted(counts.get(p, {}).items())) or "none")
                     for p in order[:-1])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("counters")
    ap.add_argument("summary")
    ap.add_argument("tags")
    ap.add_argument("--sched", action="store_true")
    ap.add_argument("--dump")
    ap.add_argument("--outcome")
    a = ap.parse_args()
    c = json.load(open(a.counters))
    ck = Checks()
    fw = [kv(l) for l in hash_lines(a.summary) if l.startswith("# framework.dev%d:" % c["device"])]
    if not fw:
        print("FAIL no '# framework.dev%d' line: the trace has no PyTorch blocks (bridge not loaded?)" % c["device"])
        return 1
    fw = fw[0]
    if not a.sched:
        ck.eq("allocated peak = max_memory_allocated()", int(fw["allocated_peak_bytes"]), c["peak_allocated"])
        ck.eq("reserved peak = max_memory_reserved()", int(fw["reserved_peak_bytes"]), c["peak_reserved"])
    else:
        w = [kv(l) for l in hash_lines(a.summary) if l.startswith("# window.")]
        first = int(w[0]["first_step"]) if w else None
        want = c["step_marks"][first - 1] if first and first <= len(c["step_marks"]) else None
        ck.eq("window baseline (first step %s) = memory_allocated() at its mark" % first,
              int(w[0]["baseline_bytes"]) if w else None, want)
    got = {(r["name"], r["device"]): r for r in rows(a.tags)}
    for name, alloc, res in c["tags"]:
        r = got.get((name, str(c["device"])))
        ck.eq("tag %s allocated = memory_allocated()" % name, int(r["allocated_bytes"]) if r else None, alloc)
        ck.eq("tag %s reserved = memory_reserved()" % name, int(r["reserved_bytes"]) if r else None, res)
    if a.dump:
        line = "CUDA graph, BLOCK records seen: " + graph_outcome(a.dump)
        print(line)
        if a.outcome:
            with open(a.outcome, "w") as f:
                f.write("torch_bridge_graph: " + line + "\n")
    print("%d check(s) failed" % ck.failed if ck.failed else "all %d tags and the peaks equal" % len(c["tags"]))
    return 1 if ck.failed else 0


if __name__ == "__main__":
    sys.exit(main())
