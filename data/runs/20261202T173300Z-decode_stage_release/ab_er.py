"""Two stage-loop variants of the 8-warp decode builds against the plan, same K/V, same splits and clusters:
'early' (-DEARLY_RELEASE=1): a stage's K and V fragments go to registers, the stage is released and refilled, then the
math (bit-identical to the plan); 'w16' (d128 only): 16 warps in dim pairs (8 key warps x 16 keys, each half of
head_dim), so a stage's math is spread over twice the warps; 'w16early' both. First every variant against exact
attention over labkit's correctness cases (split counts 1 and 3, clusters of 2, 4 and 8); then per point, outputs
poisoned and compared (early bit-identical to the plan; w16 within bf16 rounding of it) and cold interleaved rounds,
p50 of 40, three rounds; the seed call also in a CUDA graph."""
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
from labkit.workloads.decode import study as S  # noqa: E402
from labkit.workloads.decode.geometry import kernel_label  # noqa: E402
from labkit.workloads.decode.inputs import bf16_to_f32, make_inputs  # noqa: E402
from labkit.workloads.decode.reference import decode_reference  # noqa: E402

OUT = os.environ["R"]
MODE = {"v": None}


@dataclasses.dataclass(frozen=True)
class DiagBuild(G.KernelBuild):
    defines: tuple = ()

    def options(self):
        return (*super().options(), *self.defines)


def variant_build(kb, v):
    f = {fl.name: getattr(kb, fl.name) for fl in dataclasses.fields(kb)}
    if v in ("w16", "w16early"):
        assert kb.variant == "mma" and kb.warps == 8 and kb.head_dim == 128 and kb.dim_warps == 1, kernel_label(kb)
        f.update(warps=16, dim_warps=2)
    return DiagBuild(**f, defines=("-DEARLY_RELEASE=1",) if "early" in v else ())


_plan = R.plan_for_device


def plan_for_device(g, **kw):
    p = _plan(g, **kw)
    if MODE["v"] not in (None, "plan"):
        p = dataclasses.replace(p, kernel=variant_build(p.kernel, MODE["v"]))
    return p


R.plan_for_device = plan_for_device


def correctness(variants):
    bad = 0
    for name, (g, lens, q_lens) in S.CASES.items():
        x = make_inputs(g, seq_lens=lens, q_lens=q_lens, seed=3)
        ref = decode_reference(x, g.head_dim ** -0.5)
        mag = decode_reference(x, g.head_dim ** -0.5, magnitude=True)
        used = int(x.cu_seqlens_q[-1])
        if g.group * g.max_q_len > 16:
            continue
        knobs = dict(warps=8, **({"dim_warps": 2} if g.head_dim == 256 else {}))
        for v in variants:
            if v.startswith("w16") and g.head_dim != 128:
                continue
            for splits, cl in ((1, None), (3, None), (2, True), (4, True), (8, True)):
                if splits > g.max_pages:
                    continue
                MODE["v"] = v
                try:
                    run = R.run_decode(x, splits=splits, stages=2, cluster=cl, **knobs)
                finally:
                    MODE["v"] = None
                err = np.abs(run.out[:used] - ref[:used])
                ok = bool((err <= 2.0 ** -8 * (np.abs(ref[:used]) + mag[:used]) + 1e-3).all()
                          and np.isnan(run.out[used:]).all())
                bad += not ok
                print(f"check {v:8s} {name:38s} splits {splits} cluster {bool(cl)!s:5s} max err {np.nanmax(err):.2e} "
                      f"{'ok' if ok else 'FAILED'}", flush=True)
    return bad


POINTS = [(1, 8192, 128, 32, 8), (1, 32768, 128, 32, 8), (8, 1024, 128, 32, 8), (8, 8192, 128, 32, 8),
          (1, 1024, 128, 32, 8), (1, 8192, 256, 32, 8), (8, 8192, 256, 32, 8), (2, 704, 256, 24, 4),
          (8, 32768, 128, 32, 8)]


