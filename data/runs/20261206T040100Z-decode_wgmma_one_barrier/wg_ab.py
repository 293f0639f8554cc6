"""wg_ab.py: the decode kernel's stage math on wgmma (wg.cu, -DWGMMA=1, sm_90a) for the 4-warp d128 builds.
1. exact attention (tests/gpu/test_decode_gpu.py's bound) on the test cases of <= 8 rows: G = 1, 4, 8, causal q
   tokens at G = 2, pages 16/32/64, 1/2/3 stages, splits 1/3/16, clusters 2/4/8, scores climbing and falling,
   timed cold and in a CUDA graph;
2. cold interleaved rounds (p50 of 40, shuffled, 3 rounds) of the plan, the plan's build with wgmma math and cuDNN on
   the same K/V gathered contiguous, at the 4-warp d128 calls."""
import contextlib
import json
import os
import sys
import time
import traceback

sys.path.insert(0, os.getcwd())
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import wg_patch  # noqa: E402
import numpy as np  # noqa: E402
from labkit.cuda import cupy, torch_on_cupy_stream  # noqa: E402
from labkit.timing import interleave  # noqa: E402
from labkit.workloads.decode import DecodeGeometry, make_inputs, run_decode  # noqa: E402
from labkit.workloads.decode import bench as B  # noqa: E402
from labkit.workloads.decode.geometry import kernel_label  # noqa: E402
from labkit.workloads.decode.peers import gather_contiguous  # noqa: E402
from tests.gpu.test_decode_gpu import CASES, _check  # noqa: E402

OUT = os.environ.get("R", "/tmp")
cp = cupy()
log = {"checks": [], "rows": []}
t_start = time.time()
W4 = dict(variant="mma", warps=4, keys_per_warp=16, dim_warps=1, wide_boxes=False, page_prefetch=False)


def save():
    with open(f"{OUT}/wg_ab.json", "w") as f:
        json.dump(log, f, indent=1)


WG_FLAGS = ["-DWGMMA=1", "-DWG_ONE_BARRIER=1"]  # the build checked for exact attention (set per variant below)


def wg_run(x, **knobs):
    wg_patch.EXTRA[:] = WG_FLAGS
    try:
        return run_decode(x, **knobs)
    finally:
        wg_patch.EXTRA[:] = []


def check(name, x, **knobs):
    try:
        err = _check(x, wg_run(x, **knobs))
        ok, msg = True, f"max err {err:.3g}"
    except AssertionError as exc:
        ok, msg = False, str(exc).splitlines()[0]
    log["checks"].append({"case": name, "flags": list(WG_FLAGS), "knobs": dict(knobs), "ok": ok, "msg": msg})
    print(f"check {WG_FLAGS[-1]} {name} {knobs}: {'ok' if ok else 'FAIL'} {msg}", flush=True)
    return ok


