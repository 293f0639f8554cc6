import math
import re

import numpy as np
import pytest

from labkit._json import Node
from labkit.errors import ArgumentError, FormatError
from labkit.report import load
from labkit.timing.stats import STAT_FIELDS, Spread, Stats, median_interval


@pytest.mark.parametrize("n", [1, 2, 5, 10, 101, 1000])
def test_stats_match_numpy_on_random_samples(n):
    rng = np.random.default_rng(n)
    x = rng.lognormal(mean=-7, sigma=0.3, size=n)
    s = Stats.from_samples(x)
    assert s.count == n
    assert s.mean_s == pytest.approx(np.mean(x), rel=1e-15)
    for q, got in zip((50, 90, 95, 99), (s.p50_s, s.p90_s, s.p95_s, s.p99_s)):
        assert got == np.percentile(x, q, method="linear")
    assert (s.min_s, s.max_s) == (x.min(), x.max())


def test_stats_field_names_are_the_seed_reports():
    assert Stats.field_names() == STAT_FIELDS
    assert STAT_FIELDS == ("count", "mean_s", "p50_s", "p90_s", "p95_s", "p99_s", "min_s", "max_s")


def test_percentiles_interpolate_between_order_statistics():
    # 10 samples: p90/p95/p99 sit at positions 8.1, 8.55, 8.91 between x[8] and x[9]
    x = np.arange(10, dtype=float)
    s = Stats.from_samples(x[::-1])
    assert (s.p90_s, s.p95_s, s.p99_s) == pytest.approx((8.1, 8.55, 8.91))


def test_seed_percentiles_are_consistent_with_linear_interpolation(seed_report_path):
    """With 10 samples, p90, p95, p99 and max lie on one line through x[8] and x[9]:
    p99 - p95 = (0.36/0.45) (p95 - p90) and max - p99 = (0.09/0.45) (p95 - p90)."""
    rep = load(seed_report_path)
    for name, st in rep.phase_timings.items():
        assert st.count == 10
        step = (st.p95_s - st.p90_s) / 0.45  # x[9] - x[8]
        assert st.p99_s == pytest.approx(st.p95_s + 0.36 * step, rel=1e-6, abs=1e-9), name
        assert st.max_s == pytest.approx(st.p99_s + 0.09 * step, rel=1e-6, abs=1e-9), name


@pytest.mark.parametrize("bad, said", [([], "non-empty 1-D list of samples, got shape (0,)"),
                                       ([1.0, float("nan")], "contain NaN or inf"),
                                       ([[1.0, 2.0]], "non-empty 1-D list of samples, got shape (1, 2)"),
                                       # found by a review: kept, then refused by the reader of the file it went to
                                       ([1e-6, -2.5e-7], "a sample of -2.5e-07 s: expected 0..86400.0 s (a negative"),
                                       ([1e-6, 1e5], "a sample of 100000.0 s: expected 0..86400.0 s")])
def test_stats_reject_bad_samples(bad, said):
    with pytest.raises(ValueError, match=re.escape(said)):
        Stats.from_samples(bad)


def test_spread():
    x = np.array([1.0, 2.0, 3.0, 4.0])
    sp = Spread.from_samples(x)
    assert sp.std_s == pytest.approx(np.std(x, ddof=1))
    assert sp.iqr_s == pytest.approx(np.percentile(x, 75) - np.percentile(x, 25))
    assert sp.ci95_s == pytest.approx(1.96 * np.std(x, ddof=1) / 2)


def test_spread_of_one_sample_is_zero_and_rel_std_is_std_over_mean():
    # one sample has no spread: std 0 (numpy's ddof=1 std of one sample is NaN), so the CI half-width is 0 too
    one = Spread.from_samples([0.004])
    assert (one.std_s, one.iqr_s, one.ci95_s, one.rel_std) == (0.0, 0.0, 0.0, 0.0)
    rng = np.random.default_rng(11)
    x = rng.lognormal(mean=-7, sigma=0.3, size=50)
    sp = Spread.from_samples(x)
    assert sp.rel_std == pytest.approx(np.std(x, ddof=1) / np.mean(x))
    assert sp.ci95_s == pytest.approx(1.96 * np.std(x, ddof=1) / np.sqrt(50))
    # samples that are all 0 (an event pair around nothing) have no relative noise to speak of: inf, not "0 % noise"
    assert Spread.from_samples([0.0, 0.0]).rel_std == math.inf


def _stats_node(**edit) -> Node:
    return Node({**Stats.from_samples([0.002, 0.003, 0.004, 0.010]).to_dict(), **edit}, "stats", "r.json")


