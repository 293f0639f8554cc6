"""``profile()``: the Sage2 report of the seed's kind, measured on the GPU at hand.

Phase timings (each phase its own NVTX range and events, groups as the seed), the
decomposition check (phase-by-phase output vs the one-shot call, bitwise), checksums,
accuracy against exact fp32 attention, the scheduler, and the q/kv tail study with
interleaved configurations.
"""

import sys
from collections.abc import Sequence
from pathlib import Path

from ... import _env
from ..._text import wrapped
from ...cuda import cupy, require_gpu
from ...errors import ArgumentError
from ...provenance import collect
from ...report.model import DecompositionCheck, Sage2Report, TailPoint
from ...values import Shape, check_int
from .inputs import LAYOUTS, check_inputs, random_inputs, to_f32
from .plan import Sage2Plan
from .reference import CHECKSUM_DEFINITION, accuracy, accuracy_line, attention_ref, check_accuracy, checksum, to_bhnd
from .schedule import Schedule, scheduler
from .tails import check_tail_dir, tail_configs, tail_study

FUSED_PHASES = ("int8_qk", "scale_application", "online_softmax", "pv_accumulation", "final_normalization_and_output")


def check_options(*, layout: str, dtype: str, seed: int) -> None:
    """The options profile, precision_study and bench share (checked before any GPU work)."""
    if layout not in LAYOUTS:
        raise ArgumentError(f"layout {layout!r}: expected one of {', '.join(LAYOUTS)}")
    if dtype not in ("bf16", "fp16"):
        raise ArgumentError(f"dtype {dtype!r}: expected bf16 or fp16")
    check_int(seed, what="seed", lo=0, hi=2**63 - 1)


def _log(msg: str) -> None:
    print(wrapped(f"[sage2 profile] {msg}"), file=sys.stderr, flush=True)


def tensor_shape(shape: Shape, layout: str) -> tuple[int, int, int, int]:
    """q's (= k's = v's) tensor shape for B,N,H,D in ``layout``: [B, N, H, D] (NHD) or [B, H, N, D] (HND)."""
    b, n, h, d = shape
    return (b, n, h, d) if layout == "NHD" else (b, h, n, d)


