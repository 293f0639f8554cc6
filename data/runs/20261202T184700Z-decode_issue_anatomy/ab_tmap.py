"""prefetch.tensormap of the K and V maps by thread 0 at entry (-DTMAP_PREFETCH=1) against the plan's build, same K/V,
same splits and clusters. Per point: outputs poisoned, the variant bit-identical to the plan, then cold interleaved
rounds (p50 of 40, three rounds, shuffled), the short calls also in a CUDA graph. Then per-CTA stamps (-DDIAG_FIRST in
a timeline build: %globaltimer at entry, when the first stage landed, at exit) at 1 x 8k and 1 x 1k d128, both ways."""
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
DEFINES = {"tmap": ("-DTMAP_PREFETCH=1",), "stamp_plan": ("-DDIAG_FIRST",),
           "stamp_tmap": ("-DDIAG_FIRST", "-DTMAP_PREFETCH=1")}


@dataclasses.dataclass(frozen=True)
class DiagBuild(G.KernelBuild):
    defines: tuple = ()

    def options(self):
        return (*super().options(), *self.defines)


_plan = R.plan_for_device


def plan_for_device(g, **kw):
    p = _plan(g, **kw)
    if MODE["v"] in DEFINES:
        f = {fl.name: getattr(p.kernel, fl.name) for fl in dataclasses.fields(p.kernel)}
        p = dataclasses.replace(p, kernel=DiagBuild(**f, defines=DEFINES[MODE["v"]]))
    return p


R.plan_for_device = plan_for_device
results = {"ab": [], "stamps": {}}


def ab(b, n, d, hq, hk, graph=False):
    cp = cupy()
    nbytes = 2 * b * n * hk * d * 2
    variants = ("plan", "tmap")
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
        same = bool(np.isfinite(outs["tmap"]).all() and np.array_equal(outs["tmap"], outs["plan"]))
        print(f"check {b}x{n} d{d} {hq}/{hk} {label} splits {plans['plan'].splits}: tmap bit-identical to the plan: "
              f"{same}", flush=True)
        if not same:
            raise AssertionError("tmap differs")
        fns = {name: (lambda r=r: r.launch_call(0)) for name, r in runners.items()}
        for rnd in range(3):
            timing = interleave(fns, iterations=40, warmup=1, mode="cold", order="shuffle", seed=rnd)
            base = timing["plan"].stats.p50_s
            for name, t in timing.items():
                row = {"point": f"{b}x{n} d{d} {hq}/{hk}", "round": rnd, "variant": name, "kernel": label,
                       "splits": plans[name].splits, "mode": "cold", "p50_us": t.stats.p50_s * 1e6,
                       "TBps": nbytes / t.stats.p50_s / 1e12, "vs_plan": t.stats.p50_s / base - 1}
                results["ab"].append(row)
                print(f"r{rnd} {row['point']:18s} {name:5s} {label:18s} {row['p50_us']:8.2f} us {row['TBps']:6.3f}TB/s "
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
            t0, t1, first = rec[:, 2], rec[:, 3], rec[:, 4]
            base = t0.min()
            per.append({"entry_max": t0.max() - base, "first_min": first.min() - base,
                        "first_p50": np.median(first - base), "first_max": first.max() - base,
                        "exit_p50": np.median(t1 - base), "exit_max": t1.max() - base})
        label = kernel_label(plan.kernel)
    finally:
        del runner
        ctx.__exit__(None, None, None)
    summary = {k: float(np.median([p[k] for p in per])) for k in per[0]}
    key = f"{b}x{n} d{d} {hq}/{hk} {variant} {label}"
    results["stamps"][key] = {"ns_from_first_entry_median_of_calls": summary, "calls": calls}
    print(f"stamps {key}: " + ", ".join(f"{k} {v:.0f}" for k, v in summary.items()), flush=True)


def save():
    with open(f"{OUT}/ab_tmap.json", "w") as f:
        json.dump(results, f, indent=1)


t0 = time.time()
POINTS = [(1, 8192, 128, 32, 8, True), (2, 704, 256, 24, 4, True), (1, 1024, 128, 32, 8, True),
          (64, 1024, 128, 32, 8, False), (256, 1024, 128, 32, 8, False), (1, 32768, 128, 32, 8, False),
          (8, 8192, 128, 32, 8, False), (8, 1024, 128, 32, 8, False), (64, 8192, 128, 32, 8, False),
          (8, 32768, 256, 32, 8, False), (64, 1024, 256, 32, 8, False), (256, 1024, 256, 32, 8, False)]
for pt in POINTS:
    try:
        ab(*pt)
    except Exception as exc:  # noqa: BLE001
        print(f"ab {pt}: {type(exc).__name__}: {exc}", flush=True)
    cupy().get_default_memory_pool().free_all_blocks()
    save()
    print(f"elapsed {time.time() - t0:.0f} s", flush=True)
for pt in [(1, 8192, 128), (1, 1024, 128)]:
    for v in ("stamp_plan", "stamp_tmap", "stamp_plan", "stamp_tmap"):
        try:
            stamps(*pt, v)
        except Exception as exc:  # noqa: BLE001
            print(f"stamps {pt} {v}: {type(exc).__name__}: {exc}", flush=True)
        save()
print(f"elapsed {time.time() - t0:.0f} s", flush=True)
