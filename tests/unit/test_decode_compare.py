"""`labkit decode compare` without a GPU: build specs parsed strictly, every build planned and compiled before any
launch, bad input refused in one line."""


import pytest
from hypothesis import given
from hypothesis import strategies as st

from labkit import cli
from labkit.errors import ArgumentError, NoGPU
from labkit.workloads.decode import bench, compare
from labkit.workloads.decode.bench import render
from labkit.workloads.decode.compare import BUILD_KNOBS, build_name, parse_build, plan_builds

from .test_sched_points import _fake_device


def _fake_h200(monkeypatch):
    import labkit.cuda

    _fake_device(monkeypatch)
    monkeypatch.setattr(labkit.cuda, "gpu_status", lambda: (True, "a faked H200 (test)"))


def test_parse_build_reads_each_kind_of_knob():
    assert parse_build("warps=8,stages=2,persistent=1") == {"warps": 8, "stages": 2, "persistent": True}
    assert parse_build(" splits = 4 , cluster=0 ,variant=mma") == {"splits": 4, "cluster": False, "variant": "mma"}
    assert build_name(parse_build("kv_evict_first=1,qk_chains=1")) == "kv_evict_first=1,qk_chains=1"


@pytest.mark.parametrize("spec, message", [
    ("warps", "build 'warps': warps: expected KNOB=VALUE with KNOB one of splits, variant,"),
    ("wraps=8", "build 'wraps=8': wraps=8: expected KNOB=VALUE"),
    ("warps=8,", "build 'warps=8,': (empty): expected KNOB=VALUE"),
    ("warps=x", "build 'warps=x': warps 'x': expected an integer"),
    ("stages=0", "build 'stages=0': stages 0: expected 1..4"),  # kernel_build's bound: it had said 1..65536
    ("stages=5", "build 'stages=5': stages 5: expected 1..4"),
    ("splits=999", "build 'splits=999': splits 999: expected 1..256"),
    ("persistent=yes", "build 'persistent=yes': persistent=yes: expected persistent=0 or persistent=1"),
    ("variant=wgmma", "expected variant=mma or variant=fma"),
    ("warps=8,warps=4", "build 'warps=8,warps=4': warps=4: warps given twice"),
])
def test_parse_build_names_the_spec_the_knob_and_what_was_expected(spec, message):
    with pytest.raises(ArgumentError) as err:
        parse_build(spec)
    assert message in str(err.value) and "\n" not in str(err.value)


def test_parse_builds_stage_bound_is_kernel_builds():
    from labkit.workloads.decode import DecodeGeometry
    from labkit.workloads.decode.geometry import kernel_build

    g = DecodeGeometry(8, 32, 8, 128, 64, 128, 1024)
    top = compare.KNOB_MAX["stages"]
    kernel_build(g, stages=top)
    with pytest.raises(ArgumentError, match=f"stages {top + 1}: expected 1..{top}"):
        kernel_build(g, stages=top + 1)


KNOB_VALUES = {k: st.sampled_from(["mma", "fma"]) if k == "variant" else st.booleans() if k in compare.BOOL_KNOBS
               else st.integers(1, compare.KNOB_MAX.get(k, 256)) for k in BUILD_KNOBS}


@given(st.dictionaries(st.sampled_from(BUILD_KNOBS), st.just(None), min_size=1).flatmap(
    lambda d: st.fixed_dictionaries({k: KNOB_VALUES[k] for k in d})))
def test_a_build_name_reads_back_as_its_knobs(knobs):
    assert parse_build(build_name(knobs)) == knobs


