"""The launch model against hand-computed cases, and the measured-point path on a faked GPU: an
instrumented launch is replaced by a synthetic timeline of uniform CTAs, for which the measured slot
efficiency must equal the wave model's."""

import json
import math

import numpy as np
import pytest

from labkit.errors import ArgumentError, LabkitError
from labkit.sched import Timeline, decode_launch, dense_lengths, sage2_launch
from labkit.sched import measure as sched
from labkit.workloads.decode.plan import plan_call
from labkit.workloads.decode.run import geometry_for

from ..conftest import ROOT

# the oldest recorded H200 (glob order is the file system's): made before device.json kept the GPU's uuid
H200_DEVICE = sorted((ROOT / "data" / "runs").glob("*-00_device_and_timing"))[0] / "data" / "device.json"


def uniform_timeline(ctas: int, *, sms: int = 132, ctas_per_sm: int = 2, cta_ns: int = 1000) -> Timeline:
    """CTAs of equal length dispatched wave by wave: CTA i in wave i // slots, on SM (i % slots) % sms."""
    slots = sms * ctas_per_sm
    rec = [(i, (i % slots) % sms, (i // slots) * cta_ns, (i // slots + 1) * cta_ns, 0, 0) for i in range(ctas)]
    return Timeline(rec, sms=sms, ctas_per_sm=ctas_per_sm)


def test_sage2_model_at_the_seed_shape_by_hand():
    m = sage2_launch(1, 56, 37810, 37810, sms=132, ctas_per_sm=2)
    assert m.ctas == 296 * 56 == 16576 and m.slots == 264
    assert m.waves == pytest.approx(16576 / 264) and m.full_waves == 63 and m.last_wave_ctas == 16576 - 62 * 264
    assert m.wave_efficiency == pytest.approx(16576 / (63 * 264))
    assert m.q_tile_efficiency == pytest.approx(37810 / 37888) and m.kv_tile_efficiency == pytest.approx(37810 / 37824)
    assert m.efficiency == pytest.approx(m.wave_efficiency * 37810 / 37888 * 37810 / 37824)
    assert sage2_launch(1, 56, 37760, 37810, sms=132, ctas_per_sm=2).q_tile_efficiency == 1.0
    with pytest.raises(ArgumentError, match="q_len 0"):
        sage2_launch(1, 56, 0, 37810, sms=132, ctas_per_sm=2)


def test_decode_model_by_hand():
    m = decode_launch(8, 8192, 2, heads_kv=8, tokens_per_stage=64, sms=132, ctas_per_sm=2)
    assert (m.ctas, m.full_waves, m.wave_efficiency, m.split_efficiency) == (128, 1, 128 / 264, 1.0)
    m3 = decode_launch(8, 8192, 3, heads_kv=8, tokens_per_stage=64, sms=132, ctas_per_sm=2)
    assert m3.ctas == 192 and m3.split_efficiency == pytest.approx(128 / (3 * 43))
    m5 = decode_launch(8, 8000, 5, heads_kv=8, tokens_per_stage=64, sms=132, ctas_per_sm=2)  # 320 CTAs: 2 waves
    assert m5.full_waves == 2 and m5.last_wave_ctas == 56 and m5.kv_tile_efficiency == pytest.approx(8000 / 8000)
    assert decode_launch(1, 100, 1, heads_kv=8, tokens_per_stage=64, sms=132, ctas_per_sm=2).kv_tile_efficiency == \
        pytest.approx(100 / 128)


def test_decode_model_of_tail_splits_by_hand():
    """Tail CTAs are shorter: their wave efficiency is stage-time over slot-time of a greedy schedule in index order."""
    plain = decode_launch(3, 256, 1, heads_kv=1, tokens_per_stage=64, sms=2, ctas_per_sm=1)  # 3 CTAs of 4 stages
    assert (plain.ctas, plain.full_waves, plain.wave_efficiency) == (3, 2, 0.75)
    # 2 whole CTAs (4 stages each) on both slots, then the last unit in 2 CTAs of 2 stages: both slots busy to 6
    halves = decode_launch(3, 256, 1, heads_kv=1, tokens_per_stage=64, sms=2, ctas_per_sm=1, tail_units=1,
                           tail_splits=2)
    assert (halves.ctas, halves.wave_efficiency, halves.split_efficiency) == (4, 1.0, 1.0)
    # in 3 splits: ceil(4 / 3) = 2 stages each, 6 for the unit's 4: slots busy to 6 and 8
    thirds = decode_launch(3, 256, 1, heads_kv=1, tokens_per_stage=64, sms=2, ctas_per_sm=1, tail_units=1,
                           tail_splits=3)
    assert (thirds.ctas, thirds.wave_efficiency, thirds.split_efficiency) == (5, 14 / 16, 12 / 14)
    assert thirds.efficiency == pytest.approx(12 / 16)
    for kw, match in ((dict(tail_units=4, tail_splits=2), "tail_units 4"), (dict(tail_units=1, tail_splits=1),
                      "tail_splits 1"), (dict(tail_units=1, tail_splits=2, resident=1), "no clusters")):
        with pytest.raises(ArgumentError, match=match):
            decode_launch(3, 256, 1, heads_kv=1, tokens_per_stage=64, sms=2, ctas_per_sm=1, **kw)


def test_dense_lengths_cross_each_point_and_its_neighbours():
    xs = dense_lengths([37760, 37761, 37810], step=8, span=64)
    assert xs == sorted(set(xs)) and xs[0] == 37760 - 64 and xs[-1] >= 37810 + 56
    assert {37759, 37760, 37761, 37762, 37809, 37810, 37811} <= set(xs)
    assert dense_lengths([1], step=4)[0] == 1


def test_a_tail_split_calls_wave_efficiency_counts_every_slot_of_every_sm():
    # the `thirds` call above on 1 SM of 2 slots: the same 2 slots, so the same greedy schedule (slots busy to 6 and
    # 8 stages) and the same 14 / (2 x 8) as on 2 SMs of 1 slot
    thirds = decode_launch(3, 256, 1, heads_kv=1, tokens_per_stage=64, sms=1, ctas_per_sm=2, tail_units=1,
                           tail_splits=3)
    assert (thirds.ctas, thirds.slots, thirds.wave_efficiency, thirds.split_efficiency) == (5, 2, 14 / 16, 12 / 14)


def test_dense_lengths_by_hand():
    # step 10, the default span 4 x 10 = 40 around 100: every 10th length from 60 to 140 (both ends), and 99-101
    assert dense_lengths([100], step=10) == [60, 70, 80, 90, 99, 100, 101, 110, 120, 130, 140]
    # span 0 around 2: the point and its neighbours only, 1 among them
    assert dense_lengths([2], step=4, span=0) == [1, 2, 3]
    for bad, said in ((dict(points=[0], step=4), "length"), (dict(points=[5], step=0), "step")):
        with pytest.raises(ArgumentError, match=said):
            dense_lengths(**bad)


def test_a_models_frame_puts_the_extra_column_first():
    from labkit.sched.model import frame

    models = [sage2_launch(1, 56, q, 37810, sms=132, ctas_per_sm=2) for q in (37760, 37810)]
    df = frame(models, q_len=[37760, 37810])
    assert list(df.columns[:2]) == ["q_len", "kind"] and list(df["q_len"]) == [37760, 37810]
    assert list(df["ctas"]) == [m.ctas for m in models]


def _fake_device(monkeypatch):
    """A recorded H200 in place of the GPU: its description, its cluster counts, and no refusal for want of one."""
    import labkit.cuda
    import labkit.device
    import labkit.sched.clusters
    from labkit.workloads.decode.plan import H200_CLUSTER_CTAS

    dev = labkit.device.DeviceInfo.from_dict(json.loads(H200_DEVICE.read_text()))
    monkeypatch.setattr(labkit.device, "describe", lambda *a, **k: dev)
    monkeypatch.setattr(labkit.cuda, "require_gpu", lambda what: None)  # a sweep of GPU workloads asks first
    monkeypatch.setattr(labkit.sched.clusters, "resident_cluster_ctas", lambda index=0: dict(H200_CLUSTER_CTAS))
    return dev


class FakePlan:
    """The instrumented Sage2 plan's two calls, with uniform CTAs in place of the GPU's."""

    def __init__(self, shape, lose: int = 0):
        self.batch, _, self.heads, _ = shape
        self.lose = lose

    def mainloop(self, q_len, kv_len):
        self.ctas = math.ceil(q_len / 128) * self.heads * self.batch

    def read_timeline(self):
        tl = uniform_timeline(self.ctas)
        return Timeline(tl.records[: len(tl.records) - self.lose], sms=132, ctas_per_sm=2) if self.lose else tl


def test_sage2_point_on_a_faked_gpu_measures_what_the_model_predicts_for_uniform_ctas(monkeypatch):
    _fake_device(monkeypatch)
    monkeypatch.setattr(sched, "_sage2_plan", lambda shape: FakePlan(shape))
    p = sched.sage2_point([1, 37810, 56, 128], 37761, 37810, launches=2)
    assert p["ctas"] == 16576 and p["registers"] == 255 and p["limiter"] == "registers"  # the real cubin's
    assert p["measured_slot_efficiency"] == pytest.approx(p["wave_efficiency"])
    assert p["measured_waves"] == p["full_waves"] == 63 and p["measured_last_wave_ctas"] == p["last_wave_ctas"]
    assert p["measured_efficiency"] == pytest.approx(p["efficiency"])
    json.dumps(p)  # a sweep point's record is JSON
    monkeypatch.setattr(sched, "_sage2_plan", lambda shape: FakePlan(shape, lose=5))
    with pytest.raises(LabkitError, match="holds 16571 CTAs, the launch has 16576"):
        sched.sage2_point([1, 37810, 56, 128], 37761, 37810, launches=1)
    with pytest.raises(ArgumentError, match="q_len 37811"):
        sched.sage2_point([1, 37810, 56, 128], 37811, 37810)


def test_decode_point_uses_the_decode_timeline_api_with_the_models_split_count(monkeypatch):
    from labkit.workloads.decode import run as decode_run

    _fake_device(monkeypatch)
    calls = []

    def fake_decode_timeline(batch, kv_len, head_dim, *, heads_q=32, heads_kv=8, page_size=64, splits=None):
        calls.append(splits)  # as the real one: None is the plan's own call, a count plan_call's build for it
        plan = plan_call(geometry_for(batch, kv_len, heads_q=heads_q, heads_kv=heads_kv, head_dim=head_dim,
                                      page_size=page_size), splits=splits)
        return uniform_timeline(plan.splits * heads_kv * batch, ctas_per_sm=plan.ctas_per_sm)

    monkeypatch.setattr(decode_run, "decode_timeline", fake_decode_timeline, raising=False)
    p = sched.decode_point(8, 8192, None, launches=1)
    assert calls == [None] and p["heuristic_splits"] == p["splits"] == 2  # the plan's own call: 2 splits, a cluster
    assert p["ctas"] == p["splits"] * 8 * 8 and p["measured_slot_efficiency"] == pytest.approx(p["wave_efficiency"])
    assert p["slots"] == 132 and p["kernel"] == "mma w8s2 cl2 pp"  # one 8-warp CTA per SM, as the plan runs it
    p2 = sched.decode_point(8, 8192, 2, launches=1)  # 2 splits asked for: the 4-warp build, two CTAs per SM
    assert calls[-1] == 2 and p2["splits"] == 2 and p2["slots"] == 264 and p2["kernel"] == "mma w4s3"
    assert p2["measured_slot_efficiency"] == pytest.approx(p2["wave_efficiency"])
    p5 = sched.decode_point(8, 8192, 5, launches=1)
    assert p5["splits"] == 5 and p5["full_waves"] == 2 and p5["measured_waves"] == 2
    assert p5["measured_slot_efficiency"] == pytest.approx(320 / 528)


def test_occupancy_table_names_each_kernel_and_its_limiter():
    rows = sched.occupancy_table(shape=[1, 37810, 56, 128], decode={"batch": 8, "kv_len": 8192, "head_dim": 128,
                                                                    "heads_q": 32, "heads_kv": 8, "page_size": 64},
                                 arch="sm_90")
    by = {r["kernel"]: r for r in rows}
    assert by["sage2 mainloop"]["ctas_per_sm"] == 2 and by["sage2 mainloop"]["limiter"] == "registers"
    assert "sage2 mainloop, -DLABKIT_TIMELINE" in by and rows[-1]["kernel"].startswith("decode batch 8 x 8192")
    assert rows[-1]["smem_per_cta_bytes"] > 64 * 1024  # the decode kernel's stages: shared memory binds


def test_timeline_round_trips_through_its_dict_and_refuses_damage():
    tl = uniform_timeline(300)
    again = Timeline.from_dict(json.loads(json.dumps(tl.to_dict())))
    assert np.array_equal(again.records, tl.records) and again.stats() == tl.stats()
    bad = tl.to_dict()
    bad["records"][3] = [1, 2, 3]
    with pytest.raises(LabkitError, match=r"src\.json: records\[3\]"):
        Timeline.from_dict(bad, source="src.json")


def test_decode_row_blocks_multiply_the_ctas():
    # 16 query heads per KV head x 8 tokens = 128 rows, 64 per CTA at d128: two row blocks
    m = decode_launch(4, 4096, 2, heads_kv=4, tokens_per_stage=32, sms=132, ctas_per_sm=2, row_blocks=2)
    assert m.ctas == 2 * 4 * 2 * 4 == 64 and m.waves == pytest.approx(64 / 264)
    with pytest.raises(ArgumentError, match="row_blocks"):
        decode_launch(4, 4096, 2, heads_kv=4, tokens_per_stage=32, sms=132, ctas_per_sm=2, row_blocks=0)


def test_decode_model_takes_the_slots_of_the_build_each_call_gets():
    """At 8k tokens the plan runs batch 4 and 8 in one 8-warp CTA per SM (4 splits; 2 in a cluster), at 4k batch 16 in
    a 3-stage build (2 CTAs per SM), and batch 64 in a one-stage build (4): a curve drawn with one call's CTAs per SM
    put batch 64 at 2 waves where it runs 1."""
    from labkit.sched.measure import decode_model

    assert decode_model(8, 8192, None).slots == decode_model(4, 8192, None).slots == 132
    assert decode_model(16, 4096, None).slots == 264
    assert decode_model(8, 8192, 4).slots == decode_model(8, 8192, 2).slots == 264  # counts asked for: 4 warps
    assert decode_model(64, 8192, None).slots == 528
    assert decode_model(64, 8192, None).waves == pytest.approx(512 / 528)
    assert decode_model(64, 8192, None, ctas_per_sm=2).slots == 264  # given, it is used


def test_device_info_reads_records_with_and_without_the_gpu_uuid():
    """Records made before the GPU's uuid was kept read as uuid None; a new record keeps it through to_dict, and a
    uuid that is not a string is refused naming its key."""
    from labkit.device import DeviceInfo

    old = json.loads(H200_DEVICE.read_text())
    assert "uuid" not in old and DeviceInfo.from_dict(old).uuid is None
    new = {**old, "uuid": "GPU-0a1b2c3d-0000-1111-2222-333344445555"}
    dev = DeviceInfo.from_dict(new)
    assert dev.uuid == new["uuid"] and DeviceInfo.from_dict(dev.to_dict()) == dev
    assert DeviceInfo.from_dict({**old, "uuid": None}).uuid is None
    with pytest.raises(LabkitError, match="uuid"):
        DeviceInfo.from_dict({**old, "uuid": 7})
    with pytest.raises(LabkitError, match="serial"):
        DeviceInfo.from_dict({**old, "serial": "x"})


def test_a_model_of_this_gpus_call_plans_with_the_clusters_this_gpu_holds(monkeypatch):
    """Found by a review: notebook 04 labelled and modelled its decode call with the H200 table while the launched
    call's plan asked the GPU; on a GPU with fewer clusters of 8 the title would name a cluster the call did not run."""
    import labkit.cuda
    import labkit.sched.clusters
    from labkit.sched import measure

    dev = _fake_device(monkeypatch)
    monkeypatch.setattr(labkit.cuda, "gpu_status", lambda: (True, "a faked H200 (test)"))
    monkeypatch.setattr(labkit.sched.clusters, "resident_cluster_ctas", lambda index=0: {2: 132, 4: 120, 8: 56})
    seed = dict(head_dim=256, heads_q=24, heads_kv=4, page_size=64)
    _, here = measure._decode_plan(2, 704, sms=dev.sm_count, arch=dev.arch, **seed)
    assert here.kernel.cluster_splits == 0  # 64 CTAs in clusters of 8 do not fit in 56
    _, other = measure._decode_plan(2, 704, sms=100, arch=dev.arch, **seed)  # another GPU: the table, every SM
    assert other.kernel.cluster_splits == 8


@pytest.mark.parametrize("name,l2_mib,evict_first", [("NVIDIA H200", 60, True), ("NVIDIA H100 80GB HBM3", 50, False)])
def test_the_model_plans_a_call_with_the_l2_of_the_gpu_at_hand(monkeypatch, name, l2_mib, evict_first):
    """Found on the first H100 run's review: notebook 04's model and kernel labels planned with the H200's 60 MiB L2
    while the launch planned with the GPU's, so at 5 x 8k d128 (168 MB, under 3 x 60 MiB but over 3 x 50 MiB) the
    model named an evict-first build the H100 did not run."""
    import dataclasses

    import labkit.cuda
    from labkit.sched.measure import _decode_plan

    dev = _fake_device(monkeypatch)
    monkeypatch.setattr(labkit.device, "describe", lambda *a, **k: dataclasses.replace(dev, name=name,
                                                                                          l2_bytes=l2_mib << 20))
    monkeypatch.setattr(labkit.cuda, "gpu_status", lambda: (True, "faked"))
    _, plan = _decode_plan(5, 8192, 128, 32, 8, 64)
    assert plan.kernel.kv_evict_first is evict_first
    _, asked = _decode_plan(5, 8192, 128, 32, 8, 64, l2_bytes=60 << 20)  # an L2 given is the L2 planned with
    assert asked.kernel.kv_evict_first


def test_a_timeline_charts_label_names_the_instrumented_build_it_records(monkeypatch):
    """Found by mutation testing: the label ``decode_call_label`` gives a chart was not checked to be the instrumented
    call's (``-DLABKIT_TIMELINE`` keeps per-unit CTAs, so no persistent build, and at 128 x 1k d256 another stage
    count) rather than the plain call's, which is not what the timeline recorded."""
    import labkit.cuda
    from labkit.workloads.decode.geometry import kernel_label

    monkeypatch.setattr(labkit.cuda, "gpu_status", lambda: (False, "no GPU (test)"))  # planned for the H200
    assert kernel_label(plan_call(geometry_for(16, 1024, head_dim=256)).kernel) == "mma w8d2s2ef P wide"  # plain
    assert sched.decode_call_label(16, 1024, head_dim=256) == "1 split, mma w8d2s2ef wide"
    assert sched.decode_call_label(128, 1024, head_dim=256) == "1 split, mma w8d2s3c1 wide"


@pytest.mark.parametrize("call, message", [
    (lambda: sched.sage2_point([1, 1024, 8, 128], 1, 1024, launches=101), "launches 101"),
    (lambda: sched.sage2_point([1, 1024, 8, 128], 1, 1024, launches=0), "launches 0"),
    (lambda: sched.sage2_timeline([1, 1024, 8, 128], 0, 1024), "q_len 0"),
    (lambda: sched.sage2_timeline([1, 1024, 8, 128], 1, 1025), "kv_len 1025"),
    (lambda: sched.sage2_timeline([1, 1024, 8, 128], 1, 0), "kv_len 0"),
    (lambda: sched.decode_point(8, 8192, launches=101), "launches 101"),
])
def test_a_measured_point_out_of_range_is_refused_naming_the_value_before_any_launch(call, message):
    """Found by mutation testing: the bounds of a measured point's q_len, kv_len and launch count were checked on one
    side only; out of range is an ArgumentError naming the value, before any GPU is asked for."""
    with pytest.raises(ArgumentError, match=message):
        call()


def test_the_decode_occupancy_is_the_plain_builds_not_the_instrumented_ones(monkeypatch):
    """Found by mutation testing: ``decode_occupancy`` (the occupancy table's decode row, and the model's CTAs per SM)
    was not checked to read the plain build the call launches; the instrumented build uses other registers (NVRTC 13:
    164 against 167 at 8 x 8k d128)."""
    import importlib

    import labkit.cuda

    build = importlib.import_module("labkit.workloads.decode.build")
    monkeypatch.setattr(labkit.cuda, "gpu_status", lambda: (False, "no GPU (test)"))
    g = geometry_for(8, 8192)
    plain = build.occupancy(plan_call(g).kernel, "sm_90")
    assert sched.decode_occupancy(8, 8192) == plain
    assert sched.decode_occupancy(8, 8192, splits=2) == build.occupancy(plan_call(g, splits=2).kernel, "sm_90")


def test_the_decode_helpers_default_to_the_issues_geometry_on_132_sms(monkeypatch):
    """Found by mutation testing: called with a batch and kv_len only (as notebook 04's charts call them), the helpers
    take 32/8 heads, d128, page 64 and the H200's 132 SMs; a changed default went unseen."""
    import labkit.cuda

    monkeypatch.setattr(labkit.cuda, "gpu_status", lambda: (False, "no GPU (test)"))
    given = dict(head_dim=128, heads_q=32, heads_kv=8, page_size=64, sms=132)
    for b, n in ((1, 8192), (8, 8192), (64, 8192)):
        assert sched.decode_splits(b, n) == sched.decode_splits(b, n, **given)
        assert sched.decode_call_label(b, n) == sched.decode_call_label(b, n, **given)
        assert sched.decode_model(b, n, None) == sched.decode_model(b, n, None, **given)
    assert sched.decode_splits(1, 8192) == 8  # on 131 SMs the plan takes 16
    assert sched.decode_occupancy(8, 8192) == sched.decode_occupancy(8, 8192, **given)


@pytest.mark.parametrize("sage2, decode", [(True, False), (False, True), (True, True)])
def test_the_occupancy_table_lists_only_the_kernels_of_the_studied_workloads(sage2, decode):
    """Found by a notebook review: notebook 04 with ``-p workload decode`` listed both Sage2 mainloop rows above "Sage2:
    not studied in this run"; only the decode row had been dropped (for ``workload sage2``)."""
    from labkit.sched import study

    rows = sched.occupancy_table(shape=[1, 37810, 56, 128], decode={"batch": 8, "kv_len": 8192, "head_dim": 128,
                                                                    "heads_q": 32, "heads_kv": 8, "page_size": 64},
                                 arch="sm_90")  # as a recorded run of both workloads holds them
    shown = study.studied_kernels(rows, sage2=sage2, decode=decode)
    want = [r["kernel"] for r in rows if (sage2 and r["kernel"].startswith("sage2 "))
            or (decode and r["kernel"].startswith("decode "))]
    assert list(shown.index) == want and len(want) == 2 * sage2 + decode
    assert list(shown.columns) == [k for k in rows[0] if k != "kernel"]


def test_notebook_04s_stats_name_the_slot_time_sums_as_such():
    """Found by a notebook review: `busy 536.4 ms` stood beside `makespan 3.222 ms` with nothing to say it sums the
    slots' time. 300 CTAs of 1 us on 264 slots: two waves, 300 us of busy slot-time in a 2 us call."""
    from labkit.sched import study

    shown = study.shown_stats(uniform_timeline(300).stats())["measured"]
    assert shown["makespan"] == "2 us" and shown["busy"] == "300 us summed over slots"
    assert shown["last_wave_idle_slot"] == f"{264 - 36} us summed over slots"
