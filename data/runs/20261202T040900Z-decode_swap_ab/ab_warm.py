"""Plan against swapped operands with K/V warm in L2 (hot calls, 1 x 8k and 8 x 1k d128: 33.6 MB), so the
stage loop's math, not DRAM, sets the time; and cold again at 1 x 8k."""
import os
from contextlib import ExitStack
from labkit.timing import interleave
from labkit.workloads.decode.bench import shape_runner, kernel_label
for (b, n, d) in ((1, 8192, 128), (8, 1024, 128), (64, 1024, 128)):
    for mode in ("hot", "cold"):
        with ExitStack() as st:
            rs = {}
            for name, kw in {"plan": {}, "swap": dict(swap_ab=True)}.items():
                r, plan, _ = st.enter_context(shape_runner(b, n, d, **kw)); r.run_once(); rs[name] = r
            t = interleave({k: (lambda r=r: r.launch_call(0)) for k, r in rs.items()}, iterations=40, warmup=1,
                           mode=mode, order="shuffle")
            base = t["plan"].stats.p50_s
            for k, v in t.items():
                print(f"{mode} {b}x{n} d{d} {k} p50 {v.stats.p50_s*1e6:8.2f} us {v.stats.p50_s/base-1:+.2%}", flush=True)
