"""The plan's build against the same plan with swapped operands (S^T = K Q^T, O^T += V^T P^T: K and V on the mma's
16-wide side, 8 rows per CTA, half the mmas of the 16-row layout) at the bench's points, plus 8 warps x 2 stages
swapped at the short d128 calls; interleaved cold, shuffled, 40 rounds; each output checked against the plan's."""
import json, os, sys
from contextlib import ExitStack
import numpy as np
from labkit.cuda import cupy
from labkit.timing import interleave
from labkit.workloads.decode.bench import shape_runner, kernel_label
from labkit.workloads.decode.inputs import bf16_to_f32

out = os.environ["R"]
cp = cupy()
POINTS = [(1, 8192, 128), (8, 1024, 128), (8, 8192, 128), (1, 32768, 128), (64, 1024, 128), (256, 1024, 128),
          (64, 8192, 128), (8, 32768, 128), (256, 8192, 128),
          (1, 8192, 256), (8, 1024, 256), (8, 8192, 256), (64, 1024, 256), (256, 1024, 256), (64, 8192, 256)]
res = {}
for (b, n, d) in POINTS:
    variants = {"plan": {}, "swap": dict(swap_ab=True)}
    if b <= 8 and d == 128:
        variants["swap_w8s2"] = dict(swap_ab=True, warps=8, stages=2)
    with ExitStack() as st:
        runners, outs, labels = {}, {}, {}
        for name, kw in variants.items():
            try:
                runner, plan, _ = st.enter_context(shape_runner(b, n, d, **kw))
            except Exception as exc:
                print(f"{b}x{n} d{d} {name}: {type(exc).__name__}: {exc}", flush=True); continue
            runner.buffers["out"].fill(0xFFFF); runner.run_once()
            outs[name], runners[name] = bf16_to_f32(cp.asnumpy(runner.buffers["out"])), runner
            labels[name] = f"{kernel_label(plan.kernel)} s{plan.splits} {plan.ctas_per_sm}/SM"
        ref = outs["plan"]; scale = float(np.abs(ref).max())
        for name in list(runners):
            err = float(np.abs(outs[name] - ref).max())
            ok = bool(np.isfinite(outs[name]).all() and err <= 2.0 ** -7 * scale)
            print(f"check {b}x{n} d{d} {name}: max diff {err:.3g} (scale {scale:.3g}) -> {'ok' if ok else 'DROPPED'}",
                  flush=True)
            if not ok:
                runners.pop(name)
        t = interleave({k: (lambda r=r: r.launch_call(0)) for k, r in runners.items()}, iterations=40, warmup=1,
                       mode="cold", order="shuffle")
        base = t["plan"].stats.p50_s
        nbytes = 2 * b * n * 8 * d * 2
        for k, v in t.items():
            print(f"AB {b}x{n} d{d} {k:9s} {labels[k]:30s} p50 {v.stats.p50_s*1e6:9.2f} us "
                  f"{nbytes/v.stats.p50_s/1e12:5.3f} TB/s {v.stats.p50_s/base-1:+.2%}", flush=True)
            res[f"{b}x{n}_d{d}/{k}"] = {"kernel": labels[k], "p50_us": v.stats.p50_s * 1e6,
                                        "samples_us": [s * 1e6 for s in v.samples_s]}
        runners.clear()
    json.dump(res, open(f"{out}/ab_swap.json", "w"), indent=1)
