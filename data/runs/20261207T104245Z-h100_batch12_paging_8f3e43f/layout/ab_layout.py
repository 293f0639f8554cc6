"""s96: does the pool's layout explain cuDNN's lead at batch 12-13 on an H100?

one_cta_read.py found pure reads by one 128-thread CTA per unit faster from the peers' contiguous [B, N, Hkv, D] copy
(cp.async, each token row holding every KV head) than from labkit's plain pool [pages, Hkv, P, D] (each head's page
slice 16 KB apart) by 0.4-2.7 points. Here labkit's plan itself, the same build and call, over three layouts of the
same values (bit-identical outputs required), beside cuDNN on the contiguous copy; one cold sample of each per round
in a shuffled order, 40 rounds, three times:
  plain   the plan over the bench's shuffled plain pool [pages, Hkv, P, D] (what `labkit decode bench` times)
  tmaj    the same pages laid out [pages, P, Hkv, D] (each token's heads side by side, as in the peers' copy): the K/V
          tensor maps' strides changed only (a diagnostic patch of build._maps, not a layout labkit offers)
  seed    the seed's interleaved kv[pages, 2, P, Hkv, 2, D] (K and V of a token and head side by side; half of the
          buffer unread), a layout labkit supports
  cudnn   torch SDPA's cuDNN backend on plain's K/V gathered contiguous [B, N, Hkv, D]
"""
import importlib
import json
import os
import sys
import tempfile
import time
from contextlib import ExitStack

import numpy as np

sys.path.insert(0, os.getcwd())
from labkit.cuda import cupy, torch_on_cupy_stream  # noqa: E402
from labkit.timing import interleave  # noqa: E402
from labkit.workloads.decode import bench as B  # noqa: E402
from labkit.workloads.decode.geometry import kernel_label  # noqa: E402
from labkit.workloads.decode.inputs import bf16_to_f32  # noqa: E402
from labkit.workloads.decode.peers import gather_contiguous  # noqa: E402
from labkit.workloads.decode.run import decode_runner, geometry_for  # noqa: E402

OUT = os.environ.get("R", "/tmp")
BUILD = importlib.import_module("labkit.workloads.decode.build")  # the package's `build` is a function
cp = cupy()
TOKEN_MAJOR = {"on": False}
_maps = BUILD._maps


def maps(g, wide_boxes=False, row_boxes=False):
    buffers, args, (dims, strides) = _maps(g, wide_boxes, row_boxes)
    if TOKEN_MAJOR["on"]:
        assert g.layout == "plain" and not wide_boxes and not row_boxes, (g.layout, wide_boxes, row_boxes)
        d2 = g.head_dim * 2
        strides = [g.heads_kv * d2, d2, g.page_size * g.heads_kv * d2]  # token, head, page
    return buffers, args, [dims, strides]


BUILD._maps = maps


def runner_for(stack, g, fill):
    tmp = stack.enter_context(tempfile.TemporaryDirectory())
    return decode_runner(g, None, tmp, fill)


results = []
t0 = time.time()


