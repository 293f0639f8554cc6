"""Device probes for the notebooks: copy bandwidth and empty-launch overhead, measured live."""

import math
import time

from .cuda import cupy, require_gpu
from .timing import time_gpu


def _copy_buffers(nbytes: int):
    """(source of random floats, destination, cudaMemcpyAsync of one into the other on CuPy's current stream)."""
    cp = cupy()
    n = nbytes // 4
    src = cp.random.random(n, dtype=cp.float32)
    dst = cp.full(n, cp.nan, dtype=cp.float32)
    rt = cp.cuda.runtime

    def memcpy():
        rt.memcpyAsync(dst.data.ptr, src.data.ptr, n * 4, rt.memcpyDeviceToDevice, cp.cuda.get_current_stream().ptr)

    return src, dst, memcpy


def _timed_copy(copy, src, dst, *, name: str, mode: str, **timing):
    """``time_gpu`` of ``copy`` into a poisoned ``dst``, then the check that it holds ``src``."""
    cp = cupy()
    dst.fill(cp.nan)
    t = time_gpu(copy, name=name, mode=mode, check_work=False, **timing)
    if not bool(cp.array_equal(dst, src)):
        raise AssertionError(f"{name}: destination differs from source")
    return t


def copy_bandwidth(nbytes: int = 1 << 30, *, mode: str = "cold") -> dict:
    """Device-to-device copy of ``nbytes`` (random data), two ways.

    Returns bandwidths counting bytes read + written (2 x nbytes / p50), as the timing brief
    does; ``memcpy`` is cudaMemcpyAsync D2D, ``kernel`` is CuPy's elementwise copy.
    """
    require_gpu("the copy-bandwidth probe")
    cp = cupy()
    src, dst, memcpy = _copy_buffers(nbytes)

    def kernel():
        cp.copyto(dst, src)

    out = {"nbytes": dst.nbytes, "mode": mode}
    for label, fn in (("memcpy", memcpy), ("kernel", kernel)):
        t = _timed_copy(fn, src, dst, name=f"probe/copy_{label}", mode=mode, min_time_s=0.2)
        out[label] = {"p50_s": t.stats.p50_s, "GBps_read_plus_write": 2 * dst.nbytes / t.stats.p50_s / 1e9,
                      "timing": t.to_dict()}
    return out



def copy_ceiling_GBps(mode: str = "cold") -> float:
    """The bandwidth ceiling the workloads' rates are read against: a 1 GiB device-to-device copy (cudaMemcpyAsync),
    read + write, GB/s, timed in ``mode`` as the calls beside it are."""
    return copy_bandwidth(1 << 30, mode=mode)["memcpy"]["GBps_read_plus_write"]

def launch_overhead(launches: int = 2000) -> dict:
    """Costs of launching an empty kernel (1 thread), in microseconds.

    * ``host_enqueue_us``: host time per launch, N launches back to back, no sync.
    * ``gpu_back_to_back_us``: one event pair around the same N launches / N (stream throughput).
    * ``gpu_graph_us``: CUDA graph of N launches, replay / N.
    * ``gpu_isolated_us``: one event pair around one launch, enqueue hidden by a spin pad.
    * ``launch_and_sync_us``: host round trip, launch then synchronize.
    """
    require_gpu("the launch-overhead probe")
    from .timing.events import helper_kernel

    cp = cupy()
    empty = helper_kernel("empty_kernel")
    stream = cp.cuda.Stream(non_blocking=True)
    launch = lambda: empty((1,), (1,), (), stream=stream)  # noqa: E731
    for _ in range(100):
        launch()
    stream.synchronize()
    start, stop = cp.cuda.Event(), cp.cuda.Event()
    # the host's pace and the GPU's are timed over the same launches: two loops, one per clock, had differed by 11 %
    # on an H100 (the host's pace changes from loop to loop), so the GPU read "faster than the host enqueued them"
    start.record(stream)
    t0 = time.perf_counter()
    for _ in range(launches):
        launch()
    host = (time.perf_counter() - t0) / launches
    stop.record(stream)
    stop.synchronize()
    b2b = cp.cuda.get_elapsed_time(start, stop) * 1e3 / launches
    t0 = time.perf_counter()
    for _ in range(200):
        launch()
        stream.synchronize()
    sync = (time.perf_counter() - t0) / 200
    on_current = lambda: empty((1,), (1,), ())  # noqa: E731  (time_gpu makes its stream current)
    graph = time_gpu(on_current, name="probe/empty_graph", mode="graph", graph_calls=launches, iterations=20)
    isolated = time_gpu(on_current, name="probe/empty_isolated", mode="hot", iterations=200)
    return {"launches": launches, "host_enqueue_us": host * 1e6, "gpu_back_to_back_us": b2b,
            "gpu_graph_us": graph.stats.p50_s * 1e6, "gpu_isolated_us": isolated.stats.p50_s * 1e6,
            "launch_and_sync_us": sync * 1e6}


