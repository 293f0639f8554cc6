"""The decode tables' kernel column in words: every label the code writes reads back into its parts, and the CLI's
tables say what the parts they show mean."""

import dataclasses

import pytest

from labkit import cli
from labkit.workloads.decode.geometry import KernelBuild, kernel_label
from labkit.workloads.decode.labels import TERMS, label_parts, legend

from ..conftest import ROOT

BASE = KernelBuild("mma", rows_per_warp=16, row_warps=1, keys_per_warp=16, stages=3, head_dim=128, page_size=64)


@pytest.mark.parametrize("changes,parts", [
    ({}, {"mma", "w", "s"}),
    ({"stages": 1, "qk_chains": 1}, {"mma", "w", "s", "c"}),
    ({"warps": 8, "dim_warps": 2, "kv_evict_first": True, "cluster_splits": 8, "wide_boxes": True},
     {"mma", "w", "d", "s", "ef", "cl", "wide"}),
    ({"keys_per_warp": 32, "tail_splits": 4, "page_prefetch": True}, {"mma", "w", "s", "k", "tail", "pp"}),
    ({"persistent_ctas": 132, "row_boxes": True}, {"mma", "w", "s", "P", "rows"}),
    ({"page_prefetch": True, "padded_rows": True}, {"mma", "w", "s", "pp", "pad"}),
    ({"variant": "fma", "row_warps": 2, "stages": 2}, {"fma", "r", "s"}),
])
def test_every_label_the_code_writes_reads_back_into_its_parts(changes, parts):
    label = kernel_label(dataclasses.replace(BASE, **changes))
    assert label_parts(label) == parts, label
    assert label_parts(label + " (48 units)") == (parts if "tail" in parts else None)  # the bench's tail count


def test_labels_of_older_records_are_named_as_such_not_misread():
    assert label_parts("mma/1") is None and label_parts("mma w4s3 bal") is None
    assert legend(["mma/1", "mma w4s1c1", "mma/1"]) == [
        "kernel: " + "; ".join(TERMS[k] for k in ("mma", "w", "s", "c")),
        "kernel mma/1: an older label this labkit does not spell out"]


def test_report_show_spread_and_diff_spell_out_the_builds_they_name(capsys):
    """Found by a user of the CLI: `mma w4s1c1`, `mma w8s3ef cl8 pp` in every decode table, and nothing under them
    said what w, s, c, ef, cl or pp meant (the README's table had the only legend)."""
    bench = ROOT / "data" / "runs" / "20261204T154500Z-decode_cold_clean" / "first" / "cold.json"
    assert cli.main(["report", "show", str(bench)]) == 0
    out = capsys.readouterr().out
    assert " mma w8s3ef cl8 pp " in out and " mma w4s3 tail/5 (48 units) " in out
    assert (f"\nkernel: {TERMS['mma']}; wN = N warps per CTA; sN = N K/V stages in flight per CTA; cN = N Q K^T "
            "accumulator chains (2 where no c); ef = K/V loads with L2 evict_first; clN = a unit's splits combined "
            "in a cluster of N; tail/N (M units) = the call's last M (sequence, KV head) units in N splits each; "
            "pp = page ids loaded a stage ahead\n") in out
    assert cli.main(["report", "spread", str(bench), "--point", "64x8k"]) == 0
    out = capsys.readouterr().out
    assert " mma w4s1c1 " in out and "\nkernel: mma = tensor cores (mma.sync); wN = N warps per CTA; sN = N K/V " \
        "stages in flight per CTA; cN = N Q K^T accumulator chains (2 where no c)\n" in out
    older = ROOT / "data" / "runs" / "20261201T062100Z-decode_bench" / "bench.json"  # its kernel column: mma/1
    assert cli.main(["report", "diff", str(older), str(bench)]) == 0
    out = capsys.readouterr().out
    assert "\nkernel mma/1: an older label this labkit does not spell out" in out
    assert "ef = K/V loads with L2 evict_first" in out  # B's builds of the paired calls


@pytest.mark.parametrize("args,line", [
    (["--batch", "16", "--kv-len", "4096"], "build mma w4s3 (as decode tables name it); grid: 128 CTAs (16 sequences x "
     "8 KV heads x 1 split) over 264 slots (132 SMs x 2): 0.48 waves"),
    (["--batch", "24", "--kv-len", "6000", "--page-size", "32"], "build mma w4s1 (as decode tables name it); grid: 384 "
     "CTAs (24 sequences x 8 KV heads x 2 splits) over 396 slots (132 SMs x 3): 0.97 waves"),
    (["--batch", "1", "--kv-len", "8192"], "build mma w8s3ef cl8 pp (as decode tables name it); grid: 64 CTAs (1 "
     "sequence x 8 KV heads x 8 splits) over the 120 of 132 slots (132 SMs x 1) that clusters of 8 fill at once: "
     "0.53 waves"),
    (["--batch", "72", "--kv-len", "8192"], "build mma w4s3 tail/5 (as decode tables name it); grid: 768 CTAs (72 "
     "sequences x 8 KV heads: 528 units x 1 split, the last 48 x 5) over 264 slots (132 SMs x 2): 2.91 waves"),
    (["--batch", "64", "--kv-len", "1024", "--head-dim", "256"], "build mma w8d2s2 P wide (as decode tables name it); "
     "grid: 132 CTAs (persistent: they claim the 512 units, 64 sequences x 8 KV heads, one at a time) over 132 slots "
     "(132 SMs x 1): 1.00 waves"),
])
def test_decode_build_names_its_build_as_the_tables_do_and_the_grid_it_launches(tmp_path, capsys, args, line):
    """Found by a CLI user asking what a call not in any record would do: decode build said "1 split, 4 warps x 3
    stages, 2 CTAs per SM" but not how many CTAs that makes, how many waves they take (`sched waves` needed the count
    from `manifest check`'s grid), nor the name the bench's tables would give the build."""
    import json

    assert cli.main(["decode", "build", *args, "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert f"\n  {line}\n" in out
    launch = json.loads(next(tmp_path.glob("decode_*.json")).read_text())["ops"]["decode"]["impl"]["launches"][0]
    grid = [int(args[1]) if d == "seqs" else d for d in launch["grid"]]
    assert f"grid: {grid[0] * grid[1] * grid[2]} CTAs (" in line  # the launch the manifest makes


def test_a_plans_label_is_its_builds_with_a_tails_units_after_it():
    """One place (labels.plan_label) for the bench's rows and `decode plans`' cells, which each had built it."""
    from labkit.workloads.decode.labels import plan_label
    from labkit.workloads.decode.plan import plan_call
    from labkit.workloads.decode.run import geometry_for

    tail = plan_call(geometry_for(17, 8192))
    assert tail.tail_units == 4 and plan_label(tail) == "mma w4s3 tail/16 (4 units)"
    assert plan_label(plan_call(geometry_for(64, 8192))) == "mma w4s1c1"
