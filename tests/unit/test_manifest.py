import json
import math
import re
import struct

import numpy as np
import pytest

from labkit import cli
from labkit.device import DeviceInfo
from labkit.errors import ArgumentError, FormatError
from labkit.kernels import compile_cubin
from labkit.manifest import check, load, read_cubin
from labkit.manifest.pack import Bindings, f32_bits, pack_bytes

from ..conftest import ROOT, SHARED

SEED = ROOT / "data" / "trtllm_gen_decode_manifest_v4.json"
CORPUS = ROOT / "tests" / "data" / "manifests"
EXPECTED = {k: v for k, v in json.loads((CORPUS / "expected.json").read_text()).items() if not k.startswith("_")}
H200 = DeviceInfo(index=0, name="NVIDIA H200", compute_capability=(9, 0), sm_count=132, l2_bytes=62914560,
                  smem_per_sm_bytes=233472, smem_per_block_optin_bytes=232448, max_threads_per_sm=2048,
                  max_ctas_per_sm=32, regs_per_sm=65536, memory_bytes=150109880320, sm_clock_max_hz=1980000000,
                  mem_clock_max_hz=3201000000, driver_version="580.159.04", cuda_driver_version=13000,
                  cuda_runtime_version=13020)


def test_seed_copy_is_the_users_file():
    original = SHARED / "seeds" / "000_c9e8d969151c03a3.txt"
    if not original.exists():
        pytest.skip("shared/seeds not beside this checkout")
    assert SEED.read_bytes() == original.read_bytes()


def test_corpus_is_complete():
    files = {p.name for p in CORPUS.glob("*.json")} - {"expected.json"}
    assert files == set(EXPECTED)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_broken_manifest_gives_its_error(name, capsys):
    where, path, text = EXPECTED[name]
    rc = cli.main(["manifest", "check", str(CORPUS / name), "--no-device"])
    out, err = capsys.readouterr()
    assert rc == 2
    if where == "parse":
        assert err.count("\n") == 1 and "Traceback" not in err
        # "$", the whole file: named by the file alone ("x.json: not valid JSON")
        heads = (f"{CORPUS / name}: {text}",) if path == "$" else (f": {path}: ", f": {path} = ")
        assert any(h in err for h in heads) and text in err, err
    else:
        lines = [line.strip() for line in out.splitlines() if line.strip().startswith("error:")]
        assert any(line.startswith((f"error: {path}: ", f"error: {path} = ")) and text in line
                   for line in lines), "\n".join(lines)
        assert "verdict: CANNOT run" in out


def test_seed_check_finds_its_problems_and_can_run(capsys):
    assert cli.main(["manifest", "check", str(SEED), "--var", "tokens=2", "--no-device"]) == 0
    out = capsys.readouterr().out
    assert "target sm_100f" in out
    assert "(1280 B params, 0 B static smem + the 1024 B system reserve in .nv.shared)" in out
    assert "ops.decode.params[6]: cu_seqlens_q is declared but never packed" in out
    assert out.count("ops.decode.params[6]") == 1, "the family's warning replaces the generic one, not beside it"
    assert ".pack.fields[1].tensormap.dims[3]: 0 (the driver rejects 0): derived from kv's extent as 22" in out
    assert "mNumPagesInMemPool = 44, but the buffer holds only 22 page slabs" in out
    assert ("grid [38, 4, 2] (seqs=2) = 304 CTAs, block [512, 1, 1], shared memory 144992 B dynamic + 0 B static"
            in out)
    assert "verdict: can run" in out
    assert "  parameter block (1280 B):" in out and "B written," in out


def test_a_module_found_by_its_sha256_under_another_name_is_named(tmp_path):
    """A CLI review: a module whose source names no file loaded the cubin of its sha256 without a word."""
    res = check(load(_seed_changed(tmp_path, lambda d: next(iter(d["modules"].values())).update(
        source="nosuch.cubin"))), vars={"tokens": 2})
    notes = [str(i) for i in res.issues if i.path.endswith(".source")]
    assert res.ok and len(notes) == 1 and "'nosuch.cubin' is not there; the cubin of its sha256 is " in notes[0]
    assert not [i for i in check(load(SEED), vars={"tokens": 2}).issues if i.path.endswith(".source")]


def test_the_check_text_names_a_module_s_folder_and_a_line_per_kernel_and_the_file_where_it_is_another(tmp_path):
    """A module's line had held its 100-character name three times (name, cubin, kernel); now the folder where the
    cubin is the file the manifest names, the file itself where the sha256 found another."""
    from labkit._json import show_path
    from labkit.manifest.report import render_check

    def module_lines(res):
        lines = render_check(res, None, "no GPU").splitlines()
        at = next(i for i, line in enumerate(lines) if line.startswith("module "))
        return lines[at], [line for line in lines[at + 1:] if line.startswith("  kernel ")]

    res = check(load(SEED), vars={"tokens": 2})
    (name, lm), = res.modules.items()
    line, kernels = module_lines(res)
    assert line == f"module {name}: in {show_path(lm.path.parent)}, sha256 ok, target {lm.info.target}"
    assert len(kernels) == len(lm.info.entries) and all(f"kernel {e} (" in " ".join(kernels) for e in lm.info.entries)
    moved = check(load(_seed_changed(tmp_path, lambda d: next(iter(d["modules"].values())).update(
        source="nosuch.cubin"))), vars={"tokens": 2})
    (lm,) = moved.modules.values()
    assert module_lines(moved)[0].startswith(f"module {name}: in {show_path(lm.path)}, sha256 ok")


def test_the_check_text_can_leave_the_parameter_block_to_a_table_beside_it():
    """Found by a notebook review: notebook 01 printed the block's rows in the check's text and again as its table."""
    from labkit.manifest.report import render_check

    res = check(load(SEED), vars={"tokens": 2})
    full, short = render_check(res, None, "no GPU"), render_check(res, None, "no GPU", param_block=False)
    rows = len(res.plans[0].rows)
    assert len(full.splitlines()) - len(short.splitlines()) == rows + 3  # title, header, rule; one line for two
    written = sum(r.size for r in res.plans[0].rows)
    assert f"  parameter block: 1280 B, {written} B written, {1280 - written} B zero" in short
    assert short.splitlines()[-1] == full.splitlines()[-1].rstrip() and "verdict: can run" in short


@pytest.mark.parametrize("glob, kind", [("*-02_sage2_phases/data/report.json", "a Sage2 report"),
                                        ("*-02_sage2_phases/run.json", "a notebook run's run.json"),
                                        ("*-05_ncu_correlation/data/ncu_summary.json", "a notebook 05 ncu summary")])
def test_another_labkit_document_given_as_a_manifest_is_named(glob, kind, capsys):
    """Found by a CLI review: a report or run record given to manifest check was only "missing key 'schema_version'"."""
    from ..conftest import ROOT

    given = sorted((ROOT / "data" / "runs").glob(glob))[-1]
    for argv in (["manifest", "check", str(given), "--no-device"], ["decode", "from-manifest", str(given), "--out",
                                                                    "/tmp/labkit-never-written"]):
        assert cli.main(argv) == 2
        err = capsys.readouterr().err
        assert f"missing key 'schema_version': this is {kind}" in err and err.endswith("not a launch manifest\n")


def test_a_scratch_buffer_no_field_points_to_is_flagged(tmp_path):
    """Found by a readers review: with the seed's ``{"scratch": "stats"}`` field removed, check said nothing, and the
    kernel would read a null pointer where the runner's zeroed stats buffer was meant to be."""
    doc = json.loads(SEED.read_text())
    fields = doc["ops"]["decode"]["impl"]["launches"][0]["args"][0]["pack"]["fields"]
    fields.remove({"at": 1016, "scratch": "stats"})
    (tmp_path / "m.json").write_text(json.dumps(doc))
    msgs = [str(i) for i in check(load(tmp_path / "m.json")).issues]
    assert "warning: ops.decode.impl.scratch.stats: scratch 'stats' is declared but never packed: the kernel never " \
           "sees it" in msgs
    assert not any("scratch.stats" in m for m in (str(i) for i in check(load(SEED)).issues))


def test_seed_token_count_mismatch_is_flagged():
    res = check(load(SEED))  # tokens defaults to its max, 64
    msgs = [str(i) for i in res.issues]
    assert any("mSumOfSeqLensQ = 64 but mBatchSize x mMaxSeqLenQ = 2" in m for m in msgs)


def test_var_over_max_is_refused(capsys):
    assert cli.main(["manifest", "check", str(SEED), "--var", "seqs=3"]) == 2
    assert "error: vars.seqs: value 3 outside 1..max 2" in capsys.readouterr().out


def test_seed_refused_on_an_h200_before_loading():
    res = check(load(SEED), device=H200, vars={"tokens": 2})
    errs = [str(e) for e in res.errors]
    assert len(errs) == 1 and "is built for sm_100f; NVIDIA H200 is sm_90" in errs[0]


def _golden_non_tensormap_bytes(seqs, tokens):
    """The trtllm-gen brief's KernelParams table, written independently of the manifest."""
    blob = bytearray(1280)
    i32 = {1112: 2**31 - 1, 1116: seqs, 1144: 1, 1148: 704, 1152: 1, 1156: 38, 1160: 11, 1164: 4, 1168: 24,
           1172: 6, 1176: 6, 1180: 0xAAAAAAAB, 1188: 2, 1192: 6144, 1200: 44, 1204: 1, 1208: 6, 1212: 1,
           1244: tokens}
    for at, v in i32.items():
        struct.pack_into("<I", blob, at, v)
    f32 = {1216: 1.0, 1220: math.log2(math.e) / 16, 1224: 1.0, 1228: -1.0}
    for at, v in f32.items():
        struct.pack_into("<f", blob, at, v)
    blob[1253] = 1  # mUsesSharedPagedKvIdx
    return bytes(blob)


def test_golden_bytes_of_the_seed_parameter_block():
    m = load(SEED)
    op = m.ops["decode"]
    params = (0, 0, 0, 0, 0, 0, 0, 2, 2)  # pointers unknown on CPU; seqs = tokens = 2
    blob, rows = pack_bytes(op.launches[0].args[0], op, Bindings(params, ("p",) * 9, {}, {}))
    assert len(blob) == 1280
    assert blob == _golden_non_tensormap_bytes(2, 2)
    assert sum(r.size for r in rows) == 4 * 128 + 3 * 8 + 2 * 4 + 22 * 4 + 3 * 8  # maps, ptrs, vars, i32s, scratch


def test_cli_pack_on_cpu(tmp_path, capsys):
    from labkit.cuda import gpu_available

    if gpu_available():
        pytest.skip("with a GPU, pack encodes real maps and pointers (tests/gpu)")
    out = tmp_path / "blob.bin"
    assert cli.main(["manifest", "pack", str(SEED), "--var", "tokens=2", "--out", str(out)]) == 0
    assert out.read_bytes() == _golden_non_tensormap_bytes(2, 2)
    assert "zero-filled" in capsys.readouterr().out


