"""(a) Where a split-cluster call's time goes after its stage loop: the plan's build with -DLABKIT_TIMELINE
-DDIAG_STAMPS (%globaltimer by thread 0 of each CTA at entry, first stage landed, loop end, warps merged, every
peer's push landed, exit), 15 cold calls per point (flush, scratch zeroed, launch), and the plan's cold p50 beside
it. (b) The short d256 cluster-of-8 calls whose splits hold 2 stages of 64 tokens in a one-stage ring: the plan
against EARLY_RELEASE and against 2 stages, cold interleaved (40, p50, 3 rounds) and the seed call in a graph."""
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
from labkit.workloads.decode.geometry import kernel_label  # noqa: E402
from labkit.workloads.decode.inputs import bf16_to_f32  # noqa: E402

OUT = os.environ["R"]
MODE = {"v": None}


@dataclasses.dataclass(frozen=True)
class DiagBuild(G.KernelBuild):
    defines: tuple = ()

    def options(self):
        return (*super().options(), *self.defines)


def variant_build(kb, v):
    f = {fl.name: getattr(kb, fl.name) for fl in dataclasses.fields(kb)}
    defines = ()
    if v == "stamps":
        defines = ("-DDIAG_STAMPS",)
    elif v == "early":
        defines = ("-DEARLY_RELEASE=1",)
    elif v == "s2":
        f.update(stages=2)
    return DiagBuild(**f, defines=defines)


_plan = R.plan_for_device


def plan_for_device(g, **kw):
    p = _plan(g, **kw)
    if MODE["v"] not in (None, "plan"):
        p = dataclasses.replace(p, kernel=variant_build(p.kernel, MODE["v"]))
    return p


R.plan_for_device = plan_for_device
results = {"stamps": {}, "ab": []}


def stamps(b, n, d, hq=32, hk=8, calls=15):
    cp = cupy()
    MODE["v"] = "stamps"
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
            first, loop, t0, t1, merge, landed = (rec[:, i] for i in range(6))
            base = t0.min()
            per.append({"entry_max": t0.max() - base, "first_p50": np.median(first - base),
                        "first_max": first.max() - base, "loop_min": loop.min() - base,
                        "loop_p50": np.median(loop - base), "loop_max": loop.max() - base,
                        "merge_max": merge.max() - base, "landed_max": landed.max() - base,
                        "exit_max": t1.max() - base,
                        "merge_minus_loop_p50": np.median(merge - loop),
                        "landed_minus_cluster_loop_max_p50": np.median(
                            landed - loop.reshape(-1, plan.splits).max(axis=1).repeat(plan.splits)),
                        "exit_minus_landed_p50": np.median(t1 - landed)})
        label = kernel_label(plan.kernel)
    finally:
        del runner
        ctx.__exit__(None, None, None)
    ctx = B.shape_runner(b, n, d, heads_q=hq, heads_kv=hk)
    runner, plan, _ = ctx.__enter__()
    try:
        runner.run_once()
        p50 = runner.time(iterations=40, mode="cold")["decode/paged"].stats.p50_s * 1e6
    finally:
        del runner
        ctx.__exit__(None, None, None)
    summary = {k: float(np.median([p[k] for p in per])) for k in per[0]}
    key = f"{b}x{n} d{d} {hq}/{hk} {label}"
    results["stamps"][key] = {"plan_cold_p50_us": p50, "ns_median_of_calls": summary, "calls": calls}
    print(f"stamps {key}: plan cold p50 {p50:.2f} us; ns from the first CTA's entry (median of {calls} calls):",
          flush=True)
    print("   " + ", ".join(f"{k} {v:.0f}" for k, v in summary.items()), flush=True)


def ab(b, n, d, hq, hk):
    cp = cupy()
    nbytes = 2 * b * n * hk * d * 2
    variants = ("plan", "early", "s2")
    runners, plans, outs, ctxs = {}, {}, {}, []
    try:
        for name in variants:
            MODE["v"] = name
            ctx = B.shape_runner(b, n, d, heads_q=hq, heads_kv=hk)
            runner, plans[name], _ = ctx.__enter__()
            ctxs.append(ctx)
            MODE["v"] = None
            runner.buffers["out"].fill(0xFFFF)
            runner.run_once()
            outs[name] = bf16_to_f32(cp.asnumpy(runner.buffers["out"]))
            runners[name] = runner
        label = {k: kernel_label(p.kernel) for k, p in plans.items()}
        for name in variants[1:]:
            same = bool(np.isfinite(outs[name]).all() and np.array_equal(outs[name], outs["plan"]))
            print(f"check {b}x{n} d{d} {name} {label[name]}: bit-identical to the plan: {same}", flush=True)
            if not same:
                raise AssertionError(f"{name} differs")
        fns = {name: (lambda r=r: r.launch_call(0)) for name, r in runners.items()}
        for rnd in range(3):
            timing = interleave(fns, iterations=40, warmup=1, mode="cold", order="shuffle", seed=rnd)
            base = timing["plan"].stats.p50_s
            for name, t in timing.items():
                row = {"point": f"{b}x{n} d{d} {hq}/{hk}", "round": rnd, "variant": name, "kernel": label[name],
                       "mode": "cold", "p50_us": t.stats.p50_s * 1e6, "TBps": nbytes / t.stats.p50_s / 1e12,
                       "vs_plan": t.stats.p50_s / base - 1}
                results["ab"].append(row)
                print(f"r{rnd} {row['point']:16s} {name:6s} {label[name]:18s} {row['p50_us']:8.2f} us "
                      f"{row['vs_plan']:+.2%}", flush=True)
            gt = {name: time_gpu(f, name=name, mode="graph", iterations=40, graph_calls=20).stats.p50_s
                  for name, f in fns.items()}
            for name, v in gt.items():
                results["ab"].append({"point": f"{b}x{n} d{d} {hq}/{hk}", "round": rnd, "variant": name,
                                      "mode": "graph", "p50_us": v * 1e6, "vs_plan": v / gt["plan"] - 1})
            print(f"r{rnd} graph: " + ", ".join(f"{k} {v * 1e6:.2f} us" for k, v in gt.items()), flush=True)
    finally:
        runners.clear()
        for ctx in reversed(ctxs):
            ctx.__exit__(None, None, None)


t0 = time.time()
for pt in [(1, 8192, 128), (1, 32768, 128), (8, 1024, 128), (1, 1024, 128), (8, 8192, 128)]:
    try:
        stamps(*pt)
    except Exception as exc:  # noqa: BLE001
        print(f"stamps {pt}: {type(exc).__name__}: {exc}", flush=True)
    with open(f"{OUT}/diag.json", "w") as f:
        json.dump(results, f, indent=1)
for pt in [(2, 704, 256, 24, 4), (1, 1024, 256, 32, 8), (1, 704, 256, 32, 8)]:
    try:
        ab(*pt)
    except Exception as exc:  # noqa: BLE001
        print(f"ab {pt}: {type(exc).__name__}: {exc}", flush=True)
    with open(f"{OUT}/diag.json", "w") as f:
        json.dump(results, f, indent=1)
print(f"elapsed {time.time() - t0:.0f} s", flush=True)