def test_a_read_mean_may_round_past_min_or_max_by_mean_rounding_and_no_further():
    # min_s 0.002, max_s 0.010: a mean 1e-13 (relative) outside either is an ulp-rounded one and reads; 1.5e-12 (over
    # MEAN_ROUNDING's 1e-12) or half the minimum is refused naming mean_s
    for mean in (0.002 * (1 - 1e-13), 0.010 * (1 + 1e-13)):
        assert Stats.from_node(_stats_node(mean_s=mean)).mean_s == mean
    for mean in (0.002 * (1 - 1.5e-12), 0.010 * (1 + 1.5e-12), 0.001):
        with pytest.raises(FormatError, match=r"r.json: stats.mean_s = .*expected a mean within \[min_s, max_s\]"):
            Stats.from_node(_stats_node(mean_s=mean))


def test_a_read_stats_value_is_at_most_a_day():
    # MAX_SECONDS: a timed region longer than a day (86400 s) is not a measurement
    assert Stats.from_node(_stats_node(max_s=86399.5)).max_s == 86399.5
    with pytest.raises(FormatError, match=r"r.json: stats.max_s = 86400.5: expected a number in \[0, 86400.0\]"):
        Stats.from_node(_stats_node(max_s=86400.5))


def test_stop_rule_is_a_pure_function_of_the_samples():
    from labkit.timing.record import StopRule

    rule = StopRule(min_samples=10, min_time_s=0.5, max_noise=0.005, max_samples=50, timeout_s=15.0)
    steady = [0.1] * 9
    assert rule.reason(steady) is None  # too few samples
    assert rule.reason(steady + [0.1]).startswith("noise 0.00%")
    assert rule.reason([0.1, 0.1008] * 5) == "noise 0.42% < 0.50%"  # either side of max_noise
    assert rule.reason([0.1, 0.1012] * 5) is None
    noisy = [0.1, 0.2] * 5
    assert rule.reason(noisy) is None  # 1.5 s of GPU time, noisy, below the 2 s budget
    assert rule.reason(noisy + [0.1, 0.2, 0.1, 0.2, 0.1]).startswith("time budget 2 s")
    tiny = [1e-6] * 49
    assert rule.reason(tiny) is None and rule.reason(tiny + [1e-6]) == "max_samples=50"
    assert rule.reason([1e-6] * 3, elapsed_s=16.0) == "timeout 15 s"
    assert rule.reason([1e-6] * 2, elapsed_s=16.0) is None  # never stop with fewer than 3
    assert StopRule(iterations=3).reason([0.1, 0.1]) is None
    assert StopRule(iterations=3).reason([0.1] * 3) == "iterations=3"
    assert StopRule(min_samples=2, min_time_s=0).reason([0.0, 0.0]) is not None  # zero mean: no division
    # a sample of N calls (hot batches, graph replays) holds N x its per-call time of GPU time (a mutation audit: a
    # budget read per call took up to N times the samples)
    assert rule.reason([0.01, 0.02] * 5) is None  # 0.15 s of GPU time
    assert rule.reason([0.01, 0.02] * 5, per_sample=20).startswith("time budget 2 s")  # 3 s


def test_samplers_event_pool_is_reused():
    from labkit.timing.events import _Sampler

    class FakeEvent:
        made = 0

        def __init__(self):
            FakeEvent.made += 1
            self.ptr = 1000 + FakeEvent.made

    recorded = []
    fake_runtime = type("runtime", (), {"eventRecord": staticmethod(lambda ev, st: recorded.append((ev, st)))})
    import labkit.timing.events as ev

    smp = _Sampler(mode="hot", stream=type("S", (), {"ptr": 77})())
    orig = ev.cupy
    ev.cupy = lambda: type("cp", (), {"cuda": type("cuda", (), {"Event": FakeEvent, "runtime": fake_runtime})})
    try:
        for _ in range(100):
            smp.rewind()
            a, b = smp.event(), smp.event()
            assert a is not b
    finally:
        ev.cupy = orig
    assert FakeEvent.made == 2
    assert recorded[:2] == [(1001, 77), (1002, 77)] and len(recorded) == 200


@pytest.mark.parametrize(("mode", "set_aside"), [("cold", False), ("cold", True), ("cold_clean", False),
                                                  ("cold_clean", True), ("hot", False)])  # create: no reset for hot
