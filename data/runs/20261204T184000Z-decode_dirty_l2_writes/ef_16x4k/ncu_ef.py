"""labkit's plan at 1 x 8k d128 (L2 evict_first K/V) and the same build without the hint, and 16 x 4k d128 (no hint)
and with it, each call after labkit's cold pad (`dirty`: the memset that leaves L2 full of dirty lines; `clean`: the
memset, then a read of 2 x L2 of other data), in NVTX ranges for ncu with no cache control: do evict_first loads
keep the call from writing the flush's dirty lines back? Usage: python3 ncu_ef.py dirty|clean REPS"""
import sys

import cupy as cp
import torch

import labkit.timing.events as ev
from labkit.workloads.decode.bench import shape_runner

mode, reps = sys.argv[1], int(sys.argv[2])
smp = ev._Sampler.create("cold" if mode == "dirty" else "cold_clean")

for b, n, hint in ((1, 8192, None), (1, 8192, False), (16, 4096, None), (16, 4096, True)):
    kw = {} if hint is None else {"kv_evict_first": hint}
    with shape_runner(b, n, 128, **kw) as (runner, plan, _):
        runner.run_once()
        tag = f"{'ef' if plan.kernel.kv_evict_first else 'ne'}{'' if hint is None else 'X'}_{b}x{n}"
        print(f"{tag}: {plan.to_dict()}", flush=True)
        for i in range(reps):
            smp.pad(runner.zero_scratch)
            cp.cuda.Device().synchronize()
            torch.cuda.nvtx.range_push(f"labkit_{tag}")
            runner.launch_call(0)
            cp.cuda.Device().synchronize()
            torch.cuda.nvtx.range_pop()
        del runner
