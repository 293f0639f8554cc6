"""Under the real ncu on a GPU: a small case plan timed and profiled end to end (what notebook 05 does at the
seed shape), and `labkit ncu run -- <labkit command>`. Skips without a GPU, or when ncu cannot profile here."""

import subprocess
import sys

import pytest

from labkit.ncu import available, study, tables

from ..conftest import ROOT

pytestmark = pytest.mark.gpu


@pytest.fixture(scope="module")
def ncu_ready():
    ok, why = available()
    if not ok:
        pytest.skip(why)


@pytest.fixture(scope="module")
def small(ncu_ready, tmp_path_factory):
    plan = study.plan([1, 4096, 8, 128], [4000], [4001], [1, 8], [1024])
    return plan, study.measure(plan, out_dir=tmp_path_factory.mktemp("nb05"), iterations=5,
                               sections=("SpeedOfLight", "LaunchStats", "Occupancy", "WorkloadDistribution"))


def test_every_case_is_timed_and_profiled_once(small):
    plan, s = small
    assert set(s.timings) == set(plan.names)
    assert sorted(r["case"] for r in s.counters) == sorted(plan.names)  # the NVTX and kernel filters hold
    assert {r["kernel"] for r in s.counters if r["case"].startswith("sage2")} == {"attn_fwd"}
    assert all(r["duration_ns"] > 0 and r["dram_read_bytes"] is not None for r in s.counters)
    assert all(v["bytes"] < study.REPORT_LIMIT for v in s.reports.values())
    gaps = tables.event_vs_ncu(s)
    assert gaps["gap"].abs().max() < 0.5, gaps  # same kernels: not wildly apart (the 1 % check is the notebook's)


def test_wave_model_matches_ncu_waves(small):
    eff = tables.efficiency_table(small[1])
    assert (abs(eff["labkit_waves"] - eff["ncu_waves"].astype(float)) < 0.01).all(), eff


def test_sage2_phases_from_two_runs(small):
    att = next(a for a in small[1].attributions if a.case == "sage2_seed")
    assert att.skipped is None and len(att.runs) == 2
    shares = tables.phase_table(small[1], "sage2_seed")
    assert set(att.markers) <= set(shares.index) and abs(shares["share_run1_pct"].sum() - 100) < 1e-7
    assert shares.loc[list(att.markers), "share_run1_pct"].sum() > 90  # the markers cover the kernel's samples


def test_cli_profiles_a_labkit_command(ncu_ready, tmp_path):
    spec = study.plan([1, 2048, 4, 128], [], [], [1], [1024]).save(tmp_path / "cases.json")
    out = subprocess.run([sys.executable, "-m", "labkit", "ncu", "run", "--out", str(tmp_path / "rep"), "--range",
                          "ncu", "--preset", "timing", "--", sys.executable, "-m", "labkit", "ncu", "cases", str(spec)],
                         capture_output=True, text=True, cwd=ROOT, timeout=600)
    assert out.returncode == 0, out.stderr[-2000:]
    assert "attn_fwd" in out.stdout and "paged_decode" in out.stdout and "ncu/sage2_seed" in out.stdout
    assert "==PROF==" in out.stderr
