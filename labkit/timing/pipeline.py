"""Time a sequence of steps in one pass: each step in its own NVTX range with its own events.

A *group* (e.g. ``qk_int8_quantization`` = Q quant then K quant) is also timed as one region
around its members, which run back to back. The pad (L2 flush or spin) runs before each
top-level step or group, outside every event pair, so groups are not inflated by flushes.
"""

import statistics
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from .. import _deps
from ..cuda import cupy
from ..errors import ArgumentError
from .events import Mode, _Sampler
from .nvtx import nvtx_range
from .record import Timing, build_timing, read_clock
from .stats import Stats


@dataclass(frozen=True)
class PipelineTiming:
    """Per-phase Timing of one pipeline run, in pipeline order (groups before their members)."""

    phases: dict[str, Timing]
    warmup: int
    iterations: int

    def stats(self) -> dict[str, Stats]:
        """The seed report's ``phase_timings``."""
        return {name: t.stats for name, t in self.phases.items()}

    def to_frame(self):
        pd = _deps.require("pandas")
        return pd.DataFrame([{"phase": n, **t.stats.to_dict()} for n, t in self.phases.items()]).set_index("phase")


class Pipeline:
    """Steps timed in one pass.

    Args:
        steps: (name, fn) in execution order; each fn launches on CuPy's current stream.
        groups: group name -> member step names (consecutive steps) also timed as one region.

    Example:
        Pipeline([("q", quant_q), ("k", quant_k), ("attn", attn)], groups={"qk": ["q", "k"]})
    """

    def __init__(self, steps: Sequence[tuple[str, Callable[[], object]]],
                 groups: Mapping[str, Sequence[str]] | None = None):
        names = [n for n, _ in steps]
        if len(set(names)) != len(names):
            raise ArgumentError(f"duplicate step names in {names}")
        self.steps = list(steps)
        self.groups = {g: list(m) for g, m in (groups or {}).items()}
        # units: ("step", name) or ("group", group_name); members must be consecutive
        self._units: list[tuple[str, str]] = []
        owner = {m: g for g, ms in self.groups.items() for m in ms}
        if sum(map(len, self.groups.values())) != len(owner):  # a step in two groups ran twice per pass
            twice = sorted({m for ms in self.groups.values() for m in ms
                            if sum(m in other for other in self.groups.values()) > 1})
            raise ArgumentError(f"steps {twice} are in more than one group: a step belongs to one group at most")
        for g, ms in self.groups.items():
            if not ms:
                raise ArgumentError(f"group {g!r} has no steps")
            missing = [m for m in ms if m not in names]
            if missing:
                raise ArgumentError(f"group {g!r} names unknown steps {missing}; steps are {names}")
            idx = [names.index(m) for m in ms]
            if idx != list(range(idx[0], idx[0] + len(ms))):
                raise ArgumentError(f"group {g!r} members {ms} are not consecutive steps in {names}")
        for n in names:
            g = owner.get(n)
            if g is None:
                self._units.append(("step", n))
            elif not self._units or self._units[-1] != ("group", g):
                self._units.append(("group", g))

    def order(self) -> list[str]:
        """Phase names in report order: each group just before its members."""
        out = []
        for kind, name in self._units:
            out.append(name)
            if kind == "group":
                out.extend(self.groups[name])
        return out

    def run(self, *, iterations: int = 10, warmup: int = 3, mode: Mode = "cold",
            flush_bytes: int | None = None) -> PipelineTiming:
        """Run ``warmup`` untimed passes, then ``iterations`` timed passes. The warm-up also sizes the pad before each
        phase to outlast its host launch (from the second pass where there are two; with ``warmup=0`` it is not
        sized, and a phase slower to launch than the default pad times the host)."""
        if mode == "graph":
            raise ArgumentError("Pipeline times eagerly: use mode 'cold', 'cold_clean' or 'hot'")
        cp = cupy()
        fns = dict(self.steps)
        smp = _Sampler.create(mode, flush_bytes)
        enqueue: dict[str, list[float]] = {name: [] for _, name in self._units}
        with smp.stream:
            for _ in range(warmup):  # the passes asked for, which the report records
                for kind, name in self._units:
                    t = time.perf_counter()
                    for m in self.groups[name] if kind == "group" else [name]:
                        fns[m]()
                    enqueue[name].append(time.perf_counter() - t)
                    smp.stream.synchronize()
            if warmup:  # as time_gpu and interleave: the pad outlasts a unit's host launch, so no phase times Python
                # the first pass may compile: left out where there is another (a longer pad is only slower)
                smp.cover_enqueue(max(statistics.median(v[1:] or v) for v in enqueue.values()))
            clock_start = read_clock()
            samples: dict[str, list[float]] = {n: [] for n in self.order()}
            ranges = {n: nvtx_range(n) for n in self.order()}  # created once: no per-pass attribute lookups
            for _ in range(iterations):
                pairs: list[tuple[str, object, object]] = []
                smp.rewind()  # the previous pass was synchronized and read: reuse its events
                for kind, name in self._units:
                    smp.pad()
                    members = self.groups[name] if kind == "group" else [name]
                    with ranges[name]:
                        g_start = smp.event()
                        for m in members:
                            if kind == "group":
                                with ranges[m]:
                                    s = smp.event()
                                    fns[m]()
                                    pairs.append((m, s, smp.event()))
                            else:
                                fns[m]()
                        pairs.append((name, g_start, smp.event()))
                smp.stream.synchronize()
                for name, s, e in pairs:
                    samples[name].append(cp.cuda.get_elapsed_time(s, e) / 1e3)
            clock_end = read_clock()
        phases = {n: build_timing(n, mode, x, flush_bytes=smp.flush_bytes, clocks=(clock_start, clock_end),
                                  stop_reason=f"iterations={iterations}")
                  for n, x in samples.items()}
        return PipelineTiming(phases=phases, warmup=warmup, iterations=iterations)
