"""A/B of decode prologue switches: EARLY_SETUP (barrier init + tensor-map prefetch before the PDL wait),
KV_SPLIT (V on its own barriers: Q K^T starts when K has landed), both; plan builds and the seed-sized call
with its cluster build; each variant checked against exact attention first (d128 and the seed geometry
with ragged lengths, global and cluster reductions). Then per-CTA phase cycles (DECODE_PHASES) of the
seed-sized cluster call for base and both."""
import json, os, time
import numpy as np
import labkit.workloads.decode.geometry as geo
from labkit.cuda import cupy
from labkit.workloads.decode import DecodeGeometry, decode_reference, make_inputs, run_decode
from labkit.workloads.decode.bench import bench_point, shape_runner

cp = cupy()
out = os.environ.get("OUT", "/tmp")
EXTRA = []
_orig = geo.KernelBuild.options
geo.KernelBuild.options = lambda self: _orig(self) + tuple(EXTRA) + (("-DDECODE_PHASES",) if self.timeline else ())
VARIANTS = {"base": [], "early": ["-DEARLY_SETUP=1"], "kvs": ["-DKV_SPLIT=1"], "both": ["-DEARLY_SETUP=1", "-DKV_SPLIT=1"]}


def check(x, **kw):
    g = x.geometry
    ref = decode_reference(x, g.head_dim ** -0.5)
    mag = decode_reference(x, g.head_dim ** -0.5, magnitude=True)
    o = run_decode(x, **kw).out
    used = int(x.cu_seqlens_q[-1])
    err = np.abs(o[:used] - ref[:used])
    assert np.isfinite(o[:used]).all() and (err <= 2.0 ** -8 * (np.abs(ref[:used]) + mag[:used]) + 1e-3).all(), (kw, err.max())
    return float(err.max())


checks = {}
for name, defs in VARIANTS.items():
    EXTRA[:] = defs
    g1 = DecodeGeometry(2, 32, 8, 128, 64, 16, 40)
    x1 = make_inputs(g1, seq_lens=[1000, 77], seed=1)
    gs = DecodeGeometry(2, 24, 4, 256, 64, 11, 22)
    xs = make_inputs(gs, seq_lens=[704, 65], seed=2)
    checks[name] = [check(x1), check(x1, splits=5), check(xs), check(xs, warps=8, stages=1, splits=8, cluster=True),
                    check(xs, splits=4, cluster=True)]
    print("check", name, checks[name], flush=True)
SEED = dict(heads_q=24, heads_kv=4)
SEEDCL = dict(warps=8, stages=1, splits=8, cluster=True)
SHAPES = [(2, 704, 256, "graph", SEED), (2, 704, 256, "graph", {**SEED, **SEEDCL}), (2, 704, 256, "cold", {**SEED, **SEEDCL}),
          (1, 8192, 128, "cold", {}), (1, 8192, 128, "graph", {}), (1, 1024, 128, "cold", {}), (8, 1024, 128, "cold", {}),
          (8, 1024, 256, "cold", {}), (64, 1024, 128, "cold", {}), (64, 8192, 128, "cold", {}), (8, 32768, 256, "cold", {}),
          (256, 1024, 256, "cold", {}), (1, 8192, 256, "cold", {}), (1, 32768, 128, "cold", {}), (64, 1024, 256, "cold", {})]
rows = []
t0 = time.time()
for rnd in range(2):
    names = list(VARIANTS)
    names = names[rnd % 4:] + names[:rnd % 4]
    for (b, n, d, mode, kw) in SHAPES:
        for name in names:
            EXTRA[:] = VARIANTS[name]
            r = bench_point(b, n, d, mode=mode, **kw)
            r.update(round=rnd, variant=name, cl="cluster" in kw)
            rows.append(r)
            print(f"r{rnd} {b:4d}x{n:6d} d{d} {mode:5s} {name:6s} {r['kernel']:16s} x{r['splits']:3d} "
                  f"{r['p50_us']:9.2f} us {r['TBps']:5.2f} TB/s", flush=True)
    print("elapsed", round(time.time() - t0), flush=True)
phases = {}
for name in ("base", "both"):
    EXTRA[:] = VARIANTS[name]
    with shape_runner(2, 704, 256, timeline=True, **SEED, **SEEDCL) as (runner, plan, _):
        for _ in range(3):
            runner.zero_scratch()
            runner.run_once()
        cp.cuda.get_current_stream().synchronize()
        rr = cp.asnumpy(runner.scratch[("decode", "timeline")]).view(np.uint64).reshape(-1, 6).astype(np.int64)
        rr = rr[rr[:, 0] > 0]
        phases[name] = {"to_first_stage": int(np.median(rr[:, 1] - rr[:, 0])), "keys": int(np.median(rr[:, 2] - rr[:, 1])),
                        "merge": int(np.median(rr[:, 3] - rr[:, 2])), "cluster_reduce_to_exit": int(np.median(rr[:, 5] - rr[:, 3])),
                        "total_median": int(np.median(rr[:, 5] - rr[:, 0])), "total_max": int((rr[:, 5] - rr[:, 0]).max())}
        print("phases", name, phases[name], flush=True)
        del runner
json.dump({"checks": checks, "rows": rows, "phases": phases}, open(f"{out}/decode_ab4.json", "w"), indent=1)
import pandas as pd
df = pd.DataFrame(rows)
piv = df.groupby(["batch", "kv_len", "head_dim", "mode", "cl", "variant"])["p50_us"].min().unstack("variant")
for v in ("early", "kvs", "both"):
    piv[v + "/base"] = piv[v] / piv["base"]
pd.set_option("display.width", 250)
print(piv.round(3).to_string())
