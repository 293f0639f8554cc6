"""Where the 1 x 8k d128 plan's time goes above its own data movement: diagnostic builds of the plan's kernel (mma
w8s3ef cl8, 8 splits), each over the same K/V, interleaved with pure reads of the same 33.6 MB (shuffled rounds, p50):
  plan     the plan over the bench's shuffled page table (what `labkit decode bench` times)
  ident    an identity page table (sequence 0's pages in order): the same data in DRAM order
  noload   ident, page ids computed and seq_len / q offsets fixed: no global load before the first TMA
  nomath   ident, the stage ring without the attention math (merge and cluster reduce of zeros kept)
  notail   ident, nothing after the stage loop (no merge, reduce or output)
  move     noload + nomath + notail: the plan's own TMA boxes and stage ring alone
  tma ef 64 x S x 16 KB / ldg cs 64 x 1024: ring_read.py's pure reads
The DIAG_* defines come from .dbg/ring/waterfall_diag.diff (it holds .dbg/paging/paging_diag.diff too), applied on
the device only.
ident and noload must give bit-identical outputs (the same data and math)."""
import dataclasses
import json
import os
import sys
import time
from contextlib import ExitStack

import numpy as np

sys.path.insert(0, os.getcwd())
from labkit.cuda import cupy  # noqa: E402
from labkit.timing import interleave  # noqa: E402
from labkit.workloads.decode import bench as B  # noqa: E402
from labkit.workloads.decode import geometry as G  # noqa: E402
from labkit.workloads.decode import run as R  # noqa: E402
from labkit.workloads.decode.geometry import kernel_label  # noqa: E402
from labkit.workloads.decode.inputs import bf16_to_f32  # noqa: E402

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
NOLOAD = ("-DDIAG_PAGE_ARITH", "-DDIAG_NO_SEQ_LOADS")
VARIANTS = {"plan": (False, ()), "ident": (True, ()), "noload": (True, NOLOAD), "nomath": (True, ("-DDIAG_NO_MATH",)),
            "notail": (True, ("-DDIAG_NO_TAIL",)), "move": (True, (*NOLOAD, "-DDIAG_NO_MATH", "-DDIAG_NO_TAIL"))}
POINTS = [(1, 8192, 128)] + ([(1, 32768, 128), (8, 8192, 128)] if os.environ.get("MORE") else [])


def reads(nbytes):
    """ring_read.py's evict-first TMA ring and streaming-load reads over a buffer of nbytes (N = K+V of the point)."""
    import re
    src = open(os.path.join(os.path.dirname(__file__), "ring_read.py")).read()
    code = re.search(r"SRC = r'''(.*?)'''", src, re.S).group(1)
    cp = cupy()
    mod = cp.RawModule(code=code, options=("-std=c++17",))
    tma_ef, ldg = mod.get_function("tma_read_ef"), mod.get_function("ldg_read")
    tma_ef.max_dynamic_shared_size_bytes = 200 * 1024
    buf = cp.random.randint(0, 2**31, size=nbytes // 4, dtype=cp.int32)
    sink = cp.zeros(1, dtype=cp.uint32)

    def tma(g, s, c):
        per = -(-nbytes // g // 16) * 16
        return lambda: tma_ef((g,), (32,), (buf, cp.uint64(nbytes), cp.uint64(per), cp.uint32(c * 1024), cp.int32(s),
                                           sink), shared_mem=s * c * 1024)
    return {"tma ef 64x12x16KB": tma(64, 12, 16), "tma ef 64x8x16KB": tma(64, 8, 16),
            "ldg cs 64x1024": lambda: ldg((64,), (1024,), (buf, cp.uint64(nbytes // 16), sink))}, buf


def one_point(b, n, d, results):
    cp = cupy()
    nbytes = 2 * b * n * 8 * d * 2
    with ExitStack() as stack:
        runners, plans, outs = {}, {}, {}
        for name, (ident, defines) in VARIANTS.items():
            MODE["identity"], MODE["defines"] = ident, defines
            runner, plans[name], _ = stack.enter_context(B.shape_runner(b, n, d))
            MODE["identity"], MODE["defines"] = False, ()
            runner.buffers["out"].fill(0xFFFF)  # poison
            runner.run_once()
            outs[name] = bf16_to_f32(cp.asnumpy(runner.buffers["out"]))
            runners[name] = runner
        for name in ("noload",):
            if not (np.isfinite(outs[name]).all() and np.array_equal(outs[name], outs["ident"])):
                raise AssertionError(f"{b}x{n} d{d} {name}: output differs from ident's")
        if not np.isfinite(outs["plan"]).all():
            raise AssertionError(f"{b}x{n} d{d} plan: output not finite")
        print(f"check {b}x{n} d{d}: noload bit-identical to ident; plan finite; "
              f"notail left the poison: {bool(np.isnan(outs['notail']).all())}", flush=True)
        fns = {name: (lambda r=r: r.launch_call(0)) for name, r in runners.items()}
        rd, _buf = reads(nbytes)
        fns.update(rd)
        for f in rd.values():
            f()
        cp.cuda.Device().synchronize()
        for rnd in range(3):
            timing = interleave(fns, iterations=40, warmup=1, mode="cold", order="shuffle", seed=rnd)
            base = timing["plan"].stats.p50_s
            for name, t in timing.items():
                row = {"point": f"{b}x{n} d{d}", "round": rnd, "variant": name, "p50_us": t.stats.p50_s * 1e6,
                       "TBps": nbytes / t.stats.p50_s / 1e12, "vs_plan_us": (t.stats.p50_s - base) * 1e6}
                if name in plans:
                    row.update(kernel=kernel_label(plans[name].kernel), splits=plans[name].splits)
                results.append(row)
                print(f"r{rnd} {b}x{n} d{d} {name:18s} {row.get('kernel', ''):16s} {row['p50_us']:8.2f} us "
                      f"{row['TBps']:6.3f} TB/s {row['vs_plan_us']:+6.2f} us", flush=True)
        runners.clear()
        del runner


results = []
t0 = time.time()
for (b, n, d) in POINTS:
    try:
        one_point(b, n, d, results)
    except Exception as exc:  # noqa: BLE001
        print(f"{b}x{n} d{d}: {type(exc).__name__}: {exc}", flush=True)
    cupy().get_default_memory_pool().free_all_blocks()
    with open(f"{OUT}/waterfall.json", "w") as f:
        json.dump(results, f, indent=1)
    print(f"elapsed {time.time() - t0:.0f} s", flush=True)
