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
from labkit.workloads.decode.build import BATCH_AT, HEADS_KV_AT, MAX_PAGES_AT, MAX_Q_LEN_AT, OUT_AT, Q_AT, build_plan
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
    g = DecodeGeometry(2, 32, 8, 128, 64, 128, 300)  # a tail build (1-D grid, splits meet in global memory)
    out["tail"] = build_plan(g, plan_call(g, variant="mma", splits=3, tail_units=5, tail_splits=8), d / "tail")
    g = DecodeGeometry(8, 32, 8, 128, 64, 16, 128)  # the timeline build: 6 u64 per CTA in its own scratch
    out["timeline"] = build_plan(g, plan_call(g, splits=4, timeline=True), d / "timeline")
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


def test_every_manifest_labkit_writes_passes(built, tmp_path):
    g = DecodeGeometry(8, 32, 8, 128, 64, 128, 1024)  # 5-D maps: head_dim's parts before the rows, or after them
    built = {**built, "rows": build_plan(g, plan_call(g, row_boxes=True), tmp_path / "rows")}
    built["padded"] = build_plan(g, plan_call(g, padded_rows=True), tmp_path / "padded")  # 4-D, unswizzled
    g = DecodeGeometry(8, 32, 8, 256, 64, 128, 1024)
    built["wide"] = build_plan(g, plan := plan_call(g), tmp_path / "wide")
    assert plan.kernel.wide_boxes
    # the builds the GPU tests run beside these (persistent CTAs, pages of 16 and 32, the fma kernel, the seed's
    # interleaved pool through 5-D maps): the K/V map and field rules hold every one
    for name, g, knobs in (("persistent", DecodeGeometry(3, 32, 4, 128, 32, 40, 130), dict(persistent=True, stages=2)),
                           ("p16", DecodeGeometry(4, 4, 4, 128, 16, 12, 60), dict(splits=3, stages=3)),
                           ("fma", DecodeGeometry(2, 32, 8, 128, 64, 4, 8), dict(variant="fma", splits=2)),
                           ("inter5d", DecodeGeometry(2, 24, 4, 256, 64, 11, 22, layout="interleaved"),
                            dict(splits=3, stages=1, wide_boxes=True))):
        built[name] = build_plan(g, plan_call(g, **knobs), tmp_path / name)
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
        "(a u32 per unit, 64 at least)",
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
    assert errs == ["error: ops.decode.impl.launches[0].args[0].pack.fields[4]: the kernel reads 512 B (batch 2 x "
                    "max_pages 64 page ids, i32) of table from byte 0, which has 16 B there"]
    errs = _errors(_changed(built["two"], lambda d: d["buffers"]["table"].update(shape=[1, 1]), tmp_path))
    assert len(errs) == 1 and "which has 4 B there" in errs[0]
    # a table of more rows is read within: fine; rows of another length put a sequence's ids elsewhere: a warning
    res = check(load(_changed(built["two"], lambda d: d["buffers"]["table"].update(shape=[3, 2]), tmp_path)))
    assert res.ok and not [i for i in res.issues if i.severity != "note"]
    res = check(load(_changed(built["two"], lambda d: d["buffers"]["table"].update(shape=[1, 4]), tmp_path)))
    assert res.ok and [str(i) for i in res.issues if "ids apart" in i.message] == [
        "warning: ops.decode.impl.launches[0].args[0].pack.fields[4]: table is [1, 4]: the kernel reads its rows "
        "max_pages = 2 ids apart, so the ids it takes for a sequence are not that row's"]
    errs = _errors(_changed(built["two"], lambda d: _field(d, BATCH_AT).update(i32=3), tmp_path))
    assert [e.split(": ", 2)[1] for e in errs] == [f"ops.decode.impl.launches[0].args[0].pack.fields[{i}]"
                                                  for i in (2, 3, 4, 5, 6)]
    assert "reads 16 B (batch + 1 = 4 query offsets, i32) of cuq from byte 0, which has 12 B there" in errs[4]


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


def _call_arg(doc, buf):
    return next(a for a in doc["programs"]["decode"]["calls"][0]["args"] if a.get("buf") == buf)