def test_pack_and_run_refuse_an_output_that_is_their_manifest(tmp_path, capsys):
    """Found by a CLI review: ``pack m.json --out m.json`` replaced the manifest with 1280 parameter bytes, exit 0."""
    manifest = tmp_path / "m.json"
    manifest.write_bytes(SEED.read_bytes())
    # refused as a file of another kind than the output's, before the input is compared
    for argv, kind in ((["pack", str(manifest), "--out", str(manifest)], "a text file, not a parameter block"),
                       (["run", str(manifest), "--json", str(manifest)], "a launch manifest (labkit manifest check)")):
        assert cli.main(["manifest", *argv]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert err == [f"labkit: error: labkit manifest {argv[0]}: {argv[2]} '{manifest}': exists and is {kind}; "
                       "refusing to overwrite it (delete it, or name another file)"]
        assert manifest.read_bytes() == SEED.read_bytes()


KERNEL = r"""
struct alignas(16) P { float4 v[20]; int n; };   // 336 B with padding
extern "C" __global__ void probe(const __grid_constant__ P p, float* out) {
    __shared__ float s[300];
    s[threadIdx.x] = p.v[threadIdx.x % 20].x * p.n;
    __syncthreads();
    out[threadIdx.x] = s[299 - threadIdx.x];
}
"""


@pytest.mark.parametrize("arch", ["sm_89", "sm_90", "sm_90a"])
def test_elf_of_an_nvrtc_cubin(arch, tmp_path):
    cubin = compile_cubin(tmp_path / "probe.cu", arch=arch, code=KERNEL)
    info = read_cubin(cubin.image)
    assert info.target == arch and info.sm == int(arch[3:5])
    e = info.entries["probe"]
    assert e.param_sizes == (336, 8) and e.param_bytes == 344
    # 1200 B declared, as cudaFuncGetAttributes counts it; sm_90 lays the CTA's 1 KB system reserve in the same section
    assert (e.static_smem_bytes, e.reserved_smem_bytes) == (1200, 0 if arch == "sm_89" else 1024)
    assert info.runs_on((int(arch[3]), int(arch[4]))) and not info.runs_on((10, 0))


def test_elf_of_the_seed_cubin():
    cubin = next((ROOT / "data" / "cubins").glob("fmha*.cubin"))
    info = read_cubin(cubin.read_bytes())
    assert info.target == "sm_100f" and info.runs_on((10, 0)) and info.runs_on((10, 3)) and not info.runs_on((9, 0))
    e = info.entries[cubin.stem]
    # its .nv.shared is the system's 1 KB reserve alone: the kernel's shared memory is all dynamic
    assert (e.param_bytes, e.static_smem_bytes, e.reserved_smem_bytes, e.max_threads) == (1280, 0, 1024, (512, 1, 1))


def test_not_a_cubin():
    with pytest.raises(FormatError, match="not a 64-bit little-endian ELF"):
        read_cubin(b"hello world" * 10)


def test_proof_manifest_validates_on_cpu(tmp_path):
    from labkit.manifest import proof

    path = proof.build(tmp_path, 1000, 200)
    res = check(load(path), cubin_dirs=(tmp_path,), device=H200)
    assert res.ok, [str(e) for e in res.errors]
    plan = res.plans[0]
    assert plan.grid == (7, 32, 1) and plan.pack_size == 192
    assert res.modules["proof"].info.entries["tma_scale_proof"].param_bytes == 192
    # a block of 176 B (every field inside it, params and pack agreeing) is not the 192 B the kernel takes: the kernel
    # would read 16 B past it
    doc = json.loads(path.read_text())
    launch = doc["ops"]["scale_rows"]["impl"]["launches"][0]
    launch["params"], launch["args"][0]["pack"]["size"] = ["bytes<176>"], 176
    launch["args"][0]["pack"]["fields"].pop()  # param 5 at 168
    path.write_text(json.dumps(doc))
    errors = [str(e) for e in check(load(path), cubin_dirs=(tmp_path,), device=H200).errors]
    assert ("error: ops.scale_rows.impl.launches[0].params: packs 176 B but the kernel takes 192 B "
            "(tma_scale_proof_sm_90.cubin)") in errors, errors


def test_manifest_cli_run_without_gpu_is_clean(capsys):
    from labkit.cuda import gpu_available

    if gpu_available():
        pytest.skip("has a GPU")
    assert cli.main(["manifest", "run", str(SEED)]) == 1  # the manifest is fine: only the GPU is missing
    err = capsys.readouterr().err
    assert "needs a CUDA GPU" in err and err.count("\n") == 1


def test_the_seeds_query_rows_are_named_both_ways_round(capsys):
    """Fewer query tokens than sequences x mMaxSeqLenQ had been reported as 'query rows 2..0 of out stay
    unwritten' (found by a review): the kernel writes rows the call does not own; more tokens leave rows unwritten."""
    assert cli.main(["manifest", "check", str(SEED), "--var", "tokens=1", "--var", "seqs=2", "--no-device"]) == 0
    assert ("mBatchSize x mMaxSeqLenQ = 2: the kernel writes query rows 1..1, which the call's 1 query token(s) do "
            "not own") in capsys.readouterr().out
    assert cli.main(["manifest", "check", str(SEED), "--var", "tokens=5", "--var", "seqs=2", "--no-device"]) == 0
    assert "mBatchSize x mMaxSeqLenQ = 2: query rows 2..4 of out stay unwritten" in capsys.readouterr().out


def test_a_missing_cubin_names_the_extra_that_ships_the_seeds(capsys):
    """The README lists the labkit[cubins] extra (FlashInfer's cubins) as a place cubins come from; the refusal names
    it too (found by a review)."""
    assert cli.main(["manifest", "check", str(ROOT / "tests" / "data" / "manifests" / "missing_cubin.json"),
                     "--no-device"]) == 2
    assert "or install FlashInfer's cubins: pip install 'labkit[cubins]'" in capsys.readouterr().out


def test_a_missing_cubin_of_labkits_own_manifest_says_how_to_rebuild_it(tmp_path, capsys):
    """A fresh-user review: a labkit decode build manifest copied away from its cubin was told to install FlashInfer's
    cubins, which never hold it."""
    assert cli.main(["decode", "build", "--batch", "2", "--kv-len", "256", "--out", str(tmp_path / "b")]) == 0
    (manifest,) = (tmp_path / "b").glob("*.json")
    moved = tmp_path / "elsewhere" / manifest.name
    moved.parent.mkdir()
    moved.write_text(manifest.read_text())
    capsys.readouterr()
    assert cli.main(["manifest", "check", str(moved), "--no-device"]) == 2
    out = capsys.readouterr().out
    said = " ".join(out.split())
    assert "pass --cubin-dir, rebuild it with labkit decode build, which writes it beside its manifest" in said
    assert "FlashInfer" not in out


def _seed_changed(tmp_path, change) -> str:
    doc = json.loads(SEED.read_text())
    change(doc)
    path = tmp_path / "changed.json"
    path.write_text(json.dumps(doc))
    return str(path)


def _launch0(doc):
    return doc["ops"]["decode"]["impl"]["launches"][0]


def test_a_call_that_reads_past_the_page_table_or_writes_past_out_cannot_run(tmp_path, capsys):
    """The family knows what the kernel indexes by sequence: 4 sequences over a 2-row page table and 2 KV
    lengths, or 2 x 40 query rows into 64 rows of out, are errors (no launch), each naming the field, the bytes and
    the buffer."""
    seqs4 = _seed_changed(tmp_path, lambda d: d["vars"]["seqs"].update(max=4))
    assert cli.main(["manifest", "check", seqs4, "--var", "seqs=4", "--var", "tokens=4", "--no-device"]) == 2
    out = capsys.readouterr().out
    assert ("pack.fields[5]: ptrPageIdxKv: the kernel reads 176 B (mBatchSize 4 x mMaxNumPagesPerSeqKv 11 page ids) "
            "of table from byte 0, but table has 88 B there") in out
    assert "ptrSeqLensKv: the kernel reads 16 B (mBatchSize 4 KV lengths) of seq from byte 0, but seq has 8 B" in out
    # and its split statistics: scratch sized for 2 sequences, which the kernel writes past (a warning until a CLI
    # review found a too-short scratch passing where a too-short input is refused)
    assert "error: ops.decode.impl.scratch.stats: 19456 B < 38912 B the kernel writes" in out
    assert "verdict: CANNOT run: 3 error(s)" in out
    assert check(load(seqs4), vars={"seqs": 2, "tokens": 2}).ok  # the table's own 2 rows are fine

    def q_len_40(doc):
        next(f for f in _launch0(doc)["args"][0]["pack"]["fields"] if f["at"] == 1144)["i32"] = 40
    errs = [str(e) for e in check(load(_seed_changed(tmp_path, q_len_40)), vars={"tokens": 2}).errors]
    assert len(errs) == 1 and ("ptrO: the kernel writes 983040 B (mBatchSize 2 x mMaxSeqLenQ 40 query rows of "
                               "mNumHeadsQ 24 x 256 bf16) of out from byte 0, but out has 786432 B there") in errs[0]


def test_shared_memory_over_the_cubins_architecture_is_refused_without_a_gpu(tmp_path, capsys):
    big = _seed_changed(tmp_path, lambda d: _launch0(d).update(shared_mem=240000))
    assert cli.main(["manifest", "check", big, "--var", "tokens=2", "--no-device"]) == 2
    assert ("error: ops.decode.impl.launches[0].shared_mem: 240000 + 0 static = 240000 B exceeds the 232448 B a "
            "CTA of sm_100f may take") in capsys.readouterr().out


def test_the_families_buffer_extents_follow_cu_seqlens_q_and_the_shared_page_table(tmp_path):
    """With cu_seqlens_q packed (936) the kernel writes mSumOfSeqLensQ rows of out, not mBatchSize x mMaxSeqLenQ:
    40 + 24 query tokens fill out's 64 rows exactly (found by a review: this had been refused). Without the
    shared-page-table bool (byte 1253) K and V each have a row of page ids per sequence: twice the table's 88 B."""
    def varlen(doc):
        fields = _launch0(doc)["args"][0]["pack"]["fields"]
        next(f for f in fields if f["at"] == 1144)["i32"] = 40
        fields.append({"at": 936, "param": 6})
    res = check(load(_seed_changed(tmp_path, varlen)), vars={"seqs": 2, "tokens": 64})
    assert res.ok, [str(e) for e in res.errors]
    assert not any("ptrO" in str(i) for i in res.issues)

    def separate_tables(doc):
        next(f for f in _launch0(doc)["args"][0]["pack"]["fields"] if f["at"] == 1252)["i32"] = 0
    errs = [str(e) for e in check(load(_seed_changed(tmp_path, separate_tables)), vars={"tokens": 2}).errors]
    assert len(errs) == 1 and ("ptrPageIdxKv: the kernel reads 176 B (mBatchSize 2 x 2 (K, V) x mMaxNumPagesPerSeqKv "
                               "11 page ids) of table from byte 0, but table has 88 B there") in errs[0]


def test_launch_checks_at_their_edges(tmp_path):
    """A block of 2048 threads through its z, an argument offset at the end of its buffer (one element before it is
    fine), and a var of 0 given to the library (not only the CLI) are errors naming the field (found by a test audit:
    a check that ignored z, or took offset == size, or 0, passed every test)."""
    def errors(change, **kw):
        return [str(e) for e in check(load(_seed_changed(tmp_path, change)), **kw).errors]

    assert any("block: [32, 32, 2]: at most 1024 threads" in e
               for e in errors(lambda d: _launch0(d).__setitem__("block", [32, 32, 2]), vars={"tokens": 2}))
    nbytes = 22 * 2 * 64 * 4 * 2 * 256 * 2  # kv [22, 2, 64, 4, 2, 256] bf16

    def offset(at):
        return lambda d: d["programs"]["decode"]["calls"][0]["args"][2].__setitem__("offset", at)

    assert any(f"offset: {nbytes} is past the end of kv ({nbytes} B)" in e
               for e in errors(offset(nbytes), vars={"tokens": 2}))
    assert not any("past the end" in e for e in errors(offset(nbytes - 2), vars={"tokens": 2}))  # too few elements
    assert any("vars.seqs: value 0 outside 1..max 2" in e for e in [str(i) for i in check(load(SEED), vars={
        "seqs": 0, "tokens": 2}).errors])


@pytest.mark.parametrize("value", ["2", 2.0, True, None])
def test_a_var_that_is_no_integer_is_one_error_not_a_crash(value):
    # the library API (the CLI parses --var to int first): "2" was a TypeError inside the calls' checks, and 2.0
    # "outside 1..max 2" (a mutation audit)
    errors = [str(e) for e in check(load(SEED), vars={"seqs": value, "tokens": 2}).errors]
    assert errors == [f"error: vars.seqs: value {value!r} ({type(value).__name__}): expected an integer in 1..max 2"]


def _fields0(doc):
    return _launch0(doc)["args"][0]["pack"]["fields"]


def test_an_f32_constant_is_the_i32_of_its_ieee_bits():
    # IEEE 754 single: 1.0 is 0x3F800000; -2.0 is 0xC0000000, an i32 field's -2**30; numpy's view agrees elsewhere
    assert f32_bits(1.0) == 0x3F800000 and f32_bits(-2.0) == -(2**30)
    x = math.log2(math.e) / 16
    assert f32_bits(x) == int(np.float32(x).view(np.int32))


def test_pack_with_a_device_s_pointers_and_encoded_maps():
    """What the runner packs on a GPU (tests/gpu), here with made-up pointers, scratch and maps: each lands at its
    field's offset, 8 or 128 bytes of it, and the map says what it shows (found by a test audit: on CPU pack_bytes
    had only met zero pointers and no maps, so a packer that never wrote an encoded map passed)."""
    m = load(SEED)
    op = m.ops["decode"]
    ptrs = tuple(0x7F00_0000_0000 + 0x1_0000 * i if i != 5 else 0 for i in range(7))  # params 0..6: buffers
    scratch = {"partial": 0x7E00_0000_0200, "stats": 0x7E00_0000_0300}  # no counter: its pointer is 0
    maps = {i: bytes(range(i * 8, i * 8 + 128)) for i in range(3)} | {3: None}  # fields 0..3: the maps, one unencoded
    blob, rows = pack_bytes(op.launches[0].args[0], op, Bindings((*ptrs, 2, 2), ("p",) * 9, scratch, maps))
    want = bytearray(_golden_non_tensormap_bytes(2, 2))
    for i, f in enumerate(_fields0(json.loads(SEED.read_text()))):  # the manifest's own field list, read as JSON
        if "tensormap" in f:
            want[f["at"]:f["at"] + 128] = maps[i] or bytes(128)
        elif "scratch" in f:
            struct.pack_into("<Q", want, f["at"], scratch.get(f["scratch"], 0))
        elif "param" in f and f["param"] < 7:
            struct.pack_into("<Q", want, f["at"], ptrs[f["param"]])
    assert len(blob) == 1280 and blob == bytes(want)
    by_at = {r.at: r for r in rows}
    assert [by_at[at].value for at in (0, 128, 384, 512)] == ["encoded"] * 3 + [
        "zero-filled (not encoded: no GPU buffer bound)"]
    assert by_at[912].value == "0x7f0000000000" and by_at[1000].value == "0x7f0000040000"
    assert by_at[1080].value == "0 (no GPU buffer bound)"  # seq's pointer, given as 0
    assert by_at[1016].value == "0x7e0000000300" and by_at[1016].source == "scratch stats"
    assert by_at[984].value == "0 (no GPU buffer bound)" and by_at[984].source == "scratch counter"
    # an i32 shows its float reading only where it reads as one: 1.0, log2(e) / 16 (odd bits), not 704 or -1
    scale = struct.unpack("<f", struct.pack("<f", math.log2(math.e) / 16))[0]
    assert by_at[1216].value == "1065353216 (0x3f800000, f32 1)"
    assert by_at[1220].value == f"{f32_bits(scale)} (0x{f32_bits(scale):08x}, f32 {scale:.8g})"
    assert by_at[1148].value == "704 (0x000002c0)" and by_at[1180].value == "-1431655765 (0xaaaaaaab)"


def test_pack_writes_each_scalar_dtype_in_its_own_bytes():
    """A scalar param is packed as its dtype (little-endian), not as a pointer-sized word."""
    from labkit.manifest.model import Op, Pack, ParamField, ParamSig

    sigs = tuple(ParamSig(i, t, False, t, None) for i, t in enumerate(("i32", "u32", "f32", "i64")))
    op = Op("scalars", sigs, {}, ())
    pack = Pack(24, (ParamField(16, 3), ParamField(8, 2), ParamField(4, 1), ParamField(0, 0)))
    blob, rows = pack_bytes(pack, op, Bindings((-7, 2**32 - 1, 1.5, -(2**40)), ("a", "b", "c", "d"), {}, {}))
    assert blob == struct.pack("<iIf4xq", -7, 2**32 - 1, 1.5, -(2**40))
    assert [(r.at, r.size, r.value) for r in rows] == [(0, 4, "-7"), (4, 4, "4294967295"), (8, 4, "1.5"),
                                                       (16, 8, str(-(2**40)))]


def test_pack_writes_a_field_that_ends_at_the_block_s_end_and_nothing_past_it():
    """The packer never writes past the block (check reports such a field; pack_bytes alone must not grow or
    overflow the block), and a field that ends exactly at the end is inside it."""
    from labkit.manifest.model import I32Field, Op, Pack

    pack = Pack(8, (I32Field(0, 5), I32Field(4, -1), I32Field(8, 7)))
    blob, rows = pack_bytes(pack, Op("o", (), {}, ()), Bindings((), (), {}, {}))
    assert blob == struct.pack("<iI", 5, 0xFFFFFFFF)
    assert [(r.at, r.value) for r in rows][2] == (8, "outside the pack: not written")


def test_pack_fields_at_the_block_s_edges(tmp_path):
    """An i32 in the block's last 4 bytes is checked fine and packed there; a param field naming param 9 of an op
    with params 0..8 is an error, not a crash (found by a test audit: both edges passed with >= for >)."""
    res = check(load(_seed_changed(tmp_path, lambda d: _fields0(d).append({"at": 1276, "i32": 0x12345678}))),
                vars={"tokens": 2})
    assert res.ok, [str(e) for e in res.errors]
    assert res.plans[0].offline_blob[1276:] == struct.pack("<I", 0x12345678)
    one_past = check(load(_seed_changed(tmp_path, lambda d: _fields0(d).append({"at": 1277, "i32": 1}))),
                     vars={"tokens": 2})  # its last byte one past the block (a mutation audit: at + size > size + 1)
    assert "error: ops.decode.impl.launches[0].args[0].pack.fields[34].at: 1277 + 4 B ends past the 1280 B pack" in [
        str(e) for e in one_past.errors]

    def param9(doc):
        _fields0(doc)[4]["param"] = 9
    errs = [str(e) for e in check(load(_seed_changed(tmp_path, param9)), vars={"tokens": 2}).errors]
    assert "error: ops.decode.impl.launches[0].args[0].pack.fields[4].param: param 9: op decode has params 0..8" in errs


def test_a_refused_manifest_names_its_file_and_its_errors_once(tmp_path):
    """A call with an error is not handed to the family rules (they assume a valid launch: with seqs 3 they would add
    errors about the 2-row page table), and the refusal names the file."""
    from labkit.manifest import ManifestError

    res = check(load(SEED), vars={"seqs": 3, "tokens": 2})
    assert [str(e) for e in res.errors] == ["error: vars.seqs: value 3 outside 1..max 2"]
    with pytest.raises(ManifestError) as e:
        res.raise_if_errors()
    assert str(e.value) == f"{SEED}: 1 error(s), nothing launched: error: vars.seqs: value 3 outside 1..max 2"


def test_a_refused_var_leaves_the_other_checks_as_they_are_without_it():
    """Found by a new-user review: `--var seqs=3` (over its max 2) dropped the seed's five warnings to three (the
    family rules, page dim 0 and the unpacked cu_seqlens_q, were skipped), so mending the var brought new warnings.
    The rest is checked with the refused var at its max, said in a note, and nothing is ready to pack."""
    seed = load(SEED)
    refused, valid = check(seed, vars={"seqs": 3, "tokens": 2}), check(seed, vars={"tokens": 2})
    assert [str(e) for e in refused.errors] == ["error: vars.seqs: value 3 outside 1..max 2"]
    warnings = lambda r: [str(i) for i in r.issues if i.severity == "warning"]  # noqa: E731
    assert warnings(refused) == warnings(valid) and len(warnings(valid)) == 5
    assert "note: vars: the other checks ran with seqs = 2 (the max) in place of the value refused" in map(
        str, refused.issues)
    assert not any(i.path == "vars.seqs" and i.severity == "note" for i in refused.issues)  # not "its max; pass --var"
    assert refused.vars["seqs"] == 3 and refused.launches and not any(lc.ok for lc in refused.launches)
    assert refused.plans == [] and valid.plans


def test_vars_not_declared_and_vars_left_at_their_max_are_named():
    res = check(load(SEED), vars={"tokens": 2, "heads": 4})
    assert [str(e) for e in res.errors] == ["error: vars.heads: not declared; declared vars: tokens, seqs"]
    assert [str(i) for i in res.issues if i.path.startswith("vars.") and i.severity == "note"] == [
        "note: vars.seqs = 2 (its max; pass --var seqs=N)"]


def test_vars_given_as_pairs_are_refused_in_one_line_and_numpy_integers_are_integers():
    """An API walk: check(m, vars=[("tokens", 8)]) had been an AttributeError; a notebook's np.int64 had been refused
    as 'not an integer'."""
    with pytest.raises(ArgumentError, match=re.escape("vars [('tokens', 8)]: expected a mapping {name: value}")):
        check(load(SEED), vars=[("tokens", 8)])
    res = check(load(SEED), vars={"tokens": np.int64(8), "seqs": np.int32(1)})
    assert not res.errors and res.vars == {"tokens": 8, "seqs": 1} and type(res.vars["tokens"]) is int
    refused = check(load(SEED), vars={"tokens": np.int64(8), "seqs": 9})  # the other checks keep the numpy value
    assert refused.vars["tokens"] == 8 and not any(i.path == "vars.tokens" for i in refused.issues)


def test_block_grid_module_and_parameter_blocks_at_their_edges(tmp_path):
    """The launch limits both sides of each edge (found by a test audit: a block of exactly 1024 threads refused, z
    of 64, any grid limit, the kernel's maxntid, a module not in modules and a second parameter block all passed)."""
    def errors(change, at=".block", **kw):
        res = check(load(_seed_changed(tmp_path, change)), vars={"tokens": 2}, **kw)
        return [str(e) for e in res.errors if e.path.endswith(at)]

    def block(b):
        return lambda d: _launch0(d).__setitem__("block", b)

    for fine in ([1024, 1, 1], [32, 32, 1], [1, 1, 64]):  # without the cubin: its maxntid is 512
        assert errors(block(fine), find_modules=False) == [], fine
    for over in ([1, 1, 65], [16, 16, 8], [41, 25, 1]):
        assert errors(block(over), find_modules=False) == [
            f"error: ops.decode.impl.launches[0].block: {over}: at most 1024 threads and z <= 64"]
    for over in ([513, 1, 1], [32, 17, 1]):  # the seed's cubin: __launch_bounds__ 512
        assert errors(block(over)) == [f"error: ops.decode.impl.launches[0].block: {over} exceeds the kernel's "
                                       "maxntid [512, 1, 1]"]

    def grid(g):
        return lambda d: _launch0(d).__setitem__("grid", g)
    assert errors(grid([2**31 - 1, 65535, 65535]), ".grid", find_modules=False) == []
    for over in ([2**31, 1, 1], [1, 65536, 1], [1, 1, 65536]):
        assert errors(grid(over), ".grid", find_modules=False) == [
            f"error: ops.decode.impl.launches[0].grid: {over}: x <= 2^31-1, y and z <= 65535"]
    assert errors(lambda d: _launch0(d).update(module="nosuch"), ".module") == [
        "error: ops.decode.impl.launches[0].module: 'nosuch' is not in modules"]

    def two_blocks(doc):
        _launch0(doc)["params"].append("bytes<8>")
        _launch0(doc)["args"].append({"pack": {"size": 8, "fields": [{"at": 0, "i32": 1}]}})
    assert errors(two_blocks, ".params", find_modules=False) == [
        "error: ops.decode.impl.launches[0].params: 2 parameter blocks: labkit launches exactly one by-value block "
        "per kernel"]


def test_shared_memory_over_the_device_s_opt_in_is_refused(tmp_path):
    import dataclasses

    b200 = dataclasses.replace(H200, name="NVIDIA B200", compute_capability=(10, 0))  # 232448 B opt-in, as H200

    def errors(shared_mem):
        path = _seed_changed(tmp_path, lambda d: _launch0(d).update(shared_mem=shared_mem))
        return [str(e) for e in check(load(path), vars={"tokens": 2}, device=b200).errors]
    # the cubin's 1024 B of .nv.shared are the system's reserve, which the opt-in does not count: all of it is dynamic
    assert errors(232448) == []
    assert errors(232449) == ["error: ops.decode.impl.launches[0].shared_mem: 232449 + 0 static = 232449 B "
                              "exceeds NVIDIA B200's 232448 B"]


def test_call_arguments_that_do_not_fit_their_params_are_named(tmp_path):
    """Each mismatch between a call and its op is an error (or the one warning) naming the argument, never a crash
    (found by a test audit: a var given for a buffer, a buffer for a scalar, an output into an input buffer, too few
    arguments and an unknown op were in no test)."""
    def issues(change, **kw):
        res = check(load(_seed_changed(tmp_path, change)), **{"vars": {"tokens": 2}, **kw})
        return [str(i) for i in res.issues if i.severity != "note"]

    def arg(i, value):
        return lambda d: d["programs"]["decode"]["calls"][0]["args"].__setitem__(i, value)

    call = "programs.decode.calls[0]"
    assert f"error: {call}.args[0]: var 'seqs' given for param 0 (out buffer<bf16>)" in issues(arg(0, {"var": "seqs"}))
    assert f"error: {call}.args[7]: buffer 'seq' given for scalar param 7 (i32)" in issues(arg(7, {"buf": "seq"}))
    assert f"warning: {call}.args[0].buf: param 0 writes (out buffer<bf16>) into q, declared kind input" in issues(
        arg(0, {"buf": "q"}))

    def param(i, sig, value):
        def change(doc):
            doc["ops"]["decode"]["params"][i] = sig
            arg(i, value)(doc)
        return change
    # inout writes too; a buffer param with no direction is an input, which may take an input buffer (a mutation audit)
    assert f"warning: {call}.args[0].buf: param 0 writes (inout buffer<bf16>) into q, declared kind input" in issues(
        param(0, "inout buffer<bf16>", {"buf": "q"}))
    assert [i for i in issues(param(1, "buffer<bf16>", {"buf": "q"})) if "args[1]" in i] == []
    assert [i for i in issues(arg(1, {"buf": "nope"})) if i.startswith("error")] == [
        f"error: {call}.args[1].buf: 'nope' is not in buffers (q, out, kv, table, seq, cuq)"]
    assert [i for i in issues(lambda d: d["programs"]["decode"]["calls"][0].update(
        args=d["programs"]["decode"]["calls"][0]["args"][:1])) if i.startswith("error")] == [
        f"error: {call}.args: 1 args for op decode's 9 params"]
    assert [i for i in issues(lambda d: d["programs"]["decode"]["calls"][0].update(op="nope"))
            if i.startswith("error")] == [f"error: {call}.op: 'nope' is not in ops (decode)"]
    assert issues(lambda d: None, program="nope") == ["error: programs: no program 'nope' (have decode)"]


def test_scalar_vars_fit_their_param_s_dtype_up_to_its_edge(tmp_path):
    """An i32 param takes 1..2^31-1; an f32 one 1..2^24, the integers a float holds exactly."""
    def errors(dtype, max_, value):
        def change(doc):
            doc["vars"]["tokens"]["max"] = max_
            doc["ops"]["decode"]["params"][8] = dtype
        res = check(load(_seed_changed(tmp_path, change)), vars={"tokens": value}, find_modules=False)
        return [str(e) for e in res.errors if e.path.startswith("programs.")]

    assert errors("i32", 2**31 - 1, 2**31 - 1) == []
    assert errors("f32", 2**24, 1) == [] and errors("f32", 2**24, 2**24) == []
    assert errors("f32", 2**24 + 1, 2**24 + 1) == [
        "error: programs.decode.calls[0].args[8].var: tokens = 16777217 does not fit param 8 (f32: 1..16777216)"]


SEED_KV_BYTES = 22 * 2 * 64 * 4 * 2 * 256 * 2  # kv [22, 2, 64, 4, 2, 256] bf16: 22 pages of 524288 B
K_SLAB_BYTES = 2 + 255 * 2 + 63 * 4096 + 3 * 1024  # one page of the K/V maps, dims [256, 64, 4, .] strides 4096, 1024


def _map_issues(tmp_path, change, field=1, *, family=True, **kw):
    """The issues of one tensor map of the seed after ``change``; ``family=False``: the driver's rules only, without
    the trtllm-gen family's (which also hold a map to the kernel's own boxes)."""
    from unittest import mock

    from labkit.manifest import families

    with mock.patch.object(families, "matching", families.matching if family else lambda launch: []):
        res = check(load(_seed_changed(tmp_path, change)), **{"vars": {"tokens": 2}, "find_modules": False, **kw})
    where = f"ops.decode.impl.launches[0].args[0].pack.fields[{field}].tensormap"
    return [str(i) for i in res.issues if i.path.startswith(where) or ".offset" in i.path]


def test_tensor_map_rules_at_their_edges(tmp_path):
    """cuTensorMapEncodeTiled's limits, both sides of each (found by a test audit: box and element_strides of another
    rank, element strides, the box's 16-byte inner span, stride and dim limits and a rank-1 map were in no test)."""
    def tm(**change):
        return lambda d: _fields0(d)[1]["tensormap"].update(change)

    p = "error: ops.decode.impl.launches[0].args[0].pack.fields[1].tensormap"
    refused = [(tm(box=[]), f"{p}.box: 0 entries: expected rank = 4"),
               (tm(element_strides=[1, 1, 1]), f"{p}.element_strides: 3 entries: expected rank = 4"),
               (tm(element_strides=[1, 1, 1, 9]), f"{p}.element_strides[3]: 9: expected 1..8"),
               (tm(element_strides=[0, 1, 1, 1]), f"{p}.element_strides[0]: 0: expected 1..8"),
               (tm(box=[64, 257, 1, 1]), f"{p}.box[1]: 257: expected 1..256"),
               (tm(box=[64, 0, 1, 1]), f"{p}.box[1]: 0: expected 1..256"),
               (tm(box=[4, 64, 1, 1]), f"{p}.box[0]: 4 x 2 B = 8 B: expected a multiple of 16 B"),
               (tm(strides=[4096, 1024, 2**40]),
                f"{p}.strides[2]: 1099511627776 B: expected a non-zero multiple of 16 below 2^40"),
               (tm(dims=[256, 64, 4, 2**32 + 1]), f"{p}.dims[3]: 4294967297 > 2^32")]
    for change, said in refused:
        assert said in _map_issues(tmp_path, change), said
    for change in (tm(element_strides=[1, 1, 1, 8]), tm(box=[64, 256, 1, 1]), tm(strides=[4096, 1024, 2**40 - 16]),
                   tm(dims=[256, 64, 4, 2**32])):
        assert not [i for i in _map_issues(tmp_path, change, family=False) if i.startswith(p)
                    and not i.startswith(f"{p}.dims:")]

    def rank1(doc):  # q's map as one dimension: its length derived from q's 786432 B
        _fields0(doc)[0]["tensormap"].update(dims=[0], strides=[], box=[64])
    assert _map_issues(tmp_path, rank1, field=0, family=False) == [
        "warning: ops.decode.impl.launches[0].args[0].pack.fields[0].tensormap.dims[0]: 0 (the driver rejects 0): "
        "derived from q's extent as 393216 (786432 B from offset 0, stride 2 B) for programs.decode.calls[0]"]


def test_a_tensor_map_s_zero_dim_is_the_last_slab_that_fits_and_its_dims_stay_in_the_buffer(tmp_path):
    """The seed's V map (kv from byte 262656) ends exactly at kv's end with 22 pages; 16 B further on only 21 fit, and
    from kv's last K_SLAB_BYTES - 16 B not even one (found by a test audit: the seed's derivation had 512 B of slack,
    so a wrong slab size passed). Explicit dims are held to the buffer the same way."""
    def v_at(offset, dims=None):
        def change(doc):
            doc["programs"]["decode"]["calls"][0]["args"][3]["offset"] = offset
            if dims:
                _fields0(doc)[2]["tensormap"]["dims"] = dims
        return _map_issues(tmp_path, change, field=2, family=False)

    p = "ops.decode.impl.launches[0].args[0].pack.fields[2].tensormap"
    for offset, pages in ((262656, 22), (262672, 21), (SEED_KV_BYTES - K_SLAB_BYTES, 1)):
        assert SEED_KV_BYTES - offset - K_SLAB_BYTES - (pages - 1) * 524288 in range(524288)  # the test's own sum
        assert v_at(offset) == [f"warning: {p}.dims[3]: 0 (the driver rejects 0): derived from kv's extent as {pages} "
                                f"({SEED_KV_BYTES} B from offset {offset}, stride 524288 B) for "
                                "programs.decode.calls[0]"]
    offset = SEED_KV_BYTES - K_SLAB_BYTES + 16
    assert v_at(offset) == [f"error: {p}.dims[3]: 0, and not even one slab of kv fits from offset {offset}"]
    assert ("error: programs.decode.calls[0].args[3].offset: 262664: a tensor map base must be 16-byte aligned"
            in v_at(262664))
    assert v_at(262656, [256, 64, 4, 22]) == []  # ends at kv's last byte
    # two zeros: which of them takes the room is a guess (greedily, the heads dim took all of it and left 1 page)
    assert v_at(262656, [256, 64, 0, 0]) == [
        f"error: {p}.dims: [256, 64, 0, 0]: 2 zero dims; one (the seed's page dim) can be derived from kv's extent: "
        "give the others"]
    end = 262672 + K_SLAB_BYTES + 21 * 524288
    assert v_at(262672, [256, 64, 4, 22]) == [f"error: {p}.dims: [256, 64, 4, 22] with strides [4096, 1024, 524288] "
                                              f"reach byte {end} of kv ({SEED_KV_BYTES} B)"]


def test_a_derived_dim_over_the_driver_s_2_32_is_an_error(tmp_path):
    def big(nbytes):
        def change(doc):
            doc["buffers"]["big"] = {"dtype": "u8", "shape": [nbytes], "kind": "input"}
            doc["ops"]["decode"]["params"].append("in buffer<u8>")
            doc["programs"]["decode"]["calls"][0]["args"].append({"buf": "big"})
            _fields0(doc).append({"at": 640, "tensormap": {"param": 9, "dtype": "u8", "dims": [0], "strides": [],
                                                           "box": [16], "swizzle": 0, "l2_promotion": 0}})
        return [i for i in _map_issues(tmp_path, change, field=34) if i.startswith("error")]

    assert big(2**32) == []
    assert big(2**32 + 16) == ["error: ops.decode.impl.launches[0].args[0].pack.fields[34].tensormap.dims[0]: 0: "
                               "derived as 4294967312 from big's extent, above the driver's 2^32"]


def test_the_trtllm_gen_rules_name_each_constant_that_disagrees(tmp_path):
    """The family's head, fast-mod, hidden-size and softmax-scale rules and its grid rules with vars or numbers (found
    by a test audit: the seed satisfies them all, so rules that never fired, or read the wrong offset, passed)."""
    def warnings(change, **vars):
        res = check(load(_seed_changed(tmp_path, change)), vars={"tokens": 2, **vars})
        assert res.ok, [str(e) for e in res.errors]
        return [str(i) for i in res.issues if i.severity == "warning" and "cu_seqlens_q" not in i.message
                and "derived from kv" not in i.message and "mNumPagesInMemPool" not in i.message]

    def i32(at, value):
        def change(doc):
            fields = _fields0(doc)
            f = next((f for f in fields if f["at"] == at), None)
            if f is None:
                fields.append({"at": at, "i32": value})
            else:
                f["i32"] = value
        return change

    def fields(*i):
        return [f"warning: ops.decode.impl.launches[0].args[0].pack.fields[{j}]: " for j in i]

    assert warnings(lambda d: None) == []
    w, = fields(17)  # mNumHeadsQPerKv at 1172
    assert warnings(i32(1164, 3)) == [w + "mNumHeadsQ 24 must equal mNumHeadsKv 3 x mNumHeadsQPerKv 6, G <= 8"]
    w, = fields(18)  # divisor at 1176; fast_mod_div of 6: shift ceil(log2 6) - 1 = 2, multiplier ceil(2^34 / 6)
    assert warnings(i32(1180, 0)) == [w + "fast-mod divisor (6, 0, 0, 2) != (6, 2863311531, 0, 2) "
                                          "(cuda::fast_mod_div of G=6)"]
    assert warnings(i32(1184, 1)) == [w + "fast-mod divisor (6, 2863311531, 1, 2) != (6, 2863311531, 0, 2) "
                                          "(cuda::fast_mod_div of G=6)"]
    w, = fields(21)  # mNumHiddenEltsO at 1192
    assert warnings(i32(1192, 6000)) == [w + "mNumHiddenEltsO = 6000; mNumHeadsQ x 256 = 6144"]
    w, = fields(27)  # mScaleSoftmaxLog2 at 1220
    def g2(doc):  # 24 query heads over 12 KV heads, every constant of G = 2 right but the fast-mod multiplier
        for at, value in ((1164, 12), (1172, 2), (1176, 2), (1180, 0), (1188, 0), (1204, 4)):
            i32(at, value)(doc)
        _fields0(doc)[0]["tensormap"].update(dims=[256, 2, 12, 64], strides=[512, 1024, 12288], box=[64, 2, 1, 4])
    assert warnings(g2) == [fields(18)[0] + "fast-mod divisor (2, 0, 0, 0) != "
                            "(2, 2147483648, 0, 0) (cuda::fast_mod_div of G=2)",  # ceil(2^32 / 2), shift 0
                            "warning: ops.decode.impl.launches[0].grid[1]: 4; mNumHeadsQ / min(G, 8) = 12"]
    assert warnings(i32(1220, f32_bits(1.0))) == [
        w + f"mScaleSoftmaxLog2 bits 1065353216; (1/sqrt(256)) log2(e) is {f32_bits(math.log2(math.e) / 16)}"]

    def grid(g, **vars_max):
        def change(doc):
            _launch0(doc)["grid"] = g
            doc["vars"].update({k: {"max": v} for k, v in vars_max.items()})
        return change
    g = "warning: ops.decode.impl.launches[0].grid"
    assert warnings(grid([38, "heads", "seqs"], heads=8), heads=4) == []
    assert warnings(grid([38, "heads", "seqs"], heads=8), heads=3) == [f"{g}[1]: 3; mNumHeadsQ / min(G, 8) = 4"]
    assert warnings(grid(["ctas", 4, "seqs"], ctas=64), ctas=38) == []
    assert warnings(grid(["ctas", 4, "seqs"], ctas=64), ctas=37) == [f"{g}[0]: 37; mMaxNumCtasQ x mMaxNumCtasKv = 38"]
    assert warnings(grid([38, 4, 2])) == [] and warnings(grid([38, 4, 1])) == [f"{g}[2]: 1 but mBatchSize = 2"]


def test_the_trtllm_gen_rules_hold_the_scratch_and_the_query_rows_at_their_edges(tmp_path, capsys):
    """Split counters and partials sized by the brief's rules 22 and 23 (2 sequences x 4 head groups x 1 x 38 CTAs),
    the f32 partial's note, and 3 query tokens over 2 sequences of 1 (one row unwritten)."""
    def scratch(name, shape):
        return lambda d: d["ops"]["decode"]["impl"]["scratch"][name].update(shape=shape)

    def errors(change):
        return [str(e) for e in check(load(_seed_changed(tmp_path, change)), vars={"tokens": 2}).errors]
    assert errors(scratch("counter", [8])) == []  # 2 x 4 x 1 u32
    assert errors(scratch("counter", [7])) == ["error: ops.decode.impl.scratch.counter: 28 B < 32 B the kernel writes"]
    assert errors(scratch("partial", [1])) == [
        f"error: ops.decode.impl.scratch.partial: 4 B < {2 * 4 * 38 * 8 * 256 * 2} B the kernel writes"]
    notes = [str(i) for i in check(load(SEED), vars={"tokens": 2}).issues if i.path.endswith("scratch.partial")]
    assert notes == ["note: ops.decode.impl.scratch.partial: declared f32 but the kernel writes 16-bit partial O: "
                     "1245184 B needed, 2490368 B allocated (safe, mislabelled)"]
    assert cli.main(["manifest", "check", str(SEED), "--var", "tokens=3", "--var", "seqs=2", "--no-device"]) == 0
    assert "mBatchSize x mMaxSeqLenQ = 2: query rows 2..2 of out stay unwritten" in capsys.readouterr().out


def test_the_trtllm_gen_rules_skip_what_the_block_does_not_hold(tmp_path):
    """A block without mBatchSize, mMaxNumCtasQ or the counter scratch is checked without the rules that need them, not
    crashed; each is an error of its own, as the kernel reads 0 there (found by a review: they had passed, the bytes
    the same as an explicit 0, which was refused)."""
    def drop(at, scratch=None):
        def change(doc):
            doc["ops"]["decode"]["impl"]["launches"][0]["args"][0]["pack"]["fields"] = [
                f for f in _fields0(doc) if f["at"] != at]
            if scratch:
                del doc["ops"]["decode"]["impl"]["scratch"][scratch]
        return change

    def pointer_at_1192(doc):  # mNumHiddenEltsO is an int64: cuq's pointer packed there by mistake
        drop(1192)(doc)
        _fields0(doc).append({"at": 1192, "param": 6})

    block = "error: ops.decode.impl.launches[0].args[0].pack: "
    for change, error in ((drop(1116), "mBatchSize (byte 1116)"), (drop(1152), "mMaxNumCtasQ (byte 1152)"),
                          (drop(984, "counter"), "ptrMultiCtasKvCounter (byte 984)"), (drop(1192), None),
                          (pointer_at_1192, None)):
        res = check(load(_seed_changed(tmp_path, change)), vars={"tokens": 2})
        assert [str(e) for e in res.errors] == ([f"{block}{error} is not packed: the kernel reads 0 there"] if error
                                                else [])
        assert not any("mNumHiddenEltsO" in i.message for i in res.issues if i.severity != "note")
    note = "mNumHiddenEltsO is an int64 written as i32: right only because the block is zero-filled"
    assert any(note in i.message for i in check(load(SEED), vars={"tokens": 2}).issues if i.severity == "note")
    res = check(load(_seed_changed(tmp_path, lambda d: _fields0(d).append({"at": 1196, "i32": 0}))), vars={"tokens": 2})
    assert res.ok and not any(note in i.message for i in res.issues)  # its high word written too


def test_arch_specific_cubins_run_only_on_their_own_compute_capability():
    from labkit.manifest import CubinInfo

    assert CubinInfo(100, "sm_100a", {}).runs_on((10, 0)) and not CubinInfo(100, "sm_100a", {}).runs_on((10, 3))
    assert CubinInfo(100, "sm_100f", {}).runs_on((10, 3)) and CubinInfo(90, "sm_90", {}).runs_on((9, 0))


@pytest.mark.parametrize("arch", ["sm_90", "sm_90a"])
def test_a_cubin_without_its_tkinfo_note_takes_its_target_from_e_flags_and_nv_compat(arch, tmp_path):
    """ptxas does not always record ``-arch`` in ``.note.nv.tkinfo``: without it the SM comes from e_flags and the
    ``a`` from ``.nv.compat`` attribute 9 (found by a test audit: every cubin in the tests had the note)."""
    image = compile_cubin(tmp_path / "probe.cu", arch=arch, code=KERNEL).image
    assert b".note.nv.tkinfo\0" in image
    assert read_cubin(image.replace(b".note.nv.tkinfo\0", b".note.nv.tkinfX\0")).target == arch


def test_a_cubin_without_its_note_compat_or_global_info_sections_still_reads():
    """Each of the optional sections renamed away: the seed then reads as plain sm_100 (the ``f`` is only in the
    note), and without ``.nv.info`` or the entry's ``.text`` its register count is unknown, not a crash."""
    cubin = next((ROOT / "data" / "cubins").glob("fmha*.cubin"))
    image, entry = cubin.read_bytes(), cubin.stem
    bare = image.replace(b".note.nv.tkinfo\0", b".note.nv.tkinfX\0").replace(b".nv.compat\0", b".nv.compaX\0")
    assert read_cubin(bare).target == "sm_100"
    compat = bytes.fromhex("02020200020505000203010002060100")  # the seed's four .nv.compat records
    no_note = image.replace(b".note.nv.tkinfo\0", b".note.nv.tkinfX\0")
    assert read_cubin(no_note).target == "sm_100" and no_note.count(compat) == 1
    # its last record made attribute 9 = 1: an arch-specific build, found though it ends the section
    assert read_cubin(no_note.replace(compat, compat[:12] + bytes.fromhex("02090100"))).target == "sm_100a"
    full = read_cubin(image).entries[entry]
    for old, new in ((b"\0.nv.info\0", b"\0.nv.infX\0"), (f"\0.text.{entry}\0".encode(), b"\0.texX" + bytes(
            f".{entry}\0", "ascii"))):
        assert image.count(old) >= 1
        e = read_cubin(image.replace(old, new)).entries[entry]
        assert e.registers is None and (e.param_bytes, e.static_smem_bytes) == (full.param_bytes,
                                                                                full.static_smem_bytes)


def test_the_runner_s_default_fill_is_seeded_normals_bf16_top_halves_or_small_integers_and_outputs_are_poisoned():
    """Found by mutation testing: _random_fill and poison ran only on a GPU; both take NumPy as CuPy's stand-in."""
    from labkit.manifest.runner import _random_fill, poison

    f32 = np.empty((4, 8), np.float32)
    _random_fill(np, f32, "f32", np.random.default_rng(3))
    assert np.array_equal(f32, np.random.default_rng(3).standard_normal((4, 8)).astype(np.float32))
    bf16 = np.empty((4, 8), np.uint16)  # bf16 buffers are raw 16-bit words: the top half of each f32
    _random_fill(np, bf16, "bf16", np.random.default_rng(3))
    assert np.array_equal(bf16, (f32.view(np.uint32) >> 16).astype(np.uint16))
    i32 = np.empty(4096, np.int32)
    _random_fill(np, i32, "i32", np.random.default_rng(3))
    assert (i32.min(), i32.max()) == (0, 15)  # "integers 0..15", as the input note says
    f16, u16 = np.zeros(3, np.float16), np.zeros(3, np.uint16)
    poison(np, f16)
    poison(np, u16)
    assert np.isnan(f16).all() and (u16 == 0xFFFF).all()


def test_check_names_the_first_error_and_counts_the_rest(capsys):
    """Found by mutation testing: the refusal line of a manifest with exactly two errors was not checked."""
    assert cli.main(["manifest", "check", str(SEED), "--var", "seqs=3", "--var", "nosuch=1", "--no-device"]) == 2
    assert capsys.readouterr().err == (f"labkit: error: labkit manifest check: 2 error(s): {SEED} cannot run: "
                                       f"vars.seqs: "
                                       "value 3 outside 1..max 2 (and 1 more: the report above lists them)\n")
    assert cli.main(["manifest", "check", str(SEED), "--var", "seqs=3", "--no-device"]) == 2
    assert capsys.readouterr().err == (f"labkit: error: labkit manifest check: 1 error(s): {SEED} cannot run: "
                                       f"vars.seqs: "
                                       "value 3 outside 1..max 2\n")  # nothing more to count


def test_check_without_a_gpu_says_why_the_device_was_not_checked(capsys):
    """Found by mutation testing: without --no-device the report must give the machine's own reason."""
    from labkit.cuda import gpu_status

    ok, reason = gpu_status()
    if ok:
        pytest.skip("has a GPU")
    assert cli.main(["manifest", "check", str(SEED), "--var", "tokens=2"]) == 0
    assert f"device: none ({reason}); device limits and architecture not checked" in capsys.readouterr().out
    assert cli.main(["manifest", "check", str(SEED), "--var", "tokens=2", "--no-device"]) == 0
    assert "device: none (--no-device); device limits and architecture not checked" in capsys.readouterr().out


@pytest.mark.parametrize("flag, top", [("--iters", 10**6), ("--seed", 2**63 - 1)])
def test_run_takes_iters_and_seed_up_to_their_top_and_refuses_one_past(flag, top, capsys):
    """Found by mutation testing: the upper bounds of --iters and --seed were not tried (the top value passes the
    parser and then needs a GPU here)."""
    from labkit.cuda import gpu_available

    if gpu_available():
        pytest.skip("with a GPU the top value would run")
    assert cli.main(["manifest", "run", str(SEED), flag, str(top)]) == 1
    assert "needs a CUDA GPU" in capsys.readouterr().err
    assert cli.main(["manifest", "run", str(SEED), flag, str(top + 1)]) == 2
    low = 1 if flag == "--iters" else 0
    assert capsys.readouterr().err.endswith(f"{flag} {top + 1}: expected {low}..{top}\n")


def test_pack_of_a_program_of_two_calls_writes_one_block_per_call(tmp_path, capsys):
    """Found by mutation testing: only programs of one call had been packed (a second call's block could be lost)."""
    from labkit.cuda import gpu_available

    if gpu_available():
        pytest.skip("with a GPU, pack encodes real maps and pointers (tests/gpu)")
    doc = json.loads(SEED.read_text())
    calls = doc["programs"]["decode"]["calls"]
    calls.append(dict(calls[0], label="again"))
    two = tmp_path / "two.json"
    two.write_text(json.dumps(doc))
    assert cli.main(["manifest", "pack", str(two), "--var", "tokens=2", "--out", str(tmp_path / "blob.bin")]) == 0
    out = capsys.readouterr().out
    for i, label in enumerate(("attention", "again")):
        assert (tmp_path / f"blob.{i}.bin").read_bytes() == _golden_non_tensormap_bytes(2, 2)
        assert f"blob.{i}.bin: 1280 B for call {label!r}" in out
    assert not (tmp_path / "blob.bin").exists()


def test_a_bare_manifest_command_and_pack_without_out_are_one_line(capsys):
    """Found by mutation testing: `labkit manifest` alone and `pack` without --out were not tried."""
    assert cli.main(["manifest"]) == 2
    assert capsys.readouterr().err == ("labkit: error: labkit manifest: expected a command: check, pack, run "
                                       "(labkit manifest -h says what each does)\n")
    assert cli.main(["manifest", "pack", str(SEED)]) == 2
    err = capsys.readouterr().err
    assert err == "labkit: error: labkit manifest pack: the following arguments are required: --out\n"


def test_dtype_sizes_and_the_driver_enum_each_manifest_value_maps_to():
    """Found by mutation testing: the dtype, swizzle and L2-promotion tables were read only when encoding tensor maps (a
    GPU) and spot-checked; every entry is pinned here against its size and the CUDA driver's own enum."""
    cu = pytest.importorskip("cuda.bindings.driver")
    from labkit.manifest.model import DTYPES, L2_PROMOTION_BYTES, SWIZZLE_BYTES

    want = {"u8": (1, "UINT8"), "i8": (1, "UINT8"), "e4m3": (1, "UINT8"), "u16": (2, "UINT16"), "i16": (2, "UINT16"),
            "u32": (4, "UINT32"), "i32": (4, "INT32"), "u64": (8, "UINT64"), "i64": (8, "INT64"), "f16": (2, "FLOAT16"),
            "f32": (4, "FLOAT32"), "f64": (8, "FLOAT64"), "bf16": (2, "BFLOAT16")}  # 8/16-bit integers: raw words
    assert {d: (b, cu.CUtensorMapDataType(e).name.removeprefix("CU_TENSOR_MAP_DATA_TYPE_"))
            for d, (b, e) in DTYPES.items()} == want
    assert {k: cu.CUtensorMapSwizzle(v).name for k, v in SWIZZLE_BYTES.items()} == {
        0: "CU_TENSOR_MAP_SWIZZLE_NONE", 32: "CU_TENSOR_MAP_SWIZZLE_32B", 64: "CU_TENSOR_MAP_SWIZZLE_64B",
        128: "CU_TENSOR_MAP_SWIZZLE_128B"}
    assert {k: cu.CUtensorMapL2promotion(v).name for k, v in L2_PROMOTION_BYTES.items()} == {
        0: "CU_TENSOR_MAP_L2_PROMOTION_NONE", 64: "CU_TENSOR_MAP_L2_PROMOTION_L2_64B",
        128: "CU_TENSOR_MAP_L2_PROMOTION_L2_128B", 256: "CU_TENSOR_MAP_L2_PROMOTION_L2_256B"}


def test_a_loaded_manifest_is_frozen():
    """Found by mutation testing: the model's documented immutability (check and the Runner share one Manifest) was
    not checked."""
    import dataclasses

    m = load(SEED)
    op = m.ops["decode"]
    launch = op.launches[0]
    call = m.programs["decode"].calls[0]
    for obj in (m, *m.vars.values(), *m.buffers.values(), *m.modules.values(), op, *op.params, launch,
                *launch.args[0].fields, call, *call.args):
        with pytest.raises(dataclasses.FrozenInstanceError):
            obj.name = "x"


def test_a_cubin_is_built_once_and_again_when_its_source_options_target_or_headers_change(tmp_path, monkeypatch):
    """Found by mutation testing: nothing checked that a second build of the same kernel comes from the cache, nor that
    any change to its source, options, target or a header beside it misses the cache (else a stale kernel is timed);
    nor that a LABKIT_CACHE whose parents do not exist yet is made."""
    cache = tmp_path / "not" / "yet" / "made"
    monkeypatch.setenv("LABKIT_CACHE", str(cache))
    src = tmp_path / "k" / "probe.cu"
    src.parent.mkdir()
    first = compile_cubin(src, arch="sm_90", code=KERNEL)
    assert first.log != "(cached)" and [p.parent for p in cache.glob("kernels/probe-sm_90-*.cubin")] == [
        cache / "kernels"]
    again = compile_cubin(src, arch="sm_90", code=KERNEL)
    assert again.log == "(cached)" and again.image == first.image and again.options == first.options
    assert compile_cubin(src, arch="sm_90", code=KERNEL + "// edited\n").log != "(cached)"
    assert compile_cubin(src, arch="sm_90", code=KERNEL, options=("-DUNUSED=1",)).log != "(cached)"
    assert compile_cubin(src, arch="sm_89", code=KERNEL).log != "(cached)"
    (src.parent / "extra.cuh").write_text("#define UNUSED 1\n")
    assert compile_cubin(src, arch="sm_90", code=KERNEL).log != "(cached)"
    # found by a review: a .h beside it, and NVRTC itself (a CuPy upgrade), had left the cached cubin in place
    (src.parent / "extra.h").write_text("#define UNUSED 2\n")
    assert compile_cubin(src, arch="sm_90", code=KERNEL).log != "(cached)"
    assert compile_cubin(src, arch="sm_90", code=KERNEL).log == "(cached)"
    from labkit.cuda import cupy

    nvrtc = cupy().cuda.nvrtc
    major, minor = nvrtc.getVersion()
    monkeypatch.setattr(nvrtc, "getVersion", lambda: (major, minor + 1))
    assert compile_cubin(src, arch="sm_90", code=KERNEL).log != "(cached)"
    assert not list(cache.glob("kernels/.*.tmp"))  # no temporary file left beside the entries


def test_a_loadable_cubin_cut_short_is_written_again_and_writers_never_share_a_temporary_file(tmp_path, monkeypatch):
    """Found by a review: the file CuPy loads was written in place and only when missing, so one cut short (a kill,
    a full disk) was loaded as it was from then on; and two writers of one pid shared a temporary name."""
    from labkit import _write, kernels

    monkeypatch.setenv("LABKIT_CACHE", str(tmp_path / "cache"))
    cubin = compile_cubin(tmp_path / "probe.cu", arch="sm_90", code=KERNEL)
    path = kernels.module_file(tmp_path / "probe.cu", cubin)
    assert path.read_bytes() == cubin.image
    path.write_bytes(cubin.image[:100])
    assert kernels.module_file(tmp_path / "probe.cu", cubin).read_bytes() == cubin.image
    seen = []
    real = _write.tempfile.mkstemp
    monkeypatch.setattr(_write.tempfile, "mkstemp", lambda **kw: seen.append(real(**kw)) or seen[-1])
    _write.write_whole(tmp_path / "a.bin", b"1")
    _write.write_whole(tmp_path / "a.bin", b"2")
    assert seen[0][1] != seen[1][1] and (tmp_path / "a.bin").read_bytes() == b"2"


def test_a_kernel_nvrtc_rejects_is_a_compile_error_with_its_log_and_nothing_cached(tmp_path, monkeypatch):
    """Found by mutation testing: NVRTC's failure was not checked to come back as a CompileError naming the file, the
    target and NVRTC's own log (the line at fault), with no cubin left in the cache."""
    from labkit.errors import CompileError

    monkeypatch.setenv("LABKIT_CACHE", str(tmp_path / "cache"))
    with pytest.raises(CompileError) as exc:
        compile_cubin(tmp_path / "bad.cu", arch="sm_90", code='extern "C" __global__ void k() { no_such_call(); }\n')
    head, log = str(exc.value).split("\n", 1)
    assert head.startswith("NVRTC failed on bad.cu for sm_90 (") and f"{tmp_path / 'bad.cu'}(1)" in log
    assert "no_such_call" in log and not list((tmp_path / "cache").glob("kernels/*.cubin"))


def test_a_default_kernel_cache_that_cannot_be_made_says_which_and_names_the_knob(tmp_path, monkeypatch):
    """Found by mutation testing: with LABKIT_CACHE unset the refusal names the default cache under ~/.cache (not
    'LABKIT_CACHE None') and the knob that moves it."""
    from labkit.errors import LabkitError

    home = tmp_path / "home.bin"
    home.write_bytes(b"x")
    monkeypatch.delenv("LABKIT_CACHE", raising=False)
    monkeypatch.setenv("HOME", str(home))
    with pytest.raises(LabkitError) as exc:
        compile_cubin(tmp_path / "probe.cu", arch="sm_90", code=KERNEL)
    assert str(exc.value) == (f"the kernel cache {home}/.cache/labkit: cannot make {home}/.cache/labkit/kernels in it "
                              "(Not a directory); point LABKIT_CACHE at a writable directory")


def test_every_build_carries_line_info_naming_the_kernels_absolute_path(tmp_path, monkeypatch):
    """Nsight Compute shows a kernel's source only when the cubin has line info (``-lineinfo``) naming a file it can
    open: the ``#line`` directive's absolute path, not NVRTC's program name. Neither was checked (mutation audit)."""
    monkeypatch.setenv("LABKIT_CACHE", str(tmp_path / "cache"))
    src = tmp_path / "k" / "probe.cu"
    cubin = compile_cubin(src, arch="sm_90", code=KERNEL, options=("-DUNUSED=1",))
    assert cubin.options[:2] == ("-lineinfo", "--std=c++17") and cubin.options[-1] == "-DUNUSED=1"
    # the line table keeps the directory and the file name apart (DWARF); NVRTC's own name would be a bare probe.cu
    assert b".debug_line" in cubin.image and b"probe.cu" in cubin.image
    assert str(src.parent.resolve()).encode() in cubin.image


def test_the_parameter_block_table_names_each_field_as_the_check_s_messages_do():
    """Found by a notebook review: notebook 01's check said "pack.fields[21]: mNumHiddenEltsO is an int64 written as
    i32", but its table numbered rows by offset order (row 21 sat at 1180) and had no member names, so fields[21]
    could not be found. Each row now carries its manifest index and, where the family knows it, the member's name, in
    the notebook's table and in ``manifest check``'s text alike."""
    import re

    from labkit.manifest.families import K
    from labkit.manifest.report import render_check
    from labkit.manifest.session import field_frame

    res = check(load(SEED), vars={"tokens": 2})
    manifest_fields = _fields0(json.loads(SEED.read_text()))
    note = next(str(i) for i in res.issues if "mNumHiddenEltsO is an int64" in str(i))
    named = int(re.search(r"pack\.fields\[(\d+)\]", note).group(1))
    frame = field_frame(res)
    assert list(frame.loc[f"fields[{named}]", ["at", "member"]]) == [manifest_fields[named]["at"], "mNumHiddenEltsO"]
    assert all(frame.loc[f"fields[{i}]", "at"] == f["at"] for i, f in enumerate(manifest_fields))
    assert frame.loc[f"fields[{named}]", "at"] == K["mNumHiddenEltsO"]
    text = render_check(res, None, "no GPU").splitlines()
    header = next(line.split() for line in text if line.split()[:2] == ["field", "at"])
    assert header == [frame.index.name, *frame.columns]  # the same columns in the text and the table
    line = next(line.split() for line in text if line.split()[:1] == [f"fields[{named}]"])
    assert line[:5] == [f"fields[{named}]", str(K["mNumHiddenEltsO"]), "4", "i32", "mNumHiddenEltsO"]


def test_the_trtllm_gen_rules_hold_the_maps_to_the_kernels_boxes_and_k_and_v_to_one_layout(tmp_path):
    """Rules 12-14 of the brief (found by a review: none was enforced): Q's box is the rows the kernel's barrier counts
    (an 8-row box overshoots it), its strides [D, G D, Hq D] x 2 B; K and V: box [64, 64, 1, 1], 128B swizzle, bf16,
    one layout but the base."""
    def issues(change):
        res = check(load(_seed_changed(tmp_path, change)), vars={"tokens": 2})
        return [str(i) for i in res.issues if "tensormap." in i.path and "derived from kv" not in i.message]

    def tm(field, **change):
        return lambda d: _fields0(d)[field]["tensormap"].update(change)
    p = "ops.decode.impl.launches[0].args[0].pack.fields"
    assert issues(lambda d: None) == []
    assert issues(tm(0, box=[64, 8, 1, 1])) == [
        f"error: {p}[0].tensormap.box: [64, 8, 1, 1]: expected [64, G=6, 1, mNumTokensPerCtaQ=1], the rows the "
        "kernel's barrier counts per load"]
    assert issues(tm(0, strides=[512, 3072, 6144])) == [
        f"warning: {p}[0].tensormap.strides: [512, 3072, 6144]: Q as [tokens, Hq, 256] bf16 has [512, 3072, 12288]"]
    assert issues(tm(2, box=[64, 32, 1, 1])) == [
        f"error: {p}[2].tensormap.box: [64, 32, 1, 1]: expected [64, 64, 1, 1], the page slice the kernel's barrier "
        "counts",
        f"warning: {p}[2].tensormap.box: V's map differs from K's in box: the kernel reads both pages one way (only "
        "the base differs)"]
    assert issues(tm(1, swizzle=64, box=[32, 64, 1, 1])) == [
        f"error: {p}[1].tensormap.box: [32, 64, 1, 1]: expected [64, 64, 1, 1], the page slice the kernel's barrier "
        "counts", f"warning: {p}[1].tensormap.swizzle: 64: the kernel reads its K tiles 128B-swizzled",
        f"warning: {p}[2].tensormap.box: V's map differs from K's in box, swizzle: the kernel reads both pages one "
        "way (only the base differs)"]


def test_a_required_trtllm_gen_field_left_out_or_zero_is_an_error_as_the_kernel_reads_0(tmp_path):
    """Found by a review: a field left out was read as 'unknown' and its rules skipped, though the zero-filled block
    gives the kernel 0 there (a null ptrO, mMaxNumCtasKv 0 for its blockIdx.x % mMaxNumCtasKv): check and pack
    passed; an explicit 0, the same bytes, was refused."""
    def errors(change):
        return [str(e) for e in check(load(_seed_changed(tmp_path, change)), vars={"tokens": 2}).errors]

    def drop(at):
        return lambda d: d["ops"]["decode"]["impl"]["launches"][0]["args"][0]["pack"].update(
            fields=[f for f in _fields0(d) if f["at"] != at])

    def i32(at, value):
        return lambda d: next(f for f in _fields0(d) if f["at"] == at).update(i32=value)
    block = "error: ops.decode.impl.launches[0].args[0].pack"
    assert errors(drop(912)) == [f"{block}: ptrO (byte 912) is not packed: the kernel reads 0 there"]
    assert errors(drop(1220)) == [f"{block}: mScaleSoftmaxLog2 (byte 1220) is not packed: the kernel reads 0 there"]
    assert errors(drop(0)) == [f"{block}: tmaQ (byte 0) is not packed: the kernel reads 0 there"]
    assert errors(i32(1156, 0)) == [f"{block}.fields[13]: mMaxNumCtasKv = 0: expected >= 1 (the kernel counts, "
                                    "indexes or divides by it)"]

    def i32_for_pointer(d):  # a constant where the kernel reads ptrPageIdxKv
        drop(1000)(d)
        _fields0(d).append({"at": 1000, "i32": 0})
    assert errors(i32_for_pointer) == [f"{block}.fields[33]: ptrPageIdxKv: an i32 field where the kernel reads a "
                                       "pointer: expected a buffer param or a scratch buffer"]


def test_a_trtllm_gen_pointer_bound_to_a_buffer_of_another_dtype_is_an_error(tmp_path):
    """Found by a mutation review: the page-id pointer bound to out (bf16) was only the warning that the page
    table's param is never packed, though the kernel would read out's bf16 bits as page ids."""
    def rebind(at, param):
        return lambda d: next(f for f in _fields0(d) if f["at"] == at).update(param=param)
    block = "error: ops.decode.impl.launches[0].args[0].pack"
    res = check(load(_seed_changed(tmp_path, rebind(1000, 0))), vars={"tokens": 2})
    assert [str(e) for e in res.errors] == [f"{block}.fields[5]: ptrPageIdxKv is bound to out, a bf16 buffer: the "
                                            "kernel reads page ids there (i32)",
                                            f"{block}.fields[5]: ptrPageIdxKv and ptrO are both bound to out at byte "
                                            "0: the kernel takes them as different tensors"]
    res = check(load(_seed_changed(tmp_path, rebind(912, 4))), vars={"tokens": 2})
    assert f"{block}.fields[4]: ptrO is bound to table, an i32 buffer: the kernel reads O there (bf16)" in [
        str(e) for e in res.errors]
    assert check(load(SEED), vars={"tokens": 2}).ok  # the seed's own bindings pass

    def on_scratch(d):  # a review: a scratch binding had passed whatever its dtype
        f = next(f for f in _fields0(d) if f["at"] == 1000)
        f.pop("param")
        f["scratch"] = "stats"
    res = check(load(_seed_changed(tmp_path, on_scratch)), vars={"tokens": 2})
    assert [str(e) for e in res.errors] == [f"{block}.fields[5]: ptrPageIdxKv is bound to scratch stats, an f32 "
                                            "buffer: the kernel reads page ids there (i32)"]
    # a review: O's pointer on q (bf16 too) had passed with no word, though tmaO writes out
    res = check(load(_seed_changed(tmp_path, rebind(912, 1))), vars={"tokens": 2})
    assert [str(e) for e in res.errors] == [f"{block}.fields[4]: ptrO is bound to q, tmaO to out: the kernel writes O "
                                            "through both"]

    def o_twice(d):  # ptrO through a second param of the op, bound to the same out: one address, so it passes
        d["ops"]["decode"]["params"].append("out buffer<bf16>")
        d["programs"]["decode"]["calls"][0]["args"].append({"buf": "out"})
        rebind(912, 9)(d)
    res = check(load(_seed_changed(tmp_path, o_twice)), vars={"tokens": 2})
    assert res.ok, [str(e) for e in res.errors]


def test_a_64_bit_scalar_is_8_byte_aligned_and_every_field_inside_another_is_named(tmp_path):
    """Found by a review: an i64 param packed at 4 mod 8 was accepted (no by-value struct puts one there), and of two
    fields inside the 128-byte Q map only the first was named."""
    def tokens_i64(d):  # param 8 (tokens) is packed at 1244, 4 mod 8
        d["ops"]["decode"]["params"][8] = "i64"
    errors = [str(e) for e in check(load(_seed_changed(tmp_path, tokens_i64)), vars={"tokens": 2}).errors]
    assert "error: ops.decode.impl.launches[0].args[0].pack.fields[8].at: 1244: param fields must be 8-byte " \
           "aligned" in errors
    inside = [str(e) for e in check(load(_seed_changed(tmp_path, lambda d: _fields0(d).extend(
        [{"at": 8, "i32": 1}, {"at": 16, "i32": 2}]))), vars={"tokens": 2}).errors]
    assert inside == [f"error: ops.decode.impl.launches[0].args[0].pack.fields[{j}].at: bytes {a}..{a + 3} overlap "
                      "fields[0] (bytes 0..127)" for j, a in ((34, 8), (35, 16))]


def test_only_a_multi_cta_kv_build_must_pack_the_splits_counter_and_partials(tmp_path):
    """Found by reviewing the required-field rule: a single-CTA trtllm-gen build reads no split scratch, so leaving
    its pointers out is no error; the seed's MultiCtasKv build must pack them."""
    def drop_scratch(d):
        _launch0(d)["args"][0]["pack"]["fields"] = [f for f in _fields0(d) if f["at"] not in (984, 1008, 1016)]

    def single(d):
        drop_scratch(d)
        _launch0(d)["entry"] = _launch0(d)["entry"].replace("MultiCtasKv", "")
    block = "error: ops.decode.impl.launches[0].args[0].pack: "
    errors = [str(e) for e in check(load(_seed_changed(tmp_path, drop_scratch)), vars={"tokens": 2},
                                    find_modules=False).errors]
    assert [e for e in errors if "is not packed" in e] == [
        f"{block}{n} (byte {at}) is not packed: the kernel reads 0 there"
        for n, at in (("ptrMultiCtasKvCounter", 984), ("ptrPartialO", 1008), ("ptrPartialStats", 1016))]
    errors = [str(e) for e in check(load(_seed_changed(tmp_path, single)), vars={"tokens": 2},
                                    find_modules=False).errors]
    assert not [e for e in errors if "is not packed" in e]


def test_the_proof_line_says_its_rate_counts_the_read_and_the_write():
    """Found by a notebook review: "p50 0.0157 ms = 2093 GB/s" did not say it counts x read and y written, as
    notebooks 00 and 03 say of their copies."""
    from labkit.manifest.session import proof_line

    line = proof_line({"device": "GPU", "rows": 4099, "cols": 1000, "elements_checked": 4099000, "max_abs_err": 0.0,
                       "nan_or_unwritten": 0, "done": 33, "ctas": 33, "p50_us": 15.7, "GBps": 2093.4})
    assert line.endswith("p50 0.0157 ms = 2093 GB/s read + write")


def test_the_trtllm_gen_rules_hold_counts_constants_and_shared_memory_to_what_the_kernel_takes(tmp_path):
    """Found by a mutation review of the seed: counts of -1 passed where 0 was refused (and made the bounds checks'
    byte counts negative); the page shift, the window, the reshape factor, the output scale and the launch's shared
    memory were never looked at; Q's swizzle went unchecked where K's and V's warned."""
    from labkit.manifest.families import K

    p = "ops.decode.impl.launches[0]"

    def seed(change):
        res = check(load(_seed_changed(tmp_path, change)), vars={"tokens": 2})
        return [str(i) for i in res.issues if i.severity != "note"]

    def i32(at, value):
        def change(d):
            next(f for f in _fields0(d) if f["at"] == at)["i32"] = value
        return change
    base = seed(lambda d: None)
    pages = f"error: {p}.args[0].pack.fields[14]: mMaxNumPagesPerSeqKv = -1: expected >= 1 (the kernel counts, indexes"
    assert any(i.startswith(pages) for i in seed(i32(K["mMaxNumPagesPerSeqKv"], -1)))
    assert set(seed(i32(K["mNumTokensPerPageLog2"], 5))) - set(base) == {
        f"error: {p}.args[0].pack.fields[24]: mNumTokensPerPageLog2 = 5: the entry's pages hold 64 tokens, log2 6 (the "
        "kernel finds a token's page by this shift)"}
    assert set(seed(i32(K["mAttentionWindowSize"], 0))) - set(base) == {
        f"warning: {p}.args[0].pack.fields[9]: mAttentionWindowSize = 0: expected 2147483647 (no sliding window); keys "
        "before a query's last window are masked"}
    assert [i for i in seed(i32(K["mOutputScale"], 0)) if i not in base][0].endswith(
        "mOutputScale = 0: expected f32 1.0 (bits 1065353216); O is multiplied by it")
    assert set(seed(lambda d: _launch0(d).update(shared_mem=65536))) - set(base) == {
        f"error: {p}.shared_mem: 65536 B: the cubin takes 144992 B of dynamic shared memory"}
    assert set(seed(lambda d: _fields0(d)[0]["tensormap"].update(swizzle=0))) - set(base) == {
        f"warning: {p}.args[0].pack.fields[0].tensormap.swizzle: 0: the kernel reads its Q tiles 128B-swizzled"}


def test_a_program_names_each_call_once_and_a_cubin_by_its_name_never_a_pattern(tmp_path):
    """Found by a mutation review: two calls of one label passed, and `manifest run` keys timings by the label (one
    call's numbers overwrote the other's); a module source of "*" was a pattern over flashinfer-cubin's folder, which
    would read and hash every cubin in it."""
    def twice(d):
        calls = next(iter(d["programs"].values()))["calls"]
        calls.append(dict(calls[0]))
    with pytest.raises(FormatError, match=r"programs\.decode\.calls\[1\]\.label = 'attention': expected a label of "
                                          r"its program's calls once \(calls\[0\] has it\)"):
        load(_seed_changed(tmp_path, twice))
    from labkit.manifest.model import Module
    from labkit.manifest.modules import ModuleError, find

    folder = tmp_path / "flashinfer_cubin" / "cubins" / "fmha"
    folder.mkdir(parents=True)
    (folder / "other.cubin").write_bytes(b"\x7fELF not this one")
    with pytest.raises(ModuleError) as e:
        find(Module("m", "*", "0" * 64), [tmp_path / "flashinfer_cubin" / "cubins"])
    # "*" names no file there: not the folder as a match ("fmha is not a regular file"), nor its cubins
    assert "no cubin with sha256" in str(e.value) and "fmha" not in str(e.value)


def test_check_without_program_checks_every_program_and_names_the_broken_one(tmp_path, capsys):
    """Found by a mutation review: only the first program was checked, so a broken second one passed."""
    import copy

    def second(d):
        d["programs"]["second"] = copy.deepcopy(d["programs"]["decode"])
        d["programs"]["second"]["calls"][0]["args"][4] = {"buf": "out"}  # bf16 where the op takes i32 page ids
    path = _seed_changed(tmp_path, second)
    assert cli.main(["manifest", "check", path, "--var", "tokens=2", "--no-device"]) == 2
    out, err = capsys.readouterr()
    assert "\n  program second: CANNOT run; 1 error(s), " in out
    # a review: the only verdict had said "can run" above the second program's errors; the last one covers the file
    assert "\nverdict, program decode: can run" in out
    assert out.endswith("\nverdict, all 2 programs: CANNOT run second\n")
    assert "    error: programs.second.calls[0].args[4].buf: out is bf16 but param 4 is in buffer<i32>\n" in out
    assert err == (f"labkit: error: labkit manifest check: 1 error(s): program second of {path} cannot run: "
                   "programs.second.calls[0].args[4].buf: out is bf16 but param 4 is in buffer<i32>\n")
    assert cli.main(["manifest", "check", path, "--var", "tokens=2", "--no-device", "--program", "decode"]) == 0
    assert "other programs" not in capsys.readouterr().out  # one program asked for: that one alone
    assert cli.main(["manifest", "check", str(SEED), "--var", "tokens=2", "--no-device"]) == 0
    assert "other programs" not in capsys.readouterr().out  # the seed has one


def test_check_takes_a_manifest_or_its_path_and_a_reader_refuses_what_is_not_a_path():
    """An API walk: check("file.json") failed with "'str' object has no attribute 'programs'", and load(42) or a parsed
    dict reached open() and its TypeError."""
    from labkit.errors import ArgumentError

    by_path, loaded = check(str(SEED), vars={"tokens": 2}), check(load(SEED), vars={"tokens": 2})
    assert by_path.ok and [str(i) for i in by_path.issues] == [str(i) for i in loaded.issues]
    for bad in (42, {"schema_version": 4}):
        with pytest.raises(ArgumentError, match=f"the manifest: expected a file's path \\(str or Path\\), got "
                                                f"{type(bad).__name__}"):
            check(bad)


def test_read_cubin_takes_a_path_as_sched_cubin_occupancy_does():
    """An API walk: a path was read as the image's bytes ("not a 64-bit little-endian ELF file")."""
    cubin = next((ROOT / "data" / "cubins").glob("*.cubin"))
    assert read_cubin(cubin) == read_cubin(str(cubin)) == read_cubin(cubin.read_bytes())
    with pytest.raises(FormatError, match="/nope.cubin: .*cannot read the cubin"):
        read_cubin("/nope.cubin")
