"""The fixed part and streaming rate fitted over a decode report's calls: recovered from calls made to lie on a line,
checked against numpy's least squares on a recorded H200 report, and printed by `report show`."""

import json

import numpy as np
import pytest

from labkit import cli
from labkit.workloads.decode import report
from labkit.workloads.decode.cost_fit import MIN_FIT_MB, fit_costs, format_fits, to_frame

from ..conftest import ROOT, as_read

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


def _with_peers(rows, cudnn, flash_wobble):
    """``rows`` with cuDNN on its own line (fixed_us, TBps), flash off any line by ``flash_wobble``, FA3 not run at the
    first call, labkit in the peers' rounds as timed alone; x_best_peer as the bench writes it."""
    for i, row in enumerate(rows):
        t_cudnn = cudnn[0] + row["kv_MB"] / cudnn[1]
        t_flash = row["p50_us"] * (1 + flash_wobble[i])
        peers = {"sdpa_cudnn": row["kv_MB"] / t_cudnn, "sdpa_flash": row["kv_MB"] / t_flash,
                 "fa3": "fa3_fwd: not importable (test)" if i == 0 else row["TBps"] * 0.9}
        row.update(peers, labkit_beside_peers=row["TBps"],
                   x_best_peer=row["TBps"] / max(v for v in peers.values() if isinstance(v, float)))
    return rows


