"""`labkit decode plans`: the plan over a batch x kv_len grid, each cell the build plan_call gives that call, and the
README's copy of the default grid, which must stay the command's output."""

import dataclasses
import json
import re

import pytest

from labkit import cli
from labkit.errors import ArgumentError
from labkit.values import parse_int_list
from labkit.workloads.decode.geometry import kernel_label
from labkit.workloads.decode.labels import TERMS, label_parts
from labkit.workloads.decode.plan import plan_call
from labkit.workloads.decode.plan_map import DEFAULT_BATCHES, DEFAULT_KV_LENS, plan_map
from labkit.workloads.decode.run import geometry_for

from ..conftest import ROOT


def _cells(out: str) -> dict[tuple[int, str], str]:
    """The printed table's cells by (batch, column head), cut at the heads' offsets (the columns are flush left)."""
    lines = out.splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("batch "))
    head = lines[at]
    starts = [m.start() for m in re.finditer(r"\S+", head)]
    names = head.split()
    cells = {}
    for line in lines[at + 1:]:
        if not re.match(r"\s*\d+  ", line):
            break
        parts = [line[a:b].strip() for a, b in zip(starts, starts[1:] + [None])]
        cells.update({(int(parts[0]), name): part for name, part in zip(names[1:], parts[1:])})
    return cells


def _expected(b: int, n: int, **shape) -> str:
    """The cell for batch ``b`` x ``n`` tokens, from plan_call and kernel_label directly."""
    p = plan_call(geometry_for(b, n, **shape))
    tail = f" ({p.tail_units} units)" if p.tail_units else ""
    return f"{kernel_label(p.kernel).removeprefix('mma ')}{tail} x{p.splits} {p.ctas_per_sm}/SM"


def test_every_cell_of_the_default_grid_is_plan_calls_choice(capsys):
    assert cli.main(["decode", "plans"]) == 0
    out = capsys.readouterr().out
    cells = _cells(out)
    heads = {1024: "1k", 2048: "2k", 8192: "8k", 32768: "32k"}
    assert set(cells) == {(b, heads[n]) for b in DEFAULT_BATCHES for n in DEFAULT_KV_LENS}
    for b in DEFAULT_BATCHES:
        for n in DEFAULT_KV_LENS:
            assert cells[b, heads[n]] == _expected(b, n), (b, n)
    # a few cells by hand, so that a change to the plan's rules shows here as well as in the README's copy
    assert cells[1, "8k"] == "w8s3ef cl8 pp x8 1/SM" and cells[8, "8k"] == "w8s2 cl2 pp x2 1/SM"
    assert cells[17, "8k"] == "w4s3 tail/16 (4 units) x1 2/SM" and cells[24, "8k"] == "w4s1 x2 3/SM"
    assert cells[64, "1k"] == "w4s1c1 x1 4/SM"


