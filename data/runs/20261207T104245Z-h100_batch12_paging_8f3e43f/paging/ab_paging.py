"""(s96: the 20261202T141300Z script at the batch 12-13 points on an H100, adapted to today's peers API.)
What the paging costs labkit's plan, beside cuDNN / flash / FA3 on the same K/V gathered contiguous.

Variants of the plan's own build and call, one cold sample of each per round in a shuffled order (40 rounds):
  shuf    the plan over the bench's shuffled page table (what `labkit decode bench` times)
  ident   the plan over an identity page table (sequence b's pages b * pages .. in order): DRAM order only
  arith   ident's data, the page id computed in the kernel (-DDIAG_PAGE_ARITH), not loaded
  noload  arith with seq_len and q offsets taken as the bench's (-DDIAG_NO_SEQ_LOADS): no global load before the
          first TMA, as a contiguous kernel with fixed lengths
  sdpa_cudnn / sdpa_flash / fa3: torch SDPA and FA3 on ident's q and K/V gathered contiguous
ident, arith and noload must give bit-identical outputs (the same data, the same math); cuDNN's output is compared
with ident's (max |diff|). The DIAG_* defines come from .dbg/s96/paging_diag.diff, applied on the device only.
"""
import dataclasses
import json
import os
import sys
import time
from contextlib import ExitStack

import numpy as np

from labkit.cuda import cupy, torch_on_cupy_stream
from labkit.timing import interleave
from labkit.workloads.decode import bench as B
from labkit.workloads.decode import geometry as G
from labkit.workloads.decode import run as R
from labkit.workloads.decode.geometry import kernel_label
from labkit.workloads.decode.inputs import bf16_to_f32
from labkit.workloads.decode.peers import gather_contiguous
_on_timing_stream = torch_on_cupy_stream

OUT = os.environ["R"]
MODE = {"identity": False, "defines": ()}


@dataclasses.dataclass(frozen=True)
class DiagBuild(G.KernelBuild):
    defines: tuple = ()

    def options(self):
        return (*super().options(), *self.defines)


_plan = R.plan_for_device


def plan_for_device(g, **kw):
    p = _plan(g, **kw)
    if MODE["defines"]:
        p = dataclasses.replace(p, kernel=DiagBuild(**{f.name: getattr(p.kernel, f.name)
                                                      for f in dataclasses.fields(p.kernel)},
                                                   defines=MODE["defines"]))
    return p


R.plan_for_device = plan_for_device
_fill = B._gpu_fill


