"""Run labkit's decode kernel through the manifest runner: build, check the call, launch, read back."""

import tempfile
from dataclasses import dataclass

import numpy as np

from ...cuda import cupy, gpu_status, require_gpu
from ...errors import ArgumentError
from ...timing import MODES, Timing
from ...values import check_int
from .build import build_plan
from .geometry import DecodeGeometry
from .inputs import DecodeInputs, bf16_to_f32, check_call
from .knobs import check_call_args, check_overrides
from .plan import H200_L2_BYTES, plan_call, plan_for_device


@dataclass(frozen=True)
class DecodeRun:
    """One decode call's output (float32, [q_tokens, Hq, D]; rows the call has no token for stay NaN)
    and, when timed, its Timing."""

    out: np.ndarray
    splits: int
    timing: Timing | None
    kv_bytes: int  # K and V bytes the call reads (one read of every token's K and V row of each KV head)
    plan: dict  # the CallPlan that ran (CallPlan.to_dict(): build, splits, cluster, PDL)


def decode_runner(g: DecodeGeometry, splits: int | None, directory, fill, *, timeline: bool = False, **overrides):
    """A manifest Runner for ``g`` (kernel built into ``directory``) and its ``CallPlan`` (``plan_call``'s for
    this GPU; ``splits`` and ``overrides``, its build knobs ``knobs.OVERRIDES``, override it); ``timeline``: the
    instrumented build, its records in the runner's ``("decode", "timeline")`` scratch."""
    from ...device import describe
    from ...manifest import load
    from ...manifest.runner import Runner

    require_gpu("the decode kernel")
    plan = plan_for_device(g, splits=splits, timeline=timeline, **overrides)
    path = build_plan(g, plan, directory, arch=describe().arch)
    return Runner(load(path), cubin_dirs=(directory,), fill=fill), plan


def kv_bytes(x: DecodeInputs) -> int:
    g = x.geometry
    return int(2 * x.seq_lens.sum()) * g.heads_kv * g.head_dim * 2


def run_decode(x: DecodeInputs, *, splits: int | None = None, iterations: int | None = None, mode: str = "cold",
               **overrides) -> DecodeRun:
    """Check the call, build (cached), launch once, read ``out``; time it when ``iterations`` is given;
    ``overrides``: ``plan_call``'s build knobs (``knobs.OVERRIDES``).

    Raises:
        ArgumentError: a bad page table, seq_len, q token count, timing mode, count or knob (before anything is built
            or the GPU is asked for).
    """
    g = x.geometry
    check_call(g, x.page_table, x.seq_lens, x.cu_seqlens_q)
    if mode not in MODES:  # the timing's arguments and the build's knobs before the GPU is asked for (an API walk)
        raise ArgumentError(f"mode {mode!r}: expected one of {', '.join(MODES)}")
    if iterations is not None:
        check_int(iterations, what="iterations (None: no timing)", lo=1)
    check_call_args(splits, 132, "sm_90")  # the count alone: the knobs' checks depend on the GPU's plan
    overrides = check_overrides(overrides)
    if overrides and not gpu_status()[0]:
        plan_call(g, splits=splits, **overrides)  # no GPU to plan for: a bad knob by the H200's plan, not "needs a GPU"
    host = {"q": x.q, **x.pool, "table": x.page_table, "seq": x.seq_lens, "cuq": x.cu_seqlens_q}
    with tempfile.TemporaryDirectory() as tmp:
        runner, plan = decode_runner(g, splits, tmp, lambda name, arr: arr.set(np.ascontiguousarray(host[name])),
                                     **overrides)
        runner.run_once()
        _check_counters_reset(runner, "the first call")
        out = bf16_to_f32(cupy().asnumpy(runner.buffers["out"]))
        timing = None
        if iterations is not None:
            runner.buffers["out"].fill(0xFFFF)  # poison again: the timed calls must write it too
            timing = runner.time(iterations=iterations, mode=mode)["decode/paged"]
            _check_counters_reset(runner, f"the {mode} timed calls")
            again = bf16_to_f32(cupy().asnumpy(runner.buffers["out"]))
            used = ~np.isnan(out)
            if not np.array_equal(again[used], out[used]):
                raise AssertionError("decode: the timed calls wrote a different output than the first call")
    return DecodeRun(out, plan.splits, timing, kv_bytes(x), plan.to_dict())


