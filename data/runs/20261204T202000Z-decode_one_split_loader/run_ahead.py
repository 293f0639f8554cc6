"""run_ahead.py: at the one-split d128 calls where labkit trails cuDNN (16 x 2k-32k, 32 x 2k-4k), the plan against
(patch.py) its run-ahead build (no __syncthreads per stage; the last warp to release a slot issues its refill), its
early-release build (K and V fragments into registers, then the release, then the math), both, early release with 4
stages (16 x 2k-8k), the plan's loads with no math (a loader ceiling), a 1-D bulk pure read of the same pages (one_cta_read.py's bulk 3), and cuDNN on the same
K/V gathered contiguous. Cold, p50 of 40, interleaved and shuffled, three rounds. Run-ahead outputs must equal the
plan's bit for bit."""
import contextlib
import json
import os
import re
import sys
import time

sys.path.insert(0, os.getcwd())
sys.path.insert(0, os.path.dirname(__file__))
import patch  # noqa: E402
from labkit.cuda import cupy, torch_on_cupy_stream  # noqa: E402
from labkit.timing import interleave  # noqa: E402
from labkit.workloads.decode import bench as B  # noqa: E402
from labkit.workloads.decode.geometry import kernel_label  # noqa: E402
from labkit.workloads.decode.peers import gather_contiguous  # noqa: E402

OUT = os.environ.get("R", "/tmp")
cp = cupy()
ring_src = re.search(r"SRC = r'''(.*?)'''", open(os.path.join(os.path.dirname(__file__), "..", "s66", "one_cta_read.py")).read(),
                     re.S).group(1)
bulk = cp.RawModule(code=ring_src, options=("-std=c++17",)).get_function("bulk_ring")
bulk.max_dynamic_shared_size_bytes = 3 * 32768
sink = cp.zeros(1, dtype=cp.uint32)
results, checks = [], []
t0 = time.time()


def point(batch, kv_len, four_stages):
    import torch
    from torch.nn.attention import SDPBackend, sdpa_kernel
    variants = {"plan": ([], {}), "ra": (["-DRUN_AHEAD=1"], {}), "er": (["-DEARLY_RELEASE=1"], {}),
                "er ra": (["-DEARLY_RELEASE=1", "-DRUN_AHEAD=1"], {}), "nomath": (["-DNO_MATH=1"], {})}
    if four_stages:
        variants["er s4"] = (["-DEARLY_RELEASE=1"], {"stages": 4})
    with contextlib.ExitStack() as stack:
        runners = {}
        for name, (extra, knobs) in variants.items():
            patch.EXTRA[:] = extra
            runners[name] = stack.enter_context(B.shape_runner(batch, kv_len, 128, **knobs))[:2]
        patch.EXTRA[:] = []
        outs = {}
        for name, (r, plan) in runners.items():
            r.buffers["out"].fill(0xFFFF)
            r.run_once()
            outs[name] = cp.asnumpy(r.buffers["out"]).copy()
        for name in ("ra", "er", "er ra", "er s4"):
            if name in outs:
                same = bool((outs[name] == outs["plan"]).all())
                checks.append({"point": f"{batch}x{kv_len}", "variant": name, "bit_equal_to_plan": same})
                print(f"check {batch}x{kv_len} {name}: bit-equal to the plan {same}", flush=True)
        runner, plan = runners["plan"]
        hkv, P, D = 8, 64, 128
        kpool, vpool, table = runner.buffers["k_pool"], runner.buffers["v_pool"], runner.buffers["table"]
        kc, vc = (gather_contiguous(runner.buffers[n], table, batch, kv_len) for n in ("k_pool", "v_pool"))
        as_t = lambda a: torch.from_dlpack(a.view(cp.int16)).view(torch.bfloat16)  # noqa: E731
        q = as_t(runner.buffers["q"]).view(batch, 1, 32, D).transpose(1, 2)
        kt, vt = (as_t(x).transpose(1, 2) for x in (kc, vc))

        def sdpa():
            with sdpa_kernel([SDPBackend.CUDNN_ATTENTION]):
                return torch.nn.functional.scaled_dot_product_attention(q, kt, vt, enable_gqa=True)
        fns = {name: (lambda r=r: r.launch_call(0)) for name, (r, _) in runners.items()}
        fns["cudnn"] = torch_on_cupy_stream(sdpa)
        fns["bulk 3"] = lambda: bulk((hkv, batch), (128,), (kpool, vpool, table, cp.int32(kv_len // P), cp.int32(hkv),
                                                            cp.int64(hkv * P * D * 2), cp.int64(P * D * 2),
                                                            cp.int32(3), sink), shared_mem=3 * 32768)
        for f in fns.values():
            f()
        cp.cuda.get_current_stream().synchronize()
        nbytes = 2 * batch * kv_len * hkv * D * 2
        labels = {name: kernel_label(pl.kernel) for name, (_, pl) in runners.items()}
        print(f"point {batch}x{kv_len} d128: {labels}, splits {plan.splits}", flush=True)
        for rnd in range(3):
            timing = interleave(fns, iterations=40, warmup=1, mode="cold", order="shuffle", seed=rnd)
            base = timing["plan"].stats.p50_s
            for name, t in timing.items():
                row = {"point": f"{batch}x{kv_len} d128", "round": rnd, "variant": name,
                       "kernel": labels.get(name, name), "p50_us": t.stats.p50_s * 1e6,
                       "TBps": nbytes / t.stats.p50_s / 1e12, "vs_plan": t.stats.p50_s / base - 1}
                results.append(row)
                print(f"r{rnd} {row['point']:14s} {name:7s} {row['p50_us']:8.2f} us {row['TBps']:6.3f} TB/s "
                      f"{100 * row['vs_plan']:+6.2f} %", flush=True)
        del runners, runner, kc, vc, kt, vt, q


for args in ((16, 8192, True), (16, 4096, True), (16, 2048, True), (32, 2048, False), (32, 4096, False),
             (16, 32768, False)):
    try:
        point(*args)
    except Exception as exc:  # noqa: BLE001
        print(f"point {args[:2]}: {type(exc).__name__}: {exc}", flush=True)
    cp.get_default_memory_pool().free_all_blocks()
    with open(f"{OUT}/run_ahead.json", "w") as f:
        json.dump({"rows": results, "checks": checks}, f, indent=1)
    print(f"elapsed {time.time() - t0:.0f} s", flush=True)
