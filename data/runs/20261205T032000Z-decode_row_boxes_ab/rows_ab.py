"""rows_ab.py (branch row-boxes): at the one-split and one-stage d128 calls, the plan (4-D boxes) against its row-boxes
build, both with the math compiled out (s67/patch.py NO_MATH: the loads, barriers and refills alone), a minimal ring
of 1-D bulk copies of the same pages (s66/one_cta_read.py's bulk_ring, 3 slots) and cuDNN on the same K/V gathered
contiguous. Cold, p50 of 40, interleaved and shuffled, three rounds. The row-boxes outputs must equal the plan's bit for
bit."""
import contextlib
import json
import os
import re
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.getcwd())
sys.path.insert(0, os.path.join(HERE, "..", "s67"))
import patch  # noqa: E402
from labkit.cuda import cupy, torch_on_cupy_stream  # noqa: E402
from labkit.timing import interleave  # noqa: E402
from labkit.workloads.decode import bench as B  # noqa: E402
from labkit.workloads.decode.geometry import kernel_label  # noqa: E402
from labkit.workloads.decode.peers import gather_contiguous  # noqa: E402

OUT = os.environ.get("R", "/tmp")
cp = cupy()
ring_src = re.search(r"SRC = r'''(.*?)'''", open(os.path.join(HERE, "..", "s66", "one_cta_read.py")).read(),
                     re.S).group(1)
bulk = cp.RawModule(code=ring_src, options=("-std=c++17",)).get_function("bulk_ring")
bulk.max_dynamic_shared_size_bytes = 3 * 32768
sink = cp.zeros(1, dtype=cp.uint32)
results, checks = [], []
t0 = time.time()


def point(batch, kv_len):
    import torch
    from torch.nn.attention import SDPBackend, sdpa_kernel
    variants = {"plan": ([], {}), "rows": ([], {"row_boxes": True}), "nomath": (["-DNO_MATH=1"], {}),
                "nomath rows": (["-DNO_MATH=1"], {"row_boxes": True})}
    with contextlib.ExitStack() as stack:
        runners = {}
        for name, (extra, knobs) in variants.items():
            patch.EXTRA[:] = extra
            runners[name] = stack.enter_context(B.shape_runner(batch, kv_len, 128, **knobs))[:2]
        patch.EXTRA[:] = []
        outs = {}
        for name in ("plan", "rows"):
            r = runners[name][0]
            r.buffers["out"].fill(0xFFFF)
            r.run_once()
            outs[name] = cp.asnumpy(r.buffers["out"]).copy()
        same = bool((outs["rows"] == outs["plan"]).all())
        checks.append({"point": f"{batch}x{kv_len}", "variant": "rows", "bit_equal_to_plan": same})
        print(f"check {batch}x{kv_len} rows: bit-equal to the plan {same}", flush=True)
        if not same:
            return
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
                print(f"r{rnd} {row['point']:14s} {name:11s} {row['p50_us']:8.2f} us {row['TBps']:6.3f} TB/s "
                      f"{100 * row['vs_plan']:+6.2f} %", flush=True)
        del runners, runner, kc, vc, kt, vt, q


for args in ((16, 4096), (16, 8192), (32, 2048), (16, 32768), (64, 8192), (64, 1024), (16, 2048)):
    try:
        point(*args)
    except Exception as exc:  # noqa: BLE001
        print(f"point {args}: {type(exc).__name__}: {exc}", flush=True)
    cp.get_default_memory_pool().free_all_blocks()
    with open(f"{OUT}/rows_ab.json", "w") as f:
        json.dump({"rows": results, "checks": checks}, f, indent=1)
    print(f"elapsed {time.time() - t0:.0f} s", flush=True)
