"""Decode reports: the recorded benchmark reads strictly, round-trips, and `labkit report show|diff` take it."""

import json
import re

import numpy as np
import pytest

from labkit import cli
from labkit.errors import FormatError
from labkit.workloads.decode import report

from ..conftest import ROOT

RECORDED = sorted((ROOT / "data" / "runs").glob("*-decode_bench/bench.json"))
RECORDED_PROVENANCE = json.loads(RECORDED[-1].read_text())["provenance"]  # what a bench on the H200 writes


def test_the_recorded_benchmark_is_a_valid_report_that_round_trips(tmp_path):
    assert RECORDED, "no recorded decode benchmark in data/runs"
    r = report.load(RECORDED[-1])
    assert r.provenance["device"]["name"] and len(r.points) >= 10
    assert all(p.TBps == pytest.approx(p.kv_MB * 1e6 / (p.p50_us * 1e-6) / 1e12, rel=1e-6) for p in r.points)
    out = report.save(r, tmp_path / "again.json")
    assert report.load(out) == r


@pytest.mark.parametrize("change, message", [
    (lambda d: d.update(decode_report_version=2), "decode_report_version"),
    (lambda d: d["rows"][0].update(extra=1), r"rows\[0\].extra: unknown key"),
    (lambda d: d["rows"][0].update(TBps=-1.0), r"rows\[0\].TBps"),
    (lambda d: d["rows"][0].update(mode="warm"), r"rows\[0\].mode"),
    (lambda d: d.pop("provenance"), "missing key 'provenance'"),
    (lambda d: d["rows"][0].update(p50_us=0), r"rows\[0\].p50_us = 0: expected a number above 0"),
    (lambda d: d["rows"][0].update(head_dim=100), r"rows\[0\].head_dim = 100: expected one of the kernels' head_dims"),
    (lambda d: d["rows"][0].update(heads="a/b"), r"rows\[0\].heads: 'a/b': expected query / KV heads"),
    # a CLI review: each was shown as if measured
    (lambda d: d["rows"][0].update(heads="33/8"), r"rows\[0\].heads: '33/8': 33 query heads on 8 KV heads; expected a"),
    (lambda d: d["rows"][0].update(heads="32/8 page 17"), r"rows\[0\].heads: '32/8 page 17': page 17; expected page"),
    (lambda d: d["rows"][0].update(kernel=" "), r"rows\[0\].kernel = ' ': expected the build's label"),
    (lambda d: d.update(copy_read_plus_write_GBps=0), r"copy_read_plus_write_GBps = 0: expected a number above 0"),
    # a CLI review: a zero ratio was shown as 0.000, and the zero in '32/0' went unnamed
    (lambda d: d["rows"][0].update(x_best_peer=0.0), r"rows\[0\].x_best_peer = 0.0: expected a number above 0"),
    (lambda d: d["rows"][0].update(heads="32/0"), r"rows\[0\].heads: '32/0': 32 query heads on 0 KV heads; expected at "
                                                  r"least 1 of each"),
])
def test_bad_reports_are_refused_naming_the_path(change, message, tmp_path):
    doc = json.loads(RECORDED[-1].read_text())
    change(doc)
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(doc))
    with pytest.raises(FormatError, match=message):
        report.load(bad)


def test_a_report_timed_with_l2_left_clean_reads_and_pairs_only_with_its_own_mode(tmp_path, capsys):
    doc = json.loads(RECORDED[-1].read_text())
    for row in doc["rows"]:
        row["mode"] = "cold_clean" if row["mode"] == "cold" else row["mode"]
    clean = tmp_path / "clean.json"
    clean.write_text(json.dumps(doc))
    r = report.load(clean)
    assert {p.mode for p in r.points} <= {"cold_clean", "graph"} and "cold_clean" in {p.mode for p in r.points}
    assert cli.main(["report", "show", str(clean)]) == 0
    assert " cold_clean " in capsys.readouterr().out
    assert cli.main(["report", "diff", str(RECORDED[-1]), str(clean)]) == 0
    out = capsys.readouterr().out
    cold = sum(p.mode == "cold" for p in report.load(RECORDED[-1]).points)
    assert f"only in A: {cold} calls" in out and "1.000x" in out  # the graph rows still pair
    assert "(calls pair within one timing mode: A's are cold/graph, B's cold_clean/graph)" in out


def test_cli_show_and_diff(tmp_path, capsys):
    assert cli.main(["report", "show", str(RECORDED[-1])]) == 0
    out = capsys.readouterr().out
    first = report.load(RECORDED[-1]).points[0]
    assert out.startswith("decode report v1: NVIDIA H200") and f" {first.kernel} " in out
    rows = out.split("\n\n")[0].splitlines()[1:]  # the table: columns line up however long a label ("mma w8s1ef cl8")
    ends = {line.index(m) + len(m) for line in rows for m in (" mode ", " cold ", " graph ") if m in line}
    assert len(ends) == 1, rows
    other = report.load(RECORDED[-1])
    other = other.__class__(**{**other.__dict__, "provenance": {**other.provenance, "git_sha": "f" * 40}})
    b = report.save(other, tmp_path / "b.json")
    assert cli.main(["report", "diff", str(RECORDED[-1]), str(b)]) == 0
    out = capsys.readouterr().out
    assert "A and B differ in:" in out and "git: A" in out and "1.000x" in out
    assert cli.main(["report", "diff", str(RECORDED[-1]), str(ROOT / "data" / "sage2_report_seed.json")]) == 2
    out, err = capsys.readouterr()
    assert f"A ({RECORDED[-1]}) is a decode report and B (" in err and "sage2_report_seed.json) a Sage2 one" in err
    assert out == ""  # nothing printed before the refusal


