"""Why did cuDNN's output disagree with labkit's in ab_paging.py's second round (batch > 1 only)?
Each visit of a shape: labkit's plan over an identity page table, then every peer on its q and K/V gathered
contiguous, each output against an fp32 torch reference (GQA expanded, exact softmax): max |diff|, all-zero or not,
and the output's data pointer. Shapes are visited twice, in the order of ab_paging.py, memory given back between."""
import os

import numpy as np
import torch
from torch.nn.attention import SDPBackend, sdpa_kernel

from labkit.cuda import cupy
from labkit.workloads.decode import bench as B
from labkit.workloads.decode.inputs import bf16_to_f32
from labkit.workloads.decode.peers import _on_timing_stream, gather_contiguous

OUT = os.environ["R"]
print("torch", torch.__version__, "cudnn", torch.backends.cudnn.version(), flush=True)
_fill = B._gpu_fill


def gpu_fill(g, seq_len, seed):
    inner = _fill(g, seq_len, seed)
    pages = -(-seq_len // g.page_size)
    table = np.arange(g.batch * pages, dtype=np.int32).reshape(g.batch, pages)

    def fill(name, arr):
        arr.set(table) if name == "table" else inner(name, arr)
    return fill


B._gpu_fill = gpu_fill
cp = cupy()


def visit(b, n, d, rnd):
    with B.shape_runner(b, n, d) as (runner, plan, _):
        runner.buffers["out"].fill(0xFFFF)
        runner.run_once()
        lab = torch.from_numpy(bf16_to_f32(cp.asnumpy(runner.buffers["out"])).reshape(b, 32, d))

        def as_torch(a):
            return torch.from_dlpack(a.view(cp.int16)).view(torch.bfloat16)

        table = runner.buffers["table"]
        k, v = (as_torch(gather_contiguous(runner.buffers[x], table, b, n)) for x in ("k_pool", "v_pool"))
        q = as_torch(runner.buffers["q"]).view(b, 1, 32, d)
        qt, kt, vt = (x.transpose(1, 2) for x in (q, k, v))
        kf = kt.float().repeat_interleave(4, dim=1)
        vf = vt.float().repeat_interleave(4, dim=1)
        s = (qt.float() @ kf.transpose(-1, -2)) / d ** 0.5
        ref = (torch.softmax(s, -1) @ vf)[:, :, 0].cpu()  # [b, 32, d]
        del kf, vf, s
        scale = float(ref.abs().max())
        res = {}

        def sdpa(backend, a, bb, c, key):
            with sdpa_kernel([backend]):
                res[key] = torch.nn.functional.scaled_dot_product_attention(a, bb, c, enable_gqa=True)

        calls = {"cudnn": lambda: sdpa(SDPBackend.CUDNN_ATTENTION, qt, kt, vt, "cudnn"),
                 "cudnn_contig": lambda: sdpa(SDPBackend.CUDNN_ATTENTION, qt.contiguous(), kt.contiguous(),
                                              vt.contiguous(), "cudnn_contig"),
                 "flash": lambda: sdpa(SDPBackend.FLASH_ATTENTION, qt, kt, vt, "flash")}
        try:
            from fa3_fwd_interface import flash_attn_func

            def fa3():
                o = flash_attn_func(q, k, v, num_splits=0)
                res["fa3"] = (o[0] if isinstance(o, tuple) else o).transpose(1, 2)
            calls["fa3"] = fa3
        except Exception as exc:  # noqa: BLE001
            print("fa3 absent", exc)
        line = [f"r{rnd} {b}x{n} d{d}: labkit {float((lab - ref).abs().max()):.3g}"]
        for name, call in calls.items():
            for rep in range(2):
                _on_timing_stream(call)()
                cp.cuda.get_current_stream().synchronize()
                torch.cuda.synchronize()
                o = res[name].transpose(1, 2).float().cpu().reshape(b, 32, d)
                line.append(f"{name}#{rep} {float((o - ref).abs().max()):.3g}{' ZERO' if not o.abs().max() else ''}"
                            f" @{res[name].data_ptr() % 10**6}")
        print(" | ".join(line) + f" (|ref| max {scale:.3g})", flush=True)
        del runner
    torch.cuda.empty_cache()
    cp.get_default_memory_pool().free_all_blocks()


for rnd in range(2):
    for shape in [(1, 8192, 128), (64, 1024, 128), (8, 8192, 128), (256, 1024, 128)]:
        try:
            visit(*shape, rnd)
        except Exception as exc:  # noqa: BLE001
            print(shape, type(exc).__name__, exc, flush=True)