def test_each_modes_pad_enqueues_its_flush_read_and_spin_in_order(mode, set_aside):
    # what a sample's pad puts on the timing stream: cold, a memset of the flush buffer (L2 left dirty); cold_clean,
    # that memset, then a sum over every word of a buffer as large (the dirty lines go back to DRAM inside the pad,
    # and L2 holds lines no timed code reads); every mode, then the spin that covers the host's enqueue. The caller's
    # setup goes after the flush and before the read, so that its writes (a scratch zeroing) leave no dirty line.
    # Where L2 has a persisting set-aside, a cold pad first waits for the stream and resets the persisting lines,
    # which no memset or read evicts
    import labkit.timing.events as ev
    from labkit.timing.events import _Sampler

    calls, current = [], []

    class Stream:
        ptr = 77

        def __enter__(self):
            current.append(self)

        def __exit__(self, *exc):
            current.pop()

        def synchronize(self):
            calls.append(("sync",))

    stream = Stream()
    runtime = type("runtime", (), {"memsetAsync": staticmethod(lambda ptr, value, n, st: calls.append(
        ("memset", ptr, value, n, st)))})

    def cp_sum(a, dtype=None, out=None):
        calls.append(("sum", a, dtype, out, current[-1] if current else None))

    clean, total = object(), object()
    flush = type("buf", (), {"data": type("d", (), {"ptr": 4096})()})()
    smp = _Sampler(mode=mode, stream=stream, _spin=lambda grid, block, args, stream: calls.append(
        ("spin", grid, block, args, stream)), spin_cycles=123)
    if mode != "hot":
        smp.flush_bytes, smp._flush = 3 * (1 << 24), flush
    if mode == "cold_clean":
        smp._clean, smp._clean_sum = clean, total
    if set_aside:
        smp._reset_persisting = lambda: calls.append(("reset",))
    orig = ev.cupy
    ev.cupy = lambda: type("cp", (), {"cuda": type("cuda", (), {"runtime": runtime}), "sum": staticmethod(cp_sum),
                                      "uint64": "uint64"})
    try:
        smp.pad(lambda: calls.append(("setup",)))
        smp.pad()
    finally:
        ev.cupy = orig
    names = [c[0] for c in calls]
    reset = ["sync", "reset"] if set_aside else []
    assert names == {"cold": [*reset, "memset", "setup", "spin", *reset, "memset", "spin"],
                     "cold_clean": [*reset, "memset", "setup", "sum", "spin", *reset, "memset", "sum", "spin"],
                     "hot": ["setup", "spin", "spin"]}[mode]
    if mode != "hot":
        first, second = (c for c in calls if c[0] == "memset")
        assert first[1:4:2] == (4096, 3 * (1 << 24)) and first[4] == 77 and first[2] != second[2]  # new bytes
    if mode == "cold_clean":
        assert next(c for c in calls if c[0] == "sum")[1:] == (clean, "uint64", total, stream)
    spin = next(c for c in calls if c[0] == "spin")
    assert spin[1:3] == ((1,), (1,)) and int(spin[3][0]) == 123 and spin[4] is stream


def test_the_persisting_l2_reset_is_made_only_where_the_context_sets_l2_aside(monkeypatch):
    # a limit of 0, or a device without the limit: nothing to reset; above 0: cudaCtxResetPersistingL2Cache, whose
    # error is raised; no cuda-bindings then: a one-line refusal naming the extra, since every cold sample could read
    # the set-aside's lines from L2
    import labkit.timing.persisting as ps
    from labkit.errors import LaunchError, MissingDependency

    asked, resets = [], []
    limit = {"bytes": 0}

    class Unsupported(Exception):
        pass

    def get_limit(which):
        asked.append(which)
        if limit["bytes"] is None:
            raise Unsupported("cudaErrorUnsupportedLimit")
        return limit["bytes"]

    monkeypatch.setattr(ps, "cupy", lambda: type("cp", (), {"cuda": type("cuda", (), {"runtime": type(
        "runtime", (), {"deviceGetLimit": staticmethod(get_limit), "CUDARuntimeError": Unsupported})})}))
    err = {"code": 0}
    bindings = type("rt", (), {"cudaCtxResetPersistingL2Cache": staticmethod(
        lambda: resets.append(1) or (err["code"],))})
    monkeypatch.setattr(ps._deps, "require", lambda name: bindings)
    assert ps.persisting_l2_reset() is None and asked == [0x06]
    limit["bytes"] = None
    assert ps.persisting_l2_bytes() == 0 and ps.persisting_l2_reset() is None
    limit["bytes"] = 11796480
    assert ps.persisting_l2_bytes() == 11796480
    reset = ps.persisting_l2_reset()
    reset()
    assert resets == [1]
    err["code"] = 700
    with pytest.raises(LaunchError, match="cudaCtxResetPersistingL2Cache failed: 700"):
        reset()
    monkeypatch.undo()
    monkeypatch.setattr(ps, "cupy", lambda: type("cp", (), {"cuda": type("cuda", (), {"runtime": type(
        "runtime", (), {"deviceGetLimit": staticmethod(lambda which: 11796480), "CUDARuntimeError": Unsupported})})}))
    monkeypatch.setattr(ps._deps.importlib, "import_module", lambda name: (_ for _ in ()).throw(ImportError(name)))
    with pytest.raises(MissingDependency, match="pip install 'labkit\\[driver\\]'"):
        ps.persisting_l2_reset()