def gpu_fill(g, seq_len, seed):
    inner = _fill(g, seq_len, seed)
    if not MODE["identity"]:
        return inner
    pages = -(-seq_len // g.page_size)
    table = np.arange(g.batch * pages, dtype=np.int32).reshape(g.batch, pages)
    table = np.pad(table, ((0, 0), (0, g.max_pages - pages)), constant_values=-1)

    def fill(name, arr):
        if name == "table":
            arr.set(table)
        else:
            inner(name, arr)
    return fill


B._gpu_fill = gpu_fill
VARIANTS = {"shuf": (False, ()), "ident": (True, ()), "arith": (True, ("-DDIAG_PAGE_ARITH",)),
            "noload": (True, ("-DDIAG_PAGE_ARITH", "-DDIAG_NO_SEQ_LOADS"))}
POINTS = [(12, 8192, 128), (12, 16384, 128), (13, 8192, 128), (16, 8192, 128), (12, 32768, 128), (64, 8192, 128)]


def one_round(b, n, d, rnd, results):
    import torch
    from torch.nn.attention import SDPBackend, sdpa_kernel

    cp = cupy()
    shape = {"heads_q": 32, "heads_kv": 8, "page_size": 64}
    group = 4
    nbytes = 2 * b * n * 8 * d * 2
    with ExitStack() as stack:
        runners, plans, outs = {}, {}, {}
        for name, (ident, defines) in VARIANTS.items():
            MODE["identity"], MODE["defines"] = ident, defines
            runner, plans[name], _ = stack.enter_context(B.shape_runner(b, n, d, **shape))
            MODE["identity"], MODE["defines"] = False, ()
            runner.buffers["out"].fill(0xFFFF)  # poison
            runner.run_once()
            outs[name] = bf16_to_f32(cp.asnumpy(runner.buffers["out"])).reshape(-1, group, d)
            runners[name] = runner
        for name in ("ident", "arith", "noload"):
            if not (np.isfinite(outs[name]).all() and np.array_equal(outs[name], outs["ident"])):
                raise AssertionError(f"{b}x{n} d{d} {name}: output differs from ident's")
        if not np.isfinite(outs["shuf"]).all():
            raise AssertionError(f"{b}x{n} d{d} shuf: output not finite")
        src = runners["ident"]

        def as_torch(a):
            return torch.from_dlpack(a.view(cp.int16)).view(torch.bfloat16)

        k, v = (as_torch(gather_contiguous(src.buffers[x], src.buffers["table"], b, n)) for x in ("k_pool", "v_pool"))
        q = as_torch(src.buffers["q"]).view(b, 1, 32, d)
        if os.environ.get("GATHER_SYNC"):  # the gather finished before any peer launches
            cp.cuda.get_current_stream().synchronize()
        qt, kt, vt = (x.transpose(1, 2) for x in (q, k, v))
        res = {}

        def sdpa(backend):
            with sdpa_kernel([backend]):
                res["o"] = torch.nn.functional.scaled_dot_product_attention(qt, kt, vt, enable_gqa=True)

        fns = {name: (lambda r=r: r.launch_call(0)) for name, r in runners.items()}
        fns["sdpa_cudnn"] = _on_timing_stream(lambda: sdpa(SDPBackend.CUDNN_ATTENTION))
        fns["sdpa_flash"] = _on_timing_stream(lambda: sdpa(SDPBackend.FLASH_ATTENTION))
        try:
            from fa3_fwd_interface import flash_attn_func
            fns["fa3"] = _on_timing_stream(lambda: flash_attn_func(q, k, v, num_splits=0))
        except Exception as exc:  # noqa: BLE001
            print(f"fa3 absent: {exc}", flush=True)
        fns["sdpa_cudnn"]()
        cp.cuda.get_current_stream().synchronize()
        ref = outs["ident"]
        cud = res["o"].transpose(1, 2).float().cpu().numpy().reshape(ref.shape)
        diff = float(np.abs(cud - ref).max())
        if os.environ.get("SYNC_PROBE"):  # the same tensor read again after a device-wide sync, then a new call
            torch.cuda.synchronize()
            again = float(np.abs(res["o"].transpose(1, 2).float().cpu().numpy().reshape(ref.shape) - ref).max())
            fns["sdpa_cudnn"]()
            torch.cuda.synchronize()
            fresh = float(np.abs(res["o"].transpose(1, 2).float().cpu().numpy().reshape(ref.shape) - ref).max())
            print(f"probe {b}x{n} r{rnd}: first read {diff:.3g}, after sync {again:.3g}, new call {fresh:.3g}; "
                  f"cupy stream {cp.cuda.get_current_stream().ptr}, torch stream {torch.cuda.current_stream().cuda_stream}",
                  flush=True)
        print(f"check {b}x{n} d{d}: ident/arith/noload bit-identical; cuDNN vs ident max |diff| {diff:.3g} "
              f"(|out| max {float(np.abs(ref).max()):.3g})", flush=True)
        timing = interleave(fns, iterations=40, warmup=1, mode="cold", order="shuffle", seed=rnd)
        for name, r in runners.items():
            if not np.array_equal(bf16_to_f32(cp.asnumpy(r.buffers["out"])).reshape(outs[name].shape), outs[name]):
                raise AssertionError(f"{name}: timed calls wrote a different output")
        base = timing["shuf"].stats.p50_s
        for name, t in timing.items():
            row = {"point": f"{b}x{n} d{d}", "round": rnd, "variant": name, "p50_us": t.stats.p50_s * 1e6,
                   "TBps": nbytes / t.stats.p50_s / 1e12, "vs_shuf": t.stats.p50_s / base - 1, "cudnn_max_diff": diff}
            if name in plans:
                row.update(kernel=kernel_label(plans[name].kernel), splits=plans[name].splits)
            results.append(row)
            print(f"AB r{rnd} {b}x{n} d{d} {name:10s} {row.get('kernel', ''):22s} p50 {row['p50_us']:8.2f} us "
                  f"{row['TBps']:6.3f} TB/s {row['vs_shuf']:+.2%}", flush=True)
        runners.clear()
        del runner, r, src


only = sys.argv[1:]
results = []
t0 = time.time()
for rnd in range(int(os.environ.get('ROUNDS', 3))):
    for (b, n, d) in POINTS:
        if only and f"{b}x{n}d{d}" not in only:
            continue
        try:
            one_round(b, n, d, rnd, results)
            import torch
            torch.cuda.empty_cache()
            cupy().get_default_memory_pool().free_all_blocks()
        except Exception as exc:  # noqa: BLE001
            print(f"{b}x{n} d{d}: {type(exc).__name__}: {exc}", flush=True)
        with open(f"{OUT}/ab_paging.json", "w") as f:
            json.dump(results, f, indent=1)
        print(f"elapsed {time.time() - t0:.0f} s", flush=True)
