"""ab_meta.py: a CTA's metadata asked for at once (META_AT_ONCE=3, a working-tree switch): seq_lens[b] beside
cu_seqlens_q[b], b + 1 (before the rows test, which had put a second round trip between them), and every page id of the
first stages before the first TMA load (the loads' asm memory clobber had kept each stage's ids behind the previous
stage's loads). The 4-CTA-per-SM one-stage d128 builds take __launch_bounds__(128, 4) with it (128 registers, no
spills; 162 and 3 CTAs per SM without). Correctness first: the GPU tests' cases against exact attention with the switch
on, and every bench point bit-identical to the plan; then cold interleaved rounds (p50 of 40, three rounds, shuffled)."""
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
from labkit.workloads.decode import DecodeGeometry, make_inputs, run_decode  # noqa: E402
from labkit.workloads.decode import bench as B  # noqa: E402
from labkit.workloads.decode import run as R  # noqa: E402
from labkit.workloads.decode.build import occupancy  # noqa: E402
from labkit.workloads.decode.geometry import kernel_label  # noqa: E402
from labkit.workloads.decode.inputs import bf16_to_f32  # noqa: E402
from tests.gpu.test_decode_gpu import CASES, _check  # noqa: E402

OUT = os.environ["R"]
MODE = {"meta": 0, "empty": 0}
ORIG_OPTIONS = geo.KernelBuild.options
geo.KernelBuild.options = lambda self: (ORIG_OPTIONS(self) + ((f"-DMETA_AT_ONCE={MODE['meta']}",) if MODE["meta"] else ())
                                        + (("-DLABKIT_EMPTY_PROBE=1",) if MODE["empty"] else ()))
_plan = R.plan_for_device


def plan_for_device(g, **kw):
    saved = dict(MODE)
    MODE.update(meta=0, empty=0)  # the plan as it stands (its CTAs per SM from its own cubin)
    try:
        p = _plan(g, **kw)
    finally:
        MODE.update(saved)
    if MODE["meta"] and p.ctas_per_sm > 1 and not p.kernel.min_ctas:
        p = dataclasses.replace(p, kernel=dataclasses.replace(p.kernel, min_ctas=p.ctas_per_sm))
    return p


R.plan_for_device = plan_for_device
results = {"checks": [], "ab": []}

# ---- exact attention with the switch on: the GPU tests' cases, ragged and full, several builds
t0 = time.time()
MODE["meta"] = 3
fails = 0
for name, (g, lens) in (CASES.items() if os.environ.get("CASES") else ()):
    for kw in ({}, {"splits": 1}, {"splits": 3}, {"splits": 3, "stages": 3}, {"splits": 2, "warps": 8, "stages": 2, "cluster": True},
               {"warps": 8, "stages": 1}):
        try:
            x = make_inputs(g, seq_lens=lens, seed=41)
            run = run_decode(x, **kw)
            err = _check(x, run)
            ok = True
        except AssertionError as exc:
            err, ok = str(exc), False
            fails += 1
        except Exception as exc:  # noqa: BLE001  (a build the case cannot take)
            err, ok = f"{type(exc).__name__}: {exc}"[:120], None
        results["checks"].append({"case": name, "build": str(kw), "ok": ok, "err": str(err)})
        print(f"check {name} {kw}: {'ok' if ok else 'FAILED' if ok is False else 'n/a'} {err}", flush=True)
for batch, hkv, page, pages, lens, in [] if not os.environ.get("CASES") else [(1, 8, 64, 128, [8192]), (1, 8, 64, 128, [8000]), (1, 8, 16, 512, [8191]),
                                       (2, 4, 64, 128, [8192, 4097]), (8, 8, 64, 16, [1024] * 7 + [1000])]:
    g = DecodeGeometry(batch, 4 * hkv, hkv, 128, page, pages, batch * pages + 7)
    x = make_inputs(g, seq_lens=lens, seed=pages + lens[0])
    try:
        run = run_decode(x)
        err, ok = _check(x, run), True
    except AssertionError as exc:
        err, ok = str(exc), False
        fails += 1
    results["checks"].append({"case": f"plan {batch}x{lens[0]} p{page}", "build": "plan", "ok": ok, "err": str(err)})
    print(f"check plan {batch} x {lens} p{page}: {'ok' if ok else 'FAILED'} {err}", flush=True)
MODE["meta"] = 0
print(f"checks: {fails} failed, {time.time() - t0:.0f} s", flush=True)


def ab(b, n, d, graph=False, hq=32, hk=8):
    cp = cupy()
    nbytes = 2 * b * n * hk * d * 2
    runners, plans, outs, ctxs = {}, {}, {}, []
    try:
        for name in VARIANTS:
            MODE["meta"] = 3 if name == "meta" else 0
            MODE["empty"] = 1 if name == "empty" else 0
            try:
                ctx = B.shape_runner(b, n, d, heads_q=hq, heads_kv=hk)
                runner, plans[name], _ = ctx.__enter__()
                occ = occupancy(plans[name].kernel)
            finally:
                MODE["meta"] = MODE["empty"] = 0
            ctxs.append(ctx)
            print(f"build {b}x{n} d{d} {name}: {kernel_label(plans[name].kernel)} min_ctas {plans[name].kernel.min_ctas}, "
                  f"{occ.registers_per_thread} registers, {occ.ctas_per_sm} CTAs per SM", flush=True)
            runner.buffers["out"].fill(0xFFFF)  # poison (bf16 NaN)
            runner.run_once()
            outs[name] = bf16_to_f32(cp.asnumpy(runner.buffers["out"]))
            runners[name] = runner
        if "empty" in outs:
            print(f"check {b}x{n} d{d} empty probe wrote nothing: {bool(np.isnan(outs['empty']).all())}", flush=True)
        same = bool(np.isfinite(outs["meta"]).all() and np.array_equal(outs["meta"], outs["plan"]))
        print(f"check {b}x{n} d{d} meta bit-identical to plan: {same}", flush=True)
        results["checks"].append({"case": f"{b}x{n} d{d} {hq}/{hk}", "build": "bit-identical", "ok": same})
        if not same:
            raise AssertionError("meta differs from the plan")
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
                print(f"r{rnd} {row['point']:18s} {name:5s} {row['kernel']:18s} s{row['splits']:<3d} {row['p50_us']:8.2f} us "
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


VARIANTS = ("plan", "meta", "empty")
cp0 = cupy()
empty_kernel = cp0.RawKernel('extern "C" __global__ void empty_kernel() {}', "empty_kernel")
for ctas in (64, 128, 512):
    t = time_gpu(lambda c=ctas: empty_kernel((c,), (128,), ()), name="empty", mode="cold", iterations=40)
    print(f"plain empty kernel, {ctas} CTAs of 128 threads, cold: p50 {t.stats.p50_s * 1e6:.2f} us", flush=True)
    results.setdefault("plain_empty", []).append({"ctas": ctas, "p50_us": t.stats.p50_s * 1e6})
POINTS = [((64, 1024, 128), {}), ((256, 1024, 128), {}), ((64, 8192, 128), {}), ((1, 8192, 128), {}),
          ((2, 704, 256), {"hq": 24, "hk": 4})]
for args, kw in POINTS:
    try:
        ab(*args, **kw)
    except Exception as exc:  # noqa: BLE001
        print(f"ab {args}: {type(exc).__name__}: {exc}", flush=True)
    cupy().get_default_memory_pool().free_all_blocks()
    with open(f"{OUT}/ab_meta2.json", "w") as f:
        json.dump(results, f, indent=1)
    print(f"elapsed {time.time() - t0:.0f} s", flush=True)
