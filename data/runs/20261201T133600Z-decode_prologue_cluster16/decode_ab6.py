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

# ---- active clusters of 16 (one CTA per SM builds)
from labkit.cuda import cupy
import cuda.bindings.driver as cu
from labkit.workloads.decode.run import geometry_for
from labkit.workloads.decode.plan import plan_call
from labkit.workloads.decode.build import compile_kernel
from labkit.cuda import load_function
for d, kw in ((128, dict(stages=4)), (128, dict(warps=8, stages=2)), (256, dict(stages=2)), (128, dict(stages=3))):
    g = geometry_for(1, 8192, head_dim=d)
    plan = plan_call(g, splits=16, cluster=True, **kw)
    kb = plan.kernel
    func, mod = load_function(compile_kernel(kb).image, "paged_decode", kb.dynamic_smem_bytes)
    cfg = cu.CUlaunchConfig()
    cfg.gridDimX, cfg.gridDimY, cfg.gridDimZ = 16, 8, 1
    cfg.blockDimX, cfg.blockDimY, cfg.blockDimZ = kb.threads, 1, 1
    cfg.sharedMemBytes = kb.dynamic_smem_bytes
    err, n = cu.cuOccupancyMaxActiveClusters(func, cfg)
    print("max active clusters of 16:", d, kw, kb.dynamic_smem_bytes, err, n, flush=True)
    res.setdefault("active_clusters16", []).append(dict(head_dim=d, build=str(kw), err=str(err), n=int(n) if not err else None))

# ---- correctness of every new variant (full reference, every element)
G256 = DecodeGeometry(2, 32, 8, 256, 64, 32, 70)
checks = [(name, lens, dict(), s) for name, (g, lens) in CASES.items() for s in (1, 3)]
checks += [("g4_d128_p64_long", None, dict(cluster=True, stages=4), 16), ("g8_d128_p32", None, dict(cluster=True, stages=4), 16),
           ("g4_d128_p64_long", None, dict(cluster=True, warps=8, stages=2), 16),
           ("g8_d128_p32", None, dict(cluster=True, stages=3), 16),
           ("d256", None, dict(cluster=True), 16), ("g6_d256_p64_seed", None, dict(cluster=True, warps=8, stages=1), 8)]
bad = 0
CL = [c for c in checks if c[2]]
PLAIN = [c for c in checks if not c[2]]
for label, defs, todo in (("spec+pf", DEFS["spec+pf"], checks), ("spec", DEFS["spec"], [c for c in PLAIN if c[3] == 3]),
                          ("", (), CL)):
    EXTRA = defs
    for name, lens, kw, s in todo:
        if name == "d256":
            g, lens = G256, [2048, 100]
        else:
            g, lens = CASES[name]
        x = make_inputs(g, seq_lens=lens, seed=5)
        for full in (False, True):  # full: every sequence max length (the speculative path)
            xx = make_inputs(g, seq_lens=[g.max_pages * g.page_size] * g.batch, seed=6) if full else x
            try:
                run = run_decode(xx, splits=s, **kw)
                e = float(_check(xx, run)); ok = True
            except Exception as ex:  # noqa
                e, ok = repr(ex)[:300], False; bad += 1
            res["checks"].append(dict(defs=label, case=name, full=full, splits=s, build=str(kw), ok=ok, err=e))
            print("check", label or "base", name, "full" if full else "ragged", s, kw, ok, e, flush=True)
print("checks failed:", bad, flush=True)

CASES_T = [  # (batch, kv_len, d, mode, extra, [(label, defs, overrides)])
    (1, 8192, 128, "cold", {}, [("plan", "", {}), ("spec", "spec", {}), ("spec+pf", "spec+pf", {}),
                               ("cl16 s4", "", dict(splits=16, cluster=True, stages=4)),
                               ("cl16 s4 spec", "spec", dict(splits=16, cluster=True, stages=4)),
                               ("cl16 w8s2 spec", "spec", dict(splits=16, cluster=True, warps=8, stages=2)),
                               ("cl16 s3 spec", "spec", dict(splits=16, cluster=True, stages=3)),
                               ("cl8 s4 spec", "spec", dict(splits=8, cluster=True, stages=4))]),
    (1, 8192, 128, "graph", {}, [("plan", "", {}), ("spec", "spec", {}), ("cl16 s4 spec", "spec", dict(splits=16, cluster=True, stages=4))]),
    (2, 704, 256, "cold", dict(heads_q=24, heads_kv=4), [("plan", "", {}), ("spec", "spec", {}), ("spec+pf", "spec+pf", {})]),
    (2, 704, 256, "graph", dict(heads_q=24, heads_kv=4), [("plan", "", {}), ("spec", "spec", {}), ("spec+pf", "spec+pf", {})]),
    (1, 32768, 128, "cold", {}, [("plan", "", {}), ("spec", "spec", {}), ("cl16 s4 spec", "spec", dict(splits=16, cluster=True, stages=4))]),
    (1, 8192, 256, "cold", {}, [("plan", "", {}), ("spec", "spec", {}), ("cl16 spec", "spec", dict(splits=16, cluster=True))]),
    (1, 1024, 128, "cold", {}, [("plan", "", {}), ("spec", "spec", {})]),
    (8, 8192, 128, "cold", {}, [("plan", "", {}), ("spec", "spec", {})]),
    (8, 1024, 256, "cold", {}, [("plan", "", {}), ("spec", "spec", {})]),
    (64, 8192, 128, "cold", {}, [("plan", "", {}), ("spec", "spec", {}), ("x2 spec", "spec", dict(splits=2))]),
    (8, 32768, 256, "cold", {}, [("plan", "", {}), ("spec", "spec", {}), ("x4 s1 spec", "spec", dict(splits=4, stages=1)),
                                 ("x4 spec", "spec", dict(splits=4))]),
    (256, 1024, 256, "cold", {}, [("plan", "", {}), ("spec", "spec", {})]),
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
    json.dump(res, open(f"{out}/decode_ab6.json", "w"), indent=1)
import pandas as pd
df = pd.DataFrame(res["rows"])
piv = df.groupby(["batch", "kv_len", "head_dim", "mode", "label"])["p50_us"].median()
pd.set_option("display.width", 250)
print(piv.round(2).to_string())
