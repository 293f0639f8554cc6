"""Sweep workloads: functions of a point's parameters that return a JSON-ready dict, registered by name."""

import os
import sys
import time
from collections.abc import Callable

from ..errors import ArgumentError

_REGISTRY: dict[str, Callable[..., dict]] = {}
_CHECKS: dict[str, Callable[..., None]] = {}  # name -> a CPU check of one point's parameters (raises ArgumentError)
_NEEDS_GPU: set[str] = set()


def register(name: str, *, check: Callable[..., None] | None = None, gpu: bool = False):
    """Register a workload; ``check(**params)`` refuses a point's bad values without a GPU, before a sweep starts;
    ``gpu``: its points need a CUDA GPU (a local sweep on a machine without one is refused up front)."""
    def wrap(fn):
        _REGISTRY[name] = fn
        if check is not None:
            _CHECKS[name] = check
        if gpu:
            _NEEDS_GPU.add(name)
        return fn
    return wrap


def needs_gpu(name: str) -> bool:
    return name in _NEEDS_GPU


def get(name: str) -> Callable[..., dict]:
    if name not in _REGISTRY:
        raise ArgumentError(f"workload {name!r}: known workloads are {', '.join(sorted(_REGISTRY))}")
    return _REGISTRY[name]


def names() -> list[str]:
    return sorted(_REGISTRY)


def parameters_text(name: str) -> str:
    """The parameters a workload takes, as ``sweep run -h`` lists them: ``batch, kv_len, head_dim=128, ...`` (one
    without a default needs a --grid axis)."""
    import inspect

    def shown(n: str, p) -> str:  # a default as --grid writes it: peers=0 (False was refused there), layout=NHD
        if p.default is inspect.Parameter.empty:
            return n
        if p.default is None:
            return f"{n}=" + _NO_DEFAULT_FORM.get(n, "(none)")
        if p.default == "":
            return f"{n}=(empty)"
        return f"{n}={int(p.default) if isinstance(p.default, bool) else p.default}"

    return ", ".join(shown(n, p) for n, p in inspect.signature(get(name)).parameters.items()
                     if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY))


# how an axis of a parameter whose default is None is written, as `sweep run -h` shows it
_NO_DEFAULT_FORM = {"q_tails": "[N,...] (none)", "kv_tails": "[N,...] (none)",
                    "schedule": "seed|sm90|CTA_Q/CTA_K/WARP_Q/PV_TERMS (seed)"}


def check_point(name: str, **params) -> None:
    """One point's parameters by the workload's own CPU check (a workload without one takes any), as a sweep checks
    every point before it starts: a notebook checks the calls of its later sweeps before its first cell measures."""
    get(name)  # an unknown workload is refused by name
    if name in _CHECKS:
        _CHECKS[name](**params)


def check_grid(name: str, grid: dict[str, list]) -> None:
    """Refuse a grid the workload cannot take, before a sweep directory is tied to it: an axis it has no parameter
    for, a required parameter with no axis, or a value of the wrong kind for an int, float or bool parameter."""
    import inspect

    params = inspect.signature(get(name)).parameters
    named = [n for n, p in params.items() if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)]
    takes_more = any(p.kind == p.VAR_KEYWORD for p in params.values())
    for axis in grid:
        if axis not in named and not takes_more:
            raise ArgumentError(f"grid axis {axis}: workload {name} has no such parameter "
                                f"(it takes {', '.join(named)})")
    missing = [n for n in named if params[n].default is inspect.Parameter.empty and n not in grid]
    if missing:
        raise ArgumentError(f"workload {name} needs a grid axis for {', '.join(missing)} (its values: a list, or the "
                            f"CLI's --grid {missing[0]}=...)")
    for axis, values in grid.items():
        if isinstance(values, (str, bytes, dict)) or not hasattr(values, "__iter__"):  # {"ms": 5}: a TypeError
            raise ArgumentError(f"grid axis {axis} = {values!r}: expected a list of values, e.g. [{values!r}]")
        p = params.get(axis)
        kind = p.annotation if p is not None and p.annotation in (int, float, bool) else None
        for v in values:
            ok = (isinstance(v, bool) and kind is bool  # a notebook's peers=True; the CLI's grid gives 0 / 1
                  or isinstance(v, int) and not isinstance(v, bool) and (kind is not bool or v in (0, 1))
                  or isinstance(v, float) and kind is float)
            if kind is not None and not ok:
                expected = {int: "an integer", float: "a number", bool: "0 or 1"}[kind]
                raise ArgumentError(f"grid axis {axis}={v!r}: workload {name} takes {expected} there")
    if name in _CHECKS:
        from .grid import expand, point_label

        for point in expand(grid):
            try:
                _CHECKS[name](**point)
            except ArgumentError as exc:  # the point named once: "point ms=-5: ms=-5: ..." had said it twice
                label = point_label(point, {})
                said = f"{exc}" if str(exc).startswith(f"{label}:") else f"point {label}: {exc}"
                raise ArgumentError(f"workload {name}, {said}") from None



