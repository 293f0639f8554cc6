"""labkit's plan and torch SDPA's cuDNN backend at the one-split calls where cuDNN leads (q_len 1, 32 q / 8 KV heads,
d128; labkit on a shuffled page pool of 64-token pages, cuDNN on contiguous K/V), one call each after a warm-up, each
in an NVTX range, for ncu to compare DRAM bytes, throughput and duration kernel by kernel."""
import numpy as np
import torch
from torch.nn.attention import SDPBackend, sdpa_kernel

from labkit.workloads.decode import DecodeGeometry, make_inputs, run_decode

for b, n in ((16, 4096), (32, 2048), (17, 4096), (16, 8192)):
    g = DecodeGeometry(b, 32, 8, 128, 64, n // 64, b * n // 64 + 8)
    x = make_inputs(g, seq_lens=np.full(b, n), seed=1, share_pages=False)
    run_decode(x)
    torch.cuda.synchronize()
    torch.cuda.nvtx.range_push(f"labkit_{b}x{n}")
    r = run_decode(x)
    torch.cuda.synchronize()
    torch.cuda.nvtx.range_pop()
    print(f"labkit {b}x{n}: {r.plan}", flush=True)
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
