"""ab_lane_issue.py (device-only define -DLANE_ISSUE=1, li.diff): warp 0 issues each stage's TMA loads one per lane
(lane 0 arms the barrier) instead of thread 0 issuing all 8 in turn (0.28 us of each refill at 1 x 8k d128,
../20261202T213800Z-decode_refill_parts/), the first stages too. 4-D boxes, per-unit CTAs: the plan's 8-warp head_dim
128 builds (page ids a stage ahead). Each variant bit-identical to the plan, then cold interleaved rounds (p50 of 40,
three rounds, shuffled), 1 x 8k d128 also in a CUDA graph."""
import dataclasses
import json
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.getcwd())
from labkit.cuda import cupy  # noqa: E402
from labkit.timing import interleave, time_gpu  # noqa: E402
from labkit.workloads.decode import bench as B  # noqa: E402
from labkit.workloads.decode import geometry as G  # noqa: E402
from labkit.workloads.decode import run as R  # noqa: E402
from labkit.workloads.decode.geometry import kernel_label  # noqa: E402
from labkit.workloads.decode.inputs import bf16_to_f32  # noqa: E402

OUT = os.environ["R"]
MODE = {"fa": False}


@dataclasses.dataclass(frozen=True)
class DiagBuild(G.KernelBuild):
    defines: tuple = ()

    def options(self):
        return (*super().options(), *self.defines)


_plan = R.plan_for_device


def plan_for_device(g, **kw):
    p = _plan(g, **kw)
    if MODE["fa"]:
        f = {fl.name: getattr(p.kernel, fl.name) for fl in dataclasses.fields(G.KernelBuild)}
        p = dataclasses.replace(p, kernel=DiagBuild(**f, defines=("-DLANE_ISSUE=1",)))
    return p


R.plan_for_device = plan_for_device
results = {"ab": []}
D128 = {"plan": {}, "plan+li": {}}


def ab(b, n, d, variants, graph=False, hq=32, hk=8):
    cp = cupy()
    nbytes = 2 * b * n * hk * d * 2
    runners, plans, outs, ctxs = {}, {}, {}, []
    try:
        for name, kw in variants.items():
            MODE["fa"] = name.endswith("+li")
            try:
                ctx = B.shape_runner(b, n, d, heads_q=hq, heads_kv=hk, **kw)
                runner, plans[name], _ = ctx.__enter__()
            finally:
                MODE["fa"] = False
            ctxs.append(ctx)
            runner.buffers["out"].fill(0xFFFF)  # poison (bf16 NaN)
            runner.run_once()
            outs[name] = bf16_to_f32(cp.asnumpy(runner.buffers["out"]))
            runners[name] = runner
        for name in variants:  # a lane-issue build: the same bits as its build without it
            base = name[:-3]
            if name.endswith("+li") and base in outs:
                same = bool(np.isfinite(outs[name]).all() and np.array_equal(outs[name], outs[base]))
                print(f"check {b}x{n} d{d} {name} bit-identical to {base}: {same}", flush=True)
                if not same:
                    raise AssertionError(f"{name} differs from {base}")
        ref = outs["plan"]
        scale = float(np.abs(ref).max())
        for name, o in outs.items():
            diff = float(np.abs(o - ref).max()) if np.isfinite(o).all() else float("inf")
            ok = diff <= 2.0 ** -7 * scale + 1e-3
            print(f"check {b}x{n} d{d} {name} {kernel_label(plans[name].kernel)} splits {plans[name].splits}: "
                  f"max |out - plan| {diff:.2e} (|plan| max {scale:.2e}) {'ok' if ok else 'FAILED'}", flush=True)
            if not ok:
                raise AssertionError(f"{name} differs from the plan")
        fns = {name: (lambda r=r: r.launch_call(0)) for name, r in runners.items()}
        for rnd in range(3):
            timing = interleave(fns, iterations=40, warmup=1, mode="cold", order="shuffle", seed=rnd)
            base = timing["plan"].stats.p50_s
            for name, t in timing.items():
                row = {"point": f"{b}x{n} d{d} {hq}/{hk}", "round": rnd, "variant": name,
                       "kernel": kernel_label(plans[name].kernel), "splits": plans[name].splits, "mode": "cold",
                       "p50_us": t.stats.p50_s * 1e6, "TBps": nbytes / t.stats.p50_s / 1e12,
                       "vs_plan": t.stats.p50_s / base - 1}
                results["ab"].append(row)
                print(f"r{rnd} {row['point']:18s} {name:9s} {row['kernel']:16s} s{row['splits']:<3d} {row['p50_us']:8.2f} us "
                      f"{row['TBps']:6.3f}TB/s {row['vs_plan']:+.2%}", flush=True)
            if graph:
                gt = {name: time_gpu(f, name=name, mode="graph", iterations=40, graph_calls=20).stats.p50_s
                      for name, f in fns.items()}
                print(f"r{rnd} {b}x{n} d{d} in a graph: " + ", ".join(f"{k} {v * 1e6:.2f} us" for k, v in gt.items()),
                      flush=True)
                for name, v in gt.items():
                    results["ab"].append({"point": f"{b}x{n} d{d} {hq}/{hk}", "round": rnd, "variant": name,
                                          "mode": "graph", "p50_us": v * 1e6, "vs_plan": v / gt["plan"] - 1})
    finally:
        runners.clear()
        for ctx in reversed(ctxs):
            ctx.__exit__(None, None, None)


t0 = time.time()
for args in [(1, 8192, 128, D128, True), (1, 32768, 128, D128), (1, 4096, 128, D128), (8, 8192, 128, D128),
             (8, 1024, 128, D128), (1, 1024, 128, D128), (8, 32768, 128, D128)]:
    try:
        ab(*args)
    except Exception as exc:  # noqa: BLE001
        print(f"ab {args[:3]}: {type(exc).__name__}: {exc}", flush=True)
    cupy().get_default_memory_pool().free_all_blocks()
    with open(f"{OUT}/ab_lane_issue.json", "w") as f:
        json.dump(results, f, indent=1)
    print(f"elapsed {time.time() - t0:.0f} s", flush=True)
