"""Does the context change the kernels' own durations? labkit's plan and cuDNN (SDPA on labkit's K/V gathered
contiguous, the bench's [B, N, H, D] view) at the one-split calls where cuDNN leads, traced by CUPTI (torch.profiler)
in three contexts, 20 samples of each kernel per context, every sample after labkit's cold pad (memset of 2 x L2):
  bench   labkit.timing.interleave of the two, shuffled (the pad, the spin, the event, the kernel: no host sync)
  bench4  the same with SDPA's flash and FA3 in the rounds too, as `labkit decode bench --peers`
  bench4own  bench4, but cuDNN, flash and FA3 each on a K/V copy of its own
  synced  pad, device sync, then the kernel (as ncu_ctx.py's pad context, without ncu)
  idle    pad, device sync, 2 ms of host sleep, then the kernel
Usage: python3 cupti_sync.py OUT.json BxN ..."""
import json
import os
import statistics
import sys
import time

import torch
from torch.nn.attention import SDPBackend, sdpa_kernel
from torch.profiler import ProfilerActivity, profile

import labkit.timing.events as ev
from labkit.cuda import cupy, torch_on_cupy_stream
from labkit.timing import interleave
from labkit.workloads.decode.bench import shape_runner
from labkit.workloads.decode.peers import gather_contiguous

cp = cupy()
rows = []
CTXS = os.environ.get("CTXS", "bench,synced,idle,bench").split(",")


def kernels(prof):
    path = "/tmp/trace_sync.json"
    prof.export_chrome_trace(path)
    out = {}
    for e in json.load(open(path))["traceEvents"]:
        if e.get("cat") == "kernel" and ("paged_decode" in e["name"] or "cudnn" in e["name"]):
            out.setdefault("labkit" if "paged_decode" in e["name"] else ("cudnn_reduce" if "reduction" in e["name"] else "cudnn"), []).append(float(e["dur"]))
    os.remove(path)
    return out


for b, n in [tuple(map(int, p.split("x"))) for p in sys.argv[2:]]:
    with shape_runner(b, n, 128) as (runner, plan, _):
        runner.run_once()
        t = lambda a: torch.from_dlpack(a.view(cp.int16)).view(torch.bfloat16)
        k, v = (t(gather_contiguous(runner.buffers[x], runner.buffers["table"], b, n)) for x in ("k_pool", "v_pool"))
        q = t(runner.buffers["q"]).view(b, 1, 32, 128)
        qt, kt, vt = (x.transpose(1, 2) for x in (q, k, v))
        cp.cuda.Device().synchronize()

        def cudnn():
            with sdpa_kernel([SDPBackend.CUDNN_ATTENTION]):
                return torch.nn.functional.scaled_dot_product_attention(qt, kt, vt, enable_gqa=True)
        def flash():
            with sdpa_kernel([SDPBackend.FLASH_ATTENTION]):
                return torch.nn.functional.scaled_dot_product_attention(qt, kt, vt, enable_gqa=True)
        from fa3_fwd_interface import flash_attn_func
        fns = {"labkit": lambda: runner.launch_call(0), "cudnn": torch_on_cupy_stream(cudnn)}
        fns4 = {**fns, "flash": torch_on_cupy_stream(flash), "fa3": torch_on_cupy_stream(lambda: flash_attn_func(q, k, v, num_splits=0))}
        # bench4own: each peer reads a K/V copy of its own, so no caller reads what the caller before it read
        kc, vc, kf, vf, k3, v3 = k.clone(), v.clone(), k.clone(), v.clone(), k.clone(), v.clone()

        def own(kk, vv, backend):
            def call():
                with sdpa_kernel([backend]):
                    return torch.nn.functional.scaled_dot_product_attention(qt, kk.transpose(1, 2), vv.transpose(1, 2),
                                                                            enable_gqa=True)
            return torch_on_cupy_stream(call)
        fns4own = {"labkit": fns["labkit"], "cudnn": own(kc, vc, SDPBackend.CUDNN_ATTENTION),
                   "flash": own(kf, vf, SDPBackend.FLASH_ATTENTION),
                   "fa3": torch_on_cupy_stream(lambda: flash_attn_func(q, k3, v3, num_splits=0))}
        for f in [*fns4.values(), *fns4own.values()]:
            f()
        cp.cuda.Device().synchronize()
        for ctx in CTXS:
            with profile(activities=[ProfilerActivity.CUDA]) as prof:
                if ctx.startswith("bench"):
                    timing = interleave({"bench4": fns4, "bench4own": fns4own}.get(ctx, fns), iterations=20, warmup=1, mode="cold", order="shuffle")
                else:
                    smp = ev._Sampler.create("cold")
                    for i in range(20):
                        for name, f in fns.items():
                            smp.pad()
                            cp.cuda.Device().synchronize()
                            if ctx == "idle":
                                time.sleep(0.002)
                            with smp.stream:
                                f()
                            cp.cuda.Device().synchronize()
            d = kernels(prof)
            row = {"batch": b, "kv_len": n, "context": ctx, **{f"{k}_median_us": statistics.median(x) for k, x in d.items()},
                   "durations_us": d}
            if ctx.startswith("bench"):
                row["event_p50_us"] = {k: x.stats.p50_s * 1e6 for k, x in timing.items()}
            rows.append(row)
            lab, cud = statistics.median(d["labkit"]), statistics.median(d["cudnn"]) + statistics.median(d.get("cudnn_reduce", [0]))
            print(f"{b:3d} x {n:5d} {ctx:7s} labkit {lab:7.2f} us  cudnn {cud:7.2f} us  labkit/cudnn {lab / cud:.3f}"
                  + (f"   events: labkit {row['event_p50_us']['labkit']:.2f} cudnn {row['event_p50_us']['cudnn']:.2f}" if ctx.startswith("bench") else ""),
                  flush=True)
        del runner, k, v, q, qt, kt, vt, kc, vc, kf, vf, k3, v3, fns, fns4, fns4own
        torch.cuda.empty_cache()
json.dump(rows, open(sys.argv[1], "w"))
