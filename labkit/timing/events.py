"""``time_gpu``: CUDA-event timing with warm-up, cold or hot L2, clocks and a no-work check.

One sample = [pad] start-event fn() stop-event, all on one stream. The pad runs before the
start event, outside the timed window: in ``cold`` mode a memset of >= 2 x L2 (evicts the
data, as NVBench's and triton's flushes do, and leaves L2 full of the memset's dirty lines, which
the timed code's misses then write back to DRAM); in ``cold_clean`` mode that memset, then a
read of another >= 2 x L2 of the sampler's own buffer (the dirty lines go back to DRAM inside
the pad, and L2 holds clean lines no timed code reads: on the H200 labkit's decode calls ran
11-14 % faster at 268-285 MB of K/V, cuDNN's 10-12 %, and 1 x 8k d128 17.6 -> 15.6-16.2 us). Where the context
sets L2 aside for persisting lines, a cold pad first resets them (``persisting``): lines loaded as L2::evict_last
outlive a memset or a read of normal lines (cuDNN at 17 x 4k d128 77 against 80 us after FA3 on the same K/V; after
the reset 80 whatever ran before). Then in every mode a ~100 us spin kernel that touches no memory: it keeps the
GPU busy while the host enqueues the start event and ``fn``'s launches, so the event pair times the
GPU work and not Python's launch overhead (measured on the H200: a 40 us flush alone left a
~70 us host gap inside a two-kernel phase). ``graph`` mode replays a CUDA graph of N calls
between one event pair and divides by N (warm L2 inside the graph; for kernels of a few us).
"""

import math
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

import numpy as np

from .. import _deps
from ..cuda import cupy, require_gpu
from ..errors import ArgumentError, TimingError
from .nvtx import nvtx_range
from .persisting import persisting_l2_reset
from .record import THROTTLE_PAUSE_S, StopRule, Timing, build_timing, read_clock, throttled, throttled_error

Mode = Literal["cold", "cold_clean", "hot", "graph"]
MODES = ("cold", "cold_clean", "hot", "graph")
COLD_MODES = ("cold", "cold_clean")  # a flush before each sample
SPIN_CYCLES = 200_000  # ~100 us at 1.98 GHz: the least pad; time_gpu lengthens it to cover a slow enqueue
FLUSH_L2_TIMES = 2  # a cold sample's pad writes this many L2 sizes


def flush_l2(mode: str = "cold", setup: Callable[[], object] | None = None) -> None:
    """One cold sample's pad (``mode``'s flush, ``setup`` inside it, the spin), run to completion, so that the next
    kernel finds none of its data in L2: for a one-off cold call outside ``time_gpu``, e.g. a recorded timeline."""
    if mode not in COLD_MODES:
        raise ArgumentError(f"mode must be one of {COLD_MODES}, got {mode!r}")
    smp = _Sampler.create(mode)
    with smp.stream:  # the setup's work too
        smp.pad(setup)
    smp.stream.synchronize()


def helper_kernel(name: str):
    """A kernel of ``kernels/timing_helpers.cu`` (``spin_cycles``, ``empty_kernel``)."""
    from ..kernels import kernel_path, load_module

    return load_module(kernel_path(__file__, "timing_helpers.cu")).get_function(name)


