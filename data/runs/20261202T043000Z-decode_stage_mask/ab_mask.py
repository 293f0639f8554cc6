"""The stage loop's mask: STAGE_MASK 0 (as kept: sequence end, padding rows and causal limit tested per key), 1 (one
compare per key against the row's limit, computed once per CTA: the same output bits) and 2 (1, and the scale folded
into exp2's argument as one FFMA: the max taken on raw S); interleaved, shuffled, 40 rounds, cold (hot too at two short
calls); each output checked against STAGE_MASK 0's."""
import json, os
from contextlib import ExitStack
import numpy as np
import labkit.workloads.decode.geometry as geo
from labkit.cuda import cupy
from labkit.timing import interleave
from labkit.workloads.decode.bench import shape_runner, kernel_label
from labkit.workloads.decode.build import occupancy
from labkit.workloads.decode.inputs import bf16_to_f32

R = os.environ["R"]
cp = cupy()
LEAN = {"v": None}
_options = geo.KernelBuild.options


def options(self):
    extra = (f"-DSTAGE_MASK={LEAN['v']}",) if LEAN["v"] is not None and self.variant == "mma" else ()
    return (*_options(self), *extra)


geo.KernelBuild.options = options
POINTS = [(1, 8192, 128), (8, 1024, 128), (8, 8192, 128), (1, 32768, 128), (64, 1024, 128), (256, 1024, 128),
          (1, 8192, 256), (8, 1024, 256), (64, 1024, 256), (256, 1024, 256)]
res = {}
for (b, n, d) in POINTS:
    for mode in (("cold", "hot") if (b, n, d) in ((1, 8192, 128), (8, 1024, 128)) else ("cold",)):
        with ExitStack() as st:
            runners, outs, labels = {}, {}, {}
            for v in (0, 1, 2):
                LEAN["v"] = v
                try:
                    runner, plan, _ = st.enter_context(shape_runner(b, n, d))
                except Exception as exc:
                    print(f"{b}x{n} d{d} mask{v}: {type(exc).__name__}: {exc}", flush=True); continue
                per_sm = occupancy(plan.kernel).ctas_per_sm
                if per_sm < plan.ctas_per_sm:
                    print(f"{b}x{n} d{d} mask{v}: {per_sm} CTAs per SM against the plan's {plan.ctas_per_sm}: left out",
                          flush=True)
                    continue
                runner.buffers["out"].fill(0xFFFF); runner.run_once()
                outs[v], runners[f"mask{v}"] = bf16_to_f32(cp.asnumpy(runner.buffers["out"])), runner
                labels[f"mask{v}"] = f"{kernel_label(plan.kernel)} s{plan.splits} {plan.ctas_per_sm}/SM"
            LEAN["v"] = None
            ref = outs[0]; scale = float(np.abs(ref).max())
            for v in list(outs):
                err = float(np.abs(outs[v] - ref).max())
                ok = bool(np.isfinite(outs[v]).all() and err <= 2.0 ** -7 * scale)
                print(f"check {b}x{n} d{d} mask{v}: bit-equal {np.array_equal(outs[v], ref)} max diff {err:.3g} "
                      f"-> {'ok' if ok else 'DROPPED'}", flush=True)
                if not ok:
                    runners.pop(f"mask{v}")
            t = interleave({k: (lambda r=r: r.launch_call(0)) for k, r in runners.items()}, iterations=40, warmup=1,
                           mode=mode, order="shuffle")
            base = t["mask0"].stats.p50_s
            nbytes = 2 * b * n * 8 * d * 2
            for k, v in t.items():
                print(f"AB {mode} {b}x{n} d{d} {k} {labels[k]:24s} p50 {v.stats.p50_s*1e6:9.2f} us "
                      f"{nbytes/v.stats.p50_s/1e12:5.3f} TB/s {v.stats.p50_s/base-1:+.2%}", flush=True)
                res[f"{mode}/{b}x{n}_d{d}/{k}"] = {"kernel": labels[k], "p50_us": v.stats.p50_s * 1e6,
                                                   "samples_us": [s * 1e6 for s in v.samples_s]}
            runners.clear()
        json.dump(res, open(f"{R}/ab_mask.json", "w"), indent=1)
