"""The one-stage d128 plan (4-warp CTAs, 128 registers, 4 per SM) against the same build bounded to 5 CTAs per SM
(__launch_bounds__(128, 5): 96 registers, ptxas spills 392 bytes) at the one-split d128 points, two of them behind
cuDNN (64 x 1k, 256 x 1k); interleaved cold, shuffled, 40 rounds; outputs checked against the plan's first."""
import dataclasses, json, os
from contextlib import ExitStack
import numpy as np
import labkit.workloads.decode.run as run_mod
from labkit.cuda import cupy
from labkit.timing import interleave
from labkit.workloads.decode.bench import shape_runner, kernel_label
from labkit.workloads.decode.build import occupancy
from labkit.workloads.decode.inputs import bf16_to_f32

out = os.environ["R"]
cp = cupy()
real_plan_call = run_mod.plan_call


def plan_call(g, *, min_ctas=0, **kw):  # the plan, its kernel bounded to min_ctas CTAs per SM
    p = real_plan_call(g, **kw)
    if not min_ctas:
        return p
    kb = dataclasses.replace(p.kernel, min_ctas=min_ctas)
    return dataclasses.replace(p, kernel=kb, ctas_per_sm=occupancy(kb, kw.get("arch", "sm_90")).ctas_per_sm)


run_mod.plan_call = plan_call
VARIANTS = {"plan": {}, "mc5": dict(min_ctas=5)}
res = {}
for (b, n, d) in ((64, 1024, 128), (256, 1024, 128), (64, 8192, 128), (256, 8192, 128)):
    with ExitStack() as st:
        runners, outs, labels = {}, {}, {}
        for name, kw in VARIANTS.items():
            try:
                runner, plan, _ = st.enter_context(shape_runner(b, n, d, **kw))
            except Exception as exc:
                print(f"{b}x{n} d{d} {name}: {type(exc).__name__}: {exc}", flush=True); continue
            runner.buffers["out"].fill(0xFFFF); runner.run_once()
            outs[name], runners[name] = bf16_to_f32(cp.asnumpy(runner.buffers["out"])), runner
            labels[name] = f"{kernel_label(plan.kernel)} {plan.ctas_per_sm}/SM mc{plan.kernel.min_ctas}"
        ref = outs["plan"]; scale = float(np.abs(ref).max())
        for name in list(runners):
            err = float(np.abs(outs[name] - ref).max())
            ok = bool(np.isfinite(outs[name]).all() and err <= 2.0 ** -7 * scale)
            print(f"check {b}x{n} d{d} {name}: bit-equal {np.array_equal(outs[name], ref)} max diff {err:.3g} "
                  f"-> {'ok' if ok else 'DROPPED'}", flush=True)
            if not ok:
                runners.pop(name)
        t = interleave({k: (lambda r=r: r.launch_call(0)) for k, r in runners.items()}, iterations=40, warmup=1,
                       mode="cold", order="shuffle")
        base = t["plan"].stats.p50_s
        nbytes = 2 * b * n * 8 * d * 2
        for k, v in t.items():
            print(f"AB {b}x{n} d{d} {k:5s} {labels[k]:24s} p50 {v.stats.p50_s*1e6:8.2f} us "
                  f"{nbytes/v.stats.p50_s/1e12:5.3f} TB/s {v.stats.p50_s/base-1:+.2%}", flush=True)
            res[f"{b}x{n}_d{d}/{k}"] = {"kernel": labels[k], "p50_us": v.stats.p50_s * 1e6,
                                        "samples_us": [s * 1e6 for s in v.samples_s]}
        runners.clear()
    json.dump(res, open(f"{out}/ab_min_ctas5.json", "w"), indent=1)
