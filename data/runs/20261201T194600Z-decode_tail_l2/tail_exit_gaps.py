"""Per unit of a split call: the last CTA's exit minus the unit's previous exit (its reduce, roughly), from the
plain timeline build, one cold call after a 120 MB memset, calls 2-5 of 5, for each kernel folder."""
import json, os, sys, importlib
sys.path.insert(0, os.getcwd())
import numpy as np
bld = importlib.import_module("labkit.workloads.decode.build")
HERE = os.path.dirname(os.path.abspath(__file__))
ORIG = bld.kernel_path
from labkit.cuda import cupy
from labkit.workloads.decode.bench import shape_runner
cp = cupy()
OUT = os.environ.get("OUT", "/tmp")
flush = cp.empty(120 * 1024 * 1024, dtype=cp.uint8)
res = {}
for (b, n, d) in [(1, 8192, 128), (1, 1024, 128), (8, 8192, 128), (1, 8192, 256)]:
    for folder in ("head", None):
        bld.kernel_path = (lambda f, name, folder=folder: os.path.join(HERE, folder, name)) if folder else ORIG
        with shape_runner(b, n, d, timeline=True) as (runner, plan, _):
            runner.run_once(); runner.run_once()
            gaps, spans = [], []
            for rep in range(5):
                cp.cuda.runtime.memsetAsync(flush.data.ptr, rep, flush.nbytes, cp.cuda.get_current_stream().ptr)
                runner.launch_call(0)
                cp.cuda.get_current_stream().synchronize()
                r = cp.asnumpy(runner.scratch[("decode", "timeline")]).view(np.uint64).reshape(-1, 6).astype(np.int64)
                if rep == 0:
                    continue
                t1 = r[np.argsort(r[:, 0]), 3].reshape(-1, plan.splits)  # [unit][split]
                t1s = np.sort(t1, axis=1)
                gaps.append(float(np.median(t1s[:, -1] - t1s[:, -2])) / 1e3)
                spans.append(float(r[:, 3].max() - r[:, 2].min()) / 1e3)
            key = f"{b}x{n} d{d} {folder or 'mlsec'}"
            res[key] = {"splits": plan.splits, "last_exit_gap_us": gaps, "span_us": spans}
            print(key, plan.splits, "gap", np.round(gaps, 2), "span", np.round(spans, 2), flush=True)
            del runner
json.dump(res, open(f"{OUT}/tail_ml.json", "w"), indent=1)
