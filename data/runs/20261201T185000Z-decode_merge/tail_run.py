"""Where a split call's tail goes: thread 0's %globaltimer at the loop's end, after its partial stores, after
__threadfence, after the counter's atomic (bit 63: this CTA was the last), and at exit, per CTA, for one cold call
(a 120 MB memset just before) of the plan's timeline build with these stamps (tail/, LABKIT_TIMELINE)."""
import json, os, sys, importlib
sys.path.insert(0, os.getcwd())
import numpy as np
bld = importlib.import_module("labkit.workloads.decode.build")
HERE = os.path.dirname(os.path.abspath(__file__))
bld.kernel_path = lambda f, name: os.path.join(HERE, os.environ.get("TAIL_DIR", "tail"), name)
from labkit.cuda import cupy
from labkit.workloads.decode.bench import shape_runner
cp = cupy()
OUT = os.environ.get("OUT", "/tmp")
flush = cp.empty(120 * 1024 * 1024, dtype=cp.uint8)
res = {}
for (b, n, d) in [(1, 8192, 128), (8, 8192, 128), (8, 32768, 128), (1, 8192, 256)]:
    with shape_runner(b, n, d, timeline=True) as (runner, plan, _):
        runner.run_once(); runner.run_once()
        reps = []
        for rep in range(5):
            cp.cuda.runtime.memsetAsync(flush.data.ptr, rep, flush.nbytes, cp.cuda.get_current_stream().ptr)
            runner.launch_call(0)
            cp.cuda.get_current_stream().synchronize()
            r = cp.asnumpy(runner.scratch[("decode", "timeline")]).view(np.uint64).reshape(-1, 6)
            reps.append(r.tolist())
        res[f"{b}x{n} d{d}"] = {"plan": plan.to_dict(), "splits": plan.splits, "fields": "t_loop t_stores t0 t1 t_fence t_atomic(bit63 last)", "reps": reps}
        print(b, n, d, plan.splits, flush=True)
        del runner
json.dump(res, open(f"{OUT}/" + os.environ.get("TAIL_DIR", "tail") + ".json", "w"))