def point(batch, kv_len):
    import torch
    from torch.nn.attention import SDPBackend, sdpa_kernel

    d, hq, hkv, P = 128, 32, 8, 64
    with ExitStack() as stack:
        plain, plan = stack.enter_context(B.shape_runner(batch, kv_len, d))[:2]
        src = plain.buffers
        g = geometry_for(batch, kv_len, head_dim=d)

        def copy_fill(name, arr):  # every buffer but the pool as plain's
            arr[...] = src[name]

        def tmaj_fill(name, arr):
            if name in ("k_pool", "v_pool"):
                arr.reshape(g.num_pages, P, hkv, d)[...] = src[name].transpose(0, 2, 1, 3)
            else:
                copy_fill(name, arr)

        gs = geometry_for(batch, kv_len, head_dim=d, layout="interleaved")

        def seed_fill(name, arr):
            if name == "kv":
                arr[...] = 0x3F80  # bf16 1.0 in the half never read
                arr[:, 1, :, :, 0, :] = src["k_pool"].transpose(0, 2, 1, 3)
                arr[:, 1, :, :, 1, :] = src["v_pool"].transpose(0, 2, 1, 3)
            else:
                copy_fill(name, arr)

        TOKEN_MAJOR["on"] = True
        try:
            tmaj, plan_t = runner_for(stack, g, tmaj_fill)
        finally:
            TOKEN_MAJOR["on"] = False
        seed, plan_s = runner_for(stack, gs, seed_fill)
        runners = {"plain": plain, "tmaj": tmaj, "seed": seed}
        outs = {}
        for name, r in runners.items():
            r.buffers["out"].fill(0xFFFF)  # poison
            r.run_once()
            outs[name] = cp.asnumpy(r.buffers["out"]).copy()
        ref = bf16_to_f32(outs["plain"])
        for name in ("tmaj", "seed"):
            same = np.array_equal(outs[name], outs["plain"])
            diff = float(np.abs(bf16_to_f32(outs[name]) - ref).max())
            print(f"check {batch}x{kv_len}: {name} ({kernel_label(plan_t.kernel if name == 'tmaj' else plan_s.kernel)}) "
                  f"bit-identical to plain ({kernel_label(plan.kernel)}): {same}, max |diff| {diff:.3g}", flush=True)
            if not np.isfinite(bf16_to_f32(outs[name])).all() or diff > 2e-3:
                raise AssertionError(f"{batch}x{kv_len} {name}: output differs from plain's by {diff}")

        def as_t(a):
            return torch.from_dlpack(a.view(cp.int16)).view(torch.bfloat16)

        kc, vc = (gather_contiguous(src[n], src["table"], batch, kv_len) for n in ("k_pool", "v_pool"))
        q = as_t(src["q"]).view(batch, 1, hq, d).transpose(1, 2)
        kt, vt = (as_t(x).transpose(1, 2) for x in (kc, vc))
        cp.cuda.get_current_stream().synchronize()

        def sdpa():
            with sdpa_kernel([SDPBackend.CUDNN_ATTENTION]):
                return torch.nn.functional.scaled_dot_product_attention(q, kt, vt, enable_gqa=True)

        fns = {name: (lambda r=r: r.launch_call(0)) for name, r in runners.items()}
        fns["cudnn"] = torch_on_cupy_stream(sdpa)
        o = fns["cudnn"]()
        cp.cuda.get_current_stream().synchronize()
        cd = float(np.abs(o[:, :, 0].float().cpu().numpy().reshape(ref.shape) - ref).max())
        print(f"check {batch}x{kv_len}: cuDNN against plain max |diff| {cd:.3g} (|out| max {float(np.abs(ref).max()):.3g})",
              flush=True)
        nbytes = 2 * batch * kv_len * hkv * d * 2
        for rnd in range(3):
            timing = interleave(fns, iterations=40, warmup=1, mode="cold", order="shuffle", seed=rnd)
            for name, r in runners.items():
                if not np.array_equal(cp.asnumpy(r.buffers["out"]), outs[name]):
                    raise AssertionError(f"{name}: the timed calls wrote a different output")
            base = timing["plain"].stats.p50_s
            for name, t in timing.items():
                row = {"point": f"{batch}x{kv_len} d128", "round": rnd, "variant": name, "p50_us": t.stats.p50_s * 1e6,
                       "TBps": nbytes / t.stats.p50_s / 1e12, "vs_plain": t.stats.p50_s / base - 1}
                results.append(row)
                print(f"r{rnd} {row['point']:14s} {name:6s} {row['p50_us']:8.2f} us {row['TBps']:6.3f} TB/s "
                      f"{100 * row['vs_plain']:+6.2f} %", flush=True)
        runners.clear()


for args in ((12, 8192), (12, 16384), (13, 8192), (12, 32768), (16, 8192), (64, 8192)):
    try:
        point(*args)
        import torch
        torch.cuda.empty_cache()
        cp.get_default_memory_pool().free_all_blocks()
    except Exception as exc:  # noqa: BLE001
        print(f"point {args}: {type(exc).__name__}: {exc}", flush=True)
    with open(f"{OUT}/ab_layout.json", "w") as f:
        json.dump(results, f, indent=1)
    print(f"elapsed {time.time() - t0:.0f} s", flush=True)
