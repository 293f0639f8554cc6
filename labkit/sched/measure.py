"""Measured points: instrumented launches of labkit's kernels, each read back as a ``Timeline`` and set
beside the model of the same launch (GPU; everything GPU-related is imported inside the functions).

``occupancy_table`` needs only NVRTC (no GPU): the cubins are compiled for ``arch`` and read.
``sage2_point`` and ``decode_point`` are what the sweep workloads ``sage2.timeline`` and
``decode.timeline`` run: one JSON-ready dict per point, model fields and measured fields side by side.
"""

import functools
import importlib
import statistics

from .._text import counted
from ..values import Shape, check_int
from .model import LaunchModel, decode_launch, sage2_launch
from .occupancy import Occupancy, cubin_occupancy

SAGE2_KERNEL = "attn_fwd"


def sage2_occupancy(head_dim: int = 128, *, arch: str = "sm_90", timeline: bool = False) -> Occupancy:
    """The Sage2 mainloop's occupancy (seed schedule), plain or with ``-DLABKIT_TIMELINE``."""
    from ..kernels import compile_cubin
    from ..workloads.sage2.plan import KERNELS, build_options
    from ..workloads.sage2.schedule import Schedule

    s = Schedule()
    opts = build_options(head_dim, "bf16", s) + (("-DLABKIT_TIMELINE",) if timeline else ())
    cubin = compile_cubin(KERNELS[SAGE2_KERNEL], arch=arch, options=opts)
    return cubin_occupancy(cubin.image, kernel=SAGE2_KERNEL, threads_per_cta=s.threads_per_cta,
                           dynamic_smem_bytes=s.dynamic_smem_bytes(head_dim))


def _decode_plan(batch: int, kv_len: int, head_dim: int, heads_q: int, heads_kv: int, page_size: int, *,
                 sms: int = 132, arch: str = "sm_90", splits: int | None = None, l2_bytes: int | None = None,
                 timeline: bool = False, cluster_fit: dict[int, int] | None = None):
    """The geometry and the ``CallPlan`` (build, splits) the decode runner launches for this call: ``splits`` None
    is the plan's own call; a count is that count with the build ``plan_call`` gives it, which can differ from the
    plan's own build at the same count (8 x 8k d128: the plan runs 2 splits of 8 warps in a cluster, while 2 splits
    asked for run the 4-warp build). ``timeline``: the instrumented call's plan (it keeps per-unit CTAs);
    ``cluster_fit`` and ``l2_bytes``: the clusters the GPU holds and its L2 (None: this GPU's, where ``sms`` and
    ``arch`` are this GPU's, as the launched call's plan asks; else ``plan.cluster_ctas``'s table and the H200's L2:
    an H100's 50 MiB takes calls of 157-189 MB off the evict-first build that 60 MiB gives them)."""
    from ..workloads.decode.plan import H200_L2_BYTES, plan_call
    from ..workloads.decode.run import geometry_for

    here = _this_gpu(sms, arch) if cluster_fit is None or l2_bytes is None else None
    if cluster_fit is None and here is not None:
        from .clusters import resident_cluster_ctas

        cluster_fit = resident_cluster_ctas(here.index)
    if l2_bytes is None:
        l2_bytes = here.l2_bytes if here is not None else H200_L2_BYTES
    g = geometry_for(batch, kv_len, heads_q=heads_q, heads_kv=heads_kv, head_dim=head_dim, page_size=page_size)
    return g, plan_call(g, sms=sms, arch=arch, l2_bytes=l2_bytes, splits=splits, timeline=timeline,
                        cluster_fit=cluster_fit)


def _this_gpu(sms: int, arch: str):
    """The GPU at hand (``DeviceInfo``) where ``sms`` and ``arch`` describe it (a model of this GPU's call then plans
    it as the launch does); None without a GPU or for another GPU."""
    from ..cuda import gpu_status

    if not gpu_status()[0]:
        return None
    from ..device import describe

    dev = describe()
    return dev if (dev.sm_count, dev.arch) == (sms, arch) else None


def decode_occupancy(batch: int, kv_len: int, *, head_dim: int = 128, heads_q: int = 32, heads_kv: int = 8,
                     page_size: int = 64, arch: str = "sm_90", sms: int = 132, splits: int | None = None) -> Occupancy:
    """The decode kernel's occupancy for the build this geometry gets (tensor-core or CUDA-core variant) at
    ``splits`` (None: the plan's own call; a count: as ``_decode_plan``, whose build can change with the count)."""
    build = importlib.import_module("labkit.workloads.decode.build")  # the package re-exports a function `build`
    _, plan = _decode_plan(batch, kv_len, head_dim, heads_q, heads_kv, page_size, sms=sms, arch=arch, splits=splits)
    return build.occupancy(plan.kernel, arch)


