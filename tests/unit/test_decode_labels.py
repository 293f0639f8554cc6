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
