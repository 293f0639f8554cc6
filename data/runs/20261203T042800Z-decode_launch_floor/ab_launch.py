"""ab_launch.py: what a cold batch-1 call's launch costs, and whether programmatic dependent launch (PDL) is part of it.
The plan's own launch with an empty body (LABKIT_EMPTY_PROBE, a working-tree switch: the kernel returns at entry) beside
the same grid with PDL off, without the cluster, and with a one-stage ring's smaller shared memory; then the plan's
full call against the same call launched without PDL (bit-identical), cold and in a CUDA graph."""
import dataclasses
import json
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.getcwd())
import labkit.workloads.decode.geometry as geo  # noqa: E402
from labkit.cuda import cupy  # noqa: E402
from labkit.timing import interleave, time_gpu  # noqa: E402
from labkit.workloads.decode import bench as B  # noqa: E402
from labkit.workloads.decode import run as R  # noqa: E402
from labkit.workloads.decode.geometry import kernel_label  # noqa: E402
from labkit.workloads.decode.inputs import bf16_to_f32  # noqa: E402

OUT = os.environ["R"]
MODE = {"empty": 0, "pdl": None}
ORIG_OPTIONS = geo.KernelBuild.options
geo.KernelBuild.options = lambda self: ORIG_OPTIONS(self) + (("-DLABKIT_EMPTY_PROBE=1",) if MODE["empty"] else ())
_plan = R.plan_for_device


def plan_for_device(g, **kw):
    p = _plan(g, **kw)
    return p if MODE["pdl"] is None else dataclasses.replace(p, pdl=MODE["pdl"])


R.plan_for_device = plan_for_device
results = {"rows": []}
t0 = time.time()


def group(point, variants, graph=False, check=True):
    """variants: name -> (empty, pdl or None, plan knobs)"""
    b, n, d, hq, hk = point
    cp = cupy()
    runners, plans, outs, ctxs = {}, {}, {}, []
    try:
        for name, (empty, pdl, knobs) in variants.items():
            MODE.update(empty=empty, pdl=pdl)
            try:
                ctx = B.shape_runner(b, n, d, heads_q=hq, heads_kv=hk, **knobs)
                runner, plans[name], _ = ctx.__enter__()
            finally:
                MODE.update(empty=0, pdl=None)
            ctxs.append(ctx)
            pl = plans[name]
            print(f"build {b}x{n} d{d} {name}: {kernel_label(pl.kernel)} splits {pl.splits} pdl {pl.pdl} "
                  f"cluster {pl.kernel.cluster_splits} smem {pl.kernel.dynamic_smem_bytes}", flush=True)
            runner.buffers["out"].fill(0xFFFF)
            runner.run_once()
            outs[name] = bf16_to_f32(cp.asnumpy(runner.buffers["out"]))
            runners[name] = runner
        if check:
            names = list(outs)
            same = all(np.isfinite(outs[k]).all() and np.array_equal(outs[k], outs[names[0]]) for k in names)
            print(f"check {b}x{n} d{d}: {names} bit-identical: {same}", flush=True)
            if not same:
                raise AssertionError("outputs differ")
        else:
            print(f"check {b}x{n} d{d}: empty probes wrote nothing: {all(np.isnan(o).all() for o in outs.values())}",
                  flush=True)
        fns = {name: (lambda r=r: r.launch_call(0)) for name, r in runners.items()}
        for rnd in range(3):
            timing = interleave(fns, iterations=40, warmup=1, mode="cold", order="shuffle", seed=rnd)
            base = timing[next(iter(fns))].stats.p50_s
            line = []
            for name, t in timing.items():
                results["rows"].append({"point": f"{b}x{n} d{d} {hq}/{hk}", "round": rnd, "variant": name, "mode": "cold",
                                        "p50_us": t.stats.p50_s * 1e6, "vs_first": t.stats.p50_s / base - 1})
                line.append(f"{name} {t.stats.p50_s * 1e6:.2f}")
            print(f"r{rnd} {b}x{n} d{d} cold: " + ", ".join(line), flush=True)
            if graph:
                gt = {name: time_gpu(f, name=name, mode="graph", iterations=40, graph_calls=20).stats.p50_s
                      for name, f in fns.items()}
                for name, v in gt.items():
                    results["rows"].append({"point": f"{b}x{n} d{d} {hq}/{hk}", "round": rnd, "variant": name,
                                            "mode": "graph", "p50_us": v * 1e6})
                print(f"r{rnd} {b}x{n} d{d} graph: " + ", ".join(f"{k} {v * 1e6:.2f}" for k, v in gt.items()), flush=True)
    finally:
        runners.clear()
        for ctx in reversed(ctxs):
            ctx.__exit__(None, None, None)
        cp.get_default_memory_pool().free_all_blocks()
    with open(f"{OUT}/ab_launch.json", "w") as f:
        json.dump(results, f, indent=1)
    print(f"elapsed {time.time() - t0:.0f} s", flush=True)


B1 = (1, 8192, 128, 32, 8)
SEED = (2, 704, 256, 24, 4)
for point, same in ((B1, {"warps": 8, "stages": 3}), (SEED, {"warps": 8, "stages": 2, "dim_warps": 2})):
    flat = {**same, "splits": 8, "cluster": False}
    small = {**same, "splits": 8, "cluster": True, "stages": 1}
    try:
        group(point, {"empty plan": (1, None, {}), "empty no-pdl": (1, False, {}),
                      "empty no-cluster": (1, None, flat), "empty no-cluster no-pdl": (1, False, flat),
                      "empty 1-stage smem": (1, None, small)}, check=False)
    except Exception as exc:  # noqa: BLE001
        print(f"probe {point}: {type(exc).__name__}: {exc}", flush=True)
for point in (B1, SEED, (1, 1024, 128, 32, 8), (8, 1024, 128, 32, 8), (1, 32768, 128, 32, 8), (8, 8192, 128, 32, 8)):
    try:
        group(point, {"plan": (0, None, {}), "no-pdl": (0, False, {})}, graph=point in (B1, SEED))
    except Exception as exc:  # noqa: BLE001
        print(f"ab {point}: {type(exc).__name__}: {exc}", flush=True)