def one_point(b, n, d, hq, hk, results):
    cp = cupy()
    nbytes = 2 * b * n * hk * d * 2
    variants = ("plan", "early", "w16", "w16early") if d == 128 else ("plan", "early")
    runners, plans, outs, ctxs = {}, {}, {}, []
    try:
        for name in variants:
            MODE["v"] = name
            ctx = B.shape_runner(b, n, d, heads_q=hq, heads_kv=hk)
            runner, plans[name], _ = ctx.__enter__()
            ctxs.append(ctx)
            MODE["v"] = None
            runner.buffers["out"].fill(0xFFFF)  # poison (bf16 NaN)
            runner.run_once()
            outs[name] = bf16_to_f32(cp.asnumpy(runner.buffers["out"]))
            runners[name] = runner
        label = {k: kernel_label(p.kernel) for k, p in plans.items()}
        for name in variants[1:]:
            fin = bool(np.isfinite(outs[name]).all())
            diff = float(np.nanmax(np.abs(outs[name] - outs["plan"])))
            same = bool(np.array_equal(outs[name], outs["plan"]))
            print(f"check {b}x{n} d{d} {name:8s} {label[name]:16s} splits {plans[name].splits}: finite {fin}, "
                  f"bit-identical {same}, max |diff| {diff:.3g} (|out| max {float(np.abs(outs['plan']).max()):.3g})",
                  flush=True)
            if not fin or (name == "early" and not same) or diff > 4e-3:
                raise AssertionError(f"{name} output wrong at {b}x{n} d{d}")
        fns = {name: (lambda r=r: r.launch_call(0)) for name, r in runners.items()}
        for rnd in range(3):
            timing = interleave(fns, iterations=40, warmup=1, mode="cold", order="shuffle", seed=rnd)
            base = timing["plan"].stats.p50_s
            for name, t in timing.items():
                row = {"point": f"{b}x{n} d{d} {hq}/{hk}", "round": rnd, "variant": name, "kernel": label[name],
                       "splits": plans[name].splits, "mode": "cold", "p50_us": t.stats.p50_s * 1e6,
                       "TBps": nbytes / t.stats.p50_s / 1e12, "vs_plan": t.stats.p50_s / base - 1}
                results.append(row)
                print(f"r{rnd} {row['point']:16s} {name:8s} {label[name]:18s} {row['p50_us']:8.2f} us "
                      f"{row['TBps']:6.3f} TB/s {row['vs_plan']:+.2%}", flush=True)
            if (b, n) == (2, 704):
                gt = {name: time_gpu(f, name=name, mode="graph", iterations=40, graph_calls=20).stats.p50_s
                      for name, f in fns.items()}
                for name, v in gt.items():
                    results.append({"point": f"{b}x{n} d{d} {hq}/{hk}", "round": rnd, "variant": name, "mode": "graph",
                                    "p50_us": v * 1e6, "vs_plan": v / gt["plan"] - 1})
                print(f"r{rnd} seed in a graph: " + ", ".join(f"{k} {v * 1e6:.2f} us" for k, v in gt.items()), flush=True)
        for name, r in runners.items():
            if not np.array_equal(bf16_to_f32(cp.asnumpy(r.buffers["out"])), outs[name]):
                raise AssertionError(f"{name}: timed calls wrote a different output")
    finally:
        runners.clear()
        for ctx in reversed(ctxs):
            ctx.__exit__(None, None, None)


t0 = time.time()
bad = correctness(("plan", "early", "w16", "w16early"))
print(f"correctness: {bad} failed, {time.time() - t0:.0f} s", flush=True)
results = []
for pt in POINTS:
    if bad:
        break
    try:
        one_point(*pt, results)
    except Exception as exc:  # noqa: BLE001
        print(f"{pt}: {type(exc).__name__}: {exc}", flush=True)
    cupy().get_default_memory_pool().free_all_blocks()
    with open(f"{OUT}/ab_er.json", "w") as f:
        json.dump(results, f, indent=1)
    print(f"elapsed {time.time() - t0:.0f} s", flush=True)
