"""The split heuristic at the two points whose plan changed (8 x 8k and 8 x 32k d128): every count of the bench's
sweep (each with its default build) against the plan's own call, cold p50, 20 samples each."""
import json, os
from labkit.workloads.decode.bench import split_sweep

out = {}
for n in (8192, 32768):
    rows = split_sweep(8, n, 128, iterations=20)
    best = min(r["p50_us"] for r in rows)
    pick = next(r for r in rows if r["heuristic"])
    for r in rows:
        print(f"8x{n} d128 splits {r['splits']:3d} {r['kernel']:16s} p50 {r['p50_us']:8.2f} us {r['TBps']:.3f} TB/s"
              f"{'  <- plan' if r['heuristic'] else ''}", flush=True)
    print(f"8x{n} d128: the plan at {pick['p50_us'] / best - 1:+.2%} of the best count", flush=True)
    out[f"8x{n}_d128"] = rows
json.dump(out, open(os.path.join(os.environ["R"], "split_b8.json"), "w"), indent=1)