def test_show_gives_labkit_beside_the_peers_its_own_column_and_says_why_a_peer_did_not_run(tmp_path):
    r = report.load(RECORDED[-1])
    p = r.points[0]
    peers = {"sdpa_cudnn": 1.5, "sdpa_flash": 1.2, "fa3": "fa3-fwd is not installed", "labkit_beside_peers": 1.6,
             "flex_paged": "InductorError: SubprocException: An exception occurred\nName=triton_tem_fused_0"}
    one = p.__class__(**{**p.__dict__, "peers": peers, "x_best_peer": 1.6 / 1.5, "p50_us": 18.82})
    text = report.show_table(r.__class__(**{**r.__dict__, "points": (one,), "split_sweeps": {}}))
    header, row = text.splitlines()[1:3]
    assert header.split()[-9:] == ["us", "TB/s", "beside", "peers", "cudnn", "flash", "fa3", "flex", "x", "best",
                                   "peer"][-9:]
    assert row.split()[-8:] == ["18.82", f"{p.TBps:.2f}", "1.60", "1.50", "1.20", "-", "-", "1.067"]
    assert "  fa3 at 1 x 1024 d128: fa3-fwd is not installed" in text
    # the reason on one line: a first line that ends in ':' said nothing alone (found by a review)
    assert ("  flex at 1 x 1024 d128: torch.compile failed for FlexAttention at this shape: InductorError: "
            "SubprocException: An exception occurred Name=triton_tem_fused_0\n") in text + "\n"


def test_show_without_peers_has_no_peer_columns_and_a_long_reason_is_cut(tmp_path):
    """A run that timed no peers shows no 'beside peers' or 'x best peer' column (every row as long as the header);
    a reason over 100 characters is cut to 100 (found by a mutation audit: neither was given)."""
    r = report.load(RECORDED[-1])
    p = r.points[0]
    bare = p.__class__(**{**p.__dict__, "peers": {}, "x_best_peer": None})
    text = report.show_table(r.__class__(**{**r.__dict__, "points": (bare,), "split_sweeps": {}}))
    header, row = text.splitlines()[1:3]
    assert header.split()[-3:] == ["p50", "us", "TB/s"], header
    assert "beside" not in header and "best" not in header and row.split()[-1] == f"{p.TBps:.2f}", text
    assert "'x best peer' divides it" not in text  # the note on the peers' columns goes with them
    why, whole = "E" * 150, "W" * 100
    one = p.__class__(**{**p.__dict__, "peers": {"fa3": why, "flex_paged": whole, "sdpa_flash": 1.2},
                         "x_best_peer": 1.0})
    text = report.show_table(r.__class__(**{**r.__dict__, "points": (one,), "split_sweeps": {}}))
    assert (f"  fa3 at {p.batch} x {p.kv_len} d{p.head_dim}: {why[:96]} ... (shortened; the whole reason: this "
            "report's row)\n") in text + "\n", text
    assert f"  flex at {p.batch} x {p.kv_len} d{p.head_dim}: {whole}\n" in text + "\n", text
    assert "'x best peer' divides it by the fastest peer's" in text


def test_a_split_sweep_of_one_row_and_a_provenance_with_keys_of_another_labkit_read(tmp_path):
    """A sweep may hold one row, and a provenance with keys a later labkit adds reads (found by a mutation audit:
    no recorded report had either)."""
    doc = json.loads(RECORDED[-1].read_text())
    doc["split_sweeps"] = {"one": [dict(doc["rows"][0])]}
    doc["provenance"] = {**doc["provenance"], "a_later_field": {"x": 1}}
    f = tmp_path / "r.json"
    f.write_text(json.dumps(doc))
    r = report.load(f)
    assert len(r.split_sweeps["one"]) == 1 and r.provenance["a_later_field"] == {"x": 1}


def test_why_a_peer_did_not_run_keeps_the_whole_message_and_shows_its_first_and_last_line():
    """Inductor wraps a subprocess's traceback: its first line says an exception occurred, its last line which. The
    report keeps it whole (a review: notebook 03's records had kept 200 characters, the cause cut off); the printed
    line shows the exception's type and the last line."""
    from labkit.workloads.decode.peers import REASON_KEPT, _why, shown_reason

    exc = RuntimeError("SubprocException: An exception occurred in a subprocess:\n\n"
                       "Traceback (most recent call last):\n  File x.py, line 3\n"
                       "OutOfResources: out of resource: shared memory, Required: 262144")
    assert _why(exc) == f"RuntimeError: {exc}"
    assert shown_reason("fa3", _why(exc)) == (
        "RuntimeError: ... OutOfResources: out of resource: shared memory, Required: 262144")
    assert _why(ValueError("x" * 500)) == "ValueError: " + "x" * 500
    huge = _why(ValueError("a" * 3000 + "z" * 3000))  # over what a report reads: its start and its end, said cut
    assert len(huge) == REASON_KEPT and huge.startswith("ValueError: aaa") and huge.endswith("z" * 1000)
    said = int(re.search(r"\[\.\.\. (\d+) characters left out \.\.\.\]", huge).group(1))
    kept = len(re.sub(r"\n\[\.\.\. \d+ characters left out \.\.\.\]\n", "", huge)) - len("ValueError: ")
    assert said == 6000 - kept, (said, kept)  # what the marker says is what is missing (a review: it was 36 short)


def test_diff_names_another_gpu_and_says_what_that_means(tmp_path):
    a = report.load(RECORDED[-1])
    device = {**a.provenance["device"], "uuid": "GPU-00000000-1111"}
    b = report.save(a.__class__(**{**a.__dict__, "provenance": {**a.provenance, "device": device}}),
                    tmp_path / "b.json")
    text = report.diff_table(a, report.load(b))
    assert f"gpu: A {a.provenance['device']['uuid'][:12]} | B GPU-00000000" in text
    assert "another GPU of the same kind" in text and "git:" not in text
    assert f"same: {a.points[0].kernel}, {a.points[0].splits} splits" in text
    h100 = {**device, "name": "NVIDIA H100 80GB HBM3"}  # another kind of GPU: no such note
    c = report.save(a.__class__(**{**a.__dict__, "provenance": {**a.provenance, "device": h100}}), tmp_path / "c.json")
    assert "device: A NVIDIA H200 | B NVIDIA H100" in (t := report.diff_table(a, report.load(c)))
    assert "another GPU of the same kind" not in t


