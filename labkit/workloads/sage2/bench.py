"""Sage2 benchmark at one shape: check once, then time each phase against its floor.

Floors: each prep phase's fewest bytes (inputs read once, outputs written once) over the
copy bandwidth measured in the same run (read + written bytes per second). The mainloop is
reported in TOPS (4 B N_q N_kv H D operations) and, when torch is importable, against
torch's cuDNN and flash SDPA backends timed the same way. The two-term P.V variant
(``pv_terms`` 2) is checked and timed beside it: the price of its precision.
"""

import math

from ...cuda import cupy
from ...errors import LabkitError
from ...timing import time_gpu
from ...values import Shape, check_int
from .inputs import check_inputs, random_inputs, to_f32
from .plan import Sage2Plan
from .reference import accuracy, attention_ref, to_bhnd
from .schedule import Schedule

TARGET_MAINLOOP_S = 0.127  # the public sm89-schedule kernel on this H200 (323 TOPS)


def phase_bytes(p: Sage2Plan) -> dict[str, int]:
    """Fewest bytes each phase must move (16-bit inputs, padded outputs as the kernels write)."""
    x = p.inputs
    q_in = x.batch * x.q_len * x.heads_q * x.head_dim * 2
    kv_in = x.batch * x.kv_len * x.heads_kv * x.head_dim * 2
    return {
        "k_mean_and_smoothing_preparation": kv_in,
        "q_int8_quantization": q_in + p.q8.nbytes + p.q_scale.nbytes,
        "k_int8_subtract_mean_quantization": kv_in + p.k8.nbytes + p.k_scale.nbytes,
        "v_transpose_pad_permute": kv_in + p.v_transposed.nbytes,
        "v_scale_fp8_quantization": p.v_transposed.nbytes + p.v8.nbytes,
        "fused_mainloop": p.q8.nbytes + p.k8.nbytes + p.v8.nbytes + p.out.nbytes,
    }


def _torch_sdpa(x, backend_name: str, sm_scale: float):
    import torch
    from torch.nn.attention import SDPBackend, sdpa_kernel

    cp = cupy()
    tq, tk, tv = (torch.from_dlpack(a.view(cp.int16)).view(torch.bfloat16 if x.dtype == "bf16" else torch.float16)
                  for a in (x.q, x.k, x.v))
    if x.layout == "NHD":
        tq, tk, tv = (t.transpose(1, 2) for t in (tq, tk, tv))
    backend = getattr(SDPBackend, backend_name)

    def run():
        stream = torch.cuda.ExternalStream(cp.cuda.get_current_stream().ptr)
        with torch.cuda.stream(stream), sdpa_kernel([backend]):
            torch.nn.functional.scaled_dot_product_attention(tq, tk, tv, scale=sm_scale,
                                                             enable_gqa=x.heads_q != x.heads_kv)

    return run


