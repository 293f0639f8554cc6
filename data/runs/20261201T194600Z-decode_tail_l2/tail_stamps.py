"""Where the last CTA's time goes: thread 0's %globaltimer at loop end (t_loop), after the partials are stored and
the CTA's barrier (t_stored), when the counter's old value is in hand (t_atomic; bit 63: the last CTA), when its
first reduce item's loads are in hand (t_loaded, last CTA only) and at exit (t1), per CTA, one cold call after a
120 MB memset, calls 2-6 of 6, with the kernels in .dbg/dec/stamp (the kernels at d8d4a4e plus stamp.diff)."""
import json, os, sys, importlib
sys.path.insert(0, os.getcwd())
import numpy as np
bld = importlib.import_module("labkit.workloads.decode.build")
HERE = os.path.dirname(os.path.abspath(__file__))
bld.kernel_path = lambda f, name: os.path.join(HERE, "stamp", name)
from labkit.cuda import cupy
from labkit.workloads.decode.bench import shape_runner
cp = cupy()
OUT = os.environ.get("OUT", "/tmp")
flush = cp.empty(120 * 1024 * 1024, dtype=cp.uint8)
res = {}
M = (1 << 63) - 1
for (b, n, d) in [(1, 8192, 128), (1, 1024, 128), (8, 8192, 128), (1, 8192, 256)]:
    with shape_runner(b, n, d, timeline=True) as (runner, plan, _):
        runner.run_once(); runner.run_once()
        seg = {k: [] for k in ("merge_store", "atomic", "last_late", "last_atomic", "last_loads", "last_finish", "span")}
        raw = []
        for rep in range(6):
            cp.cuda.runtime.memsetAsync(flush.data.ptr, rep, flush.nbytes, cp.cuda.get_current_stream().ptr)
            runner.launch_call(0)
            cp.cuda.get_current_stream().synchronize()
            r = cp.asnumpy(runner.scratch[("decode", "timeline")]).view(np.uint64).reshape(-1, 6)
            if rep == 0:
                continue
            last = (r[:, 4] >> np.uint64(63)) == 1
            t = r.astype(object)
            ta = (r[:, 4] & np.uint64(M)).astype(np.int64)
            tl, ts, t0, t1, tld = (r[:, i].astype(np.int64) for i in (0, 1, 2, 3, 5))
            seg["merge_store"].append(float(np.median(ts - tl)) / 1e3)
            seg["atomic"].append(float(np.median((ta - ts)[~last])) / 1e3)
            units = ta.reshape(-1, plan.splits)
            srt = np.sort(units, axis=1)
            seg["last_late"].append(float(np.median(srt[:, -1] - srt[:, -2])) / 1e3)
            seg["last_atomic"].append(float(np.median((ta - ts)[last])) / 1e3)
            seg["last_loads"].append(float(np.median((tld - ta)[last])) / 1e3)
            seg["last_finish"].append(float(np.median((t1 - tld)[last])) / 1e3)
            seg["span"].append(float(t1.max() - t0.min()) / 1e3)
            if rep == 1:
                raw = r[:24].tolist()
        key = f"{b}x{n} d{d}"
        res[key] = {"plan": plan.to_dict(), "segments_us": seg, "raw_call2_first24": raw}
        print(key, plan.splits, " ".join(f"{k} {np.median(v):.2f}" for k, v in seg.items()), flush=True)
        del runner
json.dump(res, open(f"{OUT}/tail_stamp.json", "w"), indent=1)
