"""time_gpu, Pipeline and the probes on a real GPU (skipped without one)."""

import numpy as np
import pytest

from labkit.errors import TimingError

pytestmark = pytest.mark.gpu

READ_KERNEL = r"""
extern "C" __global__ void read_sum(const float4* __restrict__ x, long long n4, float* out) {
    float acc = 0.f;
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n4;
         i += (long long)gridDim.x * blockDim.x) {
        float4 v = x[i];
        acc += v.x + v.y + v.z + v.w;
    }
    out[blockIdx.x * blockDim.x + threadIdx.x] = acc;  // no atomics: they would dominate
}
"""


PERSISTING_READ_KERNEL = r"""
extern "C" __global__ void read_persisting(const float4* __restrict__ x, long long n4, float* out) {
    unsigned long long policy;  // every load as L2::evict_last: the persisting lines, as FA3 loads its K/V
    asm volatile("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;" : "=l"(policy));
    float acc = 0.f;
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n4;
         i += (long long)gridDim.x * blockDim.x) {
        float a, b, c, d;
        asm volatile("ld.global.L2::cache_hint.v4.f32 {%0, %1, %2, %3}, [%4], %5;"
                     : "=f"(a), "=f"(b), "=f"(c), "=f"(d) : "l"(x + i), "l"(policy));
        acc += a + b + c + d;
    }
    out[blockIdx.x * blockDim.x + threadIdx.x] = acc;
}
"""


@pytest.fixture(scope="module")
def cp():
    import cupy

    return cupy