def test_offsets_grids_written_as_numbers_and_head_dims_are_held_too(built, tmp_path):
    """A review of the rule found these passing: out or the table bound past their start, a grid whose sequences are
    a number rather than the seqs var, q and out of another head_dim than the K/V maps'."""
    def out_at(doc):
        _call_arg(doc, "out")["offset"] = 4096
    errs = _errors(_changed(built["two"], out_at, tmp_path))
    assert errs == ["error: ops.decode.impl.launches[0].args[0].pack.fields[3]: the kernel writes 16384 B (batch x "
                    "max_q_len = 2 rows of 32 x 128 bf16) of out from byte 4096, which has 12288 B there"]

    def table_at(doc):
        _call_arg(doc, "table")["offset"] = 8
    assert "of table from byte 8, which has 8 B there" in _errors(_changed(built["two"], table_at, tmp_path))[0]

    def numeric_grid(doc):
        launch = doc["ops"]["decode"]["impl"]["launches"][0]
        launch["grid"][2] = 16
        doc["vars"] = {}
    errs = _errors(_changed(built["global"], numeric_grid, tmp_path))
    assert errs == ["error: ops.decode.impl.launches[0].grid[2]: 16 sequences, but the page table and lengths hold "
                    "batch 8"]

    def d64(doc):
        for name in ("q", "out"):
            doc["buffers"][name]["shape"][2] = 64
    errs = _errors(_changed(built["two"], d64, tmp_path))
    assert errs == ["error: ops.decode.impl.launches[0].args[0].pack.fields[2]: head_dim 64 (q's last dim): the K map "
                    "holds 8192 elements per page and head, not head_dim x a page of 16, 32, 64"]

    def out_d256(doc):
        doc["buffers"]["out"]["shape"][2] = 256
    assert _errors(_changed(built["two"], out_d256, tmp_path))[-1].endswith("out's head_dim 256 is not q's 128")

    def heads(doc):
        doc["buffers"]["q"]["shape"][1] = 16
    assert "q is [2, 16, 128]; the kernel takes" in _errors(_changed(built["two"], heads, tmp_path))[0]

    def flat(doc):
        doc["buffers"]["q"]["shape"] = [2, 32 * 128]
    assert "q is [2, 4096]; the kernel takes" in _errors(_changed(built["two"], flat, tmp_path))[0]
    errs = _errors(_changed(built["global"], lambda d: _field(d, HEADS_KV_AT).update(i32=3), tmp_path))
    assert "grid[1]: 8: expected heads_kv 3 x row blocks" in errs[-1]


def test_a_tail_build_s_and_a_timeline_build_s_scratch_are_held_to_what_the_kernel_writes(built, tmp_path):
    def shrink(name):
        return lambda doc: doc["ops"]["decode"]["impl"]["scratch"][name].update(shape=[1])
    assert _errors(built["tail"]) == [] and _errors(built["timeline"]) == []
    errs = _errors(_changed(built["tail"], shrink("partial_o"), tmp_path))
    assert errs == ["error: ops.decode.impl.scratch.partial_o: 4 B; 4 splits meet through it: the kernel writes at "
                    "least 32768 B (128 f32 per split and row)"]  # 16 units x (3 + 1) splits x 1 row, 128 f32
    errs = _errors(_changed(built["timeline"], lambda d: d["ops"]["decode"]["impl"]["scratch"]["timeline"].update(
        shape=[4, 6]), tmp_path))
    assert errs == ["error: ops.decode.impl.scratch.timeline: 192 B; the kernel records 6 u64 per CTA, 12288 B for 256 "
                    "CTAs"]


def test_a_clustered_or_tail_builds_grid_is_the_ctas_its_kernel_reads_back(built, tmp_path):
    """Found by a review: a clustered cubin's grid.x past its cluster (split = blockIdx.x indexed the cluster's shared
    arrays and out past their ends), and a tail build's 1-D grid of another count of CTAs (tail_unit() then gave some
    CTAs negative units), passed the check."""
    def grid_x(n):
        return lambda doc: doc["ops"]["decode"]["impl"]["launches"][0]["grid"].__setitem__(0, n)
    launch = "error: ops.decode.impl.launches[0].grid[0]: "
    assert _errors(_changed(built["cluster"], grid_x(16), tmp_path)) == [
        launch + "16: the cubin combines a unit's splits in a cluster of 8 CTAs, so the grid has 8 (more would index "
                 "past the cluster and out)"]
    doc = json.loads(built["tail"].read_text())
    ctas = doc["ops"]["decode"]["impl"]["launches"][0]["grid"][0]
    assert ctas == (16 - 5) * 3 + 5 * 8  # the plan's 16 units, the last 5 in 8 splits
    assert _errors(_changed(built["tail"], grid_x(ctas + 1), tmp_path)) == [
        launch + f"{ctas + 1} CTAs: 16 units (partial_o's shape) in 3 splits, the last u of them in 8, are (units - u) "
                 "x 3 + u x 8 CTAs for a u in 1..16, as the kernel's tail_unit() reads them back"]
    assert _errors(_changed(built["tail"], grid_x(ctas + 10), tmp_path)) == []  # 7 in the tail: another valid launch


