"""labkit's decode manifests cross-checked before any launch (``labkit.workloads.decode.manifest_rules``).

Found by a CLI review: a labkit-paged-decode manifest whose packed constants and buffers disagreed (max_q_len 3 over 2
rows of q, 4-byte split scratch, a page table of another shape) passed ``manifest check`` with no error, so ``manifest
run`` would have launched it on a Hopper GPU. Each disagreement is now an error naming the field and both numbers.
"""

import json

import pytest

from labkit import cli
from labkit.manifest import check, load
from labkit.workloads.decode import DecodeGeometry, build
from labkit.workloads.decode.build import BATCH_AT, MAX_PAGES_AT, MAX_Q_LEN_AT
from labkit.workloads.decode.plan import plan_call


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """Manifests labkit writes: a 2-split call of 2 x 128 tokens, the 4-split 4-warp build at 8 x 8k (splits meet
    in global memory), the plan's cluster of 8 at 1 x 8k (they meet in shared memory), a causal q_len 4, and the seed's
    interleaved layout."""
    d = tmp_path_factory.mktemp("built")
    out = {"two": build(DecodeGeometry(2, 32, 8, 128, 64, 2, 4), 2, d / "two"),
           "global": build(DecodeGeometry(8, 32, 8, 128, 64, 128, 1024), 4, d / "global")}
    g = DecodeGeometry(1, 32, 8, 128, 64, 128, 128)
    plan = plan_call(g)
    assert plan.kernel.cluster_splits == 8
    out["cluster"] = build(g, plan.splits, d / "cluster", kernel=plan.kernel)
    out["causal"] = build(DecodeGeometry(3, 24, 4, 256, 64, 11, 33, max_q_len=4), 2, d / "causal")
    out["interleaved"] = build(DecodeGeometry(2, 24, 4, 256, 64, 11, 22, layout="interleaved"), 2, d / "inter")
    return out


def _changed(path, change, tmp_path) -> str:
    """``path``'s manifest changed by ``change``, beside its cubin (found there, as a built one is)."""
    doc = json.loads(path.read_text())
    change(doc)
    to = path.parent / f"changed_{tmp_path.name}.json"
    to.write_text(json.dumps(doc))
    return str(to)


def _field(doc, at):
    return next(f for f in doc["ops"]["decode"]["impl"]["launches"][0]["args"][0]["pack"]["fields"] if f["at"] == at)


def _errors(path, **vars) -> list[str]:
    return [str(e) for e in check(load(path), vars=vars or None).errors]


def test_every_manifest_labkit_writes_passes(built):
    for name, path in built.items():
        res = check(load(path))
        assert res.ok and not [i for i in res.issues if i.severity != "note"], (name, [str(i) for i in res.issues])


def test_max_q_len_past_the_q_and_out_rows_is_refused(built, tmp_path):
    errs = _errors(_changed(built["two"], lambda d: _field(d, MAX_Q_LEN_AT).update(i32=3), tmp_path))
    assert len(errs) == 2, errs
    assert errs[0] == ("error: ops.decode.impl.launches[0].args[0].pack.fields[2]: q is [2, 32, 128]; the kernel "
                       "takes [rows >= batch x max_q_len = 6, heads_kv x group = 32, head_dim]")
    assert "pack.fields[3]: out is [2, 32, 128]" in errs[1]


def test_split_scratch_too_small_for_splits_that_meet_in_global_memory_is_refused(built, tmp_path):
    def shrink(doc):
        for s in doc["ops"]["decode"]["impl"]["scratch"].values():
            s["shape"] = [1]
    errs = _errors(_changed(built["global"], shrink, tmp_path))
    assert errs == [
        "error: ops.decode.impl.scratch.counter: 4 B; 4 splits meet through it: the kernel writes at least 256 B "
        "(one u32 per unit (64))",
        "error: ops.decode.impl.scratch.partial_ml: 4 B; 4 splits meet through it: the kernel writes at least "
        "8192 B ((max, sum) f32 per split and row)",
        "error: ops.decode.impl.scratch.partial_o: 4 B; 4 splits meet through it: the kernel writes at least "
        "524288 B (128 f32 per split and row)"]
    # the cluster build's splits meet in shared memory: one element each is what labkit writes, and right
    assert json.loads(built["cluster"].read_text())["ops"]["decode"]["impl"]["scratch"]["partial_o"]["shape"] == [1]
    assert _errors(built["cluster"]) == []
    cubins = {name: check(load(built[name])).modules["decode"].info.entries["paged_decode"] for name in built}
    assert cubins["cluster"].cluster_dims == (8, 1, 1) and cubins["global"].cluster_dims is None  # read off the ELF


def test_a_page_table_of_another_shape_or_a_batch_past_the_buffers_is_refused(built, tmp_path):
    errs = _errors(_changed(built["two"], lambda d: _field(d, MAX_PAGES_AT).update(i32=64), tmp_path))
    assert errs == ["error: ops.decode.impl.launches[0].args[0].pack.fields[4]: table is [2, 2]; the kernel reads it "
                    "as [batch, max_pages] = [2, 64] (the constants at bytes 320 and 332)"]
    errs = _errors(_changed(built["two"], lambda d: d["buffers"]["table"].update(shape=[1, 1]), tmp_path))
    assert len(errs) == 1 and "table is [1, 1]" in errs[0]
    errs = _errors(_changed(built["two"], lambda d: _field(d, BATCH_AT).update(i32=3), tmp_path))
    assert [e.split(": ", 2)[1] for e in errs] == [f"ops.decode.impl.launches[0].args[0].pack.fields[{i}]"
                                                  for i in (4, 5, 6, 2, 3)]
    assert "reads 16 B (batch + 1 = 4 query offsets, i32) of cuq, which has 12 B" in errs[2]


def test_more_sequences_on_the_grid_than_the_page_table_holds_is_refused(built, tmp_path):
    path = _changed(built["two"], lambda d: d["vars"]["seqs"].update(max=3), tmp_path)
    assert _errors(path, seqs=2) == []
    assert _errors(path, seqs=3) == ["error: ops.decode.impl.launches[0].grid[2]: seqs = 3 sequences, but the page "
                                     "table and lengths hold batch 2"]


def test_a_constant_missing_or_below_one_is_refused(built, tmp_path):
    def drop(doc):
        fields = doc["ops"]["decode"]["impl"]["launches"][0]["args"][0]["pack"]["fields"]
        fields.remove(_field(doc, MAX_Q_LEN_AT))
    errs = _errors(_changed(built["two"], drop, tmp_path))
    assert errs == ["error: ops.decode.impl.launches[0].args[0].pack: the kernel reads max_q_len from byte 336 of the "
                    "parameter block: no i32 there"]
    errs = _errors(_changed(built["two"], lambda d: _field(d, BATCH_AT).update(i32=0), tmp_path))
    assert errs == ["error: ops.decode.impl.launches[0].args[0].pack.fields[10]: batch 0: expected 1 or more"]


def test_the_cli_refuses_it_in_one_line_before_any_gpu_work(built, tmp_path, capsys):
    path = _changed(built["two"], lambda d: _field(d, MAX_Q_LEN_AT).update(i32=3), tmp_path)
    assert cli.main(["manifest", "run", path]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "2 error(s), nothing launched: " in err, err
    assert "q is [2, 32, 128]; the kernel takes [rows >= batch x max_q_len = 6" in err
