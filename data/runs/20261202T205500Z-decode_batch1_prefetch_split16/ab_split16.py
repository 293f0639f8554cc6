"""Batch-1 calls on all SMs: the plan (1 x 8k / 32k d128: 8 splits of one 8-warp CTA per SM in clusters of 8, so 64
CTAs on 64 of the 132 SMs, 8 stages of 128 tokens each at 8k) against 16 (or 12) splits of one 8-warp CTA per SM
without clusters (128 CTAs, 4 stages each at 8k; partials through global memory and the counter), and against 16
splits of the 4-warp build (the comparison the plan's cluster rule was measured on). Thread 0's stamps said a stage
costs warp 0 about the same time whatever its tokens (math latency + refill), so halving the stages per CTA is the
lever. Per point: outputs poisoned, every variant within bf16 rounding of the plan's output (the split builds' exact
correctness is the GPU suite's), then cold interleaved rounds (p50 of 40, three rounds, shuffled)."""
import json
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.getcwd())
from labkit.cuda import cupy  # noqa: E402
from labkit.timing import interleave, time_gpu  # noqa: E402
from labkit.workloads.decode import bench as B  # noqa: E402
from labkit.workloads.decode.geometry import kernel_label  # noqa: E402
from labkit.workloads.decode.inputs import bf16_to_f32  # noqa: E402

OUT = os.environ["R"]
results = {"ab": []}
D128 = {"plan": {}, "s16w8s3": dict(splits=16, warps=8, stages=3), "s16w8s2": dict(splits=16, warps=8, stages=2),
        "s12w8s3": dict(splits=12, warps=8, stages=3), "s16w4": dict(splits=16)}
D2 = {"plan": {}, "s8w8s3": dict(splits=8, warps=8, stages=3), "s8w8s3cl": dict(splits=8, warps=8, stages=3, cluster=True)}
D256 = {"plan": {}, "s16pairs": dict(splits=16), "s12pairs": dict(splits=12)}


def ab(b, n, d, variants, graph=False, hq=32, hk=8):
    cp = cupy()
    nbytes = 2 * b * n * hk * d * 2
    runners, plans, outs, ctxs = {}, {}, {}, []
    try:
        for name, kw in variants.items():
            ctx = B.shape_runner(b, n, d, heads_q=hq, heads_kv=hk, **kw)
            runner, plans[name], _ = ctx.__enter__()
            ctxs.append(ctx)
            runner.buffers["out"].fill(0xFFFF)  # poison (bf16 NaN)
            runner.run_once()
            outs[name] = bf16_to_f32(cp.asnumpy(runner.buffers["out"]))
            runners[name] = runner
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
for args in [(1, 8192, 128, D128, True), (1, 32768, 128, D128), (1, 16384, 128, D128), (1, 4096, 128, D128),
             (1, 8192, 256, D256), (2, 8192, 128, D2)]:
    try:
        ab(*args)
    except Exception as exc:  # noqa: BLE001
        print(f"ab {args[:3]}: {type(exc).__name__}: {exc}", flush=True)
    cupy().get_default_memory_pool().free_all_blocks()
    with open(f"{OUT}/ab_split16.json", "w") as f:
        json.dump(results, f, indent=1)
    print(f"elapsed {time.time() - t0:.0f} s", flush=True)
