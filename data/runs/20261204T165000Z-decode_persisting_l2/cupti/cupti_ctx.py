"""Kernel durations inside the bench's own context, without ncu: labkit's call beside cuDNN / flash / FA3 in the
bench's shuffled cold rounds (peers._beside_labkit, what `labkit decode bench --peers` times), traced by CUPTI
through torch.profiler (activity records: kernel start / end on the GPU, no serialization, no replay). Prints, per
call, each timed kernel's median duration beside the event-timed p50 the same rounds gave. Usage:
python3 cupti_ctx.py OUT.json MODE BxN ..."""
import json
import os
import statistics
import sys

import torch
from torch.profiler import ProfilerActivity, profile

from labkit.workloads.decode.peers import _beside_labkit

out_path, mode, pts = sys.argv[1], sys.argv[2], [tuple(map(int, p.split("x"))) for p in sys.argv[3:]]
rows = []
for b, n in pts:
    trace = f"/tmp/trace_{b}x{n}.json"
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        rates = _beside_labkit(b, n, 128, 32, 8, 64, 20, {}, mode)
    prof.export_chrome_trace(trace)
    ev = [e for e in json.load(open(trace))["traceEvents"] if e.get("cat") == "kernel"]
    os.remove(trace)
    by = {}
    for e in ev:
        by.setdefault(e["name"], []).append(float(e["dur"]))
    nbytes = 2 * b * n * 8 * 128 * 2
    print(f"== {b} x {n} d128, {mode}: event p50 us " + ", ".join(
        f"{k} {nbytes / v / 1e6:.2f}" for k, v in rates.items() if isinstance(v, float)), flush=True)
    for name, durs in sorted(by.items(), key=lambda kv: -len(kv[1])):
        if len(durs) < 10:
            continue
        med = statistics.median(durs)
        print(f"   n={len(durs):3d} median {med:9.2f} us  p10 {sorted(durs)[len(durs) // 10]:9.2f}  {name[:110]}", flush=True)
        rows.append({"batch": b, "kv_len": n, "mode": mode, "kernel": name, "n": len(durs), "median_us": med,
                     "durations_us": durs})
    rows.append({"batch": b, "kv_len": n, "mode": mode, "event_p50_us": {k: nbytes / v / 1e6 for k, v in rates.items()
                                                                         if isinstance(v, float)}})
    torch.cuda.empty_cache()
json.dump(rows, open(out_path, "w"))
