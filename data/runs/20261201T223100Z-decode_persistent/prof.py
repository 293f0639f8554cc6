"""Under ncu: the plan's call and the persistent build's at 64 x 8k and 256 x 1k d256, each behind a cold flush,
twice (plan, persistent, plan, persistent per point)."""
import os, sys
sys.path.insert(0, os.getcwd())
from contextlib import ExitStack
from labkit.cuda import cupy
from labkit.timing import flush_l2
from labkit.workloads.decode.bench import shape_runner

cp = cupy()
for (b, n, d) in [(64, 8192, 256), (256, 1024, 256)]:
    with ExitStack() as st:
        plan, _, _ = st.enter_context(shape_runner(b, n, d, stages=2))
        pers, _, _ = st.enter_context(shape_runner(b, n, d, stages=2, persistent=True))
        for r in (plan, pers):
            r.run_once()
        for rep in range(2):
            for r in (plan, pers):
                flush_l2()
                r.launch_call(0)
                cp.cuda.get_current_stream().synchronize()
    print("done", b, n, d, flush=True)