def test_calls_on_a_line_give_back_its_fixed_part_and_rate(tmp_path):
    calls = [(64, 1024), (8, 8192), (64, 8192), (256, 8192)]
    rng = np.random.default_rng()
    fixed, rate = rng.uniform(5, 30), rng.uniform(2.5, 5.0)  # fresh each run
    cudnn = (rng.uniform(5, 30), rng.uniform(2.5, 5.0))
    r = _report(tmp_path, _with_peers(_rows(calls, fixed_us=fixed, TBps=rate), cudnn, (9.0, 5.0, 0.0, -0.8))
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
    # each peer timed at every call fitted the same way; FA3, text at one call, is not; flash's times hold no line
    (name, c_fixed, c_rate, c_worst), (beside, *line) = fit.peers
    assert (name, beside) == ("sdpa_cudnn", "labkit_beside_peers") and fit.peers_unfit == ("sdpa_flash",)
    assert (c_fixed, c_rate) == pytest.approx(cudnn, rel=1e-6) and c_worst < 1e-6
    assert line == pytest.approx([fixed, rate, 0], rel=1e-6, abs=1e-6)
    assert format_fits(r)[2] == (f"    the same fit of the peers' times at these calls: sdpa_cudnn {c_fixed:.1f} us + "
                                 f"bytes / {c_rate:.2f} TB/s (within 0.0%); labkit in their rounds {fixed:.1f} us + "
                                 f"bytes / {rate:.2f} TB/s (within 0.0%); sdpa_flash: no line holds its times")


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
    assert out.index("time per call, fitted") < out.index("decode targets, issue #10")


def _table(calls, fixed_us, TBps):
    import pandas as pd

    mb = [2 * b * n * 8 * 128 * 2 / 1e6 for b, n in calls]
    return pd.DataFrame({"batch": [b for b, _ in calls], "kv_len": [n for _, n in calls], "head_dim": 128, "kv_MB": mb,
                         "p50_us": [fixed_us + m / TBps for m in mb], "TBps": [m / (fixed_us + m / TBps) for m in mb]})


def test_notebook_03s_fit_recovers_a_line_and_says_when_there_is_none():
    from labkit.workloads.decode import study

    rng = np.random.default_rng()
    fixed, rate = rng.uniform(5, 30), rng.uniform(2.5, 5.0)
    fit, line = study.bandwidth_fit(_table([(1, 1024), (8, 8192), (64, 1024), (64, 8192)], fixed, rate))
    assert fit == pytest.approx((fixed, rate), rel=1e-6)
    assert line.startswith(f"time per call, fitted over the calls of 100 MB or more: {fixed:.1f} us + bytes / "
                           f"{rate:.2f} TB/s over 3 calls (each within ")  # 1 x 1k reads 4 MB: left out
    # three calls leave the line one degree of freedom: printed like eight, it read as well tested (a review)
    assert ", though 3 calls test one line little); " in line
    assert line.endswith(f"the fixed part is {fixed / (fixed + 268.435456 / rate):.0%} of 8 x 8k d128 and "
                         f"{fixed / (fixed + 2147.483648 / rate):.1%} of 64 x 8k d128")
    fit, line = study.bandwidth_fit(_table([(1, 1024), (64, 1024), (64, 8192)], fixed, rate))
    assert fit is None and line == "no fit: 2 calls of 100 MB or more (3 needed)"


def test_the_bandwidth_figure_draws_the_fit_as_the_rate_calls_reach():
    import matplotlib

    matplotlib.use("Agg")
    from labkit.plot import decode_bandwidth

    rows = _table([(8, 8192), (64, 1024), (64, 8192), (256, 8192)], 17.4, 4.53).to_dict("records")
    fig = decode_bandwidth(rows, 4.2, fit=(17.4, 4.53))
    (curve,) = [ln for ln in fig.axes[0].lines if ln.get_label().startswith("fit from 100 MB")]
    assert curve.get_label() == "fit from 100 MB: 17.4 us + bytes / 4.53 TB/s"
    x, y = curve.get_data()
    assert x[0] == pytest.approx(100) and x[-1] == pytest.approx(max(r["kv_MB"] for r in rows))
    assert y == pytest.approx([m / (17.4 + m / 4.53) for m in x])
    for r in rows:  # the calls lie on it, as they were made to
        assert np.interp(np.log(r["kv_MB"]), np.log(x), y) == pytest.approx(r["TBps"], rel=2e-3)
    assert not [ln for ln in decode_bandwidth(rows, 4.2).axes[0].lines if ln.get_label().startswith("fit")]


def test_notebook_03_recorded_prints_the_fit_of_its_own_table(capsys):
    import pandas as pd

    from labkit.workloads.decode import study

    from ..conftest import execute_notebook_source

    ns = execute_notebook_source(ROOT / "notebooks" / "03_decode.py", {"source": "recorded"})
    recorded = pd.read_csv(ns["session"].recorded.path / "data" / "bandwidth.csv")
    fit, line = study.bandwidth_fit(recorded)
    assert fit is not None and ns["fit"] == pytest.approx(fit)
    assert line.startswith("time per call, fitted over the calls of 100 MB or more: ") and " over 8 calls " in line
    assert "test one line little" not in line
    assert as_read(line) in as_read(capsys.readouterr().out)


def test_a_bench_of_two_variants_fits_each_kernel_on_its_own(tmp_path):
    # `decode bench --variant mma --variant fma` times every call twice, one row per kernel variant: one line through
    # both would be neither kernel's fixed part nor its rate
    calls = [(64, 1024), (8, 8192), (64, 8192), (256, 8192)]
    fma = [{**row, "kernel": "fma r4s2"} for row in _rows(calls, fixed_us=40.0, TBps=2.0)]
    r = _report(tmp_path, _rows(calls, fixed_us=17.0, TBps=4.5) + fma)
    fits = {f.variant: f for f in fit_costs(r)}
    assert sorted(fits) == ["fma", "mma"] and all(f.calls == 4 for f in fits.values())
    assert (fits["mma"].fixed_us, fits["mma"].TBps) == pytest.approx((17.0, 4.5), rel=1e-6)
    assert (fits["fma"].fixed_us, fits["fma"].TBps) == pytest.approx((40.0, 2.0), rel=1e-6)
    lines = format_fits(r)
    assert lines[1].startswith("  d128, 32/8 heads, cold, fma: 40.0 us + bytes / 2.00 TB/s over 4 calls")
    assert lines[2].startswith("  d128, 32/8 heads, cold, mma: 17.0 us + bytes / 4.50 TB/s over 4 calls")