def _reader(cp, nbytes):
    kernel = cp.RawKernel(READ_KERNEL, "read_sum")
    x = cp.random.random(nbytes // 4, dtype=cp.float32)
    sms = cp.cuda.Device().attributes["MultiProcessorCount"]
    out = cp.zeros(sms * 8 * 256, dtype=cp.float32)
    n4 = np.int64(x.size // 4)

    def run():
        kernel((sms * 8,), (256,), (x, n4, out))

    return run, x, out


def test_time_gpu_times_a_real_kernel_and_checks_it(cp):
    from labkit.timing import time_gpu

    run, x, out = _reader(cp, 256 << 20)
    t = time_gpu(run, name="test/read256", mode="cold", iterations=20)
    assert t.stats.count == 20 and len(t.samples_s) == 20
    assert t.work_check.startswith("ok: 1 graph node")
    # 256 MiB read at 1..6 TB/s
    assert 256 * 2**20 / 6e12 < t.stats.p50_s < 256 * 2**20 / 1e11
    from labkit.device import describe

    l2 = describe(cp.cuda.Device().id).l2_bytes
    assert t.flush_bytes >= 2 * l2  # this GPU's (60 MiB was the H200's)
    from labkit.errors import ArgumentError

    ran = []
    with pytest.raises(ArgumentError, match=rf"flush_bytes {3 * l2 // 2}: expected at least 2 x this GPU's L2 "):
        time_gpu(lambda: ran.append(1), mode="cold", flush_bytes=3 * l2 // 2)  # a flush that can leave inputs in L2
    assert not ran  # refused before anything ran
    out.fill(cp.nan)
    run()
    assert float(out.sum(dtype=cp.float64)) == pytest.approx(float(x.sum(dtype=cp.float64)), rel=1e-4)
    # each sample's SM clock, from its pad's spin (clock64 over %globaltimer): near NVML's max on an idle GPU
    top = describe(cp.cuda.Device().id).sm_clock_max_hz
    assert len(t.sample_clocks_hz) == 20 and None not in t.sample_clocks_hz and t.dropped_throttled == 0
    assert 0.75 * top <= t.sm_clock_hz <= 1.02 * top, (t.sm_clock_hz, top)
    print(f"SM clock per sample: median {t.sm_clock_hz / 1e6:.0f} MHz, {min(t.sample_clocks_hz) / 1e6:.0f}-"
          f"{max(t.sample_clocks_hz) / 1e6:.0f}; NVML {t.clock_span_mhz()} MHz, max {top / 1e6:.0f}")


def test_samples_under_the_clock_threshold_are_dropped_and_a_gpu_that_stays_so_is_an_error(cp, monkeypatch):
    """The drop path on a real sampler: held to a threshold above any clock, every sample is dropped and the timing
    ends in one error naming the clocks, once past its timeout."""
    from labkit.errors import TimingError
    from labkit.timing import record, time_gpu

    run, _, _ = _reader(cp, 16 << 20)
    monkeypatch.setattr(record, "THROTTLE_FRACTION", 2.0)
    with pytest.raises(TimingError, match=r"samples ran with the SM clock under 200% of its max \d+ MHz \(the last at "
                                          r"\d+ MHz\) and were dropped, 0 kept in 0.3 s"):
        time_gpu(run, name="test/throttled", mode="cold", iterations=5, timeout_s=0.3)


@pytest.mark.parametrize("mode", ["cold", "hot"])
def test_a_slow_enqueue_is_not_timed(cp, mode):
    """A call whose host side takes 1 ms before it launches a ~10 us kernel (a Python wrapper on a slow
    host): the pad before the start event grows to cover it, so the sample times the kernel, not the host."""
    import time

    from labkit.timing import time_gpu

    run, _, _ = _reader(cp, 16 << 20)
    quick = time_gpu(run, name="test/read16", mode=mode, iterations=15)

    def slow():
        time.sleep(1e-3)
        run()
    t = time_gpu(slow, name="test/read16_slow_host", mode=mode, iterations=15)
    assert t.stats.p50_s < 2 * quick.stats.p50_s + 5e-6 < 2e-4, (t.stats.p50_s, quick.stats.p50_s)


def test_interleave_pads_past_a_slow_host_enqueue(cp):
    """The same for interleave, where a peer's wrapper (FA3 at small decode calls) beside a quick kernel: its
    samples time its kernel, not its host side."""
    import time

    from labkit.timing import interleave

    run, _, _ = _reader(cp, 16 << 20)

    def slow():
        time.sleep(1e-3)
        run()
    t = interleave({"quick": run, "slow": slow}, iterations=8, order="shuffle")
    assert t["slow"].stats.p50_s < 2 * t["quick"].stats.p50_s + 5e-6 < 2e-4, (t["slow"].stats, t["quick"].stats)


def test_flush_makes_l2_cold(cp):
    """A 16 MiB buffer fits the L2 (60 MiB on the H200, 50 on the H100): read hot it is served from L2; after the
    flush no read may get faster than a warm one, i.e. each cold sample re-reads from DRAM."""
    from labkit.timing import time_gpu

    run, _, _ = _reader(cp, 16 << 20)
    hot = time_gpu(run, name="test/read16_hot", mode="hot", iterations=50)
    for mode in ("cold", "cold_clean"):  # L2 left dirty by the flush, or flushed and then left clean
        cold = time_gpu(run, name=f"test/read16_{mode}", mode=mode, iterations=50)
        print(f"16 MiB read: hot p50 {hot.stats.p50_s * 1e6:.2f} us, {mode} p50 {cold.stats.p50_s * 1e6:.2f} us")
        assert cold.mode == mode
        assert cold.stats.p50_s > 1.2 * hot.stats.p50_s
        assert min(cold.samples_s[1:]) > hot.stats.p50_s


def test_lines_loaded_as_persisting_do_not_outlive_a_cold_pad(cp):
    """Where the context sets L2 aside for persisting lines, lines loaded with L2::evict_last outlive a memset of 2 x
    L2 (and cold_clean's read), so a cold sample re-reading them got them from L2: the pad resets them first. A buffer
    inside the set-aside (10 MiB of the H200's 11.25; whole MiB at least 1 under it elsewhere, 8 of the H100's 9.375) is
    loaded as persisting before each pad, then read: with the reset it reads as slowly as from DRAM; without it,
    faster (the check that the setup does leave such lines)."""
    from labkit.timing.events import _Sampler, time_gpu
    from labkit.timing.persisting import CUDA_LIMIT_PERSISTING_L2_CACHE_SIZE

    limit = int(cp.cuda.runtime.deviceGetLimit(CUDA_LIMIT_PERSISTING_L2_CACHE_SIZE))
    size = min(10 << 20, (limit - (1 << 20)) >> 20 << 20)  # the H100 skipped a fixed 10 MiB
    if size < 4 << 20:
        pytest.skip(f"this context sets {limit} bytes of L2 aside for persisting lines, too few for a 4 MiB buffer")
    run, x, out = _reader(cp, size)
    persist = cp.RawKernel(PERSISTING_READ_KERNEL, "read_persisting")
    sms = cp.cuda.Device().attributes["MultiProcessorCount"]
    hot = time_gpu(run, name="test/read10_hot", mode="hot", iterations=30).stats.p50_s
    for mode in ("cold", "cold_clean"):
        p50 = {}
        for reset in (True, False):
            smp = _Sampler.create(mode)
            assert smp._reset_persisting is not None
            if not reset:
                smp._reset_persisting = None
            start, stop, samples = cp.cuda.Event(), cp.cuda.Event(), []
            with smp.stream:
                for _ in range(30):
                    persist((sms * 8,), (256,), (x, np.int64(x.size // 4), out))
                    smp.pad()
                    start.record(smp.stream)
                    run()
                    stop.record(smp.stream)
                    stop.synchronize()
                    samples.append(cp.cuda.get_elapsed_time(start, stop) / 1e3)
            p50[reset] = float(np.median(samples[2:]))
        print(f"{size >> 20} MiB read after a persisting load: {mode} pad {p50[True] * 1e6:.2f} us, without the reset "
              f"{p50[False] * 1e6:.2f} us; hot {hot * 1e6:.2f} us")
        assert p50[True] > 1.2 * hot
        # the lines did outlive the pad without the reset: by more under cold, where a miss must also write back a
        # dirty line (at e0af6be, GPU-f4975e76: cold 8.06 against 6.51 us, cold_clean 6.80 against 6.35, hot 5.12)
        assert p50[False] < (0.9 if mode == "cold" else 0.98) * p50[True]


def test_cold_clean_pad_writes_the_flush_and_reads_every_word_of_its_own_buffer(cp):
    """The cold_clean pad: the memset over the whole flush buffer, then every 32-bit word of a buffer as large read
    (its sum counts them: each word holds 1), on the sampler's stream, at least 2 x L2 of each."""
    from labkit.device import describe
    from labkit.timing.events import _Sampler

    smp = _Sampler.create("cold_clean")
    l2 = describe(cp.cuda.Device().id).l2_bytes
    assert smp.flush_bytes >= 2 * l2 and smp._clean.nbytes >= smp.flush_bytes
    for _ in range(3):
        with smp.stream:  # the pad's stream: a fill on another one could land after the sum
            smp._clean_sum.fill(0)
        smp.pad()
        smp.stream.synchronize()
        assert int(smp._clean_sum.get()) == smp._clean.size
        assert int(cp.count_nonzero(smp._flush != smp._flip)) == 0  # this pad's bytes, everywhere


def test_no_gpu_work_is_an_error(cp):
    from labkit.timing import time_gpu

    with pytest.raises(TimingError, match="no GPU work"):
        time_gpu(lambda: None, name="nothing", iterations=3)
    other = cp.cuda.Stream(non_blocking=True)
    run, _, _ = _reader(cp, 1 << 20)

    def elsewhere():
        with other:
            run()

    with pytest.raises(TimingError, match="other-stream: the timed region put no GPU work on the timing stream"):
        time_gpu(elsewhere, name="other-stream", iterations=3)


def test_graph_mode_and_adaptive_stop(cp):
    from labkit.timing import time_gpu

    run, _, _ = _reader(cp, 1 << 20)
    g = time_gpu(run, name="test/graph", mode="graph", graph_calls=100, iterations=10)
    assert g.calls_per_sample == 100 and g.stats.p50_s < 50e-6
    a = time_gpu(run, name="test/adaptive", mode="hot", min_time_s=0.01, timeout_s=5)
    assert a.stats.count >= 10 and a.stop_reason


def test_pipeline_groups_and_phases(cp):
    from labkit.timing import Pipeline

    r1, _, _ = _reader(cp, 64 << 20)
    r2, _, _ = _reader(cp, 128 << 20)
    r3, _, _ = _reader(cp, 32 << 20)
    pipe = Pipeline([("a", r1), ("b", r2), ("c", r3)], groups={"ab": ["a", "b"]})
    assert pipe.order() == ["ab", "a", "b", "c"]
    res = pipe.run(iterations=10, warmup=2)
    st = res.stats()
    assert list(st) == ["ab", "a", "b", "c"] and all(s.count == 10 for s in st.values())
    assert st["a"].p50_s < st["b"].p50_s  # twice the bytes
    assert st["ab"].p50_s == pytest.approx(st["a"].p50_s + st["b"].p50_s, rel=0.15)


def test_probes(cp):
    from labkit.probes import copy_bandwidth, launch_overhead

    bw = copy_bandwidth(256 << 20)
    for k in ("memcpy", "kernel"):
        assert 500 < bw[k]["GBps_read_plus_write"] < 8000
    lo = launch_overhead(200)
    assert 0 < lo["gpu_graph_us"] < lo["launch_and_sync_us"]


def test_cold_l2_probe_times_each_size_in_every_l2_state():
    """Notebook 00's cold-L2 probe: every (size, state) row, its copy checked inside; a copy that fits the L2 runs
    faster warm than after either flush (the flushes evict it)."""
    from labkit.probes import COLD_L2_MODES, cold_l2_copies, cold_l2_table

    table = cold_l2_table(cold_l2_copies((16, 256), iterations=10))
    assert [(r.MiB, r.mode) for r in table.itertuples()] == [(m, mode) for m in (16, 256) for mode in COLD_L2_MODES]
    small = table[table["MiB"] == 16].set_index("mode")["p50_us"]
    assert small["hot"] < small["cold"] and small["hot"] < small["cold_clean"]
    assert (table["TBps"] > 0.3).all() and (table["TBps"] < 20).all()


def test_device_description():
    from labkit.device import describe

    d = describe()
    assert d.sm_count > 0 and d.l2_bytes > 0 and d.compute_capability[0] >= 7
    assert d.smem_per_block_optin_bytes >= 48 * 1024
    if d.uuid is not None:  # NVML answered: the board's firmware and part number are recorded beside the uuid
        assert d.uuid.startswith("GPU-") and isinstance(d.vbios_version, str) and d.vbios_version.strip()
        assert isinstance(d.board_part_number, str) and d.board_part_number.strip()


def test_interleave_rotates_and_keeps_every_sample(cp):
    from labkit.timing import interleave

    small, _, _ = _reader(cp, 16 << 20)
    big, _, _ = _reader(cp, 128 << 20)
    seen = []
    t = interleave({"small": small, "big": big}, iterations=6, on_sample=lambda n, r, s: seen.append((r, n)))
    assert [n for r, n in seen[:4]] == ["small", "big", "big", "small"]
    assert t["small"].stats.count == t["big"].stats.count == 6
    assert t["small"].stats.p50_s < t["big"].stats.p50_s


@pytest.mark.gpu
def test_timing_overhead_probe_reports_every_variant():
    """The probe behind notebook 00's figure and `labkit bench`'s first table (the <= 3 us target of
    a timed launch is a benchmark figure there, not asserted here)."""
    from labkit.probes import timing_overhead, timing_overhead_us

    r = timing_overhead(200)
    print(r)
    shown = timing_overhead_us(r)
    assert list(shown) == ["bare_us", "nvtx_us", "events_us", "nvtx_events_us", "fresh_events_us"]
    assert all(0 < v < 1e4 for v in shown.values()), r
    for key in ("nvtx_us", "events_us", "nvtx_events_us", "fresh_events_us"):
        assert r[key.replace("_us", "_overhead_us")] == pytest.approx(r[key] - r["bare_us"])


SPIN_THEN_SET = r"""
extern "C" __global__ void spin_then_set(long long cycles, int* flag) {
    const long long t0 = clock64();
    while (clock64() - t0 < cycles) { }
    *flag = 1;
}
"""


@pytest.mark.parametrize("driver", ["time_gpu", "interleave"])
def test_samples_start_after_the_callers_queued_work(cp, driver):
    """Work the caller queued on its own stream (a plan's preparation) is finished before the first sample:
    the timing stream does not wait for other streams by itself."""
    from labkit.timing import interleave, time_gpu

    flag, seen = cp.zeros(1, dtype=cp.int32), cp.full(1, -1, dtype=cp.int32)
    spin = cp.RawKernel(SPIN_THEN_SET, "spin_then_set")
    spin((1,), (1,), (np.int64(200_000_000), flag))  # ~0.1 s at ~2 GHz, then flag = 1 (caller's stream)
    first = []

    def read():  # the first call copies the flag as it is then
        if not first:
            first.append(True)
            seen[...] = flag
    if driver == "time_gpu":
        time_gpu(read, name="read", mode="hot", iterations=1, check_work=False)
    else:
        interleave({"read": read}, iterations=1, warmup=0, mode="hot")
    cp.cuda.Device().synchronize()
    assert int(seen[0]) == 1


def _ordering_seen(cp, wrap):
    """What torch work wrapped by ``wrap`` sees of CuPy's work queued just before it, and what the caller reads of the
    torch work's output right after synchronizing CuPy's current stream (labkit's peers do both)."""
    import torch

    flag = cp.zeros(1, dtype=cp.int32)
    cp.RawKernel(SPIN_THEN_SET, "spin_then_set")((1,), (1,), (np.int64(100_000_000), flag))  # ~50 ms, then 1
    seen = wrap(lambda: torch.from_dlpack(flag).clone())()  # torch reads CuPy's flag: 1 if it waited for the spin
    out = torch.zeros(1, device="cuda", dtype=torch.int32)

    def late_write():
        torch.cuda._sleep(100_000_000)  # ~50 ms of spinning on the GPU, then the output is written
        out.fill_(1)
    wrap(late_write)()
    cp.cuda.get_current_stream().synchronize()
    written = int(out.cpu()[0])  # 1 if syncing CuPy's stream covered the torch work
    torch.cuda.synchronize()
    return int(seen.cpu()[0]), written


@pytest.mark.parametrize("stream", ["null", "own"])
def test_torch_on_cupy_stream_is_ordered_with_cupys_work(cp, stream):
    """torch work launched through torch_on_cupy_stream runs after the CuPy work queued before it, and a sync of
    CuPy's stream covers it, on CuPy's null stream (left to torch's own stream) as on a stream of its own."""
    pytest.importorskip("torch")
    from labkit.cuda import torch_on_cupy_stream

    with (cp.cuda.Stream.null if stream == "null" else cp.cuda.Stream(non_blocking=True)):
        assert _ordering_seen(cp, torch_on_cupy_stream) == (1, 1)
