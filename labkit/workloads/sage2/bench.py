"""Sage2 benchmark at one shape: check once, then time each phase against its floor.

Floors: each prep phase's fewest bytes (inputs read once, outputs written once) over the
copy bandwidth measured in the same run (read + written bytes per second). The mainloop is
reported in TOPS (4 B N_q N_kv H D operations) and, when torch is importable, against
torch's cuDNN and flash SDPA backends and FlashAttention-3 (bf16, FP8), twice: interleaved with the
mainloop in a shuffled order (``timing.interleave``: the peers and the mainloop share conditions and
predecessors), and each alone, as the mainloop's phase timing is (``alone_ms``, ``mainloop_x_alone``).
Both, because on a power-capped GPU a kernel runs slower right after a hungrier one: on the H200 the sm90
mainloop ran 5-8 % slower right after FA3 FP8 while FA3 FP8 lost about 1-2 % after it
(data/runs/20261201T155500Z-sage2_sm90_ones_fa3style), so a shuffled mix of peers charges each kernel
for its neighbours' power as well as its own time. The two-term P.V variant (``pv_terms`` 2) is checked
and timed beside it: the price of its precision.
"""

import math

from ...cuda import cupy, require_gpu, torch_on_cupy_stream
from ...timing import interleave, time_gpu
from ...values import Shape, check_int
from .inputs import check_inputs, random_inputs, to_f32
from .plan import Sage2Plan
from .reference import accuracy, attention_ref, check_accuracy, to_bhnd
from .schedule import Schedule

LAUNCH_BOUND_S = 10e-6  # below this byte floor a phase is timed as a kernel launch, not as traffic
TARGET_MAINLOOP_S = 0.127  # the public sm89-schedule kernel on the H200 (323 TOPS)
TARGET_GPU = "H200"  # x_target_127ms is a ratio to that GPU's time: shown on one only (``labkit.device.is_h200``)


def x_target(mainloop_s: float, device: str) -> dict:
    """``{'x_target_127ms': ...}`` on an H200, {} on another GPU (the public kernel was not timed there)."""
    from ...device import is_h200

    return {"x_target_127ms": mainloop_s / TARGET_MAINLOOP_S} if is_h200(device) else {}


def x_floor(p50_s: float, floor_s: float) -> float | str:
    """Time over the byte floor; a phase that moves a few KB is one kernel launch, and its ratio to a byte floor
    says nothing, so it reads 'launch-bound'."""
    return p50_s / floor_s if floor_s >= LAUNCH_BOUND_S else "launch-bound"


