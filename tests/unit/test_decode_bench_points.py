"""`labkit decode bench --point BxN`: the calls a user names, at the geometry they give, instead of the issue's sweep;
bad input refused in one line before anything runs on a GPU."""

import json
import re
from pathlib import Path

import pytest

from labkit import cli
from labkit.errors import ArgumentError
from labkit.workloads.decode import bench, report
from labkit.workloads.decode.bench import check_points, parse_point

ROOT = Path(__file__).resolve().parents[2]
RECORDED_PROVENANCE = json.loads(sorted((ROOT / "data" / "runs").glob("*-decode_bench/bench.json"))[-1].read_text()
                                 )["provenance"]


def test_parse_point_reads_batch_by_kv_len_and_names_what_was_expected():
    assert parse_point("64x1024") == (64, 1024) and parse_point(" 1x8192 ") == (1, 8192)
    # as the tables print it (a CLI review: '64x8k' was refused where the output says '64 x 8k')
    assert parse_point("64x8k") == (64, 8192) and parse_point("1x32K") == (1, 32768)
    for spec, message in (("64", "point '64': expected BATCHxKV_LEN, e.g. 64x1024 or 64x8k"),
                          ("64x", "point '64x': kv_len '': expected an integer"),
                          ("0x1024", "point '0x1024': batch 0: expected 1..2147483647"),
                          ("8xk", "point '8xk': kv_len 'k': expected an integer, or whole 1024s such as 8k"),
                          ("8x0k", "point '8x0k': kv_len in k (1024) 0: expected 1..2097151"),
                          ("8xkk", "point '8xkk': kv_len 'kk': expected an integer, or whole 1024s such as 8k")):
        with pytest.raises(ArgumentError, match="^" + re.escape(message)):
            parse_point(spec)


def test_check_points_refuses_a_call_the_bench_cannot_run():
    assert check_points([(64, 1024), (1, 8192)], 256, heads_q=24, heads_kv=4) == [(64, 1024, 256), (1, 8192, 256)]
    with pytest.raises(ArgumentError, match=re.escape("point 1x99999999 d128: 409.6 GB of K/V per call; the bench "
                                                      "takes at most 9 GB")):
        check_points([(1, 99999999)], 128)
    with pytest.raises(ArgumentError, match="point 8x1024 given twice"):
        check_points([(8, 1024), (8, 1024)], 128)
    with pytest.raises(ArgumentError, match="page_size 48: expected one of 16, 32, 64"):
        check_points([(8, 1024)], 128, page_size=48)


def test_bench_refuses_bad_points_in_one_line_before_any_gpu_work(monkeypatch, capsys):
    monkeypatch.setattr(bench, "check_once", lambda: pytest.fail("a kernel ran before the input was checked"))
    monkeypatch.setattr(bench, "bench_point", lambda *a, **k: pytest.fail("a call was timed before the input was "
                                                                          "checked"))
    for args, message in (
            (["--point", "64x"], "--point: point '64x': kv_len '': expected an integer"),
            (["--point", "64x1024", "--head-dim", "100"], "head_dim 100: the decode kernel takes 128, 256"),
            (["--point", "8x1024", "--heads-q", "30"], "heads_q 30 is not a multiple of heads_kv 8"),
            (["--point", "1x99999999"], "point 1x99999999 d128: 409.6 GB of K/V per call"),
            (["--point", "8x1024", "--point", "8x1024"], "point 8x1024 given twice"),
            (["--point", "8x1024", "--quick"], "--point and --quick"),
            (["--head-dim", "256", "--page-size", "16"], "--head-dim, --page-size: they apply to the --point calls; "
                                                         "without --point the bench runs its default sweep")):
        assert cli.main(["decode", "bench", *args]) == 2
        err = capsys.readouterr().err
        assert message in err and "Traceback" not in err and err.count("\n") == 1, err