def _kv_bytes(batch, kv_len, heads_kv, head_dim) -> int:
    """K+V bytes a decode point reads (bf16): what ``max_kv_bytes`` caps."""
    return 2 * int(batch) * int(kv_len) * int(heads_kv) * int(head_dim) * 2


def _decode_check(batch: int, kv_len: int, head_dim: int = 128, splits: int = 0, heads_q: int = 32,
                  heads_kv: int = 8, page_size: int = 64, max_kv_bytes: float = 9e9, iterations: int = 20,
                  launches: int = 3, **_) -> None:
    from ..values import check_int
    from ..workloads.decode.build import MAX_SPLITS
    from ..workloads.decode.geometry import PAGE_SIZES
    from ..workloads.decode.run import geometry_for

    for what, v in (("batch", batch), ("kv_len", kv_len), ("heads_q", heads_q), ("heads_kv", heads_kv)):
        if v < 1:
            raise ArgumentError(f"{what} {v}: expected at least 1")
    check_int(iterations, what="iterations", lo=1, hi=100_000)  # a point would fail on the GPU, each in turn
    check_int(launches, what="launches", lo=1, hi=100)
    if not float(max_kv_bytes) > 0:  # every point would be skipped, and the sweep exit 0
        raise ArgumentError(f"max_kv_bytes {max_kv_bytes!r}: expected a number of bytes above 0")
    if page_size not in PAGE_SIZES:
        raise ArgumentError(f"page_size {page_size}: expected one of {', '.join(map(str, PAGE_SIZES))}")
    if _kv_bytes(batch, kv_len, heads_kv, head_dim) > float(max_kv_bytes):
        return  # the workload skips it, saying why: not an error of the sweep
    g = geometry_for(batch, kv_len, heads_q=heads_q, heads_kv=heads_kv, head_dim=head_dim, page_size=page_size)
    top = min(g.max_pages, MAX_SPLITS)
    if not 0 <= splits <= top:
        raise ArgumentError(f"splits {splits}: expected 0 (the plan's) .. {top} (one per page, at most {MAX_SPLITS})")


def _sage2_check(shape, q_len: int | None = None, kv_len: int | None = None, schedule=None, q_tails=None,
                 kv_tails=None, launches: int = 3, round_index: int = 0, layout: str = "NHD", dtype: str = "bf16",
                 seed: int = 0, **_) -> None:
    from ..values import Shape, check_int
    from ..workloads.sage2.profile import check_options

    s = Shape.of(shape)
    check_int(launches, what="launches", lo=1, hi=100)
    check_int(round_index, what="round_index", lo=0)
    check_options(layout=layout, dtype=dtype, seed=seed)  # as sage2 profile checks them, before any GPU work
    for what, n in (("q_len", q_len), ("kv_len", kv_len)):
        if n is not None and not (isinstance(n, int) and 1 <= n <= s.seq_len):
            raise ArgumentError(f"{what} {n!r}: expected 1..{s.seq_len} (the shape's N)")
    for what, lengths in (("q_tails", q_tails), ("kv_tails", kv_tails)):
        if lengths is not None and not isinstance(lengths, (list, tuple)):  # q_tails=5 had raised a TypeError
            raise ArgumentError(f"{what} {lengths!r}: expected a list of lengths, e.g. {what}=[37760,37761]")
        if lengths:  # None or [] leave the study's default
            s.lengths(list(lengths), what)
    if schedule is not None:
        tail_schedule(schedule)


