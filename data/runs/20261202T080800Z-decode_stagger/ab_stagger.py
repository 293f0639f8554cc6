"""Staggered ring fill (STAGGER_CYCLES): each CTA issues its first stage at once and the ring's later stages n SM
cycles apart, so that all CTAs' first stages are ahead of the later ones in DRAM's queues; against the plan (the whole
ring at once). Interleaved cold, shuffled, 40 rounds, twice; outputs checked bit-equal to the plan's."""
import sys, time
from contextlib import ExitStack
import numpy as np
from labkit.cuda import cupy
from labkit.timing import interleave
from labkit.workloads.decode.bench import shape_runner, kernel_label
from labkit.workloads.decode.inputs import bf16_to_f32

cp = cupy()
S = (400, 800, 1600)
POINTS = [
    ((1, 8192, 128), {"plan": {}, **{f"st{c}": dict(stagger_cycles=c) for c in S},
                      "s4": dict(splits=16, stages=4), "s4st800": dict(splits=16, stages=4, stagger_cycles=800),
                      "s4st1600": dict(splits=16, stages=4, stagger_cycles=1600)}),
    ((1, 32768, 128), {"plan": {}, **{f"st{c}": dict(stagger_cycles=c) for c in S},
                       "s4st800": dict(splits=16, stages=4, stagger_cycles=800)}),
    ((8, 1024, 128), {"plan": {}, **{f"st{c}": dict(stagger_cycles=c) for c in S}}),
    ((8, 8192, 128), {"plan": {}, **{f"st{c}": dict(stagger_cycles=c) for c in S}}),
    ((1, 8192, 256), {"plan": {}, **{f"st{c}": dict(stagger_cycles=c) for c in S}}),
    ((8, 8192, 256), {"plan": {}, **{f"st{c}": dict(stagger_cycles=c) for c in (400, 800)}}),
]
modes = sys.argv[1:] or ["cold"]
t_start = time.time()
for (b, n, d), V in POINTS:
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
        ref = outs["plan"]
        for name in list(rs):
            same = np.array_equal(outs[name], ref)
            print(f"check {b}x{n} d{d} {name}: finite {np.isfinite(outs[name]).all()} bit-equal {same} "
                  f"max diff {np.abs(outs[name] - ref).max():.3g}", flush=True)
            if not np.isfinite(outs[name]).all():
                rs.pop(name)
        nbytes = 2 * b * n * 8 * d * 2
        for mode in modes:
            for rnd in range(2):
                t = interleave({k: (lambda r=r: r.launch_call(0)) for k, r in rs.items()}, iterations=40, warmup=1,
                               mode=mode, order="shuffle", seed=rnd)
                base = t["plan"].stats.p50_s
                for k, v in t.items():
                    print(f"AB r{rnd} {mode:5s} {b}x{n} d{d} {k:9s} {labels[k]:28s} p50 {v.stats.p50_s*1e6:8.2f} us "
                          f"{nbytes / v.stats.p50_s / 1e12:6.3f} TB/s {v.stats.p50_s/base-1:+.2%}", flush=True)
        rs.clear()
    print(f"elapsed {time.time() - t_start:.0f} s", flush=True)
