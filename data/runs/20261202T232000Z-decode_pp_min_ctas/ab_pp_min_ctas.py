"""ab_pp_min_ctas.py: page ids a stage ahead for the 4-warp one-stage builds of large d128 calls (mma w4s1c1), with
__launch_bounds__ asking for 4 CTAs per SM (min_ctas=4), so that the knob keeps their occupancy (128 registers, 4 bytes
spilled, against 154 registers and 3 CTAs per SM without the bound; NVRTC, ptxas -v). Half the gap to cuDNN at 64 x 1k
d128 was the paging loads (../20261202T141300Z-decode_paging_cost/). Each variant bit-identical to the plan, then cold
interleaved rounds (p50 of 40, three rounds, shuffled)."""
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


_plan = R.plan_for_device


def plan_for_device(g, **kw):
    p = _plan(g, **kw)
    if MODE["fa"]:
        p = dataclasses.replace(p, kernel=dataclasses.replace(p.kernel, page_prefetch=True, min_ctas=4))
    return p


R.plan_for_device = plan_for_device
results = {"ab": []}
D128 = {"plan": {}, "plan+pp4": {}}


def ab(b, n, d, variants, graph=False, hq=32, hk=8):
    cp = cupy()
    nbytes = 2 * b * n * hk * d * 2
    runners, plans, outs, ctxs = {}, {}, {}, []
    try:
        for name, kw in variants.items():
            MODE["fa"] = name.endswith("+pp4")
            try:
                ctx = B.shape_runner(b, n, d, heads_q=hq, heads_kv=hk, **kw)
                runner, plans[name], _ = ctx.__enter__()
            finally:
                MODE["fa"] = False
            ctxs.append(ctx)
            from labkit.workloads.decode.build import occupancy
            occ = occupancy(plans[name].kernel)
            print(f"build {b}x{n} d{d} {name}: {kernel_label(plans[name].kernel)} min_ctas {plans[name].kernel.min_ctas}, "
                  f"{occ.registers_per_thread} registers, {occ.ctas_per_sm} CTAs per SM", flush=True)
            runner.buffers["out"].fill(0xFFFF)  # poison (bf16 NaN)
            runner.run_once()
            outs[name] = bf16_to_f32(cp.asnumpy(runner.buffers["out"]))
            runners[name] = runner
        for name in variants:  # a pp4 build: the same bits as its build without it
            base = name[:-4]
            if name.endswith("+pp4") and base in outs:
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
for args in [(64, 1024, 128, D128), (256, 1024, 128, D128), (64, 8192, 128, D128), (256, 8192, 128, D128),
             (64, 32768, 128, D128)]:
    try:
        ab(*args)
    except Exception as exc:  # noqa: BLE001
        print(f"ab {args[:3]}: {type(exc).__name__}: {exc}", flush=True)
    cupy().get_default_memory_pool().free_all_blocks()
    with open(f"{OUT}/ab_pp_min_ctas.json", "w") as f:
        json.dump(results, f, indent=1)
    print(f"elapsed {time.time() - t0:.0f} s", flush=True)