def tail_schedule(schedule):
    """``sage2.tail_round``'s schedule: a name or form ``Schedule.parse`` takes (``seed``, ``sm90``,
    ``128/64/32/2``, as ``sage2 profile --schedule`` does), or an object of Schedule fields."""
    from ..workloads.sage2.schedule import Schedule

    if isinstance(schedule, str):
        return Schedule.parse(schedule)
    if not isinstance(schedule, dict):  # `argument after ** must be a mapping` said nothing
        raise ArgumentError(f"schedule {schedule!r}: expected seed, sm90, CTA_Q/CTA_K/WARP_Q/PV_TERMS or an object of "
                            'Sage2 Schedule fields, e.g. schedule={"cta_q":128}')
    try:
        return Schedule(**schedule)
    except TypeError as exc:  # a field Schedule does not have
        raise ArgumentError(f"schedule {schedule!r}: expected the fields of a Sage2 Schedule ({exc})") from None


DEMO_SLEEP_MAX_MS = 60_000


def _sleep_check(ms: float = 10, fail: str = "", **_) -> None:
    if not 0 <= float(ms) <= DEMO_SLEEP_MAX_MS:  # a negative one failed each point; 1e11 slept for three years
        raise ArgumentError(f"ms={ms}: expected a sleep of 0..{DEMO_SLEEP_MAX_MS} milliseconds")
    if fail not in ("", "no", "yes", "exit", "lost", "cuda"):
        raise ArgumentError(f"fail={fail!r}: expected yes (raise), exit (end the worker), lost (a CUDA context lost, "
                            "simulated), cuda (a kernel that faults, on a GPU) or no")


# its parameters are named, as every workload's are: an axis it has none for (a typo) is refused by check_grid,
# where a **params had taken it and run each point at the default sleep
@register("demo.sleep", check=_sleep_check)
def demo_sleep(ms: float = 10, fail: str = "", tag: str = "", i: int = 0) -> dict:
    """No GPU: sleeps ``ms`` milliseconds and returns its parameters (``fail=yes`` raises, to try retries;
    ``fail=exit`` ends its process, as a crashing kernel would, to try a pool's worker dying; ``fail=lost`` fails as a
    kernel that loses the CUDA context would, and so does every later point of its process; ``fail=cuda`` runs such a
    kernel, on a GPU); ``tag`` and ``i`` only label points, to sweep one sleep several times."""
    from . import context

    if context.simulated_lost() is not None:  # as every CUDA call after a sticky error fails
        raise RuntimeError(f"{context.simulated_lost()}: this process's CUDA context was lost by an earlier point")
    if fail == "yes":
        raise RuntimeError(f"demo.sleep asked to fail (ms={ms}, tag={tag!r}, i={i})")
    if fail == "exit":  # said first: a local sweep's own process ends here (a review: with no word)
        print(f"demo.sleep fail=exit: ending process {os.getpid()} (exit code 3), as a crashing kernel would",
              file=sys.stderr, flush=True)
        os._exit(3)
    if fail == "lost":
        context.simulate_lost("cudaErrorIllegalAddress")
        raise RuntimeError("cudaErrorIllegalAddress: an illegal memory access was encountered (simulated)")
    if fail == "cuda":
        from ..cuda import cupy, require_gpu
        from ..kernels import kernel_path, load_module

        require_gpu("demo.sleep fail=cuda")
        cp = cupy()
        store = load_module(kernel_path(__file__, "illegal_address.cu")).get_function("store_far_away")
        store((1,), (1,), (cp.zeros(1, dtype=cp.int32),))
        cp.cuda.Device().synchronize()  # raises cudaErrorIllegalAddress
    time.sleep(float(ms) / 1e3)
    return {"ms": ms, "tag": tag, "i": i, "pid": os.getpid(),
            "cuda_visible_devices": os.environ.get("CUDA_VISIBLE_DEVICES")}


