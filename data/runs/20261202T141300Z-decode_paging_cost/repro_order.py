"""Minimal reproduction, without labkit's runners: K/V gathered by CuPy on its null stream through a page table, then
torch SDPA (cuDNN) at once on DLPack views of them, launched on torch.cuda.ExternalStream(<CuPy's current stream>) as
labkit.workloads.decode.peers does. Each shape is visited twice (the second visit finds cuDNN's graph cached); the first
call's output is compared with a call made after a device-wide sync. Variants: `cupy` (as labkit), `cupy_sync` (the
CuPy stream synchronized after the gather), `torch_gather` (the gather done by torch itself, on its own stream),
`cupy_nowrap` (SDPA on torch's current stream, no ExternalStream), `cupy_stream` (gather and SDPA on one non-null CuPy
stream)."""
import sys

import cupy as cp
import torch
from torch.nn.attention import SDPBackend, sdpa_kernel

print("torch", torch.__version__, "cudnn", torch.backends.cudnn.version(), "cupy", cp.__version__, flush=True)


def as_torch(a):
    return torch.from_dlpack(a.view(cp.int16)).view(torch.bfloat16)


def visit(b, n, variant, rnd):
    d, hk, ps = 128, 8, 64
    pages = n // ps
    rs = cp.random.RandomState(b * 7 + n)
    def bf16(shape):  # bf16 words of N(0, 1): a float32's upper half
        return (rs.standard_normal(shape, dtype=cp.float32).view(cp.uint32) >> 16).astype(cp.uint16)
    pool_k, pool_v, q0 = bf16((b * pages, hk, ps, d)), bf16((b * pages, hk, ps, d)), bf16((b, 32, d))
    table = cp.arange(b * pages, dtype=cp.int32).reshape(b, pages)
    cp.cuda.Device().synchronize()
    if variant == "torch_gather":
        tk, tv = as_torch(pool_k), as_torch(pool_v)
        tt = torch.from_dlpack(table).long()
        k, v = (x[tt].permute(0, 1, 3, 2, 4).reshape(b, n, hk, d).contiguous() for x in (tk, tv))
    else:
        with side if variant == "cupy_stream" else cp.cuda.Stream.null:
            k, v = (as_torch(x[table].transpose(0, 1, 3, 2, 4).reshape(b, n, hk, d).copy(order="C"))
                    for x in (pool_k, pool_v))
        if variant == "cupy_sync":
            cp.cuda.get_current_stream().synchronize()
    q = as_torch(q0).view(b, 1, 32, d)
    qt, kt, vt = (x.transpose(1, 2) for x in (q, k, v))
    stream = torch.cuda.ExternalStream((side if variant == "cupy_stream" else cp.cuda.get_current_stream()).ptr)
    outs = []
    for _ in range(2):
        with (torch.cuda.stream(stream) if variant != "cupy_nowrap" else torch.cuda.stream(torch.cuda.current_stream())
              ), sdpa_kernel([SDPBackend.CUDNN_ATTENTION]):
            o = torch.nn.functional.scaled_dot_product_attention(qt, kt, vt, enable_gqa=True)
        torch.cuda.synchronize()
        outs.append(o.float().cpu())
    diff = float((outs[0] - outs[1]).abs().max())
    print(f"{variant:13s} r{rnd} {b}x{n}: first call vs second {diff:.3g} (|out| max {float(outs[1].abs().max()):.3g})",
          flush=True)
    del k, v, q, qt, kt, vt, o
    torch.cuda.empty_cache()
    cp.get_default_memory_pool().free_all_blocks()


side = cp.cuda.Stream(non_blocking=False)  # cupy_stream: a CuPy stream of its own, as labkit's timing stream
for variant in sys.argv[1:] or ["cupy", "cupy_sync", "torch_gather"]:
    for rnd in range(2):
        for b, n in [(64, 1024), (8, 8192)]:
            visit(b, n, variant, rnd)