def profile(shape=(1, 37810, 56, 128), *, layout: str = "NHD", dtype: str = "bf16", warmup: int = 3,
            iterations: int = 10, q_tails: list[int] | None = None, kv_tails: list[int] | None = None,
            tail_iterations: int = 5, seed: int = 0, schedule: Schedule = Schedule(),
            tails: Sequence[TailPoint] | None = None, tail_dir: Path | str | None = None) -> Sage2Report:
    """Measure the full report for q = k = v of ``shape`` [B, N, H, D] (fresh N(0, 1) inputs).

    The tail study runs as a labkit.sweep of interleaved rounds (labkit.workloads.sage2.tails) in
    ``tail_dir`` (resumable; a temporary directory if None), after the other measurements; ``tails``:
    a study already run (e.g. a notebook's ``Session.sweep``), used as it is.
    Every argument is checked before any GPU work (ArgumentError, as the CLI's).
    """
    shape = Shape.of(shape)
    check_options(layout=layout, dtype=dtype, seed=seed)
    check_int(warmup, what="warmup", lo=0)
    check_int(iterations, what="iterations", lo=1)
    check_int(tail_iterations, what="tail_iterations", lo=1)
    if not isinstance(schedule, Schedule):
        raise ArgumentError(f"schedule {schedule!r}: expected a Schedule")
    configs = tail_configs(shape, q_tails, kv_tails, schedule)
    if tails is not None and [(t.sweep, t.q_len, t.kv_len) for t in tails] != configs:
        raise ArgumentError(f"tails: {[(t.sweep, t.q_len, t.kv_len) for t in tails]} are not this study's "
                            f"configurations {configs}")
    if tails is None and tail_dir is not None:  # its sweep would otherwise be refused after the phase timings
        check_tail_dir(tail_dir, shape, iterations=tail_iterations, layout=layout, dtype=dtype, q_tails=q_tails,
                       kv_tails=kv_tails, seed=seed, schedule=schedule)
    require_gpu("sage2 profile")  # before the first progress line: a refusal is one line
    cp = cupy()
    b, n, h, d = shape
    _log(f"inputs {list(shape)} {layout} {dtype}, seed {seed}")
    q, k, v = random_inputs(b, n, n, h, h, d, layout=layout, dtype=dtype, seed=seed)
    p = Sage2Plan(check_inputs(q, k, v, layout=layout), schedule)
    p.run()
    one_shot = p.out.copy()
    _log("one-shot call done; exact fp32 reference ...")
    ref = attention_ref(*(to_f32(a, p.inputs.dtype) for a in (q, k, v)), sm_scale=p.sm_scale, layout=layout)
    acc = accuracy(to_bhnd(to_f32(one_shot, p.inputs.dtype), layout), ref)
    acc["reference"] = "exact softmax attention in fp32 on the bf16/fp16-rounded inputs"
    del ref
    check_accuracy(acc, f"Sage2 {schedule.text()} at {list(shape)}")  # a wrong kernel is never timed
    _log(f"{accuracy_line(acc)}; timing {iterations} phase-by-phase passes after {warmup} warm-up")
    timing = p.run_phases(iterations=iterations, warmup=warmup)
    a, o = to_f32(one_shot, p.inputs.dtype), to_f32(p.out, p.inputs.dtype)
    diff = cp.abs(a - o)
    dec = DecompositionCheck(equal=bool(cp.array_equal(one_shot.view(cp.uint16), p.out.view(cp.uint16))),
                             max_abs=float(diff.max()), mean_abs=float(diff.mean()))
    manual, reference = checksum(o), checksum(a)
    kernel_head_dim, sm_scale = p.kernel_head_dim, p.sm_scale
    del one_shot, a, o, diff, q, k, v, p  # the tail rounds allocate their own inputs
    if tails is None:
        _log(f"tail study: {len(configs)} configurations x {tail_iterations} interleaved rounds")
        tails = tail_study(shape, iterations=tail_iterations, layout=layout, dtype=dtype, q_tails=q_tails,
                           kv_tails=kv_tails, seed=seed, schedule=schedule, directory=tail_dir)
    kernel = "attn_fwd (labkit/workloads/sage2/kernels/attn_fwd.cu)"
    fused = {ph: f"fused inside {kernel}" for ph in FUSED_PHASES}
    fused["timing_policy"] = ("No independent wall time per sub-phase without changing the kernel schedule; the "
                              "// PHASE: markers in the source map ncu source counters to these sub-phases.")
    prov = collect(timing_mode="cold")
    return Sage2Report(
        metadata={"source": "labkit.workloads.sage2.profile", "inputs": "N(0, 1) q, k, v rounded to "
                  f"{dtype}, seed {seed}", "dtype": dtype, "layout": layout, "head_dim": d,
                  "kernel_head_dim": kernel_head_dim, "sm_scale": sm_scale, "schedule": schedule.to_dict(),
                  "tail_iterations_interleaved": tail_iterations, "repo": str(_env.repo_root().name)},
        # the tensors' shapes, as the seed's report gives them: [B, H, N, D] in HND, which report tables read so
        q_shape=tensor_shape(shape, layout), k_shape=tensor_shape(shape, layout), v_shape=tensor_shape(shape, layout),
        warmup=warmup, iterations=iterations,
        phase_timings=timing.stats(), fused_mainloop_phases=fused,
        scheduler=scheduler(b, n, n, h, kernel_head_dim, schedule), decomposition=dec, manual_checksum=manual,
        reference_checksum=reference, tail_study=tuple(tails), report_version=1, provenance=prov, accuracy=acc,
        checksum_definition=CHECKSUM_DEFINITION)