def occupancy_table(*, shape, decode: dict | None, arch: str) -> list[dict]:
    """One row per kernel: the Sage2 mainloop (plain and instrumented) and, given ``decode`` (batch,
    kv_len, head_dim, heads_q, heads_kv, page_size), the decode kernel. Fields of ``Occupancy``."""
    b, n, h, d = Shape.of(shape)
    rows = [{"kernel": "sage2 mainloop", **sage2_occupancy(d, arch=arch).to_dict()},
            {"kernel": "sage2 mainloop, -DLABKIT_TIMELINE", **sage2_occupancy(d, arch=arch, timeline=True).to_dict()}]
    if decode is not None:
        rows.append({"kernel": f"decode batch {decode['batch']} x {decode['kv_len']}",
                     **decode_occupancy(arch=arch, **decode).to_dict()})
    return rows


def _measured(model: LaunchModel, timelines: list) -> dict:
    """Per-launch stats of the timelines (the launch with the median slot efficiency), checked against the model."""
    from ..errors import LabkitError

    stats = [tl.stats() for tl in timelines]
    for s in stats:
        if s.ctas != model.ctas:
            raise LabkitError(f"the timeline holds {s.ctas} CTAs, the launch has {model.ctas}: records were lost")
    effs = [s.slot_efficiency for s in stats]
    mid = stats[effs.index(statistics.median_low(effs))]
    tile = model.q_tile_efficiency * model.kv_tile_efficiency * model.split_efficiency
    return {"timeline_ctas_per_sm": timelines[0].ctas_per_sm, "launches": len(stats),
            "measured_slot_efficiency": mid.slot_efficiency, "measured_sm_efficiency": mid.sm_efficiency,
            "measured_efficiency": mid.slot_efficiency * tile, "measured_waves": mid.waves,
            "measured_last_wave_ctas": mid.ctas_per_wave[-1], "makespan_us": mid.makespan_ns / 1e3,
            "last_wave_idle_slot_us": mid.last_wave_idle_slot_ns / 1e3, "sm_imbalance": mid.sm_imbalance,
            "slot_efficiency_min": min(effs), "slot_efficiency_max": max(effs)}


@functools.lru_cache(maxsize=1)
def _sage2_plan(shape: tuple[int, int, int, int], seed: int = 0):
    """An instrumented plan for ``shape`` with its inputs quantized once; a sweep's points reuse it."""
    from ..workloads.sage2.inputs import check_inputs, random_inputs
    from ..workloads.sage2.plan import Sage2Plan

    b, n, h, d = shape
    q, k, v = random_inputs(b, n, n, h, h, d, layout="NHD", dtype="bf16", seed=seed)
    plan = Sage2Plan(check_inputs(q, k, v, layout="NHD"), timeline=True)
    plan.run()  # the prep phases: the mainloop below reads their outputs
    return plan


def sage2_point(shape, q_len: int, kv_len: int, *, launches: int = 3) -> dict:
    """``launches`` instrumented mainloop calls at (q_len, kv_len) on the inputs of ``shape``: the model (the
    plain build's occupancy) and the measured timeline (the launch with the median slot efficiency)."""
    from ..device import describe

    b, n, h, d = shape = tuple(Shape.of(shape))
    check_int(q_len, what="q_len", lo=1, hi=n)
    check_int(kv_len, what="kv_len", lo=1, hi=n)
    check_int(launches, what="launches", lo=1, hi=100)
    dev = describe()
    occ = sage2_occupancy(d, arch=dev.arch)
    model = sage2_launch(b, h, q_len, kv_len, sms=dev.sm_count, ctas_per_sm=occ.ctas_per_sm)
    plan = _sage2_plan(shape)
    timelines = []
    for _ in range(launches):
        plan.mainloop(q_len, kv_len)
        timelines.append(plan.read_timeline())
    return {"shape": list(shape), "q_len": q_len, "kv_len": kv_len, "registers": occ.registers_per_thread,
            "limiter": occ.limiter, **model.to_dict(), **_measured(model, timelines)}


def decode_splits(batch: int, kv_len: int, *, head_dim: int = 128, heads_q: int = 32, heads_kv: int = 8,
                  page_size: int = 64, sms: int = 132) -> int:
    """The split count labkit's decode heuristic picks for this call (``plan_call``)."""
    return _decode_plan(batch, kv_len, head_dim, heads_q, heads_kv, page_size, sms=sms)[1].splits


def decode_call_label(batch: int, kv_len: int, splits: int | None = None, *, head_dim: int = 128, heads_q: int = 32,
                      heads_kv: int = 8, page_size: int = 64, sms: int = 132, arch: str = "sm_90",
                      l2_bytes: int | None = None) -> str:
    """``2 splits, mma w8s2 cl2``: the split count and build of the call ``decode_timeline`` records (``splits`` as
    ``_decode_plan``; its instrumented build, which keeps per-unit CTAs), so that a chart of that call says which
    call it is (no GPU: the build comes from NVRTC)."""
    from ..workloads.decode.geometry import kernel_label

    _, plan = _decode_plan(batch, kv_len, head_dim, heads_q, heads_kv, page_size, sms=sms, arch=arch, splits=splits,
                           l2_bytes=l2_bytes, timeline=True)
    return f"{counted(plan.splits, 'split')}, {kernel_label(plan.kernel)}"