def copy_table(result: dict):
    """The copy probe as a small DataFrame (method, bytes, p50 ms, GB/s read+write)."""
    from . import _deps
    from ._json import Node

    pd = _deps.require("pandas")
    n = Node(result).obj(("nbytes", "mode", "memcpy", "kernel"))
    rows = [{"method": k, "bytes": n["nbytes"].int(1),
             "p50_ms": n[k].obj(("p50_s", "GBps_read_plus_write"), any_keys=True)["p50_s"].num(0) * 1e3,
             "GBps_read_plus_write": n[k]["GBps_read_plus_write"].num(0)} for k in ("memcpy", "kernel")]
    return pd.DataFrame(rows).set_index("method")


def shown_copy(table):
    """``copy_table`` as notebook 00 shows it: the size in MiB, p50 in us to 0.01 and GB/s to 0.1 (it had shown bytes
    1073741824 and 4232.662658 GB/s); the saved CSV keeps every digit."""
    from .report.tables import rounded

    out = table.assign(MiB=table["bytes"] // 2**20, p50_us=table["p50_ms"] * 1e3)
    return rounded(out[["MiB", "p50_us", "GBps_read_plus_write"]], (("_us", 2), ("GBps_read_plus_write", 1)))


COLD_L2_MODES = ("hot", "cold", "cold_clean")


def cold_l2_copies(sizes_mib: tuple[int, ...] = (16, 48, 256, 1024), *, iterations: int = 30) -> dict:
    """The device-to-device copy (cudaMemcpyAsync, random data) at each size in MiB, with L2 warm (``hot``), flushed by
    the memset that leaves it dirty (``cold``) and flushed then left clean (``cold_clean``): what a cold sample pays for
    the flush's dirty lines, against the size of the call. Rows of (MiB, mode, p50 [s], TB/s read + written); every
    copy's destination checked against its source."""
    require_gpu("the cold-L2 copy probe")
    rows = []
    for mib in sizes_mib:
        src, dst, memcpy = _copy_buffers(int(mib) << 20)
        for mode in COLD_L2_MODES:
            t = _timed_copy(memcpy, src, dst, name=f"probe/copy_{mib}MiB_{mode}", mode=mode, iterations=iterations)
            rows.append({"MiB": int(mib), "mode": mode, "p50_s": t.stats.p50_s,
                         "TBps_read_plus_write": 2 * dst.nbytes / t.stats.p50_s / 1e12})
        src = dst = memcpy = None  # this size's buffers go back before the next is drawn
        cupy().get_default_memory_pool().free_all_blocks()
    return {"rows": rows}


def cold_l2_table(result: dict):
    """The cold-L2 copy probe as a DataFrame (MiB, mode, p50 us, TB/s read + written), read strictly."""
    from . import _deps
    from ._json import Node

    pd = _deps.require("pandas")
    rows = []
    for r in Node(result).obj(("rows",))["rows"].list(1):
        r.obj(("MiB", "mode", "p50_s", "TBps_read_plus_write"))
        rows.append({"MiB": r["MiB"].int(1), "mode": r["mode"].str(COLD_L2_MODES), "p50_us": r["p50_s"].num(0) * 1e6,
                     "TBps": r["TBps_read_plus_write"].num(0)})
    return pd.DataFrame(rows)


LAUNCH_OVERHEAD_KEYS = ("host_enqueue_us", "gpu_back_to_back_us", "gpu_graph_us", "gpu_isolated_us",
                        "launch_and_sync_us")


def overhead_us(result: dict) -> dict[str, float]:
    """The per-launch times [us] of a ``launch_overhead`` result, in a fixed order."""
    return {k: float(result[k]) for k in LAUNCH_OVERHEAD_KEYS}


def launch_overhead_note(overhead: dict[str, float]) -> str:
    """What the back-to-back bar measured. Within 10 % of the host's enqueue time it is the host's pace (the GPU waited
    for each launch, and the graph's replay is the GPU's own cost); well above it, the launches queued and it is the
    GPU's own rate; below it the two clocks disagree (a GPU cannot run launches faster than they arrive)."""
    b2b, host, graph = overhead["gpu_back_to_back_us"], overhead["host_enqueue_us"], overhead["gpu_graph_us"]
    said = f"GPU back to back, {b2b:.2f} us per launch"
    if abs(b2b - host) <= 0.1 * host:
        return (f"{said}, is the host's enqueue rate ({host:.2f} us): the GPU waited for each launch; in a CUDA graph, "
                f"which the host does not pace, one costs {graph:.2f} us")
    if b2b > host:
        return (f"{said}, is slower than the host's enqueue ({host:.2f} us): the launches queued, so this is the GPU's "
                f"own rate; in a CUDA graph {graph:.2f} us")
    return (f"{said}, is faster than the host enqueued them ({host:.2f} us), over the same launches: the host's "
            f"clock and the GPU's disagree; in a CUDA graph {graph:.2f} us")


def timing_overhead(launches: int = 2000) -> dict:
    """Host time per timed launch of an empty kernel, in microseconds, by what wraps the launch.

    Each variant enqueues ``launches`` launches back to back (no synchronize inside the loop)
    and reports host microseconds per launch:

    * ``bare_us``: the launch alone.
    * ``nvtx_us``: inside labkit's ``nvtx_range`` (one object, created once, as ``time_gpu`` does).
    * ``events_us``: between a start and a stop event recorded on the stream (events created once).
    * ``nvtx_events_us``: both: labkit's timed launch path in ``time_gpu`` (target <= 3 us).
    * ``fresh_events_us``: NVTX plus a new event pair per launch (what ``time_gpu`` did before).

    The ``*_overhead_us`` keys are each variant minus ``bare_us``.
    """
    require_gpu("the timing-overhead probe")
    from .timing.events import helper_kernel
    from .timing.nvtx import nvtx_range

    cp = cupy()
    empty = helper_kernel("empty_kernel")
    stream = cp.cuda.Stream(non_blocking=True)
    launch = lambda: empty((1,), (1,), (), stream=stream)  # noqa: E731
    rng = nvtx_range("probe/timing_overhead")
    start, stop = cp.cuda.Event(), cp.cuda.Event()
    record = cp.cuda.runtime.eventRecord  # as time_gpu's sampler records its reused events
    start_ptr, stop_ptr, stream_ptr = start.ptr, stop.ptr, stream.ptr

    def nvtx_only():
        with rng:
            launch()

    def events_only():
        record(start_ptr, stream_ptr)
        launch()
        record(stop_ptr, stream_ptr)

    def nvtx_events():
        with rng:
            record(start_ptr, stream_ptr)
            launch()
            record(stop_ptr, stream_ptr)

    def fresh_events():
        with rng:
            a, b = cp.cuda.Event(), cp.cuda.Event()
            a.record(stream)
            launch()
            b.record(stream)

    out = {"launches": launches}
    for key, fn in (("bare_us", launch), ("nvtx_us", nvtx_only), ("events_us", events_only),
                    ("nvtx_events_us", nvtx_events), ("fresh_events_us", fresh_events)):
        for _ in range(100):  # warm: module loaded, allocator and driver queues settled
            fn()
        stream.synchronize()
        best = math.inf
        for _ in range(3):  # best of three: host jitter only ever adds time
            t0 = time.perf_counter()
            for _ in range(launches):
                fn()
            best = min(best, (time.perf_counter() - t0) / launches)
            stream.synchronize()
        out[key] = best * 1e6
    for key in ("nvtx_us", "events_us", "nvtx_events_us", "fresh_events_us"):
        out[key.replace("_us", "_overhead_us")] = out[key] - out["bare_us"]
    return out


TIMING_OVERHEAD_KEYS = ("bare_us", "nvtx_us", "events_us", "nvtx_events_us", "fresh_events_us")
TIMED_LAUNCH_TARGET_US = 3.0  # issue 9: labkit's timed launch adds at most this much host time

# the probes' keys in words, for figures (the keys stay the data's names)
LABELS = {"host_enqueue_us": "host: enqueue", "gpu_back_to_back_us": "GPU: back to back",
          "gpu_graph_us": "GPU: in a CUDA graph", "gpu_isolated_us": "GPU: one launch alone",
          "launch_and_sync_us": "host: launch + synchronize", "bare_us": "bare launch",
          "nvtx_us": "in an NVTX range", "events_us": "between CUDA events",
          "nvtx_events_us": "labkit's timed launch (NVTX + events)", "fresh_events_us": "NVTX + a new event pair"}


def timing_overhead_us(result: dict) -> dict[str, float]:
    """The host times [us] per launch of a ``timing_overhead`` result, in a fixed order."""
    return {k: float(result[k]) for k in TIMING_OVERHEAD_KEYS}


def timing_overhead_table(result: dict) -> str:
    """The probe as a small text table, with the timed-launch target."""
    lines = [f"host time per launch of an empty kernel, {result['launches']} launches (best of 3)"]
    for k in TIMING_OVERHEAD_KEYS:
        extra = "" if k == "bare_us" else f"  (+{result[k] - result['bare_us']:.2f} over bare)"
        lines.append(f"  {k[:-3]:<16} {result[k]:7.2f} us{extra}")
    added = result["nvtx_events_us"] - result["bare_us"]
    verdict = "meets" if added <= TIMED_LAUNCH_TARGET_US else "MISSES"
    lines.append(f"  labkit's timed launch adds {added:.2f} us: {verdict} the <= {TIMED_LAUNCH_TARGET_US:g} us target")
    return "\n".join(lines)