@dataclass
class _Sampler:
    """Stream, pads and events shared by time_gpu and Pipeline (one device, one stream)."""

    mode: str
    flush_bytes: int = 0
    stream: object = None
    _flush: object = None
    _clean: object = None  # cold_clean: the buffer the pad reads after the memset (words of 1), and their sum
    _clean_sum: object = None
    _spin: object = None
    _flip: int = 0
    _events: list = field(default_factory=list)  # created once, reused by every sample / pass
    _next: int = 0
    _record: object = None  # cupy.cuda.runtime.eventRecord: Event.record adds host time per call
    spin_cycles: int = SPIN_CYCLES
    _clock_hz: float = 1.98e9
    max_clock_hz: int | None = None  # NVML's max SM clock, which a sample's clock is held to (None: not known)
    _reset_persisting: Callable[[], None] | None = None  # cold modes where L2 has a persisting set-aside
    _stamps: object = None  # the spin's %globaltimer at start and end and the clocks it spun (device), and a pinned
    _stamps_host: object = None  # copy the host reads after each sample

    @classmethod
    def create(cls, mode: str, flush_bytes: int | None = None) -> "_Sampler":
        if mode not in MODES:
            raise ArgumentError(f"mode must be one of {MODES}, got {mode!r}")
        if flush_bytes is not None:  # its kind here; against this GPU's L2 below
            from ..values import check_int

            flush_bytes = check_int(flush_bytes, what="flush_bytes", lo=1)
        require_gpu("GPU timing")
        from ..device import describe

        cp = cupy()
        dev = describe(cp.cuda.Device().id)
        # The sampler's stream does not wait for other streams: whatever the caller queued before (inputs,
        # a plan's preparation) must be finished, or it would run beside the first samples and feed them
        # half-written data (seen: the Sage2 tail study's rounds got wrong and NaN checksums).
        cp.cuda.Device().synchronize()
        s = cls(mode=mode, stream=cp.cuda.Stream(non_blocking=True))
        if mode in COLD_MODES:
            s.flush_bytes = int(FLUSH_L2_TIMES * dev.l2_bytes if flush_bytes is None else flush_bytes)
            if s.flush_bytes < FLUSH_L2_TIMES * dev.l2_bytes:  # L2 is not a plain LRU: less can leave the inputs in
                raise ArgumentError(f"flush_bytes {s.flush_bytes}: expected at least {FLUSH_L2_TIMES} x this GPU's "
                                    f"L2 ({FLUSH_L2_TIMES * dev.l2_bytes}); a smaller flush can leave the call's "
                                    "inputs in L2, and a sample called cold would be partly warm")
            s._flush = cp.empty(s.flush_bytes, dtype=cp.uint8)
            s._reset_persisting = persisting_l2_reset()
        if mode == "cold_clean":
            s._clean = cp.ones(-(-s.flush_bytes // 4), dtype=cp.uint32)
            s._clean_sum = cp.zeros((), dtype=cp.uint64)
        s._spin = helper_kernel("spin_cycles")
        s._clock_hz = float(dev.sm_clock_max_hz or s._clock_hz)
        s.max_clock_hz = dev.sm_clock_max_hz
        s._stamps = cp.zeros(3, dtype=cp.uint64)
        s._stamps_host = np.frombuffer(cp.cuda.alloc_pinned_memory(3 * 8), np.uint64, 3)
        return s

    def cover_enqueue(self, host_s: float) -> None:
        """Spin long enough that the GPU is still busy while the host enqueues ``host_s`` of a sample (3 x):
        a peer's Python wrapper took ~350 us per call on one host, longer than the default pad, and its
        samples then timed the host (data/runs/20261201T105300Z-decode_bench_slow_host)."""
        self.spin_cycles = int(min(2e9, max(SPIN_CYCLES, 3 * host_s * self._clock_hz)))

    def pad(self, setup: Callable[[], object] | None = None) -> None:
        """Work before a sample's start event: reset persisting L2 lines (cold modes, where the context sets L2 aside
        for them), flush L2 (cold modes), the caller's ``setup``, read the clean buffer (cold_clean), then spin (every
        mode). ``setup`` goes before the read: its writes would leave dirty lines in a
        clean L2 (a decode call's scratch zeroing, 18 MB at 17 x 4k, cost it 8 % there)."""
        cp = cupy()
        if self._reset_persisting is not None:  # not stream-ordered: the samples before must have finished
            self.stream.synchronize()
            self._reset_persisting()
        if self._flush is not None:
            self._flip ^= 1  # a different value each time, so nothing can elide the writes
            cp.cuda.runtime.memsetAsync(self._flush.data.ptr, self._flip, self.flush_bytes, self.stream.ptr)
        if setup is not None:
            setup()
        if self._clean is not None:  # CuPy's own reduction: it reads every word, and the sum says it did
            with self.stream:
                cp.sum(self._clean, dtype=cp.uint64, out=self._clean_sum)
        stamps = self._stamps if self._stamps is not None else np.uint64(0)  # a null pointer: no stamps written
        self._spin((1,), (1,), (np.int64(self.spin_cycles), stamps), stream=self.stream)

    def clock_before_sample(self) -> float | None:
        """The SM clock [Hz] the last pad's spin ran at, just before the sample's start event: its stamps are copied
        after whatever the stream holds, so this also waits for the sample. None where the stamps say nothing."""
        cp = cupy()
        rt = cp.cuda.runtime
        rt.memcpyAsync(self._stamps_host.ctypes.data, self._stamps.data.ptr, self._stamps.nbytes,
                       rt.memcpyDeviceToHost, self.stream.ptr)
        self.stream.synchronize()
        start_ns, end_ns, cycles = (int(v) for v in self._stamps_host)
        return cycles / ((end_ns - start_ns) * 1e-9) if end_ns > start_ns and cycles > 0 else None

    def event(self):
        """Record the next event of the pool (``rewind()`` reuses them): creating a fresh event
        pair per sample cost host time inside the timed launch path."""
        if self._next == len(self._events):
            self._events.append(cupy().cuda.Event())
            self._record = cupy().cuda.runtime.eventRecord
        ev = self._events[self._next]
        self._next += 1
        self._record(ev.ptr, self.stream.ptr)
        return ev

    def rewind(self) -> None:
        """Reuse the pool from its start; only after the events recorded so far were read."""
        self._next = 0


def count_graph_nodes(fn: Callable[[], object], stream) -> tuple[int | None, str]:
    """Capture one call of ``fn`` on ``stream``; return (node count, note).

    Work launched on another stream is invisible to the capture: that is the classic way a
    timing silently measures nothing, and exactly what this detects.
    """
    try:
        with stream:
            stream.begin_capture()
            try:
                fn()
            finally:
                graph = stream.end_capture()
    except Exception as exc:  # not capturable (syncs, allocations): cannot check this way
        return None, f"skipped: fn is not graph-capturable ({type(exc).__name__})"
    rt = _deps.optional("cuda.bindings.runtime")
    if rt is None:
        return None, "skipped: cuda-bindings not installed"
    err, _, n = rt.cudaGraphGetNodes(rt.cudaGraph_t(init_value=graph.graph), 0)
    del graph
    if int(err) != 0:
        return None, f"skipped: cudaGraphGetNodes failed ({err})"
    return int(n), f"ok: {int(n)} graph node(s) per call"


def _warm_up(fn, setup, stream, *, warmup_ms: float, warmup_calls: int) -> tuple[float, float]:
    """Run ``fn`` (synchronized) for ``warmup_ms`` and at least ``warmup_calls``; (seconds per call, host
    seconds to enqueue one call: the median after the first, which may compile)."""
    with stream:
        t0 = time.perf_counter()
        calls, enqueue = 0, []
        while calls < warmup_calls or (time.perf_counter() - t0) * 1e3 < warmup_ms:
            if setup is not None:
                setup()
            t = time.perf_counter()
            fn()
            enqueue.append(time.perf_counter() - t)
            stream.synchronize()
            calls += 1
    return (time.perf_counter() - t0) / calls, statistics.median(enqueue[1:] or enqueue)


def _check_work(fn, stream, name: str) -> str:
    """Capture one call; raise if it put no work on the timing stream."""
    n, note = count_graph_nodes(fn, stream)
    if n == 0:
        raise TimingError(f"{name}: the timed region put no GPU work on the timing stream "
                          "(did fn launch on another stream?)")
    return note


def time_gpu(fn: Callable[[], object], *, name: str = "timed", mode: Mode = "cold",
             warmup_ms: float = 25.0, warmup_calls: int = 1, iterations: int | None = None,
             min_samples: int = 10, max_samples: int = 2000, min_time_s: float = 0.5,
             max_noise: float = 0.005, timeout_s: float = 15.0, graph_calls: int | None = None,
             flush_bytes: int | None = None, check_work: bool = True,
             setup: Callable[[], object] | None = None) -> Timing:
    """Time ``fn`` (which launches GPU work on CuPy's current stream) with CUDA events.

    Args:
        fn: zero-argument callable; it runs inside ``with stream:`` so CuPy and RawKernel
            launches land on the timing stream. Launch on that stream only.
        name: NVTX range name for each timed call (domain ``labkit``).
        mode: ``cold`` (flush >= 2 x L2 before each sample, which leaves L2 dirty), ``cold_clean`` (that
            flush, then a read of >= 2 x L2 of other data, so L2 is clean), ``hot`` (warm L2), or ``graph``
            (replay a CUDA graph of ``graph_calls`` calls per sample, result per call).
        warmup_ms: warm-up budget in milliseconds, at least ``warmup_calls`` calls.
        iterations: exact number of samples; when None, sample until at least
            ``min_samples`` and ``min_time_s`` of GPU time, then until relative std <
            ``max_noise``, a 4 x ``min_time_s`` budget, ``max_samples`` or ``timeout_s``.
        check_work: capture one call and raise if it put no work on the stream.
        setup: enqueued before each sample's start event, inside the pad after the flush (untimed), e.g.
            zeroing a counter the kernel needs at zero; in ``graph`` mode captured before each call.

    Returns:
        Timing with raw samples in seconds per call.

    Raises:
        TimingError: the timed region launched no GPU work.
        NoGPU: no usable GPU.
    """

    cp = cupy()
    smp = _Sampler.create(mode, flush_bytes)
    stream = smp.stream
    per_call_s, enqueue_s = _warm_up(fn, setup, stream, warmup_ms=warmup_ms, warmup_calls=warmup_calls)
    smp.cover_enqueue(enqueue_s)
    work = _check_work(fn, stream, name) if check_work or mode == "graph" else "not checked"
    runner, per_sample = fn, 1
    if mode == "graph":
        per_sample = (int(min(1000, max(10, math.ceil(200e-6 / max(per_call_s, 1e-7))))) if graph_calls is None
                      else graph_calls)
        if per_sample < 1:
            raise ArgumentError(f"graph_calls must be >= 1, got {graph_calls}")
        with stream:
            stream.begin_capture()
            try:
                for _ in range(per_sample):
                    if setup is not None:
                        setup()
                    fn()
            except BaseException:  # the stream would stay capturing for every later launch on it
                try:
                    stream.end_capture()
                except Exception:  # noqa: BLE001 - "capture invalidated": the call's own error is the one to say
                    pass
                raise
            graph = stream.end_capture()
        runner = lambda: graph.launch(stream)  # noqa: E731
    rule = StopRule(iterations=iterations, min_samples=min_samples, min_time_s=min_time_s, max_noise=max_noise,
                    max_samples=max_samples, timeout_s=timeout_s)
    rng = nvtx_range(name)  # one range object: attributes resolved once, not per sample
    clock_start = read_clock()
    samples: list[float] = []
    sample_clocks: list[float | None] = []
    dropped = 0
    started = time.perf_counter()
    with stream:
        while True:
            smp.pad(None if mode == "graph" else setup)
            smp.rewind()
            with rng:
                start = smp.event()
                runner()
                stop = smp.event()
            hz = smp.clock_before_sample()  # waits for the sample
            if throttled(hz, smp.max_clock_hz):  # NVBench's rule: drop the sample, let the GPU recover, go on
                dropped += 1
                if time.perf_counter() - started <= rule.timeout_s:
                    time.sleep(THROTTLE_PAUSE_S)
                    continue
                if rule.iterations is not None or len(samples) < 3:
                    raise TimingError(throttled_error(name, dropped, len(samples), hz, smp.max_clock_hz,
                                                      rule.timeout_s))
                reason = f"timeout {rule.timeout_s:g} s"
                break
            samples.append(cp.cuda.get_elapsed_time(start, stop) / 1e3 / per_sample)
            sample_clocks.append(hz)
            reason = rule.reason(samples, per_sample=per_sample, elapsed_s=time.perf_counter() - started)
            if reason is not None:
                break
    clock_end = read_clock()
    return build_timing(name, mode, samples, flush_bytes=smp.flush_bytes, clocks=(clock_start, clock_end),
                        stop_reason=reason, work_check=work, calls_per_sample=per_sample, sample_clocks=sample_clocks,
                        dropped_throttled=dropped)
