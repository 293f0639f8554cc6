"""A/B: the plan's cluster policy (a unit's splits combine in a cluster when one CTA fills an SM; short calls
take 8 one-stage 8-warp CTAs in a cluster of 8) and MERGE_VALID (the warps' merge writes only the call's
rows) against the global split reduction (cluster=False) without MERGE_VALID; checked first."""
import json, os, time
import numpy as np
import labkit.workloads.decode.geometry as geo
from labkit.workloads.decode import DecodeGeometry, decode_reference, make_inputs, run_decode
from labkit.workloads.decode.bench import bench_point

out = os.environ.get("OUT", "/tmp")
EXTRA = []
_orig = geo.KernelBuild.options
geo.KernelBuild.options = lambda self: _orig(self) + tuple(EXTRA)
VARIANTS = {"new": (["-DMERGE_VALID=1"], {}), "new_nomv": ([], {}), "old": ([], {"cluster": False}),
            "old_mv": (["-DMERGE_VALID=1"], {"cluster": False})}


def check(x, **kw):
    g = x.geometry
    ref = decode_reference(x, g.head_dim ** -0.5)
    mag = decode_reference(x, g.head_dim ** -0.5, magnitude=True)
    r = run_decode(x, **kw)
    used = int(x.cu_seqlens_q[-1])
    err = np.abs(r.out[:used] - ref[:used])
    assert np.isfinite(r.out[:used]).all() and (err <= 2.0 ** -8 * (np.abs(ref[:used]) + mag[:used]) + 1e-3).all(), (kw, err.max())
    return float(err.max()), r.plan


checks = {}
for name, (defs, ov) in VARIANTS.items():
    EXTRA[:] = defs
    g1 = DecodeGeometry(2, 32, 8, 128, 64, 16, 40)
    x1 = make_inputs(g1, seq_lens=[1000, 77], seed=1)
    gs = DecodeGeometry(2, 24, 4, 256, 64, 11, 22)
    xs = make_inputs(gs, seq_lens=[704, 65], seed=2)
    g3 = DecodeGeometry(3, 16, 4, 128, 32, 10, 40, max_q_len=4)
    x3 = make_inputs(g3, seq_lens=[300, 4, 97], q_lens=[1, 4, 2], seed=11)
    checks[name] = [check(x1, **ov), check(x1, splits=5, **ov), check(xs, **ov), check(x3, **ov), check(x3, splits=4, **ov)]
    print("check", name, [c[0] for c in checks[name]], checks[name][2][1], flush=True)
SEED = dict(heads_q=24, heads_kv=4)
SHAPES = [(2, 704, 256, "graph", SEED), (2, 704, 256, "cold", SEED), (1, 1024, 256, "cold", {}), (1, 1024, 256, "graph", {}),
          (8, 1024, 256, "cold", {}), (8, 8192, 256, "cold", {}), (8, 32768, 256, "cold", {}), (1, 8192, 256, "cold", {}),
          (64, 1024, 256, "cold", {}), (256, 1024, 256, "cold", {}), (1, 8192, 128, "cold", {}), (64, 1024, 128, "cold", {}),
          (8, 1024, 128, "cold", {})]
rows = []
t0 = time.time()
for rnd in range(2):
    names = list(VARIANTS)
    names = names[rnd % 4:] + names[:rnd % 4]
    for (b, n, d, mode, kw) in SHAPES:
        for name in names:
            defs, ov = VARIANTS[name]
            EXTRA[:] = defs
            r = bench_point(b, n, d, mode=mode, **kw, **ov)
            r.update(round=rnd, variant=name)
            rows.append(r)
            print(f"r{rnd} {b:4d}x{n:6d} d{d} {mode:5s} {name:8s} {r['kernel']:18s} x{r['splits']:3d} "
                  f"{r['p50_us']:9.2f} us {r['TBps']:5.2f} TB/s", flush=True)
    print("elapsed", round(time.time() - t0), flush=True)
json.dump({"checks": checks, "rows": rows}, open(f"{out}/decode_ab5.json", "w"), indent=1)
import pandas as pd
df = pd.DataFrame(rows)
piv = df.groupby(["batch", "kv_len", "head_dim", "mode", "variant"])["p50_us"].min().unstack("variant")
for v in ("new", "new_nomv", "old_mv"):
    piv[v + "/old"] = piv[v] / piv["old"]
pd.set_option("display.width", 250)
print(piv.round(3).to_string())