def correctness():
    ok = True
    for name in ("g4_d128_p64_long", "g8_d128_p32", "g1_d128_p16"):
        g, lens = CASES[name]
        x = make_inputs(g, seq_lens=lens, seed=3)
        for stages in ((3, 2) if "-DWG_DEFER_RELEASE=1" in WG_FLAGS else (3, 1, 2)):
            for s in sorted({1, 3, min(g.max_pages, 16)}):
                ok &= check(name, x, splits=s, stages=stages, **W4)
        for s in (2, 4, 8):
            ok &= check(name + " cluster", x, splits=s, cluster=True, stages=3, **W4)
        if not ok:
            return False
    g = DecodeGeometry(3, 8, 4, 128, 32, 10, 40, max_q_len=4)  # G = 2, up to 8 rows
    for q_lens in ([1, 4, 2], [3, 3, 3]):
        x = make_inputs(g, seq_lens=[300, 4, 97], q_lens=q_lens, seed=11)
        for s in (1, 4):
            ok &= check(f"causal q_lens {q_lens}", x, splits=s, stages=3, **W4)
    from labkit.workloads.decode.inputs import _bf16, bf16_to_f32
    for name in ("g4_d128_p64_long", "g8_d128_p32"):
        for order in ("climbing", "falling"):
            g, lens = CASES[name]
            x = make_inputs(g, seq_lens=lens, seed=47, share_pages=False)
            k = bf16_to_f32(x.k)
            for b in range(g.batch):
                pages = x.page_table[b, :-(-int(x.seq_lens[b]) // g.page_size)]
                ramp = np.linspace(0.2, 30.0, len(pages)) if order == "climbing" else np.linspace(30.0, 0.2, len(pages))
                k[pages] *= ramp[:, None, None, None].astype(np.float32)
            x.k[...] = _bf16(k)
            for s in (1, 3):
                ok &= check(f"{name} {order}", x, splits=s, stages=3, **W4)
    g, lens = CASES["g4_d128_p64_long"]
    x = make_inputs(g, seq_lens=lens, seed=5)
    for mode in ("cold", "graph"):
        wg_patch.EXTRA[:] = WG_FLAGS
        try:
            run = run_decode(x, splits=3, iterations=3, mode=mode, stages=3, **W4)
            _check(x, run)
            print(f"check timed {mode}: ok", flush=True)
            log["checks"].append({"case": f"timed {mode}", "ok": True})
        except AssertionError as exc:
            ok = False
            print(f"check timed {mode}: FAIL {str(exc).splitlines()[0]}", flush=True)
            log["checks"].append({"case": f"timed {mode}", "ok": False, "msg": str(exc).splitlines()[0]})
        finally:
            wg_patch.EXTRA[:] = []
    return ok


def point(batch, kv_len, rounds=5):
    import torch
    from torch.nn.attention import SDPBackend, sdpa_kernel
    with contextlib.ExitStack() as stack:
        runner, plan = stack.enter_context(B.shape_runner(batch, kv_len, 128))[:2]
        kb = plan.kernel
        if not (kb.warps == 4 and kb.dim_warps == 1 and kb.keys_per_warp == 16 and not kb.persistent_ctas
                and not kb.wide_boxes):
            print(f"point {batch}x{kv_len}: plan {kernel_label(kb)} is not a 4-warp build, skipped", flush=True)
            return
        knobs = dict(splits=plan.splits, stages=kb.stages, qk_chains=kb.qk_chains, cluster=kb.cluster_splits > 1,
                     kv_evict_first=kb.kv_evict_first, **W4)
        runners = {"plan": runner}
        for name, flags in VARIANTS.items():
            wg_patch.EXTRA[:] = flags
            runners[name], wgplan = stack.enter_context(B.shape_runner(batch, kv_len, 128, **knobs))[:2]
        wg_patch.EXTRA[:] = []
        outs = {}
        for name, r in runners.items():
            r.buffers["out"].fill(0xFFFF)
            r.run_once()
            outs[name] = cp.asnumpy(r.buffers["out"]).view(np.uint16)
        f32 = {n: (o.astype(np.uint32) << 16).view(np.float32) for n, o in outs.items()}
        for name in VARIANTS:
            diff = np.abs(f32[name] - f32["plan"])
            rec = {"point": f"{batch}x{kv_len}", "variant": name, "finite": bool(np.isfinite(f32[name]).all()),
                   "max_abs_diff_vs_plan": float(np.nanmax(diff)), "max_abs_out": float(np.nanmax(np.abs(f32["plan"]))),
                   "bit_equal_fraction": float((outs[name] == outs["plan"]).mean())}
            log["checks"].append(rec)
            print(f"vs plan {rec}", flush=True)
        hkv, D = 8, 128
        kc, vc = (gather_contiguous(runner.buffers[n], runner.buffers["table"], batch, kv_len) for n in ("k_pool", "v_pool"))
        as_t = lambda a: torch.from_dlpack(a.view(cp.int16)).view(torch.bfloat16)  # noqa: E731
        q = as_t(runner.buffers["q"]).view(batch, 1, 32, D).transpose(1, 2)
        kt, vt = (as_t(x).transpose(1, 2) for x in (kc, vc))

        def sdpa():
            with sdpa_kernel([SDPBackend.CUDNN_ATTENTION]):
                return torch.nn.functional.scaled_dot_product_attention(q, kt, vt, enable_gqa=True)
        fns = {name: (lambda r=r: r.launch_call(0)) for name, r in runners.items()}
        fns["cudnn"] = torch_on_cupy_stream(sdpa)
        for f in fns.values():
            f()
        cp.cuda.get_current_stream().synchronize()
        nbytes = 2 * batch * kv_len * hkv * D * 2
        print(f"point {batch}x{kv_len} d128: plan {kernel_label(kb)} splits {plan.splits}; wg {kernel_label(wgplan.kernel)}",
              flush=True)
        for rnd in range(rounds):
            timing = interleave(fns, iterations=40, warmup=1, mode="cold", order="shuffle", seed=rnd)
            base = timing["plan"].stats.p50_s
            for name, t in timing.items():
                row = {"point": f"{batch}x{kv_len} d128", "round": rnd, "variant": name,
                       "kernel": kernel_label(kb) if name != "cudnn" else "cudnn", "p50_us": t.stats.p50_s * 1e6,
                       "TBps": nbytes / t.stats.p50_s / 1e12, "vs_plan": t.stats.p50_s / base - 1}
                log["rows"].append(row)
                print(f"r{rnd} {row['point']:14s} {name:6s} {row['p50_us']:8.2f} us {row['TBps']:6.3f} TB/s "
                      f"{100 * row['vs_plan']:+6.2f} %", flush=True)
        del runners, runner, kc, vc, kt, vt, q


VARIANTS = {"wg": ["-DWGMMA=1"], "wg1": ["-DWGMMA=1", "-DWG_ONE_BARRIER=1"],
            "wg1d": ["-DWGMMA=1", "-DWG_ONE_BARRIER=1", "-DWG_DEFER_RELEASE=1"]}
ok = True
for checked in ("wg1", "wg1d"):
    WG_FLAGS[:] = VARIANTS[checked]
    print(f"correctness of {checked} {WG_FLAGS}", flush=True)
    try:
        ok &= correctness()
    except Exception:  # noqa: BLE001
        traceback.print_exc()
        ok = False
save()
print(f"correctness {'passed' if ok else 'FAILED'}; elapsed {time.time() - t_start:.0f} s", flush=True)
if ok or os.environ.get("WG_TIME_ANYWAY"):
    for args in ((16, 4096), (16, 8192), (16, 2048), (32, 2048), (16, 32768), (32, 4096), (24, 4096), (16, 16384)):
        try:
            point(*args)
        except Exception:  # noqa: BLE001
            traceback.print_exc()
        cp.get_default_memory_pool().free_all_blocks()
        save()
        print(f"elapsed {time.time() - t_start:.0f} s", flush=True)
