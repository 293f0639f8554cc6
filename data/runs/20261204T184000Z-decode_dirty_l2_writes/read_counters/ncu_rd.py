"""What ncu's dram__bytes_write counts: a plain read (CuPy's sum over 268 MB, nothing stored but 8 bytes) and labkit's
1 x 8k d128 plan (L2 evict_first K/V) beside the same build without the hint, each after labkit's cold pad (`dirty`:
the memset of 2 x L2; `clean`: the memset, then a read of 2 x L2 of other data) or after no pad (`none`: a sync only),
in NVTX ranges for ncu. Usage: python3 ncu_rd.py REPS"""
import sys

import cupy as cp
import torch

import labkit.timing.events as ev
from labkit.workloads.decode.bench import shape_runner

reps = int(sys.argv[1])
pads = {"dirty": ev._Sampler.create("cold"), "clean": ev._Sampler.create("cold_clean"), "none": None}
x = cp.ones(268_435_456 // 4, dtype=cp.uint32)
out = cp.zeros((), dtype=cp.uint64)


def timed(tag, fn, setup=None):
    for pad_name, smp in pads.items():
        for _ in range(reps):
            if smp is not None:
                smp.pad(setup)
            elif setup is not None:
                setup()
            cp.cuda.Device().synchronize()
            torch.cuda.nvtx.range_push(f"labkit_{pad_name}_{tag}")
            fn()
            cp.cuda.Device().synchronize()
            torch.cuda.nvtx.range_pop()


timed("read268", lambda: cp.sum(x, dtype=cp.uint64, out=out))
for tag, kw in (("ef", {}), ("ne", {"warps": 8, "stages": 3, "cluster": True, "splits": 8, "page_prefetch": True,
                                      "kv_evict_first": False})):
    with shape_runner(1, 8192, 128, **kw) as (runner, plan, _):
        runner.run_once()
        print(f"{tag}: {plan.to_dict()}", flush=True)
        timed(f"{tag}1x8k", lambda: runner.launch_call(0), runner.zero_scratch)
        del runner
