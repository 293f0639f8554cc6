"""The fixed part and streaming rate fitted over a decode report's calls: recovered from calls made to lie on a line,
checked against numpy's least squares on a recorded H200 report, and printed by `report show`."""

import json

import numpy as np
import pytest

from labkit import cli
from labkit.workloads.decode import report
from labkit.workloads.decode.cost_fit import MIN_FIT_MB, fit_costs, format_fits, to_frame

from ..conftest import ROOT

RECORDED = ROOT / "data/runs/20261204T185600Z-decode_bench_targets/sweep.json"  # the README table's H200 run


def _rows(calls, *, fixed_us, TBps, head_dim=128, mode="cold", wobble=()):
    """Rows of 32/8 heads whose p50 is ``fixed_us + kv_MB / TBps`` times (1 + the call's wobble)."""
    rows = []
    for i, (batch, kv_len) in enumerate(calls):
        mb = 2 * batch * kv_len * 8 * head_dim * 2 / 1e6
        p50 = (fixed_us + mb / TBps) * (1 + (wobble[i] if wobble else 0.0))
        rows.append({"batch": batch, "kv_len": kv_len, "head_dim": head_dim, "heads": "32/8", "splits": 1,
                     "kernel": "mma w4s1c1", "mode": mode, "kv_MB": mb, "p50_us": p50, "TBps": mb / p50})
    return rows


def _report(tmp_path, rows):
    prov = json.loads(RECORDED.read_text())["provenance"]
    return report.load(report.write(rows, {}, 4250.0, prov, tmp_path / "r.json"))


def test_calls_on_a_line_give_back_its_fixed_part_and_rate(tmp_path):
    calls = [(64, 1024), (8, 8192), (64, 8192), (256, 8192)]
    rng = np.random.default_rng()
    fixed, rate = rng.uniform(5, 30), rng.uniform(2.5, 5.0)  # fresh each run
    r = _report(tmp_path, _rows(calls, fixed_us=fixed, TBps=rate)
                + _rows([(1, 1024), (2, 1024)], fixed_us=3 * fixed, TBps=rate / 2)  # under 100 MB: left out
                + _rows([(64, 1024), (64, 8192)], fixed_us=fixed, TBps=rate, head_dim=256))  # two calls: no fit
    (fit,) = fit_costs(r)
    assert (fit.head_dim, fit.heads, fit.mode, fit.calls) == (128, "32/8", "cold", 4)
    assert fit.fixed_us == pytest.approx(fixed, rel=1e-3) and fit.TBps == pytest.approx(rate, rel=1e-6)
    assert abs(fit.residual_min) < 1e-4 and abs(fit.residual_max) < 1e-4
    assert (fit.smallest, fit.largest) == ("64 x 1k d128", "256 x 8k d128")
    small_mb = 2 * 64 * 1024 * 8 * 128 * 2 / 1e6
    assert fit.smallest_fixed_share == pytest.approx(fixed / (fixed + small_mb / rate), rel=1e-3)
    assert len(to_frame(fit_costs(r))) == 1


@pytest.mark.parametrize("fixed_us, wobble", [
    (-50.0, ()),  # a fixed part under zero
    (10.0, (5.0, 0.0, -0.8)),  # 385, 547 and 431 us for 268 MB, 2.1 and 8.6 GB: more bytes, no more time
])
def test_calls_one_line_does_not_hold_give_no_fit(tmp_path, fixed_us, wobble):
    rows = _rows([(64, 1024), (64, 8192), (256, 8192)], fixed_us=fixed_us, TBps=4.0, wobble=wobble)
    r = _report(tmp_path, rows)
    assert fit_costs(r) == () and format_fits(r) == []


def test_a_recorded_report_fits_as_numpys_least_squares_and_report_show_prints_it(capsys):
    r = report.load(RECORDED)
    fits = {(f.head_dim, f.mode): f for f in fit_costs(r)}
    for head_dim in (128, 256):
        pts = [p for p in r.points if p.head_dim == head_dim and p.heads == "32/8" and p.mode == "cold"
               and p.kv_MB >= MIN_FIT_MB]
        slope, intercept = np.polyfit([p.kv_MB for p in pts], [p.p50_us for p in pts], 1)
        f = fits[head_dim, "cold"]
        assert f.calls == len(pts) >= 6
        assert f.fixed_us == pytest.approx(intercept, rel=1e-9) and f.TBps == pytest.approx(1 / slope, rel=1e-9)
    assert cli.main(["report", "show", str(RECORDED)]) == 0
    out = capsys.readouterr().out
    f = fits[128, "cold"]
    assert (f"  d128, 32/8 heads, cold: {f.fixed_us:.1f} us + bytes / {f.TBps:.2f} TB/s over {f.calls} calls (each "
            f"within {f.residual_min:+.1%} to {f.residual_max:+.1%}); the fixed part is ") in out
    # before the targets, which stay last
    assert out.index("time per call, fitted") < out.index("issue #10's targets")