def test_a_build_whose_buffers_no_manifest_can_hold_is_refused_before_nvrtc(tmp_path, monkeypatch):
    """Found by a review: --pool-pages kept the pool small while partial_o grew to 2.2 TB, and the written manifest
    was then refused by manifest check."""
    import sys

    from labkit.errors import ArgumentError

    builder = sys.modules["labkit.workloads.decode.build"]  # the module; the package's `build` is its function
    monkeypatch.setattr(builder, "compile_kernel", lambda *a: pytest.fail("compiled"))
    g = DecodeGeometry(16384, 64, 64, 128, 64, 256, 1024)
    with pytest.raises(ArgumentError, match=r"scratch.partial_o of \[1048576, 256, 16, 128\] f32 is 2.2 TB, over "):
        build(g, 256, tmp_path / "big")
    assert not (tmp_path / "big").exists()


def test_split_scratch_is_held_to_the_sequences_the_grid_launches(built, tmp_path):
    """The 4-split build at 8 x 1k with grid [4, 8, 1] written as numbers: one sequence's 8 (KV head) units, each split
    a partial of 4 rows (32 / 8 query heads, one token): 8 x 4 x 4 = 128 rows of 128 f32 = 65536 B at least; a
    numeric grid with a y of 8 is a split build as the seqs var's is (a mutation audit: no test had one)."""
    def one_sequence(partial_o_floats):
        def change(doc):
            doc["ops"]["decode"]["impl"]["launches"][0]["grid"][2] = 1
            doc["vars"] = {}
            doc["ops"]["decode"]["impl"]["scratch"]["partial_o"].update(shape=[partial_o_floats])
        return _changed(built["global"], change, tmp_path)

    assert _errors(one_sequence(128 * 128)) == []
    assert _errors(one_sequence(128 * 128 - 1)) == [
        "error: ops.decode.impl.scratch.partial_o: 65532 B; 4 splits meet through it: the kernel writes at least 65536 "
        "B (128 f32 per split and row)"]


def test_the_rule_follows_the_kernel_s_abi_not_the_model_label_and_needs_the_cubin_for_scratch(built, tmp_path):
    def relabel(doc):
        doc["model"] = "someone-else"
        for s in doc["ops"]["decode"]["impl"]["scratch"].values():
            s["shape"] = [1]
    assert len(_errors(_changed(built["global"], relabel, tmp_path))) == 3  # the same kernel, the same writes
    import dataclasses

    from labkit.manifest.families import matching

    launch = load(built["two"]).ops["decode"].launches[0]
    assert [r.__name__ for r in matching(launch)] == ["paged_decode"]
    other = dataclasses.replace(launch, args=(dataclasses.replace(launch.args[0], size=256),))
    assert matching(other) == []  # another block size: another ABI

    def no_cubin(doc):
        next(iter(doc["modules"].values()))["sha256"] = "0" * 64
        for s in doc["ops"]["decode"]["impl"]["scratch"].values():
            s["shape"] = [1]
    errs = _errors(_changed(built["global"], no_cubin, tmp_path))
    assert len(errs) == 1 and errs[0].startswith("error: modules.decode")  # the module's own error stops it