@pytest.mark.parametrize("mode", ["cold", "cold_clean", "hot", "graph"])
def test_a_sampler_resets_persisting_lines_in_the_cold_modes_only(monkeypatch, mode):
    # _Sampler.create takes the reset for its cold pads; hot and graph samples keep L2 as the calls before left it
    import labkit.device
    import labkit.timing.events as ev

    class Fake:
        def __init__(self, *a, **k):
            self.nbytes = 1 << 30

        def __getattr__(self, name):
            return lambda *a, **k: Fake()

    cp = type("cp", (), {"cuda": type("cuda", (), {"Device": Fake, "Stream": Fake, "alloc_pinned_memory": bytearray}),
                         "empty": Fake, "ones": Fake,
                         "zeros": Fake, "uint8": 0, "uint32": 0, "uint64": 0})
    monkeypatch.setattr(ev, "cupy", lambda: cp)
    monkeypatch.setattr(ev, "require_gpu", lambda what: None)
    monkeypatch.setattr(ev, "helper_kernel", lambda name: name)
    monkeypatch.setattr(labkit.device, "describe", lambda index=0: type("d", (), {"l2_bytes": 1 << 20,
                                                                                 "sm_clock_max_hz": 1980})())
    reset = object()
    monkeypatch.setattr(ev, "persisting_l2_reset", lambda: reset)
    smp = ev._Sampler.create(mode)
    assert (smp._reset_persisting is reset) is (mode in ("cold", "cold_clean"))
    assert smp._reset_persisting is reset or smp._reset_persisting is None


def test_a_one_off_flush_takes_only_the_cold_modes():
    from labkit.timing import flush_l2

    for mode in ("hot", "graph", "clean"):
        with pytest.raises(ValueError, match=f"mode must be one of .*got '{mode}'"):
            flush_l2(mode)


def test_rotated_rounds_keep_predecessors_and_shuffled_rounds_spread_them():
    from labkit.timing import round_orders

    names = ["mainloop", "cudnn", "fa3_bf16", "fa3_fp8"]
    rotated = round_orders(names, 40, rotate=1)
    assert rotated[0] == ["cudnn", "fa3_bf16", "fa3_fp8", "mainloop"]
    assert rotated[1] == ["fa3_bf16", "fa3_fp8", "mainloop", "cudnn"]

    def after(rounds, name, prev):  # the share of name's samples that ran right after prev
        seq = [n for r in rounds for n in r]
        hits = [seq[i - 1] == prev for i in range(1, len(seq)) if seq[i] == name]
        return sum(hits) / len(hits)

    assert after(rotated, "mainloop", "fa3_fp8") >= 0.75  # every round but those 'mainloop' starts
    shuffled = round_orders(names, 400, order="shuffle", seed=3)
    assert all(sorted(r) == sorted(names) for r in shuffled)
    assert 0.2 < after(shuffled, "mainloop", "fa3_fp8") < 0.45  # about 1/3 (1/4 at a round's start)
    assert shuffled == round_orders(names, 400, order="shuffle", seed=3)  # seeded: a run can be replayed
    assert shuffled != round_orders(names, 400, order="shuffle", seed=4)
    with pytest.raises(ValueError, match="'rotate' or 'shuffle'"):
        round_orders(names, 2, order="random")


def test_round_orders_defaults_start_at_the_given_order_and_replay_seed_0():
    """By default round 0 runs the configurations as given and a shuffle is seed 0's, so a study that passes neither
    replays (found by a mutation audit: either default changed passed every test)."""
    from labkit.timing import round_orders

    assert round_orders(["a", "b", "c"], 2) == [["a", "b", "c"], ["b", "c", "a"]]
    names = [str(i) for i in range(8)]
    assert round_orders(names, 5, order="shuffle") == round_orders(names, 5, order="shuffle", seed=0)
    assert round_orders(names, 5, order="shuffle") != round_orders(names, 5, order="shuffle", seed=1)


def test_a_timing_is_flagged_when_its_sm_clock_fell():
    """clock_dropped: the end clock below 90% of the start clock, or below 75% of the device's max; never without both
    readings (found by a mutation audit: no test called it). 0.9 x 1980 MHz = 1782 MHz, 0.75 x 1980 MHz = 1485 MHz."""
    from labkit.timing.record import clock_dropped

    start, top = 1_980_000_000, 1_980_000_000
    assert clock_dropped(start, 1_781_000_000, None) is True
    assert clock_dropped(start, 1_782_000_000, None) is False  # 90% exactly is not a drop
    assert clock_dropped(start, start, None) is False and clock_dropped(start, 1_900_000_000, top) is False
    assert clock_dropped(1_500_000_000, 1_484_000_000, top) is True  # steady, but far below what the GPU can do
    assert clock_dropped(1_500_000_000, 1_485_000_000, top) is False  # 75% exactly is not
    assert clock_dropped(None, 1_000, top) is False and clock_dropped(start, None, top) is False


