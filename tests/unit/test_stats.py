import numpy as np
import pytest

from labkit.report import load
from labkit.timing.stats import STAT_FIELDS, Spread, Stats


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


@pytest.mark.parametrize("bad", [[], [1.0, float("nan")], [[1.0, 2.0]]])
def test_stats_reject_bad_samples(bad):
    with pytest.raises(ValueError):
        Stats.from_samples(bad)


def test_spread():
    x = np.array([1.0, 2.0, 3.0, 4.0])
    sp = Spread.from_samples(x)
    assert sp.std_s == pytest.approx(np.std(x, ddof=1))
    assert sp.iqr_s == pytest.approx(np.percentile(x, 75) - np.percentile(x, 25))
    assert sp.ci95_s == pytest.approx(1.96 * np.std(x, ddof=1) / 2)
