import json
import math
import struct

import pytest

from labkit import cli
from labkit.device import DeviceInfo
from labkit.errors import FormatError
from labkit.kernels import compile_cubin
from labkit.manifest import check, load, read_cubin
from labkit.manifest.pack import Bindings, pack_bytes

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
        assert f": {path}: " in err and text in err, err
    else:
        lines = [line.strip() for line in out.splitlines() if line.strip().startswith("error:")]
        assert any(line.startswith(f"error: {path}: ") and text in line for line in lines), "\n".join(lines)
        assert "verdict: CANNOT run" in out


def test_seed_check_finds_its_problems_and_can_run(capsys):
    assert cli.main(["manifest", "check", str(SEED), "--var", "tokens=2", "--no-device"]) == 0
    out = capsys.readouterr().out
    assert "target sm_100f" in out and "(1280 B params, 1024 B static smem)" in out
    assert "ops.decode.params[6]: cu_seqlens_q is declared but never packed" in out
    assert out.count("ops.decode.params[6]") == 1, "the family's warning replaces the generic one, not beside it"
    assert ".pack.fields[1].tensormap.dims[3]: 0 (the driver rejects 0): derived from kv's extent as 22" in out
    assert "mNumPagesInMemPool = 44, but the buffer holds only 22 page slabs" in out
    assert ("grid [38, 4, 2] (seqs=2) = 304 CTAs, block [512, 1, 1], shared memory 144992 B dynamic + 1024 B static"
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
    for argv in (["pack", str(manifest), "--out", str(manifest)], ["run", str(manifest), "--json", str(manifest)]):
        assert cli.main(["manifest", *argv]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert err == [f"labkit: error: {argv[2]} '{manifest}': is the input file '{manifest}'; writing it would "
                       "overwrite the input (give another path)"]
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
    assert e.static_smem_bytes >= 1200
    assert info.runs_on((int(arch[3]), int(arch[4]))) and not info.runs_on((10, 0))


def test_elf_of_the_seed_cubin():
    cubin = next((ROOT / "data" / "cubins").glob("fmha*.cubin"))
    info = read_cubin(cubin.read_bytes())
    assert info.target == "sm_100f" and info.runs_on((10, 0)) and info.runs_on((10, 3)) and not info.runs_on((9, 0))
    e = info.entries[cubin.stem]
    assert (e.param_bytes, e.static_smem_bytes, e.max_threads) == (1280, 1024, (512, 1, 1))


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


def test_manifest_cli_run_without_gpu_is_clean(capsys):
    from labkit.cuda import gpu_available

    if gpu_available():
        pytest.skip("has a GPU")
    assert cli.main(["manifest", "run", str(SEED)]) == 2
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
    assert ("error: ops.decode.impl.launches[0].shared_mem: 240000 + 1024 static = 241024 B exceeds the 232448 B a "
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
