"""The plan at 8 x 8k and 8 x 32k d128 as it now runs (2 splits of one 8-warp CTA per SM, in a cluster of 2) against\nits previous call (4 splits of 4 warps, 2 CTAs per SM), interleaved cold on the same data, 60 rounds."""
import json, os, sys
from contextlib import ExitStack, contextmanager
from pathlib import Path
import numpy as np
from labkit.cuda import cupy
from labkit.timing import interleave
from labkit.workloads.decode.bench import shape_runner, kernel_label
from labkit.workloads.decode.inputs import bf16_to_f32
from labkit.workloads.decode import build as _b
B = sys.modules["labkit.workloads.decode.build"]

out = os.environ["R"]
cp = cupy()
OLD = Path(".dbg/old").resolve()


@contextmanager
def old_source():
    real = B.kernel_path
    B.kernel_path = lambda f, name: OLD / name
    try:
        yield
    finally:
        B.kernel_path = real


POINTS = {
    (8, 8192, 128): {"plan": {}, "old plan": {"warps": 4, "stages": 3, "splits": 4, "cluster": False}},
    (8, 32768, 128): {"plan": {}, "old plan": {"warps": 4, "stages": 3, "splits": 4, "cluster": False}},
}
res = {}
for (b, n, d), knobs in POINTS.items():
    with ExitStack() as st:
        runners, outs, labels = {}, {}, {}
        for name, kw in knobs.items():
            kw = dict(kw)
            old = kw.pop("old", False)
            try:
                if old:
                    with old_source():
                        runner, plan, _ = st.enter_context(shape_runner(b, n, d, **kw))
                else:
                    runner, plan, _ = st.enter_context(shape_runner(b, n, d, **kw))
            except Exception as exc:
                print(f"{b}x{n} d{d} {name}: {type(exc).__name__}: {exc}", flush=True); continue
            runner.buffers["out"].fill(0xFFFF); runner.run_once()
            o = bf16_to_f32(cp.asnumpy(runner.buffers["out"]))
            runner.buffers["out"].fill(0xFFFF); runner.run_once()  # again: the claim counter reset itself
            o2 = bf16_to_f32(cp.asnumpy(runner.buffers["out"]))
            if not np.array_equal(o, o2, equal_nan=True):
                print(f"{b}x{n} d{d} {name}: second call differs", flush=True)
            outs[name] = o
            runners[name] = runner
            labels[name] = f"{kernel_label(plan.kernel)} s{plan.splits} {plan.ctas_per_sm}/SM" + (
                f" P{plan.kernel.persistent_ctas}" if plan.kernel.persistent_ctas else "")
        ref = outs["plan"]; scale = float(np.abs(ref).max())
        for name in list(runners):
            err = float(np.abs(outs[name] - ref).max())
            same = np.array_equal(outs[name], ref)
            print(f"check {b}x{n} d{d} {name}: finite {np.isfinite(outs[name]).all()} bit-equal {same} max diff {err:.3g}", flush=True)
            if not (np.isfinite(outs[name]).all() and err <= 2.0 ** -7 * scale):
                print(f"{b}x{n} d{d} {name}: output differs by {err:.3g}; dropped", flush=True); runners.pop(name)
        t = interleave({k: (lambda r=r: r.launch_call(0)) for k, r in runners.items()}, iterations=60, warmup=1,
                       mode="cold", order="shuffle")
        base = t["plan"].stats.p50_s
        for k, v in t.items():
            nbytes = 2 * b * n * 8 * d * 2
            print(f"AB {b}x{n} d{d} {k:10s} {labels[k]:40s} p50 {v.stats.p50_s*1e6:8.2f} us {nbytes/v.stats.p50_s/1e12:5.3f} TB/s "
                  f"{v.stats.p50_s/base-1:+.2%}", flush=True)
            res[f"{b}x{n}_d{d}/{k}"] = {"kernel": labels[k], "p50_us": v.stats.p50_s * 1e6,
                                        "samples_us": [s * 1e6 for s in v.samples_s]}
        runners.clear(); del runner
    json.dump(res, open(f"{out}/ab_plan_b8.json", "w"), indent=1)
