"""Builds and split counts at the points where a peer led in the last bench: 64 x 1k d256 (flash 3.80 vs 3.66),
64 x 1k d128 (cuDNN 3.51 vs 3.41), 8 x 8k d128 (cuDNN 3.46 vs 3.35): interleaved, 3 rounds, cold p50."""
import json, os, time
from labkit.workloads.decode.bench import bench_point
out = os.environ.get("OUT", "/tmp")
CASES_T = [
    (64, 1024, 256, [("plan", {}), ("x2", dict(splits=2)), ("s1c1", dict(stages=1, qk_chains=1)),
                     ("x2 s1c1", dict(splits=2, stages=1, qk_chains=1)), ("x4 s1c1", dict(splits=4, stages=1, qk_chains=1)),
                     ("w8 s1", dict(warps=8, stages=1)), ("k32 s1", dict(keys_per_warp=32, stages=1)), ("s2", dict(stages=2))]),
    (64, 1024, 128, [("plan", {}), ("x2", dict(splits=2)), ("s2", dict(stages=2)), ("x2 s2", dict(splits=2, stages=2)),
                     ("w8 s1", dict(warps=8, stages=1)), ("k32 s1", dict(keys_per_warp=32, stages=1)),
                     ("s1c2", dict(stages=1, qk_chains=2))]),
    (8, 8192, 128, [("plan", {}), ("x2", dict(splits=2)), ("w8 s2 x2", dict(warps=8, stages=2, splits=2)),
                    ("k32 s2 x2", dict(keys_per_warp=32, stages=2, splits=2)), ("s4 x2", dict(stages=4, splits=2)),
                    ("w8 s1 x4", dict(warps=8, stages=1, splits=4))]),
]
rows, t0 = [], time.time()
for rnd in range(3):
    for (b, n, d, vs) in CASES_T:
        vs = vs[rnd % len(vs):] + vs[:rnd % len(vs)]
        for label, ov in vs:
            try:
                r = bench_point(b, n, d, **ov)
            except Exception as ex:  # noqa
                print("FAIL", b, n, d, label, repr(ex)[:200], flush=True); continue
            r.update(round=rnd, label=label)
            rows.append(r)
            print(f"r{rnd} {b:3d}x{n:6d} d{d} {label:9s} {r['kernel']:16s} x{r['splits']:3d} {r['p50_us']:8.2f} us {r['TBps']:5.3f} TB/s", flush=True)
    json.dump(rows, open(f"{out}/decode_ab8.json", "w"), indent=1)
import pandas as pd
df = pd.DataFrame(rows)
pd.set_option("display.width", 250)
print(df.groupby(["batch", "kv_len", "head_dim", "label"])[["p50_us", "TBps"]].median().round(3).to_string())