def test_samples_of_zero_time_stop_on_the_budget_with_infinite_noise():
    """A zero mean is infinite relative noise, not a division by zero (found by a mutation audit: only 'stops' was
    checked)."""
    from labkit.timing.record import StopRule

    assert StopRule(min_samples=2, min_time_s=0).reason([0.0, 0.0]) == "time budget 0 s (noise inf%)"


def test_a_timings_clock_span_reads_in_mhz_and_is_empty_without_clocks():
    """The bench's MHz columns: start-end of the SM clock, or nothing where NVML gave no clock."""
    from labkit.timing import Timing

    samples = [0.0409, 0.0412, 0.0407]
    t = Timing(name="x", mode="cold", samples_s=tuple(samples), stats=Stats.from_samples(samples),
               spread=Spread.from_samples(samples), calls_per_sample=1, flush_bytes=0,
               sm_clock_start_hz=1_860_000_000, sm_clock_end_hz=1_740_000_000, clock_dropped=False,
               stop_reason="iterations=3", work_check="not checked")
    assert t.clock_span_mhz() == "1860-1740"
    assert Timing.from_dict({**t.to_dict(), "sm_clock_end_hz": None}).clock_span_mhz() == ""


def test_a_recorded_timing_and_precision_point_read_their_stats_as_a_report_does():
    """A notebook's recorded timing (and a precision point's mainloop) holding stats out of order, or missing one, is
    refused naming the field, as a report's phase is, not taken as it stands."""
    from labkit.errors import FormatError
    from labkit.timing import Timing
    from labkit.workloads.sage2.precision import PrecisionPoint

    samples = [0.0409, 0.0412, 0.0407]
    t = Timing(name="x", mode="cold", samples_s=tuple(samples), stats=Stats.from_samples(samples),
               spread=Spread.from_samples(samples), calls_per_sample=1, flush_bytes=0, sm_clock_start_hz=None,
               sm_clock_end_hz=None, clock_dropped=False, stop_reason="iterations=3", work_check="not checked")
    assert Timing.from_dict(t.to_dict()) == t
    swapped = {**t.to_dict(), "stats": {**t.stats.to_dict(), "p50_s": 0.05}}
    with pytest.raises(FormatError, match=r"stats: expected min_s <= p50_s <= p90_s") as caught:
        Timing.from_dict(swapped)
    assert "not min_s 0.0407 <= p50_s 0.05 <= p90_s" in str(caught.value)  # the numbers that broke it (a review)
    no_p99 = {k: v for k, v in t.stats.to_dict().items() if k != "p99_s"}
    with pytest.raises(FormatError, match=r"mainloop: missing key 'p99_s'"):
        PrecisionPoint.from_dict({"mainloop": no_p99})


def _step():
    return None


def test_pipeline_order_puts_each_group_before_its_members_wherever_it_stands():
    """Found by mutation testing: Pipeline's order and checks were tested only on a GPU (tests/gpu); they need none."""
    from labkit.timing import Pipeline

    steps = [(n, _step) for n in ("x", "q", "k", "attn", "v", "o")]
    assert Pipeline(steps, groups={"qk": ["q", "k"], "vo": ["v", "o"]}).order() == \
        ["x", "qk", "q", "k", "attn", "vo", "v", "o"]
    assert Pipeline(steps[:2]).order() == ["x", "q"]


@pytest.mark.parametrize("steps, groups, said", [
    (["a", "a"], None, "duplicate step names in ['a', 'a']"),
    (["a", "b"], {"g": ["a", "z"]}, "group 'g' names unknown steps ['z']; steps are ['a', 'b']"),
    (["a", "b", "c"], {"g": ["a", "c"]}, "group 'g' members ['a', 'c'] are not consecutive steps in ['a', 'b', 'c']"),
])
def test_pipeline_refuses_steps_it_could_not_time_naming_them(steps, groups, said):
    from labkit.timing import Pipeline

    with pytest.raises(ValueError) as exc:
        Pipeline([(n, _step) for n in steps], groups=groups)
    assert str(exc.value) == said


def test_pipeline_refuses_graph_mode_before_touching_a_gpu():
    from labkit.timing import Pipeline

    with pytest.raises(ValueError) as exc:
        Pipeline([("a", _step)]).run(mode="graph")
    assert str(exc.value) == "Pipeline times eagerly: use mode 'cold', 'cold_clean' or 'hot'"


def test_equal_samples_give_a_mean_equal_to_them_not_an_ulp_below():
    """Three samples of 3.33362490174769e-3 s have a float mean an ulp below the smallest: the record clamps it, as a
    report's own check wants min <= mean <= max (found by a mutation audit: dropping the lower clamp passed)."""
    v = 0.00333362490174769
    assert float(np.mean([v, v, v])) < v  # the rounding this guards against
    s = Stats.from_samples([v, v, v])
    assert s.mean_s == s.min_s == s.max_s == v


