"""Batch 12-13 on an H100, where cuDNN leads labkit's one 8-warp CTA per unit by 4-7 %: labkit's plan, one 4-warp
3-stage CTA per unit (cuDNN's decomposition at 16 x N), and torch SDPA's cuDNN backend, one call each after a warm-up,
each in an NVTX range, for ncu to compare grid, duration, DRAM bytes and throughput kernel by kernel (16 x 8k: the
128-unit control, one 4-warp CTA per unit in the plan)."""
import numpy as np
import torch
from torch.nn.attention import SDPBackend, sdpa_kernel

from labkit.workloads.decode import DecodeGeometry, make_inputs, run_decode

for b, n in ((12, 8192), (12, 16384), (13, 8192), (16, 8192)):
    g = DecodeGeometry(b, 32, 8, 128, 64, n // 64, b * n // 64 + 8)
    x = make_inputs(g, seq_lens=np.full(b, n), seed=1, share_pages=False)
    builds = {"plan": {}, "w4s3": dict(warps=4, stages=3, splits=1)} if b < 16 else {"plan": {}}
    for name, knobs in builds.items():
        knobs = dict(knobs)
        splits = knobs.pop("splits", None)
        run_decode(x, splits=splits, **knobs)
        torch.cuda.synchronize()
        torch.cuda.nvtx.range_push(f"labkit_{name}_{b}x{n}")
        r = run_decode(x, splits=splits, **knobs)
        torch.cuda.synchronize()
        torch.cuda.nvtx.range_pop()
        print(f"labkit {name} {b}x{n}: {r.plan}", flush=True)
    q = torch.randn(b, 32, 1, 128, device="cuda", dtype=torch.bfloat16)
    k = torch.randn(b, 8, n, 128, device="cuda", dtype=torch.bfloat16)
    v = torch.randn(b, 8, n, 128, device="cuda", dtype=torch.bfloat16)
    with sdpa_kernel(SDPBackend.CUDNN_ATTENTION):
        for _ in range(2):
            torch.nn.functional.scaled_dot_product_attention(q, k, v, enable_gqa=True)
        torch.cuda.synchronize()
        torch.cuda.nvtx.range_push(f"cudnn_{b}x{n}")
        torch.nn.functional.scaled_dot_product_attention(q, k, v, enable_gqa=True)
        torch.cuda.synchronize()
        torch.cuda.nvtx.range_pop()
    print(f"cudnn {b}x{n}", flush=True)
