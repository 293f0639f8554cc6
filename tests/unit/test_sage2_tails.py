"""The Sage2 tail study as a labkit.sweep of interleaved rounds, on CPU: the rounds' files, resume, folding
into the report's TailPoints, and the errors a user sees (GPU rounds: tests/gpu/test_sage2_gpu.py)."""

import json

import pytest

from labkit import sweep
from labkit.errors import ArgumentError, FormatError, LabkitError
from labkit.timing import Stats
from labkit.workloads.sage2 import tails
from labkit.workloads.sage2.schedule import Schedule

SHAPE = [1, 1000, 4, 96]
CONFIGS = [("q_tail_fixed_kv", 896, 1000), ("q_tail_fixed_kv", 897, 1000), ("q_tail_fixed_kv", 1000, 1000),
           ("kv_tail_fixed_q", 1000, 960), ("kv_tail_fixed_q", 1000, 961), ("kv_tail_fixed_q", 1000, 1000)]


def _fake_round(calls):
    """tail_round without a GPU: seconds that depend on the configuration and the round, fixed checksums."""
    def fake(shape, *, round_index, layout, dtype, q_tails, kv_tails, seed, schedule):
        calls.append(round_index)
        confs = tails.tail_configs(shape, q_tails, kv_tails, schedule)
        return {"round_index": round_index, "order": [tails._key(*c) for c in confs],
                "configurations": [{"sweep": s, "q_len": q, "kv_len": k, "seconds": 1e-3 * (i + 1) + 1e-6 * round_index,
                                    "checksum": float(q + k)} for i, (s, q, k) in enumerate(confs)]}
    return fake


def test_configurations_are_the_seeds_three_points_around_each_tile():
    assert tails.tail_configs(SHAPE) == CONFIGS
    assert tails.tail_configs(SHAPE, [5], [7, 1000]) == [("q_tail_fixed_kv", 5, 1000), ("kv_tail_fixed_q", 1000, 7),
                                                         ("kv_tail_fixed_q", 1000, 1000)]
    with pytest.raises(ArgumentError, match="q_tails"):
        tails.tail_configs(SHAPE, [1001], None)


def test_study_writes_one_file_per_round_and_resumes(tmp_path, monkeypatch):
    import labkit.cuda

    calls: list[int] = []
    monkeypatch.setattr(tails, "tail_round", _fake_round(calls))
    monkeypatch.setattr(labkit.cuda, "require_gpu", lambda what: None)  # the sweep asks for a GPU before it starts
    out = tmp_path / "tails"
    points = tails.tail_study(SHAPE, iterations=4, directory=out, progress=None)
    assert calls == [0, 1, 2, 3]
    assert len(list((out / "points").glob("*.json"))) == 4
    manifest = json.loads((out / "sweep.json").read_text())
    assert manifest["workload"] == "sage2.tail_round" and manifest["grid"]["round_index"] == [0, 1, 2, 3]
    assert [(t.sweep, t.q_len, t.kv_len) for t in points] == CONFIGS
    first = points[0]
    assert first.mainloop == Stats.from_samples([1e-3 + 1e-6 * r for r in range(4)])
    assert first.checksum == 1896.0 and first.q_ctas_per_head == 7 and first.q_row_efficiency == 896 / 896
    # an interrupted study: two rounds' files gone; the re-run measures only those two
    removed = []
    for f in sorted((out / "points").glob("*.json"))[:2]:
        removed.append(json.loads(f.read_text())["params"]["round_index"])
        f.unlink()
    calls.clear()
    again = tails.tail_study(SHAPE, iterations=4, directory=out, progress=None)
    assert sorted(calls) == sorted(removed)
    assert again == points


def test_rounds_that_disagree_are_refused():
    def rnd(i, confs=CONFIGS, checksum=1.0):
        return {"round_index": i, "configurations": [{"sweep": s, "q_len": q, "kv_len": k, "seconds": 1e-3,
                                                      "checksum": checksum} for s, q, k in confs]}
    with pytest.raises(LabkitError, match="no finished rounds"):
        tails.tail_points([])
    with pytest.raises(LabkitError, match="round 1 ran other configurations than round 0"):
        tails.tail_points([rnd(0), rnd(1, CONFIGS[:5])])
    with pytest.raises(LabkitError, match=r"q_tail_fixed_kv/q896/kv1000 gave checksum 2.0 in round 1 and 1.0"):
        tails.tail_points([rnd(0), rnd(1, checksum=2.0)])
    assert len(tails.tail_points([rnd(0), rnd(1)])) == 6