def test_round_orders_of_no_configuration_is_one_clear_error():
    """Found by a review: "rotate" divided by zero, "shuffle" gave empty rounds."""
    from labkit.timing.interleave import round_orders

    for order in ("rotate", "shuffle"):
        with pytest.raises(ValueError, match="no configurations to order"):
            round_orders([], 3, order=order)
    assert round_orders(["a", "b"], 3) == [["a", "b"], ["b", "a"], ["a", "b"]]


class _FakeStream:
    ptr = 77
    capturing = False

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def synchronize(self):
        pass

    def begin_capture(self):
        self.capturing = True

    def end_capture(self):
        self.capturing = False
        return type("Graph", (), {"launch": lambda self, stream: None})()


class _FakeSampler:
    """Stands in for events._Sampler: events from a pool, pads that do nothing, the enqueue cover it was given."""

    flush_bytes = 0
    max_clock_hz = 1_980_000_000

    def __init__(self):
        self.stream, self.pool, self.next, self.covered = _FakeStream(), [], 0, None
        self.clocks = []  # what clock_before_sample says, in turn (then the max)

    def pad(self, setup=None):
        pass

    def clock_before_sample(self):
        return self.clocks.pop(0) if self.clocks else float(self.max_clock_hz)

    def cover_enqueue(self, host_s):
        self.covered = host_s

    def event(self):
        if self.next == len(self.pool):
            self.pool.append(type("Event", (), {"synchronize": lambda self: None})())
        self.next += 1
        return self.pool[self.next - 1]

    def rewind(self):
        self.next = 0


def _fake_timing(monkeypatch, module):
    smp = _FakeSampler()
    monkeypatch.setattr(module, "_Sampler", type("S", (), {"create": staticmethod(lambda *a, **k: smp)}))
    monkeypatch.setattr(module, "cupy", lambda: type("cp", (), {"cuda": type("cuda", (), {
        "get_elapsed_time": staticmethod(lambda a, b: 1.0)})}))
    monkeypatch.setattr(module, "read_clock", lambda: None)
    monkeypatch.setattr(module, "build_timing", lambda name, mode, samples, **kw: type(
        "Timing", (), {"stats": Stats.from_samples(samples)})())  # without a GPU's clock to hold them to
    return smp


def test_pipeline_pads_cover_its_slowest_units_host_launch_and_a_step_belongs_to_one_group(monkeypatch):
    """Found by a review: Pipeline kept the default spin, so a step whose Python launch took longer than it timed the
    host (350.8 us for 50 us of GPU work, where time_gpu and interleave gave 50); and a step in two groups ran twice per
    pass, its samples counted twice."""
    import time

    from labkit.timing import Pipeline, pipeline

    smp = _fake_timing(monkeypatch, pipeline)

    def slow():
        time.sleep(0.004)

    Pipeline([("fast", _step), ("slow", slow), ("other", _step)], groups={"g": ["slow", "other"]}).run(
        iterations=2, warmup=2, mode="hot")
    assert smp.covered >= 0.004  # the group's launch, its slow member in it
    with pytest.raises(ValueError, match=re.escape("steps ['q'] are in more than one group")):
        Pipeline([(n, _step) for n in "xqk"], groups={"g1": ["x", "q"], "g2": ["q", "k"]})
    with pytest.raises(ValueError, match="group 'g' has no steps"):
        Pipeline([("x", _step)], groups={"g": []})


def test_interleave_records_every_sample_into_the_same_two_events(monkeypatch):
    """Found by a review: interleave never rewound its event pool, so it made two CUDA events per sample, the second
    inside the timed window."""
    import sys

    interleave_module = sys.modules["labkit.timing.interleave"]  # labkit.timing's `interleave` is its function
    smp = _fake_timing(monkeypatch, interleave_module)
    out = interleave_module.interleave({"a": _step, "b": _step, "c": _step}, iterations=50, mode="hot")
    assert {n: t.stats.count for n, t in out.items()} == {"a": 50, "b": 50, "c": 50} and len(smp.pool) == 2


@pytest.mark.parametrize("invalidated", [False, True])
def test_a_call_that_fails_under_graph_capture_ends_the_capture_and_says_its_own_error(monkeypatch, invalidated):
    """Found by a review: time_gpu's graph capture had no finally, so the sampler's stream stayed capturing; and
    (reviewing that fix) CUDA invalidates a capture a call broke, whose end_capture then raises its own error, which
    must not replace the call's."""
    from labkit.timing import events

    smp = _fake_timing(monkeypatch, events)
    monkeypatch.setattr(events, "_warm_up", lambda *a, **k: (1e-5, 1e-6))
    monkeypatch.setattr(events, "_check_work", lambda *a: "checked")
    if invalidated:
        def end_capture(self):
            self.capturing = False
            raise RuntimeError("cudaErrorStreamCaptureInvalidated")

        monkeypatch.setattr(_FakeStream, "end_capture", end_capture)

    def syncs_under_capture():
        if smp.stream.capturing:
            raise RuntimeError("cudaErrorStreamCaptureUnsupported: a synchronize")

    with pytest.raises(RuntimeError, match="a synchronize"):
        events.time_gpu(syncs_under_capture, mode="graph", iterations=3)
    assert smp.stream.capturing is False


