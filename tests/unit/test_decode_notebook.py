"""Notebook 03 end to end on a faked GPU, live: its two sweeps go through labkit.sweep as on the H200 (the grid
checked first, each point written), with the GPU calls (bench_point, peer_rates, the correctness cases, the copy
rate) replaced by host fakes; a grid the workload could not take stopped the live notebook at its first sweep."""
import json

import pandas as pd

from ..conftest import ROOT, execute_notebook_source
from .test_sched_points import _fake_device

NB = ROOT / "notebooks" / "03_decode.py"
SMALL = {"batch": [1, 8], "kv_lens": [1024, 8192], "splits_at": [8, 8192], "iterations": 2}


def _execute(params: dict) -> dict:
    return execute_notebook_source(NB, params)


def test_notebook_03_live_on_a_faked_gpu(tmp_path, monkeypatch):
    import matplotlib

    matplotlib.use("Agg")
    import labkit.session
    from labkit.workloads.decode import bench, labels, peers, study
    from labkit.workloads.decode.plan import plan_call

    _fake_device(monkeypatch)
    monkeypatch.setattr(labkit.session, "gpu_status", lambda: (True, "a faked GPU (test)"))
    asked = []

    def fake_point(batch, kv_len, head_dim, *, heads_q=32, heads_kv=8, page_size=64, splits=None, iterations=20,
                   mode="cold", **overrides):
        asked.append((batch, kv_len, splits))
        g = bench.geometry_for(batch, kv_len, heads_q=heads_q, heads_kv=heads_kv, head_dim=head_dim,
                               page_size=page_size)
        plan = plan_call(g, splits=splits)
        nbytes = 2 * batch * kv_len * heads_kv * head_dim * 2
        return bench.call_row(batch, kv_len, head_dim, heads_q, heads_kv, plan,
                              3e-6 + nbytes / 4e12 * plan.splits ** 0.1, mode)

    monkeypatch.setattr(bench, "bench_point", fake_point)
    monkeypatch.setattr(peers, "peer_rates", lambda *a, **k: {"sdpa_cudnn": 3.5, "sdpa_flash": 3.0,
                                                             "fa3": "fa3_fwd: not importable (test)",
                                                             "labkit_beside_peers": 3.4})
    monkeypatch.setattr(study, "correctness", lambda: [{"case": "faked", "splits": 1, "elements": 8,
                                                        "max_abs_err": 1e-3, "within_bound": True,
                                                        "unwritten_rows_untouched": True}])
    monkeypatch.setattr(study, "copy_ceiling", lambda: {"TBps": 4.2})
    ns = _execute({**SMALL, "source": "live", "out_dir": str(tmp_path)})

    assert ns["session"].live
    assert {p.stem for p in (tmp_path / "figs").glob("*.png")} == {"decode_bandwidth", "split_sweep", "spread"}
    # the recorded runs' 64 x 8k d128, beside which this faked run has no 64 x 8k of its own: those of the build the
    # plan picks for it (a review: a sweep without the call had pooled every build's runs, and lost the two groups)
    plan = plan_call(bench.geometry_for(64, 8192))
    assert ns["spread"].call == f"64 x 8k d128, 32/8 heads, cold, {labels.plan_label(plan)}, on NVIDIA H200"
    assert len(ns["spread"].runs) >= 12
    assert study.this_run_among(ns["spread"], ns["table"], *ns["spread_at"]).endswith("bandwidth sweep (its batch and "
                                                                                     "kv_lens)")
    grid = json.loads((tmp_path / "data" / "sweeps" / "bandwidth" / "sweep.json").read_text())
    assert grid["grid"]["peers"] == [True]  # a Python bool for a bool parameter, as the notebook passes it
    table = pd.read_csv(tmp_path / "data" / "bandwidth.csv")
    assert len(table) == 4 and (table["sdpa_cudnn"] == 3.5).all() and table["fa3"].isna().all()
    flex = "flex_paged: run only at the 5 points the targets name (compiled per shape)"  # the fake has no flex_paged
    assert dict(zip(zip(table["batch"], table["kv_len"]), table["peers_not_run"])) == {
        (1, 1024): f"fa3: fa3_fwd: not importable (test); {flex}", (1, 8192): "fa3: fa3_fwd: not importable (test)",
        (8, 1024): f"fa3: fa3_fwd: not importable (test); {flex}", (8, 8192): "fa3: fa3_fwd: not importable (test)"}
    rows = ns["sweep_splits"]
    pick = [r for r in rows if r["heuristic"]]
    assert len(pick) == 1 and pick[0]["splits"] == 2 and pick[0]["kernel"] == "mma w8s2 cl2 pp"  # the plan's own call
    assert (8, 8192, None) in asked and all(s in (None, *range(1, 257)) for _, _, s in asked)