def phase_bytes(p: Sage2Plan) -> dict[str, int]:
    """Fewest bytes each phase must move (16-bit inputs, padded outputs as the kernels write)."""
    x = p.inputs
    q_in = x.batch * x.q_len * x.heads_q * x.head_dim * 2
    kv_in = x.batch * x.kv_len * x.heads_kv * x.head_dim * 2
    return {
        "k_mean_and_smoothing_preparation": 2 * kv_in,  # K's mean and V's |v| maximum
        "q_int8_quantization": q_in + p.q8.nbytes + p.q_scale.nbytes,
        "k_int8_subtract_mean_quantization": kv_in + p.k8.nbytes + p.k_scale.nbytes,
        "v_transpose_pad_permute": kv_in + p.v8.nbytes * (1 if p.v8_lo is None else 2),  # transposed to e4m3
        "v_scale_fp8_quantization": p.v_amax.nbytes + p.v_scale.nbytes,
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

    def sdpa():
        with sdpa_kernel([backend]):
            torch.nn.functional.scaled_dot_product_attention(tq, tk, tv, scale=sm_scale,
                                                             enable_gqa=x.heads_q != x.heads_kv)

    return torch_on_cupy_stream(sdpa)


def _fa3(x, sm_scale: float, fp8: bool):
    """FlashAttention-3 (PyPI ``fa3-fwd``) on the same inputs: (launcher, output as fp32 CuPy [B, N, H, D]).
    FP8: per-tensor e4m3 casts with their descales (amax / 448), as a user of its FP8 path would."""
    import torch
    from fa3_fwd_interface import flash_attn_func

    cp = cupy()
    t16 = torch.bfloat16 if x.dtype == "bf16" else torch.float16
    tq, tk, tv = (torch.from_dlpack(a.view(cp.int16)).view(t16) for a in (x.q, x.k, x.v))
    if x.layout == "HND":
        tq, tk, tv = (t.transpose(1, 2).contiguous() for t in (tq, tk, tv))
    kw = {}
    if fp8:
        scales = [t.abs().amax().float() / 448.0 for t in (tq, tk, tv)]
        tq, tk, tv = ((t.float() / sc).to(torch.float8_e4m3fn) for t, sc in zip((tq, tk, tv), scales))
        desc = [sc.reshape(1, 1).expand(x.batch, x.heads_kv).contiguous() for sc in scales]
        kw = {"q_descale": desc[0], "k_descale": desc[1], "v_descale": desc[2]}
    result = {}

    def fa3():
        o = flash_attn_func(tq, tk, tv, softmax_scale=sm_scale, **kw)
        result["out"] = o[0] if isinstance(o, tuple) else o

    def output():
        return cp.from_dlpack(result["out"].float().contiguous())

    return torch_on_cupy_stream(fa3), output


def _peer_rows(p, ops: int, iterations: int, ref, layout: str, main_alone, device: str) -> list[dict]:
    """torch SDPA (cuDNN, flash) and FA3 (bf16, FP8) timed interleaved with the mainloop (cold, shuffled
    order), then each alone (cold): a row for the mainloop's own samples in the rounds, then one per peer;
    FA3's accuracy against ``ref``. ``main_alone``: the mainloop's Timing alone (its phase timing)."""
    rows = []
    try:
        import torch  # noqa: F401
    except ImportError:
        return [{"phase": "torch SDPA / FA3", "error": "torch not importable"}]
    calls = {f"torch SDPA {b}": (_torch_sdpa(p.inputs, b, p.sm_scale), None)
             for b in ("CUDNN_ATTENTION", "FLASH_ATTENTION")}
    for name, fp8 in (("FA3 bf16", False), ("FA3 FP8 e4m3", True)):
        try:
            calls[name] = _fa3(p.inputs, p.sm_scale, fp8)
        except Exception as exc:  # noqa: BLE001 - an optional peer: say why it is missing
            rows.append({"phase": name, "error": f"skipped: {type(exc).__name__}: {exc}"[:120]})
    main = "fused_mainloop, interleaved with the peers"
    fns = {main: p.mainloop}
    for name, (run, _) in calls.items():
        try:  # a first call outside the timing: a backend may not support the shape
            run()
            cupy().cuda.get_current_stream().synchronize()
        except Exception as exc:  # noqa: BLE001
            rows.append({"phase": name, "error": f"{type(exc).__name__}: {exc}"[:120]})
            continue
        fns[name] = run
    timing = interleave(fns, iterations=iterations, warmup=1, mode="cold", order="shuffle")
    main_s, main_alone_s = timing[main].stats.p50_s, main_alone.stats.p50_s
    rows.append({"phase": main, "p50_ms": main_s * 1e3, "TOPS": ops / main_s / 1e12,
                 **x_target(main_s, device), "MHz": timing[main].clock_span_mhz(),
                 "alone_ms": main_alone_s * 1e3, "alone_MHz": main_alone.clock_span_mhz()})
    for name in [n for n in fns if n != main]:
        t = timing[name].stats.p50_s
        # no graph-capture check of a torch call (its allocator may not capture); interleave() above ran it too
        alone_t = time_gpu(fns[name], name=f"sage2/peer/{name}", iterations=iterations, mode="cold",
                           check_work=False)
        alone = alone_t.stats.p50_s
        row = {"phase": name, "p50_ms": t * 1e3, "TFLOPS": ops / t / 1e12, "mainloop_x_this": main_s / t,
               "MHz": timing[name].clock_span_mhz(), "alone_ms": alone * 1e3, "mainloop_x_alone": main_alone_s / alone,
               "alone_MHz": alone_t.clock_span_mhz()}
        output = calls[name][1]
        if output is not None and ref is not None:
            acc = accuracy(to_bhnd(output(), "NHD"), ref)
            row["cos"], row["rel_l1"] = acc["cos"], acc["rel_l1"]
        rows.append(row)
    return rows


def bench(shape=(1, 37810, 56, 128), *, iterations: int = 10, warmup: int = 3, layout: str = "NHD",
          check: bool = True, seed: int = 0, schedule: Schedule = Schedule()) -> dict:
    """Run the benchmark for ``schedule``'s mainloop (the seed-schedule build is timed beside an sm90 one);
    returns rows and the numbers behind them (JSON-ready)."""
    from ...device import describe
    from ...probes import copy_ceiling_GBps
    from .profile import check_options

    b, n, h, d = shape = Shape.of(shape)  # every argument checked before any GPU work
    check_options(layout=layout, dtype="bf16", seed=seed)
    check_int(iterations, what="iterations", lo=1)
    check_int(warmup, what="warmup", lo=0)
    require_gpu("the Sage2 bench")  # named for what the user ran, not for its first step (the copy probe)
    device = describe().name
    bw = copy_ceiling_GBps() * 1e9
    q, k, v = random_inputs(b, n, n, h, h, d, layout=layout, seed=seed)
    x = check_inputs(q, k, v, layout=layout)
    p = Sage2Plan(x, schedule)
    p2 = Sage2Plan(x, Schedule(pv_terms=2) if schedule.mainloop == "seed" else Schedule())  # the other build
    out = {"shape": list(shape), "layout": layout, "copy_GBps": bw / 1e9, "schedule": schedule.text(),
           "device": device}
    ref = None
    if check:  # check before timing: a wrong kernel is never timed
        ref = attention_ref(*(to_f32(a, x.dtype) for a in (q, k, v)), sm_scale=p.sm_scale, layout=layout)
        for plan, key in ((p, "accuracy"), (p2, "accuracy_" + _label(p2.schedule))):
            plan.run()
            acc = accuracy(to_bhnd(to_f32(plan.out, x.dtype), layout), ref)
            out[key] = acc
            check_accuracy(acc, f"Sage2 ({_label(plan.schedule)})")
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
            row["x_floor"] = x_floor(p50, floors[name] / bw)
        if name == "fused_mainloop":
            row["TOPS"] = ops / p50 / 1e12
            row.update(x_target(p50, device))
            row["MHz"] = t.clock_span_mhz()
        rows.append(row)
    t2 = time_gpu(p2.mainloop, name=f"sage2/mainloop/{_label(p2.schedule)}", iterations=iterations).stats.p50_s
    rows.append({"phase": f"fused_mainloop {_label(p2.schedule)}", "p50_ms": t2 * 1e3, "TOPS": ops / t2 / 1e12,
                 **x_target(t2, device)})
    rows += _peer_rows(p, ops, iterations, ref, layout, timing.phases["fused_mainloop"], device)
    out["rows"] = rows
    out["phases"] = {k: t.to_dict() for k, t in timing.phases.items()}
    return out


# what each column means, printed under the table for the columns that hold a value
COLUMNS = {
    "floor_ms": "the phase's fewest bytes (inputs read once, outputs written once) over the run's copy rate",
    "x_floor": "p50 / floor_ms ('launch-bound': a floor under 10 us); the mainloop's rows give TOPS instead",
    "TOPS": "labkit's mainloop, 4 B N_q N_kv H D operations per second (its 8-bit MMAs)",
    "x_target_127ms": f"p50 / {TARGET_MAINLOOP_S * 1e3:.0f} ms, the public sm89-schedule kernel on the {TARGET_GPU}",
    "TFLOPS": "a peer's rate, the same operation count over its p50",
    "mainloop_x_this": "the mainloop's p50 in the shuffled rounds / this peer's (under 1: the mainloop faster)",
    "MHz": "the SM clock at the timing's start and end",
    "alone_ms": "p50 timed alone, not in the rounds (mainloop_x_alone and alone_MHz likewise)",
    "cos": "accuracy against exact fp32 attention (cos, rel_l1)",
}


def _label(s: Schedule) -> str:
    return "sm90" if s.mainloop == "sm90" else ("pv_terms=2" if s.pv_terms == 2 else "seed schedule")


def render(result: dict) -> str:
    device = result.get("device")  # written since the first run on an H100
    head = (f"Sage2 bench {result['shape']} {result['layout']}, schedule {result.get('schedule', '128/64/32/1')}, "
            + (f"on {device}, " if device else "") + f"copy {result['copy_GBps']:.0f} GB/s (read+write)")
    from ...device import is_h200

    if device and not is_h200(device):
        head += (f"\nx_target_127ms (the public kernel's {TARGET_MAINLOOP_S * 1e3:.0f} ms on the {TARGET_GPU}) is not "
                 "shown on this GPU: mainloop_x_this compares with the peers timed here")
    for key in [k for k in result if k.startswith("accuracy")]:
        a, label = result[key], key.removeprefix("accuracy").removeprefix("_") or "this schedule"
        head += f"\ncheck vs fp32 reference, {label}: cos {a['cos']:.6f}, rel-L1 {a['rel_l1']:.4f}, NaN {a['nan']}"
    cols = ["phase", "p50_ms", "floor_ms", "x_floor", "TOPS", "x_target_127ms", "TFLOPS", "mainloop_x_this", "MHz",
            "alone_ms", "mainloop_x_alone", "alone_MHz", "cos", "rel_l1", "error"]
    if device and not is_h200(device):  # an empty column otherwise
        cols.remove("x_target_127ms")
    lines = [head, "  ".join(f"{c:>14}" if i else f"{c:<36}" for i, c in enumerate(cols))]
    for r in result["rows"]:
        cells = []
        for i, c in enumerate(cols):
            v = r.get(c, "")
            s = f"{v:.3f}" if isinstance(v, float) and not math.isnan(v) else str(v)
            cells.append(f"{s:>14}" if i else f"{s:<36}")
        lines.append("  ".join(cells).rstrip())
    held = {c for r in result["rows"] for c in cols if r.get(c, "") != ""}
    lines += [f"  {c}: {text}" for c, text in COLUMNS.items() if c in held]
    return "\n".join(lines)