def test_pipeline_runs_the_warm_up_passes_asked_for(monkeypatch):
    """Found by a review: covering the host's launch had made Pipeline run two warm-up passes where one was asked for,
    and the Sage2 report records the one."""
    from labkit.timing import Pipeline, pipeline

    _fake_timing(monkeypatch, pipeline)
    ran = []
    for warmup in (0, 1, 3):
        ran.clear()
        Pipeline([("s", lambda: ran.append(1))]).run(iterations=2, warmup=warmup, mode="hot")
        assert len(ran) == warmup + 2, warmup


def test_a_timing_argument_refused_is_an_argument_error_a_notebook_shows_in_one_line():
    """An API walk: time_gpu(mode='warm') and empty samples raised builtin ValueErrors, which Jupyter shows with a
    traceback; they are ArgumentErrors (still ValueErrors for callers that catch those)."""
    from labkit.errors import ArgumentError
    from labkit.timing import time_gpu

    with pytest.raises(ArgumentError, match=r"mode must be one of \('cold', .*\), got 'warm'"):
        time_gpu(lambda: None, mode="warm")
    for flush in ("64M", 0, 1.5e8, True):  # refused as input, before a GPU is looked for (none here)
        with pytest.raises(ArgumentError, match=f"flush_bytes {flush!r}: expected "):
            time_gpu(lambda: None, flush_bytes=flush)
    with pytest.raises(ArgumentError, match="Stats need a non-empty 1-D list of samples"):
        Stats.from_samples([])
    assert issubclass(ArgumentError, ValueError)


def _throttle_case(monkeypatch, clocks):
    from labkit.timing import events

    smp = _fake_timing(monkeypatch, events)
    monkeypatch.setattr(events, "_warm_up", lambda *a, **k: (1e-5, 1e-6))
    monkeypatch.setattr(events, "THROTTLE_PAUSE_S", 0)
    built = {}
    monkeypatch.setattr(events, "build_timing", lambda name, mode, samples, **kw: built.update(samples=samples, **kw))
    smp.clocks = list(clocks)
    return events, built


def test_time_gpu_drops_a_sample_whose_sm_clock_ran_under_three_quarters_of_the_max(monkeypatch):
    """timing-methodology.md: per sample the SM clock (the pad's spin: clock64 cycles over %globaltimer ns), and a
    sample under 75 % of the max dropped and counted, as NVBench does; it had only read NVML before and after."""
    events, built = _throttle_case(monkeypatch, [1.90e9, 1.20e9, 1.48e9, 1.95e9, 1.485e9])
    events.time_gpu(lambda: None, mode="hot", iterations=3, check_work=False)
    assert built["samples"] == [1e-3] * 3 and built["dropped_throttled"] == 2  # 1.485 GHz is 75 % exactly: kept
    assert built["sample_clocks"] == [1.90e9, 1.95e9, 1.485e9] and built["stop_reason"] == "iterations=3"


def test_a_gpu_throttled_past_the_timeout_is_an_error_or_a_timeout_with_what_was_kept(monkeypatch):
    from labkit.errors import TimingError

    events, _ = _throttle_case(monkeypatch, [1.0e9] * 50)
    with pytest.raises(TimingError, match=r"^t: 1 samples ran with the SM clock under 75% of its max 1980 MHz \(the "
                                          r"last at 1000 MHz\) and were dropped, 0 kept in 0 s: the GPU is throttled"):
        events.time_gpu(lambda: None, name="t", mode="hot", iterations=5, timeout_s=0, check_work=False)
    events, _ = _throttle_case(monkeypatch, [1.9e9] * 3 + [1.0e9] * 50)  # iterations asked for: never fewer
    with pytest.raises(TimingError, match=r"^t: 1 samples ran .* dropped, 3 kept in"):
        events.time_gpu(lambda: None, name="t", mode="hot", iterations=5, timeout_s=0, check_work=False)
    events, built = _throttle_case(monkeypatch, [1.9e9] * 3 + [1.0e9] * 50)  # 3 kept, then it throttled
    monkeypatch.setattr(events, "THROTTLE_PAUSE_S", 0.02)
    events.time_gpu(lambda: None, name="t", mode="hot", timeout_s=0.05, min_samples=10, check_work=False)
    assert built["stop_reason"] == "timeout 0.05 s" and built["dropped_throttled"] >= 2 and len(built["samples"]) == 3