def test_why_a_peer_did_not_run_is_listed_once_per_reason_not_as_a_table_column():
    """Found by a notebook review: a compiler's error in ``peers_not_run`` made notebook 03's table too wide to read."""
    from labkit.workloads.decode import study

    error = "InductorError: CompilationError: at 194:23:\n" + "x" * 300
    table = pd.DataFrame({"batch": [1, 8, 64], "kv_len": [1024, 1024, 32768], "TBps": [0.4, 1.9, 4.5],
                          "peers_not_run": ["flex_paged: compiled per shape", "flex_paged: compiled per shape",
                                            f"flex_paged: {error}; fa3: absent"]})
    assert "peers_not_run" not in study.shown(table)
    lines = study.peers_not_run(table)
    # the peer and where it has no number first, then why: a list of points after the reason read as where it ran
    assert lines[0] == "flex_paged: no number at 1 x 1024, 8 x 1024: compiled per shape"
    assert lines[1].startswith("flex_paged: no number at 64 x 32768: torch.compile failed for FlexAttention at this "
                               "shape: InductorError: CompilationError: at 194:23: xxx")
    assert lines[1].endswith("xxx ...") and len(lines[1]) < 200
    assert lines[2] == "fa3: no number at 64 x 32768: absent"


def test_the_bandwidth_table_says_where_labkit_is_behind_the_best_peer_as_the_bench_counts_it(tmp_path):
    """Found by a new-user review: the README counted notebook 03's record behind the best peer at 1 of 11 calls from
    labkit's rate alone, where the bench's x best peer (labkit timed in the peers' rounds) is behind at 2; the notebook
    showed no such column to check it by. And a compiler's traceback in ``peers_not_run`` broke the CSV's rows."""
    from labkit.workloads.decode import study

    rows = pd.DataFrame([  # 03's record's 64 x 1k and 256 x 1k, and a call ahead
        dict(batch=64, kv_len=1024, kv_MB=268.4, p50_us=76.67, TBps=3.501, labkit_beside_peers=3.482,
             sdpa_cudnn=3.485, sdpa_flash=2.35, fa3=3.31),
        dict(batch=256, kv_len=1024, kv_MB=1073.7, p50_us=257.2, TBps=4.174, labkit_beside_peers=4.179,
             sdpa_cudnn=4.186, sdpa_flash=2.58, fa3=3.889),
        dict(batch=8, kv_len=8192, kv_MB=268.4, p50_us=76.58, TBps=3.505, labkit_beside_peers=3.502,
             sdpa_cudnn=3.374, sdpa_flash=3.242, fa3="fa3_fwd: not importable\nTraceback:\n  line 2")])
    table = study.bandwidth_table(rows)
    assert list(table["x_best_peer"].round(4)) == [round(3.482 / 3.485, 4), round(4.179 / 4.186, 4),
                                                   round(3.502 / 3.374, 4)]  # labkit alone ran ahead at 64 x 1k
    assert study.behind_best_peer(table) == [
        "x_best_peer: labkit timed in the peers' rounds over the best peer, at 3 calls: behind at 2, 256 x 1024 x "
        "0.9983 (sdpa_cudnn), 64 x 1024 x 0.9991 (sdpa_cudnn); level or ahead at the other one (x 1.038)"]
    table.to_csv(tmp_path / "b.csv", index=False)
    assert len((tmp_path / "b.csv").read_text().splitlines()) == 4  # a header and one line per call
    # read back as lines: a traceback of three shows by its first line's type and its last
    assert study.peers_not_run(table) == ["fa3: no number at 8 x 8192: fa3_fwd: ... line 2"]