def test_bench_times_the_named_calls_at_their_geometry_and_keeps_a_report(monkeypatch, tmp_path, capsys):
    """Two --point calls at 64/8 heads, head_dim 256, page 16: each timed at that geometry (the rows from the bench's
    own row builder, over a CPU plan), the peers asked for the same geometry, no seed-sized call, split sweeps at the
    named calls; the report reads back and names the page size."""
    from labkit import probes, provenance
    from labkit.workloads.decode import peers
    from labkit.workloads.decode.plan import plan_call
    from labkit.workloads.decode.run import geometry_for

    timed, asked, swept = [], [], []

    def row(batch, kv_len, head_dim, *, heads_q=32, heads_kv=8, page_size=64, splits=None, mode="cold"):
        g = geometry_for(batch, kv_len, head_dim=head_dim, heads_q=heads_q, heads_kv=heads_kv, page_size=page_size)
        plan = plan_call(g, splits=splits)
        return bench.call_row(batch, kv_len, head_dim, heads_q, heads_kv, plan, 1e-6 * batch * kv_len / 512, mode,
                          page_size)

    def fake_point(batch, kv_len, head_dim, *, heads_q=32, heads_kv=8, page_size=64, mode="cold", iterations=20, **kw):
        timed.append((batch, kv_len, head_dim, heads_q, heads_kv, page_size, mode))
        return row(batch, kv_len, head_dim, heads_q=heads_q, heads_kv=heads_kv, page_size=page_size, mode=mode)

    def fake_peers(batch, kv_len, head_dim, **kw):
        asked.append((batch, kv_len, head_dim, kw["heads_q"], kw["heads_kv"], kw["page_size"]))
        return {"sdpa_cudnn": 1.0, "sdpa_flash": 0.5, "fa3": "not importable", "labkit_beside_peers": 1.1}

    def fake_sweep(b, n, d, **kw):
        swept.append((b, n, d, kw["heads_q"], kw["heads_kv"], kw["page_size"]))
        return [{**row(b, n, d, heads_q=kw["heads_q"], heads_kv=kw["heads_kv"], page_size=kw["page_size"], splits=s),
                 "heuristic": s == 1} for s in (1, 2)]

    monkeypatch.setattr(bench, "check_once", lambda: 1e-3)
    monkeypatch.setattr(bench, "bench_point", fake_point)
    monkeypatch.setattr(bench, "split_sweep", fake_sweep)
    monkeypatch.setattr(peers, "peer_rates", fake_peers)
    monkeypatch.setattr(probes, "copy_bandwidth", lambda n, **kw: {"memcpy": {"GBps_read_plus_write": 4250.0}})
    monkeypatch.setattr(provenance, "collect", lambda **kw: RECORDED_PROVENANCE)
    out = tmp_path / "points.json"
    assert cli.main(["decode", "bench", "--point", "4x2048", "--point", "32x1024", "--heads-q", "64", "--heads-kv", "8",
                     "--head-dim", "256", "--page-size", "16", "--peers", "--sweep-splits", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert timed == [(4, 2048, 256, 64, 8, 16, "cold"), (32, 1024, 256, 64, 8, 16, "cold")]  # no seed-sized call
    assert asked == [(4, 2048, 256, 64, 8, 16), (32, 1024, 256, 64, 8, 16)]
    assert swept == [(4, 2048, 256, 64, 8, 16), (32, 1024, 256, 64, 8, 16)]
    assert "paged decode, page 16, cold L2" in printed and "64/8 page 16" in printed
    assert "peer fa3: not importable" in printed
    r = report.load(out)
    assert [(p.batch, p.kv_len, p.head_dim, p.heads) for p in r.points] == [(4, 2048, 256, "64/8 page 16"),
                                                                              (32, 1024, 256, "64/8 page 16")]
    assert r.points[0].x_best_peer == pytest.approx(1.1) and sorted(r.split_sweeps) == ["32x1024 d256", "4x2048 d256"]


def test_bench_times_every_call_in_the_cold_mode_asked_for(monkeypatch, tmp_path, capsys):
    """--mode cold_clean: the calls, the peers' rounds, the split sweeps and the seed-sized call's cold row all time
    with L2 left clean (the seed call's graph replay stays warm), the title and the provenance say so, the report
    keeps the mode per row; a mode the bench does not take is one line before any GPU work."""
    from labkit import probes, provenance
    from labkit.workloads.decode import peers
    from labkit.workloads.decode.plan import plan_call
    from labkit.workloads.decode.run import geometry_for

    modes = {"point": [], "peers": [], "sweep": [], "tails": [], "copy": [], "provenance": []}

    def row(batch, kv_len, head_dim, mode, heads_q=32, heads_kv=8):
        plan = plan_call(geometry_for(batch, kv_len, head_dim=head_dim, heads_q=heads_q, heads_kv=heads_kv))
        return bench.call_row(batch, kv_len, head_dim, heads_q, heads_kv, plan, 1e-6 * batch * kv_len / 512, mode)

    def fake_point(batch, kv_len, head_dim, *, mode="cold", heads_q=32, heads_kv=8, **kw):
        modes["point"].append(mode)
        return row(batch, kv_len, head_dim, mode, heads_q, heads_kv)

    def fake_peers(batch, kv_len, head_dim, **kw):
        modes["peers"].append(kw["mode"])
        return {"sdpa_cudnn": 1.0, "labkit_beside_peers": 1.1}

    def fake_sweep(b, n, d, **kw):
        modes["sweep"].append(kw["mode"])
        return [{**row(b, n, d, kw["mode"]), "heuristic": True}]

    def fake_tails(b, n, d, **kw):  # its timelines' call too: bench.tail_sweep passes the mode to decode_timeline
        modes["tails"].append(kw["mode"])
        return bench.TailSweep([{**row(b, n, d, kw["mode"]), "heuristic": True}], {})

    monkeypatch.setattr(bench, "check_once", lambda: 1e-3)
    monkeypatch.setattr(bench, "bench_point", fake_point)
    monkeypatch.setattr(bench, "split_sweep", fake_sweep)
    monkeypatch.setattr(bench, "tail_sweep", fake_tails)
    monkeypatch.setattr(peers, "peer_rates", fake_peers)
    monkeypatch.setattr(probes, "copy_bandwidth", lambda n, **kw: modes["copy"].append(kw["mode"]) or {
        "memcpy": {"GBps_read_plus_write": 4250.0}})
    monkeypatch.setattr(provenance, "collect", lambda **kw: modes["provenance"].append(kw) or RECORDED_PROVENANCE)
    out = tmp_path / "clean.json"
    assert cli.main(["decode", "bench", "--quick", "--mode", "cold_clean", "--peers", "--sweep-splits",
                     "--sweep-tails", "--out", str(out)]) == 0
    assert modes == {"point": ["cold_clean"] * 4 + ["graph"], "peers": ["cold_clean"] * 3,
                     "sweep": ["cold_clean"] * 4, "tails": ["cold_clean"] * 3, "copy": ["cold_clean"],
                     "provenance": [{"timing_mode": "cold_clean"}]}
    assert "paged decode, page 64, cold L2 (flushed, then left clean)" in capsys.readouterr().out
    assert [p.mode for p in report.load(out).points] == ["cold_clean"] * 4 + ["graph"]
    monkeypatch.setattr(bench, "bench_point", lambda *a, **k: pytest.fail("a call was timed with a bad mode"))
    assert cli.main(["decode", "bench", "--quick", "--mode", "hot"]) == 2
    err = capsys.readouterr().err
    assert "--mode: invalid choice: 'hot'" in err and "cold_clean" in err  # the choices' quoting varies
    assert "Traceback" not in err and err.count("\n") == 1, err


def _fake_library_bench(monkeypatch):
    """The bench as a library call with its GPU parts faked: a call's rate from its size, a recorded provenance."""
    from labkit import probes, provenance
    from labkit.workloads.decode.plan import plan_call
    from labkit.workloads.decode.run import geometry_for

    def fake_point(batch, kv_len, head_dim, *, mode="cold", heads_q=32, heads_kv=8, **kw):
        plan = plan_call(geometry_for(batch, kv_len, head_dim=head_dim, heads_q=heads_q, heads_kv=heads_kv))
        return bench.call_row(batch, kv_len, head_dim, heads_q, heads_kv, plan, 1e-6 * batch * kv_len / 512, mode)

    monkeypatch.setattr(bench, "check_once", lambda: 1e-3)
    monkeypatch.setattr(bench, "bench_point", fake_point)
    monkeypatch.setattr(probes, "copy_bandwidth", lambda n, **kw: {"memcpy": {"GBps_read_plus_write": 4250.0}})
    monkeypatch.setattr(provenance, "collect", lambda **kw: RECORDED_PROVENANCE)


def test_a_notebook_runs_the_bench_as_a_library_call_and_gets_the_report(monkeypatch, tmp_path):
    """``bench_calls`` then ``run_bench``, without the CLI: the lines go to ``say`` (nothing printed), the report is
    the DecodeReport the file holds, and the issue's sweep ends with the seed-sized call, cold and in a graph."""
    from labkit.workloads.decode.bench_run import bench_calls, run_bench

    _fake_library_bench(monkeypatch)
    calls = bench_calls(quick=True, out=tmp_path / "r.json")
    assert calls.points == ((1, 8192, 128), (8, 8192, 128), (64, 8192, 128)) and not calls.named
    said: list[str] = []
    run = run_bench(calls, say=said.append)
    assert [(p.batch, p.kv_len, p.mode) for p in run.points] == [
        (1, 8192, "cold"), (8, 8192, "cold"), (64, 8192, "cold"), (2, 704, "cold"), (2, 704, "graph")]
    assert report.load(tmp_path / "r.json") == run and not (tmp_path / "r.json.partial").exists()
    assert said[0].startswith("check against the exact reference") and "[5] batch 2 x 704" in said[6]
    with pytest.raises(ArgumentError, match="--head-dim: it applies to the --point calls"):
        bench_calls(quick=True, head_dim=256)


def test_a_library_bench_without_options_is_the_issues_whole_sweep_under_the_byte_cap():
    """Found by mutation testing: ``bench_calls()`` with nothing given (a notebook's call) was not checked to be the
    issue's sweep, every call of it under ``MAX_KV_BYTES``, rather than --quick's three calls."""
    from labkit.workloads.decode.bench import MAX_KV_BYTES, SWEEP
    from labkit.workloads.decode.bench_run import bench_calls

    calls = bench_calls()
    assert not calls.named and set(calls.points) < set(SWEEP) and len(calls.points) == 20
    assert {(64, 8192, 128), (64, 32768, 128), (8, 32768, 256)} <= set(calls.points)  # 8.6 GB: the issue's largest
    assert (256, 32768, 128) not in calls.points and 2 * 256 * 32768 * 8 * 128 * 2 > MAX_KV_BYTES
    assert (calls.heads_q, calls.heads_kv, calls.page_size, calls.variants) == (32, 8, 64, (None,))


def test_a_bench_without_out_keeps_its_report_in_memory_only(monkeypatch, tmp_path):
    """Found by mutation testing: ``run_bench`` without ``out`` (a notebook that only wants the report) was never run:
    it returns the report and writes no file, partial or final."""
    from labkit.workloads.decode.bench_run import bench_calls, run_bench

    _fake_library_bench(monkeypatch)
    monkeypatch.chdir(tmp_path)
    run = run_bench(bench_calls(point=[(1, 8192)]), say=lambda line: None)
    assert [(p.batch, p.kv_len, p.mode) for p in run.points] == [(1, 8192, "cold")]
    assert list(tmp_path.iterdir()) == []


def test_a_variants_peers_the_issues_split_sweeps_and_tail_timelines_of_a_bench(monkeypatch, tmp_path):
    """Found by mutation testing: with --variant, each row's peers must be timed beside that variant's call (a peer
    round of the default build had passed); a row where no peer has a rate gets ``-`` as its ratio; --sweep-splits
    sweeps the issue's 1x8192, 8x8192 and 1x1024 calls and the seed's; --sweep-tails says how long SMs sat idle in us
    and saves each timeline beside --out."""
    from labkit import probes, provenance
    from labkit.sched import Timeline
    from labkit.workloads.decode import peers
    from labkit.workloads.decode.bench_run import bench_calls, run_bench
    from labkit.workloads.decode.plan import plan_call
    from labkit.workloads.decode.run import geometry_for

    asked, swept = [], []

    def row(batch, kv_len, head_dim, heads_q=32, heads_kv=8, variant=None, mode="cold"):
        plan = plan_call(geometry_for(batch, kv_len, head_dim=head_dim, heads_q=heads_q, heads_kv=heads_kv),
                         **({} if variant is None else {"variant": variant}))
        return bench.call_row(batch, kv_len, head_dim, heads_q, heads_kv, plan, 1e-6 * batch * kv_len / 512, mode)

    def fake_point(batch, kv_len, head_dim, *, heads_q=32, heads_kv=8, variant=None, mode="cold", **kw):
        return row(batch, kv_len, head_dim, heads_q, heads_kv, variant, mode)

    def fake_peers(batch, kv_len, head_dim, **kw):
        asked.append((batch, kw.get("variant", "the plan's")))
        return {"sdpa_cudnn": "not available (test)", "labkit_beside_peers": 1.1}

    def fake_sweep(b, n, d, *, heads_q, heads_kv, **kw):
        swept.append((b, n, d, heads_q, heads_kv) + ((kw["variant"],) if "variant" in kw else ()))
        return [{**row(b, n, d, heads_q, heads_kv, kw.get("variant")), "heuristic": True}]

    # two SMs: SM 0 runs CTAs to 3 us, SM 1 is idle after 1 us
    timeline = Timeline([(0, 0, 0, 1000, 0, 0), (1, 1, 0, 1000, 0, 0), (2, 0, 1000, 3000, 0, 0)], sms=2, ctas_per_sm=1)
    monkeypatch.setattr(bench, "check_once", lambda: 1e-3)
    monkeypatch.setattr(bench, "bench_point", fake_point)
    monkeypatch.setattr(bench, "split_sweep", fake_sweep)
    monkeypatch.setattr(bench, "tail_sweep", lambda b, n, d, **kw: bench.TailSweep(
        [{**row(b, n, d), "heuristic": True}], {"plan": timeline}))
    monkeypatch.setattr(peers, "peer_rates", fake_peers)
    monkeypatch.setattr(probes, "copy_bandwidth", lambda n, **kw: {"memcpy": {"GBps_read_plus_write": 4250.0}})
    monkeypatch.setattr(provenance, "collect", lambda **kw: RECORDED_PROVENANCE)
    out, said = tmp_path / "b.json", []
    calls = bench_calls(point=[(1, 8192)], variants=["fma", "mma"], peers=True, sweep_tails=True, out=out)
    run = run_bench(calls, say=said.append)
    assert asked == [(1, "fma"), (1, "mma")] and [p.x_best_peer for p in run.points] == [None, None]
    assert "peer sdpa_cudnn: not available (test)" in said
    assert "SMs idle before the end: median 1.0 us, 90th percentile 1.8 us" in said[-1]
    assert Timeline.load(tmp_path / "b.1x8192_d128_tails.plan.timeline.json").records.tolist() == \
        timeline.records.tolist()
    run_bench(bench_calls(quick=True, sweep_splits="some"), say=said.append)
    assert swept == [(1, 8192, 128, 32, 8), (8, 8192, 128, 32, 8), (1, 1024, 128, 32, 8), (2, 704, 256, 24, 4)]
    # found by a review: with --variant the split sweep had timed the default kernel; now each variant's own
    swept.clear()
    both = run_bench(bench_calls(point=[(8, 8192)], variants=["fma", "mma"], sweep_splits="some"), say=said.append)
    assert swept == [(8, 8192, 128, 32, 8, "fma"), (8, 8192, 128, 32, 8, "mma")]
    assert {k: v[0].kernel.split()[0] for k, v in both.split_sweeps.items()} == {"8x8192 d128 fma": "fma",
                                                                                   "8x8192 d128 mma": "mma"}
