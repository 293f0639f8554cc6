"""labkit's plan (the bench's shape_runner: shuffled pool of 64-token pages, random K/V drawn on the GPU) and torch
SDPA's cuDNN backend (contiguous K/V) at the one-split calls where cuDNN leads (q_len 1, 32 q / 8 KV heads, d128),
`reps` calls each in NVTX ranges for ncu. `pad`: each profiled call follows labkit's cold pad (a memset of 2 x L2 that
leaves L2 dirty, then the ~100 us spin), as a bench sample does, for ncu without cache control; `isolated`: no pad
(ncu's cache control flushes and invalidates L2 before each kernel). Usage: python3 ncu_ctx.py isolated|pad REPS"""
import sys

import cupy as cp
import torch
from torch.nn.attention import SDPBackend, sdpa_kernel

import labkit.timing.events as ev
from labkit.workloads.decode.bench import shape_runner

mode, reps = sys.argv[1], int(sys.argv[2])
smp = ev._Sampler.create("cold") if mode == "pad" else None


def pad():
    if smp is not None:
        smp.pad()
        cp.cuda.Device().synchronize()


for b, n in ((16, 4096), (32, 2048), (17, 4096), (16, 8192)):
    q = torch.randn(b, 32, 1, 128, device="cuda", dtype=torch.bfloat16)
    k = torch.randn(b, 8, n, 128, device="cuda", dtype=torch.bfloat16)
    v = torch.randn(b, 8, n, 128, device="cuda", dtype=torch.bfloat16)
    with sdpa_kernel(SDPBackend.CUDNN_ATTENTION):
        torch.nn.functional.scaled_dot_product_attention(q, k, v, enable_gqa=True)
    torch.cuda.synchronize()
    with shape_runner(b, n, 128) as (runner, plan, _):
        runner.run_once()
        print(f"labkit {b}x{n}: {plan.to_dict()}", flush=True)
        for i in range(reps):
            pad()
            torch.cuda.nvtx.range_push(f"labkit_{b}x{n}")
            runner.launch_call(0)
            cp.cuda.Device().synchronize()
            torch.cuda.nvtx.range_pop()
            pad()
            torch.cuda.nvtx.range_push(f"cudnn_{b}x{n}")
            with sdpa_kernel(SDPBackend.CUDNN_ATTENTION):
                torch.nn.functional.scaled_dot_product_attention(q, k, v, enable_gqa=True)
            torch.cuda.synchronize()
            torch.cuda.nvtx.range_pop()
        del runner
    del q, k, v
    torch.cuda.empty_cache()
    print(f"cudnn {b}x{n}", flush=True)
