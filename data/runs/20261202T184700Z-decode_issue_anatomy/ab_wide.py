"""Wide boxes (KernelBuild.wide_boxes, -DWIDE_BOXES=1: 5-D tensor maps over (64 dims, page rows, head_dim / 64 parts,
heads, pages), one TMA load per page slice for all its parts: half the loads at head_dim 128, a quarter at 256) against
the plan's build, same K/V, splits and clusters. Thread 0's refills (8 loads of 8 KB at 1 x 8k d128) took ~0.45 us
each whoever issued them and wherever the page ids came from (loop.py, ab_spread.py, ab_pg.py). First the variant
against exact attention over labkit's correctness cases (4- and 8-warp builds, 1 and 3 stages, split counts 1 and 3,
clusters of 2 and 8); per point, outputs poisoned, the variant bit-identical to the plan, cold interleaved rounds (p50
of 40, three rounds, shuffled), the short calls also in a CUDA graph."""
import dataclasses
import json
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.getcwd())
from labkit.cuda import cupy  # noqa: E402
from labkit.timing import flush_l2, interleave, time_gpu  # noqa: E402
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

    @property
    def threads(self):  # the launch's block: one more warp with a producer
        return 32 * (self.warps + any("PRODUCER_WARP=1" in d for d in self.defines))


_plan = R.plan_for_device


def plan_for_device(g, **kw):
    p = _plan(g, **kw)
    if MODE["v"] == "wide":
        p = dataclasses.replace(p, kernel=dataclasses.replace(p.kernel, wide_boxes=True))
    return p


R.plan_for_device = plan_for_device
results = {"ab": [], "stamps": {}}


def ab(b, n, d, hq, hk, graph=False):
    cp = cupy()
    nbytes = 2 * b * n * hk * d * 2
    variants = ("plan", "wide")
    runners, plans, outs, ctxs = {}, {}, {}, []
    try:
        for name in variants:
            MODE["v"] = name
            try:
                ctx = B.shape_runner(b, n, d, heads_q=hq, heads_kv=hk)
                runner, plans[name], _ = ctx.__enter__()
            finally:
                MODE["v"] = None
            ctxs.append(ctx)
            runner.buffers["out"].fill(0xFFFF)  # poison (bf16 NaN)
            runner.run_once()
            outs[name] = bf16_to_f32(cp.asnumpy(runner.buffers["out"]))
            runners[name] = runner
        label = kernel_label(plans["plan"].kernel)
        same = bool(np.isfinite(outs["wide"]).all() and np.array_equal(outs["wide"], outs["plan"]))
        print(f"check {b}x{n} d{d} {hq}/{hk} {label} splits {plans['plan'].splits}: wide bit-identical to the plan: "
              f"{same}", flush=True)
        if not same:
            raise AssertionError("wide differs")
        fns = {name: (lambda r=r: r.launch_call(0)) for name, r in runners.items()}
        for rnd in range(3):
            timing = interleave(fns, iterations=40, warmup=1, mode="cold", order="shuffle", seed=rnd)
            base = timing["plan"].stats.p50_s
            for name, t in timing.items():
                row = {"point": f"{b}x{n} d{d} {hq}/{hk}", "round": rnd, "variant": name, "kernel": label,
                       "splits": plans[name].splits, "mode": "cold", "p50_us": t.stats.p50_s * 1e6,
                       "TBps": nbytes / t.stats.p50_s / 1e12, "vs_plan": t.stats.p50_s / base - 1}
                results["ab"].append(row)
                print(f"r{rnd} {row['point']:18s} {name:6s} {label:18s} {row['p50_us']:8.2f} us {row['TBps']:6.3f}TB/s "
                      f"{row['vs_plan']:+.2%}", flush=True)
            if graph:
                gt = {name: time_gpu(f, name=name, mode="graph", iterations=40, graph_calls=20).stats.p50_s
                      for name, f in fns.items()}
                for name, v in gt.items():
                    results["ab"].append({"point": f"{b}x{n} d{d} {hq}/{hk}", "round": rnd, "variant": name,
                                          "mode": "graph", "p50_us": v * 1e6, "vs_plan": v / gt["plan"] - 1})
                print(f"r{rnd} {b}x{n} d{d} in a graph: " + ", ".join(f"{k} {v * 1e6:.2f} us" for k, v in gt.items()),
                      flush=True)
        for name, r in runners.items():
            if not np.array_equal(bf16_to_f32(cp.asnumpy(r.buffers["out"])), outs[name]):
                raise AssertionError(f"{name}: timed calls wrote a different output")
    finally:
        runners.clear()
        for ctx in reversed(ctxs):
            ctx.__exit__(None, None, None)