def test_a_timing_keeps_each_samples_clock_their_median_and_says_what_it_dropped(monkeypatch):
    import json

    import labkit.device
    from labkit.timing import record

    monkeypatch.setattr(record, "cupy", lambda: type("cp", (), {"cuda": type("cuda", (), {
        "Device": lambda: type("D", (), {"id": 0})()})}))
    monkeypatch.setattr(labkit.device, "describe", lambda index=0: type("d", (), {"sm_clock_max_hz": 1_980_000_000})())
    t = record.build_timing("t", "cold", [1e-3, 2e-3, 3e-3, 4e-3], flush_bytes=1, clocks=(None, None),
                            stop_reason="iterations=3", sample_clocks=[1.97e9, 1.9e9, None, 1.2e9],
                            dropped_throttled=2)
    assert t.sample_clocks_hz == (1_970_000_000, 1_900_000_000, None, 1_200_000_000) and t.sm_clock_hz == 1.9e9
    assert t.stop_reason == "iterations=3; 2 samples dropped, their SM clock under 75% of 1980 MHz"
    assert record.Timing.from_dict(json.loads(json.dumps(t.to_dict()))) == t
    old = {k: v for k, v in t.to_dict().items() if k not in ("sample_clocks_hz", "sm_clock_hz", "dropped_throttled")}
    assert record.Timing.from_dict(old).sample_clocks_hz == ()  # a timing saved before these fields reads back


def test_the_spin_kernel_takes_the_cycles_and_the_stamps_pointer_the_pad_passes():
    """NVRTC on the CPU: spin_cycles(long long, unsigned long long*), 8 + 8 bytes of parameters, as pad() passes them
    (an int64 and a device array or a null uint64); a third argument or a 4-byte one would misalign the launch."""
    import labkit.timing.events as ev
    from labkit.kernels import compile_cubin, kernel_path
    from labkit.manifest.elf import read_cubin

    entries = read_cubin(compile_cubin(kernel_path(ev.__file__, "timing_helpers.cu"), arch="sm_90").image).entries
    assert entries["spin_cycles"].param_sizes == (8, 8) and entries["empty_kernel"].param_sizes == ()


def _below(n: int, k: int) -> float:
    """P(Binomial(n, 1/2) <= k)."""
    return sum(math.comb(n, i) for i in range(k + 1)) / 2**n


@pytest.mark.parametrize("n", [6, 7, 10, 20, 21, 40, 100, 333])
def test_median_interval_is_the_widest_order_statistics_pair_that_still_covers_95_percent(n):
    """x_(k) and x_(n+1-k) with P(B <= k - 1) <= 2.5 % and P(B <= k) over it: at 20 values the 6th and 15th smallest,
    which cover the median 95.9 % of the time, the next pair in 88.5 %."""
    x = np.random.default_rng(n).permutation(np.arange(1.0, n + 1))  # the values are their own ranks
    lo, hi = median_interval(x)
    k = int(lo)
    assert hi == n + 1 - k and k >= 1
    assert 1 - 2 * _below(n, k - 1) >= 0.95 > 1 - 2 * _below(n, k)
    if n == 20:
        assert (lo, hi) == (6.0, 15.0)


def test_median_interval_needs_six_values_at_95_percent_and_takes_other_levels():
    assert median_interval([3.0, 1.0, 2.0, 5.0, 4.0]) is None  # the extremes cover only 1 - 2/32 = 93.75 %
    assert median_interval([3.0, 1.0, 2.0, 5.0, 4.0, 6.0]) == (1.0, 6.0)
    assert median_interval([3.0, 1.0, 2.0, 5.0, 4.0], confidence=0.9) == (1.0, 5.0)
    assert median_interval(np.arange(20.0), confidence=0.5) == (7.0, 12.0)  # P(B <= 7) 13 %, P(B <= 8) 25.2 %
    for bad in (0.0, 1.0, 1.5, float("nan")):
        with pytest.raises(ArgumentError, match="expected a fraction between 0 and 1"):
            median_interval([1.0] * 10, confidence=bad)
    for bad in ([1.0] * 9 + [float("nan")], 1.0, [[1.0] * 6]):
        with pytest.raises(ArgumentError, match="1-D list of finite values"):
            median_interval(bad)


def test_median_interval_covers_a_skewed_distributions_median_as_often_as_it_says():
    """Paired timing ratios are skewed (a slow round is far slower, never as far faster): lognormal samples of 20,
    4000 draws, the true median 1; the sign test's interval is exact for any continuous distribution (95.86 %)."""
    rng = np.random.default_rng(7)
    hits = sum(lo <= 1.0 <= hi for lo, hi in (median_interval(rng.lognormal(0.0, 0.5, 20)) for _ in range(4000)))
    assert 0.95 <= hits / 4000 <= 0.967  # binomial spread of 4000 draws at 95.86 %: +-0.0063 at 2 sigma
