"""The cluster split reduction pushed (st.async into the owner's shared memory, counted on its mbarrier; -DCLUSTER_PUSH=1)
against the plan's pull (cluster barrier with release, DSMEM loads, a second cluster barrier): at every bench point
whose plan runs split clusters, the same build otherwise, the same K/V. Outputs must be bit-identical (the same
arithmetic in the same order). Cold: shuffled interleaved rounds, p50 of 40; the seed call also in a CUDA graph."""
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
MODE = {"defines": ()}


@dataclasses.dataclass(frozen=True)
class DiagBuild(G.KernelBuild):
    defines: tuple = ()

    def options(self):
        return (*super().options(), *self.defines)


_plan = R.plan_for_device


def plan_for_device(g, **kw):
    p = _plan(g, **kw)
    if MODE["defines"]:
        p = dataclasses.replace(p, kernel=DiagBuild(**{f.name: getattr(p.kernel, f.name)
                                                      for f in dataclasses.fields(p.kernel)},
                                                   defines=MODE["defines"]))
    return p


R.plan_for_device = plan_for_device
VARIANTS = {"pull": (), "push": ("-DCLUSTER_PUSH=1",)}
POINTS = [(1, 8192, 128, 32, 8), (1, 32768, 128, 32, 8), (1, 1024, 128, 32, 8), (8, 8192, 128, 32, 8),
          (8, 32768, 128, 32, 8), (1, 1024, 256, 32, 8), (8, 1024, 256, 32, 8), (8, 8192, 256, 32, 8),
          (8, 32768, 256, 32, 8), (2, 704, 256, 24, 4)]


def one_point(b, n, d, hq, hk, results):
    cp = cupy()
    nbytes = 2 * b * n * hk * d * 2
    runners, plans, outs = {}, {}, {}
    ctxs = []
    try:
        for name, defines in VARIANTS.items():
            MODE["defines"] = defines
            ctx = B.shape_runner(b, n, d, heads_q=hq, heads_kv=hk)
            runner, plans[name], _ = ctx.__enter__()
            ctxs.append(ctx)
            MODE["defines"] = ()
            runner.buffers["out"].fill(0xFFFF)  # poison
            runner.run_once()
            outs[name] = bf16_to_f32(cp.asnumpy(runner.buffers["out"]))
            runners[name] = runner
        label = kernel_label(plans["pull"].kernel)
        if " cl" not in label:
            print(f"{b}x{n} d{d}: the plan ({label}) runs no split clusters; skipped", flush=True)
            return
        same = bool(np.isfinite(outs["push"]).all() and np.array_equal(outs["push"], outs["pull"]))
        print(f"check {b}x{n} d{d} {hq}/{hk} {label} splits {plans['pull'].splits}: push bit-identical to pull: "
              f"{same}", flush=True)
        if not same:
            raise AssertionError(f"{b}x{n} d{d}: push output differs (max |diff| "
                                 f"{float(np.nanmax(np.abs(outs['push'] - outs['pull']))):.3g})")
        fns = {name: (lambda r=r: r.launch_call(0)) for name, r in runners.items()}
        for rnd in range(3):
            timing = interleave(fns, iterations=40, warmup=1, mode="cold", order="shuffle", seed=rnd)
            base = timing["pull"].stats.p50_s
            for name, t in timing.items():
                row = {"point": f"{b}x{n} d{d} {hq}/{hk}", "round": rnd, "variant": name, "kernel": label,
                       "splits": plans[name].splits, "mode": "cold", "p50_us": t.stats.p50_s * 1e6,
                       "TBps": nbytes / t.stats.p50_s / 1e12, "vs_pull": t.stats.p50_s / base - 1}
                results.append(row)
                print(f"r{rnd} {row['point']:16s} {name:5s} {label:18s} {row['p50_us']:8.2f} us {row['TBps']:6.3f} TB/s "
                      f"{row['vs_pull']:+.2%}", flush=True)
            if (b, n) == (2, 704):
                g = {name: time_gpu(f, name=name, mode="graph", iterations=40, graph_calls=20).stats.p50_s
                     for name, f in fns.items()}
                for name, v in g.items():
                    results.append({"point": f"{b}x{n} d{d} {hq}/{hk}", "round": rnd, "variant": name, "mode": "graph",
                                    "p50_us": v * 1e6, "vs_pull": v / g["pull"] - 1})
                print(f"r{rnd} seed in a graph: pull {g['pull'] * 1e6:.2f} us, push {g['push'] * 1e6:.2f} us", flush=True)
        for name, r in runners.items():
            if not np.array_equal(bf16_to_f32(cp.asnumpy(r.buffers["out"])), outs[name]):
                raise AssertionError(f"{name}: timed calls wrote a different output")
    finally:
        runners.clear()
        for ctx in reversed(ctxs):
            ctx.__exit__(None, None, None)


results = []
t0 = time.time()
for pt in POINTS:
    try:
        one_point(*pt, results)
    except Exception as exc:  # noqa: BLE001
        print(f"{pt}: {type(exc).__name__}: {exc}", flush=True)
    cupy().get_default_memory_pool().free_all_blocks()
    with open(f"{OUT}/ab_push.json", "w") as f:
        json.dump(results, f, indent=1)
    print(f"elapsed {time.time() - t0:.0f} s", flush=True)
