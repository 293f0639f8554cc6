"""A/B of the cluster split reduction (CLUSTER_SPLITS: a unit's splits combine in distributed shared memory)
against the global one (partials, fence, counter, last CTA) at the same builds and split counts, interleaved
per shape, 3 rounds; plus the plan's own choice. Phase traces (DECODE_PHASES) of the seed-sized call."""
import json, os, time
import labkit.workloads.decode.geometry as geo
from labkit.workloads.decode.bench import bench_point

out = os.environ.get("OUT", "/tmp")
SEED = dict(heads_q=24, heads_kv=4)
CASES = [  # (batch, kv_len, head_dim, mode, extra, [(label, overrides)])
    (2, 704, 256, "graph", SEED, [("plan", {}), ("w8s1x8", dict(warps=8, stages=1, splits=8)),
                                  ("w8s1x8 cl", dict(warps=8, stages=1, splits=8, cluster=True)),
                                  ("w4s2x8 cl", dict(splits=8, cluster=True)),
                                  ("w4s1x8 cl", dict(stages=1, splits=8, cluster=True))]),
    (2, 704, 256, "cold", SEED, [("plan", {}), ("w8s1x8", dict(warps=8, stages=1, splits=8)),
                                 ("w8s1x8 cl", dict(warps=8, stages=1, splits=8, cluster=True)),
                                 ("w4s2x8 cl", dict(splits=8, cluster=True))]),
    (1, 8192, 128, "cold", {}, [("plan", {}), ("x8", dict(splits=8)), ("x8 cl", dict(splits=8, cluster=True))]),
    (1, 8192, 128, "graph", {}, [("plan", {}), ("x8", dict(splits=8)), ("x8 cl", dict(splits=8, cluster=True))]),
    (1, 1024, 128, "cold", {}, [("plan", {}), ("x8", dict(splits=8)), ("x8 cl", dict(splits=8, cluster=True))]),
    (8, 1024, 128, "cold", {}, [("plan", {}), ("plan cl", dict(cluster=True))]),
    (8, 1024, 256, "cold", {}, [("plan", {}), ("plan cl", dict(cluster=True))]),
    (8, 8192, 128, "cold", {}, [("plan", {}), ("plan cl", dict(cluster=True))]),
    (8, 32768, 256, "cold", {}, [("plan", {}), ("plan cl", dict(cluster=True))]),
    (1, 32768, 128, "cold", {}, [("plan", {}), ("x8", dict(splits=8)), ("x8 cl", dict(splits=8, cluster=True))]),
    (1, 8192, 256, "cold", {}, [("plan", {}), ("x8", dict(splits=8)), ("x8 cl", dict(splits=8, cluster=True))]),
]
rows = []
t0 = time.time()
for rnd in range(3):
    for (b, n, d, mode, extra, vs) in CASES:
        vs = vs[rnd % len(vs):] + vs[:rnd % len(vs)]
        for label, ov in vs:
            r = bench_point(b, n, d, mode=mode, **extra, **ov)
            r.update(round=rnd, label=label)
            rows.append(r)
            print(f"r{rnd} {b:3d}x{n:6d} d{d} {mode:5s} {label:10s} {r['kernel']:14s} x{r['splits']:3d} "
                  f"{r['p50_us']:9.2f} us {r['TBps']:5.2f} TB/s", flush=True)
    print("elapsed", round(time.time() - t0), flush=True)
json.dump(rows, open(f"{out}/decode_cluster_ab.json", "w"), indent=1)
import pandas as pd
df = pd.DataFrame(rows)
piv = df.groupby(["batch", "kv_len", "head_dim", "mode", "label"])["p50_us"].median().unstack("label")
pd.set_option("display.width", 250)
print(piv.round(2).to_string())