def test_plan_builds_refuses_what_cannot_run_naming_the_build(monkeypatch):
    _fake_h200(monkeypatch)
    knobs = plan_builds(64, 1024, 128, (parse_build("persistent=1,warps=8,stages=2"), parse_build("splits=2")))
    assert knobs == {"plan": {}, "persistent=1,warps=8,stages=2": {"persistent": True, "warps": 8, "stages": 2},
                     "splits=2": {"splits": 2}}
    with pytest.raises(ArgumentError, match=r"build 'persistent=1,warps=8,stages=3' at batch 64 x 1024 d128: "
                                            r"160 \+ 276480 B of shared memory: sm_90 allows 232448 B per CTA"):
        plan_builds(64, 1024, 128, (parse_build("persistent=1,warps=8,stages=3"),))
    with pytest.raises(ArgumentError, match="build 'persistent=1,splits=2' .*persistent: CTAs claim whole units"):
        plan_builds(64, 1024, 128, (parse_build("persistent=1,splits=2"),))
    with pytest.raises(ArgumentError, match=r"build 'splits=2' at batch 64 x 1024 d128 runs the same call as "
                                            r"'splits=2' \(mma w4s1c1, 2 split\(s\)\): nothing to compare"):
        plan_builds(64, 1024, 128, (parse_build("splits=2"), parse_build("splits=2")))
    # the plan's own call at 8 x 8k d128 is 8 warps, 2 stages, 2 splits in a cluster: the same knobs add nothing
    with pytest.raises(ArgumentError, match=r"build 'stages=2,warps=8' .* runs the same call as 'plan' \(mma w8s2 cl2"):
        plan_builds(8, 8192, 128, (parse_build("stages=2,warps=8"),))
    # the launch's own checks run here too: one split per page at most (16 pages of 64 tokens)
    with pytest.raises(ArgumentError, match="build 'splits=32' at batch 8 x 1024 d128: .*32.*1..16"):
        plan_builds(8, 1024, 128, (parse_build("splits=32"),))
    with pytest.raises(ArgumentError, match="no build to time beside the plan"):
        plan_builds(64, 1024, 128, ())
    with pytest.raises(ArgumentError, match=r"68\.7 GB of K/V per call; at most 9 GB"):
        plan_builds(512, 32768, 128, (parse_build("splits=2"),))
    with pytest.raises(ArgumentError, match=r"the plan and 14 build\(s\) each hold their own 8\.6 GB of K/V, more "
                                            r"than 80 % of the GPU's 150 GB"):
        plan_builds(256, 8192, 128, tuple(parse_build(f"splits={s}") for s in range(2, 16)))


def test_without_a_gpu_the_builds_are_checked_for_the_h200_before_no_gpu_is_said():
    """Found by a CLI review: on a machine without a GPU a knob the call cannot take was answered with 'needs a CUDA
    GPU', since the GPU was described before any build was planned."""
    from labkit.cuda import gpu_available

    if gpu_available():
        pytest.skip("this checks the machine without a GPU")
    with pytest.raises(ArgumentError, match=r"build 'warps=3' at batch 8 x 8192 d128: warps 3"):
        plan_builds(8, 8192, 128, (parse_build("warps=3"),))
    with pytest.raises(NoGPU, match="decode compare needs a CUDA GPU"):
        plan_builds(8, 8192, 128, (parse_build("splits=4"),))


def test_compare_cli_refuses_bad_input_in_one_line_before_any_launch(monkeypatch, capsys):
    _fake_h200(monkeypatch)
    monkeypatch.setattr(bench, "check_once", lambda: pytest.fail("a kernel ran before the input was checked"))
    call = ["decode", "compare", "--batch", "64", "--kv-len", "1024"]
    for args, message in (
            (["--build", "warps=x"], "--build: build 'warps=x': warps 'x': expected an integer"),
            (["--build", "stages=2", "--head-dim", "100"], "head_dim 100: the decode kernel takes 128, 256"),
            (["--build", "persistent=1,warps=8,stages=3"], "build 'persistent=1,warps=8,stages=3' at batch 64 x "
                                                           "1024 d128: 160 + 276480 B of shared memory"),
            (["--build", "splits=32"], "build 'splits=32' at batch 64 x 1024 d128: "),
            (["--build", "splits=2", "--batch", "8"], "--batch: given twice (64, then 8): give it once"),
            ([], "the following arguments are required: --build")):
        assert cli.main(call + args) == 2
        err = capsys.readouterr().err
        assert message in err and "Traceback" not in err and err.count("\n") == 1, err


def test_render_shows_extra_columns_whole():
    row = {"batch": 64, "kv_len": 1024, "head_dim": 128, "heads": "32/8", "splits": 1, "kernel": "mma w8s2 P (1/SM)",
           "mode": "cold", "kv_MB": 268.4, "p50_us": 78.3, "TBps": 3.43, "heuristic": False,
           "build": "persistent=1,warps=8,stages=2", "vs_plan": "+1.09%"}
    text = render([row], "compare", extra=("build", "vs_plan"))
    assert "persistent=1,warps=8,stages=2" in text and "+1.09%" in text and "mma w8s2 P (1/SM)" in text