@register("decode.point", check=_decode_check, gpu=True)
def decode_point(batch: int, kv_len: int, head_dim: int = 128, splits: int = 0, iterations: int = 20,
                 heads_q: int = 32, heads_kv: int = 8, page_size: int = 64, peers: bool = False,
                 max_kv_bytes: float = 9e9) -> dict:
    """One paged-decode timing (GPU): labkit.workloads.decode.bench.bench_point, ``splits`` 0 = the plan's own
    call (``splits_used`` says its count); a count is that count with the build ``plan_call`` gives it, which can
    differ from the plan's own build at the same count (8 x 8k d128: 2 splits asked for run 4 warps, the plan's 2
    run 8 in a cluster); ``peers``: the peers' TB/s on the same shape beside it.
    A point over ``max_kv_bytes`` of K+V is skipped (``skipped`` says why) rather than failed."""
    from ..workloads.decode.bench import bench_point

    nbytes = _kv_bytes(batch, kv_len, heads_kv, head_dim)
    if nbytes > float(max_kv_bytes):
        return {"skipped": f"{nbytes / 1e9:.1f} GB of K+V is over {float(max_kv_bytes) / 1e9:.0f} GB"}
    row = bench_point(int(batch), int(kv_len), int(head_dim), heads_q=int(heads_q), heads_kv=int(heads_kv),
                      page_size=int(page_size), splits=int(splits) or None, iterations=int(iterations))
    row["splits_used"] = row["splits"]
    if peers:
        from ..workloads.decode.peers import peer_rates

        row.update(peer_rates(int(batch), int(kv_len), int(head_dim), heads_q=int(heads_q), heads_kv=int(heads_kv),
                              iterations=int(iterations), page_size=int(page_size)))
    return row


@register("sage2.timeline", check=_sage2_check, gpu=True)
def sage2_timeline(shape: list, q_len: int, kv_len: int, launches: int = 3) -> dict:
    """Instrumented Sage2 mainloop launches (GPU) at (q_len, kv_len) on ``shape``'s inputs: the wave/tile
    model beside the measured per-CTA timeline (labkit.sched.measure.sage2_point)."""
    from ..sched.measure import sage2_point

    return sage2_point(shape, int(q_len), int(kv_len), launches=int(launches))


@register("decode.timeline", check=_decode_check, gpu=True)
def decode_timeline(batch: int, kv_len: int, splits: int = 0, head_dim: int = 128, heads_q: int = 32,
                    heads_kv: int = 8, page_size: int = 64, launches: int = 3) -> dict:
    """Instrumented paged-decode calls (GPU) beside the model (labkit.sched.measure.decode_point);
    ``splits`` 0 = the plan's own call; a count, as for decode.point."""
    from ..sched.measure import decode_point

    return decode_point(int(batch), int(kv_len), int(splits) or None, head_dim=int(head_dim), heads_q=int(heads_q),
                        heads_kv=int(heads_kv), page_size=int(page_size), launches=int(launches))


@register("sage2.tail_round", check=_sage2_check, gpu=True)
def sage2_tail_round(shape: list, round_index: int, layout: str = "NHD", dtype: str = "bf16",
                     q_tails: list | None = None, kv_tails: list | None = None, seed: int = 0,
                     schedule: dict | None = None) -> dict:
    """One interleaved round of the Sage2 tail study (GPU; labkit.workloads.sage2.tails.tail_round):
    every configuration's mainloop once, cold L2, the order rotated by ``round_index``."""
    from ..workloads.sage2.schedule import Schedule
    from ..workloads.sage2.tails import tail_round

    sched = Schedule() if schedule is None else tail_schedule(schedule)  # _sage2_check refused the rest up front
    return tail_round(shape, round_index=round_index, layout=layout, dtype=dtype, q_tails=q_tails, kv_tails=kv_tails,
                      seed=seed, schedule=sched)
