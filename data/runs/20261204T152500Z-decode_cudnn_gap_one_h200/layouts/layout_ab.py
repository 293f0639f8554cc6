"""Does the K/V layout decide labkit's gap to cuDNN? At each point, in one set of shuffled cold rounds (labkit's
interleave, the bench's memset flush): labkit's plan on its plain pool [pages, Hkv, P, D] (the bench's), labkit's plan
on the same buffers read as a token-major pool [pages, P, Hkv, D] (tensor-map strides only: timing, not values), and
cuDNN (torch SDPA) on K/V gathered as [B, N, Hkv, D] and viewed [B, Hkv, N, D] (the bench's peers) and on K/V
contiguous [B, Hkv, N, D]. A diagnosis, no change. Usage: python3 layout_ab.py ITERATIONS BxN..."""
import contextlib
import json
import sys

import cupy as cp
import torch
from torch.nn.attention import SDPBackend, sdpa_kernel

import importlib

build = importlib.import_module("labkit.workloads.decode.build")
from labkit.cuda import torch_on_cupy_stream
from labkit.timing import interleave
from labkit.workloads.decode.bench import shape_runner
from labkit.workloads.decode.inputs import bf16_to_f32
from labkit.workloads.decode.peers import gather_contiguous, output_disagreement

plain_maps = build._maps


def token_major_maps(g, wide_boxes=False):
    buffers, args, (dims, strides) = plain_maps(g, wide_boxes)
    d2 = g.head_dim * 2
    s = [g.heads_kv * d2, d2, g.page_size * g.heads_kv * d2]  # token, head, page byte strides
    return buffers, args, [dims, [s[0], 128, *s[1:]] if wide_boxes else s]


def as_torch(a):
    return torch.from_dlpack(a.view(cp.int16)).view(torch.bfloat16)


iterations, points = int(sys.argv[1]), [tuple(map(int, p.split("x"))) for p in sys.argv[2:]]
rows = []
for b, n in points:
    with contextlib.ExitStack() as stack:
        runner, plan, _ = stack.enter_context(shape_runner(b, n, 128))
        build._maps = token_major_maps
        try:
            runner_tm, plan_tm, _ = stack.enter_context(shape_runner(b, n, 128))
        finally:
            build._maps = plain_maps
        runner.run_once()
        runner_tm.run_once()
        table = runner.buffers["table"]
        k, v = (as_torch(gather_contiguous(runner.buffers[x], table, b, n)) for x in ("k_pool", "v_pool"))
        q = as_torch(runner.buffers["q"]).view(b, 1, 32, 128).transpose(1, 2)
        kt, vt = k.transpose(1, 2), v.transpose(1, 2)  # the bench's peers: [B, N, H, D] viewed [B, H, N, D]
        kc, vc = kt.contiguous(), vt.contiguous()
        cp.cuda.get_current_stream().synchronize()

        def sdpa(kk, vv):
            def call():
                with sdpa_kernel([SDPBackend.CUDNN_ATTENTION]):
                    return torch.nn.functional.scaled_dot_product_attention(q, kk, vv, enable_gqa=True)
            return torch_on_cupy_stream(call)

        fns = {"labkit_plain": lambda: runner.launch_call(0), "labkit_token_major": lambda: runner_tm.launch_call(0),
               "cudnn_bshd_view": sdpa(kt, vt), "cudnn_bhsd": sdpa(kc, vc)}
        a, c = fns["cudnn_bshd_view"](), fns["cudnn_bhsd"]()
        cp.cuda.get_current_stream().synchronize()
        same = bool(torch.equal(a, c))
        # the token-major run checked against cuDNN on the same buffers gathered as token-major pages
        pool_tm = {x: runner_tm.buffers[x].reshape(-1, 64, 8, 128).transpose(0, 2, 1, 3) for x in ("k_pool", "v_pool")}
        ktm, vtm = (as_torch(gather_contiguous(pool_tm[x], runner_tm.buffers["table"], b, n)).transpose(1, 2)
                    for x in ("k_pool", "v_pool"))
        qtm = as_torch(runner_tm.buffers["q"]).view(b, 1, 32, 128).transpose(1, 2)
        with sdpa_kernel([SDPBackend.CUDNN_ATTENTION]):
            want_tm = torch.nn.functional.scaled_dot_product_attention(qtm, ktm, vtm, enable_gqa=True)[:, :, 0]
        got_tm = cp.asnumpy(bf16_to_f32(runner_tm.buffers["out"])).reshape(b, 32, 128)
        why_tm = output_disagreement(want_tm.float().cpu().numpy(), got_tm)
        got_pl = cp.asnumpy(bf16_to_f32(runner.buffers["out"])).reshape(b, 32, 128)
        why_pl = output_disagreement(a[:, :, 0].float().cpu().numpy(), got_pl)
        del ktm, vtm, qtm, want_tm
        t = interleave(fns, iterations=iterations, warmup=1, mode="cold", order="shuffle")
        nbytes = 2 * b * n * 8 * 128 * 2
        row = {"batch": b, "kv_len": n, "plan": plan.to_dict(), "cudnn_layouts_equal_out": same, "token_major_check": why_tm or "agrees with cuDNN",
               "plain_check": why_pl or "agrees with cuDNN",
               **{f"{name}_us": tt.stats.p50_s * 1e6 for name, tt in t.items()},
               **{f"{name}_TBps": nbytes / tt.stats.p50_s / 1e12 for name, tt in t.items()}}
        rows.append(row)
        print(f"{b:4d} x {n:6d}  " + "  ".join(f"{name} {row[name + '_us']:8.2f} us {row[name + '_TBps']:.2f}"
                                               for name in fns) + f"  cudnn outputs equal {same}; token-major: {row['token_major_check']}; plain: {row['plain_check']}", flush=True)
        del runner, runner_tm, k, v, q, kt, vt, kc, vc, a, c
    torch.cuda.empty_cache()
    cp.get_default_memory_pool().free_all_blocks()
json.dump(rows, open("/tmp/resb/layout_ab.json", "w"), indent=1)