def stamps(b, n, d, variant, hq=32, hk=8, calls=15):
    cp = cupy()
    MODE["v"] = variant
    try:
        ctx = B.shape_runner(b, n, d, heads_q=hq, heads_kv=hk, timeline=True)
        runner, plan, _ = ctx.__enter__()
    finally:
        MODE["v"] = None
    try:
        runner.run_once()
        per = []
        for _ in range(calls):
            flush_l2()
            runner.run_once()
            rec = cp.asnumpy(runner.scratch[("decode", "timeline")]).view(np.uint64).reshape(-1, 6).astype(np.int64)
            f = {"wait": rec[:, 0], "math": rec[:, 1], "sync": rec[:, 4], "refill": rec[:, 5],
                 "span": rec[:, 3] - rec[:, 2]}
            row = {f"{k}_p50": float(np.median(v)) for k, v in f.items()}
            row["exit_max"] = float(rec[:, 3].max() - rec[:, 2].min())
            per.append(row)
        label = kernel_label(plan.kernel)
    finally:
        del runner
        ctx.__exit__(None, None, None)
    summary = {k: float(np.median([p[k] for p in per])) for k in per[0]}
    key = f"{b}x{n} d{d} {hq}/{hk} {variant} {label}"
    results["stamps"][key] = {"ns_from_first_entry_median_of_calls": summary, "calls": calls}
    print(f"stamps {key}: " + ", ".join(f"{k} {v:.0f}" for k, v in summary.items()), flush=True)


checked = []


def correctness():
    bad = 0
    for name, (g, lens, q_lens) in S.CASES.items():
        x = make_inputs(g, seq_lens=lens, q_lens=q_lens, seed=3)
        ref = decode_reference(x, g.head_dim ** -0.5)
        mag = decode_reference(x, g.head_dim ** -0.5, magnitude=True)
        used = int(x.cu_seqlens_q[-1])
        for knobs in ({"warps": 4}, {"warps": 8, **({"dim_warps": 2} if g.head_dim == 256 else {})}):
            for stages in (1, 3):
                for splits, cl in ((1, None), (3, None), (2, True), (8, True)):
                    if splits > g.max_pages or (cl and g.group * g.max_q_len > 16):
                        continue
                    MODE["v"] = "wide"
                    try:
                        run = R.run_decode(x, splits=splits, stages=stages, cluster=cl, **knobs)
                    except Exception as exc:  # noqa: BLE001  (a build that does not fit: not this variant's concern)
                        print(f"skip {name} {knobs} stages {stages} splits {splits}: {type(exc).__name__}: {exc}",
                              flush=True)
                        continue
                    finally:
                        MODE["v"] = None
                    err = np.abs(run.out[:used] - ref[:used])
                    ok = bool((err <= 2.0 ** -8 * (np.abs(ref[:used]) + mag[:used]) + 1e-3).all()
                              and np.isnan(run.out[used:]).all())
                    bad += not ok
                    checked.append(ok)
                    print(f"{'check' if ok else 'FAILED'} wide {name} {knobs} stages {stages} splits {splits} "
                          f"cluster {bool(cl)}: max err {np.nanmax(err):.2e}", flush=True)
    return bad


def save():
    with open(f"{OUT}/ab_wide.json", "w") as f:
        json.dump(results, f, indent=1)


t0 = time.time()
bad = correctness()
print(f"correctness: {bad} of {len(checked)} failed, {time.time() - t0:.0f} s", flush=True)
if bad:
    sys.exit(1)
POINTS = [(1, 8192, 128, 32, 8, True), (2, 704, 256, 24, 4, True), (1, 1024, 128, 32, 8, True),
          (1, 32768, 128, 32, 8, False), (8, 8192, 128, 32, 8, False), (8, 1024, 128, 32, 8, False),
          (64, 1024, 128, 32, 8, False), (256, 1024, 128, 32, 8, False), (64, 8192, 128, 32, 8, False),
          (1, 8192, 256, 32, 8, False), (8, 32768, 256, 32, 8, False), (64, 1024, 256, 32, 8, False),
          (256, 1024, 256, 32, 8, False)]
for pt in POINTS:
    try:
        ab(*pt)
    except Exception as exc:  # noqa: BLE001
        print(f"ab {pt}: {type(exc).__name__}: {exc}", flush=True)
    cupy().get_default_memory_pool().free_all_blocks()
    save()
    print(f"elapsed {time.time() - t0:.0f} s", flush=True)
print(f"elapsed {time.time() - t0:.0f} s", flush=True)
