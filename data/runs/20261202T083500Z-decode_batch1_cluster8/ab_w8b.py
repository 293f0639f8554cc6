"""(second round: the clustered 8-warp build against the plan at batch 1, d128 and d256, and 32-key warps in the
cluster) Batch-1 d128 calls with 8-warp CTAs (twice the warps per SM to hide the stage loop's latency; 64 KB stages),
16 splits of 1, 2 or 3 stages, and 8 splits of 2 or 3 stages combined in a cluster of 8 (64 CTAs, no global
partials), and 32-key warps (w4 k32, 2 stages), against the plan (16 splits of 4 warps, 3 stages). Interleaved cold,
shuffled, 40 rounds, three times; outputs checked against the plan's (within 2^-7 of its largest value)."""
import time
from contextlib import ExitStack
import numpy as np
from labkit.cuda import cupy
from labkit.timing import interleave
from labkit.workloads.decode.bench import shape_runner, kernel_label
from labkit.workloads.decode.inputs import bf16_to_f32

cp = cupy()
V = {"plan": {}, "w8s3cl8": dict(splits=8, warps=8, stages=3, cluster=True),
     "k32s3cl8": dict(splits=8, keys_per_warp=32, stages=3, cluster=True)}
V256 = {"plan": {}, "w8d2s3cl8": dict(splits=8, warps=8, dim_warps=2, stages=3, cluster=True),
        "w8d2s2cl8": dict(splits=8, warps=8, dim_warps=2, stages=2, cluster=True)}
V1k = {"plan": {}, "w8s1cl8": dict(splits=8, warps=8, stages=1, cluster=True)}
t_start = time.time()
for (b, n, d), V in (((1, 8192, 128), V), ((1, 32768, 128), V), ((1, 1024, 128), V1k), ((1, 8192, 256), V256),
                      ((1, 32768, 256), V256)):
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
            diff = float(np.abs(outs[name] - ref).max())
            ok = bool(np.isfinite(outs[name]).all() and diff <= 2.0 ** -7 * scale)
            print(f"check {b}x{n} d{d} {name}: ok {ok} max diff {diff:.3g}", flush=True)
            if not ok:
                rs.pop(name)
        nbytes = 2 * b * n * 8 * d * 2
        for rnd in range(3):
            t = interleave({k: (lambda r=r: r.launch_call(0)) for k, r in rs.items()}, iterations=40, warmup=1,
                           mode="cold", order="shuffle", seed=rnd)
            base = t["plan"].stats.p50_s
            for k, v in t.items():
                print(f"AB r{rnd} {b}x{n} d{d} {k:8s} {labels[k]:24s} p50 {v.stats.p50_s*1e6:8.2f} us "
                      f"{nbytes / v.stats.p50_s / 1e12:6.3f} TB/s {v.stats.p50_s/base-1:+.2%}", flush=True)
        rs.clear()
    print(f"elapsed {time.time() - t_start:.0f} s", flush=True)