def test_compare_cli_prints_the_table_and_keeps_a_report_that_reads_back(monkeypatch, tmp_path, capsys):
    """The CLI over faked measurements (the GPU half, compare_builds, runs in tests/gpu): the table, then a decode
    report whose row is the plan's call and whose sweep holds every build."""
    import labkit.probes
    from labkit.workloads.decode import report

    _fake_h200(monkeypatch)
    monkeypatch.setattr(bench, "check_once", lambda: 1e-3)
    copy_modes, modes = [], []
    monkeypatch.setattr(labkit.probes, "copy_bandwidth", lambda n, **kw: copy_modes.append(kw["mode"]) or {
        "memcpy": {"GBps_read_plus_write": 4220.0}})

    planned = []
    monkeypatch.setattr(compare, "plan_builds", lambda *a, **k: planned.append(plan_builds(*a, **k)) or planned[-1])

    def fake_compare(b, n, d, builds, **kw):
        knobs = kw["planned"]  # the CLI's own plan, refused or not before the reference check: not planned twice
        assert knobs is planned[-1] and list(knobs) == ["plan", "persistent=1,warps=8,stages=2"]
        modes.append(kw["mode"])
        mb = 4 * b * n * 8 * d / 1e6  # the K and V a call reads (the reader checks it)
        return [{"batch": b, "kv_len": n, "head_dim": d, "heads": "32/8", "splits": 1, "kernel": label,
                 "mode": kw["mode"], "kv_MB": mb, "p50_us": us, "TBps": mb / us, "heuristic": name == "plan",
                 "build": name, "ctas_per_sm": per_sm, "vs_plan": us / 77.1 - 1, "max_diff": diff,
                 "bit_equal": diff == 0}
                for (name, _), (label, per_sm, us, diff) in zip(knobs.items(), [("mma w4s1c1", 4, 77.1, 0.0),
                                                                                ("mma w8s2 P", 1, 78.6, 9.8e-4)])]

    monkeypatch.setattr(compare, "compare_builds", fake_compare)
    out = tmp_path / "compare.json"
    assert cli.main(["decode", "compare", "--batch", "64", "--kv-len", "1024", "--build",
                     "persistent=1,warps=8,stages=2", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert len(planned) == 1
    assert "compare, batch 64 x 1024, d128" in printed and "+1.95%" in printed and "mma w8s2 P (1/SM)" in printed
    r = report.load(out)
    assert [p.kernel for p in r.points] == ["mma w4s1c1"]
    assert [(p.kernel, p.heuristic, p.build) for p in r.split_sweeps["64x1024 d128 compare"]] == [
        ("mma w4s1c1", True, "plan"), ("mma w8s2 P", False, "persistent=1,warps=8,stages=2")]
    # `labkit report show` lists the builds, each against the plan
    assert cli.main(["report", "show", str(out)]) == 0
    shown = capsys.readouterr().out
    assert "sweep 64x1024 d128 compare (* the plan's call; time vs plan: + is slower):" in shown
    kv_mb = 4 * 64 * 1024 * 8 * 128 / 1e6
    assert f"*       1  mma w4s1c1   77.10  {kv_mb / 77.1:.2f}        +0.00%  plan\n" in shown
    assert f"        1  mma w8s2 P   78.60  {kv_mb / 78.6:.2f}        +1.95%  persistent=1,warps=8,stages=2\n" in shown
    # --mode cold_clean: the builds' rounds and the copy ceiling both timed with L2 left clean, and the title says so
    clean = tmp_path / "clean.json"
    assert cli.main(["decode", "compare", "--batch", "64", "--kv-len", "1024", "--build",
                     "persistent=1,warps=8,stages=2", "--mode", "cold_clean", "--out", str(clean)]) == 0
    assert modes == copy_modes == ["cold", "cold_clean"]
    assert "(cold L2 (flushed, then left clean), p50; vs_plan" in capsys.readouterr().out
    assert [p.mode for p in report.load(clean).points] == ["cold_clean"]


class _Stats:
    def __init__(self, p50_s):
        self.stats = type("S", (), {"p50_s": p50_s})()


def _fake_time_builds(outputs: dict, p50_us: dict):
    """compare_builds' GPU half: the given outputs go through compare's own check, as the real one's do."""
    def run(batch, kv_len, head_dim, knobs, shape, iterations, check, *, what, mode="cold"):
        from labkit.workloads.decode.plan import plan_call
        from labkit.workloads.decode.run import geometry_for

        outs = {name: outputs[name] for name in knobs}
        check(outs)
        g = geometry_for(batch, kv_len, head_dim=head_dim, **shape)
        return ({n: plan_call(g, **kw) for n, kw in knobs.items()}, {n: _Stats(p50_us[n] * 1e-6) for n in knobs},
                outs)
    return run


def test_compare_builds_checks_each_output_against_the_plans(monkeypatch):
    import numpy as np

    _fake_h200(monkeypatch)
    rng = np.random.default_rng(0)
    plan = rng.standard_normal((64 * 8, 4, 128)).astype(np.float32)
    near = plan + np.float32(2.0 ** -9)
    builds = (parse_build("splits=2"), parse_build("persistent=1"))
    times = {"plan": 77.0, "splits=2": 80.85, "persistent=1": 77.0}
    monkeypatch.setattr(bench, "time_builds", _fake_time_builds(
        {"plan": plan, "splits=2": near, "persistent=1": plan.copy()}, times))
    rows = compare.compare_builds(64, 1024, 128, builds)
    assert [r["build"] for r in rows] == ["plan", "splits=2", "persistent=1"]
    assert [r["heuristic"] for r in rows] == [True, False, False]
    assert [r["bit_equal"] for r in rows] == [True, False, True]
    assert rows[0]["max_diff"] == 0 and rows[1]["max_diff"] == pytest.approx(2.0 ** -9, rel=1e-3)
    assert rows[1]["vs_plan"] == pytest.approx(0.05) and rows[1]["splits"] == 2 and rows[2]["kernel"].endswith(" P")
    far = plan.copy()
    far[3, 1, 7] += 0.05 * np.abs(plan).max()
    unwritten = plan.copy()
    unwritten[-1] = np.nan
    for outs, message in (({"plan": plan, "splits=2": far, "persistent=1": plan},
                           r"build 'splits=2' does not give the plan's output \(max difference"),
                          ({"plan": plan, "splits=2": plan, "persistent=1": unwritten},
                           r"build 'persistent=1' does not give the plan's output \(max difference nan"),
                          ({"plan": unwritten, "splits=2": plan, "persistent=1": plan},
                           "the plan's own output has 512 values that are not finite")):
        monkeypatch.setattr(bench, "time_builds", _fake_time_builds(outs, times))
        with pytest.raises(AssertionError, match=message):
            compare.compare_builds(64, 1024, 128, builds)


def test_compare_cli_table_shows_each_builds_call_its_time_and_rate(monkeypatch, capsys):
    """The printed table is each build's call as decode bench prints it (batch, kv_len, p50_us, TBps), then the
    build and how it stands against the plan; the plan is said by its build column, not by a heuristic column."""
    _fake_h200(monkeypatch)
    monkeypatch.setattr(bench, "check_once", lambda: 1e-3)
    rows = [{"batch": 64, "kv_len": 1024, "head_dim": 128, "heads": "32/8", "splits": 1, "kernel": label,
             "mode": "cold", "kv_MB": 268.4, "p50_us": us, "TBps": 268.4 / us, "heuristic": name == "plan",
             "build": name, "ctas_per_sm": per_sm, "vs_plan": us / 77.1 - 1, "max_diff": diff, "bit_equal": diff == 0}
            for name, label, per_sm, us, diff in (("plan", "mma w4s1c1", 4, 77.1, 0.0),
                                                  ("splits=2", "mma w4s1c1", 4, 80.0, 9.8e-4))]
    monkeypatch.setattr(compare, "compare_builds", lambda *a, **k: rows)
    assert cli.main(["decode", "compare", "--batch", "64", "--kv-len", "1024", "--build", "splits=2"]) == 0
    lines = capsys.readouterr().out.splitlines()
    head = next(i for i, line in enumerate(lines) if line.startswith("compare, batch 64 x 1024, d128"))
    assert lines[head + 1].split() == ["batch", "kv_len", "head_dim", "heads", "splits", "kernel", "mode", "kv_MB",
                                       "p50_us", "TBps", "build", "vs_plan", "max_diff", "bit_equal"]
    assert lines[head + 3].split() == ["64", "1024", "128", "32/8", "1", "mma", "w4s1c1", "(4/SM)", "cold", "268.40",
                                       "80.00", "3.35", "splits=2", "+3.76%", "0.00098", "False"]


def test_a_peer_error_of_several_lines_stays_on_its_row():
    """Left open by a notebook review: reports now keep a peer's whole error, and its first 12 characters in the
    bench's table could hold a newline that broke the row in two."""
    row = {"batch": 1, "kv_len": 8192, "head_dim": 128, "heads": "32/8", "splits": 8, "kernel": "mma w8s3ef cl8 pp",
           "mode": "cold", "kv_MB": 33.554432, "p50_us": 17.5, "TBps": 33.554432 / 17.5,
           "flex_paged": "Err:\nInductorError: SubprocException"}
    lines = render([row], "t").splitlines()
    assert len(lines) == 3 and lines[2].rstrip().endswith("Err: Inducto"), lines
