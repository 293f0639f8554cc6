"""Per-CTA stage-loop split of one cold call (2 x L2 memset just before): thread 0's clock64 cycles waiting on
stage barriers against its cycles from a stage's arrival to the end of its release (math, __syncthreads, refill
issue), in the committed kernel (trace3/, LABKIT_TIMELINE) and with the math compiled out (NULL_COMPUTE=1)."""
import json, os, sys, importlib
sys.path.insert(0, os.getcwd())
import numpy as np
bld = importlib.import_module("labkit.workloads.decode.build")
import labkit.workloads.decode.geometry as geo
HERE = os.path.dirname(os.path.abspath(__file__))
bld.kernel_path = lambda f, name: os.path.join(HERE, "trace3", name)
ORIG = geo.KernelBuild.options
EXTRA = {"x": ()}
geo.KernelBuild.options = lambda self: ORIG(self) + EXTRA["x"]
from labkit.cuda import cupy
from labkit.workloads.decode.bench import shape_runner
cp = cupy()
OUT = os.environ.get("OUT", "/tmp")
flush = cp.empty(120 * 1024 * 1024, dtype=cp.uint8)
res = {}
for (b, n, d) in [(1, 8192, 128), (8, 8192, 128), (64, 8192, 128), (1, 8192, 256), (8, 32768, 256), (256, 1024, 256),
                  (64, 1024, 256)]:
    for variant, extra in (("math", ()), ("null", ("-DNULL_COMPUTE=1",))):
        EXTRA["x"] = extra
        with shape_runner(b, n, d, timeline=True) as (runner, plan, _):
            runner.run_once(); runner.run_once()
            stages_per_cta = -(-(-(-n // (plan.kernel.warps * plan.kernel.keys_per_warp))) // plan.splits)
            reps = []
            for rep in range(4):
                cp.cuda.runtime.memsetAsync(flush.data.ptr, rep, flush.nbytes, cp.cuda.get_current_stream().ptr)
                runner.launch_call(0)
                cp.cuda.get_current_stream().synchronize()
                r = cp.asnumpy(runner.scratch[("decode", "timeline")]).view(np.uint64).reshape(-1, 6).astype(np.int64)
                dur = (r[:, 3] - r[:, 2]) / 1e3
                span = (r[:, 3].max() - r[:, 2].min()) / 1e3
                q = lambda x: [round(float(v), 1) for v in np.percentile(x, [10, 50, 90])]
                reps.append({"span_us": round(span, 2), "cta_us": q(dur), "wait_cyc_per_stage": q(r[:, 4] / stages_per_cta),
                             "work_cyc_per_stage": q(r[:, 5] / stages_per_cta),
                             "wait_share": round(float(r[:, 4].sum() / (r[:, 4].sum() + r[:, 5].sum())), 3)})
            res[f"{b}x{n} d{d} {variant}"] = {"plan": str(plan.to_dict()), "stages_per_cta": stages_per_cta, "reps": reps}
            print(b, n, d, variant, "stages/CTA", stages_per_cta, plan.to_dict(), flush=True)
            for x in reps[1:]:
                print("  ", x, flush=True)
            del runner
json.dump(res, open(f"{OUT}/trace3.json", "w"), indent=1)