def test_the_bandwidth_table_puts_the_rounds_interval_after_x_best_peer_and_names_it_where_labkit_is_behind():
    """A sweep timed since peer_rates keeps the interval of the best peer's ratio per round: the table shows it after
    the ratio it bounds, and the behind line gives it beside each call (a call without one, as older sweeps, as
    before)."""
    from labkit.workloads.decode import study

    rows = pd.DataFrame([
        dict(batch=64, kv_len=1024, kv_MB=268.4, p50_us=76.67, TBps=3.501, labkit_beside_peers=3.482,
             sdpa_cudnn=3.485, x_best_peer_low=0.9952, x_best_peer_high=1.0031, sdpa_flash=2.35),
        dict(batch=16, kv_len=4096, kv_MB=268.4, p50_us=77.0, TBps=3.49, labkit_beside_peers=3.40,
             sdpa_cudnn=3.49, sdpa_flash=3.1),
        dict(batch=8, kv_len=8192, kv_MB=268.4, p50_us=76.58, TBps=3.505, labkit_beside_peers=3.502,
             sdpa_cudnn=3.374, x_best_peer_low=1.031, x_best_peer_high=1.044, sdpa_flash=3.242)])
    table = study.bandwidth_table(rows)
    assert list(table.columns[-3:]) == ["x_best_peer", "x_best_peer_low", "x_best_peer_high"]
    assert study.behind_best_peer(table) == [
        "x_best_peer: labkit timed in the peers' rounds over the best peer, at 3 calls: behind at 2, 16 x 4096 x "
        "0.9742 (sdpa_cudnn), 64 x 1024 x 0.9991 (sdpa_cudnn; 95 % 0.995-1.003); level or ahead at the other one "
        "(x 1.038)"]


def test_a_call_behind_by_under_a_hundredth_of_a_percent_is_said_under_one():
    """Notebook 03 on an H100 printed "behind at 4, ..., 256 x 1024 x 1.0000": four decimals rounded x 0.99996 up
    to level."""
    from labkit.workloads.decode import study

    rows = pd.DataFrame([dict(batch=256, kv_len=1024, kv_MB=1073.7, p50_us=357.0, TBps=3.007,
                              labkit_beside_peers=3.00788, sdpa_cudnn=3.008, sdpa_flash=2.549)])
    line, = study.behind_best_peer(study.bandwidth_table(rows))
    assert line.endswith("behind at 1, 256 x 1024 x 0.99996 (sdpa_cudnn)"), line


def test_a_peer_s_recorded_compile_error_is_cut_at_a_word_said_what_it_means_and_where_it_is_whole():
    """Found by a notebook review: "flex_paged: no number at 64 x 32768: InductorError: SubprocException: An exception
    occurred in a subprocess: ... Set TORCHDYNAMO_VERBO..." was cut mid-word and said neither what failed nor where
    the rest is. The recorded reason (data/runs keeps it as it was written) reads as torch.compile's failure, without
    torch's advice, and names where the reason is kept; a reason that shows whole names no file."""
    from labkit.workloads.decode import study

    recorded = ("InductorError: SubprocException: An exception occurred in a subprocess: ... Set TORCHDYNAMO_VERBOSE=1 "
                "for the internal stack trace (please do this especially if you're reporting a bug to PyTorch). ...")
    table = pd.DataFrame({"batch": [64, 1], "kv_len": [32768, 1024], "TBps": [4.5, 0.4],
                          "peers_not_run": [f"flex_paged: {recorded}", "fa3: not importable; with a '; ' inside"]})
    lines = study.peers_not_run(table, saved_in="data/bandwidth.csv, peers_not_run")
    assert lines[0] == ("flex_paged: no number at 64 x 32768: torch.compile failed for FlexAttention at this shape: "
                        "InductorError: SubprocException: An exception occurred in a subprocess: ... (shortened; as "
                        "recorded, itself cut: data/bandwidth.csv, peers_not_run)")  # a record before whole messages
    assert lines[1] == "fa3: no number at 1 x 1024: not importable; with a '; ' inside"  # one note: no peer after '; '
    # a new run's whole message: its type and the cause (the last line before torch's advice), cut at a word
    whole = ("InductorError: SubprocException: An exception occurred in a subprocess:\n\nTraceback (most recent call "
             "last):\n  File x.py, line 3\ntriton.runtime.errors.OutOfResources: out of resource: shared memory, "
             "Required: 262144, Hardware limit: 232448\n\nSet TORCHDYNAMO_VERBOSE=1 for the internal stack trace")
    (line,) = study.peers_not_run(pd.DataFrame({"batch": [64], "kv_len": [32768], "peers_not_run": [
        f"flex_paged: {whole}"]}), saved_in="data/bandwidth.csv")
    shown = line.split(" at this shape: ")[1].removesuffix(" (shortened; the whole reason: data/bandwidth.csv)")
    assert shown.startswith("InductorError: ... triton.runtime.errors.OutOfResources: out of resource: shared memory")
    assert shown.endswith(" ...") and len(shown) <= 100 and "TORCHDYNAMO" not in line
    assert shown.removesuffix(" ...").split()[-1] in whole.split()  # cut after a whole word