def decode_model(batch: int, kv_len: int, splits: int | None, *, head_dim: int = 128, heads_q: int = 32,
                 heads_kv: int = 8, page_size: int = 64, sms: int = 132, ctas_per_sm: int | None = None,
                 l2_bytes: int | None = None) -> LaunchModel:
    """The model of one decode call (``splits`` None: the plan's own call; a count: as ``_decode_plan``;
    ``ctas_per_sm`` None: that of the build the plan takes for this call, which changes with the batch and the split
    count; ``l2_bytes`` None: as ``_decode_plan``, a recorded run's GPU is given its own)."""
    g, plan = _decode_plan(batch, kv_len, head_dim, heads_q, heads_kv, page_size, sms=sms, splits=splits,
                           l2_bytes=l2_bytes)
    return _launch_model(g, plan, kv_len, sms=sms, ctas_per_sm=ctas_per_sm)


def _launch_model(g, plan, kv_len: int, *, sms: int, ctas_per_sm: int | None = None) -> LaunchModel:
    """The wave model of ``plan``'s call on geometry ``g`` (``ctas_per_sm`` None: the plan's); a call whose splits form
    clusters takes its waves from the CTAs the GPU holds in whole clusters (``plan.cluster_resident_ctas``)."""
    kb = plan.kernel
    per_sm = ctas_per_sm or plan.ctas_per_sm
    return decode_launch(g.batch, kv_len, plan.splits, heads_kv=g.heads_kv, tokens_per_stage=kb.tokens_per_stage,
                         sms=sms, ctas_per_sm=per_sm, row_blocks=kb.row_blocks(g),
                         resident=plan.cluster_resident_ctas // plan.ctas_per_sm * per_sm or None,
                         tail_units=plan.tail_units, tail_splits=kb.tail_splits)


def decode_point(batch: int, kv_len: int, splits: int | None = None, *, head_dim: int = 128, heads_q: int = 32,
                 heads_kv: int = 8, page_size: int = 64, launches: int = 3) -> dict:
    """``launches`` instrumented decode calls (``labkit.workloads.decode.run.decode_timeline``) beside the model;
    ``splits`` None: the plan's own call (its count and build); a count: that count with the build ``plan_call``
    gives it."""
    from ..device import describe
    from ..workloads.decode import run as decode_run
    from ..workloads.decode.geometry import kernel_label

    check_int(launches, what="launches", lo=1, hi=100)
    geo = {"head_dim": head_dim, "heads_q": heads_q, "heads_kv": heads_kv, "page_size": page_size}
    dev = describe()
    build = importlib.import_module("labkit.workloads.decode.build")
    # one plan for the model, the occupancy and the launch (which takes the same `splits`, and so the same call)
    g, plan = _decode_plan(batch, kv_len, sms=dev.sm_count, arch=dev.arch, splits=splits, **geo)
    heuristic = plan.splits if splits is None else decode_splits(batch, kv_len, sms=dev.sm_count, **geo)
    used = plan.splits
    occ = build.occupancy(plan.kernel, dev.arch)
    model = _launch_model(g, plan, kv_len, sms=dev.sm_count, ctas_per_sm=occ.ctas_per_sm)
    timelines = [decode_run.decode_timeline(batch, kv_len, head_dim, heads_q=heads_q, heads_kv=heads_kv,
                                            page_size=page_size, splits=splits) for _ in range(launches)]
    return {"batch": batch, "kv_len": kv_len, "splits": used, "heuristic_splits": heuristic,
            "kernel": kernel_label(plan.kernel), "registers": occ.registers_per_thread, "limiter": occ.limiter,
            **model.to_dict(), **_measured(model, timelines)}


def sage2_timeline(shape, q_len: int, kv_len: int):
    """One instrumented Sage2 mainloop launch at (q_len, kv_len) on ``shape``'s inputs, as a ``Timeline``."""
    b, n, h, d = shape = tuple(Shape.of(shape))
    check_int(q_len, what="q_len", lo=1, hi=n)
    check_int(kv_len, what="kv_len", lo=1, hi=n)
    plan = _sage2_plan(shape)
    plan.mainloop(q_len, kv_len)
    return plan.read_timeline()


def decode_timeline(batch: int, kv_len: int, splits: int | None = None, *, head_dim: int = 128, heads_q: int = 32,
                    heads_kv: int = 8, page_size: int = 64):
    """One instrumented decode call as a ``Timeline`` (``splits`` None: the plan's own call on this GPU, its count
    and build; a count: that count with the build ``plan_call`` gives it)."""
    from ..workloads.decode import run as decode_run

    return decode_run.decode_timeline(batch, kv_len, head_dim, heads_q=heads_q, heads_kv=heads_kv,
                                      page_size=page_size, splits=splits)