def test_another_geometry_says_which_and_its_cells_are_plan_calls_too(capsys):
    shape = dict(heads_q=64, heads_kv=8, head_dim=256, page_size=16)
    assert cli.main(["decode", "plans", "--batch", "1,3,12", "--kv-len", "100,4k", "--heads-q", "64", "--heads-kv",
                     "8", "--head-dim", "256", "--page-size", "16"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("decode plans: d256, 64/8 heads, pages of 16, planned for the H200 (sm_90, 132 SMs, 60 MiB "
                          "L2)\n")
    cells = _cells(out)
    assert set(cells) == {(b, n) for b in (1, 3, 12) for n in ("100", "4k")}
    for b in (1, 3, 12):
        for n, head in ((100, "100"), (4096, "4k")):
            assert cells[b, head] == _expected(b, n, **shape), (b, n)


def test_the_table_is_followed_by_the_legend_of_the_parts_its_builds_use(capsys):
    assert cli.main(["decode", "plans"]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert lines[1].startswith("each call's build as decode tables name it (every one mma, left off)")
    legend = " ".join(out[out.index("\nkernel: "):].split())  # the legend's lines, joined where they wrapped
    labels = plan_map().to_frame()["kernel"]
    used = set().union(*(label_parts(k) for k in labels))
    assert used == {"mma", "w", "s", "c", "ef", "cl", "tail", "pp"}
    for key, text in TERMS.items():
        assert (text in legend) is (key in used), key
    assert max(map(len, lines)) == max(len(line) for line in lines if re.match(r"\s*\d+  ", line))  # none wider


def test_the_map_is_a_frame_of_one_row_per_call():
    m = plan_map((1, 24), (2048,), head_dim=128)
    frame = m.to_frame()
    assert list(frame.columns) == ["head_dim", "heads", "page_size", "batch", "kv_len", "kernel", "splits",
                                   "ctas_per_sm"]
    assert frame[["batch", "kernel", "splits", "ctas_per_sm"]].values.tolist() == [
        [1, "mma w8s2ef cl8 pp", 8, 1], [24, "mma w4s1", 2, 3]]
    assert (m.batches, m.kv_lens) == ((1, 24), (2048,))
    assert frame.attrs["planned_for"] == m.planned_for and "H200" in m.planned_for  # which GPU, kept with the rows


@pytest.mark.parametrize("argv,message", [
    (["--kv-len", "0"], "labkit decode plans: --kv-len 0: expected 1..2147483392"),
    (["--kv-len", "1k,0"], "labkit decode plans: --kv-len 0: expected 1..2147483392"),
    # the item as typed: "'8k': expected an integer" had named a valid length as the fault
    (["--kv-len", "8kk"], "labkit decode plans: --kv-len '8kk': expected an integer, or whole 1024s "
                          "such as 8k"),
    (["--kv-len", "1.5k"], "labkit decode plans: --kv-len '1.5k': expected an integer, or whole "
                           "1024s such as 8k"),
    (["--kv-len", "0k"], "labkit decode plans: --kv-len in k (1024) 0: expected 1..2097151"),
    # a README walk-through: '8q' said only "expected an integer", where 8k is one too
    (["--kv-len", "8q"], "labkit decode plans: --kv-len '8q': expected an integer, or whole 1024s such as 8k"),
    (["--head-dim", "100"], "labkit decode plans: decode geometry: head_dim 100: the decode kernel takes 128, 256"),
    (["--batch", "x"], "labkit decode plans: --batch 'x': expected an integer"),
    (["--kv-len", "1k,"], "labkit decode plans: --kv-len '1k,': an empty item; expected values "
                          "separated by single commas"),
    (["--batch", "1,2,1"], "labkit decode plans: --batch '1,2,1': 1 given twice; expected each "
                           "value once"),
    (["--page-size", "48"], "labkit decode plans: decode geometry: page_size 48: expected one of 16, 32, 64"),
    (["--batch", "100000"], "labkit decode plans: batch 100000 x kv_len 1024: decode geometry: batch 100000, "
                            "heads_kv 8: grid y and z take "
                            "at most 65535"),
])
def test_wrong_input_is_one_line_naming_it_and_exit_2(argv, message, capsys):
    assert cli.main(["decode", "plans", *argv]) == 2
    out, err = capsys.readouterr()
    assert (out, err) == ("", f"labkit: error: {message}\n")


def test_the_library_refuses_what_the_cli_does():
    with pytest.raises(ArgumentError, match=r"^batches \[\]: expected one or more values, each once$"):
        plan_map((), (1024,))
    with pytest.raises(ArgumentError, match=r"^kv_lens \[1024, 1024\]: expected one or more values, each once$"):
        plan_map((1,), (1024, 1024))
    with pytest.raises(ArgumentError, match=r"^decode geometry: heads_q 30 is not a multiple of heads_kv 8$"):
        plan_map(heads_q=30)


def test_lists_take_lengths_in_1024s_as_the_tables_print_them():
    assert parse_int_list("1k, 8K,100", what="--kv-len", hi=1 << 20, kilo=True) == (1024, 8192, 100)
    assert parse_int_list("17", what="--batch", hi=100) == (17,)
    with pytest.raises(ArgumentError, match=r"^--batch '1k': expected an integer$"):
        parse_int_list("1k", what="--batch", hi=1 << 20)  # batches are counts, not lengths
    with pytest.raises(ArgumentError, match=r"^--kv-len '1k,1024': 1024 given twice; expected each value once$"):
        parse_int_list("1k,1024", what="--kv-len", hi=1 << 20, kilo=True)


def test_gpu_plans_for_the_gpu_at_hand_and_says_so(monkeypatch, capsys):
    """An H100's 50 MiB L2 takes evict_first off 5 x 8k (168 MB), which the H200's 60 MiB keeps; without a GPU --gpu
    plans for the H200 and says why."""
    import labkit.cuda
    import labkit.device
    import labkit.sched.clusters
    from labkit.workloads.decode.plan import H200_CLUSTER_CTAS

    argv = ["decode", "plans", "--batch", "5", "--kv-len", "8k", "--gpu"]
    monkeypatch.setattr(labkit.cuda, "gpu_status", lambda: (False, "faked"))
    assert cli.main(argv) == 0
    out = capsys.readouterr().out
    assert "planned for the H200 (sm_90, 132 SMs, 60 MiB L2): no GPU here" in " ".join(out.split())
    assert _cells(out)[5, "8k"] == "w8s2ef pp x3 1/SM"
    h200 = sorted((ROOT / "data" / "runs").glob("*-00_device_and_timing"))[0] / "data" / "device.json"
    h100 = dataclasses.replace(labkit.device.DeviceInfo.from_dict(json.loads(h200.read_text())),
                               name="NVIDIA H100 80GB HBM3", l2_bytes=50 << 20)
    monkeypatch.setattr(labkit.cuda, "gpu_status", lambda: (True, "faked"))
    monkeypatch.setattr(labkit.device, "describe", lambda *a, **k: h100)
    monkeypatch.setattr(labkit.sched.clusters, "resident_cluster_ctas", lambda index=0: dict(H200_CLUSTER_CTAS))
    assert cli.main(argv) == 0
    out = capsys.readouterr().out
    assert "planned for this GPU, NVIDIA H100 80GB HBM3" in out and _cells(out)[5, "8k"] == "w8s2 pp x3 1/SM"


def test_the_readmes_plan_block_is_the_commands_output(capsys):
    """The README's Decode section shows `labkit decode plans` (the default grid); a change to the plan, its labels or
    the command's output must come with the README's copy, which is pasted from the command, not typed."""
    readme = (ROOT / "README.md").read_text()
    block = re.search(r"\n( *)```text\n\1\$ labkit decode plans\n(.*?)\n\1```\n", readme, re.S)
    assert block is not None, "README: no ```text block that starts with '$ labkit decode plans'"
    shown = "\n".join(line.removeprefix(block[1]) for line in block[2].split("\n"))  # the list item's indent
    assert cli.main(["decode", "plans"]) == 0
    assert shown + "\n" == capsys.readouterr().out