@pytest.mark.parametrize("damage, message", [
    (lambda c: c.pop("seconds"), r"tail round 1: configurations\[2\]: missing key 'seconds'"),
    (lambda c: c.update(seconds="0.001"), r"configurations\[2\]\.seconds = '0.001': expected a number"),
    (lambda c: c.update(seconds=-1.0), r"configurations\[2\]\.seconds = -1.0: expected a number above 0"),
    (lambda c: c.update(checksum="19512.77"), r"configurations\[2\]\.checksum = '19512.77': expected a number"),
    (lambda c: c.update(sweep="q"), r"configurations\[2\]\.sweep = 'q': expected one of"),
])
def test_a_damaged_round_is_named_by_its_round_and_field(damage, message):
    """Found by a readers review: rounds are sweep results from disk, read by hand: a missing field was a KeyError,
    "0.001" or -1 seconds went into the stats, and a checksum stored as text made "19512.77 and 19512.77" differ."""
    rounds = [{"round_index": i, "configurations": [{"sweep": s, "q_len": q, "kv_len": k, "seconds": 1e-3,
                                                     "checksum": 1.0} for s, q, k in CONFIGS]} for i in range(2)]
    damage(rounds[1]["configurations"][2])
    with pytest.raises(FormatError, match=message):
        tails.tail_points(rounds)


def test_the_sweep_workload_refuses_bad_parameters_before_any_gpu_work(tmp_path):
    with pytest.raises(ArgumentError, match="head_dim 100"):
        tails.tail_grid([1, 1000, 4, 100], iterations=1, layout="NHD", dtype="bf16", q_tails=None, kv_tails=None,
                        seed=0)
    grid = tails.tail_grid(SHAPE, iterations=1, layout="NHD", dtype="bf16", q_tails=None, kv_tails=None, seed=0)
    grid["shape"] = [[1, 1000, 4, 100]]  # a hand-written grid: the sweep checks every point before it starts
    with pytest.raises(ArgumentError, match=r"workload sage2.tail_round, point .*: head_dim 100"):
        sweep.run(tmp_path / "a", "sage2.tail_round", grid, progress=None)
    assert not (tmp_path / "a").exists()
    grid = tails.tail_grid(SHAPE, iterations=1, layout="NHD", dtype="bf16", q_tails=None, kv_tails=None, seed=0)
    grid["schedule"] = [{"cta_q": 128, "tile": 3}]
    with pytest.raises(ArgumentError, match=r"schedule .*'tile'"):
        sweep.run(tmp_path / "b", "sage2.tail_round", grid, progress=None)
    assert not (tmp_path / "b").exists()
    assert tails.tail_grid(SHAPE, iterations=2, layout="HND", dtype="fp16", q_tails=[5], kv_tails=None, seed=3,
                           schedule=Schedule(pv_terms=2))["schedule"] == [Schedule(pv_terms=2).to_dict()]


def test_tile_tails_where_n_is_a_whole_number_of_tiles_or_under_one():
    """N a multiple of the tile: the tile below N, one more row, and N; N one tile: that tile alone (no tile below it,
    and no row past N); N under one tile: its first row and N."""
    from labkit.values import tile_tails

    assert tile_tails(256, 128) == [128, 129, 256]
    assert tile_tails(384, 128) == [256, 257, 384]
    assert tile_tails(128, 128) == [128]
    assert tile_tails(100, 128) == [1, 100]
    assert tile_tails(1000, 64) == [960, 961, 1000]  # 1000 = 15 * 64 + 40