def test_write_validates_the_rows_it_is_given(tmp_path):
    doc = json.loads(RECORDED[-1].read_text())
    path = report.write(doc["rows"], doc["split_sweeps"], doc["copy_read_plus_write_GBps"], doc["provenance"],
                        tmp_path / "r.json")
    assert report.load(path).points == report.load(RECORDED[-1]).points
    with pytest.raises(FormatError, match=r"rows\[0\].p50_us"):
        report.write([{**doc["rows"][0], "p50_us": "fast"}], {}, 4250.0, {}, tmp_path / "bad.json")
    assert not (tmp_path / "bad.json").exists()


def test_the_bench_keeps_what_it_measured_when_a_later_point_fails(tmp_path, monkeypatch, capsys):
    """The report is rewritten after every point: a failure at the third point leaves the first two on disk."""
    from labkit import probes, provenance
    from labkit.workloads.decode import bench

    calls, fail_at = [], [3]

    def fake_point(batch, kv_len, head_dim, **kw):
        calls.append(batch)
        if len(calls) == fail_at[0]:
            raise RuntimeError("CUDA error: an illegal memory access was encountered")
        t = 20e-6 * batch
        nbytes = 2 * batch * kv_len * kw.get("heads_kv", 8) * head_dim * 2
        return {"batch": batch, "kv_len": kv_len, "head_dim": head_dim, "heads": "32/8", "splits": 4,
                "kernel": "mma/1", "mode": kw.get("mode", "cold"), "kv_MB": nbytes / 1e6, "p50_us": t * 1e6,
                "TBps": nbytes / t / 1e12}

    monkeypatch.setattr(bench, "check_once", lambda: 1e-3)
    monkeypatch.setattr(bench, "bench_point", fake_point)
    monkeypatch.setattr(probes, "copy_bandwidth", lambda n, **kw: {"memcpy": {"GBps_read_plus_write": 4250.0}})
    monkeypatch.setattr(provenance, "collect", lambda **kw: RECORDED_PROVENANCE)
    out = tmp_path / "bench.json"
    out.write_text(RECORDED[-1].read_text())  # an earlier, complete report at the same path stays whole
    with pytest.raises(RuntimeError, match="illegal memory access"):
        cli.main(["decode", "bench", "--quick", "--out", str(out)])
    kept = report.load(tmp_path / "bench.json.partial")
    assert [p.batch for p in kept.points] == [1, 8] and "[2] batch 8 x 8192" in capsys.readouterr().out
    assert out.read_text() == RECORDED[-1].read_text()
    fail_at[0] = 0  # no failure this time: the report lands at FILE and the partial goes
    monkeypatch.setattr(bench, "split_sweep", lambda *a, **k: [])
    assert cli.main(["decode", "bench", "--quick", "--out", str(out)]) == 0
    assert len(report.load(out).points) == 5 and not (tmp_path / "bench.json.partial").exists()


