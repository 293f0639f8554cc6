"""Per-CTA phase durations (clock64 cycles) of the decode kernel: entry -> first stage ready -> keys done ->
warps merged -> split counted in -> exit, for the plan's build at a few calls, warm (third back-to-back
call) and cold (after a 2 x L2 memset)."""
import json, os
import numpy as np
import labkit.workloads.decode.geometry as geo
from labkit.cuda import cupy
from labkit.workloads.decode.bench import shape_runner

cp = cupy()
OUT = os.environ.get("OUT", "/tmp")
_orig = geo.KernelBuild.options
geo.KernelBuild.options = lambda self: _orig(self) + (("-DDECODE_PHASES",) if self.timeline else ())
flush = cp.empty(2 * 60 * 1024 * 1024 // 4 * 4, dtype=cp.uint8)
res = {}
for (b, n, d, hq, hk) in [(2, 704, 256, 24, 4), (1, 8192, 128, 32, 8), (1, 1024, 128, 32, 8), (8, 1024, 128, 32, 8),
                          (8, 32768, 256, 32, 8)]:
    with shape_runner(b, n, d, heads_q=hq, heads_kv=hk, timeline=True) as (runner, plan, _):
        for mode in ("warm", "cold"):
            for _ in range(3):
                runner.zero_scratch() if hasattr(runner, "zero_scratch") else None
                if mode == "cold":
                    flush.fill(1)
                runner.run_once()
            cp.cuda.get_current_stream().synchronize()
            r = cp.asnumpy(runner.scratch[("decode", "timeline")]).view(np.uint64).reshape(-1, 6).astype(np.int64)
            r = r[r[:, 0] > 0]
            m = r.copy()
            for k in range(1, 5):  # a mark never reached (split not counted in): take the next one
                m[:, k] = np.where(m[:, k] == 0, m[:, k + 1] if k < 4 else m[:, 5], m[:, k])
            m[:, 4] = np.where(r[:, 4] == 0, r[:, 5], r[:, 4])
            m[:, 3] = np.where(r[:, 3] == 0, m[:, 4], r[:, 3])
            d_ = np.diff(m, axis=1)
            last = r[:, 5] - r[:, 4] > 0
            row = {"ctas": int(len(r)), "plan": plan.to_dict(),
                   "median_cycles": {"to_first_stage": int(np.median(d_[:, 0])), "keys": int(np.median(d_[:, 1])),
                                     "merge_and_store": int(np.median(d_[:, 2])), "count_in": int(np.median(d_[:, 3])),
                                     "total": int(np.median(r[:, 5] - r[:, 0]))},
                   "max_total": int((r[:, 5] - r[:, 0]).max()),
                   "reducer_cycles": [int(x) for x in sorted((r[:, 5] - r[:, 4])[last & (r[:, 4] > 0)])[-4:]]}
            key = f"{b}x{n} d{d} {hq}/{hk} {mode}"
            res[key] = row
            print(key, json.dumps(row), flush=True)
        del runner
json.dump(res, open(f"{OUT}/decode_phases.json", "w"), indent=1)
