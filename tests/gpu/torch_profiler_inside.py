"""torch.profiler started inside a gmemprof run (tests/gpu/gpu_test.sh torch_profiler_inside).

Three phases of the same deterministic step (exact integer sums, as in
torch_steps.py), each step ending with torch.cuda.nvtx.mark("step"):

  1. --warm-steps steps with CUDA already started (so that a profiler injected
     with CUDA_INJECTION64_PATH subscribed to CUPTI first);
  2. --prof-steps steps inside torch.profiler.profile(activities=[CPU, CUDA]),
     prof.step() after each: Kineto tries to subscribe to CUPTI now;
  3. --after-steps steps after the profiler stopped (a profiler whose
     activity buffers were taken over would record no kernels here).

stdout holds only deterministic lines (the same with and without gmemprof);
what torch.profiler got (CUDA and CPU events, or the error it raised) goes
to the --report JSON file, never to stdout. Exits --exit-code (default 0).

    python3 torch_profiler_inside.py [--warm-steps 3] [--prof-steps 3] [--after-steps 3]
                                     [--size 256] [--report FILE] [--exit-code 0]
"""
import argparse
import json
import sys


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--warm-steps", type=int, default=3)
    ap.add_argument("--prof-steps", type=int, default=3)
    ap.add_argument("--after-steps", type=int, default=3)
    ap.add_argument("--size", type=int, default=256)
    ap.add_argument("--report", default="", help="JSON file: what torch.profiler recorded")
    ap.add_argument("--exit-code", type=int, default=0)
    ap.add_argument("--device", default="cuda", help="cpu: a dry run of the logic")
    args = ap.parse_args()

    import torch
    from torch.profiler import ProfilerActivity, profile

    dev = torch.device(args.device)
    if dev.type == "cuda":
        torch.cuda.init()
        mark = torch.cuda.nvtx.mark
        sync = torch.cuda.synchronize
        activities = [ProfilerActivity.CPU, ProfilerActivity.CUDA]
    else:
        mark = sync = lambda *a: None
        activities = [ProfilerActivity.CPU]
    gen = torch.Generator(device=dev)
    gen.manual_seed(4321)
    n = args.size

    def ints(rows, cols):
        return torch.randint(-3, 4, (rows, cols), device=dev, generator=gen).to(torch.float32)

    weight = ints(n, n)
    sync()
    step_no = [0]

    def step(phase):
        i = step_no[0]
        x = ints(n, n)
        y = x @ weight
        z = torch.relu(y) - torch.relu(-y)  # == y
        total = int(z.to(torch.int64).sum().item())
        absum = int(z.abs().to(torch.int64).sum().item())
        print(f"{phase} step {i} sum {total} abs {absum}")
        mark("step")
        step_no[0] += 1

    for _ in range(args.warm_steps):
        step("warm")
    sync()

    report = {"activities": [str(a) for a in activities]}
    try:
        with profile(activities=activities) as prof:
            for _ in range(args.prof_steps):
                step("profiled")
                prof.step()
            sync()
        events = list(prof.events())
        report["cuda_events"] = sum(1 for e in events if e.device_type == torch.autograd.DeviceType.CUDA)
        report["cpu_events"] = sum(1 for e in events if e.device_type == torch.autograd.DeviceType.CPU)
    except Exception as e:  # what happened, for the test log; the program goes on
        report["error"] = "%s: %s" % (type(e).__name__, e)
    sys.stdout.flush()

    for _ in range(args.after_steps):
        step("after")
    sync()
    print(f"done {step_no[0]} steps")
    sys.stdout.flush()
    if args.report:
        with open(args.report, "w") as f:
            json.dump(report, f, indent=1, sort_keys=True)
            f.write("\n")
    return args.exit_code


if __name__ == "__main__":
    sys.exit(main())
