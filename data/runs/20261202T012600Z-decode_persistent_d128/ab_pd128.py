"""Persistent CTAs at head_dim 128 against the plan (4 per-unit CTAs per SM) at the one-split points behind cuDNN
(64 x 1k, 256 x 1k d128): one 8-warp CTA per SM (the clustered pair's build, which showed no fast-SM spread), the
4-warp 2-stage build at 2 per SM (measured before) and the plan's own one-stage build at 3 per SM; interleaved cold,
shuffled, 40 rounds; outputs checked against the plan's first."""
import json, os
from contextlib import ExitStack
import numpy as np
from labkit.cuda import cupy
from labkit.timing import interleave
from labkit.workloads.decode.bench import shape_runner, kernel_label
from labkit.workloads.decode.inputs import bf16_to_f32

out = os.environ["R"]
cp = cupy()
VARIANTS = {"plan": {}, "P w8s2": dict(persistent=True, warps=8, stages=2),
            "P w4s2": dict(persistent=True, warps=4, stages=2), "P w4s1c1": dict(persistent=True)}
res = {}
for (b, n, d) in ((64, 1024, 128), (256, 1024, 128)):
    with ExitStack() as st:
        runners, outs, labels = {}, {}, {}
        for name, kw in VARIANTS.items():
            try:
                runner, plan, _ = st.enter_context(shape_runner(b, n, d, **kw))
            except Exception as exc:
                print(f"{b}x{n} d{d} {name}: {type(exc).__name__}: {exc}", flush=True); continue
            runner.buffers["out"].fill(0xFFFF); runner.run_once()
            o = bf16_to_f32(cp.asnumpy(runner.buffers["out"]))
            runner.buffers["out"].fill(0xFFFF); runner.run_once()  # again: the claim counter reset itself
            o2 = bf16_to_f32(cp.asnumpy(runner.buffers["out"]))
            if not np.array_equal(o, o2, equal_nan=True):
                print(f"{b}x{n} d{d} {name}: second call differs", flush=True)
            outs[name], runners[name] = o, runner
            labels[name] = f"{kernel_label(plan.kernel)} {plan.ctas_per_sm}/SM" + (
                f" {plan.kernel.persistent_ctas} CTAs" if plan.kernel.persistent_ctas else "")
        ref = outs["plan"]; scale = float(np.abs(ref).max())
        for name in list(runners):
            err = float(np.abs(outs[name] - ref).max())
            ok = bool(np.isfinite(outs[name]).all() and err <= 2.0 ** -7 * scale)
            print(f"check {b}x{n} d{d} {name}: finite {np.isfinite(outs[name]).all()} bit-equal "
                  f"{np.array_equal(outs[name], ref)} max diff {err:.3g} -> {'ok' if ok else 'DROPPED'}", flush=True)
            if not ok:
                runners.pop(name)
        t = interleave({k: (lambda r=r: r.launch_call(0)) for k, r in runners.items()}, iterations=40, warmup=1,
                       mode="cold", order="shuffle")
        base = t["plan"].stats.p50_s
        nbytes = 2 * b * n * 8 * d * 2
        for k, v in t.items():
            print(f"AB {b}x{n} d{d} {k:9s} {labels[k]:28s} p50 {v.stats.p50_s*1e6:8.2f} us "
                  f"{nbytes/v.stats.p50_s/1e12:5.3f} TB/s {v.stats.p50_s/base-1:+.2%}", flush=True)
            res[f"{b}x{n}_d{d}/{k}"] = {"kernel": labels[k], "p50_us": v.stats.p50_s * 1e6,
                                        "samples_us": [s * 1e6 for s in v.samples_s]}
        runners.clear()
    json.dump(res, open(f"{out}/ab_persistent_d128.json", "w"), indent=1)