def test_index_buffers_scratch_and_timeline_one_element_short_are_refused(built, tmp_path):
    """One element under what the kernel touches is an error, the exact size is not (found by a test audit: 3 B per
    KV length, 7 B per timeline u64 and a 2-split build's scratch all passed, the shortfalls tried being larger)."""
    errs = _errors(_changed(built["global"], lambda d: d["buffers"]["seq"].update(shape=[7]), tmp_path))
    assert len(errs) == 1 and errs[0].endswith("the kernel reads 32 B (batch 8 KV lengths, i32) of seq from byte 0, "
                                               "which has 28 B there")

    def timeline(n):
        return lambda doc: doc["ops"]["decode"]["impl"]["scratch"]["timeline"].update(shape=[n])
    assert _errors(_changed(built["timeline"], timeline(256 * 6), tmp_path)) == []
    assert _errors(_changed(built["timeline"], timeline(256 * 6 - 1), tmp_path)) == [
        "error: ops.decode.impl.scratch.timeline: 12280 B; the kernel records 6 u64 per CTA, 12288 B for 256 CTAs"]

    def shrink(doc):
        for s in doc["ops"]["decode"]["impl"]["scratch"].values():
            s["shape"] = [1]
    assert check(load(built["two"])).modules["decode"].info.entries["paged_decode"].cluster_dims is None
    errs = _errors(_changed(built["two"], shrink, tmp_path))
    assert [e.split(":")[1].strip() for e in errs] == [f"ops.decode.impl.scratch.{n}" for n in
                                                      ("counter", "partial_ml", "partial_o")], errs
    assert all("2 splits meet through it" in e for e in errs)


def test_a_field_every_build_reads_left_out_or_of_another_kind_is_refused(built, tmp_path):
    """The rule reads q and out through their pointer fields; where one is missing it is checked, not crashed. Found
    by a mutation review: a deleted pointer or tensor map (q, page_table, k_map, the scratch pointers) was only
    validation's warning that a param is never packed, though the kernel then reads a null pointer or an all-zero
    map; it is an error, as the trtllm-gen rules make it."""
    def drop(at):
        def change(doc):
            doc["ops"]["decode"]["impl"]["launches"][0]["args"][0]["pack"]["fields"].remove(_field(doc, at))
        return change
    path = "ops.decode.impl.launches[0].args[0].pack"
    for at, name in ((Q_AT, "q"), (0, "k_map"), (272, "page_table"), (296, "partial_o"), (344, "scale_log2")):
        res = check(load(_changed(built["two"], drop(at), tmp_path)))
        assert f"error: {path}: {name} (byte {at}) is not packed: the kernel reads 0 there" in map(str, res.errors)
    def as_i32(doc):
        _field(doc, Q_AT).pop("param")
        _field(doc, Q_AT)["i32"] = 7
    errs = _errors(_changed(built["two"], as_i32, tmp_path))
    assert f"error: {path}.fields[2]: q: an i32 field where the kernel reads a param" in errs
    def scale(doc):
        _field(doc, 344)["i32"] = 0
    res = check(load(_changed(built["two"], scale, tmp_path)))
    assert res.ok and [str(i) for i in res.issues if i.severity == "warning"] == [
        f"warning: {path}.fields[16]: scale_log2 bits 0: expected a positive finite f32 (head_dim^-0.5 x log2(e))"]


def test_a_pointer_bound_to_a_buffer_of_another_dtype_is_refused(built, tmp_path):
    """Found by a mutation review: the page table's pointer bound to q (bf16) passed with a warning that the page
    table is never packed; the kernel would read q's bf16 bits as page ids."""
    def rebind(at, to):
        def change(doc):
            _field(doc, at)["param"] = _field(doc, to)["param"]
        return change
    path = "ops.decode.impl.launches[0].args[0].pack"
    errs = _errors(_changed(built["two"], rebind(272, Q_AT), tmp_path))
    said = "page_table is bound to q, a bf16 buffer: the kernel reads page ids there (i32)"
    assert any(e.startswith(f"error: {path}.fields[") and e.endswith(said) for e in errs), errs
    errs = _errors(_changed(built["two"], rebind(Q_AT, 272), tmp_path))
    assert any(e.endswith("q is bound to table, an i32 buffer: the kernel reads q there (bf16)") for e in errs), errs
    # a review: out on q, of q's dtype, had passed with a 'never packed' warning; the kernel would write over q
    errs = _errors(_changed(built["two"], rebind(OUT_AT, Q_AT), tmp_path))
    assert any(e.endswith("out and q are both bound to q at byte 0: the kernel takes them as different tensors")
               for e in errs), errs


