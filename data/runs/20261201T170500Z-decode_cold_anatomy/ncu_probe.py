"""Under ncu (--cache-control none): labkit's call and torch SDPA (cuDNN) at two points, each launch behind the
bench's cold flush (a memset of 2 x L2), three times; ncu reads DRAM bytes read / written and the duration."""
import os, sys
sys.path.insert(0, os.getcwd())
import torch
from torch.nn.attention import SDPBackend, sdpa_kernel
from labkit.cuda import cupy
from labkit.workloads.decode.bench import shape_runner
from labkit.workloads.decode.peers import gather_contiguous, _on_timing_stream

cp = cupy()
flush = cp.empty(2 * 60 * 1024 * 1024, dtype=cp.uint8)
for (b, n, d) in [(8, 8192, 128), (1, 8192, 128)]:
    with shape_runner(b, n, d) as (runner, plan, _):
        runner.run_once()
        as_t = lambda a: torch.from_dlpack(a.view(cp.int16)).view(torch.bfloat16)
        table = runner.buffers["table"]
        k, v = (as_t(gather_contiguous(runner.buffers[x], table, b, n)) for x in ("k_pool", "v_pool"))
        q = as_t(runner.buffers["q"]).view(b, 1, 32, d)
        qt, kt, vt = (x.transpose(1, 2) for x in (q, k, v))

        def cudnn():
            with sdpa_kernel([SDPBackend.CUDNN_ATTENTION]):
                torch.nn.functional.scaled_dot_product_attention(qt, kt, vt, enable_gqa=True)
        cud = _on_timing_stream(cudnn)
        cud(); cp.cuda.get_current_stream().synchronize()
        for rep in range(2):
            for fn in (lambda: runner.launch_call(0), cud):
                cp.cuda.runtime.memsetAsync(flush.data.ptr, rep + 1, flush.nbytes, cp.cuda.get_current_stream().ptr)
                fn()
                cp.cuda.get_current_stream().synchronize()
        del runner, k, v, q, qt, kt, vt
        torch.cuda.empty_cache()
    print("done", b, n, d, flush=True)
