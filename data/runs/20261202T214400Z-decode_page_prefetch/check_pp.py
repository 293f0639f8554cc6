"""check_pp.py: page_prefetch (KernelBuild.page_prefetch, -DPAGE_PREFETCH=1) as committed for the plan's 8-warp head_dim
128 builds. (1) Correctness with page_prefetch=1 forced over labkit's correctness cases (labkit.workloads.decode.study
CASES: pages 16/32/64, the interleaved pool, ragged lengths, causal q tokens, G 1/4/6/8; 4- and 8-warp builds, 1 and
3 stages, splits 1/3 and clusters of 2/8; head_dim 256 with 4-D boxes) against exact float64 attention, outputs
poisoned, every element within the bound; (2) the plan (page ids ahead) against page_prefetch=0 at the batch-1 and
batch-8 head_dim 128 points: bit-identical, then cold interleaved rounds (p50 of 40, three rounds, shuffled),
1 x 8k d128 also in a CUDA graph."""
import json
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.getcwd())
from labkit.cuda import cupy  # noqa: E402
from labkit.timing import interleave, time_gpu  # noqa: E402
from labkit.workloads.decode import bench as B  # noqa: E402
from labkit.workloads.decode import run as R  # noqa: E402
from labkit.workloads.decode import study as S  # noqa: E402
from labkit.workloads.decode.geometry import kernel_label  # noqa: E402
from labkit.workloads.decode.inputs import bf16_to_f32, make_inputs  # noqa: E402
from labkit.workloads.decode.reference import decode_reference  # noqa: E402

OUT = os.environ["R"]
results = {"correctness": [], "ab": []}


def correctness():
    bad = 0
    for name, (g, lens, q_lens) in S.CASES.items():
        x = make_inputs(g, seq_lens=lens, q_lens=q_lens, seed=5)
        ref = decode_reference(x, g.head_dim ** -0.5)
        mag = decode_reference(x, g.head_dim ** -0.5, magnitude=True)
        used = int(x.cu_seqlens_q[-1])
        for knobs in ({"warps": 4}, {"warps": 8, **({"dim_warps": 2, "wide_boxes": False} if g.head_dim == 256 else {})}):
            for stages in (1, 3):
                for splits, cl in ((1, None), (3, None), (2, True), (8, True)):
                    if splits > g.max_pages or (cl and g.group * g.max_q_len > 16):
                        continue
                    try:
                        run = R.run_decode(x, splits=splits, stages=stages, cluster=cl, page_prefetch=True, **knobs)
                    except Exception as exc:  # noqa: BLE001  (a build that does not fit)
                        print(f"skip {name} {knobs} stages {stages} splits {splits}: {type(exc).__name__}: {exc}",
                              flush=True)
                        continue
                    assert run.plan.get("page_prefetch") is True, run.plan
                    err = np.abs(run.out[:used] - ref[:used])
                    ok = bool((err <= 2.0 ** -8 * (np.abs(ref[:used]) + mag[:used]) + 1e-3).all()
                              and np.isnan(run.out[used:]).all())
                    bad += not ok
                    results["correctness"].append({"case": name, **knobs, "stages": stages, "splits": splits,
                                                   "cluster": bool(cl), "max_err": float(np.nanmax(err)), "ok": ok})
                    print(f"{'check' if ok else 'FAILED'} pp {name} {knobs} stages {stages} splits {splits} "
                          f"cluster {bool(cl)}: max err {np.nanmax(err):.2e}", flush=True)
    return bad


def ab(b, n, d, graph=False):
    cp = cupy()
    nbytes = 2 * b * n * 8 * d * 2
    runners, plans, outs, ctxs = {}, {}, {}, []
    try:
        for name, kw in (("plan", {}), ("no_pp", {"page_prefetch": False})):
            ctx = B.shape_runner(b, n, d, **kw)
            runner, plans[name], _ = ctx.__enter__()
            ctxs.append(ctx)
            runner.buffers["out"].fill(0xFFFF)
            runner.run_once()
            outs[name] = bf16_to_f32(cp.asnumpy(runner.buffers["out"]))
            runners[name] = runner
        same = bool(np.isfinite(outs["plan"]).all() and np.array_equal(outs["plan"], outs["no_pp"]))
        print(f"check {b}x{n} d{d} plan {kernel_label(plans['plan'].kernel)} bit-identical to "
              f"{kernel_label(plans['no_pp'].kernel)}: {same}", flush=True)
        if not same:
            raise AssertionError("differs")
        fns = {k: (lambda r=r: r.launch_call(0)) for k, r in runners.items()}
        for rnd in range(3):
            t = interleave(fns, iterations=40, warmup=1, mode="cold", order="shuffle", seed=rnd)
            base = t["no_pp"].stats.p50_s
            for k, v in t.items():
                row = {"point": f"{b}x{n} d{d}", "round": rnd, "variant": k, "kernel": kernel_label(plans[k].kernel),
                       "p50_us": v.stats.p50_s * 1e6, "TBps": nbytes / v.stats.p50_s / 1e12,
                       "vs_no_pp": v.stats.p50_s / base - 1}
                results["ab"].append(row)
                print(f"r{rnd} {row['point']:14s} {k:6s} {row['kernel']:20s} {row['p50_us']:8.2f} us "
                      f"{row['TBps']:6.3f}TB/s {row['vs_no_pp']:+.2%}", flush=True)
            if graph:
                gt = {k: time_gpu(f, name=k, mode="graph", iterations=40, graph_calls=20).stats.p50_s
                      for k, f in fns.items()}
                print(f"r{rnd} {b}x{n} d{d} in a graph: " + ", ".join(f"{k} {v * 1e6:.2f} us" for k, v in gt.items()),
                      flush=True)
    finally:
        runners.clear()
        for ctx in reversed(ctxs):
            ctx.__exit__(None, None, None)


t0 = time.time()
bad = correctness()
print(f"correctness: {bad} of {len(results['correctness'])} failed, {time.time() - t0:.0f} s", flush=True)
for pt in [(1, 8192, 128, True), (1, 1024, 128), (8, 1024, 128), (1, 32768, 128), (8, 32768, 128)]:
    try:
        ab(*pt)
    except Exception as exc:  # noqa: BLE001
        print(f"ab {pt}: {type(exc).__name__}: {exc}", flush=True)
    with open(f"{OUT}/check_pp.json", "w") as f:
        json.dump(results, f, indent=1)
print(f"elapsed {time.time() - t0:.0f} s", flush=True)
sys.exit(1 if bad else 0)