def _check_counters_reset(runner, after: str) -> None:
    """Every split or claim counter is back at 0: graph replays zero nothing between calls, so a counter left off 0
    would have the next call reduce before all its splits arrived. Identical inputs call after call hide that in the
    output (the early reduction reads the last call's equal partials), so the counters are read themselves."""
    counter = runner.scratch.get(("decode", "counter"))
    if counter is None:
        return
    left = cupy().asnumpy(counter).view(np.uint32)
    if left.any():
        raise AssertionError(f"decode: after {after} {int(np.count_nonzero(left))} of {left.size} counters are not 0 "
                             f"(first {left[left != 0][:4].tolist()})")


def geometry_for(batch: int, kv_len: int, *, heads_q: int = 32, heads_kv: int = 8, head_dim: int = 128,
                 page_size: int = 64, max_q_len: int = 1, layout: str = "plain") -> DecodeGeometry:
    """A geometry whose pool holds exactly ``batch`` sequences of ``kv_len`` tokens."""
    kv_len = check_int(kv_len, what="kv_len (tokens per sequence)", lo=1)  # -1 had been said as "max_pages = 0"
    pages = -(-kv_len // page_size)
    return DecodeGeometry(batch, heads_q, heads_kv, head_dim, page_size, pages, batch * pages, max_q_len, layout)


def decode_timeline(batch: int, kv_len: int, head_dim: int, *, heads_q: int = 32, heads_kv: int = 8,
                    page_size: int = 64, splits: int | None = None, cold: bool | str = False, **overrides):
    """Per-CTA records of one call of the instrumented kernel (``-DLABKIT_TIMELINE``) at this shape, on
    random inputs over a shuffled pool (as the benchmark's), as a ``labkit.sched.Timeline``; ``splits`` None:
    the plan's own call (its count and build; a count asked for takes the build ``plan_call`` gives it). Record
    ``cta`` = split + splits x (head-block + heads_kv x row-blocks x sequence), or the
    1-D grid's index with tail splits. The call runs twice, the second recorded (the first loads the module);
    ``cold``: after ``labkit.timing.flush_l2``, as the cold timing's samples (True or ``"cold"``: L2 left dirty by the
    flush; ``"cold_clean"``: then clean, the records zeroed before the clean read)."""
    from ...device import describe
    from ...sched import Timeline, cubin_occupancy
    from ...timing import flush_l2
    from .bench import shape_runner

    with shape_runner(batch, kv_len, head_dim, heads_q=heads_q, heads_kv=heads_kv, page_size=page_size, splits=splits,
                      timeline=True, **overrides) as (runner, plan, folder):
        runner.run_once()
        if cold:
            flush_l2("cold" if cold is True else cold, setup=runner.zero_scratch)
            runner.launch_call(0)
            cupy().cuda.get_current_stream().synchronize()  # a faulting kernel raises here
        else:
            runner.run_once()  # the zeroed records now hold this call's CTAs only
        records = cupy().asnumpy(runner.scratch[("decode", "timeline")]).view(np.uint64).reshape(-1, 6)
        cubin = next(folder.glob("*.cubin")).read_bytes()
        del runner  # its buffers go back before the pool is emptied
    occ = cubin_occupancy(cubin, dynamic_smem_bytes=plan.kernel.dynamic_smem_bytes)
    records = records.astype(np.int64)
    return Timeline(records[records[:, 3] > 0], sms=describe().sm_count, ctas_per_sm=occ.ctas_per_sm)


# what a CPU box plans for (plan_call's defaults), as the CLI names it
H200_PLANNED = f"planned for the H200 (sm_90, 132 SMs, {H200_L2_BYTES >> 20} MiB L2)"


def _gpu_here():
    """This GPU's description, or None on a box without one (where labkit plans for the H200)."""
    from ...cuda import gpu_status

    if not gpu_status()[0]:
        return None
    from ...device import describe

    return describe()


def sms_here() -> int:
    """The SMs ``plan_here`` plans for: this GPU's, else the H200's 132."""
    gpu = _gpu_here()
    return gpu.sm_count if gpu else 132


def plan_here(g: DecodeGeometry, **overrides):
    """(the plan for ``g`` and a line naming what it was planned for): this GPU where there is one (its SMs, L2 and
    clusters, as the bench plans), else the H200 (``plan_call``'s defaults): a cubin built on a CPU box is planned
    for the H200, and an H100's 50 MiB L2 gives 157-189 MB calls another build."""
    gpu = _gpu_here()
    if gpu:
        return plan_for_device(g, **overrides), f"planned for this GPU, {gpu.name}"
    return plan_call(g, **overrides), f"{H200_PLANNED}: no GPU here"
