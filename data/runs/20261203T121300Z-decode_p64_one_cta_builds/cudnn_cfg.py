"""torch SDPA's cuDNN backend at three decode points (q_len 1, 32 q / 8 KV heads, d128, contiguous K/V), one call each
after a warm-up, for ncu to show its launch configuration (grid, block, registers, shared memory) and duration."""
import torch
from torch.nn.attention import SDPBackend, sdpa_kernel

import sys
for b, n in ((16, 4096), (16, 2048), (16, 8192), (32, 4096), (4, 16384), (64, 1024)):
    q = torch.randn(b, 32, 1, 128, device="cuda", dtype=torch.bfloat16)
    k = torch.randn(b, 8, n, 128, device="cuda", dtype=torch.bfloat16)
    v = torch.randn(b, 8, n, 128, device="cuda", dtype=torch.bfloat16)
    with sdpa_kernel(SDPBackend.CUDNN_ATTENTION):
        for _ in range(2):
            torch.nn.functional.scaled_dot_product_attention(q, k, v, enable_gqa=True)
        torch.cuda.synchronize()
        torch.cuda.nvtx.range_push(f"cudnn_{b}x{n}")
        torch.nn.functional.scaled_dot_product_attention(q, k, v, enable_gqa=True)
        torch.cuda.nvtx.range_pop()
        torch.cuda.synchronize()
    print(f"ran {b}x{n}", flush=True)
