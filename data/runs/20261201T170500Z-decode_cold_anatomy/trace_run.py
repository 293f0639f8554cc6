"""Per-CTA phase times of one cold call (flush of 2 x L2 just before): kernel-relative %globaltimer at CTA entry,
first stage landed, stage loop done, CTA exit (the instrumented committed kernel in trace/)."""
import json, os, sys, importlib
sys.path.insert(0, os.getcwd())
import numpy as np
bld = importlib.import_module("labkit.workloads.decode.build")
HERE = os.path.dirname(os.path.abspath(__file__))
TRACE = os.environ.get("TRACE_DIR", "trace")
bld.kernel_path = lambda f, name: os.path.join(HERE, TRACE, name)
from labkit.cuda import cupy
from labkit.workloads.decode.bench import shape_runner
cp = cupy()
OUT = os.environ.get("OUT", "/tmp")
flush = cp.empty(120 * 1024 * 1024, dtype=cp.uint8)
res = {}
for (b, n, d) in [(1, 8192, 128), (1, 1024, 128), (8, 8192, 128)]:
    with shape_runner(b, n, d, timeline=True) as (runner, plan, _):
        runner.run_once(); runner.run_once()
        reps = []
        for rep in range(5):
            cp.cuda.runtime.memsetAsync(flush.data.ptr, rep, flush.nbytes, cp.cuda.get_current_stream().ptr)
            runner.launch_call(0)
            cp.cuda.get_current_stream().synchronize()
            r = cp.asnumpy(runner.scratch[("decode", "timeline")]).view(np.uint64).reshape(-1, 6).astype(np.int64)
            t0 = r[:, 2].min()
            entry, exit_, first, loop = (r[:, 2] - t0) / 1e3, (r[:, 3] - t0) / 1e3, (r[:, 4] - t0) / 1e3, (r[:, 5] - t0) / 1e3
            q = lambda x: [round(float(v), 2) for v in np.percentile(x, [0, 50, 100])]
            issue = (r[:, 0] - t0) / 1e3
            reps.append({"issue_minus_entry": q(issue - entry), "first_minus_issue": q(first - issue), "entry": q(entry), "first_stage": q(first), "first_minus_entry": q(first - entry),
                         "loop_end": q(loop), "loop": q(loop - first), "exit": q(exit_), "exit_minus_loop": q(exit_ - loop)})
            if rep == 4:
                res[f"{b}x{n} d{d} raw"] = r.tolist()
        res[f"{b}x{n} d{d}"] = {"plan": str(plan.to_dict()), "reps": reps}
        print(b, n, d, plan.to_dict(), flush=True)
        for x in reps[1:]:
            print("  ", x, flush=True)
        del runner
json.dump(res, open(f"{OUT}/{TRACE}.json", "w"))
