"""The split heuristic at the decode bench's head_dim 256 points with the warp-pair build: each power-of-two split
count (up to one per page; up to 16 for calls over 1 GB) and the plan's own choice, cold, p50 of 10."""
import json, os, time
from labkit.workloads.decode.bench import SWEEP, MAX_KV_BYTES, bench_point
from labkit.workloads.decode.plan import plan_for_device
from labkit.workloads.decode.run import geometry_for
out = os.environ.get("OUT", "/tmp")
res, t0 = {"sweeps": {}}, time.time()
for b, n, d in [p for p in SWEEP if p[2] == 256]:
    nbytes = 2 * b * n * 8 * d * 2
    if nbytes > MAX_KV_BYTES:
        continue
    g = geometry_for(b, n, head_dim=d)
    pick = plan_for_device(g).splits
    top = min(g.max_pages, 256, 16 if nbytes > 1e9 else 256)
    counts = sorted({2 ** i for i in range(9) if 2 ** i <= top} | {pick})
    rows = []
    for s in counts:
        r = bench_point(b, n, d, splits=None if s == pick else s, iterations=10)
        r["heuristic"] = s == pick
        rows.append(r)
    best = min(r["p50_us"] for r in rows)
    h = next(r for r in rows if r["heuristic"])
    key = f"{b}x{n} d{d}"
    res["sweeps"][key] = rows
    print(f"{key:16s} heuristic {h['splits']:3d} splits {h['p50_us']:9.2f} us = {h['p50_us'] / best - 1:+6.1%} of the best "
          f"({min(rows, key=lambda r: r['p50_us'])['splits']} splits {best:.2f} us, {h['kernel']})  [{time.time() - t0:.0f} s]",
          flush=True)
    json.dump(res, open(f"{out}/split_d256.json", "w"), indent=1)
