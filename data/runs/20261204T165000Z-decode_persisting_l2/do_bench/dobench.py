"""Which cold L2 did issue #10's peer numbers assume? Time the issue's peer points with triton.testing.do_bench
(its flush: cache.zero_() of 256 MB, a memset that leaves L2 dirty) - cuDNN / flash SDPA on contiguous [B, H, N, D]
K/V with enable_gqa, FA3 on [B, N, H, D], and labkit's plan call on its paged pool - and print K+V TB/s from the
median and the mean. Every peer's output is checked against labkit's first."""
import json
import sys

import torch
import triton
from torch.nn.attention import SDPBackend, sdpa_kernel

import cupy as cp
from labkit.workloads.decode.bench import shape_runner
from labkit.workloads.decode.geometry import kernel_label
from labkit.workloads.decode.inputs import bf16_to_f32
from labkit.workloads.decode.peers import gather_contiguous, output_disagreement

POINTS = [(1, 8192, 128), (8, 8192, 128), (64, 8192, 128), (256, 8192, 128), (64, 32768, 128), (64, 8192, 256)]
ISSUE = {(1, 8192, 128): {"sdpa_flash": 1.15, "sdpa_cudnn": 1.50}, (8, 8192, 128): {"sdpa_flash": 3.31, "sdpa_cudnn": 3.43, "fa3": 2.55},
         (64, 8192, 128): {"sdpa_flash": 2.74, "sdpa_cudnn": 4.44, "fa3": 3.93},
         (256, 8192, 128): {"sdpa_flash": 2.8, "sdpa_cudnn": 4.6}, (64, 32768, 128): {"sdpa_flash": 2.8, "sdpa_cudnn": 4.6},
         (64, 8192, 256): {"sdpa_flash": 4.55, "sdpa_cudnn": 3.55, "fa3": 4.39}}
HQ, HKV = 32, 8
rows = []
stream = torch.cuda.Stream()
print("triton", triton.__version__, "torch", torch.__version__, flush=True)
with torch.cuda.stream(stream), cp.cuda.ExternalStream(stream.cuda_stream):
    for b, n, d in POINTS:
        with shape_runner(b, n, d, heads_q=HQ, heads_kv=HKV) as (runner, plan, _):
            runner.run_once()
            want = cp.asnumpy(bf16_to_f32(runner.buffers["out"])).reshape(b, HQ, d)
            t = lambda a: torch.from_dlpack(a.view(cp.int16)).view(torch.bfloat16)
            table = runner.buffers["table"]
            k, v = (t(gather_contiguous(runner.buffers[x], table, b, n)) for x in ("k_pool", "v_pool"))
            q = t(runner.buffers["q"]).view(b, 1, HQ, d)
            qt, kt, vt = q.transpose(1, 2), k.transpose(1, 2).contiguous(), v.transpose(1, 2).contiguous()
            stream.synchronize()

            def sdpa(be):
                with sdpa_kernel([be]):
                    return torch.nn.functional.scaled_dot_product_attention(qt, kt, vt, enable_gqa=True)[:, :, 0]
            fns = {"labkit": lambda: runner.launch_call(0),
                   "sdpa_cudnn": lambda: sdpa(SDPBackend.CUDNN_ATTENTION),
                   "sdpa_flash": lambda: sdpa(SDPBackend.FLASH_ATTENTION)}
            try:
                from fa3_fwd_interface import flash_attn_func
                fns["fa3"] = lambda: (lambda o: (o[0] if isinstance(o, tuple) else o)[:, 0])(flash_attn_func(q, k, v, num_splits=0))
            except Exception as e:
                print("fa3 absent:", e)
            nbytes = 2 * b * n * HKV * d * 2
            for name, fn in fns.items():
                r = {"batch": b, "kv_len": n, "head_dim": d, "who": name, "build": kernel_label(plan.kernel) if name == "labkit" else ""}
                try:
                    got = fn()
                    stream.synchronize()
                    if name != "labkit":
                        why = output_disagreement(got.float().cpu().numpy(), want)
                        if why:
                            r["skipped"] = why; rows.append(r); print(r, flush=True); continue
                    med = triton.testing.do_bench(fn, return_mode="median")
                    mean = triton.testing.do_bench(fn, return_mode="mean")
                except Exception as e:
                    r["skipped"] = f"{type(e).__name__}: {str(e).splitlines()[0][:150]}"; rows.append(r); print(r, flush=True); continue
                r.update(median_us=med * 1e3, mean_us=mean * 1e3, tbps_median=nbytes / (med * 1e-3) / 1e12,
                         tbps_mean=nbytes / (mean * 1e-3) / 1e12, issue_tbps=ISSUE[(b, n, d)].get(name))
                rows.append(r)
                print(f"{b:4d} x {n:6d} d{d} {name:11s} median {med*1e3:9.2f} us {r['tbps_median']:.2f} TB/s  mean {mean*1e3:9.2f} us "
                      f"{r['tbps_mean']:.2f} TB/s  issue {r['issue_tbps']}", flush=True)
            del k, v, q, qt, kt, vt, runner
            torch.cuda.empty_cache()
json.dump(rows, open(sys.argv[1], "w"), indent=1)