def bench(shape=(1, 37810, 56, 128), *, iterations: int = 10, warmup: int = 3, layout: str = "NHD",
          check: bool = True, seed: int = 0) -> dict:
    """Run the benchmark; returns rows and the numbers behind them (JSON-ready)."""
    from ...probes import copy_bandwidth
    from .profile import check_options

    b, n, h, d = shape = Shape.of(shape)  # every argument checked before any GPU work
    check_options(layout=layout, dtype="bf16", seed=seed)
    check_int(iterations, what="iterations", lo=1)
    check_int(warmup, what="warmup", lo=0)
    bw = copy_bandwidth(1 << 30)["memcpy"]["GBps_read_plus_write"] * 1e9
    q, k, v = random_inputs(b, n, n, h, h, d, layout=layout, seed=seed)
    x = check_inputs(q, k, v, layout=layout)
    p, p2 = Sage2Plan(x), Sage2Plan(x, Schedule(pv_terms=2))
    out = {"shape": list(shape), "layout": layout, "copy_GBps": bw / 1e9}
    if check:  # check before timing: a wrong kernel is never timed
        ref = attention_ref(*(to_f32(a, x.dtype) for a in (q, k, v)), sm_scale=p.sm_scale, layout=layout)
        for plan, key in ((p, "accuracy"), (p2, "accuracy_pv_terms2")):
            plan.run()
            acc = accuracy(to_bhnd(to_f32(plan.out, x.dtype), layout), ref)
            out[key] = acc
            if acc["nan"] or acc["cos"] < 0.999:
                raise LabkitError(f"Sage2 (pv_terms {plan.schedule.pv_terms}) check failed before timing: {acc}")
        del ref
    else:
        p2.run()  # the mainloop below reads the prepared v8 / v8_lo
    timing = p.run_phases(iterations=iterations, warmup=warmup)
    floors = phase_bytes(p)
    rows = []
    ops = 4 * b * n * n * h * d
    for name, t in timing.phases.items():
        p50 = t.stats.p50_s
        row = {"phase": name, "p50_ms": p50 * 1e3}
        if name in floors and name != "fused_mainloop":
            row["floor_ms"] = floors[name] / bw * 1e3
            row["x_floor"] = p50 / (floors[name] / bw)
        if name == "fused_mainloop":
            row["TOPS"] = ops / p50 / 1e12
            row["x_target_127ms"] = p50 / TARGET_MAINLOOP_S
        rows.append(row)
    t2 = time_gpu(p2.mainloop, name="sage2/mainloop/pv_terms2", iterations=iterations).stats.p50_s
    rows.append({"phase": "fused_mainloop pv_terms=2", "p50_ms": t2 * 1e3, "TOPS": ops / t2 / 1e12,
                 "x_target_127ms": t2 / TARGET_MAINLOOP_S})
    try:
        import torch  # noqa: F401

        main = timing.phases["fused_mainloop"].stats.p50_s
        for backend in ("CUDNN_ATTENTION", "FLASH_ATTENTION"):
            try:
                t = time_gpu(_torch_sdpa(p.inputs, backend, p.sm_scale), name=f"torch/{backend}", iterations=iterations,
                             check_work=False)
            except Exception as exc:  # a backend may not support the shape
                rows.append({"phase": f"torch SDPA {backend}", "error": f"{type(exc).__name__}: {exc}"[:120]})
                continue
            rows.append({"phase": f"torch SDPA {backend}", "p50_ms": t.stats.p50_s * 1e3,
                         "TFLOPS": ops / t.stats.p50_s / 1e12, "mainloop_x_this": main / t.stats.p50_s})
    except ImportError:
        rows.append({"phase": "torch SDPA", "error": "torch not importable"})
    out["rows"] = rows
    out["phases"] = {k: t.to_dict() for k, t in timing.phases.items()}
    return out


def render(result: dict) -> str:
    head = f"Sage2 bench {result['shape']} {result['layout']}, copy {result['copy_GBps']:.0f} GB/s (read+write)"
    for key, label in (("accuracy", "Sage2"), ("accuracy_pv_terms2", "pv_terms=2")):
        if key in result:
            a = result[key]
            head += f"\ncheck vs fp32 reference, {label}: cos {a['cos']:.6f}, rel-L1 {a['rel_l1']:.4f}, NaN {a['nan']}"
    cols = ["phase", "p50_ms", "floor_ms", "x_floor", "TOPS", "x_target_127ms", "TFLOPS", "mainloop_x_this", "error"]
    lines = [head, "  ".join(f"{c:>14}" if i else f"{c:<36}" for i, c in enumerate(cols))]
    for r in result["rows"]:
        cells = []
        for i, c in enumerate(cols):
            v = r.get(c, "")
            s = f"{v:.3f}" if isinstance(v, float) and not math.isnan(v) else str(v)
            cells.append(f"{s:>14}" if i else f"{s:<36}")
        lines.append("  ".join(cells).rstrip())
    return "\n".join(lines)
