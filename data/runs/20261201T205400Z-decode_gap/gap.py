"""Where the points behind a peer spend their time: cold per-CTA timelines of the plan (timeline builds now keep the
plan's CTAs per SM), and an interleaved A/B of build knobs at the one-split d128 points (same data, outputs
checked against the plan's within 2^-7)."""
import json, os, sys
from contextlib import ExitStack
import numpy as np
from labkit.cuda import cupy
from labkit.timing import interleave
from labkit.workloads.decode.bench import shape_runner, kernel_label
from labkit.workloads.decode.inputs import bf16_to_f32
from labkit.workloads.decode.run import decode_timeline

out = os.environ["R"]
for b, n, d in [(64, 1024, 128), (256, 1024, 128), (8, 8192, 128), (64, 1024, 256), (8, 32768, 128)]:
    tl = decode_timeline(b, n, d, cold=True)
    tl.save(f"{out}/timeline_{b}x{n}_d{d}.json")
    r = tl.records
    dur = (r[:, 3] - r[:, 2]) / 1e3
    drain = tl.sm_drain_ns() / 1e3
    print(f"timeline {b}x{n} d{d}: {len(r)} CTAs, {tl.ctas_per_sm}/SM, makespan {tl.stats().makespan_ns/1e3:.1f} us, "
          f"CTA us p10/p50/p90 {np.percentile(dur,10):.1f}/{np.median(dur):.1f}/{np.percentile(dur,90):.1f}; "
          f"resident by 20ths {' '.join(map(str, tl.active_ctas(20)))}; SM idle before end median {np.median(drain):.1f} "
          f"p90 {np.percentile(drain,90):.1f}", flush=True)

cp = cupy()
knobs = {"plan": {}, "splits 2": {"splits": 2}, "stages 2": {"stages": 2}, "ef": {"kv_evict_first": True},
         "qk_chains 2": {"qk_chains": 2}, "keys 32": {"keys_per_warp": 32}}
res = {}
for b, n, d in [(64, 1024, 128), (256, 1024, 128)]:
    with ExitStack() as st:
        runners, outs, labels = {}, {}, {}
        for name, kw in knobs.items():
            try:
                runner, plan, _ = st.enter_context(shape_runner(b, n, d, **kw))
            except Exception as exc:
                print(f"{b}x{n} d{d} {name}: {type(exc).__name__}: {exc}", flush=True); continue
            runner.buffers["out"].fill(0xFFFF); runner.run_once()
            outs[name] = bf16_to_f32(cp.asnumpy(runner.buffers["out"]))
            runners[name] = runner; labels[name] = f"{kernel_label(plan.kernel)} s{plan.splits} {plan.ctas_per_sm}/SM"
        ref = outs["plan"]; scale = float(np.abs(ref).max())
        for name in list(runners):
            err = float(np.abs(outs[name] - ref).max())
            if not (np.isfinite(outs[name]).all() and err <= 2.0 ** -7 * scale):
                print(f"{b}x{n} d{d} {name}: output differs by {err:.3g}; dropped", flush=True); runners.pop(name)
        t = interleave({k: (lambda r=r: r.launch_call(0)) for k, r in runners.items()}, iterations=30, warmup=1,
                       mode="cold", order="shuffle")
        base = t["plan"].stats.p50_s
        for k, v in t.items():
            nbytes = 2 * b * n * 8 * d * 2
            print(f"AB {b}x{n} d{d} {k:12s} {labels[k]:28s} p50 {v.stats.p50_s*1e6:8.2f} us {nbytes/v.stats.p50_s/1e12:5.2f} TB/s "
                  f"{v.stats.p50_s/base-1:+.1%}", flush=True)
            res[f"{b}x{n}_d{d}/{k}"] = {"kernel": labels[k], "p50_us": v.stats.p50_s * 1e6}
        runners.clear(); del runner
json.dump(res, open(f"{out}/ab.json", "w"), indent=1)