def test_a_kernel_that_writes_nan_gives_a_correctness_row_a_json_file_holds(tmp_path, monkeypatch):
    """Found by a review: a NaN in the output made ``max_abs_err`` NaN, which the strict writer of a live measurement
    refuses, so notebook 03 would have died just where its table should say the case is out of bound."""
    from types import SimpleNamespace

    import numpy as np

    from labkit.session import Session
    from labkit.workloads.decode import decode_reference, study

    def fake_run(x, *, splits):  # the exact answer, one element NaN where splits > 1; the rows past cu_seqlens_q NaN
        out = decode_reference(x, x.geometry.head_dim ** -0.5).astype(np.float32)
        out[int(x.cu_seqlens_q[-1]):] = np.nan
        if splits > 1:
            out[0, 0, 0] = np.nan
        return SimpleNamespace(out=out)

    monkeypatch.setattr(study, "CASES", dict(list(study.CASES.items())[:1]))
    monkeypatch.setattr(study, "run_decode", fake_run)
    (tmp_path / "data").mkdir()
    rows = Session("nbx", "live", tmp_path, None, "test").measure("correctness", study.correctness)
    exact, poisoned = rows
    assert exact["within_bound"] and exact["nonfinite"] == 0 and exact["max_abs_err"] < 1e-6
    assert not poisoned["within_bound"] and poisoned["nonfinite"] == 1 and poisoned["max_abs_err"] is None
    import pandas as pd

    shown = study.shown_correctness(pd.DataFrame(rows))  # what notebook 03 shows of them
    assert shown["within_bound"].tolist() == ["yes", "no"] and shown["unwritten_rows_untouched"].tolist() == ["yes"] * 2
    assert shown["max_abs_err"].iloc[1] == "none (non-finite)" and float(shown["max_abs_err"].iloc[0]) < 1e-6


def test_the_copy_ceiling_is_the_copy_probes_gb_s_in_tb_s(monkeypatch):
    """The bandwidth figure's reference line is in TB/s, as its rates are: the probe's 4200 GB/s is 4.2, not 4.2e6."""
    import labkit.probes
    from labkit.workloads.decode import study

    monkeypatch.setattr(labkit.probes, "copy_ceiling_GBps", lambda mode="cold": 4200.0)
    assert study.copy_ceiling() == {"TBps": 4.2}


def test_the_notebooks_lookups_take_the_row_of_that_batch_and_kv_len():
    """The spread's build and this run's rate come from the bandwidth table's row of both the batch and the kv_len,
    not from a row that shares one of them; a call the sweep did not time has none."""
    from labkit.workloads.decode import study

    table = pd.DataFrame({"batch": [1, 8, 8], "kv_len": [8192, 1024, 8192],
                          "kernel": ["mma w4s3ef", "mma w8s1", "mma w8s2 cl2"], "TBps": [1.76, 2.9, 3.46],
                          "labkit_beside_peers": [1.7, None, 3.4]})
    assert study.table_kernel(table, 8, 8192) == "mma w8s2 cl2" and study.table_kernel(table, 64, 8192) is None
    assert study.table_rate(table, 8, 8192) == 3.46 and study.table_rate(table, 8, 8192, beside_peers=True) == 3.4
    assert study.table_rate(table, 8, 1024, beside_peers=True) is None and study.table_rate(table, 1, 1024) is None
    assert study.peers_not_run(table) == []  # no peers_not_run column: no peer had a reason


def test_a_peer_timed_at_one_point_of_the_sweep_keeps_its_column():
    """Found by a review: under pandas 3, astype(str) kept NaN missing, so a peer with a number at one point (Flex at
    its points, a peer that ran once) read as one value in every row and its column was hidden."""
    import pandas as pd

    from labkit.workloads.decode import study

    rows = pd.DataFrame([
        dict(batch=64, kv_len=1024, head_dim=128, splits=1, splits_used=1, kernel="mma w4s1c1", kv_MB=268.4,
             p50_us=75.0, TBps=3.58, sdpa_cudnn=3.5),
        dict(batch=64, kv_len=8192, head_dim=128, splits=1, splits_used=1, kernel="mma w4s1c1", kv_MB=2147.5,
             p50_us=490.0, TBps=4.38, sdpa_cudnn=4.3, flex_paged=4.12)])
    shown = study.shown(study.bandwidth_table(rows))
    # a point the peer has no number at shows "-", as the spread's table does (NaN read as a failed number: a review)
    assert "flex_paged" in shown and list(shown["flex_paged"]) == ["-", 4.12]
    assert list(shown["sdpa_cudnn"]) == [3.5, 4.3]  # a peer with a number at every point stays numbers
    assert "head_dim" not in shown  # one value in every row: said by the title


