"""Split counts at the batch-1 d128 calls after the lazy rescale: the plan (16 splits of the 3-stage 4-warp build, one
CTA per SM) against 24 and 32 splits (two CTAs per SM), and 32 splits of 2 stages; interleaved cold, shuffled, 40
rounds; outputs checked against the plan's."""
import os
from contextlib import ExitStack
import numpy as np
from labkit.cuda import cupy
from labkit.timing import interleave
from labkit.workloads.decode.bench import shape_runner, kernel_label
from labkit.workloads.decode.inputs import bf16_to_f32

cp = cupy()
V = {"plan": {}, "s24": dict(splits=24), "s32": dict(splits=32), "s32_st2": dict(splits=32, stages=2),
     "s8": dict(splits=8)}
for (b, n, d) in ((1, 8192, 128), (1, 32768, 128), (1, 8192, 256)):
    with ExitStack() as st:
        rs, outs, labels = {}, {}, {}
        for name, kw in V.items():
            try:
                r, plan, _ = st.enter_context(shape_runner(b, n, d, **kw))
            except Exception as exc:
                print(f"{b}x{n} d{d} {name}: {type(exc).__name__}: {exc}", flush=True); continue
            r.buffers["out"].fill(0xFFFF); r.run_once()
            outs[name], rs[name] = bf16_to_f32(cp.asnumpy(r.buffers["out"])), r
            labels[name] = f"{kernel_label(plan.kernel)} s{plan.splits} {plan.ctas_per_sm}/SM"
        ref = outs["plan"]; scale = float(np.abs(ref).max())
        for name in list(rs):
            if not (np.isfinite(outs[name]).all() and np.abs(outs[name] - ref).max() <= 2.0 ** -7 * scale):
                print(f"check {b}x{n} d{d} {name}: DROPPED", flush=True); rs.pop(name)
        t = interleave({k: (lambda r=r: r.launch_call(0)) for k, r in rs.items()}, iterations=40, warmup=1,
                       mode="cold", order="shuffle")
        base = t["plan"].stats.p50_s
        for k, v in t.items():
            print(f"AB {b}x{n} d{d} {k:8s} {labels[k]:26s} p50 {v.stats.p50_s*1e6:8.2f} us {v.stats.p50_s/base-1:+.2%}",
                  flush=True)
        rs.clear()