def test_sweep_splits_all_sweeps_every_point_and_names_the_worst(tmp_path, monkeypatch, capsys):
    """``--sweep-splits all``: a split sweep at every point of the bench (here --quick's three) and the seed call,
    saved in the report, and one closing line with the heuristic's worst distance from a sweep's best count."""
    from labkit import probes, provenance
    from labkit.workloads.decode import bench

    def fake_point(batch, kv_len, head_dim, splits=None, **kw):
        t = 20e-6 * batch * (1 + 0.01 * (splits or 4))
        nbytes = 2 * batch * kv_len * kw.get("heads_kv", 8) * head_dim * 2
        return {"batch": batch, "kv_len": kv_len, "head_dim": head_dim, "heads": "32/8", "splits": splits or 4,
                "kernel": "mma w4s3", "mode": kw.get("mode", "cold"), "kv_MB": nbytes / 1e6, "p50_us": t * 1e6,
                "TBps": nbytes / t / 1e12}

    swept = []

    def fake_sweep(b, n, d, **kw):
        swept.append((b, n, d))
        return [{**fake_point(b, n, d, splits=s), "heuristic": s == 4} for s in (1, 2, 4)]

    monkeypatch.setattr(bench, "check_once", lambda: 1e-3)
    monkeypatch.setattr(bench, "bench_point", fake_point)
    monkeypatch.setattr(bench, "split_sweep", fake_sweep)
    monkeypatch.setattr(probes, "copy_bandwidth", lambda n, **kw: {"memcpy": {"GBps_read_plus_write": 4250.0}})
    monkeypatch.setattr(provenance, "collect", lambda **kw: RECORDED_PROVENANCE)
    assert cli.main(["decode", "bench", "--quick", "--sweep-splits", "all", "--out", str(tmp_path / "r.json")]) == 0
    assert swept == [(1, 8192, 128), (8, 8192, 128), (64, 8192, 128), (2, 704, 256)]
    out = capsys.readouterr().out
    assert "split heuristic: at most +3.0% of the best split count over 4 sweeps" in out
    assert "\n  the split heuristic within 5% of a sweep's best split count: met, at most +3.0% (" in out
    assert len(report.load(tmp_path / "r.json").split_sweeps) == 4
    assert cli.main(["decode", "bench", "--sweep-splits", "most"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--sweep-splits: invalid choice: 'most' (choose from 'some', 'all')" in err[0]


def _bench_with_peers(monkeypatch, capsys, out, fake_rates) -> str:
    """``labkit decode bench --quick --peers --out OUT`` over faked calls (20 us per sequence) and ``fake_rates``'s
    peers; what it printed."""
    from labkit import probes, provenance
    from labkit.workloads.decode import bench, peers

    def fake_point(batch, kv_len, head_dim, **kw):
        t = 20e-6 * batch
        nbytes = 2 * batch * kv_len * kw.get("heads_kv", 8) * head_dim * 2
        return {"batch": batch, "kv_len": kv_len, "head_dim": head_dim, "heads": "32/8", "splits": 4,
                "kernel": "mma w4s3", "mode": kw.get("mode", "cold"), "kv_MB": nbytes / 1e6, "p50_us": t * 1e6,
                "TBps": nbytes / t / 1e12}

    monkeypatch.setattr(bench, "check_once", lambda: 1e-3)
    monkeypatch.setattr(bench, "bench_point", fake_point)
    monkeypatch.setattr(peers, "peer_rates", fake_rates)
    monkeypatch.setattr(probes, "copy_bandwidth", lambda n, **kw: {"memcpy": {"GBps_read_plus_write": 4250.0}})
    monkeypatch.setattr(provenance, "collect", lambda **kw: RECORDED_PROVENANCE)
    assert cli.main(["decode", "bench", "--quick", "--peers", "--out", str(out)]) == 0
    return capsys.readouterr().out


def test_peers_compare_against_labkits_call_in_the_same_rounds(tmp_path, monkeypatch, capsys):
    """``--peers``: x_best_peer is labkit's TB/s timed in the peers' rounds (labkit_beside_peers) over the best
    peer's, not its separate timing; a peer that did not run is named once; the report keeps every rate."""
    def fake_rates(batch, kv_len, head_dim, **kw):
        flash = "wrong output: 3 of 262144 values differ from labkit's by more than 0.003 (max |diff| 0.4)"
        return {"labkit_beside_peers": 3.0 + batch / 100, "sdpa_cudnn": 3.2, "sdpa_flash": flash if batch == 8 else 2.5,
                "fa3": "not available (ImportError: no fa3_fwd_interface)"}

    out = _bench_with_peers(monkeypatch, capsys, tmp_path / "r.json", fake_rates)
    assert out.count("peer fa3: not available") == 1 and "labkit_beside_peers" in out  # at every point: said once
    assert out.count("peer sdpa_flash at 8 x 8192 d128: wrong output: 3 of 262144 values") == 1
    assert ("\n  at no size below the best peer: MISSED, at 2 of 3: 1 x 8k d128 x 0.941 (sdpa_cudnn 3.20), "
            "8 x 8k d128 x 0.963 (sdpa_cudnn 3.20)\n") in out  # the targets under the table, from the same rows
    r = report.load(tmp_path / "r.json")
    timed = [p for p in r.points if p.heads == "32/8"]
    assert [p.batch for p in timed] == [1, 8, 64]
    for p in timed:
        assert p.peers["labkit_beside_peers"] == pytest.approx(3.0 + p.batch / 100)
        assert p.x_best_peer == pytest.approx((3.0 + p.batch / 100) / 3.2)  # not p.TBps / 3.2
        assert p.peers["fa3"].startswith("not available")


def test_gather_contiguous_follows_the_page_table():
    """The peers read labkit's own K/V: pages gathered through the table into [batch, kv_len, Hkv, D]."""
    import numpy as np

    from labkit.workloads.decode.peers import gather_contiguous

    rng = np.random.default_rng(5)
    pages, hk, ps, d, batch, kv_len = 12, 2, 4, 3, 2, 10  # 3 pages per sequence, the last one partly used
    pool = rng.standard_normal((pages, hk, ps, d)).astype(np.float32)
    table = np.full((batch, 5), -1, np.int32)
    table[:, :3] = rng.permutation(pages)[:6].reshape(batch, 3)
    got = gather_contiguous(pool, table, batch, kv_len)
    assert got.shape == (batch, kv_len, hk, d)
    for b in range(batch):
        for n in range(kv_len):
            np.testing.assert_array_equal(got[b, n], pool[table[b, n // ps], :, n % ps, :])


def test_a_variant_times_every_point_of_the_sweep_with_that_kernel(tmp_path, monkeypatch):
    """``--variant mma`` had timed the d128 points only (from when the tensor-core kernel was d128 only) and skipped
    the nine d256 points without a word; each point, and the seed call, now takes each asked-for kernel."""
    from labkit import probes, provenance
    from labkit.workloads.decode import bench

    calls = []

    def fake_point(batch, kv_len, head_dim, variant=None, mode="cold", **kw):
        calls.append((batch, kv_len, head_dim, variant, mode))
        nbytes = 2 * batch * kv_len * kw.get("heads_kv", 8) * head_dim * 2
        return {"batch": batch, "kv_len": kv_len, "head_dim": head_dim, "heads": "32/8", "splits": 1,
                "kernel": f"{variant} w4s1", "mode": mode, "kv_MB": nbytes / 1e6, "p50_us": nbytes / 4e6,
                "TBps": 4.0}

    monkeypatch.setattr(bench, "check_once", lambda: 1e-3)
    monkeypatch.setattr(bench, "bench_point", fake_point)
    monkeypatch.setattr(probes, "copy_bandwidth", lambda n, **kw: {"memcpy": {"GBps_read_plus_write": 4250.0}})
    monkeypatch.setattr(provenance, "collect", lambda **kw: RECORDED_PROVENANCE)
    assert cli.main(["decode", "bench", "--variant", "mma", "--variant", "fma", "--out", str(tmp_path / "b.json")]) == 0
    sweep = [(b, n, d) for b, n, d in bench.SWEEP if 2 * b * n * 8 * d * 2 <= bench.MAX_KV_BYTES]
    for v in ("mma", "fma"):
        assert [c[:3] for c in calls if c[3] == v and c[0:2] != (2, 704)] == sweep
        assert [c[4] for c in calls if c[3] == v and c[0:2] == (2, 704)] == ["cold", "graph"]
    assert any(c[2] == 256 and c[3] == "mma" for c in calls)


def test_a_report_times_each_call_once_and_diff_pairs_the_same_kernel_variant(tmp_path, capsys):
    """Found by a review: a report with the same call twice was read, and report diff paired A's row with B's last
    duplicate without a word. A call is its shape, mode and kernel variant (a bench with --variant mma --variant fma
    times each shape once per variant), and the reader refuses a second row of one call."""
    doc = json.loads(RECORDED[-1].read_text())
    doc["rows"].append(dict(doc["rows"][1]))
    (tmp_path / "dup.json").write_text(json.dumps(doc))
    assert cli.main(["report", "show", str(tmp_path / "dup.json")]) == 2
    err = capsys.readouterr().err
    assert f"rows[{len(doc['rows']) - 1}]: the call of rows[1] again (batch 1 x 8192, d128, 32/8, cold, mma): " in err
    doc["rows"][-1]["kernel"] = "fma r2s2"  # the same shape in the other kernel: another call
    doc["rows"][-1]["p50_us"] *= 3
    doc["rows"][-1]["TBps"] = doc["rows"][-1]["kv_MB"] / doc["rows"][-1]["p50_us"]  # its rate follows its time
    (tmp_path / "fma.json").write_text(json.dumps(doc))
    both = report.load(tmp_path / "fma.json")
    text = report.diff_table(both, report.load(RECORDED[-1]))
    row = next(ln for ln in text.splitlines() if ln.split()[:2] == ["1", "8192"] and "mma" in ln)
    assert " 1.000x " in row  # the mma row paired with the mma row, not with the slower fma one
    assert "only in A: 1 call\n" in text + "\n"
    for r in doc["rows"]:  # a report of the other kernel alone still pairs call by call, the builds column says so
        r["kernel"] = "fma r2s2"
    doc["rows"].pop()
    (tmp_path / "fma_only.json").write_text(json.dumps(doc))
    text = report.diff_table(report.load(RECORDED[-1]), report.load(tmp_path / "fma_only.json"))
    assert "no call in both" not in text and "only in" not in text
    assert " | fma r2s2, 16 splits" in next(ln for ln in text.splitlines() if ln.split()[:2] == ["1", "8192"])


def test_a_diff_of_reports_with_no_call_in_common_shows_both_and_fails(tmp_path, capsys):
    """Found by a review: `report diff` of two reports that time no call in common printed "no call in both" and exited
    0, so a script comparing two runs passed having compared nothing."""
    doc = json.loads(RECORDED[-1].read_text())
    doc["rows"] = [dict(r, mode="cold_clean") for r in doc["rows"] if r["mode"] == "cold"]
    (tmp_path / "clean.json").write_text(json.dumps(doc))
    assert cli.main(["report", "diff", str(RECORDED[-1]), str(tmp_path / "clean.json")]) == 2
    out, err = capsys.readouterr()
    assert "no call in both" in out and "(calls pair within one timing mode: A's are cold" in out  # the reason shown
    assert err == ("labkit: error: labkit report diff: A and B time no call in common (same batch, kv_len, head_dim, "
                   "heads and mode): nothing was compared\n")
    assert cli.main(["report", "diff", str(RECORDED[-1]), str(RECORDED[-1])]) == 0  # a call in common: a comparison
    out = capsys.readouterr().out.splitlines()
    # the way B/A reads, as the Sage2 diff says it (a new-user review), over the table
    assert out[3:5] == ["B/A: B's time over A's (under 1: B is faster)", out[4]] and out[4].split()[:3] == [
        "batch", "kv_len", "d"]
    assert out[2].startswith("A and B match in device, GPU uuid, git, clocks and copy rate")


def test_diff_pairs_a_call_with_its_twin_whichever_row_comes_first(tmp_path):
    """Found by a review: A's row of another kernel, listed before the call's twin, took B's only row of that shape,
    and the twin was then "only in A"."""
    doc = json.loads(RECORDED[-1].read_text())
    fma = dict(doc["rows"][1], kernel="fma r2s2", p50_us=doc["rows"][1]["p50_us"] * 3)
    fma["TBps"] = fma["kv_MB"] / fma["p50_us"]
    doc["rows"].insert(1, fma)  # before the mma row of the same call
    (tmp_path / "fma_first.json").write_text(json.dumps(doc))
    text = report.diff_table(report.load(tmp_path / "fma_first.json"), report.load(RECORDED[-1]))
    call = [str(fma[k]) for k in ("batch", "kv_len", "head_dim")]
    rows = [ln for ln in text.splitlines() if ln.split()[:3] == call]
    assert len(rows) == 1 and " 1.000x " in rows[0] and "same: mma" in rows[0]
    assert text.endswith("only in A: 1 call\nonly in B: 0 calls")


def test_a_peer_is_timed_only_when_its_output_is_labkits():
    """Rounding differences pass; a peer that read other K/V, wrote NaN or another shape gets a one-line reason."""
    import numpy as np

    from labkit.workloads.decode.inputs import _bf16, bf16_to_f32
    from labkit.workloads.decode.peers import PEER_TOLERANCE, output_disagreement

    rng = np.random.default_rng(11)
    exact = rng.standard_normal((8, 32, 128)).astype(np.float32) * 0.1
    labkit = bf16_to_f32(_bf16(exact))
    peer = bf16_to_f32(_bf16(exact + rng.standard_normal(exact.shape).astype(np.float32) * 1e-4))  # another rounding
    assert output_disagreement(peer, labkit) is None
    other = bf16_to_f32(_bf16(rng.standard_normal(exact.shape).astype(np.float32) * 0.1))  # other K/V's attention
    why = output_disagreement(other, labkit)
    assert why.startswith("wrong output: ") and "\n" not in why and "of 32768 values" in why
    one_off = labkit.copy()
    one_off[3, 7, 5] += 2 * PEER_TOLERANCE * np.abs(labkit).max()
    assert "1 of 32768 values" in output_disagreement(one_off, labkit)
    nan = labkit.copy()
    nan[0, 0, 0] = np.nan
    why = output_disagreement(nan, labkit)
    assert "1 of 32768 values" in why and "max |diff| inf" in why
    assert output_disagreement(labkit[:4], labkit) == "output shape [4, 32, 128], expected [8, 32, 128]"


PERSISTING = ROOT / "data" / "runs" / "20261204T165000Z-decode_persisting_l2"


def test_show_says_when_the_peers_were_timed_before_the_persisting_l2_reset():
    """Before e0af6be the cold pads left the persisting L2 lines FA3 loads, so the peers, which share one K/V copy,
    could read some of it from L2: a report of that time with FA3 timed says so above its table; one timed since (a
    dirty tree's too), or without FA3, does not; a commit this checkout does not have is named as undecided."""
    before = report.load(ROOT / "data" / "runs" / "20261203T142900Z-decode_grid_bench" / "grid" / "kv1024.json")
    since = report.load(PERSISTING / "sweep" / "sweep.json")

    def with_sha(r, sha):
        return r.__class__(**{**r.__dict__, "provenance": {**r.provenance, "git_sha": sha}})

    def without_fa3(r):
        return r.__class__(**{**r.__dict__, "points": tuple(
            p.__class__(**{**p.__dict__, "peers": {k: v for k, v in p.peers.items() if k != "fa3"}})
            for p in r.points)})

    note = f"timed before {report.PERSISTING_RESET}: {report.PERSISTING_NOTE}"
    assert report.show_table(before).splitlines()[1] == note  # over the table it qualifies, where a reader sees it
    assert report.persisting_note(with_sha(before, before.provenance["git_sha"] + "-dirty")) == note
    assert report.PERSISTING_NOTE not in report.show_table(since)
    assert report.persisting_note(with_sha(since, since.provenance["git_sha"] + "-dirty")) is None
    assert report.persisting_note(without_fa3(before)) is None  # cuDNN and flash leave no such lines
    unknown = report.persisting_note(with_sha(since, "f" * 40))
    assert unknown == (f"timed at {'f' * 40}, which this checkout cannot place before or after "
                       f"{report.PERSISTING_RESET}: {report.PERSISTING_NOTE}")
    assert "timed at no recorded commit, which" in report.persisting_note(with_sha(since, None))


def test_a_split_sweep_shows_no_empty_build_column():
    """Found by a notebook review: split sweeps printed a build column that only compare sweeps fill."""
    text = report.show_table(report.load(ROOT / "data" / "runs" / "20261204T185600Z-decode_bench_targets" /
                                         "sweep.json"))
    sweeps = [line for line in text.splitlines() if line.lstrip().startswith("splits  kernel")]
    assert sweeps and not any(line.rstrip().endswith("build") for line in sweeps)


def test_a_rate_its_bytes_and_time_do_not_give_and_two_plan_rows_in_a_sweep_are_refused(tmp_path):
    """Found by a readers review: TBps was never checked against kv_MB / p50_us, and a sweep could mark two rows as the
    plan's call, which "time vs plan" divides by."""
    doc = json.loads(RECORDED[-1].read_text())
    doc["rows"][0]["TBps"] *= 1.1
    (tmp_path / "rate.json").write_text(json.dumps(doc))
    with pytest.raises(FormatError, match=r"rows\[0\]\.TBps = .*: expected kv_MB / p50_us = "):
        report.load(tmp_path / "rate.json")
    doc = json.loads((ROOT / "data" / "runs" / "20261204T185600Z-decode_bench_targets" / "sweep.json").read_text())
    key, sweep = next((k, s) for k, s in doc["split_sweeps"].items() if len(s) > 1)
    for row in sweep:
        row["heuristic"] = True
    (tmp_path / "plans.json").write_text(json.dumps(doc))
    with pytest.raises(FormatError, match="more than one row marked heuristic"):
        report.load(tmp_path / "plans.json")


def test_an_x_best_peer_its_rates_do_not_give_is_refused(tmp_path):
    """A fresh-user review: an edited rows[0].x_best_peer = 5.0 was shown as read, beside peers of 0.44 vs 0.34; it is
    labkit's rate in the peers' rounds over the fastest peer's, held to them as TBps is to its bytes and time."""
    src = ROOT / "data" / "runs" / "20261204T185600Z-decode_bench_targets" / "sweep.json"
    doc = json.loads(src.read_text())
    i = next(i for i, r in enumerate(doc["rows"]) if isinstance(r.get("x_best_peer"), float))
    doc["rows"][i]["x_best_peer"] = 5.0
    (tmp_path / "x.json").write_text(json.dumps(doc))
    with pytest.raises(FormatError, match=rf"rows\[{i}\]\.x_best_peer = 5\.0: expected labkit's rate over the "
                                          r"fastest peer's, [\d.]+ / [\d.]+ = [\d.]+"):
        report.load(tmp_path / "x.json")
    for r in doc["rows"]:  # a ratio with no peer's rate beside it
        r.update({p: "not run" for p in ("sdpa_cudnn", "sdpa_flash", "fa3", "flex_paged") if p in r})
    doc["rows"][i]["x_best_peer"] = 1.0
    (tmp_path / "none.json").write_text(json.dumps(doc))
    with pytest.raises(FormatError, match=rf"rows\[{i}\]\.x_best_peer = 1\.0: expected '-': the row has no peer"):
        report.load(tmp_path / "none.json")


def test_a_bench_row_holding_nan_is_refused_naming_the_row_and_field(tmp_path):
    """The bench's report writer refuses a NaN rate naming the row and field (the file stays unwritten)."""
    r = report.load(RECORDED[-1])
    rows = r.to_dict()["rows"]
    rows[1]["p50_us"] = float("nan")
    with pytest.raises(FormatError, match=r"rows\[1\]\.p50_us = nan: not a finite number"):
        report.write(rows, {}, r.copy_TBps * 1e3, r.provenance, tmp_path / "b.json")
    assert not (tmp_path / "b.json").exists()


def test_a_peers_output_may_differ_by_four_bf16_steps_at_the_top_binade_and_no_more():
    """Found by mutation testing: the tolerance was only checked against itself (2 x PEER_TOLERANCE off fails), so a
    tolerance twice as loose passed. 2^-5 of labkit's largest |value| is the bound: 0.05 off at a largest |value|
    of 1 is another computation, 0.02 off is rounding."""
    import numpy as np

    from labkit.workloads.decode.peers import output_disagreement

    labkit = np.zeros((2, 4, 8), np.float32)
    labkit[0, 0, 0] = 1.0
    for off, flagged in ((0.02, False), (0.03, False), (0.035, True), (0.05, True)):
        peer = labkit.copy()
        peer[1, 2, 3] += off
        why = output_disagreement(peer, labkit)
        assert (why is not None) is flagged, (off, why)
    assert why == "wrong output: 1 of 64 values differ from labkit's by more than 0.0312 (max |diff| 0.05)"


def test_why_a_peer_did_not_run_says_a_one_line_reason_once_and_keeps_one_of_exactly_the_limit():
    """Found by mutation testing: only a long many-line message was checked; a one-line reason (the common one: a
    missing module) is said once, an empty one leaves the type, and a reason of exactly REASON_KEPT characters is not
    cut."""
    from labkit.workloads.decode.peers import REASON_KEPT, _why

    assert _why(ImportError("No module named 'fa3_fwd_interface'")) == (
        "ImportError: No module named 'fa3_fwd_interface'")
    assert _why(RuntimeError()) == "RuntimeError: "
    exact = "ValueError: " + "x" * (REASON_KEPT - 12)
    assert len(exact) == REASON_KEPT and _why(ValueError("x" * (REASON_KEPT - 12))) == exact


def test_without_torch_every_peer_is_reported_absent_with_the_reason(monkeypatch):
    """Found by mutation testing: a host without torch was never asked for peers; each peer is named with why it has
    no rate (no labkit rate beside them, nothing launched), which the bench says in one line per peer."""
    import sys

    from labkit.workloads.decode.peers import PEERS, best_peer, peer_rates

    monkeypatch.setitem(sys.modules, "torch", None)  # `import torch` raises ImportError
    rates = peer_rates(8, 8192, 128)
    assert rates == {p: "torch not importable" for p in PEERS} and best_peer(rates) is None


def test_a_row_whose_bytes_its_call_does_not_read_is_refused(tmp_path):
    """Found by a CLI review: kv_MB edited with TBps made to match it read back, and `report show` printed a rate
    (0.07 TB/s) its call cannot have. Every row's bytes are now the K and V its batch, tokens, KV heads and head_dim
    give, and every recorded row meets that."""
    doc = json.loads(RECORDED[-1].read_text())
    row = doc["rows"][0]
    kv_mb = 4 * row["batch"] * row["kv_len"] * int(row["heads"].split("/")[1].split()[0]) * row["head_dim"] / 1e6
    assert row["kv_MB"] == pytest.approx(kv_mb, rel=1e-12)
    row["kv_MB"] = 1.0
    row["TBps"] = row["kv_MB"] / row["p50_us"]
    (tmp_path / "bytes.json").write_text(json.dumps(doc))
    with pytest.raises(FormatError) as e:
        report.load(tmp_path / "bytes.json")
    assert str(e.value).endswith(f"rows[0].kv_MB = 1.0: expected the MB of K and V that batch {row['batch']} x "
                                 f"{row['kv_len']} tokens, {row['heads'].split('/')[1].split()[0]} KV heads, "
                                 f"d{row['head_dim']} read in bf16: {kv_mb:.6g}"), str(e.value)
    assert cli.main(["report", "show", str(tmp_path / "bytes.json")]) == 2


def test_peer_errors_that_differ_past_what_is_shown_print_as_one_line(tmp_path, monkeypatch, capsys):
    """Found by a review of the change that keeps a peer's whole message: the bench grouped reasons by that message, so
    two compile errors that differ only inside their traceback (a temporary path) printed the same line twice."""
    def fake_rates(batch, kv_len, head_dim, **kw):
        flex = (f"InductorError: SubprocException: An exception occurred in a subprocess:\n"
                f"Traceback (most recent call last):\n  File /tmp/torchinductor_{batch}/x.py, line 3\n"
                "OutOfResources: out of resource: shared memory, Required: 262144")
        return {"labkit_beside_peers": 3.0, "sdpa_cudnn": 3.2, "flex_paged": flex}

    printed = _bench_with_peers(monkeypatch, capsys, tmp_path / "r.json", fake_rates)
    lines = [ln for ln in printed.splitlines() if ln.startswith("peer flex_paged")]
    assert len(lines) == 1 and "OutOfResources: out of resource: shared memory" in lines[0], lines
    assert {p.peers["flex_paged"] for p in report.load(tmp_path / "r.json").points if "flex_paged" in p.peers} == {
        fake_rates(b, 8192, 128)["flex_paged"] for b in (1, 8, 64)}  # each point's whole message is kept


def test_diff_spells_out_the_split_count_beside_a_build_label(capsys):
    """Found by a CLI user: the builds column read `same: mma w4s1c1 s1` and `mma w8s3ef cl8 pp s8`, where the label's
    own `s1` and `s3` are stages and the trailing `s8` was the split count."""
    h200 = ROOT / "data" / "runs" / "20261204T185600Z-decode_bench_targets" / "sweep.json"
    h100 = ROOT / "data" / "runs" / "20261205T152100Z-h100_bench_tests_3feb10e" / "decode_sweep.json"
    assert cli.main(["report", "diff", str(h200), str(h100)]) == 0
    rows = {tuple(ln.split()[:3]): ln for ln in capsys.readouterr().out.splitlines() if ln[:1] == " "}
    assert rows["64", "8192", "128"].endswith(" same: mma w4s1c1, 1 split")
    assert rows["1", "8192", "128"].endswith(" same: mma w8s3ef cl8 pp, 8 splits")
    older = next((ROOT / "data" / "runs" / "20261201T062100Z-decode_bench").glob("bench.json"))
    assert cli.main(["report", "diff", str(older), str(h200)]) == 0
    row = next(ln for ln in capsys.readouterr().out.splitlines() if ln.split()[:3] == ["1", "8192", "128"])
    assert row.endswith(" mma/1, 16 splits | mma w8s3ef cl8 pp, 8 splits")


def test_a_long_reasons_marker_counts_what_it_left_out_when_its_own_digits_grow():
    """Found by a review: the marker was sized twice, so where its number crossed a power of ten it said one character
    fewer than it cut."""
    import re

    from labkit.workloads.decode.peers import REASON_KEPT, _why

    for n in (13960, 13970, 13975, 100000):
        kept = _why(RuntimeError("x" * (n - len("RuntimeError: "))))
        gap = re.search(r"\n\[\.\.\. (\d+) characters left out \.\.\.\]\n", kept)
        assert len(kept) == REASON_KEPT and int(gap.group(1)) == n - (len(kept) - len(gap.group(0)))


def test_x_best_peers_interval_round_trips_and_a_broken_one_is_refused(tmp_path):
    """A row keeps the 95 % interval of x_best_peer's median taken round by round: both ends or neither, low <= high,
    only beside an x_best_peer; older reports have none and read as before."""
    src = ROOT / "data" / "runs" / "20261204T185600Z-decode_bench_targets" / "sweep.json"
    doc = json.loads(src.read_text())
    assert report.load(src).points[0].x_best_peer_low is None
    i = next(i for i, r in enumerate(doc["rows"]) if isinstance(r.get("x_best_peer"), float))
    x = doc["rows"][i]["x_best_peer"]
    doc["rows"][i].update(x_best_peer_low=x - 0.004, x_best_peer_high=x + 0.003)
    (tmp_path / "ok.json").write_text(json.dumps(doc))
    p = report.load(tmp_path / "ok.json").points[i]
    assert (p.x_best_peer_low, p.x_best_peer_high) == (x - 0.004, x + 0.003)
    report.save(report.load(tmp_path / "ok.json"), tmp_path / "again.json")
    assert report.load(tmp_path / "again.json").points[i] == p
    for change, message in (({"x_best_peer_high": None}, r"x_best_peer_low.*without x_best_peer_high: expected both"),
                            ({"x_best_peer_low": x + 0.01}, rf"x_best_peer_high = {x + 0.003!r}: expected at least "
                                                            rf"x_best_peer_low, {x + 0.01!r}"),
                            ({"x_best_peer": "-", **{k: "not run" for k in ("sdpa_cudnn", "sdpa_flash", "fa3",
                                                                              "flex_paged")}},
                             r"an interval of x_best_peer in a row without x_best_peer"),
                            ({"x_best_peer_low": -1.0}, r"x_best_peer_low = -1\.0")):
        bad = json.loads(json.dumps(doc))
        bad["rows"][i].update(change)
        bad["rows"][i] = {k: v for k, v in bad["rows"][i].items() if v is not None}
        (tmp_path / "bad.json").write_text(json.dumps(bad))
        with pytest.raises(FormatError, match=rf"rows\[{i}\]\..*{message}"):
            report.load(tmp_path / "bad.json")


def test_the_bench_keeps_the_rounds_interval_and_its_table_shows_x_best_peer_to_three_places(tmp_path, monkeypatch,
                                                                                               capsys):
    """peer_rates' interval of the best peer's ratio reaches the report and the printed table; a row without one
    (too few rounds, or FlexAttention best) prints '-' there."""
    def fake_rates(batch, kv_len, head_dim, **kw):
        rates = {"labkit_beside_peers": 3.19, "sdpa_cudnn": 3.2, "sdpa_flash": 2.5, "fa3": 3.0}
        return {**rates, "x_best_peer_low": 0.991, "x_best_peer_high": 1.004} if batch == 8 else rates

    out = _bench_with_peers(monkeypatch, capsys, tmp_path / "r.json", fake_rates)
    header = next(line for line in out.splitlines() if line.lstrip().startswith("batch"))
    assert header.split()[-2:] == ["x_best_peer", "x_best_95%"]
    row8 = next(line for line in out.splitlines() if line.split()[:2] == ["8", "8192"])
    row1 = next(line for line in out.splitlines() if line.split()[:2] == ["1", "8192"])
    assert row8.split()[-2:] == ["0.997", "0.991-1.004"] and row1.split()[-2:] == ["0.997", "-"]
    assert "(sdpa_cudnn 3.20; 95 % 0.991-1.004)" in out and "'x best peer' its rate in the peers' rounds; 95 %" in out
    points = {p.batch: p for p in report.load(tmp_path / "r.json").points if p.heads == "32/8"}
    assert (points[8].x_best_peer_low, points[8].x_best_peer_high) == (0.991, 1.004)
    assert points[1].x_best_peer_low is None


def test_the_interval_is_of_the_best_peers_ratio_and_only_where_labkits_rounds_timed_it():
    """peer_rates' interval is the median interval of the best peer's per-round ratios (labkit's rate over the
    peer's, each round's pair), not another peer's; FlexAttention, timed on its own, has none; nor have 5 rounds."""
    from labkit.timing.stats import median_interval
    from labkit.workloads.decode.peers import x_best_peer_interval

    rng = np.random.default_rng(3)
    per_round = {"sdpa_cudnn": tuple(rng.normal(0.99, 0.01, 20)), "sdpa_flash": tuple(rng.normal(1.3, 0.01, 20))}
    rates = {"labkit_beside_peers": 3.4, "sdpa_cudnn": 3.43, "sdpa_flash": 2.6, "fa3": "not available (...)"}
    lo, hi = median_interval(per_round["sdpa_cudnn"])
    assert x_best_peer_interval(rates, per_round) == {"x_best_peer_low": lo, "x_best_peer_high": hi}
    assert x_best_peer_interval({**rates, "flex_paged": 3.6}, per_round) == {}
    assert x_best_peer_interval(rates, {"sdpa_cudnn": per_round["sdpa_cudnn"][:5]}) == {}
    assert x_best_peer_interval({"labkit_beside_peers": 3.4, "sdpa_cudnn": "refused"}, per_round) == {}
