"""The plan's staggered ring (400 cycles at head_dim 128 split calls of one wave) against the same build filled at once
(stagger_cycles=0): interleaved cold, shuffled, 40 rounds, three times per point (and in a CUDA graph at two points);
outputs checked bit-equal."""
import time
from contextlib import ExitStack
import numpy as np
from labkit.cuda import cupy
from labkit.timing import interleave
from labkit.workloads.decode.bench import shape_runner, kernel_label
from labkit.workloads.decode.inputs import bf16_to_f32

cp = cupy()
POINTS = [((1, 8192, 128), ("cold", "graph")), ((1, 32768, 128), ("cold",)), ((8, 1024, 128), ("cold", "graph")),
          ((8, 8192, 128), ("cold",)), ((8, 32768, 128), ("cold",))]
t_start = time.time()
for (b, n, d), modes in POINTS:
    with ExitStack() as st:
        rs, outs, labels = {}, {}, {}
        for name, kw in {"plan": {}, "st0": dict(stagger_cycles=0)}.items():
            r, plan, _ = st.enter_context(shape_runner(b, n, d, **kw))
            r.buffers["out"].fill(0xFFFF); r.run_once()
            outs[name], rs[name] = bf16_to_f32(cp.asnumpy(r.buffers["out"])), r
            labels[name] = f"{kernel_label(plan.kernel)} s{plan.splits} {plan.ctas_per_sm}/SM"
        print(f"check {b}x{n} d{d}: finite {np.isfinite(outs['plan']).all()} "
              f"bit-equal {np.array_equal(outs['plan'], outs['st0'])}", flush=True)
        nbytes = 2 * b * n * 8 * d * 2
        for mode in modes:
            for rnd in range(3):
                t = interleave({k: (lambda r=r: r.launch_call(0)) for k, r in rs.items()}, iterations=40, warmup=1,
                               mode=mode, order="shuffle", seed=rnd)
                base = t["st0"].stats.p50_s
                for k, v in t.items():
                    print(f"AB r{rnd} {mode:5s} {b}x{n} d{d} {k:5s} {labels[k]:26s} p50 {v.stats.p50_s*1e6:8.2f} us "
                          f"{nbytes / v.stats.p50_s / 1e12:6.3f} TB/s {v.stats.p50_s/base-1:+.2%}", flush=True)
        rs.clear()
    print(f"elapsed {time.time() - t_start:.0f} s", flush=True)