def test_the_k_and_v_maps_are_held_to_the_boxes_every_build_loads(built, tmp_path):
    """Found by a mutation review: a K/V box of 65 rows (past a page), a 1-D map, swizzle 0 or a V map unlike K's
    passed with no issue; the kernel would overrun shared memory, hang on its barrier or read unswizzled tiles."""
    def maps(**change):
        def apply(doc):
            for at in (0, 128):
                _field(doc, at)["tensormap"].update(change)
        return apply
    tm = "ops.decode.impl.launches[0].args[0].pack.fields[0].tensormap"
    errs = _errors(_changed(built["two"], maps(box=[64, 65, 1, 1]), tmp_path))
    assert errs[0] == (f"error: {tm}.box: [64, 65, 1, 1]: the map's [128, 64, 8, 4] in whole boxes (a page's rows a "
                       "whole number of the box's)")
    assert _errors(_changed(built["two"], maps(box=[64, 48, 1, 1]), tmp_path))[0].startswith(f"error: {tm}.box: ")
    said = ("the kernel reads 128B-swizzled boxes of 64 dims, or 4-D unswizzled ones of head_dim + 8 (padded rows), "
            "one KV head and one page each")
    assert _errors(_changed(built["two"], maps(swizzle=0), tmp_path))[0] == f"error: {tm}.box: [64, 64, 1, 1], " \
                                                                             f"swizzle 0: {said}"
    # padded rows: head_dim + 8 dims, unswizzled, 4-D; a box of another width (a pad the kernel does not skip, or
    # none) or swizzled is refused
    assert _errors(_changed(built["two"], maps(box=[136, 64, 1, 1], swizzle=0), tmp_path)) == []
    assert f"error: {tm}.box: [144, 64, 1, 1], swizzle 0: {said}" in _errors(
        _changed(built["two"], maps(box=[144, 64, 1, 1], swizzle=0), tmp_path))
    assert f"error: {tm}.box: [128, 64, 1, 1], swizzle 0: {said}" in _errors(
        _changed(built["two"], maps(box=[128, 64, 1, 1], swizzle=0), tmp_path))
    assert any(e.startswith(f"error: {tm}.box") for e in _errors(_changed(built["two"], maps(box=[136, 64, 1, 1]),
                                                                          tmp_path)))
    assert _errors(_changed(built["two"], maps(dims=[128], strides=[], box=[64]), tmp_path))[0] == (
        f"error: {tm}.dims: [128]: the kernel loads 4-D or 5-D boxes")
    def v_only(doc):
        _field(doc, 128)["tensormap"]["box"] = [64, 32, 1, 1]
    assert _errors(_changed(built["two"], v_only, tmp_path)) == [
        "error: ops.decode.impl.launches[0].args[0].pack.fields[1].tensormap: V's map differs from K's in its box, "
        "dims or swizzle: the kernel loads both one way"]


def test_labkit_s_own_decode_manifest_names_each_field_by_the_kernel_s_params_member(tmp_path):
    """Left open by the notebook review that named trtllm-gen's members in the parameter-block map: labkit's own
    decode manifests showed an empty member column. Every field of a built manifest (a timeline build's too) now
    carries the name of the Params member at its offset, and the names follow the kernel header's order."""
    import dataclasses
    import re

    from labkit.kernels import kernel_path
    from labkit.manifest.session import field_frame
    from labkit.workloads import decode as decode_package
    from labkit.workloads.decode.build import MEMBERS

    struct = re.search(r"struct Params \{(.*?)\n\};", kernel_path(decode_package.__file__, "paged_decode.cuh")
                       .read_text(), re.S).group(1)
    declared = re.findall(r"^\s+[\w\s*]+?[\s*](\w+);", struct, re.M)
    assert [MEMBERS[at] for at in sorted(MEMBERS)] == declared
    g = DecodeGeometry(8, 32, 8, 128, 64, 4, 32, 1, "plain")
    kb = dataclasses.replace(decode_package.kernel_build(g), timeline=True)
    frame = field_frame(check(load(build(g, 2, tmp_path, kernel=kb))))
    assert list(frame["member"]) == [MEMBERS[at] for at in frame["at"]]
    assert {"k_map", "v_map", "q", "scale_log2_bits", "timeline"} <= set(frame["member"])