def test_a_round_that_is_no_object_or_has_no_configurations_is_refused():
    def rnd(i, confs=CONFIGS):
        return {"round_index": i, "configurations": [{"sweep": s, "q_len": q, "kv_len": k, "seconds": 1e-3,
                                                      "checksum": 1.0} for s, q, k in confs]}
    with pytest.raises(FormatError, match="tail round 1"):
        tails.tail_points([rnd(0), "not a round"])
    with pytest.raises(FormatError, match=r"tail round 0: configurations"):
        tails.tail_points([rnd(0, [])])
    # rounds are named by their own index, not their place in the list (a sweep's rows come in any order)
    with pytest.raises(LabkitError, match="round 1 ran other configurations than round 3"):
        tails.tail_points([rnd(3), rnd(1, CONFIGS[:5])])
    # a round of one configuration, a length of one row: a length; none is not
    one = [("q_tail_fixed_kv", 1, 1000), ("kv_tail_fixed_q", 1000, 1)]
    assert [(p.q_len, p.kv_len) for p in tails.tail_points([rnd(0, one[:1])])] == [(1, 1000)]
    assert [(p.q_len, p.kv_len) for p in tails.tail_points([rnd(0, one[1:])])] == [(1000, 1)]
    for name, q, k, field in (("q_tail_fixed_kv", 0, 1000, "q_len"), ("kv_tail_fixed_q", 1000, 0, "kv_len")):
        with pytest.raises(FormatError, match=rf"tail round 0: configurations\[0\]\.{field}"):
            tails.tail_points([rnd(0, [(name, q, k)])])


def test_a_study_of_no_rounds_is_refused_before_any_sweep(tmp_path):
    for call in (lambda: tails.tail_study(SHAPE, iterations=0, directory=tmp_path / "s", progress=None),
                 lambda: tails.check_tail_dir(tmp_path / "s", SHAPE, iterations=0)):
        with pytest.raises(ArgumentError, match="tail_iterations"):
            call()
    assert not (tmp_path / "s").exists()


def test_a_study_run_with_the_defaults_is_the_one_its_directory_check_resumes(tmp_path, monkeypatch):
    """``check_tail_dir`` and ``tail_study`` take the same defaults: the check passes for the study it is to resume."""
    import labkit.cuda

    calls: list[int] = []
    monkeypatch.setattr(tails, "tail_round", _fake_round(calls))
    monkeypatch.setattr(labkit.cuda, "require_gpu", lambda what: None)
    tails.tail_study(SHAPE, directory=tmp_path / "s", progress=None)
    assert calls == [0, 1, 2, 3, 4]  # five rounds by default
    tails.check_tail_dir(tmp_path / "s", SHAPE)
    calls.clear()  # no directory: a temporary one, gone after
    assert [(p.sweep, p.q_len, p.kv_len) for p in tails.tail_study(SHAPE, iterations=2, progress=None)] == CONFIGS
    assert calls == [0, 1]


def test_tail_lengths_as_the_command_line_gives_them_finish_and_resume(tmp_path, monkeypatch):
    """Found by a review: `sage2 profile --q-tail 900,950` passes a tuple; its points were written as JSON lists and
    the strict read after the last round refused each (a list is not a tuple): no report, and a re-run failed
    again."""
    import labkit.cuda
    from labkit.values import Shape

    calls: list[int] = []
    monkeypatch.setattr(tails, "tail_round", _fake_round(calls))
    monkeypatch.setattr(labkit.cuda, "require_gpu", lambda what: None)
    shape = Shape.of(SHAPE)
    q_tails = shape.lengths("900,950", "--q-tail")
    assert isinstance(q_tails, tuple)
    points = tails.tail_study(shape, iterations=2, q_tails=q_tails, directory=tmp_path / "t", progress=None)
    assert [(p.q_len, p.kv_len) for p in points if p.sweep == "q_tail_fixed_kv"] == [(900, 1000), (950, 1000)]
    tails.check_tail_dir(tmp_path / "t", shape, iterations=2, q_tails=q_tails)
    calls.clear()
    assert tails.tail_study(shape, iterations=2, q_tails=q_tails, directory=tmp_path / "t", progress=None) == points
    assert calls == []  # every round read back, none measured again


def test_a_round_whose_outputs_are_not_all_written_and_finite_is_refused_naming_the_configuration():
    import numpy as np

    good = np.ones((1, 8, 4, 96), np.float32)
    tails.check_written("kv_tail_fixed_q/q1000/kv960", good, 0)
    left = good.copy()
    left[0, 5, 2, :3] = np.nan  # three elements the mainloop never wrote over the poison
    with pytest.raises(LabkitError, match=r"^tail study round 2: kv_tail_fixed_q/q1000/kv960: 3 of 3072 output "
                                          r"elements are not finite after the timed mainloop \(poisoned before it\)"):
        tails.check_written("kv_tail_fixed_q/q1000/kv960", left, 2)
    inf = good.copy()
    inf[0, 0, 0, 0] = np.inf
    with pytest.raises(LabkitError, match="q896/kv1000: 1 of 3072"):
        tails.check_written("q_tail_fixed_kv/q896/kv1000", inf, 0)
