"""The split heuristic at the bench's head_dim 256 points whose plan now runs persistent CTAs: every power-of-two
split count (cold, p50) against the plan's call."""
import json, os
from labkit.workloads.decode.bench import split_sweep

out = {}
for b, n in [(64, 1024), (256, 1024)]:
    rows = split_sweep(b, n, 256, iterations=20)
    best = min(r["p50_us"] for r in rows)
    for r in rows:
        print(f"{b}x{n} d256 splits {r['splits']:3d} {'plan ' if r.get('heuristic') else '     '}{r['kernel']:22s} "
              f"{r['p50_us']:8.2f} us {r['TBps']:.3f} TB/s {r['p50_us'] / best - 1:+.1%}", flush=True)
    out[f"{b}x{n}_d256"] = rows
json.dump(out, open(os.path.join(os.environ["R"], "split_pers.json"), "w"), indent=1, default=str)
