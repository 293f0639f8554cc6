"""A/B: speculative page-table prologue (SPEC_TABLE), tensor-map prefetch (PREFETCH_TMAP), and 16-CTA
(non-portable) cluster reductions; correctness first, then interleaved timing, 3 rounds."""
import json, os, sys, time
sys.path.insert(0, os.getcwd())
import numpy as np
import labkit.workloads.decode.geometry as geo
from labkit.workloads.decode.bench import bench_point, shape_runner
from labkit.workloads.decode import DecodeGeometry, make_inputs, run_decode
from tests.gpu.test_decode_gpu import _check, CASES

out = os.environ.get("OUT", "/tmp")
ORIG = geo.KernelBuild.options
EXTRA = ()
geo.KernelBuild.options = lambda self: ORIG(self) + EXTRA
DEFS = {"": (), "spec": ("-DSPEC_TABLE=1",), "spec+pf": ("-DSPEC_TABLE=1", "-DPREFETCH_TMAP=1")}
res = {"checks": [], "rows": []}


EXTRA = DEFS["spec"]
CASES_T = [
    (8, 8192, 128, "cold", {}, [("plan", "spec", {}), ("x2 s4 cl", "spec", dict(splits=2, stages=4, cluster=True)),
                               ("x2 s3", "spec", dict(splits=2)), ("x8", "spec", dict(splits=8)), ("x3", "spec", dict(splits=3)),
                               ("x4 s4", "spec", dict(splits=4, stages=4))]),
    (64, 1024, 128, "cold", {}, [("plan", "spec", {}), ("x2", "spec", dict(splits=2)), ("s2", "spec", dict(stages=2)),
                                 ("s3", "spec", dict(stages=3)), ("s1c2", "spec", dict(stages=1, qk_chains=2))]),
    (8, 8192, 256, "cold", {}, [("plan", "spec", {}), ("x4 s1", "spec", dict(splits=4, stages=1)), ("x3", "spec", dict(splits=3)),
                                ("x4 s2", "spec", dict(splits=4, stages=2)), ("x8 s1", "spec", dict(splits=8, stages=1))]),
    (8, 32768, 256, "cold", {}, [("plan", "spec", {}), ("x8 s2", "spec", dict(splits=8, stages=2)),
                                 ("x16 s2", "spec", dict(splits=16, stages=2)), ("x8 s1", "spec", dict(splits=8, stages=1))]),
    (256, 1024, 256, "cold", {}, [("plan", "spec", {}), ("s1c2", "spec", dict(stages=1, qk_chains=2)),
                                  ("s2", "spec", dict(stages=2)), ("x2", "spec", dict(splits=2))]),
    (8, 32768, 128, "cold", {}, [("plan", "spec", {}), ("x8", "spec", dict(splits=8)), ("x2 s4 cl", "spec", dict(splits=2, stages=4, cluster=True))]),
    (256, 1024, 128, "cold", {}, [("plan", "spec", {}), ("x2", "spec", dict(splits=2)), ("s2", "spec", dict(stages=2))]),
]
t0 = time.time()
for rnd in range(3):
    for (b, n, d, mode, extra, vs) in CASES_T:
        vs = vs[rnd % len(vs):] + vs[:rnd % len(vs)]
        for label, defs, ov in vs:
            EXTRA = DEFS[defs]
            try:
                r = bench_point(b, n, d, mode=mode, **extra, **ov)
            except Exception as ex:  # noqa
                print("FAIL", b, n, d, label, repr(ex)[:300], flush=True); continue
            r.update(round=rnd, label=label)
            res["rows"].append(r)
            print(f"r{rnd} {b:3d}x{n:6d} d{d} {mode:5s} {label:15s} {r['kernel']:16s} x{r['splits']:3d} "
                  f"{r['p50_us']:9.2f} us {r['TBps']:5.2f} TB/s", flush=True)
    print("elapsed", round(time.time() - t0), flush=True)
    json.dump(res, open(f"{out}/decode_ab7.json", "w"), indent=1)
import pandas as pd
df = pd.DataFrame(res["rows"])
piv = df.groupby(["batch", "kv_len", "head_dim", "mode", "label"])["p50_us"].median()
pd.set_option("display.width", 250)
print(piv.round(2).to_string())
