"""Balanced (one wave, equal shares across unit boundaries) against the plan's builds: interleaved, 3 rounds."""
import json, os, time
from labkit.workloads.decode.bench import bench_point
out = os.environ.get("OUT", "/tmp")
CASES_T = [
    (8, 32768, 256, [("plan", {}), ("bal", dict(balanced=True)), ("bal s1", dict(balanced=True, stages=1))]),
    (256, 1024, 256, [("plan", {}), ("bal", dict(balanced=True))]),
    (64, 8192, 128, [("plan", {}), ("bal", dict(balanced=True)), ("bal s3", dict(balanced=True, stages=3))]),
    (256, 8192, 128, [("plan", {}), ("bal s3", dict(balanced=True, stages=3))]),
    (256, 1024, 128, [("plan", {}), ("bal", dict(balanced=True))]),
]
rows, t0 = [], time.time()
for rnd in range(3):
    for (b, n, d, vs) in CASES_T:
        vs = vs[rnd % len(vs):] + vs[:rnd % len(vs)]
        for label, ov in vs:
            try:
                r = bench_point(b, n, d, **ov)
            except Exception as ex:  # noqa
                print("FAIL", b, n, d, label, repr(ex)[:300], flush=True); continue
            r.update(round=rnd, label=label)
            rows.append(r)
            print(f"r{rnd} {b:3d}x{n:6d} d{d} {label:8s} {r['kernel']:18s} x{r['splits']:4d} {r['p50_us']:9.2f} us {r['TBps']:5.3f} TB/s", flush=True)
    print("elapsed", round(time.time() - t0), flush=True)
    json.dump(rows, open(f"{out}/decode_bal.json", "w"), indent=1)
import pandas as pd
df = pd.DataFrame(rows)
pd.set_option("display.width", 250)
print(df.groupby(["batch", "kv_len", "head_dim", "label"])[["p50_us", "TBps"]].median().round(3).to_string())