def test_a_sweep_that_notebook_03_narrows_to_one_point_or_to_none_reads_as_the_full_one_does(tmp_path):
    """Found by a notebook review of recorded subsets (and as true live): every asked point skipped (256 x 32k, over
    9 GB) failed the cell on a KeyError; one point showed every setting as a column and kept a skipped row's index;
    points none of which Flex times lost the column without a word; a sweep without the spread's call placed the run
    among every build's runs."""
    import matplotlib

    matplotlib.use("Agg")
    from labkit import plot
    from labkit.workloads.decode import labels, study
    from labkit.workloads.decode.plan import plan_call
    from labkit.workloads.decode.run import geometry_for

    settings = dict(head_dim=128, page_size=64, heads_q=32, heads_kv=8, iterations=20, peers=True, heads="32/8",
                    mode="cold")
    skipped = pd.DataFrame([dict(batch=256, kv_len=32768, **settings, skipped="34.4 GB of K+V is over 9 GB")])
    table = study.bandwidth_table(skipped)
    assert table.empty and study.bandwidth_fit(table) == (None, "no fit: 0 calls of 100 MB or more (3 needed)")
    fig = plot.decode_bandwidth(table.to_dict("records"), 4.2)
    assert [t.get_text() for t in fig.axes[0].texts] == [
        "no call of the sweep was measured (skipped: the lines below say why)"]
    assert study.skipped(skipped) == ["skipped: batch 256 x 32768: 34.4 GB of K+V is over 9 GB"]
    assert study.table_kernel(table, 64, 8192) is None and study.table_rate(table, 64, 8192) is None
    plan = plan_call(geometry_for(64, 8192))
    assert study.spread_kernel(table, 64, 8192, head_dim=128, page_size=64, heads_q=32, heads_kv=8) == \
        labels.plan_label(plan)

    one = pd.concat([skipped, pd.DataFrame([dict(batch=1, kv_len=1024, **settings, splits=8, splits_used=8,
                                                 kernel="mma w8s1ef cl8 pp", kv_MB=4.19, p50_us=9.26, TBps=0.453,
                                                 sdpa_cudnn=0.351, labkit_beside_peers=0.445)])], ignore_index=True)
    table = study.bandwidth_table(one)
    assert list(table.index) == [0] and list(table["peers_not_run"]) == [
        "flex_paged: run only at the 5 points the targets name (compiled per shape)"]
    assert study.peers_not_run(table) == [
        "flex_paged: no number at 1 x 1024: run only at the 5 points the targets name (compiled per shape)"]
    assert list(study.shown(table).columns) == ["batch", "kv_len", "splits", "kernel", "kv_MB", "p50_us", "TBps",
                                                "sdpa_cudnn", "labkit_beside_peers", "x_best_peer"]
    assert study.behind_best_peer(table) == ["x_best_peer: labkit timed in the peers' rounds over the best peer, at 1 "
                                             "call: level or ahead at every one (x 1.268-1.268)"]
    assert study.spread_kernel(table, 1, 1024) == "mma w8s1ef cl8 pp"  # the sweep's own build where it timed the call


def test_the_manifest_table_keeps_the_seeds_entry_whole_and_shows_it_cut_with_a_mark(tmp_path):
    """A review: the seed's 130-character entry name was cut at 48 with no mark, in the table and in its CSV, where it
    read as another kernel's whole name."""
    import json as _json

    from labkit.workloads.decode import study

    from ..conftest import ROOT

    seed = ROOT / "data" / "trtllm_gen_decode_manifest_v4.json"
    frame = pd.DataFrame(study.manifest_comparison(seed, tmp_path))
    (whole,) = _json.loads(seed.read_text())["modules"]  # the seed's one module, named as its entry
    entry = frame.loc[0, "entry"]
    assert entry == whole and len(entry) == 100
    shown = study.shown_manifests(frame)
    assert shown.loc[0, "entry"] == entry[:study.ENTRY_SHOWN] + "…"
    assert shown.loc[1, "entry"] == frame.loc[1, "entry"] == "paged_decode"  # a short name stays as it is
